"""End to end: examples/static-3node.yaml as four e3-vswitchd processes in
network namespaces, programmed by tests/lab/static.py, judged by ping,
iperf3, tcpdump and tshark.

Services (see the example's comments): a-line (E-Line leaf1 vlan 1000 <->
leaf2 vlan 2000, via spine1), a-lan (E-LAN leaf1/leaf2 vlan 3000, leaf3 vlan
3100), and tenant b's b-line and b-lan with the same VLANs, MACs and IPs on
the leaves' cust2 ports.
"""
import time

import pytest
from scapy.all import rdpcap

from lab.traffic import Capture, iperf3, parse_ping, ping, ping_until, tshark_fields

A1_LINE, A2_LINE = "10.10.0.1", "10.10.0.2"
LAN = {"a1": "10.30.0.1", "a2": "10.30.0.2", "a3": "10.30.0.3"}


def stats_of(lab, node, method, key, value):
    """The stats dict of the object of a *_list whose `key` is `value`."""
    for o in lab.client(node).call(method):
        if o[key] == value:
            return o.get("stats", {})
    raise KeyError(f"{node}: {method} has no {key}={value}")


def port_stats(lab, node, port):
    return stats_of(lab, node, "port_list", "name", port)


def circuit_pkts(lab, prog, service, keys=("rx_pkts", "tx_pkts")):
    """Packets of every circuit of a service, summed over its nodes."""
    st = prog.services[service]
    total = 0
    for node, circuits in st.circuits.items():
        for cid, _, _ in circuits:
            s = stats_of(lab, node, "circuit_list", "id", cid)
            total += sum(s.get(k, 0) for k in keys)
    return total


def label_pkts(lab, node, label):
    for l in lab.client(node).call("label_list"):
        if l["label"] == label:
            return l.get("pkts", 0)
    return None  # no such label (any more)


# ---- E-Line ------------------------------------------------------------------------


def test_eline_ping(lab):
    ping_until(lab, "a1", A2_LINE)
    r = ping(lab, "a1", A2_LINE, count=10, interval=0.05)
    assert r.ok, r.output


def test_eline_full_size_frames(lab):
    """1500-byte IP packets (1518-byte tagged frames at the customer port,
    1536 bytes with the pseudowire headers on the fabric) cross unfragmented."""
    r = ping(lab, "a1", A2_LINE, count=5, interval=0.05, extra=["-M", "do", "-s", "1472"])
    assert r.ok, r.output


def test_eline_iperf3_tcp(lab):
    r = iperf3(lab, "a1", "a2", A2_LINE, seconds=3)
    assert r.received_bytes > 0 and r.received_bytes <= r.sent_bytes


def test_eline_crosses_spine_with_programmed_labels(lab, prog):
    """The spine swaps: its SWAP entries count the E-Line's frames."""
    lsp = prog.services["a-line"].lsps[("leaf1", "leaf2")]
    (node, label, _), = lsp.transit
    assert node == "spine1"
    before = label_pkts(lab, "spine1", label)
    assert ping(lab, "a1", A2_LINE, count=5, interval=0.05).ok
    assert label_pkts(lab, "spine1", label) >= before + 5


# ---- E-LAN ---------------------------------------------------------------------------


def test_elan_every_pair_pings(lab):
    failures = []
    for src in LAN:
        for dst, ip in LAN.items():
            if src == dst:
                continue
            ping_until(lab, src, ip)
            r = ping(lab, src, ip, count=3, interval=0.05)
            if not r.ok:
                failures.append(f"{src}->{dst}: {r.received}/{r.sent}\n{r.output}")
    assert not failures


def test_elan_learns_remote_macs_against_their_source_leaf(lab, prog):
    for src in LAN:
        for ip in LAN.values():
            if ip != LAN[src]:
                ping(lab, src, ip, count=1)
    sid = prog.services["a-lan"].id
    macs = {m["mac"]: m for m in lab.client("leaf1").call("mac_list", service=sid)}
    a1 = prog.services["a-lan"].circuits["leaf1"][0][0]
    assert macs["02:00:0a:1e:00:01"].get("circuit") == a1
    assert macs["02:00:0a:1e:00:02"].get("source") == prog.source_id("leaf2")
    assert macs["02:00:0a:1e:00:03"].get("source") == prog.source_id("leaf3")


def test_elan_iperf3_tcp(lab):
    r = iperf3(lab, "a3", "a1", LAN["a1"], seconds=3)
    assert r.received_bytes > 0


def test_elan_broadcast_replicated_by_spine(lab, prog, tmp_path):
    """A broadcast from leaf3's site reaches both other sites, copied by spine1."""
    flood = [l for l, what in prog.services["a-lan"].labels["spine1"].items() if what == "replicate a-lan from leaf3"]
    before = label_pkts(lab, "spine1", flood[0])
    lab.host_exec("a3", ["ip", "neigh", "flush", "all"])
    caps = {h: Capture(lab.ns(h), "eth0", tmp_path / f"{h}.pcap", "arp").start() for h in ("a1", "a2")}
    try:
        ping(lab, "a3", "10.30.0.99", count=1, wait_s=1)  # ARP for a missing address: broadcast only
    finally:
        paths = {h: c.stop() for h, c in caps.items()}
    for h, p in paths.items():
        rows = tshark_fields(p, ["arp.dst.proto_ipv4", "vlan.id"])
        assert {"arp.dst.proto_ipv4": "10.30.0.99", "vlan.id": "3000"} in rows, (h, rows)
    assert label_pkts(lab, "spine1", flood[0]) > before


# ---- tenants -------------------------------------------------------------------------------


def test_tenant_b_works_on_the_same_vlans_and_macs(lab, prog):
    for dst in (A2_LINE, LAN["a2"]):  # b2 has a2's addresses
        ping_until(lab, "b1", dst)
        r = ping(lab, "b1", dst, count=5, interval=0.05)
        assert r.ok, r.output
    assert ping(lab, "a1", LAN["a2"], count=1).ok
    # The same MACs are learned in both E-LANs, each on its own tenant's circuit.
    for svc in ("a-lan", "b-lan"):
        st = prog.services[svc]
        macs = {m["mac"]: m for m in lab.client("leaf1").call("mac_list", service=st.id)}
        assert macs["02:00:0a:1e:00:01"].get("circuit") == st.circuits["leaf1"][0][0], (svc, macs)
        assert macs["02:00:0a:1e:00:02"].get("source") == prog.source_id("leaf2"), (svc, macs)


def test_tenants_never_leak(lab, prog, tmp_path):
    """Tenant a's traffic (unicast, broadcast, unknown unicast after a MAC
    flush) never shows up at tenant b's hosts, and tenant b's circuits count
    nothing while it runs."""
    marker = "e2a1e2a1"
    # Tenant b stays silent: no neighbour entries left to re-validate with ARP.
    for h in ("b1", "b2"):
        lab.host_exec(h, ["ip", "neigh", "flush", "all"])
    for node in ("leaf1", "leaf2", "leaf3"):
        lab.client(node).call("mac_flush")
    b_before = {s: circuit_pkts(lab, prog, s) for s in ("b-line", "b-lan")}
    a_before = circuit_pkts(lab, prog, "a-line") + circuit_pkts(lab, prog, "a-lan")
    # a2's capture is the control: it must see the marker, or the captures see nothing.
    caps = {h: Capture(lab.ns(h), "eth0", tmp_path / f"{h}.pcap").start() for h in ("b1", "b2", "a2")}
    try:
        for h in ("a1", "a2"):
            lab.host_exec(h, ["ip", "neigh", "flush", "all"])
        for dst in (A2_LINE, LAN["a2"], LAN["a3"]):
            r = ping(lab, "a1", dst, count=20, interval=0.01, extra=["-p", marker])
            assert r.ok, r.output
        iperf3(lab, "a2", "a1", LAN["a1"], seconds=1)
    finally:
        paths = {h: c.stop() for h, c in caps.items()}
    control = rdpcap(str(paths.pop("a2")))
    assert len([f for f in control if bytes.fromhex(marker) in bytes(f)]) >= 40
    for h, p in paths.items():
        frames = rdpcap(str(p))
        leaked = [f for f in frames if bytes.fromhex(marker) in bytes(f)]
        assert not leaked, f"{h} saw {len(leaked)} of tenant a's frames, e.g. {leaked[0].summary()}"
        assert len(frames) == 0, f"{h} saw {len(frames)} frames while only tenant a sent: {frames[0].summary()}"
    assert circuit_pkts(lab, prog, "a-line") + circuit_pkts(lab, prog, "a-lan") > a_before + 100
    assert {s: circuit_pkts(lab, prog, s) for s in ("b-line", "b-lan")} == b_before


# ---- re-pointing -------------------------------------------------------------------------------


def test_repoint_eline_under_ping_flood_loses_nothing(lab, prog):
    """Move a-line to the direct leaf1-leaf2 link and back while a1 pings a2
    every 2 ms: make-before-break, so every echo comes back."""
    ping_until(lab, "a1", A2_LINE)
    via_spine = ["leaf1", "spine1", "leaf2"]
    direct = ["leaf1", "leaf2"]
    old_spine_label = prog.services["a-line"].lsps[("leaf1", "leaf2")].transit[0][1]
    direct_tx = port_stats(lab, "leaf1", "fab2").get("tx_pkts", 0)
    flood = lab.host_popen("a1", ["ping", "-n", "-q", "-i", "0.002", "-c", "2000", "-W", "2", A2_LINE])
    try:
        _wait_for(lambda: label_pkts(lab, "spine1", old_spine_label) > 200, "the ping flood to cross spine1")
        prog.repoint_eline("a-line", direct)
        assert label_pkts(lab, "spine1", old_spine_label) is None  # old path removed
        _wait_for(lambda: port_stats(lab, "leaf1", "fab2").get("tx_pkts", 0) > direct_tx + 200,
                  "the ping flood to use the direct link")
        prog.repoint_eline("a-line", via_spine)
        out, err = flood.communicate(timeout=60)
    finally:
        if flood.poll() is None:
            flood.kill()
            flood.wait()
    r = parse_ping(out + err)
    assert r.sent == 2000 and r.lost == 0, r.output
    new = prog.services["a-line"].lsps[("leaf1", "leaf2")]
    assert [h.peer for h in new.hops] == ["spine1", "leaf2"]
    assert label_pkts(lab, "spine1", new.transit[0][1]) > 0


def _wait_for(cond, what, timeout=20):
    """Safety net for a condition that is expected to become true."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


# ---- wire format ---------------------------------------------------------------------------


def test_fabric_frames_dissect_as_mpls_ethernet_pseudowire(lab, prog, tmp_path):
    """Frames of a-line on both hops (leaf1->spine1->leaf2): tshark decodes MPLS, the
    RFC 4385 control word and the customer's Ethernet frame (untagged: raw
    mode); the spine wrote the egress leaf's label and decremented the TTL."""
    lsp = prog.services["a-line"].lsps[("leaf1", "leaf2")]
    assert [h.peer for h in lsp.hops] == ["spine1", "leaf2"]
    # Captured where each hop is received: af_packet transmits with qdisc
    # bypass, which a capture on the sending interface does not see.
    caps = [Capture(lab.ns(h.peer), h.peer_port, tmp_path / f"{i}.pcap", "mpls").start()
            for i, h in enumerate(lsp.hops)]
    try:
        assert ping(lab, "a1", A2_LINE, count=5, interval=0.05).ok
    finally:
        paths = [c.stop() for c in caps]
    fields = ["frame.protocols", "eth.src", "eth.dst", "mpls.label", "mpls.bottom", "mpls.ttl", "ip.src", "ip.dst"]
    seen = []
    for hop, p in zip(lsp.hops, paths):
        rows = [r for r in tshark_fields(p, fields, "icmp.type == 8") if r["ip.dst"] == A2_LINE]
        assert len(rows) >= 5, rows
        for r in rows:
            assert r["frame.protocols"].startswith("eth:ethertype:mpls:pwethheuristic:pwethcw:eth:ethertype:ip:icmp"), r
            outer_src, inner_src = r["eth.src"].split(",")
            outer_dst, inner_dst = r["eth.dst"].split(",")
            assert (outer_src, outer_dst) == (lab.topo.fabric_mac(hop.node, hop.port),
                                             lab.topo.fabric_mac(hop.peer, hop.peer_port))
            assert (inner_src, inner_dst) == ("02:00:0a:0a:00:01", "02:00:0a:0a:00:02")
            assert r["mpls.bottom"] == "1"
        seen.append(rows)
    assert {int(r["mpls.label"]) for r in seen[0]} == {lsp.labels[0]}
    assert {int(r["mpls.label"]) for r in seen[1]} == {lsp.labels[1]}
    assert {int(r["mpls.ttl"]) for r in seen[1]} == {int(r["mpls.ttl"]) - 1 for r in seen[0]}


# ---- failures ------------------------------------------------------------------------------


def test_link_down_breaks_the_path_and_repointing_restores_it(lab, prog):
    via_spine, direct = ["leaf1", "spine1", "leaf2"], ["leaf1", "leaf2"]
    ping_until(lab, "a1", A2_LINE)
    lab.link_down("leaf1", "spine1")
    try:
        r = ping(lab, "a1", A2_LINE, count=3, interval=0.1, wait_s=1)
        assert r.received == 0, r.output
        prog.repoint_eline("a-line", direct)
        r = ping(lab, "a1", A2_LINE, count=5, interval=0.05)
        assert r.ok, r.output
    finally:
        lab.link_up("leaf1", "spine1")
        prog.repoint_eline("a-line", via_spine)
    ping_until(lab, "a1", A2_LINE)
    assert ping(lab, "a1", A2_LINE, count=5, interval=0.05).ok


def test_restarted_datapath_restored_from_its_snapshot(lab):
    """Kill spine1's datapath: transit traffic stops; a new process loaded
    with the old one's config_dump carries it again."""
    c = lab.client("spine1")
    snapshot, boot = c.call("config_dump"), c.call("system_info")["boot_id"]
    lab.stop("spine1")
    assert ping(lab, "a1", A2_LINE, count=2, interval=0.1, wait_s=1).received == 0
    lab.start("spine1", ports=False)  # the snapshot has the ports
    c = lab.client("spine1")
    assert c.call("system_info")["boot_id"] != boot
    c.call("config_load", snapshot)
    assert c.call("config_dump") == snapshot
    ping_until(lab, "a1", A2_LINE)
    r = ping(lab, "a1", A2_LINE, count=5, interval=0.05)
    assert r.ok, r.output
