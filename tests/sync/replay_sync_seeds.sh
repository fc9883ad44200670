#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# replay_sync_seeds.sh SEEDGEN REPLAY REGRESS_DIR - write fuzz_sync's seeds
# (fuzz/seedgen_sync.c) and run them, and the checked-in regression inputs,
# through the harness's invariant checks without libFuzzer
# (fuzz/replay_main.c prints one TAP line per input).
set -u
seedgen=$1
replay=$2
regress=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$seedgen" "$tmp" || { echo "not ok 1 - seedgen_sync wrote nothing"; echo "1..1"; exit 1; }
exec "$replay" "$tmp" "$regress"
