#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_daemon: `ctrack daemon` on a replayed capture, and its clients.

No root, no namespaces: the daemon replays a synthetic capture (gen_flows.py:
UDP over IPv4 and IPv6, TCP handshakes with data, ICMP echoes, every flow its
own entry) at full speed with three workers, on a socket in a temporary
directory, and each client command is checked against something derived
independently:
  - the listing against `ctrack read` of the same capture (a separate code
    path, itself checked against the kernel): every entry, field by field,
    but the timeout (the replay runs on the daemon's clock);
  - the count against the listing and the capture's flow count;
  - conntrack's filters against a Python reimplementation of their rules
    applied to the unfiltered JSON listing;
  - get against the listing's line; stats' cpu=N lines against --workers and
    their sum against the total; delete, flush and -z against the listing
    after them and the DESTROY events an `events` client receives;
  - set and SIGHUP against `ctrack sysctl`, the table's count unchanged;
  - bad options and bad values: a message and exit status 1 (2 when the
    daemon cannot be reached), for the daemon and for each client.
Usage: test_daemon.py CTRACK
"""

import ipaddress
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dm_util  # noqa: E402

CONFIG = """# the test's config: the long options, one a line
workers = 3
speed 0
set = nf_conntrack_udp_timeout=600
set = nf_conntrack_icmp_timeout=600
"""


def parse_json_lines(text):
    return [json.loads(ln) for ln in text.splitlines() if ln.strip()]


def key_of_json(e):
    o = e["orig"]
    return (e["l3num"], e["protonum"], o["src"], o["dst"], o.get("sport", o.get("type")),
            o.get("dport", o.get("code")), o.get("id"), e["zone"])


def key_of_text(line):
    """family, proto, original tuple and zone of an extended line."""
    t = line.split()
    fields = dict(x.split("=", 1) for x in t if "=" in x)
    orig = []
    for x in t:
        if x.startswith("src=") and orig:
            break
        if "=" in x and x.split("=")[0] in ("src", "dst", "sport", "dport", "type", "code", "id"):
            orig.append(x)
    return (t[1], t[3], tuple(orig), fields.get("zone"))


def strip_timeout(line):
    """An extended listing line without its timeout (the fifth column)."""
    t = line.split(" ")
    t = [x for x in t if x != ""]
    del t[4]
    return " ".join(t)


def ref_filter(e, flt):
    """conntrack's rules, written again: does entry e (JSON) pass filter flt?"""
    o, r = e["orig"], e["reply"]
    for k, v in flt.items():
        if k == "family" and e["l3"] != v:
            return False
        if k == "proto" and e["protonum"] != {"tcp": 6, "udp": 17, "icmp": 1}.get(v, int(v)
                                                                               if v.isdigit()
                                                                               else -1):
            return False
        if k in ("src", "dst", "reply-src", "reply-dst"):
            t = r if k.startswith("reply") else o
            a = ipaddress.ip_address(t[k.split("-")[-1]])
            n = ipaddress.ip_network(v, strict=False)
            if a.version != n.version or a not in n:
                return False
        if k == "sport" and o.get("sport") != int(v):
            return False
        if k == "dport" and o.get("dport") != int(v):
            return False
        if k == "state" and e.get("state") != v:
            return False
        if k == "zone" and e["zone"] != int(v):
            return False
        if k == "mark":
            m, _, mask = v.partition("/")
            if e["mark"] & (int(mask, 0) if mask else 0xFFFFFFFF) != int(m, 0):
                return False
        if k == "status":
            for s in v.split(","):
                if s == "ASSURED" and not e["assured"]:
                    return False
                if s == "UNREPLIED" and not e["unreplied"]:
                    return False
                if s == "SEEN_REPLY" and e["unreplied"]:
                    return False
    return True


OPT = {"family": "-f", "proto": "-p", "src": "-s", "dst": "-d", "reply-src": "-r",
       "reply-dst": "-q", "sport": "--sport", "dport": "--dport", "state": "--state",
       "zone": "-w", "mark": "-m", "status": "-u"}


def main(argv):
    ctrack = argv[0]
    tap = dm_util.Tap()
    work = tempfile.mkdtemp(prefix="ctk-dmt-")
    cap = os.path.join(work, "flows.pcap")
    info = dm_util.gen_capture(cap, udp=3000, udp6=1000, tcp=500, icmp=200)
    nflows = int(info["flows"])
    dm = None
    try:
        dm = dm_util.Daemon(ctrack, ["--replay", cap], workdir=work, config=CONFIG)

        # -- list, count, against ctrack read ------------------------------
        lst = dm.run("list", "-o", "extended")
        lines = lst.stdout.splitlines()
        cnt = dm.run("count").stdout.strip()
        tap.ok(len(lines) == nflows and cnt == str(nflows) and
               re.search(r"%d flow entries have been shown" % nflows, lst.stderr),
               "list shows every flow of the capture once, count agrees (%d, %s)"
               % (len(lines), cnt), [lst.stderr])
        rd = subprocess.run([ctrack, "read", "-o", "extended", "--set",
                             "nf_conntrack_udp_timeout=600", "--set",
                             "nf_conntrack_icmp_timeout=600", cap],
                            capture_output=True, text=True, check=True)
        want = sorted(strip_timeout(ln) for ln in rd.stdout.splitlines())
        got = sorted(strip_timeout(ln) for ln in lines)
        diff = [x for x in set(want) ^ set(got)][:10]
        tap.ok(want == got, "the daemon's table is `ctrack read`'s, entry by entry, "
               "but the timeout (%d entries)" % len(want), diff)

        js = parse_json_lines(dm.run("list", "-o", "json").stdout)
        tap.ok(len(js) == nflows and len({key_of_json(e) for e in js}) == nflows,
               "list -o json: one object a line, every entry once (%d)" % len(js))

        # -- filters ---------------------------------------------------------
        filters = [{"proto": "tcp"}, {"proto": "udp"}, {"family": "ipv6"},
                   {"family": "ipv4", "proto": "udp"}, {"src": "10.0.0.0/24"},
                   {"src": "10.0.0.7"}, {"dst": "192.0.2.1"}, {"reply-src": "192.0.2.0/24"},
                   {"reply-dst": "fd00::/64"}, {"proto": "udp", "sport": "1030"},
                   {"proto": "tcp", "dport": "80"}, {"proto": "tcp", "state": "ESTABLISHED"},
                   {"proto": "tcp", "state": "SYN_SENT"}, {"status": "ASSURED"},
                   {"status": "UNREPLIED"}, {"status": "SEEN_REPLY"},
                   {"status": "ASSURED,SEEN_REPLY"}, {"mark": "0"}, {"mark": "1/0x1"},
                   {"zone": "0"}, {"zone": "3"}, {"proto": "1"}, {"src": "fd00::5"}]
        bad = []
        for f in filters:
            args = []
            for k, v in f.items():
                args += [OPT[k], v]
            got = {key_of_json(e) for e in parse_json_lines(dm.run("list", "-o", "json",
                                                                   *args).stdout)}
            want = {key_of_json(e) for e in js if ref_filter(e, f)}
            if got != want:
                bad.append("%s: ctrack %d, reference %d" % (" ".join(args), len(got), len(want)))
            n = dm.run("count", *args).stdout.strip()
            if n != str(len(want)):
                bad.append("count %s: %s, reference %d" % (" ".join(args), n, len(want)))
        tap.ok(not bad, "%d filters select what conntrack's rules select (list and count)"
               % len(filters), bad)

        # -- get --------------------------------------------------------------
        some = [ln for ln in lines if " tcp " in ln][:3] + [ln for ln in lines if " udp " in ln
                                                             and "fd00" in ln][:3]
        bad = []
        for ln in some:
            f = dict(x.split("=", 1) for x in ln.split() if "=" in x)
            proto = ln.split()[2]
            g = dm.run("get", "-o", "extended", "-p", proto, "-s", f["src"], "-d", f["dst"],
                       "--sport", f["sport"], "--dport", f["dport"], check=False)
            if g.returncode or strip_timeout(g.stdout.strip()) != strip_timeout(ln):
                bad.append("%s -> %s %s" % (ln, g.stdout, g.stderr))
        g = dm.run("get", "-p", "udp", "-s", "203.0.113.9", "-d", "192.0.2.1", "--sport", "1",
                   "--dport", "2", check=False)
        tap.ok(not bad and g.returncode == 1 and "doesn't exist" in g.stderr,
               "get finds entries by either family's tuple, and says when there is none",
               bad + [g.stderr])

        # -- stats --------------------------------------------------------------
        st = dm.run("stats").stdout.splitlines()
        cpu = [ln for ln in st if re.match(r"^cpu=\d+ +\tfound=\d+ invalid=\d+ insert=\d+ "
                                           r"insert_failed=\d+ drop=\d+ early_drop=\d+ error=\d+"
                                           r" search_restart=\d+ clash_resolve=\d+ "
                                           r"chaintoolong=\d+ $", ln)]
        inserts = sum(int(re.search(r"insert=(\d+)", ln).group(1)) for ln in cpu)
        full = dm.request({"v": 1, "cmd": "stats"})
        tap.ok(len(cpu) == 3 and inserts == nflows == full["total"]["insert"] and
               full["replay"]["frames"] == int(info["packets"]),
               "stats: a cpu=N line per worker in conntrack -S's layout, adding up to the "
               "total (%d lines, %d inserts)" % (len(cpu), inserts), st)
        sj = dm.run("stats", "-o", "json")
        try:
            sjs = json.loads(sj.stdout)
        except ValueError:
            sjs = {}
        tap.ok(sjs.get("total", {}).get("insert") == nflows and len(sjs.get("cpu", [])) == 3 and
               all(c["burst_ns_histogram"] for c in sjs["cpu"]),
               "stats -o json: the daemon's whole reply, with each worker's burst histogram",
               [sj.stdout[:300], sj.stderr])
        per = [int(re.search(r"insert=(\d+)", ln).group(1)) for ln in cpu]
        tap.ok(all(p > nflows // 10 for p in per),
               "the replay spreads the flows over the three workers (%s)" % per)

        # -- set, sysctl, SIGHUP --------------------------------------------------
        s = dm.run("set", "nf_conntrack_udp_timeout=77", check=False)
        q = dm.run("sysctl", "nf_conntrack_udp_timeout", check=False)
        tap.ok(s.stdout.strip() == "net.netfilter.nf_conntrack_udp_timeout = 77" and
               q.stdout.strip() == "net.netfilter.nf_conntrack_udp_timeout = 77",
               "set changes a setting at run time, sysctl shows it", [s.stdout, s.stderr, q.stdout])
        errs = []
        for arg, pat in (("nf_conntrack_udp_timeout=abc", "abc"),
                         ("nf_conntrack_nosuch=1", "nosuch"),
                         ("nf_conntrack_count=5", "count"), ("=5", "NAME=VALUE")):
            r = dm.run("set", arg, check=False)
            if r.returncode != 1 or pat not in r.stderr:
                errs.append("%s: exit %d %s" % (arg, r.returncode, r.stderr))
        tap.ok(not errs, "set refuses bad names and values with a message, exit 1", errs)
        # SIGHUP: an edited config; the table stays
        dm2 = dm
        with open(dm2.config, "w") as f:
            f.write(CONFIG.replace("udp_timeout=600", "udp_timeout=444"))
        before = dm.run("count").stdout.strip()
        dm.proc.send_signal(signal.SIGHUP)
        for _ in range(100):
            q = dm.run("sysctl", "nf_conntrack_udp_timeout").stdout.strip()
            if q.endswith("444"):
                break
            time.sleep(0.05)
        after = dm.run("count").stdout.strip()
        tap.ok(q.endswith("= 444") and before == after, "SIGHUP rereads the config file and "
               "keeps the table (%s entries before, %s after)" % (before, after), [q])
        with open(dm2.config, "w") as f:
            f.write("workers = 3\nnot-an-option = 1\n")
        dm.proc.send_signal(signal.SIGHUP)
        time.sleep(0.5)
        q = dm.run("sysctl", "nf_conntrack_udp_timeout").stdout.strip()
        tap.ok(q.endswith("= 444") and "not-an-option" in dm.log_text() and dm.proc.poll() is None,
               "a SIGHUP with a broken config keeps the settings and says why in the log",
               [q, dm.log_text()[-500:]])

        # -- events, delete, -z, flush ----------------------------------------
        evf = open(os.path.join(work, "events.json"), "w")
        ev = subprocess.Popen([ctrack, "events", "-o", "json", "--socket", dm.sock],
                              stdout=evf, stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        d = dm.run("delete", "-p", "udp", "-s", "10.0.0.1", check=False)
        c1 = dm.run("count").stdout.strip()
        tap.ok(d.returncode == 0 and len(d.stdout.splitlines()) == 1 and
               "1 flow entries have been deleted" in d.stderr and c1 == str(nflows - 1),
               "delete removes what its filter names and prints it", [d.stdout, d.stderr, c1])
        d = dm.run("delete", "-p", "udp", "-s", "fd00::/120", check=False)
        c2 = dm.run("count").stdout.strip()
        tap.ok(d.returncode == 0 and len(d.stdout.splitlines()) == 255 and
               c2 == str(nflows - 256), "delete with a prefix removes all it matches (255)",
               [d.stderr, c2])
        z = dm.run("list", "-z", "-p", "tcp", "-o", "json")
        before = parse_json_lines(z.stdout)
        after = parse_json_lines(dm.run("list", "-p", "tcp", "-o", "json").stdout)
        udp_after = parse_json_lines(dm.run("list", "-p", "udp", "-o", "json").stdout)
        tap.ok(before and all(e["orig"]["packets"] == 3 for e in before) and
               all(e["orig"]["packets"] == 0 and e["reply"]["bytes"] == 0 for e in after) and
               all(e["orig"]["packets"] == 1 for e in udp_after),
               "-z lists the counters and zeroes them, only for the entries listed")
        fl = dm.run("flush", check=False)
        c3 = dm.run("count").stdout.strip()
        time.sleep(0.5)
        ev.terminate()
        ev.wait(timeout=5)
        evf.close()
        evs = parse_json_lines(open(os.path.join(work, "events.json")).read())
        causes = {}
        for e in evs:
            causes[e.get("destroy_cause")] = causes.get(e.get("destroy_cause"), 0) + 1
        tap.ok(fl.returncode == 0 and c3 == "0" and causes.get("delete") == 256 and
               causes.get("flush") == nflows - 256 and all(e["event"] == "destroy" for e in evs),
               "events -o json: a destroy per deleted and flushed entry, with its cause "
               "(%s)" % causes, [fl.stderr, c3])

        # -- a second daemon on the same socket, and SIGTERM -----------------------
        p = subprocess.run([ctrack, "daemon", "--replay", cap, "--socket", dm.sock],
                           capture_output=True, text=True, timeout=30)
        tap.ok(p.returncode == 2 and "another ctrack daemon is listening" in p.stderr,
               "a second daemon on a socket in use stops at once with a message",
               [p.returncode, p.stderr])
        rc = dm.stop()
        tap.ok(rc == 0 and not os.path.exists(dm.sock) and "stopped" in dm.log_text(),
               "SIGTERM stops the daemon cleanly: exit 0, socket removed", [rc, dm.log_text()])
    except Exception as e:
        tap.ok(False, "the daemon tests ran", [repr(e), dm.log_text() if dm else ""])
    finally:
        if dm:
            dm.stop()

    # -- usage errors --------------------------------------------------------------
    cases = [
        (["daemon"], 1, "no source"),
        (["daemon", "--replay", cap, "--interface", "lo"], 1, "exclude each other"),
        (["daemon", "--replay", cap, "--workers", "0"], 1, "number of workers"),
        (["daemon", "--replay", cap, "--speed", "fast"], 1, "not a speed"),
        (["daemon", "--replay", cap, "--set", "nf_conntrack_udp_timeout=x"], 1, "'x'"),
        (["daemon", "--replay", cap, "--bogus"], 1, "unknown option"),
        (["daemon", "--replay", cap, "--config", "/nonexistent/x.conf"], 1, "/nonexistent"),
        (["daemon", "--replay", "/nonexistent.pcap", "--socket", os.path.join(work, "u.sock")],
         2, "nonexistent.pcap"),
        (["daemon", "--interface", "nosuchif0", "--socket", os.path.join(work, "v.sock")], 2,
         "nosuchif0"),
        (["list", "--socket", os.path.join(work, "none.sock")], 2, "cannot reach the daemon"),
        (["list", "--dport", "80"], 1, "need a protocol"),
        (["list", "-p", "tcp", "--state", "BOGUS"], 1, "not a TCP or SCTP state"),
        (["list", "-s", "10.0.0.300"], 1, "not an IPv4 or IPv6 address"),
        (["list", "-p", "nosuchproto"], 1, "not a protocol"),
        (["list", "-u", "WHATEVER"], 1, "not a list of"),
        (["list", "-m", "1/2/3"], 1, "MARK/MASK"),
        (["list", "-o", "xml"], 1, "not an output"),
        (["list", "-s", "10.0.0.1", "-d", "fd00::1"], 1, "two families"),
        (["get", "-p", "tcp"], 1, "named by"),
        (["delete"], 1, "flush"),
        (["events", "-e", "NEW,BOGUS"], 1, "not NEW, UPDATE or DESTROY"),
        (["count", "-z"], 1, "does not apply"),
        (["set"], 1, "NAME=VALUE"),
        (["list", "extra"], 1, "unexpected argument"),
    ]
    bad = []
    for argv_, code, pat in cases:
        p = subprocess.run([ctrack] + argv_, capture_output=True, text=True, timeout=30)
        if p.returncode != code or pat not in p.stderr:
            bad.append("ctrack %s: exit %d (want %d), stderr %r" % (" ".join(argv_), p.returncode,
                                                                  code, p.stderr))
    tap.ok(not bad, "bad options and values: a message naming the problem and the exit "
           "status ctrack(1) gives (%d cases)" % len(cases), bad)
    conf = os.path.join(work, "bad.conf")
    with open(conf, "w") as f:
        f.write("# fine\nworkers = 2\nring-mb = lots\n")
    p = subprocess.run([ctrack, "daemon", "--config", conf, "--replay", cap], capture_output=True,
                       text=True, timeout=30)
    tap.ok(p.returncode == 1 and "%s:3" % conf in p.stderr and "lots" in p.stderr,
           "a bad config line is reported as FILE:LINE with the value", [p.stderr])
    shipped = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools",
                           "ctrack", "daemon", "ctrack.conf")
    p = subprocess.run([ctrack, "daemon", "--config", shipped, "--check"], capture_output=True,
                       text=True, timeout=30)
    tap.ok(p.returncode == 0 and "valid" in p.stdout, "the example config file parses "
           "(--check)", [p.stdout, p.stderr])
    p = subprocess.run([ctrack, "help", "daemon"], capture_output=True, text=True)
    q = subprocess.run([ctrack, "list", "--help"], capture_output=True, text=True)
    tap.ok(p.returncode == 0 and "--interface" in p.stdout and q.returncode == 0 and
           "--state" in q.stdout, "help for the daemon and its clients")
    if tap.failed == 0:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    else:
        tap.note("files in %s" % work)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
