/* SPDX-License-Identifier: Apache-2.0
 *
 * hist.h - latency histogram of e3-pktgen: log-linear buckets (16 per power
 * of two, so a percentile is within 6.25% of the true value), constant
 * memory, one increment per sample on the receive path.
 */
#ifndef E3_PKTGEN_HIST_H
#define E3_PKTGEN_HIST_H

#include <stdint.h>
#include <string.h>

#define PG_HIST_SUB     16
#define PG_HIST_BUCKETS (PG_HIST_SUB * 62)

struct pg_hist {
	uint64_t count, sum, min, max;
	uint64_t b[PG_HIST_BUCKETS];
};

static inline void pg_hist_init(struct pg_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

/* into += from */
static inline void pg_hist_merge(struct pg_hist *into, const struct pg_hist *from)
{
	into->count += from->count;
	into->sum += from->sum;
	if (from->min < into->min)
		into->min = from->min;
	if (from->max > into->max)
		into->max = from->max;
	for (unsigned i = 0; i < PG_HIST_BUCKETS; i++)
		into->b[i] += from->b[i];
}

static inline unsigned pg_hist_index(uint64_t v)
{
	if (v < 2 * PG_HIST_SUB)
		return (unsigned)v;
	unsigned m = 63u - (unsigned)__builtin_clzll(v); /* >= 5 */
	return (m - 3) * PG_HIST_SUB + (unsigned)((v >> (m - 4)) & (PG_HIST_SUB - 1));
}

/* Lower bound of bucket i: the value reported for a percentile. */
static inline uint64_t pg_hist_value(unsigned i)
{
	if (i < 2 * PG_HIST_SUB)
		return i;
	unsigned m = i / PG_HIST_SUB + 3;
	return (uint64_t)(PG_HIST_SUB + i % PG_HIST_SUB) << (m - 4);
}

static inline void pg_hist_add(struct pg_hist *h, uint64_t v)
{
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->b[pg_hist_index(v)]++;
}

/* The value at quantile q (0..1); 0 when empty. */
static inline uint64_t pg_hist_quantile(const struct pg_hist *h, double q)
{
	if (h->count == 0)
		return 0;
	uint64_t rank = (uint64_t)(q * (double)(h->count - 1)) + 1, seen = 0;
	for (unsigned i = 0; i < PG_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= rank)
			return pg_hist_value(i);
	}
	return h->max;
}

#endif
