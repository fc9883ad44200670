#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# replay_seeds.sh SEEDGEN REPLAY PCAPS_DIR - write fuzz_track programs from
# every capture (fuzz/seedgen_track.c) and run them through the harness's
# invariant checks (fuzz/replay_main.c prints one TAP line per program).
set -u
seedgen=$1
replay=$2
pcaps=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
find "$pcaps" -maxdepth 1 -type f \( -name '*.pcap' -o -name '*.pcapng' -o -name '*.cap' \) |
	sort | xargs "$seedgen" "$tmp" 2>/dev/null || { echo "not ok 1 - seedgen_track wrote nothing"; echo "1..1"; exit 1; }
exec "$replay" "$tmp"
