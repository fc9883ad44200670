/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_expire.c - the collector (src/expire/) and the due index it reads
 * (src/table/due.c, wheel.c): expiry in passes and slices under every lock
 * policy, the wheel's handles and rings, slot bounds, early drop after a
 * refused insert.
 *
 * The fixture and packet builders are table_fixture.h's; every test of
 * the core ran in one file, test_table.c, before it was split along src/.
 */
#include "table_fixture.h"

static void test_collector_expires_due_entries_and_reports_destroy(void **state)
{
	struct fixture *f = setup_default();
	struct ct_verdict v;
	struct ct_gc_result r;

	(void)state;
	for (uint16_t i = 0; i < 100; i++) {
		struct ct_packet p = udp4(0x0a000001, 0x0a000002, (uint16_t)(1000 + i), 53);
		/* half of them at t=0 (due at 30 s), half at t=20 s (due at 50 s) */
		ct_process(f->thr, &p, i < 50 ? 0 : 20 * SEC, &v);
	}
	f->log.n = 0;
	assert_int_equal(ct_gc_step(f->thr, 29 * SEC, 0, &r), 0);
	assert_int_equal(r.expired, 0);
	assert_true(r.pass_done);
	assert_int_equal(ct_table_count(f->t), 100);
	assert_int_equal(ct_gc_step(f->thr, 30 * SEC, 0, &r), 0);
	assert_int_equal(r.expired, 50);
	assert_int_equal(ct_table_count(f->t), 50);
	assert_int_equal(f->log.n, 50);
	assert_int_equal(f->log.ev[0].type, CT_EV_DESTROY);
	assert_int_equal(f->log.ev[0].destroy_cause, CT_DESTROY_TIMEOUT);
	/* the earliest due time it saw is the second batch's */
	assert_true(r.next_due <= 50 * SEC);
	assert_int_equal(ct_gc_step(f->thr, 50 * SEC, 0, &r), 0);
	assert_int_equal(r.expired, 50);
	assert_int_equal(ct_table_count(f->t), 0);
	teardown_f(f);
}

static void test_idle_collector_pass_locks_no_row(void **state)
{
	struct fixture *f = setup_default();
	struct ct_verdict v;
	struct ct_gc_result r;

	(void)state;
	for (uint16_t i = 0; i < 1000; i++) {
		struct ct_packet p = udp4(0x0a000001 + i, 0x0a000002, 1000, 53);
		ct_process(f->thr, &p, 0, &v);
	}
	/* first pass at 10 s: bounds are exact after insert, nothing due */
	assert_int_equal(ct_gc_step(f->thr, 10 * SEC, 0, &r), 0);
	assert_int_equal(r.rows_locked, 0);
	assert_int_equal(r.expired, 0);
	assert_true(r.groups_skipped > 0);
	teardown_f(f);
}

static void test_every_lock_policy_expires_the_same_entries(void **state)
{
	/* the naive policies kept for the benchmarks must still be
	 * collectors: same entries expired at the same time */
	static const enum ct_gc_lock_policy pols[] = {
		CT_GC_LOCK_DUE, CT_GC_LOCK_NONEMPTY, CT_GC_LOCK_ALWAYS, CT_GC_LOCK_DUE_ROWS,
		CT_GC_LOCK_WHEEL,
	};

	(void)state;
	for (unsigned p = 0; p < sizeof(pols) / sizeof(pols[0]); p++) {
		struct fixture *f = setup_default();
		struct ct_gc_policy pol;
		struct ct_gc_result r;
		struct ct_verdict v;

		ct_gc_policy_default(&pol);
		pol.lock = pols[p];
		pol.yield = p % 2 ? CT_GC_YIELD_EVERY_ROW : CT_GC_YIELD_THROTTLED;
		ct_gc_set_policy(f->t, &pol);
		for (uint16_t i = 0; i < 200; i++) {
			struct ct_packet pk = udp4(0x0a000001, 0x0a000002, (uint16_t)(1000 + i), 53);
			ct_process(f->thr, &pk, i < 100 ? 0 : 10 * SEC, &v);
		}
		assert_int_equal(ct_gc_step(f->thr, 30 * SEC, 0, &r), 0);
		assert_int_equal(r.expired, 100);
		assert_int_equal(ct_table_count(f->t), 100);
		if (pols[p] == CT_GC_LOCK_ALWAYS)
			assert_int_equal(r.rows_locked, r.rows_visited);
		assert_int_equal(ct_gc_step(f->thr, 40 * SEC, 0, &r), 0);
		assert_int_equal(ct_table_count(f->t), 0);
		teardown_f(f);
	}
}

/*
 * One entry due at 30 s (created at 0, 30 s unreplied timeout) among 1000
 * due at 40 s (created at 10 s), under finder @lock, after a first pass
 * at 0 on the empty table (it seeds the wheel; the scan has nothing to
 * do).  At 35 s exactly that entry leaves: its row is the one row locked,
 * and the pass reads @rows_read row bounds.  The bounds left behind still
 * cover the others: nothing leaves at 40 s - 1 ns, all 1000 at 40 s.
 */
static void one_due_entry_among_1001(enum ct_gc_lock_policy lock, uint64_t rows_read)
{
	struct fixture *f = setup_default();
	struct ct_packet early = udp4(0x0b000001, 0x0a000002, 7, 53);
	struct ct_gc_result r;
	struct ct_verdict v;
	struct ct_gc_policy pol;

	ct_gc_policy_default(&pol);
	pol.lock = lock;        /* whatever the default */
	ct_gc_set_policy(f->t, &pol);
	assert_int_equal(ct_gc_step(f->thr, 0, 0, &r), 0);
	assert_true(r.pass_done);
	ct_process(f->thr, &early, 0 * SEC, &v);
	for (uint16_t i = 0; i < 1000; i++) {
		struct ct_packet p = udp4(0x0a000001 + i, 0x0a000002, 1000, 53);
		ct_process(f->thr, &p, 10 * SEC, &v);
	}
	f->log.n = 0;
	assert_int_equal(ct_gc_step(f->thr, 35 * SEC, 0, &r), 0);
	assert_true(r.pass_done);
	assert_int_equal(r.expired, 1);
	assert_int_equal(r.rows_locked, 1);
	assert_int_equal(r.rows_visited, rows_read);
	assert_int_equal(f->log.n, 1);
	assert_int_equal(f->log.ev[0].conn.orig.src.ip4, early.tuple.src.ip4);
	assert_true(r.next_due <= 40 * SEC);
	assert_int_equal(ct_gc_step(f->thr, 39 * SEC, 0, &r), 0);
	assert_int_equal(r.rows_locked, 0);
	assert_int_equal(ct_gc_step(f->thr, 40 * SEC - 1, 0, &r), 0);
	assert_int_equal(r.rows_locked, 0);
	assert_int_equal(r.expired, 0);
	assert_int_equal(ct_gc_step(f->thr, 40 * SEC, 0, &r), 0);
	assert_int_equal(r.expired, 1000);
	assert_int_equal(ct_table_count(f->t), 0);
	teardown_f(f);
}

static void test_busy_pass_reads_only_the_rows_of_due_subs(void **state)
{
	/* The scan: the due entry's row lies in one sub of CT_SUB_ROWS
	 * rows, whose bound is the only one at or before 35 s, so the pass
	 * reads those rows' bounds and no other row's (htab.h). */
	(void)state;
	one_due_entry_among_1001(CT_GC_LOCK_DUE, CT_SUB_ROWS);
}

static void test_pass_in_tiny_slices_leaves_nothing_due(void **state)
{
	/* The collector finds due rows ahead of removing them (expire/scan.c, visit.c); a
	 * slice that ends on its budget must still remove what it found, and
	 * a pass reported done must have removed every due entry.  500
	 * entries due at 30 s, 500 at 60 s; slices of 1 ns at 45 s. */
	struct fixture *f = setup_default();
	struct ct_gc_result r;
	struct ct_verdict v;
	struct ct_stats ns0;
	uint64_t expired = 0;
	int steps = 0;

	(void)state;
	for (uint16_t i = 0; i < 1000; i++) {
		struct ct_packet p = udp4(0x0a000001 + i, 0x0a000002, 1000, 53);
		ct_process(f->thr, &p, i < 500 ? 0 : 30 * SEC, &v);
	}
	f->log.n = 0;
	do {
		assert_int_equal(ct_gc_step(f->thr, 45 * SEC, 1, &r), 0);
		expired += r.expired;
		/* every removal of a step is counted by the time it returns */
		assert_int_equal(ct_table_count(f->t), 1000 - expired);
		assert_int_equal(ct_ns_get_stats(f->t, 0, &ns0), 0);
		assert_int_equal(ns0.count, 1000 - expired);
		assert_int_equal(ns0.expired, expired);
		steps++;
	} while (!r.pass_done && steps < 100000);
	assert_true(r.pass_done);
	assert_int_equal(expired, 500);
	assert_int_equal(f->log.n, 500);
	for (int i = 0; i < 500; i++)
		assert_true(f->log.ev[i].conn.expires <= 45 * SEC);
	teardown_f(f);
}

static void test_stream_timeout_is_never_lowered_by_refresh_bounds(void **state)
{
	/* UDP: once replied and > 2 s old, 120 s and ASSURED.  The collector
	 * must not expire it at the old bound (30 s). */
	struct fixture *f = setup_default();
	struct ct_packet p = udp4(0x0a000001, 0x0a000002, 40000, 53);
	struct ct_packet r = reply_of(&p);
	struct ct_verdict v;
	struct ct_gc_result g;
	struct ct_conn_info ci;

	(void)state;
	ct_process(f->thr, &p, 0, &v);
	ct_process(f->thr, &r, 1 * SEC, &v);
	ct_process(f->thr, &p, 3 * SEC, &v);
	assert_int_equal(ct_table_lookup(f->thr, &p.tuple, &ci, NULL), 1);
	assert_true(ci.status & CT_ST_ASSURED);
	assert_int_equal(ci.expires, 123 * SEC);
	ct_gc_step(f->thr, 40 * SEC, 0, &g);
	assert_int_equal(g.expired, 0);
	assert_int_equal(g.rows_locked, 1); /* the stale bound made it look */
	ct_gc_step(f->thr, 50 * SEC, 0, &g);
	assert_int_equal(g.rows_locked, 0); /* and fixed the bound */
	ct_gc_step(f->thr, 123 * SEC, 0, &g);
	assert_int_equal(g.expired, 1);
	teardown_f(f);
}

/* Entries of the table not ASSURED (a dump). */
static int count_unassured_cb(const struct ct_conn_info *ci, void *arg)
{
	if (!(ci->status & CT_ST_ASSURED))
		(*(uint64_t *)arg)++;
	return 0;
}

static uint64_t unassured(struct fixture *f)
{
	uint64_t n = 0;

	assert_int_equal(ct_table_dump(f->thr, -1, count_unassured_cb, &n), 0);
	return n;
}

/* @n UDP flows in @zone from 10.@zone.@base+i, ASSURED when @assured
 * (a reply, then the original again 3 s later: a UDP stream is one after
 * 2 s, as the kernel's) */
static void udp_flows(struct fixture *f, uint16_t zone, uint32_t base, unsigned n,
		      bool assured, ct_time_ns now)
{
	for (unsigned i = 0; i < n; i++) {
		struct ct_packet p = udp4(0x0a000000u | (uint32_t)zone << 16 | (base + i),
					  0x0a0000feu, 1000, 53);
		struct ct_packet r;
		struct ct_verdict v;

		p.tuple.zone = zone;
		r = reply_of(&p);
		assert_int_equal(ct_process(f->thr, &p, now, &v), 0);
		assert_int_equal(v.cls, CT_V_NEW);
		if (assured) {
			ct_process(f->thr, &r, now, &v);
			ct_process(f->thr, &p, now + 3 * SEC, &v);
		}
	}
}

static void test_collector_drops_early_after_a_refused_insert_down_to_95_percent(void **state)
{
	/* The kernel's gc_worker drops entries early only once an insert
	 * found the table full with nothing to evict (gc_work->early_drop),
	 * and then only while the count is at or above 95% of the maximum:
	 * a table at 99% keeps its entries until an insert is refused, and
	 * the pass that follows takes it to just below 95%, not to the
	 * ASSURED entries alone (the collector used to drop every entry
	 * that could go, in any table above 95%). */
	struct ct_table_config cfg;
	struct ct_gc_result res;
	struct fixture *f;
	struct ct_verdict v;
	struct ct_stats st;

	(void)state;
	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.settings.max = 100;     /* max95 = 95 */
	f = setup_with(&cfg);
	assert_int_equal(ct_ns_create(f->t, 1, NULL), 0);
	assert_int_equal(ct_ns_create(f->t, 2, NULL), 0);

	/* 99%, 9 of them unreplied, and no insert refused: nothing goes */
	udp_flows(f, 0, 1, 90, true, 0);
	udp_flows(f, 2, 1, 9, false, 0);
	assert_int_equal(ct_table_count(f->t), 99);
	assert_int_equal(unassured(f), 9);
	assert_int_equal(ct_gc_step(f->thr, 4 * SEC, 0, &res), 0);
	assert_true(res.pass_done);
	ct_table_get_stats(f->t, &st);
	assert_int_equal(st.early_drop, 0);
	assert_int_equal(ct_table_count(f->t), 99);

	/* full of ASSURED entries: an insert is refused */
	assert_int_equal(ct_table_flush(f->thr, 2, 5 * SEC), 9);
	udp_flows(f, 1, 1, 10, true, 5 * SEC);
	assert_int_equal(ct_table_count(f->t), 100);
	{
		struct ct_packet p = udp4(0x0c000001, 0x0a0000fe, 7, 53);

		assert_int_equal(ct_process(f->thr, &p, 9 * SEC, &v), 0);
		assert_int_equal(v.cls, CT_V_DROP);
		assert_int_equal(v.reason, CT_PR_TABLE_FULL);
	}
	/* 99% again, 9 unreplied: the next pass drops 5 of them (99 -> 94) */
	assert_int_equal(ct_table_flush(f->thr, 1, 10 * SEC), 10);
	udp_flows(f, 2, 100, 9, false, 10 * SEC);
	assert_int_equal(ct_table_count(f->t), 99);
	assert_int_equal(ct_gc_step(f->thr, 11 * SEC, 0, &res), 0);
	assert_true(res.pass_done);
	ct_table_get_stats(f->t, &st);
	assert_int_equal(st.early_drop, 5);
	assert_int_equal(st.drop, 1);
	assert_int_equal(ct_table_count(f->t), 94);
	assert_int_equal(unassured(f), 4);   /* the 90 ASSURED stay */

	/* done: back above 95% without a refused insert, nothing goes */
	udp_flows(f, 2, 200, 3, false, 12 * SEC);
	assert_int_equal(ct_table_count(f->t), 97);
	assert_int_equal(ct_gc_step(f->thr, 13 * SEC, 0, &res), 0);
	ct_table_get_stats(f->t, &st);
	assert_int_equal(st.early_drop, 5);
	assert_int_equal(ct_table_count(f->t), 97);
	teardown_f(f);
}

/*
 * Slot bounds (htab.h): a 16-bit coarse expiry per slot, decoded against
 * the row's bound d as the least time >= d, in whole units of
 * 2^CT_SLOT_DUE_SHIFT ns, whose unit number ends in the stored 16 bits.
 * What the collector relies on is that the decoded time is never above
 * the expiry it was encoded from, for any d at or below that expiry, and
 * that it is the expiry rounded down to a unit when the two lie less than
 * 2^16 units apart (the definition above: the rounded-down expiry is
 * then the only candidate in range).  Checked on fixed cases around the
 * 16-bit wrap and on a million pseudo-random pairs.
 */
static void test_slot_bound_decodes_to_a_lower_bound_of_the_expiry(void **state)
{
	const uint64_t U = 1ull << CT_SLOT_DUE_SHIFT;
	uint64_t x = 0x9e3779b97f4a7c15ull;

	(void)state;
	/* unit numbers 0xfff0 and 0x10005 end in 0xfff0 and 0x0005: the
	 * stored value wraps, the decoded one must not */
	assert_int_equal(ct_slot_due_lower(0xfff0 * U + 5, ct_slot_due_enc(0x10005 * U + 7)),
			 0x10005 * U);
	/* d in the same unit as the expiry: the unit's start */
	assert_int_equal(ct_slot_due_lower(40 * SEC, ct_slot_due_enc(40 * SEC)),
			 (40 * SEC / U) * U);
	/* an expiry 2^16 units or more beyond d decodes low, not high */
	assert_true(ct_slot_due_lower(0, ct_slot_due_enc(432000 * SEC)) < 65536 * U);
	/* d "never", or too near the end of time to decode: 0 */
	assert_int_equal(ct_slot_due_lower(CT_DUE_NEVER, 1), 0);
	assert_int_equal(ct_slot_due_lower(CT_DUE_NEVER - U, 0xffff), 0);
	for (int i = 0; i < 1000000; i++) {
		uint64_t d, exp, lb, span;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		d = x >> 4;
		/* spans from nothing to far beyond the 16-bit range */
		span = (x & 0xf) < 8 ? (x >> 20) % (65536 * U) : x >> (x & 0xf);
		exp = d + span;
		lb = ct_slot_due_lower(d, ct_slot_due_enc(exp));
		assert_true(lb <= exp);
		if ((exp >> CT_SLOT_DUE_SHIFT) - (d >> CT_SLOT_DUE_SHIFT) < 65536)
			assert_int_equal(lb, (exp / U) * U);
	}
}

/* a crowded table (crowded_cfg): a pass that removes some entries of a
 * row reads the others (their rows are locked for the removal) and sets
 * their slot bounds */
static struct fixture *setup_crowded(void)
{
	struct ct_table_config cfg;

	crowded_cfg(&cfg, NULL);
	return setup_with(&cfg);
}

static void test_entry_refreshed_after_its_slot_bound_was_set_leaves_at_its_new_expiry(void **state)
{
	/* UDP unreplied: 30 s from the last packet (the kernel's
	 * nf_ct_udp_timeout).  Set A, 384 entries at 0 (due 30 s: six a row
	 * on average, in every row but by a 1-in-400 chance), set B, 64 at
	 * 5 s (due 35 s), set C, 64 at 10 s (due 40 s).  The pass at 30 s
	 * removes A and reads B and C in the rows it locks, setting their
	 * slot bounds (35 s, 40 s).  B is refreshed at 31 s: due 61 s, its
	 * bound left at 35 s (below: allowed).  B must stay through the
	 * passes at 35, 40 and 60.999 s and leave at the one at 61 s - not
	 * earlier for the stale bound, not later. */
	struct fixture *f = setup_crowded();
	struct ct_gc_result r;
	struct ct_verdict v;

	(void)state;
	assert_int_equal(ct_table_rows(f->t), 64);
	for (uint32_t i = 0; i < 384 + 128; i++) {
		struct ct_packet p = udp4(0x0a000000 + i, 0x0b000002, 1000, 53);

		ct_process(f->thr, &p, i < 384 ? 0 : i < 448 ? 5 * SEC : 10 * SEC, &v);
	}
	assert_int_equal(ct_gc_step(f->thr, 30 * SEC, 0, &r), 0);
	assert_int_equal(r.expired, 384);
	for (uint32_t i = 384; i < 448; i++) {
		struct ct_packet p = udp4(0x0a000000 + i, 0x0b000002, 1000, 53);

		ct_process(f->thr, &p, 31 * SEC, &v);
		assert_int_equal(v.cls, CT_V_ESTABLISHED);
	}
	assert_int_equal(ct_gc_step(f->thr, 35 * SEC, 0, &r), 0);
	assert_int_equal(r.expired, 0);
	assert_int_equal(ct_gc_step(f->thr, 40 * SEC, 0, &r), 0);
	assert_int_equal(r.expired, 64);
	assert_int_equal(ct_gc_step(f->thr, 61 * SEC - 1, 0, &r), 0);
	assert_int_equal(r.expired, 0);
	f->log.n = 0;
	assert_int_equal(ct_gc_step(f->thr, 61 * SEC, 0, &r), 0);
	assert_int_equal(r.expired, 64);
	assert_int_equal(f->log.n, 64);
	for (int i = 0; i < 64; i++)
		assert_int_equal(f->log.ev[i].conn.expires, 61 * SEC);
	assert_int_equal(ct_table_count(f->t), 0);
	teardown_f(f);
}

/* The wheel (wheel.h) on @f's table, whatever the default. */
static void use_wheel(struct fixture *f)
{
	struct ct_gc_policy pol;

	ct_gc_policy_default(&pol);
	pol.lock = CT_GC_LOCK_WHEEL;
	ct_gc_set_policy(f->t, &pol);
}

static void shortened_after_slot_bound(bool reseed)
{
	/* 384 UDP entries at 0 (due 30 s, in every row as above) and 32 TCP
	 * connections, handshake at 0: ESTABLISHED, 5 days
	 * (nf_conntrack_tcp_timeout_established).  The pass at 30 s removes
	 * the UDP entries and reads the TCP ones, setting their slot bounds
	 * to 5 days.  At 31 s each client sends an in-window RST: CLOSE,
	 * 10 s (..._timeout_close), due 41 s, far below the bound.  Decoded
	 * against a row bound of 41 s, a 5-day bound reads about 98 s
	 * (htab.h: 432000 s and 41 s are 2^16-unit residues 28008 and 39100,
	 * so 41 s + 54444 units): only the row's dirty bit makes the pass at
	 * 41 s read those entries.  All 32 must leave then.  With @reseed
	 * the wheel is switched off and on at 32 s, before any pass: the
	 * seeding walk at 41 s - 1 must queue a row handle for a row whose
	 * dirty bit is set, as the 5-day slot bounds there no longer bound
	 * anything (it used to queue slot handles by them: 98 s). */
	struct fixture *f = setup_crowded();
	const uint32_t cl = 0x0c000001, sv = 0x0a000002;
	const uint8_t SYN = 0x02, RST = 0x04, ACK = 0x10;
	struct ct_conn_info ci;
	struct ct_gc_result r;
	struct ct_verdict v;
	enum ct_dir dir;

	if (reseed)
		use_wheel(f);
	for (uint32_t i = 0; i < 384; i++) {
		struct ct_packet p = udp4(0x0a000000 + i, 0x0b000002, 1000, 53);

		ct_process(f->thr, &p, 0, &v);
	}
	for (uint16_t i = 0; i < 32; i++) {
		struct ct_packet syn = tcp4(cl, sv, (uint16_t)(2000 + i), 80, SYN, 100, 0, 0);
		struct ct_packet synack = tcp4(sv, cl, 80, (uint16_t)(2000 + i), SYN | ACK, 500, 101, 0);
		struct ct_packet ack = tcp4(cl, sv, (uint16_t)(2000 + i), 80, ACK, 101, 501, 0);

		ct_process(f->thr, &syn, 0, &v);
		ct_process(f->thr, &synack, 0, &v);
		ct_process(f->thr, &ack, 0, &v);
		assert_int_equal(ct_table_lookup(f->thr, &syn.tuple, &ci, &dir), 1);
		assert_int_equal(ci.expires, 432000 * SEC);
	}
	assert_int_equal(ct_gc_step(f->thr, 30 * SEC, 0, &r), 0);
	assert_int_equal(r.expired, 384);
	for (uint16_t i = 0; i < 32; i++) {
		struct ct_packet rst = tcp4(cl, sv, (uint16_t)(2000 + i), 80, RST | ACK, 101, 501, 0);

		ct_process(f->thr, &rst, 31 * SEC, &v);
		assert_int_equal(ct_table_lookup(f->thr, &rst.tuple, &ci, &dir), 1);
		assert_int_equal(ci.expires, 41 * SEC);
	}
	if (reseed) {
		struct ct_gc_policy pol;

		ct_gc_policy_default(&pol);
		pol.lock = CT_GC_LOCK_DUE;
		ct_gc_set_policy(f->t, &pol);
		use_wheel(f);
		assert_true(atomic_load(&f->t->wheel_reseed));
	}
	assert_int_equal(ct_gc_step(f->thr, 41 * SEC - 1, 0, &r), 0);
	assert_int_equal(r.expired, 0);
	assert_int_equal(ct_gc_step(f->thr, 41 * SEC, 0, &r), 0);
	assert_int_equal(r.expired, 32);
	assert_int_equal(ct_table_count(f->t), 0);
	teardown_f(f);
}

static void test_timeout_shortened_after_its_slot_bound_was_set_is_not_missed(void **state)
{
	(void)state;
	shortened_after_slot_bound(false);
}

static void test_timeout_shortened_then_the_wheel_reseeded_is_not_missed(void **state)
{
	(void)state;
	shortened_after_slot_bound(true);
}

/* Passes every 100 ms from @from until @n flows - flow i created at i
 * ms, 30 s unreplied - have all been due a pass: each pass removes
 * exactly the entries due by then (the count says what is left), none
 * early and none later than one pass (the DESTROY events' expiries). */
static void passes_remove_one_per_ms(struct fixture *f, uint32_t n, uint64_t from)
{
	struct ct_gc_result r;
	uint64_t expired = 0;

	for (uint64_t now = from; now < 30 * SEC + n * 1000000ull + SEC / 10; now += SEC / 10) {
		f->log.n = 0;
		assert_int_equal(ct_gc_step(f->thr, now, 0, &r), 0);
		assert_true(r.pass_done);
		expired += r.expired;
		for (int k = 0; k < f->log.n; k++) {
			assert_true(f->log.ev[k].conn.expires <= now);
			assert_true(f->log.ev[k].conn.expires > now - SEC / 10);
		}
		assert_int_equal(ct_table_count(f->t),
				 now >= 30 * SEC + (uint64_t)(n - 1) * 1000000ull ? 0
				 : now < 30 * SEC ? n
				 : n - ((now - 30 * SEC) / 1000000ull + 1));
	}
	assert_int_equal(expired, n);
}

static void test_wheel_entries_deep_in_a_chain_leave_on_time(void **state)
{
	/* Slot handles name the first 31 slots of a chain (wheel.h); the
	 * slots beyond are covered by row handles.  3,000 flows in a table
	 * of 64 rows (~47 a chain), flow i created at i ms (30 s unreplied);
	 * passes every 100 ms from 29.9 s: each removes exactly the entries
	 * due by then, none early, none later than one pass. */
	struct ct_table_config cfg;
	struct fixture *f;
	struct ct_gc_result r;
	struct ct_verdict v;
	const uint32_t n = 3000;

	(void)state;
	crowded_cfg(&cfg, NULL);
	cfg.max_chain = 1024;
	f = setup_with(&cfg);
	use_wheel(f);
	assert_int_equal(ct_gc_step(f->thr, 0, 0, &r), 0);
	for (uint32_t i = 0; i < n; i++) {
		struct ct_packet p = udp4(0x0a000000 + i, 0x0b000002, 1000, 53);

		ct_process(f->thr, &p, (uint64_t)i * 1000000ull, &v);
		assert_int_equal(v.cls, CT_V_NEW);
	}
	assert_true(ct_table_rows(f->t) * (CT_WH_MAX_POS + 1) < n);
	passes_remove_one_per_ms(f, n, 29 * SEC + SEC * 9 / 10);
	teardown_f(f);
}

static void test_wheel_drops_the_handles_of_flushed_entries_without_a_lock(void **state)
{
	/* 300 flows at 0 s (due 30 s) are flushed at 1 s, and made again at
	 * 5 s (due 35 s): each goes back to its row's first free slot, so
	 * the slots the first ones' handles name hold the newcomers, whose
	 * bounds are 35 s.  The handles come at 30 s and are dropped without
	 * locking a row (the entries are not due; their bounds are not the
	 * handles').  A table of 1,024 rows, so that every entry is in a
	 * head row (an overflow row's bounds are read under its lock only).
	 * The newcomers leave at 35 s, not before. */
	struct ct_table_config cfg;
	struct fixture *f;
	struct ct_gc_result r;

	(void)state;
	crowded_cfg(&cfg, NULL);
	cfg.settings.buckets = 1024;
	f = setup_with(&cfg);
	use_wheel(f);
	assert_int_equal(ct_gc_step(f->thr, 0, 0, &r), 0);
	new_udp_flows(f, 0x0b000002, 300, 0);
	assert_int_equal(ct_gc_step(f->thr, SEC / 2, 0, &r), 0);
	assert_int_equal(ct_table_flush(f->thr, 0, SEC), 300);
	assert_int_equal(ct_table_count(f->t), 0);
	new_udp_flows(f, 0x0b000002, 300, 5 * SEC);
	assert_int_equal(ct_gc_step(f->thr, 30 * SEC, 0, &r), 0);
	assert_true(r.pass_done);
	assert_int_equal(r.expired, 0);
	assert_int_equal(r.rows_locked, 0);
	assert_int_equal(ct_gc_step(f->thr, 35 * SEC - 1, 0, &r), 0);
	assert_int_equal(r.expired, 0);
	assert_int_equal(ct_gc_step(f->thr, 35 * SEC, 0, &r), 0);
	assert_int_equal(r.expired, 300);
	assert_int_equal(ct_table_count(f->t), 0);
	teardown_f(f);
}

static void test_wheel_pass_visits_only_the_rows_that_are_due(void **state)
{
	/* The wheel: the entries reach it through the thread's ring, and at
	 * 35 s the pass reads one row - the due one - and no bound of any
	 * other (the 40 s handles sit in a bucket that starts after 35 s). */
	(void)state;
	one_due_entry_among_1001(CT_GC_LOCK_WHEEL, 1);
}

static void ring_overflow(bool collector_busy)
{
	/* More inserts between two passes than a thread's ring holds
	 * (CT_RING_SIZE).  With the collector idle the thread empties its
	 * own ring into the wheel (ct_due_note_slot) and nothing is lost;
	 * with the collector busy (its lock held here) the handles that did
	 * not fit are dropped and the wheel is seeded again by a walk over
	 * the rows.  Every entry must
	 * still leave at its time, not before: 3 * CT_RING_SIZE flows in a
	 * table of as many rows, one per ms from 0 (30 s unreplied), passes
	 * every 100 ms from 25 s until the last is due.  Each entry leaves
	 * in the first pass at or after its expiry, none late by more than
	 * a pass. */
	struct ct_table_config cfg;
	struct fixture *f;
	struct ct_gc_result r;
	struct ct_verdict v;
	const uint32_t n = 3 * CT_RING_SIZE;

	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.settings.max = 0;
	cfg.settings.buckets = n;
	f = setup_with(&cfg);
	use_wheel(f);
	assert_int_equal(ct_gc_step(f->thr, 0, 0, &r), 0);
	if (collector_busy)
		pthread_mutex_lock(&f->t->gc_lock);
	for (uint32_t i = 0; i < n; i++) {
		struct ct_packet p = udp4(0x0a000000 + i, 0x0b000002, 1000, 53);

		ct_process(f->thr, &p, (uint64_t)i * 1000000ull, &v);
	}
	if (collector_busy)
		pthread_mutex_unlock(&f->t->gc_lock);
	assert_int_equal(atomic_load(&f->t->wheel_reseed), collector_busy);
	passes_remove_one_per_ms(f, n, 25 * SEC);
	teardown_f(f);
}

static void test_wheel_reseeds_when_a_ring_overflows_while_the_collector_runs(void **state)
{
	(void)state;
	ring_overflow(true);
}

static void test_a_full_ring_is_emptied_by_its_thread_when_the_collector_is_idle(void **state)
{
	(void)state;
	ring_overflow(false);
}

static void test_switching_between_scan_and_wheel_loses_no_entry(void **state)
{
	/* Entries made under one finder must leave on time under the other.
	 * The wheel first, seeded by a pass on the empty table; then the
	 * scan, 300 entries (due 30 s) of which the wheel hears nothing, a
	 * pass at 10 s; then the wheel again (switched on, it must walk the
	 * rows once more) and 300 more (due 40 s); passes at 29.999 s, 30 s;
	 * back to the scan, whose bounds the wheel only ever lowered, and
	 * passes at 39.999 s and 40 s.  Each pass removes exactly what is
	 * due by then. */
	struct fixture *f = setup_default();
	struct ct_gc_policy pol;
	struct ct_gc_result r;

	(void)state;
	use_wheel(f);
	assert_int_equal(ct_gc_step(f->thr, 0, 0, &r), 0);
	assert_true(r.pass_done);
	ct_gc_policy_default(&pol);
	pol.lock = CT_GC_LOCK_DUE;
	ct_gc_set_policy(f->t, &pol);
	new_udp_flows(f, 0x0b000002, 300, 0);
	assert_int_equal(ct_gc_step(f->thr, 10 * SEC, 0, &r), 0);
	assert_int_equal(r.expired, 0);
	use_wheel(f);
	new_udp_flows(f, 0x0b000003, 300, 10 * SEC);
	assert_int_equal(ct_gc_step(f->thr, 30 * SEC - 1, 0, &r), 0);
	assert_int_equal(r.expired, 0);
	assert_true(r.pass_done);
	assert_int_equal(ct_gc_step(f->thr, 30 * SEC, 0, &r), 0);
	assert_int_equal(r.expired, 300);
	ct_gc_set_policy(f->t, &pol);
	assert_int_equal(ct_gc_step(f->thr, 40 * SEC - 1, 0, &r), 0);
	assert_int_equal(r.expired, 0);
	assert_int_equal(ct_gc_step(f->thr, 40 * SEC, 0, &r), 0);
	assert_int_equal(r.expired, 300);
	assert_int_equal(ct_table_count(f->t), 0);
	teardown_f(f);
}

static void *create_and_detach(void *arg)
{
	struct fixture *f = arg;
	struct ct_thread *thr = ct_thread_attach(f->t);
	struct ct_verdict v;

	for (uint16_t i = 0; i < 100; i++) {
		struct ct_packet p = udp4(0x0d000001 + i, 0x0a000002, 1000, 53);

		ct_process(thr, &p, 1 * SEC, &v);
	}
	ct_thread_detach(thr);
	return NULL;
}

static void test_wheel_keeps_the_handles_of_a_thread_that_detached(void **state)
{
	/* A thread creates 100 entries (their rows' handles on its ring)
	 * and detaches before any pass: the handles go to the wheel then,
	 * and the entries leave at 31 s, not before. */
	struct fixture *f = setup_default();
	struct ct_gc_result r;
	pthread_t th;

	(void)state;
	use_wheel(f);
	assert_int_equal(ct_gc_step(f->thr, 0, 0, &r), 0);
	assert_int_equal(pthread_create(&th, NULL, create_and_detach, f), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_false(atomic_load(&f->t->wheel_reseed));
	assert_int_equal(ct_table_count(f->t), 100);
	assert_int_equal(ct_gc_step(f->thr, 31 * SEC - 1, 0, &r), 0);
	assert_int_equal(r.expired, 0);
	assert_int_equal(ct_gc_step(f->thr, 31 * SEC, 0, &r), 0);
	assert_int_equal(r.expired, 100);
	assert_true(r.rows_visited <= 100);
	assert_int_equal(ct_table_count(f->t), 0);
	teardown_f(f);
}

/* Handles on @f's ring that the collector has not taken yet. */
static uint32_t ring_queued(const struct fixture *f)
{
	return atomic_load(&f->thr->ring.tail) - atomic_load(&f->thr->ring.head);
}

static void test_wheel_queues_a_handle_per_group_not_per_segment_of_data_in_flight(void **state)
{
	/*
	 * 256 connections, ESTABLISHED at 0 (5 days), then 100 rounds of a
	 * data segment from the client and its ACK, 1 ms apart from 2 s on:
	 * each segment shortens the timeout to 300 s (unacknowledged data)
	 * and each ACK lengthens it back.  A handle per shortening filled
	 * the rings (25,600 here; at 1M flows the wheel was reseeded over and
	 * over); the group marks (htab.h) leave at most one per group of 64
	 * rows that holds a connection.  Then the entries must still leave
	 * on time: the even connections end on a segment (due 300 s after
	 * it), the odd ones on an ACK (5 days) but get an RST at 100 s
	 * (CLOSE, 10 s: below the marks, so a handle of its own).  Passes
	 * every 10 s and at the due times: none leaves early, none late.
	 */
	struct ct_table_config cfg;
	struct fixture *f;
	struct ct_gc_result r;
	struct ct_verdict v;
	const uint32_t cl = 0x0c000001, sv = 0x0a000002, n = 256, rounds = 100;
	const uint8_t SYN = 0x02, RST = 0x04, PSH = 0x08, ACK = 0x10;
	const uint64_t t_last = 2 * SEC + (rounds - 1) * 1000000ull;
	uint64_t groups[4096 / 64] = { 0 }, n_groups = 0, expired = 0, now;
	uint32_t q0;

	(void)state;
	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.settings.buckets = 4096;
	cfg.settings.max = 0;
	cfg.resize_load_pct = 200;
	f = setup_with(&cfg);
	use_wheel(f);
	assert_int_equal(ct_gc_step(f->thr, 0, 0, &r), 0);
	for (uint16_t i = 0; i < n; i++) {
		struct ct_packet syn = tcp4(cl, sv, (uint16_t)(2000 + i), 80, SYN, 100, 0, 0);
		struct ct_packet synack = tcp4(sv, cl, 80, (uint16_t)(2000 + i), SYN | ACK, 500, 101, 0);
		struct ct_packet ack = tcp4(cl, sv, (uint16_t)(2000 + i), 80, ACK, 101, 501, 0);
		uint64_t g;

		ct_process(f->thr, &syn, 0, &v);
		ct_process(f->thr, &synack, 0, &v);
		ct_process(f->thr, &ack, 0, &v);
		assert_int_equal(v.l4state, CT_TCP_ESTABLISHED);
		g = ct_row_index(ct_hash_tuple(&f->t->key, &syn.tuple), ct_table_rows(f->t)) / CT_GROUP_ROWS;
		n_groups += !(groups[g / 64] & (1ull << (g % 64)));
		groups[g / 64] |= 1ull << (g % 64);
	}
	assert_int_equal(ct_table_rows(f->t), 4096);
	assert_int_equal(ct_gc_step(f->thr, SEC, 0, &r), 0);
	q0 = ring_queued(f);
	for (uint32_t k = 0; k < rounds; k++)
		for (uint16_t i = 0; i < n; i++) {
			uint64_t t = 2 * SEC + k * 1000000ull;
			struct ct_packet d = tcp4(cl, sv, (uint16_t)(2000 + i), 80, PSH | ACK,
						  101 + 100 * k, 501, 100);
			struct ct_packet a = tcp4(sv, cl, 80, (uint16_t)(2000 + i), ACK,
						  501, 101 + 100 * (k + 1), 0);

			ct_process(f->thr, &d, t, &v);
			assert_int_equal(v.cls, CT_V_ESTABLISHED);
			/* the last segment of the even ones stays unacknowledged */
			if (k + 1 < rounds || i % 2) {
				ct_process(f->thr, &a, t, &v);
				assert_int_equal(v.cls, CT_V_ESTABLISHED);
			}
		}
	assert_true(n_groups >= 8);
	assert_true(ring_queued(f) - q0 <= n_groups);
	for (now = 10 * SEC; now <= t_last + 300 * SEC + 10 * SEC; now += 10 * SEC) {
		if (now == 100 * SEC) {
			for (uint16_t i = 1; i < n; i += 2) {
				struct ct_packet rst = tcp4(cl, sv, (uint16_t)(2000 + i), 80, RST | ACK,
							    101 + 100 * rounds, 501, 0);

				ct_process(f->thr, &rst, now, &v);
				assert_int_equal(v.l4state, CT_TCP_CLOSE);
			}
		}
		/* just before and at each due time, and every 10 s */
		if (now == 110 * SEC) {
			assert_int_equal(ct_gc_step(f->thr, now - 1, 0, &r), 0);
			assert_int_equal(r.expired, 0);
			expired += r.expired;
		}
		if (now == t_last + 300 * SEC - (t_last + 300 * SEC) % (10 * SEC) + 10 * SEC) {
			assert_int_equal(ct_gc_step(f->thr, t_last + 300 * SEC - 1, 0, &r), 0);
			assert_int_equal(r.expired, 0);
			assert_int_equal(ct_gc_step(f->thr, t_last + 300 * SEC, 0, &r), 0);
			assert_int_equal(r.expired, n / 2);
			expired += r.expired;
		}
		assert_int_equal(ct_gc_step(f->thr, now, 0, &r), 0);
		assert_true(r.pass_done);
		if (now == 110 * SEC)
			assert_int_equal(r.expired, n / 2);
		else
			assert_int_equal(r.expired, 0);
		expired += r.expired;
	}
	assert_int_equal(expired, n);
	assert_int_equal(ct_table_count(f->t), 0);
	teardown_f(f);
}

static void test_wheel_takes_long_timeouts_down_its_levels_on_time(void **state)
{
	/* 32 TCP connections ESTABLISHED at 0 (5 days), 32 more at 1 h, and
	 * UDP entries (30 s) every minute in between, so that rows are
	 * collected and queued again all along.  A pass every 10 min for 5
	 * days: no ESTABLISHED entry leaves before 5 days; the first 32
	 * leave in the pass at exactly 5 days, the others at 5 days + 1 h.
	 * Their handles wait in the coarse levels (39 h and 9.2 min buckets)
	 * and come down level by level, never late. */
	struct fixture *f = setup_crowded();
	const uint32_t sv = 0x0a000002;
	const uint8_t SYN = 0x02, ACK = 0x10;
	const uint64_t day = 86400 * SEC, est = 5 * day;
	struct ct_gc_result r;
	struct ct_verdict v;
	uint64_t expired_tcp = 0, udp = 0;

	(void)state;
	use_wheel(f);
	for (int batch = 0; batch < 2; batch++) {
		uint64_t at = batch ? 3600 * SEC : 0;

		for (uint16_t i = 0; i < 32; i++) {
			uint32_t cl = 0x0c000001 + (uint32_t)batch;
			struct ct_packet syn = tcp4(cl, sv, (uint16_t)(2000 + i), 80, SYN, 100, 0, 0);
			struct ct_packet synack = tcp4(sv, cl, 80, (uint16_t)(2000 + i), SYN | ACK, 500, 101, 0);
			struct ct_packet ack = tcp4(cl, sv, (uint16_t)(2000 + i), 80, ACK, 101, 501, 0);

			ct_process(f->thr, &syn, at, &v);
			ct_process(f->thr, &synack, at, &v);
			ct_process(f->thr, &ack, at, &v);
		}
		if (!batch)
			assert_int_equal(ct_gc_step(f->thr, 0, 0, &r), 0);
	}
	for (uint64_t now = 600 * SEC; now <= est + 2 * 3600 * SEC; now += 600 * SEC) {
		for (uint64_t m = now - 600 * SEC; m < now && now <= 2 * 3600 * SEC; m += 60 * SEC) {
			struct ct_packet p = udp4(0x0e000000 + (uint32_t)udp++, 0x0b000002, 1000, 53);

			ct_process(f->thr, &p, m, &v);
		}
		f->log.n = 0;
		assert_int_equal(ct_gc_step(f->thr, now, 0, &r), 0);
		assert_true(r.pass_done);
		for (int k = 0; k < f->log.n; k++) {
			const struct ct_conn_info *ci = &f->log.ev[k].conn;

			assert_true(ci->expires <= now);
			assert_true(ci->expires > now - 600 * SEC);
			if (ci->orig.l4 == IPPROTO_TCP) {
				assert_true(ci->expires == est || ci->expires == est + 3600 * SEC);
				expired_tcp++;
			}
		}
		if (now < est)
			assert_int_equal(expired_tcp, 0);
		else if (now < est + 3600 * SEC)
			assert_int_equal(expired_tcp, 32);
	}
	assert_int_equal(expired_tcp, 64);
	assert_int_equal(ct_table_count(f->t), 0);
	teardown_f(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_collector_expires_due_entries_and_reports_destroy),
		cmocka_unit_test(test_idle_collector_pass_locks_no_row),
		cmocka_unit_test(test_every_lock_policy_expires_the_same_entries),
		cmocka_unit_test(test_busy_pass_reads_only_the_rows_of_due_subs),
		cmocka_unit_test(test_wheel_pass_visits_only_the_rows_that_are_due),
		cmocka_unit_test(test_wheel_reseeds_when_a_ring_overflows_while_the_collector_runs),
		cmocka_unit_test(test_a_full_ring_is_emptied_by_its_thread_when_the_collector_is_idle),
		cmocka_unit_test(test_wheel_entries_deep_in_a_chain_leave_on_time),
		cmocka_unit_test(test_wheel_drops_the_handles_of_flushed_entries_without_a_lock),
		cmocka_unit_test(test_wheel_keeps_the_handles_of_a_thread_that_detached),
		cmocka_unit_test(test_switching_between_scan_and_wheel_loses_no_entry),
		cmocka_unit_test(test_wheel_takes_long_timeouts_down_its_levels_on_time),
		cmocka_unit_test(test_wheel_queues_a_handle_per_group_not_per_segment_of_data_in_flight),
		cmocka_unit_test(test_pass_in_tiny_slices_leaves_nothing_due),
		cmocka_unit_test(test_stream_timeout_is_never_lowered_by_refresh_bounds),
		cmocka_unit_test(test_collector_drops_early_after_a_refused_insert_down_to_95_percent),
		cmocka_unit_test(test_slot_bound_decodes_to_a_lower_bound_of_the_expiry),
		cmocka_unit_test(test_entry_refreshed_after_its_slot_bound_was_set_leaves_at_its_new_expiry),
		cmocka_unit_test(test_timeout_shortened_after_its_slot_bound_was_set_is_not_missed),
		cmocka_unit_test(test_timeout_shortened_then_the_wheel_reseeded_is_not_missed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
