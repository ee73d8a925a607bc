"""A warm restart (SIGUSR2, docs/ha.md): the switch asks its BFD neighbour
to wait (a Poll advertising a Desired Min TX of hold / multiplier, which the
neighbour answers with a Final), writes its checkpoint and exits 75; the
same command line then resumes from it before its first frame: the same
configuration, the session Up with the same discriminators (the neighbour,
whose own detection time is 150 ms, never times out and never sees it go
down), the learned MACs in place (known unicast is not flooded), and the
checkpoint used once. A checkpoint older than its hold restores the
configuration only; a corrupt one is set aside and the switch starts empty."""
import json
import os
import signal
import time

import pytest

from pkt_bfd import DOWN, INIT, UP, BfdPeer
from pkt_frames import customer_frame, token
from pkt_net import Wire, assert_delivered, wait_for
from pkt_switch import MAC, PEER_MAC, PEERS, Switch

HOLD_MS = 3000
SVC = 10
A, B = "02:00:0a:00:00:0a", "02:00:0a:00:00:0b"
BCAST = "ff:ff:ff:ff:ff:ff"
CIRCUIT = {"c1": 101, "c2": 102}


@pytest.fixture
def lab():
    ckpt = f"/tmp/pk-{os.getpid()}-warm.checkpoint"
    sw = Switch("warm", extra=["--checkpoint", ckpt, "--restart-hold-ms", str(HOLD_MS)])
    sw.start()
    wire = Wire(sw.ns, PEERS)
    peer = None
    try:
        sw.nexthop(1, "f1")
        sw.rpc("bfd_add", id=1, nexthop=1, multiplier=3)
        sw.nhlfe(11, "f1", 3001)
        sw.rpc("service_add", id=SVC, type="elan", name="warm", remotes=[{"source": 1, "nhlfe": 11}],
               branches=[11])
        for port, cid in CIRCUIT.items():
            sw.rpc("circuit_add", id=cid, port=port, vlan=100, service=SVC)
        peer = BfdPeer(sw.ns, "f1p", PEER_MAC["f1"], MAC["f1"], rx_us=50000)
        yield sw, wire, peer, ckpt
    finally:
        if peer is not None:
            peer.close()
        wire.close()
        sw.stop()
        for p in (ckpt, ckpt + ".bad", ckpt + ".tmp"):
            if os.path.exists(p):
                os.unlink(p)


def learn(sw, wire, port, mac):
    tok = token()
    wire.exchange([(port + "p", customer_frame(BCAST, mac, tok, vlan=100))], expect=2, match=tok)
    wait_for(lambda: sw.macs(SVC).get(mac, {}).get("circuit") == CIRCUIT[port], what=f"{mac} learned")


def session(sw):
    (b,) = sw.rpc("bfd_list")
    return b


def test_warm_restart_resumes_sessions_macs_and_config(lab):
    sw, wire, peer, ckpt = lab
    wait_for(lambda: peer.state == UP and session(sw)["state"] == "up", what="session up")
    learn(sw, wire, "c1", A)
    learn(sw, wire, "c2", B)
    before = {"config": sw.rpc("config_dump"), "bfd": session(sw), "macs": sw.macs(SVC),
              "boot": sw.rpc("system_info")["boot_id"]}
    peer.received.clear()

    assert sw.warm_restart() == 75, sw.log_tail()

    log = open(sw.logpath).read()
    assert f"warm restart: 1 BFD neighbours asked to wait {HOLD_MS} ms" in log, log
    assert "resumed from %s" % ckpt in log and "1 BFD sessions Up, 2 MACs" in log, log
    assert not os.path.exists(ckpt), "a checkpoint is used once"
    # The hold: a Poll with the longer interval, before the old process left.
    held = [p for p in peer.received if p["flags"] & 0x20 and p["tx_us"] >= HOLD_MS * 1000 // 3]
    assert held, peer.received[:5]
    # Resumed, not restarted: nothing the neighbour could see went down.
    assert sw.rpc("system_info")["boot_id"] != before["boot"]
    wait_for(lambda: any(p["tx_us"] < 1000000 for p in peer.received[peer.received.index(held[-1]):]),
             what="the configured interval advertised again")
    assert peer.timeouts == 0 and peer.state == UP
    assert {p["state"] for p in peer.received} == {UP}, sorted({p["state"] for p in peer.received})
    after = session(sw)
    for k in ("state", "local_disc", "remote_disc", "usable", "ups", "downs"):
        assert after[k] == before["bfd"][k], (k, before["bfd"], after)
    assert sw.rpc("config_dump") == before["config"]
    assert sw.macs(SVC).keys() == before["macs"].keys()
    for mac in (A, B):
        assert sw.macs(SVC)[mac]["circuit"] == before["macs"][mac]["circuit"]
    # Known unicast to B goes to c2 only: the MAC was not relearned by flooding.
    tok = token()
    got = wire.exchange([("c1p", customer_frame(B, A, tok, vlan=100))], expect=1, match=tok)
    assert_delivered(got, {"c2p": 1})
    # Still up well past the 150 ms it would have taken to notice a silence.
    time.sleep(0.5)
    assert peer.timeouts == 0 and session(sw)["state"] == "up"
    assert not {DOWN, INIT} & {p["state"] for p in peer.received}


def test_stale_checkpoint_restores_only_the_configuration(lab):
    sw, wire, peer, ckpt = lab
    wait_for(lambda: session(sw)["state"] == "up", what="session up")
    learn(sw, wire, "c1", A)
    config = sw.rpc("config_dump")
    sw.client.close()
    sw.proc.send_signal(signal.SIGUSR2)
    assert sw.proc.wait(30) == 75
    # Older than its hold: the neighbours have given up on the session.
    old = time.time() - HOLD_MS / 1000 - 1
    os.utime(ckpt, (old, old))
    with open(ckpt) as f:
        doc = f.read()
    d = json.loads(doc)
    d["written_ms"] -= HOLD_MS + 1000
    with open(ckpt, "w") as f:
        json.dump(d, f)
    sw.launch()
    sw.ports_ready()
    log = open(sw.logpath).read()
    assert "past the hold" in log, log
    assert sw.rpc("config_dump") == config
    assert sw.macs(SVC) == {}
    assert session(sw)["local_disc"] != d["bfd"][0]["local_disc"] or session(sw)["state"] != "up"


def test_corrupt_checkpoint_is_set_aside(lab):
    sw, _, _, ckpt = lab
    sw.client.close()
    sw.proc.send_signal(signal.SIGUSR2)
    assert sw.proc.wait(30) == 75
    with open(ckpt, "w") as f:
        f.write('{"version": 1, "config": ')
    sw.launch()
    log = open(sw.logpath).read()
    assert "checkpoint not used (kept as %s.bad)" % ckpt in log, log
    assert os.path.exists(ckpt + ".bad") and not os.path.exists(ckpt)
    assert sw.rpc("port_list") == []
