/* SPDX-License-Identifier: Apache-2.0
 *
 * init.c - building the forwarding core, and the main lcore's housekeeping.
 */
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "tables/circuit_table.h"
#include "node/init.h"
#include "pipeline/inject.h"
#include "pipeline/pwoam.h"
#include "node/node.h"
#include "tables/label_table.h"
#include "tables/mac_table.h"
#include "tables/nhlfe_table.h"
#include "pipeline/oam.h"
#include "port/port.h"
#include "base/rcu.h"
#include "worker/worker.h"


#define LINK_POLL_MS 20      /* a link that comes up forwards within 20 ms */
#define AGE_TICK_MS 10
#define KERNEL_POLL_MS 1000  /* kernel ring drops: a counter, not a state */

int e3_dp_init(const struct e3_dp_opts *o, char *err)
{
	unsigned n = o->n_workers;

	if (n == 0)
		n = rte_lcore_count() > 1 ? rte_lcore_count() - 1 : 1;
	if (n > E3_MAX_WORKERS)
		return E3_ERR(err, E3_EINVAL, "%u workers: at most %u", n, E3_MAX_WORKERS);
	e3.n_workers = (uint16_t)n;
	e3.poll_mode = o->poll_mode;
	e3.rt_sample_mask = E3_RT_SAMPLE - 1;
	e3.mac_table_size = o->mac_table_size;
	e3.start_tsc = rte_get_tsc_cycles();
	e3.tsc_per_us = RTE_MAX(rte_get_tsc_hz() / 1000000, (uint64_t)1);
	e3.running = true;
	e3.mbuf_data = o->mbuf_data ? o->mbuf_data : E3_MBUF_DATA;
	e3.n_mbufs = o->mbufs;
	e3.pool = rte_pktmbuf_pool_create("e3_mbufs", o->mbufs, 256, 0,
					  RTE_PKTMBUF_HEADROOM + e3.mbuf_data, rte_socket_id());
	if (e3.pool == NULL)
		return E3_ERR(err, E3_ENOSPC, "mbuf pool of %u: %s", o->mbufs, rte_strerror(rte_errno));
	/* Header mbufs: E3_HDR_ROOM bytes, all of it headroom (reset puts
	 * data_off at min(RTE_PKTMBUF_HEADROOM, buf_len)), so headers are
	 * prepended. Clones carry no data. */
	e3.hdr_pool = rte_pktmbuf_pool_create("e3_hdrs", o->mbufs, 256, 0, E3_HDR_ROOM,
					      rte_socket_id());
	e3.clone_pool = rte_pktmbuf_pool_create("e3_clones", o->mbufs, 256, 0, 0, rte_socket_id());
	if (e3.hdr_pool == NULL || e3.clone_pool == NULL)
		return E3_ERR(err, E3_ENOSPC, "header/clone pools of %u: %s", o->mbufs,
			      rte_strerror(rte_errno));
	if (e3_rcu_init(n) != 0)
		return E3_ERR(err, E3_ENOSPC, "rcu: %s", rte_strerror(rte_errno));
	if (e3_label_table_init() || e3_nhlfe_table_init() || e3_circuit_table_init() ||
	    e3_oam_init() || e3_workers_init(n) || e3_inject_init() || e3_pwoam_init() || e3_sflow_init())
		return E3_ERR(err, E3_ENOSPC, "out of memory for the tables");
	if (e3_mac_table_init(o->mac_table_size, n) != 0)
		return E3_ERR(err, E3_ENOSPC, "MAC table of %u: %s", o->mac_table_size,
			      rte_strerror(rte_errno));
	return 0;
}

void e3_dp_housekeeping(void)
{
	static uint64_t last_link, last_age, last_kernel;
	uint64_t now = rte_get_tsc_cycles();
	uint64_t ms = (now - e3.start_tsc) / (rte_get_tsc_hz() / 1000);

	/* Stored only when it changes: the workers read its line every poll. */
	if ((uint32_t)(ms / 1000) != e3.now_s)
		__atomic_store_n(&e3.now_s, (uint32_t)(ms / 1000), __ATOMIC_RELAXED);
	e3_mac_drain();
	e3_node_pwoam_drain();
	if (ms - last_age >= AGE_TICK_MS) {
		/* The whole table once a second at most, a slice per tick. */
		last_age = ms;
		e3_mac_age_step(e3_mac_slots() / (1000 / AGE_TICK_MS) + 1);
	}
	if (ms - last_link >= LINK_POLL_MS) {
		last_link = ms;
		e3_port_poll_links();
	}
	if (ms - last_kernel >= KERNEL_POLL_MS) {
		last_kernel = ms;
		e3_port_poll_kernel();
	}
	e3_rcu_reclaim();
}

void e3_dp_fini(void)
{
	for (uint16_t i = 0; i < RTE_MAX_ETHPORTS; i++) {
		struct e3_port *p = e3_port_tbl[i];

		if (p != NULL) {
			e3_port_unpublish(p);
			e3_workers_assign();
			e3_port_close(p);
		}
	}
}
