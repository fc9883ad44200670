#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_read_nat.py CTRACK - `ctrack read --nat` as a user meets it (TAP).

Captures are built here byte by byte as a NAT router's ingress would hold
them (client -> server on the inside, server -> the NAT address on the
outside), and every expectation is derived here from the rules, not read
back from ctrack:

 - the listing's reply tuples are the kernel's for the rule (source NAT to
   one address keeps the port when the tuple is free; destination NAT to
   ADDR:PORT), in conntrack's format;
 - JSON carries the binding; --src-nat / --dst-nat / --any-nat filter as
   conntrack's -n / -g / -j;
 - --write-translated writes each packet as the router sends it on: the
   test rewrites the addresses, ports and ids itself, decrements the TTL
   and computes every checksum from scratch (IPv4 header, TCP/UDP with
   their pseudo-headers, ICMP, an ICMP error's quoted header), and the
   written packet must be that, byte for byte; a fragmented datagram comes
   out fragmented to its largest fragment's size (the kernel's
   ip_do_fragment geometry) and reassembles to the translated datagram; an
   IPv6 atomic fragment comes out without its fragment header;
 - a malformed rule is an error naming the rule and the column, a rule
   that can never match a warning; a bad --nat-file or --write-translated
   path an error with exit status 1.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

CT = sys.argv[1]
n_test = 0
failed = 0


def ok(cond, what):
    global n_test, failed
    n_test += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n_test, what))
    if not cond:
        failed += 1
    sys.stdout.flush()


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(">%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def a4(s):
    return bytes(int(x) for x in s.split("."))


def a6(s):
    import ipaddress
    return ipaddress.IPv6Address(s).packed


def ip4(src, dst, proto, l4, ttl=64, ident=1, frag=0):
    h = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(l4), ident, frag, ttl,
                              proto, 0, a4(src), a4(dst)))
    struct.pack_into(">H", h, 10, csum(bytes(h)))
    return bytes(h) + l4


def l4_csum4(src, dst, proto, l4):
    ph = a4(src) + a4(dst) + struct.pack(">BBH", 0, proto, len(l4))
    return csum(ph + l4)


def l4_csum6(src, dst, proto, l4):
    ph = a6(src) + a6(dst) + struct.pack(">IxxxB", len(l4), proto)
    return csum(ph + l4)


def udp4(src, dst, sport, dport, payload=b"q" * 12, **kw):
    u = bytearray(struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload)
    struct.pack_into(">H", u, 6, l4_csum4(src, dst, 17, bytes(u)) or 0xffff)
    return ip4(src, dst, 17, bytes(u), **kw)


def tcp4(src, dst, sport, dport, flags, seq, ack=0, **kw):
    t = bytearray(struct.pack(">HHIIBBHHH", sport, dport, seq, ack, 5 << 4, flags, 64240, 0, 0))
    struct.pack_into(">H", t, 16, l4_csum4(src, dst, 6, bytes(t)))
    return ip4(src, dst, 6, bytes(t), **kw)


def icmp4(src, dst, typ, code, rest, body=b"", **kw):
    m = bytearray(struct.pack(">BBH", typ, code, 0) + rest + body)
    struct.pack_into(">H", m, 2, csum(bytes(m)))
    return ip4(src, dst, 1, bytes(m), **kw)


def echo4(src, dst, typ, ident, seq=1, **kw):
    return icmp4(src, dst, typ, 0, struct.pack(">HH", ident, seq), b"ping" * 4, **kw)


def ip6(src, dst, nh, payload, hlim=64):
    return struct.pack(">IHBB16s16s", 6 << 28, len(payload), nh, hlim, a6(src), a6(dst)) + payload


def udp6(src, dst, sport, dport, payload=b"v6" * 6, frag_hdr=None, hlim=64):
    u = bytearray(struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload)
    struct.pack_into(">H", u, 6, l4_csum6(src, dst, 17, bytes(u)) or 0xffff)
    if frag_hdr is not None:
        return ip6(src, dst, 44, struct.pack(">BBHI", 17, 0, frag_hdr[0], frag_hdr[1]) +
                   bytes(u), hlim)
    return ip6(src, dst, 17, bytes(u), hlim)


def eth(ip):
    et = 0x86dd if ip[0] >> 4 == 6 else 0x0800
    return b"\x02\0\0\0\0\x02\x02\0\0\0\0\x01" + struct.pack(">H", et) + ip


def write_pcap(path, ips):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, ip in enumerate(ips):
            fr = eth(ip)
            f.write(struct.pack("<IIII", 1000 + i // 1000, (i % 1000) * 1000, len(fr),
                                len(fr)) + fr)


def read_pcap(path):
    out = []
    with open(path, "rb") as f:
        hdr = f.read(24)
        magic, _, _, _, _, _, lt = struct.unpack("<IHHiIII", hdr)
        assert magic in (0xa1b2c3d4, 0xa1b23c4d), hex(magic)
        assert lt == 101, lt
        while True:
            rh = f.read(16)
            if len(rh) < 16:
                break
            _, _, cap, _ = struct.unpack("<IIII", rh)
            out.append(f.read(cap))
    return out


def run(args, cap):
    return subprocess.run([CT, "read", "--no-progress"] + args + [cap], capture_output=True,
                          text=True, timeout=60)


# the expected output: a packet rewritten by the test itself ----------------
def forward4(ip):
    """A router's TTL decrement, the header checksum computed from scratch."""
    h = bytearray(ip)
    h[8] -= 1
    struct.pack_into(">H", h, 10, 0)
    struct.pack_into(">H", h, 10, csum(bytes(h[:20])))
    return bytes(h)


C, S, N = "10.0.1.2", "192.0.2.10", "198.51.100.1"
B = "10.0.2.5"  # a DNAT backend
C6, S6 = "fd00:1::2", "fd00:2::2"

tmp = tempfile.mkdtemp(prefix="ct-read-nat-")
cap = os.path.join(tmp, "in.pcap")
out = os.path.join(tmp, "out.pcap")

# -- 1. source NAT: UDP, TCP, ICMP echo, an ICMP error, an un-NATed IPv6 flow
ingress = [
    udp4(C, S, 40000, 53),                          # 0 client -> server
    udp4(S, N, 53, 40000),                          # 1 server -> NAT address
    tcp4(C, S, 41000, 80, 0x02, 1000),              # 2 SYN
    tcp4(S, N, 80, 41000, 0x12, 5000, 1001),        # 3 SYN-ACK
    tcp4(C, S, 41000, 80, 0x10, 1001, 5001),        # 4 ACK
    echo4(C, S, 8, 77),                             # 5 echo request
    echo4(S, N, 0, 77),                             # 6 echo reply
    udp4(C, S, 40001, 54),                          # 7 to a closed port
]
# 8: the server's port unreachable to the NAT address, quoting what it got
quoted = udp4(N, S, 40001, 54, ttl=63)
ingress.append(icmp4(S, N, 3, 3, b"\0\0\0\0", quoted[:28]))
ingress.append(udp6(C6, S6, 5555, 53))              # 9 IPv6: no rule maps it
write_pcap(cap, ingress)

r = run(["--nat", "ip saddr 10.0.1.0/24 snat to " + N, "--write-translated", out], cap)
ok(r.returncode == 0, "snat: exit status 0 (%s)" % r.stderr.strip())
lines = r.stdout.splitlines()
want_udp = ("src=%s dst=%s sport=40000 dport=53 packets=1 bytes=40 src=%s dst=%s sport=53 "
            "dport=40000 packets=1 bytes=40" % (C, S, S, N))
ok(any(want_udp in l for l in lines), "snat: the UDP reply tuple is the NAT address's")
want_tcp = "src=%s dst=%s sport=80 dport=41000" % (S, N)
ok(any("SYN_RECV" in l or "ESTABLISHED" in l for l in lines if want_tcp in l),
   "snat: the TCP entry lists its translated reply")
want_icmp = "src=%s dst=%s type=0 code=0 id=77" % (S, N)
ok(any(want_icmp in l for l in lines), "snat: the echo's reply tuple")
ok(any("src=%s dst=%s sport=5555 dport=53" % (C6, S6) in l and
       "src=%s dst=%s sport=53 dport=5555" % (S6, C6) in l for l in lines),
   "snat: the IPv6 flow no rule maps keeps its tuples (the null binding)")

written = read_pcap(out)
ok(len(written) == len(ingress), "write-translated: every packet sent on (%d of %d)"
   % (len(written), len(ingress)))
expect = [
    forward4(udp4(N, S, 40000, 53)),
    forward4(udp4(S, C, 53, 40000)),
    forward4(tcp4(N, S, 41000, 80, 0x02, 1000)),
    forward4(tcp4(S, C, 80, 41000, 0x12, 5000, 1001)),
    forward4(tcp4(N, S, 41000, 80, 0x10, 1001, 5001)),
    forward4(echo4(N, S, 8, 77)),
    forward4(echo4(S, C, 0, 77)),
    forward4(udp4(N, S, 40001, 54)),
]
# the error goes back to the client, quoting the packet as the client sent it
quoted_back = udp4(C, S, 40001, 54, ttl=63)
expect.append(forward4(icmp4(S, C, 3, 3, b"\0\0\0\0", quoted_back[:28])))
v6 = bytearray(udp6(C6, S6, 5555, 53))
v6[7] -= 1
expect.append(bytes(v6))
for i, (w, e) in enumerate(zip(written, expect)):
    ok(w == e, "write-translated: packet %d as the router sends it%s" %
       (i, "" if w == e else " (got %s, want %s)" % (w.hex(), e.hex())))

# JSON and the filters
r = run(["--nat", "ip saddr 10.0.1.0/24 snat to " + N, "-o", "json"], cap)
objs = [json.loads(l) for l in r.stdout.splitlines()]
udp = [o for o in objs if o["proto"] == "udp" and o["orig"]["sport"] == 40000]
ok(len(udp) == 1 and udp[0].get("nat") == {"src": {"addr": N, "port": 40000}},
   "json: the binding (%s)" % (udp[0].get("nat") if udp else None))
echo = [o for o in objs if o["proto"] == "icmp"]
ok(len(echo) == 1 and echo[0].get("nat") == {"src": {"addr": N, "id": 77}},
   "json: an ICMP binding names the id")
ok(all("nat" not in o for o in objs if o["l3"] == "ipv6"), "json: no binding without NAT")
for flag, want in (("--src-nat", 4), ("--dst-nat", 0), ("--any-nat", 4)):
    r = run(["--nat", "ip saddr 10.0.1.0/24 snat to " + N, flag], cap)
    ok(r.returncode == 0 and len(r.stdout.splitlines()) == want,
       "%s lists %d connections (got %d)" % (flag, want, len(r.stdout.splitlines())))
r = run(["--nat", "ip saddr 10.0.1.0/24 snat to " + N, "--src-nat", "-e", "--no-table"], cap)
ok(r.returncode == 0 and r.stdout.count("[NEW]") == 4, "--src-nat filters events too (%d NEW)"
   % r.stdout.count("[NEW]"))

# -- 2. destination NAT with a port change ------------------------------------
dn = [tcp4(C, S, 42000, 80, 0x02, 7000), tcp4(B, C, 8080, 42000, 0x12, 9000, 7001)]
write_pcap(cap, dn)
r = run(["--nat", "tcp dport 80 dnat to %s:8080" % B, "--write-translated", out, "-o", "json"],
        cap)
objs = [json.loads(l) for l in r.stdout.splitlines()]
ok(len(objs) == 1 and objs[0]["reply"] == {"src": B, "dst": C, "sport": 8080, "dport": 42000,
                                           "packets": 1, "bytes": 40}
   and objs[0].get("nat") == {"dst": {"addr": B, "port": 8080}},
   "dnat: the reply comes from the backend's port")
written = read_pcap(out)
ok(written == [forward4(tcp4(C, B, 42000, 8080, 0x02, 7000)),
               forward4(tcp4(S, C, 80, 42000, 0x12, 9000, 7001))],
   "dnat: both packets translated byte for byte")

# -- 3. a fragmented datagram: reassembled, translated, fragmented again ------
payload = bytes(range(256)) * 10 + b"end"          # 2563 bytes
whole = udp4(C, S, 43000, 9999, payload, ident=0x4242)
data = whole[20:]
frags = []
for off in range(0, len(data), 1480):
    part = data[off:off + 1480]
    more = 0x2000 if off + 1480 < len(data) else 0
    frags.append(ip4(C, S, 17, part, ident=0x4242, frag=(off >> 3) | more))
write_pcap(cap, frags)
r = run(["--nat", "snat to " + N, "--write-translated", out], cap)
written = read_pcap(out)
ok([len(w) for w in written] == [len(f) for f in frags],
   "refragment: the sizes the kernel's ip_do_fragment gives (%s)" % [len(w) for w in written])
want = forward4(udp4(N, S, 43000, 9999, payload, ident=0x4242))
re = b"".join(w[20:] for w in written)
ok(written and re == want[20:] and all(csum(w[:20]) == 0 for w in written) and
   all(w[4:6] == b"\x42\x42" and w[12:20] == want[12:20] for w in written),
   "refragment: the pieces carry the translated datagram, each header's checksum valid")
ok(len(written) == 2 and struct.unpack(">H", written[0][6:8])[0] == 0x2000 and
   struct.unpack(">H", written[1][6:8])[0] == 1480 >> 3,
   "refragment: offsets and MF as sent")

# -- 4. an IPv6 atomic fragment goes on without its fragment header ----------
write_pcap(cap, [udp6(C6, S6, 6000, 53, frag_hdr=(0, 0x1234))])
r = run(["--write-translated", out], cap)
written = read_pcap(out)
plain = bytearray(udp6(C6, S6, 6000, 53))
plain[7] -= 1
ok(len(written) == 1 and written[0] == bytes(plain),
   "atomic fragment: sent without its fragment header")

# -- 5. errors and warnings -------------------------------------------------
write_pcap(cap, [udp4(C, S, 1, 2)])
r = run(["--nat", "snat to 10.0.0.300"], cap)
ok(r.returncode == 1 and "rule 'snat to 10.0.0.300'" in r.stderr and "column 9" in r.stderr,
   "a malformed rule names the rule and the column: %s" % r.stderr.strip())
r = run(["--nat", "tcp sport 1-2 snat to 10.0.0.1", "--nat", "ip6 snat to 10.0.0.1"], cap)
ok(r.returncode == 0 and "warning" in r.stderr, "a rule that can never match warns: %s"
   % r.stderr.strip())
r = run(["--nat-file", os.path.join(tmp, "none.nat")], cap)
ok(r.returncode == 1 and "none.nat" in r.stderr, "a missing --nat-file: %s" % r.stderr.strip())
with open(os.path.join(tmp, "rules.nat"), "w") as f:
    f.write("# comment\n\nsnat to %s\nsnat too 1.2.3.4\n" % N)
r = run(["--nat-file", os.path.join(tmp, "rules.nat")], cap)
ok(r.returncode == 1 and "rules.nat:4" in r.stderr, "a bad line names FILE:LINE: %s"
   % r.stderr.strip())
r = run(["--write-translated", "/nonexistent-dir/x.pcap"], cap)
ok(r.returncode == 1 and "--write-translated" in r.stderr,
   "an unwritable --write-translated: %s" % r.stderr.strip())
r = run(["--nat-exact-ports"], cap)
ok(r.returncode == 1 and "needs" in r.stderr, "--nat-exact-ports alone: %s" % r.stderr.strip())

print("1..%d" % n_test)
sys.exit(1 if failed else 0)
