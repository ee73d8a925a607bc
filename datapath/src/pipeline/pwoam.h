/* SPDX-License-Identifier: Apache-2.0
 *
 * pwoam.h - pseudowire OAM: on-demand connectivity verification and route
 * tracing of a service's pseudowire, as RFC 6426 carries MPLS echo (RFC
 * 8029) without IP in an associated channel, here the PW's own (RFC 4385;
 * VCCV type 1 of RFC 5085):
 *
 *   | Ethernet | PW label (TTL) | ACH 0x10 0x00 0x0025 | MPLS echo message |
 *
 * The ACH takes the control word's place (first nibble 1, not 0), so PW
 * OAM needs the control word on, and no such frame ever reaches a
 * customer. The egress of a request logs it and answers on the PW's
 * reverse direction (reply mode 4: the application control channel); the
 * origin logs the reply with its round trip. A transit node where a
 * request's TTL runs out logs it and drops it: the controller collects the
 * logs of every node through the agents to trace the path (docs/operations.md).
 */
#ifndef E3_PWOAM_H
#define E3_PWOAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#define E3_ACH_PW_FIRST     0x10     /* nibble 1, version 0 */
#define E3_ACH_ONDEMAND_CV  0x0025   /* RFC 6426 */
#define E3_ACH_LEN          4
/* MPLS echo frames a worker takes from one port a second (a burst of a
 * tenth of it): a ping or a trace sends a few, a neighbour's flood no more
 * than this becomes events and replies. */
#define E3_PWOAM_PPS        100

#define E3_ECHO_VERSION     1
#define E3_ECHO_REQUEST     1
#define E3_ECHO_REPLY       2
#define E3_ECHO_REPLY_ACH   4        /* reply mode: application level control channel */
#define E3_ECHO_RC_EGRESS   3        /* replying router is an egress for the FEC at stack depth */
#define E3_ECHO_TLV_FEC     1        /* Target FEC Stack */
#define E3_ECHO_SUBTLV_NIL  16       /* Nil FEC: the label */

/* The MPLS echo message header (RFC 8029 section 3), network order. */
struct e3_echo {
	rte_be16_t version, flags;
	uint8_t type, reply_mode, rc, rsc;
	rte_be32_t handle, seq;
	rte_be32_t sent_s, sent_f;       /* NTP format */
	rte_be32_t rcvd_s, rcvd_f;
} __rte_packed;

/* A request as the origin sends it: the header and a Target FEC Stack
 * whose one element is a Nil FEC naming the PW label. */
struct e3_echo_request {
	struct e3_echo h;
	rte_be16_t tlv_type, tlv_len;
	rte_be16_t sub_type, sub_len;
	rte_be32_t nil_label;            /* label << 12 */
} __rte_packed;

enum e3_pwoam_kind { E3_PWOAM_SENT, E3_PWOAM_TRANSIT, E3_PWOAM_EGRESS, E3_PWOAM_REPLY, E3_PWOAM_KINDS };

/* One log entry. */
struct e3_pwoam_event {
	uint64_t time_ns;        /* wall clock (CLOCK_REALTIME) */
	int64_t rtt_ns;          /* REPLY: since the request was sent */
	uint32_t handle, seq;
	uint32_t service;        /* E3_NONE at a transit node */
	uint32_t label_in;       /* the label it came on (SENT: 0) */
	uint32_t label_out;      /* SENT: the label written; TRANSIT: the one a swap would write */
	uint16_t source;         /* E-LAN: SENT the target endpoint, else the one it came from */
	uint8_t kind;            /* enum e3_pwoam_kind */
	uint8_t ttl;             /* as it arrived (SENT: as sent) */
	uint8_t rc;              /* REPLY: the return code */
	uint8_t pad[7];
};

extern const char *const e3_pwoam_kind_names[E3_PWOAM_KINDS];

/* Whether p, where a control word would be, starts an ACH of MPLS echo. */
static inline bool e3_pwoam_ach(const uint8_t *p)
{
	return p[0] == E3_ACH_PW_FIRST && p[1] == 0 && p[2] == 0 && p[3] == E3_ACH_ONDEMAND_CV;
}

uint64_t e3_wall_ns(void);
/* A time stamp in NTP format (8 bytes, network order) at at, and back. */
void e3_ntp_write(uint64_t ns, void *at);
uint64_t e3_ntp_read(const void *at);
#define E3_ECHO_AT(e, field) ((uint8_t *)(e) + offsetof(struct e3_echo, field))

int e3_pwoam_init(void);
/* Any lcore: log an event (lost when the log's queue is full). */
void e3_pwoam_log(const struct e3_pwoam_event *ev);
/* Main lcore: take up to n queued events. */
unsigned e3_pwoam_take(struct e3_pwoam_event *out, unsigned n);
/* Main lcore: this node sent a request with handle (pw_ping). Workers:
 * was handle one of the last E3_PWOAM_HANDLES sent? Only a reply to one is
 * logged, and never rate-limited: a flood cannot crowd out our own ping. */
#define E3_PWOAM_HANDLES 16
void e3_pwoam_sent(uint32_t handle);
bool e3_pwoam_ours(uint32_t handle);

#endif
