/* SPDX-License-Identifier: Apache-2.0
 *
 * stage_tx.c - leaving the pipeline: per-worker TX buffers (one per
 * destination port, flushed at the end of each burst), drops, copies, and
 * the slow paths of the output helpers (stage_out.h).
 */
#include <string.h>

#include <rte_ethdev.h>
#include <rte_spinlock.h>

#include "tables/circuit_table.h"
#include "tables/nhlfe_table.h"
#include "pipeline/stage_tx.h"
#include "pipeline/trace.h"

/* The reasons this stage drops frames for (docs/datapath.md). */
E3_DROP_REASON(TX_FULL, "tx_full", "TX queue full (a VM's port: still full after its retries)");
E3_DROP_REASON(NO_MBUF, "no_mbuf",
	"no mbuf for a copy (flood, REPLICATE), a copy's header mbuf, a VLAN re-"
	"insert, or a BFD packet");

/* The events this stage records in a packet trace (trace.h). */
E3_TRACE_EVENT(DROP,        "drop %D");
E3_TRACE_EVENT(DROP_EGRESS, "drop %D (egress)");
E3_TRACE_EVENT(DROP_COPY,   "drop %D (one copy)");

/* Only used for devices with fewer TX queues than workers. */
static rte_spinlock_t txlock[RTE_MAX_ETHPORTS][E3_MAX_WORKERS];

void e3_tx_flush_port(struct e3_worker *w, uint16_t port)
{
	struct e3_txbuf *t = &w->tx[port];
	const struct e3_port *p = e3_port_get(port);
	struct e3_port_ctr *c = &w->st.port[port];
	uint16_t n = t->n, sent = 0;

	t->n = 0;
	w->tx_dirty &= ~(1ull << port);
	if (likely(p != NULL)) {
		uint64_t bytes = 0;

		for (uint16_t k = 0; k < n; k++)
			bytes += t->m[k]->pkt_len;
		uint16_t q = likely(!p->tx_shared) ? w->idx : w->idx % p->n_txq;

		if (unlikely(p->tx_shared))
			rte_spinlock_lock(&txlock[port][q]);
		sent = rte_eth_tx_burst(port, q, t->m, n);
		for (unsigned r = 0; unlikely(sent < n) && r < p->tx_retries; r++) {
			uint16_t more = rte_eth_tx_burst(port, q, t->m + sent, n - sent);

			c->tx_retries++;
			if (more == 0)
				break;
			sent += more;
		}
		if (unlikely(p->tx_shared))
			rte_spinlock_unlock(&txlock[port][q]);
		for (uint16_t k = sent; k < n; k++)
			bytes -= t->m[k]->pkt_len;
		c->tx_pkts += sent;
		c->tx_bytes += bytes;
	}
	if (unlikely(sent < n)) {
		c->drops[E3_DROP_TX_FULL] += n - sent;
		rte_pktmbuf_free_bulk(&t->m[sent], n - sent);
	}
}

uint64_t e3_tx_flush(struct e3_worker *w, uint64_t tsc)
{
	while (w->tx_dirty) {
		uint16_t port = (uint16_t)__builtin_ctzll(w->tx_dirty);
		unsigned n = w->tx[port].n;

		e3_tx_flush_port(w, port);
		e3_rt_count(&w->rt.tx[port], n);
		if (tsc != 0) {
			uint64_t now = rte_rdtsc();

			e3_rt_time(&w->rt.tx[port], now - tsc);
			tsc = now;
		}
	}
	return tsc;
}

void e3_drop(struct e3_burst *b, unsigned i, enum e3_drop why)
{
	b->w->st.port[b->rx->port_id].drops[why]++;
	if (unlikely(b->trace) && b->meta[i].tr != NULL) {
		e3_trace_rec(b, i, E3_TEV_DROP, E3_TRACE_ARGV(why));
		if (b->meta[i].tr->n_out == 0)
			e3_trace_rec_verdict(b, i, E3_TEV_DROP, E3_TRACE_ARGV(why));
	}
	rte_pktmbuf_free(b->pkts[i]);
	e3_done(b, i);
}

/* Drop m (frame i itself, or one of its copies), counted on port. */
void e3_drop_on(struct e3_burst *b, unsigned i, struct rte_mbuf *m, uint16_t port, enum e3_drop why)
{
	const bool tracing = b->trace;

	if (m == b->pkts[i] && port == b->rx->port_id) {
		e3_drop(b, i, why);
		return;
	}
	b->w->st.port[port].drops[why]++;
	if (m == b->pkts[i])
		E3_TRACE(b, i, DROP_EGRESS, why);
	else
		E3_TRACE(b, i, DROP_COPY, why);
	if (m == b->pkts[i]) {
		if (tracing && b->meta[i].tr != NULL && b->meta[i].tr->n_out == 0)
			E3_TRACE_VERDICT(b, i, DROP, why);
		e3_done(b, i);
	}
	rte_pktmbuf_free(m);
}

void e3_drop_copy(struct e3_burst *b, unsigned i, struct rte_mbuf *m, enum e3_drop why)
{
	e3_drop_on(b, i, m, b->rx->port_id, why);
}

struct rte_mbuf *e3_clone(struct e3_burst *b, unsigned i, struct rte_mbuf *m)
{
	const bool tracing = b->trace;
	/* Like VPP's vlib_buffer_clone: a small frame is cheaper copied whole
	 * (one mbuf, written in place) than cloned behind a header. */
	struct rte_mbuf *c = m->pkt_len <= E3_COPY_MAX ?
			     rte_pktmbuf_copy(m, e3.pool, 0, UINT32_MAX) :
			     rte_pktmbuf_clone(m, e3.clone_pool);

	if (unlikely(c == NULL)) {
		b->w->st.port[b->rx->port_id].drops[E3_DROP_NO_MBUF]++;
		E3_TRACE(b, i, DROP_COPY, E3_DROP_NO_MBUF);
	}
	return c;
}

struct rte_mbuf *e3_hdr_push(struct rte_mbuf *m, uint16_t skip, uint16_t hlen)
{
	struct rte_mbuf *h = rte_pktmbuf_alloc(e3.hdr_pool);

	if (unlikely(h == NULL))
		return NULL;
	rte_pktmbuf_prepend(h, hlen);    /* hlen <= E3_HDR_ROOM: cannot fail */
	rte_pktmbuf_adj(m, skip);        /* the stages checked the first segment holds it */
	h->next = m;
	h->nb_segs = (uint16_t)(m->nb_segs + 1);
	h->pkt_len = hlen + m->pkt_len;
	h->port = m->port;
	return h;
}

unsigned e3_customer_tags(const struct rte_mbuf *m)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint16_t len = rte_pktmbuf_data_len(m);
	unsigned n = 0;
	uint16_t type;

	while (n < 2 && len >= RTE_ETHER_HDR_LEN + 4 * n) {
		memcpy(&type, d + 12 + 4 * n, 2);
		if (!e3_is_vlan_tpid(type))
			break;
		n++;
	}
	return n;
}
