/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_support.c - the shared test support (tests/support) against the
 * library it helps to test: frames and checksums it builds are what the
 * parser accepts - and one flipped byte is not - for every protocol with a
 * checksum, in both families; the audit finds nothing on a sound table and
 * names what is wrong on one whose books were bent behind its back.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <netinet/in.h>
#include <string.h>

#include "ctrack/ctrack.h"
#include "base/state.h"
#include "support/audit.h"
#include "support/csum.h"
#include "support/frame.h"
#include "support/tuple.h"
#include "support/wire.h"

#define SEC 1000000000ull

/* Parse a frame and judge its L4 checksum as the tracker would. */
static bool frame_ok(const uint8_t *f, uint32_t len)
{
	struct ct_packet p;

	assert_int_equal(ct_parse_frame(&p, 1, f, len, len, 0), CT_PKT_TRACKABLE);
	return !p.ip_csum_bad && ct_packet_l4_csum_ok(&p);
}

static void test_frames_built_from_packets_carry_checksums_the_parser_accepts(void **state)
{
	const uint8_t l4s[] = { IPPROTO_TCP, IPPROTO_UDP };

	(void)state;
	for (unsigned i = 0; i < 2; i++) {
		struct ct_tuple t = ts_tuple4(l4s[i], 0x0a000001, 0x0a000002, 40000, 80);
		uint8_t f[TS_FRAME_HDR_MAX + 100];
		struct ct_packet p;
		uint32_t wire, n;

		ts_packet_of(&p, &t);
		p.payload_len = 100;
		p.u.tcp.hdr_len = 32;
		p.u.tcp.flags = CT_TCP_SYN;
		p.u.tcp.seq = 12345;
		p.u.tcp.window = 65535;
		p.u.tcp.mss = 1460;
		p.u.tcp.wscale = 7;
		n = ts_frame(f, &p, true, &wire);
		assert_int_equal(n, wire);
		assert_true(frame_ok(f, n));
		f[14 + 20 + 1] ^= 1;              /* the source port */
		assert_false(frame_ok(f, n));
	}
}

/* An IPv4 or IPv6 datagram of @proto with a @len-byte L4 part (header
 * fields that give the parser what it checks: lengths, data offset). */
static uint32_t datagram(uint8_t *ip, bool v6, uint8_t proto, uint32_t len)
{
	uint32_t hl = v6 ? 40 : 20;
	uint8_t *l4 = ip + hl;

	memset(ip, 0, hl + len);
	for (uint32_t i = 0; i < len; i++)
		l4[i] = (uint8_t)(i * 7 + 3);
	if (v6) {
		ip[0] = 0x60;
		ts_put16(ip + 4, (uint16_t)len);
		ip[6] = proto;
		ip[7] = 64;
		ip[8] = 0x20;
		ip[9] = 0x01;
		ip[23] = 1;
		ip[24] = 0x20;
		ip[25] = 0x01;
		ip[39] = 2;
	} else {
		ip[0] = 0x45;
		ts_put16(ip + 2, (uint16_t)(20 + len));
		ip[8] = 64;
		ip[9] = proto;
		ip[12] = 10;
		ip[15] = 1;
		ip[16] = 10;
		ip[19] = 2;
		ts_ip4_csum(ip);
	}
	switch (proto) {
	case IPPROTO_TCP:
		l4[12] = 5 << 4;
		l4[13] = CT_TCP_ACK;
		break;
	case IPPROTO_UDP:
		ts_put16(l4 + 4, (uint16_t)len);
		break;
	case IPPROTO_UDPLITE:
		ts_put16(l4 + 4, 0);              /* coverage: the whole datagram */
		break;
	case IPPROTO_ICMP:
		l4[0] = 8;                        /* echo */
		l4[1] = 0;
		break;
	case IPPROTO_ICMPV6:
		l4[0] = 128;                      /* echo */
		l4[1] = 0;
		break;
	case IPPROTO_SCTP:
		l4[12] = 1;                       /* INIT */
		ts_put16(l4 + 14, (uint16_t)(len - 12));
		break;
	}
	ts_l4_csum(ip, v6, proto, l4, len);
	return hl + len;
}

static bool datagram_ok(const uint8_t *ip, uint32_t n)
{
	struct ct_packet p;

	ct_parse_ip(&p, ip, n, n, 0);
	assert_true(p.kind == CT_PKT_TRACKABLE);
	return !p.ip_csum_bad && ct_packet_l4_csum_ok(&p);
}

static void test_l4_checksums_agree_with_the_librarys_in_both_families(void **state)
{
	static const struct {
		uint8_t proto;
		bool v6;
	} cases[] = {
		{ IPPROTO_TCP, false }, { IPPROTO_TCP, true },
		{ IPPROTO_UDP, false }, { IPPROTO_UDP, true },
		{ IPPROTO_UDPLITE, false }, { IPPROTO_UDPLITE, true },
		{ IPPROTO_ICMP, false }, { IPPROTO_ICMPV6, true },
		{ IPPROTO_SCTP, false }, { IPPROTO_SCTP, true },
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t b[40 + 64];
		uint32_t n = datagram(b, cases[i].v6, cases[i].proto, 64);

		if (!datagram_ok(b, n))
			fail_msg("protocol %u, IPv%c: the library refuses the support's checksum",
				 cases[i].proto, cases[i].v6 ? '6' : '4');
		b[n - 1] ^= 0x40;                 /* the last byte of the payload */
		if (datagram_ok(b, n))
			fail_msg("protocol %u, IPv%c: a flipped byte still passes",
				 cases[i].proto, cases[i].v6 ? '6' : '4');
	}
}

/* A table with a few UDP flows in zones 0 and 1, half of them replied. */
static struct ct_table *sound_table(struct ct_thread **thr)
{
	struct ct_table_config cfg;
	struct ct_table *t;

	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	assert_int_equal(ct_table_create(&cfg, &t), 0);
	assert_int_equal(ct_ns_create(t, 1, NULL), 0);
	*thr = ct_thread_attach(t);
	assert_non_null(*thr);
	for (uint32_t i = 0; i < 200; i++) {
		struct ct_tuple tu = ts_tuple4(IPPROTO_UDP, 0x0a000000 + i, 0x0a640001,
					       (uint16_t)(1000 + i), 53);
		struct ct_packet p;
		struct ct_verdict v;

		tu.zone = (uint16_t)(i & 1);
		ts_packet_of(&p, &tu);
		assert_int_equal(ct_process(*thr, &p, SEC, &v), 0);
		assert_int_equal(v.cls, CT_V_NEW);
		if (i % 2 == 0) {
			struct ct_tuple r = ts_reverse(&tu);

			ts_packet_of(&p, &r);
			assert_int_equal(ct_process(*thr, &p, SEC, &v), 0);
			assert_int_equal(v.cls, CT_V_ESTABLISHED);
		}
	}
	return t;
}

static void test_audit_finds_nothing_wrong_with_a_sound_table(void **state)
{
	struct ct_thread *thr;
	struct ct_table *t = sound_table(&thr);
	struct ts_audit a;

	(void)state;
	ts_audit(thr, TS_AUDIT_TABLE | TS_AUDIT_MEMORY, &a);
	assert_int_equal(a.violations, 0);
	assert_int_equal(a.entries, 200);
	assert_int_equal(a.zone_entries[0], 100);
	assert_int_equal(a.zone_entries[1], 100);
	assert_int_equal(a.live, 200);
	assert_int_equal(a.carved, a.live + a.free_objs + a.cached);
	assert_int_equal(a.map_bad, 0);
	ct_thread_detach(thr);
	ct_table_destroy(t);
}

static void test_audit_names_a_namespace_count_bent_behind_its_back(void **state)
{
	struct ct_thread *thr;
	struct ct_table *t = sound_table(&thr);
	struct ct_ns *ns = ct_ns_get(t, 1);
	struct ts_audit a;

	(void)state;
	ct_ns_count_add(ns, 1);
	ts_audit(thr, TS_AUDIT_TABLE, &a);
	assert_true(a.violations >= 1);
	assert_non_null(strstr(a.first, "zone 1 counts 101, holds 100"));
	ct_ns_count_add(ns, -1);
	ts_audit(thr, TS_AUDIT_TABLE, &a);
	assert_int_equal(a.violations, 0);
	ct_thread_detach(thr);
	ct_table_destroy(t);
}

static void test_audit_names_a_table_count_bent_behind_its_back(void **state)
{
	struct ct_thread *thr;
	struct ct_table *t = sound_table(&thr);
	struct ts_audit a;

	(void)state;
	atomic_fetch_add(&t->count, 3);
	ts_audit(thr, TS_AUDIT_TABLE, &a);
	assert_true(a.violations >= 1);
	assert_non_null(strstr(a.first, "count 203 but 200 entries reachable"));
	atomic_fetch_sub(&t->count, 3);
	ct_thread_detach(thr);
	ct_table_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames_built_from_packets_carry_checksums_the_parser_accepts),
		cmocka_unit_test(test_l4_checksums_agree_with_the_librarys_in_both_families),
		cmocka_unit_test(test_audit_finds_nothing_wrong_with_a_sound_table),
		cmocka_unit_test(test_audit_names_a_namespace_count_bent_behind_its_back),
		cmocka_unit_test(test_audit_names_a_table_count_bent_behind_its_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
