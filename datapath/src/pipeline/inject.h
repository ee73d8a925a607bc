/* SPDX-License-Identifier: Apache-2.0
 *
 * inject.h - frames the main lcore builds and a worker sends: the main
 * lcore owns no TX queue, so it hands them to the worker of the port's
 * first receive queue, which sends them at its next OAM tick (0.5 ms).
 * Used for the MAC announcements of a multi-homed site's circuit
 * (docs/multihoming.md).
 */
#ifndef E3_INJECT_H
#define E3_INJECT_H

#include <stdint.h>

#include <rte_mbuf.h>

struct e3_worker;

/* Each worker's ring; 0, or -1 on allocation failure. */
int e3_inject_init(void);
/* Main lcore: queue n frames for port (each takes one, or is freed). Returns
 * how many were queued. */
unsigned e3_inject(uint16_t port, struct rte_mbuf **m, unsigned n);
/* Worker: send what was queued for it; returns how many. */
unsigned e3_inject_drain(struct e3_worker *w);

#endif
