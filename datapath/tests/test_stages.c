/* SPDX-License-Identifier: Apache-2.0
 *
 * test_stages.c - frames built by hand go through the real pipeline
 * (e3_process_burst on worker 0's context) on net_ring ports, and what comes
 * out of the ports is compared byte for byte; drops are checked by reason.
 *
 *   c0, c1: customer ports; f0, f1: fabric ports (MACs 02:aa:..:01/02)
 *   nexthop 1 = f0 -> 02:bb:..:01, nexthop 2 = f1 -> 02:cc:..:01
 *   service 1: e-line c0/100 <-> nhlfe 10 (label 1000 via f0); label 500 terminates it
 *   service 2: e-line hairpin c0/200 <-> c1/untagged
 *   service 3: e-lan c0/300, c1/301; remote source 5 = nhlfe 20 (label 3000),
 *              branch nhlfe 21 (label 3001 via f0); label 700 = ELAN(3, 5)
 *   label 600: SWAP to nhlfe 11 (label 2000 via f1)
 *   label 800: REPLICATE rpf f0, branches nhlfe 22 (4001 via f1), 23 (4000 via f0),
 *              local ELAN(3, 5)
 */
#include <stdlib.h>
#include <string.h>

#include <rte_mempool.h>
#include <rte_random.h>

#include "base/dp.h"
#include "harness.h"
#include "tables/mac_table.h"
#include "port/port.h"
#include "base/rcu.h"
#include "pipeline/stages.h"
#include "worker/stats.h"

static char err[E3_ERRLEN];

#define FA0 "02:aa:00:00:00:01"
#define FA1 "02:aa:00:00:00:02"
#define NB "02:bb:00:00:00:01"
#define NC "02:cc:00:00:00:01"
#define HA "02:00:00:00:00:0a"
#define HB "02:00:00:00:00:0b"
#define HC "02:00:00:00:00:0c"
#define HD "02:00:00:00:00:0d"
#define HE "02:00:00:00:00:0e"
#define BC "ff:ff:ff:ff:ff:ff"

static uint32_t lse(uint32_t label, uint8_t tc, bool s, uint8_t ttl)
{
	return label << 12 | (uint32_t)tc << 9 | (uint32_t)s << 8 | ttl;
}

static void must(int rc)
{
	if (rc < 0) {
		fprintf(stderr, "setup: %s\n", err);
		abort();
	}
}

/* Adds the port, or sets it again; mtu 0: the default. */
static void add_port(const char *name, const char *dev, enum e3_port_kind kind, const char *mac,
		     uint16_t mtu)
{
	struct e3_port_conf c = { .kind = kind, .mtu = mtu };

	snprintf(c.name, sizeof(c.name), "%s", name);
	snprintf(c.devargs, sizeof(c.devargs), "%s", dev);
	for (int q = 0; q < E3_MAX_QUEUES; q++)
		c.worker[q] = -1;
	if (mac)
		mac_parse(mac, c.mac);
	must(e3_node_port_add(&c, err));
}

static void setup(void)
{
	add_port("c0", "net_ring0", E3_PORT_CUSTOMER, NULL, 0);
	add_port("c1", "net_ring1", E3_PORT_CUSTOMER, NULL, 0);
	add_port("f0", "net_ring2", E3_PORT_FABRIC, FA0, 0);
	add_port("f1", "net_ring3", E3_PORT_FABRIC, FA1, 0);
	struct e3_nexthop_conf nh = { .id = 1, .port = "f0" };

	mac_parse(NB, nh.mac);
	must(e3_node_nexthop_add(&nh, err));
	nh = (struct e3_nexthop_conf){ .id = 2, .port = "f1" };
	mac_parse(NC, nh.mac);
	must(e3_node_nexthop_add(&nh, err));
	const struct e3_nhlfe_conf nl[] = {
		{ 10, 1, 1000 }, { 11, 2, 2000 }, { 20, 1, 3000 }, { 21, 1, 3001 },
		{ 22, 2, 4001 }, { 23, 1, 4000 },
	};
	for (unsigned i = 0; i < RTE_DIM(nl); i++)
		must(e3_node_nhlfe_add(&nl[i], err));
	static struct e3_service_conf s;

	s = (struct e3_service_conf){ .id = 1, .type = E3_SVC_ELINE, .nhlfe = 10 };
	must(e3_node_service_add(&s, err));
	s = (struct e3_service_conf){ .id = 2, .type = E3_SVC_ELINE, .nhlfe = E3_NONE };
	must(e3_node_service_add(&s, err));
	s = (struct e3_service_conf){ .id = 3, .type = E3_SVC_ELAN, .n_remotes = 1, .n_branches = 1 };
	s.remotes[0] = (struct e3_remote){ .source = 5, .nhlfe = 20 };
	s.branches[0] = 21;
	must(e3_node_service_add(&s, err));
	const struct e3_circuit_conf cc[] = {
		{ 1, "c0", 100, 1 }, { 2, "c0", 200, 2 }, { 3, "c1", E3_VLAN_UNTAGGED, 2 },
		{ 4, "c0", 300, 3 }, { 5, "c1", 301, 3 },
	};
	for (unsigned i = 0; i < RTE_DIM(cc); i++)
		must(e3_node_circuit_add(&cc[i], err));
	static struct e3_label_conf l;

	l = (struct e3_label_conf){ .label = 500, .type = E3_LBL_ELINE, .service = 1 };
	must(e3_node_label_add(&l, err));
	l = (struct e3_label_conf){ .label = 600, .type = E3_LBL_SWAP, .nhlfe = 11, .service = E3_NONE };
	must(e3_node_label_add(&l, err));
	l = (struct e3_label_conf){ .label = 700, .type = E3_LBL_ELAN, .service = 3, .source = 5 };
	must(e3_node_label_add(&l, err));
	l = (struct e3_label_conf){ .label = 800, .type = E3_LBL_REPLICATE, .rpf_port = "f0",
				    .service = 3, .source = 5, .n_branches = 2, .branches = { 22, 23 } };
	must(e3_node_label_add(&l, err));
}

/* Receive exactly one frame from port and compare it with want. */
static void expect_one(const char *port, const struct frame *want)
{
	struct rte_mbuf *m[8];
	unsigned n = tx_of(port, m, 8);

	CHECK_EQ(n, 1);
	if (n >= 1) {
		CHECK_EQ(rte_pktmbuf_pkt_len(m[0]), want->len);
		CHECK_MEM(bytes_of(m[0]), want->b, RTE_MIN(want->len, rte_pktmbuf_pkt_len(m[0])));
	}
	rte_pktmbuf_free_bulk(m, n);
}

static void expect_none(const char *port)
{
	CHECK_EQ(tx_drain(port), 0);
}

static void test_eline_encap(void)
{
	struct frame in, want;

	fr_eth(&in, HB, HA);
	fr_tag(&in, 0x8100, 5, 100);
	fr_type(&in, 0x0800);
	fr_pad(&in, 46, 0x11);
	rx_frame("c0", &in);
	fr_eth(&want, NB, FA0);
	fr_type(&want, 0x8847);
	fr_u32(&want, lse(1000, 5, 1, 64));
	fr_u32(&want, 0);                        /* control word */
	fr_bytes(&want, in.b, 12);               /* customer frame, tag popped */
	fr_type(&want, 0x0800);
	fr_pad(&want, 46, 0x11);
	expect_one("f0", &want);
	expect_none("c1");

	/* Control word off: 18 bytes of overhead. */
	e3.settings.control_word = false;
	rx_frame("c0", &in);
	struct frame w2;

	fr_eth(&w2, NB, FA0);
	fr_type(&w2, 0x8847);
	fr_u32(&w2, lse(1000, 5, 1, 64));
	fr_bytes(&w2, want.b + 22, want.len - 22);
	expect_one("f0", &w2);
	e3.settings.control_word = true;
}

/* A labelled frame for us on f0: label entry, then (CW +) customer frame. */
static void labelled(struct frame *f, const char *dst, uint32_t l, bool cw, const char *idst,
		     const char *isrc)
{
	fr_eth(f, dst, NB);
	fr_type(f, 0x8847);
	fr_u32(f, l);
	if (cw)
		fr_u32(f, 0);
	uint16_t at = f->len;
	struct frame i;

	fr_eth(&i, idst, isrc);
	fr_type(&i, 0x0800);
	fr_pad(&i, 50, 0x22);
	memcpy(f->b + at, i.b, i.len);
	f->len = at + i.len;
}

/* The customer frame (idst, isrc, 0800, 50 x 0x22) with a tag. */
static void tagged(struct frame *f, const char *idst, const char *isrc, uint8_t pcp, int vlan)
{
	fr_eth(f, idst, isrc);
	if (vlan >= 0)
		fr_tag(f, 0x8100, pcp, (uint16_t)vlan);
	fr_type(f, 0x0800);
	fr_pad(f, 50, 0x22);
}

/* A tagged frame (as tagged() makes it) into port. */
static void send_tagged(const char *port, const char *idst, const char *isrc, uint8_t pcp, int vlan)
{
	struct frame f;

	tagged(&f, idst, isrc, pcp, vlan);
	rx_frame(port, &f);
}

static void test_eline_term(void)
{
	struct frame in, want;

	labelled(&in, FA0, lse(500, 3, 1, 60), true, HA, HB);
	rx_frame("f0", &in);
	tagged(&want, HA, HB, 3, 100);           /* VLAN pushed, PCP = TC */
	expect_one("c0", &want);
}

static void test_hairpin(void)
{
	struct frame in, want;

	tagged(&in, HB, HA, 2, 200);
	rx_frame("c0", &in);
	tagged(&want, HB, HA, 0, -1);            /* untagged circuit: no push */
	expect_one("c1", &want);
	tagged(&in, HA, HB, 0, -1);
	rx_frame("c1", &in);
	tagged(&want, HA, HB, 0, 200);
	expect_one("c0", &want);
}

static void test_swap(void)
{
	struct frame in, want;

	labelled(&in, FA0, lse(600, 4, 1, 10), true, HA, HB);
	rx_frame("f0", &in);
	want = in;
	uint8_t hdr[14];

	mac_parse(NC, hdr);
	mac_parse(FA1, hdr + 6);
	memcpy(want.b, hdr, 12);
	uint32_t l = rte_cpu_to_be_32(lse(2000, 4, 1, 9));

	memcpy(want.b + 14, &l, 4);
	expect_one("f1", &want);
	expect_none("f0");
}

#define EXPECT_DROP(port, reason, ...) do { \
	uint64_t _before = drops(port, reason); \
	__VA_ARGS__; \
	CHECK_EQ(drops(port, reason) - _before, 1); \
} while (0)

/* A frame from A to B on vlan, of ethertype type, padded to len bytes. */
static void from_a(struct frame *f, uint16_t vlan, uint16_t type, uint16_t len)
{
	fr_eth(f, HB, HA);
	fr_tag(f, 0x8100, 0, vlan);
	fr_type(f, type);
	fr_pad(f, len, 0);
}

static void test_customer_drops(void)
{
	struct frame f;

	fr_eth(&f, HB, HA);
	f.len = 10;
	EXPECT_DROP("c0", E3_DROP_TRUNCATED, rx_frame("c0", &f));
	fr_eth(&f, HB, HA);
	fr_type(&f, 0x8100);                     /* tag cut short */
	EXPECT_DROP("c0", E3_DROP_TRUNCATED, rx_frame("c0", &f));
	fr_eth(&f, HB, HA);
	fr_type(&f, 0x8847);
	fr_u32(&f, lse(500, 0, 1, 64));
	fr_pad(&f, 60, 0);
	EXPECT_DROP("c1", E3_DROP_CUSTOMER_LABELLED, rx_frame("c1", &f));
	from_a(&f, 100, 0x8848, 60);
	EXPECT_DROP("c0", E3_DROP_CUSTOMER_LABELLED, rx_frame("c0", &f));
	from_a(&f, 999, 0x0800, 60);
	EXPECT_DROP("c0", E3_DROP_NO_CIRCUIT, rx_frame("c0", &f));
	/* MTU 1500: 1500 + 14 + 4 passes, one more byte does not. */
	from_a(&f, 100, 0x0800, 1500);
	uint64_t tx0 = drops("c0", E3_DROP_OVERSIZE);

	rx_frame("c0", &f);
	CHECK_EQ(drops("c0", E3_DROP_OVERSIZE), tx0);
	CHECK_EQ(tx_drain("f0"), 1);
	f.b[f.len++] = 0;
	EXPECT_DROP("c0", E3_DROP_OVERSIZE, rx_frame("c0", &f));
	/* QinQ: a customer tag inside counts 4 more bytes. */
	fr_eth(&f, HB, HA);
	fr_tag(&f, 0x8100, 0, 100);
	fr_tag(&f, 0x8100, 0, 7);
	fr_type(&f, 0x0800);
	fr_pad(&f, 1500, 0);
	rx_frame("c0", &f);
	CHECK_EQ(tx_drain("f0"), 1);
	expect_none("c1");
}

static void test_fabric_drops(void)
{
	struct frame f;

	labelled(&f, NC, lse(500, 0, 1, 64), true, HA, HB);
	EXPECT_DROP("f0", E3_DROP_NOT_FOR_US, rx_frame("f0", &f));
	labelled(&f, BC, lse(500, 0, 1, 64), true, HA, HB);
	EXPECT_DROP("f0", E3_DROP_BAD_ETHERTYPE, rx_frame("f0", &f));
	fr_eth(&f, FA0, NB);
	fr_type(&f, 0x0800);
	fr_pad(&f, 60, 0);
	EXPECT_DROP("f0", E3_DROP_BAD_ETHERTYPE, rx_frame("f0", &f));
	fr_eth(&f, FA0, NB);
	fr_type(&f, 0x8847);
	fr_type(&f, 0);
	EXPECT_DROP("f0", E3_DROP_TRUNCATED, rx_frame("f0", &f));
	labelled(&f, FA0, lse(3, 0, 1, 64), true, HA, HB);
	EXPECT_DROP("f0", E3_DROP_LABEL_RESERVED, rx_frame("f0", &f));
	labelled(&f, FA0, lse(500, 0, 0, 64), true, HA, HB);
	EXPECT_DROP("f0", E3_DROP_LABEL_STACKED, rx_frame("f0", &f));
	labelled(&f, FA0, lse(999, 0, 1, 64), true, HA, HB);
	EXPECT_DROP("f0", E3_DROP_LABEL_UNKNOWN, rx_frame("f0", &f));
	labelled(&f, FA0, lse(600, 0, 1, 1), true, HA, HB);     /* transit needs TTL >= 2 */
	EXPECT_DROP("f0", E3_DROP_TTL_EXPIRED, rx_frame("f0", &f));
	labelled(&f, FA0, lse(500, 0, 1, 0), true, HA, HB);     /* leaf: 0 */
	EXPECT_DROP("f0", E3_DROP_TTL_EXPIRED, rx_frame("f0", &f));
	labelled(&f, FA0, lse(500, 0, 1, 1), true, HA, HB);     /* leaf: 1 is fine */
	rx_frame("f0", &f);
	CHECK_EQ(tx_drain("c0"), 1);
	labelled(&f, FA0, lse(500, 0, 1, 64), true, HA, HB);
	f.b[18] = 0x45;                                          /* IPv4 where the CW should be */
	EXPECT_DROP("f0", E3_DROP_BAD_CONTROL_WORD, rx_frame("f0", &f));
	labelled(&f, FA0, lse(500, 0, 1, 64), true, HA, HB);
	f.len = 24;                                              /* CW but no inner header */
	EXPECT_DROP("f0", E3_DROP_TRUNCATED, rx_frame("f0", &f));
	labelled(&f, FA1, lse(800, 0, 1, 64), true, BC, HB);
	EXPECT_DROP("f1", E3_DROP_RPF_FAIL, rx_frame("f1", &f));
	fr_eth(&f, FA0, NB);
	fr_type(&f, 0x8847);
	fr_u32(&f, lse(600, 0, 1, 64));
	fr_pad(&f, 2000 - 4 + 1, 0);                             /* MTU 2000 */
	EXPECT_DROP("f0", E3_DROP_OVERSIZE, rx_frame("f0", &f));
	expect_none("c0");
	expect_none("c1");
	expect_none("f0");
	expect_none("f1");
}

/* The label in the frame out of a fabric port. */
static uint32_t label_of(struct rte_mbuf *m)
{
	uint32_t l;

	memcpy(&l, bytes_of(m) + 14, 4);
	return rte_be_to_cpu_32(l) >> 12;
}

/* One frame out of port, carrying label. */
static void expect_label(const char *port, uint32_t label)
{
	struct rte_mbuf *m[8];
	unsigned n = tx_of(port, m, 8);

	CHECK_EQ(n, 1);
	if (n == 1)
		CHECK_EQ(label_of(m[0]), label);
	rte_pktmbuf_free_bulk(m, n);
}

static uint16_t vlan_of(struct rte_mbuf *m)
{
	const uint8_t *d = bytes_of(m);

	return d[12] == 0x81 ? ((d[14] << 8 | d[15]) & 0xfff) : E3_VLAN_UNTAGGED;
}

static void test_elan(void)
{
	struct frame f, want;
	struct rte_mbuf *m[8];
	unsigned n;

	/* a. unknown unicast from c0/300: to c1/301 and to the branch. */
	send_tagged("c0", HB, HA, 1, 300);
	tagged(&want, HB, HA, 1, 301);
	expect_one("c1", &want);
	n = tx_of("f0", m, 8);
	CHECK_EQ(n, 1);
	if (n == 1) {
		CHECK_EQ(label_of(m[0]), 3001);
		CHECK_EQ(rte_pktmbuf_pkt_len(m[0]), 22 + 64);
	}
	rte_pktmbuf_free_bulk(m, n);
	/* b. from the fabric (source 5), to A: known, on c0/300, PCP = TC. */
	labelled(&f, FA0, lse(700, 6, 1, 60), true, HA, HB);
	rx_frame("f0", &f);
	tagged(&want, HA, HB, 6, 300);
	expect_one("c0", &want);
	expect_none("c1");
	/* c. A to B: B was learned behind source 5 -> its nhlfe (label 3000). */
	send_tagged("c0", HB, HA, 0, 300);
	expect_label("f0", 3000);
	expect_none("c1");
	/* d. C (c1/301) to A: local unicast, c0/300. */
	send_tagged("c1", HA, HC, 0, 301);
	tagged(&want, HA, HC, 0, 300);
	expect_one("c0", &want);
	/* e. D on c0/300 to A, also on c0/300: same circuit. */
	tagged(&f, HA, HD, 0, 300);
	EXPECT_DROP("c0", E3_DROP_SAME_CIRCUIT, rx_frame("c0", &f));
	/* f. From the fabric to B, which is behind the fabric: split horizon. */
	labelled(&f, FA0, lse(700, 0, 1, 60), true, HB, HE);
	EXPECT_DROP("f0", E3_DROP_SPLIT_HORIZON, rx_frame("f0", &f));
	/* g. Broadcast from the fabric: every local circuit, never the fabric. */
	labelled(&f, FA0, lse(700, 0, 1, 60), true, BC, HE);
	rx_frame("f0", &f);
	CHECK_EQ(tx_drain("c0"), 1);
	CHECK_EQ(tx_drain("c1"), 1);
	expect_none("f0");
	expect_none("f1");
	/* h. B moves to c1/301; A to B then goes there. */
	send_tagged("c1", BC, HB, 0, 301);
	CHECK_EQ(tx_drain("c0"), 1);
	CHECK_EQ(tx_drain("f0"), 1);                             /* flood to the branch */
	send_tagged("c0", HB, HA, 0, 300);
	tagged(&want, HB, HA, 0, 301);
	expect_one("c1", &want);
	expect_none("f0");
	/* A burst of mixed frames goes through elan_in together. */
	struct rte_mbuf *burst[6];

	for (int i = 0; i < 6; i++) {
		tagged(&f, i % 2 ? HB : HC, HA, 0, 300);
		burst[i] = mk(&f);
	}
	rx_on("c0", burst, 6);
	CHECK_EQ(tx_drain("c1"), 6);
	expect_none("f0");
	uint32_t flushed = e3_mac_flush(3, E3_NONE);

	CHECK_EQ(flushed, 5);                                    /* A, B, C, D, E */
}

static void test_replicate(void)
{
	struct frame f;
	struct rte_mbuf *m[8];

	/* From the RPF port: a copy to the f1 branch (not back to f0),
	 * and local delivery to both circuits. */
	labelled(&f, FA0, lse(800, 2, 1, 20), true, BC, HB);
	rx_frame("f0", &f);
	unsigned n = tx_of("f1", m, 8);

	CHECK_EQ(n, 1);
	if (n == 1) {
		uint8_t want_hdr[12];

		mac_parse(NC, want_hdr);
		mac_parse(FA1, want_hdr + 6);
		CHECK_MEM(bytes_of(m[0]), want_hdr, 12);
		uint32_t l;

		memcpy(&l, bytes_of(m[0]) + 14, 4);
		CHECK_EQ(rte_be_to_cpu_32(l), lse(4001, 2, 1, 19));
		CHECK_MEM(bytes_of(m[0]) + 18, f.b + 18, f.len - 18);
	}
	rte_pktmbuf_free_bulk(m, n);
	expect_none("f0");
	n = tx_of("c0", m, 8);
	CHECK_EQ(n, 1);
	if (n == 1)
		CHECK_EQ(vlan_of(m[0]), 300);
	rte_pktmbuf_free_bulk(m, n);
	n = tx_of("c1", m, 8);
	CHECK_EQ(n, 1);
	if (n == 1)
		CHECK_EQ(vlan_of(m[0]), 301);
	rte_pktmbuf_free_bulk(m, n);
	/* TTL 1: local delivery only, the copy is counted as expired. */
	labelled(&f, FA0, lse(800, 2, 1, 1), true, BC, HB);
	EXPECT_DROP("f0", E3_DROP_TTL_EXPIRED, rx_frame("f0", &f));
	CHECK_EQ(tx_drain("c0"), 1);
	CHECK_EQ(tx_drain("c1"), 1);
	expect_none("f1");
	e3_mac_flush(3, E3_NONE);
}

static void test_link_down(void)
{
	/* The fabric link goes down: frames toward it are counted, not sent. */
	struct frame in;
	struct e3_port *p = e3_port_tbl[port_id_of("f0")];

	tagged(&in, HB, HA, 0, 100);
	p->link_up = 0;
	EXPECT_DROP("c0", E3_DROP_NO_NEXTHOP, rx_frame("c0", &in));
	expect_none("f0");
	p->link_up = 1;
	rx_frame("c0", &in);
	CHECK_EQ(tx_drain("f0"), 1);
}

struct trace_seen {
	unsigned n;
	char path[512], verdict[64];
	uint16_t len;
};

static void on_record(const struct e3_trace_record *r, void *arg)
{
	struct trace_seen *t = arg;

	if (t->n++ == 0) {
		snprintf(t->path, sizeof(t->path), "%s", r->path);
		snprintf(t->verdict, sizeof(t->verdict), "%s", r->verdict);
		t->len = r->len;
	}
}

static void test_trace(void)
{
	struct e3_trace_filter tf = { .port = "c0", .vlan = 100, .label = -1 };
	struct trace_seen t = { 0 };
	struct frame f;

	CHECK_EQ(e3_node_trace_start(&tf, 0, err), -E3_EINVAL);
	CHECK_EQ(e3_node_trace_start(&tf, 2000, err), -E3_EINVAL);
	CHECK_EQ(e3_node_trace_start(&tf, 1, err), 0);
	tagged(&f, HB, HA, 0, 200);                  /* other VLAN: not traced */
	rx_frame("c0", &f);
	tx_drain("c1");
	tagged(&f, HB, HA, 0, 100);
	rx_frame("c0", &f);
	rx_frame("c0", &f);                          /* only one was asked for */
	tx_drain("f0");
	e3_node_trace_walk(on_record, &t);
	CHECK_EQ(t.n, 1);
	CHECK_EQ(t.len, f.len);
	CHECK(strstr(t.path, "customer-in c0 vlan 100") != NULL);
	CHECK(strstr(t.path, "eline-encap service 1") != NULL);
	CHECK(strncmp(t.verdict, "tx f0 label 1000", 16) == 0);
	/* A drop's verdict names the reason. */
	struct e3_trace_filter tl = { .port = "", .vlan = -1, .label = 999 };

	CHECK_EQ(e3_node_trace_start(&tl, 5, err), 0);
	labelled(&f, FA0, lse(999, 0, 1, 64), true, HA, HB);
	rx_frame("f0", &f);
	memset(&t, 0, sizeof(t));
	e3_node_trace_walk(on_record, &t);
	CHECK_EQ(t.n, 1);
	CHECK(strcmp(t.verdict, "drop label_unknown") == 0);
}

/* Every mbuf of every pool back where it was. */
struct pools { unsigned pkt, hdr, clone; };

static struct pools pools_now(void)
{
	return (struct pools){ rte_mempool_avail_count(e3.pool),
			       rte_mempool_avail_count(e3.hdr_pool),
			       rte_mempool_avail_count(e3.clone_pool) };
}

#define CHECK_POOLS(p0) do { \
	struct pools _p = pools_now(); \
	CHECK_EQ(_p.pkt, (p0).pkt); \
	CHECK_EQ(_p.hdr, (p0).hdr); \
	CHECK_EQ(_p.clone, (p0).clone); \
} while (0)

/* The customer frame of tagged() padded to len bytes (untagged length). */
static void tagged_len(struct frame *f, const char *idst, const char *isrc, uint8_t pcp, int vlan,
		       uint16_t len)
{
	tagged(f, idst, isrc, pcp, vlan);
	fr_pad(f, (uint16_t)(len + (vlan >= 0 ? 4 : 0) - f->len), 0x22);
}

/* A flood's copies of a large frame are header mbufs chained to clones of
 * it (of a small one, full copies): each has its own VLAN, label and MACs,
 * and nothing leaks, even when the header or clone pool runs dry.
 *   service 6: c0/600 (in), c0/601, c1/602, c2 untagged; branches 21, 22 */
static void test_flood_copies(void)
{
	struct pools p0 = pools_now();
	struct frame f, want;
	struct rte_mbuf *m[8];
	unsigned n;

	add_port("c2", "net_ring4", E3_PORT_CUSTOMER, NULL, 0);
	static struct e3_service_conf s;

	s = (struct e3_service_conf){ .id = 6, .type = E3_SVC_ELAN, .n_branches = 2,
				      .branches = { 21, 22 } };
	must(e3_node_service_add(&s, err));
	const struct e3_circuit_conf cc[] = {
		{ 60, "c0", 600, 6 }, { 61, "c0", 601, 6 }, { 62, "c1", 602, 6 },
		{ 63, "c2", E3_VLAN_UNTAGGED, 6 },
	};
	for (unsigned k = 0; k < RTE_DIM(cc); k++)
		must(e3_node_circuit_add(&cc[k], err));

	for (unsigned big = 0; big < 2; big++) {
		uint16_t len = big ? 1000 : 64;   /* > and <= E3_COPY_MAX */

		tagged_len(&f, BC, HA, 5, 600, len);
		rx_frame("c0", &f);
		tagged_len(&want, BC, HA, 5, 601, len);
		expect_one("c0", &want);
		tagged_len(&want, BC, HA, 5, 602, len);
		expect_one("c1", &want);
		tagged_len(&want, BC, HA, 5, -1, len);
		expect_one("c2", &want);
		/* Branches: Ethernet to the neighbour, label, CW, the popped frame. */
		const struct { const char *port, *nb, *us; uint32_t label; } br[] = {
			{ "f0", NB, FA0, 3001 }, { "f1", NC, FA1, 4001 },
		};
		for (unsigned k = 0; k < RTE_DIM(br); k++) {
			fr_eth(&want, br[k].nb, br[k].us);
			fr_type(&want, 0x8847);
			fr_u32(&want, lse(br[k].label, 5, 1, 64));
			fr_u32(&want, 0);
			tagged_len(&f, BC, HA, 0, -1, len);
			fr_bytes(&want, f.b, f.len);
			n = tx_of(br[k].port, m, 8);
			CHECK_EQ(n, 1);
			if (n == 1) {
				CHECK_EQ(rte_pktmbuf_pkt_len(m[0]), want.len);
				CHECK_MEM(bytes_of(m[0]), want.b, want.len);
				CHECK_EQ(m[0]->nb_segs, big ? 2 : 1);
			}
			rte_pktmbuf_free_bulk(m, n);
		}
	}
	CHECK_POOLS(p0);

	/* With the header pool empty, the copies that need a header are
	 * no_mbuf; the untagged one (a bare clone) still goes. */
	struct rte_mbuf *hold[8192];
	unsigned held = 0;

	while (held < RTE_DIM(hold) && (hold[held] = rte_pktmbuf_alloc(e3.hdr_pool)) != NULL)
		held++;
	uint64_t before = drops("c0", E3_DROP_NO_MBUF);

	tagged_len(&f, BC, HA, 0, 600, 1000);
	rx_frame("c0", &f);
	/* c0/601, c1/602, f0, f1 need headers: the original (last) included. */
	CHECK_EQ(drops("c0", E3_DROP_NO_MBUF) - before, 4);
	CHECK_EQ(tx_drain("c2"), 1);
	expect_none("c0");
	expect_none("c1");
	expect_none("f0");
	expect_none("f1");
	rte_pktmbuf_free_bulk(hold, held);
	/* And with the clone pool empty: only the original goes (last, to f1). */
	held = 0;
	while (held < RTE_DIM(hold) && (hold[held] = rte_pktmbuf_alloc(e3.clone_pool)) != NULL)
		held++;
	before = drops("c0", E3_DROP_NO_MBUF);
	rx_frame("c0", &f);
	CHECK_EQ(drops("c0", E3_DROP_NO_MBUF) - before, 4);
	CHECK_EQ(tx_drain("f1"), 1);
	for (unsigned k = 0; k < 4; k++)
		expect_none((const char *[]){ "c0", "c1", "c2", "f0" }[k]);
	rte_pktmbuf_free_bulk(hold, held);

	e3_mac_flush(6, E3_NONE);
	for (unsigned k = 0; k < RTE_DIM(cc); k++)
		must(e3_node_circuit_del(cc[k].id, err));
	must(e3_node_service_del(6, err));
	must(e3_node_port_del("c2", err));
	CHECK_POOLS(p0);
}

/* REPLICATE copies share the frame with its local delivery, which pushes
 * a VLAN: neither may see the other's headers. */
static void test_replicate_shared(void)
{
	struct pools p0 = pools_now();
	struct frame f, want;
	struct rte_mbuf *m[8];

	/* A known local destination: delivery is a unicast VLAN push on the
	 * frame the branch copy points into. */
	send_tagged("c0", HB, HA, 0, 300);                           /* learn A on c0/300 */
	tx_drain("c1");
	tx_drain("f0");
	labelled(&f, FA0, lse(800, 1, 1, 20), true, HA, HB);
	fr_pad(&f, 900, 0x22);                        /* > E3_COPY_MAX: clones */
	rx_frame("f0", &f);
	unsigned n = tx_of("f1", m, 8);

	CHECK_EQ(n, 1);
	if (n == 1) {
		want = f;
		mac_parse(NC, want.b);
		mac_parse(FA1, want.b + 6);
		uint32_t l = rte_cpu_to_be_32(lse(4001, 1, 1, 19));

		memcpy(want.b + 14, &l, 4);
		CHECK_EQ(rte_pktmbuf_pkt_len(m[0]), want.len);
		CHECK_MEM(bytes_of(m[0]), want.b, want.len);
	}
	rte_pktmbuf_free_bulk(m, n);
	tagged(&want, HA, HB, 1, 300);
	fr_pad(&want, 900, 0x22);
	expect_one("c0", &want);
	expect_none("c1");
	expect_none("f0");
	e3_mac_flush(3, E3_NONE);
	CHECK_POOLS(p0);
}

/* Egress MTU: a frame that grows past the egress port's MTU (VLAN push on a
 * customer port, encapsulation on a fabric port) is oversize on that port. */
static void test_egress_mtu(void)
{
	struct frame f;
	uint64_t f0_over = drops("f0", E3_DROP_OVERSIZE), c0_over = drops("c0", E3_DROP_OVERSIZE);

	/* Customer: 1514 untagged from the fabric + the pushed tag = 1518,
	 * what MTU 1500 allows with one tag; one byte more is oversize on c0. */
	labelled(&f, FA0, lse(500, 0, 1, 60), true, HA, HB);
	fr_pad(&f, (uint16_t)(22 + 1514 - f.len), 0x33);
	rx_frame("f0", &f);
	CHECK_EQ(tx_drain("c0"), 1);
	fr_pad(&f, 1, 0x33);
	EXPECT_DROP("c0", E3_DROP_OVERSIZE, rx_frame("f0", &f));
	expect_none("c0");
	CHECK_EQ(drops("f0", E3_DROP_OVERSIZE), f0_over);
	/* ...unless the customer frame carries its own tag (QinQ out). */
	struct frame q;

	fr_eth(&q, HA, HB);
	fr_tag(&q, 0x8100, 0, 7);
	fr_type(&q, 0x0800);
	fr_pad(&q, (uint16_t)(1518 - q.len), 0x44);
	labelled(&f, FA0, lse(500, 0, 1, 60), true, HA, HB);
	memcpy(f.b + 22, q.b, q.len);
	f.len = 22 + q.len;
	rx_frame("f0", &f);
	CHECK_EQ(tx_drain("c0"), 1);
	/* Fabric: a 1518-byte tagged customer frame is 1514 + 22 = 1536 on f0;
	 * with f0's MTU at 1500 it is oversize on f0, not on c0. */
	tagged(&f, HB, HA, 0, 100);
	fr_pad(&f, (uint16_t)(1518 - f.len), 0x55);
	add_port("f0", "net_ring2", E3_PORT_FABRIC, FA0, 1500);
	EXPECT_DROP("f0", E3_DROP_OVERSIZE, rx_frame("c0", &f));
	expect_none("f0");
	add_port("f0", "net_ring2", E3_PORT_FABRIC, FA0, 1522);
	rx_frame("c0", &f);
	CHECK_EQ(tx_drain("f0"), 1);
	add_port("f0", "net_ring2", E3_PORT_FABRIC, FA0, 2000);
	CHECK_EQ(drops("c0", E3_DROP_OVERSIZE), c0_over + 1);
	/* SWAP: the frame keeps its size (118 = MTU 104 + 14); MTU 103 refuses it. */
	uint64_t f1_over = drops("f1", E3_DROP_OVERSIZE);

	labelled(&f, FA0, lse(600, 0, 1, 10), true, HA, HB);
	fr_pad(&f, (uint16_t)(14 + 104 - f.len), 0x66);
	add_port("f1", "net_ring3", E3_PORT_FABRIC, FA1, 104);
	rx_frame("f0", &f);
	CHECK_EQ(tx_drain("f1"), 1);
	add_port("f1", "net_ring3", E3_PORT_FABRIC, FA1, 103);
	rx_frame("f0", &f);
	expect_none("f1");
	CHECK_EQ(drops("f1", E3_DROP_OVERSIZE), f1_over + 1);
	add_port("f1", "net_ring3", E3_PORT_FABRIC, FA1, 2000);
}

/* One burst into the E-Line: the pushed header is made once for the frames
 * that go the same way (e3_out_push), so each must still get its own PCP,
 * its own length check and its own bytes, in order. */
static void test_push_burst(void)
{
	static const uint8_t pcp[] = { 5, 5, 3, 3, 5, 5, 1 };
	static const uint16_t pad[] = { 46, 46, 46, 46, 1492, 46, 46 };   /* [4]: fits c0, not f0 */
	struct rte_mbuf *m[RTE_DIM(pcp)];
	struct frame in[RTE_DIM(pcp)];
	uint64_t over = drops("f0", E3_DROP_OVERSIZE);

	add_port("f0", "net_ring2", E3_PORT_FABRIC, FA0, 1500);
	for (unsigned k = 0; k < RTE_DIM(pcp); k++) {
		fr_eth(&in[k], HB, HA);
		fr_tag(&in[k], 0x8100, pcp[k], 100);
		fr_type(&in[k], 0x0800);
		fr_pad(&in[k], pad[k], (uint8_t)k);
		m[k] = mk(&in[k]);
	}
	rx_on("c0", m, RTE_DIM(pcp));
	struct rte_mbuf *out[8];
	unsigned n = tx_of("f0", out, 8);

	CHECK_EQ(n, RTE_DIM(pcp) - 1);
	for (unsigned j = 0, k = 0; j < n && k < RTE_DIM(pcp); j++, k++) {
		struct frame want;

		if (k == 4)
			k++;
		fr_eth(&want, NB, FA0);
		fr_type(&want, 0x8847);
		fr_u32(&want, lse(1000, pcp[k], 1, 64));
		fr_u32(&want, 0);
		fr_bytes(&want, in[k].b, 12);
		fr_type(&want, 0x0800);
		fr_pad(&want, pad[k], (uint8_t)k);
		CHECK_EQ(rte_pktmbuf_pkt_len(out[j]), want.len);
		CHECK_MEM(bytes_of(out[j]), want.b, RTE_MIN(want.len, rte_pktmbuf_pkt_len(out[j])));
	}
	rte_pktmbuf_free_bulk(out, n);
	CHECK_EQ(drops("f0", E3_DROP_OVERSIZE), over + 1);
	add_port("f0", "net_ring2", E3_PORT_FABRIC, FA0, 2000);
}

/* One burst of several VLANs on c0: customer_in keeps the circuit it found
 * last, so each frame must still land in its own VLAN's circuit. VLAN 100
 * is the E-Line to f0, VLAN 200 the hairpin to c1, VLAN 999 and the
 * priority tag (VLAN 0, untagged for the lookup) have no circuit on c0. */
static void test_circuit_burst(void)
{
	static const int vlan[] = { 100, 200, 100, 999, 100, 0, 200, 100 };
	struct rte_mbuf *m[RTE_DIM(vlan)];
	struct frame in[RTE_DIM(vlan)];
	uint64_t none = drops("c0", E3_DROP_NO_CIRCUIT);
	struct e3_circ_ctr c1_before, c2_before, c1, c2;
	struct e3_svc_ctr s1_before, s2_before, s1, s2;

	e3_stats_circ(1, &c1_before);
	e3_stats_circ(2, &c2_before);
	e3_stats_svc(1, &s1_before);
	e3_stats_svc(2, &s2_before);
	for (unsigned k = 0; k < RTE_DIM(vlan); k++) {
		tagged(&in[k], HB, HA, 0, vlan[k]);
		in[k].b[in[k].len - 1] = (uint8_t)k;    /* which frame it is */
		m[k] = mk(&in[k]);
	}
	rx_on("c0", m, RTE_DIM(vlan));
	/* Each circuit and service counted its own frames, however the VLANs
	 * interleave (circuit 1: VLAN 100, service 1; circuit 2: 200, service 2). */
	e3_stats_circ(1, &c1);
	e3_stats_circ(2, &c2);
	e3_stats_svc(1, &s1);
	e3_stats_svc(2, &s2);
	CHECK_EQ(c1.rx_pkts - c1_before.rx_pkts, 4);
	CHECK_EQ(c1.rx_bytes - c1_before.rx_bytes, 4 * in[0].len);
	CHECK_EQ(c2.rx_pkts - c2_before.rx_pkts, 2);
	CHECK_EQ(c2.rx_bytes - c2_before.rx_bytes, 2 * in[1].len);
	CHECK_EQ(s1.rx_pkts - s1_before.rx_pkts, 4);
	CHECK_EQ(s1.rx_bytes - s1_before.rx_bytes, 4 * in[0].len);
	CHECK_EQ(s2.rx_pkts - s2_before.rx_pkts, 2);
	CHECK_EQ(s2.rx_bytes - s2_before.rx_bytes, 2 * in[1].len);
	struct rte_mbuf *out[8];
	unsigned n = tx_of("f0", out, 8);
	static const uint8_t to_f0[] = { 0, 2, 4, 7 };

	CHECK_EQ(n, RTE_DIM(to_f0));
	for (unsigned j = 0; j < n && j < RTE_DIM(to_f0); j++) {
		CHECK_EQ(rte_pktmbuf_pkt_len(out[j]), 22 + in[0].len - 4);
		CHECK_EQ(bytes_of(out[j])[rte_pktmbuf_pkt_len(out[j]) - 1], to_f0[j]);
	}
	rte_pktmbuf_free_bulk(out, n);
	n = tx_of("c1", out, 8);
	CHECK_EQ(n, 2);
	for (unsigned j = 0; j < n && j < 2; j++) {
		CHECK_EQ(rte_pktmbuf_pkt_len(out[j]), in[1].len - 4);   /* untagged circuit */
		CHECK_EQ(bytes_of(out[j])[rte_pktmbuf_pkt_len(out[j]) - 1], j == 0 ? 1 : 6);
	}
	rte_pktmbuf_free_bulk(out, n);
	CHECK_EQ(drops("c0", E3_DROP_NO_CIRCUIT), none + 2);
}

static bool mac_find(uint32_t service, const char *mac, struct e3_mac_info *out);

/* One burst of the same MACs from two circuits of an E-LAN on c0: elan_in
 * sends a frame the way the last one went only when it also came from the
 * same circuit. A sits on c0/700: from c0/701 a frame to A goes there,
 * from c0/700 it is same_circuit. Likewise elan_term by the remote source:
 * B's frames to A from sources 5 then 6 leave B learned behind 6. */
static void test_conversation_burst(void)
{
	static const int vlan[] = { 701, 701, 700, 701, 700, 700 };
	static struct e3_service_conf s;
	static struct e3_label_conf l;
	const struct e3_circuit_conf cc[] = { { 70, "c0", 700, 7 }, { 71, "c0", 701, 7 } };
	struct rte_mbuf *m[RTE_DIM(vlan)], *out[8];
	struct frame f, want;
	struct e3_mac_info mi;

	s = (struct e3_service_conf){ .id = 7, .type = E3_SVC_ELAN };
	must(e3_node_service_add(&s, err));
	for (unsigned k = 0; k < RTE_DIM(cc); k++)
		must(e3_node_circuit_add(&cc[k], err));
	for (uint32_t src = 5; src <= 6; src++) {
		l = (struct e3_label_conf){ .label = 705 + src, .type = E3_LBL_ELAN, .service = 7, .source = src };
		must(e3_node_label_add(&l, err));
	}
	send_tagged("c0", BC, HA, 0, 700);                       /* A learned on c0/700 */
	CHECK_EQ(tx_drain("c0"), 1);
	uint64_t same = drops("c0", E3_DROP_SAME_CIRCUIT);

	for (unsigned k = 0; k < RTE_DIM(vlan); k++) {
		tagged(&f, HA, HB, 0, vlan[k]);
		m[k] = mk(&f);
	}
	rx_on("c0", m, RTE_DIM(vlan));
	unsigned n = tx_of("c0", out, 8);

	CHECK_EQ(n, 3);
	tagged(&want, HA, HB, 0, 700);
	for (unsigned j = 0; j < n && j < 3; j++) {
		CHECK_EQ(rte_pktmbuf_pkt_len(out[j]), want.len);
		CHECK_MEM(bytes_of(out[j]), want.b, want.len);
	}
	rte_pktmbuf_free_bulk(out, n);
	CHECK_EQ(drops("c0", E3_DROP_SAME_CIRCUIT) - same, 3);

	for (uint32_t src = 5; src <= 6; src++) {
		labelled(&f, FA0, lse(705 + src, 0, 1, 60), true, HA, HB);
		m[src - 5] = mk(&f);
	}
	rx_on("f0", m, 2);
	CHECK_EQ(tx_drain("c0"), 2);
	CHECK(mac_find(7, HB, &mi) && mi.remote && mi.source == 6);

	e3_mac_flush(7, E3_NONE);
	for (uint32_t src = 5; src <= 6; src++)
		must(e3_node_label_del(705 + src, err));
	for (unsigned k = 0; k < RTE_DIM(cc); k++)
		must(e3_node_circuit_del(cc[k].id, err));
	must(e3_node_service_del(7, err));
}

struct mac_find { uint8_t mac[6]; struct e3_mac_info *out; bool found; };

static void mac_find_fn(const struct e3_mac_info *mi, void *arg)
{
	struct mac_find *x = arg;

	if (memcmp(mi->mac, x->mac, 6) == 0) {
		*x->out = *mi;
		x->found = true;
	}
}

static bool mac_find(uint32_t service, const char *mac, struct e3_mac_info *out)
{
	struct mac_find c = { .out = out };

	mac_parse(mac, c.mac);
	e3_mac_walk(service, mac_find_fn, &c);
	return c.found;
}

/* A multicast/broadcast source is forwarded but never learned; a MAC moves
 * from a local circuit to a remote and back. */
static void test_learning_corners(void)
{
	struct frame f, want;
	struct e3_mac_info mi;
	uint32_t count = e3_mac_count();

	send_tagged("c0", HB, "01:00:5e:00:00:01", 0, 300);
	send_tagged("c0", HB, BC, 0, 300);
	labelled(&f, FA0, lse(700, 0, 1, 60), true, HA, "33:33:00:00:00:01");
	rx_frame("f0", &f);
	CHECK_EQ(e3_mac_count(), count);
	CHECK(!mac_find(3, "01:00:5e:00:00:01", &mi));
	CHECK(!mac_find(3, BC, &mi));
	for (int p = 0; p < 4; p++)
		tx_drain((const char *[]){ "c0", "c1", "f0", "f1" }[p]);

	uint64_t moves = e3_mac_svc_stats(3)->moves;

	/* D on c0/300 ... */
	send_tagged("c0", BC, HD, 0, 300);
	tx_drain("c1");
	tx_drain("f0");
	CHECK(mac_find(3, HD, &mi) && !mi.remote && mi.circuit == 4);
	/* ... appears behind remote source 5: C's frames to D go to label 3000 ... */
	labelled(&f, FA0, lse(700, 0, 1, 60), true, BC, HD);
	rx_frame("f0", &f);
	tx_drain("c0");
	tx_drain("c1");
	CHECK(mac_find(3, HD, &mi) && mi.remote && mi.source == 5);
	send_tagged("c1", HD, HC, 0, 301);
	expect_label("f0", 3000);
	expect_none("c0");
	/* ... and comes back to c0/300. */
	send_tagged("c0", HC, HD, 0, 300);
	tx_drain("c1");
	tx_drain("f0");
	CHECK(mac_find(3, HD, &mi) && !mi.remote && mi.circuit == 4);
	send_tagged("c1", HD, HC, 0, 301);
	tagged(&want, HD, HC, 0, 300);
	expect_one("c0", &want);
	expect_none("f0");
	CHECK_EQ(e3_mac_svc_stats(3)->moves - moves, 2);
	e3_mac_flush(3, E3_NONE);
}

/* Random and half-right frames on every port: counted, never a crash, no
 * mbuf leaked. */
static void test_fuzz(void)
{
	static const char *ports[] = { "c0", "c1", "f0", "f1" };
	static const uint16_t types[] = { 0x8100, 0x88a8, 0x8847, 0x8848, 0x0800, 0x0806 };
	static const uint32_t labels[] = { 500, 600, 700, 800, 3, 999 };
	struct pools p0 = pools_now();
	uint64_t rx = 0;

	for (int round = 0; round < 400; round++) {
		struct rte_mbuf *burst[E3_BURST];
		const char *port = ports[rte_rand() % 4];
		unsigned n = 1 + rte_rand() % E3_BURST;

		for (unsigned i = 0; i < n; i++) {
			struct frame f;

			/* Small frames, and large ones (flood and REPLICATE
			 * copies are then clones behind header mbufs). */
			f.len = (uint16_t)(rte_rand() % 4 ? rte_rand() % 120 :
					   E3_COPY_MAX + rte_rand() % 700);
			for (unsigned k = 0; k < f.len; k++)
				f.b[k] = (uint8_t)rte_rand();
			if (f.len >= 14 && rte_rand() % 2) {
				uint16_t t = types[rte_rand() % RTE_DIM(types)];

				f.b[12] = t >> 8;
				f.b[13] = t & 0xff;
				if (port[0] == 'f')
					mac_parse(port[1] == '0' ? FA0 : FA1, f.b);
			}
			if (f.len >= 18 && f.b[12] == 0x88 && f.b[13] == 0x47 && rte_rand() % 2) {
				uint32_t l = rte_cpu_to_be_32(lse(labels[rte_rand() % RTE_DIM(labels)],
								  0, 1, (uint8_t)rte_rand()));

				memcpy(f.b + 14, &l, 4);
			}
			if (f.len >= 16 && f.b[12] == 0x81 && rte_rand() % 2) {
				f.b[14] = 0;
				f.b[15] = rte_rand() % 2 ? 100 : 44;   /* VLAN 300 = 0x12c */
				if (rte_rand() % 2) {
					f.b[14] = 0x01;
					f.b[15] = 0x2c;
				}
			}
			burst[i] = mk(&f);
		}
		rx += n;
		rx_on(port, burst, n);
		for (int p = 0; p < 4; p++)
			tx_drain(ports[p]);
	}
	e3_mac_flush(E3_NONE, E3_NONE);
	CHECK(rx > 0);
	CHECK_POOLS(p0);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "eline_encap", test_eline_encap },
		{ "eline_term", test_eline_term },
		{ "eline_hairpin", test_hairpin },
		{ "swap", test_swap },
		{ "customer_drops", test_customer_drops },
		{ "fabric_drops", test_fabric_drops },
		{ "elan", test_elan },
		{ "replicate", test_replicate },
		{ "link_state", test_link_down },
		{ "trace", test_trace },
		{ "flood_copies", test_flood_copies },
		{ "replicate_shared", test_replicate_shared },
		{ "egress_mtu", test_egress_mtu },
		{ "push_burst", test_push_burst },
		{ "circuit_burst", test_circuit_burst },
		{ "conversation_burst", test_conversation_burst },
		{ "learning_corners", test_learning_corners },
		{ "fuzz_no_leak", test_fuzz },
	};

	if (harness_init("dpA-ut-stages", 4096) != 0)
		return 1;
	setup();
	return unit_run(tests, RTE_DIM(tests));
}
