/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "tables/nhlfe_table.h"

uint64_t *e3_nhlfe_tbl;
struct e3_nexthop *e3_nexthop_tbl[E3_MAX_NEXTHOPS];
struct e3_ecmp *e3_ecmp_tbl[E3_MAX_ECMPS];

uint32_t e3_ecmp_member(struct e3_nhlfe n, const uint8_t *frame, uint32_t len)
{
	return e3_ecmp_pick(n, frame ? e3_flow_hash(frame, len) : 0);
}

int e3_nhlfe_table_init(void)
{
	e3_nhlfe_tbl = e3_table_alloc(sizeof(uint64_t) * E3_MAX_NHLFES);
	if (e3_nhlfe_tbl == NULL)
		return -1;
	/* Backed whole at start, like the label table. */
	memset(e3_nhlfe_tbl, 0, sizeof(uint64_t) * E3_MAX_NHLFES);
	return 0;
}

void e3_nhlfe_set(uint32_t id, uint32_t label, uint32_t nexthop)
{
	union e3_nhlfe_word w = { .e = { label | E3_NHLFE_VALID, nexthop } };

	__atomic_store_n(&e3_nhlfe_tbl[id], w.u64, __ATOMIC_RELEASE);
}

void e3_nhlfe_set_protected(uint32_t id, uint32_t primary, uint32_t backup, uint32_t watch)
{
	union e3_nhlfe_word w = { .e = { primary | E3_NHLFE_VALID | E3_NHLFE_PROTECTED,
					 backup | watch << E3_NHLFE_WATCH_SHIFT } };

	__atomic_store_n(&e3_nhlfe_tbl[id], w.u64, __ATOMIC_RELEASE);
}

void e3_nhlfe_set_ecmp(uint32_t id, uint32_t slot, struct e3_ecmp *g)
{
	struct e3_ecmp *old = e3_ecmp_tbl[slot];
	union e3_nhlfe_word w = { .e = { slot | E3_NHLFE_VALID | E3_NHLFE_ECMP, 0 } };

	E3_RCU_SET(e3_ecmp_tbl[slot], g);
	__atomic_store_n(&e3_nhlfe_tbl[id], w.u64, __ATOMIC_RELEASE);
	if (old != g)
		e3_rcu_free(old);
}

void e3_ecmp_release(uint32_t slot)
{
	struct e3_ecmp *old = e3_ecmp_tbl[slot];

	E3_RCU_SET(e3_ecmp_tbl[slot], NULL);
	e3_rcu_free(old);
}

void e3_nhlfe_clear(uint32_t id)
{
	__atomic_store_n(&e3_nhlfe_tbl[id], 0, __ATOMIC_RELEASE);
}

void e3_nexthop_publish(uint32_t id, struct e3_nexthop *nh)
{
	struct e3_nexthop *old = e3_nexthop_tbl[id];

	E3_RCU_SET(e3_nexthop_tbl[id], nh);
	e3_rcu_free(old);
}
