"""The control plane on a lab: e3-controller, one e3-agent per node, e3ctl,
and (for the failure tests) an external etcd cluster of real /usr/bin/etcd
processes.

The lab (lab.py) builds the network and runs the datapaths without
programming them; this module runs the real control plane beside it, so the
controller computes paths and labels and the agents program the datapaths.
Used by tests/control and by `make demo` (demo_controller.py).

Every process runs in the root namespace (etcd and the API are on loopback;
the datapaths' sockets are files under /run/e3/<prefix>/) and has a PID file
in the state directory, so stop_all() can find it from another process (the
demo is brought up and down by two commands). A PID is signalled only if
/proc/PID/cmdline still carries this control plane's state directory (PIDs
get reused).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import time
from pathlib import Path

import yaml

from .lab import REPO, Lab, LabError, on_exit
from .vswitchd import alive, kill

BIN = REPO / "build" / "bin"
ETCD = Path("/usr/bin/etcd")


def binary(name: str) -> Path:
    p = BIN / name
    if not os.access(p, os.X_OK):
        raise LabError(f"{p}: not built (make build)")
    return p


def wait_for(what: str, fn, timeout: float = 30, interval: float = 0.2):
    """Poll fn until it returns something true; a safety net, not a timing
    assertion: raise LabError naming what did not happen."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            last = fn()
            if last:
                return last
        except (LabError, OSError, ValueError) as e:
            last = e
        if time.monotonic() > deadline:
            raise LabError(f"{what}: not within {timeout:.0f}s (last: {last!r})")
        time.sleep(interval)


class Proc:
    """A background process with a PID file and a log in a state directory."""

    def __init__(self, name: str, state_dir: Path, cmd: list, marker: str):
        self.name, self.state_dir, self.cmd = name, state_dir, cmd
        # A string of the command line that only our process has (a path in
        # our state directory): a reused PID is never signalled.
        self.marker = marker
        self.popen = None

    @property
    def pid_file(self) -> Path:
        return self.state_dir / f"{self.name}.pid"

    @property
    def log_file(self) -> Path:
        return self.state_dir / f"{self.name}.log"

    def start(self) -> int:
        if self.pid():
            raise LabError(f"{self.name}: already running (pid {self.pid()})")
        self.state_dir.mkdir(parents=True, exist_ok=True)
        with open(self.log_file, "ab") as log:
            # Own session: a Ctrl-C in the terminal is for pytest/the demo, which stop things in order.
            self.popen = subprocess.Popen(self.cmd, stdout=log, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, start_new_session=True)
        self.pid_file.write_text(f"{self.popen.pid}\n")
        return self.popen.pid

    def pid(self):
        """PID of the running process, or None."""
        try:
            pid = int(self.pid_file.read_text())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            return None
        if self.marker.encode() in cmdline and alive(pid):
            return pid
        return None

    def running(self) -> bool:
        if self.popen is not None and self.popen.poll() is not None:
            return False
        return self.pid() is not None

    def stop(self, sig=signal.SIGTERM, timeout: float = 10) -> None:
        """Stop it (sig first; SIGKILL after timeout); no-op if not running."""
        pid = self.pid()
        if pid:
            if sig == signal.SIGKILL:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            kill(pid, timeout)
        if self.popen is not None:
            try:
                self.popen.wait(timeout=timeout)  # reap our child
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()
            self.popen = None
        self.pid_file.unlink(missing_ok=True)

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def etcdctl_tls_args(creds: dict, dir) -> list:
    """etcdctl's --cacert, --cert and --key for credentials (a credentials
    file's JSON: ca, cert, key as PEM), written into dir (mode 0600)."""
    args = []
    for what, flag in (("ca", "--cacert"), ("cert", "--cert"), ("key", "--key")):
        f = Path(dir) / f"{creds['user']}-{what}.pem"
        f.touch(mode=0o600)
        f.write_text(creds[what])
        args += [flag, str(f)]
    return args


class EtcdCluster:
    """A real etcd cluster of n members on loopback, each with its own data
    directory: what production runs instead of the embedded etcd. Mutual TLS
    on client and peer ports, with certificates from a CA that
    `e3-controller certs` makes (docs/security.md): the controller's
    --etcd-ca-dir is that CA's directory, and root's and the controller's
    credentials files are made beside it."""

    def __init__(self, state_dir, base_port: int, members: int = 3, name: str = "etcd"):
        self.state_dir = Path(state_dir)
        self.pki = self.state_dir / "pki"
        self.members = [f"{name}{i}" for i in range(members)]
        self.client_urls = {m: f"https://127.0.0.1:{base_port + 2 * i}" for i, m in enumerate(self.members)}
        self.peer_urls = {m: f"https://127.0.0.1:{base_port + 2 * i + 1}" for i, m in enumerate(self.members)}
        cluster = ",".join(f"{m}={self.peer_urls[m]}" for m in self.members)
        ca, crl = self.pki / "etcd-ca.crt", self.pki / "etcd-ca.crl"
        self.procs = {}
        for m in self.members:
            data, crt, key = self.state_dir / m, self.pki / f"{m}.crt", self.pki / f"{m}.key"
            self.procs[m] = Proc(m, self.state_dir, [
                str(ETCD), "--name", m, "--data-dir", str(data),
                "--listen-client-urls", self.client_urls[m], "--advertise-client-urls", self.client_urls[m],
                "--listen-peer-urls", self.peer_urls[m], "--initial-advertise-peer-urls", self.peer_urls[m],
                "--initial-cluster", cluster, "--initial-cluster-state", "new",
                "--initial-cluster-token", f"e3-{self.state_dir.name}",
                "--cert-file", str(crt), "--key-file", str(key), "--trusted-ca-file", str(ca),
                "--client-cert-auth", "--client-crl-file", str(crl),
                "--peer-cert-file", str(crt), "--peer-key-file", str(key), "--peer-trusted-ca-file", str(ca),
                "--peer-client-cert-auth", "--peer-crl-file", str(crl),
                # One controller change is one transaction (docs/control-plane.md, Limits).
                "--max-txn-ops", "65536", "--max-request-bytes", str(64 << 20),
                "--backend-batch-limit", str(1 << 20),
                "--log-level", "error"], marker=str(data))
        self._armed = False

    @property
    def endpoints(self) -> str:
        return ",".join(self.client_urls[m] for m in self.members)

    def credentials(self, user: str) -> Path:
        """The credentials file of a client user (root, e3-controller)."""
        return self.pki / f"{user}.json"

    def _certs(self) -> None:
        self.pki.mkdir(parents=True, exist_ok=True)
        certs = [str(binary("e3-controller")), "certs", "--ca-dir", str(self.pki)]
        for m in self.members:
            subprocess.run([*certs, "--cn", m, "--hosts", "127.0.0.1,localhost", "--out", str(self.pki / m)],
                           check=True, capture_output=True, timeout=30)
        for user in ("root", "e3-controller"):
            subprocess.run([*certs, "--cn", user, "--endpoints", self.endpoints,
                            "--credentials", str(self.credentials(user))], check=True, capture_output=True, timeout=30)
        root = json.loads(self.credentials("root").read_text())
        (self.pki / "root-client.crt").write_text(root["cert"])
        key = self.pki / "root-client.key"
        key.touch(mode=0o600)
        key.write_text(root["key"])

    def etcdctl(self, *args, members=None) -> subprocess.CompletedProcess:
        """etcdctl as root against members (default: all)."""
        eps = ",".join(self.client_urls[m] for m in (members or self.members))
        return subprocess.run(["etcdctl", "--endpoints", eps, "--cacert", str(self.pki / "etcd-ca.crt"),
                               "--cert", str(self.pki / "root-client.crt"), "--key", str(self.pki / "root-client.key"),
                               *args], capture_output=True, text=True, timeout=30,
                              env={**os.environ, "ETCDCTL_API": "3"})

    def start(self) -> "EtcdCluster":
        if not os.access(ETCD, os.X_OK):
            raise LabError(f"{ETCD}: missing (scripts/deps.sh installs etcd-server)")
        if not self._armed:
            on_exit(self.stop)
            self._armed = True
        try:
            self._certs()
            for p in self.procs.values():
                p.start()
            wait_for("etcd cluster healthy", self.healthy, timeout=60)
        except BaseException:
            self.stop()
            raise
        return self

    def healthy(self, members=None) -> bool:
        members = members or [m for m in self.members if self.procs[m].running()]
        return self.etcdctl("endpoint", "health", members=members).returncode == 0

    def stop(self) -> None:
        for p in self.procs.values():
            p.stop()
        shutil.rmtree(self.state_dir, ignore_errors=True)


class Replica:
    """One e3-controller process: its API URL and the certificate it made."""

    def __init__(self, proc: "Proc", server: str, ca_file: Path):
        self.proc, self.server, self.ca_file = proc, server, ca_file


class ControlPlane:
    """e3-controller and one e3-agent per node of a lab.

    cp = ControlPlane(lab, state_dir, api_port=23810, etcd_port=23811)
    cp.start()                     # controller (embedded etcd), agents; waits until converged
    cp.e3ctl("service", "create", "eline", "red", "--circuit", "leaf1:cust1:1000", ...)
    cp.stop_all()

    With etcd_cluster the controller uses that (external) etcd instead of
    its embedded one, and add_replica starts more replicas on it. With metrics_port, the agent of the i-th node serves
    /metrics on 127.0.0.1:metrics_port+i (metrics_url). The controller gets the lab's topology without its
    `services` (it would create them itself): services are made with e3ctl.
    """

    def __init__(self, lab: Lab, state_dir, api_port: int, etcd_port: int | None = None,
                 etcd_cluster: EtcdCluster | None = None, data_dir=None, safety_net: bool = True,
                 fabric: dict | None = None, metrics_port: int | None = None):
        if (etcd_port is None) == (etcd_cluster is None):
            raise LabError("ControlPlane: give etcd_port (embedded etcd) or etcd_cluster (external)")
        self.lab = lab
        self.state_dir = Path(state_dir)
        self.data_dir = Path(data_dir) if data_dir else self.state_dir / "controller"
        self.server = f"https://127.0.0.1:{api_port}"
        self.ca_file = self.data_dir / "api.crt"       # the controller's self-signed certificate
        # etcd asks every client for a certificate of the fabric's CA
        # (docs/security.md); each agent gets its own, issued by e3ctl node
        # credentials.
        self.etcd_endpoints = etcd_cluster.endpoints if etcd_cluster else f"https://127.0.0.1:{etcd_port}"
        self.etcd_peer_url = None if etcd_cluster else f"https://127.0.0.1:{etcd_port + 1}"
        self.token_file = self.state_dir / "token"
        self.topology_file = self.state_dir / "topology.yaml"
        self.etcd_cluster = etcd_cluster
        self.controller = Proc("e3-controller", self.state_dir, self._controller_cmd(api_port, self.data_dir),
                               marker=str(self.token_file))
        self.replicas = [Replica(self.controller, self.server, self.ca_file)]
        self.metrics = {n.name: f"127.0.0.1:{metrics_port + i}" for i, n in enumerate(lab.topo.nodes)
                        } if metrics_port else {}
        self.agents = {n.name: Proc(f"e3-agent-{n.name}", self.state_dir, [
            str(binary("e3-agent")), "--node", n.name, "--etcd-credentials", str(self.credentials_file(n.name)),
            "--dp-socket", lab.node_socket(n.name),
            *(["--metrics-listen", self.metrics[n.name], "--metrics-token-file", str(self.data_dir / "token.read")]
              if n.name in self.metrics else [])],
            marker=lab.node_socket(n.name))
            for n in lab.topo.nodes}
        self.safety_net = safety_net
        self.fabric = fabric or {}   # overrides of the topology's fabric settings
        self._armed = False

    def _controller_cmd(self, api_port: int, data_dir: Path) -> list:
        cmd = [str(binary("e3-controller")), "--data-dir", str(data_dir), "--listen", f"127.0.0.1:{api_port}",
               "--advertise", f"https://127.0.0.1:{api_port}",
               "--token-file", str(self.token_file), "--topology", str(self.topology_file)]
        if self.etcd_cluster:
            c = self.etcd_cluster
            cmd += ["--etcd-endpoints", self.etcd_endpoints, "--etcd-ca-dir", str(c.pki),
                    "--etcd-credentials", str(c.credentials("e3-controller")),
                    "--etcd-root-credentials", str(c.credentials("root"))]
        else:
            cmd += ["--etcd-listen", self.etcd_endpoints, "--etcd-peer-listen", self.etcd_peer_url]
        return cmd

    def add_replica(self, api_port: int) -> Replica:
        """One more controller replica on the same external etcd (not
        started): it campaigns for leadership and answers reads meanwhile."""
        if not self.etcd_cluster:
            raise LabError("replicas share an external etcd cluster")
        data_dir = self.state_dir / f"controller-{api_port}"
        proc = Proc(f"e3-controller-{api_port}", self.state_dir, self._controller_cmd(api_port, data_dir),
                    marker=str(data_dir))
        r = Replica(proc, f"https://127.0.0.1:{api_port}", data_dir / "api.crt")
        self.replicas.append(r)
        return r

    def metrics_url(self, node: str | None = None) -> str:
        """The /metrics URL of node's agent, or of the controller (None)."""
        if node is None:
            return self.server + "/metrics"
        return f"http://{self.metrics[node]}/metrics"

    def credentials_file(self, node: str) -> Path:
        return self.state_dir / f"{node}.etcd.json"

    def issue_credentials(self, node: str) -> dict:
        """New etcd credentials for node's agent (e3ctl node credentials), in
        the file its agent reads."""
        out = self.e3ctl("node", "credentials", node).stdout
        f = self.credentials_file(node)
        f.touch(mode=0o600)
        f.write_text(out)
        return json.loads(out)

    # ---- processes ------------------------------------------------------------
    def start(self, timeout: float = 60) -> "ControlPlane":
        """Controller, then every agent; returns once every node has applied
        its desired config. A failure stops what was started and re-raises."""
        if self.safety_net and not self._armed:
            on_exit(self.stop_all)
            self._armed = True
        try:
            self.stop_all()  # a stale control plane of the same state dir
            self.state_dir.mkdir(parents=True, exist_ok=True)
            if not self.token_file.exists():
                self.token_file.write_text(secrets.token_hex(16) + "\n")
                self.token_file.chmod(0o600)
            topo = yaml.safe_load(self.lab.topology_path.read_text())
            topo.pop("services", None)
            topo["fabric"] = {**(topo.get("fabric") or {}), **self.fabric}
            self.topology_file.write_text(yaml.safe_dump(topo, sort_keys=False))
            self.start_controller(timeout)
            for n in self.agents:
                self.issue_credentials(n)
                self.start_agent(n)
            self.wait_converged(timeout)
        except BaseException:
            self.stop_all()
            raise
        return self

    def stop_all(self) -> None:
        """Stop every agent and the controller (safe to call any number of times)."""
        for p in self.agents.values():
            p.stop()
        for r in self.replicas:
            r.proc.stop()

    @property
    def token(self) -> str:
        return self.token_file.read_text().strip()

    @property
    def read_token(self) -> str:
        """The read-only token, made by the controller on its first start."""
        return (self.data_dir / "token.read").read_text().strip()

    def ssl_context(self):
        """For raw HTTPS requests to the API: trusts the controller's certificate."""
        import ssl
        return ssl.create_default_context(cafile=str(self.ca_file))

    def start_controller(self, timeout: float = 60) -> int:
        """Start e3-controller and wait until it leads with the topology imported."""
        pid = self.controller.start()

        def leading():
            if not self.controller.running():
                raise LabError(f"e3-controller exited:\n{self.controller.log_tail()}")
            st = self.status()
            return st.get("leader") and st.get("nodes", 0) == len(self.lab.topo.nodes)
        wait_for("e3-controller leading with the topology", leading, timeout)
        return pid

    def stop_controller(self, sig=signal.SIGTERM) -> None:
        self.controller.stop(sig)

    def start_agent(self, node: str) -> int:
        return self.agents[node].start()

    def stop_agent(self, node: str, sig=signal.SIGTERM) -> None:
        self.agents[node].stop(sig)

    # ---- API --------------------------------------------------------------------
    def env(self, token: str | None = None, via: Replica | None = None) -> dict:
        """Environment for e3ctl against via (default: the first replica): E3_SERVER, E3_CA, and
        E3_TOKEN_FILE (token=None: ours) or E3_TOKEN."""
        via = via or self.replicas[0]
        env = {k: v for k, v in os.environ.items() if k not in ("E3_SERVER", "E3_TOKEN", "E3_TOKEN_FILE", "E3_CA")}
        env["E3_SERVER"] = via.server
        env["E3_CA"] = str(via.ca_file)
        if token is None:
            env["E3_TOKEN_FILE"] = str(self.token_file)   # as an operator would: never on the command line
        elif token:
            env["E3_TOKEN"] = token
        return env

    def e3ctl(self, *args, check: bool = True, token: str | None = None, timeout: float = 30,
              via: Replica | None = None) -> subprocess.CompletedProcess:
        """Run e3ctl against this controller (via: that replica); check=True raises with its message on failure."""
        p = subprocess.run([str(binary("e3ctl")), *map(str, args)], capture_output=True, text=True,
                           env=self.env(token, via), timeout=timeout)
        if check and p.returncode != 0:
            raise LabError(f"e3ctl {' '.join(map(str, args))} -> exit {p.returncode}: {(p.stderr or p.stdout).strip()}")
        return p

    def json(self, *args, via: Replica | None = None):
        return json.loads(self.e3ctl("--json", *args, via=via).stdout)

    def status(self, via: Replica | None = None) -> dict:
        return self.json("status", via=via)

    def nodes(self, via: Replica | None = None) -> list:
        return self.json("node", "list", via=via)

    def services(self, via: Replica | None = None) -> list:
        return self.json("service", "list", via=via)

    def service(self, name: str) -> dict:
        return self.json("service", "show", name)

    def create_service(self, name: str, type_: str, circuits, *options) -> dict:
        """circuits: "node:port:vlan" strings; options: e3ctl's, e.g. "--ecmp"."""
        args = ["service", "create", type_, name, *options]
        for c in circuits:
            args += ["--circuit", c]
        return json.loads(self.e3ctl("--json", *args).stdout)

    def converged(self, via: Replica | None = None) -> bool:
        """Every node's agent reports, without error, the generation the controller wants."""
        nodes = self.nodes(via)
        return bool(nodes) and all(n["up"] and not n.get("error") and n["applied_generation"] == n["desired_generation"]
                                   for n in nodes)

    def wait_converged(self, timeout: float = 60, via: Replica | None = None) -> None:
        via = via or self.replicas[0]
        def check():
            for name, p in [("e3-controller", via.proc)] + list(self.agents.items()):
                if not p.running():
                    raise LabError(f"{name} is not running:\n{p.log_tail()}")
            return self.converged(via)
        try:
            wait_for("every node applied its desired config", check, timeout)
        except LabError as e:
            try:
                detail = self.e3ctl("node", "list", check=False, via=via).stdout
            except Exception:  # noqa: BLE001 - only for the message
                detail = ""
            raise LabError(f"{e}\n{detail}") from None

    def wait_service(self, name: str, state: str = "programmed", timeout: float = 30) -> dict:
        def check():
            s = self.service(name)
            if s["status"]["state"] != state:
                raise LabError(f"{s['status']['state']}: {s['status'].get('reason', '')}")
            return s
        return wait_for(f"service {name} {state}", check, timeout)

    @staticmethod
    def active_path(svc: dict) -> list:
        """An E-Line's active path as hops [{link, from, from_port, to, to_port}]."""
        r = svc.get("route") or {}
        return r.get(r.get("active") or "", [])

    @staticmethod
    def path_nodes(path: list) -> list:
        return [path[0]["from"]] + [h["to"] for h in path] if path else []
