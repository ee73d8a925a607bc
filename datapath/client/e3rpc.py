"""e3rpc - a small client for e3-vswitchd's JSON-RPC 2.0 control socket.

Standard library and e3schema (the error codes, generated) only. One Client is one connection; calls are sequential.

    from e3rpc import Client, RpcError
    with Client("/run/e3/e3.sock") as c:
        c.call("nexthop_add", id=1, port="fab0", mac="02:00:00:00:00:01")
"""
import json
import socket

from e3schema import ERRORS

__all__ = ["Client", "RpcError", "DEFAULT_SOCKET"]

DEFAULT_SOCKET = "/run/e3/e3.sock"


class RpcError(Exception):
    """An error response from the server (code, message), or a transport
    failure (code None)."""

    def __init__(self, code, message):
        super().__init__(f"{message} ({code})" if code is not None else message)
        self.code = code
        self.message = message
        self.name = ERRORS.get(code)  # e.g. "NOT_FOUND"; None for a transport failure


class Client:
    def __init__(self, socket_path=DEFAULT_SOCKET, timeout=30.0):
        self.path = socket_path
        self.timeout = timeout
        self._sock = None
        self._buf = b""
        self._next_id = 1

    def connect(self):
        if self._sock is None:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(self.timeout)
            try:
                s.connect(self.path)
            except OSError as e:
                s.close()
                raise RpcError(None, f"cannot connect to {self.path}: {e.strerror or e}")
            self._sock = s
        return self

    def close(self):
        if self._sock is not None:
            self._sock.close()
            self._sock = None
            self._buf = b""

    def __enter__(self):
        return self.connect()

    def __exit__(self, *exc):
        self.close()

    def send_raw(self, data):
        """Send bytes as they are (tests use it for malformed input)."""
        self.connect()
        self._sock.sendall(data)

    def recv_response(self):
        """Read one response line and decode it."""
        while b"\n" not in self._buf:
            try:
                chunk = self._sock.recv(1 << 20)
            except socket.timeout:
                raise RpcError(None, f"no answer from {self.path} within {self.timeout}s")
            if not chunk:
                raise RpcError(None, f"{self.path} closed the connection")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def request(self, method, params=None):
        """Send one request and return the whole response object. A kept
        connection that the switch closed meanwhile (idle timeout, restart)
        is opened again once: calls are idempotent."""
        req = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        self._next_id += 1
        if params is not None:
            req["params"] = params
        data = json.dumps(req).encode() + b"\n"
        kept = self._sock is not None and not self._buf
        try:
            self.send_raw(data)
            return self.recv_response()
        except (RpcError, OSError) as e:
            if not kept or (isinstance(e, RpcError) and "closed the connection" not in str(e)):
                raise
        self.close()
        self.send_raw(data)
        return self.recv_response()

    def call(self, method, params=None, **kw):
        """Call a method; returns its result or raises RpcError.
        Params are given as a dict, as keywords, or both."""
        p = dict(params or {})
        p.update(kw)
        resp = self.request(method, p if p else None)
        if "error" in resp:
            e = resp["error"]
            raise RpcError(e.get("code"), e.get("message", ""))
        return resp.get("result")
