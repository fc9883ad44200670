# SPDX-License-Identifier: BSD-3-Clause
"""pkt.py - packets and capture files built byte by byte, for craft.py.

Every header is packed field by field from its RFC or from the link type's
definition (tcpdump.org/linktypes.html); every checksum is computed here,
from the bytes, with the algorithm the RFC gives: the Internet checksum
(RFC 1071) with the IPv4/IPv6 pseudo-headers (RFC 793, 768, 8200 8.1),
CRC-32C for SCTP (RFC 4960 appendix B, bit-reflected, polynomial
0x1EDC6F41) and Adler-32 for the old SCTP checksum (RFC 2960 appendix B).
Nothing here comes from ctrack or from a capture library: the files these
helpers write are checked by tshark (check_captures.py), not by the code
they test.

Writers: classic pcap (either byte order, micro- or nanosecond stamps,
any snapshot length) and pcapng (a section header, interfaces with their
own link type and time resolution, enhanced packet blocks).
"""
import ipaddress
import struct

# TCP flags
FIN, SYN, RST, PSH, ACK, URG, ECE, CWR = 1, 2, 4, 8, 16, 32, 64, 128


def addr(a):
    return ipaddress.ip_address(a)


def ones_sum(data, s=0):
    """The 16-bit one's complement sum of @data (RFC 1071), not inverted."""
    if len(data) % 2:
        data = data + b"\0"
    for i in range(0, len(data), 2):
        s += (data[i] << 8) | data[i + 1]
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def inet_csum(data):
    return (~ones_sum(data)) & 0xFFFF


def pseudo(src, dst, proto, length):
    """The pseudo-header an L4 checksum covers (RFC 793 / RFC 8200 8.1)."""
    s, d = addr(src), addr(dst)
    if s.version == 4:
        return s.packed + d.packed + struct.pack(">BBH", 0, proto, length)
    return s.packed + d.packed + struct.pack(">I3xB", length, proto)


def _crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_CRC32C = _crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC32C[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def adler32(data):
    a, b = 1, 0
    for x in data:
        a = (a + x) % 65521
        b = (b + a) % 65521
    return (b << 16) | a


# ---- layer 4 ----------------------------------------------------------------

def tcp(src, dst, sport, dport, seq, ack, flags, win=64240, opts=b"", payload=b"",
        csum_dst=None, bad_csum=False, hdr_len=None):
    """A TCP segment; the checksum covers @csum_dst (default @dst)."""
    opts = opts + b"\x01" * ((4 - len(opts) % 4) % 4)      # NOP padding
    hl = 20 + len(opts) if hdr_len is None else hdr_len
    h = bytearray(struct.pack(">HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF,
                              ack & 0xFFFFFFFF, (hl // 4) << 4, flags, win, 0, 0) + opts)
    seg = bytes(h) + payload
    c = inet_csum(pseudo(src, csum_dst or dst, 6, len(seg)) + seg)
    if bad_csum:
        c ^= 0x1111
    struct.pack_into(">H", h, 16, c)
    return bytes(h) + payload


def udp(src, dst, sport, dport, payload=b"", csum=True, bad_csum=False, length=None,
        csum_dst=None, proto=17, coverage=None):
    """UDP (or UDP-Lite with @proto 136 and @coverage); csum False sends 0 ("none")."""
    n = 8 + len(payload)
    lf = (n if length is None else length) if proto == 17 else (coverage or 0)
    h = bytearray(struct.pack(">HHHH", sport, dport, lf, 0))
    if csum:
        covered = bytes(h) + payload
        if proto == 136 and coverage:
            covered = covered[:coverage]
        c = inet_csum(pseudo(src, csum_dst or dst, proto, n) + covered)
        if c == 0:
            c = 0xFFFF                      # RFC 768: a computed 0 is sent as all ones
        if bad_csum:
            c ^= 0x2222
        struct.pack_into(">H", h, 6, c)
    return bytes(h) + payload


def icmp4(itype, code, rest=b"\0\0\0\0", body=b"", bad_csum=False):
    """ICMP: type, code, checksum, 4 bytes of @rest, @body (RFC 792)."""
    m = bytearray(struct.pack(">BBH", itype, code, 0) + rest + body)
    c = inet_csum(bytes(m))
    if bad_csum:
        c ^= 0x3333
    struct.pack_into(">H", m, 2, c)
    return bytes(m)


def echo4(request, ident, seq, data=b""):
    return icmp4(8 if request else 0, 0, struct.pack(">HH", ident, seq), data)


def icmp6(src, dst, itype, code, rest=b"\0\0\0\0", body=b"", bad_csum=False, csum_dst=None):
    """ICMPv6 with its pseudo-header (RFC 4443 2.3)."""
    m = bytearray(struct.pack(">BBH", itype, code, 0) + rest + body)
    c = inet_csum(pseudo(src, csum_dst or dst, 58, len(m)) + bytes(m))
    if bad_csum:
        c ^= 0x4444
    struct.pack_into(">H", m, 2, c)
    return bytes(m)


def echo6(src, dst, request, ident, seq, data=b""):
    return icmp6(src, dst, 128 if request else 129, 0, struct.pack(">HH", ident, seq), data)


def sctp_chunk(ctype, flags, value):
    c = struct.pack(">BBH", ctype, flags, 4 + len(value)) + value
    return c + b"\0" * ((4 - len(c) % 4) % 4)


def sctp(sport, dport, vtag, chunks, checksum="crc32c"):
    """An SCTP packet; @checksum is "crc32c" (RFC 4960) or "adler32" (RFC 2960)."""
    p = bytearray(struct.pack(">HHII", sport, dport, vtag, 0) + b"".join(chunks))
    if checksum == "crc32c":
        # the CRC goes out least significant byte first (RFC 4960 B)
        struct.pack_into("<I", p, 8, crc32c(bytes(p)))
    else:
        struct.pack_into(">I", p, 8, adler32(bytes(p)))
    return bytes(p)


def gre(proto, payload, version=0, key=None, seq=None, ack=None, csum=False):
    """GRE (RFC 2784/2890) or, with version 1, PPTP's enhanced GRE (RFC 2637 4.1),
    where @key is (payload length, call id)."""
    f = 0
    opt = b""
    if csum:
        f |= 0x8000
    if version == 1:
        f |= 0x2000                          # K: always present in enhanced GRE
        if seq is not None:
            f |= 0x1000
        if ack is not None:
            f |= 0x0080
        f |= 1
        opt += struct.pack(">HH", key[0], key[1])
        if seq is not None:
            opt += struct.pack(">I", seq)
        if ack is not None:
            opt += struct.pack(">I", ack)
    else:
        if key is not None:
            f |= 0x2000
        if seq is not None:
            f |= 0x1000
        if key is not None:
            opt += struct.pack(">I", key)
        if seq is not None:
            opt += struct.pack(">I", seq)
    hdr = struct.pack(">HH", f, proto)
    if csum:
        body = hdr + b"\0\0\0\0" + opt + payload
        c = inet_csum(body)
        return hdr + struct.pack(">HH", c, 0) + opt + payload
    return hdr + opt + payload


# ---- layer 3 ----------------------------------------------------------------

def ip4(src, dst, proto, l4, ident=1, ttl=64, tos=0, df=False, mf=False, frag_off=0,
        opts=b"", total=None, ihl=None, bad_csum=False):
    """An IPv4 header (RFC 791) in front of @l4; @frag_off in bytes."""
    opts = opts + b"\0" * ((4 - len(opts) % 4) % 4)
    hl = 5 + len(opts) // 4 if ihl is None else ihl
    tot = 20 + len(opts) + len(l4) if total is None else total
    fo = (0x4000 if df else 0) | (0x2000 if mf else 0) | (frag_off // 8)
    h = bytearray(struct.pack(">BBHHHBBH4s4s", 0x40 | hl, tos, tot, ident, fo, ttl, proto, 0,
                              addr(src).packed, addr(dst).packed) + opts)
    c = inet_csum(bytes(h))
    if bad_csum:
        c ^= 0x5555
    struct.pack_into(">H", h, 10, c)
    return bytes(h) + l4


def ip6(src, dst, nh, rest, hlim=64, plen=None, tclass=0, flow=0):
    """An IPv6 fixed header (RFC 8200) in front of @rest (extension headers and
    upper layer)."""
    n = len(rest) if plen is None else plen
    return struct.pack(">IHBB16s16s", (6 << 28) | (tclass << 20) | flow, n, nh, hlim,
                       addr(src).packed, addr(dst).packed) + rest


def ext_opts(nh, options=b""):
    """Hop-by-hop or destination options header (RFC 8200 4.3), padded with
    Pad1/PadN to a multiple of 8."""
    body = options
    pad = (8 - (2 + len(body)) % 8) % 8
    if pad == 1:
        body += b"\0"
    elif pad:
        body += bytes([1, pad - 2]) + b"\0" * (pad - 2)
    return bytes([nh, (2 + len(body)) // 8 - 1]) + body


def ext_routing0(nh, segleft, addrs):
    """Type 0 routing header (RFC 2460 4.4, deprecated by RFC 5095 but still
    parsed): @addrs the hops still to visit, the final destination last."""
    return struct.pack(">BBBB4x", nh, 2 * len(addrs), 0, segleft) + \
        b"".join(addr(a).packed for a in addrs)


def ext_frag(nh, offset, more, ident):
    """Fragment header (RFC 8200 4.5); @offset in bytes."""
    return struct.pack(">BxHI", nh, (offset // 8) << 3 | (1 if more else 0), ident)


# ---- link layers --------------------------------------------------------------

MAC_A = bytes.fromhex("020000000a01")
MAC_B = bytes.fromhex("020000000b02")


def eth(etype, payload, tags=(), src=MAC_A, dst=MAC_B):
    """Ethernet II; @tags are (TPID, VID) pairs, outermost first."""
    t = b"".join(struct.pack(">HH", tpid, vid) for tpid, vid in tags)
    return dst + src + t + struct.pack(">H", etype) + payload


def eth_ip(ip, tags=(), src=MAC_A, dst=MAC_B):
    return eth(0x0800 if ip[0] >> 4 == 4 else 0x86DD, ip, tags, src, dst)


def arp(request, sha, spa, tha, tpa):
    return struct.pack(">HHBBH6s4s6s4s", 1, 0x0800, 6, 4, 1 if request else 2, sha,
                       addr(spa).packed, tha, addr(tpa).packed)


def pppoe_session(ppp_proto, payload, session=0x1234):
    """PPPoE session stage (RFC 2516): ver/type 0x11, code 0, session id, length,
    then the PPP protocol number and its payload."""
    return struct.pack(">BBHHH", 0x11, 0, session, 2 + len(payload), ppp_proto) + payload


def mpls(labels, payload, ttl=64):
    """An MPLS label stack (RFC 3032): (label, tc) pairs, the bottom one last."""
    out = b""
    for i, (label, tc) in enumerate(labels):
        s = 1 if i == len(labels) - 1 else 0
        out += struct.pack(">I", (label << 12) | (tc << 9) | (s << 8) | ttl)
    return out + payload


def sll(proto, payload, pkttype=0, hatype=1, haddr=MAC_A):
    """LINKTYPE_LINUX_SLL: packet type, ARPHRD type, address length, 8 address
    bytes, protocol."""
    return struct.pack(">HHH8sH", pkttype, hatype, len(haddr), haddr.ljust(8, b"\0"),
                       proto) + payload


def sll2(proto, payload, ifindex, pkttype=0, hatype=1, haddr=MAC_A):
    """LINKTYPE_LINUX_SLL2: protocol, reserved, interface index, ARPHRD type,
    packet type, address length, 8 address bytes."""
    return struct.pack(">HHIHBB8s", proto, 0, ifindex, hatype, pkttype, len(haddr),
                       haddr.ljust(8, b"\0")) + payload


def null_frame(family, payload, order="<"):
    """LINKTYPE_NULL: a 4-byte address family in the writer's byte order."""
    return struct.pack(order + "I", family) + payload


def loop_frame(family, payload):
    """LINKTYPE_LOOP: the family in network byte order."""
    return struct.pack(">I", family) + payload


def nflog(family, payload=None, prefix=b"", hook=1, order="<"):
    """LINKTYPE_NFLOG: a 4-byte header (family, version 0, resource id in
    network order), then TLVs whose 16-bit length and type are in the
    writer's byte order; each value is padded to 4 bytes."""
    def tlv(t, v):
        b = struct.pack(order + "HH", 4 + len(v), t) + v
        return b + b"\0" * ((4 - len(b) % 4) % 4)
    hw = 0x0800 if family == 2 else 0x86DD
    out = struct.pack(">BBH", family, 0, 0)
    out += tlv(1, struct.pack(">HBB", hw, hook, 0))           # NFULA_PACKET_HDR
    if prefix:
        out += tlv(10, prefix + b"\0")                          # NFULA_PREFIX
    if payload is not None:
        out += tlv(9, payload)                                  # NFULA_PAYLOAD
    return out


# ---- capture files ------------------------------------------------------------

class Rec:
    """One record: capture time in ns, bytes as captured, length on the wire."""
    __slots__ = ("ts", "data", "wire")

    def __init__(self, ts, data, wire=None):
        self.ts = ts
        self.data = data
        self.wire = len(data) if wire is None else wire


def pcap(linktype, recs, order="<", nano=False, snaplen=262144, cut=None):
    """A classic pcap file; @cut cuts every record to that many bytes (what a
    capture with that snapshot length holds)."""
    magic = 0xA1B23C4D if nano else 0xA1B2C3D4
    out = [struct.pack(order + "IHHiIII", magic, 2, 4, 0, 0, snaplen, linktype)]
    for r in recs:
        sec, ns = divmod(r.ts, 10 ** 9)
        frac = ns if nano else ns // 1000
        d = r.data if cut is None else r.data[:cut]
        out.append(struct.pack(order + "IIII", sec, frac, len(d), r.wire) + d)
    return b"".join(out)


def _pad4(b):
    return b + b"\0" * ((4 - len(b) % 4) % 4)


def _ng_block(btype, body):
    n = 12 + len(body)
    return struct.pack("<II", btype, n) + body + struct.pack("<I", n)


def _ng_opt(code, value):
    return struct.pack("<HH", code, len(value)) + _pad4(value)


def pcapng(ifaces, packets, appl=b"ctrack tests/captures/craft.py"):
    """A pcapng file (little-endian section).  @ifaces: (linktype, name,
    tsresol exponent) each; @packets: (interface index, Rec)."""
    out = [_ng_block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1) +
                     _ng_opt(4, appl) + _ng_opt(0, b""))]
    for lt, name, res in ifaces:
        out.append(_ng_block(1, struct.pack("<HHI", lt, 0, 262144) + _ng_opt(2, name) +
                             _ng_opt(9, bytes([res])) + _ng_opt(0, b"")))
    for i, r in packets:
        t = r.ts // (10 ** (9 - ifaces[i][2]))
        out.append(_ng_block(6, struct.pack("<IIIII", i, t >> 32, t & 0xFFFFFFFF,
                                            len(r.data), r.wire) + _pad4(r.data)))
    return b"".join(out)


# ---- a TCP connection's segments ------------------------------------------------

class Tcp:
    """Builds the segments of one TCP connection with consistent sequence and
    acknowledgement numbers, and counts what each direction sent (packets,
    IP bytes) as conntrack's counters count it."""

    def __init__(self, cli, srv, cport, sport, isn_c=0x1000, isn_s=0x8000, win=64240):
        self.ep = {True: (cli, cport), False: (srv, sport)}
        self.nxt = {True: isn_c, False: isn_s}
        self.win = win
        self.count = {True: [0, 0], False: [0, 0]}

    def seg(self, from_cli, flags, payload=b"", opts=b"", count=True, seq=None, **kw):
        (src, sp), (dst, dp) = self.ep[from_cli], self.ep[not from_cli]
        s = self.nxt[from_cli] if seq is None else seq
        a = self.nxt[not from_cli] if flags & ACK else 0
        l4 = tcp(src, dst, sp, dp, s, a, flags, self.win, opts, payload, **kw)
        v4 = addr(src).version == 4
        ip = ip4(src, dst, 6, l4) if v4 else ip6(src, dst, 6, l4)
        if seq is None:
            self.nxt[from_cli] = (s + len(payload) + (1 if flags & (SYN | FIN) else 0)) \
                & 0xFFFFFFFF
        if count:
            self.count[from_cli][0] += 1
            self.count[from_cli][1] += len(ip)
        return ip
