/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_time_edges.c - the caller's clock at its edges.
 *
 * Time is an input (DESIGN.md): a 64-bit count of nanoseconds of whatever
 * clock the caller uses, so a capture's timestamps decide it, and a
 * damaged capture can put them anywhere up to 2^64 - 1 (a pcapng time
 * offset, a 64-bit tick count).  What must hold there:
 *   - an entry (or a datagram being reassembled) created near the end of
 *     that range does not expire the moment it is made: now + timeout
 *     must not wrap around into the past;
 *   - a clock that jumps centuries ahead expires everything, once;
 *   - a clock that lags by a little (another thread's, as table.h allows)
 *     neither loses the entry nor breaks the counts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "hostile_util.h"

static struct ct_table *make_table(void)
{
	struct ct_table_config cfg;
	struct ct_table *t;

	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	assert_int_equal(ct_table_create(&cfg, &t), 0);
	return t;
}

static void test_entry_created_at_the_end_of_time_is_not_expired_at_once(void **state)
{
	struct ct_table *t = make_table();
	struct ct_thread *thr = ct_thread_attach(t);
	struct ct_tuple tu = ts_tuple4(IPPROTO_UDP, 0x0a000001, 0x0a000002, 4000, 53);
	struct ct_tuple rv = ts_reverse(&tu);
	struct ct_packet p = h_udp(&tu, 10), q = h_udp(&rv, 10);
	struct ct_conn_info ci;
	struct ct_verdict v;
	struct ct_gc_result r;
	ct_time_ns now = UINT64_MAX - 10 * H_SEC;

	(void)state;
	assert_int_equal(ct_process(thr, &p, now, &v), 0);
	assert_int_equal(v.cls, CT_V_NEW);
	/* 30 s of udp_timeout from 10 s before the end: the expiry cannot be
	 * represented; it must stay in the future, not wrap to 20 s */
	assert_int_equal(ct_table_lookup(thr, &tu, &ci, NULL), 1);
	assert_true(ci.expires > now);
	assert_int_equal(ct_gc_step(thr, now + H_SEC, 0, &r), 0);
	assert_int_equal(r.expired, 0);
	assert_int_equal(ct_table_count(t), 1);
	/* the conversation goes on */
	assert_int_equal(ct_process(thr, &q, now + 2 * H_SEC, &v), 0);
	assert_int_equal(v.cls, CT_V_ESTABLISHED);
	assert_int_equal(v.dir, CT_DIR_REPLY);
	ct_thread_detach(thr);
	ct_table_destroy(t);
}

static void test_tcp_entry_refreshed_at_the_end_of_time_stays(void **state)
{
	struct ct_table *t = make_table();
	struct ct_thread *thr = ct_thread_attach(t);
	struct h_conn c;
	struct ct_conn_info ci;
	struct ct_gc_result r;
	ct_time_ns now = UINT64_MAX - 60 * H_SEC;

	(void)state;
	h_conn_init(&c, 1);
	/* ESTABLISHED's timeout is 5 days: far past the end of the range */
	assert_int_equal(h_handshake(thr, &c, now), 0);
	assert_int_equal(ct_gc_step(thr, now + H_SEC, 0, &r), 0);
	assert_int_equal(ct_table_lookup(thr, &c.t, &ci, NULL), 1);
	assert_string_equal(ci.state_name, "ESTABLISHED");
	assert_true(ci.expires > now + H_SEC);
	ct_thread_detach(thr);
	ct_table_destroy(t);
}

/* An IPv4 fragment of a 36-byte UDP datagram (8 header + 28 payload):
 * @part 0 carries bytes 0..23, part 1 bytes 24..35. */
static uint32_t ip4_fragment(uint8_t *buf, int part)
{
	uint32_t off = part ? 24 : 0, n = part ? 12 : 24;
	uint32_t sum = 0;

	memset(buf, 0, 20 + n);
	buf[0] = 0x45;
	buf[2] = (uint8_t)((20 + n) >> 8);
	buf[3] = (uint8_t)(20 + n);
	buf[4] = 0x12;
	buf[5] = 0x34;
	buf[6] = (uint8_t)((part ? 0 : 0x20) | ((off / 8) >> 8));
	buf[7] = (uint8_t)(off / 8);
	buf[8] = 64;
	buf[9] = IPPROTO_UDP;
	buf[12] = 10; buf[15] = 1;
	buf[16] = 10; buf[19] = 2;
	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)(buf[i] << 8 | buf[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	buf[10] = (uint8_t)(~sum >> 8);
	buf[11] = (uint8_t)~sum;
	if (!part) {
		buf[20] = 0x0f; buf[21] = 0xa0;   /* 4000 */
		buf[22] = 0x00; buf[23] = 0x35;   /* 53 */
		buf[25] = 36;                     /* UDP length */
	}
	return 20 + n;
}

static void test_fragments_at_the_end_of_time_are_reassembled(void **state)
{
	struct ct_defrag *d = ct_defrag_create(0, 0);
	uint8_t f0[64], f1[64];
	struct ct_packet p0, p1, whole;
	uint32_t n0 = ip4_fragment(f0, 0), n1 = ip4_fragment(f1, 1);
	ct_time_ns now = UINT64_MAX - H_SEC;

	(void)state;
	assert_non_null(d);
	assert_int_equal(ct_parse_ip(&p0, f0, n0, n0, now), CT_PKT_FRAGMENT);
	assert_int_equal(ct_parse_ip(&p1, f1, n1, n1, now), CT_PKT_FRAGMENT);
	/* 30 s of ipfrag_time from 1 s before the end of the clock */
	assert_int_equal(ct_defrag_feed(d, &p0, now, &whole), 0);
	assert_int_equal(ct_defrag_feed(d, &p1, now + 1000, &whole), 1);
	assert_int_equal(whole.kind, CT_PKT_TRACKABLE);
	assert_int_equal(whole.tuple.dport, 53);
	ct_defrag_destroy(d);
}

static void test_clock_jumping_centuries_expires_everything_once(void **state)
{
	struct ct_table *t = make_table();
	struct ct_thread *thr = ct_thread_attach(t);
	struct ct_gc_result r;
	struct ct_stats st;

	(void)state;
	for (uint16_t i = 0; i < 500; i++) {
		struct ct_tuple tu = ts_tuple4(IPPROTO_UDP, 0x0a000001, 0x0a000002, (uint16_t)(1000 + i), 53);
		struct ct_packet p = h_udp(&tu, 10);
		struct ct_verdict v;

		ct_process(thr, &p, H_SEC, &v);
		assert_int_equal(v.cls, CT_V_NEW);
	}
	assert_int_equal(ct_gc_step(thr, UINT64_MAX - 1, 0, &r), 0);
	assert_int_equal(r.expired, 500);
	assert_int_equal(ct_table_count(t), 0);
	assert_int_equal(ct_gc_step(thr, UINT64_MAX - 1, 0, &r), 0);
	assert_int_equal(r.expired, 0);
	ct_table_get_stats(t, &st);
	assert_int_equal(st.expired, 500);
	ct_thread_detach(thr);
	ct_table_destroy(t);
}

static void test_lagging_clock_keeps_entry_and_counts(void **state)
{
	struct ct_table *t = make_table();
	struct ct_thread *a = ct_thread_attach(t), *b = ct_thread_attach(t);
	struct ct_tuple tu = ts_tuple4(IPPROTO_UDP, 0x0a000001, 0x0a000002, 4000, 53);
	struct ct_tuple rv = ts_reverse(&tu);
	struct ct_packet p = h_udp(&tu, 10), q = h_udp(&rv, 10);
	struct ct_verdict v;
	struct ct_gc_result r;
	struct ct_stats st;

	(void)state;
	ct_process(a, &p, 100 * H_SEC, &v);
	assert_int_equal(v.cls, CT_V_NEW);
	/* thread b's clock is a second behind thread a's */
	ct_process(b, &q, 99 * H_SEC, &v);
	assert_int_equal(v.cls, CT_V_ESTABLISHED);
	assert_int_equal(ct_gc_step(a, 101 * H_SEC, 0, &r), 0);
	assert_int_equal(ct_table_count(t), 1);
	ct_table_get_stats(t, &st);
	assert_int_equal(st.insert - st.expired - st.deleted - st.early_drop, st.count);
	ct_thread_detach(b);
	ct_thread_detach(a);
	ct_table_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entry_created_at_the_end_of_time_is_not_expired_at_once),
		cmocka_unit_test(test_tcp_entry_refreshed_at_the_end_of_time_stays),
		cmocka_unit_test(test_fragments_at_the_end_of_time_are_reassembled),
		cmocka_unit_test(test_clock_jumping_centuries_expires_everything_once),
		cmocka_unit_test(test_lagging_clock_keeps_entry_and_counts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
