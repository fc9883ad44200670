/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_nat.c - NAT entries (two slots each) under many threads.
 *
 *  1. Both keys always findable during online resize.  Two threads make
 *     source-NATed UDP connections through ct_classify / ct_pending_nat /
 *     ct_pending_confirm into a table that starts at 64 rows, each to a
 *     NAT address of its own with no port range (so the port is kept and
 *     no two connections clash: every confirm must insert); a reader
 *     looks up published connections by their original tuple (found
 *     ORIGINAL) and by their translated reply tuple (found REPLY); a
 *     collector runs slices of the naive policies meanwhile.  Every
 *     published connection is found both ways, during and after; count =
 *     dump, occupied slots = 2 x dump, the audit holds, the source index
 *     holds every one of them.
 *  2. Churn: short-lived source NATs into a 4-address range with the
 *     exact port map, the same client source to many servers (so that
 *     find_appropriate_src walks the index while others link and unlink
 *     it), while a collector removes the expired ones and a control
 *     thread flushes the table now and then.  After a full pass far in
 *     the future: the table, the source index and the port map are empty.
 *  3. Confirm races: two threads released together classify the same
 *     first UDP packet and confirm it with the same source NAT; each
 *     round makes exactly one entry, and every confirm that did not
 *     insert merged into it (clash_resolve counts them) - or classified
 *     the winner's entry as TRACKED, having come after it.
 *
 * Under ThreadSanitizer (make test-tsan) the index's RCU lists, the
 * second slots' publication and the striped locks are checked for races.
 */
#include "stress.h"

#include <sched.h>

#include "ctrack/nat.h"
#include "nat/nat_priv.h"
#include "support/audit.h"

#define NAT_INSERTERS 2
#define NAT_PER_INSERTER (1u << 13)
#define NAT_ADDR0 0xc6336400u   /* 198.51.100.0 + inserter */

struct natrun {
	struct ct_table *t;
	_Atomic uint32_t published[NAT_INSERTERS];
	_Atomic bool stop;
	_Atomic uint64_t missing, lookups, refused;
	uint64_t deadline_ms;
};

struct natw {
	struct natrun *g;
	unsigned idx;
	uint64_t rng;
	pthread_t tid;
};

/* Connection i of inserter w: 10.(w + 50).x.y:(1024 + i) -> 192.0.2.1:53
 * (its port unique: with the port kept, so is its reply tuple) */
static struct ct_tuple nat_orig(unsigned w, uint32_t i)
{
	struct ct_tuple t;

	memset(&t, 0, sizeof(t));
	t.l3 = CT_L3_IPV4;
	t.l4 = IPPROTO_UDP;
	t.src.ip4 = htonl(0x0a000000u | (50u + w) << 16 | (i & 0xffffu));
	t.dst.ip4 = htonl(STRESS_SERVER);
	t.sport = (uint16_t)(1024 + i);
	t.dport = 53;
	return t;
}

/* Its reply: the port kept, the source the inserter's NAT address. */
static struct ct_tuple nat_reply(unsigned w, uint32_t i)
{
	struct ct_tuple o = nat_orig(w, i), r = ts_reverse(&o);

	r.dst.ip4 = htonl(NAT_ADDR0 + 1 + w);
	return r;
}

static struct ct_nat_range one_addr(uint32_t a)
{
	struct ct_nat_range r;

	memset(&r, 0, sizeof(r));
	r.flags = CT_NAT_RANGE_MAP_IPS;
	r.min_addr.ip4 = r.max_addr.ip4 = htonl(a);
	return r;
}

static void *ins_main(void *arg)
{
	struct natw *w = arg;
	struct natrun *g = w->g;
	struct ct_thread *thr = ct_thread_attach(g->t);
	struct ct_nat_range r = one_addr(NAT_ADDR0 + 1 + w->idx);
	uint32_t next = 0;

	STRESS_REQUIRE(thr != NULL);
	while (next < NAT_PER_INSERTER && !atomic_load(&g->stop) &&
	       stress_mono_ms() < g->deadline_ms) {
		struct ct_packet p;
		struct ct_tuple o = nat_orig(w->idx, next);
		struct ct_classified cl;
		struct ct_nat_binding b;
		int rc;

		ts_packet_of(&p, &o);
		p.l3_len = 48;
		p.l4_len = 28;
		STRESS_REQUIRE(ct_classify(thr, &p, stress_advance(1000), &cl) == 0);
		STRESS_REQUIRE(cl.cls == CT_CLASS_PENDING);
		STRESS_REQUIRE(ct_pending_nat(thr, cl.pending, &r, CT_NAT_MANIP_SRC) == CT_NAT_BOUND);
		rc = ct_pending_confirm(thr, cl.pending, &b);
		if (rc == -ENOSPC) {
			/* growth lagging behind (test_resize.c says why): again */
			atomic_fetch_add(&g->refused, 1);
			continue;
		}
		STRESS_REQUIRE(rc == CT_CONFIRM_INSERTED);
		{
			struct ct_tuple want = nat_reply(w->idx, next);

			STRESS_REQUIRE(ct_tuple_equal(&b.reply, &want));
		}
		next++;
		if ((next & 63) == 0 || next == NAT_PER_INSERTER)
			atomic_store_explicit(&g->published[w->idx], next, memory_order_release);
		ct_thread_quiescent(thr);
	}
	atomic_store_explicit(&g->published[w->idx], next, memory_order_release);
	ct_thread_detach(thr);
	return NULL;
}

static void *look_main(void *arg)
{
	struct natw *w = arg;
	struct natrun *g = w->g;
	struct ct_thread *thr = ct_thread_attach(g->t);
	uint64_t n = 0;

	STRESS_REQUIRE(thr != NULL);
	while (!atomic_load(&g->stop)) {
		unsigned ins = stress_below(&w->rng, NAT_INSERTERS);
		uint32_t pub = atomic_load_explicit(&g->published[ins], memory_order_acquire);
		struct ct_tuple o, r;
		enum ct_dir d;
		uint32_t i;

		if (!pub) {
			sched_yield();
			continue;
		}
		i = stress_recent(&w->rng, pub);
		o = nat_orig(ins, i);
		r = nat_reply(ins, i);
		if (ct_table_lookup(thr, &o, NULL, &d) != 1 || d != CT_DIR_ORIGINAL)
			atomic_fetch_add(&g->missing, 1);
		if (ct_table_lookup(thr, &r, NULL, &d) != 1 || d != CT_DIR_REPLY)
			atomic_fetch_add(&g->missing, 1);
		n++;
		ct_thread_quiescent(thr);
	}
	atomic_fetch_add(&g->lookups, n);
	ct_thread_detach(thr);
	return NULL;
}

static void *gc_main(void *arg)
{
	struct natw *w = arg;
	struct natrun *g = w->g;
	struct ct_thread *thr = ct_thread_attach(g->t);

	STRESS_REQUIRE(thr != NULL);
	while (!atomic_load(&g->stop)) {
		struct ct_gc_result res;

		STRESS_REQUIRE(ct_gc_step(thr, stress_now(), 50000 + stress_below(&w->rng, 2000000),
					  &res) == 0);
		ct_thread_quiescent(thr);
	}
	ct_thread_detach(thr);
	return NULL;
}

static void resize_once(enum ct_rcu_flavor flavor, uint64_t seed, uint64_t deadline_ms)
{
	struct natrun *g = calloc(1, sizeof(*g));
	struct natw w[NAT_INSERTERS + 2];
	struct ct_thread *thr;
	struct ts_audit a;
	uint64_t rng = seed, inserted = 0, dumped = 0, indexed, keys;
	unsigned nw = 0;

	assert_non_null(g);
	g->deadline_ms = deadline_ms;
	g->t = stress_growing_table(flavor, true);
	for (unsigned i = 0; i < NAT_INSERTERS; i++, nw++) {
		w[nw] = (struct natw){ .g = g, .idx = i, .rng = stress_rand(&rng) | 1 };
		assert_int_equal(pthread_create(&w[nw].tid, NULL, ins_main, &w[nw]), 0);
	}
	w[nw] = (struct natw){ .g = g, .rng = stress_rand(&rng) | 1 };
	assert_int_equal(pthread_create(&w[nw].tid, NULL, look_main, &w[nw]), 0);
	nw++;
	w[nw] = (struct natw){ .g = g, .rng = stress_rand(&rng) | 1 };
	assert_int_equal(pthread_create(&w[nw].tid, NULL, gc_main, &w[nw]), 0);
	nw++;
	for (unsigned i = 0; i < NAT_INSERTERS; i++)
		pthread_join(w[i].tid, NULL);
	atomic_store(&g->stop, true);
	for (unsigned i = NAT_INSERTERS; i < nw; i++)
		pthread_join(w[i].tid, NULL);
	print_message("# nat %s: %u + %u connections, %" PRIu64 " rows, %" PRIu64
		      " resizes, %" PRIu64 " lookups, %" PRIu64 " refused (row full)\n",
		      flavor == CT_RCU_QSBR ? "qsbr" : "memb",
		      atomic_load(&g->published[0]), atomic_load(&g->published[1]),
		      ct_table_rows(g->t), atomic_load(&g->t->resizes),
		      atomic_load(&g->lookups), atomic_load(&g->refused));
	STRESS_EQ(atomic_load(&g->missing), 0, seed, "published keys a lookup did not find");
	thr = ct_thread_attach(g->t);
	assert_non_null(thr);
	for (unsigned i = 0; i < NAT_INSERTERS; i++) {
		uint32_t pub = atomic_load(&g->published[i]);

		inserted += pub;
		for (uint32_t k = 0; k < pub; k++) {
			struct ct_tuple o = nat_orig(i, k), r = nat_reply(i, k);

			if (ct_table_lookup(thr, &o, NULL, NULL) != 1 ||
			    ct_table_lookup(thr, &r, NULL, NULL) != 1)
				STRESS_EQ(0, 1, seed, "a confirmed connection is gone");
		}
	}
	assert_int_equal(ct_table_dump(thr, -1, stress_count_cb, &dumped), 0);
	STRESS_EQ(dumped, inserted, seed, "dump vs confirmed");
	STRESS_EQ(ct_table_count(g->t), dumped, seed, "count vs dump");
	STRESS_EQ(stress_slots_used(g->t), 2 * dumped, seed, "slots vs 2 x dump");
	ct_nat_table_census(g->t, &indexed, &keys);
	STRESS_EQ(indexed, dumped, seed, "source index vs dump");
	ts_audit(thr, TS_AUDIT_TABLE, &a);
	if (a.violations)
		fail_msg("audit: %s (seed 0x%" PRIx64 ")", a.first, seed);
	ct_thread_detach(thr);
	ct_table_destroy(g->t);
	free(g);
}

static void test_both_keys_stay_findable_while_nat_entries_grow_the_table(void **state)
{
	unsigned budget = stress_budget_ms(3000);
	uint64_t seed = stress_seed(), end = stress_mono_ms() + budget;
	unsigned rounds = 0;

	(void)state;
	print_message("# CT_STRESS_SEED=0x%" PRIx64 " CT_STRESS_MS=%u\n", seed, budget);
	do
		resize_once(rounds & 1 ? CT_RCU_QSBR : CT_RCU_MEMB, seed + rounds, end);
	while (++rounds < 2 || stress_mono_ms() < end);
}

/* ---- 2: churn ------------------------------------------------------ */

struct churn {
	struct ct_table *t;
	_Atomic bool stop;
	_Atomic uint64_t made, flushes;
	uint64_t deadline_ms;
};

struct churnw {
	struct churn *c;
	unsigned idx;
	uint64_t rng;
	pthread_t tid;
};

static void *churn_ins(void *arg)
{
	struct churnw *w = arg;
	struct churn *c = w->c;
	struct ct_thread *thr = ct_thread_attach(c->t);
	struct ct_nat_range r;
	uint64_t n = 0;

	STRESS_REQUIRE(thr != NULL);
	memset(&r, 0, sizeof(r));
	r.flags = CT_NAT_RANGE_MAP_IPS | CT_NAT_RANGE_PROTO_SPECIFIED;
	r.min_addr.ip4 = htonl(NAT_ADDR0 + 10);
	r.max_addr.ip4 = htonl(NAT_ADDR0 + 13);
	r.min_proto = 20000;
	r.max_proto = 20999;
	while (!atomic_load(&c->stop) && stress_mono_ms() < c->deadline_ms) {
		struct ct_packet p;
		struct ct_tuple o;
		struct ct_classified cl;

		/* 16 client sources, each to many servers: the index's
		 * chains are walked while others change them */
		memset(&o, 0, sizeof(o));
		o.l3 = CT_L3_IPV4;
		o.l4 = IPPROTO_UDP;
		o.src.ip4 = htonl(0x0a630000u | (w->idx << 8) | stress_below(&w->rng, 16));
		o.dst.ip4 = htonl(0xcb000000u | stress_below(&w->rng, 1u << 16));
		o.sport = (uint16_t)(5000 + stress_below(&w->rng, 4));
		o.dport = 53;
		ts_packet_of(&p, &o);
		p.l3_len = 48;
		STRESS_REQUIRE(ct_classify(thr, &p, stress_advance(200000), &cl) == 0);
		if (cl.cls != CT_CLASS_PENDING)
			continue;
		if (stress_below(&w->rng, 8) == 0) {
			ct_pending_drop(thr, cl.pending);
			continue;
		}
		(void)ct_pending_nat(thr, cl.pending, &r, CT_NAT_MANIP_SRC);
		if (ct_pending_confirm(thr, cl.pending, NULL) >= 0)
			n++;
		ct_thread_quiescent(thr);
	}
	atomic_fetch_add(&c->made, n);
	ct_thread_detach(thr);
	return NULL;
}

static void *churn_gc(void *arg)
{
	struct churnw *w = arg;
	struct churn *c = w->c;
	struct ct_thread *thr = ct_thread_attach(c->t);

	STRESS_REQUIRE(thr != NULL);
	while (!atomic_load(&c->stop)) {
		struct ct_gc_result res;

		int rc = ct_gc_step(thr, stress_now(), 1000000, &res);

		/* -EBUSY: a packet thread held the collector's lock for a
		 * moment to hand its due handles to the wheel (table/due.c);
		 * the next step runs.  Anything else is wrong. */
		STRESS_REQUIRE(rc == 0 || rc == -EBUSY);
		if (stress_below(&w->rng, 64) == 0) {
			(void)ct_table_flush(thr, -1, stress_now());
			atomic_fetch_add(&c->flushes, 1);
		}
		ct_thread_quiescent(thr);
	}
	ct_thread_detach(thr);
	return NULL;
}

static void test_index_and_port_map_follow_churn_and_end_empty(void **state)
{
	struct churn *c = calloc(1, sizeof(*c));
	struct churnw w[3];
	struct ct_table_config cfg;
	struct ct_thread *thr;
	struct ts_audit a;
	struct ct_gc_result res;
	unsigned budget = stress_budget_ms(3000);
	uint64_t seed = stress_seed(), rng = seed, indexed, keys;

	(void)state;
	assert_non_null(c);
	print_message("# CT_STRESS_SEED=0x%" PRIx64 " CT_STRESS_MS=%u\n", seed, budget);
	c->deadline_ms = stress_mono_ms() + budget;
	ct_table_config_default(&cfg);
	cfg.nat = true;
	cfg.nat_exact_ports = true;
	cfg.settings.buckets = 64;
	cfg.settings.checksum = 0;
	cfg.settings.udp_timeout = 1;
	assert_int_equal(ct_table_create(&cfg, &c->t), 0);
	ct_tsan_rcu_wrap(c->t);
	for (unsigned i = 0; i < 2; i++) {
		w[i] = (struct churnw){ .c = c, .idx = i, .rng = stress_rand(&rng) | 1 };
		assert_int_equal(pthread_create(&w[i].tid, NULL, churn_ins, &w[i]), 0);
	}
	w[2] = (struct churnw){ .c = c, .rng = stress_rand(&rng) | 1 };
	assert_int_equal(pthread_create(&w[2].tid, NULL, churn_gc, &w[2]), 0);
	for (unsigned i = 0; i < 2; i++)
		pthread_join(w[i].tid, NULL);
	atomic_store(&c->stop, true);
	pthread_join(w[2].tid, NULL);
	thr = ct_thread_attach(c->t);
	assert_non_null(thr);
	ts_audit(thr, TS_AUDIT_TABLE, &a);
	if (a.violations)
		fail_msg("audit: %s (seed 0x%" PRIx64 ")", a.first, seed);
	ct_nat_table_census(c->t, &indexed, &keys);
	STRESS_EQ(indexed, a.entries, seed, "source index vs the table");
	assert_int_equal(ct_gc_step(thr, stress_now() + 3600 * STRESS_SEC, 0, &res), 0);
	print_message("# churn: %" PRIu64 " confirmed, %" PRIu64 " flushes\n",
		      atomic_load(&c->made), atomic_load(&c->flushes));
	STRESS_EQ(ct_table_count(c->t), 0, seed, "entries after the last pass");
	STRESS_EQ(stress_slots_used(c->t), 0, seed, "slots after the last pass");
	ct_nat_table_census(c->t, &indexed, &keys);
	STRESS_EQ(indexed, 0, seed, "source index after the last pass");
	STRESS_EQ(keys, 0, seed, "port map keys after the last pass");
	ct_thread_detach(thr);
	ct_table_destroy(c->t);
	free(c);
}

/* ---- 3: confirm races ---------------------------------------------- */

struct race {
	struct ct_table *t;
	_Atomic unsigned arrived, sense;
	_Atomic uint32_t round;
	uint32_t rounds;
	_Atomic uint64_t inserted, merged, tracked, other;
	uint64_t deadline_ms;
};

struct racew {
	struct race *r;
	unsigned idx;
	pthread_t tid;
};

static void race_barrier(struct race *r, unsigned *local)
{
	*local = !*local;
	if (atomic_fetch_add(&r->arrived, 1) == 1) {
		atomic_store(&r->arrived, 0);
		atomic_store(&r->sense, *local);
	} else {
		while (atomic_load(&r->sense) != *local)
			;
	}
}

static void *race_main(void *arg)
{
	struct racew *w = arg;
	struct race *r = w->r;
	struct ct_thread *thr = ct_thread_attach(r->t);
	struct ct_nat_range nr = one_addr(NAT_ADDR0 + 20);
	unsigned sense = 0;

	STRESS_REQUIRE(thr != NULL);
	for (uint32_t k = 0; k < r->rounds; k++) {
		struct ct_packet p;
		struct ct_tuple o;
		struct ct_classified cl;
		int rc;

		memset(&o, 0, sizeof(o));
		o.l3 = CT_L3_IPV4;
		o.l4 = IPPROTO_UDP;
		/* a port of its own each round: with the port kept, a reply
		 * tuple of its own too */
		o.src.ip4 = htonl(0x0a640000u | k);
		o.dst.ip4 = htonl(STRESS_SERVER);
		o.sport = (uint16_t)(4000 + k);
		o.dport = 53;
		ts_packet_of(&p, &o);
		p.l3_len = 48;
		race_barrier(r, &sense);
		STRESS_REQUIRE(ct_classify(thr, &p, 1000 * STRESS_SEC, &cl) == 0);
		if (cl.cls == CT_CLASS_TRACKED) {
			atomic_fetch_add(&r->tracked, 1);
		} else {
			STRESS_REQUIRE(cl.cls == CT_CLASS_PENDING);
			STRESS_REQUIRE(ct_pending_nat(thr, cl.pending, &nr, CT_NAT_MANIP_SRC) >= 0);
			rc = ct_pending_confirm(thr, cl.pending, NULL);
			if (rc == CT_CONFIRM_INSERTED)
				atomic_fetch_add(&r->inserted, 1);
			else if (rc == CT_CONFIRM_MERGED)
				atomic_fetch_add(&r->merged, 1);
			else
				atomic_fetch_add(&r->other, 1);
		}
		ct_thread_quiescent(thr);
	}
	ct_thread_detach(thr);
	return NULL;
}

static void test_racing_confirms_of_one_connection_make_one_entry(void **state)
{
	struct race *r = calloc(1, sizeof(*r));
	struct racew w[2];
	struct ct_table_config cfg;
	struct ct_stats st;
	uint64_t seed = stress_seed();

	(void)state;
	assert_non_null(r);
	r->rounds = 2000;
	ct_table_config_default(&cfg);
	cfg.nat = true;
	cfg.settings.checksum = 0;
	cfg.settings.udp_timeout = 36000;
	assert_int_equal(ct_table_create(&cfg, &r->t), 0);
	ct_tsan_rcu_wrap(r->t);
	for (unsigned i = 0; i < 2; i++) {
		w[i] = (struct racew){ .r = r, .idx = i };
		assert_int_equal(pthread_create(&w[i].tid, NULL, race_main, &w[i]), 0);
	}
	for (unsigned i = 0; i < 2; i++)
		pthread_join(w[i].tid, NULL);
	ct_table_get_stats(r->t, &st);
	print_message("# races: %" PRIu64 " inserted, %" PRIu64 " merged, %" PRIu64
		      " came after the winner\n", atomic_load(&r->inserted),
		      atomic_load(&r->merged), atomic_load(&r->tracked));
	STRESS_EQ(atomic_load(&r->other), 0, seed, "confirms neither inserted nor merged");
	STRESS_EQ(atomic_load(&r->inserted), r->rounds, seed, "one insert per round");
	STRESS_EQ(atomic_load(&r->merged) + atomic_load(&r->tracked), r->rounds, seed,
		  "the other thread merged or came after");
	STRESS_EQ(st.clash_resolve, atomic_load(&r->merged), seed, "clash_resolve vs merges");
	STRESS_EQ(ct_table_count(r->t), r->rounds, seed, "entries vs rounds");
	ct_table_destroy(r->t);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_both_keys_stay_findable_while_nat_entries_grow_the_table),
		cmocka_unit_test(test_index_and_port_map_follow_churn_and_end_empty),
		cmocka_unit_test(test_racing_confirms_of_one_connection_make_one_entry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
