/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_rcu_qsbr.h>

#include "base/clock.h"
#include "pipeline/inject.h"
#include "pipeline/oam.h"
#include "port/port.h"
#include "pipeline/stages.h"
#include "pipeline/trace.h"
#include "worker/stats.h"
#include "worker/worker.h"

#define IDLE_POLLS_BEFORE_SLEEP 64
#define SLEEP_MAX_US 200
#define OAM_TICKS_PER_S 2000     /* BFD timers every 0.5 ms: 10 ms intervals keep their jitter */
#define CLOCK_PROBES_PER_S 10    /* a few us each: every runtime window of 0.1 s has one */


static void note_stall(struct e3_runtime *rt, uint64_t turn, const uint64_t *over)
{
	rt->stall_cycles += turn;
	for (unsigned k = 0; k < E3_STALL_BUCKETS && turn > over[k]; k++)
		rt->stalls[k]++;
}

int e3_workers_init(unsigned n)
{
	unsigned lcore, k = 0;
	unsigned lcores[E3_MAX_WORKERS] = { 0 };

	RTE_LCORE_FOREACH_WORKER(lcore)
		if (k < E3_MAX_WORKERS)
			lcores[k++] = lcore;
	for (unsigned w = 0; w < n; w++) {
		struct e3_worker *wk = aligned_alloc(RTE_CACHE_LINE_SIZE,
						     RTE_ALIGN_CEIL(sizeof(*wk), RTE_CACHE_LINE_SIZE));

		if (wk == NULL)
			return -1;
		memset(wk, 0, sizeof(*wk));
		wk->idx = (uint16_t)w;
		wk->lcore = lcores[w];
		wk->qlist = calloc(1, sizeof(struct e3_qlist));
		/* Untouched pages stay unbacked: only circuits with limits cost memory. */
		wk->storm = calloc((size_t)E3_MAX_CIRCUITS * E3_STORM_MAX, sizeof(*wk->storm));
		if (wk->qlist == NULL || wk->storm == NULL || e3_wstats_init(&wk->st) != 0 ||
		    e3_trace_ring_init(wk) != 0)
			return -1;
		e3_workers[w] = wk;
	}
	return 0;
}

void e3_workers_auto(struct e3_port_conf *c)
{
	unsigned load[E3_MAX_WORKERS] = { 0 };

	for (uint16_t i = 0; i < RTE_MAX_ETHPORTS; i++) {
		const struct e3_port *p = e3_port_tbl[i];

		if (p == NULL || strcmp(p->conf.name, c->name) == 0)
			continue;
		for (unsigned q = 0; q < p->n_rxq; q++)
			load[p->rxq_worker[q]]++;
	}
	for (unsigned q = 0; q < c->rx_queues; q++) {
		if (c->worker[q] >= 0) {
			load[c->worker[q]]++;
			continue;
		}
		unsigned best = 0;

		for (unsigned w = 1; w < e3.n_workers; w++)
			if (load[w] < load[best])
				best = w;
		c->worker[q] = (int16_t)best;
		load[best]++;
	}
}

int e3_workers_assign(void)
{
	for (unsigned w = 0; w < e3.n_workers; w++) {
		unsigned n = 0;

		for (uint16_t i = 0; i < RTE_MAX_ETHPORTS; i++)
			if (e3_port_tbl[i] != NULL)
				for (unsigned q = 0; q < e3_port_tbl[i]->n_rxq; q++)
					n += e3_port_tbl[i]->rxq_worker[q] == (int)w;
		struct e3_qlist *ql = malloc(sizeof(*ql) + n * sizeof(ql->q[0]));

		if (ql == NULL)
			return -1;
		ql->n = 0;
		for (uint16_t i = 0; i < RTE_MAX_ETHPORTS; i++) {
			const struct e3_port *p = e3_port_tbl[i];

			for (unsigned q = 0; p != NULL && q < p->n_rxq; q++)
				if (p->rxq_worker[q] == (int)w) {
					ql->q[ql->n].port = i;
					ql->q[ql->n].queue = (uint16_t)q;
					ql->n++;
				}
		}
		struct e3_qlist *old = e3_workers[w]->qlist;

		E3_RCU_SET(e3_workers[w]->qlist, ql);
		e3_rcu_free(old);
	}
	return 0;
}

int e3_worker_main(void *arg)
{
	struct e3_worker *w = NULL;
	unsigned lcore = rte_lcore_id();

	(void)arg;
	for (unsigned i = 0; i < e3.n_workers; i++)
		if (e3_workers[i]->lcore == lcore)
			w = e3_workers[i];
	if (w == NULL)
		return 0;
	rte_rcu_qsbr_thread_register(e3.qsbr, w->idx);
	rte_rcu_qsbr_thread_online(e3.qsbr, w->idx);
	struct rte_mbuf *pkts[E3_BURST];
	unsigned idle = 0, sleep_us = 1;
	const uint64_t oam_period = rte_get_tsc_hz() / OAM_TICKS_PER_S;
	const uint64_t clock_period = rte_get_tsc_hz() / CLOCK_PROBES_PER_S;
	const uint64_t tsc_per_us = rte_get_tsc_hz() / 1000000;
#define STALL_CYCLES(name, us) (us) * tsc_per_us,
	const uint64_t stall_over[E3_STALL_BUCKETS] = { E3_STALL_OVER(STALL_CYCLES) };
#undef STALL_CYCLES
	uint64_t oam_next = 0, clock_next = 0;
	uint64_t start = rte_rdtsc();   /* this poll's start: the last one's end */

	while (__atomic_load_n(&e3.running, __ATOMIC_RELAXED)) {
		const struct e3_qlist *ql = E3_RCU_GET(w->qlist);
		const bool timed = (w->polls & __atomic_load_n(&e3.rt_sample_mask, __ATOMIC_RELAXED)) == 0;
		unsigned total = 0;

		for (unsigned k = 0; k < ql->n; k++) {
			uint16_t port = ql->q[k].port;
			const struct e3_port *p = e3_port_get(port);

			/* Polled only while its link is up: DPDK 22.11's memif
			 * loads a port's ring address before its connected
			 * flag, so a poll while the port connects may read a
			 * ring not mapped yet (the link poll sees the link up
			 * only once it is). */
			if (unlikely(p == NULL || !__atomic_load_n(&p->link_up, __ATOMIC_ACQUIRE)))
				continue;
			uint64_t t0 = timed ? rte_rdtsc() : 0;
			uint16_t n = rte_eth_rx_burst(port, ql->q[k].queue, pkts, E3_BURST);

			if (n == 0)
				continue;
			total += n;
			e3_rt_count(&w->rt.rx[port], n);
			if (timed) {
				uint64_t t1 = rte_rdtsc();

				e3_rt_time(&w->rt.rx[port], t1 - t0);
				e3_process_burst(w, port, pkts, n, t1);
			} else {
				e3_process_burst(w, port, pkts, n, 0);
			}
		}
		uint64_t tsc = rte_rdtsc();

		if (total > 0)
			w->rt.busy_cycles += tsc - start;
		else
			w->rt.idle_cycles += tsc - start;
		/* BFD timers: here, so that a worker that stops forwarding
		 * stops sending and answering too. */
		if (tsc >= oam_next) {
			oam_next = tsc + oam_period;
			unsigned injected = e3_inject_drain(w);

			e3_oam_tick(w, e3_now_us());
			e3_rt_count(&w->rt.timers, injected);
			uint64_t end = rte_rdtsc();

			e3_rt_time(&w->rt.timers, end - tsc);
			tsc = end;
		}
		/* Outside busy and idle cycles: the probe is no poll's work. */
		if (tsc >= clock_next) {
			clock_next = tsc + clock_period;
			w->rt.clock_tsc += e3_clock_probe();
			w->rt.clock_core += E3_CLOCK_PROBE_OPS;
			tsc = rte_rdtsc();
		}
		if (unlikely(tsc - start > stall_over[0]))
			note_stall(&w->rt, tsc - start, stall_over);
		start = tsc;
		w->polls++;
		if (total > 0) {
			w->busy_polls++;
			w->rx_pkts += total;
		}
		rte_rcu_qsbr_quiescent(e3.qsbr, w->idx);
		if (e3.poll_mode != E3_POLL_ADAPTIVE)
			continue;
		if (total > 0) {
			idle = 0;
			sleep_us = 1;
		} else if (++idle > IDLE_POLLS_BEFORE_SLEEP) {
			/* Offline while asleep, so grace periods need not wait for us. */
			rte_rcu_qsbr_thread_offline(e3.qsbr, w->idx);
			rte_delay_us_sleep(sleep_us);
			rte_rcu_qsbr_thread_online(e3.qsbr, w->idx);
			start = rte_rdtsc();
			/* What it slept beyond what it asked for is a stall too. */
			const uint64_t asked = sleep_us * tsc_per_us;

			if (unlikely(start - tsc > asked + stall_over[0]))
				note_stall(&w->rt, start - tsc - asked, stall_over);
			w->idle_sleeps++;
			sleep_us = RTE_MIN(sleep_us * 2, (unsigned)SLEEP_MAX_US);
		}
	}
	rte_rcu_qsbr_thread_offline(e3.qsbr, w->idx);
	rte_rcu_qsbr_thread_unregister(e3.qsbr, w->idx);
	return 0;
}
