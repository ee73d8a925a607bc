#!/usr/bin/env python3
"""Write bench/RESULTS.md and bench/results.png from a run's results.json.

    bench/report.py [bench/out/<run>/results.json [more runs' results.json ...]]
        (default: the newest run; points of later runs replace the first's)
        [--beside bench/runs/<machine>/<run>/results.json ... [--beside ...]]
        (runs on another machine: a section of their own; default: each folder
        bench/runs/<machine>/, its <run>/results.json)

Standard library + matplotlib only (Debian's python3-matplotlib).
"""
import argparse
import functools
import glob
import json
import os
import statistics
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
SWITCHES = ("limit", "e3", "ovs")
LABEL_TABLE_BYTES = 8 << 20   # e3's label table: 2^20 entries of 8 bytes (label_table.c)
LABEL = {"limit": "link limit (testpmd io)", "e3": "e3-vswitchd", "ovs": "OVS-DPDK"}

sys.path.insert(0, BENCH)
from benchlib import stalls  # noqa: E402
from benchlib.pktgen import ring_slots  # noqa: E402
from benchlib.scenarios import BY_NAME  # noqa: E402


def layout_line(res):
    """Where the table's points ran (one worker each)."""
    lay = res.get("cpus") or {"gen": [0], "main": 1, "workers": [1]}
    gen, main, w = lay["gen"], lay["main"], lay["workers"][0]
    where = (f"with all its threads on CPU {w}" if main == w
             else f"its main thread on CPU {main}, its worker on CPU {w}")
    return (f"Generator `e3-pktgen` (DPDK, `datapath/pktgen/`) on CPU {gen[0]}; the switch under "
            f"test {where} (layout `{lay.get('spec', 'gen=0 main=1 workers=1 vm=0')}`; the scaling "
            "series below uses more).")


def vm_shares_gen(res):
    """Whether the run's PVP VM ran on a generator CPU (every run before
    the layout was recorded did)."""
    lay = res.get("cpus")
    return lay is None or lay["vm"] in lay["gen"]


def newest_results():
    runs = sorted(glob.glob(os.path.join(BENCH, "out", "*", "results.json")), key=os.path.getmtime)
    if not runs:
        sys.exit("report: no bench/out/*/results.json; run bench/run.sh first")
    return runs[-1]


def mpps(v):
    return f"{v / 1e6:.2f}" if v else "0"


def num(v):
    """A cycles figure, "-" where there is none."""
    return f"{v:.0f}" if v else "-"


def fmt_ratio(v):
    return "-" if v is None else f"{v:.2f}"


def us(ns):
    return f"{ns / 1000:.1f}" if ns is not None else "-"


def size_name(n):
    return f"{n // 1000000}M" if n >= 1000000 and n % 1000000 == 0 else (
        f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n))


# A flat-out trial in which the switch's input ring pushed back on fewer of
# the generator's sends than this measured the generator, not the switch.
SATURATED = 0.5


def round_ratios(sa, sb, key):
    """a's key over b's, round by round (a round's trials of the two are
    seconds apart, so the host's swings between rounds cancel), for the
    rounds both measured; [] from a run that kept only medians."""
    a = {r["round"]: r.get(key) for r in (sa or {}).get("by_round", [])}
    b = {r["round"]: r.get(key) for r in (sb or {}).get("by_round", [])}
    return [a[k] / b[k] for k in sorted(a) if a[k] and b.get(k)]


def paired(sa, sb, key):
    """a's key over b's: the median of the rounds' ratios, or the ratio of
    the medians from a run that kept only those; None if either is missing."""
    rs = round_ratios(sa, sb, key)
    if rs:
        return statistics.median(rs)
    x, y = (sa or {}).get(key), (sb or {}).get(key)
    return x / y if x and y else None


def capped(sw, key="pushback"):
    """Whether the switch's flat-out figure (key: that trial's pushback) is
    the generator's rate rather than the switch's."""
    pb = (sw or {}).get(key)
    return pb is not None and pb < SATURATED


def cell(sw, key="ndr_pps"):
    if sw is None:
        return "-"
    if "na" in sw:
        return "n/a"
    if "error" in sw and key not in sw:
        return "error"
    return (">=" if key == "max_pps" and capped(sw) else "") + mpps(sw.get(key))


def pushed(sw):
    pb = (sw or {}).get("pushback")
    return "-" if pb is None else f"{pb * 100:.0f}"


def by_scenario(points):
    out = {}
    for p in points:
        out.setdefault(p["scenario"], []).append(p)
    for v in out.values():
        v.sort(key=lambda p: p["size"])
    return out


def mem_bytes(switch):
    def get(p):
        return (p["switches"].get(switch, {}).get("memory") or {}).get("total_bytes")
    return get


def per_entry(points, getter):
    """Bytes per table entry: growth of the switch's memory from size 1 to
    n, both measured in the same run (runs may account memory apart): a
    size-1 point a later run replaced still gives its own run's base."""
    bases = {}
    for p in points:
        while p is not None and p["size"] == 1:
            bases.setdefault(p.get("run", 0), getter(p))
            p = p.get("replaced")
    out = {}
    for p in points:
        b, base = getter(p), bases.get(p.get("run", 0))
        # Hugepages come in 2 MiB steps: below ~100k entries the growth is
        # within that granularity and per-entry figures would be noise.
        if base is not None and b is not None and p["size"] >= 100000:
            out[p["size"]] = (b - base) / (p["size"] - 1)
    return out


def table(name, points):
    scn = BY_NAME.get(name)
    lines = [f"### {scn.title if scn else name}", ""]
    if scn and scn.note:
        lines += [scn.note, ""]
    # Runs before the field: PVP's searches always started at its bound.
    bound = max((p.get("bound_pps", scn.bound_pps if scn else 0) or 0 for p in points), default=0)
    flat_what = (f"what arrived when {bound / 1e6:g} Mpps was offered (the search's "
                 "first trial: no flat-out trial in PVP with the VM on the generator's CPU)"
                 if bound else
                 "what each switch forwards when offered all the generator can send (Mpps "
                 "received, any loss)")
    lines += [f"Zero-loss rates (see Method for the loss allowed) in Mpps, medians over rounds; "
              "ratios: the median of the rounds' ratios, each from the two switches' trials of "
              "one round, seconds apart (so not always the ratio of the medians beside them); "
              f"\"flat out\" is {flat_what}; \">=\" marks a switch that kept up with the "
              "generator (its input ring pushed back on fewer than half of the generator's "
              "sends, column \"pushed back\"): the figure is the generator's, the switch "
              "forwards at least that. Cycles/frame: each switch's own accounting (Method); "
              "\"°\" marks one measured while the switch kept up with the generator (partly "
              "empty bursts, so more than at full bursts). Generator: its own ceiling, looped "
              "to itself in the same rounds.", ""]
    lines += [f"| {scn.table if scn else 'size'} | limit | e3 | OVS | e3/limit | e3/OVS "
              "| flat out: limit / e3 / OVS | flat e3/limit | flat e3/OVS "
              "| pushed back % limit / e3 / OVS "
              "| e3 lat p50/p99 us | OVS lat p50/p99 us | cycles/frame limit / e3 / OVS "
              "| e3 cycles / limit's | generator Mpps (x limit flat) "
              "| e3 memory MiB | e3 B/entry | OVS B/entry |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    e3_pe = per_entry(points, mem_bytes("e3"))
    ovs_pe = per_entry(points, mem_bytes("ovs"))

    def lat(s):
        latency = (s or {}).get("latency_ns")
        return f"{us(latency['p50'])} / {us(latency['p99'])}" if latency else "-"

    def per(pe, n):
        return f"{pe[n]:.0f}" if n in pe else "-"

    def cycles(s):
        c = (s or {}).get("cycles_per_frame")
        return "-" if c is None else f"{c:.0f}" + ("°" if capped(s, "cycles_pushback") else "")

    def gen(p, lim_f):
        c = p["switches"].get("gen", {}).get("ceiling_pps")
        return "-" if not c else f"{c / 1e6:.2f}" + (f" ({c / lim_f:.1f}x)" if lim_f else "")
    for p in points:
        sw = p["switches"]
        lim, e3, ovs = (sw.get(k) for k in SWITCHES)
        mem = mem_bytes("e3")(p)
        mem_mib = "-" if mem is None else f"{mem / 2**20:.0f}"
        flat = " / ".join(cell(x, "max_pps") for x in (lim, e3, ovs))
        lim_f = (lim or {}).get("max_pps")
        mark = "*" if p.get("supplement") else ""
        lines.append(f"| {size_name(p['size'])}{mark} | {cell(lim)} | {cell(e3)} | {cell(ovs)} "
                     f"| {fmt_ratio(paired(e3, lim, 'ndr_pps'))} "
                     f"| {fmt_ratio(paired(e3, ovs, 'ndr_pps'))} | {flat} "
                     f"| {fmt_ratio(paired(e3, lim, 'max_pps'))} "
                     f"| {fmt_ratio(paired(e3, ovs, 'max_pps'))} "
                     f"| {' / '.join(pushed(x) for x in (lim, e3, ovs))} | {lat(e3)} | {lat(ovs)} "
                     f"| {cycles(lim)} / {cycles(e3)} / {cycles(ovs)} "
                     f"| {fmt_ratio(paired(e3, lim, 'cycles_per_frame'))} "
                     f"| {gen(p, lim_f)} "
                     f"| {mem_mib} | {per(e3_pe, p['size'])} | {per(ovs_pe, p['size'])} |")
    lines += stage_table(points)
    if scn and scn.vm:
        lines += port_table(points)
    na = {k: v for p in points for k, v in p["switches"].items() if "na" in v and k in LABEL}
    for k, v in na.items():
        lines += ["", f"{LABEL[k]}: n/a: {v['na']}."]
    errors = {(k, p["size"]): v["error"] for p in points for k, v in p["switches"].items()
              if "error" in v and k in LABEL}
    for (k, n), e in errors.items():
        lines += ["", f"{LABEL[k]} at {size_name(n)}: error: `{e.splitlines()[0][:800]}`"]
    for p in points:
        if p.get("cut"):
            lines += ["", f"At {size_name(p['size'])}: {p['cut']}."]
    return lines + [""]


def stage_table(points):
    """e3's cycles per frame by stage (its runtime profile at the zero-loss
    rate, medians over rounds): where its cycles go."""
    rows = [(p["size"], p["switches"].get("e3", {}).get("stage_cycles")) for p in points]
    names = {k for _, st in rows if st for k in st}
    # In a frame's order: receive, the stages, transmit.
    stages = [k for k in ("rx",) if k in names] + sorted(names - {"rx", "tx"}) + \
        [k for k in ("tx",) if k in names]
    if not stages:
        return []
    lines = ["", "e3's cycles per frame by stage (`e3-dpctl runtime` over the cycles trial; rx "
             "and tx: the ports' receive and transmit, per frame received and sent; the rest "
             "of the total is the burst's own overhead). A row without rx and tx comes from a "
             "run whose TX buffers held one burst: its last stage also counts the burst's "
             "transmit:", "",
             "| size | " + " | ".join(stages) + " |", "|---:|" + "---:|" * len(stages)]
    for n, st in rows:
        if st:
            lines.append(f"| {size_name(n)} | " + " | ".join(f"{st[k]:.0f}" if k in st else "-" for k in stages) + " |")
    return lines


def port_table(points):
    """e3's ports through a VM's point (its runtime profile over the cycles
    trial, medians over rounds): each port's receive and transmit apart, in
    cycles per frame and frames per burst, so a VM's vhost-user port shows
    beside the memif link."""
    rows = [(p["size"], name, io) for p in points
            for name, io in sorted(p["switches"].get("e3", {}).get("port_cycles", {}).items())]
    if not rows:
        return []

    def val(io, k, fmt):
        return fmt.format(io[k]) if k in io else "-"
    lines = ["", "e3's ports apart (the same profile; vm0 is the VM's vhost-user port, p0 the "
             "memif link; a burst is a receive or transmit call that moved frames):", "",
             "| size | port | rx cycles/frame | rx frames/burst | tx cycles/frame "
             "| tx frames/burst |", "|---:|---|---:|---:|---:|---:|"]
    for n, name, io in rows:
        lines.append(f"| {size_name(n)} | {name} | {val(io, 'rx', '{:.0f}')} "
                     f"| {val(io, 'rx_burst', '{:.1f}')} | {val(io, 'tx', '{:.0f}')} "
                     f"| {val(io, 'tx_burst', '{:.1f}')} |")
    return lines


def targets(groups, zc_groups=None):
    """The targets of the issue, each with the measured value and a verdict.
    groups: the table's points by scenario; zc_groups: the zero-copy ones."""
    def point(name, n, link="copy"):
        pts = (groups if link == "copy" else zc_groups or {}).get(name, [])
        return next((p for p in pts if p["size"] == n), None)

    def r(name, n, a, b, key="ndr_pps", link="copy"):
        p = point(name, n, link)
        return paired(p["switches"].get(a), p["switches"].get(b), key) if p else None

    def rounds(name, n, a, b, key, link="copy"):
        p = point(name, n, link)
        return round_ratios(p["switches"].get(a), p["switches"].get(b), key) if p else []

    rows = []

    def row(what, val, goal, ok, fmt="{:.2f}", extra="", verdict=None, rounds_met=""):
        if verdict is None:
            verdict = "-" if val is None else ("met" if ok(val) else "NOT met") + rounds_met
        rows.append(f"| {what} | {fmt.format(val) if val is not None else 'not measured'}{extra} "
                    f"| {goal} | {verdict} |")

    def spread(rs, ok):
        """The ratio's range over the rounds, and how many of them met the goal."""
        if len(rs) < 2:
            return "", ""
        return (f"rounds {min(rs):.2f}-{max(rs):.2f}",
                f" ({sum(ok(v) for v in rs)} of {len(rs)} rounds)")

    def ratio_row(what, name, n, a, b, goal, ok):
        val, flat = r(name, n, a, b), r(name, n, a, b, "max_pps")
        span, met = spread(rounds(name, n, a, b, "ndr_pps"), ok)
        verdict = None
        if val is not None and flat is not None and ok(val) != ok(flat):
            verdict = "inconclusive (zero-loss and flat-out disagree)"
        notes = [x for x in (span, f"flat out {flat:.2f}" if flat is not None else "") if x]
        row(what, val, goal, ok, verdict=verdict, rounds_met=met,
            extra=f" ({'; '.join(notes)})" if notes else "")

    def cost_row(what, name, n, a, b, goal, ok, link="copy"):
        val = r(name, n, a, b, "cycles_per_frame", link)
        span, met = spread(rounds(name, n, a, b, "cycles_per_frame", link), ok)
        row(what, val, goal, ok, extra=f" ({span})" if span else "", rounds_met=met)
    ratio_row("E-LAN known unicast, e3/limit at 1 MAC", "elan-unicast", 1, "e3", "limit",
              ">= 0.90", lambda v: v >= 0.90)
    cost_row("E-LAN known unicast at 1 MAC, the limit's cycles/frame / e3's (the same target, "
             "by cost)", "elan-unicast", 1, "limit", "e3", ">= 0.90", lambda v: v >= 0.90)
    ratio_row("E-LAN known unicast, e3/limit at 1M MACs", "elan-unicast", 1000000, "e3", "limit",
              ">= 0.85", lambda v: v >= 0.85)
    ratio_row("Label swap, e3/limit at 1M labels", "label-swap", 1000000, "e3", "limit",
              ">= 0.95", lambda v: v >= 0.95)
    ratio_row("E-LAN known unicast, e3/OVS at 20k MACs", "elan-unicast", 20000, "e3", "ovs",
              ">= 3", lambda v: v >= 3)
    ratio_row("PVP E-Line, e3/limit", "pvp-eline", 1, "e3", "limit", ">= 0.90",
              lambda v: v >= 0.90)
    ratio_row("PVP E-Line, e3/OVS", "pvp-eline", 1, "e3", "ovs", ">= 2", lambda v: v >= 2)
    cost_row("PVP E-Line, e3's cycles/frame / OVS's (the same target, by cost)",
             "pvp-eline", 1, "e3", "ovs", "<= 0.50", lambda v: v <= 0.5)
    cost_row("E-LAN known unicast at 1M MACs, e3's cycles/frame / the limit's",
             "elan-unicast", 1000000, "e3", "limit", "<= 1.3", lambda v: v <= 1.3)
    cost_row("E-LAN known unicast at 20k MACs, e3's cycles/frame / OVS's",
             "elan-unicast", 20000, "e3", "ovs", "<= 0.33", lambda v: v <= 1 / 3)
    cost_row("E-LAN known unicast at 1 MAC, e3's cycles/frame / OVS's",
             "elan-unicast", 1, "e3", "ovs", "<= 0.85", lambda v: v <= 0.85)
    ratio_row("PVP E-Line, OVS a provider edge too, e3/OVS at zero loss (goal set for a layout "
              "where the VM has a CPU of its own)", "pvp-eline", 1, "e3", "ovs", ">= 1.25",
              lambda v: v >= 1.25)
    cost_row("PVP E-Line, e3's cycles per crossing / OVS's", "pvp-eline", 1, "e3", "ovs",
             "<= 0.80", lambda v: v <= 0.8)
    # The same two goals where the VM has a CPU of its own (the generator is
    # the VM) and OVS carries the same pseudowire.
    ratio_row("E-Line through a VM's port, the VM on a CPU of its own, OVS a provider edge "
              "too (vm-eline), e3/OVS", "vm-eline", 1, "e3", "ovs", ">= 1.25",
              lambda v: v >= 1.25)
    cost_row("E-Line through a VM's port (vm-eline), e3's cycles per crossing / OVS's",
             "vm-eline", 1, "e3", "ovs", "<= 0.80", lambda v: v <= 0.8)
    cost_row("E-Line through a VM's port on zero-copy links (vm-eline, the generator "
             "copying as a NIC would), e3's cycles per crossing / OVS's",
             "vm-eline", 1, "e3", "ovs", "<= 0.80", lambda v: v <= 0.8, link="zc")
    for n, goal in ((1, 50), (1000000, 90)):
        p = point("elan-unicast", n)
        own = own_cycles((p or {}).get("switches", {}).get("e3"))
        row(f"E-LAN known unicast at {size_name(n)} MAC{'s' if n > 1 else ''}, e3's own stages "
            "(cycles/frame, port I/O excluded)", own, f"<= {goal}", lambda v, g=goal: v <= g,
            "{:.0f}")
    # PVP's limit is not a flat-out figure: only the point-to-point tables count.
    gens = [(p["switches"]["gen"]["ceiling_pps"] / p["switches"]["limit"]["max_pps"], p)
            for pts in groups.values() for p in pts
            if p["switches"].get("gen", {}).get("ceiling_pps")
            and p["switches"].get("limit", {}).get("max_pps")
            and not getattr(BY_NAME.get(p["scenario"]), "vm", False)]
    if gens:
        g, p = min(gens, key=lambda x: x[0])
        row(f"generator ceiling (looped to itself) / the link limit flat out, lowest point "
            f"({p['scenario']} {size_name(p['size'])})", g, ">= 1.5", lambda v: v >= 1.5)
    flats = [(k, p) for pts in groups.values() for p in pts for k in SWITCHES
             if p["switches"].get(k, {}).get("pushback") is not None]
    if flats:
        kept = [f"{k} at {p['scenario']} {size_name(p['size'])}" for k, p in flats
                if capped(p["switches"][k])]
        rows.append(f"| flat-out figures the generator set (the switch pushed back on fewer "
                    f"than half of its sends) | {len(kept)} of {len(flats)}"
                    + (f": {', '.join(kept)}" if kept else "") + " | 0 | "
                    + ("met" if not kept else "NOT met (those figures are lower bounds)") + " |")
    pe = per_entry(groups.get("elan-unicast", []), mem_bytes("e3"))
    big = max(pe) if pe else None
    row(f"e3 bytes per MAC (memory growth 1 -> {size_name(big) if big else '?'} MACs, "
        "incl. the table's 25% headroom)",
        pe.get(big) if big else None, "<= 64", lambda v: v <= 64, "{:.0f}")
    sw = groups.get("label-swap", [])
    lbl = per_entry(sw, mem_bytes("e3"))
    big = max(lbl) if lbl else None
    if big:
        # The direct-indexed table itself is allocated whole at start (2^20
        # x 8 B, datapath/src/tables/label_table.c), so it is in the baseline; what
        # grows with the labels (nhlfes, control state) is added to it.
        total = LABEL_TABLE_BYTES + lbl[big] * big
        row(f"e3 label state for {size_name(big)} labels: the 8 MiB label table + "
            f"{lbl[big]:.0f} B/label of growth", total / 2**20, "label table <= 16 MiB",
            lambda v: LABEL_TABLE_BYTES <= 16 * 2**20, "{:.0f} MiB")
    else:
        row("e3 label state", None, "label table <= 16 MiB", lambda v: True)
    return (["Verdicts go by the zero-loss ratio, checked against the flat-out ratio beside "
             "it (less noisy); when the two disagree the verdict is inconclusive. A zero-loss "
             "ratio far above 1 against the link limit means the limit's own search was "
             "disturbed (see Findings). Beside each ratio (the median of the rounds' ratios, as "
             "in the tables), its range over the rounds and, in the verdict, how many rounds "
             "met the goal: how firmly the figure holds on this machine.", "",
             "| target | measured | goal | verdict |", "|---|---:|---:|---|"] + rows + [""])


def own_cycles(sw):
    """e3's own stages per frame: the runtime profile's stages without the
    ports' receive and transmit (each stage's cycles over the frames it
    took; a frame takes each stage of its path once)."""
    st = (sw or {}).get("stage_cycles")
    if not st:
        return None
    return sum(v for k, v in st.items() if k not in ("rx", "tx"))


def zero_copy(points):
    """The zero-copy section: each switch's cycles per frame with the link
    copying (the table's mode) and with the switch a zero-copy client."""
    zc = [p for p in points if p.get("link") == "zc"]
    if not zc:
        return []
    md = ["## Zero-copy links", "",
          "The same point with the roles of the link swapped: the switch is a zero-copy memif "
          "client (its own mbufs are the ring buffers) and the generator the server that "
          "copies into and out of them, as a NIC's DMA would (rings of 2^12 slots, the "
          "generator catching up at most half a ring at once). What is left of a switch's "
          "cycles is its own work and the descriptors; the difference from the table's mode "
          "is what the copies cost it. The generator now copies, so the rates are its, not the "
          "switches': compare cycles.", "",
          "| point | switch | Mpps copy / zc | cycles/frame copy / zc | copies | e3 rx / tx copy / zc | e3 stages copy / zc |",
          "|---|---|---:|---:|---:|---:|---:|"]
    for p in sorted(zc, key=lambda p: p["scenario"]):
        base = next((q for q in points if q["scenario"] == p["scenario"] and q["size"] == p["size"]
                     and q["workers"] == 1 and q.get("link", "copy") == "copy"), None)
        for k in SWITCHES:
            a = ((base or {}).get("switches") or {}).get(k) or {}
            b = p["switches"].get(k) or {}
            if "na" in b:
                md.append(f"| {p['scenario']} {size_name(p['size'])} | {k} | n/a: {b['na']} | | | | |")
                continue
            ca, cb = a.get("cycles_per_frame"), b.get("cycles_per_frame")
            io = own = "-"
            if k == "e3":
                sa, sb = a.get("stage_cycles") or {}, b.get("stage_cycles") or {}
                io = " / ".join(f"{s.get('rx', 0):.0f}+{s.get('tx', 0):.0f}" for s in (sa, sb))
                own = " / ".join(f"{own_cycles(s_):.0f}" if own_cycles(s_) is not None else "-"
                                 for s_ in (a, b))
            md.append(f"| {p['scenario']} {size_name(p['size'])} | {k} | {cell(a or None)} / {cell(b)} | "
                      f"{num(ca)} / {num(cb)} | {num(ca - cb if ca and cb else None)} | {io} | {own} |")
    return md + [""]


def scaling_series(res, points):
    """{scenario: its size-1 points by worker count} for the run's scale
    scenarios (bench.py --scale-scenarios)."""
    out = {}
    for name in res.get("scale_scenarios", ["elan-unicast"]):
        pts = sorted((p for p in points if p["scenario"] == name and p["size"] == 1
                      and p["link"] == "copy"), key=lambda p: p["workers"])
        if pts:
            out[name] = pts
    return out


def scaling(res, points, plotted, heading="## Scaling over cores", image="results-scaling.png"):
    """The scaling section: Mpps and cycles/frame per worker count (and
    its plot, when plotted)."""
    lay = res.get("cpus")
    if not lay:
        return []
    series = scaling_series(res, points)
    md = [heading, ""] + ([f"![scaling]({image})", ""] if plotted else []) + [
          f"CPU layout: `{lay['spec']}`" + (f" (derived from {lay['derived_from']} CPUs)"
                                            if lay.get("derived_from") else " (given with --cpus)")
          + ". A point with W workers runs e3-vswitchd with W worker lcores, OVS with W PMD "
          "threads and testpmd with W forwarding cores, on the first W worker CPUs; every "
          "memif port has W queues, queue k served by worker k (memif has no hash: the "
          "generator's lane k sends on queue k, and the switch sends back on its worker's "
          "queue). The generator runs a lane per worker, as far as it has CPUs (a lane with "
          "more queues serves them in turn, at a rate in proportion to its queues, so every "
          "worker is offered the same); its own ceiling, looped to itself on the same "
          "lanes and queues, is the \"generator\" column. \"Flat out\": what each forwards "
          "offered all the generator sends, any loss. Cycles/frame are every forwarding "
          "core's busy cycles over every frame (flat out): flat while the rate grows with the "
          "workers, rising where they contend.", ""]
    md += [f"- {n}" for n in lay.get("notes", [])]
    if lay.get("notes"):
        md.append("")
    for name in series:
        pts = series[name]
        one = next((p for p in pts if p["workers"] == 1), None)
        md += [f"{heading.split()[0]}# {BY_NAME[name].title if name in BY_NAME else name}", "",
               "| workers | generator lanes | generator Mpps | limit Mpps | e3 Mpps | OVS Mpps "
               "| e3 vs 1 worker | e3/OVS | flat out: limit / e3 / OVS | e3 flat out vs 1 worker "
               "| cycles/frame limit / e3 / OVS |",
               "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for p in pts:
            sw = p["switches"]
            cyc = " / ".join(f"{sw[k]['cycles_per_frame']:.0f}" if sw.get(k, {}).get("cycles_per_frame")
                             else "-" for k in SWITCHES)
            flat = " / ".join(cell(sw.get(k), "max_pps") for k in SWITCHES)
            md.append(f"| {p['workers']} | {p.get('lanes', 1)} | "
                      f"{mpps((sw.get('gen') or {}).get('ceiling_pps'))} | {cell(sw.get('limit'))} | "
                      f"{cell(sw.get('e3'))} | {cell(sw.get('ovs'))} | "
                      f"{fmt_ratio(speedup(p, one, 'ndr_pps'))} | "
                      f"{fmt_ratio(paired(sw.get('e3'), sw.get('ovs'), 'ndr_pps'))} | {flat} | "
                      f"{fmt_ratio(speedup(p, one, 'max_pps'))} | {cyc} |")
        md.append("")
        md += scaling_cost(pts, one)
        md += [f"At {p['workers']} worker{'s' if p['workers'] > 1 else ''}: {p['cut']}."
               for p in pts if p.get("cut")]
        if any(p.get("cut") for p in pts):
            md.append("")
    return md


def scaling_cost(pts, one):
    """Where e3's cycles per frame go as workers are added: its ports'
    receive and transmit, its own stages, and its cores' clock. A cost that
    grows evenly in every part, its stages on lines no other core touches
    included, while the clock falls, is a slower core; one that grows in
    the ports' lines alone is the links' memory."""
    e3s = [(p["workers"], p["switches"].get("e3") or {}) for p in pts]
    if not any(sw.get("stage_cycles") for _, sw in e3s):
        return []
    base = (one or {}).get("switches", {}).get("e3", {}).get("cycles_per_frame")
    md = ["e3's cycles per frame by part (runtime profile over the cycles trials, medians "
          "over rounds): the ports' receive and transmit per frame, its own stages (the rest "
          "of the pipeline), and the clock its workers' cores ran at, from each worker's clock "
          "probe (docs/operations.md); core cycles/frame = TSC cycles/frame x core clock / "
          "TSC clock, the cost a slower core does not inflate. \"-\": a run from before "
          "the probe.", "",
          "| workers | cycles/frame | vs 1 worker | rx | own stages | tx | core GHz (TSC) | "
          "core cycles/frame |", "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for w, sw in e3s:
        st = sw.get("stage_cycles") or {}
        total, hz = sw.get("cycles_per_frame"), sw.get("core_hz")
        ghz = f"{hz / 1e9:.2f} ({sw['tsc_hz'] / 1e9:.2f})" if hz else "-"
        md.append(f"| {w} | {num(total)} | {fmt_ratio(total / base if total and base else None)} | "
                  f"{num(st.get('rx'))} | {num(own_cycles(sw))} | {num(st.get('tx'))} | {ghz} | "
                  f"{num(total * hz / sw['tsc_hz'] if total and hz else None)} |")
    return md + [""]


@functools.lru_cache(maxsize=None)
def pyplot():
    """matplotlib's pyplot, or None where it is missing (a bundle's machine):
    the report then has its tables without the plots."""
    try:
        import matplotlib
    except ImportError:
        print("report: no matplotlib here; writing the tables without plots")
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def speedup(p, one, key):
    """e3's figure (key) at point p over its figure with one worker."""
    if one is None:
        return None
    a = p["switches"].get("e3", {}).get(key)
    b = one["switches"].get("e3", {}).get(key)
    return a / b if a and b else None


def stalled(t):
    """Whether a failed search trial lost its frames to stalls
    (stalls.explain): the host took a CPU for a while, the switch's or the
    generator's (which then neither sends nor takes back, and the switch's
    output ring to it fills), not a rate the switch could not hold."""
    return stalls.explain(t["rate"], t["lost"], t["result"].get("gap_us"), t.get("workers", 1),
                          t.get("link", "copy"))


def own_stall(t):
    """A stall of the generator itself: its own loop stood still for at
    least half the longest stretch with nothing back."""
    gap = t["result"]["gap_us"]
    return stalled(t) and gap["loop"] * 2 >= gap["rx"][0]


def repeats(trials):
    """{id(trial): the trial that ran its rate again} for each search trial
    run once more (bench.py repeats a trial lost to a stall). A search never
    runs a rate twice otherwise, so a repeat is the same switch's next
    search trial, in the same point and round, at the same rate."""
    last, again = {}, {}
    for t in trials:
        if t.get("phase") != "search":
            continue
        key = (t.get("run"), t.get("scenario"), t.get("size"), t.get("workers", 1),
               t.get("link", "copy"), t.get("round"), t["switch"])
        before = last.get(key)
        if before is not None and before.get("passed") is False and before["rate"] == t["rate"]:
            again[id(before)] = t
        last[key] = t
    return again


def stalls_table(trials):
    """The searches' failed trials by switch (and worker count), how many of
    them were lost to stalls (stalled()), how many of those were the
    generator's own, and how many were run again and passed then; empty for
    runs from before the generator measured its gaps."""
    failed = [t for t in trials if t.get("phase") == "search" and t.get("passed") is False
              and "gap_us" in t.get("result", {})]
    if not failed:
        return []
    again = repeats(trials)
    runs = sorted({t["run"] for t in failed if t.get("run")})
    md = ["### Stalls in the zero-loss searches", "",
          "Every trial the generator also reports its 8 longest stretches with nothing coming "
          "back and the longest between two turns of its own loop (`gap_us` in trials.jsonl). "
          "A switch stopped for longer than its input ring holds at the offered rate "
          f"({ring_slots('copy')} slots a worker, {ring_slots('zc')} on zero-copy links) loses "
          "what is offered meanwhile, however fast it forwards otherwise, and so does one whose "
          "generator stopped (its ring back to the generator fills). A failed trial whose "
          "stretches alone would lose at least half of what it lost is counted as lost to "
          "stalls: the host took a CPU for a while, the switch's, or the generator's own where "
          "its loop stood still as long. In a run that repeats them (`repeat_stalled` in its "
          "results.json; `bench.py --no-repeat-stalled` does not), the search runs such a "
          "trial's rate once more and that trial decides; a second stall at the same rate "
          "fails it. The flat-out figure, which allows loss, is the "
          "one to read beside a zero-loss figure that stalls still pushed down."
          + (f" From run{'s' if len(runs) > 1 else ''} " + ", ".join(f"`{r}`" for r in runs) + "."
             if runs else ""), "",
          "| switch | workers | failed search trials | lost to stalls | of them the generator's "
          "| run again | passed then | longest stretch with nothing back (ms) |",
          "|---|---:|---:|---:|---:|---:|---:|---:|"]
    keys = sorted({(t["switch"], t.get("workers", 1)) for t in failed},
                  key=lambda k: (k[1], SWITCHES.index(k[0]) if k[0] in SWITCHES else 99, k[0]))
    for sw, w in keys:
        ts = [t for t in failed if t["switch"] == sw and t.get("workers", 1) == w]
        longest = max((t["result"]["gap_us"]["rx"] or [0])[0] for t in ts)
        rerun = [again[id(t)] for t in ts if id(t) in again]
        md.append(f"| {sw} | {w} | {len(ts)} | {sum(map(stalled, ts))} | "
                  f"{sum(map(own_stall, ts))} | {len(rerun)} | "
                  f"{sum(1 for t in rerun if t.get('passed'))} | {longest / 1000:.1f} |")
    return md + [""]


def scaling_targets(res, points):
    """Issue target: 4 workers >= 3.6x one worker (e3's zero-loss rate),
    checked against the flat-out ratio as the table's targets are."""
    rows = []
    for name, pts in scaling_series(res, points).items():
        by = {p["workers"]: p for p in pts}
        if 1 not in by or 4 not in by:
            continue
        r, flat = speedup(by[4], by[1], "ndr_pps"), speedup(by[4], by[1], "max_pps")
        if r is None:
            continue
        verdict = "met" if r >= 3.6 else "not met"
        if flat is not None and (flat >= 3.6) != (r >= 3.6):
            verdict = "inconclusive (zero-loss and flat-out disagree)"
        rows.append(f"| {name}: e3 with 4 workers / 1 worker | {r:.2f}"
                    + (f" (flat out {flat:.2f})" if flat is not None else "")
                    + f" | >= 3.6 | {verdict} |")
    if not rows:
        return ["Scaling target (4 workers >= 3.6x one worker): not measured, the layout has "
                "fewer than 4 worker CPUs.", ""]
    return ["| scaling target | measured | goal | verdict |", "|---|---:|---:|---|"] + rows + [""]


def plot_scaling(res, points, path):
    plt = pyplot()
    if plt is None:
        return False
    series = {k: v for k, v in scaling_series(res, points).items() if len(v) > 1}
    if not series:
        return False
    fig, axes = plt.subplots(2, len(series), figsize=(5.5 * len(series), 7.5), squeeze=False)
    for col, (name, pts) in enumerate(series.items()):
        for k, style in zip(SWITCHES, ("k--", "b-o", "r-s")):
            got = [(p["workers"], p["switches"].get(k, {})) for p in pts]
            xs = [w for w, s in got if s.get("ndr_pps") is not None]
            if xs:
                axes[0][col].plot(xs, [s["ndr_pps"] / 1e6 for w, s in got if w in xs], style,
                                  label=LABEL[k])
            xs = [w for w, s in got if s.get("cycles_per_frame")]
            if xs:
                axes[1][col].plot(xs, [s["cycles_per_frame"] for w, s in got if w in xs], style,
                                  label=LABEL[k])
        for row, ylabel in enumerate(("zero-loss rate, Mpps", "cycles/frame (all cores)")):
            ax = axes[row][col]
            ax.set_xscale("log", base=2)
            ax.set_xticks([p["workers"] for p in pts], [str(p["workers"]) for p in pts])
            ax.set_xlabel("workers")
            ax.set_ylabel(ylabel)
            ax.set_ylim(bottom=0)
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=8)
        axes[0][col].set_title(BY_NAME[name].title if name in BY_NAME else name, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def plot(groups, path):
    plt = pyplot()
    if plt is None:
        return False
    multi = {k: v for k, v in groups.items() if len(v) > 1}
    if not multi:
        return False
    fig, axes = plt.subplots(1, len(multi), figsize=(5.5 * len(multi), 4.2), squeeze=False)
    for ax, (name, pts) in zip(axes[0], multi.items()):
        for k, style in zip(SWITCHES, ("k--", "b-o", "r-s")):
            xs = [p["size"] for p in pts if p["switches"].get(k, {}).get("ndr_pps") is not None]
            ys = [p["switches"][k]["ndr_pps"] / 1e6 for p in pts if p["size"] in xs]
            if xs:
                ax.plot(xs, ys, style, label=LABEL[k])
        ax.set_xscale("log")
        ax.set_xlabel(BY_NAME[name].table if name in BY_NAME else "table size")
        ax.set_ylabel("zero-loss rate, Mpps (64-byte frames)")
        ax.set_title(BY_NAME[name].title if name in BY_NAME else name, fontsize=10)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def load_runs(srcs):
    """The first run is the base; points of later runs (e.g. more rounds of
    a few points) replace the base's points of the same scenario and size
    (each keeps the point it replaced, and every point its run's index)."""
    runs, points, trials = [], {}, []
    for i, src in enumerate(srcs):
        with open(src) as f:
            res = json.load(f)
        runs.append((src, res))
        for p in res["points"]:
            p["supplement"] = i > 0
            p["run"] = i
            p.setdefault("workers", 1)
            p.setdefault("link", "copy")
            key = (p["scenario"], p["size"], p["workers"], p["link"])
            p["replaced"] = points.get(key)
            points[key] = p
        jl = os.path.join(os.path.dirname(src), "trials.jsonl")
        if os.path.exists(jl):
            with open(jl) as f:
                trials += [dict(json.loads(line), run=os.path.basename(os.path.dirname(src)))
                           for line in f if line.strip()]
    return runs, list(points.values()), trials


def scaled(res, runs):
    """res with the scale scenarios of all runs: a supplementary run may
    hold the scaling series."""
    return dict(res, scale_scenarios=sorted({n for _, r in runs
                                             for n in r.get("scale_scenarios", [])}))


def steal_text(trials):
    """What a hypervisor took from the layout's CPUs over the trials, from
    the kernel's steal time (the most-stolen CPU of each trial); "" where
    no trial recorded it."""
    steal = [t["steal_pct"] for t in trials if "steal_pct" in t]
    if not steal:
        return ""
    return (f"steal (time the hypervisor ran something else on the layout's CPUs, the most-"
            f"stolen CPU of each trial): median {statistics.median(steal):.1f}%, max {max(steal):.1f}%")


def cpu_line(m):
    shape = f"{m['cpus']} CPUs"
    if "cores" in m:
        nodes = m["numa_nodes"]
        shape += f", {m['cores']} cores, {nodes} NUMA node{'s' if nodes > 1 else ''}"
    freq = f"; frequency scaling: {m['cpufreq']}" if "cpufreq" in m else ""
    return (f"- CPU: {m['cpu']} ({shape}){freq}, {m['memory_gib']} GiB; kernel {m['kernel']}; "
            f"{m['os']}")


def skipped(r):
    """What a run's time budget (bench.py --budget) left out, as a clause."""
    if not r.get("skipped"):
        return ""
    what = [f"{p['scenario']} {size_name(p['size'])}"
            + (f" at {p['workers']} workers" if p["workers"] > 1 else "")
            + (" on zero-copy links" if p["link"] == "zc" else "") for p in r["skipped"]]
    return f"its time budget ({r['budget_s']:g} s) left out {', '.join(what)}"


def kept_runs(folder):
    """The runs kept from other machines: for each machine's folder under
    folder, its <run>/results.json files (a group for beside())."""
    groups = (sorted(glob.glob(os.path.join(m, "*", "results.json")))
              for m in sorted(glob.glob(os.path.join(folder, "*"))))
    return [g for g in groups if g]


def beside(srcs):
    """The section of runs on another machine (--beside): its machine, the
    runs, their tables, scaling and the targets they measured, and the
    NOTES.md found beside them (what the runs cannot say themselves)."""
    runs, points, trials = load_runs(srcs)
    for p in points:
        p["supplement"] = False     # no base run here: every run is listed
    # The layout and the scaling series of the run that scaled (if any).
    res = scaled(next((r for _, r in runs if any(p["workers"] > 1 for p in r["points"])),
                      runs[0][1]), runs)
    m = res["machine"]
    loads = [t["load1"] for t in trials if "load1" in t]
    steal = steal_text(trials)
    md = [f"## Another machine: {m['cpu']}, {m['cpus']} CPUs", "",
          cpu_line(m),
          f"- DPDK {m['dpdk']}; {m['ovs']}; from the bundle (`bench/bundle.sh`)",
          f"- hugepages for the switches: {'yes' if res['hugepages'] else 'no (--no-huge)'}; "
          + (f"load average over the trials: median {statistics.median(loads):.1f}, "
             f"max {max(loads):.1f}" if loads else "load not recorded")
          + (f"; {steal}" if steal else ""),
          "- " + layout_line(res) + ("" if vm_shares_gen(res) else
                                      " The VM has a CPU of its own and busy polls.")]
    for src, r in runs:
        xp = r["params"]
        what = sorted({f"{p['scenario']} {size_name(p['size'])}" for p in r["points"]})
        md.append(f"- Run `{os.path.relpath(src, os.path.dirname(BENCH))}` ({r['mode']} mode, "
                  f"{xp['rounds']} rounds, {xp['trial_s']:g} s trials, loss allowed "
                  f"{xp['loss_frac'] * 100:g}%): {', '.join(what)}"
                  + ("" if r.get("complete", True) else "; it ended early")
                  + (f"; {skipped(r)}" if skipped(r) else "") + ".")
    md.append("")
    groups = by_scenario([p for p in points if p["workers"] == 1 and p["link"] == "copy"])
    for name in [s for s in BY_NAME if s in groups] + [s for s in groups if s not in BY_NAME]:
        md += table(name, groups[name])
    image = f"results-scaling-{m['cpus']}cpus.png"
    md += scaling(res, points, plot_scaling(res, points, os.path.join(BENCH, image)),
                  heading="### Scaling over cores", image=image)
    md += stalls_table(trials)
    md += ["### Targets on this machine", ""]
    md += [line for line in targets(groups) + scaling_targets(res, points)
           if "| not measured" not in line]
    notes = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(srcs[0]))), "NOTES.md")
    if os.path.exists(notes):
        with open(notes) as f:
            md += [f.read().rstrip(), ""]
    return md


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="*", help="results.json of this machine's runs")
    ap.add_argument("--beside", nargs="+", action="append", metavar="RUN",
                    help="results.json of runs on another machine, reported in a section of "
                    "their own (a NOTES.md in their runs' parent folder is included); once per "
                    "machine. Default: each folder bench/runs/<machine>/")
    args = ap.parse_args()
    if args.beside is None:
        args.beside = kept_runs(os.path.join(BENCH, "runs"))
    srcs = args.runs or [newest_results()]
    runs, points, trials = load_runs(srcs)
    src, res = runs[0]
    res = scaled(res, runs)
    groups = by_scenario([p for p in points if p["workers"] == 1 and p["link"] == "copy"])
    m, prm = res["machine"], res["params"]
    loads = [t["load1"] for t in trials if "load1" in t]
    steal = steal_text(trials)
    md = [
        "# e3fabric benchmark results",
        "",
        f"Run `{os.path.basename(os.path.dirname(src))}` ({res['mode']} mode, "
        f"{res['elapsed_s'] // 60} min {res['elapsed_s'] % 60} s), written by `bench/report.py`; "
        "reproduce with `make bench` (or `make bench-quick`). Raw trials: "
        "`bench/out/<run>/trials.jsonl` (not committed)."
        + ("" if res.get("complete", True) else
           " **The run ended early:** what follows is what it measured before it stopped.")
        + (f" **Not measured:** {skipped(res)}." if skipped(res) else ""),
        "",
        "![zero-loss rate vs table size](results.png)",
        "",
        "## Machine",
        "",
        cpu_line(m),
        f"- DPDK {m['dpdk']}; {m['ovs']}",
        f"- hugepages for the switches: {'yes (2 MiB, own hugetlbfs)' if res['hugepages'] else 'no (--no-huge)'}",
        "- machine load (1-min load average over the trials): "
        + (f"min {min(loads):.1f}, median {statistics.median(loads):.1f}, max {max(loads):.1f}"
           if loads else "not recorded")
        + ". Anything above ~2 means other work shared the two CPUs with the generator "
          "and the switch, and the absolute numbers are low and noisy; the ratios, measured "
          "interleaved on the same links, are the result.",
        *([f"- {steal}"] if steal else []),
        "",
        "## Method",
        "",
        "- " + layout_line(res) + " Links: memif (the switch is the server, the generator the "
        "client), rings of 2^14 slots"
        + (". The generator's memif clients are zero-copy (its mbufs in hugepages are the "
           "ring buffers: the switch copies, the generator does not)" if res["hugepages"] else "")
        + ". It shuffles its mbuf pool when it starts, so that the buffers the switch copies "
        "into and out of are as scattered in the first trial as in the last (Findings)"
        + ". Except in latency trials it only counts the frames that come back, by length "
        "(data frames are even, warm-up and learning frames a byte longer: every header a "
        "switch here pushes or pops is even), without reading them: reading each one costs "
        "it a cache miss on a line the switch's CPU wrote, and capped it near the link "
        "limit. Flat out, it counts its sends and those the switch's input ring took only "
        "in part (\"pushed back\"): a switch that pushed back on fewer than half of them kept "
        "up with the generator, and its flat-out figure is the generator's (marked >=). Its "
        "own ceiling is also measured in every round of every point: the same streams flat "
        "out from its clients to memif servers of its own, with every switch paused (column "
        "\"generator\", and its ratio to the link limit flat out). That loop keeps every "
        "frame in one CPU's caches, so it overstates what the generator offers a switch on "
        "the other CPU; the pushback says which figures the generator capped.",
        "- PVP (generator -> switch -> VM -> switch -> generator): the switch gets a "
        "vhost-user port to a VM, dpdk-testpmd in macswap mode on a virtio_user port with "
        "rings of 16384 slots, which sends every frame back. Each frame crosses the switch "
        "twice; cycles/frame count each crossing. "
        + ("With two CPUs the VM shares CPU 0 with the generator, at idle priority: it runs "
           "whenever the generator sleeps, and the generator sleeps 30 us whenever it has "
           "nothing to send (two busy pollers on one CPU would take turns in slices of "
           "milliseconds, more than a virtio ring holds). The search starts from a trial at a "
           "fixed rate instead of flat out (flat out the generator never sleeps and the VM "
           "never runs), and doubles the rate while its trials pass."
           if vm_shares_gen(res) else
           "The VM busy polls a CPU of its own, and the search starts flat out as at the "
           "other points."),
        "- 64-byte customer frames (label scenarios: a 64-byte customer frame inside the "
        "22-byte pseudowire header; OVS's, where it is a provider edge, in its 18-byte one "
        "without control word). The varying field (MAC, label) walks the N values in a "
        "scattered order (a step co-prime with N), every value once per N frames.",
        "- Zero-loss rate: RFC 2544 binary search. A flat-out trial first bounds the rate "
        "(what the switch forwards at all); then trials at a rate set by a token bucket on the "
        f"TSC, {prm['trial_s']:g} s each after {prm['warmup_s']:g} s of uncounted warm-up, "
        f"at most {prm['max_trials']} trials, stopping when the interval is within "
        f"{prm['tolerance'] * 100:g}% of its top"
        ". A trial passes when frames received (x copies for flooding) = frames offered, "
        f"allowing a loss of {prm['loss_frac'] * 100:g}% of them"
        + (" (RFC 2544 asks for zero; on this shared 2-CPU VM a single ~10 ms preemption of the "
           "switch overflows a 2^14-slot ring at a few Mpps, so strict zero measures the "
           "hypervisor and the neighbours; `bench.py --loss 0` runs it strict)"
           if prm["loss_frac"] else "")
        + ", and the generator really offered >= "
        f"{prm['min_achieved'] * 100:g}% of the rate. Frames a full memif ring refuses count "
        "as lost, like a NIC's RX ring overflowing."
        + (" A failed trial whose loss the host's stalls explain (Stalls in the zero-loss "
           "searches, below) is run once more at its rate, and the second trial decides."
           if prm.get("repeat_stalled") else ""),
        f"- Latency: a {prm['latency_s']:g} s trial at 50% of the zero-loss rate, TSC stamps in "
        "every frame, log-linear histogram (p50/p99 within 6%).",
        "- Cycles/frame: each switch's own accounting over one more trial, flat out (PVP: at "
        "the zero-loss rate), median over rounds: e3's runtime profile (docs/operations.md), its workers' "
        "busy TSC cycles per frame received; OVS's `dpif-netdev/pmd-stats-show`, its PMD's "
        "processing cycles per packet; the link limit's `--record-core-cycles` (`show fwd "
        "stats all`), testpmd's busy cycles per packet received. All three count a burst's "
        "receive, work and transmit; at low rates bursts are small and the per-burst cost "
        "weighs more, hence flat out, where a switch the generator saturates works on full "
        "bursts (\"°\" marks one that kept up with the generator in that trial). A switch "
        "preempted in the middle of a burst counts the time it lost.",
        "- Learning: before measuring, the generator sends one frame FROM each of the N MACs "
        f"({prm['learn_rate'] / 1000:g}k frames/s) so learning switches know them: for e3 as "
        "fabric frames on the E-LAN label (so they are learned behind the remote leaf), for "
        "OVS as plain frames on port 2. MAC aging is off during the run.",
        "- Interleaving: the three switches are started and programmed, then measured "
        + ("in lockstep, a trial of each in turn: their searches side by side (limit, e3, "
           "OVS, limit, e3, OVS, ...), then a cycles trial each, then a latency trial each, "
           "so trials of different switches are seconds apart and the host's swings weigh "
           "on all of them alike" if prm.get("lockstep") else "in turn, a whole search each")
        + f"; {prm['rounds']} round(s)"
        + ("; the first to go rotates from point to point and round to round"
           if prm.get("rotate") else "; the link limit always first")
        + ". The switches waiting are SIGSTOPped. Figures are medians over rounds, and ratios "
        "the median of the rounds' ratios (each from the two switches' trials of one round).",
        "- Memory: `e3 memory` = resident memory of e3-vswitchd after programming and "
        "learning, private anonymous pages (RssAnon) + hugetlb pages (the DPDK heap; the memif "
        "buffers shared with the generator, its hugepages when it is zero-copy, are not "
        "counted), so it includes the "
        "mbuf pools and the preallocated direct-indexed tables; `B/entry` = its growth from "
        "size 1 to N, divided by N (the per-entry cost of what grows with N). OVS: the same "
        "for ovs-vswitchd.",
        "",
    ]
    for extra, r in runs[1:]:
        replaced = sorted({f"{p['scenario']} {size_name(p['size'])}" for p in r["points"]})
        xp = r["params"]
        md.insert(len(md) - 1,
                  f"- Supplementary run `{os.path.basename(os.path.dirname(extra))}` "
                  f"({xp['rounds']} rounds, {xp['trial_s']:g} s trials, loss allowed "
                  f"{xp['loss_frac'] * 100:g}%): its medians replace the points marked * "
                  f"({', '.join(replaced)}).")
    md += [
        "## Results",
        "",
    ]
    for name in [s for s in BY_NAME if s in groups] + [s for s in groups if s not in BY_NAME]:
        md += table(name, groups[name])
    md += scaling(res, points, plot_scaling(res, points, os.path.join(BENCH, "results-scaling.png")))
    md += zero_copy(points)
    md += stalls_table(trials)
    zc_groups = by_scenario([p for p in points if p["workers"] == 1 and p["link"] == "zc"])
    md += ["## Targets", ""] + targets(groups, zc_groups) + scaling_targets(res, points)
    for group in args.beside:
        md += beside(group)
    # Each profile from the latest run that has it.
    by_name = {os.path.basename(x): x for d in srcs
               for x in glob.glob(os.path.join(os.path.dirname(d), "profile-*.txt"))}
    profiles = [by_name[k] for k in sorted(by_name)]
    if profiles:
        md += ["## Where the cycles go", "",
               "`bench/profile.py`: each switch forwards flat out in turn while `perf record -e "
               "cpu-clock` samples its process (this VM exposes no hardware counters, so `perf "
               "stat -e instructions` is not supported; cpu-clock sampling still shows where "
               "the time goes). Its own cycles per frame over the same trial are split by the "
               "samples' objects: the memif PMD (its receive and transmit copies, with the "
               "mempool and mbuf code inlined in it), the switch's own code, the rest. Then e3-vswitchd's samples by symbol; "
               "static functions of the memif PMD have no symbols in Debian's build and show "
               "as addresses in `librte_net_memif.so`.", ""]
        for path in profiles:
            with open(path) as f:
                text = f.read().splitlines()
            md += ["```"] + text[:40] + ["```", ""]
    notes = os.path.join(BENCH, "profile-notes.md")
    if os.path.exists(notes):
        with open(notes) as f:
            md += [f.read().rstrip(), ""]
    md += [f"_Generated {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} from "
           + ", ".join(f"`{os.path.relpath(x, os.path.dirname(BENCH))}`"
                       for x in srcs + [r for g in args.beside for r in g]) + "._", ""]
    with open(os.path.join(BENCH, "RESULTS.md"), "w") as f:
        f.write("\n".join(md))
    plotted = plot(groups, os.path.join(BENCH, "results.png"))
    print(f"report: wrote bench/RESULTS.md{' and bench/results.png' if plotted else ''} from {src}")


if __name__ == "__main__":
    main()
