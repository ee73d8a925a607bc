/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "tables/circuit_table.h"
#include "base/dp.h"
#include "base/mem.h"
#include "tables/mac_table.h"
#include "base/rcu.h"
#include "tables/service_table.h"

#define LEARN_RING_SIZE 4096

_Static_assert(E3_MAX_SERVICES <= 1 << 16, "a service id fits the key's 16 bits");
_Static_assert(sizeof(struct e3_mac_bucket) == 64, "a bucket is one cache line");
_Static_assert(E3_MAX_CIRCUITS < E3_MAC_REMOTE && E3_MAC_ABSENT > (E3_MAC_REMOTE | 0xffff) &&
	       E3_MAC_ABSENT != E3_MAC_NODEST, "no destination is ever read as absent");

struct e3_mac_bucket *e3_mac_buckets;
uint32_t e3_mac_n_buckets;
static uint32_t n_slots;          /* buckets x ways */
static uint32_t capacity;
static uint32_t age_cursor;
static uint32_t n_total;
static uint64_t n_table_full;
static struct rte_ring *learn_ring[E3_MAX_WORKERS];
static unsigned n_rings;
struct e3_mac_svc_stats *e3_mac_svc;

/* Move damping, main lcore only, per slot: moves counted since `since`,
 * or frozen since `since`. Cleared when a slot takes a new MAC, and only
 * if it holds something: a record is written first when its MAC moves, so
 * learning a million MACs leaves the array's pages untouched (no memory). */
struct damp {
	uint32_t since;
	uint16_t moves;
	uint16_t frozen;
};
static struct damp *damp;
static struct e3_mac_circ_stats *circ;   /* [E3_MAX_CIRCUITS] */

static bool is_local(uint32_t dest)
{
	return !(dest & E3_MAC_REMOTE) && dest < E3_MAX_CIRCUITS;
}

int e3_mac_table_init(uint32_t cap, unsigned n_workers)
{
	/* Twice the capacity in slots. */
	uint32_t n_buckets = RTE_MAX((cap + 1) / 2, 1u);
	size_t bytes = sizeof(struct e3_mac_bucket) * n_buckets;

	e3_mac_buckets = e3_table_alloc(bytes);
	e3_mac_svc = calloc(E3_MAX_SERVICES, sizeof(*e3_mac_svc));
	damp = calloc((size_t)n_buckets * E3_MAC_WAYS, sizeof(*damp));
	circ = calloc(E3_MAX_CIRCUITS, sizeof(*circ));
	if (e3_mac_buckets == NULL || e3_mac_svc == NULL || damp == NULL || circ == NULL)
		return -1;
	memset(e3_mac_buckets, 0xff, bytes);   /* every key E3_MAC_EMPTY, every dest NODEST */
	e3_mac_n_buckets = n_buckets;
	n_slots = n_buckets * E3_MAC_WAYS;
	capacity = cap;
	for (unsigned w = 0; w < n_workers; w++) {
		char name[32];

		snprintf(name, sizeof(name), "e3_learn%u", w);
		learn_ring[w] = rte_ring_create_elem(name, sizeof(struct e3_learn_ev),
						     LEARN_RING_SIZE, SOCKET_ID_ANY,
						     RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (learn_ring[w] == NULL)
			return -1;
	}
	n_rings = n_workers;
	return 0;
}

void e3_mac_lookup_bulk(const struct e3_mac_key *keys, unsigned n, int32_t *pos)
{
	for (unsigned i = 0; i < n; i++)
		pos[i] = e3_mac_find(e3_mac_key64(keys[i].service, keys[i].mac));
}

bool e3_mac_learn_event(unsigned worker, uint32_t service, const uint8_t *mac, uint32_t dest)
{
	struct e3_learn_ev ev = { .service = service, .dest = dest };

	memcpy(ev.mac, mac, 6);
	return rte_ring_sp_enqueue_elem(learn_ring[worker], &ev, sizeof(ev)) == 0;
}

static bool dest_valid(const struct e3_service *s, uint32_t dest)
{
	if (dest & E3_MAC_REMOTE)
		return true;
	struct e3_circuit c = e3_circuit_get(dest);

	return c.port != E3_CIRCUIT_NOPORT && c.service == s->id;
}

static unsigned free_ways(const struct e3_mac_bucket *b)
{
	unsigned n = 0;

	for (unsigned w = 0; w < E3_MAC_WAYS; w++)
		n += b->s[w].key == E3_MAC_EMPTY;
	return n;
}

/* A free slot for k, or -1: in its first bucket, the one lookups fetch
 * ahead, unless that one has a single free way left and the second has
 * more. (Always the first would leave both full for ~3,800 inserts in a
 * million at full capacity; always the emptier puts 27% of MACs where a
 * lookup needs a second line.) */
static int32_t free_slot_for(uint64_t k)
{
	struct e3_mac_bucket *b1 = e3_mac_bucket1(k), *b2 = e3_mac_bucket2(k);
	unsigned f1 = free_ways(b1), f2 = free_ways(b2);
	struct e3_mac_bucket *b = f1 >= 2 || f1 >= f2 ? b1 : b2;

	for (unsigned w = 0; w < E3_MAC_WAYS; w++)
		if (b->s[w].key == E3_MAC_EMPTY)
			return (int32_t)((b - e3_mac_buckets) * E3_MAC_WAYS + w);
	return -1;
}

static void unfreeze(uint32_t pos, uint32_t service)
{
	if (damp[pos].frozen) {
		damp[pos].frozen = 0;
		e3_mac_svc[service].frozen--;
	}
}

/* May the MAC at pos move now? Counts the move against the damping
 * window; the move past mac_move_limit freezes the MAC where it is. */
static bool move_allowed(uint32_t pos, uint32_t service, const uint8_t *mac, uint32_t now)
{
	const uint32_t limit = e3.settings.mac_move_limit, window = e3.settings.mac_move_window_s;
	struct e3_mac_svc_stats *st = &e3_mac_svc[service];
	struct damp *d = &damp[pos];

	if (d->frozen && now - d->since < window) {
		st->moves_refused++;
		return false;
	}
	unfreeze(pos, service);
	if (limit == 0)
		return true;
	if (now - d->since >= window) {
		d->since = now;
		d->moves = 0;
	}
	if (d->moves < limit) {
		d->moves++;
		return true;
	}
	d->frozen = 1;
	d->since = now;
	st->frozen++;
	st->moves_refused++;
	RTE_LOG(WARNING, USER1, "service %u: MAC %02x:%02x:%02x:%02x:%02x:%02x frozen for %u s: "
		"more than %u moves in %u s\n", service, mac[0], mac[1], mac[2], mac[3], mac[4], mac[5],
		window, limit, window);
	return false;
}

/* May a MAC (new, or moving) be learned on dest? Counts a refusal. */
static bool circuit_has_room(uint32_t dest, struct e3_mac_svc_stats *st)
{
	if (!is_local(dest) || circ[dest].limit == 0 || circ[dest].n_macs < circ[dest].limit)
		return true;
	circ[dest].limit_hits++;
	st->limit_hits++;
	return false;
}

static void circuit_count(uint32_t dest, int d)
{
	if (is_local(dest))
		circ[dest].n_macs += d;
}

static void apply(const struct e3_learn_ev *ev)
{
	const struct e3_service *s = e3_service_get(ev->service);

	if (s == NULL || s->type != E3_SVC_ELAN || !dest_valid(s, ev->dest) || (ev->mac[0] & 1))
		return;   /* the service or circuit went away since */
	uint64_t k = e3_mac_key64(ev->service, ev->mac);
	struct e3_mac_svc_stats *st = &e3_mac_svc[ev->service];
	int32_t pos = e3_mac_find(k);

	if (pos >= 0) {
		struct e3_mac_val *v = &e3_mac_slot_at((uint32_t)pos)->v;

		if (v->dest != ev->dest) {
			if (!circuit_has_room(ev->dest, st) ||
			    !move_allowed((uint32_t)pos, ev->service, ev->mac, e3_now()))
				return;
			circuit_count(v->dest, -1);
			circuit_count(ev->dest, +1);
			__atomic_store_n(&v->dest, ev->dest, __ATOMIC_RELEASE);
			st->moves++;
		}
		__atomic_store_n(&v->last_seen, e3_now(), __ATOMIC_RELAXED);
		return;
	}
	uint32_t limit = s->mac_limit ? s->mac_limit : e3.settings.mac_limit;

	if (st->n_macs >= limit) {
		st->limit_hits++;
		return;
	}
	if (!circuit_has_room(ev->dest, st))
		return;
	pos = n_total < capacity ? free_slot_for(k) : -1;
	if (pos < 0) {
		n_table_full++;
		st->table_full++;
		return;
	}
	if (damp[pos].since | damp[pos].moves | damp[pos].frozen)
		damp[pos] = (struct damp){ 0 };
	/* Value first, key last: a reader that finds the key finds its value. */
	struct e3_mac_slot *sl = e3_mac_slot_at((uint32_t)pos);

	sl->v.last_seen = e3_now();
	__atomic_store_n(&sl->v.dest, ev->dest, __ATOMIC_RELAXED);
	__atomic_store_n(&sl->key, k, __ATOMIC_RELEASE);
	st->n_macs++;
	st->learned++;
	circuit_count(ev->dest, +1);
	n_total++;
}

void e3_mac_restore(uint32_t service, const uint8_t *mac, uint32_t dest)
{
	struct e3_learn_ev ev = { .service = service, .dest = dest };

	memcpy(ev.mac, mac, 6);
	apply(&ev);
}

void e3_mac_drain(void)
{
	struct e3_learn_ev ev[64];

	for (unsigned w = 0; w < n_rings; w++) {
		unsigned n;

		do {
			n = rte_ring_sc_dequeue_burst_elem(learn_ring[w], ev, sizeof(ev[0]), 64, NULL);
			for (unsigned i = 0; i < n; i++)
				apply(&ev[i]);
		} while (n == 64);
	}
}

/* After the grace period of a delete: no worker holds the position now. */
static void free_slot(void *pos)
{
	__atomic_store_n(&e3_mac_slot_at((uint32_t)(uintptr_t)pos)->key, E3_MAC_EMPTY, __ATOMIC_RELEASE);
}

static bool live(const struct e3_mac_slot *sl)
{
	return sl->key != E3_MAC_EMPTY && sl->key != E3_MAC_TOMB && sl->v.dest != E3_MAC_NODEST;
}

static uint32_t service_of_key(uint64_t k)
{
	return (uint32_t)(k >> 48);
}

static void delete_at(uint32_t pos)
{
	struct e3_mac_slot *sl = e3_mac_slot_at(pos);

	if (!live(sl))
		return;
	uint32_t service = service_of_key(sl->key);

	circuit_count(sl->v.dest, -1);
	/* Absent for readers first, then unfindable; reused after a grace period. */
	__atomic_store_n(&sl->v.dest, E3_MAC_NODEST, __ATOMIC_RELEASE);
	__atomic_store_n(&sl->key, E3_MAC_TOMB, __ATOMIC_RELEASE);
	e3_rcu_defer(free_slot, (void *)(uintptr_t)pos);
	unfreeze(pos, service);
	e3_mac_svc[service].n_macs--;
	n_total--;
}

void e3_mac_age_step(uint32_t budget)
{
	uint32_t aging = e3.settings.mac_aging_s;
	uint32_t now = e3_now();

	if (aging == 0 || n_total == 0)
		return;
	while (budget--) {
		uint32_t pos = age_cursor;
		const struct e3_mac_slot *sl = e3_mac_slot_at(pos);

		age_cursor = age_cursor + 1 == n_slots ? 0 : age_cursor + 1;
		if (!live(sl))
			continue;
		/* Whole-second stamps: more than the aging on the clock is at
		 * least the aging since the last frame. */
		if (now - __atomic_load_n(&sl->v.last_seen, __ATOMIC_RELAXED) > aging)
			delete_at(pos);
		else if (damp[pos].frozen && now - damp[pos].since >= e3.settings.mac_move_window_s)
			unfreeze(pos, service_of_key(sl->key));
	}
}

uint32_t e3_mac_flush(uint32_t service, uint32_t dest)
{
	uint32_t n = 0;

	for (uint32_t pos = 0; pos < n_slots && n_total > 0; pos++) {
		const struct e3_mac_slot *sl = e3_mac_slot_at(pos);

		if (live(sl) && (service == E3_NONE || service_of_key(sl->key) == service) &&
		    (dest == E3_NONE || sl->v.dest == dest)) {
			delete_at(pos);
			n++;
		}
	}
	return n;
}

void e3_mac_walk(uint32_t service, e3_mac_walk_fn fn, void *arg)
{
	uint32_t now = e3_now();

	for (uint32_t pos = 0; pos < n_slots; pos++) {
		const struct e3_mac_slot *sl = e3_mac_slot_at(pos);

		if (!live(sl) || (service != E3_NONE && service_of_key(sl->key) != service))
			continue;
		struct e3_mac_val v = sl->v;
		uint64_t mac = rte_cpu_to_be_64(sl->key);   /* octets 2..7: the MAC */
		struct e3_mac_info mi = {
			.service = service_of_key(sl->key),
			.remote = (v.dest & E3_MAC_REMOTE) != 0,
			.circuit = (v.dest & E3_MAC_REMOTE) ? E3_NONE : v.dest,
			.source = (v.dest & E3_MAC_REMOTE) ? (uint16_t)v.dest : 0,
			.age_s = now - v.last_seen,
		};
		uint32_t window = e3.settings.mac_move_window_s;

		if (damp[pos].frozen && now - damp[pos].since < window)
			mi.frozen_s = window - (now - damp[pos].since);
		memcpy(mi.mac, (const uint8_t *)&mac + 2, 6);
		fn(&mi, arg);
	}
}

const struct e3_mac_svc_stats *e3_mac_svc_stats(uint32_t service)
{
	return &e3_mac_svc[service];
}

void e3_mac_circuit_limit(uint32_t circuit, uint32_t limit)
{
	circ[circuit % E3_MAX_CIRCUITS].limit = limit;
}

const struct e3_mac_circ_stats *e3_mac_circ_stats(uint32_t circuit)
{
	return &circ[circuit % E3_MAX_CIRCUITS];
}

void e3_mac_svc_reset(uint32_t service)
{
	uint32_t n = e3_mac_svc[service].n_macs, frozen = e3_mac_svc[service].frozen;

	memset(&e3_mac_svc[service], 0, sizeof(e3_mac_svc[service]));
	e3_mac_svc[service].n_macs = n;
	e3_mac_svc[service].frozen = frozen;
}

uint32_t e3_mac_count(void)
{
	return n_total;
}

uint32_t e3_mac_capacity(void)
{
	return capacity;
}

uint32_t e3_mac_slots(void)
{
	return n_slots;
}

uint64_t e3_mac_table_full(void)
{
	return n_table_full;
}

size_t e3_mac_table_bytes(void)
{
	return sizeof(struct e3_mac_bucket) * (size_t)e3_mac_n_buckets;
}
