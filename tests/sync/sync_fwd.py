#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""sync_fwd: a user-space bridge for the sync link that loses and reorders.

This kernel has no netem.  Run inside a namespace with two ports (no
addresses, IPv6 off), it copies every frame from one port to the other
through AF_PACKET sockets; a frame that is a UDP or TCP datagram to or from
the sync port (3780 by default) is lost with probability --loss, and held
back (sent after the next one or after --hold-ms) with probability
--reorder.  Everything else (ARP) passes.  A seed makes a run repeatable.

Usage: sync_fwd.py PORT_A PORT_B [--loss P] [--reorder P] [--hold-ms H]
                                 [--seed S] [--port N]
Prints "ready" once bound; on SIGTERM prints
  sync_fwd: frames=N sync=N lost=N held=N
"""

import argparse
import heapq
import os
import random
import select
import signal
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernel"))
from kd_fwd import open_port  # noqa: E402  (the kernel harness's bridge ports)


def is_sync(frame, port):
    if len(frame) < 14 + 20 + 8 or struct.unpack(">H", frame[12:14])[0] != 0x0800:
        return False
    ip = frame[14:]
    ihl = (ip[0] & 0xF) * 4
    if ip[9] not in (6, 17) or len(ip) < ihl + 4:
        return False
    sport, dport = struct.unpack(">HH", ip[ihl:ihl + 4])
    return port in (sport, dport)


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--loss", type=float, default=0.0)
    ap.add_argument("--reorder", type=float, default=0.0)
    ap.add_argument("--hold-ms", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--port", type=int, default=3780)
    args = ap.parse_args(argv)
    rnd = random.Random(args.seed)
    sa, sb = open_port(args.a), open_port(args.b)
    out = {sa.fileno(): sb, sb.fileno(): sa}
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    held = []     # (release time, order, socket, frame)
    held_by = {}  # out socket -> frames held for it
    n = {"frames": 0, "sync": 0, "lost": 0, "held": 0}
    order = 0
    print("ready", flush=True)
    while not stop:
        timeout = 0.05
        if held:
            timeout = max(0.0, min(timeout, held[0][0] - time.time()))
        try:
            r, _, _ = select.select([sa, sb], [], [], timeout)
        except InterruptedError:
            continue
        for s in r:
            while True:
                try:
                    frame = s.recv(65536)
                except BlockingIOError:
                    break
                n["frames"] += 1
                dst = out[s.fileno()]
                if is_sync(frame, args.port):
                    n["sync"] += 1
                    if rnd.random() < args.loss:
                        n["lost"] += 1
                        continue
                    if rnd.random() < args.reorder:
                        n["held"] += 1
                        order += 1
                        heapq.heappush(held, (time.time() + args.hold_ms / 1000.0, order, dst,
                                              frame))
                        held_by[dst] = held_by.get(dst, 0) + 1
                        continue
                try:
                    dst.send(frame)
                except OSError:
                    pass
                # one frame overtook what was held for this port: let it go
                if held_by.get(dst):
                    for i, (_t, _o, hs, hf) in enumerate(held):
                        if hs is dst:
                            held.pop(i)
                            heapq.heapify(held)
                            held_by[dst] -= 1
                            try:
                                dst.send(hf)
                            except OSError:
                                pass
                            break
        now = time.time()
        while held and held[0][0] <= now:
            _t, _o, dst, frame = heapq.heappop(held)
            held_by[dst] -= 1
            try:
                dst.send(frame)
            except OSError:
                pass
    print("sync_fwd: frames=%d sync=%d lost=%d held=%d" % (n["frames"], n["sync"], n["lost"],
                                                         n["held"]), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
