/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ns.c - namespaces (src/ns/): one tuple in two zones, counts summed
 * over every thread's shard, batched teardown, references held by
 * collected entries, a namespace's own maximum.
 *
 * The fixture and packet builders are table_fixture.h's; every test of
 * the core ran in one file, test_table.c, before it was split along src/.
 */
#include "table_fixture.h"

static void test_same_tuple_lives_independently_in_two_zones(void **state)
{
	struct fixture *f = setup_default();
	struct ct_packet p = udp4(0x0a000001, 0x0a000002, 40000, 53);
	struct ct_verdict v;

	(void)state;
	assert_int_equal(ct_ns_create(f->t, 7, NULL), 0);
	assert_int_equal(ct_ns_create(f->t, 7, NULL), -17 /* -EEXIST */);
	ct_process(f->thr, &p, 0, &v);
	assert_int_equal(v.cls, CT_V_NEW);
	p.tuple.zone = 7;
	ct_process(f->thr, &p, 0, &v);
	assert_int_equal(v.cls, CT_V_NEW);
	assert_int_equal(ct_table_count(f->t), 2);
	p.tuple.zone = 9; /* no such namespace */
	ct_process(f->thr, &p, 0, &v);
	assert_int_equal(v.cls, CT_V_INVALID);
	assert_int_equal(v.reason, CT_PR_NS_UNKNOWN);
	teardown_f(f);
}

/*
 * A namespace's count and counters live in shards, one per attached
 * thread (mod CT_NS_SHARDS), so that threads creating connections in one
 * namespace, or meeting invalid packets there, write no common line:
 * three threads, each in its own shard, create entries in zone 5 and send
 * it invalid packets; the collector (a fourth thread) expires some;
 * ct_ns_get_stats adds the shards up exactly.
 */
static void test_namespace_count_sums_the_shards_of_every_thread(void **state)
{
	struct fixture *f = setup_default();
	struct ct_thread *thr[3];
	struct ct_gc_result res;
	struct ct_settings s;
	struct ct_stats st;
	struct ct_verdict v;
	unsigned used = 0, made = 0;

	(void)state;
	ct_table_get_settings(f->t, &s);
	assert_int_equal(ct_ns_create(f->t, 5, &s), 0);
	for (int i = 0; i < 3; i++) {
		thr[i] = ct_thread_attach(f->t);
		assert_non_null(thr[i]);
		for (int j = 0; j < i; j++)
			assert_int_not_equal(thr[i]->ns_shard, thr[j]->ns_shard);
		/* thread i makes 10 * (i + 1) flows, half of them at time 0 */
		for (int k = 0; k < 10 * (i + 1); k++) {
			struct ct_packet p = udp4(0x0a000001 + (uint32_t)i, 0x0a000002,
						  (uint16_t)(1000 + k), 53);

			p.tuple.zone = 5;
			ct_process(thr[i], &p, k % 2 ? 100 * SEC : 0, &v);
			assert_int_equal(v.cls, CT_V_NEW);
			made++;
		}
		/* and i + 1 RSTs of no connection: invalid (tcp_new) */
		for (int k = 0; k <= i; k++) {
			struct ct_packet p = tcp4(0x0a000009, 0x0a000002, 2000, 80,
						  0x04, 1, 0, 0);

			p.tuple.zone = 5;
			ct_process(thr[i], &p, 0, &v);
			assert_int_equal(v.cls, CT_V_INVALID);
		}
	}
	for (int i = 0; i < CT_NS_SHARDS; i++)
		used += atomic_load(&ct_ns_get(f->t, 5)->shard[i].count) != 0;
	assert_true(used >= 3);
	assert_int_equal(ct_ns_get_stats(f->t, 5, &st), 0);
	assert_int_equal(st.count, made);
	assert_int_equal(st.insert, made);
	assert_int_equal(st.invalid, 1 + 2 + 3);

	/* the collector removes the 30 flows made at time 0 (UDP: 30 s) */
	assert_int_equal(ct_gc_step(f->thr, 60 * SEC, 0, &res), 0);
	assert_int_equal(res.expired, made / 2);
	assert_int_equal(ct_ns_get_stats(f->t, 5, &st), 0);
	assert_int_equal(st.count, made / 2);
	assert_int_equal(st.insert, made);
	assert_int_equal(st.expired, made / 2);
	/* and zone 0 has none of it */
	assert_int_equal(ct_ns_get_stats(f->t, 0, &st), 0);
	assert_int_equal(st.count, 0);
	assert_int_equal(st.insert, 0);
	for (int i = 0; i < 3; i++)
		ct_thread_detach(thr[i]);
	teardown_f(f);
}

static void test_batched_teardown_removes_only_the_batch(void **state)
{
	struct fixture *f = setup_default();
	struct ct_verdict v;
	uint16_t ids[10];
	struct ct_stats st;

	(void)state;
	ct_table_set_event_handler(f->t, NULL, NULL);
	for (uint16_t z = 1; z <= 20; z++) {
		assert_int_equal(ct_ns_create(f->t, z, NULL), 0);
		for (uint16_t i = 0; i < 100; i++) {
			struct ct_packet p = udp4(0x0a000001, 0x0a000002, (uint16_t)(1000 + i), 53);
			p.tuple.zone = z;
			ct_process(f->thr, &p, 0, &v);
		}
	}
	assert_int_equal(ct_table_count(f->t), 2000);
	for (int i = 0; i < 10; i++)
		ids[i] = (uint16_t)(i + 1);
	assert_int_equal(ct_ns_destroy(f->thr, ids, 10, 1 * SEC, 0), 1000);
	assert_int_equal(ct_table_count(f->t), 1000);
	assert_false(ct_ns_exists(f->t, 3));
	assert_true(ct_ns_exists(f->t, 13));
	assert_int_equal(ct_ns_get_stats(f->t, 13, &st), 0);
	assert_int_equal(st.count, 100);
	/* the sweep strategy gives the same result */
	for (int i = 0; i < 10; i++)
		ids[i] = (uint16_t)(i + 11);
	assert_int_equal(ct_ns_destroy(f->thr, ids, 10, 1 * SEC, CT_NS_SWEEP), 1000);
	assert_int_equal(ct_table_count(f->t), 0);
	/* ids can be reused at once */
	assert_int_equal(ct_ns_create(f->t, 3, NULL), 0);
	teardown_f(f);
}

/* Entries the collector removed hold their namespace until they are
 * freed, a grace period later: a namespace torn down in between is freed
 * once, after them (the collector takes a run's references at once,
 * gc_ns_flush; under ASan a missing one is a use after free or a leak). */
static void test_collected_entries_hold_a_torn_down_namespace_until_freed(void **state)
{
	struct fixture *f = setup_default();
	struct ct_gc_result res;
	struct ct_verdict v;
	struct ct_stats st;
	uint16_t id = 7;

	(void)state;
	ct_table_set_event_handler(f->t, NULL, NULL);
	for (int round = 0; round < 3; round++) {
		ct_time_ns t0 = (ct_time_ns)round * 100 * SEC;

		assert_int_equal(ct_ns_create(f->t, id, NULL), 0);
		/* more than one free batch (64), and a zone-0 flow between */
		for (uint16_t i = 0; i < 150; i++) {
			struct ct_packet p = udp4(0x0a000001, 0x0a000002, (uint16_t)(1000 + i), 53);
			p.tuple.zone = id;
			ct_process(f->thr, &p, t0, &v);
			assert_int_equal(v.cls, CT_V_NEW);
		}
		{
			struct ct_packet p = udp4(0x0a000009, 0x0a000002, (uint16_t)(2000 + round), 53);
			ct_process(f->thr, &p, t0, &v);
			assert_int_equal(v.cls, CT_V_NEW);
		}
		/* UDP's 30 s: all 151 are due at t0 + 60 s */
		assert_int_equal(ct_gc_step(f->thr, t0 + 60 * SEC, 0, &res), 0);
		assert_true(res.pass_done);
		assert_int_equal(res.expired, 151);
		assert_int_equal(ct_ns_get_stats(f->t, id, &st), 0);
		assert_int_equal(st.count, 0);
		assert_int_equal(st.expired, 150);
		/* torn down while its 150 entries wait for their grace period */
		assert_int_equal(ct_ns_destroy(f->thr, &id, 1, t0 + 60 * SEC, 0), 0);
		assert_false(ct_ns_exists(f->t, id));
	}
	assert_int_equal(ct_table_count(f->t), 0);
	teardown_f(f);
}

static void test_namespace_maximum_evicts_within_the_namespace(void **state)
{
	struct fixture *f = setup_default();
	struct ct_settings s;
	struct ct_verdict v;
	struct ct_stats st;

	(void)state;
	ct_settings_default(&s);
	s.checksum = 0;
	s.max = 10;
	assert_int_equal(ct_ns_create(f->t, 5, &s), 0);
	for (uint16_t i = 0; i < 100; i++) {
		struct ct_packet p = udp4(0x0a000001, 0x0a000002, (uint16_t)(1000 + i), 53);
		p.tuple.zone = 5;
		ct_process(f->thr, &p, 0, &v);
	}
	assert_int_equal(ct_ns_get_stats(f->t, 5, &st), 0);
	assert_true(st.count <= 10);
	teardown_f(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_tuple_lives_independently_in_two_zones),
		cmocka_unit_test(test_namespace_count_sums_the_shards_of_every_thread),
		cmocka_unit_test(test_batched_teardown_removes_only_the_batch),
		cmocka_unit_test(test_collected_entries_hold_a_torn_down_namespace_until_freed),
		cmocka_unit_test(test_namespace_maximum_evicts_within_the_namespace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
