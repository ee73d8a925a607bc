/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "port.h"
#include "trace.h"

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

void e3_trace_burst(struct e3_burst *b)
{
	struct e3_trace_ring *r = b->w->trace;

	for (unsigned i = 0; i < b->n; i++) {
		struct rte_mbuf *m = b->pkts[i];

		if (m == NULL || r->n >= E3_TRACE_MAX || !match(b, m) || !claim())
			continue;
		struct e3_trace_slot *s = &r->slot[r->n++];

		memset(s, 0, offsetof(struct e3_trace_slot, r.data));
		s->r.path[0] = s->r.verdict[0] = 0;
		s->path_len = s->n_out = 0;
		s->done = 0;
		s->r.seq = __atomic_fetch_add(&trace_seq, 1, __ATOMIC_RELAXED);
		s->r.tsc_ns = (rte_rdtsc() - trace_start_tsc) * 1000000000.0 / rte_get_tsc_hz();
		snprintf(s->r.rx_port, sizeof(s->r.rx_port), "%s", b->rx->conf.name);
		s->r.len = (uint16_t)m->pkt_len;
		s->r.cap_len = (uint16_t)RTE_MIN(m->pkt_len, sizeof(s->r.data));
		const void *p = rte_pktmbuf_read(m, 0, s->r.cap_len, s->r.data);

		if (p != NULL && p != s->r.data)
			memcpy(s->r.data, p, s->r.cap_len);
		b->meta[i].tr = s;
		b->trace = true;
	}
}

static void vappend(struct e3_trace_slot *s, const char *fmt, va_list ap)
{
	size_t room = sizeof(s->r.path) - s->path_len;

	if (room <= 1)
		return;
	int n = vsnprintf(s->r.path + s->path_len, room, fmt, ap);

	if (n < 0)
		return;
	s->path_len += (size_t)n < room - 1 ? (uint16_t)n : (uint16_t)(room - 1);
	if (s->path_len < sizeof(s->r.path) - 1) {
		s->r.path[s->path_len++] = '\n';
		s->r.path[s->path_len] = 0;
	}
}

void e3_trace_line(struct e3_burst *b, unsigned i, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vappend(b->meta[i].tr, fmt, ap);
	va_end(ap);
}

void e3_trace_out(struct e3_burst *b, unsigned i, const char *fmt, ...)
{
	struct e3_trace_slot *s = b->meta[i].tr;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->last_out, sizeof(s->last_out), fmt, ap);
	va_end(ap);
	s->n_out++;
	e3_trace_line(b, i, "%s", s->last_out);
}

void e3_trace_verdict(struct e3_burst *b, unsigned i, const char *fmt, ...)
{
	struct e3_trace_slot *s = b->meta[i].tr;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->r.verdict, sizeof(s->r.verdict), fmt, ap);
	va_end(ap);
}

void e3_trace_finish(struct e3_burst *b)
{
	for (unsigned i = 0; i < b->n; i++) {
		struct e3_trace_slot *s = b->meta[i].tr;

		if (s == NULL)
			continue;
		if (s->r.verdict[0] == 0) {
			if (s->n_out == 1)
				snprintf(s->r.verdict, sizeof(s->r.verdict), "%s", s->last_out);
			else if (s->n_out > 1)
				snprintf(s->r.verdict, sizeof(s->r.verdict), "flood %u copies", s->n_out);
			else
				snprintf(s->r.verdict, sizeof(s->r.verdict), "drop (no output)");
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
	const struct e3_trace_record *x = *(const struct e3_trace_record *const *)a;
	const struct e3_trace_record *y = *(const struct e3_trace_record *const *)b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void e3_trace_walk_records(e3_trace_walk_fn fn, void *arg)
{
	const struct e3_trace_record **v = malloc(sizeof(*v) * E3_TRACE_MAX * e3.n_workers);
	unsigned n = 0;

	if (v == NULL)
		return;
	for (unsigned w = 0; w < e3.n_workers; w++) {
		struct e3_trace_ring *r = e3_workers[w]->trace;
		uint32_t used = RTE_MIN(__atomic_load_n(&r->n, __ATOMIC_ACQUIRE), (uint32_t)E3_TRACE_MAX);

		for (uint32_t k = 0; k < used; k++)
			if (__atomic_load_n(&r->slot[k].done, __ATOMIC_ACQUIRE))
				v[n++] = &r->slot[k].r;
	}
	qsort(v, n, sizeof(*v), cmp_seq);
	for (unsigned k = 0; k < n; k++)
		fn(v[k], arg);
	free(v);
}
