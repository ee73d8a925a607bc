/* SPDX-License-Identifier: Apache-2.0
 *
 * circuit.c - control of the circuits (node.h).
 */
#include <rte_ether.h>
#include <rte_mbuf.h>

#include "base/dp.h"
#include "node/node.h"
#include "node/node_int.h"
#include "pipeline/inject.h"
#include "port/port.h"
#include "tables/circuit_table.h"
#include "tables/mac_table.h"
#include "tables/service_table.h"
#include "worker/stats.h"

/* ---- circuits ----------------------------------------------------------------- */

/* Each circuit's site as configured; services hold a copy. */
static struct e3_site circ_site[E3_MAX_CIRCUITS];
/* Each circuit's announce value, and the MACs announced into it. */
static uint32_t circ_announce[E3_MAX_CIRCUITS];
static uint64_t circ_announced[E3_MAX_CIRCUITS];

/* ---- announcements ----------------------------------------------------------- */
/* One broadcast per MAC, with that MAC as source, tagged as the circuit:
 * a RARP request (ethertype 0x8035) for itself, the frame hypervisors
 * send to announce a moved VM, which every switch learns from and no
 * host answers. */
#define RARP_LEN 28

struct announce {
	uint32_t circuit;
	struct e3_circuit c;
	struct rte_mbuf *m[64];
	unsigned n;
	uint64_t sent;
};

static void announce_flush(struct announce *a)
{
	a->sent += e3_inject(a->c.port, a->m, a->n);
	a->n = 0;
}

static void announce_mac(const struct e3_mac_info *mi, void *arg)
{
	struct announce *a = arg;

	if (!mi->remote && mi->circuit == a->circuit)
		return;                  /* the site's own */
	struct rte_mbuf *m = rte_pktmbuf_alloc(e3.pool);
	const bool tag = a->c.vlan != E3_VLAN_UNTAGGED;
	const uint16_t len = RTE_MAX(RTE_ETHER_HDR_LEN + 4 * tag + RARP_LEN, RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN);
	uint8_t *h = m ? (uint8_t *)rte_pktmbuf_append(m, len) : NULL;

	if (h == NULL) {
		rte_pktmbuf_free(m);
		return;
	}
	memset(h, 0, len);
	memset(h, 0xff, RTE_ETHER_ADDR_LEN);
	memcpy(h + 6, mi->mac, RTE_ETHER_ADDR_LEN);
	uint8_t *p = h + 12;

	if (tag) {
		uint16_t tpid = rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN), tci = rte_cpu_to_be_16(a->c.vlan);

		memcpy(p, &tpid, 2);
		memcpy(p + 2, &tci, 2);
		p += 4;
	}
	static const uint8_t rarp[8] = { 0x80, 0x35, 0x00, 0x01, 0x08, 0x00, 6, 4 };

	memcpy(p, rarp, sizeof(rarp));   /* type, htype 1, ptype IPv4, hlen, plen */
	p[9] = 3;                         /* op: reverse request */
	memcpy(p + 10, mi->mac, 6);       /* sender MAC; IP 0 */
	memcpy(p + 20, mi->mac, 6);       /* target MAC; IP 0 */
	a->m[a->n++] = m;
	if (a->n == RTE_DIM(a->m))
		announce_flush(a);
}

/* Announce into circuit id every MAC its service knows elsewhere. */
static void announce(uint32_t id)
{
	struct announce a = { .circuit = id, .c = e3_circuit_get(id) };

	e3_mac_drain();   /* what the workers learned up to now */
	e3_mac_walk(a.c.service, announce_mac, &a);
	announce_flush(&a);
	circ_announced[id] += a.sent;
}

/* Republish service id with circuit added or replaced (with its BUM
 * site), or removed (site == NULL). */
static int service_set_circuit(uint32_t id, uint32_t circuit, const struct e3_site *site)
{
	const struct e3_service *s = e3_service_get(id);
	struct e3_service *ns = e3_service_with_circuit(s, circuit, site);

	if (ns == NULL)
		return -1;
	e3_service_publish(id, ns);
	return 0;
}

static bool site_equal(const struct e3_site *a, const struct e3_site *b)
{
	return a->non_df == b->non_df && a->floods == b->floods && a->source == b->source &&
	       a->label == b->label && a->redirect == b->redirect && a->n_peers == b->n_peers &&
	       memcmp(a->peers, b->peers, a->n_peers * sizeof(a->peers[0])) == 0;
}

int e3_node_circuit_add(const struct e3_circuit_conf *c, char *err)
{
	if (c->id >= E3_MAX_CIRCUITS)
		return E3_ERR(err, E3_EINVAL, "id: must be < %u", E3_MAX_CIRCUITS);
	if (strnlen(c->port, sizeof(c->port)) == sizeof(c->port))
		return E3_ERR(err, E3_EINVAL, "port: too long");
	if (c->vlan != E3_VLAN_UNTAGGED && (c->vlan < 1 || c->vlan > 4094))
		return E3_ERR(err, E3_EINVAL, "vlan: must be 1..4094 or untagged");
	for (unsigned k = 0; k < E3_STORM_MAX; k++)
		if (c->storm.pps[k] > E3_STORM_PPS_MAX)
			return E3_ERR(err, E3_EINVAL, "storm limits: at most %u frames per second", E3_STORM_PPS_MAX);
	const struct e3_port *p = e3_node_port_by_name(c->port);

	if (p == NULL)
		return E3_ERR(err, E3_ENOENT, "port %s not found", c->port);
	if (p->kind != E3_PORT_CUSTOMER)
		return E3_ERR(err, E3_EINVAL, "port: %s is not a customer port", c->port);
	const struct e3_service *s = e3_service_get(c->service);

	if (s == NULL)
		return E3_ERR(err, E3_ENOENT, "service %u not found", c->service);
	uint32_t holder = e3_circuit_lookup(p->port_id, c->vlan);

	if (holder != E3_NONE && holder != c->id)
		return E3_ERR(err, E3_EEXIST, "port %s vlan %u is circuit %u already", c->port, c->vlan, holder);
	struct e3_circuit old = e3_circuit_get(c->id);
	bool existed = old.port != E3_CIRCUIT_NOPORT;

	if (c->site.n_peers > E3_MAX_PEERS)
		return E3_ERR(err, E3_EINVAL, "peers: at most %u", E3_MAX_PEERS);
	if (c->site.label != 0 && (c->site.label < E3_LABEL_MIN || c->site.label >= E3_LABEL_SPACE))
		return E3_ERR(err, E3_EINVAL, "segment_label: must be 0 or %u..%u", E3_LABEL_MIN,
			      E3_LABEL_SPACE - 1);
	if (c->site.source >= E3_MAX_REMOTES)
		return E3_ERR(err, E3_EINVAL, "segment_source: must be < %u", E3_MAX_REMOTES);
	if (c->site.redirect != 0 && !e3_node_nhlfe_exists(c->site.redirect))
		return E3_ERR(err, E3_ENOENT, "redirect: nhlfe %u not found", c->site.redirect);
	if (e3_node_refs_init() != 0)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	bool same_site = existed && site_equal(&circ_site[c->id], &c->site);

	if (existed && old.port == p->port_id && old.vlan == c->vlan && old.service == c->service &&
	    e3_mac_circ_stats(c->id)->limit == c->mac_limit && same_site && circ_announce[c->id] == c->announce &&
	    memcmp(&e3_circuit_storm[c->id], &c->storm, sizeof(c->storm)) == 0)
		return e3_node_ok(false);
	bool joins = !existed || old.service != c->service;

	if (joins && s->n_circuits >= e3_node_service_max_circuits(s->type, s->nhlfe))
		return E3_ERR(err, E3_ENOSPC, "service %u already has its %u circuits", c->service, s->n_circuits);
	if ((joins || !same_site) && service_set_circuit(c->service, c->id, &c->site) != 0)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	/* The site's MACs that this leaf learned behind the fabric while it did
	 * not reach the site itself are the site's again, on this circuit. */
	if (c->site.source != 0 && circ_site[c->id].source != c->site.source)
		e3_mac_flush(c->service, E3_MAC_REMOTE | c->site.source);
	if (c->site.redirect)
		e3_node_nhlfe_refs[c->site.redirect]++;
	if (existed && circ_site[c->id].redirect)
		e3_node_nhlfe_refs[circ_site[c->id].redirect]--;
	circ_site[c->id] = c->site;
	e3_mac_circuit_limit(c->id, c->mac_limit);
	e3_circuit_storm_set(c->id, &c->storm);
	e3_circuit_set(c->id, (struct e3_circuit){ p->port_id, c->vlan, c->service });
	e3_node_port_refs[p->port_id]++;
	if (existed) {
		e3_node_port_refs[old.port]--;
		if (joins) {
			service_set_circuit(old.service, c->id, NULL);
			e3_mac_flush(old.service, c->id);
		}
	} else {
		e3_stats_reset_circ(c->id);
		circ_announced[c->id] = 0;
	}
	if (circ_announce[c->id] != c->announce) {
		circ_announce[c->id] = c->announce;
		if (c->announce != 0)
			announce(c->id);
	}
	return e3_node_ok(true);
}

int e3_node_circuit_del(uint32_t id, char *err)
{
	struct e3_circuit c = e3_circuit_get(id);

	if (c.port == E3_CIRCUIT_NOPORT)
		return E3_ERR(err, E3_ENOENT, "circuit %u not found", id);
	e3_circuit_clear(id);
	service_set_circuit(c.service, id, NULL);
	if (circ_site[id].redirect)
		e3_node_nhlfe_refs[circ_site[id].redirect]--;
	circ_site[id] = (struct e3_site){ 0 };
	circ_announce[id] = 0;
	e3_mac_flush(c.service, id);
	e3_mac_circuit_limit(id, 0);
	e3_node_port_refs[c.port]--;
	return e3_node_ok(true);
}

void e3_node_circuit_walk(e3_circuit_walk_fn fn, void *arg)
{
	for (uint32_t id = 0; id < E3_MAX_CIRCUITS; id++) {
		struct e3_circuit c = e3_circuit_get(id);

		if (c.port == E3_CIRCUIT_NOPORT)
			continue;
		struct e3_circ_ctr ctr;
		const struct e3_mac_circ_stats *ms = e3_mac_circ_stats(id);
		struct e3_circuit_info info = {
			.conf = { .id = id, .vlan = c.vlan, .service = c.service, .mac_limit = ms->limit,
				  .storm = e3_circuit_storm[id], .site = circ_site[id], .announce = circ_announce[id] },
			.macs = ms->n_macs, .limit_hits = ms->limit_hits, .announced = circ_announced[id],
		};
		const struct e3_port *p = e3_port_tbl[c.port];

		if (p != NULL)
			snprintf(info.conf.port, sizeof(info.conf.port), "%s", p->conf.name);
		e3_stats_circ(id, &ctr);
		info.rx_pkts = ctr.rx_pkts;
		info.rx_bytes = ctr.rx_bytes;
		info.tx_pkts = ctr.tx_pkts;
		info.tx_bytes = ctr.tx_bytes;
		fn(&info, arg);
	}
}
