"""REPLICATE (a node of an E-LAN's flood tree): a frame from the RPF port is
copied to every other branch with that branch's label (a transit hop: TTL-1,
our MACs, TC kept) and, on a member leaf, delivered to the local circuits
and learned against its source; from any other port it is dropped rpf_fail."""
from pkt_frames import assert_customer, assert_fabric, customer_frame, fabric_frame, token
from pkt_net import assert_delivered, wait_for
from pkt_switch import MAC, PEER_MAC, assert_fabric_out

SVC = 10
TREE_IN = 4000
BRANCH = {"f1": 4001, "f2": 4002, "f3": 4003}   # f1 is the RPF port: toward the source
R = "02:00:0a:00:00:ee"
BCAST = "ff:ff:ff:ff:ff:ff"


def tree(sw, local):
    for i, (port, label) in enumerate(BRANCH.items()):
        sw.nhlfe(31 + i, port, label)
    params = dict(label=TREE_IN, type="replicate", rpf_port="f1", branches=[31, 32, 33])
    if local:
        sw.nhlfe(21, "f1", 3001)
        sw.rpc("service_add", id=SVC, type="elan", name="pk-tree",
               remotes=[{"source": 2, "nhlfe": 21}])
        sw.rpc("circuit_add", id=101, port="c1", vlan=100, service=SVC)
        sw.rpc("circuit_add", id=102, port="c2", vlan="untagged", service=SVC)
        params.update(service=SVC, source=2)
    sw.rpc("label_add", **params)


def test_replicate_with_local_delivery(sw, wire):
    tree(sw, local=True)
    tok = token()
    inner = customer_frame(BCAST, R, tok)
    frame = fabric_frame(MAC["f1"], PEER_MAC["f1"], TREE_IN, inner, tc=4, ttl=60)
    got = wire.exchange([("f1p", frame)], expect=4, match=tok)
    # Never back toward the source (f1), one copy per other branch, one per local circuit.
    assert_delivered(got, {"f2p": 1, "f3p": 1, "c1p": 1, "c2p": 1})
    for port in ("f2", "f3"):
        assert_fabric(got[port + "p"][0], dst=PEER_MAC[port], src=MAC[port], label=BRANCH[port],
                      tc=4, ttl=59, inner=inner)
    assert_customer(got["c1p"][0], inner=inner, vlan=100, pcp=4)
    assert_customer(got["c2p"][0], inner=inner, vlan=None)
    # Learned against the tree's source: unicast back to R takes source 2's nhlfe.
    wait_for(lambda: {m["mac"]: m.get("source") for m in sw.rpc("mac_list", service=SVC)} == {R: 2},
             what="R learned on source 2")
    tok = token()
    reply = customer_frame(R, "02:00:0a:00:00:0a", tok, vlan=100)
    got = wire.exchange([("c1p", reply)], expect=1, match=tok)
    assert_fabric_out(got, "f1", label=3001, tc=0, ttl=64, inner=reply[:12] + reply[16:])


def test_replicate_transit_only(sw, wire):
    """A spine: branches only, no local delivery."""
    tree(sw, local=False)
    tok = token()
    inner = customer_frame(BCAST, R, tok)
    got = wire.exchange([("f1p", fabric_frame(MAC["f1"], PEER_MAC["f1"], TREE_IN, inner, tc=1,
                                              ttl=2))], expect=2, match=tok)
    assert_delivered(got, {"f2p": 1, "f3p": 1})
    for port in ("f2", "f3"):
        assert_fabric(got[port + "p"][0], dst=PEER_MAC[port], src=MAC[port], label=BRANCH[port],
                      tc=1, ttl=1, inner=inner)


def test_replicate_rpf_fail(sw, wire):
    tree(sw, local=True)
    tok = token()
    inner = customer_frame(BCAST, R, tok)
    got = wire.exchange([("f2p", fabric_frame(MAC["f2"], PEER_MAC["f2"], TREE_IN, inner))],
                        match=tok)
    sw.wait_drops("f2", {"rpf_fail": 1})
    assert_delivered(got, {})
    assert sw.rpc("mac_list", service=SVC) == [], "a frame failing RPF must not teach MACs"


def test_replicate_local_delivery_to_known_mac(sw, wire):
    """Locally, a tree frame is an ELAN frame: to a known local MAC it goes
    to that circuit only (the branches still get their copies)."""
    tree(sw, local=True)
    a = "02:00:0a:00:00:0a"
    tok = token()
    learn_frame = customer_frame(BCAST, a, tok, vlan=100)
    got = wire.exchange([("c1p", learn_frame)], expect=1, match=tok)
    assert_delivered(got, {"c2p": 1})   # the service has no flood branches of its own
    wait_for(lambda: any(m["mac"] == a and m.get("circuit") == 101
                         for m in sw.rpc("mac_list", service=SVC)), what="a learned on circuit 101")
    tok = token()
    inner = customer_frame(a, R, tok)
    got = wire.exchange([("f1p", fabric_frame(MAC["f1"], PEER_MAC["f1"], TREE_IN, inner, ttl=9))],
                        expect=3, match=tok)
    assert_delivered(got, {"f2p": 1, "f3p": 1, "c1p": 1})
    assert_customer(got["c1p"][0], inner=inner, vlan=100, pcp=0)
    for port in ("f2", "f3"):
        assert_fabric(got[port + "p"][0], dst=PEER_MAC[port], src=MAC[port], label=BRANCH[port],
                      tc=0, ttl=8, inner=inner)
