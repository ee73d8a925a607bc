/* SPDX-License-Identifier: Apache-2.0
 *
 * stage_customer.c - frames arriving on customer ports: parse, find the
 * circuit, pop the service-delimiting tag (raw mode), and the E-Line stage
 * (encapsulate toward the remote leaf, or hairpin to the peer circuit).
 */
#include <string.h>

#include "tables/circuit_table.h"
#include "pipeline/stage_out.h"

/* The reasons this stage drops frames for (docs/datapath.md). */
E3_DROP_REASON(NO_CIRCUIT, "no_circuit",
	"customer frame on a (port, VLAN) with no circuit and no untagged circuit");
E3_DROP_REASON(CUSTOMER_LABELLED, "customer_labelled", "MPLS ethertype on a customer port");
E3_DROP_REASON(NOT_DF, "not_df",
	"from a multi-homed site, on a leaf that is not the site's designated "
	"forwarder: an E-LAN's BUM when the site floods (no LAG), any frame of an"
	" active-standby E-Line");

/* The events this stage records in a packet trace (trace.h). */
E3_TRACE_EVENT(CUST_NO_CIRCUIT, "customer-in %p vlan %u: no circuit");
E3_TRACE_EVENT(CUST_TAGGED,     "customer-in %p vlan %u pcp %u -> circuit %u service %u");
E3_TRACE_EVENT(CUST_TAG_POPPED, "customer-in %p vlan %u pcp %u -> circuit %u service %u, tag popped");
E3_TRACE_EVENT(CUST_UNTAGGED,   "customer-in %p untagged -> circuit %u service %u");
E3_TRACE_EVENT(ELINE_ENCAP,     "eline-encap service %u nhlfe %u cw %o");
E3_TRACE_EVENT(ELINE_NOT_DF,    "eline-in service %u: circuit %u, a site whose DF is another leaf");
E3_TRACE_EVENT(HAIRPIN_NO_PEER, "eline-hairpin service %u: no peer circuit");
E3_TRACE_EVENT(HAIRPIN,         "eline-hairpin service %u -> circuit %u");

/* The circuit customer_in found last, by the VLAN it looked up: a frame of
 * the same VLAN (or untagged again) belongs to it too (VPP's L2 input keeps
 * its last answer the same way). Within a burst the tables may be taken
 * as they were at its first frame. Its frames are counted here and added
 * to the circuit's and service's counters once, when the memo moves on or
 * the burst ends. */
struct circuit_memo {
	uint32_t vlan;          /* looked up: a VLAN, E3_VLAN_UNTAGGED, or UINT32_MAX = none */
	uint32_t cid;
	bool pop;
	uint8_t next;           /* NX_ELINE or NX_ELAN: the service's stage (its bit set in pending) */
	const struct e3_service *s;
	struct e3_circ_ctr *cc;
	struct e3_svc_ctr *sc;
	uint32_t pkts;          /* received on it, not yet in cc and sc */
	uint64_t bytes;
};

static inline void circuit_memo_count(struct circuit_memo *mm)
{
	if (mm->pkts == 0)
		return;
	mm->cc->rx_pkts += mm->pkts;
	mm->cc->rx_bytes += mm->bytes;
	mm->sc->rx_pkts += mm->pkts;
	mm->sc->rx_bytes += mm->bytes;
	mm->pkts = 0;
	mm->bytes = 0;
}

static __rte_always_inline void customer_in_one(struct e3_burst *b, unsigned i, void *ctx,
						const bool tracing)
{
	struct circuit_memo *mm = ctx;
	struct rte_mbuf *m = b->pkts[i];
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	uint16_t len = rte_pktmbuf_data_len(m);
	unsigned n_tags = 0;
	uint16_t vlan = E3_VLAN_UNTAGGED, pcp = 0, type;

	if (unlikely(len < RTE_ETHER_HDR_LEN)) {
		e3_drop(b, i, E3_DROP_TRUNCATED);
		return;
	}
	memcpy(&type, d + 12, 2);
	/* Count tags for the MTU check: the outer one is the service
	 * delimiter, a second one (QinQ) belongs to the customer. */
	while (e3_is_vlan_tpid(type) && n_tags < 2) {
		if (unlikely(len < RTE_ETHER_HDR_LEN + 4 * (n_tags + 1))) {
			e3_drop(b, i, E3_DROP_TRUNCATED);
			return;
		}
		if (n_tags == 0) {
			uint16_t tci = rte_be_to_cpu_16(*(const uint16_t *)(d + 14));

			vlan = tci & 0xfff;
			pcp = tci >> 13;
		}
		memcpy(&type, d + 16 + 4 * n_tags, 2);
		n_tags++;
	}
	if (unlikely(type == rte_cpu_to_be_16(E3_ETH_MPLS) ||
		     type == rte_cpu_to_be_16(E3_ETH_MPLS_MC))) {
		e3_drop(b, i, E3_DROP_CUSTOMER_LABELLED);
		return;
	}
	if (unlikely(m->pkt_len > e3_port_max_frame(b->rx, n_tags))) {
		e3_drop(b, i, E3_DROP_OVERSIZE);
		return;
	}
	/* A tagged frame belongs to its VLAN's circuit; without one, to the
	 * port's untagged circuit (the whole port, tag kept). VLAN 0 is a
	 * priority tag: untagged for the lookup. */
	uint32_t key = n_tags > 0 && vlan != 0 ? vlan : E3_VLAN_UNTAGGED;

	if (key != mm->vlan) {
		uint32_t cid = E3_NONE;
		bool pop = false;

		if (key != E3_VLAN_UNTAGGED) {
			cid = e3_circuit_lookup(b->rx->port_id, vlan);
			pop = cid != E3_NONE;
		}
		if (cid == E3_NONE)
			cid = e3_circuit_lookup(b->rx->port_id, E3_VLAN_UNTAGGED);
		if (unlikely(cid == E3_NONE)) {
			E3_TRACE(b, i, CUST_NO_CIRCUIT, b->rx->port_id, vlan);
			e3_drop(b, i, E3_DROP_NO_CIRCUIT);
			return;
		}
		struct e3_circuit c = e3_circuit_get(cid);
		const struct e3_service *s = e3_service_get(c.service);

		if (unlikely(c.port != b->rx->port_id || s == NULL)) {
			e3_drop(b, i, E3_DROP_NO_SERVICE);
			return;
		}
		circuit_memo_count(mm);
		*mm = (struct circuit_memo){ .vlan = key, .cid = cid, .pop = pop, .s = s,
					     .next = s->type == E3_SVC_ELINE ? NX_ELINE : NX_ELAN,
					     .cc = &b->w->st.circ[cid], .sc = &b->w->st.svc[c.service] };
		b->pending |= 1u << mm->next;
	}
	const uint32_t cid = mm->cid;
	const bool pop = mm->pop;
	const struct e3_service *s = mm->s;

	mm->pkts++;
	mm->bytes += m->pkt_len;
	if (pop) {
		e3_move_macs(rte_pktmbuf_mtod_offset(m, uint8_t *, 4), d);
		rte_pktmbuf_adj(m, 4);
	}
	struct e3_meta *mt = &b->meta[i];

	mt->svc = s;
	mt->circuit = cid;
	mt->tc = (uint8_t)pcp;
	mt->next = mm->next;
	if (mm->next == NX_ELAN)
		e3_elan_keys(b, i);
	if (n_tags)
		if (pop)
			E3_TRACE(b, i, CUST_TAG_POPPED, b->rx->port_id, vlan, pcp, cid, s->id);
		else
			E3_TRACE(b, i, CUST_TAGGED, b->rx->port_id, vlan, pcp, cid, s->id);
	else
		E3_TRACE(b, i, CUST_UNTAGGED, b->rx->port_id, cid, s->id);
}

static __rte_always_inline unsigned customer_in(struct e3_burst *b, const bool tracing)
{
	struct circuit_memo mm = { .vlan = UINT32_MAX };
	unsigned n = e3_rx_each(b, &mm, tracing, customer_in_one);

	circuit_memo_count(&mm);
	return n;
}

E3_STAGE_ENTRY(customer_in)

static __rte_always_inline unsigned eline_in(struct e3_burst *b, const bool tracing)
{
	unsigned n = 0;

	for (unsigned i = 0; i < b->n; i++) {
		if (b->meta[i].next != NX_ELINE)
			continue;
		n++;
		const struct e3_service *s = b->meta[i].svc;

		if (unlikely(s->n_sites)) {
			/* An active-standby E-Line to a multi-homed site: only
			 * the designated forwarder's circuit takes the site's
			 * frames. */
			const struct e3_site *site = e3_service_site(s, b->meta[i].circuit);

			if (site != NULL && site->non_df) {
				E3_TRACE(b, i, ELINE_NOT_DF, s->id, b->meta[i].circuit);
				e3_drop(b, i, E3_DROP_NOT_DF);
				continue;
			}
		}
		if (s->nhlfe != E3_NONE) {
			E3_TRACE(b, i, ELINE_ENCAP, s->id, s->nhlfe, e3.settings.control_word);
			/* A move in progress: the other end's new place gets a
			 * copy (copies first, from the untouched original). */
			for (unsigned k = 0; k < s->n_branches; k++) {
				struct rte_mbuf *m = e3_clone(b, i, b->pkts[i]);

				if (m != NULL)
					e3_out_nhlfe(b, i, m, s->branches[k], 0, tracing);
			}
			e3_to_pw(b, i, s->nhlfe);
			continue;
		}
		/* Hairpin: both circuits on this node. */
		uint32_t peer = E3_NONE;

		if (s->n_circuits == 2)
			peer = s->circuits[0] == b->meta[i].circuit ? s->circuits[1] : s->circuits[0];
		if (peer == E3_NONE) {
			E3_TRACE(b, i, HAIRPIN_NO_PEER, s->id);
			e3_drop(b, i, E3_DROP_NO_SERVICE);
			continue;
		}
		E3_TRACE(b, i, HAIRPIN, s->id, peer);
		e3_to_circuit(b, i, peer);
	}
	return n;
}

E3_STAGE_ENTRY(eline_in)
