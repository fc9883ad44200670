/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_resize.c - online resize against readers and the collector.
 *
 * A table that starts at 64 rows is filled with distinct UDP flows by two
 * threads until it has grown many times.  Entries never expire here
 * (timeouts of hours of virtual time), so every flow once inserted must
 * be found until the end.  Meanwhile:
 *  - a lookup thread looks up flows the inserters have already published
 *    (each inserter publishes its count with a release store after the
 *    burst that created them) and must find every one, from either
 *    direction: an entry is stored in the next generation before it
 *    leaves the old one, and a reader that misses in the old looks in the
 *    next (table/resize.c, table/member.c);
 *  - a collector thread runs ct_gc_step() in slices of 50 us to 3 ms,
 *    visiting and locking every row and offering to yield after each one
 *    (the naive policies, so a slice is long and full of read-side gaps).
 *    A resize that completes during a slice retires the generation the
 *    slice walks, and after a grace period its rows are unmapped: the
 *    collector must not touch it after a yield.
 * At the end every published flow is found, and count = dump = slots.
 *
 * Growth is not instantaneous: inserts never wait for it, and migration
 * runs under one lock that a preempted thread can hold for a while (this
 * machine has two cores for five threads).  A row that meanwhile reaches
 * max_chain refuses new entries (CT_PR_CHAIN_TOO_LONG), as the contract
 * says; the inserter sends such a flow again, as a client would, and the
 * test reports how often that happened.  Any other refusal fails.
 */
#include "stress.h"

#include <sched.h>

#define INSERTERS 2
#define READERS 1
/* flows per inserter and table: 2^17 entries make 2^15 rows (9 resizes) */
#define PER_INSERTER (1u << 16)

struct grow {
	struct ct_table *t;
	_Atomic uint32_t published[INSERTERS];
	_Atomic bool stop;
	_Atomic uint64_t missing;
	_Atomic uint64_t lookups;
	_Atomic uint64_t gc_slices;
	_Atomic uint64_t chain_drops;
	uint64_t deadline_ms;
};

struct grow_worker {
	struct grow *g;
	unsigned idx;
	uint64_t rng;
	pthread_t tid;
};

/* Flow i of inserter w: 10.(w + 100).(i >> 8).(i & 255):(1024 + i) -> 192.0.2.1:53 */
static struct ct_tuple grow_tuple(unsigned w, uint32_t i)
{
	struct ct_tuple t;

	memset(&t, 0, sizeof(t));
	t.l3 = CT_L3_IPV4;
	t.l4 = IPPROTO_UDP;
	t.src.ip4 = htonl(0x0a000000u | (100u + w) << 16 | (i & 0xffffu));
	t.dst.ip4 = htonl(STRESS_SERVER);
	t.sport = (uint16_t)(1024 + (i >> 16));
	t.dport = 53;
	return t;
}

static void *inserter_main(void *arg)
{
	struct grow_worker *w = arg;
	struct grow *g = w->g;
	struct ct_thread *thr = ct_thread_attach(g->t);
	struct ct_packet pkts[CT_BURST_MAX];
	const struct ct_packet *pp[CT_BURST_MAX];
	struct ct_verdict v[CT_BURST_MAX];
	uint32_t next = 0;

	STRESS_REQUIRE(thr != NULL);
	for (int i = 0; i < CT_BURST_MAX; i++) {
		pp[i] = &pkts[i];
		memset(&pkts[i], 0, sizeof(pkts[i]));
		pkts[i].kind = CT_PKT_TRACKABLE;
		pkts[i].l3_len = 48;
		pkts[i].l4_len = 28;
	}
	while (next < PER_INSERTER && !atomic_load(&g->stop) &&
	       stress_mono_ms() < g->deadline_ms) {
		unsigned n = 0;

		while (n < CT_BURST_MAX && next + n < PER_INSERTER) {
			pkts[n].tuple = grow_tuple(w->idx, next + n);
			n++;
		}
		STRESS_REQUIRE(ct_process_burst(thr, pp, n, stress_advance(1000), v) == 0);
		/* publish the flows created so far, in order; a flow refused
		 * because its row is full is sent again (see the file comment) */
		for (unsigned i = 0; i < n; i++, next++) {
			if (v[i].cls == CT_V_NEW || v[i].cls == CT_V_ESTABLISHED)
				continue;
			STRESS_REQUIRE(v[i].cls == CT_V_DROP &&
				       v[i].reason == CT_PR_CHAIN_TOO_LONG);
			atomic_fetch_add(&g->chain_drops, 1);
			break;
		}
		atomic_store_explicit(&g->published[w->idx], next, memory_order_release);
	}
	ct_thread_detach(thr);
	return NULL;
}

static void *reader_main(void *arg)
{
	struct grow_worker *w = arg;
	struct grow *g = w->g;
	struct ct_thread *thr = ct_thread_attach(g->t);
	uint64_t n = 0;

	STRESS_REQUIRE(thr != NULL);
	while (!atomic_load(&g->stop)) {
		unsigned ins = stress_below(&w->rng, INSERTERS);
		uint32_t pub = atomic_load_explicit(&g->published[ins], memory_order_acquire);
		struct ct_tuple tu;

		if (!pub) {
			sched_yield();
			continue;
		}
		/* mostly recent flows: they sit in rows being migrated */
		uint32_t i = stress_recent(&w->rng, pub);
		tu = grow_tuple(ins, i);
		if (stress_below(&w->rng, 2))
			tu = ts_reverse(&tu);
		if (ct_table_lookup(thr, &tu, NULL, NULL) != 1)
			atomic_fetch_add(&g->missing, 1);
		n++;
		ct_thread_quiescent(thr);
	}
	atomic_fetch_add(&g->lookups, n);
	ct_thread_detach(thr);
	return NULL;
}

static void *slicer_main(void *arg)
{
	struct grow_worker *w = arg;
	struct grow *g = w->g;
	struct ct_thread *thr = ct_thread_attach(g->t);
	uint64_t n = 0;

	STRESS_REQUIRE(thr != NULL);
	while (!atomic_load(&g->stop)) {
		struct ct_gc_result r;

		STRESS_REQUIRE(ct_gc_step(thr, stress_now(), 50000 + stress_below(&w->rng, 3000000), &r) == 0);
		STRESS_REQUIRE(r.expired == 0);
		ct_thread_quiescent(thr);
		n++;
	}
	atomic_fetch_add(&g->gc_slices, n);
	ct_thread_detach(thr);
	return NULL;
}

static void grow_once(enum ct_rcu_flavor flavor, uint64_t seed, uint64_t deadline_ms)
{
	struct grow *g = calloc(1, sizeof(*g));
	struct grow_worker w[INSERTERS + READERS + 1];
	struct ct_thread *thr;
	uint64_t rng = seed, inserted = 0, dumped = 0;
	unsigned nw = 0;

	assert_non_null(g);
	g->deadline_ms = deadline_ms;
	g->t = stress_growing_table(flavor, false);

	for (unsigned i = 0; i < INSERTERS; i++, nw++) {
		w[nw] = (struct grow_worker){ .g = g, .idx = i, .rng = stress_rand(&rng) | 1 };
		assert_int_equal(pthread_create(&w[nw].tid, NULL, inserter_main, &w[nw]), 0);
	}
	for (unsigned i = 0; i < READERS; i++, nw++) {
		w[nw] = (struct grow_worker){ .g = g, .rng = stress_rand(&rng) | 1 };
		assert_int_equal(pthread_create(&w[nw].tid, NULL, reader_main, &w[nw]), 0);
	}
	w[nw] = (struct grow_worker){ .g = g, .rng = stress_rand(&rng) | 1 };
	assert_int_equal(pthread_create(&w[nw].tid, NULL, slicer_main, &w[nw]), 0);
	nw++;

	for (unsigned i = 0; i < INSERTERS; i++)
		pthread_join(w[i].tid, NULL);
	atomic_store(&g->stop, true);
	for (unsigned i = INSERTERS; i < nw; i++)
		pthread_join(w[i].tid, NULL);

	print_message("# %s: %u + %u flows, %" PRIu64 " rows, %" PRIu64 " resizes, %"
		      PRIu64 " lookups, %" PRIu64 " collector slices, %" PRIu64
		      " refused (row full)\n",
		      flavor == CT_RCU_QSBR ? "qsbr" : "memb",
		      atomic_load(&g->published[0]), atomic_load(&g->published[1]),
		      ct_table_rows(g->t), atomic_load(&g->t->resizes),
		      atomic_load(&g->lookups), atomic_load(&g->gc_slices),
		      atomic_load(&g->chain_drops));
	STRESS_EQ(atomic_load(&g->missing), 0, seed, "published flows a lookup did not find");

	thr = ct_thread_attach(g->t);
	assert_non_null(thr);
	for (unsigned i = 0; i < INSERTERS; i++) {
		uint32_t pub = atomic_load(&g->published[i]);
		inserted += pub;
		for (uint32_t k = 0; k < pub; k++) {
			struct ct_tuple tu = grow_tuple(i, k);
			if (ct_table_lookup(thr, &tu, NULL, NULL) != 1)
				STRESS_EQ(0, 1, seed, "an inserted flow is gone");
		}
	}
	assert_int_equal(ct_table_dump(thr, -1, stress_count_cb, &dumped), 0);
	STRESS_EQ(ct_table_count(g->t), dumped, seed, "count vs dump");
	STRESS_EQ(stress_slots_used(g->t), dumped, seed, "occupied slots vs dump");
	/* flows after a refused one in the last burst exist unpublished */
	assert_true(dumped >= inserted && dumped <= inserted + INSERTERS * CT_BURST_MAX);
	ct_thread_detach(thr);
	ct_table_destroy(g->t);
	free(g);
}

static void grow_for_budget(enum ct_rcu_flavor flavor)
{
	unsigned budget = stress_budget_ms(3000);
	uint64_t seed = stress_seed(), end = stress_mono_ms() + budget;
	unsigned rounds = 0;

	print_message("# CT_STRESS_SEED=0x%" PRIx64 " CT_STRESS_MS=%u\n", seed, budget);
	do {
		grow_once(flavor, seed + rounds, end);
		rounds++;
	} while (stress_mono_ms() < end);
}

static void test_memb_collector_slices_and_lookups_survive_online_resize(void **state)
{
	(void)state;
	grow_for_budget(CT_RCU_MEMB);
}

static void test_qsbr_collector_slices_and_lookups_survive_online_resize(void **state)
{
	(void)state;
	grow_for_budget(CT_RCU_QSBR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_memb_collector_slices_and_lookups_survive_online_resize),
		cmocka_unit_test(test_qsbr_collector_slices_and_lookups_survive_online_resize),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
