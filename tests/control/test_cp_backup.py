"""Fabric snapshot and restore (e3ctl snapshot save / restore): the whole
intent with its allocations in one versioned document. Restoring it onto
the controller that holds it changes nothing; after a service is deleted,
restoring brings it back with the same labels, and it carries traffic.
(The round trip onto a fresh controller, compared node by node, is
control/internal/controller's TestSnapshotRoundTrip.)"""
import json

from cplib import GREEN, GREEN_IPS, clean_ping, first_contact


def test_snapshot_save_and_restore(lab, services, tmp_path):
    cp = services
    path = tmp_path / "fabric.json"
    cp.e3ctl("snapshot", "save", path)
    snap = json.loads(path.read_text())
    assert snap["version"] == 1
    assert {s["spec"]["name"] for s in snap["services"]} >= {"red", "green"}
    assert snap["topology"]["nodes"] and snap["checks"]
    green = next(s for s in snap["services"] if s["spec"]["name"] == "green")

    gen = cp.status()["generation"]
    cp.e3ctl("snapshot", "restore", path)
    assert cp.status()["generation"] == gen, "restoring the state it holds wrote something"

    cp.e3ctl("service", "delete", GREEN[0])
    cp.e3ctl("snapshot", "restore", path)
    back = cp.wait_service(GREEN[0])
    assert back["allocations"] == green["allocs"]
    cp.wait_converged()
    first_contact(lab, "h1", GREEN_IPS["h3"])
    clean_ping(lab, "h1", GREEN_IPS["h3"], count=5)


def test_bad_snapshot_refused(services, tmp_path):
    cp = services
    gen = cp.status()["generation"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"version": 9, "topology": {"name": "x", "fabric": {}, "nodes": [], "links": [],
                                                         "customer_ports": []}, "services": []}))
    p = cp.e3ctl("snapshot", "restore", bad, check=False)
    assert p.returncode != 0 and "version 9" in p.stderr, p.stderr
    p = cp.e3ctl("snapshot", "restore", bad, check=False, token=cp.read_token)
    assert p.returncode != 0 and "admin token" in p.stderr, p.stderr
    assert cp.status()["generation"] == gen
