#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""kd_live_restart: `ctrack daemon --state` restarted in the middle of live
traffic, against the kernel's conntrack (issue 25, "Restart").

kd_live's topology and daemon (client - router - server namespaces made and
removed here, the daemon in the router namespace on the router's two ports,
the router's sysctls given to it), with the kernel's default timeouts and
nf_conntrack_tcp_loose=0 on both sides, so that a TCP packet the window tracking does not accept is INVALID
and is not counted.  Traffic from the kernels' own stacks: kd_live's first
phase (HTTP, held connections, UDP, ping, a refused connect, an RST) and
four TCP connections to an echo server that stay open through the restarts.

  1. the router's table and `ctrack list` compared (kd_live's rules: state,
     tuples, flags, counters exact, timeouts within 2 s; 99.5% exact, no
     extra entry);
  2. SIGTERM (the daemon saves), a pause with no traffic, a start with the
     same --state: the same comparison right away - nothing lost, timeouts
     moved by the time that passed;
  3. 256 KiB each way on each held connection: compared again (the
     counters are exact only if every packet was accepted: the restored
     window tracking took them with tcp_loose=0), each held connection
     ESTABLISHED in ctrack;
  4. a periodic save (--state-interval 1) with no traffic after it, kill -9,
     a start: compared again, more data, compared again.
TAP; exit 77 with the reason when the kernel side cannot run here.
Usage: kd_live_restart.py --ctrack PATH [--keep DIR]
"""

import argparse
import os
import shutil
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import kd_ctline  # noqa: E402
import kd_live  # noqa: E402
import kd_netns  # noqa: E402

SKIP = 77
ECHO_PORT = 7100
CHUNK = 256 * 1024


def echo_server(ctx, v):
    ls = ctx.listen("server", v, ECHO_PORT)
    ls.settimeout(0.2)

    def serve(c):
        c.settimeout(30)
        while True:
            d = c.recv(65536)
            if not d:
                break
            c.sendall(d)

    def loop():
        while not ctx.stop.is_set():
            try:
                c, _ = ls.accept()
            except OSError:
                continue
            ctx.socks.append(c)
            ctx.thread(serve, c)
    ctx.thread(loop)


def exchange(socks, n):
    """n bytes each way on each socket: sent, and read back from the echo."""
    for s in socks:
        s.sendall(b"e" * n)
        got = 0
        while got < n:
            d = s.recv(65536)
            if not d:
                raise OSError("the echo connection closed")
            got += len(d)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ctrack", required=True)
    ap.add_argument("--keep", help="keep the logs in this directory")
    args = ap.parse_args(argv)
    reason = kd_live.skip_reason(args.ctrack)
    if reason:
        print("1..0 # SKIP live restart: %s" % reason)
        # the plan says skip; meson's TAP reader takes any non-zero
        # status for an error, whatever the plan says (kdiff.py's --skip-exit 0)
        return 0
    tap = kd_live.Tap()
    workdir = args.keep or tempfile.mkdtemp(prefix="ctk-liverst-")
    os.makedirs(workdir, exist_ok=True)
    topo = kd_netns.Topology()
    dm = traffic = None
    state = os.path.join(workdir, "state")
    extra = ["--state", state, "--state-interval", "1"]
    # the kernel's default timeouts (UDP and ICMP 30 s, TIME_WAIT 120 s),
    # longer than the test: kd_live's 4-second ones put entries at their
    # expiry at the moments compared on a loaded machine (expiry while the
    # daemon is down is tests/daemon/test_state.py's)
    sysctls = {"net.netfilter.nf_conntrack_tcp_loose": 0}
    starts = 0

    def start():
        nonlocal starts
        starts += 1
        return kd_live.Daemon(topo, args.ctrack, workdir, sysfile, extra,
                              logname="daemon-%d.log" % starts)

    def log_of(n):
        with open(os.path.join(workdir, "daemon-%d.log" % n)) as f:
            return f.read()

    def snapshot(name):
        time.sleep(0.4)   # nothing in flight between the trackers
        k = kd_live.kernel_table(topo)
        c, other = kd_live.ctrack_table(dm)
        # Entries at their expiry cannot be judged: with nothing reading
        # /proc/net/nf_conntrack (kd_live's kd_events pokes it) the kernel
        # lists an expired entry at 0 s until its gc reaps it, and ctrack's
        # list skips an entry whose time is up.  Both sides' entries with
        # at most 1 s left in the kernel are set aside (counted in the name;
        # with the kernel's default timeouts, longer than this test, none).
        edge = {kd_ctline.key(r) for r in k if r["timeout"] is not None and
                r["timeout"] <= 1}
        k = [r for r in k if kd_ctline.key(r) not in edge]
        c = [r for r in c if kd_ctline.key(r) not in edge]
        exact, extra_n, lines = kd_live.compare_tables(k, c)
        pct = 100.0 * exact / len(k) if k else 100.0
        tap.ok(pct >= kd_live.THRESHOLD_PCT and extra_n == 0 and not other,
               "%s: kernel %d entries, ctrack %d exact (%.1f%%), %d extra; %d at their "
               "expiry set aside" % (name, len(k), exact, pct, extra_n, len(edge)),
               lines[:40] + other[:5])
        return k, c

    def held_established(c, socks):
        ports = {str(s.getsockname()[1]) for s in socks}
        got = [r for r in c if r["proto"] == "tcp" and dict(r["orig"]).get("sport") in ports]
        bad = [r["line"] for r in got if r["state"] != "ESTABLISHED"]
        tap.ok(len(got) == len(socks) and not bad,
               "the %d connections held across the restart are ESTABLISHED in ctrack (%d)"
               % (len(socks), len(got)), bad)

    try:
        topo.build(router_sysctls=sysctls)
        sysfile = os.path.join(workdir, "router-sysctls.txt")
        with open(sysfile, "w") as f:
            f.write(topo.router_sysctl_dump())
        dm = start()
        traffic = kd_live.Traffic(topo, workdir)
        ctx = traffic.ctx
        for v in (4, 6):
            echo_server(ctx, v)
        time.sleep(0.3)
        held = [ctx.connect(v, ECHO_PORT, timeout=30) for v in (4, 6) for _ in range(2)]
        exchange(held, CHUNK)
        traffic.phase_a()
        snapshot("before the restart")

        rc = dm.stop()
        log1 = log_of(1)
        tap.ok(rc == 0 and "(stop)" in log1, "SIGTERM: exit 0, the state saved", [log1])
        time.sleep(1.5)
        dm = start()
        log2 = log_of(2)
        tap.ok("state: restored" in log2, "the restart restores the file", [log2])
        snapshot("right after the restart (SIGTERM, 1.5 s down)")
        exchange(held, CHUNK)
        _, c = snapshot("after 256 KiB each way on each held connection")
        held_established(c, held)

        # kill -9 after a periodic save with nothing after it
        time.sleep(0.3)
        mark = len(log_of(2))
        deadline = time.time() + 20
        while "(interval)" not in log_of(2)[mark:] and time.time() < deadline:
            time.sleep(0.1)
        rc = dm.stop(signal.SIGKILL)
        tap.ok(rc == -signal.SIGKILL and "(interval)" in log_of(2)[mark:],
               "kill -9 after a periodic save with no traffic after it")
        dm = start()
        snapshot("right after the restart that followed kill -9")
        exchange(held, CHUNK)
        _, c = snapshot("after more data on the held connections")
        held_established(c, held)
        rc, out, _ = dm.run("stats", "--all", check=False)
        tap.note("daemon: " + " | ".join(out.splitlines()[2:]))
    except Exception as e:  # the namespaces go whatever happened
        tap.ok(False, "the live restart run completed", [repr(e)])
    finally:
        if dm:
            rc = dm.stop()
            tap.ok(rc == 0, "the last daemon stops cleanly on SIGTERM (exit %s)" % rc)
        if traffic:
            traffic.close()
        topo.teardown()
    tap.note("logs in %s" % workdir)
    tap.done()
    if not args.keep and tap.failed == 0:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
