/* SPDX-License-Identifier: Apache-2.0
 *
 * e3-pktgen - the traffic generator of e3fabric's benchmarks.
 *
 *   e3-pktgen [EAL options] -- --stream SPEC [--stream SPEC ...]
 *             [--learn SPEC ...] [--learn-rate PPS]
 *             [--rate PPS] [--duration S | --count N] [--warmup S] [--imix]
 *             [--mbufs N] [--idle-sleep-us U] [--late-vdev DEVARGS ...]
 *             [--no-verify] [--serve]
 *
 * Every DPDK port (usually net_memif clients given with --vdev; a
 * net_virtio_user port makes the generator a switch's VM) is both sent on
 * (by the streams that name it) and received on. A stream is a frame
 * template (frame.h); --rate shares a token bucket on the TSC among the
 * streams, --rate 0 sends flat out. Frames carry a sequence number and a TX
 * timestamp at their tail; the receiver counts them per port, checks the
 * sequence numbers (with --count) and builds a latency histogram. Before
 * the measurement, --learn streams send one frame FROM each of their MACs at
 * a modest rate so a learning switch knows them; those frames are not
 * counted. Every lcore (-l a,b,...) is a lane: one loop that sends on its
 * own TX queues of every port and receives on its own RX queues (struct
 * lane), so a switch that gives each queue a worker of its own is fed on
 * every worker. The last line of stdout is the result as JSON.
 * With --serve the process stays up and runs one trial per line on stdin
 * (rate, duration, ... per trial), one JSON line each: the benchmark driver
 * (bench/benchlib/pktgen.py) keeps the links up across a whole search.
 * Every trial also reports its longest stretches with nothing received and
 * the longest between two turns of a lane's loop (gap_us): a switch that
 * stopped for a while against a generator that did.
 * A trial with verify=0 only counts what it receives, by length (frame.h):
 * no stamp is read, so no sequence or latency, and the generator is spared
 * a cache miss on every frame the switch wrote (what caps it against a
 * switch on another CPU).
 * The benchmark gives it zero-copy memif clients (zero-copy=yes, hugepages
 * in one file): the switch copies into and out of the generator's mbufs,
 * hence --mbufs, one for every ring slot; their pool is shuffled first
 * (pool_shuffle). --idle-sleep-us lets a VM share
 * its CPU (PVP). --late-vdev probes a device after the EAL's ports are up:
 * a virtio_user vhost-user server (server=1) waits in its probe for the
 * switch to connect, and a switch that is a zero-copy memif client of ours
 * can only connect once our memif servers are.
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_alarm.h>
#include <rte_cycles.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_random.h>

#include "frame.h"
#include "hist.h"

#define MAX_STREAMS 16
#define RING_SIZE   1024
#define VIRTIO_RING_MAX 32768
#define MAX_BURST   64
#define MAX_LANES   16
#define MAX_QUEUES  16
#define MAX_LATE    4

struct port_stats {
	uint64_t tx, tx_ring_full, rx, rx_learn, rx_other;
	uint64_t rx_bytes;
	/* Flat out: sends, and those the port took less of than offered. A
	 * switch whose input ring pushes back in most sends is what limits
	 * the rate, not the generator. */
	uint64_t tx_bursts, tx_pushback;
};

static struct {
	struct pg_stream streams[MAX_STREAMS];
	unsigned n_streams;
	struct pg_stream learn[MAX_STREAMS];
	unsigned n_learn;
	double rate;            /* total pps; 0 = flat out */
	double learn_rate;
	double duration;        /* seconds of measurement */
	double warmup;          /* seconds of uncounted traffic before it */
	uint64_t count;         /* or: stop after this many frames */
	unsigned burst;
	unsigned mbufs;         /* pool size: a zero-copy memif client lends the server its own mbufs */
	unsigned catch_up;      /* frames a lane may send at once to catch up after a preemption */
	bool imix;
	unsigned drain_ms;
	unsigned idle_sleep_us; /* sleep when nothing is due to be sent (0: busy poll) */
	unsigned link_timeout_s;
	uint16_t tx_queues;     /* per port (default: one per lane) */
	uint16_t rx_queues;     /* per port, at least tx_queues; a memif server sends on as many */
	bool serve;             /* trials from stdin, links kept up */
	bool verify;            /* read every received frame's stamp (else count by length) */
	uint32_t stream_on;     /* bit per stream: sent in this trial */
	const char *late[MAX_LATE];     /* --late-vdev devargs, probed after the ports are up */
	unsigned n_late;
} cfg = {
	.learn_rate = 200000, .duration = 1.0, .burst = 32, .mbufs = 16383, .catch_up = 8192, .drain_ms = 200, .link_timeout_s = 30, .rx_queues = 1,
	.verify = true,
};

static struct rte_mempool *pool;
static uint16_t n_ports;
/* RX queues per port: cfg.rx_queues, or fewer where the port has fewer (a
 * virtio_user port has one per queue pair it was given). */
static uint16_t port_rxq[RTE_MAX_ETHPORTS];
static uint64_t tsc_hz;
static uint64_t *seq_seen;      /* bitmap of received sequence numbers (with --count) */
static volatile bool quit;

#define N_GAPS 8        /* the longest stretches with nothing received a trial reports */

/* A lane is one lcore: it sends on TX queues q = id, id + n_lanes, ... of
 * every port and receives on the RX queues of the same rule. A switch
 * whose worker k serves queue k of each port (RSS over memif queues) then
 * gets one lane's traffic per worker and sends it back on its own queue.
 * Data frames of lane k carry sequence numbers k, k + n_lanes, ...: the
 * sender of a frame is its number modulo n_lanes. */
struct lane {
	unsigned id;
	unsigned lcore;
	struct pg_stream streams[MAX_STREAMS];  /* own copies: own cursors */
	struct port_stats ps[RTE_MAX_ETHPORTS];
	struct pg_hist lat;
	uint64_t seq_dup, seq_reordered;
	uint64_t seq_max[MAX_LANES];            /* per sending lane */
	bool seq_any[MAX_LANES];
	/* transmit */
	uint64_t seq, warm_seq;
	unsigned next_stream, imix_pos, next_txq;
	/* flat out: a burst the port refused is kept and offered again */
	struct rte_mbuf *pend[MAX_BURST];
	uint16_t n_pend, pend_port, pend_q;
	uint64_t t_start, t_end;                /* its measurement */
	/* The measurement's longest stretches (TSC) with nothing received,
	 * longest first, and the longest between two turns of the lane's own
	 * loop: a switch that stopped forwarding for a while (preempted,
	 * stalled) against a generator that did. */
	uint64_t rx_gap[N_GAPS], loop_gap;
	bool learn;                             /* this trial learns first */
} __rte_cache_aligned;

static struct lane lanes[MAX_LANES];
static unsigned n_lanes = 1;
static volatile bool learn_done;
static unsigned lanes_sent;     /* lanes done sending this trial */

static void on_signal(int sig)
{
	(void)sig;
	quit = true;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [EAL options] -- --stream SPEC [--stream SPEC ...] [options]\n"
		"  --stream SPEC     key=value list: port, frame=eth|vlan|mpls, dst, src, vlan,\n"
		"                    inner_vlan=0|1, odst, osrc, label, ttl, cw=0|1,\n"
		"                    vary=none|dst|src|label|vlan, n, size (even)\n"
		"  --learn SPEC      frames sent once per value before measuring (vary=src)\n"
		"  --learn-rate PPS  rate of the learning phase (default 200000)\n"
		"  --rate PPS        total offered rate; 0 = flat out (default)\n"
		"  --duration S      measurement time in seconds (default 1)\n"
		"  --count N         send exactly N frames (checks every sequence number)\n"
		"  --burst N         frames per TX burst (default 32, max %d)\n"
		"  --imix            sizes 64/570/1518 in proportion 7:4:1\n"
		"  --warmup S        send the streams uncounted for S seconds first (default 0)\n"
		"  --drain-ms MS     wait for frames in flight after TX stops (default 200)\n"
		"  --idle-sleep-us U when nothing is due to be sent, receive what waits and\n"
		"                    sleep U us, leaving the CPU to a process sharing it\n"
		"                    (a VM at idle priority); default 0: busy poll\n"
		"  --link-timeout S  wait this long for the switch's ports (default 30)\n"
		"  --mbufs N         mbuf pool size (default 16383); a zero-copy memif\n"
		"                    client needs every ring slot of every queue filled\n"
		"  --queues N        transmit queues per port (default: one per lcore); lane\n"
		"                    k sends on queues k, k + lanes, ..., each queue at\n"
		"                    the same share of --rate\n"
		"  --catch-up N      frames the lanes may send at once, at a set rate, after\n"
		"                    a preemption (default 8192: half a 2^14 memif ring)\n"
		"  --rx-queues N     receive queues per port (default: --queues); OVS\n"
		"                    sends on queue 1.. of a memif port from its PMDs\n"
		"  --late-vdev ARGS  probe this device (its ports numbered after the EAL's)\n"
		"                    once the EAL's ports are up: a virtio_user with\n"
		"                    server=1 waits there for its switch\n"
		"  --no-verify       count received frames by length (data frames are the\n"
		"                    even ones), without reading them: no sequence or latency\n"
		"  --serve           run one trial per stdin line: rate=PPS duration=S\n"
		"                    warmup=S count=N learn=0|1 imix=0|1 verify=0|1\n"
		"                    streams=I:J (\"quit\" ends)\n",
		prog, MAX_BURST);
}

static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "stream", required_argument, NULL, 's' },
		{ "learn", required_argument, NULL, 'L' },
		{ "learn-rate", required_argument, NULL, 'l' },
		{ "rate", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' },
		{ "count", required_argument, NULL, 'c' },
		{ "burst", required_argument, NULL, 'b' },
		{ "imix", no_argument, NULL, 'i' },
		{ "drain-ms", required_argument, NULL, 'D' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "link-timeout", required_argument, NULL, 'T' },
		{ "rx-queues", required_argument, NULL, 'q' },
		{ "queues", required_argument, NULL, 'Q' },
		{ "mbufs", required_argument, NULL, 'm' },
		{ "catch-up", required_argument, NULL, 'C' },
		{ "idle-sleep-us", required_argument, NULL, 'I' },
		{ "late-vdev", required_argument, NULL, 'E' },
		{ "serve", no_argument, NULL, 'S' },
		{ "no-verify", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char err[256];
	int c, idx = 0;
	while ((c = getopt_long(argc, argv, "", opts, &idx)) != -1) {
		char *end = NULL;
		switch (c) {
		case 's':
		case 'L': {
			bool learn = c == 'L';
			unsigned *n = learn ? &cfg.n_learn : &cfg.n_streams;
			if (*n == MAX_STREAMS) {
				fprintf(stderr, "e3-pktgen: at most %d streams\n", MAX_STREAMS);
				return -1;
			}
			struct pg_stream *s = learn ? &cfg.learn[*n] : &cfg.streams[*n];
			if (pg_stream_parse(optarg, s, err, sizeof(err)) < 0) {
				fprintf(stderr, "e3-pktgen: %s\n", err);
				return -1;
			}
			(*n)++;
			break;
		}
		case 'l':
			cfg.learn_rate = strtod(optarg, &end);
			if (*end || cfg.learn_rate <= 0)
				goto bad;
			break;
		case 'r':
			cfg.rate = strtod(optarg, &end);
			if (*end || cfg.rate < 0)
				goto bad;
			break;
		case 'd':
			cfg.duration = strtod(optarg, &end);
			if (*end || cfg.duration <= 0)
				goto bad;
			break;
		case 'c':
			cfg.count = strtoull(optarg, &end, 0);
			if (*end || cfg.count == 0 || cfg.count > (1ull << 32))
				goto bad;
			break;
		case 'b':
			cfg.burst = (unsigned)strtoul(optarg, &end, 0);
			if (*end || cfg.burst == 0 || cfg.burst > MAX_BURST)
				goto bad;
			break;
		case 'V':
			cfg.verify = false;
			break;
		case 'i':
			cfg.imix = true;
			break;
		case 'S':
			cfg.serve = true;
			break;
		case 'q':
			cfg.rx_queues = (uint16_t)strtoul(optarg, &end, 0);
			if (*end || cfg.rx_queues == 0 || cfg.rx_queues > MAX_QUEUES)
				goto bad;
			break;
		case 'Q':
			cfg.tx_queues = (uint16_t)strtoul(optarg, &end, 0);
			if (*end || cfg.tx_queues == 0 || cfg.tx_queues > MAX_QUEUES)
				goto bad;
			break;
		case 'm':
			cfg.mbufs = (unsigned)strtoul(optarg, &end, 0);
			if (*end || cfg.mbufs < 1024)
				goto bad;
			break;
		case 'C':
			cfg.catch_up = (unsigned)strtoul(optarg, &end, 0);
			if (*end || cfg.catch_up == 0)
				goto bad;
			break;
		case 'E':
			if (cfg.n_late == MAX_LATE) {
				fprintf(stderr, "e3-pktgen: at most %d --late-vdev\n", MAX_LATE);
				return -1;
			}
			cfg.late[cfg.n_late++] = optarg;
			break;
		case 'I':
			cfg.idle_sleep_us = (unsigned)strtoul(optarg, &end, 0);
			if (*end || cfg.idle_sleep_us > 10000)
				goto bad;
			break;
		case 'T':
			cfg.link_timeout_s = (unsigned)strtoul(optarg, &end, 0);
			if (*end || cfg.link_timeout_s == 0)
				goto bad;
			break;
		case 'w':
			cfg.warmup = strtod(optarg, &end);
			if (*end || cfg.warmup < 0)
				goto bad;
			break;
		case 'D':
			cfg.drain_ms = (unsigned)strtoul(optarg, &end, 0);
			if (*end)
				goto bad;
			break;
		default:
			usage(argv[0]);
			return -1;
		}
		continue;
bad:
		fprintf(stderr, "e3-pktgen: bad value '%s' for --%s\n", optarg, opts[idx].name);
		return -1;
	}
	if (cfg.n_streams == 0) {
		usage(argv[0]);
		return -1;
	}
	cfg.stream_on = (1u << cfg.n_streams) - 1;
	return 0;
}

/* The pool's mbufs in random order. A new pool hands them out in address
 * order, so a new link's rings hold buffers that a switch's copies walk in
 * sequence, which the CPU prefetches, until trials of small bursts mix
 * them up: a switch then spent 20-40% more cycles a frame than in the
 * same trial on a new link (bench/profile-notes.md). In random order from
 * the start, every trial of a session finds them alike. */
static int pool_shuffle(void)
{
	unsigned n = rte_mempool_avail_count(pool);
	struct rte_mbuf **m = malloc(n * sizeof(*m));
	if (m == NULL || rte_pktmbuf_alloc_bulk(pool, m, n) != 0) {
		free(m);
		return -ENOMEM;
	}
	for (unsigned i = n - 1; i > 0; i--) {
		unsigned j = (unsigned)rte_rand_max(i + 1);
		struct rte_mbuf *t = m[i];
		m[i] = m[j];
		m[j] = t;
	}
	rte_pktmbuf_free_bulk(m, n);
	free(m);
	return 0;
}

static int port_init(uint16_t port)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info info;
	int ret = rte_eth_dev_info_get(port, &info);
	if (ret < 0)
		return ret;
	port_rxq[port] = RTE_MIN(cfg.rx_queues, info.max_rx_queues);
	ret = rte_eth_dev_configure(port, port_rxq[port], cfg.tx_queues, &conf);
	if (ret < 0)
		return ret;
	/* memif sizes its rings from its devargs; a virtio_user port uses as
	 * many of its ring's slots (queue_size) as it is given descriptors. */
	uint16_t ring = strcmp(info.driver_name, "net_virtio_user") == 0 ? VIRTIO_RING_MAX : RING_SIZE;
	uint16_t nrx = ring, ntx = ring;
	rte_eth_dev_adjust_nb_rx_tx_desc(port, &nrx, &ntx);
	for (uint16_t q = 0; q < port_rxq[port]; q++) {
		ret = rte_eth_rx_queue_setup(port, q, nrx, rte_eth_dev_socket_id(port), NULL, pool);
		if (ret < 0)
			return ret;
	}
	for (uint16_t q = 0; q < cfg.tx_queues; q++) {
		ret = rte_eth_tx_queue_setup(port, q, ntx, rte_eth_dev_socket_id(port), NULL);
		if (ret < 0)
			return ret;
	}
	/* A memif client fails to start until the server listens, and a server
	 * needs a moment to notice that the previous trial's client left. */
	uint64_t deadline = rte_get_timer_cycles() + cfg.link_timeout_s * rte_get_timer_hz();
	while ((ret = rte_eth_dev_start(port)) < 0 && !quit && rte_get_timer_cycles() < deadline)
		rte_delay_us_sleep(50 * 1000);
	return ret;
}

static bool link_up(uint16_t port)
{
	struct rte_eth_link link;
	return rte_eth_link_get_nowait(port, &link) == 0 && link.link_status;
}

static bool memif_server(uint16_t port)
{
	struct rte_eth_dev_info info;
	const struct rte_devargs *da;
	if (rte_eth_dev_info_get(port, &info) != 0 || info.device == NULL)
		return false;
	da = rte_dev_devargs(info.device);
	return da != NULL && da->args != NULL && strstr(da->args, "role=server") != NULL;
}

static void intr_barrier_cb(void *arg)
{
	__atomic_store_n((bool *)arg, true, __ATOMIC_RELEASE);
}

/* Returns once EAL's interrupt thread has finished the callback it was
 * running: it runs its callbacks one at a time, so an alarm's comes after. */
static void intr_thread_barrier(void)
{
	bool done = false;
	if (rte_eal_alarm_set(1, intr_barrier_cb, &done) != 0)
		return;
	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE))
		rte_delay_us_sleep(1000);
}

/* Stop and close every port; returns whether one was a memif server.
 *
 * A generator looped to itself holds both ends of its links: stopping a
 * client closes its control channel, and EAL's interrupt thread then
 * disconnects the server end, freeing its regions. Stopping that server
 * meanwhile frees them twice (DPDK 22.11 memif takes no lock). So the
 * clients go first, and the servers only once the interrupt thread is done
 * with them. */
static bool ports_close(void)
{
	bool server[RTE_MAX_ETHPORTS], was_up[RTE_MAX_ETHPORTS], any_server = false;
	for (uint16_t p = 0; p < n_ports; p++) {
		server[p] = memif_server(p);
		was_up[p] = link_up(p);
		any_server |= server[p];
	}
	for (uint16_t p = n_ports; p-- > 0;)
		if (!server[p]) {
			rte_eth_dev_stop(p);
			rte_eth_dev_close(p);
		}
	if (!any_server)
		return false;
	/* A server whose client was another process may stay up: bounded. */
	uint64_t deadline = rte_get_timer_cycles() + rte_get_timer_hz();
	for (uint16_t p = 0; p < n_ports; p++)
		while (server[p] && was_up[p] && link_up(p) && rte_get_timer_cycles() < deadline)
			rte_delay_us_sleep(1000);
	intr_thread_barrier();
	for (uint16_t p = 0; p < n_ports; p++)
		if (server[p]) {
			rte_eth_dev_stop(p);
			rte_eth_dev_close(p);
		}
	return true;
}

/* Probe a --late-vdev, which must become port `port`. */
static int probe_late(uint16_t port, const char *devargs)
{
	int ret = rte_dev_probe(devargs);
	if (ret < 0) {
		fprintf(stderr, "e3-pktgen: %s: %s\n", devargs, rte_strerror(-ret));
		return -1;
	}
	if (rte_eth_dev_count_avail() != port + 1u || !rte_eth_dev_is_valid_port(port)) {
		fprintf(stderr, "e3-pktgen: %s: not one port numbered %u\n", devargs, port);
		return -1;
	}
	return 0;
}

static int wait_links(void)
{
	uint64_t deadline = rte_get_timer_cycles() + cfg.link_timeout_s * rte_get_timer_hz();
	for (;;) {
		uint16_t up = 0;
		for (uint16_t p = 0; p < n_ports; p++)
			up += link_up(p);
		if (up == n_ports)
			return 0;
		if (quit || rte_get_timer_cycles() > deadline) {
			for (uint16_t p = 0; p < n_ports; p++)
				if (!link_up(p))
					fprintf(stderr, "e3-pktgen: port %u: link down\n", p);
			return -1;
		}
		rte_delay_us_sleep(10 * 1000);
	}
}

/* ---- receive ------------------------------------------------------------ */

static inline void seq_note(struct lane *l, uint64_t seq)
{
	unsigned from = (unsigned)(seq % n_lanes);
	if (l->seq_any[from] && seq < l->seq_max[from])
		l->seq_reordered++;
	if (!l->seq_any[from] || seq > l->seq_max[from])
		l->seq_max[from] = seq;
	l->seq_any[from] = true;
	if (seq_seen && seq < cfg.count) {
		uint64_t bit = 1ull << (seq & 63);
		/* Lanes share the bitmap: a frame may return on another's queue. */
		if (__atomic_fetch_or(&seq_seen[seq >> 6], bit, __ATOMIC_RELAXED) & bit)
			l->seq_dup++;
	}
}

/* Every frame read: its stamp says data or learning, its sequence number
 * and latency are noted. */
static void rx_verify(struct lane *l, struct port_stats *ps, struct rte_mbuf **m, uint16_t n)
{
	uint64_t now = rte_rdtsc();
	for (uint16_t i = 0; i < n; i++) {
		const uint8_t *d = rte_pktmbuf_mtod(m[i], const uint8_t *);
		const struct pg_stamp *st = pg_stamp_find(d, rte_pktmbuf_data_len(m[i]));
		if (!st) {
			ps->rx_other++;
		} else if (st->magic == PG_MAGIC_LEARN) {
			ps->rx_learn++;
		} else {
			ps->rx++;
			ps->rx_bytes += rte_pktmbuf_pkt_len(m[i]) + PG_FCS;
			seq_note(l, st->seq);
			if (now >= st->tsc)
				pg_hist_add(&l->lat, (now - st->tsc) * 1000000000ull / tsc_hz);
		}
	}
}

/* Counted by length only (frame.h): data frames are the even ones. */
static void rx_count(struct port_stats *ps, struct rte_mbuf **m, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++) {
		uint32_t len = rte_pktmbuf_pkt_len(m[i]);
		if (len % 2) {
			ps->rx_learn++;
		} else {
			ps->rx++;
			ps->rx_bytes += len + PG_FCS;
		}
	}
}

/* The lane's RX queues of every port, once. */
static unsigned rx_poll(struct lane *l)
{
	struct rte_mbuf *m[MAX_BURST];
	unsigned total = 0;
	for (uint16_t p = 0; p < n_ports; p++)
		for (uint16_t q = (uint16_t)l->id; q < port_rxq[p]; q = (uint16_t)(q + n_lanes)) {
			uint16_t n = rte_eth_rx_burst(p, q, m, MAX_BURST);
			if (n == 0)
				continue;
			if (cfg.verify)
				rx_verify(l, &l->ps[p], m, n);
			else
				rx_count(&l->ps[p], m, n);
			rte_pktmbuf_free_bulk(m, n);
			total += n;
		}
	return total;
}

/* Nothing was sent: with --idle-sleep-us, receive all that waits and give
 * the CPU away for a while. The rings (2^14 memif slots) hold what arrives
 * meanwhile, and the token bucket sends what came due in bursts afterwards.
 * Waiting for a poll that finds no frame would rarely sleep at all: at a
 * few Mpps frames trickle back all the time. */
static void idle(struct lane *l, unsigned sent)
{
	if (!cfg.idle_sleep_us || sent)
		return;
	while (rx_poll(l))
		;
	rte_delay_us_sleep(cfg.idle_sleep_us);
}

/* Receive for `cycles` TSC cycles (the learning pause, the drain). */
static void rx_for(struct lane *l, uint64_t cycles)
{
	uint64_t until = rte_rdtsc() + cycles;
	while (rte_rdtsc() < until) {
		rx_poll(l);
		idle(l, 0);
	}
}

/* ---- transmit ----------------------------------------------------------- */

static const uint16_t imix_sizes[12] = { 64, 570, 64, 64, 1518, 64, 570, 64, 64, 570, 64, 570 };

/* imix_pos NULL: every frame has the stream's size. seq advances by step. */
static uint16_t build_burst(struct pg_stream *s, struct rte_mbuf **m, uint16_t n,
			    uint32_t magic, uint64_t *seq, unsigned step, unsigned *imix_pos)
{
	if (rte_pktmbuf_alloc_bulk(pool, m, n) != 0)
		return 0;
	struct pg_stamp st = { .magic = magic, .tsc = rte_rdtsc() };
	for (uint16_t i = 0; i < n; i++) {
		uint32_t size = s->size;
		if (imix_pos) {
			size = imix_sizes[*imix_pos];
			*imix_pos = (*imix_pos + 1) % 12;
		}
		st.seq = *seq;
		*seq += step;
		uint8_t *d = rte_pktmbuf_mtod(m[i], uint8_t *);
		uint32_t len = pg_frame_write(s, d, size, &st);
		m[i]->data_len = (uint16_t)len;
		m[i]->pkt_len = len;
	}
	return n;
}

/* Count a send of data frames: what the port took and, flat out, whether
 * it pushed back (took less than offered). */
static void note_sent(struct lane *l, uint16_t port, uint16_t offered, uint16_t sent,
		      bool flat_out, uint32_t magic)
{
	if (magic != PG_MAGIC_DATA)
		return;
	struct port_stats *ps = &l->ps[port];
	ps->tx += sent;
	if (flat_out) {
		ps->tx_bursts++;
		ps->tx_pushback += sent < offered;
	}
}

/* How many TX queues of each port are the lane's (the rule above). */
static unsigned lane_txqs(const struct lane *l)
{
	return (cfg.tx_queues - l->id + n_lanes - 1) / n_lanes;
}

/* The lane's next TX queue: its own, in turn. */
static uint16_t next_txq(struct lane *l)
{
	uint16_t q = (uint16_t)(l->id + l->next_txq * n_lanes);
	if (q + n_lanes >= cfg.tx_queues)
		l->next_txq = 0;
	else
		l->next_txq++;
	return q;
}

/* Send up to n frames of the next stream; returns frames offered. In rate
 * mode frames the port refuses are dropped and counted (the switch's input
 * ring was full: loss); flat out they are kept and retried. */
static uint16_t tx_some(struct lane *l, uint16_t n, bool flat_out, uint32_t magic)
{
	struct rte_mbuf *m[MAX_BURST];
	if (l->n_pend) {
		uint16_t sent = rte_eth_tx_burst(l->pend_port, l->pend_q, l->pend, l->n_pend);
		note_sent(l, l->pend_port, l->n_pend, sent, flat_out, magic);
		memmove(l->pend, l->pend + sent, (l->n_pend - sent) * sizeof(l->pend[0]));
		l->n_pend -= sent;
		return 0;
	}
	while (!(cfg.stream_on & (1u << l->next_stream)))
		l->next_stream = (l->next_stream + 1) % cfg.n_streams;
	struct pg_stream *s = &l->streams[l->next_stream];
	l->next_stream = (l->next_stream + 1) % cfg.n_streams;
	bool data = magic == PG_MAGIC_DATA;
	uint16_t built = build_burst(s, m, n, magic, data ? &l->seq : &l->warm_seq, data ? n_lanes : 1,
				     cfg.imix ? &l->imix_pos : NULL);
	if (built == 0)
		return 0;
	uint16_t q = next_txq(l);
	uint16_t sent = rte_eth_tx_burst(s->port, q, m, built);
	note_sent(l, s->port, built, sent, flat_out, magic);
	if (sent < built) {
		if (flat_out) {
			memcpy(l->pend, m + sent, (built - sent) * sizeof(m[0]));
			l->n_pend = built - sent;
			l->pend_port = s->port;
			l->pend_q = q;
		} else {
			if (data)
				l->ps[s->port].tx_ring_full += built - sent;
			rte_pktmbuf_free_bulk(m + sent, built - sent);
		}
	}
	return flat_out ? sent : built;
}

/* The learning phase, lane 0's: every value of every --learn stream once,
 * paced at learn_rate, retried when the port pushes back (none may be
 * lost). The other lanes receive meanwhile. */
static void learn_phase(struct lane *l)
{
	if (l->id != 0) {
		while (!__atomic_load_n(&learn_done, __ATOMIC_ACQUIRE)) {
			rx_poll(l);
			idle(l, 0);
		}
		return;
	}
	uint64_t seq = 0;
	double per_frame = (double)tsc_hz / cfg.learn_rate;
	for (unsigned k = 0; k < cfg.n_learn && !quit; k++) {
		struct pg_stream *s = &cfg.learn[k];
		uint64_t start = rte_rdtsc();
		uint32_t done = 0;
		while (done < s->n && !quit) {
			uint64_t due = (uint64_t)(done * per_frame);
			if (rte_rdtsc() - start < due) {
				rx_poll(l);
				idle(l, 0);
				continue;
			}
			struct rte_mbuf *m[MAX_BURST];
			uint16_t want = (uint16_t)RTE_MIN((uint32_t)cfg.burst, s->n - done);
			uint16_t built = build_burst(s, m, want, PG_MAGIC_LEARN, &seq, 1, NULL);
			uint16_t sent = 0;
			while (sent < built && !quit) {
				uint16_t now_sent = rte_eth_tx_burst(s->port, 0, m + sent, built - sent);
				sent += now_sent;
				rx_poll(l);
				idle(l, now_sent);
			}
			if (sent < built)
				rte_pktmbuf_free_bulk(m + sent, built - sent);
			done += built;
		}
	}
	/* Let the switch finish learning before traffic depends on it. */
	rx_for(l, tsc_hz / 5);
	__atomic_store_n(&learn_done, true, __ATOMIC_RELEASE);
}

/* Keep gap among the N_GAPS longest (longest first). */
static inline void gap_note(uint64_t *top, uint64_t gap)
{
	if (gap <= top[N_GAPS - 1])
		return;
	unsigned i = N_GAPS - 1;
	for (; i > 0 && top[i - 1] < gap; i--)
		top[i] = top[i - 1];
	top[i] = gap;
}

/* Send the lane's share of the streams for `seconds` (or, counting data,
 * its sequence numbers below cfg.count). Warm-up frames carry the learning
 * magic, so the receiver ignores them. */
static void tx_loop(struct lane *l, double seconds, uint32_t magic, uint64_t *t_start, uint64_t *t_end)
{
	uint64_t count = magic == PG_MAGIC_DATA ? cfg.count : 0;
	bool flat_out = cfg.rate == 0;
	/* Every queue gets the same share: with more queues than lanes, a
	 * switch's worker behind a lane's second queue is offered as much as
	 * one whose lane has one. */
	double share = (double)lane_txqs(l) / cfg.tx_queues;
	double rate = cfg.rate * share;
	double tokens = 0, per_cycle = rate / (double)tsc_hz;
	/* Tokens saved up while the generator was preempted (a shared CPU) are
	 * spent in bursts afterwards, up to 20 ms or --catch-up frames (half a
	 * 2^14 memif ring), so the offered rate stays the one asked for; a
	 * switch that keeps up absorbs such a burst in its input ring. */
	double cap = RTE_MAX(4.0 * cfg.burst, RTE_MIN(rate * 0.02, cfg.catch_up * share));
	uint64_t start = rte_rdtsc(), last = start;
	uint64_t end = start + (uint64_t)(seconds * (double)tsc_hz);
	uint64_t turn = start, rx_last = start;
	bool gaps = magic == PG_MAGIC_DATA;
	for (;;) {
		unsigned sent = 0;
		uint64_t now = rte_rdtsc();
		if (gaps) {
			l->loop_gap = RTE_MAX(l->loop_gap, now - turn);
			turn = now;
		}
		if (quit || (count ? l->seq >= count && !l->n_pend : now >= end))
			break;
		uint16_t n = (uint16_t)cfg.burst;
		if (!flat_out) {
			tokens += (double)(now - last) * per_cycle;
			last = now;
			if (tokens > cap)
				tokens = cap;
			if (tokens < 1.0)
				goto rx;
			if (tokens < n)
				n = (uint16_t)tokens;
		}
		if (count && l->seq + (uint64_t)(n - 1) * n_lanes >= count)
			n = l->seq < count ? (uint16_t)((count - l->seq + n_lanes - 1) / n_lanes) : 0;
		if (n) {
			uint16_t done = tx_some(l, n, flat_out, magic);
			tokens -= done;
			sent = done;
		}
rx:
		if (rx_poll(l) && gaps) {
			gap_note(l->rx_gap, now - rx_last);
			rx_last = now;
		}
		idle(l, sent);
	}
	*t_start = start;
	*t_end = rte_rdtsc();
	if (gaps)
		gap_note(l->rx_gap, *t_end - rx_last);
	if (l->n_pend) {
		rte_pktmbuf_free_bulk(l->pend, l->n_pend);
		l->n_pend = 0;
	}
}

/* ---- result --------------------------------------------------------------- */

static void print_result(double seconds)
{
	struct port_stats sum = { 0 }, ports[RTE_MAX_ETHPORTS];
	static struct pg_hist lat;
	uint64_t seq_dup = 0, seq_reordered = 0, rx_gap[N_GAPS] = { 0 }, loop_gap = 0;
	memset(ports, 0, sizeof(ports));
	pg_hist_init(&lat);
	for (unsigned k = 0; k < n_lanes; k++) {
		const struct lane *l = &lanes[k];
		for (uint16_t p = 0; p < n_ports; p++) {
			const struct port_stats *s = &l->ps[p];
			ports[p].tx += s->tx;
			ports[p].tx_ring_full += s->tx_ring_full;
			ports[p].tx_bursts += s->tx_bursts;
			ports[p].tx_pushback += s->tx_pushback;
			ports[p].rx += s->rx;
			ports[p].rx_learn += s->rx_learn;
			ports[p].rx_other += s->rx_other;
			ports[p].rx_bytes += s->rx_bytes;
		}
		pg_hist_merge(&lat, &l->lat);
		seq_dup += l->seq_dup;
		seq_reordered += l->seq_reordered;
		for (unsigned g = 0; g < N_GAPS; g++)
			gap_note(rx_gap, l->rx_gap[g]);
		loop_gap = RTE_MAX(loop_gap, l->loop_gap);
	}
	printf("{\"ports\": [");
	for (uint16_t p = 0; p < n_ports; p++) {
		struct port_stats *s = &ports[p];
		printf("%s{\"port\": %u, \"tx\": %" PRIu64 ", \"tx_ring_full\": %" PRIu64
		       ", \"tx_bursts\": %" PRIu64 ", \"tx_pushback\": %" PRIu64
		       ", \"rx\": %" PRIu64 ", \"rx_learn\": %" PRIu64 ", \"rx_other\": %" PRIu64 "}",
		       p ? ", " : "", p, s->tx, s->tx_ring_full, s->tx_bursts, s->tx_pushback, s->rx,
		       s->rx_learn, s->rx_other);
		sum.tx += s->tx;
		sum.tx_bursts += s->tx_bursts;
		sum.tx_pushback += s->tx_pushback;
		sum.tx_ring_full += s->tx_ring_full;
		sum.rx += s->rx;
		sum.rx_bytes += s->rx_bytes;
		sum.rx_other += s->rx_other;
	}
	uint64_t offered = sum.tx + sum.tx_ring_full;
	uint64_t missing = 0;
	if (seq_seen) {
		for (uint64_t i = 0; i < cfg.count; i++)
			if (!(seq_seen[i >> 6] & (1ull << (i & 63))))
				missing++;
	}
	printf("], \"tx\": %" PRIu64 ", \"tx_ring_full\": %" PRIu64 ", \"tx_bursts\": %" PRIu64
	       ", \"tx_pushback\": %" PRIu64 ", \"offered\": %" PRIu64
	       ", \"rx\": %" PRIu64 ", \"rx_other\": %" PRIu64 ", \"duration_s\": %.6f"
	       ", \"rate_pps\": %.0f, \"tx_rate_pps\": %.0f, \"rx_rate_pps\": %.0f, \"rx_bps\": %.0f",
	       sum.tx, sum.tx_ring_full, sum.tx_bursts, sum.tx_pushback, offered, sum.rx, sum.rx_other,
	       seconds, cfg.rate,
	       (double)offered / seconds, (double)sum.rx / seconds, (double)sum.rx_bytes * 8 / seconds);
	printf(", \"latency_ns\": {\"samples\": %" PRIu64 ", \"min\": %" PRIu64 ", \"p50\": %" PRIu64
	       ", \"p99\": %" PRIu64 ", \"p999\": %" PRIu64 ", \"max\": %" PRIu64 ", \"avg\": %.0f}",
	       lat.count, lat.count ? lat.min : 0, pg_hist_quantile(&lat, 0.5),
	       pg_hist_quantile(&lat, 0.99), pg_hist_quantile(&lat, 0.999), lat.max,
	       lat.count ? (double)lat.sum / (double)lat.count : 0.0);
	printf(", \"gap_us\": {\"rx\": [");
	for (unsigned g = 0; g < N_GAPS && rx_gap[g]; g++)
		printf("%s%" PRIu64, g ? ", " : "", rx_gap[g] * 1000000 / tsc_hz);
	printf("], \"loop\": %" PRIu64 "}", loop_gap * 1000000 / tsc_hz);
	printf(", \"seq\": {\"checked\": %s, \"missing\": %" PRIu64 ", \"dup\": %" PRIu64
	       ", \"reordered\": %" PRIu64 "}, \"verified\": %s, \"lanes\": %u}\n",
	       seq_seen ? "true" : "false", missing, seq_dup, seq_reordered,
	       cfg.verify ? "true" : "false", n_lanes);
	fflush(stdout);
}

/* Clear what one trial measures, in every lane. */
static void stats_reset(void)
{
	for (unsigned k = 0; k < n_lanes; k++) {
		struct lane *l = &lanes[k];
		memset(l->ps, 0, sizeof(l->ps));
		pg_hist_init(&l->lat);
		l->seq_dup = l->seq_reordered = 0;
		memset(l->rx_gap, 0, sizeof(l->rx_gap));
		l->loop_gap = 0;
		memset(l->seq_max, 0, sizeof(l->seq_max));
		memset(l->seq_any, 0, sizeof(l->seq_any));
		l->seq = k; /* every trial numbers its frames from 0, lane by lane */
	}
	free(seq_seen);
	seq_seen = NULL;
}

/* One lane's trial: optional learning, warm-up, measurement, drain. */
static int lane_trial(void *arg)
{
	struct lane *l = arg;
	uint64_t t0, t1;
	if (l->learn)
		learn_phase(l);
	if (cfg.warmup > 0)
		tx_loop(l, cfg.warmup, PG_MAGIC_LEARN, &t0, &t1);
	tx_loop(l, cfg.duration, PG_MAGIC_DATA, &l->t_start, &l->t_end);
	/* A switch may send a lane's frames back on another lane's queue:
	 * every lane receives until all have sent, then drains what is still
	 * in flight in the switch. */
	__atomic_add_fetch(&lanes_sent, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&lanes_sent, __ATOMIC_ACQUIRE) < n_lanes) {
		rx_poll(l);
		idle(l, 0);
	}
	rx_for(l, cfg.drain_ms * tsc_hz / 1000);
	return 0;
}

/* One trial with the current cfg.rate/duration/count/warmup on every lane
 * (lane 0 on this lcore), then one JSON line. */
static int run_trial(bool learn)
{
	stats_reset();
	if (cfg.count && cfg.verify) {
		seq_seen = calloc((cfg.count + 63) / 64, sizeof(uint64_t));
		if (!seq_seen) {
			fprintf(stderr, "e3-pktgen: no memory for the sequence bitmap\n");
			return 1;
		}
	}
	learn_done = !learn;
	lanes_sent = 0;
	for (unsigned k = 0; k < n_lanes; k++)
		lanes[k].learn = learn;
	for (unsigned k = 1; k < n_lanes; k++)
		rte_eal_remote_launch(lane_trial, &lanes[k], lanes[k].lcore);
	lane_trial(&lanes[0]);
	rte_eal_mp_wait_lcore();
	uint64_t t0 = lanes[0].t_start, t1 = lanes[0].t_end;
	for (unsigned k = 1; k < n_lanes; k++) {
		t0 = RTE_MIN(t0, lanes[k].t_start);
		t1 = RTE_MAX(t1, lanes[k].t_end);
	}
	print_result((double)(t1 - t0) / (double)tsc_hz);
	return 0;
}

/* "0:2" -> bits 0 and 2; every index must name a stream. */
static int parse_stream_set(const char *v, uint32_t *mask)
{
	*mask = 0;
	while (*v) {
		char *end;
		unsigned long i = strtoul(v, &end, 10);
		if (end == v || i >= cfg.n_streams || (*end && *end != ':'))
			return -1;
		*mask |= 1u << i;
		v = *end ? end + 1 : end;
	}
	return *mask ? 0 : -1;
}

/* A --serve line: "rate=PPS duration=S warmup=S count=N learn=0|1
 * imix=0|1 verify=0|1 streams=I:J", any subset; what is not given keeps
 * its last value, except count (per trial; 0 = by duration) and streams
 * (all). */
static int parse_trial(char *line, bool *learn)
{
	char *save = NULL;
	cfg.count = 0;
	cfg.stream_on = (1u << cfg.n_streams) - 1;
	for (char *kv = strtok_r(line, " \t\r\n", &save); kv; kv = strtok_r(NULL, " \t\r\n", &save)) {
		char *v = strchr(kv, '='), *end;
		if (!v)
			return -1;
		*v++ = '\0';
		if (!strcmp(kv, "streams")) {
			if (parse_stream_set(v, &cfg.stream_on) < 0)
				return -1;
			continue;
		}
		double x = strtod(v, &end);
		if (*end || x < 0)
			return -1;
		if (!strcmp(kv, "rate"))
			cfg.rate = x;
		else if (!strcmp(kv, "duration") && x > 0)
			cfg.duration = x;
		else if (!strcmp(kv, "warmup"))
			cfg.warmup = x;
		else if (!strcmp(kv, "count") && x <= (double)(1ull << 32))
			cfg.count = (uint64_t)x;
		else if (!strcmp(kv, "learn"))
			*learn = x != 0;
		else if (!strcmp(kv, "imix"))
			cfg.imix = x != 0;
		else if (!strcmp(kv, "verify"))
			cfg.verify = x != 0;
		else
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int eal = rte_eal_init(argc, argv);
	if (eal < 0) {
		fprintf(stderr, "e3-pktgen: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	argc -= eal;
	argv += eal;
	if (parse_args(argc, argv) < 0)
		return 2;
	/* Sleeps of a few tens of microseconds must not stretch by the default
	 * 50 us timer slack. */
	if (cfg.idle_sleep_us)
		prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	n_lanes = rte_lcore_count();
	if (n_lanes > MAX_LANES) {
		fprintf(stderr, "e3-pktgen: at most %d lcores\n", MAX_LANES);
		return 2;
	}
	if (!cfg.tx_queues)
		cfg.tx_queues = (uint16_t)n_lanes;
	cfg.rx_queues = RTE_MAX(cfg.rx_queues, cfg.tx_queues);
	if (cfg.tx_queues < n_lanes) {
		fprintf(stderr, "e3-pktgen: %u lanes (lcores) need as many --queues\n", n_lanes);
		return 2;
	}
	unsigned lc = rte_get_main_lcore();
	for (unsigned k = 0; k < n_lanes; k++) {
		lanes[k].id = k;
		lanes[k].lcore = lc;
		memcpy(lanes[k].streams, cfg.streams, sizeof(cfg.streams));
		lc = rte_get_next_lcore(lc, 1, 0);
	}

	const uint16_t eal_ports = rte_eth_dev_count_avail();
	n_ports = (uint16_t)(eal_ports + cfg.n_late);   /* a port per late device */
	if (n_ports == 0) {
		fprintf(stderr, "e3-pktgen: no ports (give --vdev net_memif...)\n");
		return 1;
	}
	for (unsigned k = 0; k < cfg.n_streams + cfg.n_learn; k++) {
		const struct pg_stream *s = k < cfg.n_streams ? &cfg.streams[k] : &cfg.learn[k - cfg.n_streams];
		if (s->port >= n_ports) {
			fprintf(stderr, "e3-pktgen: stream on port %u, only %u ports\n", s->port, n_ports);
			return 2;
		}
	}
	pool = rte_pktmbuf_pool_create("pg_pool", cfg.mbufs, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       (int)rte_socket_id());
	if (!pool) {
		fprintf(stderr, "e3-pktgen: mbuf pool: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	if (pool_shuffle() < 0) {
		fprintf(stderr, "e3-pktgen: mbuf pool: cannot take every mbuf to shuffle them\n");
		return 1;
	}
	for (uint16_t p = 0; p < n_ports; p++) {
		if (p >= eal_ports && probe_late(p, cfg.late[p - eal_ports]) < 0)
			return 1;
		int ret = port_init(p);
		if (ret < 0) {
			fprintf(stderr, "e3-pktgen: port %u init: %s\n", p, rte_strerror(-ret));
			return 1;
		}
	}
	if (wait_links() < 0) {
		fprintf(stderr, "e3-pktgen: links not up after %us (is the switch running?)\n",
			cfg.link_timeout_s);
		return 3;
	}
	tsc_hz = rte_get_tsc_hz();
	int rc = 0;
	if (!cfg.serve) {
		rc = run_trial(cfg.n_learn > 0);
	} else {
		/* One trial per line on stdin; the memif links stay up between
		 * them (a memif server that sees a client leave while its worker
		 * polls the rings may crash: DPDK 22.11 memif unmaps the regions
		 * under the worker's feet). */
		char line[512];
		printf("{\"ready\": true, \"ports\": %u}\n", n_ports);
		fflush(stdout);
		while (!quit && fgets(line, sizeof(line), stdin)) {
			bool learn = false;
			if (strncmp(line, "quit", 4) == 0)
				break;
			if (parse_trial(line, &learn) < 0) {
				printf("{\"error\": \"bad trial line\"}\n");
				fflush(stdout);
				continue;
			}
			rc = run_trial(learn);
			if (rc)
				break;
		}
	}
	bool served = ports_close();
	free(seq_seen);
	/* DPDK 22.11 memif frees a closed server's listening socket without
	 * removing it from EAL's interrupt thread, which may read it (it lives
	 * in DPDK memory) while rte_eal_cleanup() unmaps that memory, and
	 * crash. Such a generator just exits; the next DPDK process on the
	 * hugetlbfs clears the files it leaves. */
	if (!served)
		rte_eal_cleanup();
	return rc;
}
