/* SPDX-License-Identifier: Apache-2.0
 *
 * init.h - building the forwarding core and running its main-lcore
 * housekeeping: the top of the layers, called by main and the unit tests.
 */
#ifndef E3_INIT_H
#define E3_INIT_H

#include "base/dp.h"

/* Options of e3_dp_init (the command line's, or a unit test's). */
struct e3_dp_opts {
	enum e3_poll_mode poll_mode;
	uint32_t mac_table_size;
	uint32_t mbufs;
	uint16_t mbuf_data;             /* data room of received frames; 0 = E3_MBUF_DATA */
	uint16_t n_workers;             /* 0 = one per non-main lcore (at least 1) */
};
/* Builds every table; call once after rte_eal_init. */
int e3_dp_init(const struct e3_dp_opts *o, char *err);
/* Main-lcore housekeeping: learning, aging, link state, RCU reclaim. */
void e3_dp_housekeeping(void);
/* Stops nothing on workers; removes every port (shutdown). */
void e3_dp_fini(void);

#endif
