#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_daemon_nat: `ctrack daemon --nat` - the daemon binds as `ctrack read
--nat` does, lists the translated reply tuples, filters by NAT over the
control socket, and keeps its NATed table across a restart (--state).

No root: a replay daemon on the NAT gateway capture of tests/support/
nat_gateway.py (reply tuples derived there from the rules).
  - replaying the whole capture with --nat-file: `ctrack list` shows the
    derived reply tuples, and its lines are `ctrack read --nat-file`'s
    over the same capture but the timeout;
  - `ctrack list -n / -g / -j / -n -g / -j -g` and `ctrack count -j` keep
    what the rules translated: the source (every client), the destination
    (the port forward), either, both, either (conntrack's filter_nat: -j
    wins);
  - the first part with --state, SIGTERM, a restart on the second part:
    the listing is the whole capture's (the reply tuples, and a new
    connection after the restart that reuses a restored source mapping),
    and without the state file it is not;
  - the state file without --nat stops the start (exit 3, the file and
    the cause named); a bad rule stops it with the rule and the column
    (exit 1), as do a missing --nat-file and --nat-exact-ports alone.
Usage: test_daemon_nat.py CTRACK
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "support"))
import dm_util  # noqa: E402
from nat_gateway import RULES, build, reply_tuples  # noqa: E402

SETS = ["--workers", "2", "--speed", "0", "--set", "nf_conntrack_udp_timeout=600",
        "--set", "nf_conntrack_icmp_timeout=600",
        "--set", "nf_conntrack_tcp_timeout_time_wait=600"]


def no_timeout(line):
    """A conntrack -L line without its timeout and, for UDP, its ASSURED
    flag: the daemon replays at --speed 0 in real time, ctrack read in
    capture time, and UDP is ASSURED by a packet 2 s after its first
    (nf_conntrack_proto_udp.c's stream rule) - time, not NAT."""
    t = line.split()
    del t[2]
    if t[0] == "udp":
        t = [x for x in t if x != "[ASSURED]"]
    return " ".join(t)


def lines(text):
    return sorted(no_timeout(ln) for ln in text.splitlines() if ln.strip())



def free_tcp_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_fail(ctrack, args, timeout=30):
    d = tempfile.mkdtemp(prefix="ctk-dmn-")
    try:
        p = subprocess.run([ctrack, "daemon", "--socket", os.path.join(d, "s")] + args,
                           capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return None, "still running after %d s" % timeout
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main(argv):
    ctrack = argv[0]
    tap = dm_util.Tap()
    work = tempfile.mkdtemp(prefix="ctk-dmnat-")
    paths, expect = build(work)
    rules = os.path.join(work, "rules.nat")
    with open(rules, "w") as f:
        f.write("\n".join(RULES) + "\n")
    nat = ["--nat-file", rules]
    state = os.path.join(work, "state")
    daemons = []

    def daemon(args, **kw):
        dm = dm_util.Daemon(ctrack, args, **kw)
        daemons.append(dm)
        return dm

    try:
        read = subprocess.run([ctrack, "read", "--no-progress"] + SETS[4:] + nat +
                              [paths["whole"]], capture_output=True, text=True, timeout=60)
        port = free_tcp_port()
        ref = daemon(SETS + nat + ["--replay", paths["whole"],
                                   "--metrics-listen", "127.0.0.1:%d" % port])
        whole = ref.run("list").stdout
        got = reply_tuples(whole)
        bad = ["%s: %s, want %s" % (k, got.get(k), v) for k, v in sorted(expect.items())
               if got.get(k) != v]
        tap.ok(not bad, "ctrack list shows the rules' reply tuples (%d connections)" %
               len(expect), bad)
        tap.ok(read.returncode == 0 and lines(whole) == lines(read.stdout),
               "the daemon's listing is ctrack read --nat-file's but the timeouts",
               [read.stderr] + sorted(set(lines(whole)) ^ set(lines(read.stdout)))[:6])
        # the NAT filters: every client is source-NATed, the port forward
        # also destination-NATed
        n_all = len(whole.splitlines())
        dnat = [k for k, v in expect.items() if v[0] != k[2]]
        for flags, want in ((["-n"], n_all), (["-g"], len(dnat)), (["-j"], n_all),
                            (["-n", "-g"], len(dnat)), (["--dst-nat"], len(dnat)),
                            (["-j", "-g"], n_all)):
            out = ref.run("list", *flags).stdout
            tap.ok(len(out.splitlines()) == want and
                   all("dst=172.16.0.5" not in ln or "sport=8080" in ln
                       for ln in out.splitlines()),
                   "ctrack list %s: %d entries (want %d)" % (" ".join(flags),
                                                             len(out.splitlines()), want),
                   out.splitlines()[:4])
        c = ref.run("count", "--any-nat").stdout.strip()
        tap.ok(c == str(n_all), "ctrack count --any-nat: %s" % c)
        p = ref.run("list", "-n", "-o", "json", check=False)
        tap.ok(p.returncode == 0, "ctrack list -n -o json: exit %d" % p.returncode,
               [p.stderr])
        # the NAT's counters: ctrack stats' "nat" object, its text line and
        # the metrics page are ctrack read -s's over the same capture
        rs = subprocess.run([ctrack, "read", "--no-progress", "--no-table", "-s", "-o", "json"]
                            + SETS[4:] + nat + [paths["whole"]], capture_output=True,
                            text=True, timeout=60)
        want = json.loads(rs.stdout.strip().splitlines()[-1])["stats"]["nat"]
        got = ref.request({"v": 1, "cmd": "stats"}).get("nat", {})
        keys = ("first_packets", "dnat", "snat", "masquerade", "confirmed", "merged",
                "reply_only", "refused", "setup_errors")
        tap.ok(want["first_packets"] > 0 and all(got.get(k) == want[k] for k in keys),
               "ctrack stats' nat object is ctrack read -s's (%d first packets)" %
               want["first_packets"], [got, want])
        text = ref.run("stats", "--all").stdout
        line = [ln for ln in text.splitlines() if ln.startswith("nat: ")]
        tap.ok(line and "first_packets=%d" % want["first_packets"] in line[0] and
               "snat=%d" % want["snat"] in line[0],
               "ctrack stats --all has the nat: line", text.splitlines()[-6:])
        page = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port,
                                      timeout=10).read().decode()
        fam = {}
        for ln in page.splitlines():
            f = ln.split()
            if len(f) == 2 and f[0].startswith("ctrack_nat_"):
                fam[f[0]] = float(f[1])
        tap.ok(fam.get("ctrack_nat_first_packets_total") == want["first_packets"] and
               fam.get('ctrack_nat_bindings_total{kind="snat"}') == want["snat"] and
               fam.get('ctrack_nat_confirms_total{result="confirmed"}') == want["confirmed"],
               "the metrics page's ctrack_nat_* are ctrack read -s's",
               sorted(fam.items())[:12])
        ref.stop()

        # -- --state across a restart --------------------------------------
        a = daemon(SETS + nat + ["--replay", paths["first"], "--state", state])
        n_a = int(a.run("count").stdout)
        rc = a.stop()
        tap.ok(rc == 0 and os.path.getsize(state) > 0,
               "first part with --nat --state: SIGTERM saves %d entries" % n_a,
               [a.log_text()])
        b = daemon(SETS + nat + ["--replay", paths["second"], "--state", state])
        after = b.run("list").stdout
        log_b = b.log_text()
        tap.ok(lines(after) == lines(whole) and ("restored %d entries" % n_a) in log_b,
               "a restart on the second part with the state lists the whole capture's "
               "NATed table (%d entries)" % len(whole.splitlines()),
               sorted(set(lines(after)) ^ set(lines(whole)))[:6] + [log_b])
        b.stop()
        c2 = daemon(SETS + nat + ["--replay", paths["second"]])
        alone = c2.run("list").stdout
        c2.stop()
        tap.ok(lines(alone) != lines(whole),
               "without the state the second part alone lists another table")

        rc, out = start_fail(ctrack, SETS + ["--replay", paths["second"], "--state", state])
        tap.ok(rc == 3 and state in out and "NAT" in out,
               "the NAT state without --nat stops the start: exit %s" % rc, [out])

        # -- rule errors at start ----------------------------------------
        rc, out = start_fail(ctrack, ["--replay", paths["whole"], "--nat",
                                      "snat to 10.0.0.300"])
        tap.ok(rc == 1 and "snat to 10.0.0.300" in out and "column" in out,
               "a bad --nat rule: exit %s, %s" % (rc, out.strip().replace("\n", " | ")[:160]))
        rc, out = start_fail(ctrack, ["--replay", paths["whole"], "--nat-file",
                                      os.path.join(work, "none.nat")])
        tap.ok(rc == 1 and "none.nat" in out, "a missing --nat-file: exit %s, %s" % (
            rc, out.strip().replace("\n", " | ")[:160]))
        bad_file = os.path.join(work, "bad.nat")
        with open(bad_file, "w") as f:
            f.write("# ok\n" + RULES[0] + "\ndnat to 1.2.3.4:99999\n")
        rc, out = start_fail(ctrack, ["--replay", paths["whole"], "--nat-file", bad_file])
        tap.ok(rc == 1 and "bad.nat:3" in out and "column" in out,
               "a bad rule in --nat-file: exit %s, %s" % (rc, out.strip().replace("\n", " | ")[:160]))
        rc, out = start_fail(ctrack, ["--replay", paths["whole"], "--nat-exact-ports"])
        tap.ok(rc == 1 and "needs" in out, "--nat-exact-ports alone: exit %s, %s" % (
            rc, out.strip().replace("\n", " | ")[:160]))
        # live interfaces with several workers: the fanout cannot pair a
        # NATed connection's directions; a replay with several is fine
        rc, out = start_fail(ctrack, ["--interface", "lo", "--workers", "2", "--nat",
                                      RULES[0], "--check"])
        tap.ok(rc == 1 and "--workers 1" in out,
               "--nat on interfaces with --workers 2 is refused: exit %s, %s" % (
                   rc, out.strip().replace("\n", " | ")[:160]))
        rc, out = start_fail(ctrack, ["--replay", paths["whole"], "--workers", "2",
                                      "--nat", RULES[0], "--check"])
        tap.ok(rc == 0, "--nat on a replay with --workers 2 is accepted: exit %s" % rc, [out])
        rc, out = start_fail(ctrack, ["--replay", paths["whole"], "--nat", RULES[0],
                                      "--check"])
        tap.ok(rc == 0 and "warning" not in out, "--check with a good rule: exit %s" % rc,
               [out])
        rc, out = start_fail(ctrack, ["--replay", paths["whole"], "--nat",
                                      "ip6 snat to 10.0.0.1", "--check"])
        tap.ok(rc == 0 and "warning" in out and "ip6 snat to 10.0.0.1" in out,
               "--check with a rule that can never match: exit %s" % rc, out.splitlines())
    finally:
        for dm in daemons:
            dm.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
