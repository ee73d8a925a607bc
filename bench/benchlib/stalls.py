"""Stalls: stretches of a trial with nothing coming back.

Every trial the generator reports its longest stretches with nothing back
and the longest between two turns of its own loop (`gap_us`). A switch, or
a generator, that the host stops for longer than the switch's input ring
holds at the offered rate loses what is offered meanwhile, however fast it
forwards otherwise. These functions say how much a trial's stretches alone
would lose, and so whether a failed trial measured the rate or the host.
"""
from benchlib.pktgen import ring_slots


def loss(rate, gaps_us, workers=1, link="copy"):
    """The frames the stretches (µs, longest first) would lose at `rate`:
    each of the workers has a ring of its own, fed 1/workers of the rate,
    and loses what comes beyond what that ring holds. None without gaps
    (a generator from before it measured them) or rate (flat out)."""
    if gaps_us is None or not rate:
        return None
    per_ring = rate / workers
    hold_us = ring_slots(link) / per_ring * 1e6
    return sum(max(0.0, g - hold_us) for g in gaps_us) * per_ring / 1e6


def explain(rate, lost, gaps_us, workers=1, link="copy"):
    """Whether a trial that lost `lost` frames lost them to stalls: the
    stretches alone would lose at least half as many. A switch that cannot
    hold the rate loses steadily, not in a few stretches."""
    by_stalls = loss(rate, gaps_us, workers, link)
    return bool(lost) and bool(by_stalls) and by_stalls * 2 >= lost
