"""Fixtures of the JSON-RPC tests; they live in rpc_lab.py."""
from rpc_lab import base, dp, rpc, vswitchd_factory  # noqa: F401
