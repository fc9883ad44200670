#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""test_ipfix.py CTRACK PCAPS_DIR SAMPLES_DIR - IPFIX export against real
collectors.

UDP: nfdump's nfcapd (Debian nfdump 1.7.1) on loopback receives
`ctrack read --ipfix` of the project's sample, captures this test writes
(gen_captures.py) and captures of ../shared/pcaps (skipped when absent);
`nfdump -r ... -o json` must show exactly one flow per DESTROY event and
one per connection open at the end, with ctrack's addresses, ports,
protocol, both directions' packets and bytes, first and last times (ms)
and zone (ingress VRF).  nfcapd takes no TCP, so TCP goes to python3-ipfix's
collector (`ipfix2csv --collect tcp`, by an author of RFC 7011 and 5103),
which also decodes both directions' tcpControlBits; those are checked
against the flags tshark reads in the capture.  Then: uniflow records,
active timeouts (a flow's records add up to its counters), templates
that reach a collector started late, and the failures - a refusing or
unreachable TCP collector (an error at start), a UDP collector that is
not there (counted, tracking unchanged), a TCP collector that stops
reading (bounded, told, tracking unchanged).
"""
import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_util as eu  # noqa: E402
import gen_captures as gc  # noqa: E402

CT, PCAPS, SAMPLES = sys.argv[1], sys.argv[2], sys.argv[3]
TMP = tempfile.mkdtemp(prefix="ctrack-ipfix.")


def port_taken(port, kind):
    s = socket.socket(socket.AF_INET, kind)
    try:
        s.bind(("127.0.0.1", port))
        return False
    except OSError:
        return True
    finally:
        s.close()


STARTED = []


@atexit.register
def _cleanup():
    """Collectors this test started, stopped even when a case fails."""
    for p in STARTED:
        if p.poll() is None:
            p.kill()
            p.wait()
    shutil.rmtree(TMP, ignore_errors=True)


class Nfcapd:
    def __init__(self, port=None):
        self.port = port or eu.free_port()
        self.dir = tempfile.mkdtemp(dir=TMP, prefix="nfcapd.")
        # -B: the socket buffer rmem_max allows (4 MiB here), as a
        # collector for bursts is set up
        self.p = subprocess.Popen(["nfcapd", "-b", "127.0.0.1", "-p", str(self.port),
                                   "-w", self.dir, "-t", "3600", "-B", "4194304"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        STARTED.append(self.p)
        for _ in range(200):
            if port_taken(self.port, socket.SOCK_DGRAM):
                return
            time.sleep(0.02)
        raise RuntimeError("nfcapd did not start")

    def stop(self):
        """Stop it (it writes its file on SIGTERM); the flows it stored."""
        time.sleep(0.3)     # let it read what is in its socket
        self.p.send_signal(signal.SIGTERM)
        self.p.wait(timeout=20)
        files = [os.path.join(self.dir, f) for f in os.listdir(self.dir)
                 if f.startswith("nfcapd.2")]
        return eu.nfdump_flows(sorted(files))


def run_export(pcap, args, collector="127.0.0.1:%d", port=None, stdin=None):
    cmd = [CT, "read", "--no-table", "--ipfix", collector % port, *args, pcap]
    return subprocess.run(cmd, capture_output=True, text=True, input=stdin, timeout=300)


def have(prog):
    return shutil.which(prog) is not None


def udp_case(name, pcap, args=(), uniflow=False):
    if not os.path.exists(pcap):
        eu.skip(name, "no capture %s (../shared/pcaps is absent)" % pcap)
        return
    destroys, table = eu.ctrack_view(CT, pcap, args)
    want = (eu.expected_uniflows if uniflow else eu.expected_biflows)(destroys, table)
    n = Nfcapd()
    r = run_export(pcap, list(args) + (["--ipfix-uniflow"] if uniflow else []), port=n.port)
    flows = n.stop()
    got = Counter(eu.nfdump_key(f, uniflow) for f in flows)
    eu.ok(r.returncode == 0 and want == got and sum(want.values()) > 0,
          "%s: nfcapd shows one flow per DESTROY and open connection (%d flows)" %
          (name, sum(want.values())),
          "rc=%d stderr=%s\n%s" % (r.returncode, r.stderr, eu.diff(want, got)))


# ---- UDP to nfcapd: the project's, the test's and shared captures ----

def own_mix():
    p = []
    for i in range(60):
        p += gc.refused(i, 1.0 + i * 0.01)
    for i in range(40):
        p += gc.udp_exchange(i, 2.0 + i * 0.01)
    p += gc.tcp_session("10.9.0.1", "192.0.2.80", 40000, 80, 3.0)
    p += gc.tcp_session("10.9.0.2", "192.0.2.80", 40001, 443, 100.0)
    path = os.path.join(TMP, "mix.pcap")
    gc.write_pcap(path, p)
    return path


MIX = own_mix()
udp_case("the project's sample (IPv4+IPv6, TCP, UDP, ICMP, refused)",
         os.path.join(SAMPLES, "sample.pcap"))
udp_case("a written capture: 60 refused, 40 UDP timing out, 2 closed TCP", MIX)
# (ndpi__synscan.pcap's 2000 records at the end overflow nfcapd's socket
# buffer over UDP - docs/export.md - so it goes over TCP below)
for f, a in (("ndpi__1kxun.pcap", ()),
             ("zeek__vlan-collisions.pcap", ("--zone-by", "vlan")),
             ("zeek__icmp6.pcap", ()), ("ndpi__quic.pcap", ()), ("zeek__sctp.pcap", ()),
             ("zeek__pcapng-multi-interface.pcapng", ("--zone-by", "interface"))):
    udp_case("shared %s%s" % (f, " " + " ".join(a) if a else ""), os.path.join(PCAPS, f), a)
udp_case("uniflow: a record per direction (sample)", os.path.join(SAMPLES, "sample.pcap"),
         uniflow=True)
udp_case("uniflow: shared ndpi__1kxun.pcap", os.path.join(PCAPS, "ndpi__1kxun.pcap"),
         uniflow=True)


# ---- active timeout: periodic records add up to the connection ----

def active_case():
    p = gc.long_udp("10.5.0.1", "192.0.2.9", 5000, 6000, 0.0, 100.0, 5.0)
    p += gc.refused(1, 0.5)
    path = os.path.join(TMP, "long.pcap")
    gc.write_pcap(path, p)
    destroys, table = eu.ctrack_view(CT, path)
    n = Nfcapd()
    r = run_export(path, ["--ipfix-active-timeout", "20"], port=n.port)
    flows = n.stop()
    long_fl = [f for f in flows if f.get("src_port") == 5000]
    [conn] = [d for d in destroys + table if d["orig"].get("sport") == 5000]
    sums = (sum(f["in_packets"] for f in long_fl), sum(f["in_bytes"] for f in long_fl),
            sum(f["out_packets"] for f in long_fl), sum(f["out_bytes"] for f in long_fl))
    want = (conn["orig"]["packets"], conn["orig"]["bytes"], conn["reply"]["packets"],
            conn["reply"]["bytes"])
    firsts = sorted(eu._iso_ms(f["first"]) for f in long_fl)
    lasts = sorted(eu._iso_ms(f["last"]) for f in long_fl)
    # 100 s of traffic, reported every 20-25 s of capture time: 4 or 5
    # periodic records, then the final one
    eu.ok(r.returncode == 0 and 4 <= len(long_fl) <= 6 and sums == want and
          firsts[0] == eu.ns_to_ms(conn["first_seen"]) and
          lasts[-1] == eu.ns_to_ms(conn["last_seen"]),
          "active timeout 20 s: a 100 s flow in %d records whose counts add up to its "
          "counters" % len(long_fl),
          "rc=%d %s records=%d sums=%r want=%r firsts=%r" %
          (r.returncode, r.stderr, len(long_fl), sums, want, firsts))


active_case()


# ---- TCP to python3-ipfix's collector ----

DEB_PY = "/usr/bin/python3"
COLLECTOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ipfix_tcp_collector.py")
HAVE_PYIPFIX = os.path.exists(DEB_PY) and subprocess.run(
    [DEB_PY, "-c", "import ipfix.reader"], capture_output=True).returncode == 0


def tcp_collect(pcap, args=()):
    port = eu.free_port(socket.SOCK_STREAM)
    col = subprocess.Popen([DEB_PY, COLLECTOR, str(port)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    STARTED.append(col)
    col.stdout.readline()          # "listening"
    r = run_export(pcap, ["--ipfix-transport", "tcp", *args], port=port)
    try:
        out, err = col.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        col.kill()
        out, err = col.communicate()
    return r, [json.loads(x) for x in out.splitlines() if x.startswith("{")], err


def rec_key(d):
    v4 = "sourceIPv4Address" in d
    src = d["sourceIPv4Address"] if v4 else d["sourceIPv6Address"]
    dst = d["destinationIPv4Address"] if v4 else d["destinationIPv6Address"]
    proto = d["protocolIdentifier"]
    if proto in (1, 58):
        sp, dp = 0, d.get("icmpTypeCodeIPv4" if v4 else "icmpTypeCodeIPv6", 0)
    else:
        sp, dp = d.get("sourceTransportPort", 0), d.get("destinationTransportPort", 0)
    return eu.flow_key(proto, src, dst, sp, dp, d["ingressVRFID"], d["packetDeltaCount"],
                       d["octetDeltaCount"], d["reversePacketDeltaCount"],
                       d["reverseOctetDeltaCount"], d["flowStartMilliseconds"],
                       d["flowEndMilliseconds"])


def tcp_case(name, pcap):
    if not HAVE_PYIPFIX:
        eu.skip(name, "python3-ipfix is not installed for %s" % DEB_PY)
        return None
    if not os.path.exists(pcap):
        eu.skip(name, "no capture %s (../shared/pcaps is absent)" % pcap)
        return None
    destroys, table = eu.ctrack_view(CT, pcap)
    want = eu.expected_biflows(destroys, table)
    r, recs, err = tcp_collect(pcap)
    got = Counter(rec_key(d) for d in recs)
    forced = sum(1 for d in recs if d.get("flowEndReason") == 4)
    eu.ok(r.returncode == 0 and got == want and sum(want.values()) > 0 and
          forced == len(table),
          "%s over TCP: python3-ipfix decodes one biflow per connection (%d), the %d "
          "open at the end as forced end" % (name, sum(want.values()), len(table)),
          "rc=%d %s %s forced=%d\n%s" % (r.returncode, r.stderr, err[-300:], forced,
                                          eu.diff(want, got)))
    return recs


recs = tcp_case("sample", os.path.join(SAMPLES, "sample.pcap"))
tcp_case("shared ndpi__1kxun.pcap", os.path.join(PCAPS, "ndpi__1kxun.pcap"))
tcp_case("shared ndpi__synscan.pcap (2000 records at once)",
         os.path.join(PCAPS, "ndpi__synscan.pcap"))
tcp_case("a written capture", MIX)


def tshark_flags(pcap):
    """(src, sport, dst, dport) -> OR of the TCP flags tshark reads."""
    out = subprocess.run(["tshark", "-r", pcap, "-Y", "tcp", "-T", "fields", "-e", "ip.src",
                          "-e", "ipv6.src", "-e", "tcp.srcport", "-e", "ip.dst",
                          "-e", "ipv6.dst", "-e", "tcp.dstport", "-e", "tcp.flags"],
                         capture_output=True, text=True, check=False).stdout
    fl = {}
    for line in out.splitlines():
        s4, s6, sp, d4, d6, dp, f = line.split("\t")
        k = (s4 or s6, int(sp), d4 or d6, int(dp))
        fl[k] = fl.get(k, 0) | int(f, 16)
    return fl


if recs is not None and have("tshark"):
    fl = tshark_flags(os.path.join(SAMPLES, "sample.pcap"))
    bad, n = [], 0
    for d in recs:
        if d["protocolIdentifier"] != 6:
            continue
        n += 1
        src = d.get("sourceIPv4Address") or d.get("sourceIPv6Address")
        dst = d.get("destinationIPv4Address") or d.get("destinationIPv6Address")
        sp, dp = d["sourceTransportPort"], d["destinationTransportPort"]
        want = (fl.get((src, sp, dst, dp), 0), fl.get((dst, dp, src, sp), 0))
        got = (d["tcpControlBits"], d["reverseTcpControlBits"])
        if want != got:
            bad.append((src, sp, dst, dp, want, got))
    eu.ok(n > 0 and not bad, "tcpControlBits of both directions are the flags tshark "
          "reads (%d TCP flows)" % n, repr(bad))
elif recs is not None:
    eu.skip("tcpControlBits against tshark", "tshark is not installed")


# ---- templates reach a collector started late (UDP) ----

def metrics_value(port, name):
    try:
        page = urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5).read()
    except OSError:
        return None
    for line in page.decode().splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return None


def late_collector_case():
    part1, part2 = [], []
    for i in range(100):
        part1 += gc.refused(i, 1.0 + i * 0.001, net=11)
    # then bulk that creates nothing, more than a pipe reader's buffers
    # (256 KiB and zlib's) hold, so that the 100 are read before part 2
    part1 += [gc.filler(2.0 + i * 0.001) for i in range(600)]
    for i in range(100):
        part2 += gc.refused(i, 5.0 + i * 0.001, net=12)
    udp_port, m_port = eu.free_port(), eu.free_port(socket.SOCK_STREAM)
    p = subprocess.Popen([CT, "read", "--no-table", "--ipfix", "127.0.0.1:%d" % udp_port,
                          "--ipfix-template-every", "1", "--metrics-listen",
                          "127.0.0.1:%d" % m_port, "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdin.write(gc.pcap_header())
    for t, fr in sorted(part1, key=lambda x: x[0]):
        p.stdin.write(gc.pcap_record(t, fr))
    p.stdin.flush()
    # wait until part 1 is exported (to nobody): its 100 records encoded
    for _ in range(500):
        v = metrics_value(m_port, "ctrack_export_records_total")
        if v is not None and v >= 100:
            break
        time.sleep(0.02)
    n = Nfcapd(udp_port)
    for t, fr in sorted(part2, key=lambda x: x[0]):
        p.stdin.write(gc.pcap_record(t, fr))
    _, err = p.communicate(timeout=60)
    flows = n.stop()
    nets = Counter(f["src4_addr"].split(".")[1] for f in flows)
    eu.ok(p.returncode == 0 and nets["12"] == 100 and nets["11"] < 20 and
          b"could not be sent" in err,
          "a collector started late decodes every later record (templates again "
          "over UDP); the records sent before it are counted lost",
          "rc=%d nets=%r stderr=%s" % (p.returncode, dict(nets), err.decode()))


late_collector_case()


def template_cadence_case():
    """Templates in message 0 and again after every 4 data messages."""
    port = eu.free_port()
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", port))
    s.settimeout(2.0)
    r = run_export(MIX, ["--ipfix-template-every", "4"], port=port)
    kinds = []
    try:
        while True:
            m = s.recv(65535)
            off, sets = 16, []
            while off + 4 <= len(m):
                sid, ln = int.from_bytes(m[off:off + 2], "big"), int.from_bytes(m[off + 2:off + 4], "big")
                sets.append(sid)
                off += max(ln, 4)
            kinds.append("T" if 2 in sets else "D")
    except socket.timeout:
        pass
    s.close()
    runs = "".join(kinds).split("T")[1:]
    eu.ok(r.returncode == 0 and kinds and kinds[0] == "T" and
          all(len(x) <= 4 for x in runs) and len(runs) >= 2,
          "UDP: the templates go first and again after at most 4 data messages",
          "rc=%d %s kinds=%s" % (r.returncode, r.stderr, "".join(kinds)))


template_cadence_case()


# ---- failures ----

def table_of(args, pcap):
    return subprocess.run([CT, "read", *args, pcap], capture_output=True, text=True).stdout


def refused_tcp_case():
    port = eu.free_port(socket.SOCK_STREAM)
    t0 = time.monotonic()
    r = subprocess.run([CT, "read", "--ipfix", "127.0.0.1:%d" % port, "--ipfix-transport",
                        "tcp", MIX], capture_output=True, text=True, timeout=60)
    dt = time.monotonic() - t0
    eu.ok(r.returncode == 1 and "refused" in r.stderr and "127.0.0.1:%d" % port in r.stderr
          and not r.stdout and dt < 5,
          "a TCP collector that refuses: an error at start naming it, exit 1",
          "rc=%d %.1fs stderr=%s" % (r.returncode, dt, r.stderr))


def unreachable_tcp_case():
    if os.geteuid() != 0 or not have("unshare"):
        eu.skip("an unreachable TCP collector", "needs root and unshare for a network "
                "namespace without routes")
        return
    # a namespace of our own, gone with the process: no interface is up,
    # so nothing is reachable
    t0 = time.monotonic()
    r = subprocess.run(["unshare", "-n", CT, "read", "--ipfix", "192.0.2.1:4739",
                        "--ipfix-transport", "tcp", MIX],
                       capture_output=True, text=True, timeout=60)
    dt = time.monotonic() - t0
    eu.ok(r.returncode == 1 and "unreachable" in r.stderr and dt < 5,
          "an unreachable TCP collector: an error at start, exit 1",
          "rc=%d %.1fs stderr=%s" % (r.returncode, dt, r.stderr))


def absent_udp_case():
    port = eu.free_port()
    plain = table_of([], MIX)
    r = subprocess.run([CT, "read", "--ipfix", "127.0.0.1:%d" % port, MIX],
                       capture_output=True, text=True, timeout=60)
    eu.ok(r.returncode == 0 and r.stdout == plain and "could not be sent" in r.stderr,
          "a UDP collector that is not there: sends counted and told, the table unchanged",
          "rc=%d stderr=%s" % (r.returncode, r.stderr))


def stalled_tcp_case():
    # 120,000 refused connections: ~13 MB of records, more than a socket
    # that is never read and the exporter's 4 MiB queue hold
    path = os.path.join(TMP, "many.pcap")
    with open(path, "wb") as f:
        f.write(gc.pcap_header())
        for i in range(120000):
            for t, fr in gc.refused(i, 1.0 + i * 0.0001, net=20 + (i >> 16)):
                f.write(gc.pcap_record(t, fr))
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    port = ls.getsockname()[1]
    plain = table_of(["-s"], path)
    t0 = time.monotonic()
    r = subprocess.run([CT, "read", "-s", "--ipfix", "127.0.0.1:%d" % port,
                        "--ipfix-transport", "tcp", path],
                       capture_output=True, text=True, timeout=120)
    dt = time.monotonic() - t0
    ls.close()
    eu.ok(r.returncode == 4 and r.stdout == plain and "not delivered" in r.stderr and dt < 60,
          "a TCP collector that stops reading: tracking goes on, the loss is told "
          "(exit 4, %.1f s)" % dt,
          "rc=%d %.1fs stderr=%s" % (r.returncode, dt, r.stderr))


refused_tcp_case()
unreachable_tcp_case()
absent_udp_case()
stalled_tcp_case()

shutil.rmtree(TMP, ignore_errors=True)
eu.done()
