#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""kd_nat: the kernel's nf_nat as the oracle of ctrack's NAT (issue 24).

Real traffic from the client and server namespaces' own stacks crosses the
router namespace, whose nftables nat chains translate it (snat to one address
and to a range with `persistent`, masquerade, dnat to one backend and to a
range with a port change, snat and dnat on one connection, `random` and
`fully-random`, IPv4 and IPv6, TCP including refused and RST-closed
connections, UDP, ICMP echo, ICMP errors for translated flows - port
unreachable, time exceeded, fragmentation needed / packet too big - and a
port clash of two clients with the same source port).  Recorded for each
scenario, in its directory:
  capture.pcap        what the router's conntrack saw (ingress of both ports,
                      in conntrack's order; ctcap, as kdiff does)
  egress-r0/r1.pcap   what the router sent out on each port (tcpdump -Q out)
  kernel-table.txt, kernel-events.txt   the table and ctnetlink events
  bindings.txt        each connection's tuples as the kernel chose them
  translated.pcap     the ingress translated by ctrack (nat_xlate_replay)
Checked, each a TAP line:
  - the scenario provoked what it is for (kernel self-check: the chosen
    tuples are in the ranges asked, clashes resolved, errors seen...);
  - every checksum of every frame the router sent is valid;
  - every forwarded frame carries the tuple of a kernel binding (egress
    consistent with the reply tuples);
  - ctrack: every ingress frame translated with the kernel's binding
    (ct_nat_translate, CT_NAT_XLATE_FORWARD) equals, byte for byte from the
    IP header on (TTL and checksums included; MACs aside), the frame the
    router sent, and every frame the router forwarded is so produced;
  - ctrack: the address of a range (find_best_ips_proto's jhash2,
    persistent or not) is the kernel's for every connection (nat_probe);
  - ctrack: the scenario's rules in ctrack's syntax (nat_rule.c) and its
    tuple choice (ct_nat_setup), connection by connection against the table
    the kernel had then (nat_choice_replay), give the kernel's reply tuple
    wherever no random number is drawn - the original tuple kept, a port
    kept, a mapping of the same source reused, the first port of a DNAT port
    range, an address of a range.  Where the kernel draws a random number (a clash's
    new port, `random`, `fully-random`) only properties are checked: in the
    range, unique among the live connections, and consistent with the
    replies the capture holds (the egress checks above);
  - ctrack read --nat-file (the scenario's rules) --write-translated on the
    ingress capture, as a user would run it (phase 2: the two-step first
    packet, the table's second slots and source index):
      * its table is the kernel's - reply tuples, states, flags, counters,
        timeouts - for >= 99.5% of the kernel's entries, with no entry the
        kernel does not have, and each connection's events are the
        kernel's (kd_compare, as kdiff compares without NAT).  Where the
        kernel drew a random number, --nat-random-replay bindings.txt has
        ctrack draw the one that leads to the kernel's port (the class, the
        probes and what is free are still ctrack's); without it the
        replies in the capture would not be the connection's;
      * every frame the router forwarded is one ctrack wrote, byte for byte
        from the IP header on (TTL / hop limit and checksums included),
        and ctrack wrote nothing the router did not send;
      * without the replay, every connection for which the kernel drew a
        random number got a port in the rule's range (or the kernel's port
        class), unique among the connections to that peer from that NAT
        address, and otherwise the kernel's tuples - the properties, since
        the numbers differ.

  kd_nat.py --ctcap CTCAP --nat-xlate NAT_XLATE_REPLAY --nat-probe NAT_PROBE
            --nat-replay NAT_CHOICE_REPLAY --ctrack CTRACK
            [--scenario NAME]... [--out DIR] [--list]
TAP "1..0 # SKIP" and exit status 0 when the kernel side cannot run here (not root, no
network namespaces, nft, conntrack or tcpdump); 1 when a check failed.
"""

import argparse
import ipaddress
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import kd_compare  # noqa: E402
import kd_ctline  # noqa: E402
import kd_netns  # noqa: E402
import kd_pcap  # noqa: E402
import kd_run  # noqa: E402
import kd_traffic  # noqa: E402
from kd_traffic import drain  # noqa: E402

SKIP = 77

# extra addresses: more clients (persistent, clash), a second server
CLIENTS4 = ["10.71.1.%d" % i for i in range(2, 10)]
CLIENTS6 = ["fd71:1::%x" % i for i in range(2, 10)]
POOL4, POOL6 = "10.71.9.0/24", "fd71:9::/64"
VIP4, VIP6 = "10.71.8.1", "fd71:8::1"

SCENARIOS = []


def scenario(name, desc, rules, ct_rules, middle=None, hop_mtu=None, v=(4,), draws=0):
    """rules: the router's nft nat rules (prerouting, postrouting); ct_rules:
    the same in ctrack's rule syntax (nat_rule.h), for nat_choice_replay;
    draws: how many connections may need a random number (None: any) - a
    choice the kernel makes without one must not draw one in ctrack."""
    def wrap(fn):
        SCENARIOS.append({"name": name, "desc": desc, "rules": rules, "ct_rules": ct_rules,
                          "middle": middle, "hop_mtu": hop_mtu, "run": fn, "expect": None,
                          "families": v, "draws": draws})
        return fn
    return wrap


def expect(name):
    def wrap(fn):
        for s in SCENARIOS:
            if s["name"] == name:
                s["expect"] = fn
        return fn
    return wrap


# -- topology additions ---------------------------------------------------------

def extend_topology(topo):
    """More client addresses, a second server address (without a hop), routes
    back to the NAT pools, and static neighbours for all of them."""
    cmac = topo.mac("client", "c0")
    for a4, a6 in zip(CLIENTS4[1:], CLIENTS6[1:]):
        topo.ip("client", "addr", "add", a4 + "/24", "dev", "c0")
        topo.ip("client", "-6", "addr", "add", a6 + "/64", "dev", "c0", "nodad")
        topo.ip("router", "neigh", "replace", a4, "lladdr", cmac, "dev", "r0", "nud", "permanent")
        topo.ip("router", "-6", "neigh", "replace", a6, "lladdr", cmac, "dev", "r0", "nud",
                "permanent")
    if topo.middle is None:
        smac = topo.mac("server", "s0")
        topo.ip("server", "addr", "add", "10.71.2.3/24", "dev", "s0")
        topo.ip("server", "-6", "addr", "add", "fd71:2::3/64", "dev", "s0", "nodad")
        topo.ip("router", "neigh", "replace", "10.71.2.3", "lladdr", smac, "dev", "r1", "nud",
                "permanent")
        topo.ip("router", "-6", "neigh", "replace", "fd71:2::3", "lladdr", smac, "dev", "r1",
                "nud", "permanent")
        topo.ip("server", "route", "add", POOL4, "via", topo.ROUTER_S4)
        topo.ip("server", "-6", "route", "add", POOL6, "via", topo.ROUTER_S6)
    else:
        # the hop routes everything back through the router already
        topo.sysctl("hop", {"net.ipv4.icmp_ratelimit": 0, "net.ipv6.icmp.ratelimit": 0})
    topo.sysctl("server", {"net.ipv4.icmp_ratelimit": 0, "net.ipv6.icmp.ratelimit": 0})


def nat_ruleset(pre, post):
    return ("table inet ctknat {\n"
            " chain pre { type nat hook prerouting priority -100; policy accept;\n%s }\n"
            " chain post { type nat hook postrouting priority 100; policy accept;\n%s }\n"
            "}\n" % ("".join("  %s\n" % r for r in pre), "".join("  %s\n" % r for r in post)))


# -- traffic helpers ------------------------------------------------------------

def tcp_talk(ctx, v, dst, port, src=None, request=b"GET\n", rst=False, timeout=5.0):
    """Connect (from @src), send, read the answer to EOF, close (RST with rst)."""
    s = ctx.sock("client", v)
    if src:
        s.bind((src, 0))
    s.settimeout(timeout)
    s.connect((dst, port))
    s.sendall(request)
    if rst:
        time.sleep(0.1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
        return 0
    n = drain(s)
    s.close()
    return n


def tcp_refused(ctx, v, dst, port):
    s = ctx.sock("client", v)
    s.settimeout(2.0)
    try:
        s.connect((dst, port))
    except (ConnectionRefusedError, socket.timeout, OSError):
        pass


def udp_talk(ctx, v, dst, port, src=None, sport=0, count=1, sock=None, wait=True):
    s = sock
    if s is None:
        s = ctx.sock("client", v, socket.SOCK_DGRAM)
        if src or sport:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((src or ("::" if v == 6 else "0.0.0.0"), sport))
        s.settimeout(0.5)
    got = 0
    for _ in range(count):
        s.sendto(b"q" * 40, (dst, port))
        if wait:
            try:
                s.recvfrom(65535)
                got += 1
            except (socket.timeout, OSError):
                pass
    return s, got


def ping_from(ctx, v, dst, count=2, ttl=None):
    s = ctx.sock("client", v, socket.SOCK_DGRAM,
                 socket.IPPROTO_ICMP if v == 4 else socket.IPPROTO_ICMPV6)
    if ttl:
        ctx.set_ttl(s, v, ttl)
    s.settimeout(0.5)
    got = 0
    for seq in range(1, count + 1):
        s.sendto(bytes([8 if v == 4 else 128, 0, 0, 0, 0, 0, 0, seq]) + b"p" * 56, (dst, 0))
        try:
            s.recvfrom(65535)
            got += 1
        except (socket.timeout, OSError):
            pass
    return got


def srv(ctx, v):
    return ctx.server_addr(v)


def server_addrs(ctx, v):
    """The server's addresses: its own, and the second one without a hop."""
    if ctx.topo.middle is None:
        return [srv(ctx, v), "10.71.2.3" if v == 4 else "fd71:2::3"]
    return [srv(ctx, v)]


def udp_echo(ctx, v, port):
    """UDP echo on each server address, each socket bound to its address: a
    socket bound to the wildcard answers from the address the kernel picks
    (the last one added, for IPv6), which the client's connection does not
    expect - a new connection from the router's point of view, and no route
    back to the NAT pool."""
    for a in server_addrs(ctx, v):
        s = ctx.sock("server", v, socket.SOCK_DGRAM)
        s.bind((a, port))
        s.settimeout(0.2)

        def loop(s=s):
            while not ctx.stop.is_set():
                try:
                    data, peer = s.recvfrom(65535)
                except socket.timeout:
                    continue
                except OSError:
                    return
                s.sendto(b"R" + data[:2000], peer)
        ctx.thread(loop)


# -- the scenarios ----------------------------------------------------------------

@scenario("snat4", "source NAT to one address: TCP exchanges (one closed with RST, one "
          "refused), UDP request/response, ICMP echo",
          ([], ['ip saddr 10.71.1.0/24 oifname "r1" snat ip to 10.71.9.1']),
          ["saddr 10.71.1.0/24 snat to 10.71.9.1"])
def snat4(ctx):
    ctx.tcp_sink_source(4, 8080, send_bytes=30000)
    udp_echo(ctx, 4, 5353)
    tcp_talk(ctx, 4, srv(ctx, 4), 8080)
    tcp_talk(ctx, 4, srv(ctx, 4), 8080, rst=True)
    tcp_refused(ctx, 4, srv(ctx, 4), 8090)
    for _ in range(3):
        udp_talk(ctx, 4, srv(ctx, 4), 5353)
    ping_from(ctx, 4, srv(ctx, 4), count=3)
    time.sleep(0.2)


def _in(addr, lo, hi):
    a = ipaddress.ip_address(addr)
    return ipaddress.ip_address(lo) <= a <= ipaddress.ip_address(hi)


@expect("snat4")
def _(res):
    p = []
    for b in res.bindings:
        if b.osrc.startswith("10.71.1.") and b.rdst != "10.71.9.1":
            p.append("not source-NATed to 10.71.9.1: %s" % b)
    if not any(b.l4 == 6 and b.refused for b in res.bindings):
        p.append("no refused TCP connection (NEW then DESTROY) seen")
    return p


@scenario("snat4_range_persistent", "source NAT to 10.71.9.10-10.71.9.20 persistent: UDP from "
          "eight client addresses to two server addresses (the address from jhash2 of the "
          "source only)",
          ([], ['ip saddr 10.71.1.0/24 oifname "r1" snat ip to 10.71.9.10-10.71.9.20 persistent']),
          ["saddr 10.71.1.0/24 snat to 10.71.9.10-10.71.9.20 persistent"])
def snat4_range_persistent(ctx):
    udp_echo(ctx, 4, 5353)
    for dst in (srv(ctx, 4), "10.71.2.3"):
        for c in CLIENTS4:
            udp_talk(ctx, 4, dst, 5353, src=c)
    time.sleep(0.2)


@expect("snat4_range_persistent")
def _(res):
    p = []
    seen = {}
    for b in res.bindings:
        if not b.osrc.startswith("10.71.1."):
            continue
        if not _in(b.rdst, "10.71.9.10", "10.71.9.20"):
            p.append("outside the range: %s" % b)
        seen.setdefault(b.osrc, set()).add(b.rdst)
    for c, addrs in seen.items():
        if len(addrs) != 1:
            p.append("persistent gave %s two addresses: %s" % (c, sorted(addrs)))
    if len(seen) < 8:
        p.append("expected 8 clients, saw %d" % len(seen))
    return p


@scenario("snat4_range", "source NAT to 10.71.9.10-10.71.9.20: UDP from eight client "
          "addresses to two servers (the address from jhash2 of source and destination), and "
          "one socket to both (its second connection reuses the first's mapping)",
          ([], ['ip saddr 10.71.1.0/24 oifname "r1" snat ip to 10.71.9.10-10.71.9.20']),
          ["saddr 10.71.1.0/24 snat to 10.71.9.10-10.71.9.20"])
def snat4_range(ctx):
    udp_echo(ctx, 4, 5353)
    for dst in (srv(ctx, 4), "10.71.2.3"):
        for c in CLIENTS4:
            udp_talk(ctx, 4, dst, 5353, src=c)
    s, _ = udp_talk(ctx, 4, srv(ctx, 4), 5353, src=CLIENTS4[3], sport=45454)
    udp_talk(ctx, 4, "10.71.2.3", 5353, sock=s)
    time.sleep(0.2)


@expect("snat4_range")
def _(res):
    p = []
    reuse = [b for b in res.bindings if b.osport == 45454]
    if len(reuse) != 2 or len({(b.rdst, b.rdport) for b in reuse}) != 1:
        p.append("one socket to two servers: expected one shared mapping, got %s" % reuse)
    for b in res.bindings:
        if b.osrc.startswith("10.71.1.") and not _in(b.rdst, "10.71.9.10", "10.71.9.20"):
            p.append("outside the range: %s" % b)
    return p


@scenario("masquerade4", "masquerade behind the router's server-side address: TCP, UDP, echo",
          ([], ['oifname "r1" masquerade']),
          ["masquerade to 10.71.2.1"])
def masquerade4(ctx):
    ctx.tcp_sink_source(4, 8080, send_bytes=5000)
    udp_echo(ctx, 4, 5353)
    tcp_talk(ctx, 4, srv(ctx, 4), 8080)
    udp_talk(ctx, 4, srv(ctx, 4), 5353, count=2)
    ping_from(ctx, 4, srv(ctx, 4), count=2)
    time.sleep(0.2)


@expect("masquerade4")
def _(res):
    return ["not masqueraded to 10.71.2.1: %s" % b for b in res.bindings
            if b.osrc.startswith("10.71.1.") and b.rdst != "10.71.2.1"]


@scenario("dnat4", "destination NAT of a virtual address to one backend with a port change "
          "(TCP 80 -> 8080, UDP 53 -> 5353)",
          (['ip daddr 10.71.8.1 tcp dport 80 dnat ip to 10.71.2.2:8080',
            'ip daddr 10.71.8.1 udp dport 53 dnat ip to 10.71.2.2:5353'], []),
          ["daddr 10.71.8.1 tcp dport 80 dnat to 10.71.2.2:8080",
           "daddr 10.71.8.1 udp dport 53 dnat to 10.71.2.2:5353"])
def dnat4(ctx):
    ctx.tcp_sink_source(4, 8080, send_bytes=20000)
    udp_echo(ctx, 4, 5353)
    tcp_talk(ctx, 4, VIP4, 80)
    tcp_talk(ctx, 4, VIP4, 80, src=CLIENTS4[2])
    udp_talk(ctx, 4, VIP4, 53, count=2)
    time.sleep(0.2)


@expect("dnat4")
def _(res):
    p = []
    vip = [b for b in res.bindings if b.odst == VIP4]
    if len(vip) < 3:
        p.append("expected 3 connections to %s, saw %d" % (VIP4, len(vip)))
    for b in vip:
        want = 8080 if b.l4 == 6 else 5353
        if b.rsrc != "10.71.2.2" or b.rsport != want:
            p.append("not destination-NATed to 10.71.2.2:%d: %s" % (want, b))
    return p


@scenario("dnat4_range", "destination NAT to two backends 10.71.2.2-10.71.2.3 and ports "
          "6000-6002: UDP flows from eight clients (address from jhash2, first port of the "
          "range)",
          (['ip daddr 10.71.8.1 udp dport 5000 dnat ip to 10.71.2.2-10.71.2.3:6000-6002'], []),
          ["daddr 10.71.8.1 udp dport 5000 dnat to 10.71.2.2-10.71.2.3:6000-6002"])
def dnat4_range(ctx):
    for port in (6000, 6001, 6002):
        udp_echo(ctx, 4, port)
    for c in CLIENTS4:
        udp_talk(ctx, 4, VIP4, 5000, src=c)
    time.sleep(0.2)


@expect("dnat4_range")
def _(res):
    p = []
    vip = [b for b in res.bindings if b.odst == VIP4]
    if len(vip) != 8:
        p.append("expected 8 flows, saw %d" % len(vip))
    for b in vip:
        if not _in(b.rsrc, "10.71.2.2", "10.71.2.3") or not 6000 <= b.rsport <= 6002:
            p.append("outside the backends: %s" % b)
    return p


@scenario("snat_dnat4", "destination and source NAT on one TCP connection, and UDP",
          (['ip daddr 10.71.8.1 tcp dport 80 dnat ip to 10.71.2.2:8080',
            'ip daddr 10.71.8.1 udp dport 53 dnat ip to 10.71.2.2:5353'],
           ['ip daddr 10.71.2.2 oifname "r1" snat ip to 10.71.9.1']),
          ["daddr 10.71.8.1 tcp dport 80 dnat to 10.71.2.2:8080",
           "daddr 10.71.8.1 udp dport 53 dnat to 10.71.2.2:5353",
           "daddr 10.71.2.2 snat to 10.71.9.1"])
def snat_dnat4(ctx):
    ctx.tcp_sink_source(4, 8080, send_bytes=10000)
    udp_echo(ctx, 4, 5353)
    tcp_talk(ctx, 4, VIP4, 80)
    udp_talk(ctx, 4, VIP4, 53, count=2)
    time.sleep(0.2)


@expect("snat_dnat4")
def _(res):
    return ["not both translated: %s" % b for b in res.bindings
            if b.odst == VIP4 and (b.rsrc != "10.71.2.2" or b.rdst != "10.71.9.1")]


@scenario("random4", "source NAT with `random` (UDP) and `fully-random` (TCP) into port ranges",
          ([], ['udp dport 5353 oifname "r1" snat ip to 10.71.9.1:20000-20099 random',
                'tcp dport 8080 oifname "r1" snat ip to 10.71.9.2:30000-30099 fully-random']),
          ["udp dport 5353 snat to 10.71.9.1:20000-20099 random",
           "tcp dport 8080 snat to 10.71.9.2:30000-30099 fully-random"], draws=None)
def random4(ctx):
    udp_echo(ctx, 4, 5353)
    ctx.tcp_sink_source(4, 8080, send_bytes=2000)
    for c in CLIENTS4:
        udp_talk(ctx, 4, srv(ctx, 4), 5353, src=c)
    for c in CLIENTS4[:4]:
        tcp_talk(ctx, 4, srv(ctx, 4), 8080, src=c)
    time.sleep(0.2)


@expect("random4")
def _(res):
    p = []
    for l4, addr, lo in ((17, "10.71.9.1", 20000), (6, "10.71.9.2", 30000)):
        bs = [b for b in res.bindings if b.l4 == l4 and b.odport in (5353, 8080)]
        if len(bs) < 4:
            p.append("expected >= 4 connections of protocol %d, saw %d" % (l4, len(bs)))
        for b in bs:
            if b.rdst != addr or not lo <= b.rdport <= lo + 99:
                p.append("outside the range: %s" % b)
        if len({b.rdport for b in bs}) != len(bs):
            p.append("random ports not unique: %s" % sorted(b.rdport for b in bs))
    return p


@scenario("clash4", "a port clash: two clients with source port 40000 to one server through "
          "one address (the second gets a new port)",
          ([], ['ip saddr 10.71.1.0/24 oifname "r1" snat ip to 10.71.9.1']),
          ["saddr 10.71.1.0/24 snat to 10.71.9.1"], draws=2)
def clash4(ctx):
    udp_echo(ctx, 4, 5353)
    ctx.tcp_sink_source(4, 8080, send_bytes=1000)
    udp_talk(ctx, 4, srv(ctx, 4), 5353, src=CLIENTS4[0], sport=40000)
    udp_talk(ctx, 4, srv(ctx, 4), 5353, src=CLIENTS4[1], sport=40000)
    for c in CLIENTS4[:2]:
        s = ctx.sock("client", 4)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((c, 40001))
        s.settimeout(5)
        s.connect((srv(ctx, 4), 8080))
        s.sendall(b"x\n")
        drain(s)
        s.close()
    time.sleep(0.2)


@expect("clash4")
def _(res):
    p = []
    for l4, port in ((17, 40000), (6, 40001)):
        bs = sorted((b for b in res.bindings if b.l4 == l4 and b.osport == port),
                    key=lambda b: b.ts)
        if len(bs) != 2:
            p.append("expected two clashing connections of protocol %d, saw %d" % (l4, len(bs)))
            continue
        if bs[0].rdport != port:
            p.append("the first should keep its port: %s" % bs[0])
        if bs[1].rdport == port or not 1024 <= bs[1].rdport <= 65535:
            p.append("the second should get a new port in 1024-65535: %s" % bs[1])
    return p


@scenario("nat6", "IPv6: source NAT to one address (TCP, refused TCP, UDP, echo), destination "
          "NAT of a virtual address with a port change, masquerade of UDP to the second server",
          (['ip6 daddr fd71:8::1 tcp dport 80 dnat ip6 to [fd71:2::2]:8080'],
           ['ip6 daddr fd71:2::3 oifname "r1" masquerade',
            'ip6 saddr fd71:1::/64 oifname "r1" snat ip6 to fd71:9::1']),
          ["ip6 daddr fd71:8::1 tcp dport 80 dnat to [fd71:2::2]:8080",
           "ip6 daddr fd71:2::3 masquerade to fd71:2::1",
           "ip6 saddr fd71:1::/64 snat to fd71:9::1"], v=(6,))
def nat6(ctx):
    ctx.tcp_sink_source(6, 8080, send_bytes=20000)
    udp_echo(ctx, 6, 5353)
    tcp_talk(ctx, 6, srv(ctx, 6), 8080)
    tcp_refused(ctx, 6, srv(ctx, 6), 8090)
    udp_talk(ctx, 6, srv(ctx, 6), 5353, count=2)
    ping_from(ctx, 6, srv(ctx, 6), count=2)
    tcp_talk(ctx, 6, VIP6, 80)
    udp_talk(ctx, 6, "fd71:2::3", 5353, count=2)
    time.sleep(0.2)


@expect("nat6")
def _(res):
    p = []
    for b in res.bindings:
        if b.l3 != 10 or not b.osrc.startswith("fd71:1::"):
            continue
        if b.odst == VIP6:
            if b.rsrc != "fd71:2::2" or b.rsport != 8080 or b.rdst != "fd71:9::1":
                p.append("dnat+snat6 wrong: %s" % b)
        elif b.odst == "fd71:2::3":
            if b.rdst != "fd71:2::1":
                p.append("not masqueraded to fd71:2::1: %s" % b)
        elif b.rdst != "fd71:9::1":
            p.append("not source-NATed to fd71:9::1: %s" % b)
    return p


@scenario("nat6_range", "IPv6 source NAT to fd71:9::10-fd71:9::20, persistent for UDP and not "
          "for TCP, from eight client addresses",
          ([], ['udp dport 5353 ip6 saddr fd71:1::/64 oifname "r1" snat ip6 to '
                'fd71:9::10-fd71:9::20 persistent',
                'tcp dport 8080 ip6 saddr fd71:1::/64 oifname "r1" snat ip6 to '
                'fd71:9::10-fd71:9::20']),
          ["udp dport 5353 ip6 saddr fd71:1::/64 snat to fd71:9::10-fd71:9::20 persistent",
           "tcp dport 8080 ip6 saddr fd71:1::/64 snat to fd71:9::10-fd71:9::20"], v=(6,))
def nat6_range(ctx):
    udp_echo(ctx, 6, 5353)
    ctx.tcp_sink_source(6, 8080, send_bytes=100)
    for c in CLIENTS6:
        udp_talk(ctx, 6, srv(ctx, 6), 5353, src=c)
        tcp_talk(ctx, 6, srv(ctx, 6), 8080, src=c)
    time.sleep(0.2)


@expect("nat6_range")
def _(res):
    return ["outside the range: %s" % b for b in res.bindings
            if b.osrc.startswith("fd71:1::") and not _in(b.rdst, "fd71:9::10", "fd71:9::20")]


@scenario("icmp_errors", "ICMP errors about source-NATed flows crossing back through the "
          "router: port unreachable (UDP to a closed port), time exceeded at the next hop "
          "(UDP and echo with TTL 2), fragmentation needed / packet too big (TCP uploads into "
          "a 1280-byte link), IPv4 and IPv6",
          ([], ['ip saddr 10.71.1.0/24 oifname "r1" snat ip to 10.71.9.1',
                'ip6 saddr fd71:1::/64 oifname "r1" snat ip6 to fd71:9::1']),
          ["ip saddr 10.71.1.0/24 snat to 10.71.9.1", "ip6 saddr fd71:1::/64 snat to fd71:9::1"],
          middle="hop", hop_mtu=1280, v=(4, 6))
def icmp_errors(ctx):
    for v in (4, 6):
        ctx.tcp_sink_source(v, 8086, send_bytes=0)
    for v in (4, 6):
        udp_talk(ctx, v, srv(ctx, v), 9, count=1)                    # port unreachable
        c = ctx.udp_client(v, ttl=2)
        ctx.udp_ask(c, v, 6002, wait_reply=True)                     # time exceeded
        ping_from(ctx, v, srv(ctx, v), count=1, ttl=2)               # time exceeded (echo)
        c = ctx.connect(v, 8086, timeout=15)                         # too big
        c.sendall(b"x" * 60000 + b"\n")
        c.shutdown(socket.SHUT_WR)
        drain(c)
        c.close()
        time.sleep(0.1)
    time.sleep(0.3)


@expect("icmp_errors")
def _(res):
    p = []
    want = {(4, 3, 3): "port unreachable", (4, 11, 0): "time exceeded",
            (4, 3, 4): "fragmentation needed", (6, 1, 4): "port unreachable (v6)",
            (6, 3, 0): "time exceeded (v6)", (6, 2, 0): "packet too big"}
    seen = set()
    for pk in res.egress:
        info = kd_pcap.parse_ip(pk[1])
        if info.ok and info.proto in (1, 58) and info.inner is not None:
            seen.add((info.v, info.icmp_type, info.icmp_code))
            if str(info.dst) not in CLIENTS4 + CLIENTS6:
                p.append("an ICMP error left the router for %s, not the client" % info.dst)
            if str(info.inner.src) not in CLIENTS4 + CLIENTS6:
                p.append("an ICMP error's quoted packet still from %s" % info.inner.src)
    for k, what in want.items():
        if k not in seen:
            p.append("no %s crossed the router" % what)
    return p


def by_name(name):
    for s in SCENARIOS:
        if s["name"] == name:
            return s
    raise KeyError(name)


# -- what the kernel chose ------------------------------------------------------

class Binding:
    """One connection's two tuples as the kernel's events (or table) gave them."""
    __slots__ = ("l3", "l4", "osrc", "odst", "osport", "odport", "rsrc", "rdst", "rsport",
                 "rdport", "ts", "refused", "orig", "reply")

    def __str__(self):
        return "%s %d %s:%d -> %s:%d | reply %s:%d -> %s:%d" % (
            "ipv4" if self.l3 == 2 else "ipv6", self.l4, self.osrc, self.osport, self.odst,
            self.odport, self.rsrc, self.rsport, self.rdst, self.rdport)

    __repr__ = __str__


def _ports(tup, l4):
    d = dict(tup)
    if l4 in (1, 58):
        return int(d.get("id", 0)), (int(d.get("type", 0)) << 8) | int(d.get("code", 0))
    return int(d.get("sport", 0)), int(d.get("dport", 0))


def bindings_of(res):
    """Every connection the kernel made, first seen first (NEW events, then table
    entries whose NEW was not read)."""
    out, seen = [], {}
    destroyed = set()
    for r in res.events:
        if r["event"] == "DESTROY":
            destroyed.add((r["l3num"], r["protonum"], r["orig"], r["reply"]))
    for r in list(res.events) + list(res.table):
        if r.get("event") not in (None, "NEW"):
            continue
        k = (r["l3num"], r["protonum"], r["orig"], r["reply"])
        if k in seen:
            continue
        b = Binding()
        o, rp = dict(r["orig"]), dict(r["reply"])
        b.l3, b.l4 = r["l3num"], r["protonum"]
        b.osrc, b.odst, b.rsrc, b.rdst = o["src"], o["dst"], rp["src"], rp["dst"]
        b.osport, b.odport = _ports(r["orig"], b.l4)
        b.rsport, b.rdport = _ports(r["reply"], b.l4)
        b.ts = r["ts"] if r["ts"] is not None else 1e18
        b.orig, b.reply = r["orig"], r["reply"]
        # refused: NEW then DESTROY with the reply never listed
        b.refused = k in destroyed and b.l4 == 6 and r.get("event") == "NEW" and \
            not any(t["orig"] == r["orig"] for t in res.table)
        seen[k] = b
        out.append(b)
    out.sort(key=lambda b: b.ts)
    return out


def write_bindings(path, bindings):
    with open(path, "w") as f:
        f.write("# L3 L4 OSRC ODST OSPORT ODPORT RSRC RDST RSPORT RDPORT\n")
        for b in bindings:
            f.write("%d %d %s %s %d %d %s %s %d %d\n" % (b.l3, b.l4, b.osrc, b.odst, b.osport,
                                                          b.odport, b.rsrc, b.rdst, b.rsport,
                                                          b.rdport))


# -- the run ----------------------------------------------------------------------

class Egress:
    """tcpdump -Q out on one router port, in immediate mode: without it libpcap
    hands frames over a ring block at a time, and the block being filled when
    tcpdump is stopped - the scenario's last frames, the marker - is lost."""

    def __init__(self, topo, port, path):
        self.path = path
        self.p = topo.start("router", ["tcpdump", "-i", port, "-Q", "out", "-w", path, "-U",
                                       "-s", "0", "-n", "-Z", "root", "--immediate-mode",
                                       "--time-stamp-precision", "nano"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        import select
        end = time.time() + 10
        buf = ""
        while time.time() < end:
            r, _, _ = select.select([self.p.stderr], [], [], 0.1)
            if r:
                line = self.p.stderr.readline()
                buf += line
                if "listening on" in line:
                    return
                if not line:
                    break
            if self.p.poll() is not None:
                break
        raise kd_netns.NetnsError("tcpdump on %s did not start: %s" % (port, buf.strip()))

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
        try:
            self.p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


class NatResult(kd_run.KernelResult):
    def __init__(self, name, outdir):
        super().__init__(name, outdir)
        self.egress = []       # (ts, ip bytes, frame)
        self.bindings = []
        self.ingress = []


def run_scenario(sc, outdir, ctcap):
    os.makedirs(outdir, exist_ok=True)
    res = NatResult(sc["name"], outdir)
    topo = kd_netns.Topology(middle=sc["middle"], hop_mtu=sc["hop_mtu"])
    ctx = rec = None
    eg = []
    try:
        topo.build()
        extend_topology(topo)
        topo.nft("router", nat_ruleset(*sc["rules"]))
        ctx = kd_traffic.Ctx(topo, outdir)
        ctx.marker_listener()
        for port in topo.router_ports:
            eg.append(Egress(topo, port, os.path.join(outdir, "egress-%s.pcap" % port)))
        rec = kd_run.Recorder(topo, res, ctcap)
        time.sleep(0.2)
        try:
            sc["run"](ctx)
        except (AssertionError, OSError) as e:
            res.problems.append("traffic: %r" % e)
        ctx.marker()
        time.sleep(0.3)
        rec.dump()
        res.notes += ctx.notes
    except Exception as e:  # recorded; the namespaces still go
        res.problems.append("run failed: %r" % e)
    finally:
        if rec:
            rec.stop()
        for e in eg:
            e.stop()
        if ctx:
            ctx.close()
        topo.teardown()
    if os.path.exists(res.table_file):
        res.ingress = kd_run.load_kernel_side(res)
        res.bindings = bindings_of(res)
    for e in eg:
        if os.path.exists(e.path):
            for pk in kd_pcap.read_capture(e.path):
                et, ip = kd_pcap.l3_of(pk)
                if ip is not None:
                    res.egress.append((pk.ts, ip, pk.data))
    res.save()
    return res


def ip_len(ip):
    """The IP datagram's own length (frames may carry Ethernet padding)."""
    if ip[0] >> 4 == 4:
        return struct.unpack(">H", ip[2:4])[0]
    return 40 + struct.unpack(">H", ip[4:6])[0]


def tuple_key(info):
    """What a packet's tuple is, as comparable text."""
    if info.proto in (1, 58):
        return (info.v, info.proto, str(info.src), str(info.dst), info.icmp_id)
    return (info.v, info.proto, str(info.src), str(info.dst), info.sport, info.dport)


def check_egress_checksums(res):
    bad = []
    for ts, ip, _ in res.egress:
        info = kd_pcap.parse_ip(ip)
        if not info.ok or info.frag_first or info.frag_later:
            continue
        body = bytes(ip[:ip_len(ip)])
        if not kd_pcap.checksum_ok(body):
            bad.append("%.6f %s -> %s proto %s" % (ts, info.src, info.dst, info.proto))
    return bad


def binding_forms(res):
    """tuple key -> binding for the translated forms the router sends: the
    inverse of the reply (original direction) and of the original (reply)."""
    forms = {}
    for b in res.bindings:
        fam = 4 if b.l3 == 2 else 6
        if b.l4 in (1, 58):
            forms[(fam, b.l4, b.rdst, b.rsrc, b.rsport)] = b
            forms[(fam, b.l4, b.odst, b.osrc, b.osport)] = b
        else:
            forms[(fam, b.l4, b.rdst, b.rsrc, b.rdport, b.rsport)] = b
            forms[(fam, b.l4, b.odst, b.osrc, b.odport, b.osport)] = b
    return forms


def check_egress_consistency(res):
    """Every TCP/UDP/ICMP frame the router sent carries a binding's translated
    tuple; errors' quoted packets too (inverted)."""
    forms = binding_forms(res)
    bad, n = [], 0
    for ts, ip, _ in res.egress:
        info = kd_pcap.parse_ip(ip)
        if not info.ok or info.proto not in (6, 17, 1, 58) or info.frag_later:
            continue
        if info.proto == 58 and info.icmp_type is not None and 130 <= info.icmp_type <= 143:
            continue  # MLD / neighbour discovery: never tracked
        if info.inner is not None:
            inn = info.inner
            k = tuple_key(inn)
            # the quoted packet went the other way: its key is a sent form
            # read backwards
            if inn.proto in (1, 58):
                k = (inn.v, inn.proto, str(inn.dst), str(inn.src), inn.icmp_id)
            else:
                k = (inn.v, inn.proto, str(inn.dst), str(inn.src), inn.dport, inn.sport)
        else:
            k = tuple_key(info)
        n += 1
        if k not in forms:
            bad.append("%.6f %s" % (ts, k))
    return n, bad


def run_translation(res, xlate):
    bpath = os.path.join(res.dir, "bindings.txt")
    out = os.path.join(res.dir, "translated.pcap")
    write_bindings(bpath, res.bindings)
    p = subprocess.run([xlate, bpath, res.capture, out], capture_output=True, text=True,
                       timeout=120)
    if p.returncode != 0:
        return None, ["nat_xlate_replay failed: %s" % p.stderr.strip()]
    status = []
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0].isdigit():
            status.append((parts[1], parts[2]))
    return (out, status, p.stdout.splitlines()[-1]), []


def compare_translation(res, xlate):
    """ctrack's translation of every ingress frame against the router's egress."""
    got, errs = run_translation(res, xlate)
    if errs:
        return errs, []
    out, status, summary = got
    frames = kd_pcap.read_capture(out)
    egress = {}
    for i, (ts, ip, _) in enumerate(res.egress):
        egress.setdefault(bytes(ip[:ip_len(ip)]), []).append(i)
    used = set()
    problems, notes = [], [summary]
    matched = unbound = dropped = 0
    for i, pk in enumerate(frames):
        st = status[i] if i < len(status) else ("?", "?")
        et, ip = kd_pcap.l3_of(pk)
        if ip is None:
            continue
        if st[0] == "unbound":
            unbound += 1
            continue
        if st[1] != "ok":
            dropped += 1
            problems.append("frame %d (%s): ctrack refused it: %s" % (i, st[0], st[1]))
            continue
        body = bytes(ip[:ip_len(ip)])
        cands = [j for j in egress.get(body, []) if j not in used]
        if cands:
            used.add(cands[0])
            matched += 1
            continue
        # not sent as ctrack wrote it: the closest frame of that length
        best, bestd = None, None
        for j, (ts, eip, _) in enumerate(res.egress):
            eb = bytes(eip[:ip_len(eip)])
            if len(eb) != len(body) or j in used:
                continue
            d = [k for k in range(len(body)) if body[k] != eb[k]]
            if bestd is None or len(d) < len(bestd):
                best, bestd = j, d
                if len(d) <= 2:
                    break
        info = kd_pcap.parse_ip(body)
        problems.append("frame %d (%s %s -> %s proto %s) not sent as translated; closest "
                        "egress frame %s differs at IP bytes %s"
                        % (i, st[0], info.src, info.dst, info.proto, best,
                           bestd[:12] if bestd is not None else "-"))
    # what the router forwarded that ctrack did not produce
    forms = binding_forms(res)
    for j, (ts, ip, _) in enumerate(res.egress):
        if j in used:
            continue
        info = kd_pcap.parse_ip(ip)
        if not info.ok or info.proto not in (6, 17, 1, 58):
            continue
        k = tuple_key(info)
        if info.inner is not None or k in forms:
            problems.append("egress frame %d (%s -> %s proto %s) forwarded by the kernel, "
                            "not produced by ctrack" % (j, info.src, info.dst, info.proto))
    notes.append("%d frames translated and sent byte for byte so, %d without a binding "
                 "(not IP, ND, the marker), %d refused" % (matched, unbound, dropped))
    return problems, notes, matched


def check_replay(res, replay, sc):
    """ctrack's rules and tuple choice, connection by connection against the
    table the kernel had: the kernel's reply tuple wherever the choice is
    deterministic; where ctrack drew a random number (the kernel did too),
    properties only - in range, unique, consistent (the self-check and the
    egress checks)."""
    rpath = os.path.join(res.dir, "ctrack-rules.nat")
    epath = os.path.join(res.dir, "events-replay.txt")
    with open(rpath, "w") as f:
        f.write("".join(r + "\n" for r in sc["ct_rules"]))
    with open(epath, "w") as f:
        for r in res.events:
            if r["event"] not in ("NEW", "DESTROY"):
                continue
            o, rp = dict(r["orig"]), dict(r["reply"])
            osp, odp = _ports(r["orig"], r["protonum"])
            rsp, rdp = _ports(r["reply"], r["protonum"])
            f.write("%s %d %d %s %s %d %d %s %s %d %d\n" % (
                r["event"], r["l3num"], r["protonum"], o["src"], o["dst"], osp, odp,
                rp["src"], rp["dst"], rsp, rdp))
    p = subprocess.run([replay, rpath, epath], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return ["nat_choice_replay failed: %s" % p.stderr.strip()], []
    lines = p.stdout.splitlines()
    bad = ["kernel %s, ctrack %s" % (l.split()[1], l.split()[2])
           for l in lines if l.startswith("differ")]
    rnd = [l for l in lines if l.startswith("random")]
    if sc["draws"] is not None and len(rnd) != sc["draws"]:
        bad.append("%d connections drew a random number, the scenario makes %d: %s"
                   % (len(rnd), sc["draws"], rnd[:3]))
    return bad, lines[-1:]


def random_connections(res, replay, sc):
    """(l3, l4, orig tuple) of the connections for which nat_choice_replay draws a
    random number (the kernel drew one for them too): its output has a line per
    NEW line of events-replay.txt (check_replay writes both files)."""
    rpath = os.path.join(res.dir, "ctrack-rules.nat")
    epath = os.path.join(res.dir, "events-replay.txt")
    if not (os.path.exists(rpath) and os.path.exists(epath)):
        return []
    p = subprocess.run([replay, rpath, epath], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        return []
    verdicts = [l.split()[0] for l in p.stdout.splitlines()
                if l.split()[:1] in (["same"], ["random"], ["differ"])]
    with open(epath) as f:
        news = [l.split() for l in f if l.startswith("NEW ")]
    by_key = {(b.l3, b.l4, b.osrc, b.odst, b.osport, b.odport): b for b in res.bindings}
    out = []
    for v, w in zip(verdicts, news):
        b = by_key.get((int(w[1]), int(w[2]), w[3], w[4], int(w[5]), int(w[6])))
        if v == "random" and b is not None:
            out.append((b.l3, b.l4, b.orig))
    return out


def check_choices(res, probe, sc):
    """ctrack's deterministic choices against the kernel's: range addresses
    (jhash2), first ports, kept ports, reused mappings."""
    ranges = []
    for rule in sc["rules"][0] + sc["rules"][1]:
        if " to " not in rule or "masquerade" in rule:
            continue
        manip = "dst" if "dnat" in rule else "src"
        target = rule.split(" to ", 1)[1].split()[0]
        persistent = "persistent" in rule
        rnd = "random" in rule
        if target.startswith("["):
            lo = target[1:target.index("]")]
            rest = target[target.index("]") + 1:]
            hi = lo
            if rest.startswith("-["):
                hi = rest[2:rest.index("]")]
        else:
            addrpart = target.split(":")[0] if target.count(":") <= 1 else target
            lo, _, hi = addrpart.partition("-")
            hi = hi or lo
        ranges.append((manip, lo, hi, persistent, rnd, rule))
    lines, cases = [], []
    for b in res.bindings:
        for manip, lo, hi, persistent, rnd, rule in ranges:
            if lo == hi:
                continue
            fam = 4 if b.l3 == 2 else 6
            if ipaddress.ip_address(lo).version != fam:
                continue
            got = b.rdst if manip == "src" else b.rsrc
            # only connections this rule translated (not the marker, not
            # a flow the other rule took)
            if got == (b.osrc if manip == "src" else b.odst) or not _in(got, lo, hi):
                continue
            if "persistent" in rule and b.l4 == 6 and "udp" in rule:
                continue
            if ("udp" in rule and b.l4 != 17) or ("tcp" in rule and b.l4 != 6):
                continue

            def a16(a):
                x = ipaddress.ip_address(a).packed
                return (x + b"\0" * 12) if len(x) == 4 else x
            # the tuple the manipulation saw: SRC after any DNAT
            src = b.osrc
            dst = b.rsrc if manip == "src" else b.odst
            lines.append("B %d %d %d 0 %s %s %s %s" % (fam, 0 if manip == "src" else 1,
                                                      int(persistent), a16(src).hex(),
                                                      a16(dst).hex(), a16(lo).hex(),
                                                      a16(hi).hex()))
            cases.append((b, manip, got))
    problems, notes = [], []
    if lines:
        p = subprocess.run([probe], input="\n".join(lines) + "\n", capture_output=True,
                           text=True, timeout=60)
        answers = p.stdout.split()
        reused = 0
        for (b, manip, got), ans in zip(cases, answers):
            want = str(ipaddress.ip_address(bytes.fromhex(ans)[:4] if b.l3 == 2
                                            else bytes.fromhex(ans)))
            if want != got:
                # find_appropriate_src: an earlier live mapping of this source
                earlier = [e for e in res.bindings if e.ts < b.ts and e.l4 == b.l4 and
                           e.osrc == b.osrc and e.osport == b.osport and
                           (e.rdst, e.rdport) == (b.rdst, b.rdport)]
                if manip == "src" and earlier:
                    reused += 1
                    continue
                problems.append("address choice: kernel %s, ctrack %s for %s" % (got, want, b))
        notes.append("range addresses: %d connections, ctrack's jhash2 choice equals the "
                     "kernel's for all but %d that reused an existing source mapping "
                     "(find_appropriate_src)" % (len(cases), reused))
    # the first port of a destination-NAT port range (off = 0)
    for rule in sc["rules"][0]:
        if "dnat" in rule and ":" in rule.split(" to ", 1)[1] and "random" not in rule:
            target = rule.split(" to ", 1)[1].split()[0]
            ports = target.rsplit(":", 1)[1]
            first = int(ports.split("-")[0])
            if "-" in ports:
                for b in res.bindings:
                    if b.odst in (VIP4, VIP6) and b.rsport != first and b.l4 == 17:
                        problems.append("destination port: kernel %d, ctrack's first "
                                        "candidate %d for %s" % (b.rsport, first, b))
    return problems, notes


# -- TAP -------------------------------------------------------------------------------

# -- ctrack read --nat on the ingress (phase 2) ------------------------------------

# >= this share of the kernel's entries must be exact, and of its connections'
# event sequences (the figure)
NAT_TABLE_EXACT = 0.995


def run_ctrack_nat(res, ctrack, sc, replay, tag):
    """`ctrack read --nat-file` on the ingress, as kdiff runs it (--router, the
    router's sysctls), with --write-translated; returns (table, events,
    written path, error)."""
    rules = os.path.join(res.dir, "ctrack-rules.nat")
    with open(rules, "w") as f:
        f.write("".join(r + "\n" for r in sc["ct_rules"]))
    written = os.path.join(res.dir, "ctrack-written-%s.pcap" % tag)
    cmd = [ctrack, "read", "--no-progress", "--format", "extended", "--events", "--router",
           "--sysctl-file", res.sysctls, "--nat-file", rules, "--write-translated", written]
    if replay:
        bpath = os.path.join(res.dir, "bindings.txt")
        write_bindings(bpath, res.bindings)
        cmd += ["--nat-random-replay", bpath]
    cmd.append(res.capture)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return [], [], None, "ctrack could not run: %r" % e
    with open(os.path.join(res.dir, "ctrack-nat-%s.txt" % tag), "w") as f:
        f.write(p.stdout)
    if p.returncode != 0:
        return [], [], None, "ctrack exit %d: %s" % (p.returncode, p.stderr.strip()[-400:])
    recs, _ = kd_ctline.parse_lines(p.stdout)
    return ([r for r in recs if r["event"] is None], [r for r in recs if r["event"] is not None],
            written, None)


def check_nat_table(res, table, events):
    d = kd_compare.compare(res, table, events)
    n = d.kernel_entries
    good = n > 0 and d.exact >= NAT_TABLE_EXACT * n and d.extra == 0 and \
        d.event_matches >= NAT_TABLE_EXACT * d.event_conns
    return good, [d.figures()] + ([d.kinds_text()] if d.kinds else []) + d.lines[:8]


def router_origin(info):
    """A frame the router made itself (MLD reports, its own neighbour
    discovery): never a packet it forwarded."""
    return info.v == 6 and info.src.is_link_local and info.dst.is_multicast


def check_nat_frames(res, written):
    import collections
    got = collections.Counter()
    for pk in kd_pcap.read_capture(written):
        _, ip = kd_pcap.l3_of(pk)
        if ip is not None:
            got[bytes(ip)] += 1
    wrote = sum(got.values())
    missing, fwd = [], 0
    for ts, ip, _ in res.egress:
        body = bytes(ip[:ip_len(ip)])
        info = kd_pcap.parse_ip(body)
        if info.ok and router_origin(info):
            continue
        fwd += 1
        if got[body] > 0:
            got[body] -= 1
        else:
            missing.append("%.6f %s -> %s proto %s: forwarded, not written by ctrack "
                           "(%s...)" % (ts, info.src, info.dst, info.proto, body[:28].hex()))
    extra = []
    for body, k in got.items():
        if k > 0:
            info = kd_pcap.parse_ip(body)
            extra.append("written %d time(s), never sent by the router: %s -> %s proto %s"
                         % (k, info.src, info.dst, info.proto))
    return (fwd > 0 and not missing and not extra,
            missing[:8] + extra[:8] + ["%d forwarded frames, %d written, %d missing, %d extra"
                                       % (fwd, wrote, len(missing), len(extra))])


def _rule_ports(sc, l4):
    """The port range of the scenario's snat rule for protocol @l4, if any."""
    import re
    for r in sc["ct_rules"]:
        if "snat" not in r:
            continue
        if ("tcp" in r.split() and l4 != 6) or ("udp" in r.split() and l4 != 17):
            continue
        m = re.search(r":(\d+)-(\d+)", r.split("snat", 1)[1])
        if m:
            return int(m.group(1)), int(m.group(2))
    return None


def check_random_properties(res, table, sc, random_origs):
    """The connections for which the kernel drew a random number, as ctrack
    bound them with numbers of its own."""
    if not random_origs:
        return True, ["no connection of this scenario draws a random number"]
    by_orig = {}
    for c in table:
        by_orig.setdefault((c["l3num"], c["protonum"], c["orig"]), c)
    kernel = {(b.l3, b.l4, b.orig): b for b in res.bindings}
    bad, seen, n = [], {}, 0
    for k in random_origs:
        b = kernel.get(k)
        c = by_orig.get(k)
        if b is None or c is None:
            if c is None and b is not None and b.refused:
                continue
            bad.append("no ctrack entry for %s" % (k,))
            continue
        n += 1
        rp = dict(c["reply"])
        sport, dport = _ports(c["reply"], b.l4)
        nat_port = sport if b.l4 in (1, 58) else dport
        if rp["src"] != b.rsrc or rp["dst"] != b.rdst:
            bad.append("addresses not the kernel's: %s vs %s" % (c["line"], b))
        if b.l4 not in (1, 58) and sport != b.rsport:
            bad.append("peer port not the kernel's: %s" % c["line"])
        rng = _rule_ports(sc, b.l4)
        if rng is None:
            lo, hi = (1, 511) if b.osport < 512 else (600, 1023) if b.osport < 1024 \
                else (1024, 65535)
        else:
            lo, hi = rng
        if not lo <= nat_port <= hi:
            bad.append("port %d outside %d-%d: %s" % (nat_port, lo, hi, c["line"]))
        key = (b.l4, rp["dst"], rp["src"], sport if b.l4 not in (1, 58) else 0, nat_port)
        if key in seen:
            bad.append("port %d given twice toward one peer: %s and %s"
                       % (nat_port, seen[key], c["line"]))
        seen[key] = c["line"]
    return not bad, bad[:8] + ["%d connections with random numbers of ctrack's own: in "
                               "range, unique, the kernel's otherwise" % n]


class Tap:
    def __init__(self):
        self.lines, self.failed = [], 0

    def result(self, ok, name, details=()):
        self.lines.append((ok, name, list(details)))
        self.failed += 0 if ok else 1
        print("%s %d - %s" % ("ok" if ok else "not ok", len(self.lines), name))
        for d in details:
            for sub in str(d).splitlines():
                print("#   " + sub)
        sys.stdout.flush()


def skip_reason(ctcap):
    if os.geteuid() != 0:
        return "not root: the kernel NAT oracle needs network namespaces"
    for tool in ("ip", "nft", "conntrack", "sysctl", "tcpdump"):
        if not shutil.which(tool):
            return "%s is not installed (scripts/deps.sh test)" % tool
    if not ctcap or not os.access(ctcap, os.X_OK):
        return "the capture helper ctcap was not built (%s)" % ctcap
    import kdiff
    return kdiff.skip_reason(ctcap)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ctcap")
    ap.add_argument("--nat-xlate", help="nat_xlate_replay")
    ap.add_argument("--nat-probe", help="tests/nat/nat_probe")
    ap.add_argument("--nat-replay", help="nat_choice_replay")
    ap.add_argument("--ctrack", help="the ctrack tool (ctrack read --nat)")
    ap.add_argument("--scenario", action="append")
    ap.add_argument("--out")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    if args.list:
        for s in SCENARIOS:
            print("%-24s %s" % (s["name"], s["desc"]))
        return 0
    reason = skip_reason(args.ctcap)
    if reason:
        print("1..0 # SKIP kernel NAT oracle: %s" % reason)
        # the plan says skip; meson's TAP reader takes any non-zero
        # status for an error, whatever the plan says (kdiff.py's --skip-exit 0)
        return 0
    items = [s for s in SCENARIOS if not args.scenario or s["name"] in args.scenario]
    out = args.out or tempfile.mkdtemp(prefix="ctrack-kdnat-")
    print("TAP version 13")
    print("1..%d" % (len(items) * 9))
    print("# recordings in %s" % out)
    tap = Tap()
    t_start = time.time()

    def on_signal(signum, frame):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, on_signal)
    try:
        for sc in items:
            t0 = time.time()
            res = None
            for attempt in range(2):
                res = run_scenario(sc, os.path.join(out, sc["name"]), args.ctcap)
                self_check = sc["expect"](res) if sc["expect"] and not res.problems else []
                if not res.problems and not self_check:
                    break
                print("# %s: kernel side failed (%s), running it again"
                      % (sc["name"], (res.problems + self_check)[:3]))
            name = sc["name"]
            tap.result(not res.problems and not self_check, "%s: kernel self-check (%s)"
                       % (name, sc["desc"][:60]),
                       res.problems + self_check +
                       ["kernel: %d connections, %d ingress frames, %d egress frames"
                        % (len(res.bindings), len(res.ingress), len(res.egress))])
            bad = check_egress_checksums(res)
            tap.result(not bad and res.egress, "%s: every frame the router sent has valid "
                       "checksums" % name, bad[:8] + ["%d frames" % len(res.egress)])
            n, bad = check_egress_consistency(res)
            tap.result(not bad and n > 0, "%s: every forwarded frame carries a kernel "
                       "binding's tuple" % name, bad[:8] + ["%d frames" % n])
            probs, notes, matched = compare_translation(res, args.nat_xlate)
            tap.result(not probs and matched > 0, "%s: ctrack's translation of the ingress "
                       "with the kernel's bindings is what the router sent" % name,
                       probs[:10] + notes)
            probs, notes = check_choices(res, args.nat_probe, sc)
            tap.result(not probs, "%s: ctrack's address choice for a range is the kernel's"
                       % name, probs[:10] + notes)
            probs, notes = check_replay(res, args.nat_replay, sc)
            tap.result(not probs, "%s: ctrack's rules and tuple choice give the kernel's reply "
                       "tuples wherever no random number is drawn" % name, probs[:10] + notes)
            # phase 2: ctrack read --nat, as a user runs it
            table, events, written, err = run_ctrack_nat(res, args.ctrack, sc, True, "replay")
            ok, notes = (False, [err]) if err else check_nat_table(res, table, events)
            tap.result(ok, "%s: ctrack read --nat reproduces the kernel's table (>= %.1f%% "
                       "exact, reply tuples included, no extra entry) and its events"
                       % (name, 100 * NAT_TABLE_EXACT), notes)
            ok, notes = (False, [err]) if err else check_nat_frames(res, written)
            tap.result(ok, "%s: ctrack read --write-translated writes every frame the router "
                       "forwarded, byte for byte, and nothing else" % name, notes)
            table, events, written, err = run_ctrack_nat(res, args.ctrack, sc, False, "own")
            rnd = random_connections(res, args.nat_replay, sc)
            ok, notes = (False, [err]) if err else check_random_properties(res, table, sc, rnd)
            tap.result(ok, "%s: where the kernel drew random numbers, ctrack's own give ports "
                       "in range and unique" % name, notes)
            print("# %s took %.1f s" % (name, time.time() - t0))
    except KeyboardInterrupt:
        kd_netns.remove_stale()
        print("# interrupted; namespaces removed")
        return 130
    print("# %d scenarios in %.1f s" % (len(items), time.time() - t_start))
    if not tap.failed and not args.out:
        shutil.rmtree(out, ignore_errors=True)
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
