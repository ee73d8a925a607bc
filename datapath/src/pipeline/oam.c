/* SPDX-License-Identifier: Apache-2.0
 *
 * oam.c - BFD sessions at run time (oam.h): the workers' timers, frame
 * building, reception and the protection bytes.
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include "tables/nhlfe_table.h"
#include "pipeline/oam.h"
#include "port/port.h"
#include "pipeline/stages.h"
#include "pipeline/stage_tx.h"

struct e3_oam_session *e3_oam_tbl[E3_MAX_SESSIONS];
/* Session id + 1 per DPDK port, 0 = none. */
static uint16_t by_port[RTE_MAX_ETHPORTS];
/* Sessions live below this id (the ticks scan no further). */
static uint32_t id_limit;

int e3_oam_init(void)
{
	memset(e3_watch_up, 1, sizeof(e3_watch_up));
	return 0;
}

struct e3_oam_session *e3_oam_by_port(uint16_t port)
{
	uint16_t v = __atomic_load_n(&by_port[port % RTE_MAX_ETHPORTS], __ATOMIC_ACQUIRE);

	return v == 0 ? NULL : E3_RCU_GET(e3_oam_tbl[v - 1]);
}

void e3_oam_ports_rebuild(void)
{
	uint16_t map[RTE_MAX_ETHPORTS] = { 0 };

	for (uint32_t id = 0; id < id_limit; id++) {
		const struct e3_oam_session *s = e3_oam_tbl[id];
		const struct e3_nexthop *nh = s && s->conf.label == 0 ? e3_nexthop_get(s->conf.nexthop) : NULL;

		if (nh != NULL)
			map[nh->port] = (uint16_t)(id + 1);
	}
	for (unsigned p = 0; p < RTE_MAX_ETHPORTS; p++)
		__atomic_store_n(&by_port[p], map[p], __ATOMIC_RELEASE);
}

void e3_oam_publish(uint32_t id, struct e3_oam_session *s)
{
	struct e3_oam_session *old = e3_oam_tbl[id];

	if (s != NULL && id >= id_limit)
		__atomic_store_n(&id_limit, id + 1, __ATOMIC_RELEASE);
	E3_RCU_SET(e3_oam_tbl[id], s);
	e3_oam_ports_rebuild();
	/* No session: nothing to fail over on; a new one starts usable. */
	e3_watch_set(id, s == NULL || s->usable);
	e3_rcu_free(old);
}

/* Apply a state change to the protection byte. Session lock held. */
static void on_event(struct e3_oam_session *s, int ev, uint64_t now_us)
{
	if (ev == E3_BFD_EV_DOWN) {
		s->downs++;
		s->changed_us = now_us;
		s->failed = true;
		s->usable = false;
		e3_watch_set(s->conf.id, false);   /* at once: this is the failover */
	} else if (ev == E3_BFD_EV_UP) {
		s->ups++;
		s->changed_us = s->up_since_us = now_us;
	}
}

/* Whether s's neighbour is pausing: it slowed its Desired Min TX while Up
 * to E3_OAM_PAUSE_FACTOR times its lowest. BFD has no other sign of a
 * pause that keeps the session (RFC 5880 6.8.3 lets an Up session change
 * its intervals); one slower than that for longer than the detection time
 * it asked for was no pause but its new interval, which becomes its
 * lowest. Session lock held. */
static bool neighbour_pausing(struct e3_oam_session *s, uint64_t now_us)
{
	const struct e3_bfd *b = &s->bfd;
	const uint32_t tx = b->remote_min_tx_us;
	bool pausing = false;

	if (b->state != E3_BFD_UP) {
		s->remote_tx_base_us = 0;
	} else if (s->remote_tx_base_us == 0 || tx < s->remote_tx_base_us) {
		s->remote_tx_base_us = tx;
	} else if ((uint64_t)tx >= (uint64_t)E3_OAM_PAUSE_FACTOR * s->remote_tx_base_us) {
		if (!s->paused) {
			s->pauses++;
			s->paused_us = now_us;
		}
		pausing = now_us - s->paused_us <= e3_bfd_detect_time_us(b);
		if (!pausing)
			s->remote_tx_base_us = tx;
	}
	__atomic_store_n(&s->paused, pausing, __ATOMIC_RELAXED);
	return pausing;
}

/* The link session of the port a path check leaves by, or NULL (a link
 * session, or none on that port). */
static const struct e3_oam_session *first_link(const struct e3_oam_session *s)
{
	if (s->conf.label == 0)
		return NULL;
	const struct e3_nexthop *nh = e3_nexthop_get(s->conf.nexthop);

	return nh != NULL ? e3_oam_by_port(nh->port) : NULL;
}

/* Usable again after wtr_s Up (a flapping path does not flap traffic), or
 * at once on the first Up or at the end of a pause (it never went down);
 * unusable if it never came up, and a path check while the neighbour at
 * its end or at its first link pauses. The byte is written from s->usable
 * every time, so a session replaced under a worker still finishing with
 * the old one cannot leave it wrong. Session lock held. */
static void restore(struct e3_oam_session *s, uint64_t now_us)
{
	const struct e3_oam_session *link = first_link(s);
	bool paused = neighbour_pausing(s, now_us) ||
		      (link != NULL && __atomic_load_n(&link->paused, __ATOMIC_RELAXED));

	if (s->bfd.state == E3_BFD_UP) {
		if (paused && s->conf.label != 0)
			s->usable = false;
		else if (!s->usable && (!s->failed || now_us - s->up_since_us >= s->conf.wtr_s * 1000000ull))
			s->usable = true;
	} else if (s->usable && !s->failed && s->ups == 0 &&
		   now_us - s->created_us >= E3_OAM_BRINGUP_S * 1000000ull) {
		s->failed = true;
		s->usable = false;
	}
	if (e3_watch_usable(s->conf.id) != s->usable)
		e3_watch_set(s->conf.id, s->usable);
}

/* [label +] GAL + ACH + BFD to nh (label 0: the link's G-ACh), or NULL
 * when the pool is empty. */
static struct rte_mbuf *bfd_frame(const struct e3_nexthop *nh, uint32_t label,
				  const uint8_t *bfd, unsigned bfd_len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(e3.pool);
	const uint16_t lsp = label != 0 ? E3_MPLS_HLEN : 0;
	const uint16_t len = RTE_ETHER_HDR_LEN + lsp + E3_GACH_HLEN + bfd_len;

	if (m == NULL)
		return NULL;
	uint8_t *h = (uint8_t *)rte_pktmbuf_append(m, len);
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)h;
	uint32_t top = rte_cpu_to_be_32(label << 12 | 7u << 9 | e3.settings.ttl);
	uint32_t gal = rte_cpu_to_be_32(E3_LABEL_GAL << 12 | 7u << 9 | 1u << 8 | 1u);
	const uint8_t ach[4] = { 0x10, 0x00, E3_ACH_BFD >> 8, E3_ACH_BFD & 0xff };

	rte_ether_addr_copy(&nh->dst, &eh->dst_addr);
	rte_ether_addr_copy(&nh->src, &eh->src_addr);
	eh->ether_type = rte_cpu_to_be_16(E3_ETH_MPLS);
	h += RTE_ETHER_HDR_LEN;
	if (lsp != 0)
		memcpy(h, &top, 4);
	memcpy(h + lsp, &gal, 4);
	memcpy(h + lsp + 4, ach, 4);
	memcpy(h + lsp + E3_GACH_HLEN, bfd, bfd_len);
	return m;
}

/* Why the first hop of session s is down, or E3_BFD_DIAG_NONE: its port
 * lost carrier, or (a path session) the link session of its port is not
 * Up. A neighbour's AdminDown or a link session's timeout so takes the
 * paths over that link down at once, not a detection time later, when
 * traffic over them is already being lost. */
static enum e3_bfd_diag first_hop_down(const struct e3_oam_session *s, const struct e3_port *p)
{
	if (!p->link_up)
		return E3_BFD_DIAG_PATH_DOWN;
	const struct e3_oam_session *link = first_link(s);

	if (link != NULL && __atomic_load_n(&link->bfd.state, __ATOMIC_RELAXED) != E3_BFD_UP)
		return E3_BFD_DIAG_CONCAT_DOWN;
	return E3_BFD_DIAG_NONE;
}

static void tick_one(struct e3_worker *w, struct e3_oam_session *s, const struct e3_nexthop *nh,
		     const struct e3_port *p, uint64_t now_us)
{
	enum e3_bfd_diag hop = first_hop_down(s, p);
	int ev = hop == E3_BFD_DIAG_NONE ? e3_bfd_check(&s->bfd, now_us) : e3_bfd_down(&s->bfd, hop, now_us);

	on_event(s, ev, now_us);
	restore(s, now_us);
	if (hop != E3_BFD_DIAG_NONE || !e3_bfd_tx_due(&s->bfd, now_us))
		return;
	uint8_t pkt[E3_BFD_MAX_LEN];
	unsigned len = e3_bfd_tx(&s->bfd, now_us, pkt);
	struct rte_mbuf *m = bfd_frame(nh, s->conf.label, pkt, len);

	if (m == NULL) {
		w->st.port[nh->port].drops[E3_DROP_NO_MBUF]++;
		return;
	}
	s->tx_pkts++;
	e3_tx(w, nh->port, m);
}

void e3_oam_tick(struct e3_worker *w, uint64_t now_us)
{
	uint32_t n = __atomic_load_n(&id_limit, __ATOMIC_ACQUIRE);

	for (uint32_t id = 0; id < n; id++) {
		struct e3_oam_session *s = E3_RCU_GET(e3_oam_tbl[id]);

		if (s == NULL)
			continue;
		const struct e3_nexthop *nh = e3_nexthop_get(s->conf.nexthop);
		const struct e3_port *p = nh ? e3_port_get(nh->port) : NULL;

		/* The worker of the port's first queue runs the session. */
		if (p == NULL || p->rxq_worker[0] != (int16_t)w->idx)
			continue;
		rte_spinlock_lock(&s->lock);
		tick_one(w, s, nh, p, now_us);
		rte_spinlock_unlock(&s->lock);
	}
	e3_tx_flush(w, 0);
}

int e3_oam_rx(struct e3_oam_session *s, const struct e3_bfd_pkt *p, uint64_t now_us)
{
	rte_spinlock_lock(&s->lock);
	int ev = e3_bfd_rx(&s->bfd, p, now_us);

	if (ev >= 0) {
		s->rx_pkts++;
		on_event(s, ev, now_us);
		restore(s, now_us);
	}
	rte_spinlock_unlock(&s->lock);
	return ev < 0 ? ev : 0;
}
