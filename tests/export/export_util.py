# SPDX-License-Identifier: BSD-3-Clause
"""export_util.py - what the export tests share: TAP output, free ports,
ctrack's own view of a replay (its JSON events and table), and the flows
that view says a collector must receive.

The expected flows come from `ctrack read -e -o json`: one per DESTROY
event, one per connection still in the table at the end (exported as
"forced end"), each with both directions' packets and bytes, the first
and last packet times in milliseconds and the zone.  The collectors'
views (nfdump, ipfix2csv) are decoded by the collectors themselves; the
tests only compare.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter

_n = 0
_failed = 0


def ok(cond, name, diag=None):
    global _n, _failed
    _n += 1
    if cond:
        print("ok %d - %s" % (_n, name))
    else:
        _failed += 1
        print("not ok %d - %s" % (_n, name))
        if diag:
            for line in str(diag).splitlines()[:40]:
                print("# " + line)
    sys.stdout.flush()
    return cond


def skip(name, why):
    global _n
    _n += 1
    print("ok %d - %s # SKIP %s" % (_n, name, why))
    sys.stdout.flush()


def done():
    print("1..%d" % _n)
    sys.exit(1 if _failed else 0)


def free_port(kind=socket.SOCK_DGRAM):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def ns_to_ms(text):
    """'1796000283.180220000' (ctrack's JSON times) -> integer ms."""
    sec, _, frac = text.partition(".")
    return int(sec) * 1000 + int((frac + "000")[:3])


def ctrack_view(ct, pcap, args=()):
    """(destroy events, final table) of `ctrack read -e -o json`, as parsed
    dicts with the times kept as exact strings."""
    out = subprocess.run([ct, "read", "-e", "-o", "json", *args, pcap],
                         capture_output=True, text=True, check=False)
    destroys, table = [], []
    for line in out.stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        # keep the time fields' exact decimal text
        d = json.loads(line, parse_float=str)
        if d.get("event") == "destroy":
            destroys.append(d)
        elif "event" not in d and "stats" not in d:
            table.append(d)
    return destroys, table


def _ports(side, proto):
    if proto in ("icmp", "icmpv6"):
        return 0, side.get("type", 0) * 256 + side.get("code", 0)
    if proto in ("tcp", "udp", "udplite", "sctp", "dccp"):
        return side["sport"], side["dport"]
    return 0, 0


def flow_key(protonum, src, dst, sport, dport, zone, inp, inb, outp, outb, first, last):
    return (protonum, src, dst, sport, dport, zone, inp, inb, outp, outb, first, last)


def expected_biflows(destroys, table):
    """Counter of flow keys a biflow collector must show."""
    c = Counter()
    for d in destroys + table:
        o, r = d["orig"], d["reply"]
        sp, dp = _ports(o, d["proto"])
        c[flow_key(d["protonum"], o["src"], o["dst"], sp, dp, d.get("zone", 0),
                   o["packets"], o["bytes"], r["packets"], r["bytes"],
                   ns_to_ms(d["first_seen"]), ns_to_ms(d["last_seen"]))] += 1
    return c


def expected_uniflows(destroys, table):
    """Counter of (proto, src, dst, sport, dport, zone, packets, bytes,
    first, last): the original direction of every connection, the reply
    direction of those that had replies."""
    c = Counter()
    for d in destroys + table:
        for side, always in (("orig", True), ("reply", False)):
            s = d[side]
            if not always and not s["packets"]:
                continue
            sp, dp = _ports(s, d["proto"])
            c[(d["protonum"], s["src"], s["dst"], sp, dp, d.get("zone", 0),
               s["packets"], s["bytes"], ns_to_ms(d["first_seen"]),
               ns_to_ms(d["last_seen"]))] += 1
    return c


def _iso_ms(text):
    import datetime
    dt = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%f")
    dt = dt.replace(tzinfo=datetime.timezone.utc)
    return int(dt.timestamp()) * 1000 + dt.microsecond // 1000


class NfdumpError(Exception):
    """nfdump printed something that is not its JSON (the text says what)."""


def nfdump_flows(files):
    """Every flow nfdump reads from @files, as dicts (TZ=UTC, so that its
    local times are Unix times).  A file without flows is an empty list
    (nfdump 1.7.1 prints "[", "No matching flows", "]" for it: not
    JSON); anything else that is not JSON raises NfdumpError with what
    nfdump printed on both streams."""
    flows = []
    for f in files:
        out = subprocess.run(["nfdump", "-r", f, "-o", "json"], capture_output=True,
                             text=True, env=dict(os.environ, TZ="UTC"), check=False)
        text = out.stdout.strip()
        if text.replace("\n", "").replace(" ", "") in ("", "[Nomatchingflows]"):
            if out.returncode != 0 or out.stderr.strip():
                raise NfdumpError("nfdump -r %s: exit %d, stdout %r, stderr %r" %
                                  (f, out.returncode, out.stdout[:400], out.stderr[:400]))
            continue
        try:
            flows += json.loads(text)
        except ValueError as e:
            raise NfdumpError("nfdump -r %s -o json printed no JSON (%s): exit %d, "
                              "stdout %r, stderr %r" % (f, e, out.returncode,
                                                        out.stdout[:400], out.stderr[:400]))
    return flows


def udp_socket_state(port):
    """(bytes queued, drops) of the UDP socket bound to 127.0.0.1:@port,
    from /proc/net/udp (None when there is none)."""
    want = "0100007F:%04X" % port
    try:
        with open("/proc/net/udp") as f:
            for line in f.readlines()[1:]:
                col = line.split()
                if col[1] == want:
                    return int(col[4].split(":")[1], 16), int(col[-1])
    except OSError:
        pass
    return None


def metrics_page(page):
    """A Prometheus text page as {(name, frozenset(labels)): value}
    (test_metrics.py, test_daemon_export.py)."""
    out = {}
    for line in page.splitlines():
        if not line or line.startswith("#"):
            continue
        name_labels, value = line.rsplit(" ", 1)
        if "{" in name_labels:
            name, rest = name_labels.split("{", 1)
            labels = frozenset(tuple(kv.split("=", 1)) for kv in
                               rest.rstrip("}").replace('"', "").split(","))
        else:
            name, labels = name_labels, frozenset()
        out[(name, labels)] = float(value)
    return out


def promtool_check(page, name):
    """Case @name: `promtool check metrics` (Debian prometheus) passes
    @page with nothing to say; a SKIP without promtool."""
    promtool = shutil.which("promtool")
    if not promtool:
        skip(name, "promtool is not installed (Debian package prometheus)")
        return
    r = subprocess.run([promtool, "check", "metrics"], input=page, capture_output=True,
                       text=True)
    ok(r.returncode == 0 and not r.stdout.strip() and not r.stderr.strip(), name,
       r.stdout + r.stderr)


def prom_value(path, name, labels=""):
    """A sample's value in a Prometheus text file (None if absent)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(name + labels + " "):
                    return float(line.rsplit(" ", 1)[1])
    except OSError:
        pass
    return None


class Nfcapd:
    """nfcapd (nfdump 1.7.1) on loopback, and how to stop it without losing
    what it has not read yet.

    nfcapd stops at SIGTERM without reading what waits in its socket: a
    SIGTERM under load, before it got to the datagrams, left files with
    no flows (nfdump then prints "No matching flows").  So stop() first
    waits, by count, until nfcapd has read every datagram the exporter
    says it sent: nfcapd repeats each datagram it reads (-R) to a socket
    of ours, and a thread counts them.  Without a count to wait for, it
    waits until nfcapd's socket is empty and nothing new was read for a
    moment.  Either wait is bounded; what it saw is in self.diag."""

    def __init__(self, tmp, started, port=None):
        import threading
        self.port = port or free_port()
        self.dir = tempfile.mkdtemp(dir=tmp, prefix="nfcapd.")
        self.log = os.path.join(tmp, os.path.basename(self.dir) + ".log")
        self.rep = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.rep.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.rep.bind(("127.0.0.1", 0))
        self.read = 0
        self.diag = ""
        self._done = False
        self._lock = threading.Lock()
        self._t = threading.Thread(target=self._count, daemon=True)
        self._t.start()
        # -B: the socket buffer rmem_max allows (4 MiB here), as a
        # collector for bursts is set up; -R: every datagram read, to us
        with open(self.log, "wb") as lf:
            self.p = subprocess.Popen(["nfcapd", "-b", "127.0.0.1", "-p", str(self.port),
                                       "-w", self.dir, "-t", "3600", "-B", "4194304",
                                       "-R", "127.0.0.1/%d" % self.rep.getsockname()[1]],
                                      stdout=lf, stderr=subprocess.STDOUT)
        started.append(self.p)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if "Startup nfcapd" in self.log_text() and udp_socket_state(self.port):
                return
            if self.p.poll() is not None:
                break
            time.sleep(0.02)
        raise RuntimeError("nfcapd did not start on port %d: %s" % (self.port,
                                                                     self.log_text()[-500:]))

    def _count(self):
        self.rep.settimeout(0.1)
        while not self._done:
            try:
                self.rep.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            with self._lock:
                self.read += 1

    def log_text(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def datagrams_read(self):
        with self._lock:
            return self.read

    def wait_read(self, expect=None, timeout=60):
        """Until nfcapd has read @expect datagrams (None: until its socket
        is empty and 0.3 s passed without a datagram read); False when the
        time ran out."""
        deadline = time.monotonic() + timeout
        last, still = -1, 0
        while time.monotonic() < deadline:
            n = self.datagrams_read()
            st = udp_socket_state(self.port)
            if expect is not None and n >= expect:
                return True
            if expect is None:
                if n == last and st and st[0] == 0:
                    still += 1
                    if still >= 6:
                        return True
                else:
                    still = 0
            last = n
            time.sleep(0.05)
        return False

    def stop(self, expect=None, timeout=60):
        """Stop it (it writes its file on SIGTERM) once it has read what
        was sent (wait_read); the flows it stored."""
        settled = self.wait_read(expect, timeout)
        st = udp_socket_state(self.port)
        self.p.send_signal(signal.SIGTERM)
        self.p.wait(timeout=30)
        self._done = True
        self._t.join()
        self.rep.close()
        self.diag = ("nfcapd read %d datagrams%s%s; its socket: %s; its log ends: %s" % (
            self.datagrams_read(),
            "" if expect is None else " of the %d the exporter sent" % expect,
            "" if settled else " (gave up waiting after %d s)" % timeout,
            "%d bytes unread, %d dropped" % st if st else "gone",
            " | ".join(self.log_text().strip().splitlines()[-3:])))
        files = [os.path.join(self.dir, f) for f in os.listdir(self.dir)
                 if f.startswith("nfcapd.2")]
        return nfdump_flows(sorted(files))


def nfdump_key(fl, uniflow=False):
    src = fl.get("src4_addr") or fl.get("src6_addr")
    dst = fl.get("dst4_addr") or fl.get("dst6_addr")
    if fl["proto"] in (1, 58):
        sp, dp = 0, fl.get("icmp_type", 0) * 256 + fl.get("icmp_code", 0)
    else:
        sp, dp = fl.get("src_port", 0), fl.get("dst_port", 0)
    zone = int(fl.get("ingress_vrf", "0"))
    first, last = _iso_ms(fl["first"]), _iso_ms(fl["last"])
    if uniflow:
        return (fl["proto"], src, dst, sp, dp, zone, fl["in_packets"], fl["in_bytes"],
                first, last)
    return flow_key(fl["proto"], src, dst, sp, dp, zone, fl["in_packets"], fl["in_bytes"],
                    fl.get("out_packets", 0), fl.get("out_bytes", 0), first, last)


def diff(want, got):
    missing = want - got
    extra = got - want
    lines = ["missing (%d):" % sum(missing.values())]
    lines += ["  %r" % (k,) for k in list(missing)[:8]]
    lines += ["unexpected (%d):" % sum(extra.values())]
    lines += ["  %r" % (k,) for k in list(extra)[:8]]
    return "\n".join(lines)
