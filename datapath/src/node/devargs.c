/* SPDX-License-Identifier: Apache-2.0
 *
 * devargs.c - which DPDK devices a port may be (docs/security.md): a port's
 * devargs reach rte_dev_probe, which runs as root and loads any driver,
 * some of which open or write files. Only these drivers, with these keys,
 * are taken; a key that names a file must name one under the switch's port
 * directory (its sockets), or for net_pcap under the pcap directory, which
 * exists only when given (capture replay in tests). The controller checks
 * the same list at topology import (control/internal/topology/devargs.go).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "base/dp.h"
#include "node/node.h"

#define MAX_KEYS 12

struct driver_rule {
	const char *prefix;             /* the vdev name starts with it */
	const char *keys[MAX_KEYS];     /* plain keys */
	const char *path_keys[3];       /* keys whose value is a file */
	const char *required;           /* a key=value it must have, or NULL */
	bool pcap;                      /* paths under the pcap directory */
};

static const struct driver_rule rules[] = {
	{ "net_af_packet", { "iface", "qpairs", "blocksz", "framesz", "framecnt", "qdisc_bypass",
			     "fanout_mode" }, { NULL }, NULL, false },
	{ "net_af_xdp", { "iface", "start_queue", "queue_count", "shared_umem", "busy_budget",
			  "force_copy" }, { NULL }, NULL, false },
	/* An abstract socket would be outside the port directory, open to
	 * any local user. */
	{ "net_memif", { "id", "role", "bsize", "rsize", "mac", "zero-copy", "socket-abstract" },
	  { "socket" }, "socket-abstract=no", false },
	{ "net_vhost", { "queues", "client", "iommu-support", "postcopy-support", "tso",
			 "linear-buffer", "ext-buffer" }, { "iface" }, NULL, false },
	{ "net_virtio_user", { "queues", "queue_size", "server", "mrg_rxbuf", "in_order", "packed_vq",
			       "mac" }, { "path" }, NULL, false },
	{ "net_tap", { "iface", "mac" }, { NULL }, NULL, false },
	{ "net_null", { "size", "copy", "no-rx" }, { NULL }, NULL, false },
	{ "net_ring", { NULL }, { NULL }, NULL, false },
	{ "net_pcap", { "iface", "rx_iface", "rx_iface_in", "tx_iface", "infinite_rx", "phy_mac" },
	  { "rx_pcap", "tx_pcap" }, NULL, true },
};

static char port_dir[256], pcap_dir[256];

void e3_node_set_port_dirs(const char *ports, const char *pcaps)
{
	snprintf(port_dir, sizeof(port_dir), "%s", ports ? ports : "");
	snprintf(pcap_dir, sizeof(pcap_dir), "%s", pcaps ? pcaps : "");
}

static bool in_list(const char *const *list, unsigned n, const char *key, size_t klen)
{
	for (unsigned i = 0; i < n && list[i] != NULL; i++)
		if (strlen(list[i]) == klen && strncmp(list[i], key, klen) == 0)
			return true;
	return false;
}

/* dddd:bb:dd.f or bb:dd.f, and nothing after it. */
static bool is_pci(const char *s)
{
	unsigned n = 0;

	while (isxdigit((unsigned char)s[n]))
		n++;
	if (n == 4 && s[n] == ':')
		s += 5;
	return isxdigit((unsigned char)s[0]) && isxdigit((unsigned char)s[1]) && s[2] == ':' &&
	       isxdigit((unsigned char)s[3]) && isxdigit((unsigned char)s[4]) && s[5] == '.' &&
	       s[6] >= '0' && s[6] <= '7' && s[7] == 0;
}

/* An absolute path, no "..", directly or deeper under dir. */
static bool path_under(const char *v, size_t vlen, const char *dir)
{
	size_t dl = strlen(dir);

	if (dl == 0)
		return false;
	while (dl > 0 && dir[dl - 1] == '/')
		dl--;                           /* "/run/e3/" as "/run/e3", "/" as "" */
	if (vlen <= dl + 1 || strncmp(v, dir, dl) != 0 || v[dl] != '/')
		return false;
	for (size_t i = 0; i + 1 < vlen; i++)
		if (v[i] == '.' && v[i + 1] == '.')
			return false;
	return true;
}

int e3_node_devargs_check(const char *devargs, char *err)
{
	size_t nlen = strcspn(devargs, ",");

	if (strchr(devargs, ',') == NULL && is_pci(devargs))
		return 0;
	const struct driver_rule *r = NULL;

	for (unsigned i = 0; i < RTE_DIM(rules); i++)
		if (strncmp(devargs, rules[i].prefix, strlen(rules[i].prefix)) == 0)
			r = &rules[i];
	if (r == NULL)
		return E3_ERR(err, E3_EINVAL, "devargs: device %.*s is not allowed "
			      "(net_af_packet, net_af_xdp, net_memif, net_vhost, net_virtio_user, net_tap, "
			      "net_null, net_ring, a PCI address)", (int)nlen, devargs);
	if (r->pcap && pcap_dir[0] == 0)
		return E3_ERR(err, E3_EINVAL, "devargs: %s ports are off (the switch has no --pcap-dir)",
			      r->prefix);
	bool required = r->required == NULL;

	for (const char *kv = devargs + nlen; *kv == ','; ) {
		kv++;
		size_t len = strcspn(kv, ","), klen = strcspn(kv, "=");

		if (klen > len)
			klen = len;
		const char *v = kv + klen + 1;
		size_t vlen = klen < len ? len - klen - 1 : 0;

		if (r->required && strlen(r->required) == len && strncmp(kv, r->required, len) == 0)
			required = true;
		if (in_list(r->path_keys, RTE_DIM(r->path_keys), kv, klen)) {
			const char *dir = r->pcap ? pcap_dir : port_dir;

			if (!path_under(v, vlen, dir))
				return E3_ERR(err, E3_EINVAL, "devargs: key %.*s: the file must be under %s",
					      (int)klen, kv, dir[0] ? dir : "the port directory");
		} else if (!in_list(r->keys, MAX_KEYS, kv, klen)) {
			return E3_ERR(err, E3_EINVAL, "devargs: key %.*s is not allowed for %s",
				      (int)klen, kv, r->prefix);
		}
		kv += len;
	}
	if (!required)
		return E3_ERR(err, E3_EINVAL, "devargs: %s ports need %s", r->prefix, r->required);
	return 0;
}
