"""Frames for the packet tests: built with scapy, parsed field by field with
struct (what we check must not depend on a dissector's guesses), and judged
independently by tshark.

Wire format (shared/DESIGN.md, RFC 4448): fabric frame =
  dst MAC | src MAC | 0x8847 | label(20) TC(3) S(1) TTL(8) | [CW 4 bytes] | customer frame
with the attachment circuit's service VLAN tag removed from the customer frame.
"""
import itertools
import json
import os
import struct
import subprocess
import tempfile
from dataclasses import dataclass

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Raw

ETH_MPLS = 0x8847
ETH_VLAN = 0x8100
CW = b"\x00\x00\x00\x00"

_seq = itertools.count(1)


def token():
    """A unique marker carried in a frame's payload: captures keep only frames
    that contain it, and it proves the payload crossed the switch intact."""
    return b"pk-token-%08d-" % next(_seq)


def mac_bytes(mac):
    return bytes.fromhex(mac.replace(":", ""))


def mac_str(b):
    return ":".join("%02x" % x for x in b)


def customer_frame(dst, src, tok, vlan=None, pcp=0, size=128, inner_vlan=None, sport=4000):
    """A customer IPv4/UDP frame carrying tok, padded to `size` bytes (without
    the service tag), optionally with the service tag (vlan, pcp) and a
    customer's own inner tag that must cross untouched; sport: its flow."""
    l2 = Ether(dst=dst, src=src)
    if vlan is not None:
        l2 = l2 / Dot1Q(vlan=vlan, prio=pcp)
    if inner_vlan is not None:
        l2 = l2 / Dot1Q(vlan=inner_vlan, prio=1)
    hdr = len(l2) - (4 if vlan is not None else 0) + 20 + 8
    body = tok + bytes(max(0, size - hdr - len(tok)))
    return bytes(l2 / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=sport, dport=5000) / Raw(body))


def untag(frame):
    """The frame without its outer 802.1Q tag (what the fabric carries)."""
    assert frame[12:14] == struct.pack("!H", ETH_VLAN), "frame has no VLAN tag"
    return frame[:12] + frame[16:]


def mpls_entry(label, tc=0, s=1, ttl=64):
    return struct.pack("!I", (label << 12) | (tc << 9) | (s << 8) | ttl)


def fabric_frame(dst, src, label, inner, tc=0, ttl=64, s=1, cw=True, ethertype=ETH_MPLS):
    return (mac_bytes(dst) + mac_bytes(src) + struct.pack("!H", ethertype)
            + mpls_entry(label, tc, s, ttl) + (CW if cw else b"") + inner)


def diff(got, want):
    """A short account of how two frames differ (lengths, first differing byte)."""
    n = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    return (f"{len(got)} bytes, expected {len(want)}; first difference at byte {n}: "
            f"got {got[n:n + 16].hex()} want {want[n:n + 16].hex()}")


@dataclass
class Fabric:
    dst: str
    src: str
    ethertype: int
    label: int
    tc: int
    s: int
    ttl: int
    cw: bytes
    inner: bytes


def parse_fabric(frame, cw=True):
    assert len(frame) >= 18 + (4 if cw else 0), f"fabric frame too short: {frame.hex()}"
    (ethertype,) = struct.unpack("!H", frame[12:14])
    (e,) = struct.unpack("!I", frame[14:18])
    off = 22 if cw else 18
    return Fabric(dst=mac_str(frame[0:6]), src=mac_str(frame[6:12]), ethertype=ethertype,
                  label=e >> 12, tc=(e >> 9) & 7, s=(e >> 8) & 1, ttl=e & 0xFF,
                  cw=frame[18:22] if cw else b"", inner=frame[off:])


def assert_fabric(frame, *, dst, src, label, tc, ttl, inner, cw=True):
    """Every field of a fabric frame, one assertion each, so a failure names it."""
    f = parse_fabric(frame, cw)
    assert f.dst == dst, f"fabric dst MAC {f.dst} != next hop {dst}"
    assert f.src == src, f"fabric src MAC {f.src} != our port {src}"
    assert f.ethertype == ETH_MPLS, f"ethertype {f.ethertype:#06x} != 0x8847"
    assert f.label == label, f"label {f.label} != {label}"
    assert f.tc == tc, f"TC {f.tc} != {tc}"
    assert f.s == 1, "S bit not set on the only label"
    assert f.ttl == ttl, f"TTL {f.ttl} != {ttl}"
    if cw:
        assert f.cw == CW, f"control word {f.cw.hex()} != 00000000"
    assert f.inner == inner, "inner frame: " + diff(f.inner, inner)
    assert len(frame) == len(inner) + (22 if cw else 18)


def assert_customer(frame, *, inner, vlan, pcp=None):
    """A frame delivered to a customer circuit: the fabric's inner frame with
    the circuit's tag (TPID 0x8100, PCP, DEI 0, VID) pushed, or exactly the
    inner frame on an untagged circuit (vlan None)."""
    if vlan is None:
        assert frame == inner, "frame on untagged circuit: " + diff(frame, inner)
        return
    tpid, tci = struct.unpack("!HH", frame[12:16])
    assert tpid == ETH_VLAN, f"no VLAN tag (ethertype {tpid:#06x}), expected VLAN {vlan}"
    assert tci & 0xFFF == vlan, f"VLAN {tci & 0xFFF} != {vlan}"
    assert tci >> 13 == pcp, f"PCP {tci >> 13} != {pcp}"
    assert tci & 0x1000 == 0, "DEI set"
    assert untag(frame) == inner, "frame without its tag: " + diff(untag(frame), inner)


# ---- pcap + tshark ---------------------------------------------------------

def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", i, 0, len(fr), len(fr)))
            f.write(fr)


def tshark_json(pcap_path, decode_as=()):
    """Dissect a pcap with tshark; returns the list of packets' layers
    (tshark -T json), with each decode-as rule applied."""
    args = ["tshark", "-r", pcap_path, "-T", "json", "--no-duplicate-keys"]
    for rule in decode_as:
        args += ["-d", rule]
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"tshark failed: {r.stderr}"
    return [p["_source"]["layers"] for p in json.loads(r.stdout)]


def tshark_frames(frames, decode_as=()):
    fd, path = tempfile.mkstemp(prefix="pk-", suffix=".pcap")
    os.close(fd)
    try:
        write_pcap(path, frames)
        return tshark_json(path, decode_as)
    finally:
        os.unlink(path)
