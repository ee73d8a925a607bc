#!/usr/bin/env bash
# The benchmark: link limit vs e3-vswitchd vs OVS-DPDK over memif, RFC 2544
# zero-loss rate and latency per scenario and table size, then a perf
# profile of e3-vswitchd, then bench/RESULTS.md and bench/results.png.
#
#   bench/run.sh           full run (all scenarios, 1 .. 1M entries, PVP), 3 rounds, ~50 min
#   bench/run.sh --quick   E-LAN unicast at 1, 20k and 1M MACs, label swap at 1 and 20k, PVP
#                          E-Line, E-Line through a VM's port; 3 rounds, ~20 min
#   extra arguments go to bench/bench.py (e.g. --rounds 3, --sizes 1,20000)
#
# CPUs: on 2, the generator on 0 and the switch on 1; on more, as
# bench/benchlib/cpus.py derives (or bench.py --cpus). Reserves 2 MiB
# hugepages while it runs (given back at the end). Raw results:
# bench/out/<run>/. Another server: bench/bundle.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/deps.sh --bench
make --no-print-directory datapath >/dev/null

quick=0
for a in "$@"; do [ "$a" = "--quick" ] && quick=1; done
out="bench/out/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$out"

# A run that stops early still reports the points it saved.
rc=0
python3 bench/bench.py --out "$out" "$@" 2>&1 | tee "$out/bench.log" || rc=$?
[ -f "$out/results.json" ] || exit "$((rc ? rc : 1))"

# perf needs no hardware counters here: it samples cpu-clock.
if [ "$quick" = 1 ]; then sizes="elan-unicast=1,elan-unicast=20000"
else sizes="elan-unicast=1,elan-unicast=1000000,label-swap=1000000"; fi
python3 bench/profile.py --out "$out" --sizes "$sizes" --seconds 5 2>&1 | tee "$out/profile.log" \
  || echo "run.sh: profiling failed (see $out/profile.log); the results stand without it"

# The report needs matplotlib: Debian's python3-matplotlib (scripts/deps.sh
# --bench) if the python3 on PATH lacks it.
py=python3
python3 -c 'import matplotlib' 2>/dev/null || py=/usr/bin/python3
"$py" bench/report.py "$out/results.json"
exit "$rc"
