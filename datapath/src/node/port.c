/* SPDX-License-Identifier: Apache-2.0
 *
 * port.c - control of the ports (node.h).
 */
#include <string.h>

#include <rte_ethdev.h>

#include "node/node.h"
#include "node/node_int.h"
#include "port/port.h"
#include "tables/nhlfe_table.h"
#include "worker/stats.h"
#include "worker/worker.h"

/* The controller refuses a topology that puts more than E3_MAX_PORTS ports on
 * a node: each must be a DPDK port here. */
_Static_assert(E3_MAX_PORTS <= RTE_MAX_ETHPORTS, "E3_MAX_PORTS: each port is a DPDK port");

/* ---- ports -------------------------------------------------------------- */

/* A fabric port's MAC changed: the nexthops on it carry it as source. */
static void nexthops_resource(uint16_t port_id, const struct rte_ether_addr *mac)
{
	for (uint32_t id = 0; id < E3_MAX_NEXTHOPS; id++) {
		const struct e3_nexthop *nh = e3_nexthop_tbl[id];

		if (nh == NULL || nh->port != port_id)
			continue;
		struct e3_nexthop *n = malloc(sizeof(*n));

		if (n == NULL)
			continue;
		*n = *nh;
		n->src = *mac;
		e3_nexthop_publish(id, n);
	}
}

int e3_node_port_add(const struct e3_port_conf *in, char *err)
{
	struct e3_port_conf c = *in;
	unsigned n_ports = 0;

	if (!e3_node_str_ok(c.name, sizeof(c.name)))
		return E3_ERR(err, E3_EINVAL, "name: must be 1..31 characters");
	if (!e3_node_str_ok(c.devargs, sizeof(c.devargs)))
		return E3_ERR(err, E3_EINVAL, "devargs: must be 1..255 characters");
	if (e3_node_devargs_check(c.devargs, err) != 0)
		return -E3_EINVAL;
	if (c.kind != E3_PORT_CUSTOMER && c.kind != E3_PORT_FABRIC)
		return E3_ERR(err, E3_EINVAL, "kind: must be customer or fabric");
	if (c.mtu != 0 && (c.mtu < 68 || c.mtu > 9600))
		return E3_ERR(err, E3_EINVAL, "mtu: must be 68..9600");
	if (c.rx_queues > E3_MAX_QUEUES)
		return E3_ERR(err, E3_EINVAL, "rx_queues: must be 1..%u", E3_MAX_QUEUES);
	if (!e3_node_is_zero_mac(c.mac) && (c.mac[0] & 1))
		return E3_ERR(err, E3_EINVAL, "mac: must be a unicast address");
	e3_port_conf_defaults(&c);
	for (unsigned q = 0; q < c.rx_queues; q++)
		if (c.worker[q] < -1 || c.worker[q] >= (int)e3.n_workers)
			return E3_ERR(err, E3_EINVAL, "workers[%u]: must be -1..%u", q, e3.n_workers - 1);

	struct e3_port *p = e3_node_port_by_name(c.name);
	size_t dn = strcspn(c.devargs, ",");

	for (uint16_t i = 0; i < RTE_MAX_ETHPORTS; i++) {
		const struct e3_port *o = e3_port_tbl[i];

		if (o == NULL)
			continue;
		n_ports++;
		if (o != p && strncmp(o->conf.devargs, c.devargs, dn) == 0 &&
		    strcspn(o->conf.devargs, ",") == dn)
			return E3_ERR(err, E3_EEXIST, "devargs: device %.*s is port %s already",
				      (int)dn, c.devargs, o->conf.name);
	}
	if (p == NULL) {
		if (n_ports >= E3_MAX_PORTS)
			return E3_ERR(err, E3_ENOSPC, "at most %u ports", E3_MAX_PORTS);
		e3_workers_auto(&c);
		int rc = e3_port_open(&c, &p, err);

		if (rc != 0)
			return rc;
		e3_stats_reset_port(p->port_id);
		e3_node_sflow_port_opened(p);
		e3_workers_assign();
		return e3_node_ok(true);
	}
	/* Exists: devargs, kind and queues make the device; those need a delete. */
	if (strcmp(p->conf.devargs, c.devargs) != 0 || p->conf.kind != c.kind ||
	    p->conf.rx_queues != c.rx_queues)
		return E3_ERR(err, E3_EEXIST,
			      "port %s exists with other devargs, kind or rx_queues; delete it first", c.name);
	for (unsigned q = 0; q < c.rx_queues; q++)
		if (c.worker[q] < 0)
			c.worker[q] = p->conf.worker[q];   /* automatic = keep */
	if (e3_node_is_zero_mac(c.mac))
		memcpy(c.mac, p->conf.mac, 6);
	if (c.mtu == p->conf.mtu && memcmp(c.mac, p->conf.mac, 6) == 0 &&
	    memcmp(c.worker, p->conf.worker, sizeof(c.worker)) == 0)
		return e3_node_ok(false);
	bool mac_changed = memcmp(c.mac, p->conf.mac, 6) != 0;
	bool workers_changed = memcmp(c.worker, p->conf.worker, sizeof(c.worker)) != 0;
	int rc = e3_port_update(p, &c, &p, err);

	if (rc != 0)
		return rc;
	if (mac_changed)
		nexthops_resource(p->port_id, &p->mac);
	if (workers_changed)
		e3_workers_assign();
	return e3_node_ok(true);
}

int e3_node_port_del(const char *name, char *err)
{
	struct e3_port *p = e3_node_port_by_name(name);

	if (p == NULL)
		return E3_ERR(err, E3_ENOENT, "port %s not found", name);
	if (e3_node_port_refs[p->port_id] > 0)
		return E3_ERR(err, E3_EBUSY, "port %s is used by %u nexthops, circuits or labels",
			      name, e3_node_port_refs[p->port_id]);
	e3_port_unpublish(p);
	e3_node_sflow_port_closed(p->port_id);
	e3_workers_assign();
	e3_port_close(p);
	return e3_node_ok(true);
}

static void port_info(const struct e3_port *p, struct e3_port_info *o)
{
	struct e3_port_ctr c;

	memset(o, 0, sizeof(*o));
	o->conf = p->conf;
	o->dpdk_port_id = p->port_id;
	o->link_up = p->link_up;
	o->speed_mbps = p->speed_mbps;
	e3_stats_port(p->port_id, &c);
	o->rx_pkts = c.rx_pkts;
	o->rx_bytes = c.rx_bytes;
	o->tx_pkts = c.tx_pkts;
	o->tx_bytes = c.tx_bytes;
	o->tx_retries = c.tx_retries;
	memcpy(o->drops, c.drops, sizeof(o->drops));
	o->n_rxq = RTE_MIN(p->n_rxq, (uint16_t)RTE_MIN(E3_MAX_QUEUES, RTE_ETHDEV_QUEUE_STAT_CNTRS));

	struct rte_eth_stats st;

	if (rte_eth_stats_get(p->port_id, &st) == 0)
		for (unsigned q = 0; q < o->n_rxq; q++)
			o->rxq_pkts[q] = st.q_ipackets[q];
}

int e3_node_port_get(const char *name, struct e3_port_info *out, char *err)
{
	const struct e3_port *p = e3_node_port_by_name(name);

	if (p == NULL)
		return E3_ERR(err, E3_ENOENT, "port %s not found", name);
	port_info(p, out);
	return 0;
}

void e3_node_port_walk(e3_port_walk_fn fn, void *arg)
{
	struct e3_port_info info;

	for (uint16_t i = 0; i < RTE_MAX_ETHPORTS; i++)
		if (e3_port_tbl[i] != NULL) {
			port_info(e3_port_tbl[i], &info);
			fn(&info, arg);
		}
}
