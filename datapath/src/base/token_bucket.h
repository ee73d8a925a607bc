/* SPDX-License-Identifier: Apache-2.0
 *
 * token_bucket.h - a token bucket in TSC cycles, owned by one worker (no
 * atomics): rate frames per second, a burst of a tenth of a second's worth
 * (at least one frame). A frame costs hz tokens and a cycle earns rate, so
 * the arithmetic is exact integers; 64 bits hold it up to 10^8 frames/s at
 * 10 GHz. A bucket never used starts full.
 */
#ifndef E3_TOKEN_BUCKET_H
#define E3_TOKEN_BUCKET_H

#include <stdbool.h>
#include <stdint.h>

struct e3_token_bucket {
	uint64_t tsc;      /* last refill */
	uint64_t tokens;
};

static inline bool e3_tb_take(struct e3_token_bucket *tb, uint64_t rate, uint64_t now, uint64_t hz)
{
	uint64_t burst = rate / 10 > 0 ? rate / 10 : 1;
	uint64_t cap = burst * hz;
	uint64_t elapsed = now - tb->tsc;

	if (elapsed > hz || tb->tsc == 0)
		elapsed = hz;       /* a second refills any bucket */
	tb->tsc = now;
	tb->tokens += elapsed * rate;
	if (tb->tokens > cap)
		tb->tokens = cap;
	if (tb->tokens < hz)
		return false;
	tb->tokens -= hz;
	return true;
}

#endif
