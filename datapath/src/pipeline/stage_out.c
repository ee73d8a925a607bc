/* SPDX-License-Identifier: Apache-2.0
 *
 * stage_out.c - the output stages: a frame the stages before sent to a
 * local circuit (tx_circuit: its VLAN pushed) or into a PW (tx_pw:
 * Ethernet, label, the segment label below it if any, control word) goes
 * to its port's TX buffer here (stage_out.h's helpers).
 */
#include "pipeline/stage_out.h"

static __rte_always_inline unsigned tx_pw(struct e3_burst *b, const bool tracing)
{
	unsigned n = 0;

	for (unsigned i = 0; i < b->n; i++)
		if (b->meta[i].next == NX_TX_PW) {
			e3_out_nhlfe(b, i, b->pkts[i], b->meta[i].out, b->meta[i].below, tracing);
			n++;
		}
	return n;
}

static __rte_always_inline unsigned tx_circuit(struct e3_burst *b, const bool tracing)
{
	unsigned n = 0;

	for (unsigned i = 0; i < b->n; i++)
		if (b->meta[i].next == NX_TX_CIRCUIT) {
			e3_out_circuit(b, i, b->pkts[i], b->meta[i].out, tracing);
			n++;
		}
	return n;
}

E3_STAGE_ENTRY(tx_pw)
E3_STAGE_ENTRY(tx_circuit)
