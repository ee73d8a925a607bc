"""A customer site on two leaves (examples/demo.yaml: h6, whose eth0 is a
Linux bridge over uplinks to leaf2 and leaf3, segment site1) in an E-LAN
with h7 on leaf1 (docs/multihoming.md): a broadcast into the site arrives
once, through the designated forwarder; the site's broadcasts reach h7
once and never come back into it; unicast toward the site is spread over
both leaves, flow by flow, and both leaves know the site's MACs as local;
and when the DF's leaf hangs, the other leaf takes the site's BUM."""
import json
import os
import re
import signal
import time
from pathlib import Path

import pytest

from cplib import alloc, clean_ping, ensure_service, first_contact, label_pkts
from lab.traffic import iperf3
from lab.control import wait_for
from lab.traffic import Capture, tshark_fields

STREAM = str(Path(__file__).resolve().parents[1] / "lab" / "udpstream.py")
VIOLET = ("violet", "elan", ["leaf1:cust3:untagged", "@site1:untagged"])
H6, H7 = "10.60.0.6", "10.60.0.7"
H6_MAC = "02:00:0a:3c:00:06"
H7_MAC = "02:00:0a:3c:00:07"
H8_MAC = "02:00:0a:3c:00:08"   # a second host of the site, behind h6's bridge
BCAST = "10.60.0.255"
UPLINK = {"leaf2": "up0", "leaf3": "up1"}   # h6's uplink to each leaf
N = 20


@pytest.fixture
def violet(cp, lab):
    ensure_service(cp, *VIOLET)
    cp.wait_converged()
    first_contact(lab, "h7", H6)
    return cp


def designated_forwarder(cp):
    """The leaf whose circuit on site1 takes BUM from the fabric."""
    svc = cp.service("violet")
    leaves = [c["node"] for c in svc["circuits"] if c.get("segment") == "site1"]
    assert sorted(leaves) == ["leaf2", "leaf3"], svc["circuits"]
    dfs = [n for n in leaves if not any(c.get("non_df") for c in circuit_confs(cp.lab, n, "cust3"))]
    assert len(dfs) == 1, f"designated forwarders {dfs}"
    return dfs[0]


def circuit_confs(lab, node, port):
    return [c for c in lab.client(node).call("config_dump")["circuits"] if c["port"] == port]


def broadcasts(lab, sender, port, tmp_path, tag):
    """Send N UDP broadcasts from sender; count the copies that came in on
    each of h6's uplinks (any source) and at h7."""
    caps = {up: Capture(lab.ns("h6"), up, tmp_path / f"{tag}-{up}.pcap", bpf=f"udp port {port}")
            for up in UPLINK.values()}
    caps["h7"] = Capture(lab.ns("h7"), "eth0", tmp_path / f"{tag}-h7.pcap", bpf=f"udp port {port}")
    for c in caps.values():
        c.start()
    try:
        lab.host_exec(sender, ["python3", STREAM, "send", "--dst", BCAST, "--port", str(port), "--rate", "100",
                               "--seconds", str(N / 100), "--broadcast"], timeout=60)
    finally:
        for c in caps.values():
            c.stop()
    out = {}
    for name, c in caps.items():
        frames = tshark_fields(c.path, ["eth.src"])
        # tcpdump sees both directions: count what came in (not from h6 out of an uplink).
        out[name] = [f["eth.src"] for f in frames if not (name.startswith("up") and f["eth.src"] == H6_MAC)]
        out[name + "_own"] = [f["eth.src"] for f in frames if f["eth.src"] == H6_MAC]
    return out


def test_broadcast_into_the_site_arrives_once_through_the_df(violet, lab, tmp_path):
    cp = violet
    df = designated_forwarder(cp)
    got = broadcasts(lab, "h7", 6007, tmp_path, "into")
    assert len(got[UPLINK[df]]) == N, got
    other = ({"leaf2", "leaf3"} - {df}).pop()
    assert got[UPLINK[other]] == [], f"{other} (not the DF) delivered BUM into the site: {got}"
    filtered = lab.client(other).call("service_list")
    assert any(s["stats"]["bum_filtered"] > 0 for s in filtered), filtered


def test_the_sites_broadcasts_reach_h7_once_and_never_come_back(violet, lab, tmp_path):
    """The bridge sends its broadcasts up both uplinks (it has no LAG): the
    DF takes them, the other leaf drops its copy (not_df), and the DF's
    flood reaches the other leaf, which keeps it out of the site (the
    site's own frames): once at h7, nothing back, no loop."""
    cp = violet
    other = ({"leaf2", "leaf3"} - {designated_forwarder(cp)}).pop()
    before = lab.client(other).call("stats_get")["drops"].get("not_df", 0)
    got = broadcasts(lab, "h6", 6008, tmp_path, "from")
    came_back = [f for up in UPLINK.values() for f in got[up]]
    assert came_back == [], f"the site's own broadcasts came back in: {came_back}"
    assert all(len(got[up + "_own"]) == N for up in UPLINK.values()), got
    assert len(got["h7"]) == N, got
    assert lab.client(other).call("stats_get")["drops"].get("not_df", 0) >= before + N
    clean_ping(lab, "h7", H6, count=5)


def test_ping_and_iperf3_from_the_site_without_duplicates(violet, lab):
    p = lab.host_exec("h6", ["ping", "-n", "-c", "20", "-i", "0.05", "-w", "15", H7], check=False, timeout=60)
    assert "DUP!" not in p.stdout and " 0% packet loss" in p.stdout, p.stdout
    r = iperf3(lab, "h6", "h7", H7, seconds=3)
    assert 0 < r.received_bytes <= r.sent_bytes


def test_a_second_host_of_the_site_reaches_h7_once(violet, lab, tmp_path):
    """h8 hangs off the site's bridge (a LAN port, not an uplink): its
    pings have no duplicates, its broadcasts reach h7 once and do not come
    back into the site."""
    first_contact(lab, "h8", H7)
    p = lab.host_exec("h8", ["ping", "-n", "-c", "20", "-i", "0.05", "-w", "15", H7], check=False, timeout=60)
    assert "DUP!" not in p.stdout and " 0% packet loss" in p.stdout, p.stdout
    got = broadcasts(lab, "h8", 6011, tmp_path, "h8")
    assert len(got["h7"]) == N, got
    # Out of each uplink once (the bridge floods), and never back in.
    assert all(got[up].count(H8_MAC) == N and len(got[up]) == N for up in UPLINK.values()), got


def test_unicast_toward_the_site_takes_both_leaves_flow_by_flow(violet, lab, tmp_path):
    """leaf1 learned h6's MAC against the site's source id, an ECMP group
    over its paths to leaf2 and leaf3: 16 flows from h7 spread over both
    (the leaves' labels for frames from leaf1 count them), none reordered."""
    svc = violet.service("violet")
    labels = {n: alloc(svc, n, "label", "elan-uc<leaf1") for n in UPLINK}
    before = {n: label_pkts(lab, n, l) for n, l in labels.items()}
    out = tmp_path / "flows.json"
    rx = lab.host_popen("h6", ["python3", STREAM, "recv", "--port", "6010", "--seconds", "4", "--out", str(out),
                               "--by-flow", "--late-ms", "60000"])
    time.sleep(0.5)
    try:
        lab.host_exec("h7", ["python3", STREAM, "send", "--dst", H6, "--port", "6010", "--flows", "16",
                             "--rate", "1600", "--seconds", "1"], timeout=60)
    finally:
        rx.wait(30)
    flows = json.loads(out.read_text())["flows"]
    assert len(flows) == 16, flows
    assert all(f["received"] > 0 and f["reordered"] == 0 and f["duplicates"] == 0 for f in flows.values()), flows
    after = {n: label_pkts(lab, n, l) for n, l in labels.items()}
    assert all(after[n] - before[n] >= 100 for n in labels), (before, after)


def test_both_leaves_know_the_sites_mac_as_local(violet, lab):
    """Frames from the site carry the segment label, so the leaf the
    frame did not enter learns its MAC on its own circuit of the site, and
    leaf1 learns it against the site's source id."""
    clean_ping(lab, "h6", H7, count=3)
    site = violet.service("violet")["route"]["sites"]["site1"]
    def where(node):
        (m,) = [m for m in lab.client(node).call("mac_list") if m["mac"] == H6_MAC] or [{}]
        return m
    for n in UPLINK:
        (c,) = circuit_confs(lab, n, "cust3")
        wait_for(f"{n} knows h6 on its site circuit", lambda: where(n).get("circuit") == c["id"], timeout=10)
    assert where("leaf1").get("source") == site["source"], where("leaf1")


def test_hung_df_hands_the_site_to_the_other_leaf(violet, lab, tmp_path):
    """The DF's leaf hangs (carrier stays up) under traffic both ways: h7's
    flows toward the site leave it as leaf1's path checks to it fail, the
    other leaf becomes the DF and announces h7's MAC into the site, and
    both streams' tails arrive; BUM reaches the site through the new DF."""
    cp = violet
    df = designated_forwarder(cp)
    other = ({"leaf2", "leaf3"} - {df}).pop()
    pid = lab.pid(df)
    try:
        reports, rarps = site_streams(lab, tmp_path, lambda: os.kill(pid, signal.SIGSTOP), "hang")
        assert_tail_arrived(reports)
        assert H7_MAC in rarps[UPLINK[other]], rarps
        wait_for(f"{other} is the site's DF", lambda: not any(
            c.get("non_df") for c in circuit_confs(lab, other, "cust3")), timeout=30)
        got = broadcasts(lab, "h7", 6009, tmp_path, "failover")
        assert len(got[UPLINK[other]]) == N, got
    finally:
        os.kill(pid, signal.SIGCONT)
    wait_for("the site reached through both leaves again", lambda: site_leaves(cp) == ["leaf2", "leaf3"],
             timeout=60)
    cp.wait_converged()


RATE, SECONDS, FAULT_AT = 500, 8, 2.0


def site_streams(lab, tmp_path, fault, tag):
    """SECONDS of datagrams each way between h7 and the site, fault() at
    FAULT_AT; returns both receivers' reports and the RARP frames each of
    h6's uplinks brought in."""
    caps = {up: Capture(lab.ns("h6"), up, tmp_path / f"{tag}-{up}.pcap", bpf="rarp") for up in UPLINK.values()}
    for c in caps.values():
        c.start()
    rx, tx = [], []
    try:
        for dst, src, ip, port in (("h6", "h7", H6, 6020), ("h7", "h6", H7, 6021)):
            out = tmp_path / f"{tag}-{dst}.json"
            rx.append((dst, out, lab.host_popen(dst, ["python3", STREAM, "recv", "--port", str(port), "--seconds",
                                                      str(SECONDS + 3), "--out", str(out), "--sent",
                                                      str(RATE * SECONDS), "--rate", str(RATE), "--late-ms",
                                                      "60000"])))
        time.sleep(0.5)
        for dst, src, ip, port in (("h6", "h7", H6, 6020), ("h7", "h6", H7, 6021)):
            tx.append(lab.host_popen(src, ["python3", STREAM, "send", "--dst", ip, "--port", str(port),
                                           "--rate", str(RATE), "--seconds", str(SECONDS)]))
        time.sleep(FAULT_AT)
        fault()
    finally:
        for p in tx:
            p.wait(SECONDS + 30)
        for _, _, p in rx:
            p.wait(SECONDS + 30)
        for c in caps.values():
            c.stop()
    reports = {dst: json.loads(out.read_text()) for dst, out, _ in rx}
    rarps = {up: [f["eth.src"] for f in tshark_fields(c.path, ["eth.src"])] for up, c in caps.items()}
    return reports, rarps


def assert_tail_arrived(reports):
    sent = RATE * SECONDS
    for dst, r in reports.items():
        late = [m for m in r["missing"] if m[1] >= sent - 2 * RATE]
        assert not late, f"to {dst}: datagrams lost in the last 2 s: {late} ({r})"
        assert r["duplicates"] == 0, (dst, r)


def site_leaves(cp):
    return cp.service("violet")["route"]["sites"]["site1"].get("leaves", [])


@pytest.mark.parametrize("leaf", ["leaf2", "leaf3"])
def test_an_uplink_down_keeps_the_site_reachable_and_announces(violet, lab, tmp_path, leaf):
    """The site's uplink to `leaf` goes down under traffic both ways: the
    controller hands the site to the other leaf (DF, aliasing), which
    announces h7's MAC into the site so that its bridge sends to h7 over
    the link that works; the streams' tails arrive whole."""
    cp = violet
    up = UPLINK[leaf]
    other = ({"leaf2", "leaf3"} - {leaf}).pop()
    try:
        reports, rarps = site_streams(lab, tmp_path, lambda: lab.host_exec("h6", ["ip", "link", "set", up, "down"]),
                                      f"uplink-{leaf}")
        assert_tail_arrived(reports)
        assert site_leaves(cp) == [other]
        assert H7_MAC in rarps[UPLINK[other]], rarps
    finally:
        lab.host_exec("h6", ["ip", "link", "set", up, "up"])
        wait_for("the site reached through both leaves again", lambda: site_leaves(cp) == ["leaf2", "leaf3"],
                 timeout=30)
        cp.wait_converged()
    # Back: both ways, through both leaves.
    first_contact(lab, "h7", H6)
    clean_ping(lab, "h7", H6, count=10)
    clean_ping(lab, "h6", H7, count=10)


INDIGO = ("indigo", "eline", ["leaf1:cust3:untagged", "@site1:untagged"])


@pytest.fixture
def indigo(cp, lab):
    """An E-Line h7 <-> the site, on violet's circuits (violet goes)."""
    if "violet" in {s["name"] for s in cp.services()}:
        cp.e3ctl("service", "delete", "violet")
    ensure_service(cp, *INDIGO)
    cp.wait_converged()
    first_contact(lab, "h7", H6)
    yield cp
    cp.e3ctl("service", "delete", "indigo")
    cp.wait_converged()


def test_an_eline_to_the_site_is_active_standby(indigo, lab, tmp_path):
    """The site floods (no LAG): the E-Line's DF leaf forwards, the other
    drops the site's frames (not_df) and h7's go to the DF only, so every
    frame arrives once either way; `service show` says so."""
    cp = indigo
    svc = cp.service("indigo")
    df = svc["designated_forwarders"]["site1"]
    other = ({"leaf2", "leaf3"} - {df}).pop()
    text = cp.e3ctl("service", "show", "indigo").stdout
    assert re.search(r"^site\s+site1: active-standby", text, re.M), text
    p = lab.host_exec("h6", ["ping", "-n", "-c", "20", "-i", "0.05", "-w", "15", H7], check=False, timeout=60)
    assert "DUP!" not in p.stdout and " 0% packet loss" in p.stdout, p.stdout
    got = broadcasts(lab, "h7", 6030, tmp_path, "eline-into")
    assert len(got[UPLINK[df]]) == N and got[UPLINK[other]] == [], got
    before = lab.client(other).call("stats_get")["drops"].get("not_df", 0)
    got = broadcasts(lab, "h6", 6031, tmp_path, "eline-from")
    assert len(got["h7"]) == N, got
    assert lab.client(other).call("stats_get")["drops"].get("not_df", 0) >= before + N


def test_an_eline_to_the_site_survives_its_df_hanging(indigo, lab, tmp_path):
    """h7's leaf moves the E-Line to the other leaf when its check of the
    DF's leg fails; the controller then makes that leaf the DF, and both
    streams' tails arrive."""
    cp = indigo
    df = cp.service("indigo")["designated_forwarders"]["site1"]
    pid = lab.pid(df)
    try:
        reports, _ = site_streams(lab, tmp_path, lambda: os.kill(pid, signal.SIGSTOP), "eline-hang")
        assert_tail_arrived(reports)
    finally:
        os.kill(pid, signal.SIGCONT)
    wait_for("the site reached through both leaves again", lambda: (
        cp.service("indigo")["route"]["sites"]["site1"].get("leaves") == ["leaf2", "leaf3"]), timeout=60)
    cp.wait_converged()
