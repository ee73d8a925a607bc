#!/usr/bin/env bash
# The fabric page's vendored library: cytoscape.js from the npm registry at
# the version control/internal/web/package-lock.json pins, copied into
# static/vendor, which the controller embeds. Idempotent: npm runs only
# when the copy is missing or not the pinned version.
set -euo pipefail
cd "$(dirname "$0")/../control/internal/web"
want=$(python3 -c 'import json; print(json.load(open("package-lock.json"))["packages"]["node_modules/cytoscape"]["version"])')
have=$(cat static/vendor/cytoscape.version 2>/dev/null || true)
[ "$have" = "$want" ] && [ -f static/vendor/cytoscape.min.js ] && exit 0
echo "web: cytoscape $want from the npm registry"
npm ci --no-audit --no-fund --ignore-scripts --loglevel=error
mkdir -p static/vendor
cp node_modules/cytoscape/dist/cytoscape.min.js static/vendor/
cp node_modules/cytoscape/LICENSE static/vendor/cytoscape.LICENSE
echo "$want" > static/vendor/cytoscape.version
