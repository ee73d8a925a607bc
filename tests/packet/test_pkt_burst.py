"""Many frames of different kinds back to back on two ports at once, so the
switch gets them in bursts where neighbouring frames take different stages
(E-Line, E-LAN, SWAP, drops). Every output is checked byte for byte, every
drop is counted under its reason, and frames from one input to one output
keep their order (a pseudowire must not reorder)."""
from pkt_frames import (assert_customer, assert_fabric, customer_frame, fabric_frame, mac_bytes,
                        mpls_entry, token, untag)
from pkt_net import assert_delivered
from pkt_switch import MAC, PEER_MAC

A = "02:00:0a:00:00:0a"
B = "02:00:0a:00:00:0b"
R = "02:00:0a:00:00:ee"
BCAST = "ff:ff:ff:ff:ff:ff"
ROUNDS = 30


def configure(sw):
    sw.nhlfe(1, "f1", 100)                           # E-Line 1: c1 v1000 <-> f1
    sw.rpc("service_add", id=1, type="eline", name="pk-burst-eline1", nhlfe=1)
    sw.rpc("circuit_add", id=1, port="c1", vlan=1000, service=1)
    sw.rpc("label_add", label=200, type="eline", service=1)
    sw.nhlfe(2, "f3", 102)                           # E-Line 2: c2 v2000 -> f3
    sw.rpc("service_add", id=2, type="eline", name="pk-burst-eline2", nhlfe=2)
    sw.rpc("circuit_add", id=2, port="c2", vlan=2000, service=2)
    sw.nhlfe(7, "f2", 5001)                          # transit 5000 -> f2 5001
    sw.rpc("label_add", label=5000, type="swap", nhlfe=7)
    sw.nhlfe(11, "f1", 3001)                         # E-LAN 10: c2 v200, c3 untagged
    sw.rpc("service_add", id=10, type="elan", name="pk-burst-elan",
           remotes=[{"source": 1, "nhlfe": 11}])
    sw.rpc("circuit_add", id=102, port="c2", vlan=200, service=10)
    sw.rpc("circuit_add", id=103, port="c3", vlan="untagged", service=10)
    sw.rpc("label_add", label=3500, type="elan", service=10, source=1)


def fabric_kinds(tok, i):
    """(frame into f1, {peer: check(frame)}) for each kind of fabric frame."""
    inner = customer_frame(A, B, tok)
    bcast = customer_frame(BCAST, R, tok)
    tc = i % 8
    f = lambda label, payload, **kw: fabric_frame(MAC["f1"], PEER_MAC["f1"], label, payload, **kw)  # noqa: E731
    return [
        (f(200, inner, tc=tc),
         {"c1p": lambda o: assert_customer(o, inner=inner, vlan=1000, pcp=tc)}),
        (f(5000, inner, tc=tc, ttl=30),
         {"f2p": lambda o: assert_fabric(o, dst=PEER_MAC["f2"], src=MAC["f2"], label=5001, tc=tc,
                                         ttl=29, inner=inner)}),
        (f(3500, bcast, tc=tc),
         {"c2p": lambda o: assert_customer(o, inner=bcast, vlan=200, pcp=tc),
          "c3p": lambda o: assert_customer(o, inner=bcast, vlan=None)}),
        (f(999, inner), {}),                          # label_unknown
        (f(5000, inner, ttl=1), {}),                  # ttl_expired
    ]


def customer_kinds(tok, i):
    """(frame into c2, {peer: check(frame)}) for each kind of customer frame."""
    pcp = i % 8
    to_eline = customer_frame(A, B, tok, vlan=2000, pcp=pcp)
    to_elan = customer_frame(BCAST, B, tok, vlan=200, pcp=pcp)
    labelled = (mac_bytes(A) + mac_bytes(B) + b"\x88\x47" + mpls_entry(200) + bytes(4)
                + customer_frame(A, B, tok))
    return [
        (to_eline,
         {"f3p": lambda o: assert_fabric(o, dst=PEER_MAC["f3"], src=MAC["f3"], label=102, tc=pcp,
                                         ttl=64, inner=untag(to_eline))}),
        (to_elan, {"c3p": lambda o: assert_customer(o, inner=untag(to_elan), vlan=None)}),
        (customer_frame(A, B, tok, vlan=300), {}),    # no_circuit
        (labelled, {}),                               # customer_labelled
    ]


def test_mixed_bursts_on_two_ports(sw, wire):
    configure(sw)
    sends = []          # (peer, frame)
    expected = {}       # token -> (input peer, {peer: check})
    order = {}          # (input peer, output peer) -> [token, ...] in sending order
    for i in range(ROUNDS):
        for in_peer, kinds in (("f1p", fabric_kinds), ("c2p", customer_kinds)):
            for j in range(len(kinds(b"", i))):
                tok = token()
                frame, checks = kinds(tok, i)[j]
                sends.append((in_peer, frame))
                expected[tok] = (in_peer, checks)
                for out in checks:
                    order.setdefault((in_peer, out), []).append(tok)
    n_out = sum(len(c) for _, c in expected.values())
    got = wire.exchange(sends, expect=n_out, match=b"pk-token-")

    want_counts = {}
    for _, checks in expected.values():
        for out in checks:
            want_counts[out] = want_counts.get(out, 0) + 1
    assert_delivered(got, want_counts)
    seen = {}
    for out, frames in got.items():
        for o in frames:
            (tok,) = [t for t in expected if t in o]
            in_peer, checks = expected[tok]
            assert out in checks, f"frame {tok} from {in_peer} leaked to {out}"
            checks[out](o)
            seen.setdefault((in_peer, out), []).append(tok)
    assert seen == order, "frames from one input to one output were reordered"
    f1_drops = {"label_unknown": ROUNDS, "ttl_expired": ROUNDS}
    c2_drops = {"no_circuit": ROUNDS, "customer_labelled": ROUNDS}
    sw.wait_drops("f1", f1_drops, total=False)
    sw.wait_drops("c2", c2_drops, total=False)
    assert sw.total_drops() == {**f1_drops, **c2_drops}
