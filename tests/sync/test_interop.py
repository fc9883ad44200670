#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_interop: ctrack's sync node against the real conntrackd 1.4.7.

Node A is a Linux router with its kernel conntrack and conntrackd; node B
runs ctsync_peer (a ctrack table on live packets, the sync node and the
transport the daemon will use); they share a private link (sync_cluster.py
draws the namespaces).  Each case prints one TAP line:

  conntrackd->ctrack  connections A's kernel tracks (real traffic: TCP, UDP
                      with a mark set by nft, UDP in a zone set by nft,
                      ICMP, IPv6) appear in B's external cache with the same
                      tuples, states, status, marks, zones, and timeouts
                      within 2 s of the kernel's
  ctrack->conntrackd  connections B's ctrack tracks appear in A's
                      `conntrackd -e` (same tuples, states, marks)
  commit              after `conntrackd -c`, A's kernel holds B's
                      connections - the flags and window state it gives
                      them are printed - and once client and server route
                      through A, the next packets of a TCP connection B was
                      carrying pass A's forward chain as ESTABLISHED with
                      nf_conntrack_tcp_loose=0
  ... the same over multicast, NOTRACK over UDP and TCP, window tracking,
  strangers refused, a hostile datagram counted, a restart resynchronized,
  ctrack-to-ctrack, and FTFW through a forwarder losing 5% and reordering.

Needs root, network namespaces, nft, conntrack and conntrackd; without them
it prints "1..0 # SKIP" with what is missing.
Usage: test_interop.py --peer BUILD/tests/sync/ctsync_peer [--only NAME,...]
"""

import argparse
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ctnl  # noqa: E402
import sync_cluster as sc  # noqa: E402

TCP_STATES = ["NONE", "SYN_SENT", "SYN_RECV", "ESTABLISHED", "FIN_WAIT", "CLOSE_WAIT",
              "LAST_ACK", "TIME_WAIT", "CLOSE", "SYN_SENT2"]
IPS_SEEN_REPLY, IPS_ASSURED = 0x2, 0x4


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


# ---------------------------------------------------------------------------
# traffic

class Traffic:
    """Connections between the client and the server namespaces, opened from
    this process (each socket in its own namespace, kd_netns.inside)."""

    def __init__(self, cl):
        self.cl = cl
        self.socks = []

    def tcp_pair(self, port, v6=False):
        fam = socket.AF_INET6 if v6 else socket.AF_INET
        srv_addr = sc.SERVER6 if v6 else sc.SERVER
        with self.cl.ns("s"):
            ls = socket.socket(fam, socket.SOCK_STREAM)
            ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            ls.bind((srv_addr, port))
            ls.listen(4)
        with self.cl.ns("c"):
            c = socket.socket(fam, socket.SOCK_STREAM)
            c.settimeout(5)
            c.connect((srv_addr, port))
        s, _ = ls.accept()
        ls.close()
        s.settimeout(5)
        c.sendall(b"hello")
        check(s.recv(16) == b"hello", "tcp data did not arrive")
        s.sendall(b"world")
        check(c.recv(16) == b"world", "tcp reply did not arrive")
        self.socks += [c, s]
        return c, s

    def udp_pair(self, sport, dport):
        with self.cl.ns("s"):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind((sc.SERVER, dport))
            s.settimeout(5)
        with self.cl.ns("c"):
            c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            c.bind((sc.CLIENT, sport))
            c.settimeout(5)
        c.sendto(b"q", (sc.SERVER, dport))
        _, addr = s.recvfrom(16)
        s.sendto(b"r", addr)
        check(c.recvfrom(16)[0] == b"r", "udp reply did not arrive")
        self.socks += [c, s]

    def ping(self):
        """One ICMP echo through an unprivileged ICMP socket (no ping(8)
        needed); the kernel picks the id."""
        self.cl.sysctl("c", {"net.ipv4.ping_group_range": "0 2147483647"})
        with self.cl.ns("c"):
            p = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)
        p.settimeout(3)
        p.sendto(bytes([8, 0, 0, 0, 0, 0, 0, 1]) + b"ctsync", (sc.SERVER, 0))
        check(p.recvfrom(64)[0][0] == 0, "no echo reply")
        self.socks.append(p)

    def after_failover(self, c, s):
        """A TCP connection's traffic once the routes have moved to the
        other node: three exchanges, then 2 MB from the client to the
        server (the windows must hold too); each checked to arrive whole.
        The caller reads the node's counters around it."""
        for i in range(3):
            c.sendall(b"after-failover-%d" % i)
            got = s.recv(64)
            check(got.startswith(b"after-failover"), "data lost after failover: %r" % got)
            s.sendall(b"ack-%d" % i)
            check(c.recv(64).startswith(b"ack"), "reply lost after failover")
        blob = os.urandom(2 << 20)
        got = bytearray()

        def sink():
            while len(got) < len(blob):
                d = s.recv(1 << 16)
                if not d:
                    break
                got.extend(d)
        th = threading.Thread(target=sink)
        th.start()
        c.sendall(blob)
        th.join(20)
        check(bytes(got) == blob, "bulk transfer after failover: %d of %d bytes" % (
            len(got), len(blob)))

    def close(self):
        for s in self.socks:
            s.close()
        self.socks = []


def kernel_entries(cl):
    """A's kernel table without A's own sync traffic."""
    with cl.ns("a"):
        ents = ctnl.dump()
    return [e for e in ents if not e["orig"].get("src", "").startswith("10.99.0.")]


def tkey(proto, t, zone):
    if proto in (1, 58):
        return (proto, t["src"], t["dst"], int(t["type"]), int(t["code"]), int(t["id"]), zone)
    return (proto, t["src"], t["dst"], int(t.get("sport", 0)), int(t.get("dport", 0)), zone)


def entry_key(e):
    return tkey(e["proto"], e, e["zone"])


def kernel_key(e):
    return tkey(e["proto"], e["orig"], e["zone"])


def a_traffic(cl, tr):
    """Real traffic through A: TCP (v4, v6), UDP marked by nft, UDP in zone 5,
    ICMP echo."""
    cl.ex("a", ["nft", "-f", "-"], input_text="""
table inet ctsmark {
    chain pre {
        type filter hook prerouting priority -300; policy accept;
        udp dport 5400 ct zone set 5
        udp sport 5400 ct zone set 5
    }
    chain markit {
        type filter hook forward priority -10; policy accept;
        udp dport 5353 ct mark set 42
    }
}
""")
    tr.tcp_pair(8080)
    tr.tcp_pair(8081, v6=True)
    tr.udp_pair(40001, 5353)
    tr.udp_pair(40002, 5400)
    tr.ping()


def compare_kernel_to_external(kern, ext, what):
    """Each kernel entry is in @ext with equal fields; returns a summary."""
    by = {entry_key(e): e for e in ext}
    problems = []
    for k in kern:
        e = by.get(kernel_key(k))
        if e is None:
            problems.append("missing in %s: %s" % (what, kernel_key(k)))
            continue
        if k["proto"] == 6 and e.get("state") != k.get("state"):
            problems.append("%s: state %s != kernel %s" % (kernel_key(k), e.get("state"),
                                                          k.get("state")))
        if e["mark"] != k["mark"]:
            problems.append("%s: mark %s != kernel %s" % (kernel_key(k), e["mark"], k["mark"]))
        mask = IPS_ASSURED | IPS_SEEN_REPLY
        if (e["status"] & mask) != (k["status"] & mask):
            problems.append("%s: status %#x != kernel %#x" % (kernel_key(k), e["status"],
                                                             k["status"]))
        if k["timeout"] is not None and abs(e.get("timeout", -99) - k["timeout"]) > 2:
            problems.append("%s: timeout %s, kernel %s" % (kernel_key(k), e.get("timeout"),
                                                          k["timeout"]))
        r = e.get("reply", {})
        if r.get("src") != k["reply"]["src"] or r.get("dst") != k["reply"]["dst"]:
            problems.append("%s: reply %s != kernel %s" % (kernel_key(k), r, k["reply"]))
    if problems:
        raise Fail("; ".join(problems[:6]))
    return len(kern)


def b_spec(mode="ftfw", transport="udp", extra=""):
    if transport == "mcast":
        s = "mode=%s,transport=mcast,iface=yb,local=%s,group=%s,accept=%s" % (
            mode, sc.B_SYNC, sc.GROUP, sc.A_SYNC)
    else:
        s = "mode=%s,transport=%s,iface=yb,local=%s,peer=%s" % (mode, transport, sc.B_SYNC,
                                                                  sc.A_SYNC)
    return s + ("," + extra if extra else "")


# ---------------------------------------------------------------------------
# cases

def case_conntrackd_to_ctrack(cl, mode="FTFW", transport="UDP", btrans="udp", bmode="ftfw",
                              window_tracking=False):
    b = cl.start_peer(sync=b_spec(bmode, btrans, "window-tracking=%s" % (
        "on" if window_tracking else "off")))
    cl.start_conntrackd(mode=mode, transport=transport, window_tracking=window_tracking)
    cl.route_via("a")
    tr = Traffic(cl)
    try:
        a_traffic(cl, tr)
        kern = kernel_entries(cl)
        check(len(kern) >= 5, "the kernel tracked %d connections, want 5" % len(kern))
        kinds = {(k["proto"], k["zone"], k["mark"]) for k in kern}
        check((17, 0, 42) in kinds and (17, 5, 0) in kinds, "nft mark/zone not seen: %s" % kinds)

        def synced():
            ext = b.dump("external")
            keys = {entry_key(e) for e in ext}
            return ext if all(kernel_key(k) in keys for k in kern) else None
        ext = sc.wait_for(synced, 10) or b.dump("external")
        # compare against a fresh read of the kernel (timeouts now)
        kern = kernel_entries(cl)
        n = compare_kernel_to_external(kern, ext, "B's external cache")
        if window_tracking:
            for k in kern:
                if k["proto"] == 6:
                    e = {entry_key(x): x for x in ext}[kernel_key(k)]
                    check(tuple(e.get("wscale", (None, None))) == tuple(k["wscale"]),
                          "wscale %s != kernel %s" % (e.get("wscale"), k["wscale"]))
        st = b.stats()
        check(st["msg_rcv_malformed"] == 0, "B counted malformed messages: %s" % st)
        k = [x for x in kern if x["proto"] == 6 and x["l3"] == 4][0]
        e = {entry_key(x): x for x in ext}[kernel_key(k)]
        return "%d kernel entries matched in B's external cache (%s/%s; e.g. tcp dport %d: " \
               "state %s/%s, timeout %s/%s, kernel/B)" % (
                   n, mode, transport, k["orig"]["dport"], TCP_STATES[k["state"]],
                   TCP_STATES[e["state"]], k["timeout"], e["timeout"])
    finally:
        tr.close()


def conntrackd_lines(cl, flag):
    out = cl.conntrackd(flag)
    return [r for r in (sc.parse_conntrackd_line(x) for x in out.splitlines()) if r]


def line_key(r):
    return tkey(r["protonum"], r["orig"], r["zone"])


def conn_key(c):
    return tkey(c["proto"], c, c["zone"])


def case_ctrack_to_conntrackd(cl, mode="FTFW", transport="UDP", btrans="udp", bmode="ftfw",
                              keep=None, window_tracking=False, zone=0):
    b = cl.start_peer(sync=b_spec(bmode, btrans, "window-tracking=%s" % (
        "on" if window_tracking else "off")), zone=zone)
    cl.start_conntrackd(mode=mode, transport=transport, window_tracking=window_tracking)
    cl.route_via("b")
    tr = Traffic(cl)
    c, s = tr.tcp_pair(9090)
    tr.tcp_pair(9091, v6=True)
    tr.udp_pair(41001, 7000)
    tr.ping()
    cport = c.getsockname()[1]
    r = b.cmd("mark 6 %s %s %d 9090 77 %d" % (sc.CLIENT, sc.SERVER, cport, zone))[-1]
    check(r.get("ok"), "mark on B's entry failed")

    def synced():
        tab = b.table()
        lines = conntrackd_lines(cl, "-e")
        have = {line_key(x): x for x in lines}
        if tab and all(conn_key(t) in have for t in tab):
            return tab, have
        return None
    got = sc.wait_for(synced, 10)
    if not got:
        raise Fail("A's external cache: %s; B's table: %s" % (
            [line_key(x) for x in conntrackd_lines(cl, "-e")], [conn_key(t) for t in b.table()]))
    tab, have = got
    problems = []
    for t in tab:
        x = have[conn_key(t)]
        if t["proto"] == 6 and x["state"] != TCP_STATES[t["state"]]:
            problems.append("%s: state %s, ctrack %s" % (conn_key(t), x["state"],
                                                        TCP_STATES[t["state"]]))
        if x["mark"] != t["mark"]:
            problems.append("%s: mark %s, ctrack %s" % (conn_key(t), x["mark"], t["mark"]))
        if bool(t["status"] & IPS_ASSURED) != ("ASSURED" in x["flags"]):
            problems.append("%s: ASSURED %s, ctrack status %#x" % (conn_key(t), x["flags"],
                                                                   t["status"]))
    check(not problems, "; ".join(problems))
    check(any(t["mark"] == 77 for t in tab), "the mark set on B did not show")
    est = [t for t in tab if t["proto"] == 6 and TCP_STATES[t["state"]] == "ESTABLISHED"]
    check(len(est) == 2, "B's tracker did not see 2 ESTABLISHED TCP connections: %s" % tab)
    check({x["zone"] for x in have.values()} == {zone}, "zones in A's conntrackd -e: %s" % (
        {x["zone"] for x in have.values()}))
    if keep is not None:
        keep.update(tr=tr, c=c, s=s, b=b, cport=cport)
    else:
        tr.close()
    return "%d ctrack entries in A's conntrackd -e (%s/%s)" % (len(tab), mode, transport)


def case_commit(cl, window_tracking=False):
    keep = {}
    case_ctrack_to_conntrackd(cl, keep=keep, window_tracking=window_tracking)
    tr, c, s, cport = keep["tr"], keep["c"], keep["s"], keep["cport"]
    sent = None
    if window_tracking:
        # what ctrack sends: each TCP entry's window scales as its table
        # tracked them from the handshake (ct_conn_info.tcp), carried in
        # its internal cache and written as TCP_WSCALE attributes
        b = keep["b"]
        tab = {conn_key(t): t for t in b.table() if t["proto"] == 6}
        internal = {entry_key(e): e for e in b.dump("internal") if e["proto"] == 6}
        check(tab and all(tuple(t["wscale"]) != (0, 0) for t in tab.values()),
              "B's table has no window scales: %s" % list(tab.values()))
        for k, t in tab.items():
            check(tuple(internal.get(k, {}).get("wscale", ())) == tuple(t["wscale"]),
                  "B's internal cache %s, its table %s" % (internal.get(k), t["wscale"]))
        sent = [t["wscale"] for t in tab.values() if t["dport"] == 9090][0]
    try:
        before = kernel_entries(cl)
        check(not before, "A's kernel had entries before the commit: %s" % before)
        out = cl.conntrackd("-c")
        kern = kernel_entries(cl)
        mine = [k for k in kern if k["proto"] == 6 and k["orig"].get("dport") == 9090]
        check(len(mine) == 1, "after conntrackd -c, A's kernel has %s" % kern)
        k = mine[0]
        check(k["orig"]["sport"] == cport, "committed sport %s" % k["orig"])
        check(TCP_STATES[k["state"]] == "ESTABLISHED", "committed state %s" % k["state"])
        check(k["mark"] == 77, "committed mark %s" % k["mark"])
        fl = "flags orig=%s reply=%s wscale=%s status=%#x timeout=%s" % (
            ctnl.flag_names(k["flags"][0]), ctnl.flag_names(k["flags"][1]), k["wscale"],
            k["status"], k["timeout"])
        print("# commit: %s; the kernel holds %s" % (out.strip().replace("\n", " "), fl),
              flush=True)
        if window_tracking:
            # conntrackd sends the scales and no TCP flags; the kernel's
            # nlattr_to_tcp keeps scales only for directions flagged
            # WINDOW_SCALE: they are dropped, whatever ctrack sent
            check(tuple(k["wscale"]) == (0, 0) and tuple(k["flags"]) == (0, 0),
                  "the kernel kept %s of the scales %s ctrack sent" % (k["wscale"], sent))
            print("# ctrack sent window scales %s; the kernel dropped them" % (sent,),
                  flush=True)
        c0 = cl.nft_counters()
        cl.route_via("a")
        tr.after_failover(c, s)
        time.sleep(0.2)
        c1 = cl.nft_counters()
        d = {x: c1.get(x, 0) - c0.get(x, 0) for x in ("established", "new", "invalid")}
        check(d["established"] >= 100 and d["new"] == 0 and d["invalid"] == 0,
              "A's forward chain after failover: %s" % d)
        return "committed entry %s; next packets through A: %s" % (fl, d)
    finally:
        tr.close()


def case_ctrack_commit(cl):
    """ctrack sync commit: A's kernel tracks a connection, conntrackd sends
    it to B's external cache, B commits it into its table as conntrackd -c
    would (src/record/), the client and the server switch to B, and B's
    table takes the next packets - three exchanges and 2 MB one way - as
    ESTABLISHED with nf_conntrack_tcp_loose=0, none NEW, none INVALID."""
    b = cl.start_peer(sync=b_spec(), extra=["--set", "nf_conntrack_tcp_loose=0"])
    cl.start_conntrackd()
    cl.route_via("a")
    tr = Traffic(cl)
    try:
        c, s = tr.tcp_pair(9092)
        cport = c.getsockname()[1]
        key = (6, sc.CLIENT, sc.SERVER, cport, 9092, 0)

        def synced():
            return any(entry_key(e) == key for e in b.dump("external"))
        check(sc.wait_for(synced, 10), "A's connection did not reach B's external cache")
        st0 = b.stats()
        r = b.cmd("commit")[-1]
        check(r.get("committed", 0) >= 1 and r.get("failed") == 0, "commit: %s" % r)
        mine = [t for t in b.table() if conn_key(t) == key]
        check(len(mine) == 1, "B's table after the commit: %s" % b.table())
        t = mine[0]
        check(TCP_STATES[t["state"]] == "ESTABLISHED" and
              tuple(t["tflags"]) == (8, 8) and tuple(t["wscale"]) == (0, 0),
              "committed entry: state %s flags %s wscale %s" % (
                  TCP_STATES[t["state"]], t["tflags"], t["wscale"]))
        cl.route_via("b")
        tr.after_failover(c, s)
        time.sleep(0.3)
        st1 = b.stats()
        d = {x: st1["tcp_" + x] - st0["tcp_" + x] for x in ("established", "new", "invalid")}
        check(d["established"] >= 100 and d["new"] == 0 and d["invalid"] == 0,
              "B's verdicts for the connection's next packets: %s" % d)
        return "B committed %s; the next packets in B's table: %s" % (r, d)
    finally:
        tr.close()


def case_strangers_and_garbage(cl):
    b = cl.start_peer(sync=b_spec())
    cl.start_conntrackd()
    time.sleep(1.5)
    st0 = b.stats()
    with cl.ns("a"):
        # from an address of A's link that is not the peer
        x = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        x.bind((sc.STRANGER, 0))
        for _ in range(5):
            x.sendto(bytes([0x10, 0, 0, 8, 0, 0, 0, 1]), (sc.B_SYNC, 3780))
        x.close()
        # from the peer's address, hostile bytes
        y = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        y.bind((sc.A_SYNC, 0))
        garbage = [
            bytes([0x20, 0, 0, 8, 0, 0, 0, 1]),                 # version 2
            bytes([0x10, 0, 0x10, 0, 0, 0, 0, 1]),              # length beyond
            bytes([0x10, 0, 0, 16, 0, 0, 0, 2]) + bytes([0, 8, 0, 99, 0, 0, 0, 0]),
            bytes([0x10, 0, 0, 5]),                             # truncated
        ]
        for g in garbage:
            y.sendto(g, (sc.B_SYNC, 3780))
        y.close()
    time.sleep(0.5)
    st = b.stats()
    rej = st["link_rejected_peer"] - st0["link_rejected_peer"]
    check(rej == 5, "strangers refused: %d of 5" % rej)
    bad = {k: st[k] - st0[k] for k in ("msg_rcv_bad_version", "msg_rcv_bad_size",
                                       "msg_rcv_truncated", "msg_rcv_unknown_attr",
                                       "msg_rcv_out_of_window")}
    check(bad["msg_rcv_bad_version"] == 1 and bad["msg_rcv_bad_size"] == 1 and
          bad["msg_rcv_truncated"] == 1 and
          bad["msg_rcv_unknown_attr"] + bad["msg_rcv_out_of_window"] == 1,
          "hostile datagrams counted as %s" % bad)
    # and the link still works
    cl.route_via("a")
    tr = Traffic(cl)
    try:
        tr.tcp_pair(8090)
        ok = sc.wait_for(lambda: any(e.get("dport") == 8090 for e in b.dump("external")), 8)
        check(ok, "after the garbage, A's connection did not reach B")
    finally:
        tr.close()
    return "5 strangers refused, 4 hostile datagrams counted (%s)" % bad


def case_restart(cl):
    b = cl.start_peer(sync=b_spec())
    cl.start_conntrackd()
    cl.route_via("a")
    tr = Traffic(cl)
    try:
        tr.tcp_pair(8100)
        tr.udp_pair(40100, 5353)
        n = len(kernel_entries(cl))
        check(sc.wait_for(lambda: len(b.dump("external")) >= n, 8), "first sync failed")
        cl.stop_peer(b)
        tr.tcp_pair(8101)          # changes while B is down
        b2 = cl.start_peer(sync=b_spec(), name="ctsync_peer(restarted)")
        kern = kernel_entries(cl)
        ok = sc.wait_for(lambda: {kernel_key(k) for k in kern} <=
                         {entry_key(e) for e in b2.dump("external")}, 10)
        check(ok, "restarted B has %d of the kernel's %d entries" % (
            len(b2.dump("external")), len(kern)))
        st = b2.stats()
        return "restarted B asked for a resync (%d sent) and holds all %d entries" % (
            st["resync_sent"], len(kern))
    finally:
        tr.close()


def case_ctrack_to_ctrack(cl):
    # both nodes run ctsync_peer; A's kernel does not matter here
    a = cl.start_peer(role="a", sync="mode=ftfw,transport=udp,iface=ya,local=%s,peer=%s" % (
        sc.A_SYNC, sc.B_SYNC), capture=("ra0", "ra1"), zone=3, name="ctsync_peer(A)")
    b = cl.start_peer(sync=b_spec(), capture=("rb0", "rb1"))
    tr = Traffic(cl)
    try:
        cl.route_via("a")
        tr.tcp_pair(8200)
        tr.udp_pair(40200, 6000)
        cl.route_via("b")
        tr.tcp_pair(8201)
        tr.udp_pair(40201, 6001)
        for i in range(2000):
            a.proc.stdin.write(("add 17 10.1.%d.%d 10.2.0.1 %d 53 0 120 %d 0\n" % (
                i // 250, i % 250, 1024 + i, i)).encode())
        a.proc.stdin.flush()
        for _ in range(2000):
            a.read_json(10)

        def same():
            ai, be = a.dump("internal"), b.dump("external")
            bi, ae = b.dump("internal"), a.dump("external")
            ka, kb = {entry_key(e) for e in ai}, {entry_key(e) for e in be}
            kc, kd = {entry_key(e) for e in bi}, {entry_key(e) for e in ae}
            return (ka == kb and kc == kd and len(ka) >= 2002 and len(kc) >= 2, len(ka), len(kc))  # noqa: E501
        r = sc.wait_for(lambda: same()[0], 15)
        _, na, nb = same()
        check(r, "caches differ: A internal %d, B internal %d" % (na, nb))
        zones = {e["zone"] for e in a.dump("internal") if e["proto"] == 6}
        check(zones == {3}, "A's zone 3 lost: %s" % zones)
        return "A's %d and B's %d entries each in the other's external cache" % (na, nb)
    finally:
        tr.close()


def case_lossy(cl, seconds=20):
    f = subprocess.Popen(["ip", "netns", "exec", cl.names["f"], sys.executable,
                          os.path.join(HERE, "sync_fwd.py"), "fa", "fb", "--loss", "0.05",
                          "--reorder", "0.05", "--seed", "7"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cl.procs.append(f)
    check(f.stdout.readline().strip() == "ready", "forwarder did not start")
    b = cl.start_peer(sync=b_spec())
    cl.start_conntrackd()
    # both nodes past their HELLO handshake before the churn starts
    check(sc.wait_for(lambda: b.stats()["hello_recv"] >= 1, 10), "no HELLO from conntrackd")
    time.sleep(float(os.environ.get("CTSYNC_SETTLE", "3")))
    # churn on both sides: conntrack -I/-D on A, add on B
    end = time.time() + seconds
    i = 0
    script = []
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
        for k in range(20):
            j = i + k
            b.proc.stdin.write(("add 6 10.7.%d.%d 10.8.0.1 %d 443 3 3600 %d 0\n" % (
                (j // 250) % 250, j % 250, 1024 + j % 60000, j)).encode())
        b.proc.stdin.flush()
        for _ in range(20):
            b.read_json(10)
        script.append(len(batch))
    # traffic stops; the link keeps losing

    def converged():
        ai = conntrackd_lines(cl, "-i")
        be = b.dump("external")
        ae = conntrackd_lines(cl, "-e")
        bi = b.dump("internal")
        k1, k2 = {line_key(x) for x in ai}, {entry_key(x) for x in be}
        k3, k4 = {line_key(x) for x in ae}, {entry_key(x) for x in bi}
        return k1 == k2 and k3 == k4, (len(k1), len(k2), len(k3), len(k4))
    r = sc.wait_for(lambda: converged()[0], 40, step=1.0)
    ok, sizes = converged()
    f.terminate()
    fout = f.communicate(timeout=5)[0].strip()
    st = b.stats()
    check(ok, "not converged: A -i %d, B ext %d, A -e %d, B int %d; %s" % (sizes + (fout,)))
    check(st["msg_rcv_lost"] > 0 and st["nacks_sent"] > 0,
          "the link lost nothing? %s" % fout)
    return "converged: A internal %d = B external, B internal %d = A external; %s; B lost %d, " \
           "sent %d NACKs, resent %d, %d resync(s) after a loss in the handshake" % (
               sizes[0], sizes[3], fout, st["msg_rcv_lost"], st["nacks_sent"], st["resent"],
               st["hello_resyncs"])


def case_notrack_lossy(cl):
    f = subprocess.Popen(["ip", "netns", "exec", cl.names["f"], sys.executable,
                          os.path.join(HERE, "sync_fwd.py"), "fa", "fb", "--loss", "0.05",
                          "--seed", "11"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    cl.procs.append(f)
    check(f.stdout.readline().strip() == "ready", "forwarder did not start")
    b = cl.start_peer(sync=b_spec("notrack"))
    cl.start_conntrackd(mode="NOTRACK")
    batch = ["-I -p udp -s 10.5.1.%d -d 10.6.0.1 --sport %d --dport 53 -t 600" % (i // 200, 2000 + i)
             for i in range(600)]
    for k in range(0, len(batch), 50):
        cl.ex("a", ["sh", "-c", "; ".join("conntrack %s >/dev/null 2>&1" % x
                                          for x in batch[k:k + 50])], check=False)
    time.sleep(3)
    f.terminate()
    fout = f.communicate(timeout=5)[0].strip()
    st = b.stats()
    ext = len(b.dump("external"))
    check(st["msg_rcv_lost"] > 0, "NOTRACK reported no loss: %s" % fout)
    return "NOTRACK over a 5%% lossy link: B holds %d of 600, reports %d lost (%s)" % (
        ext, st["msg_rcv_lost"], fout)


CASES = [
    ("conntrackd_to_ctrack_ftfw_udp", lambda cl: case_conntrackd_to_ctrack(cl), False),
    ("ctrack_to_conntrackd_ftfw_udp", lambda cl: case_ctrack_to_conntrackd(cl), False),
    ("commit_failover_established", case_commit, False),
    ("ctrack_to_conntrackd_zone_7",
     lambda cl: case_ctrack_to_conntrackd(cl, zone=7), False),
    ("commit_failover_window_tracking", lambda cl: case_commit(cl, window_tracking=True), False),
    # ^ fails against the kernel (TODO below): ctrack sends the scales, the
    #   kernel drops them (checked first), and window checks with scale 0
    #   make the data INVALID
    ("ctrack_commit_failover", case_ctrack_commit, False),
    ("conntrackd_to_ctrack_ftfw_mcast",
     lambda cl: case_conntrackd_to_ctrack(cl, transport="Multicast", btrans="mcast"), False),
    ("ctrack_to_conntrackd_ftfw_mcast",
     lambda cl: case_ctrack_to_conntrackd(cl, transport="Multicast", btrans="mcast"), False),
    ("conntrackd_to_ctrack_notrack_udp",
     lambda cl: case_conntrackd_to_ctrack(cl, mode="NOTRACK", bmode="notrack"), False),
    ("ctrack_to_conntrackd_notrack_tcp",
     lambda cl: case_ctrack_to_conntrackd(cl, mode="NOTRACK", transport="TCP", btrans="tcp",
                                          bmode="notrack"), False),
    ("conntrackd_to_ctrack_notrack_tcp",
     lambda cl: case_conntrackd_to_ctrack(cl, mode="NOTRACK", transport="TCP", btrans="tcp",
                                          bmode="notrack"), False),
    ("conntrackd_to_ctrack_window_tracking",
     lambda cl: case_conntrackd_to_ctrack(cl, window_tracking=True), False),
    ("strangers_and_garbage", case_strangers_and_garbage, False),
    ("restart_resynchronizes", case_restart, False),
    ("ctrack_to_ctrack", case_ctrack_to_ctrack, False),
    ("ftfw_lossy_link_converges", case_lossy, True),
    ("notrack_lossy_link_reports_loss", case_notrack_lossy, True),
]


TODO = {
    "commit_failover_window_tracking":
        "the kernel drops the window scales ctrack sends: nlattr_to_tcp keeps them only "
        "for directions flagged WINDOW_SCALE, and conntrackd 1.4.7 sends no TCP flags "
        "with TCPWindowTracking On (docs/record.md)",
}


def missing():
    if os.geteuid() != 0:
        return "not root"
    for tool in ("ip", "nft", "conntrack", "conntrackd"):
        if not shutil.which(tool):
            return "%s not installed" % tool
    try:
        r = subprocess.run(["ip", "netns", "add", "cts-probe-%d" % os.getpid()],
                           capture_output=True)
        if r.returncode:
            return "cannot create network namespaces"
    finally:
        subprocess.run(["ip", "netns", "del", "cts-probe-%d" % os.getpid()],
                       capture_output=True)
    return None


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer", required=True)
    ap.add_argument("--only", default="")
    args = ap.parse_args(argv)
    why = missing()
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
            with sc.Cluster(args.peer, fwd=fwd) as cl:
                cl.build()
                msg = fn(cl)
            print("ok %d - %s: %s (%.1f s)" % (i, name, msg, time.time() - t0), flush=True)
        except Exception as e:  # noqa: BLE001 - every failure is a TAP line
            if name in TODO:
                print("not ok %d - %s: %s # TODO %s" % (i, name, e, TODO[name]), flush=True)
                continue
            failed += 1
            print("not ok %d - %s: %s" % (i, name, e), flush=True)
            for line in traceback.format_exc().splitlines()[-8:]:
                print("# " + line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
