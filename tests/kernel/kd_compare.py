# SPDX-License-Identifier: BSD-3-Clause
"""kd_compare: the kernel's table and events against ctrack's, and the capture
against the kernel's counters.

Entries.  A kernel entry (from the dump) and a ctrack entry (printed at the
last packet) are the same connection when family, protocol, original tuple
and zone agree.  The pair is reproduced exactly when state, reply tuple,
[UNREPLIED], the other flags, both counters and the trailing fields (mark,
zone, use) agree and the timeouts agree within 2 s once the seconds between
the last packet and the dump are taken off ctrack's.  A ctrack entry without
kernel partner whose timeout ran out before the dump is "expired by the
dump", not extra.

Events.  Per connection, the sequence of (event, state, [UNREPLIED], flags)
with the timeout of NEW/UPDATE (within 1 s) and the counters of DESTROY.  Two
allowances, both about the end of the capture and nothing else: kernel events
later than the dump are ignored, and a sequence that differs only by one
trailing DESTROY within 1.5 s of the last packet still matches (the kernel's
DESTROY of a timeout arrives when the table is next read; ctrack's comes when
its clock passes the expiry).

Capture.  For every kernel connection (dumped or destroyed) the packets and
bytes of the capture that carry its original and reply tuple are counted.
The kernel must never count more than the capture holds (that would mean the
capture missed frames conntrack saw); it may count fewer (a retransmitted SYN
is not counted, an INVALID packet is not counted), which is reported.
"""

import collections
import os
import re
import subprocess

import kd_ctline
import kd_pcap

TIMEOUT_SLACK_S = 2
EVENT_TIMEOUT_SLACK_S = 1
END_SLACK_S = 1.5


# -- capture vs kernel counters -------------------------------------------------

def packet_tuple(info):
    """The conntrack-style tuple a packet carries, as kd_ctline prints it."""
    if info.proto in (6, 17, 136, 132, 33):
        if info.sport is None:
            return None
        rest = (("sport", str(info.sport)), ("dport", str(info.dport)))
    elif info.proto in (1, 58):
        if info.icmp_type is None or info.inner is not None:
            return None
        rest = (("type", str(info.icmp_type)), ("code", str(info.icmp_code)),
                ("id", str(info.icmp_id)))
    elif info.proto == 47:
        # Without the PPTP helper the kernel keys GRE version 0 on zero keys and
        # version 1 (enhanced GRE) on the call id as destination key.
        if info.gre_version is None:
            return None
        rest = (("srckey", "0x0"), ("dstkey", "0x%x" % (info.gre_callid or 0)))
    else:
        rest = ()
    return ((2 if info.v == 4 else 10), info.proto,
            (("src", str(info.src)), ("dst", str(info.dst))) + rest)


def capture_counts(packets):
    """{(l3num, proto, tuple): [packets, bytes]} over a capture; a fragmented datagram
    counts once, with the length of the reassembled datagram (as conntrack sees it)."""
    counts = collections.defaultdict(lambda: [0, 0])
    frags = {}
    for pk in packets:
        _, ip = kd_pcap.l3_of(pk)
        if ip is None:
            continue
        info = kd_pcap.parse_ip(ip)
        if not info.ok:
            continue
        if info.frag_first or info.frag_later:
            fk = (info.v, str(info.src), str(info.dst), info.ipid)
            f = frags.setdefault(fk, {"tuple": None, "bytes": 0, "hdr": None})
            # Reassembly keeps the first header (IPv6: without the fragment header).
            hdr = info.l4off if info.v == 4 else info.l4off - 8
            f["bytes"] += info.total_len - info.l4off
            if info.frag_first:
                f["tuple"] = packet_tuple(info)
                f["hdr"] = hdr
            continue
        t = packet_tuple(info)
        if t is None:
            continue
        c = counts[t]
        c[0] += 1
        c[1] += info.total_len
    for f in frags.values():
        if f["tuple"] is not None:
            c = counts[f["tuple"]]
            c[0] += 1
            c[1] += f["bytes"] + f["hdr"]
    return counts


def check_counters(res, packets):
    """Kernel counters vs the capture; returns (problems, notes)."""
    counts = capture_counts(packets)
    per_key = collections.defaultdict(lambda: [0, 0, 0, 0, None])
    # A DESTROY after the dump is of an entry the dump already listed.
    destroyed = [e for e in res.events if e["event"] == "DESTROY" and
                 (res.t_dump is None or e["ts"] is None or e["ts"] <= res.t_dump)]
    for r in res.table + destroyed:
        c = r["counters"]
        if c[0] is None or c[1] is None:
            continue
        k = kd_ctline.key(r)
        a = per_key[k]
        a[0] += c[0][0]
        a[1] += c[0][1]
        a[2] += c[1][0]
        a[3] += c[1][1]
        a[4] = r
    problems, notes = [], []
    for k, (po, bo, pr, br, r) in per_key.items():
        co = counts.get((r["l3num"], r["protonum"], r["orig"]), [0, 0])
        cr = counts.get((r["l3num"], r["protonum"], r["reply"]), [0, 0])
        if po > co[0] or pr > cr[0]:
            problems.append("kernel counted more packets than captured for %s: kernel %d/%d, "
                            "capture %d/%d" % (kd_ctline.key_text(k), po, pr, co[0], cr[0]))
        elif po < co[0] or pr < cr[0]:
            notes.append("capture holds packets the kernel did not count for %s: kernel %d/%d, "
                         "capture %d/%d" % (kd_ctline.key_text(k), po, pr, co[0], cr[0]))
        elif (bo, br) != (co[1], cr[1]):
            notes.append("bytes differ for %s: kernel %d/%d, capture %d/%d"
                         % (kd_ctline.key_text(k), bo, br, co[1], cr[1]))
    return problems, notes


# -- running ctrack -----------------------------------------------------------------

def run_ctrack(ctrack, res, timeout=300):
    """Runs `ctrack read` on the run's capture; returns (table, events, error).

    The sysctl file is the router's whole net.netfilter dump, read-only and
    non-conntrack names included (nf_conntrack_count, nf_log.*), as `sysctl -a`
    prints it.  If ctrack refuses a name there, that is noted and the run is
    repeated without the refused names, so that the comparison still happens."""
    sysctls = res.sysctls
    for _ in range(3):
        # --router: the capture was taken on the router, whose conntrack never
        # confirms what it does not forward (TTL 1, link-local, martians)
        cmd = [ctrack, "read", "--format", "extended", "--events", "--router",
               "--sysctl-file", sysctls, res.capture]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as e:
            return [], [], "ctrack could not run: %r" % e
        refused = re.findall(r"'([\w.]+)' is not a conntrack setting", p.stderr)
        if p.returncode != 1 or not refused:
            break
        prefix = refused[0].rsplit(".", 1)[0] + "." if re.search(r"\.\d+$", refused[0]) \
            else refused[0]
        res.notes.append("ctrack refused %s of the router's sysctl dump: ran again without "
                         "%s*" % (refused[0], prefix))
        with open(sysctls) as f:
            lines = [ln for ln in f if not ln.startswith(prefix)]
        sysctls = os.path.join(res.dir, "router-sysctls-for-ctrack.txt")
        with open(sysctls, "w") as f:
            f.writelines(lines)
    with open(res.dir + "/ctrack.txt", "w") as f:
        f.write(p.stdout)
    with open(res.dir + "/ctrack.stderr", "w") as f:
        f.write(p.stderr)
    if p.returncode != 0:
        return [], [], "ctrack exit %d: %s" % (p.returncode, p.stderr.strip()[-400:])
    recs, other = kd_ctline.parse_lines(p.stdout)
    table = [r for r in recs if r["event"] is None]
    events = [r for r in recs if r["event"] is not None]
    return table, events, None


# -- entries ----------------------------------------------------------------------

def _fields(r):
    # use= is the kernel's reference count of the entry (skbs or timers that
    # hold it), not tracking state: shown in diffs, not compared.
    extra = {k: v for k, v in r["extra"].items() if k not in ("id", "use")}
    return {"proto": (r["l3"], r["proto"]), "state": r["state"], "reply": r["reply"],
            "unreplied": r["unreplied"], "flags": r["flags"],
            "orig counters": r["counters"][0], "reply counters": r["counters"][1],
            "trailing fields": extra}


class Diff:
    def __init__(self, name):
        self.name = name
        self.kernel_entries = 0
        self.exact = 0
        self.missing = 0
        self.extra = 0
        self.field_mismatch = 0
        self.expired_by_dump = 0
        self.event_conns = 0
        self.event_matches = 0
        self.lines = []   # the human-readable diff
        self.kinds = collections.Counter()  # mismatches grouped by what differs

    def kinds_text(self):
        return "; ".join("%s x%d" % kv for kv in self.kinds.most_common())

    def ok(self):
        return (self.exact == self.kernel_entries and self.extra == 0
                and self.event_matches == self.event_conns)

    def figures(self):
        pct = 100.0 * self.exact / self.kernel_entries if self.kernel_entries else 100.0
        return ("kernel entries %d, exact %d (%.1f%%), missing %d, field mismatch %d, "
                "extra %d, event sequences %d/%d"
                % (self.kernel_entries, self.exact, pct, self.missing, self.field_mismatch,
                   self.extra, self.event_matches, self.event_conns))


def compare(res, ct_table, ct_events, first_packets=None):
    """first_packets: {(l3num, proto, orig tuple): IpInfo of the first captured packet
    with that tuple}, used to explain extra entries."""
    d = Diff(res.name)
    first_packets = first_packets or {}
    gap = (res.t_dump - res.t_last) if (res.t_dump and res.t_last) else 0.0
    d.kernel_entries = len(res.table)
    ct_by_key = {}
    for c in ct_table:
        ct_by_key.setdefault(kd_ctline.key(c), []).append(c)
    ct_by_rev = {kd_ctline.reversed_key(c): c for c in ct_table}
    matched = set()
    for k in res.table:
        kk = kd_ctline.key(k)
        cs = ct_by_key.get(kk)
        if not cs:
            d.missing += 1
            hint = ""
            if kk in ct_by_rev:
                hint = " (ctrack has it with the directions swapped: %s)" % ct_by_rev[kk]["line"]
            else:
                last = [e for e in ct_events if kd_ctline.key(e) == kk]
                if last:
                    hint = " (ctrack's last event for it: %s)" % last[-1]["line"]
            d.lines.append("MISSING  kernel: %s%s" % (k["line"], hint))
            d.kinds["missing %s %s" % (k["proto"], k["state"] or "")] += 1
            continue
        c = cs.pop(0)
        matched.add(id(c))
        kf, cf = _fields(k), _fields(c)
        diffs = ["%s: kernel %s, ctrack %s" % (f, kf[f], cf[f]) for f in kf if kf[f] != cf[f]]
        if k["timeout"] is not None and c["timeout"] is not None:
            want = c["timeout"] - gap
            if abs(k["timeout"] - want) > TIMEOUT_SLACK_S:
                diffs.append("timeout: kernel %d at the dump, ctrack %d at the last packet "
                             "(%.1f s earlier)" % (k["timeout"], c["timeout"], gap))
        elif (k["timeout"] is None) != (c["timeout"] is None):
            diffs.append("timeout: kernel %s, ctrack %s" % (k["timeout"], c["timeout"]))
        if diffs:
            d.kinds["entry %s: %s" % (k["proto"], ",".join(x.split(":")[0] for x in diffs))] += 1
            d.field_mismatch += 1
            d.lines.append("DIFFER   kernel: %s\n         ctrack: %s\n         %s"
                           % (k["line"], c["line"], "; ".join(diffs)))
        else:
            d.exact += 1
    expired = set()
    for c in ct_table:
        if id(c) in matched:
            continue
        if c["timeout"] is not None and c["timeout"] < gap + 1:
            d.expired_by_dump += 1
            expired.add(kd_ctline.key(c))
            continue
        d.extra += 1
        why = unforwarded_reason(first_packets.get((c["l3num"], c["protonum"], c["orig"])))
        d.lines.append("EXTRA    ctrack: %s%s" % (c["line"], (" (%s)" % why) if why else ""))
        d.kinds["extra %s%s" % (c["proto"], (" (%s)" % why.split(":")[0]) if why else "")] += 1
    _compare_events(d, res, ct_events, expired)
    return d


# -- events ---------------------------------------------------------------------------

def _ev_view(e):
    v = [e["event"], e["state"], "UNREPLIED" if e["unreplied"] else "", " ".join(e["flags"])]
    return tuple(v)


def _ev_equal(a, b):
    if _ev_view(a) != _ev_view(b):
        return False
    if a["event"] != "DESTROY":
        if a["timeout"] is not None and b["timeout"] is not None and \
                abs(a["timeout"] - b["timeout"]) > EVENT_TIMEOUT_SLACK_S:
            return False
    elif a["counters"] != b["counters"] and None not in a["counters"] + b["counters"]:
        return False
    return True


def _seq_equal(ks, cs, t_last):
    if len(ks) == len(cs):
        return all(_ev_equal(a, b) for a, b in zip(ks, cs))
    # One trailing DESTROY more on one side, close to the end of the capture.
    longer, shorter = (ks, cs) if len(ks) > len(cs) else (cs, ks)
    if len(longer) != len(shorter) + 1:
        return False
    last = longer[-1]
    if last["event"] != "DESTROY" or last["ts"] is None or t_last is None:
        return False
    if abs(last["ts"] - t_last) > END_SLACK_S and last["ts"] < t_last:
        return False
    return all(_ev_equal(a, b) for a, b in zip(shorter, longer))


def _event_kind(ks, cs):
    """Says in a few words where two event sequences first part."""
    for i in range(min(len(ks), len(cs))):
        a, b = ks[i], cs[i]
        if _ev_equal(a, b):
            continue
        what = [n for n, x, y in (("event", a["event"], b["event"]),
                                  ("state", a["state"], b["state"]),
                                  ("unreplied", a["unreplied"], b["unreplied"]),
                                  ("flags", a["flags"], b["flags"])) if x != y]
        if not what:
            what = ["counters" if a["event"] == "DESTROY" else "timeout"]
        return "events: %s %s %s differ" % (a["proto"], a["event"], ",".join(what))
    longer = "kernel" if len(ks) > len(cs) else "ctrack"
    extra = (ks if len(ks) > len(cs) else cs)[min(len(ks), len(cs))]
    return "events: only %s has %s %s" % (longer, extra["proto"], extra["event"])


# Multicast groups every Linux router has joined: packets to them (and to the
# limited broadcast) are delivered locally, so their entries are confirmed.
LOCAL_GROUPS = {"224.0.0.1", "ff02::1", "ff02::2", "255.255.255.255"}


def unforwarded_reason(info):
    """Why a router would neither forward nor deliver (so never confirm) a flow's
    first packet; "" when it would.  Linux >= 5.3 treats 0.0.0.0/8 (other than
    0.0.0.0) as unicast, so it is not martian here."""
    if info is None:
        return ""
    local = str(info.dst) in LOCAL_GROUPS
    if info.src.is_loopback or info.dst.is_loopback:
        return "router never forwards it: loopback address"
    if info.src.is_multicast:
        return "router never forwards it: multicast source (martian)"
    if info.dst.is_multicast and not local:
        return "router never forwards it: multicast destination it has not joined"
    if local:
        return ""
    if info.ttl <= 1:
        return "router never forwards it: first packet has TTL/hop limit %d" % info.ttl
    if info.v == 6 and (info.src.is_link_local or info.dst.is_link_local):
        return "router never forwards it: IPv6 link-local address"
    return ""


def first_packets(packets):
    """{(l3num, proto, tuple): IpInfo} of the first packet carrying each tuple."""
    out = {}
    for pk in packets:
        _, ip = kd_pcap.l3_of(pk)
        if ip is None:
            continue
        info = kd_pcap.parse_ip(ip)
        if not info.ok:
            continue
        t = packet_tuple(info)
        if t is not None and t not in out:
            out[t] = info
    return out


def _compare_events(d, res, ct_events, expired):
    kseq = collections.OrderedDict()
    for e in res.events:
        if res.t_dump is not None and e["ts"] is not None and e["ts"] > res.t_dump:
            continue
        kseq.setdefault(kd_ctline.key(e), []).append(e)
    cseq = collections.OrderedDict()
    for e in ct_events:
        cseq.setdefault(kd_ctline.key(e), []).append(e)
    keys = list(kseq) + [k for k in cseq if k not in kseq]
    d.event_conns = len(keys)
    for k in keys:
        ks, cs = kseq.get(k, []), cseq.get(k, [])
        if _seq_equal(ks, cs, res.t_last):
            d.event_matches += 1
            continue
        d.kinds[_event_kind(ks, cs)] += 1
        out = ["EVENTS   %s" % kd_ctline.key_text(k)]
        for i in range(max(len(ks), len(cs))):
            a = ks[i]["line"] if i < len(ks) else "-"
            b = cs[i]["line"] if i < len(cs) else "-"
            mark = "  " if i < len(ks) and i < len(cs) and _ev_equal(ks[i], cs[i]) else "! "
            out.append("       %skernel: %s" % (mark, a))
            out.append("       %sctrack: %s" % (mark, b))
        d.lines.append("\n".join(out))


def kernel_echo(res):
    """ctrack stand-in for testing the comparison itself: the kernel's own result as
    ctrack would print it (timeouts moved back to the last packet, events stamped
    no later than it)."""
    gap = (res.t_dump - res.t_last) if (res.t_dump and res.t_last) else 0.0
    table = []
    for r in res.table:
        c = dict(r)
        if c["timeout"] is not None:
            c["timeout"] = int(c["timeout"] + gap)
        table.append(c)
    events = [e for e in res.events if res.t_dump is None or e["ts"] is None or
              e["ts"] <= res.t_dump]
    return table, events
