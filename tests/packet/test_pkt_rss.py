"""Two workers (functional, on this two-CPU machine): a customer port with
two receive queues, which its device spreads by flow (af_packet's fanout
hash, as a NIC's RSS), each polled by its own worker, each sending on its
own TX queue. Every frame arrives, both workers carry some, and no flow is
reordered: a flow stays on one queue, so on one worker."""
import struct

import pytest

from pkt_frames import customer_frame, parse_fabric, token
from pkt_switch import Switch
from test_pkt_eline import HOST_A, HOST_B, LABEL_OUT, eline

FLOWS, PER_FLOW = 64, 12


@pytest.fixture(scope="module")
def switch(request):
    sw = Switch("rss", workers=2)
    request.addfinalizer(sw.stop)
    sw.start()
    # c1 again, with two queues: the workers are picked least loaded first.
    sw.rpc("port_del", name="c1")
    sw.rpc("port_add", name="c1", devargs="net_af_packet_c1,iface=c1", kind="customer", rx_queues=2)
    return sw


def frame(tok, flow, seq):
    return customer_frame(HOST_B, HOST_A, tok + struct.pack("!HH", flow, seq), vlan=1000, sport=10000 + flow)


def test_two_workers_share_a_port_without_reordering(sw, wire):
    info = sw.rpc("system_info")
    assert info["workers"] == 2
    assert sorted(sw.port("c1")["workers"]) == [0, 1]
    eline(sw)
    sw.rpc("stats_clear")
    tok = token()
    sends = [("c1p", frame(tok, f, s)) for s in range(PER_FLOW) for f in range(FLOWS)]
    got = wire.exchange(sends, expect=len(sends), match=tok, timeout=20)
    out = got["f1p"]
    assert len(out) == len(sends), f"{len(out)} of {len(sends)} frames"
    seqs = {}
    for f in out:
        fab = parse_fabric(f)
        assert fab.label == LABEL_OUT
        i = fab.inner.index(tok) + len(tok)
        flow, seq = struct.unpack("!HH", fab.inner[i:i + 4])
        seqs.setdefault(flow, []).append(seq)
    assert all(s == list(range(PER_FLOW)) for s in seqs.values()), "a flow was reordered"
    assert len(seqs) == FLOWS
    workers = sw.rpc("stats_get")["workers"]
    assert all(w["rx_pkts"] > 0 for w in workers), [w["rx_pkts"] for w in workers]
    queues = sw.port("c1")["rxq_pkts"]
    assert len(queues) == 2 and all(q > 0 for q in queues), queues
