"""Bad calls get the documented error code and leave the node unchanged;
bad bytes on the socket get an error and never take the server down."""
import json
import socket
import time

import pytest

from rpc_lab import BASE, call_error, null_port, unchanged

PARSE, INVALID_REQ, NO_METHOD, PARAMS = -32700, -32600, -32601, -32602
NOT_FOUND, CONFLICT, BUSY = -32000, -32001, -32002


# (method, params, code, words the message must contain)
BAD_CALLS = [
    ("no_such_method", {}, NO_METHOD, ["no_such_method"]),
    # unknown ids
    ("nexthop_del", {"id": 99}, NOT_FOUND, []),
    ("nhlfe_del", {"id": 99}, NOT_FOUND, []),
    ("service_del", {"id": 99}, NOT_FOUND, []),
    ("circuit_del", {"id": 99}, NOT_FOUND, []),
    ("label_del", {"label": 999}, NOT_FOUND, []),
    ("port_del", {"name": "nope"}, NOT_FOUND, []),
    ("port_list", {"name": "nope"}, NOT_FOUND, []),
    ("service_list", {"id": 99}, NOT_FOUND, []),
    ("label_list", {"label": 999}, NOT_FOUND, []),
    ("mac_list", {"service": 99}, NOT_FOUND, []),
    # references to objects that do not exist
    ("nexthop_add", {"id": 3, "port": "nope", "mac": "02:00:00:00:00:01"}, NOT_FOUND, []),
    ("nhlfe_add", {"id": 9, "nexthop": 77, "label": 500}, NOT_FOUND, []),
    ("label_add", {"label": 500, "type": "swap", "nhlfe": 99}, NOT_FOUND, []),
    ("circuit_add", {"id": 9, "port": "c1", "vlan": 300, "service": 99}, NOT_FOUND, []),
    # out of range
    ("label_add", {"label": 15, "type": "swap", "nhlfe": 5}, PARAMS, ["label", "16"]),
    ("label_add", {"label": 1 << 20, "type": "swap", "nhlfe": 5}, PARAMS, ["label"]),
    ("nhlfe_add", {"id": 9, "nexthop": 1, "label": 3}, PARAMS, ["label"]),
    ("circuit_add", {"id": 9, "port": "c1", "vlan": 0, "service": 10}, PARAMS, ["vlan"]),
    ("circuit_add", {"id": 9, "port": "c1", "vlan": 4095, "service": 10}, PARAMS, ["vlan"]),
    ("circuit_add", {"id": 9, "port": "c1", "vlan": "tagged", "service": 10}, PARAMS, ["vlan"]),
    ("nexthop_add", {"id": 4096, "port": "fab0", "mac": "02:00:00:00:00:01"}, PARAMS, ["id"]),
    ("settings_set", {"ttl": 0}, PARAMS, ["ttl"]),
    ("settings_set", {"ttl": 256}, PARAMS, ["ttl"]),
    ("trace_start", {"count": 0}, PARAMS, ["count"]),
    ("trace_start", {"count": 1025}, PARAMS, ["count"]),
    ("port_add", dict(null_port("x", "customer", 9), mtu=20), PARAMS, ["mtu"]),
    # Frames of 3022 bytes do not fit the default mbufs (2048 bytes).
    ("port_add", dict(null_port("x", "customer", 9), mtu=3000), PARAMS, ["--mbuf-data", "2026"]),
    # wrong types
    ("nexthop_add", {"id": "1", "port": "fab0", "mac": "02:00:00:00:00:01"}, PARAMS, ["id"]),
    ("nexthop_add", {"id": 1.5, "port": "fab0", "mac": "02:00:00:00:00:01"}, PARAMS, ["id"]),
    ("nexthop_add", {"id": 1, "port": "fab0", "mac": "02:00:00:00:01"}, PARAMS, ["mac"]),
    ("nexthop_add", {"id": 1, "port": 7, "mac": "02:00:00:00:00:01"}, PARAMS, ["port"]),
    ("settings_set", {"control_word": 1}, PARAMS, ["control_word"]),
    ("service_add", {"id": 30, "type": "vpls"}, PARAMS, ["type"]),
    ("service_add", {"id": 30, "type": "elan", "branches": 7}, PARAMS, ["branches"]),
    ("service_add", {"id": 30, "type": "elan", "remotes": [{"source": 1}]}, PARAMS,
     ["remotes[0].nhlfe"]),
    ("service_add", {"id": 30, "type": "elan", "remotes": [{"source": 1, "nhlfe": 6},
                                                         {"source": 1, "nhlfe": 7}]},
     PARAMS, ["source"]),
    ("label_add", {"label": 500, "type": "replicate", "rpf_port": "fab0",
                   "branches": [7, "8"]}, PARAMS, ["branches[1]"]),
    ("port_add", {"name": "x" * 40, "devargs": "net_null9", "kind": "customer"}, PARAMS, ["name"]),
    ("port_add", {"name": "x", "devargs": "net_null9", "kind": "core"}, PARAMS, ["kind"]),
    ("trace_get", {"format": "json"}, PARAMS, ["format"]),
    # unknown and missing params
    ("nexthop_add", {"id": 1, "port": "fab0", "mac": "02:00:00:00:00:01", "vlan": 1}, PARAMS,
     ["vlan"]),
    ("settings_get", {"verbose": True}, PARAMS, ["verbose"]),
    ("nexthop_add", {"id": 1, "port": "fab0"}, PARAMS, ["mac"]),
    ("nhlfe_del", {}, PARAMS, ["id"]),
    # params that do not fit the type
    ("label_add", {"label": 500, "type": "swap"}, PARAMS, ["nhlfe"]),
    ("label_add", {"label": 500, "type": "swap", "nhlfe": 5, "service": 10}, PARAMS, ["service"]),
    ("label_add", {"label": 500, "type": "elan", "service": 20}, PARAMS, ["source"]),
    ("label_add", {"label": 500, "type": "replicate", "branches": [7]}, PARAMS, ["rpf_port"]),
    ("service_add", {"id": 30, "type": "eline", "branches": [7]}, PARAMS, ["branches"]),
    ("service_add", {"id": 30, "type": "elan", "nhlfe": 5}, PARAMS, ["nhlfe"]),
    ("service_add", {"id": 30, "type": "eline", "mac_limit": 5}, PARAMS,
     ["'mac_limit'", 'does not apply to type "eline" (only to "elan")']),
    ("label_add", {"label": 500, "type": "circuit", "circuit": 1, "session": 2}, PARAMS,
     ["'session'", 'does not apply to type "circuit"']),
    ("label_add", {"label": 500, "type": "circuit"}, PARAMS, ["missing param 'circuit'"]),
    ("label_add", {"label": 500, "type": "oam"}, PARAMS, ["session"]),
    ("label_add", {"label": 500, "type": "oam", "session": 4096}, PARAMS, ["session"]),
    ("label_add", {"label": 500, "type": "swap", "nhlfe": 5, "session": 1}, PARAMS, ["session"]),
    ("bfd_add", {"id": 3, "nexthop": 1, "label": 3}, PARAMS, ["label"]),
    ("bfd_add", {"id": 3, "nexthop": 77, "label": 500}, NOT_FOUND, ["nexthop"]),
    # kinds of ports
    ("nexthop_add", {"id": 3, "port": "c1", "mac": "02:00:00:00:00:01"}, None, []),
    ("circuit_add", {"id": 9, "port": "fab0", "vlan": 300, "service": 10}, None, []),
    # conflict: (port, VLAN) taken by another circuit
    ("circuit_add", {"id": 9, "port": "c1", "vlan": 100, "service": 10}, CONFLICT, []),
    # busy: still referenced
    ("nexthop_del", {"id": 1}, BUSY, []),
    ("nhlfe_del", {"id": 5}, BUSY, []),
    ("service_del", {"id": 20}, BUSY, []),
    ("port_del", {"name": "fab0"}, BUSY, []),
    ("port_del", {"name": "c1"}, BUSY, []),
]


@pytest.mark.parametrize("method,params,code,words", BAD_CALLS,
                         ids=[f"{m}-{i}" for i, (m, *_) in enumerate(BAD_CALLS)])
def test_bad_call(base, method, params, code, words):
    with unchanged(base):
        e = call_error(base, method, params)
    if code is not None:
        assert e.code == code, e
    else:
        assert e.code in (PARAMS, NOT_FOUND), e
    for w in words:
        assert w in e.message, e


def test_params_not_an_object(base):
    with unchanged(base):
        r = base.request("nexthop_del", [1])
    assert r["error"]["code"] == PARAMS


def send_lines(dp, data, expect):
    """Send bytes on a fresh connection; read `expect` response lines."""
    s = dp.raw()
    try:
        s.sendall(data)
        buf = b""
        while buf.count(b"\n") < expect:
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
        return [json.loads(x) for x in buf.splitlines()]
    finally:
        s.close()


def test_garbage_then_valid_request(dp, base):
    with unchanged(base):
        out = send_lines(dp, b'hello world\n{"jsonrpc":"2.0","id":1,"method":"settings_get"}\n', 2)
    assert out[0]["error"]["code"] == PARSE and out[0]["id"] is None
    assert out[1]["id"] == 1 and out[1]["result"]["ttl"] == 64


def test_broken_json_object_then_valid_request(dp, base):
    out = send_lines(dp, b'{"jsonrpc": "2.0", "id": 1, "method": }\n'
                         b'{"jsonrpc":"2.0","id":2,"method":"settings_get"}', 2)
    assert out[0]["error"]["code"] == PARSE
    assert out[1]["id"] == 2 and "result" in out[1]


def test_invalid_requests(dp, base):
    out = send_lines(dp, b'{"id":1,"method":"settings_get"}'
                         b'{"jsonrpc":"1.0","id":2,"method":"settings_get"}'
                         b'{"jsonrpc":"2.0","id":3,"method":7}'
                         b'{"jsonrpc":"2.0","id":[4],"method":"settings_get"}'
                         b'{"jsonrpc":"2.0","id":5,"method":"settings_get","extra":1}', 5)
    assert [o["error"]["code"] for o in out] == [INVALID_REQ] * 5
    assert [o["id"] for o in out] == [1, 2, 3, None, 5]


def test_batch_array_rejected(dp, base):
    with unchanged(base):
        out = send_lines(dp, b'[{"jsonrpc":"2.0","id":1,"method":"nexthop_del","params":{"id":1}}]\n'
                             b'{"jsonrpc":"2.0","id":2,"method":"system_info"}\n', 2)
    assert out[0]["error"]["code"] == INVALID_REQ
    assert "batch" in out[0]["error"]["message"]
    assert out[1]["id"] == 2


def test_strings_with_braces_and_split_writes(dp, base):
    """Framing: braces inside strings, one request over many writes, many in one."""
    req = json.dumps({"jsonrpc": "2.0", "id": "a}{\"", "method": "service_add",
                      "params": {"id": 30, "type": "eline", "name": "x}}{\\\"{"}}).encode()
    s = dp.raw()
    try:
        for i in range(0, len(req), 7):
            s.sendall(req[i:i + 7])
            time.sleep(0.005)
        s.sendall(b'{"jsonrpc":"2.0","id":2,"method":"service_list","params":{"id":30}}'
                  b'{"jsonrpc":"2.0","id":3,"method":"service_del","params":{"id":30}}')
        buf = b""
        while buf.count(b"\n") < 3:
            buf += s.recv(65536)
    finally:
        s.close()
    out = [json.loads(x) for x in buf.splitlines()]
    assert out[0] == {"jsonrpc": "2.0", "id": "a}{\"", "result": {"changed": True}}
    assert out[1]["result"][0]["name"] == "x}}{\\\"{"
    assert out[2]["result"] == {}


def test_disconnect_mid_message(dp, base):
    with unchanged(base):
        s = dp.raw()
        s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"nexthop_del","params":{"id":')
        s.close()
        s = dp.raw()
        s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"nexthop_del","params":{"id":1},"x":"' +
                  b"y" * 100000)
        s.shutdown(socket.SHUT_RDWR)
        s.close()
    assert base.call("system_info")["workers"] >= 1


def test_two_mib_message(dp, base):
    with unchanged(base):
        s = dp.raw(timeout=30)
        try:
            body = b'{"jsonrpc":"2.0","id":1,"method":"settings_set","params":{"name":"' + \
                b"z" * (2 << 20) + b'"}}\n'
            try:
                s.sendall(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server may close before it has read it all
            buf = b""
            while True:
                try:
                    chunk = s.recv(65536)
                except ConnectionResetError:
                    break
                if not chunk:
                    break
                buf += chunk
        finally:
            s.close()
    lines = buf.splitlines()
    assert len(lines) == 1
    err = json.loads(lines[0])["error"]
    assert err["code"] == INVALID_REQ and "1048576" in err["message"]
    # the server is fine and other clients too
    assert base.call("settings_get")["ttl"] == 64


def test_unterminated_garbage_line_is_one_error(dp, base):
    out = send_lines(dp, b'}}} ]] not json at all\n'
                         b'{"jsonrpc":"2.0","id":9,"method":"settings_get"}\n', 2)
    assert out[0]["error"]["code"] == PARSE
    assert out[1]["id"] == 9


def test_config_load_that_does_not_decode_changes_nothing(base):
    bad = json.loads(json.dumps(BASE))
    bad["nexthops"].append({"id": 3, "port": "fab0", "mac": "02:00:00:00:00:03"})
    bad["labels"].append({"label": 9, "type": "swap", "nhlfe": 5})  # reserved label
    with unchanged(base):
        e = call_error(base, "config_load", bad)
    assert e.code == PARAMS and "labels[4]" in e.message
