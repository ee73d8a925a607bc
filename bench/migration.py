#!/usr/bin/env python3
"""The live-migration benchmark (make bench-migration): what moving a VM's
endpoint from a leaf to another costs its traffic, as loss windows in
milliseconds from a sequence-numbered stream, on examples/demo.yaml run by
the real controller and agents. Writes its section of bench/FAILOVER.md.

Each run makes a VM of its own (a namespace; a MAC and IP of its own, so
that move damping never counts one run's moves against the next) on the
E-LAN green's LAN behind leaf1 (h1's VLAN 3000), lets every leaf learn it
there, streams to it from h2 (leaf2) at --rate datagrams/s, and after
--move-at seconds migrates it behind leaf3 (h3's VLAN 3000): it stops at
the source, resumes at the destination and announces itself with a RARP,
as QEMU does (tests/lab/migration.py).

    bench/migration.py                 # 5 runs of each
    bench/migration.py --runs 2 --kinds eline
"""
import json
import os
import platform
import sys
import time

from fabricbench import STREAM, TOPOLOGY, FabricBench, parse, parser, run_all, save, stats, wait_all
from lab.control import wait_for
from lab.migration import VM

TARGET_MS = 50
BEGIN, END = "<!-- migration: begin -->", "<!-- migration: end -->"


def where(lab, node: str, mac: str):
    (green,) = [s for s in lab.client(node).call("service_list") if s.get("name") == "green"]
    for m in lab.client(node).call("mac_list", {"service": green["id"]}):
        if m["mac"] == mac:
            return "circuit" if "circuit" in m else "source"
    return None


def eline_seconds(a) -> float:
    """An E-Line run's stream: long enough for its window to close under it."""
    return max(a.seconds, a.move_at + a.window + 3)


class Bench(FabricBench):
    PREFIX, API_PORT, ETCD_PORT = "mg", 23864, 23865

    def up(self):
        self.start_fabric()
        self.cp.e3ctl("topology", "import", str(TOPOLOGY), timeout=120)  # green among its services
        self.cp.wait_converged(timeout=120)

    def run(self, kind: str, i: int) -> dict:
        return self.run_elan(i) if kind == "elan" else self.run_eline(i)

    def run_eline(self, i: int) -> dict:
        """The E-Line mig joins a peer behind leaf2 and a VM behind leaf1
        (untagged); moved to leaf3 with a window of --window s, the VM
        switching over --move-at s into the stream, inside the window."""
        name = f"mig{i}"
        mac, peer_mac = f"02:00:0a:4d:01:{i:02x}", f"02:00:0a:4d:02:{i:02x}"
        ip, peer_ip = f"10.77.{i}.1/24", f"10.77.{i}.2/24"
        self.cp.create_service(name, "eline", ["leaf2:cust1:untagged", "leaf1:cust1:untagged"])
        peer = VM(self.lab, f"peer{i}", peer_mac, peer_ip, ("h2", "eth0"), None)
        vm = VM(self.lab, f"vm{i}", mac, ip, ("h1", "eth0"), ("h3", "eth0"))
        try:
            peer.up()
            vm.up()
            self.cp.wait_service(name, timeout=60)
            peer.exec(["ip", "neigh", "replace", ip.split("/")[0], "lladdr", mac, "dev", "eth0", "nud", "permanent"],
                      check=True)
            vm.prepare()
            out = self.state / f"eline{i}.json"
            seconds = eline_seconds(self.a)
            sent = int(self.a.rate * seconds)
            rx = vm.popen(["python3", str(STREAM), "recv", "--port", "5803", "--seconds", str(seconds + 3),
                           "--out", str(out), "--sent", str(sent), "--rate", str(self.a.rate)])
            time.sleep(0.5)
            tx = peer.popen(["python3", str(STREAM), "send", "--dst", ip.split("/")[0], "--port", "5803",
                             "--rate", str(self.a.rate), "--seconds", str(seconds)])
            t0 = time.monotonic()
            self.cp.e3ctl("service", "move", name, "--circuit", "leaf1:cust1:untagged", "--to",
                          "leaf3:cust1:untagged", "--window", str(self.a.window))
            self.cp.wait_converged(timeout=60)
            time.sleep(max(0.0, self.a.move_at - (time.monotonic() - t0)))
            in_window = bool(self.cp.service(name).get("move"))
            vm.migrate()
            if not wait_all([tx, rx], seconds + 60):
                return {"stalled": True}
            r = json.loads(out.read_text())
            r["in_window"] = in_window
            return r
        finally:
            vm.down()
            peer.down()
            wait_for("the move's end", lambda: not self.cp.service(name).get("move"), timeout=60)
            self.cp.e3ctl("service", "delete", name, check=False)

    def run_elan(self, i: int) -> dict:
        mac, ip = f"02:00:0a:1e:01:{i:02x}", f"10.30.1.{i + 1}/16"
        addr = ip.split("/")[0]
        vm = VM(self.lab, f"vm{i}", mac, ip, ("h1", "eth0.3000"), ("h3", "eth0.3000"))
        vm.up()
        try:
            # A /16 on the VM and a static neighbour at h2: the stream is
            # unicast from its first datagram, as after the VM's first ARP.
            self.lab.host_exec("h2", ["ip", "route", "replace", addr, "dev", "eth0.3000"])
            self.lab.host_exec("h2", ["ip", "neigh", "replace", addr, "lladdr", mac, "dev", "eth0.3000",
                                      "nud", "permanent"])
            vm.announce()
            wait_for("every leaf learns the VM behind leaf1", lambda: [where(self.lab, n, mac) for n in (
                "leaf1", "leaf2", "leaf3")] == ["circuit", "source", "source"], timeout=30)
            vm.prepare()
            out = self.state / f"run{i}.json"
            sent = int(self.a.rate * self.a.seconds)
            rx = vm.popen(["python3", str(STREAM), "recv", "--port", "5802", "--seconds", str(self.a.seconds + 3),
                           "--out", str(out), "--sent", str(sent), "--rate", str(self.a.rate)])
            time.sleep(0.5)
            tx = self.lab.host_popen("h2", ["python3", str(STREAM), "send", "--dst", addr, "--port", "5802",
                                           "--rate", str(self.a.rate), "--seconds", str(self.a.seconds)])
            time.sleep(self.a.move_at)
            vm.migrate()
            if not wait_all([tx, rx], self.a.seconds + 60):
                return {"stalled": True}
            r = json.loads(out.read_text())
            r["moved"] = [where(self.lab, n, mac) for n in ("leaf1", "leaf2", "leaf3")]
            return r
        finally:
            vm.down()
            self.lab.host_exec("h2", ["ip", "neigh", "del", addr, "dev", "eth0.3000"], check=False)
            self.lab.host_exec("h2", ["ip", "route", "del", addr, "dev", "eth0.3000"], check=False)


def section(results: dict, a, elapsed: float) -> str:
    rows = []
    for kind, what in (("elan", "E-LAN: the VM's RARP moves its MAC"),
                       ("eline", f"E-Line: `e3ctl service move`, {a.window} s window")):
        ok = [r for r in results.get(kind, []) if not r.get("stalled")]
        w, lost = stats([r["loss_window_ms"] for r in ok]), stats([r["lost"] for r in ok])
        if w:
            rows.append(f"| {what} | {w['min']:.0f} / {w['median']:.0f} / {w['max']:.0f} ms | {lost['median']:.0f} | "
                        f"{len(ok)} | < {TARGET_MS} ms: {'yes' if w['max'] < TARGET_MS else '**no**'} |")
    elan = [r for r in results.get("elan", []) if not r.get("stalled")]
    moved = sum(1 for r in elan if r.get("moved") == ["source", "source", "circuit"])
    eline = [r for r in results.get("eline", []) if not r.get("stalled")]
    inside = sum(1 for r in eline if r.get("in_window"))
    return f"""{BEGIN}
## Live migration: a VM's endpoint moves to another leaf

`make bench-migration` (`bench/migration.py`): a VM behind leaf1 moves
behind leaf3 while a sender behind leaf2 streams to it, {a.rate} datagrams/s
for {a.seconds} s (E-Line: {eline_seconds(a):.0f} s), the VM switching over {a.move_at:.0f} s in: it resumes at the
destination, stops at the source and sends a RARP, as QEMU does after a
migration (`tests/lab/migration.py`). The window counts from the last
datagram before a gap to the first after it, the switchover itself
included. A fresh VM (MAC) each run. Machine: {platform.machine()},
{os.cpu_count()} CPUs; run took {elapsed / 60:.0f} min.

| endpoint | loss window (min / median / max) | lost (median) | runs | target |
| --- | --- | --- | --- | --- |
{chr(10).join(rows)}

E-LAN (green, the VM on h1's then h3's VLAN 3000): the RARP is flooded once
to every leaf, and each learns the VM's new place from it; in {moved} of
{len(elan)} runs every leaf had moved the MAC after the stream (leaf1 and
leaf2 to leaf3's source, leaf3 to its circuit). E-Line (untagged, the peer
behind leaf2): the move is started 0.5 s into the stream and the VM switches
inside its window (in {inside} of {len(eline)} runs), while leaf2 sends to
both places; the window then closes under the stream, leaf1 removed.
{END}
"""


def main(argv=None):
    ap = parser(__doc__, "FAILOVER.md", "migration.json", seconds=6)
    ap.add_argument("--move-at", type=float, default=3.0)
    ap.add_argument("--window", type=int, default=6, help="E-Line: the move's window, seconds")
    ap.add_argument("--kinds", default="elan,eline")
    a = parse(ap, argv, {"kinds": ["elan", "eline"]})
    start = time.monotonic()
    return run_all(Bench, a, a.kinds, {}, lambda r: f": {r['loss_window_ms']} ms ({r['lost']} lost)",
                   lambda results: save(results, a, section(results, a, time.monotonic() - start), (BEGIN, END)))


if __name__ == "__main__":
    sys.exit(main())
