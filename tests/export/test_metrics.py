#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_metrics.py CTRACK PCAPS_DIR SAMPLES_DIR - the Prometheus metrics
against Prometheus's own checker and a real scrape.

The page ctrack writes (--metrics-file) and serves (--metrics-listen,
libmicrohttpd) must pass `promtool check metrics` (Debian prometheus);
its counters must be those `ctrack read -s -o json` prints for the same
input, and its connections by zone, protocol and state those this test
counts in `ctrack read -o json`'s listing.  A scrape with curl while a
replay is still reading its input (a pipe, fed in two parts) shows the
counters of what was read so far - equal to `ctrack read -s` of exactly
that many packets - and they move when the rest arrives; the same with a
source NAT rule, whose ctrack_nat_* families (a copy the packet thread
publishes) are ctrack read -s's NAT counters of that prefix.  A NAT
capture's page (snat, dnat, masquerade, a refused confirm, a translation
drop) passes promtool, and its NAT counters are -s's.  Bad paths and
ports are errors that name them.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_util as eu  # noqa: E402
import gen_captures as gc  # noqa: E402

CT, PCAPS, SAMPLES = sys.argv[1], sys.argv[2], sys.argv[3]
TMP = tempfile.mkdtemp(prefix="ctrack-metrics.")
CURL = shutil.which("curl")


STAT_NAMES = ["found", "invalid", "insert", "insert_failed", "drop", "early_drop", "error",
              "search_restart", "clash_resolve", "chaintoolong"]
OWN = {"entries": "ctrack_entries", "packets": "ctrack_packets_total",
       "untracked": "ctrack_untracked_packets_total", "related": "ctrack_related_packets_total",
       "ignored": "ctrack_ignored_packets_total", "expired": "ctrack_expired_total"}


def json_stats(pcap, args=()):
    out = subprocess.run([CT, "read", "--no-table", "-s", "-o", "json", *args, pcap],
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["stats"]


def stats_match(m, st):
    bad = []
    for k in STAT_NAMES:
        if m.get(("ctrack_stat_%s_total" % k, frozenset())) != st[k]:
            bad.append((k, m.get(("ctrack_stat_%s_total" % k, frozenset())), st[k]))
    for k, name in OWN.items():
        if m.get((name, frozenset())) != st[k]:
            bad.append((k, m.get((name, frozenset())), st[k]))
    for reason, n in st["invalid_by_reason"].items():
        if m.get(("ctrack_invalid_packets_total", frozenset({("reason", reason)}))) != n:
            bad.append((reason, n))
    total_invalid = sum(v for (n, _), v in m.items() if n == "ctrack_invalid_packets_total")
    if total_invalid != sum(st["invalid_by_reason"].values()):
        bad.append(("invalid by reason, total", total_invalid))
    return bad


def listing_counts(pcap, args=()):
    out = subprocess.run([CT, "read", "-o", "json", *args, pcap], capture_output=True,
                         text=True).stdout
    c = Counter()
    for line in out.splitlines():
        d = json.loads(line)
        c[(str(d.get("zone", 0)), d["proto"], d.get("state", "none"))] += 1
    return c


def file_case(name, pcap, args=(), empty=False):
    if not os.path.exists(pcap):
        eu.skip(name, "no capture %s (../shared/pcaps is absent)" % pcap)
        return
    mf = os.path.join(TMP, "m.prom")
    r = subprocess.run([CT, "read", "--no-table", "--metrics-file", mf, *args, pcap],
                       capture_output=True, text=True)
    page = open(mf).read() if os.path.exists(mf) else ""
    eu.promtool_check(page, "%s: the metrics file passes promtool check metrics" % name)
    m = eu.metrics_page(page)
    st = json_stats(pcap, args)
    bad = stats_match(m, st)
    eu.ok(r.returncode == 0 and not bad and (not empty or st["invalid"] > 0),
          "%s: its counters are ctrack read -s's" % name, repr(bad))
    want = listing_counts(pcap, args)
    got = Counter()
    for (n, labels), v in m.items():
        if n == "ctrack_connections":
            d = dict(labels)
            got[(d["zone"], d["protocol"], d["state"])] = int(v)
    eu.ok(got == want and (sum(want.values()) > 0) != empty,
          "%s: connections by zone, protocol and state are the listing's (%d)" %
          (name, sum(want.values())), "want %r\ngot %r" % (want, got))


file_case("sample", os.path.join(SAMPLES, "sample.pcap"))
file_case("shared ndpi__1kxun.pcap", os.path.join(PCAPS, "ndpi__1kxun.pcap"))
file_case("shared zeek__vlan-collisions.pcap by VLAN zone",
          os.path.join(PCAPS, "zeek__vlan-collisions.pcap"), ("--zone-by", "vlan"))
file_case("shared ndpi__badpackets.pcap (INVALID by reason)",
          os.path.join(PCAPS, "ndpi__badpackets.pcap"), empty=True)


# ---- NAT (issue 24): the library's counters NAT raises, and ctrack read's ----

def ttl1(fr):
    """@fr (Ethernet + IPv4) with TTL 1 and its header checksum redone:
    a router does not forward it (CT_NAT_V_TTL_EXCEEDED)."""
    b = bytearray(fr)
    b[22] = 1
    b[24:26] = b"\0\0"
    b[24:26] = gc.csum(bytes(b[14:34])).to_bytes(2, "big")
    return bytes(b)


def nat_case():
    n4, m4, x4 = "198.51.100.1", "198.51.100.9", "198.51.100.7"
    p, t = [], 1.0
    for i in range(20):                 # source NAT
        c, srv = "10.1.0.%d" % (i + 1), "192.0.2.1"
        p += [(t, gc.udp(c, srv, 20000 + i, 53)), (t + 0.001, gc.udp(srv, n4, 53, 20000 + i))]
        t += 0.01
    for i in range(5):                  # destination NAT
        c = "10.3.0.%d" % (i + 1)
        p += [(t, gc.tcp(c, "203.0.113.80", 30000 + i, 80, "S", seq=1)),
              (t + 0.001, gc.tcp("10.2.0.5", c, 8080, 30000 + i, "SA", seq=9, ack=2))]
        t += 0.01
    for i in range(4):                  # masquerade
        c = "10.4.0.%d" % (i + 1)
        p += [(t, gc.udp(c, "192.0.2.2", 40000 + i, 53)),
              (t + 0.001, gc.udp("192.0.2.2", m4, 53, 40000 + i))]
        t += 0.01
    # a one-port range two clients want toward one server: the second's
    # tuple is taken, its confirm fails (insert_failed, drop, exhausted)
    for i in range(2):
        p.append((t, gc.udp("10.5.0.%d" % (i + 1), "192.0.2.3", 6000, 53)))
        t += 0.01
    # a NATed flow's packet with TTL 1: not forwarded, a translation drop
    p.append((t, ttl1(gc.udp("10.1.0.1", "192.0.2.1", 20000, 53))))
    path = os.path.join(TMP, "nat.pcap")
    gc.write_pcap(path, p)
    args = ["--nat", "ip daddr 203.0.113.80 tcp dport 80 dnat to 10.2.0.5:8080",
            "--nat", "ip saddr 10.5.0.0/16 snat to %s:5000" % x4,
            "--nat", "ip saddr 10.1.0.0/16 snat to " + n4,
            "--nat", "ip saddr 10.4.0.0/16 masquerade to " + m4,
            "--write-translated", os.path.join(TMP, "nat-out.pcap")]
    mf = os.path.join(TMP, "nat.prom")
    r = subprocess.run([CT, "read", "--no-table", "--metrics-file", mf, *args, path],
                       capture_output=True, text=True)
    page = open(mf).read() if os.path.exists(mf) else ""
    eu.promtool_check(page, "NAT: the metrics file passes promtool check metrics")
    m = eu.metrics_page(page)
    st = json_stats(path, args)
    nat = st.get("nat", {})
    bad = stats_match(m, st)
    if m.get(("ctrack_nat_exhausted_total", frozenset())) != st["nat_exhausted"]:
        bad.append(("nat_exhausted", st["nat_exhausted"]))
    pairs = [("ctrack_nat_first_packets_total", None, "first_packets"),
             ("ctrack_nat_setup_errors_total", None, "setup_errors"),
             ("ctrack_nat_translated_packets_total", None, "written"),
             ("ctrack_nat_translated_frames_total", None, "frames_written"),
             ("ctrack_nat_not_forwarded_total", None, "not_forwarded")]
    pairs += [("ctrack_nat_bindings_total", ("kind", k), k) for k in ("dnat", "snat", "masquerade")]
    pairs += [("ctrack_nat_confirms_total", ("result", k), k)
              for k in ("confirmed", "merged", "reply_only", "refused")]
    for name, label, key in pairs:
        got = m.get((name, frozenset([label]) if label else frozenset()))
        if got != nat.get(key):
            bad.append((name, label, got, nat.get(key)))
    drops = {dict(lb)["reason"]: v for (n, lb), v in m.items()
             if n == "ctrack_nat_translation_drops_total"}
    want_drops = nat.get("translation_dropped", {})
    if any(drops.get(k) != v for k, v in want_drops.items()) or \
            sum(drops.values()) != sum(want_drops.values()) or len(drops) < 10:
        bad.append(("translation drops", drops, want_drops))
    # what the capture was built to raise, counted independently of ctrack
    built = (nat.get("first_packets"), nat.get("dnat"), nat.get("snat"), nat.get("masquerade"),
             nat.get("refused"), st["insert_failed"] >= 1, st["drop"] >= 1, st["nat_exhausted"],
             want_drops.get("ttl_exceeded", want_drops))
    eu.ok(r.returncode == 0 and not bad and built == (31, 5, 22, 4, 1, True, True, 1, 1),
          "NAT: ctrack_nat_* are ctrack read -s's NAT counters (31 first packets, 5 dnat, 22 "
          "snat, 4 masquerade, 1 refused confirm: insert_failed, drop, nat_exhausted; 1 TTL "
          "drop), every label value there", "rc=%d %s bad=%r built=%r" %
          (r.returncode, r.stderr, bad, built))
    # without --nat: the library's NAT counter, none of ctrack read's NAT families
    r = subprocess.run([CT, "read", "--no-table", "--metrics-file", mf, path],
                       capture_output=True, text=True)
    page = open(mf).read()
    fams = {l.split()[2] for l in page.splitlines() if l.startswith("# TYPE ")}
    eu.ok("ctrack_nat_exhausted_total" in fams and
          not any(f.startswith("ctrack_nat_") and f != "ctrack_nat_exhausted_total" for f in fams),
          "without --nat the page has ctrack_nat_exhausted_total and no ctrack read NAT family",
          repr(sorted(f for f in fams if f.startswith("ctrack_nat"))))


nat_case()


# ---- a live scrape ----

def curl(port):
    r = subprocess.run([CURL, "-s", "-f", "--max-time", "5",
                        "http://127.0.0.1:%d/metrics" % port], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def nat_exchange(i, t):
    """A UDP query from 10.1.x.y and its answer to the NAT address."""
    c, srv = "10.1.%d.%d" % (i >> 8, i & 255), "192.0.2.53"
    return [(t, gc.udp(c, srv, 20000 + i, 53)),
            (t + 0.001, gc.udp(srv, "198.51.100.1", 53, 20000 + i, b"y" * 40))]


LIVE_NAT = ["--nat", "ip saddr 10.1.0.0/16 snat to 198.51.100.1"]
NAT_LIVE_KEYS = (("ctrack_nat_first_packets_total", None, "first_packets"),
                 ("ctrack_nat_bindings_total", ("kind", "snat"), "snat"),
                 ("ctrack_nat_confirms_total", ("result", "confirmed"), "confirmed"))


def nat_match(m, st):
    """ctrack_nat_* of page @m against ctrack read -s's nat object."""
    nat = st.get("nat", {})
    return [(name, m.get((name, frozenset([lb]) if lb else frozenset())), nat.get(key))
            for name, lb, key in NAT_LIVE_KEYS
            if m.get((name, frozenset([lb]) if lb else frozenset())) != nat.get(key)]


def live_case(nat=False):
    """A replay read from a pipe, scraped while half of it is read; with
    @nat, through a source NAT rule: ctrack_nat_* are the copy the packet
    thread publishes, and must be those of the packets read too."""
    what = " with --nat" if nat else ""
    if not CURL:
        eu.skip("a scrape during the replay" + what, "curl is not installed")
        return
    args = LIVE_NAT if nat else []
    part_a, part_b = [], []
    for i in range(150):
        if nat:
            part_a += nat_exchange(i, 1.0 + i * 0.002)
        else:
            part_a += gc.udp_exchange(i, 1.0 + i * 0.002)
            part_a += gc.refused(i, 1.0 + i * 0.002 + 0.0007)
    # bulk that creates nothing, beyond what a pipe reader buffers
    part_a += [gc.filler(2.0 + i * 0.001) for i in range(600)]
    for i in range(150, 300):
        part_b += nat_exchange(i, 3.0 + i * 0.002) if nat else gc.udp_exchange(i, 3.0 + i * 0.002)
    part_a.sort(key=lambda x: x[0])
    port = eu.free_port(socket.SOCK_STREAM)
    mf = os.path.join(TMP, "live.prom")
    p = subprocess.Popen([CT, "read", "--no-table", "--metrics-listen", "127.0.0.1:%d" % port,
                          "--metrics-file", mf, *args, "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    p.stdin.write(gc.pcap_header())
    for t, fr in part_a:
        p.stdin.write(gc.pcap_record(t, fr))
    p.stdin.flush()
    # scrape until the count stops moving (the reader waits for input)
    page, last, still = None, None, 0
    for _ in range(400):
        page = curl(port)
        v = eu.metrics_page(page).get(("ctrack_packets_total", frozenset())) if page else None
        if v and v == last:
            still += 1
            if still >= 5:
                break
        else:
            still = 0
        last = v
        time.sleep(0.05)
    first = eu.metrics_page(page) if page else {}
    k = int(first.get(("ctrack_packets_total", frozenset()), 0))
    for t, fr in sorted(part_b, key=lambda x: x[0]):
        p.stdin.write(gc.pcap_record(t, fr))
    _, err = p.communicate(timeout=60)
    if page:
        eu.promtool_check(page, "a live scrape (curl)%s passes promtool check metrics" % what)
    # what ctrack read -s says of exactly the first k packets
    prefix = os.path.join(TMP, "prefix.pcap")
    with open(prefix, "wb") as f:
        f.write(gc.pcap_header())
        for t, fr in part_a[:k]:
            f.write(gc.pcap_record(t, fr))
    if k:
        st = json_stats(prefix, args)
        bad = stats_match(first, st) + (nat_match(first, st) if nat else [])
    else:
        bad = ["no scrape"]
    eu.ok(p.returncode == 0 and 300 <= k <= len(part_a) and not bad,
          "a scrape%s while the input is half read shows the counters of the %d packets "
          "read (ctrack read -s of that prefix)" % (what, k),
          "rc=%d %s %r" % (p.returncode, err, bad))
    final = eu.metrics_page(open(mf).read()) if os.path.exists(mf) else {}
    whole = os.path.join(TMP, "whole.pcap")
    gc.write_pcap(whole, part_a + part_b)
    st = json_stats(whole, args)
    bad = stats_match(final, st) + (nat_match(final, st) if nat else [])
    moved = final.get(("ctrack_stat_insert_total", frozenset()), 0) > \
        first.get(("ctrack_stat_insert_total", frozenset()), 0)
    if nat:
        moved = moved and final.get(("ctrack_nat_first_packets_total", frozenset()), 0) == 300 \
            and first.get(("ctrack_nat_first_packets_total", frozenset()), 0) == 150
    eu.ok(moved and not bad, "the counters%s moved with the rest of the traffic and end as "
          "ctrack read -s of the whole input" % what, repr(bad))


live_case()
live_case(nat=True)


# ---- the Grafana dashboard asks only for what the page has ----

def dashboard_case():
    dash = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "contrib",
                        "grafana", "ctrack.json")
    mf = os.path.join(TMP, "d.prom")
    subprocess.run([CT, "read", "--no-table", "--metrics-file", mf,
                    os.path.join(SAMPLES, "sample.pcap")], capture_output=True)
    page = open(mf).read()
    have = set()
    for line in page.splitlines():
        if line.startswith("# TYPE "):
            name, kind = line.split()[2:4]
            have.add(name)
            if kind == "histogram":
                have |= {name + "_bucket", name + "_sum", name + "_count"}
    d = json.load(open(dash))
    exprs = [t["expr"] for p in d["panels"] for t in p["targets"]]
    import re
    used = set(re.findall(r"\b(ctrack_[a-z0-9_]+)", " ".join(exprs)))
    eu.ok(exprs and used and used <= have,
          "the Grafana dashboard's %d queries use only metric names the page has" % len(exprs),
          "unknown: %r" % sorted(used - have))


dashboard_case()


# ---- bad paths and ports ----

def bad_file_case():
    path = "/nonexistent-dir-%d/m.prom" % os.getpid()
    r = subprocess.run([CT, "read", "--metrics-file", path, os.path.join(SAMPLES, "sample.pcap")],
                       capture_output=True, text=True)
    eu.ok(r.returncode == 1 and path in r.stderr and not r.stdout,
          "an unwritable --metrics-file is an error at start naming it", r.stderr)


def busy_port_case():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    port = s.getsockname()[1]
    r = subprocess.run([CT, "read", "--metrics-listen", "127.0.0.1:%d" % port,
                        os.path.join(SAMPLES, "sample.pcap")], capture_output=True, text=True)
    s.close()
    eu.ok(r.returncode == 1 and str(port) in r.stderr and "cannot listen" in r.stderr,
          "a --metrics-listen port in use is an error at start naming it", r.stderr)
    r = subprocess.run([CT, "read", "--metrics-listen", "example.org:80",
                        os.path.join(SAMPLES, "sample.pcap")], capture_output=True, text=True)
    eu.ok(r.returncode == 1 and "not an IPv4 address" in r.stderr,
          "--metrics-listen takes an address, not a name to look up", r.stderr)


bad_file_case()
busy_port_case()
shutil.rmtree(TMP, ignore_errors=True)
eu.done()
