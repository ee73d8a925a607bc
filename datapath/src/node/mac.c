/* SPDX-License-Identifier: Apache-2.0
 *
 * mac.c - the MAC tables as the control side sees them (node.h).
 */
#include "node/node.h"
#include "node/node_int.h"
#include "tables/mac_table.h"
#include "tables/service_table.h"

/* ---- MAC table ------------------------------------------------------------------------ */

void e3_node_mac_walk(uint32_t service, e3_mac_walk_fn fn, void *arg)
{
	e3_mac_walk(service, fn, arg);
}

int e3_node_mac_flush(uint32_t service, char *err)
{
	if (service != E3_NONE && e3_service_get(service) == NULL)
		return E3_ERR(err, E3_ENOENT, "service %u not found", service);
	uint32_t n = e3_mac_flush(service, E3_NONE);

	e3_node_ok(n > 0);
	return (int)n;
}

int e3_node_mac_restore(const struct e3_mac_info *m, char *err)
{
	if (e3_service_get(m->service) == NULL)
		return E3_ERR(err, E3_ENOENT, "service %u not found", m->service);
	e3_mac_restore(m->service, m->mac, m->remote ? E3_MAC_REMOTE | m->source : m->circuit);
	return 0;
}
