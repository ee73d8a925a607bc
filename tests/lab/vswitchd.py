"""One e3-vswitchd for a test or the demo: the harness every Python suite
starts the datapath with (tests/README.md).

It builds the command line, starts the process (in a network namespace if
given one), waits until its RPC socket answers, and follows the process
across a warm restart (SIGUSR2: exit 75, then the same command) and a
handover (SIGHUP: a new process of the binary takes over). It stops only the
process it started, by PID; with a pid file, a later process (`make
demo-down`) can find and stop it too.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


class LabError(RuntimeError):
    pass


def binary() -> Path:
    return Path(os.environ.get("E3_VSWITCHD", REPO / "build" / "bin" / "e3-vswitchd"))


def agent_binary() -> Path:
    return Path(os.environ.get("E3_AGENT", REPO / "build" / "bin" / "e3-agent"))


def sync(sock: str, doc: dict) -> dict:
    """Make the node on sock equal to doc, deletions included, with the
    agent's planner (`e3-agent sync`): {"added", "replaced", "removed"}."""
    p = subprocess.run([str(agent_binary()), "sync", "--dp-socket", str(sock), "-"], input=json.dumps(doc),
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise LabError(f"e3-agent sync: {p.stderr.strip()}")
    return json.loads(p.stdout)


def rpc_module():
    """e3rpc lives with the datapath (datapath/client); import it from the repo."""
    path = str(REPO / "datapath" / "client")
    if path not in sys.path:
        sys.path.insert(0, path)
    import e3rpc
    return e3rpc


class Vswitchd:
    """vs = Vswitchd("leaf1", file_prefix="e2-leaf1", sock="/run/e3/e2/leaf1.sock",
                     log="/run/e3/e2/leaf1.log", netns="e2-leaf1", args=["--checkpoint", ...])
    vs.start(); vs.client().call("system_info"); vs.stop()"""

    def __init__(self, name: str, *, file_prefix: str, sock, log, lcores: str = "0,1",
                 mem_mb: int = 256, poll_mode: str = "adaptive", mac_table_size: int = 65536,
                 args=(), netns: str | None = None, env: dict | None = None, pid_file=None):
        self.name, self.file_prefix = name, file_prefix
        self.sock, self.log_path = str(sock), Path(log)
        self.lcores, self.mem_mb = lcores, mem_mb
        self.poll_mode, self.mac_table_size = poll_mode, mac_table_size
        self.args = list(args)      # more of the switch's own options
        self.netns, self.env = netns, env
        self.pid_file = Path(pid_file) if pid_file else None
        self.proc: subprocess.Popen | None = None   # the process we started, while it is ours
        self._pid: int | None = None                # the process running the node now
        self.exit_status: int | None = None         # of the last process that left on a signal

    def cmd(self) -> list:
        cmd = [str(binary()), "--lcores", self.lcores, "--no-pci", "--no-huge", "-m", str(self.mem_mb),
               "--file-prefix", self.file_prefix, "--", "--name", self.name, "--rpc-socket", self.sock,
               "--poll-mode", self.poll_mode, "--mac-table-size", str(self.mac_table_size), *self.args]
        return ["ip", "netns", "exec", self.netns, *cmd] if self.netns else cmd

    # ---- the process ----------------------------------------------------------
    def start(self, timeout: float = 30) -> int:
        """Start it and wait until its RPC socket answers; returns its PID.
        A process that exits meanwhile, or does not answer in time, is an
        error carrying its log's tail."""
        if self.pid():
            raise LabError(f"{self.name}: e3-vswitchd already running (pid {self.pid()})")
        if not os.access(binary(), os.X_OK):
            raise LabError(f"{binary()}: not built (make datapath)")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        Path(self.sock).unlink(missing_ok=True)
        with open(self.log_path, "ab") as log:
            # Own session: a Ctrl-C in the terminal is for pytest or the
            # demo's script, which stop it in order.
            self.proc = subprocess.Popen(self.cmd(), stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True,
                                         env=dict(os.environ, **self.env) if self.env else None)
        # `ip netns exec` execs the command: this PID is e3-vswitchd's.
        self._pid = self.proc.pid
        if self.pid_file:
            self.pid_file.write_text(f"{self._pid}\n")
        deadline = time.monotonic() + timeout
        while not (os.path.exists(self.sock) and self.answers()):
            if self.proc.poll() is not None:
                raise LabError(f"{self.name}: e3-vswitchd exited with {self.proc.returncode} at start:\n"
                               f"{self.log_tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise LabError(f"{self.name}: RPC socket {self.sock} did not answer within {timeout}s:\n"
                               f"{self.log_tail()}")
            time.sleep(0.1)
        return self._pid

    def answers(self) -> bool:
        c = self.client()
        try:
            c.call("system_info")
            return True
        except (OSError, rpc_module().RpcError):
            return False
        finally:
            c.close()

    def pid(self) -> int | None:
        """PID of the running datapath, or None. A PID from the pid file
        counts only if that process is this e3-vswitchd (PIDs get reused)."""
        pid = self._pid
        if pid is None and self.pid_file:
            try:
                pid = int(self.pid_file.read_text())
            except (OSError, ValueError):
                return None
        if pid is None or not alive(pid):
            return None
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            return None
        return pid if self.file_prefix.encode() in cmdline and b"--rpc-socket" in cmdline else None

    def alive(self) -> bool:
        return self.pid() is not None

    def stop(self, timeout: float = 10) -> None:
        """SIGTERM (a planned stop), then SIGKILL; reaps our child, removes
        the socket, pid file and DPDK runtime folder. No-op if not running."""
        pid = self.pid()
        if pid:
            kill(pid, timeout)
        self._reap(timeout)
        self._pid = None
        if self.pid_file:
            self.pid_file.unlink(missing_ok=True)
        Path(self.sock).unlink(missing_ok=True)
        shutil.rmtree(f"/var/run/dpdk/{self.file_prefix}", ignore_errors=True)

    def _reap(self, timeout: float):
        if self.proc is not None:
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None

    def warm_restart(self, timeout: float = 30) -> int:
        """SIGUSR2: the datapath holds its BFD neighbours, writes its
        checkpoint (--checkpoint) and exits 75; the same command then
        resumes from it. Returns the new PID."""
        pid = self.pid()
        if pid is None:
            raise LabError(f"{self.name}: no datapath of ours to restart")
        os.kill(pid, signal.SIGUSR2)
        self._gone(pid, timeout, "SIGUSR2", 75)
        return self.start()

    def handover(self, timeout: float = 30) -> int:
        """SIGHUP: the datapath starts a new process of its binary beside
        itself, hands the node over and exits 0. Returns the new PID (the
        process is not our child: stopped by PID)."""
        pid = self.pid()
        if pid is None:
            raise LabError(f"{self.name}: no datapath of ours to hand over")
        os.kill(pid, signal.SIGHUP)
        self._gone(pid, timeout, "SIGHUP", 0)
        new = self.client().call("system_info")["pid"]
        if new == pid:
            raise LabError(f"{self.name}: still pid {pid} after SIGHUP:\n{self.log_tail()}")
        self._pid = new
        if self.pid_file:
            self.pid_file.write_text(f"{new}\n")
        return new

    def _gone(self, pid: int, timeout: float, sig: str, rc: int) -> None:
        """Wait for pid to exit after sig, with rc if it is our child (after
        a handover it is not: its status is its parent's to read). Keeps
        the status in exit_status (None: not ours to read)."""
        deadline = time.monotonic() + timeout
        while alive(pid):
            if time.monotonic() > deadline:
                raise LabError(f"{self.name}: still running {timeout}s after {sig}:\n{self.log_tail()}")
            time.sleep(0.02)
        proc, self.proc, self._pid = self.proc, None, None
        self.exit_status = proc.wait() if proc is not None and proc.pid == pid else None
        if self.exit_status not in (None, rc):
            raise LabError(f"{self.name}: exited {self.exit_status} on {sig}, not {rc}:\n{self.log_tail()}")

    # ---- talking to it ----------------------------------------------------------
    def client(self, timeout: float = 60):
        """A JSON-RPC client (datapath/client/e3rpc.py) on its socket."""
        return rpc_module().Client(self.sock, timeout=timeout)

    def sync(self, doc: dict) -> dict:
        """Make the node equal to doc (a config_dump document): module sync()."""
        return sync(self.sock, doc)

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def kill(pid: int, timeout: float = 10) -> None:
    """SIGTERM a process we started, SIGKILL it if it does not go."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    while alive(pid):
        time.sleep(0.05)


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie (a zombie is dead,
    only waiting for its parent to reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
