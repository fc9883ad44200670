/*
 * test_collector.c - what one full collector pass promises.
 *
 * The stress tests check, after quiescing, that a full pass of the
 * collector at time `now` leaves no entry with expires <= now.  Random
 * traffic rarely builds the case that tests the promise hardest: a row
 * chain holding more due entries than the collector handles per locking
 * of the row.  Here a fixed hash key lets the test pick flows that all
 * land in row 0 of a 64-row table that may not grow (resize_load_pct
 * above 100), up to the chain limit, with one timeout; then one pass,
 * started at the first row of a fresh table, must remove every one of
 * them.
 */
#include "stress.h"

#include "hash.h"
#include "htab.h"

static const uint8_t fixed_key[16] = {
	0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
	0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10,
};

static int count_cb(const struct ct_conn_info *ci, void *arg)
{
	(void)ci;
	(*(uint64_t *)arg)++;
	return 0;
}

static void test_one_full_pass_removes_every_expired_entry_of_a_full_row(void **state)
{
	struct ct_table_config cfg;
	struct ct_hash_key key;
	struct ct_table *t;
	struct ct_thread *thr;
	struct ct_gc_result r;
	struct ct_stats st;
	uint64_t dumped = 0;
	unsigned placed = 0;
	const ct_time_ns t0 = 100 * STRESS_SEC;

	(void)state;
	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.settings.buckets = 64;
	cfg.hash_key = fixed_key;
	cfg.resize_load_pct = 101;          /* no online resize */
	cfg.max_chain = 64;
	assert_int_equal(ct_table_create(&cfg, &t), 0);
	ct_tsan_rcu_wrap(t);
	thr = ct_thread_attach(t);
	assert_non_null(thr);
	memcpy(&key, fixed_key, sizeof(key));

	/* UDP flows 10.1.x.y:1024 -> 192.0.2.1:53 whose hash selects row 0 */
	for (uint32_t i = 0; i < (1u << 20) && placed < cfg.max_chain; i++) {
		struct ct_packet p;
		struct ct_verdict v;

		memset(&p, 0, sizeof(p));
		p.kind = CT_PKT_TRACKABLE;
		p.tuple.l3 = CT_L3_IPV4;
		p.tuple.l4 = IPPROTO_UDP;
		p.tuple.src.ip4 = htonl(0x0a000000u | (i & 0xffffffu));
		p.tuple.dst.ip4 = htonl(STRESS_SERVER);
		p.tuple.sport = 1024;
		p.tuple.dport = 53;
		p.l3_len = 48;
		p.l4_len = 28;
		if (ct_row_index(ct_hash_tuple(&key, &p.tuple), 64) != 0)
			continue;
		assert_int_equal(ct_process(thr, &p, t0, &v), 0);
		assert_int_equal(v.cls, CT_V_NEW);
		placed++;
	}
	/* more than the collector takes from a row at a time (6 slots x 8) */
	assert_int_equal(placed, cfg.max_chain);
	assert_int_equal(ct_table_count(t), placed);

	/* the kernel's unreplied UDP timeout is 30 s: at +31 s all are due */
	assert_int_equal(ct_gc_step(thr, t0 + 31 * STRESS_SEC, 0, &r), 0);
	assert_true(r.pass_done);
	assert_int_equal(r.expired, placed);
	assert_int_equal(ct_table_dump(thr, -1, count_cb, &dumped), 0);
	assert_int_equal(dumped, 0);
	assert_int_equal(ct_table_count(t), 0);
	ct_table_get_stats(t, &st);
	assert_int_equal(st.expired, placed);

	ct_thread_detach(thr);
	ct_table_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_full_pass_removes_every_expired_entry_of_a_full_row),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
