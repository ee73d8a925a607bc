/* SPDX-License-Identifier: Apache-2.0
 *
 * nhlfe_table.h - where labelled frames go.
 *
 * nhlfe: 2^20 direct-indexed 8-byte entries, one atomic store each:
 *   plain      {label | VALID, nexthop id}
 *   protected  {primary | VALID | PROTECTED, backup | watch << 20}
 * A protected entry resolves to its primary while the watch byte of its
 * BFD session says usable (watch.h), else to its backup: one more load,
 * and only for protected entries. nexthop: up to E3_MAX_NEXTHOPS immutable
 * objects {port, dst MAC, src MAC}, RCU-published (replaced, never edited).
 */
#ifndef E3_NHLFE_TABLE_H
#define E3_NHLFE_TABLE_H

#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_ether.h>

#include "base/defs.h"
#include "base/rcu.h"
#include "base/watch.h"

#define E3_NHLFE_VALID 0x80000000u
#define E3_NHLFE_PROTECTED 0x40000000u
#define E3_NHLFE_ID_MASK (E3_MAX_NHLFES - 1)
#define E3_NHLFE_WATCH_SHIFT 20

_Static_assert(E3_MAX_NHLFES == 1u << E3_NHLFE_WATCH_SHIFT &&
	       E3_MAX_SESSIONS <= 1u << (32 - E3_NHLFE_WATCH_SHIFT),
	       "a protected entry's backup and watch share 32 bits");

struct e3_nhlfe {
	uint32_t label;       /* label | E3_NHLFE_VALID */
	uint32_t nexthop;
};
union e3_nhlfe_word {
	struct e3_nhlfe e;
	uint64_t u64;
};

struct e3_nexthop {
	uint16_t port;                  /* DPDK port id */
	struct rte_ether_addr dst;      /* the neighbour */
	struct rte_ether_addr src;      /* our port's MAC */
};

extern uint64_t *e3_nhlfe_tbl;
extern struct e3_nexthop *e3_nexthop_tbl[E3_MAX_NEXTHOPS];

int e3_nhlfe_table_init(void);

static inline struct e3_nhlfe e3_nhlfe_get(uint32_t id)
{
	union e3_nhlfe_word w;

	w.u64 = __atomic_load_n(&e3_nhlfe_tbl[id & (E3_MAX_NHLFES - 1)], __ATOMIC_ACQUIRE);
	return w.e;
}

static inline const struct e3_nexthop *e3_nexthop_get(uint32_t id)
{
	return id < E3_MAX_NEXTHOPS ? E3_RCU_GET(e3_nexthop_tbl[id]) : NULL;
}

/* The plain nhlfe a protected one stands for now. */
static inline uint32_t e3_nhlfe_protected_pick(struct e3_nhlfe n)
{
	return e3_watch_usable(n.nexthop >> E3_NHLFE_WATCH_SHIFT) ? n.label & E3_NHLFE_ID_MASK :
								  n.nexthop & E3_NHLFE_ID_MASK;
}

/* Resolve an nhlfe (through its protection, if any) to its label and
 * nexthop in one go; NULL if either is gone. */
static inline const struct e3_nexthop *e3_nhlfe_resolve(uint32_t id, uint32_t *label)
{
	if (id >= E3_MAX_NHLFES)
		return NULL;
	struct e3_nhlfe n = e3_nhlfe_get(id);

	if (unlikely(n.label & E3_NHLFE_PROTECTED) && (n.label & E3_NHLFE_VALID))
		n = e3_nhlfe_get(e3_nhlfe_protected_pick(n));
	if ((n.label & (E3_NHLFE_VALID | E3_NHLFE_PROTECTED)) != E3_NHLFE_VALID)
		return NULL;
	*label = n.label & (E3_LABEL_SPACE - 1);
	return e3_nexthop_get(n.nexthop);
}

/* Main lcore only. */
void e3_nhlfe_set(uint32_t id, uint32_t label, uint32_t nexthop);
void e3_nhlfe_set_protected(uint32_t id, uint32_t primary, uint32_t backup, uint32_t watch);
void e3_nhlfe_clear(uint32_t id);
/* Replace nexthop id by nh (NULL = remove); the old one is freed after a grace period. */
void e3_nexthop_publish(uint32_t id, struct e3_nexthop *nh);

#endif
