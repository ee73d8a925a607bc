/* SPDX-License-Identifier: Apache-2.0
 *
 * nhlfe.c - control of the NHLFEs, plain and protected (ctl.h).
 */
#include "base/dp.h"
#include "ctl/ctl.h"
#include "ctl/ctl_int.h"
#include "tables/nhlfe_table.h"

/* ---- nhlfes --------------------------------------------------------------- */

static bool nhlfe_plain(uint32_t id)
{
	return id < E3_MAX_NHLFES &&
	       (e3_nhlfe_get(id).label & (E3_NHLFE_VALID | E3_NHLFE_PROTECTED)) == E3_NHLFE_VALID;
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
		e3_ctl_nhlfe_refs[c->primary] += d;
		e3_ctl_nhlfe_refs[c->backup] += d;
	} else {
		e3_ctl_nh_refs[c->nexthop] += d;
	}
}

static int nhlfe_validate(const struct e3_nhlfe_conf *c, char *err)
{
	if (c->id >= E3_MAX_NHLFES)
		return E3_ERR(err, E3_EINVAL, "id: must be < %u", E3_MAX_NHLFES);
	if (!c->protect) {
		if (c->label < E3_LABEL_MIN || c->label >= E3_LABEL_SPACE)
			return E3_ERR(err, E3_EINVAL, "label: must be %u..%u", E3_LABEL_MIN,
				      E3_LABEL_SPACE - 1);
		if (c->nexthop >= E3_MAX_NEXTHOPS || !e3_ctl_nh_used[c->nexthop])
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
	if (e3_ctl_nhlfe_exists(c->id) && e3_ctl_nhlfe_refs[c->id] > 0 && !nhlfe_conf_of(c->id).protect)
		return E3_ERR(err, E3_EBUSY, "nhlfe %u is plain and used by a protected nhlfe, "
			      "a service or a label: it cannot become protected", c->id);
	return 0;
}

int e3_ctl_nhlfe_add(const struct e3_nhlfe_conf *c, char *err)
{
	if (e3_ctl_refs_init() != 0)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	int rc = nhlfe_validate(c, err);

	if (rc < 0)
		return rc;
	bool existed = e3_ctl_nhlfe_exists(c->id);
	struct e3_nhlfe_conf old = nhlfe_conf_of(c->id);

	if (existed && old.protect == c->protect &&
	    (c->protect ? old.primary == c->primary && old.backup == c->backup && old.watch == c->watch
			: old.label == c->label && old.nexthop == c->nexthop))
		return e3_ctl_ok(false);
	nhlfe_conf_refs(c, 1);
	if (existed)
		nhlfe_conf_refs(&old, -1);
	if (c->protect)
		e3_nhlfe_set_protected(c->id, c->primary, c->backup, c->watch);
	else
		e3_nhlfe_set(c->id, c->label, c->nexthop);
	return e3_ctl_ok(true);
}

int e3_ctl_nhlfe_del(uint32_t id, char *err)
{
	if (e3_ctl_refs_init() != 0)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	if (!e3_ctl_nhlfe_exists(id))
		return E3_ERR(err, E3_ENOENT, "nhlfe %u not found", id);
	if (e3_ctl_nhlfe_refs[id] > 0)
		return E3_ERR(err, E3_EBUSY, "nhlfe %u is used by %u services, labels or protected nhlfes",
			      id, e3_ctl_nhlfe_refs[id]);
	struct e3_nhlfe_conf old = nhlfe_conf_of(id);

	e3_nhlfe_clear(id);
	nhlfe_conf_refs(&old, -1);
	return e3_ctl_ok(true);
}

void e3_ctl_nhlfe_walk(e3_nhlfe_walk_fn fn, void *arg)
{
	for (uint32_t id = 0; id < E3_MAX_NHLFES; id++) {
		if (!e3_ctl_nhlfe_exists(id))
			continue;
		struct e3_nhlfe_conf c = nhlfe_conf_of(id);

		fn(&c, arg);
	}
}
