"""The northbound API under a flood of idle connections: 5,000 of them
neither kill the controller (its embedded etcd shares its descriptors) nor
keep a new request out. The API closes the longest-idle connection to make
room and counts it (e3ctl status: api)."""
import resource
import socket
from urllib.parse import urlsplit


def test_idle_connection_flood(services):
    cp = services
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    host = urlsplit(cp.server)
    before = cp.status()["api"]
    idle = []
    try:
        for _ in range(5000):
            s = socket.socket()
            s.connect((host.hostname, host.port))
            idle.append(s)
        st = cp.status()                 # a new request gets in
        assert cp.controller.running()
        api = st["api"]
        assert api["connections"] <= api["max_connections"], api
        assert api["evicted_idle"] - before["evicted_idle"] >= 5000 - api["max_connections"], api
        assert api["refused_busy"] == before["refused_busy"], api
        assert cp.e3ctl("service", "list").returncode == 0
    finally:
        for s in idle:
            s.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def metric(cp, name, **labels):
    """A sample of the controller's /metrics (read-only token), parsed by
    prometheus_client's parser."""
    import urllib.request
    from prometheus_client.parser import text_string_to_metric_families
    req = urllib.request.Request(cp.server + "/metrics", headers={"Authorization": f"Bearer {cp.read_token}"})
    text = urllib.request.urlopen(req, context=cp.ssl_context(), timeout=30).read().decode()
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    return 0.0


def test_admin_served_through_slow_bodies_and_streams(services):
    """2,000 requests that announce a body and never send it (no token) and
    2,000 streams on the read-only token: the slow ones are answered 401 at
    once and closed, the streams past the token's cap get 429, and the
    admin is served meanwhile. Every refusal is counted."""
    import ssl
    cp = services
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 16384)), hard))
    host = urlsplit(cp.server)
    ctx = ssl.create_default_context(cafile=str(cp.ca_file))
    ctx.set_alpn_protocols(["http/1.1"])
    unauth0 = metric(cp, "e3_controller_api_refused_total", reason="unauthorized")
    streams0 = metric(cp, "e3_controller_api_refused_total", reason="too_many_streams")
    held = []

    def send(head):
        s = ctx.wrap_socket(socket.create_connection((host.hostname, host.port), timeout=30),
                            server_hostname=host.hostname)
        s.sendall(head.encode())
        held.append(s)
        return s

    def status_line(s):
        return s.recv(64).split(b"\r\n")[0].decode()

    try:
        slow = [send(f"POST /v1/services HTTP/1.1\r\nHost: {host.netloc}\r\nContent-Type: application/json\r\n"
                     "Content-Length: 1000000\r\n\r\n") for _ in range(2000)]
        streams = [send(f"GET /v1/stream HTTP/1.1\r\nHost: {host.netloc}\r\n"
                        f"Authorization: Bearer {cp.read_token}\r\n\r\n") for _ in range(2000)]
        # The admin, meanwhile.
        assert cp.e3ctl("service", "list").returncode == 0
        assert cp.status()["leader"]
        codes = {}
        for s in slow[:50] + streams:
            line = status_line(s)
            codes[line] = codes.get(line, 0) + 1
        assert codes.get("HTTP/1.1 401 Unauthorized") == 50, codes
        assert codes.get("HTTP/1.1 200 OK") == 32 and codes.get("HTTP/1.1 429 Too Many Requests") == 1968, codes
        assert cp.controller.running()
    finally:
        for s in held:
            s.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert metric(cp, "e3_controller_api_refused_total", reason="unauthorized") - unauth0 >= 2000
    assert metric(cp, "e3_controller_api_refused_total", reason="too_many_streams") - streams0 == 1968
