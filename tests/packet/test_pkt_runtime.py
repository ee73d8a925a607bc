"""The runtime profile (runtime_get, e3-dpctl runtime): every stage a frame
went through counts its frames and cycles, every other stage stays at zero,
and a clear starts from zero again. The tests time every poll (sample 1):
with the default sampling a few frames may all miss the timed polls."""
import os
import re
import signal
import subprocess
import time

import pytest
from pkt_frames import customer_frame, fabric_frame, token
from pkt_net import assert_delivered, wait_for
from pkt_switch import MAC, PEER_MAC, e3rpc
from test_pkt_eline import HOST_A, HOST_B, LABEL_IN, eline

N = 20


def profile(sw):
    """{stage: {calls, frames, cycles}} and {port: {rx, tx}} summed over workers."""
    stages, ports = {}, {}
    for w in sw.rpc("runtime_get")["workers"]:
        for s in w["stages"]:
            acc = stages.setdefault(s["stage"], {"calls": 0, "frames": 0, "cycles": 0})
            for k in acc:
                acc[k] += s[k]
        for p in w["ports"]:
            acc = ports.setdefault(p["port"], {"rx": 0, "tx": 0})
            acc["rx"] += p["rx"]["frames"]
            acc["tx"] += p["tx"]["frames"]
    return stages, ports


def assert_only(stages, used):
    for name, c in stages.items():
        if name in used:
            assert c["frames"] == N and c["calls"] >= 1 and c["cycles"] > 0, (name, c)
        else:
            assert c == {"calls": 0, "frames": 0, "cycles": 0}, (name, c)


def test_eline_ingress_counts_customer_stages_only(sw, wire):
    eline(sw)
    tok = token()
    frames = [("c1p", customer_frame(HOST_B, HOST_A, tok, vlan=1000)) for _ in range(N)]
    sw.rpc("runtime_clear", sample=1)
    got = wire.exchange(frames, expect=N, match=tok)
    assert_delivered(got, {"f1p": N})
    stages, ports = profile(sw)
    assert_only(stages, {"customer_in", "eline_in", "tx_pw"})
    assert ports["c1"]["rx"] == N and ports["f1"]["tx"] == N
    assert ports["f1"]["rx"] == 0 and ports["c1"]["tx"] == 0


def test_eline_egress_counts_fabric_stages_only(sw, wire):
    eline(sw)
    tok = token()
    inner = customer_frame(HOST_A, HOST_B, tok)
    frames = [("f1p", fabric_frame(MAC["f1"], PEER_MAC["f1"], LABEL_IN, inner)) for _ in range(N)]
    sw.rpc("runtime_clear", sample=1)
    got = wire.exchange(frames, expect=N, match=tok)
    assert_delivered(got, {"c1p": N})
    stages, ports = profile(sw)
    assert_only(stages, {"fabric_in", "label_lookup", "eline_term", "tx_circuit"})
    assert ports["f1"]["rx"] == N and ports["c1"]["tx"] == N


def test_clear_and_dpctl(sw, wire):
    eline(sw)
    subprocess.run(["e3-dpctl", "--socket", sw.sock, "runtime", "clear", "--sample", "1"],
                   check=True, capture_output=True)
    tok = token()
    wire.exchange([("c1p", customer_frame(HOST_B, HOST_A, tok, vlan=1000))], expect=1, match=tok)
    wait_for(lambda: profile(sw)[0]["eline_in"]["frames"] >= 1, what="eline_in counted")
    out = subprocess.run(["e3-dpctl", "--socket", sw.sock, "runtime"], capture_output=True,
                         text=True, check=True).stdout
    lines = {l.split()[0]: l.split() for l in out.splitlines() if l.startswith("  ")}
    assert "eline_in" in lines and "customer_in" in lines and "swap" not in lines, out
    assert float(lines["eline_in"][-1]) > 0, out   # cycles/frame
    subprocess.run(["e3-dpctl", "--socket", sw.sock, "runtime", "clear"], check=True,
                   capture_output=True)
    stages, ports = profile(sw)
    assert all(c["frames"] == 0 for c in stages.values()), stages
    assert ports["c1"]["rx"] == 0


def test_each_worker_probes_its_cores_clock(sw):
    """The probe's core cycles over its TSC cycles is the core's clock
    against the TSC's: within 5x either way on any server, where a chain
    the compiler folded would run in a few TSC cycles, far above."""
    sw.rpc("runtime_clear")
    wait_for(lambda: all(w["clock"]["tsc_cycles"] > 0 for w in sw.rpc("runtime_get")["workers"]),
             what="a clock probe on every worker")
    r = sw.rpc("runtime_get")
    for w in r["workers"]:
        c = w["clock"]
        assert c["core_cycles"] % 4096 == 0, c
        assert 0.2 < c["core_cycles"] / c["tsc_cycles"] < 5, c
    out = subprocess.run(["e3-dpctl", "--socket", sw.sock, "runtime"], capture_output=True,
                         text=True, check=True).stdout
    assert re.search(r"TSC [0-9.]+ GHz, core [0-9.]+ GHz\)", out), out


def test_a_worker_held_off_its_cpu_counts_a_stall(sw):
    """Stopped for 0.3 s (SIGSTOP: the kernel takes its CPU, as a host
    would), every worker comes back from a turn of its poll loop, or a
    sleep, that lasted at least that: one stall over 10 ms each, its
    cycles at least the stop's. dpctl prints them."""
    sw.rpc("runtime_clear")
    os.kill(sw.proc.pid, signal.SIGSTOP)
    try:
        time.sleep(0.3)
    finally:
        os.kill(sw.proc.pid, signal.SIGCONT)
    r = sw.rpc("runtime_get")
    for w in r["workers"]:
        st = w["stalls"]
        assert st["over_10ms"] >= 1 and st["over_1ms"] >= st["over_10ms"], st
        assert st["over_100us"] >= st["over_1ms"], st
        assert st["cycles"] >= 0.25 * r["tsc_hz"], st
    out = subprocess.run(["e3-dpctl", "--socket", sw.sock, "runtime"], capture_output=True,
                         text=True, check=True).stdout
    assert re.search(r"stalls: \d+ turns of the poll loop over 0.1 ms, \d+ over 1 ms, "
                     r"\d+ over 10 ms, [0-9.]+ ms in all", out), out


@pytest.mark.parametrize("sample", [0, 3, 2048])
def test_bad_sample_refused(sw, sample):
    with pytest.raises(e3rpc.RpcError) as e:
        sw.rpc("runtime_clear", sample=sample)
    assert e.value.code == -32602 and "sample" in str(e.value)
