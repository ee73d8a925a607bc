/* SPDX-License-Identifier: Apache-2.0
 *
 * pipeline.c - the order of the stages a burst goes through.
 */
#include "pipeline/stages.h"
#include "pipeline/stage_tx.h"
#include "pipeline/trace.h"

#include <rte_cycles.h>

const char *const e3_stage_names[E3_STAGE_MAX] = {
#define _(sym, name) [E3_STAGE_##sym] = #name,
	foreach_e3_stage
#undef _
};

/* Runs stage `name` over the burst's frames of next nx, if it has any, and
 * profiles it (runtime.h); tsc is 0 when this burst is not timed. */
#define RUN(sym, name, nx) do { \
	if (!(b.pending & 1u << (nx))) \
		break; \
	unsigned _k = e3_stage_##name(&b); \
	struct e3_rt_ctr *_c = &w->rt.stage[E3_STAGE_##sym]; \
	if (_k != 0) \
		e3_rt_count(_c, _k); \
	if (tsc != 0) { \
		uint64_t _t = rte_rdtsc(); \
		if (_k != 0) \
			e3_rt_time(_c, _t - tsc); \
		tsc = _t; \
	} \
} while (0)

uint64_t e3_process_burst(struct e3_worker *w, uint16_t rx_port, struct rte_mbuf **pkts,
			  uint16_t n, uint64_t tsc)
{
	struct e3_burst b;
	const struct e3_port *p = e3_port_get(rx_port);

	if (unlikely(p == NULL)) {
		rte_pktmbuf_free_bulk(pkts, n);
		return tsc;
	}
	b.w = w;
	b.rx = p;
	b.n = n;
	b.trace = false;
	b.pending = 1u << NX_IN;
	b.fetched[0] = b.fetched[1] = E3_MAC_EMPTY;   /* no learned MAC has it */
	b.push.nhlfe = E3_NONE;
	struct e3_port_ctr *pc = &w->st.port[rx_port];

	pc->rx_pkts += n;
	for (unsigned i = 0; i < n; i++) {
		b.pkts[i] = pkts[i];
		b.meta[i].next = NX_IN;
		b.meta[i].gach = 0;
		b.meta[i].stacked = 0;
		b.meta[i].flooded = 0;
		b.meta[i].redirected = 0;
		b.meta[i].sampled = 0;
		b.meta[i].svc = NULL;
		b.meta[i].below = 0;
		b.meta[i].tr = NULL;
		pc->rx_bytes += pkts[i]->pkt_len;
		/* The stages (and the trace filter) expect every tag in the frame. */
		if (unlikely(pkts[i]->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED) &&
		    rte_vlan_insert(&b.pkts[i]) != 0)
			e3_drop(&b, i, E3_DROP_NO_MBUF);
	}
	uint32_t rate = __atomic_load_n(&e3_sflow_rate[rx_port], __ATOMIC_RELAXED);

	b.n_smp = 0;
	if (unlikely(rate != 0))
		e3_sflow_burst(&b, rate);
	if (unlikely(e3_trace_on()))
		e3_trace_burst(&b);
	if (p->kind == E3_PORT_CUSTOMER) {
		RUN(CUSTOMER_IN, customer_in, NX_IN);
		RUN(ELINE_IN, eline_in, NX_ELINE);
		RUN(ELAN_IN, elan_in, NX_ELAN);
		RUN(ELAN_FLOOD, elan_flood, NX_ELAN_FLOOD);
		RUN(TX_PW, tx_pw, NX_TX_PW);
		RUN(TX_CIRCUIT, tx_circuit, NX_TX_CIRCUIT);
	} else {
		RUN(FABRIC_IN, fabric_in, NX_IN);
		RUN(LABEL_LOOKUP, label_lookup, NX_LABEL);
		RUN(SWAP, swap, NX_SWAP);
		RUN(ELINE_TERM, eline_term, NX_ELINE_TERM);
		RUN(REPLICATE, replicate, NX_REPLICATE);
		RUN(ELAN_TERM, elan_term, NX_ELAN_TERM);
		RUN(ELAN_FLOOD, elan_flood, NX_ELAN_FLOOD);
		RUN(TX_CIRCUIT, tx_circuit, NX_TX_CIRCUIT);
		RUN(OAM, oam, NX_OAM);
		RUN(PW_OAM, pw_oam, NX_PW_OAM);
	}
	if (unlikely(b.trace))
		e3_trace_finish(&b);
	if (unlikely(b.n_smp != 0))
		e3_sflow_finish(&b);
	return e3_tx_flush(w, tsc != 0 ? rte_rdtsc() : 0);
}
