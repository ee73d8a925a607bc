"""OVS as the benchmark's other provider edge (bench/benchlib/scenarios.py,
_pw_flows, _elan_term_flows): at E-Line it must carry the customer's frame
whole in Ethernet + label and take the far end's out again, and at E-LAN
termination pop the far end's into its bridge, as e3 does without the
control word, or the comparison is not of the same job. OVS's own datapath
flows say what it did to each frame; the generator says every frame
arrived once, and OVS's port counters give the frames' length on each
side."""
import os
import re
import shutil
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from test_pktgen import CPU, TAG, print_logs  # noqa: E402

from benchlib import host  # noqa: E402
from benchlib.pktgen import Pktgen, Session  # noqa: E402
from benchlib.scenarios import (BY_NAME, LABEL_ELAN_IN, LABEL_ELINE_IN, LABEL_ELINE_OUT,  # noqa: E402
                                MAC_BASE, NBR, SW_FAB)
from benchlib.switches import OVS_VSWITCHD, Ovs  # noqa: E402


def run_ovs(scn):
    """OVS started for scn, taught its plan's learning frames, then 2001
    counted frames at a low rate: the generator's result, OVS's datapath
    flows and its ports' counters (`dpctl/show -s`)."""
    if not os.path.exists(OVS_VSWITCHD):
        pytest.fail(f"{OVS_VSWITCHD} is missing: run scripts/deps.sh")
    plan = scn.plan("ovs", 1)
    workdir = f"/tmp/{TAG}-ovspw"
    os.makedirs(workdir, exist_ok=True)
    hp = host.Hugepages(1024)       # OVS-DPDK runs on hugepages only
    huge = hp.setup()
    sw = Ovs(workdir, CPU, huge, prefix=f"{TAG}-ovspw")
    gen = Pktgen(sw.sockets(2), rx_queues=sw.gen_rx_queues, prefix=f"{TAG}-ovspw-pg",
                 log=os.path.join(workdir, "pktgen.log"))
    session = None
    try:
        sw.start(scn, 1)
        session = Session(gen, plan.streams, learn=plan.learn)
        sw.forward()
        if plan.learn:
            session.trial(rate=10000, duration=0.2, learn=True)
        r = session.trial(rate=20000, duration=10, count=2001)
        flows = sw._appctl("dpctl/dump-flows")
        ports = sw._appctl("dpctl/show", "-s")
    except BaseException:
        print_logs(sw.log, gen.log, os.path.join(workdir, "ovs", "vswitchd.log"))
        raise
    finally:
        if session:
            session.close()
        sw.stop()
        hp.restore()
        shutil.rmtree(workdir, ignore_errors=True)
        shutil.rmtree(f"/var/run/dpdk/{TAG}-ovspw-pg", ignore_errors=True)
    return r, flows, ports


def size(ports, port, way):
    """Bytes per frame that port received (way "RX") or sent ("TX"), from
    dpctl/show -s: "port 1: p0 (dpdk: ...)", then "RX packets:N ...",
    "TX packets:N ...", ..., "RX bytes:B ... TX bytes:B ..."."""
    block = ports.split(f": {port} (", 1)[1].split("\n  port ", 1)[0]
    pkts = int(re.search(rf"{way} packets:(\d+)", block).group(1))
    return int(re.search(rf"{way} bytes:(\d+)", block).group(1)) / pkts


def test_ovs_carries_an_eline_in_the_same_pseudowire():
    r, flows, ports = run_ovs(BY_NAME["eline"])
    assert r["tx"] == 2001 and r["rx"] == 2001, r
    assert r["seq"]["checked"] and r["seq"]["missing"] == 0 and r["seq"]["dup"] == 0
    # Customer -> fabric: label pushed (bottom of stack, TTL 64), then an
    # Ethernet header from the switch's fabric MAC to the neighbour's.
    assert (f"add_mpls(label={LABEL_ELINE_OUT},tc=0,ttl=64,bos=1,eth_type=0x8847),"
            f"push_eth(src={SW_FAB[1]},dst={NBR[1]})") in flows, flows
    # Fabric -> customer: the far end's label, both headers popped.
    assert f"mpls(label={LABEL_ELINE_IN}/0xfffff" in flows, flows
    assert "pop_eth,pop_mpls(eth_type=0x6558)" in flows, flows

    # The customer's frames (60 bytes without FCS) leave 18 bytes longer.
    assert size(ports, "p0", "RX") == size(ports, "p0", "TX") == 60, ports
    assert size(ports, "p1", "RX") == size(ports, "p1", "TX") == 78, ports


def test_ovs_terminates_an_elan_pseudowire_into_its_bridge():
    r, flows, ports = run_ovs(BY_NAME["elan-termination"])
    assert r["tx"] == 2001 and r["rx"] == 2001, r
    assert r["seq"]["checked"] and r["seq"]["missing"] == 0 and r["seq"]["dup"] == 0
    # Both headers popped, then the bridge's choice after the recirculation:
    # one port (the learned one), not a flood.
    assert f"mpls(label={LABEL_ELAN_IN}/0xfffff" in flows, flows
    assert "pop_eth,pop_mpls(eth_type=0x6558),recirc(" in flows, flows
    assert re.search(rf"^recirc_id\(0x[0-9a-f]+\),.*dst={MAC_BASE}\).* actions:\d+$", flows,
                     re.M), flows
    # The far end's frames come in 78 bytes long and leave as the
    # customer's 60 (p1 also sends the learning frames, flooded).
    assert size(ports, "p1", "RX") == 78 and size(ports, "p0", "TX") == 60, ports
