#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_report.py CTRACK PCAPS_DIR SAMPLES_DIR - the HTML report in a real
browser.

`ctrack read --report` of the project's sample, a capture this test
writes, a large one it writes (40,000 connections) and shared captures
(skipped when absent) is loaded by headless Chromium (Debian's chromium;
skipped with one line when it is not installed); the DOM Chromium builds
must hold every plot, and the numbers in it must be those this test
derives from `ctrack read -e -o json` - NEW and DESTROY events per time
bin, connections open at the end by protocol, states at the end and at
the end of each connection, the top connections by bytes and packets,
duration buckets, INVALID packets by reason - and a screenshot is taken
(kept in the build folder to look at).  The page must fetch nothing.  An
unwritable report path is an error naming it.
"""
import html.parser
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_util as eu  # noqa: E402
import gen_captures as gc  # noqa: E402

CT, PCAPS, SAMPLES = sys.argv[1], sys.argv[2], sys.argv[3]
OUT = os.path.join(os.getcwd(), "report-screenshots")
os.makedirs(OUT, exist_ok=True)
TMP = tempfile.mkdtemp(prefix="ctrack-report.")
BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars"]
DUR_EDGES_NS = [10**6, 10**7, 10**8, 10**9, 10**10, 60 * 10**9, 600 * 10**9, 3600 * 10**9]
CLS = {"tcp": "tcp", "udp": "udp", "icmp": "icmp", "icmpv6": "icmpv6"}


def ns(text):
    sec, _, frac = text.partition(".")
    return int(sec) * 10**9 + int((frac + "000000000")[:9])


class Dom(html.parser.HTMLParser):
    """Elements of interest: (tag, attrs, figure id) in document order."""

    def __init__(self):
        super().__init__()
        self.els, self.fig, self.tags = [], None, Counter()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags[tag] += 1
        if tag == "figure":
            self.fig = a.get("id")
        self.els.append((tag, a, self.fig))


def browser_dom(page, shot):
    prof = tempfile.mkdtemp(dir=TMP, prefix="profile.")
    url = "file://" + page
    d = subprocess.run([BROWSER, *FLAGS, "--user-data-dir=" + prof, "--dump-dom", url],
                       capture_output=True, text=True, timeout=120)
    s = subprocess.run([BROWSER, *FLAGS, "--user-data-dir=" + prof, "--window-size=1000,3000",
                        "--screenshot=" + shot, url], capture_output=True, text=True, timeout=120)
    return d.returncode, d.stdout, s.returncode


def expected(pcap, args):
    out = subprocess.run([CT, "read", "-e", "-s", "-o", "json", *args, pcap],
                         capture_output=True, text=True).stdout
    news, destroys, table, stats = [], [], [], None
    for line in out.splitlines():
        d = json.loads(line, parse_float=str)
        ev = d.get("event")
        if ev == "new":
            news.append(d)
        elif ev == "destroy":
            destroys.append(d)
        elif "stats" in d:
            stats = d["stats"]
        elif ev is None:
            table.append(d)
    return news, destroys, table, stats


def state_name(d):
    if "state" in d:
        return d["state"]
    if d.get("assured") in (True, "true"):
        return "ASSURED"
    return "UNREPLIED" if d.get("unreplied") in (True, "true") else "REPLIED"


def check(name, pcap, args=()):
    if not os.path.exists(pcap):
        eu.skip(name, "no capture %s (../shared/pcaps is absent)" % pcap)
        return
    page = os.path.join(TMP, "report.html")
    r = subprocess.run([CT, "read", "--no-table", "--report", page, *args, pcap],
                       capture_output=True, text=True)
    text = open(page).read() if os.path.exists(page) else ""
    eu.ok(r.returncode == 0 and "<script" not in text and "http://" not in text and
          "https://" not in text and "<link" not in text and "url(" not in text,
          "%s: the page is written and fetches nothing" % name, r.stderr)
    if not BROWSER:
        eu.skip("%s: the page in a browser" % name,
                "no browser: chromium is not installed (Debian package chromium)")
        return
    shot = os.path.join(OUT, "%s.png" % name.split(":")[0].replace(" ", "_").replace("/", "_"))
    rc, dom_text, src = browser_dom(page, shot)
    dom = Dom()
    dom.feed(dom_text)
    figs = {a.get("id") for t, a, _ in dom.els if t == "figure"}
    want_figs = {"open-by-protocol", "new-destroyed", "states-open", "states-ended",
                 "top-bytes", "top-packets", "durations", "invalid"}
    eu.ok(rc == 0 and src == 0 and want_figs <= figs and dom.tags["svg"] >= 6 and
          os.path.getsize(shot) > 20000,
          "%s: Chromium renders every plot (%d figures, %d svg) and a screenshot" %
          (name, len(figs), dom.tags["svg"]), "rc=%d shot rc=%d figs=%r" % (rc, src, figs))

    news, destroys, table, stats = expected(pcap, args)
    conns = destroys + table
    bad = []
    summ = [a for t, a, _ in dom.els if a.get("id") == "summary"][0]
    if int(summ["data-connections"]) != len(conns) or int(summ["data-open-at-end"]) != len(table) \
            or int(summ["data-invalid"]) != stats["invalid"]:
        bad.append(("summary", summ, len(conns), len(table)))
    # new / destroyed per bin: from the events' own times
    svg = [a for t, a, f in dom.els if t == "svg" and f == "new-destroyed"][0]
    w = int(svg["data-bin-seconds"]) * 10**9
    t0 = min(ns(d["first_seen"]) for d in conns) if conns else 0
    want_new = Counter((ns(d["time"]) - t0) // w for d in news)
    want_des = Counter((ns(d["time"]) - t0) // w for d in destroys)
    got_new, got_des = Counter(), Counter()
    for t, a, f in dom.els:
        if t == "rect" and f == "new-destroyed" and int(a["data-count"]):
            (got_new if a["data-kind"] == "new" else got_des)[int(a["data-bin"])] += \
                int(a["data-count"])
    if got_new != want_new or got_des != want_des:
        bad.append(("per bin", sorted(want_new.items())[:5], sorted(got_new.items())[:5],
                    sorted(want_des.items())[:5], sorted(got_des.items())[:5]))
    # open at the end, by protocol
    want_open = Counter(CLS.get(d["proto"], "other") for d in table)
    got_open = Counter({a["data-protocol"]: int(a["data-open-at-end"]) for t, a, f in dom.els
                        if t == "span" and f == "open-by-protocol" and "data-open-at-end" in a})
    if +got_open != want_open:
        bad.append(("open at end", want_open, got_open))

    def bars(fig):
        return Counter({a["data-label"]: int(a["data-value"]) for t, a, f in dom.els
                        if t == "rect" and f == fig and "data-label" in a})
    if bars("states-open") != Counter("%s %s" % (d["proto"], state_name(d)) for d in table):
        bad.append(("states-open", bars("states-open")))
    if bars("states-ended") != Counter("%s %s" % (d["proto"], state_name(d)) for d in destroys):
        bad.append(("states-ended", bars("states-ended")))
    durs = Counter()
    labels = [a["data-label"] for t, a, f in dom.els if t == "rect" and f == "durations"]
    for d in conns:
        dn = ns(d["last_seen"]) - ns(d["first_seen"])
        durs[labels[sum(1 for e in DUR_EDGES_NS if dn >= e)]] += 1
    if +bars("durations") != durs:
        bad.append(("durations", durs, bars("durations")))
    if bars("invalid") != Counter({k: v for k, v in stats["invalid_by_reason"].items()}):
        bad.append(("invalid", bars("invalid")))
    for fig, key in (("top-bytes", "bytes"), ("top-packets", "packets")):
        want = sorted((d["orig"][key] + d["reply"][key] for d in conns), reverse=True)[:10]
        got = [int(a["data-" + key]) for t, a, f in dom.els if t == "tr" and f == fig
               and "data-rank" in a]
        if got != want:
            bad.append((fig, want, got))
    eu.ok(not bad, "%s: the DOM's numbers are those of ctrack read -e -o json (%d "
          "connections, %d open at the end)" % (name, len(conns), len(table)), repr(bad))


def written():
    p = []
    for i in range(200):
        p += gc.refused(i, 1.0 + i * 0.05)
    for i in range(300):
        p += gc.udp_exchange(i, 2.0 + i * 0.2)
    p += gc.tcp_session("10.9.0.1", "192.0.2.80", 40000, 80, 3.0, n_data=40)
    p += gc.long_udp("10.5.0.1", "192.0.2.9", 5000, 6000, 0.0, 200.0, 2.0)
    path = os.path.join(TMP, "written.pcap")
    gc.write_pcap(path, p)
    return path


def large():
    path = os.path.join(TMP, "large.pcap")
    with open(path, "wb") as f:
        f.write(gc.pcap_header())
        pk = []
        for i in range(20000):
            pk += gc.refused(i, 1.0 + i * 0.005, net=30 + (i >> 16))
            pk += gc.udp_exchange(i, 1.0 + i * 0.005 + 0.002, net=40 + (i >> 16))
        for t, fr in sorted(pk, key=lambda x: x[0]):
            f.write(gc.pcap_record(t, fr))
    return path


check("sample", os.path.join(SAMPLES, "sample.pcap"))
check("written: refused, UDP timing out, TCP, a long flow", written())
check("large: 40000 connections over 100 s", large())
check("shared ndpi__badpackets.pcap", os.path.join(PCAPS, "ndpi__badpackets.pcap"))
check("shared zeek__vlan-collisions.pcap", os.path.join(PCAPS, "zeek__vlan-collisions.pcap"),
      ("--zone-by", "vlan"))
check("shared ndpi__reddit.pcap", os.path.join(PCAPS, "ndpi__reddit.pcap"))

bad_path = "/nonexistent-dir-%d/report.html" % os.getpid()
r = subprocess.run([CT, "read", "--report", bad_path, os.path.join(SAMPLES, "sample.pcap")],
                   capture_output=True, text=True)
eu.ok(r.returncode == 1 and bad_path in r.stderr and not r.stdout,
      "an unwritable report path is an error at start naming it", r.stderr)
shutil.rmtree(TMP, ignore_errors=True)
eu.done()
