#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_ipfix_nat.py CTRACK - the post-NAT fields of IPFIX records
(RFC 8158: postNATSourceIPv4Address 225 ... postNAPTDestinationTransport-
Port 228, postNAT*IPv6Address 281/282) against real collectors (TAP).

The test writes a capture as a NAT router's ingress holds it - each
client's packets as they arrive on the inside, each reply as it arrives
on the outside, addressed to the NAT address (source NAT) or coming from
the backend (destination NAT) - with source NAT, destination NAT, both on
one connection, and connections no rule maps, over IPv4 and IPv6, TCP
(refused, closed, open at the end), UDP and ICMP echo.  The reply tuples
are the test's own design (source NAT keeps a free port, destination NAT
goes to the rule's address and port).  Then:

 - `ctrack read --nat ...` lists (-L, with -e for the connections that
   ended) exactly the designed reply tuples, no connection missing or
   extra;
 - nfcapd (nfdump 1.7.1) receives `ctrack read --nat ... --ipfix` over
   UDP, and `nfdump -o fmt:%pr %sa %da %sp %dp %xsa %xda %xsp %xdp`
   shows, for every connection, exactly the translated reply tuple ctrack
   lists: xsa = the reply's destination, xda = its source, xsp/xdp its
   destination/source ports; 0.0.0.0 and 0 for connections without NAT.
   nfdump 1.7.1 decodes no IPv6 post-NAT address (its ipfix.c maps 225 to
   228 and no 281/282), so its IPv6 xlate addresses read 0.0.0.0 and
   only their ports are checked there; `nfdump -o json` shows the whole
   record (counters, times) as ctrack's JSON says, in biflows and in
   uniflows (the reply direction's post-NAT tuple is the original one
   inverted), and with --ipfix-mtu 512 (templates split in two messages);
 - python3-ipfix (TCP) decodes the IPv6 post-NAT addresses too: every
   record of a NATed connection carries all four post-NAT elements with
   the listing's values, no record of an un-NATed one carries any;
 - without --nat the template set is the four plain templates of before.
"""
import atexit
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_util as eu  # noqa: E402
import gen_captures as gc  # noqa: E402

CT = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="ctrack-ipfix-nat.")
STARTED = []


@atexit.register
def _cleanup():
    for p in STARTED:
        if p.poll() is None:
            p.kill()
            p.wait()
    shutil.rmtree(TMP, ignore_errors=True)


N4, N6 = "198.51.100.1", "fd00:99::1"          # the NAT's outside addresses
RULES = ["ip daddr 203.0.113.80 tcp dport 80 dnat to 10.2.0.5:8080",
         "ip daddr 203.0.113.53 udp dport 53 dnat to 10.2.0.6:5353",
         "ip saddr 10.1.0.0/16 snat to " + N4,
         "ip6 daddr fd00:4::80 tcp dport 80 dnat to [fd00:5::5]:8080",
         "ip6 saddr fd00:1::/64 snat to " + N6]
NAT_ARGS = [a for r in RULES for a in ("--nat", r)]

# ---- the capture: every connection with the reply tuple it must get ----

DESIGN = []      # (proto number, orig (src, dst, sport, dport), reply tuple, natted)
PACKETS = []


def add(kind, o, r, t, natted):
    """One connection: @o as the client sends it, @r its reply tuple (the
    reply packets' addresses and ports on the outside)."""
    (cs, ss, cp, sp), (rs, rd, rsp, rdp) = o, r
    if kind == "udp":
        PACKETS.extend([(t, gc.udp(cs, ss, cp, sp)), (t + 0.001, gc.udp(rs, rd, rsp, rdp, b"y" * 40))])
        proto = 17
    elif kind == "refused":
        PACKETS.extend([(t, gc.tcp(cs, ss, cp, sp, "S", seq=1000)),
                        (t + 0.001, gc.tcp(rs, rd, rsp, rdp, "RA", seq=0, ack=1001))])
        proto = 6
    elif kind in ("closed", "open"):
        c, s = 1000, 5000
        p = [(t, gc.tcp(cs, ss, cp, sp, "S", seq=c)),
             (t + 0.001, gc.tcp(rs, rd, rsp, rdp, "SA", seq=s, ack=c + 1)),
             (t + 0.002, gc.tcp(cs, ss, cp, sp, "A", seq=c + 1, ack=s + 1)),
             (t + 0.003, gc.tcp(cs, ss, cp, sp, "PA", seq=c + 1, ack=s + 1, payload=b"q" * 100)),
             (t + 0.004, gc.tcp(rs, rd, rsp, rdp, "PA", seq=s + 1, ack=c + 101,
                                payload=b"r" * 300))]
        if kind == "closed":
            p += [(t + 0.005, gc.tcp(cs, ss, cp, sp, "FA", seq=c + 101, ack=s + 301)),
                  (t + 0.006, gc.tcp(rs, rd, rsp, rdp, "FA", seq=s + 301, ack=c + 102)),
                  (t + 0.007, gc.tcp(cs, ss, cp, sp, "A", seq=c + 102, ack=s + 302))]
        PACKETS.extend(p)
        proto = 6
    else:   # echo: the ports are the id
        v6 = ":" in cs
        PACKETS.extend([(t, gc.echo(cs, ss, 128 if v6 else 8, cp)),
                        (t + 0.001, gc.echo(rs, rd, 129 if v6 else 0, rsp))])
        proto = 58 if v6 else 1
    DESIGN.append((proto, o, r, natted))


t = 1.0
for i in range(30):        # source NAT, UDP: the port kept (each is free)
    c, s = "10.1.0.%d" % (i + 1), "192.0.2.%d" % (1 + i % 5)
    add("udp", (c, s, 20000 + i, 53), (s, N4, 53, 20000 + i), t, True)
    t += 0.01
for i in range(10):        # source NAT, refused TCP (DESTROY at the RST)
    c = "10.1.1.%d" % (i + 1)
    add("refused", (c, "192.0.2.10", 21000 + i, 80), ("192.0.2.10", N4, 80, 21000 + i), t, True)
    t += 0.01
for i, kind in enumerate(("closed", "closed", "open")):   # source NAT, TCP sessions
    c = "10.1.3.%d" % (i + 1)
    add(kind, (c, "192.0.2.20", 22000 + i, 443), ("192.0.2.20", N4, 443, 22000 + i), t, True)
    t += 0.01
for i in range(5):         # source NAT, ICMP echo (the id kept)
    add("echo", ("10.1.2.%d" % (i + 1), "192.0.2.1", 700 + i, 0),
        ("192.0.2.1", N4, 700 + i, 0), t, True)
    t += 0.01
for i, kind in enumerate(("refused",) * 6 + ("closed", "open")):   # destination NAT, port change
    c = "10.3.0.%d" % (i + 1)
    add(kind, (c, "203.0.113.80", 30000 + i, 80), ("10.2.0.5", c, 8080, 30000 + i), t, True)
    t += 0.01
for i in range(10):        # both on one connection: dnat, then snat
    c = "10.1.9.%d" % (i + 1)
    add("udp", (c, "203.0.113.53", 31000 + i, 53), ("10.2.0.6", N4, 5353, 31000 + i), t, True)
    t += 0.01
for i in range(10):        # IPv4 no rule maps: the null binding, no post-NAT fields
    c = "10.7.0.%d" % (i + 1)
    add("udp", (c, "192.0.2.7", 32000 + i, 123), ("192.0.2.7", c, 123, 32000 + i), t, False)
    t += 0.01
for i in range(10):        # IPv6 source NAT, UDP
    c = "fd00:1::%x" % (i + 1)
    add("udp", (c, "fd00:2::2", 23000 + i, 53), ("fd00:2::2", N6, 53, 23000 + i), t, True)
    t += 0.01
for i, kind in enumerate(("refused", "refused", "closed", "open")):   # IPv6 destination NAT
    c = "fd00:3::%x" % (i + 1)
    add(kind, (c, "fd00:4::80", 33000 + i, 80), ("fd00:5::5", c, 8080, 33000 + i), t, True)
    t += 0.01
for i in range(3):         # IPv6 source NAT, ICMPv6 echo
    add("echo", ("fd00:1::1%x" % i, "fd00:2::2", 900 + i, 0), ("fd00:2::2", N6, 900 + i, 0),
        t, True)
    t += 0.01
for i in range(5):         # IPv6 without NAT
    c = "fd00:7::%x" % (i + 1)
    add("udp", (c, "fd00:2::2", 34000 + i, 123), ("fd00:2::2", c, 123, 34000 + i), t, False)
    t += 0.01

CAP = os.path.join(TMP, "nat.pcap")
gc.write_pcap(CAP, PACKETS)
N_CONN, N_NAT = len(DESIGN), sum(1 for d in DESIGN if d[3])
ICMP = (1, 58)


def tup(proto, o, r):
    """(proto, orig src, dst, sport, dport, reply src, dst, sport, dport):
    for ICMP the orig 'ports' are 0 and the id, the reply's 0 and the id."""
    return (proto,) + tuple(o) + tuple(r)


def want_design():
    c = Counter()
    for proto, o, r, _ in DESIGN:
        if proto in ICMP:
            o, r = (o[0], o[1], 0, o[2]), (r[0], r[1], 0, r[2])
        c[tup(proto, o, r)] += 1
    return c


# ---- ctrack's listing: the reply tuples the records must carry ----

PROTOS = {"tcp": 6, "udp": 17, "icmp": 1, "icmpv6": 58}


def parse_line(line):
    """One conntrack-format line (a table entry or an event) ->
    (proto, orig 4, reply 4); ICMP as (src, dst, 0, id)."""
    toks = line.replace("\t", " ").split()
    proto = next(PROTOS[x] for x in toks if x in PROTOS)
    kv = [x.split("=", 1) for x in toks if "=" in x]
    srcs = [v for k, v in kv if k == "src"]
    dsts = [v for k, v in kv if k == "dst"]
    if proto in ICMP:
        ids = [int(v) for k, v in kv if k == "id"]
        return proto, (srcs[0], dsts[0], 0, ids[0]), (srcs[1], dsts[1], 0, ids[1])
    sp = [int(v) for k, v in kv if k == "sport"]
    dp = [int(v) for k, v in kv if k == "dport"]
    return proto, (srcs[0], dsts[0], sp[0], dp[0]), (srcs[1], dsts[1], sp[1], dp[1])


def ctrack_listing():
    """Counter of tup() over the connections that ended (DESTROY events)
    and those listed at the end - each connection once."""
    r = subprocess.run([CT, "read", "-e", *NAT_ARGS, CAP], capture_output=True, text=True)
    c = Counter()
    for line in r.stdout.splitlines():
        if "[NEW]" in line or "[UPDATE]" in line or not line.strip():
            continue
        proto, o, rp = parse_line(line)
        c[tup(proto, o, rp)] += 1
    return r, c


r, LISTED = ctrack_listing()
eu.ok(r.returncode == 0 and LISTED == want_design() and sum(LISTED.values()) == N_CONN,
      "ctrack read --nat lists the %d connections with the designed reply tuples (%d NATed)"
      % (N_CONN, N_NAT), "rc=%d %s\n%s" % (r.returncode, r.stderr, eu.diff(want_design(), LISTED)))


def natted(proto, o, rp):
    """A connection whose reply is not the inverted original (what the
    listing shows; CT_ST_SRC_NAT/DST_NAT in the library); ICMP's
    tuples are (src, dst, 0, id) both ways."""
    if proto in ICMP:
        return (rp[0], rp[1], rp[3]) != (o[1], o[0], o[3])
    return (rp[0], rp[1], rp[2], rp[3]) != (o[1], o[0], o[3], o[2])


# ---- nfcapd over UDP ----

def run_export(args, collector):
    mf = os.path.join(TMP, "export.prom")
    if os.path.exists(mf):
        os.unlink(mf)
    r = subprocess.run([CT, "read", "--no-table", "--ipfix", collector, "--metrics-file", mf,
                        *args, CAP], capture_output=True, text=True, timeout=300)
    sent = eu.prom_value(mf, "ctrack_export_messages_total", '{exporter="ipfix"}')
    return r, None if sent is None else int(sent)


def nfcapd_run(args):
    """(ctrack's result, nfdump's JSON flows, nfcapd's files) of an export
    to an nfcapd of our own; the flows None when nfdump printed no JSON."""
    n = eu.Nfcapd(TMP, STARTED)
    r, sent = run_export(args, "127.0.0.1:%d" % n.port)
    try:
        flows = n.stop(sent)
    except eu.NfdumpError as e:
        flows = None
        r.stderr += "%s\n%s" % (e, n.diag)
    files = sorted(os.path.join(n.dir, f) for f in os.listdir(n.dir) if f.startswith("nfcapd.2"))
    return r, flows, files


FMT = "fmt:%pr|%sa|%da|%sp|%dp|%xsa|%xda|%xsp|%xdp"


def nfdump_fmt(files):
    """nfdump's xlate view: Counter of (proto name, sa, da, sp, dp, xsa,
    xda, xsp, xdp) as it prints them."""
    c = Counter()
    for f in files:
        out = subprocess.run(["nfdump", "-r", f, "-q", "-N", "-6", "-o", FMT],
                             capture_output=True, text=True, check=False).stdout
        for line in out.splitlines():
            if "|" in line:
                c[tuple(x.strip() for x in line.split("|"))] += 1
    return c


def fmt_expected(listed):
    """What nfdump must print for each listed connection (biflow: the
    original tuple, its post-NAT tuple the reply inverted)."""
    c = Counter()
    for (proto, *rest), n in listed.items():
        o, rp = rest[:4], rest[4:]
        v6 = ":" in o[0]
        if proto in ICMP:   # nfdump: the source port 0, the destination type.code
            sa = (o[0], o[1], "0", "%d.0" % (128 if v6 else 8))
        else:
            sa = (o[0], o[1], str(o[2]), str(o[3]))
        if natted(proto, o, rp):
            # nfdump 1.7.1 decodes no IPv6 post-NAT address (281/282)
            xa = ("0.0.0.0", "0.0.0.0") if v6 else (rp[1], rp[0])
            xp = ("0", "0") if proto in ICMP else (str(rp[3]), str(rp[2]))
        else:
            xa, xp = ("0.0.0.0", "0.0.0.0"), ("0", "0")
        c[(str(proto),) + sa + xa + xp] += n   # -N: the protocol's number
    return c


if not shutil.which("nfcapd"):
    eu.skip("nfcapd decodes the post-NAT fields", "nfdump (nfcapd) is not installed")
else:
    r, flows0, files = nfcapd_run(NAT_ARGS)
    got = nfdump_fmt(files)
    want = fmt_expected(LISTED)
    eu.ok(r.returncode == 0 and got == want and sum(got.values()) == N_CONN,
          "nfdump's %%xsa %%xda %%xsp %%xdp are the listed reply tuples, inverted, for all %d "
          "connections (%d NATed; 0.0.0.0/0 without NAT)" % (N_CONN, N_NAT),
          "rc=%d %s\n%s" % (r.returncode, r.stderr, eu.diff(want, got)))
    # the whole record: counters and times as ctrack's JSON says
    destroys, table = eu.ctrack_view(CT, CAP, NAT_ARGS)

    def full_want(uniflow):
        c = Counter()
        for d in destroys + table:
            nat = "nat" in d
            sides = (("orig", "reply"),) if not uniflow else (("orig", "reply"), ("reply", "orig"))
            for this, other in sides:
                s, o = d[this], d[other]
                if this == "reply" and not s["packets"]:
                    continue
                sp, dp = eu._ports(s, d["proto"])
                x = (None,) * 4
                if nat:
                    v6 = d["l3"] == "ipv6"
                    x = ((None, None) if v6 else (o["dst"], o["src"])) + (
                        (None, None) if d["proto"] in ("icmp", "icmpv6")
                        else (o["dport"], o["sport"]))
                k = (d["protonum"], s["src"], s["dst"], sp, dp) + x + (
                    s["packets"], s["bytes"])
                if not uniflow:
                    k += (o["packets"], o["bytes"])
                k += (eu.ns_to_ms(d["first_seen"]), eu.ns_to_ms(d["last_seen"]))
                c[k] += 1
        return c

    def full_got(flows, uniflow):
        c = Counter()
        for fl in flows:
            k = eu.nfdump_key(fl, uniflow)
            xp = fl.get("src_xlt_port")
            x = (fl.get("src4_xlt_ip"), fl.get("dst4_xlt_ip"),
                 None if xp is None else int(xp),
                 None if xp is None else int(fl["dst_xlt_port"]))
            c[k[:5] + x + k[6:]] += 1      # the zone (0 here) left out
        return c

    for label, extra, uni in (("biflows", None, False), ("uniflows", ["--ipfix-uniflow"], True),
                              ("biflows, --ipfix-mtu 512 (templates in two messages)",
                               ["--ipfix-mtu", "512"], False)):
        flows = flows0
        if extra is not None:
            r, flows, _ = nfcapd_run(NAT_ARGS + extra)
        want, got = full_want(uni), full_got(flows or [], uni)
        eu.ok(r.returncode == 0 and got == want and sum(want.values()) >= N_CONN,
              "nfdump -o json, %s: every record with its post-NAT fields, counters and "
              "times (%d records)" % (label, sum(want.values())),
              "rc=%d %s\n%s" % (r.returncode, r.stderr, eu.diff(want, got)))


# ---- python3-ipfix over TCP: the IPv6 post-NAT addresses too ----

DEB_PY = "/usr/bin/python3"
COLLECTOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ipfix_tcp_collector.py")
HAVE_PYIPFIX = os.path.exists(DEB_PY) and subprocess.run(
    [DEB_PY, "-c", "import ipfix.reader"], capture_output=True).returncode == 0
POST = ("postNATSourceIPv4Address", "postNATDestinationIPv4Address",
        "postNATSourceIPv6Address", "postNATDestinationIPv6Address",
        "postNAPTSourceTransportPort", "postNAPTDestinationTransportPort")

if not HAVE_PYIPFIX:
    eu.skip("python3-ipfix decodes the IPv6 post-NAT addresses",
            "python3-ipfix is not installed for %s" % DEB_PY)
else:
    port = eu.free_port(socket.SOCK_STREAM)
    col = subprocess.Popen([DEB_PY, COLLECTOR, str(port)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    STARTED.append(col)
    col.stdout.readline()
    r, _ = run_export(NAT_ARGS + ["--ipfix-transport", "tcp"], "127.0.0.1:%d" % port)
    out, err = col.communicate(timeout=60)
    recs = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    want, got = Counter(), Counter()
    for (proto, *rest), k in LISTED.items():
        o, rp = rest[:4], rest[4:]
        x = ()
        if natted(proto, o, rp):
            x = (rp[1], rp[0]) + (() if proto in ICMP else (rp[3], rp[2]))
        want[(proto, o[0], o[1]) + x] += k
    for d in recs:
        v4 = "sourceIPv4Address" in d
        src = d["sourceIPv4Address"] if v4 else d["sourceIPv6Address"]
        dst = d["destinationIPv4Address"] if v4 else d["destinationIPv6Address"]
        x = tuple(d[k] for k in POST if k in d)
        got[(d["protocolIdentifier"], src, dst) + x] += 1
    eu.ok(r.returncode == 0 and got == want and sum(got.values()) == N_CONN,
          "python3-ipfix over TCP: every NATed record carries the post-NAT addresses (IPv6 "
          "too) and ports of the listing, no un-NATed one any (%d records)" % len(recs),
          "rc=%d %s %s\n%s" % (r.returncode, r.stderr, err[-300:], eu.diff(want, got)))


# ---- without --nat: the templates of before ----

def template_ids(args):
    port = eu.free_port()
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", port))
    s.settimeout(2.0)
    r, _ = run_export(args, "127.0.0.1:%d" % port)
    ids = []
    try:
        while True:
            m = s.recv(65535)
            off = 16
            while off + 4 <= len(m):
                sid, ln = int.from_bytes(m[off:off + 2], "big"), int.from_bytes(m[off + 2:off + 4], "big")
                if sid == 2:
                    p = off + 4
                    while p + 4 <= off + ln:
                        ids.append(int.from_bytes(m[p:p + 2], "big"))
                        cnt = int.from_bytes(m[p + 2:p + 4], "big")
                        p += 4
                        for _ in range(cnt):
                            p += 8 if m[p] & 0x80 else 4
                off += max(ln, 4)
            if ids:
                break
    except socket.timeout:
        pass
    s.close()
    return r, sorted(ids)


r, plain = template_ids([])
r2, with_nat = template_ids(NAT_ARGS)
eu.ok(r.returncode == 0 and plain == [260, 261, 262, 263] and
      with_nat == [260, 261, 262, 263, 268, 269, 270, 271],
      "without --nat the four plain biflow templates (260-263) alone; with it the four NAT "
      "ones besides (268-271)", "plain=%r nat=%r" % (plain, with_nat))

eu.done()
