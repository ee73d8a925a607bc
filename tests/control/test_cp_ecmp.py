"""ECMP in the fabric (docs/multihoming.md): an E-Line created with --ecmp
(cyan, on blue's circuits: h4 on leaf1 untagged <-> h5 on leaf2 VLAN 40)
spreads its flows over both spines. Each flow stays on one spine, so none
is split or reordered, and `e3ctl service show` says both paths carry
flows. Which spine a flow takes is read from the spines' counters of the
labels the controller allocated to each path."""
import json
import re
import time
from pathlib import Path

import pytest

from cplib import alloc, first_contact, label_pkts

STREAM = str(Path(__file__).resolve().parents[1] / "lab" / "udpstream.py")
CYAN = ("cyan", "eline", ["leaf1:cust2:untagged", "leaf2:cust2:40"])
H5 = "10.40.0.2"
FLOWS, PER_FLOW = 16, 40


@pytest.fixture
def cyan(cp, lab):
    names = {s["name"] for s in cp.services()}
    if "blue" in names:           # the same circuits
        cp.e3ctl("service", "delete", "blue")
    if "cyan" not in names:
        cp.create_service(*CYAN, "--ecmp")
    cp.wait_service("cyan")
    cp.wait_converged()
    first_contact(lab, "h4", H5)
    yield cp
    cp.e3ctl("service", "delete", "cyan")


def path_labels(svc):
    """{spine: the label its transit entry for leaf1 -> leaf2 has}, for the
    primary and the backup path."""
    out = {}
    for name in ("primary", "backup"):
        path = svc["route"][name]
        spine = path[0]["to"]
        links = ".".join(str(h["link"]) for h in path)
        out[spine] = alloc(svc, spine, "label", f"eline:leaf1>leaf2:{links}")
    assert len(out) == 2, out
    return out


def counts(lab, labels):
    return {spine: label_pkts(lab, spine, label) for spine, label in labels.items()}


def send(lab, tmp_path, flows, rate, seconds, tag):
    """A stream of `flows` UDP flows h4 -> h5, as the receiver saw it."""
    out = tmp_path / f"{tag}.json"
    rx = lab.host_popen("h5", ["python3", STREAM, "recv", "--port", "5600", "--seconds", str(seconds + 2),
                               "--out", str(out), "--by-flow", "--late-ms", "60000"])
    time.sleep(0.5)
    try:
        lab.host_exec("h4", ["python3", STREAM, "send", "--dst", H5, "--port", "5600", "--flows", str(flows),
                             "--rate", str(rate), "--seconds", str(seconds)], timeout=seconds + 30)
    finally:
        rx.wait(seconds + 30)
    return json.loads(out.read_text())["flows"]


def test_service_show_says_both_paths_carry_flows(cyan):
    text = cyan.e3ctl("service", "show", "cyan").stdout
    assert re.search(r"^ecmp\s+on: each flow takes the primary or the backup path$", text, re.M), text
    assert text.count("(ecmp: carries flows)") == 2, text
    assert cyan.service("cyan")["route"]["ecmp"] is True


def test_each_flow_takes_one_spine_and_flows_take_both(cyan, lab, tmp_path):
    labels = path_labels(cyan.service("cyan"))
    took = []
    for k in range(FLOWS):
        before = counts(lab, labels)
        # One flow: a new source port each run (flows=1 binds none).
        (r,) = send(lab, tmp_path, 1, 400, PER_FLOW / 400, f"flow{k}").values()
        after = counts(lab, labels)
        delta = {s: after[s] - before[s] for s in labels}
        on = [s for s, d in delta.items() if d >= r["received"]]
        assert r["received"] > 0 and len(on) == 1 and all(d < r["received"] for s, d in delta.items()
                                                            if s not in on), f"flow {k}: {r}, {delta}"
        took.append(on[0])
    assert set(took) == set(labels), f"every flow on {set(took)}"


def test_interleaved_flows_are_never_reordered(cyan, lab, tmp_path):
    labels = path_labels(cyan.service("cyan"))
    before = counts(lab, labels)
    flows = send(lab, tmp_path, FLOWS, 2000, 2, "interleaved")
    after = counts(lab, labels)
    assert len(flows) == FLOWS, flows
    for port, r in flows.items():
        assert r["received"] > 0 and r["reordered"] == 0 and r["duplicates"] == 0, (port, r)
    assert all(after[s] > before[s] + 100 for s in labels), (before, after)
