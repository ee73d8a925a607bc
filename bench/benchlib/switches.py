"""The three switches under test, each a set of processes we start, pause
(SIGSTOP while another switch is measured on the same core), resume and stop,
always by PID:

  limit  dpdk-testpmd, io forwarding p0 <-> p1: no lookup, the link limit
  e3     e3-vswitchd, programmed through JSON-RPC (datapath/client/e3rpc.py)
  ovs    ovsdb-server + ovs-vswitchd (DPDK), netdev bridge, memif ports

Every switch is the memif server on sockets of its own; generator port i
connects to socket i. A switch runs its main thread on one CPU and a
forwarding core (e3 worker, OVS PMD, testpmd forwarding lcore) on each
worker CPU; with W workers each memif port has W queues, queue k served by
worker k (memif's RSS: the generator's lane k sends on queue k). On the
developers' 2-CPU machine main and worker share one CPU and the generator
has the other (benchlib/cpus.py).

Links come in two modes. "copy" (the table's): the switch is the memif
server and the generator a zero-copy client, so the switch copies every
frame in and out, as a software switch does with a VM's vhost-user port.
"zc": the switch is a zero-copy memif client and the generator the server
that copies (as a NIC's DMA would), so the switch's figures are its own work
without the link's copies. Its rings are 2^12 slots: a zero-copy client
fills every slot of every ring with an mbuf of its own, and OVS sizes its
pool for 2048-4096 descriptors.

A scenario with a VM (PVP) gives each switch a vhost-user port, "vm0", whose
other end is the VM: dpdk-testpmd in macswap mode on a virtio_user port,
started with the switch and paused with it. With a CPU of its own it busy
polls there. Where it shares the generator's CPU, it runs at idle priority
(SCHED_IDLE): whenever the generator sleeps, which the generator does
whenever it has nothing to send. Two busy
pollers sharing one CPU would each run in scheduler slices of milliseconds,
and even a 16384-slot virtio ring cannot hold a slice's worth of frames.
A scenario whose generator is the VM (gen_is_vm) starts no VM: the
generator joins vm0 as a virtio_user port of its own, so the VM's traffic
is measured with the generator and the switch each on a CPU of its own.
On zero-copy links the generator, which then serves every memif link, is
the vhost-user server too, and vm0 connects to it (OVS's
dpdkvhostuserclient), so that it can start first.
"""
import os
import re
import statistics
import shutil
import signal
import subprocess
import sys
import time

from . import host
from .pktgen import ZC_RING_LOG2, memif_devargs, ring_slots, ROOT
from .scenarios import SW_FAB

sys.path.insert(0, os.path.join(ROOT, "datapath", "client"))
import e3rpc  # noqa: E402

# Each program from the environment where it is set (bench/bundle.sh's run
# script points them into the archive), else the build's and the distro's.
VSWITCHD = os.environ.get("E3_VSWITCHD", os.path.join(ROOT, "build", "bin", "e3-vswitchd"))
TESTPMD = os.environ.get("E3_TESTPMD", "dpdk-testpmd")
GEN_PREFIX = "bn-pg-"   # the generators' DPDK file prefixes (bench.py)
VM_RING = 16384     # virtio ring slots of the VM's port, each way: milliseconds of traffic
OVS_VSWITCHD = os.environ.get("E3_OVS_VSWITCHD", "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk")
OVS_SCHEMA = os.environ.get("E3_OVS_SCHEMA", "/usr/share/openvswitch/vswitch.ovsschema")


class SwitchError(RuntimeError):
    pass


# Whole lines that testpmd's other threads write while its command line
# writes its prompt a character at a time: the vhost library's log and the
# port events, from the thread where a vhost-user peer negotiates.
_INTERLEAVED = re.compile(r"VHOST_CONFIG: [^\n]*\n|\nPort \d+: [^\n]* event\n")


def strip_interleaved(text):
    """What testpmd's command line wrote, out of its log: without the lines
    other threads wrote in the middle of a prompt ("test" + a vhost-user
    negotiation's log + "pmd> ")."""
    return _INTERLEAVED.sub("", text)


def wait_for(cond, timeout, what, proc=None, log=None):
    """Until cond(); a SwitchError if proc ends first or the time runs out,
    its first line saying which, then the end of log (the why)."""
    deadline = time.monotonic() + timeout
    ended = False
    while time.monotonic() < deadline:
        if cond():
            return
        if proc is not None and proc.poll() is not None:
            ended = True
            break
        time.sleep(0.05)
    tail = ""
    if log and os.path.exists(log):
        with open(log, errors="replace") as f:
            tail = "".join(f.readlines()[-15:])
    why = (f"{program(proc.args)} {describe_exit(proc.returncode)}" if ended
           else f"timed out after {timeout:g} s")
    raise SwitchError(f"waiting for {what}: {why}\n{tail}")


def summary(err, died=""):
    """An error in one line for results.json: its first line, how the
    process died, and the last lines of the log it carried (what a
    program says before it exits: a missing library, EAL's refusal)."""
    lines = [x.strip() for x in str(err).splitlines() if x.strip()]
    if not lines:
        return repr(err) + died
    out = lines[0][:300] + died
    if len(lines) > 1:
        out += "; its log ends: " + " / ".join(lines[-3:])[-400:]
    return out


# Wrappers before a command, and how many arguments each takes.
WRAPPERS = {"taskset": 2, "chrt": 2, "stdbuf": 1}


def program(cmd):
    """The program a command line runs, past its wrappers."""
    i = 0
    while os.path.basename(cmd[i]) in WRAPPERS:
        i += 1 + WRAPPERS[os.path.basename(cmd[i])]
    return os.path.basename(cmd[i])


def describe_exit(rc):
    """A Popen returncode in words."""
    if rc < 0:
        try:
            return f"killed by {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return f"exited {rc}"


class Switch:
    name = "?"
    mem_mb = 2048
    zc_na = ""      # why the switch does not run zero-copy links of two memif ports

    def __init__(self, workdir, cpu, huge_dir, prefix=None, vm_cpu=0, workers=None, vm_idle=True,
                 link="copy"):
        """cpu: the main thread's (and the only worker's, without `workers`);
        workers: a CPU per forwarding core; vm_idle: the VM shares a busy
        CPU and runs at idle priority; link: "copy" or "zc" (above)."""
        if link == "zc" and not huge_dir:
            raise SwitchError("zero-copy links need hugepages (a memif region is a hugepage file)")
        self.link = link
        self.ring = ring_slots(link)     # memif slots
        self.workdir = workdir
        self.cpu = cpu
        self.workers = list(workers) if workers else [cpu]
        self.queues = len(self.workers)     # per memif port
        self.vm_cpu = vm_cpu
        self.vm_idle = vm_idle
        self.huge_dir = huge_dir
        self.procs = []
        self.prefix = prefix or f"bn-{self.name}"
        self.log = os.path.join(workdir, f"{self.name}.log")

    @property
    def gen_rx_queues(self):
        """memif queues the generator must serve per port: the switch sends
        on one per worker."""
        return self.queues

    def lcores(self):
        """EAL --lcores: lcore 0 (main) on the main CPU, lcore k+1 on worker k's."""
        return ",".join([f"0@{self.cpu}"] + [f"{k + 1}@{c}" for k, c in enumerate(self.workers)])

    def devargs(self, index, sock):
        if self.link == "zc":
            return memif_devargs(index, sock, "client", zero_copy=True, ring_log2=ZC_RING_LOG2)
        return memif_devargs(index, sock, "server")

    def mem_args(self, mb):
        """EAL memory options; a zero-copy client shares its memory with
        the server as one file per segment list."""
        zc = ["--single-file-segments"] if self.link == "zc" else []
        return host.eal_mem_args(self.huge_dir, mb) + zc

    def sockets(self, nports):
        return [os.path.join(self.workdir, f"{self.name}-p{i}.sock") for i in range(nports)]

    def _spawn(self, cmd, stdin=subprocess.DEVNULL, env=None, log_path=None):
        with open(log_path or self.log, "ab") as log:
            log.write(("$ " + " ".join(cmd) + "\n").encode())
            self.log_start = log.tell()
            p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=stdin, env=env)
        self.procs.append(p)
        return p

    def _log_since_spawn(self, log_path=None):
        with open(log_path or self.log, errors="replace") as f:
            f.seek(self.log_start)
            return f.read()

    def _clean_sockets(self, nports):
        # zero-copy links: the generator, their server, has made the sockets.
        socks = self.sockets(nports) + [self.vm_socket()] if self.link == "copy" else []
        for s in socks:
            if os.path.exists(s):
                os.unlink(s)

    def vm_socket(self):
        """The vhost-user socket of port vm0: the switch's, or on zero-copy
        links the generator's (the switch is its client)."""
        return os.path.join(self.workdir, f"{self.name}-vm.sock")

    @property
    def vm_client(self):
        return self.link == "zc"

    def vm_devargs(self):
        return (f"net_vhost0,iface={self.vm_socket()},queues=1"
                + (",client=1" if self.vm_client else ""))

    @classmethod
    def zc_unsupported(cls, scenario):
        """Why the switch cannot run the scenario on zero-copy links, or ""."""
        if scenario.pvp:
            return "on zero-copy links the VM is the generator's only (vm-eline)"
        return cls.zc_na if len(scenario.ports) > 1 else ""

    def forward(self):
        """Called once the generator's links are up (see LinkLimit)."""

    def start_vm(self, scenario):
        """The VM behind vm0, once its socket listens: testpmd macswap on
        virtio_user, at idle priority on the generator's CPU (see the
        module's doc); none where the generator is the VM."""
        if not scenario.vm:
            return
        wait_for(lambda: os.path.exists(self.vm_socket()), 30, "the switch's vhost-user socket",
                 self.procs[-1], self.log)
        if scenario.gen_is_vm:
            return
        log = os.path.join(self.workdir, f"{self.name}-vm.log")
        mem = host.eal_mem_args(self.huge_dir, 512)
        if self.huge_dir:
            # vhost-user shares at most 8 memory regions: one file per socket.
            mem.append("--single-file-segments")
        prio = ["chrt", "--idle", "0"] if self.vm_idle else []
        cmd = [*prio, "stdbuf", "-oL", TESTPMD,
               "--lcores", f"0@{self.vm_cpu},1@{self.vm_cpu}", "--main-lcore", "0", "--no-pci",
               *mem, *host.eal_plugin_args(), "--file-prefix", f"{self.prefix}-vm",
               "--vdev", f"net_virtio_user0,path={self.vm_socket()},queues=1,queue_size={VM_RING}",
               "--", "--forward-mode=macswap", "--port-topology=loop", "--auto-start",
               "--nb-cores=1", f"--rxd={VM_RING}", f"--txd={VM_RING}",
               "--total-num-mbufs=65536", "--disable-link-check"]
        p = self._spawn(cmd, stdin=subprocess.PIPE, log_path=log)
        wait_for(lambda: "Press enter to exit" in self._log_since_spawn(log), 60,
                 "the VM (testpmd on virtio_user) to start", p, log)

    def start(self, scenario, n):
        raise NotImplementedError

    def pause(self):
        for p in self.procs:
            if p.poll() is None:
                os.kill(p.pid, signal.SIGSTOP)

    def resume(self):
        for p in self.procs:
            if p.poll() is None:
                os.kill(p.pid, signal.SIGCONT)

    def alive(self):
        return bool(self.procs) and all(p.poll() is None for p in self.procs)

    def exits(self):
        """How those of its processes that ended ended ("e3-vswitchd killed
        by SIGBUS"): what an error that follows a death is about; "" if none did."""
        return "; ".join(f"{program(p.args)} {describe_exit(p.returncode)}"
                         for p in self.procs if p.poll() is not None)

    def datapath_pid(self):
        return self.procs[0].pid if self.procs else None

    def memory(self):
        """Memory of the datapath process: private anonymous pages (malloc'd
        tables, e.g. e3's label table) plus hugetlb pages (the DPDK heap:
        mempools, rte_hash); the DPDK heap's own count when telemetry
        answers. Shared memif buffers are left out: they belong to the link."""
        m = host.proc_mem_kb(self.datapath_pid(), foreign=GEN_PREFIX)
        m["total_bytes"] = (m["anon_kb"] + m["hugetlb_kb"]) * 1024
        m["heap_bytes"] = host.heap_alloc_bytes(self.prefix)
        return m

    def stop(self):
        # Reverse order: the VM before its switch, datapath before its database.
        for p in reversed(self.procs):
            if p.poll() is None:
                os.kill(p.pid, signal.SIGCONT)
                p.terminate()
        for p in reversed(self.procs):
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)
        self.procs = []
        for prefix in (self.prefix, f"{self.prefix}-vm"):
            shutil.rmtree(f"/var/run/dpdk/{prefix}", ignore_errors=True)


class LinkLimit(Switch):
    """dpdk-testpmd io forwarding: frames go back out untouched. Its
    command line is a pipe of ours, for its own cycle accounting
    (--record-core-cycles, read with "show fwd stats all")."""
    name = "limit"
    mem_mb = 1024

    def start(self, scenario, n):
        nports = len(scenario.ports)
        self._clean_sockets(nports)
        # stdbuf: testpmd's answers must reach the log while it runs.
        cmd = ["stdbuf", "-oL", TESTPMD, "--lcores", self.lcores(), "--main-lcore", "0", "--no-pci",
               *self.mem_args(self.mem_mb), *host.eal_plugin_args(),
               "--file-prefix", self.prefix]
        for i, s in enumerate(self.sockets(nports)):
            cmd += ["--vdev", self.devargs(i, s)]
        if scenario.vm:
            # io pairs port 0 (the generator's) with port 1 (the VM's).
            cmd += ["--vdev", self.vm_devargs()]
        # io forwarding: rx queue q of a port goes out on tx queue q of its pair.
        cmd += ["--", "-i", "--forward-mode=io", f"--nb-cores={self.queues}",
                f"--rxq={self.queues}", f"--txq={self.queues}",
                "--total-num-mbufs=65536", "--disable-link-check", "--record-core-cycles"]
        if scenario.vm:
            cmd += [f"--rxd={VM_RING}", f"--txd={VM_RING}"]
        p = self._spawn(cmd, stdin=subprocess.PIPE)
        self.testpmd = p
        wait_for(lambda: "testpmd> " in strip_interleaved(self._log_since_spawn()),
                 60, "testpmd to start", p, self.log)
        self.start_vm(scenario)

    def forward(self):
        """testpmd forwards only once the generator's links are up: DPDK
        22.11's memif reads a port's ring address before its connected
        flag, so a forwarding core polling a port while it connects may
        read a ring not yet mapped (and crash)."""
        self._command("start", "packet forwarding")

    def _command(self, line, answer=None, timeout=10):
        """Send testpmd a command; with `answer`, wait for the log to show
        it after this command and return the log from there."""
        with open(self.log, "rb") as f:
            f.seek(0, os.SEEK_END)
            mark = f.tell()
        self.testpmd.stdin.write((line + "\n").encode())
        self.testpmd.stdin.flush()
        if answer is None:
            return ""
        text = ""

        def seen():
            nonlocal text
            with open(self.log, errors="replace") as f:
                f.seek(mark)
                text = strip_interleaved(f.read())
            return answer in text and text.rstrip().endswith("testpmd>")
        wait_for(seen, timeout, f"testpmd's answer to '{line}'", self.testpmd, self.log)
        return text

    def runtime_clear(self):
        self._command("clear fwd stats all", "testpmd>")

    def cycles_per_frame(self):
        """testpmd's own accounting since runtime_clear: its forwarding
        core's busy cycles per packet received (--record-core-cycles)."""
        text = self._command("show fwd stats all", "Accumulated forward statistics")
        m = re.search(r"CPU cycles/packet=([0-9.]+)", text)
        return {"total": float(m.group(1)), "stages": {}} if m and float(m.group(1)) > 0 else None

    def stop(self):
        if getattr(self, "testpmd", None) and self.testpmd.poll() is None:
            try:
                os.kill(self.testpmd.pid, signal.SIGCONT)
                self._command("quit")
            except (OSError, ValueError):
                pass
        super().stop()


class E3(Switch):
    """e3-vswitchd in busy poll mode, programmed over JSON-RPC (config_load)."""
    name = "e3"
    CHUNK = 10000   # objects per config_load request: well under the 1 MiB limit

    def start(self, scenario, n):
        nports = len(scenario.ports)
        self._clean_sockets(nports)
        self.rpc_sock = os.path.join(self.workdir, "e3.rpc.sock")
        if os.path.exists(self.rpc_sock):
            os.unlink(self.rpc_sock)
        # MAC table sized for the MACs the scenario learns (25% headroom).
        macs = n if scenario.table == "MACs" else 0
        mac_cap = max(65536, macs + macs // 4)
        cmd = [VSWITCHD, "--lcores", self.lcores(), "--main-lcore", "0", "--no-pci",
               *self.mem_args(self.mem_mb), *host.eal_plugin_args(),
               "--file-prefix", self.prefix, "--", "--name", "bn", "--rpc-socket", self.rpc_sock, "--poll-mode", "busy",
               "--mac-table-size", str(mac_cap), "--mbufs", "65535"]
        doc = {"version": 1, **scenario.e3_config(n), "ports": []}
        for i, (kind, sock) in enumerate(zip(scenario.ports, self.sockets(nports))):
            port = {"name": f"p{i}", "devargs": self.devargs(i, sock), "kind": kind}
            if self.queues > 1:
                # memif's RSS: queue k is the generator's lane k, worker k's.
                port["rx_queues"] = self.queues
                port["workers"] = list(range(self.queues))
            if kind == "fabric":
                port["mac"] = SW_FAB[i]
            doc["ports"].append(port)
        if scenario.vm:
            doc["ports"].append({"name": "vm0", "kind": "customer",
                                 "devargs": self.vm_devargs()})
        t0 = time.monotonic()
        p = self._spawn(cmd)
        wait_for(lambda: "polling, boot_id" in self._log_since_spawn(), 60,
                 "e3-vswitchd to start", p, self.log)
        # One request may not exceed 1 MiB (docs/control-api.md): the big
        # tables go in chunks, added to what is there. Small
        # requests also keep the parser's transient memory out of the
        # switch's footprint.
        # The first request carries everything small plus the first chunk
        # of each (swap label i uses nhlfe i+1, so references resolve).
        big = {k: doc[k] for k in ("nhlfes", "labels")}
        with e3rpc.Client(self.rpc_sock, timeout=300) as c:
            c.call("config_load", dict(doc, **{k: v[:self.CHUNK] for k, v in big.items()}))
            for key, items in big.items():
                for i in range(self.CHUNK, len(items), self.CHUNK):
                    c.call("config_load", {"version": 1, key: items[i:i + self.CHUNK]})
        self.program_s = time.monotonic() - t0
        self.start_vm(scenario)

    def learned(self):
        """MACs in the E-LAN services' tables (learning is asynchronous)."""
        with e3rpc.Client(self.rpc_sock, timeout=30) as c:
            return sum(s.get("macs", 0) for s in c.call("service_list") if s["type"] == "elan")

    def counters(self):
        with e3rpc.Client(self.rpc_sock, timeout=30) as c:
            return c.call("stats_get")

    def runtime_clear(self):
        with e3rpc.Client(self.rpc_sock, timeout=30) as c:
            c.call("runtime_clear")

    def cycles_per_frame(self):
        """e3's own accounting since runtime_clear (e3_cycles)."""
        with e3rpc.Client(self.rpc_sock, timeout=30) as c:
            return e3_cycles(c.call("runtime_get"))


def e3_cycles(rt):
    """e3's cycles from its runtime profile (runtime_get, docs/control-api.md):
    the workers' busy TSC cycles per frame received, each stage's cycles per
    frame it took, each port's receive and transmit (cycles per frame, and
    frames per burst: a call that moved some), and the clock their cores ran
    at; None before any frame."""
    frames = sum(p["rx"]["frames"] for w in rt["workers"] for p in w["ports"])
    if not frames:
        return None
    stages, ports = {}, {}
    for w in rt["workers"]:
        for s in w["stages"]:
            acc = stages.setdefault(s["stage"], [0, 0])
            acc[0] += s["cycles"]
            acc[1] += s["frames"]
        for p in w["ports"]:
            for io in ("rx", "tx"):
                acc = ports.setdefault(p["port"], {}).setdefault(io, [0, 0, 0])
                acc[0] += p[io]["cycles"]
                acc[1] += p[io]["frames"]
                acc[2] += p[io]["calls"]
    # All ports' receive and transmit together, per frame received and sent:
    # the memif copies, in and out; a VM's port's, the vhost-user ones.
    for io in ("rx", "tx"):
        stages[io] = [sum(ios[io][k] for ios in ports.values()) for k in (0, 1)]
    core = sum(w["clock"]["core_cycles"] for w in rt["workers"])
    tsc = sum(w["clock"]["tsc_cycles"] for w in rt["workers"])
    return {"total": sum(w["busy_cycles"] for w in rt["workers"]) / frames,
            "stages": {k: c / f for k, (c, f) in stages.items() if f},
            "ports": {name: {k: v for io, (c, f, n) in ios.items() if f
                             for k, v in ((io, c / f), (io + "_burst", f / n))}
                      for name, ios in ports.items()},
            # The workers' cores' clock over the trial (docs/operations.md):
            # what tells a slower core from more work.
            "core_hz": rt["tsc_hz"] * core / tsc if tsc else None, "tsc_hz": rt["tsc_hz"]}


class Ovs(Switch):
    """Open vSwitch with its DPDK datapath, from Debian's package, run with a
    database and run directory of our own (never the system service)."""
    name = "ovs"
    # Seen with Debian's OVS 3.1 on DPDK 22.11: as a zero-copy memif client
    # it connects its first port and never its second (the same ports
    # without zero-copy connect both).
    zc_na = "its zero-copy memif client connects one port of two here"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Its PMDs come from a CPU mask: workers sharing a CPU are one PMD,
        # with fewer TX queues than the generator's lanes would need.
        cpus = len(set(self.workers))
        if cpus < len(self.workers):
            raise SwitchError(f"OVS runs one PMD per CPU: {len(self.workers)} workers on "
                              f"{cpus} CPU{'s' if cpus > 1 else ''}")

    @property
    def gen_rx_queues(self):
        """OVS gives each port a TX queue per PMD thread plus one for the
        main thread; its PMDs send on queues 1.., so the generator must
        receive there. (One PMD per CPU: workers sharing a CPU are one.)"""
        return len(set(self.workers)) + 1

    def _env(self):
        d = os.path.join(self.workdir, "ovs")
        env = dict(os.environ, OVS_RUNDIR=d, OVS_DBDIR=d, OVS_LOGDIR=d, OVS_SYSCONFDIR=d,
                   OVS_PKGDATADIR=os.path.dirname(OVS_SCHEMA))
        return d, env

    def _tool(self, argv):
        """An OVS tool's output; its own words in the error when it fails."""
        _, env = self._env()
        r = subprocess.run(argv, capture_output=True, text=True, env=env)
        if r.returncode:
            said = " ".join(r.stderr.split())[-400:]
            raise SwitchError(f"`{' '.join(argv[:5])}` exited {r.returncode}: {said or 'no message'}")
        return r.stdout

    def _vsctl(self, *args):
        d, _ = self._env()
        return self._tool(["ovs-vsctl", f"--db=unix:{d}/db.sock", "--timeout=60", *args])

    def _ofctl(self, *args):
        self._tool(["ovs-ofctl", *args])

    def start(self, scenario, n):
        if scenario.ovs.na:
            raise SwitchError(scenario.ovs.na)
        nports = len(scenario.ports)
        self._clean_sockets(nports)
        d, env = self._env()
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        subprocess.run(["ovsdb-tool", "create", f"{d}/conf.db", OVS_SCHEMA], check=True, env=env)
        # The main thread and ovsdb on the main CPU; OVS pins its PMDs.
        pin = ["taskset", "-c", str(self.cpu)]
        db = self._spawn(pin + ["ovsdb-server", f"{d}/conf.db", f"--remote=punix:{d}/db.sock",
                                f"--unixctl={d}/ovsdb.ctl", f"--log-file={d}/ovsdb.log"], env=env)
        wait_for(lambda: os.path.exists(f"{d}/db.sock"), 20, "ovsdb-server", db, self.log)
        self._vsctl("--no-wait", "init")
        dpdk_extra = f"--no-pci --file-prefix {self.prefix} " + " ".join(
            self.mem_args(self.mem_mb) + host.eal_plugin_args())
        self._vsctl("--no-wait", "set", "Open_vSwitch", ".",
                    "other_config:dpdk-init=true",
                    f"other_config:dpdk-extra={dpdk_extra}",
                    f"other_config:pmd-cpu-mask={sum(1 << c for c in set(self.workers)):#x}",
                    # queue k of every port to PMD k, as e3's workers and testpmd's cores
                    "other_config:pmd-rxq-assign=roundrobin",
                    # keep megaflows of a paused switch: pauses are not idleness
                    "other_config:max-idle=3600000")
        self._spawn(pin + [OVS_VSWITCHD, f"unix:{d}/db.sock", f"--unixctl={d}/vswitchd.ctl",
                           f"--log-file={d}/vswitchd.log"], env=env)
        wait_for(lambda: os.path.exists(f"{d}/vswitchd.ctl"), 60, "ovs-vswitchd", self.procs[-1],
                 f"{d}/vswitchd.log")
        br = "bnbr"
        macs = n if scenario.table == "MACs" else 0
        self._vsctl("add-br", br, "--", "set", "bridge", br, "datapath_type=netdev",
                    f"other_config:mac-table-size={max(2048, macs + macs // 4)}",
                    "other_config:mac-aging-time=3600")
        for i, sock in enumerate(self.sockets(nports)):
            self._vsctl("add-port", br, f"p{i}", "--", "set", "Interface", f"p{i}", "type=dpdk",
                        f"options:dpdk-devargs={self.devargs(i, sock)}",
                        f"options:n_rxq={self.queues}", f"ofport_request={i + 1}")
        if scenario.vm and self.vm_client:
            self._vsctl("add-port", br, "vm0", "--", "set", "Interface", "vm0",
                        "type=dpdkvhostuserclient", f"options:vhost-server-path={self.vm_socket()}",
                        f"ofport_request={nports + 1}")
        elif scenario.vm:
            # OVS is the vhost-user server; the socket is named after the port.
            self._vsctl("add-port", br, "vm0", "--", "set", "Interface", "vm0",
                        "type=dpdkvhostuser", f"ofport_request={nports + 1}")
        t0 = time.monotonic()
        if scenario.ovs.flows:
            self._ofctl("del-flows", br)
            path = os.path.join(d, "flows.txt")
            with open(path, "w") as f:
                f.write("\n".join(scenario.ovs.flows(n)) + "\n")
            self._ofctl("-O", "OpenFlow14", "--bundle", "add-flows", br, path)
        self.program_s = time.monotonic() - t0
        wait_for(lambda: all(os.path.exists(s) for s in self.sockets(nports)), 30,
                 "OVS memif sockets", self.procs[-1], f"{d}/vswitchd.log")
        self.start_vm(scenario)

    def vm_socket(self):
        return super().vm_socket() if self.vm_client else os.path.join(self._env()[0], "vm0")

    def datapath_pid(self):
        return self.procs[1].pid if len(self.procs) > 1 else None

    def _appctl(self, *args):
        d, env = self._env()
        return subprocess.run(["ovs-appctl", "-t", f"{d}/vswitchd.ctl", *args], check=True,
                              capture_output=True, text=True, env=env).stdout

    def runtime_clear(self):
        self._appctl("dpif-netdev/pmd-stats-clear")

    def cycles_per_frame(self):
        """OVS's own accounting since runtime_clear: its PMD threads'
        processing cycles per packet (dpif-netdev/pmd-stats-show), the
        counterpart of e3's busy cycles per frame; None before any packet."""
        m = re.findall(r"avg processing cycles per packet: ([0-9.]+)", self._appctl("dpif-netdev/pmd-stats-show"))
        vals = [float(x) for x in m if float(x) > 0]
        return {"total": statistics.median(vals), "stages": {}} if vals else None


SWITCHES = {"limit": LinkLimit, "e3": E3, "ovs": Ovs}
