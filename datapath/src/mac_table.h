/* SPDX-License-Identifier: Apache-2.0
 *
 * mac_table.h - E-LAN MAC learning: (service, MAC) -> local circuit or
 * remote endpoint.
 *
 * An rte_hash (cuckoo, CRC32, lock-free readers) holds the keys; a value
 * array indexed by the key's position holds {dest, last_seen}. There is one
 * writer, the main lcore: workers look MACs up in bulk, refresh last_seen
 * (a plain store, at most once a second per MAC), and push learn/move
 * events into their own SPSC ring, which the main lcore drains. Deleted key
 * slots are reused only after an RCU grace period, so a worker's position
 * never points at another MAC's value.
 *
 * Per MAC: 32 bytes of key store + 8 of bucket + 8 of value + the free-slot
 * ring: about 56 bytes.
 */
#ifndef E3_MAC_TABLE_H
#define E3_MAC_TABLE_H

#include <stdint.h>

#include "ctl.h"

#define E3_MAC_REMOTE 0x80000000u   /* dest flag: the low 16 bits are a source id */
#define E3_MAC_NODEST E3_NONE       /* value slot not in use */

struct e3_mac_key {
	uint32_t service;
	uint8_t mac[6];
	uint16_t pad;                  /* always 0: part of the hashed key */
};

struct e3_mac_val {
	uint32_t dest;                 /* circuit id, or E3_MAC_REMOTE | source */
	uint32_t last_seen;            /* e3.now_s */
};

struct e3_learn_ev {
	uint32_t service;
	uint32_t dest;
	uint8_t mac[6];
	uint16_t pad;
};

extern struct e3_mac_val *e3_mac_vals;

int e3_mac_table_init(uint32_t capacity, unsigned n_workers);

/* Worker side ------------------------------------------------------------- */
/* pos[i] = key position, or < 0 when absent. n <= 32. */
void e3_mac_lookup_bulk(const struct e3_mac_key *keys, unsigned n, int32_t *pos);

/* The value of a found key, or NULL if it was deleted meanwhile. */
static inline struct e3_mac_val *e3_mac_val_at(int32_t pos)
{
	if (pos < 0)
		return NULL;
	struct e3_mac_val *v = &e3_mac_vals[pos];

	return __atomic_load_n(&v->dest, __ATOMIC_ACQUIRE) == E3_MAC_NODEST ? NULL : v;
}

/* Learn (or move) src to dest: refresh if already there, else an event to
 * the main lcore. Returns false if the event ring was full. */
bool e3_mac_learn(unsigned worker, uint32_t service, const uint8_t *mac,
		  uint32_t dest, int32_t pos);

/* Main lcore -------------------------------------------------------------- */
void e3_mac_drain(void);                         /* apply queued events */
void e3_mac_age_step(uint32_t budget);           /* check the next budget slots */
/* Delete every MAC of service (E3_NONE = all) whose dest is dest (E3_NONE = any). */
uint32_t e3_mac_flush(uint32_t service, uint32_t dest);
void e3_mac_walk(uint32_t service, e3_mac_walk_fn fn, void *arg);

struct e3_mac_svc_stats {
	uint32_t n_macs;
	uint64_t learned, moves, limit_hits;
};
const struct e3_mac_svc_stats *e3_mac_svc_stats(uint32_t service);
void e3_mac_svc_reset(uint32_t service);        /* new service: fresh counters */
uint32_t e3_mac_count(void);
uint32_t e3_mac_capacity(void);
uint64_t e3_mac_table_full(void);               /* inserts the hash refused */

#endif
