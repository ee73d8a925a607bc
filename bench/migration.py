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

    bench/migration.py                 # 5 runs
    bench/migration.py --runs 2
"""
import argparse
import json
import os
import platform
import re
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for p in (REPO / "tests", REPO / "datapath" / "python", REPO / "bench"):
    sys.path.insert(0, str(p))

from failover import stats, wait_all  # noqa: E402
from lab import Lab  # noqa: E402
from lab.control import ControlPlane, wait_for  # noqa: E402
from lab.migration import VM  # noqa: E402

TOPOLOGY = REPO / "examples" / "demo.yaml"
PREFIX = "mg"
API_PORT, ETCD_PORT = 23864, 23865
STREAM = REPO / "tests" / "lab" / "udpstream.py"
TARGET_MS = 50
BEGIN, END = "<!-- migration: begin -->", "<!-- migration: end -->"


def where(lab, node: str, mac: str):
    (green,) = [s for s in lab.client(node).call("service_list") if s.get("name") == "green"]
    for m in lab.client(node).call("mac_list", {"service": green["id"]}):
        if m["mac"] == mac:
            return "circuit" if "circuit" in m else "source"
    return None


class Bench:
    def __init__(self, args, state: Path):
        self.a, self.state = args, state
        self.lab = Lab(TOPOLOGY, PREFIX)
        self.cp = None

    def up(self):
        self.lab.up(start=True, ports=False)
        self.cp = ControlPlane(self.lab, self.state / "control", api_port=API_PORT, etcd_port=ETCD_PORT,
                               data_dir=self.state / "controller")
        self.cp.start()
        self.cp.e3ctl("topology", "import", str(TOPOLOGY), timeout=120)  # green among its services
        self.cp.wait_converged(timeout=120)

    def down(self):
        if self.cp is not None:
            self.cp.stop_all()
        self.lab.down()

    def run(self, i: int) -> dict:
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


def section(runs: list, a, elapsed: float) -> str:
    ok = [r for r in runs if not r.get("stalled")]
    w = stats([r["loss_window_ms"] for r in ok])
    lost = stats([r["lost"] for r in ok])
    row = "| - | - | 0 | - |"
    if w:
        row = (f"| {w['min']:.0f} / {w['median']:.0f} / {w['max']:.0f} ms | {lost['median']:.0f} | {len(ok)} | "
               f"< {TARGET_MS} ms: {'yes' if w['max'] < TARGET_MS else '**no**'} |")
    moved = sum(1 for r in ok if r.get("moved") == ["source", "source", "circuit"])
    return f"""{BEGIN}
## Live migration: a VM's E-LAN endpoint moves to another leaf

`make bench-migration` (`bench/migration.py`): a VM on the E-LAN green's
LAN behind leaf1 (h1's VLAN 3000) moves behind leaf3 (h3's) while h2
(leaf2) streams to it, {a.rate} datagrams/s for {a.seconds} s, the move {a.move_at:.0f} s in. The
VM stops at the source, resumes at the destination and sends a RARP, as
QEMU does after a migration (`tests/lab/migration.py`); the window counts
from the last datagram at the source to the first at the destination, the
switchover itself included. A fresh VM (MAC) each run. Machine:
{platform.machine()}, {os.cpu_count()} CPUs; run took {elapsed / 60:.0f} min.

| loss window (min / median / max) | lost (median) | runs | target |
| --- | --- | --- | --- |
{row}

In {moved} of {len(ok)} runs every leaf had moved the MAC after the stream
(leaf1 and leaf2 to leaf3's source, leaf3 to its circuit). The RARP is
flooded once to every leaf of the E-LAN and each learns the VM's new place
from it, as from any frame: no wait for aging, no flood of the stream.
An E-Line endpoint cannot move yet (docs/operations.md, "Live migration").
{END}
"""


def save(runs: list, a, start: float) -> None:
    Path(a.json).parent.mkdir(parents=True, exist_ok=True)
    Path(a.json).write_text(json.dumps(runs, indent=1))
    doc = Path(a.out).read_text() if Path(a.out).exists() else ""
    new = section(runs, a, time.monotonic() - start)
    if BEGIN in doc:
        doc = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END) + "\n", lambda _: new, doc, flags=re.S)
    else:
        doc = doc.rstrip() + "\n\n" + new
    Path(a.out).write_text(doc)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--seconds", type=int, default=6)
    ap.add_argument("--move-at", type=float, default=3.0)
    ap.add_argument("--out", default=str(REPO / "bench" / "FAILOVER.md"))
    ap.add_argument("--json", default=str(REPO / "bench" / "out" / "migration.json"))
    a = ap.parse_args(argv)
    if os.geteuid() != 0:
        ap.error("needs root (network namespaces)")
    start = time.monotonic()
    runs = []
    with tempfile.TemporaryDirectory(prefix="e3-mg-") as tmp:
        b = Bench(a, Path(tmp))
        try:
            b.up()
            for i in range(a.runs):
                r = b.run(i)
                runs.append(r)
                if r.get("stalled"):
                    print(f"run {i + 1}: the stream did not end in time; not counted", flush=True)
                    continue
                print(f"run {i + 1}: {r['loss_window_ms']} ms ({r['lost']} lost), MAC at {r['moved']}", flush=True)
                save(runs, a, start)
        finally:
            b.down()
    save(runs, a, start)
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
