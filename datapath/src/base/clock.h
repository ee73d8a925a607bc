/* SPDX-License-Identifier: Apache-2.0
 *
 * clock.h - how fast a core runs against the TSC, the clock every cycle
 * figure of the runtime profile is counted in.
 *
 * The TSC ticks at a constant rate; the core does not: it slows when more
 * cores of its package are busy, or when its host gives its virtual CPU
 * less. A frame that costs the same work then costs more TSC cycles, and
 * only this probe tells that apart from work that grew. The probe times a
 * chain of dependent adds, one core cycle each on every x86-64 and Arm
 * core, so the TSC cycles it takes give the core's clock. The best of
 * three tries drops one that an interrupt or the host cut into.
 */
#ifndef E3_CLOCK_H
#define E3_CLOCK_H

#include <stdint.h>

#include <rte_cycles.h>

#define E3_CLOCK_PROBE_OPS 4096   /* core cycles a try takes: ~1-2 us */

/* One core cycle: an add that needs the last one's result. The empty asm
 * keeps the compiler from folding the chain. */
static inline uint64_t e3_clock_step(uint64_t x)
{
	x += x;
	__asm__ volatile("" : "+r"(x));
	return x;
}

/* TSC cycles that E3_CLOCK_PROBE_OPS core cycles took. */
static inline uint64_t e3_clock_probe(void)
{
	uint64_t best = UINT64_MAX;

	for (uint64_t t = 1; t <= 3; t++) {
		uint64_t x = t;
		uint64_t t0 = rte_rdtsc_precise();

		for (unsigned i = 0; i < E3_CLOCK_PROBE_OPS / 8; i++) {
			x = e3_clock_step(x);
			x = e3_clock_step(x);
			x = e3_clock_step(x);
			x = e3_clock_step(x);
			x = e3_clock_step(x);
			x = e3_clock_step(x);
			x = e3_clock_step(x);
			x = e3_clock_step(x);
		}
		uint64_t dt = rte_rdtsc_precise() - t0;

		if (dt < best)
			best = dt;
	}
	return best;
}

#endif
