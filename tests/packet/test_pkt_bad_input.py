"""Malformed and unwanted frames: each is dropped, counted under exactly its
named reason (on its port and in the totals), never forwarded, and the
switch keeps forwarding afterwards.

Frames shorter than 14 bytes cannot cross a veth (the kernel refuses to
send them), nor can 802.1Q frames shorter than 18 bytes (dropped on
receive); those reach the switch through a net_pcap port instead, which
replays a capture file byte for byte."""
import os
import signal
import struct

import pytest

from pkt_frames import (assert_customer, customer_frame, fabric_frame, mac_bytes,
                        mpls_entry, token, write_pcap)
from pkt_net import assert_delivered, wait_for
from e3rpc import RpcError
from pkt_switch import MAC, PEER_MAC, assert_encapsulated, assert_fabric_out

HOST_A = "02:00:0a:00:00:01"
HOST_B = "02:00:0a:00:00:02"
LABEL_OUT = 100
LABEL_IN = 200


@pytest.fixture
def elines(sw):
    sw.nhlfe(1, "f1", LABEL_OUT)
    sw.rpc("service_add", id=1, type="eline", name="pk-bad-1", nhlfe=1)
    sw.rpc("circuit_add", id=1, port="c1", vlan=1000, service=1)
    sw.rpc("label_add", label=LABEL_IN, type="eline", service=1)
    sw.nhlfe(2, "f2", 101)
    sw.rpc("service_add", id=2, type="eline", name="pk-bad-2", nhlfe=2)
    sw.rpc("circuit_add", id=2, port="c3", vlan="untagged", service=2)
    return sw


def hdr(port, ethertype=0x8847, dst=None):
    return mac_bytes(dst or MAC[port]) + mac_bytes(PEER_MAC[port]) + struct.pack("!H", ethertype)


def inner(tok):
    return customer_frame(HOST_A, HOST_B, tok)


def fab(tok, **kw):
    return fabric_frame(MAC["f1"], PEER_MAC["f1"], kw.pop("label", LABEL_IN), inner(tok), **kw)


# (port the frame enters, frame builder, the one drop reason it must count)
CASES = {
    "truncated_ethertype_only": ("f1", lambda tok: hdr("f1"), "truncated"),
    "truncated_in_label": ("f1", lambda tok: hdr("f1") + mpls_entry(LABEL_IN)[:2], "truncated"),
    "truncated_in_control_word": ("f1", lambda tok: hdr("f1") + mpls_entry(LABEL_IN) + b"\0\0",
                                  "truncated"),
    "truncated_inner_ethernet": ("f1", lambda tok: hdr("f1") + mpls_entry(LABEL_IN) + b"\0" * 4
                                 + mac_bytes(HOST_A), "truncated"),
    "ipv4_on_fabric": ("f1", lambda tok: hdr("f1", 0x0800) + bytes(46) + tok, "bad_ethertype"),
    "mpls_multicast_on_fabric": ("f1", lambda tok: hdr("f1", 0x8848) + mpls_entry(LABEL_IN)
                                 + bytes(4) + inner(tok), "bad_ethertype"),
    "label_unknown": ("f1", lambda tok: fab(tok, label=999), "label_unknown"),
    "label_reserved_3": ("f1", lambda tok: fab(tok, label=3), "label_reserved"),
    "label_reserved_15": ("f1", lambda tok: fab(tok, label=15), "label_reserved"),
    "label_stack": ("f1", lambda tok: fab(tok, s=0), "label_stacked"),
    "not_for_us": ("f1", lambda tok: fabric_frame("02:00:00:aa:bb:cc", PEER_MAC["f1"], LABEL_IN,
                                                  inner(tok)), "not_for_us"),
    "ttl_zero_at_leaf": ("f1", lambda tok: fab(tok, ttl=0), "ttl_expired"),
    "bad_control_word": ("f1", lambda tok: hdr("f1") + mpls_entry(LABEL_IN) + b"\x40\0\0\0"
                         + inner(tok), "bad_control_word"),
    "ach_not_mpls_echo": ("f1", lambda tok: hdr("f1") + mpls_entry(LABEL_IN) + b"\x10\0\0\0"
                          + inner(tok), "pw_oam_bad"),
    "labelled_on_customer_port": ("c3", lambda tok: hdr("c3") + mpls_entry(LABEL_IN)
                                  + bytes(4) + inner(tok), "customer_labelled"),
    "unknown_vlan": ("c1", lambda tok: customer_frame(HOST_B, HOST_A, tok, vlan=1001), "no_circuit"),
    "untagged_without_circuit": ("c1", lambda tok: customer_frame(HOST_B, HOST_A, tok),
                                 "no_circuit"),
    "oversize": ("c1", lambda tok: customer_frame(HOST_B, HOST_A, tok, vlan=1000, size=1614),
                 "oversize"),
    # Fabric MTU 2000: 2014-byte frames at most; this one is 2040.
    "oversize_fabric": ("f1", lambda tok: fab(tok) + bytes(2040 - len(fab(tok))), "oversize"),
}


def still_forwards(sw, wire):
    """Both directions of the E-Line still work after the drop."""
    tok = token()
    frame = customer_frame(HOST_B, HOST_A, tok, vlan=1000, pcp=3)
    assert_encapsulated(wire, frame, tok, "f1", label=LABEL_OUT, tc=3, ttl=64)
    tok = token()
    got = wire.exchange([("f1p", fab(tok, tc=2))], expect=1, match=tok)
    assert_delivered(got, {"c1p": 1})
    assert_customer(got["c1p"][0], inner=inner(tok), vlan=1000, pcp=2)


@pytest.mark.parametrize("case", list(CASES))
def test_dropped_and_counted(elines, wire, case):
    sw = elines
    port, build, reason = CASES[case]
    tok = token()
    frame = build(tok)
    # Short frames cannot carry the token: capture everything for them.
    got = wire.exchange([(port + "p", frame)], match=tok if tok in frame else None)
    sw.wait_drops(port, {reason: 1})
    assert_delivered(got, {})
    still_forwards(sw, wire)
    assert sw.total_drops() == {reason: 1}, "forwarding afterwards must not count drops"


def test_largest_fabric_frame_within_mtu_passes(elines, wire):
    """A transit frame of the fabric MTU (2000 bytes after the Ethernet
    header) crosses whole."""
    sw = elines
    sw.nhlfe(7, "f2", 5001)
    sw.rpc("label_add", label=5000, type="swap", nhlfe=7)
    tok = token()
    payload = customer_frame(HOST_A, HOST_B, tok, size=2000 - 8)
    frame = fabric_frame(MAC["f1"], PEER_MAC["f1"], 5000, payload, ttl=9)
    assert len(frame) == 2014
    got = wire.exchange([("f1p", frame)], expect=1, match=tok)
    assert_fabric_out(got, "f2", label=5001, tc=0, ttl=8, inner=payload)
    assert sw.total_drops() == {}


def test_largest_frame_within_mtu_passes(elines, wire):
    """1500 bytes of L3 payload plus the service tag is not oversize."""
    tok = token()
    frame = customer_frame(HOST_B, HOST_A, tok, vlan=1000, size=1514)
    assert_encapsulated(wire, frame, tok, "f1", label=LABEL_OUT, tc=0, ttl=64)
    assert elines.total_drops() == {}


PCAP_MAC = "02:00:00:0e:00:01"
SHORT = {
    "customer": [bytes(10), bytes(13),
                 mac_bytes(HOST_B) + mac_bytes(HOST_A) + b"\x81\x00\x03",          # cut in the tag
                 mac_bytes(HOST_B) + mac_bytes(HOST_A) + b"\x81\x00\x03\xe8\x08"],  # cut in the type
    "fabric": [bytes(10), bytes(13),
               mac_bytes(PCAP_MAC) + mac_bytes(HOST_A) + b"\x88\x47\x00\x0c",      # cut in the label
               mac_bytes(PCAP_MAC) + mac_bytes(HOST_A) + b"\x88\x47" + mpls_entry(LABEL_IN)[:3]],
}


@pytest.mark.parametrize("devargs, key", [
    ("net_pcap_px,tx_pcap=/var/tmp/e3-evil-{pid}.pcap", "tx_pcap"),
    ("net_memif9,role=server,socket=/var/tmp/e3-evil-{pid}.sock,socket-abstract=no", "socket"),
    ("net_vhost9,iface=/tmp/../var/tmp/e3-evil-{pid}.sock", "iface"),
    ("net_af_packet_px,iface=c1,evil=1", "evil"),
    ("net_memif9,role=server,socket=/tmp/e3-evil-{pid}.sock", "socket-abstract=no"),
    ("net_bonding9,slave=c1", "net_bonding9"),
])
def test_port_devargs_outside_the_allow_list_are_refused(sw, devargs, key):
    """A port's devargs reach rte_dev_probe as root: only allowed drivers and
    keys, and files only under the switch's directories. Refused with a
    message naming the key; no file is made, no port added."""
    devargs = devargs.format(pid=os.getpid())
    with pytest.raises(RpcError) as e:
        sw.rpc("port_add", name="px", devargs=devargs, kind="customer")
    assert key in str(e.value), e.value
    assert not any(os.path.exists(f"/var/tmp/e3-evil-{os.getpid()}.{x}") for x in ("pcap", "sock"))
    assert all(p["name"] != "px" for p in sw.rpc("port_list"))


@pytest.mark.parametrize("kind", list(SHORT))
def test_runt_frames_from_a_pcap_port(elines, wire, kind):
    sw = elines
    frames = SHORT[kind]
    rx, tx = f"/tmp/{sw.ns}-runts-in.pcap", f"/tmp/{sw.ns}-runts-out.pcap"
    write_pcap(rx, frames)
    params = dict(name="px", devargs=f"net_pcap_px,rx_pcap={rx},tx_pcap={tx}", kind=kind)
    if kind == "fabric":
        params["mac"] = PCAP_MAC
    try:
        sw.rpc("port_add", **params)
        sw.wait_drops("px", {"truncated": len(frames)})
        stats = sw.port("px")["stats"]
        assert (stats["rx_pkts"], stats["tx_pkts"]) == (len(frames), 0)
    finally:
        if "px" in [p["name"] for p in sw.rpc("port_list")]:
            sw.rpc("port_del", name="px")
        for path in (rx, tx):
            if os.path.exists(path):
                os.unlink(path)
    still_forwards(sw, wire)


def test_kernel_ring_drops_are_counted(sw, wire):
    """The switch stops draining (SIGSTOP) while 4,000 frames arrive on c1:
    its af_packet receive ring holds far fewer, and what the kernel drops
    shows as c1's rx_ring_full once the switch runs again, beside what it
    then dropped itself (no circuit)."""
    frame = customer_frame(PEER_MAC["c1"], "02:00:0a:00:00:42", b"ring", vlan=3999)
    os.kill(sw.proc.pid, signal.SIGSTOP)
    try:
        for _ in range(4000):
            wire.send("c1p", frame)
    finally:
        os.kill(sw.proc.pid, signal.SIGCONT)
    wait_for(lambda: set(sw.port_drops("c1")) == {"rx_ring_full", "no_circuit"},
             what="ring drops and the switch's own counted")
    d = sw.port_drops("c1")
    # At most what was sent: the kernel may also drop before the ring
    # (its backlog), which no counter of ours can see.
    assert d["rx_ring_full"] + d["no_circuit"] <= 4000, d
    sw.check_alive()
