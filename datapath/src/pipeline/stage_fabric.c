/* SPDX-License-Identifier: Apache-2.0
 *
 * stage_fabric.c - labelled frames arriving on fabric ports: header
 * checks, the label lookup and the SWAP entries (what a label leads to
 * next: stage_term.c, stage_replicate.c, stage_elan.c, stage_oam.c,
 * stage_pwoam.c).
 */
#include <string.h>

#include "tables/label_table.h"
#include "pipeline/oam.h"
#include "pipeline/pwoam.h"
#include "pipeline/stage_label.h"

/* The reasons this stage drops frames for (docs/datapath.md). */
E3_DROP_REASON(NOT_FOR_US, "not_for_us", "fabric frame to another MAC");
E3_DROP_REASON(BAD_ETHERTYPE, "bad_ethertype",
	"fabric frame that is not MPLS unicast (including broadcast)");
E3_DROP_REASON(LABEL_RESERVED, "label_reserved", "label 0-15");
E3_DROP_REASON(LABEL_STACKED, "label_stacked",
	"S = 0 without exactly one entry below it (a GAL, or a segment label); a "
	"GAL below a label whose entry is not swap or oam; a segment label below "
	"one that is not swap, elan or replicate, or whose own entry is not an "
	"ELAN entry of the same service");
E3_DROP_REASON(LABEL_WRONG_PORT, "label_wrong_port",
	"a valid label on a port its entry does not take frames from (`in_ports`:"
	" the ports its upstreams use); never learned from");
E3_DROP_REASON(LABEL_UNKNOWN, "label_unknown", "no entry for the label");
E3_DROP_REASON(TTL_EXPIRED, "ttl_expired",
	"TTL 0 anywhere, TTL 1 at a transit (SWAP, replicate copies)");

/* The events this stage records in a packet trace (trace.h). */
E3_TRACE_EVENT(FABRIC_IN,        "fabric-in %p label %u tc %u s %u ttl %u");
E3_TRACE_EVENT(LABEL_WRONG_PORT, "label %u: not taken from %p");
E3_TRACE_EVENT(LABEL_STACKED,    "label %u: a label below, and no entry that takes one");
E3_TRACE_EVENT(LABEL_SWAP,       "label %u: swap nhlfe %u");
E3_TRACE_EVENT(LABEL_ELINE,      "label %u: eline service %u");
E3_TRACE_EVENT(LABEL_ELAN,       "label %u: elan service %u source %u");
E3_TRACE_EVENT(LABEL_REPLICATE,  "label %u: replicate slot %u");
E3_TRACE_EVENT(LABEL_OAM,        "label %u: oam path session %u");
E3_TRACE_EVENT(LABEL_CIRCUIT,    "label %u: circuit %u (redirected to this leaf)");
E3_TRACE_EVENT(LABEL_NONE,       "label %u: no entry");

/* The second label stack entry (host order), or 0 if the frame has none. */
static inline uint32_t lse_below(const uint8_t *d, uint16_t len)
{
	uint32_t lse;

	if (len < RTE_ETHER_HDR_LEN + 2 * E3_MPLS_HLEN)
		return 0;
	memcpy(&lse, d + RTE_ETHER_HDR_LEN + E3_MPLS_HLEN, 4);
	return rte_be_to_cpu_32(lse);
}

static __rte_always_inline void fabric_in_one(struct e3_burst *b, unsigned i, void *ctx __rte_unused,
					  const bool tracing)
{
	struct rte_mbuf *m = b->pkts[i];
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct rte_ether_hdr *eh = (const struct rte_ether_hdr *)d;
	uint16_t len = rte_pktmbuf_data_len(m);

	if (unlikely(len < RTE_ETHER_HDR_LEN)) {
		e3_drop(b, i, E3_DROP_TRUNCATED);
		return;
	}
	if (unlikely(m->pkt_len > e3_port_max_frame(b->rx, 0))) {
		e3_drop(b, i, E3_DROP_OVERSIZE);
		return;
	}
	if (unlikely(!rte_is_same_ether_addr(&eh->dst_addr, &b->rx->mac))) {
		/* Broadcast is accepted for OAM/discovery, of which there is
		 * none yet: it ends as "not MPLS unicast". */
		e3_drop(b, i, rte_is_broadcast_ether_addr(&eh->dst_addr) ?
			E3_DROP_BAD_ETHERTYPE : E3_DROP_NOT_FOR_US);
		return;
	}
	if (unlikely(eh->ether_type != rte_cpu_to_be_16(E3_ETH_MPLS))) {
		e3_drop(b, i, E3_DROP_BAD_ETHERTYPE);
		return;
	}
	if (unlikely(len < RTE_ETHER_HDR_LEN + E3_MPLS_HLEN)) {
		e3_drop(b, i, E3_DROP_TRUNCATED);
		return;
	}
	uint32_t lse;

	memcpy(&lse, d + RTE_ETHER_HDR_LEN, 4);
	lse = rte_be_to_cpu_32(lse);
	struct e3_meta *mt = &b->meta[i];

	mt->label = lse >> 12;
	mt->tc = (lse >> 9) & 7;
	mt->ttl = lse & 0xff;
	E3_TRACE(b, i, FABRIC_IN, b->rx->port_id, mt->label, mt->tc, (lse >> 8) & 1, mt->ttl);
	if (unlikely(mt->label < E3_LABEL_MIN)) {
		/* The G-ACh of the link: OAM, when the GAL is the only label. */
		if (mt->label == E3_LABEL_GAL && (lse & 0x100)) {
			e3_next_set(b, i, NX_OAM);
			return;
		}
		e3_drop(b, i, E3_DROP_LABEL_RESERVED);
		return;
	}
	if (unlikely(!(lse & 0x100))) {
		/* The two stacks we take, two entries each: a path check's
		 * label on a GAL, and an E-LAN label on a segment label (which
		 * label_lookup checks). */
		uint32_t below = lse_below(d, len);

		if (!(below & 0x100) || (below >> 12 < E3_LABEL_MIN && below >> 12 != E3_LABEL_GAL)) {
			e3_drop(b, i, E3_DROP_LABEL_STACKED);
			return;
		}
		if (below >> 12 == E3_LABEL_GAL) {
			mt->gach = 1;
		} else {
			mt->stacked = 1;
			mt->below = below >> 12;
		}
	}
	if (unlikely(mt->ttl == 0)) {
		e3_drop(b, i, E3_DROP_TTL_EXPIRED);
		return;
	}
	/* Random lines of 8 MiB tables: fetched while the rest of the burst
	 * is parsed, used by label_lookup. */
	rte_prefetch0(e3_label_slot(mt->label));
	rte_prefetch0(&b->w->st.label[mt->label & (E3_LABEL_SPACE - 1)]);
	e3_next_set(b, i, NX_LABEL);
}

static __rte_always_inline unsigned fabric_in(struct e3_burst *b, const bool tracing)
{
	return e3_rx_each(b, NULL, tracing, fabric_in_one);
}

E3_STAGE_ENTRY(fabric_in)

/* A frame whose TTL runs out at this transit node: a PW's MPLS echo (its
 * ACH right below the label) is traced here (PW OAM, svc NULL); anything
 * else is dropped. */
static void ttl_expired(struct e3_burst *b, unsigned i)
{
	const bool tracing = b->trace;
	struct rte_mbuf *m = b->pkts[i];
	const uint16_t at = RTE_ETHER_HDR_LEN + E3_MPLS_HLEN;

	if (!b->meta[i].gach && !b->meta[i].stacked && rte_pktmbuf_data_len(m) >= at + E3_ACH_LEN &&
	    e3_pwoam_ach(rte_pktmbuf_mtod_offset(m, const uint8_t *, at))) {
		E3_TRACE(b, i, PW_OAM, b->meta[i].label);
		b->meta[i].svc = NULL;
		e3_next_set(b, i, NX_PW_OAM);
		return;
	}
	e3_drop(b, i, E3_DROP_TTL_EXPIRED);
}

static __rte_always_inline unsigned label_lookup(struct e3_burst *b, const bool tracing)
{
	unsigned n = 0;

	for (unsigned i = 0; i < b->n; i++) {
		struct e3_meta *mt = &b->meta[i];

		if (mt->next != NX_LABEL)
			continue;
		n++;
		struct e3_label_entry e = e3_label_get(mt->label);

		b->w->st.label[mt->label]++;
		mt->index = e.index;
		if (unlikely(!e3_label_port_ok(e.in_ports, b->rx->port_id))) {
			E3_TRACE(b, i, LABEL_WRONG_PORT, mt->label, b->rx->port_id);
			e3_drop(b, i, E3_DROP_LABEL_WRONG_PORT);
			continue;
		}
		/* A path check's OAM may only be switched or end here, a
		 * segment label only be switched or end in an E-LAN. */
		if (unlikely(mt->gach) && e.type != E3_LBL_SWAP && e.type != E3_LBL_OAM) {
			E3_TRACE(b, i, LABEL_STACKED, mt->label);
			e3_drop(b, i, e.type == E3_LBL_NONE ? E3_DROP_LABEL_UNKNOWN : E3_DROP_LABEL_STACKED);
			continue;
		}
		if (unlikely(mt->stacked) && e.type != E3_LBL_SWAP && e.type != E3_LBL_ELAN &&
		    e.type != E3_LBL_REPLICATE) {
			E3_TRACE(b, i, LABEL_STACKED, mt->label);
			e3_drop(b, i, e.type == E3_LBL_NONE ? E3_DROP_LABEL_UNKNOWN : E3_DROP_LABEL_STACKED);
			continue;
		}
		switch (e.type) {
		case E3_LBL_SWAP:
			E3_TRACE(b, i, LABEL_SWAP, mt->label, e.index);
			rte_prefetch0(&e3_nhlfe_tbl[e.index & (E3_MAX_NHLFES - 1)]);
			e3_next_set(b, i, NX_SWAP);
			if (unlikely(mt->ttl <= 1))
				ttl_expired(b, i);
			break;
		case E3_LBL_ELINE:
			E3_TRACE(b, i, LABEL_ELINE, mt->label, e.index);
			mt->svc = e3_entry_service(b, i, e.index, E3_SVC_ELINE);
			if (mt->svc && e3_pop_labels(b, i, true))
				e3_next_set(b, i, NX_ELINE_TERM);
			break;
		case E3_LBL_ELAN:
			mt->source = e3_label_elan_source(e.index);
			E3_TRACE(b, i, LABEL_ELAN, mt->label, e3_label_elan_service(e.index), mt->source);
			mt->svc = e3_entry_service(b, i, e3_label_elan_service(e.index), E3_SVC_ELAN);
			if (unlikely(mt->stacked) && mt->svc && !e3_segment_source(b, i, mt->svc->id))
				break;
			if (mt->svc && e3_pop_labels(b, i, true)) {
				e3_next_set(b, i, NX_ELAN_TERM);
				e3_elan_keys(b, i);
			}
			break;
		case E3_LBL_REPLICATE:
			E3_TRACE(b, i, LABEL_REPLICATE, mt->label, e.index);
			e3_next_set(b, i, NX_REPLICATE);
			break;
		case E3_LBL_CIRCUIT:
			E3_TRACE(b, i, LABEL_CIRCUIT, mt->label, e.index);
			if (e3_pop_labels(b, i, false)) {
				mt->redirected = 1;
				e3_to_circuit(b, i, e.index);
			}
			break;
		case E3_LBL_OAM:
			E3_TRACE(b, i, LABEL_OAM, mt->label, e.index);
			if (unlikely(!mt->gach)) {
				e3_drop(b, i, E3_DROP_OAM_BAD_ACH);
				break;
			}
			e3_next_set(b, i, NX_OAM);
			break;
		default:
			E3_TRACE(b, i, LABEL_NONE, mt->label);
			e3_drop(b, i, E3_DROP_LABEL_UNKNOWN);
			break;
		}
	}
	return n;
}

static __rte_always_inline unsigned swap(struct e3_burst *b, const bool tracing)
{
	unsigned n = 0;

	for (unsigned i = 0; i < b->n; i++)
		if (b->meta[i].next == NX_SWAP) {
			e3_out_swap(b, i, b->pkts[i], b->meta[i].index, tracing);
			n++;
		}
	return n;
}

E3_STAGE_ENTRY(label_lookup)
E3_STAGE_ENTRY(swap)
