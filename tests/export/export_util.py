# SPDX-License-Identifier: BSD-3-Clause
"""export_util.py - what the export tests share: TAP output, free ports,
ctrack's own view of a replay (its JSON events and table), and the flows
that view says a collector must receive.

The expected flows come from `ctrack read -e -o json`: one per DESTROY
event, one per connection still in the table at the end (exported as
"forced end"), each with both directions' packets and bytes, the first
and last packet times in milliseconds and the zone.  The collectors'
views (nfdump, ipfix2csv) are decoded by the collectors themselves; the
tests only compare.
"""
import json
import os
import socket
import subprocess
import sys
from collections import Counter

_n = 0
_failed = 0


def ok(cond, name, diag=None):
    global _n, _failed
    _n += 1
    if cond:
        print("ok %d - %s" % (_n, name))
    else:
        _failed += 1
        print("not ok %d - %s" % (_n, name))
        if diag:
            for line in str(diag).splitlines()[:40]:
                print("# " + line)
    sys.stdout.flush()
    return cond


def skip(name, why):
    global _n
    _n += 1
    print("ok %d - %s # SKIP %s" % (_n, name, why))
    sys.stdout.flush()


def done():
    print("1..%d" % _n)
    sys.exit(1 if _failed else 0)


def free_port(kind=socket.SOCK_DGRAM):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def ns_to_ms(text):
    """'1796000283.180220000' (ctrack's JSON times) -> integer ms."""
    sec, _, frac = text.partition(".")
    return int(sec) * 1000 + int((frac + "000")[:3])


def ctrack_view(ct, pcap, args=()):
    """(destroy events, final table) of `ctrack read -e -o json`, as parsed
    dicts with the times kept as exact strings."""
    out = subprocess.run([ct, "read", "-e", "-o", "json", *args, pcap],
                         capture_output=True, text=True, check=False)
    destroys, table = [], []
    for line in out.stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        # keep the time fields' exact decimal text
        d = json.loads(line, parse_float=str)
        if d.get("event") == "destroy":
            destroys.append(d)
        elif "event" not in d and "stats" not in d:
            table.append(d)
    return destroys, table


def _ports(side, proto):
    if proto in ("icmp", "icmpv6"):
        return 0, side.get("type", 0) * 256 + side.get("code", 0)
    if proto in ("tcp", "udp", "udplite", "sctp", "dccp"):
        return side["sport"], side["dport"]
    return 0, 0


def flow_key(protonum, src, dst, sport, dport, zone, inp, inb, outp, outb, first, last):
    return (protonum, src, dst, sport, dport, zone, inp, inb, outp, outb, first, last)


def expected_biflows(destroys, table):
    """Counter of flow keys a biflow collector must show."""
    c = Counter()
    for d in destroys + table:
        o, r = d["orig"], d["reply"]
        sp, dp = _ports(o, d["proto"])
        c[flow_key(d["protonum"], o["src"], o["dst"], sp, dp, d.get("zone", 0),
                   o["packets"], o["bytes"], r["packets"], r["bytes"],
                   ns_to_ms(d["first_seen"]), ns_to_ms(d["last_seen"]))] += 1
    return c


def expected_uniflows(destroys, table):
    """Counter of (proto, src, dst, sport, dport, zone, packets, bytes,
    first, last): the original direction of every connection, the reply
    direction of those that had replies."""
    c = Counter()
    for d in destroys + table:
        for side, always in (("orig", True), ("reply", False)):
            s = d[side]
            if not always and not s["packets"]:
                continue
            sp, dp = _ports(s, d["proto"])
            c[(d["protonum"], s["src"], s["dst"], sp, dp, d.get("zone", 0),
               s["packets"], s["bytes"], ns_to_ms(d["first_seen"]),
               ns_to_ms(d["last_seen"]))] += 1
    return c


def _iso_ms(text):
    import datetime
    dt = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%f")
    dt = dt.replace(tzinfo=datetime.timezone.utc)
    return int(dt.timestamp()) * 1000 + dt.microsecond // 1000


def nfdump_flows(files):
    """Every flow nfdump reads from @files, as dicts (TZ=UTC, so that its
    local times are Unix times)."""
    flows = []
    for f in files:
        out = subprocess.run(["nfdump", "-r", f, "-o", "json"], capture_output=True,
                             text=True, env=dict(os.environ, TZ="UTC"), check=False)
        text = out.stdout.strip()
        if not text:
            continue
        flows += json.loads(text)
    return flows


def nfdump_key(fl, uniflow=False):
    src = fl.get("src4_addr") or fl.get("src6_addr")
    dst = fl.get("dst4_addr") or fl.get("dst6_addr")
    if fl["proto"] in (1, 58):
        sp, dp = 0, fl.get("icmp_type", 0) * 256 + fl.get("icmp_code", 0)
    else:
        sp, dp = fl.get("src_port", 0), fl.get("dst_port", 0)
    zone = int(fl.get("ingress_vrf", "0"))
    first, last = _iso_ms(fl["first"]), _iso_ms(fl["last"])
    if uniflow:
        return (fl["proto"], src, dst, sp, dp, zone, fl["in_packets"], fl["in_bytes"],
                first, last)
    return flow_key(fl["proto"], src, dst, sp, dp, zone, fl["in_packets"], fl["in_bytes"],
                    fl.get("out_packets", 0), fl.get("out_bytes", 0), first, last)


def diff(want, got):
    missing = want - got
    extra = got - want
    lines = ["missing (%d):" % sum(missing.values())]
    lines += ["  %r" % (k,) for k in list(missing)[:8]]
    lines += ["unexpected (%d):" % sum(extra.values())]
    lines += ["  %r" % (k,) for k in list(extra)[:8]]
    return "\n".join(lines)
