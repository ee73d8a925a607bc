"""Emulated VLAN sub-interfaces for the lab's customer hosts.

The machines this project is tested on run a kernel without 802.1Q, so
`ip link add link eth0 name eth0.1000 type vlan` fails. attach(netns, ifname,
vid) gives an interface the behaviour of a VLAN sub-interface instead: a tc
eBPF program (vlan_shim.bpf.c) tags everything it sends with vid and accepts
only frames tagged vid, untagged on the way in. The host's IP address goes on
the interface itself.
"""
import os
import subprocess

_HERE = os.path.dirname(os.path.abspath(__file__))
_SRC = os.path.join(_HERE, "vlan_shim.bpf.c")
_OUT = os.path.join(_HERE, "..", "..", "build", "lab")


def _object(vid: int) -> str:
    """Compile (once, cached by mtime) the shim for one VID."""
    if not 1 <= vid <= 4094:
        raise ValueError(f"VLAN {vid} out of range 1..4094")
    os.makedirs(_OUT, exist_ok=True)
    obj = os.path.join(_OUT, f"vlan_shim_{vid}.o")
    if not os.path.exists(obj) or os.path.getmtime(obj) < os.path.getmtime(_SRC):
        tmp = f"{obj}.{os.getpid()}.tmp"
        subprocess.run(["clang", "-O2", "-g0", "-target", "bpf", f"-DVID={vid}",
                        "-I/usr/include/x86_64-linux-gnu", "-c", _SRC, "-o", tmp],
                       check=True)
        os.replace(tmp, obj)
    return obj


def attach(netns: str, ifname: str, vid: int) -> None:
    """Make ifname in netns behave as a VLAN vid sub-interface."""
    obj = _object(vid)

    def tc(*args):
        subprocess.run(["ip", "netns", "exec", netns, "tc", *args], check=True,
                       stdout=subprocess.DEVNULL)

    # The tag must travel in the frame, not in offload metadata.
    subprocess.run(["ip", "netns", "exec", netns, "ethtool", "-K", ifname,
                    "txvlan", "off", "rxvlan", "off"], check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tc("qdisc", "replace", "dev", ifname, "clsact")
    tc("filter", "replace", "dev", ifname, "egress", "pref", "1", "bpf", "da",
       "obj", obj, "sec", "tc", "program", "vlan_egress")
    tc("filter", "replace", "dev", ifname, "ingress", "pref", "1", "bpf", "da",
       "obj", obj, "sec", "tc", "program", "vlan_ingress")
