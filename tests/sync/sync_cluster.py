# SPDX-License-Identifier: BSD-3-Clause
"""sync_cluster: two firewall nodes, a client and a server, in namespaces.

    client  ca ---- ra0 [A] ra1 ---- sa  server
            cb ---- rb0 [B] rb1 ---- sb
                    ya  [A] ... [B] yb      the private sync link
                    (direct, or through fwd: sync_fwd.py, loss/reordering)

A is a Linux router with the kernel's conntrack and conntrackd 1.4.7; B is
a Linux router without conntrack whose traffic ctsync_peer (node B: a ctrack
table fed by AF_PACKET, a sync node, a transport) tracks.  The two routers
are a VRRP-like pair: both have 10.71.1.1 on the client side and 10.71.2.1
on the server side, and the client (10.71.1.2 on both its ports) and the
server (10.71.2.2) reach each other through A or through B depending on
their routes - a failover is two `ip route replace`.  The sync link is
10.99.0.1 (A) - 10.99.0.2 (B), with 10.99.0.9 an extra address on A's side
that is not a peer (for the tests that B refuses strangers).

Namespaces are named cts<pid>-<random>-<role> and removed at teardown, also
when a test fails; leftovers of runs whose process is gone are removed at
the start (the kernel harness's convention, kd_netns.py).
"""

import json
import os
import random
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "kernel"))
import kd_netns  # noqa: E402  (run, inside, offloads_off, pid_alive)

PREFIX = "cts"
A_SYNC, B_SYNC, STRANGER = "10.99.0.1", "10.99.0.2", "10.99.0.9"
GROUP = "225.0.0.50"
CLIENT, SERVER, GW_C, GW_S = "10.71.1.2", "10.71.2.2", "10.71.1.1", "10.71.2.1"
CLIENT6, SERVER6, GW_C6, GW_S6 = "fd71:1::2", "fd71:2::2", "fd71:1::1", "fd71:2::1"


def remove_stale():
    try:
        names = os.listdir("/run/netns")
    except FileNotFoundError:
        return
    for n in names:
        m = re.match(r"^%s(\d+)-[0-9a-f]+-\w+$" % PREFIX, n)
        if m and not kd_netns.pid_alive(int(m.group(1))):
            kd_netns.run(["ip", "netns", "del", n], check=False)


class Peer:
    """A running ctsync_peer: commands on stdin, JSON lines on stdout."""

    def __init__(self, proc, name):
        self.proc = proc
        self.name = name
        self.buf = b""
        line = self.read_json(15.0)
        if not line or not line.get("ready"):
            raise RuntimeError("%s did not start: %s" % (name, self.stderr_text()))

    def stderr_text(self):
        try:
            self.proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            return "(still running)"
        return self.proc.stderr.read().decode(errors="replace")

    def _line(self, timeout):
        end = time.time() + timeout
        while b"\n" not in self.buf:
            left = end - time.time()
            if left <= 0:
                return None
            r, _, _ = select.select([self.proc.stdout], [], [], left)
            if not r:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def read_json(self, timeout=10.0):
        line = self._line(timeout)
        return json.loads(line) if line else None

    def cmd(self, text, timeout=20.0):
        """Sends a command; returns its replies up to the last one."""
        self.proc.stdin.write((text + "\n").encode())
        self.proc.stdin.flush()
        out = []
        while True:
            j = self.read_json(timeout)
            if j is None:
                raise RuntimeError("%s: no answer to %r" % (self.name, text))
            out.append(j)
            if not ("entry" in j or "conn" in j):
                return out

    def dump(self, which):
        return [j["entry"] for j in self.cmd("dump " + which) if "entry" in j]

    def table(self):
        return [j["conn"] for j in self.cmd("table") if "conn" in j]

    def stats(self):
        return self.cmd("stats")[-1]["stats"]

    def stop(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(b"quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=3)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


class Cluster:
    def __init__(self, peer_bin, fwd=False):
        self.peer_bin = peer_bin
        self.fwd = fwd
        tag = "%s%d-%06x" % (PREFIX, os.getpid(), random.getrandbits(24))
        roles = ["c", "s", "a", "b"] + (["f"] if fwd else [])
        self.names = {r: "%s-%s" % (tag, r) for r in roles}
        self.created = []
        self.procs = []
        self.peers = []
        self.work = tempfile.mkdtemp(prefix="ctsync-")
        self.conntrackd_conf = None

    # -- helpers -------------------------------------------------------
    def ip(self, role, *args, check=True):
        return kd_netns.run(["ip", "-n", self.names[role]] + list(args), check=check)

    def ex(self, role, argv, check=True, timeout=60, input_text=None):
        return kd_netns.run(["ip", "netns", "exec", self.names[role]] + list(argv), check=check,
                            timeout=timeout, input_text=input_text)

    def ns(self, role):
        return kd_netns.inside(self.names[role])

    def sysctl(self, role, kv):
        self.ex(role, ["sysctl", "-q", "-w"] + ["%s=%s" % x for x in kv.items()])

    def _veth(self, ra, ia, rb, ib):
        kd_netns.run(["ip", "link", "add", ia, "netns", self.names[ra], "type", "veth", "peer",
                      "name", ib, "netns", self.names[rb]])

    def _mac(self, role, ifname):
        out = self.ip(role, "-o", "link", "show", "dev", ifname)
        return re.search(r"link/ether ([0-9a-f:]{17})", out).group(1)

    # -- build ---------------------------------------------------------
    def build(self):
        remove_stale()
        for r, n in self.names.items():
            kd_netns.run(["ip", "netns", "add", n])
            self.created.append(n)
            self.ip(r, "link", "set", "lo", "up")
            self.sysctl(r, {"net.ipv6.conf.all.accept_dad": 0,
                            "net.ipv6.conf.default.accept_dad": 0,
                            "net.ipv4.conf.all.rp_filter": 0,
                            "net.ipv4.conf.default.rp_filter": 0})
        self._veth("c", "ca", "a", "ra0")
        self._veth("a", "ra1", "s", "sa")
        self._veth("c", "cb", "b", "rb0")
        self._veth("b", "rb1", "s", "sb")
        if self.fwd:
            self._veth("a", "ya", "f", "fa")
            self._veth("f", "fb", "b", "yb")
        else:
            self._veth("a", "ya", "b", "yb")
        links = {"c": ["ca", "cb"], "s": ["sa", "sb"], "a": ["ra0", "ra1", "ya"],
                 "b": ["rb0", "rb1", "yb"], "f": ["fa", "fb"]}
        for r in self.names:
            for i in links[r]:
                self.sysctl(r, {"net.ipv4.conf.%s.rp_filter" % i: 0})
                self.ip(r, "link", "set", i, "up")
        for i in ("ca", "cb"):
            self.ip("c", "addr", "add", CLIENT + "/24", "dev", i)
            self.ip("c", "-6", "addr", "add", CLIENT6 + "/64", "dev", i, "nodad")
        for i in ("sa", "sb"):
            self.ip("s", "addr", "add", SERVER + "/24", "dev", i)
            self.ip("s", "-6", "addr", "add", SERVER6 + "/64", "dev", i, "nodad")
        for r, c_if, s_if in (("a", "ra0", "ra1"), ("b", "rb0", "rb1")):
            self.ip(r, "addr", "add", GW_C + "/24", "dev", c_if)
            self.ip(r, "addr", "add", GW_S + "/24", "dev", s_if)
            self.ip(r, "-6", "addr", "add", GW_C6 + "/64", "dev", c_if, "nodad")
            self.ip(r, "-6", "addr", "add", GW_S6 + "/64", "dev", s_if, "nodad")
            self.sysctl(r, {"net.ipv4.ip_forward": 1, "net.ipv6.conf.all.forwarding": 1,
                            "net.ipv4.conf.all.send_redirects": 0})
        self.ip("a", "addr", "add", A_SYNC + "/24", "dev", "ya")
        self.ip("a", "addr", "add", STRANGER + "/24", "dev", "ya")
        self.ip("b", "addr", "add", B_SYNC + "/24", "dev", "yb")
        if self.fwd:
            self.sysctl("f", {"net.ipv6.conf.all.disable_ipv6": 1})
            for p in ("fa", "fb"):
                kd_netns.offloads_off(self.names["f"], p)
            # frames copied by a user-space bridge keep whatever checksum
            # they had: the senders must write whole ones
            kd_netns.offloads_off(self.names["a"], "ya", rx=False, gro=False)
            kd_netns.offloads_off(self.names["b"], "yb", rx=False, gro=False)
        # checksums complete on the wire: B's tracker checks them
        for r, ifs in (("c", ["ca", "cb"]), ("s", ["sa", "sb"]), ("a", ["ra0", "ra1"]),
                       ("b", ["rb0", "rb1"])):
            for i in ifs:
                kd_netns.offloads_off(self.names[r], i, rx=(r in "ab"), gro=(r in "ab"))
        # permanent neighbours: no resolution delays, no ARP through the
        # wrong router
        pairs = [(("c", "ca"), ("a", "ra0"), CLIENT, GW_C, CLIENT6, GW_C6),
                 (("c", "cb"), ("b", "rb0"), CLIENT, GW_C, CLIENT6, GW_C6),
                 (("s", "sa"), ("a", "ra1"), SERVER, GW_S, SERVER6, GW_S6),
                 (("s", "sb"), ("b", "rb1"), SERVER, GW_S, SERVER6, GW_S6),
                 (("a", "ya"), ("b", "yb"), A_SYNC, B_SYNC, None, None)]
        for (hr, hi), (rr, ri), h4, r4, h6, r6 in pairs:
            hm, rm = self._mac(hr, hi), self._mac(rr, ri)
            self.ip(hr, "neigh", "replace", r4, "lladdr", rm, "dev", hi, "nud", "permanent")
            self.ip(rr, "neigh", "replace", h4, "lladdr", hm, "dev", ri, "nud", "permanent")
            if h6:
                self.ip(hr, "-6", "neigh", "replace", r6, "lladdr", rm, "dev", hi, "nud",
                        "permanent")
                self.ip(rr, "-6", "neigh", "replace", h6, "lladdr", hm, "dev", ri, "nud",
                        "permanent")
        self.ip("b", "neigh", "replace", STRANGER, "lladdr", self._mac("a", "ya"), "dev", "yb",
                "nud", "permanent")
        # B's tracker reads both ports through one socket; with their receive
        # processing on one CPU its order is the arrival order
        for i in ("rb0", "rb1"):
            self.ex("b", ["sh", "-c", "for q in /sys/class/net/%s/queues/rx-*; do echo 1 > $q/rps_cpus;"
                                      " done" % i])
        self.route_via("b")
        # A: conntrack on, strict TCP, counters per state on the forward path
        self.ex("a", ["nft", "-f", "-"], input_text="""
table inet cts {
    chain forward {
        type filter hook forward priority 0; policy accept;
        ct state invalid counter drop
        ct state new counter
        ct state established counter
        ct state related counter
    }
    chain input {
        type filter hook input priority 0; policy accept;
        ct state new counter
    }
}
""")
        self.sysctl("a", {"net.netfilter.nf_conntrack_tcp_loose": 0,
                          "net.netfilter.nf_conntrack_events": 1})
        return self

    def route_via(self, router):
        """Client and server reach each other through @router ("a" or "b"):
        the subnet and default routes of the other port go."""
        c_if, s_if = ("ca", "sa") if router == "a" else ("cb", "sb")
        other_c, other_s = ("cb", "sb") if router == "a" else ("ca", "sa")
        for r, i, o, net4, net6, gw4, gw6 in (
                ("c", c_if, other_c, "10.71.1.0/24", "fd71:1::/64", GW_C, GW_C6),
                ("s", s_if, other_s, "10.71.2.0/24", "fd71:2::/64", GW_S, GW_S6)):
            for dev in (o, i):
                self.ip(r, "route", "del", net4, "dev", dev, check=False)
                self.ip(r, "-6", "route", "del", net6, "dev", dev, check=False)
            self.ip(r, "route", "add", net4, "dev", i)
            self.ip(r, "-6", "route", "add", net6, "dev", i)
            self.ip(r, "route", "replace", "default", "via", gw4, "dev", i, "onlink")
            self.ip(r, "-6", "route", "replace", "default", "via", gw6, "dev", i, "onlink")

    def nft_counters(self):
        out = self.ex("a", ["nft", "list", "chain", "inet", "cts", "forward"], check=False)
        res = {}
        for m in re.finditer(r"ct state (\w+) counter packets (\d+)", out):
            res[m.group(1)] = int(m.group(2))
        return res

    # -- conntrackd on A -------------------------------------------------
    def conntrackd_config(self, mode="FTFW", transport="UDP", window_tracking=False,
                          startup_resync=True, extra_mode="", role="a", sockbuf=None):
        d = os.path.join(self.work, "conntrackd-" + role)
        os.makedirs(d, exist_ok=True)
        me, other, ifname = (A_SYNC, B_SYNC, "ya") if role == "a" else (B_SYNC, A_SYNC, "yb")
        if transport == "Multicast":
            link = """    Multicast {
        IPv4_address %s
        Group 3780
        IPv4_interface %s
        Interface %s
        Checksum on
    }""" % (GROUP, me, ifname)
        else:
            link = """    %s {
        IPv4_address %s
        IPv4_Destination_Address %s
        Port 3780
        Interface %s
        Checksum on%s
    }""" % (transport, me, other, ifname, (
            "\n        SndSocketBuffer %d\n        RcvSocketBuffer %d" % (sockbuf, sockbuf))
            if sockbuf else "")
        opts = "    Options {\n        TCPWindowTracking %s\n    }\n" % (
            "On" if window_tracking else "Off")
        conf = """Sync {
    Mode %s {
        StartupResync %s
%s    }
%s
%s}
General {
    HashSize 8192
    HashLimit 262144
    LogFile %s/conntrackd.log
    Syslog off
    LockFile %s/conntrackd.lock
    UNIX {
        Path %s/conntrackd.ctl
    }
    NetlinkBufferSize 2097152
    NetlinkBufferSizeMaxGrowth 8388608
    Filter From Userspace {
        Address Ignore {
            IPv4_address 127.0.0.1
            IPv4_address %s
            IPv4_address %s
        }
    }
}
""" % (mode, "on" if startup_resync else "off", extra_mode, link, opts, d, d, d, me,
            STRANGER)
        path = os.path.join(d, "conntrackd.conf")
        with open(path, "w") as f:
            f.write(conf)
        if role == "a":
            self.conntrackd_conf = path
        return path

    def start_conntrackd(self, role="a", **kw):
        conf = self.conntrackd_config(role=role, **kw)
        d = os.path.dirname(conf)
        try:
            os.unlink(os.path.join(d, "conntrackd.lock"))
        except FileNotFoundError:
            pass
        p = subprocess.Popen(["ip", "netns", "exec", self.names[role], "conntrackd", "-C",
                              conf], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.procs.append(p)
        ctl = os.path.join(d, "conntrackd.ctl")
        end = time.time() + 10
        while time.time() < end:
            if p.poll() is not None:
                raise RuntimeError("conntrackd exited: %s" % p.stderr.read().decode())
            if os.path.exists(ctl):
                r = subprocess.run(["ip", "netns", "exec", self.names[role], "conntrackd", "-C",
                                    conf, "-s"], capture_output=True)
                if r.returncode == 0:
                    return p
            time.sleep(0.1)
        raise RuntimeError("conntrackd did not come up")

    def conntrackd(self, *args, check=True, role="a"):
        conf = os.path.join(self.work, "conntrackd-" + role, "conntrackd.conf")
        return self.ex(role, ["conntrackd", "-C", conf] + list(args), check=check)

    def stop_conntrackd(self):
        for p in list(self.procs):
            if p.poll() is None and p.args[4:5] == ["conntrackd"]:
                p.terminate()
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
                self.procs.remove(p)

    # -- node B ------------------------------------------------------------
    def start_peer(self, role="b", sync="", capture=("rb0", "rb1"), zone=0, seq=None,
                   name="ctsync_peer", extra=()):
        argv = ["ip", "netns", "exec", self.names[role], self.peer_bin, "--sync", sync]
        argv += list(extra)
        for c in capture:
            argv += ["--capture", "%s:%d" % (c, zone) if zone else c]
        if seq is not None:
            argv += ["--seq", str(seq)]
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        self.procs.append(p)
        peer = Peer(p, name)
        self.peers.append(peer)
        return peer

    def stop_peer(self, peer):
        peer.stop()
        if peer in self.peers:
            self.peers.remove(peer)
        if peer.proc in self.procs:
            self.procs.remove(peer.proc)

    # -- teardown ----------------------------------------------------------
    def teardown(self):
        for peer in self.peers:
            try:
                peer.stop()
            except Exception:  # noqa: BLE001 - best effort at teardown
                pass
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for n in reversed(self.created):
            kd_netns.run(["ip", "netns", "del", n], check=False)
        self.created = []
        shutil.rmtree(self.work, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.teardown()
        return False


def wait_for(fn, timeout=10.0, step=0.2):
    """Calls fn() until it returns something true; returns that (or the last)."""
    end = time.time() + timeout
    r = fn()
    while not r and time.time() < end:
        time.sleep(step)
        r = fn()
    return r


_CT_TOKEN = re.compile(r"(\w[\w-]*)=(\S+)")


def parse_conntrackd_line(line):
    """One line of `conntrackd -i` / `-e` (conntrack's plain format without
    the timeout): a dict with proto, protonum, state, orig, reply, flags,
    mark, zone; None for other lines."""
    toks = line.split()
    if len(toks) < 3 or not toks[1].isdigit():
        return None
    rec = {"proto": toks[0], "protonum": int(toks[1]), "state": None, "orig": {}, "reply": {},
           "flags": [], "mark": 0, "zone": 0}
    i = 2
    if i < len(toks) and toks[i].isdigit():
        i += 1
    if i < len(toks) and "=" not in toks[i] and not toks[i].startswith("["):
        rec["state"] = toks[i]
        i += 1
    cur = None
    for t in toks[i:]:
        if t.startswith("["):
            if t.startswith("[active"):
                break
            rec["flags"].append(t.strip("[]"))
            continue
        if t.endswith("s]"):
            continue
        m = _CT_TOKEN.match(t)
        if not m:
            continue
        k, v = m.group(1), m.group(2)
        if k == "src":
            cur = "orig" if not rec["orig"] else "reply"
        if k in ("src", "dst", "sport", "dport", "type", "code", "id") and cur:
            rec[cur][k] = v
        elif k == "mark":
            rec["mark"] = int(v)
        elif k == "zone":
            rec["zone"] = int(v)
    return rec if rec["orig"] else None
