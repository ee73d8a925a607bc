"""The emulated fabric: network namespaces, veth links and e3-vswitchd processes.

See docs/lab.md for the layout. The Lab builds and removes the plumbing
(namespaces, veths, host VLAN interfaces) and runs one e3-vswitchd per node;
it never programs services: that is tests/lab/static.py's job today and the
controller's and agents' job later, which is why starting a datapath and
attaching its ports are separate steps.

Everything the lab creates is named from the prefix (namespaces
`<prefix>-<node>`, DPDK file prefix `<prefix>-<node>`, state under
/run/e3/<prefix>/), so down() can find and remove it from the topology alone,
in a later process too (the demo is brought up and down by two commands).
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from . import topology as topo_mod
from .vswitchd import LabError, Vswitchd, kill

REPO = Path(__file__).resolve().parents[2]
RUN_ROOT = Path("/run/e3")

FABRIC_MTU = 2100
CUSTOMER_MTU = 1500
# af_packet sees what the kernel hands it: with offloads on, veth passes
# TCP segments with unfinished checksums and VLAN tags in metadata only.
OFFLOADS_OFF = ["rx", "off", "tx", "off", "tso", "off", "gso", "off", "gro", "off",
                "rxvlan", "off", "txvlan", "off"]


def run(cmd, check=True, timeout=60, **kw) -> subprocess.CompletedProcess:
    """Run a command, capture its output; on failure raise with its stderr."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    if check and p.returncode != 0:
        raise LabError(f"{' '.join(map(str, cmd))} -> exit {p.returncode}: {p.stderr.strip() or p.stdout.strip()}")
    return p


def netns_list() -> set:
    out = run(["ip", "-j", "netns", "list"], check=False).stdout.strip()
    if not out:
        return set()
    import json
    return {e["name"] for e in json.loads(out)}


def on_exit(fn) -> None:
    """Run fn when the interpreter exits and on SIGTERM/SIGHUP, even if the
    caller's finally never runs (kill -TERM of pytest). The signal then goes
    on to whatever handled it before, or does what its default action would
    (SystemExit would only fail the running test): a later handler runs
    first, so a control plane armed after its lab stops before the lab's
    network goes."""
    atexit.register(fn)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            prev = signal.getsignal(sig)

            def handler(signum, frame, prev=prev):
                fn()
                if callable(prev):
                    prev(signum, frame)
                else:
                    os._exit(128 + signum)
            signal.signal(sig, handler)
        except ValueError:  # not the main thread: atexit only
            pass


class Lab:
    """One emulated fabric described by a topology file.

    lab = Lab("examples/static-3node.yaml", "e2")
    lab.up()              # namespaces, veths, host interfaces, one datapath per node, ports
    lab.host_exec("h1", ["ping", "-c1", "10.10.0.2"])
    lab.down()            # everything, even after a partial up()
    """

    def __init__(self, topology_path, prefix: str | None = None, *, lcores: str = "0,1",
                 mem_mb: int = 512, mac_table_size: int = 65536, poll_mode: str = "adaptive",
                 safety_net: bool = True):
        self.topology_path = Path(topology_path)
        self.topo = topo_mod.load(self.topology_path)
        self.prefix = prefix or self.topo.name
        if not topo_mod.NAME_RE.match(self.prefix):
            raise LabError(f"prefix {self.prefix!r}: must be of [a-z0-9-]")
        self.run_dir = RUN_ROOT / self.prefix
        self.lcores, self.mem_mb = lcores, mem_mb
        self.mac_table_size, self.poll_mode = mac_table_size, poll_mode
        self.safety_net = safety_net
        self._dps: dict = {}        # node -> its Vswitchd
        self._shims: dict = {}      # host -> Popen of its VLAN shim
        self._armed = False

    # ---- names -------------------------------------------------------------
    def ns(self, name: str) -> str:
        """Namespace of a node or a host."""
        return f"{self.prefix}-{name}"

    def node_socket(self, node: str) -> str:
        return str(self.run_dir / f"{node}.sock")

    def pid_file(self, node: str) -> Path:
        return self.run_dir / f"{node}.pid"

    def log_file(self, node: str) -> Path:
        return self.run_dir / f"{node}.log"

    def checkpoint_file(self, node: str) -> Path:
        """Where a warm restart keeps the node's state (docs/ha.md)."""
        return self.run_dir / f"{node}.checkpoint"

    def file_prefix(self, node: str) -> str:
        return f"{self.prefix}-{node}"

    @staticmethod
    def port_devargs(port: str) -> str:
        return f"net_af_packet_{port},iface={port}"

    def port_confs(self, node: str) -> list:
        """port_add params of every port of a node, in topology order."""
        out = []
        for port, kind in self.topo.ports[node].items():
            p = {"name": port, "devargs": self.port_devargs(port), "kind": kind}
            if kind == "fabric":
                p["mac"] = self.topo.fabric_mac(node, port)
            out.append(p)
        return out

    # ---- whole lab -----------------------------------------------------------
    def up(self, start: bool = True, ports: bool = True) -> "Lab":
        """Build the plumbing, then (start=True) run every node's datapath and
        (ports=True) attach its ports. A failure part-way tears down what was
        built and re-raises."""
        self._arm_safety_net()
        try:
            self.down()  # a stale lab of the same prefix (crashed run, old demo)
            for log in self.run_dir.glob("*.log"):  # down() keeps them for a post-mortem
                log.unlink()
            self.build_network()
            if start:
                for n in self.topo.nodes:
                    self.start(n.name, ports=ports)
        except BaseException:
            self.down()
            raise
        return self

    def down(self) -> None:
        """Remove everything of this prefix: safe to call any number of times,
        after a partial up(), and from another process than the one that ran up()."""
        for n in self.topo.nodes:
            self.stop(n.name)
        names = [self.ns(n.name) for n in self.topo.nodes] + [self.ns(h.name) for h in self.topo.hosts]
        present = netns_list()
        for ns in names:
            if ns in present:
                # Helpers a test left behind in our namespaces (iperf3 -s, tcpdump):
                # we started them, and a netns with live processes outlives its deletion.
                for pid in run(["ip", "netns", "pids", ns], check=False).stdout.split():
                    kill(int(pid))
                run(["ip", "netns", "del", ns], check=False)
        for proc in self._shims.values():  # killed with the namespace's processes above: reap
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self._shims.clear()

    def __enter__(self):
        return self.up()

    def __exit__(self, *exc):
        self.down()

    def _arm_safety_net(self) -> None:
        """Tear the lab down when the interpreter exits or is told to stop,
        even if the caller's finally never runs (kill -TERM of pytest)."""
        if not self.safety_net or self._armed:
            return
        self._armed = True
        on_exit(self.down)

    # ---- network ---------------------------------------------------------------
    def build_network(self) -> None:
        t = self.topo
        for name in [n.name for n in t.nodes] + [h.name for h in t.hosts]:
            ns = self.ns(name)
            run(["ip", "netns", "add", ns])
            # No IPv6 autoconf/ND/MLD chatter: every frame on a link is one a test sent.
            run(["ip", "netns", "exec", ns, "sysctl", "-qw",
                 "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"])
            run(["ip", "-n", ns, "link", "set", "lo", "up"])
        for l in t.links:
            self._veth(l.a.node, l.a.port, t.fabric_mac(l.a.node, l.a.port),
                       l.b.node, l.b.port, t.fabric_mac(l.b.node, l.b.port), FABRIC_MTU)
        for h in t.hosts:
            untagged = [i for i in h.interfaces if i.vlan is None]
            mac = untagged[0].mac if untagged else None
            ns = self.ns(h.name)
            if h.also:
                self._site_bridge(h, mac)
            elif h.behind:
                # A port of the site's bridge (not isolated: the site's LAN).
                self._veth(h.behind, h.name, None, h.name, "eth0", mac, CUSTOMER_MTU)
                run(["ip", "-n", self.ns(h.behind), "link", "set", h.name, "master", "eth0"])
            else:
                self._veth(h.node, h.port, None, h.name, "eth0", mac, CUSTOMER_MTU)
            for i in h.interfaces:
                if i.vlan is not None:
                    # A TAP the VLAN shim attaches to (see vlanshim.py: no 802.1Q in some kernels).
                    run(["ip", "-n", ns, "tuntap", "add", "dev", i.ifname, "mode", "tap"])
                    run(["ip", "-n", ns, "link", "set", i.ifname, "address", i.mac, "mtu", str(CUSTOMER_MTU)])
                run(["ip", "-n", ns, "addr", "add", i.ip, "dev", i.ifname])
                run(["ip", "-n", ns, "link", "set", i.ifname, "up"])
            self._start_vlan_shim(h)

    def _site_bridge(self, h, mac) -> None:
        """A multi-homed site: its switch, a Linux bridge eth0 over one uplink
        per leaf (up0, up1, ...). The uplinks are isolated from each other
        (no frame crosses from one to another), as the members of a LAG are:
        this kernel has no bonding. No STP: the fabric keeps the site
        loop-free (docs/multihoming.md)."""
        ns = self.ns(h.name)
        run(["ip", "-n", ns, "link", "add", "eth0", "mtu", str(CUSTOMER_MTU)] + (["address", mac] if mac else [])
            + ["type", "bridge", "stp_state", "0", "forward_delay", "0"])
        for k, (node, port) in enumerate([(h.node, h.port)] + [(e.node, e.port) for e in h.also]):
            up = f"up{k}"
            self._veth(node, port, None, h.name, up, None, CUSTOMER_MTU)
            run(["ip", "-n", ns, "link", "set", up, "master", "eth0"])
            run(["ip", "netns", "exec", ns, "bridge", "link", "set", "dev", up, "isolated", "on"])
        run(["ip", "-n", ns, "link", "set", "eth0", "up"])

    def _start_vlan_shim(self, h) -> None:
        maps = [f"{i.vlan}={i.ifname}" for i in h.interfaces if i.vlan is not None]
        if not maps:
            return
        self.run_dir.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen(self._wrap(self.ns(h.name), [sys.executable, str(Path(__file__).with_name("vlanshim.py")),
                                                            "eth0", *maps]),
                                stdout=subprocess.PIPE, stderr=open(self.run_dir / f"{h.name}.shim.log", "ab"),
                                stdin=subprocess.DEVNULL, text=True, start_new_session=True)
        if proc.stdout.readline().strip() != "ready":
            proc.wait()
            raise LabError(f"{h.name}: VLAN shim failed: {(self.run_dir / f'{h.name}.shim.log').read_text()[-500:]}")
        proc.stdout.close()
        self._shims[h.name] = proc

    def _veth(self, a: str, a_if: str, a_mac, b: str, b_if: str, b_mac, mtu: int) -> None:
        """A veth pair created directly inside the two namespaces (no name ever
        exists in the root namespace), offloads off, both ends up."""
        cmd = ["ip", "link", "add", a_if, "netns", self.ns(a), "mtu", str(mtu)]
        if a_mac:
            cmd += ["address", a_mac]
        cmd += ["type", "veth", "peer", "name", b_if, "netns", self.ns(b), "mtu", str(mtu)]
        if b_mac:
            cmd += ["address", b_mac]
        run(cmd)
        for ns, ifname in ((self.ns(a), a_if), (self.ns(b), b_if)):
            run(["ip", "netns", "exec", ns, "ethtool", "-K", ifname] + OFFLOADS_OFF)
            run(["ip", "-n", ns, "link", "set", ifname, "up"])

    def _link(self, a: str, b: str):
        links = self.topo.links_between(a, b)
        if not links:
            raise LabError(f"no link between {a} and {b}")
        return links

    def link_down(self, a: str, b: str) -> None:
        """Take every link between nodes a and b down (both veth ends)."""
        for l in self._link(a, b):
            for e in (l.a, l.b):
                run(["ip", "-n", self.ns(e.node), "link", "set", e.port, "down"])

    def link_up(self, a: str, b: str) -> None:
        for l in self._link(a, b):
            for e in (l.a, l.b):
                run(["ip", "-n", self.ns(e.node), "link", "set", e.port, "up"])

    def port_toward(self, node: str, peer: str) -> str:
        """node's fabric port on its (first) link to peer."""
        l = self._link(node, peer)[0]
        return l.a.port if l.a.node == node else l.b.port

    def forget_transit(self, node: str, peer: str) -> None:
        """node forgets every transit (swap) entry that sends toward peer, as
        a node whose tables were lost would; its links and their BFD stay up.
        (Its agent puts them back unless it is stopped.)"""
        c = self.client(node)
        port = self.port_toward(node, peer)
        nexthops = {n["id"] for n in c.call("nexthop_list") if n["port"] == port}
        nhlfes = {n["id"] for n in c.call("nhlfe_list") if n.get("nexthop") in nexthops}
        for e in c.call("label_list"):
            if e["type"] == "swap" and e["nhlfe"] in nhlfes:
                c.call("label_del", label=e["label"])

    # ---- running things in namespaces ---------------------------------------------
    def host_exec(self, host: str, cmd, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        """Run a command (list, or string for the shell) in a host's namespace."""
        self.topo.host(host)
        return run(self._wrap(self.ns(host), cmd), check=check, timeout=timeout)

    def node_exec(self, node: str, cmd, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        self.topo.node(node)
        return run(self._wrap(self.ns(node), cmd), check=check, timeout=timeout)

    def host_popen(self, host: str, cmd, **kw) -> subprocess.Popen:
        """Start a command in a host's namespace in the background; down()
        kills it if the caller does not."""
        self.topo.host(host)
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        return subprocess.Popen(self._wrap(self.ns(host), cmd), text=True, **kw)

    def node_popen(self, node: str, cmd, **kw) -> subprocess.Popen:
        self.topo.node(node)
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        return subprocess.Popen(self._wrap(self.ns(node), cmd), text=True, **kw)

    @staticmethod
    def _wrap(ns: str, cmd) -> list:
        if isinstance(cmd, str):
            cmd = ["sh", "-c", cmd]
        return ["ip", "netns", "exec", ns] + list(cmd)

    # ---- datapaths -------------------------------------------------------------------
    def dp(self, node: str) -> Vswitchd:
        """The node's e3-vswitchd (tests/lab/vswitchd.py)."""
        if node not in self._dps:
            self.topo.node(node)
            self._dps[node] = Vswitchd(
                node, file_prefix=self.file_prefix(node), sock=self.node_socket(node),
                log=self.log_file(node), pid_file=self.pid_file(node), netns=self.ns(node),
                lcores=self.lcores, mem_mb=self.mem_mb, poll_mode=self.poll_mode,
                mac_table_size=self.mac_table_size, args=["--checkpoint", str(self.checkpoint_file(node))])
        return self._dps[node]

    def client(self, node: str):
        """A JSON-RPC client (datapath/client/e3rpc.py) on a node's socket."""
        return self.dp(node).client()

    def pid(self, node: str):
        """PID of the node's running datapath, or None."""
        return self.dp(node).pid()

    def start(self, node: str, ports: bool = True, timeout: float = 30) -> int:
        """Start a node's e3-vswitchd in its namespace, wait until its RPC
        socket answers, and (ports=True) attach the node's ports."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        pid = self.dp(node).start(timeout)
        if ports:
            self.add_ports(node)
        return pid

    def add_ports(self, node: str) -> None:
        c = self.client(node)
        for p in self.port_confs(node):
            c.call("port_add", **p)

    def stop(self, node: str, timeout: float = 10) -> None:
        """Stop a node's datapath (SIGTERM, then SIGKILL); no-op if not running."""
        self.dp(node).stop(timeout)

    def restart(self, node: str, ports: bool = True) -> int:
        self.stop(node)
        return self.start(node, ports=ports)

    def warm_restart(self, node: str, timeout: float = 30) -> int:
        """SIGUSR2: the node holds its BFD neighbours, writes its checkpoint
        and exits 75; the same command then resumes from it (its ports
        included). Returns the new PID."""
        return self.dp(node).warm_restart(timeout)

    def handover(self, node: str, timeout: float = 30) -> int:
        """SIGHUP: the node's e3-vswitchd starts a new process of its binary
        beside itself, hands the node over and exits 0. Returns the new PID."""
        return self.dp(node).handover(timeout)

    def running(self, node: str) -> bool:
        return self.pid(node) is not None

    def log_tail(self, node: str, lines: int = 30) -> str:
        return self.dp(node).log_tail(lines)

    def link_drops(self) -> dict:
        """The kernel's drops on every interface of the lab's namespaces
        (and of namespaces named after it, a test's VMs): {"ns/if":
        [rx_dropped, tx_dropped]}, nonzero only. What a lost frame that no
        datapath counted is read against."""
        names = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split("\n")
        out = {}
        for ns in sorted(n.split(" ")[0] for n in names if n.startswith(self.prefix + "-")):
            r = subprocess.run(["ip", "-n", ns, "-s", "-j", "link"], capture_output=True, text=True)
            for link in json.loads(r.stdout or "[]"):
                st = link.get("stats64", {})
                d = [st.get("rx", {}).get("dropped", 0), st.get("tx", {}).get("dropped", 0)]
                if any(d):
                    out[f"{ns}/{link['ifname']}"] = d
        return out
