#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_daemon_interop: `ctrack daemon --sync` against the real conntrackd.

The same two-node cluster as test_interop.py (sync_cluster.py draws it:
node A a Linux router with its kernel conntrack and conntrackd 1.4.7), but
node B is now the ctrack daemon itself - live on B's two router ports
(AF_PACKET), its sync link configured with --sync, asked through its
control socket (`ctrack sync list`, `ctrack sync stats`, `ctrack list`,
`ctrack delete`).  test_interop.py's cases run unchanged where they only
need what the daemon offers (DaemonPeer below gives them the interface of
ctsync_peer); the rest are written again here without what the daemon
lacks (it sets no marks of its own):

  conntrackd->daemon  A's kernel connections (TCP v4/v6, UDP marked by nft,
                      UDP in zone 5, ICMP) in the daemon's external cache
                      with the kernel's tuples, states, status, marks, zones
                      and timeouts within 2 s (FTFW/UDP, multicast, NOTRACK
                      over UDP and TCP)
  daemon->conntrackd  the daemon's live connections in A's `conntrackd -e`
                      with its tuples, states and ASSURED
  commit              `conntrackd -c` on A: A's kernel takes B's TCP
                      connection and, with the routes switched to A, its
                      next packets and 2 MB pass A's forward chain as
                      ESTABLISHED with nf_conntrack_tcp_loose=0
  strangers, garbage  refused and counted by name in `ctrack sync stats`
  restart             a restarted daemon gets A's table back
  lossy               churn on both nodes through a forwarder that loses
                      5% and reorders: FTFW converges (A -i = B external,
                      A -e = B internal) and the loss shows in the counters
  daemon<->daemon     two daemons, each one's table in the other's external
                      cache

Needs root, namespaces, nft, conntrack, conntrackd: else "1..0 # SKIP".
Usage: test_daemon_interop.py --ctrack BUILD/tools/ctrack [--only NAME,...]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import sync_cluster as sc  # noqa: E402
import test_interop as ti  # noqa: E402

check = ti.check
Fail = ti.Fail


def _tuple_fields(t):
    out = {"src": t["src"], "dst": t["dst"]}
    for k in ("sport", "dport", "type", "code", "id"):
        if k in t:
            out[k] = t[k]
    return out


def _entry(j):
    """A line of `ctrack sync list -o json` / `ctrack list -o json` in
    ctsync_peer's dump format (what test_interop's checks read)."""
    e = {"l3": 4 if j["l3num"] == 2 else 6, "proto": j["protonum"], "zone": j["zone"],
         "status": j["status"], "mark": j["mark"], "state": j["l4state"],
         "timeout": j.get("timeout"), "reply": _tuple_fields(j["reply"])}
    e.update(_tuple_fields(j["orig"]))
    return e


class DaemonPeer:
    """`ctrack daemon --sync` in a namespace, with ctsync_peer's methods."""

    def __init__(self, cl, role, sync, ifaces, name, extra=()):
        self.cl = cl
        self.name = name
        self.ctrack = cl.ctrack
        self.dir = tempfile.mkdtemp(prefix="ctk-dsi-", dir=cl.work)
        self.sock = os.path.join(self.dir, "ctrack.sock")
        self.log = open(os.path.join(self.dir, "daemon.log"), "w")
        argv = ["ip", "netns", "exec", cl.names[role], self.ctrack, "daemon", "--socket",
                self.sock, "--router", "--sync", sync] + list(extra)
        for i in ifaces:
            argv += ["-i", i]
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT)
        end = time.time() + 20
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited: %s" % (name, self.log_text()))
            if os.path.exists(self.sock) and self.run("sync", "stats", check=False)[0] == 0:
                break
            if time.time() > end:
                raise RuntimeError("%s did not answer: %s" % (name, self.log_text()))
            time.sleep(0.1)

    def log_text(self):
        self.log.flush()
        with open(self.log.name) as f:
            return f.read()

    def run(self, *args, check=True):
        p = subprocess.run([self.ctrack] + list(args) + ["--socket", self.sock],
                           capture_output=True, text=True, timeout=60)
        self.last_err = p.stderr.strip()
        if check and p.returncode:
            raise RuntimeError("ctrack %s: %s" % (" ".join(args), self.last_err))
        return p.returncode, p.stdout

    def dump(self, which):
        out = self.run("sync", "list", "--" + which, "-o", "json")[1]
        return [_entry(json.loads(x)) for x in out.splitlines() if x.strip()]

    def table(self):
        out = self.run("list", "-o", "json")[1]
        return [_entry(json.loads(x)) for x in out.splitlines() if x.strip()]

    def stats(self):
        s = json.loads(self.run("sync", "stats", "-o", "json")[1])["sync"]
        flat = dict(s["network"])
        for k, v in s["link"].items():
            flat["link_" + k] = v
        for part in ("internal", "external", "feed"):
            for k, v in s[part].items():
                flat["%s.%s" % (part, k)] = v
        return flat

    def cmd(self, text, timeout=20.0):
        if text == "resync":
            self.run("sync", "resync")
            return [{"ok": True}]
        raise RuntimeError("%s: the daemon has no command %r" % (self.name, text))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self.log.closed:
            self.log.close()


class DaemonCluster(sc.Cluster):
    """sync_cluster's cluster with the daemon as node B."""

    def __init__(self, ctrack, fwd=False):
        super().__init__(None, fwd=fwd)
        self.ctrack = ctrack

    def start_peer(self, role="b", sync="", capture=("rb0", "rb1"), zone=0, seq=None,
                   name="ctrack daemon", extra=()):
        if zone or seq is not None:
            raise RuntimeError("the daemon case cannot take zone/seq")
        p = DaemonPeer(self, role, sync, capture, name, extra=extra)
        self.procs.append(p.proc)
        self.peers.append(p)
        return p


# ---------------------------------------------------------------------------
# cases written again for the daemon

def case_daemon_to_conntrackd(cl, mode="FTFW", transport="UDP", btrans="udp", bmode="ftfw",
                              keep=None):
    b = cl.start_peer(sync=ti.b_spec(bmode, btrans))
    cl.start_conntrackd(mode=mode, transport=transport)
    cl.route_via("b")
    tr = ti.Traffic(cl)
    c, s = tr.tcp_pair(9090)
    tr.tcp_pair(9091, v6=True)
    tr.udp_pair(41001, 7000)
    tr.ping()
    cport = c.getsockname()[1]

    def synced():
        tab = b.table()
        have = {ti.line_key(x): x for x in ti.conntrackd_lines(cl, "-e")}
        if len(tab) >= 4 and all(ti.conn_key(t) in have for t in tab):
            return tab, have
        return None
    got = sc.wait_for(synced, 10)
    if not got:
        raise Fail("A's external cache: %s; the daemon's table: %s" % (
            [ti.line_key(x) for x in ti.conntrackd_lines(cl, "-e")],
            [ti.conn_key(t) for t in b.table()]))
    tab, have = got
    problems = []
    for t in tab:
        x = have[ti.conn_key(t)]
        if t["proto"] == 6 and x["state"] != ti.TCP_STATES[t["state"]]:
            problems.append("%s: state %s, daemon %s" % (ti.conn_key(t), x["state"],
                                                        ti.TCP_STATES[t["state"]]))
        if x["mark"] != t["mark"] or x["zone"] != t["zone"]:
            problems.append("%s: mark/zone %s/%s, daemon %s/%s" % (
                ti.conn_key(t), x["mark"], x["zone"], t["mark"], t["zone"]))
        if bool(t["status"] & ti.IPS_ASSURED) != ("ASSURED" in x["flags"]):
            problems.append("%s: ASSURED %s, daemon status %#x" % (ti.conn_key(t), x["flags"],
                                                                   t["status"]))
    check(not problems, "; ".join(problems))
    est = [t for t in tab if t["proto"] == 6 and ti.TCP_STATES[t["state"]] == "ESTABLISHED"]
    check(len(est) == 2, "the daemon did not see 2 ESTABLISHED TCP connections: %s" % tab)
    if keep is not None:
        keep.update(tr=tr, c=c, s=s, b=b, cport=cport)
    else:
        tr.close()
    return "%d of the daemon's entries in A's conntrackd -e (%s/%s)" % (len(tab), mode,
                                                                       transport)


def case_commit_on_a(cl):
    keep = {}
    case_daemon_to_conntrackd(cl, keep=keep)
    tr, c, s, cport = keep["tr"], keep["c"], keep["s"], keep["cport"]
    try:
        check(not ti.kernel_entries(cl), "A's kernel had entries before the commit")
        cl.conntrackd("-c")
        mine = [k for k in ti.kernel_entries(cl)
                if k["proto"] == 6 and k["orig"].get("dport") == 9090]
        check(len(mine) == 1 and mine[0]["orig"]["sport"] == cport and
              ti.TCP_STATES[mine[0]["state"]] == "ESTABLISHED",
              "after conntrackd -c, A's kernel has %s" % mine)
        c0 = cl.nft_counters()
        cl.route_via("a")
        tr.after_failover(c, s)
        time.sleep(0.2)
        c1 = cl.nft_counters()
        d = {x: c1.get(x, 0) - c0.get(x, 0) for x in ("established", "new", "invalid")}
        check(d["established"] >= 100 and d["new"] == 0 and d["invalid"] == 0,
              "A's forward chain after failover: %s" % d)
        return "the daemon's connection committed on A; next packets through A: %s" % d
    finally:
        tr.close()


class Skip(Exception):
    pass


def case_commit_on_daemon(cl):
    """A's kernel tracks a TCP connection; the daemon on B has it in its
    external cache; `ctrack sync commit` puts it into B's table; the routes
    move to B, and with nf_conntrack_tcp_loose=0 the daemon classifies the
    connection's next packets (3 exchanges, then 2 MB) as ESTABLISHED:
    the entry's counters grow, nothing is INVALID, nothing new is made."""
    b = cl.start_peer(sync=ti.b_spec(), extra=("--set", "nf_conntrack_tcp_loose=0"))
    cl.start_conntrackd()
    cl.route_via("a")
    tr = ti.Traffic(cl)
    try:
        c, s = tr.tcp_pair(9300)
        cport = c.getsockname()[1]
        key = (6, sc.CLIENT, sc.SERVER, cport, 9300, 0)
        check(sc.wait_for(lambda: any(ti.entry_key(e) == key for e in b.dump("external")), 10),
              "A's connection did not reach the daemon's external cache")
        check(not any(ti.conn_key(t) == key for t in b.table()),
              "the daemon tracked A's connection itself")
        rc, out = b.run("sync", "commit", "-o", "json", check=False)
        check(rc == 0, "ctrack sync commit: %s" % b.last_err)
        res = json.loads(out)
        check(res.get("committed", 0) >= 1 and res.get("failed") == 0,
              "commit answered %s" % res)
        mine = [t for t in b.table() if ti.conn_key(t) == key]
        check(len(mine) == 1 and ti.TCP_STATES[mine[0]["state"]] == "ESTABLISHED",
              "after the commit the daemon's table has %s" % mine)

        def totals():
            return json.loads(b.run("stats", "-o", "json")[1])["total"]
        t0 = totals()
        cl.route_via("b")
        tr.after_failover(c, s)
        time.sleep(0.5)
        t1 = totals()
        out = b.run("list", "-o", "json", "-p", "tcp", "--dport", "9300")[1]
        ent = [json.loads(x) for x in out.splitlines() if x.strip()]
        check(len(ent) == 1, "the committed entry is gone: %s" % ent)
        e = ent[0]
        pk = (e["orig"].get("packets", 0), e["reply"].get("packets", 0))
        d = {k: t1[k] - t0[k] for k in ("invalid", "insert", "found")}
        check(e["state"] == "ESTABLISHED" and pk[0] >= 50 and pk[1] >= 20 and
              d["invalid"] == 0 and d["insert"] == 0,
              "after the failover: entry %s packets %s, counters %s" % (e["state"], pk, d))
        return "committed %d; the next packets through B: %d/%d on the entry, ESTABLISHED, " \
               "%s" % (res["committed"], pk[0], pk[1], d)
    finally:
        tr.close()


def case_lossy(cl, seconds=15):
    f = subprocess.Popen(["ip", "netns", "exec", cl.names["f"], sys.executable,
                          os.path.join(HERE, "sync_fwd.py"), "fa", "fb", "--loss", "0.05",
                          "--reorder", "0.05", "--seed", "7"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cl.procs.append(f)
    check(f.stdout.readline().strip() == "ready", "forwarder did not start")
    b = cl.start_peer(sync=ti.b_spec(), extra=("--set", "nf_conntrack_udp_timeout=600"))
    cl.start_conntrackd()
    check(sc.wait_for(lambda: b.stats()["hello_recv"] >= 1, 10), "no HELLO from conntrackd")
    time.sleep(float(os.environ.get("CTSYNC_SETTLE", "3")))
    cl.route_via("b")
    import socket
    with cl.ns("c"):
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    end = time.time() + seconds
    i = 0
    sent = 0
    while time.time() < end:
        batch = []
        for _ in range(40):
            i += 1
            port = 1024 + i % 3000
            if i % 5 == 4:
                batch.append("-D -p udp -s 10.5.0.1 -d 10.6.0.1 --sport %d --dport 53" % (
                    port - 3))
            else:
                batch.append("-I -p udp -s 10.5.0.1 -d 10.6.0.1 --sport %d --dport 53 -t 600 "
                             "-u SEEN_REPLY" % port)
        cl.ex("a", ["sh", "-c", "; ".join("conntrack %s >/dev/null 2>&1" % x for x in batch)],
              check=False)
        # churn on B: new UDP flows through B (one datagram each, from a
        # port of their own), and some of them deleted again
        for k in range(20):
            with cl.ns("c"):
                v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            v.sendto(b"x", (sc.SERVER, 6000 + (sent % 500)))
            v.close()
            sent += 1
        if sent % 100 == 0:
            b.run("delete", "-p", "udp", "--dport", str(6000 + (sent // 100) % 500),
                  check=False)
    u.close()

    def converged():
        ai = ti.conntrackd_lines(cl, "-i")
        be = b.dump("external")
        ae = ti.conntrackd_lines(cl, "-e")
        bi = b.dump("internal")
        tab = [t for t in b.table()]
        k1, k2 = {ti.line_key(x) for x in ai}, {ti.entry_key(x) for x in be}
        k3, k4 = {ti.line_key(x) for x in ae}, {ti.entry_key(x) for x in bi}
        k5 = {ti.conn_key(x) for x in tab}
        return k1 == k2 and k3 == k4 and k4 == k5, (len(k1), len(k2), len(k3), len(k4), len(k5))
    r = sc.wait_for(lambda: converged()[0], 40, step=1.0)
    ok, sizes = converged()
    f.terminate()
    fout = f.communicate(timeout=5)[0].strip()
    st = b.stats()
    check(ok, "not converged: A -i %d, B ext %d, A -e %d, B int %d, B table %d; %s" % (
        sizes + (fout,)))
    check(st["msg_rcv_lost"] > 0 and st["nacks_sent"] > 0, "the link lost nothing? %s" % fout)
    return "converged: A internal %d = B external, B table %d = B internal = A external; %s; " \
           "B lost %d, sent %d NACKs, resent %d" % (sizes[0], sizes[4], fout,
                                                    st["msg_rcv_lost"], st["nacks_sent"],
                                                    st["resent"])


def case_conntrackd_restart(cl):
    """conntrackd on A restarts: its StartupResync asks the daemon for its
    table, so A's new external cache holds the daemon's connections again.
    (Without StartupResync nothing would: a restarted conntrackd that has
    no connections of its own sends only ACKs and ALIVEs, and those carry
    no HELLO - measured, hello_recv stays - so the daemon's
    resync-on-hello never fires; docs/sync.md.)"""
    keep = {}
    case_daemon_to_conntrackd(cl, keep=keep)
    b, tr = keep["b"], keep["tr"]
    try:
        r0 = b.stats()["resync_recv"]
        cl.stop_conntrackd()
        cl.start_conntrackd(startup_resync=True)
        tab = b.table()

        def back():
            have = {ti.line_key(x) for x in ti.conntrackd_lines(cl, "-e")}
            return all(ti.conn_key(t) in have for t in tab)
        ok = sc.wait_for(back, 10)
        st = b.stats()
        check(ok and st["resync_recv"] > r0, "restarted conntrackd's -e lacks the daemon's "
              "entries (RESYNC requests received %d -> %d)" % (r0, st["resync_recv"]))
        return "restarted conntrackd asked (RESYNC %d -> %d) and holds the daemon's %d " \
               "entries again" % (r0, st["resync_recv"], len(tab))
    finally:
        tr.close()


def case_daemon_to_daemon(cl):
    a = cl.start_peer(role="a", sync="mode=ftfw,transport=udp,iface=ya,local=%s,peer=%s" % (
        sc.A_SYNC, sc.B_SYNC), capture=("ra0", "ra1"), name="ctrack daemon A")
    b = cl.start_peer(sync=ti.b_spec())
    tr = ti.Traffic(cl)
    try:
        cl.route_via("a")
        tr.tcp_pair(8200)
        tr.udp_pair(40200, 6000)
        cl.route_via("b")
        tr.tcp_pair(8201)
        tr.udp_pair(40201, 6001)
        tr.tcp_pair(8202, v6=True)

        def same():
            ta, tb = {ti.conn_key(x) for x in a.table()}, {ti.conn_key(x) for x in b.table()}
            ea, eb = {ti.entry_key(x) for x in a.dump("external")}, \
                {ti.entry_key(x) for x in b.dump("external")}
            return ta == eb and tb == ea and len(ta) >= 2 and len(tb) >= 3, len(ta), len(tb)
        r = sc.wait_for(lambda: same()[0], 15)
        _, na, nb = same()
        check(r, "caches differ: A's table %d, B's table %d" % (na, nb))
        return "A's %d and B's %d connections each in the other daemon's external cache" % (
            na, nb)
    finally:
        tr.close()


# ---------------------------------------------------------------------------
# NAT (issue 24): NATed entries between the kernel's nf_nat, conntrackd and
# the daemon

NAT_VIP = "10.71.2.100"          # a port forward's address: dnat to SERVER:8080
NAT_NFT = """
table ip ctsnat {
    chain pre {
        type nat hook prerouting priority -100; policy accept;
        ip daddr %s tcp dport 80 dnat to %s:8080
    }
    chain post {
        type nat hook postrouting priority 100; policy accept;
        ip saddr 10.71.1.0/24 oifname "%%s" snat to %s
    }
}
""" % (NAT_VIP, sc.SERVER, sc.GW_S)
# the same rules in ctrack's syntax (docs/nat-design.md)
NAT_RULES = ["ip daddr %s tcp dport 80 dnat to %s:8080" % (NAT_VIP, sc.SERVER),
             "ip saddr 10.71.1.0/24 snat to %s" % sc.GW_S]


def nat_traffic(tr):
    """Through the NAT: TCP and UDP source-NATed, a port forward (DNAT and
    SNAT on one connection), ICMP echo.  Returns the forward's client
    socket."""
    tr.tcp_pair(8090)
    tr.udp_pair(41050, 5050)
    tr.ping()
    with tr.cl.ns("s"):
        ls = ti.socket.socket(ti.socket.AF_INET, ti.socket.SOCK_STREAM)
        ls.setsockopt(ti.socket.SOL_SOCKET, ti.socket.SO_REUSEADDR, 1)
        ls.bind((sc.SERVER, 8080))
        ls.listen(4)
    with tr.cl.ns("c"):
        c = ti.socket.socket(ti.socket.AF_INET, ti.socket.SOCK_STREAM)
        c.settimeout(5)
        c.connect((NAT_VIP, 80))
    srv, _ = ls.accept()
    ls.close()
    srv.settimeout(5)
    c.sendall(b"fwd")
    check(srv.recv(16) == b"fwd", "the port forward's data did not arrive")
    srv.sendall(b"ok")
    check(c.recv(16) == b"ok", "the port forward's reply did not arrive")
    tr.socks += [c, srv]
    return c


def _full(t):
    return tuple(str(t.get(k, "")) for k in ("src", "dst", "sport", "dport", "type", "code", "id"))


def compare_replies(kern, ents, what):
    """Every kernel entry in @ents with the kernel's reply tuple, field by
    field (addresses, ports, ICMP id); returns how many were NATed."""
    by = {ti.entry_key(e): e for e in ents}
    problems, natted = [], 0
    for k in kern:
        e = by.get(ti.kernel_key(k))
        if e is None:
            problems.append("missing in %s: %s" % (what, ti.kernel_key(k)))
            continue
        if _full(e["reply"]) != _full(k["reply"]):
            problems.append("%s: reply %s, kernel %s" % (ti.kernel_key(k), _full(e["reply"]),
                                                         _full(k["reply"])))
        natted += k["reply"]["dst"] != k["orig"]["src"] or k["reply"]["src"] != k["orig"]["dst"]
    if problems:
        raise Fail("; ".join(problems[:6]))
    return natted


def case_nat_conntrackd_to_daemon(cl):
    """A's nf_nat makes NATed entries from the kernel's own traffic;
    conntrackd sends them; the daemon's `ctrack sync list` shows the
    kernel's reply tuples exactly; `ctrack sync commit` puts them into the
    daemon's table (it runs with the same --nat rules) under both keys, so
    `ctrack list` shows them with the kernel's reply tuples, and a table
    without NAT refuses them by name."""
    extra = []
    for r in NAT_RULES:
        extra += ["--nat", r]
    b = cl.start_peer(sync=ti.b_spec(), extra=extra)
    cl.ex("a", ["nft", "-f", "-"], input_text=NAT_NFT % "ra1")
    cl.start_conntrackd()
    cl.route_via("a")
    tr = ti.Traffic(cl)
    try:
        nat_traffic(tr)
        kern = ti.kernel_entries(cl)
        check(len(kern) >= 4, "the kernel tracked %d connections, want 4" % len(kern))

        def synced():
            ext = b.dump("external")
            keys = {ti.entry_key(e) for e in ext}
            return ext if all(ti.kernel_key(k) in keys for k in kern) else None
        ext = sc.wait_for(synced, 10) or b.dump("external")
        kern = ti.kernel_entries(cl)
        natted = compare_replies(kern, ext, "the daemon's external cache")
        check(natted == len(kern), "%d of %d kernel entries NATed" % (natted, len(kern)))
        rc, out = b.run("sync", "commit", "-o", "json", check=False)
        check(rc == 0, "ctrack sync commit: %s" % b.last_err)
        res = json.loads(out)
        check(res.get("committed", 0) >= len(kern) and res.get("failed") == 0,
              "commit answered %s" % res)
        tab = b.table()
        compare_replies(kern, tab, "the daemon's table after the commit")
        n_src = len(b.run("list", "--src-nat")[1].splitlines())
        n_dst = len(b.run("list", "--dst-nat")[1].splitlines())
        check(n_src == len(kern) and n_dst == 1, "--src-nat %d, --dst-nat %d" % (n_src, n_dst))
        # a daemon without NAT takes the same entries into its external
        # cache but refuses to commit them, saying why
        b.stop()
        p = cl.start_peer(sync=ti.b_spec(), name="daemon without --nat")

        def resynced():
            keys = {ti.entry_key(e) for e in p.dump("external")}
            return all(ti.kernel_key(k) in keys for k in kern)
        check(sc.wait_for(resynced, 15), "the daemon without --nat did not get A's table")
        rc, out = p.run("sync", "commit", "-o", "json", check=False)
        res2 = json.loads(out) if rc == 0 else {}
        check(res2.get("committed") == 0 and res2.get("failed") == len(kern) and
              "this table does no NAT" in p.log_text() and not p.table(),
              "a commit without --nat: %s %s" % (res2, p.log_text()[-300:]))
        return "%d NATed kernel entries: the kernel's reply tuples in the external cache and, " \
               "committed, in the daemon's table (%d src-nat, %d dst-nat); without --nat " \
               "refused by name" % (len(kern), n_src, n_dst)
    finally:
        tr.close()


def case_nat_daemon_to_conntrackd(cl):
    """The daemon with --nat binds B's traffic as B's kernel NATs it (same
    rules: snat to one address keeps the port, dnat to one backend), sends
    its NATed entries to A's conntrackd with the NAT attributes; `conntrackd
    -c` commits them into A's kernel, whose table then has the daemon's
    reply tuples exactly."""
    extra = []
    for r in NAT_RULES:
        extra += ["--nat", r]
    b = cl.start_peer(sync=ti.b_spec(), extra=extra)
    # B's kernel does the NAT the daemon models; A's loads nf_nat, which
    # ctnetlink needs to set a committed entry's binding up
    cl.ex("b", ["nft", "-f", "-"], input_text=NAT_NFT % "rb1")
    cl.ex("a", ["nft", "-f", "-"], input_text=NAT_NFT % "ra1")
    cl.start_conntrackd()
    cl.route_via("b")
    tr = ti.Traffic(cl)
    try:
        nat_traffic(tr)

        def synced():
            tab = b.table()
            have = {ti.line_key(x) for x in ti.conntrackd_lines(cl, "-e")}
            if len(tab) >= 4 and all(ti.conn_key(t) in have for t in tab):
                return tab
            return None
        tab = sc.wait_for(synced, 10)
        check(tab, "A's external cache: %s; the daemon's table: %s" % (
            [ti.line_key(x) for x in ti.conntrackd_lines(cl, "-e")],
            [ti.conn_key(t) for t in b.table()]))
        check(all(t["status"] & 0x30 for t in tab),
              "the daemon bound every connection: %s" % [hex(t["status"]) for t in tab])
        with cl.ns("b"):
            kb = ti.ctnl.dump()
        kb = [e for e in kb if not e["orig"].get("src", "").startswith("10.99.0.")]
        compare_replies(kb, tab, "the daemon's table, against B's kernel")
        check(not ti.kernel_entries(cl), "A's kernel had entries before the commit")
        cl.conntrackd("-c")
        ka = ti.kernel_entries(cl)
        natted = compare_replies(ka, tab, "A's kernel after conntrackd -c")
        check(len(ka) == len(tab) and natted == len(tab),
              "A's kernel has %d entries, %d NATed, the daemon %d" % (len(ka), natted,
                                                                     len(tab)))
        return "%d NATed entries of the daemon (B's kernel's bindings) committed by " \
               "conntrackd into A's kernel with the daemon's reply tuples" % len(tab)
    finally:
        tr.close()


CASES = [
    ("conntrackd_to_daemon_ftfw_udp", lambda cl: ti.case_conntrackd_to_ctrack(cl), False),
    ("daemon_to_conntrackd_ftfw_udp", lambda cl: case_daemon_to_conntrackd(cl), False),
    ("commit_on_a_failover_established", case_commit_on_a, False),
    ("commit_on_daemon_failover_established", case_commit_on_daemon, False),
    ("conntrackd_to_daemon_ftfw_mcast",
     lambda cl: ti.case_conntrackd_to_ctrack(cl, transport="Multicast", btrans="mcast"), False),
    ("daemon_to_conntrackd_ftfw_mcast",
     lambda cl: case_daemon_to_conntrackd(cl, transport="Multicast", btrans="mcast"), False),
    ("conntrackd_to_daemon_notrack_udp",
     lambda cl: ti.case_conntrackd_to_ctrack(cl, mode="NOTRACK", bmode="notrack"), False),
    ("daemon_to_conntrackd_notrack_tcp",
     lambda cl: case_daemon_to_conntrackd(cl, mode="NOTRACK", transport="TCP", btrans="tcp",
                                          bmode="notrack"), False),
    ("strangers_and_garbage", ti.case_strangers_and_garbage, False),
    ("restart_resynchronizes", ti.case_restart, False),
    ("conntrackd_restart_gets_the_daemons_table", case_conntrackd_restart, False),
    ("daemon_to_daemon", case_daemon_to_daemon, False),
    ("ftfw_lossy_link_converges", case_lossy, True),
    ("nat_conntrackd_to_daemon", case_nat_conntrackd_to_daemon, False),
    ("nat_daemon_to_conntrackd", case_nat_daemon_to_conntrackd, False),
]


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--ctrack", required=True)
    ap.add_argument("--only", default="")
    args = ap.parse_args(argv)
    why = ti.missing()
    if why:
        print("1..0 # SKIP %s" % why)
        return 0
    only = set(x for x in args.only.split(",") if x)
    cases = [c for c in CASES if not only or c[0] in only]
    print("1..%d" % len(cases), flush=True)
    failed = 0
    for i, (name, fn, fwd) in enumerate(cases, 1):
        t0 = time.time()
        try:
            with DaemonCluster(os.path.abspath(args.ctrack), fwd=fwd) as cl:
                cl.build()
                try:
                    msg = fn(cl)
                except Exception:
                    for p in cl.peers:
                        if isinstance(p, DaemonPeer):
                            for line in p.log_text().splitlines()[-6:]:
                                print("# %s: %s" % (p.name, line))
                    raise
            print("ok %d - %s: %s (%.1f s)" % (i, name, msg, time.time() - t0), flush=True)
        except Skip as e:
            print("ok %d - %s # SKIP %s" % (i, name, e), flush=True)
        except Exception as e:  # noqa: BLE001 - every failure is a TAP line
            failed += 1
            print("not ok %d - %s: %s" % (i, name, e), flush=True)
            for line in traceback.format_exc().splitlines()[-8:]:
                print("# " + line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
