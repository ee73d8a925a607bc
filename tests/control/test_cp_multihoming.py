"""A customer site on two leaves (examples/demo.yaml: h6, whose eth0 is a
Linux bridge over uplinks to leaf2 and leaf3, segment site1) in an E-LAN
with h7 on leaf1 (docs/multihoming.md): a broadcast into the site arrives
once, through the designated forwarder; nothing the site sends comes back
into it through the other leaf; and when the DF's leaf hangs, the other
leaf takes the site's BUM."""
import os
import signal
from pathlib import Path

import pytest

from cplib import clean_ping, ensure_service, first_contact
from lab.control import wait_for
from lab.traffic import Capture, tshark_fields

STREAM = str(Path(__file__).resolve().parents[1] / "lab" / "udpstream.py")
VIOLET = ("violet", "elan", ["leaf1:cust3:untagged", "@site1:untagged"])
H6, H7 = "10.60.0.6", "10.60.0.7"
H6_MAC = "02:00:0a:3c:00:06"
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


def test_nothing_the_site_sends_comes_back_into_it(violet, lab, tmp_path):
    """The bridge sends its broadcasts up both uplinks (it has no LAG); each
    leaf floods its copy through the fabric, and the other leaf, sharing the
    segment, keeps it out of the site (local bias): no loop, nothing back."""
    got = broadcasts(lab, "h6", 6008, tmp_path, "from")
    came_back = [f for up in UPLINK.values() for f in got[up]]
    assert came_back == [], f"the site's own broadcasts came back in: {came_back}"
    # Each uplink carried the site's N out; h7 got them (twice each: one
    # per leaf, since the bridge is no LAG).
    assert all(len(got[up + "_own"]) == N for up in UPLINK.values()), got
    assert len(got["h7"]) >= N, got
    clean_ping(lab, "h7", H6, count=5)


def test_hung_df_hands_the_site_to_the_other_leaf(violet, lab, tmp_path):
    cp = violet
    df = designated_forwarder(cp)
    other = ({"leaf2", "leaf3"} - {df}).pop()
    pid = lab.pid(df)
    os.kill(pid, signal.SIGSTOP)
    try:
        wait_for(f"{other} is the site's DF", lambda: not any(
            c.get("non_df") for c in circuit_confs(lab, other, "cust3")), timeout=30)
        got = broadcasts(lab, "h7", 6009, tmp_path, "failover")
        assert len(got[UPLINK[other]]) == N, got
    finally:
        os.kill(pid, signal.SIGCONT)
    cp.wait_converged()
