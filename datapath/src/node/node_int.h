/* SPDX-License-Identifier: Apache-2.0
 *
 * ctl_int.h - what the control files share between themselves (not part of
 * node.h's API).
 */
#ifndef E3_NODE_INT_H
#define E3_NODE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>

#include "base/defs.h"

struct e3_port;

/* Record whether the operation changed anything; returns 0. */
int e3_node_ok(bool changed);

/* Who references what: a delete is refused while its count is > 0. */
extern uint32_t e3_node_port_refs[RTE_MAX_ETHPORTS];   /* nexthops, circuits, replicate RPF */
extern bool e3_node_nh_used[E3_MAX_NEXTHOPS];
extern uint32_t e3_node_nh_refs[E3_MAX_NEXTHOPS];      /* nhlfes, BFD sessions */
extern uint32_t *e3_node_nhlfe_refs;                   /* services, labels */
extern uint32_t e3_node_svc_refs[E3_MAX_SERVICES];     /* labels */
int e3_node_refs_init(void);

bool e3_node_nhlfe_exists(uint32_t id);
bool e3_node_is_zero_mac(const uint8_t *m);
/* s is non-empty and fits in size bytes with its terminator. */
bool e3_node_str_ok(const char *s, size_t size);
struct e3_port *e3_node_port_by_name(const char *name);
/* A port's sampling rate as it opens (its own, else the node's), and 0
 * as it closes (sflow.c). */
void e3_node_sflow_port_opened(const struct e3_port *p);
void e3_node_sflow_port_closed(uint16_t port_id);
/* Circuits a service may have: one per end of an E-Line, any for an E-LAN. */
unsigned e3_node_service_max_circuits(uint8_t type, uint32_t nhlfe);
bool e3_node_nexthop_used(uint32_t id);
/* A BFD session takes (1) or drops (-1) a reference on its nexthop. */
void e3_node_nexthop_ref(uint32_t id, int d);

#endif
