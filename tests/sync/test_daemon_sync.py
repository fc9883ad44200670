#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_daemon_sync: `ctrack daemon --sync` and `ctrack sync ...`, no root.

The daemon replays a synthetic capture (tests/daemon/gen_flows.py) and
speaks conntrackd's protocol on loopback to ctsync_peer (phase 1's node, a
separate program built on the same library module) - FTFW over UDP on a
random port.  What each case checks is derived from something other than
the code under test:
  - the daemon's own table (`ctrack list -o json`) against what reaches
    the peer's external cache: every entry, with its state, ASSURED /
    SEEN_REPLY, mark and timeout (within 2 s), and against the daemon's
    `ctrack sync list --internal`;
  - records the test adds on the peer (their values chosen here) against
    `ctrack sync list --external -o json` on the daemon;
  - `ctrack sync flush --external` then `ctrack sync resync`: the cache
    empties (removed = its size) and fills again from the peer;
  - strangers (a source address not accepted) and hostile datagrams from
    the peer's address: counted under their names in `ctrack sync stats`,
    nothing added;
  - a daemon restarted: the peer sees a HELLO, the new daemon's external
    cache holds the peer's entries again (startup resync) and the peer's
    external cache holds the new daemon's table;
  - events lost on a full event ring (--event-ring 64, 3000 flows at full
    speed): counted, and the peer still ends with exactly the table;
  - `ctrack sync commit` refuses plainly (no record layer in this build);
  - bad --sync settings, in a flag and in a config file: a sentence and
    exit status 1; sync commands to a daemon without --sync: "sync is off".
Usage: test_daemon_sync.py CTRACK CTSYNC_PEER
"""

import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "daemon"))
sys.path.insert(0, HERE)
import dm_util  # noqa: E402
import sync_cluster as sc  # noqa: E402

D_ADDR, P_ADDR, STRANGER = "127.0.0.1", "127.0.0.2", "127.0.0.3"
TCP_STATES = ["NONE", "SYN_SENT", "SYN_RECV", "ESTABLISHED", "FIN_WAIT", "CLOSE_WAIT",
              "LAST_ACK", "TIME_WAIT", "CLOSE", "SYN_SENT2"]


def json_lines(text):
    return [json.loads(x) for x in text.splitlines() if x.strip()]


def tkey(proto, t, zone):
    if proto in (1, 58):
        return (proto, t["src"], t["dst"], int(t["type"]), int(t["code"]), int(t["id"]),
                int(zone))
    return (proto, t["src"], t["dst"], int(t.get("sport", 0)), int(t.get("dport", 0)),
            int(zone))


def list_key(e):
    """A line of `ctrack list -o json` / `ctrack sync list -o json`."""
    return tkey(e["protonum"], e["orig"], e["zone"])


def peer_key(e):
    return tkey(e["proto"], e, e["zone"])


class Setup:
    def __init__(self, ctrack, peer_bin):
        self.ctrack = ctrack
        self.peer_bin = peer_bin
        self.dir = tempfile.mkdtemp(prefix="ctk-dsync-")
        self.port = random.randint(20000, 60000)
        self.peer = None
        self.procs = []

    def d_spec(self, extra=""):
        s = "mode=ftfw,transport=udp,local=%s,peer=%s,accept=%s+%s,port=%d" % (
            D_ADDR, P_ADDR, D_ADDR, P_ADDR, self.port)
        return s + ("," + extra if extra else "")

    def start_peer(self):
        spec = "mode=ftfw,transport=udp,local=%s,peer=%s,accept=%s,port=%d" % (
            P_ADDR, D_ADDR, D_ADDR, self.port)
        p = subprocess.Popen([self.peer_bin, "--sync", spec], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.procs.append(p)
        self.peer = sc.Peer(p, "ctsync_peer")
        return self.peer

    def cleanup(self):
        if self.peer:
            self.peer.stop()
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def sync_list(d, which="external"):
    r = d.run("sync", "list", "--" + which, "-o", "json")
    return json_lines(r.stdout)


def sync_stats(d):
    r = d.run("sync", "stats", "-o", "json")
    return json.loads(r.stdout)["sync"]


def table(d):
    return json_lines(d.run("list", "-o", "json").stdout)


def compare(tab, ext):
    """Each table entry (ctrack list -o json) in the peer's external cache
    (ctsync_peer's dump) with equal fields; returns the problems."""
    by = {peer_key(e): e for e in ext}
    problems = []
    for t in tab:
        k = list_key(t)
        e = by.get(k)
        if e is None:
            problems.append("missing: %s" % (k,))
            continue
        if t["protonum"] == 6 and TCP_STATES[e.get("state", 0)] != t.get("state"):
            problems.append("%s: state %s != %s" % (k, e.get("state"), t.get("state")))
        if e["mark"] != t["mark"]:
            problems.append("%s: mark %s != %s" % (k, e["mark"], t["mark"]))
        if e["status"] & 6 != t["status"] & 6:
            problems.append("%s: status %#x != %#x" % (k, e["status"], t["status"]))
        if abs(e.get("timeout", -99) - t["timeout"]) > 2:
            problems.append("%s: timeout %s != %s" % (k, e.get("timeout"), t["timeout"]))
        if e["reply"]["src"] != t["reply"]["src"] or e["reply"]["dst"] != t["reply"]["dst"]:
            problems.append("%s: reply %s != %s" % (k, e["reply"], t["reply"]))
    if len(ext) != len(tab):
        problems.append("the peer holds %d entries, the table %d" % (len(ext), len(tab)))
    return problems


def main(argv):
    if len(argv) != 2:
        print("usage: test_daemon_sync.py CTRACK CTSYNC_PEER", file=sys.stderr)
        return 2
    ctrack, peer_bin = argv
    tap = dm_util.Tap()
    work = tempfile.mkdtemp(prefix="ctk-dsync-cap-")
    cap = os.path.join(work, "flows.pcap")
    flows = dm_util.gen_capture(cap, udp=150, udp6=50, tcp=60, icmp=20)
    nflows = int(flows["flows"])
    # ESTABLISHED's timeout equal to the unacknowledged-data one (300 s):
    # each TCP flow ends with a segment not yet acknowledged, which moves
    # the entry's timeout to 300 s without an event, and what a peer gets
    # is the timeout of the entry's last event (conntrackd's rule too:
    # docs/sync.md); with the two equal, a timeout that is carried wrong
    # still shows
    base = ["--replay", cap, "--speed", "0", "--set", "nf_conntrack_udp_timeout=600",
            "--set", "nf_conntrack_icmp_timeout=600", "--set",
            "nf_conntrack_tcp_timeout_established=300"]
    st = Setup(ctrack, peer_bin)
    daemons = []

    def daemon(args, **kw):
        d = dm_util.Daemon(ctrack, args, **kw)
        daemons.append(d)
        return d

    try:
        # -- settings refused in words ---------------------------------------
        for bad, want in ((["--sync", "mode=bogus"], "mode"),
                          (["--sync", "transport=mcast,local=127.0.0.1"], "multicast"),
                          (["--sync", "mode=ftfw,transport=udp,local=10.0.0.1,peer=10.0.0"],
                           "peer")):
            p = subprocess.run([ctrack, "daemon", "--replay", cap, "--check"] + bad,
                               capture_output=True, text=True)
            tap.ok(p.returncode == 1 and want in p.stderr and "--sync" in p.stderr,
                   "daemon %s: exit 1 and a sentence naming it" % " ".join(bad),
                   [p.returncode, p.stderr])
        conf = os.path.join(work, "sync.conf")
        with open(conf, "w") as f:
            f.write("replay %s\nsync mode=ftfw\nsync transport=udp\nsync local=%s\n"
                    "sync peer=%s\n" % (cap, D_ADDR, P_ADDR))
        p = subprocess.run([ctrack, "daemon", "--config", conf, "--check"],
                           capture_output=True, text=True)
        tap.ok(p.returncode == 0, "config file: sync settings one a line are valid",
               [p.stdout, p.stderr])
        with open(conf, "a") as f:
            f.write("sync window=0\n")
        p = subprocess.run([ctrack, "daemon", "--config", conf, "--check"],
                           capture_output=True, text=True)
        tap.ok(p.returncode == 1 and "window" in p.stderr,
               "config file: a bad sync value is refused by name", [p.returncode, p.stderr])

        # -- sync off ------------------------------------------------------
        d0 = daemon(base)
        p = d0.run("sync", "stats", check=False)
        tap.ok(p.returncode == 1 and "sync is off" in p.stderr,
               "sync stats without --sync: 'sync is off', exit 1", [p.returncode, p.stderr])
        p = subprocess.run([ctrack, "sync", "list", "--internal", "--external"],
                           capture_output=True, text=True)
        tap.ok(p.returncode == 1 and "exclude" in p.stderr,
               "sync list --internal --external: refused", [p.stderr])
        d0.cleanup()

        # -- the daemon's table reaches the peer -----------------------------
        peer = st.start_peer()
        d = daemon(base + ["--sync", st.d_spec()])
        tab = table(d)
        tap.ok(len(tab) == nflows, "the daemon tracks the capture's %d flows" % nflows,
               [len(tab)])
        ok = sc.wait_for(lambda: len(peer.dump("external")) >= len(tab), 15)
        ext = peer.dump("external")
        tab = table(d)
        probs = compare(tab, ext)
        tap.ok(ok and not probs, "each of the daemon's %d entries in the peer's external "
               "cache: tuples, states, status, marks, timeouts within 2 s" % len(tab), probs[:10])
        internal = sync_list(d, "internal")
        tap.ok({list_key(x) for x in internal} == {list_key(x) for x in tab},
               "ctrack sync list --internal holds the table", [len(internal), len(tab)])
        text = d.run("sync", "internal").stdout.splitlines()
        tap.ok(len(text) == len(tab) and all(" src=" in x and "packets=" not in x
                                              for x in text),
               "ctrack sync internal: conntrack's lines, one per entry", text[:3])

        # -- the peer's records reach the daemon ---------------------------
        want = {}
        for i in range(300):
            src, dport, mark = "10.9.%d.%d" % (i // 200, i % 200 + 1), 443, 1000 + i
            zone = 4 if i % 3 == 0 else 0
            proto = 6 if i % 2 else 17
            state = 3 if proto == 6 else 0
            timeout = 500 + i
            peer.proc.stdin.write(("add %d %s 10.8.0.1 %d %d %d %d %d %d\n" % (
                proto, src, 2000 + i, dport, state, timeout, mark, zone)).encode())
            want[(proto, src, "10.8.0.1", 2000 + i, dport, zone)] = (state, timeout, mark)
        peer.proc.stdin.flush()
        for _ in range(300):
            peer.read_json(10)
        t0 = time.time()
        ok = sc.wait_for(lambda: len(sync_list(d)) >= 300, 15)
        got = {list_key(x): x for x in sync_list(d)}
        el = time.time() - t0
        probs = []
        for k, (state, timeout, mark) in want.items():
            x = got.get(k)
            if x is None:
                probs.append("missing %s" % (k,))
                continue
            if k[0] == 6 and x.get("state") != TCP_STATES[state]:
                probs.append("%s: state %s" % (k, x.get("state")))
            if x["mark"] != mark or x["zone"] != k[5]:
                probs.append("%s: mark %s zone %s" % (k, x["mark"], x["zone"]))
            if not (timeout - 2 - el <= x["timeout"] <= timeout):
                probs.append("%s: timeout %s, sent %s" % (k, x["timeout"], timeout))
            if not x["assured"] or x["unreplied"]:
                probs.append("%s: status %s" % (k, x["status"]))
        tap.ok(ok and not probs and len(got) == 300,
               "300 records added on the peer in `ctrack sync list --external -o json` with "
               "their states, marks, zones, timeouts", probs[:10] + [len(got)])

        # -- flush and resync ----------------------------------------------
        s0 = sync_stats(d)
        p0 = peer.stats()
        r = json.loads(d.run("sync", "flush", "--external", "-o", "json").stdout)
        tap.ok(r.get("removed") == 300 and not sync_list(d),
               "sync flush --external removes the 300", [r])
        d.run("sync", "resync")
        ok = sc.wait_for(lambda: len(sync_list(d)) == 300, 10)
        s1 = sync_stats(d)
        p1 = peer.stats()
        tap.ok(ok and s1["network"]["resync_sent"] == s0["network"]["resync_sent"] + 1 and
               p1["resync_recv"] == p0["resync_recv"] + 1,
               "sync resync: one RESYNC sent, the peer's 300 back",
               [len(sync_list(d)), s0["network"], p1])

        # -- strangers and hostile datagrams --------------------------------
        s0 = sync_stats(d)
        x = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        x.bind((STRANGER, 0))
        for _ in range(4):
            x.sendto(bytes([0x10, 0, 0, 8, 0, 0, 0, 1]), (D_ADDR, st.port))
        x.close()
        y = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        y.bind((P_ADDR, 0))
        for g in (bytes([0x20, 0, 0, 8, 0, 0, 0, 1]),          # version 2
                  bytes([0x10, 0, 0x10, 0, 0, 0, 0, 1]),       # length beyond
                  bytes([0x10, 0, 0, 5])):                     # truncated
            y.sendto(g, (D_ADDR, st.port))
        y.close()
        time.sleep(0.5)
        s1 = sync_stats(d)

        def delta(part, k):
            return s1[part][k] - s0[part][k]
        bad = {k: delta("network", k) for k in ("msg_rcv_bad_version", "msg_rcv_bad_size",
                                                "msg_rcv_truncated")}
        tap.ok(delta("link", "rejected_peer") == 4 and bad == {
            "msg_rcv_bad_version": 1, "msg_rcv_bad_size": 1, "msg_rcv_truncated": 1} and
            s1["external"]["active"] == 300,
            "4 strangers refused, 3 hostile datagrams counted by name, the cache intact",
            [delta("link", "rejected_peer"), bad, s1["external"]])

        # -- a restarted daemon resynchronizes ---------------------------------
        h0 = peer.stats()["hello_recv"]
        d.cleanup()
        d = daemon(base + ["--sync", st.d_spec()])
        ok = sc.wait_for(lambda: len(sync_list(d)) == 300, 10)
        tab = table(d)
        ok2 = sc.wait_for(lambda: not compare(table(d), peer.dump("external")), 10)
        tap.ok(ok and ok2 and peer.stats()["hello_recv"] > h0,
               "restarted daemon: HELLO seen by the peer, its 300 back, its table in the peer",
               [len(sync_list(d)), compare(table(d), peer.dump("external"))[:5]])
        # -- commit: the peer's 300 into the table --------------------------------
        n0 = len(table(d))
        p = d.run("sync", "commit", "-o", "json", check=False)
        r = json.loads(p.stdout) if p.returncode == 0 else {}
        tab = {list_key(x): x for x in table(d)}
        probs = []
        for k, (state, timeout, mark) in want.items():
            x = tab.get(k)
            if x is None:
                probs.append("not in the table: %s" % (k,))
            elif (x["mark"] != mark or x["zone"] != k[5] or not x["assured"] or
                  (k[0] == 6 and x.get("state") != TCP_STATES[state]) or
                  not (timeout - 60 <= x["timeout"] <= timeout)):
                probs.append("%s: %s" % (k, x))
        tap.ok(p.returncode == 0 and r.get("committed") == 300 and r.get("failed") == 0
               and len(tab) == n0 + 300 and not probs,
               "sync commit: the peer's 300 in the table with their states, marks, zones "
               "and timeouts", [p.returncode, p.stderr, r, len(tab), n0] + probs[:8])
        # the committed entries are this node's now: they reach the peer
        ok = sc.wait_for(lambda: len(peer.dump("external")) == len(tab), 10)
        tap.ok(ok, "the committed entries reach the peer as this node's",
               [len(peer.dump("external")), len(tab)])

        d.cleanup()
        st.cleanup()

        # -- events lost on the bus: counted and repaired ----------------------
        cap2 = os.path.join(work, "many.pcap")
        dm_util.gen_capture(cap2, udp=3000, span_ms=50)
        st2 = Setup(ctrack, peer_bin)
        peer = st2.start_peer()
        d = daemon(["--replay", cap2, "--speed", "0", "--event-ring", "64", "--set",
                    "nf_conntrack_udp_timeout=600", "--sync", st2.d_spec()])
        s = sync_stats(d)
        if s["feed"]["events_lost"] == 0:
            tap.skip("events lost on a full ring are repaired",
                     "this run lost no event (the main thread kept up)")
        else:
            ok = sc.wait_for(lambda: not compare(table(d), peer.dump("external")), 15)
            s = sync_stats(d)
            tap.ok(ok and s["feed"]["reconciles"] >= 1,
                   "%d events lost on the bus: counted, reconciled (%d), the peer holds the "
                   "table" % (s["feed"]["events_lost"], s["feed"]["reconciles"]),
                   [s["feed"], compare(table(d), peer.dump("external"))[:5]])
        st2.cleanup()
    except Exception as e:  # noqa: BLE001 - a failure is a TAP line
        import traceback
        tap.ok(False, "unexpected error: %s" % e, [traceback.format_exc()] +
               [x.log_text() for x in daemons[-1:]])
    finally:
        for d in daemons:
            d.cleanup()
        st.cleanup()
        import shutil
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(st.dir, ignore_errors=True)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
