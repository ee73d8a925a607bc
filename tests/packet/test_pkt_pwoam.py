"""Pseudowire ping and trace (pw_ping, pw_oam_log): MPLS echo (RFC 8029)
in the PW's associated channel (RFC 6426, VCCV type 1 of RFC 5085), judged
field by field and by tshark. An egress answers in the PW's channel on the
reverse direction, an origin logs the round trip, a transit node whose TTL
runs out logs the label it would have switched to; no such frame ever
reaches a customer port, and malformed ones are counted."""
import struct
import time

import pytest

from pkt_frames import customer_frame, fabric_frame, mac_bytes, mpls_entry, token, tshark_frames
from pkt_net import assert_delivered, wait_for
from pkt_switch import MAC, PEER_MAC, e3rpc
from test_pkt_eline import HOST_A, HOST_B, LABEL_IN, LABEL_OUT, eline
from test_pkt_elan import ELAN_IN, SVC, UNICAST_TO_REMOTE, elan

ACH = b"\x10\x00\x00\x25"
NTP_OFFSET = 2208988800


def echo(kind, handle, seq, label, reply_mode=4, version=1, sent_ns=None):
    """An MPLS echo message with a Target FEC Stack of one Nil FEC."""
    ns = time.time_ns() if sent_ns is None else sent_ns
    s, f = ns // 10**9 + NTP_OFFSET, ((ns % 10**9) << 32) // 10**9
    return (struct.pack("!HHBBBBIIIIII", version, 0, kind, reply_mode, 0, 0, handle, seq, s, f, 0, 0)
            + struct.pack("!HHHHI", 1, 8, 16, 4, label << 12))


def oam_frame(port, label, msg, ttl=64, ach=ACH):
    return (mac_bytes(MAC[port]) + mac_bytes(PEER_MAC[port]) + b"\x88\x47" + mpls_entry(label, 7, 1, ttl)
            + ach + msg)


def log(sw, handle):
    return [e for e in sw.rpc("pw_oam_log")["events"] if e["handle"] == handle]


def parse_echo(frame):
    """(label, ttl, ach, echo fields) of a PW OAM frame as sent."""
    (lse,) = struct.unpack("!I", frame[14:18])
    f = struct.unpack("!HHBBBBIIIIII", frame[22:54])
    return lse >> 12, lse & 0xFF, frame[18:22], dict(zip(
        ("version", "flags", "type", "reply_mode", "rc", "rsc", "handle", "seq", "sent_s", "sent_f",
         "rcvd_s", "rcvd_f"), f))


def no_customer_frames(got):
    for p in ("c1p", "c2p", "c3p"):
        assert not got.get(p), f"an OAM frame reached customer port {p}"


def test_eline_egress_answers_on_the_reverse_pw(sw, wire):
    eline(sw)
    h = 0x0E3A0001
    req = oam_frame("f1", LABEL_IN, echo(1, h, 1, LABEL_IN))
    got = wire.exchange([("f1p", req)], expect=1, match=struct.pack("!I", h))
    assert_delivered(got, {"f1p": 1})
    no_customer_frames(got)
    reply = got["f1p"][0]
    assert reply[:12] == mac_bytes(PEER_MAC["f1"]) + mac_bytes(MAC["f1"])
    label, ttl, ach, e = parse_echo(reply)
    assert (label, ttl, ach) == (LABEL_OUT, 64, ACH)
    assert (e["type"], e["rc"], e["rsc"], e["handle"], e["seq"]) == (2, 3, 1, h, 1)
    assert e["rcvd_s"] > NTP_OFFSET, "the egress stamps the time it received the request"
    (pkt,) = tshark_frames([reply])
    assert pkt["pwach"]["pwach.channel_type"] == "0x0025"
    assert (pkt["mpls-echo"]["mpls_echo.msg_type"], pkt["mpls-echo"]["mpls_echo.return_code"],
            pkt["mpls-echo"]["mpls_echo.sender_handle"]) == ("2", "3", f"0x{h:08x}")
    (ev,) = log(sw, h)
    assert (ev["kind"], ev["label_in"], ev["service"], ev["seq"]) == ("egress", LABEL_IN, 1, 1)


def test_origin_sends_and_logs_the_round_trip(sw, wire):
    eline(sw)
    h = 0x0E3A0002
    got = wire.exchange([], expect=1, match=struct.pack("!I", h),
                        act=lambda: sw.rpc("pw_ping", service=1, handle=h, seq=7))
    assert_delivered(got, {"f1p": 1})
    req = got["f1p"][0]
    label, ttl, ach, e = parse_echo(req)
    assert (label, ttl, ach) == (LABEL_OUT, 64, ACH)
    assert (e["version"], e["type"], e["reply_mode"], e["handle"], e["seq"]) == (1, 1, 4, h, 7)
    (pkt,) = tshark_frames([req])
    assert pkt["mpls-echo"]["Target FEC Stack"]["FEC Element 1: Nil FEC"]["mpls_echo.tlv.fec.nil_label"] \
        == str(LABEL_OUT)
    # The far end's reply, on our label for the E-Line.
    reply = bytearray(req[22:])
    reply[4], reply[6] = 2, 3
    wire.exchange([("f1p", oam_frame("f1", LABEL_IN, bytes(reply)))], quiet=0.3)
    wait_for(lambda: any(e["kind"] == "reply" for e in log(sw, h)), what="the reply logged")
    sent, rep = sorted(log(sw, h), key=lambda e: e["index"])
    assert (sent["kind"], sent["label_out"], sent["ttl"], sent["service"]) == ("sent", LABEL_OUT, 64, 1)
    assert (rep["kind"], rep["seq"], rep["service"], rep["return_code"], rep["label_in"]) == \
        ("reply", 7, 1, 3, LABEL_IN)
    assert rep["rtt_ns"] >= 0 and rep["time_ns"] >= sent["time_ns"]


def test_transit_logs_where_the_ttl_ran_out(sw, wire):
    sw.nhlfe(5, "f2", 400)
    sw.rpc("label_add", label=300, type="swap", nhlfe=5)
    h = 0x0E3A0003
    got = wire.exchange([("f1p", oam_frame("f1", 300, echo(1, h, 1, 300), ttl=1))], quiet=0.5)
    assert not any(got.values()), "a request whose TTL ran out goes no further"
    wait_for(lambda: log(sw, h), what="the transit logged")
    (ev,) = log(sw, h)
    assert (ev["kind"], ev["label_in"], ev["label_out"], ev["ttl"]) == ("transit", 300, 400, 1)
    assert "service" not in ev
    # TTL 2 goes on, swapped; a data frame with TTL 1 is still dropped.
    got = wire.exchange([("f1p", oam_frame("f1", 300, echo(1, h, 2, 300), ttl=2))], expect=1,
                        match=struct.pack("!II", h, 2))
    assert parse_echo(got["f2p"][0])[:2] == (400, 1)
    tok = token()
    wire.exchange([("f1p", fabric_frame(MAC["f1"], PEER_MAC["f1"], 300, customer_frame(HOST_A, HOST_B, tok),
                                        ttl=1))], quiet=0.3)
    sw.wait_drops("f1", {"ttl_expired": 1})


def test_elan_egress_answers_the_endpoint_it_came_from(sw, wire):
    elan(sw)
    h = 0x0E3A0004
    got = wire.exchange([("f1p", oam_frame("f1", ELAN_IN, echo(1, h, 1, ELAN_IN)))], expect=1,
                        match=struct.pack("!I", h))
    assert_delivered(got, {"f1p": 1})
    no_customer_frames(got)
    label, _, _, e = parse_echo(got["f1p"][0])
    assert (label, e["type"]) == (UNICAST_TO_REMOTE, 2)
    (ev,) = log(sw, h)
    assert (ev["kind"], ev["service"], ev["source"]) == ("egress", SVC, 1)
    assert sw.service(SVC)["macs"] == 0, "nothing learned from an OAM frame"


@pytest.mark.parametrize("what,frame", [
    ("echo version 2", lambda: oam_frame("f1", LABEL_IN, echo(1, 9, 1, LABEL_IN, version=2))),
    ("another channel type", lambda: oam_frame("f1", LABEL_IN, echo(1, 9, 1, LABEL_IN),
                                                ach=b"\x10\x00\x00\x07")),
    ("a message type that is neither", lambda: oam_frame("f1", LABEL_IN, echo(5, 9, 1, LABEL_IN))),
])
def test_bad_oam_is_counted_and_never_delivered(sw, wire, what, frame):
    eline(sw)
    got = wire.exchange([("f1p", frame())], quiet=0.5)
    assert not any(got.values()), what
    sw.wait_drops("f1", {"pw_oam_bad": 1})


def test_echo_flood_is_rate_limited_per_port(sw, wire):
    """A neighbour's flood of MPLS echo requests: past the port's punt rate
    each is dropped and counted, neither logged nor answered; what got in
    was answered, and a later request is answered again."""
    eline(sw)
    h, n = 0x0E3A00F1, 1000
    sends = [("f1p", oam_frame("f1", LABEL_IN, echo(1, h, seq, LABEL_IN))) for seq in range(n)]
    got = wire.exchange(sends, quiet=1.0, match=struct.pack("!I", h))
    answered = len(got["f1p"])
    wait_for(lambda: sum(sw.port_drops("f1").values()) + answered == n,
             what="every request answered or counted")
    # On a busy host the kernel's ring (512 frames) may overflow before the
    # switch polls it: counted as well.
    drops = sw.port_drops("f1")
    assert set(drops) <= {"pw_oam_rate_limited", "rx_ring_full"}, drops
    limited = drops.get("pw_oam_rate_limited", 0)
    assert limited > 0 and answered > 0, (limited, answered)
    assert len(log(sw, h)) == answered
    no_customer_frames(got)
    time.sleep(0.2)   # the bucket refills (10 a tenth of a second)
    h2 = h + 1
    got = wire.exchange([("f1p", oam_frame("f1", LABEL_IN, echo(1, h2, 1, LABEL_IN)))], expect=1,
                        match=struct.pack("!I", h2))
    assert_delivered(got, {"f1p": 1})


def test_replies_to_handles_not_ours_are_dropped(sw, wire):
    """A forged reply (a handle this node never sent) is dropped and
    counted, never logged; a flood of them leaves our own ping's reply
    alone."""
    eline(sw)
    h = 0x0E3A00F7
    sends = [("f1p", oam_frame("f1", LABEL_IN, echo(2, h, seq, LABEL_IN))) for seq in range(200)]
    wire.exchange(sends, quiet=0.3)
    sw.wait_drops("f1", {"pw_oam_unsolicited": 200})
    assert log(sw, h) == []


def test_refusals(sw):
    eline(sw)
    for params, code in (({"service": 77, "handle": 1}, -32000),
                         ({"service": 1}, -32602)):
        with pytest.raises(e3rpc.RpcError) as e:
            sw.rpc("pw_ping", **params)
        assert e.value.code == code
    sw.rpc("settings_set", control_word=False)
    with pytest.raises(e3rpc.RpcError, match="control word"):
        sw.rpc("pw_ping", service=1, handle=1)
