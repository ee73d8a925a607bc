/* SPDX-License-Identifier: Apache-2.0
 *
 * ctl.c - the control operations (ctl.h): validation, reference counts,
 * idempotency, and publishing into the tables. Main lcore (or a holder of
 * the control lock) only.
 *
 * Each operation validates everything first and only then changes state,
 * in an order that never lets a worker see a reference to something not
 * yet published: new objects first, then the entries that point to them,
 * then the release of what they replaced.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ether.h>

#include "circuit_table.h"
#include "dp.h"
#include "label_table.h"
#include "mac_table.h"
#include "nhlfe_table.h"
#include "oam.h"
#include "port.h"
#include "service_table.h"
#include "ctl_int.h"
#include "stats.h"
#include "trace.h"
#include "worker.h"

static pthread_mutex_t ctl_mutex = PTHREAD_MUTEX_INITIALIZER;
static bool last_changed;

/* Who references what (DELETE is refused while > 0). */
static uint32_t port_refs[RTE_MAX_ETHPORTS];   /* nexthops, circuits, replicate RPF */
static struct e3_nexthop_conf nh_conf[E3_MAX_NEXTHOPS];
static bool nh_used[E3_MAX_NEXTHOPS];
static uint32_t nh_refs[E3_MAX_NEXTHOPS];      /* nhlfes */
static uint32_t *nhlfe_refs;                   /* services, labels */
static uint32_t svc_refs[E3_MAX_SERVICES];     /* labels */

static const char *const drop_names[E3_DROP_MAX] = {
#define E3_DROP_NAME(e, name, meaning) [E3_DROP_##e] = name,
	E3_DROPS(E3_DROP_NAME)
#undef E3_DROP_NAME
};

const char *e3_drop_name(enum e3_drop d)
{
	return (unsigned)d < E3_DROP_MAX ? drop_names[d] : "unknown";
}

void e3_ctl_lock(void)
{
	pthread_mutex_lock(&ctl_mutex);
}

void e3_ctl_unlock(void)
{
	pthread_mutex_unlock(&ctl_mutex);
}

bool e3_ctl_changed(void)
{
	return last_changed;
}

enum e3_poll_mode e3_ctl_poll_mode(void)
{
	return e3.poll_mode;
}

static int ok(bool changed)
{
	last_changed = changed;
	return 0;
}

static bool nhlfe_exists(uint32_t id)
{
	return id < E3_MAX_NHLFES && (e3_nhlfe_get(id).label & E3_NHLFE_VALID);
}

static bool is_zero_mac(const uint8_t *m)
{
	static const uint8_t z[6];

	return memcmp(m, z, 6) == 0;
}

static bool str_ok(const char *s, size_t size)
{
	return s[0] != 0 && strnlen(s, size) < size;
}

static int refs_init(void)
{
	if (nhlfe_refs == NULL)
		nhlfe_refs = calloc(E3_MAX_NHLFES, sizeof(*nhlfe_refs));
	return nhlfe_refs ? 0 : -1;
}

/* ---- settings --------------------------------------------------------- */

int e3_ctl_settings_get(struct e3_settings *out)
{
	*out = e3.settings;
	return 0;
}

int e3_ctl_settings_set(const struct e3_settings *s, char *err)
{
	if (s->ttl == 0)
		return E3_ERR(err, E3_EINVAL, "ttl: must be 1..255");
	if (s->mac_limit == 0)
		return E3_ERR(err, E3_EINVAL, "mac_limit: must be at least 1");
	if (s->mac_move_window_s == 0)
		return E3_ERR(err, E3_EINVAL, "mac_move_window_s: must be at least 1");
	bool changed = memcmp(s, &e3.settings, sizeof(*s)) != 0;

	e3.settings.ttl = s->ttl;
	e3.settings.control_word = s->control_word;
	e3.settings.mac_aging_s = s->mac_aging_s;
	e3.settings.mac_limit = s->mac_limit;
	e3.settings.mac_move_limit = s->mac_move_limit;
	e3.settings.mac_move_window_s = s->mac_move_window_s;
	return ok(changed);
}

const char *e3_ctl_boot_id(void)
{
	static char id[37];

	if (id[0] == 0) {
		uint8_t r[16];

		if (getrandom(r, sizeof(r), 0) != sizeof(r)) {
			uint64_t t = rte_rdtsc() ^ (uint64_t)getpid() << 32;

			memcpy(r, &t, 8);
			memcpy(r + 8, &t, 8);
		}
		r[6] = (r[6] & 0x0f) | 0x40;   /* version 4 */
		r[8] = (r[8] & 0x3f) | 0x80;   /* RFC 4122 variant */
		snprintf(id, sizeof(id),
			 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9],
			 r[10], r[11], r[12], r[13], r[14], r[15]);
	}
	return id;
}

/* ---- ports -------------------------------------------------------------- */

static struct e3_port *port_by_name(const char *name)
{
	for (uint16_t i = 0; i < RTE_MAX_ETHPORTS; i++)
		if (e3_port_tbl[i] != NULL && strcmp(e3_port_tbl[i]->conf.name, name) == 0)
			return e3_port_tbl[i];
	return NULL;
}

/* A fabric port's MAC changed: the nexthops on it carry it as source. */
static void nexthops_resource(uint16_t port_id, const struct rte_ether_addr *mac)
{
	for (uint32_t id = 0; id < E3_MAX_NEXTHOPS; id++) {
		const struct e3_nexthop *nh = e3_nexthop_tbl[id];

		if (nh == NULL || nh->port != port_id)
			continue;
		struct e3_nexthop *n = malloc(sizeof(*n));

		if (n == NULL)
			continue;
		*n = *nh;
		n->src = *mac;
		e3_nexthop_publish(id, n);
	}
}

int e3_ctl_port_add(const struct e3_port_conf *in, char *err)
{
	struct e3_port_conf c = *in;
	unsigned n_ports = 0;

	if (!str_ok(c.name, sizeof(c.name)))
		return E3_ERR(err, E3_EINVAL, "name: must be 1..31 characters");
	if (!str_ok(c.devargs, sizeof(c.devargs)))
		return E3_ERR(err, E3_EINVAL, "devargs: must be 1..255 characters");
	if (c.kind != E3_PORT_CUSTOMER && c.kind != E3_PORT_FABRIC)
		return E3_ERR(err, E3_EINVAL, "kind: must be customer or fabric");
	if (c.mtu != 0 && (c.mtu < 68 || c.mtu > 9600))
		return E3_ERR(err, E3_EINVAL, "mtu: must be 68..9600");
	if (c.rx_queues > E3_MAX_QUEUES)
		return E3_ERR(err, E3_EINVAL, "rx_queues: must be 1..%u", E3_MAX_QUEUES);
	if (!is_zero_mac(c.mac) && (c.mac[0] & 1))
		return E3_ERR(err, E3_EINVAL, "mac: must be a unicast address");
	e3_port_conf_defaults(&c);
	for (unsigned q = 0; q < c.rx_queues; q++)
		if (c.worker[q] < -1 || c.worker[q] >= (int)e3.n_workers)
			return E3_ERR(err, E3_EINVAL, "workers[%u]: must be -1..%u", q, e3.n_workers - 1);

	struct e3_port *p = port_by_name(c.name);
	size_t dn = strcspn(c.devargs, ",");

	for (uint16_t i = 0; i < RTE_MAX_ETHPORTS; i++) {
		const struct e3_port *o = e3_port_tbl[i];

		if (o == NULL)
			continue;
		n_ports++;
		if (o != p && strncmp(o->conf.devargs, c.devargs, dn) == 0 &&
		    strcspn(o->conf.devargs, ",") == dn)
			return E3_ERR(err, E3_EEXIST, "devargs: device %.*s is port %s already",
				      (int)dn, c.devargs, o->conf.name);
	}
	if (p == NULL) {
		if (n_ports >= E3_MAX_PORTS || n_ports >= RTE_MAX_ETHPORTS)
			return E3_ERR(err, E3_ENOSPC, "at most %u ports", RTE_MIN(E3_MAX_PORTS, RTE_MAX_ETHPORTS));
		e3_workers_auto(&c);
		int rc = e3_port_open(&c, &p, err);

		if (rc != 0)
			return rc;
		e3_stats_reset_port(p->port_id);
		e3_workers_assign();
		return ok(true);
	}
	/* Exists: devargs, kind and queues make the device; those need a delete. */
	if (strcmp(p->conf.devargs, c.devargs) != 0 || p->conf.kind != c.kind ||
	    p->conf.rx_queues != c.rx_queues)
		return E3_ERR(err, E3_EEXIST,
			      "port %s exists with other devargs, kind or rx_queues; delete it first", c.name);
	for (unsigned q = 0; q < c.rx_queues; q++)
		if (c.worker[q] < 0)
			c.worker[q] = p->conf.worker[q];   /* automatic = keep */
	if (is_zero_mac(c.mac))
		memcpy(c.mac, p->conf.mac, 6);
	if (c.mtu == p->conf.mtu && memcmp(c.mac, p->conf.mac, 6) == 0 &&
	    memcmp(c.worker, p->conf.worker, sizeof(c.worker)) == 0)
		return ok(false);
	bool mac_changed = memcmp(c.mac, p->conf.mac, 6) != 0;
	bool workers_changed = memcmp(c.worker, p->conf.worker, sizeof(c.worker)) != 0;
	int rc = e3_port_update(p, &c, &p, err);

	if (rc != 0)
		return rc;
	if (mac_changed)
		nexthops_resource(p->port_id, &p->mac);
	if (workers_changed)
		e3_workers_assign();
	return ok(true);
}

int e3_ctl_port_del(const char *name, char *err)
{
	struct e3_port *p = port_by_name(name);

	if (p == NULL)
		return E3_ERR(err, E3_ENOENT, "port %s not found", name);
	if (port_refs[p->port_id] > 0)
		return E3_ERR(err, E3_EBUSY, "port %s is used by %u nexthops, circuits or labels",
			      name, port_refs[p->port_id]);
	e3_port_close(p);
	return ok(true);
}

static void port_info(const struct e3_port *p, struct e3_port_info *o)
{
	struct e3_port_ctr c;

	memset(o, 0, sizeof(*o));
	o->conf = p->conf;
	o->dpdk_port_id = p->port_id;
	o->link_up = p->link_up;
	o->speed_mbps = p->speed_mbps;
	e3_stats_port(p->port_id, &c);
	o->rx_pkts = c.rx_pkts;
	o->rx_bytes = c.rx_bytes;
	o->tx_pkts = c.tx_pkts;
	o->tx_bytes = c.tx_bytes;
	memcpy(o->drops, c.drops, sizeof(o->drops));
}

int e3_ctl_port_get(const char *name, struct e3_port_info *out, char *err)
{
	const struct e3_port *p = port_by_name(name);

	if (p == NULL)
		return E3_ERR(err, E3_ENOENT, "port %s not found", name);
	port_info(p, out);
	return 0;
}

void e3_ctl_port_walk(e3_port_walk_fn fn, void *arg)
{
	struct e3_port_info info;

	for (uint16_t i = 0; i < RTE_MAX_ETHPORTS; i++)
		if (e3_port_tbl[i] != NULL) {
			port_info(e3_port_tbl[i], &info);
			fn(&info, arg);
		}
}

/* ---- nexthops ----------------------------------------------------------- */

int e3_ctl_nexthop_add(const struct e3_nexthop_conf *c, char *err)
{
	if (c->id >= E3_MAX_NEXTHOPS)
		return E3_ERR(err, E3_EINVAL, "id: must be < %u", E3_MAX_NEXTHOPS);
	if (strnlen(c->port, sizeof(c->port)) == sizeof(c->port))
		return E3_ERR(err, E3_EINVAL, "port: too long");
	const struct e3_port *p = port_by_name(c->port);

	if (p == NULL)
		return E3_ERR(err, E3_ENOENT, "port %s not found", c->port);
	if (p->kind != E3_PORT_FABRIC)
		return E3_ERR(err, E3_EINVAL, "port: %s is not a fabric port", c->port);
	if (is_zero_mac(c->mac) || (c->mac[0] & 1))
		return E3_ERR(err, E3_EINVAL, "mac: must be a unicast address");
	if (nh_used[c->id] && strcmp(nh_conf[c->id].port, c->port) == 0 &&
	    memcmp(nh_conf[c->id].mac, c->mac, 6) == 0)
		return ok(false);
	struct e3_nexthop *nh = malloc(sizeof(*nh));

	if (nh == NULL)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	nh->port = p->port_id;
	memcpy(&nh->dst, c->mac, 6);
	nh->src = p->mac;
	port_refs[p->port_id]++;
	if (nh_used[c->id])
		port_refs[e3_nexthop_tbl[c->id]->port]--;
	e3_nexthop_publish(c->id, nh);
	nh_conf[c->id] = *c;
	nh_used[c->id] = true;
	e3_oam_ports_rebuild();   /* a BFD session may follow it to another port */
	return ok(true);
}

int e3_ctl_nexthop_del(uint32_t id, char *err)
{
	if (id >= E3_MAX_NEXTHOPS || !nh_used[id])
		return E3_ERR(err, E3_ENOENT, "nexthop %u not found", id);
	if (nh_refs[id] > 0)
		return E3_ERR(err, E3_EBUSY, "nexthop %u is used by %u nhlfes or BFD sessions", id,
			      nh_refs[id]);
	port_refs[e3_nexthop_tbl[id]->port]--;
	e3_nexthop_publish(id, NULL);
	nh_used[id] = false;
	return ok(true);
}

void e3_ctl_nexthop_walk(e3_nexthop_walk_fn fn, void *arg)
{
	for (uint32_t id = 0; id < E3_MAX_NEXTHOPS; id++)
		if (nh_used[id])
			fn(&nh_conf[id], arg);
}

/* ---- nhlfes --------------------------------------------------------------- */

static bool nhlfe_plain(uint32_t id)
{
	return id < E3_MAX_NHLFES &&
	       (e3_nhlfe_get(id).label & (E3_NHLFE_VALID | E3_NHLFE_PROTECTED)) == E3_NHLFE_VALID;
}

static struct e3_nhlfe_conf nhlfe_conf_of(uint32_t id)
{
	struct e3_nhlfe n = e3_nhlfe_get(id);
	struct e3_nhlfe_conf c = { .id = id };

	if (n.label & E3_NHLFE_PROTECTED) {
		c.protect = true;
		c.primary = n.label & E3_NHLFE_ID_MASK;
		c.backup = n.nexthop & E3_NHLFE_ID_MASK;
		c.watch = n.nexthop >> E3_NHLFE_WATCH_SHIFT;
	} else {
		c.nexthop = n.nexthop;
		c.label = n.label & ~E3_NHLFE_VALID;
	}
	return c;
}

/* Take (d = 1) or drop (d = -1) the references of an nhlfe's conf. */
static void nhlfe_conf_refs(const struct e3_nhlfe_conf *c, int d)
{
	if (c->protect) {
		nhlfe_refs[c->primary] += d;
		nhlfe_refs[c->backup] += d;
	} else {
		nh_refs[c->nexthop] += d;
	}
}

static int nhlfe_validate(const struct e3_nhlfe_conf *c, char *err)
{
	if (c->id >= E3_MAX_NHLFES)
		return E3_ERR(err, E3_EINVAL, "id: must be < %u", E3_MAX_NHLFES);
	if (!c->protect) {
		if (c->label < E3_LABEL_MIN || c->label >= E3_LABEL_SPACE)
			return E3_ERR(err, E3_EINVAL, "label: must be %u..%u", E3_LABEL_MIN,
				      E3_LABEL_SPACE - 1);
		if (c->nexthop >= E3_MAX_NEXTHOPS || !nh_used[c->nexthop])
			return E3_ERR(err, E3_ENOENT, "nexthop %u not found", c->nexthop);
		return 0;
	}
	if (c->watch >= E3_MAX_SESSIONS)
		return E3_ERR(err, E3_EINVAL, "watch: must be < %u", E3_MAX_SESSIONS);
	if (c->primary == c->id || c->backup == c->id)
		return E3_ERR(err, E3_EINVAL, "nhlfe %u: cannot protect itself", c->id);
	if (!nhlfe_plain(c->primary))
		return E3_ERR(err, E3_ENOENT, "primary: nhlfe %u not found or not plain", c->primary);
	if (!nhlfe_plain(c->backup))
		return E3_ERR(err, E3_ENOENT, "backup: nhlfe %u not found or not plain", c->backup);
	if (nhlfe_exists(c->id) && nhlfe_refs[c->id] > 0 && !nhlfe_conf_of(c->id).protect)
		return E3_ERR(err, E3_EBUSY, "nhlfe %u is plain and used by a protected nhlfe, "
			      "a service or a label: it cannot become protected", c->id);
	return 0;
}

int e3_ctl_nhlfe_add(const struct e3_nhlfe_conf *c, char *err)
{
	if (refs_init() != 0)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	int rc = nhlfe_validate(c, err);

	if (rc < 0)
		return rc;
	bool existed = nhlfe_exists(c->id);
	struct e3_nhlfe_conf old = nhlfe_conf_of(c->id);

	if (existed && old.protect == c->protect &&
	    (c->protect ? old.primary == c->primary && old.backup == c->backup && old.watch == c->watch
			: old.label == c->label && old.nexthop == c->nexthop))
		return ok(false);
	nhlfe_conf_refs(c, 1);
	if (existed)
		nhlfe_conf_refs(&old, -1);
	if (c->protect)
		e3_nhlfe_set_protected(c->id, c->primary, c->backup, c->watch);
	else
		e3_nhlfe_set(c->id, c->label, c->nexthop);
	return ok(true);
}

int e3_ctl_nhlfe_del(uint32_t id, char *err)
{
	if (refs_init() != 0)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	if (!nhlfe_exists(id))
		return E3_ERR(err, E3_ENOENT, "nhlfe %u not found", id);
	if (nhlfe_refs[id] > 0)
		return E3_ERR(err, E3_EBUSY, "nhlfe %u is used by %u services, labels or protected nhlfes",
			      id, nhlfe_refs[id]);
	struct e3_nhlfe_conf old = nhlfe_conf_of(id);

	e3_nhlfe_clear(id);
	nhlfe_conf_refs(&old, -1);
	return ok(true);
}

void e3_ctl_nhlfe_walk(e3_nhlfe_walk_fn fn, void *arg)
{
	for (uint32_t id = 0; id < E3_MAX_NHLFES; id++) {
		if (!nhlfe_exists(id))
			continue;
		struct e3_nhlfe_conf c = nhlfe_conf_of(id);

		fn(&c, arg);
	}
}

/* ---- BFD sessions' hooks (ctl_bfd.c) ------------------------------------------ */

int e3_ctl_ok(bool changed)
{
	return ok(changed);
}

bool e3_ctl_nexthop_used(uint32_t id)
{
	return id < E3_MAX_NEXTHOPS && nh_used[id];
}

void e3_ctl_nexthop_ref(uint32_t id, int d)
{
	nh_refs[id] += d;
}

/* ---- services ---------------------------------------------------------------- */

static void service_refs(const struct e3_service *s, int d)
{
	if (s == NULL)
		return;
	if (s->type == E3_SVC_ELINE && s->nhlfe != E3_NONE)
		nhlfe_refs[s->nhlfe] += d;
	for (unsigned i = 0; i < s->n_branches; i++)
		nhlfe_refs[s->branches[i]] += d;
	for (unsigned i = 0; i < s->n_sources; i++)
		if (s->remote_nhlfe[i] != E3_NONE)
			nhlfe_refs[s->remote_nhlfe[i]] += d;
}

/* Scratch confs (9 KiB each): the main lcore is single-threaded. */
static struct e3_service_conf sc_a, sc_b;

static bool service_same(const struct e3_service *x, const struct e3_service *y)
{
	e3_service_conf_of(x, &sc_a);
	e3_service_conf_of(y, &sc_b);
	return sc_a.type == sc_b.type && strcmp(sc_a.name, sc_b.name) == 0 &&
	       sc_a.nhlfe == sc_b.nhlfe && sc_a.mac_limit == sc_b.mac_limit &&
	       sc_a.n_remotes == sc_b.n_remotes && sc_a.n_branches == sc_b.n_branches &&
	       memcmp(sc_a.remotes, sc_b.remotes, sizeof(sc_a.remotes[0]) * sc_a.n_remotes) == 0 &&
	       memcmp(sc_a.branches, sc_b.branches, sizeof(uint32_t) * sc_a.n_branches) == 0;
}

static int service_validate(const struct e3_service_conf *c, char *err)
{
	if (c->id >= E3_MAX_SERVICES)
		return E3_ERR(err, E3_EINVAL, "id: must be < %u", E3_MAX_SERVICES);
	if (strnlen(c->name, sizeof(c->name)) == sizeof(c->name))
		return E3_ERR(err, E3_EINVAL, "name: at most 63 characters");
	if (c->type == E3_SVC_ELINE) {
		if (c->nhlfe != E3_NONE && !nhlfe_exists(c->nhlfe))
			return E3_ERR(err, E3_ENOENT, "nhlfe %u not found", c->nhlfe);
		if (c->n_remotes || c->n_branches)
			return E3_ERR(err, E3_EINVAL, "remotes, branches: only for an elan");
		return 0;
	}
	if (c->type != E3_SVC_ELAN)
		return E3_ERR(err, E3_EINVAL, "type: must be eline or elan");
	if (c->n_remotes > E3_MAX_REMOTES)
		return E3_ERR(err, E3_EINVAL, "remotes: at most %u", E3_MAX_REMOTES);
	if (c->n_branches > E3_MAX_BRANCHES)
		return E3_ERR(err, E3_EINVAL, "branches: at most %u", E3_MAX_BRANCHES);
	static bool seen[E3_MAX_REMOTES];
	int rc = 0;

	for (unsigned i = 0; i < c->n_remotes && rc == 0; i++) {
		const struct e3_remote *r = &c->remotes[i];

		if (r->source >= E3_MAX_REMOTES)
			rc = E3_ERR(err, E3_EINVAL, "remotes[%u].source: must be < %u", i, E3_MAX_REMOTES);
		else if (seen[r->source])
			rc = E3_ERR(err, E3_EINVAL, "remotes[%u].source: %u given twice", i, r->source);
		else if (!nhlfe_exists(r->nhlfe))
			rc = E3_ERR(err, E3_ENOENT, "remotes[%u]: nhlfe %u not found", i, r->nhlfe);
		else
			seen[r->source] = true;
	}
	for (unsigned i = 0; i < c->n_remotes; i++)
		if (c->remotes[i].source < E3_MAX_REMOTES)
			seen[c->remotes[i].source] = false;
	if (rc != 0)
		return rc;
	for (unsigned i = 0; i < c->n_branches; i++) {
		if (!nhlfe_exists(c->branches[i]))
			return E3_ERR(err, E3_ENOENT, "branches[%u]: nhlfe %u not found", i, c->branches[i]);
		for (unsigned j = 0; j < i; j++)
			if (c->branches[j] == c->branches[i])
				return E3_ERR(err, E3_EINVAL, "branches[%u]: nhlfe %u given twice", i, c->branches[i]);
	}
	return 0;
}

/* Most local circuits a service may have. */
static unsigned service_max_circuits(uint8_t type, uint32_t nhlfe)
{
	if (type == E3_SVC_ELINE)
		return nhlfe == E3_NONE ? 2 : 1;
	return UINT16_MAX;
}

int e3_ctl_service_add(const struct e3_service_conf *c, char *err)
{
	if (refs_init() != 0)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	int rc = service_validate(c, err);

	if (rc != 0)
		return rc;
	const struct e3_service *old = e3_service_get(c->id);

	if (old != NULL) {
		if (old->type != c->type && svc_refs[c->id] > 0)
			return E3_ERR(err, E3_EBUSY, "service %u: cannot change type while %u labels use it",
				      c->id, svc_refs[c->id]);
		uint32_t nh = c->type == E3_SVC_ELINE ? c->nhlfe : E3_NONE;

		if (old->n_circuits > service_max_circuits(c->type, nh))
			return E3_ERR(err, E3_EBUSY, "service %u has %u circuits, more than this type allows",
				      c->id, old->n_circuits);
	}
	struct e3_service *s = e3_service_build(c, old ? old->circuits : NULL, old ? old->n_circuits : 0);

	if (s == NULL)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	if (old != NULL && service_same(old, s)) {
		free(s);
		return ok(false);
	}
	service_refs(s, +1);
	service_refs(old, -1);
	if (old == NULL) {
		e3_stats_reset_svc(c->id);
		e3_mac_svc_reset(c->id);
	}
	if (old != NULL && old->type != s->type)
		e3_mac_flush(c->id, E3_NONE);
	e3_service_publish(c->id, s);
	return ok(true);
}

int e3_ctl_service_del(uint32_t id, char *err)
{
	const struct e3_service *s = e3_service_get(id);

	if (s == NULL)
		return E3_ERR(err, E3_ENOENT, "service %u not found", id);
	if (s->n_circuits > 0)
		return E3_ERR(err, E3_EBUSY, "service %u has %u circuits", id, s->n_circuits);
	if (svc_refs[id] > 0)
		return E3_ERR(err, E3_EBUSY, "service %u is used by %u labels", id, svc_refs[id]);
	service_refs(s, -1);
	e3_service_publish(id, NULL);
	e3_mac_flush(id, E3_NONE);
	return ok(true);
}

void e3_ctl_service_walk(e3_service_walk_fn fn, void *arg)
{
	static struct e3_service_conf conf;

	for (uint32_t id = 0; id < E3_MAX_SERVICES; id++) {
		const struct e3_service *s = e3_service_tbl[id];

		if (s == NULL)
			continue;
		struct e3_svc_ctr c;
		const struct e3_mac_svc_stats *ms = e3_mac_svc_stats(id);

		e3_service_conf_of(s, &conf);
		e3_stats_svc(id, &c);
		struct e3_service_info info = {
			.conf = &conf,
			.n_circuits = s->n_circuits,
			.n_macs = ms->n_macs,
			.rx_pkts = c.rx_pkts, .rx_bytes = c.rx_bytes,
			.tx_pkts = c.tx_pkts, .tx_bytes = c.tx_bytes,
			.flooded = c.flooded,
			.learned = ms->learned, .moves = ms->moves,
			.limit_hits = ms->limit_hits + c.mac_refused, .table_full = ms->table_full,
			.moves_refused = ms->moves_refused, .learn_lost = c.learn_lost,
			.frozen = ms->frozen,
		};
		fn(&info, arg);
	}
}

/* ---- circuits ----------------------------------------------------------------- */

/* Republish service id with circuit added or removed. */
static int service_set_circuit(uint32_t id, uint32_t circuit, bool add)
{
	const struct e3_service *s = e3_service_get(id);
	struct e3_service *ns = e3_service_with_circuit(s, circuit, add);

	if (ns == NULL)
		return -1;
	e3_service_publish(id, ns);
	return 0;
}

int e3_ctl_circuit_add(const struct e3_circuit_conf *c, char *err)
{
	if (c->id >= E3_MAX_CIRCUITS)
		return E3_ERR(err, E3_EINVAL, "id: must be < %u", E3_MAX_CIRCUITS);
	if (strnlen(c->port, sizeof(c->port)) == sizeof(c->port))
		return E3_ERR(err, E3_EINVAL, "port: too long");
	if (c->vlan != E3_VLAN_UNTAGGED && (c->vlan < 1 || c->vlan > 4094))
		return E3_ERR(err, E3_EINVAL, "vlan: must be 1..4094 or untagged");
	const struct e3_port *p = port_by_name(c->port);

	if (p == NULL)
		return E3_ERR(err, E3_ENOENT, "port %s not found", c->port);
	if (p->kind != E3_PORT_CUSTOMER)
		return E3_ERR(err, E3_EINVAL, "port: %s is not a customer port", c->port);
	const struct e3_service *s = e3_service_get(c->service);

	if (s == NULL)
		return E3_ERR(err, E3_ENOENT, "service %u not found", c->service);
	uint32_t holder = e3_circuit_lookup(p->port_id, c->vlan);

	if (holder != E3_NONE && holder != c->id)
		return E3_ERR(err, E3_EEXIST, "port %s vlan %u is circuit %u already", c->port, c->vlan, holder);
	struct e3_circuit old = e3_circuit_get(c->id);
	bool existed = old.port != E3_CIRCUIT_NOPORT;

	if (existed && old.port == p->port_id && old.vlan == c->vlan && old.service == c->service &&
	    e3_mac_circ_stats(c->id)->limit == c->mac_limit)
		return ok(false);
	bool joins = !existed || old.service != c->service;

	if (joins && s->n_circuits >= service_max_circuits(s->type, s->nhlfe))
		return E3_ERR(err, E3_ENOSPC, "service %u already has its %u circuits", c->service, s->n_circuits);
	if (joins && service_set_circuit(c->service, c->id, true) != 0)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	e3_mac_circuit_limit(c->id, c->mac_limit);
	e3_circuit_set(c->id, (struct e3_circuit){ p->port_id, c->vlan, c->service });
	port_refs[p->port_id]++;
	if (existed) {
		port_refs[old.port]--;
		if (joins) {
			service_set_circuit(old.service, c->id, false);
			e3_mac_flush(old.service, c->id);
		}
	} else {
		e3_stats_reset_circ(c->id);
	}
	return ok(true);
}

int e3_ctl_circuit_del(uint32_t id, char *err)
{
	struct e3_circuit c = e3_circuit_get(id);

	if (c.port == E3_CIRCUIT_NOPORT)
		return E3_ERR(err, E3_ENOENT, "circuit %u not found", id);
	e3_circuit_clear(id);
	service_set_circuit(c.service, id, false);
	e3_mac_flush(c.service, id);
	e3_mac_circuit_limit(id, 0);
	port_refs[c.port]--;
	return ok(true);
}

void e3_ctl_circuit_walk(e3_circuit_walk_fn fn, void *arg)
{
	for (uint32_t id = 0; id < E3_MAX_CIRCUITS; id++) {
		struct e3_circuit c = e3_circuit_get(id);

		if (c.port == E3_CIRCUIT_NOPORT)
			continue;
		struct e3_circ_ctr ctr;
		const struct e3_mac_circ_stats *ms = e3_mac_circ_stats(id);
		struct e3_circuit_info info = {
			.conf = { .id = id, .vlan = c.vlan, .service = c.service, .mac_limit = ms->limit },
			.macs = ms->n_macs, .limit_hits = ms->limit_hits,
		};
		const struct e3_port *p = e3_port_tbl[c.port];

		if (p != NULL)
			snprintf(info.conf.port, sizeof(info.conf.port), "%s", p->conf.name);
		e3_stats_circ(id, &ctr);
		info.rx_pkts = ctr.rx_pkts;
		info.rx_bytes = ctr.rx_bytes;
		info.tx_pkts = ctr.tx_pkts;
		info.tx_bytes = ctr.tx_bytes;
		fn(&info, arg);
	}
}

/* ---- labels ----------------------------------------------------------------------- */

/* The conf of label's entry (type E3_LBL_NONE if none). */
static void label_conf_of(uint32_t label, struct e3_label_conf *c)
{
	struct e3_label_entry e = e3_label_get(label);

	memset(c, 0, offsetof(struct e3_label_conf, branches));
	c->label = label;
	c->type = e.type;
	c->nhlfe = E3_NONE;
	c->service = E3_NONE;
	switch (e.type) {
	case E3_LBL_SWAP:
		c->nhlfe = e.index;
		break;
	case E3_LBL_ELINE:
		c->service = e.index;
		break;
	case E3_LBL_ELAN:
		c->service = e3_label_elan_service(e.index);
		c->source = e3_label_elan_source(e.index);
		break;
	case E3_LBL_OAM:
		c->session = e.index;
		break;
	case E3_LBL_REPLICATE: {
		const struct e3_replicate *r = e3_repl_get(e.index);
		const struct e3_port *p = e3_port_tbl[r->rpf_port];

		if (p != NULL)
			snprintf(c->rpf_port, sizeof(c->rpf_port), "%s", p->conf.name);
		c->service = r->service;
		c->source = r->service != E3_NONE ? r->source : 0;
		c->n_branches = r->n_branches;
		memcpy(c->branches, r->branches, sizeof(uint32_t) * r->n_branches);
		break;
	}
	default:
		break;
	}
	c->n_in_ports = 0;
	for (unsigned port = 0; port < RTE_MAX_ETHPORTS; port++) {
		const struct e3_port *p = e3_port_tbl[port];

		if ((e.in_ports >> port & 1) && p != NULL)
			snprintf(c->in_ports[c->n_in_ports++], sizeof(c->in_ports[0]), "%s", p->conf.name);
	}
}

/* The in_ports bit mask of a validated conf. */
static uint32_t in_ports_mask(const struct e3_label_conf *c)
{
	uint32_t mask = 0;

	for (unsigned i = 0; i < c->n_in_ports; i++)
		mask |= 1u << port_by_name(c->in_ports[i])->port_id;
	return mask;
}

static bool label_same(const struct e3_label_conf *a, const struct e3_label_conf *b)
{
	if (a->type != b->type || in_ports_mask(a) != in_ports_mask(b))
		return false;
	switch (a->type) {
	case E3_LBL_SWAP:
		return a->nhlfe == b->nhlfe;
	case E3_LBL_ELINE:
		return a->service == b->service;
	case E3_LBL_ELAN:
		return a->service == b->service && a->source == b->source;
	case E3_LBL_OAM:
		return a->session == b->session;
	case E3_LBL_REPLICATE:
		return strcmp(a->rpf_port, b->rpf_port) == 0 && a->service == b->service &&
		       (a->service == E3_NONE || a->source == b->source) &&
		       a->n_branches == b->n_branches &&
		       memcmp(a->branches, b->branches, sizeof(uint32_t) * a->n_branches) == 0;
	default:
		return true;
	}
}

static void label_refs(const struct e3_label_conf *c, int d)
{
	for (unsigned i = 0; i < c->n_in_ports; i++)
		port_refs[port_by_name(c->in_ports[i])->port_id] += d;
	switch (c->type) {
	case E3_LBL_SWAP:
		nhlfe_refs[c->nhlfe] += d;
		break;
	case E3_LBL_ELINE:
	case E3_LBL_ELAN:
		svc_refs[c->service] += d;
		break;
	case E3_LBL_REPLICATE:
		for (unsigned i = 0; i < c->n_branches; i++)
			nhlfe_refs[c->branches[i]] += d;
		if (c->service != E3_NONE)
			svc_refs[c->service] += d;
		port_refs[port_by_name(c->rpf_port)->port_id] += d;
		break;
	default:
		break;
	}
}

static int service_typed(uint32_t id, uint8_t type, char *err)
{
	const struct e3_service *s = e3_service_get(id);

	if (s == NULL)
		return E3_ERR(err, E3_ENOENT, "service %u not found", id);
	if (s->type != type)
		return E3_ERR(err, E3_EINVAL, "service: %u is not an %s", id,
			      type == E3_SVC_ELINE ? "eline" : "elan");
	return 0;
}

static int label_validate(const struct e3_label_conf *c, char *err)
{
	if (c->label < E3_LABEL_MIN || c->label >= E3_LABEL_SPACE)
		return E3_ERR(err, E3_EINVAL, "label: must be %u..%u", E3_LABEL_MIN, E3_LABEL_SPACE - 1);
	if (c->n_in_ports > E3_MAX_IN_PORTS)
		return E3_ERR(err, E3_EINVAL, "in_ports: at most %u", E3_MAX_IN_PORTS);
	for (unsigned i = 0; i < c->n_in_ports; i++) {
		const struct e3_port *p = strnlen(c->in_ports[i], sizeof(c->in_ports[i])) <
						  sizeof(c->in_ports[i]) ?
					  port_by_name(c->in_ports[i]) : NULL;

		if (p == NULL)
			return E3_ERR(err, E3_ENOENT, "in_ports[%u]: port %.31s not found", i, c->in_ports[i]);
		if (p->kind != E3_PORT_FABRIC)
			return E3_ERR(err, E3_EINVAL, "in_ports[%u]: %s is not a fabric port", i, c->in_ports[i]);
	}
	switch (c->type) {
	case E3_LBL_SWAP:
		if (!nhlfe_exists(c->nhlfe))
			return E3_ERR(err, E3_ENOENT, "nhlfe %u not found", c->nhlfe);
		return 0;
	case E3_LBL_ELINE:
		return service_typed(c->service, E3_SVC_ELINE, err);
	case E3_LBL_ELAN:
		if (c->source >= E3_MAX_REMOTES)
			return E3_ERR(err, E3_EINVAL, "source: must be < %u", E3_MAX_REMOTES);
		return service_typed(c->service, E3_SVC_ELAN, err);
	case E3_LBL_REPLICATE: {
		if (strnlen(c->rpf_port, sizeof(c->rpf_port)) == sizeof(c->rpf_port))
			return E3_ERR(err, E3_EINVAL, "rpf_port: too long");
		const struct e3_port *p = port_by_name(c->rpf_port);

		if (p == NULL)
			return E3_ERR(err, E3_ENOENT, "rpf_port %s not found", c->rpf_port);
		if (p->kind != E3_PORT_FABRIC)
			return E3_ERR(err, E3_EINVAL, "rpf_port: %s is not a fabric port", c->rpf_port);
		if (c->n_branches > E3_MAX_BRANCHES)
			return E3_ERR(err, E3_EINVAL, "branches: at most %u", E3_MAX_BRANCHES);
		for (unsigned i = 0; i < c->n_branches; i++)
			if (!nhlfe_exists(c->branches[i]))
				return E3_ERR(err, E3_ENOENT, "branches[%u]: nhlfe %u not found", i, c->branches[i]);
		if (c->service == E3_NONE) {
			if (c->n_branches == 0)
				return E3_ERR(err, E3_EINVAL, "branches: a replicate entry without local delivery needs branches");
			return 0;
		}
		if (c->source >= E3_MAX_REMOTES)
			return E3_ERR(err, E3_EINVAL, "source: must be < %u", E3_MAX_REMOTES);
		return service_typed(c->service, E3_SVC_ELAN, err);
	}
	case E3_LBL_OAM:
		/* Like a protected nhlfe's watch, the session may come later:
		 * until then its frames count as oam_no_session. */
		if (c->session >= E3_MAX_SESSIONS)
			return E3_ERR(err, E3_EINVAL, "session: must be < %u", E3_MAX_SESSIONS);
		return 0;
	default:
		return E3_ERR(err, E3_EINVAL, "type: must be swap, eline, elan, replicate or oam");
	}
}

static struct e3_label_conf lc_old;

int e3_ctl_label_add(const struct e3_label_conf *c, char *err)
{
	if (refs_init() != 0)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	int rc = label_validate(c, err);

	if (rc != 0)
		return rc;
	label_conf_of(c->label, &lc_old);
	if (label_same(&lc_old, c))
		return ok(false);
	struct e3_label_entry e = { .type = c->type, .in_ports = in_ports_mask(c) };

	switch (c->type) {
	case E3_LBL_SWAP:
		e.index = c->nhlfe;
		break;
	case E3_LBL_ELINE:
		e.index = c->service;
		break;
	case E3_LBL_ELAN:
		e.index = e3_label_elan_index(c->service, c->source);
		break;
	case E3_LBL_OAM:
		e.index = c->session;
		break;
	default: {
		struct e3_replicate *r = malloc(sizeof(*r) + sizeof(uint32_t) * c->n_branches);

		if (r == NULL)
			return E3_ERR(err, E3_ENOSPC, "out of memory");
		r->rpf_port = port_by_name(c->rpf_port)->port_id;
		r->service = c->service;
		r->source = c->service != E3_NONE ? c->source : 0;
		r->n_branches = c->n_branches;
		memcpy(r->branches, c->branches, sizeof(uint32_t) * c->n_branches);
		int slot = e3_repl_publish(r);

		if (slot < 0) {
			free(r);
			return E3_ERR(err, E3_ENOSPC, "replicate entries: at most %u", E3_MAX_REPLICATE);
		}
		e.index = (uint32_t)slot;
		break;
	}
	}
	struct e3_label_entry old = e3_label_get(c->label);

	label_refs(c, +1);
	label_refs(&lc_old, -1);
	e3_label_set(c->label, e);
	if (old.type == E3_LBL_REPLICATE)
		e3_repl_release(old.index);
	if (old.type == E3_LBL_NONE)
		e3_stats_reset_label(c->label);
	return ok(true);
}

int e3_ctl_label_del(uint32_t label, char *err)
{
	if (label >= E3_LABEL_SPACE || e3_label_get(label).type == E3_LBL_NONE)
		return E3_ERR(err, E3_ENOENT, "label %u not found", label);
	struct e3_label_entry old = e3_label_get(label);

	label_conf_of(label, &lc_old);
	label_refs(&lc_old, -1);
	e3_label_set(label, (struct e3_label_entry){ 0 });
	if (old.type == E3_LBL_REPLICATE)
		e3_repl_release(old.index);
	return ok(true);
}

void e3_ctl_label_walk(e3_label_walk_fn fn, void *arg)
{
	static struct e3_label_conf conf;

	for (uint32_t l = E3_LABEL_MIN; l < E3_LABEL_SPACE; l++) {
		if (e3_label_get(l).type == E3_LBL_NONE)
			continue;
		label_conf_of(l, &conf);
		struct e3_label_info info = { .conf = &conf, .pkts = e3_stats_label(l) };

		fn(&info, arg);
	}
}

/* ---- MAC table ------------------------------------------------------------------------ */

void e3_ctl_mac_walk(uint32_t service, e3_mac_walk_fn fn, void *arg)
{
	e3_mac_walk(service, fn, arg);
}

int e3_ctl_mac_flush(uint32_t service, char *err)
{
	if (service != E3_NONE && e3_service_get(service) == NULL)
		return E3_ERR(err, E3_ENOENT, "service %u not found", service);
	uint32_t n = e3_mac_flush(service, E3_NONE);

	last_changed = n > 0;
	return (int)n;
}

/* ---- counters -------------------------------------------------------------------------- */

int e3_ctl_worker_count(void)
{
	return e3.n_workers;
}

int e3_ctl_worker_get(int idx, struct e3_worker_info *o)
{
	if (idx < 0 || idx >= e3.n_workers)
		return -E3_ENOENT;
	const struct e3_worker *w = e3_workers[idx];
	const struct e3_qlist *ql = w->qlist;

	memset(o, 0, offsetof(struct e3_worker_info, queues));
	o->lcore = w->lcore;
	o->polls = w->polls;
	o->busy_polls = w->busy_polls;
	o->idle_sleeps = w->idle_sleeps;
	o->rx_pkts = w->rx_pkts;
	o->n_queues = ql->n;
	for (unsigned k = 0; k < ql->n; k++) {
		o->queues[k].port_id = ql->q[k].port;
		o->queues[k].queue = ql->q[k].queue;
		const struct e3_port *p = e3_port_tbl[ql->q[k].port];

		snprintf(o->queues[k].port, sizeof(o->queues[k].port), "%s", p ? p->conf.name : "");
	}
	return 0;
}

void e3_ctl_drops_total(uint64_t out[E3_DROP_MAX])
{
	struct e3_port_ctr c;

	memset(out, 0, sizeof(uint64_t) * E3_DROP_MAX);
	for (uint16_t p = 0; p < RTE_MAX_ETHPORTS; p++) {
		if (e3_port_tbl[p] == NULL)
			continue;
		e3_stats_port(p, &c);
		for (int d = 0; d < E3_DROP_MAX; d++)
			out[d] += c.drops[d];
	}
}

void e3_ctl_stats_clear(void)
{
	e3_stats_clear_all();
	for (uint32_t id = 0; id < E3_MAX_SERVICES; id++)
		if (e3_service_tbl[id] != NULL)
			e3_mac_svc_reset(id);
}

/* ---- trace ------------------------------------------------------------------------------- */

int e3_ctl_trace_start(const struct e3_trace_filter *f, uint32_t n, char *err)
{
	int32_t port = -1;

	if (n == 0 || n > E3_TRACE_MAX)
		return E3_ERR(err, E3_EINVAL, "count: must be 1..%u", E3_TRACE_MAX);
	if (strnlen(f->port, sizeof(f->port)) == sizeof(f->port))
		return E3_ERR(err, E3_EINVAL, "port: too long");
	if (f->port[0] != 0) {
		const struct e3_port *p = port_by_name(f->port);

		if (p == NULL)
			return E3_ERR(err, E3_ENOENT, "port %s not found", f->port);
		port = p->port_id;
	}
	if (f->vlan < -1 || f->vlan > E3_VLAN_UNTAGGED)
		return E3_ERR(err, E3_EINVAL, "vlan: must be 0..4095 or untagged");
	if (f->label < -1 || f->label >= E3_LABEL_SPACE)
		return E3_ERR(err, E3_EINVAL, "label: must be 0..%u", E3_LABEL_SPACE - 1);
	e3_trace_arm(port, f->vlan, f->label, n);
	return ok(true);
}

void e3_ctl_trace_walk(e3_trace_walk_fn fn, void *arg)
{
	e3_trace_walk_records(fn, arg);
}
