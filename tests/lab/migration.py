"""A VM that live-migrates between two lab hosts' LANs, as QEMU's does.

The VM is a namespace of its own whose NIC is a macvlan on a host's
interface (a VLAN TAP of the shim, or eth0): eth0 on the source host's,
eth1 (down, same MAC and IP) on the destination's. Its processes (a
receiver) live through the move. migrate() is what a migration's
switchover does: the VM resumes on the destination (eth1 up), stops on
the source (eth0 down) and announces itself with a RARP broadcast, as QEMU
does (qemu_announce_self: ethertype 0x8035, "reverse request", its MAC as
sender and target). A helper process started in the VM beforehand does all
three at once, so no process start is in the measured window.

    vm = VM(lab, "vm1", "02:00:0a:1e:00:99", "10.30.0.99/24", ("h1", "eth0.3000"), ("h3", "eth0.3000"))
    vm.up(); vm.announce()            # at the source: every leaf learns it there
    t = vm.migrate()                  # wall-clock time the RARP left
    vm.down()

The helper, run inside the VM's namespace:
    python3 migration.py switch OLD NEW     reads "go", switches, sends the RARP, prints its time
    python3 migration.py announce DEV       sends one RARP on DEV
"""
import socket
import struct
import subprocess
import sys
import time

ETH_P_RARP = 0x8035


def rarp(mac: str) -> bytes:
    """QEMU's self-announcement: a RARP "reverse request" (op 3) from mac."""
    m = bytes.fromhex(mac.replace(":", ""))
    return (b"\xff" * 6 + m + struct.pack("!HHHBBH", ETH_P_RARP, 1, 0x0800, 6, 4, 3)
            + m + b"\0" * 4 + m + b"\0" * 4 + b"\0" * 18)


def send_rarp(dev: str) -> float:
    with open(f"/sys/class/net/{dev}/address") as f:
        mac = f.read().strip()
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((dev, 0))
    t = time.time()
    s.send(rarp(mac))
    s.close()
    return t


def _switch(old: str, new: str) -> None:
    print("ready", flush=True)
    sys.stdin.readline()
    subprocess.run(["ip", "-batch", "-"], input=f"link set {new} up\nlink set {old} down\n", text=True, check=True)
    print(f"{send_rarp(new):.6f}", flush=True)


class VM:
    def __init__(self, lab, name: str, mac: str, ip: str, src: tuple, dst: tuple | None):
        """src, dst: (host, interface) whose LAN the VM leaves and joins
        (dst None: a VM that stays, with eth0 only)."""
        self.lab, self.ns, self.mac, self.ip = lab, f"{lab.prefix}-{name}", mac, ip
        self.src, self.dst = src, dst
        self.helper = None

    def _ip(self, *args, ns=None):
        cmd = ["ip"] + (["-n", ns] if ns else []) + list(args)
        subprocess.run(cmd, check=True, capture_output=True, timeout=30)

    def up(self) -> "VM":
        self._ip("netns", "add", self.ns)
        self._ip("link", "set", "lo", "up", ns=self.ns)
        for dev, (host, lower) in [("eth0", self.src)] + ([("eth1", self.dst)] if self.dst else []):
            hns = self.lab.ns(host)
            tmp = f"mv{dev[-1]}{self.mac[-2:]}"
            self._ip("link", "add", tmp, "link", lower, "address", self.mac, "type", "macvlan", "mode", "bridge", ns=hns)
            self._ip("link", "set", tmp, "netns", self.ns, ns=hns)
            self._ip("link", "set", tmp, "name", dev, ns=self.ns)
            self._ip("addr", "add", self.ip, "dev", dev, ns=self.ns)
        self._ip("link", "set", "eth0", "up", ns=self.ns)
        return self

    def exec(self, cmd, **kw) -> subprocess.CompletedProcess:
        return subprocess.run(["ip", "netns", "exec", self.ns] + list(cmd), **kw)

    def popen(self, cmd, **kw) -> subprocess.Popen:
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        return subprocess.Popen(["ip", "netns", "exec", self.ns] + list(cmd), text=True, **kw)

    def announce(self, dev: str = "eth0") -> None:
        self.exec([sys.executable, __file__, "announce", dev], check=True, capture_output=True, timeout=30)

    def prepare(self) -> None:
        """Start the switchover helper (before the stream, out of the window)."""
        self.helper = self.popen([sys.executable, __file__, "switch", "eth0", "eth1"], stdin=subprocess.PIPE)
        if self.helper.stdout.readline().strip() != "ready":
            raise RuntimeError(f"migration helper: {self.helper.communicate()}")

    def migrate(self) -> float:
        """The switchover; returns when the RARP left (wall clock)."""
        if self.helper is None:
            self.prepare()
        self.helper.stdin.write("go\n")
        self.helper.stdin.flush()
        t = float(self.helper.stdout.readline())
        self.helper.wait(timeout=10)
        self.helper = None
        return t

    def down(self) -> None:
        if self.helper is not None and self.helper.poll() is None:
            self.helper.kill()
            self.helper.wait()
        # The namespace's processes first, then the namespace (its macvlans go with it).
        pids = subprocess.run(["ip", "netns", "pids", self.ns], capture_output=True, text=True).stdout.split()
        for p in pids:
            subprocess.run(["kill", "-9", p], capture_output=True)
        subprocess.run(["ip", "netns", "del", self.ns], capture_output=True)


def main(argv):
    if argv[0] == "switch":
        _switch(argv[1], argv[2])
    elif argv[0] == "announce":
        send_rarp(argv[1])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
