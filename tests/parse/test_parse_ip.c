/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_parse_ip.c - IPv4/IPv6 headers and layer-4 checks.
 *
 * Three kinds of evidence:
 *   - real captures from ../shared/pcaps (the "shared" group), with
 *     expected values taken from tshark 4.0 (the command is quoted above
 *     each test);
 *   - the project's crafted captures (tests/captures/crafted, the default
 *     group), with the values craft.py built them with, which tshark reads
 *     back the same (tests/captures/check_captures.py);
 *   - synthetic packets for edges no capture holds, with expected results
 *     taken from the kernel code they mirror (named in each test):
 *     ip_rcv_core / ip6_rcv_core / ip6_parse_tlv before conntrack,
 *     ipv6_skip_exthdr and get_l4proto in nf_conntrack_core.c, and the
 *     protocols' error paths (tcp_error with tcp_valid_flags, udp_error,
 *     udplite_error, nf_conntrack_icmpv4/6_error, sctp do_basic_checks,
 *     gre_pkt_to_tuple).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>

#include "ctrack/packet.h"
#include "pcap_util.h"
#include "support/csum.h"
#include "support/wire.h"

static void load(struct tcap *tc, const char *name)
{
	if (!tcap_load(tc, name))
		fail_msg("cannot open %s: %s", name, tc->err);
}

static void assert_ip6(const union ct_addr *a, const char *text)
{
	uint8_t want[16];

	assert_int_equal(inet_pton(AF_INET6, text, want), 1);
	assert_memory_equal(a->ip6, want, 16);
}

/* ---- builders for synthetic packets ---- */

/* IPv4 header (20 bytes, checksum filled) + @l4 of @n bytes at @p. */
static size_t mk_ip4(uint8_t *p, uint8_t proto, const uint8_t *l4, size_t n)
{
	memset(p, 0, 20);
	p[0] = 0x45;
	ts_put16(p + 2, (uint32_t)(20 + n));
	ts_put16(p + 4, 0x1234);
	p[8] = 64;
	p[9] = proto;
	p[12] = 10; p[15] = 1;          /* 10.0.0.1 */
	p[16] = 10; p[19] = 2;          /* 10.0.0.2 */
	ts_ip4_csum(p);
	if (n)
		memcpy(p + 20, l4, n);
	return 20 + n;
}

/* IPv6 header + @rest (extension headers and L4) of @n bytes. */
static size_t mk_ip6(uint8_t *p, uint8_t nh, const uint8_t *rest, size_t n)
{
	memset(p, 0, 40);
	p[0] = 0x60;
	ts_put16(p + 4, (uint32_t)n);
	p[6] = nh;
	p[7] = 64;
	p[8] = 0x20; p[9] = 0x01; p[10] = 0x0d; p[11] = 0xb8; p[23] = 1;
	p[24] = 0x20; p[25] = 0x01; p[26] = 0x0d; p[27] = 0xb8; p[39] = 2;
	if (n)
		memcpy(p + 40, rest, n);
	return 40 + n;
}

/* TCP header with @optlen bytes of options and @payload zero bytes. */
static size_t mk_tcp(uint8_t *p, uint8_t flags, const uint8_t *opts,
		     size_t optlen, size_t payload)
{
	size_t hl = 20 + optlen;

	memset(p, 0, hl + payload);
	ts_put16(p, 40000);
	ts_put16(p + 2, 80);
	ts_put32(p + 4, 1000);
	ts_put32(p + 8, 2000);
	p[12] = (uint8_t)((hl / 4) << 4);
	p[13] = flags;
	ts_put16(p + 14, 512);
	if (optlen)
		memcpy(p + 20, opts, optlen);
	return hl + payload;
}

static enum ct_pkt_kind parse_raw(struct ct_packet *pkt, const uint8_t *p,
				  size_t n)
{
	return ct_parse_frame(pkt, CT_LINK_RAW, p, (uint32_t)n, (uint32_t)n, 0);
}

/* ======================= captures ======================= */

/*
 * tshark -r zeek__ipv6-http-atomic-frag.pcap -T fields -e frame.len
 *        -e ipv6.plen -e ipv6.nxt -e ipv6.fraghdr.offset -e ipv6.fraghdr.more
 *        -e tcp.srcport -e tcp.dstport
 * frame  4: 82 28 60 (dest opts, ipv6.dstopts.len 0 = 8 bytes) 36951->80
 * frame 13: 82 28 44 offset 0 more 0 (atomic fragment)      59694->80
 * frame 16: 97 43 44 atomic, 15 bytes of payload ("GET /bad.html")
 * frame 23: 82 28 0 (hop-by-hop, 8 bytes, PadN)              27393->80
 * frame 33: 82 28 43 (routing, 8 bytes)                      45805->80
 * An atomic fragment's header is removed by nf_defrag_ipv6 before
 * conntrack counts the packet, hence l3_len = 40 + plen - 8.
 */
static void test_ipv6_extension_chains_and_atomic_fragments(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "zeek__ipv6-http-atomic-frag.pcap");
	assert_int_equal(tc.n, 38);
	for (size_t i = 0; i < tc.n; i++)
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);

	tcap_parse(&tc, 3, &pkt);
	assert_int_equal(pkt.tuple.l4, 6);
	assert_int_equal(pkt.tuple.sport, 36951);
	assert_int_equal(pkt.l3_hdr_len, 48);
	assert_int_equal(pkt.l3_len, 68);
	assert_false(pkt.is_fragment);

	tcap_parse(&tc, 12, &pkt);
	assert_int_equal(pkt.tuple.sport, 59694);
	assert_int_equal(pkt.tuple.dport, 80);
	assert_int_equal(pkt.l3_hdr_len, 48);
	assert_int_equal(pkt.l3_len, 40 + 28 - 8);
	assert_int_equal(pkt.l4_len, 20);
	assert_false(pkt.is_fragment);
	assert_int_equal(pkt.frag_offset, 0);
	assert_false(pkt.frag_more);

	tcap_parse(&tc, 15, &pkt);
	assert_int_equal(pkt.l3_len, 40 + 43 - 8);
	assert_int_equal(pkt.payload_len, 15);

	tcap_parse(&tc, 22, &pkt);
	assert_int_equal(pkt.tuple.sport, 27393);
	assert_int_equal(pkt.l3_hdr_len, 48);
	assert_int_equal(pkt.l3_len, 68);

	tcap_parse(&tc, 32, &pkt);
	assert_int_equal(pkt.tuple.sport, 45805);
	assert_int_equal(pkt.l3_hdr_len, 48);
	assert_int_equal(pkt.l3_len, 68);
	tcap_free(&tc);
}

/*
 * tshark -r tcpdump__ipv6-routing-header.pcap -T fields -e ipv6.plen
 *        -e ipv6.routing.len -e icmpv6.type -e icmpv6.echo.identifier
 *        -e udp.srcport -e udp.dstport
 * -> 1: 32 len 2 (24 bytes) echo 128 id 0; 2: 48 len 4 (40 bytes) echo;
 *    3: 32 len 2 UDP 5645->5642; 4: 48 len 4 UDP 5645->5642.
 */
static void test_ipv6_routing_header_is_walked(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "tcpdump__ipv6-routing-header.pcap");
	assert_int_equal(tc.n, 4);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l4, 58);
	assert_int_equal(pkt.l3_hdr_len, 40 + 24);
	assert_int_equal(pkt.tuple.dport, 128 << 8);
	assert_int_equal(pkt.tuple.sport, 0);
	assert_int_equal(tcap_parse(&tc, 1, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.l3_hdr_len, 40 + 40);
	assert_int_equal(tcap_parse(&tc, 2, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l4, 17);
	assert_int_equal(pkt.tuple.sport, 5645);
	assert_int_equal(pkt.tuple.dport, 5642);
	assert_int_equal(pkt.l3_hdr_len, 64);
	assert_int_equal(tcap_parse(&tc, 3, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.l3_hdr_len, 80);
	assert_int_equal(pkt.l3_len, 40 + 48);
	tcap_free(&tc);
}

/*
 * tshark -r zeek__icmp-destunreach-udp.pcap -T fields -e ip.src -e ip.dst
 *        -e icmp.type -e icmp.code -e udp.srcport -e udp.dstport -e ip.proto
 * -> "192.168.1.102,192.168.1.1  192.168.1.1,192.168.1.102  3 3  53 59207
 *     1,17": the quoted packet was sent 192.168.1.1:53 -> .102:59207.
 */
static void test_icmp_port_unreachable_quotes_udp_tuple(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;
	const struct ct_tuple *in;

	(void)state;
	load(&tc, "zeek__icmp-destunreach-udp.pcap");
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l4, 1);
	assert_int_equal(pkt.tuple.src.ip4, tip4(192, 168, 1, 102));
	assert_int_equal(pkt.tuple.dst.ip4, tip4(192, 168, 1, 1));
	assert_int_equal(pkt.tuple.dport, 3 << 8 | 3);
	assert_true(pkt.u.icmp.is_error);
	assert_true(pkt.u.icmp.inner_ok);
	in = &pkt.u.icmp.inner;
	assert_int_equal(in->l3, CT_L3_IPV4);
	assert_int_equal(in->l4, 17);
	assert_int_equal(in->src.ip4, tip4(192, 168, 1, 1));
	assert_int_equal(in->dst.ip4, tip4(192, 168, 1, 102));
	assert_int_equal(in->sport, 53);
	assert_int_equal(in->dport, 59207);
	assert_int_equal(in->zone, 0);
	tcap_free(&tc);
}

/*
 * tshark -r zeek__icmp-timeexceeded.pcap -T fields -e ip.src -e ip.dst
 *        -e icmp.type -e icmp.code -e udp.srcport -e udp.dstport
 * -> "10.0.0.1,10.0.0.2  10.0.0.2,10.0.0.1  11 0  30000 13000".
 */
static void test_icmp_time_exceeded_quotes_udp_tuple(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "zeek__icmp-timeexceeded.pcap");
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.icmp.type, 11);
	assert_true(pkt.u.icmp.inner_ok);
	assert_int_equal(pkt.u.icmp.inner.src.ip4, tip4(10, 0, 0, 2));
	assert_int_equal(pkt.u.icmp.inner.dst.ip4, tip4(10, 0, 0, 1));
	assert_int_equal(pkt.u.icmp.inner.sport, 30000);
	assert_int_equal(pkt.u.icmp.inner.dport, 13000);
	tcap_free(&tc);
}

/*
 * tshark -r zeek__icmp6-toobig.pcap -T fields -e ipv6.src -e ipv6.dst
 *        -e icmpv6.type -e icmpv6.code -e udp.srcport -e udp.dstport
 * -> "fe80::dead,fe80::beef  fe80::beef,fe80::dead  2 0  30000 13000".
 */
static void test_icmpv6_packet_too_big_quotes_udp_tuple(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "zeek__icmp6-toobig.pcap");
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l4, 58);
	assert_int_equal(pkt.u.icmp.type, 2);
	assert_true(pkt.u.icmp.is_error);
	assert_true(pkt.u.icmp.inner_ok);
	assert_int_equal(pkt.u.icmp.inner.l3, CT_L3_IPV6);
	assert_int_equal(pkt.u.icmp.inner.l4, 17);
	assert_ip6(&pkt.u.icmp.inner.src, "fe80::beef");
	assert_ip6(&pkt.u.icmp.inner.dst, "fe80::dead");
	assert_int_equal(pkt.u.icmp.inner.sport, 30000);
	assert_int_equal(pkt.u.icmp.inner.dport, 13000);
	tcap_free(&tc);
}

/*
 * tshark -r zeek__icmp6-destunreach-ip6ext-udp.pcap -V: ICMPv6 type 1
 * code 0 quoting fe80::beef -> fe80::dead with a hop-by-hop header (PadN)
 * before UDP 30000 -> 13000.  The quote's chain is walked as
 * ipv6_skip_exthdr walks it.
 */
static void test_icmpv6_error_quote_with_extension_header(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "zeek__icmp6-destunreach-ip6ext-udp.pcap");
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.icmp.type, 1);
	assert_true(pkt.u.icmp.inner_ok);
	assert_int_equal(pkt.u.icmp.inner.l4, 17);
	assert_ip6(&pkt.u.icmp.inner.src, "fe80::beef");
	assert_int_equal(pkt.u.icmp.inner.sport, 30000);
	assert_int_equal(pkt.u.icmp.inner.dport, 13000);
	tcap_free(&tc);
}

/*
 * tshark -r tcpdump__bigtcp-ipv6-hbh.pcap: frame.len 80094, ipv6.plen 0,
 * ipv6.opt.jumbo 80040, TCP 41851 -> 43913, tcp.len 80000 (32-byte TCP
 * header after the 8-byte hop-by-hop header).
 */
static void test_ipv6_jumbogram_length_comes_from_hop_by_hop(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "tcpdump__bigtcp-ipv6-hbh.pcap");
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.l3_len, 40 + 80040);
	assert_int_equal(pkt.l3_hdr_len, 48);
	assert_int_equal(pkt.l4_len, 80032);
	assert_int_equal(pkt.payload_len, 80000);
	assert_int_equal(pkt.tuple.sport, 41851);
	assert_int_equal(pkt.tuple.dport, 43913);
	assert_false(pkt.truncated);
	tcap_free(&tc);
}

/*
 * tshark -r tcpdump__ipv4_invalid_hdr_length.pcap -x: byte 14 is 0x44,
 * an IHL of 4 (16 bytes): ip_rcv_core drops IHL < 5.
 * tshark -r tcpdump__ipv6_invalid_length.pcap: frame.len 53, EtherType
 * 0x86dd: 39 bytes cannot hold the 40-byte IPv6 header.
 */
static void test_broken_ip_headers_from_the_corpus(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "tcpdump__ipv4_invalid_hdr_length.pcap");
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_IP_BAD_HDR_LEN);
	tcap_free(&tc);
	load(&tc, "tcpdump__ipv6_invalid_length.pcap");
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_IP_TRUNCATED);
	tcap_free(&tc);
}

/*
 * tshark -r ndpi__badpackets.pcap -T fields -e frame.len -e ip.len:
 * every one of the 93 frames has ip.len + 14 > frame.len (e.g. 271 vs
 * 1500): the datagram claims more bytes than the wire carried, and
 * ip_rcv_core drops it ("PKT_TOO_SMALL").
 */
static void test_total_length_beyond_the_frame_is_invalid(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "ndpi__badpackets.pcap");
	assert_int_equal(tc.n, 93);
	for (size_t i = 0; i < tc.n; i++) {
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_INVALID);
		assert_int_equal(pkt.reason, CT_PR_IP_BAD_TOTAL_LEN);
	}
	tcap_free(&tc);
}

/*
 * tshark -r zeek__truncated-header.pcap -T fields -e frame.cap_len
 *        -e ip.len -e tcp.hdr_len
 * frame 1: cap 68, TCP header 40 -> only 34 TCP bytes captured: the
 * header is cut, L4_TRUNCATED.  Frames with ip.len + 14 > cap_len (12 in
 * all, frame 1 included) are cut after their headers: tracked, truncated.
 */
static void test_snaplen_cut_headers_and_payloads(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;
	unsigned truncated = 0, whole = 0;

	(void)state;
	load(&tc, "zeek__truncated-header.pcap");
	assert_int_equal(tc.n, 24);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_L4_TRUNCATED);
	for (size_t i = 1; i < tc.n; i++) {
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
		if (pkt.truncated) {
			truncated++;
			assert_true(pkt.l4_caplen < pkt.l4_len);
		} else {
			whole++;
			assert_int_equal(pkt.l4_caplen, pkt.l4_len);
		}
	}
	assert_int_equal(truncated, 11);
	assert_int_equal(whole, 12);
	tcap_free(&tc);
}

/*
 * tshark -r ndpi__sctp.cap (big-endian pcap) -T fields -e ip.src
 *        -e sctp.srcport -e ip.dst -e sctp.dstport -e sctp.verification_tag
 *        -e sctp.chunk_type
 * -> 1: 10.28.6.43:16384 -> 10.28.6.44:2944 0x00016f0a DATA(0)
 *    2: reply 0x21441523 SACK(3); 3: 10.28.6.42:2905 -> .44:2905
 *    0x00000e50 HEARTBEAT(4); 4: 0x0d53e6fe HEARTBEAT ACK(5).
 */
static void test_sctp_big_endian_capture(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;
	static const uint32_t vtag[4] = {
		0x00016f0a, 0x21441523, 0x00000e50, 0x0d53e6fe,
	};
	static const uint8_t type[4] = { 0, 3, 4, 5 };

	(void)state;
	load(&tc, "ndpi__sctp.cap");
	assert_int_equal(tc.n, 4);
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
		assert_int_equal(pkt.tuple.l4, 132);
		assert_int_equal(pkt.u.sctp.vtag, vtag[i]);
		assert_int_equal(pkt.u.sctp.first_chunk, type[i]);
		assert_int_equal(pkt.u.sctp.n_chunks, 1);
		assert_int_equal(pkt.u.sctp.chunk_map, 1u << type[i]);
	}
	tcap_parse(&tc, 0, &pkt);
	assert_int_equal(pkt.tuple.src.ip4, tip4(10, 28, 6, 43));
	assert_int_equal(pkt.tuple.sport, 16384);
	assert_int_equal(pkt.tuple.dport, 2944);
	tcap_free(&tc);
}

/*
 * tshark -r zeek__sctp.pcap -T fields -e sctp.verification_tag
 *        -e sctp.chunk_type -e sctp.init_initiate_tag
 *        -e sctp.initack_initiate_tag
 * -> 1: 0x00000000 INIT(1) initiate tag 0x43232544
 *    2: 0x43232544 INIT ACK(2) initiate tag 0x00000eb0
 *    3: 0x00000eb0 COOKIE ECHO(10); 4: 0x43232544 COOKIE ACK(11)
 *    6: 0x43232544 chunks 3,0,0 (SACK + two DATA); all 74 frames valid.
 */
static void test_sctp_association_setup_chunks(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "zeek__sctp.pcap");
	assert_int_equal(tc.n, 74);
	for (size_t i = 0; i < tc.n; i++)
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
	tcap_parse(&tc, 0, &pkt);
	assert_int_equal(pkt.u.sctp.vtag, 0);
	assert_int_equal(pkt.u.sctp.first_chunk, 1);
	assert_int_equal(pkt.u.sctp.init_tag, 0x43232544);
	tcap_parse(&tc, 1, &pkt);
	assert_int_equal(pkt.u.sctp.vtag, 0x43232544);
	assert_int_equal(pkt.u.sctp.first_chunk, 2);
	assert_int_equal(pkt.u.sctp.init_tag, 0x00000eb0);
	tcap_parse(&tc, 2, &pkt);
	assert_int_equal(pkt.u.sctp.first_chunk, 10);
	assert_int_equal(pkt.u.sctp.init_tag, 0);
	tcap_parse(&tc, 3, &pkt);
	assert_int_equal(pkt.u.sctp.first_chunk, 11);
	tcap_parse(&tc, 5, &pkt);
	assert_int_equal(pkt.u.sctp.first_chunk, 3);
	assert_int_equal(pkt.u.sctp.n_chunks, 3);
	assert_int_equal(pkt.u.sctp.chunk_map, (1u << 3) | (1u << 0));
	tcap_free(&tc);
}

/*
 * tshark -r tcpdump__pptp.pcap -Y gre -T fields -e gre.flags_and_version
 *        -e gre.proto -e gre.key.call_id -e gre.key.payload_length
 * -> frame 16 only: 0x3001 (K and S set, version 1) 0x880b call id 0
 *    payload length 48.  gre_pkt_to_tuple: dst key = call id, src 0.
 * tshark -r zeek__gre-sample.pcap -Y gre -e gre.flags.version -e gre.proto
 * -> version 0, 0x0800: plain GRE, tracked like the generic protocol.
 */
static void test_gre_versions_and_pptp_call_id(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, "tcpdump__pptp.pcap");
	assert_int_equal(tc.n, 23);
	assert_int_equal(tcap_parse(&tc, 15, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l4, 47);
	assert_int_equal(pkt.u.gre.version, 1);
	assert_int_equal(pkt.u.gre.ptype, 0x880b);
	assert_true(pkt.u.gre.has_key);
	assert_int_equal(pkt.u.gre.key, 48u << 16 | 0);
	assert_int_equal(pkt.tuple.sport, 0);
	assert_int_equal(pkt.tuple.dport, 0);
	tcap_free(&tc);

	load(&tc, "zeek__gre-sample.pcap");
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l4, 47);
	assert_int_equal(pkt.u.gre.version, 0);
	assert_int_equal(pkt.u.gre.ptype, 0x0800);
	assert_int_equal(pkt.tuple.sport, 0);
	assert_int_equal(pkt.tuple.dport, 0);
	tcap_free(&tc);
}

/* ================ the project's own captures (craft.py) ================ */

/*
 * ip6-ext-chains.pcap, 2001:db8::1 -> 2001:db8::2:
 * 1: destination options (8 bytes) + TCP SYN 36951->80, plen 28;
 * 2: an atomic fragment (offset 0, M clear) + SYN 59694->80, plen 28;
 * 3: an atomic fragment + 15 bytes of data from 59694, plen 43;
 * 4: hop-by-hop (8) + SYN 27393->80; 5: routing (type 0, 8 bytes) + SYN
 *    45805->80;
 * 6: hop-by-hop, destination options, routing, an atomic fragment and
 *    destination options (8 bytes each) + UDP 5000->53 with 12 bytes,
 *    plen 60;
 * 7: AH (24 bytes) + UDP 5001->53 with 4 bytes, plen 36.
 * nf_defrag_ipv6 removes an atomic fragment's header before conntrack
 * counts the packet: l3_len is 40 + plen - 8 for 2, 3 and 6.
 */
static void test_own_ipv6_extension_chains_and_atomic_fragments(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, OWN("ip6-ext-chains.pcap"));
	assert_int_equal(tc.n, 7);
	for (size_t i = 0; i < tc.n; i++) {
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
		assert_false(pkt.is_fragment);
	}
	tcap_parse(&tc, 0, &pkt);
	assert_int_equal(pkt.tuple.l4, 6);
	assert_int_equal(pkt.tuple.sport, 36951);
	assert_int_equal(pkt.l3_hdr_len, 48);
	assert_int_equal(pkt.l3_len, 68);

	tcap_parse(&tc, 1, &pkt);
	assert_int_equal(pkt.tuple.sport, 59694);
	assert_int_equal(pkt.tuple.dport, 80);
	assert_int_equal(pkt.l3_hdr_len, 48);
	assert_int_equal(pkt.l3_len, 40 + 28 - 8);
	assert_int_equal(pkt.l4_len, 20);
	assert_int_equal(pkt.frag_offset, 0);
	assert_false(pkt.frag_more);

	tcap_parse(&tc, 2, &pkt);
	assert_int_equal(pkt.l3_len, 40 + 43 - 8);
	assert_int_equal(pkt.payload_len, 15);

	tcap_parse(&tc, 3, &pkt);
	assert_int_equal(pkt.tuple.sport, 27393);
	assert_int_equal(pkt.l3_hdr_len, 48);
	assert_int_equal(pkt.l3_len, 68);

	tcap_parse(&tc, 4, &pkt);
	assert_int_equal(pkt.tuple.sport, 45805);
	assert_int_equal(pkt.l3_hdr_len, 48);
	assert_int_equal(pkt.l3_len, 68);

	tcap_parse(&tc, 5, &pkt);
	assert_int_equal(pkt.tuple.l4, 17);
	assert_int_equal(pkt.tuple.sport, 5000);
	assert_int_equal(pkt.l3_hdr_len, 40 + 5 * 8);
	assert_int_equal(pkt.l3_len, 40 + 60 - 8);
	assert_int_equal(pkt.l4_len, 20);

	tcap_parse(&tc, 6, &pkt);
	assert_int_equal(pkt.tuple.l4, 17);
	assert_int_equal(pkt.tuple.sport, 5001);
	assert_int_equal(pkt.l3_hdr_len, 40 + 24);
	assert_int_equal(pkt.l3_len, 40 + 36);
	tcap_free(&tc);
}

/*
 * ip6-routing.pcap: type 0 routing headers, header destination
 * 2001:db8:1::1: 1: one hop left (24 bytes) before an ICMPv6 echo of id 0;
 * 2: two hops left (40 bytes) before an echo; 3, 4: the same before UDP
 * 5645 -> 5642 with 16 bytes.
 */
static void test_own_ipv6_routing_header_is_walked(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, OWN("ip6-routing.pcap"));
	assert_int_equal(tc.n, 4);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l4, 58);
	assert_int_equal(pkt.l3_hdr_len, 40 + 24);
	assert_int_equal(pkt.tuple.dport, 128 << 8);
	assert_int_equal(pkt.tuple.sport, 0);
	assert_ip6(&pkt.tuple.dst, "2001:db8:1::1");
	assert_int_equal(tcap_parse(&tc, 1, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.l3_hdr_len, 40 + 40);
	assert_int_equal(tcap_parse(&tc, 2, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l4, 17);
	assert_int_equal(pkt.tuple.sport, 5645);
	assert_int_equal(pkt.tuple.dport, 5642);
	assert_int_equal(pkt.l3_hdr_len, 64);
	assert_int_equal(tcap_parse(&tc, 3, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.l3_hdr_len, 80);
	assert_int_equal(pkt.l3_len, 40 + 40 + 24);
	tcap_free(&tc);
}

/*
 * icmp-errors.pcap, each error right after the packet it quotes:
 *  2: port unreachable 192.0.2.102 -> 192.0.2.1 quoting UDP
 *     192.0.2.1:53 -> 192.0.2.102:59207 (frame 1);
 *  4: time exceeded 10.9.9.9 -> 10.0.0.2 quoting UDP 10.0.0.2:30000 ->
 *     10.0.0.1:13000 (frame 3);
 *  6: ICMPv6 packet too big 2001:db8::fe -> 2001:db8::beef quoting UDP
 *     2001:db8::beef:30000 -> 2001:db8::dead:13000 (frame 5);
 *  8: ICMPv6 port unreachable quoting a hop-by-hop header before UDP
 *     30001 -> 13001 (frame 7);
 * 10: fragmentation needed quoting a TCP SYN 192.0.2.1:40000 ->
 *     203.0.113.5:443 (frame 9).
 */
static void test_own_icmp_and_icmpv6_errors_quote_their_tuples(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;
	const struct ct_tuple *in = &pkt.u.icmp.inner;

	(void)state;
	load(&tc, OWN("icmp-errors.pcap"));
	assert_int_equal(tc.n, 12);
	assert_int_equal(tcap_parse(&tc, 1, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l4, 1);
	assert_int_equal(pkt.tuple.src.ip4, tip4(192, 0, 2, 102));
	assert_int_equal(pkt.tuple.dst.ip4, tip4(192, 0, 2, 1));
	assert_int_equal(pkt.tuple.dport, 3 << 8 | 3);
	assert_true(pkt.u.icmp.is_error);
	assert_true(pkt.u.icmp.inner_ok);
	assert_int_equal(in->l3, CT_L3_IPV4);
	assert_int_equal(in->l4, 17);
	assert_int_equal(in->src.ip4, tip4(192, 0, 2, 1));
	assert_int_equal(in->dst.ip4, tip4(192, 0, 2, 102));
	assert_int_equal(in->sport, 53);
	assert_int_equal(in->dport, 59207);
	assert_int_equal(in->zone, 0);

	assert_int_equal(tcap_parse(&tc, 3, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.icmp.type, 11);
	assert_int_equal(pkt.tuple.src.ip4, tip4(10, 9, 9, 9));
	assert_true(pkt.u.icmp.inner_ok);
	assert_int_equal(in->src.ip4, tip4(10, 0, 0, 2));
	assert_int_equal(in->dst.ip4, tip4(10, 0, 0, 1));
	assert_int_equal(in->sport, 30000);
	assert_int_equal(in->dport, 13000);

	assert_int_equal(tcap_parse(&tc, 5, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l4, 58);
	assert_int_equal(pkt.u.icmp.type, 2);
	assert_true(pkt.u.icmp.is_error);
	assert_true(pkt.u.icmp.inner_ok);
	assert_int_equal(in->l3, CT_L3_IPV6);
	assert_int_equal(in->l4, 17);
	assert_ip6(&in->src, "2001:db8::beef");
	assert_ip6(&in->dst, "2001:db8::dead");
	assert_int_equal(in->sport, 30000);
	assert_int_equal(in->dport, 13000);

	assert_int_equal(tcap_parse(&tc, 7, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.icmp.type, 1);
	assert_true(pkt.u.icmp.inner_ok);
	assert_int_equal(in->l4, 17);
	assert_ip6(&in->src, "2001:db8::beef");
	assert_int_equal(in->sport, 30001);
	assert_int_equal(in->dport, 13001);

	assert_int_equal(tcap_parse(&tc, 9, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.dport, 3 << 8 | 4);
	assert_true(pkt.u.icmp.inner_ok);
	assert_int_equal(in->l4, 6);
	assert_int_equal(in->sport, 40000);
	assert_int_equal(in->dport, 443);
	tcap_free(&tc);
}

/*
 * ip6-jumbo.pcap.gz: payload length 0, a hop-by-hop jumbo option of 70040
 * (8 bytes of hop-by-hop, a 32-byte TCP header, 70000 bytes of data),
 * TCP 41851 -> 43913.
 */
static void test_own_ipv6_jumbogram_length_comes_from_hop_by_hop(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, OWN("ip6-jumbo.pcap.gz"));
	assert_int_equal(tc.n, 1);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.l3_len, 40 + 70040);
	assert_int_equal(pkt.l3_hdr_len, 48);
	assert_int_equal(pkt.l4_len, 70032);
	assert_int_equal(pkt.payload_len, 70000);
	assert_int_equal(pkt.tuple.sport, 41851);
	assert_int_equal(pkt.tuple.dport, 43913);
	assert_false(pkt.truncated);
	tcap_free(&tc);
}

/*
 * ip4-ihl4.pcap: IHL 4 (ip_rcv_core drops IHL < 5); ip6-cut-header.pcap:
 * 39 bytes after an IPv6 EtherType; ip-total-len-beyond-frame.pcap: 20
 * IPv4 frames claiming 1500 bytes in 257 and 5 IPv6 ones claiming 1048 in
 * 186, the wire as short as the capture.
 */
static void test_own_broken_ip_headers_and_lengths(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, OWN("ip4-ihl4.pcap"));
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_IP_BAD_HDR_LEN);
	tcap_free(&tc);
	load(&tc, OWN("ip6-cut-header.pcap"));
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_IP_TRUNCATED);
	tcap_free(&tc);
	load(&tc, OWN("ip-total-len-beyond-frame.pcap"));
	assert_int_equal(tc.n, 25);
	for (size_t i = 0; i < tc.n; i++) {
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_INVALID);
		assert_int_equal(pkt.reason, CT_PR_IP_BAD_TOTAL_LEN);
	}
	tcap_free(&tc);
}

/*
 * tcp-snaplen-cut.pcap, snapshot length 68: frame 1, the SYN, has a
 * 40-byte TCP header of which 34 bytes were captured: L4_TRUNCATED.  Of
 * the 12 others, 3 are longer than 68 bytes (cut after their headers:
 * tracked, truncated) and 9 whole (tshark: frame.len > frame.cap_len for
 * 4 frames).
 */
static void test_own_snaplen_cut_headers_and_payloads(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;
	unsigned truncated = 0, whole = 0;

	(void)state;
	load(&tc, OWN("tcp-snaplen-cut.pcap"));
	assert_int_equal(tc.n, 13);
	assert_int_equal(tcap_parse(&tc, 0, &pkt), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_L4_TRUNCATED);
	for (size_t i = 1; i < tc.n; i++) {
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
		if (pkt.truncated) {
			truncated++;
			assert_true(pkt.l4_caplen < pkt.l4_len);
		} else {
			whole++;
			assert_int_equal(pkt.l4_caplen, pkt.l4_len);
		}
	}
	assert_int_equal(truncated, 3);
	assert_int_equal(whole, 9);
	tcap_free(&tc);
}

/*
 * sctp-adler32-be.pcap (big-endian pcap): 1: 198.51.100.43:16384 ->
 * .44:2944 DATA, tag 0x00016f0a; 2: the SACK back, 0x21441523;
 * 3: .42:2905 -> .44:2905 HEARTBEAT, 0x00000e50; 4: HEARTBEAT ACK,
 * 0x0d53e6fe.
 */
static void test_own_sctp_big_endian_capture(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;
	static const uint32_t vtag[4] = {
		0x00016f0a, 0x21441523, 0x00000e50, 0x0d53e6fe,
	};
	static const uint8_t type[4] = { 0, 3, 4, 5 };

	(void)state;
	load(&tc, OWN("sctp-adler32-be.pcap"));
	assert_int_equal(tc.n, 4);
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
		assert_int_equal(pkt.tuple.l4, 132);
		assert_int_equal(pkt.u.sctp.vtag, vtag[i]);
		assert_int_equal(pkt.u.sctp.first_chunk, type[i]);
		assert_int_equal(pkt.u.sctp.n_chunks, 1);
		assert_int_equal(pkt.u.sctp.chunk_map, 1u << type[i]);
	}
	tcap_parse(&tc, 0, &pkt);
	assert_int_equal(pkt.tuple.src.ip4, tip4(198, 51, 100, 43));
	assert_int_equal(pkt.tuple.sport, 16384);
	assert_int_equal(pkt.tuple.dport, 2944);
	tcap_free(&tc);
}

/*
 * sctp-association.pcap, 68 packets: 1: INIT, tag 0, initiate tag
 * 0x43232544; 2: INIT ACK, tag 0x43232544, initiate tag 0x00000eb0;
 * 3: COOKIE ECHO; 4: COOKIE ACK; 5: DATA; 6: SACK + DATA + DATA; then
 * SACK + DATA both ways, a HEARTBEAT and its ACK.
 */
static void test_own_sctp_association_setup_chunks(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, OWN("sctp-association.pcap"));
	assert_int_equal(tc.n, 68);
	for (size_t i = 0; i < tc.n; i++)
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
	tcap_parse(&tc, 0, &pkt);
	assert_int_equal(pkt.u.sctp.vtag, 0);
	assert_int_equal(pkt.u.sctp.first_chunk, 1);
	assert_int_equal(pkt.u.sctp.init_tag, 0x43232544);
	tcap_parse(&tc, 1, &pkt);
	assert_int_equal(pkt.u.sctp.vtag, 0x43232544);
	assert_int_equal(pkt.u.sctp.first_chunk, 2);
	assert_int_equal(pkt.u.sctp.init_tag, 0x00000eb0);
	tcap_parse(&tc, 2, &pkt);
	assert_int_equal(pkt.u.sctp.first_chunk, 10);
	assert_int_equal(pkt.u.sctp.init_tag, 0);
	tcap_parse(&tc, 3, &pkt);
	assert_int_equal(pkt.u.sctp.first_chunk, 11);
	tcap_parse(&tc, 5, &pkt);
	assert_int_equal(pkt.u.sctp.first_chunk, 3);
	assert_int_equal(pkt.u.sctp.n_chunks, 3);
	assert_int_equal(pkt.u.sctp.chunk_map, (1u << 3) | (1u << 0));
	tcap_parse(&tc, 66, &pkt);
	assert_int_equal(pkt.u.sctp.first_chunk, 4);
	tcap_free(&tc);
}

/*
 * gre.pcap: 1, 2: GRE version 0 around IPv4 (0x0800), both ways; 3: the
 * same with checksum, key 0xabcd and sequence number; 4: enhanced GRE
 * (flags 0x3001: key, sequence, version 1) carrying PPP (0x880b), payload
 * length 40, call id 0x1234; 5: enhanced GRE with only an ACK (0x2081),
 * call id 0x5678.  gre_pkt_to_tuple: version 0 keys are 0; version 1's
 * destination key is the call id.
 */
static void test_own_gre_versions_and_pptp_call_id(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	load(&tc, OWN("gre.pcap"));
	assert_int_equal(tc.n, 5);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
		assert_int_equal(pkt.tuple.l4, 47);
		assert_int_equal(pkt.u.gre.version, 0);
		assert_int_equal(pkt.u.gre.ptype, 0x0800);
		assert_int_equal(pkt.tuple.sport, 0);
		assert_int_equal(pkt.tuple.dport, 0);
	}
	assert_int_equal(tcap_parse(&tc, 3, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.gre.version, 1);
	assert_int_equal(pkt.u.gre.ptype, 0x880b);
	assert_true(pkt.u.gre.has_key);
	assert_int_equal(pkt.u.gre.key, 40u << 16 | 0x1234);
	assert_int_equal(pkt.tuple.sport, 0);
	assert_int_equal(pkt.tuple.dport, 0x1234);
	assert_int_equal(tcap_parse(&tc, 4, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.gre.version, 1);
	assert_int_equal(pkt.tuple.dport, 0x5678);
	tcap_free(&tc);
}

/* ======================= synthetic ======================= */

/*
 * tcp_error(): the flag byte without ECE, CWR and PSH must be one of the
 * kernel's tcp_valid_flags entries.  Every one of the 256 flag bytes is
 * tried.
 */
static bool kernel_tcp_flags_valid(uint8_t f)
{
	static const uint8_t ok[] = {
		CT_TCP_SYN, CT_TCP_SYN | CT_TCP_URG, CT_TCP_SYN | CT_TCP_ACK,
		CT_TCP_RST, CT_TCP_RST | CT_TCP_ACK, CT_TCP_FIN | CT_TCP_ACK,
		CT_TCP_FIN | CT_TCP_ACK | CT_TCP_URG, CT_TCP_ACK,
		CT_TCP_ACK | CT_TCP_URG,
	};
	uint8_t core = f & (uint8_t)~(CT_TCP_ECE | CT_TCP_CWR | CT_TCP_PSH);

	for (size_t i = 0; i < sizeof(ok); i++)
		if (core == ok[i])
			return true;
	return false;
}

static void test_every_tcp_flag_byte_against_the_valid_flags_table(void **state)
{
	uint8_t l4[20], p[64];
	struct ct_packet pkt;
	unsigned valid = 0;

	(void)state;
	for (unsigned f = 0; f < 256; f++) {
		size_t n = mk_tcp(l4, (uint8_t)f, NULL, 0, 0);
		enum ct_pkt_kind k = parse_raw(&pkt, p, mk_ip4(p, 6, l4, n));

		if (kernel_tcp_flags_valid((uint8_t)f)) {
			assert_int_equal(k, CT_PKT_TRACKABLE);
			valid++;
		} else {
			assert_int_equal(k, CT_PKT_INVALID);
			assert_int_equal(pkt.reason, CT_PR_TCP_BAD_FLAGS);
		}
		assert_int_equal(pkt.u.tcp.flags, f);
	}
	/* 9 classes, each with 8 PSH/ECE/CWR variants */
	assert_int_equal(valid, 72);
}

static void test_named_tcp_flag_combinations(void **state)
{
	static const struct { uint8_t flags; bool ok; } cases[] = {
		{ 0, false },                                   /* null scan */
		{ CT_TCP_FIN, false },                          /* FIN scan */
		{ CT_TCP_FIN | CT_TCP_PSH | CT_TCP_URG, false },/* Xmas */
		{ CT_TCP_SYN | CT_TCP_FIN, false },
		{ CT_TCP_SYN | CT_TCP_RST, false },
		{ CT_TCP_RST | CT_TCP_FIN, false },
		{ CT_TCP_SYN | CT_TCP_ECE | CT_TCP_CWR, true }, /* ECN setup */
		{ CT_TCP_RST | CT_TCP_ACK | CT_TCP_PSH, true },
		{ CT_TCP_FIN | CT_TCP_ACK | CT_TCP_PSH, true },
		{ CT_TCP_ACK | CT_TCP_PSH | CT_TCP_URG, true },
		{ CT_TCP_SYN | CT_TCP_ACK | CT_TCP_URG, false },
		{ CT_TCP_RST | CT_TCP_URG, false },
	};
	uint8_t l4[20], p[64];
	struct ct_packet pkt;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = mk_tcp(l4, cases[i].flags, NULL, 0, 0);

		assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 6, l4, n)),
				 cases[i].ok ? CT_PKT_TRACKABLE : CT_PKT_INVALID);
	}
}

/*
 * Cut an Ethernet/IPv6/TCP frame (32-byte TCP header, 10 bytes of data)
 * at every length.  When only the capture is short (wire length whole):
 * link header, IPv6 header, TCP header cut -> the matching *_TRUNCATED
 * reason; headers whole -> tracked, truncated.  When the frame really is
 * that short: the payload length no longer fits (ip6_rcv_core drops it).
 */
static void test_every_truncation_point_of_a_tcp_ipv6_frame(void **state)
{
	static const uint8_t opts[12] = { 1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0 };
	uint8_t f[14 + 40 + 32 + 10], l4[42];
	size_t l4n = mk_tcp(l4, CT_TCP_ACK | CT_TCP_PSH, opts, 12, 10), full;
	struct ct_packet pkt;

	(void)state;
	memset(f, 0, 14);
	f[12] = 0x86;
	f[13] = 0xdd;
	full = 14 + mk_ip6(f + 14, 6, l4, l4n);
	assert_int_equal(full, sizeof(f));
	for (uint32_t cap = 0; cap <= full; cap++) {
		enum ct_pkt_kind k;

		k = ct_parse_frame(&pkt, CT_LINK_ETHERNET, f, cap,
				   (uint32_t)full, 0);
		if (cap < 14) {
			assert_int_equal(k, CT_PKT_INVALID);
			assert_int_equal(pkt.reason, CT_PR_LINK_TRUNCATED);
		} else if (cap < 54) {
			assert_int_equal(k, CT_PKT_INVALID);
			assert_int_equal(pkt.reason, CT_PR_IP_TRUNCATED);
		} else if (cap < 54 + 32) {
			assert_int_equal(k, CT_PKT_INVALID);
			assert_int_equal(pkt.reason, CT_PR_L4_TRUNCATED);
		} else {
			assert_int_equal(k, CT_PKT_TRACKABLE);
			assert_int_equal(pkt.truncated, cap < full);
			assert_int_equal(pkt.l4_caplen, cap - 54);
			assert_int_equal(pkt.l4_len, 42);
			assert_int_equal(pkt.l3_len, 82);
			assert_int_equal(pkt.payload_len, 10);
			assert_int_equal(pkt.u.tcp.tsval, 1);
		}

		k = ct_parse_frame(&pkt, CT_LINK_ETHERNET, f, cap, cap, 0);
		if (cap < 14)
			assert_int_equal(pkt.reason, CT_PR_LINK_TRUNCATED);
		else if (cap < 54)
			assert_int_equal(pkt.reason, CT_PR_IP_TRUNCATED);
		else if (cap < full)
			assert_int_equal(pkt.reason, CT_PR_IP_BAD_TOTAL_LEN);
		else
			assert_int_equal(k, CT_PKT_TRACKABLE);
	}
}

/* The same for IPv4/UDP, plus a destination-options header over IPv6 so
 * that a cut inside the extension chain is seen. */
static void test_every_truncation_point_of_udp_frames(void **state)
{
	uint8_t p[128], l4[16] = { 0x30, 0x39, 0x00, 0x35, 0, 16 };
	uint8_t rest[8 + 16] = { 17, 0, 1, 4, 0, 0, 0, 0 };
	size_t n4 = mk_ip4(p, 17, l4, 16), n6;
	struct ct_packet pkt;

	(void)state;
	for (uint32_t cap = 0; cap <= n4; cap++) {
		enum ct_pkt_kind k = ct_parse_ip(&pkt, p, cap, (uint32_t)n4, 0);

		if (cap < 20) {
			assert_int_equal(pkt.reason, CT_PR_IP_TRUNCATED);
		} else if (cap < 28) {
			assert_int_equal(pkt.reason, CT_PR_L4_TRUNCATED);
		} else {
			assert_int_equal(k, CT_PKT_TRACKABLE);
			assert_int_equal(pkt.tuple.dport, 53);
			assert_int_equal(pkt.truncated, cap < n4);
		}
	}
	memcpy(rest + 8, l4, 16);
	n6 = mk_ip6(p, 60, rest, sizeof(rest));
	for (uint32_t cap = 0; cap <= n6; cap++) {
		enum ct_pkt_kind k = ct_parse_ip(&pkt, p, cap, (uint32_t)n6, 0);

		if (cap < 40) {
			assert_int_equal(pkt.reason, CT_PR_IP_TRUNCATED);
		} else if (cap < 48) {
			assert_int_equal(pkt.reason, CT_PR_IP6_EXT_TRUNCATED);
		} else if (cap < 56) {
			assert_int_equal(pkt.reason, CT_PR_L4_TRUNCATED);
		} else {
			assert_int_equal(k, CT_PKT_TRACKABLE);
			assert_int_equal(pkt.l3_hdr_len, 48);
			assert_int_equal(pkt.tuple.sport, 12345);
		}
	}
}

/* ip_rcv_core: header checksum, IHL, total length; ethernet padding after
 * the datagram is not part of it. */
static void test_ipv4_header_checks(void **state)
{
	uint8_t p[128], l4[8] = { 0, 1, 0, 2, 0, 8 };
	size_t n = mk_ip4(p, 17, l4, 8);
	struct ct_packet pkt;

	(void)state;
	assert_int_equal(parse_raw(&pkt, p, n), CT_PKT_TRACKABLE);
	memset(p + n, 0xee, 18);                /* padding to 46 bytes */
	assert_int_equal(ct_parse_ip(&pkt, p, (uint32_t)n + 18,
				     (uint32_t)n + 18, 0), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.l3_len, 28);
	assert_false(pkt.truncated);

	p[8] ^= 1;                              /* TTL changed, csum not */
	assert_int_equal(parse_raw(&pkt, p, n), CT_PKT_TRACKABLE);
	assert_true(pkt.ip_csum_bad);           /* ct_process decides */
	p[8] ^= 1;

	ts_put16(p + 2, 19);                       /* total < header */
	ts_ip4_csum(p);
	assert_int_equal(parse_raw(&pkt, p, n), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_IP_BAD_HDR_LEN);

	ts_put16(p + 2, 29);                       /* one byte more than wire */
	ts_ip4_csum(p);
	assert_int_equal(parse_raw(&pkt, p, n), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_IP_BAD_TOTAL_LEN);

	ts_put16(p + 2, 28);
	p[0] = 0x46;                            /* 24-byte header, option */
	ts_ip4_csum(p);
	assert_int_equal(parse_raw(&pkt, p, n), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_L4_TRUNCATED);  /* 4-byte UDP */

	p[0] = 0x55;                            /* version 5 */
	assert_int_equal(parse_raw(&pkt, p, n), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_IP_BAD_VERSION);
}

static void test_ipv4_fragments_report_offset_and_first_ports(void **state)
{
	uint8_t p[64], l4[16] = { 0x30, 0x39, 0x00, 0x35, 0, 40 };
	size_t n = mk_ip4(p, 17, l4, 16);
	struct ct_packet pkt;

	(void)state;
	ts_put16(p + 6, 0x2000);                   /* MF, offset 0 */
	ts_ip4_csum(p);
	assert_int_equal(parse_raw(&pkt, p, n), CT_PKT_FRAGMENT);
	assert_true(pkt.is_fragment);
	assert_true(pkt.frag_more);
	assert_int_equal(pkt.frag_offset, 0);
	assert_int_equal(pkt.frag_id, 0x1234);
	assert_int_equal(pkt.tuple.sport, 12345);       /* first fragment */
	assert_int_equal(pkt.tuple.dport, 53);
	assert_int_equal(pkt.l4_len, 16);

	ts_put16(p + 6, 0x0003);                   /* last, offset 24 */
	ts_ip4_csum(p);
	assert_int_equal(parse_raw(&pkt, p, n), CT_PKT_FRAGMENT);
	assert_false(pkt.frag_more);
	assert_int_equal(pkt.frag_offset, 24);
	assert_int_equal(pkt.tuple.sport, 0);
	assert_int_equal(pkt.tuple.l4, 17);

	ts_put16(p + 6, 0x4000);                   /* DF only: not a fragment */
	ts_ip4_csum(p);
	assert_int_equal(parse_raw(&pkt, p, n), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_UDP_BAD_LEN); /* length 40 > 16 */
}

/* ip6_rcv_core drops multicast sources and scope-0 multicast
 * destinations; ff02::1 is an ordinary destination. */
static void test_ipv6_address_rules(void **state)
{
	uint8_t p[64], l4[8] = { 0, 1, 0, 2, 0, 8 };
	size_t n = mk_ip6(p, 17, l4, 8);
	struct ct_packet pkt;

	(void)state;
	assert_int_equal(parse_raw(&pkt, p, n), CT_PKT_TRACKABLE);
	p[8] = 0xff;
	assert_int_equal(parse_raw(&pkt, p, n), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_IP6_BAD_ADDR);
	p[8] = 0x20;
	p[24] = 0xff;
	p[25] = 0x02;
	assert_int_equal(parse_raw(&pkt, p, n), CT_PKT_TRACKABLE);
	p[25] = 0x00;
	assert_int_equal(parse_raw(&pkt, p, n), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_IP6_BAD_ADDR);
}

/* ipv6_skip_exthdr fails on "no next header"; get_l4proto then fails and
 * conntrack counts the packet invalid. */
static void test_ipv6_no_next_header(void **state)
{
	uint8_t p[64], dst[8] = { 59, 0 };
	struct ct_packet pkt;

	(void)state;
	assert_int_equal(parse_raw(&pkt, p, mk_ip6(p, 59, NULL, 0)),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_IP6_NO_NEXT_HDR);
	assert_int_equal(parse_raw(&pkt, p, mk_ip6(p, 60, dst, 8)),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_IP6_NO_NEXT_HDR);
}

/* ip6_parse_tlv on the hop-by-hop header (8 bytes: next, len, 6 option
 * bytes). */
static enum ct_pkt_kind hbh(struct ct_packet *pkt, const uint8_t opt[6])
{
	uint8_t p[64], rest[16] = { 17, 0 };

	memcpy(rest + 2, opt, 6);
	rest[8] = 0; rest[9] = 1; rest[10] = 0; rest[11] = 2;
	rest[12] = 0; rest[13] = 8;
	return parse_raw(pkt, p, mk_ip6(p, 0, rest, 16));
}

static void test_hop_by_hop_options_as_ip6_parse_tlv_checks_them(void **state)
{
	struct ct_packet pkt;
	static const uint8_t padn4[6] = { 1, 4, 0, 0, 0, 0 };
	static const uint8_t padn_dirty[6] = { 1, 4, 0, 1, 0, 0 };
	static const uint8_t pad1x6[6] = { 0, 0, 0, 0, 0, 0 };
	static const uint8_t skip_unknown[6] = { 0x3e, 0, 1, 2, 0, 0 };
	static const uint8_t drop_unknown[6] = { 0x7e, 0, 1, 2, 0, 0 };
	static const uint8_t icmp_unknown[6] = { 0xbe, 0, 1, 2, 0, 0 };
	static const uint8_t ra_ok[6] = { 5, 2, 0, 0, 1, 0 };
	static const uint8_t ra_bad[6] = { 5, 3, 0, 0, 0, 1 };
	static const uint8_t overrun[6] = { 0x3e, 5, 0, 0, 0, 0 };

	(void)state;
	assert_int_equal(hbh(&pkt, padn4), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.l3_hdr_len, 48);
	assert_int_equal(pkt.tuple.dport, 2);
	assert_int_equal(hbh(&pkt, pad1x6), CT_PKT_TRACKABLE);
	assert_int_equal(hbh(&pkt, skip_unknown), CT_PKT_TRACKABLE);
	assert_int_equal(hbh(&pkt, ra_ok), CT_PKT_TRACKABLE);
	assert_int_equal(hbh(&pkt, padn_dirty), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_IP6_EXT_BAD);
	assert_int_equal(hbh(&pkt, drop_unknown), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_IP6_EXT_BAD);
	assert_int_equal(hbh(&pkt, icmp_unknown), CT_PKT_INVALID);
	assert_int_equal(hbh(&pkt, ra_bad), CT_PKT_INVALID);
	assert_int_equal(hbh(&pkt, overrun), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_IP6_EXT_BAD);
}

/* net.ipv6.max_hbh_opts_number (8): a 32-byte hop-by-hop header holding
 * eight options passes, nine do not. */
static void test_more_than_eight_hop_by_hop_options_are_refused(void **state)
{
	uint8_t p[128], rest[32 + 8];
	struct ct_packet pkt;

	(void)state;
	memset(rest, 0, sizeof(rest));
	rest[0] = 17;
	rest[1] = 3;                    /* (3 + 1) * 8 = 32 bytes */
	rest[33] = 1; rest[35] = 2; rest[37] = 8;       /* UDP 1 -> 2 */

	/* seven empty skippable options, then one carrying 14 bytes */
	for (int i = 0; i < 7; i++)
		rest[2 + 2 * i] = 0x3e;
	rest[16] = 0x3e;
	rest[17] = 14;
	assert_int_equal(parse_raw(&pkt, p, mk_ip6(p, 0, rest, sizeof(rest))),
			 CT_PKT_TRACKABLE);

	/* eight empty ones, then one carrying 12 bytes: nine options */
	memset(rest + 2, 0, 30);
	for (int i = 0; i < 8; i++)
		rest[2 + 2 * i] = 0x3e;
	rest[18] = 0x3e;
	rest[19] = 12;
	assert_int_equal(parse_raw(&pkt, p, mk_ip6(p, 0, rest, sizeof(rest))),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_IP6_EXT_BAD);

	/* eight options and a 14-byte PadN: padding longer than 7 */
	rest[18] = 1;
	assert_int_equal(parse_raw(&pkt, p, mk_ip6(p, 0, rest, sizeof(rest))),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_IP6_EXT_BAD);
}

/* AH counts its length in 4-byte units (+2); ESP ends the chain. */
static void test_ah_length_rule_and_esp_as_l4(void **state)
{
	uint8_t p[128], rest[24 + 8] = { 17, 4 };       /* AH: (4+2)*4 = 24 */
	struct ct_packet pkt;

	(void)state;
	rest[24] = 0; rest[25] = 7; rest[26] = 0; rest[27] = 9;
	rest[28] = 0; rest[29] = 8;
	assert_int_equal(parse_raw(&pkt, p, mk_ip6(p, 51, rest, sizeof(rest))),
			 CT_PKT_TRACKABLE);
	assert_int_equal(pkt.l3_hdr_len, 64);
	assert_int_equal(pkt.tuple.l4, 17);
	assert_int_equal(pkt.tuple.sport, 7);
	assert_int_equal(pkt.tuple.dport, 9);

	assert_int_equal(parse_raw(&pkt, p, mk_ip6(p, 50, rest, 16)),
			 CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l4, 50);
	assert_int_equal(pkt.tuple.sport, 0);
	assert_int_equal(pkt.tuple.dport, 0);
	assert_int_equal(pkt.payload_len, 16);
}

static void test_ipv6_fragments(void **state)
{
	uint8_t p[128], rest[8 + 16] = { 17, 0, 0, 1, 0xde, 0xad, 0xbe, 0xef };
	struct ct_packet pkt;

	(void)state;
	rest[8] = 0x30; rest[9] = 0x39; rest[10] = 0; rest[11] = 53;
	/* first fragment: offset 0, M=1 */
	assert_int_equal(parse_raw(&pkt, p, mk_ip6(p, 44, rest, sizeof(rest))),
			 CT_PKT_FRAGMENT);
	assert_true(pkt.is_fragment);
	assert_true(pkt.frag_more);
	assert_int_equal(pkt.frag_id, 0xdeadbeef);
	assert_int_equal(pkt.tuple.l4, 17);
	assert_int_equal(pkt.tuple.sport, 12345);
	assert_int_equal(pkt.l3_hdr_len, 48);
	assert_int_equal(pkt.l4_len, 16);
	/* later fragment: offset 16, M=0: no ports */
	rest[2] = 0; rest[3] = 16;
	assert_int_equal(parse_raw(&pkt, p, mk_ip6(p, 44, rest, sizeof(rest))),
			 CT_PKT_FRAGMENT);
	assert_int_equal(pkt.frag_offset, 16);
	assert_false(pkt.frag_more);
	assert_int_equal(pkt.tuple.sport, 0);
	assert_int_equal(pkt.tuple.l4, 17);
	/* atomic: offset 0, M=0 -> an ordinary packet, 8 bytes less */
	rest[3] = 0;
	ts_put16(rest + 12, 16);
	assert_int_equal(parse_raw(&pkt, p, mk_ip6(p, 44, rest, sizeof(rest))),
			 CT_PKT_TRACKABLE);
	assert_false(pkt.is_fragment);
	assert_int_equal(pkt.frag_id, 0xdeadbeef);
	assert_int_equal(pkt.l3_len, 40 + 24 - 8);
}

/* udp_error: the UDP length may be shorter than the IP payload, not
 * longer, and not below 8.  udplite_error: coverage 0 (all) or 8..len,
 * and a checksum is mandatory. */
static void test_udp_and_udplite_length_rules(void **state)
{
	uint8_t p[64], u[16] = { 0, 1, 0, 2, 0, 16, 0x12, 0x34 };
	struct ct_packet pkt;

	(void)state;
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 17, u, 16)),
			 CT_PKT_TRACKABLE);
	u[5] = 12;
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 17, u, 16)),
			 CT_PKT_TRACKABLE);
	u[5] = 17;
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 17, u, 16)),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_UDP_BAD_LEN);
	u[5] = 7;
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 17, u, 16)),
			 CT_PKT_INVALID);
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 17, u, 7)),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_L4_TRUNCATED);

	u[5] = 0;                                       /* full coverage */
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 136, u, 16)),
			 CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.sport, 1);
	u[5] = 8;
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 136, u, 16)),
			 CT_PKT_TRACKABLE);
	u[5] = 4;
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 136, u, 16)),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_UDPLITE_BAD_COV);
	u[5] = 17;
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 136, u, 16)),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_UDPLITE_BAD_COV);
	u[5] = 16;
	u[6] = u[7] = 0;
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 136, u, 16)),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_UDPLITE_NO_CSUM);
}

/* nf_conntrack_icmpv4_error: 8-byte header, type <= 18, errors need a
 * quote nf_ct_get_tuplepr can read (20-byte IPv4 header, not a later
 * fragment, the protocol's tuple bytes: 4 for ports, 8 for ICMP). */
static void test_icmp_type_and_quote_rules(void **state)
{
	uint8_t p[128], ic[8 + 28];
	struct ct_packet pkt;

	(void)state;
	memset(ic, 0, sizeof(ic));
	ic[0] = 8;                                      /* echo */
	ts_put16(ic + 4, 0x4242);
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 1, ic, 8)),
			 CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.sport, 0x4242);
	assert_int_equal(pkt.tuple.dport, 8 << 8);
	assert_false(pkt.u.icmp.is_error);
	ic[0] = 18;
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 1, ic, 8)),
			 CT_PKT_TRACKABLE);
	ic[0] = 19;
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 1, ic, 8)),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_ICMP_BAD_TYPE);
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 1, ic, 7)),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_L4_TRUNCATED);

	/* destination unreachable quoting 10.0.0.2:7 -> 10.0.0.1:9 TCP,
	 * only 4 bytes of TCP: enough for the ports */
	ic[0] = 3;
	ic[1] = 1;
	mk_ip4(ic + 8, 6, (const uint8_t[]){ 0, 7, 0, 9 }, 4);
	ic[8 + 12] = 10; ic[8 + 15] = 2; ic[8 + 16] = 10; ic[8 + 19] = 1;
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 1, ic, 8 + 24)),
			 CT_PKT_TRACKABLE);
	assert_true(pkt.u.icmp.is_error);
	assert_true(pkt.u.icmp.inner_ok);
	assert_int_equal(pkt.u.icmp.inner.l4, 6);
	assert_int_equal(pkt.u.icmp.inner.src.ip4, tip4(10, 0, 0, 2));
	assert_int_equal(pkt.u.icmp.inner.sport, 7);
	assert_int_equal(pkt.u.icmp.inner.dport, 9);
	/* three bytes of TCP: no tuple */
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 1, ic, 8 + 23)),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_ICMP_BAD);
	assert_false(pkt.u.icmp.inner_ok);
	/* 19 bytes of IPv4 header */
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 1, ic, 8 + 19)),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_ICMP_BAD);
	/* quoted packet is a later fragment */
	ts_put16(ic + 8 + 6, 0x0001);
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 1, ic, 8 + 24)),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_ICMP_BAD);
	ts_put16(ic + 8 + 6, 0);
	/* quoted ICMP needs its 8 bytes */
	ic[8 + 9] = 1;
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 1, ic, 8 + 24)),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_ICMP_BAD);
	/* a generic protocol needs nothing beyond the IP header */
	ic[8 + 9] = 99;
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 1, ic, 8 + 20)),
			 CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.icmp.inner.l4, 99);
}

/* ICMPv6: every type below 128 is an error; ICMP (1) over IPv6 gets no
 * error processing at all. */
static void test_icmpv6_error_range(void **state)
{
	uint8_t p[128], ic[8 + 48];
	struct ct_packet pkt;

	(void)state;
	memset(ic, 0, sizeof(ic));
	ic[0] = 5;                      /* unassigned, still an error */
	mk_ip6(ic + 8, 17, (const uint8_t[]){ 0, 1, 0, 2, 0, 8, 0, 0 }, 8);
	assert_int_equal(parse_raw(&pkt, p, mk_ip6(p, 58, ic, sizeof(ic))),
			 CT_PKT_TRACKABLE);
	assert_true(pkt.u.icmp.is_error);
	assert_true(pkt.u.icmp.inner_ok);
	assert_int_equal(pkt.u.icmp.inner.dport, 2);
	ic[0] = 128;
	assert_int_equal(parse_raw(&pkt, p, mk_ip6(p, 58, ic, sizeof(ic))),
			 CT_PKT_TRACKABLE);
	assert_false(pkt.u.icmp.is_error);
	ic[0] = 3;                      /* quote: no next header */
	ic[8 + 6] = 59;
	assert_int_equal(parse_raw(&pkt, p, mk_ip6(p, 58, ic, sizeof(ic))),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_ICMP_BAD);
	assert_int_equal(parse_raw(&pkt, p, mk_ip6(p, 1, ic, sizeof(ic))),
			 CT_PKT_TRACKABLE);
	assert_false(pkt.u.icmp.is_error);
	assert_int_equal(pkt.tuple.dport, 3 << 8);
}

/* gre_pkt_to_tuple: version 1 must carry PPP; the call id is the
 * destination key; fewer than 8 bytes leave the keys 0. */
static void test_enhanced_gre_tuple_rules(void **state)
{
	uint8_t p[64], g[8] = { 0x30, 0x01, 0x88, 0x0b, 0, 40, 0x12, 0x34 };
	struct ct_packet pkt;

	(void)state;
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 47, g, 8)),
			 CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.sport, 0);
	assert_int_equal(pkt.tuple.dport, 0x1234);
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 47, g, 6)),
			 CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.dport, 0);
	g[3] = 0x0c;
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 47, g, 8)),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_GRE_BAD);
	g[1] = 0x00;                    /* version 0: generic, any payload */
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 47, g, 8)),
			 CT_PKT_TRACKABLE);
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 47, g, 0)),
			 CT_PKT_TRACKABLE);
}

/* do_basic_checks and the INIT header the tracker reads. */
static void test_sctp_chunk_structure_rules(void **state)
{
	uint8_t p[128], s[64];
	struct ct_packet pkt;

	(void)state;
	memset(s, 0, sizeof(s));
	ts_put16(s, 5000);
	ts_put16(s + 2, 6000);
	/* INIT (20 bytes) + DATA (16 bytes): INIT must be alone */
	s[12] = 1; ts_put16(s + 14, 20); ts_put32(s + 16, 0xabcdef01);
	s[32] = 0; ts_put16(s + 34, 16);
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 132, s, 48)),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_SCTP_BAD);
	/* INIT alone */
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 132, s, 32)),
			 CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.sctp.init_tag, 0xabcdef01);
	/* INIT without its 16-byte header */
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 132, s, 24)),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_SCTP_BAD);
	/* DATA then COOKIE ECHO: cookie must come first */
	s[12] = 0; ts_put16(s + 14, 20);
	s[32] = 10; ts_put16(s + 34, 4);
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 132, s, 36)),
			 CT_PKT_INVALID);
	/* COOKIE ECHO then DATA: fine */
	s[12] = 10; s[32] = 0;
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 132, s, 36)),
			 CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.sctp.n_chunks, 2);
	assert_int_equal(pkt.u.sctp.chunk_map, (1u << 10) | 1u);
	/* a zero-length chunk */
	ts_put16(s + 34, 0);
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 132, s, 36)),
			 CT_PKT_INVALID);
	/* no chunk at all */
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 132, s, 12)),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_SCTP_BAD);
	/* chunk types >= 32 are counted, not mapped */
	s[12] = 0xc0; ts_put16(s + 14, 8);
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 132, s, 20)),
			 CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.sctp.chunk_map, 0);
	assert_int_equal(pkt.u.sctp.first_chunk, 0xc0);
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 132, s, 11)),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_L4_TRUNCATED);
}

static void test_tcp_data_offset_rules(void **state)
{
	uint8_t p[64], t[24];
	struct ct_packet pkt;

	(void)state;
	mk_tcp(t, CT_TCP_ACK, NULL, 0, 4);
	t[12] = 4 << 4;
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 6, t, 24)),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_TCP_BAD_DOFF);
	t[12] = 7 << 4;                 /* 28 > 24 */
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 6, t, 24)),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_TCP_BAD_DOFF);
	t[12] = 6 << 4;                 /* 24: 4 option bytes of NOP */
	memset(t + 20, 1, 4);
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 6, t, 24)),
			 CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.tcp.hdr_len, 24);
	assert_int_equal(pkt.payload_len, 0);
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 6, t, 19)),
			 CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_L4_TRUNCATED);
}

/*
 * Options as tcp_options()/tcp_sack() read them: window scale capped at
 * 14; the SACK edge is the highest right edge "after" the ACK in
 * sequence space, from the first well-formed SACK option; parsing stops
 * at a length below 2 or past the end.
 */
static void test_tcp_options(void **state)
{
	uint8_t p[128], t[80];
	struct ct_packet pkt;
	static const uint8_t syn[20] = {
		2, 4, 0x05, 0xb4,               /* MSS 1460 */
		1, 3, 3, 15,                    /* NOP, wscale 15 */
		4, 2,                           /* SACK permitted */
		8, 10, 0, 0, 0, 5, 0, 0, 0, 6,  /* TS 5/6 */
	};
	uint8_t sack[28] = { 1, 1, 5, 26 };     /* 3 blocks */
	uint8_t bad[8] = { 3, 3, 7, 5, 1, 3, 3, 9 };

	(void)state;
	assert_int_equal(parse_raw(&pkt, p,
			 mk_ip4(p, 6, t, mk_tcp(t, CT_TCP_SYN, syn, 20, 0))),
			 CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.tcp.opts, CT_TCPOPT_MSS | CT_TCPOPT_WSCALE |
			 CT_TCPOPT_SACK_PERM | CT_TCPOPT_TIMESTAMP);
	assert_int_equal(pkt.u.tcp.mss, 1460);
	assert_int_equal(pkt.u.tcp.wscale, 14);
	assert_int_equal(pkt.u.tcp.tsval, 5);
	assert_int_equal(pkt.u.tcp.tsecr, 6);
	assert_int_equal(pkt.u.tcp.seq, 1000);
	assert_int_equal(pkt.u.tcp.ack, 2000);
	assert_int_equal(pkt.u.tcp.window, 512);

	/* ack = 2000; right edges 0x0000_1000 (after), 0xffff_0000 (before,
	 * in sequence space), 3000 (after, highest) */
	ts_put32(sack + 4, 100); ts_put32(sack + 8, 0x1000);
	ts_put32(sack + 12, 0xfffe0000); ts_put32(sack + 16, 0xffff0000);
	ts_put32(sack + 20, 2500); ts_put32(sack + 24, 3000);
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 6, t,
			 mk_tcp(t, CT_TCP_ACK, sack, 28, 0))), CT_PKT_TRACKABLE);
	assert_true(pkt.u.tcp.opts & CT_TCPOPT_SACK);
	assert_int_equal(pkt.u.tcp.sack_right, 0x1000);
	ts_put32(sack + 24, 0x2000);
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 6, t,
			 mk_tcp(t, CT_TCP_ACK, sack, 28, 0))), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.tcp.sack_right, 0x2000);

	/* a 1-byte "silly" option stops the walk: wscale 7 then nothing */
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 6, t,
			 mk_tcp(t, CT_TCP_SYN, bad, 8, 0))), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.tcp.wscale, 7);
	assert_int_equal(pkt.u.tcp.opts, CT_TCPOPT_WSCALE);
	/* wscale running past the header: not used */
	bad[4] = 1; bad[5] = 1; bad[6] = 3; bad[7] = 3;
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 6, t,
			 mk_tcp(t, CT_TCP_SYN, bad + 4, 4, 0))),
			 CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.tcp.opts, 0);
	/* no SACK option: the edge is the ACK */
	assert_int_equal(parse_raw(&pkt, p, mk_ip4(p, 6, t,
			 mk_tcp(t, CT_TCP_ACK, NULL, 0, 0))), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.u.tcp.sack_right, 2000);
}

/* ct_parse_ip without a link layer, and ct_parse_frame's timestamp. */
static void test_parse_ip_entry_point(void **state)
{
	uint8_t p[64], u[8] = { 0, 1, 0, 2, 0, 8 };
	struct ct_packet pkt;

	(void)state;
	mk_ip4(p, 17, u, 8);
	assert_int_equal(ct_parse_ip(&pkt, p, 28, 28, 99), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.ts, 99);
	assert_ptr_equal(pkt.l3, p);
	assert_ptr_equal(pkt.l4, p + 20);
	assert_int_equal(ct_parse_ip(&pkt, p, 0, 0, 0), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_IP_TRUNCATED);
	p[0] = 0x25;
	assert_int_equal(ct_parse_ip(&pkt, p, 28, 28, 0), CT_PKT_INVALID);
	assert_int_equal(pkt.reason, CT_PR_IP_BAD_VERSION);
}

/* Every reason has a distinct snake_case name; unknown values say so. */
static void test_every_reason_has_a_stable_name(void **state)
{
	(void)state;
	for (int r = 0; r < CT_PR_MAX; r++) {
		const char *n = ct_parse_reason_name((enum ct_parse_reason)r);

		assert_non_null(n);
		assert_string_not_equal(n, "unknown");
		for (const char *c = n; *c; c++)
			assert_true((*c >= 'a' && *c <= 'z') ||
				    (*c >= '0' && *c <= '9') || *c == '_');
		for (int o = 0; o < r; o++)
			assert_string_not_equal(
				n, ct_parse_reason_name((enum ct_parse_reason)o));
	}
	assert_string_equal(ct_parse_reason_name(CT_PR_IP_TRUNCATED),
			    "ip_truncated");
	assert_string_equal(ct_parse_reason_name(CT_PR_TCP_BAD_FLAGS),
			    "tcp_bad_flags");
	assert_string_equal(ct_parse_reason_name(CT_PR_MAX), "unknown");
	assert_string_equal(ct_parse_reason_name((enum ct_parse_reason)250),
			    "unknown");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest shared[] = {
		cmocka_unit_test(test_ipv6_extension_chains_and_atomic_fragments),
		cmocka_unit_test(test_ipv6_routing_header_is_walked),
		cmocka_unit_test(test_icmp_port_unreachable_quotes_udp_tuple),
		cmocka_unit_test(test_icmp_time_exceeded_quotes_udp_tuple),
		cmocka_unit_test(test_icmpv6_packet_too_big_quotes_udp_tuple),
		cmocka_unit_test(test_icmpv6_error_quote_with_extension_header),
		cmocka_unit_test(test_ipv6_jumbogram_length_comes_from_hop_by_hop),
		cmocka_unit_test(test_broken_ip_headers_from_the_corpus),
		cmocka_unit_test(test_total_length_beyond_the_frame_is_invalid),
		cmocka_unit_test(test_snaplen_cut_headers_and_payloads),
		cmocka_unit_test(test_sctp_big_endian_capture),
		cmocka_unit_test(test_sctp_association_setup_chunks),
		cmocka_unit_test(test_gre_versions_and_pptp_call_id),
	};
	const struct CMUnitTest own[] = {
		cmocka_unit_test(test_own_ipv6_extension_chains_and_atomic_fragments),
		cmocka_unit_test(test_own_ipv6_routing_header_is_walked),
		cmocka_unit_test(test_own_icmp_and_icmpv6_errors_quote_their_tuples),
		cmocka_unit_test(test_own_ipv6_jumbogram_length_comes_from_hop_by_hop),
		cmocka_unit_test(test_own_broken_ip_headers_and_lengths),
		cmocka_unit_test(test_own_snaplen_cut_headers_and_payloads),
		cmocka_unit_test(test_own_sctp_big_endian_capture),
		cmocka_unit_test(test_own_sctp_association_setup_chunks),
		cmocka_unit_test(test_own_gre_versions_and_pptp_call_id),
		cmocka_unit_test(test_every_tcp_flag_byte_against_the_valid_flags_table),
		cmocka_unit_test(test_named_tcp_flag_combinations),
		cmocka_unit_test(test_every_truncation_point_of_a_tcp_ipv6_frame),
		cmocka_unit_test(test_every_truncation_point_of_udp_frames),
		cmocka_unit_test(test_ipv4_header_checks),
		cmocka_unit_test(test_ipv4_fragments_report_offset_and_first_ports),
		cmocka_unit_test(test_ipv6_address_rules),
		cmocka_unit_test(test_ipv6_no_next_header),
		cmocka_unit_test(test_hop_by_hop_options_as_ip6_parse_tlv_checks_them),
		cmocka_unit_test(test_more_than_eight_hop_by_hop_options_are_refused),
		cmocka_unit_test(test_ah_length_rule_and_esp_as_l4),
		cmocka_unit_test(test_ipv6_fragments),
		cmocka_unit_test(test_udp_and_udplite_length_rules),
		cmocka_unit_test(test_icmp_type_and_quote_rules),
		cmocka_unit_test(test_icmpv6_error_range),
		cmocka_unit_test(test_enhanced_gre_tuple_rules),
		cmocka_unit_test(test_sctp_chunk_structure_rules),
		cmocka_unit_test(test_tcp_data_offset_rules),
		cmocka_unit_test(test_tcp_options),
		cmocka_unit_test(test_parse_ip_entry_point),
		cmocka_unit_test(test_every_reason_has_a_stable_name),
	};

	return TCAP_MAIN(own, shared);
}
