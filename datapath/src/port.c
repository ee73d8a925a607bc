/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include "circuit_table.h"
#include "dp.h"
#include "port.h"
#include "worker.h"

#define NB_RXD 512
#define NB_TXD 512

struct e3_port *e3_port_tbl[RTE_MAX_ETHPORTS];

void e3_port_conf_defaults(struct e3_port_conf *c)
{
	if (c->mtu == 0)
		c->mtu = c->kind == E3_PORT_FABRIC ? 2000 : 1500;
	if (c->rx_queues == 0)
		c->rx_queues = 1;
	for (unsigned q = c->rx_queues; q < E3_MAX_QUEUES; q++)
		c->worker[q] = -1;
}

/* The ethdev a devargs string created: its name is the part before ','. */
static int find_port(const char *devargs, uint16_t *pid)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	size_t n = strcspn(devargs, ",");

	snprintf(name, sizeof(name), "%.*s", (int)n, devargs);
	if (rte_eth_dev_get_port_by_name(name, pid) == 0)
		return 0;
	RTE_ETH_FOREACH_MATCHING_DEV(*pid, devargs, &(struct rte_dev_iterator){0})
		return 0;
	return -1;
}

static void detach(uint16_t pid, bool started)
{
	struct rte_eth_dev_info di;
	struct rte_device *dev = NULL;

	if (rte_eth_dev_info_get(pid, &di) == 0)
		dev = di.device;
	if (started)
		rte_eth_dev_stop(pid);
	rte_eth_dev_close(pid);
	if (dev != NULL)
		rte_dev_remove(dev);
}

static bool mtu_fits(const struct rte_eth_dev_info *di, uint16_t mtu)
{
	return mtu >= di->min_mtu && mtu <= di->max_mtu &&
	       (uint32_t)mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN <= di->max_rx_pktlen;
}

static void link_update(struct e3_port *p)
{
	struct rte_eth_link l;

	if (rte_eth_link_get_nowait(p->port_id, &l) != 0)
		return;
	__atomic_store_n(&p->link_up, l.link_status == RTE_ETH_LINK_UP, __ATOMIC_RELAXED);
	p->speed_mbps = l.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ? 0 : l.link_speed;
}

int e3_port_open(const struct e3_port_conf *conf, struct e3_port **out, char *err)
{
	struct e3_port_conf c = *conf;
	uint16_t pid;
	int rc;

	e3_port_conf_defaults(&c);
	rc = rte_dev_probe(c.devargs);
	if (rc == -EEXIST)
		return E3_ERR(err, E3_EEXIST, "device %s is already attached", c.devargs);
	if (rc < 0)
		return E3_ERR(err, E3_EIO, "probe %s: %s", c.devargs, rte_strerror(-rc));
	if (find_port(c.devargs, &pid) != 0) {
		/* A bus device without an ethdev (or a naming we did not guess). */
		return E3_ERR(err, E3_EIO, "probe %s: no ethernet device appeared", c.devargs);
	}
	struct rte_eth_dev_info di;

	rc = rte_eth_dev_info_get(pid, &di);
	if (rc != 0) {
		detach(pid, false);
		return E3_ERR(err, E3_EIO, "%s: device info: %s", c.name, rte_strerror(-rc));
	}
	if (c.rx_queues > di.max_rx_queues) {
		detach(pid, false);
		return E3_ERR(err, E3_EINVAL, "rx_queues: %s has at most %u rx queues",
			      c.devargs, di.max_rx_queues);
	}
	struct e3_port *p = calloc(1, sizeof(*p));

	if (p == NULL) {
		detach(pid, false);
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	}
	p->port_id = pid;
	p->kind = c.kind;
	p->mtu = c.mtu;
	p->n_rxq = c.rx_queues;
	p->n_txq = RTE_MIN(e3.n_workers, di.max_tx_queues);
	p->tx_shared = p->n_txq < e3.n_workers;

	struct rte_eth_conf ec = { 0 };
	const char *what = "configure";

	rc = rte_eth_dev_configure(pid, p->n_rxq, p->n_txq, &ec);
	uint16_t nb_rxd = NB_RXD, nb_txd = NB_TXD;

	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(pid, &nb_rxd, &nb_txd);
	for (uint16_t q = 0; rc == 0 && q < p->n_rxq; q++) {
		what = "rx queue setup";
		rc = rte_eth_rx_queue_setup(pid, q, nb_rxd, rte_eth_dev_socket_id(pid), NULL, e3.pool);
	}
	for (uint16_t q = 0; rc == 0 && q < p->n_txq; q++) {
		what = "tx queue setup";
		rc = rte_eth_tx_queue_setup(pid, q, nb_txd, rte_eth_dev_socket_id(pid), NULL);
	}
	if (rc != 0) {
		free(p);
		detach(pid, false);
		return E3_ERR(err, E3_EIO, "%s: %s: %s", c.name, what, rte_strerror(-rc));
	}
	/* Best effort: the MTU check is ours (in software), and many virtual
	 * devices cannot change it. */
	if (mtu_fits(&di, c.mtu))
		(void)rte_eth_dev_set_mtu(pid, c.mtu);
	static const struct rte_ether_addr zero;

	if (memcmp(c.mac, &zero, 6) != 0) {
		memcpy(&p->mac, c.mac, 6);
		(void)rte_eth_dev_default_mac_addr_set(pid, &p->mac);
	} else {
		rte_eth_macaddr_get(pid, &p->mac);
		/* Some virtual devices (net_ring) have none: make up a locally
		 * administered one, or fabric neighbours could not address us. */
		if (rte_is_zero_ether_addr(&p->mac))
			rte_eth_random_addr(p->mac.addr_bytes);
		memcpy(c.mac, &p->mac, 6);
	}
	/* Customer ports take every frame; fabric ports check the MAC in
	 * software anyway (and count what is not for us). */
	(void)rte_eth_promiscuous_enable(pid);
	rc = rte_eth_dev_start(pid);
	if (rc != 0) {
		free(p);
		detach(pid, false);
		return E3_ERR(err, E3_EIO, "%s: start: %s", c.name, rte_strerror(-rc));
	}
	if (c.kind == E3_PORT_CUSTOMER && e3_circuit_port_attach(pid) != 0) {
		free(p);
		detach(pid, true);
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	}
	p->conf = c;
	link_update(p);
	E3_RCU_SET(e3_port_tbl[pid], p);
	*out = p;
	return 0;
}

int e3_port_update(struct e3_port *p, const struct e3_port_conf *conf, struct e3_port **out, char *err)
{
	struct e3_port_conf c = *conf;
	struct e3_port *np = malloc(sizeof(*np));

	e3_port_conf_defaults(&c);
	if (np == NULL)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	*np = *p;
	static const uint8_t zero[6];

	if (memcmp(c.mac, zero, 6) == 0) {
		memcpy(c.mac, p->conf.mac, 6);  /* keep the device's */
	} else if (memcmp(c.mac, p->conf.mac, 6) != 0) {
		memcpy(&np->mac, c.mac, 6);
		(void)rte_eth_dev_default_mac_addr_set(p->port_id, &np->mac);
	}
	struct rte_eth_dev_info di;

	if (c.mtu != p->mtu && rte_eth_dev_info_get(p->port_id, &di) == 0 && mtu_fits(&di, c.mtu))
		(void)rte_eth_dev_set_mtu(p->port_id, c.mtu);
	np->mtu = c.mtu;
	np->conf = c;
	E3_RCU_SET(e3_port_tbl[p->port_id], np);
	e3_rcu_free(p);
	*out = np;
	return 0;
}

void e3_port_close(struct e3_port *p)
{
	uint16_t pid = p->port_id;

	E3_RCU_SET(e3_port_tbl[pid], NULL);
	e3_workers_assign();
	/* After this no worker polls the device or holds frames for it. */
	e3_rcu_sync();
	if (p->kind == E3_PORT_CUSTOMER)
		e3_circuit_port_detach(pid);
	detach(pid, true);
	free(p);
}

void e3_port_poll_links(void)
{
	for (uint16_t i = 0; i < RTE_MAX_ETHPORTS; i++)
		if (e3_port_tbl[i] != NULL)
			link_update(e3_port_tbl[i]);
}
