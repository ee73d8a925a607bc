"""Constants and helpers of the control-plane tests (tests/control)."""
import re
import time
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from lab.control import wait_for
from lab.traffic import ping_until

REPO = Path(__file__).resolve().parents[2]
TOPOLOGY = REPO / "examples" / "demo.yaml"
PREFIX = "cp"
API_PORT, ETCD_PORT = 23810, 23811          # embedded etcd: 23811 client, 23812 peer
EXT_API_PORT, EXT_ETCD_BASE = 23815, 23820  # external cluster: 23820-23825
EXT_API_PORT2 = 23826                        # its second controller replica
METRICS_PORT = 23833                         # agents' /metrics: 23833-23837

# BFD timers of the test fabric: 20 ms x 10, a detection time of 200 ms, so
# that datapaths descheduled for tens of ms on a busy 2-CPU machine are not
# taken for failed ones; a path check crosses two of them (the defaults,
# 10 ms x 3, are what bench/failover.py measures). Tests assert what a
# failure does, never how fast.
FABRIC = {"bfd": {"tx_ms": 20, "rx_ms": 20, "multiplier": 10}}

# The services the tests create with e3ctl (the hosts of examples/demo.yaml).
RED = ("red", "eline", ["leaf1:cust1:1000", "leaf2:cust1:2000"])               # h1 <-> h2
GREEN = ("green", "elan", ["leaf1:cust1:3000", "leaf2:cust1:3000", "leaf3:cust1:3000"])  # h1, h2, h3
BLUE = ("blue", "eline", ["leaf1:cust2:untagged", "leaf2:cust2:40"])          # h4 <-> h5
RED_H2 = "10.10.0.2"
GREEN_IPS = {"h1": "10.30.0.1", "h2": "10.30.0.2", "h3": "10.30.0.3"}
BLUE_H5 = "10.40.0.2"


def ensure_service(cp, name, type_, circuits):
    """Create a service unless it exists, and wait until it is programmed."""
    if name not in {s["name"] for s in cp.services()}:
        cp.create_service(name, type_, circuits)
    return cp.wait_service(name)


def first_contact(lab, host, ip, timeout=30):
    """Ping until one answers: a safety net while ARP, MAC learning and
    agents settle, not an assertion (the caller checks a clean run)."""
    r = ping_until(lab, host, ip, attempts=timeout)
    assert r.ok, f"{host} -> {ip}: no answer within ~{timeout}s:\n{r.output}"
    return r


def label_pkts(lab, node, label):
    """Packets counted by a node's label entry (None: no such label)."""
    for l in lab.client(node).call("label_list"):
        if l["label"] == label:
            return l.get("pkts", 0)
    return None


def alloc(svc, node, kind, role):
    """The value the controller allocated to (node, kind, role) of a service."""
    for a in svc.get("allocations", []):
        if (a["node"], a["kind"], a["role"]) == (node, kind, role):
            return a["value"]
    raise KeyError(f"{svc['name']}: no {kind} {role!r} on {node!r}")


# Echoes are judged by sequence number: ping -c N -w D sends until N replies
# came back (or D passed), printing each reply, so a late reply on a loaded
# machine counts as answered and a lost one shows as a missing icmp_seq.
REPLY_RE = re.compile(r"bytes from .*icmp_seq=(\d+)")


def unanswered(output: str, count: int) -> list:
    """Sequence numbers 1..count that got no reply."""
    got = {int(m.group(1)) for m in REPLY_RE.finditer(output)}
    return sorted(set(range(1, count + 1)) - got)


def summary(output: str) -> str:
    return "\n".join(output.strip().splitlines()[-3:])


def clean_ping(lab, host, ip, count=10):
    """count echoes, every one answered."""
    p = lab.host_exec(host, ["ping", "-n", "-c", str(count), "-i", "0.05", "-w", "15", ip], check=False, timeout=60)
    missing = unanswered(p.stdout, count)
    assert not missing, f"{host} -> {ip}: echoes {missing} of 1..{count} unanswered\n{summary(p.stdout + p.stderr)}"


def start_flood(lab, host, ip, count):
    """A ping flood (100 per second) in the background."""
    return lab.host_popen(host, ["ping", "-n", "-i", "0.01", "-c", str(count), "-w", str(int(count * 0.01) + 30), ip])


def finish_flood(proc) -> str:
    """Wait for a flood from start_flood; its output (see unanswered)."""
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return out + err


def settled(lab, cp):
    """Every BFD session of every node up and usable (past its
    wait-to-restore time), every link up in the controller's view, red
    protected on its primary, every agent converged."""
    def sessions_usable():
        return all(b["state"] == "up" and b["usable"]
                   for n in lab.topo.nodes for b in lab.client(n.name).call("bfd_list"))
    wait_for("every BFD session usable", sessions_usable, timeout=60)
    wait_for("every link up for the controller", lambda: (lambda s: s["links_up"] == s["links"]
             and s["nodes_up"] == s["nodes"])(cp.status()), timeout=60)
    wait_for("red protected on its primary", lambda: (lambda s: s if s["route"]["active"] == "primary"
             and s.get("protection") == "protected" else None)(cp.service("red")), timeout=60)
    # Its primary and backup paths are checked, both ends up.
    checks = cp.service("red")["checks"]
    assert len(checks) == 2 and all(c["state"] == {c["path"][0]: "up", c["path"][-1]: "up"}
                                    for c in checks), checks
    # A repair the controller holds back (its throttle, at most
    # --repair-hold) would still change nodes under the next test: the
    # generation must stay the same for longer than a hold.
    def generation_still():
        gen = cp.status()["generation"]
        time.sleep(1.5)
        return cp.status()["generation"] == gen
    wait_for("no repair held back", generation_still, timeout=60)
    cp.wait_converged()
    first_contact(lab, "h1", RED_H2)


def scrape(url, token=None, context=None):
    """{(sample name, frozenset(labels)): value} of a /metrics page."""
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    with urllib.request.urlopen(req, timeout=30, context=context) as r:
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = r.read().decode()
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            key = (s.name, frozenset(s.labels.items()))
            assert key not in out, f"duplicate series {key}"
            out[key] = s.value
    return out
