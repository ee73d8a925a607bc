/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "port/port.h"
#include "worker/stats.h"
#include "worker/worker.h"

/* Frames the kernel dropped before a worker saw them, read from the port
 * (docs/datapath.md). */
E3_DROP_REASON(RX_RING_FULL, "rx_ring_full",
	"dropped by the kernel before the switch saw it: an af_packet port's "
	"receive ring was full (the sockets' `PACKET_STATISTICS`, read by the "
	"main lcore once a second)");

/* What the counters were when last cleared: reads subtract it. */
static struct e3_wstats base;
static bool base_ready;

int e3_wstats_init(struct e3_wstats *s)
{
	s->svc = calloc(E3_MAX_SERVICES, sizeof(*s->svc));
	s->circ = calloc(E3_MAX_CIRCUITS, sizeof(*s->circ));
	s->label = e3_table_alloc(E3_LABEL_SPACE * sizeof(*s->label));
	if (!s->svc || !s->circ || !s->label)
		return -1;
	if (!base_ready && s != &base) {
		if (e3_wstats_init(&base) != 0)
			return -1;
		base_ready = true;
	}
	return 0;
}

#define SUM(expr_of_st) ({ \
	uint64_t _s = 0; \
	for (unsigned _w = 0; _w < e3.n_workers; _w++) { \
		const struct e3_wstats *st = &e3_workers[_w]->st; \
		_s += __atomic_load_n(&(expr_of_st), __ATOMIC_RELAXED); \
	} \
	_s; })


static void port_sum(uint16_t p, struct e3_port_ctr *o)
{
	memset(o, 0, sizeof(*o));
	o->rx_pkts = SUM(st->port[p].rx_pkts);
	o->rx_bytes = SUM(st->port[p].rx_bytes);
	o->tx_pkts = SUM(st->port[p].tx_pkts);
	o->tx_bytes = SUM(st->port[p].tx_bytes);
	o->tx_retries = SUM(st->port[p].tx_retries);
	for (int d = 0; d < E3_DROP_MAX; d++)
		o->drops[d] = SUM(st->port[p].drops[d]);
	o->drops[E3_DROP_RX_RING_FULL] += e3_port_ring_drops(p);
}

void e3_stats_port(uint16_t p, struct e3_port_ctr *o)
{
	port_sum(p, o);
	o->rx_pkts -= base.port[p].rx_pkts;
	o->rx_bytes -= base.port[p].rx_bytes;
	o->tx_pkts -= base.port[p].tx_pkts;
	o->tx_bytes -= base.port[p].tx_bytes;
	o->tx_retries -= base.port[p].tx_retries;
	for (int d = 0; d < E3_DROP_MAX; d++)
		o->drops[d] -= base.port[p].drops[d];
}

void e3_stats_reset_port(uint16_t p)
{
	port_sum(p, &base.port[p]);
}

static void svc_sum(uint32_t id, struct e3_svc_ctr *o)
{
	o->rx_pkts = SUM(st->svc[id].rx_pkts);
	o->rx_bytes = SUM(st->svc[id].rx_bytes);
	o->tx_pkts = SUM(st->svc[id].tx_pkts);
	o->tx_bytes = SUM(st->svc[id].tx_bytes);
	o->flooded = SUM(st->svc[id].flooded);
	o->mac_refused = SUM(st->svc[id].mac_refused);
	o->learn_lost = SUM(st->svc[id].learn_lost);
	o->bum_filtered = SUM(st->svc[id].bum_filtered);
	o->redirected = SUM(st->svc[id].redirected);
}

void e3_stats_svc(uint32_t id, struct e3_svc_ctr *o)
{
	const struct e3_svc_ctr *b = &base.svc[id];

	svc_sum(id, o);
	o->rx_pkts -= b->rx_pkts;
	o->rx_bytes -= b->rx_bytes;
	o->tx_pkts -= b->tx_pkts;
	o->tx_bytes -= b->tx_bytes;
	o->flooded -= b->flooded;
	o->mac_refused -= b->mac_refused;
	o->learn_lost -= b->learn_lost;
	o->bum_filtered -= b->bum_filtered;
	o->redirected -= b->redirected;
}

void e3_stats_reset_svc(uint32_t id)
{
	svc_sum(id, &base.svc[id]);
}

static void circ_sum(uint32_t id, struct e3_circ_ctr *o)
{
	o->rx_pkts = SUM(st->circ[id].rx_pkts);
	o->rx_bytes = SUM(st->circ[id].rx_bytes);
	o->tx_pkts = SUM(st->circ[id].tx_pkts);
	o->tx_bytes = SUM(st->circ[id].tx_bytes);
}

void e3_stats_circ(uint32_t id, struct e3_circ_ctr *o)
{
	const struct e3_circ_ctr *b = &base.circ[id];

	circ_sum(id, o);
	o->rx_pkts -= b->rx_pkts;
	o->rx_bytes -= b->rx_bytes;
	o->tx_pkts -= b->tx_pkts;
	o->tx_bytes -= b->tx_bytes;
}

void e3_stats_reset_circ(uint32_t id)
{
	circ_sum(id, &base.circ[id]);
}

uint64_t e3_stats_label(uint32_t label)
{
	return SUM(st->label[label]) - base.label[label];
}

void e3_stats_reset_label(uint32_t label)
{
	base.label[label] = SUM(st->label[label]);
}

void e3_stats_clear_all(void)
{
	for (uint16_t p = 0; p < RTE_MAX_ETHPORTS; p++)
		e3_stats_reset_port(p);
	for (uint32_t i = 0; i < E3_MAX_SERVICES; i++)
		e3_stats_reset_svc(i);
	for (uint32_t i = 0; i < E3_MAX_CIRCUITS; i++)
		e3_stats_reset_circ(i);
	for (uint32_t i = 0; i < E3_LABEL_SPACE; i++)
		if (base.label[i] || e3_stats_label(i))
			e3_stats_reset_label(i);
}

/* The runtime profile is all 64-bit counters, so it is read and based as
 * an array of them. */
#define RT_WORDS (sizeof(struct e3_runtime) / sizeof(uint64_t))
_Static_assert(sizeof(struct e3_runtime) % sizeof(uint64_t) == 0, "e3_runtime is all uint64_t");

static struct e3_runtime rt_base[E3_MAX_WORKERS];

static void rt_read(unsigned w, struct e3_runtime *o)
{
	const uint64_t *src = (const uint64_t *)&e3_workers[w]->rt;
	uint64_t *dst = (uint64_t *)o;

	for (size_t k = 0; k < RT_WORDS; k++)
		dst[k] = __atomic_load_n(&src[k], __ATOMIC_RELAXED);
}

void e3_runtime_get(unsigned w, struct e3_runtime *o)
{
	const uint64_t *b = (const uint64_t *)&rt_base[w];
	uint64_t *dst = (uint64_t *)o;

	rt_read(w, o);
	for (size_t k = 0; k < RT_WORDS; k++)
		dst[k] -= b[k];
}

void e3_runtime_clear(unsigned sample)
{
	__atomic_store_n(&e3.rt_sample_mask, sample - 1, __ATOMIC_RELAXED);
	for (unsigned w = 0; w < e3.n_workers; w++)
		rt_read(w, &rt_base[w]);
}
