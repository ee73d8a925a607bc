#!/usr/bin/env bash
# make demo / make demo-down: an emulated fabric in network namespaces,
# programmed statically (no controller), checked with ping and iperf3.
#   scripts/demo.sh up       (re)build the fabric of examples/static-3node.yaml
#                            as "demo", program its services, check, summarise;
#                            it keeps running afterwards
#   scripts/demo.sh status   the datapaths' counters
#   scripts/demo.sh down     stop the datapaths (PIDs in /run/e3/demo/*.pid),
#                            remove the namespaces demo-*
# Builds nothing: `make demo` builds first. See docs/lab.md.
set -euo pipefail
cd "$(dirname "$0")/.."
TOPOLOGY=${E3_DEMO_TOPOLOGY:-examples/static-3node.yaml}
PREFIX=demo
export PYTHONPATH="$PWD/tests:$PWD/datapath/python${PYTHONPATH:+:$PYTHONPATH}"

cmd=${1:-up}
case "$cmd" in
  up)
    if [ ! -x build/bin/e3-vswitchd ]; then
      echo "demo: build/bin/e3-vswitchd is missing; run 'make demo' (it builds first)" >&2
      exit 1
    fi
    [ "$(id -u)" = 0 ] || { echo "demo: needs root (network namespaces)" >&2; exit 1; }
    # `up` starts from a clean slate: the lab tears down any demo first.
    exec python3 -m lab up "$TOPOLOGY" --prefix "$PREFIX"
    ;;
  down|status)
    exec python3 -m lab "$cmd" "$TOPOLOGY" --prefix "$PREFIX"
    ;;
  *)
    echo "usage: $0 up|down|status" >&2
    exit 2
    ;;
esac
