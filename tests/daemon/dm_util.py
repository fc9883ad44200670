# SPDX-License-Identifier: BSD-3-Clause
"""dm_util: what the daemon's tests share - a daemon started on a replayed
capture with a socket of its own, its clients, raw protocol lines, TAP.

Every daemon a test starts gets a fresh temporary directory for its socket
and logs, and is stopped (SIGTERM, then SIGKILL after 10 s) when the test
ends, whatever happened; nothing here needs root or a network namespace.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from tap import Tap  # noqa: E402,F401  (the tests' TAP, tests/support/tap.py)


def gen_capture(path, **kw):
    argv = [sys.executable, os.path.join(HERE, "gen_flows.py"), path]
    for k, v in kw.items():
        if v is True:
            argv.append("--" + k.replace("_", "-"))
        else:
            argv += ["--" + k.replace("_", "-"), str(v)]
    out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
    return dict(kv.split("=") for kv in out.split())


class Daemon:
    def __init__(self, ctrack, args, workdir=None, wait_replay=True, config=None, env=None):
        self.ctrack = ctrack
        self.dir = workdir or tempfile.mkdtemp(prefix="ctk-dm-")
        self.own_dir = workdir is None
        self.sock = os.path.join(self.dir, "ctrack.sock")
        self.logpath = os.path.join(self.dir, "daemon.log")
        self.log = open(self.logpath, "w")
        argv = [ctrack, "daemon", "--socket", self.sock] + list(args)
        if config is not None:
            self.config = os.path.join(self.dir, "ctrack.conf")
            with open(self.config, "w") as f:
                f.write(config)
            argv += ["--config", self.config]
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + 30
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("ctrack daemon exited with %d: %s" % (self.proc.returncode,
                                                                       self.log_text()))
            if os.path.exists(self.sock):
                try:
                    st = self.request({"v": 1, "cmd": "stats"})
                    if not wait_replay or "replay" not in st or st["replay"]["done"]:
                        frames = sum(c["frames"] for c in st["cpu"])
                        if not wait_replay or "replay" not in st or \
                                frames == st["replay"]["frames"]:
                            break
                except OSError:
                    pass
            if time.time() > deadline:
                raise RuntimeError("ctrack daemon did not become ready: %s" % self.log_text())
            time.sleep(0.05)

    def log_text(self):
        if not self.log.closed:
            self.log.flush()
        with open(self.logpath) as f:
            return f.read()

    def connect(self):
        return connect(self.sock)

    def request(self, req, raw=False):
        """One request on a fresh connection; returns the first reply line as JSON."""
        return request(self.sock, req, raw)

    def run(self, *args, check=True, input_text=None, timeout=60):
        p = subprocess.run([self.ctrack] + list(args) + ["--socket", self.sock],
                           capture_output=True, text=True, timeout=timeout, input=input_text)
        if check and p.returncode != 0:
            raise RuntimeError("ctrack %s: exit %d: %s" % (" ".join(args), p.returncode,
                                                          p.stderr.strip()))
        return p

    def stop(self, sig=signal.SIGTERM):
        stop_proc(self.proc, sig, 15)
        if not self.log.closed:
            self.log.close()
        return self.proc.returncode

    def cleanup(self):
        self.stop()
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)


def connect(sock):
    """A connection to the control socket at path @sock (30 s timeout)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(sock)
    return s


def request(sock, req, raw=False):
    """One request (a dict, or with @raw a line of text) on a fresh
    connection to @sock; returns the first reply line as JSON.  For the
    daemons other tests start their own way (tests/export)."""
    s = connect(sock)
    try:
        s.sendall((req if raw else json.dumps(req)).encode() + b"\n")
        return json.loads(read_line(s))
    finally:
        s.close()


def stop_proc(proc, sig=signal.SIGTERM, timeout=15):
    """@sig to a daemon still running, then up to @timeout s for it to
    exit, else SIGKILL; returns its exit status."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return proc.returncode


def read_line(s, limit=1 << 22):
    buf = b""
    while not buf.endswith(b"\n"):
        d = s.recv(65536)
        if not d:
            break
        buf += d
        if len(buf) > limit:
            break
    return buf.split(b"\n", 1)[0].decode()


def read_lines(s, until_end=True):
    """All reply lines up to the trailer ({"v":1,"end":...}) or EOF."""
    buf, lines = b"", []
    while True:
        d = s.recv(1 << 20)
        if not d:
            break
        buf += d
        *full, buf = buf.split(b"\n")
        for ln in full:
            lines.append(ln.decode())
            if until_end and ln.startswith(b'{"v":') and b'"end"' in ln:
                return lines
            if until_end and ln.startswith(b'{"v":') and b'"ok":false' in ln:
                return lines
    return lines
