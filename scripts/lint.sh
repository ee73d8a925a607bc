#!/usr/bin/env bash
# Static checks of the sources, language by language: shellcheck (warnings
# and errors) on the shell scripts, pyflakes through flake8 (which honours a
# line's `# noqa`, as pytest fixtures imported by name need) on the Python,
# staticcheck on the Go (go vet runs with the Go tests).
set -euo pipefail
cd "$(dirname "$0")/.." || exit 1
STATICCHECK=honnef.co/go/tools/cmd/staticcheck@v0.8.2

mapfile -t shell < <(git ls-files | while read -r f; do
  [ -f "$f" ] && head -n1 "$f" | grep -qE '^#!.*(bash|/sh)' && echo "$f"; done)
shellcheck -S warning "${shell[@]}"
git ls-files -z '*.py' | xargs -0 flake8 --select=F
(cd control && go run "$STATICCHECK" ./...)
echo "lint: ${#shell[@]} shell scripts, $(git ls-files '*.py' | wc -l) Python files and the Go packages are clean"
