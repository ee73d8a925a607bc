/* SPDX-License-Identifier: Apache-2.0
 *
 * pipeline.c - the order of the stages a burst goes through.
 */
#include "pipeline/stages.h"
#include "pipeline/trace.h"

struct e3_worker *e3_workers[E3_MAX_WORKERS];

void e3_process_burst(struct e3_worker *w, uint16_t rx_port, struct rte_mbuf **pkts, uint16_t n)
{
	struct e3_burst b;
	const struct e3_port *p = e3_port_get(rx_port);

	if (unlikely(p == NULL)) {
		rte_pktmbuf_free_bulk(pkts, n);
		return;
	}
	b.w = w;
	b.rx = p;
	b.n = n;
	b.trace = false;
	struct e3_port_ctr *pc = &w->st.port[rx_port];

	pc->rx_pkts += n;
	for (unsigned i = 0; i < n; i++) {
		b.pkts[i] = pkts[i];
		b.meta[i].next = NX_IN;
		b.meta[i].gach = 0;
		b.meta[i].stacked = 0;
		b.meta[i].flooded = 0;
		b.meta[i].redirected = 0;
		b.meta[i].below = 0;
		b.meta[i].tr = NULL;
		pc->rx_bytes += pkts[i]->pkt_len;
		/* The stages (and the trace filter) expect every tag in the frame. */
		if (unlikely(pkts[i]->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED) &&
		    rte_vlan_insert(&b.pkts[i]) != 0)
			e3_drop(&b, i, E3_DROP_NO_MBUF);
	}
	if (unlikely(e3_trace_on()))
		e3_trace_burst(&b);
	if (p->kind == E3_PORT_CUSTOMER) {
		e3_stage_customer_in(&b);
		e3_stage_eline_in(&b);
		e3_stage_elan_in(&b);
	} else {
		e3_stage_fabric_in(&b);
		e3_stage_label_lookup(&b);
		e3_stage_swap(&b);
		e3_stage_eline_term(&b);
		e3_stage_circuit_term(&b);
		e3_stage_replicate(&b);
		e3_stage_elan_term(&b);
		e3_stage_oam(&b);
	}
	if (unlikely(b.trace))
		e3_trace_finish(&b);
	e3_tx_flush(w);
}
