/* SPDX-License-Identifier: Apache-2.0
 *
 * e3-vswitchd: EAL arguments, then after "--" our own:
 *   --conf FILE            options from FILE (/etc/e3/vswitchd/NAME.conf: "eal = ..."
 *                          and "name = value" per line); the command line wins
 *   --name NAME            this node's name (default "e3")
 *   --rpc-socket PATH      JSON-RPC socket (default /run/e3/NAME.sock)
 *   --rpc-mode OCTAL       socket file mode (default 0660)
 *   --rpc-idle-s N         close RPC connections idle for N seconds (default 60, 0 = never)
 *   --poll-mode busy|adaptive
 *   --mac-table-size N     MAC table capacity (default 1048576)
 *   --mbufs N              mbuf pool size (default 16383)
 *   --mbuf-data N          bytes of frame an mbuf holds (default 2048): MTUs up to
 *                          N - 14 (fabric) or N - 22 (customer); jumbo frames need more
 *   --config FILE          config_dump document to load at start
 *   --port-dir DIR         where ports' sockets (memif, vhost-user) may be
 *                          (default: the RPC socket's directory)
 *   --pcap-dir DIR         allow net_pcap ports, their files under DIR (tests)
 *   --stop-grace-ms N      on SIGTERM/SIGINT, BFD AdminDown on every session, then
 *                          forward N ms more before exiting (default 1000; 0: at once);
 *                          a second signal ends the wait
 *   --checkpoint FILE      warm restart (docs/ha.md): on SIGUSR2, ask every BFD
 *                          neighbour to wait --restart-hold-ms, write the node's
 *                          state to FILE and exit 75; at start, resume from FILE
 *                          (then removed) before the first frame
 *   --restart-hold-ms N    how long neighbours wait for a warm restart (default 3000)
 * On SIGHUP the process hands the node over to a new one of the binary on
 * disk, started beside it with the same options (rpc/handover.c,
 * docs/ha.md); --takeover-fd N is that new process's end of the exchange.
 * The main lcore serves control; every other lcore is a worker.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "base/conffile.h"
#include "node/node.h"
#include "node/init.h"
#include "rpc/rpc.h"
#include "worker/worker.h"

static volatile sig_atomic_t stop;   /* SIGTERM/SIGINT received */
static volatile sig_atomic_t warm;   /* SIGUSR2: a warm restart */
static volatile sig_atomic_t upgrade;   /* SIGHUP: a handover */

#define E3_EXIT_WARM 75              /* EX_TEMPFAIL: start me again (the unit's RestartForceExitStatus) */

static void on_signal(int sig)
{
	if (sig == SIGUSR2)
		warm = 1;
	else if (sig == SIGHUP)
		upgrade = 1;
	else
		stop++;
}

static const struct option longopts[] = {
	{ "name", required_argument, NULL, 'n' },
	{ "rpc-socket", required_argument, NULL, 's' },
	{ "rpc-mode", required_argument, NULL, 'm' },
	{ "rpc-idle-s", required_argument, NULL, 'i' },
	{ "poll-mode", required_argument, NULL, 'p' },
	{ "mac-table-size", required_argument, NULL, 't' },
	{ "mbufs", required_argument, NULL, 'b' },
	{ "mbuf-data", required_argument, NULL, 'd' },
	{ "config", required_argument, NULL, 'c' },
	{ "port-dir", required_argument, NULL, 'P' },
	{ "pcap-dir", required_argument, NULL, 'C' },
	{ "stop-grace-ms", required_argument, NULL, 'g' },
	{ "checkpoint", required_argument, NULL, 'k' },
	{ "restart-hold-ms", required_argument, NULL, 'H' },
	{ "takeover-fd", required_argument, NULL, 'T' },
	{ "conf", required_argument, NULL, 'f' },   /* taken by e3_conf_argv */
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--conf FILE] [EAL options] -- [--name NAME] [--rpc-socket PATH] [--rpc-mode OCTAL] [--rpc-idle-s N]\n"
		"       [--poll-mode busy|adaptive] [--mac-table-size N] [--mbufs N] [--mbuf-data N] [--config FILE]\n"
		"       [--port-dir DIR] [--pcap-dir DIR] [--stop-grace-ms N] [--checkpoint FILE]\n"
		"       [--restart-hold-ms N]\n",
		prog);
}

static int parse_u32(const char *s, uint32_t min, uint32_t max, int base, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, base);
	if (errno || *s == 0 || *end != 0 || v < min || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* Resume from a warm restart's checkpoint, used once: a bad or stale one
 * leaves a node its agent programs, as after any start. */
static void resume(const char *name, const char *path)
{
	struct e3_checkpoint_stats st;
	char err[E3_ERRLEN] = "", bad[4096];

	if (e3_checkpoint_load(path, &st, err) != 0) {
		snprintf(bad, sizeof(bad), "%s.bad", path);
		rename(path, bad);
		fprintf(stderr, "e3-vswitchd %s: checkpoint not used (kept as %s): %s\n", name, bad, err);
		return;
	}
	unlink(path);
	if (st.live)
		printf("e3-vswitchd %s: resumed from %s (%lu ms old): %u BFD sessions Up, %u MACs\n", name, path,
		       (unsigned long)st.age_ms, st.sessions, st.macs);
	else
		printf("e3-vswitchd %s: configuration from %s; its sessions and MACs are %lu ms old, past the hold\n",
		       name, path, (unsigned long)st.age_ms);
	fflush(stdout);
}

struct run {
	const char *name, *sock, *checkpoint;
	uint32_t mode, grace_ms, hold_ms;
	int argc;                  /* as started, for a handover's new process */
	char **argv;
	bool no_huge;
	struct e3_handover *ho;    /* a handover under way */
};

enum run_end { END_STOP, END_WARM, END_HANDOVER };

static void workers_start(void)
{
	__atomic_store_n(&e3.running, true, __ATOMIC_RELEASE);
	rte_eal_mp_remote_launch(e3_worker_main, NULL, SKIP_MAIN);
}

/* Stopped, and the MACs they learned last applied: nothing changes after.
 * A handover's new process hears of it at once: from then on what reaches
 * the ports is its to forward. */
static void workers_stop(struct e3_handover *ho)
{
	__atomic_store_n(&e3.running, false, __ATOMIC_RELEASE);
	rte_eal_mp_wait_lcore();
	if (ho != NULL)
		e3_handover_stopped(ho);
	e3_node_lock();
	e3_dp_housekeeping();
	e3_node_unlock();
}

/* Ask every BFD neighbour to wait hold_ms for us (0: back to normal). */
static unsigned hold_neighbours(uint32_t hold_ms)
{
	e3_node_lock();
	unsigned n = e3_node_bfd_hold_all((uint64_t)hold_ms * 1000);
	e3_node_unlock();
	return n;
}

static void handover_begin(struct run *r)
{
	char err[E3_ERRLEN] = "";

	if (e3_handover_start(r->argc, r->argv, r->no_huge, &r->ho, err) != 0) {
		fprintf(stderr, "e3-vswitchd %s: handover: %s\n", r->name, err);
		return;
	}
	printf("e3-vswitchd %s: handover: pid %d starting; RPC paused until it takes over\n", r->name,
	       (int)e3_handover_pid(r->ho));
	fflush(stdout);
}

static void handover_fail(struct run *r, const char *why)
{
	fprintf(stderr, "e3-vswitchd %s: handover to pid %d abandoned: %s; forwarding on\n", r->name,
		(int)e3_handover_pid(r->ho), why);
	e3_handover_abort(r->ho);
	r->ho = NULL;
}

/* The main lcore's loop: RPC and housekeeping until a stop, a warm restart
 * or a handover is due. */
static enum run_end serve(struct run *r)
{
	uint64_t stop_at = 0;   /* TSC: the end of a planned stop's grace */
	uint64_t held_at = 0;   /* TSC: a warm restart's hold was sent */
	char err[E3_ERRLEN] = "";

	for (;;) {
		if (upgrade) {
			upgrade = 0;
			if (r->ho == NULL && held_at == 0 && stop_at == 0 && !stop)
				handover_begin(r);
		}
		if (r->ho != NULL && stop) {
			handover_fail(r, "asked to stop");
			held_at = 0;
		}
		bool hold_now = false;

		if (warm) {
			warm = 0;
			if (r->checkpoint == NULL || r->ho != NULL)
				fprintf(stderr, "e3-vswitchd %s: SIGUSR2 %s: no warm restart\n", r->name,
					r->ho ? "during a handover" : "without --checkpoint");
			else
				hold_now = held_at == 0 && stop_at == 0;
		}
		if (r->ho != NULL && held_at == 0) {
			int rc = e3_handover_poll(r->ho, err);

			if (rc < 0)
				handover_fail(r, err);
			hold_now = rc > 0;   /* its ports are open: hold, then switch */
		}
		if (hold_now) {
			/* A restart keeps the neighbours waiting rather than
			 * moving away: ask them for a longer detection time and go
			 * once each has answered (or after 100 ms). */
			unsigned held = hold_neighbours(r->hold_ms);

			printf("e3-vswitchd %s: %s: %u BFD neighbours asked to wait %u ms\n", r->name,
			       r->ho ? "handover" : "warm restart", held, r->hold_ms);
			fflush(stdout);
			held_at = rte_get_tsc_cycles();
		}
		if (held_at) {
			e3_node_lock();
			unsigned polling = e3_node_bfd_polling();
			e3_node_unlock();
			if (polling == 0 || rte_get_tsc_cycles() - held_at >= rte_get_tsc_hz() / 10)
				return r->ho != NULL ? END_HANDOVER : END_WARM;
		}
		if (stop && stop_at == 0) {
			/* A planned stop tells the neighbours first (BFD AdminDown),
			 * and forwards while they move their traffic. */
			e3_node_lock();
			unsigned told = r->grace_ms ? e3_node_bfd_admin_down_all() : 0;
			e3_node_unlock();
			if (told == 0)
				return END_STOP;
			printf("e3-vswitchd %s: BFD AdminDown on %u sessions; forwarding %u ms more\n", r->name,
			       told, r->grace_ms);
			fflush(stdout);
			stop_at = rte_get_tsc_cycles() + rte_get_tsc_hz() * r->grace_ms / 1000;
		}
		if (stop_at && (stop > 1 || rte_get_tsc_cycles() >= stop_at))
			return END_STOP;
		/* During a handover the configuration stays as the new process
		 * got it: no RPC is served. */
		if (r->ho == NULL)
			e3_rpc_poll(1);
		else
			usleep(1000);
		e3_node_lock();
		e3_dp_housekeeping();
		e3_node_unlock();
	}
}

/* The workers are stopped: give the node to the new process and exit, or
 * take up forwarding again. */
static void handover_finish(struct run *r)
{
	char err[E3_ERRLEN] = "";

	e3_rpc_fini();   /* the new process listens on the same path */
	if (e3_handover_switch(r->ho, r->hold_ms, err) == 0) {
		printf("e3-vswitchd %s: handed over to pid %d\n", r->name, (int)e3_handover_pid(r->ho));
		fflush(stdout);
		fflush(stderr);
		/* Nothing of ours to close: the ports are the new process's
		 * too, and the kernel drops our sockets. */
		_exit(0);
	}
	handover_fail(r, err);
	hold_neighbours(0);
	if (e3_rpc_init(r->sock, (mode_t)r->mode) != 0)
		fprintf(stderr, "e3-vswitchd %s: cannot listen on %s again\n", r->name, r->sock);
	workers_start();
}

int main(int argc, char **argv)
{
	const char *name = "e3", *sock = NULL, *config = NULL, *port_dir = NULL, *pcap_dir = NULL;
	const char *checkpoint = NULL;
	int takeover_fd = -1, start_argc = argc;
	char **start_argv = calloc((size_t)argc + 1, sizeof(*start_argv));
	bool no_huge = false;
	uint32_t mode = 0660, idle_s = 60, grace_ms = 1000, hold_ms = 3000;
	struct e3_dp_opts o = { .poll_mode = E3_POLL_BUSY, .mac_table_size = 1u << 20, .mbufs = 16383 };
	char err[E3_ERRLEN] = "";
	char sockbuf[256];
	int ret, opt;

	/* As started, for a handover: EAL reorders and overwrites argv. */
	if (start_argv == NULL)
		return 1;
	memcpy(start_argv, argv, sizeof(*argv) * (size_t)argc);
	argc = e3_conf_argv(argc, argv, longopts, &argv, err);
	if (argc < 0) {
		fprintf(stderr, "e3-vswitchd: %s\n", err);
		return 2;
	}
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		no_huge |= strcmp(argv[i], "--no-huge") == 0;
	e3_handover_save_affinity();
	ret = rte_eal_init(argc, argv);
	if (ret < 0) {
		fprintf(stderr, "e3-vswitchd: EAL init failed\n");
		return 1;
	}
	argc -= ret;
	argv += ret;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		int bad = 0;

		switch (opt) {
		case 'n':
			name = optarg;
			bad = name[0] == 0 || strlen(name) > 64 || strchr(name, '/') != NULL;
			break;
		case 's':
			sock = optarg;
			break;
		case 'm':
			bad = parse_u32(optarg, 0, 0777, 8, &mode);
			break;
		case 'i':
			bad = parse_u32(optarg, 0, 86400, 10, &idle_s);
			break;
		case 'p':
			if (strcmp(optarg, "busy") == 0)
				o.poll_mode = E3_POLL_BUSY;
			else if (strcmp(optarg, "adaptive") == 0)
				o.poll_mode = E3_POLL_ADAPTIVE;
			else
				bad = 1;
			break;
		case 't':
			bad = parse_u32(optarg, 64, 1u << 28, 10, &o.mac_table_size);
			break;
		case 'b':
			bad = parse_u32(optarg, 1024, 1u << 26, 10, &o.mbufs);
			break;
		case 'd': {
			uint32_t v = 0;

			bad = parse_u32(optarg, E3_MBUF_DATA, E3_MBUF_DATA_MAX, 10, &v);
			o.mbuf_data = (uint16_t)v;
			break;
		}
		case 'c':
			config = optarg;
			break;
		case 'P':
			port_dir = optarg;
			bad = optarg[0] != '/';
			break;
		case 'C':
			pcap_dir = optarg;
			bad = optarg[0] != '/';
			break;
		case 'g':
			bad = parse_u32(optarg, 0, 60000, 10, &grace_ms);
			break;
		case 'k':
			checkpoint = optarg;
			break;
		case 'H':
			bad = parse_u32(optarg, 100, 60000, 10, &hold_ms);
			break;
		case 'T': {
			uint32_t fd = 0;

			bad = parse_u32(optarg, 3, 1024, 10, &fd);
			takeover_fd = (int)fd;
			break;
		}
		case 'h':
			usage(argv[0]);
			return 0;
		default:
			bad = 1;
		}
		if (bad) {
			if (opt != '?')
				fprintf(stderr, "e3-vswitchd: bad value: %s\n", optarg ? optarg : "");
			usage(argv[0]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "e3-vswitchd: unexpected argument %s\n", argv[optind]);
		usage(argv[0]);
		return 2;
	}
	if (sock == NULL) {
		snprintf(sockbuf, sizeof(sockbuf), "/run/e3/%s.sock", name);
		mkdir("/run/e3", 0755);
		sock = sockbuf;
	}
	char dirbuf[256];

	if (port_dir == NULL) {
		const char *slash = strrchr(sock, '/');

		if (slash == NULL)
			snprintf(dirbuf, sizeof(dirbuf), ".");
		else   /* a socket in / keeps its ports in / */
			snprintf(dirbuf, sizeof(dirbuf), "%.*s", slash == sock ? 1 : (int)(slash - sock), sock);
		port_dir = dirbuf;
	}
	e3_node_set_port_dirs(port_dir, pcap_dir);
	if (rte_lcore_count() < 2)
		fprintf(stderr, "e3-vswitchd: warning: no worker lcore (give -l with 2+ lcores); nothing will be forwarded\n");
	if (e3_dp_init(&o, err) != 0) {
		fprintf(stderr, "e3-vswitchd: %s\n", err);
		return 1;
	}
	if (takeover_fd >= 0) {
		/* A handover: the node comes from the running process. */
		struct e3_handover_stats hs;

		if (e3_handover_join(takeover_fd, &hs, err) != 0) {
			fprintf(stderr, "e3-vswitchd %s: takeover: %s\n", name, err);
			return 1;
		}
		printf("e3-vswitchd %s: took over: %u BFD sessions Up, %u MACs (%u frames already forwarded dropped)\n",
		       name, hs.sessions, hs.macs, hs.discarded);
		fflush(stdout);
	} else {
		/* The configuration first: a client that finds the socket
		 * finds the node configured, and a bad file ends the process
		 * before anyone could take it for up. */
		if (config != NULL && e3_rpc_load_file(config, err) != 0) {
			fprintf(stderr, "e3-vswitchd: --config %s: %s\n", config, err);
			return 1;
		}
		if (checkpoint != NULL && access(checkpoint, F_OK) == 0)
			resume(name, checkpoint);
	}
	e3_rpc_set_idle_timeout(idle_s);
	if (e3_rpc_init(sock, (mode_t)mode) != 0) {
		fprintf(stderr, "e3-vswitchd: cannot listen on %s\n", sock);
		return 1;
	}
	e3_telemetry_init();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGUSR2, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, SIG_IGN);
	workers_start();
	if (takeover_fd >= 0)
		e3_handover_done(takeover_fd);
	printf("e3-vswitchd %s: %u workers, %s polling, boot_id %s, rpc %s\n", name,
	       e3.n_workers, o.poll_mode == E3_POLL_BUSY ? "busy" : "adaptive", e3_node_boot_id(), sock);
	fflush(stdout);

	struct run r = { .name = name, .sock = sock, .checkpoint = checkpoint, .mode = mode,
			 .grace_ms = grace_ms, .hold_ms = hold_ms, .argc = start_argc, .argv = start_argv,
			 .no_huge = no_huge };
	enum run_end end;

	for (;;) {
		end = serve(&r);
		workers_stop(end == END_HANDOVER ? r.ho : NULL);
		if (end != END_HANDOVER)
			break;
		handover_finish(&r);
	}
	printf("e3-vswitchd %s: shutting down\n", name);
	/* Asked for a restart, it still exits 75: without a checkpoint the
	 * next process starts cold. */
	if (end == END_WARM && e3_checkpoint_save(checkpoint, hold_ms, err) != 0)
		fprintf(stderr, "e3-vswitchd %s: checkpoint: %s; the next start is cold\n", name, err);
	e3_node_lock();
	e3_dp_fini();
	e3_node_unlock();
	e3_rpc_fini();
	rte_eal_cleanup();
	return end == END_WARM ? E3_EXIT_WARM : 0;
}
