"""Trust boundaries of the control plane (docs/security.md): the embedded
etcd asks every client and every peer for a certificate of the fabric's CA
(mutual TLS), and its users are the certificates' common names. A local
process without a certificate gets no answer at all, on the client port or
the peer port; an agent's certificate reaches only its own node's keys and
none of etcd's maintenance or cluster RPCs; a node's new certificate
revokes its old one. Judged with etcdctl, an independent client, and raw
requests."""
import json
import os
import socket
import ssl
import subprocess
from urllib.parse import urlparse

from lab.control import etcdctl_tls_args


def etcdctl(cp, *args, creds=None, uid=None, tmp_path=None, timeout="10s"):
    """etcdctl against the lab's etcd; timeout: its command timeout, which a
    call refused at the handshake waits out (etcdctl retries until then)."""
    cmd = ["etcdctl", "--endpoints", cp.etcd_endpoints, "--dial-timeout", "3s", "--command-timeout", timeout]
    if creds:
        cmd += etcdctl_tls_args(creds, tmp_path)
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


def no_answer(p):
    """The handshake failed: etcdctl got no answer to its request."""
    out = (p.stdout + p.stderr).lower()
    return p.returncode != 0 and ("deadline exceeded" in out or "certificate" in out or "handshake" in out
                                  or "connection" in out), out


def handshake_without_certificate(host, port, alpn=None):
    """A TLS handshake with no client certificate, as uid 65534 would make
    it; returns the error the server's refusal raised (None: accepted)."""
    ctx = ssl.create_default_context()
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    if alpn:
        ctx.set_alpn_protocols(alpn)
    with socket.create_connection((host, port), timeout=5) as raw:
        try:
            with ctx.wrap_socket(raw, server_hostname=host) as tls:
                # TLS 1.3: the server checks the certificate after the
                # client's Finished; its alert arrives on the first read.
                tls.sendall(b"POST /raft HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
                data = tls.recv(100)
                return None if data else "closed"
        except (ssl.SSLError, ConnectionError) as e:
            return str(e)


def test_no_certificate_no_answer(services, tmp_path):
    """uid 65534, no certificate: KV, alarms, leases and membership on the
    client port, and a raft message on the peer port, are all refused at the
    handshake; nothing changes."""
    cp = services
    before = {n["name"]: n["desired_generation"] for n in cp.nodes()}
    for args in (["put", "/e3/v1/desired/leaf3/node", "{}"], ["get", "--prefix", "/e3/"], ["alarm", "list"],
                 ["alarm", "disarm"], ["lease", "grant", "60"], ["member", "list"],
                 ["member", "add", "evil", "--peer-urls", "https://127.0.0.1:1"]):
        p = etcdctl(cp, *args, uid=65534, timeout="3s")
        assert no_answer(p), (args, p)
    client, peer = urlparse(cp.etcd_endpoints), urlparse(cp.etcd_peer_url)
    for url in (client, peer):
        assert handshake_without_certificate(url.hostname, url.port) is not None, url
    # Plain HTTP to the peer port (the raft transport's own requests) gets no raft.
    with socket.create_connection((peer.hostname, peer.port), timeout=5) as s:
        s.sendall(b"POST /raft HTTP/1.1\r\nHost: x\r\nContent-Type: application/protobuf\r\n"
                  b"Content-Length: 4\r\n\r\nevil")
        reply = s.recv(200)
    assert not reply.startswith(b"HTTP/1.1 204"), reply
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
                 ["get", "--prefix", "/e3/v1/services/"], ["defrag"],
                 ["snapshot", "save", str(tmp_path / "snap.db")],
                 ["member", "add", "evil", "--peer-urls", "https://127.0.0.1:1"]):
        p = etcdctl(cp, *args, creds=creds, tmp_path=tmp_path)
        assert refused(p), (args, p)
    assert all(s["status"]["state"] == "programmed" for s in cp.services())


def test_new_credentials_revoke_the_old(services, tmp_path):
    """e3ctl node credentials rotates: the agent runs on with the new
    certificate, the old one is refused at its next handshake."""
    cp = services
    old = json.loads(cp.credentials_file("leaf2").read_text())
    new = cp.issue_credentials("leaf2")
    assert new["cert"] != old["cert"] and new["user"] == old["user"] == "node-leaf2"
    p = etcdctl(cp, "get", "--prefix", "/e3/v1/desired/leaf2/", creds=old, tmp_path=tmp_path, timeout="3s")
    assert no_answer(p), p
    ok = etcdctl(cp, "get", "--prefix", "/e3/v1/desired/leaf2/", creds=new, tmp_path=tmp_path)
    assert ok.returncode == 0 and "/e3/v1/desired/leaf2/node" in ok.stdout, ok
    cp.stop_agent("leaf2")
    cp.start_agent("leaf2")
    cp.wait_converged()


def test_credentials_need_the_admin_token_and_a_known_node(services):
    cp = services
    p = cp.e3ctl("node", "credentials", "leaf1", check=False, token=cp.read_token)
    assert p.returncode != 0 and "admin token" in p.stderr, p.stderr
    p = cp.e3ctl("node", "credentials", "leaf9", check=False)
    assert p.returncode != 0 and "unknown node" in p.stderr, p.stderr
