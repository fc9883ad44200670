# SPDX-License-Identifier: BSD-3-Clause
"""kd_ctline: conntrack's text lines, read and written.

Both sides of the comparison speak the text of conntrack-tools: the kernel's
table comes from `conntrack -L -o extended`, ctrack prints the same format, and
events are lines of `conntrack -E -o timestamp,extended` (the harness's own
netlink reader writes them in that format too, see kd_events.py).  Comparing
parsed records instead of strings lets the harness say which field differs and
allow for what must differ (the timeout, read at different moments).

A record is a dict:
  l3, l3num, proto, protonum    "ipv4", 2, "tcp", 6
  timeout                       seconds left, or None (DESTROY events have none)
  state                         "ESTABLISHED", ... or None (not TCP/SCTP/DCCP)
  orig, reply                   tuples: tuple of (key, value) strings in order
                                (src, dst, sport, dport / type, code, id / ...)
  counters                      [(packets, bytes) or None, same for reply]
  flags                         sorted tuple of bracketed flags other than
                                [UNREPLIED]: ("ASSURED",), ...
  unreplied                     True when [UNREPLIED] was printed
  extra                         dict of the key=value fields after the reply
                                tuple (mark, zone, use, id, ...)
  event, ts                     for event lines: "NEW"/"UPDATE"/"DESTROY" and
                                the timestamp in seconds (float); else None
  line                          the text it came from
"""

import re

_EVENT_RE = re.compile(r"^\s*(?:\[(\d+)\.(\d+)\]\s*)?\[(NEW|UPDATE|DESTROY)\]\s+(.*)$")
_TUPLE_KEYS = {"src", "dst", "sport", "dport", "type", "code", "id", "srckey", "dstkey",
               "zone-orig", "zone-reply"}
_COUNTER_KEYS = {"packets", "bytes"}


class ParseError(ValueError):
    pass


def parse_line(line):
    """Parses one table or event line; returns a record dict or None for a non-entry line."""
    text = line.rstrip("\n")
    event = ts = None
    m = _EVENT_RE.match(text)
    body = text
    if m:
        if m.group(1) is not None:
            ts = int(m.group(1)) + int(m.group(2)) / (10 ** len(m.group(2)))
        event = m.group(3)
        body = m.group(4)
    toks = body.split()
    if len(toks) < 4 or not toks[1].isdigit() or not toks[3].isdigit():
        return None
    rec = {
        "l3": toks[0], "l3num": int(toks[1]), "proto": toks[2], "protonum": int(toks[3]),
        "timeout": None, "state": None, "orig": (), "reply": (), "counters": [None, None],
        "flags": (), "unreplied": False, "extra": {}, "event": event, "ts": ts, "line": text,
    }
    i = 4
    if i < len(toks) and toks[i].isdigit():
        rec["timeout"] = int(toks[i])
        i += 1
    if i < len(toks) and "=" not in toks[i] and not toks[i].startswith("["):
        rec["state"] = toks[i]
        i += 1
    tuples = [[], []]
    counters = [{}, {}]
    flags = []
    cur = -1
    for t in toks[i:]:
        if t.startswith("[") and t.endswith("]"):
            f = t[1:-1]
            if f == "UNREPLIED":
                rec["unreplied"] = True
            else:
                flags.append(f)
            continue
        if "=" not in t:
            raise ParseError("unexpected token %r in %r" % (t, text))
        k, v = t.split("=", 1)
        if k == "src" and cur < 1:
            cur += 1
        if k in _TUPLE_KEYS and 0 <= cur <= 1 and not (k == "id" and _after_reply(tuples, cur)):
            tuples[cur].append((k, v))
        elif k in _COUNTER_KEYS and 0 <= cur <= 1:
            counters[cur][k] = int(v)
        else:
            rec["extra"][k] = v
            if cur == 1:
                cur = 2  # past the reply tuple: later keys are trailing fields
    if cur < 0:
        raise ParseError("no tuple in %r" % text)
    rec["orig"] = tuple(tuples[0])
    rec["reply"] = tuple(tuples[1])
    for d in (0, 1):
        if counters[d]:
            rec["counters"][d] = (counters[d].get("packets"), counters[d].get("bytes"))
    rec["flags"] = tuple(sorted(flags))
    return rec


def _after_reply(tuples, cur):
    # "id=" is part of an ICMP tuple, but conntrack's "-o id" prints the
    # entry's id after the reply tuple: an id when the reply tuple already has
    # one (or has no ICMP type) is the entry's.
    t = tuples[cur]
    keys = [k for k, _ in t]
    return cur == 1 and ("id" in keys or "type" not in keys)


def parse_lines(text):
    """Parses many lines; returns (records, unparsed_lines)."""
    recs, other = [], []
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            r = parse_line(line)
        except ParseError:
            r = None
        if r is None:
            other.append(line)
        else:
            recs.append(r)
    return recs, other


def key(rec):
    """The identity of a connection: family, protocol, original tuple, zone."""
    return (rec["l3num"], rec["protonum"], rec["orig"], rec["extra"].get("zone"))


def key_text(k):
    l3num, protonum, orig, zone = k
    s = "%s %s %s" % ({2: "ipv4", 10: "ipv6"}.get(l3num, str(l3num)), protonum,
                      " ".join("%s=%s" % kv for kv in orig))
    return s + (" zone=%s" % zone if zone else "")


def reversed_key(rec):
    return (rec["l3num"], rec["protonum"], rec["reply"], rec["extra"].get("zone"))


def fmt_record(rec, with_ts=True):
    """Writes a record back in conntrack's layout (used for the kernel event log)."""
    out = []
    if rec.get("event"):
        if with_ts and rec.get("ts") is not None:
            sec = int(rec["ts"])
            usec = int(round((rec["ts"] - sec) * 1e6))
            if usec >= 1000000:
                sec, usec = sec + 1, usec - 1000000
            out.append("[%d.%06d]\t" % (sec, usec))
        out.append("%9s " % ("[%s]" % rec["event"]))
    out.append("%-8s %u " % (rec["l3"], rec["l3num"]))
    out.append("%-8s %u " % (rec["proto"], rec["protonum"]))
    if rec["timeout"] is not None:
        out.append("%u " % rec["timeout"])
    if rec["state"]:
        out.append("%s " % rec["state"])
    for d, tup in ((0, rec["orig"]), (1, rec["reply"])):
        out.append("".join("%s=%s " % kv for kv in tup))
        c = rec["counters"][d]
        if c:
            out.append("packets=%d bytes=%d " % c)
        if d == 0 and rec["unreplied"]:
            out.append("[UNREPLIED] ")
    for f in rec["flags"]:
        out.append("[%s] " % f)
    for k, v in rec["extra"].items():
        out.append("%s=%s " % (k, v))
    return "".join(out).rstrip()
