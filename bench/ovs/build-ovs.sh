#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# bench/ovs/build-ovs.sh - obtain the Open vSwitch peer for `ctrack-bench ovs`.
#
# Builds Open vSwitch's userspace library and its test driver (ovstest,
# which holds `test-conntrack benchmark|pcap`) from Debian's
# openvswitch-source tarball, in a cache directory outside the repository,
# and compiles bench/ovs/ovs_ct_harness.c against that build.  Nothing of
# OVS ever lands in the repository: this is how the peer is obtained, the
# way a package would be.
#
# Usage: build-ovs.sh
#   Progress goes to stderr; the last line on stdout is the cache directory
#   (it holds src/ = the OVS tree, ovs-ct-harness, and a stamp).
# Environment:
#   CTRACK_OVS_CACHE    cache directory (default
#                       ${XDG_CACHE_HOME:-$HOME/.cache}/ctrack/ovs-VERSION)
#   CTRACK_OVS_TARBALL  tarball (default /usr/src/openvswitch/openvswitch.tar.gz,
#                       from `apt-get install openvswitch-source`)
#   CTRACK_OVS_JOBS     make -j (default: number of CPUs + 1)
#
# Only what the benchmarks need is built: the generated headers listed in
# BUILT_SOURCES (without them `make tests/ovstest` fails), then
# tests/ovstest, which pulls lib/libopenvswitch.la.  About two minutes on
# two cores; later runs find the stamp and return at once.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
tarball=${CTRACK_OVS_TARBALL:-/usr/src/openvswitch/openvswitch.tar.gz}
jobs=${CTRACK_OVS_JOBS:-$(($(nproc 2>/dev/null || echo 1) + 1))}

if [ ! -r "$tarball" ]; then
	echo "ctrack-bench: $tarball not found; install Debian's openvswitch-source" >&2
	echo "ctrack-bench: (scripts/deps.sh bench, or apt-get install openvswitch-source)" >&2
	exit 1
fi
version=$(dpkg-query -W -f='${Version}' openvswitch-source 2>/dev/null || true)
[ -n "$version" ] || version=$(cksum < "$tarball" | cut -d' ' -f1)
version=$(printf '%s' "$version" | tr -c 'A-Za-z0-9.+-' '_')
cache=${CTRACK_OVS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ctrack/ovs-$version}
src=$cache/src

mkdir -p "$cache"
if [ ! -f "$cache/ovs.stamp" ]; then
	echo "ctrack-bench: building Open vSwitch $version in $cache (about 2 minutes)" >&2
	rm -rf "$src" "$cache/extract"
	mkdir -p "$cache/extract"
	tar -xzf "$tarball" -C "$cache/extract"
	top=$(ls "$cache/extract")
	mv "$cache/extract/$top" "$src"
	rmdir "$cache/extract"
	cd "$src"
	echo "ctrack-bench:   configure (log: $cache/configure.log)" >&2
	# -O2 -g is autoconf's default and what ctrack's debugoptimized build
	# uses: both sides compiled alike.  No SSL, no capng: not needed.
	./configure --disable-ssl --disable-libcapng --enable-shared=no \
		CFLAGS="-g -O2" > "$cache/configure.log" 2>&1 ||
		{ echo "ctrack-bench: OVS configure failed; see $cache/configure.log" >&2; exit 1; }
	bs=$(printf 'ctrack-print-bs:\n\t@echo $(BUILT_SOURCES)\n' |
		make -s -f Makefile -f - ctrack-print-bs)
	echo "ctrack-bench:   make generated headers, then tests/ovstest (log: $cache/make.log)" >&2
	# shellcheck disable=SC2086
	{ make -j"$jobs" $bs && make -j"$jobs" tests/ovstest; } > "$cache/make.log" 2>&1 ||
		{ echo "ctrack-bench: OVS build failed; see $cache/make.log" >&2; exit 1; }
	echo "$version" > "$cache/ovs.stamp"
	echo "ctrack-bench: Open vSwitch built" >&2
fi

# The harness: rebuilt whenever its sources are newer than the binary.
h=$cache/ovs-ct-harness
if [ ! -x "$h" ] || [ "$here/ovs_ct_harness.c" -nt "$h" ] || [ "$here/frames.h" -nt "$h" ]; then
	echo "ctrack-bench: compiling the OVS harness" >&2
	cd "$src"
	extra=""
	[ -f lib/.libs/libopenvswitchavx512.a ] && extra=lib/.libs/libopenvswitchavx512.a
	# shellcheck disable=SC2086
	gcc -g -O2 -DHAVE_CONFIG_H -I. -I./include -I./lib -I"$here" -w \
		-o "$h.tmp" "$here/ovs_ct_harness.c" lib/.libs/libopenvswitch.a $extra \
		-latomic -lm -lpthread > "$cache/harness.log" 2>&1 ||
		{ echo "ctrack-bench: harness build failed; see $cache/harness.log" >&2; exit 1; }
	mv "$h.tmp" "$h"
fi
echo "$cache"
