#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""gen_flows: a synthetic capture of many distinct connections, for the
daemon's tests and benchmarks.

  gen_flows.py OUT.pcap [--udp N] [--udp6 N] [--tcp N] [--icmp N] [--span-ms MS]
                        [--one-way]

Ethernet frames with correct IPv4/IPv6 and L4 checksums: per UDP flow a
request and (unless --one-way) a reply; per TCP flow a handshake and one data
segment each way (ESTABLISHED, ASSURED); per ICMP flow an echo request and
reply.  Flow i of each kind uses its own client address (10.x.y.z /
fd00::x:y), so every flow is one entry and its tuple tells which flow it is.
All packets lie within --span-ms of capture time (default 1000 ms), so
nothing time-dependent (UDP's 2 s ASSURED rule, timeouts) happens inside it.
Prints "flows=N packets=N" on stdout.
"""

import argparse
import struct
import sys

MAC_C = b"\x02\x00\x00\x00\x00\x01"
MAC_S = b"\x02\x00\x00\x00\x00\x02"


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ip4(src, dst, proto, payload):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), 0, 0x4000, 64, proto, 0,
                      src, dst)
    hdr = hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:]
    return b"\x08\x00", hdr + payload


def ip6(src, dst, proto, payload):
    hdr = struct.pack("!IHBB16s16s", 0x60000000, len(payload), proto, 64, src, dst)
    return b"\x86\xdd", hdr + payload


def l4_sum(v, src, dst, proto, seg):
    if v == 4:
        pseudo = struct.pack("!4s4sBBH", src, dst, 0, proto, len(seg))
    else:
        pseudo = struct.pack("!16s16sIxxxB", src, dst, len(seg), proto)
    return csum(pseudo + seg)


def udp(v, src, dst, sp, dp, data):
    seg = struct.pack("!HHHH", sp, dp, 8 + len(data), 0) + data
    c = l4_sum(v, src, dst, 17, seg) or 0xFFFF
    return seg[:6] + struct.pack("!H", c) + seg[8:]


def tcp(v, src, dst, sp, dp, seq, ack, flags, data=b""):
    seg = struct.pack("!HHIIBBHHH", sp, dp, seq, ack, 5 << 4, flags, 65535, 0, 0) + data
    c = l4_sum(v, src, dst, 6, seg)
    return seg[:16] + struct.pack("!H", c) + seg[18:]


def icmp_echo(v, src, dst, typ, ident, seq):
    body = struct.pack("!BBHHH", typ, 0, 0, ident, seq) + b"ping" * 4
    if v == 4:
        c = csum(body)
    else:
        c = l4_sum(6, src, dst, 58, body)
    return body[:2] + struct.pack("!H", c) + body[4:]


class Writer:
    def __init__(self, path, span_ns, total):
        self.f = open(path, "wb")
        self.f.write(struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 1))
        self.t = 1700000000 * 10 ** 9
        self.step = max(1, span_ns // max(1, total))
        self.n = 0

    def frame(self, forward, ethertype, l3):
        eth = (MAC_S + MAC_C) if forward else (MAC_C + MAC_S)
        fr = eth + ethertype + l3
        self.f.write(struct.pack("<IIII", self.t // 10 ** 9, self.t % 10 ** 9, len(fr), len(fr)))
        self.f.write(fr)
        self.t += self.step
        self.n += 1


def addr4(i):
    return struct.pack("!I", 0x0A000000 + 1 + i)


def addr6(i):
    return b"\xfd" + b"\0" * 11 + struct.pack("!I", 1 + i)


SRV4 = bytes([192, 0, 2, 1])
SRV6 = b"\x20\x01\x0d\xb8" + b"\0" * 11 + b"\x01"


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--udp", type=int, default=1000)
    ap.add_argument("--udp6", type=int, default=0)
    ap.add_argument("--tcp", type=int, default=0)
    ap.add_argument("--icmp", type=int, default=0)
    ap.add_argument("--span-ms", type=int, default=1000)
    ap.add_argument("--one-way", action="store_true")
    a = ap.parse_args(argv)
    per = 1 if a.one_way else 2
    total = per * (a.udp + a.udp6 + a.icmp) + 5 * a.tcp
    w = Writer(a.out, a.span_ms * 10 ** 6, total)
    for i in range(a.udp):
        c = addr4(i)
        sp = 1024 + i % 60000
        w.frame(True, *ip4(c, SRV4, 17, udp(4, c, SRV4, sp, 53, b"q" * 20)))
        if not a.one_way:
            w.frame(False, *ip4(SRV4, c, 17, udp(4, SRV4, c, 53, sp, b"r" * 40)))
    for i in range(a.udp6):
        c = addr6(i)
        sp = 1024 + i % 60000
        w.frame(True, *ip6(c, SRV6, 17, udp(6, c, SRV6, sp, 53, b"q" * 20)))
        if not a.one_way:
            w.frame(False, *ip6(SRV6, c, 17, udp(6, SRV6, c, 53, sp, b"r" * 40)))
    for i in range(a.tcp):
        c = addr4(0x200000 + i)
        sp = 1024 + i % 60000
        isn_c, isn_s = 1000 + i, 900000 + i
        w.frame(True, *ip4(c, SRV4, 6, tcp(4, c, SRV4, sp, 80, isn_c, 0, 0x02)))
        w.frame(False, *ip4(SRV4, c, 6, tcp(4, SRV4, c, 80, sp, isn_s, isn_c + 1, 0x12)))
        w.frame(True, *ip4(c, SRV4, 6, tcp(4, c, SRV4, sp, 80, isn_c + 1, isn_s + 1, 0x10)))
        w.frame(True, *ip4(c, SRV4, 6, tcp(4, c, SRV4, sp, 80, isn_c + 1, isn_s + 1, 0x18,
                                           b"GET / HTTP/1.0\r\n\r\n")))
        w.frame(False, *ip4(SRV4, c, 6, tcp(4, SRV4, c, 80, sp, isn_s + 1, isn_c + 19, 0x18,
                                            b"HTTP/1.0 200 OK\r\n\r\n")))
    for i in range(a.icmp):
        c = addr4(0x400000 + i)
        w.frame(True, *ip4(c, SRV4, 1, icmp_echo(4, c, SRV4, 8, i & 0xFFFF, 1)))
        if not a.one_way:
            w.frame(False, *ip4(SRV4, c, 1, icmp_echo(4, SRV4, c, 0, i & 0xFFFF, 1)))
    w.f.close()
    print("flows=%d packets=%d" % (a.udp + a.udp6 + a.tcp + a.icmp, w.n))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
