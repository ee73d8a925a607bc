"""Unit tests of the RFC 2544 search (bench/benchlib/search.py) against model
switches whose zero-loss rate is known."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from benchlib.search import SearchParams, Trial, lockstep, ndr_search, ndr_steps, passed  # noqa: E402

DURATION = 1.0


def model(capacity, gen_limit=1e9, copies=1, overload=None, stalls=()):
    """A switch that forwards up to `capacity` pps and drops the rest; the
    generator cannot offer more than gen_limit. overload: what it forwards
    flat out (some switches forward less when overloaded). stalls: the
    trials (by their place among the calls) in which the host stops it for
    a while, losing 1% of what it is offered."""
    calls = []

    def trial(rate):
        calls.append(rate)
        offered_rate = min(rate, gen_limit) if rate else min(gen_limit, 2 * capacity)
        fwd = min(offered_rate, capacity)
        if not rate and overload is not None:
            fwd = overload
        stall = len(calls) - 1 in stalls
        if stall:
            fwd *= 0.99
        offered = int(offered_rate * DURATION)
        received = int(fwd * DURATION) * copies
        return Trial(rate=rate, offered=offered, expected=offered * copies, received=received,
                     achieved=offered_rate, rx_rate=fwd, raw={"stall": stall})
    trial.calls = calls
    return trial


@pytest.mark.parametrize("capacity", [1e5, 3.3e6, 9e6])
def test_converges_to_capacity_within_tolerance(capacity):
    p = SearchParams(tolerance=0.01, max_trials=20)
    r = ndr_search(model(capacity), p)
    assert r.ndr_pps <= capacity
    assert r.ndr_pps >= capacity * (1 - p.tolerance)


def test_flat_out_rate_that_holds_ends_the_search_at_once():
    trial = model(2e6)
    r = ndr_search(trial, SearchParams())
    assert r.ndr_pps == 2e6 and r.max_pps == 2e6
    assert trial.calls == [0, 2e6]


def test_a_switch_that_forwards_less_when_overloaded():
    # The flat-out probe undershoots the real zero-loss rate: the search
    # cannot find more than the probe, and says so through max_pps.
    r = ndr_search(model(2e6, overload=1e6), SearchParams(tolerance=0.01, max_trials=20))
    assert r.max_pps == 1e6
    assert r.ndr_pps == 1e6


def test_generator_limit_fails_a_trial():
    # The switch could take 5 Mpps but the generator only offers 1 Mpps:
    # a trial at 2 Mpps is not a zero-loss trial at 2 Mpps.
    t = model(5e6, gen_limit=1e6)(2e6)
    assert t.lost == 0
    assert not passed(t, SearchParams())


def test_replication_counts_every_copy():
    t = model(1e6, copies=8)(5e5)
    assert t.expected == 8 * t.offered and passed(t, SearchParams())
    short = Trial(rate=5e5, offered=100, expected=800, received=799, achieved=5e5, rx_rate=5e5)
    assert not passed(short, SearchParams())
    assert passed(short, SearchParams(loss_frac=0.01))


def test_trial_budget_is_respected():
    # Flat out it forwards more than it can without loss (drops, but many
    # frames still get through), so the search has to bisect.
    trial = model(1234567.0, overload=2e6)
    r = ndr_search(trial, SearchParams(tolerance=1e-9, max_trials=4))
    assert len(trial.calls) == 1 + 4
    assert 0 < r.ndr_pps <= 1234567.0


def test_nothing_passes():
    def dead(rate):
        return Trial(rate=rate, offered=1000, expected=1000, received=0, achieved=rate or 1e6,
                     rx_rate=0.0)
    r = ndr_search(dead, SearchParams())
    assert r.ndr_pps == 0 and r.trials == []


def test_answer_is_the_rate_really_offered():
    # A generator on a shared CPU offers 95% of what it is asked: the answer
    # must be what the switch was really given, not what was asked.
    def trial(rate):
        offered_rate = 0.95 * rate if rate else 2e6
        fwd = min(offered_rate, 1e6)
        return Trial(rate=rate, offered=int(offered_rate), expected=int(offered_rate),
                     received=int(fwd), achieved=offered_rate, rx_rate=fwd)
    r = ndr_search(trial, SearchParams(tolerance=0.001, max_trials=30))
    assert 0.95 * 0.95e6 <= r.ndr_pps <= 1e6
    best_asked = max(rate for rate, ok, _ in r.trials if ok)
    assert r.ndr_pps == 0.95 * best_asked


def test_a_bound_replaces_the_flat_out_probe():
    # PVP: no flat-out trial; the first trial is at the bound, and what
    # arrived in it is the "flat out" figure.
    trial = model(2e6)
    r = ndr_search(trial, SearchParams(tolerance=0.01, max_trials=20), bound=5e6)
    assert trial.calls[0] == 5e6 and 0 not in trial.calls
    assert r.max_pps == 2e6
    assert 2e6 * 0.99 <= r.ndr_pps <= 2e6


def test_a_bound_that_holds_doubles_until_a_trial_fails():
    # PVP on a machine faster than the bound: the search goes past it.
    trial = model(10e6)
    r = ndr_search(trial, SearchParams(tolerance=0.01, max_trials=20), bound=4e6)
    assert trial.calls[:3] == [4e6, 8e6, 16e6]
    assert r.max_pps == 4e6
    assert 10e6 * 0.99 <= r.ndr_pps <= 10e6


def test_the_generator_ends_a_bound_growing_past_it():
    # Doubling stops where the generator cannot offer the rate asked for.
    trial = model(50e6, gen_limit=6e6)
    r = ndr_search(trial, SearchParams(tolerance=0.01, max_trials=20), bound=4e6)
    assert trial.calls[:3] == [4e6, 8e6, 6e6]
    assert r.ndr_pps <= 6e6


def test_lockstep_alternates_trials_and_finds_what_each_search_finds_alone():
    p = SearchParams(tolerance=0.01, max_trials=6)
    switches = {"limit": model(9e6, overload=7e6), "e3": model(5e6, overload=6e6), "ovs": model(3e6)}
    alone = {k: ndr_search(model(c), p) for k, c in (("limit", 9e6), ("e3", 5e6), ("ovs", 3e6))}
    order = []

    def run(key, rate):
        order.append(key)
        return switches[key](rate)
    res = lockstep({k: ndr_steps(p) for k in switches}, run)
    # A trial of each in turn while all run. The limit's and ovs's searches
    # end after two trials (what they forward flat out holds); e3's, which
    # forwards more flat out than it can without loss, bisects on alone.
    assert order[:6] == ["limit", "e3", "ovs"] * 2
    assert len(order) > 6 and set(order[6:]) == {"e3"}
    for k in ("limit", "e3", "ovs"):
        assert [r for r, _, _ in res[k].trials] == switches[k].calls[1:]
    assert res["ovs"].ndr_pps == alone["ovs"].ndr_pps
    assert res["limit"].max_pps == 7e6 and res["e3"].max_pps == 6e6
    assert res["e3"].flat.rx_rate == 6e6


def test_lockstep_a_failing_switch_ends_alone():
    p = SearchParams(tolerance=0.01, max_trials=6)
    good = model(2e6, overload=1.5e6)

    def run(key, rate):
        if key == "bad" and rate:
            raise RuntimeError("switch died")
        return good(rate) if key == "good" else model(1e6)(rate)
    res = lockstep({"bad": ndr_steps(p), "good": ndr_steps(p)}, run, errors=(RuntimeError,))
    assert isinstance(res["bad"], RuntimeError)
    assert res["good"].ndr_pps == ndr_search(model(2e6, overload=1.5e6), p).ndr_pps


def by_stall(t):
    return t.raw["stall"]


def test_a_trial_lost_to_a_stall_is_run_once_more_and_the_repeat_decides():
    p = SearchParams(tolerance=0.01, max_trials=20)
    calm = ndr_search(model(2e6, overload=1.5e6), p)
    # The host stops the switch in its first trial at 1.5 Mpps, a rate it holds.
    trial = model(2e6, overload=1.5e6, stalls={1})
    r = ndr_search(trial, p, stalled=by_stall)
    assert trial.calls == [0, 1.5e6, 1.5e6]
    assert [ok for _, ok, _ in r.trials] == [False, True]
    assert r.ndr_pps == calm.ndr_pps == 1.5e6
    # Without the predicate the stall decides: the search goes down.
    assert ndr_search(model(2e6, overload=1.5e6, stalls={1}), p).ndr_pps < 1.5e6


def test_a_rate_is_run_again_once_only():
    # Stalls in both trials at the first rate: the second failure decides,
    # and the search bisects down; the next rate gets its own repeat.
    trial = model(2e6, overload=1.5e6, stalls={1, 2, 3})
    r = ndr_search(trial, SearchParams(tolerance=0.01, max_trials=20), stalled=by_stall)
    assert trial.calls[:5] == [0, 1.5e6, 1.5e6, 0.75e6, 0.75e6]
    assert r.ndr_pps >= 0.75e6


def test_a_loss_no_stall_explains_is_not_repeated():
    trial = model(1e6, overload=2e6)
    r = ndr_search(trial, SearchParams(tolerance=0.01, max_trials=20), stalled=by_stall)
    rates = [rate for rate, _, _ in r.trials]
    assert len(rates) == len(set(rates))
    assert r.ndr_pps == pytest.approx(1e6, rel=0.01)


def test_a_repeat_does_not_count_against_the_trial_budget():
    p = SearchParams(tolerance=0.001, max_trials=3)
    trial = model(1e6, overload=2e6, stalls={1})
    r = ndr_search(trial, p, stalled=by_stall)
    assert len(r.trials) == 4 and trial.calls[1] == trial.calls[2]


def test_a_bound_keeps_growing_after_a_repeat_passes():
    trial = model(50e6, stalls={0})
    r = ndr_search(trial, SearchParams(tolerance=0.01, max_trials=4), bound=4e6, stalled=by_stall)
    assert trial.calls[:4] == [4e6, 4e6, 8e6, 16e6]
    assert r.ndr_pps == 32e6
