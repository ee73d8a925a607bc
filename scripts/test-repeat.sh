#!/usr/bin/env bash
# Run the suites that flake first (C unit tests, Go tests, packet tests) many
# times and name every test that failed even once (the whole output of each
# failed run stays in build/test-repeat/). Use it before landing a
# change to concurrency, RCU, timers or a timing-sensitive test.
#
#   scripts/test-repeat.sh [-n UNIT_RUNS] [-g GO_RUNS] [-p PACKET_RUNS] [--busy]
#
# --busy keeps both CPUs loaded with spinning processes meanwhile, the way
# a shared CI machine is.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export PATH="$PWD/build/bin:$PATH"

unit_runs=20 go_runs=3 pkt_runs=3 busy=0
while [ $# -gt 0 ]; do
  case $1 in
    -n) unit_runs=$2; shift 2 ;;
    -g) go_runs=$2; shift 2 ;;
    -p) pkt_runs=$2; shift 2 ;;
    --busy) busy=1; shift ;;
    *) echo "usage: $0 [-n UNIT_RUNS] [-g GO_RUNS] [-p PACKET_RUNS] [--busy]" >&2; exit 2 ;;
  esac
done

log=$(mktemp -d)
# The whole output of every run that failed, for the tracebacks the
# summary's one line per test leaves out.
kept=build/test-repeat
rm -rf "$kept" && mkdir -p "$kept"
keep() { cp "$log/out" "$kept/$1.log"; }
hogs=()
cleanup() {
  for p in "${hogs[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$log"
}
trap cleanup EXIT
if [ "$busy" = 1 ]; then
  for _ in $(seq "$(nproc)"); do (while :; do :; done) & hogs+=($!); done
fi

declare -A fails=() why=()
unit_bins=$(find build/datapath/tests -maxdepth 1 -type f -executable -name 'test_*' | sort)
for i in $(seq "$unit_runs"); do
  for b in $unit_bins; do
    if ! "$b" >"$log/out" 2>&1; then
      keep "unit-$(basename "$b")-$i"
      # unit.h prints "FAIL name" for each failed test.
      while read -r t; do
        fails["$(basename "$b"):$t"]=$(( ${fails["$(basename "$b"):$t"]:-0} + 1 ))
      done < <(sed -n 's/^FAIL \([a-z_0-9]*\)$/\1/p' "$log/out")
    fi
  done
  printf '\runit: %d/%d' "$i" "$unit_runs"
done
echo
# A Go test that hangs fails its package at the timeout: the package is named.
for i in $(seq "$go_runs"); do
  (cd control && go test -count=1 -timeout 300s ./...) >"$log/out" 2>&1 || keep "go-$i"
  while read -r t; do
    fails["go:$t"]=$(( ${fails["go:$t"]:-0} + 1 ))
  done < <(sed -n -e 's/^ *--- FAIL: \([^ ]*\).*/\1/p' -e 's/^FAIL\t\([^ \t]*\).*/\1/p' "$log/out")
  printf '\rgo: %d/%d' "$i" "$go_runs"
done
echo
for i in $(seq "$pkt_runs"); do
  # pytest cuts its summary lines to COLUMNS (80 off a terminal), and
  # drops the message first.
  COLUMNS=400 python3 -m pytest -q -p no:cacheprovider -rf tests/packet >"$log/out" 2>&1 || keep "packet-$i"
  while read -r t; do
    fails["$t"]=$(( ${fails["$t"]:-0} + 1 ))
  done < <(sed -n 's/^FAILED \([^ ]*\).*/\1/p' "$log/out")
  # pytest -rf: "FAILED id - message"; the last message of each is shown.
  while IFS= read -r line; do
    why["${line%% *}"]=${line#* - }
  done < <(sed -n 's/^FAILED \([^ ]* - .*\)/\1/p' "$log/out")
  printf '\rpacket: %d/%d' "$i" "$pkt_runs"
done
echo

if [ ${#fails[@]} -eq 0 ]; then
  echo "test-repeat: no failure in $unit_runs unit, $go_runs Go and $pkt_runs packet runs"
  exit 0
fi
echo "test-repeat: tests that failed at least once:"
while IFS= read -r t; do
  printf '  %-60s %d time(s)\n' "$t" "${fails[$t]}"
  [ -z "${why[$t]:-}" ] || printf '      %s\n' "${why[$t]:0:300}"
done < <(printf '%s\n' "${!fails[@]}" | sort)
echo "the failed runs' whole output: $kept/"
exit 1
