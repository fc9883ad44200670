#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench/concat_pcaps.py OUT [DIR] - concatenate every classic Ethernet pcap
of DIR (default ../shared/pcaps) into OUT, in name order, each file's
timestamps shifted so that the whole runs forwards (a second between
files).  Without OVS, unlike `ctrack-bench ovs`'s shared-concat (which also
leaves out the captures OVS cannot read): a read-path input of ~90k
packets of real, varied traffic for side-by-side runs of two builds
(`bench/ab.py`, callgrind).  Prints how many captures and packets it took.
"""
import glob
import os
import struct
import sys

MAGIC = {0xa1b2c3d4: ('<', False), 0xa1b23c4d: ('<', True),
         0xd4c3b2a1: ('>', False), 0x4d3cb2a1: ('>', True)}


def records(path):
    """(time_us, wire_len, bytes) of an Ethernet pcap, or [] for others."""
    d = open(path, 'rb').read()
    if len(d) < 24 or struct.unpack('<I', d[:4])[0] not in MAGIC:
        return []
    e, nano = MAGIC[struct.unpack('<I', d[:4])[0]]
    if struct.unpack(e + 'I', d[20:24])[0] != 1:
        return []
    out, off = [], 24
    while off + 16 <= len(d):
        s, frac, cap, wire = struct.unpack(e + 'IIII', d[off:off + 16])
        if off + 16 + cap > len(d):
            break
        out.append((s * 1000000 + (frac // 1000 if nano else frac), wire,
                    d[off + 16:off + 16 + cap]))
        off += 16 + cap
    return out


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    here = os.path.dirname(os.path.abspath(__file__))
    src = sys.argv[2] if len(sys.argv) == 3 else os.path.join(here, '..', '..', 'shared', 'pcaps')
    clock = 1600000000 * 1000000
    files = n = 0
    with open(sys.argv[1], 'wb') as out:
        out.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 262144, 1))
        for f in sorted(glob.glob(os.path.join(src, '*.pcap'))):
            recs = records(f)
            if not recs:
                continue
            base, last = recs[0][0], clock
            for t, wire, data in recs:
                tt = clock + max(0, t - base)
                last = max(last, tt)
                out.write(struct.pack('<IIII', tt // 1000000, tt % 1000000,
                                      len(data), wire) + data)
                n += 1
            clock = last + 1000000
            files += 1
    print('%d captures, %d packets' % (files, n))
    return 0 if n else 1


if __name__ == '__main__':
    sys.exit(main())
