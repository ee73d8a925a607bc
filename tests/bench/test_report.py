"""Unit tests of bench/report.py's ratios: round by round, and the targets
table's range and count of the rounds that met a goal."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import report  # noqa: E402
from benchlib import stalls  # noqa: E402


def switch(ndr, cycles, ndr_med=None, flat=None):
    """A switch's summary as bench.py writes it: per-round figures (None:
    that round not measured) and their medians."""
    rounds = [{"round": i, "ndr_pps": n, "max_pps": flat, "cycles_per_frame": c}
              for i, (n, c) in enumerate(zip(ndr, cycles)) if n is not None]
    return {"ndr_pps": ndr_med or sorted(x for x in ndr if x)[len(rounds) // 2],
            "max_pps": flat, "cycles_per_frame": sorted(cycles)[len(cycles) // 2],
            "by_round": rounds}


@pytest.mark.parametrize("a,b,want", [
    # Each round's own ratio, in round order.
    ({"by_round": [{"round": 0, "x": 2.0}, {"round": 1, "x": 3.0}]},
     {"by_round": [{"round": 0, "x": 4.0}, {"round": 1, "x": 3.0}]}, [0.5, 1.0]),
    # A round one switch missed (it failed) pairs with nothing.
    ({"by_round": [{"round": 0, "x": 2.0}, {"round": 2, "x": 3.0}]},
     {"by_round": [{"round": 0, "x": 4.0}, {"round": 1, "x": 5.0}, {"round": 2, "x": 6.0}]},
     [0.5, 0.5]),
    # A figure a round did not measure (None, 0) pairs with nothing.
    ({"by_round": [{"round": 0, "x": None}, {"round": 1, "x": 3.0}]},
     {"by_round": [{"round": 0, "x": 4.0}, {"round": 1, "x": 0}]}, []),
    # A run that kept only medians: no rounds.
    ({"x": 1.0}, {"x": 2.0}, []),
    (None, {"by_round": []}, []),
])
def test_round_ratios(a, b, want):
    assert report.round_ratios(a, b, "x") == want


def target(lim, e3, what):
    """The targets table's row `what` (its cells) for E-LAN unicast at 1 MAC."""
    rows = report.targets({"elan-unicast": [{"scenario": "elan-unicast", "size": 1,
                                             "switches": {"limit": lim, "e3": e3}}]})
    row = next(r for r in rows if r.startswith(f"| {what}"))
    return [c.strip() for c in row.strip("|").split("|")]


RATE = "E-LAN known unicast, e3/limit at 1 MAC"
COST = "E-LAN known unicast at 1 MAC, the limit's"


def test_targets_give_the_rounds_range_and_how_many_met_the_goal():
    lim = switch([10e6, 8e6, 6e6], [200, 210, 190], flat=10e6)
    e3 = switch([9.5e6, 6e6, 5.5e6], [250, 240, 260], flat=9.5e6)
    # Rounds: 0.95, 0.75, 0.92 -> two of three at >= 0.90, and their
    # median decides (the medians' ratio, 6 / 8 = 0.75, pairs the limit's
    # best round with e3's worst).
    _, measured, _, verdict = target(lim, e3, RATE)
    assert measured == "0.92 (rounds 0.75-0.95; flat out 0.95)"
    assert verdict == "met (2 of 3 rounds)"
    # By cost: 200/250, 210/240, 190/260 -> 0.80, 0.88, 0.73: none met.
    _, measured, _, verdict = target(lim, e3, COST)
    assert measured == "0.80 (rounds 0.73-0.88)"
    assert verdict == "NOT met (0 of 3 rounds)"


def test_a_flat_out_ratio_on_the_other_side_of_the_goal_makes_it_inconclusive():
    lim = switch([10e6, 10e6, 10e6], [200, 200, 200], flat=10e6)
    e3 = switch([9.5e6, 9.5e6, 9.5e6], [210, 210, 210], flat=8e6)
    _, measured, _, verdict = target(lim, e3, RATE)
    assert measured == "0.95 (rounds 0.95-0.95; flat out 0.80)"
    assert verdict == "inconclusive (zero-loss and flat-out disagree)"


def test_targets_from_a_run_without_rounds_are_the_medians_alone():
    lim = {"ndr_pps": 8e6, "max_pps": 10e6, "cycles_per_frame": 200}
    e3 = {"ndr_pps": 7.6e6, "max_pps": 9.5e6, "cycles_per_frame": 210}
    _, measured, _, verdict = target(lim, e3, RATE)
    assert (measured, verdict) == ("0.95 (flat out 0.95)", "met")
    _, measured, _, verdict = target(lim, e3, COST)
    assert (measured, verdict) == ("0.95", "met")


def test_runs_on_another_machine_get_a_section_of_their_own(monkeypatch):
    """--beside: the 16-CPU runs kept in bench/runs/ (a PVP run and a
    scaling run) report their machine, their tables, the scaling series of
    the run that scaled, the targets they measured and their NOTES.md."""
    monkeypatch.setattr(report, "plot_scaling", lambda *a: False)
    runs = os.path.join(report.BENCH, "runs", "16cpu-20261130")
    md = "\n".join(report.beside([os.path.join(runs, "pvp", "results.json"),
                                  os.path.join(runs, "scale", "results.json")]))
    assert md.startswith("## Another machine: Intel(R) Xeon(R) Processor, 16 CPUs")
    assert "### PVP, E-Line" in md and "### E-LAN known unicast" in md
    scaling = md[md.index("### Scaling over cores"):md.index("### Targets on this machine")]
    # The rates' table, then the cost's by part: each a row per worker count.
    assert [line.split("|")[1].strip() for line in scaling.splitlines()
            if line.startswith("| ") and line.split("|")[1].strip().isdigit()] == ["1", "4", "8"] * 2
    # 3.64x at zero loss, 3.03x flat out: the two disagree.
    assert ("| elan-unicast: e3 with 4 workers / 1 worker | 3.64 (flat out 3.03) | >= 3.6 | "
            "inconclusive (zero-loss and flat-out disagree) |") in md
    assert "not measured" not in md
    with open(os.path.join(runs, "NOTES.md")) as f:
        assert f.read().strip() in md


def test_each_machines_folder_of_kept_runs_is_a_group(tmp_path):
    for run in ("a/pvp", "a/scale", "b/x"):
        (tmp_path / run).mkdir(parents=True)
        (tmp_path / run / "results.json").write_text("{}")
    (tmp_path / "c").mkdir()                 # no runs: no section
    (tmp_path / "a" / "NOTES.md").write_text("")
    assert report.kept_runs(str(tmp_path)) == [
        [str(tmp_path / "a/pvp/results.json"), str(tmp_path / "a/scale/results.json")],
        [str(tmp_path / "b/x/results.json")]]


def scaling_point(workers, cycles, stages, core_hz=None):
    e3 = {"cycles_per_frame": cycles, "stage_cycles": stages}
    if core_hz:
        e3.update(core_hz=core_hz, tsc_hz=2e9)
    return {"workers": workers, "switches": {"e3": e3}}


def test_the_scaling_cost_splits_e3s_cycles_and_undoes_a_slower_clock():
    """Each part of e3's cost per worker count, and its cost in core cycles:
    a worker whose core ran at 3 GHz against a 2 GHz TSC spent 1.5 core
    cycles a TSC cycle."""
    one = scaling_point(1, 200, {"rx": 80, "customer_in": 20, "elan_in": 10, "tx": 90}, 3e9)
    four = scaling_point(4, 300, {"rx": 120, "customer_in": 30, "elan_in": 15, "tx": 135}, 2e9)
    rows = [r for r in report.scaling_cost([one, four], one) if r.startswith("| ") and r[2].isdigit()]
    assert rows == ["| 1 | 200 | 1.00 | 80 | 30 | 90 | 3.00 (2.00) | 300 |",
                    "| 4 | 300 | 1.50 | 120 | 45 | 135 | 2.00 (2.00) | 300 |"]


def test_the_scaling_cost_of_a_run_before_the_clock_probe_has_no_core_cycles():
    rows = report.scaling_cost([scaling_point(1, 241, {"rx": 107, "tx_pw": 17, "tx": 90})], None)
    assert rows[-2] == "| 1 | 241 | - | 107 | 17 | 90 | - | - |"
    assert report.scaling_cost([scaling_point(1, 241, None)], None) == []


def test_a_run_says_what_its_time_budget_left_out():
    r = {"budget_s": 840.0, "skipped": [
        {"scenario": "elan-unicast", "size": 1, "workers": 8, "link": "copy"},
        {"scenario": "label-swap", "size": 1000000, "workers": 1, "link": "copy"},
        {"scenario": "vm-eline", "size": 1, "workers": 1, "link": "zc"}]}
    assert report.skipped(r) == ("its time budget (840 s) left out elan-unicast 1 at 8 workers, "
                                 "label-swap 1M, vm-eline 1 on zero-copy links")
    assert report.skipped({"points": []}) == ""


@pytest.mark.parametrize("extra,shape", [
    ({"cores": 16, "numa_nodes": 2, "cpufreq": "governor performance, turbo off"},
     "(32 CPUs, 16 cores, 2 NUMA nodes); frequency scaling: governor performance, turbo off"),
    ({"cores": 32, "numa_nodes": 1}, "(32 CPUs, 32 cores, 1 NUMA node)"),
    ({}, "(32 CPUs)"),      # a run from before the machine's cores were recorded
])
def test_the_machine_line_gives_its_cores_and_numa_nodes(extra, shape):
    m = dict(cpu="Xeon", cpus=32, memory_gib=128, kernel="6.1", os="Debian", **extra)
    assert report.cpu_line(m) == f"- CPU: Xeon {shape}, 128 GiB; kernel 6.1; Debian"


def test_the_machine_says_what_a_hypervisor_took_from_its_cpus_when_recorded():
    trials = [{"kind": "trial", "steal_pct": x} for x in (0.0, 0.5, 12.0)] + [{"kind": "point"}]
    assert report.steal_text(trials).endswith("median 0.5%, max 12.0%")
    assert report.steal_text([{"kind": "trial", "load1": 1.0}]) == ""    # a run from before


def search_trial(switch, rate, lost, gaps_us, loop_gap_us=40, passed=False, workers=1,
                 link="copy"):
    return {"kind": "trial", "phase": "search", "switch": switch, "workers": workers,
            "link": link, "rate": rate, "passed": passed, "lost": lost,
            "result": {"gap_us": {"rx": gaps_us, "loop": loop_gap_us}}}


# 5 Mpps into a ring of 16384 slots: it holds 3.28 ms.
@pytest.mark.parametrize("trial,want", [
    # Nothing back for 60 ms: 56.7 ms beyond the ring, 284k frames at 5 Mpps.
    (search_trial("e3", 5e6, 280000, [60000, 900]), True),
    # The same stall, but ten times the loss: a rate it could not hold.
    (search_trial("e3", 5e6, 2800000, [60000, 900]), False),
    # Stretches the ring absorbs lose nothing by themselves.
    (search_trial("e3", 5e6, 1000, [3000, 2000]), False),
    # Two stalls of 10 ms add up: 2 x 6.7 ms x 5 Mpps = 67k frames.
    (search_trial("e3", 5e6, 60000, [10000, 10000, 900]), True),
    # Four workers, a ring each fed 1.25 Mpps: 13 ms; a 10 ms stretch loses nothing.
    (search_trial("e3", 5e6, 1000, [10000], workers=4), False),
    # Zero-copy links have rings of 4096 slots, 0.82 ms at 5 Mpps: a 2 ms
    # stretch loses 5.9k frames there, nothing on a copy link.
    (search_trial("e3", 5e6, 5000, [2000], link="zc"), True),
    # The generator itself stopped as long: a stall too, its own.
    (search_trial("e3", 5e6, 280000, [60000], loop_gap_us=59000), True),
])
def test_a_failed_trial_is_lost_to_stalls_when_they_would_lose_most_of_its_loss(trial, want):
    assert report.stalled(trial) == want
    assert report.own_stall(trial) == (want and trial["result"]["gap_us"]["loop"] > 30000)


def test_a_trial_from_before_the_generator_measured_gaps_is_no_stall():
    t = {"kind": "trial", "phase": "search", "switch": "e3", "rate": 5e6, "passed": False,
         "lost": 10, "result": {}}
    assert stalls.loss(t["rate"], t["result"].get("gap_us")) is None and not report.stalled(t)
    assert report.stalls_table([t]) == []


def test_the_stalls_table_counts_each_switchs_failed_searches_and_their_stalls():
    trials = [search_trial("e3", 5e6, 280000, [60000]), search_trial("e3", 5e6, 10, [900]),
              search_trial("e3", 5e6, 0, [90000], passed=True),     # passed: not counted
              search_trial("ovs", 4e6, 250000, [67000], loop_gap_us=66000),
              search_trial("limit", 6e6, 5000, [50]),
              search_trial("e3", 20e6, 100000, [30000], workers=4)]
    md = "\n".join(report.stalls_table(trials))
    assert "| limit | 1 | 1 | 0 | 0 | 0 | 0 | 0.1 |" in md
    assert "| e3 | 1 | 2 | 1 | 0 | 2 | 1 | 60.0 |" in md    # one search: each failure ran again
    assert "| ovs | 1 | 1 | 1 | 1 | 0 | 0 | 67.0 |" in md
    assert "| e3 | 4 | 1 | 1 | 0 | 0 | 0 | 30.0 |" in md
    assert md.index("| limit | 1 ") < md.index("| e3 | 1 ") < md.index("| ovs | 1 ") < md.index("| e3 | 4 ")
    named = "\n".join(report.stalls_table([dict(t, run=f"r{i % 2}") for i, t in enumerate(trials)]))
    assert "From runs `r0`, `r1`." in named


def test_the_stalls_table_counts_the_trials_run_again_and_how_they_ended():
    def at(switch, rate, lost, gaps, rnd=0, passed=False):
        return dict(search_trial(switch, rate, lost, gaps, passed=passed), scenario="elan-unicast",
                    size=1, round=rnd)
    trials = [
        # e3: a stall at 5 Mpps, run again, passed; a stall at 6 Mpps, run
        # again, failed; 6 Mpps again in the next round is a new search.
        at("e3", 5e6, 280000, [60000]), at("e3", 5e6, 0, [900], passed=True),
        at("e3", 6e6, 280000, [60000]), at("e3", 6e6, 280000, [60000]),
        at("e3", 6e6, 280000, [60000], rnd=1),
        # OVS: a failure at 4 Mpps, then 2 Mpps: not a repeat.
        at("ovs", 4e6, 900000, [900]), at("ovs", 2e6, 0, [900], passed=True),
    ]
    md = "\n".join(report.stalls_table(trials))
    assert "| e3 | 1 | 4 | 4 | 0 | 2 | 1 | 60.0 |" in md
    assert "| ovs | 1 | 1 | 0 | 0 | 0 | 0 | 0.9 |" in md


def test_bytes_per_entry_compare_sizes_of_one_run_when_a_later_run_replaced_size_1():
    def point(size, mem, run, replaced=None):
        return {"size": size, "run": run, "replaced": replaced,
                "switches": {"e3": {"memory": {"total_bytes": mem}}}}
    base_one = point(1, 100_000_000, 0)
    points = [point(1, 300_000_000, 1, replaced=base_one),     # another run's accounting
              point(1_000_000, 134_000_000, 0), point(200_000, 120_000_000, 2)]
    got = report.per_entry(points, report.mem_bytes("e3"))
    assert got == {1_000_000: pytest.approx(34.0, abs=0.01)}, "the base run's own size 1, not run 1's"
