/* SPDX-License-Identifier: Apache-2.0
 *
 * service.c - control of the services (node.h).
 */
#include <stdlib.h>
#include <string.h>

#include "node/node.h"
#include "node/node_int.h"
#include "tables/mac_table.h"
#include "tables/service_table.h"
#include "worker/stats.h"

/* ---- services ---------------------------------------------------------------- */

static void service_refs(const struct e3_service *s, int d)
{
	if (s == NULL)
		return;
	if (s->type == E3_SVC_ELINE && s->nhlfe != E3_NONE)
		e3_node_nhlfe_refs[s->nhlfe] += d;
	for (unsigned i = 0; i < s->n_branches; i++)
		e3_node_nhlfe_refs[s->branches[i]] += d;
	for (unsigned i = 0; i < s->n_sources; i++)
		if (s->remote_nhlfe[i] != E3_NONE)
			e3_node_nhlfe_refs[s->remote_nhlfe[i]] += d;
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
		if (c->nhlfe != E3_NONE && !e3_node_nhlfe_exists(c->nhlfe))
			return E3_ERR(err, E3_ENOENT, "nhlfe %u not found", c->nhlfe);
		if (c->n_remotes)
			return E3_ERR(err, E3_EINVAL, "remotes: only for an elan");
		/* An E-Line's branches get a copy of each frame from its
		 * circuit: the other end's old and new place during a move. */
		if (c->n_branches > E3_MAX_ELINE_COPIES)
			return E3_ERR(err, E3_EINVAL, "branches: at most %u for an eline", E3_MAX_ELINE_COPIES);
		if (c->n_branches && c->nhlfe == E3_NONE)
			return E3_ERR(err, E3_EINVAL, "branches: an eline with branches needs an nhlfe");
		for (unsigned i = 0; i < c->n_branches; i++) {
			if (!e3_node_nhlfe_exists(c->branches[i]))
				return E3_ERR(err, E3_ENOENT, "branches[%u]: nhlfe %u not found", i, c->branches[i]);
			if (c->branches[i] == c->nhlfe || (i > 0 && c->branches[i] == c->branches[0]))
				return E3_ERR(err, E3_EINVAL, "branches[%u]: nhlfe %u given twice", i, c->branches[i]);
		}
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
		else if (!e3_node_nhlfe_exists(r->nhlfe))
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
		if (!e3_node_nhlfe_exists(c->branches[i]))
			return E3_ERR(err, E3_ENOENT, "branches[%u]: nhlfe %u not found", i, c->branches[i]);
		for (unsigned j = 0; j < i; j++)
			if (c->branches[j] == c->branches[i])
				return E3_ERR(err, E3_EINVAL, "branches[%u]: nhlfe %u given twice", i, c->branches[i]);
	}
	return 0;
}

/* Most local circuits a service may have. */
int e3_node_service_add(const struct e3_service_conf *c, char *err)
{
	if (e3_node_refs_init() != 0)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	int rc = service_validate(c, err);

	if (rc != 0)
		return rc;
	const struct e3_service *old = e3_service_get(c->id);

	if (old != NULL) {
		if (old->type != c->type && e3_node_svc_refs[c->id] > 0)
			return E3_ERR(err, E3_EBUSY, "service %u: cannot change type while %u labels use it",
				      c->id, e3_node_svc_refs[c->id]);
		uint32_t nh = c->type == E3_SVC_ELINE ? c->nhlfe : E3_NONE;

		if (old->n_circuits > e3_node_service_max_circuits(c->type, nh))
			return E3_ERR(err, E3_EBUSY, "service %u has %u circuits, more than this type allows",
				      c->id, old->n_circuits);
	}
	struct e3_service *s = e3_service_build(c, old ? old->circuits : NULL, old ? old->site : NULL,
						old ? old->n_circuits : 0);

	if (s == NULL)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	if (old != NULL && service_same(old, s)) {
		free(s);
		return e3_node_ok(false);
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
	return e3_node_ok(true);
}

int e3_node_service_del(uint32_t id, char *err)
{
	const struct e3_service *s = e3_service_get(id);

	if (s == NULL)
		return E3_ERR(err, E3_ENOENT, "service %u not found", id);
	if (s->n_circuits > 0)
		return E3_ERR(err, E3_EBUSY, "service %u has %u circuits", id, s->n_circuits);
	if (e3_node_svc_refs[id] > 0)
		return E3_ERR(err, E3_EBUSY, "service %u is used by %u labels", id, e3_node_svc_refs[id]);
	service_refs(s, -1);
	e3_service_publish(id, NULL);
	e3_mac_flush(id, E3_NONE);
	return e3_node_ok(true);
}

void e3_node_service_walk(e3_service_walk_fn fn, void *arg)
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
			.bum_filtered = c.bum_filtered, .redirected = c.redirected,
			.frozen = ms->frozen,
		};
		fn(&info, arg);
	}
}
