/* SPDX-License-Identifier: Apache-2.0
 *
 * label_table.h - the node's label space: 2^20 direct-indexed 8-byte
 * entries, each written with one atomic 64-bit store, so a worker sees the
 * old entry or the new one, never half of each. 8 MiB in all.
 *
 *   SWAP       index = nhlfe id
 *   ELINE      index = service id
 *   ELAN       index = service id | source << 16 (e3_label_elan_*)
 *   REPLICATE  index = slot of an immutable e3_replicate (RCU-published)
 *   OAM        index = path session (BFD id)
 *
 * in_ports has a bit per DPDK port the entry takes frames from (the ports
 * its upstreams use, DESIGN.md: a valid label on another port is dropped,
 * never learned from); 0 takes any port.
 */
#ifndef E3_LABEL_TABLE_H
#define E3_LABEL_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_config.h>

#include "base/defs.h"

struct e3_label_entry {
	uint32_t in_ports;
	uint32_t index : 29;
	uint32_t type : 3;   /* enum e3_label_type; E3_LBL_NONE = empty */
};
_Static_assert(RTE_MAX_ETHPORTS <= 32, "in_ports: a bit per DPDK port");
_Static_assert(E3_MAX_SERVICES <= 1u << 16 && E3_MAX_REMOTES <= 1u << 13 && E3_MAX_NHLFES <= 1u << 29,
	       "an ELAN entry's service and source, or an nhlfe id, fit the index");

static inline uint32_t e3_label_elan_index(uint32_t service, uint16_t source)
{
	return service | (uint32_t)source << 16;
}
static inline uint32_t e3_label_elan_service(uint32_t index) { return index & 0xffff; }
static inline uint16_t e3_label_elan_source(uint32_t index) { return (uint16_t)(index >> 16); }

/* Does an entry with in_ports take a frame from DPDK port `port`? */
static inline bool e3_label_port_ok(uint32_t in_ports, uint16_t port)
{
	return in_ports == 0 || (in_ports >> (port & 31) & 1);
}
union e3_label_word {
	struct e3_label_entry e;
	uint64_t u64;
};

/* A REPLICATE entry's body. Immutable once published. */
struct e3_replicate {
	uint16_t rpf_port;          /* DPDK port id */
	uint16_t source;            /* local delivery's source */
	uint32_t service;           /* local delivery, or E3_NONE */
	uint16_t n_branches;
	uint32_t branches[];        /* nhlfe ids */
};
#define E3_MAX_REPLICATE 65536

extern uint64_t *e3_label_tbl;
extern struct e3_replicate **e3_repl_tbl;

int e3_label_table_init(void);

static inline struct e3_label_entry e3_label_get(uint32_t label)
{
	union e3_label_word w;

	w.u64 = __atomic_load_n(&e3_label_tbl[label & (E3_LABEL_SPACE - 1)], __ATOMIC_ACQUIRE);
	return w.e;
}

static inline const uint64_t *e3_label_slot(uint32_t label)
{
	return &e3_label_tbl[label & (E3_LABEL_SPACE - 1)];
}

static inline const struct e3_replicate *e3_repl_get(uint32_t slot)
{
	return __atomic_load_n(&e3_repl_tbl[slot % E3_MAX_REPLICATE], __ATOMIC_ACQUIRE);
}

/* Main lcore only. */
void e3_label_set(uint32_t label, struct e3_label_entry e);
/* Publish r in a free slot; returns the slot or -1 when the pool is full. */
int e3_repl_publish(struct e3_replicate *r);
/* Unpublish a slot; the object and the slot are freed after a grace period. */
void e3_repl_release(uint32_t slot);
uint32_t e3_label_count(void);

#endif
