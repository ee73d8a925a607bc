"""The JSON-RPC socket cannot be locked: idle connections of other users
take at most their per-user share, the last slots are kept for root (the
node's agent), and a connection that stays idle is closed. Every refusal
and close is counted in system_info's "rpc"."""
import subprocess
import sys

from rpc_lab import wait_for

# A user that opens n connections to the socket and holds them.
HOLDER = r"""
import os, socket, sys, time
os.setgid(int(sys.argv[2])); os.setuid(int(sys.argv[2]))
held = []
for _ in range(int(sys.argv[3])):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(sys.argv[1])
        held.append(s)
    except OSError:
        pass
print("ready", flush=True)
sys.stdin.read()
"""


def hold(sock, uid, n):
    p = subprocess.Popen([sys.executable, "-c", HOLDER, sock, str(uid), str(n)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    return p


def rpc_counters(v):
    with v.client() as c:
        return c.call("system_info")["rpc"]


def test_idle_users_cannot_lock_out_root(vswitchd_factory):
    v = vswitchd_factory("--rpc-mode", "0666", "--rpc-idle-s", "0")
    holders = []
    try:
        # One user: 200 connections, 16 kept.
        holders.append(hold(v.sock, 60001, 200))
        assert wait_for(lambda: rpc_counters(v)["refused_per_user"] == 184)
        assert rpc_counters(v)["connections"] == 16 + 1     # and ours
        # Eight more users take every slot not kept for root (120).
        for uid in range(60002, 60010):
            holders.append(hold(v.sock, uid, 16))
        assert wait_for(lambda: rpc_counters(v)["refused_full"] == 144 - 120)
        # Root (the agent) still gets in and is served.
        with v.client() as c:
            assert c.call("system_info")["rpc"]["connections"] == 121
    finally:
        for p in holders:
            p.kill()
            p.wait()
    assert wait_for(lambda: rpc_counters(v)["connections"] == 1)


def test_idle_connection_is_closed(vswitchd_factory):
    v = vswitchd_factory("--rpc-idle-s", "1")
    s = v.raw()
    assert wait_for(lambda: rpc_counters(v)["idle_closed"] >= 1)
    assert s.recv(1) == b""                 # closed by the switch
    s.close()
