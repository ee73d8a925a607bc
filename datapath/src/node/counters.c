/* SPDX-License-Identifier: Apache-2.0
 *
 * counters.c - workers' counters and drops (node.h).
 */
#include <string.h>

#include "node/node.h"
#include "port/port.h"
#include "tables/mac_table.h"
#include "tables/service_table.h"
#include "worker/stats.h"
#include "worker/worker.h"

/* ---- counters -------------------------------------------------------------------------- */

int e3_node_worker_count(void)
{
	return e3.n_workers;
}

int e3_node_worker_get(int idx, struct e3_worker_info *o)
{
	if (idx < 0 || idx >= e3.n_workers)
		return -E3_ENOENT;
	const struct e3_worker *w = e3_workers[idx];
	const struct e3_qlist *ql = w->qlist;

	memset(o, 0, offsetof(struct e3_worker_info, queues));
	o->lcore = w->lcore;
	o->polls = w->polls;
	o->busy_polls = w->busy_polls;
	o->idle_sleeps = w->idle_sleeps;
	o->rx_pkts = w->rx_pkts;
	o->n_queues = ql->n;
	for (unsigned k = 0; k < ql->n; k++) {
		o->queues[k].port_id = ql->q[k].port;
		o->queues[k].queue = ql->q[k].queue;
		const struct e3_port *p = e3_port_tbl[ql->q[k].port];

		snprintf(o->queues[k].port, sizeof(o->queues[k].port), "%s", p ? p->conf.name : "");
	}
	return 0;
}

void e3_node_drops_total(uint64_t out[E3_DROP_MAX])
{
	struct e3_port_ctr c;

	memset(out, 0, sizeof(uint64_t) * E3_DROP_MAX);
	for (uint16_t p = 0; p < RTE_MAX_ETHPORTS; p++) {
		if (e3_port_tbl[p] == NULL)
			continue;
		e3_stats_port(p, &c);
		for (int d = 0; d < E3_DROP_MAX; d++)
			out[d] += c.drops[d];
	}
}

int e3_node_runtime_get(int idx, struct e3_runtime *out)
{
	if (idx < 0 || idx >= e3.n_workers)
		return -E3_ENOENT;
	e3_runtime_get((unsigned)idx, out);
	return 0;
}

int e3_node_runtime_clear(unsigned sample, char *err)
{
	if (sample == 0 || sample > E3_RT_SAMPLE_MAX || (sample & (sample - 1)) != 0)
		return E3_ERR(err, E3_EINVAL, "sample: must be a power of two, 1..%u", E3_RT_SAMPLE_MAX);
	e3_runtime_clear(sample);
	return 0;
}

void e3_node_stats_clear(void)
{
	e3_stats_clear_all();
	for (uint32_t id = 0; id < E3_MAX_SERVICES; id++)
		if (e3_service_tbl[id] != NULL)
			e3_mac_svc_reset(id);
}
