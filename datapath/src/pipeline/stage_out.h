/* SPDX-License-Identifier: Apache-2.0
 *
 * stage_out.h - the output helpers of the stages: push the circuit's VLAN,
 * or Ethernet + label (+ control word), or rewrite a label, and hand the
 * frame (or one of its copies) to a TX buffer. Each takes ownership of m
 * (frame i of the burst, or a copy of it) and drops it with a reason on
 * failure.
 *
 * Inlined into the stages with a constant `tracing`: a stage is compiled
 * twice (see E3_TRACE), so with tracing off no trace test is left per frame.
 */
#ifndef E3_STAGE_OUT_H
#define E3_STAGE_OUT_H

#include <string.h>

#include "tables/circuit_table.h"
#include "tables/nhlfe_table.h"
#include "tables/service_table.h"
#include "pipeline/stages.h"
#include "pipeline/stage_tx.h"
#include "pipeline/trace.h"

/* The reasons the output helpers drop for (docs/datapath.md). */
E3_DROP_REASON(NO_NEXTHOP, "no_nexthop", "nhlfe or nexthop missing, or its port is down");

/* The events they record in a packet trace (trace.h). */
E3_TRACE_EVENT(SITE_REDIRECT, "circuit %u: port down, redirected to nhlfe %u");
E3_TRACE_EVENT(TX_UNTAGGED,   "tx %p circuit %u untagged");
E3_TRACE_EVENT(TX_VLAN,       "tx %p circuit %u vlan %u");
E3_TRACE_EVENT(TX_NHLFE,      "tx %p label %u nhlfe %u");
E3_TRACE_EVENT(TX_LABEL,      "tx %p label %u ttl %u");

/* Whether m's buffer is seen by others (clones point into it, or m is a
 * clone): then none of its bytes, headroom included, may be written. */
static inline bool e3_shared(const struct rte_mbuf *m)
{
	return !RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1;
}

/* Hand m (frame i or a copy) to port's TX buffer as out (m, or a header
 * chained to it). */
static __rte_always_inline void e3_sent(struct e3_burst *b, unsigned i, struct rte_mbuf *m,
				       struct rte_mbuf *out, uint16_t port)
{
	if (m == b->pkts[i])
		e3_done(b, i);
	if (unlikely(b->meta[i].sampled)) {
		struct e3_sflow_sample *x = &b->smp[b->meta[i].sampled - 1];

		if (x->outputs++ == 0)
			x->out_port = port;
		if (b->meta[i].svc != NULL)
			x->service = b->meta[i].svc->id;
	}
	e3_tx(b->w, port, out);
}

static __rte_always_inline void
e3_out_nhlfe(struct e3_burst *b, unsigned i, struct rte_mbuf *m, uint32_t nhlfe, uint32_t below,
	     const bool tracing);

/* A frame for a multi-homed site's circuit whose port is down: to another
 * leaf of the site (its redirect), unless it came from one; else dropped. */
static inline __rte_cold void
e3_out_redirect(struct e3_burst *b, unsigned i, struct rte_mbuf *m, uint32_t circuit,
		struct e3_circuit c, const bool tracing)
{
	const struct e3_service *s = e3_service_get(c.service);
	const struct e3_site *site = s ? e3_service_site(s, circuit) : NULL;

	if (site == NULL || site->redirect == 0 || b->meta[i].redirected) {
		e3_drop_copy(b, i, m, E3_DROP_NO_NEXTHOP);
		return;
	}
	b->w->st.svc[c.service].redirected++;
	E3_TRACE(b, i, SITE_REDIRECT, circuit, site->redirect);
	/* Only the circuit label: the frame is the site's to deliver, not to
	 * learn from. */
	e3_out_nhlfe(b, i, m, site->redirect, 0, tracing);
}

/* Push the circuit's VLAN (PCP = tc) and send. */
static __rte_always_inline void
e3_out_circuit(struct e3_burst *b, unsigned i, struct rte_mbuf *m, uint32_t circuit,
		const bool tracing)
{
	struct e3_circuit c = e3_circuit_get(circuit);

	if (unlikely(c.port == E3_CIRCUIT_NOPORT)) {
		e3_drop_copy(b, i, m, E3_DROP_NO_SERVICE);
		return;
	}
	const struct e3_port *p = e3_port_get(c.port);

	if (unlikely(p == NULL || !p->link_up)) {
		e3_out_redirect(b, i, m, circuit, c, tracing);
		return;
	}
	unsigned push = c.vlan != E3_VLAN_UNTAGGED;
	uint32_t len = m->pkt_len + 4 * push;

	/* Egress MTU: the frame as it leaves, tags counted like on ingress
	 * (only parsed when it is longer than one tag allows). */
	if (unlikely(len > e3_port_max_frame(p, push)) &&
	    len > e3_port_max_frame(p, RTE_MIN(push + e3_customer_tags(m), 2u))) {
		e3_drop_on(b, i, m, c.port, E3_DROP_OVERSIZE);
		return;
	}
	struct rte_mbuf *out = m;

	if (push) {
		/* Raw mode: push the egress circuit's tag, PCP from the TC. */
		uint16_t tci = rte_cpu_to_be_16((uint16_t)(b->meta[i].tc & 7) << 13 | c.vlan);
		struct rte_ether_hdr *eh = NULL;

		if (likely(!e3_shared(m))) {
			eh = (struct rte_ether_hdr *)rte_pktmbuf_prepend(m, 4);
			if (likely(eh != NULL))
				e3_move_macs(eh, (uint8_t *)eh + 4);
		}
		if (unlikely(eh == NULL)) {
			const uint8_t *macs = rte_pktmbuf_mtod(m, const uint8_t *);

			/* MACs and tag in a private header; m from the
			 * customer's ethertype on. */
			out = e3_hdr_push(m, 2 * RTE_ETHER_ADDR_LEN, 2 * RTE_ETHER_ADDR_LEN + 4);
			if (unlikely(out == NULL)) {
				e3_drop_copy(b, i, m, E3_DROP_NO_MBUF);
				return;
			}
			eh = rte_pktmbuf_mtod(out, struct rte_ether_hdr *);
			memcpy(eh, macs, 2 * RTE_ETHER_ADDR_LEN);
		}
		eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
		/* The tag's second half (eth_proto) is the customer's ethertype,
		 * already in place (or the first bytes of the clone). */
		memcpy(eh + 1, &tci, 2);
	}
	struct e3_circ_ctr *cc = &b->w->st.circ[circuit];

	cc->tx_pkts++;
	cc->tx_bytes += out->pkt_len;
	b->w->st.svc[c.service].tx_pkts++;
	b->w->st.svc[c.service].tx_bytes += out->pkt_len;
	if (c.vlan == E3_VLAN_UNTAGGED)
		E3_TRACE_OUT(b, i, TX_UNTAGGED, p->port_id, circuit);
	else
		E3_TRACE_OUT(b, i, TX_VLAN, p->port_id, circuit, c.vlan);
	e3_sent(b, i, m, out, c.port);
}

/* The nexthop and live port of nhlfe, or NULL after counting no_nexthop.
 * flow: m is a customer frame, whose flow picks an ECMP group's member. */
static __rte_always_inline const struct e3_nexthop *
e3_out_nexthop(struct e3_burst *b, unsigned i, struct rte_mbuf *m, uint32_t nhlfe, bool flow,
	       uint32_t *label, const struct e3_port **port)
{
	const struct e3_nexthop *nh =
		e3_nhlfe_resolve(nhlfe, flow ? rte_pktmbuf_mtod(m, const uint8_t *) : NULL,
				 rte_pktmbuf_data_len(m), label);
	const struct e3_port *p = nh ? e3_port_get(nh->port) : NULL;

	if (unlikely(p == NULL || !p->link_up)) {
		e3_drop_copy(b, i, m, E3_DROP_NO_NEXTHOP);
		return NULL;
	}
	*port = p;
	return nh;
}

/* Outer Ethernet toward nh and the label stack entry, at h. */
static __rte_always_inline void
e3_write_mpls(uint8_t *h, const struct e3_nexthop *nh, uint32_t lse)
{
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)h;

	rte_ether_addr_copy(&nh->dst, &eh->dst_addr);
	rte_ether_addr_copy(&nh->src, &eh->src_addr);
	eh->ether_type = rte_cpu_to_be_16(E3_ETH_MPLS);
	memcpy(h + RTE_ETHER_HDR_LEN, &lse, 4);
}

/* Push the header of hlen bytes at hdr in front of m (a private header mbuf
 * when m's data is shared or it has no headroom) and send it to port. */
static __rte_always_inline void
e3_out_hdr(struct e3_burst *b, unsigned i, struct rte_mbuf *m, const uint8_t *hdr, uint16_t hlen,
	   uint16_t port)
{
	struct rte_mbuf *out = m;
	uint8_t *h = NULL;

	if (likely(!e3_shared(m)))
		h = (uint8_t *)rte_pktmbuf_prepend(m, hlen);
	if (unlikely(h == NULL)) {
		out = e3_hdr_push(m, 0, hlen);
		if (unlikely(out == NULL)) {
			e3_drop_copy(b, i, m, E3_DROP_NO_MBUF);
			return;
		}
		h = rte_pktmbuf_mtod(out, uint8_t *);
	}
	/* hlen is 18 to 26 bytes: two overlapping 16-byte moves. */
	memcpy(h, hdr, 16);
	memcpy(h + hlen - 16, hdr + hlen - 16, 16);
	e3_sent(b, i, m, out, port);
}

/* Push Ethernet + label (+ the label below it, if not 0: a multi-homed
 * site's segment label) (+ control word, with cw) for nhlfe and send. The
 * header is made once for the frames of a burst that go the same way
 * (b->push); an ECMP group's, which depends on each frame's flow, is made
 * for every frame. */
static __rte_always_inline void
e3_out_push(struct e3_burst *b, unsigned i, struct rte_mbuf *m, uint32_t nhlfe, uint32_t below,
	    bool cw, const bool tracing)
{
	struct e3_push_memo *pm = &b->push;
	const uint8_t tc = b->meta[i].tc;

	if (!tracing && pm->nhlfe == nhlfe && pm->below == below && pm->tc == tc && pm->cw == cw) {
		if (unlikely(m->pkt_len + pm->hlen > pm->max_frame)) {
			e3_drop_on(b, i, m, pm->port, E3_DROP_OVERSIZE);
			return;
		}
		e3_out_hdr(b, i, m, pm->hdr, pm->hlen, pm->port);
		return;
	}
	uint32_t label;
	const struct e3_port *p;
	const struct e3_nexthop *nh = e3_out_nexthop(b, i, m, nhlfe, true, &label, &p);

	if (unlikely(nh == NULL))
		return;
	uint16_t hlen = RTE_ETHER_HDR_LEN + E3_MPLS_HLEN * (1 + (below != 0)) + (cw ? E3_CW_LEN : 0);

	if (unlikely(m->pkt_len + hlen > e3_port_max_frame(p, 0))) {
		e3_drop_on(b, i, m, nh->port, E3_DROP_OVERSIZE);
		return;
	}
	uint8_t hdr[32];
	uint32_t lse = e3_mpls_lse(label, tc, e3.settings.ttl);

	memset(hdr, 0, sizeof(hdr));   /* the control word, when there is one, is zero */
	if (unlikely(below != 0)) {
		uint32_t bottom = e3_mpls_lse(below, tc, e3.settings.ttl);

		lse &= ~rte_cpu_to_be_32(1u << 8);
		memcpy(hdr + RTE_ETHER_HDR_LEN + E3_MPLS_HLEN, &bottom, 4);
	}
	e3_write_mpls(hdr, nh, lse);
	if (!tracing && !(e3_nhlfe_get(nhlfe).label & E3_NHLFE_ECMP)) {
		*pm = (struct e3_push_memo){ .nhlfe = nhlfe, .below = below, .tc = tc, .cw = cw,
					     .hlen = (uint8_t)hlen, .port = nh->port,
					     .max_frame = e3_port_max_frame(p, 0) };
		memcpy(pm->hdr, hdr, sizeof(hdr));
	}
	E3_TRACE_OUT(b, i, TX_NHLFE, p->port_id, label, nhlfe);
	e3_out_hdr(b, i, m, hdr, hlen, nh->port);
}

/* A customer frame into the PW of nhlfe (with the node's control word). */
static __rte_always_inline void
e3_out_nhlfe(struct e3_burst *b, unsigned i, struct rte_mbuf *m, uint32_t nhlfe, uint32_t below,
	     const bool tracing)
{
	e3_out_push(b, i, m, nhlfe, below, e3.settings.control_word, tracing);
}

/* A labelled frame (data at its Ethernet header): rewrite the label, TTL
 * and MACs for nhlfe and send. */
static __rte_always_inline void
e3_out_swap(struct e3_burst *b, unsigned i, struct rte_mbuf *m, uint32_t nhlfe,
		const bool tracing)
{
	uint32_t label;
	const struct e3_port *p;
	const struct e3_nexthop *nh = e3_out_nexthop(b, i, m, nhlfe, false, &label, &p);

	if (unlikely(nh == NULL))
		return;
	if (unlikely(m->pkt_len > e3_port_max_frame(p, 0))) {
		e3_drop_on(b, i, m, nh->port, E3_DROP_OVERSIZE);
		return;
	}
	struct rte_mbuf *out = m;
	const uint16_t hlen = RTE_ETHER_HDR_LEN + E3_MPLS_HLEN;

	if (unlikely(e3_shared(m))) {
		/* A replicated copy: new Ethernet + label in a private header. */
		out = e3_hdr_push(m, hlen, hlen);
		if (unlikely(out == NULL)) {
			e3_drop_copy(b, i, m, E3_DROP_NO_MBUF);
			return;
		}
	}
	uint32_t lse = e3_mpls_lse(label, b->meta[i].tc, b->meta[i].ttl - 1);

	if (unlikely(b->meta[i].gach | b->meta[i].stacked))  /* the GAL or segment label stays below */
		lse &= ~rte_cpu_to_be_32(1u << 8);
	e3_write_mpls(rte_pktmbuf_mtod(out, uint8_t *), nh, lse);
	E3_TRACE_OUT(b, i, TX_LABEL, p->port_id, label, b->meta[i].ttl - 1);
	e3_sent(b, i, m, out, nh->port);
}

#endif
