#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_daemon_export.py CTRACK - `ctrack daemon --ipfix` and
`--metrics-listen` against nfdump's nfcapd, curl, promtool and the
daemon's own `ctrack stats` and event stream (issue 26, phase 2).

No root: the daemon replays a capture that the test writes into a named
pipe as it goes (`--replay FIFO`), so that the test decides when traffic
arrives: an `events -o json` client subscribes before the first
connection, scrapes happen while frames are being fed and at quiet
moments between the parts.  (The daemon's reader takes a pipe through
zlib's pass-through, which returns only whole buffers: the first 256 KiB,
then 512 KiB at a time.  So each part is followed by 640 KiB of frames
no tracker takes, gen_captures.filler, which push it through; the test
waits for the part's own frames, and some of the filler may stay in the
reader until the next part or the end of the feed.)

  - IPFIX over UDP to nfcapd: `nfdump -o json` shows exactly one flow
    per DESTROY event the daemon's event stream reported (UDP and ICMP
    over IPv4 and IPv6 timing out, TCP connections flushed), with the
    same addresses, ports, protocol, both directions' packets and bytes
    and zone; first and last times within 2 ms (the event stream and the
    exporter add the wall clock's offset as each sampled it); the
    connections still open at SIGTERM are exported as well.
  - IPFIX over TCP to python3-ipfix's reader (nfcapd 1.7.1 takes UDP
    only): one record per DESTROY event, the same fields and times, and
    the connections open at SIGTERM as forced end.
  - Active timeouts on the daemon's clock: a flow replayed at its own
    pace over 7 s with --ipfix-active-timeout 2 arrives in several
    records that add up to its counters.
  - Metrics: a scrape (curl) while a part is being fed lies between the
    `ctrack stats` taken after it and a scrape taken after that, and the
    counters move; at a quiet moment the scrape and `ctrack stats` agree
    exactly - conntrack -S counters, ctrack's own, INVALID by reason,
    frames fed, connections by state - and after the next part they have
    moved by what it held; `promtool check metrics` passes the page.
  - Failures: a TCP collector that refuses is an error at start naming it
    (exit 1, nothing tracked); a UDP collector that is not there costs
    counted send failures and changes no tracking; a TCP collector that
    stops reading costs dropped messages, counted, while every frame is
    still tracked, and a clear exit status at the end; a metrics port in
    use is an error naming it; the options in a config file (and a bad
    one, named by file and line).
"""
import json
import os
import shutil
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "daemon"))
import dm_util  # noqa: E402
import export_util as eu  # noqa: E402
import gen_captures as gc  # noqa: E402

CT = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="ctrack-dmexport.")
STARTED = []
CURL = shutil.which("curl")
HAVE_NFCAPD = shutil.which("nfcapd") and shutil.which("nfdump")
FILL = 640 * 1024


def cleanup():
    for p in STARTED:
        if p.poll() is None:
            p.kill()
            p.wait()
    shutil.rmtree(TMP, ignore_errors=True)


def flows_capture(name, **kw):
    """(frames) of gen_flows.py's capture: [(seconds, frame)]."""
    path = os.path.join(TMP, name + ".pcap")
    dm_util.gen_capture(path, **kw)
    out = []
    with open(path, "rb") as f:
        data = f.read()
    off, t0 = 24, None
    while off + 16 <= len(data):
        sec, nsec, cap, _ = struct.unpack_from("<IIII", data, off)
        t = sec + nsec / 1e9
        t0 = t if t0 is None else t0
        out.append((t - t0, data[off + 16:off + 16 + cap]))
        off += 16 + cap
    return out


def fillers(t, nbytes=FILL):
    return [gc.filler(t + i * 1e-6) for i in range(nbytes // 1400 + 1)]


class FifoDaemon:
    """ctrack daemon --replay FIFO: the test writes the capture as it goes."""

    def __init__(self, args, speed="0", config=None):
        self.dir = tempfile.mkdtemp(dir=TMP, prefix="dm.")
        self.fifo = os.path.join(self.dir, "feed.pcap")
        os.mkfifo(self.fifo)
        self.sock = os.path.join(self.dir, "ctrack.sock")
        self.logpath = os.path.join(self.dir, "daemon.log")
        argv = [CT, "daemon", "--socket", self.sock, "--replay", self.fifo, "--speed", speed,
                *args]
        if config is not None:
            cf = os.path.join(self.dir, "ctrack.conf")
            with open(cf, "w") as f:
                f.write(config)
            argv += ["--config", cf]
        with open(self.logpath, "w") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        STARTED.append(self.proc)
        self.frames = 0     # every record written
        self.real = 0       # ... up to the last one that is not filler
        self.t = 0.0
        # the daemon opens the pipe for reading at start; our open waits
        # for that (or for the daemon to have failed)
        deadline = time.time() + 30
        self.w = None
        while self.w is None:
            try:
                fd = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)
                os.set_blocking(fd, True)
                self.w = os.fdopen(fd, "wb", buffering=0)
            except OSError:
                if self.proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError("the daemon did not open its replay: %s" % self.log())
                time.sleep(0.02)
        self.w.write(gc.pcap_header())
        self.feed([], fill=True)
        deadline = time.time() + 30
        while True:
            try:
                self.request({"v": 1, "cmd": "hello"})
                break
            except OSError:
                if self.proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError("the daemon did not answer: %s" % self.log())
                time.sleep(0.05)

    def log(self):
        with open(self.logpath, errors="replace") as f:
            return f.read()

    def feed(self, frames, fill=True):
        """@frames [(seconds from the part's start, frame)] after what was
        fed, then (fill) frames that push them through the reader."""
        base = self.t
        recs = [(base + t, fr) for t, fr in frames]
        end = recs[-1][0] if recs else base
        if fill:
            recs += fillers(end + 1e-3)
        buf = b"".join(gc.pcap_record(t, fr) for t, fr in recs)
        self.w.write(buf)
        self.real = self.frames + len(frames) if frames else self.real
        self.frames += len(recs)
        self.t = (recs[-1][0] if recs else end) + 1e-3

    def close_feed(self):
        self.w.close()

    def request(self, req):
        return dm_util.request(self.sock, req)

    def stats(self):
        return self.request({"v": 1, "cmd": "stats"})

    def tracked(self):
        st = self.stats()
        return sum(c["frames"] for c in st["cpu"])

    def wait_tracked(self, n=None, timeout=60):
        """Until the workers tracked every frame fed that is not filler
        (or @n)."""
        n = self.real if n is None else n
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.tracked() >= n:
                return True
            time.sleep(0.05)
        return False

    def stop(self):
        return dm_util.stop_proc(self.proc, timeout=30)


class Events:
    """An `events -o json` subscriber on a raw connection, read by a thread."""

    def __init__(self, dm):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.connect(dm.sock)
        self.s.sendall(b'{"v":1,"cmd":"events","format":"json"}\n')
        self.ok = json.loads(dm_util.read_line(self.s))
        self.lines = []
        self.lock = threading.Lock()
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        buf = b""
        while True:
            try:
                d = self.s.recv(1 << 20)
            except OSError:
                return
            if not d:
                return
            buf += d
            *full, buf = buf.split(b"\n")
            with self.lock:
                self.lines += [x.decode() for x in full if x]

    def destroys(self):
        with self.lock:
            lines = list(self.lines)
        out = []
        for ln in lines:
            if ln.startswith('{"v":'):
                continue
            e = json.loads(ln, parse_float=str)
            if e["event"] == "destroy":
                out.append(e)
        return out

    def notices(self):
        with self.lock:
            return [x for x in self.lines if x.startswith('{"v":')]

    def close(self):
        self.s.close()


def scrape(addr):
    r = subprocess.run([CURL, "-s", "-f", "--max-time", "10", "http://%s/metrics" % addr],
                       capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


# ---- one flow per DESTROY event ----

def flow_key_nt(k):
    """A flow key without its two times."""
    return k[:-2]


def match_times(want, got, slack_ms=2):
    """@want, @got: lists of full keys; pairs equal but for the times, times
    within @slack_ms.  Returns (missing, extra, worst time difference)."""
    by_w, by_g = {}, {}
    for k in want:
        by_w.setdefault(flow_key_nt(k), []).append(k[-2:])
    for k in got:
        by_g.setdefault(flow_key_nt(k), []).append(k[-2:])
    missing, extra, worst = [], [], 0
    for key in set(by_w) | set(by_g):
        w, g = sorted(by_w.get(key, [])), sorted(by_g.get(key, []))
        for a, b in zip(w, g):
            d = max(abs(a[0] - b[0]), abs(a[1] - b[1]))
            worst = max(worst, d)
            if d > slack_ms:
                missing.append(key + a)
                extra.append(key + b)
        missing += [key + t for t in w[len(g):]]
        extra += [key + t for t in g[len(w):]]
    return missing, extra, worst


def destroy_case():
    name = "daemon IPFIX over UDP to nfcapd"
    if not HAVE_NFCAPD:
        eu.skip(name, "nfdump (nfcapd) is not installed")
        return
    frames = flows_capture("mix", udp=300, udp6=200, tcp=100, icmp=100, span_ms=2000)
    n_flows = 700
    nf = eu.Nfcapd(TMP, STARTED)
    dm = FifoDaemon(["--ipfix", "127.0.0.1:%d" % nf.port, "--workers", "2",
                     "--set", "nf_conntrack_udp_timeout=2", "--set",
                     "nf_conntrack_icmp_timeout=2"])
    ev = Events(dm)
    dm.feed(frames)
    ok_tracked = dm.wait_tracked()
    # UDP and ICMP time out after 2 s; the ESTABLISHED TCP connections are
    # flushed once the rest went
    deadline = time.time() + 30
    while time.time() < deadline and len(ev.destroys()) < 600:
        time.sleep(0.1)
    fl = dm.request({"v": 1, "cmd": "flush"})
    deadline = time.time() + 30
    while time.time() < deadline and len(ev.destroys()) < n_flows:
        time.sleep(0.1)
    destroys = ev.destroys()
    # every DESTROY handed to the export, encoded and sent (a record waits
    # at most a second in its message)
    deadline = time.time() + 30
    while time.time() < deadline:
        x = dm.stats()["export"]
        if x["exported"] == x["queued"] and x["ipfix"]["records"] >= len(destroys):
            break
        time.sleep(0.1)
    time.sleep(1.5)      # the last message leaves when its first record is 1 s old
    st = dm.stats()
    sent = st["export"]["ipfix"]["messages"]
    try:
        flows = nf.stop(sent)
        nf_err = ""
    except eu.NfdumpError as e:
        flows, nf_err = [], str(e)
    want = list(eu.expected_biflows(destroys, []).elements())
    got = [eu.nfdump_key(f) for f in flows]
    missing, extra, worst = match_times(want, got)
    causes = Counter(e["destroy_cause"] for e in destroys)
    families = Counter(e["l3"] for e in destroys)
    eu.ok(ok_tracked and len(destroys) == n_flows and not missing and not extra and
          len(got) == n_flows and fl.get("removed") == 100 and
          st["export"]["queue_drops"] == 0 and families["ipv6"] == 200,
          "%s: nfdump shows one flow per DESTROY event (%d: %s), same addresses, ports, "
          "protocol, packets, bytes, zone, times within %d ms (worst %d)" %
          (name, len(destroys), dict(causes), 2, worst),
          "tracked=%s destroys=%d flows=%d flush=%r\n%s\n%s\nmissing %r\nextra %r\nlog: %s" %
          (ok_tracked, len(destroys), len(got), fl, nf.diag, nf_err, missing[:5], extra[:5],
           dm.log()[-800:]))
    ev.close()
    dm.close_feed()
    rc = dm.stop()
    eu.ok(rc == 0 and "flow records" in dm.log(),
          "the daemon stops cleanly and says what it exported (exit %s)" % rc, dm.log()[-600:])


DEB_PY = "/usr/bin/python3"
TCP_COLLECTOR = os.path.join(HERE, "ipfix_tcp_collector.py")


def pyipfix_key(d):
    """A python3-ipfix record (ipfix_tcp_collector.py's JSON) as a flow key."""
    v4 = "sourceIPv4Address" in d
    src = d["sourceIPv4Address"] if v4 else d["sourceIPv6Address"]
    dst = d["destinationIPv4Address"] if v4 else d["destinationIPv6Address"]
    proto = d["protocolIdentifier"]
    if proto in (1, 58):
        sp, dp = 0, d.get("icmpTypeCodeIPv4" if v4 else "icmpTypeCodeIPv6", 0)
    else:
        sp, dp = d.get("sourceTransportPort", 0), d.get("destinationTransportPort", 0)
    return eu.flow_key(proto, src, dst, sp, dp, d["ingressVRFID"], d["packetDeltaCount"],
                       d["octetDeltaCount"], d["reversePacketDeltaCount"],
                       d["reverseOctetDeltaCount"], d["flowStartMilliseconds"],
                       d["flowEndMilliseconds"])


def tcp_destroy_case():
    """Over TCP (nfcapd 1.7.1 takes UDP only): python3-ipfix's reader
    decodes one record per DESTROY event, and the connections open at
    SIGTERM as forced end."""
    name = "daemon IPFIX over TCP to python3-ipfix"
    if not (os.path.exists(DEB_PY) and subprocess.run(
            [DEB_PY, "-c", "import ipfix.reader"], capture_output=True).returncode == 0):
        eu.skip(name, "python3-ipfix is not installed for %s" % DEB_PY)
        return
    frames = flows_capture("tcpmix", udp=200, udp6=100, tcp=50, icmp=50, span_ms=1000)
    port = eu.free_port(socket.SOCK_STREAM)
    col = subprocess.Popen([DEB_PY, TCP_COLLECTOR, str(port)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    STARTED.append(col)
    col.stdout.readline()          # "listening"
    dm = FifoDaemon(["--ipfix", "127.0.0.1:%d" % port, "--ipfix-transport", "tcp",
                     "--set", "nf_conntrack_udp_timeout=2", "--set",
                     "nf_conntrack_icmp_timeout=2"])
    ev = Events(dm)
    dm.feed(frames)
    ok_t = dm.wait_tracked()
    deadline = time.time() + 30
    while time.time() < deadline and len(ev.destroys()) < 350:
        time.sleep(0.1)
    destroys = ev.destroys()
    listing = dm.request({"v": 1, "cmd": "count"}).get("count")
    dm.close_feed()
    rc = dm.stop()           # the 50 TCP connections still open: forced end
    try:
        out, err = col.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        col.kill()
        out, err = col.communicate()
    recs = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    ended = [d for d in recs if d.get("flowEndReason") != 4]
    forced = [d for d in recs if d.get("flowEndReason") == 4]
    want = list(eu.expected_biflows(destroys, []).elements())
    missing, extra, worst = match_times(want, [pyipfix_key(d) for d in ended])
    eu.ok(ok_t and rc == 0 and len(destroys) == 350 and not missing and not extra and
          listing == 50 and len(forced) == 50 and
          all(d["protocolIdentifier"] == 6 for d in forced),
          "%s: one record per DESTROY event (%d), same addresses, ports, protocol, "
          "packets, bytes, zone, times within 2 ms (worst %d); the %s open at SIGTERM as "
          "forced end" % (name, len(destroys), worst, listing),
          "tracked=%s rc=%s destroys=%d recs=%d forced=%d listing=%s\nmissing %r\n"
          "extra %r\ncollector: %s\nlog: %s" % (ok_t, rc, len(destroys), len(recs),
                                                len(forced), listing, missing[:5], extra[:5],
                                                err[-300:], dm.log()[-600:]))
    ev.close()


def open_at_stop_case():
    """Connections still open at SIGTERM leave as records too (forced end)."""
    name = "daemon IPFIX: the connections open at SIGTERM"
    if not HAVE_NFCAPD:
        eu.skip(name, "nfdump (nfcapd) is not installed")
        return
    frames = flows_capture("open", udp=0, tcp=50, span_ms=200)
    nf = eu.Nfcapd(TMP, STARTED)
    dm = FifoDaemon(["--ipfix", "127.0.0.1:%d" % nf.port])
    dm.feed(frames)
    dm.wait_tracked()
    listing = dm.request({"v": 1, "cmd": "count"}).get("count")
    dm.close_feed()
    rc = dm.stop()
    try:
        flows = nf.stop(None)
    except eu.NfdumpError as e:
        flows = []
        nf.diag += str(e)
    tcp = [f for f in flows if f["proto"] == 6 and f["in_packets"] == 3 and
           f.get("out_packets") == 2]
    eu.ok(rc == 0 and listing == 50 and len(flows) == 50 and len(tcp) == 50,
          "%s: each of the %s open connections in one record, both directions' counts" %
          (name, listing), "rc=%s flows=%d tcp=%d %s\n%s" % (rc, len(flows), len(tcp), nf.diag,
                                                            dm.log()[-500:]))


def active_timeout_case():
    name = "daemon IPFIX: active timeouts on the daemon's clock"
    if not HAVE_NFCAPD:
        eu.skip(name, "nfdump (nfcapd) is not installed")
        return
    long_fl = gc.long_udp("10.66.0.1", "192.0.2.66", 5000, 6000, 0.0, 7.0, 0.25)
    nf = eu.Nfcapd(TMP, STARTED)
    dm = FifoDaemon(["--ipfix", "127.0.0.1:%d" % nf.port, "--ipfix-active-timeout", "2"],
                    speed="1")
    ev = Events(dm)
    dm.feed(long_fl)
    dm.wait_tracked(timeout=60)
    fl = dm.request({"v": 1, "cmd": "flush"})
    deadline = time.time() + 20
    while time.time() < deadline and not ev.destroys():
        time.sleep(0.1)
    time.sleep(1.5)
    st = dm.stats()
    [d] = ev.destroys() or [None]
    try:
        flows = nf.stop(st["export"]["ipfix"]["messages"])
    except eu.NfdumpError as e:
        flows = []
        nf.diag += str(e)
    recs = [f for f in flows if f.get("src_port") == 5000]
    sums = (sum(f["in_packets"] for f in recs), sum(f["in_bytes"] for f in recs),
            sum(f.get("out_packets", 0) for f in recs), sum(f.get("out_bytes", 0) for f in recs))
    want = (d["orig"]["packets"], d["orig"]["bytes"], d["reply"]["packets"],
            d["reply"]["bytes"]) if d else None
    # 7 s of traffic, reported every 2-2.5 s: 2 or 3 periodic records and
    # the flush's
    eu.ok(d is not None and 3 <= len(recs) <= 5 and sums == want and
          st["export"]["ipfix"]["records_active"] >= 2 and fl.get("removed") == 1,
          "%s: a 7 s flow in %d records whose counts add up to its counters %r" %
          (name, len(recs), want),
          "records=%d sums=%r want=%r stats=%r %s" % (len(recs), sums, want,
                                                     st["export"], nf.diag))
    ev.close()
    dm.close_feed()
    dm.stop()


# ---- metrics against ctrack stats ----

STATS = ["found", "invalid", "insert", "insert_failed", "drop", "early_drop", "error",
         "search_restart", "clash_resolve", "chaintoolong"]
OWN = {"count": "ctrack_entries", "packets": "ctrack_packets_total",
       "untracked": "ctrack_untracked_packets_total", "related": "ctrack_related_packets_total",
       "ignored": "ctrack_ignored_packets_total", "expired": "ctrack_expired_total",
       "deleted": "ctrack_deleted_total"}


def counters_of_page(m):
    v = {k: m.get(("ctrack_stat_%s_total" % k, frozenset())) for k in STATS}
    for k, n in OWN.items():
        v[k] = m.get((n, frozenset()))
    v["frames"] = m.get(("ctrack_capture_packets_total", frozenset({("interface", "replay")})))
    for (n, labels), val in m.items():
        if n == "ctrack_invalid_packets_total" and val:
            v["invalid:" + dict(labels)["reason"]] = val
    return v


def counters_of_stats(st):
    t = st["total"]
    v = {k: t[k] for k in STATS}
    for k in OWN:
        v[k] = t[k]
    v["frames"] = sum(c["frames"] for c in st["cpu"])
    for r, n in t.get("invalid_by_reason", {}).items():
        v["invalid:" + r] = n
    return v


def by_state(m):
    return {tuple(sorted(dict(labels).items())): v for (n, labels), v in m.items()
            if n == "ctrack_connections"}


def listing_by_state(dm):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(dm.sock)
    s.sendall(b'{"v":1,"cmd":"list","format":"json"}\n')
    lines = dm_util.read_lines(s)
    s.close()
    c = Counter()
    for ln in lines:
        if ln.startswith('{"v":'):
            continue
        e = json.loads(ln)
        c[(("protocol", e["proto"]), ("state", e.get("state", "none")),
           ("zone", str(e.get("zone", 0))))] += 1
    return dict(c)


def metrics_case():
    name = "daemon metrics"
    if not CURL:
        eu.skip(name, "curl is not installed")
        return
    part_a = flows_capture("a", udp=400, tcp=100, icmp=50, span_ms=3000)
    part_b = flows_capture("b", udp=0, udp6=300, span_ms=2000)
    # part B's flows are new ones: other addresses than A's
    port = eu.free_port(socket.SOCK_STREAM)
    dm = FifoDaemon(["--metrics-listen", str(port), "--workers", "2"], speed="1")
    addr = "127.0.0.1:%d" % port
    fed0 = dm.frames
    dm.wait_tracked()
    # a scrape while part A is released (3 s at its own pace): between the
    # stats after it and the scrape after those
    dm.feed(part_a, fill=False)
    time.sleep(0.8)
    p1 = scrape(addr)
    s1 = dm.stats()
    p2 = scrape(addr)
    bad = []
    if p1 and p2:
        c1, cs, c2 = counters_of_page(eu.metrics_page(p1)), counters_of_stats(s1), \
            counters_of_page(eu.metrics_page(p2))
        for k in ("found", "insert", "packets", "frames"):
            if not (c1[k] is not None and c2[k] is not None and c1[k] <= cs[k] <= c2[k]):
                bad.append((k, c1[k], cs[k], c2[k]))
        moving = c1["frames"] < len(part_a) + fed0
    else:
        moving = False
        bad.append("no scrape")
    eu.ok(p1 and p2 and not bad and moving,
          "%s: a scrape while frames arrive lies between ctrack stats and the next "
          "scrape (found, insert, packets, frames)" % name, repr(bad))
    if p1:
        eu.promtool_check(p1, "%s: a scrape during the traffic passes promtool check metrics"
                          % name)
    dm.feed([], fill=True)
    quiet = []
    for part, label in ((None, "after part A"), (part_b, "after part B")):
        if part:
            dm.feed(part)
        ok_t = dm.wait_tracked()
        time.sleep(0.3)
        page = scrape(addr)
        st = dm.stats()
        m = eu.metrics_page(page) if page else {}
        cp, cs = counters_of_page(m), counters_of_stats(st)
        states = by_state(m)
        lst = listing_by_state(dm)
        quiet.append((cp, cs))
        eu.ok(ok_t and page and cp == cs and cs["frames"] >= dm.real and states == lst,
              "%s, %s (quiet): the scrape's counters are ctrack stats' exactly (%d "
              "counters, %d frames), connections by state the listing's" %
              (name, label, len(cs), cs["frames"]),
              "scrape %r\nstats  %r\nstates %r\nlist   %r" % (cp, cs, states, lst))
    if len(quiet) == 2:
        (a, _), (b, _) = quiet
        eu.ok(b["insert"] - a["insert"] == 300 and b["frames"] - a["frames"] >= len(part_b),
              "%s: between the quiet moments the counters moved by part B (300 new "
              "connections, at least its %d frames)" % (name, len(part_b)),
              "%r -> %r" % (a, b))
    # the daemon's own families
    m = eu.metrics_page(scrape(addr) or "")
    have = {n for n, _ in m}
    want = {"ctrack_capture_packets_total", "ctrack_event_ring_drops_total",
            "ctrack_export_queue_drops_total", "ctrack_worker_burst_duration_seconds_bucket",
            "ctrack_worker_burst_duration_seconds_count"}
    bursts = sum(v for (n, _), v in m.items()
                 if n == "ctrack_worker_burst_duration_seconds_count")
    st = dm.stats()
    eu.ok(want <= have and bursts == sum(c["bursts"] for c in st["cpu"]),
          "%s: capture, event ring, export queue and burst-duration families, bursts as "
          "ctrack stats counts them (%d)" % (name, bursts), repr(want - have))
    # a slow event client's losses appear per client
    dm.close_feed()
    dm.stop()


# ---- failures ----

def refused_tcp_case():
    port = eu.free_port(socket.SOCK_STREAM)
    sock = os.path.join(TMP, "refused.sock")
    t0 = time.time()
    r = subprocess.run([CT, "daemon", "--socket", sock, "--replay",
                        os.path.join(HERE, "..", "..", "samples", "sample.pcap"), "--ipfix",
                        "127.0.0.1:%d" % port, "--ipfix-transport", "tcp"],
                       capture_output=True, text=True, timeout=60)
    dt = time.time() - t0
    eu.ok(r.returncode == 1 and "refused" in r.stderr and "127.0.0.1:%d" % port in r.stderr
          and "replaying" not in r.stderr and dt < 10 and not os.path.exists(sock),
          "a TCP collector that refuses: the daemon stops at start naming it (exit 1, "
          "%.1f s)" % dt, "rc=%d stderr=%s" % (r.returncode, r.stderr))


def absent_udp_case():
    port = eu.free_port()
    frames = flows_capture("absent", udp=200, span_ms=500)
    dm = FifoDaemon(["--ipfix", "127.0.0.1:%d" % port, "--set", "nf_conntrack_udp_timeout=1"])
    dm.feed(frames)
    ok_t = dm.wait_tracked()
    deadline = time.time() + 20
    st = dm.stats()
    while time.time() < deadline:
        st = dm.stats()
        if st["export"]["ipfix"]["records"] >= 200 and st["total"]["count"] == 0:
            break
        time.sleep(0.2)
    time.sleep(1.5)
    st = dm.stats()
    x = st["export"]["ipfix"]
    dm.close_feed()
    rc = dm.stop()
    eu.ok(ok_t and st["total"]["insert"] == 200 and st["total"]["expired"] == 200 and
          x["records"] == 200 and x["refused"] + x["send_errors"] >= 1 and rc == 0,
          "a UDP collector that is not there: every connection tracked and expired (200), "
          "the send failures counted (%d refused)" % x["refused"], repr(st.get("export")))


def stalled_tcp_case():
    """A TCP collector that accepts and never reads: the export's queue (4
    MiB) and the socket fill, messages are dropped and counted, tracking
    goes on.  150,000 records (~10 MB) are more than both hold; they come
    over 3 s of replay, with event rings large enough that none is lost
    before the export (what a ring loses is counted apart: lost_in_rings,
    the destroy case and docs/export.md)."""
    n = 150000
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    port = ls.getsockname()[1]
    frames = flows_capture("stall", udp=n, span_ms=3000, one_way=True)
    dm = FifoDaemon(["--ipfix", "127.0.0.1:%d" % port, "--ipfix-transport", "tcp",
                     "--set", "nf_conntrack_udp_timeout=1", "--set", "nf_conntrack_max=262144",
                     "--event-ring", "131072", "--workers", "2"], speed="1")
    t0 = time.time()
    dm.feed(frames)
    ok_t = dm.wait_tracked(timeout=120)
    dt = time.time() - t0
    deadline = time.time() + 90
    st = dm.stats()
    while time.time() < deadline:
        st = dm.stats()
        if st["total"]["expired"] == n and st["export"]["exported"] + \
                st["events"]["lost_in_rings"] == n:
            break
        time.sleep(0.2)
    x = st["export"]["ipfix"]
    responsive = dm.request({"v": 1, "cmd": "count"}).get("count") == 0
    dm.close_feed()
    t1 = time.time()
    rc = dm.stop()
    dts = time.time() - t1
    ls.close()
    eu.ok(ok_t and st["total"]["insert"] == n and st["total"]["expired"] == n and
          st["export"]["exported"] == n and x["dropped_messages"] > 0 and
          x["records_lost"] > 0 and responsive and rc == 4 and dts < 20 and
          "not delivered" in dm.log(),
          "a TCP collector that stops reading: all %d connections tracked (%.1f s) and "
          "expired, %d messages (%d records) dropped and counted, stop within %.1f s, exit 4" %
          (n, dt, x["dropped_messages"], x["records_lost"], dts),
          "tracked=%s rc=%s total=%r events=%r export=%r log=%s" % (
              ok_t, rc, {k: st["total"][k] for k in ("insert", "expired", "count")},
              st.get("events"), st.get("export"), dm.log()[-600:]))


def metrics_port_in_use_case():
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    port = ls.getsockname()[1]
    r = subprocess.run([CT, "daemon", "--socket", os.path.join(TMP, "busy.sock"), "--replay",
                        os.path.join(HERE, "..", "..", "samples", "sample.pcap"),
                        "--metrics-listen", "127.0.0.1:%d" % port],
                       capture_output=True, text=True, timeout=60)
    ls.close()
    eu.ok(r.returncode == 1 and "--metrics-listen 127.0.0.1:%d" % port in r.stderr,
          "a metrics port in use: the daemon stops at start naming it", r.stderr)


def config_case():
    cf = os.path.join(TMP, "bad.conf")
    with open(cf, "w") as f:
        f.write("replay = /dev/null\n# IPFIX\nipfix = nowhere\n")
    r = subprocess.run([CT, "daemon", "--config", cf, "--check"], capture_output=True,
                       text=True)
    eu.ok(r.returncode == 1 and "%s:3" % cf in r.stderr and "HOST:PORT" in r.stderr,
          "a bad ipfix line in the config file: an error naming file and line", r.stderr)
    with open(cf, "w") as f:
        f.write("replay = /dev/null\nipfix = 127.0.0.1:4739\nipfix-transport = tcp\n"
                "ipfix-active-timeout = 60\nipfix-uniflow\nmetrics-listen = 9469\n"
                "export-queue = 4096\n")
    r = subprocess.run([CT, "daemon", "--config", cf, "--check"], capture_output=True,
                       text=True)
    eu.ok(r.returncode == 0 and "valid" in r.stdout,
          "the export options as config-file keys", r.stdout + r.stderr)
    r = subprocess.run([CT, "daemon", "--replay", "/dev/null", "--ipfix-uniflow", "--check"],
                       capture_output=True, text=True)
    eu.ok(r.returncode == 1 and "--ipfix" in r.stderr,
          "an --ipfix-* option without --ipfix is an error", r.stderr)


def main():
    try:
        config_case()
        refused_tcp_case()
        metrics_port_in_use_case()
        destroy_case()
        tcp_destroy_case()
        open_at_stop_case()
        active_timeout_case()
        metrics_case()
        absent_udp_case()
        stalled_tcp_case()
    finally:
        cleanup()
    eu.done()


if __name__ == "__main__":
    main()
