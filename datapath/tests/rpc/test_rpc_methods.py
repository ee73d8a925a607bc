"""Every method's happy path against a real e3-vswitchd."""
import base64
import json
import struct

from rpc_lab import BASE, BASE_PORTS, DEFAULT_SETTINGS, null_port, strip_stats


def test_system_info(rpc):
    info = rpc.call("system_info")
    assert info["version"]
    assert len(info["boot_id"]) >= 8
    assert info["workers"] >= 1
    assert info["uptime_s"] >= 0
    assert info["limits"]["label_min"] == 16
    assert info["limits"]["label_max"] == (1 << 20) - 1
    # the same datapath run keeps its boot id
    assert rpc.call("system_info")["boot_id"] == info["boot_id"]


def test_settings(rpc):
    assert rpc.call("settings_get") == DEFAULT_SETTINGS
    s = rpc.call("settings_set", ttl=32, control_word=False)
    assert s == dict(DEFAULT_SETTINGS, ttl=32, control_word=False)
    # params not given keep their value
    s = rpc.call("settings_set", mac_aging_s=0)
    assert s == dict(DEFAULT_SETTINGS, ttl=32, control_word=False, mac_aging_s=0)
    assert rpc.call("settings_get") == s


def test_port_add_list_del(rpc):
    r = rpc.call("port_add", null_port("fab0", "fabric", 0))
    assert r["changed"] is True
    assert isinstance(r["port_id"], int)
    assert len(r["mac"]) == 17
    # the same again: no change
    r2 = rpc.call("port_add", null_port("fab0", "fabric", 0))
    assert r2 == dict(r, changed=False)
    rpc.call("port_add", dict(null_port("c1", "customer", 1), mtu=2026))   # the largest the default mbufs take
    ports = {p["name"]: p for p in rpc.call("port_list")}
    assert set(ports) == {"fab0", "c1"}
    assert ports["fab0"]["kind"] == "fabric"
    assert ports["fab0"]["mtu"] == 2000          # fabric default
    assert ports["c1"]["mtu"] == 2026
    assert ports["c1"]["kind"] == "customer"
    assert ports["c1"]["rx_queues"] == 1
    assert ports["c1"]["link"] in ("up", "down")
    assert set(ports["c1"]["stats"]) >= {"rx_pkts", "rx_bytes", "tx_pkts", "tx_bytes", "drops"}
    assert "ttl_expired" in ports["c1"]["stats"]["drops"]
    assert [p["name"] for p in rpc.call("port_list", name="c1")] == ["c1"]
    # replace: a new MTU
    assert rpc.call("port_add", dict(null_port("c1", "customer", 1), mtu=1500))["changed"]
    assert rpc.call("port_list", name="c1")[0]["mtu"] == 1500
    assert rpc.call("port_del", name="c1") == {}
    assert [p["name"] for p in rpc.call("port_list")] == ["fab0"]


def test_nexthop(rpc):
    rpc.call("port_add", null_port("fab0", "fabric", 0))
    rpc.call("port_add", null_port("fab1", "fabric", 1))
    assert rpc.call("nexthop_add", id=1, port="fab0", mac="02:00:00:00:00:01") == {"changed": True}
    assert rpc.call("nexthop_add", id=1, port="fab0", mac="02:00:00:00:00:01") == {"changed": False}
    # upper case MACs are the same MAC
    assert rpc.call("nexthop_add", id=1, port="fab0", mac="02:00:00:00:00:01".upper()) == {
        "changed": False}
    assert rpc.call("nexthop_add", id=1, port="fab1", mac="02:00:00:00:00:01") == {"changed": True}
    assert rpc.call("nexthop_list") == [{"id": 1, "port": "fab1", "mac": "02:00:00:00:00:01"}]
    assert rpc.call("nexthop_del", id=1) == {}
    assert rpc.call("nexthop_list") == []


def test_nhlfe(rpc):
    rpc.call("port_add", null_port("fab0", "fabric", 0))
    rpc.call("nexthop_add", id=1, port="fab0", mac="02:00:00:00:00:01")
    assert rpc.call("nhlfe_add", id=5, nexthop=1, label=16) == {"changed": True}
    assert rpc.call("nhlfe_add", id=5, nexthop=1, label=16) == {"changed": False}
    assert rpc.call("nhlfe_add", id=5, nexthop=1, label=(1 << 20) - 1) == {"changed": True}
    assert rpc.call("nhlfe_list") == [{"id": 5, "nexthop": 1, "label": (1 << 20) - 1}]
    assert rpc.call("nhlfe_del", id=5) == {}
    assert rpc.call("nhlfe_list") == []


def test_services_circuits_labels(base):
    rpc = base
    services = {s["id"]: s for s in rpc.call("service_list")}
    assert services[10]["type"] == "eline"
    assert services[10]["nhlfe"] == 5
    assert services[10]["circuits"] == [100]
    assert services[20]["type"] == "elan"
    assert services[20]["remotes"] == [{"source": 1, "nhlfe": 6}]
    assert services[20]["branches"] == [7]
    assert services[20]["mac_limit"] == 100
    assert services[20]["circuits"] == [200, 201]
    assert services[20]["macs"] == 0
    assert set(services[20]["stats"]) >= {"rx_pkts", "tx_pkts", "flooded", "learned"}
    assert [s["id"] for s in rpc.call("service_list", id=20)] == [20]

    assert strip_stats(rpc.call("circuit_list")) == BASE["circuits"]
    assert strip_stats(rpc.call("label_list")) == BASE["labels"]
    assert strip_stats(rpc.call("label_list", label=103)) == [BASE["labels"][3]]
    assert all(lb["pkts"] == 0 for lb in rpc.call("label_list"))

    # idempotent adds, then replaces
    assert rpc.call("service_add", BASE["services"][1]) == {"changed": False}
    assert rpc.call("service_add", dict(BASE["services"][1], branches=[7, 5])) == {"changed": True}
    assert rpc.call("circuit_add", BASE["circuits"][0]) == {"changed": False}
    assert rpc.call("circuit_add", dict(BASE["circuits"][0], vlan=101)) == {"changed": True}
    assert rpc.call("label_add", BASE["labels"][0]) == {"changed": False}
    assert rpc.call("label_add", label=100, type="swap", nhlfe=7) == {"changed": True}
    # a label re-pointed to another type
    assert rpc.call("label_add", label=100, type="eline", service=10) == {"changed": True}
    assert strip_stats(rpc.call("label_list", label=100)) == [
        {"label": 100, "type": "eline", "service": 10}]

    # hairpin E-Line: no nhlfe
    assert rpc.call("service_add", id=11, type="eline") == {"changed": True}
    s11 = rpc.call("service_list", id=11)[0]
    assert "nhlfe" not in s11 and s11["circuits"] == []

    # deletes, in dependency order
    for lb in BASE["labels"]:
        assert rpc.call("label_del", label=lb["label"]) == {}
    for c in BASE["circuits"]:
        assert rpc.call("circuit_del", id=c["id"]) == {}
    for s in (10, 11, 20):
        assert rpc.call("service_del", id=s) == {}
    assert rpc.call("label_list") == []
    assert rpc.call("circuit_list") == []
    assert rpc.call("service_list") == []


def test_mac_list_and_flush(base):
    # nothing learned on ports that receive nothing
    assert base.call("mac_list") == []
    assert base.call("mac_list", service=20, limit=10) == []
    assert base.call("mac_flush") == {"flushed": 0}
    assert base.call("mac_flush", service=20) == {"flushed": 0}


def test_stats(base):
    s = base.call("stats_get")
    assert set(s["ports"]) == {p["name"] for p in BASE_PORTS}
    assert "no_circuit" in s["drops"]
    assert len(s["workers"]) >= 1
    assert {"lcore", "polls", "rx_pkts", "queues"} <= set(s["workers"][0])
    assert set(s["services"]) == {"10", "20"}
    assert base.call("stats_clear") == {}
    s = base.call("stats_get")
    assert all(v == 0 for v in s["drops"].values())


def test_trace_empty(base):
    assert base.call("trace_start", count=10, port="c1") == {}
    assert base.call("trace_start", count=1, port="c1", vlan=100) == {}
    assert base.call("trace_start", count=1024, label=100) == {}
    assert base.call("trace_get") == []
    assert base.call("trace_get", format="text") == []
    pcap = base64.b64decode(base.call("trace_get", format="pcap")["pcap_base64"])
    magic, major, minor, _, _, snaplen, linktype = struct.unpack("<IHHiIII", pcap[:24])
    assert (magic, major, minor, linktype) == (0xA1B2C3D4, 2, 4, 1)
    assert len(pcap) == 24


def test_config_dump_shape(base):
    d = base.call("config_dump")
    assert d["version"] == 1
    assert list(d) == ["version", "settings", "ports", "nexthops", "bfd", "nhlfes", "ecmps", "services",
                       "circuits", "labels"]
    assert d["settings"] == DEFAULT_SETTINGS
    for key in ("nexthops", "nhlfes", "services", "circuits", "labels"):
        assert d[key] == BASE[key], key
    assert d["ecmps"] == []
    ports = {p["name"]: p for p in d["ports"]}
    assert ports["fab0"]["devargs"] == BASE_PORTS[0]["devargs"]
    assert ports["fab0"]["kind"] == "fabric"


def test_notification_is_executed_not_answered(dp, rpc):
    s = dp.raw()
    try:
        s.sendall(b'{"jsonrpc":"2.0","method":"settings_set","params":{"ttl":7}}\n'
                  b'{"jsonrpc":"2.0","id":"x","method":"settings_get"}\n')
        buf = b""
        while not buf.endswith(b"\n"):
            buf += s.recv(65536)
    finally:
        s.close()
    lines = buf.splitlines()
    assert len(lines) == 1
    resp = json.loads(lines[0])
    assert resp["id"] == "x" and resp["result"]["ttl"] == 7
