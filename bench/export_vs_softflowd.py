#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""export_vs_softflowd.py [--ctrack PATH] [--flows N] [--reps N] [--json]
[PCAP...] - IPFIX export side by side with softflowd.

The same captures go, in one run and alternately, through `ctrack read
--ipfix` and softflowd 1.1.0 (`softflowd -r FILE -v 10 -b`: IPFIX with
RFC 5103 biflows, the same record shape as ctrack's default) to one
nfcapd (Debian nfdump 1.7.1) on loopback with a 4 MiB socket buffer.
For each exporter and capture it prints records exported per second of
wall clock and per second of CPU (user + system of the exporter process,
from wait4), and the records nfcapd stored - so that loss at the
collector is seen, not hidden.  The flows differ a little by design:
softflowd ends a flow on its own timeouts and at TCP FIN/RST, ctrack at
conntrack's (a TCP connection lasts through TIME_WAIT); both report what
is open at the end of the file.

A third row per capture runs `ctrack read` without --ipfix: the
replay's own cost, so that what export adds to it is seen.

Captures: by default one this script writes (--flows connections: SYNs
refused by RST, UDP exchanges, closed TCP sessions) and, when present,
../shared/pcaps/ndpi__1kxun.pcap and ndpi__synscan.pcap.  Needs nfdump
and softflowd (scripts/deps.sh bench); prints one JSON object with
--json.
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "export"))
import gen_captures as gc  # noqa: E402


def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def timed(cmd):
    """(wall s, cpu s, returncode, output) of @cmd, its CPU from wait4.
    (Its output is small - softflowd's exit statistics - and read after
    it exits.)"""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    err = p.stdout.read().decode(errors="replace")
    p.stdout.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    return wall, ru.ru_utime + ru.ru_stime, p.returncode, err


def softflowd_expired(err):
    """The flows softflowd says it expired (its exit statistics: every
    "reason = N" of its "Expired flow reasons" block), None if absent."""
    block = err.split("Expired flow reasons:", 1)
    if len(block) < 2:
        return None
    text = block[1].split("Per-protocol", 1)[0]
    return sum(int(x) for x in re.findall(r"=\s*(\d+)", text))


def write_capture(path, n):
    pk = []
    for i in range(n):
        k = i % 10
        t = 1.0 + i * 0.0005
        if k < 5:
            pk += gc.refused(i, t, net=50 + (i >> 16))
        elif k < 9:
            pk += gc.udp_exchange(i, t, net=60 + (i >> 16))
        else:
            pk += gc.tcp_session("10.70.%d.%d" % ((i >> 8) & 255, i & 255), "192.0.2.80",
                                 30000 + (i % 30000), 80, t, n_data=2)
    with open(path, "wb") as f:
        f.write(gc.pcap_header())
        for t, fr in sorted(pk, key=lambda x: x[0]):
            f.write(gc.pcap_record(t, fr))


def count_records(nfdir):
    """Records nfcapd stored, by observation domain (nfdump's exporter
    list: -E prints each exporter with its domain and flow count)."""
    files = sorted(os.path.join(nfdir, f) for f in os.listdir(nfdir) if f.startswith("nfcapd.2"))
    per = {}
    for f in files:
        out = subprocess.run(["nfdump", "-r", f, "-q", "-o", "fmt:%sa"], capture_output=True,
                             text=True).stdout
        per["all"] = per.get("all", 0) + len([x for x in out.splitlines() if x.strip()])
    return per


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ctrack", default=os.path.join(ROOT, "build", "tools", "ctrack"))
    ap.add_argument("--flows", type=int, default=100000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("pcaps", nargs="*")
    a = ap.parse_args()
    for prog in ("nfcapd", "nfdump", "softflowd"):
        if not shutil.which(prog):
            print("export_vs_softflowd: %s is not installed (scripts/deps.sh bench)" % prog,
                  file=sys.stderr)
            return 77
    tmp = tempfile.mkdtemp(prefix="ctrack-bench-export.")
    try:
        pcaps = list(a.pcaps)
        if not pcaps:
            own = os.path.join(tmp, "written-%d.pcap" % a.flows)
            write_capture(own, a.flows)
            pcaps.append(own)
            for f in ("ndpi__1kxun.pcap", "ndpi__synscan.pcap"):
                p = os.path.join(ROOT, "..", "shared", "pcaps", f)
                if os.path.exists(p):
                    pcaps.append(p)
        results = []
        for pcap in pcaps:
            for rep in range(a.reps):
                for tool in ("ctrack", "softflowd", "ctrack-noexport"):
                    # a collector of its own per run, so that its count
                    # is this run's (the same nfcapd program and options)
                    port = free_udp_port()
                    nfdir = tempfile.mkdtemp(dir=tmp, prefix="nf.")
                    col = subprocess.Popen(["nfcapd", "-b", "127.0.0.1", "-p", str(port),
                                            "-w", nfdir, "-t", "3600", "-B", "4194304"],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    time.sleep(0.3)
                    if tool == "ctrack":
                        cmd = [a.ctrack, "read", "--no-table", "--no-progress", "--ipfix",
                               "127.0.0.1:%d" % port, "--metrics-file",
                               os.path.join(tmp, "m.prom"), pcap]
                    elif tool == "ctrack-noexport":
                        # the same replay without export: what tracking
                        # alone costs, so the export's share is seen
                        cmd = [a.ctrack, "read", "--no-table", "--no-progress", pcap]
                    else:
                        cmd = ["softflowd", "-d", "-r", pcap, "-n", "127.0.0.1:%d" % port,
                               "-v", "10", "-b", "-m", "2000000",
                               "-p", "/tmp/ctrack-bench-sf-%d.pid" % os.getpid(),
                               # with its control socket, softflowd 1.1.0
                               # -r stops reading after 4 KiB and waits
                               # in accept() when run from Python here
                               "-c", "none"]
                    wall, cpu, rc, err = timed(cmd)
                    exported = None
                    if tool == "ctrack":
                        for line in open(os.path.join(tmp, "m.prom")):
                            if line.startswith("ctrack_export_records_total"):
                                exported = int(float(line.split()[-1]))
                    time.sleep(0.5)
                    col.send_signal(signal.SIGTERM)
                    col.wait(timeout=30)
                    got = count_records(nfdir).get("all", 0)
                    if tool == "softflowd":
                        exported = softflowd_expired(err)
                    elif tool == "ctrack-noexport":
                        exported = got = 0
                    results.append({"pcap": os.path.basename(pcap), "tool": tool, "rep": rep,
                                    "rc": rc, "wall_s": round(wall, 4), "cpu_s": round(cpu, 4),
                                    "records_exported": exported, "records_at_nfcapd": got,
                                    "records_per_s": round(exported / wall) if wall and exported else None,
                                    "records_per_cpu_s": round(exported / cpu) if cpu and exported else None})
                    if rc != 0:
                        print("export_vs_softflowd: %s exited %d: %s" % (tool, rc, err[-300:]),
                              file=sys.stderr)
        if a.json:
            print(json.dumps({"bench": "export", "results": results}))
        else:
            print("%-28s %-15s %8s %8s %9s %9s %11s %11s" % ("capture", "exporter", "wall s",
                  "cpu s", "exported", "nfcapd", "rec/s", "rec/cpu-s"))
            for r in results:
                dash = r["tool"] == "ctrack-noexport"
                print("%-28s %-15s %8.3f %8.3f %9s %9s %11s %11s" % (
                    r["pcap"][:28], r["tool"], r["wall_s"], r["cpu_s"],
                    "-" if dash else r["records_exported"],
                    "-" if dash else r["records_at_nfcapd"],
                    "-" if dash else r["records_per_s"],
                    "-" if dash else r["records_per_cpu_s"]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
