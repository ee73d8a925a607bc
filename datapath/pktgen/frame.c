/* SPDX-License-Identifier: Apache-2.0
 * frame.c - stream specs and frame building of e3-pktgen (see frame.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>

#include "frame.h"

#define ETHERTYPE_PAYLOAD 0x88b5 /* IEEE local experimental: no switch treats it specially */
#define ETHERTYPE_VLAN    0x8100
#define ETHERTYPE_MPLS    0x8847

static int parse_mac(const char *v, uint8_t mac[6])
{
	unsigned b[6];
	char tail;
	if (sscanf(v, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6)
		return -1;
	for (int i = 0; i < 6; i++) {
		if (b[i] > 0xff)
			return -1;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

static int parse_u32(const char *v, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long x = strtoul(v, &end, 0);
	if (*v == '\0' || *end != '\0' || x > max)
		return -1;
	*out = (uint32_t)x;
	return 0;
}

static uint32_t gcd(uint32_t a, uint32_t b)
{
	while (b) {
		uint32_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* A step co-prime with n that scatters consecutive frames over the table
 * (so a switch's cache sees the table, not one entry), while every value is
 * still visited once per n frames. */
static uint32_t pick_stride(uint32_t n)
{
	static const uint32_t primes[] = { 1000003, 104729, 7919, 997, 101, 7, 1 };
	if (n <= 1)
		return 0;
	for (unsigned i = 0; i < sizeof(primes) / sizeof(primes[0]); i++) {
		uint32_t step = primes[i] % n;
		if (step != 0 && gcd(step, n) == 1)
			return step;
	}
	return 1;
}

int pg_stream_parse(const char *spec, struct pg_stream *s, char *err, size_t errlen)
{
	static const uint8_t def_dst[6] = { 0x02, 0xe3, 0xd0, 0, 0, 1 };
	static const uint8_t def_src[6] = { 0x02, 0xe3, 0x50, 0, 0, 1 };
	memset(s, 0, sizeof(*s));
	memcpy(s->dst, def_dst, 6);
	memcpy(s->src, def_src, 6);
	memcpy(s->odst, def_dst, 6);
	memcpy(s->osrc, def_src, 6);
	s->kind = PG_ETH;
	s->ttl = 64;
	s->cw = true;
	s->n = 1;
	s->size = PG_MIN_FRAME;
	s->label = 16;
	s->vlan = 1;

	char buf[512];
	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "stream spec too long");
		return -1;
	}
	strcpy(buf, spec);
	char *save = NULL;
	for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *v = strchr(kv, '=');
		if (!v) {
			snprintf(err, errlen, "stream: '%s' is not key=value", kv);
			return -1;
		}
		*v++ = '\0';
		uint32_t x = 0;
		int bad = 0;
		if (!strcmp(kv, "port")) {
			bad = parse_u32(v, 255, &x);
			s->port = (uint16_t)x;
		} else if (!strcmp(kv, "frame")) {
			if (!strcmp(v, "eth"))
				s->kind = PG_ETH;
			else if (!strcmp(v, "vlan"))
				s->kind = PG_VLAN;
			else if (!strcmp(v, "mpls"))
				s->kind = PG_MPLS;
			else
				bad = 1;
		} else if (!strcmp(kv, "dst")) {
			bad = parse_mac(v, s->dst);
		} else if (!strcmp(kv, "src")) {
			bad = parse_mac(v, s->src);
		} else if (!strcmp(kv, "odst")) {
			bad = parse_mac(v, s->odst);
		} else if (!strcmp(kv, "osrc")) {
			bad = parse_mac(v, s->osrc);
		} else if (!strcmp(kv, "vlan")) {
			bad = parse_u32(v, 4094, &x) || x == 0;
			s->vlan = (uint16_t)x;
		} else if (!strcmp(kv, "inner_vlan")) {
			bad = parse_u32(v, 1, &x);
			s->inner_vlan = x;
		} else if (!strcmp(kv, "label")) {
			bad = parse_u32(v, (1u << 20) - 1, &s->label);
		} else if (!strcmp(kv, "ttl")) {
			bad = parse_u32(v, 255, &x);
			s->ttl = (uint8_t)x;
		} else if (!strcmp(kv, "cw")) {
			bad = parse_u32(v, 1, &x);
			s->cw = x;
		} else if (!strcmp(kv, "vary")) {
			if (!strcmp(v, "none"))
				s->vary = PG_VARY_NONE;
			else if (!strcmp(v, "dst"))
				s->vary = PG_VARY_DST;
			else if (!strcmp(v, "src"))
				s->vary = PG_VARY_SRC;
			else if (!strcmp(v, "label"))
				s->vary = PG_VARY_LABEL;
			else if (!strcmp(v, "vlan"))
				s->vary = PG_VARY_VLAN;
			else
				bad = 1;
		} else if (!strcmp(kv, "n")) {
			bad = parse_u32(v, 1u << 24, &s->n) || s->n == 0;
		} else if (!strcmp(kv, "size")) {
			/* Even: the receiver may tell data frames from the
			 * others by their length alone (frame.h). */
			bad = parse_u32(v, PG_MAX_FRAME, &s->size) || s->size < PG_MIN_FRAME || s->size % 2;
		} else {
			snprintf(err, errlen, "stream: unknown key '%s'", kv);
			return -1;
		}
		if (bad) {
			snprintf(err, errlen, "stream: bad value '%s' for %s", v, kv);
			return -1;
		}
	}
	if (s->vary == PG_VARY_LABEL && s->kind != PG_MPLS) {
		snprintf(err, errlen, "stream: vary=label needs frame=mpls");
		return -1;
	}
	if (s->vary == PG_VARY_LABEL && s->label + s->n > (1u << 20)) {
		snprintf(err, errlen, "stream: labels %u+%u exceed 2^20", s->label, s->n);
		return -1;
	}
	if (s->vary == PG_VARY_VLAN && s->vlan + s->n > 4095) {
		snprintf(err, errlen, "stream: VLANs %u+%u exceed 4094", s->vlan, s->n);
		return -1;
	}
	if (s->vary == PG_VARY_VLAN && !(s->kind == PG_VLAN || (s->kind == PG_MPLS && s->inner_vlan))) {
		snprintf(err, errlen, "stream: vary=vlan needs a tagged frame");
		return -1;
	}
	s->stride = pick_stride(s->n);
	return 0;
}

/* mac + i over the low 48 bits */
static inline void mac_add(uint8_t *out, const uint8_t *base, uint32_t i)
{
	uint64_t v = 0;
	for (int k = 0; k < 6; k++)
		v = (v << 8) | base[k];
	v += i;
	for (int k = 5; k >= 0; k--) {
		out[k] = (uint8_t)v;
		v >>= 8;
	}
}

static inline uint8_t *put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return p + 2;
}

static inline uint8_t *put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

uint32_t pg_frame_write(struct pg_stream *s, uint8_t *buf, uint32_t size,
			const struct pg_stamp *st)
{
	uint32_t i = s->cursor;
	if (s->n > 1) {
		s->cursor += s->stride;
		if (s->cursor >= s->n)
			s->cursor -= s->n;
	}
	uint8_t *p = buf;
	if (s->kind == PG_MPLS) {
		memcpy(p, s->odst, 6);
		memcpy(p + 6, s->osrc, 6);
		p = put16(p + 12, ETHERTYPE_MPLS);
		uint32_t label = s->label + (s->vary == PG_VARY_LABEL ? i : 0);
		p = put32(p, (label << 12) | (1u << 8) | s->ttl);
		if (s->cw)
			p = put32(p, 0);
	}
	uint8_t *inner = p;
	if (s->vary == PG_VARY_DST)
		mac_add(p, s->dst, i);
	else
		memcpy(p, s->dst, 6);
	if (s->vary == PG_VARY_SRC)
		mac_add(p + 6, s->src, i);
	else
		memcpy(p + 6, s->src, 6);
	p += 12;
	if (s->kind == PG_VLAN || (s->kind == PG_MPLS && s->inner_vlan)) {
		p = put16(p, ETHERTYPE_VLAN);
		p = put16(p, (uint16_t)(s->vlan + (s->vary == PG_VARY_VLAN ? i : 0)));
	}
	p = put16(p, ETHERTYPE_PAYLOAD);
	/* The customer frame is `size` bytes with FCS; the stamp ends it. The
	 * bytes between the headers and the stamp are left as the buffer had
	 * them: nothing reads them and zeroing costs the generator time. */
	uint32_t inner_len = size - PG_FCS + (st->magic != PG_MAGIC_DATA);
	uint32_t total = (uint32_t)(inner - buf) + inner_len;
	memcpy(buf + total - sizeof(*st), st, sizeof(*st));
	return total;
}

const struct pg_stamp *pg_stamp_find(const uint8_t *frame, uint32_t len)
{
	if (len < sizeof(struct pg_stamp) + 14)
		return NULL;
	const struct pg_stamp *st = (const struct pg_stamp *)(frame + len - sizeof(*st));
	if (st->magic != PG_MAGIC_DATA && st->magic != PG_MAGIC_LEARN)
		return NULL;
	return st;
}
