"""bench.py's modes: the table sizes each scenario runs at, and that quick
mode measures every point the performance targets name."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import bench  # noqa: E402

PER_SCENARIO = {"elan-unicast": [1, 20000, 1000000], "*": [1, 20000]}


@pytest.mark.parametrize("sizes, given, scenario, want", [
    (PER_SCENARIO, None, "elan-unicast", [1, 20000, 1000000]),
    (PER_SCENARIO, None, "label-swap", [1, 20000]),
    (PER_SCENARIO, None, "pvp-eline", [1]),
    (PER_SCENARIO, "1,1000000", "label-swap", [1, 1000000]),
    ([1, 2000], None, "elan-unicast", [1, 2000]),
    ([2000], None, "vm-eline", [1]),   # none of its sizes: its first
], ids=["own-list", "the-others", "fewer-sizes", "given", "one-list", "none-it-has"])
def test_sizes(sizes, given, scenario, want):
    assert bench.mode_sizes({"sizes": sizes}, bench.BY_NAME[scenario], given) == want


# The performance issue's targets: e3/OVS and cycles per crossing through a
# VM (pvp-eline, vm-eline), the cost and own stages at 1 MAC and at 1M MACs.
@pytest.mark.parametrize("scenario, size", [
    ("elan-unicast", 1), ("elan-unicast", 1000000), ("pvp-eline", 1), ("vm-eline", 1),
])
def test_quick_mode_measures_what_the_targets_name(scenario, size):
    quick = bench.MODES["quick"]
    assert scenario in quick["scenarios"]
    assert size in bench.mode_sizes(quick, bench.BY_NAME[scenario])
