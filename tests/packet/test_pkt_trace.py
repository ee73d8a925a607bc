"""Packet trace (stages and verdict of the next N frames, pcap export judged
by tshark) and DPDK telemetry (/e3/ports read by dpdk-telemetry.py)."""
import base64
import json
import os
import subprocess
import tempfile

from pkt_frames import customer_frame, fabric_frame, token, tshark_json
from pkt_net import assert_delivered, wait_for
from pkt_switch import MAC, PEER_MAC

HOST_A = "02:00:0a:00:00:01"
HOST_B = "02:00:0a:00:00:02"


def test_trace_next_frames_on_a_port(sw, wire):
    sw.eline(1, "pk-trace")
    sw.rpc("trace_start", count=2, port="c1")
    toks = [token() for _ in range(4)]
    # Not on the traced port: must not use up the count.
    wire.exchange([("c2p", customer_frame(HOST_B, HOST_A, toks[0], vlan=1000))], match=toks[0])
    sw.wait_drops("c2", {"no_circuit": 1})
    frames = [customer_frame(HOST_B, HOST_A, toks[1], vlan=1000, pcp=5),   # forwarded
              customer_frame(HOST_B, HOST_A, toks[2], vlan=1001),          # dropped
              customer_frame(HOST_B, HOST_A, toks[3], vlan=1000)]          # beyond the count
    for i, f in enumerate(frames):
        got = wire.exchange([("c1p", f)], expect=1 if i != 1 else 0, match=toks[i + 1])
        assert_delivered(got, {"f1p": 1} if i != 1 else {})

    recs = wait_for(lambda: (r := sw.rpc("trace_get")) and len(r) >= 2 and r, what="2 trace records")
    assert len(recs) == 2, recs
    first, second = sorted(recs, key=lambda r: r["seq"])
    assert first["rx_port"] == second["rx_port"] == "c1"
    assert first["len"] == len(frames[0]) and second["len"] == len(frames[1])
    # The path names the stages the frame went through; the verdict says what happened.
    assert first["path"].strip() and len(first["path"].strip().splitlines()) >= 2, first["path"]
    assert "1000" in first["path"], "the path shows the VLAN looked up"
    assert first["verdict"].startswith("tx f1") and "label 100" in first["verdict"], \
        "the verdict names the port and the label written: " + first["verdict"]
    assert second["verdict"] == "drop no_circuit", second["verdict"]

    pcap = base64.b64decode(sw.rpc("trace_get", format="pcap")["pcap_base64"])
    fd, path = tempfile.mkstemp(prefix="pk-trace-", suffix=".pcap")
    try:
        os.write(fd, pcap)
        os.close(fd)
        pkts = tshark_json(path)
    finally:
        os.unlink(path)
    assert len(pkts) == 2
    for pkt, sent, tok in zip(pkts, frames[:2], toks[1:3]):
        assert pkt["frame"]["frame.len"] == str(len(sent))
        assert pkt["eth"]["eth.dst"] == HOST_B and pkt["eth"]["eth.src"] == HOST_A
        assert pkt["vlan"]["vlan.id"] == str(1000 if tok == toks[1] else 1001)
        assert tok.hex() in pkt["data"]["data.data"].replace(":", "")


def test_trace_filter_by_label(sw, wire):
    sw.eline(1, "pk-trace")
    sw.rpc("label_add", label=200, type="eline", service=1)
    sw.rpc("trace_start", count=1, label=200)
    tok1, tok2 = token(), token()
    inner1 = customer_frame(HOST_A, HOST_B, tok1)
    wire.exchange([("f1p", fabric_frame(MAC["f1"], PEER_MAC["f1"], 999, inner1))], match=tok1)
    sw.wait_drops("f1", {"label_unknown": 1})
    inner2 = customer_frame(HOST_A, HOST_B, tok2)
    got = wire.exchange([("f1p", fabric_frame(MAC["f1"], PEER_MAC["f1"], 200, inner2))],
                        expect=1, match=tok2)
    assert_delivered(got, {"c1p": 1})
    (rec,) = wait_for(lambda: sw.rpc("trace_get"), what="1 trace record")
    assert rec["rx_port"] == "f1" and rec["len"] == 22 + len(inner2)
    assert rec["verdict"].startswith("tx") and "c1" in rec["verdict"], rec["verdict"]


def telemetry(sw, *cmds):
    """Ask DPDK telemetry through the stock client; {command without its
    parameter: reply}, as DPDK keys the replies."""
    r = subprocess.run(["/usr/bin/dpdk-telemetry.py", "-f", sw.ns], input="\n".join(cmds) + "\n",
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    replies = {}
    for line in r.stdout.splitlines():
        if line.startswith("{"):
            replies.update(json.loads(line))
    assert {c.split(",")[0] for c in cmds} <= set(replies), f"missing replies in:\n{r.stdout}"
    return replies


def test_telemetry_ports(sw, wire):
    sw.eline(1, "pk-trace")
    tok = token()
    wire.exchange([("c1p", customer_frame(HOST_B, HOST_A, tok, vlan=1000))], expect=1, match=tok)
    wire.exchange([("c1p", customer_frame(HOST_B, HOST_A, tok, vlan=1001))], match=tok)
    sw.wait_drops("c1", {"no_circuit": 1})
    t = telemetry(sw, "/e3/ports", "/e3/port,c1", "/e3/drops")
    assert sorted(t["/e3/ports"]) == ["c1", "c2", "c3", "f1", "f2", "f3"]
    port = t["/e3/port"]
    rpc = sw.port("c1")
    assert (port["name"], port["kind"], port["link"]) == ("c1", "customer", "up")
    for key in ("rx_pkts", "rx_bytes", "tx_pkts", "tx_bytes"):
        assert port[key] == rpc["stats"][key], key
    assert (port["rx_pkts"], port["tx_pkts"]) == (2, 0)
    assert {k: v for k, v in port["drops"].items() if v} == {"no_circuit": 1}
    assert {k: v for k, v in t["/e3/drops"].items() if v} == {"no_circuit": 1}
