/* SPDX-License-Identifier: Apache-2.0
 *
 * stage_term.c - popped fabric frames of an E-Line (its ELINE entry): out
 * of its local circuit. (A site's frames that another leaf redirected, by
 * a CIRCUIT entry, go straight to tx_circuit.)
 */
#include "pipeline/stage_tx.h"
#include "pipeline/trace.h"

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
		e3_to_circuit(b, i, s->circuits[0]);
	}
	return n;
}

E3_STAGE_ENTRY(eline_term)
