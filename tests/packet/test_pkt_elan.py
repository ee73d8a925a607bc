"""E-LAN through a real e3-vswitchd: flooding to local circuits and flood
branches, learning, known unicast, MAC moves, the per-service MAC limit,
aging, flush, termination of ELAN labels from the fabric with split horizon,
and isolation between services that reuse VLAN IDs and MACs."""
import pytest

from pkt_frames import (assert_customer, assert_fabric, customer_frame, fabric_frame, token,
                        untag)
from pkt_net import assert_delivered, wait_for
from pkt_switch import MAC, PEER_MAC, assert_decapsulated, assert_encapsulated, assert_fabric_out

SVC = 10
A = "02:00:0a:00:00:0a"       # host behind c1
B = "02:00:0a:00:00:0b"       # host behind c2
R = "02:00:0a:00:00:ee"       # host behind the remote leaf (source 1)
BCAST = "ff:ff:ff:ff:ff:ff"
UNKNOWN = "02:00:0a:00:00:99"
MCAST = "01:00:5e:01:02:03"

CIRCUIT = {"c1": 101, "c2": 102, "c3": 103}
VLAN = {"c1": 100, "c2": 200, "c3": None}       # c3: the whole untagged port
UNICAST_TO_REMOTE = 3001   # label the remote leaf allocated for "service 10, from us"
BRANCH = {"f1": 3101, "f2": 3102}                # this leaf's flood branches
ELAN_IN = 3500             # our label: service 10, source 1


def elan(sw, mac_limit=None):
    sw.nhlfe(11, "f1", UNICAST_TO_REMOTE)
    sw.nhlfe(12, "f1", BRANCH["f1"])
    sw.nhlfe(13, "f2", BRANCH["f2"])
    params = dict(id=SVC, type="elan", name="pk-elan", remotes=[{"source": 1, "nhlfe": 11}],
                  branches=[12, 13])
    if mac_limit is not None:
        params["mac_limit"] = mac_limit
    sw.rpc("service_add", **params)
    for port, cid in CIRCUIT.items():
        sw.rpc("circuit_add", id=cid, port=port, vlan=VLAN[port] or "untagged", service=SVC)
    sw.rpc("label_add", label=ELAN_IN, type="elan", service=SVC, source=1)


def from_customer(port, dst, src, tok, pcp=0):
    return customer_frame(dst, src, tok, vlan=VLAN[port], pcp=pcp if VLAN[port] else 0)


def inner_of(port, frame):
    return untag(frame) if VLAN[port] else frame


def assert_floods(wire, in_port, dst, src, pcp=0):
    """A frame (dst, src, pcp) from customer port in_port goes to every
    other local circuit (with its VLAN, PCP kept) and to both flood
    branches, nowhere else."""
    tok = token()
    frame = from_customer(in_port, dst, src, tok, pcp=pcp)
    got = wire.exchange([(in_port + "p", frame)], expect=4, match=tok)
    inner = inner_of(in_port, frame)
    others = [p for p in CIRCUIT if p != in_port]
    assert_delivered(got, {**{p + "p": 1 for p in others}, "f1p": 1, "f2p": 1})
    for p in others:
        assert_customer(got[p + "p"][0], inner=inner, vlan=VLAN[p], pcp=pcp if VLAN[p] else None)
    for f, label in BRANCH.items():
        assert_fabric(got[f + "p"][0], dst=PEER_MAC[f], src=MAC[f], label=label, tc=pcp, ttl=64,
                      inner=inner)


def learn(sw, wire, port, mac):
    """Teach the switch that mac lives behind port (a broadcast from it)."""
    tok = token()
    got = wire.exchange([(port + "p", from_customer(port, BCAST, mac, tok))], expect=4, match=tok)
    assert sum(map(len, got.values())) == 4
    wait_for(lambda: sw.macs(SVC).get(mac, {}).get("circuit") == CIRCUIT[port],
             what=f"{mac} learned on circuit {CIRCUIT[port]}")


def learn_remote(sw, wire, mac, dst=A):
    """Teach the switch that mac lives behind remote source 1 (a frame on ELAN_IN)."""
    tok = token()
    inner = customer_frame(dst, mac, tok)
    wire.exchange([("f1p", fabric_frame(MAC["f1"], PEER_MAC["f1"], ELAN_IN, inner))],
                  expect=1, match=tok)
    wait_for(lambda: sw.macs(SVC).get(mac, {}).get("source") == 1,
             what=f"{mac} learned on remote source 1")


@pytest.mark.parametrize("dst", [BCAST, UNKNOWN, MCAST], ids=["broadcast", "unknown", "multicast"])
def test_flood_from_tagged_circuit(sw, wire, dst):
    elan(sw)
    assert_floods(wire, "c1", dst, A, pcp=5)
    wait_for(lambda: sw.service(SVC)["stats"]["flooded"] >= 1, what="service flooded counter")


def test_flood_from_untagged_circuit(sw, wire):
    elan(sw)
    assert_floods(wire, "c3", BCAST, A)


def test_learning_then_known_unicast(sw, wire):
    elan(sw)
    learn(sw, wire, "c1", A)
    mac = sw.macs(SVC)[A]
    assert mac["service"] == SVC and mac["circuit"] == CIRCUIT["c1"] and mac.get("source") is None
    assert mac["age_s"] >= 0

    # B answers A: known unicast goes to c1 only, and B is learned on c2.
    tok = token()
    frame = from_customer("c2", A, B, tok, pcp=4)
    got = wire.exchange([("c2p", frame)], expect=1, match=tok)
    assert_delivered(got, {"c1p": 1})
    assert_customer(got["c1p"][0], inner=untag(frame), vlan=100, pcp=4)
    wait_for(lambda: sw.macs(SVC).get(B, {}).get("circuit") == CIRCUIT["c2"], what="B on c2")

    tok = token()
    frame = from_customer("c1", B, A, tok, pcp=1)
    got = wire.exchange([("c1p", frame)], expect=1, match=tok)
    assert_delivered(got, {"c2p": 1})
    assert_customer(got["c2p"][0], inner=untag(frame), vlan=200, pcp=1)
    assert sw.service(SVC)["stats"]["learned"] >= 2


def test_known_unicast_to_its_own_circuit_is_dropped(sw, wire):
    elan(sw)
    learn(sw, wire, "c1", A)
    learn(sw, wire, "c1", B)
    tok = token()
    got = wire.exchange([("c1p", from_customer("c1", A, B, tok))], match=tok)
    sw.wait_drops("c1", {"same_circuit": 1})
    assert_delivered(got, {})


def test_mac_move(sw, wire):
    elan(sw)
    learn(sw, wire, "c1", A)
    learn(sw, wire, "c3", A)        # A moved to the untagged port
    assert sw.macs(SVC)[A]["circuit"] == CIRCUIT["c3"]
    wait_for(lambda: sw.service(SVC)["stats"]["moves"] == 1, what="service moves == 1")
    tok = token()
    frame = from_customer("c2", A, B, tok)
    got = wire.exchange([("c2p", frame)], expect=1, match=tok)
    assert_delivered(got, {"c3p": 1})
    assert_customer(got["c3p"][0], inner=untag(frame), vlan=None)


def test_mac_limit(sw, wire):
    elan(sw, mac_limit=2)
    macs = ["02:00:0a:00:01:%02x" % i for i in range(3)]
    for m in macs[:2]:
        learn(sw, wire, "c1", m)
    tok = token()
    wire.exchange([("c1p", from_customer("c1", BCAST, macs[2], tok))], expect=4, match=tok)
    wait_for(lambda: sw.service(SVC)["stats"]["limit_hits"] >= 1, what="limit_hits >= 1")
    assert set(sw.macs(SVC)) == set(macs[:2])
    assert sw.service(SVC)["macs"] == 2
    # A known MAC that is seen again is not a new entry: no further limit hit.
    hits = sw.service(SVC)["stats"]["limit_hits"]
    learn(sw, wire, "c1", macs[0])
    assert sw.service(SVC)["stats"]["limit_hits"] == hits
    assert set(sw.macs(SVC)) == set(macs[:2])


def test_mac_aging(sw, wire):
    elan(sw)
    # Learned, then aged: with whole-second stamps a 1 s aging takes it 1-2 s
    # after its last frame.
    learn(sw, wire, "c1", A)
    sw.rpc("settings_set", mac_aging_s=1)
    wait_for(lambda: A not in sw.macs(SVC), timeout=15, what=f"{A} aged out")
    # Aged out = unknown again: the next frame to A floods.
    assert_floods(wire, "c2", A, B)


def test_mac_flush(sw, wire):
    elan(sw)
    learn(sw, wire, "c1", A)
    learn(sw, wire, "c2", B)
    assert sw.rpc("mac_flush", service=SVC) == {"flushed": 2}
    assert sw.macs(SVC) == {}
    assert_floods(wire, "c2", A, B)


def test_remote_learning_and_unicast_to_remote(sw, wire):
    elan(sw)
    learn(sw, wire, "c1", A)
    # From the fabric, to A (known local): to c1 only, never to the fabric;
    # the remote leaf's TC becomes the PCP.
    tok = token()
    inner = customer_frame(A, R, tok)
    assert_decapsulated(wire, inner, tok, ELAN_IN, "c1", fabric={"tc": 3}, vlan=100, pcp=3)
    wait_for(lambda: sw.macs(SVC).get(R, {}).get("source") == 1, what="R learned on source 1")
    assert sw.macs(SVC)[R].get("circuit") is None

    # A answers R: known remote unicast goes on the remote's unicast nhlfe only.
    tok = token()
    frame = from_customer("c1", R, A, tok, pcp=2)
    assert_encapsulated(wire, frame, tok, "f1", label=UNICAST_TO_REMOTE, tc=2, ttl=64)


def test_fabric_unknown_floods_to_local_circuits_only(sw, wire):
    elan(sw)
    tok = token()
    inner = customer_frame(UNKNOWN, R, tok)
    got = wire.exchange([("f1p", fabric_frame(MAC["f1"], PEER_MAC["f1"], ELAN_IN, inner, tc=5))],
                        expect=3, match=tok)
    assert_delivered(got, {"c1p": 1, "c2p": 1, "c3p": 1})
    for p in CIRCUIT:
        assert_customer(got[p + "p"][0], inner=inner, vlan=VLAN[p], pcp=5 if VLAN[p] else None)


def test_split_horizon(sw, wire):
    """A fabric frame whose destination is known behind the fabric is never
    sent back to the fabric."""
    elan(sw)
    learn_remote(sw, wire, R)
    tok = token()
    inner = customer_frame(R, "02:00:0a:00:00:ef", tok)
    got = wire.exchange([("f1p", fabric_frame(MAC["f1"], PEER_MAC["f1"], ELAN_IN, inner))],
                        match=tok)
    sw.wait_drops("f1", {"split_horizon": 1})
    assert_delivered(got, {})


def test_services_are_isolated(sw, wire):
    """Two E-LANs reuse VLAN 100 on different ports and the same host MACs:
    every frame stays in its own service and each learns A separately."""
    for sid, circuits in ((20, [(201, "c1", 100), (202, "c2", 100)]),
                          (21, [(211, "c3", 100), (212, "c2", 300)])):
        sw.rpc("service_add", id=sid, type="elan", name=f"pk-iso-{sid}")
        for cid, port, vlan in circuits:
            sw.rpc("circuit_add", id=cid, port=port, vlan=vlan, service=sid)

    def one(port, vlan, dst, src, out_port, out_vlan):
        tok = token()
        frame = customer_frame(dst, src, tok, vlan=vlan, pcp=1)
        got = wire.exchange([(port + "p", frame)], expect=1, match=tok)
        assert_delivered(got, {out_port + "p": 1})
        assert_customer(got[out_port + "p"][0], inner=untag(frame), vlan=out_vlan, pcp=1)

    one("c1", 100, BCAST, A, "c2", 100)      # service 20: A on c1
    one("c3", 100, BCAST, A, "c2", 300)      # service 21: the same A on c3
    wait_for(lambda: sw.macs(20).get(A, {}).get("circuit") == 201
             and sw.macs(21).get(A, {}).get("circuit") == 211, what="A learned in both services")
    assert sw.service(20)["stats"]["moves"] == 0 and sw.service(21)["stats"]["moves"] == 0
    one("c2", 100, A, B, "c1", 100)          # known unicast in service 20
    one("c2", 300, A, B, "c3", 100)          # known unicast in service 21
    one("c2", 100, UNKNOWN, B, "c1", 100)    # unknown unicast floods within 20 only


def test_mac_moves_between_circuit_and_fabric(sw, wire):
    elan(sw)
    learn(sw, wire, "c1", A)
    learn_remote(sw, wire, A, dst=BCAST)            # A now answers from behind the fabric
    assert sw.macs(SVC)[A].get("circuit") is None
    tok = token()
    frame = from_customer("c2", A, B, tok)
    got = wire.exchange([("c2p", frame)], expect=1, match=tok)
    assert_fabric_out(got, "f1", label=UNICAST_TO_REMOTE, tc=0, ttl=64, inner=untag(frame))
    learn(sw, wire, "c1", A)                         # and back
    wait_for(lambda: sw.service(SVC)["stats"]["moves"] == 2, what="service moves == 2")


def test_unicast_goes_to_the_remote_it_was_learned_from(sw, wire):
    """Two remote leaves: a MAC learned from source 2's label is reached
    through source 2's nhlfe, not source 1's."""
    sw.nhlfe(11, "f1", 3001)
    sw.nhlfe(14, "f2", 3002)
    sw.rpc("service_add", id=SVC, type="elan", name="pk-2remotes",
           remotes=[{"source": 1, "nhlfe": 11}, {"source": 2, "nhlfe": 14}])
    sw.rpc("circuit_add", id=101, port="c1", vlan=100, service=SVC)
    sw.rpc("label_add", label=3500, type="elan", service=SVC, source=1)
    sw.rpc("label_add", label=3501, type="elan", service=SVC, source=2)
    r1, r2 = "02:00:0a:00:01:01", "02:00:0a:00:02:02"
    for label, port, mac in ((3500, "f1", r1), (3501, "f2", r2)):
        tok = token()
        inner = customer_frame(A, mac, tok)
        got = wire.exchange([(port + "p", fabric_frame(MAC[port], PEER_MAC[port], label, inner))],
                            expect=1, match=tok)
        assert_delivered(got, {"c1p": 1})
    wait_for(lambda: {m: e.get("source") for m, e in sw.macs(SVC).items()} == {r1: 1, r2: 2},
             what="r1 on source 1 and r2 on source 2")
    for dst, port, label in ((r2, "f2", 3002), (r1, "f1", 3001)):
        tok = token()
        frame = from_customer("c1", dst, A, tok)
        got = wire.exchange([("c1p", frame)], expect=1, match=tok)
        assert_delivered(got, {port + "p": 1})
        assert_fabric(got[port + "p"][0], dst=PEER_MAC[port], src=MAC[port], label=label, tc=0,
                      ttl=64, inner=untag(frame))


def test_circuit_delete_forgets_its_macs(sw, wire):
    elan(sw)
    learn(sw, wire, "c1", A)
    learn(sw, wire, "c2", B)
    sw.rpc("circuit_del", id=CIRCUIT["c1"])
    wait_for(lambda: set(sw.macs(SVC)) == {B}, what="only B left")
    # Traffic to A now floods to what is left of the service.
    tok = token()
    frame = from_customer("c2", A, B, tok)
    got = wire.exchange([("c2p", frame)], expect=3, match=tok)
    assert_delivered(got, {"c3p": 1, "f1p": 1, "f2p": 1})
    # And the port's VLAN is no circuit any more.
    tok = token()
    wire.exchange([("c1p", from_customer("c1", B, A, tok))], match=tok)
    sw.wait_drops("c1", {"no_circuit": 1})


def test_global_mac_limit_applies_to_services_without_their_own(sw, wire):
    sw.rpc("settings_set", mac_limit=1)
    elan(sw)
    learn(sw, wire, "c1", A)
    tok = token()
    wire.exchange([("c2p", from_customer("c2", BCAST, B, tok))], expect=4, match=tok)
    wait_for(lambda: sw.service(SVC)["stats"]["limit_hits"] >= 1, what="limit_hits >= 1")
    assert set(sw.macs(SVC)) == {A}


def test_multicast_source_is_forwarded_not_learned(sw, wire):
    elan(sw)
    assert_floods(wire, "c1", BCAST, MCAST, pcp=2)
    learn(sw, wire, "c1", A)          # a later, valid source is learned: learning has run
    assert set(sw.macs(SVC)) == {A}


def test_label_from_a_port_it_does_not_take_is_dropped_unlearned(sw, wire):
    """A rogue fabric neighbour: the label is valid, but arrives on f2 while
    its entry takes frames only from f1 (its upstream). Dropped and counted,
    never learned from; the same frame on f1 is delivered and learned."""
    elan(sw)
    sw.rpc("label_add", label=ELAN_IN, type="elan", service=SVC, source=1, in_ports=["f1"])
    assert sw.rpc("label_list", label=ELAN_IN)[0]["in_ports"] == ["f1"]
    learn(sw, wire, "c1", A)
    tok = token()
    inner = customer_frame(A, R, tok)
    got = wire.exchange([("f2p", fabric_frame(MAC["f2"], PEER_MAC["f2"], ELAN_IN, inner))],
                        expect=0, quiet=0.3)
    assert_delivered(got, {})
    sw.wait_drops("f2", {"label_wrong_port": 1})
    assert R not in sw.macs(SVC)
    got = wire.exchange([("f1p", fabric_frame(MAC["f1"], PEER_MAC["f1"], ELAN_IN, inner))],
                        expect=1, match=tok)
    assert_delivered(got, {"c1p": 1})
    wait_for(lambda: sw.macs(SVC).get(R, {}).get("source") == 1, what="R learned from f1")


def test_in_ports_refusals(sw):
    elan(sw)
    with pytest.raises(Exception, match="not a fabric port"):
        sw.rpc("label_add", label=ELAN_IN, type="elan", service=SVC, source=1, in_ports=["c1"])
    with pytest.raises(Exception, match="not found"):
        sw.rpc("label_add", label=ELAN_IN, type="elan", service=SVC, source=1, in_ports=["nope"])
    sw.rpc("label_add", label=ELAN_IN, type="elan", service=SVC, source=1, in_ports=["f2", "f1"])
    assert sorted(sw.rpc("label_list", label=ELAN_IN)[0]["in_ports"]) == ["f1", "f2"]
    with pytest.raises(Exception, match="used by|busy|in use"):
        sw.rpc("port_del", name="f2")


def test_mac_flood_in_one_service_leaves_another_learning(sw, wire):
    """Service 20 (limit 50) is flooded with 500 source MACs: it keeps 50,
    every refused one is counted, and service 21 still learns."""
    for sid, limit, cid, port, vlan in ((20, 50, 201, "c1", 100), (21, 0, 211, "c2", 100)):
        params = dict(id=sid, type="elan", name=f"pk-flood-{sid}")
        if limit:
            params["mac_limit"] = limit
        sw.rpc("service_add", **params)
        sw.rpc("circuit_add", id=cid, port=port, vlan=vlan, service=sid)
        sw.rpc("circuit_add", id=cid + 1, port="c3", vlan=vlan + sid, service=sid)
    flood = [("c1p", customer_frame(BCAST, "02:00:0b:00:%02x:%02x" % (i >> 8, i & 0xff), b"flood",
                                     vlan=100)) for i in range(500)]
    wire.exchange(flood, expect=0, quiet=0.5)
    wait_for(lambda: sw.service(20)["stats"]["limit_hits"] == 450, what="450 refused in 20")
    st = sw.service(20)
    assert st["macs"] == 50 and st["stats"]["learned"] == 50, st
    assert st["stats"]["learn_lost"] == 0 and st["stats"]["table_full"] == 0, st
    tok = token()
    wire.exchange([("c2p", customer_frame(BCAST, B, tok, vlan=100))], expect=1, match=tok)
    wait_for(lambda: sw.macs(21).get(B, {}).get("circuit") == 211, what="B learned in 21")
    assert sw.service(21)["stats"]["limit_hits"] == 0


def test_flapping_mac_is_frozen(sw, wire):
    """More than mac_move_limit moves within the window: the MAC stays
    where it is, and each further move is refused and counted."""
    elan(sw)
    sw.rpc("settings_set", mac_move_limit=3, mac_move_window_s=600)
    learn(sw, wire, "c1", A)
    for k, port in enumerate(["c2", "c1", "c2"], 1):     # three moves: allowed
        learn(sw, wire, port, A)
        assert sw.service(SVC)["stats"]["moves"] == k
    tok = token()
    wire.exchange([("c1p", from_customer("c1", BCAST, A, tok))], expect=4, match=tok)
    wait_for(lambda: sw.service(SVC)["stats"]["moves_refused"] == 1, what="fourth move refused")
    st = sw.service(SVC)["stats"]
    assert st["frozen"] == 1 and st["moves"] == 3, st
    a = sw.macs(SVC)[A]
    assert a["circuit"] == CIRCUIT["c2"] and 0 < a["frozen_s"] <= 600, a
    tok = token()
    wire.exchange([("c1p", from_customer("c1", BCAST, A, tok))], expect=4, match=tok)
    wait_for(lambda: sw.service(SVC)["stats"]["moves_refused"] == 2, what="fifth move refused")
    assert sw.macs(SVC)[A]["circuit"] == CIRCUIT["c2"]


def test_circuit_mac_limit(sw, wire):
    """c1 may hold 2 MACs: a third is refused and counted on the circuit and
    the service, while c2 keeps learning."""
    elan(sw)
    sw.rpc("circuit_add", id=CIRCUIT["c1"], port="c1", vlan=VLAN["c1"], service=SVC, mac_limit=2)
    macs = ["02:00:0a:00:02:%02x" % i for i in range(3)]
    for m in macs[:2]:
        learn(sw, wire, "c1", m)
    tok = token()
    wire.exchange([("c1p", from_customer("c1", BCAST, macs[2], tok))], expect=4, match=tok)

    def c1():
        (c,) = [c for c in sw.rpc("circuit_list") if c["id"] == CIRCUIT["c1"]]
        return c
    wait_for(lambda: c1()["stats"]["limit_hits"] == 1, what="c1 refused one")
    c1 = c1()
    assert c1["mac_limit"] == 2 and c1["stats"]["macs"] == 2, c1
    assert macs[2] not in sw.macs(SVC)
    assert sw.service(SVC)["stats"]["limit_hits"] == 1
    learn(sw, wire, "c2", macs[2])          # the same MAC, on another circuit: room there
