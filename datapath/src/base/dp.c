/* SPDX-License-Identifier: Apache-2.0
 *
 * dp.c - the state every layer shares: the settings and clock (dp.h), the
 * protection bytes (watch.h) and the names of the drop reasons (defs.h).
 */
#include "base/dp.h"
#include "base/watch.h"

struct e3_dp e3 = {
	.settings = {
		.ttl = E3_DEFAULT_SETTINGS_TTL,
		.control_word = E3_DEFAULT_SETTINGS_CONTROL_WORD,
		.mac_aging_s = E3_DEFAULT_SETTINGS_MAC_AGING_S,
		.mac_limit = E3_DEFAULT_SETTINGS_MAC_LIMIT,
		.mac_move_limit = E3_DEFAULT_SETTINGS_MAC_MOVE_LIMIT,
		.mac_move_window_s = E3_DEFAULT_SETTINGS_MAC_MOVE_WINDOW_S,
	},
};

uint8_t e3_watch_up[E3_MAX_SESSIONS];

static const char *const drop_names[E3_DROP_MAX] = {
#define E3_DROP_NAME(e, name, meaning) [E3_DROP_##e] = name,
	E3_DROPS(E3_DROP_NAME)
#undef E3_DROP_NAME
};

const char *e3_drop_name(enum e3_drop d)
{
	return (unsigned)d < E3_DROP_MAX ? drop_names[d] : "unknown";
}
