# SPDX-License-Identifier: BSD-3-Clause
"""nat_gateway: a NAT gateway's ingress, built byte by byte (tests/captures/
pkt.py), for the tests of NAT across a state file (tests/cli/
test_read_nat_state.py, tests/daemon/test_daemon_nat.py).

Clients in 10.0.0.0/24 behind RULES: `snat to 198.51.100.1-198.51.100.20`
and a port forward `ip daddr 203.0.113.80 tcp dport 80 dnat to
172.16.0.5:8080`.  The servers' answers are addressed to the translated
tuple, which is derived here from the rules, not from ctrack: the NAT
address is find_best_ips_proto's (tests/nat/nat_ref.py, the kernel's
jhash2 written again in Python), the port kept (every tuple is free).
build(DIR) writes first.pcap (before the cut), second.pcap (after it) and
whole.pcap, and returns their paths and the expected reply tuple of every
TCP/UDP connection: {(proto, src, dst, sport, dport): (rsrc, rdst, rsport,
rdport)}.  Connections cross the cut (TCP data and close, UDP both ways);
after it a new connection from a source mapped before it must reuse that
mapping (find_appropriate_src): its answers go to the first connection's
address, which a fresh hash would not give it (the server is chosen so).
"""
import ipaddress
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "captures"))
sys.path.insert(0, os.path.join(HERE, "..", "nat"))
from nat_ref import best_addr  # noqa: E402
from pkt import ACK, FIN, PSH, SYN, Rec, echo4, eth_ip, ip4, pcap, tcp, udp  # noqa: E402

SEC = 10 ** 9
MS = 10 ** 6
T0 = 1700000000 * SEC
LT_ETH = 1
NAT_LO, NAT_HI = "198.51.100.1", "198.51.100.20"
RULES = ["ip saddr 10.0.0.0/24 snat to %s-%s" % (NAT_LO, NAT_HI),
         "ip daddr 203.0.113.80 tcp dport 80 dnat to 172.16.0.5:8080"]


def a16(a):
    return ipaddress.ip_address(a).packed + b"\0" * 12


def snat_addr(src, dst):
    """find_best_ips_proto for a source NAT into the rule's range."""
    return str(ipaddress.ip_address(best_addr(4, "src", False, 0, a16(src), a16(dst),
                                              a16(NAT_LO), a16(NAT_HI))[:4]))


class Conn:
    """A TCP connection through the NAT: segments as the router's ingress
    holds them (client -> server as sent, server -> the translated tuple),
    sequence numbers kept here."""

    def __init__(self, cli, cport, srv, sport, rsrc, rsport, nat, nport):
        self.c = (cli, cport)
        self.s = (srv, sport)
        self.r = (rsrc, rsport)        # the server's side as it answers
        self.n = (nat, nport)          # where it answers to
        self.seq = {True: 0x1000, False: 0x8000}

    def seg(self, from_cli, flags, payload=b""):
        (src, sp), (dst, dp) = (self.c, self.s) if from_cli else (self.r, self.n)
        s = self.seq[from_cli]
        a = self.seq[not from_cli] if flags & ACK else 0
        l4 = tcp(src, dst, sp, dp, s, a, flags, payload=payload)
        self.seq[from_cli] = (s + len(payload) + (1 if flags & (SYN | FIN) else 0)) & 0xFFFFFFFF
        return ip4(src, dst, 6, l4)


def build(tmp):
    """The two halves of the capture and the expected reply tuples."""
    first, second, expect = [], [], {}
    # A: UDP, mapped before the cut, both ways on each side of it
    a_nat = snat_addr("10.0.0.1", "192.0.2.10")
    expect[("udp", "10.0.0.1", "192.0.2.10", 5000, 53)] = ("192.0.2.10", a_nat, 53, 5000)
    # E, after the cut: the same source to another server.  A fresh
    # choice would hash it to another address; the mapping is reused.
    e_dst = None
    for last in range(11, 250):
        cand = "192.0.2.%d" % last
        if snat_addr("10.0.0.1", cand) != a_nat:
            e_dst = cand
            break
    assert e_dst, "no server that hashes elsewhere"
    expect[("udp", "10.0.0.1", e_dst, 5000, 53)] = (e_dst, a_nat, 53, 5000)
    # B: the port forward, source NATed too (snat after dnat: daddr is
    # the backend's)
    b_nat = snat_addr("10.0.0.2", "172.16.0.5")
    b = Conn("10.0.0.2", 40000, "203.0.113.80", 80, "172.16.0.5", 8080, b_nat, 40000)
    expect[("tcp", "10.0.0.2", "203.0.113.80", 40000, 80)] = ("172.16.0.5", b_nat, 8080, 40000)
    # D: a TCP connection that crosses the cut
    d_nat = snat_addr("10.0.0.4", "192.0.2.20")
    d = Conn("10.0.0.4", 41000, "192.0.2.20", 443, "192.0.2.20", 443, d_nat, 41000)
    expect[("tcp", "10.0.0.4", "192.0.2.20", 41000, 443)] = ("192.0.2.20", d_nat, 443, 41000)
    # C: ICMP echo
    c_nat = snat_addr("10.0.0.3", "192.0.2.10")

    first += [ip4("10.0.0.1", "192.0.2.10", 17, udp("10.0.0.1", "192.0.2.10", 5000, 53, b"q")),
              ip4("192.0.2.10", a_nat, 17, udp("192.0.2.10", a_nat, 53, 5000, b"r")),
              b.seg(True, SYN), b.seg(False, SYN | ACK), b.seg(True, ACK),
              b.seg(True, PSH | ACK, b"G" * 50), b.seg(False, PSH | ACK, b"H" * 300),
              ip4("10.0.0.3", "192.0.2.10", 1, echo4(True, 77, 1, b"ping")),
              ip4("192.0.2.10", c_nat, 1, echo4(False, 77, 1, b"ping")),
              d.seg(True, SYN), d.seg(False, SYN | ACK), d.seg(True, ACK),
              d.seg(True, PSH | ACK, b"x" * 100), d.seg(False, ACK)]
    second += [d.seg(False, PSH | ACK, b"y" * 700), d.seg(True, ACK),
               ip4("10.0.0.1", "192.0.2.10", 17, udp("10.0.0.1", "192.0.2.10", 5000, 53, b"q2")),
               ip4("192.0.2.10", a_nat, 17, udp("192.0.2.10", a_nat, 53, 5000, b"r2")),
               ip4("10.0.0.1", e_dst, 17, udp("10.0.0.1", e_dst, 5000, 53, b"e")),
               ip4(e_dst, a_nat, 17, udp(e_dst, a_nat, 53, 5000, b"f")),
               b.seg(True, ACK), b.seg(True, FIN | ACK), b.seg(False, FIN | ACK),
               b.seg(True, ACK),
               d.seg(True, FIN | ACK), d.seg(False, FIN | ACK), d.seg(True, ACK)]
    recs1 = [Rec(T0 + i * 10 * MS, eth_ip(f)) for i, f in enumerate(first)]
    recs2 = [Rec(T0 + 5 * SEC + i * 10 * MS, eth_ip(f)) for i, f in enumerate(second)]
    paths = {}
    for name, recs in (("first", recs1), ("second", recs2), ("whole", recs1 + recs2)):
        paths[name] = os.path.join(tmp, name + ".pcap")
        with open(paths[name], "wb") as f:
            f.write(pcap(LT_ETH, recs))
    return paths, expect

def reply_tuples(table):
    """{(proto, src, dst, sport, dport): (rsrc, rdst, rsport, rdport)} of a
    conntrack -L listing."""
    out = {}
    for line in table.splitlines():
        f = line.split()
        if not f or f[0] not in ("tcp", "udp"):
            continue
        kv = [x.split("=", 1) for x in f if "=" in x]
        src = [v for k, v in kv if k == "src"]
        dst = [v for k, v in kv if k == "dst"]
        sp = [int(v) for k, v in kv if k == "sport"]
        dp = [int(v) for k, v in kv if k == "dport"]
        out[(f[0], src[0], dst[0], sp[0], dp[0])] = (src[1], dst[1], sp[1], dp[1])
    return out
