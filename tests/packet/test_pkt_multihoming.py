"""Circuits on a multi-homed site, through a real e3-vswitchd
(docs/multihoming.md):
- the BUM filter of a circuit (non_df: another leaf is the segment's
  designated forwarder, for flood-tree copies; peers: the segment's other
  leaves, whose BUM stays out because they delivered it there themselves;
  the site's own frames) applies to BUM from the fabric only; known
  unicast and BUM from local circuits are not filtered;
- frames from the site carry the segment label below the service's, and
  frames that carry it are learned as the site's, on its local circuit;
- a non-DF leaf of a site that floods (no LAG) drops the site's BUM."""
import struct

import pytest

from pkt_frames import (assert_customer, customer_frame, fabric_frame, mpls_entry, parse_fabric, token,
                        tshark_frames, untag)
from pkt_net import assert_delivered, nsexec, wait_for
from pkt_switch import MAC, PEER_MAC

SVC = 30
A = "02:00:1e:00:00:0a"        # host behind c1
BCAST = "ff:ff:ff:ff:ff:ff"
UNKNOWN = "02:00:1e:00:00:99"
CIRCUIT = {"c1": 301, "c2": 302, "c3": 303}
VLAN = {"c1": 300, "c2": 300, "c3": None}
ELAN_IN = {1: 3601, 2: 3602}   # our labels: service 30, from source 1 / 2
TREE_IN = 3700                 # flood tree rooted at source 2, local delivery


def setup(sw, c2=None):
    """The E-LAN with circuits c1 (single-homed), c2 (on a segment: its
    filter c2) and c3 (single-homed, untagged), and remotes 1 and 2."""
    sw.nhlfe(31, "f1", 4001)
    sw.nhlfe(32, "f2", 4002)
    sw.rpc("service_add", id=SVC, type="elan", remotes=[{"source": 1, "nhlfe": 31},
                                                        {"source": 2, "nhlfe": 32}])
    for port, cid in CIRCUIT.items():
        extra = (c2 or {}) if port == "c2" else {}
        sw.rpc("circuit_add", id=cid, port=port, vlan=VLAN[port] or "untagged", service=SVC, **extra)
    for source, label in ELAN_IN.items():
        sw.rpc("label_add", label=label, type="elan", service=SVC, source=source)
    sw.rpc("label_add", label=TREE_IN, type="replicate", rpf_port="f2", service=SVC, source=2)


def from_fabric(wire, source, dst, label=None):
    """A frame from remote source's leaf to dst; returns what came out."""
    tok = token()
    inner = customer_frame(dst, "02:00:1e:00:01:%02x" % source, tok)
    port = "f1" if source == 1 else "f2"
    frame = fabric_frame(MAC[port], PEER_MAC[port], label or ELAN_IN[source], inner)
    return wire.exchange([(port + "p", frame)], expect=0, match=tok, quiet=0.5), inner


def filtered(sw):
    return sw.service(SVC)["stats"]["bum_filtered"]


@pytest.mark.parametrize("dst", [BCAST, UNKNOWN], ids=["broadcast", "unknown-unicast"])
def test_non_df_circuit_takes_no_bum_from_a_flood_tree(sw, wire, dst):
    """Every leaf of the segment has a copy of a flood: only the DF's goes in."""
    setup(sw, c2={"non_df": True})
    got, inner = from_fabric(wire, 2, dst, label=TREE_IN)
    assert_delivered(got, {"c1p": 1, "c3p": 1})
    assert_customer(got["c1p"][0], inner=inner, vlan=300, pcp=0)
    wait_for(lambda: filtered(sw) == 1, what="1 BUM copy filtered")


def test_non_df_circuit_takes_unknown_unicast_sent_to_this_leaf_alone(sw, wire):
    """A frame on a unicast label was sent to this leaf only (the sender knew
    the MAC here, as it aliases a site over its leaves): its only copy."""
    setup(sw, c2={"non_df": True})
    got, inner = from_fabric(wire, 1, UNKNOWN)
    assert_delivered(got, {"c1p": 1, "c2p": 1, "c3p": 1})
    assert filtered(sw) == 0


def test_peer_bum_stays_out_of_the_segment(sw, wire):
    """Local bias: source 1 is on c2's segment and delivered its BUM there
    itself; source 2 is not, and c2 is the DF, so its BUM goes in."""
    setup(sw, c2={"peers": [1]})
    got, _ = from_fabric(wire, 1, BCAST)
    assert_delivered(got, {"c1p": 1, "c3p": 1})
    got, inner = from_fabric(wire, 2, BCAST)
    assert_delivered(got, {"c1p": 1, "c2p": 1, "c3p": 1})
    assert_customer(got["c2p"][0], inner=inner, vlan=300, pcp=0)
    wait_for(lambda: filtered(sw) == 1, what="1 BUM copy filtered")


def test_flood_tree_local_delivery_is_filtered_too(sw, wire):
    setup(sw, c2={"peers": [2]})
    got, _ = from_fabric(wire, 2, BCAST, label=TREE_IN)
    assert_delivered(got, {"c1p": 1, "c3p": 1})


def test_all_circuits_filtered_is_a_split_horizon_drop(sw, wire):
    setup(sw, c2={"non_df": True})
    for port in ("c1", "c3"):
        sw.rpc("circuit_add", id=CIRCUIT[port], port=port, vlan=VLAN[port] or "untagged",
               service=SVC, non_df=True)
    got, _ = from_fabric(wire, 2, BCAST, label=TREE_IN)
    assert_delivered(got, {})
    sw.wait_drops("f2", {"split_horizon": 1})


def test_local_bum_and_known_unicast_reach_a_non_df_circuit(sw, wire):
    """The leaf a frame enters serves its own segments (local bias), and
    known unicast is never filtered."""
    setup(sw, c2={"non_df": True, "peers": [1, 2]})
    tok = token()
    frame = customer_frame(BCAST, A, tok, vlan=300)
    got = wire.exchange([("c1p", frame)], expect=2, match=tok)
    assert_delivered(got, {"c2p": 1, "c3p": 1})
    wait_for(lambda: sw.macs(SVC).get(A, {}).get("circuit") == CIRCUIT["c1"], what="A learned")
    tok = token()
    b = "02:00:1e:00:00:0b"
    wire.exchange([("c2p", customer_frame(A, b, tok, vlan=300))], expect=1, match=tok)
    wait_for(lambda: sw.macs(SVC).get(b, {}).get("circuit") == CIRCUIT["c2"], what="B learned on c2")
    got, _ = from_fabric(wire, 1, b)
    assert_delivered(got, {"c2p": 1})
    assert filtered(sw) == 0


def test_filter_is_dumped_and_changed_in_place(sw, wire):
    setup(sw)
    r = sw.rpc("circuit_add", id=CIRCUIT["c2"], port="c2", vlan=300, service=SVC, non_df=True,
               peers=[1, 2])
    assert r["changed"] is True
    c2 = [c for c in sw.rpc("config_dump")["circuits"] if c["id"] == CIRCUIT["c2"]][0]
    assert c2["non_df"] is True and c2["peers"] == [1, 2], c2
    c1 = [c for c in sw.rpc("config_dump")["circuits"] if c["id"] == CIRCUIT["c1"]][0]
    assert "non_df" not in c1 and "peers" not in c1, c1
    again = sw.rpc("circuit_add", id=CIRCUIT["c2"], port="c2", vlan=300, service=SVC, non_df=True,
                   peers=[1, 2])
    assert again["changed"] is False
    got, _ = from_fabric(wire, 1, BCAST)
    assert_delivered(got, {"c1p": 1, "c3p": 1})
    sw.rpc("circuit_add", id=CIRCUIT["c2"], port="c2", vlan=300, service=SVC)
    got, _ = from_fabric(wire, 1, BCAST)
    assert_delivered(got, {"c1p": 1, "c2p": 1, "c3p": 1})


@pytest.mark.parametrize("params, message", [
    ({"peers": list(range(9))}, "more than 8"),
    ({"peers": [1024]}, "out of range"),
    ({"non_df": 1}, "true or false"),
])
def test_bad_filter_is_refused(sw, params, message):
    setup(sw)
    before = sw.rpc("config_dump")["circuits"]
    with pytest.raises(Exception, match=message):
        sw.rpc("circuit_add", id=CIRCUIT["c2"], port="c2", vlan=300, service=SVC, **params)
    assert sw.rpc("config_dump")["circuits"] == before


SEG_SOURCE, SEG_LABEL = 5, 3900   # the segment's source id and label (same on every leaf)
SITE = {"segment_source": SEG_SOURCE, "segment_label": SEG_LABEL, "peers": [1]}
M = "02:00:1e:00:00:5e"            # a host of the site


def segment_setup(sw, c2=SITE):
    setup(sw, c2=c2)
    sw.nhlfe(33, "f3", 4003)
    sw.rpc("service_add", id=SVC, type="elan", remotes=[{"source": 1, "nhlfe": 31}, {"source": 2, "nhlfe": 32}],
           branches=[33])
    sw.rpc("label_add", label=SEG_LABEL, type="elan", service=SVC, source=SEG_SOURCE)


def two_labels(frame):
    """(top, below, inner frame) of a fabric frame with two label entries."""
    (top, below) = struct.unpack("!II", frame[14:22])
    assert (top >> 8) & 1 == 0 and (below >> 8) & 1 == 1, frame[14:22].hex()
    assert frame[22:26] == bytes(4), "control word"
    return top >> 12, below >> 12, frame[26:]


def test_frames_from_the_site_carry_the_segment_label(sw, wire):
    """Known unicast and BUM from the site's circuit: the service's label,
    then the segment's at the bottom, as tshark reads them."""
    segment_setup(sw)
    remote = "02:00:1e:00:01:01"
    got, _ = from_fabric(wire, 1, BCAST)   # learn a host behind source 1
    wait_for(lambda: sw.macs(SVC).get("02:00:1e:00:01:01", {}).get("source") == 1, what="remote learned")
    tok = token()
    frame = customer_frame(remote, M, tok, vlan=300)
    got = wire.exchange([("c2p", frame)], expect=1, match=tok)
    assert_delivered(got, {"f1p": 1})
    assert two_labels(got["f1p"][0]) == (4001, SEG_LABEL, untag(frame))
    tok = token()
    frame = customer_frame(BCAST, M, tok, vlan=300)
    got = wire.exchange([("c2p", frame)], expect=3, match=tok)
    assert_delivered(got, {"c1p": 1, "c3p": 1, "f3p": 1})
    assert two_labels(got["f3p"][0]) == (4003, SEG_LABEL, untag(frame))
    (pkt,) = tshark_frames(got["f3p"][:1])
    assert pkt["frame"]["frame.protocols"].startswith("eth:ethertype:mpls:pwethheuristic:pwethcw:eth"), pkt
    # From a single-homed circuit: one label, as always.
    tok = token()
    got = wire.exchange([("c1p", customer_frame(remote, A, tok, vlan=300))], expect=1, match=tok)
    assert parse_fabric(got["f1p"][0]).s == 1


def site_frame(port, label, src, dst, tok, below=SEG_LABEL):
    inner = customer_frame(dst, src, tok)
    stack = mpls_entry(label, s=0) + mpls_entry(below)
    return (bytes.fromhex(MAC[port].replace(":", "")) + bytes.fromhex(PEER_MAC[port].replace(":", ""))
            + struct.pack("!H", 0x8847) + stack + bytes(4) + inner), inner


@pytest.mark.parametrize("label, port", [(ELAN_IN[1], "f1"), (TREE_IN, "f2")], ids=["unicast", "flood-tree"])
def test_site_frames_through_another_leaf_are_learned_as_the_sites(sw, wire, label, port):
    """A frame with the segment label came from the site through its other
    leaf: its source MAC is learned on the site's circuit here (not behind
    the fabric), its BUM stays out of the site, and unicast to it goes
    straight to the site."""
    segment_setup(sw)
    tok = token()
    frame, inner = site_frame(port, label, M, BCAST, tok)
    got = wire.exchange([(port + "p", frame)], expect=2, match=tok)
    assert_delivered(got, {"c1p": 1, "c3p": 1})
    wait_for(lambda: sw.macs(SVC).get(M, {}).get("circuit") == CIRCUIT["c2"], what="M learned on c2")
    tok = token()
    got = wire.exchange([("c1p", customer_frame(M, A, tok, vlan=300))], expect=1, match=tok)
    assert_delivered(got, {"c2p": 1})
    # To the site, from the site: back where it came from, dropped.
    tok = token()
    frame, _ = site_frame(port, label, "02:00:1e:00:00:5f", M, tok)
    got = wire.exchange([(port + "p", frame)], expect=0, match=tok, quiet=0.3)
    assert_delivered(got, {})
    sw.wait_drops(port, {"split_horizon": 1})


@pytest.mark.parametrize("below, why", [(3999, "no entry"), (ELAN_IN[2], "not the segment's: learned as is"),
                                        (9, "reserved")])
def test_bad_segment_labels_are_dropped(sw, wire, below, why):
    segment_setup(sw)
    sw.rpc("service_add", id=SVC + 1, type="elan")
    sw.rpc("label_add", label=3999, type="elan", service=SVC + 1, source=1)   # another service's
    tok = token()
    frame, _ = site_frame("f1", ELAN_IN[1], M, BCAST, tok, below=below)
    got = wire.exchange([("f1p", frame)], expect=0, match=tok, quiet=0.3)
    if below == ELAN_IN[2]:
        # An ELAN entry of the same service: the frame is taken as from source 2.
        assert_delivered(got, {"c1p": 1, "c2p": 1, "c3p": 1})
        wait_for(lambda: sw.macs(SVC).get(M, {}).get("source") == 2, what="learned from source 2")
        return
    assert_delivered(got, {})
    sw.wait_drops("f1", {"label_stacked": 1})


def test_segment_label_from_a_port_off_the_sites_paths_is_dropped(sw, wire):
    """The segment label takes frames only from its own ports (those of the
    site's leaves' paths), whatever the label above it takes: a neighbour
    elsewhere cannot have a frame learned as the site's."""
    segment_setup(sw)
    sw.rpc("label_add", label=SEG_LABEL, type="elan", service=SVC, source=SEG_SOURCE, in_ports=["f1"])
    tok = token()
    frame, _ = site_frame("f2", ELAN_IN[2], M, BCAST, tok)
    got = wire.exchange([("f2p", frame)], expect=0, match=tok, quiet=0.3)
    assert_delivered(got, {})
    sw.wait_drops("f2", {"label_wrong_port": 1})
    assert M not in sw.macs(SVC)
    # From its own port it is taken.
    tok = token()
    frame, _ = site_frame("f1", ELAN_IN[1], M, BCAST, tok)
    got = wire.exchange([("f1p", frame)], expect=2, match=tok)
    assert_delivered(got, {"c1p": 1, "c3p": 1})
    wait_for(lambda: sw.macs(SVC).get(M, {}).get("circuit") == CIRCUIT["c2"], what="M learned on c2")


def test_three_labels_are_dropped(sw, wire):
    segment_setup(sw)
    tok = token()
    inner = customer_frame(BCAST, M, tok)
    frame = (bytes.fromhex(MAC["f1"].replace(":", "")) + bytes.fromhex(PEER_MAC["f1"].replace(":", ""))
             + struct.pack("!H", 0x8847) + mpls_entry(ELAN_IN[1], s=0) + mpls_entry(SEG_LABEL, s=0)
             + mpls_entry(SEG_LABEL) + bytes(4) + inner)
    got = wire.exchange([("f1p", frame)], expect=0, match=tok, quiet=0.3)
    assert_delivered(got, {})
    sw.wait_drops("f1", {"label_stacked": 1})


def test_non_df_leaf_drops_the_bum_of_a_site_that_floods(sw, wire):
    """A site without a LAG sends its BUM up every link: only the DF takes
    it; known unicast is taken by any of its leaves."""
    segment_setup(sw, c2=dict(SITE, non_df=True, site_floods=True))
    tok = token()
    got = wire.exchange([("c2p", customer_frame(BCAST, M, tok, vlan=300))], expect=0, match=tok, quiet=0.3)
    assert_delivered(got, {})
    sw.wait_drops("c2", {"not_df": 1})
    wait_for(lambda: sw.macs(SVC).get(M, {}).get("circuit") == CIRCUIT["c2"], what="M learned all the same")
    tok = token()
    got = wire.exchange([("c2p", customer_frame(A, M, tok, vlan=300))], expect=0, match=tok, quiet=0.3)
    assert_delivered(got, {})                         # A unknown: BUM, dropped too
    from_fabric(wire, 1, BCAST)
    tok = token()
    got = wire.exchange([("c2p", customer_frame("02:00:1e:00:01:01", M, tok, vlan=300))], expect=1, match=tok)
    assert_delivered(got, {"f1p": 1})                 # known: taken
    # The DF takes it.
    sw.rpc("circuit_add", id=CIRCUIT["c2"], port="c2", vlan=300, service=SVC, **dict(SITE, site_floods=True))
    tok = token()
    got = wire.exchange([("c2p", customer_frame(BCAST, M, tok, vlan=300))], expect=3, match=tok)
    assert_delivered(got, {"c1p": 1, "c3p": 1, "f3p": 1})


def circuit_stats(sw, cid):
    (c,) = [c for c in sw.rpc("circuit_list") if c["id"] == cid]
    return c["stats"]


def test_a_new_announce_value_announces_the_other_macs_into_the_site(sw, wire, tmp_path):
    """Each new `announce` value sends into the circuit one RARP broadcast
    per MAC the service knows elsewhere (here A on c1 and a host behind
    source 1), tagged as the circuit, with that MAC as source; MACs learned
    on the circuit itself are not announced, and the same value again
    sends nothing."""
    segment_setup(sw)
    remote = "02:00:1e:00:01:01"
    from_fabric(wire, 1, BCAST)
    tok = token()
    wire.exchange([("c1p", customer_frame(BCAST, A, tok, vlan=300))], expect=3, match=tok)
    tok = token()
    wire.exchange([("c2p", customer_frame(BCAST, M, tok, vlan=300))], expect=3, match=tok)
    wait_for(lambda: {A, remote, M} <= set(sw.macs(SVC)), what="three MACs learned")
    params = dict(id=CIRCUIT["c2"], port="c2", vlan=300, service=SVC, **SITE)
    for value, expect in ((7, 2), (7, 0), (8, 2)):
        got = wire.exchange([], expect=expect, match=b"\x80\x35", timeout=3, quiet=0.3,
                            act=lambda: sw.rpc("circuit_add", announce=value, **params))
        rarp = [f for f in got["c2p"] if f[16:18] == b"\x80\x35"]
        assert sorted(f[6:12].hex(":") for f in rarp) == ([] if not expect else sorted([A, remote])), rarp
        assert not any(got[p] for p in got if p != "c2p"), got
        if expect:
            pkts = tshark_frames(rarp)
            assert all(p["vlan"]["vlan.id"] == "300" and p["arp"]["arp.opcode"] == "3" for p in pkts), pkts
    assert circuit_stats(sw, CIRCUIT["c2"])["announced"] == 4
    assert [c for c in sw.rpc("config_dump")["circuits"] if c["id"] == CIRCUIT["c2"]][0]["announce"] == 8


CIRCUIT_LABEL = 3950     # our circuit entry for c2: what another leaf of the site redirects


def test_a_circuit_entry_delivers_into_the_sites_circuit(sw, wire):
    segment_setup(sw)
    sw.rpc("label_add", label=CIRCUIT_LABEL, type="circuit", circuit=CIRCUIT["c2"])
    tok = token()
    inner = customer_frame(M, "02:00:1e:00:01:01", tok)
    got = wire.exchange([("f1p", fabric_frame(MAC["f1"], PEER_MAC["f1"], CIRCUIT_LABEL, inner))], expect=1,
                        match=tok)
    assert_delivered(got, {"c2p": 1})
    assert_customer(got["c2p"][0], inner=inner, vlan=300, pcp=0)
    assert "02:00:1e:00:01:01" not in sw.macs(SVC)         # delivered, not learned
    assert [l for l in sw.rpc("label_list") if l["label"] == CIRCUIT_LABEL][0]["circuit"] == CIRCUIT["c2"]


def test_frames_for_a_site_whose_port_is_down_go_to_its_other_leaf(sw, wire):
    """c2's port loses carrier: known unicast for the site and BUM copies
    for it go to its redirect NHLFE (one label: the other leaf's circuit
    entry), once; what came by a circuit entry is not sent back."""
    segment_setup(sw)
    sw.nhlfe(34, "f1", 4100)
    sw.rpc("circuit_add", id=CIRCUIT["c2"], port="c2", vlan=300, service=SVC, redirect=34, **SITE)
    sw.rpc("label_add", label=CIRCUIT_LABEL, type="circuit", circuit=CIRCUIT["c2"])
    tok = token()
    wire.exchange([("c2p", customer_frame(BCAST, M, tok, vlan=300))], expect=3, match=tok)
    wait_for(lambda: sw.macs(SVC).get(M, {}).get("circuit") == CIRCUIT["c2"], what="M learned on c2")
    nsexec(sw.ns, "ip", "link", "set", "c2p", "down")
    try:
        wait_for(lambda: sw.port("c2")["link"] == "down", what="c2 down")
        got, inner = from_fabric(wire, 2, M)
        assert_delivered(got, {"f1p": 1})
        f = parse_fabric(got["f1p"][0])
        assert (f.label, f.s, f.inner) == (4100, 1, inner)
        tok = token()
        frame = customer_frame(BCAST, A, tok, vlan=300)
        got = wire.exchange([("c1p", frame)], expect=3, match=tok)
        assert_delivered(got, {"c3p": 1, "f3p": 1, "f1p": 1})   # the flood, and c2's copy redirected
        assert parse_fabric(got["f1p"][0]).label == 4100
        assert sw.service(SVC)["stats"]["redirected"] == 2
        got = wire.exchange([("f1p", fabric_frame(MAC["f1"], PEER_MAC["f1"], CIRCUIT_LABEL, inner))],
                            expect=0, match=inner[-16:], quiet=0.3)
        assert_delivered(got, {})
        sw.wait_drops("f1", {"no_nexthop": 1})
    finally:
        nsexec(sw.ns, "ip", "link", "set", "c2p", "up")


@pytest.mark.parametrize("params, message", [
    ({"type": "circuit"}, "missing param 'circuit'"),
    ({"type": "circuit", "circuit": 302, "nhlfe": 31}, "'nhlfe': does not apply"),
    ({"type": "circuit", "circuit": 70000}, "out of range"),
])
def test_bad_circuit_entries_are_refused(sw, params, message):
    segment_setup(sw)
    before = sw.rpc("config_dump")
    with pytest.raises(Exception, match=message):
        sw.rpc("label_add", label=CIRCUIT_LABEL, **params)
    assert sw.rpc("config_dump") == before


def test_a_redirect_to_a_missing_nhlfe_is_refused(sw):
    segment_setup(sw)
    before = sw.rpc("config_dump")
    with pytest.raises(Exception, match="redirect: nhlfe 99 not found"):
        sw.rpc("circuit_add", id=CIRCUIT["c2"], port="c2", vlan=300, service=SVC, redirect=99)
    assert sw.rpc("config_dump") == before


def test_the_sites_macs_learned_behind_the_fabric_come_back_with_the_segment_source(sw, wire):
    """Without its segment source (its link to the site was down), the leaf
    learns the site's MACs behind the fabric; given it again, it forgets
    them there, so the next frame for them floods into the site."""
    segment_setup(sw, c2={"segment_label": SEG_LABEL, "peers": [1]})
    tok = token()
    frame, _ = site_frame("f1", ELAN_IN[1], M, BCAST, tok)
    wire.exchange([("f1p", frame)], expect=2, match=tok)
    wait_for(lambda: sw.macs(SVC).get(M, {}).get("source") == SEG_SOURCE, what="M behind the fabric")
    sw.rpc("circuit_add", id=CIRCUIT["c2"], port="c2", vlan=300, service=SVC, **SITE)
    assert M not in sw.macs(SVC)
    tok = token()
    got = wire.exchange([("c1p", customer_frame(M, A, tok, vlan=300))], expect=3, match=tok)
    assert got["c2p"], got


def test_an_active_standby_eline_takes_the_sites_frames_at_its_df_only(sw, wire):
    """An E-Line's circuit on a site whose DF is another leaf (non_df) takes
    nothing from the site, and still delivers what the fabric sends it (the
    far end switches to this leaf when the DF's leg fails)."""
    sw.nhlfe(31, "f1", 4001)
    sw.rpc("service_add", id=40, type="eline", nhlfe=31)
    sw.rpc("circuit_add", id=401, port="c1", vlan=500, service=40, non_df=True, site_floods=True)
    sw.rpc("label_add", label=4500, type="eline", service=40)
    tok = token()
    got = wire.exchange([("c1p", customer_frame(UNKNOWN, A, tok, vlan=500))], expect=0, match=tok, quiet=0.3)
    assert_delivered(got, {})
    sw.wait_drops("c1", {"not_df": 1})
    tok = token()
    inner = customer_frame(A, UNKNOWN, tok)
    got = wire.exchange([("f1p", fabric_frame(MAC["f1"], PEER_MAC["f1"], 4500, inner))], expect=1, match=tok)
    assert_delivered(got, {"c1p": 1})
    sw.rpc("circuit_add", id=401, port="c1", vlan=500, service=40, site_floods=True)   # the DF now
    tok = token()
    got = wire.exchange([("c1p", customer_frame(UNKNOWN, A, tok, vlan=500))], expect=1, match=tok)
    assert_delivered(got, {"f1p": 1})
