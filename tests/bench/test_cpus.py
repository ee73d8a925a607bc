"""The benchmark's view of the machine's CPUs: its layout (benchlib/cpus.py:
--cpus, or derived from the cores, NUMA nodes and isolated CPUs), the node
its hugepages are reserved on and the clock's governance (benchlib/host.py)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from benchlib import cpus, host  # noqa: E402
from benchlib.cpus import Cpu  # noqa: E402


def machine(nodes, cores, threads, interleaved=False):
    """A machine's topology as Linux numbers it: `nodes` x `cores` cores of
    `threads` threads. Intel's numbering gives the first thread of every
    core first (core k's sibling is k + all cores); interleaved numbering
    (many AMD and virtual machines) puts a core's threads side by side."""
    total = nodes * cores
    out = []
    for core in range(total):
        ids = ([core * threads + t for t in range(threads)] if interleaved
               else [core + t * total for t in range(threads)])
        out += [Cpu(i, ",".join(map(str, ids)), core // cores) for i in ids]
    return sorted(out, key=lambda c: c.id)


def busy(lay):
    """The CPUs that busy poll: generator lanes, workers, and the VM where it
    has a CPU of its own."""
    return lay.gen + lay.workers + ([lay.vm] if lay.vm_alone() else [])


CASES = [
    # name, topology, CPUs allowed (None: all), layout, words in the notes
    ("the developers' 2 CPUs", machine(1, 2, 1), None,
     "gen=0 main=1 workers=1 vm=0", ["2 CPUs: the scaling table stops at 1 worker"]),
    ("16 cores, no SMT", machine(1, 16, 1), None,
     "gen=10,11,12,13,14,15 main=0 workers=2,3,4,5,6,7,8,9 vm=1", []),
    ("16 cores with SMT, Intel's numbering", machine(1, 16, 2), None,
     "gen=10,11,12,13,14,15 main=0 workers=2,3,4,5,6,7,8,9 vm=1",
     ["SMT: one CPU of each of the 16 cores, their 16 sibling threads left idle"]),
    ("16 cores with SMT, siblings side by side", machine(1, 16, 2, interleaved=True), None,
     "gen=20,22,24,26,28,30 main=0 workers=4,6,8,10,12,14,16,18 vm=2", ["SMT"]),
    ("2 cores with SMT: the 2-CPU layout, not a VM on a worker's sibling", machine(1, 2, 2), None,
     "gen=0 main=1 workers=1 vm=0", ["SMT", "2 CPUs"]),
    ("two NUMA nodes of 8 cores: node 0 alone", machine(2, 8, 1), None,
     "gen=6,7 main=0 workers=2,3,4,5 vm=1",
     ["2 NUMA nodes: all on node 0 (8 cores)", "8 CPUs: the scaling table stops at 4 workers"]),
    ("two NUMA nodes, more of node 1 allowed", machine(2, 8, 1), [0, 1] + list(range(8, 16)),
     "gen=14,15 main=8 workers=10,11,12,13 vm=9", ["all on node 1 (8 cores)"]),
    ("64 cores: 8 workers, and 8 generator lanes, as many as workers", machine(1, 64, 1), None,
     "gen=10,11,12,13,14,15,16,17 main=0 workers=2,3,4,5,6,7,8,9 vm=1", []),
    ("two NUMA nodes of 2 cores: spanned", machine(2, 2, 1), None,
     "gen=3 main=0 workers=2 vm=1", ["none with 4 cores"]),
]


@pytest.mark.parametrize("name,topo,allowed,spec,words", CASES, ids=[c[0] for c in CASES])
def test_the_derived_layout_polls_on_one_cpu_of_each_core_of_one_node(name, topo, allowed, spec,
                                                                       words):
    given = allowed if allowed is not None else [c.id for c in topo]
    lay = cpus.derive(given, [c for c in topo if c.id in given], isolated_cpus=())
    assert lay.describe() == spec
    assert lay.derived_from == len(given)
    for w in words:
        assert any(w in n for n in lay.notes), (w, lay.notes)
    core = {c.id: c.core for c in topo}
    polled = [core[c] for c in busy(lay)]
    assert len(polled) == len(set(polled)), "two busy pollers share a core"
    assert len({c.node for c in topo if c.id in busy(lay) + [lay.main]}) == 1 or "spanned" in name


def test_topology_reads_sysfs_and_takes_a_cpu_without_files_as_a_core_of_its_own(tmp_path):
    for cpu, siblings, node in ((0, "0,2", 0), (2, "0,2", 0), (1, "1,3", 1)):
        topo = tmp_path / f"cpu{cpu}" / "topology"
        topo.mkdir(parents=True)
        (topo / "thread_siblings_list").write_text(siblings + "\n")
        (tmp_path / f"cpu{cpu}" / f"node{node}").mkdir()
    assert cpus.topology([0, 1, 2, 3], str(tmp_path)) == [
        Cpu(0, "0,2", 0), Cpu(1, "1,3", 1), Cpu(2, "0,2", 0), Cpu(3, "3", 0)]


@pytest.mark.parametrize("spec,error", [
    ("gen=0 main=1 workers=1", "missing vm"),
    ("gen=0 main=1 workers=1 vm=0 cpu=2", "'cpu=2' is not gen="),
    ("gen=0 main=1,2 workers=3 vm=0", "main is one CPU"),
    ("gen=0 main=1 workers=7 vm=0", "CPU 7 not available"),
    ("gen=0-1 main=1 workers=1 vm=0", "must not share a CPU"),
    ("gen=3-2 main=1 workers=1 vm=0", "bad CPU range"),
])
def test_a_bad_cpus_spec_is_refused_with_its_reason(spec, error):
    with pytest.raises(ValueError, match=error):
        cpus.parse(spec, [0, 1, 2, 3])


def test_a_given_layout_is_taken_as_written():
    lay = cpus.parse("gen=0,4-5 main=1 workers=2-3 vm=1", range(6))
    assert (lay.gen, lay.main, lay.workers, lay.vm) == ([0, 4, 5], 1, [2, 3], 1)
    assert lay.derived_from == 0 and lay.worker_counts() == [1, 2]


@pytest.mark.parametrize("node,nodes,want", [
    (1, 2, "node1"),            # the layout's node on a machine of several
    (0, 1, "machine"),          # one node: the machine's count, as ever
    (None, 2, "machine"),       # a layout that spans nodes
    (3, 2, "machine"),          # a node without the file
])
def test_hugepages_are_reserved_on_the_layouts_numa_node(tmp_path, node, nodes, want):
    for n in range(nodes):
        d = tmp_path / f"node{n}" / "hugepages" / "hugepages-2048kB"
        d.mkdir(parents=True)
        (d / "nr_hugepages").write_text("0\n")
    got = host.nr_hugepages_file(node, str(tmp_path))
    assert got == (host.NR_HUGEPAGES if want == "machine" else
                   str(tmp_path / want / "hugepages" / "hugepages-2048kB" / "nr_hugepages"))
    assert got.endswith("hugepages-2048kB/nr_hugepages"), "2 MiB pages, whatever the default size"


def test_a_layout_knows_the_numa_node_it_is_on():
    topo = machine(2, 8, 1)
    assert cpus.derive(list(range(16)), topo, ()).node == 0
    assert cpus.derive(list(range(4)), machine(2, 2, 1), ()).node is None


@pytest.mark.parametrize("iso,spec", [
    # A server tuned for DPDK: the main threads where the system runs, the
    # VM, workers and generator on the isolated cores, then the rest.
    (range(2, 16), "gen=11,12,13,14,15,1 main=0 workers=3,4,5,6,7,8,9,10 vm=2"),
    # Isolated siblings (isolcpus=2-15,18-31): one thread of each core.
    ([*range(2, 16), *range(18, 32)], "gen=11,12,13,14,15,1 main=0 workers=3,4,5,6,7,8,9,10 vm=2"),
    # All isolated, or none: the layout as without isolcpus.
    (range(32), "gen=10,11,12,13,14,15 main=0 workers=2,3,4,5,6,7,8,9 vm=1"),
    ((), "gen=10,11,12,13,14,15 main=0 workers=2,3,4,5,6,7,8,9 vm=1"),
])
def test_the_pollers_take_the_isolated_cpus_and_the_main_threads_a_shared_one(iso, spec):
    lay = cpus.derive(range(32), machine(1, 16, 2), iso)
    assert lay.describe() == spec
    assert any("isolcpus" in n for n in lay.notes) == (spec.endswith("vm=2"))


def test_isolated_cpus_outside_the_affinity_are_available_where_the_cpuset_allows(monkeypatch):
    """isolcpus keeps the isolated CPUs out of every process's default
    affinity; the kernel trims a wider request to the process's cpuset."""
    cpuset, state = {0, 1, 2, 3}, {"aff": {0, 1}}
    monkeypatch.setattr(cpus.os, "sched_getaffinity", lambda pid: set(state["aff"]))
    monkeypatch.setattr(cpus.os, "sched_setaffinity",
                        lambda pid, mask: state.update(aff=set(mask) & cpuset))
    monkeypatch.setattr(cpus, "isolated", lambda: {2, 3, 5})
    assert cpus.available() == [0, 1, 2, 3]
    assert state["aff"] == {0, 1}, "the harness's own affinity is restored"


@pytest.mark.parametrize("text,want", [("2-3,6\n", {2, 3, 6}), ("\n", set()), (None, set())])
def test_the_isolated_cpus_are_read_from_sysfs(tmp_path, text, want):
    f = tmp_path / "isolated"
    if text is not None:
        f.write_text(text)
    assert cpus.isolated(str(f)) == want


@pytest.mark.parametrize("files,want", [
    ({"cpu0/cpufreq/scaling_governor": "performance", "cpu1/cpufreq/scaling_governor": "performance",
      "intel_pstate/no_turbo": "1"}, "governor performance, turbo off"),
    ({"cpu0/cpufreq/scaling_governor": "powersave", "cpu1/cpufreq/scaling_governor": "performance",
      "cpufreq/boost": "1"}, "governor performance/powersave, turbo on"),
    ({}, "not shown"),      # a virtual machine's
])
def test_the_machine_says_how_its_clock_is_governed(tmp_path, files, want):
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text + "\n")
    assert host.cpufreq([0, 1], str(tmp_path)) == want


STAT = """cpu  900 0 90 900 0 0 0 30 0 0
cpu0 400 0 40 540 0 0 0 20 0 0
cpu1 500 0 50 360 0 0 0 90 0 0
intr 12345 0 0

softirq 1 2
"""


def test_steal_is_read_per_cpu_from_proc_stat(tmp_path):
    f = tmp_path / "stat"
    f.write_text(STAT)
    assert host.cpu_ticks({1, 7}, str(f)) == {1: (90, 1000)}
    assert host.cpu_ticks({0, 1}, str(tmp_path / "absent")) == {}


@pytest.mark.parametrize("before,after,want", [
    # cpu1 lost 50 of its 100 ticks, cpu0 none of its 100: the most-stolen one.
    ({0: (20, 1000), 1: (90, 1000)}, {0: (20, 1100), 1: (140, 1100)}, 50.0),
    ({0: (0, 1000)}, {0: (0, 1100)}, 0.0),            # bare metal
    ({0: (0, 1000)}, {0: (0, 1000)}, None),           # no time passed
    ({}, {0: (0, 1100)}, None),                       # the first reading
])
def test_steal_between_two_readings_is_the_most_stolen_cpus_share(before, after, want):
    assert host.steal_pct(before, after) == want
