"""E-Line through a real e3-vswitchd: ingress encapsulation (with and without
the control word, judged field by field and by tshark), egress
decapsulation onto tagged and untagged circuits, and hairpin E-Lines."""
import pytest

from pkt_frames import (assert_customer, assert_fabric, customer_frame, fabric_frame, token,
                        tshark_frames, untag)
from pkt_net import assert_delivered, wait_for
from pkt_switch import MAC, PEER_MAC, assert_decapsulated, assert_encapsulated, assert_fabric_out

HOST_A = "02:00:0a:00:00:01"
HOST_B = "02:00:0a:00:00:02"
LABEL_OUT = 100     # the remote leaf's label for this E-Line (we write it)
LABEL_IN = 200      # our label for this E-Line (the remote leaf writes it)


def eline(sw, port="c1", vlan=1000, sid=1):
    """E-Line `sid`: circuit (port, vlan) <-> nhlfe (f1, LABEL_OUT); LABEL_IN terminates it."""
    sw.nhlfe(sid, "f1", LABEL_OUT)
    sw.rpc("service_add", id=sid, type="eline", name=f"pk-eline-{sid}", nhlfe=sid)
    sw.rpc("circuit_add", id=sid, port=port, vlan=vlan, service=sid)
    sw.rpc("label_add", label=LABEL_IN, type="eline", service=sid)


def test_ingress_with_control_word(sw, wire):
    eline(sw)
    tok = token()
    frame = customer_frame(HOST_B, HOST_A, tok, vlan=1000, pcp=5)
    got = wire.exchange([("c1p", frame)], expect=1, match=tok)
    assert_fabric_out(got, "f1", label=LABEL_OUT, tc=5, ttl=64, inner=untag(frame))
    out = got["f1p"][0]
    assert sw.port("f1")["mac"].lower() == MAC["f1"]

    # tshark, told only that label 100 is an Ethernet PW with control word,
    # must find MPLS over Ethernet carrying the customer's frame.
    (pkt,) = tshark_frames([out], [f"mpls.label=={LABEL_OUT},pwethcw"])
    outer, inner = pkt["eth"]
    assert (outer["eth.dst"], outer["eth.src"], outer["eth.type"]) == (PEER_MAC["f1"], MAC["f1"], "0x8847")
    assert pkt["mpls"] == {"mpls.label": str(LABEL_OUT), "mpls.exp": "5", "mpls.bottom": "1",
                           "mpls.ttl": "64"}
    assert pkt["pweth.cw"] == "1" and pkt["pwethcw"]["pweth.cw.sequence_number"] == "0"
    assert (inner["eth.dst"], inner["eth.src"], inner["eth.type"]) == (HOST_B, HOST_A, "0x0800")
    assert "vlan" not in pkt, "the service tag must not cross the fabric"
    assert (pkt["ip"]["ip.src"], pkt["ip"]["ip.dst"]) == ("10.0.0.1", "10.0.0.2")
    assert tok.hex() in pkt["data"]["data.data"].replace(":", "")

    wait_for(lambda: sw.port("c1")["stats"]["rx_pkts"] == 1 and sw.port("f1")["stats"]["tx_pkts"] == 1,
             what="c1 rx_pkts == 1 and f1 tx_pkts == 1")


def test_ingress_without_control_word(sw, wire):
    sw.rpc("settings_set", control_word=False)
    eline(sw)
    tok = token()
    frame = customer_frame(HOST_B, HOST_A, tok, vlan=1000, pcp=2)
    got = wire.exchange([("c1p", frame)], expect=1, match=tok)
    assert_fabric_out(got, "f1", label=LABEL_OUT, tc=2, ttl=64, inner=untag(frame), cw=False)
    out = got["f1p"][0]
    assert len(out) - len(untag(frame)) == 18

    (pkt,) = tshark_frames([out], [f"mpls.label=={LABEL_OUT},pwethnocw"])
    assert "pwethcw" not in pkt
    assert pkt["mpls"]["mpls.label"] == str(LABEL_OUT) and pkt["mpls"]["mpls.exp"] == "2"
    assert [e["eth.dst"] for e in pkt["eth"]] == [PEER_MAC["f1"], HOST_B]
    assert [e["eth.src"] for e in pkt["eth"]] == [MAC["f1"], HOST_A]


def test_ingress_keeps_customer_inner_tag(sw, wire):
    """Only the service-delimiting tag is removed; a customer's own (inner)
    tag is customer data and crosses untouched."""
    eline(sw)
    tok = token()
    frame = customer_frame(HOST_B, HOST_A, tok, vlan=1000, pcp=1, inner_vlan=42)
    assert_encapsulated(wire, frame, tok, "f1", label=LABEL_OUT, tc=1, ttl=64)


def test_ingress_configured_ttl(sw, wire):
    sw.rpc("settings_set", ttl=17)
    eline(sw)
    tok = token()
    frame = customer_frame(HOST_B, HOST_A, tok, vlan=1000)
    assert_encapsulated(wire, frame, tok, "f1", label=LABEL_OUT, tc=0, ttl=17)


def test_egress_tagged_pcp_from_tc(sw, wire):
    eline(sw, port="c2", vlan=2000)
    sends, inners = [], {}
    for tc in (0, 3, 7):
        tok = token()
        inner = customer_frame(HOST_A, HOST_B, tok)
        inners[tok] = (tc, inner)
        sends.append(("f1p", fabric_frame(MAC["f1"], PEER_MAC["f1"], LABEL_IN, inner, tc=tc, ttl=63)))
    got = wire.exchange(sends, expect=3)
    assert_delivered(got, {"c2p": 3})
    for out in got["c2p"]:
        (tok,) = [t for t in inners if t in out]
        tc, inner = inners[tok]
        assert_customer(out, inner=inner, vlan=2000, pcp=tc)
    wait_for(lambda: [x["pkts"] for x in sw.rpc("label_list", label=LABEL_IN)] == [3],
             what="label 200 pkts == 3")


def test_egress_untagged_circuit(sw, wire):
    eline(sw, port="c3", vlan="untagged")
    tok = token()
    inner = customer_frame(HOST_A, HOST_B, tok)
    assert_decapsulated(wire, inner, tok, LABEL_IN, "c3", fabric={"tc": 4}, vlan=None)


def test_ingress_untagged_circuit(sw, wire):
    eline(sw, port="c3", vlan="untagged")
    tok = token()
    frame = customer_frame(HOST_B, HOST_A, tok)
    got = wire.exchange([("c3p", frame)], expect=1, match=tok)
    assert_fabric_out(got, "f1", label=LABEL_OUT, tc=0, ttl=64, inner=frame)


def test_egress_without_control_word(sw, wire):
    sw.rpc("settings_set", control_word=False)
    eline(sw, port="c2", vlan=2000)
    tok = token()
    inner = customer_frame(HOST_A, HOST_B, tok)
    got = wire.exchange([("f1p", fabric_frame(MAC["f1"], PEER_MAC["f1"], LABEL_IN, inner, tc=6,
                                              cw=False))], expect=1, match=tok)
    assert_delivered(got, {"c2p": 1})
    assert_customer(got["c2p"][0], inner=inner, vlan=2000, pcp=6)


def test_hairpin(sw, wire):
    """Both circuits of the E-Line on this node: no fabric at all."""
    sw.rpc("service_add", id=5, type="eline", name="pk-hairpin")
    sw.rpc("circuit_add", id=51, port="c1", vlan=1000, service=5)
    sw.rpc("circuit_add", id=52, port="c2", vlan=2000, service=5)
    tok1, tok2 = token(), token()
    a_to_b = customer_frame(HOST_B, HOST_A, tok1, vlan=1000, pcp=3)
    b_to_a = customer_frame(HOST_A, HOST_B, tok2, vlan=2000, pcp=6)
    got = wire.exchange([("c1p", a_to_b)], expect=1, match=tok1)
    assert_delivered(got, {"c2p": 1})
    assert_customer(got["c2p"][0], inner=untag(a_to_b), vlan=2000, pcp=3)
    got = wire.exchange([("c2p", b_to_a)], expect=1, match=tok2)
    assert_delivered(got, {"c1p": 1})
    assert_customer(got["c1p"][0], inner=untag(b_to_a), vlan=1000, pcp=6)


def test_elines_reusing_a_vlan_are_isolated(sw, wire):
    """VLAN 1000 on c1 and VLAN 1000 on c2 are two different E-Lines (VLANs
    are local to a port); the same host MACs in both never cross."""
    for sid, port, label_out, label_in in ((1, "c1", 100, 200), (2, "c2", 101, 201)):
        sw.nhlfe(sid, "f1", label_out)
        sw.rpc("service_add", id=sid, type="eline", name=f"pk-iso-{sid}", nhlfe=sid)
        sw.rpc("circuit_add", id=sid, port=port, vlan=1000, service=sid)
        sw.rpc("label_add", label=label_in, type="eline", service=sid)
    for port, label_out in (("c1", 100), ("c2", 101)):
        tok = token()
        frame = customer_frame(HOST_B, HOST_A, tok, vlan=1000, pcp=2)
        got = wire.exchange([(port + "p", frame)], expect=1, match=tok)
        assert_fabric_out(got, "f1", label=label_out, tc=2, ttl=64, inner=untag(frame))
    for label_in, port in ((200, "c1"), (201, "c2")):
        tok = token()
        inner = customer_frame(HOST_A, HOST_B, tok)
        got = wire.exchange([("f1p", fabric_frame(MAC["f1"], PEER_MAC["f1"], label_in, inner))],
                            expect=1, match=tok)
        assert_delivered(got, {port + "p": 1})
        assert_customer(got[port + "p"][0], inner=inner, vlan=1000, pcp=0)


def test_egress_ttl_one_still_delivered_at_the_leaf(sw, wire):
    """Only a transit hop needs TTL > 1; the leaf pops the label."""
    eline(sw, port="c2", vlan=2000)
    tok = token()
    inner = customer_frame(HOST_A, HOST_B, tok)
    assert_decapsulated(wire, inner, tok, LABEL_IN, "c2", fabric={"ttl": 1}, vlan=2000, pcp=0)


def test_repoint_eline_to_another_path(sw, wire):
    """Re-adding the service with another nhlfe moves its traffic at once
    (make-before-break from the controller's side)."""
    eline(sw)
    sw.nhlfe(9, "f2", 150)
    sw.rpc("service_add", id=1, type="eline", name="pk-eline-1", nhlfe=9)
    tok = token()
    frame = customer_frame(HOST_B, HOST_A, tok, vlan=1000, pcp=7)
    assert_encapsulated(wire, frame, tok, "f2", label=150, tc=7, ttl=64)
    # The old nhlfe is free again: re-pointing it changes nothing for the service.
    sw.rpc("nhlfe_add", id=1, nexthop=1, label=160)
    tok = token()
    frame = customer_frame(HOST_B, HOST_A, tok, vlan=1000)
    assert_encapsulated(wire, frame, tok, "f2", label=150, tc=0, ttl=64)


def test_relabel_nhlfe_in_place(sw, wire):
    """Changing the label of the nhlfe a service uses takes effect on the next frame."""
    eline(sw)
    sw.rpc("nhlfe_add", id=1, nexthop=1, label=170)
    tok = token()
    frame = customer_frame(HOST_B, HOST_A, tok, vlan=1000)
    assert_encapsulated(wire, frame, tok, "f1", label=170, tc=0, ttl=64)


def test_whole_port_circuit_carries_other_tags(sw, wire):
    """An untagged circuit is the whole port: a tagged frame whose VLAN has no
    circuit of its own rides it with its tag kept as customer data (and a
    priority tag, VID 0, likewise); the PCP still maps to TC."""
    eline(sw, port="c3", vlan="untagged")
    for vid, pcp in ((77, 3), (0, 5)):
        tok = token()
        frame = customer_frame(HOST_B, HOST_A, tok, vlan=vid, pcp=pcp)
        got = wire.exchange([("c3p", frame)], expect=1, match=tok)
        assert_fabric_out(got, "f1", label=LABEL_OUT, tc=pcp, ttl=64, inner=frame)


def test_branch_copies_each_frame_during_a_move(sw, wire):
    """An E-Line whose other end is moving: each frame from its circuit goes
    to the old place (its nhlfe) and a copy to the new one (its branch),
    both whole; without the branch, to the old place only. A second branch,
    or one without an nhlfe, is refused."""
    eline(sw)
    sw.nhlfe(9, "f2", 900)
    sw.rpc("service_add", id=1, type="eline", name="pk-eline-1", nhlfe=1, branches=[9])
    tok = token()
    frame = customer_frame(HOST_B, HOST_A, tok, vlan=1000, pcp=3)
    got = wire.exchange([("c1p", frame)], expect=2, match=tok)
    assert_delivered(got, {"f1p": 1, "f2p": 1})
    assert_fabric(got["f1p"][0], dst=PEER_MAC["f1"], src=MAC["f1"], label=LABEL_OUT, tc=3, ttl=64,
                  inner=untag(frame))
    assert_fabric(got["f2p"][0], dst=PEER_MAC["f2"], src=MAC["f2"], label=900, tc=3, ttl=64,
                  inner=untag(frame))

    sw.nhlfe(10, "f3", 1000)
    for params, msg in (({"nhlfe": 1, "branches": [9, 10]}, "at most 1"),
                        ({"branches": [9]}, "needs an nhlfe"),
                        ({"nhlfe": 1, "branches": [1]}, "given twice"),
                        ({"nhlfe": 1, "remotes": [{"source": 1, "nhlfe": 9}]}, "elan")):
        with pytest.raises(Exception, match=msg):
            sw.rpc("service_add", id=1, type="eline", name="pk-eline-1", **params)

    sw.rpc("service_add", id=1, type="eline", name="pk-eline-1", nhlfe=1)   # the move is over
    tok = token()
    frame = customer_frame(HOST_B, HOST_A, tok, vlan=1000)
    got = wire.exchange([("c1p", frame)], expect=1, match=tok)
    assert_delivered(got, {"f1p": 1})
