"""BFD in the MPLS G-ACh, built byte by byte, and a BFD neighbour for the
packet tests: the test side of a fabric port, answering the switch's
sessions (RFC 5880's three-way handshake) from a thread of its own.

The neighbour advertises slow timers (300 ms, multiplier 3) so that a busy
test machine never makes it miss a beat: the switch's detection time is
then 900 ms, and the switch sends to it at 300 ms."""
import contextlib
import errno
import hashlib
import select
import socket
import struct
import threading
import time

from pkt_frames import mac_bytes
from pkt_net import ETH_P_ALL, Wire, in_netns
from pkt_switch import MAC, PEER_MAC, PEERS

GAL = 13
# linux/asm-generic/socket.h: the option, and the type of the control
# message that carries the stamp (a struct timespec, CLOCK_REALTIME).
SO_TIMESTAMPNS = 35
ACH_BFD = b"\x10\x00\x00\x07"
DOWN, INIT, UP = 1, 2, 3
ADMIN_DOWN = 0


def bfd_packet(state, my_disc, your_disc, *, diag=0, flags=0, mult=3, tx_us=300000,
               rx_us=300000, version=1, length=24):
    return struct.pack("!BBBBIIIII", version << 5 | diag, state << 6 | flags, mult, length,
                       my_disc, your_disc, tx_us, rx_us, 0)


def sha1_auth(packet24, key, key_id, seq):
    """packet24 (a 24-byte BFD packet, A bit and length 52 set) with its
    Keyed SHA1 section (RFC 5880 4.4 and 6.7.4): the digest is SHA1 of the
    whole packet with the key, zero-padded to 20 bytes, in its place."""
    head = packet24 + struct.pack("!BBBBI", 4, 28, key_id, 0, seq)
    digest = hashlib.sha1(head + key.ljust(20, b"\0")).digest()
    return head + digest


def sha1_ok(packet52, key):
    """Does a received Keyed SHA1 packet's digest match key?"""
    return hashlib.sha1(packet52[:32] + key.ljust(20, b"\0")).digest() == packet52[32:52]


def gach_frame(dst, src, payload, *, ach=ACH_BFD, label=GAL, s=1, path=None, ttl=64):
    """A G-ACh frame: the link's (GAL alone) or, with path, a path check's
    (path's label, S=0, above the GAL)."""
    lse = struct.pack("!I", label << 12 | 7 << 9 | s << 8 | 1)
    if path is not None:
        lse = struct.pack("!I", path << 12 | 7 << 9 | ttl) + lse
    return mac_bytes(dst) + mac_bytes(src) + b"\x88\x47" + lse + ach + payload


def parse_bfd(frame):
    """(state, my_disc, your_disc, flags, tx_us, rx_us, mult, and for a path
    check path/ttl: its top label) of a G-ACh BFD frame, or None for anything
    else."""
    if len(frame) < 46 or frame[12:14] != b"\x88\x47":
        return None
    out, off = {}, 14
    top = struct.unpack("!I", frame[14:18])[0]
    if not top & 0x100:                      # a path check's label on the GAL
        out = {"path": top >> 12, "ttl": top & 0xff}
        off = 18
    if len(frame) < off + 32 or struct.unpack("!I", frame[off:off + 4])[0] >> 12 != GAL \
            or not frame[off + 2] & 1 or frame[off + 4:off + 8] != ACH_BFD:
        return None
    b0, b1, mult, length, my, your, tx, rx, _echo = struct.unpack("!BBBBIIIII", frame[off + 8:off + 32])
    out.update({"state": b1 >> 6, "flags": b1 & 0x3f, "my_disc": my, "your_disc": your,
                "tx_us": tx, "rx_us": rx, "mult": mult, "diag": b0 & 0x1f, "raw": frame[off + 8:off + 8 + length]})
    return out


class BfdPeer:
    """The neighbour on the test side of one fabric port."""

    def __init__(self, ns, ifname, my_mac, switch_mac, my_disc=0x5eed0001, path=None, key=None, key_id=1,
                 rx_us=300000, tx_us=300000):
        """path: (label we send on, label the switch sends on) for the far
        end of a path check; None for a link session's neighbour. key:
        Keyed SHA1 authentication with that key (bytes) and key_id. rx_us,
        tx_us: the Required Min RX and Desired Min TX we advertise."""
        self.rx_us, self.tx_us = rx_us, tx_us
        self.my_mac, self.switch_mac, self.my_disc = my_mac, switch_mac, my_disc
        self.path = path
        self.key, self.key_id, self.seq = key, key_id, 1000
        self.state, self.your_disc = DOWN, 0
        self.received = []          # every BFD packet the switch sent us, parsed
        self.final = False          # a Final owed for the switch's Poll
        self.timeouts = 0           # times the switch was silent past its detection time
        self.detect_s, self.last_rx = None, None
        self.sending = True
        self._stop = threading.Event()
        with in_netns(ns):
            self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            self.sock.bind((ifname, 0))
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.sock.setblocking(False)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def close(self):
        self._stop.set()
        self.thread.join(5)
        self.sock.close()

    def _send(self):
        flags, self.final = 0x10 if self.final else 0, False
        if self.key is None:
            pkt = bfd_packet(self.state, self.my_disc, self.your_disc, flags=flags, rx_us=self.rx_us,
                             tx_us=self.tx_us)
        else:
            self.seq += 1
            pkt = sha1_auth(bfd_packet(self.state, self.my_disc, self.your_disc, flags=0x04, length=52),
                            self.key, self.key_id, self.seq)
        self.sock.send(gach_frame(self.switch_mac, self.my_mac, pkt,
                                  path=self.path[0] if self.path else None))

    def _silent_past_detection(self, now):
        """A timeout, counted once, if the switch, Up, sent nothing from
        last_rx until now (the realtime clock) for longer than its
        detection time."""
        if self.state == UP and self.last_rx is not None and now - self.last_rx > self.detect_s:
            self.timeouts += 1
            self.state, self.last_rx = DOWN, None

    def _on(self, p, at):
        self._silent_past_detection(at)
        self.received.append(p)
        self.your_disc = p["my_disc"]
        if p["flags"] & 0x20:
            self.final = True
        # 6.8.4: the switch's multiplier times the longer of our Required
        # Min RX and its Desired Min TX.
        self.detect_s = p["mult"] * max(self.rx_us, p["tx_us"]) / 1e6
        self.last_rx = at
        rs = p["state"]
        if self.state == DOWN and rs == DOWN:
            self.state = INIT
        elif self.state == DOWN and rs == INIT:
            self.state = UP
        elif self.state == INIT and rs in (INIT, UP):
            self.state = UP
        elif self.state == UP and rs in (DOWN, ADMIN_DOWN):
            self.state = DOWN

    def _run(self):
        next_tx = 0.0
        while not self._stop.is_set():
            now = time.monotonic()
            try:
                if self.sending and now >= next_tx:
                    next_tx = now + 0.1
                    self._send()
                ready, _, _ = select.select([self.sock], [], [], 0.02)
                if ready:
                    self._receive()
                # Judged by when the packets arrived (the kernel's stamps),
                # after reading what came: a thread the host held back is
                # no silence of the switch's.
                self._silent_past_detection(time.time())
            except OSError as e:
                if e.errno != errno.ENETDOWN:   # a test took the link down
                    raise
                time.sleep(0.02)

    def _receive(self):
        while True:
            try:
                data, anc, _, addr = self.sock.recvmsg(2048, socket.CMSG_SPACE(16))
            except BlockingIOError:
                return
            at = next((sec + ns / 1e9 for level, typ, raw in anc
                       if level == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS
                       for sec, ns in [struct.unpack("qq", raw[:16])]), time.time())
            if addr[2] == 4:    # PACKET_OUTGOING: our own
                continue
            p = parse_bfd(data)
            want = self.path[1] if self.path else None
            if p is not None and data[6:12] == mac_bytes(self.switch_mac) and p.get("path") == want:
                self._on(p, at)


@contextlib.contextmanager
def neighbour_on_f1(sw, setup, **peer):
    """Starts sw with BFD session 1 to a neighbour on f1 (nexthop 1), runs
    setup(sw), and yields the wire and that neighbour (a BfdPeer of the
    options peer); closes both and stops sw after, whatever happened."""
    sw.start()
    wire = Wire(sw.ns, PEERS)
    nb = None
    try:
        sw.nexthop(1, "f1")
        sw.rpc("bfd_add", id=1, nexthop=1, multiplier=3)
        setup(sw)
        nb = BfdPeer(sw.ns, "f1p", PEER_MAC["f1"], MAC["f1"], **peer)
        yield wire, nb
    finally:
        if nb is not None:
            nb.close()
        wire.close()
        sw.stop()
