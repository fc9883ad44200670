#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_state_file.py CTRACK CAPTURES_DIR - `ctrack read --save-state /
--load-state`: a capture rotated over many files (tcpdump -G) and read
file by file, each run loading the state the previous one saved, gives
what the whole capture read at once gives - the same events, the same
final table and the same counters (docs/record.md).  And a state file
that is missing, damaged, cut short, foreign or of another version stops
the run with a message naming the file and the problem and the exit
status the man page gives, unless --state-damaged=empty asks to start
empty - then the bad file is kept aside, never overwritten.

Splits: every capture of the project's own (tests/captures: crafted/ and
the kernel recordings; samples/sample.pcap; the 40,000 records of
craft.py --big) cut with `editcap -r` into four files, and the short ones
also into one file per packet, under three sets of options (those of
test_burst_equivalence.py: JSON events and counters; timeouts of 1-2 s so
that entries expire across the cuts; zones by VLAN with the router
rules).  The reference is ctrack's own reading of the whole file; the
outputs are compared as ctrack_output.normalise says (ids are random per
run).  Cuts never fall inside a fragmented datagram: the reassembler's
pieces are not in the state file (docs/record.md says so), so tshark
finds each datagram's fragments and the cut moves past them.

Under AddressSanitizer (CT_TEST_ASAN=1, set by tests/cli/meson.build in a
-Db_sanitize=address build: make test SANITIZE=1, after the normal run has
cut at every packet) the one-file-per-packet scheme cuts at every
ASAN_EVERY-th packet and at both edges (after the first packet, before the
last) instead: every ctrack run there is an ASan process, and the memory
checks need the same code paths, not each of the 60 cuts; the four-file
scheme and the bad files run in full.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ctrack_output import normalise  # noqa: E402

CT, CAPTURES = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
ROOT = os.path.join(CAPTURES, "..", "..")
OPTION_SETS = [
    ["-e", "-s", "-o", "json"],
    ["-e", "-s", "--set", "nf_conntrack_udp_timeout=1",
     "--set", "nf_conntrack_tcp_timeout_established=2",
     "--set", "nf_conntrack_icmp_timeout=1"],
    ["-s", "--zone-by", "vlan", "--router"],
]
EXT = (".pcap", ".pcapng", ".pcap.gz")
ASAN = os.environ.get("CT_TEST_ASAN") == "1"
ASAN_EVERY = 4


class Tap:
    def __init__(self):
        self.k = 0
        self.failed = 0

    def line(self, ok, text, skip=None):
        self.k += 1
        if skip:
            print("ok %d - %s # SKIP %s" % (self.k, text, skip), flush=True)
            return
        print("%s %d - %s" % ("ok" if ok else "not ok", self.k, text), flush=True)
        if not ok:
            self.failed += 1


def ctrack(args, **kw):
    return subprocess.run([CT, "read"] + args, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=600, **kw)


def count_packets(path):
    p = subprocess.run(["capinfos", "-M", "-c", "-T", path], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    for line in p.stdout.splitlines()[1:]:
        f = line.split("\t")
        if len(f) >= 2 and f[1].strip().isdigit():
            return int(f[1])
    return 0


def fragment_spans(path, n):
    """(first, last) frame numbers of each fragmented datagram; one whose
    last piece (more-fragments clear) never comes stays in the reassembler
    until it times out, so its span runs to the end."""
    p = subprocess.run(
        ["tshark", "-r", path, "-o", "ip.defragment:FALSE", "-o", "ipv6.defragment:FALSE",
         "-T", "fields", "-E", "separator=|", "-e", "frame.number", "-e", "ip.src",
         "-e", "ip.dst", "-e", "ip.id", "-e", "ip.flags.mf", "-e", "ip.frag_offset",
         "-e", "ipv6.src", "-e", "ipv6.dst", "-e", "ipv6.fraghdr.ident",
         "-e", "ipv6.fraghdr.more"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    spans, ended = {}, set()

    def last(v):
        return v.split(",")[-1] if v else ""
    for line in p.stdout.splitlines():
        f = line.split("|")
        if len(f) < 10:
            continue
        num = int(f[0])
        # the innermost header is what the reassembler sees; tshark lists
        # every layer's value, comma-separated
        if f[8]:
            key = ("6", last(f[6]), last(f[7]), last(f[8]))
            more = last(f[9]) in ("1", "True")
        elif last(f[4]) in ("1", "True") or last(f[5]) not in ("", "0"):
            key = ("4", last(f[1]), last(f[2]), last(f[3]))
            more = last(f[4]) in ("1", "True")
        else:
            continue
        a, b = spans.get(key, (num, num))
        spans[key] = (min(a, num), max(b, num))
        if not more:
            ended.add(key)
    return [(a, b if k in ended else n) for k, (a, b) in spans.items()]


def safe_cuts(n, want, spans):
    """Cut points (a part starts at each, 1-based) near the @want ones,
    none inside a datagram's fragments."""
    cuts = []
    for c in want:
        while any(a < c <= b for a, b in spans):
            c += 1
        if 1 < c <= n and c not in cuts:
            cuts.append(c)
    return sorted(cuts)


def split(path, cuts, n, tmp):
    parts, start = [], 1
    for k, c in enumerate(cuts + [n + 1]):
        out = os.path.join(tmp, "part%04d.pcapng" % k)
        subprocess.run(["editcap", "-r", path, out, "%d-%d" % (start, c - 1)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        parts.append(out)
        start = c
    return parts


def read_split(parts, opts, state):
    """Each part in its own run; events of every run, the table and the
    counters of the last."""
    out = []
    events = [o for o in opts if o in ("-e", "--events")]
    rest = [o for o in opts if o not in ("-e", "--events", "-s", "--stats")]
    if os.path.exists(state):
        os.unlink(state)
    for k, part in enumerate(parts):
        last = k == len(parts) - 1
        args = (opts if last else events + rest + ["--no-table"])
        args = args + (["--load-state", state] if k else []) + ["--save-state", state, part]
        p = ctrack(args)
        if p.returncode not in (0, 3):
            return None, "run %d of %d: exit %d: %s" % (k + 1, len(parts), p.returncode,
                                                         p.stderr.decode().strip()[:300])
        out.append(p.stdout.decode())
    return "".join(out), None


def first_difference(a, b):
    for x, y in zip(a.splitlines(), b.splitlines()):
        if x != y:
            return "whole: %s\n# split: %s" % (x[:200], y[:200])
    return "lengths %d and %d lines" % (len(a.splitlines()), len(b.splitlines()))


def own_captures():
    out = [os.path.join(CAPTURES, "crafted", n)
           for n in sorted(os.listdir(os.path.join(CAPTURES, "crafted"))) if n.endswith(EXT)]
    kdir = os.path.join(CAPTURES, "kernel")
    out += [os.path.join(kdir, n, "capture.pcap") for n in sorted(os.listdir(kdir))]
    out.append(os.path.join(ROOT, "samples", "sample.pcap"))
    return out


def test_splits(tap, tmp):
    big = os.path.join(tmp, "big.pcap")
    subprocess.run([sys.executable, os.path.join(CAPTURES, "craft.py"), "--big", big],
                   check=True)
    compared = events = moved = 0
    for path in own_captures() + [big]:
        name = "craft.py --big" if path == big else os.path.relpath(path, ROOT)
        n = count_packets(path)
        if n < 2:
            tap.line(True, "%s: split" % name, skip="%d packets: nothing to cut" % n)
            continue
        spans = fragment_spans(path, n)
        schemes = [[n * k // 4 + 1 for k in (1, 2, 3)]]
        if n <= 60:
            schemes.append([c for c in range(2, n + 1)
                            if not ASAN or c in (2, n) or c % ASAN_EVERY == 0])
        for si, want in enumerate(schemes):
            cuts = safe_cuts(n, want, spans)
            moved += len(set(want) - set(cuts))
            if not cuts:
                tap.line(True, "%s: split" % name, skip="fragments waiting for their "
                         "datagram at every cut: the reassembler is not in the state file")
                continue
            d = tempfile.mkdtemp(dir=tmp)
            parts = split(path, cuts, n, d)
            for oi, opts in enumerate(OPTION_SETS):
                if si == 1 and oi:
                    continue   # one file per packet: the first option set
                whole = normalise(ctrack(opts + [path]).stdout.decode())
                got, err = read_split(parts, opts, os.path.join(d, "state"))
                label = "%s in %d files, %s" % (name, len(parts), " ".join(opts))
                if err:
                    tap.line(False, "%s: %s" % (label, err))
                    continue
                got = normalise(got)
                ok = got == whole
                tap.line(ok, label)
                if not ok:
                    print("# " + first_difference(whole, got))
                compared += 1
                events += whole.count('"event"') + whole.count("]\t[")
            shutil.rmtree(d, ignore_errors=True)
    # the comparison must have had something to compare
    tap.line(compared >= 150 and events > 10000,
             "%d split readings compared, %d events; %d cuts moved past fragments" % (
                 compared, events, moved))


def run_state(args, cwd):
    p = subprocess.run([CT, "read"] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120, cwd=cwd)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def test_bad_files(tap, tmp):
    d = tempfile.mkdtemp(dir=tmp)
    sample = os.path.join(ROOT, "samples", "sample.pcap")
    good = os.path.join(d, "good.state")
    rc, _, err = run_state(["--save-state", good, "--no-table", sample], d)
    tap.line(rc == 0 and os.path.getsize(good) > 64, "a state file is written (exit %d %s)" % (
        rc, err.strip()))
    data = open(good, "rb").read()
    fresh = run_state([sample], d)[1]

    def case(name, content, want_rc, words, damaged=None):
        path = os.path.join(d, name)
        if content is None:
            if os.path.exists(path):
                os.unlink(path)
        else:
            with open(path, "wb") as f:
                f.write(content)
        rc, out, err = run_state(["--load-state", path, sample], d)
        ok = rc == want_rc and path in err and all(w in err for w in words) and not out
        tap.line(ok, "--load-state %s: exit %d, says %s" % (name, rc, err.strip()[:160]))
        if content is None or damaged is None:
            return
        # and with --state-damaged=empty: kept aside, the run starts empty
        rc, out, err = run_state(["--load-state", path, "--state-damaged=empty", sample], d)
        kept = path + ".damaged"
        ok = (rc == 0 and normalise(out) == normalise(fresh) and "kept as " + kept in err and
              not os.path.exists(path) and open(kept, "rb").read() == content)
        tap.line(ok, "--state-damaged=empty with %s: exit %d, kept aside, empty start" % (
            name, rc))
        # a second bad file under the same name does not overwrite the first
        with open(path, "wb") as f:
            f.write(content[:-1] if len(content) > 1 else b"x")
        rc, out, err = run_state(["--load-state", path, "--state-damaged", "empty", sample], d)
        ok = (rc == 0 and open(kept, "rb").read() == content and
              os.path.exists(kept + ".1") and "kept as " + kept + ".1" in err)
        tap.line(ok, "a second damaged %s is kept as .damaged.1, the first untouched" % name)

    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0x20
    other_version = bytearray(data)
    other_version[8] = 9
    case("missing.state", None, 2, ["cannot open"])
    case("empty.state", b"", 2, ["empty"], damaged=True)
    case("flipped.state", bytes(flipped), 3, ["damaged", "checksum"], damaged=True)
    case("cut.state", data[:len(data) - 7], 3, ["cut short"], damaged=True)
    case("cut-at-block.state", data[:64], 3, ["cut short", "end block"], damaged=True)
    case("version.state", bytes(other_version), 2, ["version 9"], damaged=True)
    case("foreign.state", open(sample, "rb").read(), 2, ["not a ctrack state file"],
         damaged=True)
    case("text.state", b"net.netfilter.nf_conntrack_max = 1\n", 2,
         ["not a ctrack state file"], damaged=True)
    # a directory is not damage: it stops whatever the policy
    rc, _, err = run_state(["--load-state", d, "--state-damaged=empty", sample], d)
    tap.line(rc == 2 and d in err, "--load-state of a directory: exit %d, %s" % (
        rc, err.strip()[:120]))
    rc, _, err = run_state(["--state-damaged=maybe", sample], d)
    tap.line(rc == 1 and "stop or empty" in err, "--state-damaged=maybe: exit %d" % rc)
    rc, _, err = run_state(["--save-state", os.path.join(d, "no", "such", "dir"), sample], d)
    tap.line(rc == 4 and "--save-state" in err and "No such file" in err,
             "--save-state into a missing directory: exit %d, %s" % (rc, err.strip()[:120]))
    # loading and saving one file: the round trip keeps it whole
    same = os.path.join(d, "same.state")
    shutil.copy(good, same)
    rc, _, err = run_state(["--load-state", same, "--save-state", same, "--no-table", sample], d)
    rc2, _, _ = run_state(["--load-state", same, "--no-table", sample], d)
    tap.line(rc == 0 and rc2 == 0, "--load-state and --save-state of one file: exit %d, %d" % (
        rc, rc2))
    leftovers = [n for n in os.listdir(d) if ".state." in n and "damaged" not in n]
    tap.line(not leftovers, "no temporary file left behind (%s)" % leftovers)


def main():
    tap = Tap()
    missing = [t for t in ("editcap", "capinfos", "tshark") if not shutil.which(t)]
    tmp = tempfile.mkdtemp(prefix="ctrack-state-")
    try:
        test_bad_files(tap, tmp)
        if missing:
            tap.line(True, "captures read file by file", skip="%s not installed (apt-get "
                     "install tshark)" % ", ".join(missing))
        else:
            test_splits(tap, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("1..%d" % tap.k)
    return 1 if tap.failed else 0


sys.exit(main())
