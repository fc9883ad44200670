#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_state: `ctrack daemon --state FILE` - the table across a restart.

No root: the daemon replays synthetic captures (gen_flows.py) at full speed
with three workers.  The capture is cut in two by connection, not by time,
so that the restart falls inside connections: every other UDP flow wholly
in the first part (the rest wholly in the second, so that UDP's 2-second
stream rule, which the restart's real time would trigger, never spans it),
TCP connection i's first 1 + i % 4 packets in the first part (SYN_SENT,
SYN_RECV, ESTABLISHED, after the client's data) and the rest in the
second, ICMP echo requests first and their replies second.  The reference
is a daemon that replays the two parts as one file (part 1 then part 2):
  - SIGTERM after part 1, a restart on part 2 with the state file: the
    listing is the reference's line for line but the timeout, and every
    timeout within the seconds that passed (the restart's real time);
  - the same restart without the state file differs (the test can fail);
  - kill -9 after a periodic save (--state-interval 1): the same listing;
  - entries whose time runs out while the daemon is down are not restored
    and are counted as expired;
  - a damaged (flipped byte), cut short, empty, foreign or directory state
    file stops the start with exit status 3 or 2 and a message naming the
    file; --state-damaged=empty keeps it aside (FILE.damaged, never over
    another file) and starts empty; a missing file is a first start;
  - the config file takes the same keys; bad values are usage errors.
Usage: test_state.py CTRACK
"""

import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dm_util  # noqa: E402

SETS = ["--workers", "3", "--speed", "0", "--set", "nf_conntrack_udp_timeout=600",
        "--set", "nf_conntrack_icmp_timeout=600"]
SRV4 = bytes([192, 0, 2, 1])


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    hdr, off, recs = data[:24], 24, []
    while off < len(data):
        _, _, incl, _ = struct.unpack_from("<IIII", data, off)
        recs.append(data[off:off + 16 + incl])
        off += 16 + incl
    return hdr, recs


def write_pcap(path, hdr, recs):
    with open(path, "wb") as f:
        f.write(hdr)
        for r in recs:
            f.write(r)


def flow_of(rec):
    """(kind, flow number in the capture's order of that kind) of a frame."""
    fr = rec[16:]
    et = fr[12:14]
    if et == b"\x08\x00":
        ip = fr[14:]
        proto, src, dst = ip[9], ip[12:16], ip[16:20]
        client = dst if src == SRV4 else src
    else:
        ip = fr[14:]
        proto, src, dst = ip[6], ip[8:24], ip[24:40]
        client = dst if src.endswith(b"\x01") and src.startswith(b"\x20\x01") else src
    return proto, bytes(client)


def split_capture(cap, p1, p2, whole):
    hdr, recs = read_pcap(cap)
    seen, order = {}, {}
    a, b = [], []
    for r in recs:
        key = flow_of(r)
        k = seen.get(key, 0)
        seen[key] = k + 1
        if key not in order:
            order[key] = sum(1 for x in order if x[0] == key[0])
        i = order[key]
        if key[0] == 17:
            first = i % 2 == 0
        elif key[0] == 6:
            first = k < 1 + i % 4
        else:
            first = k == 0
        (a if first else b).append(r)
    write_pcap(p1, hdr, a)
    write_pcap(p2, hdr, b)
    write_pcap(whole, hdr, a + b)
    return len(a), len(b)


def strip_timeout(line):
    t = [x for x in line.split(" ") if x != ""]
    timeout = int(t[4]) if t[0] in ("ipv4", "ipv6") else int(t[2])
    del t[4]
    return " ".join(t), timeout


def listing(dm):
    """{line without timeout: timeout} of `ctrack list -o extended`."""
    out = {}
    for ln in dm.run("list", "-o", "extended").stdout.splitlines():
        k, to = strip_timeout(ln)
        out[k] = to
    return out


def start_fail(ctrack, args, timeout=30):
    """A daemon start that should fail: (exit status, stderr)."""
    d = tempfile.mkdtemp(prefix="ctk-dms-")
    try:
        p = subprocess.run([ctrack, "daemon", "--socket", os.path.join(d, "s")] + args,
                           capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired:
        return None, "still running after %d s" % timeout
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main(argv):
    ctrack = argv[0]
    tap = dm_util.Tap()
    work = tempfile.mkdtemp(prefix="ctk-dmst-")
    cap = os.path.join(work, "flows.pcap")
    dm_util.gen_capture(cap, udp=2000, udp6=600, tcp=800, icmp=300)
    p1, p2, whole = (os.path.join(work, n) for n in ("p1.pcap", "p2.pcap", "whole.pcap"))
    n1, n2 = split_capture(cap, p1, p2, whole)
    tap.note("parts: %d + %d frames" % (n1, n2))
    state = os.path.join(work, "state")
    daemons = []

    def daemon(args, **kw):
        dm = dm_util.Daemon(ctrack, args, **kw)
        daemons.append(dm)
        return dm

    try:
        # -- the reference: both parts as one file ---------------------------
        t_ref = time.time()
        ref = daemon(SETS + ["--replay", whole])
        want = listing(ref)
        ref.stop()

        # -- SIGTERM, restart on the rest -------------------------------------
        t0 = time.time()
        a = daemon(SETS + ["--replay", p1, "--state", state])
        n_a = int(a.run("count").stdout)
        rc = a.stop()
        log_a = a.log_text()
        tap.ok(rc == 0 and "does not exist yet" in log_a and
               ("saved %d entries to %s (stop)" % (n_a, state)) in log_a and
               os.path.getsize(state) > 0,
               "first start: no state file yet; SIGTERM saves every entry (%d)" % n_a, [log_a])
        b = daemon(SETS + ["--replay", p2], config="state = %s\nstate-interval = 0\n" % state)
        got = listing(b)
        log_b = b.log_text()
        elapsed = time.time() - t0 + 2
        bad = sorted(set(want) ^ set(got))[:10]
        late = ["%s: %d, reference %d" % (k, got[k], want[k]) for k in got if k in want and
                not (want[k] - (time.time() - t_ref) - 2 <= got[k] <= want[k] + 2)][:10]
        tap.ok(not bad and ("restored %d entries from %s" % (n_a, state)) in log_b,
               "SIGTERM and a restart on the rest (state in the config file): the listing "
               "is the whole capture's, entry by entry but the timeout (%d entries)"
               % len(want), bad + [log_b])
        tap.ok(not late, "every timeout within the seconds that passed (%.1f s)" % elapsed,
               late)
        b.stop()

        c = daemon(SETS + ["--replay", p2])
        nostate = listing(c)
        c.stop()
        tap.ok(set(nostate) != set(want),
               "without the state file the second part alone gives another table "
               "(%d entries, %d differ)" % (len(nostate), len(set(nostate) ^ set(want))))

        # -- kill -9 after a periodic save ------------------------------------
        st9 = os.path.join(work, "state9")
        a = daemon(SETS + ["--replay", p1, "--state", st9, "--state-interval", "1"])
        n_a = int(a.run("count").stdout)
        mark = len(a.log_text())
        deadline = time.time() + 30
        while "(interval)" not in a.log_text()[mark:] and time.time() < deadline:
            time.sleep(0.1)
        rc = a.stop(signal.SIGKILL)
        log_a = a.log_text()
        b = daemon(SETS + ["--replay", p2, "--state", st9])
        got = listing(b)
        b.stop()
        bad = sorted(set(want) ^ set(got))[:10]
        tap.ok(rc == -signal.SIGKILL and "saved %d entries" % n_a in log_a[mark:] and not bad,
               "kill -9 after a periodic save (--state-interval 1): the restart on the rest "
               "gives the same listing", bad + [log_a])

        # -- entries that expire while the daemon is down ---------------------
        stx = os.path.join(work, "statex")
        short = ["--workers", "3", "--speed", "0", "--set", "nf_conntrack_udp_timeout=600",
                 "--set", "nf_conntrack_icmp_timeout=8"]
        a = daemon(short + ["--replay", p1, "--state", stx])
        lst = a.run("list", "-o", "extended").stdout.splitlines()
        n_icmp = sum(1 for ln in lst if " icmp " in ln)
        n_all = len(lst)
        a.stop()
        log_a = a.log_text()
        saved_icmp = "saved %d entries" % n_all in log_a
        time.sleep(9)
        tiny = os.path.join(work, "tiny.pcap")
        dm_util.gen_capture(tiny, udp=1)
        b = daemon(short + ["--replay", tiny, "--state", stx])
        lst = b.run("list", "-o", "extended").stdout.splitlines()
        log_b = b.log_text()
        b.stop()
        tap.ok(saved_icmp and n_icmp == 300 and
               not any(" icmp " in ln for ln in lst) and
               "restored %d entries" % (n_all - n_icmp) in log_b and
               "%d expired meanwhile" % n_icmp in log_b,
               "entries whose time ran out while the daemon was down are not restored and "
               "are counted as expired (%d ICMP of %d)" % (n_icmp, n_all), [log_a, log_b])

        # -- damaged, cut short, foreign files ----------------------------------
        with open(state, "rb") as f:
            good = f.read()
        cases = []

        def bad_file(name, data, want_rc, words):
            path = os.path.join(work, name)
            if data is None:
                os.mkdir(path)
            else:
                with open(path, "wb") as f:
                    f.write(data)
            rc, out = start_fail(ctrack, SETS + ["--replay", p2, "--state", path])
            ok = rc == want_rc and path in out and all(w in out for w in words)
            cases.append(ok)
            tap.ok(ok, "%s state file: exit %s (want %d), the file and the problem named"
                   % (name, rc, want_rc), [out])
            return path

        flipped = bytearray(good)
        flipped[len(good) // 2] ^= 0x10
        bad_file("flipped", bytes(flipped), 3, ["checksum"])
        bad_file("cut", good[:len(good) * 2 // 3], 3, ["cut short"])
        bad_file("empty", b"", 2, ["empty"])
        bad_file("foreign", b"# not a state file\n" * 20, 2, ["not a ctrack state file"])
        bad_file("directory", None, 2, [])

        # --state-damaged=empty: kept aside, started empty; never over another
        kept = os.path.join(work, "flipped")
        with open(kept + ".damaged", "wb") as f:
            f.write(b"an earlier one")
        b = daemon(SETS + ["--replay", p2, "--state", kept, "--state-damaged", "empty"])
        got = listing(b)
        log_b = b.log_text()
        b.stop()
        with open(kept + ".damaged.1", "rb") as f:
            aside = f.read()
        with open(kept + ".damaged", "rb") as f:
            earlier = f.read()
        tap.ok(set(got) == set(nostate) and aside == bytes(flipped) and
               earlier == b"an earlier one" and "kept as %s.damaged.1" % kept in log_b and
               os.path.getsize(kept) > 0,
               "--state-damaged=empty: the bad file kept as FILE.damaged.1 (FILE.damaged "
               "untouched), the table starts empty, the stop saves a new FILE", [log_b])

        # -- usage ----------------------------------------------------------------
        bad = []
        for args in (["--state-interval", "-1"], ["--state-interval", "x"],
                     ["--state-interval", "86401"], ["--state-damaged", "maybe"],
                     ["--state", ""]):
            rc, out = start_fail(ctrack, ["--replay", p2] + args)
            if rc != 1 or args[0] not in out:
                bad.append("%s: exit %s: %s" % (" ".join(args), rc, out))
        rc, out = start_fail(ctrack, ["--replay", p2, "--state", state, "--state-interval",
                                      "5", "--state-damaged", "empty", "--check"])
        if rc != 0:
            bad.append("--check: exit %s: %s" % (rc, out))
        tap.ok(not bad, "bad --state-interval / --state-damaged values are usage errors "
               "(exit 1) naming the option; --check takes the good ones", bad)
    finally:
        for dm in daemons:
            dm.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
