"""ECMP groups through a real e3-vswitchd: an E-Line whose NHLFE is a group
of two protected NHLFEs (one path out f1, one out f2) sends each customer
flow out one port, always the same, and spreads flows over both; a member
whose watched session fails is left out and only its flows move; the
group is dumped, reloaded and refused like any object."""
import struct

import pytest

from pkt_frames import customer_frame, parse_fabric, token, untag
from pkt_net import wait_for
from test_pkt_oam import HOST_A, HOST_B, bfd, peer, session  # noqa: F401 (fixture)

FLOWS = 32
LABEL = {"f1p": 100, "f2p": 101}


def ecmp_eline(sw, watch1=1, watch2=2):
    """E-Line 1 on c1 VLAN 1000 over group 30: member 21 via f1 (label 100,
    else f2) watching session watch1, member 22 via f2 (label 101, else f1)
    watching watch2. A watch without a session reads usable."""
    for nh, port in ((1, "f1"), (2, "f2")):
        if not any(n["id"] == nh for n in sw.rpc("nexthop_list")):
            sw.nexthop(nh, port)
    sw.rpc("nhlfe_add", id=11, nexthop=1, label=100)
    sw.rpc("nhlfe_add", id=12, nexthop=2, label=101)
    sw.rpc("nhlfe_add", id=21, primary=11, backup=12, watch=watch1)
    sw.rpc("nhlfe_add", id=22, primary=12, backup=11, watch=watch2)
    sw.rpc("ecmp_add", id=30, members=[21, 22])
    sw.rpc("service_add", id=1, type="eline", name="pk-ecmp", nhlfe=30)
    sw.rpc("circuit_add", id=1, port="c1", vlan=1000, service=1)


def send_flows(wire, rounds=3):
    """rounds frames of each of FLOWS UDP flows, interleaved; returns
    {sport: [(port, seq)]} in the order they left, and every frame's inner
    frame checked against what was sent."""
    tok = token()
    sent, sends = {}, []
    for seq in range(rounds):
        for k in range(FLOWS):
            f = customer_frame(HOST_B, HOST_A, tok + struct.pack("!HH", k, seq), vlan=1000,
                               sport=2000 + k)
            sent[(k, seq)] = untag(f)
            sends.append(("c1p", f))
    got = wire.exchange(sends, expect=len(sends), match=tok)
    seen = {}
    for port in ("f1p", "f2p"):
        for frame in got[port]:
            fab = parse_fabric(frame)
            assert fab.label == LABEL[port], f"label {fab.label} out of {port}"
            i = fab.inner.index(tok) + len(tok)
            k, seq = struct.unpack("!HH", fab.inner[i:i + 4])
            assert fab.inner == sent[(k, seq)]
            seen.setdefault(k, []).append((port, seq))
    assert not any(got[p] for p in got if p not in ("f1p", "f2p")), "frames elsewhere"
    return seen


def ports_of(seen):
    return {k: {p for p, _ in v} for k, v in seen.items()}


def test_each_flow_takes_one_member_and_flows_use_both(sw, wire):
    ecmp_eline(sw)
    seen = send_flows(wire)
    assert sorted(seen) == list(range(FLOWS))
    for k, frames in seen.items():
        assert len({p for p, _ in frames}) == 1, f"flow {k} split: {frames}"
        assert [s for _, s in frames] == [0, 1, 2], f"flow {k} out of order: {frames}"
    on_f1 = sum(1 for v in ports_of(seen).values() if v == {"f1p"})
    assert 4 <= on_f1 <= FLOWS - 4, f"{on_f1} of {FLOWS} flows on f1"
    # The same flows take the same members again.
    assert ports_of(send_flows(wire, rounds=1)) == ports_of(seen)


def test_a_failed_member_moves_only_its_flows(sw, wire, peer):  # noqa: F811
    session(sw, 1, "f1", wtr_s=600)
    ecmp_eline(sw, watch1=1)
    p = peer()
    wait_for(lambda: bfd(sw)["state"] == "up", what="session up")
    before = ports_of(send_flows(wire, rounds=1))
    p.sending = False           # the path via f1 fails: member 21 is left out
    wait_for(lambda: not bfd(sw)["usable"], what="member 21 unusable")
    after = ports_of(send_flows(wire, rounds=1))
    assert all(v == {"f2p"} for v in after.values())
    assert {k for k, v in before.items() if v == {"f2p"}} <= set(after)


def test_group_dump_and_reload(sw):
    ecmp_eline(sw)
    assert sw.rpc("ecmp_list") == [{"id": 30, "members": [21, 22]}]
    doc = sw.rpc("config_dump")
    assert doc["ecmps"] == [{"id": 30, "members": [21, 22]}]
    assert 30 not in [n["id"] for n in doc["nhlfes"]]
    assert sw.rpc("config_load", **doc) == {"added": 0, "replaced": 0}
    assert sw.rpc("ecmp_add", id=30, members=[22]) == {"changed": True}
    assert sw.rpc("config_load", **doc)["replaced"] == 1
    assert sw.rpc("ecmp_list") == [{"id": 30, "members": [21, 22]}]
    # Without the group and the service, a sync removes both.
    doc2 = dict(doc, ecmps=[], services=[], circuits=[])
    assert sw.dp.sync(doc2)["removed"] == 3
    assert sw.rpc("ecmp_list") == []


@pytest.mark.parametrize("call, params, code, msg", [
    ("ecmp_add", {"id": 31, "members": [21, 99]}, -32000, "members\\[1\\]: nhlfe 99 not found"),
    ("ecmp_add", {"id": 31, "members": [30]}, -32000, "a group"),
    ("ecmp_add", {"id": 31, "members": []}, -32602, "members"),
    ("ecmp_add", {"id": 31, "members": [21] * 9}, -32602, "members"),
    ("ecmp_add", {"id": 11, "members": [21]}, -32001, "no ECMP group"),
    ("nhlfe_add", {"id": 30, "nexthop": 1, "label": 16}, -32001, "is an ECMP group"),
    ("nhlfe_add", {"id": 40, "primary": 30, "backup": 11, "watch": 1}, -32000, "not plain"),
    ("nhlfe_del", {"id": 30}, -32000, "ecmp_del"),
    ("nhlfe_del", {"id": 21}, -32002, "used"),
    ("ecmp_del", {"id": 30}, -32002, "used by 1"),
    ("ecmp_del", {"id": 11}, -32000, "not found"),
])
def test_refusals_change_nothing(sw, call, params, code, msg):
    ecmp_eline(sw)
    before = sw.rpc("config_dump")
    with pytest.raises(Exception, match=msg) as e:
        sw.rpc(call, **params)
    assert e.value.code == code
    assert sw.rpc("config_dump") == before
