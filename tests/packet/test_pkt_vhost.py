"""vhost-user ports (net_vhost) with DPDK's virtio_user as the VM
(pkt_vm.VM: testpmd, io forwarding to a veth the test owns): an E-Line
from the VM's port both ways, two queue pairs both used, the port's link
following the VM as it goes and comes back (e3 the vhost-user server, or
the client of a VM that is), full-size frames with mergeable buffers, and
a VM that stops draining its rings: e3 counts what it cannot give it and
keeps forwarding everything else."""
import os

import pytest

from pkt_frames import customer_frame, fabric_frame, token
from pkt_net import Wire, wait_for
from pkt_switch import MAC, PEER_MAC, PEERS
from pkt_vm import VM
from test_pkt_eline import HOST_A, HOST_B, LABEL_IN, LABEL_OUT

VM_MAC, VM_PEER_MAC = "02:00:00:0f:00:01", "02:00:00:0f:00:99"


@pytest.fixture(scope="module")
def wire(switch):
    """The switch's wire, and the veth between the VM's af_packet port (vm)
    and the test (vmp)."""
    switch.netns.add_veth("vm", VM_MAC, VM_PEER_MAC, 2100)
    w = Wire(switch.ns, PEERS + ["vmp"])
    yield w
    w.close()


def sock_path(sw, tag):
    return f"/tmp/{sw.ns}-{tag}.sock"


def vm_eline(sw, port):
    """E-Line 1 between the VM's port (untagged) and fabric port f1."""
    sw.nhlfe(1, "f1", LABEL_OUT)
    sw.rpc("service_add", id=1, type="eline", name="vm-eline", nhlfe=1)
    sw.rpc("circuit_add", id=1, port=port, vlan="untagged", service=1)
    sw.rpc("label_add", label=LABEL_IN, type="eline", service=1)


def remove_vm(sw, machine, port, path):
    """The VM and its port go, and the port's socket with them."""
    machine.close()
    sw.reset()
    sw.rpc("port_del", name=port)
    if os.path.exists(path):
        os.unlink(path)


@pytest.fixture
def vm(sw):
    """A VM on vhost-user port vm1 (e3 the server, 2 queue pairs), in an
    E-Line to fabric port f1; the port and the VM go after the test."""
    path = sock_path(sw, "vm1")
    sw.rpc("port_add", name="vm1", kind="customer", rx_queues=2,
           devargs=f"net_vhost0,iface={path},queues=2")
    machine = VM(sw.ns, path).start()
    try:
        wait_for(lambda: sw.port("vm1")["link"] == "up", timeout=30, what="vm1 up (the VM connected)")
        vm_eline(sw, "vm1")
        yield machine
    finally:
        remove_vm(sw, machine, "vm1", path)


def from_vm(tok, sport=4000, size=128):
    return customer_frame(HOST_B, HOST_A, tok, sport=sport, size=size)


def to_vm(tok, sport=4000, size=128):
    return fabric_frame(MAC["f1"], PEER_MAC["f1"], LABEL_IN, customer_frame(HOST_A, HOST_B, tok, sport=sport,
                                                                              size=size))


def test_both_directions(sw, wire, vm):
    tok = token()
    got = wire.exchange([("vmp", from_vm(tok, 4000 + k)) for k in range(20)], expect=20, match=tok, timeout=10)
    assert len(got["f1p"]) == 20 and not got["vmp"], "the VM's frames into the E-Line"
    tok = token()
    got = wire.exchange([("f1p", to_vm(tok, 4000 + k)) for k in range(20)], expect=20, match=tok, timeout=10)
    assert len(got["vmp"]) == 20, "the E-Line's frames to the VM"
    sent = {to_vm(tok, 4000 + k)[22:] for k in range(20)}
    assert set(got["vmp"]) == sent, "the customer's frames, exactly as they entered the pseudowire"


def test_two_queue_pairs_both_carry_traffic(sw, wire, vm):
    tok = token()
    # Many flows: the VM's af_packet port spreads them over its two queues
    # (fanout by flow hash), and testpmd sends each on the same virtio queue.
    got = wire.exchange([("vmp", from_vm(tok, 1000 + k)) for k in range(200)], expect=200, match=tok, timeout=10)
    assert len(got["f1p"]) == 200
    q = sw.port("vm1")["rxq_pkts"]
    assert len(q) == 2 and all(n > 0 for n in q), f"per-queue frames {q}"


def test_full_size_frames_with_mergeable_buffers(sw, wire, vm):
    tok = token()
    got = wire.exchange([("vmp", from_vm(tok, size=1514))], expect=1, match=tok, timeout=10)
    assert len(got["f1p"]) == 1 and len(got["f1p"][0]) == 1514 + 22
    tok = token()
    got = wire.exchange([("f1p", to_vm(tok, size=1514))], expect=1, match=tok, timeout=10)
    assert len(got["vmp"]) == 1 and len(got["vmp"][0]) == 1514
    tok = token()
    got = wire.exchange([("vmp", from_vm(tok, size=1600))], expect=0, match=tok, timeout=10)
    assert not got["f1p"]
    sw.wait_drops("vm1", {"oversize": 1})


def test_vm_goes_away_and_comes_back(sw, wire, vm):
    vm.kill()
    wait_for(lambda: sw.port("vm1")["link"] == "down", timeout=30, what="vm1 down (the VM went away)")
    tok = token()
    wire.exchange([("f1p", to_vm(tok))], expect=0, match=tok, timeout=10)
    sw.wait_drops("f1", {"no_nexthop": 1}, total=False)
    vm.start()
    wait_for(lambda: sw.port("vm1")["link"] == "up", timeout=30, what="vm1 up again (the VM reconnected)")
    tok = token()
    got = wire.exchange([("f1p", to_vm(tok))], expect=1, match=tok, timeout=10)
    assert len(got["vmp"]) == 1
    tok = token()
    got = wire.exchange([("vmp", from_vm(tok))], expect=1, match=tok, timeout=10)
    assert len(got["f1p"]) == 1


def test_stalled_vm_costs_only_its_own_frames(sw, wire, vm):
    # Another E-Line, c1 <-> f2, must not notice.
    sw.nhlfe(2, "f2", 300)
    sw.rpc("service_add", id=2, type="eline", name="other", nhlfe=2)
    sw.rpc("circuit_add", id=2, port="c1", vlan=77, service=2)
    vm.pause()
    try:
        tok, other = token(), token()
        sends = [("f1p", to_vm(tok, 2000 + k)) for k in range(3000)]
        sends[::30] = [("c1p", customer_frame(HOST_B, HOST_A, other, vlan=77))] * len(sends[::30])
        got = wire.exchange(sends, expect=len(sends[::30]), match=other, timeout=10)
        assert len(got["f2p"]) == len(sends[::30]), "the other service forwards while the VM is stalled"
        wait_for(lambda: sw.port("vm1")["stats"]["drops"].get("tx_full", 0) > 0, what="tx_full on vm1")
        assert sw.port("vm1")["link"] == "up"
    finally:
        vm.resume()

    def delivered():
        # Until the resumed VM has run and drained its ring, e3 counts what
        # it sends it as tx_full, as while it was stalled: send again.
        tok = token()
        got = wire.exchange([("f1p", to_vm(tok))], expect=1, match=tok, timeout=1)
        return len(got["vmp"]) == 1
    wait_for(delivered, timeout=30, interval=0, what="a frame reaching the VM once it drains again")


def test_e3_as_client_of_a_vm_that_is_the_server(sw, wire):
    path = sock_path(sw, "vm2")
    machine = VM(sw.ns, path, server=True, tag="vm2").start()
    try:
        sw.rpc("port_add", name="vm2", kind="customer", rx_queues=2,
               devargs=f"net_vhost1,iface={path},queues=2,client=1")
        wait_for(lambda: sw.port("vm2")["link"] == "up", timeout=30, what="vm2 up (e3 connected)")
        machine.wait_forwarding()
        vm_eline(sw, "vm2")
        tok = token()
        got = wire.exchange([("vmp", from_vm(tok))], expect=1, match=tok, timeout=10)
        assert len(got["f1p"]) == 1
        # The VM restarts: e3 reconnects to it by itself.
        machine.kill()
        wait_for(lambda: sw.port("vm2")["link"] == "down", timeout=30, what="vm2 down")
        machine.start()
        wait_for(lambda: sw.port("vm2")["link"] == "up", timeout=30, what="vm2 up (e3 reconnected)")
        machine.wait_forwarding()
        tok = token()
        got = wire.exchange([("f1p", to_vm(tok))], expect=1, match=tok, timeout=10)
        assert len(got["vmp"]) == 1
    finally:
        remove_vm(sw, machine, "vm2", path)
