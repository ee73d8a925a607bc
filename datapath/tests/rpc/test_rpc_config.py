"""config_dump / config_load: snapshot and restore of a whole node.
config_load adds and replaces, and deletes nothing; `e3-agent sync` makes a
node equal to a document, deletions included, with the agent's planner."""
import copy
import json
import socket
import threading

import pytest

from rpc_lab import BASE, DEFAULT_SETTINGS, call_error, null_port, strip_stats, unchanged


def test_round_trip_changes_nothing(base):
    d = base.call("config_dump")
    assert base.call("config_load", d) == {"added": 0, "replaced": 0}
    assert base.call("config_dump") == d
    # through JSON text, as a file would carry it
    d2 = json.loads(json.dumps(d))
    assert base.call("config_load", d2) == {"added": 0, "replaced": 0}
    assert base.call("config_dump") == d


def test_round_trip_of_path_checks(base):
    """A path session (BFD over an LSP) and its OAM label dump and load
    back as they were, beside a link session on the same nexthop's port."""
    base.call("bfd_add", id=1, nexthop=1)
    base.call("bfd_add", id=9, nexthop=1, label=3000, tx_ms=50, multiplier=5)
    base.call("label_add", label=3001, type="oam", session=9)
    d = base.call("config_dump")
    assert {"id": 9, "nexthop": 1, "label": 3000, "tx_ms": 50, "rx_ms": 10, "multiplier": 5,
            "wtr_s": 5} in d["bfd"]
    assert "label" not in [b for b in d["bfd"] if b["id"] == 1][0]
    assert {"label": 3001, "type": "oam", "session": 9} in d["labels"]
    assert base.call("config_load", d) == {"added": 0, "replaced": 0}
    assert base.call("config_dump") == d
    # The path's label changes: a new session, reported as replaced.
    d["bfd"] = [dict(b, label=3002) if b["id"] == 9 else b for b in d["bfd"]]
    assert base.call("config_load", d) == {"added": 0, "replaced": 1}
    (b,) = [b for b in base.call("bfd_list") if b["id"] == 9]
    assert b["label"] == 3002 and b["state"] == "down"


def test_load_into_empty_node_and_counts(dp, rpc):
    n = sum(len(BASE[k]) for k in ("ports", "nexthops", "nhlfes", "services", "circuits",
                                   "labels"))
    assert rpc.call("config_load", BASE) == {"added": n, "replaced": 0}
    d = rpc.call("config_dump")
    for key in ("nexthops", "nhlfes", "services", "circuits", "labels"):
        assert d[key] == BASE[key]
    # an empty document deletes nothing; synced to it, everything goes
    with unchanged(rpc):
        assert rpc.call("config_load", version=1) == {"added": 0, "replaced": 0}
    assert dp.sync({"version": 1}) == {"added": 0, "replaced": 0, "removed": n}
    d = rpc.call("config_dump")
    assert all(d[k] == [] for k in ("ports", "nexthops", "nhlfes", "services", "circuits",
                                    "labels"))


def test_load_replaces_and_sync_removes(dp, base):
    doc = copy.deepcopy(BASE)
    doc["labels"] = [lb for lb in doc["labels"] if lb["label"] != 103]      # removed
    doc["labels"][0] = {"label": 100, "type": "swap", "nhlfe": 7}           # replaced
    doc["circuits"].append({"id": 202, "port": "c2", "vlan": 5, "service": 20})  # added
    doc["settings"] = dict(DEFAULT_SETTINGS, ttl=200)                       # replaced
    assert base.call("config_load", doc) == {"added": 1, "replaced": 2}
    assert [lb["label"] for lb in base.call("config_dump")["labels"]] == [100, 101, 102, 103]
    dp.sync(BASE)
    assert dp.sync(doc) == {"added": 1, "replaced": 2, "removed": 1}
    d = base.call("config_dump")
    assert d["labels"] == doc["labels"]
    assert d["circuits"] == doc["circuits"]
    assert d["settings"]["ttl"] == 200
    assert dp.sync(doc) == {"added": 0, "replaced": 0, "removed": 0}


def test_load_keeps_the_rest(base):
    extra = {"version": 1,
             "nhlfes": [{"id": 8, "nexthop": 1, "label": 2000}],    # refers to the node's nexthop
             "labels": [{"label": 200, "type": "swap", "nhlfe": 8}]}
    assert base.call("config_load", extra) == {"added": 2, "replaced": 0}
    d = base.call("config_dump")
    assert len(d["labels"]) == len(BASE["labels"]) + 1
    assert len(d["circuits"]) == len(BASE["circuits"])


def test_load_stops_at_the_first_refused_object(dp, base):
    """config_load replays the document through the _add handlers: the
    first object they refuse stops the load, named, with the objects
    before it applied; loading a good document then converges."""
    doc = copy.deepcopy(BASE)
    doc["ports"].append(null_port("c9", "customer", 9))
    doc["nhlfes"].append({"id": 8, "nexthop": 99, "label": 1003})    # no nexthop 99
    e = call_error(base, "config_load", doc)
    assert e.code == -32000 and "nhlfes[3]" in e.message and "nexthop 99" in e.message, e.message
    assert "partly updated" in e.message, e.message
    assert [p["name"] for p in base.call("port_list") if p["name"] == "c9"] == ["c9"]  # applied before it
    assert not [n for n in base.call("nhlfe_list") if n["id"] == 8]
    assert dp.sync(BASE)["removed"] == 1                                   # c9 goes again
    with unchanged(base):
        base.call("config_load", BASE)


def test_duplicates_and_conflicts_in_a_document(base):
    """An object listed twice is added twice, the same: a no-op. Two
    circuits on one port and VLAN: the second is refused as circuit_add
    refuses it."""
    doc = copy.deepcopy(BASE)
    doc["labels"].append(dict(doc["labels"][0]))
    with unchanged(base):
        assert base.call("config_load", doc) == {"added": 0, "replaced": 0}
    doc = copy.deepcopy(BASE)
    doc["circuits"].append({"id": 300, "port": "c1", "vlan": 100, "service": 20})
    with unchanged(base):
        e = call_error(base, "config_load", doc)
    assert e.code == -32001 and "circuits[3]" in e.message


def test_bad_document_shape_refused(base):
    """A document that does not decode changes nothing."""
    with unchanged(base):
        assert call_error(base, "config_load", {"version": 2}).code == -32602
        assert call_error(base, "config_load", {"ports": []}).code == -32602     # no version
        assert call_error(base, "config_load", version=1, labels={}).code == -32602
        assert call_error(base, "config_load", version=1, unknown=[]).code == -32602
        doc = copy.deepcopy(BASE)
        doc["labels"].append({"label": 4000, "type": "swap", "nhlfe": 5, "bogus": 1})
        e = call_error(base, "config_load", doc)
        assert e.code == -32602 and "labels[4]" in e.message


def test_circuits_swap_vlans(dp, base):
    """Two circuits exchange their VLANs: config_load, which deletes
    nothing, is refused at the first (its port and VLAN is the other's);
    a sync frees each (port, VLAN) before it is taken again."""
    doc = copy.deepcopy(BASE)
    doc["circuits"][0]["vlan"], doc["circuits"][1]["vlan"] = 200, 100
    with unchanged(base):
        e = call_error(base, "config_load", doc)
    assert e.code == -32001 and "circuits[0]" in e.message, e.message
    assert dp.sync(doc) == {"added": 0, "replaced": 2, "removed": 0}
    assert base.call("config_dump")["circuits"] == doc["circuits"]


def test_sync_refuses_a_document_that_does_not_validate(dp, base):
    """A document whose objects do not hold together changes nothing, and
    the refusal says why."""
    doc = copy.deepcopy(BASE)
    doc["labels"] = doc["labels"][:1] + [{"label": 300, "type": "swap", "nhlfe": 99}]
    with unchanged(base):
        with pytest.raises(RuntimeError) as ei:
            dp.sync(doc)
    assert "nhlfe 99" in str(ei.value), ei.value


def test_config_file_at_start(vswitchd_factory, tmp_path):
    path = tmp_path / "node.json"
    path.write_text(json.dumps(BASE))
    v = vswitchd_factory("--config", str(path))
    with v.client() as c:
        d = c.call("config_dump")
    for key in ("nexthops", "nhlfes", "services", "circuits", "labels"):
        assert d[key] == BASE[key]


def test_bad_config_file_refused_at_start(vswitchd_factory, tmp_path):
    doc = copy.deepcopy(BASE)
    doc["labels"][1]["service"] = 99
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(RuntimeError) as ei:
        vswitchd_factory("--config", str(path))
    assert "labels[1]" in str(ei.value) and "service 99" in str(ei.value)
    (tmp_path / "broken.json").write_text('{"version": 1,')
    with pytest.raises(RuntimeError) as ei:
        vswitchd_factory("--config", str(tmp_path / "broken.json"))
    assert "broken.json" in str(ei.value)


def test_large_label_list_streams_to_a_slow_reader(dp, base):
    """20k labels: label_list is ~1 MB; a client that does not read must not
    stop the server from answering another client."""
    n = 20000
    for start in range(0, n, 10000):
        labels = [{"label": 10000 + i, "type": "swap", "nhlfe": 5}
                  for i in range(start, start + 10000)]
        r = base.call("config_load", version=1, labels=labels)
        assert r["added"] == 10000
    slow = dp.raw(timeout=60)
    try:
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        for i in range(3):
            slow.sendall(b'{"jsonrpc":"2.0","id":%d,"method":"label_list"}\n' % i)
        # the server has megabytes queued for `slow`; others still get answers
        with dp.client(timeout=30) as other:
            assert other.call("settings_get")["ttl"] == 64
        # and `slow` gets all of it, whole
        buf = b""
        while buf.count(b"\n") < 3:
            chunk = slow.recv(1 << 20)
            assert chunk
            buf += chunk
    finally:
        slow.close()
    for line in buf.splitlines():
        assert len(json.loads(line)["result"]) == n + len(BASE["labels"])
    d = base.call("config_dump")
    assert len(d["labels"]) == n + len(BASE["labels"])
    # and back: the dump loads with no change
    assert base.call("config_load", d) == {"added": 0, "replaced": 0}


def test_concurrent_clients(dp, base):
    errors = []

    def worker(k):
        try:
            with dp.client() as c:
                for i in range(50):
                    c.call("label_add", label=5000 + k * 100 + i, type="swap", nhlfe=5)
                    c.call("label_list", label=5000 + k * 100 + i)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors
    assert len(base.call("label_list")) == len(BASE["labels"]) + 200
    assert strip_stats(base.call("label_list", label=5301)) == [
        {"label": 5301, "type": "swap", "nhlfe": 5}]


def test_eline_with_too_many_circuits_refused(base):
    doc = copy.deepcopy(BASE)
    doc["circuits"].append({"id": 202, "port": "c2", "vlan": 5, "service": 10})
    with unchanged(base):
        e = call_error(base, "config_load", doc)
    assert e.code == -32003 and "circuits[3]" in e.message
