#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# probe.sh - instructions per packet of a ctrack-probe workload, counted by
# callgrind (repeatable where wall-clock time is not).
#
#   scripts/probe.sh [BUILD_DIR] WORKLOAD [ARGS...]
#   scripts/probe.sh ovs 200000          # OVS's benchmark workload
#   PROBE_KEEP=1 scripts/probe.sh tcp-est 1000 100000   # keep the profile
#   scripts/probe.sh unlink 200000       # per removal of a held due entry
#
# Collects inside the workload's probe_* function (probe_burst; for
# unlink, probe_unlink, whose "packets" are removals).
# Prints "WORKLOAD ARGS: N instructions/packet (parse + track)"; with
# PROBE_KEEP=1 the callgrind profile stays in /tmp/probe.<workload>.out for
# callgrind_annotate --inclusive=yes.
set -e
build=build
if [ -d "$1" ]; then build=$1; shift; fi
w=$1
out=/tmp/probe.$w.$$.out
[ -n "$PROBE_KEEP" ] && out=/tmp/probe.$w.out
log=$(valgrind --tool=callgrind --callgrind-out-file="$out" \
	--toggle-collect="probe_*" "$build/bench/ctrack-probe" "$@" 2>/dev/null)
pkts=$(echo "$log" | awk '/^packets/ {print $2}')
ir=$(awk '/^summary:/ {print $2}' "$out")
echo "$log" | grep '^verdict' | tr '\n' ' '
echo
echo "$*: $((ir / pkts)) instructions/packet (parse + track; $ir over $pkts)"
[ -n "$PROBE_KEEP" ] || rm -f "$out"
