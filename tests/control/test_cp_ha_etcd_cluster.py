"""Production layout: a three-member etcd cluster (Debian's /usr/bin/etcd,
three processes with their own data directories on loopback), the
controller with --etcd-endpoints and the agents pointed at it. With one
member killed the cluster keeps its quorum, and the control plane keeps
working: a service created then is programmed and carries traffic. With
two controller replicas, killing the leading replica, then etcd's raft
leader, in the middle of a run of changes loses no change the API
acknowledged and leaves no service half-programmed.

Runs last (conftest.py orders it so): it stops the embedded-etcd control plane of the
other tests and replaces it on the same fabric, whose datapaths the new
agents bring to the new controller's config.
"""
import json
import os
import signal
import time

import pytest

from cplib import (BLUE, BLUE_H5, EXT_API_PORT, EXT_API_PORT2, EXT_ETCD_BASE, FABRIC, RED, RED_H2, clean_ping,
                   ensure_service, first_contact, scrape)
from lab.control import ETCD, ControlPlane, EtcdCluster, LabError, wait_for


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
    # The controller follows the cluster's database against etcd's default
    # quota, through the members' authentication and TLS.
    m = scrape(cp.metrics_url(), token=cp.read_token, context=cp.ssl_context())
    assert m[("e3_controller_etcd_quota_bytes", frozenset())] == 2 << 30
    assert m[("e3_controller_etcd_db_bytes", frozenset())] > 0

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


def leading(cp, replica):
    """Whether replica answers and leads."""
    if not replica.proc.running():
        return False
    p = cp.e3ctl("--json", "status", check=False, via=replica, timeout=10)
    return p.returncode == 0 and json.loads(p.stdout).get("leader", False)


def test_no_acknowledged_change_is_lost_when_the_leader_or_an_etcd_member_dies(lab, cluster, ext_cp):
    cp = ext_cp
    for p in cluster.procs.values():  # the member killed above rejoins: three again
        if not p.running():
            p.start()
    wait_for("three healthy etcd members", lambda: cluster.healthy(cluster.members), timeout=60)
    standby = cp.add_replica(EXT_API_PORT2)
    standby.proc.start()
    wait_for("the second replica answering as a follower",
             lambda: standby.proc.running() and cp.e3ctl("status", check=False, via=standby).returncode == 0)
    assert not leading(cp, standby)

    def kill_leading_replica():
        victim = next(r for r in cp.replicas if leading(cp, r))
        victim.proc.stop(signal.SIGKILL)

    def kill_etcd_leader():
        cluster.procs[wait_for("an etcd leader", lambda: etcd_leader(cluster))].stop(signal.SIGKILL)

    faults = {3: ("the leading controller replica", kill_leading_replica), 8: ("etcd's raft leader", kill_etcd_leader)}
    acked, first_change = [], {}
    via = next(r for r in cp.replicas if leading(cp, r))
    for i in range(12):
        fault_at = None
        if i in faults:
            faults[i][1]()
            fault_at = time.monotonic()
        name, vlan = f"drill{i}", 600 + i
        deadline = time.monotonic() + 60
        while True:
            # A client's retry: a create the old leader committed but did
            # not answer is refused as existing, and counts as done.
            p = cp.e3ctl("--json", "service", "create", "eline", name, "--circuit", f"leaf2:cust1:{vlan}",
                         "--circuit", f"leaf3:cust1:{vlan}", check=False, via=via, timeout=20)
            if p.returncode == 0 or "already exists" in p.stderr + p.stdout:
                acked.append(name)
                break
            if time.monotonic() > deadline:
                raise LabError(f"create {name}: no replica took it in 60 s: {(p.stderr or p.stdout).strip()}")
            via = next((r for r in cp.replicas if r is not via and r.proc.running()), via)
            time.sleep(0.2)
        if fault_at is not None:
            first_change[faults[i][0]] = time.monotonic() - fault_at
    for what, s in first_change.items():
        print(f"first change acknowledged {s:.1f} s after killing {what}")

    survivor = next(r for r in cp.replicas if r.proc.running())
    assert survivor is standby
    wait_for("a leading replica", lambda: leading(cp, survivor))
    names = {s["name"] for s in cp.services(via=survivor)}
    assert set(acked) <= names, f"acknowledged but lost: {set(acked) - names}"
    cp.wait_converged(via=survivor)
    for name in acked:
        svc = cp.json("service", "show", name, via=survivor)
        assert svc["status"]["state"] == "programmed", (name, svc["status"])
