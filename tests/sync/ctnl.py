# SPDX-License-Identifier: BSD-3-Clause
"""ctnl: the kernel's conntrack table read over ctnetlink, with what
conntrack(8) does not print.

`conntrack -L` shows tuples, state, timeout, mark and zone, but not the TCP
tracker's per-direction flags and window scales (CTA_PROTOINFO_TCP), which
decide how the kernel treats the next packets of an entry conntrackd
committed.  This asks the kernel directly: one IPCTNL_MSG_CT_GET dump in the
calling thread's network namespace (kd_netns.inside switches it).

An entry is a dict: l3 (4 or 6), proto, orig and reply (src, dst, sport,
dport or type/code/id), zone, status, timeout, mark, and for TCP state,
wscale (orig, reply) and flags (orig, reply) as the kernel keeps them
(IP_CT_TCP_FLAG_*: 0x01 WINDOW_SCALE, 0x02 SACK_PERM, 0x04 CLOSE_INIT,
0x08 BE_LIBERAL, 0x10 DATA_UNACKNOWLEDGED, 0x20 MAXACK_SET).
"""

import ipaddress
import os
import socket
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernel"))
from kd_events import parse_attrs as _attrs  # noqa: E402  (netlink attributes, one parser)

NETLINK_NETFILTER = 12
NFNL_SUBSYS_CTNETLINK = 1
IPCTNL_MSG_CT_GET = 1
NLM_F_REQUEST = 1
NLM_F_DUMP = 0x300
NLMSG_ERROR = 2
NLMSG_DONE = 3

CTA_TUPLE_ORIG, CTA_TUPLE_REPLY, CTA_STATUS, CTA_PROTOINFO = 1, 2, 3, 4
CTA_TIMEOUT, CTA_MARK, CTA_ZONE = 7, 8, 18
CTA_TUPLE_IP, CTA_TUPLE_PROTO = 1, 2
CTA_PROTOINFO_TCP = 1

TCP_FLAG_NAMES = {0x01: "WINDOW_SCALE", 0x02: "SACK_PERM", 0x04: "CLOSE_INIT",
                  0x08: "BE_LIBERAL", 0x10: "DATA_UNACKNOWLEDGED", 0x20: "MAXACK_SET"}


def _tuple(buf):
    a = _attrs(buf)
    t = {}
    ip = _attrs(a.get(CTA_TUPLE_IP, b""))
    if 1 in ip:
        t["src"] = str(ipaddress.IPv4Address(ip[1]))
        t["dst"] = str(ipaddress.IPv4Address(ip[2]))
    elif 3 in ip:
        t["src"] = str(ipaddress.IPv6Address(ip[3]))
        t["dst"] = str(ipaddress.IPv6Address(ip[4]))
    pr = _attrs(a.get(CTA_TUPLE_PROTO, b""))
    t["proto"] = pr[1][0] if 1 in pr else None
    if 2 in pr:
        t["sport"] = struct.unpack(">H", pr[2][:2])[0]
        t["dport"] = struct.unpack(">H", pr[3][:2])[0]
    if 4 in pr:
        t["id"] = struct.unpack(">H", pr[4][:2])[0]
        t["type"] = pr[5][0]
        t["code"] = pr[6][0]
    return t


def _entry(payload):
    a = _attrs(payload)
    e = {"orig": _tuple(a.get(CTA_TUPLE_ORIG, b"")), "reply": _tuple(a.get(CTA_TUPLE_REPLY, b""))}
    e["proto"] = e["orig"].get("proto")
    e["l3"] = 6 if ":" in e["orig"].get("src", "") else 4
    e["status"] = struct.unpack(">I", a[CTA_STATUS])[0] if CTA_STATUS in a else 0
    e["timeout"] = struct.unpack(">I", a[CTA_TIMEOUT])[0] if CTA_TIMEOUT in a else None
    e["mark"] = struct.unpack(">I", a[CTA_MARK])[0] if CTA_MARK in a else 0
    e["zone"] = struct.unpack(">H", a[CTA_ZONE])[0] if CTA_ZONE in a else 0
    if CTA_PROTOINFO in a:
        pi = _attrs(a[CTA_PROTOINFO])
        if CTA_PROTOINFO_TCP in pi:
            tcp = _attrs(pi[CTA_PROTOINFO_TCP])
            e["state"] = tcp[1][0] if 1 in tcp else None
            e["wscale"] = (tcp[2][0] if 2 in tcp else None, tcp[3][0] if 3 in tcp else None)
            e["flags"] = (tcp[4][0] if 4 in tcp else None, tcp[5][0] if 5 in tcp else None)
    return e


def dump(family=socket.AF_UNSPEC):
    """Every entry of the calling thread's namespace."""
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    try:
        s.bind((0, 0))
        seq = 1
        nfgen = struct.pack("=BBH", family, 0, 0)
        hdr = struct.pack("=IHHII", 16 + len(nfgen), (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_GET,
                          NLM_F_REQUEST | NLM_F_DUMP, seq, 0)
        s.send(hdr + nfgen)
        out = []
        while True:
            data = s.recv(1 << 20)
            off = 0
            while off + 16 <= len(data):
                ln, typ, _fl, _sq, _pid = struct.unpack_from("=IHHII", data, off)
                if ln < 16:
                    return out
                if typ == NLMSG_DONE:
                    return out
                if typ == NLMSG_ERROR:
                    err = struct.unpack_from("=i", data, off + 16)[0]
                    if err:
                        raise OSError(-err, os.strerror(-err))
                    return out
                out.append(_entry(data[off + 20:off + ln]))
                off += (ln + 3) & ~3
    finally:
        s.close()


def flag_names(f):
    if f is None:
        return "?"
    return "|".join(n for b, n in sorted(TCP_FLAG_NAMES.items()) if f & b) or "0"


IPCTNL_MSG_CT_NEW = 0
NLM_F_CREATE = 0x400
NLM_F_EXCL = 0x200
NLA_F_NESTED = 0x8000


def _nla(typ, payload):
    ln = 4 + len(payload)
    return struct.pack("=HH", ln, typ) + payload + b"\0" * (((ln + 3) & ~3) - ln)


def _udp_tuple(src, dst, sport, dport):
    ip = _nla(1, socket.inet_aton(src)) + _nla(2, socket.inet_aton(dst))
    proto = _nla(1, bytes([17])) + _nla(2, struct.pack(">H", sport)) + \
        _nla(3, struct.pack(">H", dport))
    return _nla(CTA_TUPLE_IP | NLA_F_NESTED, ip) + _nla(CTA_TUPLE_PROTO | NLA_F_NESTED, proto)


last_error = [0]


def create_udp(flows, timeout=600, batch=512):
    """Creates UDP entries (src, dst, sport, dport) in the calling thread's
    namespace, seen-reply and assured, in batches of netlink messages (one
    conntrack(8) process per entry would take minutes for 100k).  Returns
    the number the kernel refused."""
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    refused = 0
    last_error[0] = 0
    try:
        s.bind((0, 0))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        seq = 0
        for k in range(0, len(flows), batch):
            msgs = []
            for (src, dst, sport, dport) in flows[k:k + batch]:
                seq += 1
                body = struct.pack("=BBH", socket.AF_INET, 0, 0)
                body += _nla(CTA_TUPLE_ORIG | NLA_F_NESTED, _udp_tuple(src, dst, sport, dport))
                body += _nla(CTA_TUPLE_REPLY | NLA_F_NESTED, _udp_tuple(dst, src, dport, sport))
                body += _nla(CTA_STATUS, struct.pack(">I", 0x2 | 0x4 | 0x8))  # CONFIRMED: the kernel refuses to clear it (EBUSY)
                body += _nla(CTA_TIMEOUT, struct.pack(">I", timeout))
                hdr = struct.pack("=IHHII", 16 + len(body),
                                  (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW,
                                  NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | 0x4, seq, 0)
                msgs.append(hdr + body)
            s.send(b"".join(msgs))
            # one ACK (or error) per message
            want = len(msgs)
            while want:
                data = s.recv(1 << 20)
                off = 0
                while off + 16 <= len(data):
                    ln, typ = struct.unpack_from("=IH", data, off)
                    if typ == NLMSG_ERROR:
                        err = struct.unpack_from("=i", data, off + 16)[0]
                        if err:
                            refused += 1
                            last_error[0] = -err
                        want -= 1
                    off += (ln + 3) & ~3
    finally:
        s.close()
    return refused
