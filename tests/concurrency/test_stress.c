/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_stress.c - everything at once on one table, then the invariants.
 *
 * Each test runs epochs until its time budget (stress.h) is spent.  An
 * epoch (300 ms to 1.2 s, a quarter of the budget) creates a table with a tiny row array (64 rows, so it grows
 * online several times), short timeouts and an event handler that counts
 * NEW and DESTROY per zone, then runs, for a few hundred milliseconds:
 *  - two packet threads sending bursts (ct_process_burst) of random
 *    packets of the flow universe: UDP both ways, TCP handshakes, refused
 *    connections (RST/ACK: destroyed at once), aborts (RST: CLOSE) and
 *    ICMP errors quoting a flow (RELATED to a live entry);
 *    each checks its verdicts (zone, class) as it goes; on a QSBR table
 *    they sometimes go offline for a moment, as an idle poller must;
 *  - a collector: ct_gc_step() in a loop from its own thread with random
 *    budgets, and/or the library's collector thread (ct_gc_start/stop,
 *    toggled while packets flow), both on the virtual clock;
 *  - a control thread that flushes the table or one zone, destroys random
 *    batches of namespaces (synchronously or not, walk or sweep) and
 *    recreates them, sets marks and labels, changes settings, looks
 *    entries up and dumps the table, checking every entry it sees is one
 *    the test made; an unattached monitor polls counters and namespace
 *    stats; packet threads detach and attach again now and then.
 * Then it stops every thread and checks stress_check_quiesced().
 *
 * What the tests cannot see directly they see through invariants: a lost
 * or doubled entry breaks count = dump = slots or NEW - DESTROY = live; a
 * namespace teardown that misses an entry leaves one in a zone without
 * namespace; an entry read after it was freed shows up as an implausible
 * tuple (and, under ASan, as an error).
 */
#include "stress.h"

#include <sched.h>

#define EPOCH_MS 300

struct epoch {
	struct ct_table *t;
	struct stress_events ev;
	enum ct_rcu_flavor flavor;
	bool labels;                 /* entries have room for labels */
	bool gc_thread;              /* the library's collector thread */
	bool gc_step;                /* ct_gc_step from a thread of ours */
	uint64_t seed;
	_Atomic bool stop;
	_Atomic uint64_t bursts;
	_Atomic uint64_t bad_verdicts;
	_Atomic uint64_t bad_dumps;
	_Atomic uint64_t ns_destroyed;
	_Atomic uint64_t flushed;
	_Atomic uint64_t refused;    /* CT_VF_DESTROYED verdicts */
	_Atomic uint64_t related;    /* RELATED verdicts (ICMP errors) */
};

struct worker {
	struct epoch *e;
	uint64_t rng;
	pthread_t tid;
};

static bool stopping(struct epoch *e)
{
	return atomic_load_explicit(&e->stop, memory_order_relaxed);
}

/* A random packet: mostly creations and the next step of a handshake. */
static void random_packet(uint64_t *rng, struct ct_packet *p)
{
	unsigned f = stress_below(rng, STRESS_FLOWS);
	unsigned r = stress_below(rng, 16);
	enum stress_pkt k;

	if (stress_below(rng, 32) == 0) {
		k = SP_ICMP_UNREACH;
	} else if (stress_flow_l4(f) == IPPROTO_UDP) {
		k = r < 11 ? SP_UDP_ORIG : SP_UDP_REPLY;
	} else {
		static const enum stress_pkt tcp[16] = {
			SP_TCP_SYN, SP_TCP_SYN, SP_TCP_SYN, SP_TCP_SYN,
			SP_TCP_SYN, SP_TCP_SYNACK, SP_TCP_SYNACK, SP_TCP_ACK,
			SP_TCP_ACK, SP_TCP_ACK, SP_TCP_REFUSE, SP_TCP_REFUSE,
			SP_TCP_REFUSE, SP_TCP_RST, SP_TCP_RST, SP_TCP_SYN,
		};
		k = tcp[r];
	}
	stress_packet(p, f, k);
}

static void *packet_main(void *arg)
{
	struct worker *w = arg;
	struct epoch *e = w->e;
	struct ct_thread *thr = ct_thread_attach(e->t);
	struct ct_packet pkts[32];
	const struct ct_packet *pp[32];
	struct ct_verdict v[32];
	uint64_t n = 0;

	STRESS_REQUIRE(thr != NULL);
	for (int i = 0; i < 32; i++)
		pp[i] = &pkts[i];
	while (!stopping(e)) {
		unsigned cnt = 1 + stress_below(&w->rng, 32);
		ct_time_ns now;

		for (unsigned i = 0; i < cnt; i++) {
			random_packet(&w->rng, &pkts[i]);
			/* a handshake in one burst: SYN then its refusal */
			if (i + 1 < cnt && pkts[i].tuple.l4 == IPPROTO_TCP &&
			    pkts[i].u.tcp.flags == CT_TCP_SYN && stress_below(&w->rng, 2)) {
				long f = stress_flow_of(&pkts[i].tuple);
				stress_packet(&pkts[++i], (unsigned)f, SP_TCP_REFUSE);
			}
		}
		now = stress_advance(200000); /* 0.2 ms of virtual time */
		STRESS_REQUIRE(ct_process_burst(thr, pp, cnt, now, v) == 0);
		for (unsigned i = 0; i < cnt; i++) {
			if (v[i].zone != pkts[i].tuple.zone || v[i].cls > CT_V_DROP ||
			    ((v[i].flags & CT_VF_CREATED) && v[i].cls != CT_V_NEW))
				atomic_fetch_add(&e->bad_verdicts, 1);
			if (v[i].flags & CT_VF_DESTROYED)
				atomic_fetch_add_explicit(&e->refused, 1, memory_order_relaxed);
			if (v[i].cls == CT_V_RELATED)
				atomic_fetch_add_explicit(&e->related, 1, memory_order_relaxed);
		}
		if ((++n & 63) == 0 && e->flavor == CT_RCU_QSBR && stress_below(&w->rng, 4) == 0) {
			/* an idle poller goes offline, or grace periods stall */
			ct_thread_offline(thr);
			sched_yield();
			ct_thread_online(thr);
		}
		if ((n & 255) == 0 && stress_below(&w->rng, 2) == 0) {
			/* a thread that leaves and comes back: its counters,
			 * count delta and magazines go back to the table */
			ct_thread_detach(thr);
			thr = ct_thread_attach(e->t);
			STRESS_REQUIRE(thr != NULL);
		}
	}
	atomic_fetch_add(&e->bursts, n);
	ct_thread_detach(thr);
	return NULL;
}

static void *gc_main(void *arg)
{
	struct worker *w = arg;
	struct epoch *e = w->e;
	struct ct_thread *thr = ct_thread_attach(e->t);

	STRESS_REQUIRE(thr != NULL);
	while (!stopping(e)) {
		static const uint64_t budgets[4] = { 0, 20000, 200000, 1000000 };
		struct ct_gc_result r;
		int rc = ct_gc_step(thr, stress_now(), budgets[stress_below(&w->rng, 4)], &r);

		/* -EBUSY: the library's collector thread holds the collector */
		STRESS_REQUIRE(rc == 0 || rc == -EBUSY);
		ct_thread_quiescent(thr);
		if (stress_below(&w->rng, 8) == 0) {
			ct_thread_offline(thr);
			sched_yield();
			ct_thread_online(thr);
		}
	}
	ct_thread_detach(thr);
	return NULL;
}

/*
 * The read-only calls that take the table, not a thread, from a thread
 * that never attaches: counters, sizes and namespace queries while
 * namespaces come and go and the table grows.
 */
static void *monitor_main(void *arg)
{
	struct worker *w = arg;
	struct epoch *e = w->e;

	while (!stopping(e)) {
		struct timespec ts = { 0, (long)stress_below(&w->rng, 200000) };
		struct ct_stats st;

		ct_table_get_stats(e->t, &st);
		STRESS_REQUIRE(ct_table_count(e->t) < (1u << 30));
		STRESS_REQUIRE(ct_table_rows(e->t) >= 64);
		for (uint16_t z = 0; z <= STRESS_ZONES; z++) {
			if (ct_ns_get_stats(e->t, z, &st) == 0)
				STRESS_REQUIRE(st.count < (1u << 30));
			(void)ct_ns_exists(e->t, z);
		}
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static int dump_plausible_cb(const struct ct_conn_info *ci, void *arg)
{
	struct epoch *e = arg;

	if (!stress_ci_plausible(ci)) {
		stress_print_ci("dump", ci);
		atomic_fetch_add(&e->bad_dumps, 1);
	}
	return 0;
}

static void control_step(struct worker *w, struct ct_thread *thr, bool *alive)
{
	struct epoch *e = w->e;
	struct ct_table *t = e->t;
	ct_time_ns now = stress_advance(1000);
	unsigned op = stress_below(&w->rng, 64);

	if (op < 3) { /* flush everything, or one zone */
		int zone = op == 0 ? -1 : (int)stress_below(&w->rng, STRESS_ZONES + 1);
		STRESS_REQUIRE(ct_table_flush(thr, zone, now) >= 0);
		atomic_fetch_add(&e->flushed, 1);
	} else if (op < 9) { /* destroy a batch of namespaces */
		static const unsigned flag_sets[6] = {
			0, CT_NS_SYNC, CT_NS_WALK, CT_NS_SWEEP,
			CT_NS_SYNC | CT_NS_SWEEP, CT_NS_SYNC | CT_NS_WALK,
		};
		uint16_t ids[STRESS_ZONES];
		unsigned k = 0, want = 1 + stress_below(&w->rng, 4);
		unsigned first = stress_below(&w->rng, STRESS_ZONES);

		for (unsigned i = 0; i < STRESS_ZONES && k < want; i++) {
			uint16_t id = (uint16_t)(1 + (first + i) % STRESS_ZONES);
			if (alive[id])
				ids[k++] = id;
		}
		if (k) {
			unsigned flags = flag_sets[stress_below(&w->rng, 6)];
			STRESS_REQUIRE(ct_ns_destroy(thr, ids, k, now, flags) >= 0);
			for (unsigned j = 0; j < k; j++) {
				alive[ids[j]] = false;
				STRESS_REQUIRE(!ct_ns_exists(t, ids[j]));
			}
			atomic_fetch_add(&e->ns_destroyed, k);
		}
	} else if (op < 15) { /* bring namespaces back */
		for (uint16_t id = 1; id <= STRESS_ZONES; id++) {
			struct ct_settings s;

			if (alive[id] || stress_below(&w->rng, 2))
				continue;
			ct_table_get_settings(t, &s);
			/* some namespaces get a limit, so early drop has work */
			s.max = stress_below(&w->rng, 3) == 0 ? 64 : 0;
			STRESS_REQUIRE(ct_ns_create(t, id, &s) == 0);
			alive[id] = true;
		}
	} else if (op < 23) { /* dump, checking every entry */
		int zone = stress_below(&w->rng, 2) ? -1 :
			   (int)stress_below(&w->rng, STRESS_ZONES + 1);
		STRESS_REQUIRE(ct_table_dump(thr, zone, dump_plausible_cb, e) == 0);
	} else if (op < 31) { /* lookups and marks on random flows */
		for (int i = 0; i < 16; i++) {
			unsigned f = stress_below(&w->rng, STRESS_FLOWS);
			struct ct_tuple tu = stress_flow_tuple(f);
			struct ct_conn_info ci;

			if (ct_table_lookup(thr, &tu, &ci, NULL) == 1 &&
			    !stress_ci_plausible(&ci)) {
				stress_print_ci("lookup", &ci);
				atomic_fetch_add(&e->bad_dumps, 1);
			}
			STRESS_REQUIRE(ct_table_set_mark(thr, &tu, f, 0xffffffffu, now) >= 0);
			if (e->labels) {
				uint8_t lb[16] = { (uint8_t)f, (uint8_t)(f >> 8), 1 };
				STRESS_REQUIRE(ct_table_set_labels(thr, &tu, lb, now) >= 0);
			}
		}
	} else if (op < 35) { /* counters, read while everything runs */
		struct ct_stats st;

		ct_table_get_stats(t, &st);
		(void)ct_table_count(t);
		(void)ct_table_rows(t);
		for (uint16_t z = 0; z <= STRESS_ZONES; z++)
			(void)ct_ns_get_stats(t, z, &st);
	} else if (op < 36) { /* the collector thread comes and goes */
		if (e->gc_thread) {
			STRESS_REQUIRE(ct_gc_stop(t) == 0);
			STRESS_REQUIRE(ct_gc_start(t, stress_clock_fn, NULL) == 0);
		}
	} else if (op < 38) { /* new settings for a live namespace, zone 0
			       * (the table's own) included */
		uint16_t id = (uint16_t)stress_below(&w->rng, STRESS_ZONES + 1);
		struct ct_settings s;

		ct_table_get_settings(t, &s);

		if (id == 0 || alive[id])
			STRESS_REQUIRE(ct_ns_set_settings(t, id, &s) == 0);
	}
	ct_thread_quiescent(thr);
}

static void *control_main(void *arg)
{
	struct worker *w = arg;
	struct epoch *e = w->e;
	struct ct_thread *thr = ct_thread_attach(e->t);
	bool alive[STRESS_ZONES + 1];

	STRESS_REQUIRE(thr != NULL);
	for (int i = 0; i <= STRESS_ZONES; i++)
		alive[i] = true;
	while (!stopping(e)) {
		struct timespec ts = { 0, (long)stress_below(&w->rng, 300000) };

		control_step(w, thr, alive);
		/* pace the control plane; an idle QSBR thread goes offline */
		ct_thread_offline(thr);
		nanosleep(&ts, NULL);
		ct_thread_online(thr);
	}
	ct_thread_detach(thr);
	return NULL;
}

static void run_epoch(enum ct_rcu_flavor flavor, uint64_t seed, unsigned ms)
{
	struct epoch *e = calloc(1, sizeof(*e));
	struct ct_table_config cfg;
	struct ct_gc_policy pol;
	struct worker w[5];
	uint64_t rng = seed;
	unsigned nw = 0;

	assert_non_null(e);
	e->flavor = flavor;
	e->seed = seed;
	ct_table_config_default(&cfg);
	cfg.rcu = flavor;
	cfg.settings.buckets = 1;           /* 64 rows: it must grow online */
	stress_short_timeouts(&cfg.settings);
	/* a table maximum in some epochs: early drop and DROP verdicts */
	cfg.settings.max = stress_below(&rng, 3) == 0 ? 3000 : 0;
	cfg.labels = e->labels = stress_below(&rng, 2) == 0;
	assert_int_equal(ct_table_create(&cfg, &e->t), 0);
	ct_tsan_rcu_wrap(e->t);
	ct_table_set_event_handler(e->t, stress_count_event, &e->ev);
	for (uint16_t id = 1; id <= STRESS_ZONES; id++)
		assert_int_equal(ct_ns_create(e->t, id, NULL), 0);
	ct_gc_policy_default(&pol);
	pol.min_interval_ns = 1000000;
	/* yield at every row in some epochs: the collector's read-side
	 * section is cut into many short ones */
	pol.yield = stress_below(&rng, 2) ? CT_GC_YIELD_EVERY_ROW : CT_GC_YIELD_THROTTLED;
	/* due rows found by the wheel (the default: packet threads queue
	 * handles on their rings while the collector drains them) or by
	 * the scan of the bounds */
	pol.lock = stress_below(&rng, 2) ? CT_GC_LOCK_WHEEL : CT_GC_LOCK_DUE;
	ct_gc_set_policy(e->t, &pol);
	switch (stress_below(&rng, 3)) {
	case 0: e->gc_step = true; break;
	case 1: e->gc_thread = true; break;
	default: e->gc_step = e->gc_thread = true; break;
	}
	if (e->gc_thread)
		assert_int_equal(ct_gc_start(e->t, stress_clock_fn, NULL), 0);

	for (int i = 0; i < 2; i++) {
		w[nw] = (struct worker){ .e = e, .rng = stress_rand(&rng) | 1 };
		assert_int_equal(pthread_create(&w[nw].tid, NULL, packet_main, &w[nw]), 0);
		nw++;
	}
	w[nw] = (struct worker){ .e = e, .rng = stress_rand(&rng) | 1 };
	assert_int_equal(pthread_create(&w[nw].tid, NULL, control_main, &w[nw]), 0);
	nw++;
	if (e->gc_step) {
		w[nw] = (struct worker){ .e = e, .rng = stress_rand(&rng) | 1 };
		assert_int_equal(pthread_create(&w[nw].tid, NULL, gc_main, &w[nw]), 0);
		nw++;
	}
	w[nw] = (struct worker){ .e = e, .rng = stress_rand(&rng) | 1 };
	assert_int_equal(pthread_create(&w[nw].tid, NULL, monitor_main, &w[nw]), 0);
	nw++;

	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
	atomic_store(&e->stop, true);
	for (unsigned i = 0; i < nw; i++)
		pthread_join(w[i].tid, NULL);
	if (e->gc_thread)
		assert_int_equal(ct_gc_stop(e->t), 0);

	print_message("# %s epoch: %" PRIu64 " bursts, %" PRIu64 " rows, %" PRIu64
		      " resizes, %" PRIu64 " namespaces destroyed, %" PRIu64
		      " flushes, %" PRIu64 " refused, %" PRIu64 " related, gc %s%s\n",
		      flavor == CT_RCU_QSBR ? "qsbr" : "memb",
		      atomic_load(&e->bursts), ct_table_rows(e->t),
		      atomic_load(&e->t->resizes), atomic_load(&e->ns_destroyed),
		      atomic_load(&e->flushed), atomic_load(&e->refused),
		      atomic_load(&e->related),
		      e->gc_step ? "step " : "", e->gc_thread ? "thread" : "");
	STRESS_EQ(atomic_load(&e->bad_verdicts), 0, seed, "verdicts with a wrong zone or class");
	STRESS_EQ(atomic_load(&e->bad_dumps), 0, seed, "implausible entries while running");
	stress_check_quiesced(e->t, &e->ev, seed);
	ct_table_destroy(e->t);
	free(e);
}

static void run_for_budget(enum ct_rcu_flavor flavor)
{
	unsigned budget = stress_budget_ms(3000);
	uint64_t seed = stress_seed(), end = stress_mono_ms() + budget;
	unsigned epochs = 0;
	/* a few epochs per case: longer ones when the budget allows, so
	 * that a slow (sanitized) build still grows its tables */
	unsigned epoch_ms = budget / 4 < EPOCH_MS ? EPOCH_MS :
			    budget / 4 > 4 * EPOCH_MS ? 4 * EPOCH_MS : budget / 4;

	print_message("# CT_STRESS_SEED=0x%" PRIx64 " CT_STRESS_MS=%u\n", seed, budget);
	do {
		unsigned ms = budget < epoch_ms ? budget : epoch_ms;
		run_epoch(flavor, seed + epochs, ms);
		epochs++;
	} while (stress_mono_ms() < end);
	print_message("# %u epochs\n", epochs);
}

static void test_memb_table_keeps_its_invariants_under_packets_gc_flush_resize_and_ns_churn(void **state)
{
	(void)state;
	run_for_budget(CT_RCU_MEMB);
}

static void test_qsbr_table_keeps_its_invariants_under_packets_gc_flush_resize_and_ns_churn(void **state)
{
	(void)state;
	run_for_budget(CT_RCU_QSBR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memb_table_keeps_its_invariants_under_packets_gc_flush_resize_and_ns_churn),
		cmocka_unit_test(test_qsbr_table_keeps_its_invariants_under_packets_gc_flush_resize_and_ns_churn),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
