"""Command line of the lab: a statically programmed fabric (no controller).

  python3 -m lab up TOPOLOGY [--prefix P]      build, program statically, check, summarise; leave running
  python3 -m lab down TOPOLOGY [--prefix P]    stop the datapaths, remove the namespaces
  python3 -m lab status TOPOLOGY [--prefix P]  counters of a running lab
"""

from __future__ import annotations

import argparse
import sys

from .lab import Lab, LabError
from .vswitchd import rpc_module
from .static import StaticProgrammer
from .topology import TopologyError
from . import traffic


def _h(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)))


def check_services(lab: Lab, seconds: int) -> list:
    """ping every pair of each service's hosts and one iperf3 run per
    service; returns the lines of failures (empty = all passed)."""
    failures = []
    for svc in lab.topo.services:
        ends = [lab.topo.circuit_host(c) for c in svc.circuits]
        for i, (ha, ia) in enumerate(ends):
            for hb, ib in ends[i + 1:]:
                traffic.ping_until(lab, ha.name, ib.address)
                r = traffic.ping(lab, ha.name, ib.address, count=5)
                ok = "ok  " if r.ok else "FAIL"
                line = f"{ok} {svc.name:8} ping   {ha.name}({ia.ifname}) -> {hb.name} {ib.address}: {r.received}/{r.sent} replies"
                print(line)
                if not r.ok:
                    failures.append(line)
        (ha, ia), (hb, ib) = ends[0], ends[1]
        try:
            res = traffic.iperf3(lab, ha.name, hb.name, ib.address, seconds=seconds)
            print(f"ok   {svc.name:8} iperf3 {ha.name} -> {hb.name} {ib.address}: "
                  f"{res.received_bytes / 1e6:.1f} MB in {seconds}s, {res.bits_per_second / 1e6:.0f} Mbit/s, "
                  f"{res.retransmits} retransmits")
        except LabError as e:
            line = f"FAIL {svc.name:8} iperf3 {ha.name} -> {hb.name}: {e}"
            print(line)
            failures.append(line)
    return failures


def print_counters(lab: Lab) -> None:
    for n in lab.topo.nodes:
        c = lab.client(n.name)
        print(f"{n.name}:")
        for p in c.call("port_list"):
            st = p.get("stats", {})
            drops = {k: v for k, v in st.get("drops", {}).items() if v}
            print(f"  port {p['name']:6} {p['kind']:8} rx {st.get('rx_pkts', 0):>8} tx {st.get('tx_pkts', 0):>8}"
                  + (f"  drops {drops}" if drops else ""))
        for l in c.call("label_list"):
            if l.get("pkts"):
                print(f"  label {l['label']:>6} {l['type']:9} {l['pkts']:>8} pkts")


def cmd_up(lab: Lab, args) -> int:
    lab.safety_net = False  # the fabric stays up after this process exits
    print(f"bringing up {lab.topology_path} as '{lab.prefix}' (namespaces {lab.prefix}-*, state in {lab.run_dir})")
    try:
        lab.up()
        prog = StaticProgrammer(lab.topo, lab.client)
        prog.program()
    except Exception:
        lab.down()
        raise
    t = lab.topo
    _h("nodes (one e3-vswitchd each, in its own namespace)")
    for n in t.nodes:
        ports = ", ".join(f"{p['name']}({p['kind']}{' ' + p['mac'] if 'mac' in p else ''})" for p in lab.port_confs(n.name))
        print(f"{n.name:7} {n.role:5} pid {lab.pid(n.name):<7} {lab.node_socket(n.name)}  ports: {ports}")
    _h("fabric links (veth pairs)")
    for l in t.links:
        print(f"{l.a.node}/{l.a.port} <-> {l.b.node}/{l.b.port}  cost {l.cost}")
    _h("hosts (namespaces, VLAN sub-interfaces of eth0)")
    for h in t.hosts:
        ifs = ", ".join(f"{i.ifname} {i.ip} {i.mac}" for i in h.interfaces)
        where = f"behind {h.behind}" if h.behind else f"on {h.node}/{h.port}"
        print(f"{lab.ns(h.name):10} {where}: {ifs}")
    _h("services, paths and labels (programmed by tests/lab/static.py)")
    print("\n".join(prog.describe()))
    _h("traffic")
    failures = check_services(lab, args.seconds)
    _h("counters")
    print_counters(lab)
    _h("explore")
    explore = []
    if t.services:
        svc = t.services[0]
        (ha, _), (_, ib) = [t.circuit_host(c) for c in svc.circuits[:2]]
        explore.append((f"ip netns exec {lab.ns(ha.name)} ping {ib.address}", f"{svc.name} from {ha.name}"))
    n0 = t.nodes[0].name
    spine = t.links[0].b
    again = f"PYTHONPATH=tests:datapath/client python3 -m lab {{}} {lab.topology_path} --prefix {lab.prefix}"
    explore += [
        (f"build/bin/e3-dpctl -s {lab.node_socket(n0)} port list", f"{n0}'s ports and counters"),
        (f"build/bin/e3-dpctl -s {lab.node_socket(n0)} label list", f"{n0}'s label table"),
        (f"build/bin/e3-dpctl -s {lab.node_socket(n0)} mac list", "learned MACs"),
        (f"ip netns exec {lab.ns(spine.node)} tcpdump -eni {spine.port} -c 5 mpls",
         f"fabric frames {spine.node} receives"),
        (f"ip netns exec {lab.ns(t.hosts[0].name)} bash", f"a shell in host {t.hosts[0].name}"),
        (again.format("status"), "counters again"),
        (again.format("down"), "remove everything"),
    ]
    return conclude(explore, failures, again.format("down"))


def conclude(explore, failures, down: str, widest: int = 0) -> int:
    """Print what to look at next (command, why), aligned on commands up to
    widest characters (0: all), then the checks' verdict; the exit status."""
    width = max(len(c) for c, _ in explore if not widest or len(c) < widest)
    for c, why in explore:
        print(f"{c:{width}}   # {why}")
    if failures:
        print(f"\n{len(failures)} check(s) FAILED (the fabric is left up to look at):")
        print("\n".join(failures))
        return 1
    print(f"\nall checks passed; the fabric keeps running until `{down}`")
    return 0


def rpc_error():
    return rpc_module().RpcError


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m lab", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["up", "down", "status"])
    ap.add_argument("topology")
    ap.add_argument("--prefix", help="namespace/socket prefix (default: the topology's name)")
    ap.add_argument("--seconds", type=int, default=2, help="iperf3 run time per service")
    args = ap.parse_args(argv)
    try:
        lab = Lab(args.topology, args.prefix, safety_net=False)
        if args.command == "down":
            lab.down()
            print(f"'{lab.prefix}' removed")
            return 0
        if args.command == "status":
            print_counters(lab)
            return 0
        return cmd_up(lab, args)
    except (LabError, TopologyError, rpc_error()) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
