/* SPDX-License-Identifier: Apache-2.0
 *
 * rpc_config.c - config_dump and config_load: the snapshot and restore of a
 * whole node, in the JSON shape of control/internal/dpconfig (Go).
 *
 * config_load replays the document through the same handlers as the
 * methods (SPDK's json_config model), with no checks of its own:
 *   1. index it: every object must decode with its _add's params table (a
 *      document that does not decode changes nothing); note its ids;
 *   2. add/replace in dependency order: settings, ports, nexthops, bfd
 *      sessions, plain nhlfes, protected nhlfes, ECMP groups, services, circuits,
 *      labels, each through its e3_ctl_*_add, which checks it as it would
 *      for the method (each _add is idempotent, so objects that did not
 *      change are not touched and their traffic never stops); the first
 *      refusal stops the load and names the object;
 *   3. with replace=true, delete what the document does not have, in the
 *      reverse order, so nothing is deleted while still referenced.
 * Counts: an object of the document is "added" if the node did not have
 * it, "replaced" if it had it and the _add changed it (e3_ctl_changed());
 * every delete is "removed".
 *
 * Big tables (a million labels) are handled one object at a time: each
 * object is decoded into one scratch struct in step 1 and again in step 2,
 * rather than holding a million decoded objects.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc.h"
#include "rpc/rpc_int.h"

/* ---- config_dump ------------------------------------------ */
static void dump_port(const struct e3_port_info *p, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_port_type, &p->conf));
}
static void dump_nexthop(const struct e3_nexthop_conf *n, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_nexthop_type, n));
}
static void dump_nhlfe(const struct e3_nhlfe_conf *n, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_nhlfe_type, n));
}
static void dump_ecmp(const struct e3_ecmp_conf *n, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_ecmp_type, n));
}
static void dump_bfd(const struct e3_bfd_info *b, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_bfd_type, &b->conf));
}
static void dump_service(const struct e3_service_info *s, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_service_type, s->conf));
}
static void dump_circuit(const struct e3_circuit_info *c, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_circuit_type, &c->conf));
}
static void dump_label(const struct e3_label_info *l, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_label_type, l->conf));
}

int e3_rpc_config_dump(struct e3_rpc_call *c, void *params)
{
	(void)params;
	e3_config_dump_write(&c->w, NULL);
	return 0;
}

void e3_config_dump_write(struct e3_jw *w, const char *key)
{
	struct e3_settings s;
	e3_ctl_settings_get(&s);
	e3_jw_open(w, key, '{');
	e3_jw_json(w, "version", json_integer(1));
	e3_jw_json(w, "settings", e3_obj_json(&e3_settings_type, &s));
	e3_jw_open(w, "ports", '[');
	e3_ctl_port_walk(dump_port, w);
	e3_jw_close(w, ']');
	e3_jw_open(w, "nexthops", '[');
	e3_ctl_nexthop_walk(dump_nexthop, w);
	e3_jw_close(w, ']');
	e3_jw_open(w, "bfd", '[');
	e3_ctl_bfd_walk(dump_bfd, w);
	e3_jw_close(w, ']');
	e3_jw_open(w, "nhlfes", '[');
	e3_ctl_nhlfe_walk(dump_nhlfe, w);
	e3_jw_close(w, ']');
	e3_jw_open(w, "ecmps", '[');
	e3_ctl_ecmp_walk(dump_ecmp, w);
	e3_jw_close(w, ']');
	e3_jw_open(w, "services", '[');
	e3_ctl_service_walk(dump_service, w);
	e3_jw_close(w, ']');
	e3_jw_open(w, "circuits", '[');
	e3_ctl_circuit_walk(dump_circuit, w);
	e3_jw_close(w, ']');
	e3_jw_open(w, "labels", '[');
	e3_ctl_label_walk(dump_label, w);
	e3_jw_close(w, ']');
	e3_jw_close(w, '}');
}

/* ---- config_load params ------------------------------------------ */
struct load_params {
	int64_t version;
	const json_t *settings, *ports, *nexthops, *bfd, *nhlfes, *ecmps, *services, *circuits, *labels;
	bool replace;
};
static const struct e3_param load_table[] = {
	E3_P_INT(struct load_params, version, "version", E3_PT_I64, true, 1, 1),
	E3_P(struct load_params, settings, "settings", E3_PT_JOBJECT, false),
	E3_P(struct load_params, ports, "ports", E3_PT_JARRAY, false),
	E3_P(struct load_params, nexthops, "nexthops", E3_PT_JARRAY, false),
	E3_P(struct load_params, bfd, "bfd", E3_PT_JARRAY, false),
	E3_P(struct load_params, nhlfes, "nhlfes", E3_PT_JARRAY, false),
	E3_P(struct load_params, ecmps, "ecmps", E3_PT_JARRAY, false),
	E3_P(struct load_params, services, "services", E3_PT_JARRAY, false),
	E3_P(struct load_params, circuits, "circuits", E3_PT_JARRAY, false),
	E3_P(struct load_params, labels, "labels", E3_PT_JARRAY, false),
	E3_P(struct load_params, replace, "replace", E3_PT_BOOL, false),
};
static void load_init(void *p)
{
	((struct load_params *)p)->replace = true;
}
const struct e3_obj_type e3_config_load_params = {
	.what = "params", .params = load_table, .n_params = E3_NPARAMS(load_table),
	.size = sizeof(struct load_params), .init = load_init,
};

/* ---- what the node has: by id, and what references need ---------- */
struct port_ref {
	char name[32];
	enum e3_port_kind kind;
};
struct pv {
	char port[32];
	uint16_t vlan;
};
enum { GONE_EARLY = 0x80 }; /* flag: a circuit deleted early to free its (port, VLAN) */
enum { NHLFE_PLAIN = 1, NHLFE_PROTECTED = 2, NHLFE_ECMP = 3 }; /* snap.nhlfe[] */
struct snap {
	struct port_ref ports[E3_MAX_PORTS];
	int n_ports;
	uint8_t *nexthop, *nhlfe, *service, *circuit, *label; /* by id: 0 = none (service: type) */
	uint8_t *bfd;        /* by session id */
	struct pv *circ_pv;  /* by circuit id */
};

static void snap_free(struct snap *s)
{
	free(s->bfd);
	free(s->nexthop);
	free(s->nhlfe);
	free(s->service);
	free(s->circuit);
	free(s->label);
	free(s->circ_pv);
	memset(s, 0, sizeof(*s));
}

static void snap_port(const struct e3_port_info *p, void *arg)
{
	struct snap *s = arg;
	if (s->n_ports >= E3_MAX_PORTS)
		return;
	struct port_ref *r = &s->ports[s->n_ports++];
	snprintf(r->name, sizeof(r->name), "%s", p->conf.name);
	r->kind = p->conf.kind;
}
static void snap_nexthop(const struct e3_nexthop_conf *n, void *arg)
{
	struct snap *s = arg;
	if (n->id < E3_MAX_NEXTHOPS)
		s->nexthop[n->id] = 1;
}
static void snap_bfd(const struct e3_bfd_info *b, void *arg)
{
	((struct snap *)arg)->bfd[b->conf.id] = 1;
}
static void snap_nhlfe(const struct e3_nhlfe_conf *n, void *arg)
{
	struct snap *s = arg;
	if (n->id < E3_MAX_NHLFES)
		s->nhlfe[n->id] = n->protect ? NHLFE_PROTECTED : NHLFE_PLAIN;
}
static void snap_ecmp(const struct e3_ecmp_conf *n, void *arg)
{
	((struct snap *)arg)->nhlfe[n->id] = NHLFE_ECMP;
}
static void snap_service(const struct e3_service_info *si, void *arg)
{
	struct snap *s = arg;
	if (si->conf->id < E3_MAX_SERVICES)
		s->service[si->conf->id] = (uint8_t)si->conf->type;
}
static void snap_circuit(const struct e3_circuit_info *ci, void *arg)
{
	struct snap *s = arg;
	if (ci->conf.id < E3_MAX_CIRCUITS) {
		s->circuit[ci->conf.id] = 1;
		snprintf(s->circ_pv[ci->conf.id].port, 32, "%s", ci->conf.port);
		s->circ_pv[ci->conf.id].vlan = ci->conf.vlan;
	}
}
static void snap_label(const struct e3_label_info *li, void *arg)
{
	struct snap *s = arg;
	if (li->conf->label < E3_LABEL_SPACE)
		s->label[li->conf->label] = 1;
}

static int snap_take(struct snap *s)
{
	memset(s, 0, sizeof(*s));
	s->bfd = calloc(E3_MAX_SESSIONS, 1);
	s->nexthop = calloc(E3_MAX_NEXTHOPS, 1);
	s->nhlfe = calloc(E3_MAX_NHLFES, 1);
	s->service = calloc(E3_MAX_SERVICES, 1);
	s->circuit = calloc(E3_MAX_CIRCUITS, 1);
	s->label = calloc(E3_LABEL_SPACE, 1);
	s->circ_pv = calloc(E3_MAX_CIRCUITS, sizeof(struct pv));
	if (!s->bfd || !s->nexthop || !s->nhlfe || !s->service || !s->circuit || !s->label || !s->circ_pv) {
		snap_free(s);
		return -1;
	}
	e3_ctl_port_walk(snap_port, s);
	e3_ctl_nexthop_walk(snap_nexthop, s);
	e3_ctl_bfd_walk(snap_bfd, s);
	e3_ctl_nhlfe_walk(snap_nhlfe, s);
	e3_ctl_ecmp_walk(snap_ecmp, s);
	e3_ctl_service_walk(snap_service, s);
	e3_ctl_circuit_walk(snap_circuit, s);
	e3_ctl_label_walk(snap_label, s);
	return 0;
}

/* ---- the document's view: which ids it has ------------------------------------------ */
struct doc {
	struct port_ref ports[E3_MAX_PORTS];
	int n_ports;
	uint8_t *nexthop, *nhlfe, *service, *circuit, *label; /* 1 (service: type) if present */
	uint8_t *bfd;
	uint32_t *pv_owner;  /* (port index, vlan) -> circuit id + 1 */
};
/* (port slot, VLAN) keys: document ports, then node ports (replace=false) */
#define PV_SLOTS (2 * E3_MAX_PORTS * (E3_VLAN_UNTAGGED + 1))

static void doc_free(struct doc *d)
{
	free(d->bfd);
	free(d->nexthop);
	free(d->nhlfe);
	free(d->service);
	free(d->circuit);
	free(d->label);
	free(d->pv_owner);
}

static int doc_alloc(struct doc *d)
{
	memset(d, 0, sizeof(*d));
	d->bfd = calloc(E3_MAX_SESSIONS, 1);
	d->nexthop = calloc(E3_MAX_NEXTHOPS, 1);
	d->nhlfe = calloc(E3_MAX_NHLFES, 1);
	d->service = calloc(E3_MAX_SERVICES, 1);
	d->circuit = calloc(E3_MAX_CIRCUITS, 1);
	d->label = calloc(E3_LABEL_SPACE, 1);
	d->pv_owner = calloc(PV_SLOTS, sizeof(uint32_t));
	if (!d->bfd || !d->nexthop || !d->nhlfe || !d->service || !d->circuit || !d->label ||
	    !d->pv_owner) {
		doc_free(d);
		return -1;
	}
	return 0;
}

/* ---- the load ------------------------------------------ */
struct load {
	struct e3_rpc_call *c;
	const struct load_params *p;
	struct snap before;
	struct doc doc;
	void *scratch; /* one decoded object of any type */
	json_int_t added, replaced, removed;
};

static int find_port(const struct port_ref *r, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(r[i].name, name) == 0)
			return i;
	return -1;
}

/* The (port, VLAN) key space: document ports first, then the node's. */
static uint32_t *pv_owner(struct load *l, const char *port, uint16_t vlan)
{
	int slot = find_port(l->doc.ports, l->doc.n_ports, port);
	if (slot < 0 && !l->p->replace) {
		slot = find_port(l->before.ports, l->before.n_ports, port);
		if (slot >= 0)
			slot += E3_MAX_PORTS;
	}
	if (slot < 0)
		return NULL;
	return &l->doc.pv_owner[(size_t)slot * (E3_VLAN_UNTAGGED + 1) + vlan];
}

/* Decode element i of a section into scratch; where = "ports[3]". */
static int decode_elem(struct load *l, const struct e3_obj_type *t, const json_t *arr,
		       const char *section, size_t i, char *where, size_t wlen)
{
	char prefix[80];
	snprintf(where, wlen, "%s[%zu]", section, i);
	snprintf(prefix, sizeof(prefix), "%.70s.", where);
	if (e3_obj_decode(t, json_array_get(arr, i), l->scratch, NULL, prefix, l->c->msg,
			  sizeof(l->c->msg)) < 0) {
		l->c->code = E3_RPC_INVALID_PARAMS;
		return -1;
	}
	return 0;
}

/* Index the document: decode every object with its _add's table, note
 * which ids it has (what replace=true keeps) and which circuit takes each
 * (port, VLAN) (what must be freed first). Only decoding can fail here;
 * everything else is the _add handlers' to check as the objects are
 * replayed. */
static int index_doc(struct load *l)
{
	const struct load_params *p = l->p;
	char where[64];
	size_t i;

	if (p->settings != NULL) {
		struct e3_settings s;
		if (e3_obj_decode(&e3_settings_type, p->settings, &s, NULL, "settings.",
				  l->c->msg, sizeof(l->c->msg)) < 0)
			return l->c->code = E3_RPC_INVALID_PARAMS, -1;
	}
	for (i = 0; i < json_array_size(p->ports); i++) {
		if (decode_elem(l, &e3_port_type, p->ports, "ports", i, where, sizeof(where)) < 0)
			return -1;
		const struct e3_port_conf *c = &((struct e3_port_req *)l->scratch)->conf;
		if (find_port(l->doc.ports, l->doc.n_ports, c->name) >= 0 || l->doc.n_ports >= E3_MAX_PORTS)
			continue;
		struct port_ref *r = &l->doc.ports[l->doc.n_ports++];
		snprintf(r->name, sizeof(r->name), "%s", c->name);
		r->kind = c->kind;
	}
#define INDEX(arr, section, type, conf_t, key, ids)                                          \
	for (i = 0; i < json_array_size(arr); i++) {                                         \
		if (decode_elem(l, type, arr, section, i, where, sizeof(where)) < 0)         \
			return -1;                                                           \
		(ids)[((const conf_t *)l->scratch)->key] = 1;                                \
	}
	INDEX(p->nexthops, "nexthops", &e3_nexthop_type, struct e3_nexthop_conf, id, l->doc.nexthop);
	INDEX(p->bfd, "bfd", &e3_bfd_type, struct e3_bfd_conf, id, l->doc.bfd);
	INDEX(p->nhlfes, "nhlfes", &e3_nhlfe_type, struct e3_nhlfe_conf, id, l->doc.nhlfe);
	INDEX(p->ecmps, "ecmps", &e3_ecmp_type, struct e3_ecmp_conf, id, l->doc.nhlfe);
	INDEX(p->services, "services", &e3_service_type, struct e3_service_conf, id, l->doc.service);
	INDEX(p->labels, "labels", &e3_label_type, struct e3_label_conf, label, l->doc.label);
#undef INDEX
	for (i = 0; i < json_array_size(p->circuits); i++) {
		if (decode_elem(l, &e3_circuit_type, p->circuits, "circuits", i, where,
				sizeof(where)) < 0)
			return -1;
		const struct e3_circuit_conf *c = l->scratch;
		l->doc.circuit[c->id] = 1;
		uint32_t *owner = pv_owner(l, c->port, c->vlan);
		if (owner != NULL && *owner == 0)
			*owner = c->id + 1;
	}
	return 0;
}

/* ---- apply ------------------------------------------ */
static int applied_err(struct load *l, const char *where, int rc, const char *err)
{
	return e3_rpc_err(l->c, e3_rpc_code_of(rc),
			  "%s: %s (objects before it were applied; the node is partly updated)",
			  where, err);
}

static void count_add(struct load *l, bool existed)
{
	if (!existed)
		l->added++;
	else if (e3_ctl_changed())
		l->replaced++;
}

/* Add every object of a section; existed: whether the node had it before. */
#define APPLY_SECTION(arr, section, type, call, existed)                                    \
	for (size_t i = 0; i < json_array_size(arr); i++) {                                  \
		char where[64];                                                              \
		if (decode_elem(l, type, arr, section, i, where, sizeof(where)) < 0)        \
			return -1;                                                           \
		int rc = call;                                                               \
		if (rc < 0)                                                                  \
			return applied_err(l, where, rc, err);                               \
		count_add(l, existed);                                                       \
	}
#define SCRATCH(t) ((const t *)l->scratch)

#define REMOVE_UNLISTED(had, in_doc, n, del_fn, what)                                       \
	for (uint32_t id = 0; id < (n); id++) {                                              \
		if (!(had)[id] || ((had)[id] & GONE_EARLY) || (in_doc)[id])                   \
			continue;                                                            \
		int rc = del_fn(id, err);                                                    \
		if (rc < 0) {                                                                \
			char where[64];                                                      \
			snprintf(where, sizeof(where), "removing " what " %u", id);          \
			return applied_err(l, where, rc, err);                               \
		}                                                                            \
		l->removed++;                                                                \
	}

/* Plain nhlfes first, then the protected ones that refer to them. */
static int apply_nhlfes(struct load *l, bool protect, char *err)
{
	for (size_t i = 0; i < json_array_size(l->p->nhlfes); i++) {
		char where[64];
		if (decode_elem(l, &e3_nhlfe_type, l->p->nhlfes, "nhlfes", i, where, sizeof(where)) < 0)
			return -1;
		const struct e3_nhlfe_conf *c = l->scratch;
		if (c->protect != protect)
			continue;
		int rc = e3_ctl_nhlfe_add(c, err);
		if (rc < 0)
			return applied_err(l, where, rc, err);
		count_add(l, l->before.nhlfe[c->id]);
	}
	return 0;
}

/* The nhlfes of one kind the document does not list: groups go before the
 * protected ones, and those before the plain ones they refer to. */
static int remove_nhlfes(struct load *l, uint8_t kind, char *err)
{
	for (uint32_t id = 0; id < E3_MAX_NHLFES; id++) {
		if (l->before.nhlfe[id] != kind || l->doc.nhlfe[id])
			continue;
		int rc = kind == NHLFE_ECMP ? e3_ctl_ecmp_del(id, err) : e3_ctl_nhlfe_del(id, err);
		if (rc < 0) {
			char where[64];
			snprintf(where, sizeof(where), "removing nhlfe %u", id);
			return applied_err(l, where, rc, err);
		}
		l->removed++;
	}
	return 0;
}

static int apply(struct load *l)
{
	const struct load_params *p = l->p;
	char err[E3_ERRLEN] = "";

	if (p->settings != NULL) {
		struct e3_settings in, s;
		uint64_t seen = 0;
		e3_obj_decode(&e3_settings_type, p->settings, &in, &seen, "settings.", l->c->msg,
			      sizeof(l->c->msg));
		e3_ctl_settings_get(&s);
		e3_settings_merge(&s, &in, seen);
		int rc = e3_ctl_settings_set(&s, err);
		if (rc < 0)
			return applied_err(l, "settings", rc, err);
		count_add(l, true);
	}
	const struct e3_port_conf *port = &((struct e3_port_req *)l->scratch)->conf;
	APPLY_SECTION(p->ports, "ports", &e3_port_type, e3_ctl_port_add(port, err),
		      find_port(l->before.ports, l->before.n_ports, port->name) >= 0);
	APPLY_SECTION(p->nexthops, "nexthops", &e3_nexthop_type,
		      e3_ctl_nexthop_add(l->scratch, err),
		      l->before.nexthop[SCRATCH(struct e3_nexthop_conf)->id]);
	APPLY_SECTION(p->bfd, "bfd", &e3_bfd_type, e3_ctl_bfd_add(l->scratch, err),
		      l->before.bfd[SCRATCH(struct e3_bfd_conf)->id]);
	if (apply_nhlfes(l, false, err) < 0 || apply_nhlfes(l, true, err) < 0)
		return -1;
	APPLY_SECTION(p->ecmps, "ecmps", &e3_ecmp_type, e3_ctl_ecmp_add(l->scratch, err),
		      l->before.nhlfe[SCRATCH(struct e3_ecmp_conf)->id]);
	APPLY_SECTION(p->services, "services", &e3_service_type,
		      e3_ctl_service_add(l->scratch, err),
		      l->before.service[SCRATCH(struct e3_service_conf)->id]);
	/* A (port, VLAN) the document gives to another circuit id is freed first:
	 * its old circuit is either moving elsewhere in the document or going. */
	for (uint32_t id = 0; id < E3_MAX_CIRCUITS; id++) {
		if (!l->before.circuit[id])
			continue;
		const struct pv *pv = &l->before.circ_pv[id];
		uint32_t *o = pv_owner(l, pv->port, pv->vlan);
		uint32_t owner = o != NULL ? *o : 0;
		if (owner && owner - 1 != id) {
			int rc = e3_ctl_circuit_del(id, err);
			if (rc < 0)
				return applied_err(l, "freeing a circuit's port and VLAN", rc, err);
			l->before.circuit[id] = GONE_EARLY;
			if (!l->doc.circuit[id])
				l->removed++;
		}
	}
	APPLY_SECTION(p->circuits, "circuits", &e3_circuit_type,
		      e3_ctl_circuit_add(l->scratch, err),
		      l->before.circuit[SCRATCH(struct e3_circuit_conf)->id]);
	APPLY_SECTION(p->labels, "labels", &e3_label_type, e3_ctl_label_add(l->scratch, err),
		      l->before.label[SCRATCH(struct e3_label_conf)->label]);

	if (!p->replace)
		return 0;
	REMOVE_UNLISTED(l->before.label, l->doc.label, E3_LABEL_SPACE, e3_ctl_label_del, "label");
	REMOVE_UNLISTED(l->before.circuit, l->doc.circuit, E3_MAX_CIRCUITS, e3_ctl_circuit_del,
			"circuit");
	REMOVE_UNLISTED(l->before.service, l->doc.service, E3_MAX_SERVICES, e3_ctl_service_del,
			"service");
	if (remove_nhlfes(l, NHLFE_ECMP, err) < 0 || remove_nhlfes(l, NHLFE_PROTECTED, err) < 0 ||
	    remove_nhlfes(l, NHLFE_PLAIN, err) < 0)
		return -1;
	REMOVE_UNLISTED(l->before.bfd, l->doc.bfd, E3_MAX_SESSIONS, e3_ctl_bfd_del, "bfd session");
	REMOVE_UNLISTED(l->before.nexthop, l->doc.nexthop, E3_MAX_NEXTHOPS, e3_ctl_nexthop_del,
			"nexthop");
	for (int i = 0; i < l->before.n_ports; i++) {
		const char *name = l->before.ports[i].name;
		if (find_port(l->doc.ports, l->doc.n_ports, name) >= 0)
			continue;
		int rc = e3_ctl_port_del(name, err);
		if (rc < 0) {
			char where[64];
			snprintf(where, sizeof(where), "removing port '%s'", name);
			return applied_err(l, where, rc, err);
		}
		l->removed++;
	}
	return 0;
}

int e3_rpc_config_load(struct e3_rpc_call *c, void *params)
{
	struct load l = { .c = c, .p = params };
	int rc = -1;

	size_t scratch = sizeof(struct e3_service_conf);
	if (scratch < sizeof(struct e3_label_conf))
		scratch = sizeof(struct e3_label_conf);
	if (scratch < sizeof(struct e3_port_req))
		scratch = sizeof(struct e3_port_req);
	l.scratch = malloc(scratch);
	if (l.scratch == NULL || snap_take(&l.before) < 0) {
		free(l.scratch);
		return e3_rpc_err(c, E3_RPC_INTERNAL_ERROR, "out of memory");
	}
	if (doc_alloc(&l.doc) < 0) {
		e3_rpc_err(c, E3_RPC_INTERNAL_ERROR, "out of memory");
		goto out;
	}
	if (index_doc(&l) < 0 || apply(&l) < 0)
		goto out_doc;
	e3_jw_json(&c->w, NULL,
		   json_pack("{s:I, s:I, s:I}", "added", l.added, "replaced", l.replaced,
			     "removed", l.removed));
	rc = 0;
out_doc:
	doc_free(&l.doc);
out:
	snap_free(&l.before);
	free(l.scratch);
	return rc;
}

void e3_rpc_config_load_doc(const json_t *doc, struct e3_rpc_call *c)
{
	e3_rpc_invoke(e3_rpc_config_load, &e3_config_load_params, doc, c);
}

int e3_rpc_load_file(const char *path, char *err)
{
	json_error_t jerr;
	json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (doc == NULL) {
		snprintf(err, E3_ERRLEN, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
		return -1;
	}
	struct e3_buf out = { 0 };
	struct e3_rpc_call call = { .w = { .b = &out } };
	e3_rpc_config_load_doc(doc, &call);
	json_decref(doc);
	/* A big document's tree is freed, but glibc keeps the heap: give it
	 * back (a 1M-label file left ~1 GB resident). */
	malloc_trim(0);
	if (call.code == 0 && out.oom)
		e3_rpc_err(&call, E3_RPC_INTERNAL_ERROR, "out of memory");
	if (call.code != 0)
		snprintf(err, E3_ERRLEN, "%.80s: %.170s", path, call.msg);
	e3_buf_free(&out);
	return call.code != 0 ? -1 : 0;
}
