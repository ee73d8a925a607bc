#!/usr/bin/env python3
"""Profile e3-vswitchd under load in the known-unicast and label-swap
scenarios: the switch forwards flat out while `perf record` samples its CPU
(cpu-clock: this machine has no hardware counters), and the flat profile by
symbol is written to <out>/profile-<scenario>-<size>.txt.

    bench/profile.py --out DIR [--sizes elan-unicast=20000,label-swap=1000000] [--seconds 5]
"""
import argparse
import os
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import host  # noqa: E402
from benchlib.pktgen import Pktgen, Session  # noqa: E402
from benchlib.scenarios import BY_NAME  # noqa: E402
from benchlib.switches import E3  # noqa: E402

WORKDIR = "/tmp/bn-prof"


def profile(scn, n, seconds, out, huge_dir):
    sw = E3(WORKDIR, 1, huge_dir, prefix="bn-prof-e3")
    plan = scn.plan("e3", n)
    sess = None
    try:
        sw.start(scn, n)
        gen = Pktgen(sw.sockets(len(scn.ports)), cpu=0, prefix="bn-prof-pg",
                     log=os.path.join(out, "pktgen-profile.log"))
        sess = Session(gen, plan.streams, learn=plan.learn)
        sess.trial(rate=10000, duration=0.2, learn=True, timeout=600)
        data = os.path.join(out, f"perf-{scn.name}-{n}.data")
        result = {}
        load = threading.Thread(target=lambda: result.update(
            sess.trial(rate=0, duration=seconds + 2, warmup=0.5)))
        load.start()
        subprocess.run(["perf", "record", "-e", "cpu-clock", "-F", "2999", "-p",
                        str(sw.datapath_pid()), "-o", data, "--", "sleep", str(seconds)],
                       check=True, capture_output=True)
        load.join()
        rep = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children",
                              "--sort", "dso,symbol", "--percent-limit", "0.5"],
                             check=True, capture_output=True, text=True).stdout
        lines = [ln for ln in rep.splitlines() if ln.strip() and not ln.startswith("#")]
        by_dso = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children",
                                 "--sort", "dso", "--percent-limit", "0.5"],
                                check=True, capture_output=True, text=True).stdout
        dsos = [ln for ln in by_dso.splitlines() if ln.strip() and not ln.startswith("#")]
        path = os.path.join(out, f"profile-{scn.name}-{n}.txt")
        with open(path, "w") as f:
            f.write(f"# e3-vswitchd, {scn.title}, {n} entries, flat out: "
                    f"{result.get('rx_rate_pps', 0) / 1e6:.2f} Mpps received\n")
            f.write(f"# counters: {sw.counters().get('drops')}\n")
            f.write("## by object\n" + "\n".join(dsos[:12]) + "\n## by symbol\n")
            f.write("\n".join(lines[:40]) + "\n")
        print(f"profile: {path}")
        print("\n".join(dsos[:8] + lines[:15]))
    finally:
        if sess:
            sess.close()
        sw.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--sizes", default="elan-unicast=20000,label-swap=1000000")
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--hugepages", type=int, default=1024)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    os.makedirs(WORKDIR, exist_ok=True)
    hp = host.Hugepages(args.hugepages) if args.hugepages else None
    huge_dir = hp.setup() if hp else None
    try:
        for item in args.sizes.split(","):
            name, n = item.split("=")
            profile(BY_NAME[name], int(n), args.seconds, args.out, huge_dir)
    finally:
        if hp:
            hp.restore()


if __name__ == "__main__":
    main()
