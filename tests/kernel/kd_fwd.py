#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""kd_fwd: a user-space bridge that loses, reorders and delays frames.

This kernel has no netem, so loss and reordering come from here: run inside a
namespace with two ports (no addresses, IPv6 off), it copies every frame from
one port to the other through AF_PACKET sockets.  Only TCP segments that carry
data can be lost or held back, so handshakes and closes are never lost and a
run's length stays bounded; every other frame (ARP, ND, pure ACKs, UDP, ICMP)
only gets the fixed delay.  A held-back segment leaves after later ones
(reordering).  A fixed seed makes the choices of a run repeatable.

Usage: kd_fwd.py PORT_A PORT_B [--loss P] [--reorder P] [--delay-ms D]
                                [--hold-ms H] [--seed S]
Prints "ready" once both sockets are bound; on SIGTERM writes
  kd_fwd: frames=N lost=N held=N
"""

import argparse
import heapq
import random
import select
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
PACKET_IGNORE_OUTGOING = 23
SOL_PACKET = 263


def tcp_payload_len(frame):
    """Length of the TCP payload in an Ethernet frame, or -1 if it is not TCP."""
    if len(frame) < 34:
        return -1
    et = struct.unpack(">H", frame[12:14])[0]
    if et == 0x0800:
        ip = frame[14:]
        ihl = (ip[0] & 0xF) * 4
        if ip[9] != 6 or len(ip) < ihl + 20:
            return -1
        tot = struct.unpack(">H", ip[2:4])[0]
        doff = (ip[ihl + 12] >> 4) * 4
        return tot - ihl - doff
    if et == 0x86DD:
        ip = frame[14:]
        if len(ip) < 60 or ip[6] != 6:
            return -1
        plen = struct.unpack(">H", ip[4:6])[0]
        doff = (ip[40 + 12] >> 4) * 4
        return plen - doff
    return -1


def open_port(name):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((name, 0))
    s.setblocking(False)
    return s


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--loss", type=float, default=0.0)
    ap.add_argument("--reorder", type=float, default=0.0)
    ap.add_argument("--delay-ms", type=float, default=0.0)
    ap.add_argument("--hold-ms", type=float, default=3.0)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    rnd = random.Random(args.seed)
    sa, sb = open_port(args.a), open_port(args.b)
    peer = {sa.fileno(): sb, sb.fileno(): sa}
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    frames = lost = held = 0
    queue = []
    seq = 0
    delay = args.delay_ms / 1000.0
    hold = args.hold_ms / 1000.0
    print("ready", flush=True)
    while not stop:
        now = time.monotonic()
        while queue and queue[0][0] <= now:
            _, _, out, frame = heapq.heappop(queue)
            try:
                out.send(frame)
            except OSError:
                pass
        timeout = 0.2 if not queue else max(0.0, queue[0][0] - time.monotonic())
        try:
            ready, _, _ = select.select([sa, sb], [], [], timeout)
        except InterruptedError:
            continue
        for s in ready:
            while True:
                try:
                    frame = s.recv(65536)
                except BlockingIOError:
                    break
                frames += 1
                out = peer[s.fileno()]
                extra = 0.0
                if tcp_payload_len(frame) > 0:
                    r = rnd.random()
                    if r < args.loss:
                        lost += 1
                        continue
                    if r < args.loss + args.reorder:
                        held += 1
                        extra = hold
                if delay == 0 and extra == 0 and not queue:
                    try:
                        out.send(frame)
                    except OSError:
                        pass
                    continue
                seq += 1
                heapq.heappush(queue, (time.monotonic() + delay + extra, seq, out, frame))
    sys.stderr.write("kd_fwd: frames=%d lost=%d held=%d\n" % (frames, lost, held))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
