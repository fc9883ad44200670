#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""sync_conntrackd: ctrack's sync node and conntrackd 1.4.7 side by side.

`ctrack-bench sync --conntrackd` runs this after its in-process variants.
The same flow - --conns UDP connections, sent as one bulk (conntrackd -B,
or ctsync_peer's `bulk`) over FTFW/UDP on a real veth between two network
namespaces (tests/sync/sync_cluster.py) - is carried four ways:

  conntrackd->conntrackd   the Linux cluster as deployed today
  conntrackd->ctrack       A's conntrackd sends, ctsync_peer receives
  ctrack->conntrackd       ctsync_peer sends, A's conntrackd receives
  ctrack->ctrack           ctsync_peer on both nodes

For each: the wall time from the bulk request until the receiver's
external cache holds every entry, entries per second, and each side's
process CPU time (/proc/PID/task/*/schedstat, every thread of the
process) per entry, measured until both are idle
again.  conntrackd's own entries come from A's kernel table (100k UDP
entries created over ctnetlink before it starts: it dumps them into its
internal cache); ctsync_peer's from `add` commands.  Both use 4 MiB socket
buffers.  Needs root.

Output: one line per way, or JSON objects with --json (bench "sync",
variant "wire-<sender>-<receiver>").
"""

import argparse
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "sync"))
import ctnl  # noqa: E402
import sync_cluster as sc  # noqa: E402



# Both daemons get ctrack's default socket buffers (ctsync_peer's transport
# sets 4 MiB; conntrackd: SndSocketBuffer / RcvSocketBuffer).
SOCKBUF = 4 << 20


def cpu_ns(pid):
    """Nanoseconds on a CPU of all of @pid's threads (schedstat: exact,
    where /proc/PID/stat counts 10 ms ticks)."""
    total = 0
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, t)) as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def idle(pids, quiet=0.6, limit=30):
    """Waits until none of @pids used CPU for @quiet seconds."""
    end = time.time() + limit
    last = [cpu_ns(p) for p in pids]
    calm_since = time.time()
    while time.time() < end:
        time.sleep(0.2)
        now = [cpu_ns(p) for p in pids]
        if now != last:
            calm_since = time.time()
            last = now
        elif time.time() - calm_since >= quiet:
            return


def conntrackd_active(cl, role, cache):
    out = cl.conntrackd("-s", role=role)
    m = re.search(r"cache %s:\s*\ncurrent active connections:\s*(\d+)" % cache, out)
    return int(m.group(1)) if m else -1


def flows(n):
    return [("10.%d.%d.%d" % (50 + i // 65536, (i // 256) % 256, i % 256), "10.99.9.9",
             1024 + i % 60000, 53) for i in range(n)]


def add_entries(peer, n):
    for k in range(0, n, 1000):
        lines = "".join("add 17 10.%d.%d.%d 10.99.9.9 %d 53 0 600 0 0\n" % (
            50 + i // 65536, (i // 256) % 256, i % 256, 1024 + i % 60000)
            for i in range(k, min(n, k + 1000)))
        peer.proc.stdin.write(lines.encode())
        peer.proc.stdin.flush()
        for _ in range(min(n, k + 1000) - k):
            peer.read_json(30)


def b_spec(role):
    me, other, ifn = (sc.A_SYNC, sc.B_SYNC, "ya") if role == "a" else (sc.B_SYNC, sc.A_SYNC, "yb")
    return ("mode=ftfw,transport=udp,iface=%s,local=%s,peer=%s,startup-resync=off,"
            "resync-on-hello=off,max-internal=2000000,max-external=2000000" % (ifn, me, other))


def one_way(peer_bin, n, sender, receiver):
    with sc.Cluster(peer_bin) as cl:
        cl.build()
        procs = {}
        # the sender's entries
        if sender == "conntrackd":
            with cl.ns("a"):
                refused = ctnl.create_udp(flows(n))
            if refused:
                raise RuntimeError("the kernel refused %d entries" % refused)
            pa = cl.start_conntrackd(role="a", startup_resync=False, sockbuf=SOCKBUF)
            procs["send"] = pa.pid
            sc.wait_for(lambda: conntrackd_active(cl, "a", "internal") >= n, 60)
        else:
            a = cl.start_peer(role="a", sync=b_spec("a"), capture=(), name="ctsync_peer(A)")
            add_entries(a, n)
            procs["send"] = a.proc.pid
        if receiver == "conntrackd":
            pb = cl.start_conntrackd(role="b", startup_resync=False, sockbuf=SOCKBUF)
            procs["recv"] = pb.pid

            def got():
                return conntrackd_active(cl, "b", "external")
        else:
            b = cl.start_peer(role="b", sync=b_spec("b"), capture=())
            procs["recv"] = b.proc.pid

            def got():
                return b.stats()["external.active"]
        time.sleep(2.5)       # HELLOs exchanged, keepalives only
        idle(list(procs.values()))
        c0 = {k: cpu_ns(p) for k, p in procs.items()}
        t0 = time.time()
        if sender == "conntrackd":
            cl.conntrackd("-B", role="a")
        else:
            a.cmd("bulk")
        done = sc.wait_for(lambda: got() >= n, 120, step=0.02)
        t1 = time.time()
        idle(list(procs.values()))
        c1 = {k: cpu_ns(p) for k, p in procs.items()}
        have = got()
        if os.environ.get("SYNC_BENCH_DEBUG") and receiver == "ctrack":
            print(b.stats(), file=sys.stderr)
        return {
            "entries": n, "received": have, "complete": bool(done) and have >= n,
            "ms": (t1 - t0) * 1e3, "entries_per_s": n / (t1 - t0),
            "sender_ns_per_entry_cpu": (c1["send"] - c0["send"]) / n,
            "receiver_ns_per_entry_cpu": (c1["recv"] - c0["recv"]) / n,
        }


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer", required=True)
    ap.add_argument("--conns", type=int, default=100000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    why = None
    if os.geteuid() != 0:
        why = "not root"
    elif not os.access(args.peer, os.X_OK):
        why = "%s not built" % args.peer
    if why:
        print("sync: conntrackd side by side skipped: %s" % why, file=sys.stderr)
        return 0
    rc = 0
    for sender, receiver in (("conntrackd", "conntrackd"), ("conntrackd", "ctrack"),
                             ("ctrack", "conntrackd"), ("ctrack", "ctrack")):
        variant = "wire-%s-%s" % (sender, receiver)
        try:
            r = one_way(args.peer, args.conns, sender, receiver)
        except Exception as e:  # noqa: BLE001 - a way that failed is reported
            r = {"error": str(e)}
            rc = 1
        if args.json:
            print(json.dumps(dict({"bench": "sync", "variant": variant}, **r)), flush=True)
        else:
            print("sync       %-28s %s" % (variant, " ".join(
                "%s=%s" % (k, ("%.4g" % v) if isinstance(v, float) else v)
                for k, v in r.items())), flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
