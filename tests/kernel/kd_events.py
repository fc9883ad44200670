#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""kd_events: the router's conntrack events, read from ctnetlink without loss.

`conntrack -E` (conntrack-tools 1.4.7) cannot enlarge its event socket's buffer
and loses events at a few thousand per second, so the harness reads the events
itself: a NETLINK_NETFILTER socket subscribed to the NEW, UPDATE and DESTROY
groups, with a 64 MiB buffer forced by SO_RCVBUFFORCE.  If the kernel still
overflows it (ENOBUFS), the loss is counted and reported, never hidden.

Each event is written as a line of `conntrack -E -o timestamp,extended`, the
timestamp being the time the message was read (what conntrack -E prints), so
the rest of the harness reads kernel and ctrack events with one parser.

The kernel removes expired entries lazily: its collector runs up to every
60 s, or a lookup or dump meets them.  To make DESTROY events of timeouts come
within a fraction of a second of the expiry, this reader also reads
/proc/net/nf_conntrack every --poke-ms milliseconds (0: never).

Run inside the router's namespace:  kd_events.py OUTFILE [--poke-ms N]
Prints "ready" once subscribed; on SIGTERM/SIGINT drains what is queued, and
writes a last line on stderr:  kd_events: events=N lost=N
"""

import errno
import os
import select
import signal
import socket
import struct
import sys
import time

NETLINK_NETFILTER = 12
NFNL_SUBSYS_CTNETLINK = 1
IPCTNL_MSG_CT_NEW = 0
IPCTNL_MSG_CT_DELETE = 2
NLM_F_CREATE = 0x400
NLM_F_EXCL = 0x200
NLMSG_ERROR, NLMSG_DONE = 2, 3
NFNLGRP_CONNTRACK_NEW, NFNLGRP_CONNTRACK_UPDATE, NFNLGRP_CONNTRACK_DESTROY = 1, 2, 3
SO_RCVBUFFORCE = 33

CTA_TUPLE_ORIG, CTA_TUPLE_REPLY, CTA_STATUS, CTA_PROTOINFO = 1, 2, 3, 4
CTA_TIMEOUT, CTA_MARK, CTA_COUNTERS_ORIG, CTA_COUNTERS_REPLY = 7, 8, 9, 10
CTA_USE, CTA_ID, CTA_ZONE = 11, 12, 18
CTA_TUPLE_IP, CTA_TUPLE_PROTO, CTA_TUPLE_ZONE = 1, 2, 3
CTA_PROTOINFO_TCP, CTA_PROTOINFO_DCCP, CTA_PROTOINFO_SCTP = 1, 2, 3

IPS_SEEN_REPLY = 1 << 1
IPS_ASSURED = 1 << 2
IPS_OFFLOAD = 1 << 14
IPS_HW_OFFLOAD = 1 << 15

TCP_STATES = ["NONE", "SYN_SENT", "SYN_RECV", "ESTABLISHED", "FIN_WAIT", "CLOSE_WAIT",
              "LAST_ACK", "TIME_WAIT", "CLOSE", "SYN_SENT2"]
SCTP_STATES = ["NONE", "CLOSED", "COOKIE_WAIT", "COOKIE_ECHOED", "ESTABLISHED",
               "SHUTDOWN_SENT", "SHUTDOWN_RECD", "SHUTDOWN_ACK_SENT", "HEARTBEAT_SENT",
               "HEARTBEAT_ACKED"]
DCCP_STATES = ["NONE", "REQUEST", "RESPOND", "PARTOPEN", "OPEN", "CLOSEREQ", "CLOSING",
               "TIMEWAIT", "IGNORE", "INVALID"]
PROTO_NAMES = {6: "tcp", 17: "udp", 136: "udplite", 1: "icmp", 58: "icmpv6", 132: "sctp",
               47: "gre", 33: "dccp"}  # what conntrack-tools names; others print "unknown"


def parse_attrs(buf):
    """Returns {type: payload} of the netlink attributes in buf (nested flag masked off)."""
    attrs = {}
    off = 0
    while off + 4 <= len(buf):
        alen, atype = struct.unpack_from("=HH", buf, off)
        if alen < 4:
            break
        attrs[atype & 0x3FFF] = buf[off + 4:off + alen]
        off += (alen + 3) & ~3
    return attrs


def _u8(b):
    return b[0]


def _be16(b):
    return struct.unpack(">H", b[:2])[0]


def _be32(b):
    return struct.unpack(">I", b[:4])[0]


def _be64(b):
    return struct.unpack(">Q", b[:8])[0]


def parse_tuple(buf, family):
    """Returns (protonum, [(key, value)...]) in conntrack's print order."""
    a = parse_attrs(buf)
    ip = parse_attrs(a.get(CTA_TUPLE_IP, b""))
    proto = parse_attrs(a.get(CTA_TUPLE_PROTO, b""))
    out = []
    if 1 in ip:
        out += [("src", socket.inet_ntop(socket.AF_INET, ip[1])),
                ("dst", socket.inet_ntop(socket.AF_INET, ip[2]))]
    elif 3 in ip:
        out += [("src", socket.inet_ntop(socket.AF_INET6, ip[3])),
                ("dst", socket.inet_ntop(socket.AF_INET6, ip[4]))]
    pnum = _u8(proto[1]) if 1 in proto else 0
    if 2 in proto and pnum != 47:
        out += [("sport", str(_be16(proto[2]))), ("dport", str(_be16(proto[3])))]
    elif pnum == 47 and 2 in proto:
        out += [("srckey", "0x%x" % _be16(proto[2])), ("dstkey", "0x%x" % _be16(proto[3]))]
    elif 5 in proto:  # ICMP: type, code, id
        out += [("type", str(_u8(proto[5]))), ("code", str(_u8(proto[6]))),
                ("id", str(_be16(proto[4])))]
    elif 8 in proto:  # ICMPv6
        out += [("type", str(_u8(proto[8]))), ("code", str(_u8(proto[9]))),
                ("id", str(_be16(proto[7])))]
    if CTA_TUPLE_ZONE in a:
        out.append(("zone-%s" % "orig", str(_be16(a[CTA_TUPLE_ZONE]))))
    return pnum, out


def event_record(nlmsg_type, nlmsg_flags, body, ts):
    """Turns one ctnetlink message into a kd_ctline-style record, or None."""
    family = body[0]
    a = parse_attrs(body[4:])
    msg = nlmsg_type & 0xFF
    if msg == IPCTNL_MSG_CT_DELETE:
        event = "DESTROY"
    elif msg == IPCTNL_MSG_CT_NEW:
        event = "NEW" if nlmsg_flags & (NLM_F_CREATE | NLM_F_EXCL) else "UPDATE"
    else:
        return None
    if CTA_TUPLE_ORIG not in a:
        return None
    pnum, orig = parse_tuple(a[CTA_TUPLE_ORIG], family)
    _, reply = parse_tuple(a.get(CTA_TUPLE_REPLY, b""), family)
    reply = [kv for kv in reply if not kv[0].startswith("zone-")]
    rec = {
        "l3": {2: "ipv4", 10: "ipv6"}.get(family, "unknown"), "l3num": family,
        "proto": PROTO_NAMES.get(pnum, "unknown"), "protonum": pnum,
        "timeout": _be32(a[CTA_TIMEOUT]) if CTA_TIMEOUT in a else None,
        "state": None, "orig": tuple(orig), "reply": tuple(reply), "counters": [None, None],
        "flags": (), "unreplied": False, "extra": {}, "event": event, "ts": ts,
    }
    if CTA_PROTOINFO in a:
        pi = parse_attrs(a[CTA_PROTOINFO])
        for kind, names in ((CTA_PROTOINFO_TCP, TCP_STATES), (CTA_PROTOINFO_SCTP, SCTP_STATES),
                            (CTA_PROTOINFO_DCCP, DCCP_STATES)):
            if kind in pi:
                st = parse_attrs(pi[kind])
                if 1 in st:
                    n = _u8(st[1])
                    rec["state"] = names[n] if n < len(names) else "UNKNOWN"
    for d, attr in ((0, CTA_COUNTERS_ORIG), (1, CTA_COUNTERS_REPLY)):
        if attr in a:
            c = parse_attrs(a[attr])
            pk = _be64(c[1]) if 1 in c else _be32(c.get(3, b"\0\0\0\0"))
            by = _be64(c[2]) if 2 in c else _be32(c.get(4, b"\0\0\0\0"))
            rec["counters"][d] = (pk, by)
    flags = []
    if CTA_STATUS in a:
        status = _be32(a[CTA_STATUS])
        rec["unreplied"] = not status & IPS_SEEN_REPLY
        if status & IPS_ASSURED:
            flags.append("ASSURED")
        if status & IPS_OFFLOAD:
            flags.append("OFFLOAD")
        if status & IPS_HW_OFFLOAD:
            flags.append("HW_OFFLOAD")
        rec["extra"]["status"] = "0x%x" % status  # dropped before printing, see below
    rec["flags"] = tuple(sorted(flags))
    if CTA_MARK in a:
        rec["extra"]["mark"] = str(_be32(a[CTA_MARK]))
    if CTA_ZONE in a:
        rec["extra"]["zone"] = str(_be16(a[CTA_ZONE]))
    if CTA_USE in a:
        rec["extra"]["use"] = str(_be32(a[CTA_USE]))
    return rec


class Reader:
    def __init__(self, out, poke_ms):
        self.out = out
        self.poke_s = poke_ms / 1000.0
        self.events = 0
        self.lost = 0
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
        except OSError:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
        groups = 0
        for g in (NFNLGRP_CONNTRACK_NEW, NFNLGRP_CONNTRACK_UPDATE, NFNLGRP_CONNTRACK_DESTROY):
            groups |= 1 << (g - 1)
        self.sock.bind((0, groups))
        self.sock.setblocking(False)

    def handle(self, data, ts):
        import kd_ctline
        off = 0
        while off + 16 <= len(data):
            mlen, mtype, mflags, _seq, _pid = struct.unpack_from("=IHHII", data, off)
            if mlen < 16:
                break
            if mtype >> 8 == NFNL_SUBSYS_CTNETLINK:
                rec = event_record(mtype, mflags, data[off + 16:off + mlen], ts)
                if rec is not None:
                    rec["extra"].pop("status", None)
                    self.out.write(kd_ctline.fmt_record(rec) + "\n")
                    self.events += 1
            off += (mlen + 3) & ~3

    def drain(self):
        got = 0
        while True:
            try:
                data = self.sock.recv(1 << 20)
            except BlockingIOError:
                return got
            except OSError as e:
                if e.errno == errno.ENOBUFS:
                    self.lost += 1
                    continue
                raise
            self.handle(data, time.time())
            got += 1

    def poke(self):
        # A read of the table reaps expired entries (and sends their DESTROY).
        try:
            with open("/proc/net/nf_conntrack", "rb") as f:
                while f.read(1 << 16):
                    pass
        except OSError:
            pass


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outfile")
    ap.add_argument("--poke-ms", type=int, default=250)
    args = ap.parse_args(argv)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    with open(args.outfile, "w", buffering=1 << 16) as out:
        r = Reader(out, args.poke_ms)
        print("ready", flush=True)
        next_poke = time.time() + r.poke_s if r.poke_s > 0 else None
        while not stop:
            timeout = 0.5 if next_poke is None else max(0.0, next_poke - time.time())
            try:
                select.select([r.sock], [], [], timeout)
            except InterruptedError:
                pass
            r.drain()
            if next_poke is not None and time.time() >= next_poke:
                r.poke()
                next_poke = time.time() + r.poke_s
        time.sleep(0.05)
        r.drain()
    sys.stderr.write("kd_events: events=%d lost=%d\n" % (r.events, r.lost))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
