"""Stalls: stretches of a trial with nothing coming back.

Every trial the generator reports its longest stretches with nothing back
and the longest between two turns of its own loop (`gap_us`). A switch, or
a generator, that the host stops for longer than the switch's input ring
holds at the offered rate loses what is offered meanwhile, however fast it
forwards otherwise. These functions say how much a trial's stretches alone
would lose, and so whether a failed trial measured the rate or the host.
"""
from benchlib.pktgen import ring_slots


def loss(rate, gap_us, workers=1, link="copy"):
    """The frames a trial's stretches with nothing back (gap_us, as the
    generator reports it: "rx", the longest first, in µs) would lose at
    `rate`: each of the workers has a ring of its own, fed 1/workers of the
    rate, and loses what comes beyond what that ring holds (a VM's rings
    are as long as a memif link's). None without
    gaps (a generator from before it measured them) or rate (flat out)."""
    if not gap_us or not rate:
        return None
    per_ring = rate / workers
    hold_us = ring_slots(link) / per_ring * 1e6
    return sum(max(0.0, g - hold_us) for g in gap_us["rx"]) * per_ring / 1e6


def explain(rate, lost, gap_us, workers=1, link="copy"):
    """Whether a trial that lost `lost` frames lost them to stalls: the
    stretches alone would lose at least half as many. A switch that cannot
    hold the rate loses steadily, not in a few stretches."""
    by_stalls = loss(rate, gap_us, workers, link)
    return bool(lost) and bool(by_stalls) and by_stalls * 2 >= lost
