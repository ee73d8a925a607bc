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

#include "dp.h"
#include "harness.h"
#include "mac_table.h"
#include "port.h"
#include "rcu.h"

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

static void add_port(const char *name, const char *dev, enum e3_port_kind kind, const char *mac)
{
	struct e3_port_conf c = { .kind = kind };

	snprintf(c.name, sizeof(c.name), "%s", name);
	snprintf(c.devargs, sizeof(c.devargs), "%s", dev);
	for (int q = 0; q < E3_MAX_QUEUES; q++)
		c.worker[q] = -1;
	if (mac)
		mac_parse(mac, c.mac);
	must(e3_ctl_port_add(&c, err));
}

static void setup(void)
{
	add_port("c0", "net_ring0", E3_PORT_CUSTOMER, NULL);
	add_port("c1", "net_ring1", E3_PORT_CUSTOMER, NULL);
	add_port("f0", "net_ring2", E3_PORT_FABRIC, FA0);
	add_port("f1", "net_ring3", E3_PORT_FABRIC, FA1);
	struct e3_nexthop_conf nh = { .id = 1, .port = "f0" };

	mac_parse(NB, nh.mac);
	must(e3_ctl_nexthop_add(&nh, err));
	nh = (struct e3_nexthop_conf){ .id = 2, .port = "f1" };
	mac_parse(NC, nh.mac);
	must(e3_ctl_nexthop_add(&nh, err));
	const struct e3_nhlfe_conf nl[] = {
		{ 10, 1, 1000 }, { 11, 2, 2000 }, { 20, 1, 3000 }, { 21, 1, 3001 },
		{ 22, 2, 4001 }, { 23, 1, 4000 },
	};
	for (unsigned i = 0; i < RTE_DIM(nl); i++)
		must(e3_ctl_nhlfe_add(&nl[i], err));
	static struct e3_service_conf s;

	s = (struct e3_service_conf){ .id = 1, .type = E3_SVC_ELINE, .nhlfe = 10 };
	must(e3_ctl_service_add(&s, err));
	s = (struct e3_service_conf){ .id = 2, .type = E3_SVC_ELINE, .nhlfe = E3_NONE };
	must(e3_ctl_service_add(&s, err));
	s = (struct e3_service_conf){ .id = 3, .type = E3_SVC_ELAN, .n_remotes = 1, .n_branches = 1 };
	s.remotes[0] = (struct e3_remote){ 5, 20 };
	s.branches[0] = 21;
	must(e3_ctl_service_add(&s, err));
	const struct e3_circuit_conf cc[] = {
		{ 1, "c0", 100, 1 }, { 2, "c0", 200, 2 }, { 3, "c1", E3_VLAN_UNTAGGED, 2 },
		{ 4, "c0", 300, 3 }, { 5, "c1", 301, 3 },
	};
	for (unsigned i = 0; i < RTE_DIM(cc); i++)
		must(e3_ctl_circuit_add(&cc[i], err));
	static struct e3_label_conf l;

	l = (struct e3_label_conf){ .label = 500, .type = E3_LBL_ELINE, .service = 1 };
	must(e3_ctl_label_add(&l, err));
	l = (struct e3_label_conf){ .label = 600, .type = E3_LBL_SWAP, .nhlfe = 11, .service = E3_NONE };
	must(e3_ctl_label_add(&l, err));
	l = (struct e3_label_conf){ .label = 700, .type = E3_LBL_ELAN, .service = 3, .source = 5 };
	must(e3_ctl_label_add(&l, err));
	l = (struct e3_label_conf){ .label = 800, .type = E3_LBL_REPLICATE, .rpf_port = "f0",
				    .service = 3, .source = 5, .n_branches = 2, .branches = { 22, 23 } };
	must(e3_ctl_label_add(&l, err));
}

/* Receive exactly one frame from port and compare it with want. */
static void expect_one(const char *port, const struct frame *want)
{
	struct rte_mbuf *m[8];
	unsigned n = tx_of(port, m, 8);

	CHECK_EQ(n, 1);
	if (n >= 1) {
		CHECK_EQ(rte_pktmbuf_pkt_len(m[0]), want->len);
		CHECK_MEM(rte_pktmbuf_mtod(m[0], uint8_t *), want->b,
			  RTE_MIN(want->len, rte_pktmbuf_data_len(m[0])));
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
	fr_eth(&f, HB, HA);
	fr_tag(&f, 0x8100, 0, 100);
	fr_type(&f, 0x8848);
	fr_pad(&f, 60, 0);
	EXPECT_DROP("c0", E3_DROP_CUSTOMER_LABELLED, rx_frame("c0", &f));
	fr_eth(&f, HB, HA);
	fr_tag(&f, 0x8100, 0, 999);
	fr_type(&f, 0x0800);
	fr_pad(&f, 60, 0);
	EXPECT_DROP("c0", E3_DROP_NO_CIRCUIT, rx_frame("c0", &f));
	/* MTU 1500: 1500 + 14 + 4 passes, one more byte does not. */
	fr_eth(&f, HB, HA);
	fr_tag(&f, 0x8100, 0, 100);
	fr_type(&f, 0x0800);
	fr_pad(&f, 1500, 0);
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

	memcpy(&l, rte_pktmbuf_mtod_offset(m, uint8_t *, 14), 4);
	return rte_be_to_cpu_32(l) >> 12;
}

static uint16_t vlan_of(struct rte_mbuf *m)
{
	uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);

	return d[12] == 0x81 ? ((d[14] << 8 | d[15]) & 0xfff) : E3_VLAN_UNTAGGED;
}

static void test_elan(void)
{
	struct frame f, want;
	struct rte_mbuf *m[8];
	unsigned n;

	/* a. unknown unicast from c0/300: to c1/301 and to the branch. */
	tagged(&f, HB, HA, 1, 300);
	rx_frame("c0", &f);
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
	tagged(&f, HB, HA, 0, 300);
	rx_frame("c0", &f);
	n = tx_of("f0", m, 8);
	CHECK_EQ(n, 1);
	if (n == 1)
		CHECK_EQ(label_of(m[0]), 3000);
	rte_pktmbuf_free_bulk(m, n);
	expect_none("c1");
	/* d. C (c1/301) to A: local unicast, c0/300. */
	tagged(&f, HA, HC, 0, 301);
	rx_frame("c1", &f);
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
	tagged(&f, BC, HB, 0, 301);
	rx_frame("c1", &f);
	CHECK_EQ(tx_drain("c0"), 1);
	CHECK_EQ(tx_drain("f0"), 1);                             /* flood to the branch */
	tagged(&f, HB, HA, 0, 300);
	rx_frame("c0", &f);
	tagged(&want, HB, HA, 0, 301);
	expect_one("c1", &want);
	expect_none("f0");
	/* A burst of mixed frames goes through the bulk lookups together. */
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
		CHECK_MEM(rte_pktmbuf_mtod(m[0], uint8_t *), want_hdr, 12);
		uint32_t l;

		memcpy(&l, rte_pktmbuf_mtod_offset(m[0], uint8_t *, 14), 4);
		CHECK_EQ(rte_be_to_cpu_32(l), lse(4001, 2, 1, 19));
		CHECK_MEM(rte_pktmbuf_mtod_offset(m[0], uint8_t *, 18), f.b + 18, f.len - 18);
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

	CHECK_EQ(e3_ctl_trace_start(&tf, 0, err), -E3_EINVAL);
	CHECK_EQ(e3_ctl_trace_start(&tf, 2000, err), -E3_EINVAL);
	CHECK_EQ(e3_ctl_trace_start(&tf, 1, err), 0);
	tagged(&f, HB, HA, 0, 200);                  /* other VLAN: not traced */
	rx_frame("c0", &f);
	tx_drain("c1");
	tagged(&f, HB, HA, 0, 100);
	rx_frame("c0", &f);
	rx_frame("c0", &f);                          /* only one was asked for */
	tx_drain("f0");
	e3_ctl_trace_walk(on_record, &t);
	CHECK_EQ(t.n, 1);
	CHECK_EQ(t.len, f.len);
	CHECK(strstr(t.path, "customer-in c0 vlan 100") != NULL);
	CHECK(strstr(t.path, "eline-encap service 1") != NULL);
	CHECK(strncmp(t.verdict, "tx f0 label 1000", 16) == 0);
	/* A drop's verdict names the reason. */
	struct e3_trace_filter tl = { .port = "", .vlan = -1, .label = 999 };

	CHECK_EQ(e3_ctl_trace_start(&tl, 5, err), 0);
	labelled(&f, FA0, lse(999, 0, 1, 64), true, HA, HB);
	rx_frame("f0", &f);
	memset(&t, 0, sizeof(t));
	e3_ctl_trace_walk(on_record, &t);
	CHECK_EQ(t.n, 1);
	CHECK(strcmp(t.verdict, "drop label_unknown") == 0);
}

/* Random and half-right frames on every port: counted, never a crash, no
 * mbuf leaked. */
static void test_fuzz(void)
{
	static const char *ports[] = { "c0", "c1", "f0", "f1" };
	static const uint16_t types[] = { 0x8100, 0x88a8, 0x8847, 0x8848, 0x0800, 0x0806 };
	static const uint32_t labels[] = { 500, 600, 700, 800, 3, 999 };
	unsigned avail = rte_mempool_avail_count(e3.pool);
	uint64_t rx = 0;

	for (int round = 0; round < 400; round++) {
		struct rte_mbuf *burst[E3_BURST];
		const char *port = ports[rte_rand() % 4];
		unsigned n = 1 + rte_rand() % E3_BURST;

		for (unsigned i = 0; i < n; i++) {
			struct frame f;

			f.len = (uint16_t)(rte_rand() % 120);
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
	CHECK_EQ(rte_mempool_avail_count(e3.pool), avail);
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
		{ "fuzz_no_leak", test_fuzz },
	};

	if (harness_init("dpA-ut-stages", 4096) != 0)
		return 1;
	setup();
	return unit_run(tests, RTE_DIM(tests));
}
