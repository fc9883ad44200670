# SPDX-License-Identifier: BSD-3-Clause
"""nat_ref: the kernel's NAT address choice, written again in Python from
the kernel's description, as an oracle for src/nat/ that shares no code
with it.

  jhash2(words, initval)    include/linux/jhash.h (Bob Jenkins' lookup3
                            hashword) over 32-bit words
  hashlittle(data, initval) lookup3's byte-string hash: for a length that
                            is a multiple of 4 it equals jhash2 over the
                            little-endian words, and lookup3.c's driver
                            publishes its values ("Four score and seven
                            years ago"), which anchors the mixing here
  best_addr(...)            find_best_ips_proto() of net/netfilter/
                            nf_nat_core.c (6.17/6.18)

Addresses are 16-byte strings as a tuple holds them (IPv4: 4 bytes then
12 zero bytes).  The kernel hashes the address words as they lie in
memory; on the little-endian machines this runs on, that is '<I'.
"""

import struct

M = 0xFFFFFFFF


def rol(x, s):
    return ((x << s) | (x >> (32 - s))) & M


def _mix(a, b, c):
    a = (a - c) & M; a ^= rol(c, 4); c = (c + b) & M
    b = (b - a) & M; b ^= rol(a, 6); a = (a + c) & M
    c = (c - b) & M; c ^= rol(b, 8); b = (b + a) & M
    a = (a - c) & M; a ^= rol(c, 16); c = (c + b) & M
    b = (b - a) & M; b ^= rol(a, 19); a = (a + c) & M
    c = (c - b) & M; c ^= rol(b, 4); b = (b + a) & M
    return a, b, c


def _final(a, b, c):
    c ^= b; c = (c - rol(b, 14)) & M
    a ^= c; a = (a - rol(c, 11)) & M
    b ^= a; b = (b - rol(a, 25)) & M
    c ^= b; c = (c - rol(b, 16)) & M
    a ^= c; a = (a - rol(c, 4)) & M
    b ^= a; b = (b - rol(a, 14)) & M
    c ^= b; c = (c - rol(b, 24)) & M
    return a, b, c


def jhash2(words, initval):
    n = len(words)
    a = b = c = (0xDEADBEEF + (n << 2) + initval) & M
    k = list(words)
    while n > 3:
        a = (a + k[0]) & M
        b = (b + k[1]) & M
        c = (c + k[2]) & M
        a, b, c = _mix(a, b, c)
        k = k[3:]
        n -= 3
    if n == 0:
        return c
    if n >= 3:
        c = (c + k[2]) & M
    if n >= 2:
        b = (b + k[1]) & M
    a = (a + k[0]) & M
    a, b, c = _final(a, b, c)
    return c


def hashlittle(data, initval):
    n = len(data)
    a = b = c = (0xDEADBEEF + n + initval) & M
    while n > 12:
        w = struct.unpack("<3I", data[:12])
        a, b, c = (a + w[0]) & M, (b + w[1]) & M, (c + w[2]) & M
        a, b, c = _mix(a, b, c)
        data = data[12:]
        n -= 12
    if n == 0:
        return c
    w = struct.unpack("<3I", data + b"\0" * (12 - n))
    a, b, c = (a + w[0]) & M, (b + w[1]) & M, (c + w[2]) & M
    a, b, c = _final(a, b, c)
    return c


def words(addr16):
    """The four address words as the kernel reads them (host = little endian)."""
    return list(struct.unpack("<4I", addr16))


def best_addr(l3, manip, persistent, zone, src16, dst16, min16, max16):
    """The address find_best_ips_proto writes (16 bytes); manip 'src' or 'dst'."""
    var = bytearray(src16 if manip == "src" else dst16)
    if min16 == max16:
        return bytes(min16)
    last = 0 if l3 == 4 else 3
    srcw, dstw = words(src16), words(dst16)
    minw, maxw = words(min16), words(max16)
    j = jhash2(srcw, 0 if persistent else (dstw[last] ^ zone))
    full = False
    out = list(words(bytes(var)))
    for i in range(last + 1):
        if not full:
            lo = struct.unpack(">I", struct.pack("<I", minw[i]))[0]
            hi = struct.unpack(">I", struct.pack("<I", maxw[i]))[0]
            dist = (hi - lo + 1) & M
        else:
            lo, dist = 0, M
        v = (lo + ((j * dist) >> 32)) & M
        out[i] = struct.unpack("<I", struct.pack(">I", v))[0]
        if out[i] != maxw[i]:
            full = True
        if not persistent:
            # a destination manipulation xors the word it just wrote
            dw = out[i] if manip == "dst" else dstw[i]
            j ^= dw
    return struct.pack("<4I", *out)
