#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# replay_record_seeds.sh SEEDGEN REPLAY REGRESS_DIR CAPTURE... - write
# fuzz_record's seeds (fuzz/seedgen_record.c: the captures' tables and
# random ones, as state files and record streams) and run them, and the
# checked-in regression inputs, through the harness's invariant checks
# without libFuzzer (fuzz/replay_main.c prints one TAP line per input).
set -u
seedgen=$1
replay=$2
regress=$3
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$seedgen" "$tmp" "$@" >/dev/null || { echo "not ok 1 - seedgen_record wrote nothing"; echo "1..1"; exit 1; }
"$replay" "$tmp" "$regress"
