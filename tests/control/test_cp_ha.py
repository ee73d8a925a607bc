"""High availability on examples/demo.yaml (docs/ha.md): failures found
in-band by BFD on every fabric adjacency and by path checks (BFD over each
protected path's LSPs), and repaired by the datapaths themselves, with the
controller stopped; the controller's global repair
afterwards; wait-to-restore against a flapping link; a dead agent that is
not a dead node; a restarted controller that relabels nothing.

Traffic is a one-way, sequence-numbered UDP stream (tests/lab/udpstream.py):
a test asserts that the stream's tail arrived whole after the fault, i.e.
that the repair happened, never how long it took (that is
bench/failover.py's job)."""
import json
import os
import signal
import time

import pytest

from cplib import GREEN, GREEN_IPS, RED, RED_H2, REPO, clean_ping, first_contact, settled
from lab.control import ControlPlane, wait_for

STREAM = REPO / "tests" / "lab" / "udpstream.py"
RATE, SECONDS, FAULT_AT = 500, 8, 2.0
TAIL = RATE * 2           # the last 2 s of the stream must arrive whole


def stream(lab, tmp_path, fault, src="h1", dst="h2", dst_ip=RED_H2, port=5555):
    """Send SECONDS of datagrams src -> dst, call fault() FAULT_AT seconds
    in, and return the receiver's report."""
    out = tmp_path / f"stream-{dst}-{port}.json"
    sent = RATE * SECONDS
    # Late is not lost here: a test asserts that the tail arrived, not when.
    rx = lab.host_popen(dst, ["python3", str(STREAM), "recv", "--port", str(port), "--seconds",
                              str(SECONDS + 3), "--out", str(out), "--sent", str(sent),
                              "--rate", str(RATE), "--late-ms", "60000"])
    time.sleep(0.5)
    tx = lab.host_popen(src, ["python3", str(STREAM), "send", "--dst", dst_ip, "--port", str(port),
                              "--rate", str(RATE), "--seconds", str(SECONDS)])
    try:
        time.sleep(FAULT_AT)
        fault()
    finally:
        tx.wait(SECONDS + 30)
        rx.wait(SECONDS + 30)
    return json.loads(out.read_text())


def assert_repaired(r):
    sent = RATE * SECONDS
    late = [m for m in r["missing"] if m[1] >= sent - TAIL]
    assert not late, f"datagrams lost in the last {TAIL} of {sent}: {late} ({r})"
    assert r["duplicates"] == 0, r


def repaired_without_controller(lab, cp, tmp_path, fault):
    """Kill the controller (its embedded etcd with it), then stream across
    fault(): the stream's tail must arrive whole, by the datapaths alone."""
    cp.stop_controller(signal.SIGKILL)
    assert_repaired(stream(lab, tmp_path, fault))


def session_to(lab, node, peer):
    """node's BFD session on its link toward peer (not a path check)."""
    port = lab.port_toward(node, peer)
    (s,) = [b for b in lab.client(node).call("bfd_list") if b["port"] == port and "label" not in b]
    return s


def path_checks(lab, node):
    return [b for b in lab.client(node).call("bfd_list") if "label" in b]


def bfd_downs(lab):
    return {n.name: {b["id"]: b["downs"] for b in lab.client(n.name).call("bfd_list")}
            for n in lab.topo.nodes}


def red_spine(cp):
    return ControlPlane.path_nodes(ControlPlane.active_path(cp.service("red")))[1]


def restore(lab, cp):
    """Controller and agents back, everything settled on the primaries."""
    if not cp.controller.running():
        cp.start_controller()
    for node, agent in cp.agents.items():
        if not agent.running():
            cp.start_agent(node)
    settled(lab, cp)


@pytest.fixture
def ha(lab, services, tmp_path):
    settled(lab, services)
    yield services
    restore(lab, services)


def test_spine_hang_is_repaired_locally(lab, ha, tmp_path):
    """SIGSTOP of the active spine (carrier stays up): its neighbours' BFD
    sessions time out and both leaves move red to the backup spine, with
    the controller (and its etcd) gone."""
    spine = red_spine(ha)
    pid = lab.pid(spine)
    try:
        repaired_without_controller(lab, ha, tmp_path, lambda: os.kill(pid, signal.SIGSTOP))
        for leaf in ("leaf1", "leaf2"):
            s = session_to(lab, leaf, spine)
            assert s["state"] == "down" and not s["usable"], s
            assert s["diag"] == "control_detection_time_expired", s
        # Both directions work: the echo goes back over the backup too.
        clean_ping(lab, "h1", RED_H2)
    finally:
        os.kill(pid, signal.SIGCONT)


def test_spine_killed_is_repaired_locally(lab, ha, tmp_path):
    spine = red_spine(ha)
    pid = lab.pid(spine)
    try:
        repaired_without_controller(lab, ha, tmp_path, lambda: os.kill(pid, signal.SIGKILL))
        assert not session_to(lab, "leaf1", spine)["usable"]
        clean_ping(lab, "h1", RED_H2)
    finally:
        lab.stop(spine)
        lab.start(spine, ports=False)   # its agent reprograms it once etcd is back


def test_link_down_is_repaired_locally(lab, ha, tmp_path):
    """leaf1's link to the active spine loses carrier: leaf1 moves h1 -> h2
    to the backup at once, and leaf2, two hops away, moves h2 -> h1 when
    its check of the path through that link fails."""
    spine = red_spine(ha)
    try:
        repaired_without_controller(lab, ha, tmp_path, lambda: lab.link_down("leaf1", spine))
        s = session_to(lab, "leaf1", spine)
        assert s["state"] == "down" and not s["usable"], s
        (port,) = [p for p in lab.client("leaf1").call("port_list") if p["name"] == s["port"]]
        assert port["link"] == "down", port
        assert session_to(lab, "leaf2", spine)["usable"]
        assert any(not b["usable"] and b["port"] == lab.port_toward("leaf2", spine)
                   for b in path_checks(lab, "leaf2")), path_checks(lab, "leaf2")
        clean_ping(lab, "h1", RED_H2)       # the echo replies take leaf2's backup
    finally:
        lab.link_up("leaf1", spine)


def test_lost_transit_entries_are_repaired_locally(lab, ha, tmp_path):
    """The active spine keeps answering BFD on every link but stops
    switching toward leaf2 (its agent gone, nothing puts the entries back).
    No link fails; leaf1's check of the path through the spine does, and
    leaf1 moves h1 -> h2 to the backup by itself, with the controller gone."""
    cp = ha
    spine = red_spine(cp)
    cp.stop_agent(spine, signal.SIGKILL)
    repaired_without_controller(lab, cp, tmp_path, lambda: lab.forget_transit(spine, "leaf2"))
    for leaf in ("leaf1", "leaf2"):
        s = session_to(lab, leaf, spine)
        assert s["state"] == "up" and s["usable"], s
    failed = [b for b in path_checks(lab, "leaf1") if not b["usable"]]
    assert failed and all(b["port"] == lab.port_toward("leaf1", spine) for b in failed), failed


def test_global_repair_follows_and_is_logged(lab, ha, tmp_path):
    """With the controller running, a hung spine is taken out of every
    path and tree (E-LAN BUM works again: h1 resolves h3 by ARP), and the
    event log shows the failure, the datapaths' local repair and the
    controller's repair with what it took."""
    cp = ha
    spine = red_spine(cp)
    pid = lab.pid(spine)
    os.kill(pid, signal.SIGSTOP)
    try:
        wait_for("red moved off the hung spine", lambda: spine not in ControlPlane.path_nodes(
            ControlPlane.active_path(cp.service("red"))), timeout=30)
        green = cp.service("green")
        assert all(spine not in (h["from"], h["to"]) for h in green["route"]["tree"]), green["route"]
        for h in ("h2", "h3"):
            lab.host_exec("h1", ["ip", "neigh", "flush", "all"], check=False)
            first_contact(lab, "h1", GREEN_IPS[h])
            clean_ping(lab, "h1", GREEN_IPS[h], count=5)
        kinds = {(e["kind"], e.get("object", "")) for e in cp.json("events")}
        assert ("node-down", spine) in kinds, kinds
        assert any(k == "local-repair" and o.startswith("leaf1 ") for k, o in kinds), kinds
        repairs = [e for e in cp.json("events") if e["kind"] == "repair"]
        assert repairs and repairs[-1].get("took_ms", 0) > 0, repairs
        assert cp.service("red")["protection"] in ("protected", "on backup")
    finally:
        os.kill(pid, signal.SIGCONT)


def test_flapping_link_does_not_flap_traffic(lab, ha):
    """Three carrier flaps on leaf1's link to the active spine: the
    protection byte goes unusable at the first and comes back only once
    the link has stayed up for the wait-to-restore time."""
    cp = ha
    spine = red_spine(cp)
    seen = []

    def sample():
        s = session_to(lab, "leaf1", spine)
        seen.append((s["state"], s["usable"], s["downs"]))

    downs0 = session_to(lab, "leaf1", spine)["downs"]
    try:
        for _ in range(3):
            lab.link_down("leaf1", spine)
            wait_for("carrier loss seen", lambda: session_to(lab, "leaf1", spine)["state"] == "down",
                     timeout=20)
            for _ in range(3):
                sample()
                time.sleep(0.1)
            lab.link_up("leaf1", spine)
            wait_for("bfd up again", lambda: session_to(lab, "leaf1", spine)["state"] == "up", timeout=20)
            sample()
    finally:
        lab.link_up("leaf1", spine)
    assert session_to(lab, "leaf1", spine)["downs"] == downs0 + 3
    # Up between flaps, but never usable: traffic stayed on the backup.
    assert not any(usable for _, usable, _ in seen), seen
    assert any(state == "up" for state, _, _ in seen), seen
    wait_for("usable after wait-to-restore", lambda: session_to(lab, "leaf1", spine)["usable"], timeout=30)


def test_dead_agent_is_not_a_dead_node(lab, ha):
    """leaf3's agent is killed: its datapath still answers its spines' BFD,
    so the controller keeps leaf3 in green and changes no configuration."""
    cp = ha
    gens = {n["name"]: n["desired_generation"] for n in cp.nodes()}
    cp.stop_agent("leaf3", signal.SIGKILL)
    wait_for("leaf3's agent seen down", lambda: not next(
        n for n in cp.nodes() if n["name"] == "leaf3")["agent_up"], timeout=30)
    leaf3 = next(n for n in cp.nodes() if n["name"] == "leaf3")
    assert leaf3["up"], leaf3
    green = cp.service("green")
    assert not green["route"].get("unreachable"), green["route"]
    assert green["status"]["state"] == "programmed", green["status"]
    assert {n["name"]: n["desired_generation"] for n in cp.nodes()} == gens
    clean_ping(lab, "h1", GREEN_IPS["h3"])
    assert any(e["kind"] == "agent-down" and e.get("object") == "leaf3" for e in cp.json("events"))


def test_restarted_controller_relabels_nothing(lab, ha):
    """Down for 60 s (its embedded etcd with it), then restarted: after its
    grace period it finds every node as it was and changes nothing."""
    cp = ha
    before = {name: cp.service(name)["allocations"] for name in (RED[0], GREEN[0])}
    gens = {n["name"]: n["desired_generation"] for n in cp.nodes()}
    downs0 = bfd_downs(lab)
    cp.stop_controller(signal.SIGKILL)
    time.sleep(60)
    cp.start_controller()
    time.sleep(8)                   # past the grace period: it has acted, if it would
    cp.wait_converged()
    events = cp.json("events")
    diag = {"events": events, "bfd downs before": downs0, "after": bfd_downs(lab)}
    assert {name: cp.service(name)["allocations"] for name in before} == before, diag
    assert {n["name"]: n["desired_generation"] for n in cp.nodes()} == gens, diag
    assert not [e for e in events if e["kind"] == "repair"], diag
