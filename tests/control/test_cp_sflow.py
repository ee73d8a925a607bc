"""sFlow v5 export (docs/operations.md, "sFlow"): leaf1's agent, told a
collector, sets its datapath to sample 1 in 10 and sends flow and counter
samples; tshark's sFlow dissector judges the datagrams: the sampling rate,
a sample pool that counts every frame, the sampled frame itself (red's
VLAN 1000 ICMP to h2), the ports by ifIndex and the service as an MPLS VC."""
import socket
import struct
import tempfile
import time
from pathlib import Path

from cplib import RED_H2, finish_flood, start_flood
from lab.traffic import tshark_fields

RATE = 10


def write_pcap(path: Path, payloads: list) -> None:
    """The datagrams as IPv4/UDP frames to port 6343 (sFlow's, which tshark
    dissects as such)."""
    def csum(b):
        s = sum(struct.unpack(f"!{len(b) // 2}H", b))
        s = (s >> 16) + (s & 0xFFFF)
        return ~(s + (s >> 16)) & 0xFFFF
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, p in enumerate(payloads):
            udp = struct.pack("!HHHH", 40000, 6343, 8 + len(p), 0) + p
            ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), i & 0xFFFF, 0, 64, 17, 0,
                             socket.inet_aton("127.0.0.1"), socket.inet_aton("127.0.0.1"))
            ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
            fr = b"\x00" * 12 + b"\x08\x00" + ip + udp
            f.write(struct.pack("<IIII", i, 0, len(fr), len(fr)) + fr)


def test_sflow_export_judged_by_tshark(services, lab):
    cp = services
    collector = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    collector.bind(("127.0.0.1", 0))
    collector.settimeout(0.5)
    agent = cp.agents["leaf1"]
    plain = list(agent.cmd)
    ports = {p["name"]: p["port_id"] for p in lab.client("leaf1").call("port_list")}
    try:
        cp.stop_agent("leaf1")
        agent.cmd = plain + ["--sflow-collectors", f"127.0.0.1:{collector.getsockname()[1]}",
                             "--sflow-sampling", str(RATE), "--sflow-polling", "1s",
                             "--sflow-port-sampling", "fab2=0"]
        cp.start_agent("leaf1")
        flood = start_flood(lab, "h1", RED_H2, 300)
        got, deadline = [], time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                got.append(collector.recv(65535))
            except socket.timeout:
                if flood.poll() is not None and len(got) >= 5:
                    break
        finish_flood(flood)
    finally:
        cp.stop_agent("leaf1")
        agent.cmd = plain
        lab.client("leaf1").call("sflow_set", {"rate": 0})   # the agent without sFlow leaves it as it is
        cp.start_agent("leaf1")
        collector.close()
    assert got, "no sFlow datagram came"
    with tempfile.TemporaryDirectory() as d:
        pcap = Path(d) / "sflow.pcap"
        write_pcap(pcap, got)
        dgrams = tshark_fields(pcap, ["sflow_245.version", "sflow_245.agent", "sflow_245.sequence_number"],
                               "sflow")
        flows = tshark_fields(pcap, [
            "sflow.flow_sample.sampling_rate", "sflow.flow_sample.sample_pool",
            "sflow.flow_sample.input_interface", "sflow.flow_sample.output_interface",
            "sflow_245.header.frame_length", "vlan.id", "ip.dst", "icmp.type",
            "sflow_5.extended_mpls_vc.vc_instance_name", "sflow_5.extended_mpls_vc.id"],
            "sflow.flow_sample.sampling_rate")
        counters = tshark_fields(pcap, ["sflow_245.ifindex", "sflow_245.ifinpkt", "sflow_245.ifinoct"],
                                 "sflow_245.ifindex")
    assert len(dgrams) == len(got), "every datagram is sFlow to tshark"
    assert all(d["sflow_245.version"] == "5" and d["sflow_245.agent"] == "127.0.0.1" for d in dgrams), dgrams[:3]
    seqs = [int(d["sflow_245.sequence_number"]) for d in dgrams]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)

    # One row per datagram, the samples' values comma-separated.
    col = lambda rows, f: [v for r in rows for v in r[f].split(",") if v]  # noqa: E731
    rates = col(flows, "sflow.flow_sample.sampling_rate")
    pools = [int(v) for v in col(flows, "sflow.flow_sample.sample_pool")]
    assert rates and set(rates) == {str(RATE)}, set(rates)
    # The flood is 300 requests into cust1 (and their replies into the
    # fabric port): about 60 samples at 1 in 10, far more than 10.
    assert len(rates) >= 10, len(rates)
    assert max(pools) >= RATE * 3, "the pool counts every frame, not the samples"
    cust1 = str(ports["cust1"] + 1)
    assert cust1 in col(flows, "sflow.flow_sample.input_interface")
    assert str(ports["fab2"] + 1) not in col(flows, "sflow.flow_sample.input_interface"), "fab2 is not sampled"
    # Sampled on cust1: the request as h1 sent it, VLAN 1000 ICMP echo to h2,
    # out of a fabric port, in service red.
    assert "1000" in col(flows, "vlan.id") and RED_H2 in col(flows, "ip.dst")
    assert "8" in col(flows, "icmp.type")
    fabric = {ports[p] + 1 for p in ports if p.startswith("fab")}
    assert fabric & {int(v, 0) for v in col(flows, "sflow.flow_sample.output_interface")}
    assert "red" in col(flows, "sflow_5.extended_mpls_vc.vc_instance_name")

    # Counter samples: every port, each second, with its traffic.
    idx = col(counters, "sflow_245.ifindex")
    assert {str(i + 1) for i in ports.values()} <= set(idx), idx
    inpkts = [int(v) for r in counters for i, v in zip(r["sflow_245.ifindex"].split(","),
                                                       r["sflow_245.ifinpkt"].split(",")) if i == cust1]
    assert inpkts and max(inpkts) >= 300, inpkts
