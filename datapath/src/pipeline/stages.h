/* SPDX-License-Identifier: Apache-2.0
 *
 * stages.h - the forwarding pipeline, VPP style: each stage is a small
 * function over the whole burst that handles the frames whose next is its
 * own, prefetching a few frames ahead and looking tables up in bulk.
 *
 *   customer port: customer_in -> eline_in | elan_in [-> elan_flood]
 *                  -> tx_pw | tx_circuit
 *   fabric port:   fabric_in -> label_lookup -> swap | eline_term |
 *                  replicate -> elan_term [-> elan_flood] -> tx_circuit
 *                  fabric_in -> oam (BFD, consumed)
 *
 * The stages before the tx_ ones decide where a frame goes (meta.out and
 * next); the tx_ stages (stage_out.c) write the headers and hand it to a
 * TX buffer. Copies (floods, replication, a move's second PW) are sent by
 * the stage that makes them. A frame leaves the burst (pkts[i] = NULL,
 * next = NX_DONE) when it is handed to a TX buffer or dropped; every drop
 * goes through e3_drop() (stage_tx.h) and is counted by reason.
 */
#ifndef E3_STAGES_H
#define E3_STAGES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "base/dp.h"
#include "tables/mac_table.h"
#include "port/port.h"
#include "tables/service_table.h"
#include "pipeline/context.h"
#include "pipeline/runtime.h"

/* The reasons any stage's checks drop for (docs/datapath.md). */
E3_DROP_REASON(TRUNCATED, "truncated",
	"shorter than the headers it claims (tag, label, control word, inner "
	"Ethernet)");
E3_DROP_REASON(OVERSIZE, "oversize",
	"longer than the receiving port's MTU allows, or than the egress port's "
	"once its VLAN or label is pushed (counted there)");
E3_DROP_REASON(NO_SERVICE, "no_service", "entry points at a service or circuit being removed");

#define E3_ETH_MPLS      0x8847
#define E3_ETH_MPLS_MC   0x8848
#define E3_MPLS_HLEN     4
#define E3_CW_LEN        4
#define E3_PREFETCH      4        /* frames ahead */
#define E3_COPY_MAX      256      /* flood copies up to this size are full copies */

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
	NX_OAM,            /* G-ACh frame: BFD of the port's link session, or (gach) of path session index */
	NX_PW_OAM,         /* MPLS echo in a PW's ACH (pwoam.h): at the egress (svc set) or a transit (svc NULL) */
	NX_ELAN_FLOOD,     /* E-LAN frame to every member but the one it came from */
	NX_TX_PW,          /* customer frame into the PW of nhlfe out (segment label below) */
	NX_TX_CIRCUIT,     /* frame out of local circuit out */
};

struct e3_trace_slot;

struct e3_meta {
	const struct e3_service *svc;
	uint32_t circuit;     /* ingress circuit (customer) */
	uint32_t index;       /* label entry's index (NX_OAM: the path session) */
	uint32_t label;
	uint16_t source;      /* E-LAN remote endpoint a fabric frame came from */
	uint8_t tc;
	uint8_t ttl;
	uint8_t next;
	uint8_t gach;         /* the label sits on a GAL: a path check's OAM (oam.h) */
	uint8_t stacked;      /* the label sits on an E-LAN's segment label */
	uint8_t flooded;      /* E-LAN: came by a flood tree (REPLICATE), not by unicast */
	uint8_t redirected;   /* came by a CIRCUIT entry: never redirected again */
	uint8_t sampled;      /* sFlow: 1 + its sample's index in smp[], else 0 */
	uint32_t below;       /* E-LAN: the segment label under the service's, pushed (customer:
	                       * from a site) or read (fabric: stacked); 0 = none */
	uint32_t out;         /* NX_TX_PW: the nhlfe; NX_TX_CIRCUIT: the circuit */
	struct e3_trace_slot *tr;
	uint64_t src_key, dst_key;  /* E-LAN: e3_mac_key64 of the frame's MACs */
};

/* The header e3_out_push wrote last (stage_out.h): a frame for the same
 * nhlfe, segment label, TC and control word gets the same bytes without
 * resolving the nhlfe again. It lives for one burst, over which the tables
 * may be taken as they were at its first frame. */
struct e3_push_memo {
	uint32_t nhlfe;       /* E3_NONE: empty */
	uint32_t below;
	uint8_t tc;
	bool cw;
	uint8_t hlen;
	uint16_t port;
	uint32_t max_frame;   /* the output port's, untagged */
	uint8_t hdr[32];
};

struct e3_burst {
	struct e3_worker *w;
	const struct e3_port *rx;
	uint16_t n;
	bool trace;           /* some frame of this burst is traced */
	/* Bit per e3_next some frame was given (e3_next_set): a stage whose
	 * next no frame has is not run, as VPP dispatches only the nodes that
	 * have frames pending. A bit stays set once its frames are handled. */
	uint32_t pending;
	uint64_t fetched[2];  /* E-LAN keys whose buckets were fetched last (e3_elan_keys) */
	struct rte_mbuf *pkts[E3_BURST];
	struct e3_meta meta[E3_BURST];
	uint8_t n_smp;        /* sFlow samples taken of this burst (sflow.h) */
	struct e3_sflow_sample smp[E3_SFLOW_BURST];
	struct e3_push_memo push;
};

/* sFlow (sflow.c): take this burst's samples at 1 in rate, and queue them
 * once the burst is done. */
void e3_sflow_burst(struct e3_burst *b, uint32_t rate);
void e3_sflow_finish(struct e3_burst *b);

/* Stages. Each is an always-inline body `name(b, tracing)` with a constant
 * tracing (see E3_TRACE) that returns how many frames it took, and this
 * entry point: the body without trace code, or with it, one branch a
 * burst. The count is for the runtime profile (runtime.h). */
#define E3_STAGE_ENTRY(name) \
unsigned e3_stage_##name(struct e3_burst *b) \
{ \
	if (unlikely(b->trace)) \
		return name(b, true); \
	return name(b, false); \
}

/* The body of a receive stage: one(b, i, ctx, tracing) for every frame
 * still at NX_IN, with its data prefetched E3_PREFETCH frames ahead; ctx is
 * the stage's own state over the burst. Always inline with a constant one,
 * so the call disappears. */
static __rte_always_inline unsigned
e3_rx_each(struct e3_burst *b, void *ctx, const bool tracing,
	   void (*one)(struct e3_burst *b, unsigned i, void *ctx, const bool tracing))
{
	unsigned n = 0;

	for (unsigned i = 0; i < E3_PREFETCH && i < b->n; i++)
		if (b->pkts[i] != NULL)
			rte_prefetch0(rte_pktmbuf_mtod(b->pkts[i], void *));
	for (unsigned i = 0; i < b->n; i++) {
		if (i + E3_PREFETCH < b->n && b->pkts[i + E3_PREFETCH] != NULL)
			rte_prefetch0(rte_pktmbuf_mtod(b->pkts[i + E3_PREFETCH], void *));
		if (b->meta[i].next == NX_IN) {
			one(b, i, ctx, tracing);
			n++;
		}
	}
	return n;
}

/* e3_stage_<name>(b) of every stage of the list (runtime.h). */
#define _(sym, name) unsigned e3_stage_##name(struct e3_burst *b);
foreach_e3_stage
#undef _

/* Move the two MAC addresses (12 bytes) to dst, which may overlap src (a
 * tag push or pop): through registers, not a memmove call. */
static inline void e3_move_macs(void *dst, const void *src)
{
	uint64_t a;
	uint32_t c;

	memcpy(&a, src, 8);
	memcpy(&c, (const uint8_t *)src + 8, 4);
	memcpy(dst, &a, 8);
	memcpy((uint8_t *)dst + 8, &c, 4);
}
/* An E-LAN frame i (data at the customer's Ethernet header, meta svc set):
 * make the keys of its MACs and start fetching their buckets, for the E-LAN
 * stage that looks them up after the rest of the burst is parsed. */
static __rte_always_inline void e3_elan_keys(struct e3_burst *b, unsigned i)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(b->pkts[i], const struct rte_ether_hdr *);
	struct e3_meta *mt = &b->meta[i];

	e3_mac_keys_of(mt->svc->id, eh, &mt->dst_key, &mt->src_key);
	/* A burst is often one conversation, or one host talking to many: a
	 * key's bucket is fetched once while it repeats (hashing it costs
	 * more than the prefetch saves). */
	if (mt->src_key != b->fetched[0]) {
		e3_mac_prefetch(mt->src_key);
		b->fetched[0] = mt->src_key;
	}
	if (mt->dst_key != b->fetched[1]) {
		e3_mac_prefetch(mt->dst_key);
		b->fetched[1] = mt->dst_key;
	}
}

_Static_assert(NX_TX_CIRCUIT < 32, "e3_burst.pending has a bit per next");

/* Frame i goes to the stage of next nx. */
static inline void e3_next_set(struct e3_burst *b, unsigned i, enum e3_next nx)
{
	b->meta[i].next = (uint8_t)nx;
	b->pending |= 1u << nx;
}

/* Frame i goes out of local circuit c (tx_circuit). */
static inline void e3_to_circuit(struct e3_burst *b, unsigned i, uint32_t c)
{
	b->meta[i].out = c;
	e3_next_set(b, i, NX_TX_CIRCUIT);
}

/* Customer frame i goes into the PW of nhlfe, its meta.below under the
 * service's label (tx_pw). */
static inline void e3_to_pw(struct e3_burst *b, unsigned i, uint32_t nhlfe)
{
	b->meta[i].out = nhlfe;
	e3_next_set(b, i, NX_TX_PW);
}

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


static inline bool e3_is_vlan_tpid(uint16_t be_type)
{
	return be_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN) ||
	       be_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_QINQ);
}

#endif
