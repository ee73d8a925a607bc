/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>

#include "node/init.h"
#include "harness.h"
#include "tables/mac_table.h"
#include "worker/worker.h"

/* The empty runtime directory EAL makes even without shared files. */
static void remove_runtime_dir(void)
{
	rmdir(rte_eal_get_runtime_dir());
}

int harness_init(const char *prefix, uint32_t mac_size)
{
	char fp[64];

	snprintf(fp, sizeof(fp), "--file-prefix=%s", prefix);
	/* No shared files or telemetry socket to leave behind. */
	char *argv[] = { "unit", "-l", "0", "--no-huge", "--no-shconf", "--no-telemetry", "--no-pci",
			 "-m", "256", fp, "--log-level=*:error", NULL };
	if (rte_eal_init(RTE_DIM(argv) - 1, argv) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return -1;
	}
	atexit(remove_runtime_dir);
	struct e3_dp_opts o = { .poll_mode = E3_POLL_BUSY, .mac_table_size = mac_size,
				.mbufs = 4095, .n_workers = 1 };
	char err[E3_ERRLEN];

	if (e3_dp_init(&o, err) != 0) {
		fprintf(stderr, "init: %s\n", err);
		return -1;
	}
	return 0;
}

void mac_parse(const char *s, uint8_t out[6])
{
	unsigned v[6];

	sscanf(s, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]);
	for (int i = 0; i < 6; i++)
		out[i] = (uint8_t)v[i];
}

void fr_eth(struct frame *f, const char *dst, const char *src)
{
	f->len = 0;
	mac_parse(dst, f->b);
	mac_parse(src, f->b + 6);
	f->len = 12;
}

void fr_type(struct frame *f, uint16_t type)
{
	f->b[f->len++] = type >> 8;
	f->b[f->len++] = type & 0xff;
}

void fr_tag(struct frame *f, uint16_t tpid, uint8_t pcp, uint16_t vlan)
{
	fr_type(f, tpid);
	fr_type(f, (uint16_t)(pcp << 13 | vlan));
}

void fr_u32(struct frame *f, uint32_t v)
{
	fr_type(f, v >> 16);
	fr_type(f, v & 0xffff);
}

void fr_bytes(struct frame *f, const void *p, uint16_t n)
{
	memcpy(f->b + f->len, p, n);
	f->len += n;
}

void fr_pad(struct frame *f, uint16_t n, uint8_t byte)
{
	memset(f->b + f->len, byte, n);
	f->len += n;
}

struct rte_mbuf *mk(const struct frame *f)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(e3.pool);

	if (m == NULL)
		abort();
	memcpy(rte_pktmbuf_append(m, f->len), f->b, f->len);
	return m;
}

uint16_t port_id_of(const char *port)
{
	struct e3_port_info pi;

	if (e3_node_port_get(port, &pi, NULL) != 0)
		abort();
	return pi.dpdk_port_id;
}

void rx_on(const char *port, struct rte_mbuf **m, unsigned n)
{
	e3_process_burst(e3_workers[0], port_id_of(port), m, (uint16_t)n, rte_rdtsc());
	e3_mac_drain();   /* what the main lcore does every loop */
}

void rx_frame(const char *port, const struct frame *f)
{
	struct rte_mbuf *m = mk(f);

	rx_on(port, &m, 1);
}

unsigned tx_of(const char *port, struct rte_mbuf **out, unsigned max)
{
	return rte_eth_rx_burst(port_id_of(port), 0, out, (uint16_t)max);
}

unsigned tx_drain(const char *port)
{
	struct rte_mbuf *m[32];
	unsigned n, total = 0;

	while ((n = tx_of(port, m, 32)) > 0) {
		rte_pktmbuf_free_bulk(m, n);
		total += n;
	}
	return total;
}

uint64_t drops(const char *port, enum e3_drop d)
{
	struct e3_port_info pi;

	if (e3_node_port_get(port, &pi, NULL) != 0)
		abort();
	return pi.drops[d];
}

const uint8_t *bytes_of(const struct rte_mbuf *m)
{
	static uint8_t buf[RTE_MBUF_DEFAULT_BUF_SIZE * 8];

	if (m->pkt_len > sizeof(buf))
		abort();
	return rte_pktmbuf_read(m, 0, m->pkt_len, buf);
}
