"""Static programmer: the controller's job done by hand, for tests and the demo.

Given a topology and its services, it computes paths and flood trees, allocates
labels per receiving node and programs every node over JSON-RPC with exactly
the entries of DESIGN.md "Tables and label semantics":

- E-Line A<->B: at each end an ELINE(service) label; along the path from the
  other end, SWAP labels at transit nodes; the ingress end's service points at
  an nhlfe (first hop, label of the next node).
- E-LAN over member leaves M: at each member R, one ELAN(service, source=X)
  label per other member X, reached from X by a unicast LSP (X's remote
  endpoint {source: R, nhlfe}). Flooding: one tree spanning M; per source
  leaf X, every other tree node N has a REPLICATE label with the RPF port
  toward X, a branch per tree neighbour away from X, and local delivery as
  ELAN(service, X) when N is a member; X's service lists its own branches.

This is test scaffolding, deliberately simple: Dijkstra over the few links,
a shortest-path heuristic for the tree, labels counted up from a base per
node. The real controller (control/) uses a graph library and etcd.

Ids: service id = the service's position in the topology file (same on every
node); E-LAN source id = the source node's position in the file; nexthop id =
the fabric port's position among the node's ports; nhlfe, circuit and label
numbers are allocated per node. A fresh programmer on the same topology
allocates the same numbers, so programming twice changes nothing.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field

from .topology import UNTAGGED, Topology

PHASES = ("nhlfe", "service", "label", "circuit")
LABEL_BASE = 1000  # well clear of the reserved 0-15; easy to tell from ids in a capture


@dataclass(frozen=True)
class Hop:
    node: str       # sending node
    port: str       # its fabric port
    peer: str       # receiving node
    peer_port: str  # the receiving node's port


@dataclass
class LSP:
    """A unidirectional label-switched path from hops[0].node to hops[-1].peer."""
    hops: list
    labels: list      # labels[i]: the label on the wire of hops[i]
    head_nhlfe: int   # at hops[0].node
    transit: list     # [(node, label, nhlfe)] installed at transit nodes

    def describe(self) -> str:
        s = self.hops[0].node
        for h, l in zip(self.hops, self.labels):
            s += f" -[{l}]-> {h.peer}"
        return s


@dataclass
class ServiceState:
    name: str
    type: str
    id: int
    circuits: dict = field(default_factory=dict)     # node -> [(circuit id, port, vlan)]
    lsps: dict = field(default_factory=dict)         # (src node, dst node) -> LSP
    labels: dict = field(default_factory=dict)       # node -> {label: description}
    nhlfes: dict = field(default_factory=dict)       # node -> [nhlfe ids] (for removal)
    tree: list = field(default_factory=list)         # E-LAN: links of the flood tree


class _Ops:
    """RPC calls grouped by phase, applied phase by phase across all nodes:
    objects exist before anything refers to them, and circuits (where
    customer traffic enters) come last."""

    def __init__(self):
        self.by_phase = {p: [] for p in PHASES}

    def add(self, phase: str, node: str, method: str, **params) -> None:
        self.by_phase[phase].append((node, method, params))

    def apply(self, client_for) -> None:
        for p in PHASES:
            for node, method, params in self.by_phase[p]:
                client_for(node).call(method, **params)


class StaticProgrammer:
    def __init__(self, topo: Topology, client_for, label_base: int = LABEL_BASE):
        """client_for(node) returns an object with .call(method, **params)
        (e3rpc.Client; Lab.client is one)."""
        self.topo = topo
        self.client_for = client_for
        self._next = {n.name: {"label": label_base, "nhlfe": 1, "circuit": 1} for n in topo.nodes}
        self.services: dict = {}

    # ---- allocation and ids ----------------------------------------------------
    def _alloc(self, node: str, kind: str) -> int:
        v = self._next[node][kind]
        self._next[node][kind] += 1
        return v

    def nexthop_id(self, node: str, port: str) -> int:
        return list(self.topo.ports[node]).index(port) + 1

    def source_id(self, node: str) -> int:
        return self.topo.node(node).index

    # ---- graph -------------------------------------------------------------------
    def _dijkstra(self, sources, avoid=()):
        """Shortest distances from a set of nodes; prev[n] = (link, previous node).
        Ties break on file order so paths are the same in every run."""
        order = {n.name: n.index for n in self.topo.nodes}
        dist = {s: 0 for s in sources}
        prev = {}
        heap = [(0, order[s], s) for s in sources]
        heapq.heapify(heap)
        done = set()
        while heap:
            d, _, n = heapq.heappop(heap)
            if n in done:
                continue
            done.add(n)
            for l in self.topo.links_of(n):
                if l in avoid:
                    continue
                m = l.other(n).node
                nd = d + l.cost
                if m not in dist or nd < dist[m]:
                    dist[m] = nd
                    prev[m] = (l, n)
                    heapq.heappush(heap, (nd, order[m], m))
        return dist, prev

    def _walk_back(self, prev, dst) -> list:
        hops = []
        n = dst
        while n in prev:
            l, p = prev[n]
            hops.append(Hop(p, l.end(p).port, n, l.end(n).port))
            n = p
        return hops[::-1]

    def path(self, src: str, dst: str, avoid=()) -> list:
        """Lowest-cost hops from src to dst, not using the links in avoid."""
        dist, prev = self._dijkstra({src}, avoid)
        if dst not in dist:
            raise ValueError(f"no path from {src} to {dst}")
        return self._walk_back(prev, dst)

    def hops_via(self, nodes) -> list:
        """Hops along an explicit node sequence (cheapest link between neighbours)."""
        hops = []
        for a, b in zip(nodes, nodes[1:]):
            links = self.topo.links_between(a, b)
            if not links:
                raise ValueError(f"path {nodes}: no link between {a} and {b}")
            l = min(links, key=lambda l: l.cost)
            hops.append(Hop(a, l.end(a).port, b, l.end(b).port))
        return hops

    def tree(self, members) -> list:
        """Links of a low-cost tree spanning the members: grow from the first
        member, adding the shortest path to the nearest member not yet in it."""
        in_tree, links = {members[0]}, []
        while not set(members) <= in_tree:
            dist, prev = self._dijkstra(in_tree)
            target = min((m for m in members if m not in in_tree), key=lambda m: (dist[m], members.index(m)))
            n = target
            while n not in in_tree:
                l, p = prev[n]
                links.append(l)
                in_tree.add(n)
                n = p
        return links

    # ---- programming ---------------------------------------------------------------------
    def program(self, services=None) -> None:
        """Settings and nexthops on every node, then the services (all of the
        topology's by default, or those named)."""
        ops = _Ops()
        for n in self.topo.nodes:
            c = self.client_for(n.name)
            c.call("settings_set", ttl=self.topo.ttl, control_word=self.topo.control_word)
            for l in self.topo.links_of(n.name):
                me, peer = l.end(n.name), l.other(n.name)
                c.call("nexthop_add", id=self.nexthop_id(n.name, me.port), port=me.port,
                       mac=self.topo.fabric_mac(peer.node, peer.port))
        names = services if services is not None else [s.name for s in self.topo.services]
        for name in names:
            svc = self.topo.service(name)
            if name in self.services:
                continue
            st = ServiceState(svc.name, svc.type, svc.index)
            self.services[name] = st
            if svc.type == "eline":
                self._eline(svc, st, ops)
            else:
                self._elan(svc, st, ops)
        ops.apply(self.client_for)

    def _label(self, st: ServiceState, node: str, what: str) -> int:
        l = self._alloc(node, "label")
        st.labels.setdefault(node, {})[l] = what
        return l

    def _nhlfe(self, st: ServiceState, node: str) -> int:
        nh = self._alloc(node, "nhlfe")
        st.nhlfes.setdefault(node, []).append(nh)
        return nh

    def _lsp(self, st: ServiceState, hops: list, tail_label: int, ops: _Ops, what: str) -> LSP:
        """SWAP entries at the transit nodes, from the egress back, and the
        head's nhlfe; tail_label is the label the egress node terminates."""
        label, labels, transit = tail_label, [tail_label], []
        for h in reversed(hops[1:]):
            nh = self._nhlfe(st, h.node)
            ops.add("nhlfe", h.node, "nhlfe_add", id=nh, nexthop=self.nexthop_id(h.node, h.port), label=label)
            label = self._label(st, h.node, f"swap {what}")
            ops.add("label", h.node, "label_add", label=label, type="swap", nhlfe=nh)
            transit.append((h.node, label, nh))
            labels.append(label)
        head = hops[0]
        nh = self._nhlfe(st, head.node)
        ops.add("nhlfe", head.node, "nhlfe_add", id=nh, nexthop=self.nexthop_id(head.node, head.port), label=label)
        return LSP(hops, labels[::-1], nh, transit)

    def _circuits(self, svc, st: ServiceState, ops: _Ops) -> None:
        for c in svc.circuits:
            cid = self._alloc(c.node, "circuit")
            st.circuits.setdefault(c.node, []).append((cid, c.port, c.vlan))
            ops.add("circuit", c.node, "circuit_add", id=cid, port=c.port, vlan=c.vlan, service=svc.index)

    def _eline(self, svc, st: ServiceState, ops: _Ops) -> None:
        a, b = svc.circuits
        if a.node == b.node:  # both circuits on one node: hairpin, no nhlfe
            ops.add("service", a.node, "service_add", id=svc.index, type="eline", name=svc.name)
            self._circuits(svc, st, ops)
            return
        tail = {}
        for end in (a, b):
            tail[end.node] = self._label(st, end.node, f"eline {svc.name}")
            ops.add("label", end.node, "label_add", label=tail[end.node], type="eline", service=svc.index)
        for src, dst in ((a, b), (b, a)):
            lsp = self._lsp(st, self.path(src.node, dst.node), tail[dst.node], ops, f"{svc.name} {src.node}->{dst.node}")
            st.lsps[(src.node, dst.node)] = lsp
            ops.add("service", src.node, "service_add", id=svc.index, type="eline", name=svc.name,
                    nhlfe=lsp.head_nhlfe)
        self._circuits(svc, st, ops)

    def _elan(self, svc, st: ServiceState, ops: _Ops) -> None:
        members = list(dict.fromkeys(c.node for c in svc.circuits))
        remotes = {m: [] for m in members}
        branches = {m: [] for m in members}
        # Known unicast: one ELAN(service, source=X) label at R per other member X.
        for r in members:
            for x in members:
                if x == r:
                    continue
                tail = self._label(st, r, f"elan {svc.name} from {x}")
                ops.add("label", r, "label_add", label=tail, type="elan", service=svc.index, source=self.source_id(x))
                lsp = self._lsp(st, self.path(x, r), tail, ops, f"{svc.name} {x}->{r}")
                st.lsps[(x, r)] = lsp
                remotes[x].append({"source": self.source_id(r), "nhlfe": lsp.head_nhlfe})
        # Flooding: one tree, a REPLICATE label per (tree node, source leaf).
        st.tree = self.tree(members)
        adj = {}
        for l in st.tree:
            adj.setdefault(l.a.node, []).append(l)
            adj.setdefault(l.b.node, []).append(l)
        for x in members:
            parent, order, seen = {}, [x], {x}
            for n in order:  # BFS from the source over the tree
                for l in adj.get(n, []):
                    m = l.other(n).node
                    if m not in seen:
                        seen.add(m)
                        parent[m] = l
                        order.append(m)
            flood = {n: self._label(st, n, f"replicate {svc.name} from {x}") for n in order[1:]}
            for n in order:
                outs = []
                for l in adj.get(n, []):
                    if parent.get(n) is l:
                        continue
                    child = l.other(n).node
                    nh = self._nhlfe(st, n)
                    ops.add("nhlfe", n, "nhlfe_add", id=nh, nexthop=self.nexthop_id(n, l.end(n).port),
                            label=flood[child])
                    outs.append(nh)
                if n == x:
                    branches[x] = outs
                    continue
                p = {"label": flood[n], "type": "replicate", "rpf_port": parent[n].end(n).port, "branches": outs}
                if n in members:
                    p.update(service=svc.index, source=self.source_id(x))
                ops.add("label", n, "label_add", **p)
        for m in members:
            ops.add("service", m, "service_add", id=svc.index, type="elan", name=svc.name,
                    remotes=remotes[m], branches=branches[m])
        self._circuits(svc, st, ops)

    # ---- changes ------------------------------------------------------------------------
    def repoint_eline(self, name: str, nodes, drain_s: float = 0.2) -> None:
        """Move an E-Line onto the path through `nodes` (from its first
        circuit's node to its second's; the reverse direction takes the
        reverse path), make-before-break: the new transit entries and head
        nhlfe first, then the service's nhlfe is replaced (one atomic
        service_add), then, after frames already on the old path have
        drained, the old entries are deleted."""
        st = self.services[name]
        svc = self.topo.service(name)
        a, b = svc.circuits
        nodes = list(nodes)
        if nodes[0] != a.node or nodes[-1] != b.node:
            raise ValueError(f"{name}: a path from {a.node} to {b.node} is needed, got {nodes}")
        old = []
        for src, dst, seq in ((a.node, b.node, nodes), (b.node, a.node, nodes[::-1])):
            prev = st.lsps[(src, dst)]
            ops = _Ops()
            lsp = self._lsp(st, self.hops_via(seq), prev.labels[-1], ops, f"{name} {src}->{dst}")
            ops.apply(self.client_for)  # phases: nhlfes, then swap labels
            self.client_for(src).call("service_add", id=st.id, type="eline", name=name, nhlfe=lsp.head_nhlfe)
            st.lsps[(src, dst)] = lsp
            old.append((src, prev))
        time.sleep(drain_s)
        for src, prev in old:
            self._remove_lsp(st, src, prev)

    def _remove_lsp(self, st: ServiceState, src: str, lsp: LSP) -> None:
        # Upstream first: the head nhlfe (no longer used by the service), then
        # each transit label before the nhlfe it points to.
        self.client_for(src).call("nhlfe_del", id=lsp.head_nhlfe)
        st.nhlfes[src].remove(lsp.head_nhlfe)
        for node, label, nh in reversed(lsp.transit):
            self.client_for(node).call("label_del", label=label)
            self.client_for(node).call("nhlfe_del", id=nh)
            del st.labels[node][label]
            st.nhlfes[node].remove(nh)

    def remove(self, name: str) -> None:
        """Delete everything a service installed: circuits (traffic stops
        entering), labels, services, nhlfes."""
        st = self.services.pop(name)
        for node, cs in st.circuits.items():
            for cid, _, _ in cs:
                self.client_for(node).call("circuit_del", id=cid)
        for node, labels in st.labels.items():
            for l in labels:
                self.client_for(node).call("label_del", label=l)
        for node in st.circuits:
            self.client_for(node).call("service_del", id=st.id)
        for node, nhs in st.nhlfes.items():
            for nh in nhs:
                self.client_for(node).call("nhlfe_del", id=nh)

    # ---- reading back ---------------------------------------------------------------------
    def describe(self) -> list:
        """Human-readable lines: every service, its circuits, LSPs and tree."""
        out = []
        for st in self.services.values():
            circ = ", ".join(f"{n}/{p}.{'untagged' if v == UNTAGGED else v}"
                             for n, cs in st.circuits.items() for _, p, v in cs)
            out.append(f"{st.name} ({st.type}, id {st.id}): {circ}")
            for lsp in st.lsps.values():
                out.append(f"    unicast  {lsp.describe()}")
            if st.tree:
                out.append("    flood tree " + ", ".join(f"{l.a.node}/{l.a.port}-{l.b.node}/{l.b.port}" for l in st.tree))
            for node, labels in st.labels.items():
                for l, what in labels.items():
                    out.append(f"    label {node:>8} {l:>6}  {what}")
        return out
