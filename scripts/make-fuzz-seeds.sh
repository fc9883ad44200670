#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# scripts/make-fuzz-seeds.sh [PCAPS_DIR] [OUT_DIR]
# Extracts seed inputs for fuzz/fuzz_parse.c from the capture corpus
# (default ../shared/pcaps) into OUT_DIR (default build-fuzz/corpus-parse,
# outside version control).  Seed format (see fuzz_parse.c): byte 0 picks
# the link type (low 4 bits), bit 6 marks a snaplen-cut frame, bit 7 a
# multi-frame seed whose body is a list of (2-byte big-endian length,
# frame) records.  Single-frame seeds: the first 40 frames of each file
# and every 25th after; multi-frame seeds: windows of 8 consecutive frames
# every 100 frames (so fragments of one datagram meet in one input).
# Reads classic pcap (either byte order, micro/nanoseconds), pcapng and
# gzip-compressed pcap with nothing but the Python standard library.
set -eu
pcaps=${1:-../shared/pcaps}
out=${2:-build-fuzz/corpus-parse}
mkdir -p "$out"
python3 - "$pcaps" "$out" <<'PY'
import gzip, hashlib, os, struct, sys

pcaps, out = sys.argv[1], sys.argv[2]
# LINKTYPE_* (as written in the files) -> selector index in fuzz_parse.c
SEL = {1: 0, 101: 1, 12: 2, 0: 3, 108: 4, 113: 5, 276: 6, 228: 7, 229: 8,
       239: 9, 14: 10}

def classic(b):
    magic = b[:4]
    if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1'):
        e = '<'
    elif magic in (b'\xa1\xb2\xc3\xd4', b'\xa1\xb2\x3c\x4d'):
        e = '>'
    else:
        return
    link = struct.unpack(e + 'I', b[20:24])[0] & 0x0fffffff
    off = 24
    while off + 16 <= len(b):
        _, _, incl, orig = struct.unpack(e + 'IIII', b[off:off + 16])
        off += 16
        if incl > len(b) - off or incl > 262144:
            return
        yield link, b[off:off + incl], orig
        off += incl

def pcapng(b):
    off, e, links = 0, '<', []
    while off + 12 <= len(b):
        btype = struct.unpack(e + 'I', b[off:off + 4])[0]
        if btype == 0x0A0D0D0A:
            e = '<' if b[off + 8:off + 12] == b'\x4d\x3c\x2b\x1a' else '>'
            links = []
        blen = struct.unpack(e + 'I', b[off + 4:off + 8])[0]
        if blen < 12 or off + blen > len(b):
            return
        body = b[off + 8:off + blen - 4]
        if btype == 1:
            links.append(struct.unpack(e + 'H', body[:2])[0])
        elif btype == 6 and len(body) >= 20:
            ifc, _, _, cap, orig = struct.unpack(e + 'IIIII', body[:20])
            if ifc < len(links):
                yield links[ifc], body[20:20 + cap], orig
        elif btype == 3 and links and len(body) >= 4:
            orig = struct.unpack(e + 'I', body[:4])[0]
            yield links[0], body[4:4 + orig], orig
        off += blen

def frames(path):
    b = open(path, 'rb').read()
    if b[:2] == b'\x1f\x8b':
        b = gzip.decompress(b)
    if b[:4] == b'\x0a\x0d\x0d\x0a':
        yield from pcapng(b)
    else:
        yield from classic(b)

def write(data):
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(out, name), 'wb') as f:
        f.write(data)

n = 0
for fn in sorted(os.listdir(pcaps)):
    if not fn.endswith(('.pcap', '.pcapng', '.cap', '.gz')):
        continue
    fr = [(l, d[:65535], o) for l, d, o in frames(os.path.join(pcaps, fn))
          if l in SEL]
    for i, (link, data, orig) in enumerate(fr):
        if i < 40 or i % 25 == 0:
            write(bytes([SEL[link] | (0x40 if orig > len(data) else 0)])
                  + data)
            n += 1
    for start in range(0, len(fr), 100):
        win = fr[start:start + 8]
        if len(win) < 2 or start // 100 >= 20:
            continue
        body = b''.join(struct.pack('>H', len(d)) + d for _, d, _ in win)
        write(bytes([0x80 | SEL[win[0][0]]]) + body)
        n += 1
print(f'{n} seeds in {out}')
PY
