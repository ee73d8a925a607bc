#!/usr/bin/env bash
# make demo / make demo-down: the fabric of examples/demo.yaml (two spines,
# three leaves, five hosts) in network namespaces, run by the real control
# plane: e3-controller (embedded etcd) and one e3-agent per e3-vswitchd.
#   scripts/demo.sh up       tear down any demo, bring it up as "demo", apply
#                            the whole file with e3ctl, check the services with
#                            ping and iperf3, summarise; it keeps running
#   scripts/demo.sh status   the controller's view and the datapaths' counters
#   scripts/demo.sh down     stop every process (PIDs in /run/e3/demo), remove
#                            the namespaces demo-* and /run/e3/demo
# Builds nothing: `make demo` builds first. See docs/control-plane.md
# ("Running the fabric") and tests/lab/demo_controller.py.
set -euo pipefail
cd "$(dirname "$0")/.."
TOPOLOGY=${E3_DEMO_TOPOLOGY:-examples/demo.yaml}
export PYTHONPATH="$PWD/tests:$PWD/datapath/client${PYTHONPATH:+:$PYTHONPATH}"

cmd=${1:-up}
case "$cmd" in
  up|down|status)
    [ "$(id -u)" = 0 ] || { echo "demo: needs root (network namespaces)" >&2; exit 1; }
    exec python3 -m lab.demo_controller "$cmd" "$TOPOLOGY"
    ;;
  *)
    echo "usage: $0 up|down|status" >&2
    exit 2
    ;;
esac
