/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_wheel_rings.c - a long collector slice empties the packet threads'
 * rings as it goes.
 *
 * Every insert queues a handle on its thread's ring; the collector
 * empties the rings into its wheel at the start of each step, and a
 * thread whose ring is full empties it itself when the collector is not
 * running.  A collector that holds its lock for long - the seeding walk
 * over every row, ~300 ms at 10M connections - used to leave the rings
 * alone until its next step: a thread that made more than a ring's worth
 * (CT_RING_SIZE) of connections meanwhile dropped a handle and asked
 * for another walk, during which the same happened again (a collector
 * walking the table over and over, 20-33% of a core in the 10M rows of
 * `ctrack-bench throughput --work new-tcp`).  Now the collector also
 * empties the rings at its throttled yields.
 *
 * The test makes the interleaving instead of hoping for it: the table's
 * RCU flavour is wrapped so that the collector's thread, each time it
 * ends a read-side section (the yield), has a packet thread create
 * ROUND_FLOWS new connections and waits for them.  ROUNDS rounds make
 * more than a ring's worth in one walk.  Then: no second walk follows,
 * and every connection, those the walk saw and those made during it,
 * leaves at its time.
 *
 * Two more ways a ring used to overflow, single-threaded here: another
 * packet thread emptying its own ring holds the same lock (two threads
 * whose rings filled together: the second found the lock taken and
 * dropped its handle - new-tcp-1M-2t-gc-wheel reseeded once a run, 10% of
 * a core); and a thread whose ring filled between two slices of a
 * seeding walk found the lock free but was refused, the wheel not being
 * seeded yet.  A thread now tries from half full on, and a walk under way
 * takes what it is given.
 */
#include "stress.h"

#include <sched.h>

#include <urcu/flavor.h>

#define FILL_FLOWS 100000u
#define ROUND_FLOWS 40000u
#define ROUNDS 4u

_Static_assert(ROUND_FLOWS < CT_RING_SIZE && ROUNDS * ROUND_FLOWS > 2 * CT_RING_SIZE,
	       "each round fits a ring, all of them overflow it twice");

static const struct rcu_flavor_struct *prev_flavor;
static struct rcu_flavor_struct hooked_flavor;
static pthread_t collector_thread;
static _Atomic bool hook_armed;
static _Atomic unsigned rounds_asked, rounds_done;

static void hooked_read_unlock(void)
{
	unsigned r;

	prev_flavor->read_unlock();
	if (!atomic_load(&hook_armed) || !pthread_equal(pthread_self(), collector_thread))
		return;
	r = atomic_load(&rounds_asked);
	if (r >= ROUNDS)
		return;
	atomic_store(&rounds_asked, r + 1);
	while (atomic_load(&rounds_done) < r + 1) {
		struct timespec ts = { 0, 100 * 1000 };

		nanosleep(&ts, NULL);
	}
}

static void udp_packet(struct ct_packet *p, uint32_t i)
{
	memset(p, 0, sizeof(*p));
	p->kind = CT_PKT_TRACKABLE;
	p->tuple.l3 = CT_L3_IPV4;
	p->tuple.l4 = IPPROTO_UDP;
	p->tuple.src.ip4 = htonl(0x0a000000u + i);
	p->tuple.dst.ip4 = htonl(STRESS_SERVER);
	p->tuple.sport = 1000;
	p->tuple.dport = 53;
	p->l3_len = 48;
	p->l4_len = 28;
	p->payload_len = 20;
}

struct maker {
	struct ct_table *t;
	_Atomic bool quit;
	uint64_t made;
};

/* The packet thread: a round of new connections at 10 s whenever the
 * collector's hook asks for one. */
static void *maker_main(void *arg)
{
	struct maker *m = arg;
	struct ct_thread *thr = ct_thread_attach(m->t);
	unsigned done = 0;

	if (!thr)
		return NULL;
	while (!atomic_load(&m->quit)) {
		if (atomic_load(&rounds_asked) == done) {
			struct timespec ts = { 0, 100 * 1000 };

			nanosleep(&ts, NULL);
			continue;
		}
		for (uint32_t i = 0; i < ROUND_FLOWS; i++) {
			struct ct_packet p;
			struct ct_verdict v;

			udp_packet(&p, FILL_FLOWS + done * ROUND_FLOWS + i);
			if (ct_process(thr, &p, 10 * STRESS_SEC, &v) == 0 && v.cls == CT_V_NEW)
				m->made++;
		}
		atomic_store(&rounds_done, ++done);
	}
	ct_thread_detach(thr);
	return NULL;
}

/* UDP flows FIRST.. FIRST+@n-1 at @now, each a new entry */
static void make_flows(struct ct_thread *thr, uint32_t first, uint32_t n, ct_time_ns now)
{
	for (uint32_t i = 0; i < n; i++) {
		struct ct_packet p;
		struct ct_verdict v;

		udp_packet(&p, first + i);
		assert_int_equal(ct_process(thr, &p, now, &v), 0);
		assert_int_equal(v.cls, CT_V_NEW);
	}
}

static uint32_t ring_fill(struct ct_thread *thr)
{
	return atomic_load(&thr->ring.tail) - atomic_load(&thr->ring.head);
}

/* another thread holding gc_lock, as one emptying its own ring does:
 * hold() until let_go(), as often as asked, until holder_stop() */
struct holder {
	struct ct_table *t;
	pthread_t th;
	_Atomic int state;      /* 1: take it, 2: held, 3: let go, 0: idle,
				 * 4: end */
};

static void *holder_main(void *arg)
{
	struct holder *ho = arg;
	int st;

	for (;;) {
		while ((st = atomic_load(&ho->state)) != 1 && st != 4)
			sched_yield();
		if (st == 4)
			return NULL;
		pthread_mutex_lock(&ho->t->gc_lock);
		atomic_store(&ho->state, 2);
		while (atomic_load(&ho->state) != 3)
			sched_yield();
		pthread_mutex_unlock(&ho->t->gc_lock);
		atomic_store(&ho->state, 0);
	}
}

static void holder_start(struct holder *ho, struct ct_table *t)
{
	ho->t = t;
	atomic_store(&ho->state, 0);
	assert_int_equal(pthread_create(&ho->th, NULL, holder_main, ho), 0);
}

static void hold(struct holder *ho)
{
	atomic_store(&ho->state, 1);
	while (atomic_load(&ho->state) != 2)
		sched_yield();
}

static void let_go(struct holder *ho)
{
	atomic_store(&ho->state, 3);
	while (atomic_load(&ho->state) != 0)
		sched_yield();
}

static void holder_stop(struct holder *ho)
{
	atomic_store(&ho->state, 4);
	assert_int_equal(pthread_join(ho->th, NULL), 0);
}

static struct ct_table *table_65536_rows(void)
{
	struct ct_table_config cfg;
	struct ct_table *t;

	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.settings.buckets = 65536;
	cfg.settings.max = 0;
	assert_int_equal(ct_table_create(&cfg, &t), 0);
	ct_tsan_rcu_wrap(t);
	return t;
}

/* a wheel that needs its walk: the policy switched off and on again,
 * yielding every @yield_ns (0: the default) */
static void need_walk(struct ct_table *t, uint64_t yield_ns)
{
	struct ct_gc_policy pol;

	ct_gc_policy_default(&pol);
	pol.lock = CT_GC_LOCK_DUE;
	ct_gc_set_policy(t, &pol);
	pol.lock = CT_GC_LOCK_WHEEL;
	if (yield_ns)
		pol.yield_ns = yield_ns;
	ct_gc_set_policy(t, &pol);
}

/* every entry leaves exactly at 30 s after @made (their one time), in
 * one pass, with no walk beyond @seeds */
static void leave_at(struct ct_table *t, struct ct_thread *thr, ct_time_ns made,
		     uint64_t n, uint64_t seeds)
{
	struct ct_gc_result res;
	struct ct_stats st;

	assert_int_equal(ct_table_count(t), n);
	assert_int_equal(ct_gc_step(thr, made + 30 * STRESS_SEC - 1, 0, &res), 0);
	assert_int_equal(ct_table_count(t), n);
	assert_int_equal(ct_gc_step(thr, made + 30 * STRESS_SEC, 0, &res), 0);
	assert_int_equal(res.expired, n);
	assert_int_equal(ct_table_count(t), 0);
	ct_table_get_stats(t, &st);
	assert_int_equal(st.gc_wheel_seeds, seeds);
}

static void test_connections_made_during_a_seeding_walk_need_no_second_walk(void **state)
{
	struct ct_gc_result res;
	struct ct_table *t = table_65536_rows();   /* 260k entries: no resize */
	struct ct_thread *thr;
	struct ct_stats st;
	struct maker m;
	pthread_t th;
	uint64_t seeds, walk_yields;

	(void)state;
	prev_flavor = t->rcu;
	hooked_flavor = *prev_flavor;
	hooked_flavor.read_unlock = hooked_read_unlock;
	t->rcu = &hooked_flavor;
	collector_thread = pthread_self();

	thr = ct_thread_attach(t);
	assert_non_null(thr);
	make_flows(thr, 0, FILL_FLOWS, 0);
	/* a wheel that needs its walk, and a yield at every group */
	need_walk(t, 1000);
	ct_table_get_stats(t, &st);
	seeds = st.gc_wheel_seeds;

	memset(&m, 0, sizeof(m));
	m.t = t;
	assert_int_equal(pthread_create(&th, NULL, maker_main, &m), 0);
	atomic_store(&hook_armed, true);
	assert_int_equal(ct_gc_step(thr, 10 * STRESS_SEC, 0, &res), 0);
	atomic_store(&hook_armed, false);
	atomic_store(&m.quit, true);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(atomic_load(&rounds_done), ROUNDS);
	assert_int_equal(m.made, ROUNDS * ROUND_FLOWS);
	assert_true(res.pass_done);
	assert_true(res.yields >= ROUNDS);
	walk_yields = res.yields;
	ct_table_get_stats(t, &st);
	assert_int_equal(st.gc_wheel_seeds, seeds + 1);   /* the one walk */

	/* the next step finds the wheel whole: no ring overflowed, so no
	 * walk is asked for */
	assert_int_equal(ct_gc_step(thr, 11 * STRESS_SEC, 0, &res), 0);
	ct_table_get_stats(t, &st);
	print_message("# %u connections made during a walk of %" PRIu64 " rows, %" PRIu64
		      " yields; walks: %" PRIu64 "\n", ROUNDS * ROUND_FLOWS, ct_table_rows(t),
		      walk_yields, st.gc_wheel_seeds - seeds);
	assert_int_equal(st.gc_wheel_seeds, seeds + 1);
	assert_false(atomic_load(&t->wheel_reseed));

	/* and each connection leaves at its time (UDP unreplied: 30 s) */
	assert_int_equal(ct_table_count(t), FILL_FLOWS + ROUNDS * ROUND_FLOWS);
	assert_int_equal(ct_gc_step(thr, 30 * STRESS_SEC - 1, 0, &res), 0);
	assert_int_equal(ct_table_count(t), FILL_FLOWS + ROUNDS * ROUND_FLOWS);
	assert_int_equal(ct_gc_step(thr, 30 * STRESS_SEC, 0, &res), 0);
	assert_int_equal(res.expired, FILL_FLOWS);
	assert_int_equal(ct_table_count(t), ROUNDS * ROUND_FLOWS);
	leave_at(t, thr, 10 * STRESS_SEC, ROUNDS * ROUND_FLOWS, seeds + 1);

	ct_thread_detach(thr);
	ct_table_destroy(t);
}

static void test_a_ring_half_full_is_emptied_in_a_moment_the_lock_is_free(void **state)
{
	struct ct_table *t = table_65536_rows();
	struct ct_thread *thr = ct_thread_attach(t);
	struct holder ho;
	struct ct_gc_result res;
	struct ct_stats st;
	const uint32_t half = CT_RING_SIZE / 2 + 2 * CT_RING_TRY;
	uint32_t made = 0;

	(void)state;
	assert_non_null(thr);
	assert_int_equal(ct_gc_step(thr, 0, 0, &res), 0);   /* seeded */
	ct_table_get_stats(t, &st);
	holder_start(&ho, t);

	hold(&ho);
	make_flows(thr, made, half, 0);
	made += half;
	assert_int_equal(ring_fill(thr), half);
	let_go(&ho);
	/* the lock free for a moment: the next try empties the ring */
	make_flows(thr, made, CT_RING_TRY, 0);
	made += CT_RING_TRY;
	assert_true(ring_fill(thr) < CT_RING_TRY);
	/* so the next hold has half a ring of room again */
	hold(&ho);
	make_flows(thr, made, half, 0);
	made += half;
	let_go(&ho);
	holder_stop(&ho);
	assert_false(atomic_load(&t->wheel_reseed));

	leave_at(t, thr, 0, made, st.gc_wheel_seeds);
	ct_thread_detach(thr);
	ct_table_destroy(t);
}

static void test_a_ring_filled_between_slices_of_a_walk_asks_for_no_second_walk(void **state)
{
	struct ct_table *t = table_65536_rows();
	struct ct_thread *thr = ct_thread_attach(t);
	struct ct_gc_result res;
	struct ct_stats st;
	uint64_t seeds;

	(void)state;
	assert_non_null(thr);
	make_flows(thr, 0, FILL_FLOWS, 0);
	/* a wheel that needs its walk, walked one slice of 1 ns: a group */
	need_walk(t, 0);
	ct_table_get_stats(t, &st);
	seeds = st.gc_wheel_seeds;
	assert_int_equal(ct_gc_step(thr, 0, 1, &res), 0);
	assert_false(res.pass_done);
	assert_false(t->wheel->seeded);
	/* more than a ring's worth between two slices, the lock free */
	make_flows(thr, FILL_FLOWS, CT_RING_SIZE + CT_RING_SIZE / 4, 0);
	assert_false(atomic_load(&t->wheel_reseed));
	do
		assert_int_equal(ct_gc_step(thr, 0, 0, &res), 0);
	while (!res.pass_done);
	ct_table_get_stats(t, &st);
	assert_int_equal(st.gc_wheel_seeds, seeds + 1);   /* the one walk */

	leave_at(t, thr, 0, FILL_FLOWS + CT_RING_SIZE + CT_RING_SIZE / 4, seeds + 1);
	ct_thread_detach(thr);
	ct_table_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_connections_made_during_a_seeding_walk_need_no_second_walk),
		cmocka_unit_test(test_a_ring_half_full_is_emptied_in_a_moment_the_lock_is_free),
		cmocka_unit_test(test_a_ring_filled_between_slices_of_a_walk_asks_for_no_second_walk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
