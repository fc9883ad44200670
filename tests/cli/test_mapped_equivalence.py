#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_mapped_equivalence.py CTRACK PCAPS_DIR CRAFT_SCRIPT CAPTURES_DIR - `ctrack read`
maps a plain pcap file and hands libpcap a stream over the mapping, and
frames of the link types libpcap does not rewrite are handed to the
tracker where they lie in the mapping (tools/ctrack/mapped.c, capture.c);
a plain pcapng file is mapped too and its blocks read where they lie.
Standard input cannot be mapped: `ctrack read -` reads the same bytes
through the stream layer with libpcap's own copies.  The promise: both
say exactly the same - events, table, counters, messages and exit status.

Inputs: every plain pcap and pcapng in ../shared/pcaps (Ethernet, raw
IP, SLL, SLL2, NFLOG, big-endian, nanosecond, multi-interface ones among
them; one SKIP line where it is absent), every one of the project's own
(tests/captures: crafted/ with the same link types and formats and mixed
link types in one pcapng, the kernel recordings, the 40,000 records of
craft.py --big; samples/sample.pcap) and the crafted captures of
craft_captures.py (records over the snapshot length, cut records and
blocks, absurd lengths, big-endian files and sections, thousands of good
records before a bad one).  Ids are random per run
(a keyed hash): ctrack_output.normalise says what is compared how.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ctrack_output import normalise  # noqa: E402

CT, PCAPS, CRAFT = sys.argv[1], sys.argv[2], sys.argv[3]
CAPTURES = sys.argv[4] if len(sys.argv) > 4 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "captures")
OPTS = ["-e", "-s", "-o", "json", "--set", "nf_conntrack_udp_timeout=1"]


def run(path, stdin):
    if stdin:
        with open(path, "rb") as f:
            p = subprocess.run([CT, "read"] + OPTS + ["-"], stdin=f,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
        err = p.stderr.decode().replace("ctrack: -:", "ctrack: FILE:")
    else:
        p = subprocess.run([CT, "read"] + OPTS + [path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=300)
        err = p.stderr.decode().replace("ctrack: %s:" % path, "ctrack: FILE:")
    return p.returncode, normalise(p.stdout.decode()), err


def is_mappable(path):
    """A plain (not gzip'd) classic pcap or pcapng file."""
    with open(path, "rb") as f:
        m = f.read(4)
    return m in (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d",
                 b"\x0a\x0d\x0d\x0a")


def files_in(d):
    return [os.path.join(d, n) for n in sorted(os.listdir(d))]


def compare(paths, k, root):
    """Mapped against piped for each of @paths, TAP lines from k + 1;
    returns (failed, packets)."""
    failed, packets = 0, 0
    for path in paths:
        k += 1
        mapped, piped = run(path, False), run(path, True)
        m = re.search(r'"frames":([0-9]+)', mapped[1])
        packets += int(m.group(1)) if m else 0
        name = os.path.basename(path)
        if root and not name.startswith("craft.py"):
            name = os.path.relpath(path, root)
        if mapped == piped:
            print("ok %d - %s" % (k, name))
            continue
        failed += 1
        print("not ok %d - %s" % (k, name))
        if mapped[0] != piped[0]:
            print("# exit %d mapped, %d from a pipe" % (mapped[0], piped[0]))
        if mapped[2] != piped[2]:
            print("# stderr mapped: %r\n# stderr piped:  %r" % (mapped[2][:300], piped[2][:300]))
        for x, y in zip(mapped[1].splitlines(), piped[1].splitlines()):
            if x != y:
                print("# mapped: %s\n# piped:  %s" % (x[:200], y[:200]))
                break
    return failed, packets


def mappable(paths):
    return [p for p in paths if os.path.isfile(p) and os.path.getsize(p) >= 4 and
            is_mappable(p)]


def main():
    tmp = tempfile.mkdtemp(prefix="ctrack-mapped-")
    subprocess.run([sys.executable, CRAFT, tmp], check=True)
    crafted = mappable(files_in(tmp))
    tmp_big = tempfile.mkdtemp(prefix="ctrack-mapped-big-")
    big = os.path.join(tmp_big, "craft.py--big.pcap")
    subprocess.run([sys.executable, os.path.join(CAPTURES, "craft.py"), "--big", big],
                   check=True)
    kdir = os.path.join(CAPTURES, "kernel")
    own = mappable(files_in(os.path.join(CAPTURES, "crafted")) +
                   [os.path.join(kdir, n, "capture.pcap") for n in sorted(os.listdir(kdir))] +
                   [os.path.join(CAPTURES, "..", "..", "samples", "sample.pcap"), big])
    shared = mappable(files_in(PCAPS)) if os.path.isdir(PCAPS) else None
    k = failed = 0
    f, craft_packets = compare(crafted, k, None)
    k += len(crafted)
    failed += f
    shared_packets = 0
    if shared is not None:
        f, shared_packets = compare(shared, k, None)
        k += len(shared)
        failed += f
    f, own_packets = compare(own, k, os.path.join(CAPTURES, "..", ".."))
    k += len(own)
    failed += f
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(tmp_big, ignore_errors=True)
    # the comparison must have had something to compare
    k += 1
    if shared is None:
        print("ok %d - packets compared over ../shared/pcaps and craft_captures.py's files "
              "# SKIP no ../shared/pcaps (%s)" % (k, PCAPS))
        ok_shared = True
    else:
        packets, n = shared_packets + craft_packets, len(shared) + len(crafted)
        ok_shared = packets > 50000 and n >= 60
        print("%s %d - %d packets compared over %d captures" %
              ("ok" if ok_shared else "not ok", k, packets, n))
    k += 1
    packets, n = own_packets + craft_packets, len(own) + len(crafted)
    ok_own = packets > 50000 and n >= 60
    print("%s %d - %d packets compared over %d of the project's captures and "
          "craft_captures.py's" % ("ok" if ok_own else "not ok", k, packets, n))
    print("1..%d" % k)
    return 1 if failed or not ok_shared or not ok_own else 0


sys.exit(main())
