/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "base/dp.h"
#include "base/rcu.h"

struct deferred {
	void (*fn)(void *);
	void *arg;
};

static struct rte_rcu_qsbr_dq *dq;

static void run_deferred(void *p, void *e, unsigned int n)
{
	struct deferred *d = e;

	(void)p;
	for (unsigned int i = 0; i < n; i++)
		d[i].fn(d[i].arg);
}

int e3_rcu_init(unsigned n_threads)
{
	size_t sz = rte_rcu_qsbr_get_memsize(n_threads);

	e3.qsbr = rte_zmalloc("e3_qsbr", sz, RTE_CACHE_LINE_SIZE);
	if (e3.qsbr == NULL || rte_rcu_qsbr_init(e3.qsbr, n_threads) != 0)
		return -1;
	struct rte_rcu_qsbr_dq_parameters p = {
		.name = "e3_dq",
		.size = 65536,
		.esize = sizeof(struct deferred),
		.trigger_reclaim_limit = 1024,
		.max_reclaim_size = 1024,
		.free_fn = run_deferred,
		.v = e3.qsbr,
	};
	dq = rte_rcu_qsbr_dq_create(&p);
	return dq ? 0 : -1;
}

void e3_rcu_defer(void (*fn)(void *), void *arg)
{
	struct deferred d = { fn, arg };

	if (dq != NULL && rte_rcu_qsbr_dq_enqueue(dq, &d) == 0)
		return;
	/* Queue full (a huge config load): wait out the grace period here. */
	e3_rcu_sync();
	fn(arg);
}

static void free_fn(void *p)
{
	free(p);
}

void e3_rcu_free(void *p)
{
	if (p != NULL)
		e3_rcu_defer(free_fn, p);
}

void e3_rcu_reclaim(void)
{
	unsigned int freed, pending, avail;

	if (dq != NULL)
		rte_rcu_qsbr_dq_reclaim(dq, UINT32_MAX, &freed, &pending, &avail);
}

void e3_rcu_sync(void)
{
	if (e3.qsbr != NULL)
		rte_rcu_qsbr_synchronize(e3.qsbr, RTE_QSBR_THRID_INVALID);
}
