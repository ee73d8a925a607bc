"""Which CPUs the benchmark's processes get (bench.py --cpus).

  gen      the generator's lanes (e3-pktgen: one lcore each, its own memif
           queues)
  main     the switches' control threads: e3-vswitchd's main lcore, OVS's
           main thread and ovsdb-server, testpmd's main lcore
  workers  the switches' forwarding cores, in order: a point with W workers
           takes the first W (e3 workers, OVS PMDs, testpmd forwarding cores)
  vm       the PVP VM (testpmd macswap on virtio_user)

A spec names them: "gen=0,2-3 main=1 workers=4-7 vm=1". Without one, the
layout follows from the CPUs the process may run on and how they sit in the
machine (derive): one CPU of each physical core, on one NUMA node.
"""
import glob
import os
from dataclasses import dataclass, field
from typing import Optional

MAX_WORKERS = 8


@dataclass
class Layout:
    gen: list
    main: int
    workers: list
    vm: int
    derived_from: int = 0          # CPUs it was derived from (0: given)
    notes: list = field(default_factory=list)
    node: Optional[int] = None     # the NUMA node all of it is on, if one

    def cpus(self):
        return sorted({*self.gen, self.main, *self.workers, self.vm})

    def worker_counts(self):
        """The scaling points this layout can run: 1, 2, 4, 8 workers, as
        far as there are worker CPUs."""
        return [w for w in (1, 2, 4, 8) if w <= min(len(self.workers), MAX_WORKERS)]

    def vm_alone(self):
        """Whether the VM has a CPU the generator does not use."""
        return self.vm not in self.gen

    def describe(self):
        return (f"gen={fmt(self.gen)} main={self.main} workers={fmt(self.workers)} vm={self.vm}")

    def as_dict(self):
        return {"gen": self.gen, "main": self.main, "workers": self.workers, "vm": self.vm,
                "spec": self.describe(), "derived_from": self.derived_from, "notes": self.notes,
                "node": self.node}


def fmt(cpus):
    return ",".join(str(c) for c in cpus)


def parse_list(text):
    """"0,2-3" -> [0, 2, 3]"""
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        a, b = int(lo), int(hi or lo)
        if b < a:
            raise ValueError(f"bad CPU range {part!r}")
        out.extend(range(a, b + 1))
    if not out:
        raise ValueError("empty CPU list")
    return out


def parse(spec, allowed=None):
    """A layout from "gen=.. main=.. workers=.. vm=..". Every role must be
    named; every CPU must be one the process may use."""
    roles = {}
    for item in spec.replace(";", " ").split():
        key, sep, val = item.partition("=")
        if not sep or key not in ("gen", "main", "workers", "vm"):
            raise ValueError(f"--cpus: {item!r} is not gen=, main=, workers= or vm=")
        roles[key] = parse_list(val)
    missing = {"gen", "main", "workers", "vm"} - roles.keys()
    if missing:
        raise ValueError(f"--cpus: missing {', '.join(sorted(missing))}")
    for key in ("main", "vm"):
        if len(roles[key]) != 1:
            raise ValueError(f"--cpus: {key} is one CPU")
    allowed = set(allowed if allowed is not None else available())
    used = {c for v in roles.values() for c in v}
    if used - allowed:
        raise ValueError(f"--cpus: CPU {fmt(sorted(used - allowed))} not available (have {fmt(sorted(allowed))})")
    if set(roles["gen"]) & set(roles["workers"]):
        raise ValueError("--cpus: the generator and the workers must not share a CPU")
    lay = Layout(gen=roles["gen"], main=roles["main"][0], workers=roles["workers"],
                 vm=roles["vm"][0])
    lay.node = home_node(topology(lay.cpus()))
    return lay


def isolated(path="/sys/devices/system/cpu/isolated"):
    """The CPUs the kernel keeps its scheduler off (isolcpus=)."""
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return set()
    return set(parse_list(text)) if text else set()


def available():
    """The CPUs this process may use, with the isolated ones it may be moved
    to: on a server tuned for DPDK the pollers' CPUs are isolated, and so
    outside every process's default affinity. The kernel trims a requested
    affinity to the process's cpuset, which says which of them it may
    have."""
    try:
        mine = set(os.sched_getaffinity(0))
    except AttributeError:
        return list(range(os.cpu_count() or 1))
    extra = isolated() - mine
    if extra:
        try:
            os.sched_setaffinity(0, mine | extra)
            extra &= set(os.sched_getaffinity(0))
        except OSError:
            extra = set()
        finally:
            os.sched_setaffinity(0, mine)
    return sorted(mine | extra)


@dataclass(frozen=True)
class Cpu:
    id: int
    core: str       # its core's threads ("0,16"): CPUs with the same one are SMT siblings
    node: int


def topology(cpus, root="/sys/devices/system/cpu"):
    """Each CPU's physical core and NUMA node, from sysfs. A CPU whose files
    are missing (some containers hide them) counts as a core of its own on
    node 0."""
    out = []
    for c in cpus:
        base = os.path.join(root, f"cpu{c}")
        try:
            with open(f"{base}/topology/thread_siblings_list") as f:
                core = f.read().strip()
        except OSError:
            core = str(c)
        nodes = glob.glob(f"{base}/node[0-9]*")
        out.append(Cpu(c, core, int(os.path.basename(nodes[0])[4:]) if nodes else 0))
    return out


def home_node(topo):
    """The NUMA node of all these CPUs, if they share one."""
    nodes = {c.node for c in topo}
    return nodes.pop() if len(nodes) == 1 else None


def pollers(topo):
    """The CPUs busy pollers may take, and what was left out and why.

    Two pollers on one physical core (SMT siblings) each get about half of
    it, and a scaling series on siblings measures the core, not the
    workers; so one CPU of each core, the lowest. Memif rings and mbufs
    live in one node's memory, so with several NUMA nodes everything stays
    on the node with the most cores, when it has the four the multi-CPU
    layout needs."""
    notes = []
    nodes = sorted({c.node for c in topo})
    if len(nodes) > 1:
        cores = {n: len({c.core for c in topo if c.node == n}) for n in nodes}
        best = max(nodes, key=lambda n: (cores[n], -n))
        if cores[best] >= 4:
            topo = [c for c in topo if c.node == best]
            notes.append(f"{len(nodes)} NUMA nodes: all on node {best} ({cores[best]} cores), "
                         "where the rings and mbufs are")
        else:
            notes.append(f"{len(nodes)} NUMA nodes, none with 4 cores: the layout spans them")
    first = {}
    for c in sorted(topo, key=lambda c: c.id):
        first.setdefault(c.core, c.id)
    if len(first) < len(topo):
        notes.append(f"SMT: one CPU of each of the {len(first)} cores, their "
                     f"{len(topo) - len(first)} sibling threads left idle")
    return sorted(first.values()), notes


def derive(cpus=None, topo=None, isolated_cpus=None):
    """The default layout over `cpus` (those the process may use), one CPU
    of each physical core on one NUMA node (pollers), the isolated CPUs
    (isolcpus) for the pollers where the machine has them.

    Two CPUs (the developers' machine): the generator on the first, the
    switch's main and worker lcores on the second, the VM beside the
    generator at idle priority: the layout every earlier result used.
    Three: the switch's main thread moves off its worker's CPU. Four or
    more: the first CPU keeps the system and the switches' main threads,
    the second the VM, and the rest are split between workers and
    generator lanes (up to 8 of each), the workers taking four of every
    seven."""
    given = list(cpus if cpus is not None else available())
    topo = topo if topo is not None else topology(given)
    cpus, notes = pollers(topo)
    iso = set(isolated() if isolated_cpus is None else isolated_cpus)
    polled = [c for c in cpus if c in iso]
    if polled and len(polled) < len(cpus):
        # The main threads on a CPU the system shares, the pollers first on
        # the isolated ones.
        shared = [c for c in cpus if c not in iso]
        cpus = shared[:1] + polled + shared[1:]
        notes.append(f"isolcpus: the main threads on CPU {shared[0]}, the pollers on the "
                     f"{len(polled)} isolated CPUs first")
    n = len(cpus)
    if n == 1:
        lay = Layout(gen=cpus[:1], main=cpus[0], workers=cpus[:1], vm=cpus[0])
        lay.notes.append("one CPU: generator and switch share it; figures are not meaningful")
    elif n == 2:
        lay = Layout(gen=[cpus[0]], main=cpus[1], workers=[cpus[1]], vm=cpus[0])
    elif n == 3:
        lay = Layout(gen=[cpus[0]], main=cpus[2], workers=[cpus[1]], vm=cpus[2])
    else:
        rest = cpus[2:]
        nw = max(1, min(MAX_WORKERS, (len(rest) * 4 + 6) // 7, len(rest) - 1))
        # A lane per worker at most: the generator needs no more CPUs.
        lay = Layout(gen=rest[nw:nw + MAX_WORKERS], main=cpus[0], workers=rest[:nw], vm=cpus[1])
    lay.derived_from = len(given)
    lay.node = home_node([c for c in topo if c.id in lay.cpus()])
    lay.notes[:0] = notes
    counts = lay.worker_counts()
    if counts[-1] < MAX_WORKERS:
        lay.notes.append(f"{n} CPUs: the scaling table stops at {counts[-1]} worker"
                         f"{'s' if counts[-1] > 1 else ''} (the generator needs CPUs of its own)")
    return lay
