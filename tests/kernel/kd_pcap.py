# SPDX-License-Identifier: BSD-3-Clause
"""kd_pcap: capture files and IP packets, as much as the harness needs of them.

Reads classic pcap (either byte order, micro- or nanosecond stamps) and pcapng
(section, interface and enhanced/simple packet blocks), so that any capture of
../shared/pcaps can be replayed; writes classic pcap.  Decodes the link layers
found there (Ethernet with any number of VLAN tags and PPPoE sessions, Linux
cooked v1/v2, raw IP, BSD loopback, NFLOG) down to the IP packet, and the IP
packet down to what connection tracking keys on: addresses, protocol, ports or
ICMP id, fragment position, TTL, and for ICMP errors the quoted packet.

It also recomputes the checksums of IPv4 headers and of TCP, UDP, ICMP and
ICMPv6 messages, because captures taken with transmit checksum offload carry
partial checksums that the kernel's conntrack (nf_conntrack_checksum=1) marks
INVALID.  Only Python's standard library is used (scapy is not installed).
"""

import ipaddress
import struct

DLT_NULL, DLT_EN10MB, DLT_RAW, DLT_LOOP = 0, 1, 101, 108
DLT_LINUX_SLL, DLT_IPV4, DLT_IPV6, DLT_NFLOG, DLT_LINUX_SLL2 = 113, 228, 229, 239, 276
DLT_RAW_ALT = 12  # some systems write raw IP as 12 (OpenBSD) / 14

ETH_IPV4, ETH_IPV6, ETH_VLAN, ETH_QINQ, ETH_9100 = 0x0800, 0x86DD, 0x8100, 0x88A8, 0x9100
ETH_PPPOE_SESS = 0x8864


class Packet:
    """One record of a capture."""
    __slots__ = ("ts", "data", "wire_len", "linktype")

    def __init__(self, ts, data, wire_len, linktype):
        self.ts = ts            # seconds, float
        self.data = data        # bytes as captured
        self.wire_len = wire_len
        self.linktype = linktype


def read_capture(path):
    """Returns the list of Packets in a pcap or pcapng file (a cut-short tail is ignored)."""
    with open(path, "rb") as f:
        buf = f.read()
    if buf[:2] == b"\x1f\x8b":
        import gzip
        buf = gzip.decompress(buf)
    if len(buf) < 4:
        return []
    magic = buf[:4]
    if magic == b"\x0a\x0d\x0d\x0a":
        return _read_pcapng(buf)
    return _read_pcap(buf)


def _read_pcap(buf):
    m = struct.unpack("<I", buf[:4])[0]
    if m in (0xA1B2C3D4, 0xA1B23C4D):
        e = "<"
    else:
        e = ">"
        m = struct.unpack(">I", buf[:4])[0]
    if m not in (0xA1B2C3D4, 0xA1B23C4D):
        raise ValueError("not a pcap file")
    nanos = m == 0xA1B23C4D
    linktype = struct.unpack(e + "I", buf[20:24])[0] & 0x0FFFFFFF
    out = []
    off = 24
    div = 1e9 if nanos else 1e6
    while off + 16 <= len(buf):
        sec, frac, caplen, wlen = struct.unpack(e + "IIII", buf[off:off + 16])
        off += 16
        if caplen > 0x4000000 or off + caplen > len(buf):
            break
        out.append(Packet(sec + frac / div, buf[off:off + caplen], wlen, linktype))
        off += caplen
    return out


def _read_pcapng(buf):
    out = []
    off = 0
    e = "<"
    ifaces = []
    while off + 12 <= len(buf):
        btype = struct.unpack(e + "I", buf[off:off + 4])[0]
        if btype == 0x0A0D0D0A:
            bom = buf[off + 8:off + 12]
            e = "<" if bom == b"\x4d\x3c\x2b\x1a" else ">"
            ifaces = []
        blen = struct.unpack(e + "I", buf[off + 4:off + 8])[0]
        if blen < 12 or off + blen > len(buf):
            break
        body = buf[off + 8:off + blen - 4]
        if btype == 1:  # interface description
            lt = struct.unpack(e + "H", body[:2])[0]
            tsres = 1e-6
            o = 8
            while o + 4 <= len(body):
                code, olen = struct.unpack(e + "HH", body[o:o + 4])
                if code == 0:
                    break
                if code == 9 and olen >= 1:
                    v = body[o + 4]
                    tsres = 2.0 ** -(v & 0x7F) if v & 0x80 else 10.0 ** -v
                o += 4 + ((olen + 3) & ~3)
            ifaces.append((lt, tsres))
        elif btype == 6:  # enhanced packet
            ifid, tsh, tsl, caplen, wlen = struct.unpack(e + "IIIII", body[:20])
            lt, res = ifaces[ifid] if ifid < len(ifaces) else (DLT_EN10MB, 1e-6)
            ts = ((tsh << 32) | tsl) * res
            out.append(Packet(ts, body[20:20 + caplen], wlen, lt))
        elif btype == 3:  # simple packet
            wlen = struct.unpack(e + "I", body[:4])[0]
            lt = ifaces[0][0] if ifaces else DLT_EN10MB
            data = body[4:4 + wlen]
            out.append(Packet(out[-1].ts if out else 0.0, data, wlen, lt))
        off += blen
    return out


def write_pcap(path, packets, nanos=True, linktype=DLT_EN10MB):
    """Writes (ts, frame_bytes) pairs as classic pcap."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B23C4D if nanos else 0xA1B2C3D4, 2, 4, 0, 0,
                            262144, linktype))
        for ts, data in packets:
            sec = int(ts)
            frac = int(round((ts - sec) * (1e9 if nanos else 1e6)))
            lim = 1000000000 if nanos else 1000000
            if frac >= lim:
                sec, frac = sec + 1, frac - lim
            f.write(struct.pack("<IIII", sec, frac, len(data), len(data)))
            f.write(data)


# -- link layer ---------------------------------------------------------------

def l3_of(pkt):
    """Returns (ethertype, ip_bytes) for a capture record, or (None, None)."""
    d, lt = pkt.data, pkt.linktype
    try:
        if lt == DLT_EN10MB:
            return _eth_payload(d, 12)
        if lt in (DLT_RAW, DLT_RAW_ALT, 14, DLT_IPV4, DLT_IPV6):
            if not d:
                return None, None
            v = d[0] >> 4
            return (ETH_IPV4 if v == 4 else ETH_IPV6 if v == 6 else None), d
        if lt in (DLT_NULL, DLT_LOOP):
            fam = struct.unpack("<I" if lt == DLT_NULL else ">I", d[:4])[0]
            if fam > 0xFFFF:
                fam = struct.unpack(">I" if lt == DLT_NULL else "<I", d[:4])[0]
            if fam == 2:
                return ETH_IPV4, d[4:]
            if fam in (10, 24, 28, 30):
                return ETH_IPV6, d[4:]
            return None, None
        if lt == DLT_LINUX_SLL:
            return _eth_payload(d, 14)
        if lt == DLT_LINUX_SLL2:
            et = struct.unpack(">H", d[:2])[0]
            return _after_type(et, d, 20)
        if lt == DLT_NFLOG:
            fam = d[0]
            o = 4
            while o + 4 <= len(d):
                tlen, ttype = struct.unpack("<HH", d[o:o + 4])
                if tlen < 4:
                    break
                if ttype == 9:
                    return (ETH_IPV4 if fam == 2 else ETH_IPV6), d[o + 4:o + tlen]
                o += (tlen + 3) & ~3
    except (struct.error, IndexError):
        pass
    return None, None


def _eth_payload(d, type_off):
    et = struct.unpack(">H", d[type_off:type_off + 2])[0]
    return _after_type(et, d, type_off + 2)


def _after_type(et, d, off):
    while et in (ETH_VLAN, ETH_QINQ, ETH_9100):
        et = struct.unpack(">H", d[off + 2:off + 4])[0]
        off += 4
    if et == ETH_PPPOE_SESS:
        ppp = struct.unpack(">H", d[off + 6:off + 8])[0]
        off += 8
        et = {0x21: ETH_IPV4, 0x57: ETH_IPV6}.get(ppp)
    if et in (ETH_IPV4, ETH_IPV6):
        return et, d[off:]
    return None, None


# -- IP -----------------------------------------------------------------------

IPV6_EXT = {0, 43, 60, 51}  # hop-by-hop, routing, destination options, AH (44 = fragment)


class IpInfo:
    """What tracking keys on, decoded from an IP packet."""
    __slots__ = ("v", "src", "dst", "proto", "ttl", "l4off", "frag_first", "frag_later",
                 "ipid", "sport", "dport", "icmp_type", "icmp_code", "icmp_id", "inner",
                 "tcp_flags", "total_len", "final_dst", "gre_version", "gre_callid", "ok")

    def __init__(self):
        self.v = 0
        self.src = self.dst = None
        self.proto = None
        self.ttl = 0
        self.l4off = None
        self.frag_first = False
        self.frag_later = False
        self.ipid = None
        self.sport = self.dport = None
        self.icmp_type = self.icmp_code = self.icmp_id = None
        self.inner = None
        self.tcp_flags = None
        self.total_len = 0
        self.final_dst = None
        self.gre_version = self.gre_callid = None
        self.ok = False


def parse_ip(ip, depth=0):
    """Decodes an IPv4/IPv6 packet (bytes); returns IpInfo (ok=False when unusable)."""
    info = IpInfo()
    try:
        v = ip[0] >> 4
        if v == 4:
            ihl = (ip[0] & 0xF) * 4
            if ihl < 20 or len(ip) < ihl:
                return info
            info.v = 4
            info.total_len = struct.unpack(">H", ip[2:4])[0]
            info.ipid = struct.unpack(">H", ip[4:6])[0]
            fo = struct.unpack(">H", ip[6:8])[0]
            mf, offset = fo & 0x2000, fo & 0x1FFF
            info.ttl = ip[8]
            info.proto = ip[9]
            info.src = ipaddress.IPv4Address(ip[12:16])
            info.dst = info.final_dst = ipaddress.IPv4Address(ip[16:20])
            info.l4off = ihl
            info.frag_first = bool(mf) and offset == 0
            info.frag_later = offset != 0
        elif v == 6:
            if len(ip) < 40:
                return info
            info.v = 6
            info.total_len = 40 + struct.unpack(">H", ip[4:6])[0]
            info.ttl = ip[7]
            info.src = ipaddress.IPv6Address(ip[8:24])
            info.dst = info.final_dst = ipaddress.IPv6Address(ip[24:40])
            nh, off = ip[6], 40
            while True:
                if nh in IPV6_EXT:
                    if off + 8 > len(ip):
                        return info
                    if nh == 43 and ip[off + 3] > 0:  # routing header with segments left
                        n = ip[off + 1] * 8 // 16
                        if n and ip[off + 2] in (0, 2, 4):
                            last = off + 8 + (n - 1) * 16
                            if ip[off + 2] == 4:
                                last = off + 8  # SRH lists the final segment first
                            info.final_dst = ipaddress.IPv6Address(ip[last:last + 16])
                    hl = (ip[off + 1] + 2) * 4 if nh == 51 else (ip[off + 1] + 1) * 8
                    nh, off = ip[off], off + hl
                elif nh == 44:
                    if off + 8 > len(ip):
                        return info
                    fo = struct.unpack(">H", ip[off + 2:off + 4])[0]
                    info.ipid = struct.unpack(">I", ip[off + 4:off + 8])[0]
                    offset, mf = fo >> 3, fo & 1
                    info.frag_first = bool(mf) and offset == 0
                    info.frag_later = offset != 0
                    nh, off = ip[off], off + 8
                else:
                    break
            info.proto = nh
            info.l4off = off
        else:
            return info
        info.ok = True
        if info.frag_later:
            return info
        l4 = ip[info.l4off:]
        if info.proto in (6, 17, 136, 132, 33) and len(l4) >= 4:
            info.sport, info.dport = struct.unpack(">HH", l4[:4])
            if info.proto == 6 and len(l4) >= 14:
                info.tcp_flags = l4[13]
        elif info.proto == 47 and len(l4) >= 4:
            info.gre_version = l4[1] & 0x7
            if info.gre_version == 1 and len(l4) >= 8:
                info.gre_callid = struct.unpack(">H", l4[6:8])[0]
        elif info.proto in (1, 58) and len(l4) >= 4:
            info.icmp_type, info.icmp_code = l4[0], l4[1]
            if len(l4) >= 8:
                info.icmp_id = struct.unpack(">H", l4[4:6])[0]
            err = (info.proto == 1 and info.icmp_type in (3, 4, 5, 11, 12)) or \
                  (info.proto == 58 and info.icmp_type < 128)
            if err and depth == 0 and len(l4) > 8:
                inner = parse_ip(l4[8:], depth + 1)
                info.inner = inner if inner.ok else None
    except (IndexError, struct.error, ValueError):
        info.ok = False
    return info


def tcp_seq_ack(ip, info):
    """(seq, ack) of a TCP segment decoded by parse_ip."""
    return struct.unpack(">II", ip[info.l4off + 4:info.l4off + 12])


def flow_key(info):
    """An unordered key of the connection a packet belongs to (its two endpoints)."""
    a = (info.src, info.sport if info.sport is not None else info.icmp_id)
    b = (info.dst, info.dport if info.dport is not None else info.icmp_id)
    if info.proto in (1, 58):
        a, b = (info.src, info.icmp_id), (info.dst, info.icmp_id)
    return (info.v, info.proto) + ((a, b) if (str(a[0]), a[1] or 0) <= (str(b[0]), b[1] or 0)
                                   else (b, a))


def endpoint_pair(info):
    return (info.src, info.sport if info.proto not in (1, 58) else info.icmp_id)


# -- checksums ----------------------------------------------------------------

def _csum(data, start=0):
    if len(data) % 2:
        data += b"\0"
    s = start + sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def fix_checksums(ip):
    """Returns ip (bytes) with correct IPv4 header and L4 checksums where they can be
    computed: whole (not fragmented, not cut short) TCP/UDP/ICMP/ICMPv6."""
    info = parse_ip(ip)
    if not info.ok:
        return ip
    b = bytearray(ip)
    if info.v == 4:
        ihl = (b[0] & 0xF) * 4
        b[10:12] = b"\0\0"
        b[10:12] = struct.pack(">H", _csum(bytes(b[:ihl])))
    if info.frag_first or info.frag_later or info.total_len > len(b):
        return bytes(b)
    end = info.total_len
    off = info.l4off
    seg = b[off:end]
    if info.proto == 6 and len(seg) >= 20:
        cs = 16
    elif info.proto == 17 and len(seg) >= 8:
        cs = 6
        if info.v == 4 and seg[6:8] == b"\0\0":
            return bytes(b)  # UDP without checksum is legal over IPv4
    elif info.proto == 1 and len(seg) >= 4:
        cs = 2
    elif info.proto == 58 and len(seg) >= 4:
        cs = 2
    else:
        return bytes(b)
    seg[cs:cs + 2] = b"\0\0"
    if info.proto == 1:
        c = _csum(bytes(seg))
    else:
        if info.v == 4:
            pseudo = info.src.packed + info.dst.packed + struct.pack(">BBH", 0, info.proto,
                                                                     len(seg))
        else:
            pseudo = info.src.packed + info.final_dst.packed + struct.pack(">IxxxB", len(seg),
                                                                           info.proto)
        c = _csum(pseudo + bytes(seg))
        if info.proto == 17 and c == 0:
            c = 0xFFFF
    seg[cs:cs + 2] = struct.pack(">H", c)
    b[off:end] = seg
    return bytes(b)


def checksum_ok(ip):
    """True when the packet's checksums are what fix_checksums would write."""
    return fix_checksums(ip) == bytes(ip)
