/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_tuple_protos.c - ct_tuple_invert and ct_tuple_format, protocol by
 * protocol, against their references:
 *  - inversion: nf_ct_invert_tuple (nf_conntrack_core.c) with the invmap
 *    tables of nf_conntrack_proto_icmp.c (echo 8<->0, timestamp 13<->14,
 *    info 15<->16, address mask 17<->18; anything else fails) and
 *    nf_conntrack_proto_icmpv6.c (echo 128<->129, node information
 *    139<->140); ports, GRE keys and zeros swap; ICMP keeps id and code.
 *  - printing: libnetfilter_conntrack's __snprintf_address /
 *    __snprintf_proto, which conntrack(8) uses: "src=%s dst=%s " then
 *    "sport=%u dport=%u " (tcp, udp, udplite, sctp, dccp),
 *    "srckey=0x%x dstkey=0x%x " (gre), "type=%d code=%d id=%d " (icmp,
 *    icmpv6), nothing for other protocols; addresses through inet_ntop.
 *    ct_tuple_format gives the same fields without the trailing blank,
 *    and so does ct_tuple_put (its fast writer, which the tool's printer
 *    uses), checked here against that description written with inet_ntop
 *    and snprintf over random tuples of both families.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>

#include "proto_test_util.h"

static int kernel_icmp_inv(unsigned type)
{
	switch (type) {
	case 8: return 0;
	case 0: return 8;
	case 13: return 14;
	case 14: return 13;
	case 15: return 16;
	case 16: return 15;
	case 17: return 18;
	case 18: return 17;
	default: return -1;
	}
}

static int kernel_icmpv6_inv(unsigned type)
{
	switch (type) {
	case 128: return 129;
	case 129: return 128;
	case 139: return 140;
	case 140: return 139;
	default: return -1;
	}
}

static void test_icmp_invert_matches_kernel_invmap(void **state)
{
	(void)state;
	for (unsigned type = 0; type < 256; type++) {
		struct ct_tuple t, r;
		int inv = kernel_icmp_inv(type);

		t = ts_tuple4(IPPROTO_ICMP, 0x0a000001, 0x0a000002, 4242,
		       (uint16_t)(type << 8 | 5));
		t.zone = 3;
		assert_int_equal(ct_tuple_invert(&t, &r), inv >= 0);
		if (inv < 0)
			continue;
		assert_int_equal(ct_tuple_icmp_type(&r), inv);
		assert_int_equal(ct_tuple_icmp_code(&r), 5);
		assert_int_equal(r.sport, 4242);      /* id stays */
		assert_int_equal(r.src.ip4, t.dst.ip4);
		assert_int_equal(r.dst.ip4, t.src.ip4);
		assert_int_equal(r.zone, 3);
		assert_int_equal(r.l3, CT_L3_IPV4);
		assert_int_equal(r.l4, IPPROTO_ICMP);
	}
}

static void test_icmpv6_invert_matches_kernel_invmap(void **state)
{
	(void)state;
	for (unsigned type = 0; type < 256; type++) {
		struct ct_tuple t, r;
		int inv = kernel_icmpv6_inv(type);

		t = ts_tuple6(IPPROTO_ICMPV6, 1, 2, 9, (uint16_t)(type << 8));
		assert_int_equal(ct_tuple_invert(&t, &r), inv >= 0);
		if (inv < 0)
			continue;
		assert_int_equal(ct_tuple_icmp_type(&r), inv);
		assert_int_equal(r.sport, 9);
		assert_memory_equal(&r.src, &t.dst, sizeof(r.src));
		assert_memory_equal(&r.dst, &t.src, sizeof(r.dst));
	}
}

/* The type maps belong to the protocol number, not to the family: the
 * kernel's nf_ct_invert_tuple switches on dst.protonum only. */
static void test_icmp_maps_follow_protocol_not_family(void **state)
{
	struct ct_tuple t, r;
	(void)state;

	t = ts_tuple6(IPPROTO_ICMP, 1, 2, 1, 8 << 8);
	assert_true(ct_tuple_invert(&t, &r));
	assert_int_equal(ct_tuple_icmp_type(&r), 0);
	t = ts_tuple4(IPPROTO_ICMPV6, 1, 2, 1, 128 << 8);
	assert_true(ct_tuple_invert(&t, &r));
	assert_int_equal(ct_tuple_icmp_type(&r), 129);
	t = ts_tuple4(IPPROTO_ICMPV6, 1, 2, 1, 8 << 8);
	assert_false(ct_tuple_invert(&t, &r));
}

static void test_port_protocols_and_gre_swap_fields(void **state)
{
	static const uint8_t l4s[] = { IPPROTO_TCP, IPPROTO_UDP,
				       IPPROTO_UDPLITE, IPPROTO_SCTP,
				       IPPROTO_DCCP, IPPROTO_GRE, 50, 0, 255 };
	(void)state;

	for (size_t i = 0; i < sizeof(l4s); i++) {
		struct ct_tuple t, r;

		t = ts_tuple4(l4s[i], 0x01020304, 0x05060708, 1111, 2222);
		assert_true(ct_tuple_invert(&t, &r));
		assert_int_equal(r.sport, 2222);
		assert_int_equal(r.dport, 1111);
		assert_int_equal(r.src.ip4, t.dst.ip4);
		assert_int_equal(r.l4, l4s[i]);
	}
}

static void expect_format(const struct ct_tuple *t, const char *want)
{
	char buf[160];
	int n = ct_tuple_format(t, buf, sizeof(buf));

	assert_string_equal(buf, want);
	assert_int_equal(n, (int)strlen(want));
}

static void test_format_port_protocols(void **state)
{
	struct ct_tuple t;
	(void)state;

	t = ts_tuple4(IPPROTO_UDP, 0x0a000001, 0x0a000002, 40000, 53);
	expect_format(&t, "src=10.0.0.1 dst=10.0.0.2 sport=40000 dport=53");
	t = ts_tuple4(IPPROTO_UDPLITE, 0x0a000001, 0x0a000002, 1, 65535);
	expect_format(&t, "src=10.0.0.1 dst=10.0.0.2 sport=1 dport=65535");
	t = ts_tuple4(IPPROTO_SCTP, 0xc0a80101, 0xc0a80102, 40000, 2905);
	expect_format(&t, "src=192.168.1.1 dst=192.168.1.2 sport=40000 dport=2905");
	t = ts_tuple4(IPPROTO_DCCP, 0xc0a80101, 0xc0a80102, 5001, 5002);
	expect_format(&t, "src=192.168.1.1 dst=192.168.1.2 sport=5001 dport=5002");
	t = ts_tuple6(IPPROTO_TCP, 1, 2, 33000, 443);
	expect_format(&t, "src=2001:db8::1 dst=2001:db8::2 sport=33000 dport=443");
}

static void test_format_icmp(void **state)
{
	struct ct_tuple t;
	(void)state;

	t = ts_tuple4(IPPROTO_ICMP, 0x0a000001, 0x0a000002, 4242, 8 << 8);
	expect_format(&t, "src=10.0.0.1 dst=10.0.0.2 type=8 code=0 id=4242");
	t = ts_tuple4(IPPROTO_ICMP, 0x0a000002, 0x0a000001, 65535, 14 << 8 | 3);
	expect_format(&t, "src=10.0.0.2 dst=10.0.0.1 type=14 code=3 id=65535");
	t = ts_tuple6(IPPROTO_ICMPV6, 1, 2, 7, 128 << 8);
	expect_format(&t, "src=2001:db8::1 dst=2001:db8::2 type=128 code=0 id=7");
}

static void test_format_gre_keys_in_hex(void **state)
{
	struct ct_tuple t;
	(void)state;

	t = ts_tuple4(IPPROTO_GRE, 0x0a000001, 0x0a000002, 0, 0);
	expect_format(&t, "src=10.0.0.1 dst=10.0.0.2 srckey=0x0 dstkey=0x0");
	t = ts_tuple4(IPPROTO_GRE, 0x0a000001, 0x0a000002, 0, 0x1a2b);
	expect_format(&t, "src=10.0.0.1 dst=10.0.0.2 srckey=0x0 dstkey=0x1a2b");
}

static void test_format_unknown_protocol_addresses_only(void **state)
{
	struct ct_tuple t;
	(void)state;

	t = ts_tuple4(50, 0x0a000001, 0x0a000002, 0, 0);
	expect_format(&t, "src=10.0.0.1 dst=10.0.0.2");
	t = ts_tuple6(47 + 4, 0x10, 0x20, 0, 0);
	expect_format(&t, "src=2001:db8::10 dst=2001:db8::20");
}

/* snprintf's contract: truncated, NUL-terminated, wanted length back. */
static void test_format_truncates_like_snprintf(void **state)
{
	struct ct_tuple t;
	char buf[8];
	(void)state;

	t = ts_tuple4(IPPROTO_UDP, 0x0a000001, 0x0a000002, 40000, 53);
	assert_int_equal(ct_tuple_format(&t, buf, sizeof(buf)),
			 (int)strlen("src=10.0.0.1 dst=10.0.0.2 sport=40000 dport=53"));
	assert_string_equal(buf, "src=10.");
}

/* The printing rules at the top of this file, through inet_ntop and
 * snprintf. */
static int ref_text(const struct ct_tuple *t, char *buf, size_t size)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	int af = t->l3 == CT_L3_IPV6 ? AF_INET6 : AF_INET;

	inet_ntop(af, t->src.ip6, s, sizeof(s));
	inet_ntop(af, t->dst.ip6, d, sizeof(d));
	switch (t->l4) {
	case IPPROTO_TCP: case IPPROTO_UDP: case IPPROTO_UDPLITE: case IPPROTO_SCTP:
	case IPPROTO_DCCP:
		return snprintf(buf, size, "src=%s dst=%s sport=%u dport=%u", s, d,
				t->sport, t->dport);
	case IPPROTO_GRE:
		return snprintf(buf, size, "src=%s dst=%s srckey=0x%x dstkey=0x%x", s, d,
				t->sport, t->dport);
	case IPPROTO_ICMP: case IPPROTO_ICMPV6:
		return snprintf(buf, size, "src=%s dst=%s type=%u code=%u id=%u", s, d,
				t->dport >> 8, t->dport & 0xff, t->sport);
	default:
		return snprintf(buf, size, "src=%s dst=%s", s, d);
	}
}

static uint64_t put_rng = 0x2545f4914f6cdd1dull;

static uint32_t put_rnd(void)
{
	put_rng ^= put_rng << 13;
	put_rng ^= put_rng >> 7;
	put_rng ^= put_rng << 17;
	return (uint32_t)(put_rng >> 11);
}

/* Random addresses, with the IPv6 forms inet_ntop writes specially as
 * often as the plain ones: runs of zero groups, ::ffff:a.b.c.d, ::a.b.c.d,
 * :: and ::1. */
static void put_rnd_addr(uint8_t l3, union ct_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (l3 != CT_L3_IPV6) {
		a->ip4 = put_rnd();
		return;
	}
	for (int i = 0; i < 8; i++) {
		unsigned w = put_rnd() % 2 ? 0 : put_rnd() % 5 ? put_rnd() & 0xffff : put_rnd() & 0xf;

		a->ip6[2 * i] = (uint8_t)(w >> 8);
		a->ip6[2 * i + 1] = (uint8_t)w;
	}
	switch (put_rnd() % 6) {
	case 0:
		memset(a->ip6, 0, 10);
		a->ip6[10] = a->ip6[11] = 0xff;
		break;
	case 1:
		memset(a->ip6, 0, 12);
		break;
	case 2:
		memset(a->ip6, 0, 16);
		a->ip6[15] = (uint8_t)(put_rnd() % 2);
		break;
	default:
		break;
	}
}

static void test_put_writes_conntracks_text(void **state)
{
	static const uint8_t l4s[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_UDPLITE, IPPROTO_SCTP,
				       IPPROTO_DCCP, IPPROTO_ICMP, IPPROTO_ICMPV6, IPPROTO_GRE,
				       0, 50, 89, 255 };
	(void)state;

	for (int n = 0; n < 100000; n++) {
		struct ct_tuple t;
		char want[160], got[CT_TUPLE_TEXT_MAX + 16], fmt[160];
		char *end;
		int wl;

		memset(&t, 0, sizeof(t));
		t.l3 = n % 2 ? CT_L3_IPV6 : CT_L3_IPV4;
		t.l4 = l4s[put_rnd() % sizeof(l4s)];
		put_rnd_addr(t.l3, &t.src);
		put_rnd_addr(t.l3, &t.dst);
		t.sport = (uint16_t)(put_rnd() % 3 ? put_rnd() : put_rnd() % 10);
		t.dport = (uint16_t)(put_rnd() % 3 ? put_rnd() : put_rnd() % 100);
		wl = ref_text(&t, want, sizeof(want));
		memset(got, 0x5a, sizeof(got));
		end = ct_tuple_put(got, &t);
		assert_int_equal(end - got, wl);
		assert_memory_equal(got, want, (size_t)wl);
		for (size_t i = CT_TUPLE_TEXT_MAX; i < sizeof(got); i++)
			assert_int_equal(got[i], 0x5a);
		assert_int_equal(ct_tuple_format(&t, fmt, sizeof(fmt)), wl);
		assert_string_equal(fmt, want);
		memset(got, 0x5a, sizeof(got));
		end = ct_tuple_put_addr(got, t.l3, &t.src);
		assert_true(end - got < CT_ADDR_TEXT_MAX);
		assert_memory_equal(got, want + 4, (size_t)(end - got));
		assert_int_equal(want[4 + (end - got)], ' ');
		for (size_t i = CT_ADDR_TEXT_MAX; i < sizeof(got); i++)
			assert_int_equal(got[i], 0x5a);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_icmp_invert_matches_kernel_invmap),
		cmocka_unit_test(test_icmpv6_invert_matches_kernel_invmap),
		cmocka_unit_test(test_icmp_maps_follow_protocol_not_family),
		cmocka_unit_test(test_port_protocols_and_gre_swap_fields),
		cmocka_unit_test(test_format_port_protocols),
		cmocka_unit_test(test_format_icmp),
		cmocka_unit_test(test_format_gre_keys_in_hex),
		cmocka_unit_test(test_format_unknown_protocol_addresses_only),
		cmocka_unit_test(test_format_truncates_like_snprintf),
		cmocka_unit_test(test_put_writes_conntracks_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
