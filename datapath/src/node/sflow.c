/* SPDX-License-Identifier: Apache-2.0
 *
 * sflow.c - the sampling rate of each port (the node's, or a port's own,
 * set by name and kept for a port added later) and the samples the agent
 * reads (pipeline/sflow.h).
 */
#include <string.h>

#include "node/node.h"
#include "node/node_int.h"
#include "pipeline/sflow.h"
#include "port/port.h"

static uint32_t node_rate;
static struct {
	char name[32];
	uint32_t rate;
} own[E3_MAX_PORTS];        /* ports with a rate of their own; name "" = free */

static uint32_t rate_of(const char *name)
{
	for (unsigned k = 0; k < E3_MAX_PORTS; k++)
		if (own[k].name[0] != '\0' && strcmp(own[k].name, name) == 0)
			return own[k].rate;
	return node_rate;
}

void e3_node_sflow_port_opened(const struct e3_port *p)
{
	__atomic_store_n(&e3_sflow_rate[p->port_id], rate_of(p->conf.name), __ATOMIC_RELAXED);
}

void e3_node_sflow_port_closed(uint16_t port_id)
{
	__atomic_store_n(&e3_sflow_rate[port_id], 0, __ATOMIC_RELAXED);
}

int e3_node_sflow_set(const char *port, uint32_t rate, char *err)
{
	if (rate > E3_SFLOW_RATE_MAX)
		return E3_ERR(err, E3_EINVAL, "rate: must be 0..%u", E3_SFLOW_RATE_MAX);
	if (port == NULL) {
		node_rate = rate;
		memset(own, 0, sizeof(own));   /* the node's rate is every port's */
	} else {
		unsigned k, free = E3_MAX_PORTS;

		if (!e3_node_str_ok(port, sizeof(own[0].name)))
			return E3_ERR(err, E3_EINVAL, "port: must be 1..31 characters");
		for (k = 0; k < E3_MAX_PORTS && strcmp(own[k].name, port) != 0; k++)
			if (own[k].name[0] == '\0' && free == E3_MAX_PORTS)
				free = k;
		if (k == E3_MAX_PORTS) {
			if (free == E3_MAX_PORTS)
				return E3_ERR(err, E3_ENOSPC, "at most %u ports with a rate of their own", E3_MAX_PORTS);
			k = free;
			snprintf(own[k].name, sizeof(own[k].name), "%s", port);
		}
		own[k].rate = rate;
	}
	for (uint16_t i = 0; i < RTE_MAX_ETHPORTS; i++)
		if (e3_port_tbl[i] != NULL)
			e3_node_sflow_port_opened(e3_port_tbl[i]);
	return e3_node_ok(true);
}

uint32_t e3_node_sflow_node_rate(void)
{
	return node_rate;
}

void e3_node_sflow_ports(e3_sflow_port_fn fn, void *arg)
{
	for (uint16_t i = 0; i < RTE_MAX_ETHPORTS; i++) {
		const struct e3_port *p = e3_port_tbl[i];
		uint64_t pool, drops;

		if (p == NULL)
			continue;
		e3_sflow_port(i, &pool, &drops);
		fn(p->conf.name, i, __atomic_load_n(&e3_sflow_rate[i], __ATOMIC_RELAXED), pool, drops, arg);
	}
}

unsigned e3_node_sflow_read(unsigned max, e3_sflow_sample_fn fn, void *arg)
{
	struct e3_sflow_sample s[16];
	unsigned got = 0, n;

	while (got < max && (n = e3_sflow_take(s, RTE_MIN(RTE_DIM(s), max - got))) > 0)
		for (unsigned k = 0; k < n; k++, got++) {
			const struct e3_port *in = e3_port_get(s[k].in_port);
			const struct e3_port *out = s[k].outputs ? e3_port_get(s[k].out_port) : NULL;

			fn(&s[k], in ? in->conf.name : NULL, out ? out->conf.name : NULL, arg);
		}
	return got;
}
