/* SPDX-License-Identifier: Apache-2.0
 *
 * runtime.h - the runtime profile, as VPP's `show runtime`: per worker,
 * the calls, frames and TSC cycles of each stage and of each port's
 * receive and transmit, and the worker's busy and idle cycles.
 *
 * Calls and frames are counted for every burst. Cycles are sampled: one
 * poll in E3_RT_SAMPLE (or e3.rt_sample_mask + 1) is timed, with a TSC read between stages, and
 * `timed` counts the timed calls, so cycles * calls / timed estimates all
 * of them; the cost stays per burst, never per frame. Busy and idle
 * cycles are exact: one TSC read a poll. Ten times a second the worker
 * times a clock probe (base/clock.h), so that a cost per frame that grew
 * can be told from a core that slowed down.
 *
 * A stage's call is counted only when it took frames, so cycles/frame is
 * its own; a pass over a burst with nothing for it stays in the worker's
 * busy cycles, with the rest of the burst's overhead. Frames sent while a
 * stage runs (a full TX buffer) are that stage's cycles; the end-of-burst
 * flush is the port's tx.
 */
#ifndef E3_RUNTIME_H
#define E3_RUNTIME_H

#include <stdint.h>

#include <rte_build_config.h>
#include <rte_common.h>

/* The stages in the order a burst meets them (pipeline.c). */
#define foreach_e3_stage \
	_(CUSTOMER_IN, customer_in) \
	_(ELINE_IN, eline_in) \
	_(ELAN_IN, elan_in) \
	_(FABRIC_IN, fabric_in) \
	_(LABEL_LOOKUP, label_lookup) \
	_(SWAP, swap) \
	_(ELINE_TERM, eline_term) \
	_(REPLICATE, replicate) \
	_(ELAN_TERM, elan_term) \
	_(ELAN_FLOOD, elan_flood) \
	_(TX_PW, tx_pw) \
	_(TX_CIRCUIT, tx_circuit) \
	_(OAM, oam) \
	_(PW_OAM, pw_oam)

enum e3_stage_id {
#define _(sym, name) E3_STAGE_##sym,
	foreach_e3_stage
#undef _
	E3_STAGE_MAX
};

extern const char *const e3_stage_names[E3_STAGE_MAX];

#define E3_RT_SAMPLE 8       /* one poll in 8 is timed, unless runtime_clear says otherwise */
#define E3_RT_SAMPLE_MAX 1024

struct e3_rt_ctr {
	uint64_t calls, frames;
	uint64_t timed, cycles;   /* the timed calls, and their cycles */
};

/* A turn of a worker's poll loop longer than these (in us) is a stall: the
 * worker was away from its queues for that long (its CPU taken by the
 * kernel or the host, or held up), and a queue fed faster than its ring
 * holds for that long lost frames. */
#define E3_STALL_OVER(_) _("over_100us", 100) _("over_1ms", 1000) _("over_10ms", 10000)
#define E3_STALL_COUNT(name, us) + 1
#define E3_STALL_BUCKETS (0 E3_STALL_OVER(E3_STALL_COUNT))

/* One worker's profile, written by the worker only. */
struct e3_runtime {
	uint64_t busy_cycles;      /* polls that received something: rx, stages, tx */
	uint64_t idle_cycles;      /* polls that received nothing (sleep excluded) */
	uint64_t clock_core;        /* the clock probes' core cycles (base/clock.h), 10 a second */
	uint64_t clock_tsc;        /* and the TSC cycles they took */
	uint64_t stalls[E3_STALL_BUCKETS]; /* turns longer than each of E3_STALL_OVER */
	uint64_t stall_cycles;     /* the TSC cycles of the turns longer than the first */
	struct e3_rt_ctr timers;   /* BFD timers and the inject ring (always timed); frames = injected */
	struct e3_rt_ctr stage[E3_STAGE_MAX];
	struct e3_rt_ctr rx[RTE_MAX_ETHPORTS];
	struct e3_rt_ctr tx[RTE_MAX_ETHPORTS];
};

static inline void e3_rt_count(struct e3_rt_ctr *c, unsigned frames)
{
	c->calls++;
	c->frames += frames;
}

static inline void e3_rt_time(struct e3_rt_ctr *c, uint64_t cycles)
{
	c->timed++;
	c->cycles += cycles;
}

/* The cycles of all c's calls, estimated from the timed ones. */
static inline uint64_t e3_rt_cycles(const struct e3_rt_ctr *c)
{
	return c->timed ? (uint64_t)((unsigned __int128)c->cycles * c->calls / c->timed) : 0;
}

#endif
