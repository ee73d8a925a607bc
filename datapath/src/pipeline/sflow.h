/* SPDX-License-Identifier: Apache-2.0
 *
 * sflow.h - packet sampling for sFlow (sflow.org, version 5): each worker
 * takes 1 in N of the frames a port receives, N random around the port's
 * rate (a skip drawn uniformly from 1..2N-1, as sFlow agents do), keeps
 * the first E3_SFLOW_HDR bytes as received with the port it came in on,
 * the ports it went out of and its service, and queues the sample for the
 * agent (sflow_read), which exports it. The frames a port's samplers saw
 * are its sample pool.
 *
 * A burst costs one load and one branch with sampling off, and a subtract
 * and compare with it on; a taken sample costs its header copy, and a
 * branch per frame sent (e3_sent: is the frame sampled?).
 */
#ifndef E3_SFLOW_H
#define E3_SFLOW_H

#include <stdint.h>

#include <rte_common.h>

#include "base/dp.h"

#define E3_SFLOW_HDR     128     /* bytes of each sampled frame (sFlow's default) */
#define E3_SFLOW_BURST   8       /* samples a burst keeps; more are lost (counted) */
#define E3_SFLOW_RATE_MAX (1u << 24)
#define E3_SFLOW_NO_PORT 0xffff

/* One sample, as queued for the agent. */
struct e3_sflow_sample {
	uint64_t pool;           /* frames the port's samplers had seen, this one included */
	uint64_t drops;          /* the port's samples lost before this one */
	uint32_t rate;           /* 1 in rate */
	uint32_t frame_len;      /* as received */
	uint32_t service;        /* E3_NONE: none known (a transit frame) */
	uint16_t in_port;
	uint16_t out_port;       /* the first port it was sent to; E3_SFLOW_NO_PORT: none */
	uint16_t outputs;        /* ports (copies) it was sent to */
	uint16_t hdr_len;
	uint8_t hdr[E3_SFLOW_HDR];
};

/* A worker's sampler of one port. */
struct e3_sflow_sampler {
	uint64_t pool;           /* frames seen while sampling */
	uint64_t drops;          /* samples lost: burst full or queue full */
	uint32_t skip;           /* frames until the next sample; 0: draw one */
	uint32_t rate;           /* the rate skip was drawn for */
};

/* The rate of each port (DPDK port id): 0 is off. Written by the main
 * lcore (node), read by the workers once a burst. */
extern uint32_t e3_sflow_rate[RTE_MAX_ETHPORTS];

int e3_sflow_init(void);
/* Main lcore: take up to n queued samples. */
unsigned e3_sflow_take(struct e3_sflow_sample *out, unsigned n);
/* Main lcore: the frames port's samplers saw, and the samples lost. */
void e3_sflow_port(uint16_t port, uint64_t *pool, uint64_t *drops);

#endif
