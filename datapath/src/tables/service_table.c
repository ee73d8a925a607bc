/* SPDX-License-Identifier: Apache-2.0 */
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tables/service_table.h"

struct e3_service *e3_service_tbl[E3_MAX_SERVICES];

static struct e3_service *alloc_service(uint16_t n_circuits, uint16_t n_branches, uint16_t n_sources)
{
	size_t n = (size_t)n_circuits + n_branches + n_sources;
	struct e3_service *s = calloc(1, sizeof(*s) + n * sizeof(uint32_t) +
					     n_circuits * sizeof(struct e3_site));

	if (s == NULL)
		return NULL;
	s->n_circuits = n_circuits;
	s->n_branches = n_branches;
	s->n_sources = n_sources;
	s->circuits = s->data;
	s->branches = s->circuits + n_circuits;
	s->remote_nhlfe = s->branches + n_branches;
	s->site = (struct e3_site *)(s->remote_nhlfe + n_sources);
	return s;
}

/* Count the circuits with a BUM filter, so that a service with none (all
 * but multi-homed ones) floods without looking at any. */
static struct e3_service *count_sites(struct e3_service *s)
{
	s->n_sites = 0;
	for (unsigned i = 0; i < s->n_circuits; i++)
		s->n_sites += e3_site_any(&s->site[i]);
	return s;
}

struct e3_service *e3_service_build(const struct e3_service_conf *c, const uint32_t *circuits,
				    const struct e3_site *site, uint16_t n_circuits)
{
	uint16_t n_sources = 0;

	if (c->type == E3_SVC_ELAN)
		for (unsigned i = 0; i < c->n_remotes; i++)
			if (c->remotes[i].source + 1u > n_sources)
				n_sources = c->remotes[i].source + 1u;
	uint16_t n_branches = c->n_branches; /* an E-Line's: copies during a move */
	struct e3_service *s = alloc_service(n_circuits, n_branches, n_sources);

	if (s == NULL)
		return NULL;
	s->id = c->id;
	s->type = c->type;
	s->nhlfe = c->type == E3_SVC_ELINE ? c->nhlfe : E3_NONE;
	s->mac_limit = c->type == E3_SVC_ELAN ? c->mac_limit : 0;
	snprintf(s->name, sizeof(s->name), "%s", c->name);
	memcpy(s->circuits, circuits, sizeof(uint32_t) * n_circuits);
	if (site != NULL)
		memcpy(s->site, site, sizeof(*site) * n_circuits);
	memcpy(s->branches, c->branches, sizeof(uint32_t) * n_branches);
	for (unsigned i = 0; i < n_sources; i++)
		s->remote_nhlfe[i] = E3_NONE;
	if (c->type == E3_SVC_ELAN) {
		for (unsigned i = 0; i < c->n_remotes; i++)
			s->remote_nhlfe[c->remotes[i].source] = c->remotes[i].nhlfe;
		s->n_remotes = c->n_remotes;
	}
	return count_sites(s);
}

struct e3_service *e3_service_with_circuit(const struct e3_service *s, uint32_t circuit,
					   const struct e3_site *site)
{
	/* room for one more: the circuit may be new */
	struct e3_service *ns = alloc_service(s->n_circuits + 1, s->n_branches, s->n_sources);

	if (ns == NULL)
		return NULL;
	ns->id = s->id;
	ns->type = s->type;
	ns->nhlfe = s->nhlfe;
	ns->mac_limit = s->mac_limit;
	ns->n_remotes = s->n_remotes;
	memcpy(ns->name, s->name, sizeof(ns->name));
	memcpy(ns->branches, s->branches, sizeof(uint32_t) * s->n_branches);
	memcpy(ns->remote_nhlfe, s->remote_nhlfe, sizeof(uint32_t) * s->n_sources);
	uint16_t k = 0;

	for (unsigned i = 0; i < s->n_circuits; i++) {
		if (s->circuits[i] == circuit)
			continue;
		ns->site[k] = s->site[i];
		ns->circuits[k++] = s->circuits[i];
	}
	if (site != NULL) {
		ns->site[k] = *site;
		ns->circuits[k++] = circuit;
	}
	ns->n_circuits = k;
	return count_sites(ns);
}

void e3_service_conf_of(const struct e3_service *s, struct e3_service_conf *c)
{
	memset(c, 0, offsetof(struct e3_service_conf, remotes));
	c->id = s->id;
	c->type = s->type;
	snprintf(c->name, sizeof(c->name), "%s", s->name);
	c->nhlfe = s->nhlfe;
	c->mac_limit = s->mac_limit;
	c->n_remotes = 0;
	for (unsigned i = 0; i < s->n_sources; i++)
		if (s->remote_nhlfe[i] != E3_NONE)
			c->remotes[c->n_remotes++] = (struct e3_remote){ .source = (uint16_t)i, .nhlfe = s->remote_nhlfe[i] };
	c->n_branches = s->n_branches;
	memcpy(c->branches, s->branches, sizeof(uint32_t) * s->n_branches);
}

void e3_service_publish(uint32_t id, struct e3_service *s)
{
	struct e3_service *old = e3_service_tbl[id];

	E3_RCU_SET(e3_service_tbl[id], s);
	e3_rcu_free(old);
}
