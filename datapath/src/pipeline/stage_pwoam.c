/* SPDX-License-Identifier: Apache-2.0
 *
 * stage_pwoam.c - MPLS echo in a PW's associated channel (pwoam.h): logged
 * at a transit node whose TTL ran out and at each end; a request answered
 * by its egress on the PW's reverse direction. Consumed here: never a
 * customer's frame.
 */
#include "tables/nhlfe_table.h"
#include "pipeline/pwoam.h"
#include "pipeline/stage_out.h"

/* The reasons this stage drops frames for (docs/datapath.md). */
E3_DROP_REASON(PW_OAM_BAD, "pw_oam_bad",
	"a PW associated channel frame that is not an MPLS echo this node takes: "
	"another channel, a malformed message, or on a flood tree or a site's "
	"circuit label");
E3_DROP_REASON(PW_OAM_RATE, "pw_oam_rate_limited",
	"an MPLS echo request over the receiving port's punt rate (100 a second "
	"per worker, a burst of 10): neither logged nor answered, so a "
	"neighbour's flood cannot become events and status writes");
E3_DROP_REASON(PW_OAM_UNSOLICITED, "pw_oam_unsolicited",
	"an MPLS echo reply to a handle this node did not send (it keeps its last"
	" 16 `pw_ping` handles): replies to our own pings are never rate-limited,"
	" forged ones never logged");

/* The events this stage records in a packet trace (trace.h). */
E3_TRACE_EVENT(PW_OAM_LOGGED, "pw-oam: echo type %u handle %u seq %u logged");
E3_TRACE_EVENT(PW_OAM_REPLY,  "pw-oam: reply to handle %u seq %u on nhlfe %u");

static __rte_always_inline void consume(struct e3_burst *b, unsigned i)
{
	rte_pktmbuf_free(b->pkts[i]);
	e3_done(b, i);
}

/* The PW's reverse direction at its egress: where a reply goes. */
static __rte_always_inline uint32_t reverse(const struct e3_meta *mt)
{
	return mt->svc->type == E3_SVC_ELINE ? mt->svc->nhlfe : e3_service_remote(mt->svc, mt->source);
}

static __rte_always_inline void pw_oam_one(struct e3_burst *b, unsigned i, const bool tracing)
{
	struct e3_meta *mt = &b->meta[i];
	struct rte_mbuf *m = b->pkts[i];
	const uint16_t at = RTE_ETHER_HDR_LEN + E3_MPLS_HLEN;   /* the ACH */

	if (rte_pktmbuf_data_len(m) < at + E3_ACH_LEN + sizeof(struct e3_echo)) {
		e3_drop(b, i, E3_DROP_TRUNCATED);
		return;
	}
	struct e3_echo *e = rte_pktmbuf_mtod_offset(m, struct e3_echo *, at + E3_ACH_LEN);

	if (e->version != rte_cpu_to_be_16(E3_ECHO_VERSION) ||
	    (e->type != E3_ECHO_REQUEST && e->type != E3_ECHO_REPLY) ||
	    (mt->svc != NULL && mt->flooded)) {
		e3_drop(b, i, E3_DROP_PW_OAM_BAD);
		return;
	}
	/* A reply is ours or nobody's. Every request becomes an event the
	 * agent reports, and a reply: what a neighbour can make us do is
	 * bounded per port. */
	if (e->type == E3_ECHO_REPLY && mt->svc != NULL) {
		if (!e3_pwoam_ours(rte_be_to_cpu_32(e->handle))) {
			e3_drop(b, i, E3_DROP_PW_OAM_UNSOLICITED);
			return;
		}
	} else if (!e3_tb_take(&b->w->pwoam[b->rx->port_id], E3_PWOAM_PPS, rte_rdtsc(), rte_get_tsc_hz())) {
		e3_drop(b, i, E3_DROP_PW_OAM_RATE);
		return;
	}
	uint64_t now = e3_wall_ns();
	struct e3_pwoam_event ev = {
		.time_ns = now, .handle = rte_be_to_cpu_32(e->handle), .seq = rte_be_to_cpu_32(e->seq),
		.service = E3_NONE, .label_in = mt->label, .ttl = mt->ttl,
	};

	E3_TRACE(b, i, PW_OAM_LOGGED, e->type, ev.handle, ev.seq);
	if (mt->svc == NULL) {
		/* Transit: the request goes no further; the label it would
		 * have gone on tells the trace where the path continues. */
		uint32_t out = 0;

		if (e->type == E3_ECHO_REQUEST)
			e3_nhlfe_resolve(mt->index, NULL, 0, &out);
		ev.kind = E3_PWOAM_TRANSIT;
		ev.label_out = out;
		e3_pwoam_log(&ev);
		consume(b, i);
		return;
	}
	ev.service = mt->svc->id;
	ev.source = mt->svc->type == E3_SVC_ELAN ? mt->source : 0;
	if (e->type == E3_ECHO_REPLY) {
		ev.kind = E3_PWOAM_REPLY;
		ev.rc = e->rc;
		ev.rtt_ns = (int64_t)(now - e3_ntp_read(E3_ECHO_AT(e, sent_s)));
		e3_pwoam_log(&ev);
		consume(b, i);
		return;
	}
	ev.kind = E3_PWOAM_EGRESS;
	e3_pwoam_log(&ev);
	uint32_t back = reverse(mt);

	if (e->reply_mode != E3_ECHO_REPLY_ACH || back == E3_NONE) {
		consume(b, i);   /* no reply asked for, or no way back */
		return;
	}
	e->type = E3_ECHO_REPLY;
	e->rc = E3_ECHO_RC_EGRESS;
	e->rsc = 1;
	e3_ntp_write(now, E3_ECHO_AT(e, rcvd_s));
	rte_pktmbuf_adj(m, at);      /* from the ACH on: it takes the control word's place */
	mt->tc = 7;
	E3_TRACE(b, i, PW_OAM_REPLY, ev.handle, ev.seq, back);
	e3_out_push(b, i, m, back, 0, false, tracing);
}

static __rte_always_inline unsigned pw_oam(struct e3_burst *b, const bool tracing)
{
	unsigned n = 0;

	for (unsigned i = 0; i < b->n; i++)
		if (b->meta[i].next == NX_PW_OAM) {
			pw_oam_one(b, i, tracing);
			n++;
		}
	return n;
}

E3_STAGE_ENTRY(pw_oam)
