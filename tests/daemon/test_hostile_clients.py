#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_hostile_clients: the control socket under clients that misbehave.

One daemon replays 60,000 one-way UDP flows (gen_flows.py) and is then
attacked, one way at a time, while a plain client checks after each that it
still answers (within 2 s) and still holds its 60,000 entries:
  malformed JSON, things that are JSON but not requests, unknown commands and
  members, a wrong protocol version, NUL and non-UTF-8 bytes, 1,000 random
  lines on one connection (each gets an error line, the connection lives);
  a 1 MiB request line (E2BIG, the connection closed);
  200 clients at once, each asking for the count while another lists;
  a client that disconnects in the middle of a listing, and one that reads a
  listing at a trickle (the others are not held up);
  an `events` client that stops reading while a flush makes 60,000 DESTROY
  events: it loses events, and what it gets plus what it is told it lost is
  exactly 60,000 - as for a reader that keeps up - and the daemon's counters
  say so.
As root also: a user outside the socket's group (refused at connect(2) by the
socket's mode, and by the daemon's SO_PEERCRED check when the mode lets them
in), a member of the socket group asking to flush, delete or set (EPERM), and
a member of the admin group doing it.
Usage: test_hostile_clients.py CTRACK
"""

import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dm_util  # noqa: E402

N = 60000


def ask(s, line):
    s.sendall(line)
    return json.loads(dm_util.read_line(s))


def responsive(dm, want=N):
    t0 = time.time()
    r = dm.request({"v": 1, "cmd": "count"})
    return r.get("count") == want and time.time() - t0 < 2.0, r, time.time() - t0


def as_user(uid, gid, groups):
    def f():
        os.setgroups(groups)
        os.setgid(gid)
        os.setuid(uid)
    return f


def main(argv):
    ctrack = argv[0]
    tap = dm_util.Tap()
    work = tempfile.mkdtemp(prefix="ctk-hostile-")
    os.chmod(work, 0o755)
    cap = os.path.join(work, "flows.pcap")
    dm_util.gen_capture(cap, udp=N, one_way=True, span_ms=500)
    dm = None
    extra = []
    try:
        dm = dm_util.Daemon(ctrack, ["--replay", cap, "--speed", "0", "--workers", "2",
                                     "--events-buffer-kb", "16", "--max-clients", "400",
                                     "--set", "nf_conntrack_udp_timeout=3600"], workdir=work)
        ok, r, dt = responsive(dm)
        tap.ok(ok, "the daemon holds the replayed %d flows" % N, [r])

        # -- bad requests on one connection ------------------------------------
        s = dm.connect()
        cases = [(b"{not json", "EPROTO"), (b"[1,2,3]", "EPROTO"), (b'"list"', "EPROTO"),
                 (b'{"cmd":"list"}', "EVERSION"), (b'{"v":2,"cmd":"list"}', "EVERSION"),
                 (b'{"v":"1","cmd":"list"}', "EVERSION"), (b'{"v":1}', "EINVAL"),
                 (b'{"v":1,"cmd":"dance"}', "ENOSYS"), (b'{"v":1,"cmd":7}', "EINVAL"),
                 (b'{"v":1,"cmd":"list","colour":"red"}', "EINVAL"),
                 (b'{"v":1,"cmd":"count","format":"json"}', "EINVAL"),
                 (b'{"v":1,"cmd":"list","filter":{"src":"1.2.3.999"}}', "EINVAL"),
                 (b'{"v":1,"cmd":"list","filter":{"dport":"80"}}', "EINVAL"),
                 (b'{"v":1,"cmd":"list","filter":{"speed":"1"}}', "EINVAL"),
                 (b'{"v":1,"cmd":"list","filter":[]}', "EINVAL"),
                 (b'{"v":1,"cmd":"list","cmd":"flush"}', "EPROTO"),
                 (b'{"v":1,"cmd":"set","name":"nf_conntrack_max"}', "EINVAL"),
                 (b'{"v":1,"cmd":"list","zero":"yes"}', "EINVAL"),
                 (b'{"v":1,"cmd":"events","events":["boom"]}', "EINVAL"),
                 (b'{"v":1,\x00"cmd":"list"}', "EPROTO"), (b'{"v":1,"cmd":"\xff\xfe"}', "EPROTO")]
        bad = []
        for line, code in cases:
            r = ask(s, line + b"\n")
            if r.get("ok") is not False or r.get("code") != code or not r.get("error"):
                bad.append("%r -> %r (want %s)" % (line, r, code))
        r = ask(s, b'{"v":1,"cmd":"count"}\n')
        tap.ok(not bad and r.get("count") == N,
               "%d malformed or wrong requests: each an error line with its code, and the "
               "connection still serves" % len(cases), bad + [r])
        rnd = random.Random(25)
        lines = []
        for _ in range(1000):
            b = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 200)))
            b = b.replace(b"\n", b"").replace(b"\r", b"")
            if rnd.random() < 0.3:
                b = b'{"v":1,"cmd":"' + b[:20] + b'"' + b[20:]
            if b.strip():
                lines.append(b)
        s.sendall(b"".join(x + b"\n" for x in lines))
        got = 0
        buf = b""
        s.settimeout(10)
        while got < len(lines):
            d = s.recv(1 << 16)
            if not d:
                break
            buf += d
            got = buf.count(b"\n")
        replies = [json.loads(x) for x in buf.split(b"\n") if x]
        r = ask(s, b'{"v":1,"cmd":"count"}\n')
        s.close()
        tap.ok(len(replies) == len(lines) and all(x.get("ok") is False for x in replies) and
               r.get("count") == N, "%d lines of random bytes: an error for each, the "
               "connection lives on" % len(lines), [len(replies), r])

        # -- a 1 MiB request line -------------------------------------------------
        s = dm.connect()
        s.settimeout(10)
        try:
            s.sendall(b"{" + b"x" * (1 << 20) + b"\n")
        except OSError:
            pass   # the daemon may have closed the connection already
        data = b""
        try:
            while True:
                d = s.recv(65536)
                if not d:
                    break
                data += d
        except OSError:
            pass
        s.close()
        first = json.loads(data.split(b"\n")[0]) if data else {}
        ok, r, dt = responsive(dm)
        st = dm.request({"v": 1, "cmd": "stats"})
        tap.ok(first.get("code") == "E2BIG" and ok and st["control"]["too_long"] >= 1,
               "a 1 MiB request line: E2BIG, the connection closed, the daemon unharmed",
               [data[:200], r])

        # -- 200 clients at once ------------------------------------------------------
        socks = [dm.connect() for _ in range(200)]
        lister = dm.connect()
        lister.sendall(b'{"v":1,"cmd":"list"}\n')
        for x in socks:
            x.sendall(b'{"v":1,"cmd":"count"}\n')
        counts = [json.loads(dm_util.read_line(x)).get("count") for x in socks]
        listed = dm_util.read_lines(lister)
        for x in socks:
            x.close()
        lister.close()
        tap.ok(counts == [N] * 200 and len(listed) == N + 2,
               "200 clients at once get their count, and a listing runs beside them",
               [counts[:5], len(listed)])

        # -- disconnect mid-listing, and a listing read at a trickle ----------------
        s = dm.connect()
        s.sendall(b'{"v":1,"cmd":"list","format":"extended"}\n')
        s.recv(100000)
        s.close()
        slow = dm.connect()
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        slow.sendall(b'{"v":1,"cmd":"list","format":"json"}\n')
        slow.recv(100)
        times = []
        for _ in range(5):
            ok, r, dt = responsive(dm)
            times.append(dt)
            slow.recv(100)
            time.sleep(0.1)
        rest = dm_util.read_lines(slow)
        slow.close()
        st = dm.request({"v": 1, "cmd": "stats"})
        tap.ok(st["control"]["disconnected_mid_listing"] >= 1 and ok and max(times) < 2.0 and
               rest[-1].startswith('{"v":1,"end"') and json.loads(rest[-1])["count"] == N,
               "a client gone mid-listing is counted; one reading at a trickle holds nobody up "
               "(count answered in %.3f s at worst) and gets its whole listing" % max(times),
               [st["control"], rest[-1:]])

        # -- an events client that stops reading, while a flush makes N events -------
        stuck = dm.connect()
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.sendall(b'{"v":1,"cmd":"events","format":"json"}\n')
        reader_out = os.path.join(work, "fast.jsonl")
        fast = subprocess.Popen([ctrack, "events", "-o", "json", "--socket", dm.sock],
                                stdout=open(reader_out, "w"), stderr=subprocess.PIPE, text=True)
        time.sleep(0.5)
        t0 = time.time()
        fl = dm.run("flush", check=False)
        t_flush = time.time() - t0
        ok, r, dt = responsive(dm, 0)
        time.sleep(1.0)
        fast.terminate()
        _, fast_err = fast.communicate(timeout=10)
        stuck.settimeout(5)
        buf = b""
        try:
            while True:
                d = stuck.recv(1 << 20)
                if not d:
                    break
                buf += d
                if buf.count(b"\n") >= N + 2:
                    break
        except socket.timeout:
            pass
        stuck.close()
        lines = [json.loads(x) for x in buf.split(b"\n") if x]
        ev = [x for x in lines if "event" in x]
        lost = [x for x in lines if "lost" in x]
        n_lost = sum(x["lost"] for x in lost)
        st = dm.request({"v": 1, "cmd": "stats"})
        tap.ok(fl.returncode == 0 and ok and n_lost > 0 and len(ev) + n_lost == N and
               st["events"]["lost_at_clients"] >= n_lost and st["events"]["lost_in_rings"] == 0,
               "a subscriber that stopped reading lost %d of %d events, was told so, and "
               "received the rest (%d); flush took %.2f s, count after it %.3f s"
               % (n_lost, N, len(ev), t_flush, dt), [st["events"], lost[:3]])
        fast_ev = sum(1 for ln in open(reader_out) if ln.strip())
        fast_lost = sum(int(x.split(" lost here")[0].split()[-1])
                        for x in fast_err.splitlines() if "lost here" in x)
        tap.ok(fast_ev + fast_lost == N, "a reader that keeps up: %d events and %d reported "
               "lost, %d in all" % (fast_ev, fast_lost, N), [fast_err[-500:]])
    except Exception as e:
        tap.ok(False, "the hostile-client tests ran", [repr(e), dm.log_text() if dm else ""])
    finally:
        if dm:
            rc = dm.stop()
            tap.ok(rc == 0, "the daemon stops cleanly after all that (exit %s)" % rc,
                   [dm.log_text()[-1000:]])

    # -- users and groups (root) ------------------------------------------------------
    if os.geteuid() != 0:
        tap.skip("users outside the group, group members asking to flush", "not root")
        return tap.done()
    nobody, nogroup, users = 65534, 65534, 100
    d2 = d3 = None
    try:
        d2 = dm_util.Daemon(ctrack, ["--replay", cap, "--speed", "0"],
                            workdir=tempfile.mkdtemp(prefix="ctk-perm-", dir=work))
        os.chmod(d2.dir, 0o755)
        p = subprocess.run([ctrack, "count", "--socket", d2.sock], capture_output=True, text=True,
                           preexec_fn=as_user(nobody, nogroup, []), timeout=30)
        tap.ok(p.returncode == 2 and "Permission denied" in p.stderr and
               "--socket-group" in p.stderr, "a user outside the group is refused at connect(2) "
               "by the socket's mode 0660, with a message that says who may connect", [p.stderr])
        d3 = dm_util.Daemon(ctrack, ["--replay", cap, "--speed", "0", "--socket-mode", "0666",
                                     "--socket-group", str(nogroup), "--admin-group", str(users)],
                            workdir=tempfile.mkdtemp(prefix="ctk-perm-", dir=work))
        os.chmod(d3.dir, 0o755)
        p = subprocess.run([ctrack, "count", "--socket", d3.sock], capture_output=True, text=True,
                           preexec_fn=as_user(nobody, users, []), timeout=30)
        st = d3.request({"v": 1, "cmd": "stats"})
        tap.ok(p.returncode == 1 and "permission denied: uid 65534" in p.stderr and
               st["control"]["refused_permission"] == 1,
               "with the socket open to all, the daemon's SO_PEERCRED check refuses a user "
               "outside its group", [p.stderr, st["control"]])
        member = as_user(nobody, nogroup, [])
        c = subprocess.run([ctrack, "count", "--socket", d3.sock], capture_output=True, text=True,
                           preexec_fn=member, timeout=30)
        refused = []
        for args in (["flush"], ["delete", "-p", "udp"], ["set", "nf_conntrack_udp_timeout=5"]):
            p = subprocess.run([ctrack] + args + ["--socket", d3.sock], capture_output=True,
                               text=True, preexec_fn=member, timeout=30)
            if p.returncode != 1 or "permission denied" not in p.stderr or \
                    "needs root or group %d" % users not in p.stderr:
                refused.append("%s: %d %s" % (args, p.returncode, p.stderr))
        left = d3.run("count").stdout.strip()
        tap.ok(c.returncode == 0 and c.stdout.strip() == str(N) and not refused and
               left == str(N), "a member of the socket group may read; flush, delete and set "
               "need root or the admin group (EPERM), and change nothing", refused + [c.stderr])
        p = subprocess.run([ctrack, "flush", "--socket", d3.sock], capture_output=True,
                           text=True, preexec_fn=as_user(nobody, nogroup, [users]), timeout=30)
        left = d3.run("count").stdout.strip()
        tap.ok(p.returncode == 0 and left == "0", "a member of the admin group may flush",
               [p.stderr, left])
    except Exception as e:
        tap.ok(False, "the permission tests ran", [repr(e)] +
               [x.log_text() for x in (d2, d3) if x])
    finally:
        for x in (d2, d3):
            if x:
                x.stop()
    if tap.failed == 0:
        import shutil
        shutil.rmtree(work, ignore_errors=True)
    else:
        tap.note("files in %s" % work)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
