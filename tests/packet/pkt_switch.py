"""A real e3-vswitchd in its own network namespace, with the veth pairs the
packet tests drive, and its JSON-RPC client (datapath/client/e3rpc).

Layout inside namespace pk-<pid>-<module>:

    c1 c2 c3  customer ports   (veth; the tests own c1p c2p c3p)
    f1 f2 f3  fabric ports     (veth; the tests own f1p f2p f3p = the neighbours)
"""
import os
import sys

import pytest

from pkt_frames import assert_customer, assert_fabric, fabric_frame, untag
from pkt_net import Netns, assert_delivered, nsexec, wait_for

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "datapath", "client"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import e3rpc  # noqa: E402
from lab.vswitchd import LabError, Vswitchd, binary  # noqa: E402

CUSTOMER = ["c1", "c2", "c3"]
FABRIC = ["f1", "f2", "f3"]
# Switch side and test side (customer host / fabric neighbour) MAC of each veth pair.
MAC = {p: f"02:00:00:{p}:00:01" for p in CUSTOMER + FABRIC}  # c1 -> 02:00:00:c1:00:01
PEER_MAC = {p: m[:-2] + "99" for p, m in MAC.items()}
PEERS = [p + "p" for p in CUSTOMER + FABRIC]
VETH_MTU = 2100  # room for oversize frames and the fabric's overhead
DEFAULT_SETTINGS = {"ttl": 64, "control_word": True, "mac_aging_s": 300, "mac_limit": 8192,
                    "mac_move_limit": 5, "mac_move_window_s": 180}



def assert_fabric_out(got, port, **fields):
    """One frame came, out of fabric port `port` alone (to its peer, from our
    port's MAC) with fields (label, tc, ttl, inner) as assert_fabric checks them."""
    assert_delivered(got, {port + "p": 1})
    assert_fabric(got[port + "p"][0], dst=PEER_MAC[port], src=MAC[port], **fields)


def assert_encapsulated(wire, frame, tok, out, port="c1", **fields):
    """frame (carrying token tok), sent on customer port `port`, comes out
    of fabric port `out` alone with fields (label, tc, ttl) and, unless
    fields say otherwise, the frame without its tag inside."""
    got = wire.exchange([(port + "p", frame)], expect=1, match=tok)
    assert_fabric_out(got, out, **{"inner": untag(frame), **fields})


def assert_decapsulated(wire, inner, tok, label, out, fabric=None, **customer):
    """inner (carrying token tok), sent under label into fabric port f1
    (fabric: fabric_frame's options, tc and ttl), comes out of customer port
    `out` alone, as assert_customer checks it with customer (vlan, pcp)."""
    got = wire.exchange([("f1p", fabric_frame(MAC["f1"], PEER_MAC["f1"], label, inner, **(fabric or {})))],
                        expect=1, match=tok)
    assert_delivered(got, {out + "p": 1})
    assert_customer(got[out + "p"][0], inner=inner, **customer)

class Switch:
    """A running e3-vswitchd inside its own namespace (tests/lab/vswitchd.py),
    and the RPC client to it."""

    def __init__(self, tag, workers=1, extra=(), env=None):
        self.ns = f"pk-{os.getpid()}-{tag}"
        self.sock = f"/tmp/{self.ns}.sock"
        self.logpath = f"/tmp/{self.ns}.log"
        # Worker lcores 1.. on the machine's CPU 1 (a second one shares it:
        # functional tests of several workers, on two CPUs).
        lcores = ",".join(["0@0"] + [f"{w + 1}@1" for w in range(workers)])
        self.dp = Vswitchd("pk", file_prefix=self.ns, sock=self.sock, log=self.logpath, netns=self.ns,
                           lcores=lcores, mem_mb=512, args=["--pcap-dir", "/tmp", *extra], env=env)
        self.netns = None
        self.client = None

    @property
    def proc(self):
        """The process the test started (a handover's new one is not ours)."""
        return self.dp.proc

    def start(self):
        if not os.access(binary(), os.X_OK):
            pytest.fail(f"{binary()} is not built: run make datapath")
        self.netns = Netns(self.ns)
        for p in CUSTOMER + FABRIC:
            self.netns.add_veth(p, MAC[p], PEER_MAC[p], VETH_MTU)
        self.launch()
        for p in CUSTOMER:
            self.rpc("port_add", name=p, devargs=f"net_af_packet_{p},iface={p}", kind="customer")
        for p in FABRIC:
            self.rpc("port_add", name=p, devargs=f"net_af_packet_{p},iface={p}", kind="fabric",
                     mac=MAC[p])
        self.ports_ready()

    def launch(self):
        """Start the process (in the namespace start made) and connect."""
        try:
            self.dp.start()
        except LabError as e:
            pytest.fail(str(e))
        self.client = e3rpc.Client(self.sock)

    def ports_ready(self):
        # net_af_packet copied each port's MTU onto its interface, and the
        # kernel would drop longer frames before the switch sees them. Give
        # the wire its slack back so the switch's own MTU check is what the
        # oversize tests judge.
        for p in CUSTOMER + FABRIC:
            nsexec(self.ns, "ip", "link", "set", p, "mtu", str(VETH_MTU))
        wait_for(lambda: all(x["link"] == "up" for x in self.rpc("port_list")),
                 timeout=10, what="links up")

    def warm_restart(self, timeout=30):
        """SIGUSR2 (the switch needs --checkpoint), then the same command
        again; returns the old process's exit status."""
        self.client.close()
        try:
            self.dp.warm_restart(timeout)
        except LabError as e:
            pytest.fail(str(e))
        self.client = e3rpc.Client(self.sock)
        self.ports_ready()
        return self.dp.exit_status

    def handover(self, timeout=30):
        """SIGHUP: the switch starts a new process of its binary and hands
        the node over; the old one exits. Returns the old one's exit status
        (None when it was not the test's child) and the new process's PID."""
        self.client.close()
        try:
            pid = self.dp.handover(timeout)
        except LabError as e:
            pytest.fail(str(e))
        self.client = e3rpc.Client(self.sock)
        return self.dp.exit_status, pid

    def stop(self):
        if self.client is not None:
            try:
                self.client.close()
            except Exception:
                pass
        self.dp.stop()
        if self.netns is not None:
            self.netns.delete()
        try:
            os.unlink(self.logpath)
        except FileNotFoundError:
            pass

    def log_tail(self, n=40):
        return self.dp.log_tail(n)

    def check_alive(self):
        if not self.dp.alive():
            code = self.dp.proc.poll() if self.dp.proc else None
            pytest.fail(f"e3-vswitchd is gone (exit status {code}):\n{self.log_tail()}")

    # ---- RPC ----------------------------------------------------------------
    def rpc(self, method, **params):
        return self.client.call(method, params or None)

    def reset(self):
        """Back to ports only, default settings, zero counters."""
        self.dp.sync({"version": 1, "settings": DEFAULT_SETTINGS, "ports": self.rpc("config_dump")["ports"]})
        self.rpc("sflow_set", rate=0)
        self.rpc("sflow_read", max=4096)
        self.rpc("mac_flush")
        self.rpc("stats_clear")

    # ---- configuration shorthands (ids chosen by the test) -------------------
    def nexthop(self, nh_id, port):
        """A nexthop toward the neighbour (our test side) on fabric port `port`."""
        self.rpc("nexthop_add", id=nh_id, port=port, mac=PEER_MAC[port])

    def nhlfe(self, nhlfe_id, port, label):
        """nhlfe `nhlfe_id` = (nexthop on `port`, label); the nexthop id is the nhlfe id."""
        self.nexthop(nhlfe_id, port)
        self.rpc("nhlfe_add", id=nhlfe_id, nexthop=nhlfe_id, label=label)

    def eline(self, sid, name):
        """E-Line `sid` from circuit 1 (c1, VLAN 1000) into nhlfe 1 (f1, label 100)."""
        self.nhlfe(1, "f1", 100)
        self.rpc("service_add", id=sid, type="eline", name=name, nhlfe=1)
        self.rpc("circuit_add", id=1, port="c1", vlan=1000, service=sid)

    # ---- counters -------------------------------------------------------------
    def port(self, name):
        (p,) = [x for x in self.rpc("port_list", name=name) if x["name"] == name]
        return p

    def port_drops(self, name):
        return {k: v for k, v in self.port(name)["stats"]["drops"].items() if v}

    def total_drops(self):
        return {k: v for k, v in self.rpc("stats_get")["drops"].items() if v}

    def wait_drops(self, port, expect, timeout=10.0, total=True):
        """Wait until port's drop counters equal `expect` exactly; assert the
        switch-wide totals agree (total=False: other ports dropped too)."""
        try:
            wait_for(lambda: self.port_drops(port) == expect, timeout=timeout,
                     what=f"drops on {port} == {expect}")
        except AssertionError:
            raise AssertionError(f"drops on {port}: {self.port_drops(port)}, expected {expect}; "
                                 f"totals {self.total_drops()}")
        if total:
            assert self.total_drops() == expect

    def service(self, sid):
        (s,) = [x for x in self.rpc("service_list", id=sid) if x["id"] == sid]
        return s

    def macs(self, service):
        return {m["mac"]: m for m in self.rpc("mac_list", service=service)}
