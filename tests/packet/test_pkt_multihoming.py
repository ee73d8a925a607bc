"""Circuits on a multi-homed segment, through a real e3-vswitchd: the BUM
filter of a circuit (non_df: another leaf is the segment's designated
forwarder; peers: the segment's other leaves, whose BUM stays out because
they delivered it there themselves) applies to BUM from the fabric only.
Known unicast and BUM from local circuits are not filtered."""
import pytest

from pkt_frames import assert_customer, customer_frame, fabric_frame, token
from pkt_net import assert_delivered, wait_for
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
def test_non_df_circuit_takes_no_bum_from_the_fabric(sw, wire, dst):
    setup(sw, c2={"non_df": True})
    for source in (1, 2):
        got, inner = from_fabric(wire, source, dst)
        assert_delivered(got, {"c1p": 1, "c3p": 1})
        assert_customer(got["c1p"][0], inner=inner, vlan=300, pcp=0)
    wait_for(lambda: filtered(sw) == 2, what="2 BUM copies filtered")


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
    got, _ = from_fabric(wire, 1, BCAST)
    assert_delivered(got, {})
    sw.wait_drops("f1", {"split_horizon": 1})


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


def test_site_mac_seen_from_a_peer_stays_local(sw, wire):
    """The site's MAC, learned on its circuit here, also comes from the
    segment's other leaf (the site sent a copy up each link): it stays on
    the circuit, where known unicast reaches it. From a leaf that is not on
    the segment it moves as any MAC does."""
    setup(sw, c2={"peers": [1]})
    site = "02:00:1e:00:00:5e"
    tok = token()
    wire.exchange([("c2p", customer_frame(BCAST, site, tok, vlan=300))], expect=2, match=tok)
    wait_for(lambda: sw.macs(SVC).get(site, {}).get("circuit") == CIRCUIT["c2"], what="site MAC on c2")
    def from_source(source, src):
        tok = token()
        port = "f1" if source == 1 else "f2"
        frame = fabric_frame(MAC[port], PEER_MAC[port], ELAN_IN[source], customer_frame(BCAST, src, tok))
        wire.exchange([(port + "p", frame)], expect=0, match=tok, quiet=0.2)

    from_source(1, site)
    # Learning is asynchronous: a MAC learned after it shows it was seen.
    marker = "02:00:1e:00:00:6e"
    from_source(1, marker)
    wait_for(lambda: sw.macs(SVC).get(marker, {}).get("source") == 1, what="marker learned")
    assert sw.macs(SVC)[site].get("circuit") == CIRCUIT["c2"], sw.macs(SVC)[site]
    from_source(2, site)
    wait_for(lambda: sw.macs(SVC).get(site, {}).get("source") == 2, what="site MAC moved to source 2")
