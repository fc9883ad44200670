#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# samples/make-sample.sh - records samples/sample.pcap, the project's own capture.
#
# Runs the kernel oracle's "sample" scenario (tests/kernel/kd_scenarios.py):
# HTTP over TCP on IPv4 and IPv6 (handshake, data, close), a DNS-like UDP
# exchange, ping, a refused connect and an ICMP port unreachable, each on both
# families, between a client and a server namespace through a router
# namespace, and keeps what the router's conntrack saw (ctcap: ingress of both
# router ports, in conntrack's order, microsecond stamps).  Traffic stays in
# namespaces it creates with private addresses (10.71.0.0/16, fd71::/16) and
# removes.  Needs root, iproute2, nftables, conntrack-tools, python3.
#
# Usage: samples/make-sample.sh [BUILD_DIR]    (default: build)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-$root/build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac

if [ ! -x "$build/tests/kernel/ctcap" ]; then
	ninja -C "$build" tests/kernel/ctcap >/dev/null
fi
out=$(mktemp -d /tmp/ctrack-sample.XXXXXX)
trap 'rm -rf "$out"' EXIT
python3 "$root/tests/kernel/kdiff.py" --scenario sample --ctrack none \
	--ctcap "$build/tests/kernel/ctcap" --out "$out" --retries 2 >"$out/log" || {
	cat "$out/log" >&2
	echo "make-sample: the sample scenario failed" >&2
	exit 1
}
cp "$out/sample/capture.pcap" "$here/sample.pcap"
size=$(wc -c <"$here/sample.pcap")
echo "samples/sample.pcap: $size bytes"
if [ "$size" -ge 204800 ]; then
	echo "make-sample: sample.pcap is over 200 KB" >&2
	exit 1
fi
