/* SPDX-License-Identifier: Apache-2.0
 *
 * sflow.c - the samplers' slow part: taking a sample, and the queue of
 * samples the agent reads (sflow.h).
 */
#include <rte_cycles.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "pipeline/sflow.h"
#include "pipeline/stages.h"

#define QUEUE 4096

uint32_t e3_sflow_rate[RTE_MAX_ETHPORTS];

static struct rte_ring *queue;

int e3_sflow_init(void)
{
	queue = rte_ring_create_elem("e3_sflow", sizeof(struct e3_sflow_sample), QUEUE, SOCKET_ID_ANY,
				     RING_F_SC_DEQ);
	return queue == NULL ? -1 : 0;
}

/* A skip uniform in 1..2*rate-1: the mean is rate, and no frame pattern
 * (a period of rate frames) is sampled at the same phase. */
static uint32_t draw(struct e3_worker *w, uint32_t rate)
{
	uint64_t x = w->rng != 0 ? w->rng : rte_rdtsc() | 1;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	w->rng = x;
	return rate <= 1 ? 1 : 1 + (uint32_t)(x % (2ull * rate - 1));
}

/* The port's pool: what every worker's sampler saw (this one's up to its
 * frame at index i of a burst of n). Other workers' counters are read as
 * they are, without a lock: a sample's pool is an estimate by definition. */
static uint64_t pool_of(const struct e3_worker *self, uint16_t port, uint64_t own)
{
	uint64_t pool = own;

	for (unsigned k = 0; k < e3.n_workers; k++) {
		const struct e3_worker *w = e3_workers[k];

		if (w != NULL && w != self)
			pool += __atomic_load_n(&w->sflow[port].pool, __ATOMIC_RELAXED);
	}
	return pool;
}

static void take(struct e3_burst *b, struct e3_sflow_sampler *s, unsigned i, uint32_t rate)
{
	const struct rte_mbuf *m = b->pkts[i];

	if (m == NULL || b->n_smp == E3_SFLOW_BURST) {
		s->drops++;
		return;
	}
	struct e3_sflow_sample *x = &b->smp[b->n_smp];

	b->meta[i].sampled = ++b->n_smp;
	x->pool = pool_of(b->w, b->rx->port_id, s->pool - (b->n - 1 - i));
	x->drops = s->drops;
	x->rate = rate;
	x->frame_len = m->pkt_len;
	x->service = E3_NONE;
	x->in_port = b->rx->port_id;
	x->out_port = E3_SFLOW_NO_PORT;
	x->outputs = 0;
	x->hdr_len = (uint16_t)RTE_MIN(m->pkt_len, (uint32_t)E3_SFLOW_HDR);
	const void *d = rte_pktmbuf_read(m, 0, x->hdr_len, x->hdr);

	if (d != x->hdr)
		memcpy(x->hdr, d, x->hdr_len);
}

void e3_sflow_burst(struct e3_burst *b, uint32_t rate)
{
	struct e3_sflow_sampler *s = &b->w->sflow[b->rx->port_id];

	if (s->rate != rate || s->skip == 0) {
		s->rate = rate;
		s->skip = draw(b->w, rate);
	}
	__atomic_store_n(&s->pool, s->pool + b->n, __ATOMIC_RELAXED);
	if (b->n < s->skip) {
		s->skip -= b->n;
		return;
	}
	/* Frame i is the one the skip ends on; the skip left over counts
	 * into the next burst. */
	for (unsigned i = s->skip - 1;;) {
		take(b, s, i, rate);
		uint32_t next = draw(b->w, rate);

		if (i + next >= b->n) {
			s->skip = i + next - b->n + 1;
			break;
		}
		i += next;
	}
}

void e3_sflow_finish(struct e3_burst *b)
{
	unsigned n = rte_ring_mp_enqueue_burst_elem(queue, b->smp, sizeof(b->smp[0]), b->n_smp, NULL);

	b->w->sflow[b->rx->port_id].drops += b->n_smp - n;
}

unsigned e3_sflow_take(struct e3_sflow_sample *out, unsigned n)
{
	return rte_ring_sc_dequeue_burst_elem(queue, out, sizeof(*out), n, NULL);
}

void e3_sflow_port(uint16_t port, uint64_t *pool, uint64_t *drops)
{
	*pool = *drops = 0;
	for (unsigned k = 0; k < e3.n_workers; k++)
		if (e3_workers[k] != NULL) {
			*pool += __atomic_load_n(&e3_workers[k]->sflow[port].pool, __ATOMIC_RELAXED);
			*drops += __atomic_load_n(&e3_workers[k]->sflow[port].drops, __ATOMIC_RELAXED);
		}
}
