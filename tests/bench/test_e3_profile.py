"""e3's runtime profile as the harness reads it (runtime_get,
docs/control-api.md) and reports it: the workers' cost per frame, each
stage's, and each port's receive and transmit apart, with their bursts."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
import report  # noqa: E402
from benchlib.switches import e3_cycles  # noqa: E402


def ctr(calls, frames, cycles):
    return {"calls": calls, "frames": frames, "cycles": cycles}


def worker(busy, stages, ports):
    return {"busy_cycles": busy, "clock": {"core_cycles": 3000, "tsc_cycles": 2000},
            "stages": [dict(ctr(*c), stage=s) for s, c in stages.items()],
            "ports": [{"port": p, "rx": ctr(*rx), "tx": ctr(*tx)} for p, (rx, tx) in ports.items()]}


def test_each_port_is_profiled_apart_with_its_bursts():
    """PVP's one worker: 3200 frames in from p0 in 100 bursts and out to
    vm0 in 400, and 3200 back from vm0 in 800 bursts; the totals are the
    two ports' together."""
    rt = {"tsc_hz": 2e9, "workers": [worker(
        3_200_000,
        {"fabric_in": (100, 3200, 64000), "customer_in": (800, 3200, 32000), "swap": (0, 0, 0)},
        {"p0": ((100, 3200, 320000), (800, 3200, 480000)),
         "vm0": ((800, 3200, 640000), (400, 3200, 960000))})]}
    c = e3_cycles(rt)
    assert c["total"] == 500                  # busy cycles over the 6400 frames received
    assert c["stages"] == {"fabric_in": 20, "customer_in": 10, "rx": 150, "tx": 225}
    assert c["ports"] == {"p0": {"rx": 100, "rx_burst": 32, "tx": 150, "tx_burst": 4},
                          "vm0": {"rx": 200, "rx_burst": 4, "tx": 300, "tx_burst": 8}}
    assert c["core_hz"] == 3e9


def test_a_port_that_moved_nothing_one_way_has_no_figure_that_way():
    rt = {"tsc_hz": 2e9, "workers": [worker(1000, {}, {"p0": ((1, 10, 500), (0, 0, 0)),
                                                        "p1": ((0, 0, 0), (1, 10, 300))})]}
    assert e3_cycles(rt)["ports"] == {"p0": {"rx": 50, "rx_burst": 10}, "p1": {"tx": 30, "tx_burst": 10}}


def test_no_frame_no_figure():
    assert e3_cycles({"tsc_hz": 2e9, "workers": [worker(0, {}, {"p0": ((0, 0, 0), (0, 0, 0))})]}) is None


@pytest.mark.parametrize("ports, rows", [
    ({"p0": {"rx": 100, "rx_burst": 32, "tx": 150, "tx_burst": 4},
      "vm0": {"rx": 200, "rx_burst": 4.25, "tx": 300, "tx_burst": 8}},
     ["| 1 | p0 | 100 | 32.0 | 150 | 4.0 |", "| 1 | vm0 | 200 | 4.2 | 300 | 8.0 |"]),
    ({"p0": {"rx": 50, "rx_burst": 10}}, ["| 1 | p0 | 50 | 10.0 | - | - |"]),
], ids=["both-ways", "one-way"])
def test_the_report_gives_each_port_a_row(ports, rows):
    lines = report.port_table([{"size": 1, "switches": {"e3": {"port_cycles": ports}}}])
    assert [r for r in lines if r.startswith("| 1 ")] == rows


def test_a_run_from_before_the_ports_were_profiled_has_no_port_table():
    assert report.port_table([{"size": 1, "switches": {"e3": {"stage_cycles": {"rx": 1}}}}]) == []
