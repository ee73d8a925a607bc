/* SPDX-License-Identifier: Apache-2.0
 *
 * circuit_table.h - attachment circuits.
 *
 * Per customer port, 4097 direct-indexed circuit ids (VLAN 0..4095 and
 * E3_VLAN_UNTAGGED). Per circuit id, one 8-byte object {port, vlan,
 * service}, written with one atomic store.
 */
#ifndef E3_CIRCUIT_TABLE_H
#define E3_CIRCUIT_TABLE_H

#include <stdint.h>

#include <rte_build_config.h>

#include "base/defs.h"
#include "base/rcu.h"

#define E3_CIRCUIT_NOPORT 0xffff

struct e3_circuit {
	uint16_t port;        /* DPDK port id; E3_CIRCUIT_NOPORT = no circuit */
	uint16_t vlan;        /* 1..4094 or E3_VLAN_UNTAGGED */
	uint32_t service;
};
union e3_circuit_word {
	struct e3_circuit c;
	uint64_t u64;
};

extern uint64_t *e3_circuit_tbl;                    /* [E3_MAX_CIRCUITS] */
extern struct e3_storm *e3_circuit_storm;           /* [E3_MAX_CIRCUITS] */
extern uint32_t *e3_circuit_by_port[RTE_MAX_ETHPORTS]; /* [4097] each */

int e3_circuit_table_init(void);

static inline struct e3_circuit e3_circuit_get(uint32_t id)
{
	union e3_circuit_word w = { .c = { E3_CIRCUIT_NOPORT, 0, E3_NONE } };

	if (id < E3_MAX_CIRCUITS)
		w.u64 = __atomic_load_n(&e3_circuit_tbl[id], __ATOMIC_ACQUIRE);
	return w.c;
}

/* Circuit id of (port, vlan) or E3_NONE. */
static inline uint32_t e3_circuit_lookup(uint16_t port, uint16_t vlan)
{
	const uint32_t *t = E3_RCU_GET(e3_circuit_by_port[port]);

	return t ? __atomic_load_n(&t[vlan], __ATOMIC_RELAXED) : E3_NONE;
}

/* Circuit id's storm limit for class cls in frames per second; 0 = none. */
static inline uint32_t e3_circuit_storm_pps(uint32_t id, enum e3_storm_class cls)
{
	return __atomic_load_n(&e3_circuit_storm[id].pps[cls], __ATOMIC_RELAXED);
}

/* Main lcore only. */
void e3_circuit_storm_set(uint32_t id, const struct e3_storm *s);
int e3_circuit_port_attach(uint16_t port);   /* a customer port appeared */
void e3_circuit_port_detach(uint16_t port);  /* after its circuits are gone */
void e3_circuit_set(uint32_t id, struct e3_circuit c); /* and its (port, vlan) slot */
void e3_circuit_clear(uint32_t id);

#endif
