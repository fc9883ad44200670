/* SPDX-License-Identifier: BSD-3-Clause */
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
 *
 * The second case keeps one row's chain changing under readers: every
 * round new short-lived flows fill it, then a few long-lived "anchors"
 * are added behind them; the collector then expires the short-lived ones
 * and takes the overflow rows they leave empty out of the chain, to be
 * handed out again a grace period later.  Readers look the live anchors
 * up the whole time (and a flow that does not exist, which walks the
 * whole chain): an anchor behind a row being unlinked or reused must be
 * found every time.
 */
#include "stress.h"

#include "base/hash.h"
#include "table/htab.h"

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

/* Row-0 UDP flows of zone @zone: 10.x.y.z:p -> 192.0.2.1:53, the zone
 * in the source address. */
static unsigned row0_flows(const struct ct_hash_key *key, uint16_t zone,
			   struct ct_tuple *out, unsigned want)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < (1u << 24) && n < want; i++) {
		struct ct_tuple tu;

		memset(&tu, 0, sizeof(tu));
		tu.l3 = CT_L3_IPV4;
		tu.l4 = IPPROTO_UDP;
		tu.src.ip4 = htonl(0x0a000000u | ((uint32_t)zone << 20) | (i & 0xfffffu));
		tu.dst.ip4 = htonl(STRESS_SERVER);
		tu.sport = (uint16_t)(1024 + (i >> 20));
		tu.dport = 53;
		tu.zone = zone;
		if (ct_row_index(ct_hash_tuple(key, &tu), 64) == 0)
			out[n++] = tu;
	}
	return n;
}

/* A new entry for @tu at @now. */
static void create_flow(struct ct_thread *thr, const struct ct_tuple *tu, ct_time_ns now)
{
	struct ct_packet p;
	struct ct_verdict v;

	memset(&p, 0, sizeof(p));
	p.kind = CT_PKT_TRACKABLE;
	p.tuple = *tu;
	p.l3_len = 48;
	p.l4_len = 28;
	assert_int_equal(ct_process(thr, &p, now, &v), 0);
	assert_int_equal(v.cls, CT_V_NEW);
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
	struct ct_tuple flows[64];

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

	/* UDP flows whose hash selects row 0 */
	assert_int_equal(row0_flows(&key, 0, flows, cfg.max_chain), cfg.max_chain);
	for (unsigned i = 0; i < cfg.max_chain; i++) {
		create_flow(thr, &flows[i], t0);
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

#define OVF_CHURN 30        /* short-lived flows a round (zone 0, 30 s) */
#define OVF_ANCHORS 2       /* long-lived ones a round (zone 1, 120 s) */
#define OVF_ROUNDS_MAX 20000
#define OVF_READERS 2

struct ovf_run {
	struct ct_table *t;
	struct ct_hash_key key;
	struct ct_tuple *anchors;         /* OVF_ANCHORS a round */
	struct ct_tuple absent;           /* in row 0, never created */
	_Atomic unsigned round;           /* anchors of rounds < round exist */
	_Atomic unsigned seen[OVF_READERS]; /* the round each reader started */
	_Atomic bool stop;
	_Atomic uint64_t lookups, misses;
};

struct ovf_reader {
	struct ovf_run *run;
	unsigned id;
};

/* Look @tu up as a packet would, in a read-side section of its own. */
static bool flow_found(struct ct_thread *thr, const struct ovf_run *run,
		       const struct ct_tuple *tu)
{
	struct ct_tuple inv;
	enum ct_dir dir;
	struct ct_conn *c;

	ct_tuple_invert(tu, &inv);
	run->t->rcu->read_lock();
	c = ct_table_find(thr, ct_hash_tuple(&run->key, tu), tu, &inv, &dir);
	run->t->rcu->read_unlock();
	return c != NULL;
}

static void *ovf_reader_main(void *arg)
{
	struct ovf_reader *rd = arg;
	struct ovf_run *run = rd->run;
	struct ct_thread *thr = ct_thread_attach(run->t);
	uint64_t lookups = 0, misses = 0;

	while (!atomic_load(&run->stop)) {
		unsigned r = atomic_load(&run->round);

		atomic_store(&run->seen[rd->id], r);
		/* the anchors of the last two rounds live until round r + 2
		 * is collected, which waits for this reader to start a
		 * later round */
		for (unsigned k = r >= 2 ? r - 2 : 0; k < r; k++)
			for (unsigned a = 0; a < OVF_ANCHORS; a++) {
				lookups++;
				misses += !flow_found(thr, run, &run->anchors[k * OVF_ANCHORS + a]);
			}
		misses += flow_found(thr, run, &run->absent);
	}
	atomic_fetch_add(&run->lookups, lookups);
	atomic_fetch_add(&run->misses, misses);
	ct_thread_detach(thr);
	return NULL;
}

/* @lock: the scan unlinks every emptied overflow row; the wheel, whose
 * slot handles name positions in a chain, only an emptied tail - its
 * middle rows stay and are filled again, so the chain does not grow */
static void anchors_overflow(enum ct_gc_lock_policy lock)
{
	struct ct_gc_policy pol;
	struct ct_table_config cfg;
	struct ovf_run run;
	struct ovf_reader rds[OVF_READERS];
	pthread_t tids[OVF_READERS];
	struct ct_tuple churn[OVF_CHURN], absent[1];
	struct ct_settings s1;
	struct ct_thread *thr;
	struct ct_gc_result r;
	uint64_t freed = 0, deadline;
	unsigned budget = stress_budget_ms(2000) / 2, rounds = 0;
	ct_time_ns now = 100 * STRESS_SEC;

		memset(&run, 0, sizeof(run));
	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.settings.buckets = 64;
	cfg.settings.udp_timeout = 30;
	cfg.hash_key = fixed_key;
	cfg.resize_load_pct = 101;          /* no online resize */
	cfg.max_chain = 64;
	assert_int_equal(ct_table_create(&cfg, &run.t), 0);
	ct_tsan_rcu_wrap(run.t);
	ct_gc_policy_default(&pol);
	pol.lock = lock;
	ct_gc_set_policy(run.t, &pol);
	s1 = cfg.settings;
	s1.udp_timeout = 120;
	assert_int_equal(ct_ns_create(run.t, 1, &s1), 0);
	thr = ct_thread_attach(run.t);
	assert_non_null(thr);
	memcpy(&run.key, fixed_key, sizeof(run.key));
	assert_int_equal(row0_flows(&run.key, 0, churn, OVF_CHURN), OVF_CHURN);
	assert_int_equal(row0_flows(&run.key, 2, absent, 1), 1);
	run.absent = absent[0];
	run.anchors = calloc((size_t)OVF_ROUNDS_MAX * OVF_ANCHORS, sizeof(*run.anchors));
	assert_non_null(run.anchors);
	assert_int_equal(row0_flows(&run.key, 1, run.anchors, OVF_ROUNDS_MAX * OVF_ANCHORS),
			 OVF_ROUNDS_MAX * OVF_ANCHORS);
	for (unsigned i = 0; i < OVF_READERS; i++) {
		rds[i].run = &run;
		rds[i].id = i;
		assert_int_equal(pthread_create(&tids[i], NULL, ovf_reader_main, &rds[i]), 0);
	}

	deadline = stress_mono_ms() + budget;
	while (rounds < OVF_ROUNDS_MAX && (rounds < 8 || stress_mono_ms() < deadline)) {
		/* this round's short-lived flows, then its anchors behind them */
		for (unsigned i = 0; i < OVF_CHURN; i++)
			create_flow(thr, &churn[i], now);
		for (unsigned a = 0; a < OVF_ANCHORS; a++)
			create_flow(thr, &run.anchors[rounds * OVF_ANCHORS + a], now);
		rounds++;
		atomic_store(&run.round, rounds);
		/* a reader may still look up the anchors of round - 2 until it
		 * has started this round; the next collection can expire
		 * those of round - 4 only (120 s at 31 s a round) */
		for (unsigned i = 0; i < OVF_READERS; i++)
			while (atomic_load(&run.seen[i]) + 1 < rounds)
				sched_yield();
		now += 31 * STRESS_SEC;
		assert_int_equal(ct_gc_step(thr, now, 0, &r), 0);
		assert_true(r.pass_done);
		freed += r.ovf_rows_freed;
		/* the rows this pass unlinked come back one grace period
		 * later: wait for it, so that the next round can take them
		 * whatever the machine's speed (on a quiet machine dozens of
		 * rounds fit in one grace period, each mapping rows anew, and
		 * the bound below measured the call_rcu thread's latency
		 * instead of the reuse) */
		run.t->rcu->barrier();
	}
	atomic_store(&run.stop, true);
	for (unsigned i = 0; i < OVF_READERS; i++)
		pthread_join(tids[i], NULL);

	assert_int_equal(atomic_load(&run.misses), 0);
	assert_true(atomic_load(&run.lookups) > 0);
	/* scan: the chain shed rows every round, and reused them: far fewer
	 * rows were ever mapped than were unlinked.  Wheel: its rows were
	 * filled again in place; both keep the mapping small */
	if (lock != CT_GC_LOCK_WHEEL)
		assert_true(freed >= rounds);
	assert_true(ct_htab_ovf_mapped(atomic_load(&run.t->htab)) <= 64);
	ct_thread_detach(thr);
	ct_table_destroy(run.t);
	free(run.anchors);
}

static void test_anchors_stay_found_while_emptied_overflow_rows_leave_the_chain(void **state)
{
	(void)state;
	anchors_overflow(CT_GC_LOCK_DUE);
}

static void test_anchors_stay_found_while_the_wheel_refills_emptied_overflow_rows(void **state)
{
	(void)state;
	anchors_overflow(CT_GC_LOCK_WHEEL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_full_pass_removes_every_expired_entry_of_a_full_row),
		cmocka_unit_test(test_anchors_stay_found_while_emptied_overflow_rows_leave_the_chain),
		cmocka_unit_test(test_anchors_stay_found_while_the_wheel_refills_emptied_overflow_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
