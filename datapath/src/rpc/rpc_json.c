/* SPDX-License-Identifier: Apache-2.0
 *
 * rpc_json.c - byte buffers, the streaming result writer, error mapping and
 * the table-driven params decoder of the JSON-RPC server.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/rpc_int.h"

/* ---- buffer ------------------------------------------ */
static bool buf_reserve(struct e3_buf *b, size_t n)
{
	if (b->oom)
		return false;
	if (b->len + n <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (p == NULL) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void e3_buf_add(struct e3_buf *b, const void *d, size_t n)
{
	if (!buf_reserve(b, n))
		return;
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

void e3_buf_str(struct e3_buf *b, const char *s)
{
	e3_buf_add(b, s, strlen(s));
}

void e3_buf_printf(struct e3_buf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		e3_buf_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

void e3_buf_consume(struct e3_buf *b, size_t n)
{
	if (n >= b->len) {
		b->len = 0;
		return;
	}
	memmove(b->p, b->p + n, b->len - n);
	b->len -= n;
}

void e3_buf_free(struct e3_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

/* ---- streaming writer ------------------------------------------ */
static void jw_sep(struct e3_jw *w, const char *key)
{
	if (w->depth > E3_JW_DEPTH) {
		w->b->oom = true; /* deeper than any result we write: a bug, reported as an error */
		return;
	}
	if (w->depth > 0) {
		if (!w->first[w->depth - 1])
			e3_buf_add(w->b, ",", 1);
		w->first[w->depth - 1] = false;
	}
	if (key != NULL) {
		json_t *k = json_string(key);
		char *s = json_dumps(k, JSON_ENCODE_ANY);
		if (s != NULL) {
			e3_buf_str(w->b, s);
			e3_buf_add(w->b, ":", 1);
			free(s);
		} else {
			w->b->oom = true;
		}
		json_decref(k);
	}
}

void e3_jw_open(struct e3_jw *w, const char *key, char open)
{
	jw_sep(w, key);
	e3_buf_add(w->b, &open, 1);
	if (w->depth < E3_JW_DEPTH)
		w->first[w->depth] = true;
	w->depth++;
}

void e3_jw_close(struct e3_jw *w, char close)
{
	w->depth--;
	e3_buf_add(w->b, &close, 1);
}

static int jw_dump_cb(const char *s, size_t n, void *arg)
{
	e3_buf_add(arg, s, n);
	return 0;
}

void e3_jw_json(struct e3_jw *w, const char *key, json_t *v)
{
	jw_sep(w, key);
	if (v == NULL) {
		w->b->oom = true;
		return;
	}
	json_dump_callback(v, jw_dump_cb, w->b, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(v);
}

/* ---- errors ------------------------------------------ */
int e3_rpc_err(struct e3_rpc_call *c, int code, const char *fmt, ...)
{
	va_list ap;
	c->code = code;
	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int e3_rpc_code_of(int rc)
{
#define E3_RPC_NODE_CASE(err, code) case err: return code;
	switch (-rc) {
	E3_RPC_NODE_CODES(E3_RPC_NODE_CASE)
	default: return E3_RPC_INTERNAL_ERROR;
	}
#undef E3_RPC_NODE_CASE
}

int e3_rpc_node_err(struct e3_rpc_call *c, int rc, const char *err)
{
	return e3_rpc_err(c, e3_rpc_code_of(rc), "%s",
			  err != NULL && err[0] != '\0' ? err : "operation failed");
}

/* ---- MAC / VLAN text ------------------------------------------ */
static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

bool e3_mac_parse(const char *s, uint8_t mac[6])
{
	if (strlen(s) != 17)
		return false;
	for (int i = 0; i < 6; i++) {
		int hi = hexval(s[i * 3]), lo = hexval(s[i * 3 + 1]);
		if (hi < 0 || lo < 0 || (i < 5 && s[i * 3 + 2] != ':'))
			return false;
		mac[i] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}

void e3_mac_fmt(const uint8_t m[6], char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x",
		 m[0], m[1], m[2], m[3], m[4], m[5]);
}

bool e3_mac_is_zero(const uint8_t m[6])
{
	return (m[0] | m[1] | m[2] | m[3] | m[4] | m[5]) == 0;
}

json_t *e3_mac_json(const uint8_t m[6])
{
	char s[18];
	e3_mac_fmt(m, s);
	return json_string(s);
}

json_t *e3_vlan_json(uint16_t vlan)
{
	return vlan == E3_VLAN_UNTAGGED ? json_string("untagged") : json_integer(vlan);
}

/* ---- params decoder ------------------------------------------ */
struct dec {
	char *msg;
	size_t len;
};

static int dec_fail(struct dec *d, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int dec_fail(struct dec *d, const char *path, const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(d->msg, d->len, "param '%s': %s", path, what);
	return -1;
}

static int decode_table(const json_t *obj, const struct e3_param *t, size_t n,
			void *out, uint64_t *seen, const char *where, struct dec *d);

static int dec_int(const json_t *v, const struct e3_param *p, void *dst,
		   const char *path, struct dec *d)
{
	if (!json_is_integer(v))
		return dec_fail(d, path, "must be an integer %" PRId64 "..%" PRId64,
				p->min, p->max);
	json_int_t x = json_integer_value(v);
	if (x < p->min || x > p->max)
		return dec_fail(d, path, "%" PRId64 " is out of range %" PRId64 "..%" PRId64,
				(int64_t)x, p->min, p->max);
	switch (p->type) {
	case E3_PT_U8: *(uint8_t *)dst = (uint8_t)x; break;
	case E3_PT_U16: *(uint16_t *)dst = (uint16_t)x; break;
	case E3_PT_I16: *(int16_t *)dst = (int16_t)x; break;
	case E3_PT_U32: *(uint32_t *)dst = (uint32_t)x; break;
	case E3_PT_I32: *(int32_t *)dst = (int32_t)x; break;
	default: *(int64_t *)dst = (int64_t)x; break;
	}
	return 0;
}

static int dec_value(const json_t *v, const struct e3_param *p, void *dst,
		     const char *path, struct dec *d)
{
	switch (p->type) {
	case E3_PT_BOOL:
		if (!json_is_boolean(v))
			return dec_fail(d, path, "must be true or false");
		*(bool *)dst = json_is_true(v);
		return 0;
	case E3_PT_U8:
	case E3_PT_U16:
	case E3_PT_I16:
	case E3_PT_U32:
	case E3_PT_I32:
	case E3_PT_I64:
		return dec_int(v, p, dst, path, d);
	case E3_PT_STR: {
		if (!json_is_string(v))
			return dec_fail(d, path, "must be a string");
		size_t len = json_string_length(v);
		const char *s = json_string_value(v);
		if (strlen(s) != len)
			return dec_fail(d, path, "must not contain NUL");
		if ((int64_t)len < p->min)
			return dec_fail(d, path, "must not be empty");
		if ((int64_t)len >= p->max)
			return dec_fail(d, path, "longer than %" PRId64 " characters", p->max - 1);
		memcpy(dst, s, len + 1);
		return 0;
	}
	case E3_PT_MAC:
		if (!json_is_string(v) || !e3_mac_parse(json_string_value(v), dst))
			return dec_fail(d, path, "must be a MAC address \"xx:xx:xx:xx:xx:xx\"");
		return 0;
	case E3_PT_VLAN:
		if (json_is_string(v) && strcmp(json_string_value(v), "untagged") == 0) {
			*(uint16_t *)dst = E3_VLAN_UNTAGGED;
			return 0;
		}
		if (!json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > 4094)
			return dec_fail(d, path, "must be a VLAN 1..4094 or \"untagged\"");
		*(uint16_t *)dst = (uint16_t)json_integer_value(v);
		return 0;
	case E3_PT_ENUM:
		if (json_is_string(v)) {
			for (int i = 0; p->names[i] != NULL; i++) {
				if (p->names[i][0] != '\0' &&
				    strcmp(p->names[i], json_string_value(v)) == 0) {
					*(int *)dst = i;
					return 0;
				}
			}
		}
		{
			char list[160] = "";
			for (int i = 0; p->names[i] != NULL; i++) {
				if (p->names[i][0] == '\0')
					continue;
				size_t l = strlen(list);
				snprintf(list + l, sizeof(list) - l, "%s\"%s\"", l ? ", " : "",
					 p->names[i]);
			}
			return dec_fail(d, path, "must be one of %s", list);
		}
	case E3_PT_ARRAY: {
		if (!json_is_array(v))
			return dec_fail(d, path, "must be an array");
		size_t n = json_array_size(v);
		if ((int64_t)n > p->max)
			return dec_fail(d, path, "more than %" PRId64 " entries", p->max);
		for (size_t i = 0; i < n; i++) {
			char ep[160];
			snprintf(ep, sizeof(ep), "%s[%zu]", path, i);
			if (dec_value(json_array_get(v, i), p->elem,
				      (char *)dst + i * p->elem_size, ep, d) < 0)
				return -1;
		}
		/* count_off is relative to the same base as off */
		*(uint16_t *)((char *)dst - p->off + p->count_off) = (uint16_t)n;
		return 0;
	}
	case E3_PT_OBJECT: {
		char where[170];
		snprintf(where, sizeof(where), "%s.", path);
		return decode_table(v, p->sub, p->n_sub, dst, NULL, where, d);
	}
	case E3_PT_JARRAY:
		if (!json_is_array(v))
			return dec_fail(d, path, "must be an array");
		*(const json_t **)dst = v;
		return 0;
	case E3_PT_JOBJECT:
		if (!json_is_object(v))
			return dec_fail(d, path, "must be an object");
		*(const json_t **)dst = v;
		return 0;
	}
	return dec_fail(d, path, "cannot be decoded");
}

static int decode_table(const json_t *obj, const struct e3_param *t, size_t n,
			void *out, uint64_t *seen, const char *where, struct dec *d)
{
	if (obj != NULL && !json_is_object(obj)) {
		if (where[0] == '\0')
			snprintf(d->msg, d->len, "params must be an object");
		else
			snprintf(d->msg, d->len, "param '%.*s' must be an object",
				 (int)strlen(where) - 1, where);
		return -1;
	}
	if (seen != NULL)
		*seen = 0;
	/* Unknown members first: a typo must not pass as "param omitted". */
	if (obj != NULL) {
		const char *key;
		json_t *v;
		char unknown[200] = "";
		int n_unknown = 0;
		json_object_foreach((json_t *)obj, key, v) {
			size_t i;
			for (i = 0; i < n; i++)
				if (strcmp(t[i].name, key) == 0)
					break;
			if (i < n)
				continue;
			size_t l = strlen(unknown);
			snprintf(unknown + l, sizeof(unknown) - l, "%s'%s%s'",
				 n_unknown ? ", " : "", where, key);
			n_unknown++;
		}
		if (n_unknown) {
			snprintf(d->msg, d->len, "unknown param%s %s", n_unknown > 1 ? "s" : "",
				 unknown);
			return -1;
		}
	}
	for (size_t i = 0; i < n; i++) {
		const json_t *v = obj != NULL ? json_object_get(obj, t[i].name) : NULL;
		char path[170];
		snprintf(path, sizeof(path), "%s%s", where, t[i].name);
		if (v == NULL || json_is_null(v)) {
			/* null means omitted, as Go's omitempty pointers can send it */
			if (t[i].required) {
				snprintf(d->msg, d->len, "missing param '%s'", path);
				return -1;
			}
			continue;
		}
		if (dec_value(v, &t[i], (char *)out + t[i].off, path, d) < 0)
			return -1;
		if (seen != NULL && i < 64)
			*seen |= 1ull << i;
	}
	return 0;
}

int e3_decode(const json_t *obj, const struct e3_param *t, size_t n, void *out,
	      uint64_t *seen, const char *where, char *msg, size_t msglen)
{
	struct dec d = { msg, msglen };
	uint64_t s = 0;
	int rc = decode_table(obj, t, n, out, &s, where != NULL ? where : "", &d);
	if (seen != NULL)
		*seen = s;
	return rc;
}

/* ---- params encoder: the decoder's inverse ------------------------------- */
static uint16_t enc_count(const struct e3_param *p, const void *src)
{
	/* count_off is relative to the same base as off */
	return *(const uint16_t *)((const char *)src - p->off + p->count_off);
}

static int64_t enc_int(const struct e3_param *p, const void *src)
{
	switch (p->type) {
	case E3_PT_U8: return *(const uint8_t *)src;
	case E3_PT_U16: return *(const uint16_t *)src;
	case E3_PT_I16: return *(const int16_t *)src;
	case E3_PT_U32: return *(const uint32_t *)src;
	case E3_PT_I32: return *(const int32_t *)src;
	default: return *(const int64_t *)src;
	}
}

static bool enc_zero(const struct e3_param *p, const void *src)
{
	switch (p->type) {
	case E3_PT_BOOL: return !*(const bool *)src;
	case E3_PT_STR: return *(const char *)src == '\0';
	case E3_PT_MAC: return e3_mac_is_zero(src);
	case E3_PT_VLAN: return *(const uint16_t *)src == 0;
	case E3_PT_ENUM: return *(const int *)src == 0;
	case E3_PT_ARRAY: return enc_count(p, src) == 0;
	case E3_PT_OBJECT:
	case E3_PT_JARRAY:
	case E3_PT_JOBJECT: return false;
	default: return enc_int(p, src) == 0;
	}
}

static json_t *enc_table(const struct e3_param *t, size_t n, const void *in, uint64_t skip,
			 uint64_t if_set, uint64_t unless_none);

static json_t *enc_value(const struct e3_param *p, const void *src)
{
	switch (p->type) {
	case E3_PT_BOOL: return json_boolean(*(const bool *)src);
	case E3_PT_STR: return json_string(src);
	case E3_PT_MAC: return e3_mac_json(src);
	case E3_PT_VLAN: return e3_vlan_json(*(const uint16_t *)src);
	case E3_PT_ENUM: {
		int v = *(const int *)src, i = 0;
		while (p->names[i] != NULL && i < v)
			i++;
		const char *name = i == v ? p->names[i] : NULL;
		return json_string(name != NULL && name[0] != '\0' ? name : "none");
	}
	case E3_PT_ARRAY: {
		json_t *a = json_array();
		unsigned n = enc_count(p, src);
		for (unsigned i = 0; a != NULL && i < n; i++)
			json_array_append_new(a, enc_value(p->elem, (const char *)src + i * p->elem_size));
		return a;
	}
	case E3_PT_OBJECT: return enc_table(p->sub, p->n_sub, src, 0, 0, 0);
	case E3_PT_JARRAY:
	case E3_PT_JOBJECT: return NULL;
	default: return json_integer(enc_int(p, src));
	}
}

static json_t *enc_table(const struct e3_param *t, size_t n, const void *in, uint64_t skip,
			 uint64_t if_set, uint64_t unless_none)
{
	json_t *o = json_object();
	for (size_t i = 0; o != NULL && i < n && i < 64; i++) {
		const void *src = (const char *)in + t[i].off;
		uint64_t bit = 1ull << i;
		if ((skip & bit) || ((if_set & bit) && enc_zero(&t[i], src)) ||
		    ((unless_none & bit) && t[i].type == E3_PT_U32 && *(const uint32_t *)src == E3_NONE))
			continue;
		json_t *v = enc_value(&t[i], src);
		if (v != NULL)
			json_object_set_new(o, t[i].name, v);
	}
	return o;
}

uint64_t e3_form_params(const struct e3_obj_type *t, const void *conf)
{
	const struct e3_forms *f = t->forms;
	if (f == NULL)
		return ~0ull;
	int v = e3_form_of(t, conf);
	return ~f->formed | (v >= 0 && v < f->n ? f->form[v].allow : 0);
}

json_t *e3_obj_json(const struct e3_obj_type *t, const void *conf)
{
	uint64_t applies = t->applies != NULL ? t->applies(conf) : e3_form_params(t, conf);
	const struct e3_dump none = { 0, 0, 0 }, *d = t->dump != NULL ? t->dump : &none;
	return enc_table(t->params, t->n_params, conf, ~applies | d->never, d->if_set,
			 d->unless_none);
}
