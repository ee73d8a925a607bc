"""The JSON-RPC tests' lab: a real e3-vswitchd on net_null/net_pcap ports,
reached through its Unix socket; fixtures (re-exported by conftest.py) and
helpers. A module of its own name, so that test files import it without
colliding with other directories' conftest modules.

Every process started here is stopped by PID (SIGTERM, then SIGKILL) and its
socket and DPDK runtime directory removed, pass or fail. Names carry the tag
dpB so parallel test runs of other parts do not collide.
"""
import contextlib
import itertools
import os
import shutil
import time
import socket
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "datapath" / "client"))
sys.path.insert(0, str(ROOT / "tests"))

from e3rpc import Client, RpcError  # noqa: E402
from lab import vswitchd  # noqa: E402

DPCTL = ROOT / "datapath" / "client" / "e3-dpctl"
TAG = "dpB"
_seq = itertools.count()

DEFAULT_SETTINGS = {"ttl": 64, "control_word": True, "mac_aging_s": 300, "mac_limit": 8192,
                    "mac_move_limit": 5, "mac_move_window_s": 180}


class Vswitchd(vswitchd.Vswitchd):
    """The suite's e3-vswitchd (tests/lab/vswitchd.py): no namespace, a
    working folder of its own for pcap ports, a small MAC table."""

    def __init__(self, extra_args=(), lcores="0,1"):
        n = f"{os.getpid()}-{next(_seq)}"
        self.prefix = f"{TAG}-{n}"
        self.workdir = Path(tempfile.mkdtemp(prefix=f"{TAG}-{n}-"))
        super().__init__("e3", file_prefix=self.prefix, sock=f"/tmp/{TAG}-{n}.sock",
                         log=self.workdir / "vswitchd.log", lcores=lcores, mac_table_size=4096,
                         args=["--pcap-dir", str(self.workdir), *extra_args])

    def start(self, timeout=60):
        if not vswitchd.binary().exists():
            pytest.fail(f"{vswitchd.binary()} is not built (make datapath)")
        super().start(timeout)
        return self

    def log(self):
        return self.log_tail(60)

    def stop(self):
        super().stop(15)
        shutil.rmtree(self.workdir, ignore_errors=True)

    def client(self, timeout=60):
        return Client(self.sock, timeout=timeout).connect()

    def raw(self, timeout=10):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(self.sock)
        return s


def wait_for(fn, timeout=20):
    """Poll fn until it returns something true (a safety net, not a timing test)."""
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v or time.monotonic() > deadline:
            return v
        time.sleep(0.1)


@pytest.fixture(scope="module")
def dp():
    """One e3-vswitchd per test module."""
    v = Vswitchd()
    try:
        v.start()
        yield v
    finally:
        v.stop()


@pytest.fixture
def vswitchd_factory():
    """Start e3-vswitchd with extra args; all stopped at the end of the test."""
    started = []

    def start(*extra_args):
        v = Vswitchd(extra_args)
        started.append(v)
        return v.start()
    try:
        yield start
    finally:
        for v in started:
            v.stop()


@pytest.fixture
def rpc(dp):
    """A client of the module's e3-vswitchd, on an empty node."""
    dp.sync({"version": 1, "settings": DEFAULT_SETTINGS})
    with dp.client() as c:
        yield c
    assert dp.alive(), "e3-vswitchd died during the test:\n" + dp.log()


def null_port(name, kind, n):
    """A port on a net_null device that receives nothing."""
    return {"name": name, "devargs": f"net_null{n},no-rx=1", "kind": kind}


BASE_PORTS = [null_port("fab0", "fabric", 0), null_port("fab1", "fabric", 1),
              null_port("c1", "customer", 2), null_port("c2", "customer", 3)]

# A node with one of everything: the document the tests start from.
BASE = {
    "version": 1,
    "settings": DEFAULT_SETTINGS,
    "ports": BASE_PORTS,
    "nexthops": [{"id": 1, "port": "fab0", "mac": "02:00:00:00:01:01"},
                 {"id": 2, "port": "fab1", "mac": "02:00:00:00:01:02"}],
    "nhlfes": [{"id": 5, "nexthop": 1, "label": 1000},
               {"id": 6, "nexthop": 2, "label": 1001},
               {"id": 7, "nexthop": 2, "label": 1002}],
    "services": [{"id": 10, "type": "eline", "name": "pw-10", "nhlfe": 5},
                 {"id": 20, "type": "elan", "name": "lan-20", "mac_limit": 100,
                  "remotes": [{"source": 1, "nhlfe": 6}], "branches": [7]}],
    "circuits": [{"id": 100, "port": "c1", "vlan": 100, "service": 10},
                 {"id": 200, "port": "c1", "vlan": 200, "service": 20},
                 {"id": 201, "port": "c2", "vlan": "untagged", "service": 20}],
    "labels": [{"label": 100, "type": "swap", "nhlfe": 6},
               {"label": 101, "type": "eline", "service": 10},
               {"label": 102, "type": "elan", "service": 20, "source": 1},
               {"label": 103, "type": "replicate", "rpf_port": "fab0", "branches": [7],
                "service": 20, "source": 1}],
}


@pytest.fixture
def base(rpc):
    """The module's e3-vswitchd loaded with BASE."""
    rpc.call("config_load", BASE)
    return rpc


def call_error(c, method, params=None, **kw):
    """Call a method that must fail; returns the RpcError."""
    with pytest.raises(RpcError) as ei:
        c.call(method, params, **kw)
    return ei.value


@contextlib.contextmanager
def unchanged(c):
    """Assert that the node's configuration is the same after the block."""
    before = c.call("config_dump")
    yield
    assert c.call("config_dump") == before


def strip_stats(objs):
    return [{k: v for k, v in o.items() if k not in ("stats", "pkts")} for o in objs]
