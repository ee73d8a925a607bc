/* SPDX-License-Identifier: Apache-2.0
 *
 * bfd.c - the control operations on BFD sessions (node.h). Main lcore
 * (or a holder of the control lock) only.
 *
 * Changing only timers keeps the session and its state (a Poll Sequence
 * tells the neighbour); changing its nexthop or label starts a new session.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "node/node_int.h"
#include "node/node.h"
#include "base/dp.h"
#include "tables/nhlfe_table.h"
#include "pipeline/oam.h"
#include "port/port.h"

/* The Keyed SHA1 key of c: its bytes in out, and how many (0: none; -1:
 * not 1..20 bytes of hex). */
static int auth_key(const struct e3_bfd_conf *c, uint8_t out[E3_BFD_KEY_MAX])
{
	size_t n = strlen(c->auth_key);

	if (n == 0)
		return 0;
	if (n % 2 != 0 || n > 2 * E3_BFD_KEY_MAX)
		return -1;
	for (size_t k = 0; k < n; k += 2) {
		unsigned v;

		if (!isxdigit((unsigned char)c->auth_key[k]) || !isxdigit((unsigned char)c->auth_key[k + 1]) ||
		    sscanf(c->auth_key + k, "%2x", &v) != 1)
			return -1;
		out[k / 2] = (uint8_t)v;
	}
	return (int)(n / 2);
}

static int validate(const struct e3_bfd_conf *c, char *err)
{
	if (c->id >= E3_MAX_SESSIONS)
		return E3_ERR(err, E3_EINVAL, "id: must be < %u", E3_MAX_SESSIONS);
	if (c->tx_ms < 1 || c->tx_ms > 60000)
		return E3_ERR(err, E3_EINVAL, "tx_ms: must be 1..60000");
	if (c->rx_ms < 1 || c->rx_ms > 60000)
		return E3_ERR(err, E3_EINVAL, "rx_ms: must be 1..60000");
	if (c->multiplier < 1)
		return E3_ERR(err, E3_EINVAL, "multiplier: must be 1..255");
	if (c->wtr_s > 3600)
		return E3_ERR(err, E3_EINVAL, "wtr_s: must be 0..3600");
	if (!e3_node_nexthop_used(c->nexthop))
		return E3_ERR(err, E3_ENOENT, "nexthop %u not found", c->nexthop);
	if (c->label != 0 && (c->label < E3_LABEL_MIN || c->label >= E3_LABEL_SPACE))
		return E3_ERR(err, E3_EINVAL, "label: must be 0 (a link session) or %u..%u",
			      E3_LABEL_MIN, E3_LABEL_SPACE - 1);
	if (c->label != 0)
		return 0;
	uint16_t port = e3_nexthop_get(c->nexthop)->port;
	const struct e3_oam_session *on_port = e3_oam_by_port(port);

	if (on_port != NULL && on_port->conf.id != c->id)
		return E3_ERR(err, E3_EEXIST, "port %s already has BFD session %u",
			      e3_port_get(port)->conf.name, on_port->conf.id);
	return 0;
}

/* A discriminator no other session here has: random, never zero. */
static uint32_t new_disc(uint32_t id)
{
	uint32_t r = 0;

	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint32_t)rte_rdtsc();
	/* The low 12 bits are the id: unique on this node. */
	return (r & ~(uint32_t)(E3_MAX_SESSIONS - 1)) | id | (r == 0 ? E3_MAX_SESSIONS : 0);
}

int e3_node_bfd_add(const struct e3_bfd_conf *c, char *err)
{
	int rc = validate(c, err);

	if (rc < 0)
		return rc;
	uint8_t key[E3_BFD_KEY_MAX];
	int key_len = auth_key(c, key);

	if (key_len < 0)
		return E3_ERR(err, E3_EINVAL, "auth_key: must be 1..20 bytes in hex (2..40 digits), or empty");
	struct e3_oam_session *old = e3_oam_tbl[c->id];
	uint64_t now = e3_now_us();

	if (old != NULL && old->conf.nexthop == c->nexthop && old->conf.label == c->label) {
		if (memcmp(&old->conf, c, sizeof(*c)) == 0)
			return e3_node_ok(false);
		rte_spinlock_lock(&old->lock);
		old->conf = *c;
		e3_bfd_configure(&old->bfd, c->tx_ms * 1000, c->rx_ms * 1000, c->multiplier, now);
		e3_bfd_set_auth(&old->bfd, c->auth_key_id, key, (uint8_t)key_len);
		rte_spinlock_unlock(&old->lock);
		return e3_node_ok(true);
	}
	struct e3_oam_session *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return E3_ERR(err, E3_ENOSPC, "out of memory");
	rte_spinlock_init(&s->lock);
	s->conf = *c;
	/* A link session starts usable, so a fresh fabric uses its primaries
	 * while sessions come up. A path check starts unusable: traffic takes
	 * its path only once the check has seen it work end to end, transit
	 * entries included (its first Up makes it usable at once). */
	s->usable = c->label == 0;
	s->created_us = s->changed_us = now;
	e3_bfd_init(&s->bfd, new_disc(c->id), c->tx_ms * 1000, c->rx_ms * 1000, c->multiplier, now);
	e3_bfd_set_auth(&s->bfd, c->auth_key_id, key, (uint8_t)key_len);
	e3_node_nexthop_ref(c->nexthop, 1);
	if (old != NULL)
		e3_node_nexthop_ref(old->conf.nexthop, -1);
	e3_oam_publish(c->id, s);
	return e3_node_ok(true);
}

int e3_node_bfd_del(uint32_t id, char *err)
{
	if (id >= E3_MAX_SESSIONS || e3_oam_tbl[id] == NULL)
		return E3_ERR(err, E3_ENOENT, "bfd session %u not found", id);
	e3_node_nexthop_ref(e3_oam_tbl[id]->conf.nexthop, -1);
	e3_oam_publish(id, NULL);
	return e3_node_ok(true);
}

/* fn on every session, its lock held; returns how many fn counted. */
static unsigned count_sessions(bool (*fn)(struct e3_oam_session *s, uint64_t now, void *arg), void *arg)
{
	uint64_t now = e3_now_us();
	unsigned n = 0;

	for (uint32_t id = 0; id < E3_MAX_SESSIONS; id++) {
		struct e3_oam_session *s = e3_oam_tbl[id];

		if (s == NULL)
			continue;
		rte_spinlock_lock(&s->lock);
		n += fn(s, now, arg);
		rte_spinlock_unlock(&s->lock);
	}
	return n;
}

static bool admin_down(struct e3_oam_session *s, uint64_t now, void *arg)
{
	bool told = s->bfd.state == E3_BFD_INIT || s->bfd.state == E3_BFD_UP;

	(void)arg;
	/* Our own entries stay as they are: we forward until we exit. */
	e3_bfd_admin(&s->bfd, true, now);
	return told;
}

unsigned e3_node_bfd_admin_down_all(void)
{
	return count_sessions(admin_down, NULL);
}

static bool hold(struct e3_oam_session *s, uint64_t now, void *arg)
{
	if (s->bfd.state != E3_BFD_UP)
		return false;
	e3_bfd_hold(&s->bfd, *(const uint64_t *)arg, now);
	return true;
}

unsigned e3_node_bfd_hold_all(uint64_t detect_us)
{
	return count_sessions(hold, &detect_us);
}

static bool polling(struct e3_oam_session *s, uint64_t now, void *arg)
{
	(void)now;
	(void)arg;
	return s->bfd.state == E3_BFD_UP && s->bfd.poll;
}

unsigned e3_node_bfd_polling(void)
{
	return count_sessions(polling, NULL);
}

void e3_node_bfd_save_walk(e3_bfd_save_fn fn, void *arg)
{
	for (uint32_t id = 0; id < E3_MAX_SESSIONS; id++) {
		struct e3_oam_session *s = e3_oam_tbl[id];
		struct e3_bfd_saved st = { .id = id };

		if (s == NULL)
			continue;
		rte_spinlock_lock(&s->lock);
		const struct e3_bfd *b = &s->bfd;
		bool up = b->state == E3_BFD_UP;

		st.remote_state = b->remote_state;
		st.diag = b->diag;
		st.remote_mult = b->remote_detect_mult;
		st.local_disc = b->local_disc;
		st.remote_disc = b->remote_disc;
		st.remote_min_rx_us = b->remote_min_rx_us;
		st.remote_min_tx_us = b->remote_min_tx_us;
		st.xmit_seq = b->xmit_seq;
		st.rcv_seq = b->rcv_seq;
		st.seq_known = b->seq_known;
		st.usable = s->usable;
		st.failed = s->failed;
		st.ups = s->ups;
		st.downs = s->downs;
		rte_spinlock_unlock(&s->lock);
		if (up)
			fn(&st, arg);
	}
}

int e3_node_bfd_restore(const struct e3_bfd_saved *st, char *err)
{
	struct e3_oam_session *s = st->id < E3_MAX_SESSIONS ? e3_oam_tbl[st->id] : NULL;
	uint64_t now = e3_now_us();

	if (s == NULL)
		return E3_ERR(err, E3_ENOENT, "bfd session %u not found", st->id);
	if ((st->local_disc & (E3_MAX_SESSIONS - 1)) != st->id || st->remote_disc == 0 || st->remote_mult == 0)
		return E3_ERR(err, E3_EINVAL, "bfd session %u: saved discriminators do not fit it", st->id);
	rte_spinlock_lock(&s->lock);
	struct e3_bfd *b = &s->bfd;

	b->state = E3_BFD_UP;
	b->remote_state = st->remote_state;
	b->diag = st->diag;
	b->remote_detect_mult = st->remote_mult;
	b->local_disc = st->local_disc;
	b->remote_disc = st->remote_disc;
	b->remote_min_rx_us = st->remote_min_rx_us;
	b->remote_min_tx_us = st->remote_min_tx_us;
	/* Past every number the last process may have sent. */
	b->xmit_seq = st->xmit_seq + 3u * b->detect_mult;
	b->rcv_seq = st->rcv_seq;
	b->seq_known = st->seq_known;
	b->hold_tx_us = 0;
	b->desired_min_tx_us = E3_BFD_SLOW_US;    /* what the neighbour last heard is longer */
	e3_bfd_configure(b, s->conf.tx_ms * 1000, s->conf.rx_ms * 1000, s->conf.multiplier, now);
	b->poll = true;
	b->detect_at_us = now + e3_bfd_detect_time_us(b);
	s->usable = st->usable;
	s->failed = st->failed;
	s->ups = st->ups;
	s->downs = st->downs;
	s->up_since_us = s->changed_us = now;
	rte_spinlock_unlock(&s->lock);
	e3_watch_set(st->id, st->usable);
	return e3_node_ok(true);
}

void e3_node_bfd_walk(e3_bfd_walk_fn fn, void *arg)
{
	uint64_t now = e3_now_us();

	for (uint32_t id = 0; id < E3_MAX_SESSIONS; id++) {
		struct e3_oam_session *s = e3_oam_tbl[id];

		if (s == NULL)
			continue;
		struct e3_bfd_info bi = { .conf = s->conf };
		const struct e3_nexthop *nh = e3_nexthop_get(s->conf.nexthop);
		const struct e3_port *p = nh ? e3_port_get(nh->port) : NULL;

		if (p != NULL)
			snprintf(bi.port, sizeof(bi.port), "%s", p->conf.name);
		rte_spinlock_lock(&s->lock);
		const struct e3_bfd *b = &s->bfd;

		bi.state = e3_bfd_state_name(b->state);
		bi.remote_state = e3_bfd_state_name(b->remote_state);
		bi.diag = e3_bfd_diag_name(b->diag);
		bi.local_disc = b->local_disc;
		bi.remote_disc = b->remote_disc;
		bi.tx_interval_us = e3_bfd_tx_interval_us(b);
		bi.detect_time_us = (uint32_t)e3_bfd_detect_time_us(b);
		bi.remote_min_rx_us = b->remote_min_rx_us;
		bi.remote_min_tx_us = b->remote_min_tx_us;
		bi.remote_multiplier = b->remote_detect_mult;
		bi.usable = s->usable;
		bi.paused = s->paused;
		bi.pauses = s->pauses;
		bi.tx_pkts = s->tx_pkts;
		bi.rx_pkts = s->rx_pkts;
		bi.ups = s->ups;
		bi.downs = s->downs;
		bi.since_ms = (now - s->changed_us) / 1000;
		rte_spinlock_unlock(&s->lock);
		fn(&bi, arg);
	}
}
