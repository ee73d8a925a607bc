/* SPDX-License-Identifier: Apache-2.0
 *
 * mac_table.h - E-LAN MAC learning: (service, MAC) -> local circuit or
 * remote endpoint.
 *
 * A hash table of 64-byte buckets, each one cache line of four 16-byte
 * slots {key, dest, last_seen}: the key is (service, MAC) packed in 64
 * bits, and a MAC can live in either of two buckets (two CRC32 hashes;
 * inserted in the first unless it is nearly full, never moved). A lookup
 * is the first bucket's line, which the stages prefetch when they parse the
 * frame, a stage before they look it up, and the second's only when the
 * first lacks the key (about one MAC in ten at full capacity, and absent
 * keys); key and value come in the same line. There are twice as many slots
 * as the capacity: at full capacity an insert finds both its buckets full
 * about 300 times in a million (refused, counted as table full).
 *
 * One writer, the main lcore. Workers read without locks, refresh
 * last_seen (a plain store, at most once a second per MAC) and push
 * learn/move events into their own SPSC ring, which the main lcore drains.
 * A slot is written value first, then key (release); deleted, it gets
 * dest = NODEST, then a tombstone key, and becomes free only after an RCU
 * grace period, so a worker's position never leads to another MAC's value.
 *
 * 32 bytes per MAC of capacity (bench_stages prints it).
 */
#ifndef E3_MAC_TABLE_H
#define E3_MAC_TABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_hash_crc.h>
#include <rte_prefetch.h>

#include "base/defs.h"
#include "base/dp.h"

#define E3_MAC_REMOTE 0x80000000u   /* dest flag: the low 16 bits are a source id */
#define E3_MAC_ABSENT 0xfffffffeu    /* a lookup's answer: no such MAC (never a dest) */
#define E3_MAC_NODEST E3_NONE       /* value slot not in use */
#define E3_MAC_WAYS 4

/* The caller's view of a key. */
struct e3_mac_key {
	uint32_t service;
	uint8_t mac[6];
	uint16_t pad;                  /* unused */
};

struct e3_mac_val {
	uint32_t dest;                 /* circuit id, or E3_MAC_REMOTE | source */
	uint32_t last_seen;            /* e3.now_s */
};

struct e3_mac_slot {
	uint64_t key;                  /* e3_mac_key64, or E3_MAC_EMPTY / E3_MAC_TOMB */
	struct e3_mac_val v;
};

struct e3_mac_bucket {
	struct e3_mac_slot s[E3_MAC_WAYS];
} __rte_cache_aligned;

/* Keys no learned MAC can have: their MAC is multicast (never learned). */
#define E3_MAC_EMPTY UINT64_MAX
#define E3_MAC_TOMB (UINT64_MAX - 1)

struct e3_learn_ev {
	uint32_t service;
	uint32_t dest;
	uint8_t mac[6];
	uint16_t pad;
};

extern struct e3_mac_bucket *e3_mac_buckets;
extern uint32_t e3_mac_n_buckets;

int e3_mac_table_init(uint32_t capacity, unsigned n_workers);

/* Worker side ------------------------------------------------------------- */

/* (service, MAC) in 64 bits: service (< 65536) in the top 16, the MAC
 * big-endian below, so MAC octet 0 (the multicast bit) is bits 40..47. */
static inline uint64_t e3_mac_key64(uint32_t service, const uint8_t *mac)
{
	uint64_t k = 0;

	memcpy((uint8_t *)&k + 2, mac, 6);  /* bytes 2..7 of a big-endian u64 */
	return rte_be_to_cpu_64(k) | (uint64_t)(service & 0xffff) << 48;
}

/* The keys of an Ethernet header's destination and source MACs, from two
 * 8-byte loads (octets 0..7 and 4..11). */
static inline void e3_mac_keys_of(uint32_t service, const void *eth, uint64_t *dst, uint64_t *src)
{
	uint64_t a, b, s = (uint64_t)(service & 0xffff) << 48;

	memcpy(&a, eth, 8);
	memcpy(&b, (const uint8_t *)eth + 4, 8);
	*dst = rte_be_to_cpu_64(a) >> 16 | s;
	*src = (rte_be_to_cpu_64(b) & 0xffffffffffffull) | s;
}

static inline bool e3_mac_key64_multicast(uint64_t k)
{
	return (k >> 40) & 1;
}

/* The bucket of a 32-bit hash: hash * n / 2^32 spreads it over any number
 * of buckets (a mask would need a power of two, up to twice the memory). */
static inline struct e3_mac_bucket *e3_mac_bucket_of(uint32_t hash)
{
	return &e3_mac_buckets[(uint64_t)hash * e3_mac_n_buckets >> 32];
}

/* The two hashes are CRC32-C by the instruction (the build requires SSE4.2):
 * rte_hash_crc_8byte gives the same values but picks its implementation at
 * run time, at each call. */
static inline struct e3_mac_bucket *e3_mac_bucket1(uint64_t k)
{
	return e3_mac_bucket_of(crc32c_sse42_u64(k, 0));
}

static inline struct e3_mac_bucket *e3_mac_bucket2(uint64_t k)
{
	return e3_mac_bucket_of(crc32c_sse42_u64(k, 0x9e3779b9));
}

/* Start fetching k's first bucket (call a stage before e3_mac_find). */
static inline void e3_mac_prefetch(uint64_t k)
{
	rte_prefetch0(e3_mac_bucket1(k));
}

/* The slot at a position (bucket * E3_MAC_WAYS + way); unsigned, so the
 * division is a shift. */
static inline struct e3_mac_slot *e3_mac_slot_at(uint32_t pos)
{
	return &e3_mac_buckets[pos / E3_MAC_WAYS].s[pos % E3_MAC_WAYS];
}

static inline int32_t e3_mac_find_in(const struct e3_mac_bucket *b, uint64_t k)
{
	for (unsigned w = 0; w < E3_MAC_WAYS; w++)
		if (__atomic_load_n(&b->s[w].key, __ATOMIC_ACQUIRE) == k)
			return (int32_t)((b - e3_mac_buckets) * E3_MAC_WAYS + w);
	return -1;
}

/* Position of k, or -1. A multicast MAC is never in the table. */
static inline int32_t e3_mac_find(uint64_t k)
{
	if (unlikely(e3_mac_key64_multicast(k)))
		return -1;
	int32_t pos = e3_mac_find_in(e3_mac_bucket1(k), k);

	return pos >= 0 ? pos : e3_mac_find_in(e3_mac_bucket2(k), k);
}

/* pos[i] = key position, or < 0 when absent. */
void e3_mac_lookup_bulk(const struct e3_mac_key *keys, unsigned n, int32_t *pos);

/* The destination at a found position, read once (acquire), or
 * E3_MAC_ABSENT when pos < 0 or the MAC was deleted meanwhile. Callers
 * decide from this one value and never read the slot again: a delete or a
 * move may land between two reads. */
static inline uint32_t e3_mac_dest_at(int32_t pos)
{
	if (pos < 0)
		return E3_MAC_ABSENT;
	uint32_t d = __atomic_load_n(&e3_mac_slot_at((uint32_t)pos)->v.dest, __ATOMIC_ACQUIRE);

	return d == E3_MAC_NODEST ? E3_MAC_ABSENT : d;
}

/* Queue a learn/move event for the main lcore; false if the ring is full. */
bool e3_mac_learn_event(unsigned worker, uint32_t service, const uint8_t *mac, uint32_t dest);

/* Learn (or move) src to dest, given the destination its lookup found
 * (cur, from e3_mac_dest_at(pos)): refresh the age if already there, else
 * an event to the main lcore. Returns false if the event ring was full. */
static inline bool e3_mac_learn(unsigned worker, uint32_t service, const uint8_t *mac,
				uint32_t dest, int32_t pos, uint32_t cur)
{
	if (likely(cur == dest)) {
		uint32_t *seen = &e3_mac_slot_at((uint32_t)pos)->v.last_seen;
		uint32_t now = e3_now();

		/* Write only when the second changed: keeps the line shared. A
		 * slot deleted since is reused only after this burst's grace
		 * period, so the store can only touch a dead entry's age. */
		if (__atomic_load_n(seen, __ATOMIC_RELAXED) != now)
			__atomic_store_n(seen, now, __ATOMIC_RELAXED);
		return true;
	}
	return e3_mac_learn_event(worker, service, mac, dest);
}

/* Main lcore -------------------------------------------------------------- */
void e3_mac_drain(void);                         /* apply queued events */
void e3_mac_age_step(uint32_t budget);           /* check the next budget slots */
/* Delete every MAC of service (E3_NONE = all) whose dest is dest (E3_NONE = any). */
uint32_t e3_mac_flush(uint32_t service, uint32_t dest);
/* Learn (service, mac) -> dest from the main lcore, as a worker's event
 * would be applied (a warm restart's MACs). */
void e3_mac_restore(uint32_t service, const uint8_t *mac, uint32_t dest);
void e3_mac_walk(uint32_t service, e3_mac_walk_fn fn, void *arg);

/* Per service, kept by the main lcore (n_macs read by workers too). */
struct e3_mac_svc_stats {
	uint32_t n_macs;
	uint32_t frozen;                 /* MACs frozen for flapping now */
	uint64_t learned, moves;
	uint64_t limit_hits, table_full, moves_refused;
};
extern struct e3_mac_svc_stats *e3_mac_svc;   /* [E3_MAX_SERVICES] */
const struct e3_mac_svc_stats *e3_mac_svc_stats(uint32_t service);

/* Per local circuit (main lcore): its limit (0 = none), MACs and refusals. */
struct e3_mac_circ_stats {
	uint32_t limit, n_macs;
	uint64_t limit_hits;
};
void e3_mac_circuit_limit(uint32_t circuit, uint32_t limit);
const struct e3_mac_circ_stats *e3_mac_circ_stats(uint32_t circuit);

/* Worker: is the service at its MAC limit? Then a new MAC is refused
 * before it takes a place in the learn queue, so one service flooding
 * MACs never crowds out another's learning. */
static inline bool e3_mac_svc_full(uint32_t service, uint32_t limit)
{
	return __atomic_load_n(&e3_mac_svc[service % E3_MAX_SERVICES].n_macs, __ATOMIC_RELAXED) >= limit;
}
void e3_mac_svc_reset(uint32_t service);        /* new service: fresh counters */
uint32_t e3_mac_count(void);
uint32_t e3_mac_capacity(void);                  /* MACs it holds (--mac-table-size) */
uint32_t e3_mac_slots(void);                     /* slots (2 x capacity, rounded up) */
uint64_t e3_mac_table_full(void);               /* inserts refused: capacity or both buckets full */
/* Memory of the table (the buckets). */
size_t e3_mac_table_bytes(void);

#endif
