"""Transit (SWAP): label rewritten, TTL-1, MACs rewritten, TC and payload
kept; a TTL that would reach 0 drops the frame with ttl_expired."""
import pytest

from pkt_frames import customer_frame, fabric_frame, token
from pkt_net import assert_delivered, wait_for
from pkt_switch import MAC, PEER_MAC, assert_fabric_out

LABEL_IN = 5000
LABEL_OUT = 5001


def swap(sw):
    sw.nhlfe(7, "f2", LABEL_OUT)
    sw.rpc("label_add", label=LABEL_IN, type="swap", nhlfe=7)


@pytest.mark.parametrize("cw", [True, False], ids=["cw", "nocw"])
def test_swap_rewrites_label_ttl_macs(sw, wire, cw):
    if not cw:
        sw.rpc("settings_set", control_word=False)
    swap(sw)
    tok = token()
    inner = customer_frame("02:00:0a:00:00:02", "02:00:0a:00:00:01", tok)
    frame = fabric_frame(MAC["f1"], PEER_MAC["f1"], LABEL_IN, inner, tc=6, ttl=10, cw=cw)
    got = wire.exchange([("f1p", frame)], expect=1, match=tok)
    assert_fabric_out(got, "f2", label=LABEL_OUT, tc=6, ttl=9, inner=inner, cw=cw)
    wait_for(lambda: [x["pkts"] for x in sw.rpc("label_list", label=LABEL_IN)] == [1],
             what=f"label {LABEL_IN} pkts == 1")


def test_swap_back_out_of_the_arrival_port(sw, wire):
    """A next hop on the port the frame came in on is legal (a ring)."""
    sw.nhlfe(8, "f1", LABEL_OUT)
    sw.rpc("label_add", label=LABEL_IN, type="swap", nhlfe=8)
    tok = token()
    inner = customer_frame("02:00:0a:00:00:02", "02:00:0a:00:00:01", tok)
    got = wire.exchange([("f1p", fabric_frame(MAC["f1"], PEER_MAC["f1"], LABEL_IN, inner, ttl=64))],
                        expect=1, match=tok)
    assert_fabric_out(got, "f1", label=LABEL_OUT, tc=0, ttl=63, inner=inner)


@pytest.mark.parametrize("ttl", [1, 0])
def test_swap_ttl_expired(sw, wire, ttl):
    swap(sw)
    tok = token()
    inner = customer_frame("02:00:0a:00:00:02", "02:00:0a:00:00:01", tok)
    got = wire.exchange([("f1p", fabric_frame(MAC["f1"], PEER_MAC["f1"], LABEL_IN, inner, ttl=ttl))],
                        match=tok)
    sw.wait_drops("f1", {"ttl_expired": 1})
    assert_delivered(got, {})
    # ...and TTL 2 still passes, leaving with 1.
    tok = token()
    inner = customer_frame("02:00:0a:00:00:02", "02:00:0a:00:00:01", tok)
    got = wire.exchange([("f1p", fabric_frame(MAC["f1"], PEER_MAC["f1"], LABEL_IN, inner, ttl=2))],
                        expect=1, match=tok)
    assert_fabric_out(got, "f2", label=LABEL_OUT, tc=0, ttl=1, inner=inner)
