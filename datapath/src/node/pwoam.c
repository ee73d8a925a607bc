/* SPDX-License-Identifier: Apache-2.0
 *
 * pwoam.c - pseudowire ping and trace (pipeline/pwoam.h): a request sent
 * into a service's PW from here, and the log of what this node saw, kept
 * for the agent to read (pw_oam_log).
 */
#include <string.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "node/node.h"
#include "pipeline/inject.h"
#include "pipeline/pwoam.h"
#include "pipeline/stages.h"
#include "tables/nhlfe_table.h"
#include "tables/service_table.h"

#define LOG_N 1024   /* a power of two: the newest events, by index */

static struct e3_pwoam_event log_ev[LOG_N];
static uint64_t log_next;   /* the index the next event gets; events are 1.. */

static void keep(const struct e3_pwoam_event *ev)
{
	log_ev[log_next++ % LOG_N] = *ev;
}

void e3_node_pwoam_drain(void)
{
	struct e3_pwoam_event ev[64];
	unsigned n;

	while ((n = e3_pwoam_take(ev, RTE_DIM(ev))) > 0)
		for (unsigned k = 0; k < n; k++)
			keep(&ev[k]);
}

uint64_t e3_node_pwoam_walk(uint64_t since, e3_pwoam_walk_fn fn, void *arg)
{
	e3_node_pwoam_drain();
	uint64_t first = log_next > LOG_N ? log_next - LOG_N : 0;

	for (uint64_t k = RTE_MAX(since, first); k < log_next; k++)
		fn(k + 1, &log_ev[k % LOG_N], arg);
	return log_next;
}

/* The frame of a request: Ethernet toward nh, the PW label, the ACH and
 * the MPLS echo request, sent at sent_ns. */
static struct rte_mbuf *request(const struct e3_nexthop *nh, uint32_t label, uint8_t ttl, uint32_t handle,
				uint32_t seq, uint64_t sent_ns)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(e3.pool);
	const uint16_t len = RTE_ETHER_HDR_LEN + E3_MPLS_HLEN + E3_ACH_LEN + sizeof(struct e3_echo_request);

	if (m == NULL)
		return NULL;
	uint8_t *h = (uint8_t *)rte_pktmbuf_append(m, len);
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)h;
	uint32_t lse = rte_cpu_to_be_32(label << 12 | 7u << 9 | 1u << 8 | ttl);
	const uint8_t ach[E3_ACH_LEN] = { E3_ACH_PW_FIRST, 0, E3_ACH_ONDEMAND_CV >> 8, E3_ACH_ONDEMAND_CV & 0xff };
	struct e3_echo_request rq = {
		.h = { .version = rte_cpu_to_be_16(E3_ECHO_VERSION), .type = E3_ECHO_REQUEST,
		       .reply_mode = E3_ECHO_REPLY_ACH, .handle = rte_cpu_to_be_32(handle),
		       .seq = rte_cpu_to_be_32(seq) },
		.tlv_type = rte_cpu_to_be_16(E3_ECHO_TLV_FEC), .tlv_len = rte_cpu_to_be_16(8),
		.sub_type = rte_cpu_to_be_16(E3_ECHO_SUBTLV_NIL), .sub_len = rte_cpu_to_be_16(4),
		.nil_label = rte_cpu_to_be_32(label << 12),
	};

	e3_ntp_write(sent_ns, E3_ECHO_AT(&rq.h, sent_s));
	rte_ether_addr_copy(&nh->dst, &eh->dst_addr);
	rte_ether_addr_copy(&nh->src, &eh->src_addr);
	eh->ether_type = rte_cpu_to_be_16(E3_ETH_MPLS);
	h += RTE_ETHER_HDR_LEN;
	memcpy(h, &lse, E3_MPLS_HLEN);
	memcpy(h + E3_MPLS_HLEN, ach, E3_ACH_LEN);
	memcpy(h + E3_MPLS_HLEN + E3_ACH_LEN, &rq, sizeof(rq));
	return m;
}

int e3_node_pw_ping(const struct e3_pw_ping *p, char *err)
{
	if (!e3.settings.control_word)
		return E3_ERR(err, E3_EINVAL, "pseudowire OAM needs the control word on: its ACH takes the "
			      "control word's place (RFC 5085 VCCV type 1)");
	const struct e3_service *s = e3_service_get(p->service);

	if (s == NULL)
		return E3_ERR(err, E3_ENOENT, "service %u not found", p->service);
	uint32_t nhlfe = s->type == E3_SVC_ELINE ? s->nhlfe : e3_service_remote(s, p->source);

	if (nhlfe == E3_NONE)
		return E3_ERR(err, E3_ENOENT, s->type == E3_SVC_ELINE ?
			      "service %u has no pseudowire (both circuits here)" :
			      "service %u has no pseudowire to source %u", p->service, p->source);
	uint32_t label;
	const struct e3_nexthop *nh = e3_nhlfe_resolve(nhlfe, NULL, 0, &label);
	const struct e3_port *port = nh ? e3_port_get(nh->port) : NULL;

	if (port == NULL || !port->link_up)
		return E3_ERR(err, E3_ENOENT, "service %u: no usable path (nhlfe %u)", p->service, nhlfe);
	uint8_t ttl = p->ttl ? p->ttl : e3.settings.ttl;
	uint64_t now = e3_wall_ns();
	struct rte_mbuf *m = request(nh, label, ttl, p->handle, p->seq, now);

	if (m == NULL)
		return E3_ERR(err, E3_ENOSPC, "no mbuf");
	e3_pwoam_sent(p->handle);   /* before it leaves: its reply is ours */
	if (e3_inject(nh->port, &m, 1) != 1)
		return E3_ERR(err, E3_ENOSPC, "the worker's inject queue is full");
	keep(&(struct e3_pwoam_event){ .time_ns = now, .handle = p->handle, .seq = p->seq,
				      .service = p->service, .label_out = label, .ttl = ttl,
				      .source = s->type == E3_SVC_ELAN ? p->source : 0, .kind = E3_PWOAM_SENT });
	return 0;
}
