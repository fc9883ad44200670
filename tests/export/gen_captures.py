# SPDX-License-Identifier: BSD-3-Clause
"""gen_captures.py - captures the export tests write for themselves.

Built byte by byte (libpcap savefile format, Ethernet, IPv4, UDP and TCP
with correct checksums, so that ctrack's default nf_conntrack_checksum=1
accepts them), with times chosen so that each flow's fate is known
without running the tracker: a TCP flow answered by RST is destroyed at
the RST (as the kernel destroys a refused connection); a UDP flow with a
reply and nothing after it times out 30 s after its last packet (120 s
once ASSURED: a packet more than 2 s after creation, after a reply).
"""
import struct

BASE_TS = 1_700_000_000


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def ip4(a):
    return bytes(int(x) for x in a.split("."))


def frame(src, dst, proto, l4):
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), 1, 0x4000, 64,
                               proto, 0, ip4(src), ip4(dst)))
    struct.pack_into("!H", ip, 10, csum(bytes(ip)))
    eth = b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + b"\x08\x00"
    return eth + bytes(ip) + l4


def pseudo(src, dst, proto, length):
    if ":" in src:
        return ip6(src) + ip6(dst) + struct.pack("!IxxxB", length, proto)
    return ip4(src) + ip4(dst) + struct.pack("!BBH", 0, proto, length)


def ip6(a):
    import ipaddress
    return ipaddress.IPv6Address(a).packed


def frame6(src, dst, nh, l4):
    ip = struct.pack("!IHBB16s16s", 6 << 28, len(l4), nh, 64, ip6(src), ip6(dst))
    return b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + b"\x86\xdd" + ip + l4


def l3(src, dst, proto, l4):
    """An Ethernet frame of IPv4 or IPv6 (by the address) around @l4."""
    return (frame6 if ":" in src else frame)(src, dst, proto, l4)


def udp(src, dst, sport, dport, payload=b"x" * 16):
    u = bytearray(struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload)
    c = csum(pseudo(src, dst, 17, len(u)) + bytes(u)) or 0xffff
    struct.pack_into("!H", u, 6, c)
    return l3(src, dst, 17, bytes(u))


TCP_F = {"F": 1, "S": 2, "R": 4, "P": 8, "A": 16}


def tcp(src, dst, sport, dport, flags, seq=0, ack=0, payload=b""):
    fl = sum(TCP_F[c] for c in flags)
    t = bytearray(struct.pack("!HHIIBBHHH", sport, dport, seq, ack, 5 << 4, fl, 65535, 0, 0)
                  + payload)
    struct.pack_into("!H", t, 16, csum(pseudo(src, dst, 6, len(t)) + bytes(t)))
    return l3(src, dst, 6, bytes(t))


def echo(src, dst, typ, ident, seq=1, payload=b"ping" * 8):
    """An ICMP echo (type 8 request, 0 reply) or, between IPv6
    addresses, ICMPv6 (128, 129) with its pseudo-header checksum."""
    v6 = ":" in src
    m = bytearray(struct.pack("!BBHHH", typ, 0, 0, ident, seq) + payload)
    c = csum((pseudo(src, dst, 58, len(m)) if v6 else b"") + bytes(m))
    struct.pack_into("!H", m, 2, c)
    return l3(src, dst, 58 if v6 else 1, bytes(m))


def write_pcap(path, packets):
    """packets: (time in seconds from BASE_TS, frame bytes), any order."""
    with open(path, "wb") as f:
        f.write(pcap_header())
        for t, fr in sorted(packets, key=lambda p: p[0]):
            f.write(pcap_record(t, fr))


def pcap_header():
    return struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)


def pcap_record(t, fr):
    us = round(t * 1e6)
    sec, usec = divmod(us, 1_000_000)
    return struct.pack("<IIII", BASE_TS + sec, usec, len(fr), len(fr)) + fr


def refused(i, t, net=1):
    """A TCP SYN answered by RST|ACK: NEW, then DESTROY at the RST."""
    c, s = "10.%d.%d.%d" % (net, (i >> 8) & 255, i & 255), "192.0.2.1"
    sp = 10000 + (i % 50000)
    return [(t, tcp(c, s, sp, 80, "S", seq=1000)),
            (t + 0.0005, tcp(s, c, 80, sp, "RA", seq=0, ack=1001))]


def udp_exchange(i, t, net=2):
    """One UDP query and its answer: times out 30 s after the answer."""
    c, s = "10.%d.%d.%d" % (net, (i >> 8) & 255, i & 255), "192.0.2.53"
    sp = 20000 + (i % 40000)
    return [(t, udp(c, s, sp, 53)), (t + 0.001, udp(s, c, 53, sp, b"y" * 40))]


def tcp_session(c, s, sp, dp, t, n_data=3):
    """Handshake, n_data segments each way, FIN both ways, last ACK."""
    p, cs, ss = [], 1000, 5000
    p.append((t, tcp(c, s, sp, dp, "S", seq=cs)))
    p.append((t + 0.001, tcp(s, c, dp, sp, "SA", seq=ss, ack=cs + 1)))
    cs += 1
    ss += 1
    p.append((t + 0.002, tcp(c, s, sp, dp, "A", seq=cs, ack=ss)))
    tt = t + 0.003
    for _ in range(n_data):
        p.append((tt, tcp(c, s, sp, dp, "PA", seq=cs, ack=ss, payload=b"q" * 100)))
        cs += 100
        p.append((tt + 0.001, tcp(s, c, dp, sp, "PA", seq=ss, ack=cs, payload=b"r" * 300)))
        ss += 300
        tt += 0.002
    p.append((tt, tcp(c, s, sp, dp, "FA", seq=cs, ack=ss)))
    p.append((tt + 0.001, tcp(s, c, dp, sp, "FA", seq=ss, ack=cs + 1)))
    p.append((tt + 0.002, tcp(c, s, sp, dp, "A", seq=cs + 1, ack=ss + 1)))
    return p


def long_udp(c, s, sp, dp, t0, seconds, every):
    """A UDP flow with a packet each way every @every seconds."""
    p, t = [], t0
    while t < t0 + seconds:
        p.append((t, udp(c, s, sp, dp)))
        p.append((t + 0.01, udp(s, c, dp, sp, b"z" * 100)))
        t += every
    return p


def filler(t, size=1400):
    """A frame conntrack does not track (local experimental ethertype
    0x88b5): bulk that moves a reader's buffers, creates nothing."""
    return (t, b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + b"\x88\xb5" + b"\0" * size)
