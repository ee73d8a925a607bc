"""`make demo`: the fabric of examples/demo.yaml run by the real control
plane, and left running to explore.

  python3 -m lab.demo_controller up     [TOPOLOGY]   tear down any demo, bring it up, apply the
                                                     file's services with e3ctl, check, summarise
  python3 -m lab.demo_controller status [TOPOLOGY]   controller's view and datapath counters
  python3 -m lab.demo_controller down   [TOPOLOGY]   stop every process by PID, remove namespaces and state

The lab (lab.py) builds namespaces, veths and hosts and starts one
e3-vswitchd per node with nothing in it; e3-controller (embedded etcd, data
under /run/e3/demo/control) and one e3-agent per node (control.py) do the
rest. The services are made by `e3ctl apply -f` of the same file, as an
operator would. Called by scripts/demo.sh.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from .__main__ import check_services, conclude, print_counters
from .control import BIN, ControlPlane
from .lab import REPO, Lab, LabError
from .vswitchd import rpc_module
from .topology import TopologyError

PREFIX = "demo"
TOPOLOGY = REPO / "examples" / "demo.yaml"
# Loopback ports of the demo's controller API and embedded etcd (client, peer),
# and the first of the agents' /metrics (one per node, in topology order).
API_PORT, ETCD_PORT = 23830, 23831
METRICS_PORT = 23840


def header(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 70 - len(title)), flush=True)


def make(topology, prefix: str) -> tuple[Lab, ControlPlane]:
    lab = Lab(topology, prefix, safety_net=False)
    cp = ControlPlane(lab, lab.run_dir / "control", api_port=API_PORT, etcd_port=ETCD_PORT, safety_net=False,
                      metrics_port=METRICS_PORT)
    return lab, cp


def down(lab: Lab, cp: ControlPlane) -> None:
    cp.stop_all()
    lab.down()
    shutil.rmtree(lab.run_dir, ignore_errors=True)


def e3ctl_shown(cp: ControlPlane, *args) -> str:
    """Run e3ctl as an operator would, printing the command and its output."""
    print(f"$ e3ctl {' '.join(map(str, args))}")
    out = cp.e3ctl(*args).stdout.rstrip()
    print(out)
    return out


def cmd_up(lab: Lab, cp: ControlPlane, seconds: int) -> int:
    t = lab.topo
    print(f"bringing up {lab.topology_path} as '{lab.prefix}': namespaces {lab.prefix}-*, state in {lab.run_dir}")
    down(lab, cp)  # `up` starts from a clean slate
    try:
        lab.up(start=True, ports=False)
        cp.start()
    except BaseException:
        down(lab, cp)
        raise

    header("processes")
    print(f"e3-controller  pid {cp.controller.pid():<7} API {cp.server}, embedded etcd {cp.etcd_endpoints}, "
          f"data {cp.data_dir}")
    for n in t.nodes:
        print(f"{n.name:7} {n.role:5}  e3-vswitchd pid {lab.pid(n.name):<7} e3-agent pid {cp.agents[n.name].pid():<7} "
              f"socket {lab.node_socket(n.name)}")
    print(f"logs: {cp.state_dir}/*.log (control plane), {lab.run_dir}/<node>.log (datapaths)")
    print(f"metrics: {cp.metrics_url()} (bearer token: read-only or admin)")
    for n in t.nodes:
        print(f"         {cp.metrics_url(n.name)}")

    header("services: the whole file applied with e3ctl (the controller started with its topology)")
    e3ctl_shown(cp, "apply", "-f", lab.topology_path)
    # "pending" above: a new service is, until every node it needs has applied it.
    cp.wait_converged()
    for svc in t.services:
        cp.wait_service(svc.name)
    print(f"every node's agent has applied its desired config: {', '.join(s.name for s in t.services)} programmed")

    header("traffic: ping between every pair of each service's hosts, one iperf3 per service")
    failures = check_services(lab, seconds)

    header("what the controller computed: paths and labels")
    for svc in t.services:
        e3ctl_shown(cp, "service", "show", svc.name)
        print()
    e3ctl_shown(cp, "service", "list")
    print()
    e3ctl_shown(cp, "node", "list")
    print()
    e3ctl_shown(cp, "link", "list")

    header("operator's view (docs/operations.md)")
    print(f"fabric page:  {cp.server}/ui/#token={cp.read_token}")
    print(f"              (the controller's certificate is self-signed: {cp.ca_file})")
    print(f"metrics:      {cp.metrics_url()} and " + ", ".join(cp.metrics_url(n.name) for n in t.nodes))
    for name in [s.name for s in t.services if s.name == "red"]:
        print()
        e3ctl_shown(cp, "service", "ping", name)
        print()
        e3ctl_shown(cp, "service", "trace", name)

    header("datapath counters (JSON-RPC port_list / label_list of every node)")
    print_counters(lab)

    header("explore")
    first = t.services[0] if t.services else None
    explore = [
        (f"export PATH=$PWD/build/bin:$PATH E3_SERVER={cp.server} E3_CA={cp.ca_file} E3_TOKEN=$(cat {cp.token_file})",
         "e3ctl's controller (HTTPS, its self-signed certificate as CA) and admin token"),
        (f"E3_TOKEN=$(cat {cp.data_dir / 'token.read'}) e3ctl service list", "reads with the read-only token"),
        ("e3ctl status", "leader, generation, nodes and links up"),
        ("e3ctl service show red", "paths, labels per node, status"),
        ("e3ctl service create eline test --circuit leaf3:cust1:99 --circuit leaf1:cust1:99", "a new service"),
        ("e3ctl service create elan violet --circuit leaf1:cust3 --circuit @site1",
         "h7, and h6 and h8: a site on leaf2 and leaf3 (docs/multihoming.md)"),
        (f"ip netns exec {lab.ns('h7')} ping 10.60.0.8; e3ctl service show violet",
         "to the site's second host; its DF, aliasing and source id"),
        ("e3ctl service create eline cyan --ecmp --circuit leaf2:cust2:41 --circuit leaf3:cust1:41",
         "an E-Line whose flows take both spines (ECMP)"),
        (f"ip -n {lab.ns('leaf1')} link set fab1 down; e3ctl service show red", "fail a link: red moves to its backup"),
        (f"ip -n {lab.ns('leaf1')} link set fab1 up", "repair it: red moves back"),
        (f"e3-dpctl -s {lab.node_socket('leaf1')} bfd list", "leaf1's BFD sessions (in-band OAM, docs/ha.md)"),
        (f"kill -STOP {lab.pid('spine1')}; sleep 1; e3ctl link list; kill -CONT {lab.pid('spine1')}",
         "hang spine1: its neighbours' BFD takes it out, the leaves fail over"),
        ("e3ctl events", "failures, local and global repairs, and what they took"),
        (f"curl -s -H \"Authorization: Bearer $(cat {cp.data_dir / 'token.read'})\" {cp.metrics_url('leaf1')} | grep ^e3_service",
         "leaf1's service counters, as Prometheus scrapes them (the read-only token)"),
        (f"curl -s --cacert {cp.ca_file} -H \"Authorization: Bearer $E3_TOKEN\" {cp.metrics_url()} | grep ^e3_controller",
         "the controller's metrics (examples/prometheus.yml scrapes them all)"),
        (f"e3-dpctl -s {lab.node_socket('leaf1')} runtime", "cycles per frame of each stage, as VPP's show runtime"),
        ("e3ctl service ping green; e3ctl service trace green", "MPLS echo in the pseudowires, to every member"),
        (f"e3-dpctl -s {lab.node_socket('spine1')} label list", "a spine's label table"),
        (f"e3-dpctl -s {lab.node_socket('leaf1')} port list", "a leaf's ports and counters"),
        (f"e3-dpctl -s {lab.node_socket('leaf1')} mac list", "MACs the E-LANs learned"),
    ]
    if first:
        (ha, _), (_, ib) = [t.circuit_host(c) for c in first.circuits[:2]]
        explore.append((f"ip netns exec {lab.ns(ha.name)} ping {ib.address}", f"{first.name} from {ha.name}"))
    explore += [
        (f"ip netns exec {lab.ns('spine1')} tcpdump -eni fab1 -c 5 mpls", "fabric frames spine1 receives (while the ping runs)"),
        ("scripts/demo.sh status", "the controller's view and counters again"),
        ("make demo-down", "stop everything, remove the namespaces"),
    ]
    return conclude(explore, failures, "make demo-down", widest=90)


def cmd_status(lab: Lab, cp: ControlPlane) -> int:
    if not cp.controller.running():
        print(f"no demo controller running (state {cp.state_dir}); `make demo` starts one", file=sys.stderr)
        return 1
    for args in (["status"], ["service", "list"], ["node", "list"]):
        e3ctl_shown(cp, *args)
        print()
    header("datapath counters")
    print_counters(lab)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m lab.demo_controller", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["up", "down", "status"])
    ap.add_argument("topology", nargs="?", default=str(TOPOLOGY))
    ap.add_argument("--prefix", default=PREFIX, help="namespace/state prefix (default %(default)s)")
    ap.add_argument("--seconds", type=int, default=3, help="iperf3 run time per service")
    args = ap.parse_args(argv)
    try:
        for b in ("e3-controller", "e3-agent", "e3ctl", "e3-vswitchd"):
            if not (BIN / b).exists():
                raise LabError(f"{BIN / b}: not built (make build)")
        lab, cp = make(Path(args.topology), args.prefix)
        if args.command == "down":
            down(lab, cp)
            print(f"demo '{lab.prefix}' removed (processes stopped, namespaces {lab.prefix}-* and {lab.run_dir} gone)")
            return 0
        if args.command == "status":
            return cmd_status(lab, cp)
        return cmd_up(lab, cp, args.seconds)
    except (LabError, TopologyError, rpc_module().RpcError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
