"""DPDK telemetry (read with DPDK's own dpdk-telemetry.py) and the e3-dpctl CLI."""
import base64
import json
import os
import shutil
import subprocess

import pytest

from rpc_lab import BASE, DPCTL


def telemetry(dp, *cmds):
    """Run dpdk-telemetry.py against the datapath's file prefix; returns one
    decoded reply per command."""
    tool = shutil.which("dpdk-telemetry.py") or "/usr/bin/dpdk-telemetry.py"
    if not os.path.exists(tool):
        pytest.skip("dpdk-telemetry.py is not installed")
    out = subprocess.run([tool, "-f", dp.prefix], input="\n".join(cmds) + "\n",
                         capture_output=True, text=True, timeout=30, check=True).stdout
    # the tool echoes a JSON document per command after its banner
    dec, replies, i = json.JSONDecoder(), [], 0
    while True:
        i = out.find("{", i)
        if i < 0:
            return replies
        obj, i = dec.raw_decode(out, i)
        if not any(k in obj for k in ("version", "pid", "max_output_len")):
            replies.append(obj)


def test_telemetry_reads_e3_commands(dp, base, rpc):
    nh = BASE["nexthops"][0]["id"]
    rpc.call("bfd_add", {"id": 7, "nexthop": nh})
    ports, port, drops, info, workers, services, service, bfd = telemetry(
        dp, "/e3/ports", "/e3/port,fab0", "/e3/drops", "/e3/info", "/e3/workers",
        "/e3/services", "/e3/service,20", "/e3/bfd")
    s = bfd["/e3/bfd"]["7"]
    assert s["state"] == "down" and s["usable"] == "yes" and s["tx_pkts"] >= 1, s
    assert sorted(ports["/e3/ports"]) == sorted(p["name"] for p in BASE["ports"])
    p = port["/e3/port"]
    assert p["name"] == "fab0" and p["kind"] == "fabric"
    assert {"rx_pkts", "tx_pkts", "drops"} <= set(p)
    assert "ttl_expired" in p["drops"]
    assert "label_unknown" in drops["/e3/drops"]
    assert info["/e3/info"]["ports"] == len(BASE["ports"])
    assert info["/e3/info"]["poll_mode"] == "adaptive"
    assert len(workers["/e3/workers"]) >= 1
    assert sorted(services["/e3/services"]) == [10, 20]
    assert service["/e3/service"]["type"] == "elan"


def dpctl(dp, *args, check=True):
    r = subprocess.run([str(DPCTL), "-s", dp.sock, *args], capture_output=True, text=True,
                       timeout=60)
    if check:
        assert r.returncode == 0, r.stderr
    return r


def test_dpctl_objects(dp, rpc, tmp_path):
    dpctl(dp, "port", "add", "--name", "fab0", "--devargs", "net_null0,no-rx=1", "--kind", "fabric")
    dpctl(dp, "port", "add", "--name", "c1", "--devargs", "net_null1,no-rx=1", "--kind", "customer")
    assert dpctl(dp, "nexthop", "add", "--id", "1", "--port", "fab0",
                 "--mac", "02:00:00:00:00:01").stdout.strip() == "changed"
    assert dpctl(dp, "nexthop", "add", "--id", "1", "--port", "fab0",
                 "--mac", "02:00:00:00:00:01").stdout.strip() == "unchanged"
    dpctl(dp, "nhlfe", "add", "--id", "5", "--nexthop", "1", "--label", "1000")
    dpctl(dp, "service", "add", "--id", "20", "--type", "elan", "--remote", "1:5", "--branch", "5")
    dpctl(dp, "circuit", "add", "--id", "1", "--port", "c1", "--vlan", "untagged",
          "--service", "20")
    dpctl(dp, "label", "add", "--label", "100", "--type", "swap", "--nhlfe", "5")
    out = dpctl(dp, "port", "list").stdout
    assert out.splitlines()[0].split()[:2] == ["NAME", "KIND"]
    assert "fab0" in out and "c1" in out
    labels = json.loads(dpctl(dp, "label", "list", "--json").stdout)
    assert [(lb["label"], lb["type"], lb["nhlfe"]) for lb in labels] == [(100, "swap", 5)]
    assert "untagged" in dpctl(dp, "circuit", "list").stdout
    assert "1:5" in dpctl(dp, "service", "list").stdout
    assert "ports:" in dpctl(dp, "stats").stdout
    assert dpctl(dp, "mac", "list", "--service", "20").stdout.split() == ["SERVICE", "MAC", "WHERE",
                                                                          "AGE", "FROZEN_S"]
    # raw call
    r = json.loads(dpctl(dp, "call", "nhlfe_list").stdout)
    assert r == [{"id": 5, "nexthop": 1, "label": 1000}]
    # config dump > file; wipe; config load file
    dump = dpctl(dp, "config", "dump").stdout
    (tmp_path / "x.json").write_text(dump)
    dp.sync({"version": 1})
    assert rpc.call("label_list") == []
    assert "added: 7" in dpctl(dp, "config", "load", str(tmp_path / "x.json")).stdout
    assert json.loads(dpctl(dp, "config", "dump").stdout) == json.loads(dump)


def test_dpctl_errors_exit_nonzero(dp, rpc):
    r = dpctl(dp, "label", "add", "--label", "100", "--type", "swap", "--nhlfe", "5", check=False)
    assert r.returncode == 1 and "-32000" in r.stderr
    r = dpctl(dp, "call", "circuit_add", '{"id": 1, "port": "c1", "vlan": 5000, "service": 1}',
              check=False)
    assert r.returncode == 1 and "vlan" in r.stderr and "-32602" in r.stderr
    r = subprocess.run([str(DPCTL), "-s", dp.sock + ".nope", "port", "list"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and "cannot connect" in r.stderr


def test_dpctl_env_socket_symlink_and_trace(dp, base, tmp_path):
    """Run through a symlink (as build/bin/e3-dpctl is), socket from $E3_SOCK."""
    link = tmp_path / "e3-dpctl"
    link.symlink_to(DPCTL)
    env = dict(os.environ, E3_SOCK=dp.sock)
    run = lambda *a: subprocess.run([str(link), *a], env=env, capture_output=True,  # noqa: E731
                                    text=True, timeout=60, check=True).stdout
    assert run("trace", "start", "--count", "10", "--port", "c1").strip() == "ok"
    assert "no frames traced" in run("trace", "show")
    pcap = tmp_path / "t.pcap"
    assert "wrote 0 frames" in run("trace", "pcap", "-o", str(pcap))
    assert pcap.read_bytes()[:4] == base64.b64decode("1MOyoQ==")
