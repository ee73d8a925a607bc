"""A one-way, sequence-numbered UDP stream between two lab hosts, to see
what a failure costs: the receiver reports which datagrams never came or
came too late (more than --late-ms after they were sent: a frame held in a
hung node's ring and delivered seconds later is as good as lost), and the
loss window (the silence a gap in the on-time sequence caused, in ms).

    python3 udpstream.py recv --port 5555 --seconds 10 --out FILE
    python3 udpstream.py send --dst 10.10.0.2 --port 5555 --rate 1000 --seconds 8
    python3 udpstream.py send --dst 10.30.0.255 --broadcast ...   (flooded: BUM)
    python3 udpstream.py send --flows 16 ...; recv --by-flow ...   (one stream per
        source port 40000.., each numbered on its own; reported per flow)

Each datagram carries (sequence number, send time); both ends are on one
machine, so the receiver reads its delay on the same clock. One-way on
purpose: a ping needs both directions, and a failure that only one
direction survives would look like total loss.
"""
import argparse
import json
import socket
import struct
import sys
import time

HDR = struct.Struct("!Qd")
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
QUIET_S = 1.0   # a receiver past its window stops after this long without a datagram


FLOW_PORT = 40000


def send(dst, port, rate, seconds, size, broadcast=False, flows=1):
    socks = []
    for k in range(flows):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        if broadcast:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
        if flows > 1:
            s.bind(("0.0.0.0", FLOW_PORT + k))
        socks.append(s)
    pad = b"\0" * max(0, size - HDR.size)
    interval = 1.0 / rate
    start = time.perf_counter()
    n = int(rate * seconds)
    refused = []
    for seq in range(n):
        due = start + seq * interval
        while True:
            now = time.perf_counter()
            if now >= due:
                break
            time.sleep(min(due - now, 0.0005))
        try:
            socks[seq % flows].sendto(HDR.pack(seq // flows, time.time()) + pad, (dst, port))
        except OSError as e:
            refused.append([seq, e.errno])  # no route for a moment: counts as lost
    print(json.dumps({"sent": n, "rate": rate, "refused": refused}))


def analyse(arrivals, sent, rate, late_ms=50.0):
    """arrivals: [(seq, t_sent, t_arrival)] in arrival order, wall clock."""
    seqs, late, late_arrivals = {}, {}, 0
    for seq, t_sent, t in arrivals:
        delay_ms = (t - t_sent) * 1000
        if delay_ms > late_ms:
            late[seq] = max(late.get(seq, 0.0), delay_ms)
            late_arrivals += 1
            continue
        seqs.setdefault(seq, t)
    for seq in seqs:
        late.pop(seq, None)   # a late duplicate of one that came on time
    got = sorted(seqs)
    missing, windows = [], []
    prev = None
    for seq in got:
        if prev is not None and seq > prev + 1:
            missing.append([prev + 1, seq - 1])
            # Silence from the last datagram before the gap to the first
            # after it, less the one interval a datagram takes anyway.
            windows.append((seqs[seq] - seqs[prev]) * 1000 - 1000.0 / rate)
        prev = seq
    if sent is not None and got and got[-1] < sent - 1:
        missing.append([got[-1] + 1, sent - 1])
    if got and got[0] > 0:
        missing.insert(0, [0, got[0] - 1])
    reordered = sum(1 for a, b in zip(arrivals, arrivals[1:]) if b[0] < a[0])
    # When the sender sent datagram 0 (wall clock), from the earliest one
    # that came: it paces the others from there, so that missing ones can
    # be placed in time.
    start = min((t_sent - seq / rate for seq, t_sent, _ in arrivals), default=None)
    return {
        "received": len(got),
        # Counted in lost: they came, but too late.
        "late": len(late),
        "late_max_ms": round(max(late.values()), 1) if late else 0.0,
        "duplicates": len(arrivals) - len(got) - late_arrivals,
        "reordered": reordered,
        "missing": missing,
        "lost": sum(b - a + 1 for a, b in missing),
        "loss_window_ms": round(max(windows), 1) if windows else 0.0,
        "first": got[0] if got else None,
        "last": got[-1] if got else None,
        "start": start,
    }


def recv(port, seconds, out, sent, rate, late_ms, by_flow=False):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind(("0.0.0.0", port))
    s.settimeout(0.2)
    # For a caller that starts the sender only once the receiver listens.
    print(f"listening on {port}", file=sys.stderr, flush=True)
    # The kernel's receive time, not this process's: a receiver that the
    # host deschedules for a while must not make datagrams look late.
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    arrivals = {}
    # The window closes at `seconds`, but only once the stream has gone
    # quiet: on a loaded host the sender may start late, or datagrams may
    # wait in the socket while this process waits for a CPU, and a tail cut
    # off here would read as lost.
    end = time.monotonic() + seconds
    last = 0.0
    while True:
        try:
            data, anc, _, (_, sport) = s.recvmsg(2048, socket.CMSG_SPACE(16))
        except socket.timeout:
            now = time.monotonic()
            if now >= end and now - last >= QUIET_S:
                break
            continue
        last = time.monotonic()
        t = time.time()
        for level, kind, value in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(value) >= 16:
                sec, nsec = struct.unpack("qq", value[:16])
                t = sec + nsec / 1e9
        if len(data) >= HDR.size:
            seq, t_sent = HDR.unpack_from(data)
            arrivals.setdefault(sport if by_flow else 0, []).append((seq, t_sent, t))
    if by_flow:
        res = {"flows": {str(k): analyse(v, None, rate, late_ms) for k, v in sorted(arrivals.items())}}
    else:
        res = analyse(arrivals.get(0, []), sent, rate, late_ms)
    with open(out, "w") as f:
        json.dump(res, f)
    print(json.dumps(res))


def main(argv=None):
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("send")
    p.add_argument("--dst", required=True)
    p.add_argument("--port", type=int, default=5555)
    p.add_argument("--rate", type=int, default=1000)
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--broadcast", action="store_true", help="dst is a broadcast address (BUM)")
    p.add_argument("--flows", type=int, default=1, help="streams, one per source port from 40000")
    p = sub.add_parser("recv")
    p.add_argument("--port", type=int, default=5555)
    p.add_argument("--seconds", type=float, default=10,
                   help=f"listen this long at least, then until the stream has been quiet {QUIET_S:g} s")
    p.add_argument("--out", required=True)
    p.add_argument("--sent", type=int, help="datagrams the sender sends (to count a lost tail)")
    p.add_argument("--rate", type=int, default=1000)
    p.add_argument("--late-ms", type=float, default=50.0, help="later than this counts as lost")
    p.add_argument("--by-flow", action="store_true", help="report each source port's stream")
    a = ap.parse_args(argv)
    if a.cmd == "send":
        send(a.dst, a.port, a.rate, a.seconds, a.size, a.broadcast, a.flows)
    else:
        recv(a.port, a.seconds, a.out, a.sent, a.rate, a.late_ms, a.by_flow)
    return 0


if __name__ == "__main__":
    sys.exit(main())
