/* SPDX-License-Identifier: Apache-2.0
 *
 * dp.h - state shared by the forwarding core: settings the workers read,
 * the clock they stamp MACs with, the mbuf pool and the RCU variable.
 */
#ifndef E3_DP_H
#define E3_DP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cycles.h>

#include "base/defs.h"

#define E3_BURST 32
/* Default data room of received frames' mbufs (--mbuf-data): a port's
 * largest frame is one mbuf (af_packet cannot scatter, and the stages read
 * one segment), so it bounds the MTUs. 2048 is also the size of memif's
 * buffers: a frame fills one of each, and memif's fast paths (DPDK 23.03
 * on) want the two sizes equal. */
#define E3_MBUF_DATA 2048
#define E3_MBUF_DATA_MAX 16384
#define E3_HDR_ROOM 64      /* header mbufs: room for Ethernet + tag or label + CW */

struct rte_mempool;
struct rte_rcu_qsbr;

struct e3_dp {
	/* Read by workers per burst; written by the main lcore only. Single
	 * fields are naturally atomic, and a worker seeing the old value for
	 * one more burst is fine. */
	struct e3_settings settings;
	uint32_t now_s;                 /* seconds since start (MAC ages) */
	enum e3_poll_mode poll_mode;
	uint32_t rt_sample_mask;        /* runtime profile: polls with (n & mask) == 0 are timed */
	uint16_t n_workers;             /* worker contexts, >= 1 */
	uint32_t mac_table_size;
	struct rte_mempool *pool;       /* received frames */
	uint16_t mbuf_data;             /* its mbufs' data room */
	struct rte_mempool *afp_pool;   /* received frames of af_packet ports (port.c) */
	uint32_t n_mbufs;               /* mbufs in each pool */
	/* Replication (ipv4_multicast style): a copy is an indirect clone of
	 * the frame (clone_pool, no data room) behind a small private header
	 * (hdr_pool) carrying that copy's outer headers. */
	struct rte_mempool *hdr_pool;
	struct rte_mempool *clone_pool;
	struct rte_rcu_qsbr *qsbr;      /* one QS variable, thread id = worker index */
	uint64_t start_tsc;
	uint64_t tsc_per_us;
	volatile bool running;          /* workers loop while true */
};
extern struct e3_dp e3;

static inline uint32_t e3_now(void)
{
	return __atomic_load_n(&e3.now_s, __ATOMIC_RELAXED);
}

/* Microseconds since start (OAM timers). */
static inline uint64_t e3_now_us(void)
{
	return (rte_get_tsc_cycles() - e3.start_tsc) / e3.tsc_per_us;
}

/* Write a one-line error message into err (may be NULL); returns -code. */
static inline __attribute__((format(printf, 3, 4)))
int e3_err(char *err, enum e3_err code, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL) {
		va_start(ap, fmt);
		vsnprintf(err, E3_ERRLEN, fmt, ap);
		va_end(ap);
	}
	return -(int)code;
}
#define E3_ERR(err, code, ...) e3_err((err), (code), __VA_ARGS__)

#endif
