"""Methods that report traffic (mac_list, trace, stats, telemetry counters),
with real frames: a net_pcap customer port replays a pcap file written with
scapy, and the trace's pcap export is read back by scapy and tshark."""
import base64
import shutil
import subprocess

import pytest

scapy = pytest.importorskip("scapy.all")
from scapy.all import IP, UDP, Dot1Q, Ether, rdpcap, wrpcap  # noqa: E402

from rpc_lab import null_port, wait_for  # noqa: E402

HOSTS = ["02:aa:00:00:00:01", "02:aa:00:00:00:02"]


@pytest.fixture
def traffic(rpc, dp):
    frames = [Ether(src=HOSTS[0], dst="ff:ff:ff:ff:ff:ff") / Dot1Q(vlan=200) /
              IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1, dport=2),
              Ether(src=HOSTS[1], dst=HOSTS[0]) / Dot1Q(vlan=200) /
              IP(src="10.0.0.2", dst="10.0.0.1") / UDP(sport=2, dport=1),
              Ether(src=HOSTS[1], dst=HOSTS[0]) / Dot1Q(vlan=999) /
              IP(src="10.0.0.2", dst="10.0.0.1") / UDP(sport=2, dport=1)]
    pcap_in = dp.workdir / "in.pcap"
    wrpcap(str(pcap_in), frames)
    rpc.call("port_add", null_port("fab0", "fabric", 0))
    rpc.call("nexthop_add", id=1, port="fab0", mac="02:00:00:00:01:01")
    rpc.call("nhlfe_add", id=7, nexthop=1, label=1002)
    rpc.call("service_add", id=20, type="elan", branches=[7])
    # trace first: the pcap port delivers its frames as soon as it starts
    rpc.call("trace_start", count=3)
    rpc.call("port_add", name="cp", kind="customer",
             devargs=f"net_pcap0,rx_pcap={pcap_in},tx_pcap={dp.workdir / 'out.pcap'}")
    rpc.call("circuit_add", id=1, port="cp", vlan=200, service=20)
    return frames


def test_mac_list_trace_and_counters(rpc, dp, traffic, tmp_path):
    # frames arrive before the circuit exists or after: either way they are
    # counted; replay is once, so only check what each frame must produce
    trace = wait_for(lambda: len(rpc.call("trace_get")) == 3 and rpc.call("trace_get"))
    assert trace, rpc.call("trace_get")
    assert [t["rx_port"] for t in trace] == ["cp"] * 3
    assert [t["seq"] for t in trace] == sorted(t["seq"] for t in trace)
    assert all(t["path"] and t["verdict"] for t in trace)
    assert "no_circuit" in trace[2]["verdict"]

    pcap = base64.b64decode(rpc.call("trace_get", format="pcap")["pcap_base64"])
    path = tmp_path / "trace.pcap"
    path.write_bytes(pcap)
    got = rdpcap(str(path))
    assert [bytes(p) for p in got] == [bytes(f) for f in traffic]
    if shutil.which("tshark"):
        out = subprocess.run(["tshark", "-r", str(path), "-T", "fields", "-e", "vlan.id"],
                             capture_output=True, text=True, timeout=60).stdout.split()
        assert out == ["200", "200", "999"]

    stats = rpc.call("port_list", name="cp")[0]["stats"]
    assert stats["rx_pkts"] == 3
    assert stats["drops"]["no_circuit"] >= 1


def test_mac_learning_visible(rpc, dp):
    """A pcap port replaying two hosts' frames without end: both are learned."""
    frames = [Ether(src=h, dst="ff:ff:ff:ff:ff:ff") / Dot1Q(vlan=200) / IP() / UDP()
              for h in HOSTS]
    pcap_in = dp.workdir / "learn.pcap"
    wrpcap(str(pcap_in), frames)
    rpc.call("port_add", null_port("fab0", "fabric", 0))
    rpc.call("service_add", id=20, type="elan")
    rpc.call("config_load", version=1,
             ports=[{"name": "cq", "kind": "customer",
                     "devargs": f"net_pcap1,rx_pcap={pcap_in},tx_pcap={dp.workdir / 'learn-out.pcap'},infinite_rx=1"}],
             circuits=[{"id": 1, "port": "cq", "vlan": 200, "service": 20}])
    try:
        macs = wait_for(lambda: len(rpc.call("mac_list", service=20)) == 2 and
                        rpc.call("mac_list", service=20))
        assert macs, rpc.call("port_list", name="cq")
        assert sorted(m["mac"] for m in macs) == HOSTS
        assert all(m["circuit"] == 1 and m["service"] == 20 and "source" not in m
                   and m["age_s"] >= 0 for m in macs)
        assert rpc.call("mac_list") == macs
        assert len(rpc.call("mac_list", service=20, limit=1)) == 1
        assert rpc.call("service_list", id=20)[0]["macs"] == 2
        assert rpc.call("mac_flush", service=20) == {"flushed": 2}
    finally:
        # stop the endless replay
        rpc.call("circuit_del", id=1)
        rpc.call("port_del", name="cq")
    assert rpc.call("mac_list") == []
