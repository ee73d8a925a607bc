/* SPDX-License-Identifier: Apache-2.0
 *
 * rpc_config.c - config_dump and config_load: the snapshot and restore of a
 * whole node, in the JSON shape of control/internal/dpconfig (Go).
 *
 * config_load replays the document through the same handlers as the
 * methods (SPDK's json_config model), with no checks of its own:
 *   1. every object must decode with its _add's params table (a document
 *      that does not decode changes nothing);
 *   2. add/replace the settings, then kind by kind in dependency order
 *      (E3_CONFIG_KINDS, generated from the schema's order), each object
 *      through its e3_node_*_add, which checks it as it would for the
 *      method (each _add is idempotent, so objects that did not change are
 *      not touched and their traffic never stops); the first refusal stops
 *      the load and names the object.
 * It deletes nothing: it is the boot-time load (--config, a warm
 * restart's checkpoint, a handover) and a bulk add. Making a node equal to
 * a document, deletions included, is the agent's planner's job
 * (`e3-agent sync`), the one planner that orders changes.
 * Counts: an object of the document is "added" if the node did not have
 * it, "replaced" if it had it and the _add changed it (e3_node_changed()).
 *
 * Each kind's part (dump, snapshot, apply) sits in its own section below;
 * the passes loop over the kinds.
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
};
static const struct e3_param load_table[] = {
	E3_P_INT(struct load_params, version, "version", E3_PT_I64, true, 1, 1),
	E3_P(struct load_params, settings, "settings", E3_PT_JOBJECT, false),
#define KIND_PARAM(obj, list, space) E3_P(struct load_params, list, #list, E3_PT_JARRAY, false),
	E3_CONFIG_KINDS(KIND_PARAM)
#undef KIND_PARAM
};
const struct e3_obj_type e3_config_load_params = {
	.what = "params", .params = load_table, .n_params = E3_NPARAMS(load_table),
	.size = sizeof(struct load_params),
};

/* What the node had before the load: by kind and key, nonzero if present
 * (ports by name). */
struct keys {
	uint8_t *of[N_KINDS];          /* NULL for kinds keyed by name */
	char ports[E3_MAX_PORTS][32];
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

static void keys_mark(struct keys *k, enum kind kind, uint32_t key)
{
	if (key < key_space[kind])
		k->of[kind][key] = 1;
}

struct load {
	struct e3_rpc_call *c;
	const struct load_params *p;
	struct keys before;
	void *scratch;         /* one decoded object of any type */
	json_int_t added, replaced;
};
#define SCRATCH(t) ((const t *)l->scratch)

static bool had_port(const struct keys *k, const char *name)
{
	for (int i = 0; i < k->n_ports; i++)
		if (strcmp(k->ports[i], name) == 0)
			return true;
	return false;
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

/* ---- port ------------------------------------------ */
static void dump_port(const struct e3_port_info *p, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_port_type, &p->conf));
}
static void snap_port(const struct e3_port_info *p, void *arg)
{
	struct keys *k = &((struct load *)arg)->before;
	if (k->n_ports < E3_MAX_PORTS)
		snprintf(k->ports[k->n_ports++], sizeof(k->ports[0]), "%s", p->conf.name);
}
static int add_port(struct load *l, bool *had, char *err)
{
	const struct e3_port_conf *c = &SCRATCH(struct e3_port_req)->conf;
	*had = had_port(&l->before, c->name);
	return e3_node_port_add(c, err);
}
static int apply_port(struct load *l, char *err)
{
	return apply_list(l, &e3_port_type, l->p->ports, "ports", add_port, err);
}

/* ---- nexthop ------------------------------------------ */
static void dump_nexthop(const struct e3_nexthop_conf *n, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_nexthop_type, n));
}
static void snap_nexthop(const struct e3_nexthop_conf *n, void *arg)
{
	keys_mark(&((struct load *)arg)->before, K_nexthop, n->id);
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

/* ---- bfd ------------------------------------------ */
static void dump_bfd(const struct e3_bfd_info *b, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_bfd_type, &b->conf));
}
static void snap_bfd(const struct e3_bfd_info *b, void *arg)
{
	keys_mark(&((struct load *)arg)->before, K_bfd, b->conf.id);
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

/* ---- nhlfe: plain ones, then the protected ones that refer to them. NHLFEs
 * and ECMP groups share one id space: an id either lists counts for both. */
static void dump_nhlfe(const struct e3_nhlfe_conf *n, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_nhlfe_type, n));
}
static void snap_nhlfe(const struct e3_nhlfe_conf *n, void *arg)
{
	keys_mark(&((struct load *)arg)->before, K_nhlfe, n->id);
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

/* ---- ecmp ------------------------------------------ */
static void dump_ecmp(const struct e3_ecmp_conf *n, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_ecmp_type, n));
}
static void snap_ecmp(const struct e3_ecmp_conf *n, void *arg)
{
	keys_mark(&((struct load *)arg)->before, K_ecmp, n->id);
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

/* ---- service ------------------------------------------ */
static void dump_service(const struct e3_service_info *s, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_service_type, s->conf));
}
static void snap_service(const struct e3_service_info *si, void *arg)
{
	keys_mark(&((struct load *)arg)->before, K_service, si->conf->id);
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

/* ---- circuit ------------------------------------------ */
static void dump_circuit(const struct e3_circuit_info *c, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_circuit_type, &c->conf));
}
static void snap_circuit(const struct e3_circuit_info *ci, void *arg)
{
	keys_mark(&((struct load *)arg)->before, K_circuit, ci->conf.id);
}
static int add_circuit(struct load *l, bool *had, char *err)
{
	*had = l->before.of[K_circuit][SCRATCH(struct e3_circuit_conf)->id];
	return e3_node_circuit_add(l->scratch, err);
}
static int apply_circuit(struct load *l, char *err)
{
	return apply_list(l, &e3_circuit_type, l->p->circuits, "circuits", add_circuit, err);
}

/* ---- label ------------------------------------------ */
static void dump_label(const struct e3_label_info *li, void *w)
{
	e3_jw_json(w, NULL, e3_obj_json(&e3_label_type, li->conf));
}
static void snap_label(const struct e3_label_info *li, void *arg)
{
	keys_mark(&((struct load *)arg)->before, K_label, li->conf->label);
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

/* Decode every object of the document with its _add's table, so that one
 * that does not decode changes nothing; everything else is the _add
 * handlers' to check as the objects are replayed. */
static int decode_doc(struct load *l)
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
	if (l.scratch == NULL || snap_take(&l) < 0) {
		free(l.scratch);
		return e3_rpc_err(c, E3_RPC_INTERNAL_ERROR, "out of memory");
	}
	if (decode_doc(&l) == 0 && apply(&l) == 0) {
		e3_jw_json(&c->w, NULL, json_pack("{s:I, s:I}", "added", l.added, "replaced", l.replaced));
		rc = 0;
	}
	keys_free(&l.before);
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
