// SPDX-License-Identifier: GPL-2.0
/*
 * vlan_shim: a VLAN sub-interface for kernels built without 802.1Q.
 *
 * The lab's customer hosts sit "on VLAN 1000" as the design's demo has it,
 * but the test machines' kernel has neither CONFIG_VLAN_8021Q nor act_vlan.
 * Attached with tc (clsact, direct action) to a host's veth, this program
 * makes the interface behave like eth0.VID: every frame it sends gets the
 * tag VID, and it accepts only frames tagged VID, with the tag removed.
 * Compiled once per VID: clang -O2 -target bpf -DVID=1000 -c ...
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#ifndef VID
#error "compile with -DVID=<1..4094>"
#endif

SEC("tc")
int vlan_egress(struct __sk_buff *skb)
{
	if (bpf_skb_vlan_push(skb, bpf_htons(ETH_P_8021Q), VID))
		return TC_ACT_SHOT;
	return TC_ACT_OK;
}

SEC("tc")
int vlan_ingress(struct __sk_buff *skb)
{
	__u16 tci;

	/* The receive path moves an in-band tag into the skb's metadata
	 * before tc runs; read it from there, or from the frame if not. */
	if (skb->vlan_present) {
		tci = skb->vlan_tci;
	} else {
		void *data = (void *)(long)skb->data;
		void *end = (void *)(long)skb->data_end;
		struct ethhdr *eth = data;

		if (data + sizeof(*eth) + 4 > end || eth->h_proto != bpf_htons(ETH_P_8021Q))
			return TC_ACT_SHOT;
		tci = bpf_ntohs(*(__u16 *)(data + sizeof(*eth)));
	}
	if ((tci & 0x0fff) != VID)
		return TC_ACT_SHOT;
	if (bpf_skb_vlan_pop(skb))
		return TC_ACT_SHOT;
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
