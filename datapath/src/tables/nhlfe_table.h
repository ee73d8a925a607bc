/* SPDX-License-Identifier: Apache-2.0
 *
 * nhlfe_table.h - where labelled frames go.
 *
 * nhlfe: 2^20 direct-indexed 8-byte entries, one atomic store each:
 *   plain      {label | VALID, nexthop id}
 *   protected  {primary | VALID | PROTECTED, backup | watch << 20}
 *   ECMP group {slot | VALID | ECMP, 0}
 * A protected entry resolves to its primary while the watch byte of its
 * BFD session says usable (watch.h), else to its backup: one more load,
 * and only for protected entries. A group's members (up to
 * E3_MAX_ECMP_MEMBERS plain or protected ids) are an immutable object in
 * slot `slot` of the group table, RCU-published like nexthops; a frame
 * takes the member its flow hash picks (e3_ecmp_pick). nexthop: up to E3_MAX_NEXTHOPS immutable
 * objects {port, dst MAC, src MAC}, RCU-published (replaced, never edited).
 */
#ifndef E3_NHLFE_TABLE_H
#define E3_NHLFE_TABLE_H

#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_ether.h>

#include "base/defs.h"
#include "base/flow_hash.h"
#include "base/rcu.h"
#include "base/watch.h"

#define E3_NHLFE_VALID 0x80000000u
#define E3_NHLFE_PROTECTED 0x40000000u
#define E3_NHLFE_ECMP 0x20000000u
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

struct e3_ecmp {
	uint16_t n;
	uint32_t members[E3_MAX_ECMP_MEMBERS];
};

extern uint64_t *e3_nhlfe_tbl;
extern struct e3_nexthop *e3_nexthop_tbl[E3_MAX_NEXTHOPS];
extern struct e3_ecmp *e3_ecmp_tbl[E3_MAX_ECMPS];

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

static inline bool e3_ecmp_member_usable(uint32_t id)
{
	struct e3_nhlfe n = e3_nhlfe_get(id);

	return !(n.label & E3_NHLFE_PROTECTED) || e3_watch_usable(n.nexthop >> E3_NHLFE_WATCH_SHIFT);
}

/* The member of group n that a flow of this hash takes. A flow keeps the
 * member its hash names among all of them while that one is usable, so a
 * member's failure moves only its own flows, over the usable others.
 * With none usable, each keeps its own (which then resolves through its
 * protection). */
static inline uint32_t e3_ecmp_pick(struct e3_nhlfe n, uint32_t hash)
{
	const struct e3_ecmp *g = E3_RCU_GET(e3_ecmp_tbl[n.label & E3_NHLFE_ID_MASK & (E3_MAX_ECMPS - 1)]);

	if (unlikely(g == NULL || g->n == 0))
		return E3_MAX_NHLFES; /* resolves to nothing */
	uint32_t own = g->members[e3_flow_reduce(hash, g->n)];

	if (likely(e3_ecmp_member_usable(own)))
		return own;
	uint32_t usable[E3_MAX_ECMP_MEMBERS];
	unsigned k = 0;

	for (unsigned j = 0; j < g->n; j++)
		if (e3_ecmp_member_usable(g->members[j]))
			usable[k++] = g->members[j];
	return k ? usable[e3_flow_reduce(e3_flow_mix(hash ^ 0x9e3779b9u), k)] : own;
}

/* e3_ecmp_pick for the flow of a customer frame (NULL: hash 0), out of
 * line: it keeps e3_nhlfe_resolve small enough to inline everywhere. */
uint32_t e3_ecmp_member(struct e3_nhlfe n, const uint8_t *frame, uint32_t len);

/* Resolve an nhlfe (through its group and protection, if any) to its
 * label and nexthop in one go; NULL if either is gone. frame and len: the
 * customer frame whose flow picks a group's member (NULL: frames that
 * are no customer's, which take the member of hash 0). */
static inline const struct e3_nexthop *e3_nhlfe_resolve(uint32_t id, const uint8_t *frame,
							 uint32_t len, uint32_t *label)
{
	if (id >= E3_MAX_NHLFES)
		return NULL;
	struct e3_nhlfe n = e3_nhlfe_get(id);

	if (unlikely(n.label & E3_NHLFE_ECMP) && (n.label & E3_NHLFE_VALID)) {
		uint32_t member = e3_ecmp_member(n, frame, len);

		if (member >= E3_MAX_NHLFES)
			return NULL;
		n = e3_nhlfe_get(member);
	}
	if (unlikely(n.label & E3_NHLFE_PROTECTED) && (n.label & E3_NHLFE_VALID))
		n = e3_nhlfe_get(e3_nhlfe_protected_pick(n));
	if ((n.label & (E3_NHLFE_VALID | E3_NHLFE_PROTECTED | E3_NHLFE_ECMP)) != E3_NHLFE_VALID)
		return NULL;
	*label = n.label & (E3_LABEL_SPACE - 1);
	return e3_nexthop_get(n.nexthop);
}

/* Main lcore only. */
void e3_nhlfe_set(uint32_t id, uint32_t label, uint32_t nexthop);
void e3_nhlfe_set_protected(uint32_t id, uint32_t primary, uint32_t backup, uint32_t watch);
/* Make id the group in slot, with g published there (the old one of the
 * slot is freed after a grace period). */
void e3_nhlfe_set_ecmp(uint32_t id, uint32_t slot, struct e3_ecmp *g);
void e3_nhlfe_clear(uint32_t id);
/* Unpublish and free (after a grace period) the group of slot. */
void e3_ecmp_release(uint32_t slot);
/* Replace nexthop id by nh (NULL = remove); the old one is freed after a grace period. */
void e3_nexthop_publish(uint32_t id, struct e3_nexthop *nh);

#endif
