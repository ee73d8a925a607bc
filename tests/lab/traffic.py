"""Traffic between lab hosts with the real tools (ping, iperf3) as judges."""

from __future__ import annotations

import json
import re
import subprocess
import time
from dataclasses import dataclass

from .lab import Lab, LabError

PING_RE = re.compile(r"(\d+) packets transmitted, (\d+) received")


@dataclass
class PingResult:
    sent: int
    received: int
    output: str

    @property
    def lost(self) -> int:
        return self.sent - self.received

    @property
    def ok(self) -> bool:
        return self.sent > 0 and self.lost == 0


def parse_ping(output: str) -> PingResult:
    m = PING_RE.search(output)
    if not m:
        return PingResult(0, 0, output)
    return PingResult(int(m.group(1)), int(m.group(2)), output)


def ping(lab: Lab, host: str, dst: str, count: int = 3, interval: float = 0.2,
         wait_s: int = 2, extra=()) -> PingResult:
    """ping from a host; never raises on loss (the caller asserts)."""
    cmd = ["ping", "-n", "-q", "-c", str(count), "-i", str(interval), "-W", str(wait_s), *extra, dst]
    p = lab.host_exec(host, cmd, check=False, timeout=count * interval + wait_s + 30)
    return parse_ping(p.stdout + p.stderr)


def ping_until(lab: Lab, host: str, dst: str, attempts: int = 10) -> PingResult:
    """First contact (ARP, MAC learning): one ping at a time until one answers.
    A safety net, not an assertion: the caller then checks a clean run."""
    r = None
    for _ in range(attempts):
        r = ping(lab, host, dst, count=1, wait_s=1)
        if r.ok:
            break
    return r


@dataclass
class IperfResult:
    sent_bytes: int
    received_bytes: int
    bits_per_second: float
    retransmits: int
    raw: dict


def iperf3(lab: Lab, client: str, server: str, server_ip: str, seconds: int = 3,
           port: int = 5201) -> IperfResult:
    """One TCP iperf3 run from client to server (hosts), -t seconds."""
    srv = lab.host_popen(server, ["iperf3", "-s", "-1", "-B", server_ip, "-p", str(port)])
    try:
        deadline = time.monotonic() + 10
        while not lab.host_exec(server, ["ss", "-Hltn", f"sport = :{port}"], check=False).stdout.strip():
            if srv.poll() is not None or time.monotonic() > deadline:
                raise LabError(f"iperf3 server in {server} did not start: {srv.communicate()[1]}")
            time.sleep(0.05)
        p = lab.host_exec(client, ["iperf3", "-c", server_ip, "-p", str(port), "-t", str(seconds), "-J",
                                   "--connect-timeout", "3000"], check=False, timeout=seconds + 30)
        try:
            res = json.loads(p.stdout)
        except json.JSONDecodeError:
            raise LabError(f"iperf3 {client}->{server_ip}: no JSON result: {p.stdout[-500:]} {p.stderr[-500:]}")
        if "error" in res:
            raise LabError(f"iperf3 {client}->{server_ip}: {res['error']}")
        end = res["end"]
        return IperfResult(end["sum_sent"]["bytes"], end["sum_received"]["bytes"],
                           end["sum_received"]["bits_per_second"], end["sum_sent"].get("retransmits", 0), res)
    finally:
        if srv.poll() is None:
            srv.terminate()
        try:
            srv.wait(timeout=5)
        except subprocess.TimeoutExpired:
            srv.kill()
            srv.wait()


class Capture:
    """tcpdump on an interface of a namespace, written to a pcap file.

    with Capture(lab.ns("spine1"), "fab2", path) as cap: ...   # stopped and flushed on exit
    """

    def __init__(self, ns: str, iface: str, path, bpf: str = ""):
        self.ns, self.iface, self.path, self.bpf = ns, iface, str(path), bpf
        self.proc = None

    def start(self) -> "Capture":
        cmd = ["ip", "netns", "exec", self.ns, "tcpdump", "-n", "--immediate-mode", "-U", "-s", "256", "-i", self.iface,
               "-w", self.path] + ([self.bpf] if self.bpf else [])
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # tcpdump says "listening on" once the socket is bound: nothing sent after is missed.
        said = ""
        while "listening on" not in said:
            line = self.proc.stderr.readline()
            if not line:
                self.proc.wait()
                raise LabError(f"tcpdump on {self.ns}/{self.iface} failed: {said}")
            said += line
        return self

    def stop(self) -> str:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()  # tcpdump flushes the file on SIGTERM
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.path

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def tshark_fields(pcap, fields, display_filter: str = "") -> list:
    """Dissect a pcap with tshark: one dict per frame, field -> value string."""
    cmd = ["tshark", "-r", str(pcap), "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a",
           "-E", "aggregator=,"]
    if display_filter:
        cmd += ["-Y", display_filter]
    for f in fields:
        cmd += ["-e", f]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise LabError(f"tshark -r {pcap}: {p.stderr.strip()}")
    return [dict(zip(fields, line.split("\t"))) for line in p.stdout.splitlines() if line.strip()]
