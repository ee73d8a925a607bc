"""RFC 2544 binary search for the zero-loss (NDR) rate.

The search knows nothing about processes: it asks for a trial at a rate and
gets a Trial back. That keeps it a small pure function the unit tests drive
with a model switch (tests/bench/test_search.py); the benchmark runs the
searches of all the switches of a point in lockstep, a trial of each in turn.
"""
from dataclasses import dataclass, field


@dataclass
class Trial:
    rate: float            # offered rate asked for (pps)
    offered: int           # frames offered (sent + refused by a full input ring)
    expected: int          # frames that should arrive (offered x copies)
    received: int
    achieved: float        # offered rate the generator really reached (pps)
    rx_rate: float         # frames received per second of sending
    raw: dict = field(default_factory=dict)

    @property
    def lost(self):
        return max(0, self.expected - self.received)


@dataclass
class SearchParams:
    loss_frac: float = 0.0       # accepted loss, as a fraction of frames expected
    tolerance: float = 0.02      # stop when (hi - lo) <= tolerance * hi
    max_trials: int = 8          # binary search trials after the flat-out probe
    min_achieved: float = 0.90   # a trial the generator offered much less than asked fails


def passed(t: Trial, p: SearchParams) -> bool:
    """Zero loss (within loss_frac) at the rate that was asked for."""
    if t.expected == 0:
        return False
    if t.rate > 0 and t.achieved < p.min_achieved * t.rate:
        return False
    return t.lost <= p.loss_frac * t.expected


@dataclass
class SearchResult:
    ndr_pps: float               # offered rate of the best trial that passed (0 if none)
    max_pps: float               # forwarding rate measured flat out
    trials: list                 # [(rate, passed, Trial)] in the order run
    flat: Trial = None           # the flat-out probe (None with a bound)


def ndr_steps(p: SearchParams, max_rate=None, bound=None, stalled=None):
    """Find the highest rate with zero loss, as a coroutine: it yields the
    rate of each trial to run, is sent that trial's Trial, and returns the
    SearchResult (drive it with ndr_search, or several at once, a trial of
    each in turn, with lockstep).

    trial(0) runs flat out: its received rate bounds the answer from above
    (a switch cannot forward more without loss than it forwards at all).
    If max_rate is given it caps that bound (e.g. the link limit).
    With `bound` there is no flat-out trial: the search starts with a trial
    at that rate, and max_pps is what arrived in it (PVP: flat out, the
    generator would starve the VM sharing its CPU). While its trials pass,
    the rate doubles: the bound is where the search starts, not a ceiling
    on what a fast machine may show.
    Then: bisect between the best rate that passed and the lowest that
    failed until the interval is within tolerance of its top or max_trials
    trials have run. With `stalled` (Trial -> bool), a failed trial whose
    loss it puts down to the host stopping the switch or the generator for
    a while is run once more at the same rate, and that trial decides (as
    the IETF's multiple loss ratio search repeats trials on a noisy
    system); a repeat does not count against max_trials. The answer
    is the rate the generator really offered in the best passing trial
    (on a shared CPU it can fall a little short of the rate asked for).
    """
    log = []
    flat = None
    if bound:
        hi = bound
        max_pps = None
    else:
        flat = yield 0
        hi = flat.rx_rate
        if max_rate:
            hi = min(hi, max_rate)
        max_pps = hi
    lo = 0.0
    best = 0.0
    rate = hi
    growing = bool(bound)   # no trial has failed yet
    again = set()           # rates run once more after a stall
    n = 0
    while n < p.max_trials and rate > 0:
        t = yield rate
        if max_pps is None:
            max_pps = t.rx_rate
        ok = passed(t, p)
        log.append((rate, ok, t))
        if not ok and stalled is not None and rate not in again and stalled(t):
            again.add(rate)
            continue
        n += 1
        if ok:
            lo = rate
            best = max(best, min(t.achieved, rate))
        else:
            hi = rate
            growing = False
        if growing:
            rate = hi = 2 * rate
            continue
        if hi - lo <= p.tolerance * hi:
            break
        rate = (lo + hi) / 2
    return SearchResult(ndr_pps=best, max_pps=max_pps or 0.0, trials=log, flat=flat)


def ndr_search(trial, p: SearchParams, max_rate=None, bound=None, stalled=None) -> SearchResult:
    """ndr_steps with trial(rate) -> Trial running each of its trials."""
    return lockstep({None: ndr_steps(p, max_rate, bound, stalled)},
                    lambda _, rate: trial(rate))[None]


def lockstep(searches, run, errors=()):
    """Drive several searches ({key: ndr_steps(...)}) a trial of each in
    turn, in the dict's order, until all have ended: run(key, rate) runs one
    and returns its Trial. Trials of different switches are then seconds
    apart, not a whole search, so the host's slow swings weigh on all of
    them alike. A search whose trial raises one of `errors` ends with that
    exception as its result; the others go on. Returns {key: SearchResult
    or exception}."""
    pending, done = {}, {}
    for key, steps in searches.items():
        try:
            pending[key] = next(steps)
        except StopIteration as end:
            done[key] = end.value
    while pending:
        for key in list(pending):
            try:
                pending[key] = searches[key].send(run(key, pending[key]))
            except StopIteration as end:
                done[key] = end.value
                del pending[key]
            except errors as e:
                done[key] = e
                del pending[key]
    return {key: done[key] for key in searches}
