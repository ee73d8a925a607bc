/* SPDX-License-Identifier: Apache-2.0
 *
 * flow_hash.h - the hash that keeps a customer flow on one ECMP member.
 *
 * A pure function of the frame's bytes, from its Ethernet header: both
 * MACs and the ethertype (after at most two VLAN tags), and for IPv4 and
 * IPv6 the addresses and the protocol, and for TCP, UDP and SCTP (not in
 * an IPv4 fragment) the ports. So every frame of one flow hashes alike and
 * keeps its order on one path, and flows spread as evenly as their
 * addresses and ports differ. Bytes beyond len are never read: a short
 * frame hashes what it has.
 *
 * CRC32-C (one instruction per 8 bytes with SSE4.2) folds the fields; a
 * final mix spreads its linear output over every bit, since members are
 * picked from the top bits (e3_flow_reduce).
 */
#ifndef E3_FLOW_HASH_H
#define E3_FLOW_HASH_H

#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_hash_crc.h>

static inline uint32_t e3_flow_mix(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/* n (1..2^32-1) choices: hash -> 0..n-1, by the top bits. */
static inline uint32_t e3_flow_reduce(uint32_t hash, uint32_t n)
{
	return (uint32_t)(((uint64_t)hash * n) >> 32);
}

static inline uint32_t e3_flow_bytes(const uint8_t *p, uint32_t n, uint32_t h)
{
	uint64_t w8;
	uint32_t w4;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w8, p, 8);
		h = rte_hash_crc_8byte(w8, h);
	}
	if (n >= 4) {
		memcpy(&w4, p, 4);
		h = rte_hash_crc_4byte(w4, h);
		p += 4;
		n -= 4;
	}
	for (; n > 0; p++, n--)
		h = rte_hash_crc_1byte(*p, h);
	return h;
}

static inline uint32_t e3_flow_hash(const uint8_t *f, uint32_t len)
{
	if (len < 14)
		return e3_flow_mix(e3_flow_bytes(f, len, 0));
	uint32_t h = e3_flow_bytes(f, 12, 0); /* dst and src MAC */
	uint32_t off = 12;
	uint16_t type;

	memcpy(&type, f + off, 2);
	for (int tags = 0; tags < 2 && (type == RTE_BE16(0x8100) || type == RTE_BE16(0x88a8)) &&
			   off + 6 <= len; tags++) {
		off += 4;
		memcpy(&type, f + off, 2);
	}
	h = rte_hash_crc_2byte(type, h);
	off += 2;
	const uint8_t *l3 = f + off;
	uint32_t rest = len - off;
	uint32_t l4 = 0;
	uint8_t proto = 0;

	if (type == RTE_BE16(0x0800) && rest >= 20 && (l3[0] >> 4) == 4) {
		uint32_t ihl = (l3[0] & 0xf) * 4u;
		uint16_t frag;

		proto = l3[9];
		h = e3_flow_bytes(l3 + 12, 8, rte_hash_crc_1byte(proto, h));
		memcpy(&frag, l3 + 6, 2);
		if (ihl >= 20 && !(frag & RTE_BE16(0x3fff))) /* not a fragment */
			l4 = ihl;
	} else if (type == RTE_BE16(0x86dd) && rest >= 40 && (l3[0] >> 4) == 6) {
		proto = l3[6];
		h = e3_flow_bytes(l3 + 8, 32, rte_hash_crc_1byte(proto, h));
		l4 = 40;
	}
	if (l4 && (proto == 6 || proto == 17 || proto == 132) && rest >= l4 + 4) {
		uint32_t ports;

		memcpy(&ports, l3 + l4, 4);
		h = rte_hash_crc_4byte(ports, h);
	}
	return e3_flow_mix(h);
}

#endif
