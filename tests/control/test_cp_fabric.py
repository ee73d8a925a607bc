"""The whole system on examples/demo.yaml: services made with e3ctl carry
ping and iperf3, a failed fabric link moves them, and killed controller,
agent and datapath processes come back without operator action.

The tests run in file order and share one fabric: the destructive ones come
last and leave the fabric as they found it.
"""
import json
import os
import re
import signal
import urllib.request

import pytest

from cplib import (BLUE, BLUE_H5, GREEN_IPS, RED_H2, alloc, clean_ping, ensure_service, finish_flood,
                   first_contact, label_pkts, settled, start_flood, summary, unanswered)
from lab.control import ControlPlane, wait_for
from lab.traffic import iperf3, ping

FLOOD = 1000  # echoes at 100/s: 10 s of traffic across each restart


def test_eline_carries_ping_and_iperf3(lab, services):
    clean_ping(lab, "h1", RED_H2)
    r = iperf3(lab, "h1", "h2", RED_H2, seconds=3)
    assert 0 < r.received_bytes <= r.sent_bytes


def test_eline_follows_the_path_service_show_reports(lab, services):
    """The transit node of the active path counts the E-Line's frames under
    the label the controller allocated, and `e3ctl service show` says so."""
    svc = services.service("red")
    path = ControlPlane.path_nodes(ControlPlane.active_path(svc))
    assert path[0] == "leaf1" and path[-1] == "leaf2" and len(path) == 3, path
    spine = path[1]
    links = ".".join(str(h["link"]) for h in ControlPlane.active_path(svc))
    label = alloc(svc, spine, "label", f"eline:leaf1>leaf2:{links}")
    before = label_pkts(lab, spine, label)
    clean_ping(lab, "h1", RED_H2, count=5)
    assert label_pkts(lab, spine, label) >= before + 5
    text = services.e3ctl("service", "show", "red").stdout
    assert f"leaf1 -> {spine} -> leaf2  (active)" in text, text
    assert re.search(rf"^{spine}\s+label\s+{label}\s+eline:leaf1>leaf2:{links}$", text, re.M), text


def test_elan_every_pair_pings_and_carries_iperf3(lab, services):
    hosts = sorted(GREEN_IPS)
    for a in hosts:
        for b in hosts:
            if a != b:
                first_contact(lab, a, GREEN_IPS[b])
                clean_ping(lab, a, GREEN_IPS[b], count=5)
    r = iperf3(lab, "h1", "h3", GREEN_IPS["h3"], seconds=3)
    assert 0 < r.received_bytes <= r.sent_bytes


def test_untagged_port_to_vlan_eline(lab, cp):
    """An E-Line created (and deleted) while the others run: h4's whole
    port to h5's VLAN 40."""
    ensure_service(cp, *BLUE)
    try:
        first_contact(lab, "h4", BLUE_H5)
        clean_ping(lab, "h4", BLUE_H5)
    finally:
        cp.e3ctl("service", "delete", "blue")
    cp.wait_converged()
    assert "blue" not in {s["name"] for s in cp.services()}
    # The agents removed its circuits from the datapaths.
    assert not [c for c in lab.client("leaf1").call("circuit_list") if c["port"] == "cust2"]
    assert not ping(lab, "h4", BLUE_H5, count=2).received


def test_link_down_moves_services_and_traffic_resumes(lab, services):
    cp = services
    svc = cp.service("red")
    first = ControlPlane.active_path(svc)[0]
    a, b = first["from"], first["to"]
    lab.link_down(a, b)
    try:
        moved = wait_for(f"red off the failed link {a}-{b}", lambda: (lambda s: s if all(
            h["link"] != first["link"] for h in ControlPlane.active_path(s)) else None)(cp.service("red")))
        new_path = ControlPlane.path_nodes(ControlPlane.active_path(moved))
        assert new_path[0] == "leaf1" and new_path[-1] == "leaf2" and b not in new_path, new_path
        text = cp.e3ctl("service", "show", "red").stdout
        assert " -> ".join(new_path) + "  (active)" in text, text
        first_contact(lab, "h1", RED_H2)
        clean_ping(lab, "h1", RED_H2)
        # The E-LAN is rebuilt around the failed link too.
        cp.wait_service("green")
        for h in ("h2", "h3"):
            first_contact(lab, "h1", GREEN_IPS[h])
            clean_ping(lab, "h1", GREEN_IPS[h], count=5)
        # The new transit node really carries it.
        links = ".".join(str(h["link"]) for h in ControlPlane.active_path(moved))
        label = alloc(moved, new_path[1], "label", f"eline:leaf1>leaf2:{links}")
        before = label_pkts(lab, new_path[1], label)
        clean_ping(lab, "h1", RED_H2, count=5)
        assert label_pkts(lab, new_path[1], label) >= before + 5
    finally:
        lab.link_up(a, b)
    # Repaired: red goes back to its primary path, and still works.
    wait_for("red back on its primary path", lambda: cp.service("red")["route"]["active"] == "primary")
    cp.wait_converged()
    first_contact(lab, "h1", RED_H2)
    clean_ping(lab, "h1", RED_H2)


def test_controller_killed_and_restarted_loses_no_frame(lab, services):
    cp = services
    labels_before = cp.service("red")["allocations"]
    flood = start_flood(lab, "h1", RED_H2, FLOOD)
    try:
        cp.stop_controller(signal.SIGKILL)
        assert flood.poll() is None, "the flood ended early"
        cp.start_controller()
    finally:
        out = finish_flood(flood)
    assert not unanswered(out, FLOOD), f"echoes lost: {unanswered(out, FLOOD)}\n{summary(out)}"
    cp.wait_converged()
    # The new controller took over the stored labels; nothing moved.
    assert cp.service("red")["allocations"] == labels_before
    assert cp.wait_service("red")["status"]["state"] == "programmed"


def test_agent_killed_and_restarted_loses_no_frame(lab, services):
    cp = services
    agent = cp.agents["leaf1"]
    flood = start_flood(lab, "h1", RED_H2, FLOOD)
    try:
        cp.stop_agent("leaf1", signal.SIGKILL)
        log_size = agent.log_file.stat().st_size
        cp.start_agent("leaf1")
        cp.wait_converged()
    finally:
        out = finish_flood(flood)
    assert not unanswered(out, FLOOD), f"echoes lost: {unanswered(out, FLOOD)}\n{summary(out)}"
    # The new agent found the datapath converged: it read it and changed nothing.
    new_log = agent.log_file.read_text(errors="replace")[log_size:]
    assert "applying desired state" not in new_log, new_log


def test_datapath_killed_and_restarted_is_reprogrammed(lab, services):
    """SIGKILL of the transit datapath on red's active path; a new process
    (as a supervisor would start it) gets ports, labels and services from
    its agent, and traffic flows again."""
    cp = services
    spine = ControlPlane.path_nodes(ControlPlane.active_path(cp.service("red")))[1]
    old = lab.pid(spine)
    os.kill(old, signal.SIGKILL)
    lab.stop(spine)  # reap it, remove its socket
    lab.start(spine, ports=False)
    assert lab.pid(spine) != old
    first_contact(lab, "h1", RED_H2)
    clean_ping(lab, "h1", RED_H2)
    cp.wait_converged()
    assert {p["name"] for p in lab.client(spine).call("port_list")} == set(lab.topo.ports[spine])
    # The killed spine's sessions wait out wait-to-restore, after which the
    # controller moves traffic back: the next test must not see that move,
    # nor this one's echoes the controller's repairs meanwhile.
    settled(lab, cp)
    for h in ("h2", "h3"):
        first_contact(lab, "h1", GREEN_IPS[h])
        clean_ping(lab, "h1", GREEN_IPS[h], count=5)


def macs(lab, node):
    """A node's learned MACs: (service, MAC, where), ages left out."""
    return {(m["service"], m["mac"], m.get("circuit", m.get("source"))) for m in lab.client(node).call("mac_list")}


@pytest.mark.parametrize("how", ["checkpoint", "handover"])
def test_datapath_warm_restarted_resumes_and_its_agent_changes_nothing(lab, services, how):
    """SIGUSR2 to the customers' leaf (the next process resumes from the
    checkpoint), or SIGHUP (a new process takes the node over from the
    running one): it keeps its MACs, its neighbours' BFD sessions never go
    down (none counts a new down), nothing is relabelled, and its agent,
    finding the datapath restarted, dumps it and has nothing to change."""
    cp = services
    settled(lab, cp)  # nothing of an earlier fault still to restore
    node = "leaf1"
    agent = cp.agents[node]
    labels = {s: cp.service(s)["allocations"] for s in ("red", "green")}
    learned = macs(lab, node)
    assert learned, "green learned no MAC on leaf1"
    downs = {n: {b["id"]: b["downs"] for b in lab.client(n).call("bfd_list")}
             for n in ("spine1", "spine2", "leaf2", "leaf3")}
    boot = lab.client(node).call("system_info")["boot_id"]
    log_size = agent.log_file.stat().st_size
    controller_log = cp.replicas[0].proc.log_file
    controller_log_size = controller_log.stat().st_size

    if how == "checkpoint":
        lab.warm_restart(node)
    else:
        lab.handover(node)

    new_boot = lab.client(node).call("system_info")["boot_id"]
    assert new_boot != boot
    assert "BFD sessions Up" in lab.log_tail(node, 10), lab.log_tail(node)
    wait_for("the agent's pass over the restarted datapath",
             lambda: "datapath restarted" in agent.log_file.read_text(errors="replace")[log_size:] and
             next(n for n in cp.nodes() if n["name"] == node).get("boot_id") == new_boot)
    cp.wait_converged()
    new_log = agent.log_file.read_text(errors="replace")[log_size:]
    # Any pass that changed something came from a new desired state: the
    # controller's events say what made it.
    events = [line for line in controller_log.read_text(errors="replace")[controller_log_size:].splitlines()
              if "msg=event" in line or "msg=recomputing" in line]
    assert "applying desired state" not in new_log, new_log + "\n".join(events)
    assert macs(lab, node) == learned
    for n, before in downs.items():
        after = {b["id"]: b["downs"] for b in lab.client(n).call("bfd_list")}
        assert {k: after.get(k) for k in before} == before, f"{n}: a session toward {node} went down"
    assert {s: cp.service(s)["allocations"] for s in labels} == labels
    clean_ping(lab, "h1", RED_H2)
    for h in ("h2", "h3"):
        clean_ping(lab, "h1", GREEN_IPS[h], count=5)


def test_spine_warm_restarted_undrained_moves_its_paths_first(lab, services):
    """SIGUSR2 to the spine under red's active path, not drained: its hold
    reads as a pause to the leaves, whose path checks over it move red's
    and green's protected traffic to their backups while it still forwards,
    so a 100/s echo stream on each loses nothing; no link session toward it
    goes down and nothing is relabelled."""
    cp = services
    settled(lab, cp)
    spine = ControlPlane.path_nodes(ControlPlane.active_path(cp.service("red")))[1]
    labels = {s: cp.service(s)["allocations"] for s in ("red", "green")}

    # A link session's id is its link's, at both ends.
    def link_sessions(node):
        return {b["id"]: b for b in lab.client(node).call("bfd_list") if b.get("label", 0) == 0}
    links = link_sessions(spine)
    before = {leaf: {i: b for i, b in link_sessions(leaf).items() if i in links} for leaf in ("leaf1", "leaf2")}
    floods = [start_flood(lab, "h1", RED_H2, FLOOD), start_flood(lab, "h1", GREEN_IPS["h3"], FLOOD)]
    try:
        lab.warm_restart(spine)
        cp.wait_converged()
    finally:
        outs = [finish_flood(f) for f in floods]
    for out in outs:
        assert not unanswered(out, FLOOD), f"echoes lost: {unanswered(out, FLOOD)}\n{summary(out)}"
    for leaf, sessions in before.items():
        after = link_sessions(leaf)
        for i, b in sessions.items():
            assert after[i]["downs"] == b["downs"], f"{leaf}: its link session toward {spine} went down"
            assert after[i]["pauses"] > b["pauses"], f"{leaf}: {spine}'s hold not seen as a pause"
    assert {s: cp.service(s)["allocations"] for s in labels} == labels
    settled(lab, cp)  # the paths through the spine back on their primaries


def test_drain_moves_everything_off_a_spine_and_undrain_brings_it_back(lab, services):
    """e3ctl node drain on the spine under red's active path: red and
    green's tree leave it make-before-break, the node reports carrying
    nothing, a restart of its datapath then and the undrain lose no echo of
    a 100/s stream on either service; drained survives a controller restart
    (events are the leading replica's own)."""
    cp = services
    spine = ControlPlane.path_nodes(ControlPlane.active_path(cp.service("red")))[1]
    floods = [start_flood(lab, "h1", RED_H2, FLOOD), start_flood(lab, "h1", GREEN_IPS["h3"], FLOOD)]
    try:
        out = cp.e3ctl("--json", "node", "drain", spine, "--wait", "60", timeout=90).stdout
        v = json.loads(out)
        assert v["drained"] and not v.get("carrying"), v
        for name in ("red", "green"):
            svc = cp.service(name)
            r = svc["route"]
            used = [h for p in ([r.get(r.get("active") or "", [])] + [u["path"] for u in r.get("unicast") or []])
                    for h in p] + (r.get("tree") or [])
            assert spine not in {n for h in used for n in (h["from"], h["to"])}, (name, r)
        assert "node-drained" in [e["kind"] for e in cp.json("events") if e.get("object") == spine]
        table = cp.e3ctl("node", "list").stdout
        assert re.search(rf"^{spine}\s+spine\s+up,drained\s", table, re.M), table
        req = urllib.request.Request(cp.metrics_url(), headers={"Authorization": f"Bearer {cp.read_token}"})
        with urllib.request.urlopen(req, timeout=30, context=cp.ssl_context()) as r:
            metrics = r.read().decode()
        assert f'e3_controller_node_drained{{node="{spine}"}} 1' in metrics
        assert f'e3_controller_node_drain_carrying{{node="{spine}"}} 0' in metrics
        cp.stop_controller()
        cp.start_controller()
        node = next(n for n in cp.nodes() if n["name"] == spine)
        assert node["drained"], node
        # Nothing crosses it: a restart is nobody's loss.
        lab.stop(spine)
        lab.start(spine, ports=False)
        cp.wait_converged()
        v = json.loads(cp.e3ctl("--json", "node", "undrain", spine, "--wait", "60", timeout=90).stdout)
        assert not v.get("drained"), v
    finally:
        outs = [finish_flood(f) for f in floods]
    for out in outs:
        assert not unanswered(out, FLOOD), f"echoes lost: {unanswered(out, FLOOD)}\n{summary(out)}"
    assert "node-undrained" in [e["kind"] for e in cp.json("events") if e.get("object") == spine]
