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
 * caller holds no lock; handlers take e3_node_lock() themselves. */
void e3_rpc_poll(int timeout_ms);
/* Close connections that neither send nor receive for seconds (0: never). */
void e3_rpc_set_idle_timeout(unsigned seconds);

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

/* A handover (handover.c, docs/ha.md): the node passed to a new process
 * of the binary on disk, started beside this one.
 * The old process: save_affinity before EAL pins the main thread. start
 * forks and execs argv (as given to main) with --takeover-fd; poll, from
 * the main loop, answers the new process and returns 1 once its ports are
 * open (0: not yet, -1: it failed: abort). Then stopped, the moment the
 * workers have stopped; and switch, with the RPC socket closed, sends the
 * live state and returns 0 once the new process forwards, and this one
 * exits; -1: abort and go on.
 * The new process: join (after e3_dp_init) loads the node and returns when
 * it may start its workers; done once they run. */
struct e3_handover;
struct e3_handover_stats {
	unsigned sessions, macs;
	unsigned discarded;        /* frames on the rings the old process forwarded */
};
void e3_handover_save_affinity(void);
int e3_handover_start(int argc, char **argv, bool no_huge, struct e3_handover **h, char *err);
pid_t e3_handover_pid(const struct e3_handover *h);
int e3_handover_poll(struct e3_handover *h, char *err);
void e3_handover_stopped(struct e3_handover *h);
int e3_handover_switch(struct e3_handover *h, uint32_t hold_ms, char *err);
void e3_handover_abort(struct e3_handover *h);
int e3_handover_join(int fd, struct e3_handover_stats *st, char *err);
void e3_handover_done(int fd);

#endif
