#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# bench/ovs/kernel-ns.sh - the kernel side of `ctrack-bench ovs kernel`.
#
# Three network namespaces, created here and removed here, and no traffic
# anywhere else:
#
#   P-a (sender)  a0 ==veth== r0  P-r (router, conntrack)  r1 ==veth== b0  P-b
#   50:54:00:00:00:09     50:54:00:00:00:0a   192.168.0.254/24        no address
#                         10.255.255.254/8
#
# The sender replays, with tcpreplay, one-packet UDP flows 10.0.x.y:port ->
# 192.168.0.1:53 (the frames of bench/ovs/frames.h, whose MAC addresses
# match the veths).  The router forwards them to P-b, where they die
# quietly (no address there, forwarding off, so not even an ICMP error).
# The router runs nf_conntrack when an nftables `ct state` rule is loaded
# (ct-on) and does not when the table is removed (ct-off): the difference
# in replay time is what conntrack costs per new connection, the veth and
# forwarding costs cancelling out.
#
# Usage: kernel-ns.sh up|down|ct-on|ct-off|flush|count P
# nf_conntrack_max is global (only the initial namespace may change it), so
# this script never touches it; callers stay under its value.
set -eu

cmd=$1
p=$2
A=${p}a R=${p}r B=${p}b

nsx() { ns=$1; shift; ip netns exec "$ns" "$@"; }

case "$cmd" in
up)
	ip netns add "$A"
	ip netns add "$R"
	ip netns add "$B"
	ip link add "${p}a0" type veth peer name "${p}r0"
	ip link add "${p}r1" type veth peer name "${p}b0"
	ip link set "${p}a0" netns "$A"
	ip link set "${p}r0" netns "$R"
	ip link set "${p}r1" netns "$R"
	ip link set "${p}b0" netns "$B"
	nsx "$A" ip link set "${p}a0" address 50:54:00:00:00:09 up
	nsx "$A" ip link set lo up
	nsx "$R" ip link set lo up
	nsx "$R" ip link set "${p}r0" address 50:54:00:00:00:0a up
	nsx "$R" ip link set "${p}r1" address 50:54:00:00:00:0c up
	nsx "$R" ip addr add 10.255.255.254/8 dev "${p}r0"
	nsx "$R" ip addr add 192.168.0.254/24 dev "${p}r1"
	nsx "$R" sysctl -qw net.ipv4.ip_forward=1
	nsx "$R" sysctl -qw net.ipv4.conf.all.rp_filter=0
	nsx "$R" sysctl -qw "net.ipv4.conf.${p}r0.rp_filter=0"
	nsx "$R" ip neigh add 192.168.0.1 lladdr 50:54:00:00:00:0b dev "${p}r1" nud permanent
	nsx "$B" ip link set "${p}b0" address 50:54:00:00:00:0b up
	"$0" ct-on "$p"
	;;
ct-on)
	nsx "$R" nft -f - <<-EOF
	table ip ctbench {
		chain ctchain {
			type filter hook forward priority 0; policy accept;
			ct state new counter
		}
	}
	EOF
	# entries must outlive the measurements (30 s unreplied by default)
	nsx "$R" sysctl -qw net.netfilter.nf_conntrack_udp_timeout=3600
	;;
ct-off)
	nsx "$R" conntrack -F >/dev/null 2>&1 || true
	nsx "$R" nft delete table ip ctbench
	;;
flush)
	nsx "$R" conntrack -F >/dev/null 2>&1
	;;
count)
	nsx "$R" conntrack -C
	;;
down)
	ip netns del "$A" 2>/dev/null || true
	ip netns del "$R" 2>/dev/null || true
	ip netns del "$B" 2>/dev/null || true
	;;
*)
	echo "usage: $0 up|down|ct-on|ct-off|flush|count PREFIX" >&2
	exit 2
	;;
esac
