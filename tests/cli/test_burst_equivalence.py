#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_burst_equivalence.py CTRACK PCAPS_DIR CAPTURES_DIR - `ctrack read` hands packets
to the tracker in bursts (ct_process_burst_ts, each packet at its own
capture time), and ends a burst before any packet whose time could see an
entry expire (cmd_read.c).  The promise: the output is exactly that of the
packets one at a time (--burst 1).

For every capture in ../shared/pcaps (one SKIP line where it is absent),
every one of the project's own (tests/captures: crafted/, the kernel
recordings, the 40,000 records of craft.py --big; samples/sample.pcap) and
three sets of options - events,
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
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ctrack_output import normalise  # noqa: E402

CT, PCAPS = sys.argv[1], sys.argv[2]
CAPTURES = sys.argv[3] if len(sys.argv) > 3 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "captures")
OPTION_SETS = [
    ["-e", "-s", "-o", "json"],
    ["-e", "-s", "--set", "nf_conntrack_udp_timeout=1",
     "--set", "nf_conntrack_tcp_timeout_established=2",
     "--set", "nf_conntrack_icmp_timeout=1"],
    ["-s", "--zone-by", "vlan", "--router"],
]
EXT = (".pcap", ".pcapng", ".cap", ".pcap.gz")
ASAN = os.environ.get("CT_TEST_ASAN") == "1"


def run(args):
    p = subprocess.run([CT, "read"] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    return p.returncode, normalise(p.stdout.decode()), p.stderr.decode()


def own_captures():
    """The project's captures: crafted/, kernel/*/capture.pcap, the sample."""
    out = [os.path.join(CAPTURES, "crafted", n)
           for n in sorted(os.listdir(os.path.join(CAPTURES, "crafted"))) if n.endswith(EXT)]
    kdir = os.path.join(CAPTURES, "kernel")
    out += [os.path.join(kdir, n, "capture.pcap") for n in sorted(os.listdir(kdir))]
    out.append(os.path.join(CAPTURES, "..", "..", "samples", "sample.pcap"))
    return out


class Tap:
    def __init__(self):
        self.k = 0
        self.failed = 0

    def line(self, ok, text, skip=None):
        self.k += 1
        if skip:
            print("ok %d - %s # SKIP %s" % (self.k, text, skip))
            return
        print("%s %d - %s" % ("ok" if ok else "not ok", self.k, text))
        if not ok:
            self.failed += 1


def compare(tap, paths, label, sets=OPTION_SETS):
    """Both runs of every capture with every option set of @sets; returns
    the events compared."""
    events = 0
    for path in paths:
        name = label(path)
        for opts in sets:
            one = run(opts + ["--burst", "1", path])
            burst = run(opts + [path])
            events += one[1].count('"event"') + one[1].count("]\t[")
            tap.line(one == burst, "%s %s" % (name, " ".join(opts)))
            if one == burst:
                continue
            if one[0] != burst[0]:
                print("# exit %d one at a time, %d in bursts" % (one[0], burst[0]))
            a, b = one[1].splitlines(), burst[1].splitlines()
            for x, y in zip(a, b):
                if x != y:
                    print("# one at a time: %s\n# in bursts:     %s" % (x[:200], y[:200]))
                    break
    return events


def main():
    tap = Tap()
    if os.path.isdir(PCAPS):
        names = sorted(n for n in os.listdir(PCAPS) if n.endswith(EXT))
        # under AddressSanitizer (CT_TEST_ASAN=1, tests/cli/meson.build)
        # ../shared/pcaps run with the short-timeout set alone (the
        # collector between bursts: the most code paths); the normal run
        # compares all three sets, the project's own captures below run
        # all three in both
        sets = OPTION_SETS[1:2] if ASAN else OPTION_SETS
        events = compare(tap, [os.path.join(PCAPS, n) for n in names], os.path.basename,
                         sets)
        # the comparison must have had something to compare
        # (the short-timeout set alone prints ~2,800 of the ~25,000)
        tap.line(events > (2000 if ASAN else 10000) and len(names) >= 77,
                 "%d events compared over %d captures" % (events, len(names)))
    else:
        tap.line(True, "every capture of ../shared/pcaps, one at a time and in bursts",
                 skip="no ../shared/pcaps (%s)" % PCAPS)
    tmp = tempfile.mkdtemp(prefix="ctrack-burst-")
    try:
        big = os.path.join(tmp, "big.pcap")
        subprocess.run([sys.executable, os.path.join(CAPTURES, "craft.py"), "--big", big],
                       check=True)
        own = own_captures() + [big]
        root = os.path.join(CAPTURES, "..", "..")
        events = compare(tap, own, lambda p: "craft.py --big" if p == big
                         else os.path.relpath(p, root))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    # the same floor as for the corpus: the big capture's 10,000 UDP flows
    # alone come and go, twice
    tap.line(events > 10000 and len(own) >= 50,
             "%d events compared over %d of the project's captures" % (events, len(own)))
    print("1..%d" % tap.k)
    return 1 if tap.failed else 0


sys.exit(main())
