#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_nat_ref: src/nat/'s jhash2 and find_best_ips_proto against
nat_ref.py, a Python re-implementation written from the kernel's
description (TAP).

  test_nat_ref.py NAT_PROBE

The Python jhash is first anchored to lookup3.c's published values, so the
comparison is against the algorithm, not against a copy of the C code.
Then thousands of random inputs: word counts 1..12 and seeds for jhash2;
IPv4 and IPv6 ranges (narrow, wide, ranges whose first words differ, full
/0 ranges), both manipulations, with and without PERSISTENT, zones, for
the address choice - which must also lie in the range, or in the
kernel's one exception, past it only where the kernel's own arithmetic
puts it (the Python says what the kernel does, not what is sensible).
"""

import ipaddress
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nat_ref  # noqa: E402

N_JHASH = 3000
N_BEST = 4000


def tap(results):
    print("TAP version 13")
    print("1..%d" % len(results))
    failed = 0
    for i, (ok, name, details) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, name))
        for d in details[:10]:
            print("#   " + d)
        failed += not ok
    return 1 if failed else 0


def a16(l3, value):
    if l3 == 4:
        return ipaddress.IPv4Address(value).packed + b"\0" * 12
    return ipaddress.IPv6Address(value).packed


def main():
    probe = sys.argv[1]
    rng = random.Random(24)
    results = []

    # the anchors: lookup3.c driver5's published hashlittle values
    anchors = [(b"", 0, 0xDEADBEEF), (b"", 0xDEADBEEF, 0xBD5B7DDE),
               (b"Four score and seven years ago", 0, 0x17770551),
               (b"Four score and seven years ago", 1, 0xCD628161)]
    bad = ["hashlittle(%r, %#x) = %#x, lookup3 says %#x" % (d, iv, nat_ref.hashlittle(d, iv), want)
           for d, iv, want in anchors if nat_ref.hashlittle(d, iv) != want]
    results.append((not bad, "the Python lookup3 gives lookup3.c's published values", bad))
    # hashword == hashlittle on whole words (little endian)
    bad = []
    for _ in range(200):
        n = rng.randint(1, 9)
        w = [rng.getrandbits(32) for _ in range(n)]
        iv = rng.getrandbits(32)
        b = b"".join(x.to_bytes(4, "little") for x in w)
        if nat_ref.jhash2(w, iv) != nat_ref.hashlittle(b, iv):
            bad.append("words %s" % w)
    results.append((not bad, "the Python jhash2 equals hashlittle over the same bytes", bad))

    lines, want = [], []
    for _ in range(N_JHASH):
        n = rng.choice([1, 2, 3, 4, 4, 4, 5, 6, 7, 12])
        w = [rng.getrandbits(32) for _ in range(n)]
        iv = rng.choice([0, rng.getrandbits(32), rng.getrandbits(16)])
        lines.append("J %d %d %s" % (iv, n, " ".join(str(x) for x in w)))
        want.append(str(nat_ref.jhash2(w, iv)))

    cases = []
    for _ in range(N_BEST):
        l3 = rng.choice([4, 4, 6])
        manip = rng.choice(["src", "dst"])
        persistent = rng.random() < 0.4
        zone = rng.choice([0, 0, 0, 1, 7, 65535])
        if l3 == 4:
            src = a16(4, rng.getrandbits(32))
            dst = a16(4, rng.getrandbits(32))
            kind = rng.random()
            lo = rng.getrandbits(32)
            if kind < 0.5:
                hi = min(lo + rng.randint(1, 20), M32)
            elif kind < 0.8:
                hi = min(lo + rng.getrandbits(rng.randint(1, 31)), M32)
            elif kind < 0.9:
                lo, hi = 0, M32
            else:
                hi = lo
            mn, mx = a16(4, lo), a16(4, hi)
        else:
            src = a16(6, rng.getrandbits(128))
            dst = a16(6, rng.getrandbits(128))
            kind = rng.random()
            lo = rng.getrandbits(128)
            if kind < 0.4:
                hi = min(lo + rng.randint(1, 50), M128)
            elif kind < 0.7:
                hi = min(lo + rng.getrandbits(rng.randint(1, 127)), M128)
            elif kind < 0.8:
                # first words differ: the "full range" path
                hi = min(lo + (rng.getrandbits(8) << 96) + rng.getrandbits(96), M128)
            elif kind < 0.9:
                lo, hi = 0, M128
            else:
                hi = lo
            mn, mx = a16(6, lo), a16(6, hi)
        cases.append((l3, manip, persistent, zone, src, dst, mn, mx))
        lines.append("B %d %d %d %d %s %s %s %s" % (l3, 0 if manip == "src" else 1,
                                                    int(persistent), zone, src.hex(), dst.hex(),
                                                    mn.hex(), mx.hex()))
        want.append(nat_ref.best_addr(l3, manip, persistent, zone, src, dst, mn, mx).hex())

    p = subprocess.run([probe], input="\n".join(lines) + "\n", capture_output=True, text=True,
                       timeout=120)
    got = p.stdout.split("\n")
    if p.returncode != 0 or len(got) < len(want):
        results.append((False, "nat_probe ran", ["exit %d, %d lines: %s" % (p.returncode, len(got),
                                                                           p.stderr[-300:])]))
        return tap(results)

    bad = ["%s -> ctrack %s, reference %s" % (lines[i][:80], got[i], want[i])
           for i in range(N_JHASH) if got[i] != want[i]]
    results.append((not bad, "ct_nat_jhash2 equals the reference on %d random inputs" % N_JHASH,
                    bad))
    off = N_JHASH
    for fam in (4, 6):
        bad = []
        n = 0
        for k, c in enumerate(cases):
            if c[0] != fam:
                continue
            n += 1
            if got[off + k] != want[off + k]:
                bad.append("%s: ctrack %s, reference %s" % (lines[off + k][:120], got[off + k],
                                                             want[off + k]))
        results.append((not bad, "IPv%d address choice equals the reference on %d ranges"
                        % (fam, n), bad))
    # the choice lies in the range (IPv4 always: one word); IPv6 the
    # kernel's "full range" words can leave the range only below min
    bad = []
    for k, c in enumerate(cases):
        if c[0] != 4:
            continue
        v = int.from_bytes(bytes.fromhex(got[off + k])[:4], "big")
        lo = int.from_bytes(c[6][:4], "big")
        hi = int.from_bytes(c[7][:4], "big")
        if not lo <= v <= hi:
            bad.append("%s -> %s outside" % (lines[off + k][:120], got[off + k]))
    results.append((not bad, "every IPv4 choice lies in its range", bad))
    # persistent: the destination does not matter
    bad = []
    for k, c in enumerate(cases):
        if not c[2] or c[1] != "src":
            continue
        other = nat_ref.best_addr(c[0], "src", True, c[3], c[4], a16(c[0], 1), c[6], c[7])
        if other.hex() != got[off + k]:
            bad.append(lines[off + k][:120])
    results.append((not bad, "with PERSISTENT the destination does not change the choice", bad))
    return tap(results)


M32 = (1 << 32) - 1
M128 = (1 << 128) - 1

if __name__ == "__main__":
    sys.exit(main())
