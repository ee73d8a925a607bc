"""What the fabric benchmarks (failover, multihoming, migration, upgrade)
share: the demo fabric in a lab of their own under the real control plane,
sequence-numbered streams (tests/lab/udpstream.py) and their command line
and result files."""
import argparse
import json
import os
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
for p in (REPO / "tests", REPO / "datapath" / "client"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from lab import Lab  # noqa: E402
from lab.control import ControlPlane  # noqa: E402

TOPOLOGY = REPO / "examples" / "demo.yaml"
STREAM = REPO / "tests" / "lab" / "udpstream.py"


class FabricBench:
    """examples/demo.yaml in a lab named PREFIX, its controller on
    API_PORT and ETCD_PORT; state is a scratch directory."""
    PREFIX = ""
    API_PORT = ETCD_PORT = 0

    def __init__(self, args, state: Path):
        self.a, self.state, self.cp = args, state, None
        self.lab = Lab(TOPOLOGY, self.PREFIX)

    def start_fabric(self):
        """The datapaths and agents up, the controller started (empty)."""
        self.lab.up(start=True, ports=False)
        self.cp = ControlPlane(self.lab, self.state / "control", api_port=self.API_PORT,
                               etcd_port=self.ETCD_PORT, data_dir=self.state / "controller")
        self.cp.start()

    def down(self):
        if self.cp is not None:
            self.cp.stop_all()
        self.lab.down()


def start_streams(lab, flows: dict, rate: int, seconds: float, state: Path, tag: str):
    """flows: kind -> (sender, receiver, destination IP, port). Starts a
    receiver for each, then its sender (a broadcast to a .255 address);
    returns the senders, the receivers and each kind's report file."""
    rxs, outs = [], {}
    for kind, (_, host, _, port) in flows.items():
        outs[kind] = state / f"{tag}-{kind}.json"
        rxs.append(lab.host_popen(host, [
            "python3", str(STREAM), "recv", "--port", str(port), "--seconds", str(seconds + 4),
            "--out", str(outs[kind]), "--sent", str(int(rate * seconds)), "--rate", str(rate)]))
    for rx in rxs:
        wait_listening(rx)
    txs = [lab.host_popen(src, ["python3", str(STREAM), "send", "--dst", ip, "--port", str(port),
                                "--rate", str(rate), "--seconds", str(seconds)]
                          + (["--broadcast"] if ip.endswith(".255") else []))
           for src, _, ip, port in flows.values()]
    return txs, rxs, outs


def wait_listening(rx, timeout: float = 30) -> None:
    """Wait for a udpstream receiver to bind: a datagram sent before then
    would count as lost. Its stderr says when."""
    ready, _, _ = select.select([rx.stderr], [], [], timeout)
    line = rx.stderr.readline() if ready else ""
    if not line.startswith("listening"):
        raise RuntimeError(f"udpstream recv did not start: {line!r}")


def wait_all(procs, timeout: float) -> bool:
    """Wait for procs until timeout seconds from now; kill those still
    running then. True if all ended by themselves."""
    deadline = time.monotonic() + timeout
    ok = True
    for p in procs:
        try:
            p.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            ok = False
            p.kill()
            p.wait()
    return ok


def stats(xs):
    return {"min": min(xs), "median": statistics.median(xs), "max": max(xs)} if xs else None


def parser(doc: str, out: str, json_name: str, seconds: int = 0) -> argparse.ArgumentParser:
    """The options every fabric bench takes: --runs, --rate, --out (the
    report, under bench/), --json (the raw results, under bench/out/) and,
    where the bench's streams have a fixed length, --seconds."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rate", type=int, default=1000)
    if seconds:
        ap.add_argument("--seconds", type=int, default=seconds)
    ap.add_argument("--out", default=str(REPO / "bench" / out))
    ap.add_argument("--json", default=str(REPO / "bench" / "out" / json_name))
    return ap


def parse(ap: argparse.ArgumentParser, argv, lists: dict):
    """Parses argv; lists: option -> the names it may list (comma-separated),
    each turned into a list. Refuses what this machine cannot run."""
    a = ap.parse_args(argv)
    for opt, known in lists.items():
        names = [x for x in getattr(a, opt).split(",") if x]
        for x in names:
            if x not in known:
                ap.error(f"{opt} {x}: one of {', '.join(known)}")
        setattr(a, opt, names)
    if os.geteuid() != 0:
        ap.error("needs root (network namespaces)")
    return a


def save(results: dict, a, report: str, section: tuple = ()) -> None:
    """Writes the raw results to --json and report to --out: the whole
    document, or, given section's (begin, end) markers, in place of its last
    version there."""
    Path(a.json).parent.mkdir(parents=True, exist_ok=True)
    Path(a.json).write_text(json.dumps(results, indent=1))
    if section:
        write_section(a.out, *section, report)
    else:
        Path(a.out).write_text(report)


def write_section(path, begin: str, end: str, section: str) -> None:
    """Put section (which starts with begin and ends with end) in the
    document at path, in place of its last version, or at its end."""
    doc = Path(path).read_text() if Path(path).exists() else ""
    if begin in doc:
        doc = re.sub(re.escape(begin) + ".*?" + re.escape(end) + "\n", lambda _: section, doc, flags=re.S)
    else:
        doc = doc.rstrip() + "\n\n" + section
    Path(path).write_text(doc)


def run_all(bench, a, items, results: dict, describe, write) -> int:
    """Brings a bench (a FabricBench class) up, runs bench.run(item, i)
    a.runs times for each of items, keeps each result under results[item]
    but for a run whose stream stalled (the host starved it) and has
    write(results) keep them after every run, whatever comes next; takes
    the fabric down. describe(result) says a run in a line."""
    with tempfile.TemporaryDirectory(prefix=f"e3-{bench.PREFIX}-") as tmp:
        b = bench(a, Path(tmp))
        try:
            b.up()
            for item in items:
                for i in range(a.runs):
                    r = b.run(item, i)
                    if r.get("stalled"):
                        print(f"{item} run {i + 1}: a stream did not end in time (the host starved it); "
                              "not counted", flush=True)
                        continue
                    results.setdefault(item, []).append(r)
                    print(f"{item} run {i + 1}{describe(r)}", flush=True)
                    write(results)
        finally:
            b.down()
    write(results)
    print(f"wrote {a.out}")
    return 0
