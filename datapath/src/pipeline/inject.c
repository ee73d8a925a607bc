/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>

#include <rte_lcore.h>
#include <rte_ring.h>

#include "base/dp.h"
#include "pipeline/context.h"
#include "pipeline/inject.h"
#include "pipeline/stage_tx.h"
#include "port/port.h"

#define INJECT_RING 4096 /* a burst of announcements; more wait for the next call */

static struct rte_ring *rings[E3_MAX_WORKERS];

int e3_inject_init(void)
{
	for (unsigned i = 0; i < e3.n_workers; i++) {
		char name[RTE_RING_NAMESIZE];

		snprintf(name, sizeof(name), "e3_inject_%u", i);
		rings[i] = rte_ring_create(name, INJECT_RING, SOCKET_ID_ANY, RING_F_SC_DEQ);
		if (rings[i] == NULL)
			return -1;
	}
	return 0;
}

unsigned e3_inject(uint16_t port, struct rte_mbuf **m, unsigned n)
{
	const struct e3_port *p = e3_port_get(port);
	int w = p != NULL ? p->rxq_worker[0] : -1;
	unsigned done = 0;

	if (w >= 0 && (unsigned)w < e3.n_workers && rings[w] != NULL) {
		for (unsigned i = 0; i < n; i++)
			m[i]->port = port;
		done = rte_ring_enqueue_burst(rings[w], (void **)m, n, NULL);
	}
	rte_pktmbuf_free_bulk(m + done, n - done);
	return done;
}

unsigned e3_inject_drain(struct e3_worker *w)
{
	struct rte_ring *r = rings[w->idx];
	struct rte_mbuf *m[E3_BURST];
	unsigned n, total = 0;

	if (r == NULL)
		return 0;
	while ((n = rte_ring_dequeue_burst(r, (void **)m, E3_BURST, NULL)) > 0) {
		for (unsigned i = 0; i < n; i++)
			e3_tx(w, m[i]->port, m[i]);
		total += n;
	}
	return total;
}
