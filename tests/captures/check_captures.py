#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_captures.py [--no-tshark] - the project's own captures are what their
generators say they are.

  1. craft.py, run again into a temporary directory, writes every file of
     crafted/ byte for byte (so the committed files are the generator's, and
     regenerating them gives what the tests accept), and writes no other;
  2. tshark dissects every crafted file as craft.py's FACTS say: the fields,
     counts and checksum verdicts the frames were built with.  tshark is the
     independent reader here: neither ctrack nor libpcap is involved;
  3. every kernel recording (kernel/*/) holds what record-kernel.sh keeps
     (capture, the kernel's table, events, sysctls, run.json) and tshark
     reads its capture whole.

TAP, one line per file and check.  Without tshark, the tshark checks SKIP
with one line saying so (scripts/deps.sh test installs it).
"""
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import craft  # noqa: E402

CRAFTED = os.path.join(HERE, "crafted")
KERNEL = os.path.join(HERE, "kernel")
RECORDING = ("capture.pcap", "kernel-table.txt", "kernel-events.txt", "router-sysctls.txt",
             "run.json")


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, good, name, details=(), skip=None):
        self.n += 1
        if skip:
            print("ok %d - %s # SKIP %s" % (self.n, name, skip))
            return
        print("%s %d - %s" % ("ok" if good else "not ok", self.n, name))
        if not good:
            self.failed += 1
            for d in details:
                for line in str(d).splitlines():
                    print("#   " + line)


def tshark(path, prefs, flt, fields):
    cmd = ["tshark", "-n", "-r", path]
    for p in prefs:
        cmd += ["-o", p]
    if flt:
        cmd += ["-Y", flt]
    if fields:
        cmd += ["-T", "fields"]
        for f in fields:
            cmd += ["-e", f]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    out = p.stdout.splitlines()
    if not fields:
        out = [str(len(out))]
    return p.returncode, out, p.stderr


def main():
    tap = Tap()
    no_tshark = "--no-tshark" in sys.argv or not shutil.which("tshark")
    tmp = tempfile.mkdtemp(prefix="ctrack-craft-")
    try:
        craft.main([tmp])
        made = sorted(os.listdir(tmp))
        have = sorted(os.listdir(CRAFTED))
        tap.ok(made == have, "craft.py writes exactly the files of crafted/",
               ["only written: %s" % sorted(set(made) - set(have)),
                "only committed: %s" % sorted(set(have) - set(made))])
        for n in made:
            with open(os.path.join(tmp, n), "rb") as a:
                x = a.read()
            y = b""
            if os.path.exists(os.path.join(CRAFTED, n)):
                with open(os.path.join(CRAFTED, n), "rb") as b:
                    y = b.read()
            tap.ok(x == y, "crafted/%s is what craft.py writes" % n,
                   ["%d bytes written, %d committed; run tests/captures/craft.py" %
                    (len(x), len(y))])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    reason = "tshark is not installed (apt-get install tshark)" if no_tshark else None
    by_file = {}
    for f in craft.FACTS:
        by_file.setdefault(f[0], []).append(f)
    # tshark's start-up dominates: run the checks a few at a time
    runs = {}
    if not reason:
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            for f in craft.FACTS:
                runs[id(f)] = pool.submit(tshark, os.path.join(CRAFTED, f[0]), f[1], f[2], f[3])
    for n in sorted(craft.FILES):
        facts = by_file.get(n, [])
        if reason:
            tap.ok(True, "tshark reads crafted/%s as built" % n, skip=reason)
            continue
        problems = []
        if not facts:
            problems.append("craft.py states no fact about it")
        for f in facts:
            _, prefs, flt, fields, rows, damaged = f
            rc, out, err = runs[id(f)].result()
            if damaged and (rc == 0 or damaged not in err):
                problems.append("tshark does not find the damage (%r): exit %d, %r"
                                % (damaged, rc, err.strip()))
            elif out != rows or (rc != 0 and not damaged):
                problems.append("tshark %s -Y %r -e %s:\n  want %r\n  got  %r%s"
                                % (" ".join("-o " + p for p in prefs), flt, fields, rows, out,
                                   ("\n  " + err.strip()) if rc else ""))
        tap.ok(not problems, "tshark reads crafted/%s as built (%d checks)" % (n, len(facts)),
               problems)

    for name in sorted(os.listdir(KERNEL)) if os.path.isdir(KERNEL) else []:
        d = os.path.join(KERNEL, name)
        if not os.path.isdir(d):
            continue
        missing = [f for f in RECORDING if not os.path.exists(os.path.join(d, f))]
        problems = ["missing: %s" % missing] if missing else []
        if not missing:
            with open(os.path.join(d, "run.json")) as f:
                run = json.load(f)
            if run.get("problems"):
                problems.append("the recording's run had problems: %s" % run["problems"])
            if run.get("capture", {}).get("drops"):
                problems.append("ctcap dropped frames: %s" % run["capture"])
        if reason or missing:
            tap.ok(not problems, "kernel/%s is a whole recording" % name, problems,
                   skip=reason if not problems else None)
            continue
        rc, out, err = tshark(os.path.join(d, "capture.pcap"), [], None, None)
        written = run.get("capture", {}).get("written")
        if rc != 0:
            problems.append("tshark: %s" % err.strip())
        elif written is not None and int(out[0]) != written:
            problems.append("tshark reads %s frames, ctcap wrote %d" % (out[0], written))
        tap.ok(not problems, "kernel/%s is a whole recording (%s frames)" % (name, out[0]),
               problems)
    print("1..%d" % tap.n)
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
