#!/usr/bin/env bash
# Install what building, testing, the demo and the benchmarks need, from
# Debian's packages and the Go proxy. Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."
PKGS=(
  build-essential pkg-config meson ninja-build
  dpdk dpdk-dev libdpdk-dev libjansson-dev libpcap-dev libbsd-dev libmd-dev
  iproute2 ethtool iputils-ping iperf3 tshark tcpdump procps psmisc
  python3-scapy python3-pytest python3-yaml python3-prometheus-client python3-selenium
  etcd-server etcd-client chromium chromium-driver
  debhelper lintian mmdebstrap systemd python3-venv
  shellcheck flake8
  openvswitch-switch-dpdk
)
# OVS-DPDK is in make test too: tests/bench packs it into bench/bundle.sh's archive.
[ "${1:-}" = "--bench" ] && PKGS+=(python3-matplotlib linux-perf valgrind)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# The fabric page's library comes from the npm registry (scripts/web.sh).
command -v npm >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nodejs npm; }
# The images' python3 may not be Debian's: make sure the one on PATH has the modules.
# vermin judges which python3 the benchmark's bundle needs (tests/bench).
python3 -c 'import scapy, pytest, yaml, prometheus_client, selenium, vermin' 2>/dev/null ||
  python3 -m pip install -q scapy pytest pyyaml prometheus_client selenium vermin
# Schemathesis (the API contract's judge, tests/contract) in a venv of its
# own: Debian has no package of it, and it must not change the system's python.
ST_VERSION=4.32.5
if ! build/st/bin/st --version 2>/dev/null | grep -q "$ST_VERSION"; then
  python3 -m venv build/st
  build/st/bin/pip install -q "schemathesis==$ST_VERSION"
fi
