#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_burst_equivalence.py CTRACK PCAPS_DIR - `ctrack read` hands packets
to the tracker in bursts (ct_process_burst_ts, each packet at its own
capture time), and ends a burst before any packet whose time could see an
entry expire (cmd_read.c).  The promise: the output is exactly that of the
packets one at a time (--burst 1).

For every capture in ../shared/pcaps and three sets of options - events,
counters and JSON (first/last seen times); timeouts of 1-2 s so that
entries expire all through the captures and the collector runs between
bursts; zones by VLAN with the router rules - both runs must exit alike,
say the same on stderr and print the same events, table and counters.

What may differ is only what differs between any two runs: the conntrack
id is a keyed hash of the entry's address with a random key (as the
kernel's), so ids are removed, the table (listed by first packet, then id)
is compared as a set, and DESTROY events of one collector pass with equal
expiry times (ordered by id) are compared as a set.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ctrack_output import normalise  # noqa: E402

CT, PCAPS = sys.argv[1], sys.argv[2]
OPTION_SETS = [
    ["-e", "-s", "-o", "json"],
    ["-e", "-s", "--set", "nf_conntrack_udp_timeout=1",
     "--set", "nf_conntrack_tcp_timeout_established=2",
     "--set", "nf_conntrack_icmp_timeout=1"],
    ["-s", "--zone-by", "vlan", "--router"],
]


def run(args):
    p = subprocess.run([CT, "read"] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    return p.returncode, normalise(p.stdout.decode()), p.stderr.decode()


def main():
    names = sorted(n for n in os.listdir(PCAPS)
                   if n.endswith((".pcap", ".pcapng", ".cap", ".pcap.gz")))
    cases = [(n, o) for n in names for o in OPTION_SETS]
    print("1..%d" % (len(cases) + 1))
    k = 0
    failed = 0
    events = 0
    for name, opts in cases:
        k += 1
        path = os.path.join(PCAPS, name)
        one = run(opts + ["--burst", "1", path])
        burst = run(opts + [path])
        events += one[1].count('"event"') + one[1].count("]\t[")
        if one == burst:
            print("ok %d - %s %s" % (k, name, " ".join(opts)))
            continue
        failed += 1
        print("not ok %d - %s %s" % (k, name, " ".join(opts)))
        if one[0] != burst[0]:
            print("# exit %d one at a time, %d in bursts" % (one[0], burst[0]))
        a, b = one[1].splitlines(), burst[1].splitlines()
        for x, y in zip(a, b):
            if x != y:
                print("# one at a time: %s\n# in bursts:     %s" % (x[:200], y[:200]))
                break
    # the comparison must have had something to compare
    k += 1
    print("%s %d - %d events compared over %d captures" %
          ("ok" if events > 10000 and len(names) >= 77 else "not ok", k,
           events, len(names)))
    return 1 if failed else 0


sys.exit(main())
