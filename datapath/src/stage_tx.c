/* SPDX-License-Identifier: Apache-2.0
 *
 * stage_tx.c - leaving the pipeline: header pushes shared by the stages,
 * per-worker TX buffers (one per destination port, flushed at the end of
 * each burst), and drops.
 */
#include <string.h>

#include <rte_ethdev.h>
#include <rte_spinlock.h>

#include "circuit_table.h"
#include "nhlfe_table.h"
#include "stages.h"
#include "trace.h"

/* Only used for devices with fewer TX queues than workers. */
static rte_spinlock_t txlock[RTE_MAX_ETHPORTS][E3_MAX_WORKERS];

static void flush_port(struct e3_worker *w, uint16_t port)
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
		if (likely(!p->tx_shared)) {
			sent = rte_eth_tx_burst(port, w->idx, t->m, n);
		} else {
			uint16_t q = w->idx % p->n_txq;

			rte_spinlock_lock(&txlock[port][q]);
			sent = rte_eth_tx_burst(port, q, t->m, n);
			rte_spinlock_unlock(&txlock[port][q]);
		}
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

void e3_tx(struct e3_worker *w, uint16_t port, struct rte_mbuf *m)
{
	struct e3_txbuf *t = &w->tx[port];

	t->m[t->n++] = m;
	w->tx_dirty |= 1ull << port;
	if (t->n == E3_BURST)
		flush_port(w, port);
}

void e3_tx_flush(struct e3_worker *w)
{
	while (w->tx_dirty) {
		uint16_t port = (uint16_t)__builtin_ctzll(w->tx_dirty);

		flush_port(w, port);
	}
}

void e3_drop(struct e3_burst *b, unsigned i, enum e3_drop why)
{
	b->w->st.port[b->rx->port_id].drops[why]++;
	if (unlikely(b->trace) && b->meta[i].tr != NULL) {
		e3_trace_line(b, i, "drop %s", e3_drop_name(why));
		if (b->meta[i].tr->n_out == 0)
			e3_trace_verdict(b, i, "drop %s", e3_drop_name(why));
	}
	rte_pktmbuf_free(b->pkts[i]);
	e3_done(b, i);
}

void e3_drop_copy(struct e3_burst *b, unsigned i, struct rte_mbuf *m, enum e3_drop why)
{
	if (m == b->pkts[i]) {
		e3_drop(b, i, why);
		return;
	}
	b->w->st.port[b->rx->port_id].drops[why]++;
	E3_TRACE(b, i, "drop %s (one copy)", e3_drop_name(why));
	rte_pktmbuf_free(m);
}

struct rte_mbuf *e3_copy(struct e3_burst *b, unsigned i, struct rte_mbuf *m)
{
	struct rte_mbuf *c = rte_pktmbuf_copy(m, e3.pool, 0, UINT32_MAX);

	if (unlikely(c == NULL)) {
		b->w->st.port[b->rx->port_id].drops[E3_DROP_NO_MBUF]++;
		E3_TRACE(b, i, "drop no_mbuf (one copy)");
	}
	return c;
}

static inline void sent(struct e3_burst *b, unsigned i, struct rte_mbuf *m, uint16_t port)
{
	if (m == b->pkts[i])
		e3_done(b, i);
	e3_tx(b->w, port, m);
}

void e3_out_circuit(struct e3_burst *b, unsigned i, struct rte_mbuf *m, uint32_t circuit)
{
	struct e3_circuit c = e3_circuit_get(circuit);

	if (unlikely(c.port == E3_CIRCUIT_NOPORT)) {
		e3_drop_copy(b, i, m, E3_DROP_NO_SERVICE);
		return;
	}
	const struct e3_port *p = e3_port_get(c.port);

	if (unlikely(p == NULL || !p->link_up)) {
		e3_drop_copy(b, i, m, E3_DROP_NO_NEXTHOP);
		return;
	}
	if (c.vlan != E3_VLAN_UNTAGGED) {
		/* Raw mode: push the egress circuit's tag, PCP from the TC. */
		struct rte_ether_hdr *eh = (struct rte_ether_hdr *)rte_pktmbuf_prepend(m, 4);

		if (unlikely(eh == NULL)) {
			e3_drop_copy(b, i, m, E3_DROP_NO_MBUF);
			return;
		}
		memmove(eh, (uint8_t *)eh + 4, 2 * RTE_ETHER_ADDR_LEN);
		eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
		/* The tag's second half (eth_proto) is the customer's ethertype,
		 * already in place. */
		struct rte_vlan_hdr *vh = (struct rte_vlan_hdr *)(eh + 1);

		vh->vlan_tci = rte_cpu_to_be_16((uint16_t)(b->meta[i].tc & 7) << 13 | c.vlan);
	}
	struct e3_circ_ctr *cc = &b->w->st.circ[circuit];

	cc->tx_pkts++;
	cc->tx_bytes += m->pkt_len;
	b->w->st.svc[c.service].tx_pkts++;
	b->w->st.svc[c.service].tx_bytes += m->pkt_len;
	if (c.vlan == E3_VLAN_UNTAGGED)
		E3_TRACE_OUT(b, i, "tx %s circuit %u untagged", p->conf.name, circuit);
	else
		E3_TRACE_OUT(b, i, "tx %s circuit %u vlan %u", p->conf.name, circuit, c.vlan);
	sent(b, i, m, c.port);
}

void e3_out_nhlfe(struct e3_burst *b, unsigned i, struct rte_mbuf *m, uint32_t nhlfe)
{
	uint32_t label;
	const struct e3_nexthop *nh = e3_nhlfe_resolve(nhlfe, &label);
	const struct e3_port *p = nh ? e3_port_get(nh->port) : NULL;

	if (unlikely(p == NULL || !p->link_up)) {
		e3_drop_copy(b, i, m, E3_DROP_NO_NEXTHOP);
		return;
	}
	bool cw = e3.settings.control_word;
	uint16_t hlen = RTE_ETHER_HDR_LEN + E3_MPLS_HLEN + (cw ? E3_CW_LEN : 0);
	uint8_t *h = (uint8_t *)rte_pktmbuf_prepend(m, hlen);

	if (unlikely(h == NULL)) {
		e3_drop_copy(b, i, m, E3_DROP_NO_MBUF);
		return;
	}
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)h;

	rte_ether_addr_copy(&nh->dst, &eh->dst_addr);
	rte_ether_addr_copy(&nh->src, &eh->src_addr);
	eh->ether_type = rte_cpu_to_be_16(E3_ETH_MPLS);
	uint32_t lse = e3_mpls_lse(label, b->meta[i].tc, e3.settings.ttl);

	memcpy(h + RTE_ETHER_HDR_LEN, &lse, 4);
	if (cw)
		memset(h + RTE_ETHER_HDR_LEN + E3_MPLS_HLEN, 0, E3_CW_LEN);
	E3_TRACE_OUT(b, i, "tx %s label %u nhlfe %u", p->conf.name, label, nhlfe);
	sent(b, i, m, nh->port);
}

void e3_out_swap(struct e3_burst *b, unsigned i, struct rte_mbuf *m, uint32_t nhlfe)
{
	uint32_t label;
	const struct e3_nexthop *nh = e3_nhlfe_resolve(nhlfe, &label);
	const struct e3_port *p = nh ? e3_port_get(nh->port) : NULL;

	if (unlikely(p == NULL || !p->link_up)) {
		e3_drop_copy(b, i, m, E3_DROP_NO_NEXTHOP);
		return;
	}
	uint8_t *h = rte_pktmbuf_mtod(m, uint8_t *);
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)h;

	rte_ether_addr_copy(&nh->dst, &eh->dst_addr);
	rte_ether_addr_copy(&nh->src, &eh->src_addr);
	uint32_t lse = e3_mpls_lse(label, b->meta[i].tc, b->meta[i].ttl - 1);

	memcpy(h + RTE_ETHER_HDR_LEN, &lse, 4);
	E3_TRACE_OUT(b, i, "tx %s label %u ttl %u", p->conf.name, label, b->meta[i].ttl - 1);
	sent(b, i, m, nh->port);
}
