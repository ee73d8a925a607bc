/* SPDX-License-Identifier: Apache-2.0
 *
 * service_table.h - E-Line and E-LAN instances.
 *
 * A service is one immutable object, RCU-published by id. Anything that
 * changes it (its parameters, a circuit joining or leaving) builds a new
 * object and publishes that; the old one is freed after a grace period.
 */
#ifndef E3_SERVICE_TABLE_H
#define E3_SERVICE_TABLE_H

#include <stdint.h>

#include "base/defs.h"
#include "base/rcu.h"

struct e3_service {
	uint32_t id;
	uint8_t type;            /* enum e3_service_type */
	uint32_t nhlfe;          /* E-Line: toward the remote leaf, or E3_NONE = hairpin */
	uint32_t mac_limit;      /* E-LAN: 0 = the global default */
	uint16_t n_circuits;
	uint16_t n_branches;
	uint16_t n_sources;      /* length of remote_nhlfe[] (highest source + 1) */
	uint16_t n_remotes;      /* entries of remote_nhlfe[] that are set */
	uint16_t n_sites;  /* circuits whose BUM filter leaves something out */
	uint32_t *circuits;      /* local circuit ids */
	uint32_t *branches;      /* flood branches (nhlfe ids) */
	uint32_t *remote_nhlfe;  /* by source id; E3_NONE = no such remote */
	struct e3_site *site; /* by local circuit, as circuits[] */
	char name[64];
	uint32_t data[];         /* the arrays above */
};

extern struct e3_service *e3_service_tbl[E3_MAX_SERVICES];

static inline const struct e3_service *e3_service_get(uint32_t id)
{
	return id < E3_MAX_SERVICES ? E3_RCU_GET(e3_service_tbl[id]) : NULL;
}

/* Remote endpoint's nhlfe, or E3_NONE. */
static inline uint32_t e3_service_remote(const struct e3_service *s, uint16_t source)
{
	return source < s->n_sources ? s->remote_nhlfe[source] : E3_NONE;
}

/* The site of local circuit c (NULL: none, or not on a site). */
static inline const struct e3_site *e3_service_site(const struct e3_service *s, uint32_t c)
{
	if (s->n_sites == 0)
		return NULL;
	for (unsigned k = 0; k < s->n_circuits; k++)
		if (s->circuits[k] == c)
			return e3_site_any(&s->site[k]) ? &s->site[k] : NULL;
	return NULL;
}

/* Main lcore only. Build a service from c with the given local circuits
 * and their BUM filters (NULL: none filter). */
struct e3_service *e3_service_build(const struct e3_service_conf *c, const uint32_t *circuits,
				    const struct e3_site *site, uint16_t n_circuits);
/* Same parameters, with circuit (and its BUM filter bum) added or replaced
 * (site != NULL), or removed (site == NULL). */
struct e3_service *e3_service_with_circuit(const struct e3_service *s, uint32_t circuit,
					   const struct e3_site *site);
/* Fill conf back from an object (for dumps and idempotency checks). */
void e3_service_conf_of(const struct e3_service *s, struct e3_service_conf *c);
/* Publish s at id (NULL = remove), freeing the old one after a grace period. */
void e3_service_publish(uint32_t id, struct e3_service *s);

#endif
