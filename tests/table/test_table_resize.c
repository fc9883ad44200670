/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_table_resize.c - online resize (src/table/resize.c): every entry findable while
 * the table grows, by a quarter from any row count, the load kept between
 * 60% and 75%, due times kept across a resize.
 *
 * The fixture and packet builders are table_fixture.h's; every test of
 * the core ran in one file, test_table.c, before it was split along src/.
 */
#include "table_fixture.h"

static void test_online_resize_keeps_every_entry_findable(void **state)
{
	struct ct_table_config cfg;
	struct fixture *f;
	struct ct_verdict v;
	struct ct_stats st;
	long n = 0;
	const uint32_t N = 50000;

	(void)state;
	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.settings.max = 0;
	cfg.settings.buckets = 64;
	f = setup_with(&cfg);
	ct_table_set_event_handler(f->t, NULL, NULL);
	new_udp_flows(f, 0x0b000002, N, 0);
	ct_table_get_stats(f->t, &st);
	assert_true(st.resizes > 0);
	assert_true(ct_table_rows(f->t) > 64);
	for (uint32_t i = 0; i < N; i++) {
		struct ct_packet p = udp4(0x0b000002, 0x0a000000 + i, 53, 1000);
		ct_process(f->thr, &p, 1 * SEC, &v);
		assert_int_equal(v.cls, CT_V_ESTABLISHED);
		assert_int_equal(v.dir, CT_DIR_REPLY);
	}
	ct_table_dump(f->thr, -1, count_cb, &n);
	assert_int_equal(n, N);
	assert_int_equal(ct_table_count(f->t), N);
	teardown_f(f);
}

/*
 * The row of a hash is floor(lo32 * n / 2^32) (htab.h): for a row count
 * that is not a power of two every row is reachable, the index stays
 * below n, depends on the low 32 bits only (an entry keeps those), and
 * is monotone in them.  Checked at the ends of the 32-bit range and over
 * a spread of hashes: with 1000 rows and 2^20 hashes stepping by
 * 4096 + 1 through the 32-bit range (every 4096th value, so a row of
 * 2^32 / 1000 = 4294967.3 values holds 1048 or 1049 of them), each row
 * gets exactly 1048 or 1049.
 */
static void test_row_index_covers_every_row_of_a_non_power_of_two_table(void **state)
{
	static unsigned hits[1000];
	uint64_t prev = 0;

	(void)state;
	assert_int_equal(ct_row_index(0, 1000), 0);
	assert_int_equal(ct_row_index(0xffffffffull, 1000), 999);
	assert_int_equal(ct_row_index(0xffffffffull, CT_ROWS_MAX), 0xffffffffull);
	/* the upper 32 bits (the signature's) do not move the row */
	assert_int_equal(ct_row_index(0xabcd000012345678ull, 1000),
			 ct_row_index(0x0000000012345678ull, 1000));
	memset(hits, 0, sizeof(hits));
	for (uint64_t k = 0; k < (1u << 20); k++) {
		uint64_t h = k * 4096;
		uint64_t i = ct_row_index(h, 1000);

		assert_true(i < 1000);
		assert_true(i >= prev);
		prev = i;
		hits[i]++;
	}
	for (unsigned i = 0; i < 1000; i++) {
		assert_true(hits[i] >= 1048);
		assert_true(hits[i] <= 1049);
	}
}

/* Is every one of @n flows (udp4 from 10.0.x.y:1000 to 11.0.0.2:53)
 * found from both directions, and are there exactly @n entries? */
static void expect_all_flows(struct fixture *f, uint32_t n)
{
	long dumped = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct ct_packet p = udp4(0x0a000000 + i, 0x0b000002, 1000, 53);
		struct ct_packet r = reply_of(&p);
		struct ct_conn_info ci;
		enum ct_dir d;

		assert_int_equal(ct_table_lookup(f->thr, &p.tuple, &ci, &d), 1);
		assert_int_equal(d, CT_DIR_ORIGINAL);
		assert_int_equal(ci.orig.src.ip4, p.tuple.src.ip4);
		assert_int_equal(ct_table_lookup(f->thr, &r.tuple, &ci, &d), 1);
		assert_int_equal(d, CT_DIR_REPLY);
		assert_int_equal(ci.orig.src.ip4, p.tuple.src.ip4);
	}
	assert_int_equal(ct_table_count(f->t), n);
	ct_table_dump(f->thr, -1, count_cb, &dumped);
	assert_int_equal(dumped, n);
}

/*
 * A table of 960 rows (15 x 64: not a power of two) at the default 75%
 * threshold holds 960 * 6 * 3/4 = 4320 entries; an insert past that
 * starts a resize by 1.25x: 1200 rows, rounded up to whole groups of 64,
 * 1216.  The next insert migrates 8 rows and leaves the rest: in
 * the middle of the migration, and after each further step of 100 rows
 * until it ends, every entry is found from either direction, and the
 * count and the dump both give the number inserted.  A row index computed differently on any of
 * the insert, migration and lookup paths loses entries here.
 */
static void test_resize_by_a_quarter_from_960_rows_keeps_every_entry_findable(void **state)
{
	struct ct_table_config cfg;
	struct fixture *f;
	struct ct_verdict v;
	struct ct_stats st;
	struct ct_htab *h;
	const uint32_t T = 960 * 6 * 3 / 4;
	uint32_t N = 0;
	unsigned steps = 0;
	bool more;

	(void)state;
	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.settings.max = 0;
	cfg.settings.buckets = 960;
	cfg.resize_growth_pct = 125;
	f = setup_with(&cfg);
	ct_table_set_event_handler(f->t, NULL, NULL);
	assert_int_equal(ct_table_rows(f->t), 960);
	/* a thread's inserts reach the table's count 64 at a time, so the
	 * resize starts within 64 inserts after the threshold, never before */
	do {
		struct ct_packet p = udp4(0x0a000000 + N, 0x0b000002, 1000, 53);

		ct_process(f->thr, &p, 0, &v);
		assert_int_equal(v.cls, CT_V_NEW);
		N++;
		h = atomic_load(&f->t->htab);
	} while (!atomic_load(&h->future) && N <= T + 64);
	assert_true(N > T);
	assert_true(N <= T + 64);
	/* the next insert migrates 8 rows (table/resize.h) */
	{
		struct ct_packet p = udp4(0x0a000000 + N, 0x0b000002, 1000, 53);

		assert_int_equal(atomic_load(&h->mig_next), 0);
		ct_process(f->thr, &p, 0, &v);
		assert_int_equal(v.cls, CT_V_NEW);
		N++;
		assert_int_equal(atomic_load(&h->mig_next), 8);
	}
	assert_int_equal(h->n_rows, 960);
	assert_non_null(atomic_load(&h->future));
	assert_int_equal(atomic_load(&h->future)->n_rows, 1216);
	do {
		expect_all_flows(f, N);
		ct_read_lock(f->thr);
		more = ct_table_resize_step(f->t, 100);
		ct_read_unlock(f->thr);
		steps++;
	} while (more);
	/* 960 rows less the 8 the insert moved, 100 a step: 952 take 10 */
	assert_int_equal(steps, 10);
	expect_all_flows(f, N);
	assert_int_equal(ct_table_rows(f->t), 1216);
	ct_table_get_stats(f->t, &st);
	assert_int_equal(st.resizes, 1);
	/* and replies through the packet path find them too */
	for (uint32_t i = 0; i < N; i++) {
		struct ct_packet p = udp4(0x0b000002, 0x0a000000 + i, 53, 1000);

		ct_process(f->thr, &p, 1 * SEC, &v);
		assert_int_equal(v.cls, CT_V_ESTABLISHED);
		assert_int_equal(v.dir, CT_DIR_REPLY);
	}
	assert_int_equal(ct_table_count(f->t), N);
	teardown_f(f);
}

/*
 * Grown from 64 rows by 1.25x at 75%, the table keeps its load between
 * 75% / 1.25 = 60% (just after a resize) and 75% (just before the next):
 * checked every 5,000 entries from 20,000 to 200,000 with any migration
 * under way finished first.  Allowance: rows are rounded up to whole
 * groups of 64 (at most 64 / 4,444 = 1.4% of the rows from 20,000 entries
 * on) and a thread's inserts reach the table's count 64 at a time, so
 * [58%, 76%].  A resize that grew twice (1.5625x) would leave 48%, and
 * doubling 37.5%.  Growth below 110% or above 400% is refused as
 * nonsense (include/ctrack/table.h).
 */
static void test_growth_by_a_quarter_keeps_the_load_between_60_and_75_percent(void **state)
{
	struct ct_table_config cfg;
	struct ct_table *t;
	struct fixture *f;
	struct ct_verdict v;
	const uint32_t N = 200000;
	double lo = 1, hi = 0;

	(void)state;
	ct_table_config_default(&cfg);
	assert_int_equal(cfg.resize_growth_pct, 125);
	cfg.resize_growth_pct = 105;
	assert_int_equal(ct_table_create(&cfg, &t), -EINVAL);
	cfg.resize_growth_pct = 401;
	assert_int_equal(ct_table_create(&cfg, &t), -EINVAL);
	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.settings.max = 0;
	cfg.settings.buckets = 64;
	f = setup_with(&cfg);
	ct_table_set_event_handler(f->t, NULL, NULL);
	for (uint32_t i = 0; i < N; i++) {
		struct ct_packet p = udp4(0x0a000000 + i, 0x0b000002, 1000, 53);

		ct_process(f->thr, &p, 0, &v);
		assert_int_equal(v.cls, CT_V_NEW);
		if ((i + 1) % 5000 == 0 && i + 1 >= 20000) {
			double load;

			ct_read_lock(f->thr);
			while (ct_table_resize_step(f->t, 1024))
				;
			ct_read_unlock(f->thr);
			load = (double)(i + 1) / (double)(ct_table_rows(f->t) * CT_ROW_SLOTS);
			assert_true(load >= 0.58);
			assert_true(load <= 0.76);
			assert_int_equal(ct_table_rows(f->t) % 64, 0);
			if (load < lo)
				lo = load;
			if (load > hi)
				hi = load;
		}
	}
	print_message("# %u entries in %llu rows; load seen %.3f..%.3f\n", N,
		      (unsigned long long)ct_table_rows(f->t), lo, hi);
	expect_all_flows(f, N);
	teardown_f(f);
}

static void test_entries_with_slot_bounds_keep_their_due_times_across_a_resize(void **state)
{
	/* 64 rows.  40 entries at 0 (due 30 s) and 40 at 1 s (due 31 s); a
	 * pass at 30 s removes the first 40 and sets the others' slot
	 * bounds.  Then 2000 entries at 2 s (due 32 s) grow the table; the
	 * collector completes the migration (it helps first).  In the new
	 * generation nothing may leave before its time and everything must
	 * leave at it: none at 30.999 s, the 40 at 31 s, the 2000 at 32 s. */
	struct ct_table_config cfg;
	struct fixture *f;
	struct ct_gc_result r;
	struct ct_verdict v;
	struct ct_stats st;

	(void)state;
	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.settings.max = 0;
	cfg.settings.buckets = 64;
	f = setup_with(&cfg);
	ct_table_set_event_handler(f->t, NULL, NULL);
	for (uint16_t i = 0; i < 80; i++) {
		struct ct_packet p = udp4(0x0a000001, 0x0a000002, (uint16_t)(1000 + i), 53);
		ct_process(f->thr, &p, i < 40 ? 0 : 1 * SEC, &v);
	}
	assert_int_equal(ct_gc_step(f->thr, 30 * SEC, 0, &r), 0);
	assert_int_equal(r.expired, 40);
	for (uint32_t i = 0; i < 2000; i++) {
		struct ct_packet p = udp4(0x0c000000 + i, 0x0a000002, 1000, 53);
		ct_process(f->thr, &p, 2 * SEC, &v);
	}
	ct_table_get_stats(f->t, &st);
	do
		assert_int_equal(ct_gc_step(f->thr, 31 * SEC - 1, 0, &r), 0);
	while (!r.pass_done);
	assert_int_equal(r.expired, 0);
	ct_table_get_stats(f->t, &st);
	assert_true(st.resizes > 0);
	assert_true(ct_table_rows(f->t) > 64);
	assert_int_equal(ct_table_count(f->t), 2040);
	assert_int_equal(ct_gc_step(f->thr, 31 * SEC, 0, &r), 0);
	assert_int_equal(r.expired, 40);
	assert_int_equal(ct_gc_step(f->thr, 32 * SEC - 1, 0, &r), 0);
	assert_int_equal(r.expired, 0);
	assert_int_equal(ct_gc_step(f->thr, 32 * SEC, 0, &r), 0);
	assert_int_equal(r.expired, 2000);
	assert_int_equal(ct_table_count(f->t), 0);
	teardown_f(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_online_resize_keeps_every_entry_findable),
		cmocka_unit_test(test_row_index_covers_every_row_of_a_non_power_of_two_table),
		cmocka_unit_test(test_resize_by_a_quarter_from_960_rows_keeps_every_entry_findable),
		cmocka_unit_test(test_growth_by_a_quarter_keeps_the_load_between_60_and_75_percent),
		cmocka_unit_test(test_entries_with_slot_bounds_keep_their_due_times_across_a_resize),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
