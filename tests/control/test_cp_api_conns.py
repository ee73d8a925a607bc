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
