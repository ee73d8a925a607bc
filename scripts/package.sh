#!/usr/bin/env bash
# make package: the fabric's Debian packages (debhelper; packaging/debian)
# in build/package/, checked by lintian. The version is the datapath's
# (datapath/meson.build) plus the commit count; E3_PACKAGE_VERSION sets
# another (an upgrade test builds a newer one from the same tree).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=$root/build/package
base=$(sed -n "s/^  version: '\(.*\)',$/\1/p" datapath/meson.build)
count=$(git rev-list --count HEAD 2>/dev/null || echo 0)
version=${E3_PACKAGE_VERSION:-$base+git$count}
src=$out/e3fabric-$version

rm -rf "$out"
mkdir -p "$src"
# The source: what git tracks or would track, and the page's vendored
# library (scripts/web.sh), which git ignores.
{ git ls-files -co --exclude-standard; find control/internal/web/static/vendor -type f; } |
  grep -v '^packaging/debian/' | tar -cf - -T - | tar -xf - -C "$src"
cp -r packaging/debian "$src/debian"
cat > "$src/debian/changelog" <<CHANGELOG
e3fabric ($version) unstable; urgency=medium

  * Built from $(git rev-parse --short HEAD 2>/dev/null || echo a tree without git).

 -- e3fabric developers <dev@e3fabric.org>  $(git log -1 --format=%aD 2>/dev/null || date -R)
CHANGELOG

# The Go programs build from this machine's module cache (make build filled it).
GOMODCACHE=$(go env GOMODCACHE)
GOCACHE=$(go env GOCACHE)
export GOMODCACHE GOCACHE
(cd "$src" && dpkg-buildpackage -b -us -uc --no-sign -j"$(nproc)") > "$out/build.log" 2>&1 || {
  tail -40 "$out/build.log"; echo "package: dpkg-buildpackage failed (log: $out/build.log)"; exit 1; }
changes=$(ls "$out"/e3fabric_*.changes)
# Errors fail the build; warnings and notes are shown.
lintian --fail-on error "$changes" | tee "$out/lintian.txt"
ls "$out"/*.deb
