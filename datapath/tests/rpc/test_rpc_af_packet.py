"""net_af_packet ports as port_add sets them up: one queue pair per worker
(every queue polled, since the PMD's sockets share one PACKET_FANOUT group),
4096-byte ring frames with the MTU they allow, and the link state of the
kernel interface. Real veths in network namespaces (tag dpF), an e3-vswitchd
with two workers, UDP flows from the kernel as traffic.
"""
import subprocess

import pytest

from rpc_lab import RpcError, Vswitchd
from test_rpc_traffic import wait_for

NS = {"a": "dpF-ta", "b": "dpF-tb"}
ADDR = {"a": "10.77.1.1", "b": "10.77.1.2"}
N_FLOWS = 64


def sh(*cmd, ns=None):
    if ns is not None:
        cmd = ("ip", "netns", "exec", ns) + cmd
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def cleanup():
    for side in NS:
        subprocess.run(["ip", "netns", "del", NS[side]], capture_output=True)
        subprocess.run(["ip", "link", "del", f"dpF-t{side}1"], capture_output=True)


@pytest.fixture
def veths():
    """Host a (ns dpF-ta, dpF-ta0) <-> dpF-ta1 and host b likewise; the *1
    ends stay in our namespace for the switch."""
    cleanup()
    try:
        macs = {}
        for side in NS:
            ns, host, sw = NS[side], f"dpF-t{side}0", f"dpF-t{side}1"
            sh("ip", "netns", "add", ns)
            sh("ip", "link", "add", host, "type", "veth", "peer", "name", sw)
            sh("ip", "link", "set", host, "netns", ns)
            for dev, where in ((host, ns), (sw, None)):
                sh("sysctl", "-q", "-w", f"net.ipv6.conf.{dev}.disable_ipv6=1", ns=where)
                sh("ethtool", "-K", dev, "rx", "off", "tx", "off", "tso", "off", "gso", "off",
                   "gro", "off", "rxvlan", "off", "txvlan", "off", ns=where)
                sh("ip", "link", "set", dev, "up", ns=where)
            sh("ip", "addr", "add", f"{ADDR[side]}/24", "dev", host, ns=ns)
            macs[side] = sh("cat", f"/sys/class/net/{host}/address", ns=ns).strip()
        # Static neighbours: the flows below are the only traffic.
        for side, other in (("a", "b"), ("b", "a")):
            sh("ip", "neigh", "replace", ADDR[other], "lladdr", macs[other], "dev",
               f"dpF-t{side}0", ns=NS[side])
        yield macs
    finally:
        cleanup()


@pytest.fixture
def two_workers():
    """e3-vswitchd with two workers (lcores 1 and 2 share CPU 1), and mbufs
    for frames of up to 4096 bytes."""
    v = Vswitchd(extra_args=("--mbuf-data", "4096"), lcores="0@0,1@1,2@1")
    try:
        v.start()
        with v.client() as c:
            yield c
    finally:
        v.stop()


def hairpin(c, mtu=None):
    for side in NS:
        p = {"name": f"c{side}", "devargs": f"net_af_packet_dpF{side},iface=dpF-t{side}1",
             "kind": "customer"}
        if mtu:
            p["mtu"] = mtu
        c.call("port_add", p)
    c.call("service_add", id=1, type="eline")
    c.call("circuit_add", id=1, port="ca", vlan="untagged", service=1)
    c.call("circuit_add", id=2, port="cb", vlan="untagged", service=1)


SEND = """
import socket
for i in range({n}):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("{src}", 20000 + i))
    s.sendto(b"x" * {size}, ("{dst}", 9000))
    s.close()
"""

RECV = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("{addr}", 9000))
s.settimeout(10)
print("ready", flush=True)
seen = set()
try:
    while len(seen) < {n}:
        data, peer = s.recvfrom(65535)
        seen.add(peer[1])
except socket.timeout:
    pass
print(len(seen))
"""


def flows(n, size=32):
    """n UDP flows (distinct source ports) a -> b; how many arrived."""
    recv = subprocess.Popen(["ip", "netns", "exec", NS["b"], "python3", "-c",
                             RECV.format(addr=ADDR["b"], n=n)],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert recv.stdout.readline().strip() == "ready"
        sh("python3", "-c", SEND.format(n=n, src=ADDR["a"], dst=ADDR["b"], size=size), ns=NS["a"])
        out, _ = recv.communicate(timeout=30)
        return int(out.strip())
    finally:
        if recv.poll() is None:
            recv.kill()
            recv.wait()


def test_every_worker_has_a_queue_pair_and_every_flow_arrives(veths, two_workers):
    c = two_workers
    hairpin(c)
    # qpairs=2 was asked for: both workers poll a queue of each port.
    queues = {(q["port"], q["queue"]): w["index"]
              for w in c.call("stats_get")["workers"] for q in w["queues"]}
    for port in ("ca", "cb"):
        assert {queues.get((port, 0)), queues.get((port, 1))} == {0, 1}, queues
    # The port's configuration is still what was asked for.
    assert c.call("port_list", name="ca")[0]["rx_queues"] == 1
    # Flows are spread over both sockets by the kernel's fanout hash; an
    # unpolled queue would swallow its share.
    assert flows(N_FLOWS) == N_FLOWS
    drops = c.call("stats_get")["drops"]
    assert drops["tx_full"] == 0 and drops["no_mbuf"] == 0


def test_large_frames_and_the_mtu_limit(veths, two_workers):
    c = two_workers
    # Frames of MTU 3000 pass whole (the ring frames hold 4030 bytes).
    for side in NS:
        sh("ip", "link", "set", f"dpF-t{side}0", "mtu", "3000", ns=NS[side])
        sh("ip", "link", "set", f"dpF-t{side}1", "mtu", "3000")
    hairpin(c, mtu=3000)
    assert flows(4, size=2972) == 4
    rx = c.call("port_list", name="ca")[0]["stats"]
    assert rx["drops"]["oversize"] == 0
    # An MTU whose frames the ring would cut is refused, and nothing changes.
    with pytest.raises(RpcError) as e:
        c.call("port_add", name="ca", devargs="net_af_packet_dpFa,iface=dpF-ta1",
               kind="customer", mtu=5000)
    assert e.value.code == -32004 and "4030" in str(e.value)
    assert c.call("port_list", name="ca")[0]["mtu"] == 3000
    with pytest.raises(RpcError) as e:
        c.call("port_add", name="cx", devargs="net_af_packet_dpFx,iface=dpF-ta1,framesz=2048",
               kind="fabric")
    assert e.value.code == -32004 and "1982" in str(e.value)
    assert [p["name"] for p in c.call("port_list")] == ["ca", "cb"]


def test_link_follows_the_kernel_interface(veths, two_workers):
    c = two_workers
    hairpin(c)

    def link():
        return c.call("port_list", name="ca")[0]["link"]

    assert link() == "up"
    sh("ip", "link", "set", "dpF-ta0", "down", ns=NS["a"])   # our end loses carrier
    assert wait_for(lambda: link() == "down")
    sh("ip", "link", "set", "dpF-ta0", "up", ns=NS["a"])
    assert wait_for(lambda: link() == "up")
