#!/usr/bin/env python3
"""e3fabric benchmark driver (DESIGN.md "Performance method").

For each scenario x table size, three switches run on the same memif links
with the same generator: the link limit (dpdk-testpmd io forwarding),
e3-vswitchd and OVS-DPDK. All three are started and programmed, then
measured in lockstep, a trial of each in turn (limit, e3, ovs, limit, e3,
ovs, ...; the two waiting are SIGSTOPped, so the switch under test has its
core alone): their RFC 2544 binary searches for the zero-loss rate, then a
flat-out trial each for their cycles per frame, then latency at 50% of the
zero-loss rate. Each figure is the median over the rounds.

    bench/bench.py [--quick] [--scenarios a,b] [--sizes 1,2000] [--switches limit,e3,ovs]
                   [--cpus "gen=0 main=1 workers=1 vm=0"] [--workers 1,2,4,8]

Where the processes run comes from --cpus or, by default, from the CPUs
this process may use, one of each physical core on one NUMA node
(benchlib/cpus.py): on 2 CPUs the generator has one and the switch the
other, as in every earlier result. After the table of points
(one worker each), the scaling series runs --scale-scenarios at one table
entry with 1, 2, 4 and 8 workers, as far as the layout has worker CPUs.

Raw results go to bench/out/<run>/ (trials.jsonl, results.json); the report
(bench/RESULTS.md, bench/results.png) is written by bench/report.py.
"""
import argparse
import json
import os
import re
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import cpus, host, stalls  # noqa: E402
from benchlib.pktgen import VM_IDLE_SLEEP_US, Pktgen, PktgenError, Session, pushback  # noqa: E402
from benchlib.scenarios import BY_NAME, SCENARIOS  # noqa: E402
from benchlib.search import SearchParams, Trial, lockstep, ndr_steps, passed  # noqa: E402
from benchlib.switches import (GEN_PREFIX, OVS_VSWITCHD, SWITCHES, SwitchError,  # noqa: E402
                                summary, wait_for)

BENCH = os.path.dirname(os.path.abspath(__file__))
WORKDIR = "/tmp/bn-bench"
SETTLE_S = 5.0

MODES = {
    # Both modes run three interleaved rounds (medians). quick: the points
    # the performance targets name (E-LAN unicast at 1M MACs for its own
    # stages) in about 20 minutes; full: the sizes of DESIGN.md in about 50
    # minutes on 2 CPUs. sizes: a list for every scenario, or a scenario's
    # own list with "*" for the others.
    "quick": dict(sizes={"elan-unicast": [1, 20000, 1000000], "*": [1, 20000]},
                  scenarios=["elan-unicast", "label-swap", "pvp-eline", "vm-eline"],
                  trial_s=1.0, latency_s=1.0, warmup_s=0.3, rounds=3,
                  tolerance=0.05, max_trials=5),
    "full": dict(sizes=[1, 2000, 20000, 200000, 1000000],
                 scenarios=[s.name for s in SCENARIOS if s.name != "flood-1"],
                 trial_s=1.5, latency_s=1.0, warmup_s=0.3, rounds=3,
                 tolerance=0.05, max_trials=4),
}


def log(msg):
    print(time.strftime("%H:%M:%S ") + msg, flush=True)


class Bench:
    def __init__(self, args, mode, out, layout):
        self.args = args
        self.layout = layout
        self.m = mode
        self.out = out
        self.params = SearchParams(loss_frac=args.loss, tolerance=mode["tolerance"],
                                   max_trials=mode["max_trials"])
        self.trials_log = open(os.path.join(out, "trials.jsonl"), "a")
        self.results = []
        self.huge_dir = None        # set by run(): the switches' hugetlbfs, if any
        self.started = time.time()
        self.machine = None         # host.machine_info(), once
        # --budget: no point or round starts that would not end within it.
        self.clock = time.monotonic
        self.budget = getattr(args, "budget", None)
        self.deadline = self.clock() + self.budget if self.budget else None
        self.point_s = []           # how long each point took, for the estimate
        self.skipped = []           # points the budget left out
        self.ticks = host.cpu_ticks(layout.cpus())   # for each record's steal

    def record(self, **kw):
        kw["time"] = time.time()
        kw["load1"] = host.loadavg()
        ticks = host.cpu_ticks(self.layout.cpus())
        steal = host.steal_pct(self.ticks, ticks)
        self.ticks = ticks
        if steal is not None:
            kw["steal_pct"] = round(steal, 1)
        self.trials_log.write(json.dumps(kw) + "\n")
        self.trials_log.flush()

    def trial_fn(self, sess, plan, ctx, duration, verify=False):
        """A trial at a rate (0: flat out). The generator only counts what
        comes back (verify=False) unless the trial wants latencies: reading
        every frame the switch wrote costs it a cache miss a frame, and it
        would then fall behind the fastest switches."""
        def trial(rate):
            res = sess.trial(rate=rate, duration=duration, warmup=self.m["warmup_s"], verify=verify)
            t = Trial(rate=rate, offered=res["offered"], expected=res["offered"] * plan.copies,
                      received=res["rx"], achieved=res["tx_rate_pps"],
                      rx_rate=res["rx_rate_pps"] / plan.copies, raw=res)
            ok = passed(t, self.params) if rate else None
            self.record(kind="trial", **ctx, rate=rate, passed=ok, lost=t.lost, result=res)
            gap = max(res.get("gap_us", {}).get("rx") or [0])
            log(f"  {ctx['switch']:5s} rate {rate / 1e6:7.3f} Mpps -> rx {t.rx_rate / 1e6:7.3f} Mpps"
                f" lost {t.lost}" + ("" if ok is None else (" ok" if ok else " FAIL"))
                + (f" (nothing back for {gap / 1000:.1f} ms)" if ok is False and gap >= 1000 else ""))
            return t
        return trial

    def measure_round(self, order, sws, sessions, plans, ctx0, rnd):
        """One round of every switch, a trial of each in turn (lockstep):
        their searches, then a cycles trial each, then a latency trial each.
        Only the switch of the trial runs; the others are SIGSTOPped.

        Cycles per frame come from the switch's own accounting over one
        more trial, flat out: a switch the generator saturates works on
        full bursts, at the most it can do, so the figure is its cost per
        frame and not the overhead of small bursts at a low rate; the
        trial's pushback says whether it was saturated. PVP with the VM on
        the generator's CPU has no flat-out trial (the VM would never run):
        there it is the zero-loss rate.
        Returns {switch: result or the exception it failed with}."""
        ctx = {name: dict(ctx0, switch=name, round=rnd) for name in order}
        bound = self.bound(BY_NAME[ctx0["scenario"]])

        def trial(name, phase, duration):
            return self.trial_fn(sessions[name], plans[name], dict(ctx[name], phase=phase), duration,
                                 verify=phase == "latency")

        def search(name, rate):
            return on(sws[name], lambda: trial(name, "search", self.m["trial_s"])(rate))

        def cycles(name, res):
            def measured():
                sws[name].runtime_clear()
                t = trial(name, "cycles", self.m["trial_s"])(res["ndr_pps"] if bound else 0)
                return sws[name].cycles_per_frame(), pushback(t.raw if not bound else None)
            res["cycles"], res["cycles_pushback"] = on(sws[name], measured)

        def latency(name, res):
            t = on(sws[name], lambda: trial(name, "latency", self.m["latency_s"])(res["ndr_pps"] / 2))
            res["latency_ns"] = t.raw["latency_ns"]

        def stalled(name):
            if not self.args.repeat_stalled:
                return None

            def lost_to_stalls(t):
                if not stalls.explain(t.rate, t.lost, t.raw.get("gap_us"), ctx0["workers"], ctx0["link"]):
                    return False
                log(f"  {name:5s} lost to a stall: the same rate once more")
                return True
            return lost_to_stalls

        found = lockstep({name: ndr_steps(self.params, bound=bound, stalled=stalled(name))
                          for name in order}, search, errors=(PktgenError, SwitchError))
        out = {}
        for name, r in found.items():
            out[name] = r if isinstance(r, Exception) else {
                "round": rnd, "ndr_pps": r.ndr_pps, "max_pps": r.max_pps, "trials": len(r.trials),
                "pushback": pushback(r.flat.raw if r.flat else None), "cycles": None, "latency_ns": None}
        for step in (cycles, latency):
            for name in order:
                res = out[name]
                if isinstance(res, dict) and res["ndr_pps"] > 0:
                    try:
                        step(name, res)
                    except (PktgenError, SwitchError) as e:
                        out[name] = e
        return out

    def bound(self, scn):
        """Where a search starts instead of flat out: PVP's fixed rate,
        where the VM shares the generator's CPU (flat out the generator
        never sleeps and the VM never runs); None: flat out first, as at
        every point where the VM has a CPU of its own."""
        if not scn.bound_pps or self.layout.vm_alone():
            return None
        return scn.bound_pps

    def run_point(self, scn, n, names, workers=1, link="copy"):
        """One scenario at one table size: every switch started, then
        measured round by round. workers: forwarding cores per switch;
        link: "copy" (the switch copies; memif server) or "zc" (the
        switch is a zero-copy memif client, the generator copies)."""
        ctx0 = {"scenario": scn.name, "size": n, "workers": workers, "link": link}
        lay = self.layout
        # A lane of the generator per worker, as far as it has CPUs; a
        # lane with more than one queue serves them in turn.
        lanes = lay.gen[:min(len(lay.gen), workers)]
        vm_idle = scn.pvp and not lay.vm_alone()
        sws, sessions, plans, info = {}, {}, {}, {}
        rounds, ceilings = {}, []
        stopped, cut = None, None   # why the point ended before its rounds did
        round_s = []                # how long each round took
        os.makedirs(WORKDIR, exist_ok=True)
        try:
            for name in names:
                if name == "ovs" and scn.ovs.na:
                    info[name] = {"na": scn.ovs.na}
                    continue
                zc_na = SWITCHES[name].zc_unsupported(scn) if link == "zc" else ""
                if zc_na:
                    info[name] = {"na": zc_na}
                    continue
                t0 = time.monotonic()
                plan = scn.plan(name, n)
                try:
                    sw = SWITCHES[name](WORKDIR, lay.main, self.huge_dir, vm_cpu=lay.vm,
                                        workers=lay.workers[:workers], vm_idle=vm_idle, link=link)
                except SwitchError as e:
                    log(f"  {name}: cannot run here: {e}")
                    info[name] = {"error": str(e)}
                    continue
                sws[name] = sw
                socks = sw.sockets(len(scn.ports))
                clients, servers = (socks, []) if link == "copy" else ([], socks)
                gen = Pktgen(clients, servers=servers, cpus=lanes, queues=workers, ring=sw.ring,
                             rx_queues=sw.gen_rx_queues, prefix=f"{GEN_PREFIX}{name}",
                             log=os.path.join(self.out, "pktgen.log"), huge_dir=self.huge_dir,
                             idle_sleep_us=VM_IDLE_SLEEP_US if vm_idle else 0,
                             vhost=[sw.vm_socket()] if scn.gen_is_vm else (),
                             vhost_server=sw.vm_client)
                try:
                    # The memif servers listen first: the switch's (copy) or
                    # the generator's (zc).
                    if not servers:
                        sw.start(scn, n)
                    sessions[name] = sess = Session(gen, plan.streams, learn=plan.learn,
                                                    learn_rate=self.args.learn_rate, wait=False)
                    if servers:
                        wait_for(lambda: all(os.path.exists(s) for s in socks), 30,
                                 "the generator's memif sockets", sess.proc)
                        sw.start(scn, n)
                    sess.wait_ready()
                    sw.forward()
                    # Teach the table once (no-op without --learn streams); a
                    # short stream proves the path works.
                    sess.trial(rate=10000, duration=0.2, learn=True,
                               timeout=120 + n / self.args.learn_rate * 2)
                    if hasattr(sw, "learned"):
                        log(f"  {name}: {sw.learned()} MACs learned")
                    mem = sw.memory()
                except Exception as e:  # noqa: BLE001 - any failure is reported, the run goes on
                    why = summary(e, died(sw, str(e)))
                    log(f"  {name}: cannot start: {why}")
                    info[name] = {"error": why}
                    if name in sessions:
                        sessions.pop(name).close()
                    sw.stop()
                    del sws[name]
                    continue
                info[name] = {"start_s": round(time.monotonic() - t0, 2),
                              "program_s": round(getattr(sw, "program_s", 0.0), 2), "memory": mem}
                log(f"  {name}: up in {info[name]['start_s']}s, memory {mem}")
                plans[name] = plan
                sw.pause()
            # Let the machine settle after the start-ups (page zeroing, OVS
            # threads, learning): the first switch measured suffered otherwise.
            time.sleep(SETTLE_S)
            rounds = {name: [] for name in sws}
            for rnd in range(self.m["rounds"]):
                if round_s and not self.fits(max(round_s)):
                    stopped = "the run's time budget ended"
                    break
                t_round = self.clock()
                # The generator looped to itself, with every switch paused:
                # what it can send and receive at all, this round.
                c = self.gen_ceiling(scn, n, dict(ctx0, switch="gen", round=rnd), lanes, workers)
                if c:
                    ceilings.append(c)
                # Rotate who goes first, so no switch always follows the
                # start-up of the others.
                order = [name for name in sws if "error" not in info[name]]
                k = (len(self.results) + rnd) % max(len(order), 1)
                got = self.measure_round(order[k:] + order[:k], sws, sessions, plans, ctx0, rnd)
                for name, res in got.items():
                    if isinstance(res, Exception):
                        why = summary(res, died(sws[name], str(res)))
                        log(f"  {name}: {why}")
                        info[name]["error"] = why
                    else:
                        rounds[name].append(res)
                if "e3" in sws and "counters" not in info["e3"]:
                    try:
                        info["e3"]["counters"] = on(sws["e3"], sws["e3"].counters)
                    except SwitchError:
                        pass
                round_s.append(self.clock() - t_round)
        except Exception as e:  # noqa: BLE001 - one broken point must not cost the run
            log(f"  point failed: {traceback.format_exc()}")
            stopped = "the point broke"
            for name in names:
                if not {"error", "na"} & info.get(name, {}).keys() and not rounds.get(name):
                    why = f"{type(e).__name__}: {e}"[:300] + (died(sws[name]) if name in sws else "")
                    info.setdefault(name, {})["error"] = why
        except BaseException as e:
            # SIGTERM (a lent machine's time running out) or ^C: the run
            # stops, with the rounds done kept.
            stopped, cut = "the run was stopped", e
        finally:
            for name, sw in sws.items():
                t0 = time.monotonic()
                sw.resume()
                # The switch before its generator: reaping a generator whose
                # memif peer, e3-vswitchd, still ran held its parent in the
                # kernel for minutes here (until the switch exited). The
                # generator waits on its stdin meanwhile, so its link going
                # down touches no ring it polls.
                sw.stop()
                if name in sessions:
                    sessions[name].close()
                log(f"  {name}: stopped in {time.monotonic() - t0:.1f}s")
        for name, rs in rounds.items():
            if rs:
                info[name].update(summarise(rs))
        if ceilings:
            info["gen"] = {"ceiling_pps": statistics.median(ceilings), "ceiling_all": ceilings}
        done = max((len(rs) for rs in rounds.values()), default=0)
        if cut is not None and not done:
            raise cut
        point = {"scenario": scn.name, "size": n, "workers": workers, "lanes": len(lanes),
                 "link": link, "bound_pps": self.bound(scn), "switches": info}
        if stopped and done:
            point["cut"] = f"{stopped} after {done} of {self.m['rounds']} rounds"
        self.record(kind="point", **point)
        self.results.append(point)
        self.save()
        if cut is not None:
            raise cut
        return point

    def point(self, scn, n, workers=1, link="copy"):
        """run_point, unless the run's budget would end before the point
        did (by the median of the points before it): then it is listed as
        skipped. None when skipped."""
        what = {"scenario": scn.name, "size": n, "workers": workers, "link": link}
        if self.point_s and not self.fits(statistics.median(self.point_s)):
            log(f"  skipped: {self.left():.0f} s of the budget left, a point takes about "
                f"{statistics.median(self.point_s):.0f} s")
            self.skipped.append(what)
            self.save()
            return None
        t0 = self.clock()
        p = self.run_point(scn, n, self.args.switches.split(","), workers=workers, link=link)
        self.point_s.append(self.clock() - t0)
        return p

    def left(self):
        return self.deadline - self.clock() if self.deadline else float("inf")

    def fits(self, seconds):
        """Whether something that takes seconds ends within the budget."""
        return seconds <= self.left()

    def gen_ceiling(self, scn, n, ctx, lanes, queues):
        """The generator's own ceiling: its streams flat out from memif
        clients to memif servers of its own (the same zero-copy clients as
        in the measurements), for one trial; None if it cannot run."""
        nports = len(scn.ports) + scn.gen_is_vm     # the VM's port looped as a memif one
        socks = [os.path.join(WORKDIR, f"gen-loop-p{i}.sock") for i in range(nports)]
        # The servers are ports 0..n-1 (Pktgen): the streams' ports move up.
        gen = Pktgen(socks, servers=socks, cpus=lanes, queues=queues, prefix=f"{GEN_PREFIX}loop",
                     log=os.path.join(self.out, "pktgen.log"), huge_dir=self.huge_dir)
        streams = [re.sub(r"\bport=(\d+)", lambda m: f"port={int(m.group(1)) + nports}", s)
                   for s in scn.plan("limit", n).streams]
        try:
            res = gen.run(streams, rate=0, duration=self.m["trial_s"], verify=False)
        except PktgenError as e:
            log(f"  gen: loop failed: {e}")
            return None
        self.record(kind="trial", **ctx, rate=0, passed=None, lost=None, result=res)
        log(f"  gen   looped to itself: {res['rx_rate_pps'] / 1e6:7.3f} Mpps")
        return res["rx_rate_pps"]

    def run(self):
        hp = host.Hugepages(self.args.hugepages, self.layout.node) if self.args.hugepages else None
        self.started = time.time()
        try:
            # Inside the try: a SIGTERM while the pages are being reserved
            # still gives them back.
            self.huge_dir = hp.setup() if hp else None
            for name in self.scenarios():
                scn = BY_NAME[name]
                for n in self.sizes(scn):
                    log(f"{scn.name} size {n}")
                    p = self.point(scn, n)
                    if p:
                        log("  => " + ", ".join(f"{k} {v.get('ndr_pps', 0) / 1e6:.3f} Mpps"
                                                for k, v in p["switches"].items() if "ndr_pps" in v))
            self.run_scaling()
            self.run_zero_copy()
        finally:
            if hp:
                hp.restore()
        return self.save(complete=True)

    def save(self, complete=False):
        """results.json as the run stands, written after every point: a run
        cut short (a machine lent for an hour) still has its report."""
        if self.machine is None:
            self.machine = host.machine_info(OVS_VSWITCHD)
        summary = {
            "mode": self.args.mode, "started": self.started,
            "elapsed_s": round(time.time() - self.started), "complete": complete,
            "machine": self.machine, "hugepages": bool(self.huge_dir),
            "cpus": self.layout.as_dict(), "worker_counts": self.worker_counts(),
            "scale_scenarios": list(filter(None, self.args.scale_scenarios.split(","))),
            "params": dict(self.m, loss_frac=self.params.loss_frac, rotate=True, lockstep=True,
                           min_achieved=self.params.min_achieved,
                           repeat_stalled=self.args.repeat_stalled,
                           learn_rate=self.args.learn_rate),
            "points": self.results,
            "budget_s": self.budget, "skipped": self.skipped,
        }
        path = os.path.join(self.out, "results.json")
        with open(path + ".tmp", "w") as f:
            json.dump(summary, f, indent=1)
        os.replace(path + ".tmp", path)
        return summary

    def worker_counts(self):
        return worker_counts(self.args, self.layout)

    def run_scaling(self):
        """The scaling series: each --scale-scenarios at one entry with
        every worker count; one worker's point is reused from the table
        when it ran there."""
        counts = self.worker_counts()
        if counts == [1] and not self.args.workers:
            log("scaling: " + ("; ".join(self.layout.notes) or f"one worker ({self.layout.describe()})"))
        for name in filter(None, self.args.scale_scenarios.split(",")):
            scn = BY_NAME[name]
            for w in counts:
                if any(p["scenario"] == name and p["size"] == 1 and p.get("workers", 1) == w
                       and p.get("link", "copy") == "copy"
                       for p in self.results):
                    continue
                log(f"{name} size 1, {w} worker{'s' if w > 1 else ''}")
                self.point(scn, 1, workers=w)

    def run_zero_copy(self):
        """The zero-copy series: each --zc-scenarios at one entry, one
        worker, with the switch as a zero-copy memif client."""
        for name in filter(None, self.args.zc_scenarios.split(",")):
            log(f"{name} size 1, zero-copy links")
            self.point(BY_NAME[name], 1, link="zc")

    def scenarios(self):
        return self.args.scenarios.split(",") if self.args.scenarios else self.m["scenarios"]

    def sizes(self, scn):
        return mode_sizes(self.m, scn, self.args.sizes)


def mode_sizes(mode, scn, given=None):
    """The table sizes scn runs at: --sizes (given), else the mode's, of
    those the scenario has; its first when none is."""
    if given:
        wanted = [int(x) for x in given.split(",")]
    else:
        wanted = mode["sizes"]
        if isinstance(wanted, dict):
            wanted = wanted.get(scn.name, wanted["*"])
    return [n for n in wanted if n in scn.sizes] or scn.sizes[:1]


def worker_counts(args, layout):
    """The scaling series' worker counts: --workers, else the layout's."""
    if args.workers:
        return [int(x) for x in args.workers.split(",")]
    return layout.worker_counts()


def on(sw, fn):
    """fn() with sw running (it is SIGSTOPped otherwise)."""
    sw.resume()
    try:
        return fn()
    finally:
        sw.pause()


def died(sw, said=""):
    """" (e3-vswitchd killed by SIGBUS)" when a process of sw's has ended:
    the cause an error that follows would not name (unless it `said` so)."""
    ended = sw.exits()
    return f" ({ended})" if ended and ended not in said else ""


def summarise(rounds):
    """Medians over rounds, and each round's figures under by_round (its
    index pairs it with the other switches' trials of that round, seconds
    apart: report.py takes ratios round by round)."""
    def med(key):
        vals = [r[key] for r in rounds if r.get(key) is not None]
        return statistics.median(vals) if vals else None
    lat = [r["latency_ns"] for r in rounds if r["latency_ns"]]
    out = {"ndr_pps": med("ndr_pps"), "max_pps": med("max_pps"), "rounds": len(rounds),
           "ndr_all": [r["ndr_pps"] for r in rounds], "pushback": med("pushback"),
           "cycles_pushback": med("cycles_pushback"),
           "by_round": [{"round": r["round"], "ndr_pps": r["ndr_pps"], "max_pps": r["max_pps"],
                         "cycles_per_frame": (r.get("cycles") or {}).get("total"),
                         "core_hz": (r.get("cycles") or {}).get("core_hz")}
                        for r in rounds]}
    if lat:
        out["latency_ns"] = {k: statistics.median(x[k] for x in lat) for k in ("p50", "p99", "max")}
    cyc = [r["cycles"] for r in rounds if r.get("cycles")]
    if cyc:
        out["cycles_per_frame"] = statistics.median(c["total"] for c in cyc)
        out["stage_cycles"] = {k: statistics.median(c["stages"][k] for c in cyc if k in c["stages"])
                               for k in sorted({k for c in cyc for k in c["stages"]})}
        ports = {}
        for c in cyc:
            for name, vals in (c.get("ports") or {}).items():
                for k, v in vals.items():
                    ports.setdefault(name, {}).setdefault(k, []).append(v)
        if ports:
            out["port_cycles"] = {name: {k: statistics.median(v) for k, v in vals.items()}
                                  for name, vals in ports.items()}
        clocks = [c["core_hz"] for c in cyc if c.get("core_hz")]
        if clocks:
            out["core_hz"], out["tsc_hz"] = statistics.median(clocks), cyc[0]["tsc_hz"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", dest="mode", action="store_const", const="quick", default="full")
    ap.add_argument("--scenarios", help="comma list (default: the mode's)")
    ap.add_argument("--sizes", help="comma list of table sizes (default: the mode's)")
    ap.add_argument("--switches", default="limit,e3,ovs")
    ap.add_argument("--rounds", type=int, help="interleaved rounds per point (median)")
    ap.add_argument("--trial", type=float, help="search trial seconds")
    ap.add_argument("--loss", type=float, default=0.001,
                    help="accepted loss fraction (default 0.001 = 0.1%%: one ~10 ms preemption "
                         "of the switch per trial on a shared machine; 0 = RFC 2544 strict)")
    ap.add_argument("--no-repeat-stalled", dest="repeat_stalled", action="store_false",
                    help="a search trial lost to a stall (the host stopping the switch or the "
                    "generator for longer than a ring holds) decides like any other, instead of "
                    "being run once more at its rate")
    ap.add_argument("--learn-rate", type=float, default=200000,
                    help="frames/s of the learning phase (the switch must learn every one)")
    ap.add_argument("--hugepages", type=int,
                    help="2 MiB pages to reserve for the switches and the generator (0: --no-huge; "
                    "default 3072, and 768 more per worker of the scaling series beyond one)")
    ap.add_argument("--cpus", help='CPU layout, e.g. "gen=0,2-3 main=1 workers=4-7 vm=1" '
                    "(default: derived from the CPUs this process may use)")
    ap.add_argument("--workers", help="comma list of worker counts of the scaling series "
                    "(default: 1,2,4,8 as far as the layout has worker CPUs)")
    ap.add_argument("--scale-scenarios", default="elan-unicast",
                    help="scenarios of the scaling series, at one table entry (empty: none)")
    ap.add_argument("--zc-scenarios", default="elan-unicast,label-swap,vm-eline",
                    help="scenarios run again at one table entry with zero-copy links (the switch "
                    "a zero-copy memif client, the generator copying; empty: none)")
    ap.add_argument("--budget", type=float,
                    help="seconds the run may take (a lent machine's lease): no point or round "
                    "starts that would not end within them, by the ones before it; what is "
                    "left out is listed in the report")
    ap.add_argument("--out", default=os.path.join(BENCH, "out", time.strftime("%Y%m%d-%H%M%S")))
    args = ap.parse_args()
    mode = dict(MODES[args.mode])
    if args.rounds:
        mode["rounds"] = args.rounds
    if args.trial:
        mode["trial_s"] = args.trial
    try:
        layout = cpus.parse(args.cpus) if args.cpus else cpus.derive()
    except ValueError as e:
        ap.error(str(e))
    if args.hugepages is None:
        # Every memif queue of a zero-copy generator is filled with its mbufs.
        args.hugepages = 3072 + 768 * (max(worker_counts(args, layout)) - 1)
    host.exit_on_sigterm()
    os.makedirs(args.out, exist_ok=True)
    log(f"bench: {args.mode} mode, output in {args.out}; CPUs {layout.describe()}"
        + "".join(f"; {n}" for n in layout.notes))
    Bench(args, mode, args.out, layout).run()
    log(f"bench: done; results in {args.out}/results.json")


if __name__ == "__main__":
    main()
