"""Storm control: an E-LAN circuit's broadcast, multicast and unknown
unicast limits (circuit_add storm_*_pps) cut a flood from that circuit to
its limit, count what they drop by class, and leave every other circuit,
class and service alone.

The limits are token buckets in the datapath's clock: at most a burst (a
tenth of a second's worth, at least one frame) plus rate x time passes.
The tests bound what passes by the whole time the frames were in flight,
measured around the exchange, so the bound never depends on how fast this
machine is; it stays far below what is sent."""
import time

import pytest

from pkt_frames import customer_frame, token
from pkt_net import wait_for
from pkt_switch import e3rpc
from test_pkt_elan import BCAST, CIRCUIT, MCAST, SVC, UNKNOWN, VLAN, elan

RATE = 20          # frames per second
BURST = 2          # RATE / 10
N = 400            # frames sent over the limit

OTHER_SVC, OTHER_VLAN = 20, 300
HOST1, HOST2 = "02:00:0a:00:01:01", "02:00:0a:00:01:02"


def limit(sw, port="c1", **pps):
    sw.rpc("circuit_add", id=CIRCUIT[port], port=port, vlan=VLAN[port] or "untagged", service=SVC,
           **{f"storm_{k}_pps": v for k, v in pps.items()})


def other_service(sw):
    """A second E-LAN on c1 and c2 (VLAN 300): the same port as the limited circuit."""
    sw.rpc("service_add", id=OTHER_SVC, type="elan", name="pk-other")
    for k, port in enumerate(("c1", "c2")):
        sw.rpc("circuit_add", id=200 + k, port=port, vlan=OTHER_VLAN, service=OTHER_SVC)


def storm_drops(sw, port="c1"):
    d = sw.port(port)["stats"]["drops"]
    return {cls: d[f"storm_{cls}"] for cls in ("broadcast", "multicast", "unknown")}


def flood(wire, sends, tokens):
    """Send, capture, and return ({token: copies seen on c2p}, seconds in flight)."""
    t0 = time.monotonic()
    got = wire.exchange(sends, expect=0, quiet=1.0, timeout=30)
    took = time.monotonic() - t0
    seen = {t: sum(1 for f in got["c2p"] if t in f) for t in tokens}
    return seen, took


def test_broadcast_flood_cut_to_limit_others_unaffected(sw, wire):
    elan(sw)
    other_service(sw)
    limit(sw, broadcast=RATE)
    storm, fine, other = token(), token(), token()
    sends = []
    for k in range(N):
        sends.append(("c1p", customer_frame(BCAST, HOST1, storm, vlan=VLAN["c1"])))
        if k % 8 == 0:   # c1's multicast (no limit), c2's broadcast, c1's other service
            sends.append(("c1p", customer_frame(MCAST, HOST1, fine, vlan=VLAN["c1"])))
            sends.append(("c1p", customer_frame(BCAST, HOST1, other, vlan=OTHER_VLAN)))
    seen, took = flood(wire, sends, [storm, fine, other])
    passed = seen[storm]
    assert BURST <= passed <= BURST + RATE * took, f"{passed} broadcasts passed in {took:.2f}s"
    assert seen[fine] == N // 8, "multicast from the same circuit has no limit"
    assert seen[other] == N // 8, "another service on the same port is not limited"
    wait_for(lambda: storm_drops(sw)["broadcast"] == N - passed, what="every broadcast over the limit counted")
    assert storm_drops(sw) == {"broadcast": N - passed, "multicast": 0, "unknown": 0}
    assert storm_drops(sw, "c2") == {"broadcast": 0, "multicast": 0, "unknown": 0}

    # Another circuit of the E-LAN floods freely, into the limited one too.
    tok = token()
    got = wire.exchange([("c2p", customer_frame(BCAST, HOST2, tok, vlan=VLAN["c2"]))] * 50,
                        expect=100, match=tok)
    assert len(got["c1p"]) == 50 and len(got["c3p"]) == 50


@pytest.mark.parametrize("cls,dst", [("multicast", MCAST), ("unknown", UNKNOWN)])
def test_each_class_has_its_own_limit(sw, wire, cls, dst):
    elan(sw)
    limit(sw, **{cls: RATE})
    tok, bc = token(), token()
    sends = [("c1p", customer_frame(dst, HOST1, tok, vlan=VLAN["c1"])) for _ in range(N)]
    sends += [("c1p", customer_frame(BCAST, HOST1, bc, vlan=VLAN["c1"])) for _ in range(20)]
    seen, took = flood(wire, sends, [tok, bc])
    assert BURST <= seen[tok] <= BURST + RATE * took, f"{seen[tok]} {cls} passed in {took:.2f}s"
    assert seen[bc] == 20
    wait_for(lambda: storm_drops(sw)[cls] == N - seen[tok], what=f"storm_{cls} counted")


def test_known_unicast_is_never_limited(sw, wire):
    elan(sw)
    limit(sw, broadcast=1, multicast=1, unknown=1)
    # Teach c2's host (its broadcast floods from c2, which has no limit).
    wire.exchange([("c2p", customer_frame(BCAST, HOST2, token(), vlan=VLAN["c2"]))], expect=0)
    wait_for(lambda: HOST2 in sw.macs(SVC), what="c2's host learned")
    tok = token()
    seen, _ = flood(wire, [("c1p", customer_frame(HOST2, HOST1, tok, vlan=VLAN["c1"]))] * 100, [tok])
    assert seen[tok] == 100
    assert storm_drops(sw) == {"broadcast": 0, "multicast": 0, "unknown": 0}


def test_limits_are_dumped_and_refused_out_of_range(sw, wire):
    elan(sw)
    limit(sw, broadcast=100, unknown=5)
    c = next(c for c in sw.rpc("config_dump")["circuits"] if c["id"] == CIRCUIT["c1"])
    assert (c["storm_broadcast_pps"], c["storm_unknown_pps"]) == (100, 5) and "storm_multicast_pps" not in c
    before = sw.rpc("config_dump")
    with pytest.raises(e3rpc.RpcError) as e:
        limit(sw, broadcast=100_000_001)
    assert e.value.code == -32602 and "storm_broadcast_pps" in str(e.value)
    assert sw.rpc("config_dump") == before
    # Unchanged limits: the replace changes nothing.
    assert sw.rpc("circuit_add", id=CIRCUIT["c1"], port="c1", vlan=VLAN["c1"], service=SVC,
                  storm_broadcast_pps=100, storm_unknown_pps=5) == {"changed": False}
