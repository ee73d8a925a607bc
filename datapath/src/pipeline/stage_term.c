/* SPDX-License-Identifier: Apache-2.0
 *
 * stage_term.c - popped fabric frames out of a local circuit: an E-Line's
 * (its ELINE entry), and a site's that another leaf redirected (a CIRCUIT
 * entry).
 */
#include "pipeline/stage_out.h"

/* The events this stage records in a packet trace (trace.h). */
E3_TRACE_EVENT(ELINE_TERM, "eline-term service %u -> circuit %u");

static __rte_always_inline unsigned eline_term(struct e3_burst *b, const bool tracing)
{
	unsigned n = 0;

	for (unsigned i = 0; i < b->n; i++) {
		if (b->meta[i].next != NX_ELINE_TERM)
			continue;
		n++;
		const struct e3_service *s = b->meta[i].svc;

		if (unlikely(s->n_circuits == 0)) {
			e3_drop(b, i, E3_DROP_NO_SERVICE);
			continue;
		}
		E3_TRACE(b, i, ELINE_TERM, s->id, s->circuits[0]);
		e3_out_circuit(b, i, b->pkts[i], s->circuits[0], tracing);
	}
	return n;
}

/* Frames another leaf of a site redirected while its own link to the site
 * is down: out of the site's circuit here. */
static __rte_always_inline unsigned circuit_term(struct e3_burst *b, const bool tracing)
{
	unsigned n = 0;

	for (unsigned i = 0; i < b->n; i++)
		if (b->meta[i].next == NX_CIRCUIT_TERM) {
			e3_out_circuit(b, i, b->pkts[i], b->meta[i].index, tracing);
			n++;
		}
	return n;
}

E3_STAGE_ENTRY(eline_term)
E3_STAGE_ENTRY(circuit_term)
