/* SPDX-License-Identifier: Apache-2.0
 *
 * worker.h - run-to-completion forwarding lcores.
 */
#ifndef E3_WORKER_H
#define E3_WORKER_H

#include <stdint.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "base/dp.h"
#include "pipeline/context.h"

struct e3_qlist {
	uint16_t n;
	struct { uint16_t port, queue; } q[];
};

int e3_workers_init(unsigned n);
/* Rebuild every worker's poll list from the ports' queue assignments. */
int e3_workers_assign(void);
/* Pick a worker for each rx queue left at -1 (least loaded first). */
void e3_workers_auto(struct e3_port_conf *c);
/* lcore_function_t for rte_eal_mp_remote_launch. */
int e3_worker_main(void *arg);

#endif
