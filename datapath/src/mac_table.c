/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "circuit_table.h"
#include "dp.h"
#include "mac_table.h"
#include "service_table.h"

#define LEARN_RING_SIZE 4096

struct e3_mac_val *e3_mac_vals;
static struct rte_hash *hash;
static uint32_t n_slots;          /* length of e3_mac_vals */
static uint32_t age_cursor;
static uint32_t n_total;
static uint64_t n_table_full;
static struct rte_ring *learn_ring[E3_MAX_WORKERS];
static unsigned n_rings;
static struct e3_mac_svc_stats *svc_stats;   /* [E3_MAX_SERVICES] */

int e3_mac_table_init(uint32_t capacity, unsigned n_workers)
{
	struct rte_hash_parameters hp = {
		.name = "e3_mac",
		.entries = capacity,
		.key_len = sizeof(struct e3_mac_key),
		.hash_func = rte_hash_crc,
		.socket_id = SOCKET_ID_ANY,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF,
	};

	hash = rte_hash_create(&hp);
	if (hash == NULL)
		return -1;
	struct rte_hash_rcu_config rc = {
		.v = e3.qsbr,
		.mode = RTE_HASH_QSBR_MODE_DQ,
	};
	if (rte_hash_rcu_qsbr_add(hash, &rc) != 0)
		return -1;
	n_slots = (uint32_t)rte_hash_max_key_id(hash) + 1;
	e3_mac_vals = aligned_alloc(64, RTE_ALIGN_CEIL(sizeof(*e3_mac_vals) * n_slots, 64));
	svc_stats = calloc(E3_MAX_SERVICES, sizeof(*svc_stats));
	if (e3_mac_vals == NULL || svc_stats == NULL)
		return -1;
	for (uint32_t i = 0; i < n_slots; i++)
		e3_mac_vals[i] = (struct e3_mac_val){ E3_MAC_NODEST, 0 };
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
	const void *kp[E3_BURST];

	for (unsigned i = 0; i < n; i++)
		kp[i] = &keys[i];
	rte_hash_lookup_bulk(hash, kp, n, pos);
}

bool e3_mac_learn(unsigned worker, uint32_t service, const uint8_t *mac,
		  uint32_t dest, int32_t pos)
{
	struct e3_mac_val *v = e3_mac_val_at(pos);

	if (v != NULL && __atomic_load_n(&v->dest, __ATOMIC_RELAXED) == dest) {
		uint32_t now = e3_now();

		/* Write only when the second changed: keeps the line shared. */
		if (v->last_seen != now)
			v->last_seen = now;
		return true;
	}
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

static void apply(const struct e3_learn_ev *ev)
{
	const struct e3_service *s = e3_service_get(ev->service);

	if (s == NULL || s->type != E3_SVC_ELAN || !dest_valid(s, ev->dest))
		return;   /* the service or circuit went away since */
	struct e3_mac_key k = { .service = ev->service };

	memcpy(k.mac, ev->mac, 6);
	struct e3_mac_svc_stats *st = &svc_stats[ev->service];
	int32_t pos = rte_hash_lookup(hash, &k);

	if (pos >= 0) {
		struct e3_mac_val *v = &e3_mac_vals[pos];

		if (v->dest != ev->dest) {
			__atomic_store_n(&v->dest, ev->dest, __ATOMIC_RELEASE);
			st->moves++;
		}
		v->last_seen = e3_now();
		return;
	}
	uint32_t limit = s->mac_limit ? s->mac_limit : e3.settings.mac_limit;

	if (st->n_macs >= limit) {
		st->limit_hits++;
		return;
	}
	pos = rte_hash_add_key(hash, &k);
	if (pos < 0 || (uint32_t)pos >= n_slots) {
		n_table_full++;
		return;
	}
	/* The slot was reset when its previous key was deleted, so a reader
	 * that finds the key before this store sees "absent", not garbage. */
	e3_mac_vals[pos].last_seen = e3_now();
	__atomic_store_n(&e3_mac_vals[pos].dest, ev->dest, __ATOMIC_RELEASE);
	st->n_macs++;
	st->learned++;
	n_total++;
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

static void delete_at(uint32_t pos)
{
	struct e3_mac_key *k;

	if (rte_hash_get_key_with_position(hash, pos, (void **)&k) != 0)
		return;
	struct e3_mac_key key = *k;

	__atomic_store_n(&e3_mac_vals[pos].dest, E3_MAC_NODEST, __ATOMIC_RELEASE);
	if (rte_hash_del_key(hash, &key) >= 0) {
		svc_stats[key.service].n_macs--;
		n_total--;
	}
}

void e3_mac_age_step(uint32_t budget)
{
	uint32_t aging = e3.settings.mac_aging_s;
	uint32_t now = e3_now();

	if (aging == 0 || n_total == 0)
		return;
	while (budget--) {
		uint32_t pos = age_cursor;
		uint32_t d = e3_mac_vals[pos].dest;

		age_cursor = age_cursor + 1 == n_slots ? 0 : age_cursor + 1;
		if (d != E3_MAC_NODEST && now - e3_mac_vals[pos].last_seen >= aging)
			delete_at(pos);
	}
}

static bool key_at(uint32_t pos, struct e3_mac_key *out)
{
	struct e3_mac_key *k;

	if (e3_mac_vals[pos].dest == E3_MAC_NODEST ||
	    rte_hash_get_key_with_position(hash, pos, (void **)&k) != 0)
		return false;
	*out = *k;
	return true;
}

uint32_t e3_mac_flush(uint32_t service, uint32_t dest)
{
	uint32_t n = 0;
	struct e3_mac_key k;

	for (uint32_t pos = 0; pos < n_slots && n_total > 0; pos++) {
		if (!key_at(pos, &k))
			continue;
		if ((service == E3_NONE || k.service == service) &&
		    (dest == E3_NONE || e3_mac_vals[pos].dest == dest)) {
			delete_at(pos);
			n++;
		}
	}
	return n;
}

void e3_mac_walk(uint32_t service, e3_mac_walk_fn fn, void *arg)
{
	struct e3_mac_key k;
	uint32_t now = e3_now();

	for (uint32_t pos = 0; pos < n_slots; pos++) {
		if (!key_at(pos, &k) || (service != E3_NONE && k.service != service))
			continue;
		struct e3_mac_val v = e3_mac_vals[pos];
		struct e3_mac_info mi = {
			.service = k.service,
			.remote = (v.dest & E3_MAC_REMOTE) != 0,
			.circuit = (v.dest & E3_MAC_REMOTE) ? E3_NONE : v.dest,
			.source = (v.dest & E3_MAC_REMOTE) ? (uint16_t)v.dest : 0,
			.age_s = now - v.last_seen,
		};
		memcpy(mi.mac, k.mac, 6);
		fn(&mi, arg);
	}
}

const struct e3_mac_svc_stats *e3_mac_svc_stats(uint32_t service)
{
	return &svc_stats[service];
}

void e3_mac_svc_reset(uint32_t service)
{
	uint32_t n = svc_stats[service].n_macs;

	memset(&svc_stats[service], 0, sizeof(svc_stats[service]));
	svc_stats[service].n_macs = n;
}

uint32_t e3_mac_count(void)
{
	return n_total;
}

uint32_t e3_mac_capacity(void)
{
	return n_slots;
}

uint64_t e3_mac_table_full(void)
{
	return n_table_full;
}
