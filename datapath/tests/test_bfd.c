/* SPDX-License-Identifier: Apache-2.0
 *
 * test_bfd.c - the BFD protocol (bfd.c) on its own: every transition of
 * RFC 5880 section 6.8.6's state table, the reception checks, timer
 * negotiation (6.8.2, 6.8.3), the detection time (6.8.4), Poll/Final, and
 * two sessions talking to each other. No DPDK, no frames: time is an
 * argument.
 */
#include <string.h>

#include <rte_byteorder.h>

#include "base/bfd.h"
#include "unit.h"

#define MS 1000ull

static struct e3_bfd_pkt pkt(uint8_t state, uint32_t my, uint32_t your)
{
	struct e3_bfd_pkt p = {
		.version = 1, .state = state, .detect_mult = 3, .length = 24,
		.my_disc = my, .your_disc = your,
		.desired_min_tx_us = 10000, .required_min_rx_us = 10000,
	};
	return p;
}

/* A session in state st, having heard from a neighbour (disc 77). */
static void session_in(struct e3_bfd *s, uint8_t st)
{
	e3_bfd_init(s, 1001, 10000, 10000, 3, 0);
	if (st == E3_BFD_DOWN)
		return;
	if (st == E3_BFD_ADMIN_DOWN) {
		e3_bfd_admin(s, true, 0);
		return;
	}
	struct e3_bfd_pkt p = pkt(E3_BFD_DOWN, 77, 0);

	e3_bfd_rx(s, &p, 1);                  /* -> Init */
	if (st == E3_BFD_UP) {
		p = pkt(E3_BFD_UP, 77, 1001);
		e3_bfd_rx(s, &p, 2);          /* -> Up */
	}
	CHECK_EQ(s->state, st);
}

/* Section 6.8.6: for each local state, what each received state does. */
static void test_state_table(void)
{
	static const struct {
		uint8_t local, remote, want;
		int event;
		uint8_t diag;
	} t[] = {
		/* local Down */
		{ E3_BFD_DOWN, E3_BFD_ADMIN_DOWN, E3_BFD_DOWN, E3_BFD_EV_NONE, 0 },
		{ E3_BFD_DOWN, E3_BFD_DOWN, E3_BFD_INIT, E3_BFD_EV_NONE, 0 },
		{ E3_BFD_DOWN, E3_BFD_INIT, E3_BFD_UP, E3_BFD_EV_UP, 0 },
		{ E3_BFD_DOWN, E3_BFD_UP, E3_BFD_DOWN, E3_BFD_EV_NONE, 0 },
		/* local Init */
		{ E3_BFD_INIT, E3_BFD_ADMIN_DOWN, E3_BFD_DOWN, E3_BFD_EV_NONE,
		  E3_BFD_DIAG_NEIGHBOR_DOWN },
		{ E3_BFD_INIT, E3_BFD_DOWN, E3_BFD_INIT, E3_BFD_EV_NONE, 0 },
		{ E3_BFD_INIT, E3_BFD_INIT, E3_BFD_UP, E3_BFD_EV_UP, 0 },
		{ E3_BFD_INIT, E3_BFD_UP, E3_BFD_UP, E3_BFD_EV_UP, 0 },
		/* local Up */
		{ E3_BFD_UP, E3_BFD_ADMIN_DOWN, E3_BFD_DOWN, E3_BFD_EV_DOWN,
		  E3_BFD_DIAG_NEIGHBOR_DOWN },
		{ E3_BFD_UP, E3_BFD_DOWN, E3_BFD_DOWN, E3_BFD_EV_DOWN, E3_BFD_DIAG_NEIGHBOR_DOWN },
		{ E3_BFD_UP, E3_BFD_INIT, E3_BFD_UP, E3_BFD_EV_NONE, 0 },
		{ E3_BFD_UP, E3_BFD_UP, E3_BFD_UP, E3_BFD_EV_NONE, 0 },
		/* local AdminDown: every packet is ignored */
		{ E3_BFD_ADMIN_DOWN, E3_BFD_DOWN, E3_BFD_ADMIN_DOWN, E3_BFD_EV_NONE,
		  E3_BFD_DIAG_ADMIN_DOWN },
		{ E3_BFD_ADMIN_DOWN, E3_BFD_INIT, E3_BFD_ADMIN_DOWN, E3_BFD_EV_NONE,
		  E3_BFD_DIAG_ADMIN_DOWN },
		{ E3_BFD_ADMIN_DOWN, E3_BFD_UP, E3_BFD_ADMIN_DOWN, E3_BFD_EV_NONE,
		  E3_BFD_DIAG_ADMIN_DOWN },
	};
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct e3_bfd s;

		session_in(&s, t[i].local);
		/* A neighbour names us once it has heard from us; an Up session
		 * accepts nothing else (test_bad_packets). */
		uint32_t your = t[i].remote == E3_BFD_INIT || t[i].remote == E3_BFD_UP ||
				t[i].local == E3_BFD_UP ? 1001 : 0;
		struct e3_bfd_pkt p = pkt(t[i].remote, 77, your);
		int ev = e3_bfd_rx(&s, &p, 10);

		if (s.state != t[i].want || ev != t[i].event || s.diag != t[i].diag)
			fprintf(stderr, "  row %u: local %s remote %s\n", i,
				e3_bfd_state_name(t[i].local), e3_bfd_state_name(t[i].remote));
		CHECK_EQ(s.state, t[i].want);
		CHECK_EQ(ev, t[i].event);
		CHECK_EQ(s.diag, t[i].diag);
		if (t[i].local != E3_BFD_ADMIN_DOWN) {
			CHECK_EQ(s.remote_disc, 77);
			CHECK_EQ(s.remote_state, t[i].remote);
		}
	}
}

/* The checks of 6.8.6 that need no session, each on its own. */
static void test_decode(void)
{
	uint8_t b[E3_BFD_MAX_LEN];
	struct e3_bfd s;
	struct e3_bfd_pkt p;

	e3_bfd_init(&s, 0x12345678, 10000, 20000, 3, 0);
	s.state = E3_BFD_UP;
	s.remote_disc = 0x9abcdef0;
	s.next_tx_us = 0;
	e3_bfd_tx(&s, 0, b);
	CHECK_EQ(e3_bfd_decode(b, E3_BFD_LEN, &p), E3_BFD_OK);
	CHECK_EQ(p.version, 1);
	CHECK_EQ(p.state, E3_BFD_UP);
	CHECK_EQ(p.detect_mult, 3);
	CHECK_EQ(p.length, 24);
	CHECK_EQ(p.my_disc, 0x12345678);
	CHECK_EQ(p.your_disc, 0x9abcdef0);
	CHECK_EQ(p.required_min_rx_us, 20000);
	/* Byte layout: version 1 in the top 3 bits, state Up in the top 2. */
	CHECK_EQ(b[0], 0x20);
	CHECK_EQ(b[1] & 0xc0, 0xc0);

	uint8_t x[E3_BFD_LEN];
	static const struct {
		unsigned byte;
		uint8_t value;
		enum e3_bfd_bad want;
	} bad[] = {
		{ 0, 0x40, E3_BFD_BAD_VERSION },          /* version 2 */
		{ 3, 20, E3_BFD_BAD_LENGTH },            /* Length < 24 */
		{ 3, 30, E3_BFD_BAD_LENGTH },            /* Length > what arrived */
		{ 2, 0, E3_BFD_BAD_MULT },
		{ 1, 0xc1, E3_BFD_BAD_MULTIPOINT },
		{ 1, 0xc4, E3_BFD_BAD_AUTH },
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(x, b, sizeof(x));
		x[bad[i].byte] = bad[i].value;
		CHECK_EQ(e3_bfd_decode(x, sizeof(x), &p), bad[i].want);
	}
	CHECK_EQ(e3_bfd_decode(b, E3_BFD_LEN - 1, &p), E3_BFD_BAD_LENGTH);
	memcpy(x, b, sizeof(x));
	memset(x + 4, 0, 4);                             /* My Discriminator 0 */
	CHECK_EQ(e3_bfd_decode(x, sizeof(x), &p), E3_BFD_BAD_MY_DISC);
	memcpy(x, b, sizeof(x));
	memset(x + 8, 0, 4);                             /* Your Disc 0 while Up */
	CHECK_EQ(e3_bfd_decode(x, sizeof(x), &p), E3_BFD_BAD_YOUR_DISC);
	x[1] = E3_BFD_DOWN << 6;                         /* ... fine while Down */
	CHECK_EQ(e3_bfd_decode(x, sizeof(x), &p), E3_BFD_OK);

	/* Your Discriminator of another session: refused, nothing changes. */
	session_in(&s, E3_BFD_UP);
	p = pkt(E3_BFD_DOWN, 77, 4242);
	CHECK_EQ(e3_bfd_rx(&s, &p, 5), -E3_BFD_BAD_YOUR_DISC);
	CHECK_EQ(s.state, E3_BFD_UP);

	/* While Up, a forged AdminDown or Down with Your Discriminator 0, or
	 * naming us but from another My Discriminator, changes nothing. */
	uint32_t peer = s.remote_disc;

	p = pkt(E3_BFD_ADMIN_DOWN, 0x5eed, 0);
	CHECK_EQ(e3_bfd_rx(&s, &p, 6), -E3_BFD_BAD_YOUR_DISC);
	p = pkt(E3_BFD_DOWN, 0x5eed, 0);
	CHECK_EQ(e3_bfd_rx(&s, &p, 7), -E3_BFD_BAD_YOUR_DISC);
	p = pkt(E3_BFD_ADMIN_DOWN, peer + 1, s.local_disc);
	CHECK_EQ(e3_bfd_rx(&s, &p, 8), -E3_BFD_BAD_YOUR_DISC);
	CHECK_EQ(s.state, E3_BFD_UP);
	CHECK_EQ(s.remote_disc, peer);
	/* The peer itself still can. */
	p = pkt(E3_BFD_ADMIN_DOWN, peer, s.local_disc);
	CHECK_EQ(e3_bfd_rx(&s, &p, 9), E3_BFD_EV_DOWN);
	/* Once Down, Your Discriminator 0 brings it up again (6.8.6). */
	p = pkt(E3_BFD_DOWN, 0x5eed, 0);
	CHECK_EQ(e3_bfd_rx(&s, &p, 10), E3_BFD_EV_NONE);
	CHECK_EQ(s.state, E3_BFD_INIT);
}

/* 6.8.2-6.8.4: what each side sends at, and when it declares the other dead. */
static void test_timers(void)
{
	struct e3_bfd s;

	e3_bfd_init(&s, 1, 10000, 20000, 3, 0);
	/* Not Up: at least a second (6.8.3), whatever is configured. */
	CHECK_EQ(s.desired_min_tx_us, E3_BFD_SLOW_US);
	CHECK_EQ(e3_bfd_tx_interval_us(&s), E3_BFD_SLOW_US);
	CHECK_EQ(e3_bfd_detect_time_us(&s), 0);          /* nothing heard yet */
	CHECK_EQ(e3_bfd_check(&s, 10000000), E3_BFD_EV_NONE);
	session_in(&s, E3_BFD_UP);
	/* Up: the configured interval, negotiated with the remote's RX. */
	CHECK_EQ(s.desired_min_tx_us, 10000);
	struct e3_bfd_pkt p = pkt(E3_BFD_UP, 77, 1001);

	p.required_min_rx_us = 50000;                     /* the remote wants it slower */
	p.desired_min_tx_us = 30000;
	p.detect_mult = 4;
	e3_bfd_rx(&s, &p, 100 * MS);
	CHECK_EQ(e3_bfd_tx_interval_us(&s), 50000);
	/* Detection: remote's multiplier x max(our RX 10 ms, its TX 30 ms). */
	CHECK_EQ(e3_bfd_detect_time_us(&s), 4 * 30000);
	CHECK_EQ(e3_bfd_check(&s, 100 * MS + 119999), E3_BFD_EV_NONE);
	CHECK_EQ(s.state, E3_BFD_UP);
	CHECK_EQ(e3_bfd_check(&s, 100 * MS + 120000), E3_BFD_EV_DOWN);
	CHECK_EQ(s.state, E3_BFD_DOWN);
	CHECK_EQ(s.diag, E3_BFD_DIAG_TIME_EXPIRED);
	CHECK_EQ(s.remote_disc, 0);                      /* 6.8.1 */
	CHECK_EQ(s.desired_min_tx_us, E3_BFD_SLOW_US);    /* slow again */

	/* Init times out too; Down has nothing to lose. */
	session_in(&s, E3_BFD_INIT);
	CHECK_EQ(e3_bfd_check(&s, 1 + 3 * 10000), E3_BFD_EV_NONE);
	CHECK_EQ(s.state, E3_BFD_DOWN);
	CHECK_EQ(s.diag, E3_BFD_DIAG_TIME_EXPIRED);

	/* Jitter (6.8.7): 75-100% of the interval, never more. */
	session_in(&s, E3_BFD_UP);
	uint64_t now = 1000 * MS;
	uint8_t b[E3_BFD_MAX_LEN];

	for (int i = 0; i < 200; i++) {
		s.next_tx_us = now;
		e3_bfd_tx(&s, now, b);
		uint64_t d = s.next_tx_us - now;

		CHECK(d >= 7500 && d <= 10000);
	}
	/* A remote asking for no packets (RequiredMinRx 0) gets none. */
	p = pkt(E3_BFD_UP, 77, 1001);
	p.required_min_rx_us = 0;
	e3_bfd_rx(&s, &p, now);
	s.next_tx_us = now;
	e3_bfd_tx(&s, now, b);
	CHECK(!e3_bfd_tx_due(&s, now + 10 * 1000 * MS));
}

/* Poll and Final (6.5, 6.8.3): a change while Up polls until answered; a
 * Poll received is answered with a Final at once, never with P and F. */
static void test_poll_final(void)
{
	struct e3_bfd s;
	struct e3_bfd_pkt p;
	uint8_t b[E3_BFD_MAX_LEN];

	session_in(&s, E3_BFD_UP);
	CHECK(s.poll);                       /* going Up changed the intervals */
	p = pkt(E3_BFD_UP, 77, 1001);
	p.flags = E3_BFD_F_FINAL;
	e3_bfd_rx(&s, &p, 10);
	CHECK(!s.poll);
	/* A longer TX interval waits for the Final before it is used. */
	e3_bfd_configure(&s, 50000, 10000, 3, 20);
	CHECK(s.poll);
	CHECK_EQ(s.desired_min_tx_us, 10000);
	e3_bfd_tx(&s, 20, b);
	CHECK_EQ(b[1] & (E3_BFD_F_POLL | E3_BFD_F_FINAL), E3_BFD_F_POLL);
	e3_bfd_rx(&s, &p, 30);
	CHECK(!s.poll);
	CHECK_EQ(s.desired_min_tx_us, 50000);
	/* Answer a Poll with a Final, out of turn, schedule untouched. */
	p.flags = E3_BFD_F_POLL;
	s.next_tx_us = 1000 * MS;
	e3_bfd_rx(&s, &p, 40);
	CHECK(e3_bfd_tx_due(&s, 41));
	e3_bfd_tx(&s, 41, b);
	CHECK_EQ(b[1] & (E3_BFD_F_POLL | E3_BFD_F_FINAL), E3_BFD_F_FINAL);
	CHECK_EQ(s.next_tx_us, 1000 * MS);
	CHECK(!e3_bfd_tx_due(&s, 42));
	/* Carrier loss: Down with diag Path Down, back to slow. */
	CHECK_EQ(e3_bfd_down(&s, E3_BFD_DIAG_PATH_DOWN, 50), E3_BFD_EV_DOWN);
	CHECK_EQ(s.diag, E3_BFD_DIAG_PATH_DOWN);
	CHECK_EQ(e3_bfd_down(&s, E3_BFD_DIAG_PATH_DOWN, 60), E3_BFD_EV_NONE);
}

/* Two sessions exchanging packets: the three-way handshake comes Up on
 * both sides; when one stops sending, the other times out in 3 intervals. */
static void test_pair(void)
{
	struct e3_bfd a, z;
	uint8_t b[E3_BFD_MAX_LEN];
	struct e3_bfd_pkt p;
	uint64_t now = 0, a_silent_from = UINT64_MAX, down_at = 0;

	e3_bfd_init(&a, 11, 10000, 10000, 3, 0);
	e3_bfd_init(&z, 22, 10000, 10000, 3, 0);
	for (; now < 10 * 1000 * MS; now += 100) {
		if (e3_bfd_tx_due(&a, now) && now < a_silent_from) {
			e3_bfd_tx(&a, now, b);
			CHECK_EQ(e3_bfd_decode(b, sizeof(b), &p), E3_BFD_OK);
			CHECK(e3_bfd_rx(&z, &p, now) >= 0);
		}
		if (e3_bfd_tx_due(&z, now)) {
			e3_bfd_tx(&z, now, b);
			CHECK_EQ(e3_bfd_decode(b, sizeof(b), &p), E3_BFD_OK);
			CHECK(e3_bfd_rx(&a, &p, now) >= 0);
		}
		e3_bfd_check(&a, now);
		if (e3_bfd_check(&z, now) == E3_BFD_EV_DOWN) {
			down_at = now;
			break;
		}
		if (a.state == E3_BFD_UP && z.state == E3_BFD_UP && !a.poll && !z.poll &&
		    a_silent_from == UINT64_MAX)
			a_silent_from = now + 100 * MS;   /* a hangs 100 ms after Up */
	}
	CHECK(a_silent_from != UINT64_MAX);
	CHECK_EQ(a.remote_disc, 22);
	CHECK_EQ(z.remote_disc, 0);           /* cleared by the timeout */
	CHECK(down_at > 0);
	/* Detected within multiplier x interval of a's last packet. */
	CHECK(down_at - a_silent_from <= 3 * 10000 + 100);
	CHECK_EQ(z.diag, E3_BFD_DIAG_TIME_EXPIRED);
}

/* Send a's due packet to z (and z's to a). */
static void exchange(struct e3_bfd *a, struct e3_bfd *z, uint64_t now, bool a_sends)
{
	uint8_t b[E3_BFD_MAX_LEN];
	struct e3_bfd_pkt p;

	if (a_sends && e3_bfd_tx_due(a, now)) {
		e3_bfd_tx(a, now, b);
		CHECK_EQ(e3_bfd_decode(b, sizeof(b), &p), E3_BFD_OK);
		CHECK(e3_bfd_rx(z, &p, now) >= 0);
	}
	if (e3_bfd_tx_due(z, now)) {
		e3_bfd_tx(z, now, b);
		CHECK_EQ(e3_bfd_decode(b, sizeof(b), &p), E3_BFD_OK);
		if (a_sends)
			CHECK(e3_bfd_rx(a, &p, now) >= 0);
	}
}

/* A warm restart's hold: after a's hold of 2 s, z keeps the session Up
 * through 2 s of silence (10 ms x 3 would have ended it in 30 ms); a copy
 * of a that resumes it brings z's detection time back to 30 ms. */
static void test_hold(void)
{
	struct e3_bfd a, z, saved;
	uint64_t now = 0;

	e3_bfd_init(&a, 11, 10000, 10000, 3, 0);
	e3_bfd_init(&z, 22, 10000, 10000, 3, 0);
	for (; now < 2000 * MS && !(a.state == E3_BFD_UP && z.state == E3_BFD_UP && !a.poll && !z.poll);
	     now += 100)
		exchange(&a, &z, now, true);
	CHECK_EQ(z.state, E3_BFD_UP);
	e3_bfd_hold(&a, 2000 * MS, now);
	CHECK(a.poll && e3_bfd_tx_due(&a, now));
	exchange(&a, &z, now, true);          /* the Poll with 666 ms */
	CHECK(e3_bfd_detect_time_us(&z) >= 2000 * MS - 3);
	now += 100;
	exchange(&a, &z, now, true);          /* z's Final */
	CHECK(!a.poll);
	CHECK(a.desired_min_tx_us >= 666 * MS);   /* the Final does not undo the hold */
	saved = a;
	uint64_t silent_from = now;

	for (now += 100; now < silent_from + 1990 * MS; now += 100) {
		exchange(&a, &z, now, false);
		CHECK_EQ(e3_bfd_check(&z, now), E3_BFD_EV_NONE);
	}
	CHECK_EQ(z.state, E3_BFD_UP);
	/* The restarted process: the session as it was, the hold taken off
	 * (the node's restore), and a Poll advertising the configured interval. */
	saved.hold_tx_us = 0;
	e3_bfd_configure(&saved, 10000, 10000, 3, now);
	CHECK(saved.poll);
	CHECK_EQ(saved.desired_min_tx_us, 10000);
	saved.next_tx_us = now;
	exchange(&saved, &z, now, true);
	CHECK_EQ(z.state, E3_BFD_UP);
	CHECK_EQ(e3_bfd_detect_time_us(&z), 3 * 10000);
}

/* 6.7.4 Keyed SHA1: two ends with one key come up; a wrong key or id, a
 * changed byte, a replayed sequence number, a packet without the A bit
 * (or with it, to a session without a key) are refused and change nothing. */
static void test_auth(void)
{
	static const uint8_t key[] = { 0xe3, 0xfa, 0xb1, 0x1c, 0x00, 0x42 };
	struct e3_bfd a, z, plain;
	uint8_t b[E3_BFD_MAX_LEN], old[E3_BFD_MAX_LEN];
	struct e3_bfd_pkt p;

	e3_bfd_init(&a, 11, 10000, 10000, 3, 0);
	e3_bfd_init(&z, 22, 10000, 10000, 3, 0);
	e3_bfd_init(&plain, 33, 10000, 10000, 3, 0);
	e3_bfd_set_auth(&a, 7, key, sizeof(key));
	e3_bfd_set_auth(&z, 7, key, sizeof(key));
	CHECK_EQ(e3_bfd_tx(&a, 0, b), E3_BFD_MAX_LEN);
	CHECK(b[1] & E3_BFD_F_AUTH);
	CHECK_EQ(b[3], E3_BFD_MAX_LEN);
	CHECK_EQ(b[24], E3_BFD_AUTH_SHA1);
	CHECK_EQ(b[25], E3_BFD_SHA1_LEN);
	CHECK_EQ(b[26], 7);
	CHECK_EQ(e3_bfd_decode(b, sizeof(b), &p), E3_BFD_OK);
	CHECK_EQ(e3_bfd_rx(&z, &p, 1), E3_BFD_EV_NONE);          /* -> Init */
	CHECK_EQ(z.state, E3_BFD_INIT);
	/* To a session without a key: refused. */
	CHECK_EQ(e3_bfd_rx(&plain, &p, 1), -E3_BFD_BAD_AUTH);
	CHECK_EQ(plain.remote_disc, 0);
	/* z answers; a comes up. */
	e3_bfd_tx(&z, 2, b);
	CHECK_EQ(e3_bfd_decode(b, sizeof(b), &p), E3_BFD_OK);
	CHECK_EQ(e3_bfd_rx(&a, &p, 2), E3_BFD_EV_UP);
	/* A changed byte, another key id, another key: refused. */
	e3_bfd_tx(&a, 3, b);
	b[2] ^= 1;
	CHECK_EQ(e3_bfd_decode(b, sizeof(b), &p), E3_BFD_OK);
	CHECK_EQ(e3_bfd_rx(&z, &p, 3), -E3_BFD_BAD_AUTH);
	struct e3_bfd other = a;
	uint8_t wrong[sizeof(key)];

	memcpy(wrong, key, sizeof(key));
	wrong[0] ^= 0x80;
	e3_bfd_set_auth(&other, 7, wrong, sizeof(wrong));
	e3_bfd_tx(&other, 3, b);
	CHECK_EQ(e3_bfd_decode(b, sizeof(b), &p), E3_BFD_OK);
	CHECK_EQ(e3_bfd_rx(&z, &p, 3), -E3_BFD_BAD_AUTH);
	e3_bfd_set_auth(&other, 8, key, sizeof(key));
	e3_bfd_tx(&other, 3, b);
	CHECK_EQ(e3_bfd_decode(b, sizeof(b), &p), E3_BFD_OK);
	CHECK_EQ(e3_bfd_rx(&z, &p, 3), -E3_BFD_BAD_AUTH);
	CHECK_EQ(z.state, E3_BFD_INIT);
	/* a's next packets are taken; then its first one, replayed, is not
	 * (its sequence number is behind the window). */
	for (int k = 0; k < 20; k++) {
		e3_bfd_tx(&a, 4 + k, b);
		if (k == 0)
			memcpy(old, b, sizeof(b));
		CHECK_EQ(e3_bfd_decode(b, sizeof(b), &p), E3_BFD_OK);
		CHECK(e3_bfd_rx(&z, &p, 4 + k) >= 0);
	}
	CHECK_EQ(z.state, E3_BFD_UP);
	CHECK_EQ(e3_bfd_decode(old, sizeof(old), &p), E3_BFD_OK);
	CHECK_EQ(e3_bfd_rx(&z, &p, 30), -E3_BFD_BAD_AUTH);
	/* A packet without authentication, to z: refused, even naming both. */
	e3_bfd_tx(&plain, 31, b);
	b[1] = (uint8_t)(E3_BFD_ADMIN_DOWN << 6);
	memcpy(b + 4, &(uint32_t){ rte_cpu_to_be_32(a.local_disc) }, 4);
	memcpy(b + 8, &(uint32_t){ rte_cpu_to_be_32(z.local_disc) }, 4);
	CHECK_EQ(e3_bfd_decode(b, E3_BFD_LEN, &p), E3_BFD_OK);
	CHECK_EQ(e3_bfd_rx(&z, &p, 31), -E3_BFD_BAD_AUTH);
	CHECK_EQ(z.state, E3_BFD_UP);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "bfd_state_table", test_state_table },
		{ "bfd_decode", test_decode },
		{ "bfd_timers", test_timers },
		{ "bfd_poll_final", test_poll_final },
		{ "bfd_pair", test_pair },
		{ "bfd_hold", test_hold },
		{ "bfd_auth", test_auth },
	};

	return unit_run(tests, sizeof(tests) / sizeof(tests[0]));
}
