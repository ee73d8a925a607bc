/* SPDX-License-Identifier: Apache-2.0
 *
 * trace.h - packet trace: the path of the next N matching frames through
 * the stages. Off, it costs one predictable branch per burst; on, frames
 * that match claim a record in their worker's ring and the stages append
 * one line each, then a verdict.
 */
#ifndef E3_TRACE_H
#define E3_TRACE_H

#include <stdarg.h>
#include <stdint.h>

#include "ctl.h"
#include "stages.h"

#define E3_TRACE_MAX 1024

struct e3_trace_slot {
	struct e3_trace_record r;
	uint16_t path_len;
	uint16_t n_out;
	uint32_t done;                 /* set (release) when the verdict is in */
	char last_out[64];
};

struct e3_trace_ring {
	uint32_t n;                    /* slots used */
	struct e3_trace_slot slot[E3_TRACE_MAX];
};

extern uint32_t e3_trace_remaining;

int e3_trace_ring_init(struct e3_worker *w);

static inline bool e3_trace_on(void)
{
	return __atomic_load_n(&e3_trace_remaining, __ATOMIC_RELAXED) != 0;
}

/* Match the burst's frames against the filter and claim records. */
void e3_trace_burst(struct e3_burst *b);
/* Append "line\n" to frame i's path. */
void e3_trace_line(struct e3_burst *b, unsigned i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* An output of frame i (a copy sent somewhere). */
void e3_trace_out(struct e3_burst *b, unsigned i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void e3_trace_verdict(struct e3_burst *b, unsigned i, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Close the records of the burst (verdict from the outputs if none yet). */
void e3_trace_finish(struct e3_burst *b);

/* Main lcore: (re)arm for n frames (port: DPDK id or -1; vlan, label: -1 = any). */
void e3_trace_arm(int32_t port, int32_t vlan, int64_t label, uint32_t n);
/* Complete records of all workers, in arrival order. */
void e3_trace_walk_records(e3_trace_walk_fn fn, void *arg);

/* The stages' hook. `tracing` is a constant of the stage body: each stage
 * is an always-inline body compiled twice, called as
 *     if (unlikely(b->trace)) body(b, true); else body(b, false);
 * so with tracing off the hooks vanish and the burst pays one branch. */
#define E3_TRACE(b, i, ...) do { \
	if (tracing && (b)->meta[i].tr != NULL) \
		e3_trace_line((b), (i), __VA_ARGS__); \
} while (0)
#define E3_TRACE_OUT(b, i, ...) do { \
	if (tracing && (b)->meta[i].tr != NULL) \
		e3_trace_out((b), (i), __VA_ARGS__); \
} while (0)

#endif
