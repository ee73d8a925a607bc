/* SPDX-License-Identifier: Apache-2.0
 * rpc.h - JSON-RPC 2.0 control server and DPDK telemetry of e3-vswitchd.
 * Called only from the main lcore's loop (datapath/src/main.c).
 */
#ifndef E3_RPC_H
#define E3_RPC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Listen on a Unix socket at path (replacing a stale one) with the mode given. */
int e3_rpc_init(const char *path, mode_t mode);
/* Wait up to timeout_ms for socket activity and serve what arrived. The
 * caller holds no lock; handlers take e3_ctl_lock() themselves. */
void e3_rpc_poll(int timeout_ms);
/* Close connections that neither send nor receive for seconds (0: never). */
void e3_rpc_set_idle_timeout(unsigned seconds);

struct e3_rpc_counters {
	uint64_t connections;       /* open now */
	uint64_t refused_full;      /* every slot (or every slot not kept for root) taken */
	uint64_t refused_per_user;  /* the user's own limit */
	uint64_t idle_closed;
};
const struct e3_rpc_counters *e3_rpc_counters(void);
void e3_rpc_fini(void);

/* Register the /e3/... commands with DPDK telemetry (after rte_eal_init). */
int e3_telemetry_init(void);

/* Load a config_dump document from a file at start-up (--config FILE). */
int e3_rpc_load_file(const char *path, char *err);

/* A warm restart's state (checkpoint.c, docs/ha.md). Save: the node's
 * configuration, its Up BFD sessions and its MACs, into path (atomically),
 * hold_ms being how long the neighbours were asked to wait. Load: before
 * the workers start; the live part only if younger than its hold. */
int e3_checkpoint_save(const char *path, uint32_t hold_ms, char *err);
struct e3_checkpoint_stats {
	uint64_t age_ms;
	bool live;                 /* sessions and MACs restored too */
	unsigned sessions, macs;
};
int e3_checkpoint_load(const char *path, struct e3_checkpoint_stats *st, char *err);

#endif
