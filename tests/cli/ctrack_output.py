# SPDX-License-Identifier: BSD-3-Clause
"""ctrack_output.py - what two `ctrack read` runs on the same input may
differ in, taken out so that their outputs can be compared (used by
test_burst_equivalence.py and test_mapped_equivalence.py).

The conntrack id is a keyed hash of the entry's address with a random key
(as the kernel's), so ids are removed; the table (listed by first packet,
then id) is compared as a set; DESTROY events of one collector pass with
equal expiry times (ordered by id) are compared as a set.  Events in
either output format (JSON or `conntrack -E -o timestamp`) and every
other line keep their order.
"""
import re


def event_time(line):
    m = re.match(r'\{"event":"\w+","time":([0-9.]+)', line) or \
        re.match(r'\[([0-9.]+)\]', line)
    return m.group(1) if m else None


def is_destroy(line):
    return '"destroy"' in line or "[DESTROY]" in line


def normalise(text):
    events, table, other = [], [], []
    for line in text.splitlines(keepends=True):
        line = re.sub(r'"id":[0-9]+,', "", line)
        if event_time(line) is not None:
            events.append(line)
        elif line.startswith("{") or re.match(
                r"^(ipv4|ipv6|tcp|udp|udplite|icmp|icmpv6|sctp|gre|unknown)\s", line):
            table.append(line)
        else:
            other.append(line)
    out, i = [], 0
    while i < len(events):
        j = i + 1
        if is_destroy(events[i]):
            while (j < len(events) and is_destroy(events[j]) and
                   event_time(events[j]) == event_time(events[i])):
                j += 1
        out += sorted(events[i:j])
        i = j
    return "".join(out) + "".join(sorted(table)) + "".join(other)
