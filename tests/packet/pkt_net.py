"""Network namespace, veth pairs and raw frame I/O for the packet tests.

The switch (e3-vswitchd) runs inside a network namespace and owns one end of
each veth pair through net_af_packet; the tests own the peer ends. Frames are
sent and received on the peers with plain AF_PACKET sockets that are created
inside the namespace (setns on this thread, then back), so the pytest process
itself does the I/O: no helper process, no scapy sockets, exact bytes.

VLAN tags: the kernel moves a received 802.1Q tag into packet metadata before
AF_PACKET sees the frame; we ask for PACKET_AUXDATA and put the tag back, so
every captured frame is what was on the wire.
"""
import contextlib
import errno
import ctypes
import os
import select
import socket
import struct
import subprocess
import time

SOL_PACKET = 263
PACKET_AUXDATA = 8
PACKET_OUTGOING = 4
TP_STATUS_VLAN_VALID = 1 << 4
TP_STATUS_VLAN_TPID_VALID = 1 << 6
ETH_P_ALL = 0x0003
CLONE_NEWNET = 0x40000000

_libc = ctypes.CDLL(None, use_errno=True)


def sh(*args, check=True):
    """Run a command; on failure raise with its stderr (setup must be loud)."""
    r = subprocess.run(args, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: rc={r.returncode}: {r.stderr.strip()}")
    return r


def nsexec(ns, *args, check=True):
    return sh("ip", "netns", "exec", ns, *args, check=check)


@contextlib.contextmanager
def in_netns(ns):
    """Switch this thread into netns ns for the duration of the block.
    Sockets created inside stay in that namespace after we switch back."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(f"/var/run/netns/{ns}", os.O_RDONLY)
    try:
        if _libc.setns(target, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns({ns})")
        try:
            yield
        finally:
            if _libc.setns(own, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns(back)")
    finally:
        os.close(target)
        os.close(own)


OFFLOADS = ["rx", "off", "tx", "off", "tso", "off", "gso", "off", "gro", "off",
            "rxvlan", "off", "txvlan", "off"]


class Netns:
    """A namespace with veth pairs: switch side `name`, test side `name`+'p'."""

    def __init__(self, name):
        self.name = name
        sh("ip", "netns", "add", name)
        try:
            # No IPv6 autoconf/MLD/DAD chatter on our wires.
            nsexec(name, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1")
            nsexec(name, "sysctl", "-q", "-w", "net.ipv6.conf.default.disable_ipv6=1")
            nsexec(name, "ip", "link", "set", "lo", "up")
        except Exception:
            self.delete()
            raise

    def add_veth(self, ifname, mac, peer_mac, mtu):
        peer = ifname + "p"
        nsexec(self.name, "ip", "link", "add", ifname, "address", mac, "mtu", str(mtu),
               "type", "veth", "peer", "name", peer, "address", peer_mac, "mtu", str(mtu))
        for i in (ifname, peer):
            nsexec(self.name, "ethtool", "-K", i, *OFFLOADS)
            nsexec(self.name, "ip", "link", "set", i, "up")

    def delete(self):
        sh("ip", "netns", "del", self.name, check=False)


class Wire:
    """Raw AF_PACKET sockets on the test side of every veth pair."""

    def __init__(self, ns, ifaces):
        self.socks = {}
        with in_netns(ns):
            for ifname in ifaces:
                s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
                s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
                s.bind((ifname, 0))
                s.setblocking(False)
                self.socks[ifname] = s

    def close(self):
        for s in self.socks.values():
            s.close()

    @staticmethod
    def _recv(s):
        data, anc, _flags, addr = s.recvmsg(65536, socket.CMSG_SPACE(32))
        if addr[2] == PACKET_OUTGOING:
            return None
        for level, typ, cdata in anc:
            if level == SOL_PACKET and typ == PACKET_AUXDATA and len(cdata) >= 20:
                status, _len, _snap, _mac, _net, tci, tpid = struct.unpack("IIIHHHH", cdata[:20])
                if status & TP_STATUS_VLAN_VALID:
                    if not status & TP_STATUS_VLAN_TPID_VALID:
                        tpid = 0x8100
                    data = data[:12] + struct.pack("!HH", tpid, tci) + data[12:]
        return data

    def drain(self):
        for s in self.socks.values():
            while True:
                try:
                    s.recvmsg(65536, socket.CMSG_SPACE(32))
                except BlockingIOError:
                    break
                except OSError as e:
                    if e.errno != errno.ENETDOWN:   # a test took this link down
                        raise
                    break

    def send(self, ifname, frame):
        self.socks[ifname].send(bytes(frame))

    def exchange(self, sends, expect=0, match=None, timeout=5.0, quiet=0.25, act=None):
        """Send frames, then capture on every test-side port.

        sends: [(ifname, frame)]. Capturing stops `quiet` seconds after
        `expect` frames (in total) have arrived, so extra frames (a leak, a
        duplicate) are caught too; `timeout` is only a safety net. match:
        bytes that a frame must contain to count (the test's token), so
        stray kernel frames never confuse a test. act: called after the
        sends, for what makes the switch send by itself (an RPC).
        Returns {ifname: [frame bytes, ...]} for every port.
        """
        self.drain()
        got = {name: [] for name in self.socks}
        for ifname, frame in sends:
            self.send(ifname, frame)
        if act is not None:
            act()
        start = time.monotonic()
        deadline = start + timeout
        n = 0
        done_at = start + quiet if expect == 0 else None
        byfd = {s.fileno(): name for name, s in self.socks.items()}
        while True:
            now = time.monotonic()
            end = done_at if done_at is not None else deadline
            if now >= end or now >= deadline:
                break
            ready, _, _ = select.select(list(self.socks.values()), [], [], end - now)
            for s in ready:
                while True:
                    try:
                        frame = self._recv(s)
                    except BlockingIOError:
                        break
                    except OSError as e:
                        if e.errno != errno.ENETDOWN:
                            raise
                        break
                    if frame is None or (match is not None and match not in frame):
                        continue
                    got[byfd[s.fileno()]].append(frame)
                    n += 1
            if done_at is None and n >= expect:
                done_at = time.monotonic() + quiet
        return got


def wait_for(pred, timeout=10.0, interval=0.05, what="condition"):
    """Poll pred() until it returns a truthy value; a safety net, not a timing claim."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = pred()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what}; last value: {last!r}")


def assert_delivered(got, expect):
    """Exactly `expect` ({peer: n}) frames per test-side port, none elsewhere."""
    counts = {name: len(frames) for name, frames in got.items()}
    want = {name: expect.get(name, 0) for name in got}
    assert counts == want, f"frames per port {counts}, expected {want}"
