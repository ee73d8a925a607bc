"""Pseudowire ping and trace through the control plane (e3ctl service ping
and trace): MPLS echo in each service's pseudowire from one end, answered
in-band by every other end; a trace names the spine `service show` names,
with the labels the controller allocated; and no OAM frame ever reaches a
customer host (tcpdump on every host of the services sees none)."""
import json
import signal
import struct
import subprocess
import time

from cplib import RED_H2, alloc
from lab.control import ControlPlane
from lab.traffic import ping as host_ping

HOSTS = ("h1", "h2", "h3")


class Capture:
    """tcpdump on every interface of the given hosts, as pcap files. In
    immediate mode: with TPACKET_V3's blocks, a capture stopped before its
    block timed out can write none of what it saw."""

    def __init__(self, lab, tmp_path, hosts):
        self.files = {h: tmp_path / f"{h}.pcap" for h in hosts}
        self.procs = [subprocess.Popen(["ip", "netns", "exec", lab.ns(h), "tcpdump", "-i", "any", "--immediate-mode", "-U", "-s", "256",
                                        "-w", str(f)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                      for h, f in self.files.items()]
        time.sleep(1)   # tcpdump is listening

    def stop(self):
        time.sleep(0.5)
        for p in self.procs:
            p.send_signal(signal.SIGINT)
            p.wait(timeout=10)

    def frames(self):
        from scapy.utils import rdpcap
        return {h: [bytes(p) for p in rdpcap(str(f))] for h, f in self.files.items()}


def ping(cp, name, *opts):
    return json.loads(cp.e3ctl("--json", "service", "ping", name, *opts).stdout)


def test_ping_and_trace_never_reach_customers(services, lab, tmp_path):
    cp = services
    cap = Capture(lab, tmp_path, HOSTS)
    try:
        red = ping(cp, "red")
        green = ping(cp, "green", "--count", "2")
        trace = json.loads(cp.e3ctl("--json", "service", "trace", "red").stdout)
        text = cp.e3ctl("service", "ping", "red", "--count", "1").stdout
        seen = host_ping(lab, "h1", RED_H2, count=2)   # customer traffic, which the captures must see
    finally:
        cap.stop()

    assert (red["from"], red["sent"], red["received"]) == ("leaf1", 3, 3), red
    assert {r["to"] for r in red["replies"]} == {"leaf2"} and all(r["rtt_ms"] > 0 for r in red["replies"])
    assert green["sent"] == green["received"] == 4, green
    assert sorted(r["to"] for r in green["replies"]) == ["leaf2", "leaf2", "leaf3", "leaf3"]
    assert "1 sent, 1 received" in text, text

    # The trace: the spine `service show` names, then the egress, with the
    # labels the controller allocated for the active path.
    svc = cp.service("red")
    active = ControlPlane.active_path(svc)
    assert ControlPlane.path_nodes(active)[1] in cp.e3ctl("service", "show", "red").stdout
    (t,) = trace
    # The trace takes the path the datapath uses: the active one, or its
    # hot-standby backup while a check that a stall of the host took down
    # waits out wait-to-restore.
    route = svc["route"]
    path = next((p for p in (active, route.get("backup") or []) if p and p[0]["to"] == t["hops"][0]["node"]),
                active)
    nodes = ControlPlane.path_nodes(path)
    assert (t["from"], t["to"]) == ("leaf1", "leaf2") and t["rtt_ms"] > 0
    assert [(h["ttl"], h["node"], h["kind"]) for h in t["hops"]] == [(1, nodes[1], "transit"), (2, "leaf2", "egress")]
    links = ".".join(str(h["link"]) for h in path)
    spine_label = alloc(svc, nodes[1], "label", f"eline:leaf1>leaf2:{links}")
    assert t["hops"][0]["label_in"] == spine_label
    assert t["hops"][1]["label_in"] == t["hops"][0]["label_out"] == alloc(svc, "leaf2", "label", "eline-term<leaf1")

    # Not one OAM frame at a host: none carries a handle or an ACH.
    handles = [struct.pack("!I", x["handle"]) for x in (red, green)]
    captured = cap.frames()
    assert seen.received == 2 and len(captured["h2"]) >= 4, "the captures see the customer's traffic"
    for host, frames in captured.items():
        for f in frames:
            assert not any(h in f for h in handles) and b"\x10\x00\x00\x25" not in f, \
                f"an OAM frame reached {host}: {f.hex()}"


def test_refused(cp):
    for args, msg in ((["service", "ping", "nosuch"], "not found"),
                      (["service", "ping", "red", "--count", "11"], "count"),
                      (["service", "trace", "nosuch"], "not found")):
        p = cp.e3ctl(*args, check=False)
        assert p.returncode != 0 and msg in p.stderr, (args, p.stderr)
