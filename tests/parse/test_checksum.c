/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_checksum.c - ct_packet_l4_csum_ok() against tshark's verdicts on
 * real captures (../shared/pcaps: the "shared" group) and on the project's
 * crafted ones (tests/captures/crafted: the default group; craft.py knows
 * which checksums it spoiled, tshark agrees, check_captures.py), plus the
 * places where the kernel's nf_conntrack checksum rules (which ctrack
 * follows) differ from the RFCs tshark follows.
 *
 * tshark counts below come from:
 *   tshark -r FILE -o tcp.check_checksum:TRUE -o udp.check_checksum:TRUE
 *     -Y 'tcp.checksum.status==0 || udp.checksum.status==0 ||
 *         icmp.checksum.status==0 || icmpv6.checksum.status==0' | wc -l
 * (status 0 = bad), and for SCTP with -o sctp.checksum:CRC-32C and
 * sctp.checksum.status.  Files with tunnels are avoided: tshark would also
 * judge the inner packets.
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

static void load(struct tcap *tc, const char *name)
{
	if (!tcap_load(tc, name))
		fail_msg("cannot open %s: %s", name, tc->err);
}

/* Count the trackable packets whose L4 checksum is wrong. */
static unsigned count_bad(const char *name, unsigned *trackable)
{
	struct tcap tc;
	struct ct_packet pkt;
	unsigned bad = 0, n = 0;

	load(&tc, name);
	for (size_t i = 0; i < tc.n; i++) {
		if (tcap_parse(&tc, i, &pkt) != CT_PKT_TRACKABLE)
			continue;
		n++;
		if (!ct_packet_l4_csum_ok(&pkt))
			bad++;
	}
	tcap_free(&tc);
	if (trackable)
		*trackable = n;
	return bad;
}

static void test_bad_checksum_counts_match_tshark(void **state)
{
	static const struct { const char *file; unsigned bad; } cases[] = {
		{ "ndpi__1kxun.pcap", 409 },     /* sender-side offload */
		{ "ndpi__quic.pcap", 6 },
		{ "ndpi__reddit.pcap", 10 },
		{ "ndpi__KakaoTalk_talk.pcap", 20 },
		{ "zeek__ssh.pcap", 0 },
		{ "zeek__ssh-dups.pcap", 152 },
		{ "zeek__nflog-http.pcap", 7 },
		{ "zeek__icmp6.pcap", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned bad = count_bad(cases[i].file, NULL);

		if (bad != cases[i].bad)
			fail_msg("%s: %u bad checksums, tshark says %u",
				 cases[i].file, bad, cases[i].bad);
	}
}

/*
 * zeek__sctp.pcap: all 74 CRC-32C checksums good (tshark status 1).
 * ndpi__sctp.cap: all 4 bad as CRC-32C (status 0) but good as Adler-32
 * (-o sctp.checksum:ADLER-32): the old RFC 2960 checksum, which the
 * kernel does not accept.
 */
static void test_sctp_crc32c(void **state)
{
	unsigned n;

	(void)state;
	assert_int_equal(count_bad("zeek__sctp.pcap", &n), 0);
	assert_int_equal(n, 74);
	assert_int_equal(count_bad("ndpi__sctp.cap", &n), 4);
	assert_int_equal(n, 4);
}

/* Flip one byte of a packet whose checksum tshark calls good: the sum
 * must now fail; flip it back: good again. */
static void flip_and_check(const char *file, size_t idx, uint8_t l4proto)
{
	struct tcap tc;
	struct ct_packet pkt;
	uint8_t *last;

	load(&tc, file);
	assert_int_equal(tcap_parse(&tc, idx, &pkt), CT_PKT_TRACKABLE);
	assert_int_equal(pkt.tuple.l4, l4proto);
	assert_true(ct_packet_l4_csum_ok(&pkt));
	last = (uint8_t *)pkt.l4 + pkt.l4_len - 1;
	*last ^= 0x40;
	assert_false(ct_packet_l4_csum_ok(&pkt));
	*last ^= 0x40;
	assert_true(ct_packet_l4_csum_ok(&pkt));
	((uint8_t *)pkt.l4)[1] ^= 0x01;         /* a port byte */
	assert_false(ct_packet_l4_csum_ok(&pkt));
	tcap_free(&tc);
}

/*
 * zeek__ssh.pcap frame 4: TCP with 21 bytes of payload (tcp.len);
 * ndpi__quic.pcap frame 1: UDP, udp.checksum.status 1;
 * zeek__icmp6.pcap frame 11: ICMPv6 type 3, icmpv6.checksum.status 1;
 * zeek__icmp-destunreach-udp.pcap: ICMP, icmp.checksum.status 1;
 * zeek__sctp.pcap frame 1: SCTP INIT, CRC-32C good.
 */
static void test_one_flipped_byte_is_caught(void **state)
{
	(void)state;
	flip_and_check("zeek__ssh.pcap", 3, 6);
	flip_and_check("ndpi__quic.pcap", 0, 17);
	flip_and_check("zeek__icmp6.pcap", 10, 58);
	flip_and_check("zeek__icmp-destunreach-udp.pcap", 0, 1);
	flip_and_check("zeek__sctp.pcap", 0, 132);
}

/*
 * tshark -r zeek__timestamp.pcap -o tcp.check_checksum:TRUE -T fields
 *        -e tcp.checksum.status | sort | uniq -c  -> 187 good, 691
 * unverified (the capture cut the payload).  Those cannot be checked and
 * pass; the 187 whole ones are good.
 */
static void test_cut_payloads_cannot_be_checked_and_pass(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;
	unsigned truncated = 0, whole = 0;

	(void)state;
	load(&tc, "zeek__timestamp.pcap");
	for (size_t i = 0; i < tc.n; i++) {
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
		assert_true(ct_packet_l4_csum_ok(&pkt));
		if (pkt.truncated)
			truncated++;
		else
			whole++;
	}
	assert_int_equal(truncated, 691);
	assert_int_equal(whole, 187);
	tcap_free(&tc);
}

/*
 * tcpdump__ipv6-routing-header.pcap: tshark calls every checksum good
 * because it puts the routing header's final address in the
 * pseudo-header (RFC 8200 8.1).  nf_conntrack's nf_ip6_checksum() uses
 * the destination in the IPv6 header as the packet stands, so a router
 * in the middle of the source route (segments left 1 and 2 here) finds
 * them wrong.  With the final address written into the header, the same
 * bytes check out.
 * tshark -V: frame 1 segments left 1, Address[1] 2200::210:2:0:0:4
 * (routing header at offset 40, addresses from offset 48).
 */
static void test_source_routed_packets_use_current_destination(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;
	uint8_t final[16];

	(void)state;
	load(&tc, "tcpdump__ipv6-routing-header.pcap");
	for (size_t i = 0; i < tc.n; i++) {
		uint8_t *ip;
		unsigned naddr;

		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
		assert_false(ct_packet_l4_csum_ok(&pkt));
		ip = (uint8_t *)pkt.l3;
		naddr = ip[41] / 2;
		memcpy(ip + 24, ip + 48 + 16 * (naddr - 1), 16);
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
		assert_true(ct_packet_l4_csum_ok(&pkt));
	}
	assert_int_equal(inet_pton(AF_INET6, "2200::210:2:0:0:4", final), 1);
	tcap_parse(&tc, 0, &pkt);
	assert_memory_equal(pkt.tuple.dst.ip6, final, 16);
	tcap_free(&tc);
}

/* ---- the project's own captures (craft.py) ---- */

/*
 * checksums.pcap: 30 packets of TCP, UDP (one without a checksum), ICMP,
 * IPv6 UDP, ICMPv6 echo and an ICMPv6 error, of which craft.py spoiled 8
 * (tshark's count of status 0, check_captures.py); ng-two-interfaces:
 * one bad UDP checksum (the other two bad ones are IPv4 header checksums);
 * the rest were all built good.
 */
static void test_own_bad_checksum_counts_match_the_generator(void **state)
{
	static const struct { const char *file; unsigned bad; } cases[] = {
		{ OWN("checksums.pcap"), 8 },
		{ OWN("ng-two-interfaces.pcapng"), 1 },
		{ OWN("link-vlan3.pcap"), 0 },
		{ OWN("icmp-errors.pcap"), 0 },
		{ OWN("link-nflog.pcap"), 0 },
		{ OWN("ip6-ext-chains.pcap"), 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned bad = count_bad(cases[i].file, NULL);

		if (bad != cases[i].bad)
			fail_msg("%s: %u bad checksums, craft.py and tshark say %u",
				 cases[i].file, bad, cases[i].bad);
	}
}

/* sctp-association.pcap: 68 packets with good CRC-32C; sctp-adler32-be:
 * 4 packets with RFC 2960's Adler-32, bad as CRC-32C. */
static void test_own_sctp_crc32c(void **state)
{
	unsigned n;

	(void)state;
	assert_int_equal(count_bad(OWN("sctp-association.pcap"), &n), 0);
	assert_int_equal(n, 68);
	assert_int_equal(count_bad(OWN("sctp-adler32-be.pcap"), &n), 4);
	assert_int_equal(n, 4);
}

/*
 * checksums.pcap frame 4: TCP with 21 bytes of data; 14: UDP; 21: ICMP
 * echo; 30: ICMPv6 destination unreachable; sctp-association frame 1:
 * INIT.  All good as built.
 */
static void test_own_one_flipped_byte_is_caught(void **state)
{
	(void)state;
	flip_and_check(OWN("checksums.pcap"), 3, 6);
	flip_and_check(OWN("checksums.pcap"), 13, 17);
	flip_and_check(OWN("checksums.pcap"), 20, 1);
	flip_and_check(OWN("checksums.pcap"), 29, 58);
	flip_and_check(OWN("sctp-association.pcap"), 0, 132);
}

/*
 * tcp-payload-cut.pcap, snapshot length 60: 11 segments, 4 of them cut
 * (tshark: frame.len > frame.cap_len), 7 whole with good checksums.  The
 * cut ones cannot be checked and pass.
 */
static void test_own_cut_payloads_cannot_be_checked_and_pass(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;
	unsigned truncated = 0, whole = 0;

	(void)state;
	load(&tc, OWN("tcp-payload-cut.pcap"));
	for (size_t i = 0; i < tc.n; i++) {
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
		assert_true(ct_packet_l4_csum_ok(&pkt));
		if (pkt.truncated)
			truncated++;
		else
			whole++;
	}
	assert_int_equal(truncated, 4);
	assert_int_equal(whole, 7);
	tcap_free(&tc);
}

/*
 * ip6-routing.pcap: the senders summed over the final destination
 * 2001:db8:ffff::4 (RFC 8200 8.1: tshark says "correct"); nf_ip6_checksum
 * uses the header's destination (the first hop): wrong, until the final
 * address is written into the header.
 */
static void test_own_source_routed_packets_use_current_destination(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;
	uint8_t final[16];

	(void)state;
	load(&tc, OWN("ip6-routing.pcap"));
	assert_int_equal(tc.n, 4);
	for (size_t i = 0; i < tc.n; i++) {
		uint8_t *ip;
		unsigned naddr;

		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
		assert_false(ct_packet_l4_csum_ok(&pkt));
		ip = (uint8_t *)pkt.l3;
		naddr = ip[41] / 2;
		memcpy(ip + 24, ip + 48 + 16 * (naddr - 1), 16);
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
		assert_true(ct_packet_l4_csum_ok(&pkt));
	}
	assert_int_equal(inet_pton(AF_INET6, "2001:db8:ffff::4", final), 1);
	tcap_parse(&tc, 0, &pkt);
	assert_memory_equal(pkt.tuple.dst.ip6, final, 16);
	tcap_free(&tc);
}

/* ---- synthetic packets; sums computed here with a plain 16-bit loop ---- */

static size_t ip4_udp(uint8_t *p, uint8_t proto, size_t l4len)
{
	memset(p, 0, 20 + l4len);
	p[0] = 0x45;
	p[2] = (uint8_t)((20 + l4len) >> 8);
	p[3] = (uint8_t)(20 + l4len);
	p[8] = 64;
	p[9] = proto;
	p[12] = 192; p[13] = 0; p[14] = 2; p[15] = 1;
	p[16] = 198; p[17] = 51; p[18] = 100; p[19] = 7;
	{
		uint16_t c = ts_fold(ts_sum16(p, 20, 0));

		p[10] = (uint8_t)(c >> 8);
		p[11] = (uint8_t)c;
	}
	p[20] = 0x13; p[21] = 0x88;     /* 5000 */
	p[22] = 0x17; p[23] = 0x70;     /* 6000 */
	p[24] = (uint8_t)(l4len >> 8);
	p[25] = (uint8_t)l4len;
	for (size_t i = 8; i < l4len; i++)
		p[20 + i] = (uint8_t)(i * 7);
	return 20 + l4len;
}

static size_t ip6_udp(uint8_t *p, uint8_t proto, size_t l4len)
{
	memset(p, 0, 40 + l4len);
	p[0] = 0x60;
	p[4] = (uint8_t)(l4len >> 8);
	p[5] = (uint8_t)l4len;
	p[6] = proto;
	p[7] = 64;
	p[8] = 0x20; p[9] = 0x01; p[10] = 0x0d; p[11] = 0xb8; p[23] = 1;
	p[24] = 0x20; p[25] = 0x01; p[26] = 0x0d; p[27] = 0xb8; p[39] = 2;
	p[40] = 0x13; p[41] = 0x88;
	p[42] = 0x17; p[43] = 0x70;
	p[44] = (uint8_t)(l4len >> 8);
	p[45] = (uint8_t)l4len;
	for (size_t i = 8; i < l4len; i++)
		p[40 + i] = (uint8_t)(i * 13);
	return 40 + l4len;
}

/* Pseudo-header sum, RFC 768 / RFC 8200 layout, with @proto and @len. */
static uint32_t pseudo4(const uint8_t *ip, uint8_t proto, uint32_t len)
{
	return ts_sum16(ip + 12, 8, 0) + proto + len;
}

static uint32_t pseudo6(const uint8_t *ip, uint8_t proto, uint32_t len)
{
	return ts_sum16(ip + 8, 32, 0) + (len >> 16) + (len & 0xffff) + proto;
}

static void set_csum(uint8_t *l4, uint16_t c)
{
	l4[6] = (uint8_t)(c >> 8);
	l4[7] = (uint8_t)c;
}

/* RFC 768: zero means "no checksum" over IPv4.  Over IPv6 the socket
 * layer refuses it, but conntrack's udp_error() returns "valid" before
 * checking whenever the field is zero, whatever the family. */
static void test_udp_zero_checksum_is_not_checked_in_either_family(void **state)
{
	uint8_t p[128];
	struct ct_packet pkt;
	size_t n;

	(void)state;
	n = ip4_udp(p, 17, 30);
	assert_int_equal(ct_parse_ip(&pkt, p, (uint32_t)n, (uint32_t)n, 0),
			 CT_PKT_TRACKABLE);
	assert_true(ct_packet_l4_csum_ok(&pkt));
	set_csum(p + 20, ts_fold(pseudo4(p, 17, 30) + ts_sum16(p + 20, 30, 0)));
	assert_true(ct_packet_l4_csum_ok(&pkt));
	p[20 + 29] ^= 1;
	assert_false(ct_packet_l4_csum_ok(&pkt));

	n = ip6_udp(p, 17, 31);
	assert_int_equal(ct_parse_ip(&pkt, p, (uint32_t)n, (uint32_t)n, 0),
			 CT_PKT_TRACKABLE);
	assert_true(ct_packet_l4_csum_ok(&pkt));
	set_csum(p + 40, ts_fold(pseudo6(p, 17, 31) + ts_sum16(p + 40, 31, 0)));
	assert_true(ct_packet_l4_csum_ok(&pkt));
	p[40 + 30] ^= 1;
	assert_false(ct_packet_l4_csum_ok(&pkt));
}

/*
 * UDP-Lite, as udplite_error() checks it: over the coverage only, with
 * IPPROTO_UDP (17) instead of 136 in the pseudo-header; over IPv4,
 * nf_ip_checksum_partial() also passes length and protocol to
 * csum_tcpudp_nofold() the wrong way round, so the pseudo-header carries
 * 17 + (length & 0xff) where the length belongs.  A checksum made by the
 * RFC 3828 rules fails exactly as it fails in the kernel.
 */
static void test_udplite_is_checked_as_udplite_error_does(void **state)
{
	uint8_t p[256];
	struct ct_packet pkt;
	size_t n;

	(void)state;
	/* IPv4, 200 bytes of UDP-Lite, coverage 20 */
	n = ip4_udp(p, 136, 200);
	p[24] = 0; p[25] = 20;
	set_csum(p + 20, ts_fold(pseudo4(p, 136, 200) + ts_sum16(p + 20, 20, 0)));
	assert_int_equal(ct_parse_ip(&pkt, p, (uint32_t)n, (uint32_t)n, 0),
			 CT_PKT_TRACKABLE);
	assert_false(ct_packet_l4_csum_ok(&pkt));       /* RFC 3828 */
	set_csum(p + 20, 0);
	set_csum(p + 20, ts_fold(ts_sum16(p + 12, 8, 0) + 17 + (200 & 0xff) +
			      ts_sum16(p + 20, 20, 0)));
	assert_true(ct_packet_l4_csum_ok(&pkt));        /* kernel's sum */
	p[20 + 150] ^= 0xff;                            /* not covered */
	assert_true(ct_packet_l4_csum_ok(&pkt));
	p[20 + 10] ^= 0xff;                             /* covered */
	assert_false(ct_packet_l4_csum_ok(&pkt));

	/* IPv6, coverage 0 (everything) */
	n = ip6_udp(p, 136, 64);
	p[44] = 0; p[45] = 0;
	set_csum(p + 40, ts_fold(pseudo6(p, 136, 64) + ts_sum16(p + 40, 64, 0)));
	assert_int_equal(ct_parse_ip(&pkt, p, (uint32_t)n, (uint32_t)n, 0),
			 CT_PKT_TRACKABLE);
	assert_false(ct_packet_l4_csum_ok(&pkt));
	set_csum(p + 40, 0);
	set_csum(p + 40, ts_fold(pseudo6(p, 17, 64) + ts_sum16(p + 40, 64, 0)));
	assert_true(ct_packet_l4_csum_ok(&pkt));
}

/* What conntrack never checks: GRE and generic protocols, ICMP carried
 * over IPv6, fragments. */
static void test_what_conntrack_does_not_check_passes(void **state)
{
	uint8_t p[128];
	struct ct_packet pkt;
	size_t n;

	(void)state;
	n = ip4_udp(p, 47, 16);         /* GRE v0 with junk */
	ct_parse_ip(&pkt, p, (uint32_t)n, (uint32_t)n, 0);
	assert_int_equal(pkt.kind, CT_PKT_TRACKABLE);
	assert_true(ct_packet_l4_csum_ok(&pkt));
	n = ip6_udp(p, 1, 16);          /* "ICMP" over IPv6, junk sum */
	ct_parse_ip(&pkt, p, (uint32_t)n, (uint32_t)n, 0);
	assert_int_equal(pkt.kind, CT_PKT_TRACKABLE);
	assert_true(ct_packet_l4_csum_ok(&pkt));
	n = ip4_udp(p, 17, 16);
	p[6] = 0x20;                    /* MF: a first fragment */
	p[10] = p[11] = 0;
	{
		uint16_t c = ts_fold(ts_sum16(p, 20, 0));

		p[10] = (uint8_t)(c >> 8);
		p[11] = (uint8_t)c;
	}
	set_csum(p + 20, 0x1234);
	assert_int_equal(ct_parse_ip(&pkt, p, (uint32_t)n, (uint32_t)n, 0),
			 CT_PKT_FRAGMENT);
	assert_true(ct_packet_l4_csum_ok(&pkt));
}

/* Odd lengths and every alignment of the fast sum give the plain sum. */
static void test_fast_sum_matches_the_plain_sum_at_every_length(void **state)
{
	uint8_t buf[1600], p[1700];
	struct ct_packet pkt;

	(void)state;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 131 + 7);
	/* every length: the vector sum (from 128 bytes, with AVX2) leaves
	 * a tail of 0..63 bytes to the scalar loop, each tail once here */
	for (size_t len = 8; len <= 1500; len++) {
		size_t n = ip4_udp(p, 17, len);

		memcpy(p + 28, buf, len - 8);
		set_csum(p + 20, ts_fold(pseudo4(p, 17, (uint32_t)len) +
				      ts_sum16(p + 20, len, 0)));
		if (p[26] == 0 && p[27] == 0)
			continue;       /* would read as "no checksum" */
		assert_int_equal(ct_parse_ip(&pkt, p, (uint32_t)n,
					     (uint32_t)n, 0), CT_PKT_TRACKABLE);
		if (!ct_packet_l4_csum_ok(&pkt))
			fail_msg("length %zu", len);
		/* and one flipped bit in the payload is caught */
		if (len > 9) {
			p[28 + (len - 8) / 2] ^= 0x10;
			if (ct_packet_l4_csum_ok(&pkt))
				fail_msg("length %zu: flipped bit passed", len);
			p[28 + (len - 8) / 2] ^= 0x10;
		}
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest shared[] = {
		cmocka_unit_test(test_bad_checksum_counts_match_tshark),
		cmocka_unit_test(test_sctp_crc32c),
		cmocka_unit_test(test_one_flipped_byte_is_caught),
		cmocka_unit_test(test_cut_payloads_cannot_be_checked_and_pass),
		cmocka_unit_test(test_source_routed_packets_use_current_destination),
	};
	const struct CMUnitTest own[] = {
		cmocka_unit_test(test_own_bad_checksum_counts_match_the_generator),
		cmocka_unit_test(test_own_sctp_crc32c),
		cmocka_unit_test(test_own_one_flipped_byte_is_caught),
		cmocka_unit_test(test_own_cut_payloads_cannot_be_checked_and_pass),
		cmocka_unit_test(test_own_source_routed_packets_use_current_destination),
		cmocka_unit_test(test_udp_zero_checksum_is_not_checked_in_either_family),
		cmocka_unit_test(test_udplite_is_checked_as_udplite_error_does),
		cmocka_unit_test(test_what_conntrack_does_not_check_passes),
		cmocka_unit_test(test_fast_sum_matches_the_plain_sum_at_every_length),
	};

	return TCAP_MAIN(own, shared);
}
