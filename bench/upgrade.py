#!/usr/bin/env python3
"""The upgrade benchmark (make bench-upgrade): what restarting a node, and
upgrading the whole fabric, costs the customers, as datagrams lost and loss
windows in ms of sequence-numbered one-way streams, on examples/demo.yaml
run by the real controller and agents (docs/ha.md, docs/deploy.md). Writes
bench/UPGRADE.md.

Streams from h1 at --rate datagrams/s: the E-Line red (to h2), the E-LAN
green to h3 (known unicast) and as broadcasts (BUM, at h3), and from h4 the
ECMP E-Line blue (to h5). Each scenario, --runs times:
  none           nothing done: the host's load alone (the floor under the others)
  leaf-cold      leaf1's e3-vswitchd SIGTERMed and started again (its agent reprograms it)
  leaf-warm      leaf1 warm-restarted (SIGUSR2, --checkpoint)
  leaf-handover  leaf1 handed over to a new process (SIGHUP)
  leaf-drained   leaf1 drained, handed over, undrained
  site-leaf-warm leaf2 (a leaf of the multi-homed site) warm-restarted, not drained
  site-leaf-drained leaf2 drained, handed over, undrained
  spine-cold     the spine under red's path SIGTERMed and started again
  spine-warm     that spine warm-restarted
  spine-handover that spine handed over
  spine-drained  that spine drained, SIGTERMed and started again, undrained
  rolling        the controller restarted, then scripts/rolling-upgrade over every node

    bench/upgrade.py                       # 5 runs of every scenario
    bench/upgrade.py --runs 1 --scenarios leaf-handover,rolling
    bench/upgrade.py --keep --scenarios spine-cold   # rerun one row set, keep the rest
    bench/upgrade.py restart-node NODE     # rolling-upgrade's --node-cmd in the lab
"""
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import yaml

from failover import Bench as FailoverBench
from fabricbench import REPO, TOPOLOGY, parse, parser, run_all, save, start_streams, stats, wait_all
from lab import Lab
from lab.control import wait_for

RED = ("red", "eline", ["leaf1:cust1:1000", "leaf2:cust1:2000"])
GREEN = ("green", "elan", ["leaf1:cust1:3000", "leaf2:cust1:3000", "leaf3:cust1:3000"])
BLUE = ("blue", "eline", ["leaf1:cust2:untagged", "leaf2:cust2:40"])
VIOLET = ("violet", "elan", ["leaf1:cust3:untagged", "@site1:untagged"])   # h7 and the site h6 (leaf2, leaf3)
FLOWS = {"eline": ("h1", "h2", "10.10.0.2", 5611), "elan": ("h1", "h3", "10.30.0.3", 5612),
         "elan-bum": ("h1", "h3", "10.30.0.255", 5613), "ecmp": ("h4", "h5", "10.40.0.2", 5614),
         "site-into": ("h7", "h6", "10.60.0.6", 5615), "site-from": ("h6", "h7", "10.60.0.7", 5616)}
KINDS = (("eline", "E-Line red (h1 -> h2)"), ("elan", "E-LAN green unicast (h1 -> h3)"),
         ("elan-bum", "E-LAN green BUM (h1 -> broadcast, at h3)"), ("ecmp", "ECMP E-Line blue (h4 -> h5)"),
         ("site-into", "E-LAN violet into the multi-homed site (h7 -> h6)"),
         ("site-from", "E-LAN violet from the site (h6 -> h7)"))
# scenario -> (stream seconds, what it is)
SCENARIOS = {
    "none": (12, "nothing done: what the host's load alone costs the streams, the floor under every other row"),
    "leaf-cold": (12, "leaf1 (the customers' leaf): SIGTERM, started again, reprogrammed by its agent"),
    "leaf-warm": (12, "leaf1: warm restart (SIGUSR2; exits, resumes from its checkpoint)"),
    "leaf-handover": (12, "leaf1: handover (SIGHUP; a new process opens the ports beside the old one "
                          "and takes the node over)"),
    "leaf-drained": (40, "leaf1: drained, handover, undrained"),
    "site-leaf-warm": (12, "leaf2 (a leaf of the site h6): warm restart, not drained"),
    "site-leaf-drained": (40, "leaf2 (a leaf of the site h6): drained, handover, undrained"),
    "spine-cold": (12, "the spine under red's path: SIGTERM (BFD AdminDown), started again"),
    "spine-warm": (12, "that spine: warm restart, not drained"),
    "spine-handover": (12, "that spine: handover, not drained"),
    "spine-drained": (40, "that spine: drained, SIGTERM, started again, undrained"),
    "rolling": (150, "the whole fabric: the controller restarted, then scripts/rolling-upgrade "
                     "(each node drained, handed over, undrained)"),
}


class Bench(FailoverBench):
    """The failover bench's fabric and steps, on a lab of its own."""
    PREFIX, API_PORT, ETCD_PORT = "up", 23860, 23861

    def up(self):
        self.start_fabric()
        for name, kind, circuits in (RED, GREEN):
            self.cp.create_service(name, kind, circuits)
        self.cp.create_service(*BLUE, "--ecmp")
        self.cp.e3ctl("topology", "import", str(TOPOLOGY), timeout=120)   # the site's segment
        self.cp.create_service(*VIOLET)
        self.settle()
        self.before = self.labels()   # what no scenario may relabel

    def settle(self):
        super().settle()
        from lab.traffic import ping_until
        wait_for("the site reached through both leaves", lambda: self.cp.service("violet")["route"]["sites"]
                 ["site1"].get("leaves") == ["leaf2", "leaf3"], timeout=120)
        for src, kind in (("h4", "ecmp"), ("h7", "site-into"), ("h6", "site-from")):
            if not ping_until(self.lab, src, FLOWS[kind][2], attempts=30).ok:
                raise RuntimeError(f"{src} -> {FLOWS[kind][2]} does not answer")

    def run(self, scenario: str, i: int) -> dict:
        tag = f"{scenario}-{i}"
        spine = self.spine()
        seconds = SCENARIOS[scenario][0]
        txs, rxs, outs = start_streams(self.lab, FLOWS, self.a.rate, seconds, self.state, tag)
        took = None
        try:
            time.sleep(self.a.fault_at)
            t0, began = time.monotonic(), time.time()
            self.inject(scenario, spine)
            took = time.monotonic() - t0
        finally:
            stalled = not wait_all(txs + rxs, seconds + 120)
        if stalled:
            self.settle()
            return {"stalled": True}
        out = {kind: json.loads(path.read_text()) for kind, path in outs.items()}
        out["took_s"] = round(took, 1)
        out["began"] = began   # wall clock, as the streams' "start"
        # The scenario must have ended inside the stream, or its tail went unmeasured.
        out["inside"] = took is not None and self.a.fault_at + took < seconds
        out["relabelled"] = self.labels() != self.before
        if any(out[k]["loss_window_ms"] > 100 for k in FLOWS):
            out["events"] = self.cp.json("events")[-60:]   # what the controller saw, to explain it
        self.settle()
        return out

    def labels(self):
        return {s["name"]: s.get("allocations") for s in self.cp.services()}

    def inject(self, scenario: str, spine: str):
        lab, cp = self.lab, self.cp
        node = {"leaf": "leaf1", "site": "leaf2"}.get(scenario.split("-")[0], spine)
        e3ctl = lambda *a: cp.e3ctl(*a, timeout=300)  # noqa: E731
        if scenario == "none":
            pass
        elif scenario.endswith("-cold"):
            lab.stop(node)
            lab.start(node, ports=False)
        elif scenario.endswith("-warm"):
            lab.warm_restart(node)
        elif scenario.endswith("-handover"):
            lab.handover(node)
        elif scenario.endswith("-drained"):
            e3ctl("node", "drain", node, "--wait", "120")
            if node.startswith("leaf"):
                lab.handover(node)
            else:
                lab.stop(node)
                lab.start(node, ports=False)
            cp.wait_converged(timeout=120)
            e3ctl("node", "undrain", node, "--wait", "120")
        elif scenario == "rolling":
            cp.stop_controller()
            cp.start_controller()
            subprocess.run([str(REPO / "scripts" / "rolling-upgrade"), "--node-cmd",
                            f"python3 {REPO / 'bench' / 'upgrade.py'} restart-node"],
                           env=dict(cp.env(), PATH=f"{REPO / 'build' / 'bin'}:{os.environ['PATH']}"),
                           check=True, timeout=600)
        else:
            raise ValueError(scenario)
        if not scenario.endswith("-drained") and scenario != "rolling":
            cp.wait_converged(timeout=120)


def restart_node(node: str) -> int:
    """rolling-upgrade's --node-cmd in the lab: a handover (SIGHUP), as
    systemctl reload does. (The lab runs one build: the binary is not new.)"""
    lab = Lab(TOPOLOGY, Bench.PREFIX, safety_net=False)
    if lab.pid(node) is None:
        print(f"restart-node: {node} not running", file=sys.stderr)
        return 1
    lab.handover(node)
    return 0


def bfd_timers() -> str:
    """The fabric's BFD timers, as the topology sets them."""
    b = (yaml.safe_load(TOPOLOGY.read_text()).get("fabric") or {}).get("bfd") or {}
    return f"{b.get('tx_ms', 10)} ms x {b.get('multiplier', 3)}"


AFTER_S = 1.0   # how long after a scenario its losses still count as its own


def during(run: dict, kind: str, args):
    """The datagrams of kind lost (or late) while the scenario ran, from its
    start to AFTER_S after its end (the others fell to the host's load);
    None for a run that did not keep the times."""
    start = run[kind].get("start")
    if start is None or "began" not in run:
        return None
    lo = (run["began"] - start) * args.rate
    hi = (run["began"] + run["took_s"] + AFTER_S - start) * args.rate
    return sum(max(0, int(min(b, hi) - max(a, lo)) + 1) for a, b in run[kind]["missing"] if b >= lo and a <= hi)


def report(results: dict, args, elapsed: float) -> str:
    rows = []
    shown = [s for s in SCENARIOS if s in results]
    for scenario in shown:
        runs = results.get(scenario, [])
        for kind, name in KINDS:
            lost = stats([r[kind]["lost"] for r in runs])
            late = stats([r[kind].get("late", 0) for r in runs])
            own = stats([x for x in (during(r, kind, args) for r in runs) if x is not None])
            w = stats([r[kind]["loss_window_ms"] for r in runs])
            if lost is None:
                continue
            own = f"{own['min']:.0f} / {own['median']:.0f} / {own['max']:.0f}" if own else "-"
            rows.append(f"| {scenario} | {name} | {lost['min']} / {lost['median']} / {lost['max']} | "
                        f"{late['min']} / {late['median']} / {late['max']} | {own} | "
                        f"{w['min']:.0f} / {w['median']:.0f} / {w['max']:.0f} |")
        if runs:
            took = stats([r["took_s"] for r in runs])
            relabelled = sum(1 for r in runs if r["relabelled"])
            outside = sum(1 for r in runs if not r["inside"])
            rows.append(f"| {scenario} | (the scenario took {took['median']} s median; {len(runs)} runs; "
                        f"relabelled in {relabelled}; ran past the stream in {outside}) | | | | |")
    scen = "\n".join(f"- `{k}`: {SCENARIOS[k][1]}." for k in shown)
    took = f"Run took {elapsed / 60:.0f} min."
    if set(shown) != set(args.scenarios):
        took = (f"This run took {elapsed / 60:.0f} min for {', '.join(args.scenarios)}; "
                "the other rows are from the run before it (`--keep`).")
    return f"""# Restarts and upgrades: what the customers lose

`make bench-upgrade` (`bench/upgrade.py`) on `examples/demo.yaml` (2 spines,
3 leaves) with the real controller, agents and datapaths. One-way streams of
{args.rate} sequence-numbered datagrams/s (`tests/lab/udpstream.py`); per
scenario, min / median / max over the runs of the datagrams lost, of those
of them that came but more than 50 ms after they were sent (late: counted as
lost), of them while the scenario ran (from its start to {AFTER_S:.0f} s after its
end: the rest fell to the host's load, as the `none` row shows), and of the
loss window (the longest silence a gap caused). Each
stream starts once its receiver listens; the scenario starts
{args.fault_at:.0f} s into the stream and must end inside it.
Machine: {platform.machine()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()};
five datapaths (adaptive polling, `--no-huge`), five agents and the controller share them.
BFD {bfd_timers()} (the demo's); a warm restart or a handover asks the neighbours to wait 3 s. {took}

| scenario | service | datagrams lost | of them late | of them during the scenario | loss window (ms) |
| --- | --- | --- | --- | --- | --- |
{chr(10).join(rows)}

{scen}

Reading it: h1, h4 and h7 are single-homed on leaf1, h2 and h5 on leaf2, h3
on leaf3, so a restart of one of those leaves loses their traffic for as
long as the restart itself takes, whatever is drained: for a warm restart
the old process's exit and the new one's start (`docs/ha.md` says where
that time goes; on this host, busy with the streams, one to three seconds
as its load varies),
and for a handover only the frames between the old process's last poll and
the new one's drop of what its rings held (a few ms); the site h6 is on
leaf2 and leaf3, and the spines carry nobody's only path. The rolling
upgrade hands every node over, so its E-Line and E-LAN rows add up two or
three such windows.

A late datagram came, but more than 50 ms after it was sent: for that long
the host ran neither the datapaths on its way nor the receiver (two CPUs
shared by five datapaths, five agents, the controller, the VLAN shims and
the streams). The `none` row is that load alone, with nothing restarted:
it sets the floor under every other row. Lateness happens most while a
handover's new process starts (it faults in about 120 MB, though at nice
19 until it takes over) and while the controller restarts. A stall longer than a detection
time (here 100 ms) also takes BFD sessions down, which then wait out
wait-to-restore (5 s): the controller avoids the restoring links but still
routes over them where nothing else connects, so unicast keeps flowing,
while flood trees (BUM), which only the controller repairs, move away and
back (each run with a loss window over 100 ms keeps the controller's events
in the JSON).

A warm restart or a handover holds the node's BFD sessions (its
neighbours wait for it) by slowing their interval, which the neighbours
read as a pause: the path checks over its links or ending at it become
unusable at once, so the protected traffic on them (ECMP members and a
site's leaves included) moves to its backups while the node still
forwards, and nothing but its own single-homed customers loses the
restart. Stopped with SIGTERM, a node announces AdminDown, and the paths
over its links move at once too. A restart that outlasts its hold (a host
that keeps the new process from loading its checkpoint past the 3 s) is
one without warning: the neighbours' link sessions time out and the
controller repairs, as after a failure.

What a row loses outside its scenario (the column before the last against
the first) came before the scenario began or seconds after it ended, and
late: the host stalling, in the wake of the run before (a drained
scenario leaves its undrain's moves back and wait-to-restore timers
behind) or of this one. In the median, the spines' rows lose nothing
during the scenario, and a drained or handed-over leaf's rows at most 3
datagrams, nearly all its own single-homed customers'.

The lab restarts one build (the binary is not a new version); the package
upgrade itself is `tests/package`'s.
"""


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["restart-node"]:
        if len(argv) != 2:
            print("usage: upgrade.py restart-node NODE", file=sys.stderr)
            return 2
        return restart_node(argv[1])
    ap = parser(__doc__, "UPGRADE.md", "upgrade.json")
    ap.add_argument("--fault-at", type=float, default=2.0)
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--keep", action="store_true",
                    help="keep the other scenarios' results in --json: rerun only --scenarios")
    a = parse(ap, argv, {"scenarios": SCENARIOS})
    start = time.monotonic()
    results = {}
    if a.keep and Path(a.json).exists():
        results = {k: v for k, v in json.loads(Path(a.json).read_text()).items() if k not in a.scenarios}
    return run_all(Bench, a, a.scenarios, results, lambda r: f" ({r['took_s']} s): " + ", ".join(
        f"{k} {r[k]['lost']} lost / {r[k]['loss_window_ms']} ms" for k in FLOWS),
        lambda results: save(results, a, report(results, a, time.monotonic() - start)))


if __name__ == "__main__":
    sys.exit(main())
