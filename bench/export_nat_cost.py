#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""export_nat_cost.py [--ctrack PATH] [--flows N] [--reps N] [--no-callgrind]
[--json] - what RFC 8158's post-NAT fields cost an IPFIX record, side by
side with plain records, in one run.

Two captures of the same shape (--flows connections: half TCP SYNs
refused by RST, half UDP exchanges; then, 400 s later, one frame nothing
tracks, so that every UDP entry has timed out: every connection leaves as
a DESTROY event, none as a final record), written here:

  plain  the replies come back to the client: with the rule
         `ip saddr 10.250.0.0/16 snat to 198.51.100.1`, which maps none
         of them, every connection gets the null binding - the table does
         NAT, the session announces the NAT templates, the records are
         plain (78-byte IPv4 biflows);
  nat    the replies come back to 198.51.100.1: with
         `ip saddr 10.0.0.0/8 snat to 198.51.100.1` every connection is
         source-NATed and its record carries the post-NAT addresses and
         ports (90 bytes for IPv4 instead of 78).

Each goes through `ctrack read --nat RULE` with `--ipfix` (to a UDP socket
this script drains) and without, alternated, --reps times: CPU seconds
of the process (wait4); and once each under callgrind: instructions of
the whole run, and inclusive instructions of the IPFIX sink's event hook
(ipfix_event: the record built from the connection, encoded, and its
share of the sends), each divided by the records.  The hook's count is
the export's own cost per record, tracking left out; the difference of
whole runs with and without --ipfix adds the event copies the table
makes for the sink.
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "export"))
import gen_captures as gc  # noqa: E402

NAT_ADDR = "198.51.100.1"
RULES = {"plain": "ip saddr 10.250.0.0/16 snat to " + NAT_ADDR,
         "nat": "ip saddr 10.0.0.0/8 snat to " + NAT_ADDR}


def write_capture(path, n, natted):
    with open(path, "wb") as f:
        f.write(gc.pcap_header())
        for i in range(n):
            t = 1.0 + i * 0.0005
            c = "10.%d.%d.%d" % (1 + (i >> 16), (i >> 8) & 255, i & 255)
            s = "192.0.2.%d" % (1 + i % 200)
            back = NAT_ADDR if natted else c
            sp = 10000 + i % 50000
            if i % 2:
                pk = [(t, gc.tcp(c, s, sp, 80, "S", seq=1000)),
                      (t + 0.0002, gc.tcp(s, back, 80, sp, "RA", seq=0, ack=1001))]
            else:
                pk = [(t, gc.udp(c, s, sp, 53)), (t + 0.0002, gc.udp(s, back, 53, sp, b"y" * 40))]
            for tt, fr in pk:
                f.write(gc.pcap_record(tt, fr))
        tt, fr = gc.filler(1.0 + n * 0.0005 + 400.0, 64)
        f.write(gc.pcap_record(tt, fr))


class Drain:
    """A UDP socket on loopback that reads and counts what comes."""

    def __init__(self):
        self.s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.s.bind(("127.0.0.1", 0))
        self.s.settimeout(0.2)
        self.port = self.s.getsockname()[1]
        self.n = 0
        self.stop = False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop:
            try:
                self.s.recv(65536)
                self.n += 1
            except socket.timeout:
                continue

    def close(self):
        self.stop = True
        self.t.join()
        self.s.close()


def cmd_of(ct, pcap, kind, export, port, mf=None):
    """The run measured: --ipfix alone (a metrics sink would make the
    table build NEW and UPDATE events too); @mf only for the run that
    counts the records."""
    cmd = [ct, "read", "--no-table", "--no-progress", "--nat", RULES[kind]]
    if export:
        cmd += ["--ipfix", "127.0.0.1:%d" % port]
    if mf:
        cmd += ["--metrics-file", mf]
    return cmd + [pcap]


def cpu_of(cmd):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    return ru.ru_utime + ru.ru_stime, os.waitstatus_to_exitcode(status), err


def records_of(mf):
    for line in open(mf):
        if line.startswith("ctrack_export_records_total"):
            return int(float(line.split()[-1]))
    return None


def callgrind(cmd, tmp):
    out = os.path.join(tmp, "cg.out")
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + cmd,
                       capture_output=True, text=True)
    total = hook = None
    m = re.search(r"Collected : (\d+)", r.stderr)
    if m:
        total = int(m.group(1))
    ann = subprocess.run(["callgrind_annotate", "--inclusive=yes", out], capture_output=True,
                         text=True).stdout
    for line in ann.splitlines():
        if re.search(r"\bipfix_event\b", line):
            hook = int(line.split()[0].replace(",", ""))
            break
    return total, hook


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ctrack", default=os.path.join(ROOT, "build", "tools", "ctrack"))
    ap.add_argument("--flows", type=int, default=50000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ctrack-bench-exnat.")
    res = {"bench": "export-nat", "flows": a.flows, "cpu_s": {}, "records": {},
           "callgrind": {}}
    try:
        caps = {}
        for kind in ("plain", "nat"):
            caps[kind] = os.path.join(tmp, kind + ".pcap")
            write_capture(caps[kind], a.flows, kind == "nat")
        drain = Drain()
        mf = os.path.join(tmp, "m.prom")
        for kind in ("plain", "nat"):
            subprocess.run(cmd_of(a.ctrack, caps[kind], kind, True, drain.port, mf),
                           capture_output=True)
            res["records"][kind] = records_of(mf)
        for rep in range(a.reps):
            for kind in ("plain", "nat"):
                for export in (True, False):
                    key = "%s%s" % (kind, "-ipfix" if export else "-noexport")
                    cpu, rc, err = cpu_of(cmd_of(a.ctrack, caps[kind], kind, export,
                                                 drain.port))
                    if rc != 0:
                        print("export_nat_cost: %s exited %d: %s" % (key, rc, err[-300:]),
                              file=sys.stderr)
                        return 1
                    res["cpu_s"].setdefault(key, []).append(round(cpu, 4))
        if not a.no_callgrind and shutil.which("valgrind"):
            for kind in ("plain", "nat"):
                for export in (True, False):
                    key = "%s%s" % (kind, "-ipfix" if export else "-noexport")
                    total, hook = callgrind(cmd_of(a.ctrack, caps[kind], kind, export,
                                                   drain.port), tmp)
                    res["callgrind"][key] = {"total": total, "ipfix_event": hook}
        time.sleep(0.3)
        drain.close()
        res["datagrams_drained"] = drain.n
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    cg = res["callgrind"]
    per = {}
    for kind in ("plain", "nat"):
        n = res["records"].get(kind)
        c = {k: min(v) for k, v in res["cpu_s"].items()}
        row = {"records": n,
               "cpu_us_per_record_export": round((c[kind + "-ipfix"] - c[kind + "-noexport"])
                                                 / n * 1e6, 3) if n else None}
        if cg.get(kind + "-ipfix", {}).get("total") and cg.get(kind + "-noexport", {}).get("total"):
            row["instr_per_record_export"] = round(
                (cg[kind + "-ipfix"]["total"] - cg[kind + "-noexport"]["total"]) / n, 1)
            row["instr_per_record_ipfix_event"] = round(cg[kind + "-ipfix"]["ipfix_event"] / n, 1)
        per[kind] = row
    res["per_record"] = per
    if a.json:
        print(json.dumps(res))
    else:
        print("%-6s %9s %14s %22s %26s" % ("kind", "records", "CPU us/record",
                                           "instructions/record", "ipfix_event instr/record"))
        for kind, row in per.items():
            print("%-6s %9s %14s %22s %26s" % (kind, row["records"],
                                              row["cpu_us_per_record_export"],
                                              row.get("instr_per_record_export", "-"),
                                              row.get("instr_per_record_ipfix_event", "-")))
        print("CPU s by run (min taken): %s" % json.dumps(res["cpu_s"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
