/* SPDX-License-Identifier: Apache-2.0
 *
 * telemetry.c - e3-vswitchd's counters in DPDK telemetry, so that
 * dpdk-telemetry.py (socket /var/run/dpdk/<prefix>/dpdk_telemetry.v2) reads
 * them beside DPDK's own /ethdev/... commands:
 *   /e3/info            version, boot id, uptime, workers, object counts
 *   /e3/ports           names of the ports
 *   /e3/port,NAME       one port's counters, drops by reason
 *   /e3/drops           drops by reason, all ports
 *   /e3/services        ids of the services (first 512)
 *   /e3/service,ID      one service's counters
 *   /e3/workers         per worker: lcore, polls, idle sleeps, packets
 * Callbacks run on DPDK's telemetry thread, so each takes the control lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "rpc/rpc.h"
#include "rpc/rpc_int.h"

static void add_drops(struct rte_tel_data *d, const uint64_t drops[E3_DROP_MAX])
{
	for (int i = 0; i < E3_DROP_MAX; i++)
		rte_tel_data_add_dict_u64(d, e3_drop_name(i), drops[i]);
}

/* ---- /e3/info ------------------------------------------ */
struct counts {
	int ports, services, circuits;
};
static void count_port(const struct e3_port_info *p, void *arg)
{
	(void)p;
	((struct counts *)arg)->ports++;
}
static void count_service(const struct e3_service_info *s, void *arg)
{
	(void)s;
	((struct counts *)arg)->services++;
}
static void count_circuit(const struct e3_circuit_info *c, void *arg)
{
	(void)c;
	((struct counts *)arg)->circuits++;
}

static int tel_info(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	struct counts n = { 0 };
	e3_node_lock();
	e3_node_port_walk(count_port, &n);
	e3_node_service_walk(count_service, &n);
	e3_node_circuit_walk(count_circuit, &n);
	int workers = e3_node_worker_count();
	char boot_id[64];
	snprintf(boot_id, sizeof(boot_id), "%s", e3_node_boot_id());
	e3_node_unlock();
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "version", E3_VERSION);
	rte_tel_data_add_dict_string(d, "boot_id", boot_id);
	rte_tel_data_add_dict_string(d, "poll_mode", e3_node_poll_mode_name());
	rte_tel_data_add_dict_u64(d, "uptime_s", (uint64_t)e3_node_uptime_s());
	rte_tel_data_add_dict_int(d, "workers", workers);
	rte_tel_data_add_dict_int(d, "ports", n.ports);
	rte_tel_data_add_dict_int(d, "services", n.services);
	rte_tel_data_add_dict_int(d, "circuits", n.circuits);
	return 0;
}

/* ---- ports ------------------------------------------ */
static void list_port(const struct e3_port_info *p, void *arg)
{
	rte_tel_data_add_array_string(arg, p->conf.name);
}

static int tel_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_array(d, RTE_TEL_STRING_VAL);
	e3_node_lock();
	e3_node_port_walk(list_port, d);
	e3_node_unlock();
	return 0;
}

static int tel_port(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	if (params == NULL || params[0] == '\0')
		return -1;
	struct e3_port_info *p = malloc(sizeof(*p));
	char err[E3_ERRLEN];
	if (p == NULL)
		return -1;
	e3_node_lock();
	int rc = e3_node_port_get(params, p, err);
	e3_node_unlock();
	if (rc < 0) {
		free(p);
		return -1;
	}
	struct rte_tel_data *drops = rte_tel_data_alloc();
	if (drops == NULL) {
		free(p);
		return -1;
	}
	rte_tel_data_start_dict(drops);
	add_drops(drops, p->drops);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "name", p->conf.name);
	rte_tel_data_add_dict_string(d, "kind",
				     p->conf.kind == E3_PORT_FABRIC ? "fabric" : "customer");
	rte_tel_data_add_dict_int(d, "port_id", p->dpdk_port_id);
	rte_tel_data_add_dict_string(d, "link", p->link_up ? "up" : "down");
	rte_tel_data_add_dict_u64(d, "speed_mbps", p->speed_mbps);
	rte_tel_data_add_dict_u64(d, "rx_pkts", p->rx_pkts);
	rte_tel_data_add_dict_u64(d, "rx_bytes", p->rx_bytes);
	rte_tel_data_add_dict_u64(d, "tx_pkts", p->tx_pkts);
	rte_tel_data_add_dict_u64(d, "tx_bytes", p->tx_bytes);
	rte_tel_data_add_dict_u64(d, "tx_retries", p->tx_retries);
	rte_tel_data_add_dict_container(d, "drops", drops, 0);
	free(p);
	return 0;
}

static int tel_drops(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	uint64_t drops[E3_DROP_MAX];
	e3_node_lock();
	e3_node_drops_total(drops);
	e3_node_unlock();
	rte_tel_data_start_dict(d);
	add_drops(d, drops);
	return 0;
}

/* ---- services ------------------------------------------ */
struct svc_walk {
	struct rte_tel_data *d;
	int n;
	uint32_t id; /* /e3/service: the one wanted */
	bool found;
};

static void list_service(const struct e3_service_info *s, void *arg)
{
	struct svc_walk *w = arg;
	if (w->n++ < RTE_TEL_MAX_ARRAY_ENTRIES)
		rte_tel_data_add_array_int(w->d, (int)s->conf->id);
}

static int tel_services(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	struct svc_walk w = { .d = d };
	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	e3_node_lock();
	e3_node_service_walk(list_service, &w);
	e3_node_unlock();
	return 0;
}

static void one_service(const struct e3_service_info *s, void *arg)
{
	struct svc_walk *w = arg;
	if (s->conf->id != w->id)
		return;
	w->found = true;
	struct rte_tel_data *d = w->d;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_int(d, "id", (int)s->conf->id);
	rte_tel_data_add_dict_string(d, "type", s->conf->type == E3_SVC_ELAN ? "elan" : "eline");
	rte_tel_data_add_dict_string(d, "name", s->conf->name);
	rte_tel_data_add_dict_u64(d, "circuits", s->n_circuits);
	rte_tel_data_add_dict_u64(d, "macs", s->n_macs);
	rte_tel_data_add_dict_u64(d, "frozen", s->frozen);
#define E3_SVC_COUNTER_TEL(name) rte_tel_data_add_dict_u64(d, #name, s->name);
	E3_SVC_COUNTERS(E3_SVC_COUNTER_TEL)
#undef E3_SVC_COUNTER_TEL
}

static int tel_service(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	char *end;
	if (params == NULL || params[0] == '\0')
		return -1;
	unsigned long id = strtoul(params, &end, 10);
	if (*end != '\0' || id >= E3_MAX_SERVICES)
		return -1;
	struct svc_walk w = { .d = d, .id = (uint32_t)id };
	e3_node_lock();
	e3_node_service_walk(one_service, &w);
	e3_node_unlock();
	return w.found ? 0 : -1;
}

/* ---- BFD sessions ------------------------------------------ */
static void one_bfd(const struct e3_bfd_info *b, void *arg)
{
	struct rte_tel_data *d = arg, *s = rte_tel_data_alloc();
	char key[16];

	if (s == NULL)
		return;
	rte_tel_data_start_dict(s);
	rte_tel_data_add_dict_string(s, "port", b->port);
	rte_tel_data_add_dict_string(s, "state", b->state);
	rte_tel_data_add_dict_string(s, "remote_state", b->remote_state);
	rte_tel_data_add_dict_string(s, "diag", b->diag);
	rte_tel_data_add_dict_string(s, "usable", b->usable ? "yes" : "no");
	rte_tel_data_add_dict_string(s, "paused", b->paused ? "yes" : "no");
	rte_tel_data_add_dict_u64(s, "tx_interval_us", b->tx_interval_us);
	rte_tel_data_add_dict_u64(s, "detect_time_us", b->detect_time_us);
	rte_tel_data_add_dict_u64(s, "local_disc", b->local_disc);
	rte_tel_data_add_dict_u64(s, "remote_disc", b->remote_disc);
	rte_tel_data_add_dict_u64(s, "tx_pkts", b->tx_pkts);
	rte_tel_data_add_dict_u64(s, "rx_pkts", b->rx_pkts);
	rte_tel_data_add_dict_u64(s, "ups", b->ups);
	rte_tel_data_add_dict_u64(s, "downs", b->downs);
	rte_tel_data_add_dict_u64(s, "pauses", b->pauses);
	snprintf(key, sizeof(key), "%u", b->conf.id);
	rte_tel_data_add_dict_container(d, key, s, 0);
}

static int tel_bfd(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	e3_node_lock();
	e3_node_bfd_walk(one_bfd, d);
	e3_node_unlock();
	return 0;
}

/* ---- workers ------------------------------------------ */
static int tel_workers(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	struct e3_worker_info *wi = malloc(sizeof(*wi));
	if (wi == NULL)
		return -1;
	rte_tel_data_start_dict(d);
	e3_node_lock();
	int n = e3_node_worker_count();
	for (int i = 0; i < n; i++) {
		if (e3_node_worker_get(i, wi) < 0)
			continue;
		struct rte_tel_data *w = rte_tel_data_alloc();
		if (w == NULL)
			break;
		rte_tel_data_start_dict(w);
		rte_tel_data_add_dict_int(w, "lcore", (int)wi->lcore);
		rte_tel_data_add_dict_u64(w, "polls", wi->polls);
		rte_tel_data_add_dict_u64(w, "busy_polls", wi->busy_polls);
		rte_tel_data_add_dict_u64(w, "idle_sleeps", wi->idle_sleeps);
		rte_tel_data_add_dict_u64(w, "rx_pkts", wi->rx_pkts);
		rte_tel_data_add_dict_int(w, "queues", wi->n_queues);
		char key[16];
		snprintf(key, sizeof(key), "%d", i);
		rte_tel_data_add_dict_container(d, key, w, 0);
	}
	e3_node_unlock();
	free(wi);
	return 0;
}

int e3_telemetry_init(void)
{
	static const struct {
		const char *cmd;
		telemetry_cb fn;
		const char *help;
	} cmds[] = {
		{ "/e3/info", tel_info, "e3-vswitchd version, boot id, uptime, object counts." },
		{ "/e3/ports", tel_ports, "Names of the e3-vswitchd ports." },
		{ "/e3/port", tel_port, "One port's counters and drops by reason. Parameter: name" },
		{ "/e3/drops", tel_drops, "Frames dropped, by reason, all ports." },
		{ "/e3/services", tel_services, "Ids of the services (first 512)." },
		{ "/e3/service", tel_service, "One service's counters. Parameter: id" },
		{ "/e3/workers", tel_workers, "Per worker: lcore, polls, idle sleeps, packets." },
		{ "/e3/bfd", tel_bfd, "BFD sessions by id: state, timers, counters." },
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (rte_telemetry_register_cmd(cmds[i].cmd, cmds[i].fn, cmds[i].help) < 0)
			return -1;
	return 0;
}
