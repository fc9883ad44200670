#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""craft_captures.py OUT_DIR - write the damaged and odd capture files that
tests/cli/test_bad_input.sh feeds to `ctrack read`.

Every file starts (where it has packets at all) with the same good packet:
one UDP datagram 10.0.0.1:1234 -> 10.0.0.2:53 in Ethernet, UDP checksum 0
("none"), so whatever follows, the listing must show exactly that flow.
What comes after it is the damage the file's name describes.  The files
are built byte by byte from the pcap and pcapng formats (the libpcap
savefile format and draft-ietf-opsawg-pcapng), not captured.
"""
import gzip
import os
import struct
import sys


def ip4_csum(hdr):
    s = 0
    for i in range(0, len(hdr), 2):
        s += (hdr[i] << 8) | hdr[i + 1]
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff


def udp_frame(src=(10, 0, 0, 1), dst=(10, 0, 0, 2), sport=1234, dport=53, payload=b'hello'):
    udp = struct.pack('>HHHH', sport, dport, 8 + len(payload), 0) + payload
    ip = bytearray(struct.pack('>BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                               bytes(src), bytes(dst)))
    struct.pack_into('>H', ip, 10, ip4_csum(ip))
    eth = b'\x02\x00\x00\x00\x00\x02' + b'\x02\x00\x00\x00\x00\x01' + b'\x08\x00'
    return eth + bytes(ip) + udp


GOOD = udp_frame()


def pcap_header(snaplen=65535, linktype=1, magic=0xa1b2c3d4, major=2, minor=4):
    return struct.pack('<IHHiIII', magic, major, minor, 0, 0, snaplen, linktype)


def pcap_record(data, ts=1000, frac=0, caplen=None, wirelen=None):
    caplen = len(data) if caplen is None else caplen
    wirelen = len(data) if wirelen is None else wirelen
    return struct.pack('<IIII', ts, frac, caplen, wirelen) + data


def pad4(b):
    return b + b'\0' * ((4 - len(b) % 4) % 4)


def ng_block(btype, body, length=None, trailer=None):
    n = 12 + len(body) if length is None else length
    t = n if trailer is None else trailer
    return struct.pack('<II', btype, n) + body + struct.pack('<I', t)


def ng_shb(bom=0x1a2b3c4d):
    return ng_block(0x0a0d0d0a, struct.pack('<IHHq', bom, 1, 0, -1))


def ng_idb(linktype=1, options=b''):
    return ng_block(1, struct.pack('<HHI', linktype, 0, 0) + options)


def ng_opt(code, value):
    return struct.pack('<HH', code, len(value)) + pad4(value)


def ng_epb(data, iface=0, ts=1000 * 1000000, caplen=None):
    caplen = len(data) if caplen is None else caplen
    body = struct.pack('<IIIII', iface, ts >> 32, ts & 0xffffffff, caplen, len(data)) + pad4(data)
    return ng_block(6, body)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    files = {}
    good = pcap_record(GOOD)

    # classic pcap
    files['header-only.pcap'] = pcap_header()
    files['short-global-header.pcap'] = pcap_header()[:20]
    files['bad-version.pcap'] = pcap_header(major=9, minor=9) + good
    files['huge-caplen.pcap'] = pcap_header() + good + struct.pack('<IIII', 1001, 0, 0xfffffff0, 60)
    files['caplen-over-snaplen.pcap'] = (pcap_header(snaplen=64) + good +
                                         pcap_record(udp_frame(payload=b'x' * 200), ts=1001))
    # a record over the snapshot length between good ones: libpcap hands
    # out its first 64 bytes and skips the rest (the mapped reader must
    # stop handing out frames in place from there: the offsets move)
    files['caplen-over-snaplen-mid.pcap'] = (
        pcap_header(snaplen=64) + good +
        pcap_record(udp_frame(payload=b'x' * 200), ts=1001) +
        b''.join(pcap_record(udp_frame(sport=3000 + i, payload=b'y' * 10), ts=1002 + i)
                 for i in range(5)))
    # a whole big-endian capture (lengths byte-swapped for the reader)
    files['big-endian-good.pcap'] = (
        struct.pack('>IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1) +
        b''.join(struct.pack('>IIII', 1000 + i, 0, len(f), len(f)) + f
                 for i, f in enumerate([GOOD] + [udp_frame(sport=4000 + i) for i in range(4)])))
    files['caplen-zero.pcap'] = pcap_header() + good + pcap_record(b'', ts=1001, wirelen=60)
    files['wirelen-below-caplen.pcap'] = pcap_header() + good + pcap_record(GOOD, ts=1001, wirelen=10)
    files['snaplen-zero.pcap'] = pcap_header(snaplen=0) + good
    files['cut-inside-record-header.pcap'] = pcap_header() + good + good[:9]
    files['cut-inside-packet.pcap'] = pcap_header() + good + good[:16 + 20]
    files['unknown-linktype.pcap'] = pcap_header(linktype=147) + good
    files['ts-extremes.pcap'] = (pcap_header() + good +
                                 pcap_record(udp_frame(sport=1), ts=0xffffffff, frac=999999999) +
                                 pcap_record(udp_frame(sport=2), ts=0, frac=0))
    # timestamp fields with their top bit set (libpcap reads them as
    # signed 32-bit numbers), in a microsecond and a nanosecond file
    files['ts-high-bit.pcap'] = (pcap_header() + good +
                                 pcap_record(udp_frame(sport=5), ts=0x80000001, frac=0x80000001) +
                                 pcap_record(udp_frame(sport=6), ts=2000, frac=0xfffffff0))
    files['ts-high-bit-nano.pcap'] = (pcap_header(magic=0xa1b23c4d) + good +
                                      pcap_record(udp_frame(sport=5), ts=0x80000001, frac=0x80000001) +
                                      pcap_record(udp_frame(sport=6), ts=2000, frac=999999999))
    # an older format version (libpcap may swap its record lengths)
    files['version-2-3.pcap'] = pcap_header(minor=3) + good + pcap_record(udp_frame(sport=7), ts=1001)
    # thousands of good records (over 64 KiB of them), then one longer
    # than libpcap takes, then more: the mapped reader walks the good ones
    # and hands libpcap the rest, from the right offset
    many = b''.join(pcap_record(udp_frame(sport=10000 + i % 5000, payload=b'z' * 20), ts=1000 + i // 100)
                    for i in range(3000))
    files['many-then-huge.pcap'] = (pcap_header() + many +
                                    struct.pack('<IIII', 1100, 0, 300000, 300000) + b'\0' * 64)
    files['many-then-over-snaplen.pcap'] = (
        pcap_header(snaplen=80) + many +
        pcap_record(udp_frame(payload=b'x' * 200), ts=1100) +
        b''.join(pcap_record(udp_frame(sport=3000 + i, payload=b'y' * 10), ts=1101 + i)
                 for i in range(5)))
    # Linux cooked captures (SLL, `tcpdump -i any`): in our byte order the
    # mapped reader hands their frames out in place; in the other order
    # libpcap may rewrite a SocketCAN id behind the header, so they go
    # through libpcap (a CAN frame among IPv4 ones in both)
    ip = [udp_frame(sport=7000 + i)[14:] for i in range(4)]
    sll = [struct.pack('>HHH8sH', 0, 1, 6, b'\x02' * 6 + b'\0\0', 0x0800) + f for f in ip]
    sll.append(struct.pack('>HHH8sH', 1, 280, 0, b'\0' * 8, 0x000c) + struct.pack('<I', 0x123) + b'\x08' + b'\0' * 11)
    files['sll-native.pcap'] = pcap_header(linktype=113) + b''.join(
        pcap_record(f, ts=1000 + i) for i, f in enumerate(sll))
    files['sll-big-endian.pcap'] = (struct.pack('>IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 113) +
                                    b''.join(struct.pack('>IIII', 1000 + i, 0, len(f), len(f)) + f
                                             for i, f in enumerate(sll)))
    files['big-endian-cut.pcap'] = (struct.pack('>IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1) +
                                    struct.pack('>IIII', 1000, 0, len(GOOD), len(GOOD)) + GOOD +
                                    struct.pack('>IIII', 1001, 0, 4000000, 4000000) + b'\0' * 100)

    # pcapng
    ng_good = ng_shb() + ng_idb() + ng_epb(GOOD)
    files['ng-shb-only.pcapng'] = ng_shb()
    files['ng-block-len-small.pcapng'] = ng_good + struct.pack('<II', 6, 8) + b'\0' * 8
    files['ng-block-len-unaligned.pcapng'] = ng_good + struct.pack('<II', 6, 13) + b'\0' * 16
    files['ng-block-len-huge.pcapng'] = ng_good + struct.pack('<II', 6, 0x7ffffffc) + b'\0' * 64
    files['ng-trailer-mismatch.pcapng'] = ng_good + ng_block(6, ng_epb(GOOD)[8:-4], trailer=12)
    files['ng-epb-caplen-over-block.pcapng'] = ng_good + ng_epb(GOOD, caplen=5000)
    files['ng-undefined-interface.pcapng'] = ng_good + ng_epb(GOOD, iface=7)
    files['ng-bad-byte-order.pcapng'] = ng_shb(bom=0x11223344) + ng_idb() + ng_epb(GOOD)
    files['ng-cut-inside-block.pcapng'] = ng_good + ng_epb(GOOD)[:30]
    files['ng-tsoffset-extreme.pcapng'] = (ng_shb() +
                                           ng_idb(options=ng_opt(14, struct.pack('<q', 2**63 - 1)) +
                                                  ng_opt(0, b'')) +
                                           ng_epb(GOOD, ts=2**64 - 1))
    files['ng-tsoffset-negative.pcapng'] = (ng_shb() +
                                            ng_idb(options=ng_opt(14, struct.pack('<q', -2**63)) +
                                                   ng_opt(0, b'')) +
                                            ng_epb(GOOD))
    files['ng-tsresol-absurd.pcapng'] = (ng_shb() +
                                         ng_idb(options=ng_opt(9, b'\x7f') + ng_opt(0, b'')) +
                                         ng_idb(options=ng_opt(9, b'\xff') + ng_opt(0, b'')) +
                                         ng_epb(GOOD, ts=2**64 - 1) + ng_epb(GOOD, iface=1))
    files['ng-option-overruns-block.pcapng'] = (ng_shb() +
                                                ng_idb(options=struct.pack('<HH', 9, 0xfff0)) +
                                                ng_epb(GOOD))
    files['ng-simple-packet-no-iface.pcapng'] = ng_shb() + ng_block(3, struct.pack('<I', 60) + pad4(GOOD))
    # cut inside the 8-byte header of a block, and inside a second section
    # header before its byte-order magic is whole (a mapped file is read
    # in place: the same messages as from a pipe)
    files['ng-cut-inside-block-header.pcapng'] = ng_good + ng_epb(GOOD)[:5]
    files['ng-cut-inside-shb.pcapng'] = ng_good + ng_shb()[:10]
    # a big-endian section after a little-endian one, packets in both
    be_body = struct.pack('>IHHq', 0x1a2b3c4d, 1, 0, -1)
    be = (struct.pack('>II', 0x0a0d0d0a, 12 + len(be_body)) + be_body +
          struct.pack('>I', 12 + len(be_body)))
    idb_body = struct.pack('>HHI', 1, 0, 0)
    be += struct.pack('>II', 1, 12 + len(idb_body)) + idb_body + struct.pack('>I', 12 + len(idb_body))
    for i in range(3):
        f = udp_frame(sport=6000 + i)
        body = struct.pack('>IIIII', 0, 0, 2000000 + i, len(f), len(f)) + pad4(f)
        be += struct.pack('>II', 6, 12 + len(body)) + body + struct.pack('>I', 12 + len(body))
    files['ng-two-sections-le-be.pcapng'] = ng_good + be
    # thousands of packets, then a block cut short
    files['ng-many-then-cut.pcapng'] = (ng_shb() + ng_idb() +
                                        b''.join(ng_epb(udp_frame(sport=10000 + i % 5000), ts=(1000 + i // 100) * 1000000)
                                                 for i in range(3000)) + ng_epb(GOOD)[:40])

    # gzip
    # the whole capture but not the gzip trailer (CRC and length): the
    # records end cleanly, only zlib can tell the file was cut
    files['gz-cut.pcap.gz'] = gzip.compress(pcap_header() + good * 200)[:-8]
    many = pcap_header() + good + b''.join(pcap_record(udp_frame(sport=2000 + i), ts=1001 + i)
                                           for i in range(20))
    files['gz-cut-mid.pcap.gz'] = gzip.compress(many)[:-30]
    files['gz-garbage.pcap.gz'] = b'\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03' + b'\xff' * 64
    files['gz-of-text.pcap.gz'] = gzip.compress(b'this is text, not a capture\n' * 4)
    files['gz-good.pcap.gz'] = gzip.compress(pcap_header() + good)

    for name, data in files.items():
        with open(os.path.join(out, name), 'wb') as f:
            f.write(data)
    # the good packet alone, for the pipe tests
    with open(os.path.join(out, 'good.pcap'), 'wb') as f:
        f.write(pcap_header() + good)
    with open(os.path.join(out, 'good-many.pcap'), 'wb') as f:
        f.write(pcap_header() + b''.join(pcap_record(udp_frame(sport=1000 + i), ts=1000 + i)
                                         for i in range(400)))


if __name__ == '__main__':
    main()
