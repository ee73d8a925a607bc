/* SPDX-License-Identifier: Apache-2.0
 *
 * stage_replicate.c - a flood tree's REPLICATE entries: a copy to each
 * branch but the one the frame came in on (RPF-checked, TTL spent), and the
 * frame to the local E-LAN when the node has members of it.
 */
#include "tables/label_table.h"
#include "pipeline/stage_label.h"

/* The reasons this stage drops frames for (docs/datapath.md). */
E3_DROP_REASON(RPF_FAIL, "rpf_fail", "REPLICATE frame not from the RPF port");

/* The events this stage records in a packet trace (trace.h). */
E3_TRACE_EVENT(REPLICATE_RPF,   "replicate: rpf port %u, arrived on %u");
E3_TRACE_EVENT(REPLICATE_TTL,   "replicate: ttl %u, no copies to branches");
E3_TRACE_EVENT(REPLICATE,       "replicate: %u branches");
E3_TRACE_EVENT(REPLICATE_LOCAL, "replicate: %u branches + local");

static __rte_always_inline void replicate_one(struct e3_burst *b, unsigned i, const bool tracing)
{
	struct e3_meta *mt = &b->meta[i];
	const struct e3_replicate *r = e3_repl_get(mt->index);

	if (unlikely(r == NULL)) {
		e3_drop(b, i, E3_DROP_LABEL_UNKNOWN);
		return;
	}
	if (r->rpf_port != b->rx->port_id) {
		E3_TRACE(b, i, REPLICATE_RPF, r->rpf_port, b->rx->port_id);
		e3_drop(b, i, E3_DROP_RPF_FAIL);
		return;
	}
	const struct e3_service *local = NULL;

	if (r->service != E3_NONE) {
		local = e3_entry_service(b, i, r->service, E3_SVC_ELAN);
		if (local == NULL)
			return;
	}
	/* Branches other than the one it came in on (split horizon on the tree). */
	uint32_t out[E3_MAX_BRANCHES];
	unsigned n_out = 0;

	for (unsigned k = 0; k < r->n_branches; k++) {
		uint32_t label;
		const struct e3_nexthop *nh = e3_nhlfe_resolve(r->branches[k], NULL, 0, &label);

		if (nh == NULL || nh->port != b->rx->port_id)
			out[n_out++] = r->branches[k];   /* a missing one is counted by e3_out_swap */
	}
	if (n_out > 0 && mt->ttl <= 1) {
		b->w->st.port[b->rx->port_id].drops[E3_DROP_TTL_EXPIRED]++;
		E3_TRACE(b, i, REPLICATE_TTL, mt->ttl);
		n_out = 0;
	}
	if (local)
		E3_TRACE(b, i, REPLICATE_LOCAL, n_out);
	else
		E3_TRACE(b, i, REPLICATE, n_out);
	if (n_out == 0 && local == NULL) {
		e3_drop(b, i, E3_DROP_SPLIT_HORIZON);
		return;
	}
	struct rte_mbuf *orig = b->pkts[i];

	for (unsigned k = 0; k < n_out; k++) {
		bool last = k + 1 == n_out && local == NULL;
		struct rte_mbuf *m = last ? orig : e3_clone(b, i, orig);

		if (m != NULL)
			e3_out_swap(b, i, m, out[k], tracing);
	}
	if (local != NULL) {
		mt->svc = local;
		mt->source = r->source;
		mt->flooded = 1;
		if (unlikely(mt->stacked) && !e3_segment_source(b, i, local->id))
			return;
		if (e3_pop_labels(b, i, false)) {
			e3_next_set(b, i, NX_ELAN_TERM);
			e3_elan_keys(b, i);
		}
	}
}

static __rte_always_inline unsigned replicate(struct e3_burst *b, const bool tracing)
{
	unsigned n = 0;

	for (unsigned i = 0; i < b->n; i++)
		if (b->meta[i].next == NX_REPLICATE) {
			replicate_one(b, i, tracing);
			n++;
		}
	return n;
}

E3_STAGE_ENTRY(replicate)
