/* SPDX-License-Identifier: Apache-2.0
 *
 * worker.h - run-to-completion forwarding lcores.
 */
#ifndef E3_WORKER_H
#define E3_WORKER_H

#include <stdint.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "dp.h"
#include "stats.h"

struct e3_qlist {
	uint16_t n;
	struct { uint16_t port, queue; } q[];
};

struct e3_txbuf {
	uint16_t n;
	struct rte_mbuf *m[E3_BURST];
};

struct e3_trace_ring;

_Static_assert(RTE_MAX_ETHPORTS <= 64, "tx_dirty is a 64-bit mask of ports");

struct e3_worker {
	/* Hot, written by the worker only. */
	uint64_t polls, busy_polls, idle_sleeps, rx_pkts, learn_drops;
	uint64_t tx_dirty;                 /* ports with frames in tx[] */
	uint16_t idx;
	unsigned lcore;
	struct e3_qlist *qlist;            /* RCU-published by the main lcore */
	struct e3_trace_ring *trace;
	struct e3_txbuf tx[RTE_MAX_ETHPORTS] __rte_cache_aligned;
	struct e3_wstats st;
} __rte_cache_aligned;

extern struct e3_worker *e3_workers[E3_MAX_WORKERS];

int e3_workers_init(unsigned n);
/* Rebuild every worker's poll list from the ports' queue assignments. */
int e3_workers_assign(void);
/* Pick a worker for each rx queue left at -1 (least loaded first). */
void e3_workers_auto(struct e3_port_conf *c);
/* lcore_function_t for rte_eal_mp_remote_launch. */
int e3_worker_main(void *arg);

/* Forward one received burst (the whole pipeline, then TX flush). */
void e3_process_burst(struct e3_worker *w, uint16_t rx_port, struct rte_mbuf **pkts, uint16_t n);

#endif
