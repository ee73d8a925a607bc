"""A warm restart (SIGUSR2, docs/ha.md): the switch asks its BFD neighbour
to wait (a Poll advertising a Desired Min TX of hold / multiplier, which the
neighbour answers with a Final), writes its checkpoint and exits 75; the
same command line then resumes from it before its first frame: the same
configuration, the session Up with the same discriminators (the neighbour,
whose own detection time is 150 ms, never times out and never sees it go
down), the learned MACs in place (known unicast is not flooded), and the
checkpoint used once. A checkpoint older than its hold restores the
configuration only; a corrupt one is set aside and the switch starts empty.

A handover (SIGHUP) does the same without a gap for the start: a new
process of the binary opens the ports beside the old one, which then stops
and passes it the live state. A stream crossing it arrives with no frame
twice (the new process drops what the old one forwarded); the old one names
the new one to systemd (MAINPID, then a barrier) before it exits; a new
pid that af_packet could not open the ports on is skipped; and a new
process that dies on the way leaves the old one forwarding."""
import json
import os
import re
import select
import signal
import socket
import struct
import threading
import time

import pytest

from pkt_bfd import DOWN, INIT, UP, neighbour_on_f1
from pkt_frames import customer_frame, token
from pkt_net import assert_delivered, nsexec, wait_for
from pkt_switch import CUSTOMER, FABRIC, Switch

HOLD_MS = 3000
SVC = 10
A, B = "02:00:0a:00:00:0a", "02:00:0a:00:00:0b"
BCAST = "ff:ff:ff:ff:ff:ff"
CIRCUIT = {"c1": 101, "c2": 102}


class Notify:
    """systemd's notification socket, as far as the switch uses it: records
    each message and closes the descriptors passed (a barrier's)."""

    def __init__(self):
        self.path = f"/tmp/pk-{os.getpid()}-notify"
        self.messages = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            try:
                msg, anc, _, _ = self.sock.recvmsg(4096, socket.CMSG_SPACE(16))
            except OSError:
                return
            fds = [fd for level, typ, data in anc if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS
                   for fd in struct.unpack(f"{len(data) // 4}i", data[:len(data) - len(data) % 4])]
            self.messages.append((msg.decode(), len(fds)))
            for fd in fds:
                os.close(fd)

    def close(self):
        self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        os.unlink(self.path)


@pytest.fixture
def lab():
    ckpt = f"/tmp/pk-{os.getpid()}-warm.checkpoint"
    notify = Notify()
    sw = Switch("warm", extra=["--checkpoint", ckpt, "--restart-hold-ms", str(HOLD_MS)],
                env={"NOTIFY_SOCKET": notify.path})
    sw.notify = notify

    def elan(sw):
        sw.nhlfe(11, "f1", 3001)
        sw.rpc("service_add", id=SVC, type="elan", name="warm", remotes=[{"source": 1, "nhlfe": 11}],
               branches=[11])
        for port, cid in CIRCUIT.items():
            sw.rpc("circuit_add", id=cid, port=port, vlan=100, service=SVC)
    try:
        with neighbour_on_f1(sw, elan, rx_us=50000) as (wire, peer):
            yield sw, wire, peer, ckpt
    finally:
        notify.close()
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


def settled(sw, wire, peer):
    """The session Up, A learned on c1 and B on c2; returns what the node
    holds then."""
    wait_for(lambda: peer.state == UP and session(sw)["state"] == "up", what="session up")
    learn(sw, wire, "c1", A)
    learn(sw, wire, "c2", B)
    return {"config": sw.rpc("config_dump"), "bfd": session(sw), "macs": sw.macs(SVC),
            "boot": sw.rpc("system_info")["boot_id"]}


def test_warm_restart_resumes_sessions_macs_and_config(lab):
    sw, wire, peer, ckpt = lab
    before = settled(sw, wire, peer)
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


class Stream:
    """Known unicast c1 -> c2, a numbered frame every millisecond or so, in
    a thread; received() is the numbers that arrived on c2, in order."""

    def __init__(self, wire):
        self.wire, self.tok = wire, token()
        self.template = bytes(customer_frame(B, A, self.tok + b"00000000", vlan=100))
        self.sent, self.done = 0, threading.Event()
        self.thread = threading.Thread(target=self._run)

    def __enter__(self):
        self.wire.drain()
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()

    def _run(self):
        while not self.done.is_set():
            self.wire.send("c1p", self.template.replace(self.tok + b"00000000",
                                                       self.tok + b"%08d" % self.sent))
            self.sent += 1
            time.sleep(0.001)

    def received(self, wait=10):
        """Until 0.3 s pass with nothing more after the last frame sent, or
        wait seconds (a busy host may hold a switch back longer than that
        pause)."""
        sock, got = self.wire.socks["c2p"], []
        pat = re.compile(re.escape(self.tok) + rb"(\d{8})")
        deadline = time.monotonic() + wait
        while True:
            if select.select([sock], [], [], 0.3)[0]:
                frame = self.wire._recv(sock)
                m = pat.search(frame) if frame else None
                if m:
                    got.append(int(m.group(1)))
            elif got[-1:] == [self.sent - 1] or time.monotonic() > deadline:
                return got


def nices(pid):
    """The nice values of pid's threads."""
    out = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/stat") as f:
            out.add(int(f.read().rsplit(")", 1)[1].split()[16]))
    return out


def test_handover_moves_the_node_to_a_new_process(lab):
    sw, wire, peer, _ = lab
    before = settled(sw, wire, peer)
    old = sw.proc.pid
    peer.received.clear()

    with Stream(wire) as stream:
        rc, pid = sw.handover()
        time.sleep(0.3)     # frames for the new process alone
    got = stream.received()

    assert rc == 0 and pid != old
    log = open(sw.logpath).read()
    assert f"handover: pid {pid} starting" in log and f"handed over to pid {pid}" in log, log
    assert "took over: 1 BFD sessions Up, 2 MACs" in log, log
    # systemd would follow the new process: named, then a barrier, before the old one left.
    assert sw.notify.messages[:2] == [(f"MAINPID={pid}\n", 0), ("BARRIER=1\n", 1)], sw.notify.messages
    # What the old process forwarded, the new one did not forward again.
    assert len(got) == len(set(got)), sorted(n for n in set(got) if got.count(n) > 1)[:10]
    assert got == sorted(got)
    assert stream.sent - 1 in got, (stream.sent, got[-5:])   # the new process forwards
    # It started at a low priority, so as not to take the CPUs from the
    # process still forwarding, and forwards at the old one's (ours).
    assert nices(pid) == {os.getpriority(os.PRIO_PROCESS, 0)}, nices(pid)
    # The neighbour held on and never saw the session go down.
    assert peer.timeouts == 0 and peer.state == UP
    assert {p["state"] for p in peer.received} == {UP}
    after = session(sw)
    for k in ("state", "local_disc", "remote_disc", "usable", "ups", "downs"):
        assert after[k] == before["bfd"][k], (k, before["bfd"], after)
    assert sw.rpc("config_dump") == before["config"]
    assert {m: v["circuit"] for m, v in sw.macs(SVC).items()} == \
        {m: v["circuit"] for m, v in before["macs"].items()}

    # And the new process can hand over in turn.
    rc, again = sw.handover()
    assert rc is None and again != pid
    assert sw.rpc("config_dump") == before["config"]
    assert peer.timeouts == 0 and session(sw)["state"] == "up"


def fanout_clash(sw, pid):
    """A free pid whose af_packet fanout groups (pid XOR ifindex, 16 bits)
    would meet pid's on another of the switch's interfaces, or None."""
    links = json.loads(nsexec(sw.ns, "ip", "-j", "link", "show").stdout)
    ifx = [x["ifindex"] for x in links if x["ifname"] in CUSTOMER + FABRIC]
    with open("/proc/sys/kernel/pid_max") as f:
        pid_max = int(f.read())
    return next((t for t in sorted({pid ^ a ^ b for a in ifx for b in ifx if a != b})
                 if 300 < t < pid_max and not os.path.exists(f"/proc/{t}")), None)


def test_handover_skips_a_pid_whose_fanout_groups_are_taken(lab):
    """DPDK's af_packet names a port's fanout group by pid and interface,
    so a new process on the wrong pid could not open its ports beside the
    old one's. The next pid is made that one (ns_last_pid); the switch forks
    again."""
    sw, wire, peer, _ = lab
    settled(sw, wire, peer)
    old = sw.proc.pid
    taken = fanout_clash(sw, old)
    assert taken is not None
    with open("/proc/sys/kernel/ns_last_pid", "w") as f:
        f.write(str(taken - 1))
    rc, pid = sw.handover()

    assert rc == 0 and pid not in (old, taken)
    log = open(sw.logpath).read()
    assert f"handed over to pid {pid}" in log and "PACKET_FANOUT" not in log, log
    tok = token()
    got = wire.exchange([("c1p", customer_frame(B, A, tok, vlan=100))], expect=1, match=tok)
    assert_delivered(got, {"c2p": 1})


def test_handover_to_a_process_that_dies_leaves_the_old_one_forwarding(lab):
    sw, wire, peer, _ = lab
    settled(sw, wire, peer)
    sw.proc.send_signal(signal.SIGHUP)
    started = wait_for(lambda: re.search(r"handover: pid (\d+) starting", open(sw.logpath).read()),
                       what="the new process started")
    os.kill(int(started.group(1)), signal.SIGKILL)
    wait_for(lambda: "abandoned" in open(sw.logpath).read(), what="the handover abandoned")

    assert sw.proc.poll() is None
    assert sw.rpc("system_info")["pid"] == sw.proc.pid
    tok = token()
    got = wire.exchange([("c1p", customer_frame(B, A, tok, vlan=100))], expect=1, match=tok)
    assert_delivered(got, {"c2p": 1})
    assert peer.timeouts == 0 and session(sw)["state"] == "up"
