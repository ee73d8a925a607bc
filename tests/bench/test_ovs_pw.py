"""OVS as the benchmark's other provider edge (bench/benchlib/scenarios.py,
_pw_flows): at E-Line it must carry the customer's frame whole in Ethernet +
label and take the far end's out again, as e3 does without the control
word, or the comparison is not of the same job. OVS's own datapath flows
say what it did to each frame; the generator says every frame arrived once,
each way, and OVS's port counters give the frames' length on each side."""
import os
import re
import shutil
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
from test_pktgen import CPU, TAG, print_logs  # noqa: E402

from benchlib import host  # noqa: E402
from benchlib.pktgen import Pktgen, Session  # noqa: E402
from benchlib.scenarios import BY_NAME, LABEL_ELINE_IN, LABEL_ELINE_OUT, NBR, SW_FAB  # noqa: E402
from benchlib.switches import OVS_VSWITCHD, Ovs  # noqa: E402


def test_ovs_carries_an_eline_in_the_same_pseudowire():
    if not os.path.exists(OVS_VSWITCHD):
        pytest.fail(f"{OVS_VSWITCHD} is missing: run scripts/deps.sh")
    scn = BY_NAME["eline"]
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
        session = Session(gen, scn.plan("ovs", 1).streams)
        sw.forward()
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
    assert r["tx"] == 2001 and r["rx"] == 2001, r
    assert r["seq"]["checked"] and r["seq"]["missing"] == 0 and r["seq"]["dup"] == 0
    # Customer -> fabric: label pushed (bottom of stack, TTL 64), then an
    # Ethernet header from the switch's fabric MAC to the neighbour's.
    assert (f"add_mpls(label={LABEL_ELINE_OUT},tc=0,ttl=64,bos=1,eth_type=0x8847),"
            f"push_eth(src={SW_FAB[1]},dst={NBR[1]})") in flows, flows
    # Fabric -> customer: the far end's label, both headers popped.
    assert f"mpls(label={LABEL_ELINE_IN}/0xfffff" in flows, flows
    assert "pop_eth,pop_mpls(eth_type=0x6558)" in flows, flows

    # dpctl/show -s: "port 1: p0 (dpdk: ...)", then "RX packets:N ...",
    # "TX packets:N ...", ..., "RX bytes:B ... TX bytes:B ...".
    def size(port, way):
        block = ports.split(f": {port} (", 1)[1].split("\n  port ", 1)[0]
        pkts = int(re.search(rf"{way} packets:(\d+)", block).group(1))
        return int(re.search(rf"{way} bytes:(\d+)", block).group(1)) / pkts
    # The customer's frames (60 bytes without FCS) leave 18 bytes longer.
    assert size("p0", "RX") == size("p0", "TX") == 60, ports
    assert size("p1", "RX") == size("p1", "TX") == 78, ports
