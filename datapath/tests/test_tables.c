/* SPDX-License-Identifier: Apache-2.0
 *
 * test_tables.c - the tables (label, nhlfe/nexthop, circuit, service, MAC)
 * through their own APIs, and the validation of every node operation.
 */
#include <pthread.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "tables/circuit_table.h"
#include "base/dp.h"
#include "harness.h"
#include "tables/label_table.h"
#include "tables/mac_table.h"
#include "tables/nhlfe_table.h"
#include "base/rcu.h"
#include "tables/service_table.h"

#include <rte_pause.h>
#include <rte_random.h>
#include <rte_rcu_qsbr.h>

static char err[E3_ERRLEN];

static void test_label_table(void)
{
	CHECK_EQ(sizeof(struct e3_label_entry), 8);
	CHECK(sizeof(uint64_t) * E3_LABEL_SPACE <= 16u << 20);
	e3_label_set(100, (struct e3_label_entry){ .index = e3_label_elan_index(65535, 1023),
						   .type = E3_LBL_ELAN, .in_ports = 1u << 31 | 1 });
	struct e3_label_entry e = e3_label_get(100);

	CHECK_EQ(e3_label_elan_service(e.index), 65535);
	CHECK_EQ(e3_label_elan_source(e.index), 1023);
	CHECK_EQ(e.type, E3_LBL_ELAN);
	CHECK(e3_label_port_ok(e.in_ports, 0) && e3_label_port_ok(e.in_ports, 31));
	CHECK(!e3_label_port_ok(e.in_ports, 1) && !e3_label_port_ok(e.in_ports, 30));
	CHECK(e3_label_port_ok(0, 7));          /* no ports given: any */
	CHECK_EQ(e3_label_get(101).type, E3_LBL_NONE);
	/* Out-of-range labels cannot reach outside the table. */
	CHECK_EQ(e3_label_get(100 + E3_LABEL_SPACE).index, e3_label_elan_index(65535, 1023));
	e3_label_set(100, (struct e3_label_entry){ 0 });
	CHECK_EQ(e3_label_get(100).type, E3_LBL_NONE);

	struct e3_replicate *r = malloc(sizeof(*r) + 2 * sizeof(uint32_t));

	r->n_branches = 2;
	r->branches[0] = 1;
	r->branches[1] = 2;
	int slot = e3_repl_publish(r);

	CHECK(slot >= 0);
	CHECK(e3_repl_get(slot) == r);
	e3_repl_release(slot);
	/* Still readable until the grace period is over... */
	CHECK(e3_repl_get(slot) == r);
	e3_rcu_reclaim();
	/* ...then gone, and the slot is reused. */
	CHECK(e3_repl_get(slot) == NULL);
	struct e3_replicate *r2 = calloc(1, sizeof(*r2));
	int slot2 = e3_repl_publish(r2);

	CHECK_EQ(slot2, slot);
	e3_repl_release(slot2);
	e3_rcu_reclaim();
}

static void test_nhlfe_table(void)
{
	struct e3_nexthop *nh = calloc(1, sizeof(*nh));
	uint32_t label = 0;

	nh->port = 3;
	e3_nexthop_publish(3, nh);
	e3_nhlfe_set(7, 1234, 3);
	CHECK(e3_nhlfe_resolve(7, NULL, 0, &label) == nh);
	CHECK_EQ(label, 1234);
	CHECK(e3_nhlfe_resolve(8, NULL, 0, &label) == NULL);           /* never set */
	CHECK(e3_nhlfe_resolve(E3_MAX_NHLFES, NULL, 0, &label) == NULL);
	e3_nhlfe_set(9, 99, 4);                                 /* nexthop 4 missing */
	CHECK(e3_nhlfe_resolve(9, NULL, 0, &label) == NULL);
	e3_nhlfe_clear(7);
	CHECK(e3_nhlfe_resolve(7, NULL, 0, &label) == NULL);
	e3_nhlfe_clear(9);
	e3_nexthop_publish(3, NULL);
	CHECK(e3_nexthop_get(3) == NULL);
	e3_rcu_reclaim();
}

/* A UDP/IPv4 frame of flow k (source port 1000 + k). */
static void udp_frame(uint8_t *f, unsigned k)
{
	static const uint8_t hdr[42] = {
		0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00,          /* Ethernet */
		0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2, /* IPv4 */
		0, 0, 0x13, 0x89, 0, 8, 0, 0,                                    /* UDP */
	};

	memcpy(f, hdr, sizeof(hdr));
	f[34] = (uint8_t)((1000 + k) >> 8);
	f[35] = (uint8_t)(1000 + k);
}

/* The flow hash: the same for every frame of a flow, whatever follows its
 * headers; different flows spread evenly over 2 and 3 members. */
static void test_flow_hash(void)
{
	uint8_t f[64], g[64];
	unsigned on[3] = { 0 }, of2[2] = { 0 };

	memset(f, 0, sizeof(f));
	memset(g, 0xee, sizeof(g));
	udp_frame(f, 1);
	udp_frame(g, 1);
	CHECK_EQ(e3_flow_hash(f, 42), e3_flow_hash(g, 64));   /* payload is not hashed */
	udp_frame(g, 2);
	CHECK(e3_flow_hash(f, 42) != e3_flow_hash(g, 42));    /* ports are */
	g[35] = f[35];
	g[36] = 0xff;                                         /* the other port */
	CHECK(e3_flow_hash(f, 42) != e3_flow_hash(g, 42));
	udp_frame(g, 1);
	g[20] = 0x20;                                         /* a fragment: no ports */
	f[20] = 0x20;
	g[34] = 0x77;
	CHECK_EQ(e3_flow_hash(f, 42), e3_flow_hash(g, 42));
	CHECK_EQ(e3_flow_hash(f, 10), e3_flow_hash(f, 10));   /* runts hash what they have */
	for (unsigned k = 0; k < 3000; k++) {
		udp_frame(f, k);
		uint32_t h = e3_flow_hash(f, 42);

		on[e3_flow_reduce(h, 3)]++;
		of2[e3_flow_reduce(h, 2)]++;
	}
	for (unsigned j = 0; j < 3; j++)
		CHECK(on[j] > 900 && on[j] < 1100);           /* within 10% of 1000 */
	CHECK(of2[0] > 1350 && of2[0] < 1650);
}

/* An ECMP group: each flow keeps one member; a protected member whose
 * watched session is down is left out, and only its flows move. */
static void test_ecmp_group(void)
{
	struct e3_nexthop *nh1 = calloc(1, sizeof(*nh1)), *nh2 = calloc(1, sizeof(*nh2));
	struct e3_ecmp *g = calloc(1, sizeof(*g));
	uint8_t f[64];
	uint32_t label = 0;
	unsigned on1 = 0, moved = 0;
	const struct e3_nexthop *was[256];

	e3_nexthop_publish(1, nh1);
	e3_nexthop_publish(2, nh2);
	e3_nhlfe_set(11, 111, 1);
	e3_nhlfe_set(12, 222, 2);
	e3_nhlfe_set_protected(21, 11, 12, 5);                /* via 1, else 2; session 5 */
	e3_nhlfe_set_protected(22, 12, 11, 6);                /* via 2, else 1; session 6 */
	g->n = 2;
	g->members[0] = 21;
	g->members[1] = 22;
	e3_nhlfe_set_ecmp(30, 4, g);
	e3_watch_set(5, true);
	e3_watch_set(6, true);
	for (unsigned k = 0; k < 256; k++) {
		udp_frame(f, k);
		was[k] = e3_nhlfe_resolve(30, f, 42, &label);
		CHECK(was[k] == nh1 || was[k] == nh2);
		CHECK_EQ(label, was[k] == nh1 ? 111u : 222u);
		CHECK(e3_nhlfe_resolve(30, f, 42, &label) == was[k]);   /* stable */
		on1 += was[k] == nh1;
	}
	CHECK(on1 > 96 && on1 < 160);
	e3_watch_set(5, false);                               /* the path via 1 fails */
	for (unsigned k = 0; k < 256; k++) {
		udp_frame(f, k);
		const struct e3_nexthop *now = e3_nhlfe_resolve(30, f, 42, &label);

		CHECK(now == nh2);
		moved += was[k] != now;
	}
	CHECK_EQ(moved, on1);                                 /* only the failed member's flows */
	e3_watch_set(6, false);                               /* both: each through its backup */
	udp_frame(f, 0);
	CHECK(e3_nhlfe_resolve(30, f, 42, &label) != NULL);
	CHECK(e3_nhlfe_resolve(30, NULL, 0, &label) != NULL); /* not a customer frame */
	e3_watch_set(5, true);
	e3_watch_set(6, true);
	e3_nhlfe_clear(30);
	e3_ecmp_release(4);
	CHECK(e3_nhlfe_resolve(30, f, 42, &label) == NULL);
	e3_nhlfe_clear(21);
	e3_nhlfe_clear(22);
	e3_nhlfe_clear(11);
	e3_nhlfe_clear(12);
	e3_nexthop_publish(1, NULL);
	e3_nexthop_publish(2, NULL);
	e3_rcu_reclaim();
}

static void test_circuit_table(void)
{
	CHECK_EQ(e3_circuit_lookup(9, 100), E3_NONE);          /* no table for the port */
	CHECK_EQ(e3_circuit_port_attach(9), 0);
	e3_circuit_set(10, (struct e3_circuit){ 9, 100, 1 });
	CHECK_EQ(e3_circuit_lookup(9, 100), 10);
	CHECK_EQ(e3_circuit_get(10).service, 1);
	/* Re-pointed to another VLAN: the old slot is released. */
	e3_circuit_set(10, (struct e3_circuit){ 9, E3_VLAN_UNTAGGED, 2 });
	CHECK_EQ(e3_circuit_lookup(9, 100), E3_NONE);
	CHECK_EQ(e3_circuit_lookup(9, E3_VLAN_UNTAGGED), 10);
	CHECK_EQ(e3_circuit_get(10).service, 2);
	e3_circuit_clear(10);
	CHECK_EQ(e3_circuit_lookup(9, E3_VLAN_UNTAGGED), E3_NONE);
	CHECK_EQ(e3_circuit_get(10).port, E3_CIRCUIT_NOPORT);
	CHECK_EQ(e3_circuit_get(E3_MAX_CIRCUITS).port, E3_CIRCUIT_NOPORT);
	e3_circuit_port_detach(9);
	e3_rcu_reclaim();
}

static struct e3_service_conf sc;

static void test_service_table(void)
{
	memset(&sc, 0, sizeof(sc));
	sc.id = 4;
	sc.type = E3_SVC_ELAN;
	snprintf(sc.name, sizeof(sc.name), "lan");
	sc.n_remotes = 2;
	sc.remotes[0] = (struct e3_remote){ 3, 11 };
	sc.remotes[1] = (struct e3_remote){ 1, 12 };
	sc.n_branches = 2;
	sc.branches[0] = 13;
	sc.branches[1] = 14;
	uint32_t circ[2] = { 1, 2 };
	struct e3_site site[2] = { { .non_df = true }, { .n_peers = 1, .peers = { 7 }, .source = 9 } };
	struct e3_service *s = e3_service_build(&sc, circ, site, 2);

	CHECK_EQ(s->n_sources, 4);
	CHECK_EQ(e3_service_remote(s, 3), 11);
	CHECK_EQ(e3_service_remote(s, 1), 12);
	CHECK_EQ(e3_service_remote(s, 2), E3_NONE);
	CHECK_EQ(e3_service_remote(s, 1000), E3_NONE);
	CHECK_EQ(s->n_branches, 2);
	CHECK_EQ(s->branches[1], 14);
	CHECK_EQ(s->n_sites, 2);
	CHECK(e3_site_filtered(&s->site[0], 3, true));      /* not the DF: no flood-tree copy */
	CHECK(!e3_site_filtered(&s->site[0], 3, false));    /* a unicast label's frame: taken */
	CHECK(e3_site_filtered(&s->site[1], 7, false));     /* from a peer: it delivered itself */
	CHECK(e3_site_filtered(&s->site[1], 9, true));      /* from the site itself */
	CHECK(!e3_site_filtered(&s->site[1], 3, true));
	CHECK(e3_service_site(s, 2) == &s->site[1]);
	CHECK(e3_service_site(s, 4) == NULL);
	const struct e3_site none = { 0 };
	struct e3_service *s2 = e3_service_with_circuit(s, 5, &none);

	CHECK_EQ(s2->n_circuits, 3);
	CHECK_EQ(s2->circuits[2], 5);
	CHECK(!e3_site_filtered(&s2->site[2], 7, true));
	CHECK(e3_site_filtered(&s2->site[1], 7, true));   /* circuit 2 keeps its filter */
	CHECK(e3_service_site(s2, 5) == NULL);
	struct e3_service *s3 = e3_service_with_circuit(s2, 1, NULL);

	CHECK_EQ(s3->n_circuits, 2);
	CHECK_EQ(s3->circuits[0], 2);
	CHECK_EQ(s3->circuits[1], 5);
	CHECK(e3_site_filtered(&s3->site[0], 7, true));
	/* replacing a circuit's filter keeps it once */
	struct e3_service *s4 = e3_service_with_circuit(s3, 2, &none);

	CHECK_EQ(s4->n_circuits, 2);
	CHECK_EQ(s4->n_sites, 0);
	CHECK(!e3_site_filtered(&s4->site[1], 7, true));
	free(s4);
	CHECK_EQ(e3_service_remote(s3, 3), 11);
	static struct e3_service_conf back;

	e3_service_conf_of(s3, &back);
	CHECK_EQ(back.n_remotes, 2);
	CHECK_EQ(back.remotes[0].source, 1);   /* by source */
	CHECK_EQ(back.remotes[1].nhlfe, 11);
	CHECK_EQ(back.n_branches, 2);
	CHECK(strcmp(back.name, "lan") == 0);
	e3_service_publish(4, s3);
	CHECK(e3_service_get(4) == s3);
	e3_service_publish(4, NULL);
	CHECK(e3_service_get(4) == NULL);
	free(s);
	free(s2);
	e3_rcu_reclaim();
}

/* MAC table: a service and two circuits on a fake port. */
static void mac_key(struct e3_mac_key *k, uint32_t svc, uint8_t last)
{
	memset(k, 0, sizeof(*k));
	k->service = svc;
	uint8_t mac[6] = { 2, 0, 0, 0, 0, last };

	memcpy(k->mac, mac, 6);
}

static int32_t mac_pos(uint32_t svc, uint8_t last)
{
	struct e3_mac_key k;
	int32_t pos;

	mac_key(&k, svc, last);
	e3_mac_lookup_bulk(&k, 1, &pos);
	return pos;
}

static void learn(uint32_t svc, uint8_t last, uint32_t dest)
{
	struct e3_mac_key k;

	mac_key(&k, svc, last);
	int32_t pos = mac_pos(svc, last);

	CHECK(e3_mac_learn(0, svc, k.mac, dest, pos, e3_mac_dest_at(pos)));
}

static unsigned walk_n;
static void count_mac(const struct e3_mac_info *m, void *arg)
{
	(void)m;
	(void)arg;
	walk_n++;
}

static void test_mac_table(void)
{
	memset(&sc, 0, sizeof(sc));
	sc.id = 20;
	sc.type = E3_SVC_ELAN;
	sc.mac_limit = 3;
	uint32_t circ[2] = { 100, 101 };

	e3_service_publish(20, e3_service_build(&sc, circ, NULL, 2));
	e3_mac_svc_reset(20);
	CHECK_EQ(e3_circuit_port_attach(10), 0);
	e3_circuit_set(100, (struct e3_circuit){ 10, 10, 20 });
	e3_circuit_set(101, (struct e3_circuit){ 10, 11, 20 });
	const struct e3_mac_svc_stats *st = e3_mac_svc_stats(20);
	uint32_t base = e3_mac_count();

	e3.now_s = 1;
	/* New MAC: an event, applied by the main lcore. */
	CHECK(mac_pos(20, 1) < 0);
	learn(20, 1, 100);
	CHECK(mac_pos(20, 1) < 0);
	e3_mac_drain();
	int32_t pos = mac_pos(20, 1);

	CHECK(pos >= 0);
	CHECK_EQ(e3_mac_dest_at(pos), 100);
	CHECK_EQ(st->learned, 1);
	CHECK_EQ(st->n_macs, 1);
	CHECK(mac_pos(21, 1) < 0);                   /* other service, other key */
	/* Seen again a second later: the worker refreshes the age itself. */
	e3.now_s = 2;
	learn(20, 1, 100);
	CHECK_EQ(e3_mac_buckets[pos / E3_MAC_WAYS].s[pos % E3_MAC_WAYS].v.last_seen, 2);
	e3_mac_drain();
	CHECK_EQ(st->learned, 1);
	/* Move to a remote endpoint. */
	learn(20, 1, E3_MAC_REMOTE | 7);
	e3_mac_drain();
	CHECK_EQ(e3_mac_dest_at(pos), E3_MAC_REMOTE | 7);
	CHECK_EQ(st->moves, 1);
	/* Limit of 3 per service. */
	learn(20, 2, 100);
	learn(20, 3, 101);
	learn(20, 4, 101);
	e3_mac_drain();
	CHECK_EQ(st->n_macs, 3);
	CHECK_EQ(st->limit_hits, 1);
	CHECK(mac_pos(20, 4) < 0);
	/* Events for a circuit that left the service are ignored. */
	learn(20, 5, 555);
	e3_mac_drain();
	CHECK(mac_pos(20, 5) < 0);
	/* Walk. */
	walk_n = 0;
	e3_mac_walk(20, count_mac, NULL);
	CHECK_EQ(walk_n, 3);
	/* Aging: MAC 1 seen at 2, MACs 2-3 at 2 as well; refresh 3 at 9.
	 * Stamps are whole seconds, so an entry goes only once more than the
	 * aging has passed on the clock: at 12 all three are kept, at 13 the
	 * two not refreshed go. */
	e3.settings.mac_aging_s = 10;
	e3.now_s = 9;
	learn(20, 3, 101);
	e3.now_s = 12;
	e3_mac_age_step(e3_mac_slots());
	CHECK_EQ(st->n_macs, 3);
	e3.now_s = 13;
	e3_mac_age_step(e3_mac_slots());
	CHECK(mac_pos(20, 1) < 0);
	CHECK(mac_pos(20, 2) < 0);
	CHECK(mac_pos(20, 3) >= 0);
	CHECK_EQ(st->n_macs, 1);
	/* aging 0 = never */
	e3.settings.mac_aging_s = 0;
	e3.now_s = 1000;
	e3_mac_age_step(e3_mac_slots());
	CHECK(mac_pos(20, 3) >= 0);
	e3.settings.mac_aging_s = 300;
	/* Flush by circuit, then by service. */
	learn(20, 6, 100);
	learn(20, 7, E3_MAC_REMOTE | 1);
	e3_mac_drain();
	CHECK_EQ(st->n_macs, 3);
	CHECK_EQ(e3_mac_flush(20, 101), 1);
	CHECK(mac_pos(20, 3) < 0);
	CHECK(mac_pos(20, 6) >= 0);
	CHECK_EQ(e3_mac_flush(20, E3_NONE), 2);
	CHECK_EQ(st->n_macs, 0);
	CHECK_EQ(e3_mac_count(), base);
	/* Deleted slots come back after the grace period: fill up again. */
	e3_rcu_reclaim();
	learn(20, 8, 100);
	e3_mac_drain();
	CHECK(mac_pos(20, 8) >= 0);
	e3_mac_flush(20, E3_NONE);
	e3_circuit_clear(100);
	e3_circuit_clear(101);
	e3_circuit_port_detach(10);
	e3_service_publish(20, NULL);
	e3_rcu_reclaim();
}

static void test_mac_capacity(void)
{
	/* The table holds its capacity; one more is refused, not a crash. */
	memset(&sc, 0, sizeof(sc));
	sc.id = 21;
	sc.type = E3_SVC_ELAN;
	sc.mac_limit = 1u << 30;
	e3_service_publish(21, e3_service_build(&sc, NULL, NULL, 0));
	uint32_t cap = e3_mac_capacity();
	uint64_t full0 = e3_mac_table_full();

	/* Two 16-byte slots per MAC of capacity, whatever the capacity. */
	CHECK_EQ(e3_mac_table_bytes(), (size_t)cap * 32);

	for (uint32_t i = 0; i < cap + 16; i++) {
		struct e3_learn_ev ev = { .service = 21, .dest = E3_MAC_REMOTE | 1 };
		struct e3_mac_key k = { .service = 21 };

		ev.mac[0] = 2;
		memcpy(ev.mac + 2, &i, 4);
		memcpy(k.mac, ev.mac, 6);
		int32_t pos = -1;

		e3_mac_lookup_bulk(&k, 1, &pos);
		if (!e3_mac_learn(0, 21, ev.mac, ev.dest, pos, e3_mac_dest_at(pos)))
			e3_mac_drain();
		if (i % 1024 == 1023)
			e3_mac_drain();
	}
	e3_mac_drain();
	/* Its capacity (a few may find both buckets full), never more. */
	CHECK(e3_mac_svc_stats(21)->n_macs >= cap * 99 / 100);
	CHECK(e3_mac_svc_stats(21)->n_macs <= cap);
	/* Full, most MACs are still in the first bucket, the line lookups
	 * fetch ahead (about 90%; the emptier-bucket rule would leave 73%). */
	uint32_t first = 0, found = 0;

	for (uint32_t i = 0; i < cap + 16; i++) {
		struct e3_mac_key k = { .service = 21 };
		int32_t pos = -1;

		k.mac[0] = 2;
		memcpy(k.mac + 2, &i, 4);
		e3_mac_lookup_bulk(&k, 1, &pos);
		if (pos < 0)
			continue;
		found++;
		first += e3_mac_bucket1(e3_mac_key64(21, k.mac)) == &e3_mac_buckets[pos / E3_MAC_WAYS];
	}
	printf("  %u of %u MACs in their first bucket\n", first, found);
	CHECK(first * 100 >= found * 85);
	CHECK(e3_mac_table_full() - full0 >= 16);
	e3_mac_flush(21, E3_NONE);
	CHECK_EQ(e3_mac_svc_stats(21)->n_macs, 0);
	e3_service_publish(21, NULL);
	e3_rcu_reclaim();
}

/* A reader thread (RCU thread 0, like a worker) looks a burst of MACs up,
 * holds the positions across the burst as the stages do, and reads each
 * destination once at the start and once at the end, while the main thread
 * learns, moves, deletes (flush by service, flush by destination, aging)
 * and re-learns them. MAC i only ever has dest REMOTE | i, or REMOTE | i |
 * CONC_MOVED after a move. Whatever the writer does, a held position must
 * answer that MAC's own value or absent, and once absent it stays absent
 * until the reader's next quiescent state (slots are reused only after a
 * grace period). */
#define CONC_MACS 768             /* under the harness's capacity: slots churn, not refuse */
#define CONC_MOVED 0x4000u
#define CONC_SVC 22

static volatile bool conc_stop;
static uint64_t conc_found, conc_wrong, conc_revived, conc_batches;

static void conc_mac(uint32_t i, uint8_t mac[6])
{
	mac[0] = 2;
	mac[1] = 0x44;
	mac[2] = mac[3] = 0;
	mac[4] = (uint8_t)(i >> 8);
	mac[5] = (uint8_t)i;
}

static bool conc_dest_ok(uint32_t d, uint32_t i)
{
	return d == E3_MAC_ABSENT || (d & ~CONC_MOVED) == (E3_MAC_REMOTE | i);
}

static void *conc_reader(void *arg)
{
	(void)arg;
	rte_rcu_qsbr_thread_register(e3.qsbr, 0);
	rte_rcu_qsbr_thread_online(e3.qsbr, 0);
	while (!conc_stop) {
		uint32_t idx[32], first[32];
		int32_t pos[32];

		for (int n = 0; n < 32; n++) {
			uint8_t mac[6];

			idx[n] = (uint32_t)(rte_rand() % CONC_MACS);
			conc_mac(idx[n], mac);
			pos[n] = e3_mac_find(e3_mac_key64(CONC_SVC, mac));
			first[n] = e3_mac_dest_at(pos[n]);
			conc_wrong += !conc_dest_ok(first[n], idx[n]);
			/* A refresh, as a worker's learn of the same source. */
			if (first[n] != E3_MAC_ABSENT)
				e3_mac_learn(0, CONC_SVC, mac, first[n], pos[n], first[n]);
		}
		for (int spin = 0; spin < 2000; spin++)
			rte_pause();
		for (int n = 0; n < 32; n++) {
			uint32_t d = e3_mac_dest_at(pos[n]);

			conc_found += d != E3_MAC_ABSENT;
			conc_wrong += !conc_dest_ok(d, idx[n]);
			conc_revived += pos[n] >= 0 && first[n] == E3_MAC_ABSENT && d != E3_MAC_ABSENT;
		}
		rte_rcu_qsbr_quiescent(e3.qsbr, 0);
		__atomic_fetch_add(&conc_batches, 1, __ATOMIC_RELEASE);
	}
	rte_rcu_qsbr_thread_offline(e3.qsbr, 0);
	rte_rcu_qsbr_thread_unregister(e3.qsbr, 0);
	return NULL;
}

/* Learn (or move to) dest for about one MAC in `one_in`. */
static void conc_learn(unsigned one_in, uint32_t moved)
{
	for (uint32_t i = 0; i < CONC_MACS; i++) {
		uint8_t mac[6];

		if (rte_rand() % one_in)
			continue;
		conc_mac(i, mac);
		while (!e3_mac_learn_event(0, CONC_SVC, mac, E3_MAC_REMOTE | i | moved))
			e3_mac_drain();
	}
	e3_mac_drain();
}

/* Let the reader run a couple of bursts: sleep, not spin, so that it gets a
 * CPU on a busy machine (bounded: a safety net only). */
static void conc_let_reader_run(void)
{
	uint64_t seen = __atomic_load_n(&conc_batches, __ATOMIC_ACQUIRE);

	for (int k = 0; k < 100000 && __atomic_load_n(&conc_batches, __ATOMIC_ACQUIRE) < seen + 2; k++)
		usleep(10);
}

static void test_mac_concurrent(void)
{
	memset(&sc, 0, sizeof(sc));
	sc.id = CONC_SVC;
	sc.type = E3_SVC_ELAN;
	sc.mac_limit = 1u << 30;
	e3_service_publish(CONC_SVC, e3_service_build(&sc, NULL, NULL, 0));
	uint32_t aging0 = e3.settings.mac_aging_s, now0 = e3.now_s;
	pthread_t t;

	conc_stop = false;
	CHECK_EQ(pthread_create(&t, NULL, conc_reader, NULL), 0);
	for (int round = 0; round < 200; round++) {
		conc_learn(2, 0);
		conc_let_reader_run();
		switch (round % 4) {
		case 0:         /* delete all, re-learn before the slots are free */
			e3_mac_flush(CONC_SVC, E3_NONE);
			conc_learn(2, 0);
			break;
		case 1:         /* moves, and moves back */
			conc_learn(3, CONC_MOVED);
			conc_let_reader_run();
			conc_learn(3, 0);
			break;
		case 2:         /* delete by destination */
			for (uint32_t i = 0; i < CONC_MACS; i += 1 + (uint32_t)(rte_rand() % 8))
				e3_mac_flush(CONC_SVC, E3_MAC_REMOTE | i);
			break;
		case 3:         /* age out half the table */
			e3.settings.mac_aging_s = 1;
			__atomic_store_n(&e3.now_s, e3.now_s + 2, __ATOMIC_RELAXED);
			e3_mac_age_step(e3_mac_slots() / 2);
			e3.settings.mac_aging_s = aging0;
			break;
		}
		conc_let_reader_run();
		e3_mac_flush(CONC_SVC, E3_NONE);
		if (round % 2)
			e3_rcu_reclaim();   /* slots change hands: freed ones are reused */
	}
	conc_stop = true;
	pthread_join(t, NULL);
	e3_rcu_reclaim();
	e3.now_s = now0;
	CHECK(conc_found > 0);
	CHECK_EQ(conc_wrong, 0);
	CHECK_EQ(conc_revived, 0);
	CHECK_EQ(e3_mac_svc_stats(CONC_SVC)->n_macs, 0);
	e3_service_publish(CONC_SVC, NULL);
	e3_rcu_reclaim();
}

/* ---- node validation -------------------------------------------------- */

static struct e3_port_conf pc(const char *name, const char *devargs, enum e3_port_kind kind)
{
	struct e3_port_conf c = { .kind = kind };

	snprintf(c.name, sizeof(c.name), "%s", name);
	snprintf(c.devargs, sizeof(c.devargs), "%s", devargs);
	for (int q = 0; q < E3_MAX_QUEUES; q++)
		c.worker[q] = -1;
	return c;
}

/* Port devargs: an allow-list of drivers and keys; files only under the
 * port (or pcap) directory. */
static void test_devargs_allow_list(void)
{
	static const struct {
		const char *devargs;
		const char *err;        /* NULL: allowed; else a part of the message */
	} t[] = {
		{ "net_af_packet_c1,iface=c1", NULL },
		{ "net_af_packet_c1,iface=c1,qpairs=2,framesz=2048", NULL },
		{ "0000:3b:00.0", NULL },
		{ "3b:00.1", NULL },
		{ "net_memif0,role=server,socket=/run/e3/lab/m0.sock,socket-abstract=no", NULL },
		{ "net_memif0,role=server,socket=/run/e3/lab/m0.sock", "socket-abstract=no" },
		{ "net_memif0,socket=/tmp/m0.sock,socket-abstract=no", "key socket" },
		{ "net_vhost0,iface=/run/e3/lab/vm.sock,queues=2", NULL },
		{ "net_vhost0,iface=/run/e3/lab/../../../etc/x", "key iface" },
		{ "net_vhost0,iface=/run/e3/labx/vm.sock", "key iface" },
		{ "net_vhost0,iface=/run/e3/lab/", "key iface" },
		{ "net_null0,no-rx=1", NULL },
		{ "net_af_packet_c1,iface=c1,evil=1", "key evil" },
		{ "net_pcap_x,tx_pcap=/tmp/pcaps/out.pcap", NULL },
		{ "net_pcap_x,tx_pcap=/any/path", "key tx_pcap" },
		{ "eth_pcap0,tx_pcap=/tmp/pcaps/out.pcap", "not allowed" },
		{ "net_bonding0,slave=x", "not allowed" },
		{ "0000:3b:00.0,evil=1", "not allowed" },
	};
	char e[E3_ERRLEN];

	e3_node_set_port_dirs("/run/e3/lab", "/tmp/pcaps/");
	for (unsigned i = 0; i < RTE_DIM(t); i++) {
		e[0] = 0;
		int rc = e3_node_devargs_check(t[i].devargs, e);

		if ((rc == 0) != (t[i].err == NULL) || (t[i].err && strstr(e, t[i].err) == NULL))
			fprintf(stderr, "  %s: rc %d, %s\n", t[i].devargs, rc, e);
		CHECK_EQ(rc, t[i].err ? -E3_EINVAL : 0);
		CHECK(t[i].err == NULL || strstr(e, t[i].err) != NULL);
	}
	e3_node_set_port_dirs("/run/e3/lab", NULL);
	CHECK_EQ(e3_node_devargs_check("net_pcap_x,tx_pcap=/tmp/pcaps/out.pcap", e), -E3_EINVAL);
	e3_node_set_port_dirs("/", NULL);                 /* a socket in /: any absolute path */
	CHECK_EQ(e3_node_devargs_check("net_vhost0,iface=/vm.sock", e), 0);
	CHECK_EQ(e3_node_devargs_check("net_vhost0,iface=vm.sock", e), -E3_EINVAL);
}

static void test_ctl_ports(void)
{
	struct e3_port_conf c = pc("", "net_ring0", E3_PORT_CUSTOMER);

	CHECK_EQ(e3_node_port_add(&c, err), -E3_EINVAL);
	c = pc("c0", "net_ring0", 7);
	CHECK_EQ(e3_node_port_add(&c, err), -E3_EINVAL);
	c = pc("c0", "net_nosuchdriver0", E3_PORT_CUSTOMER);
	CHECK_EQ(e3_node_port_add(&c, err), -E3_EINVAL);
	CHECK(strstr(err, "net_nosuchdriver0") != NULL);
	c = pc("c0", "net_pcap0,tx_pcap=/etc/evil", E3_PORT_CUSTOMER);
	CHECK_EQ(e3_node_port_add(&c, err), -E3_EINVAL);
	CHECK(strstr(err, "--pcap-dir") != NULL);
	c = pc("c0", "net_ring0", E3_PORT_CUSTOMER);
	c.rx_queues = E3_MAX_QUEUES + 1;
	CHECK_EQ(e3_node_port_add(&c, err), -E3_EINVAL);
	c.rx_queues = 1;
	c.worker[0] = 5;                                  /* only worker 0 exists */
	CHECK_EQ(e3_node_port_add(&c, err), -E3_EINVAL);
	c.worker[0] = -1;
	CHECK_EQ(e3_node_port_add(&c, err), 0);
	CHECK(e3_node_changed());
	CHECK_EQ(e3_node_port_add(&c, err), 0);
	CHECK(!e3_node_changed());
	struct e3_port_info pi;

	CHECK_EQ(e3_node_port_get("c0", &pi, err), 0);
	CHECK_EQ(pi.conf.mtu, 1500);
	CHECK(pi.link_up);
	CHECK_EQ(pi.conf.worker[0], 0);
	uint8_t zero[6] = { 0 };

	CHECK(memcmp(pi.conf.mac, zero, 6) != 0);          /* made up for net_ring */
	/* Same name, other device; same device, other name. */
	struct e3_port_conf d = pc("c0", "net_ring9", E3_PORT_CUSTOMER);

	CHECK_EQ(e3_node_port_add(&d, err), -E3_EEXIST);
	d = pc("c9", "net_ring0", E3_PORT_CUSTOMER);
	CHECK_EQ(e3_node_port_add(&d, err), -E3_EEXIST);
	/* MTU change in place. */
	c.mtu = 1400;
	CHECK_EQ(e3_node_port_add(&c, err), 0);
	CHECK(e3_node_changed());
	CHECK_EQ(e3_node_port_get("c0", &pi, err), 0);
	CHECK_EQ(pi.conf.mtu, 1400);
	CHECK_EQ(e3_node_port_get("nope", &pi, err), -E3_ENOENT);
	c = pc("f0", "net_ring1", E3_PORT_FABRIC);
	mac_parse("02:aa:00:00:00:01", c.mac);
	CHECK_EQ(e3_node_port_add(&c, err), 0);
	CHECK_EQ(e3_node_port_get("f0", &pi, err), 0);
	CHECK_EQ(pi.conf.mtu, 2000);
	CHECK_MEM(pi.conf.mac, c.mac, 6);
}

static void test_ctl_objects(void)
{
	struct e3_nexthop_conf nh = { .id = 1, .port = "c0" };

	mac_parse("02:bb:00:00:00:01", nh.mac);
	CHECK_EQ(e3_node_nexthop_add(&nh, err), -E3_EINVAL);      /* customer port */
	snprintf(nh.port, sizeof(nh.port), "zz");
	CHECK_EQ(e3_node_nexthop_add(&nh, err), -E3_ENOENT);
	snprintf(nh.port, sizeof(nh.port), "f0");
	nh.id = E3_MAX_NEXTHOPS;
	CHECK_EQ(e3_node_nexthop_add(&nh, err), -E3_EINVAL);
	nh.id = 1;
	nh.mac[0] = 1;                                             /* multicast */
	CHECK_EQ(e3_node_nexthop_add(&nh, err), -E3_EINVAL);
	nh.mac[0] = 2;
	CHECK_EQ(e3_node_nexthop_add(&nh, err), 0);
	CHECK_EQ(e3_node_nexthop_add(&nh, err), 0);
	CHECK(!e3_node_changed());

	struct e3_nhlfe_conf nl = { .id = 10, .nexthop = 1, .label = 15 };

	CHECK_EQ(e3_node_nhlfe_add(&nl, err), -E3_EINVAL);
	nl.label = E3_LABEL_SPACE;
	CHECK_EQ(e3_node_nhlfe_add(&nl, err), -E3_EINVAL);
	nl.label = 1000;
	nl.nexthop = 2;
	CHECK_EQ(e3_node_nhlfe_add(&nl, err), -E3_ENOENT);
	nl.nexthop = 1;
	CHECK_EQ(e3_node_nhlfe_add(&nl, err), 0);
	CHECK_EQ(e3_node_nhlfe_add(&nl, err), 0);
	CHECK(!e3_node_changed());
	CHECK_EQ(e3_node_nexthop_del(1, err), -E3_EBUSY);
	CHECK(strstr(err, "nhlfe") != NULL);
	CHECK_EQ(e3_node_port_del("f0", err), -E3_EBUSY);

	/* Services. */
	memset(&sc, 0, sizeof(sc));
	sc.id = 1;
	sc.type = E3_SVC_ELINE;
	sc.nhlfe = 11;
	CHECK_EQ(e3_node_service_add(&sc, err), -E3_ENOENT);
	sc.nhlfe = 10;
	CHECK_EQ(e3_node_service_add(&sc, err), 0);
	CHECK_EQ(e3_node_service_add(&sc, err), 0);
	CHECK(!e3_node_changed());
	CHECK_EQ(e3_node_nhlfe_del(10, err), -E3_EBUSY);
	memset(&sc, 0, sizeof(sc));
	sc.id = 2;
	sc.type = E3_SVC_ELAN;
	sc.n_remotes = 2;
	sc.remotes[0] = (struct e3_remote){ 1, 10 };
	sc.remotes[1] = (struct e3_remote){ 1, 10 };
	CHECK_EQ(e3_node_service_add(&sc, err), -E3_EINVAL);      /* source twice */
	sc.remotes[1] = (struct e3_remote){ 2, 99 };
	CHECK_EQ(e3_node_service_add(&sc, err), -E3_ENOENT);      /* nhlfe 99 */
	sc.remotes[1] = (struct e3_remote){ E3_MAX_REMOTES, 10 };
	CHECK_EQ(e3_node_service_add(&sc, err), -E3_EINVAL);
	sc.n_remotes = 1;
	sc.n_branches = 1;
	sc.branches[0] = 10;
	CHECK_EQ(e3_node_service_add(&sc, err), 0);
	CHECK(e3_node_changed());
	/* A failed replace leaves the old one as it was. */
	sc.branches[0] = 12345;
	CHECK_EQ(e3_node_service_add(&sc, err), -E3_ENOENT);
	CHECK_EQ(e3_service_get(2)->branches[0], 10);
	sc.branches[0] = 10;
	sc.type = 9;
	CHECK_EQ(e3_node_service_add(&sc, err), -E3_EINVAL);
	sc.type = E3_SVC_ELAN;

	/* Circuits. */
	struct e3_circuit_conf cc = { .id = 1, .port = "c0", .vlan = 0, .service = 1 };

	CHECK_EQ(e3_node_circuit_add(&cc, err), -E3_EINVAL);
	cc.vlan = 4095;
	CHECK_EQ(e3_node_circuit_add(&cc, err), -E3_EINVAL);
	cc.vlan = 100;
	snprintf(cc.port, sizeof(cc.port), "f0");
	CHECK_EQ(e3_node_circuit_add(&cc, err), -E3_EINVAL);      /* fabric port */
	snprintf(cc.port, sizeof(cc.port), "c0");
	cc.service = 77;
	CHECK_EQ(e3_node_circuit_add(&cc, err), -E3_ENOENT);
	cc.service = 1;
	CHECK_EQ(e3_node_circuit_add(&cc, err), 0);
	CHECK_EQ(e3_node_circuit_add(&cc, err), 0);
	CHECK(!e3_node_changed());
	struct e3_circuit_conf c2 = { .id = 2, .port = "c0", .vlan = 100, .service = 2 };

	CHECK_EQ(e3_node_circuit_add(&c2, err), -E3_EEXIST);      /* (port, vlan) taken */
	c2.vlan = 101;
	c2.service = 1;
	CHECK_EQ(e3_node_circuit_add(&c2, err), -E3_ENOSPC);      /* e-line has its circuit */
	c2.service = 2;
	CHECK_EQ(e3_node_circuit_add(&c2, err), 0);
	CHECK_EQ(e3_service_get(2)->n_circuits, 1);
	CHECK_EQ(e3_node_service_del(1, err), -E3_EBUSY);
	CHECK_EQ(e3_node_port_del("c0", err), -E3_EBUSY);
	/* Re-point circuit 2 to service 1? full. To VLAN 102: moves. */
	c2.vlan = 102;
	CHECK_EQ(e3_node_circuit_add(&c2, err), 0);
	CHECK_EQ(e3_circuit_lookup(port_id_of("c0"), 101), E3_NONE);
	CHECK_EQ(e3_circuit_lookup(port_id_of("c0"), 102), 2);

	/* Labels. */
	struct e3_label_conf lc = { .label = 15, .type = E3_LBL_SWAP, .nhlfe = 10, .service = E3_NONE };

	CHECK_EQ(e3_node_label_add(&lc, err), -E3_EINVAL);
	lc.label = 500;
	lc.nhlfe = 11;
	CHECK_EQ(e3_node_label_add(&lc, err), -E3_ENOENT);
	lc.nhlfe = 10;
	CHECK_EQ(e3_node_label_add(&lc, err), 0);
	CHECK_EQ(e3_node_label_add(&lc, err), 0);
	CHECK(!e3_node_changed());
	struct e3_label_conf l2 = { .label = 501, .type = E3_LBL_ELINE, .service = 2 };

	CHECK_EQ(e3_node_label_add(&l2, err), -E3_EINVAL);        /* 2 is an elan */
	l2.service = 1;
	CHECK_EQ(e3_node_label_add(&l2, err), 0);
	struct e3_label_conf l3 = { .label = 502, .type = E3_LBL_REPLICATE, .rpf_port = "c0",
				    .service = 2, .source = 1, .n_branches = 1, .branches = { 10 } };

	CHECK_EQ(e3_node_label_add(&l3, err), -E3_EINVAL);        /* customer rpf port */
	snprintf(l3.rpf_port, sizeof(l3.rpf_port), "f0");
	CHECK_EQ(e3_node_label_add(&l3, err), 0);
	CHECK_EQ(e3_label_get(502).type, E3_LBL_REPLICATE);
	l3.source = 2;                                            /* replace */
	CHECK_EQ(e3_node_label_add(&l3, err), 0);
	CHECK(e3_node_changed());
	CHECK_EQ(e3_repl_get(e3_label_get(502).index)->source, 2);
	CHECK_EQ(e3_node_service_del(2, err), -E3_EBUSY);
	lc.type = 9;
	CHECK_EQ(e3_node_label_add(&lc, err), -E3_EINVAL);
	CHECK_EQ(e3_label_get(500).type, E3_LBL_SWAP);           /* unchanged */

	/* Tear down in dependency order; each missing one is ENOENT after. */
	CHECK_EQ(e3_node_label_del(500, err), 0);
	CHECK_EQ(e3_node_label_del(500, err), -E3_ENOENT);
	CHECK_EQ(e3_node_label_del(501, err), 0);
	CHECK_EQ(e3_node_label_del(502, err), 0);
	CHECK_EQ(e3_node_circuit_del(1, err), 0);
	CHECK_EQ(e3_node_circuit_del(1, err), -E3_ENOENT);
	CHECK_EQ(e3_node_circuit_del(2, err), 0);
	CHECK_EQ(e3_node_service_del(1, err), 0);
	CHECK_EQ(e3_node_service_del(2, err), 0);
	CHECK_EQ(e3_node_service_del(2, err), -E3_ENOENT);
	CHECK_EQ(e3_node_nhlfe_del(10, err), 0);
	CHECK_EQ(e3_node_nexthop_del(1, err), 0);
	CHECK_EQ(e3_node_port_del("c0", err), 0);
	CHECK_EQ(e3_node_port_del("f0", err), 0);
	CHECK_EQ(e3_node_port_del("f0", err), -E3_ENOENT);
	e3_rcu_reclaim();
}

static void test_ctl_settings(void)
{
	struct e3_settings s;

	e3_node_settings_get(&s);
	CHECK_EQ(s.ttl, 64);
	CHECK(s.control_word);
	s.ttl = 0;
	CHECK_EQ(e3_node_settings_set(&s, err), -E3_EINVAL);
	CHECK_EQ(e3.settings.ttl, 64);
	s.ttl = 32;
	CHECK_EQ(e3_node_settings_set(&s, err), 0);
	CHECK(e3_node_changed());
	CHECK_EQ(e3_node_settings_set(&s, err), 0);
	CHECK(!e3_node_changed());
	s.ttl = 64;
	e3_node_settings_set(&s, err);
	CHECK_EQ(strlen(e3_node_boot_id()), 36);
	CHECK(strcmp(e3_drop_name(E3_DROP_TTL_EXPIRED), "ttl_expired") == 0);
	for (int d = 0; d < E3_DROP_MAX; d++)
		CHECK(e3_drop_name(d) != NULL);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "label_table", test_label_table },
		{ "nhlfe_table", test_nhlfe_table },
		{ "flow_hash", test_flow_hash },
		{ "ecmp_group", test_ecmp_group },
		{ "circuit_table", test_circuit_table },
		{ "service_table", test_service_table },
		{ "mac_table", test_mac_table },
		{ "mac_table_capacity", test_mac_capacity },
		{ "mac_table_concurrent", test_mac_concurrent },
		{ "ctl_settings", test_ctl_settings },
		{ "devargs_allow_list", test_devargs_allow_list },
		{ "ctl_ports", test_ctl_ports },
		{ "ctl_objects", test_ctl_objects },
	};

	/* Not a power of two: the MAC table's buckets are not either. */
	if (harness_init("dpA-ut-tables", 1000) != 0)
		return 1;
	return unit_run(tests, RTE_DIM(tests));
}
