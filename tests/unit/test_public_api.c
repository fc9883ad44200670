/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_public_api.c - the README's example, compiled against the public
 * headers only (include/ctrack/, no src/) and linked with the shared
 * library, as an embedding application would be.
 *
 * A frame of real bytes (an Ethernet/IPv4/UDP DNS query, checksums
 * computed by hand below) goes through ct_parse_frame and ct_process; the
 * answer, built by swapping addresses and ports, is found in the reply
 * direction.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include <ctrack/ctrack.h>

#include "support/csum.h"

/* 14 Ethernet + 20 IPv4 + 8 UDP + 4 payload */
static size_t make_frame(uint8_t *f, const uint8_t src[4], const uint8_t dst[4],
			 uint16_t sport, uint16_t dport)
{
	uint8_t *ip = f + 14, *udp = ip + 20;

	memset(f, 0, 46);
	f[12] = 0x08;
	ip[0] = 0x45;
	ip[3] = 32;                 /* total length */
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, src, 4);
	memcpy(ip + 16, dst, 4);
	ts_ip4_csum(ip);
	udp[0] = (uint8_t)(sport >> 8);
	udp[1] = (uint8_t)sport;
	udp[2] = (uint8_t)(dport >> 8);
	udp[3] = (uint8_t)dport;
	udp[5] = 12;                /* length */
	memcpy(udp + 8, "abcd", 4);
	ts_l4_csum(ip, false, 17, udp, 12);
	return 46;
}

static void test_readme_example_tracks_a_query_and_its_answer(void **state)
{
	static const uint8_t a[4] = { 192, 0, 2, 1 }, b[4] = { 198, 51, 100, 8 };
	struct ct_table_config cfg;
	struct ct_table *t;
	struct ct_thread *thr;
	struct ct_packet pkt;
	struct ct_verdict v;
	struct ct_stats st;
	uint8_t frame[64];
	size_t n;

	(void)state;
	ct_table_config_default(&cfg);
	assert_int_equal(ct_table_create(&cfg, &t), 0);
	thr = ct_thread_attach(t);
	assert_non_null(thr);

	n = make_frame(frame, a, b, 40000, 53);
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_ETHERNET, frame, (uint32_t)n,
					(uint32_t)n, 1000), CT_PKT_TRACKABLE);
	assert_int_equal(ct_process(thr, &pkt, 1000, &v), 0);
	assert_int_equal(v.cls, CT_V_NEW);

	n = make_frame(frame, b, a, 53, 40000);
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_ETHERNET, frame, (uint32_t)n,
					(uint32_t)n, 2000), CT_PKT_TRACKABLE);
	assert_int_equal(ct_process(thr, &pkt, 2000, &v), 0);
	assert_int_equal(v.cls, CT_V_ESTABLISHED);
	assert_int_equal(v.dir, CT_DIR_REPLY);

	ct_table_get_stats(t, &st);
	assert_int_equal(st.insert, 1);
	assert_int_equal(st.found, 1);
	assert_int_equal(st.invalid, 0);   /* the checksums above are right */
	assert_int_equal(ct_gc_start(t, NULL, NULL), 0);
	assert_int_equal(ct_gc_stop(t), 0);
	ct_thread_detach(thr);
	ct_table_destroy(t);
}

static bool nothing_taken(void *arg, const struct ct_nat_probe *p)
{
	(void)arg;
	(void)p;
	return false;
}

/* NAT through the public headers and the shared library: the query is
 * source-NATed to 203.0.113.1, translated, and its checksums are those of
 * a frame built with that source */
static void test_nat_through_the_public_api(void **state)
{
	static const uint8_t a[4] = { 192, 0, 2, 1 }, b[4] = { 198, 51, 100, 8 };
	static const uint8_t n4[4] = { 203, 0, 113, 1 };
	struct ct_nat_range r;
	struct ct_nat_binding bind;
	struct ct_nat_env env;
	struct ct_packet pkt;
	uint8_t frame[64], want[64];
	size_t n;

	(void)state;
	n = make_frame(frame, a, b, 40000, 53);
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_ETHERNET, frame, (uint32_t)n,
					(uint32_t)n, 1000), CT_PKT_TRACKABLE);
	assert_true(ct_nat_binding_init(&bind, &pkt.tuple));
	memset(&r, 0, sizeof(r));
	r.flags = CT_NAT_RANGE_MAP_IPS;
	memcpy(&r.min_addr.ip4, n4, 4);
	r.max_addr = r.min_addr;
	ct_nat_env_init(&env, nothing_taken, NULL);
	assert_int_equal(ct_nat_setup(&env, &bind, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
	assert_int_equal(ct_nat_null_binding(&env, &bind, CT_NAT_MANIP_DST, NULL), CT_NAT_BOUND);
	assert_int_equal(ct_nat_translate(frame, (uint32_t)n, &pkt, &bind, CT_DIR_ORIGINAL, 0,
					  NULL), CT_NAT_V_OK);
	assert_int_equal(make_frame(want, n4, b, 40000, 53), n);
	assert_memory_equal(frame, want, n);
	assert_string_equal(ct_nat_verdict_name(CT_NAT_V_OK), "ok");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readme_example_tracks_a_query_and_its_answer),
		cmocka_unit_test(test_nat_through_the_public_api),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
