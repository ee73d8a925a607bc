#!/usr/bin/env bash
# The benchmark as one archive that runs on any x86-64 Linux server, with no
# DPDK or OVS installed there:
#
#   bench/bundle.sh [ARCHIVE]        (default bench/out/e3-bench.tar.gz)
#
#   then, on the server, as root:
#   tar xzf e3-bench.tar.gz && e3-bench/run [--quick] [bench.py options]
#   -> e3-bench/RESULTS.md (and the plots, where python3 has matplotlib)
#
# What it holds:
#   bin/      a launcher per program: the bundled dynamic loader runs it on
#             the bundled libraries, so the server's own glibc and libraries
#             do not matter
#   libexec/  e3-vswitchd, e3-pktgen, dpdk-testpmd, ovs-vswitchd (DPDK),
#             ovsdb-server, ovsdb-tool, ovs-vsctl, ovs-ofctl, ovs-appctl
#   lib/      every shared library they load, by soname, and the loader;
#             lib/dpdk/pmds-ABI/ the DPDK drivers the benchmark needs, named
#             as EAL's -d loads a folder's files (librte_*.so.ABI, the full
#             ABI version: 23.0, not the soname's 23); each is a link to its
#             library in lib/, so a driver that a program also links (testpmd
#             links the vdev bus) is loaded once, not twice
#   bench/, datapath/client/  the harness; share/openvswitch/ OVS's schema
#   run       the one command; MANIFEST  what was bundled, from where
#
# The server needs bash, python3 (3.7 or newer: Debian 10, Ubuntu 20.04,
# RHEL 8's python38), util-linux (taskset, chrt, mount) and coreutils
# (stdbuf); hugepages are reserved by the harness.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
archive=${1:-bench/out/e3-bench.tar.gz}
case $archive in /*) ;; *) archive=$root/$archive ;; esac

make --no-print-directory datapath >/dev/null

PMDS=$(pkg-config --variable=pmdsdir libdpdk 2>/dev/null || true)
[ -n "$PMDS" ] || PMDS=$(ls -d /usr/lib/*/dpdk/pmds-* | head -1)
ABI=${PMDS##*pmds-}
# The drivers a run loads: the vdev bus, the default mempool, memif, and
# vhost-user with virtio_user for PVP.
DRIVERS=(bus_vdev mempool_ring net_memif net_vhost net_virtio)
PROGRAMS=(
  "$root/build/datapath/e3-vswitchd"
  "$root/build/datapath/pktgen/e3-pktgen"
  /usr/bin/dpdk-testpmd
  /usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk
  /usr/sbin/ovsdb-server /usr/bin/ovsdb-tool /usr/bin/ovs-vsctl /usr/bin/ovs-ofctl /usr/bin/ovs-appctl
)
for p in "${PROGRAMS[@]}"; do
  [ -x "$p" ] || { echo "bundle: $p is missing (make datapath; scripts/deps.sh --bench)" >&2; exit 1; }
done

stage=$(mktemp -d /tmp/e3-bundle.XXXXXX)
trap 'rm -rf "$stage"' EXIT
b=$stage/e3-bench
mkdir -p "$b"/{bin,libexec,lib/dpdk/pmds-$ABI,share/openvswitch,bench/benchlib,datapath/client}

# Every library an ELF file needs, by the name it asks for (ldd's "name =>
# path"), and the loader itself.
add_libs() {
  ldd "$1" | while read -r name arrow path _; do
    if [ "$arrow" = "=>" ] && [ -f "$path" ]; then
      [ -e "$b/lib/$name" ] || cp -L "$path" "$b/lib/$name"
    elif [ "${name#/}" != "$name" ] && [ -f "$name" ]; then
      [ -e "$b/lib/$(basename "$name")" ] || cp -L "$name" "$b/lib/$(basename "$name")"
    fi
  done
}

for p in "${PROGRAMS[@]}"; do
  cp -L "$p" "$b/libexec/"
  add_libs "$p"
done
for d in "${DRIVERS[@]}"; do
  f=$PMDS/librte_$d.so.$ABI
  [ -e "$f" ] || { echo "bundle: no DPDK driver $f" >&2; exit 1; }
  soname=$(objdump -p "$f" | awk '$1 == "SONAME" {print $2}')
  [ -e "$b/lib/$soname" ] || cp -L "$f" "$b/lib/$soname"
  ln -s "../../$soname" "$b/lib/dpdk/pmds-$ABI/librte_$d.so.$ABI"
  add_libs "$f"
done

loader=$(cd "$b/lib" && ls ld-linux-x86-64.so.* | head -1)
# stdbuf's preload library, built for the bundled glibc (the launchers below).
STDBUF_LIB=$(for d in /usr/libexec/coreutils /usr/lib/coreutils; do
  [ -f "$d/libstdbuf.so" ] && echo "$d/libstdbuf.so" && break; done)
[ -n "$STDBUF_LIB" ] || { echo "bundle: coreutils' libstdbuf.so is missing" >&2; exit 1; }
cp -L "$STDBUF_LIB" "$b/lib/libstdbuf.so"
for p in "${PROGRAMS[@]}"; do
  name=$(basename "$p")
  cat > "$b/bin/$name" <<EOF
#!/bin/sh
# $name from the bundle: its loader, its libraries.
here=\$(dirname "\$(readlink -f "\$0")")/..
lib=\${E3_BUNDLE_LIB:-\$here/lib}
# The harness runs testpmd under stdbuf, which preloads the server's
# libstdbuf.so: built for the server's glibc, it can need symbol versions the
# bundled glibc lacks, and the loader then exits 1. Preload the bundle's own.
case \${LD_PRELOAD:-} in
  *libstdbuf.so*) LD_PRELOAD=\$(echo "\$LD_PRELOAD" | sed "s|[^: ]*libstdbuf\\.so|\$lib/libstdbuf.so|g") ;;
esac
exec "\$lib/$loader" --library-path "\$lib" "\$here/libexec/$name" "\$@"
EOF
  chmod +x "$b/bin/$name"
done

cp /usr/share/openvswitch/vswitch.ovsschema "$b/share/openvswitch/"
cp bench/bench.py bench/report.py "$b/bench/"
cp bench/benchlib/*.py "$b/bench/benchlib/"
cp datapath/client/e3rpc.py datapath/client/e3schema.py "$b/datapath/client/"

dpdk_version=$(pkg-config --modversion libdpdk)
cat > "$b/run" <<EOF
#!/usr/bin/env bash
# The benchmark from this bundle: ./run [--quick] [bench.py options], as root.
# Writes RESULTS.md here; raw results in out/<run>/.
set -euo pipefail
here=\$(cd "\$(dirname "\$0")" && pwd)
[ "\$(id -u)" = 0 ] || { echo "run: needs root (hugepages, DPDK)" >&2; exit 1; }
python3 -c 'import sys; sys.exit(sys.version_info < (3, 7))' 2>/dev/null ||
  { echo "run: needs python3 3.7 or newer, found: \$(python3 --version 2>&1)" >&2; exit 1; }
# A DPDK installed here would have EAL load its own drivers beside ours (its
# plugin folder is built in): hide it from this run, in a mount namespace.
if [ -d $PMDS ] && [ -z "\${E3_BUNDLE_NS:-}" ]; then
  exec env E3_BUNDLE_NS=1 unshare --mount --propagation private \\
    bash -c 'mount -t tmpfs e3-bench $PMDS && exec "\$0" "\$@"' "\$0" "\$@"
fi
export PATH="\$here/bin:\$PATH"
export E3_VSWITCHD=\$here/bin/e3-vswitchd E3_PKTGEN=\$here/bin/e3-pktgen
export E3_TESTPMD=\$here/bin/dpdk-testpmd E3_OVS_VSWITCHD=\$here/bin/ovs-vswitchd-dpdk
export E3_OVS_SCHEMA=\$here/share/openvswitch/vswitch.ovsschema
export E3_DPDK_PLUGINS=\$here/lib/dpdk/pmds-$ABI E3_DPDK_VERSION=$dpdk_version
# EAL loads no driver from under a world-writable folder (such as /tmp),
# links resolved: the libraries then run from a private copy, in which each
# driver is still the very file its programs link.
d=\$here
while [ "\$d" != / ]; do
  if [ -n "\$(find "\$d" -maxdepth 0 -perm -0002)" ]; then
    priv=\$(mktemp -d /run/e3-bench.XXXXXX)
    trap 'rm -rf "\$priv"' EXIT
    cp -a "\$here/lib" "\$priv/"
    export E3_BUNDLE_LIB=\$priv/lib
    E3_DPDK_PLUGINS=\$priv/lib/dpdk/pmds-$ABI
    break
  fi
  d=\$(dirname "\$d")
done
out=\$here/out/\$(date +%Y%m%d-%H%M%S)
mkdir -p "\$out"
# A run that stops early still reports the points it saved.
rc=0
python3 "\$here/bench/bench.py" --out "\$out" "\$@" 2>&1 | tee "\$out/bench.log" || rc=\$?
[ -f "\$out/results.json" ] || exit "\$((rc ? rc : 1))"
python3 "\$here/bench/report.py" "\$out/results.json"
for f in RESULTS.md results.png results-scaling.png; do
  [ ! -f "\$here/bench/\$f" ] || cp "\$here/bench/\$f" "\$here/\$f"
done
echo "run: wrote \$here/RESULTS.md"
exit "\$rc"
EOF
chmod +x "$b/run"

{
  echo "e3fabric benchmark bundle"
  echo "source: $(git -C "$root" describe --always --dirty 2>/dev/null || echo unknown)"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "dpdk: $dpdk_version (drivers: ${DRIVERS[*]})"
  echo "ovs: $(/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk --version | head -1)"
  echo
  (cd "$b" && find . -type f | sort)
} > "$b/MANIFEST"

mkdir -p "$(dirname "$archive")"
tar -C "$stage" -czf "$archive" e3-bench
echo "bundle: $archive ($(du -h "$archive" | cut -f1))"
