/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>

#include "tables/circuit_table.h"

uint64_t *e3_circuit_tbl;
uint32_t *e3_circuit_by_port[RTE_MAX_ETHPORTS];
struct e3_storm *e3_circuit_storm;

static void store(uint32_t id, struct e3_circuit c)
{
	union e3_circuit_word w = { .c = c };

	__atomic_store_n(&e3_circuit_tbl[id], w.u64, __ATOMIC_RELEASE);
}

int e3_circuit_table_init(void)
{
	e3_circuit_tbl = aligned_alloc(64, sizeof(uint64_t) * E3_MAX_CIRCUITS);
	e3_circuit_storm = calloc(E3_MAX_CIRCUITS, sizeof(*e3_circuit_storm));
	if (e3_circuit_tbl == NULL || e3_circuit_storm == NULL)
		return -1;
	for (uint32_t i = 0; i < E3_MAX_CIRCUITS; i++)
		store(i, (struct e3_circuit){ E3_CIRCUIT_NOPORT, 0, E3_NONE });
	return 0;
}

int e3_circuit_port_attach(uint16_t port)
{
	uint32_t *t = malloc(sizeof(uint32_t) * (E3_VLAN_UNTAGGED + 1));

	if (t == NULL)
		return -1;
	for (unsigned i = 0; i <= E3_VLAN_UNTAGGED; i++)
		t[i] = E3_NONE;
	E3_RCU_SET(e3_circuit_by_port[port], t);
	return 0;
}

void e3_circuit_port_detach(uint16_t port)
{
	uint32_t *t = e3_circuit_by_port[port];

	E3_RCU_SET(e3_circuit_by_port[port], NULL);
	e3_rcu_free(t);
}

void e3_circuit_storm_set(uint32_t id, const struct e3_storm *s)
{
	for (unsigned k = 0; k < E3_STORM_MAX; k++)
		__atomic_store_n(&e3_circuit_storm[id].pps[k], s->pps[k], __ATOMIC_RELAXED);
}

void e3_circuit_set(uint32_t id, struct e3_circuit c)
{
	struct e3_circuit old = e3_circuit_get(id);

	/* Object first, then the slot that leads to it; a re-pointed circuit
	 * leaves its old slot last, so no frame meets a gap. */
	store(id, c);
	__atomic_store_n(&e3_circuit_by_port[c.port][c.vlan], id, __ATOMIC_RELEASE);
	if (old.port != E3_CIRCUIT_NOPORT && (old.port != c.port || old.vlan != c.vlan) &&
	    e3_circuit_by_port[old.port] != NULL)
		__atomic_store_n(&e3_circuit_by_port[old.port][old.vlan], E3_NONE, __ATOMIC_RELEASE);
}

void e3_circuit_clear(uint32_t id)
{
	struct e3_circuit c = e3_circuit_get(id);

	if (c.port != E3_CIRCUIT_NOPORT && e3_circuit_by_port[c.port] != NULL)
		__atomic_store_n(&e3_circuit_by_port[c.port][c.vlan], E3_NONE, __ATOMIC_RELEASE);
	store(id, (struct e3_circuit){ E3_CIRCUIT_NOPORT, 0, E3_NONE });
	e3_circuit_storm_set(id, &(struct e3_storm){ 0 });
}
