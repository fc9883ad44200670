#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_read_nat_state.py CTRACK CAPTURES_DIR NAT_DIR - `ctrack read --nat
... --save-state` then `--load-state` on the rest of the capture reads as
one run over the whole capture (issue 24: NAT bindings in state files).

The capture is a NAT gateway's ingress, built here with tests/captures/
pkt.py: clients in 10.0.0.0/24 behind `snat to 198.51.100.1-198.51.100.20`
and a port forward `ip daddr 203.0.113.80 tcp dport 80 dnat to
172.16.0.5:8080`.  The servers' answers are addressed to the translated
tuple, which the test derives from the rules, not from ctrack: the NAT
address is find_best_ips_proto's (tests/nat/nat_ref.py, the kernel's
jhash2 written again in Python), the port kept (every tuple is free).
Connections run across the cut (TCP data and close, UDP both ways), and
after the cut a new connection from a source that was mapped before it
must reuse that mapping (find_appropriate_src): its answers go to the
first connection's address, which the test chose to differ from the one
the hash would give it alone.  Checks:

 - read whole, and read as two files with the state saved and loaded
   between: the same events, the same final table (reply tuples
   included) and the same counters (ctrack_output.normalise);
 - the table's reply tuples are the ones derived here;
 - the second half read without the state is not the same (so the check
   above sees the bindings);
 - the state file is format version 2 (it holds NAT), one of a reading
   without NAT version 1;
 - that state loaded without --nat is refused with a message that names
   the binding, exit status 3 (the file is sound, the table cannot hold
   it), and nothing is printed as a table.
"""
import ipaddress
import os
import struct
import subprocess
import sys
import tempfile

CT, CAPTURES, NATDIR = (os.path.abspath(a) for a in sys.argv[1:4])
sys.path.insert(0, CAPTURES)
sys.path.insert(0, NATDIR)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ctrack_output import normalise  # noqa: E402
from nat_ref import best_addr  # noqa: E402
from pkt import ACK, FIN, PSH, SYN, Rec, echo4, eth_ip, ip4, pcap, tcp, udp  # noqa: E402

SEC = 10 ** 9
MS = 10 ** 6
T0 = 1700000000 * SEC
LT_ETH = 1
NAT_LO, NAT_HI = "198.51.100.1", "198.51.100.20"
RULES = ["ip saddr 10.0.0.0/24 snat to %s-%s" % (NAT_LO, NAT_HI),
         "ip daddr 203.0.113.80 tcp dport 80 dnat to 172.16.0.5:8080"]

n_test = 0
failed = 0


def ok(cond, what):
    global n_test, failed
    n_test += 1
    print("%s %d - %s" % ("ok" if cond else "not ok", n_test, what), flush=True)
    if not cond:
        failed += 1


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


def ctrack(args):
    return subprocess.run([CT, "read", "--no-progress"] + args, capture_output=True,
                          text=True, timeout=120)


def state_version(path):
    with open(path, "rb") as f:
        h = f.read(12)
    return struct.unpack("<I", h[8:12])[0] if h[:8] == b"CTRKSTAT" else None


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


def main():
    tmp = tempfile.mkdtemp(prefix="ct-nat-state-")
    paths, expect = build(tmp)
    rules = os.path.join(tmp, "rules.nat")
    with open(rules, "w") as f:
        f.write("# the gateway's rules\n" + "\n".join(RULES) + "\n")
    state = os.path.join(tmp, "nat.state")
    nat = ["--nat-file", rules]
    for opts in (["-e", "-s"], ["-e", "-s", "-o", "json"]):
        whole = ctrack(nat + opts + [paths["whole"]])
        ok(whole.returncode == 0, "whole capture %s: exit %d %s" % (
            " ".join(opts), whole.returncode, whole.stderr.strip()[:200]))
        p1 = ctrack(nat + [o for o in opts if o != "-s"] +
                    ["--no-table", "--save-state", state, paths["first"]])
        ok(p1.returncode == 0, "first half with --save-state: exit %d %s" % (
            p1.returncode, p1.stderr.strip()[:200]))
        ok(state_version(state) == 2, "a state file with NAT bindings is format version 2 "
           "(%s)" % state_version(state))
        p2 = ctrack(nat + opts + ["--load-state", state, paths["second"]])
        ok(p2.returncode == 0, "second half with --load-state: exit %d %s" % (
            p2.returncode, p2.stderr.strip()[:200]))
        same = normalise(whole.stdout) == normalise(p1.stdout + p2.stdout)
        ok(same, "%s: events, table and counters of the two runs are the whole run's" %
           " ".join(opts))
        if not same:
            for x, y in zip(normalise(whole.stdout).splitlines(),
                            normalise(p1.stdout + p2.stdout).splitlines()):
                if x != y:
                    print("# whole: %s\n# split: %s" % (x[:220], y[:220]))
                    break
        alone = ctrack(nat + opts + [paths["second"]])
        ok(normalise(alone.stdout) != normalise(p2.stdout),
           "%s: the second half alone reads otherwise (the bindings matter)" % " ".join(opts))
    # the reply tuples, derived from the rules
    p = ctrack(nat + [paths["whole"]])
    got = reply_tuples(p.stdout)
    for k, v in sorted(expect.items()):
        ok(got.get(k) == v, "%s %s:%d -> %s:%d replies as %s (got %s)" % (
            k[0], k[1], k[3], k[2], k[4], v, got.get(k)))
    p1 = ctrack(nat + ["--no-table", "--save-state", state, paths["first"]])
    p2 = ctrack(nat + ["--load-state", state, paths["second"]])
    ok(reply_tuples(p2.stdout) == got, "after the restore the same reply tuples")
    # E reused A's mapping across the restore
    e = [k for k in expect if k[0] == "udp" and k[2] != "192.0.2.10"][0]
    a = ("udp", "10.0.0.1", "192.0.2.10", 5000, 53)
    ok(reply_tuples(p2.stdout).get(e, (0, 1))[1] == got[a][1],
       "a new connection after the restore reuses its source's restored mapping")
    # a reading without NAT still writes version 1
    plain_state = os.path.join(tmp, "plain.state")
    q = ctrack(["--no-table", "--save-state", plain_state, paths["first"]])
    ok(q.returncode == 0 and state_version(plain_state) == 1,
       "a state file without NAT is format version 1 (%s)" % state_version(plain_state))
    # the NAT state into a reading without --nat
    q = ctrack(["--load-state", state, paths["second"]])
    ok(q.returncode == 3 and "NAT" in q.stderr and state in q.stderr and not q.stdout,
       "a NAT state without --nat: exit %d, %s" % (q.returncode, q.stderr.strip()[:200]))
    print("1..%d" % n_test)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
