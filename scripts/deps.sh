#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# scripts/deps.sh - install the Debian packages a target needs, only when
# they are missing.  Usage: scripts/deps.sh build|test|bench|fuzz
#
# `make`, `make run` and `make test` call this first, so that on a fresh
# Debian 12 machine (as root) the README's two commands are all the set-up
# there is.  It never upgrades anything and does nothing when all is there.
set -eu

build_pkgs="gcc make meson ninja-build pkg-config liburcu-dev libpcap-dev zlib1g-dev libfixbuf-dev libmicrohttpd-dev libjansson-dev"
# nfdump (nfcapd), python3-ipfix, prometheus (promtool), curl, chromium:
# the real collectors, checker, scraper and browser the export tests meet
test_pkgs="$build_pkgs libcmocka-dev python3 clang libclang-rt-14-dev llvm iproute2 nftables conntrack conntrackd tcpdump tshark tcpreplay ethtool gzip cppcheck clang-tidy nfdump python3-ipfix prometheus curl chromium"
bench_pkgs="$test_pkgs gnuplot-nox valgrind openvswitch-source hyperfine softflowd"
fuzz_pkgs="$test_pkgs"

case "${1:-build}" in
build) want=$build_pkgs ;;
test) want=$test_pkgs ;;
bench) want=$bench_pkgs ;;
fuzz) want=$fuzz_pkgs ;;
*) echo "usage: $0 build|test|bench|fuzz" >&2; exit 2 ;;
esac

missing=""
for p in $want; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "ctrack: these Debian packages are missing:$missing" >&2
	echo "ctrack: run as root, or install them with: sudo apt-get install$missing" >&2
	exit 1
fi
echo "ctrack: installing missing packages:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer once, quietly.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections 2>/dev/null || true
apt-get update -qq >&2
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2
