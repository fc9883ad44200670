#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# scripts/compare-commits.sh BASE HEAD - is `ctrack read` the same at two
# commits?  Builds each commit's tool in a temporary worktree and replays
# every capture of ../shared/pcaps/, samples/ and tests/captures/ (those
# that exist) through both, each in every output the tool has:
#
#   the table in each format (-o conntrack, -o extended, -o json),
#   the events (-e) in each format, the counters (-s), and one packet at a
#   time (--burst 1 -e -s -o extended)
#
# and compares stdout, stderr and the exit status of every run.  Both
# binaries run as repeatably as the tool allows: the table's hash key is
# random (getrandom), and it decides the order of entries that tie in the
# listing's sort and of DESTROY events of one instant, and an entry's id is
# a keyed hash of its address; so they run with a getrandom() that returns
# fixed bytes (a shim compiled here and preloaded) and without address
# randomisation (setarch -R).  What is still left to chance - which freed
# entry's memory a new one reuses depends on when liburcu's reclaim thread
# runs, and so do ids and the order of ties - is set aside by a second
# comparison of normalised outputs: JSON ids masked, and lines that the
# tool orders only by a time they share (events of one instant, entries
# first seen at one instant, the whole conntrack-format listing, which
# prints no time) compared as sets.  A run counts as identical when its
# outputs are identical byte for byte or once normalised; the summary
# says how many were which.  Prints one
# line per difference and ends with "N runs identical, N differ"; exits 1
# if any differ (2 when a commit cannot be built).  A refactoring that
# claims "behaviour unchanged" runs this against the commit it started
# from:
#
#   scripts/compare-commits.sh 0a6bcc2 HEAD
#
# COMPARE_CACHE=DIR keeps each commit's build in DIR/<sha> and reuses it
# (a build takes minutes on a loaded machine); without it everything goes
# with the temporary directory.  COMPARE_KEEP=1 keeps the outputs of the
# runs that differ in the temporary directory and prints where.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
if [ $# -ne 2 ]; then
	sed -n '3,24p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
fi
tmp=$(mktemp -d /tmp/ctrack-compare.XXXXXX)
cleanup() {
	for w in "$tmp"/tree-*; do
		[ -d "$w" ] && git -C "$root" worktree remove --force "$w" >/dev/null 2>&1
	done
	git -C "$root" worktree prune >/dev/null 2>&1
	if [ "${COMPARE_KEEP:-0}" = 1 ]; then
		echo "outputs kept in $tmp"
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 2' INT TERM

# build COMMIT -> prints the path of its ctrack binary
build() {
	sha=$(git rev-parse --verify -q "$1^{commit}") || {
		echo "compare-commits: $1 is not a commit" >&2
		return 1
	}
	if [ -n "${COMPARE_CACHE:-}" ]; then
		out="$COMPARE_CACHE/$sha"
	else
		out="$tmp/build-$sha"
	fi
	if [ ! -x "$out/tools/ctrack" ]; then
		wt="$tmp/tree-$sha"
		git worktree add --detach "$wt" "$sha" >/dev/null 2>&1 || {
			echo "compare-commits: cannot check out $1" >&2
			return 1
		}
		mkdir -p "$out"
		# only the tool: the library and the tool are what is compared
		# (it links the library statically, so the tree can go after)
		if ! { meson setup "$out" "$wt" -Dtests=disabled >"$tmp/setup-$sha.log" 2>&1 &&
		       ninja -C "$out" tools/ctrack >"$tmp/ninja-$sha.log" 2>&1; }; then
			echo "compare-commits: $1 does not build:" >&2
			tail -n 20 "$tmp/setup-$sha.log" "$tmp/ninja-$sha.log" >&2
			git worktree remove --force "$wt" >/dev/null 2>&1
			return 1
		fi
		git worktree remove --force "$wt" >/dev/null 2>&1
	fi
	echo "$out/tools/ctrack"
}

# the shim: getrandom() -> fixed bytes (the hash key, defrag's seed)
cat >"$tmp/fixkey.c" <<'EOF2'
#include <sys/types.h>
ssize_t getrandom(void *buf, size_t n, unsigned flags);
ssize_t getrandom(void *buf, size_t n, unsigned flags)
{
	(void)flags;
	for (size_t i = 0; i < n; i++)
		((unsigned char *)buf)[i] = (unsigned char)(i * 37 + 11);
	return (ssize_t)n;
}
EOF2
if ! cc -shared -fPIC -O2 -o "$tmp/fixkey.so" "$tmp/fixkey.c" 2>"$tmp/cc.log"; then
	echo "compare-commits: cannot build the getrandom shim:" >&2
	cat "$tmp/cc.log" >&2
	exit 2
fi
if ! setarch -R true 2>/dev/null; then
	echo "compare-commits: setarch -R (util-linux) cannot turn address randomisation off here" >&2
	exit 2
fi
# normalise FILE: ids masked, lines that share their sort time sorted
cat >"$tmp/norm.py" <<'EOF2'
import re, sys
TAB = re.compile(r'^(ipv4|ipv6)\s+\d+ |^[a-z0-9-]+\s+\d+ \d+ ')
EVT = re.compile(r'^\[([0-9.]+)\]')
def key(i, line):
    if line.startswith('{'):
        m = re.search(r'"time":([0-9.]+)', line)
        if m:
            return ('ev', m.group(1))
        m = re.search(r'"first_seen":([0-9.]+)', line)
        if m:
            return ('tab', m.group(1))
        return ('tab', '')
    m = EVT.match(line)
    if m:
        return ('ev', m.group(1))
    if TAB.match(line):
        return ('tab', '')
    return ('line', i)
out, group, gk = [], [], None
for i, line in enumerate(open(sys.argv[1], errors='replace')):
    line = re.sub(r'"id":[0-9]+', '"id":ID', line)
    k = key(i, line)
    if k != gk:
        out += sorted(group)
        group, gk = [], k
    group.append(line)
out += sorted(group)
sys.stdout.write(''.join(out))
EOF2
run() { # run BINARY ARGS... : repeatable
	LD_PRELOAD="$tmp/fixkey.so" setarch -R "$@"
}

a=$(build "$1") || exit 2
b=$(build "$2") || exit 2

captures=""
for d in ../shared/pcaps samples tests/captures; do
	[ -d "$d" ] || continue
	for f in "$d"/*; do
		case "$f" in
		*.pcap | *.pcapng | *.cap | *.pcap.gz | *.pcapng.gz) captures="$captures $f" ;;
		esac
	done
done
if [ -z "$captures" ]; then
	echo "compare-commits: no captures found (../shared/pcaps, samples, tests/captures)" >&2
	exit 2
fi

same=0
same_norm=0
differ=0
n=0
for f in $captures; do
	for opts in "-o conntrack" "-o extended" "-o json" \
		    "-e --no-table -o conntrack" "-e --no-table -o extended" \
		    "-e --no-table -o json" "-s --no-table" \
		    "--burst 1 -e -s -o extended"; do
		n=$((n + 1))
		# shellcheck disable=SC2086
		run "$a" read $opts "$f" >"$tmp/a.out" 2>"$tmp/a.err"
		ra=$?
		# shellcheck disable=SC2086
		run "$b" read $opts "$f" >"$tmp/b.out" 2>"$tmp/b.err"
		rb=$?
		what=""
		[ $ra -eq $rb ] || what="exit status $ra -> $rb"
		cmp -s "$tmp/a.err" "$tmp/b.err" || what="$what${what:+, }stderr"
		if [ -z "$what" ] && cmp -s "$tmp/a.out" "$tmp/b.out"; then
			same=$((same + 1))
			continue
		fi
		python3 "$tmp/norm.py" "$tmp/a.out" >"$tmp/a.norm"
		python3 "$tmp/norm.py" "$tmp/b.out" >"$tmp/b.norm"
		cmp -s "$tmp/a.norm" "$tmp/b.norm" || what="$what${what:+, }stdout"
		if [ -z "$what" ]; then
			same_norm=$((same_norm + 1))
			continue
		fi
		differ=$((differ + 1))
		echo "differ: ctrack read $opts $f: $what"
		if [ "${COMPARE_KEEP:-0}" = 1 ]; then
			for x in out err; do
				mv "$tmp/a.$x" "$tmp/$n.a.$x"
				mv "$tmp/b.$x" "$tmp/$n.b.$x"
			done
		fi
	done
done
echo "$1 ($(git rev-parse --short "$1")) vs $2 ($(git rev-parse --short "$2")): $(echo "$captures" | wc -w) captures"
echo "$((same + same_norm)) runs identical ($same byte for byte, $same_norm once normalised), $differ differ"
[ $differ -eq 0 ]
