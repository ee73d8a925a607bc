/* SPDX-License-Identifier: Apache-2.0
 *
 * handover.c - a warm restart in place (docs/ha.md): the running process
 * starts the binary on disk beside itself and hands the node over to it, so
 * that EAL is up, the ports are open and the tables loaded before the old
 * process stops forwarding. The two talk over a socketpair the new one
 * inherits as fd 3 (--takeover-fd):
 *
 *   new -> old  HELLO    EAL and the tables are up
 *   old -> new  CONFIG   the configuration: the new one opens the ports
 *   new -> old  READY
 *               the old one holds its BFD neighbours and stops its workers;
 *               the new one drops what its rings take in (the old one
 *               forwards it)
 *   old -> new  STOPPED  the new one drops what is left, and keeps the rest
 *               the old one closes its RPC socket
 *   old -> new  STATE    Up BFD sessions and MACs, the checkpoint's live part
 *               the new one loads it, listens and starts its workers
 *   new -> old  RUNNING  the old one exits
 *
 * The configuration cannot change in between: the old process answers no
 * RPC once the handover starts. If the new process fails or falls silent,
 * the old one kills it and carries on as before.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>

#include "base/dp.h"
#include "port/port.h"
#include "rpc/rpc.h"
#include "rpc/rpc_int.h"

enum msg { MSG_HELLO = 1, MSG_CONFIG, MSG_READY, MSG_STOPPED, MSG_STATE, MSG_RUNNING };

#define TAKEOVER_FD 3
#define START_TIMEOUT_MS 60000    /* EAL, the ports and the tables of a big node */
#define SWITCH_TIMEOUT_MS 10000   /* loading the live part */
/* The new process starts at this nice value and takes the old one's at
 * READY: its EAL start and port opening (page faults over its whole
 * memory) must not take the CPUs from the process still forwarding. */
#define START_NICE 19
#define FORK_TRIES 8

struct msg_hdr {
	uint32_t type;
	uint32_t len;
};

struct e3_handover {
	pid_t pid;
	int fd;
	bool configured;   /* CONFIG sent */
	bool ready;        /* READY received */
	bool stopped;      /* STOPPED sent */
};

/* Whether this process may take back a higher priority it gave up. */
static bool may_raise_priority(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	return syscall(SYS_capget, &h, d) == 0 &&
	       (d[CAP_TO_INDEX(CAP_SYS_NICE)].effective & CAP_TO_MASK(CAP_SYS_NICE)) != 0;
}

/* Every thread of this process at the old process's (our parent's) nice
 * value: the one it ran at before it lowered ours. */
static void take_parent_priority(void)
{
	errno = 0;
	int nice = getpriority(PRIO_PROCESS, (id_t)getppid());

	if (errno != 0 || getpriority(PRIO_PROCESS, 0) <= nice)
		return;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.' && setpriority(PRIO_PROCESS, (id_t)atoi(e->d_name), nice) != 0)
			fprintf(stderr, "e3-vswitchd: takeover: thread %s stays at a low priority: %s\n",
				e->d_name, strerror(errno));
	closedir(d);
}

static cpu_set_t start_cpus;   /* the process's CPUs before EAL pinned its main thread */
static bool have_start_cpus;

void e3_handover_save_affinity(void)
{
	have_start_cpus = sched_getaffinity(0, sizeof(start_cpus), &start_cpus) == 0;
}

/* ---- messages ------------------------------------------------------- */
static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int send_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t k = send(fd, c, n, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

static int send_msg(int fd, enum msg type, const void *p, size_t n)
{
	struct msg_hdr h = { .type = type, .len = (uint32_t)n };

	if (n > UINT32_MAX)
		return -1;
	return send_all(fd, &h, sizeof(h)) || (n > 0 && send_all(fd, p, n)) ? -1 : 0;
}

/* Read exactly n bytes by the deadline (0 on success, -1 with errno). */
static int recv_all(int fd, void *p, size_t n, int64_t deadline)
{
	char *c = p;

	while (n > 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int64_t left = deadline - now_ms();

		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		int r = poll(&pfd, 1, (int)left);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			errno = r == 0 ? ETIMEDOUT : errno;
			return -1;
		}
		ssize_t k = recv(fd, c, n, 0);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			errno = k == 0 ? EPIPE : errno;
			return -1;
		}
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

/* The next message, which must be of type want; its payload into b
 * (replaced), or dropped where b is NULL. */
static int recv_msg(int fd, enum msg want, struct e3_buf *b, int timeout_ms, char *err)
{
	int64_t deadline = now_ms() + timeout_ms;
	struct msg_hdr h;

	if (recv_all(fd, &h, sizeof(h), deadline) != 0)
		return E3_ERR(err, E3_EIO, "waiting for message %d: %s", want,
			      errno == EPIPE ? "the other process is gone" : strerror(errno));
	if (h.type != want)
		return E3_ERR(err, E3_EIO, "message %u where %d was due", h.type, want);
	if (h.len > 0) {
		char *p = malloc(h.len);

		if (p == NULL)
			return E3_ERR(err, E3_ENOSPC, "message of %u bytes: out of memory", h.len);
		if (recv_all(fd, p, h.len, deadline) != 0) {
			free(p);
			return E3_ERR(err, E3_EIO, "message %d cut short: %s", want, strerror(errno));
		}
		if (b == NULL) {
			free(p);
			return 0;
		}
		/* b takes the payload as it is: a node's configuration is big. */
		e3_buf_free(b);
		*b = (struct e3_buf){ .p = p, .len = h.len, .cap = h.len };
	}
	return 0;
}

static int send_part(int fd, enum msg type, uint32_t hold_ms, unsigned parts, char *err)
{
	struct e3_buf b = { 0 };
	int rc = 0;

	if (e3_checkpoint_build(&b, hold_ms, parts) != 0)
		rc = E3_ERR(err, E3_ENOSPC, "out of memory for the node's state");
	else if (send_msg(fd, type, b.p, b.len) != 0)
		rc = E3_ERR(err, E3_EIO, "sending the node's state: %s", strerror(errno));
	e3_buf_free(&b);
	return rc;
}

/* ---- the old process ------------------------------------------------- */
static bool has_word(int argc, char **argv, const char *w)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], w) == 0)
			return true;
	return false;
}

/* argv as this process was started, less any --takeover-fd, plus an EAL
 * option that keeps the two processes' EAL state apart (their files under
 * --file-prefix): --in-memory, or --no-shconf where --no-huge rules that
 * out. */
static char **child_argv(int argc, char **argv, bool no_huge)
{
	char **v = calloc((size_t)argc + 5, sizeof(*v));
	const char *apart = no_huge ? "--no-shconf" : "--in-memory";
	int n = 0, i = 1;

	if (v == NULL)
		return NULL;
	v[n++] = argv[0];
	if (!has_word(argc, argv, apart))
		v[n++] = (char *)apart;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++)
		v[n++] = argv[i];
	v[n++] = "--";
	for (i++; i < argc; i++) {
		if (strcmp(argv[i], "--takeover-fd") == 0) {
			i++;
			continue;
		}
		v[n++] = argv[i];
	}
	v[n++] = "--takeover-fd";
	v[n++] = "3";
	v[n] = NULL;
	return v;
}

int e3_handover_start(int argc, char **argv, bool no_huge, struct e3_handover **out, char *err)
{
	struct e3_handover *h = calloc(1, sizeof(*h));
	char **v = child_argv(argc, argv, no_huge);
	int sv[2];

	if (h == NULL || v == NULL) {
		free(h);
		free(v);
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		free(h);
		free(v);
		return E3_ERR(err, E3_EIO, "socketpair: %s", strerror(errno));
	}
	bool renice = may_raise_priority();
	pid_t self = getpid(), pid;

	/* A child whose pid would put one of its af_packet ports in a fanout
	 * group of ours could not open that port: it leaves at once (both
	 * sides reach the same answer) and we fork again. */
	for (int tries = 1;; tries++) {
		bool retry = tries < FORK_TRIES;

		pid = fork();
		if (pid == 0 && retry && e3_port_fanout_clash(self, getpid()))
			_exit(0);
		if (pid <= 0 || !retry || !e3_port_fanout_clash(self, pid))
			break;
		waitpid(pid, NULL, 0);
	}
	if (pid == 0) {
		/* The new process gets the CPUs we started with (EAL pins
		 * lcores within them) and no descriptor of ours but fd 3: our
		 * af_packet sockets would otherwise live on, taking copies. */
		if (have_start_cpus)
			sched_setaffinity(0, sizeof(start_cpus), &start_cpus);
		if (sv[1] == TAKEOVER_FD)
			fcntl(TAKEOVER_FD, F_SETFD, 0);
		else if (dup2(sv[1], TAKEOVER_FD) < 0)
			_exit(127);
		close_range(TAKEOVER_FD + 1, ~0u, 0);
		if (renice)
			setpriority(PRIO_PROCESS, 0, START_NICE);
		execvp(v[0], v);
		_exit(127);
	}
	free(v);
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		free(h);
		return E3_ERR(err, E3_EIO, "fork: %s", strerror(errno));
	}
	h->pid = pid;
	h->fd = sv[0];
	*out = h;
	return 0;
}

pid_t e3_handover_pid(const struct e3_handover *h)
{
	return h->pid;
}

int e3_handover_poll(struct e3_handover *h, char *err)
{
	struct pollfd pfd = { .fd = h->fd, .events = POLLIN };

	if (h->ready)
		return 1;
	if (poll(&pfd, 1, 0) <= 0)
		return 0;
	/* A step per message, so the main loop goes on between them; the new
	 * process writes each whole, so a read waits for no more than that. */
	if (!h->configured) {
		if (recv_msg(h->fd, MSG_HELLO, NULL, START_TIMEOUT_MS, err) != 0 ||
		    send_part(h->fd, MSG_CONFIG, 0, E3_CHECKPOINT_CONFIG, err) != 0)
			return -1;
		h->configured = true;
		return 0;
	}
	if (recv_msg(h->fd, MSG_READY, NULL, START_TIMEOUT_MS, err) != 0)
		return -1;
	h->ready = true;
	return 1;
}

/* systemd (NotifyAccess=main) follows the new process as the service's.
 * The barrier (sd_notify_barrier's protocol: an fd systemd closes once it
 * has read what came before) keeps us from exiting first, which would stop
 * the service. */
static void notify_mainpid(pid_t pid)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[64];
	size_t n;
	int pfd[2];

	if (path == NULL || (path[0] != '/' && path[0] != '@') || (n = strlen(path)) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, n);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = 0;   /* abstract namespace */
	socklen_t salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int len = snprintf(msg, sizeof(msg), "MAINPID=%d\n", (int)pid);

	if (fd < 0)
		return;
	if (sendto(fd, msg, (size_t)len, 0, (struct sockaddr *)&sa, salen) == len &&
	    pipe2(pfd, O_CLOEXEC) == 0) {
		char barrier[] = "BARRIER=1\n";
		struct iovec iov = { .iov_base = barrier, .iov_len = sizeof(barrier) - 1 };
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(int))];
		} c = { 0 };
		struct msghdr mh = { .msg_name = &sa, .msg_namelen = salen, .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = c.buf, .msg_controllen = sizeof(c.buf) };
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &pfd[1], sizeof(int));
		bool sent = sendmsg(fd, &mh, MSG_NOSIGNAL) >= 0;

		close(pfd[1]);
		if (sent) {
			struct pollfd p = { .fd = pfd[0], .events = 0 };

			poll(&p, 1, 5000);   /* POLLHUP: systemd closed its copy */
		}
		close(pfd[0]);
	}
	close(fd);
}

void e3_handover_stopped(struct e3_handover *h)
{
	/* A failure shows at the next message. */
	h->stopped = send_msg(h->fd, MSG_STOPPED, NULL, 0) == 0;
}

int e3_handover_switch(struct e3_handover *h, uint32_t hold_ms, char *err)
{
	if (!h->stopped)
		return E3_ERR(err, E3_EIO, "the new process is gone");
	if (send_part(h->fd, MSG_STATE, hold_ms, E3_CHECKPOINT_LIVE, err) != 0 ||
	    recv_msg(h->fd, MSG_RUNNING, NULL, SWITCH_TIMEOUT_MS, err) != 0)
		return -1;
	notify_mainpid(h->pid);
	return 0;
}

void e3_handover_abort(struct e3_handover *h)
{
	kill(h->pid, SIGKILL);
	waitpid(h->pid, NULL, 0);
	close(h->fd);
	free(h);
}

/* ---- the new process ------------------------------------------------- */
static int load_part(int fd, enum msg type, const char *what, struct e3_checkpoint_stats *st,
		     int timeout_ms, char *err)
{
	struct e3_buf b = { 0 };
	int rc = recv_msg(fd, type, &b, timeout_ms, err);

	if (rc == 0)
		rc = e3_checkpoint_load_buf(b.p, b.len, what, st, err);
	e3_buf_free(&b);
	return rc;
}

int e3_handover_join(int fd, struct e3_handover_stats *st, char *err)
{
	struct e3_checkpoint_stats cs;

	memset(st, 0, sizeof(*st));
	if (send_msg(fd, MSG_HELLO, NULL, 0) != 0)
		return E3_ERR(err, E3_EIO, "the old process is gone");
	if (load_part(fd, MSG_CONFIG, "handover config", &cs, START_TIMEOUT_MS, err) != 0)
		return -1;
	take_parent_priority();
	if (send_msg(fd, MSG_READY, NULL, 0) != 0)
		return E3_ERR(err, E3_EIO, "the old process is gone");
	/* From READY to STOPPED the old one holds its neighbours (100 ms at
	 * most) and stops its workers. What our rings take in meanwhile, it
	 * forwards: drop it as it comes, so that at STOPPED little is left
	 * and the drop is quick (what it would not catch is lost). */
	int64_t deadline = now_ms() + START_TIMEOUT_MS;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	while (poll(&pfd, 1, 1) == 0 && now_ms() < deadline)
		st->discarded += e3_port_discard_rx();
	if (recv_msg(fd, MSG_STOPPED, NULL, START_TIMEOUT_MS, err) != 0)
		return -1;
	st->discarded += e3_port_discard_rx();
	e3_port_forget_drops();
	if (load_part(fd, MSG_STATE, "handover state", &cs, SWITCH_TIMEOUT_MS, err) != 0)
		return -1;
	if (!cs.live)
		return E3_ERR(err, E3_EIO, "the old process's state is %lu ms old", (unsigned long)cs.age_ms);
	st->sessions = cs.sessions;
	st->macs = cs.macs;
	return 0;
}

void e3_handover_done(int fd)
{
	send_msg(fd, MSG_RUNNING, NULL, 0);
	close(fd);
}
