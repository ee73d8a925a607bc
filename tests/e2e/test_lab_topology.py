"""The topology loader (tests/lab/topology.py) against docs/topology.md's rules."""
import copy
import re
from pathlib import Path

import pytest
import yaml

from lab.topology import TopologyError, load, parse

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

BASE = {
    "name": "t",
    "nodes": [{"name": "leaf1", "role": "leaf"}, {"name": "spine1", "role": "spine"},
              {"name": "leaf2", "role": "leaf"}],
    "links": [{"a": {"node": "leaf1", "port": "fab1"}, "b": {"node": "spine1", "port": "fab1"}},
              {"a": {"node": "leaf2", "port": "fab1"}, "b": {"node": "spine1", "port": "fab2"}}],
    "hosts": [{"name": "h1", "node": "leaf1", "port": "cust1",
               "interfaces": [{"vlan": 1000, "ip": "10.0.0.1/24", "mac": "02:00:00:00:00:01"}]},
              {"name": "h2", "node": "leaf2", "port": "cust1",
               "interfaces": [{"ip": "10.0.0.2/24", "mac": "02:00:00:00:00:02"}]}],
    "services": [{"name": "s", "type": "eline", "circuits": [
        {"node": "leaf1", "port": "cust1", "vlan": 1000}, {"node": "leaf2", "port": "cust1", "vlan": "untagged"}]}],
}


def with_change(path, value):
    """BASE with one field replaced; path like "links.0.b.port"."""
    doc = copy.deepcopy(BASE)
    *parents, last = path.split(".")
    d = doc
    for k in parents:
        d = d[int(k)] if isinstance(d, list) else d[k]
    if isinstance(d, list):
        d[int(last)] = value
    elif value is ...:
        del d[last]
    else:
        d[last] = value
    return doc


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_examples_load(path):
    t = load(path)
    assert t.nodes and t.links and t.hosts and t.services
    for s in t.services:  # every circuit of the examples has a host interface on its VLAN
        for c in s.circuits:
            t.circuit_host(c)


def test_defaults_and_derived_values():
    t = parse(BASE)
    assert (t.control_word, t.ttl) == (True, 64)
    assert t.links[0].cost == 1 and t.links[0].capacity_mbps == 10000
    assert t.ports["spine1"] == {"fab1": "fabric", "fab2": "fabric"}
    assert t.ports["leaf1"] == {"fab1": "fabric", "cust1": "customer"}
    assert t.fabric_mac("spine1", "fab2") == "02:e3:00:02:02:00"
    assert t.hosts[1].interfaces[0].vlan is None and t.hosts[1].interfaces[0].ifname == "eth0"
    assert t.services[0].circuits[1].vlan == "untagged"


@pytest.mark.parametrize("path,value,where", [
    ("name", "Bad_Name", "name"),
    ("nodes.1", {"name": "leaf1"}, "nodes[1].name"),
    ("nodes.0", {"name": "leaf1", "role": "core"}, "nodes[0].role"),
    ("links.0.b.node", "nowhere", "links[0].b.node"),
    ("links.0.b", {"node": "leaf1", "port": "fab9"}, "links[0]"),
    ("links.1.b.port", "fab1", "links[1].b.port"),                       # spine1/fab1 used twice
    ("links.0.a.port", "averyveryverylongport", "links[0].a.port"),      # > 15 characters
    ("links.0.cost", 0, "links[0].cost"),
    ("hosts.0.port", "fab1", "hosts[0].port"),                           # fabric and customer at once
    ("hosts.1.name", "leaf2", "hosts[1].name"),                          # host named like a node
    ("hosts.0.interfaces.0", {"vlan": 4095, "ip": "10.0.0.1/24", "mac": "02:00:00:00:00:01"}, "vlan"),
    ("hosts.0.interfaces.0", {"vlan": 10, "ip": "10.0.0.1", "mac": "02:00:00:00:00:01"}, ".ip"),
    ("hosts.0.interfaces.0", {"vlan": 10, "ip": "10.0.0.1/24", "mac": "01:00:00:00:00:01"}, ".mac"),
    ("services.0.type", "vpls", "services[0].type"),
    ("services.0.circuits.1", {"node": "leaf2", "port": "fab1", "vlan": 5}, "not a customer port"),
    ("services.0.circuits.1", {"node": "leaf1", "port": "cust1", "vlan": 1000}, "already a circuit"),
    ("services.0.circuits.1", {"node": "leaf2", "port": "cust1", "vlan": 0}, "vlan"),
    ("fabric", {"ttl": 300}, "fabric.ttl"),
    ("fabric", {"colour": "red"}, "unknown field"),
])
def test_rejects_with_location(path, value, where):
    with pytest.raises(TopologyError, match=re.escape(where)):
        parse(with_change(path, value))


def test_eline_needs_two_circuits():
    doc = copy.deepcopy(BASE)
    doc["services"][0]["circuits"].pop()
    with pytest.raises(TopologyError, match="exactly 2"):
        parse(doc)


def test_bad_yaml_names_file(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text("name: [unclosed\n")
    with pytest.raises(TopologyError, match="bad.yaml: not valid YAML"):
        load(f)
    f.write_text(yaml.safe_dump(with_change("nodes.0.name", "UPPER")))
    with pytest.raises(TopologyError, match=r"bad.yaml: nodes\[0\].name"):
        load(f)


def test_a_host_behind_a_site():
    """A host may hang off a multi-homed host's bridge (behind:), with no port
    of its own; it must name an earlier site host and be untagged."""
    doc = copy.deepcopy(BASE)
    site = {"name": "s1", "node": "leaf1", "port": "cust7", "also": [{"node": "leaf2", "port": "cust7"}],
            "interfaces": [{"ip": "10.9.0.1/24", "mac": "02:00:00:00:09:01"}]}
    lan = {"name": "s2", "behind": "s1", "interfaces": [{"ip": "10.9.0.2/24", "mac": "02:00:00:00:09:02"}]}
    doc["hosts"] += [site, lan]
    t = parse(doc)
    assert t.host("s2").behind == "s1" and not t.host("s2").node
    for bad, match in ((dict(lan, behind="h1"), "earlier multi-homed host"),
                       (dict(lan, node="leaf1", port="cust8"), "no node, port or also"),
                       (dict(lan, interfaces=[{"vlan": 5, "ip": "10.9.0.2/24", "mac": "02:00:00:00:09:02"}]),
                        "untagged")):
        d = copy.deepcopy(BASE)
        d["hosts"] += [site, bad]
        with pytest.raises(TopologyError, match=match):
            parse(d)


def test_controller_only_service_options():
    """ecmp and a service's storm control become e3ctl service create's
    options (the controller applies them; the static programmer does not)."""
    doc = with_change("services.0.ecmp", True)
    doc["services"][0]["storm"] = {"unknown_pps": 5, "broadcast_pps": 100}
    (svc,) = parse(doc, "t").services
    assert svc.options == ("--ecmp", "--storm", "broadcast=100,unknown=5")
    doc["services"][0]["storm"] = {"bum_pps": 5}
    with pytest.raises(TopologyError, match=r"services\[0\]\.storm"):
        parse(doc, "t")
