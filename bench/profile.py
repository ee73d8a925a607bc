#!/usr/bin/env python3
"""Where each switch's cycles go: every switch forwards flat out in turn
while `perf record` samples its process (cpu-clock: this machine has no
hardware counters), and its own cycles per frame from the same trial are
split by the samples' objects: the memif PMD (the copies into and out of
the generator's buffers, and the mempool and mbuf code inlined in it), the
vhost-user library and PMD (PVP: the copies into and out of the VM's
rings), the switch's own code, the rest. Written to
<out>/profile-<scenario>-<size>.txt, with each switch's flat profile by
symbol.

A PVP point (the VM shares the generator's CPU, as in bench.py) is sampled
at a fixed rate (--pvp-rate), since flat out the generator never sleeps and
the VM never runs; its cycles are per crossing.

    bench/profile.py --out DIR [--sizes elan-unicast=1,elan-unicast=1000000] [--seconds 5]
                     [--switches limit,e3,ovs] [--pvp-rate 500000]
"""
import argparse
import os
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import host  # noqa: E402
from benchlib.pktgen import VM_IDLE_SLEEP_US, Pktgen, Session, pushback  # noqa: E402
from benchlib.scenarios import BY_NAME  # noqa: E402
from benchlib.switches import SWITCHES  # noqa: E402

WORKDIR = "/tmp/bn-prof"
# The switch's own code, by the object perf names.
OWN = {"limit": ("dpdk-testpmd",), "e3": ("e3-vswitchd",), "ovs": ("ovs-vswitchd",)}


def group(dso, name):
    if "net_memif" in dso:
        return "memif PMD"
    if "vhost" in dso:
        return "vhost-user"
    if any(dso.startswith(o) for o in OWN[name]):
        return "own code"
    return "other"


def perf_report(data, sort):
    out = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children",
                          "--sort", sort, "--percent-limit", "0"],
                         check=True, capture_output=True, text=True).stdout
    return [ln for ln in out.splitlines() if ln.strip() and not ln.startswith("#")]


def profile(name, scn, n, seconds, out, huge_dir, pvp_rate):
    """One switch flat out (PVP: at pvp_rate) under perf: (frames received
    per second, the share of sends it pushed back, its cycles per frame,
    {group: % of samples}, its symbol lines)."""
    sw = SWITCHES[name](WORKDIR, 1, huge_dir, prefix=f"bn-prof-{name}")
    plan = scn.plan(name, n)
    sess = None
    try:
        sw.start(scn, n)
        gen = Pktgen(sw.sockets(len(scn.ports)), cpu=0, prefix="bn-prof-pg",
                     rx_queues=sw.gen_rx_queues, log=os.path.join(out, "pktgen-profile.log"),
                     huge_dir=huge_dir, idle_sleep_us=VM_IDLE_SLEEP_US if scn.pvp else 0,
                     vhost=[sw.vm_socket()] if scn.gen_is_vm else ())
        sess = Session(gen, plan.streams, learn=plan.learn)
        sw.forward()
        sess.trial(rate=10000, duration=0.2, learn=True, timeout=600)
        data = os.path.join(out, f"perf-{name}-{scn.name}-{n}.data")
        result = {}
        sw.runtime_clear()
        load = threading.Thread(target=lambda: result.update(
            sess.trial(rate=pvp_rate if scn.pvp else 0, duration=seconds + 2, warmup=0.5,
                       verify=False)))
        load.start()
        subprocess.run(["perf", "record", "-e", "cpu-clock", "-F", "2999", "-p",
                        str(sw.datapath_pid()), "-o", data, "--", "sleep", str(seconds)],
                       check=True, capture_output=True)
        load.join()
        cycles = (sw.cycles_per_frame() or {}).get("total")
        shares = {}
        for ln in perf_report(data, "dso"):
            pct, dso = ln.split(None, 1)
            g = group(dso.strip(), name)
            shares[g] = shares.get(g, 0.0) + float(pct.rstrip("%"))
        symbols = perf_report(data, "dso,symbol")[:30]
        return result.get("rx_rate_pps", 0.0), pushback(result) or 0.0, cycles, shares, symbols
    finally:
        sw.stop()         # before its generator (bench.py, run_point)
        if sess:
            sess.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--sizes", default="elan-unicast=1,elan-unicast=1000000")
    ap.add_argument("--switches", default="limit,e3,ovs")
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--hugepages", type=int, default=1024)
    ap.add_argument("--pvp-rate", type=float, default=500000,
                    help="frames/s offered at a PVP point (the VM must get CPU time)")
    args = ap.parse_args()
    host.exit_on_sigterm()
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(WORKDIR, exist_ok=True)
    hp = host.Hugepages(args.hugepages) if args.hugepages else None
    groups = ("memif PMD", "vhost-user", "own code", "other")
    try:
        # Inside the try: a SIGTERM while the pages are being reserved
        # still gives them back.
        huge_dir = hp.setup() if hp else None
        for item in args.sizes.split(","):
            scn_name, n = item.split("=")
            scn, n = BY_NAME[scn_name], int(n)
            how = (f"each switch offered {args.pvp_rate / 1e6:.2f} Mpps in turn (the VM on the "
                   "generator's CPU), its cycles per crossing" if scn.pvp else
                   "each switch flat out in turn, its cycles per frame")
            lines = [f"# {scn.title}, {n} entries, {how} (own accounting) split by perf's samples",
                     "(pushed back: the share of the generator's sends the switch's full "
                     "input ring refused in part; below half, the generator set the pace)",
                     "switch  Mpps  pushed back  cycles/frame  " + "  ".join(groups)]
            symbols = {}
            for name in args.switches.split(","):
                if name == "ovs" and scn.ovs.na:
                    continue
                mpps, pushed, cycles, shares, sym = profile(name, scn, n, args.seconds, args.out,
                                                            huge_dir, args.pvp_rate)
                split = "  ".join(f"{shares.get(g, 0.0) * cycles / 100:.0f} ({shares.get(g, 0.0):.0f}%)"
                                  if cycles else f"({shares.get(g, 0.0):.0f}%)" for g in groups)
                lines.append(f"{name:6s} {mpps / 1e6:5.2f}  {pushed * 100:10.0f}%  "
                             f"{cycles or 0:12.0f}  {split}")
                symbols[name] = sym
            for name, sym in symbols.items():
                lines += [f"## {name} by symbol"] + sym
            path = os.path.join(args.out, f"profile-{scn.name}-{n}.txt")
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")
            print(f"profile: {path}")
            print("\n".join(lines[:7]))
    finally:
        if hp:
            hp.restore()


if __name__ == "__main__":
    main()
