/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dirent.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include "tables/circuit_table.h"
#include "base/dp.h"
#include "port/port.h"
#include "base/stats.h"

#define NB_RXD 512
#define NB_TXD 512

struct e3_port *e3_port_tbl[RTE_MAX_ETHPORTS];

void e3_port_conf_defaults(struct e3_port_conf *c)
{
	if (c->mtu == 0)
		c->mtu = c->kind == E3_PORT_FABRIC ? E3_DEFAULT_PORT_MTU_FABRIC : E3_DEFAULT_PORT_MTU_CUSTOMER;
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

/* af_packet: one socket per queue pair, all in one PACKET_FANOUT group, and
 * ring frames of framesz bytes (default 2048) of which the kernel keeps 66
 * for its header: longer frames would be cut silently. */
#define AFP_FRAMESZ 4096
#define AFP_OVERHEAD 66

static bool is_vhost(const char *devargs)
{
	return strncmp(devargs, "net_vhost", 9) == 0 || strncmp(devargs, "eth_vhost", 9) == 0;
}

static bool is_af_packet(const char *devargs)
{
	return strncmp(devargs, "net_af_packet", 13) == 0 || strncmp(devargs, "eth_af_packet", 13) == 0;
}

/* The devargs to probe with. af_packet: max(rx_queues, workers) queue
 * pairs, so that every worker has its own TX queue (else they share one
 * under a lock), and ring frames as large as an mbuf takes; unless given. */
static void probe_args(const struct e3_port_conf *c, char *out, size_t size)
{
	unsigned n = RTE_MIN(RTE_MAX((unsigned)c->rx_queues, (unsigned)e3.n_workers),
			     (unsigned)E3_MAX_QUEUES);
	int k = snprintf(out, size, "%s", c->devargs);

	if (!is_af_packet(c->devargs))
		return;
	if (strstr(c->devargs, "qpairs=") == NULL && n > 1)
		k += snprintf(out + k, size - (size_t)k, ",qpairs=%u", n);
	if (strstr(c->devargs, "framesz=") == NULL && strstr(c->devargs, "blocksz=") == NULL)
		snprintf(out + k, size - (size_t)k, ",blocksz=%u,framesz=%u", AFP_FRAMESZ, AFP_FRAMESZ);
}

/* Refuse an MTU whose frames (with two tags on a customer port) the device
 * would cut (af_packet's limit is framesz - 66, whatever its dev_info says),
 * or that do not fit one of our mbufs. */
static int check_mtu(const struct e3_port_conf *c, char *err)
{
	unsigned tags = c->kind == E3_PORT_CUSTOMER ? 8 : 0;
	unsigned frame = (unsigned)c->mtu + RTE_ETHER_HDR_LEN + tags;

	if (is_af_packet(c->devargs)) {
		const char *f = strstr(c->devargs, "framesz=");
		unsigned framesz = f != NULL ? (unsigned)atoi(f + 8) : AFP_FRAMESZ;
		unsigned limit = framesz > AFP_OVERHEAD ? framesz - AFP_OVERHEAD : 0;

		if (framesz > AFP_FRAMESZ)
			return E3_ERR(err, E3_EINVAL, "%s: framesz %u: at most %u (the mbufs of af_packet ports)",
				      c->name, framesz, AFP_FRAMESZ);
		if (frame > limit)
			return E3_ERR(err, E3_EIO, "mtu %u: %s carries frames up to %u bytes (framesz %u - %u): mtu at most %d",
				      c->mtu, c->name, limit, framesz, AFP_OVERHEAD,
				      (int)limit - RTE_ETHER_HDR_LEN - (int)tags);
		return 0;
	}
	if (frame > e3.mbuf_data)
		return E3_ERR(err, E3_EINVAL, "mtu %u: %s's frames of up to %u bytes do not fit the mbufs "
			      "(%u bytes of data, e3-vswitchd --mbuf-data): mtu at most %d",
			      c->mtu, c->name, frame, e3.mbuf_data,
			      (int)e3.mbuf_data - RTE_ETHER_HDR_LEN - (int)tags);
	return 0;
}

/* The pool a port receives into. af_packet hands over its ring's frames
 * whole and cannot scatter, so its ports take mbufs of a ring frame's size,
 * from a pool of their own made with the first of them; every other port
 * takes the common pool's (--mbuf-data), which memif wants no larger than
 * its buffers. */
static struct rte_mempool *rx_pool(const struct e3_port_conf *c)
{
	if (!is_af_packet(c->devargs))
		return e3.pool;
	if (e3.afp_pool == NULL)
		e3.afp_pool = rte_pktmbuf_pool_create("e3_afp_mbufs", e3.n_mbufs, 256, 0,
						      RTE_PKTMBUF_HEADROOM + AFP_FRAMESZ, rte_socket_id());
	return e3.afp_pool;
}

/* Workers of the rx queues: conf's, then the extra af_packet queues spread
 * over the workers from queue 0's on. */
static void map_queues(struct e3_port *p, const struct e3_port_conf *c)
{
	uint64_t workers = 0;

	for (unsigned q = 0; q < p->n_rxq; q++) {
		p->rxq_worker[q] = q < c->rx_queues ? c->worker[q] :
				   (int16_t)((c->worker[0] + q) % e3.n_workers);
		workers |= 1ull << p->rxq_worker[q];
	}
	p->n_rx_workers = (uint16_t)RTE_MAX(__builtin_popcountll(workers), 1);
}

static bool mtu_fits(const struct rte_eth_dev_info *di, uint16_t mtu)
{
	return mtu >= di->min_mtu && mtu <= di->max_mtu &&
	       (uint32_t)mtu + RTE_ETHER_HDR_LEN + RTE_ETHER_CRC_LEN <= di->max_rx_pktlen;
}

/* An af_packet port's kernel interface name (from iface=), or false. */
static bool afp_iface(const char *devargs, char name[IFNAMSIZ])
{
	const char *at = strstr(devargs, "iface=");

	if (!is_af_packet(devargs) || at == NULL)
		return false;
	at += 6;
	snprintf(name, IFNAMSIZ, "%.*s", (int)strcspn(at, ","), at);
	return true;
}

/* af_packet's link is its kernel interface's: the PMD says "up" from start
 * to stop whatever the veth does. -1 when it cannot be told. */
static int afp_link(const struct e3_port *p)
{
	struct ifreq ifr = { 0 };
	int s, rc = -1;

	if (!afp_iface(p->conf.devargs, ifr.ifr_name))
		return -1;
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0)
		return -1;
	if (ioctl(s, SIOCGIFFLAGS, &ifr) == 0)
		rc = (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING);
	close(s);
	return rc;
}

static void link_update(struct e3_port *p)
{
	struct rte_eth_link l;

	if (rte_eth_link_get_nowait(p->port_id, &l) != 0)
		return;
	bool up = l.link_status == RTE_ETH_LINK_UP;

	if (up && is_af_packet(p->conf.devargs))
		up = afp_link(p) != 0;
	uint32_t speed = l.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN ? 0 : l.link_speed;

	/* Written only when they change: the workers read the line every poll. */
	if (up != p->link_up)
		__atomic_store_n(&p->link_up, up, __ATOMIC_RELEASE); /* workers poll it then */
	if (speed != p->speed_mbps)
		p->speed_mbps = speed;
}

int e3_port_open(const struct e3_port_conf *conf, struct e3_port **out, char *err)
{
	struct e3_port_conf c = *conf;
	uint16_t pid;
	int rc;

	char args[sizeof(c.devargs) + 48];

	e3_port_conf_defaults(&c);
	rc = check_mtu(&c, err);
	if (rc != 0)
		return rc;
	probe_args(&c, args, sizeof(args));
	rc = rte_dev_probe(args);
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
	char ifname[IFNAMSIZ];

	if (afp_iface(c.devargs, ifname))
		p->kernel_ifindex = if_nametoindex(ifname);
	p->kind = c.kind;
	p->mtu = c.mtu;
	/* Every af_packet socket of the fanout group receives: poll them all,
	 * or the flows hashed to an unpolled one are lost. */
	p->n_rxq = is_af_packet(c.devargs) ? RTE_MIN(di.max_rx_queues, E3_MAX_QUEUES) : c.rx_queues;
	p->n_rxq = RTE_MAX(p->n_rxq, c.rx_queues);
	map_queues(p, &c);
	/* One TX queue per worker, so no worker waits for another. A device
	 * with fewer (max_tx_queues) falls back to shared queues under a
	 * spinlock (stage_tx.c), the one lock on the forwarding path. */
	p->n_txq = RTE_MIN(e3.n_workers, di.max_tx_queues);
	p->tx_shared = p->n_txq < e3.n_workers;
	p->tx_retries = is_vhost(c.devargs) ? E3_VHOST_TX_RETRIES : 0;

	struct rte_eth_conf ec = { 0 };
	const char *what = "configure";

	rc = rte_eth_dev_configure(pid, p->n_rxq, p->n_txq, &ec);
	uint16_t nb_rxd = NB_RXD, nb_txd = NB_TXD;

	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(pid, &nb_rxd, &nb_txd);
	for (uint16_t q = 0; rc == 0 && q < p->n_rxq; q++) {
		what = "rx queue setup";
		struct rte_mempool *pool = rx_pool(&c);

		rc = pool == NULL ? -ENOMEM :
		     rte_eth_rx_queue_setup(pid, q, nb_rxd, rte_eth_dev_socket_id(pid), NULL, pool);
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

	e3_port_conf_defaults(&c);
	int rc = check_mtu(&c, err);

	if (rc != 0)
		return rc;
	struct e3_port *np = malloc(sizeof(*np));

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
	map_queues(np, &c);
	E3_RCU_SET(e3_port_tbl[p->port_id], np);
	e3_rcu_free(p);
	*out = np;
	return 0;
}

void e3_port_unpublish(struct e3_port *p)
{
	E3_RCU_SET(e3_port_tbl[p->port_id], NULL);
}

void e3_port_close(struct e3_port *p)
{
	uint16_t pid = p->port_id;

	/* After this no worker polls the device or holds frames for it. */
	e3_rcu_sync();
	if (p->kind == E3_PORT_CUSTOMER)
		e3_circuit_port_detach(pid);
	detach(pid, true);
	free(p);
}

bool e3_port_fanout_clash(pid_t a, pid_t b)
{
	for (uint16_t i = 0; i < RTE_MAX_ETHPORTS; i++) {
		const struct e3_port *p = e3_port_tbl[i];

		if (p == NULL || p->kernel_ifindex == 0)
			continue;
		for (uint16_t j = 0; j < RTE_MAX_ETHPORTS; j++) {
			const struct e3_port *q = e3_port_tbl[j];

			if (q != NULL && q->kernel_ifindex != 0 &&
			    (((unsigned)a ^ p->kernel_ifindex) & 0xffff) == (((unsigned)b ^ q->kernel_ifindex) & 0xffff))
				return true;
		}
	}
	return false;
}

/* The PMD (DPDK 22.11) does not read its sockets' PACKET_STATISTICS, so
 * we do: every AF_PACKET socket of this process is one of an af_packet
 * port's queues, told apart by the interface it is bound to. Reading the
 * statistics resets them, so each drop is counted once. */
static uint64_t ring_drops[RTE_MAX_ETHPORTS];

uint64_t e3_port_ring_drops(uint16_t port)
{
	return __atomic_load_n(&ring_drops[port % RTE_MAX_ETHPORTS], __ATOMIC_RELAXED);
}

void e3_port_poll_kernel(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		int fd = atoi(de->d_name);
		struct sockaddr_ll sll;
		socklen_t len = sizeof(sll);
		struct stat sb;

		if (fd <= 2 || fd == dirfd(d) || fstat(fd, &sb) != 0 || !S_ISSOCK(sb.st_mode) ||
		    getsockname(fd, (struct sockaddr *)&sll, &len) != 0 || sll.sll_family != AF_PACKET)
			continue;
		for (uint16_t i = 0; i < RTE_MAX_ETHPORTS; i++) {
			const struct e3_port *p = e3_port_tbl[i];
			struct tpacket_stats ts;
			socklen_t tl = sizeof(ts);

			if (p == NULL || p->kernel_ifindex == 0 || (int)p->kernel_ifindex != sll.sll_ifindex)
				continue;
			if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &ts, &tl) == 0 && ts.tp_drops > 0)
				__atomic_fetch_add(&ring_drops[i], ts.tp_drops, __ATOMIC_RELAXED);
			break;
		}
	}
	closedir(d);
}

unsigned e3_port_discard_rx(void)
{
	struct rte_mbuf *pkts[64];
	unsigned n = 0;

	for (uint16_t i = 0; i < RTE_MAX_ETHPORTS; i++) {
		const struct e3_port *p = e3_port_tbl[i];

		for (uint16_t q = 0; p != NULL && q < p->n_rxq; q++) {
			uint16_t k;

			while ((k = rte_eth_rx_burst(p->port_id, q, pkts, RTE_DIM(pkts))) > 0) {
				rte_pktmbuf_free_bulk(pkts, k);
				n += k;
			}
		}
	}
	return n;
}

void e3_port_forget_drops(void)
{
	e3_port_poll_kernel();
	memset(ring_drops, 0, sizeof(ring_drops));
}

void e3_port_poll_links(void)
{
	for (uint16_t i = 0; i < RTE_MAX_ETHPORTS; i++)
		if (e3_port_tbl[i] != NULL)
			link_update(e3_port_tbl[i]);
}
