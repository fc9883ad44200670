#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# test_cli_errors.sh CTRACK PCAPS_DIR CAPTURES_DIR - bad input gets a clear
# message and the documented exit code (see `ctrack read --help`: 1 usage,
# 2 unreadable input, 3 damaged input), and never a crash.  The damaged
# files come from ../shared/pcaps (those cases SKIP where it is absent) and
# from the project's own tests/captures/crafted (craft.py).
set -u
CT=$1
PCAPS=$2
OWN=$3/crafted
. "$(dirname "$0")/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run() { # run EXPECTED_RC STDERR_PATTERN ARGS... -> checks rc and message
	want=$1; pat=$2; shift 2
	"$CT" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "# expected exit $want, got $rc for: $*" >&2
		sed 's/^/# /' "$tmp/err" >&2
		return 1
	fi
	if [ -n "$pat" ] && ! grep -q -- "$pat" "$tmp/err"; then
		echo "# stderr lacks '$pat' for: $*" >&2
		sed 's/^/# /' "$tmp/err" >&2
		return 1
	fi
	return 0
}

ok_if "no arguments is a usage error" run 1 "usage" 
ok_if "unknown command is named" run 1 "unknown command 'frobnicate'" frobnicate
ok_if "unknown option is a usage error" run 1 "Try 'ctrack read --help'" read --bogus x.pcap
ok_if "read without a file is a usage error" run 1 "no capture file" read
ok_if "unknown format is named" run 1 "unknown format 'xml'" read -o xml x.pcap
ok_if "unknown --set name is named" run 1 "nf_conntrack_bogus' is not a conntrack setting" read --set nf_conntrack_bogus=1 x.pcap
ok_if "bad --set value is named" run 1 "'yes' needs a non-negative decimal number" read --set nf_conntrack_tcp_loose=yes x.pcap
ok_if "out-of-range boolean is named" run 1 "'2' must be 0 or 1" read --set net.netfilter.nf_conntrack_checksum=2 x.pcap
ok_if "read-only kernel knob cannot be set" run 1 "read-only" read --set nf_conntrack_count=5 x.pcap
ok_if "--set without = is a usage error" run 1 "needs NAME=VALUE" read --set nf_conntrack_acct x.pcap
ok_if "missing sysctl file is named" run 1 "$tmp/nope.conf" read --sysctl-file "$tmp/nope.conf" x.pcap
printf 'net.netfilter.nf_conntrack_udp_timeout = 40\nnet.netfilter.nf_conntrack_frobs = 1\n' >"$tmp/bad.conf"
ok_if "unknown name in sysctl file names file and line" run 1 "bad.conf:2: 'net.netfilter.nf_conntrack_frobs'" read --sysctl-file "$tmp/bad.conf" x.pcap
ok_if "unknown --zone-by is named" run 1 "unknown --zone-by 'mac'" read --zone-by mac x.pcap
ok_if "missing file: message and exit 2" run 2 "nope.pcap: No such file or directory" read "$tmp/nope.pcap"
ok_if "directory: message and exit 2" run 2 "is a directory" read "$tmp"
: >"$tmp/empty.pcap"
ok_if "empty file: message and exit 2" run 2 "empty" read "$tmp/empty.pcap"
printf 'hello, this is not a capture file\n' >"$tmp/text.pcap"
ok_if "non-capture file: message and exit 2" run 2 "not a capture file" read "$tmp/text.pcap"
if [ -d "$PCAPS" ]; then
	head -c 30 "$PCAPS/zeek__ssh.pcap" >"$tmp/short.pcap"
fi
shared_ok_if "file cut inside the first record: exit 3 with where" run 3 "cut short" read "$tmp/short.pcap"
# 239 bytes: a 24-byte header, one whole record, then 2 stray bytes of the
# next record header (libpcap: "tried to read 16 header bytes, only got 2")
shared_ok_if "the file that ends mid-record: exit 3, says where" run 3 "record 2 (byte offset 237)" read "$PCAPS/ndpi__fuzz-2021-10-13.pcap"
shared_ok_if "record claiming 4 MB: exit 3, what was read is listed" run 3 "record 7" read "$PCAPS/suricata__tls_DER-incomplete-header.pcap"
shared_ok_if "a missing file among good ones: exit 2, others still read" run 2 "nope.pcap" read "$PCAPS/zeek__ssh.pcap" "$tmp/nope.pcap"
# the same over the project's own captures (tests/captures/README.md)
head -c 30 "$OWN/link-vlan3.pcap" >"$tmp/own-short.pcap"
ok_if "own: file cut inside the first record: exit 3 with where" run 3 "cut short" read "$tmp/own-short.pcap"
# 102 bytes: the 24-byte header, a 16-byte record header and a 60-byte
# frame, then 2 bytes of the next record header (craft.py)
ok_if "own: the file that ends mid-record: exit 3, says where" run 3 "record 2 (byte offset 100)" read "$OWN/file-cut-record-header.pcap"
ok_if "own: record claiming 4 MB: exit 3, what was read is listed" sh -c '"$1" read "$2" >"$3/out" 2>"$3/err"; [ $? -eq 3 ] && grep -q "record 7" "$3/err" && [ "$(grep -c "^tcp" "$3/out")" -eq 1 ]' sh "$CT" "$OWN/file-record-4mb.pcap" "$tmp"
ok_if "own: a missing file among good ones: exit 2, others still read" sh -c '"$1" read "$2" "$3/nope.pcap" >"$3/out" 2>"$3/err"; [ $? -eq 2 ] && grep -q "nope.pcap" "$3/err" && grep -q "sport=40001" "$3/out"' sh "$CT" "$OWN/link-vlan3.pcap" "$tmp"
ok_if "--help exits 0" run 0 "" read --help
ok_if "help text documents exit codes" grep -q "Exit status" "$tmp/out"
finish
