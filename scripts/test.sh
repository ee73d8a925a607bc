#!/usr/bin/env bash
# Every test of the project, in the order a failure is cheapest to read:
# static checks (scripts/lint.sh), C unit tests, Go tests, then the Python
# suites that run real processes (RPC, packet, benchmark-harness,
# end-to-end). Prints one summary at the end.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export PATH="$PWD/build/bin:$PATH"
failed=()

step() {
  local name=$1 start=$SECONDS; shift
  echo "=== $name: $*"
  if "$@"; then echo "=== $name: ok ($((SECONDS - start)) s)"
  else echo "=== $name: FAILED ($((SECONDS - start)) s)"; failed+=("$name"); fi
}

# What datapath/api/gen.py generates from the schema must be current.
step generated python3 datapath/api/gen.py --check
step lint scripts/lint.sh
step datapath-unit meson test -C build/datapath --print-errorlogs
if [ -f control/go.mod ]; then
  # Under the race detector: the controller plans on every CPU, and the
  # agent and its RPC client run several goroutines.
  step control-go bash -c 'cd control && go vet ./... && go test -race -count=1 ./...'
fi
pysuites=()
for d in datapath/tests/rpc tests/packet tests/bench tests/e2e tests/control tests/contract tests/package; do
  compgen -G "$d/test_*.py" >/dev/null && pysuites+=("$d")
done
if [ ${#pysuites[@]} -gt 0 ]; then
  step python python3 -m pytest -q -p no:cacheprovider --durations=30 "${pysuites[@]}"
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "make test: FAILED: ${failed[*]}"
  exit 1
fi
echo "make test: all suites passed"
