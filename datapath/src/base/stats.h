/* SPDX-License-Identifier: Apache-2.0
 *
 * stats.h - counters. Each worker owns its counters (plain increments, no
 * sharing); control reads sum the workers and subtract a baseline, which
 * is how counters are cleared (and reset for a re-created object) without
 * writing into memory a worker owns.
 */
#ifndef E3_STATS_H
#define E3_STATS_H

#include <stdint.h>

#include <rte_build_config.h>
#include <rte_common.h>

#include "base/defs.h"

struct e3_port_ctr {
	uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes;
	uint64_t tx_retries;     /* extra TX bursts after a partial one (vhost-user) */
	uint64_t drops[E3_DROP_MAX];
} __rte_cache_aligned;

struct e3_svc_ctr {
	uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes, flooded;
	uint64_t mac_refused;    /* new MACs refused at the limit, by the worker */
	uint64_t learn_lost;     /* learn events lost: the worker's queue was full */
	uint64_t bum_filtered;   /* BUM copies not sent into a segment (struct e3_site) */
	uint64_t redirected;     /* frames for a site's circuit whose port is down, sent to another leaf */
};

struct e3_circ_ctr {
	uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes;
};

/* One worker's counters. */
struct e3_wstats {
	struct e3_port_ctr port[RTE_MAX_ETHPORTS];
	struct e3_svc_ctr *svc;        /* [E3_MAX_SERVICES] */
	struct e3_circ_ctr *circ;      /* [E3_MAX_CIRCUITS] */
	uint64_t *label;               /* [E3_LABEL_SPACE] packets */
};

#endif
