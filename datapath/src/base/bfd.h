/* SPDX-License-Identifier: Apache-2.0
 *
 * bfd.h - BFD (RFC 5880) asynchronous mode: the control packet, its
 * reception checks (section 6.8.6), the session state machine and the
 * timers. Pure protocol: no frames, no clocks, no DPDK state. The caller
 * passes the time (microseconds, monotonic) and sends what it is told to,
 * so every transition is testable on its own (test_bfd.c).
 *
 * Authentication: Keyed SHA1 (6.7.4), optional per session; a session
 * without it discards a packet with the A bit, and one with it a packet
 * without (6.8.6). Not supported: demand mode, echo, the other auth types.
 */
#ifndef E3_BFD_H
#define E3_BFD_H

#include <stdbool.h>
#include <stdint.h>

#define E3_BFD_LEN 24                  /* mandatory section, no auth */
#define E3_BFD_AUTH_SHA1 4             /* Keyed SHA1 */
#define E3_BFD_SHA1_LEN 28             /* its section: type, len, key id, reserved, seq, digest */
#define E3_BFD_MAX_LEN (E3_BFD_LEN + E3_BFD_SHA1_LEN)
#define E3_BFD_KEY_MAX 20
#define E3_BFD_VERSION 1
#define E3_BFD_SLOW_US 1000000u        /* 6.8.3: at least 1 s while not Up */

enum e3_bfd_state { E3_BFD_ADMIN_DOWN = 0, E3_BFD_DOWN = 1, E3_BFD_INIT = 2, E3_BFD_UP = 3 };

enum e3_bfd_diag {
	E3_BFD_DIAG_NONE = 0,
	E3_BFD_DIAG_TIME_EXPIRED = 1,  /* control detection time expired */
	E3_BFD_DIAG_NEIGHBOR_DOWN = 3, /* neighbour signaled session down */
	E3_BFD_DIAG_PATH_DOWN = 5,     /* the port under the session lost carrier */
	E3_BFD_DIAG_CONCAT_DOWN = 6,   /* concatenated path down: a path's first link is down */
	E3_BFD_DIAG_ADMIN_DOWN = 7,
};

/* Flag bits of the packet's second byte (after state). */
#define E3_BFD_F_POLL 0x20
#define E3_BFD_F_FINAL 0x10
#define E3_BFD_F_CPI 0x08
#define E3_BFD_F_AUTH 0x04
#define E3_BFD_F_DEMAND 0x02
#define E3_BFD_F_MULTIPOINT 0x01

struct e3_bfd_pkt {
	uint8_t version, diag, state, flags, detect_mult, length;
	uint32_t my_disc, your_disc;
	uint32_t desired_min_tx_us, required_min_rx_us, required_min_echo_rx_us;
	/* With the A bit: a Keyed SHA1 section, and the packet it is in. */
	uint8_t auth_type, key_id;
	uint32_t auth_seq;
	const uint8_t *raw;             /* the packet (length bytes), while it lasts */
};

/* Why a packet was discarded (6.8.6's checks, in its order). */
enum e3_bfd_bad {
	E3_BFD_OK = 0,
	E3_BFD_BAD_LENGTH,        /* shorter than 24, or than its Length field */
	E3_BFD_BAD_VERSION,
	E3_BFD_BAD_MULT,          /* Detect Mult zero */
	E3_BFD_BAD_MULTIPOINT,    /* M bit set */
	E3_BFD_BAD_MY_DISC,       /* My Discriminator zero */
	E3_BFD_BAD_YOUR_DISC,     /* zero while the state is Init or Up, or not ours */
	E3_BFD_BAD_AUTH,          /* A bit without a Keyed SHA1 section; or, for a session,
				   * authentication that does not match its own (6.7.4) */
};

/* Decode and check what needs no session; returns E3_BFD_OK or the reason. */
enum e3_bfd_bad e3_bfd_decode(const uint8_t *p, unsigned len, struct e3_bfd_pkt *out);

/* The session variables of section 6.8.1, plus the timers. */
struct e3_bfd {
	uint8_t state, remote_state, diag, detect_mult, remote_detect_mult;
	bool poll;                      /* a Poll Sequence is in progress */
	bool send_final;                /* answer a Poll with the next packet */
	uint32_t local_disc, remote_disc;
	uint32_t cfg_tx_us, cfg_rx_us;  /* what is configured (used once Up) */
	uint32_t desired_min_tx_us;     /* what we advertise now */
	uint32_t required_min_rx_us;
	uint32_t remote_min_rx_us, remote_min_tx_us;
	uint64_t next_tx_us, detect_at_us; /* detect_at_us 0: not armed */
	uint32_t rand;                  /* jitter state */
	/* Keyed SHA1 (6.7.4); key_len 0: no authentication. */
	uint8_t key_id, key_len;
	uint8_t key[E3_BFD_KEY_MAX];
	uint32_t xmit_seq, rcv_seq;
	bool seq_known;
	/* A warm restart's hold (e3_bfd_hold): the Desired Min TX advertised
	 * while we are away; 0: none. */
	uint32_t hold_tx_us;
};

/* What a call did to the session. */
enum e3_bfd_event { E3_BFD_EV_NONE = 0, E3_BFD_EV_UP, E3_BFD_EV_DOWN };

void e3_bfd_init(struct e3_bfd *s, uint32_t local_disc, uint32_t tx_us, uint32_t rx_us,
		 uint8_t detect_mult, uint64_t now_us);
/* Authenticate with Keyed SHA1 (key_len 1..20), or not (key_len 0). */
void e3_bfd_set_auth(struct e3_bfd *s, uint8_t key_id, const uint8_t *key, uint8_t key_len);
/* Change the configured intervals or multiplier (a Poll Sequence if Up). */
void e3_bfd_configure(struct e3_bfd *s, uint32_t tx_us, uint32_t rx_us, uint8_t detect_mult,
		       uint64_t now_us);
/* A received packet that e3_bfd_decode accepted. Returns the event, or
 * -E3_BFD_BAD_YOUR_DISC when it is not this session's: its Your
 * Discriminator is another's, or, while Up, it is zero or its My
 * Discriminator is not the one learned; -E3_BFD_BAD_AUTH when its
 * authentication is not the session's, its digest wrong or its sequence
 * number out of the window. */
int e3_bfd_rx(struct e3_bfd *s, const struct e3_bfd_pkt *p, uint64_t now_us);
/* Detection time expired? Then Down (diag 1). */
enum e3_bfd_event e3_bfd_check(struct e3_bfd *s, uint64_t now_us);
/* Force the session Down with diag (carrier lost) or AdminDown. */
enum e3_bfd_event e3_bfd_down(struct e3_bfd *s, enum e3_bfd_diag diag, uint64_t now_us);
void e3_bfd_admin(struct e3_bfd *s, bool down, uint64_t now_us);
/* Before a warm restart: make the neighbour's detection time at least
 * detect_us, by advertising a Desired Min TX of detect_us / our multiplier
 * in a Poll Sequence sent at once (6.8.3: the neighbour's detection time
 * follows the interval we advertise). The session stays Up; the process
 * that resumes it advertises its configured interval again. */
void e3_bfd_hold(struct e3_bfd *s, uint64_t detect_us, uint64_t now_us);

/* Is a packet due? (Periodic, or a Final owed.) */
static inline bool e3_bfd_tx_due(const struct e3_bfd *s, uint64_t now_us)
{
	return s->send_final || now_us >= s->next_tx_us;
}
/* The next packet, and schedule the one after it (with jitter); returns
 * its length (E3_BFD_LEN, or E3_BFD_MAX_LEN authenticated). */
unsigned e3_bfd_tx(struct e3_bfd *s, uint64_t now_us, uint8_t out[E3_BFD_MAX_LEN]);

/* The negotiated transmit interval (6.8.2) and detection time (6.8.4). */
uint32_t e3_bfd_tx_interval_us(const struct e3_bfd *s);
uint64_t e3_bfd_detect_time_us(const struct e3_bfd *s);

const char *e3_bfd_state_name(uint8_t state);
const char *e3_bfd_diag_name(uint8_t diag);

#endif
