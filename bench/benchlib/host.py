"""What the harness needs from the machine: hugepages, process memory, DPDK
telemetry, and a description of the machine for the report."""
import glob
import json
import os
import platform
import re
import signal
import socket
import subprocess
import sys

from . import cpus as cpulayout

HUGE_DIR = "/tmp/bn-huge"
# 2 MiB pages by name: /proc/sys/vm/nr_hugepages counts the default size,
# which a server tuned for DPDK often sets to 1 GiB.
NR_HUGEPAGES = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"


def exit_on_sigterm():
    """A SIGTERM (a timeout, a kill) ends the process through its finally
    blocks, which stop what it started and give the hugepages back: killed
    without them, a run left its reservation behind for the next. A second
    one (timeout(1) passes its own on) must not cut that cleanup short."""
    def leave(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        sys.exit(128 + signum)
    signal.signal(signal.SIGTERM, leave)


class Hugepages:
    """Reserve 2 MiB hugepages and mount a hugetlbfs of our own for the
    switches under test; undo both afterwards. If the kernel refuses, the
    switches run with --no-huge (and the report says so)."""

    def __init__(self, pages, node=None):
        self.pages = pages
        self.file = nr_hugepages_file(node)
        self.before = None
        self.mounted = False
        self.dir = None

    def setup(self):
        try:
            with open(self.file) as f:
                self.before = int(f.read())
            with open(self.file, "w") as f:
                f.write(str(self.before + self.pages))
            with open(self.file) as f:
                got = int(f.read()) - self.before
            if got < self.pages // 2:
                raise OSError(f"kernel gave {got} of {self.pages} hugepages")
            os.makedirs(HUGE_DIR, exist_ok=True)
            if not os.path.ismount(HUGE_DIR):
                subprocess.run(["mount", "-t", "hugetlbfs", "-o", "pagesize=2M", "nodev", HUGE_DIR],
                               check=True, capture_output=True)
                self.mounted = True
            self.dir = HUGE_DIR
        except (OSError, subprocess.CalledProcessError) as e:
            print(f"bench: no hugepages ({e}); switches run with --no-huge")
            self.restore()
        return self.dir

    def restore(self):
        if self.mounted:
            subprocess.run(["umount", HUGE_DIR], check=False, capture_output=True)
            self.mounted = False
            try:
                os.rmdir(HUGE_DIR)
            except OSError:
                pass
        if self.before is not None:
            try:
                with open(self.file, "w") as f:
                    f.write(str(self.before))
            except OSError:
                pass
            self.before = None
        self.dir = None


def nr_hugepages_file(node, root="/sys/devices/system/node"):
    """Where to reserve 2 MiB hugepages: on a machine of several NUMA nodes,
    the node the layout runs on (the kernel spreads a reservation over all
    nodes, and the processes would find half of it remote); else, or for a
    layout that spans nodes (None), the machine's count of 2 MiB pages."""
    f = os.path.join(root, f"node{node}", "hugepages", "hugepages-2048kB", "nr_hugepages")
    if node is not None and len(glob.glob(os.path.join(root, "node[0-9]*"))) > 1 and os.path.exists(f):
        return f
    return NR_HUGEPAGES


def eal_mem_args(huge_dir, mb):
    """EAL memory options: our hugetlbfs (grown on demand, capped at mb) or
    plain pages."""
    if huge_dir:
        # IOVA as VA: no physical-address lookups (slow, pointless for memif).
        return ["--huge-dir", huge_dir, "--socket-limit", str(mb), "--iova-mode", "va"]
    return ["--no-huge", "-m", str(mb)]


def eal_plugin_args():
    """EAL's -d for the DPDK drivers of a bundle (bench/bundle.sh): its run
    script names their folder in E3_DPDK_PLUGINS; else EAL scans the folder
    the distro's DPDK was built with."""
    d = os.environ.get("E3_DPDK_PLUGINS")
    return ["-d", d] if d else []


def proc_mem_kb(pid, foreign=None):
    """Resident memory of a process (kB): all of it (VmRSS), its private
    anonymous pages (RssAnon: malloc'd tables; not the memif buffers a
    copy-mode generator shares with it, which are shmem) and its hugetlb
    pages, less those of files whose path contains `foreign` (a zero-copy
    generator's own hugepages, which the switch maps as memif buffers)."""
    out = {"rss_kb": 0, "anon_kb": 0, "hugetlb_kb": 0}
    keys = {"VmRSS:": "rss_kb", "RssAnon:": "anon_kb", "HugetlbPages:": "hugetlb_kb"}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k = keys.get(line.split(":")[0] + ":")
                if k:
                    out[k] = int(line.split()[1])
        if foreign:
            out["hugetlb_kb"] -= foreign_hugetlb_kb(pid, foreign)
    except OSError:
        pass
    return out


def foreign_hugetlb_kb(pid, foreign):
    """Hugetlb kB of the process's mappings of files whose path contains
    `foreign` (/proc/PID/smaps)."""
    total, inside = 0, False
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split(None, 1)[0]
            if not head.endswith(":"):          # a mapping's first line
                inside = foreign in line
            elif inside and head in ("Shared_Hugetlb:", "Private_Hugetlb:"):
                total += int(line.split()[1])
    return total


def telemetry(file_prefix, cmd, timeout=2.0):
    """One DPDK telemetry query (e.g. "/eal/heap_info,0") to the process
    started with --file-prefix file_prefix; None if it does not answer."""
    path = f"/var/run/dpdk/{file_prefix}/dpdk_telemetry.v2"
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.settimeout(timeout)
        s.connect(path)
        s.recv(4096)  # greeting: version, pid, max_output_len
        s.send(cmd.encode())
        reply = json.loads(s.recv(1 << 20).decode())
        s.close()
        return reply.get(cmd.split(",")[0])
    except (OSError, ValueError):
        return None


def heap_alloc_bytes(file_prefix):
    """Bytes allocated from the DPDK heap (rte_malloc, mempools, tables)."""
    info = telemetry(file_prefix, "/eal/heap_info,0")
    if not info:
        return None
    return int(info.get("Alloc_size", 0))


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def cpu_ticks(cpus, path="/proc/stat"):
    """{cpu: (steal, total)} in clock ticks since boot, for those of cpus
    the kernel lists: steal is the time a hypervisor ran something else
    while this CPU had work (0 on bare metal)."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                name, *fields = line.split() or [""]
                if not (name.startswith("cpu") and name[3:].isdigit()) or int(name[3:]) not in cpus:
                    continue
                t = [int(x) for x in fields[:8]]    # user nice system idle iowait irq softirq steal
                out[int(name[3:])] = (t[7] if len(t) > 7 else 0, sum(t))
    except OSError:
        pass
    return out


def steal_pct(before, after):
    """The most any one CPU lost to steal between two cpu_ticks(), in % of
    its time then; None without two readings."""
    pcts = [100.0 * (after[c][0] - before[c][0]) / (after[c][1] - before[c][1])
            for c in after if c in before and after[c][1] > before[c][1]]
    return max(pcts) if pcts else None


def _cmd(args):
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def cpufreq(cpus, root="/sys/devices/system/cpu"):
    """The frequency governors of these CPUs and whether turbo is on, as the
    kernel shows them; a virtual machine usually shows neither."""
    def read(path):
        try:
            with open(os.path.join(root, path)) as f:
                return f.read().strip()
        except OSError:
            return None

    govs = sorted({read(f"cpu{c}/cpufreq/scaling_governor") for c in cpus} - {None})
    no_turbo, boost = read("intel_pstate/no_turbo"), read("cpufreq/boost")
    turbo = ("off" if no_turbo == "1" else "on") if no_turbo is not None else (
        {"0": "off", "1": "on"}.get(boost) if boost is not None else None)
    parts = ([f"governor {'/'.join(govs)}"] if govs else []) + ([f"turbo {turbo}"] if turbo else [])
    return ", ".join(parts) or "not shown"


def machine_info(ovs_binary):
    cpu = ""
    with open("/proc/cpuinfo") as f:
        m = re.search(r"model name\s*:\s*(.*)", f.read())
        cpu = m.group(1) if m else platform.processor()
    ovs = _cmd([ovs_binary, "--version"]).splitlines()
    try:
        with open("/sys/devices/system/cpu/online") as f:
            online = cpulayout.parse_list(f.read())
    except (OSError, ValueError):
        online = list(range(os.cpu_count() or 1))
    topo = cpulayout.topology(online)
    return {
        "cpu": cpu,
        "cpus": os.cpu_count(),
        "cores": len({c.core for c in topo}),
        "numa_nodes": len({c.node for c in topo}),
        "cpufreq": cpufreq(online),
        "kernel": platform.release(),
        "os": _cmd(["sh", "-c", ". /etc/os-release && echo $PRETTY_NAME"]),
        "dpdk": os.environ.get("E3_DPDK_VERSION") or _cmd(["pkg-config", "--modversion", "libdpdk"]),
        "ovs": ovs[0] if ovs else "not installed",
        "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
    }
