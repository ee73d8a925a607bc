/* SPDX-License-Identifier: Apache-2.0
 *
 * trace.h - packet trace: the path of the next N matching frames through
 * the stages. Off, it costs one predictable branch per burst; on, frames
 * that match claim a record in their worker's ring and the stages append
 * binary events to it (an id and its arguments), then a verdict. The
 * control side turns them into text when it reads them (node/trace.c).
 */
#ifndef E3_TRACE_H
#define E3_TRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/defs.h"
#include "pipeline/stages.h"
#include "pipeline/trace_events_gen.h"

#define E3_TRACE_MAX 1024         /* records per worker ring */
#define E3_TRACE_EVENTS_MAX 16    /* events per record */
#define E3_TRACE_ARGS 6

/* The events a stage records: X(NAME, format), declared by each stage
 * beside its code (E3_TRACE_EVENT) and gathered by datapath/api/gen.py into
 * E3_TRACE_EVENTS. The fast path stores only the event and its 32-bit
 * arguments; the control side formats them when it reads the records
 * (e3_trace_format). Conversions: %u, %d (signed), %p (a DPDK port id,
 * printed as the port's name), %D (a drop reason), %S (a BFD state), %o
 * (on/off). */
enum e3_trace_event_id {
#define E3_TEV_ENUM(name, fmt) E3_TEV_##name,
	E3_TRACE_EVENTS(E3_TEV_ENUM)
#undef E3_TEV_ENUM
	E3_TEV_MAX
};

extern const char *const e3_trace_formats[E3_TEV_MAX];

/* E3_TRACE_EVENT(NAME, format): a stage records this event. It compiles
 * only if E3_TRACE_EVENTS (trace_events_gen.h) has the event. */
#define E3_TRACE_EVENT(e, format) _Static_assert(E3_TEV_##e < E3_TEV_MAX, format)

struct e3_trace_event {
	uint8_t id;                    /* enum e3_trace_event_id */
	uint8_t n;                     /* arguments used */
	uint32_t a[E3_TRACE_ARGS];
};

/* One traced frame, binary, as its worker wrote it. */
struct e3_trace_slot {
	uint64_t seq;                  /* order of arrival */
	uint64_t tsc_ns;               /* time since the trace started, ns */
	uint16_t rx_port;
	uint16_t len;                  /* frame length on arrival */
	uint16_t cap_len;              /* bytes kept in data[] */
	uint8_t n_ev;                  /* events recorded in ev[] */
	uint8_t n_out;                 /* outputs among them */
	int8_t last_out;               /* index in ev[] of the last output, -1: none */
	bool has_verdict;              /* else the verdict comes from the outputs */
	uint32_t done;                 /* set (release) when the verdict is in */
	struct e3_trace_event ev[E3_TRACE_EVENTS_MAX];   /* the path */
	struct e3_trace_event verdict;
	uint8_t data[256];             /* the frame as received */
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
/* Record an event of frame i: on its path, as one of its outputs, or as
 * its verdict (which a drop or a consuming stage gives; else the verdict is
 * its output, or "flood N copies"). */
void e3_trace_rec(struct e3_burst *b, unsigned i, enum e3_trace_event_id id, const uint32_t *a, unsigned n);
void e3_trace_rec_out(struct e3_burst *b, unsigned i, enum e3_trace_event_id id, const uint32_t *a, unsigned n);
void e3_trace_rec_verdict(struct e3_burst *b, unsigned i, enum e3_trace_event_id id, const uint32_t *a, unsigned n);
/* Close the records of the burst (verdict from the outputs if none yet). */
void e3_trace_finish(struct e3_burst *b);

/* Main lcore: (re)arm for n frames (port: DPDK id or -1; vlan, label: -1 = any). */
void e3_trace_arm(int32_t port, int32_t vlan, int64_t label, uint32_t n);
/* Complete records of all workers, in arrival order. */
typedef void (*e3_trace_slot_fn)(const struct e3_trace_slot *s, void *arg);
void e3_trace_walk_slots(e3_trace_slot_fn fn, void *arg);

/* The stages' hooks: E3_TRACE(b, i, EVENT, args...) records an event with
 * its arguments (each taken as a uint32_t). `tracing` is a constant of the
 * stage body: each stage is an always-inline body compiled twice, called as
 *     if (unlikely(b->trace)) body(b, true); else body(b, false);
 * so with tracing off the hooks vanish and the burst pays one branch. */
#define E3_TRACE_ARGV(...) ((const uint32_t[]){0, __VA_ARGS__} + 1), \
	(unsigned)(sizeof((const uint32_t[]){0, __VA_ARGS__}) / sizeof(uint32_t) - 1)
#define E3_TRACE(b, i, ev, ...) do { \
	if (tracing && (b)->meta[i].tr != NULL) \
		e3_trace_rec((b), (i), E3_TEV_##ev, E3_TRACE_ARGV(__VA_ARGS__)); \
} while (0)
#define E3_TRACE_OUT(b, i, ev, ...) do { \
	if (tracing && (b)->meta[i].tr != NULL) \
		e3_trace_rec_out((b), (i), E3_TEV_##ev, E3_TRACE_ARGV(__VA_ARGS__)); \
} while (0)
#define E3_TRACE_VERDICT(b, i, ev, ...) do { \
	if (tracing && (b)->meta[i].tr != NULL) \
		e3_trace_rec_verdict((b), (i), E3_TEV_##ev, E3_TRACE_ARGV(__VA_ARGS__)); \
} while (0)

#endif
