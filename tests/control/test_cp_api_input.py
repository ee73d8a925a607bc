"""Bad northbound input is refused with a clear message, and nothing changes:
a change or a read without the right token, a wrong TLS certificate pin,
the service list and the controller's generation (bumped by every change it
commits) are the same before and after. e3ctl's exit code and message are
what an operator sees; malformed JSON needs raw HTTP (e3ctl never sends it).
"""
import json
import subprocess
import urllib.error
import urllib.request

import pytest

from lab.control import binary


@pytest.fixture
def unchanged(services):
    """The store as the API shows it; after the test, it must be the same."""
    cp = services

    def snapshot():
        # The intent and the generation: status and protection follow the
        # fabric's OAM, which a refused request has no part in.
        return ([{k: s.get(k) for k in ("name", "type", "circuits", "id", "generation")} for s in cp.services()],
                cp.status()["generation"])
    before = snapshot()
    yield cp
    assert snapshot() == before, "a refused request changed the controller's state"


@pytest.mark.parametrize("circuits, words", [
    (["nosuch:cust1:5", "leaf2:cust1:5"], ["nosuch"]),                   # unknown node
    (["leaf1:cust9:5", "leaf2:cust1:5"], ["cust9"]),                     # unknown port
    (["leaf1:cust1:1000", "leaf2:cust1:5"], ["leaf1", "cust1", "1000"]),  # VLAN red uses
    (["leaf1:fab1:5", "leaf2:cust1:5"], ["fab1"]),                       # fabric port as a circuit
    (["leaf1:cust1:5000", "leaf2:cust1:5"], ["5000"]),                   # VLAN out of range
    (["leaf1:cust1:5"], ["circuit"]),                                    # E-Line needs two
])
def test_bad_service_refused_by_e3ctl(unchanged, circuits, words):
    args = ["service", "create", "eline", "bad"]
    for c in circuits:
        args += ["--circuit", c]
    p = unchanged.e3ctl(*args, check=False)
    msg = p.stderr + p.stdout
    assert p.returncode != 0, msg
    for w in words:
        assert w in msg, f"message does not name {w!r}: {msg}"


def test_duplicate_vlan_is_a_conflict(unchanged):
    """The (node, port, VLAN) of red's first circuit, in a new E-LAN."""
    p = unchanged.e3ctl("--json", "service", "create", "elan", "dup",
                        "--circuit", "leaf1:cust1:1000", "--circuit", "leaf3:cust1:77", check=False)
    assert p.returncode != 0
    assert "already used by service red" in p.stderr, p.stderr


@pytest.mark.parametrize("token, why", [("", "missing"), ("not-the-token", "wrong")])
def test_change_without_the_token_refused(unchanged, token, why):
    p = unchanged.e3ctl("service", "create", "eline", "sneaky", "--circuit", "leaf1:cust1:5",
                        "--circuit", "leaf2:cust1:5", check=False, token=token)
    assert p.returncode != 0, f"{why} token accepted"
    assert "unauthorized" in (p.stderr + p.stdout).lower() or "token" in (p.stderr + p.stdout).lower(), p.stderr
    # Reads need a token too: the read-only one will do.
    before = unchanged.status()["api"]["unauthorized"]
    p = unchanged.e3ctl("service", "list", check=False, token=token)
    assert p.returncode != 0 and "Authorization: Bearer" in p.stderr, p.stderr
    assert unchanged.status()["api"]["unauthorized"] == before + 1
    assert unchanged.e3ctl("service", "list", token=unchanged.read_token).returncode == 0


def test_read_only_token_cannot_change(unchanged):
    before = unchanged.status()["api"]
    p = unchanged.e3ctl("service", "delete", "red", check=False, token=unchanged.read_token)
    assert p.returncode != 0 and "admin token" in p.stderr, p.stderr
    assert unchanged.status()["api"]["forbidden"] == before["forbidden"] + 1


def test_api_speaks_tls_with_the_pinned_certificate(unchanged):
    """e3ctl pins the certificate by fingerprint as well as by CA file; a
    wrong pin, or no trust at all, is refused."""
    import hashlib
    import ssl
    der = ssl.PEM_cert_to_DER_cert(unchanged.ca_file.read_text())
    pin = hashlib.sha256(der).hexdigest()
    env = {k: v for k, v in unchanged.env().items() if k != "E3_CA"}
    run = lambda *a: subprocess.run([str(binary("e3ctl")), *a, "status"], capture_output=True, text=True,
                                    env=env, timeout=30)
    assert run("--fingerprint", pin).returncode == 0
    p = run("--fingerprint", "00" * 32)
    assert p.returncode != 0 and "fingerprint" in p.stderr, p.stderr
    p = run()
    assert p.returncode != 0 and "certificate" in p.stderr, p.stderr


def post(cp, path, body: bytes, token=None):
    """Raw HTTP POST; (status code, decoded JSON body)."""
    req = urllib.request.Request(cp.server + path, data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=10, context=cp.ssl_context()) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


@pytest.mark.parametrize("body", [b'{"name": "x", "type": "eline", "circuits": [', b"not json at all",
                                  b'{"name": "x", "type": "eline", "circuits": [], "colour": "red"}'])
def test_malformed_json_refused(unchanged, body):
    code, res = post(unchanged, "/v1/services", body, token=unchanged.token)
    assert code == 400, res
    assert res["error"]["code"] == "invalid" and res["error"]["message"], res


def test_raw_http_without_token_refused(unchanged):
    body = json.dumps({"name": "x", "type": "eline", "circuits": [
        {"node": "leaf1", "port": "cust1", "vlan": 5}, {"node": "leaf2", "port": "cust1", "vlan": 5}]}).encode()
    code, res = post(unchanged, "/v1/services", body)
    assert code == 401 and res["error"]["code"] == "unauthorized", res
    code, res = post(unchanged, "/v1/services", body, token="wrong")
    assert code == 401 and res["error"]["code"] == "unauthorized", res
