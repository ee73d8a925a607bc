/* SPDX-License-Identifier: Apache-2.0
 *
 * rpc_int.h - internals shared by the JSON-RPC server's files:
 *   rpc.c          transport (socket, epoll, framing, dispatch)
 *   rpc_json.c     buffers, the streaming result writer, the params decoder
 *                  and its inverse, the encoder config_dump uses
 *   rpc_objects.c  each configurable object: params table, checks, its
 *                  forms; a method's invocation with its params decoded
 *   rpc_methods.c  the method table and its handlers
 *   rpc_config.c   config_dump / config_load / e3_rpc_load_file
 *   telemetry.c    DPDK telemetry commands
 *   checkpoint.c, handover.c  a warm restart's state and its hand-over
 * Calls go one way: rpc.c -> rpc_methods.c -> rpc_config.c -> rpc_objects.c
 * -> rpc_json.c, checkpoint.c -> rpc_config.c, handover.c -> checkpoint.c;
 * the server's counters reach system_info in the call, not back from
 * rpc.c.
 */
#ifndef E3_RPC_INT_H
#define E3_RPC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "node/node.h"
#include "rpc/rpc_gen.h"

#define E3_VERSION "0.1.0"
#define E3_RPC_MAX_MSG (1u << 20) /* one request, bytes */
#define E3_RPC_MSGLEN 512

/* ---- growable byte buffer ------------------------------------------ */
struct e3_buf {
	char *p;
	size_t len, cap;
	bool oom; /* an allocation failed: the content is incomplete */
};
void e3_buf_add(struct e3_buf *b, const void *d, size_t n);
void e3_buf_str(struct e3_buf *b, const char *s);
void e3_buf_printf(struct e3_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void e3_buf_consume(struct e3_buf *b, size_t n);
void e3_buf_free(struct e3_buf *b);

/* ---- streaming JSON writer --------------------------------------------------
 * Results are written as text straight into the response buffer, so a list
 * of a million labels is a million small dumps, not a million-node tree. */
#define E3_JW_DEPTH 8
struct e3_jw {
	struct e3_buf *b;
	int depth;
	bool first[E3_JW_DEPTH];
};
/* Open '[' or '{'; key is the member name inside an object, else NULL. */
void e3_jw_open(struct e3_jw *w, const char *key, char open);
void e3_jw_close(struct e3_jw *w, char close);
/* Write one value (stolen: decref'd here); key as for e3_jw_open. */
void e3_jw_json(struct e3_jw *w, const char *key, json_t *v);
/* The node's whole configuration (config_dump's document) as one value. */
void e3_config_dump_write(struct e3_jw *w, const char *key);

/* ---- checkpoint parts (checkpoint.c) ------------------------------------ */
#define E3_CHECKPOINT_CONFIG 1u   /* config_dump's document */
#define E3_CHECKPOINT_LIVE 2u     /* Up BFD sessions and MACs */
/* Write a checkpoint document of the given parts into b; -1: out of memory. */
int e3_checkpoint_build(struct e3_buf *b, uint32_t hold_ms, unsigned parts);
struct e3_checkpoint_stats;
/* Load a document of either part or both (what names it in errors). */
int e3_checkpoint_load_buf(const char *p, size_t n, const char *what, struct e3_checkpoint_stats *st,
			   char *err);

/* ---- a call in progress ------------------------------------------ */
/* The socket server's counters (rpc.c), shown by system_info. */
struct e3_rpc_counters {
	uint64_t connections;       /* open now */
	uint64_t refused_full;      /* every slot (or every slot not kept for root) taken */
	uint64_t refused_per_user;  /* the user's own limit */
	uint64_t idle_closed;
};

struct e3_rpc_call {
	struct e3_jw w;      /* the handler writes exactly one result value */
	int code;            /* 0, or the error code */
	char msg[E3_RPC_MSGLEN];
	uint64_t seen;       /* bit i set: top-level param i of the table was given */
	/* The server's counters, for a call that came through the socket
	 * (NULL: one made inside the datapath, e.g. a checkpoint's load). */
	const struct e3_rpc_counters *server;
};
/* Set the call's error; returns -1 so handlers can `return e3_rpc_err(...)`. */
int e3_rpc_err(struct e3_rpc_call *c, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Map a negative E3_E* return of e3_node_* and its message. */
int e3_rpc_node_err(struct e3_rpc_call *c, int rc, const char *err);
int e3_rpc_code_of(int ctl_rc);

/* ---- declarative params (like SPDK's spdk_json_object_decode) ------------ */
enum e3_ptype {
	E3_PT_BOOL,   /* bool */
	E3_PT_U8,     /* uint8_t, range min..max */
	E3_PT_U16,    /* uint16_t */
	E3_PT_I16,    /* int16_t */
	E3_PT_U32,    /* uint32_t */
	E3_PT_I32,    /* int32_t */
	E3_PT_I64,    /* int64_t */
	E3_PT_STR,    /* char[max]: non-empty unless min == 0 */
	E3_PT_MAC,    /* uint8_t[6] from "02:00:00:00:00:01" */
	E3_PT_VLAN,   /* uint16_t: 1..4094 or "untagged" (E3_VLAN_UNTAGGED) */
	E3_PT_ENUM,   /* int (C enum) from one of names[] (index = value) */
	E3_PT_ARRAY,  /* elem_size-sized elements, count in a uint16_t at count_off */
	E3_PT_OBJECT, /* nested object decoded by sub[] */
	E3_PT_JARRAY, /* const json_t *: an array, decoded later by the handler */
	E3_PT_JOBJECT,/* const json_t *: an object, decoded later by the handler */
};
struct e3_param {
	const char *name;
	enum e3_ptype type;
	size_t off;
	bool required;
	int64_t min, max;             /* ints: range; STR: min length, buffer size; ARRAY: max count */
	const char *const *names;     /* ENUM: by value, NULL-terminated; "" = no such value */
	const struct e3_param *elem;  /* ARRAY: how to decode one element (its off is 0) */
	size_t elem_size;             /* ARRAY */
	size_t count_off;             /* ARRAY */
	const struct e3_param *sub;   /* OBJECT */
	size_t n_sub;                 /* OBJECT */
};
#define E3_NPARAMS(t) (sizeof(t) / sizeof((t)[0]))

/* Table entries: member NAME of the params decodes into field F of struct S. */
#define E3_P(S, F, NAME, TYPE, REQ) /* BOOL, MAC, VLAN, JARRAY, JOBJECT */               \
	{ .name = (NAME), .type = (TYPE), .off = offsetof(S, F), .required = (REQ) }
#define E3_P_INT(S, F, NAME, TYPE, REQ, LO, HI)                                            \
	{ .name = (NAME), .type = (TYPE), .off = offsetof(S, F), .required = (REQ),       \
	  .min = (LO), .max = (HI) }
#define E3_P_STR(S, F, NAME, REQ, MINLEN) /* at most sizeof(F) - 1 characters */         \
	{ .name = (NAME), .type = E3_PT_STR, .off = offsetof(S, F), .required = (REQ),    \
	  .min = (MINLEN), .max = sizeof(((S *)0)->F) }
#define E3_P_ENUM(S, F, NAME, REQ, NAMES)                                                  \
	{ .name = (NAME), .type = E3_PT_ENUM, .off = offsetof(S, F), .required = (REQ),   \
	  .names = (NAMES) }
#define E3_P_ARRAY(S, F, COUNT, NAME, REQ, MAXN, ELEM) /* COUNT: a uint16_t field */     \
	{ .name = (NAME), .type = E3_PT_ARRAY, .off = offsetof(S, F), .required = (REQ),  \
	  .max = (MAXN), .elem = (ELEM), .elem_size = sizeof(((S *)0)->F[0]),             \
	  .count_off = offsetof(S, COUNT) }

/* Decode obj (an object or NULL = no params) into out by the table. Unknown
 * members, missing required ones, wrong types and out-of-range values fail
 * with a message naming the param (prefixed with where, e.g. "ports[2]."). */
int e3_decode(const json_t *obj, const struct e3_param *t, size_t n, void *out,
	      uint64_t *seen, const char *where, char *msg, size_t msglen);

/* MAC and VLAN text forms. */
bool e3_mac_parse(const char *s, uint8_t mac[6]);
void e3_mac_fmt(const uint8_t mac[6], char out[18]);
bool e3_mac_is_zero(const uint8_t mac[6]);
json_t *e3_mac_json(const uint8_t mac[6]);
json_t *e3_vlan_json(uint16_t vlan);

/* Shared between rpc_methods.c and rpc_config.c: each object's params
 * table, its checks across params, and its JSON form (what config_dump
 * writes, so a dump decodes with the same table). */
struct e3_port_req {             /* port_add params: the conf and how many workers[] */
	struct e3_port_conf conf;
	uint16_t n_workers;
};
/* Which params config_dump leaves out (bits of the params table; generated
 * from the schema's `dump` keys into objects_gen.h): those in if_set when
 * zero (0, "", a zero MAC, no elements), those in unless_none when E3_NONE,
 * and those in never. */
struct e3_dump {
	uint64_t if_set, unless_none, never;
};
/* An object's forms (schema.yaml `forms`, generated into objects_gen.h),
 * told apart by the enum param `by` and indexed by its value: the params
 * each form needs and allows. The params outside `formed` (those no form
 * names) are every form's. */
struct e3_form {
	uint64_t need, allow;
};
struct e3_forms {
	int by;                        /* the enum param's index */
	uint64_t formed;
	int n;
	const struct e3_form *form;
};
struct e3_obj_type {
	const char *what;              /* "port", ... for messages */
	const struct e3_param *params;
	size_t n_params;
	size_t size;                   /* of the decoded struct */
	void (*init)(void *conf);      /* defaults before decoding */
	/* defaults that depend on other params, and checks across params */
	int (*finish)(void *conf, uint64_t seen, char *msg, size_t len);
	const struct e3_dump *dump;
	/* Decoding refuses a param the object's form does not have and one it
	 * needs that is missing; a dump writes the form's params. NULL: one
	 * form. */
	const struct e3_forms *forms;
	/* The params of conf's form when forms do not say it all; NULL: those
	 * of forms (e3_form_params). */
	uint64_t (*applies)(const void *conf);
};
/* The index of conf's form: the value of its forms' `by` param (an enum,
 * decoded as an int). */
static inline int e3_form_of(const struct e3_obj_type *t, const void *conf)
{
	return *(const int *)((const char *)conf + t->params[t->forms->by].off);
}
/* The params of conf's form: every param outside the forms' and those its
 * form allows (all, for an object of one form). */
uint64_t e3_form_params(const struct e3_obj_type *t, const void *conf);
extern const struct e3_obj_type e3_port_type, e3_nexthop_type, e3_nhlfe_type, e3_ecmp_type, e3_bfd_type,
	e3_service_type, e3_circuit_type, e3_label_type, e3_settings_type;

/* Decode one object of a type: init, table, finish; seen may be NULL. */
int e3_obj_decode(const struct e3_obj_type *t, const json_t *v, void *out,
		  uint64_t *seen, const char *where, char *msg, size_t len);

/* ---- methods ------------------------------------------ */
typedef int (*e3_rpc_fn)(struct e3_rpc_call *c, void *params);
struct e3_rpc_method {
	const char *name;
	e3_rpc_fn fn;
	const struct e3_obj_type *params; /* how its params decode */
};
/* The method table (rpc_methods.c). */
const struct e3_rpc_method *e3_rpc_method_find(const char *name);

/* Decode params (an object or NULL) by t and run fn on them with the
 * control lock held; the result or the error is left in c (rpc_objects.c). */
void e3_rpc_invoke(e3_rpc_fn fn, const struct e3_obj_type *t, const json_t *params,
		   struct e3_rpc_call *c);

/* An object as config_dump writes it (which decodes back to the same
 * object): the params of t's table that apply to it, less those its dump
 * masks leave out. conf is the struct the table decodes into (for a port,
 * its e3_port_conf, the first member of e3_port_req). */
json_t *e3_obj_json(const struct e3_obj_type *t, const void *conf);
/* Settings given (seen: bits of the settings table) override those in s. */
void e3_settings_merge(struct e3_settings *s, const struct e3_settings *in, uint64_t seen);

int e3_rpc_config_dump(struct e3_rpc_call *c, void *params);
int e3_rpc_config_load(struct e3_rpc_call *c, void *params);
extern const struct e3_obj_type e3_config_load_params;
/* config_load of doc, made inside the datapath (a file, a checkpoint). */
void e3_rpc_config_load_doc(const json_t *doc, struct e3_rpc_call *c);

#endif
