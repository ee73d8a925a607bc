/* SPDX-License-Identifier: Apache-2.0
 *
 * stage_label.h - what the stages after a label lookup share (label_lookup
 * and replicate): popping the labels, the service of an entry, and the
 * source a segment label names.
 */
#ifndef E3_STAGE_LABEL_H
#define E3_STAGE_LABEL_H

#include "tables/label_table.h"
#include "pipeline/pwoam.h"
#include "pipeline/stage_out.h"

/* The reasons the stages after a label lookup drop for (docs/datapath.md). */
E3_DROP_REASON(BAD_CONTROL_WORD, "bad_control_word",
	"control word expected, first nibble neither 0 (a control word) nor 1 (an"
	" ACH)");

/* The events they record in a packet trace (trace.h). */
E3_TRACE_EVENT(PW_OAM, "label %u: MPLS echo in the PW's ACH");

/* Pop the labels and control word: the frame becomes the customer's. In
 * the control word's place, an ACH of MPLS echo goes to PW OAM instead
 * where oam says the entry is a PW's end (an E-Line's or E-LAN's). */
static inline bool e3_pop_labels(struct e3_burst *b, unsigned i, bool oam)
{
	const bool tracing = b->trace;
	struct rte_mbuf *m = b->pkts[i];
	bool cw = e3.settings.control_word;
	uint16_t hl = RTE_ETHER_HDR_LEN + E3_MPLS_HLEN * (1 + b->meta[i].stacked) + (cw ? E3_CW_LEN : 0);

	if (unlikely(rte_pktmbuf_data_len(m) < hl + RTE_ETHER_HDR_LEN)) {
		e3_drop(b, i, E3_DROP_TRUNCATED);
		return false;
	}
	const uint8_t *word = rte_pktmbuf_mtod_offset(m, const uint8_t *, hl - E3_CW_LEN);

	if (cw && unlikely(word[0] >> 4 != 0)) {
		if (word[0] >> 4 != 1) {
			e3_drop(b, i, E3_DROP_BAD_CONTROL_WORD);
		} else if (oam && !b->meta[i].stacked && e3_pwoam_ach(word)) {
			E3_TRACE(b, i, PW_OAM, b->meta[i].label);
			e3_next_set(b, i, NX_PW_OAM);
		} else {
			e3_drop(b, i, E3_DROP_PW_OAM_BAD);
		}
		return false;
	}
	rte_pktmbuf_adj(m, hl);
	return true;
}

static inline const struct e3_service *e3_entry_service(struct e3_burst *b, unsigned i, uint32_t id, uint8_t type)
{
	const struct e3_service *s = e3_service_get(id);

	if (unlikely(s == NULL || s->type != type)) {
		e3_drop(b, i, E3_DROP_NO_SERVICE);
		return NULL;
	}
	return s;
}

/* An E-LAN frame of service svc with a segment label below its label: the
 * segment label's entry (an ELAN entry of the same service) gives the
 * source the frame is learned from, the site's. Else it is dropped. */
static inline bool e3_segment_source(struct e3_burst *b, unsigned i, uint32_t svc)
{
	struct e3_meta *mt = &b->meta[i];
	struct e3_label_entry e = e3_label_get(mt->below);

	if (unlikely(e.type != E3_LBL_ELAN || e3_label_elan_service(e.index) != svc)) {
		e3_drop(b, i, E3_DROP_LABEL_STACKED);
		return false;
	}
	/* Its own ports too: the label above may take more of them. */
	if (unlikely(!e3_label_port_ok(e.in_ports, b->rx->port_id))) {
		e3_drop(b, i, E3_DROP_LABEL_WRONG_PORT);
		return false;
	}
	mt->source = e3_label_elan_source(e.index);
	return true;
}

#endif
