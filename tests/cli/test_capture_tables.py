#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_capture_tables.py CTRACK PCAPS_DIR CAPTURES_DIR - exact tables for
real captures.

Three sets of cases:
  - ../shared/pcaps (CASES below): `ctrack read` on one capture of the
    corpus, the whole listing compared line by line with a table derived by
    hand from the packets as tshark 4.0 decodes them and from nf_conntrack's
    rules; each case reports SKIP where ../shared/pcaps is absent;
  - the project's crafted captures (tests/captures/craft.py's TABLES): the
    listing, counters and events nf_conntrack's rules give for the frames
    craft.py built, packets and bytes counted by the builder, the rule for
    each state and timeout written there;
  - the kernel's own recordings (tests/captures/kernel/NAME): ctrack's table
    and events against the table and events the router's nf_conntrack had
    when the traffic was recorded, compared as the kernel oracle compares
    them (tests/kernel/kd_compare.py): every kernel entry reproduced, no
    extra one, every event sequence equal.

For the shared cases:  The
derivation is written next to each case: which packets count in which
direction (bytes are the IP lengths, `tshark -T fields -e ip.len`), which
packets the kernel would refuse and why, the final state and the seconds
left at the last packet's timestamp.  Where a table alone would say little
(all entries expired, all packets invalid) the case also pins counters from
--stats or the event sequence.

Variety, as issue 2 asks: stacked VLAN tags, VLAN ids as zones, Linux SLL2,
SLL with nanosecond timestamps, multi-interface pcapng, IPv6 extension
headers, ICMP errors, overlapping IPv4 fragments, SCTP, and a capture cut
inside TCP headers.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

CT, PCAPS = sys.argv[1], sys.argv[2]
CAPTURES = sys.argv[3] if len(sys.argv) > 3 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "captures")
ROOT = os.path.dirname(os.path.abspath(CAPTURES))
sys.path.insert(0, CAPTURES)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(CAPTURES)), "kernel"))
import craft  # noqa: E402
import kd_compare  # noqa: E402
import kd_run  # noqa: E402

CASES = []


def case(name, capture, args, table, stats=(), events=None):
    CASES.append((name, capture, args, table, stats, events))


# --- zeek__vlan-qinqinq.pcap: three stacked 802.1Q tags (30/20/10) around one
# HTTP connection, 14 frames (tshark -e vlan.id: "30,20,10" on every frame).
# Client 141.142.228.5:59856 sent frames 1,3,4,10,11,12,14: ip.len
# 64+52+188+52+52+52+52 = 512.  Server sent 2,5,6,7,8,9,13: 60+52+3*1500+715+52
# = 5379.  Handshake -> ESTABLISHED, ASSURED on the client's ACK (frame 3).
# Client FIN (12) -> FIN_WAIT; server FIN+ACK (13) -> LAST_ACK; client's last
# ACK (14) -> TIME_WAIT, 120 s from the last packet itself: 120 left.
case("stacked VLAN tags are peeled (QinQinQ)", "zeek__vlan-qinqinq.pcap", [],
     ["tcp      6 120 TIME_WAIT src=141.142.228.5 dst=192.150.187.43 sport=59856 "
      "dport=80 packets=7 bytes=512 src=192.150.187.43 dst=141.142.228.5 sport=80 "
      "dport=59856 packets=7 bytes=5379 [ASSURED] mark=0 use=1"])

# --- zeek__vlan-collisions.pcap: the same connection three times, untagged,
# in VLAN 42 and in QinQ 10/20 (outermost 10).  With --zone-by vlan they are
# three connections in zones 0, 42, 10, each exactly like the case above
# (7/512 and 7/5379).  Listed by first packet: untagged SYN at .869344, VLAN 42
# at .919344, QinQ at .969344.  Last packets: untagged .080972, 42 .130972,
# 10/20 .180972 (the last frame): 119, 119 and 120 s left in TIME_WAIT.
_coll = ("src=141.142.228.5 dst=192.150.187.43 sport=59856 dport=80 packets=7 "
         "bytes=512 src=192.150.187.43 dst=141.142.228.5 sport=80 dport=59856 "
         "packets=7 bytes=5379 [ASSURED] mark=0 ")
case("VLAN ids become zones (--zone-by vlan)", "zeek__vlan-collisions.pcap",
     ["--zone-by", "vlan"],
     ["tcp      6 119 TIME_WAIT " + _coll + "use=1",
      "tcp      6 119 TIME_WAIT " + _coll + "zone=42 use=1",
      "tcp      6 120 TIME_WAIT " + _coll + "zone=10 use=1"])

# --- zeek__linux_dlt_sll2.pcap (LINKTYPE_LINUX_SLL2): an ICMP echo and reply
# (192.0.2.1 to itself, id 8, ip.len 84) at 1660534249.87, an ICMPv6 echo and
# reply (fe80::8c36:6ff:fe44:acaf to itself, id 9, 40+64 = 104 bytes) at
# 1660534264.09, then ARP/RARP 1529 s later.  ICMP entries live 30 s after
# the reply, so both are gone when the capture ends: the table is empty, and
# the events show each entry created, replied to and destroyed 30 s after
# its reply (ICMP entries are never ASSURED).
case("Linux cooked capture v2, ICMP and ICMPv6 echo", "zeek__linux_dlt_sll2.pcap",
     ["--events", "--stats"], [],
     stats=["insert=2", "expired=2", "entries=0", "untracked=2"],
     events=[
         "[1660534249.872259]\t    [NEW] icmp     1 30 src=192.0.2.1 dst=192.0.2.1 type=8 code=0 id=8 [UNREPLIED] src=192.0.2.1 dst=192.0.2.1 type=0 code=0 id=8",
         "[1660534249.872288]\t [UPDATE] icmp     1 30 src=192.0.2.1 dst=192.0.2.1 type=8 code=0 id=8 src=192.0.2.1 dst=192.0.2.1 type=0 code=0 id=8",
         "[1660534264.088564]\t    [NEW] icmpv6   58 30 src=fe80::8c36:6ff:fe44:acaf dst=fe80::8c36:6ff:fe44:acaf type=128 code=0 id=9 [UNREPLIED] src=fe80::8c36:6ff:fe44:acaf dst=fe80::8c36:6ff:fe44:acaf type=129 code=0 id=9",
         "[1660534264.088594]\t [UPDATE] icmpv6   58 30 src=fe80::8c36:6ff:fe44:acaf dst=fe80::8c36:6ff:fe44:acaf type=128 code=0 id=9 src=fe80::8c36:6ff:fe44:acaf dst=fe80::8c36:6ff:fe44:acaf type=129 code=0 id=9",
         "[1660534279.872288]\t[DESTROY] icmp     1 src=192.0.2.1 dst=192.0.2.1 type=8 code=0 id=8 packets=1 bytes=84 src=192.0.2.1 dst=192.0.2.1 type=0 code=0 id=8 packets=1 bytes=84",
         "[1660534294.088594]\t[DESTROY] icmpv6   58 src=fe80::8c36:6ff:fe44:acaf dst=fe80::8c36:6ff:fe44:acaf type=128 code=0 id=9 packets=1 bytes=104 src=fe80::8c36:6ff:fe44:acaf dst=fe80::8c36:6ff:fe44:acaf type=129 code=0 id=9 packets=1 bytes=104",
     ])

# --- tcpdump__tcp-handshake-nano.pcap: SLL v1, nanosecond timestamps, a bare
# handshake (SYN 60, SYN/ACK 60, ACK 52 bytes).  The client's ACK in SYN_RECV
# makes it ESTABLISHED and ASSURED: 432000 s from the last packet.
case("SLL v1 with nanosecond timestamps", "tcpdump__tcp-handshake-nano.pcap", [],
     ["tcp      6 432000 ESTABLISHED src=131.155.215.69 dst=137.116.81.94 "
      "sport=46656 dport=80 packets=2 bytes=112 src=137.116.81.94 "
      "dst=131.155.215.69 sport=80 dport=46656 packets=1 bytes=60 [ASSURED] "
      "mark=0 use=1"])

# --- zeek__pcapng-multi-interface.pcapng: two interfaces, six DNS packets.
# tshark -o ip.check_checksum:TRUE -o udp.check_checksum:TRUE shows the
# queries were captured on the sending host with checksum offload: frame 1
# has a bad UDP checksum, frames 3 and 5 bad IPv4 header checksums (the
# kernel drops those in ip_rcv; conntrack never sees them).  So frame 2 (the
# answer to frame 1) creates an entry from 1.1.1.1's side at .514 - which
# expires 30 s later, long before frames 3-6 come 348 s later - and frames
# 4 and 6 (answers, 152 and 168 bytes) create two UNREPLIED entries at
# .126460 and .140942.  At the last packet (.140942): 29 and 30 s left.
case("multi-interface pcapng, offloaded checksums refused",
     "zeek__pcapng-multi-interface.pcapng", ["--stats"],
     ["udp      17 29 src=1.1.1.1 dst=10.0.0.4 sport=53 dport=56351 packets=1 "
      "bytes=152 [UNREPLIED] src=10.0.0.4 dst=1.1.1.1 sport=56351 dport=53 "
      "packets=0 bytes=0 mark=0 use=1",
      "udp      17 30 src=1.1.1.1 dst=10.0.0.4 sport=53 dport=56352 packets=1 "
      "bytes=168 [UNREPLIED] src=10.0.0.4 dst=1.1.1.1 sport=56352 dport=53 "
      "packets=0 bytes=0 mark=0 use=1"],
     stats=["invalid=3", "insert=3", "expired=1",
            "ip_bad_csum=2", "l4_bad_csum=1"])

# --- tcpdump__ipv6-routing-header.pcap: ICMPv6 echo requests and UDP behind
# a type-0 routing header.  Senders compute the checksum over the FINAL
# destination (RFC 8200 8.1; tshark, which does the same, says "correct"),
# but nf_conntrack's nf_ip6_checksum() uses the destination in the IPv6
# header, the first hop - so with checksum checking on (the kernel default)
# all four are INVALID and the table is empty.  The kernel counts the two
# ICMPv6 ones under `error` (its ICMP error path) and the two UDP ones
# under `invalid`.
case("IPv6 routing header: checksum over the header's destination",
     "tcpdump__ipv6-routing-header.pcap", ["--stats"], [],
     stats=["invalid=2", "error=2", "insert=0", "l4_bad_csum=4"])

# --- tcpdump__afs.pcap: 25 ICMP port unreachables (tshark -Y icmp), each
# quoting a UDP datagram that the capture showed just before (e.g. frame 28
# 131.151.1.59:1792 -> 131.151.32.21:7003, frame 29 the error from .21).  The
# quoted flows are tracked and the error's outer destination is the quoted
# source, so all 25 are RELATED; none is an `error`.  149 IPv4 fragments
# belong to 51 datagrams reassembled before tracking.
case("ICMP errors are RELATED to the flow they quote", "tcpdump__afs.pcap",
     ["--stats", "--no-table"], None,
     stats=["related=25", "error=0", "reassembled=51"])

# --- zeek__fragmented-4.pcap: frame 1 a SYN 10.0.0.1:80 -> 127.0.0.1:7790
# (40 bytes); frames 2-5 four fragments of one datagram (id 0) at offsets 0,
# 48, 72, 24 with lengths 24, 24, 17, 48 bytes of payload: the piece at 24..71
# overlaps the one at 48..71, and Linux discards IPv4 datagrams with
# overlapping fragments (since 4.19), so conntrack never sees it; frame 6
# has FIN without ACK, which tcp_error() refuses (invalid flag combination).
# All at the same timestamp: one SYN_SENT entry with 120 s left.
case("overlapping IPv4 fragments are dropped, like Linux", "zeek__fragmented-4.pcap",
     ["--stats"],
     ["tcp      6 120 SYN_SENT src=10.0.0.1 dst=127.0.0.1 sport=80 dport=7790 "
      "packets=1 bytes=40 [UNREPLIED] src=127.0.0.1 dst=10.0.0.1 sport=7790 "
      "dport=80 packets=0 bytes=0 mark=0 use=1"],
     stats=["tcp_bad_flags=1", "fragments=4", "reassembled=0"])

# --- zeek__sctp.pcap: one association, INIT / INIT ACK / COOKIE ECHO /
# COOKIE ACK then DATA and SACK chunks only (tshark -e sctp.chunk_type), 74
# packets with good CRC32c.  192.168.170.8 sent 37 packets, 33256 bytes;
# .56 sent 37, 33524 bytes.  COOKIE ACK -> ESTABLISHED and ASSURED; no
# SHUTDOWN follows, and the last packet refreshes the 210 s timeout.
case("SCTP association", "zeek__sctp.pcap", [],
     ["sctp     132 210 ESTABLISHED src=192.168.170.8 dst=192.168.170.56 sport=7 "
      "dport=7 packets=37 bytes=33256 src=192.168.170.56 dst=192.168.170.8 "
      "sport=7 dport=7 packets=37 bytes=33524 [ASSURED] mark=0 use=1"])

# --- zeek__truncated-header.pcap: snaplen 68, SMTP.  Frame 1, the SYN, has 40
# bytes of TCP header but only 34 were captured (tshark: cap_len 68 = 14 + 20 +
# 34): its options cannot be read, so ctrack calls it truncated.  Frame 2,
# the SYN/ACK, then has no entry, and a SYN/ACK cannot start one (invalid in
# NONE).  Frame 3, the client's ACK, is picked up mid-stream (tcp_loose=1):
# ESTABLISHED.  Counting the rest: client frames 3,5,6,9,12,15,18,19,23:
# 40+40+64+98+74+46+40+46+40 = 488; server 4,7,8,10,11,13,14,16,17,20,21,22,24:
# 124+40+244+40+86+40+119+40+63+40+81+40+40 = 997.  Server FIN (22) ->
# FIN_WAIT, client FIN (23) -> LAST_ACK, server ACK (24) -> TIME_WAIT: 120.
case("capture cut inside TCP headers", "zeek__truncated-header.pcap", ["--stats"],
     ["tcp      6 120 TIME_WAIT src=201.186.157.67 dst=128.3.26.249 sport=60827 "
      "dport=25 packets=9 bytes=488 src=128.3.26.249 dst=201.186.157.67 sport=25 "
      "dport=60827 packets=13 bytes=997 [ASSURED] mark=0 use=1"],
     stats=["l4_truncated=1", "tcp_invalid_state=1", "invalid=2"])


def run(path, args):
    p = subprocess.run([CT, "read"] + args + [path], capture_output=True,
                       text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def check_listing(path, args, table, stats, events):
    """Problems of `ctrack read ARGS PATH` against a table, counters, events."""
    rc, out, err = run(path, args)
    lines = out.splitlines()
    ev_lines = [l for l in lines if l.startswith("[")]
    stat_lines = [l for l in lines if l.startswith(("cpu=", "entries=",
                                                    "invalid_by_reason"))]
    tab_lines = [l for l in lines if l not in ev_lines and l not in stat_lines]
    problems = []
    if rc != 0:
        problems.append("exit %d: %s" % (rc, err.strip()))
    if table is not None and tab_lines != table:
        problems.append("table differs:\n  want %r\n  got  %r" % (table, tab_lines))
    stat_text = " ".join(stat_lines)
    for s in stats:
        if (" " + s + " ") not in (" " + stat_text + " ").replace(":", ": "):
            problems.append("stats lack %r in %r" % (s, stat_text))
    if events is not None and ev_lines != events:
        problems.append("events differ:\n  want %r\n  got  %r" % (events, ev_lines))
    return problems


def check_recording(d):
    """ctrack on a kernel recording against the kernel's table and events."""
    tmp = tempfile.mkdtemp(prefix="ctrack-rec-")
    try:
        for f in os.listdir(d):
            shutil.copy(os.path.join(d, f), tmp)
        res = kd_run.KernelResult(os.path.basename(d), tmp)
        with open(os.path.join(tmp, "run.json")) as f:
            rj = json.load(f)
        res.t_dump, res.nft = rj["t_dump"], rj["nft"]
        res.capture_stats, res.event_stats = rj["capture"], rj["events"]
        pk = kd_run.load_kernel_side(res)
        problems = list(res.problems)
        problems += kd_compare.check_counters(res, pk)[0]
        table, events, err = kd_compare.run_ctrack(CT, res)
        if err:
            return problems + [err], None
        diff = kd_compare.compare(res, table, events, kd_compare.first_packets(pk))
        if not diff.ok():
            problems += [diff.figures()] + diff.lines[:8]
        return problems, diff
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def result(self, problems, name, skip=None):
        self.n += 1
        if skip:
            print("ok %d - %s # SKIP %s" % (self.n, name, skip))
        elif problems:
            self.failed += 1
            print("not ok %d - %s" % (self.n, name))
            for p in problems:
                for l in str(p).splitlines():
                    print("# " + l)
        else:
            print("ok %d - %s" % (self.n, name))


def main():
    tap = Tap()
    shared = os.path.isdir(PCAPS)
    for name, capture, args, table, stats, events in CASES:
        if not shared:
            tap.result([], "%s (%s)" % (name, capture),
                       skip="no ../shared/pcaps (%s)" % PCAPS)
            continue
        tap.result(check_listing(os.path.join(PCAPS, capture), args, table, stats, events),
                   "%s (%s)" % (name, capture))
    craft.build()
    for capture, c in sorted(craft.TABLES.items()):
        tap.result(check_listing(os.path.join(CAPTURES, "crafted", capture), c["args"],
                                 c["table"], c.get("stats", ()), c.get("events")),
                   "%s (crafted/%s)" % (c["why"], capture))
    kdir = os.path.join(CAPTURES, "kernel")
    entries = 0
    for rec in sorted(os.listdir(kdir)):
        problems, diff = check_recording(os.path.join(kdir, rec))
        entries += diff.kernel_entries if diff else 0
        tap.result(problems, "the kernel's table and events (kernel/%s)%s" %
                   (rec, (": " + diff.figures()) if diff and not problems else ""))
    # the comparison must have had something to compare
    tap.result([] if entries >= 30 else ["only %d kernel entries compared" % entries],
               "%d kernel entries compared over the recordings" % entries)
    print("1..%d" % tap.n)
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
