"""The load cost (docs/control-plane.md, "Link cost"): real traffic moves a
path, once, and the controller says why.

red (h1 -> h2) and blue (h4 -> h5) both run leaf1 - S - leaf2 over one
spine S, placed there while the other spine's links cost more. The
controller then weighs links by their measured load (--link-cost load, a
2 s window and pass), the links have 50 Mbps of capacity and the other
spine costs the same again. An iperf3 UDP stream of 20 Mbps on red loads
S's links to 40%: blue, which carries nothing, moves to the other spine
(make-before-break: it still pings), red does not chase its own traffic,
and no service moves twice while the stream lasts."""
import json
import time

import yaml

from cplib import BLUE, BLUE_H5, RED_H2, clean_ping, ensure_service
from lab.control import ControlPlane, wait_for

# A hold shorter than the test: what keeps paths still is the gain they
# must bring and each service's own traffic taken off its links.
LOAD_FLAGS = ["--link-cost", "load", "--load-window", "2s", "--reoptimize-interval", "2s",
              "--reoptimize-hold", "4s"]
CAPACITY = 50     # Mbps of each leaf1/leaf2 link
RATE = "20M"      # red's stream: 40% of S's links
STREAM_S = 90


def spine_of(cp, name: str) -> str:
    return ControlPlane.path_nodes(ControlPlane.active_path(cp.service(name)))[1]


def write_topology(cp, doc: dict, other: str, cost: int) -> None:
    """doc with leaf1's and leaf2's links at CAPACITY, those to spine
    `other` at cost, as the file the controller imports when it leads."""
    doc = json.loads(json.dumps(doc))
    for link in doc["links"]:
        ends = {link["a"]["node"], link["b"]["node"]}
        if ends & {"leaf1", "leaf2"}:
            link["capacity_mbps"] = CAPACITY
            link["cost"] = cost if other in ends else 1
    cp.topology_file.write_text(yaml.safe_dump(doc, sort_keys=False))


def moves(cp, since: int) -> list:
    """The services moved for load, one entry per move, since event `since`."""
    evs = [e for e in cp.json("events") if e["kind"] == "reoptimize"][since:]
    return [e["detail"].split()[1] for e in evs]


def test_measured_load_moves_a_path_once(lab, services):
    cp = services
    had_blue = BLUE[0] in {s["name"] for s in cp.services()}
    ensure_service(cp, *BLUE)
    original_topology = cp.topology_file.read_text()
    original_cmd = list(cp.controller.cmd)
    red_spine = spine_of(cp, "red")
    other = "spine2" if red_spine == "spine1" else "spine1"
    srv = stream = None
    try:
        # Both on red's spine, then weighed by load, all links equal.
        cp.stop_controller()
        cp.controller.cmd = original_cmd + LOAD_FLAGS
        write_topology(cp, yaml.safe_load(original_topology), other, 10)
        cp.start_controller()
        wait_for("blue on red's spine", lambda: spine_of(cp, "blue") == red_spine, 60)
        write_topology(cp, yaml.safe_load(original_topology), other, 1)
        cp.e3ctl("topology", "import", str(cp.topology_file))
        cp.wait_converged()
        assert spine_of(cp, "red") == spine_of(cp, "blue") == red_spine, "idle services moved for an equal path"
        before = len(moves(cp, 0))

        srv = lab.host_popen("h2", ["iperf3", "-s", "-B", RED_H2, "-p", "5211"])
        wait_for("iperf3 server", lambda: lab.host_exec(
            "h2", ["ss", "-Hltn", "sport = :5211"], check=False).stdout.strip() != "", 10)
        stream = lab.host_popen("h1", ["iperf3", "-c", RED_H2, "-p", "5211", "-u", "-b", RATE, "-l", "1000",
                                       "-t", str(STREAM_S)])

        def moved():
            assert stream.poll() is None, f"iperf3 ended: {stream.communicate()}"
            return "blue" in moves(cp, before)
        wait_for("blue moved for load", moved, 60)
        (ev,) = [e for e in cp.json("events") if e["detail"].startswith("service blue moved for load")]
        assert red_spine in ev["detail"].split("busiest link was")[1], ev
        links = {l["name"]: l for l in cp.json("link", "list")}
        busy = [l for l in links.values() if red_spine in l["name"] and "leaf1" in l["name"]]
        assert busy and busy[0].get("load_mbps", 0) > 10, busy
        cp.wait_converged()
        assert spine_of(cp, "blue") == other and spine_of(cp, "red") == red_spine
        clean_ping(lab, "h4", BLUE_H5, count=5)

        # The stream goes on for five times the hold: no service moves
        # twice (idle ones may leave S once, as blue did), red never.
        for _ in range(10):
            assert stream.poll() is None, f"iperf3 ended: {stream.communicate()}"
            time.sleep(2)
        moved = moves(cp, before)
        assert "red" not in moved and len(moved) == len(set(moved)), moved
        assert spine_of(cp, "blue") == other and spine_of(cp, "red") == red_spine
    finally:
        for p in (stream, srv):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
        cp.stop_controller()
        cp.controller.cmd = original_cmd
        cp.topology_file.write_text(original_topology)
        cp.start_controller()
        if not had_blue:
            cp.e3ctl("service", "delete", BLUE[0])   # the tests after count leaf1's E-Lines
        cp.wait_converged()
