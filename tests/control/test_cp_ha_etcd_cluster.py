"""Production layout: a three-member etcd cluster (Debian's /usr/bin/etcd,
three processes with their own data directories on loopback), the
controller with --etcd-endpoints and the agents pointed at it. With one
member killed the cluster keeps its quorum, and the control plane keeps
working: a service created then is programmed and carries traffic.

Runs last (conftest.py orders it so): it stops the embedded-etcd control plane of the
other tests and replaces it on the same fabric, whose datapaths the new
agents bring to the new controller's config.
"""
import json
import os
import signal

import pytest

from cplib import (BLUE, BLUE_H5, EXT_API_PORT, EXT_ETCD_BASE, FABRIC, RED, RED_H2, clean_ping,
                   ensure_service, first_contact)
from lab.control import ETCD, ControlPlane, EtcdCluster, wait_for


@pytest.fixture(scope="module")
def cluster(control, tmp_state):
    if not os.access(ETCD, os.X_OK):
        pytest.skip(f"{ETCD} missing (scripts/deps.sh installs etcd-server)")
    control.stop_all()  # the embedded one: the fabric gets a new control plane
    c = EtcdCluster(tmp_state / "etcd-cluster", EXT_ETCD_BASE, members=3)
    try:
        yield c.start()
    finally:
        c.stop()


@pytest.fixture(scope="module")
def ext_cp(lab, cluster, tmp_state):
    cp = ControlPlane(lab, lab.run_dir / "control-ext", api_port=EXT_API_PORT,
                      etcd_cluster=cluster, data_dir=tmp_state / "controller-ext", fabric=FABRIC)
    try:
        yield cp.start()
    finally:
        cp.stop_all()


def etcd_leader(cluster):
    """Name of the cluster's current raft leader."""
    p = cluster.etcdctl("endpoint", "status", "-w", "json")
    for st in json.loads(p.stdout):
        if st["Status"]["header"]["member_id"] == st["Status"]["leader"]:
            return next(m for m, url in cluster.client_urls.items() if url == st["Endpoint"])
    return None


def test_control_plane_survives_losing_an_etcd_member(lab, cluster, ext_cp):
    cp = ext_cp
    ensure_service(cp, *RED)
    cp.wait_converged()
    first_contact(lab, "h1", RED_H2)
    clean_ping(lab, "h1", RED_H2)

    # Kill the raft leader: the hardest member to lose (an election follows).
    victim = wait_for("an etcd leader", lambda: etcd_leader(cluster))
    cluster.procs[victim].stop(signal.SIGKILL)
    assert not cluster.procs[victim].running()
    wait_for("etcd quorum of the two survivors", lambda: cluster.healthy())
    wait_for("a leading controller", lambda: cp.status().get("leader"))

    ensure_service(cp, *BLUE)
    cp.wait_converged()
    first_contact(lab, "h4", BLUE_H5)
    clean_ping(lab, "h4", BLUE_H5)
    clean_ping(lab, "h1", RED_H2)
    names = {s["name"] for s in cp.services()}
    assert names == {"red", "blue"}, names
