"""The Debian packages (make package): lintian has no error, every unit
passes systemd-analyze verify, and a clean Debian root that installs them
from the mirror runs each program from its unit's ExecStart (there is no
systemd as PID 1 here): the controller, a switch with a port on a PMD that
the package's dependencies bring, and an agent that reaches the controller's
etcd with the credentials e3ctl issued and reports its node.

The root is built by mmdebstrap; the programs run chrooted into it, in a
network namespace of their own so their ports collide with nothing.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import time
import uuid

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(REPO, "build", "package")
UNITS = ["e3-vswitchd@.service", "e3-agent@.service", "e3-controller.service"]
NODE = "leaf1"
TOPOLOGY = "name: pkg\nnodes:\n  - {name: leaf1, role: leaf}\n"


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


@pytest.fixture(scope="module")
def debs():
    r = run([os.path.join(REPO, "scripts", "package.sh")], cwd=REPO, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    found = sorted(os.path.join(OUT, f) for f in os.listdir(OUT)
                   if f.endswith(".deb") and "-dbgsym_" not in f)
    assert {re.sub(r"_.*", "", os.path.basename(f)) for f in found} == \
        {"e3-vswitchd", "e3-agent", "e3-controller", "e3ctl"}
    return found


@pytest.fixture(scope="module")
def root(debs, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("root") / "debian")
    # apt resolves the packages' dependencies from the mirror, as an
    # operator's apt would; systemd is there for systemd-analyze only.
    r = run(["mmdebstrap", "--variant=apt", "--mode=root", "--include=systemd,procps",
             "--customize-hook=mkdir -p \"$1/tmp/debs\"",
             "--customize-hook=copy-in " + " ".join(debs) + " /tmp/debs",
             "--customize-hook=chroot \"$1\" sh -c 'apt-get install -y -q --no-install-recommends /tmp/debs/*.deb'",
             "bookworm", path], timeout=900)
    assert r.returncode == 0, r.stderr[-4000:]
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_lintian_has_no_error(debs):
    with open(os.path.join(OUT, "lintian.txt")) as f:
        tags = f.read().splitlines()
    assert not [t for t in tags if t.startswith("E:")], tags


@pytest.mark.parametrize("unit", ["e3-vswitchd@leaf1.service", "e3-agent@leaf1.service",
                                  "e3-controller.service"])
def test_unit_verifies(root, unit):
    r = run(["systemd-analyze", "verify", "--root=" + root, unit], timeout=60)
    assert r.returncode == 0 and r.stdout + r.stderr == "", r.stdout + r.stderr


def exec_start(root, unit, instance=""):
    """The unit's ExecStart as argv, %i replaced."""
    with open(os.path.join(root, "lib/systemd/system", unit)) as f:
        line = next(l for l in f if l.startswith("ExecStart="))
    return line.split("=", 1)[1].replace("%i", instance).split()


class Chroot:
    """Processes chrooted into root, in a network namespace of their own."""

    def __init__(self, root):
        self.root, self.ns, self.procs, self.mounts = root, "e3pkg" + uuid.uuid4().hex[:6], [], []
        subprocess.run(["ip", "netns", "add", self.ns], check=True)
        subprocess.run(["ip", "-n", self.ns, "link", "set", "lo", "up"], check=True)
        for what, opts in (("proc", ["-t", "proc", "proc"]), ("sys", ["--rbind", "/sys"]),
                           ("dev", ["--rbind", "/dev"])):
            subprocess.run(["mount"] + opts + [os.path.join(root, what)], check=True)
            self.mounts.append(os.path.join(root, what))

    def argv(self, cmd):
        return ["ip", "netns", "exec", self.ns, "chroot", self.root] + cmd

    def run(self, cmd, **kw):
        return run(self.argv(cmd), timeout=60, **kw)

    def start(self, cmd, log):
        p = subprocess.Popen(self.argv(cmd), stdout=open(log, "w"), stderr=subprocess.STDOUT)
        self.procs.append(p)
        return p

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for m in reversed(self.mounts):
            subprocess.run(["umount", "-R", "-l", m])
        subprocess.run(["ip", "netns", "del", self.ns])


def wait(what, fn, timeout=60):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = fn()
        if v:
            return v
        time.sleep(0.2)
    pytest.fail("timed out waiting for " + what)


def write(root, path, text, mode=0o644):
    full = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)
    os.chmod(full, mode)


def test_programs_start_from_the_packages(root, tmp_path):
    c = Chroot(root)
    try:
        logs = {}

        def start(name, argv):
            logs[name] = str(tmp_path / (name + ".log"))
            return c.start(argv, logs[name])

        def log(name):
            with open(logs[name]) as f:
                return f.read()

        # The controller, with the configuration file the package installs.
        write(root, "/etc/e3/topology.yaml", TOPOLOGY)
        ctl = start("controller", exec_start(root, "e3-controller.service") +
                    ["--topology", "/etc/e3/topology.yaml", "--grace", "0s"])
        e3ctl = ["e3ctl", "--ca", "/var/lib/e3/controller/api.crt",
                 "--token-file", "/var/lib/e3/controller/token", "--json"]
        wait("the controller's API", lambda: ctl.poll() is None and
             c.run(e3ctl + ["node", "list"]).returncode == 0 or ctl.poll() is not None)
        assert ctl.poll() is None, log("controller")

        # The switch: the shipped example, on no PCI device and no hugepages.
        with open(os.path.join(root, "usr/share/doc/e3-vswitchd/examples/vswitchd.conf")) as f:
            conf = f.read().replace("NAME", NODE)
        conf = re.sub(r"(?m)^eal = .*$", "eal = -l 0-1 --no-pci --no-huge -m 1024 --file-prefix e3pkg", conf)
        write(root, "/etc/e3/vswitchd/%s.conf" % NODE, conf)
        vs = start("vswitchd", exec_start(root, "e3-vswitchd@.service", NODE) + ["--stop-grace-ms", "0"])
        sock = "/run/e3/%s.sock" % NODE
        wait("the switch's socket", lambda: os.path.exists(root + sock) or vs.poll() is not None)
        assert vs.poll() is None, log("vswitchd")
        dpctl = ["e3-dpctl", "-s", sock, "--json"]
        r = c.run(dpctl + ["port", "add", "--name", "c1", "--devargs", "net_null0", "--kind", "customer"])
        assert r.returncode == 0, r.stderr
        r = c.run(dpctl + ["port", "list"])
        assert r.returncode == 0 and "c1" in r.stdout, r.stdout + r.stderr

        # The agent: credentials from e3ctl, the shipped example.
        r = c.run(e3ctl + ["node", "credentials", NODE])
        assert r.returncode == 0, r.stderr
        creds = "/etc/e3/agent/%s.credentials.json" % NODE
        write(root, creds, r.stdout, 0o600)
        with open(os.path.join(root, "usr/share/doc/e3-agent/examples/agent.conf")) as f:
            write(root, "/etc/e3/agent/%s.conf" % NODE, f.read().replace("NAME", NODE))
        agent = start("agent", exec_start(root, "e3-agent@.service", NODE))

        def reported():
            r = c.run(e3ctl + ["node", "list"])
            nodes = json.loads(r.stdout) if r.returncode == 0 else []
            n = next((n for n in nodes if n.get("name") == NODE), {})
            return n.get("agent_up") and n.get("boot_id")
        wait("the agent's report", lambda: reported() or agent.poll() is not None)
        assert agent.poll() is None, log("agent")

        # A planned stop of each ends cleanly.
        for name, p in (("agent", agent), ("vswitchd", vs), ("controller", ctl)):
            p.send_signal(signal.SIGTERM)
            assert p.wait(timeout=30) == 0, log(name)
    finally:
        c.close()
