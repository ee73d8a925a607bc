/* SPDX-License-Identifier: Apache-2.0
 *
 * bfd.c - RFC 5880 asynchronous mode (see bfd.h). Section numbers refer to
 * RFC 5880.
 */
#include <sha1.h>
#include <string.h>

#include <rte_byteorder.h>

#include "base/bfd.h"

static uint32_t be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return rte_be_to_cpu_32(v);
}

static void put32(uint8_t *p, uint32_t v)
{
	v = rte_cpu_to_be_32(v);
	memcpy(p, &v, 4);
}

enum e3_bfd_bad e3_bfd_decode(const uint8_t *p, unsigned len, struct e3_bfd_pkt *o)
{
	if (len < E3_BFD_LEN)
		return E3_BFD_BAD_LENGTH;
	o->version = p[0] >> 5;
	o->diag = p[0] & 0x1f;
	o->state = p[1] >> 6;
	o->flags = p[1] & 0x3f;
	o->detect_mult = p[2];
	o->length = p[3];
	o->my_disc = be32(p + 4);
	o->your_disc = be32(p + 8);
	o->desired_min_tx_us = be32(p + 12);
	o->required_min_rx_us = be32(p + 16);
	o->required_min_echo_rx_us = be32(p + 20);
	if (o->version != E3_BFD_VERSION)
		return E3_BFD_BAD_VERSION;
	if (o->length < E3_BFD_LEN || o->length > len)
		return E3_BFD_BAD_LENGTH;
	if (o->detect_mult == 0)
		return E3_BFD_BAD_MULT;
	if (o->flags & E3_BFD_F_MULTIPOINT)
		return E3_BFD_BAD_MULTIPOINT;
	if (o->my_disc == 0)
		return E3_BFD_BAD_MY_DISC;
	if (o->your_disc == 0 && o->state != E3_BFD_DOWN && o->state != E3_BFD_ADMIN_DOWN)
		return E3_BFD_BAD_YOUR_DISC;
	o->auth_type = 0;
	o->raw = p;
	if (o->flags & E3_BFD_F_AUTH) {
		/* Only Keyed SHA1 is known here: its section fills the packet. */
		if (o->length != E3_BFD_MAX_LEN || p[E3_BFD_LEN] != E3_BFD_AUTH_SHA1 ||
		    p[E3_BFD_LEN + 1] != E3_BFD_SHA1_LEN)
			return E3_BFD_BAD_AUTH;
		o->auth_type = E3_BFD_AUTH_SHA1;
		o->key_id = p[E3_BFD_LEN + 2];
		o->auth_seq = be32(p + E3_BFD_LEN + 4);
	}
	return E3_BFD_OK;
}

void e3_bfd_set_auth(struct e3_bfd *s, uint8_t key_id, const uint8_t *key, uint8_t key_len)
{
	if (key_len > E3_BFD_KEY_MAX)
		key_len = E3_BFD_KEY_MAX;
	s->key_id = key_id;
	s->key_len = key_len;
	memset(s->key, 0, sizeof(s->key));
	memcpy(s->key, key, key_len);
	s->seq_known = false;
}

/* 6.7.4: SHA1 of the packet with the key, zero-padded to 20 bytes, in the
 * digest's place. */
static void sha1_digest(const struct e3_bfd *s, const uint8_t *pkt, uint8_t out[20])
{
	uint8_t tmp[E3_BFD_MAX_LEN];
	SHA1_CTX ctx;

	memcpy(tmp, pkt, E3_BFD_MAX_LEN);
	memcpy(tmp + E3_BFD_LEN + 8, s->key, E3_BFD_KEY_MAX);
	SHA1Init(&ctx);
	SHA1Update(&ctx, tmp, sizeof(tmp));
	SHA1Final(out, &ctx);
}

/* 6.7.4's reception checks; the sequence window is Keyed SHA1's (not
 * meticulous): RcvAuthSeq to RcvAuthSeq + 3 * Detect Mult. */
static bool auth_ok(struct e3_bfd *s, const struct e3_bfd_pkt *p)
{
	if (s->key_len == 0)
		return p->auth_type == 0;
	if (p->auth_type != E3_BFD_AUTH_SHA1 || p->key_id != s->key_id)
		return false;
	uint8_t want[20], diff = 0;
	const uint8_t *got = p->raw + E3_BFD_LEN + 8;

	sha1_digest(s, p->raw, want);
	for (unsigned k = 0; k < sizeof(want); k++)
		diff |= want[k] ^ got[k];         /* constant time */
	if (diff != 0)
		return false;
	if (s->seq_known && p->auth_seq - s->rcv_seq > 3u * p->detect_mult)
		return false;
	s->rcv_seq = p->auth_seq;
	s->seq_known = true;
	return true;
}

static uint32_t max32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

/* 6.8.3: at least one second while the session is not Up. */
static uint32_t advertised_tx(const struct e3_bfd *s)
{
	uint32_t tx = s->state == E3_BFD_UP ? s->cfg_tx_us : max32(s->cfg_tx_us, E3_BFD_SLOW_US);

	return max32(tx, s->hold_tx_us);
}

void e3_bfd_init(struct e3_bfd *s, uint32_t local_disc, uint32_t tx_us, uint32_t rx_us,
		 uint8_t detect_mult, uint64_t now_us)
{
	memset(s, 0, sizeof(*s));
	s->state = E3_BFD_DOWN;
	s->remote_state = E3_BFD_DOWN;
	s->local_disc = local_disc;
	s->cfg_tx_us = tx_us;
	s->cfg_rx_us = rx_us;
	s->required_min_rx_us = rx_us;
	s->detect_mult = detect_mult;
	s->desired_min_tx_us = advertised_tx(s);
	s->remote_min_rx_us = 1;          /* 6.8.1: initialised to 1 */
	s->next_tx_us = now_us;
	s->rand = local_disc * 2654435761u + 1;
	s->xmit_seq = s->rand * 2246822519u;   /* 6.8.1: a random start */
}

uint32_t e3_bfd_tx_interval_us(const struct e3_bfd *s)
{
	return max32(s->desired_min_tx_us, s->remote_min_rx_us);
}

uint64_t e3_bfd_detect_time_us(const struct e3_bfd *s)
{
	return (uint64_t)s->remote_detect_mult * max32(s->required_min_rx_us, s->remote_min_tx_us);
}

/* Advertise the parameters of the current state; a change while Up starts
 * a Poll Sequence (6.8.3). */
static void readvertise(struct e3_bfd *s, uint64_t now_us)
{
	uint32_t tx = advertised_tx(s);

	if (tx == s->desired_min_tx_us && s->required_min_rx_us == s->cfg_rx_us)
		return;
	/* A longer interval waits for the Poll Sequence to end (6.8.3); a
	 * shorter one applies now. */
	if (tx < s->desired_min_tx_us || s->state != E3_BFD_UP)
		s->desired_min_tx_us = tx;
	s->required_min_rx_us = s->cfg_rx_us;
	if (s->state == E3_BFD_UP)
		s->poll = true;
	s->next_tx_us = now_us;
}

static enum e3_bfd_event go(struct e3_bfd *s, uint8_t state, uint8_t diag, uint64_t now_us)
{
	uint8_t was = s->state;

	s->state = state;
	if (diag != E3_BFD_DIAG_NONE || state == E3_BFD_UP)
		s->diag = diag;
	if (state != E3_BFD_UP)
		s->poll = false;
	readvertise(s, now_us);
	s->next_tx_us = now_us;           /* tell the neighbour at once */
	if (state == E3_BFD_UP)
		return E3_BFD_EV_UP;
	return was == E3_BFD_UP ? E3_BFD_EV_DOWN : E3_BFD_EV_NONE;
}

int e3_bfd_rx(struct e3_bfd *s, const struct e3_bfd_pkt *p, uint64_t now_us)
{
	if (p->your_disc != 0 && p->your_disc != s->local_disc)
		return -E3_BFD_BAD_YOUR_DISC;
	/* 6.8.6 selects a session by other means (Your Discriminator 0) only
	 * to bring it up. Once Up, a packet must name both ends' discriminators
	 * as learned, or anyone on the link could take the session down. */
	if (s->state == E3_BFD_UP && (p->your_disc == 0 || p->my_disc != s->remote_disc))
		return -E3_BFD_BAD_YOUR_DISC;
	if (!auth_ok(s, p))
		return -E3_BFD_BAD_AUTH;
	s->remote_disc = p->my_disc;
	s->remote_state = p->state;
	s->remote_detect_mult = p->detect_mult;
	s->remote_min_tx_us = p->desired_min_tx_us;
	if (p->required_min_rx_us != s->remote_min_rx_us) {
		s->remote_min_rx_us = p->required_min_rx_us;
		/* A shorter interval asked for applies from now. */
		uint64_t next = now_us + e3_bfd_tx_interval_us(s);

		if (next < s->next_tx_us)
			s->next_tx_us = next;
	}
	if ((p->flags & E3_BFD_F_FINAL) && s->poll) {
		s->poll = false;
		s->desired_min_tx_us = advertised_tx(s);   /* a deferred increase */
	}
	if (s->state == E3_BFD_ADMIN_DOWN)
		return E3_BFD_EV_NONE;
	s->detect_at_us = now_us + e3_bfd_detect_time_us(s);
	if (p->flags & E3_BFD_F_POLL)
		s->send_final = true;
	enum e3_bfd_event ev = E3_BFD_EV_NONE;

	if (p->state == E3_BFD_ADMIN_DOWN) {
		if (s->state != E3_BFD_DOWN)
			ev = go(s, E3_BFD_DOWN, E3_BFD_DIAG_NEIGHBOR_DOWN, now_us);
	} else if (s->state == E3_BFD_DOWN) {
		if (p->state == E3_BFD_DOWN)
			ev = go(s, E3_BFD_INIT, E3_BFD_DIAG_NONE, now_us);
		else if (p->state == E3_BFD_INIT)
			ev = go(s, E3_BFD_UP, E3_BFD_DIAG_NONE, now_us);
	} else if (s->state == E3_BFD_INIT) {
		if (p->state == E3_BFD_INIT || p->state == E3_BFD_UP)
			ev = go(s, E3_BFD_UP, E3_BFD_DIAG_NONE, now_us);
	} else if (p->state == E3_BFD_DOWN) {   /* Up */
		ev = go(s, E3_BFD_DOWN, E3_BFD_DIAG_NEIGHBOR_DOWN, now_us);
	}
	return ev;
}

enum e3_bfd_event e3_bfd_check(struct e3_bfd *s, uint64_t now_us)
{
	if (s->detect_at_us == 0 || now_us < s->detect_at_us)
		return E3_BFD_EV_NONE;
	/* 6.8.1: RemoteDiscr is zeroed when the detection time expires,
	 * and AuthSeqKnown after (at least) as long. */
	s->detect_at_us = 0;
	s->remote_disc = 0;
	s->seq_known = false;
	s->remote_state = E3_BFD_DOWN;
	if (s->state != E3_BFD_INIT && s->state != E3_BFD_UP)
		return E3_BFD_EV_NONE;
	return go(s, E3_BFD_DOWN, E3_BFD_DIAG_TIME_EXPIRED, now_us);
}

enum e3_bfd_event e3_bfd_down(struct e3_bfd *s, enum e3_bfd_diag diag, uint64_t now_us)
{
	if (s->state != E3_BFD_INIT && s->state != E3_BFD_UP)
		return E3_BFD_EV_NONE;
	s->detect_at_us = 0;
	return go(s, E3_BFD_DOWN, (uint8_t)diag, now_us);
}

void e3_bfd_admin(struct e3_bfd *s, bool down, uint64_t now_us)
{
	if (down && s->state != E3_BFD_ADMIN_DOWN) {
		go(s, E3_BFD_ADMIN_DOWN, E3_BFD_DIAG_ADMIN_DOWN, now_us);
		s->detect_at_us = 0;
	} else if (!down && s->state == E3_BFD_ADMIN_DOWN) {
		go(s, E3_BFD_DOWN, E3_BFD_DIAG_NONE, now_us);
	}
}

void e3_bfd_hold(struct e3_bfd *s, uint64_t detect_us, uint64_t now_us)
{
	uint64_t tx = detect_us / (s->detect_mult ? s->detect_mult : 1);

	if (s->state != E3_BFD_UP)
		return;
	s->hold_tx_us = tx > UINT32_MAX ? UINT32_MAX : (uint32_t)tx;
	/* Advertised at once, not after the Poll: we will not be here to
	 * send the packet after the Final. */
	s->desired_min_tx_us = advertised_tx(s);
	s->poll = true;
	s->next_tx_us = now_us;
}

void e3_bfd_configure(struct e3_bfd *s, uint32_t tx_us, uint32_t rx_us, uint8_t detect_mult,
		       uint64_t now_us)
{
	s->cfg_tx_us = tx_us;
	s->cfg_rx_us = rx_us;
	if (detect_mult != s->detect_mult) {
		s->detect_mult = detect_mult;
		if (s->state == E3_BFD_UP)
			s->poll = true;
	}
	readvertise(s, now_us);
}

unsigned e3_bfd_tx(struct e3_bfd *s, uint64_t now_us, uint8_t out[E3_BFD_MAX_LEN])
{
	uint8_t flags = s->key_len ? E3_BFD_F_AUTH : 0;
	unsigned len = s->key_len ? E3_BFD_MAX_LEN : E3_BFD_LEN;

	/* Never P and F together (6.5): a Final owed goes first. */
	if (s->send_final)
		flags |= E3_BFD_F_FINAL;
	else if (s->poll)
		flags |= E3_BFD_F_POLL;
	out[0] = (uint8_t)(E3_BFD_VERSION << 5 | (s->diag & 0x1f));
	out[1] = (uint8_t)(s->state << 6 | flags);
	out[2] = s->detect_mult;
	out[3] = (uint8_t)len;
	put32(out + 4, s->local_disc);
	put32(out + 8, s->remote_disc);
	put32(out + 12, s->desired_min_tx_us);
	put32(out + 16, s->required_min_rx_us);
	put32(out + 20, 0);               /* no echo */
	if (s->key_len) {
		uint8_t *a = out + E3_BFD_LEN;

		a[0] = E3_BFD_AUTH_SHA1;
		a[1] = E3_BFD_SHA1_LEN;
		a[2] = s->key_id;
		a[3] = 0;
		put32(a + 4, ++s->xmit_seq);
		sha1_digest(s, out, a + 8);
	}
	bool periodic = now_us >= s->next_tx_us;

	s->send_final = false;
	if (!periodic)
		return len;               /* a Final out of turn: the schedule stays */
	/* 6.8.7: a remote asking for no packets (RequiredMinRx 0) gets none;
	 * else the interval less 0-25% jitter (10-25% with multiplier 1). */
	if (s->remote_min_rx_us == 0) {
		s->next_tx_us = UINT64_MAX;
		return len;
	}
	uint64_t iv = e3_bfd_tx_interval_us(s);

	s->rand = s->rand * 1103515245u + 12345u;
	unsigned pct = 75 + (s->rand >> 16) % (s->detect_mult == 1 ? 16 : 26);

	s->next_tx_us = now_us + iv * pct / 100;
	return len;
}

const char *e3_bfd_state_name(uint8_t state)
{
	static const char *const n[] = { "admin_down", "down", "init", "up" };

	return state < 4 ? n[state] : "unknown";
}

const char *e3_bfd_diag_name(uint8_t diag)
{
	switch (diag) {
	case E3_BFD_DIAG_NONE: return "none";
	case E3_BFD_DIAG_TIME_EXPIRED: return "control_detection_time_expired";
	case E3_BFD_DIAG_NEIGHBOR_DOWN: return "neighbor_signaled_down";
	case E3_BFD_DIAG_PATH_DOWN: return "path_down";
	case E3_BFD_DIAG_CONCAT_DOWN: return "concatenated_path_down";
	case E3_BFD_DIAG_ADMIN_DOWN: return "administratively_down";
	default: return "other";
	}
}
