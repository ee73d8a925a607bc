/* SPDX-License-Identifier: Apache-2.0
 *
 * bench_stages.c - what the forwarding stages cost per frame: bursts of 32
 * frames go through e3_process_burst (worker 0's context, as in the unit
 * tests) on net_ring ports, with the tables filled to the sizes of the
 * performance targets. Frames are built and the output drained outside the
 * measured section, so it is the pipeline alone.
 *
 *   bench_stages [SCENARIO [BURSTS]]      (default: all 20000)
 *   SCENARIO: eline elan1 elanr1 flood flood1500 elan1m elanr1m swap1m sflow
 *   (sflow: the E-Line with sampling off, at 1 in 1000 and 1 in 1, interleaved)
 *
 * Native: prints ns/frame (rdtsc) and core cycles/frame (rdtsc and the
 * clock probe, base/clock.h). Under callgrind only the pipeline is
 * collected, so the instruction count per frame is exact and stable:
 *
 *   valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file=cg.out \
 *       build/datapath/tests/bench_stages elan1m 2000
 *   callgrind_annotate cg.out | head -30
 *
 * Also prints the memory of the MAC table (its buckets)
 * per entry, and of the label and nhlfe tables. Not run by meson test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_random.h>
#include <valgrind/callgrind.h>

#include "base/clock.h"
#include "node/node.h"
#include "node/init.h"
#include "harness.h"
#include "tables/label_table.h"
#include "tables/mac_table.h"
#include "tables/nhlfe_table.h"
#include "worker/worker.h"

#define N_MACS (1u << 20)
#define N_LABELS 1000000u
#define LABEL0 16u

static char err[E3_ERRLEN];

static void must(int rc)
{
	if (rc < 0) {
		fprintf(stderr, "setup: %s\n", err);
		exit(1);
	}
}

static void add_port(const char *name, const char *dev, enum e3_port_kind kind)
{
	struct e3_port_conf c = { .kind = kind };

	snprintf(c.name, sizeof(c.name), "%s", name);
	snprintf(c.devargs, sizeof(c.devargs), "%s", dev);
	for (int q = 0; q < E3_MAX_QUEUES; q++)
		c.worker[q] = -1;
	must(e3_node_port_add(&c, err));
}

/*   c0, c1, c2 customer; f0, f1 fabric; nexthop 1 = f1
 *   service 1: E-Line c0/100 -> nhlfe 1 (label 900 via f1)
 *   service 3: E-LAN c0/300, c1/301, c1/302 (flood: 2 circuits + branch nhlfe 2)
 *   service 4: E-LAN c2 untagged, remote source 1 -> nhlfe 1 (the benchmark's
 *              E-LAN known unicast, customer -> fabric) */
static void setup(void)
{
	add_port("c0", "net_ring0", E3_PORT_CUSTOMER);
	add_port("c1", "net_ring1", E3_PORT_CUSTOMER);
	add_port("f0", "net_ring2", E3_PORT_FABRIC);
	add_port("f1", "net_ring3", E3_PORT_FABRIC);
	add_port("c2", "net_ring4", E3_PORT_CUSTOMER);
	struct e3_nexthop_conf nh = { .id = 1, .port = "f1", .mac = { 2, 0xbb, 0, 0, 0, 1 } };

	must(e3_node_nexthop_add(&nh, err));
	struct e3_nhlfe_conf nl = { 1, 1, 900 };

	must(e3_node_nhlfe_add(&nl, err));
	nl = (struct e3_nhlfe_conf){ 2, 1, 901 };
	must(e3_node_nhlfe_add(&nl, err));
	static struct e3_service_conf s;

	s = (struct e3_service_conf){ .id = 1, .type = E3_SVC_ELINE, .nhlfe = 1 };
	must(e3_node_service_add(&s, err));
	s = (struct e3_service_conf){ .id = 3, .type = E3_SVC_ELAN, .n_branches = 1,
				      .branches = { 2 }, .mac_limit = N_MACS };
	must(e3_node_service_add(&s, err));
	s = (struct e3_service_conf){ .id = 4, .type = E3_SVC_ELAN, .n_remotes = 1,
				      .remotes = { { .source = 1, .nhlfe = 1 } }, .mac_limit = N_MACS };
	must(e3_node_service_add(&s, err));
	const struct e3_circuit_conf cc[] = {
		{ 1, "c0", 100, 1 }, { 4, "c0", 300, 3 }, { 5, "c1", 301, 3 }, { 6, "c1", 302, 3 },
		{ 7, "c2", E3_VLAN_UNTAGGED, 4 },
	};
	for (unsigned i = 0; i < RTE_DIM(cc); i++)
		must(e3_node_circuit_add(&cc[i], err));
}

static void mac_of(uint32_t i, uint8_t mac[6])
{
	mac[0] = 0x02;
	mac[1] = 0x10;
	mac[2] = (uint8_t)(i >> 24);
	mac[3] = (uint8_t)(i >> 16);
	mac[4] = (uint8_t)(i >> 8);
	mac[5] = (uint8_t)i;
}

/* Learn MACs [from, to) at dest (a circuit, or E3_MAC_REMOTE | source) of
 * service, as the main lcore would. */
static void learn_in(uint32_t service, uint32_t from, uint32_t to, uint32_t dest)
{
	for (uint32_t i = from; i < to; i++) {
		uint8_t mac[6];

		mac_of(i, mac);
		while (!e3_mac_learn_event(0, service, mac, dest))
			e3_mac_drain();
	}
	e3_mac_drain();
}

static void learn(uint32_t from, uint32_t to, uint32_t dest)
{
	learn_in(3, from, to, dest);
}

/* One scenario: frames are a template with the dst MAC (or label) set per
 * frame by fill(). */
struct scenario {
	const char *name;
	const char *in;                 /* receiving port */
	struct frame tmpl;
	void (*fill)(uint8_t *frame, unsigned k);
};

static uint32_t n_dst, n_src, dst_base, src_base;

static void fill_elan(uint8_t *d, unsigned k)
{
	(void)k;
	mac_of(dst_base + (uint32_t)(rte_rand() % n_dst), d);
	mac_of(src_base + (uint32_t)(rte_rand() % n_src), d + 6);
}

static void fill_label(uint8_t *d, unsigned k)
{
	(void)k;
	uint32_t l = LABEL0 + (uint32_t)(rte_rand() % N_LABELS);
	uint32_t lse = rte_cpu_to_be_32(l << 12 | 1u << 8 | 64);

	memcpy(d + 14, &lse, 4);
}

static void drain_all(void)
{
	static const char *ports[] = { "c0", "c1", "f0", "f1" };

	for (unsigned p = 0; p < RTE_DIM(ports); p++)
		tx_drain(ports[p]);
}

static void sample_dropped(const struct e3_sflow_sample *s, const char *in, const char *out, void *arg)
{
	(void)s, (void)in, (void)out, (void)arg;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median burst: the machine is shared, and a burst that was preempted
 * or whose cache another process emptied says nothing about the stages. */
static void run(const struct scenario *s, unsigned bursts)
{
	uint16_t port = port_id_of(s->in);
	uint64_t *cyc = calloc(bursts, sizeof(*cyc));
	struct rte_mbuf *m[E3_BURST];
	uint64_t probe = e3_clock_probe();

	for (unsigned b = 0; b < bursts; b++) {
		if (rte_pktmbuf_alloc_bulk(e3.pool, m, E3_BURST) != 0) {
			fprintf(stderr, "out of mbufs\n");
			exit(1);
		}
		for (unsigned k = 0; k < E3_BURST; k++) {
			uint8_t *d = (uint8_t *)rte_pktmbuf_append(m[k], s->tmpl.len);

			memcpy(d, s->tmpl.b, s->tmpl.len);
			if (s->fill)
				s->fill(d, k);
		}
		uint64_t t0 = rte_rdtsc();

		CALLGRIND_TOGGLE_COLLECT;
		e3_process_burst(e3_workers[0], port, m, E3_BURST, 0);   /* an untimed burst (runtime.h) */
		CALLGRIND_TOGGLE_COLLECT;
		cyc[b] = rte_rdtsc() - t0;
		e3_mac_drain();
		drain_all();
		e3_node_sflow_read(UINT32_MAX, sample_dropped, NULL);
	}
	qsort(cyc, bursts, sizeof(*cyc), cmp_u64);
	double ns = 1e9 / (double)rte_get_tsc_hz() / E3_BURST;
	/* Core cycles per TSC cycle, by the faster of two probes: a figure
	 * that does not move with the core's clock (base/clock.h). */
	double core = (double)E3_CLOCK_PROBE_OPS / (double)RTE_MIN(probe, e3_clock_probe());

	printf("%-8s %7.1f ns/frame median, %7.1f p10, %6.1f core cycles (core %.2f GHz)  (%u bursts of %u)\n",
	       s->name, (double)cyc[bursts / 2] * ns, (double)cyc[bursts / 10] * ns,
	       (double)cyc[bursts / 2] * core / E3_BURST, core * (double)rte_get_tsc_hz() / 1e9, bursts,
	       E3_BURST);
	free(cyc);
}

static bool want(const char *which, const char *name)
{
	return strcmp(which, "all") == 0 || strcmp(which, name) == 0;
}

int main(int argc, char **argv)
{
	const char *which = argc > 1 ? argv[1] : "all";
	unsigned bursts = argc > 2 ? (unsigned)atoi(argv[2]) : 20000;
	char *eal[] = { "bench", "-l", "0", "--no-huge", "--no-pci", "-m", "1024",
			"--file-prefix=dpF-bench", "--log-level=*:error", NULL };

	if (rte_eal_init(RTE_DIM(eal) - 1, eal) < 0)
		return 1;
	struct e3_dp_opts o = { .poll_mode = E3_POLL_BUSY, .mac_table_size = N_MACS,
				.mbufs = 16383, .n_workers = 1 };

	must(e3_dp_init(&o, err));
	setup();
	printf("MAC table: %u entries, %.1f bytes per entry (buckets)\n",
	       e3_mac_capacity(), (double)e3_mac_table_bytes() / e3_mac_capacity());
	printf("label table: %.1f MiB, nhlfe table: %.1f MiB (+ %.1f MiB label counters per worker)\n",
	       sizeof(uint64_t) * E3_LABEL_SPACE / 1048576.0, sizeof(uint64_t) * E3_MAX_NHLFES / 1048576.0,
	       sizeof(uint64_t) * E3_LABEL_SPACE / 1048576.0);

	struct scenario s = { .in = "c0" };

	/* E-Line encapsulation. */
	fr_eth(&s.tmpl, "02:00:00:00:00:0b", "02:00:00:00:00:0a");
	fr_tag(&s.tmpl, 0x8100, 0, 100);
	fr_type(&s.tmpl, 0x0800);
	fr_pad(&s.tmpl, 60 - s.tmpl.len, 0);
	s.name = "eline";
	if (want(which, "eline"))
		run(&s, bursts);
	/* What sampling costs the E-Line, runs interleaved (the host's load
	 * moves between runs more than sampling at 1 in 1000 costs). */
	if (want(which, "sflow")) {
		static const struct { const char *name; uint32_t rate; } runs[] = {
			{ "sf-off", 0 }, { "sf-1000", 1000 }, { "sf-off", 0 }, { "sf-1000", 1000 }, { "sf-1", 1 },
		};
		for (unsigned r = 0; r < RTE_DIM(runs); r++) {
			must(e3_node_sflow_set("c0", runs[r].rate, err));
			s.name = runs[r].name;
			run(&s, bursts);
		}
		must(e3_node_sflow_set("c0", 0, err));
		s.name = "eline";
	}

	/* E-LAN known unicast, one MAC each side. */
	s.tmpl.b[15] = 300 & 0xff;
	s.tmpl.b[14] = 300 >> 8;
	s.fill = fill_elan;
	if (want(which, "elan1")) {
		learn(0, 1, 5);
		learn(1, 2, 4);
		dst_base = 0, n_dst = 1, src_base = 1, n_src = 1;
		s.name = "elan1";
		run(&s, bursts);
		e3_mac_flush(3, E3_NONE);
	}
	/* E-LAN known unicast to the remote leaf, untagged (the benchmark's
	 * customer -> fabric path). */
	struct scenario r = { .in = "c2", .fill = fill_elan, .name = "elanr1" };

	fr_eth(&r.tmpl, "02:00:00:00:00:0b", "02:00:00:00:00:0a");
	fr_type(&r.tmpl, 0x0800);
	fr_pad(&r.tmpl, 60 - r.tmpl.len, 0);
	if (want(which, "elanr1")) {
		learn_in(4, 0, 1, E3_MAC_REMOTE | 1);
		learn_in(4, 1, 2, 7);
		dst_base = 0, n_dst = 1, src_base = 1, n_src = 1;
		run(&r, bursts);
		e3_mac_flush(4, E3_NONE);
	}
	/* Broadcast: c1/301, c1/302 and the branch; c0's MAC known. 64 and
	 * 1518 bytes (what the copies cost shows with size). */
	for (unsigned big = 0; big < 2; big++) {
		struct scenario f = s;

		f.name = big ? "flood1500" : "flood";
		if (!want(which, f.name))
			continue;
		learn(1, 2, 4);
		f.fill = NULL;
		memset(f.tmpl.b, 0xff, 6);
		mac_of(1, f.tmpl.b + 6);
		if (big)
			fr_pad(&f.tmpl, 1518 - f.tmpl.len, 0);
		run(&f, bursts);
		e3_mac_flush(3, E3_NONE);
	}
	if (want(which, "elan1m")) {
		/* 1M MACs: half behind c1/301 (destinations), half on c0/300 (sources). */
		uint32_t half = (uint32_t)(N_MACS * 0.95) / 2;

		learn(0, half, 5);
		learn(half, 2 * half, 4);
		printf("learned %u MACs (%lu refused)\n", e3_mac_count(), e3_mac_table_full());
		dst_base = 0, n_dst = half, src_base = half, n_src = half;
		s.name = "elan1m";
		run(&s, bursts);
		e3_mac_flush(3, E3_NONE);
	}
	/* The same at the benchmark's 1M point: one host sending to as many
	 * hosts behind the remote leaf as the table takes. */
	if (want(which, "elanr1m")) {
		uint32_t n = (uint32_t)(N_MACS * 0.95);

		learn_in(4, 0, n, E3_MAC_REMOTE | 1);
		learn_in(4, n, n + 1, 7);
		printf("learned %u MACs (%lu refused)\n", e3_mac_count(), e3_mac_table_full());
		dst_base = 0, n_dst = n, src_base = n, n_src = 1;
		r.name = "elanr1m";
		run(&r, bursts);
		e3_mac_flush(4, E3_NONE);
	}
	if (want(which, "swap1m")) {
		/* 1M labels, each SWAP to its own nhlfe via f1. */
		for (uint32_t i = 0; i < N_LABELS; i++) {
			struct e3_nhlfe_conf n = { 16 + i, 1, 2000000 % (E3_LABEL_SPACE - 16) + 16 };
			struct e3_label_conf l = { .label = LABEL0 + i, .type = E3_LBL_SWAP,
						   .nhlfe = 16 + i, .service = E3_NONE };

			must(e3_node_nhlfe_add(&n, err));
			must(e3_node_label_add(&l, err));
		}
		struct e3_port_info pi;

		must(e3_node_port_get("f0", &pi, err));
		s.in = "f0";
		fr_eth(&s.tmpl, "00:00:00:00:00:00", "02:cc:00:00:00:01");
		memcpy(s.tmpl.b, pi.conf.mac, 6);
		fr_type(&s.tmpl, 0x8847);
		fr_u32(&s.tmpl, 0);
		fr_pad(&s.tmpl, 64 - s.tmpl.len, 0);
		s.fill = fill_label;
		s.name = "swap1m";
		run(&s, bursts);
	}
	return 0;
}
