"""The lab's plumbing without datapaths: namespaces, veths, host interfaces,
link down/up and cleanup (tests/lab/lab.py)."""
import json
from pathlib import Path

import pytest

from lab import Lab
from lab.lab import netns_list, run

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

PREFIX = "e2n"


@pytest.fixture(scope="module")
def net(root):
    lab = Lab(EXAMPLES / "static-3node.yaml", PREFIX)
    try:
        lab.up(start=False)
        yield lab
    finally:
        lab.down()


def links(lab, name):
    """`ip -j -d link` of a node's or host's namespace, by interface name."""
    out = run(["ip", "-j", "-d", "-n", lab.ns(name), "link", "show"]).stdout
    return {l["ifname"]: l for l in json.loads(out)}


def features(lab, name, ifname):
    out = run(["ip", "netns", "exec", lab.ns(name), "ethtool", "-k", ifname]).stdout
    return dict(l.strip().split(": ", 1)[:2] for l in out.splitlines()[1:] if ": " in l)


def test_namespaces_per_node_and_host(net):
    want = {f"{PREFIX}-{n}" for n in ("leaf1", "leaf2", "leaf3", "spine1", "a1", "a2", "a3", "b1", "b2")}
    assert want <= netns_list()


def test_fabric_ports_named_as_topology_with_macs_and_mtu(net):
    t = net.topo
    for node, ports in t.ports.items():
        ls = links(net, node)
        for port, kind in ports.items():
            l = ls[port]
            assert l["linkinfo"]["info_kind"] == "veth"
            assert l["mtu"] == (2100 if kind == "fabric" else 1500)
            if kind == "fabric":
                assert l["address"] == t.fabric_mac(node, port)
            assert "UP" in l["flags"]


def test_offloads_off_on_both_ends(net):
    for ns_name, ifname in (("leaf1", "fab1"), ("spine1", "fab1"), ("leaf1", "cust1"), ("a1", "eth0")):
        f = features(net, ns_name, ifname)
        for feat in ("rx-checksumming", "tx-checksumming", "tcp-segmentation-offload",
                     "generic-segmentation-offload", "generic-receive-offload",
                     "rx-vlan-offload", "tx-vlan-offload"):
            assert f[feat].startswith("off"), f"{ns_name}/{ifname} {feat}: {f[feat]}"


def test_host_vlan_interfaces(net):
    ls = links(net, "a1")
    v = ls["eth0.3000"]
    assert v["address"] == "02:00:0a:1e:00:01" and "UP" in v["flags"] and "NO-CARRIER" not in v["flags"]
    addrs = json.loads(run(["ip", "-j", "-n", net.ns("a1"), "addr", "show", "eth0.1000"]).stdout)
    assert [a["local"] for a in addrs[0]["addr_info"]] == ["10.10.0.1"]


def test_host_frames_reach_the_nodes_customer_port_tagged(net, tmp_path):
    """What a host sends on a VLAN arrives on its leaf's port with the tag in
    the frame (offloads off), which is what af_packet will see."""
    from lab.traffic import Capture, tshark_fields
    with Capture(net.ns("leaf3"), "cust1", tmp_path / "c.pcap", "arp"):
        net.host_exec("a3", ["ping", "-c", "1", "-W", "1", "10.30.0.9"], check=False)
    rows = tshark_fields(tmp_path / "c.pcap", ["vlan.id", "eth.src", "arp.src.proto_ipv4"])
    assert rows and rows[0] == {"vlan.id": "3100", "eth.src": "02:00:0a:1e:00:03", "arp.src.proto_ipv4": "10.30.0.3"}


def test_link_down_and_up(net):
    net.link_down("leaf1", "leaf2")
    try:
        assert "UP" not in links(net, "leaf1")["fab2"]["flags"]
        assert "UP" not in links(net, "leaf2")["fab2"]["flags"]
        assert "UP" in links(net, "leaf1")["fab1"]["flags"]   # other links untouched
    finally:
        net.link_up("leaf1", "leaf2")
    assert "UP" in links(net, "leaf1")["fab2"]["flags"]


def test_down_removes_everything_after_partial_up(root):
    lab = Lab(EXAMPLES / "static-3node.yaml", "e2p")
    # A partial build: some namespaces and one link exist, the rest never came.
    for name in ("leaf1", "spine1", "a1"):
        run(["ip", "netns", "add", lab.ns(name)])
    lab._veth("leaf1", "fab1", None, "spine1", "fab1", None, 2100)
    # A helper left running in one of them.
    helper = lab.host_popen("a1", ["sleep", "300"])
    lab.down()
    assert helper.wait(timeout=10) is not None
    assert not {n for n in netns_list() if n.startswith("e2p-")}
    lab.down()  # and again: nothing to do, no error
