"""Drive e3-pktgen: a session (one process, links kept up, one trial per
request) or a single one-shot trial."""
import json
import os
import shutil
import subprocess
import threading
import time

from . import host

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PKTGEN = os.environ.get("E3_PKTGEN", os.path.join(ROOT, "build", "bin", "e3-pktgen"))

# memif rings of 2^14 slots: a switch that the hypervisor or a neighbour's
# compile preempts for a few milliseconds must not lose frames for that
# alone. The client (the generator) sizes the rings; the server side
# states the same for clarity.
MEMIF_RING_LOG2 = 14
MEMIF_RING = 1 << MEMIF_RING_LOG2
# Zero-copy links' rings (switches.py says why smaller).
ZC_RING_LOG2 = 12


def ring_slots(link):
    """The slots of a link's rings ("copy" or "zc"): what a switch can fall
    behind by before it loses frames."""
    return 1 << (ZC_RING_LOG2 if link == "zc" else MEMIF_RING_LOG2)


# The generator as a switch's VM: its virtio ring slots each way. As many
# as a memif ring's: with a VM's 1024 every trial here lost frames to the
# host's preemptions, down to 2 Mpps.
VIRTIO_RING = MEMIF_RING


def memif_devargs(index, sock, role, zero_copy=False, link_id=None, ring_log2=MEMIF_RING_LOG2):
    """Port `index` of a process; both ends of a link share its socket and id."""
    zc = ",zero-copy=yes" if zero_copy else ""
    link_id = index if link_id is None else link_id
    return (f"net_memif{index},role={role},id={link_id},socket={sock},socket-abstract=no,"
            f"rsize={ring_log2}{zc}")


def pushback(res):
    """Of the sends of a flat-out trial (its result), the fraction the
    switch's input ring took only in part: near 1, the switch is what limits
    the rate, not the generator. None when the trial counted no sends (it
    was not flat out)."""
    if not res or not res.get("tx_bursts"):
        return None
    return res["tx_pushback"] / res["tx_bursts"]


# PVP: the generator sleeps this long whenever it has nothing to do, so the
# VM on its CPU (at idle priority) runs (benchlib/switches.py).
VM_IDLE_SLEEP_US = 30


class PktgenError(RuntimeError):
    pass


class Pktgen:
    """The generator: memif clients to `sockets` (generator port i <-> socket i),
    one lcore on `cpu`, or a lane per CPU of `cpus` (e3-pktgen's lanes: lane
    k sends on queues k, k + lanes, ... of every port, `queues` of them).

    With a hugetlbfs (`huge_dir`) the clients are zero-copy: the switch
    (the server) copies into and out of the generator's own mbufs, and the
    generator copies nothing. That needs the EAL memory in one file per
    socket (--single-file-segments) and an mbuf for every slot of every
    ring. Without, plain pages and copy mode (a copy-mode client tops out
    near 15 Mpps here). `servers` adds memif server ports before the clients
    (the generator looped to itself); `idle_sleep_us` makes it sleep when a
    poll finds nothing to do (a VM shares its CPU). `vhost` makes it a
    switch's VM: a virtio_user port on each of those vhost-user sockets,
    after the memif ports; with `vhost_server` it makes those sockets and
    the switch connects."""

    def __init__(self, sockets, cpu=0, prefix="bn-pg", mem_mb=512, binary=PKTGEN, log=None,
                 rx_queues=1, huge_dir=None, servers=(), idle_sleep_us=0, cpus=None, queues=None,
                 ring=MEMIF_RING, vhost=(), vhost_server=False):
        """ring: slots of the memif rings (the client's rsize): a lane
        catching up after a preemption sends at most half of that at once."""
        self.sockets = list(sockets)
        self.servers = list(servers)
        self.vhost = list(vhost)
        self.vhost_server = vhost_server
        self.cpus = list(cpus) if cpus else [cpu]
        self.queues = queues or len(self.cpus)
        self.rx_queues = max(rx_queues, self.queues)
        self.link_timeout = 30
        self.prefix = prefix
        # Zero-copy clients fill every ring slot with an mbuf of their own.
        nports = len(self.sockets) + len(self.servers)
        self.mbufs = (nports * (self.rx_queues + self.queues) * MEMIF_RING
                      + len(self.vhost) * 2 * self.queues * VIRTIO_RING + 8191)
        self.mem_mb = max(mem_mb, self.mbufs * 2304 // 2**20 + 256) if huge_dir or vhost else mem_mb
        self.binary = binary
        self.log = log
        self.huge_dir = huge_dir
        self.idle_sleep_us = idle_sleep_us
        self.ring = ring

    def command(self, streams, rate=0, duration=None, count=None, learn=(), learn_rate=None,
                warmup=None, imix=False, verify=True):
        zc = bool(self.huge_dir)
        mem = (["--huge-dir", self.huge_dir, "--socket-limit", str(self.mem_mb),
                "--single-file-segments", "--iova-mode", "va"] if zc
               else ["--no-huge", "-m", str(self.mem_mb)])
        lcores = ",".join(f"{k}@{c}" for k, c in enumerate(self.cpus))
        cmd = [self.binary, "--lcores", lcores, "--no-pci", *mem,
               *host.eal_plugin_args(), "--file-prefix", self.prefix, "--log-level", "3"]
        clients = [("client", i, sock) for i, sock in enumerate(self.sockets)]
        servers = [("server", i, sock) for i, sock in enumerate(self.servers)]
        # DPDK's memif creates a socket's server before its client in one
        # process only in that order: servers are ports 0..n-1.
        for port, (role, link, sock) in enumerate(servers + clients):
            cmd += ["--vdev", memif_devargs(port, sock, role, zero_copy=zc and role == "client",
                                            link_id=link)]
        vhost = [f"net_virtio_user{i},path={sock},queues={self.queues},queue_size={VIRTIO_RING}"
                 for i, sock in enumerate(self.vhost)]
        if not self.vhost_server:
            cmd += [a for v in vhost for a in ("--vdev", v)]
        cmd += ["--", "--queues", str(self.queues), "--rx-queues", str(self.rx_queues)]
        if self.vhost_server:
            # Its probe waits for the switch, which connects our memif
            # servers first: after they are up.
            cmd += [a for v in vhost for a in ("--late-vdev", v + ",server=1")]
        if zc or self.vhost:
            # Every RX ring slot holds one of our mbufs, every TX slot one
            # until the server has copied it; plus bursts in hand.
            cmd += ["--mbufs", str(self.mbufs)]
        if self.ring != MEMIF_RING:
            cmd += ["--catch-up", str(self.ring // 2)]
        if self.idle_sleep_us:
            cmd += ["--idle-sleep-us", str(self.idle_sleep_us)]
        for s in streams:
            cmd += ["--stream", s]
        for s in learn:
            cmd += ["--learn", s]
        if learn_rate:
            cmd += ["--learn-rate", str(int(learn_rate))]
        cmd += ["--rate", str(int(rate))]
        if count is not None:
            cmd += ["--count", str(count)]
        elif duration is not None:
            cmd += ["--duration", f"{duration:g}"]
        if warmup:
            cmd += ["--warmup", f"{warmup:g}"]
        if imix:
            cmd.append("--imix")
        if not verify:
            cmd.append("--no-verify")
        return cmd

    def run(self, streams, timeout=None, retries=1, **kw):
        """One trial. A generator that could not connect (a memif server
        still busy with the previous trial's disconnect) is started again."""
        try:
            for attempt in range(retries + 1):
                self.clear_sockets()
                try:
                    return self._run_once(streams, timeout, **kw)
                except PktgenError:
                    if attempt == retries:
                        raise
                    time.sleep(1)
        finally:
            self.cleanup()

    def clear_sockets(self):
        """The sockets it serves, left by a generator that died, would make
        their servers fail to start."""
        for sock in self.servers + (self.vhost if self.vhost_server else []):
            if os.path.exists(sock):
                os.unlink(sock)

    def cleanup(self):
        """DPDK leaves its runtime directory behind."""
        shutil.rmtree(f"/var/run/dpdk/{self.prefix}", ignore_errors=True)

    def _run_once(self, streams, timeout=None, **kw):
        cmd = self.command(streams, **kw)
        budget = timeout or 60 + (kw.get("duration") or 0) * 2
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=budget)
        except subprocess.TimeoutExpired as e:
            raise PktgenError(f"e3-pktgen did not finish in {budget}s: {' '.join(cmd)}") from e
        if self.log:
            with open(self.log, "a") as f:
                f.write("$ " + " ".join(cmd) + "\n" + p.stdout + p.stderr)
        result = None
        for line in p.stdout.splitlines():
            if line.startswith("{"):
                try:
                    result = json.loads(line)
                except ValueError:
                    pass
        if p.returncode != 0 or result is None:
            raise PktgenError(f"e3-pktgen exited {p.returncode}: {p.stderr.strip()[-500:]}")
        return result


class Session:
    """One e3-pktgen --serve process: the memif links come up once and stay
    up across trials (see main.c for why), trials are lines on its stdin,
    results JSON lines on its stdout."""

    def __init__(self, gen, streams, learn=(), learn_rate=None, imix=False, wait=True):
        """wait=False: return once started; wait_ready() then waits for the
        links (a generator whose ports are all memif servers must be up
        before the switch, its client, can start)."""
        self.gen = gen
        gen.clear_sockets()
        cmd = gen.command(streams, learn=learn, learn_rate=learn_rate, imix=imix)
        cmd.append("--serve")
        self.logf = open(gen.log, "a") if gen.log else subprocess.DEVNULL
        if gen.log:
            self.logf.write("$ " + " ".join(cmd) + "\n")
            self.logf.flush()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.logf, text=True, bufsize=1)
        if wait:
            self.wait_ready()

    def wait_ready(self):
        ready = self._read(self.gen.link_timeout + 30)
        if not ready.get("ready"):
            self.close()
            raise PktgenError(f"e3-pktgen session did not start: {ready}")

    def _read(self, timeout):
        """The next JSON line; EAL's own lines go to the log. A generator
        that hangs is killed after `timeout` seconds."""
        watchdog = threading.Timer(timeout, self.proc.kill)
        watchdog.start()
        try:
            for line in self.proc.stdout:
                if line.startswith("{"):
                    return json.loads(line)
                if self.gen.log:
                    self.logf.write(line)
        finally:
            watchdog.cancel()
        raise PktgenError(f"e3-pktgen exited {self.proc.wait()} (log: {self.gen.log})")

    def trial(self, rate=0, duration=1.0, warmup=0.0, count=None, learn=False, imix=None,
              streams=None, timeout=None, verify=True):
        """One trial; streams: indices of the session's streams to send
        (default all); imix: None keeps the session's setting; verify=False
        counts what comes back by length without reading it (no sequence
        or latency; the generator then keeps up with faster switches)."""
        req = (f"rate={int(rate)} duration={duration:g} warmup={warmup:g} learn={int(learn)}"
               f" verify={int(verify)}")
        if count:
            req += f" count={count}"
        if imix is not None:
            req += f" imix={int(imix)}"
        if streams is not None:
            req += " streams=" + ":".join(str(i) for i in streams)
        self.proc.stdin.write(req + "\n")
        self.proc.stdin.flush()
        res = self._read(timeout or 60 + 3 * (duration + warmup))
        if "error" in res:
            raise PktgenError(f"e3-pktgen refused '{req}': {res['error']}")
        return res

    def close(self):
        try:
            if self.proc.poll() is None:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(10)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            pass
        finally:
            # Whatever happened above (even an interrupt), no generator is left behind.
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(5)
            if self.logf is not subprocess.DEVNULL:
                self.logf.close()
            self.gen.cleanup()
