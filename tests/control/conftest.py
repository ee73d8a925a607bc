"""Fixtures of the control-plane tests: examples/demo.yaml as real
e3-vswitchd processes in namespaces (prefix `cp`, built by tests/lab without
any programming), programmed by the real e3-controller and e3-agents.

One lab for the whole session (building it is the slow part); the embedded-
etcd control plane is started on first use and restarted by `cp` if a test
stopped it. Everything is stopped by PID and every namespace removed at the
end, even on failure. Loopback ports 23810-23839.
"""
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
for p in (REPO / "tests", REPO / "datapath" / "client"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from lab import Lab  # noqa: E402
from lab.control import ControlPlane, binary  # noqa: E402
from lab.lab import LabError  # noqa: E402
from lab.vswitchd import binary as vswitchd_binary  # noqa: E402
from cplib import (API_PORT, ETCD_PORT, FABRIC, GREEN, GREEN_IPS, METRICS_PORT, PREFIX, RED,  # noqa: E402
                   RED_H2, TOPOLOGY, ensure_service, first_contact)


def pytest_collection_modifyitems(session, config, items):
    """The external-cluster test replaces the embedded control plane and
    reprograms every datapath; the tests after it would wait out the path
    checks' wait-to-restore. It runs last, whatever the file names."""
    last = [i for i in items if i.module.__name__.endswith("test_cp_ha_etcd_cluster")]
    items[:] = [i for i in items if i not in last] + last


@pytest.fixture(scope="session")
def root():
    if os.geteuid() != 0:
        pytest.skip("needs root (network namespaces)")
    for b in ("e3-controller", "e3-agent", "e3ctl"):
        try:
            binary(b)
        except LabError as e:
            pytest.fail(str(e))
    if not os.access(vswitchd_binary(), os.X_OK):
        pytest.fail(f"{vswitchd_binary()} is not built: run `make build`")


@pytest.fixture(scope="session")
def lab(root):
    """Namespaces, veths, hosts and one running datapath per node, without
    ports or services: the agents add everything."""
    lab = Lab(TOPOLOGY, PREFIX)
    try:
        lab.up(start=True, ports=False)
        yield lab
    finally:
        lab.down()


@pytest.fixture(scope="session")
def tmp_state():
    d = Path(tempfile.mkdtemp(prefix="e3-cp-"))
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session")
def control(lab, tmp_state):
    """The embedded-etcd control plane (not started here: see `cp`)."""
    cp = ControlPlane(lab, lab.run_dir / "control", api_port=API_PORT, etcd_port=ETCD_PORT,
                      data_dir=tmp_state / "controller", fabric=FABRIC, metrics_port=METRICS_PORT)
    try:
        yield cp
    finally:
        cp.stop_all()


@pytest.fixture
def cp(control, lab):
    """The control plane, running and converged; after the test, every
    datapath, agent and the controller must still be running."""
    if not control.controller.running() or not all(a.running() for a in control.agents.values()):
        control.start()
    yield control
    dead = [n.name for n in lab.topo.nodes if not lab.running(n.name)]
    assert not dead, "datapath(s) died: " + "; ".join(f"{n}:\n{lab.log_tail(n)}" for n in dead)
    dead = [name for name, p in [("e3-controller", control.controller), *control.agents.items()] if not p.running()]
    assert not dead, "control plane process(es) died: " + ", ".join(dead)


@pytest.fixture
def services(cp, lab):
    """red (E-Line h1-h2) and green (E-LAN h1, h2, h3) exist, are programmed
    and carry a first ping (ARP resolved, MACs learned)."""
    for spec in (RED, GREEN):
        ensure_service(cp, *spec)
    cp.wait_converged()
    first_contact(lab, "h1", RED_H2)
    for h in ("h2", "h3"):
        first_contact(lab, "h1", GREEN_IPS[h])
    return cp
