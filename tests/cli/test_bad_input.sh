#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# test_bad_input.sh CTRACK PCAPS_DIR CAPTURES_DIR - hostile and broken input
# to `ctrack read`, beyond test_cli_errors.sh: every deliberately broken
# capture of the corpus (../shared/pcaps; those cases SKIP where it is
# absent) and of the project's own (tests/captures/crafted), files crafted
# with absurd record and block lengths
# (craft_captures.py), gzip streams cut short or corrupt, pipes written in
# pieces or abandoned mid-record, a file that grows or is truncated while
# being read, an output that cannot be written, and bad --set values.
#
# Each case must give a clear message on stderr, the exit code `ctrack read
# --help` documents (1 usage, 2 unreadable, 3 damaged or cut short, 4
# internal or output error) and, where packets were read, the table of what
# was read.  No case may crash: a signal, or a sanitizer report on stderr
# ("runtime error", "AddressSanitizer") when the tool is built with
# -Db_sanitize=address,undefined, fails the case.
set -u
CT=$1
PCAPS=$2
CAPTURES=$3
OWN=$CAPTURES/crafted
here=$(dirname "$0")
. "$here/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$here/craft_captures.py" "$tmp/c" || { echo "not ok 1 - craft_captures.py"; echo "1..1"; exit 1; }
C=$tmp/c
# the one flow every crafted file starts with
FLOW='src=10.0.0.1 dst=10.0.0.2 sport=1234 dport=53'

clean_stderr() {
	if grep -Eq 'runtime error|AddressSanitizer|LeakSanitizer|Segmentation' "$tmp/err"; then
		echo "# sanitizer or crash report:" >&2
		sed 's/^/# /' "$tmp/err" | head -n 20 >&2
		return 1
	fi
	return 0
}

# run EXPECTED_RC STDERR_PATTERN ARGS... : exit code, message, no crash
run() {
	want=$1; pat=$2; shift 2
	"$CT" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "# expected exit $want, got $rc for: $*" >&2
		sed 's/^/# /' "$tmp/err" | head -n 5 >&2
		return 1
	fi
	if [ -n "$pat" ] && ! grep -q -- "$pat" "$tmp/err"; then
		echo "# stderr lacks '$pat' for: $*" >&2
		sed 's/^/# /' "$tmp/err" | head -n 5 >&2
		return 1
	fi
	clean_stderr
}

# listed PATTERN: the table printed on stdout holds PATTERN
listed() {
	grep -q -- "$1" "$tmp/out" || { echo "# no '$1' in the listing" >&2; return 1; }
}

# run_listed RC PATTERN FILE: exit RC with message PATTERN, and the good
# packet read before the damage is in the table
run_listed() {
	run "$1" "$2" read "$3" && listed "$FLOW"
}

# --- the corpus' deliberately broken captures (pcaps/SOURCES.md) ---
shared_ok_if "fuzz-2021-10-13 (ends mid-record): exit 3, says where" \
	run 3 "record 2 (byte offset 237)" read --stats "$PCAPS/ndpi__fuzz-2021-10-13.pcap"
# (its packets carry offloaded checksums: checked, they would all be INVALID)
shared_ok_if "tls_DER-incomplete-header (4 MB record): exit 3, the 6 packets before it listed" \
	sh -c '"$1" read --set nf_conntrack_checksum=0 "$2" >"$3/out" 2>"$3/err"; [ $? -eq 3 ] &&
	       grep -q "record 7" "$3/err" && grep -q "^tcp" "$3/out"' \
	sh "$CT" "$PCAPS/suricata__tls_DER-incomplete-header.pcap" "$tmp"
shared_ok_if "ipv4_invalid_hdr_length: exit 0, the packet is INVALID by its reason" \
	sh -c '"$1" read --stats --no-table "$2" >"$3/out" 2>"$3/err" && grep -q "ip_bad_hdr_len=1" "$3/out"' \
	sh "$CT" "$PCAPS/tcpdump__ipv4_invalid_hdr_length.pcap" "$tmp"
shared_ok_if "ipv6_invalid_length: exit 0, the packet is INVALID (truncated)" \
	sh -c '"$1" read --stats --no-table "$2" >"$3/out" 2>"$3/err" && grep -q "invalid=1" "$3/out"' \
	sh "$CT" "$PCAPS/tcpdump__ipv6_invalid_length.pcap" "$tmp"
for f in ndpi__badpackets.pcap ndpi__ip_fragmented_garbage.pcap suricata__frag-22.pcap \
	 zeek__timestamp.pcap zeek__truncated-header.pcap zeek__retransmit-fast009.pcap \
	 ndpi__gnutella.pcap suricata__denial6-6.pcap; do
	shared_ok_if "$f (malformed or snaplen-cut packets in a sound file): exit 0, listed, no crash" \
		sh -c '"$1" read --stats "$2" >"$3/out" 2>"$3/err" && grep -q "^entries=" "$3/out" &&
		       ! grep -Eq "runtime error|AddressSanitizer" "$3/err"' sh "$CT" "$PCAPS/$f" "$tmp"
done

# --- the project's own broken captures (tests/captures/craft.py) ---
ok_if "own: file-cut-record-header (ends mid-record): exit 3, says where" \
	run 3 "record 2 (byte offset 100)" read --stats "$OWN/file-cut-record-header.pcap"
# (the client sent SYN, ACK, data, ACK; the server SYN/ACK and data)
ok_if "own: file-record-4mb (4 MB record): exit 3, the 6 packets before it listed" \
	sh -c '"$1" read "$2" >"$3/out" 2>"$3/err"; [ $? -eq 3 ] &&
	       grep -q "record 7" "$3/err" && grep -q "^tcp .* packets=4 .* packets=2 " "$3/out"' \
	sh "$CT" "$OWN/file-record-4mb.pcap" "$tmp"
ok_if "own: ip4-ihl4: exit 0, the packet is INVALID by its reason" \
	sh -c '"$1" read --stats --no-table "$2" >"$3/out" 2>"$3/err" && grep -q "ip_bad_hdr_len=1" "$3/out"' \
	sh "$CT" "$OWN/ip4-ihl4.pcap" "$tmp"
ok_if "own: ip6-cut-header: exit 0, the packet is INVALID (truncated)" \
	sh -c '"$1" read --stats --no-table "$2" >"$3/out" 2>"$3/err" && grep -q "invalid=1" "$3/out" &&
	       grep -q "ip_truncated=1" "$3/out"' sh "$CT" "$OWN/ip6-cut-header.pcap" "$tmp"
for f in ip-total-len-beyond-frame.pcap frag-af-spray.pcap frag-overlap.pcap frag-ip6-first.pcap \
	 tcp-snaplen-cut.pcap tcp-out-of-window.pcap link-short-frames.pcap link-mpls.pcap \
	 ip6-jumbo.pcap.gz ng-mixed-links.pcapng; do
	ok_if "own: $f (malformed or snaplen-cut packets in a sound file): exit 0, listed, no crash" \
		sh -c '"$1" read --stats "$2" >"$3/out" 2>"$3/err" && grep -q "^entries=" "$3/out" &&
		       ! grep -Eq "runtime error|AddressSanitizer" "$3/err"' sh "$CT" "$OWN/$f" "$tmp"
done

# --- classic pcap with absurd record lengths and headers ---
ok_if "record claiming 4 GiB: exit 3, names the length, lists what came before" \
	run_listed 3 "invalid packet capture length 4294967280" "$C/huge-caplen.pcap"
ok_if "big-endian file, record claiming 4 MB: exit 3" \
	run_listed 3 "record 2" "$C/big-endian-cut.pcap"
ok_if "cut inside a record header: exit 3, says where" \
	run_listed 3 "record 2 (byte offset 87)" "$C/cut-inside-record-header.pcap"
ok_if "cut inside a packet: exit 3" run_listed 3 "cut short" "$C/cut-inside-packet.pcap"
ok_if "record longer than the file's snaplen: read, exit 0" \
	run_listed 0 "" "$C/caplen-over-snaplen.pcap"
ok_if "record of 0 captured bytes: exit 0, counted invalid (link truncated)" \
	sh -c '"$1" read --stats "$2" >"$3/out" 2>"$3/err" && grep -q "link_truncated=1" "$3/out"' \
	sh "$CT" "$C/caplen-zero.pcap" "$tmp"
ok_if "wire length below captured length: exit 0" run_listed 0 "" "$C/wirelen-below-caplen.pcap"
ok_if "snaplen 0 in the file header: exit 0" run_listed 0 "" "$C/snaplen-zero.pcap"
ok_if "file header only, no records: exit 0, empty table" \
	sh -c '"$1" read "$2" >"$3/out" 2>"$3/err" && [ ! -s "$3/out" ]' sh "$CT" "$C/header-only.pcap" "$tmp"
ok_if "file header cut short: exit 2" run 2 "not a readable pcap file" read "$C/short-global-header.pcap"
ok_if "unknown pcap version: exit 2, names it" run 2 "version 9.9" read "$C/bad-version.pcap"
ok_if "unknown link type: warned once, exit 0" run 0 "link type 147 is not supported" read "$C/unknown-linktype.pcap"
ok_if "timestamps at the 32-bit limit, bad fraction, then backwards: exit 0, all listed" \
	sh -c '"$1" read "$2" >"$3/out" 2>"$3/err" && [ "$(grep -c src= "$3/out")" -eq 3 ]' \
	sh "$CT" "$C/ts-extremes.pcap" "$tmp"

# --- pcapng blocks ---
ok_if "pcapng block shorter than a block header: exit 3" \
	run_listed 3 "impossible length" "$C/ng-block-len-small.pcapng"
ok_if "pcapng block length not a multiple of 4: exit 3" \
	run_listed 3 "impossible length" "$C/ng-block-len-unaligned.pcapng"
ok_if "pcapng block claiming 2 GiB: exit 3, no giant allocation" \
	run_listed 3 "impossible length" "$C/ng-block-len-huge.pcapng"
ok_if "pcapng trailing length mismatch: exit 3" \
	run_listed 3 "trailing length" "$C/ng-trailer-mismatch.pcapng"
ok_if "pcapng packet longer than its block: exit 3" \
	run_listed 3 "more bytes than it holds" "$C/ng-epb-caplen-over-block.pcapng"
ok_if "pcapng packet on an undescribed interface: exit 3" \
	run_listed 3 "never described" "$C/ng-undefined-interface.pcapng"
ok_if "pcapng cut inside a block: exit 3, says which block" \
	run_listed 3 "block at byte offset 128" "$C/ng-cut-inside-block.pcapng"
ok_if "pcapng section header with a bad byte-order magic: unreadable, exit 2" \
	run 2 "byte-order magic" read "$C/ng-bad-byte-order.pcapng"
ok_if "pcapng simple packet before any interface: exit 3" \
	run 3 "without interface" read "$C/ng-simple-packet-no-iface.pcapng"
ok_if "pcapng section header only: exit 0, empty table" \
	sh -c '"$1" read "$2" >"$3/out" 2>"$3/err" && [ ! -s "$3/out" ]' sh "$CT" "$C/ng-shb-only.pcapng" "$tmp"
ok_if "pcapng option running past its block: ignored, exit 0" \
	run_listed 0 "" "$C/ng-option-overruns-block.pcapng"
ok_if "pcapng absurd time resolutions (10^-127 s, 2^-127 s): exit 0, listed" \
	run_listed 0 "" "$C/ng-tsresol-absurd.pcapng"
ok_if "pcapng largest time offset and timestamp: exit 0, the packet listed" \
	run_listed 0 "" "$C/ng-tsoffset-extreme.pcapng"
ok_if "pcapng most negative time offset: exit 0, the packet listed" \
	run_listed 0 "" "$C/ng-tsoffset-negative.pcapng"

# --- gzip ---
ok_if "gzip capture read whole: exit 0" run_listed 0 "" "$C/gz-good.pcap.gz"
ok_if "gzip stream cut short just before its end marker: exit 3, what was read listed" \
	run_listed 3 "cut short" "$C/gz-cut.pcap.gz"
ok_if "gzip stream cut in the middle: exit 3, what was read listed" \
	run_listed 3 "cut short" "$C/gz-cut-mid.pcap.gz"
ok_if "gzip stream of garbage: exit 2, says the gzip data is damaged" \
	run 2 "gzip" read "$C/gz-garbage.pcap.gz"
ok_if "gzip of a text file: exit 2, not a capture" run 2 "not a capture file" read "$C/gz-of-text.pcap.gz"

# --- files that are not captures ---
ok_if "an executable: exit 2, shows its first bytes" run 2 "starts with 7f 45 4c 46" read "$CT"
ok_if "/dev/null: exit 2, empty" run 2 "empty" read /dev/null
ok_if "empty standard input: exit 2" sh -c '"$1" read - </dev/null 2>"$2/err"; [ $? -eq 2 ] && grep -q empty "$2/err"' sh "$CT" "$tmp"
ok_if "a capture on standard input: exit 0, listed" \
	sh -c '"$1" read - <"$2" | grep -q "$3"' sh "$CT" "$C/good.pcap" "$FLOW"
if [ "$(id -u)" != 0 ]; then
	cp "$C/good.pcap" "$tmp/noperm.pcap" && chmod 000 "$tmp/noperm.pcap"
	ok_if "unreadable file: exit 2, says why" run 2 "Permission denied" read "$tmp/noperm.pcap"
fi
# (good-many.pcap: 400 flows a second apart; those of its last 30 s are live)
ok_if "a damaged file then a good one: exit 3, both read (1 + 400 frames)" \
	sh -c '"$1" read --stats "$2" "$3" >"$4/out" 2>"$4/err"; [ $? -eq 3 ] &&
	       grep -q "huge-caplen.pcap: damaged" "$4/err" && grep -q "sport=1399 " "$4/out" &&
	       grep -q "frames=401 " "$4/out"' sh "$CT" "$C/huge-caplen.pcap" "$C/good-many.pcap" "$tmp"

# --- pipes, growing and shrinking files ---
mkfifo "$tmp/fifo"
# written in three pieces, one of them splitting a record, with pauses
( head -c 30 "$C/good-many.pcap"; sleep 0.2; tail -c +31 "$C/good-many.pcap" | head -c 5000;
  sleep 0.2; tail -c +5031 "$C/good-many.pcap" ) >"$tmp/fifo" &
"$CT" read "$tmp/fifo" >"$tmp/fifo.out" 2>"$tmp/err"; rc=$?
wait
"$CT" read "$C/good-many.pcap" >"$tmp/file.out" 2>/dev/null
ok_if "a pipe written in pieces: exit 0, the same table as the file" \
	sh -c '[ "$1" -eq 0 ] && cmp -s "$2" "$3"' sh "$rc" "$tmp/fifo.out" "$tmp/file.out"
# the writer gives up in the middle of a record
( head -c 1000 "$C/good-many.pcap" ) >"$tmp/fifo" &
"$CT" read "$tmp/fifo" >"$tmp/out" 2>"$tmp/err"; rc=$?
wait
ok_if "a pipe abandoned mid-record: exit 3, what was read listed" \
	sh -c '[ "$1" -eq 3 ] && grep -q "cut short" "$2/err" && grep -q "sport=1000 " "$2/out"' sh "$rc" "$tmp"

# A large capture, grown or truncated while ctrack reads it: the corpus'
# 6.8 MB one inflated (where ../shared/pcaps is), and the project's own 2.8 MB
# one (craft.py --big: 40,000 records).  When ctrack meets the change is up
# to the scheduler, so either outcome is right - read whole (0) or cut short
# (3) - but never a crash, a wild read (SIGBUS) or silence about the cut.
grow_and_shrink() { # grow_and_shrink LABEL BIG_FILE
	size=$(wc -c <"$2")
	half=$((size / 2 + 7))
	head -c "$half" "$2" >"$tmp/grow.pcap"
	"$CT" read --stats "$tmp/grow.pcap" >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	tail -c +"$((half + 1))" "$2" >>"$tmp/grow.pcap"
	wait $pid; rc=$?
	ok_if "${1}a file that grows while read: exit 0 or 3 (with where), table printed" \
		sh -c '{ [ "$1" -eq 0 ] || { [ "$1" -eq 3 ] && grep -q "cut short" "$2/err"; }; } &&
		       grep -q "^entries=" "$2/out" && ! grep -Eq "runtime error|AddressSanitizer" "$2/err"' \
		sh "$rc" "$tmp"
	cp "$2" "$tmp/shrink.pcap"
	"$CT" read --stats "$tmp/shrink.pcap" >"$tmp/out" 2>"$tmp/err" &
	pid=$!
	truncate -s 1000003 "$tmp/shrink.pcap"
	wait $pid; rc=$?
	ok_if "${1}a file truncated while read: exit 0 or 3 (with where), table printed" \
		sh -c '{ [ "$1" -eq 0 ] || { [ "$1" -eq 3 ] && grep -q "cut short" "$2/err"; }; } &&
		       grep -q "^entries=" "$2/out" && ! grep -Eq "runtime error|AddressSanitizer" "$2/err"' \
		sh "$rc" "$tmp"
}
if [ -d "$PCAPS" ]; then
	gzip -dc "$PCAPS/zeek__echo-connections.pcap.gz" >"$tmp/big.pcap"
	grow_and_shrink "" "$tmp/big.pcap"
else
	skip_case "a file that grows while read: exit 0 or 3 (with where), table printed" \
		"no ../shared/pcaps ($PCAPS)"
	skip_case "a file truncated while read: exit 0 or 3 (with where), table printed" \
		"no ../shared/pcaps ($PCAPS)"
fi
python3 "$CAPTURES/craft.py" --big "$tmp/own-big.pcap"
grow_and_shrink "own: " "$tmp/own-big.pcap"

# --- output that cannot be written ---
if [ -w /dev/full ]; then
	ok_if "stdout on a full device: exit 4, says so" \
		sh -c '"$1" read --stats "$2" >/dev/full 2>"$3/err"; [ $? -eq 4 ] &&
		       grep -q "error writing the output" "$3/err"' sh "$CT" "$C/good-many.pcap" "$tmp"
fi

# --- options ---
G=$C/good.pcap
ok_if "--set with an empty value: exit 1, names it" run 1 "'' needs a non-negative decimal number" read --set nf_conntrack_max= "$G"
ok_if "--set with a negative value: exit 1" run 1 "'-1' needs a non-negative decimal number" read --set nf_conntrack_max=-1 "$G"
ok_if "--set with a value past 64 bits: exit 1" run 1 "'99999999999999999999'" read --set nf_conntrack_max=99999999999999999999 "$G"
ok_if "--set with trailing junk: exit 1" run 1 "'12abc'" read --set nf_conntrack_max=12abc "$G"
ok_if "--set with a hexadecimal value: exit 1" run 1 "'0x10'" read --set nf_conntrack_max=0x10 "$G"
ok_if "--set timeout beyond ten years: exit 1, gives the range" run 1 "out of range" read --set nf_conntrack_udp_timeout=999999999 "$G"
ok_if "--set without a name: exit 1" run 1 "needs NAME=VALUE" read --set =5 "$G"
ok_if "-o without its argument: exit 1" run 1 "Try 'ctrack read --help'" read "$G" -o
ok_if "--zone-by without its argument: exit 1" run 1 "Try 'ctrack read --help'" read "$G" --zone-by
ok_if "--sysctl-file that is a directory: exit 1" run 1 "" read --sysctl-file "$tmp" "$G"
finish
