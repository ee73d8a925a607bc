/* SPDX-License-Identifier: Apache-2.0
 *
 * circuit.c - control of the circuits (ctl.h).
 */
#include "ctl/ctl.h"
#include "ctl/ctl_int.h"
#include "port/port.h"
#include "tables/circuit_table.h"
#include "tables/mac_table.h"
#include "tables/service_table.h"
#include "worker/stats.h"

/* ---- circuits ----------------------------------------------------------------- */

/* Each circuit's BUM filter as configured; services hold a copy. */
static struct e3_site circ_site[E3_MAX_CIRCUITS];

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
	       a->label == b->label && a->n_peers == b->n_peers &&
	       memcmp(a->peers, b->peers, a->n_peers * sizeof(a->peers[0])) == 0;
}

int e3_ctl_circuit_add(const struct e3_circuit_conf *c, char *err)
{
	if (c->id >= E3_MAX_CIRCUITS)
		return E3_ERR(err, E3_EINVAL, "id: must be < %u", E3_MAX_CIRCUITS);
	if (strnlen(c->port, sizeof(c->port)) == sizeof(c->port))
		return E3_ERR(err, E3_EINVAL, "port: too long");
	if (c->vlan != E3_VLAN_UNTAGGED && (c->vlan < 1 || c->vlan > 4094))
		return E3_ERR(err, E3_EINVAL, "vlan: must be 1..4094 or untagged");
	const struct e3_port *p = e3_ctl_port_by_name(c->port);

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
	bool same_site = existed && site_equal(&circ_site[c->id], &c->site);

	if (existed && old.port == p->port_id && old.vlan == c->vlan && old.service == c->service &&
	    e3_mac_circ_stats(c->id)->limit == c->mac_limit && same_site)
		return e3_ctl_ok(false);
	bool joins = !existed || old.service != c->service;

	if (joins && s->n_circuits >= e3_ctl_service_max_circuits(s->type, s->nhlfe))
		return E3_ERR(err, E3_ENOSPC, "service %u already has its %u circuits", c->service, s->n_circuits);
	if ((joins || !same_site) && service_set_circuit(c->service, c->id, &c->site) != 0)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	circ_site[c->id] = c->site;
	e3_mac_circuit_limit(c->id, c->mac_limit);
	e3_circuit_set(c->id, (struct e3_circuit){ p->port_id, c->vlan, c->service });
	e3_ctl_port_refs[p->port_id]++;
	if (existed) {
		e3_ctl_port_refs[old.port]--;
		if (joins) {
			service_set_circuit(old.service, c->id, NULL);
			e3_mac_flush(old.service, c->id);
		}
	} else {
		e3_stats_reset_circ(c->id);
	}
	return e3_ctl_ok(true);
}

int e3_ctl_circuit_del(uint32_t id, char *err)
{
	struct e3_circuit c = e3_circuit_get(id);

	if (c.port == E3_CIRCUIT_NOPORT)
		return E3_ERR(err, E3_ENOENT, "circuit %u not found", id);
	e3_circuit_clear(id);
	service_set_circuit(c.service, id, NULL);
	circ_site[id] = (struct e3_site){ 0 };
	e3_mac_flush(c.service, id);
	e3_mac_circuit_limit(id, 0);
	e3_ctl_port_refs[c.port]--;
	return e3_ctl_ok(true);
}

void e3_ctl_circuit_walk(e3_circuit_walk_fn fn, void *arg)
{
	for (uint32_t id = 0; id < E3_MAX_CIRCUITS; id++) {
		struct e3_circuit c = e3_circuit_get(id);

		if (c.port == E3_CIRCUIT_NOPORT)
			continue;
		struct e3_circ_ctr ctr;
		const struct e3_mac_circ_stats *ms = e3_mac_circ_stats(id);
		struct e3_circuit_info info = {
			.conf = { .id = id, .vlan = c.vlan, .service = c.service, .mac_limit = ms->limit,
				  .site = circ_site[id] },
			.macs = ms->n_macs, .limit_hits = ms->limit_hits,
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
