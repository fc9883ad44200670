# SPDX-License-Identifier: BSD-3-Clause
"""ipfix_tcp_collector.py PORT - an IPFIX collecting process over TCP
made of python3-ipfix (Debian's, by Brian Trammell, an author of RFC 7011
and RFC 5103): accept one connection on 127.0.0.1:PORT, decode the message
stream with python3-ipfix's reader and information model (IANA and the
RFC 5103 reverse elements), print each data record as one JSON object of
its elements by name, and exit at the end of the stream.

Its own `ipfix2csv --collect tcp` does the same but keeps only records
that hold every column asked for (IPv4 and IPv6 records differ); this
prints every record whole.  Run it with Debian's python3, which sees
python3-ipfix.  It prints "listening" once it listens.
"""
import datetime
import ipaddress
import json
import socket
import sys

import ipfix.ie
import ipfix.reader

ipfix.ie.use_iana_default()
ipfix.ie.use_5103_default()


def plain(v):
    if isinstance(v, datetime.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=datetime.timezone.utc)
        return int(v.timestamp() * 1000 + 0.5)
    if isinstance(v, (ipaddress.IPv4Address, ipaddress.IPv6Address)):
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    return v


ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", int(sys.argv[1])))
ls.listen(1)
print("listening", flush=True)
ls.settimeout(120)
conn, _ = ls.accept()
conn.settimeout(120)
stream = conn.makefile("rb")
r = ipfix.reader.from_stream(stream)
for rec in r.namedict_iterator():
    print(json.dumps({k: plain(v) for k, v in rec.items()}), flush=True)
