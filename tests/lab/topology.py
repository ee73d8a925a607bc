"""Topology file loader and validator (docs/topology.md).

The loader turns the YAML into plain dataclasses and checks every rule of
docs/topology.md, naming the offending field ("links[1].b.port: ...") so a
typo in an example fails loudly instead of building half a lab. Nothing here
touches the system: the lab, the static programmer and the demo all start
from a validated Topology.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Optional, Union

import yaml

NAME_RE = re.compile(r"^[a-z0-9-]+$")
MAC_RE = re.compile(r"^[0-9a-f]{2}(:[0-9a-f]{2}){5}$")
IFNAMSIZ = 15  # usable characters of a Linux interface name

UNTAGGED = "untagged"
Vlan = Union[int, str]  # 1..4094 or "untagged"


class TopologyError(ValueError):
    """The topology file breaks a rule of docs/topology.md."""


@dataclass(frozen=True)
class Node:
    name: str
    role: str
    index: int  # position in the file, 1-based: stable ids (MACs, E-LAN sources)


@dataclass(frozen=True)
class Endpoint:
    node: str
    port: str


@dataclass(frozen=True)
class Link:
    a: Endpoint
    b: Endpoint
    cost: int
    capacity_mbps: int

    def end(self, node: str) -> Endpoint:
        return self.a if self.a.node == node else self.b

    def other(self, node: str) -> Endpoint:
        return self.b if self.a.node == node else self.a


@dataclass(frozen=True)
class HostInterface:
    vlan: Optional[int]  # None = untagged (address on eth0 itself)
    ip: str              # CIDR, e.g. 10.10.0.1/24
    mac: str

    @property
    def address(self) -> str:
        return self.ip.split("/")[0]

    @property
    def ifname(self) -> str:
        return "eth0" if self.vlan is None else f"eth0.{self.vlan}"


@dataclass(frozen=True)
class Host:
    name: str
    node: str
    port: str
    interfaces: tuple
    # More uplinks (Endpoints), for a multi-homed site: the host's eth0 is
    # then a Linux bridge over all of them, the site's switch.
    also: tuple = ()
    # Or, instead of node and port: the site host whose bridge this host
    # hangs off (a second host of that site).
    behind: str = ""


@dataclass(frozen=True)
class Circuit:
    node: str
    port: str
    vlan: Vlan


@dataclass(frozen=True)
class Service:
    name: str
    type: str  # eline | elan
    circuits: tuple
    index: int  # 1-based position in the file: the service id on every node
    # e3ctl service create's options for what only the controller applies
    # (ecmp, storm control); the static programmer ignores them.
    options: tuple = ()


@dataclass
class Topology:
    name: str
    control_word: bool
    ttl: int
    nodes: list
    links: list
    hosts: list
    services: list
    # node -> {port: "fabric" | "customer"}, in order of first appearance
    ports: dict = field(default_factory=dict)

    def node(self, name: str) -> Node:
        return named(self.nodes, name)

    def host(self, name: str) -> Host:
        return named(self.hosts, name)

    def service(self, name: str) -> Service:
        return named(self.services, name)

    def links_of(self, node: str) -> list:
        return [l for l in self.links if node in (l.a.node, l.b.node)]

    def links_between(self, a: str, b: str) -> list:
        return [l for l in self.links if {l.a.node, l.b.node} == {a, b}]

    def host_on(self, node: str, port: str) -> Host:
        for h in self.hosts:
            if not h.behind and (h.node, h.port) == (node, port):
                return h
        raise KeyError((node, port))

    def circuit_host(self, c: Circuit):
        """The host and host interface at the customer end of a circuit."""
        h = self.host_on(c.node, c.port)
        vlan = None if c.vlan == UNTAGGED else c.vlan
        for i in h.interfaces:
            if i.vlan == vlan:
                return h, i
        raise KeyError(f"host {h.name} has no interface on vlan {c.vlan}")

    def fabric_mac(self, node: str, port: str) -> str:
        """The deterministic MAC of a fabric port: 02:e3:00:<node>:<port>:00.

        Node and port indexes are positions in the file, so the same file gives
        the same MACs in every run, and a capture is readable at a glance."""
        n = self.node(node).index
        p = list(self.ports[node]).index(port) + 1
        return f"02:e3:00:{n:02x}:{p:02x}:00"


def named(items, name: str):
    """The item of items called name (KeyError if none)."""
    for x in items:
        if x.name == name:
            return x
    raise KeyError(name)


def _err(where: str, msg: str) -> TopologyError:
    return TopologyError(f"{where}: {msg}")


def _name(d: dict, key: str, where: str) -> str:
    v = d.get(key)
    if not isinstance(v, str) or not NAME_RE.match(v):
        raise _err(f"{where}.{key}", f"must be a name of [a-z0-9-], got {v!r}")
    return v


def _int(d: dict, key: str, where: str, default: int, lo: int, hi: int) -> int:
    v = d.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise _err(f"{where}.{key}", f"must be an integer {lo}..{hi}, got {v!r}")
    return v


def _map(v, where: str) -> dict:
    if not isinstance(v, dict):
        raise _err(where, f"must be a mapping, got {type(v).__name__}")
    return v


def _list(d: dict, key: str, where: str, required: bool = True) -> list:
    v = d.get(key)
    if v is None and not required:
        return []
    if not isinstance(v, list) or (required and not v):
        raise _err(f"{where}{key}", "must be a non-empty list")
    return v


def _unknown(d: dict, allowed: set, where: str) -> None:
    extra = set(d) - allowed
    if extra:
        raise _err(where, f"unknown field(s) {sorted(extra)}")


def parse(doc, source: str = "<topology>") -> Topology:
    """Validate a decoded YAML document and return the Topology."""
    d = _map(doc, source)
    _unknown(d, {"name", "fabric", "nodes", "links", "hosts", "services", "segments"}, source)
    name = _name(d, "name", source)
    fab = _map(d.get("fabric") or {}, "fabric")
    _unknown(fab, {"control_word", "ttl", "bfd"}, "fabric")  # bfd: the controller's
    cw = fab.get("control_word", True)
    if not isinstance(cw, bool):
        raise _err("fabric.control_word", f"must be true or false, got {cw!r}")
    ttl = _int(fab, "ttl", "fabric", 64, 2, 255)

    nodes, seen = [], set()
    for i, raw in enumerate(_list(d, "nodes", "")):
        w = f"nodes[{i}]"
        raw = _map(raw, w)
        _unknown(raw, {"name", "role"}, w)
        n = _name(raw, "name", w)
        role = raw.get("role", "leaf")
        if role not in ("leaf", "spine"):
            raise _err(f"{w}.role", f"must be leaf or spine, got {role!r}")
        if n in seen:
            raise _err(f"{w}.name", f"duplicate node {n!r}")
        seen.add(n)
        nodes.append(Node(n, role, i + 1))

    ports: dict = {n.name: {} for n in nodes}

    def claim(node: str, port: str, kind: str, where: str) -> None:
        if node not in ports:
            raise _err(f"{where}.node", f"unknown node {node!r}")
        if len(port) > IFNAMSIZ:
            raise _err(f"{where}.port", f"{port!r} is longer than {IFNAMSIZ} characters (a Linux interface name)")
        if port == "lo":
            raise _err(f"{where}.port", "'lo' is not a usable port name")
        if port in ports[node]:
            used = ports[node][port]
            raise _err(f"{where}.port", f"{node}/{port} is already used as a {used} port")
        ports[node][port] = kind

    links = []
    for i, raw in enumerate(_list(d, "links", "", required=False)):
        w = f"links[{i}]"
        raw = _map(raw, w)
        _unknown(raw, {"a", "b", "cost", "capacity_mbps"}, w)
        ends = []
        for side in ("a", "b"):
            e = _map(raw.get(side), f"{w}.{side}")
            _unknown(e, {"node", "port"}, f"{w}.{side}")
            ends.append(Endpoint(_name(e, "node", f"{w}.{side}"), _name(e, "port", f"{w}.{side}")))
        if ends[0].node == ends[1].node:
            raise _err(w, f"a link must join two different nodes, both ends are on {ends[0].node!r}")
        for side, e in zip(("a", "b"), ends):
            claim(e.node, e.port, "fabric", f"{w}.{side}")
        links.append(Link(ends[0], ends[1], _int(raw, "cost", w, 1, 1, 1 << 20),
                          _int(raw, "capacity_mbps", w, 10000, 1, 1 << 30)))

    hosts, seen = [], set(ports)
    for i, raw in enumerate(_list(d, "hosts", "", required=False)):
        w = f"hosts[{i}]"
        raw = _map(raw, w)
        _unknown(raw, {"name", "node", "port", "interfaces", "also", "behind"}, w)
        hname = _name(raw, "name", w)
        if hname in seen:
            raise _err(f"{w}.name", f"{hname!r} is already the name of a node or host")
        seen.add(hname)
        behind = ""
        if "behind" in raw:
            behind = _name(raw, "behind", w)
            site = [h for h in hosts if h.name == behind and h.also]
            if not site or "node" in raw or "port" in raw or "also" in raw:
                raise _err(f"{w}.behind", f"{behind!r}: must name an earlier multi-homed host (one with also:), "
                           "and this host has no node, port or also of its own")
            node, port = "", ""
        else:
            node, port = _name(raw, "node", w), _name(raw, "port", w)
            claim(node, port, "customer", w)
        also = []
        for j, e in enumerate(_list(raw, "also", f"{w}.", required=False)):
            we = f"{w}.also[{j}]"
            e = _map(e, we)
            _unknown(e, {"node", "port"}, we)
            also.append(Endpoint(_name(e, "node", we), _name(e, "port", we)))
            claim(also[-1].node, also[-1].port, "customer", we)
        ifaces, vlans = [], set()
        for j, r in enumerate(_list(raw, "interfaces", f"{w}.")):
            wi = f"{w}.interfaces[{j}]"
            r = _map(r, wi)
            _unknown(r, {"vlan", "ip", "mac"}, wi)
            vlan = r.get("vlan")
            if vlan is not None:
                vlan = _int(r, "vlan", wi, 0, 1, 4094)
            if vlan in vlans:
                raise _err(f"{wi}.vlan", f"{'untagged' if vlan is None else vlan} appears twice on this host")
            vlans.add(vlan)
            try:
                ipaddress.IPv4Interface(r.get("ip"))
                if "/" not in r["ip"]:
                    raise ValueError("no prefix length")
            except (ValueError, TypeError, KeyError) as e:
                raise _err(f"{wi}.ip", f"must be an IPv4 address with prefix length, got {r.get('ip')!r} ({e})")
            mac = str(r.get("mac", "")).lower()
            if not MAC_RE.match(mac) or int(mac[:2], 16) & 1:
                raise _err(f"{wi}.mac", f"must be a unicast MAC like 02:00:00:00:00:01, got {r.get('mac')!r}")
            ifaces.append(HostInterface(vlan, r["ip"], mac))
        if behind and any(i.vlan is not None for i in ifaces):
            raise _err(f"{w}.interfaces", "a host behind a site is untagged")
        hosts.append(Host(hname, node, port, tuple(ifaces), tuple(also), behind))

    services, seen, used = [], set(), {}
    for i, raw in enumerate(_list(d, "services", "", required=False)):
        w = f"services[{i}]"
        raw = _map(raw, w)
        _unknown(raw, {"name", "type", "circuits", "ecmp", "storm"}, w)
        sname = _name(raw, "name", w)
        if sname in seen:
            raise _err(f"{w}.name", f"duplicate service {sname!r}")
        seen.add(sname)
        stype = raw.get("type")
        if stype not in ("eline", "elan"):
            raise _err(f"{w}.type", f"must be eline or elan, got {stype!r}")
        circuits = []
        for j, r in enumerate(_list(raw, "circuits", f"{w}.")):
            wc = f"{w}.circuits[{j}]"
            r = _map(r, wc)
            _unknown(r, {"node", "port", "vlan"}, wc)
            node, port = _name(r, "node", wc), _name(r, "port", wc)
            if ports.get(node, {}).get(port) != "customer":
                raise _err(f"{wc}", f"{node}/{port} is not a customer port (no host is attached to it)")
            vlan = r.get("vlan", UNTAGGED)
            if vlan != UNTAGGED:
                vlan = _int(r, "vlan", wc, 0, 1, 4094)
            key = (node, port, vlan)
            if key in used:
                raise _err(wc, f"{node}/{port} vlan {vlan} is already a circuit of service {used[key]!r}")
            used[key] = sname
            circuits.append(Circuit(node, port, vlan))
        if stype == "eline" and len(circuits) != 2:
            raise _err(f"{w}.circuits", f"an eline has exactly 2 circuits, got {len(circuits)}")
        if stype == "elan" and len(circuits) < 2:
            raise _err(f"{w}.circuits", f"an elan has 2 or more circuits, got {len(circuits)}")
        options = ("--ecmp",) if raw.get("ecmp") else ()
        storm = _map(raw.get("storm") or {}, f"{w}.storm")
        _unknown(storm, {"broadcast_pps", "multicast_pps", "unknown_pps"}, f"{w}.storm")
        if storm:
            options += ("--storm", ",".join(f"{k.removesuffix('_pps')}={_int(storm, k, f'{w}.storm', 0, 0, 10**8)}"
                                           for k in sorted(storm)))
        services.append(Service(sname, stype, tuple(circuits), i + 1, options))

    return Topology(name, cw, ttl, nodes, links, hosts, services, ports)


def load(path) -> Topology:
    """Read and validate a topology file; raises TopologyError naming the field."""
    with open(path) as f:
        try:
            doc = yaml.safe_load(f)
        except yaml.YAMLError as e:
            raise TopologyError(f"{path}: not valid YAML: {e}") from None
    try:
        return parse(doc, str(path))
    except TopologyError as e:
        raise TopologyError(f"{path}: {e}") from None
