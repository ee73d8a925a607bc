"""VLAN sub-interfaces of a lab host, in user space.

Kernels built without CONFIG_VLAN_8021Q (this project's CI VMs among them)
cannot create eth0.1000. The shim gives a host the same thing: one TAP
device per VLAN ("eth0.1000", carrying the host's IP and MAC) and a raw
AF_PACKET socket on the trunk (eth0). Frames the host's stack sends on a TAP
leave eth0 with that VLAN's 802.1Q tag; tagged frames arriving on eth0 lose
their tag and go up the TAP of their VLAN (others are ignored, as the kernel
would). The TAP devices are created and addressed by the lab (lab.py); the
shim only attaches to them, and their carrier is up while it runs.

Run inside the host's namespace:
  python3 vlanshim.py TRUNK VLAN=TAP [VLAN=TAP ...]
It prints "ready" once attached, and runs until SIGTERM.
"""

import fcntl
import os
import select
import signal
import socket
import struct
import sys

TUNSETIFF = 0x400454CA
IFF_TAP, IFF_NO_PI = 0x0002, 0x1000
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SOL_PACKET, PACKET_AUXDATA = 263, 8
TP_STATUS_VLAN_VALID = 0x10
AUXDATA = struct.Struct("IIIHHHH")  # struct tpacket_auxdata
TPID = b"\x81\x00"
SO_RCVBUFFORCE = 33  # not in Python's socket module; root may exceed rmem_max


def open_tap(name: str) -> int:
    fd = os.open("/dev/net/tun", os.O_RDWR | os.O_NONBLOCK)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TAP | IFF_NO_PI))
    return fd


def vlan_of(ancdata):
    for level, kind, data in ancdata:
        if level == SOL_PACKET and kind == PACKET_AUXDATA and len(data) >= AUXDATA.size:
            status, _, _, _, _, tci, _ = AUXDATA.unpack_from(data)
            if status & TP_STATUS_VLAN_VALID:
                return tci & 0x0FFF
    return None


def main(argv) -> int:
    trunk_name, maps = argv[0], argv[1:]
    trunk = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    trunk.bind((trunk_name, 0))
    # The kernel takes the 802.1Q tag out of every received frame (even with
    # rx-vlan offload off) and hands it over as auxiliary data.
    trunk.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
    # Room for a TCP window's burst while this process waits for a CPU.
    trunk.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 4 << 20)
    trunk.setblocking(False)
    taps = {}  # vlan -> fd
    tag_of = {}  # fd -> 802.1Q header for that VLAN (PCP 0)
    for m in maps:
        vlan, name = m.split("=", 1)
        fd = open_tap(name)
        taps[int(vlan)] = fd
        tag_of[fd] = TPID + struct.pack("!H", int(vlan))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print("ready", flush=True)
    tfd = trunk.fileno()
    while True:
        readable, _, _ = select.select([tfd, *tag_of], [], [])
        for fd in readable:
            # Drain what is queued: one wake-up moves a burst.
            while True:
                try:
                    if fd == tfd:
                        frame, anc, _, addr = trunk.recvmsg(65536, 64)
                        if addr[2] == PACKET_OUTGOING:
                            continue
                        vlan = vlan_of(anc)
                        if vlan is None and frame[12:14] == TPID:  # tag still in the frame
                            vlan, frame = int.from_bytes(frame[14:16], "big") & 0x0FFF, frame[:12] + frame[16:]
                        out = taps.get(vlan)
                        if out is not None:
                            os.write(out, frame)
                    else:
                        frame = os.read(fd, 65536)
                        trunk.send(frame[:12] + tag_of[fd] + frame[12:])
                except (BlockingIOError, InterruptedError):
                    break
                except OSError:
                    # A frame the trunk cannot take (link down, no buffer):
                    # dropped, like a NIC would.
                    break


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
