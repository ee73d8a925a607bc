/* SPDX-License-Identifier: Apache-2.0
 *
 * label.c - control of the label entries (node.h).
 */
#include <string.h>

#include "base/dp.h"
#include "node/node.h"
#include "node/node_int.h"
#include "port/port.h"
#include "tables/label_table.h"
#include "tables/nhlfe_table.h"
#include "tables/service_table.h"
#include "worker/stats.h"

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
	case E3_LBL_CIRCUIT:
		c->circuit = e.index;
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
		mask |= 1u << e3_node_port_by_name(c->in_ports[i])->port_id;
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
	case E3_LBL_CIRCUIT:
		return a->circuit == b->circuit;
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
		e3_node_port_refs[e3_node_port_by_name(c->in_ports[i])->port_id] += d;
	switch (c->type) {
	case E3_LBL_SWAP:
		e3_node_nhlfe_refs[c->nhlfe] += d;
		break;
	case E3_LBL_ELINE:
	case E3_LBL_ELAN:
		e3_node_svc_refs[c->service] += d;
		break;
	case E3_LBL_REPLICATE:
		for (unsigned i = 0; i < c->n_branches; i++)
			e3_node_nhlfe_refs[c->branches[i]] += d;
		if (c->service != E3_NONE)
			e3_node_svc_refs[c->service] += d;
		e3_node_port_refs[e3_node_port_by_name(c->rpf_port)->port_id] += d;
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

/* A label entry may take frames from every port of its node: the
 * controller never has to leave one out. */
_Static_assert(E3_MAX_IN_PORTS == E3_MAX_PORTS, "in_ports: any of the node's ports");

static int label_validate(const struct e3_label_conf *c, char *err)
{
	if (c->label < E3_LABEL_MIN || c->label >= E3_LABEL_SPACE)
		return E3_ERR(err, E3_EINVAL, "label: must be %u..%u", E3_LABEL_MIN, E3_LABEL_SPACE - 1);
	if (c->n_in_ports > E3_MAX_IN_PORTS)
		return E3_ERR(err, E3_EINVAL, "in_ports: at most %u", E3_MAX_IN_PORTS);
	for (unsigned i = 0; i < c->n_in_ports; i++) {
		const struct e3_port *p = strnlen(c->in_ports[i], sizeof(c->in_ports[i])) <
						  sizeof(c->in_ports[i]) ?
					  e3_node_port_by_name(c->in_ports[i]) : NULL;

		if (p == NULL)
			return E3_ERR(err, E3_ENOENT, "in_ports[%u]: port %.31s not found", i, c->in_ports[i]);
		if (p->kind != E3_PORT_FABRIC)
			return E3_ERR(err, E3_EINVAL, "in_ports[%u]: %s is not a fabric port", i, c->in_ports[i]);
	}
	switch (c->type) {
	case E3_LBL_SWAP:
		if (!e3_node_nhlfe_exists(c->nhlfe))
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
		const struct e3_port *p = e3_node_port_by_name(c->rpf_port);

		if (p == NULL)
			return E3_ERR(err, E3_ENOENT, "rpf_port %s not found", c->rpf_port);
		if (p->kind != E3_PORT_FABRIC)
			return E3_ERR(err, E3_EINVAL, "rpf_port: %s is not a fabric port", c->rpf_port);
		if (c->n_branches > E3_MAX_BRANCHES)
			return E3_ERR(err, E3_EINVAL, "branches: at most %u", E3_MAX_BRANCHES);
		for (unsigned i = 0; i < c->n_branches; i++)
			if (!e3_node_nhlfe_exists(c->branches[i]))
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
	case E3_LBL_CIRCUIT:
		/* Like an OAM entry's session, the circuit may come later (or
		 * go first): until then its frames count as no_service. */
		if (c->circuit >= E3_MAX_CIRCUITS)
			return E3_ERR(err, E3_EINVAL, "circuit: must be < %u", E3_MAX_CIRCUITS);
		return 0;
	default:
		return E3_ERR(err, E3_EINVAL, "type: must be swap, eline, elan, replicate, oam or circuit");
	}
}

static struct e3_label_conf lc_old;

int e3_node_label_add(const struct e3_label_conf *c, char *err)
{
	if (e3_node_refs_init() != 0)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	int rc = label_validate(c, err);

	if (rc != 0)
		return rc;
	label_conf_of(c->label, &lc_old);
	if (label_same(&lc_old, c))
		return e3_node_ok(false);
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
	case E3_LBL_CIRCUIT:
		e.index = c->circuit;
		break;
	default: {
		struct e3_replicate *r = malloc(sizeof(*r) + sizeof(uint32_t) * c->n_branches);

		if (r == NULL)
			return E3_ERR(err, E3_ENOSPC, "out of memory");
		r->rpf_port = e3_node_port_by_name(c->rpf_port)->port_id;
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
	return e3_node_ok(true);
}

int e3_node_label_del(uint32_t label, char *err)
{
	if (label >= E3_LABEL_SPACE || e3_label_get(label).type == E3_LBL_NONE)
		return E3_ERR(err, E3_ENOENT, "label %u not found", label);
	struct e3_label_entry old = e3_label_get(label);

	label_conf_of(label, &lc_old);
	label_refs(&lc_old, -1);
	e3_label_set(label, (struct e3_label_entry){ 0 });
	if (old.type == E3_LBL_REPLICATE)
		e3_repl_release(old.index);
	return e3_node_ok(true);
}

void e3_node_label_walk(e3_label_walk_fn fn, void *arg)
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
