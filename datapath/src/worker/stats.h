/* SPDX-License-Identifier: Apache-2.0
 *
 * stats.h - the counters as the control side reads them: each worker's
 * (base/stats.h) summed, minus the baseline of the last clear. A port's
 * rx_ring_full also counts what the kernel dropped on its rings.
 */
#ifndef E3_WORKER_STATS_H
#define E3_WORKER_STATS_H

#include <stdint.h>

#include "base/stats.h"
#include "pipeline/runtime.h"

/* Allocates a worker's per-object counters. */
int e3_wstats_init(struct e3_wstats *s);

/* Control side: sums over workers, minus the baseline. */
void e3_stats_port(uint16_t port, struct e3_port_ctr *out);
void e3_stats_svc(uint32_t id, struct e3_svc_ctr *out);
void e3_stats_circ(uint32_t id, struct e3_circ_ctr *out);
uint64_t e3_stats_label(uint32_t label);
/* Start an object's counters from zero. */
void e3_stats_reset_port(uint16_t port);
void e3_stats_reset_svc(uint32_t id);
void e3_stats_reset_circ(uint32_t id);
void e3_stats_reset_label(uint32_t label);
void e3_stats_clear_all(void);

/* Worker w's runtime profile since the last clear (runtime.h). */
void e3_runtime_get(unsigned w, struct e3_runtime *out);
/* Clears, and times one poll in sample (a power of two) from now on. */
void e3_runtime_clear(unsigned sample);

#endif
