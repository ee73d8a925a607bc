/* SPDX-License-Identifier: Apache-2.0
 *
 * harness.h - what the unit tests share: EAL + forwarding core set-up
 * (no hugepages, no PCI, no worker lcores: the test thread plays worker 0)
 * and frame builders.
 */
#ifndef E3_TEST_HARNESS_H
#define E3_TEST_HARNESS_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "node/node.h"
#include "unit.h"

/* EAL with --file-prefix prefix, then e3_dp_init with a MAC table of mac_size. */
int harness_init(const char *prefix, uint32_t mac_size);

/* Build a frame: Ethernet header, optional tags (vlan < 0 = none), ethertype, payload. */
struct frame {
	uint8_t b[2048];
	uint16_t len;
};
void fr_eth(struct frame *f, const char *dst, const char *src);
void fr_tag(struct frame *f, uint16_t tpid, uint8_t pcp, uint16_t vlan);
void fr_type(struct frame *f, uint16_t type);
void fr_u32(struct frame *f, uint32_t v);
void fr_bytes(struct frame *f, const void *p, uint16_t n);
void fr_pad(struct frame *f, uint16_t n, uint8_t byte);
void mac_parse(const char *s, uint8_t out[6]);

struct rte_mbuf *mk(const struct frame *f);
/* Run frames through the pipeline as if received on port (by name). */
void rx_on(const char *port, struct rte_mbuf **m, unsigned n);
void rx_frame(const char *port, const struct frame *f);
/* Frames the pipeline sent out of port (net_ring loops TX back to RX). */
unsigned tx_of(const char *port, struct rte_mbuf **out, unsigned max);
/* Drain and free everything sent; returns the count. */
unsigned tx_drain(const char *port);
uint64_t drops(const char *port, enum e3_drop d);
/* The bytes of a frame, whatever its segments (copies are header + clone). */
const uint8_t *bytes_of(const struct rte_mbuf *m);
uint16_t port_id_of(const char *port);

#endif
