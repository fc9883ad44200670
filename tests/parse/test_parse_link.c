/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_parse_link.c - ct_parse_frame() on every link layer it knows,
 * checked against real captures.
 *
 * Two sets: the third-party captures of ../shared/pcaps (the "shared"
 * group, expected values from tshark 4.0 on the same files, commands
 * quoted next to each test), and the project's own crafted captures
 * (tests/captures/crafted, the default group), whose expected values are
 * those craft.py built the frames with - tshark reads them back the same
 * (tests/captures/check_captures.py) - never this parser's own output.
 * Frame numbers in comments are tshark's (1-based); indexes in code are
 * 0-based.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>

#include "ctrack/packet.h"
#include "pcap_util.h"

static void load(struct tcap *tc, const char *name)
{
	bool ok = tcap_load(tc, name);

	if (!ok)
		fail_msg("cannot open %s: %s", name, tc->err);
}

static void assert_ip6(const union ct_addr *a, const char *text)
{
	uint8_t want[16];

	assert_int_equal(inet_pton(AF_INET6, text, want), 1);
	assert_memory_equal(a->ip6, want, 16);
}

/*
 * tshark -r zeek__vlan-qinqinq.pcap -T fields -e vlan.id -e ip.src
 *        -e tcp.srcport -e ip.dst -e tcp.dstport
 * gives "30,20,10  141.142.228.5 59856 192.150.187.43 80" for frame 1:
 * three 802.1Q tags, outermost 30, innermost 10.
 */
static void test_triple_vlan_stack_records_outer_and_inner_id(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "zeek__vlan-qinqinq.pcap");
	assert_int_equal(tc.n, 14);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.n_vlan, 3);
	assert_int_equal(pkt.vlan_outer, 30);
	assert_int_equal(pkt.vlan_inner, 10);
	assert_int_equal(pkt.tuple.l3, CT_L3_IPV4);
	assert_int_equal(pkt.tuple.l4, 6);
	assert_int_equal(pkt.tuple.src.ip4, tip4(141, 142, 228, 5));
	assert_int_equal(pkt.tuple.dst.ip4, tip4(192, 150, 187, 43));
	assert_int_equal(pkt.tuple.sport, 59856);
	assert_int_equal(pkt.tuple.dport, 80);
	for (size_t i = 0; i < tc.n; i++) {
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
		assert_int_equal(pkt.n_vlan, 3);
	}
	tcap_free(&tc);
}

/*
 * tshark -r tcpdump__802.1ad_QinQ.pcap -T fields -e ieee8021ad.id
 *        -e vlan.id -e vlan.etype  ->  "200 2001 0x0806" twice:
 * an 802.1ad S-tag 200 around an 802.1Q tag 2001 around ARP.
 */
static void test_8021ad_s_tag_around_arp_is_not_ip(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "tcpdump__802.1ad_QinQ.pcap");
	assert_int_equal(tc.n, 2);
	for (size_t i = 0; i < tc.n; i++) {
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_NOT_IP);
		assert_int_equal(pkt.kind, CT_PKT_NOT_IP);
		assert_int_equal(pkt.n_vlan, 2);
		assert_int_equal(pkt.vlan_outer, 200);
		assert_int_equal(pkt.vlan_inner, 2001);
	}
	tcap_free(&tc);
}

/*
 * tshark -r zeek__vlan-collisions.pcap -T fields -e vlan.id | sort | uniq -c
 * -> 14 untagged, 14 "42", 14 "10,20"; every frame is the same HTTP
 * connection 141.142.228.5:59856 <-> 192.150.187.43:80.
 */
static void test_same_connection_under_three_tag_stacks(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;
	unsigned untagged = 0, single42 = 0, qinq = 0;

	(void)state;
	load(&tc, "zeek__vlan-collisions.pcap");
	assert_int_equal(tc.n, 42);
	for (size_t i = 0; i < tc.n; i++) {
		uint32_t a = tip4(141, 142, 228, 5), b = tip4(192, 150, 187, 43);

		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
		assert_true((pkt.tuple.src.ip4 == a && pkt.tuple.dst.ip4 == b &&
			     pkt.tuple.sport == 59856 && pkt.tuple.dport == 80) ||
			    (pkt.tuple.src.ip4 == b && pkt.tuple.dst.ip4 == a &&
			     pkt.tuple.sport == 80 && pkt.tuple.dport == 59856));
		if (pkt.n_vlan == 0)
			untagged++;
		else if (pkt.n_vlan == 1 && pkt.vlan_outer == 42 &&
			 pkt.vlan_inner == 42)
			single42++;
		else if (pkt.n_vlan == 2 && pkt.vlan_outer == 10 &&
			 pkt.vlan_inner == 20)
			qinq++;
	}
	assert_int_equal(untagged, 14);
	assert_int_equal(single42, 14);
	assert_int_equal(qinq, 14);
	tcap_free(&tc);
}

/*
 * tshark -r zeek__pppoe-over-qinq.pcap -T fields -e vlan.id | uniq -c
 * -> 86 x "3704,2474"; frame 1: 1.1.1.1:20394 -> 2.2.2.2:443, ip.len 64.
 */
static void test_pppoe_session_over_qinq_is_opened(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "zeek__pppoe-over-qinq.pcap");
	assert_int_equal(tc.n, 86);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.n_vlan, 2);
	assert_int_equal(pkt.vlan_outer, 3704);
	assert_int_equal(pkt.vlan_inner, 2474);
	assert_int_equal(pkt.tuple.src.ip4, tip4(1, 1, 1, 1));
	assert_int_equal(pkt.tuple.dst.ip4, tip4(2, 2, 2, 2));
	assert_int_equal(pkt.tuple.sport, 20394);
	assert_int_equal(pkt.tuple.dport, 443);
	assert_int_equal(pkt.l3_len, 64);
	for (size_t i = 0; i < tc.n; i++)
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
	tcap_free(&tc);
}

/*
 * tshark -r zeek__mpls-in-vlan.pcap -o ip.check_checksum:TRUE -T fields
 *        -e eth.type -e vlan.etype -e ip.checksum.status
 * -> frame 1: 0x8100/0x0800 with a bad IP header checksum (status 0);
 *    frames 2-3: 0x8100/0x8847 (MPLS).  MPLS is not opened (the kernel
 *    does not decapsulate it in front of conntrack); the bad IPv4 header
 *    checksum makes frame 1 invalid (ip_rcv drops it).
 */
static void test_mpls_is_not_opened(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "zeek__mpls-in-vlan.pcap");
	assert_int_equal(tc.n, 3);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_true(pkt.ip_csum_bad);
	assert_int_equal(tcap_parse(&tc, 1, &pkt), CT_PKT_NOT_IP);
	assert_int_equal(pkt.n_vlan, 1);
	assert_int_equal(tcap_parse(&tc, 2, &pkt), CT_PKT_NOT_IP);
	tcap_free(&tc);
}

/*
 * tshark -r tcpdump__tcp-handshake-nano.pcap -T fields -e ip.src
 *        -e tcp.srcport -e ip.dst -e tcp.dstport -e tcp.flags -e ip.len
 * -> 131.155.215.69:46656 -> 137.116.81.94:80 SYN (0x0002) len 60,
 *    then SYN/ACK (0x0012) back, then ACK (0x0010) len 52.
 * Linux SLL v1 (DLT 113), nanosecond timestamps.
 */
static void test_linux_sll_v1_handshake(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "tcpdump__tcp-handshake-nano.pcap");
	assert_int_equal(tc.linktype, CT_LINK_LINUX_SLL);
	assert_int_equal(tc.n, 3);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.src.ip4, tip4(131, 155, 215, 69));
	assert_int_equal(pkt.tuple.dst.ip4, tip4(137, 116, 81, 94));
	assert_int_equal(pkt.tuple.sport, 46656);
	assert_int_equal(pkt.tuple.dport, 80);
	assert_int_equal(pkt.u.tcp.flags, CT_TCP_SYN);
	assert_int_equal(pkt.l3_len, 60);
	assert_int_equal(tcap_parse(&tc, 1, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.tcp.flags, CT_TCP_SYN | CT_TCP_ACK);
	assert_int_equal(pkt.tuple.sport, 80);
	assert_int_equal(tcap_parse(&tc, 2, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.tcp.flags, CT_TCP_ACK);
	assert_int_equal(pkt.l3_len, 52);
	tcap_free(&tc);
}

/*
 * tshark -r zeek__linux_dlt_sll2.pcap -T fields -e sll.etype -e sll.ifindex
 *        -e icmp.type -e icmp.ident -e icmpv6.type -e icmpv6.echo.identifier
 * -> 1: 0x0800 if 1 ICMP 8 id 8; 2: 0x0800 if 1 ICMP 0 id 8;
 *    3: 0x86dd if 1 ICMPv6 128 id 9; 4: 0x86dd if 1 ICMPv6 129 id 9;
 *    5: 0x0806 (ARP) if 26; 6: 0x8035 (RARP) if 26.
 */
static void test_linux_sll2_icmp_echo_and_arp(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "zeek__linux_dlt_sll2.pcap");
	assert_int_equal(tc.linktype, CT_LINK_LINUX_SLL2);
	assert_int_equal(tc.n, 6);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.ifindex, 1);
	assert_int_equal(pkt.tuple.l4, 1);
	assert_int_equal(pkt.tuple.sport, 8);                 /* id */
	assert_int_equal(pkt.tuple.dport, 8 << 8);            /* type 8 */
	assert_int_equal(pkt.tuple.src.ip4, tip4(192, 0, 2, 1));
	assert_int_equal(tcap_parse(&tc, 1, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.icmp.type, 0);
	assert_int_equal(tcap_parse(&tc, 2, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l3, CT_L3_IPV6);
	assert_int_equal(pkt.tuple.l4, 58);
	assert_int_equal(pkt.tuple.sport, 9);
	assert_int_equal(pkt.tuple.dport, 128 << 8);
	assert_ip6(&pkt.tuple.src, "fe80::8c36:6ff:fe44:acaf");
	assert_int_equal(tcap_parse(&tc, 3, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.icmp.type, 129);
	assert_int_equal(tcap_parse(&tc, 4, &pkt), CT_PKT_NOT_IP);
	assert_int_equal(pkt.ifindex, 26);
	assert_int_equal(tcap_parse(&tc, 5, &pkt), CT_PKT_NOT_IP);
	tcap_free(&tc);
}

/*
 * tshark -r zeek__connect-with-header.pcap -T fields -e null.family
 *        -e ipv6.src -e tcp.srcport -e ipv6.dst -e tcp.dstport -e ipv6.plen
 * -> frame 1: family 30 (Darwin AF_INET6), ::1:52522 -> ::1:80, plen 44.
 */
static void test_bsd_null_loopback_carries_ipv6(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "zeek__connect-with-header.pcap");
	assert_int_equal(tc.linktype, CT_LINK_NULL);
	assert_int_equal(tc.n, 58);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l3, CT_L3_IPV6);
	assert_ip6(&pkt.tuple.src, "::1");
	assert_ip6(&pkt.tuple.dst, "::1");
	assert_int_equal(pkt.tuple.sport, 52522);
	assert_int_equal(pkt.tuple.dport, 80);
	assert_int_equal(pkt.l3_len, 40 + 44);
	for (size_t i = 0; i < tc.n; i++)
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
	tcap_free(&tc);
}

/*
 * tshark -r zeek__nflog-http.pcap -T fields -e nflog.family -e ip.src
 *        -e tcp.srcport -e ip.dst -e tcp.dstport -e ip.len -e tcp.flags
 * -> 13 frames, family 2; frame 1: 10.0.2.15:49762 -> 93.184.216.34:80
 *    len 60 SYN; frame 4: the SYN/ACK, len 44; frame 8: len 1643.
 */
static void test_nflog_payload_attribute_is_the_packet(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "zeek__nflog-http.pcap");
	assert_int_equal(tc.linktype, CT_LINK_NFLOG);
	assert_int_equal(tc.n, 13);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.src.ip4, tip4(10, 0, 2, 15));
	assert_int_equal(pkt.tuple.dst.ip4, tip4(93, 184, 216, 34));
	assert_int_equal(pkt.tuple.sport, 49762);
	assert_int_equal(pkt.tuple.dport, 80);
	assert_int_equal(pkt.l3_len, 60);
	assert_int_equal(pkt.u.tcp.flags, CT_TCP_SYN);
	assert_int_equal(tcap_parse(&tc, 3, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.tcp.flags, CT_TCP_SYN | CT_TCP_ACK);
	assert_int_equal(pkt.l3_len, 44);
	assert_int_equal(tcap_parse(&tc, 7, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.l3_len, 1643);
	assert_false(pkt.truncated);
	for (size_t i = 0; i < tc.n; i++)
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
	tcap_free(&tc);
}

/*
 * tshark -r tcpdump__LINKTYPE_IPV4.pcap -T fields -e ip.src -e udp.srcport
 *        -e ip.dst -e udp.dstport -e ip.len
 * -> 192.168.1.100:12345 -> 9.9.9.9:53, 57.
 */
static void test_linktype_ipv4(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "tcpdump__LINKTYPE_IPV4.pcap");
	assert_int_equal(tc.linktype, CT_LINK_IPV4);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l4, 17);
	assert_int_equal(pkt.tuple.src.ip4, tip4(192, 168, 1, 100));
	assert_int_equal(pkt.tuple.dst.ip4, tip4(9, 9, 9, 9));
	assert_int_equal(pkt.tuple.sport, 12345);
	assert_int_equal(pkt.tuple.dport, 53);
	assert_int_equal(pkt.l3_len, 57);
	assert_int_equal(pkt.payload_len, 57 - 20 - 8);
	tcap_free(&tc);
}

/*
 * tshark -r tcpdump__LINKTYPE_RAW_ipv6.pcap -T fields -e ipv6.src
 *        -e udp.srcport -e ipv6.dst -e udp.dstport -e ipv6.plen
 * -> 2001:db8::1:12345 -> 2620:fe::9:53, 37.  libpcap reports
 * LINKTYPE_RAW as DLT_RAW (12 on Linux).
 */
static void test_linktype_raw_ipv6(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "tcpdump__LINKTYPE_RAW_ipv6.pcap");
	assert_true(tc.linktype == CT_LINK_RAW ||
		    tc.linktype == CT_LINK_DLT_RAW12 ||
		    tc.linktype == CT_LINK_DLT_RAW14);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l3, CT_L3_IPV6);
	assert_ip6(&pkt.tuple.src, "2001:db8::1");
	assert_ip6(&pkt.tuple.dst, "2620:fe::9");
	assert_int_equal(pkt.tuple.sport, 12345);
	assert_int_equal(pkt.tuple.dport, 53);
	assert_int_equal(pkt.l3_len, 77);
	/* and as CT_LINK_RAW explicitly */
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_RAW, tc.f[0].data,
					tc.f[0].caplen, tc.f[0].wirelen, 0),
			 CT_PKT_TRACKABLE);
	tcap_free(&tc);
}

/*
 * tshark -r zeek__pcapng-multi-interface.pcapng -o ip.check_checksum:TRUE
 *        -T fields -e frame.interface_id -e ip.src -e udp.srcport
 *        -e ip.dst -e udp.dstport -e ip.checksum.status
 * -> 1: if0 172.17.0.2:36343 -> 1.1.1.1:53 good; 2: reply, good;
 *    3: if1 10.0.0.4:56351 -> 1.1.1.1:53 BAD; 4: reply good;
 *    5: if1 10.0.0.4:56352 -> 1.1.1.1:53 BAD; 6: reply good.
 * (Frames 3 and 5 were captured before the NIC filled in the header
 * checksum; the kernel's ip_rcv would drop them.)
 */
static void test_pcapng_with_two_interfaces(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "zeek__pcapng-multi-interface.pcapng");
	assert_int_equal(tc.linktype, CT_LINK_ETHERNET);
	assert_int_equal(tc.n, 6);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.src.ip4, tip4(172, 17, 0, 2));
	assert_int_equal(pkt.tuple.sport, 36343);
	assert_int_equal(pkt.tuple.dport, 53);
	assert_int_equal(tcap_parse(&tc, 1, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.src.ip4, tip4(1, 1, 1, 1));
	assert_int_equal(tcap_parse(&tc, 2, &pkt), CT_PKT_TRACKABLE);
	assert_true(pkt.ip_csum_bad);
	assert_int_equal(tcap_parse(&tc, 3, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.dst.ip4, tip4(10, 0, 0, 4));
	assert_int_equal(pkt.tuple.dport, 56351);
	assert_int_equal(tcap_parse(&tc, 4, &pkt), CT_PKT_TRACKABLE);
	assert_true(pkt.ip_csum_bad);
	assert_int_equal(tcap_parse(&tc, 5, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.dport, 56352);
	tcap_free(&tc);
}

/*
 * tshark -r ndpi__gnutella.pcap -Y "frame.cap_len < 20" -T fields
 *        -e frame.number -e frame.len -e frame.cap_len -> "1 60 4".
 */
static void test_frame_shorter_than_ethernet_header(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "ndpi__gnutella.pcap");
	assert_int_equal(tc.f[0].caplen, 4);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_LINK_TRUNCATED);
	tcap_free(&tc);
}

/* --- the project's own captures (tests/captures/craft.py) --- */

/*
 * link-vlan3.pcap: one 13-segment TCP connection 192.0.2.10:40001 ->
 * 198.51.100.20:80 under 802.1Q tags 30, 20, 10 (outermost first).
 */
static void test_own_triple_vlan_stack_records_outer_and_inner_id(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, OWN("link-vlan3.pcap"));
	assert_int_equal(tc.n, 13);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.n_vlan, 3);
	assert_int_equal(pkt.vlan_outer, 30);
	assert_int_equal(pkt.vlan_inner, 10);
	assert_int_equal(pkt.tuple.l3, CT_L3_IPV4);
	assert_int_equal(pkt.tuple.l4, 6);
	assert_int_equal(pkt.tuple.src.ip4, tip4(192, 0, 2, 10));
	assert_int_equal(pkt.tuple.dst.ip4, tip4(198, 51, 100, 20));
	assert_int_equal(pkt.tuple.sport, 40001);
	assert_int_equal(pkt.tuple.dport, 80);
	for (size_t i = 0; i < tc.n; i++) {
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
		assert_int_equal(pkt.n_vlan, 3);
	}
	tcap_free(&tc);
}

/*
 * link-8021ad-qinq.pcap: an 802.1ad S-tag 200 around an 802.1Q tag 2001
 * around an ARP request and reply, then a UDP query under the same tags,
 * then its answer under a 0x9100 tag 300 around an 802.1Q tag 7.
 */
static void test_own_8021ad_and_9100_tags_around_arp_and_udp(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, OWN("link-8021ad-qinq.pcap"));
	assert_int_equal(tc.n, 4);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_NOT_IP);
		assert_int_equal(pkt.n_vlan, 2);
		assert_int_equal(pkt.vlan_outer, 200);
		assert_int_equal(pkt.vlan_inner, 2001);
	}
	assert_int_equal(tcap_parse(&tc, 2, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.n_vlan, 2);
	assert_int_equal(pkt.vlan_outer, 200);
	assert_int_equal(pkt.vlan_inner, 2001);
	assert_int_equal(pkt.tuple.l4, 17);
	assert_int_equal(pkt.tuple.sport, 5000);
	assert_int_equal(pkt.tuple.dport, 53);
	assert_int_equal(tcap_parse(&tc, 3, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.n_vlan, 2);
	assert_int_equal(pkt.vlan_outer, 300);
	assert_int_equal(pkt.vlan_inner, 7);
	assert_int_equal(pkt.tuple.sport, 53);
	tcap_free(&tc);
}

/*
 * link-vlan-zones.pcap: the same connection (192.0.2.10:40002 ->
 * 198.51.100.20:80, 13 segments) untagged, in VLAN 42 and in QinQ 10/20.
 */
static void test_own_same_connection_under_three_tag_stacks(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;
	unsigned untagged = 0, single42 = 0, qinq = 0;
	uint32_t a = tip4(192, 0, 2, 10), b = tip4(198, 51, 100, 20);

	(void)state;
	load(&tc, OWN("link-vlan-zones.pcap"));
	assert_int_equal(tc.n, 39);
	for (size_t i = 0; i < tc.n; i++) {
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
		assert_true((pkt.tuple.src.ip4 == a && pkt.tuple.dst.ip4 == b &&
			     pkt.tuple.sport == 40002 && pkt.tuple.dport == 80) ||
			    (pkt.tuple.src.ip4 == b && pkt.tuple.dst.ip4 == a &&
			     pkt.tuple.sport == 80 && pkt.tuple.dport == 40002));
		if (pkt.n_vlan == 0)
			untagged++;
		else if (pkt.n_vlan == 1 && pkt.vlan_outer == 42 &&
			 pkt.vlan_inner == 42)
			single42++;
		else if (pkt.n_vlan == 2 && pkt.vlan_outer == 10 &&
			 pkt.vlan_inner == 20)
			qinq++;
	}
	assert_int_equal(untagged, 13);
	assert_int_equal(single42, 13);
	assert_int_equal(qinq, 13);
	tcap_free(&tc);
}

/*
 * link-pppoe-qinq.pcap, under QinQ 3704/2474: four PPPoE session frames
 * with PPP IPv4 (a TCP SYN 192.0.2.33:20394 -> 198.51.100.2:443 of 60
 * bytes, 20 of them options, then three more segments), one with PPP IPv6
 * (UDP to port 53), a PADI discovery frame (0x8863) and an LCP echo in the
 * session: the last two are not IP.
 */
static void test_own_pppoe_session_over_qinq_is_opened(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, OWN("link-pppoe-qinq.pcap"));
	assert_int_equal(tc.n, 7);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.n_vlan, 2);
	assert_int_equal(pkt.vlan_outer, 3704);
	assert_int_equal(pkt.vlan_inner, 2474);
	assert_int_equal(pkt.tuple.src.ip4, tip4(192, 0, 2, 33));
	assert_int_equal(pkt.tuple.dst.ip4, tip4(198, 51, 100, 2));
	assert_int_equal(pkt.tuple.sport, 20394);
	assert_int_equal(pkt.tuple.dport, 443);
	assert_int_equal(pkt.l3_len, 60);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(tcap_parse(&tc, 4, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l3, CT_L3_IPV6);
	assert_int_equal(pkt.tuple.l4, 17);
	assert_int_equal(pkt.tuple.dport, 53);
	assert_int_equal(tcap_parse(&tc, 5, &pkt), CT_PKT_NOT_IP);
	assert_int_equal(tcap_parse(&tc, 6, &pkt), CT_PKT_NOT_IP);
	tcap_free(&tc);
}

/*
 * link-mpls.pcap: 1: VLAN 5, IPv4 with a wrong header checksum;
 * 2: VLAN 5, MPLS label 1000 around IPv4; 3: MPLS labels 16/1001 around
 * IPv4, untagged; 4: multicast MPLS (0x8848) around IPv6.  MPLS is not
 * opened (the kernel does not decapsulate it in front of conntrack).
 */
static void test_own_mpls_is_not_opened(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, OWN("link-mpls.pcap"));
	assert_int_equal(tc.n, 4);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_true(pkt.ip_csum_bad);
	assert_int_equal(pkt.n_vlan, 1);
	assert_int_equal(tcap_parse(&tc, 1, &pkt), CT_PKT_NOT_IP);
	assert_int_equal(pkt.n_vlan, 1);
	assert_int_equal(tcap_parse(&tc, 2, &pkt), CT_PKT_NOT_IP);
	assert_int_equal(pkt.n_vlan, 0);
	assert_int_equal(tcap_parse(&tc, 3, &pkt), CT_PKT_NOT_IP);
	tcap_free(&tc);
}

/*
 * link-sll-nano.pcap (LINKTYPE_LINUX_SLL, nanosecond magic): SYN
 * 203.0.113.69:46656 -> 198.51.100.94:80 of 60 bytes, SYN/ACK of 60 bytes,
 * ACK of 52 bytes.
 */
static void test_own_linux_sll_v1_nanosecond_handshake(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, OWN("link-sll-nano.pcap"));
	assert_int_equal(tc.linktype, CT_LINK_LINUX_SLL);
	assert_int_equal(tc.n, 3);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.src.ip4, tip4(203, 0, 113, 69));
	assert_int_equal(pkt.tuple.dst.ip4, tip4(198, 51, 100, 94));
	assert_int_equal(pkt.tuple.sport, 46656);
	assert_int_equal(pkt.tuple.dport, 80);
	assert_int_equal(pkt.u.tcp.flags, CT_TCP_SYN);
	assert_int_equal(pkt.l3_len, 60);
	assert_int_equal(tcap_parse(&tc, 1, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.tcp.flags, CT_TCP_SYN | CT_TCP_ACK);
	assert_int_equal(pkt.tuple.sport, 80);
	assert_int_equal(tcap_parse(&tc, 2, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.tcp.flags, CT_TCP_ACK);
	assert_int_equal(pkt.l3_len, 52);
	tcap_free(&tc);
}

/*
 * link-sll2.pcap (LINKTYPE_LINUX_SLL2): 1-2: ICMP echo 192.0.2.1 ->
 * 192.0.2.2 id 8 and its reply on interface 3; 3-4: ICMPv6 echo
 * 2001:db8::1 -> 2001:db8::2 id 9 and reply; 5: ARP and 6: RARP on
 * interface 26.
 */
static void test_own_linux_sll2_icmp_echo_and_arp(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, OWN("link-sll2.pcap"));
	assert_int_equal(tc.linktype, CT_LINK_LINUX_SLL2);
	assert_int_equal(tc.n, 6);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.ifindex, 3);
	assert_int_equal(pkt.tuple.l4, 1);
	assert_int_equal(pkt.tuple.sport, 8);                 /* id */
	assert_int_equal(pkt.tuple.dport, 8 << 8);            /* type 8 */
	assert_int_equal(pkt.tuple.src.ip4, tip4(192, 0, 2, 1));
	assert_int_equal(pkt.l3_len, 84);
	assert_int_equal(tcap_parse(&tc, 1, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.icmp.type, 0);
	assert_int_equal(tcap_parse(&tc, 2, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l3, CT_L3_IPV6);
	assert_int_equal(pkt.tuple.l4, 58);
	assert_int_equal(pkt.tuple.sport, 9);
	assert_int_equal(pkt.tuple.dport, 128 << 8);
	assert_ip6(&pkt.tuple.src, "2001:db8::1");
	assert_int_equal(pkt.l3_len, 104);
	assert_int_equal(tcap_parse(&tc, 3, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.icmp.type, 129);
	assert_int_equal(tcap_parse(&tc, 4, &pkt), CT_PKT_NOT_IP);
	assert_int_equal(pkt.ifindex, 26);
	assert_int_equal(tcap_parse(&tc, 5, &pkt), CT_PKT_NOT_IP);
	tcap_free(&tc);
}

/*
 * link-null.pcap (LINKTYPE_NULL, families in the writer's little-endian
 * order): 1-4: IPv6 TCP ::1:52522 -> ::1:80 under Darwin's AF_INET6 (30),
 * the SYN with 20 bytes of options; 5: IPv4 UDP (2); 6, 7: IPv6 UDP under
 * NetBSD's (24) and FreeBSD's (28) AF_INET6; 8: AF_INET written big-endian;
 * 9: family 7, not IP.
 */
static void test_own_bsd_null_loopback_families(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, OWN("link-null.pcap"));
	assert_int_equal(tc.linktype, CT_LINK_NULL);
	assert_int_equal(tc.n, 9);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l3, CT_L3_IPV6);
	assert_ip6(&pkt.tuple.src, "::1");
	assert_ip6(&pkt.tuple.dst, "::1");
	assert_int_equal(pkt.tuple.sport, 52522);
	assert_int_equal(pkt.tuple.dport, 80);
	assert_int_equal(pkt.l3_len, 40 + 40);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(tcap_parse(&tc, 4, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l3, CT_L3_IPV4);
	assert_int_equal(pkt.tuple.sport, 5000);
	for (size_t i = 5; i < 7; i++) {
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
		assert_int_equal(pkt.tuple.l3, CT_L3_IPV6);
		assert_int_equal(pkt.tuple.sport, 5002);
	}
	assert_int_equal(tcap_parse(&tc, 7, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l3, CT_L3_IPV4);
	assert_int_equal(tcap_parse(&tc, 8, &pkt), CT_PKT_NOT_IP);
	tcap_free(&tc);
}

/*
 * link-loop.pcap (LINKTYPE_LOOP, families in network order): AF_INET,
 * AF_INET6 (24), then AF_INET in little-endian order (0x02000000: no
 * family anyone knows, not IP).
 */
static void test_own_loop_family_in_network_order(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, OWN("link-loop.pcap"));
	assert_int_equal(tc.linktype, CT_LINK_LOOP);
	assert_int_equal(tc.n, 3);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l3, CT_L3_IPV4);
	assert_int_equal(tcap_parse(&tc, 1, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l3, CT_L3_IPV6);
	assert_int_equal(tcap_parse(&tc, 2, &pkt), CT_PKT_NOT_IP);
	tcap_free(&tc);
}

/*
 * link-nflog.pcap: 1-7: a TCP connection 192.0.2.15:49762 ->
 * 198.51.100.34:80 in NFULA_PAYLOAD attributes (SYN of 60 bytes, SYN/ACK
 * of 44, frame 6 a segment of 1643 bytes), every other record with an
 * NFULA_PREFIX before it; 8: IPv6 UDP to port 53 (family 10); 9: a record
 * with no payload attribute.
 */
static void test_own_nflog_payload_attribute_is_the_packet(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, OWN("link-nflog.pcap"));
	assert_int_equal(tc.linktype, CT_LINK_NFLOG);
	assert_int_equal(tc.n, 9);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.src.ip4, tip4(192, 0, 2, 15));
	assert_int_equal(pkt.tuple.dst.ip4, tip4(198, 51, 100, 34));
	assert_int_equal(pkt.tuple.sport, 49762);
	assert_int_equal(pkt.tuple.dport, 80);
	assert_int_equal(pkt.l3_len, 60);
	assert_int_equal(pkt.u.tcp.flags, CT_TCP_SYN);
	assert_int_equal(tcap_parse(&tc, 1, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.tcp.flags, CT_TCP_SYN | CT_TCP_ACK);
	assert_int_equal(pkt.l3_len, 44);
	assert_int_equal(tcap_parse(&tc, 5, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.l3_len, 1643);
	assert_false(pkt.truncated);
	for (size_t i = 0; i < 7; i++)
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(tcap_parse(&tc, 7, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l3, CT_L3_IPV6);
	assert_int_equal(pkt.tuple.dport, 53);
	assert_int_equal(tcap_parse(&tc, 8, &pkt), CT_PKT_NOT_IP);
	tcap_free(&tc);
}

/*
 * link-ipv4.pcap (LINKTYPE_IPV4): 192.0.2.100:12345 -> 198.51.100.9:53,
 * 57 bytes (29 of payload), and the answer.
 */
static void test_own_linktype_ipv4(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, OWN("link-ipv4.pcap"));
	assert_int_equal(tc.linktype, CT_LINK_IPV4);
	assert_int_equal(tc.n, 2);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l4, 17);
	assert_int_equal(pkt.tuple.src.ip4, tip4(192, 0, 2, 100));
	assert_int_equal(pkt.tuple.dst.ip4, tip4(198, 51, 100, 9));
	assert_int_equal(pkt.tuple.sport, 12345);
	assert_int_equal(pkt.tuple.dport, 53);
	assert_int_equal(pkt.l3_len, 57);
	assert_int_equal(pkt.payload_len, 29);
	assert_int_equal(tcap_parse(&tc, 1, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.l3_len, 73);
	tcap_free(&tc);
}

/*
 * link-raw.pcap (LINKTYPE_RAW, which libpcap reports as DLT_RAW): an IPv6
 * query 2001:db8::1:12345 -> 2001:db8:fe::9:53 of 77 bytes, then an IPv4
 * one; link-ipv6.pcap (LINKTYPE_IPV6): the same IPv6 query.
 */
static void test_own_linktype_raw_and_ipv6(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, OWN("link-raw.pcap"));
	assert_true(tc.linktype == CT_LINK_RAW ||
		    tc.linktype == CT_LINK_DLT_RAW12 ||
		    tc.linktype == CT_LINK_DLT_RAW14);
	assert_int_equal(tc.n, 2);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l3, CT_L3_IPV6);
	assert_ip6(&pkt.tuple.src, "2001:db8::1");
	assert_ip6(&pkt.tuple.dst, "2001:db8:fe::9");
	assert_int_equal(pkt.tuple.sport, 12345);
	assert_int_equal(pkt.tuple.dport, 53);
	assert_int_equal(pkt.l3_len, 77);
	assert_int_equal(tcap_parse(&tc, 1, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l3, CT_L3_IPV4);
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_RAW, tc.f[0].data,
					tc.f[0].caplen, tc.f[0].wirelen, 0),
			 CT_PKT_TRACKABLE);
	tcap_free(&tc);
	load(&tc, OWN("link-ipv6.pcap"));
	assert_int_equal(tc.linktype, CT_LINK_IPV6);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l3, CT_L3_IPV6);
	assert_int_equal(pkt.tuple.dport, 53);
	assert_int_equal(pkt.l3_len, 77);
	tcap_free(&tc);
}

/*
 * ng-two-interfaces.pcapng: interface 0 (microseconds), interface 1
 * (nanoseconds).  1: if0 172.16.0.2:36343 -> 192.0.2.53:53 (bad UDP
 * checksum); 2: its answer; 3: if1 10.0.0.4:56351 -> 192.0.2.53:53 with a
 * bad IPv4 header checksum; 4: its answer; 5: 10.0.0.4:56352, bad header
 * checksum; 6: its answer.
 */
static void test_own_pcapng_with_two_interfaces(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, OWN("ng-two-interfaces.pcapng"));
	assert_int_equal(tc.linktype, CT_LINK_ETHERNET);
	assert_int_equal(tc.n, 6);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.src.ip4, tip4(172, 16, 0, 2));
	assert_int_equal(pkt.tuple.sport, 36343);
	assert_int_equal(pkt.tuple.dport, 53);
	assert_false(pkt.ip_csum_bad);
	assert_int_equal(tcap_parse(&tc, 1, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.src.ip4, tip4(192, 0, 2, 53));
	assert_int_equal(tcap_parse(&tc, 2, &pkt), CT_PKT_TRACKABLE);
	assert_true(pkt.ip_csum_bad);
	assert_int_equal(tcap_parse(&tc, 3, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.dst.ip4, tip4(10, 0, 0, 4));
	assert_int_equal(pkt.tuple.dport, 56351);
	assert_int_equal(tcap_parse(&tc, 4, &pkt), CT_PKT_TRACKABLE);
	assert_true(pkt.ip_csum_bad);
	assert_int_equal(tcap_parse(&tc, 5, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.dport, 56352);
	tcap_free(&tc);
}

/*
 * link-short-frames.pcap: Ethernet frames with 4 bytes captured of 60,
 * 13 bytes, 14 bytes (the Ethernet header alone, EtherType IPv4), then a
 * whole UDP frame.
 */
static void test_own_frames_shorter_than_their_headers(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, OWN("link-short-frames.pcap"));
	assert_int_equal(tc.n, 4);
	assert_int_equal(tc.f[0].caplen, 4);
	assert_int_equal(tc.f[0].wirelen, 60);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_LINK_TRUNCATED);
	assert_int_equal(tcap_parse(&tc, 1, &pkt), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_LINK_TRUNCATED);
	assert_int_equal(tcap_parse(&tc, 2, &pkt), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_IP_TRUNCATED);
	assert_int_equal(tcap_parse(&tc, 3, &pkt), CT_PKT_TRACKABLE);
	tcap_free(&tc);
}

/* --- synthetic frames for what the corpus does not hold --- */

/* A minimal valid IPv4/UDP datagram (checksum filled in). */
static size_t make_ip4_udp(uint8_t *p)
{
	static const uint8_t ip[28] = {
		0x45, 0, 0, 28, 0, 1, 0, 0, 64, 17, 0, 0,
		10, 0, 0, 1, 10, 0, 0, 2,
		0x04, 0xd2, 0x00, 0x35, 0, 8, 0, 0,
	};
	uint32_t s = 0;

	memcpy(p, ip, sizeof(ip));
	for (int i = 0; i < 20; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	p[10] = (uint8_t)(~s >> 8);
	p[11] = (uint8_t)~s;
	return sizeof(ip);
}

static void test_unknown_link_type_is_unsupported(void **state)
{
	uint8_t f[64] = { 0 };
	struct ct_packet pkt;

	(void)state;
	/* 147 is LINKTYPE_USER0 */
	assert_int_equal(ct_parse_frame(&pkt, 147, f, sizeof(f), sizeof(f), 7),
			 CT_PKT_UNSUPPORTED_LINK);
	assert_int_equal(pkt.kind, CT_PKT_UNSUPPORTED_LINK);
	assert_int_equal(pkt.ts, 7);
}

static void test_loop_family_is_network_order(void **state)
{
	uint8_t f[4 + 28];
	struct ct_packet pkt;

	(void)state;
	make_ip4_udp(f + 4);
	f[0] = 0; f[1] = 0; f[2] = 0; f[3] = 2;         /* AF_INET, BE */
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_LOOP, f, sizeof(f),
					sizeof(f), 0), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.dport, 53);
	f[0] = 2; f[3] = 0;                             /* 0x02000000 */
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_LOOP, f, sizeof(f),
					sizeof(f), 0), CT_PKT_NOT_IP);
}

static void test_null_family_written_in_other_byte_order(void **state)
{
	uint8_t f[4 + 28];
	uint32_t fam = 2, swapped = __builtin_bswap32(2);
	struct ct_packet pkt;

	(void)state;
	make_ip4_udp(f + 4);
	memcpy(f, &fam, 4);
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_NULL, f, sizeof(f),
					sizeof(f), 0), CT_PKT_TRACKABLE);
	memcpy(f, &swapped, 4);
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_NULL, f, sizeof(f),
					sizeof(f), 0), CT_PKT_TRACKABLE);
}

static void test_vlan_tag_cut_short_is_link_truncated(void **state)
{
	uint8_t f[14 + 3] = { 0 };
	struct ct_packet pkt;

	(void)state;
	f[12] = 0x81;
	f[13] = 0x00;
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_ETHERNET, f, sizeof(f),
					sizeof(f), 0), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_LINK_TRUNCATED);
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_ETHERNET, f, 13, 13, 0),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_LINK_TRUNCATED);
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_LINUX_SLL, f, 15, 15, 0),
			 CT_PKT_INVALID);
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_LINUX_SLL2, f, 19, 19, 0),
			 CT_PKT_INVALID);
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_NULL, f, 3, 3, 0),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_LINK_TRUNCATED);
}

static void test_ethertype_ipv4_with_version_6_is_bad_version(void **state)
{
	uint8_t f[14 + 28] = { 0 };
	struct ct_packet pkt;

	(void)state;
	make_ip4_udp(f + 14);
	f[12] = 0x08;
	f[14] = 0x65;                   /* version 6 under EtherType IPv4 */
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_ETHERNET, f, sizeof(f),
					sizeof(f), 0), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_IP_BAD_VERSION);
}

static void test_nflog_without_payload_is_not_ip(void **state)
{
	/* header + one 8-byte TLV of type 1 (packet header) */
	uint8_t f[12] = { 2, 0, 0, 0 };
	uint16_t len = 8, type = 1;
	struct ct_packet pkt;

	(void)state;
	memcpy(f + 4, &len, 2);
	memcpy(f + 6, &type, 2);
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_NFLOG, f, sizeof(f),
					sizeof(f), 0), CT_PKT_NOT_IP);
	len = 2;                        /* a TLV shorter than its header */
	memcpy(f + 4, &len, 2);
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_NFLOG, f, sizeof(f),
					sizeof(f), 0), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_LINK_TRUNCATED);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest shared[] = {
		cmocka_unit_test(test_triple_vlan_stack_records_outer_and_inner_id),
		cmocka_unit_test(test_8021ad_s_tag_around_arp_is_not_ip),
		cmocka_unit_test(test_same_connection_under_three_tag_stacks),
		cmocka_unit_test(test_pppoe_session_over_qinq_is_opened),
		cmocka_unit_test(test_mpls_is_not_opened),
		cmocka_unit_test(test_linux_sll_v1_handshake),
		cmocka_unit_test(test_linux_sll2_icmp_echo_and_arp),
		cmocka_unit_test(test_bsd_null_loopback_carries_ipv6),
		cmocka_unit_test(test_nflog_payload_attribute_is_the_packet),
		cmocka_unit_test(test_linktype_ipv4),
		cmocka_unit_test(test_linktype_raw_ipv6),
		cmocka_unit_test(test_pcapng_with_two_interfaces),
		cmocka_unit_test(test_frame_shorter_than_ethernet_header),
	};
	const struct CMUnitTest own[] = {
		cmocka_unit_test(test_own_triple_vlan_stack_records_outer_and_inner_id),
		cmocka_unit_test(test_own_8021ad_and_9100_tags_around_arp_and_udp),
		cmocka_unit_test(test_own_same_connection_under_three_tag_stacks),
		cmocka_unit_test(test_own_pppoe_session_over_qinq_is_opened),
		cmocka_unit_test(test_own_mpls_is_not_opened),
		cmocka_unit_test(test_own_linux_sll_v1_nanosecond_handshake),
		cmocka_unit_test(test_own_linux_sll2_icmp_echo_and_arp),
		cmocka_unit_test(test_own_bsd_null_loopback_families),
		cmocka_unit_test(test_own_loop_family_in_network_order),
		cmocka_unit_test(test_own_nflog_payload_attribute_is_the_packet),
		cmocka_unit_test(test_own_linktype_ipv4),
		cmocka_unit_test(test_own_linktype_raw_and_ipv6),
		cmocka_unit_test(test_own_pcapng_with_two_interfaces),
		cmocka_unit_test(test_own_frames_shorter_than_their_headers),
		cmocka_unit_test(test_unknown_link_type_is_unsupported),
		cmocka_unit_test(test_loop_family_is_network_order),
		cmocka_unit_test(test_null_family_written_in_other_byte_order),
		cmocka_unit_test(test_vlan_tag_cut_short_is_link_truncated),
		cmocka_unit_test(test_ethertype_ipv4_with_version_6_is_bad_version),
		cmocka_unit_test(test_nflog_without_payload_is_not_ip),
	};

	return TCAP_MAIN(own, shared);
}
