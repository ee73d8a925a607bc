#!/bin/bash
# The controller at provider scale (bench/controller/README.md): 8 spines x
# 32 leaves (SPINES, LEAVES; a spine has a port per leaf, and a node takes 32)
# against a three-member etcd cluster (mutual TLS, authentication), one run
# per size, then the table of their rows. SIZES overrides the sizes; a size
# past what the fabric holds stops with the refusal that says why.
set -euo pipefail
cd "$(dirname "$0")/../../control"
go build -o "${TMPDIR:-/tmp}/e3-bench-controller" ./cmd/e3-bench-controller
bench="${TMPDIR:-/tmp}/e3-bench-controller"
rows=()
for n in ${SIZES:-10000 30000 45000}; do
  echo "== $n services"
  log=$(mktemp)
  ok=1
  "$bench" --services "$n" --spines "${SPINES:-8}" --leaves "${LEAVES:-32}" --batch 100 --snapshot=false --etcd-cluster 3 2>&1 \
    | grep --line-buffered -v '^{' | tee "$log" || ok=0
  [ "$ok" = 1 ] && rows+=("$(sed -n 's/^row: //p' "$log")") || echo "($n: stopped)"
  rm -f "$log"
done
echo
echo "| services | spines x leaves | creation | one change: median commit, written | controller RSS per service (held / returned) | Go heap per service | a new leader ready | etcd db, compacted | largest value |"
echo "| ---: | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |"
printf '%s\n' "${rows[@]}"
