#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_read_nat_state.py CTRACK - `ctrack read --nat
... --save-state` then `--load-state` on the rest of the capture reads as
one run over the whole capture (issue 24: NAT bindings in state files).

The capture is a NAT gateway's ingress cut in two (tests/support/
nat_gateway.py: reply tuples derived from the rules with the kernel's
address choice written again in Python; connections across the cut; after
it a new connection from a source mapped before it, which must reuse that
mapping).  Checks:

 - read whole, and read as two files with the state saved and loaded
   between: the same events, the same final table (reply tuples
   included) and the same counters (ctrack_output.normalise);
 - the table's reply tuples are the ones derived here;
 - the second half read without the state is not the same (so the check
   above sees the bindings);
 - the state file is format version 2 (it holds NAT), one of a reading
   without NAT version 1; a version 1 file written by ctrack before NAT in
   records (tests/cli/state-v1-before-nat.state, from main 2e83705 over
   the same first half) still loads;
 - that state loaded without --nat is refused with a message that names
   the binding, exit status 3 (the file is sound, the table cannot hold
   it), and nothing is printed as a table.
"""
import ipaddress
import os
import struct
import subprocess
import sys
import tempfile

CT = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from ctrack_output import normalise  # noqa: E402
from nat_gateway import RULES, build, reply_tuples  # noqa: E402

n_test = 0
failed = 0


def ok(cond, what):
    global n_test, failed
    n_test += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n_test, what), flush=True)
    if not cond:
        failed += 1



def ctrack(args):
    return subprocess.run([CT, "read", "--no-progress"] + args, capture_output=True,
                          text=True, timeout=120)


def state_version(path):
    with open(path, "rb") as f:
        h = f.read(12)
    return struct.unpack("<I", h[8:12])[0] if h[:8] == b"CTRKSTAT" else None



def main():
    tmp = tempfile.mkdtemp(prefix="ct-nat-state-")
    paths, expect = build(tmp)
    rules = os.path.join(tmp, "rules.nat")
    with open(rules, "w") as f:
        f.write("# the gateway's rules\n" + "\n".join(RULES) + "\n")
    state = os.path.join(tmp, "nat.state")
    nat = ["--nat-file", rules]
    for opts in (["-e", "-s"], ["-e", "-s", "-o", "json"]):
        whole = ctrack(nat + opts + [paths["whole"]])
        ok(whole.returncode == 0, "whole capture %s: exit %d %s" % (
            " ".join(opts), whole.returncode, whole.stderr.strip()[:200]))
        p1 = ctrack(nat + [o for o in opts if o != "-s"] +
                    ["--no-table", "--save-state", state, paths["first"]])
        ok(p1.returncode == 0, "first half with --save-state: exit %d %s" % (
            p1.returncode, p1.stderr.strip()[:200]))
        ok(state_version(state) == 2, "a state file with NAT bindings is format version 2 "
           "(%s)" % state_version(state))
        p2 = ctrack(nat + opts + ["--load-state", state, paths["second"]])
        ok(p2.returncode == 0, "second half with --load-state: exit %d %s" % (
            p2.returncode, p2.stderr.strip()[:200]))
        same = normalise(whole.stdout) == normalise(p1.stdout + p2.stdout)
        ok(same, "%s: events, table and counters of the two runs are the whole run's" %
           " ".join(opts))
        if not same:
            for x, y in zip(normalise(whole.stdout).splitlines(),
                            normalise(p1.stdout + p2.stdout).splitlines()):
                if x != y:
                    print("# whole: %s\n# split: %s" % (x[:220], y[:220]))
                    break
        alone = ctrack(nat + opts + [paths["second"]])
        ok(normalise(alone.stdout) != normalise(p2.stdout),
           "%s: the second half alone reads otherwise (the bindings matter)" % " ".join(opts))
    # the reply tuples, derived from the rules
    p = ctrack(nat + [paths["whole"]])
    got = reply_tuples(p.stdout)
    for k, v in sorted(expect.items()):
        ok(got.get(k) == v, "%s %s:%d -> %s:%d replies as %s (got %s)" % (
            k[0], k[1], k[3], k[2], k[4], v, got.get(k)))
    p1 = ctrack(nat + ["--no-table", "--save-state", state, paths["first"]])
    p2 = ctrack(nat + ["--load-state", state, paths["second"]])
    ok(reply_tuples(p2.stdout) == got, "after the restore the same reply tuples")
    # E reused A's mapping across the restore
    e = [k for k in expect if k[0] == "udp" and k[2] != "192.0.2.10"][0]
    a = ("udp", "10.0.0.1", "192.0.2.10", 5000, 53)
    ok(reply_tuples(p2.stdout).get(e, (0, 1))[1] == got[a][1],
       "a new connection after the restore reuses its source's restored mapping")
    # the NAT filters as conntrack's filter_nat: -n -g both, -j wins
    n_all = len(got)
    n_both = len([k for k, v in expect.items() if v[0] != k[2]])
    for flags, want in ((["--src-nat"], n_all + 1), (["--dst-nat"], n_both),
                        (["--src-nat", "--dst-nat"], n_both),
                        (["--any-nat", "--dst-nat"], n_all + 1)):
        q = ctrack(nat + flags + [paths["whole"]])
        n = len([ln for ln in q.stdout.splitlines() if ln.strip()])
        ok(n == want, "%s: %d entries (want %d)" % (" ".join(flags), n, want))
    # a reading without NAT still writes version 1
    plain_state = os.path.join(tmp, "plain.state")
    q = ctrack(["--no-table", "--save-state", plain_state, paths["first"]])
    ok(q.returncode == 0 and state_version(plain_state) == 1,
       "a state file without NAT is format version 1 (%s)" % state_version(plain_state))
    # a file written before NAT in records (ctrack 2e83705: `ctrack read
    # --save-state` of the same first.pcap, without NAT) still loads, and
    # reads as this build's own file of that table
    old = ctrack(["--load-state", os.path.join(HERE, "state-v1-before-nat.state"),
                  paths["second"]])
    new = ctrack(["--load-state", plain_state, paths["second"]])
    ok(old.returncode == 0 and old.stdout == new.stdout and old.stdout,
       "a version 1 file of a ctrack before NAT in records loads as this one's (%d, %s)" % (
           old.returncode, old.stderr.strip()[:160]))
    # the NAT state into a reading without --nat
    q = ctrack(["--load-state", state, paths["second"]])
    ok(q.returncode == 3 and "NAT" in q.stderr and state in q.stderr and not q.stdout,
       "a NAT state without --nat: exit %d, %s" % (q.returncode, q.stderr.strip()[:200]))
    print("1..%d" % n_test)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
