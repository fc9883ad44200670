# SPDX-License-Identifier: BSD-3-Clause
"""kd_run: one scenario (or one replay) through the kernel's router, recorded.

For each run the harness builds a fresh topology, so nothing of one scenario
is left in the next one's table, then:
  1. starts ctcap in the router (ingress of both ports, one socket, receive
     processing of both ports pinned to one CPU: capture order = conntrack
     order) and the ctnetlink event reader, and waits until both are live;
  2. makes the traffic (a scenario of kd_scenarios, or a replay of kd_replay);
  3. ends a live scenario with the marker datagram, waits a moment, and dumps
     the table (`conntrack -L -o extended`), noting the wall-clock time of the
     dump, the nftables per-state counters and the router's net.netfilter
     sysctls;
  4. stops the readers and removes every namespace, also on failure.
Everything lands in the run's directory:
  capture.pcap  kernel-table.txt  kernel-events.txt  router-sysctls.txt  run.json
"""

import json
import os
import re
import subprocess
import sys
import time

import kd_ctline
import kd_netns
import kd_pcap
import kd_traffic

HERE = os.path.dirname(os.path.abspath(__file__))


class KernelResult:
    def __init__(self, name, outdir):
        self.name = name
        self.dir = outdir
        self.table = []
        self.events = []
        self.nft = {}
        self.t_first = None
        self.t_last = None
        self.t_dump = None
        self.capture_stats = {}
        self.event_stats = {}
        self.fwd_stats = {}
        self.capture = os.path.join(outdir, "capture.pcap")
        self.sysctls = os.path.join(outdir, "router-sysctls.txt")
        self.table_file = os.path.join(outdir, "kernel-table.txt")
        self.events_file = os.path.join(outdir, "kernel-events.txt")
        self.skip = None     # a reason not to judge this run at all
        self.problems = []   # the harness failed to observe the kernel properly
        self.notes = []

    def save(self):
        with open(os.path.join(self.dir, "run.json"), "w") as f:
            json.dump({"name": self.name, "t_first": self.t_first, "t_last": self.t_last,
                       "t_dump": self.t_dump, "nft": self.nft, "capture": self.capture_stats,
                       "events": self.event_stats, "fwd": self.fwd_stats,
                       "problems": self.problems, "notes": self.notes}, f, indent=1)


def _stats(line, prefix):
    out = {}
    for m in re.finditer(r"(\w+)=(\d+)", line if line.startswith(prefix) else ""):
        out[m.group(1)] = int(m.group(2))
    return out


def _wait_ready(proc, what, timeout=10.0):
    import select
    end = time.time() + timeout
    while time.time() < end:
        r, _, _ = select.select([proc.stdout], [], [], 0.1)
        if r:
            line = proc.stdout.readline()
            if line.strip() == "ready":
                return
            if not line:
                break
        if proc.poll() is not None:
            break
    err = proc.stderr.read() if proc.poll() is not None else ""
    raise kd_netns.NetnsError("%s did not start: %s" % (what, err.strip()))


def _stop(proc, timeout=5.0):
    if proc.poll() is None:
        proc.terminate()
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return err or ""


class Recorder:
    """Capture + events in the router of a built topology."""

    def __init__(self, topo, res, ctcap, poke_ms=250, usec=False):
        self.topo, self.res = topo, res
        self.cap = topo.start("router", [ctcap, "-w", res.capture] + (["-u"] if usec else []) +
                              sum((["-i", p] for p in topo.router_ports), []),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _wait_ready(self.cap, "ctcap")
        self.ev = topo.start("router", [sys.executable, os.path.join(HERE, "kd_events.py"),
                                        res.events_file, "--poke-ms", str(poke_ms)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _wait_ready(self.ev, "event reader")

    def dump(self):
        """Reads the table now; notes the time of the dump."""
        t0 = time.time()
        out = kd_netns.run(self.topo.exec_argv("router", ["conntrack", "-L", "-o", "extended"]))
        t1 = time.time()
        self.res.t_dump = (t0 + t1) / 2
        with open(self.res.table_file, "w") as f:
            f.write(out)
        self.res.nft = self.topo.nft_counters()
        with open(self.res.sysctls, "w") as f:
            f.write(self.topo.router_sysctl_dump())

    def stop(self):
        err = _stop(self.ev)
        self.res.event_stats = _stats(err.strip().splitlines()[-1] if err.strip() else "",
                                      "kd_events:")
        if "Traceback" in err:
            self.res.problems.append("event reader failed: " + err.strip()[-500:])
        err = _stop(self.cap)
        self.res.capture_stats = _stats(err.strip().splitlines()[-1] if err.strip() else "",
                                        "ctcap:")
        if self.cap.returncode not in (0,):
            self.res.problems.append("ctcap exit %s: %s" % (self.cap.returncode, err.strip()))


def load_kernel_side(res):
    """Parses what was recorded and checks that the recording is sound."""
    with open(res.table_file) as f:
        res.table, other = kd_ctline.parse_lines(f.read())
    other = [o for o in other if "flow entries have been shown" not in o]
    if other:
        res.notes.append("unparsed table lines: %s" % other[:3])
    with open(res.events_file) as f:
        res.events, _ = kd_ctline.parse_lines(f.read())
    pk = kd_pcap.read_capture(res.capture)
    if pk:
        res.t_first, res.t_last = pk[0].ts, pk[-1].ts
    if res.capture_stats.get("drops", 0):
        res.problems.append("ctcap: the kernel dropped %d frames" % res.capture_stats["drops"])
    if res.event_stats.get("lost", 0):
        res.problems.append("event reader: %d overflows (events lost)" % res.event_stats["lost"])
    if res.capture_stats.get("written", 1) == 0:
        res.problems.append("empty capture")
    return pk


def run_live(sc, outdir, ctcap, keep=False):
    """Runs one scenario of kd_scenarios; returns a KernelResult."""
    os.makedirs(outdir, exist_ok=True)
    res = KernelResult(sc["name"], outdir)
    topo = kd_netns.Topology(middle=sc["middle"], hop_mtu=sc["hop_mtu"])
    ctx = None
    rec = None
    fwd = None
    try:
        topo.build(router_sysctls=sc["sysctls"])
        if sc["middle"] == "l2":
            f = sc["fwd"] or {}
            argv = [sys.executable, os.path.join(HERE, "kd_fwd.py"), "f0", "f1"]
            for k in ("loss", "reorder", "delay_ms", "hold_ms", "seed"):
                if k in f:
                    argv += ["--" + k.replace("_", "-"), str(f[k])]
            fwd = topo.start("fwd", argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
            _wait_ready(fwd, "bridge")
        ctx = kd_traffic.Ctx(topo, outdir)
        ctx.marker_listener()
        # The sample capture is for any reader: microsecond stamps.
        rec = Recorder(topo, res, ctcap, usec=sc.get("sample", False))
        time.sleep(0.2)
        try:
            sc["run"](ctx)
        except AssertionError as e:
            res.problems.append("traffic: %s" % e)
        ctx.marker()
        time.sleep(0.3)
        rec.dump()
        res.notes += ctx.notes
    except Exception as e:  # recorded, and the namespaces still go
        res.problems.append("run failed: %r" % e)
    finally:
        if rec and res.t_dump is None:
            try:
                rec.dump()
            except Exception as e:
                res.problems.append("dump failed: %r" % e)
        if rec:
            rec.stop()
        if fwd:
            lines = _stop(fwd).strip().splitlines()
            res.fwd_stats = _stats(lines[-1] if lines else "", "kd_fwd:")
        if ctx:
            ctx.close()
        if not keep:
            topo.teardown()
    if os.path.exists(res.table_file):
        load_kernel_side(res)
    res.save()
    return res
