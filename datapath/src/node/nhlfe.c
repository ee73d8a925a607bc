/* SPDX-License-Identifier: Apache-2.0
 *
 * nhlfe.c - control of the NHLFEs: plain, protected and ECMP groups (node.h).
 */
#include <stdlib.h>
#include <string.h>

#include "base/dp.h"
#include "node/node.h"
#include "node/node_int.h"
#include "tables/nhlfe_table.h"

/* ---- nhlfes --------------------------------------------------------------- */

static uint32_t nhlfe_form(uint32_t id)
{
	return id < E3_MAX_NHLFES ? e3_nhlfe_get(id).label &
					    (E3_NHLFE_VALID | E3_NHLFE_PROTECTED | E3_NHLFE_ECMP) : 0;
}

static bool nhlfe_plain(uint32_t id)
{
	return nhlfe_form(id) == E3_NHLFE_VALID;
}

static bool nhlfe_ecmp(uint32_t id)
{
	return nhlfe_form(id) == (E3_NHLFE_VALID | E3_NHLFE_ECMP);
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
		e3_node_nhlfe_refs[c->primary] += d;
		e3_node_nhlfe_refs[c->backup] += d;
	} else {
		e3_node_nh_refs[c->nexthop] += d;
	}
}

static int nhlfe_validate(const struct e3_nhlfe_conf *c, char *err)
{
	if (c->id >= E3_MAX_NHLFES)
		return E3_ERR(err, E3_EINVAL, "id: must be < %u", E3_MAX_NHLFES);
	if (nhlfe_ecmp(c->id))
		return E3_ERR(err, E3_EEXIST, "nhlfe %u is an ECMP group: ecmp_del it first", c->id);
	if (!c->protect) {
		if (c->label < E3_LABEL_MIN || c->label >= E3_LABEL_SPACE)
			return E3_ERR(err, E3_EINVAL, "label: must be %u..%u", E3_LABEL_MIN,
				      E3_LABEL_SPACE - 1);
		if (c->nexthop >= E3_MAX_NEXTHOPS || !e3_node_nh_used[c->nexthop])
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
	if (e3_node_nhlfe_exists(c->id) && e3_node_nhlfe_refs[c->id] > 0 && !nhlfe_conf_of(c->id).protect)
		return E3_ERR(err, E3_EBUSY, "nhlfe %u is plain and used by a protected nhlfe, "
			      "a service or a label: it cannot become protected", c->id);
	return 0;
}

int e3_node_nhlfe_add(const struct e3_nhlfe_conf *c, char *err)
{
	if (e3_node_refs_init() != 0)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	int rc = nhlfe_validate(c, err);

	if (rc < 0)
		return rc;
	bool existed = e3_node_nhlfe_exists(c->id);
	struct e3_nhlfe_conf old = nhlfe_conf_of(c->id);

	if (existed && old.protect == c->protect &&
	    (c->protect ? old.primary == c->primary && old.backup == c->backup && old.watch == c->watch
			: old.label == c->label && old.nexthop == c->nexthop))
		return e3_node_ok(false);
	nhlfe_conf_refs(c, 1);
	if (existed)
		nhlfe_conf_refs(&old, -1);
	if (c->protect)
		e3_nhlfe_set_protected(c->id, c->primary, c->backup, c->watch);
	else
		e3_nhlfe_set(c->id, c->label, c->nexthop);
	return e3_node_ok(true);
}

int e3_node_nhlfe_del(uint32_t id, char *err)
{
	if (e3_node_refs_init() != 0)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	if (!e3_node_nhlfe_exists(id) || nhlfe_ecmp(id))
		return E3_ERR(err, E3_ENOENT, "nhlfe %u not found%s", id,
			      nhlfe_ecmp(id) ? " (it is an ECMP group: ecmp_del)" : "");
	if (e3_node_nhlfe_refs[id] > 0)
		return E3_ERR(err, E3_EBUSY, "nhlfe %u is used by %u services, labels, circuits, groups or protected nhlfes",
			      id, e3_node_nhlfe_refs[id]);
	struct e3_nhlfe_conf old = nhlfe_conf_of(id);

	e3_nhlfe_clear(id);
	nhlfe_conf_refs(&old, -1);
	return e3_node_ok(true);
}

void e3_node_nhlfe_walk(e3_nhlfe_walk_fn fn, void *arg)
{
	for (uint32_t id = 0; id < E3_MAX_NHLFES; id++) {
		if (!e3_node_nhlfe_exists(id) || nhlfe_ecmp(id))
			continue;
		struct e3_nhlfe_conf c = nhlfe_conf_of(id);

		fn(&c, arg);
	}
}

/* ---- ECMP groups ------------------------------------------------------------ */
/* Group slots in use; a group keeps its slot while it lives. */
static uint8_t ecmp_slot_used[E3_MAX_ECMPS];
static uint32_t ecmp_slot_next;

static uint32_t ecmp_slot_of(uint32_t id)
{
	return e3_nhlfe_get(id).label & E3_NHLFE_ID_MASK & (E3_MAX_ECMPS - 1);
}

static int ecmp_slot_alloc(uint32_t *slot)
{
	for (uint32_t k = 0; k < E3_MAX_ECMPS; k++) {
		uint32_t s = (ecmp_slot_next + k) % E3_MAX_ECMPS;

		if (!ecmp_slot_used[s]) {
			ecmp_slot_used[s] = 1;
			ecmp_slot_next = s + 1;
			*slot = s;
			return 0;
		}
	}
	return -1;
}

static struct e3_ecmp_conf ecmp_conf_of(uint32_t id)
{
	const struct e3_ecmp *g = e3_ecmp_tbl[ecmp_slot_of(id)];
	struct e3_ecmp_conf c = { .id = id };

	if (g != NULL) {
		c.n_members = g->n;
		memcpy(c.members, g->members, g->n * sizeof(g->members[0]));
	}
	return c;
}

static void ecmp_conf_refs(const struct e3_ecmp_conf *c, int d)
{
	for (unsigned i = 0; i < c->n_members; i++)
		e3_node_nhlfe_refs[c->members[i]] += d;
}

static int ecmp_validate(const struct e3_ecmp_conf *c, char *err)
{
	if (c->id >= E3_MAX_NHLFES)
		return E3_ERR(err, E3_EINVAL, "id: must be < %u", E3_MAX_NHLFES);
	if (c->n_members == 0 || c->n_members > E3_MAX_ECMP_MEMBERS)
		return E3_ERR(err, E3_EINVAL, "members: 1..%u nhlfes", E3_MAX_ECMP_MEMBERS);
	if (e3_node_nhlfe_exists(c->id) && !nhlfe_ecmp(c->id))
		return E3_ERR(err, E3_EEXIST, "nhlfe %u exists and is no ECMP group: nhlfe_del it first",
			      c->id);
	for (unsigned i = 0; i < c->n_members; i++) {
		uint32_t m = c->members[i];

		if (m == c->id || !e3_node_nhlfe_exists(m) || nhlfe_ecmp(m))
			return E3_ERR(err, E3_ENOENT, "members[%u]: nhlfe %u not found, or a group", i, m);
	}
	return 0;
}

int e3_node_ecmp_add(const struct e3_ecmp_conf *c, char *err)
{
	if (e3_node_refs_init() != 0)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	int rc = ecmp_validate(c, err);

	if (rc < 0)
		return rc;
	bool existed = nhlfe_ecmp(c->id);
	struct e3_ecmp_conf old = existed ? ecmp_conf_of(c->id) : (struct e3_ecmp_conf){ 0 };

	if (existed && old.n_members == c->n_members &&
	    memcmp(old.members, c->members, c->n_members * sizeof(c->members[0])) == 0)
		return e3_node_ok(false);
	struct e3_ecmp *g = calloc(1, sizeof(*g));
	uint32_t slot;

	if (g == NULL)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	if (existed) {
		slot = ecmp_slot_of(c->id);
	} else if (ecmp_slot_alloc(&slot) < 0) {
		free(g);
		return E3_ERR(err, E3_ENOSPC, "ECMP groups: all %u in use", E3_MAX_ECMPS);
	}
	g->n = c->n_members;
	memcpy(g->members, c->members, c->n_members * sizeof(c->members[0]));
	ecmp_conf_refs(c, 1);
	ecmp_conf_refs(&old, -1);
	e3_nhlfe_set_ecmp(c->id, slot, g);
	return e3_node_ok(true);
}

int e3_node_ecmp_del(uint32_t id, char *err)
{
	if (e3_node_refs_init() != 0)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	if (!nhlfe_ecmp(id))
		return E3_ERR(err, E3_ENOENT, "ECMP group %u not found", id);
	if (e3_node_nhlfe_refs[id] > 0)
		return E3_ERR(err, E3_EBUSY, "ECMP group %u is used by %u services or labels", id,
			      e3_node_nhlfe_refs[id]);
	struct e3_ecmp_conf old = ecmp_conf_of(id);
	uint32_t slot = ecmp_slot_of(id);

	e3_nhlfe_clear(id);
	e3_ecmp_release(slot);
	ecmp_slot_used[slot] = 0;
	ecmp_conf_refs(&old, -1);
	return e3_node_ok(true);
}

void e3_node_ecmp_walk(e3_ecmp_walk_fn fn, void *arg)
{
	for (uint32_t id = 0; id < E3_MAX_NHLFES; id++) {
		if (!nhlfe_ecmp(id))
			continue;
		struct e3_ecmp_conf c = ecmp_conf_of(id);

		fn(&c, arg);
	}
}
