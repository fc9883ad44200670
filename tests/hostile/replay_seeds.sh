#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# replay_seeds.sh SEEDGEN REPLAY PCAPS_DIR
# replay_seeds.sh SEEDGEN REPLAY --own CAPTURES_DIR
# Write fuzz_track programs from every capture (fuzz/seedgen_track.c) and
# run them through the harness's invariant checks (fuzz/replay_main.c
# prints one TAP line per program).  The captures are those of PCAPS_DIR
# (../shared/pcaps: where it is absent the whole run is one TAP skip), or
# with --own the project's: tests/captures/crafted, each kernel recording
# (tests/captures/kernel/NAME/capture.pcap, linked as kernel-NAME.pcap so
# that their programs get distinct names) and samples/sample.pcap.
set -u
seedgen=$1
replay=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ "$3" = --own ]; then
	caps=$(cd "$4" && pwd)
	mkdir "$tmp/in"
	for d in "$caps"/kernel/*/; do
		ln -s "$d/capture.pcap" "$tmp/in/kernel-$(basename "$d").pcap"
	done
	ln -s "$caps/../../samples/sample.pcap" "$tmp/in/sample.pcap"
	for f in "$caps"/crafted/*; do
		ln -s "$f" "$tmp/in/$(basename "$f")"
	done
	pcaps=$tmp/in
	mkdir "$tmp/out"
	out=$tmp/out
else
	pcaps=$3
	out=$tmp
	if [ ! -d "$pcaps" ]; then
		echo "1..0 # SKIP no ../shared/pcaps ($pcaps)"
		exit 0
	fi
fi
find "$pcaps" -maxdepth 1 \( -type f -o -type l \) \( -name '*.pcap' -o -name '*.pcapng' -o -name '*.cap' \) |
	sort | xargs "$seedgen" "$out" 2>/dev/null || { echo "not ok 1 - seedgen_track wrote nothing"; echo "1..1"; exit 1; }
# not exec: the EXIT trap must still remove $tmp
"$replay" "$out"
