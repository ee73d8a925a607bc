"""A planned stop (SIGTERM) tells the neighbours first: e3-vswitchd sends
BFD AdminDown on every session (RFC 5880 6.8.16), which tshark dissects as
such, keeps forwarding for its grace period while they move their traffic,
then exits cleanly. A switch with no session up has nobody to tell, and
exits without a grace."""
import signal

import pytest

from pkt_bfd import ADMIN_DOWN, UP, gach_frame, neighbour_on_f1
from pkt_frames import customer_frame, token, tshark_frames
from pkt_net import assert_delivered, wait_for
from pkt_switch import MAC, PEER_MAC, Switch

GRACE_MS = 5000


def eline(sw):
    sw.rpc("nhlfe_add", id=1, nexthop=1, label=100)
    sw.rpc("service_add", id=1, type="eline", name="stop", nhlfe=1)
    sw.rpc("circuit_add", id=1, port="c1", vlan=1000, service=1)


@pytest.fixture
def lab():
    sw = Switch("stop", extra=["--stop-grace-ms", str(GRACE_MS)])
    with neighbour_on_f1(sw, eline) as (wire, peer):
        yield sw, wire, peer


def test_sigterm_sends_admin_down_then_forwards_until_the_grace_ends(lab):
    sw, wire, peer = lab
    wait_for(lambda: any(p["state"] == UP for p in peer.received), what="session up")
    peer.received.clear()
    sw.proc.send_signal(signal.SIGTERM)
    wait_for(lambda: any(p["state"] == ADMIN_DOWN for p in peer.received), what="AdminDown from the switch")
    down = next(p for p in peer.received if p["state"] == ADMIN_DOWN)
    assert down["diag"] == 7 and down["your_disc"] == peer.my_disc, down
    (pkt,) = tshark_frames([gach_frame(PEER_MAC["f1"], MAC["f1"], down["raw"])])
    assert pkt["bfd"]["bfd.sta"] == "0x00" and pkt["bfd"]["bfd.diag"] == "0x07", pkt["bfd"]
    # Still forwarding during the grace.
    tok = token()
    got = wire.exchange([("c1p", customer_frame("02:00:00:00:00:0b", "02:00:00:00:00:0a", tok, vlan=1000))],
                        expect=1, match=tok)
    assert_delivered(got, {"f1p": 1})
    assert sw.proc.poll() is None, "the switch left before its grace ended"
    assert sw.proc.wait(GRACE_MS / 1000 + 30) == 0
    log = open(sw.logpath).read()
    assert "BFD AdminDown on 1 sessions" in log, log


def test_no_session_up_exits_at_once(lab):
    sw, _, peer = lab
    peer.close()
    sw.rpc("bfd_del", id=1)
    sw.proc.send_signal(signal.SIGTERM)
    assert sw.proc.wait(30) == 0
    log = open(sw.logpath).read()
    assert "AdminDown" not in log and "shutting down" in log, log
