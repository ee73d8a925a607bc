"""bench.py's run of a point when a switch breaks: a switch that dies is
named with how it died, a point that raises is recorded with the error and
the run goes on. Model switches and generator: no DPDK here."""
import argparse
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import bench  # noqa: E402
from benchlib import cpus  # noqa: E402
from benchlib.switches import SwitchError, Switch, program, wait_for  # noqa: E402


class Gen:
    def __init__(self, *args, **kwargs):
        pass


class Session:
    def __init__(self, *args, **kwargs):
        pass

    def wait_ready(self):
        pass

    def trial(self, **kwargs):
        pass

    def close(self):
        pass


class Healthy(Switch):
    name = "healthy"

    def start(self, scenario, n):
        self._spawn(["sleep", "60"])

    def memory(self):
        return {}

    def runtime_clear(self):
        pass


class DiesAfterStart(Healthy):
    """Its process is killed by SIGBUS once started, as by a hugepage it
    could not get; its control socket then refuses."""
    name = "dies"

    def start(self, scenario, n):
        self._spawn(["taskset", "-c", "0", "sh", "-c", "kill -BUS $$"]).wait()

    def learned(self):
        raise ConnectionRefusedError(111, "Connection refused")


class ExitsAtStart(Healthy):
    """A program that refuses to start and says why on its way out, as the
    loader did when a preloaded library needed a newer glibc."""
    name = "refuses"

    def start(self, scenario, n):
        p = self._spawn(["stdbuf", "-oL", "sh", "-c",
                         "echo 'EAL: starting'; echo \"version 'GLIBC_2.38' not found\" >&2; exit 1"])
        wait_for(lambda: False, 30, "it to start", p, self.log)


def measured(rnd, ndr, flat):
    """A switch's result of round rnd, as measure_round gives it."""
    return {"round": rnd, "ndr_pps": ndr, "max_pps": flat, "trials": 3, "pushback": None,
            "cycles": {"total": 100.0, "stages": {}}, "latency_ns": None}


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "Pktgen", Gen)
    monkeypatch.setattr(bench, "Session", Session)
    monkeypatch.setattr(bench, "WORKDIR", str(tmp_path / "work"))
    monkeypatch.setattr(bench, "SETTLE_S", 0)
    monkeypatch.setattr(bench.Bench, "gen_ceiling", lambda *a: None)
    monkeypatch.setitem(bench.SWITCHES, Healthy.name, Healthy)
    monkeypatch.setitem(bench.SWITCHES, DiesAfterStart.name, DiesAfterStart)
    monkeypatch.setitem(bench.SWITCHES, ExitsAtStart.name, ExitsAtStart)
    args = argparse.Namespace(loss=0.001, learn_rate=200000, switches="healthy,dies", mode="quick",
                              workers=None, scale_scenarios="", repeat_stalled=True)
    mode = dict(bench.MODES["quick"], rounds=1)
    return bench.Bench(args, mode, str(tmp_path), cpus.parse("gen=0 main=1 workers=1 vm=0", [0, 1]))


def test_a_switch_that_dies_after_its_start_is_named_with_how_it_died(run, monkeypatch):
    monkeypatch.setattr(bench.Bench, "measure_round", lambda self, order, *a: {
        name: measured(0, 1e6, 2e6) for name in order})
    point = run.run_point(bench.BY_NAME["elan-unicast"], 1, ["healthy", "dies"])
    dead = point["switches"]["dies"]
    assert "Connection refused" in dead["error"]
    assert "(sh killed by SIGBUS)" in dead["error"]
    assert point["switches"]["healthy"]["ndr_pps"] == 1e6


def test_a_switch_that_exits_at_start_is_reported_with_what_its_log_said(run):
    point = run.run_point(bench.BY_NAME["elan-unicast"], 1, ["refuses"])
    err = point["switches"]["refuses"]["error"]
    assert err.startswith("waiting for it to start: sh exited 1; its log ends: ")
    assert "version 'GLIBC_2.38' not found" in err
    assert "\n" not in err and err.count("exited 1") == 1


def test_a_point_that_raises_is_recorded_and_the_run_goes_on(run, monkeypatch):
    def broken(self, *args):
        raise KeyError("cycles")
    monkeypatch.setattr(bench.Bench, "measure_round", broken)
    point = run.run_point(bench.BY_NAME["elan-unicast"], 1, ["healthy"])
    assert point["switches"]["healthy"]["error"] == "KeyError: 'cycles'"
    assert run.results == [point]


def test_a_point_that_breaks_after_a_round_keeps_it_and_says_so(run, monkeypatch):
    run.m["rounds"] = 2

    def measure(self, order, sws, sessions, plans, ctx0, rnd):
        if rnd == 1:
            raise KeyError("cycles")
        return {name: measured(rnd, 1e6, 2e6) for name in order}
    monkeypatch.setattr(bench.Bench, "measure_round", measure)
    point = run.run_point(bench.BY_NAME["elan-unicast"], 1, ["healthy"])
    assert point["cut"] == "the point broke after 1 of 2 rounds"
    assert point["switches"]["healthy"]["ndr_all"] == [1e6]
    assert "error" not in point["switches"]["healthy"]


def test_every_point_is_saved_as_it_ends(run, monkeypatch):
    """A run cut short (a lent machine taken back) keeps what it measured."""
    monkeypatch.setattr(bench.Bench, "measure_round", lambda self, order, *a: {})
    run.run_point(bench.BY_NAME["elan-unicast"], 1, ["healthy"])
    with open(os.path.join(run.out, "results.json")) as f:
        saved = json.load(f)
    assert saved["complete"] is False
    assert [p["scenario"] for p in saved["points"]] == ["elan-unicast"]


def test_a_point_stopped_by_sigterm_keeps_its_finished_rounds(run, monkeypatch):
    """A lent machine's time runs out mid-point: the rounds done are saved,
    the point says it was cut, and the run stops."""
    run.m["rounds"] = 3

    def measure(self, order, sws, sessions, plans, ctx0, rnd):
        if rnd == 2:
            raise SystemExit(143)       # host.exit_on_sigterm's exit
        return {name: measured(rnd, (rnd + 1) * 1e6, 4e6) for name in order}
    monkeypatch.setattr(bench.Bench, "measure_round", measure)
    with pytest.raises(SystemExit):
        run.run_point(bench.BY_NAME["elan-unicast"], 1, ["healthy"])
    with open(os.path.join(run.out, "results.json")) as f:
        (point,) = json.load(f)["points"]
    assert point["cut"] == "the run was stopped after 2 of 3 rounds"
    assert point["switches"]["healthy"]["ndr_all"] == [1e6, 2e6]


def test_a_budget_ends_a_point_between_rounds_and_skips_the_points_after_it(run, monkeypatch):
    """--budget 250 s, rounds of 100 s: the first point's third round would
    end past it, so the point keeps two; the next point, which would take
    as long, is not started and is listed."""
    now = [0.0]
    run.clock = lambda: now[0]
    run.budget, run.deadline = 250, 250
    run.args.switches = "healthy"
    run.m["rounds"] = 3

    def measure(self, order, sws, sessions, plans, ctx0, rnd):
        now[0] += 100
        return {name: measured(rnd, 1e6, 2e6) for name in order}
    monkeypatch.setattr(bench.Bench, "measure_round", measure)
    point = run.point(bench.BY_NAME["elan-unicast"], 1)
    assert point["cut"] == "the run's time budget ended after 2 of 3 rounds"
    assert point["switches"]["healthy"]["ndr_all"] == [1e6, 1e6]
    assert run.point(bench.BY_NAME["label-swap"], 1, workers=2) is None
    with open(os.path.join(run.out, "results.json")) as f:
        saved = json.load(f)
    assert [p["scenario"] for p in saved["points"]] == ["elan-unicast"]
    assert saved["budget_s"] == 250
    assert saved["skipped"] == [{"scenario": "label-swap", "size": 1, "workers": 2, "link": "copy"}]


def test_ovs_refuses_workers_that_share_a_cpu():
    with pytest.raises(SwitchError, match="one PMD per CPU: 2 workers on 1 CPU"):
        bench.SWITCHES["ovs"]("/tmp", 1, None, workers=[1, 1])


def test_an_ovs_tool_that_fails_is_reported_with_its_own_words(tmp_path):
    """A point OVS could not be programmed for says why (an error of the
    million flows of label swap once said only "exit status 1")."""
    ovs = bench.SWITCHES["ovs"](str(tmp_path), 1, None)
    with pytest.raises(SwitchError, match="`ovs-ofctl add-flows nobr /nonexistent` exited 1: "
                       "ovs-ofctl: nobr is not a bridge or a socket"):
        ovs._ofctl("add-flows", "nobr", "/nonexistent")


@pytest.mark.parametrize("cmd,want", [
    (["/usr/bin/e3-vswitchd", "--lcores", "0@1"], "e3-vswitchd"),
    (["taskset", "-c", "1", "ovsdb-server", "conf.db"], "ovsdb-server"),
    (["chrt", "--idle", "0", "stdbuf", "-oL", "/usr/bin/dpdk-testpmd"], "dpdk-testpmd"),
])
def test_a_command_is_named_by_its_program_past_its_wrappers(cmd, want):
    assert program(cmd) == want


def test_a_sigterm_while_hugepages_are_reserved_gives_them_back(run, monkeypatch):
    """The reservation is undone even when the signal lands inside it."""
    calls = []

    class Pages:
        def __init__(self, pages, node):
            pass

        def setup(self):
            calls.append("setup")
            raise SystemExit(143)       # host.exit_on_sigterm's exit

        def restore(self):
            calls.append("restore")
    monkeypatch.setattr(bench.host, "Hugepages", Pages)
    run.args.hugepages = 3072
    with pytest.raises(SystemExit):
        run.run()
    assert calls == ["setup", "restore"]


@pytest.mark.parametrize("spec,first", [
    # The VM beside the generator: flat out would starve it; the search
    # starts at PVP's fixed rate.
    ("gen=0 main=1 workers=1 vm=0", 4e6),
    # The VM on a CPU of its own: flat out first, as at every other point.
    ("gen=0 main=1 workers=2 vm=3", 0),
])
def test_pvp_searches_start_flat_out_where_the_vm_has_a_cpu_of_its_own(run, monkeypatch, spec,
                                                                        first):
    run.layout = cpus.parse(spec, [0, 1, 2, 3])
    started = {}

    def lockstep(searches, trial, errors=()):
        started.update({name: next(steps) for name, steps in searches.items()})
        return {name: SwitchError("not run") for name in searches}
    monkeypatch.setattr(bench, "lockstep", lockstep)
    ctx0 = {"scenario": "pvp-eline", "size": 1, "workers": 1, "link": "copy"}
    run.measure_round(["healthy"], {}, {}, {}, ctx0, 0)
    assert started == {"healthy": first}


class Paused:
    """A switch measure_round drives through its search only."""
    def resume(self):
        pass

    def pause(self):
        pass

    def runtime_clear(self):
        raise SwitchError("no cycles trial here")


@pytest.mark.parametrize("repeat,want", [
    # 5 Mpps into a ring of 16384 slots holds 3.3 ms: nothing back for 60 ms
    # loses 284k frames, what the trial lost. The same rate runs once more.
    (True, [0, 5e6, 5e6]),
    # --no-repeat-stalled: the failure decides, the search goes down.
    (False, [0, 5e6, 2.5e6]),
])
def test_a_search_trial_lost_to_a_stall_is_run_once_more(run, monkeypatch, repeat, want):
    run.args.repeat_stalled = repeat
    run.m["max_trials"] = 2
    rates = []

    def trial_fn(sess, plan, ctx, duration, verify=False):
        def trial(rate):
            rates.append(rate)
            lost = 284000 if len(rates) == 2 else 0
            res = {"gap_us": {"rx": [60000] if lost else [], "loop": 40}}
            return bench.Trial(rate=rate, offered=5000000, expected=5000000,
                               received=5000000 - lost, achieved=rate or 5e6, rx_rate=5e6, raw=res)
        return trial
    monkeypatch.setattr(run, "trial_fn", trial_fn)
    monkeypatch.setattr(bench.Bench, "bound", lambda self, scn: None)
    ctx0 = {"scenario": "elan-unicast", "size": 1, "workers": 1, "link": "copy"}
    run.measure_round(["healthy"], {"healthy": Paused()}, {"healthy": None}, {"healthy": None},
                      ctx0, 0)
    assert rates[:3] == want
