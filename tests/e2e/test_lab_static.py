"""The static programmer's plan, checked on the calls it makes (no datapath):
every label written on a link exists at the node receiving it, objects exist
before they are referenced, and re-pointing is make-before-break. The
end-to-end tests run the same plan on real datapaths."""
from pathlib import Path

import pytest

from lab import StaticProgrammer, load

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class Recorder:
    """Stands in for the nodes' RPC sockets: records (node, method, params)."""

    def __init__(self):
        self.calls = []

    def client_for(self, node):
        rec = self

        class C:
            def call(self, method, params=None, **kw):
                rec.calls.append((node, method, dict(params or {}, **kw)))
        return C()


def programmed(example="static-3node.yaml"):
    t = load(EXAMPLES / example)
    rec = Recorder()
    prog = StaticProgrammer(t, rec.client_for)
    prog.program()
    return t, prog, rec


def tables(calls):
    """Node state after the calls: {node: {kind: {key: params}}}."""
    state = {}
    for node, method, p in calls:
        kind, op = method.rsplit("_", 1)
        key = p.get("label", p.get("id"))
        t = state.setdefault(node, {}).setdefault(kind, {})
        if op == "add":
            t[key] = p
        elif op == "del":
            del t[key]
    return state


@pytest.mark.parametrize("example", ["static-3node.yaml", "demo.yaml"])
def test_every_label_sent_exists_at_the_receiver(example):
    t, prog, rec = programmed(example)
    state = tables(rec.calls)
    for node, kinds in state.items():
        for nh in kinds.get("nhlfe", {}).values():
            port = kinds["nexthop"][nh["nexthop"]]["port"]
            link = next(l for l in t.links_of(node) if l.end(node).port == port and l.end(node).node == node)
            peer = link.other(node)
            assert nh["label"] in state[peer.node]["label"], (node, nh, peer)
            assert kinds["nexthop"][nh["nexthop"]]["mac"] == t.fabric_mac(peer.node, peer.port)


def test_objects_exist_before_they_are_referenced():
    _, _, rec = programmed()
    seen = set()
    for node, method, p in rec.calls:
        if method == "nhlfe_add":
            assert (node, "nexthop", p["nexthop"]) in seen
        if method in ("label_add", "circuit_add") and "service" in p:
            assert (node, "service", p["service"]) in seen
        for nh in [p.get("nhlfe")] + p.get("branches", []) + [r["nhlfe"] for r in p.get("remotes", [])]:
            if nh is not None:
                assert (node, "nhlfe", nh) in seen, (node, method, p)
        seen.add((node, method.split("_")[0], p.get("id")))
    assert rec.calls[-1][1] == "circuit_add"  # customer traffic enters last


def test_elan_replication_follows_the_tree_with_rpf():
    t, prog, rec = programmed()
    sid = t.service("a-lan").index
    reps = [p for n, m, p in rec.calls if n == "spine1" and m == "label_add" and p["type"] == "replicate"
            and p["label"] in prog.services["a-lan"].labels["spine1"]]
    assert len(reps) == 3  # one per source leaf
    for p in reps:
        assert "service" not in p  # spine1 has no circuit of its own
        assert len(p["branches"]) == 2 and p["rpf_port"] in ("fab1", "fab2", "fab3")
    leaf3 = [p for n, m, p in rec.calls if n == "leaf3" and m == "label_add" and p["type"] == "replicate"]
    assert {(p["service"], p["source"], p["rpf_port"]) for p in leaf3} == \
        {(sid, prog.source_id("leaf1"), "fab1"), (sid, prog.source_id("leaf2"), "fab1")}


def test_programming_is_deterministic():
    assert programmed()[2].calls == programmed()[2].calls


def check_make_before_break(prog, calls):
    def index(node, method, **match):
        return next(i for i, (n, m, p) in enumerate(calls)
                    if n == node and m == method and all(p.get(k) == v for k, v in match.items()))
    switches = []
    for src, dst in (("leaf1", "leaf2"), ("leaf2", "leaf1")):
        lsp = prog.services["a-line"].lsps[(src, dst)]
        switch = index(src, "service_add", nhlfe=lsp.head_nhlfe)
        assert index(src, "nhlfe_add", id=lsp.head_nhlfe) < switch
        for node, label, nh in lsp.transit:
            assert index(node, "nhlfe_add", id=nh) < index(node, "label_add", label=label) < switch
        switches.append(switch)
    deletes = [i for i, (_, m, _) in enumerate(calls) if m.endswith("_del")]
    assert deletes and min(deletes) > max(switches)


def test_repoint_is_make_before_break():
    t, prog, rec = programmed()
    egress = {n: set(prog.services["a-line"].labels[n]) for n in ("leaf1", "leaf2")}
    rec.calls.clear()
    prog.repoint_eline("a-line", ["leaf1", "leaf2"], drain_s=0)
    check_make_before_break(prog, rec.calls)
    # the old transit entries at spine1 are gone, the egress labels stay
    assert {m for n, m, _ in rec.calls if n == "spine1"} == {"label_del", "nhlfe_del"}
    assert not [p for n, m, p in rec.calls if m == "label_del" and p["label"] in egress.get(n, ())]
    new = prog.services["a-line"].lsps[("leaf1", "leaf2")]
    assert new.transit == [] and [(h.port, h.peer) for h in new.hops] == [("fab2", "leaf2")]
    # and back through the spine: new transit entries before the switch
    rec.calls.clear()
    prog.repoint_eline("a-line", ["leaf1", "spine1", "leaf2"], drain_s=0)
    check_make_before_break(prog, rec.calls)
    assert [n for n, _, _ in prog.services["a-line"].lsps[("leaf2", "leaf1")].transit] == ["spine1"]
