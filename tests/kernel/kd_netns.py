# SPDX-License-Identifier: BSD-3-Clause
"""kd_netns: network namespaces, veth links and the router of the kernel oracle.

The harness compares ctrack with the kernel's nf_conntrack in a router namespace
that forwards between a client namespace and a server namespace.  This module
builds that topology, and removes it again whatever happens: every namespace it
creates carries the harness's prefix, the creating process's pid and a random
suffix, so a later run can tell a stale leftover (its pid is gone) from one that
belongs to a run still in progress, and remove only the former.

Sockets are opened inside a namespace by switching the calling thread into it
for the duration of a `with topo.ns("client"):` block (setns(2) acts on one
thread), so the scenarios can drive both ends of a connection from one Python
process and keep exact control of their timing.  A socket stays in the
namespace it was created in after the thread switches back.

Offloads are set with the SIOCETHTOOL ioctl directly (ethtool(8) need not be
installed): transmit checksum offload off at the end hosts, so that frames carry
full checksums on the wire, and receive/transmit checksum offload and GRO off at
the router's ports, so that the router's conntrack checks each checksum and sees
each frame as the capture does.
"""

import array
import contextlib
import ctypes
import fcntl
import os
import random
import re
import socket
import struct
import subprocess
import time

CLONE_NEWNET = 0x40000000
NS_PREFIX = "ctk"
_libc = ctypes.CDLL(None, use_errno=True)

# ethtool legacy commands (include/uapi/linux/ethtool.h); the kernel maps them
# onto netdev features, so they work on every driver that has the feature.
ETHTOOL_SRXCSUM = 0x15
ETHTOOL_STXCSUM = 0x17
ETHTOOL_SSG = 0x19
ETHTOOL_STSO = 0x1F
ETHTOOL_SGSO = 0x24
ETHTOOL_SGRO = 0x2C
SIOCETHTOOL = 0x8946


class NetnsError(RuntimeError):
    pass


def run(cmd, check=True, capture=True, input_text=None, timeout=60):
    """Runs a command (a list), returns its stdout; raises NetnsError when it fails."""
    p = subprocess.run(cmd, input=input_text, capture_output=capture, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise NetnsError("command failed (%d): %s\n%s" % (p.returncode, " ".join(cmd),
                                                          (p.stderr or "").strip()))
    return p.stdout if capture else ""


def _setns(fd):
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, "setns: " + os.strerror(e))


@contextlib.contextmanager
def inside(name):
    """Runs the block with the calling thread inside namespace `name`."""
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open("/run/netns/" + name, os.O_RDONLY)
    try:
        _setns(target)
        try:
            yield
        finally:
            _setns(home)
    finally:
        os.close(target)
        os.close(home)


def _ethtool_set(ifname, cmd, value):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        ev = array.array("I", [cmd, value])
        addr, _ = ev.buffer_info()
        ifr = struct.pack("16sP", ifname.encode(), addr)
        ifr += b"\0" * (40 - len(ifr))
        fcntl.ioctl(s.fileno(), SIOCETHTOOL, ifr)
    finally:
        s.close()


def offloads_off(ns_name, ifname, rx=True, gro=True):
    """Turns checksum offload (tx, and rx unless rx=False), SG, TSO, GSO and GRO off."""
    with inside(ns_name):
        # Order matters: TSO depends on SG, SG on tx checksumming.
        for cmd in (ETHTOOL_STSO, ETHTOOL_SGSO, ETHTOOL_SSG, ETHTOOL_STXCSUM):
            _ethtool_set(ifname, cmd, 0)
        if rx:
            _ethtool_set(ifname, ETHTOOL_SRXCSUM, 0)
        if gro:
            _ethtool_set(ifname, ETHTOOL_SGRO, 0)


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale():
    """Removes namespaces left by harness runs whose process is gone."""
    removed = []
    try:
        names = os.listdir("/run/netns")
    except FileNotFoundError:
        return removed
    for n in names:
        m = re.match(r"^%s(\d+)-[0-9a-f]+-\w+$" % NS_PREFIX, n)
        if m and not pid_alive(int(m.group(1))):
            run(["ip", "netns", "del", n], check=False)
            removed.append(n)
    return removed


class Topology:
    """client - router - server, optionally with a middle namespace.

    middle=None:    client --c0/r0-- router --r1/s0-- server
    middle="l2":    router --r1/f0-- fwd --f1/s0-- server   (fwd bridges frames in
                    user space: loss, reordering, delay; same subnet as r1/s0)
    middle="hop":   router --r1/h0-- hop --h1/s0-- server   (hop is an IP router
                    without conntrack; it makes ICMP errors that cross the router)
    Addresses (v4 / v6):
      client c0 10.71.1.2/24 fd71:1::2/64   router r0 10.71.1.1 fd71:1::1
      router r1 10.71.2.1/24 fd71:2::1/64   server s0 10.71.2.2 fd71:2::2
      with a hop: hop h0 10.71.2.2 fd71:2::2, hop h1 10.71.3.1 fd71:3::1,
                  server s0 10.71.3.2 fd71:3::2
    """

    CLIENT4, CLIENT6 = "10.71.1.2", "fd71:1::2"
    ROUTER_C4, ROUTER_C6 = "10.71.1.1", "fd71:1::1"
    ROUTER_S4, ROUTER_S6 = "10.71.2.1", "fd71:2::1"

    def __init__(self, middle=None, hop_mtu=None, rps_cpu=0):
        self.middle = middle
        self.hop_mtu = hop_mtu
        self.rps_cpu = rps_cpu
        tag = "%s%d-%06x" % (NS_PREFIX, os.getpid(), random.getrandbits(24))
        self.names = {"client": tag + "-c", "router": tag + "-r", "server": tag + "-s"}
        if middle == "l2":
            self.names["fwd"] = tag + "-f"
        elif middle == "hop":
            self.names["hop"] = tag + "-h"
        if middle == "hop":
            self.server4, self.server6 = "10.71.3.2", "fd71:3::2"
            self.hop4, self.hop6 = "10.71.2.2", "fd71:2::2"
        else:
            self.server4, self.server6 = "10.71.2.2", "fd71:2::2"
        self.client4, self.client6 = self.CLIENT4, self.CLIENT6
        self.router_ports = ["r0", "r1"]
        self.created = []
        self.procs = []
        self.addrs = {}      # (role, ifname) -> (v4, v6) without prefix length
        self.neighbours = []  # pairs of (role, ifname) on one link (or one bridged link)

    # -- helpers -----------------------------------------------------------
    def ns(self, role):
        return inside(self.names[role])

    def ip(self, role, *args, check=True):
        return run(["ip", "-n", self.names[role]] + list(args), check=check)

    def sh(self, role, cmd, check=True, timeout=60):
        return run(["ip", "netns", "exec", self.names[role], "sh", "-c", cmd], check=check,
                   timeout=timeout)

    def exec_argv(self, role, argv):
        return ["ip", "netns", "exec", self.names[role]] + list(argv)

    def sysctl(self, role, settings):
        args = ["%s=%s" % kv for kv in settings.items()]
        run(["ip", "netns", "exec", self.names[role], "sysctl", "-q", "-w"] + args)

    def nft(self, role, ruleset):
        run(["ip", "netns", "exec", self.names[role], "nft", "-f", "-"], input_text=ruleset)

    def start(self, role, argv, **kw):
        """Starts a long-running process in a namespace; it is killed at teardown."""
        p = subprocess.Popen(self.exec_argv(role, argv), **kw)
        self.procs.append(p)
        return p

    def mac(self, role, ifname):
        out = self.ip(role, "-o", "link", "show", "dev", ifname)
        return re.search(r"link/ether ([0-9a-f:]{17})", out).group(1)

    # -- build -------------------------------------------------------------
    def _veth(self, a_role, a_if, b_role, b_if):
        run(["ip", "link", "add", a_if, "netns", self.names[a_role], "type", "veth", "peer",
             "name", b_if, "netns", self.names[b_role]])

    def _addr(self, role, ifname, v4, v6):
        self.addrs[(role, ifname)] = (v4.split("/")[0], v6.split("/")[0])
        self.ip(role, "addr", "add", v4, "dev", ifname)
        self.ip(role, "-6", "addr", "add", v6, "dev", ifname, "nodad")

    def _quiet_host(self, role):
        # No DAD delays, no router solicitations: addresses usable at once.
        self.sysctl(role, {
            "net.ipv6.conf.all.accept_dad": 0, "net.ipv6.conf.default.accept_dad": 0,
            "net.ipv6.conf.all.router_solicitations": 0,
            "net.ipv6.conf.default.router_solicitations": 0,
            "net.ipv4.ping_group_range": "0 2147483647",
        })

    def build(self, router_sysctls=None):
        remove_stale()
        for role in self.names:
            run(["ip", "netns", "add", self.names[role]])
            self.created.append(self.names[role])
            self.ip(role, "link", "set", "lo", "up")
            self._quiet_host(role)
        self._veth("client", "c0", "router", "r0")
        self.neighbours.append((("client", "c0"), ("router", "r0")))
        if self.middle == "l2":
            self._veth("router", "r1", "fwd", "f0")
            self._veth("fwd", "f1", "server", "s0")
            self.neighbours.append((("router", "r1"), ("server", "s0")))
        elif self.middle == "hop":
            self._veth("router", "r1", "hop", "h0")
            self._veth("hop", "h1", "server", "s0")
            self.neighbours.append((("router", "r1"), ("hop", "h0")))
            self.neighbours.append((("hop", "h1"), ("server", "s0")))
        else:
            self._veth("router", "r1", "server", "s0")
            self.neighbours.append((("router", "r1"), ("server", "s0")))

        self._addr("client", "c0", self.CLIENT4 + "/24", self.CLIENT6 + "/64")
        self._addr("router", "r0", self.ROUTER_C4 + "/24", self.ROUTER_C6 + "/64")
        self._addr("router", "r1", self.ROUTER_S4 + "/24", self.ROUTER_S6 + "/64")
        if self.middle == "hop":
            self._addr("hop", "h0", "10.71.2.2/24", "fd71:2::2/64")
            self._addr("hop", "h1", "10.71.3.1/24", "fd71:3::1/64")
            self._addr("server", "s0", "10.71.3.2/24", "fd71:3::2/64")
            if self.hop_mtu:
                # Only the hop's end is small: the server still advertises a
                # 1460-byte MSS, so the client's full-sized segments reach the
                # hop and come back as ICMP errors through the router.
                self.ip("hop", "link", "set", "h1", "mtu", str(self.hop_mtu))
        else:
            self._addr("server", "s0", "10.71.2.2/24", "fd71:2::2/64")

        # Both end hosts and the router keep full checksums; the router sees
        # frames as they are on the wire.
        offloads_off(self.names["client"], "c0", rx=False, gro=False)
        offloads_off(self.names["server"], "s0", rx=False, gro=False)
        for p in self.router_ports:
            offloads_off(self.names["router"], p)
        if self.middle == "l2":
            for p in ("f0", "f1"):
                offloads_off(self.names["fwd"], p)
            # The bridge has no addresses and must not speak: no IPv6 at all.
            self.sysctl("fwd", {"net.ipv6.conf.all.disable_ipv6": 1,
                                "net.ipv6.conf.default.disable_ipv6": 1,
                                "net.ipv6.conf.f0.disable_ipv6": 1,
                                "net.ipv6.conf.f1.disable_ipv6": 1})
        if self.middle == "hop":
            offloads_off(self.names["hop"], "h0", rx=False, gro=True)
            offloads_off(self.names["hop"], "h1", rx=False, gro=True)
            self.sysctl("hop", {"net.ipv4.ip_forward": 1, "net.ipv6.conf.all.forwarding": 1})

        for role in self.names:
            for link in re.findall(r"^\d+: (\w+)[@:]", self.ip(role, "-o", "link"), re.M):
                if link != "lo":
                    self.ip(role, "link", "set", link, "up")

        self.ip("client", "route", "add", "default", "via", self.ROUTER_C4)
        self.ip("client", "-6", "route", "add", "default", "via", self.ROUTER_C6)
        if self.middle == "hop":
            self.ip("hop", "route", "add", "default", "via", self.ROUTER_S4)
            self.ip("hop", "-6", "route", "add", "default", "via", self.ROUTER_S6)
            self.ip("server", "route", "add", "default", "via", "10.71.3.1")
            self.ip("server", "-6", "route", "add", "default", "via", "fd71:3::1")
            self.ip("router", "route", "add", "10.71.3.0/24", "via", "10.71.2.2")
            self.ip("router", "-6", "route", "add", "fd71:3::/64", "via", "fd71:2::2")
        else:
            self.ip("server", "route", "add", "default", "via", self.ROUTER_S4)
            self.ip("server", "-6", "route", "add", "default", "via", self.ROUTER_S6)
        self.static_neighbours()
        self.setup_router(router_sysctls or {})
        return self

    def setup_router(self, extra_sysctls):
        s = {
            "net.ipv4.ip_forward": 1,
            "net.ipv6.conf.all.forwarding": 1,
            "net.ipv4.conf.all.rp_filter": 0,
            "net.ipv4.conf.default.rp_filter": 0,
            "net.ipv4.conf.all.send_redirects": 0,
            "net.ipv4.conf.default.send_redirects": 0,
        }
        for p in self.router_ports:
            s["net.ipv4.conf.%s.rp_filter" % p] = 0
            s["net.ipv4.conf.%s.send_redirects" % p] = 0
        self.sysctl("router", s)
        # conntrack registers its hooks in a namespace when a rule there uses it;
        # the counters tell how many forwarded packets fell in each state.
        self.nft("router", """
table inet ctk {
    chain forward {
        type filter hook forward priority 0; policy accept;
        ct state invalid counter
        ct state new counter
        ct state established counter
        ct state related counter
        ct state untracked counter
    }
}
""")
        # nf_conntrack sysctls exist once conntrack is active in the namespace.
        base = {"net.netfilter.nf_conntrack_acct": 1, "net.netfilter.nf_conntrack_events": 1}
        base.update(extra_sysctls)
        self.sysctl("router", base)
        # One CPU does all receive processing of both ports, so the capture's
        # order is conntrack's order.
        mask = "%x" % (1 << self.rps_cpu)
        for p in self.router_ports:
            self.sh("router", "for q in /sys/class/net/%s/queues/rx-*; do echo %s > $q/rps_cpus;"
                              " done" % (p, mask))

    def static_neighbours(self):
        """Permanent ARP/ND entries on every link: no resolution delays the first
        packets of a scenario (a lost first neighbour solicitation costs a second)."""
        for a, b in self.neighbours:
            for (role, ifn), (prole, pifn) in ((a, b), (b, a)):
                mac = self.mac(prole, pifn)
                v4, v6 = self.addrs[(prole, pifn)]
                self.ip(role, "neigh", "replace", v4, "lladdr", mac, "dev", ifn, "nud",
                        "permanent")
                self.ip(role, "-6", "neigh", "replace", v6, "lladdr", mac, "dev", ifn, "nud",
                        "permanent")

    def router_sysctl_dump(self):
        out = run(["ip", "netns", "exec", self.names["router"], "sysctl", "-a"], check=False)
        return "".join(line + "\n" for line in out.splitlines()
                       if line.startswith("net.netfilter."))

    def nft_counters(self):
        out = run(["ip", "netns", "exec", self.names["router"], "nft", "list", "table", "inet",
                   "ctk"], check=False)
        res = {}
        for m in re.finditer(r"ct state (\w+) counter packets (\d+) bytes (\d+)", out):
            res[m.group(1)] = int(m.group(2))
        return res

    # -- teardown ----------------------------------------------------------
    def stop_procs(self, grace=2.0):
        for p in self.procs:
            if p.poll() is None:
                try:
                    p.terminate()
                except ProcessLookupError:
                    pass
        deadline = time.time() + grace
        for p in self.procs:
            left = max(0.05, deadline - time.time())
            try:
                p.wait(timeout=left)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []

    def teardown(self):
        self.stop_procs()
        for n in reversed(self.created):
            run(["ip", "netns", "del", n], check=False)
        self.created = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.teardown()
        return False
