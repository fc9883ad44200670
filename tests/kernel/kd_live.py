#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""kd_live: `ctrack daemon` against the kernel's conntrack, live, side by side.

The topology of the kernel oracle (kd_netns: client - router - server, each in
a namespace this test makes and removes), with the router's nf_conntrack
tracking the forwarded traffic and `ctrack daemon -i r0 -i r1 --workers 2`
running in the router namespace, watching the same two ports through its
AF_PACKET rings.  Real traffic from the kernels' own stacks (kd_traffic): HTTP
over IPv4 and IPv6, connections held open, UDP, ping, a refused connect, an
RST, a UDP datagram to a closed port, fragmented datagrams both ways in both
families; the router's timeouts are shortened so
that entries expire during the run.

At several moments during and after the traffic (each after a short quiet
spell, so that no packet is between the two trackers) the router's
`conntrack -L -o extended` and `ctrack list -o extended` are taken one after
the other and compared entry by entry (kd_compare's rules: state, tuples,
flags, counters, mark, zone exact; timeouts within 2 s): at least 99.5% of the
kernel's entries exact and no extra entry.  conntrack's filters are compared
the same way on one of those moments.  The events: the kernel's, read without
loss from ctnetlink by kd_events.py (what `conntrack -E -o timestamp,extended`
prints; conntrack -E itself loses events, KERNEL-ORACLE-FACTS.md), against
`ctrack events -o timestamp,extended`: per connection the same sequence, and
every DESTROY of a timeout within 1 s of the kernel's.  kd_events reads
/proc/net/nf_conntrack every 250 ms, so the kernel's lazily reaped entries
report their DESTROY within a quarter second of the expiry.

TAP on stdout; exit 77 (skip) with one line saying why when the kernel side
cannot run here.  Usage: kd_live.py --ctrack PATH [--keep DIR]
"""

import argparse
import collections
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "support"))

import kd_compare  # noqa: E402
import kd_ctline  # noqa: E402
import kd_netns  # noqa: E402
import kd_traffic  # noqa: E402
from tap import Tap  # noqa: E402  (tests/support/tap.py)

SKIP = 77
THRESHOLD_PCT = 99.5
DESTROY_SLACK_S = 1.0

# Short timeouts, so that entries expire while the test runs.
ROUTER_SYSCTLS = {
    "net.netfilter.nf_conntrack_udp_timeout": 4,
    "net.netfilter.nf_conntrack_udp_timeout_stream": 9,
    "net.netfilter.nf_conntrack_icmp_timeout": 4,
    "net.netfilter.nf_conntrack_icmpv6_timeout": 4,
    "net.netfilter.nf_conntrack_tcp_timeout_time_wait": 5,
    "net.netfilter.nf_conntrack_tcp_timeout_close": 3,
    "net.netfilter.nf_conntrack_tcp_timeout_fin_wait": 5,
    "net.netfilter.nf_conntrack_tcp_timeout_close_wait": 5,
    "net.netfilter.nf_conntrack_tcp_timeout_last_ack": 5,
    "net.netfilter.nf_conntrack_tcp_timeout_syn_sent": 5,
    "net.netfilter.nf_conntrack_tcp_timeout_syn_recv": 5,
}


def skip_reason(ctrack):
    if os.geteuid() != 0:
        return "not root: the live oracle creates network namespaces"
    for tool in ("ip", "nft", "conntrack", "sysctl"):
        if not shutil.which(tool):
            return "%s is not installed (apt-get install iproute2 nftables conntrack)" % tool
    if not ctrack or not os.access(ctrack, os.X_OK):
        return "ctrack was not built (%s)" % ctrack
    name = "%s%d-%06x-probe" % (kd_netns.NS_PREFIX, os.getpid(), os.getpid() & 0xffffff)
    try:
        kd_netns.run(["ip", "netns", "add", name])
    except kd_netns.NetnsError as e:
        return "cannot create a network namespace: %s" % e
    try:
        kd_netns.run(["ip", "netns", "exec", name, "nft", "add", "table", "inet", "probe"])
    except kd_netns.NetnsError as e:
        return "nftables is not usable in a namespace: %s" % e
    finally:
        kd_netns.run(["ip", "netns", "del", name], check=False)
    return None


class Daemon:
    """ctrack daemon in the router namespace, and its clients (run anywhere: the
    control socket is a file)."""

    def __init__(self, topo, ctrack, workdir, sysctl_file, extra=(), logname="daemon.log"):
        self.ctrack = ctrack
        self.sock = os.path.join(workdir, "ctrack.sock")
        self.log = open(os.path.join(workdir, logname), "w")
        argv = [ctrack, "daemon", "-i", "r0", "-i", "r1", "--workers", "2", "--socket",
                self.sock, "--sysctl-file", sysctl_file, "--router"] + list(extra)
        self.proc = topo.start("router", argv, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 20
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise kd_netns.NetnsError("ctrack daemon exited with %s (see %s)"
                                          % (self.proc.returncode, self.log.name))
            if os.path.exists(self.sock) and self.run("count", check=False)[0] == 0:
                return
            time.sleep(0.1)
        raise kd_netns.NetnsError("ctrack daemon did not answer within 20 s")

    def run(self, *args, check=True):
        p = subprocess.run([self.ctrack] + list(args) + ["--socket", self.sock],
                           capture_output=True, text=True, timeout=60)
        if check and p.returncode != 0:
            raise kd_netns.NetnsError("ctrack %s: exit %d: %s" % (" ".join(args), p.returncode,
                                                                 p.stderr.strip()))
        return p.returncode, p.stdout, p.stderr

    def events(self, outfile):
        self.ev_out = open(outfile, "w")
        self.ev_err = open(outfile + ".stderr", "w")
        self.ev = subprocess.Popen([self.ctrack, "events", "-o", "timestamp,extended",
                                    "--socket", self.sock], stdout=self.ev_out,
                                   stderr=self.ev_err)

    def stop(self, sig=signal.SIGTERM):
        if getattr(self, "ev", None) and self.ev.poll() is None:
            self.ev.terminate()
            self.ev.wait(timeout=5)
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def kernel_table(topo, *filt):
    out = kd_netns.run(topo.exec_argv("router", ["conntrack", "-L", "-o", "extended"] +
                                      list(filt)))
    recs, _ = kd_ctline.parse_lines(out)
    return [r for r in recs if r["event"] is None]


def ctrack_table(dm, *filt):
    _, out, _ = dm.run("list", "-o", "extended", *filt)
    recs, other = kd_ctline.parse_lines(out)
    return [r for r in recs if r["event"] is None], other


def compare_tables(ktab, ctab):
    """Returns (exact, extra, lines) over the kernel's entries (kd_compare's rules,
    both read at the same moment: no gap)."""
    by_key = collections.defaultdict(list)
    for c in ctab:
        by_key[kd_ctline.key(c)].append(c)
    exact, lines, used = 0, [], set()
    for k in ktab:
        cs = by_key.get(kd_ctline.key(k))
        if not cs:
            lines.append("MISSING  kernel: %s" % k["line"])
            continue
        c = cs.pop(0)
        used.add(id(c))
        kf, cf = kd_compare._fields(k), kd_compare._fields(c)
        diffs = ["%s: kernel %s, ctrack %s" % (f, kf[f], cf[f]) for f in kf if kf[f] != cf[f]]
        if k["timeout"] is not None and c["timeout"] is not None and \
                abs(k["timeout"] - c["timeout"]) > kd_compare.TIMEOUT_SLACK_S:
            diffs.append("timeout: kernel %d, ctrack %d" % (k["timeout"], c["timeout"]))
        if diffs:
            lines.append("DIFFER   kernel: %s\n         ctrack: %s\n         %s"
                         % (k["line"], c["line"], "; ".join(diffs)))
        else:
            exact += 1
    extra = [c for c in ctab if id(c) not in used]
    for c in extra:
        lines.append("EXTRA    ctrack: %s" % c["line"])
    return exact, len(extra), lines


class Traffic:
    """The scenario, in phases; sockets stay open until close()."""

    def __init__(self, topo, workdir):
        self.ctx = kd_traffic.Ctx(topo, workdir)
        self.held = []
        self.notes = []
        self.udp = {}
        ctx = self.ctx
        for v in (4, 6):
            ctx.http_server(v, 8080, {"small.txt": b"s" * 1000,
                                      "big.bin": bytes(range(256)) * 400})
            ctx.tcp_sink_source(v, 7000, send_bytes=3000, close_after=False)
            ctx.udp_echo(v, 5300)
        ctx.udp_bind("server", 4, 5310)   # bound, never answers

    def phase_a(self):
        ctx = self.ctx
        for v in (4, 6):
            ctx.http_get(v, 8080, ["/small.txt", "/big.bin"], keepalive=True)
            s = ctx.connect(v, 7000)
            s.sendall(b"hello\n")
            _read(s, 3000)
            self.held.append(s)
            u = ctx.udp_client(v)
            ctx.udp_ask(u, v, 5300)
            self.udp[v] = u
            ctx.ping(v, count=2, interval=0.05)
            try:
                ctx.connect(v, 9, timeout=2)
                self.notes.append("a connect to a closed port succeeded")
            except OSError:
                pass
            # an RST in mid-connection: SO_LINGER 0 makes close() send one
            r = ctx.connect(v, 7000)
            r.sendall(b"x\n")
            _read(r, 3000)
            r.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            r.close()
        # volume: many short HTTP connections and UDP flows at once, from
        # threads, both families
        def http_many(v, n):
            for _ in range(n):
                ctx.http_get(v, 8080, ["/small.txt"], keepalive=False)

        def udp_many(v, n):
            for _ in range(n):
                ctx.udp_ask(ctx.udp_client(v), v, 5300)
        ts = [threading.Thread(target=f, args=(v, n)) for f, n in ((http_many, 40),
                                                                 (udp_many, 60))
              for v in (4, 6)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        # datagrams larger than the veth's MTU, both ways: the kernel's
        # fanout reassembles the IPv4 ones (PACKET_FANOUT_FLAG_DEFRAG), the
        # worker the IPv6 ones; conntrack counts each datagram once
        for v in (4, 6):
            big = ctx.udp_client(v)
            ctx.udp_ask(big, v, 5300, payload=b"F" * 3000)
            ctx.udp_ask(big, v, 5300, payload=b"G" * 5000)
        # UDP to a closed port: the server's ICMP port unreachable is RELATED
        u = ctx.udp_client(4)
        ctx.udp_ask(u, 4, 5399, wait_reply=False)
        # UDP that nobody answers
        ctx.udp_ask(u, 4, 5310, wait_reply=False)

    def phase_b(self):
        ctx = self.ctx
        for v in (4, 6):
            ctx.udp_ask(self.udp[v], v, 5300)   # > 2 s later: ASSURED
            ctx.ping(v, count=1)
            ctx.http_get(v, 8080, ["/small.txt"], keepalive=False)

    def phase_c(self):
        for s in self.held:
            try:
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        time.sleep(0.2)
        for s in self.held:
            s.close()
        self.held = []

    def close(self):
        self.ctx.close()


def _read(s, n):
    got = 0
    s.settimeout(5)
    while got < n:
        d = s.recv(65536)
        if not d:
            break
        got += len(d)
    return got


def destroy_times(events):
    """{key: ts} of each connection's DESTROY without time left (a timeout)."""
    out = {}
    for e in events:
        if e["event"] == "DESTROY" and e["timeout"] is None and e["ts"] is not None:
            out.setdefault(kd_ctline.key(e), e["ts"])
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ctrack", required=True)
    ap.add_argument("--keep", help="keep the recordings in this directory")
    args = ap.parse_args(argv)
    reason = skip_reason(args.ctrack)
    if reason:
        print("1..0 # SKIP live oracle: %s" % reason)
        # the plan says skip; meson's TAP reader takes any non-zero
        # status for an error, whatever the plan says (kdiff.py's --skip-exit 0)
        return 0
    tap = Tap(details_always=True, detail_lines=None)
    workdir = args.keep or tempfile.mkdtemp(prefix="ctk-live-")
    os.makedirs(workdir, exist_ok=True)
    topo = kd_netns.Topology()
    dm = traffic = kev = None
    snapshots = []
    try:
        topo.build(router_sysctls=ROUTER_SYSCTLS)
        sysctls = os.path.join(workdir, "router-sysctls.txt")
        with open(sysctls, "w") as f:
            f.write(topo.router_sysctl_dump())
        kfile = os.path.join(workdir, "kernel-events.txt")
        kev = topo.start("router", [sys.executable, os.path.join(HERE, "kd_events.py"), kfile,
                                    "--poke-ms", "250"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if kev.stdout.readline().strip() != "ready":
            raise kd_netns.NetnsError("the kernel's event reader did not start")
        dm = Daemon(topo, args.ctrack, workdir, sysctls)
        cfile = os.path.join(workdir, "ctrack-events.txt")
        dm.events(cfile)
        time.sleep(0.5)
        traffic = Traffic(topo, workdir)

        def snapshot(name):
            time.sleep(0.4)   # nothing in flight between the trackers
            k = kernel_table(topo)
            c, other = ctrack_table(dm)
            exact, extra, lines = compare_tables(k, c)
            pct = 100.0 * exact / len(k) if k else 100.0
            snapshots.append((name, len(k), exact, extra))
            tap.ok(pct >= THRESHOLD_PCT and extra == 0 and not other,
                   "%s: kernel %d entries, ctrack %d exact (%.1f%%), %d extra"
                   % (name, len(k), exact, pct, extra), lines[:40] + other[:5])
            return k, c

        t0 = time.time()
        traffic.phase_a()
        k1, _ = snapshot("during the traffic (HTTP, held TCP, UDP, ping, refused, RST)")
        tap.ok(len(k1) >= 200, "the first moment has the entries the traffic makes (%d)" % len(k1))

        # conntrack's filters on the same moment's table
        filters = [["-p", "tcp"], ["-p", "udp"], ["-f", "ipv6"], ["-f", "ipv4"],
                   ["-s", topo.client4], ["-d", topo.server6], ["-r", topo.server4],
                   ["-p", "tcp", "--dport", "7000"], ["-p", "tcp", "--state", "ESTABLISHED"],
                   ["-p", "udp", "--sport", "0"], ["-u", "ASSURED"], ["-u", "UNREPLIED"],
                   ["-u", "SEEN_REPLY"], ["-m", "0"], ["-m", "1/0x1"], ["-w", "0"],
                   ["-p", "icmp"], ["-s", "10.71.0.0/16"], ["-p", "17"]]
        bad = []
        for flt in filters:
            k = {kd_ctline.key(r) for r in kernel_table(topo, *flt)}
            c = {kd_ctline.key(r) for r in ctrack_table(dm, *flt)[0]}
            if k != c:
                bad.append("%s: kernel %d, ctrack %d, only kernel %s, only ctrack %s"
                           % (" ".join(flt), len(k), len(c),
                              [kd_ctline.key_text(x) for x in k - c][:3],
                              [kd_ctline.key_text(x) for x in c - k][:3]))
        tap.ok(not bad, "conntrack's filters select the same entries (%d filters)"
               % len(filters), bad)

        # get: one of the kernel's TCP entries, by its original tuple
        tcp = [r for r in k1 if r["proto"] == "tcp" and r["state"] == "ESTABLISHED"]
        if tcp:
            o = dict(tcp[0]["orig"])
            rc, out, err = dm.run("get", "-p", "tcp", "-s", o["src"], "-d", o["dst"],
                                  "--sport", o["sport"], "--dport", o["dport"], "-o",
                                  "extended", check=False)
            got, _ = kd_ctline.parse_lines(out)
            tap.ok(rc == 0 and len(got) == 1 and kd_ctline.key(got[0]) == kd_ctline.key(tcp[0]),
                   "ctrack get finds the kernel's ESTABLISHED entry by its tuple",
                   [out, err] if rc else [])
        rc, out, _ = dm.run("stats", check=False)
        cpu = [ln for ln in out.splitlines() if ln.startswith("cpu=")]
        tap.ok(rc == 0 and len(cpu) == 2, "ctrack stats prints a cpu=N line per worker (%d)"
               % len(cpu), [out])

        while time.time() - t0 < 3.0:
            time.sleep(0.1)
        traffic.phase_b()
        snapshot("after the second phase (UDP assured, more HTTP)")
        while time.time() - t0 < 9.5:
            time.sleep(0.2)
        snapshot("after the first phase's UDP, ICMP and TIME_WAIT expired")
        traffic.phase_c()
        snapshot("held connections closed")
        time.sleep(12)
        kl, _ = snapshot("after everything expired")
        rc, out, _ = dm.run("stats", "--all", check=False)
        tap.note("daemon: " + " | ".join(out.splitlines()[2:]))
        drops = [ln for ln in out.splitlines() if ln.startswith("rings:")]
        tap.ok(drops and drops[0].startswith("rings: drops=0"),
               "the rings dropped nothing (PACKET_STATISTICS)", drops)
    except Exception as e:  # the namespaces go whatever happened
        tap.ok(False, "the live run completed", [repr(e)])
    finally:
        if dm:
            time.sleep(0.5)
            rc = dm.stop()
            tap.ok(rc == 0, "the daemon stops cleanly on SIGTERM (exit %s)" % rc)
        if kev and kev.poll() is None:
            kev.terminate()
            try:
                kev.communicate(timeout=5)
            except subprocess.TimeoutExpired:
                kev.kill()
        if traffic:
            traffic.close()
        topo.teardown()

    # events, per connection
    try:
        with open(os.path.join(workdir, "kernel-events.txt")) as f:
            kev_recs, _ = kd_ctline.parse_lines(f.read())
        with open(os.path.join(workdir, "ctrack-events.txt")) as f:
            cev_recs, cother = kd_ctline.parse_lines(f.read())
    except OSError as e:
        tap.ok(False, "events were recorded", [repr(e)])
        tap.done()
        return 1
    kseq, cseq = collections.OrderedDict(), collections.OrderedDict()
    for e in kev_recs:
        kseq.setdefault(kd_ctline.key(e), []).append(e)
    for e in cev_recs:
        cseq.setdefault(kd_ctline.key(e), []).append(e)
    keys = list(kseq) + [k for k in cseq if k not in kseq]
    bad = []
    for k in keys:
        ks, cs = kseq.get(k, []), cseq.get(k, [])
        if len(ks) == len(cs) and all(kd_compare._ev_equal(a, b) for a, b in zip(ks, cs)):
            continue
        out = ["EVENTS   %s" % kd_ctline.key_text(k)]
        for i in range(max(len(ks), len(cs))):
            out.append("   kernel: %s" % (ks[i]["line"] if i < len(ks) else "-"))
            out.append("   ctrack: %s" % (cs[i]["line"] if i < len(cs) else "-"))
        bad.append("\n".join(out))
    tap.ok(len(keys) >= 200 and not bad and not cother,
           "events: the same sequence for each of %d connections (%d differ)"
           % (len(keys), len(bad)), bad[:20] + cother[:5])
    kd, cd = destroy_times(kev_recs), destroy_times(cev_recs)
    late = ["%s: kernel %.3f, ctrack %.3f (%+.3f s)" % (kd_ctline.key_text(k), kd[k], cd[k],
                                                      cd[k] - kd[k])
            for k in kd if k in cd and abs(cd[k] - kd[k]) > DESTROY_SLACK_S]
    both = [k for k in kd if k in cd]
    worst = max((abs(cd[k] - kd[k]) for k in both), default=0.0)
    tap.ok(len(both) >= 100 and not late,
           "every DESTROY of a timeout within %.0f s of the kernel's (%d compared, worst "
           "%.3f s)" % (DESTROY_SLACK_S, len(both), worst), late)
    tap.note("recordings in %s" % workdir)
    tap.done()
    if not args.keep and tap.failed == 0:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
