/* SPDX-License-Identifier: Apache-2.0
 *
 * trace.c - packet trace, the workers' side: match frames, record binary
 * events; and the rings' reset and walk for the control side.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "port/port.h"
#include "pipeline/trace.h"

/* The verdicts a record ends with when no stage gave one (trace.h). */
E3_TRACE_EVENT(VERDICT_FLOOD,     "flood %u copies");
E3_TRACE_EVENT(VERDICT_NO_OUTPUT, "drop (no output)");

uint32_t e3_trace_remaining;        /* frames still to claim; 0 = off */
static uint64_t trace_seq;
static uint64_t trace_start_tsc;
static struct {
	int32_t port;                   /* DPDK port id, -1 = any */
	int32_t vlan;                   /* -1 = any, E3_VLAN_UNTAGGED = untagged */
	int64_t label;
} filter;

int e3_trace_ring_init(struct e3_worker *w)
{
	w->trace = calloc(1, sizeof(*w->trace));
	return w->trace ? 0 : -1;
}

static bool match(const struct e3_burst *b, const struct rte_mbuf *m)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint16_t len = rte_pktmbuf_data_len(m);

	if (filter.port >= 0 && filter.port != b->rx->port_id)
		return false;
	if (filter.vlan >= 0) {
		int32_t vlan = E3_VLAN_UNTAGGED;

		if (b->rx->kind != E3_PORT_CUSTOMER || len < 18)
			return false;
		if ((d[12] == 0x81 && d[13] == 0x00) || (d[12] == 0x88 && d[13] == 0xa8))
			vlan = ((d[14] << 8) | d[15]) & 0xfff;
		if (vlan != filter.vlan)
			return false;
	}
	if (filter.label >= 0) {
		if (b->rx->kind != E3_PORT_FABRIC || len < 18 || d[12] != 0x88 || d[13] != 0x47)
			return false;
		if (((uint32_t)d[14] << 12 | (uint32_t)d[15] << 4 | d[16] >> 4) != filter.label)
			return false;
	}
	return true;
}

static bool claim(void)
{
	uint32_t n = __atomic_load_n(&e3_trace_remaining, __ATOMIC_RELAXED);

	while (n > 0)
		if (__atomic_compare_exchange_n(&e3_trace_remaining, &n, n - 1, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			return true;
	return false;
}

const char *const e3_trace_formats[E3_TEV_MAX] = {
#define E3_TEV_FORMAT(name, fmt) [E3_TEV_##name] = fmt,
	E3_TRACE_EVENTS(E3_TEV_FORMAT)
#undef E3_TEV_FORMAT
};

void e3_trace_burst(struct e3_burst *b)
{
	struct e3_trace_ring *r = b->w->trace;

	for (unsigned i = 0; i < b->n; i++) {
		struct rte_mbuf *m = b->pkts[i];

		if (m == NULL || r->n >= E3_TRACE_MAX || !match(b, m) || !claim())
			continue;
		struct e3_trace_slot *s = &r->slot[r->n++];

		memset(s, 0, offsetof(struct e3_trace_slot, data));
		s->last_out = -1;
		s->seq = __atomic_fetch_add(&trace_seq, 1, __ATOMIC_RELAXED);
		s->tsc_ns = (rte_rdtsc() - trace_start_tsc) * 1000000000.0 / rte_get_tsc_hz();
		s->rx_port = b->rx->port_id;
		s->len = (uint16_t)m->pkt_len;
		s->cap_len = (uint16_t)RTE_MIN(m->pkt_len, sizeof(s->data));
		const void *p = rte_pktmbuf_read(m, 0, s->cap_len, s->data);

		if (p != NULL && p != s->data)
			memcpy(s->data, p, s->cap_len);
		b->meta[i].tr = s;
		b->trace = true;
	}
}

static void set_event(struct e3_trace_event *e, enum e3_trace_event_id id, const uint32_t *a, unsigned n)
{
	e->id = (uint8_t)id;
	e->n = (uint8_t)RTE_MIN(n, (unsigned)E3_TRACE_ARGS);
	memcpy(e->a, a, e->n * sizeof(*a));
}

void e3_trace_rec(struct e3_burst *b, unsigned i, enum e3_trace_event_id id, const uint32_t *a, unsigned n)
{
	struct e3_trace_slot *s = b->meta[i].tr;

	if (s->n_ev < E3_TRACE_EVENTS_MAX)
		set_event(&s->ev[s->n_ev++], id, a, n);
}

void e3_trace_rec_out(struct e3_burst *b, unsigned i, enum e3_trace_event_id id, const uint32_t *a, unsigned n)
{
	struct e3_trace_slot *s = b->meta[i].tr;

	if (s->n_ev < E3_TRACE_EVENTS_MAX)
		s->last_out = (int8_t)s->n_ev;
	s->n_out++;
	e3_trace_rec(b, i, id, a, n);
}

void e3_trace_rec_verdict(struct e3_burst *b, unsigned i, enum e3_trace_event_id id, const uint32_t *a, unsigned n)
{
	struct e3_trace_slot *s = b->meta[i].tr;

	set_event(&s->verdict, id, a, n);
	s->has_verdict = true;
}

void e3_trace_finish(struct e3_burst *b)
{
	for (unsigned i = 0; i < b->n; i++) {
		struct e3_trace_slot *s = b->meta[i].tr;

		if (s == NULL)
			continue;
		if (!s->has_verdict) {
			if (s->n_out == 1 && s->last_out >= 0)
				s->verdict = s->ev[s->last_out];
			else if (s->n_out > 1)
				set_event(&s->verdict, E3_TEV_VERDICT_FLOOD, (const uint32_t[]){ s->n_out }, 1);
			else
				set_event(&s->verdict, E3_TEV_VERDICT_NO_OUTPUT, NULL, 0);
			s->has_verdict = true;
		}
		__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
		b->meta[i].tr = NULL;
	}
}

/* Control side (main lcore). */

void e3_trace_arm(int32_t port, int32_t vlan, int64_t label, uint32_t n)
{
	/* Stop, let every worker finish the burst it may be tracing, then
	 * reset the rings and filter before arming again. */
	__atomic_store_n(&e3_trace_remaining, 0, __ATOMIC_RELEASE);
	e3_rcu_sync();
	for (unsigned w = 0; w < e3.n_workers; w++)
		e3_workers[w]->trace->n = 0;
	filter.port = port;
	filter.vlan = vlan;
	filter.label = label;
	trace_seq = 0;
	trace_start_tsc = rte_rdtsc();
	__atomic_store_n(&e3_trace_remaining, n, __ATOMIC_RELEASE);
}

static int cmp_seq(const void *a, const void *b)
{
	const struct e3_trace_slot *x = *(const struct e3_trace_slot *const *)a;
	const struct e3_trace_slot *y = *(const struct e3_trace_slot *const *)b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void e3_trace_walk_slots(e3_trace_slot_fn fn, void *arg)
{
	const struct e3_trace_slot **v = malloc(sizeof(*v) * E3_TRACE_MAX * e3.n_workers);
	unsigned n = 0;

	if (v == NULL)
		return;
	for (unsigned w = 0; w < e3.n_workers; w++) {
		struct e3_trace_ring *r = e3_workers[w]->trace;
		uint32_t used = RTE_MIN(__atomic_load_n(&r->n, __ATOMIC_ACQUIRE), (uint32_t)E3_TRACE_MAX);

		for (uint32_t k = 0; k < used; k++)
			if (__atomic_load_n(&r->slot[k].done, __ATOMIC_ACQUIRE))
				v[n++] = &r->slot[k];
	}
	qsort(v, n, sizeof(*v), cmp_seq);
	for (unsigned k = 0; k < n; k++)
		fn(v[k], arg);
	free(v);
}
