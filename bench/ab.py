#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""bench/ab.py N CMD_A CMD_B [CMD...] - run shell commands alternately N
times each and report, per command, the median user, system and total CPU
time of the child (rusage) and the smallest total.

For comparing two builds of the tool on the same input in one session on
a shared machine: alternating runs see the same load, so their medians
can be compared even when absolute times wobble.  Output is one line per
command (times in ms), in the order given; stdout and stderr of the
commands are discarded.

Example: python3 bench/ab.py 30 'OLD/ctrack read --no-table F' \\
                               'build/tools/ctrack read --no-table F'
"""
import resource
import statistics
import subprocess
import sys


def main():
    if len(sys.argv) < 3 or not sys.argv[1].isdigit():
        print(__doc__.strip(), file=sys.stderr)
        return 2
    n, cmds = int(sys.argv[1]), sys.argv[2:]
    res = {c: [] for c in cmds}
    for _ in range(n):
        for c in cmds:
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run(c, shell=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            res[c].append((r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime))
    for c in cmds:
        u = [x[0] for x in res[c]]
        s = [x[1] for x in res[c]]
        t = [x[0] + x[1] for x in res[c]]
        print("user_ms=%.2f sys_ms=%.2f total_ms_median=%.2f total_ms_min=%.2f  %s" %
              (statistics.median(u) * 1e3, statistics.median(s) * 1e3,
               statistics.median(t) * 1e3, min(t) * 1e3, c))
    return 0


sys.exit(main())
