/* SPDX-License-Identifier: Apache-2.0
 *
 * watch.h - the protection objects: one byte per BFD session saying whether
 * the path it watches is usable. A protected nhlfe (nhlfe_table.h) names
 * the session that watches its primary and resolves through this byte, so
 * one store here moves every service behind that path to its backup at
 * once, whatever their number (prefix-independent convergence).
 *
 * Written by the worker that runs the session (down: at once; up again:
 * after the wait-to-restore time) and by the main lcore when sessions come
 * and go; read by every worker per frame of a protected nhlfe. A byte
 * without a session reads usable.
 */
#ifndef E3_WATCH_H
#define E3_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "base/defs.h"

extern uint8_t e3_watch_up[E3_MAX_SESSIONS];

static inline bool e3_watch_usable(uint32_t session)
{
	return __atomic_load_n(&e3_watch_up[session % E3_MAX_SESSIONS], __ATOMIC_RELAXED) != 0;
}

static inline void e3_watch_set(uint32_t session, bool usable)
{
	__atomic_store_n(&e3_watch_up[session % E3_MAX_SESSIONS], usable, __ATOMIC_RELEASE);
}

#endif
