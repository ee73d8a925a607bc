"""A fabric neighbour floods a pseudowire's end with forged MPLS echo
requests (docs/security.md): 10,000 frames a second for 10 s into leaf1's
E-Line label, from the spine's side of the link. The datapath answers and
logs no more than its per-port punt rate and counts the rest
(pw_oam_rate_limited); leaf1's agent reports no event of a handle nobody
asked for and writes its status no faster than it may; and a real `e3ctl
service ping` works throughout."""
import json
import os
import socket
import struct
import threading
import time

from cplib import RED, ensure_service
from lab.control import etcdctl_tls_args
from packet.pkt_net import in_netns

RATE, SECONDS = 10_000, 10
FORGED = 0x0BADF00D
MAX_STATUS = 64 << 10           # docs/security.md: a status's size, whatever the wire brings
STATUS_MIN_INTERVAL = 0.25      # e3-agent's StatusMinInterval


def etcdctl(cp, tmp_path, *args):
    """etcdctl as the controller's root (its certificate from the data dir)."""
    import subprocess
    creds = json.loads((cp.data_dir / "etcd-root.json").read_text())
    p = subprocess.run(["etcdctl", "--endpoints", cp.etcd_endpoints, *etcdctl_tls_args(creds, tmp_path),
                        "-w", "json", *args], capture_output=True, text=True, timeout=30,
                       env={**os.environ, "ETCDCTL_API": "3"})
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def status_kv(cp, tmp_path):
    (kv,) = etcdctl(cp, tmp_path, "get", "/e3/v1/status/leaf1")["kvs"]
    import base64
    return kv["version"], base64.b64decode(kv["value"])


def echo_request(dst, src, label, seq):
    ns = time.time_ns()
    msg = (struct.pack("!HHBBBBIIIIII", 1, 0, 1, 4, 0, 0, FORGED, seq, ns // 10**9 + 2208988800, 0, 0, 0)
           + struct.pack("!HHHHI", 1, 8, 16, 4, label << 12))
    mac = lambda m: bytes.fromhex(m.replace(":", ""))  # noqa: E731
    return (mac(dst) + mac(src) + b"\x88\x47" + struct.pack("!I", label << 12 | 7 << 9 | 1 << 8 | 64)
            + b"\x10\x00\x00\x25" + msg)


def test_forged_echo_flood_costs_bounded_writes(services, lab, tmp_path):
    cp = services
    ensure_service(cp, *RED)
    cp.wait_converged()
    (entry,) = [l for l in lab.client("leaf1").call("label_list") if l["type"] == "eline" and l.get("in_ports")]
    port = entry["in_ports"][0]
    link = next(l for l in lab.topo.links_of("leaf1") if l.end("leaf1").port == port)
    far = link.other("leaf1")
    mac = {p["name"]: p["mac"] for p in lab.client("leaf1").call("port_list")}
    frame = echo_request(mac[port], "02:00:00:00:0b:ad", entry["label"], 1)
    drops = lambda: next(p for p in lab.client("leaf1").call("port_list")  # noqa: E731
                         if p["name"] == port)["stats"]["drops"].get("pw_oam_rate_limited", 0)
    limited0 = drops()
    # The writes counted are those between the two reads of the key: the
    # window is timed from before the first read to after the last.
    window0 = time.monotonic()
    version0, value0 = status_kv(cp, tmp_path)

    with in_netns(lab.ns(far.node)):
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        sock.bind((far.port, 0))
    sent, stop = [0], threading.Event()

    def flood():
        start = time.monotonic()
        while not stop.is_set():
            due = int((time.monotonic() - start) * RATE)
            while sent[0] < due:
                sock.send(frame)
                sent[0] += 1
            if time.monotonic() - start >= SECONDS:
                return
            time.sleep(0.001)

    t0 = time.monotonic()
    th = threading.Thread(target=flood, daemon=True)
    th.start()
    try:
        pings = []
        while th.is_alive():
            pings.append(json.loads(cp.e3ctl("--json", "service", "ping", "red", "--count", "1").stdout))
    finally:
        stop.set()
        th.join(30)
        sock.close()
    elapsed = time.monotonic() - t0
    time.sleep(1)   # the last status write

    assert sent[0] >= RATE * SECONDS * 0.5, f"the flood sent only {sent[0]} frames"
    assert pings and all(p["received"] == p["sent"] == 1 for p in pings), pings
    limited = drops() - limited0
    assert limited > sent[0] * 0.5, (limited, sent[0])
    version, value = status_kv(cp, tmp_path)
    window = time.monotonic() - window0
    st = json.loads(value)
    assert not [e for e in st.get("oam", []) if e["handle"] == FORGED], "a forged handle reached etcd"
    assert len(value) < MAX_STATUS
    writes = version - version0
    # A newly applied generation is written at once, spacing or not (a
    # stall of the host can make the controller move a path meanwhile).
    generations = st.get("applied_generation", 0) - json.loads(value0).get("applied_generation", 0)
    assert writes <= window / STATUS_MIN_INTERVAL + 2 + generations, (writes, window, elapsed, generations)
    # What the flood cost etcd: at most this many bytes of leaf1's status.
    assert writes * MAX_STATUS < 12 << 20
