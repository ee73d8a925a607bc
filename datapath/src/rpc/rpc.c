/* SPDX-License-Identifier: Apache-2.0
 *
 * rpc.c - the JSON-RPC 2.0 transport of e3-vswitchd: a non-blocking Unix
 * stream socket served from the main lcore's loop with epoll.
 *
 * Framing: a request is one JSON object; objects follow each other on the
 * stream, optionally separated by whitespace/newlines. A small scanner that
 * knows strings and escapes finds where each object ends, so a request split
 * over many reads, or many requests in one read, both work; jansson then
 * parses exactly those bytes. Top-level bytes that cannot start an object
 * get one -32700 and the rest of that line is skipped (newline = resync).
 * A request larger than E3_RPC_MAX_MSG gets an error and the connection
 * is closed, since there is no telling where that request ends.
 *
 * Responses are queued in a per-connection buffer and written as the socket
 * accepts them (EPOLLOUT), so a slow reader of a 100 MB mac_list never
 * blocks the main loop; while a client has a lot queued we stop reading its
 * requests (back-pressure) rather than buffer without bound.
 *
 * Connection slots are guarded so that nobody can lock the node's own agent
 * out: at most MAX_PER_UID connections per (non-root) user, the last
 * ROOT_RESERVED of MAX_CLIENTS slots for root (the agent), and a connection
 * that neither sends nor receives for the idle timeout is closed. Refusals
 * and idle closes are counted (system_info "rpc") and logged at most once
 * every LOG_EVERY_S, never per attempt.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_log.h>

#include "rpc/rpc.h"
#include "rpc/rpc_int.h"

#define RPC_LOG(lvl, ...) rte_log(RTE_LOG_##lvl, RTE_LOGTYPE_USER1, "e3-rpc: " __VA_ARGS__)

#define MAX_CLIENTS 128
#define ROOT_RESERVED 8
#define MAX_PER_UID 16
#define LOG_EVERY_S 10
#define READ_CHUNK 65536
#define OUT_HIGH (16u << 20) /* stop reading requests above this much queued output */

struct conn {
	int fd;
	uid_t uid;
	double last_active;   /* uptime of its last read or write */
	struct e3_buf in;
	struct e3_buf out;
	size_t out_off;   /* bytes of out already written */
	/* scanner state over in.p[0..scan) of the object being received */
	size_t scan;
	int depth;
	bool in_str, esc;
	bool skip_line;   /* after top-level garbage: drop through the next '\n' */
	bool closing;     /* close once out is flushed; read nothing more */
	uint32_t events;
	struct conn *next;
};

static int listen_fd = -1;
static int epfd = -1;
static char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static struct conn *conns;
static int n_conns;
static unsigned idle_timeout_s = 60;
static struct e3_rpc_counters ctr;
static double last_log;

/* Seconds on a monotonic clock: when connections were last active. */
static double now_s(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/* ---- socket ------------------------------------------ */
static int mkdir_parents(const char *path)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash == NULL || slash == dir)
		return 0;
	*slash = '\0';
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

/* A socket file left by a dead daemon is replaced; a live one is not. */
static int clear_stale(const struct sockaddr_un *sa)
{
	struct stat st;
	if (lstat(sa->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISSOCK(st.st_mode)) {
		errno = EEXIST;
		return -1;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int rc = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	close(fd);
	if (rc == 0) {
		errno = EADDRINUSE;
		return -1;
	}
	return unlink(sa->sun_path);
}

int e3_rpc_init(const char *path, mode_t mode)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sa.sun_path)) {
		RPC_LOG(ERR, "socket path too long: %s\n", path);
		return -1;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (mkdir_parents(path) < 0 || clear_stale(&sa) < 0) {
		RPC_LOG(ERR, "cannot use %s: %s\n", path, strerror(errno));
		return -1;
	}
	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (listen_fd < 0)
		goto fail;
	if (bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail;
	snprintf(sock_path, sizeof(sock_path), "%s", path);
	if (chmod(path, mode) < 0 || listen(listen_fd, 64) < 0)
		goto fail;
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		goto fail;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, listen_fd, &ev) < 0)
		goto fail;
	RPC_LOG(INFO, "listening on %s\n", path);
	return 0;
fail:
	RPC_LOG(ERR, "cannot listen on %s: %s\n", path, strerror(errno));
	e3_rpc_fini();
	return -1;
}

void e3_rpc_set_idle_timeout(unsigned seconds)
{
	idle_timeout_s = seconds;
}


/* ---- connections ------------------------------------------ */
static void conn_free(struct conn *c)
{
	for (struct conn **pp = &conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	e3_buf_free(&c->in);
	e3_buf_free(&c->out);
	free(c);
	n_conns--;
}

static void conn_arm(struct conn *c)
{
	uint32_t ev = 0;
	if (!c->closing && c->out.len - c->out_off < OUT_HIGH)
		ev |= EPOLLIN;
	if (c->out.len > c->out_off)
		ev |= EPOLLOUT;
	if (ev == c->events)
		return;
	struct epoll_event e = { .events = ev, .data.ptr = c };
	epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &e);
	c->events = ev;
}

/* Why a new connection from uid may not have a slot (and the counter
 * to count it in), or NULL. */
static const char *refusal(uid_t uid, uint64_t **counter)
{
	int mine = 0;

	*counter = &ctr.refused_full;
	if (n_conns >= MAX_CLIENTS)
		return "all slots taken";
	if (uid == 0)
		return NULL;
	if (n_conns >= MAX_CLIENTS - ROOT_RESERVED)
		return "the remaining slots are kept for root";
	for (const struct conn *c = conns; c != NULL; c = c->next)
		mine += c->uid == uid;
	*counter = &ctr.refused_per_user;
	return mine >= MAX_PER_UID ? "too many connections from this user" : NULL;
}

static void log_refusals(const char *why, uid_t uid)
{
	double now = now_s();

	if (last_log != 0 && now - last_log < LOG_EVERY_S)
		return;
	last_log = now;
	RPC_LOG(WARNING, "refused a connection from uid %u (%s); %" PRIu64 " refused, %" PRIu64
		" closed idle so far\n", (unsigned)uid, why, ctr.refused_full + ctr.refused_per_user,
		ctr.idle_closed);
}

static void accept_all(void)
{
	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		struct ucred cred = { .uid = (uid_t)-1 };
		socklen_t len = sizeof(cred);

		(void)getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len);
		uint64_t *counter;
		const char *why = refusal(cred.uid, &counter);

		if (why != NULL) {
			(*counter)++;
			log_refusals(why, cred.uid);
			close(fd);
			continue;
		}
		struct conn *c = calloc(1, sizeof(*c));
		if (c == NULL) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->uid = cred.uid;
		c->last_active = now_s();
		c->events = EPOLLIN;
		struct epoll_event e = { .events = EPOLLIN, .data.ptr = c };
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e) < 0) {
			close(fd);
			free(c);
			continue;
		}
		c->next = conns;
		conns = c;
		n_conns++;
	}
}

/* ---- requests ------------------------------------------ */
static void write_error(struct e3_buf *out, const json_t *id, int code, const char *msg)
{
	json_t *r = json_pack("{s:s, s:O?, s:{s:i, s:s}}", "jsonrpc", "2.0",
			      "id", id, "error", "code", code, "message", msg);
	if (r == NULL) /* msg was not UTF-8: jansson refuses it */
		r = json_pack("{s:s, s:O?, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id,
			      "error", "code", code, "message", "error");
	char *s = json_dumps(r, JSON_COMPACT);
	if (s != NULL) {
		e3_buf_str(out, s);
		e3_buf_add(out, "\n", 1);
	}
	free(s);
	json_decref(r);
}

/* Serve one complete request object (bytes s[0..n)) into out. */
static void serve(struct e3_buf *out, const char *s, size_t n)
{
	json_error_t jerr;
	json_t *req = json_loadb(s, n, JSON_REJECT_DUPLICATES, &jerr);
	if (req == NULL) {
		char msg[E3_RPC_MSGLEN];
		snprintf(msg, sizeof(msg), "parse error: %s (at byte %d)", jerr.text,
			 jerr.position);
		write_error(out, NULL, E3_RPC_PARSE_ERROR, msg);
		return;
	}
	if (!json_is_object(req)) {
		write_error(out, NULL, E3_RPC_INVALID_REQUEST,
			    "invalid request: batch requests (arrays) are not supported");
		json_decref(req);
		return;
	}
	json_t *id = json_object_get(req, "id");
	bool notify = (id == NULL);
	const json_t *ver = json_object_get(req, "jsonrpc");
	const json_t *method = json_object_get(req, "method");
	const json_t *params = json_object_get(req, "params");
	if (id != NULL && !json_is_string(id) && !json_is_integer(id) && !json_is_null(id)) {
		write_error(out, NULL, E3_RPC_INVALID_REQUEST,
			    "invalid request: id must be a string, an integer or null");
		goto done;
	}
	const char *bad = NULL;
	if (!json_is_string(ver) || strcmp(json_string_value(ver), "2.0") != 0)
		bad = "invalid request: \"jsonrpc\" must be \"2.0\"";
	else if (!json_is_string(method))
		bad = "invalid request: \"method\" must be a string";
	else if (json_object_size(req) > (size_t)(2 + (id != NULL) + (params != NULL)))
		bad = "invalid request: unknown member (allowed: jsonrpc, method, params, id)";
	if (bad != NULL) {
		if (!notify)
			write_error(out, id, E3_RPC_INVALID_REQUEST, bad);
		goto done;
	}
	const struct e3_rpc_method *m = e3_rpc_method_find(json_string_value(method));
	if (m == NULL) {
		char msg[E3_RPC_MSGLEN];
		snprintf(msg, sizeof(msg), "method not found: %.200s", json_string_value(method));
		if (!notify)
			write_error(out, id, E3_RPC_METHOD_NOT_FOUND, msg);
		goto done;
	}

	size_t mark = out->len;
	e3_buf_str(out, "{\"jsonrpc\":\"2.0\",\"id\":");
	e3_jw_json(&(struct e3_jw){ .b = out }, NULL, json_incref(id ? id : json_null()));
	e3_buf_str(out, ",\"result\":");
	ctr.connections = (uint64_t)n_conns;
	struct e3_rpc_call call = { .w = { .b = out }, .server = &ctr };
	e3_rpc_invoke(m->fn, m->params, params, &call);
	if (call.code == 0 && out->oom)
		e3_rpc_err(&call, E3_RPC_INTERNAL_ERROR, "out of memory writing the result");
	if (call.code == 0 && call.w.depth != 0)
		e3_rpc_err(&call, E3_RPC_INTERNAL_ERROR, "handler left the result open");
	if (call.code != 0) {
		out->len = mark;
		out->oom = false;
		if (!notify)
			write_error(out, id, call.code, call.msg);
	} else if (notify) {
		out->len = mark;
	} else {
		e3_buf_str(out, "}\n");
	}
done:
	json_decref(req);
}

/* Find complete objects in c->in and serve them. */
static void process(struct conn *c)
{
	while (!c->closing && c->out.len - c->out_off < OUT_HIGH) {
		struct e3_buf *in = &c->in;
		if (c->skip_line) {
			char *nl = memchr(in->p, '\n', in->len);
			if (nl == NULL) {
				in->len = 0;
				return;
			}
			e3_buf_consume(in, (size_t)(nl - in->p) + 1);
			c->skip_line = false;
		}
		if (c->depth == 0) {
			size_t ws = 0;
			while (ws < in->len && strchr(" \t\r\n", in->p[ws]) != NULL)
				ws++;
			e3_buf_consume(in, ws);
			if (in->len == 0)
				return;
			if (in->p[0] != '{' && in->p[0] != '[') {
				write_error(&c->out, NULL, E3_RPC_PARSE_ERROR,
					    "parse error: expected a JSON object");
				c->skip_line = true;
				continue;
			}
			c->scan = 0;
		}
		size_t end = 0;
		for (size_t i = c->scan; i < in->len; i++) {
			char ch = in->p[i];
			if (c->in_str) {
				if (c->esc)
					c->esc = false;
				else if (ch == '\\')
					c->esc = true;
				else if (ch == '"')
					c->in_str = false;
			} else if (ch == '"') {
				c->in_str = true;
			} else if (ch == '{' || ch == '[') {
				c->depth++;
			} else if (ch == '}' || ch == ']') {
				if (--c->depth == 0) {
					end = i + 1;
					break;
				}
			}
		}
		if (end == 0) {
			c->scan = in->len;
			if (in->len > E3_RPC_MAX_MSG)
				goto too_large;
			return;
		}
		if (end > E3_RPC_MAX_MSG)
			goto too_large;
		serve(&c->out, in->p, end);
		e3_buf_consume(in, end);
		c->scan = 0;
	}
	return;
too_large:
	write_error(&c->out, NULL, E3_RPC_INVALID_REQUEST,
		    "invalid request: message larger than 1048576 bytes; closing");
	c->closing = true;
	c->in.len = 0;
}

/* Write what the socket takes; false if the connection is gone. */
static bool flush(struct conn *c)
{
	while (c->out.len > c->out_off) {
		ssize_t n = send(c->fd, c->out.p + c->out_off, c->out.len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == EINTR)
				continue;
			return false;
		}
		c->out_off += (size_t)n;
	}
	if (c->out_off == c->out.len) {
		c->out.len = 0;
		c->out_off = 0;
		/* give back the memory of a huge response */
		if (c->out.cap > (1u << 20)) {
			e3_buf_free(&c->out);
		}
	}
	return true;
}

static void conn_event(struct conn *c, uint32_t ev)
{
	c->last_active = now_s();
	if (ev & EPOLLIN) {
		char tmp[READ_CHUNK];
		for (int rounds = 0; rounds < 64 && !c->closing; rounds++) {
			ssize_t n = recv(c->fd, tmp, sizeof(tmp), MSG_DONTWAIT);
			if (n == 0) {
				/* peer closed its side: answer what it sent, then close */
				c->closing = true;
				c->in.len = 0;
				break;
			}
			if (n < 0) {
				if (errno == EINTR)
					continue;
				if (errno == EAGAIN || errno == EWOULDBLOCK)
					break;
				conn_free(c);
				return;
			}
			e3_buf_add(&c->in, tmp, (size_t)n);
			if (c->in.oom) {
				conn_free(c);
				return;
			}
			process(c);
			if (c->out.len - c->out_off >= OUT_HIGH)
				break;
		}
	} else if ((ev & (EPOLLHUP | EPOLLERR)) && !(ev & EPOLLOUT)) {
		conn_free(c);
		return;
	}
	if (!flush(c)) {
		conn_free(c);
		return;
	}
	/* drained below the mark: serve requests held back by back-pressure */
	if (!c->closing && c->in.len > 0 && c->out.len - c->out_off < OUT_HIGH) {
		process(c);
		if (!flush(c)) {
			conn_free(c);
			return;
		}
	}
	if (c->closing && c->out.len == c->out_off) {
		conn_free(c);
		return;
	}
	conn_arm(c);
}

/* Close connections idle for the timeout, checked once a second. */
static void close_idle(void)
{
	static double last_check;
	double now = now_s();

	if (idle_timeout_s == 0 || now - last_check < 1)
		return;
	last_check = now;
	for (struct conn *c = conns, *next; c != NULL; c = next) {
		next = c->next;
		if (now - c->last_active >= idle_timeout_s) {
			ctr.idle_closed++;
			conn_free(c);
		}
	}
}

void e3_rpc_poll(int timeout_ms)
{
	if (epfd < 0) {
		if (timeout_ms > 0)
			usleep((useconds_t)timeout_ms * 1000);
		return;
	}
	struct epoll_event evs[32];
	int n = epoll_wait(epfd, evs, 32, timeout_ms);
	for (int i = 0; i < n; i++) {
		if (evs[i].data.ptr == NULL)
			accept_all();
	}
	/* a conn freed while handling one event cannot appear later in evs:
	 * each fd is reported at most once per epoll_wait */
	for (int i = 0; i < n; i++) {
		if (evs[i].data.ptr != NULL)
			conn_event(evs[i].data.ptr, evs[i].events);
	}
	close_idle();
}

void e3_rpc_fini(void)
{
	while (conns != NULL)
		conn_free(conns);
	if (listen_fd >= 0) {
		close(listen_fd);
		listen_fd = -1;
		if (sock_path[0] != '\0')
			unlink(sock_path);
		sock_path[0] = '\0';
	}
	if (epfd >= 0) {
		close(epfd);
		epfd = -1;
	}
}
