/* SPDX-License-Identifier: Apache-2.0
 *
 * oam.h - in-band OAM: BFD sessions on fabric adjacencies, run by the
 * workers (docs/ha.md).
 *
 * Frame: Ethernet to the neighbour (0x8847) | GAL (label 13, TC 7, S=1,
 * TTL 1) | ACH 0x1000 + channel 0x0007 (BFD control, RFC 5885) | BFD control
 * packet (24 bytes). This is the MPLS G-ACh of RFC 5586, as MPLS-TP uses it
 * for BFD (RFC 6428); tshark dissects it as BFD.
 *
 * A session's timers run on the worker that polls its port's first rx queue
 * (e3_oam_tick), so a datapath whose workers stop stops sending and answering,
 * and its neighbours see it go down exactly as if it had died. Frames are
 * received by whichever worker polls them (stage_oam.c): the session's
 * spinlock orders that against the timers; it is taken once per BFD packet,
 * never for customer frames.
 *
 * Each session owns a protection byte (watch.h): cleared the moment the
 * session leaves Up (timeout, neighbour signalled down, carrier lost), set
 * again only after wtr_s seconds Up. A new link session's byte starts set,
 * so a fresh fabric uses its primaries while sessions come up, and is
 * cleared if the session is not Up within E3_OAM_BRINGUP_S. A new path
 * session's byte starts clear and is set at its first Up.
 *
 * A neighbour that slows its transmit interval while Up is pausing (a
 * warm restart or handover asks for its hold that way: e3_bfd_hold):
 * the path checks that end at it or leave over a link to it are unusable,
 * without going down, until it speeds up again, so the traffic they
 * protect moves to its backups while the neighbour still forwards.
 */
#ifndef E3_OAM_H
#define E3_OAM_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_spinlock.h>

#include "base/rcu.h"

#include "base/bfd.h"
#include "base/defs.h"
#include "base/watch.h"

#define E3_LABEL_GAL 13
#define E3_ACH_BFD 0x0007
#define E3_GACH_HLEN 8                 /* GAL + ACH */
#define E3_OAM_BRINGUP_S 5
/* A neighbour's Desired Min TX this many times its lowest while Up: it is
 * pausing (a hold asks for its restart's time, tens of intervals). */
#define E3_OAM_PAUSE_FACTOR 2

struct e3_oam_session {
	rte_spinlock_t lock;
	struct e3_bfd bfd;
	struct e3_bfd_conf conf;
	bool usable;                    /* mirrors e3_watch_up[conf.id] */
	bool failed;                    /* went down (or never came up): restore waits wtr_s */
	bool paused;                    /* the neighbour is pausing (read by the paths over its link) */
	uint32_t remote_tx_base_us;     /* the neighbour's lowest Desired Min TX while Up; 0: not Up */
	uint64_t created_us, up_since_us, changed_us, paused_us;
	uint64_t tx_pkts, rx_pkts, ups, downs, pauses;
};

extern struct e3_oam_session *e3_oam_tbl[E3_MAX_SESSIONS];   /* RCU-published */

int e3_oam_init(void);

/* Worker: send what is due, check detection times, carrier and
 * wait-to-restore of the sessions this worker runs. */
struct e3_worker;
void e3_oam_tick(struct e3_worker *w, uint64_t now_us);

/* The link session that takes BFD arriving on port, or NULL. */
struct e3_oam_session *e3_oam_by_port(uint16_t port);

/* The path session id (named by an OAM label entry), or NULL. */
static inline struct e3_oam_session *e3_oam_path_session(uint32_t id)
{
	struct e3_oam_session *s = id < E3_MAX_SESSIONS ? E3_RCU_GET(e3_oam_tbl[id]) : NULL;

	return s != NULL && s->conf.label != 0 ? s : NULL;
}
/* A decoded, valid packet for s (any worker). Returns < 0 (an
 * e3_bfd_bad) when the session refuses it. */
int e3_oam_rx(struct e3_oam_session *s, const struct e3_bfd_pkt *p, uint64_t now_us);

/* Main lcore: publish, replace or remove session id (NULL). */
void e3_oam_publish(uint32_t id, struct e3_oam_session *s);
/* Main lcore: the port -> session map, after sessions or nexthops changed. */
void e3_oam_ports_rebuild(void);

#endif
