/* SPDX-License-Identifier: Apache-2.0
 *
 * frame.h - frame templates of e3-pktgen.
 *
 * A stream describes the frames one port sends: a customer Ethernet frame
 * (untagged or one VLAN tag), optionally wrapped as an RFC 4448 fabric frame
 * (outer Ethernet + one MPLS label + optional control word). One field varies
 * over n values (destination or source MAC, label, VLAN) so a scenario can
 * address n table entries. Every frame ends with a stamp (magic, sequence
 * number, TX timestamp) in its last bytes: encapsulation and decapsulation
 * only change the front of a frame, so the receiver finds the stamp at the
 * tail whatever the switch did to the headers.
 *
 * Data frames have an even length, every other frame (learning, warm-up)
 * an odd one, a byte longer: every header a switch of the fabric pushes or
 * pops (Ethernet, VLAN tag, label, control word) has an even length, so a
 * receiver that only counts can tell them apart from the descriptor's
 * length without reading the frame (e3-pktgen's verify=0).
 */
#ifndef E3_PKTGEN_FRAME_H
#define E3_PKTGEN_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#define PG_MAGIC_DATA  0xe3b3c4d5u   /* measured frame */
#define PG_MAGIC_LEARN 0xe3b3c4d6u   /* learning-phase frame: not counted */

#define PG_MIN_FRAME   64u           /* sizes include the 4-byte FCS; even */
#define PG_MAX_FRAME   1518u
#define PG_FCS         4u

enum pg_kind { PG_ETH = 0, PG_VLAN, PG_MPLS };
enum pg_vary { PG_VARY_NONE = 0, PG_VARY_DST, PG_VARY_SRC, PG_VARY_LABEL, PG_VARY_VLAN };

struct pg_stamp {
	uint32_t magic;
	uint32_t stream;
	uint64_t seq;
	uint64_t tsc;
} __attribute__((packed));

struct pg_stream {
	uint16_t port;           /* DPDK port id it is sent on */
	enum pg_kind kind;
	uint8_t dst[6], src[6];  /* customer (inner) frame */
	uint16_t vlan;           /* PG_VLAN: tag of the customer frame */
	bool inner_vlan;         /* PG_MPLS: the inner frame carries vlan too */
	uint8_t odst[6], osrc[6];/* PG_MPLS: outer header */
	uint32_t label;
	uint8_t ttl;
	bool cw;                 /* PG_MPLS: RFC 4385 control word */
	enum pg_vary vary;
	uint32_t n;              /* number of values the varying field takes */
	uint32_t size;           /* customer frame size incl. FCS (64..1518) */
	/* derived */
	uint32_t stride;         /* walk order over the n values: co-prime step */
	uint32_t cursor;
};

/* Parse "key=value,key=value" into s (defaults first). Returns 0 or -1 and
 * writes a message to err. */
int pg_stream_parse(const char *spec, struct pg_stream *s, char *err, size_t errlen);

/* Write the next frame of stream s into buf (room >= PG_MAX_FRAME + 23),
 * with customer frame size `size` (incl. FCS; one byte more unless the
 * stamp is PG_MAGIC_DATA's) and the stamp given; returns the byte length
 * (without FCS). Advances the stream's cursor. */
uint32_t pg_frame_write(struct pg_stream *s, uint8_t *buf, uint32_t size,
			const struct pg_stamp *st);

/* Where the stamp of a received frame is: its last bytes. NULL if the frame
 * is too short or the magic does not match either kind. */
const struct pg_stamp *pg_stamp_find(const uint8_t *frame, uint32_t len);

#endif
