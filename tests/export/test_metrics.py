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
that many packets - and they move when the rest arrives.  Bad paths and
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


# ---- a live scrape ----

def curl(port):
    r = subprocess.run([CURL, "-s", "-f", "--max-time", "5",
                        "http://127.0.0.1:%d/metrics" % port], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def live_case():
    if not CURL:
        eu.skip("a scrape during the replay", "curl is not installed")
        return
    part_a, part_b = [], []
    for i in range(150):
        part_a += gc.udp_exchange(i, 1.0 + i * 0.002)
        part_a += gc.refused(i, 1.0 + i * 0.002 + 0.0007)
    # bulk that creates nothing, beyond what a pipe reader buffers
    part_a += [gc.filler(2.0 + i * 0.001) for i in range(600)]
    for i in range(150, 300):
        part_b += gc.udp_exchange(i, 3.0 + i * 0.002)
    part_a.sort(key=lambda x: x[0])
    port = eu.free_port(socket.SOCK_STREAM)
    mf = os.path.join(TMP, "live.prom")
    p = subprocess.Popen([CT, "read", "--no-table", "--metrics-listen", "127.0.0.1:%d" % port,
                          "--metrics-file", mf, "-"],
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
        eu.promtool_check(page, "a live scrape (curl) passes promtool check metrics")
    # what ctrack read -s says of exactly the first k packets
    prefix = os.path.join(TMP, "prefix.pcap")
    with open(prefix, "wb") as f:
        f.write(gc.pcap_header())
        for t, fr in part_a[:k]:
            f.write(gc.pcap_record(t, fr))
    bad = stats_match(first, json_stats(prefix)) if k else ["no scrape"]
    eu.ok(p.returncode == 0 and 300 <= k <= len(part_a) and not bad,
          "a scrape while the input is half read shows the counters of the %d packets "
          "read (ctrack read -s of that prefix)" % k, "rc=%d %s %r" % (p.returncode, err, bad))
    final = eu.metrics_page(open(mf).read()) if os.path.exists(mf) else {}
    whole = os.path.join(TMP, "whole.pcap")
    gc.write_pcap(whole, part_a + part_b)
    bad = stats_match(final, json_stats(whole))
    moved = final.get(("ctrack_stat_insert_total", frozenset()), 0) > \
        first.get(("ctrack_stat_insert_total", frozenset()), 0)
    eu.ok(moved and not bad, "the counters moved with the rest of the traffic and end as "
          "ctrack read -s of the whole input", repr(bad))


live_case()


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
