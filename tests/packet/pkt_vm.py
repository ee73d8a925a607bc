"""A "VM" for the vhost-user tests, as DPDK tests vhost without one:
dpdk-testpmd on a virtio_user port (the VM's NIC on the switch's vhost-user
socket), forwarding in io mode to and from an af_packet port on a veth
whose other end the test owns. Frames the test sends on that veth enter the
switch from the VM; frames the switch sends the VM come out on it.

    test (vmp) <-veth-> vm: testpmd net_af_packet <-io-> net_virtio_user <-vhost-user-> e3 net_vhost
"""
import os
import signal
import subprocess

import pytest

from pkt_net import wait_for

TESTPMD = "/usr/bin/dpdk-testpmd"


class VM:
    def __init__(self, ns, sock, queues=2, server=False, tag="vm"):
        self.ns, self.sock, self.queues, self.server = ns, sock, queues, server
        self.prefix = f"{ns}-{tag}"
        self.logpath = f"/tmp/{self.prefix}.log"
        self.proc = None

    def start(self):
        if not os.access(TESTPMD, os.X_OK):
            pytest.fail(f"{TESTPMD} missing (Debian's dpdk package)")
        vdev = f"net_virtio_user0,path={self.sock},queues={self.queues}" + (",server=1" if self.server else "")
        if self.server and os.path.exists(self.sock):
            os.unlink(self.sock)   # a killed server leaves its socket, as QEMU would remove it
        log = open(self.logpath, "wb")   # this run's: start waits for its line
        self.proc = subprocess.Popen(
            ["ip", "netns", "exec", self.ns, "stdbuf", "-oL", TESTPMD, "-l", "0,1", "--no-pci", "--no-huge", "-m", "256",
             "--file-prefix", self.prefix, "--vdev", vdev,
             "--vdev", f"net_af_packet0,iface=vm,qpairs={self.queues}",
             "--", "--forward-mode=io", "--auto-start", f"--rxq={self.queues}", f"--txq={self.queues}",
             "--nb-cores=1", "--no-mlockall", "--total-num-mbufs=16384", "--disable-link-check"],
            stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        if self.server:
            # It waits for the switch to connect before it goes on.
            wait_for(lambda: any(x in self.log_tail(200) for x in ("waiting for client connection", "Press enter"))
                     or self.proc.poll() is not None, timeout=30, what="the VM's vhost-user server socket")
        else:
            self.wait_forwarding()
        self.check_alive()
        return self

    def wait_forwarding(self):
        wait_for(lambda: "Press enter to exit" in self.log_tail() or self.proc.poll() is not None, timeout=30,
                 what="the VM forwarding")
        self.check_alive()

    def check_alive(self):
        if self.proc.poll() is not None:
            pytest.fail(f"testpmd exited with {self.proc.returncode}:\n{self.log_tail()}")

    def log_tail(self, n=30):
        try:
            with open(self.logpath, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def pause(self):
        os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self):
        os.kill(self.proc.pid, signal.SIGCONT)

    def kill(self):
        """The VM goes away at once (no clean shutdown)."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
            self.proc.kill()
            self.proc.wait(10)
        subprocess.run(["rm", "-rf", f"/var/run/dpdk/{self.prefix}"], check=False)

    def close(self):
        """After the test: the VM goes, and its log with it."""
        self.kill()
        try:
            os.unlink(self.logpath)
        except FileNotFoundError:
            pass
