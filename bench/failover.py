#!/usr/bin/env python3
"""The failover benchmark (make bench-failover): what each single failure
costs the traffic, as loss windows in milliseconds measured with
sequence-numbered datagrams, on examples/demo.yaml run by the real
controller and agents (docs/ha.md). Writes bench/FAILOVER.md.

For each fault, each run sends three one-way streams from h1 at --rate
datagrams/s: over the E-Line red (to h2), over the E-LAN green to h3 (known
unicast) and as broadcasts on green (flooded, received at h3), injects the fault --fault-at seconds in, and reads
the receivers' reports (tests/lab/udpstream.py): the loss window is the
longest silence a gap in the sequence caused. Every fault is run with the
two services alone, then with 10,000 more E-Lines whose primaries leave
leaf1 over the same spine (the spine's links are made the cheapest), to show
that failing over 10,001 services costs what failing over one does.

    bench/failover.py                      # 5 runs, controller down 60 s
    bench/failover.py --runs 3 --controller-down 10 --faults spine-hang,link-down
"""
import json
import os
import platform
import signal
import sys
import tempfile
import time
from pathlib import Path

import yaml

from fabricbench import TOPOLOGY, FabricBench, parse, parser, save, start_streams, stats, wait_all
from lab.control import ControlPlane, wait_for
from lab.traffic import ping_until

RED = ("red", "eline", ["leaf1:cust1:1000", "leaf2:cust1:2000"])
GREEN = ("green", "elan", ["leaf1:cust1:3000", "leaf2:cust1:3000", "leaf3:cust1:3000"])
# kind -> (receiving host, destination, port): green's BUM is a subnet
# broadcast, flooded on its tree (repaired by the controller, not locally).
FLOWS = {"eline": ("h1", "h2", "10.10.0.2", 5601), "elan": ("h1", "h3", "10.30.0.3", 5602),
         "elan-bum": ("h1", "h3", "10.30.0.255", 5603)}
# kind, what it is, loss window target in ms (docs/ha.md)
KINDS = (("eline", "E-Line red (h1 -> h2)", 50), ("elan", "E-LAN green unicast (h1 -> h3)", 50),
         ("elan-bum", "E-LAN green BUM (h1 -> broadcast, at h3)", 1000))
EXTRA_PORTS = ["pic1", "pic2", "pic3"]     # null customer ports for the extra services
FAULTS = ["link-down", "far-link-down", "transit-lost", "spine-hang", "spine-kill", "agent-kill",
          "controller-restart"]


class Bench(FabricBench):
    PREFIX, API_PORT, ETCD_PORT = "fo", 23850, 23851

    # ---- fabric ---------------------------------------------------------------
    def up(self):
        self.start_fabric()
        self.import_topology(0)
        for name, kind, circuits in (RED, GREEN):
            self.cp.create_service(name, kind, circuits)
        # Every primary via spine1: its links are the cheapest, so a spine1
        # fault hits every service and the backups all go via spine2.
        for link in self.cp.json("link", "list"):
            if "spine2" in (link["a"].split(":")[0], link["b"].split(":")[0]):
                self.cp.e3ctl("link", "set-cost", str(link["id"]), "5")
        self.settle()

    def import_topology(self, extra: int, chunk: int = 1000):
        """The demo topology plus null customer ports and `extra` E-Lines
        leaf1 <-> leaf2 on them, imported `chunk` services at a time (an
        import creates the services it does not have yet, in one change);
        the controller's own topology file follows, so a restart re-imports
        the same."""
        topo = yaml.safe_load(TOPOLOGY.read_text())
        topo.pop("services", None)
        topo["customer_ports"] = [{"node": n, "port": p, "devargs": f"net_null_{n}_{p},no-rx=1"}
                                  for n in ("leaf1", "leaf2") for p in EXTRA_PORTS]
        self.cp.topology_file.write_text(yaml.safe_dump(topo, sort_keys=False))
        services = []
        for i in range(extra):
            port, vlan = EXTRA_PORTS[i // 4000], 10 + i % 4000
            services.append({"name": f"pic{i:05d}", "type": "eline", "circuits": [
                {"node": "leaf1", "port": port, "vlan": vlan}, {"node": "leaf2", "port": port, "vlan": vlan}]})
        for n in range(0, max(extra, 1), chunk):
            path = self.state / f"topology-{n}.yaml"
            path.write_text(yaml.safe_dump(dict(topo, services=services[n:n + chunk]), sort_keys=False))
            self.cp.e3ctl("topology", "import", str(path), timeout=600)

    def settle(self):
        """Back to normal: everything protected on its primary, converged,
        ARP resolved and h3's MAC known at leaf1 (so green is unicast)."""
        for node, agent in self.cp.agents.items():
            if not agent.running():
                self.cp.start_agent(node)
        if not self.cp.controller.running():
            self.cp.start_controller()
        wait_for("services protected on their primaries", lambda: all(
            s.get("protection") == "protected" for s in self.cp.services()
            if s["name"] in (RED[0], GREEN[0])), timeout=300)
        self.cp.wait_converged(timeout=600)
        for _, host, ip, _ in FLOWS.values():
            if ip.endswith(".255"):
                continue
            r = ping_until(self.lab, "h1", ip, attempts=30)
            if not r.ok:
                raise RuntimeError(f"h1 -> {ip} does not answer:\n{r.output}")

    def spine(self):
        return ControlPlane.path_nodes(ControlPlane.active_path(self.cp.service("red")))[1]

    # ---- one run ----------------------------------------------------------------
    def run(self, fault: str, tag: str) -> dict:
        spine = self.spine()
        seconds = self.a.seconds + (self.a.controller_down if fault == "controller-restart" else 0)
        txs, rxs, outs = start_streams(self.lab, FLOWS, self.a.rate, seconds, self.state, tag)
        undo = None
        try:
            time.sleep(self.a.fault_at)
            undo = self.inject(fault, spine)
        finally:
            stalled = not wait_all(txs + rxs, seconds + 120)
            if undo:
                undo()
        if stalled:
            # A stream that cannot keep time measures the host, not the
            # fabric: the run is reported as stalled, not as a loss.
            self.settle()
            return {"stalled": True}
        out = {kind: json.loads(path.read_text()) for kind, path in outs.items()}
        if any(r["loss_window_ms"] > self.a.events_above for r in out.values()):
            # A long loss: keep the controller's account of what happened.
            out["events"] = self.cp.json("events")
        self.settle()
        return out

    def inject(self, fault: str, spine: str):
        """Inject the fault; returns what undoes it after the streams."""
        lab, cp = self.lab, self.cp
        if fault == "link-down":
            lab.link_down("leaf1", spine)
            return lambda: lab.link_up("leaf1", spine)
        if fault == "far-link-down":
            # Two hops from leaf1: only its check of the path sees it.
            lab.link_down(spine, "leaf2")
            return lambda: lab.link_up(spine, "leaf2")
        if fault == "transit-lost":
            # The spine stops switching toward leaf2 while its BFD stays up
            # (its agent gone, nothing puts the entries back).
            cp.stop_agent(spine, signal.SIGKILL)
            lab.forget_transit(spine, "leaf2")
            return lambda: cp.start_agent(spine)
        if fault == "spine-hang":
            pid = lab.pid(spine)
            os.kill(pid, signal.SIGSTOP)
            time.sleep(3)
            os.kill(pid, signal.SIGCONT)
            return None
        if fault == "spine-kill":
            os.kill(lab.pid(spine), signal.SIGKILL)

            def restart():
                lab.stop(spine)
                lab.start(spine, ports=False)
            return restart
        if fault == "agent-kill":
            cp.stop_agent("leaf1", signal.SIGKILL)
            time.sleep(3)
            cp.start_agent("leaf1")
            return None
        if fault == "controller-restart":
            cp.stop_controller(signal.SIGKILL)
            time.sleep(self.a.controller_down)
            cp.start_controller()
            return None
        raise ValueError(fault)


def stalled_note(stalls) -> str:
    if not stalls:
        return ""
    return (f" Not counted: {', '.join(stalls)}, where a stream did not end in"
            " time (the host starved it).")


def report(results: dict, args, elapsed: float, stalls=()) -> str:
    rows = []
    for fault in args.faults:
        for kind, name, target in KINDS:
            cells = []
            for size in args.sizes:
                runs = results.get(fault, {}).get(str(size), [])
                w = stats([r[kind]["loss_window_ms"] for r in runs])
                lost = stats([r[kind]["lost"] for r in runs])
                if w is None:
                    cells.append("-")
                    continue
                ok = "yes" if w["max"] < target else "**no**"
                cells.append(f"{w['min']:.0f} / {w['median']:.0f} / {w['max']:.0f} ms "
                             f"({lost['median']:.0f} lost, {len(runs)} runs, < {target} ms: {ok})")
            rows.append(f"| {fault} | {name} | " + " | ".join(cells) + " |")
    sizes = " | ".join(f"{s} + 2 services sharing the failed spine" if s else "the 2 services" for s in args.sizes)
    return f"""# Failover: loss windows

`make bench-failover` (`bench/failover.py`) on `examples/demo.yaml` (2 spines,
3 leaves) with the real controller, agents and datapaths. Loss window: the
longest silence in a one-way stream of {args.rate} sequence-numbered datagrams/s
(`tests/lab/udpstream.py`), min / median / max over the runs, and the median
number of datagrams lost (never arrived, or arrived more than 50 ms after they
were sent: frames held in a hung node's ring come seconds later); target < 50 ms for unicast, < 1 s for BUM (which
only the controller's new flood tree repairs). Timers: BFD 10 ms x 3,
wait-to-restore 5 s.
Machine: {platform.machine()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()};
five datapaths, five agents and the controller share them, in adaptive poll mode.
Run took {elapsed / 60:.0f} min.{stalled_note(stalls)}

| fault | service | {sizes} |
| --- | --- | {' | '.join('---' for _ in args.sizes)} |
{chr(10).join(rows)}

Faults, each {args.fault_at:.0f} s into a {args.seconds} s stream, on the spine that
carries every primary (its links are the cheapest):
- `link-down`: leaf1's link to it loses carrier (`ip link set DEV down`), until the stream ends.
- `far-link-down`: its link to leaf2 (red's far end) loses carrier: two hops from leaf1, seen there only by its check of the path.
- `transit-lost`: it forgets its transit entries toward leaf2 (its agent killed, so nothing puts them back); its BFD stays up.
- `spine-hang`: its e3-vswitchd is SIGSTOPped for 3 s (carrier stays up).
- `spine-kill`: its e3-vswitchd is SIGKILLed; restarted after the stream and reprogrammed by its agent.
- `agent-kill`: leaf1's e3-agent is SIGKILLed for 3 s (its datapath is healthy).
- `controller-restart`: e3-controller (and its embedded etcd) is SIGKILLed, down {args.controller_down} s, restarted.

How the figures come about (docs/ha.md): the failure is found by BFD on the
adjacency or the path's check (30 ms) or by carrier loss (the 20 ms link poll); the worker that
sees it clears the session's protection byte, and every protected NHLFE
watching it sends on its backup from the next frame, however many there are.
The controller then recomputes from the agents' reports (global repair);
traffic returns to the primaries after the wait-to-restore time.
"""


def main(argv=None):
    ap = parser(__doc__, "FAILOVER.md", "failover.json", seconds=10)
    ap.add_argument("--fault-at", type=float, default=3.0)
    ap.add_argument("--controller-down", type=int, default=60)
    ap.add_argument("--events-above", type=float, default=1000,
                    help="keep the controller's events of runs with a loss window above this (ms)")
    ap.add_argument("--sizes", default="0,10000", help="extra services, comma-separated")
    ap.add_argument("--faults", default=",".join(FAULTS))
    a = parse(ap, argv, {"faults": FAULTS})
    a.sizes = [int(x) for x in a.sizes.split(",")]
    start = time.monotonic()
    results, stalls = {}, []
    with tempfile.TemporaryDirectory(prefix="e3-fo-") as tmp:
        b = Bench(a, Path(tmp))
        try:
            b.up()
            for size in a.sizes:
                if size:
                    print(f"importing {size} more services", flush=True)
                    b.import_topology(size)
                    b.settle()
                for fault in a.faults:
                    for i in range(a.runs):
                        r = b.run(fault, f"{fault}-{size}-{i}")
                        if r.get("stalled"):
                            stalls.append(f"{fault} +{size} run {i + 1}")
                            print(f"{fault} +{size} run {i + 1}: a stream did not end in time "
                                  "(the host starved it); run not counted", flush=True)
                            continue
                        results.setdefault(fault, {}).setdefault(str(size), []).append(r)
                        print(f"{fault} +{size} run {i + 1}: " + ", ".join(
                            f"{k} {r[k]['loss_window_ms']} ms ({r[k]['lost']} lost)" for k in FLOWS), flush=True)
                        # What ran is kept, whatever comes next.
                        save(results, a, report(results, a, time.monotonic() - start, stalls))
        finally:
            b.down()
    save(results, a, report(results, a, time.monotonic() - start, stalls))
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
