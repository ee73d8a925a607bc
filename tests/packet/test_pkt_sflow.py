"""sFlow sampling in the datapath (sflow_set / sflow_read; the agent's
export is tests/control/test_cp_sflow.py): 1 in N of a port's frames, the
first 128 bytes as received, the ports and the service, and the sample pool
(every frame the port's samplers saw)."""
import base64

import pytest
from e3rpc import RpcError

from pkt_frames import customer_frame, token
from pkt_net import assert_delivered, wait_for

HOST_A = "02:00:0a:00:00:01"
HOST_B = "02:00:0a:00:00:02"


def read_all(sw, want):
    """Samples until want have come (the workers queue them as they go)."""
    got = []

    def more():
        r = sw.rpc("sflow_read")
        got.extend(r["samples"])
        return len(got) >= want and r
    last = wait_for(more, what=f"{want} samples")
    return got, last


def pool(sw, port="c1"):
    return next(p for p in sw.rpc("sflow_read", max=0)["ports"] if p["port"] == port)["pool"]


def test_every_frame_sampled_at_rate_1(sw, wire):
    sw.eline(7, "pk-sflow")
    base = pool(sw)
    sw.rpc("sflow_set", rate=1, port="c1")
    frames = []
    for _ in range(5):
        tok = token()
        f = customer_frame(HOST_B, HOST_A, tok, vlan=1000, size=300)
        frames.append(bytes(f))
        assert_delivered(wire.exchange([("c1p", f)], expect=1, match=tok), {"f1p": 1})
    samples, r = read_all(sw, 5)
    assert len(samples) == 5, samples
    for i, (s, sent) in enumerate(zip(samples, frames)):
        assert s["in_port"] == "c1" and s["out_port"] == "f1" and s["outputs"] == 1, s
        assert s["service"] == 7 and s["rate"] == 1 and s["drops"] == 0, s
        assert s["frame_length"] == len(sent)
        # The frame as it came in, tag included, cut at 128 bytes.
        assert base64.b64decode(s["header"]) == sent[:128]
        assert s["pool"] == base + i + 1, "the pool counts every frame seen"
    c1 = next(p for p in r["ports"] if p["port"] == "c1")
    assert c1["rate"] == 1 and c1["pool"] == base + 5 and c1["drops"] == 0
    assert all(p["rate"] == 0 for p in r["ports"] if p["port"] != "c1"), "only c1 samples"
    assert r["rate"] == 0, "the node's rate is untouched by a port's"


def test_one_in_n_and_drops_on_the_pool(sw, wire):
    sw.eline(7, "pk-sflow")
    base = pool(sw)
    sw.rpc("sflow_set", rate=10)   # the node's: every port
    n = 400
    toks = [token() for _ in range(n)]
    wire.exchange([("c1p", customer_frame(HOST_B, HOST_A, t, vlan=1000)) for t in toks],
                  expect=n, match=None, timeout=20)
    c1 = wait_for(lambda: (p := next(p for p in sw.rpc("sflow_read", max=0)["ports"] if p["port"] == "c1"))
                  and p["pool"] >= base + n and p, what=f"pool {n}")
    assert c1["rate"] == 10 and c1["pool"] == base + n
    samples = sw.rpc("sflow_read")["samples"]
    # 1 in 10 on average (random skips from 1 to 19): 40 expected; the
    # bounds are far out of the spread.
    assert 15 <= len(samples) <= 80, len(samples)
    pools = [s["pool"] for s in samples if s["in_port"] == "c1"]
    assert pools == sorted(pools) and base < pools[0] and pools[-1] <= base + n
    sw.rpc("sflow_set", rate=0)
    assert all(p["rate"] == 0 for p in sw.rpc("sflow_read")["ports"])


def test_bad_rate_refused(sw):
    with pytest.raises(RpcError, match="rate"):
        sw.rpc("sflow_set", rate=1 << 25)
