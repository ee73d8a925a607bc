/* SPDX-License-Identifier: Apache-2.0
 *
 * nexthop.c - control of the nexthops (node.h).
 */
#include <string.h>

#include "base/dp.h"
#include "node/node.h"
#include "pipeline/oam.h"
#include "node/node_int.h"
#include "port/port.h"
#include "tables/nhlfe_table.h"

static struct e3_nexthop_conf nh_conf[E3_MAX_NEXTHOPS];

/* ---- nexthops ----------------------------------------------------------- */

int e3_node_nexthop_add(const struct e3_nexthop_conf *c, char *err)
{
	if (c->id >= E3_MAX_NEXTHOPS)
		return E3_ERR(err, E3_EINVAL, "id: must be < %u", E3_MAX_NEXTHOPS);
	if (strnlen(c->port, sizeof(c->port)) == sizeof(c->port))
		return E3_ERR(err, E3_EINVAL, "port: too long");
	const struct e3_port *p = e3_node_port_by_name(c->port);

	if (p == NULL)
		return E3_ERR(err, E3_ENOENT, "port %s not found", c->port);
	if (p->kind != E3_PORT_FABRIC)
		return E3_ERR(err, E3_EINVAL, "port: %s is not a fabric port", c->port);
	if (e3_node_is_zero_mac(c->mac) || (c->mac[0] & 1))
		return E3_ERR(err, E3_EINVAL, "mac: must be a unicast address");
	if (e3_node_nh_used[c->id] && strcmp(nh_conf[c->id].port, c->port) == 0 &&
	    memcmp(nh_conf[c->id].mac, c->mac, 6) == 0)
		return e3_node_ok(false);
	struct e3_nexthop *nh = malloc(sizeof(*nh));

	if (nh == NULL)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	nh->port = p->port_id;
	memcpy(&nh->dst, c->mac, 6);
	nh->src = p->mac;
	e3_node_port_refs[p->port_id]++;
	if (e3_node_nh_used[c->id])
		e3_node_port_refs[e3_nexthop_tbl[c->id]->port]--;
	e3_nexthop_publish(c->id, nh);
	nh_conf[c->id] = *c;
	e3_node_nh_used[c->id] = true;
	e3_oam_ports_rebuild();   /* a BFD session may follow it to another port */
	return e3_node_ok(true);
}

int e3_node_nexthop_del(uint32_t id, char *err)
{
	if (id >= E3_MAX_NEXTHOPS || !e3_node_nh_used[id])
		return E3_ERR(err, E3_ENOENT, "nexthop %u not found", id);
	if (e3_node_nh_refs[id] > 0)
		return E3_ERR(err, E3_EBUSY, "nexthop %u is used by %u nhlfes or BFD sessions", id,
			      e3_node_nh_refs[id]);
	e3_node_port_refs[e3_nexthop_tbl[id]->port]--;
	e3_nexthop_publish(id, NULL);
	e3_node_nh_used[id] = false;
	return e3_node_ok(true);
}

void e3_node_nexthop_walk(e3_nexthop_walk_fn fn, void *arg)
{
	for (uint32_t id = 0; id < E3_MAX_NEXTHOPS; id++)
		if (e3_node_nh_used[id])
			fn(&nh_conf[id], arg);
}

/* What BFD sessions (bfd.c) need of the nexthops. */
bool e3_node_nexthop_used(uint32_t id)
{
	return id < E3_MAX_NEXTHOPS && e3_node_nh_used[id];
}

void e3_node_nexthop_ref(uint32_t id, int d)
{
	e3_node_nh_refs[id] += d;
}
