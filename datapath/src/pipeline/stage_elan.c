/* SPDX-License-Identifier: Apache-2.0
 *
 * stage_elan.c - E-LAN forwarding, from customers (elan_in) and from the
 * fabric (elan_term). Both look the burst's source and destination MACs up
 * (their buckets were prefetched a stage earlier), learn the sources (events
 * to the main lcore), and decide by destination: a local circuit
 * (tx_circuit), a remote leaf's PW (tx_pw, from customers only: split
 * horizon), or a flood (elan_flood, which sends its copies itself).
 */
#include <string.h>

#include "tables/circuit_table.h"
#include "tables/mac_table.h"
#include "pipeline/stage_out.h"

/* The reasons this stage drops frames for (docs/datapath.md). */
E3_DROP_REASON(SPLIT_HORIZON, "split_horizon",
	"frame from the fabric whose destination is behind the fabric or is the "
	"multi-homed site it came from, or with no local circuit to go to (or "
	"none whose site params take it)");
E3_DROP_REASON(SAME_CIRCUIT, "same_circuit",
	"known unicast back to its circuit, or a flood with no other member");
E3_DROP_REASON(STORM_BROADCAST, "storm_broadcast",
	"broadcast an E-LAN would flood from a circuit, over the circuit's "
	"`storm_broadcast_pps` (docs/operations.md)");
E3_DROP_REASON(STORM_MULTICAST, "storm_multicast",
	"multicast an E-LAN would flood from a circuit, over the circuit's "
	"`storm_multicast_pps` (docs/operations.md)");
E3_DROP_REASON(STORM_UNKNOWN, "storm_unknown",
	"unknown unicast an E-LAN would flood from a circuit, over the circuit's "
	"`storm_unknown_pps` (docs/operations.md)");
_Static_assert(E3_DROP_STORM_MULTICAST == E3_DROP_STORM_BROADCAST + E3_STORM_MULTICAST &&
	       E3_DROP_STORM_UNKNOWN == E3_DROP_STORM_BROADCAST + E3_STORM_UNKNOWN,
	       "a storm class's drop reason is E3_DROP_STORM_BROADCAST + class");

/* The events this stage records in a packet trace (trace.h). */
E3_TRACE_EVENT(ELAN_FLOOD_NONE,  "elan-flood service %u: no other member");
E3_TRACE_EVENT(ELAN_FLOOD,       "elan-flood service %u: %u circuits, %u branches");
E3_TRACE_EVENT(ELAN_IN_REMOTE,   "elan-in service %u: dst behind source %u nhlfe %d");
E3_TRACE_EVENT(ELAN_IN_INGRESS,  "elan-in service %u: dst on the ingress circuit");
E3_TRACE_EVENT(ELAN_IN_LOCAL,    "elan-in service %u: dst on circuit %u");
E3_TRACE_EVENT(ELAN_NOT_DF,      "elan-in service %u: BUM from circuit %u, a site whose DF is another leaf");
E3_TRACE_EVENT(ELAN_TERM_REMOTE, "elan-term service %u: dst behind source %u");
E3_TRACE_EVENT(ELAN_TERM_LOCAL,  "elan-term service %u: dst on circuit %u");
E3_TRACE_EVENT(ELAN_TERM_SITE,   "elan-term service %u: from the site of circuit %u, back to it");

/* What the MAC table said of a stage's frames, one frame at a time. A
 * burst is often one conversation: a key the frame before had is not
 * looked up again, nor a source learned again where it was just learned,
 * and a frame with the keys and circuit of the last one that went to a PW
 * or a circuit goes the same way at once (the table only changes on the
 * main lcore, and a burst may take it as it was at its first frame). The
 * keys were made, and their buckets prefetched, when the frames were
 * parsed (e3_elan_keys). */
struct lookups {
	uint64_t src, dst;              /* the keys looked up last (valid once n > 0) */
	int32_t src_pos;                /* and what the table said: the source's slot, */
	uint32_t src_dest, dst_dest;    /* where each is (or E3_MAC_ABSENT) */
	unsigned n;                     /* frames looked up */
	uint64_t last_src;              /* the last source learned (E3_MAC_EMPTY: none) */
	uint32_t last_dest;             /* and where */
	/* The last frame sent to a PW or a circuit, and where it came from. */
	uint64_t way_src, way_dst;
	uint32_t way_from, way_out, way_below;
	uint8_t way_next;               /* NX_TX_PW or NX_TX_CIRCUIT; NX_DONE: none */
};

static __rte_always_inline void lookups_init(struct lookups *l)
{
	*l = (struct lookups){ .src_pos = -1, .src_dest = E3_MAC_ABSENT, .dst_dest = E3_MAC_ABSENT,
			       .last_src = E3_MAC_EMPTY, .last_dest = E3_NONE, .way_next = NX_DONE };
}

static __rte_always_inline void lookup(struct e3_burst *b, unsigned i, struct lookups *l)
{
	const struct e3_meta *mt = &b->meta[i];

	if (l->n == 0 || mt->src_key != l->src) {
		l->src = mt->src_key;
		l->src_pos = e3_mac_find(l->src);
		l->src_dest = e3_mac_dest_at(l->src_pos);
	}
	if (l->n == 0 || mt->dst_key != l->dst) {
		l->dst = mt->dst_key;
		l->dst_dest = e3_mac_dest_at(e3_mac_find(l->dst));
	}
	l->n++;
}

static __rte_always_inline void learn(struct e3_burst *b, struct lookups *l, unsigned i, uint32_t dest)
{
	uint64_t src = b->meta[i].src_key;

	/* A multicast source is bogus: forward, don't learn. */
	if (e3_mac_key64_multicast(src))
		return;
	/* Frames of a burst often come from one host: one event is enough. */
	if (l->last_src == src && l->last_dest == dest)
		return;
	l->last_src = src;
	l->last_dest = dest;
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(b->pkts[i], const struct rte_ether_hdr *);
	const struct e3_service *s = b->meta[i].svc;

	if (l->src_dest == E3_MAC_ABSENT &&
	    e3_mac_svc_full(s->id, s->mac_limit ? s->mac_limit : e3.settings.mac_limit)) {
		b->w->st.svc[s->id].mac_refused++;
		return;
	}
	if (!e3_mac_learn(b->w->idx, s->id, eh->src_addr.addr_bytes, dest, l->src_pos, l->src_dest)) {
		b->w->learn_drops++;
		b->w->st.svc[s->id].learn_lost++;
	}
}

/* Frame i, from `from` (elan_in: its circuit; elan_term: its source), has
 * the keys and origin of the last frame sent on: it goes the same way.
 * From a customer it also gets the segment label to push below (its
 * site's); a fabric frame keeps the one it came with. */
static __rte_always_inline bool same_way(struct e3_burst *b, unsigned i, uint32_t from,
					 const struct lookups *l, const bool customer)
{
	struct e3_meta *mt = &b->meta[i];

	if (l->way_next == NX_DONE || mt->src_key != l->way_src || mt->dst_key != l->way_dst ||
	    from != l->way_from)
		return false;
	if (customer)
		mt->below = l->way_below;
	mt->out = l->way_out;
	mt->next = l->way_next;
	return true;
}

static __rte_always_inline void went(const struct e3_burst *b, unsigned i, uint32_t from,
				    struct lookups *l)
{
	const struct e3_meta *mt = &b->meta[i];

	l->way_src = mt->src_key;
	l->way_dst = mt->dst_key;
	l->way_from = from;
	l->way_out = mt->out;
	l->way_below = mt->below;
	l->way_next = mt->next;
}

/* Whether frame i is the stage's (next nx) and left to decide: counted in
 * *n, sent the last way at once where it can be (from: as same_way), else
 * looked up. */
static __rte_always_inline bool to_decide(struct e3_burst *b, unsigned i, uint8_t nx, uint32_t from,
					  struct lookups *l, unsigned *n, const bool tracing)
{
	if (b->meta[i].next != nx)
		return false;
	(*n)++;
	if (!tracing && same_way(b, i, from, l, nx == NX_ELAN))
		return false;
	lookup(b, i, l);
	return true;
}

/* Destination of a known MAC, or E3_NONE when unknown (flood). */
static __rte_always_inline uint32_t known_dest(const struct lookups *l, const struct e3_service *s)
{
	/* Broadcast/multicast: never in the table, flooded. */
	uint32_t d = l->dst_dest;

	if (d == E3_MAC_ABSENT)
		return E3_NONE;
	/* A circuit that left the service since it was learned: unknown. */
	if (!(d & E3_MAC_REMOTE) && e3_circuit_get(d).service != s->id)
		return E3_NONE;
	return d;
}

/* Send frame i to every local circuit but except, and to every branch
 * (branches only from customers). From the fabric, a circuit on a
 * multi-homed site may not take it (e3_site_filtered: another leaf's copy
 * reaches the site); only services with such circuits look. */
static __rte_always_inline void flood(struct e3_burst *b, unsigned i, uint32_t except,
				    bool to_branches, const bool tracing)
{
	const struct e3_service *s = b->meta[i].svc;
	const bool filter = !to_branches && s->n_sites > 0;
	const uint16_t source = b->meta[i].source;
	const bool flooded = b->meta[i].flooded;
	unsigned n_circ = s->n_circuits - (except != E3_NONE);

	if (filter) {
		unsigned n_filtered = 0;

		for (unsigned k = 0; k < s->n_circuits; k++)
			n_filtered += s->circuits[k] != except &&
				      e3_site_filtered(&s->site[k], source, flooded);
		n_circ -= n_filtered;
		b->w->st.svc[s->id].bum_filtered += n_filtered;
	}
	unsigned n_br = to_branches ? s->n_branches : 0;
	unsigned total = n_circ + n_br, done = 0;

	if (total == 0) {
		/* Nowhere else to go: the only member is where it came from, or
		 * the segments here are another leaf's to serve. */
		E3_TRACE(b, i, ELAN_FLOOD_NONE, s->id);
		e3_drop(b, i, to_branches ? E3_DROP_SAME_CIRCUIT : E3_DROP_SPLIT_HORIZON);
		return;
	}
	b->w->st.svc[s->id].flooded++;
	E3_TRACE(b, i, ELAN_FLOOD, s->id, n_circ, n_br);
	struct rte_mbuf *orig = b->pkts[i];

	/* Copies first, from the untouched original; the original goes last. */
	for (unsigned k = 0; k < s->n_circuits; k++) {
		if (s->circuits[k] == except || (filter && e3_site_filtered(&s->site[k], source, flooded)))
			continue;
		struct rte_mbuf *m = ++done == total ? orig : e3_clone(b, i, orig);

		if (m != NULL)
			e3_out_circuit(b, i, m, s->circuits[k], tracing);
	}
	for (unsigned k = 0; k < n_br; k++) {
		struct rte_mbuf *m = ++done == total ? orig : e3_clone(b, i, orig);

		if (m != NULL)
			e3_out_nhlfe(b, i, m, s->branches[k], b->meta[i].below, tracing);
	}
}

/* Storm control: whether frame i, which the E-LAN would flood from circuit
 * in, is within the circuit's limit for its class (else it is dropped and
 * counted as the class's storm_ drop). A port read by several workers
 * (RSS) has each police its share of the rate. */
static __rte_always_inline bool storm_admit(struct e3_burst *b, unsigned i, uint32_t in)
{
	const struct rte_ether_addr *dst = rte_pktmbuf_mtod(b->pkts[i], const struct rte_ether_addr *);
	enum e3_storm_class cls = !rte_is_multicast_ether_addr(dst) ? E3_STORM_UNKNOWN :
				  rte_is_broadcast_ether_addr(dst) ? E3_STORM_BROADCAST : E3_STORM_MULTICAST;
	uint32_t pps = e3_circuit_storm_pps(in, cls);

	if (likely(pps == 0))
		return true;
	uint32_t share = RTE_MAX(pps / b->rx->n_rx_workers, 1u);

	if (e3_tb_take(&b->w->storm[in * E3_STORM_MAX + cls], share, rte_rdtsc(), rte_get_tsc_hz()))
		return true;
	e3_drop(b, i, (enum e3_drop)(E3_DROP_STORM_BROADCAST + cls));
	return false;
}

static __rte_always_inline unsigned elan_in(struct e3_burst *b, const bool tracing)
{
	struct lookups l;
	unsigned n = 0;

	lookups_init(&l);
	for (unsigned i = 0; i < b->n; i++) {
		if (!to_decide(b, i, NX_ELAN, b->meta[i].circuit, &l, &n, tracing))
			continue;
		const struct e3_service *s = b->meta[i].svc;
		uint32_t in = b->meta[i].circuit;
		const struct e3_site *site = e3_service_site(s, in);

		learn(b, &l, i, in);
		uint32_t d = known_dest(&l, s);

		if (unlikely(site != NULL)) {
			/* From a multi-homed site: its segment label goes below. */
			b->meta[i].below = site->label;
			if (d == E3_NONE && site->non_df && site->floods) {
				E3_TRACE(b, i, ELAN_NOT_DF, s->id, in);
				e3_drop(b, i, E3_DROP_NOT_DF);
				continue;
			}
		}
		if (d == E3_NONE) {
			if (storm_admit(b, i, in))
				e3_next_set(b, i, NX_ELAN_FLOOD);
		} else if (d & E3_MAC_REMOTE) {
			uint32_t nhlfe = e3_service_remote(s, (uint16_t)d);

			E3_TRACE(b, i, ELAN_IN_REMOTE, s->id, (uint16_t)d, nhlfe);
			if (nhlfe != E3_NONE) {
				e3_to_pw(b, i, nhlfe);
				went(b, i, in, &l);
			} else if (storm_admit(b, i, in)) {     /* that remote is gone */
				e3_next_set(b, i, NX_ELAN_FLOOD);
			}
		} else if (d == in) {
			E3_TRACE(b, i, ELAN_IN_INGRESS, s->id);
			e3_drop(b, i, E3_DROP_SAME_CIRCUIT);
		} else {
			E3_TRACE(b, i, ELAN_IN_LOCAL, s->id, d);
			e3_to_circuit(b, i, d);
			went(b, i, in, &l);
		}
	}
	return n;
}

/* The local circuit on the multi-homed site whose segment source is
 * source, or E3_NONE. A frame with it came from the site through another
 * of its leaves: its MACs are the site's, here too. */
static __rte_always_inline uint32_t site_circuit(const struct e3_service *s, uint16_t source)
{
	if (s->n_sites == 0 || source == 0)
		return E3_NONE;
	for (unsigned k = 0; k < s->n_circuits; k++)
		if (s->site[k].source == source)
			return s->circuits[k];
	return E3_NONE;
}

static __rte_always_inline unsigned elan_term(struct e3_burst *b, const bool tracing)
{
	struct lookups l;
	unsigned n = 0;

	lookups_init(&l);
	for (unsigned i = 0; i < b->n; i++) {
		if (!to_decide(b, i, NX_ELAN_TERM, b->meta[i].source, &l, &n, tracing))
			continue;
		const struct e3_service *s = b->meta[i].svc;
		uint32_t site = site_circuit(s, b->meta[i].source);

		learn(b, &l, i, site != E3_NONE ? site : E3_MAC_REMOTE | b->meta[i].source);
		uint32_t d = known_dest(&l, s);

		if (d == E3_NONE) {
			e3_next_set(b, i, NX_ELAN_FLOOD);
		} else if (d == site) {
			E3_TRACE(b, i, ELAN_TERM_SITE, s->id, d);
			e3_drop(b, i, E3_DROP_SPLIT_HORIZON);
		} else if (d & E3_MAC_REMOTE) {
			E3_TRACE(b, i, ELAN_TERM_REMOTE, s->id, (uint16_t)d);
			e3_drop(b, i, E3_DROP_SPLIT_HORIZON);
		} else {
			E3_TRACE(b, i, ELAN_TERM_LOCAL, s->id, d);
			e3_to_circuit(b, i, d);
			went(b, i, b->meta[i].source, &l);
		}
	}
	return n;
}

/* The frames elan_in and elan_term flood: from a customer to every other
 * local circuit and every branch, from the fabric to the local circuits
 * only (split horizon). */
static __rte_always_inline unsigned elan_flood(struct e3_burst *b, const bool tracing)
{
	const bool from_customer = b->rx->kind == E3_PORT_CUSTOMER;
	unsigned n = 0;

	for (unsigned i = 0; i < b->n; i++)
		if (b->meta[i].next == NX_ELAN_FLOOD) {
			flood(b, i, from_customer ? b->meta[i].circuit : E3_NONE, from_customer, tracing);
			n++;
		}
	return n;
}

E3_STAGE_ENTRY(elan_in)
E3_STAGE_ENTRY(elan_term)
E3_STAGE_ENTRY(elan_flood)
