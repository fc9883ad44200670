#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""daemon_state: what `ctrack daemon --state` costs at N entries.

  bench/daemon_state.py CTRACK [--entries N,...] [--workers W]

For each N: a capture of N one-way UDP flows (tests/daemon/gen_flows.py),
replayed by a daemon with --state and --state-interval 1; once the replay is
done and a periodic save has run with the table full, SIGTERM (the stop
save), then a second daemon restores the file.  Read from the daemon's own
log lines (dm_state.c), per save: wall and CPU milliseconds, bytes; per
restore: wall and CPU.  The periodic save runs on the saver thread while the
workers idle; the stop save on the main thread with everything stopped.
Prints one JSON object per N on stdout.
"""

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "daemon"))
import dm_util  # noqa: E402

SAVE = re.compile(r"state: saved (\d+) entries to \S+ \((\w+)\) in ([\d.]+) ms, ([\d.]+) ms CPU, "
                  r"(\d+) bytes")
RESTORE = re.compile(r"state: restored (\d+) entries from \S+ .* in ([\d.]+) ms, ([\d.]+) ms CPU")


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("ctrack")
    ap.add_argument("--entries", default="100000,1000000")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args(argv)
    for n in (int(x) for x in a.entries.split(",")):
        work = tempfile.mkdtemp(prefix="ctk-bst-")
        try:
            cap, st = os.path.join(work, "flows.pcap"), os.path.join(work, "state")
            dm_util.gen_capture(cap, udp=n, one_way=True)
            sets = ["--replay", cap, "--speed", "0", "--workers", str(a.workers),
                    "--set", "nf_conntrack_udp_timeout=3600",
                    "--set", "nf_conntrack_max=%d" % (2 * n),
                    "--set", "nf_conntrack_buckets=%d" % max(1024, n // 2)]
            d = dm_util.Daemon(a.ctrack, sets + ["--state", st, "--state-interval", "1"])
            mark = len(d.log_text())
            deadline = time.time() + 120
            while not SAVE.search(d.log_text()[mark:]) and time.time() < deadline:
                time.sleep(0.2)
            d.stop()
            log = d.log_text()
            d.cleanup()
            saves = [m.groups() for m in SAVE.finditer(log[mark:])]
            per = [s for s in saves if s[1] == "interval"][:1]
            stop = [s for s in saves if s[1] == "stop"]
            d = dm_util.Daemon(a.ctrack, sets[:1] + [os.path.join(HERE, "..", "samples",
                                                                  "sample.pcap")] +
                               sets[2:] + ["--state", st, "--state-interval", "0"])
            rlog = d.log_text()
            d.cleanup()
            rs = RESTORE.search(rlog)
            out = {"entries": n}
            if per:
                out["periodic_save"] = {"records": int(per[0][0]), "wall_ms": float(per[0][2]),
                                        "cpu_ms": float(per[0][3]), "bytes": int(per[0][4])}
            if stop:
                s = stop[-1]
                out["stop_save"] = {"records": int(s[0]), "wall_ms": float(s[2]),
                                    "cpu_ms": float(s[3]), "bytes": int(s[4]),
                                    "bytes_per_entry": round(int(s[4]) / max(1, int(s[0])), 1)}
            if rs:
                out["restore"] = {"records": int(rs.group(1)), "wall_ms": float(rs.group(2)),
                                  "cpu_ms": float(rs.group(3))}
            for k in ("periodic_save", "stop_save", "restore"):
                if k in out:
                    out[k]["cpu_ns_per_entry"] = round(out[k]["cpu_ms"] * 1e6 /
                                                       max(1, out[k]["records"]))
            print(json.dumps(out), flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
