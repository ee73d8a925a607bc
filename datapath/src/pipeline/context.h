/* SPDX-License-Identifier: Apache-2.0
 *
 * context.h - what a burst runs in: the worker context with its TX buffers
 * and counters. The worker layer creates the contexts and runs the loop
 * around them (worker/worker.h); the pipeline only uses them.
 */
#ifndef E3_CONTEXT_H
#define E3_CONTEXT_H

#include <stdint.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "base/dp.h"
#include "base/stats.h"
#include "base/token_bucket.h"
#include "pipeline/runtime.h"
#include "pipeline/sflow.h"

/* Room for two bursts: a burst's unicast frames (at most E3_BURST) never
 * fill it, so they leave together at the end of the burst, timed as the
 * port's transmit, not as the stage that made them (runtime.h). Floods
 * may fill it sooner. */
#define E3_TXBUF (2 * E3_BURST)

struct e3_txbuf {
	uint16_t n;
	struct rte_mbuf *m[E3_TXBUF];
};

struct e3_qlist;
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
	struct e3_token_bucket *storm;     /* [E3_MAX_CIRCUITS * E3_STORM_MAX]: storm control */
	struct e3_token_bucket pwoam[RTE_MAX_ETHPORTS]; /* MPLS echo punted, by receiving port */
	struct e3_runtime rt;
	struct e3_sflow_sampler sflow[RTE_MAX_ETHPORTS]; /* by receiving port (sflow.h) */
	uint64_t rng;                      /* the samplers' random state (xorshift) */
} __rte_cache_aligned;

/* The contexts, e3.n_workers of them, created by e3_workers_init. */
extern struct e3_worker *e3_workers[E3_MAX_WORKERS];

/* Runs one received burst through the stages (pipeline.c). A timed burst
 * (runtime.h) gives tsc, the TSC when it was received, and gets the TSC
 * when it is done; an untimed one gives and gets 0. */
uint64_t e3_process_burst(struct e3_worker *w, uint16_t rx_port, struct rte_mbuf **pkts,
			  uint16_t n, uint64_t tsc);

#endif
