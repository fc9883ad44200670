#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Offline tests of the kernel oracle's own parts (no root, no namespaces).

The live harness judges ctrack; these tests judge the harness: the conntrack
line parser, the checksum code, the tcpprep cache writer and the comparison
rules.  Expected values are derived independently (a published checksum
example, the conntrack-tools print layout, the tcpprep file format), never
copied from the harness's own output.  Prints TAP.
"""

import os
import struct
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import kd_compare  # noqa: E402
import kd_ctline  # noqa: E402
import kd_pcap  # noqa: E402
import kd_replay  # noqa: E402

TABLE_LINE = ("ipv4     2 tcp      6 431999 ESTABLISHED src=10.0.0.1 dst=10.0.1.2 sport=40000 "
              "dport=80 packets=4 bytes=220 src=10.0.1.2 dst=10.0.0.1 sport=80 dport=40000 "
              "packets=3 bytes=180 [ASSURED] mark=0 use=1")
EVENT_LINE = ("[1700000000.123456]\t    [NEW] ipv6     10 icmpv6   58 30 src=fd00::1 dst=fd00::2 "
              "type=128 code=0 id=7 [UNREPLIED] src=fd00::2 dst=fd00::1 type=129 code=0 id=7")


class FakeRes:
    def __init__(self, table, events, t_last=100.0, t_dump=100.5):
        self.name = "fake"
        self.table, self.events = table, events
        self.t_last, self.t_dump = t_last, t_dump


class TestConntrackLines(unittest.TestCase):
    def test_table_line_fields_are_parsed(self):
        r = kd_ctline.parse_line(TABLE_LINE)
        self.assertEqual((r["l3num"], r["protonum"], r["timeout"], r["state"]),
                         (2, 6, 431999, "ESTABLISHED"))
        self.assertEqual(r["orig"], (("src", "10.0.0.1"), ("dst", "10.0.1.2"),
                                     ("sport", "40000"), ("dport", "80")))
        self.assertEqual(r["counters"], [(4, 220), (3, 180)])
        self.assertEqual(r["flags"], ("ASSURED",))
        self.assertFalse(r["unreplied"])
        self.assertEqual(r["extra"], {"mark": "0", "use": "1"})

    def test_event_line_keeps_timestamp_and_icmp_id_in_the_tuple(self):
        r = kd_ctline.parse_line(EVENT_LINE)
        self.assertEqual(r["event"], "NEW")
        self.assertAlmostEqual(r["ts"], 1700000000.123456, places=6)
        self.assertTrue(r["unreplied"])
        self.assertIsNone(r["state"])
        self.assertEqual(dict(r["reply"])["type"], "129")
        self.assertEqual(dict(r["reply"])["id"], "7")

    def test_printing_a_parsed_line_gives_the_line_back(self):
        for line in (TABLE_LINE, EVENT_LINE):
            self.assertEqual(kd_ctline.fmt_record(kd_ctline.parse_line(line)), line)

    def test_trailer_lines_are_not_entries(self):
        recs, other = kd_ctline.parse_lines(
            TABLE_LINE + "\nconntrack v1.4.7 (conntrack-tools): 1 flow entries have been shown.\n")
        self.assertEqual(len(recs), 1)
        self.assertEqual(len(other), 1)


class TestChecksums(unittest.TestCase):
    # The IPv4 header example used to explain the Internet checksum
    # (RFC 1071 style worked example): its checksum is 0xb861.
    HDR = bytes.fromhex("450000730000400040110000c0a80001c0a800c7")

    def test_ipv4_header_checksum_matches_the_worked_example(self):
        fixed = kd_pcap.fix_checksums(self.HDR + b"\0" * (0x73 - 20))
        self.assertEqual(fixed[10:12], b"\xb8\x61")

    def test_udp_checksum_verifies_to_zero(self):
        ip = bytearray(bytes.fromhex("4500002000000000401100000a0000010a000002"))
        udp = struct.pack(">HHHH", 1234, 53, 12, 0xDEAD) + b"abcd"
        fixed = kd_pcap.fix_checksums(bytes(ip) + udp)
        # A correct checksum makes the one's-complement sum over pseudo-header
        # and segment come to 0xffff (RFC 768).
        seg = fixed[20:]
        pseudo = fixed[12:20] + struct.pack(">BBH", 0, 17, len(seg))
        data = pseudo + seg
        s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
        while s >> 16:
            s = (s & 0xFFFF) + (s >> 16)
        self.assertEqual(s, 0xFFFF)
        self.assertTrue(kd_pcap.checksum_ok(fixed))
        self.assertFalse(kd_pcap.checksum_ok(bytes(ip) + udp))


class TestTcpprepCache(unittest.TestCase):
    def test_cache_header_and_bits_follow_the_v04_format(self):
        path = "/tmp/kd-test-%d.cache" % os.getpid()
        try:
            kd_replay.write_cache(path, [0, 1, 1, 0, 1])
            data = open(path, "rb").read()
        finally:
            if os.path.exists(path):
                os.unlink(path)
        magic, ver, n, ppb, clen = struct.unpack(">8s4sQHH", data[:24])
        self.assertEqual((magic, ver[:2], n, ppb), (b"tcpprep\0", b"04", 5, 4))
        bits = data[24 + clen:]
        # Per packet: bit 2k+1 = send, bit 2k = primary (-i) interface.
        # packets 0..3 in byte 0: primary+send, send, send, primary+send
        self.assertEqual(bits[0], (0b11 << 0) | (0b10 << 2) | (0b10 << 4) | (0b11 << 6))
        self.assertEqual(bits[1], 0b10)


def rec(line):
    return kd_ctline.parse_line(line)


class TestComparison(unittest.TestCase):
    def test_identical_results_reproduce_every_entry(self):
        k = [rec(TABLE_LINE)]
        d = kd_compare.compare(FakeRes(k, []), [rec(TABLE_LINE)], [])
        self.assertEqual((d.kernel_entries, d.exact, d.extra), (1, 1, 0))
        self.assertTrue(d.ok())

    def test_timeout_allows_for_the_time_between_last_packet_and_dump(self):
        ct = rec(TABLE_LINE.replace("431999", "432009"))
        d = kd_compare.compare(FakeRes([rec(TABLE_LINE)], [], 100.0, 108.0), [ct], [])
        self.assertEqual(d.exact, 1)
        d = kd_compare.compare(FakeRes([rec(TABLE_LINE)], [], 100.0, 100.5), [ct], [])
        self.assertEqual(d.exact, 0)
        self.assertIn("timeout", d.lines[0])

    def test_a_different_state_is_a_field_mismatch(self):
        ct = rec(TABLE_LINE.replace("ESTABLISHED", "SYN_RECV"))
        d = kd_compare.compare(FakeRes([rec(TABLE_LINE)], []), [ct], [])
        self.assertEqual(d.field_mismatch, 1)
        self.assertIn("state", d.lines[0])

    def test_missing_and_extra_entries_are_counted(self):
        other = TABLE_LINE.replace("sport=40000", "sport=40001").replace("dport=40000",
                                                                         "dport=40001")
        d = kd_compare.compare(FakeRes([rec(TABLE_LINE)], []), [rec(other)], [])
        self.assertEqual((d.missing, d.extra), (1, 1))
        self.assertFalse(d.ok())

    def test_an_entry_expired_before_the_dump_is_not_extra(self):
        short = TABLE_LINE.replace("431999", "1")
        d = kd_compare.compare(FakeRes([], [], 100.0, 103.0), [rec(short)], [])
        self.assertEqual((d.extra, d.expired_by_dump), (0, 1))

    def test_event_sequences_must_agree_on_flags(self):
        ev = EVENT_LINE
        k = FakeRes([], [rec(ev)], 1700000000.2, 1700000000.5)
        d = kd_compare.compare(k, [], [rec(ev)])
        self.assertEqual((d.event_conns, d.event_matches), (1, 1))
        d = kd_compare.compare(k, [], [rec(ev.replace(" [UNREPLIED]", ""))])
        self.assertEqual(d.event_matches, 0)

    def test_a_late_trailing_destroy_is_end_of_capture_timing(self):
        new = rec(EVENT_LINE)
        gone = rec(EVENT_LINE.replace("[1700000000.123456]", "[1700000010.900000]")
                   .replace("    [NEW]", "[DESTROY]").replace(" 30 src", " src"))
        k = FakeRes([], [new, gone], 1700000010.0, 1700000011.0)
        d = kd_compare.compare(k, [], [rec(EVENT_LINE)])
        self.assertEqual(d.event_matches, 1)


def main():
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])
    tests = list(_flatten(suite))
    print("1..%d" % len(tests))
    failed = 0
    for i, t in enumerate(tests, 1):
        r = unittest.TestResult()
        t.run(r)
        name = t.id().split(".", 1)[1]
        if r.wasSuccessful():
            print("ok %d - %s" % (i, name))
        else:
            failed += 1
            print("not ok %d - %s" % (i, name))
            for _, tb in r.failures + r.errors:
                for line in tb.splitlines():
                    print("#   " + line)
    return 1 if failed else 0


def _flatten(s):
    for t in s:
        if isinstance(t, unittest.TestSuite):
            yield from _flatten(t)
        else:
            yield t


if __name__ == "__main__":
    sys.exit(main())
