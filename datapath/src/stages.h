/* SPDX-License-Identifier: Apache-2.0
 *
 * stages.h - the forwarding pipeline, VPP style: each stage is a small
 * function over the whole burst that handles the frames whose next is its
 * own, prefetching a few frames ahead and looking tables up in bulk.
 *
 *   customer port: customer_in -> eline_in | elan_in            -> tx
 *   fabric port:   fabric_in -> label_lookup -> swap | eline_term |
 *                  replicate -> elan_term                        -> tx
 *
 * A frame leaves the burst (pkts[i] = NULL, next = NX_DONE) when it is
 * handed to a TX buffer or dropped; every drop goes through e3_drop() and
 * is counted by reason.
 */
#ifndef E3_STAGES_H
#define E3_STAGES_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "dp.h"
#include "port.h"
#include "service_table.h"
#include "worker.h"

#define E3_ETH_MPLS      0x8847
#define E3_ETH_MPLS_MC   0x8848
#define E3_MPLS_HLEN     4
#define E3_CW_LEN        4
#define E3_PREFETCH      4        /* frames ahead */

enum e3_next {
	NX_DONE = 0,
	NX_IN,             /* received, not parsed yet */
	NX_ELINE,          /* customer frame into an E-Line */
	NX_ELAN,           /* customer frame into an E-LAN */
	NX_LABEL,          /* fabric frame, headers checked, label to look up */
	NX_SWAP,
	NX_ELINE_TERM,
	NX_ELAN_TERM,      /* popped fabric frame into an E-LAN (ELAN or REPLICATE local) */
	NX_REPLICATE,
};

struct e3_trace_slot;

struct e3_meta {
	const struct e3_service *svc;
	uint32_t circuit;     /* ingress circuit (customer) */
	uint32_t index;       /* label entry's index */
	uint32_t label;
	uint16_t source;      /* E-LAN remote endpoint a fabric frame came from */
	uint8_t tc;
	uint8_t ttl;
	uint8_t next;
	struct e3_trace_slot *tr;
};

struct e3_burst {
	struct e3_worker *w;
	const struct e3_port *rx;
	uint16_t n;
	bool trace;           /* some frame of this burst is traced */
	struct rte_mbuf *pkts[E3_BURST];
	struct e3_meta meta[E3_BURST];
};

/* Stages. */
void e3_stage_customer_in(struct e3_burst *b);
void e3_stage_eline_in(struct e3_burst *b);
void e3_stage_elan_in(struct e3_burst *b);
void e3_stage_fabric_in(struct e3_burst *b);
void e3_stage_label_lookup(struct e3_burst *b);
void e3_stage_swap(struct e3_burst *b);
void e3_stage_eline_term(struct e3_burst *b);
void e3_stage_replicate(struct e3_burst *b);
void e3_stage_elan_term(struct e3_burst *b);

/* Output helpers (stage_tx.c). Each takes ownership of m. */
void e3_tx(struct e3_worker *w, uint16_t port, struct rte_mbuf *m);
void e3_tx_flush(struct e3_worker *w);
/* Push the circuit's VLAN (PCP = tc) and send; drops with a reason on failure. */
void e3_out_circuit(struct e3_burst *b, unsigned i, struct rte_mbuf *m, uint32_t circuit);
/* Push Ethernet + label (+ control word) for nhlfe and send. */
void e3_out_nhlfe(struct e3_burst *b, unsigned i, struct rte_mbuf *m, uint32_t nhlfe);
/* A labelled frame (data at its Ethernet header): rewrite the label, TTL and
 * MACs for nhlfe and send. */
void e3_out_swap(struct e3_burst *b, unsigned i, struct rte_mbuf *m, uint32_t nhlfe);

/* Drop frame i of the burst (or an extra copy m of it, i's counters). */
void e3_drop(struct e3_burst *b, unsigned i, enum e3_drop why);
void e3_drop_copy(struct e3_burst *b, unsigned i, struct rte_mbuf *m, enum e3_drop why);

/* Mark frame i as handed on (the mbuf now belongs to a TX buffer). */
static inline void e3_done(struct e3_burst *b, unsigned i)
{
	b->pkts[i] = NULL;
	b->meta[i].next = NX_DONE;
}

static inline uint32_t e3_mpls_lse(uint32_t label, uint8_t tc, uint8_t ttl)
{
	return rte_cpu_to_be_32(label << 12 | (uint32_t)(tc & 7) << 9 | 1u << 8 | ttl);
}

/* A copy of m for one more destination, or NULL (counted as no_mbuf). */
struct rte_mbuf *e3_copy(struct e3_burst *b, unsigned i, struct rte_mbuf *m);

#endif
