#!/usr/bin/env python3
"""The multi-homing failover benchmark (make bench-multihoming): what losing
one link or one leaf of a multi-homed site costs its traffic, as loss
windows in milliseconds measured with sequence-numbered datagrams, on
examples/demo.yaml run by the real controller and agents
(docs/multihoming.md). Writes its section of bench/FAILOVER.md.

The E-LAN violet joins h7 (leaf1) and the site h6, a Linux bridge with one
uplink to leaf2 and one to leaf3 (segment site1). Each run sends four
one-way streams at --rate datagrams/s: unicast into the site (h7 -> h6) and
out of it (h6 -> h7), and broadcasts into it (h7, received at h6) and out of
it (h6, received at h7); injects the fault --fault-at seconds in, and reads
the receivers' reports (tests/lab/udpstream.py).

    bench/multihoming.py                      # 5 runs of every fault
    bench/multihoming.py --runs 2 --faults uplink-down-leaf2
"""
import json
import os
import platform
import signal
import sys
import time

from fabricbench import TOPOLOGY, FabricBench, parse, parser, run_all, save, start_streams, stats, wait_all
from lab.control import wait_for
from lab.traffic import ping_until

VIOLET = ("violet", "elan", ["leaf1:cust3:untagged", "@site1:untagged"])
H6, H7, BCAST = "10.60.0.6", "10.60.0.7", "10.60.0.255"
UPLINK = {"leaf2": "up0", "leaf3": "up1"}
# kind -> (sender, receiver, destination, port)
FLOWS = {"into": ("h7", "h6", H6, 5701), "from": ("h6", "h7", H7, 5702),
         "bum-into": ("h7", "h6", BCAST, 5703), "bum-from": ("h6", "h7", BCAST, 5704)}
KINDS = (("into", "unicast into the site (h7 -> h6)", 50), ("from", "unicast from the site (h6 -> h7)", 50),
         ("bum-into", "broadcast into the site (h7, at h6)", 1000),
         ("bum-from", "broadcast from the site (h6, at h7)", 1000))
FAULTS = ["uplink-down-leaf2", "uplink-down-leaf3", "leaf-hang-leaf2", "leaf-hang-leaf3", "leaf-hang-alone-leaf2"]
BEGIN, END = "<!-- multihoming: begin -->", "<!-- multihoming: end -->"


class Bench(FabricBench):
    PREFIX, API_PORT, ETCD_PORT = "mh", 23860, 23861

    def up(self):
        self.start_fabric()
        self.cp.e3ctl("topology", "import", str(TOPOLOGY), timeout=120)
        self.cp.create_service(*VIOLET)
        self.settle()

    def site(self):
        return self.cp.service("violet")["route"]["sites"]["site1"]

    def settle(self):
        """Back to normal: every session usable, the site reached through
        both leaves, converged, both hosts answering."""
        def sessions_usable():
            return all(b["state"] == "up" and b["usable"]
                       for n in self.lab.topo.nodes for b in self.lab.client(n.name).call("bfd_list"))
        wait_for("every BFD session usable", sessions_usable, timeout=120)
        wait_for("the site reached through both leaves", lambda: self.site().get("leaves") == ["leaf2", "leaf3"],
                 timeout=120)
        self.cp.wait_converged(timeout=120)
        for host, ip in (("h7", H6), ("h6", H7)):
            r = ping_until(self.lab, host, ip, attempts=30)
            if not r.ok:
                raise RuntimeError(f"{host} -> {ip} does not answer:\n{r.output}")

    def df(self):
        return self.cp.service("violet").get("designated_forwarders", {}).get("site1")

    def run(self, fault: str, i: int) -> dict:
        tag = f"{fault}-{i}"
        df = self.df()
        if "-alone-" in fault:
            # The datapaths alone: the controller is down across the fault.
            self.cp.stop_controller(signal.SIGKILL)
        txs, rxs, outs = start_streams(self.lab, FLOWS, self.a.rate, self.a.seconds, self.state, tag)
        undo = None
        try:
            time.sleep(self.a.fault_at)
            undo = self.inject(fault)
        finally:
            stalled = not wait_all(txs + rxs, self.a.seconds + 120)
            if undo:
                undo()
        if not self.cp.controller.running():
            self.cp.start_controller()
        self.settle()
        if stalled:
            return {"stalled": True}
        out = {kind: json.loads(path.read_text()) for kind, path in outs.items()}
        out["df"] = df
        if any(out[k]["loss_window_ms"] > 1000 for k, _, target in KINDS if target < 1000):
            out["events"] = self.cp.json("events")   # a long unicast loss: keep the controller's account
        return out

    def inject(self, fault: str):
        kind, leaf = fault.replace("-alone", "").rsplit("-", 1)
        if kind == "uplink-down":
            up = UPLINK[leaf]
            self.lab.host_exec("h6", ["ip", "link", "set", up, "down"])
            return lambda: self.lab.host_exec("h6", ["ip", "link", "set", up, "up"])
        if kind == "leaf-hang":
            pid = self.lab.pid(leaf)
            os.kill(pid, signal.SIGSTOP)
            time.sleep(3)
            os.kill(pid, signal.SIGCONT)
            return None
        raise ValueError(fault)


def section(results: dict, args, elapsed: float) -> str:
    rows = []
    for fault in args.faults:
        runs = [r for r in results.get(fault, []) if not r.get("stalled")]
        for kind, name, target in KINDS:
            w = stats([r[kind]["loss_window_ms"] for r in runs])
            lost = stats([r[kind]["lost"] for r in runs])
            if w is None:
                continue
            ok = "yes" if w["max"] < target else "**no**"
            rows.append(f"| {fault} | {name} | {w['min']:.0f} / {w['median']:.0f} / {w['max']:.0f} ms | "
                        f"{lost['median']:.0f} | {len(runs)} | < {target} ms: {ok} |")
    dfs = {f: sorted({r.get("df") for r in results.get(f, []) if r.get("df")}) for f in args.faults}
    return f"""{BEGIN}
## Multi-homed site: a link or a leaf of the site fails

`make bench-multihoming` (`bench/multihoming.py`): the E-LAN violet joins h7
(leaf1) and the site h6, a Linux bridge with an uplink to leaf2 and one to
leaf3 (segment site1, no LAG: only the designated forwarder takes the
site's BUM). Four one-way streams of {args.rate} datagrams/s each, the fault
{args.fault_at:.0f} s into {args.seconds} s; min / median / max loss window over the runs,
the median count lost (never arrived, or arrived more than 50 ms after it
was sent, by the kernel's receive time). BFD 10 ms x 3. Machine: {platform.machine()},
{os.cpu_count()} CPUs; run took {elapsed / 60:.0f} min. The DF of site1 was
{", ".join(sorted({d for ds in dfs.values() for d in ds})) or "-"}.

| fault | stream | loss window | lost | runs | target |
| --- | --- | --- | --- | --- | --- |
{chr(10).join(rows)}

Faults:
- `uplink-down-LEAF`: the site's uplink to LEAF loses carrier (`ip link set`
  in the site's namespace), until the stream ends.
- `leaf-hang-LEAF`: LEAF's e3-vswitchd is SIGSTOPped for 3 s (carrier stays up).
- `leaf-hang-alone-LEAF`: the same with e3-controller killed before and
  restarted after: what the datapaths repair by themselves.

What repairs what (docs/multihoming.md): into the site, leaf1 sends each
flow to either leaf (aliasing); a hung leaf leaves that group as leaf1's
path checks to it fail (in band, the same protection bytes as every path
to it), and a leaf whose link to the site is down sends the site's frames
on to the other leaf (its circuit's redirect). The controller then moves
the DF and the group, and the surviving leaf announces h7's MAC into the
site, so that the bridge, which learned it on the failed uplink, sends to
it over the other one: that announcement bounds the loss out of the site
when the leaf hangs (the bridge sees no carrier loss). BUM into and out
of the site waits for the controller to move the DF when the DF fails: with
the controller down (the `alone` rows), as long as the failure lasts.
{END}
"""


def main(argv=None):
    ap = parser(__doc__, "FAILOVER.md", "multihoming.json", seconds=10)
    ap.add_argument("--fault-at", type=float, default=3.0)
    ap.add_argument("--faults", default=",".join(FAULTS))
    a = parse(ap, argv, {"faults": FAULTS})
    start = time.monotonic()
    return run_all(Bench, a, a.faults, {}, lambda r: f" (DF {r['df']}): " + ", ".join(
        f"{k} {r[k]['loss_window_ms']} ms ({r[k]['lost']} lost)" for k in FLOWS),
        lambda results: save(results, a, section(results, a, time.monotonic() - start), (BEGIN, END)))


if __name__ == "__main__":
    sys.exit(main())
