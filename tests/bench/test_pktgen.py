"""e3-pktgen against a real link: dpdk-testpmd io-forwarding between two memif
ports (the benchmark's link limit), so every frame sent on generator port 0
comes back on port 1 unchanged, and the other way round. One generator
session (links up once) serves every test. No timing assertions: low rates,
frame counts and sequence numbers only."""
import os
import re
import shutil
import subprocess
import sys
import threading

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from benchlib import host  # noqa: E402
from benchlib.pktgen import PKTGEN, Pktgen, PktgenError, Session  # noqa: E402
from benchlib.scenarios import BY_NAME, HOST, MAC_BASE  # noqa: E402
from benchlib.search import SearchParams, Trial, ndr_search, passed  # noqa: E402
from benchlib.switches import LinkLimit, strip_interleaved, wait_for  # noqa: E402

TAG = f"bn-t{os.getpid()}"
CPU = (os.cpu_count() or 1) - 1  # the link's CPU; the generator takes CPU 0


def print_logs(*paths):
    """A failed test's logs, into its report: the test removes its folder."""
    for path in paths:
        try:
            with open(path, errors="replace") as f:
                print(f"--- {path} (last 60 lines)", *f.readlines()[-60:], sep="")
        except OSError as e:
            print(f"--- {path}: {e}")


def stream(**kw):
    return ",".join(f"{k}={v}" for k, v in kw.items())


STREAMS = [
    stream(port=0, frame="eth", src=HOST, dst=MAC_BASE, vary="dst", n=1000),  # 0
    stream(port=0, frame="vlan", vlan=100, vary="vlan", n=50),                # 1
    stream(port=0, frame="mpls", label=16, vary="label", n=100000, cw=1),     # 2
    stream(port=1, frame="mpls", label=3001, cw=0),                           # 3: reverse
]
LEARN = [stream(port=1, frame="eth", src=MAC_BASE, vary="src", n=700)]


@pytest.fixture(scope="module")
def link():
    if not os.access(PKTGEN, os.X_OK):
        pytest.fail(f"{PKTGEN} is not built: run make datapath")
    if not shutil.which("dpdk-testpmd"):
        pytest.fail("dpdk-testpmd is not installed: run scripts/deps.sh")
    workdir = f"/tmp/{TAG}"
    os.makedirs(workdir, exist_ok=True)
    sw = LinkLimit(workdir, CPU, None, prefix=f"{TAG}-link")
    try:
        sw.start(BY_NAME["label-swap"], 1)  # two memif ports, p0 <-> p1
        yield sw
    finally:
        sw.stop()
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="module")
def gen(link):
    yield Pktgen(link.sockets(2), cpu=0, prefix=f"{TAG}-pg")
    shutil.rmtree(f"/var/run/dpdk/{TAG}-pg", ignore_errors=True)


@pytest.fixture(scope="module")
def session(gen, link):
    s = Session(gen, STREAMS, learn=LEARN, learn_rate=50000)
    try:
        link.forward()
        yield s
    finally:
        s.close()


@pytest.mark.parametrize("index", [0, 1, 2], ids=["eth-macs", "vlans", "mpls-labels"])
def test_every_frame_arrives_once(session, index):
    n = 3000
    r = session.trial(rate=20000, count=n, streams=[index])
    assert r["tx"] == n and r["tx_ring_full"] == 0
    assert r["rx"] == n, r
    assert r["ports"][1]["rx"] == n and r["ports"][0]["rx"] == 0
    assert r["seq"] == {"checked": True, "missing": 0, "dup": 0, "reordered": 0}
    assert r["latency_ns"]["samples"] == n
    assert 0 < r["latency_ns"]["p50"] <= r["latency_ns"]["p99"] <= r["latency_ns"]["max"]


def test_both_directions_with_imix(session):
    r = session.trial(rate=20000, count=2400, streams=[0, 3], imix=True)
    assert r["rx"] == 2400 and r["seq"]["missing"] == 0
    # What one port sent, the other received.
    assert r["ports"][0]["tx"] == r["ports"][1]["rx"] > 0
    assert r["ports"][1]["tx"] == r["ports"][0]["rx"] > 0
    # IMIX 7:4:1 of 64/570/1518-byte customer frames: far above 64 bytes a frame.
    assert r["rx_bps"] / 8 / max(r["rx_rate_pps"], 1) > 300


@pytest.mark.parametrize("verify", [True, False], ids=["stamps-read", "counted-by-length"])
def test_learning_and_warmup_frames_are_not_counted(session, verify):
    r = session.trial(rate=10000, count=500, streams=[0], imix=False, learn=True, verify=verify)
    assert r["rx"] == 500 and r["verified"] == verify
    assert r["ports"][0]["rx_learn"] == 700  # every learning frame came back, apart
    r = session.trial(rate=20000, duration=0.2, warmup=0.1, streams=[0, 3], verify=verify)
    assert r["rx"] == r["offered"] > 0 and r["ports"][1]["rx_learn"] > 0
    assert r["seq"]["checked"] is False


def test_counted_by_length_reads_no_stamp(session):
    r = session.trial(rate=20000, count=1000, streams=[1, 2], verify=False)
    assert r["rx"] == 1000 and r["ports"][1]["rx"] == 1000
    assert r["latency_ns"]["samples"] == 0 and r["seq"]["checked"] is False


def test_bad_trial_is_refused(session):
    with pytest.raises(PktgenError, match="refused"):
        session.trial(rate=1000, count=10, streams=[7])
    # ... and the session still works.
    assert session.trial(rate=10000, count=100, streams=[0])["rx"] == 100


def test_bad_stream_is_refused(link):
    # A process of its own (the session's keeps running): refused before
    # it ever connects.
    gen = Pktgen(link.sockets(2), cpu=0, prefix=f"{TAG}-bad")
    try:
        with pytest.raises(PktgenError, match="bad value 'ethx' for frame"):
            gen.run([stream(port=0, frame="ethx")], retries=0, count=1)
        with pytest.raises(PktgenError, match="vary=label needs frame=mpls"):
            gen.run([stream(port=0, frame="eth", vary="label")], retries=0, count=1)
        with pytest.raises(PktgenError, match="bad value '65' for size"):
            gen.run([stream(port=0, frame="eth", size=65)], retries=0, count=1)
    finally:
        shutil.rmtree(f"/var/run/dpdk/{TAG}-bad", ignore_errors=True)


def test_search_on_the_real_link(session):
    """The driver's search runs on the link end to end; its answer is the
    rate really offered in the best trial that passed."""
    p = SearchParams(tolerance=0.25, max_trials=3)

    def trial(rate):
        r = session.trial(rate=rate, duration=0.3, streams=[0])
        return Trial(rate=rate, offered=r["offered"], expected=r["offered"], received=r["rx"],
                     achieved=r["tx_rate_pps"], rx_rate=r["rx_rate_pps"], raw=r)
    res = ndr_search(trial, p)
    assert res.max_pps > 0
    assert 1 <= len(res.trials) <= 3
    assert res.ndr_pps == max((min(t.achieved, rate) for rate, good, t in res.trials if good),
                              default=0.0)
    for _, good, t in res.trials:
        assert good == passed(t, p)


def test_the_link_limit_reports_its_own_cycles(link, session):
    link.runtime_clear()
    assert link.cycles_per_frame() is None, "no frame since the clear"
    session.trial(rate=20000, count=2000, streams=[0])
    c = link.cycles_per_frame()
    assert c is not None and c["total"] > 0


def test_a_switch_that_stops_draining_pushes_back(link, session):
    """Flat out, the generator counts its sends and those the input ring
    took less of: with the link stopped, its ring fills and every send after
    that is pushed back. At a set rate nothing is counted (refusals are
    loss there)."""
    r = session.trial(rate=20000, count=200, streams=[0])
    assert r["tx_bursts"] == 0 and r["tx_pushback"] == 0 and r["rx"] == 200
    link.pause()
    try:
        r = session.trial(rate=0, duration=0.3, streams=[0])
    finally:
        link.resume()
    assert r["rx"] == 0
    assert 0 < r["tx"] <= 1 << 14, "no more than the ring holds"
    assert 0 < r["tx_pushback"] <= r["tx_bursts"]
    assert r["tx_bursts"] - r["tx_pushback"] <= (1 << 14) // 32 + 1, "pushed back once full"
    # The frames the ring held come back now: a trial of their own takes them.
    session.trial(rate=1000, count=10, streams=[0])


def test_a_switch_that_stops_forwarding_for_a_while_shows_as_a_gap_in_what_comes_back(link, session):
    """A trial's longest stretches with nothing received (the 8 longest),
    against the longest between two turns of the generator's own loop: the
    link stopped for 0.3 s mid-trial is a gap of at least that on the
    receiving side, while the generator went on sending (its loop gap is
    the shorter), and frames were lost. The search trials read no stamps
    (verify=0): the gaps are measured there too."""
    stop = threading.Timer(0.3, link.pause)
    stop.start()
    go = threading.Timer(0.6, link.resume)
    go.start()
    try:
        r = session.trial(rate=500000, duration=1.0, streams=[0], verify=False)
    finally:
        stop.cancel()
        go.cancel()
        link.resume()
    gaps = r["gap_us"]["rx"]
    assert gaps[0] >= 250000 and gaps == sorted(gaps, reverse=True) and len(gaps) <= 8, gaps
    assert r["gap_us"]["loop"] < gaps[0], r["gap_us"]
    assert r["tx_ring_full"] > 0, "the ring could not hold 0.3 s of frames"
    session.trial(rate=1000, count=10, streams=[0])     # what the ring held comes back


def test_the_generator_looped_to_itself():
    """The ceiling measurement: memif servers of its own before its clients
    (port i+2 is the client of server i); every frame of each client comes
    back on its server, also when it sleeps between polls (PVP)."""
    socks = [f"/tmp/{TAG}-loop{i}.sock" for i in range(2)]
    for idle in (0, 30):
        gen = Pktgen(socks, servers=socks, cpu=0, prefix=f"{TAG}-loop",
                     idle_sleep_us=idle)
        try:
            r = gen.run([stream(port=2, frame="eth", src=HOST, dst=MAC_BASE),
                         stream(port=3, frame="mpls", label=16)], rate=50000, count=4000)
        finally:
            for s in socks:
                if os.path.exists(s):
                    os.unlink(s)
        assert r["ports"][2]["tx"] + r["ports"][3]["tx"] == 4000
        assert r["ports"][0]["rx"] == r["ports"][2]["tx"] > 0
        assert r["ports"][1]["rx"] == r["ports"][3]["tx"] > 0
        assert r["seq"]["missing"] == 0


def test_bad_pool_and_sleep_values_are_refused(link):
    gen = Pktgen(link.sockets(2), cpu=0, prefix=f"{TAG}-bad")
    try:
        for flag, value in (("--mbufs", "10"), ("--idle-sleep-us", "x")):
            cmd = gen.command([stream(port=0, frame="eth")], count=1) + [flag, value]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
            assert p.returncode == 2 and f"bad value '{value}' for --{flag[2:]}" in p.stderr
    finally:
        shutil.rmtree(f"/var/run/dpdk/{TAG}-bad", ignore_errors=True)


def trial_on_own_link(name, scn, streams, count, workers=None, huge_dir=None, link="copy",
                      rate=20000, duration=10, **gen_kw):
    """One counted trial at a low rate on a link of its own (testpmd io,
    started for `scn`; the generator joins its vm0 where the scenario's
    generator is the VM): the generator's result and testpmd's forwarding
    statistics. testpmd is asked while the links are up, as the benchmark
    asks it: a memif server whose client leaves frees its rings under its
    forwarding cores (DPDK 22.11 takes no lock), so it may not outlive the
    generator. link="zc": the generator serves every link, as in bench.py."""
    workdir = f"/tmp/{TAG}-{name}"
    os.makedirs(workdir, exist_ok=True)
    sw = LinkLimit(workdir, CPU, huge_dir, prefix=f"{TAG}-{name}-link", workers=workers,
                   link=link)
    socks = sw.sockets(len(scn.ports))
    clients, servers = (socks, []) if link == "copy" else ([], socks)
    gen = Pktgen(clients, servers=servers, ring=sw.ring, rx_queues=sw.gen_rx_queues,
                 prefix=f"{TAG}-{name}-pg", log=os.path.join(workdir, "pktgen.log"),
                 huge_dir=huge_dir, vhost=[sw.vm_socket()] if scn.gen_is_vm else (),
                 vhost_server=sw.vm_client, **gen_kw)
    session = None
    try:
        if not servers:
            sw.start(scn, 1)
        session = Session(gen, streams, wait=False)
        if servers:
            wait_for(lambda: all(os.path.exists(s) for s in servers), 30,
                     "the generator's memif sockets", session.proc)
            sw.start(scn, 1)
        session.wait_ready()
        sw.forward()
        r = session.trial(rate=rate, duration=duration, count=count)
        fwd = sw._command("show fwd stats all", "Accumulated forward statistics")
    except BaseException:
        print_logs(sw.log, gen.log)
        raise
    finally:
        if session:
            session.close()
        sw.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return r, fwd


def test_lanes_feed_every_queue_of_a_multi_queue_link():
    """Two lanes (lcores) on two-queue memif links, as the scaling series
    runs them: lane k sends on queue k, the link (testpmd, a forwarding core
    per queue) sends each queue back on the same queue of the other port,
    and lane k receives there. Every sequence number arrives once, and both
    of the link's queues carried frames."""
    r, fwd = trial_on_own_link("mq", BY_NAME["label-swap"],
                               [stream(port=0, frame="eth", src=HOST, dst=MAC_BASE, vary="dst",
                                       n=100),
                                stream(port=1, frame="mpls", label=16)],
                               3001, workers=[CPU, CPU], cpus=[0, 0], queues=2)
    assert r["lanes"] == 2
    assert r["tx"] == 3001 and r["rx"] == 3001, r
    # (Frames of one lane come back on two ports, so they interleave.)
    assert r["seq"]["checked"] and r["seq"]["missing"] == 0 and r["seq"]["dup"] == 0
    # testpmd's per-stream lines: "RX Port= 0/Queue= 1 -> TX Port= 1/Queue= 1"
    queues = {int(q) for q in re.findall(r"RX Port=\s*\d+/Queue=\s*(\d+)", fwd)}
    assert queues == {0, 1}, fwd


def test_every_queue_is_offered_the_same_rate_with_more_queues_than_lanes():
    """Two lanes on three-queue links (as 8 workers fed from 6 CPUs):
    lane 0 sends on queues 0 and 2, lane 1 on queue 1. Each lane's share
    of the rate follows its queues, so each queue, and the worker behind
    it, is offered the same rate, not one lane's half."""
    _, fwd = trial_on_own_link("mq3", BY_NAME["elan-unicast"],
                               [stream(port=0, frame="eth", src=HOST, dst=MAC_BASE)], None,
                               workers=[CPU] * 3, cpus=[0, 0], queues=3, rate=30000, duration=2)
    # "Forward Stats for RX Port= 0/Queue= 2 -> ... RX-packets: 19998 ..."
    got = {int(q): int(n) for q, n in re.findall(
        r"RX Port=\s*0/Queue=\s*(\d+)[^\n]*\n\s*RX-packets:\s*(\d+)", fwd)}
    assert sorted(got) == [0, 1, 2], fwd
    assert max(got.values()) < 1.2 * min(got.values()), got


def test_the_generator_as_a_switchs_vm():
    """vm-eline: the generator's port 1 is a virtio_user port on the link's
    vhost-user port (the VM's side), its port 0 a memif port; testpmd io
    forwards between them. Every frame sent on one port arrives once on the
    other, both ways."""
    scn = BY_NAME["vm-eline"]
    r, _ = trial_on_own_link("vm", scn, scn.plan("limit", 1).streams, 2001)
    assert r["tx"] == 2001 and r["rx"] == 2001, r
    assert r["seq"]["checked"] and r["seq"]["missing"] == 0 and r["seq"]["dup"] == 0
    # The two streams take turns: each port sent a share and got the other's.
    sent = [p["tx"] for p in r["ports"]]
    got = [p["rx"] for p in r["ports"]]
    assert got == sent[::-1] and min(sent) > 2001 // 4, r["ports"]


def test_a_prompt_split_by_a_vhost_negotiation_is_seen():
    """testpmd writes its prompt a character at a time; a vhost-user peer
    negotiating meanwhile logs whole lines from another thread in the
    middle of it (as logged in a zero-copy VM link's start)."""
    log = ("Done\ntest"
           "VHOST_CONFIG: (/tmp/x/limit-vm.sock) read message VHOST_USER_SET_OWNER\n"
           "pmd> VHOST_CONFIG: (/tmp/x/limit-vm.sock) read message VHOST_USER_GET_FEATURES\n"
           "VHOST_CONFIG: (/tmp/x/limit-vm.sock) virtio is now ready for processing.\n"
           "\nPort 1: link state change event\n")
    assert "testpmd> " not in log
    assert strip_interleaved(log) == "Done\ntestpmd> "
    assert strip_interleaved("show fwd stats all\ntestpmd> ") == "show fwd stats all\ntestpmd> "


def test_the_generator_as_a_vm_serving_every_link():
    """vm-eline on zero-copy links: the generator is the memif server and
    the vhost-user server (a virtio_user probed after its memif ports are
    up, --late-vdev, since its probe waits for the switch), testpmd a
    zero-copy memif client and a vhost-user client. Every frame sent on
    one port arrives once on the other, both ways."""
    scn = BY_NAME["vm-eline"]
    hp = host.Hugepages(1024)
    huge = hp.setup()
    try:
        if not huge:
            pytest.fail("no hugepages: zero-copy memif needs them")
        r, _ = trial_on_own_link("vmzc", scn, scn.plan("limit", 1).streams, 2001,
                                 huge_dir=huge, link="zc")
    finally:
        hp.restore()
    assert r["tx"] == 2001 and r["rx"] == 2001, r
    assert r["seq"]["checked"] and r["seq"]["missing"] == 0 and r["seq"]["dup"] == 0
    sent = [p["tx"] for p in r["ports"]]
    got = [p["rx"] for p in r["ports"]]
    assert got == sent[::-1] and min(sent) > 2001 // 4, r["ports"]
