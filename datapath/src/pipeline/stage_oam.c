/* SPDX-License-Identifier: Apache-2.0
 *
 * stage_oam.c - G-ACh frames from the fabric: the link's (fabric_in found
 * the GAL alone) or a path check's (an OAM label entry over the GAL). Check
 * the ACH and the BFD packet, hand it to its session, and consume the frame. Whatever does not pass is dropped with its own reason.
 */
#include <string.h>

#include "pipeline/oam.h"
#include "pipeline/stage_out.h"

/* The reasons this stage drops frames for (docs/datapath.md). */
E3_DROP_REASON(OAM_BAD_ACH, "oam_bad_ach",
	"G-ACh frame whose ACH is not version 0 BFD control (0x0007), or an oam "
	"entry reached without a GAL");
E3_DROP_REASON(BFD_MALFORMED, "bfd_malformed",
	"BFD packet failing RFC 5880 6.8.6 (length, version, multiplier 0, M bit,"
	" My Discriminator 0, A bit)");
E3_DROP_REASON(BFD_BAD_DISCRIMINATOR, "bfd_bad_discriminator",
	"Your Discriminator 0 while the sender is Init or Up, or not the "
	"session's; while Up, a My Discriminator other than the learned one");
E3_DROP_REASON(BFD_BAD_AUTH, "bfd_bad_auth",
	"authentication not the session's: an A bit on a session without a key or"
	" none on one with it, another auth type or key id, a wrong Keyed SHA1 "
	"digest, or a sequence number outside the window (RFC 5880 6.7.4)");
E3_DROP_REASON(OAM_NO_SESSION, "oam_no_session",
	"BFD on a port, or through an oam label, without a session");

/* The events this stage records in a packet trace (trace.h). */
E3_TRACE_EVENT(OAM_NOT_BFD, "oam: not a BFD ACH");
E3_TRACE_EVENT(OAM_REFUSED, "oam: bfd packet refused (check %d)");
E3_TRACE_EVENT(OAM_BFD,     "oam: bfd session %u state %S my_disc %u your_disc %u");
E3_TRACE_EVENT(VERDICT_BFD, "bfd session %u");

/* The drop counter of a BFD packet refused, by decode or by its session. */
static enum e3_drop bfd_drop(enum e3_bfd_bad bad)
{
	switch (bad) {
	case E3_BFD_BAD_YOUR_DISC:
		return E3_DROP_BFD_BAD_DISCRIMINATOR;
	case E3_BFD_BAD_AUTH:
		return E3_DROP_BFD_BAD_AUTH;
	default:
		return E3_DROP_BFD_MALFORMED;
	}
}

static __rte_always_inline void oam_one(struct e3_burst *b, unsigned i, uint64_t now_us,
					const bool tracing)
{
	struct rte_mbuf *m = b->pkts[i];
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	const bool path = b->meta[i].gach;
	unsigned off = RTE_ETHER_HDR_LEN + E3_MPLS_HLEN * (path ? 2 : 1);  /* the ACH */
	unsigned len = rte_pktmbuf_data_len(m);

	/* ACH: 0001 | version 0 | reserved 0 | channel type (RFC 5586). */
	if (len < off + 4 || d[off] != 0x10 || d[off + 1] != 0 ||
	    (d[off + 2] << 8 | d[off + 3]) != E3_ACH_BFD) {
		E3_TRACE(b, i, OAM_NOT_BFD);
		e3_drop(b, i, E3_DROP_OAM_BAD_ACH);
		return;
	}
	struct e3_bfd_pkt p;
	enum e3_bfd_bad bad = e3_bfd_decode(d + off + 4, len - off - 4, &p);

	if (bad != E3_BFD_OK) {
		E3_TRACE(b, i, OAM_REFUSED, bad);
		e3_drop(b, i, bfd_drop(bad));
		return;
	}
	struct e3_oam_session *s = path ? e3_oam_path_session(b->meta[i].index) :
					  e3_oam_by_port(b->rx->port_id);

	if (s == NULL) {
		e3_drop(b, i, E3_DROP_OAM_NO_SESSION);
		return;
	}
	E3_TRACE(b, i, OAM_BFD, s->conf.id, p.state, p.my_disc, p.your_disc);
	int rc = e3_oam_rx(s, &p, now_us);

	if (rc < 0) {
		e3_drop(b, i, bfd_drop((enum e3_bfd_bad)-rc));
		return;
	}
	E3_TRACE_VERDICT(b, i, VERDICT_BFD, s->conf.id);
	rte_pktmbuf_free(m);
	e3_done(b, i);
}

static __rte_always_inline unsigned oam(struct e3_burst *b, const bool tracing)
{
	uint64_t now_us = 0;
	unsigned n = 0;

	for (unsigned i = 0; i < b->n; i++) {
		if (b->meta[i].next != NX_OAM)
			continue;
		n++;
		if (now_us == 0)
			now_us = e3_now_us();
		oam_one(b, i, now_us, tracing);
	}
	return n;
}

E3_STAGE_ENTRY(oam)
