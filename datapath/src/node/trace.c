/* SPDX-License-Identifier: Apache-2.0
 *
 * trace.c - packet trace control (node.h): arming the workers' rings, and
 * reading their binary records back as text.
 */
#include <stdio.h>
#include <string.h>

#include "base/bfd.h"
#include "base/dp.h"
#include "node/node.h"
#include "node/node_int.h"
#include "pipeline/trace.h"
#include "port/port.h"

int e3_node_trace_start(const struct e3_trace_filter *f, uint32_t n, char *err)
{
	int32_t port = -1;

	if (n == 0 || n > E3_TRACE_MAX)
		return E3_ERR(err, E3_EINVAL, "count: must be 1..%u", E3_TRACE_MAX);
	if (strnlen(f->port, sizeof(f->port)) == sizeof(f->port))
		return E3_ERR(err, E3_EINVAL, "port: too long");
	if (f->port[0] != 0) {
		const struct e3_port *p = e3_node_port_by_name(f->port);

		if (p == NULL)
			return E3_ERR(err, E3_ENOENT, "port %s not found", f->port);
		port = p->port_id;
	}
	if (f->vlan < -1 || f->vlan > E3_VLAN_UNTAGGED)
		return E3_ERR(err, E3_EINVAL, "vlan: must be 0..4095 or untagged");
	if (f->label < -1 || f->label >= E3_LABEL_SPACE)
		return E3_ERR(err, E3_EINVAL, "label: must be 0..%u", E3_LABEL_SPACE - 1);
	e3_trace_arm(port, f->vlan, f->label, n);
	return e3_node_ok(true);
}

/* Appends event e as text to out (size n, at offset *o), its conversions
 * resolved as trace.h describes them. */
static void format_event(const struct e3_trace_event *e, char *out, size_t n, size_t *o)
{
	const char *f = e->id < E3_TEV_MAX ? e3_trace_formats[e->id] : "event %u";
	unsigned k = 0;

	for (; *f != 0 && *o + 1 < n; f++) {
		if (f[0] != '%' || f[1] == 0) {
			out[(*o)++] = *f;
			continue;
		}
		uint32_t a = k < e->n ? e->a[k++] : e->id;
		const struct e3_port *p;
		int w;

		switch (*++f) {
		case 'u':
			w = snprintf(out + *o, n - *o, "%u", a);
			break;
		case 'd':
			w = snprintf(out + *o, n - *o, "%d", (int32_t)a);
			break;
		case 'p':
			p = a < RTE_MAX_ETHPORTS ? e3_port_get((uint16_t)a) : NULL;
			w = p ? snprintf(out + *o, n - *o, "%s", p->conf.name) : snprintf(out + *o, n - *o, "port %u", a);
			break;
		case 'D':
			w = snprintf(out + *o, n - *o, "%s", e3_drop_name((enum e3_drop)a));
			break;
		case 'S':
			w = snprintf(out + *o, n - *o, "%s", e3_bfd_state_name((uint8_t)a));
			break;
		case 'o':
			w = snprintf(out + *o, n - *o, "%s", a ? "on" : "off");
			break;
		default:
			w = snprintf(out + *o, n - *o, "%%%c", *f);
			break;
		}
		*o = w < 0 ? *o : RTE_MIN(*o + (size_t)w, n - 1);
	}
	out[*o] = 0;
}

struct walk {
	e3_trace_walk_fn fn;
	void *arg;
};

/* A worker's binary record as the API's record: the path one line per
 * event, and the verdict. */
static void format_slot(const struct e3_trace_slot *s, void *arg)
{
	const struct walk *wk = arg;
	struct e3_trace_record r = { .seq = s->seq, .tsc_ns = s->tsc_ns, .len = s->len, .cap_len = s->cap_len };
	const struct e3_port *p = e3_port_get(s->rx_port);
	size_t o = 0;

	if (p != NULL)
		snprintf(r.rx_port, sizeof(r.rx_port), "%s", p->conf.name);
	else
		snprintf(r.rx_port, sizeof(r.rx_port), "port %u", s->rx_port);
	memcpy(r.data, s->data, RTE_MIN((size_t)s->cap_len, sizeof(r.data)));
	for (unsigned k = 0; k < s->n_ev && o + 1 < sizeof(r.path); k++) {
		format_event(&s->ev[k], r.path, sizeof(r.path), &o);
		if (o + 1 < sizeof(r.path)) {
			r.path[o++] = '\n';
			r.path[o] = 0;
		}
	}
	o = 0;
	format_event(&s->verdict, r.verdict, sizeof(r.verdict), &o);
	wk->fn(&r, wk->arg);
}

void e3_node_trace_walk(e3_trace_walk_fn fn, void *arg)
{
	struct walk wk = { fn, arg };

	e3_trace_walk_slots(format_slot, &wk);
}
