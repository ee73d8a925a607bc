/* SPDX-License-Identifier: Apache-2.0
 *
 * port.h - DPDK devices attached as customer or fabric ports.
 *
 * A port object is RCU-published by DPDK port id; workers read it for the
 * kind, MTU, MAC and TX queue mapping, and poll its queues only while
 * link_up. link_up and speed_mbps are the only fields written in place, by
 * the main lcore's link poll, and only when they change.
 */
#ifndef E3_PORT_H
#define E3_PORT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <rte_build_config.h>
#include <rte_ether.h>

#include "base/defs.h"
#include "base/rcu.h"

#define E3_VHOST_TX_RETRIES 8

struct e3_port {
	uint16_t port_id;
	uint8_t kind;              /* enum e3_port_kind */
	uint8_t link_up;
	uint32_t speed_mbps;
	uint16_t mtu;
	uint16_t n_rxq;            /* polled: conf.rx_queues, or more (af_packet, below) */
	uint16_t n_txq;            /* one per worker, unless the device has fewer */
	bool tx_shared;            /* n_txq < workers: workers share queues under a lock */
	/* Extra TX bursts a flush makes while each takes some of what is left:
	 * a VM's ring (vhost-user) frees slots as its guest reads them, so a
	 * partial burst is retried, as OVS does (8), rather than dropped. */
	uint8_t tx_retries;
	int16_t rxq_worker[E3_MAX_QUEUES]; /* worker polling each rx queue */
	uint16_t n_rx_workers;     /* distinct workers among them */
	struct rte_ether_addr mac; /* our MAC on this port */
	unsigned kernel_ifindex;   /* af_packet: the kernel interface, else 0 */
	struct e3_port_conf conf;  /* as given, with the effective MAC and workers */
};

extern struct e3_port *e3_port_tbl[RTE_MAX_ETHPORTS];

static inline const struct e3_port *e3_port_get(uint16_t port_id)
{
	return port_id < RTE_MAX_ETHPORTS ? E3_RCU_GET(e3_port_tbl[port_id]) : NULL;
}

/* Largest frame (without FCS) a port accepts: MTU + Ethernet header, plus
 * one VLAN tag per tag on a customer frame. */
static inline uint32_t e3_port_max_frame(const struct e3_port *p, unsigned n_tags)
{
	return p->mtu + RTE_ETHER_HDR_LEN + 4u * n_tags;
}

/* af_packet (DPDK 22.11) names a port's PACKET_FANOUT group (pid XOR the
 * interface's index, 16 bits), and the kernel keeps one name per network
 * namespace: a socket joining another interface's group fails, one joining
 * the same interface's shares its frames. Would the groups of process b's
 * ports (ours, opened by b) meet those of process a's? */
bool e3_port_fanout_clash(pid_t a, pid_t b);

/* Main lcore: add what the kernel dropped on af_packet ports' receive
 * rings since the last call to their rx_ring_full counters. */
void e3_port_poll_kernel(void);

/* Main lcore only. Probe, configure, start and publish a port; the poll
 * lists are rebuilt by the caller (e3_workers_assign). */
int e3_port_open(const struct e3_port_conf *c, struct e3_port **out, char *err);
/* Change the parameters that need no re-probe (MTU, MAC, workers). */
int e3_port_update(struct e3_port *p, const struct e3_port_conf *c, struct e3_port **out, char *err);
/* Removing a port is two steps around the caller's rebuild of the poll
 * lists (e3_workers_assign): unpublish takes it out of the table, then close
 * waits a grace period (no worker polls it or holds frames for it any
 * more), stops, closes and removes the device. */
void e3_port_unpublish(struct e3_port *p);
void e3_port_close(struct e3_port *p);
/* Frames the kernel dropped on the port's af_packet rings, as
 * e3_port_poll_kernel last read them. */
uint64_t e3_port_ring_drops(uint16_t port);
void e3_port_poll_links(void);
/* Main lcore, workers stopped: drop every frame waiting in the ports' rx
 * queues (a handover's new process: frames its predecessor forwarded).
 * Returns the frames dropped. */
unsigned e3_port_discard_rx(void);
/* Forget what the kernel counted as dropped on the af_packet rings so far
 * (frames a handover's new process did not read in time). */
void e3_port_forget_drops(void);
/* Fill the conf fields left to defaults (MTU, rx queues, MAC). */
void e3_port_conf_defaults(struct e3_port_conf *c);

#endif
