#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""kdiff: ctrack against the kernel's nf_conntrack, on real traffic.

Runs traffic through a router namespace whose conntrack tracks it, records
what the router's conntrack saw (ctcap), its table and events, runs
`ctrack read` on the recording, and compares.  See docs/kernel-diff.md.

  kdiff.py [live] [--scenario NAME]... [--full]    live scenarios (default)
  kdiff.py replay CAPTURE...                       replay captures into the router
  kdiff.py list                                    the scenarios

Output is TAP: one "ok"/"not ok" per scenario or capture, details as "#"
lines, then the totals.  When the kernel side cannot run here (not root, no
network namespaces, no nftables or conntrack tool) it prints the TAP plan
"1..0 # SKIP reason" and exits 77, or the --skip-exit status: meson's TAP
reader takes a non-zero status for an error whatever the plan says, so the
test suite passes --skip-exit 0.
ctrack mismatches are reported as "not ok ... # TODO" unless --enforce is given,
so that the test suite can carry the comparison before ctrack passes it.
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import kd_compare  # noqa: E402
import kd_netns  # noqa: E402
import kd_run  # noqa: E402
import kd_scenarios  # noqa: E402

SKIP = 77
THRESHOLD_PCT = 99.5
# Replayed by the default run (small, each a different corner); --full replays them all.
DEFAULT_REPLAYS = [
    "zeek__handshake-reorder.pcap", "zeek__missing-syn.pcap",
    "suricata__split-handshake-5whs.pcap", "suricata__syn_retransmit_with_ts.pcap",
    "ndpi__dns_fragmented.pcap", "zeek__ipv6-http-atomic-frag.pcap", "zeek__icmp6.pcap",
    "zeek__icmp-destunreach-udp.pcap", "zeek__icmp6-toobig.pcap",
    "tcpdump__tcp-handshake-nano.pcap", "zeek__retransmit-fast009.pcap",
]
# The project's own crafted captures (tests/captures/craft.py) replayed by every
# default run, ../shared or not: window edges, SCTP, tag stacks and zones, ICMP
# errors, overlapping and ordinary fragments, mixed link types.
OWN_REPLAYS = [
    "tcp-out-of-window.pcap", "sctp-association.pcap", "link-vlan3.pcap",
    "link-vlan-zones.pcap", "icmp-errors.pcap", "frag-overlap.pcap", "link-sll-nano.pcap",
    "ng-mixed-links.pcapng", "frag-datagrams.pcap",
]
CAPTURE_EXT = (".pcap", ".pcapng", ".cap", ".pcap.gz")


def skip_reason(ctcap):
    if os.geteuid() != 0:
        return "not root: the kernel oracle needs to create network namespaces"
    for tool in ("ip", "nft", "conntrack", "sysctl"):
        if not shutil.which(tool):
            return "%s is not installed (apt-get install iproute2 nftables conntrack)" % tool
    if not ctcap or not os.access(ctcap, os.X_OK):
        return "the capture helper ctcap was not built (%s)" % ctcap
    name = "%s%d-probe" % (kd_netns.NS_PREFIX, os.getpid())
    try:
        kd_netns.run(["ip", "netns", "add", name])
    except kd_netns.NetnsError as e:
        return "cannot create a network namespace: %s" % e
    try:
        kd_netns.run(["ip", "netns", "exec", name, "nft", "add", "table", "inet", "probe"])
        kd_netns.run(["ip", "netns", "exec", name, "nft", "add", "chain", "inet", "probe", "c",
                      "{ type filter hook forward priority 0; }"])
        kd_netns.run(["ip", "netns", "exec", name, "nft", "add", "rule", "inet", "probe", "c",
                      "ct", "state", "new", "counter"])
        kd_netns.run(["ip", "netns", "exec", name, "conntrack", "-L"])
    except kd_netns.NetnsError as e:
        return "nftables conntrack is not usable in a namespace: %s" % e
    finally:
        kd_netns.run(["ip", "netns", "del", name], check=False)
    return None


def find_ctrack(arg, build_dir):
    """Returns (path or special word, note)."""
    if arg in ("none", "kernel-echo"):
        return arg, None
    cands = [arg] if arg not in (None, "auto") else []
    if arg in (None, "auto"):
        if os.environ.get("CTRACK"):
            cands.append(os.environ["CTRACK"])
        for b in ([build_dir] if build_dir else []) + [os.path.join(HERE, "..", "..", "build")]:
            cands += [os.path.join(b, "ctrack"), os.path.join(b, "tools", "ctrack")]
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            try:
                h = subprocess.run([c, "read", "--help"], capture_output=True, text=True,
                                   timeout=10)
                text = h.stdout + h.stderr
            except (OSError, subprocess.TimeoutExpired):
                text = ""
            if "--sysctl-file" in text and "--events" in text:
                return os.path.abspath(c), None
            return "none", ("%s has no `read --events --sysctl-file` yet: kernel side only" % c)
    return "none", "no ctrack executable found: kernel side only"


class Tap:
    def __init__(self, total):
        self.n = 0
        self.failed = 0   # "not ok" without a TODO directive
        self.todo = 0
        print("TAP version 13")
        print("1..%d" % total, flush=True)

    def result(self, ok, name, details=(), directive=""):
        self.n += 1
        if not ok:
            if directive.startswith("TODO"):
                self.todo += 1
            else:
                self.failed += 1
        line = "%s %d - %s" % ("ok" if ok else "not ok", self.n, name)
        if directive:
            line += " # " + directive
        print(line)
        for d in details:
            for sub in str(d).splitlines():
                print("#   " + sub)
        sys.stdout.flush()


class Totals:
    def __init__(self):
        self.kernel = self.exact = self.missing = self.extra = self.fields = 0
        self.ev = self.ev_ok = 0
        self.compared = 0

    def add(self, d):
        self.compared += 1
        self.kernel += d.kernel_entries
        self.exact += d.exact
        self.missing += d.missing
        self.extra += d.extra
        self.fields += d.field_mismatch
        self.ev += d.event_conns
        self.ev_ok += d.event_matches

    def pct(self):
        return 100.0 * self.exact / self.kernel if self.kernel else 100.0

    def text(self):
        return ("TOTAL: kernel entries %d, reproduced exactly %d (%.2f%%), missing %d, "
                "field mismatch %d, extra %d, event sequences matching %d/%d"
                % (self.kernel, self.exact, self.pct(), self.missing, self.fields, self.extra,
                   self.ev_ok, self.ev))

    def passes(self):
        return self.pct() >= THRESHOLD_PCT and self.extra == 0 and self.ev_ok == self.ev


def judge(tap, name, res, ctrack, args, totals, desc=""):
    """Kernel-side soundness, then the comparison; emits one TAP line."""
    details = []
    if desc:
        details.append(desc)
    if res.skip:
        tap.result(True, name, details, "SKIP " + res.skip)
        return True
    pk = kd_run.load_kernel_side(res) if os.path.exists(res.table_file) else []
    problems = list(res.problems)
    if pk:
        cp, cn = kd_compare.check_counters(res, pk)
        problems += cp
        details += ["capture: " + n for n in cn[:5]]
    sc = kd_scenarios.by_name(name) if name in [s["name"] for s in kd_scenarios.SCENARIOS] \
        else None
    if sc and sc["expect"] and not res.problems:
        problems += ["kernel self-check: " + p for p in sc["expect"](res)]
    details.append("kernel: %d entries, %d events, %d packets captured, nft %s"
                   % (len(res.table), len(res.events), res.capture_stats.get("written", 0),
                      res.nft))
    if problems:
        tap.result(False, name, problems + details + ["files: " + res.dir])
        return False
    if ctrack == "none":
        tap.result(True, name, details + ["ctrack not compared"])
        return True
    if ctrack == "kernel-echo":
        table, events = kd_compare.kernel_echo(res)
        err = None
    else:
        table, events, err = kd_compare.run_ctrack(ctrack, res)
    if err:
        tap.result(False, name, [err] + details + ["files: " + res.dir],
                   "" if args.enforce else "TODO ctrack did not run")
        return False
    details += ["note: " + n for n in res.notes if n.startswith("ctrack refused")]
    d = kd_compare.compare(res, table, events, kd_compare.first_packets(pk))
    totals.add(d)
    with open(os.path.join(res.dir, "diff.txt"), "w") as f:
        f.write(d.figures() + "\n\n" + "\n\n".join(d.lines) + "\n")
    details.insert(0, d.figures())
    if d.kinds:
        details.insert(1, "mismatch kinds: " + d.kinds_text())
    if d.ok():
        tap.result(True, name, details)
        return True
    shown = d.lines[:args.max_diffs]
    more = len(d.lines) - len(shown)
    tap.result(False, name, details + shown +
               (["... %d more in %s/diff.txt" % (more, res.dir)] if more > 0 else []) +
               ["files: " + res.dir],
               "" if args.enforce else "TODO ctrack differs from the kernel")
    return False


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("mode", nargs="?", default="live", choices=["live", "replay", "list"])
    ap.add_argument("captures", nargs="*", help="captures to replay (replay mode)")
    ap.add_argument("--scenario", action="append", help="run only this scenario (repeatable)")
    ap.add_argument("--full", action="store_true", help="also the long scenarios")
    ap.add_argument("--ctrack", default="auto",
                    help="ctrack executable, 'none' (kernel side only), 'kernel-echo' "
                         "(compare the kernel with itself: tests the harness), or 'auto'")
    ap.add_argument("--build-dir", help="where to look for ctrack (auto)")
    ap.add_argument("--ctcap", help="the ctcap helper (default: next to ctrack, or built dir)")
    ap.add_argument("--out", help="directory for the recordings (default: a temp dir, "
                                  "kept when something failed)")
    ap.add_argument("--enforce", action="store_true",
                    help="ctrack mismatches fail the test (not TODO); the totals must reach "
                         "%.1f%%%% exact, no extra entries, all event sequences" % THRESHOLD_PCT)
    ap.add_argument("--max-diffs", type=int, default=8, help="diffs shown per scenario")
    ap.add_argument("--replay-seconds", type=float, default=20.0,
                    help="replay: longest a capture may take (its gaps are shortened)")
    ap.add_argument("--pcaps-dir", default=os.path.join(HERE, "..", "..", "..", "shared", "pcaps"),
                    help="captures for the default replays (live mode)")
    ap.add_argument("--no-replays", action="store_true",
                    help="live mode: only the scenarios, no replays")
    ap.add_argument("--skip-exit", type=int, default=SKIP,
                    help="exit status when the kernel side cannot run (default %d; "
                         "the test suite uses 0 with its TAP skip plan)" % SKIP)
    ap.add_argument("--retries", type=int, default=1,
                    help="runs again a scenario whose kernel side failed (timing flukes)")
    args = ap.parse_args(argv)

    if args.mode == "list":
        for s in kd_scenarios.SCENARIOS:
            print("%-24s %s%s" % (s["name"], s["desc"], " (--full)" if s["full"] else
                                   " (on request)" if s["sample"] else ""))
        return 0

    ctcap = args.ctcap or os.environ.get("CTCAP")
    reason = skip_reason(ctcap)
    if reason:
        print("1..0 # SKIP kernel oracle: %s" % reason)
        sys.stderr.write("\n*** kernel oracle SKIPPED: %s ***\n\n" % reason)
        return args.skip_exit

    ctrack, note = find_ctrack(args.ctrack, args.build_dir)
    out = args.out or tempfile.mkdtemp(prefix="ctrack-kdiff-")
    os.makedirs(out, exist_ok=True)

    def on_signal(signum, frame):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, on_signal)

    if args.mode == "live":
        items = [s for s in kd_scenarios.SCENARIOS
                 if (args.scenario and s["name"] in args.scenario) or
                 (not args.scenario and not s["sample"] and (args.full or not s["full"]))]
        if args.scenario and len(items) != len(set(args.scenario)):
            print("unknown scenario in %s" % args.scenario, file=sys.stderr)
            return 2
        if not args.scenario and not args.no_replays and not shutil.which("tcpreplay"):
            note = (note + "; " if note else "") + "tcpreplay is not installed: no replays"
        elif not args.scenario and not args.no_replays:
            sample = os.path.join(HERE, "..", "..", "samples", "sample.pcap")
            items += [os.path.abspath(sample)] if os.path.exists(sample) else []
            crafted = os.path.join(HERE, "..", "captures", "crafted")
            items += [os.path.abspath(os.path.join(crafted, n)) for n in OWN_REPLAYS]
            if os.path.isdir(args.pcaps_dir):
                names = sorted(f for f in os.listdir(args.pcaps_dir)
                               if f.endswith(CAPTURE_EXT)) if args.full else DEFAULT_REPLAYS
                items += [os.path.abspath(os.path.join(args.pcaps_dir, n)) for n in names
                          if os.path.exists(os.path.join(args.pcaps_dir, n))]
            else:
                # a clone without ../shared: each replay it would have run
                # is reported skipped, naming what it needs
                why = "no ../shared/pcaps (%s)" % args.pcaps_dir
                items += [("skip", "replay " + n, why) for n in
                          (["every capture of ../shared/pcaps"] if args.full
                           else DEFAULT_REPLAYS)]
    else:
        items = [os.path.abspath(c) for c in args.captures]
        if not shutil.which("tcpreplay"):
            print("1..0 # SKIP replay: tcpreplay is not installed")
            return args.skip_exit
        if not items:
            print("replay: no capture given", file=sys.stderr)
            return 2

    tap = Tap(len(items) + 1)
    print("# recordings in %s; ctrack: %s%s" % (out, ctrack, (" (" + note + ")") if note else ""))
    totals = Totals()
    all_ok = True
    t_start = time.time()
    try:
        for it in items:
            t0 = time.time()
            if isinstance(it, tuple):
                tap.result(True, it[1], (), "SKIP " + it[2])
                continue
            if isinstance(it, dict):
                name = it["name"]
                for attempt in range(args.retries + 1):
                    res = kd_run.run_live(it, os.path.join(out, name), ctcap)
                    sane = not res.problems and not (it["expect"] and it["expect"](res)) \
                        if os.path.exists(res.table_file) else False
                    if sane or attempt == args.retries:
                        break
                    print("# %s: kernel side failed (%s), running it again"
                          % (name, res.problems or "self-check"))
                ok = judge(tap, name, res, ctrack, args, totals, "")
            else:
                import kd_replay
                name = "replay " + os.path.basename(it)
                res = kd_replay.run_replay(it, os.path.join(out, os.path.basename(it)), ctcap,
                                           args.replay_seconds)
                ok = judge(tap, name, res, ctrack, args, totals,
                           "replayed %s" % res.notes[0] if res.notes else "")
            print("# %s took %.1f s" % (name, time.time() - t0))
            all_ok = all_ok and ok
    except KeyboardInterrupt:
        print("# interrupted; namespaces removed")
        kd_netns.remove_stale()
        return 130

    if ctrack == "none" or totals.compared == 0:
        tap.result(True, "totals", ["kernel side only: nothing compared"])
    else:
        ok = totals.passes()
        tap.result(ok, "totals", [totals.text(), "threshold: >= %.1f%% exact, no extra, all "
                                  "event sequences" % THRESHOLD_PCT],
                   "" if ok or args.enforce else "TODO ctrack below the threshold")
        all_ok = all_ok and ok
    print("# %s" % totals.text())
    print("# %d items in %.1f s; recordings in %s" % (len(items), time.time() - t_start, out))
    if all_ok and not args.out:
        shutil.rmtree(out, ignore_errors=True)
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
