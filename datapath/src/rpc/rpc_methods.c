/* SPDX-License-Identifier: Apache-2.0
 *
 * rpc_methods.c - the method table and its handlers. Each handler runs with
 * the control lock held (e3_rpc_invoke), gets its params already decoded
 * and checked by its table, calls e3_node_* and writes one result value.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>

#include "pipeline/pwoam.h"
#include "pipeline/sflow.h"

#include "rpc/rpc_int.h"
#include "tables/mac_table.h"

static const struct e3_obj_type no_params = { .what = "params" };

static int result(struct e3_rpc_call *c, json_t *v)
{
	e3_jw_json(&c->w, NULL, v);
	return 0;
}

static int result_empty(struct e3_rpc_call *c)
{
	return result(c, json_object());
}

/* After a successful _add: whether it changed anything (node.h). */
static int result_changed(struct e3_rpc_call *c)
{
	return result(c, json_pack("{s:b}", "changed", e3_node_changed()));
}

/* A method whose only param is an id: {id} */
struct id_params {
	uint32_t id;
};
#define ID_PARAMS(var, key, n, req)                                                \
	static const struct e3_param var##_table[] = {                                 \
		E3_P_INT(struct id_params, id, key, E3_PT_U32, req, 0, (n) - 1),       \
	};                                                                             \
	static const struct e3_obj_type var = { .what = "params", .params = var##_table, \
						.n_params = 1, .size = sizeof(struct id_params) }

static json_t *drops_json(const uint64_t d[E3_DROP_MAX])
{
	json_t *o = json_object();
	for (int i = 0; i < E3_DROP_MAX; i++)
		json_object_set_new(o, e3_drop_name(i), json_integer((json_int_t)d[i]));
	return o;
}

/* ---- system ------------------------------------------ */
static int m_system_info(struct e3_rpc_call *c, void *p)
{
	(void)p;
	json_t *limits = json_pack(
		"{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:I}", "ports", E3_MAX_PORTS,
		"workers", E3_MAX_WORKERS, "rx_queues", E3_MAX_QUEUES, "nexthops",
		E3_MAX_NEXTHOPS, "nhlfes", (int)E3_MAX_NHLFES, "services", E3_MAX_SERVICES,
		"circuits", E3_MAX_CIRCUITS, "remotes", E3_MAX_REMOTES, "branches",
		E3_MAX_BRANCHES, "label_min", E3_LABEL_MIN, "label_max",
		(int)E3_LABEL_SPACE - 1, "macs", (json_int_t)e3_mac_capacity());
	const struct e3_rpc_counters none = { 0 };
	const struct e3_rpc_counters *rc = c->server ? c->server : &none;
	json_t *rpc = json_pack("{s:I, s:I, s:I, s:I}", "connections", (json_int_t)rc->connections,
				"refused_full", (json_int_t)rc->refused_full, "refused_per_user",
				(json_int_t)rc->refused_per_user, "idle_closed",
				(json_int_t)rc->idle_closed);

	return result(c, json_pack("{s:s, s:s, s:i, s:i, s:s, s:f, s:o, s:o}", "version", E3_VERSION,
				   "boot_id", e3_node_boot_id(), "pid", (int)getpid(), "workers",
				   e3_node_worker_count(), "poll_mode", e3_node_poll_mode_name(),
				   "uptime_s", e3_node_uptime_s(), "limits", limits, "rpc", rpc));
}

static int settings_result(struct e3_rpc_call *c)
{
	struct e3_settings s;
	e3_node_settings_get(&s);
	return result(c, e3_obj_json(&e3_settings_type, &s));
}

static int m_settings_get(struct e3_rpc_call *c, void *p)
{
	(void)p;
	return settings_result(c);
}

/* Only the params given change; the others keep their value. */
static int m_settings_set(struct e3_rpc_call *c, void *p)
{
	const struct e3_settings *in = p;
	struct e3_settings s;
	char err[E3_ERRLEN] = "";
	e3_node_settings_get(&s);
	e3_settings_merge(&s, in, c->seen);
	int rc = e3_node_settings_set(&s, err);
	if (rc < 0)
		return e3_rpc_node_err(c, rc, err);
	return settings_result(c);
}

/* ---- ports ------------------------------------------ */
static int m_port_add(struct e3_rpc_call *c, void *p)
{
	struct e3_port_req *r = p;
	char err[E3_ERRLEN] = "";
	int rc = e3_node_port_add(&r->conf, err);
	if (rc < 0)
		return e3_rpc_node_err(c, rc, err);
	bool changed = e3_node_changed();
	struct e3_port_info pi;
	if (e3_node_port_get(r->conf.name, &pi, err) < 0)
		return e3_rpc_err(c, E3_RPC_INTERNAL_ERROR, "port %s vanished", r->conf.name);
	/* conf.mac is the MAC in use (node.h) */
	return result(c, json_pack("{s:b, s:i, s:o}", "changed", changed, "port_id",
				   pi.dpdk_port_id, "mac", e3_mac_json(pi.conf.mac)));
}

struct name_params {
	char name[32];
};
static const struct e3_param name_table[] = {
	E3_P_STR(struct name_params, name, "name", true, 1),
};
static const struct e3_obj_type name_params = { .what = "params", .params = name_table,
						.n_params = 1, .size = sizeof(struct name_params) };
static const struct e3_param name_filter_table[] = {
	E3_P_STR(struct name_params, name, "name", false, 1),
};
static const struct e3_obj_type name_filter = { .what = "params", .params = name_filter_table,
						.n_params = 1, .size = sizeof(struct name_params) };

static int m_port_del(struct e3_rpc_call *c, void *p)
{
	char err[E3_ERRLEN] = "";
	int rc = e3_node_port_del(((struct name_params *)p)->name, err);
	return rc < 0 ? e3_rpc_node_err(c, rc, err) : result_empty(c);
}

static json_t *port_stats_json(const struct e3_port_info *p)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:o}", "rx_pkts", (json_int_t)p->rx_pkts,
			 "rx_bytes", (json_int_t)p->rx_bytes, "tx_pkts", (json_int_t)p->tx_pkts,
			 "tx_bytes", (json_int_t)p->tx_bytes, "tx_retries", (json_int_t)p->tx_retries,
			 "drops", drops_json(p->drops));
}

static json_t *port_json(const struct e3_port_info *p)
{
	json_t *o = e3_obj_json(&e3_port_type, &p->conf);
	json_t *w = json_array();
	for (int i = 0; i < p->conf.rx_queues && i < E3_MAX_QUEUES; i++)
		json_array_append_new(w, json_integer(p->conf.worker[i]));
	json_object_set_new(o, "workers", w);
	json_object_set_new(o, "port_id", json_integer(p->dpdk_port_id));
	json_object_set_new(o, "link", json_string(p->link_up ? "up" : "down"));
	json_object_set_new(o, "speed_mbps", json_integer(p->speed_mbps));
	json_object_set_new(o, "stats", port_stats_json(p));
	json_t *q = json_array();
	for (unsigned i = 0; i < p->n_rxq; i++)
		json_array_append_new(q, json_integer((json_int_t)p->rxq_pkts[i]));
	json_object_set_new(o, "rxq_pkts", q);
	return o;
}

static void port_list_cb(const struct e3_port_info *p, void *arg)
{
	e3_jw_json(arg, NULL, port_json(p));
}

static int m_port_list(struct e3_rpc_call *c, void *p)
{
	const struct name_params *f = p;
	if (c->seen & 1) {
		struct e3_port_info pi;
		char err[E3_ERRLEN] = "";
		int rc = e3_node_port_get(f->name, &pi, err);
		if (rc < 0)
			return e3_rpc_node_err(c, rc, err);
		return result(c, json_pack("[o]", port_json(&pi)));
	}
	e3_jw_open(&c->w, NULL, '[');
	e3_node_port_walk(port_list_cb, &c->w);
	e3_jw_close(&c->w, ']');
	return 0;
}

/* _add and _del of the objects keyed by a number, all alike. */
#define ADD_DEL(obj)                                                                     \
	static int m_##obj##_add(struct e3_rpc_call *c, void *p)                          \
	{                                                                                \
		char err[E3_ERRLEN] = "";                                                \
		int rc = e3_node_##obj##_add(p, err);                                     \
		if (rc < 0)                                                              \
			return e3_rpc_node_err(c, rc, err);                               \
		return result_changed(c);                                                \
	}                                                                                \
	static int m_##obj##_del(struct e3_rpc_call *c, void *p)                          \
	{                                                                                \
		char err[E3_ERRLEN] = "";                                                \
		int rc = e3_node_##obj##_del(((struct id_params *)p)->id, err);           \
		return rc < 0 ? e3_rpc_node_err(c, rc, err) : result_empty(c);            \
	}

ADD_DEL(nexthop)
ADD_DEL(nhlfe)
ADD_DEL(ecmp)
ADD_DEL(bfd)
ADD_DEL(service)
ADD_DEL(circuit)
ADD_DEL(label)

ID_PARAMS(nexthop_id, "id", E3_MAX_NEXTHOPS, true);
ID_PARAMS(nhlfe_id, "id", E3_MAX_NHLFES, true);
ID_PARAMS(bfd_id, "id", E3_MAX_SESSIONS, true);
ID_PARAMS(service_id, "id", E3_MAX_SERVICES, true);
ID_PARAMS(circuit_id, "id", E3_MAX_CIRCUITS, true);
ID_PARAMS(label_id, "label", E3_LABEL_SPACE, true);
/* the optional id that filters a list */
ID_PARAMS(service_filter, "id", E3_MAX_SERVICES, false);
ID_PARAMS(label_filter, "label", E3_LABEL_SPACE, false);

/* ---- lists ------------------------------------------ */
static void nexthop_list_cb(const struct e3_nexthop_conf *n, void *arg)
{
	e3_jw_json(arg, NULL, e3_obj_json(&e3_nexthop_type, n));
}

static int m_nexthop_list(struct e3_rpc_call *c, void *p)
{
	(void)p;
	e3_jw_open(&c->w, NULL, '[');
	e3_node_nexthop_walk(nexthop_list_cb, &c->w);
	e3_jw_close(&c->w, ']');
	return 0;
}

static void nhlfe_list_cb(const struct e3_nhlfe_conf *n, void *arg)
{
	e3_jw_json(arg, NULL, e3_obj_json(&e3_nhlfe_type, n));
}

static int m_nhlfe_list(struct e3_rpc_call *c, void *p)
{
	(void)p;
	e3_jw_open(&c->w, NULL, '[');
	e3_node_nhlfe_walk(nhlfe_list_cb, &c->w);
	e3_jw_close(&c->w, ']');
	return 0;
}

static void ecmp_list_cb(const struct e3_ecmp_conf *n, void *arg)
{
	e3_jw_json(arg, NULL, e3_obj_json(&e3_ecmp_type, n));
}

static int m_ecmp_list(struct e3_rpc_call *c, void *p)
{
	(void)p;
	e3_jw_open(&c->w, NULL, '[');
	e3_node_ecmp_walk(ecmp_list_cb, &c->w);
	e3_jw_close(&c->w, ']');
	return 0;
}

/* Each session's configuration, state and counters. */
static void bfd_list_cb(const struct e3_bfd_info *b, void *arg)
{
	json_t *o = e3_obj_json(&e3_bfd_type, &b->conf);

	json_object_update_new(o, json_pack(
		"{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:i, s:b, s:b, s:I, s:I, s:I, s:I, s:I, s:I}",
		"port", b->port, "state", b->state, "remote_state", b->remote_state,
		"diag", b->diag, "local_disc", (json_int_t)b->local_disc,
		"remote_disc", (json_int_t)b->remote_disc,
		"tx_interval_us", (json_int_t)b->tx_interval_us,
		"detect_time_us", (json_int_t)b->detect_time_us,
		"remote_min_rx_us", (json_int_t)b->remote_min_rx_us,
		"remote_min_tx_us", (json_int_t)b->remote_min_tx_us,
		"remote_multiplier", b->remote_multiplier, "usable", b->usable,
		"paused", b->paused,
		"tx_pkts", (json_int_t)b->tx_pkts, "rx_pkts", (json_int_t)b->rx_pkts,
		"ups", (json_int_t)b->ups, "downs", (json_int_t)b->downs, "pauses", (json_int_t)b->pauses,
		"since_ms", (json_int_t)b->since_ms));
	e3_jw_json(arg, NULL, o);
}

static int m_bfd_list(struct e3_rpc_call *c, void *p)
{
	(void)p;
	e3_jw_open(&c->w, NULL, '[');
	e3_node_bfd_walk(bfd_list_cb, &c->w);
	e3_jw_close(&c->w, ']');
	return 0;
}

/* service_list shows each service's circuits: gather (service, circuit)
 * pairs once, sorted by service, instead of a circuit walk per service. */
struct svc_circ {
	uint32_t service, circuit;
};
struct svc_list {
	struct e3_jw *w;
	uint32_t only;  /* E3_NONE: all */
	bool found;
	struct svc_circ *sc;
	size_t n, cap;
	bool oom;
};

static void svc_circ_cb(const struct e3_circuit_info *ci, void *arg)
{
	struct svc_list *l = arg;
	if (l->only != E3_NONE && ci->conf.service != l->only)
		return;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct svc_circ *sc = realloc(l->sc, cap * sizeof(*sc));
		if (sc == NULL) {
			l->oom = true;
			return;
		}
		l->sc = sc;
		l->cap = cap;
	}
	l->sc[l->n++] = (struct svc_circ){ ci->conf.service, ci->conf.id };
}

static int svc_circ_cmp(const void *a, const void *b)
{
	const struct svc_circ *x = a, *y = b;
	if (x->service != y->service)
		return x->service < y->service ? -1 : 1;
	return x->circuit < y->circuit ? -1 : x->circuit > y->circuit;
}

/* Every counter of a service, and its frozen MACs. */
static json_t *service_stats_json(const struct e3_service_info *si)
{
	json_t *o = json_object();

#define E3_SVC_COUNTER_JSON(name) json_object_set_new(o, #name, json_integer((json_int_t)si->name));
	E3_SVC_COUNTERS(E3_SVC_COUNTER_JSON)
#undef E3_SVC_COUNTER_JSON
	json_object_set_new(o, "frozen", json_integer(si->frozen));
	return o;
}

static void service_list_cb(const struct e3_service_info *si, void *arg)
{
	struct svc_list *l = arg;
	if (l->only != E3_NONE && si->conf->id != l->only)
		return;
	l->found = true;
	json_t *o = e3_obj_json(&e3_service_type, si->conf);
	json_t *circuits = json_array();
	/* first pair of this service, by binary search */
	size_t lo = 0, hi = l->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (l->sc[mid].service < si->conf->id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < l->n && l->sc[i].service == si->conf->id; i++)
		json_array_append_new(circuits, json_integer(l->sc[i].circuit));
	json_object_set_new(o, "circuits", circuits);
	json_object_set_new(o, "macs", json_integer(si->n_macs));
	json_object_set_new(o, "stats", service_stats_json(si));
	e3_jw_json(l->w, NULL, o);
}

static int m_service_list(struct e3_rpc_call *c, void *p)
{
	struct svc_list l = { .w = &c->w, .only = (c->seen & 1) ? ((struct id_params *)p)->id : E3_NONE };
	e3_node_circuit_walk(svc_circ_cb, &l);
	if (l.oom) {
		free(l.sc);
		return e3_rpc_err(c, E3_RPC_INTERNAL_ERROR, "out of memory");
	}
	if (l.n > 1)
		qsort(l.sc, l.n, sizeof(*l.sc), svc_circ_cmp);
	e3_jw_open(&c->w, NULL, '[');
	e3_node_service_walk(service_list_cb, &l);
	e3_jw_close(&c->w, ']');
	free(l.sc);
	if (l.only != E3_NONE && !l.found)
		return e3_rpc_err(c, E3_RPC_NOT_FOUND, "service %u does not exist", l.only);
	return 0;
}

static void circuit_list_cb(const struct e3_circuit_info *ci, void *arg)
{
	json_t *o = e3_obj_json(&e3_circuit_type, &ci->conf);
	json_object_set_new(o, "stats",
			    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "macs", (json_int_t)ci->macs,
				      "announced", (json_int_t)ci->announced,
				      "rx_pkts", (json_int_t)ci->rx_pkts,
				      "rx_bytes", (json_int_t)ci->rx_bytes, "tx_pkts",
				      (json_int_t)ci->tx_pkts, "tx_bytes",
				      (json_int_t)ci->tx_bytes, "limit_hits",
				      (json_int_t)ci->limit_hits));
	e3_jw_json(arg, NULL, o);
}

static int m_circuit_list(struct e3_rpc_call *c, void *p)
{
	(void)p;
	e3_jw_open(&c->w, NULL, '[');
	e3_node_circuit_walk(circuit_list_cb, &c->w);
	e3_jw_close(&c->w, ']');
	return 0;
}

struct label_list {
	struct e3_jw *w;
	uint32_t only;
	bool found;
};

static void label_list_cb(const struct e3_label_info *li, void *arg)
{
	struct label_list *l = arg;
	if (l->only != E3_NONE && li->conf->label != l->only)
		return;
	l->found = true;
	json_t *o = e3_obj_json(&e3_label_type, li->conf);
	json_object_set_new(o, "pkts", json_integer((json_int_t)li->pkts));
	e3_jw_json(l->w, NULL, o);
}

static int m_label_list(struct e3_rpc_call *c, void *p)
{
	struct label_list l = { &c->w, (c->seen & 1) ? ((struct id_params *)p)->id : E3_NONE,
				false };
	e3_jw_open(&c->w, NULL, '[');
	e3_node_label_walk(label_list_cb, &l);
	e3_jw_close(&c->w, ']');
	if (l.only != E3_NONE && !l.found)
		return e3_rpc_err(c, E3_RPC_NOT_FOUND, "label %u has no entry", l.only);
	return 0;
}

/* ---- MAC table ------------------------------------------ */
struct mac_params {
	uint32_t service;
	uint32_t limit;
};
static const struct e3_param mac_list_table[] = {
	E3_P_INT(struct mac_params, service, "service", E3_PT_U32, false, 0, E3_MAX_SERVICES - 1),
	E3_P_INT(struct mac_params, limit, "limit", E3_PT_U32, false, 1, UINT32_MAX),
};
static const struct e3_obj_type mac_list_params = {
	.what = "params", .params = mac_list_table, .n_params = 2, .size = sizeof(struct mac_params),
};
static const struct e3_obj_type mac_flush_params = {
	.what = "params", .params = mac_list_table, .n_params = 1, .size = sizeof(struct mac_params),
};

struct mac_list {
	struct e3_jw *w;
	uint64_t left;
};

static void mac_list_cb(const struct e3_mac_info *m, void *arg)
{
	struct mac_list *l = arg;
	if (l->left == 0)
		return;
	l->left--;
	json_t *o = json_pack("{s:I, s:o}", "service", (json_int_t)m->service, "mac",
			      e3_mac_json(m->mac));
	if (m->remote)
		json_object_set_new(o, "source", json_integer(m->source));
	else
		json_object_set_new(o, "circuit", json_integer(m->circuit));
	json_object_set_new(o, "age_s", json_integer(m->age_s));
	if (m->frozen_s)
		json_object_set_new(o, "frozen_s", json_integer(m->frozen_s));
	e3_jw_json(l->w, NULL, o);
}

struct find_service {
	uint32_t id;
	bool found;
};

static void find_service_cb(const struct e3_service_info *s, void *arg)
{
	struct find_service *f = arg;
	f->found |= s->conf->id == f->id;
}

/* A filter naming a service that does not exist is an error, not an empty list. */
static int check_service(struct e3_rpc_call *c, uint32_t id)
{
	struct find_service f = { id, false };
	if (id == E3_NONE)
		return 0;
	e3_node_service_walk(find_service_cb, &f);
	if (!f.found)
		return e3_rpc_err(c, E3_RPC_NOT_FOUND, "service %u does not exist", id);
	return 0;
}

static int m_mac_list(struct e3_rpc_call *c, void *p)
{
	const struct mac_params *mp = p;
	uint32_t svc = (c->seen & 1) ? mp->service : E3_NONE;
	if (check_service(c, svc) < 0)
		return -1;
	struct mac_list l = { &c->w, (c->seen & 2) ? mp->limit : UINT64_MAX };
	e3_jw_open(&c->w, NULL, '[');
	e3_node_mac_walk(svc, mac_list_cb, &l);
	e3_jw_close(&c->w, ']');
	return 0;
}

static int m_mac_flush(struct e3_rpc_call *c, void *p)
{
	const struct mac_params *mp = p;
	uint32_t svc = (c->seen & 1) ? mp->service : E3_NONE;
	char err[E3_ERRLEN] = "";
	if (check_service(c, svc) < 0)
		return -1;
	int rc = e3_node_mac_flush(svc, err);
	if (rc < 0)
		return e3_rpc_node_err(c, rc, err);
	return result(c, json_pack("{s:i}", "flushed", rc));
}

/* ---- counters ------------------------------------------ */
static void stats_port_cb(const struct e3_port_info *p, void *arg)
{
	e3_jw_json(arg, p->conf.name, port_stats_json(p));
}

static void stats_service_cb(const struct e3_service_info *si, void *arg)
{
	char key[16];
	snprintf(key, sizeof(key), "%u", si->conf->id);
	json_t *o = service_stats_json(si);

	json_object_set_new(o, "macs", json_integer(si->n_macs));
	e3_jw_json(arg, key, o);
}

static json_t *worker_json(int idx)
{
	struct e3_worker_info *wi = malloc(sizeof(*wi));
	if (wi == NULL || e3_node_worker_get(idx, wi) < 0) {
		free(wi);
		return NULL;
	}
	json_t *q = json_array();
	for (int i = 0; i < wi->n_queues; i++)
		json_array_append_new(q, json_pack("{s:s, s:i}", "port", wi->queues[i].port,
						   "queue", wi->queues[i].queue));
	json_t *o = json_pack("{s:i, s:i, s:I, s:I, s:I, s:I, s:o}", "index", idx, "lcore",
			      wi->lcore, "polls", (json_int_t)wi->polls, "busy_polls",
			      (json_int_t)wi->busy_polls, "idle_sleeps",
			      (json_int_t)wi->idle_sleeps, "rx_pkts", (json_int_t)wi->rx_pkts,
			      "queues", q);
	free(wi);
	return o;
}

static int m_stats_get(struct e3_rpc_call *c, void *p)
{
	(void)p;
	uint64_t drops[E3_DROP_MAX];
	e3_node_drops_total(drops);
	e3_jw_open(&c->w, NULL, '{');
	e3_jw_open(&c->w, "ports", '{');
	e3_node_port_walk(stats_port_cb, &c->w);
	e3_jw_close(&c->w, '}');
	e3_jw_json(&c->w, "drops", drops_json(drops));
	e3_jw_open(&c->w, "workers", '[');
	for (int i = 0; i < e3_node_worker_count(); i++) {
		json_t *w = worker_json(i);
		if (w != NULL)
			e3_jw_json(&c->w, NULL, w);
	}
	e3_jw_close(&c->w, ']');
	e3_jw_open(&c->w, "services", '{');
	e3_node_service_walk(stats_service_cb, &c->w);
	e3_jw_close(&c->w, '}');
	e3_jw_close(&c->w, '}');
	return 0;
}

static int m_stats_clear(struct e3_rpc_call *c, void *p)
{
	(void)p;
	e3_node_stats_clear();
	return result_empty(c);
}

/* ---- runtime profile (pipeline/runtime.h) ------------------------------------------ */
static json_t *rt_json(const struct e3_rt_ctr *c)
{
	return json_pack("{s:I, s:I, s:I}", "calls", (json_int_t)c->calls, "frames",
			 (json_int_t)c->frames, "cycles", (json_int_t)e3_rt_cycles(c));
}

struct rt_ports {
	const struct e3_runtime *rt;
	json_t *out;
};

static void rt_port_cb(const struct e3_port_info *p, void *arg)
{
	struct rt_ports *r = arg;
	json_t *o = json_pack("{s:s, s:o, s:o}", "port", p->conf.name,
			      "rx", rt_json(&r->rt->rx[p->dpdk_port_id]),
			      "tx", rt_json(&r->rt->tx[p->dpdk_port_id]));

	json_array_append_new(r->out, o);
}

#define STALL_NAME(name, us) name,
static const char *const stall_names[E3_STALL_BUCKETS] = { E3_STALL_OVER(STALL_NAME) };
#undef STALL_NAME

static int m_runtime_get(struct e3_rpc_call *c, void *p)
{
	(void)p;
	struct e3_runtime *rt = malloc(sizeof(*rt));

	if (rt == NULL)
		return e3_rpc_err(c, E3_RPC_INTERNAL_ERROR, "out of memory");
	e3_jw_open(&c->w, NULL, '{');
	e3_jw_json(&c->w, "tsc_hz", json_integer((json_int_t)rte_get_tsc_hz()));
	e3_jw_open(&c->w, "workers", '[');
	for (int i = 0; i < e3_node_worker_count(); i++) {
		if (e3_node_runtime_get(i, rt) < 0)
			continue;
		json_t *stages = json_array();

		for (int s = 0; s < E3_STAGE_MAX; s++) {
			json_t *o = rt_json(&rt->stage[s]);

			json_object_set_new(o, "stage", json_string(e3_stage_names[s]));
			json_array_append_new(stages, o);
		}
		struct rt_ports ports = { rt, json_array() };

		e3_node_port_walk(rt_port_cb, &ports);
		json_t *stalls = json_pack("{s:I}", "cycles", (json_int_t)rt->stall_cycles);

		for (int k = 0; k < E3_STALL_BUCKETS; k++)
			json_object_set_new(stalls, stall_names[k], json_integer((json_int_t)rt->stalls[k]));
		e3_jw_json(&c->w, NULL, json_pack("{s:i, s:I, s:I, s:{s:I, s:I}, s:o, s:o, s:o, s:o}",
						 "index", i,
						 "busy_cycles", (json_int_t)rt->busy_cycles,
						 "idle_cycles", (json_int_t)rt->idle_cycles,
						 "clock", "core_cycles", (json_int_t)rt->clock_core,
						 "tsc_cycles", (json_int_t)rt->clock_tsc,
						 "stalls", stalls,
						 "timers", rt_json(&rt->timers), "stages", stages,
						 "ports", ports.out));
	}
	free(rt);
	e3_jw_close(&c->w, ']');
	e3_jw_close(&c->w, '}');
	return 0;
}

struct runtime_clear_params {
	uint32_t sample;
};
static const struct e3_param runtime_clear_table[] = {
	E3_P_INT(struct runtime_clear_params, sample, "sample", E3_PT_U32, false, 1, E3_RT_SAMPLE_MAX),
};
static const struct e3_obj_type runtime_clear_params = {
	.what = "params", .params = runtime_clear_table, .n_params = 1,
	.size = sizeof(struct runtime_clear_params),
};

static int m_runtime_clear(struct e3_rpc_call *c, void *p)
{
	const struct runtime_clear_params *rp = p;
	char err[E3_ERRLEN] = "";
	int rc = e3_node_runtime_clear((c->seen & 1) ? rp->sample : E3_RT_SAMPLE, err);

	if (rc < 0)
		return e3_rpc_node_err(c, rc, err);
	return result_empty(c);
}

/* ---- pseudowire ping and trace (pipeline/pwoam.h) ------------------------------------------ */
static const struct e3_param pw_ping_table[] = {
	E3_P_INT(struct e3_pw_ping, service, "service", E3_PT_U32, true, 0, E3_MAX_SERVICES - 1),
	E3_P_INT(struct e3_pw_ping, source, "source", E3_PT_U16, false, 0, E3_MAX_REMOTES - 1),
	E3_P_INT(struct e3_pw_ping, ttl, "ttl", E3_PT_U8, false, 1, 255),
	E3_P_INT(struct e3_pw_ping, handle, "handle", E3_PT_U32, true, 0, UINT32_MAX),
	E3_P_INT(struct e3_pw_ping, seq, "seq", E3_PT_U32, false, 0, UINT32_MAX),
};
static const struct e3_obj_type pw_ping_params = {
	.what = "params", .params = pw_ping_table, .n_params = 5, .size = sizeof(struct e3_pw_ping),
};

static int m_pw_ping(struct e3_rpc_call *c, void *p)
{
	char err[E3_ERRLEN] = "";
	int rc = e3_node_pw_ping(p, err);

	if (rc < 0)
		return e3_rpc_node_err(c, rc, err);
	return result_empty(c);
}

struct pw_oam_log_params {
	uint32_t since;
};
static const struct e3_param pw_oam_log_table[] = {
	E3_P_INT(struct pw_oam_log_params, since, "since", E3_PT_U32, false, 0, UINT32_MAX),
};
static const struct e3_obj_type pw_oam_log_params = {
	.what = "params", .params = pw_oam_log_table, .n_params = 1, .size = sizeof(struct pw_oam_log_params),
};

static void pw_oam_event_cb(uint64_t index, const struct e3_pwoam_event *ev, void *arg)
{
	json_t *o = json_pack("{s:I, s:s, s:I, s:I, s:I, s:i, s:I}", "index", (json_int_t)index,
			      "kind", e3_pwoam_kind_names[ev->kind], "handle", (json_int_t)ev->handle,
			      "seq", (json_int_t)ev->seq, "time_ns", (json_int_t)ev->time_ns,
			      "ttl", ev->ttl, "label_in", (json_int_t)ev->label_in);

	if (ev->service != E3_NONE)
		json_object_set_new(o, "service", json_integer(ev->service));
	if (ev->source)
		json_object_set_new(o, "source", json_integer(ev->source));
	if (ev->label_out)
		json_object_set_new(o, "label_out", json_integer(ev->label_out));
	if (ev->kind == E3_PWOAM_REPLY) {
		json_object_set_new(o, "rtt_ns", json_integer(ev->rtt_ns));
		json_object_set_new(o, "return_code", json_integer(ev->rc));
	}
	e3_jw_json(arg, NULL, o);
}

static int m_pw_oam_log(struct e3_rpc_call *c, void *p)
{
	const struct pw_oam_log_params *lp = p;

	e3_jw_open(&c->w, NULL, '{');
	e3_jw_open(&c->w, "events", '[');
	uint64_t last = e3_node_pwoam_walk((c->seen & 1) ? lp->since : 0, pw_oam_event_cb, &c->w);
	e3_jw_close(&c->w, ']');
	e3_jw_json(&c->w, "last", json_integer((json_int_t)last));
	e3_jw_close(&c->w, '}');
	return 0;
}

/* ---- packet trace ------------------------------------------ */
struct trace_params {
	uint32_t count;
	char port[32];
	uint16_t vlan;
	uint32_t label;
};
static const struct e3_param trace_start_table[] = {
	E3_P_INT(struct trace_params, count, "count", E3_PT_U32, true, 1, 1024),
	E3_P_STR(struct trace_params, port, "port", false, 1),
	E3_P(struct trace_params, vlan, "vlan", E3_PT_VLAN, false),
	E3_P_INT(struct trace_params, label, "label", E3_PT_U32, false, 0, E3_LABEL_SPACE - 1),
};
static const struct e3_obj_type trace_start_params = {
	.what = "params", .params = trace_start_table, .n_params = 4, .size = sizeof(struct trace_params),
};

static int m_trace_start(struct e3_rpc_call *c, void *p)
{
	const struct trace_params *tp = p;
	struct e3_trace_filter f = { .vlan = -1, .label = -1 };
	char err[E3_ERRLEN] = "";
	if (c->seen & 2)
		snprintf(f.port, sizeof(f.port), "%s", tp->port);
	if (c->seen & 4)
		f.vlan = tp->vlan;
	if (c->seen & 8)
		f.label = tp->label;
	int rc = e3_node_trace_start(&f, tp->count, err);
	return rc < 0 ? e3_rpc_node_err(c, rc, err) : result_empty(c);
}

struct trace_get_params {
	int format; /* 0 text, 1 pcap */
};
static const char *const trace_formats[] = { "text", "pcap", NULL };
static const struct e3_param trace_get_table[] = {
	E3_P_ENUM(struct trace_get_params, format, "format", false, trace_formats),
};
static const struct e3_obj_type trace_get_params = {
	.what = "params", .params = trace_get_table, .n_params = 1, .size = sizeof(struct trace_get_params),
};

static void trace_text_cb(const struct e3_trace_record *r, void *arg)
{
	json_t *o = json_pack("{s:I, s:I, s:s, s:i, s:i, s:s, s:s}", "seq", (json_int_t)r->seq,
			      "time_ns", (json_int_t)r->tsc_ns, "rx_port", r->rx_port, "len",
			      r->len, "cap_len", r->cap_len, "path", r->path, "verdict",
			      r->verdict);
	e3_jw_json(arg, NULL, o);
}

/* A classic pcap file (LINKTYPE_ETHERNET) of the trace's frames. */
struct pcap_rec {
	uint32_t ts_sec, ts_usec, incl_len, orig_len;
};

static void trace_pcap_cb(const struct e3_trace_record *r, void *arg)
{
	struct e3_buf *b = arg;
	uint32_t cap = r->cap_len <= sizeof(r->data) ? r->cap_len : sizeof(r->data);
	struct pcap_rec h = { (uint32_t)(r->tsc_ns / 1000000000u),
			      (uint32_t)(r->tsc_ns % 1000000000u / 1000u), cap, r->len };
	e3_buf_add(b, &h, sizeof(h));
	e3_buf_add(b, r->data, cap);
}

static char *base64(const uint8_t *in, size_t n)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;
	if (out == NULL)
		return NULL;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		*o++ = tab[v >> 18 & 63];
		*o++ = tab[v >> 12 & 63];
		*o++ = i + 1 < n ? tab[v >> 6 & 63] : '=';
		*o++ = i + 2 < n ? tab[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

static int m_trace_get(struct e3_rpc_call *c, void *p)
{
	if (((struct trace_get_params *)p)->format == 0) {
		e3_jw_open(&c->w, NULL, '[');
		e3_node_trace_walk(trace_text_cb, &c->w);
		e3_jw_close(&c->w, ']');
		return 0;
	}
	struct e3_buf b = { 0 };
	/* magic, version 2.4, thiszone, sigfigs, snaplen, LINKTYPE_ETHERNET */
	const uint32_t hdr[6] = { 0xa1b2c3d4, 2 | 4u << 16, 0, 0, 65535, 1 };
	e3_buf_add(&b, hdr, sizeof(hdr));
	e3_node_trace_walk(trace_pcap_cb, &b);
	char *s = b.oom ? NULL : base64((const uint8_t *)b.p, b.len);
	size_t frames = 0;
	for (size_t off = sizeof(hdr); s != NULL && off < b.len; frames++) {
		const struct pcap_rec *h = (const void *)(b.p + off);
		off += sizeof(*h) + h->incl_len;
	}
	e3_buf_free(&b);
	if (s == NULL)
		return e3_rpc_err(c, E3_RPC_INTERNAL_ERROR, "out of memory");
	result(c, json_pack("{s:i, s:s}", "count", (int)frames, "pcap_base64", s));
	free(s);
	return 0;
}

/* ---- sFlow sampling ------------------------------------------ */
struct sflow_set_params {
	uint32_t rate;
	char port[32];
};
static const struct e3_param sflow_set_table[] = {
	E3_P_INT(struct sflow_set_params, rate, "rate", E3_PT_U32, true, 0, E3_SFLOW_RATE_MAX),
	E3_P_STR(struct sflow_set_params, port, "port", false, 1),
};
static const struct e3_obj_type sflow_set_params = {
	.what = "params", .params = sflow_set_table, .n_params = 2, .size = sizeof(struct sflow_set_params),
};

static int m_sflow_set(struct e3_rpc_call *c, void *p)
{
	const struct sflow_set_params *sp = p;
	char err[E3_ERRLEN] = "";
	int rc = e3_node_sflow_set((c->seen & 2) ? sp->port : NULL, sp->rate, err);

	return rc < 0 ? e3_rpc_node_err(c, rc, err) : result_empty(c);
}

struct sflow_read_params {
	uint32_t max;
};
static const struct e3_param sflow_read_table[] = {
	E3_P_INT(struct sflow_read_params, max, "max", E3_PT_U32, false, 0, 4096),
};
static const struct e3_obj_type sflow_read_params = {
	.what = "params", .params = sflow_read_table, .n_params = 1, .size = sizeof(struct sflow_read_params),
};

static void sflow_port_cb(const char *name, uint16_t port_id, uint32_t rate, uint64_t pool, uint64_t drops,
			  void *arg)
{
	e3_jw_json(arg, NULL, json_pack("{s:s, s:i, s:I, s:I, s:I}", "port", name, "port_id", port_id,
					"rate", (json_int_t)rate, "pool", (json_int_t)pool,
					"drops", (json_int_t)drops));
}

static void sflow_sample_cb(const struct e3_sflow_sample *s, const char *in, const char *out, void *arg)
{
	char *hdr = base64(s->hdr, s->hdr_len);
	json_t *o = json_pack("{s:I, s:I, s:I, s:i, s:I, s:s}", "rate", (json_int_t)s->rate,
			      "pool", (json_int_t)s->pool, "drops", (json_int_t)s->drops,
			      "outputs", s->outputs, "frame_length", (json_int_t)s->frame_len,
			      "header", hdr ? hdr : "");

	free(hdr);
	if (in != NULL)
		json_object_set_new(o, "in_port", json_string(in));
	if (out != NULL)
		json_object_set_new(o, "out_port", json_string(out));
	if (s->service != E3_NONE)
		json_object_set_new(o, "service", json_integer(s->service));
	e3_jw_json(arg, NULL, o);
}

static int m_sflow_read(struct e3_rpc_call *c, void *p)
{
	unsigned max = (c->seen & 1) ? ((struct sflow_read_params *)p)->max : 1024;

	e3_jw_open(&c->w, NULL, '{');
	e3_jw_json(&c->w, "rate", json_integer(e3_node_sflow_node_rate()));
	e3_jw_open(&c->w, "ports", '[');
	e3_node_sflow_ports(sflow_port_cb, &c->w);
	e3_jw_close(&c->w, ']');
	e3_jw_open(&c->w, "samples", '[');
	e3_node_sflow_read(max, sflow_sample_cb, &c->w);
	e3_jw_close(&c->w, ']');
	e3_jw_close(&c->w, '}');
	return 0;
}

/* ---- the table ------------------------------------------ */
/* The methods and their order come from the schema (rpc_gen.h). */
#define E3_RPC_METHOD(name, fn, params) { name, fn, params },
static const struct e3_rpc_method methods[] = { E3_RPC_METHODS(E3_RPC_METHOD) };
#undef E3_RPC_METHOD

const struct e3_rpc_method *e3_rpc_method_find(const char *name)
{
	for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
		if (strcmp(methods[i].name, name) == 0)
			return &methods[i];
	return NULL;
}
