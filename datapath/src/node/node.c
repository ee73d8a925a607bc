/* SPDX-License-Identifier: Apache-2.0
 *
 * node.c - what the control operations (node.h) share: the control lock,
 * the "changed" flag, the reference counts that refuse deleting what is in
 * use; and the settings. Each object kind has its own file beside this one
 * (port.c, nexthop.c, bfd.c, nhlfe.c, service.c, circuit.c, label.c, mac.c,
 * counters.c, trace.c). Main lcore (or a holder of the control lock) only.
 *
 * Each operation validates everything first and only then changes state,
 * in an order that never lets a worker see a reference to something not
 * yet published: new objects first, then the entries that point to them,
 * then the release of what they replaced.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ether.h>

#include "tables/circuit_table.h"
#include "base/dp.h"
#include "tables/label_table.h"
#include "tables/mac_table.h"
#include "tables/nhlfe_table.h"
#include "pipeline/oam.h"
#include "port/port.h"
#include "tables/service_table.h"
#include "node/node_int.h"
#include "node/node.h"
#include "pipeline/trace.h"
#include "worker/stats.h"
#include "worker/worker.h"

static pthread_mutex_t ctl_mutex = PTHREAD_MUTEX_INITIALIZER;
static bool last_changed;

uint32_t e3_node_port_refs[RTE_MAX_ETHPORTS];   /* nexthops, circuits, replicate RPF */
bool e3_node_nh_used[E3_MAX_NEXTHOPS];
uint32_t e3_node_nh_refs[E3_MAX_NEXTHOPS];      /* nhlfes */
uint32_t *e3_node_nhlfe_refs;                   /* services, labels */
uint32_t e3_node_svc_refs[E3_MAX_SERVICES];     /* labels */


void e3_node_lock(void)
{
	pthread_mutex_lock(&ctl_mutex);
}

void e3_node_unlock(void)
{
	pthread_mutex_unlock(&ctl_mutex);
}

bool e3_node_changed(void)
{
	return last_changed;
}

enum e3_poll_mode e3_node_poll_mode(void)
{
	return e3.poll_mode;
}

int e3_node_ok(bool changed)
{
	last_changed = changed;
	return 0;
}

bool e3_node_nhlfe_exists(uint32_t id)
{
	return id < E3_MAX_NHLFES && (e3_nhlfe_get(id).label & E3_NHLFE_VALID);
}

bool e3_node_is_zero_mac(const uint8_t *m)
{
	static const uint8_t z[6];

	return memcmp(m, z, 6) == 0;
}

bool e3_node_str_ok(const char *s, size_t size)
{
	return s[0] != 0 && strnlen(s, size) < size;
}

int e3_node_refs_init(void)
{
	if (e3_node_nhlfe_refs == NULL)
		e3_node_nhlfe_refs = calloc(E3_MAX_NHLFES, sizeof(*e3_node_nhlfe_refs));
	return e3_node_nhlfe_refs ? 0 : -1;
}

struct e3_port *e3_node_port_by_name(const char *name)
{
	for (uint16_t i = 0; i < RTE_MAX_ETHPORTS; i++)
		if (e3_port_tbl[i] != NULL && strcmp(e3_port_tbl[i]->conf.name, name) == 0)
			return e3_port_tbl[i];
	return NULL;
}

unsigned e3_node_service_max_circuits(uint8_t type, uint32_t nhlfe)
{
	if (type == E3_SVC_ELINE)
		return nhlfe == E3_NONE ? 2 : 1;
	return UINT16_MAX;
}

/* ---- settings --------------------------------------------------------- */

int e3_node_settings_get(struct e3_settings *out)
{
	*out = e3.settings;
	return 0;
}

int e3_node_settings_set(const struct e3_settings *s, char *err)
{
	if (s->ttl == 0)
		return E3_ERR(err, E3_EINVAL, "ttl: must be 1..255");
	if (s->mac_limit == 0)
		return E3_ERR(err, E3_EINVAL, "mac_limit: must be at least 1");
	if (s->mac_move_window_s == 0)
		return E3_ERR(err, E3_EINVAL, "mac_move_window_s: must be at least 1");
	bool changed = memcmp(s, &e3.settings, sizeof(*s)) != 0;

	e3.settings.ttl = s->ttl;
	e3.settings.control_word = s->control_word;
	e3.settings.mac_aging_s = s->mac_aging_s;
	e3.settings.mac_limit = s->mac_limit;
	e3.settings.mac_move_limit = s->mac_move_limit;
	e3.settings.mac_move_window_s = s->mac_move_window_s;
	return e3_node_ok(changed);
}

static struct timespec t_start;

__attribute__((constructor)) static void ctl_start_time(void)
{
	clock_gettime(CLOCK_MONOTONIC, &t_start);
}

double e3_node_uptime_s(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t_start.tv_sec) + (double)(now.tv_nsec - t_start.tv_nsec) / 1e9;
}

const char *e3_node_poll_mode_name(void)
{
	return e3_node_poll_mode() == E3_POLL_ADAPTIVE ? "adaptive" : "busy";
}

const char *e3_node_boot_id(void)
{
	static char id[37];

	if (id[0] == 0) {
		uint8_t r[16];

		if (getrandom(r, sizeof(r), 0) != sizeof(r)) {
			uint64_t t = rte_rdtsc() ^ (uint64_t)getpid() << 32;

			memcpy(r, &t, 8);
			memcpy(r + 8, &t, 8);
		}
		r[6] = (r[6] & 0x0f) | 0x40;   /* version 4 */
		r[8] = (r[8] & 0x3f) | 0x80;   /* RFC 4122 variant */
		snprintf(id, sizeof(id),
			 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9],
			 r[10], r[11], r[12], r[13], r[14], r[15]);
	}
	return id;
}

