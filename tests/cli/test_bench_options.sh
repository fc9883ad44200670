#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# test_bench_options.sh CTRACK_BENCH BENCH_SRC_DIR - ctrack-bench's
# command line as a person types it: NAME --help prints NAME's options and
# runs nothing; unknown options, options without their value, stray words
# and values that are not counts (abc, 10x, -5) are usage errors (exit 2)
# named on stderr, before any benchmark starts; the command lines of
# scripts/bench.sh and the docs still pass the checks (--check: check and
# stop); and every option a bench_<name>.c reads is in main.c's table, so
# that none is refused as unknown.  Every run is bounded by `timeout`, so
# a check that lets a benchmark start fails instead of running it.
set -u
BENCH=$1
SRC=$2
. "$(dirname "$0")/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run WANT PATTERN ARGS...: WANT is an exit status or "nonzero"; PATTERN
# (when not empty) must appear on stdout for exit 0, else on stderr.
# Leaves the run's milliseconds in $ms.
run() {
	want=$1; pat=$2; shift 2
	t0=$(date +%s%N)
	timeout 20 "$BENCH" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	if [ "$want" = nonzero ] && [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ]; then
		:
	elif [ "$rc" != "$want" ]; then
		echo "# expected exit $want, got $rc for: $*" >&2
		sed 's/^/# /' "$tmp/err" >&2
		return 1
	fi
	f="$tmp/err"
	[ "$rc" -eq 0 ] && f="$tmp/out"
	if [ -n "$pat" ] && ! grep -q -- "$pat" "$f"; then
		echo "# output lacks '$pat' for: $*" >&2
		sed 's/^/# /' "$f" >&2
		return 1
	fi
	return 0
}

fast() { # the last run took under a second: nothing ran
	[ "$ms" -lt 1000 ] || { echo "# took $ms ms" >&2; return 1; }
}

ok_if "gc-busy --help exits 0 listing --conns" run 0 "--conns" gc-busy --help
ok_if "gc-busy --help runs no benchmark (under 1 s)" fast
ok_if "gc-busy --help prints nothing on stderr" test ! -s "$tmp/err"
ok_if "gc-busy --help names the benchmark" grep -q "usage: ctrack-bench gc-busy" "$tmp/out"
ok_if "memory -h exits 0 listing --turnovers" run 0 "--turnovers" memory -h
ok_if "--help exits 0 listing the benchmarks" run 0 "gc-busy" --help
ok_if "unknown option is named, exit 2" \
	run 2 "ctrack-bench gc-busy: unknown option '--conn'" gc-busy --conn 5
ok_if "unknown option is refused at once" fast
ok_if "unknown --opt=V is named without its value" \
	run 2 "unknown option '--conn'" gc-busy --conn=5
ok_if "single-dash option is unknown" run 2 "unknown option '-q'" gc-busy -q
ok_if "--conns abc is not a count" \
	run 2 "ctrack-bench: --conns: 'abc' is not a count" gc-busy --conns abc
ok_if "--conns 10x is not a count" run 2 "'10x' is not a count" gc-busy --conns 10x
ok_if "--conns=10x is not a count" run 2 "'10x' is not a count" gc-busy --conns=10x
ok_if "negative count is refused" run 2 "'-5' is not a count" gc-busy --conns -5
ok_if "fractional count is refused" run 2 "'1.5' is not a count" gc-busy --conns 1.5
ok_if "count past 2^64 is refused" \
	run 2 "is not a count" gc-busy --conns 18446744073709551616
ok_if "empty --conns= is refused" run 2 "'' is not a count" gc-busy --conns=
ok_if "bad list element is named" run 2 "'1x' is not a count" gc-busy --interval 10,1x
ok_if "empty list element is refused" run 2 "is not a count" throughput --flows 1k,,1M
ok_if "a count past its option's range is named with the range" \
	run 2 "--seconds: 5000000000 is out of range (1..86400)" gc-busy --seconds 5G
ok_if "a list element past the range is named" \
	run 2 "--threads: 32 is out of range (1..16)" throughput --threads 1,32
ok_if "zero where at least one is needed is refused" \
	run 2 "--interval: 0 is out of range" gc-busy --interval 0
ok_if "ovs --repeat past 31 is refused before it starts" \
	run 2 "--repeat: 40 is out of range (1..31)" ovs --repeat 40
ok_if "the edges of a range pass" run 0 "" throughput --rounds 16 --threads 1,16 --check
ok_if "memory --conns without a value, exit 2" \
	run 2 "--conns needs a value" memory --conns
ok_if "an option is not a value" run 2 "--conns needs a value" memory --conns --quick
ok_if "stray word is refused" run 2 "unexpected argument '5'" gc-busy --quick 5
ok_if "flag with a value is refused" run 2 "--quick takes no value" gc-busy --quick=yes
ok_if "option given twice is refused" run 2 "--conns given twice" gc-busy --conns 1 --conns 2
ok_if "unknown word in a list option is named" \
	run 2 "'due-tme' is not one of" throughput --gc off,due-tme
ok_if "unknown word option value is named" run 2 "'foo' is not one of" gc-yield --lock foo
ok_if "unknown ovs workload is named" run 2 "unknown WORKLOAD 'nosuch'" ovs nosuch
ok_if "unknown benchmark: non-zero exit, named" \
	run nonzero "unknown benchmark 'nosuch'" nosuch
ok_if "no arguments: usage, exit 1" run 1 "usage" 

# what does parse: both value forms, lists, suffixes (--check runs nothing)
ok_if "--opt=V, --opt V, count lists" \
	run 0 "" gc-busy --check --conns=1.5M --interval 10,100 --seconds 2
ok_if "throughput lists and words" \
	run 0 "" throughput --check --flows 1k,1M --threads=1,2 --gc off,due-time \
	--acct off,on --pop zipf --path parsed --work est,new-udp --zipf-s100 120 --rounds 3
ok_if "read takes files among options" run 0 "" read --check a.pcap --pcaps /tmp b.pcap
for name in gc-yield gc-idle gc-busy throughput memory teardown read ovs; do
	ok_if "scripts/bench.sh's line for $name parses" \
		run 0 "" "$name" --json --quick --check
done
ok_if "docs: ovs large --sizes 1000000 --repeat 5" \
	run 0 "" ovs large --sizes 1000000 --repeat 5 --check
ok_if "docs: ovs bench large --acct" run 0 "" ovs bench large --acct --check
ok_if "docs: gc-busy --driven --interval 10" run 0 "" gc-busy --driven --interval 10 --check
ok_if "gc-busy --rounds past 16 is refused" \
	run 2 "--rounds: 17 is out of range (1..16)" gc-busy --rounds 17

# gc-busy --rounds N: the driven figure without events is the median of
# N rounds, reported with their least and greatest (a small table, so it
# runs in well under a second)
rounds_ok() {
	run 0 "" gc-busy --driven --conns 20k --interval 100 --finder wheel --rounds 3 --json &&
	python3 -c '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
off = [r for r in rs if r["events"] == "off"]
on = [r for r in rs if r["events"] == "on"]
assert len(off) == 1 and len(on) == 1, rs
o = off[0]
assert o["rounds"] == 3, o
assert o["ns_per_expired_rounds_min"] <= o["ns_per_expired"] <= o["ns_per_expired_rounds_max"], o
assert o["expired"] == 3 * on[0]["expired"], (o, on[0])
assert "rounds" not in on[0], on[0]
' "$tmp/out"
}
ok_if "gc-busy --rounds 3: median of 3 rounds between their min and max" rounds_ok

# gc-busy --live runs the library's collector thread with and without an
# event handler; without one, its CPU comes from the thread ct_gc_start
# named "ct-gc" (schedstat), so a record with a cost shows the name was
# found
live_ok() {
	run 0 "" gc-busy --live --conns 20k --seconds 3 --finder wheel --json &&
	python3 -c '
import json, sys
rs = {r["variant"]: r for r in map(json.loads, open(sys.argv[1]))}
on, off = rs["live-adaptive-wheel"], rs["live-adaptive-wheel-off"]
assert on["events"] == "on" and off["events"] == "off", rs
assert "lateness_max_ms" in on and "lateness_max_ms" not in off, rs
assert off["expired"] > 0 and off["ns_per_expired"] > 0, off
' "$tmp/out"
}
ok_if "gc-busy --live: the collector thread measured with and without events" live_ok
# memory --finder scan,wheel: every variant with each way of finding due
# entries, the scan's named -scan, on the same connections (how many
# bytes each costs is the benchmark's to measure, at 10M: RSS moves by
# huge pages at this size)
finder_ok() {
	run 0 "" memory --conns 50k --turnovers 1 --finder scan,wheel --json &&
	python3 -c '
import json, sys
rs = {r["variant"]: r for r in map(json.loads, open(sys.argv[1]))}
base = ["udp-acct-off", "udp-acct-on", "tcp-acct-off", "tcp-acct-on", "udp-acct-on-churn"]
assert sorted(rs) == sorted(base + [v + "-scan" for v in base]), sorted(rs)
for v in base:
    w, s = rs[v], rs[v + "-scan"]
    assert w["finder"] == "wheel" and s["finder"] == "scan", (w, s)
    assert w["conns"] == s["conns"] and w["bytes_per_conn"] > 0 and s["bytes_per_conn"] > 0, (w, s)
    assert w.get("expired") == s.get("expired"), (w, s)
' "$tmp/out"
}
ok_if "memory --finder scan,wheel: each variant with both" finder_ok
ok_if "memory --finder takes scan and wheel only" \
	run 2 "--finder" memory --finder bogus
# throughput: the collector's CPU is its own thread's run time (the
# thread ct_gc_start names "ct-gc"), for a collector that runs throughout
# and for the alternating one's many threads; and the wheel variant's
# seeding step is reported apart
gc_cpu_ok() {
	run 0 "" throughput --flows 1k --work est --gc off,wheel,alternating --pop uniform \
		--threads 1 --path parsed --acct off --packets 4M --rounds 1 --json &&
	python3 -c '
import json, sys
rs = {r["variant"]: r for r in map(json.loads, open(sys.argv[1])) if "gc" in r}
off, wh, alt = (rs["est-1k-uniform-1t-gc-" + g] for g in ("off", "wheel", "alternating"))
assert off["gc_cpu_from"] == "process-less-workers", off
for r in (wh, alt):
    assert r["gc_cpu_from"] == "ct-gc", r
    assert 0 <= r["gc_cpu_pct"] < 50, r
    assert r["gc_prestep_ms"] >= 0, r
assert alt["bursts_gc_on"] > 0 and alt["bursts_gc_off"] > 0, alt
' "$tmp/out"
}
ok_if "throughput: gc_cpu_pct from the ct-gc thread, the seeding step apart" gc_cpu_ok
ok_if "docs: throughput --threads 1,2,4,8,16 --flows 1M,10M --work est,new-udp" \
	run 0 "" throughput --threads 1,2,4,8,16 --flows 1M,10M --work est,new-udp --check

# the options each bench_<name>.c reads (bu_flag, bu_opt_*, throughput's
# parse_list, bench_ovs.c's own strcmp(s, "--opt")) against NAME --help
covers() { # covers NAME FILE: each option FILE reads has a line in NAME --help
	opts=$(grep -oE '(bu_flag|bu_opt_[a-z0-9]+|parse_list)\(a, "[a-z0-9-]+"|strcmp\(s, "--[a-z0-9-]+"\)' "$2" |
		sed 's/.*"-*\([a-z0-9-]*\)".*/\1/' | sort -u)
	[ -n "$opts" ] || { echo "# no options found in $2" >&2; return 1; }
	timeout 20 "$BENCH" "$1" --help >"$tmp/help" || return 1
	for opt in $opts; do
		grep -qE -- "^  --$opt( |\$)" "$tmp/help" ||
			{ echo "# $1 --help lacks --$opt" >&2; return 1; }
	done
}
for f in "$SRC"/bench_*.c; do
	name=$(basename "$f" .c | sed 's/^bench_//; s/_/-/g')
	[ "$name" = util ] && continue
	ok_if "every option $(basename "$f") reads is in $name --help" covers "$name" "$f"
done
finish
