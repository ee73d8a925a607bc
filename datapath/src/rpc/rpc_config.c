/* SPDX-License-Identifier: Apache-2.0
 *
 * rpc_config.c - config_dump and config_load: the snapshot and restore of a
 * whole node, in the JSON shape of control/internal/dpconfig (Go).
 *
 * config_load replays the document through the same handlers as the
 * methods (SPDK's json_config model), with no checks of its own:
 *   1. index it: every object must decode with its _add's params table (a
 *      document that does not decode changes nothing); note its ids;
 *   2. add/replace the settings, then kind by kind in dependency order
 *      (E3_CONFIG_KINDS, generated from the schema's order), each object
 *      through its e3_node_*_add, which checks it as it would for the
 *      method (each _add is idempotent, so objects that did not change are
 *      not touched and their traffic never stops); the first refusal stops
 *      the load and names the object;
 *   3. with replace=true, delete what the document does not have, in the
 *      reverse order, so nothing is deleted while still referenced.
 * Counts: an object of the document is "added" if the node did not have
 * it, "replaced" if it had it and the _add changed it (e3_node_changed());
 * every delete is "removed".
 *
 * Each kind's part (dump, snapshot, index, apply, remove) sits in its own
 * section below; the passes loop over the kinds.
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

/* ---- the load's state ------------------------------------------ */
enum kind {
#define KIND_ENUM(obj, list, space) K_##obj,
	E3_CONFIG_KINDS(KIND_ENUM)
#undef KIND_ENUM
	N_KINDS
};
static const uint32_t key_space[N_KINDS] = {
#define KIND_SPACE(obj, list, space) [K_##obj] = space,
	E3_CONFIG_KINDS(KIND_SPACE)
#undef KIND_SPACE
};

/* config_load's params: the settings and a list per kind. */
struct load_params {
	int64_t version;
	const json_t *settings;
#define KIND_LIST(obj, list, space) const json_t *list;
	E3_CONFIG_KINDS(KIND_LIST)
#undef KIND_LIST
	bool replace;
};
static const struct e3_param load_table[] = {
	E3_P_INT(struct load_params, version, "version", E3_PT_I64, true, 1, 1),
	E3_P(struct load_params, settings, "settings", E3_PT_JOBJECT, false),
#define KIND_PARAM(obj, list, space) E3_P(struct load_params, list, #list, E3_PT_JARRAY, false),
	E3_CONFIG_KINDS(KIND_PARAM)
#undef KIND_PARAM
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

struct port_ref {
	char name[32];
	enum e3_port_kind kind;
};
struct pv {
	char port[32];
	uint16_t vlan;
};
enum { GONE_EARLY = 0x80 }; /* flag: a circuit deleted early to free its (port, VLAN) */
enum { NHLFE_PLAIN = 1, NHLFE_PROTECTED = 2 };   /* nhlfe keys: which form */

/* What the node had before the load, or what the document lists: by kind
 * and key, nonzero if present (ports by name). */
struct keys {
	uint8_t *of[N_KINDS];          /* NULL for kinds keyed by name */
	struct port_ref ports[E3_MAX_PORTS];
	int n_ports;
};

static void keys_free(struct keys *k)
{
	for (int i = 0; i < N_KINDS; i++)
		free(k->of[i]);
}

static int keys_alloc(struct keys *k)
{
	memset(k, 0, sizeof(*k));
	for (int i = 0; i < N_KINDS; i++)
		if (key_space[i] && (k->of[i] = calloc(key_space[i], 1)) == NULL) {
			keys_free(k);
			return -1;
		}
	return 0;
}

static void keys_mark(struct keys *k, enum kind kind, uint32_t key, uint8_t v)
{
	if (key < key_space[kind])
		k->of[kind][key] = v;
}

struct load {
	struct e3_rpc_call *c;
	const struct load_params *p;
	struct keys before, doc;
	struct pv *circ_pv;    /* by circuit id: the (port, VLAN) it had before */
	uint32_t *pv_owner;    /* (port slot, VLAN) -> the document's circuit id + 1 */
	void *scratch;         /* one decoded object of any type */
	json_int_t added, replaced, removed;
};
/* (port slot, VLAN) keys: document ports, then node ports (replace=false) */
#define PV_SLOTS (2 * E3_MAX_PORTS * (E3_VLAN_UNTAGGED + 1))
#define SCRATCH(t) ((const t *)l->scratch)

static int find_port(const struct port_ref *r, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(r[i].name, name) == 0)
			return i;
	return -1;
}

static void note_port(struct keys *k, const struct e3_port_conf *c)
{
	if (find_port(k->ports, k->n_ports, c->name) >= 0 || k->n_ports >= E3_MAX_PORTS)
		return;
	struct port_ref *r = &k->ports[k->n_ports++];
	snprintf(r->name, sizeof(r->name), "%s", c->name);
	r->kind = c->kind;
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
	return &l->pv_owner[(size_t)slot * (E3_VLAN_UNTAGGED + 1) + vlan];
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
	else if (e3_node_changed())
		l->replaced++;
}

/* Add every object of a kind's list through add, which returns the
 * node operation's code (0 or -E3_E*), or NOT_THIS_PASS for an object a later pass
 * over the list adds, and whether the node had the object. */
enum { NOT_THIS_PASS = 1 };
typedef int add_fn(struct load *l, bool *had, char *err);
static int apply_list(struct load *l, const struct e3_obj_type *t, const json_t *arr,
		      const char *section, add_fn *add, char *err)
{
	for (size_t i = 0; i < json_array_size(arr); i++) {
		char where[64];
		bool had = false;
		if (decode_elem(l, t, arr, section, i, where, sizeof(where)) < 0)
			return -1;
		int rc = add(l, &had, err);
		if (rc < 0)
			return applied_err(l, where, rc, err);
		if (rc != NOT_THIS_PASS)
			count_add(l, had);
	}
	return 0;
}

/* Delete the keys of a kind the node had and the document does not list
 * (with `only`, those the node had with that value). */
static int remove_keys(struct load *l, enum kind kind, const uint8_t *also_listed, uint8_t only,
		       int (*del)(uint32_t, char *), const char *what, char *err)
{
	const uint8_t *had = l->before.of[kind], *listed = l->doc.of[kind];
	for (uint32_t key = 0; key < key_space[kind]; key++) {
		if (!had[key] || (had[key] & GONE_EARLY) || (only && had[key] != only) || listed[key] ||
		    (also_listed && also_listed[key]))
			continue;
		int rc = del(key, err);
		if (rc < 0) {
			char where[64];
			snprintf(where, sizeof(where), "removing %s %u", what, key);
			return applied_err(l, where, rc, err);
		}
		l->removed++;
	}
	return 0;
}

/* ---- port ------------------------------------------ */
static void dump_port(const struct e3_port_info *p, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_port_type, &p->conf));
}
static void snap_port(const struct e3_port_info *p, void *arg)
{
	note_port(&((struct load *)arg)->before, &p->conf);
}
static void index_port(struct load *l)
{
	note_port(&l->doc, &SCRATCH(struct e3_port_req)->conf);
}
static int add_port(struct load *l, bool *had, char *err)
{
	const struct e3_port_conf *c = &SCRATCH(struct e3_port_req)->conf;
	*had = find_port(l->before.ports, l->before.n_ports, c->name) >= 0;
	return e3_node_port_add(c, err);
}
static int apply_port(struct load *l, char *err)
{
	return apply_list(l, &e3_port_type, l->p->ports, "ports", add_port, err);
}
static int remove_port(struct load *l, char *err)
{
	for (int i = 0; i < l->before.n_ports; i++) {
		const char *name = l->before.ports[i].name;
		if (find_port(l->doc.ports, l->doc.n_ports, name) >= 0)
			continue;
		int rc = e3_node_port_del(name, err);
		if (rc < 0) {
			char where[64];
			snprintf(where, sizeof(where), "removing port '%s'", name);
			return applied_err(l, where, rc, err);
		}
		l->removed++;
	}
	return 0;
}

/* ---- nexthop ------------------------------------------ */
static void dump_nexthop(const struct e3_nexthop_conf *n, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_nexthop_type, n));
}
static void snap_nexthop(const struct e3_nexthop_conf *n, void *arg)
{
	keys_mark(&((struct load *)arg)->before, K_nexthop, n->id, 1);
}
static void index_nexthop(struct load *l)
{
	keys_mark(&l->doc, K_nexthop, SCRATCH(struct e3_nexthop_conf)->id, 1);
}
static int add_nexthop(struct load *l, bool *had, char *err)
{
	*had = l->before.of[K_nexthop][SCRATCH(struct e3_nexthop_conf)->id];
	return e3_node_nexthop_add(l->scratch, err);
}
static int apply_nexthop(struct load *l, char *err)
{
	return apply_list(l, &e3_nexthop_type, l->p->nexthops, "nexthops", add_nexthop, err);
}
static int remove_nexthop(struct load *l, char *err)
{
	return remove_keys(l, K_nexthop, NULL, 0, e3_node_nexthop_del, "nexthop", err);
}

/* ---- bfd ------------------------------------------ */
static void dump_bfd(const struct e3_bfd_info *b, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_bfd_type, &b->conf));
}
static void snap_bfd(const struct e3_bfd_info *b, void *arg)
{
	keys_mark(&((struct load *)arg)->before, K_bfd, b->conf.id, 1);
}
static void index_bfd(struct load *l)
{
	keys_mark(&l->doc, K_bfd, SCRATCH(struct e3_bfd_conf)->id, 1);
}
static int add_bfd(struct load *l, bool *had, char *err)
{
	*had = l->before.of[K_bfd][SCRATCH(struct e3_bfd_conf)->id];
	return e3_node_bfd_add(l->scratch, err);
}
static int apply_bfd(struct load *l, char *err)
{
	return apply_list(l, &e3_bfd_type, l->p->bfd, "bfd", add_bfd, err);
}
static int remove_bfd(struct load *l, char *err)
{
	return remove_keys(l, K_bfd, NULL, 0, e3_node_bfd_del, "bfd session", err);
}

/* ---- nhlfe: plain ones, then the protected ones that refer to them. NHLFEs
 * and ECMP groups share one id space: an id either lists counts for both. */
static void dump_nhlfe(const struct e3_nhlfe_conf *n, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_nhlfe_type, n));
}
static void snap_nhlfe(const struct e3_nhlfe_conf *n, void *arg)
{
	keys_mark(&((struct load *)arg)->before, K_nhlfe, n->id, n->protect ? NHLFE_PROTECTED : NHLFE_PLAIN);
}
static void index_nhlfe(struct load *l)
{
	keys_mark(&l->doc, K_nhlfe, SCRATCH(struct e3_nhlfe_conf)->id, 1);
}
static bool nhlfe_had(struct load *l, uint32_t id)
{
	return l->before.of[K_nhlfe][id] || l->before.of[K_ecmp][id];
}
static int add_plain_nhlfe(struct load *l, bool *had, char *err)
{
	const struct e3_nhlfe_conf *c = l->scratch;
	if (c->protect)
		return NOT_THIS_PASS;
	*had = nhlfe_had(l, c->id);
	return e3_node_nhlfe_add(c, err);
}
static int add_protected_nhlfe(struct load *l, bool *had, char *err)
{
	const struct e3_nhlfe_conf *c = l->scratch;
	if (!c->protect)
		return NOT_THIS_PASS;
	*had = nhlfe_had(l, c->id);
	return e3_node_nhlfe_add(c, err);
}
static int apply_nhlfe(struct load *l, char *err)
{
	if (apply_list(l, &e3_nhlfe_type, l->p->nhlfes, "nhlfes", add_plain_nhlfe, err) < 0)
		return -1;
	return apply_list(l, &e3_nhlfe_type, l->p->nhlfes, "nhlfes", add_protected_nhlfe, err);
}
static int remove_nhlfe(struct load *l, char *err)
{
	const uint8_t *groups = l->doc.of[K_ecmp];
	if (remove_keys(l, K_nhlfe, groups, NHLFE_PROTECTED, e3_node_nhlfe_del, "nhlfe", err) < 0)
		return -1;
	return remove_keys(l, K_nhlfe, groups, NHLFE_PLAIN, e3_node_nhlfe_del, "nhlfe", err);
}

/* ---- ecmp ------------------------------------------ */
static void dump_ecmp(const struct e3_ecmp_conf *n, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_ecmp_type, n));
}
static void snap_ecmp(const struct e3_ecmp_conf *n, void *arg)
{
	keys_mark(&((struct load *)arg)->before, K_ecmp, n->id, 1);
}
static void index_ecmp(struct load *l)
{
	keys_mark(&l->doc, K_ecmp, SCRATCH(struct e3_ecmp_conf)->id, 1);
}
static int add_ecmp(struct load *l, bool *had, char *err)
{
	*had = nhlfe_had(l, SCRATCH(struct e3_ecmp_conf)->id);
	return e3_node_ecmp_add(l->scratch, err);
}
static int apply_ecmp(struct load *l, char *err)
{
	return apply_list(l, &e3_ecmp_type, l->p->ecmps, "ecmps", add_ecmp, err);
}
static int remove_ecmp(struct load *l, char *err)
{
	return remove_keys(l, K_ecmp, l->doc.of[K_nhlfe], 0, e3_node_ecmp_del, "nhlfe", err);
}

/* ---- service ------------------------------------------ */
static void dump_service(const struct e3_service_info *s, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_service_type, s->conf));
}
static void snap_service(const struct e3_service_info *si, void *arg)
{
	keys_mark(&((struct load *)arg)->before, K_service, si->conf->id, 1);
}
static void index_service(struct load *l)
{
	keys_mark(&l->doc, K_service, SCRATCH(struct e3_service_conf)->id, 1);
}
static int add_service(struct load *l, bool *had, char *err)
{
	*had = l->before.of[K_service][SCRATCH(struct e3_service_conf)->id];
	return e3_node_service_add(l->scratch, err);
}
static int apply_service(struct load *l, char *err)
{
	return apply_list(l, &e3_service_type, l->p->services, "services", add_service, err);
}
static int remove_service(struct load *l, char *err)
{
	return remove_keys(l, K_service, NULL, 0, e3_node_service_del, "service", err);
}

/* ---- circuit: a (port, VLAN) the document gives another circuit id is
 * freed before the circuits are added ------------------------------------------ */
static void dump_circuit(const struct e3_circuit_info *c, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_circuit_type, &c->conf));
}
static void snap_circuit(const struct e3_circuit_info *ci, void *arg)
{
	struct load *l = arg;
	if (ci->conf.id >= E3_MAX_CIRCUITS)
		return;
	keys_mark(&l->before, K_circuit, ci->conf.id, 1);
	snprintf(l->circ_pv[ci->conf.id].port, 32, "%s", ci->conf.port);
	l->circ_pv[ci->conf.id].vlan = ci->conf.vlan;
}
static void index_circuit(struct load *l)
{
	const struct e3_circuit_conf *c = l->scratch;
	keys_mark(&l->doc, K_circuit, c->id, 1);
	uint32_t *owner = pv_owner(l, c->port, c->vlan);
	if (owner != NULL && *owner == 0)
		*owner = c->id + 1;
}
static int add_circuit(struct load *l, bool *had, char *err)
{
	*had = l->before.of[K_circuit][SCRATCH(struct e3_circuit_conf)->id];
	return e3_node_circuit_add(l->scratch, err);
}
static int apply_circuit(struct load *l, char *err)
{
	/* Its old circuit is either moving elsewhere in the document or going. */
	uint8_t *had = l->before.of[K_circuit];
	for (uint32_t id = 0; id < E3_MAX_CIRCUITS; id++) {
		if (!had[id])
			continue;
		const struct pv *pv = &l->circ_pv[id];
		uint32_t *o = pv_owner(l, pv->port, pv->vlan);
		uint32_t owner = o != NULL ? *o : 0;
		if (owner && owner - 1 != id) {
			int rc = e3_node_circuit_del(id, err);
			if (rc < 0)
				return applied_err(l, "freeing a circuit's port and VLAN", rc, err);
			had[id] = GONE_EARLY;
			if (!l->doc.of[K_circuit][id])
				l->removed++;
		}
	}
	return apply_list(l, &e3_circuit_type, l->p->circuits, "circuits", add_circuit, err);
}
static int remove_circuit(struct load *l, char *err)
{
	return remove_keys(l, K_circuit, NULL, 0, e3_node_circuit_del, "circuit", err);
}

/* ---- label ------------------------------------------ */
static void dump_label(const struct e3_label_info *li, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_label_type, li->conf));
}
static void snap_label(const struct e3_label_info *li, void *arg)
{
	keys_mark(&((struct load *)arg)->before, K_label, li->conf->label, 1);
}
static void index_label(struct load *l)
{
	keys_mark(&l->doc, K_label, SCRATCH(struct e3_label_conf)->label, 1);
}
static int add_label(struct load *l, bool *had, char *err)
{
	*had = l->before.of[K_label][SCRATCH(struct e3_label_conf)->label];
	return e3_node_label_add(l->scratch, err);
}
static int apply_label(struct load *l, char *err)
{
	return apply_list(l, &e3_label_type, l->p->labels, "labels", add_label, err);
}
static int remove_label(struct load *l, char *err)
{
	return remove_keys(l, K_label, NULL, 0, e3_node_label_del, "label", err);
}

/* ---- config_dump ------------------------------------------ */
int e3_rpc_config_dump(struct e3_rpc_call *c, void *params)
{
	(void)params;
	e3_config_dump_write(&c->w, NULL);
	return 0;
}

void e3_config_dump_write(struct e3_jw *w, const char *key)
{
	struct e3_settings s;
	e3_node_settings_get(&s);
	e3_jw_open(w, key, '{');
	e3_jw_json(w, "version", json_integer(1));
	e3_jw_json(w, "settings", e3_obj_json(&e3_settings_type, &s));
#define DUMP_KIND(obj, list, space)                 \
	e3_jw_open(w, #list, '[');                  \
	e3_node_##obj##_walk(dump_##obj, w);         \
	e3_jw_close(w, ']');
	E3_CONFIG_KINDS(DUMP_KIND)
#undef DUMP_KIND
	e3_jw_close(w, '}');
}

/* ---- config_load's passes ------------------------------------------ */
static int snap_take(struct load *l)
{
	if (keys_alloc(&l->before) < 0)
		return -1;
#define SNAP_KIND(obj, list, space) e3_node_##obj##_walk(snap_##obj, l);
	E3_CONFIG_KINDS(SNAP_KIND)
#undef SNAP_KIND
	return 0;
}

/* Index the document: decode every object with its _add's table, note
 * which keys it has (what replace=true keeps) and which circuit takes each
 * (port, VLAN) (what must be freed first). Only decoding can fail here;
 * everything else is the _add handlers' to check as the objects are
 * replayed. */
static int index_doc(struct load *l)
{
	const struct load_params *p = l->p;
	char where[64];

	if (p->settings != NULL) {
		struct e3_settings s;
		if (e3_obj_decode(&e3_settings_type, p->settings, &s, NULL, "settings.",
				  l->c->msg, sizeof(l->c->msg)) < 0)
			return l->c->code = E3_RPC_INVALID_PARAMS, -1;
	}
#define INDEX_KIND(obj, list, space)                                                         \
	for (size_t i = 0; i < json_array_size(p->list); i++) {                              \
		if (decode_elem(l, &e3_##obj##_type, p->list, #list, i, where, sizeof(where)) < 0) \
			return -1;                                                           \
		index_##obj(l);                                                              \
	}
	E3_CONFIG_KINDS(INDEX_KIND)
#undef INDEX_KIND
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
		e3_node_settings_get(&s);
		e3_settings_merge(&s, &in, seen);
		int rc = e3_node_settings_set(&s, err);
		if (rc < 0)
			return applied_err(l, "settings", rc, err);
		count_add(l, true);
	}
#define APPLY_KIND(obj, list, space) \
	if (apply_##obj(l, err) < 0) \
		return -1;
	E3_CONFIG_KINDS(APPLY_KIND)
#undef APPLY_KIND
	if (!p->replace)
		return 0;
	/* What the document does not have, last kinds first: nothing is
	 * deleted while an object of a later kind may still refer to it. */
#define REMOVE_KIND(obj, list, space) \
	if (remove_##obj(l, err) < 0) \
		return -1;
	E3_CONFIG_KINDS_REVERSE(REMOVE_KIND)
#undef REMOVE_KIND
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
	l.circ_pv = calloc(E3_MAX_CIRCUITS, sizeof(struct pv));
	l.pv_owner = calloc(PV_SLOTS, sizeof(uint32_t));
	if (l.scratch == NULL || l.circ_pv == NULL || l.pv_owner == NULL || keys_alloc(&l.doc) < 0)
		goto oom;
	if (snap_take(&l) < 0) {
		keys_free(&l.doc);
		goto oom;
	}
	if (index_doc(&l) == 0 && apply(&l) == 0) {
		e3_jw_json(&c->w, NULL,
			   json_pack("{s:I, s:I, s:I}", "added", l.added, "replaced", l.replaced,
				     "removed", l.removed));
		rc = 0;
	}
	keys_free(&l.doc);
	keys_free(&l.before);
	free(l.pv_owner);
	free(l.circ_pv);
	free(l.scratch);
	return rc;
oom:
	free(l.pv_owner);
	free(l.circ_pv);
	free(l.scratch);
	return e3_rpc_err(c, E3_RPC_INTERNAL_ERROR, "out of memory");
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
