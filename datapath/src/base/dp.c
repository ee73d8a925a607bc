/* SPDX-License-Identifier: Apache-2.0
 *
 * dp.c - the state every layer shares: the settings and clock (dp.h), the
 * protection bytes (watch.h) and the names of the drop reasons (defs.h).
 */
#include "base/dp.h"
#include "base/watch.h"

struct e3_dp e3 = {
	.settings = { .ttl = 64, .control_word = true, .mac_aging_s = 300, .mac_limit = 8192,
		      .mac_move_limit = 5, .mac_move_window_s = 180 },
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
