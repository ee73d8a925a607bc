"""Trust boundaries of the control plane (docs/security.md): the embedded
etcd speaks TLS and wants a user. A local process without credentials
cannot read or write anything, and an agent's credentials reach only its
own node's keys: leaf1's cannot read or write leaf2's desired state (nor
write its own). Judged with etcdctl, an independent client."""
import json
import os
import subprocess

import pytest


def etcdctl(cp, *args, creds=None, uid=None, tmp_path=None):
    cmd = ["etcdctl", "--endpoints", cp.etcd_endpoints, "--dial-timeout", "5s", "--command-timeout", "10s"]
    if creds:
        ca = tmp_path / f"ca-{creds['user']}.pem"
        ca.write_text(creds["ca"])
        cmd += ["--cacert", str(ca), "--user", f"{creds['user']}:{creds['password']}"]
    else:
        cmd += ["--insecure-transport=false", "--insecure-skip-tls-verify"]
    env = {**os.environ, "ETCDCTL_API": "3"}

    def drop():
        os.setgid(uid)
        os.setuid(uid)
    return subprocess.run([*cmd, *args], capture_output=True, text=True, timeout=30, env=env,
                          preexec_fn=drop if uid is not None else None)


def refused(p):
    out = (p.stdout + p.stderr).lower()
    return p.returncode != 0 and ("permission denied" in out or "user name is empty" in out
                                  or "authentication failed" in out)


def test_unprivileged_process_cannot_touch_the_store(services, tmp_path):
    cp = services
    before = {n["name"]: n["desired_generation"] for n in cp.nodes()}
    p = etcdctl(cp, "put", "/e3/v1/desired/leaf3/node", "{}", uid=65534)
    assert refused(p), p
    p = etcdctl(cp, "get", "--prefix", "/e3/", uid=65534)
    assert refused(p), p
    # Nor can it read the controller's secrets: its data dir is private.
    assert os.stat(cp.data_dir).st_mode & 0o077 == 0
    assert {n["name"]: n["desired_generation"] for n in cp.nodes()} == before
    assert all(s["status"]["state"] == "programmed" for s in cp.services())


def test_an_agents_credentials_reach_only_its_node(services, tmp_path):
    cp = services
    creds = json.loads(cp.credentials_file("leaf1").read_text())
    assert creds["user"] == "node-leaf1"
    ok = etcdctl(cp, "get", "--prefix", "/e3/v1/desired/leaf1/", creds=creds, tmp_path=tmp_path)
    assert ok.returncode == 0 and "/e3/v1/desired/leaf1/node" in ok.stdout, ok
    for args in (["get", "--prefix", "/e3/v1/desired/leaf2/"], ["put", "/e3/v1/desired/leaf2/node", "{}"],
                 ["put", "/e3/v1/desired/leaf1/node", "{}"], ["put", "/e3/v1/status/leaf2", "{}"],
                 ["get", "--prefix", "/e3/v1/services/"]):
        p = etcdctl(cp, *args, creds=creds, tmp_path=tmp_path)
        assert refused(p), (args, p)
    assert all(s["status"]["state"] == "programmed" for s in cp.services())


def test_credentials_need_the_admin_token_and_a_known_node(services):
    cp = services
    p = cp.e3ctl("node", "credentials", "leaf1", check=False, token=cp.read_token)
    assert p.returncode != 0 and "admin token" in p.stderr, p.stderr
    p = cp.e3ctl("node", "credentials", "leaf9", check=False)
    assert p.returncode != 0 and "unknown node" in p.stderr, p.stderr
