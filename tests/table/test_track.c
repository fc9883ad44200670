/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_track.c - the tracker (src/track/): a full table's admission and early
 * drop at insert, lookups that reap, bursts that give the verdicts of
 * single packets (repeated tuples, packet times, destroy and reopen), the
 * burst's prefetch reach, the router's confirmation.
 *
 * The fixture and packet builders are table_fixture.h's; every test of
 * the core ran in one file, test_table.c, before it was split along src/.
 */
#include "table_fixture.h"

static void test_lookup_reaps_an_expired_entry_and_creates_anew(void **state)
{
	struct fixture *f = setup_default();
	struct ct_packet p = udp4(0x0a000001, 0x0a000002, 40000, 53);
	struct ct_verdict v;

	(void)state;
	ct_process(f->thr, &p, 0, &v);
	f->log.n = 0;
	ct_process(f->thr, &p, 31 * SEC, &v); /* 30 s later: it had expired */
	assert_int_equal(v.cls, CT_V_NEW);
	assert_int_equal(f->log.n, 2);
	assert_int_equal(f->log.ev[0].type, CT_EV_DESTROY);
	assert_int_equal(f->log.ev[1].type, CT_EV_NEW);
	assert_int_equal(ct_table_count(f->t), 1);
	teardown_f(f);
}

static void test_full_table_evicts_unreplied_before_refusing(void **state)
{
	/* early_drop(): when full, evict the entries of a nearby row that
	 * never became ASSURED; if only ASSURED entries are near, refuse
	 * (drop). */
	struct ct_table_config cfg;
	struct fixture *f;
	struct ct_verdict v;
	struct ct_stats st;

	(void)state;
	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.settings.max = 64;
	cfg.settings.buckets = 64;
	cfg.resize_load_pct = 200; /* fixed size: every row is near */
	f = setup_with(&cfg);
	for (uint16_t i = 0; i < 64; i++) {
		struct ct_packet p = udp4(0x0a000001, 0x0a000002, (uint16_t)(1000 + i), 53);
		ct_process(f->thr, &p, 0, &v);
		assert_int_equal(v.cls, CT_V_NEW);
	}
	for (uint16_t i = 0; i < 64; i++) {
		struct ct_packet p = udp4(0x0b000001, 0x0a000002, (uint16_t)(1000 + i), 53);
		ct_process(f->thr, &p, 1 * SEC, &v);
		assert_int_equal(v.cls, CT_V_NEW);
	}
	ct_table_get_stats(f->t, &st);
	assert_true(st.early_drop >= 64);
	assert_true(ct_table_count(f->t) <= 64);
	teardown_f(f);
}

static void test_full_table_of_assured_entries_drops_new_ones(void **state)
{
	struct ct_table_config cfg;
	struct fixture *f;
	struct ct_verdict v;
	struct ct_stats st;

	(void)state;
	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.settings.max = 32;
	cfg.settings.buckets = 64;
	cfg.resize_load_pct = 200;
	f = setup_with(&cfg);
	for (uint16_t i = 0; i < 32; i++) {
		struct ct_packet p = udp4(0x0a000001, 0x0a000002, (uint16_t)(1000 + i), 53);
		struct ct_packet r = reply_of(&p);
		ct_process(f->thr, &p, 0, &v);
		ct_process(f->thr, &r, 1 * SEC, &v);
		ct_process(f->thr, &p, 3 * SEC, &v); /* ASSURED */
	}
	{
		struct ct_packet p = udp4(0x0c000001, 0x0a000002, 7, 53);
		ct_process(f->thr, &p, 4 * SEC, &v);
	}
	assert_int_equal(v.cls, CT_V_DROP);
	assert_int_equal(v.reason, CT_PR_TABLE_FULL);
	ct_table_get_stats(f->t, &st);
	assert_int_equal(st.drop, 1);
	assert_int_equal(st.insert_failed, 0);   /* the kernel's: drop only */
	assert_int_equal(st.early_drop, 0);
	assert_int_equal(ct_table_count(f->t), 32);
	teardown_f(f);
}

/* Is row @r of a @n-row table among the @len rows from @lo on (wrapping)? */
static bool row_within(uint64_t r, uint64_t lo, uint64_t len, uint64_t n)
{
	return (r + n - lo) % n < len;
}

/* The next UDP flow 11.0.x.y:1000 -> 10.0.0.254:53, counting from *@next,
 * whose row is (@inside) or is not (!@inside) among the @len rows from
 * @lo on. */
static struct ct_packet udp_rows(struct fixture *f, uint32_t *next, uint64_t lo,
				 uint64_t len, bool inside)
{
	uint64_t n = ct_table_rows(f->t);

	for (;;) {
		struct ct_packet p = udp4(0x0b000000u + (*next)++, 0x0a0000fe, 1000, 53);

		if (row_within(ct_row_index(ct_hash_tuple(&f->t->key, &p.tuple), n),
			       lo, len, n) == inside)
			return p;
	}
}

/* A UDP stream: the flow, its reply, the flow again 3 s later - ASSURED */
static void udp_assured(struct fixture *f, const struct ct_packet *p, ct_time_ns now)
{
	struct ct_packet r = reply_of(p);
	struct ct_verdict v;

	assert_int_equal(ct_process(f->thr, p, now, &v), 0);
	assert_int_equal(v.cls, CT_V_NEW);
	ct_process(f->thr, &r, now, &v);
	ct_process(f->thr, p, now + 3 * SEC, &v);
}

static bool present(struct fixture *f, const struct ct_packet *p)
{
	struct ct_conn_info ci;
	enum ct_dir dir;

	return ct_table_lookup(f->thr, &p->tuple, &ci, &dir) == 1;
}

static void test_insert_on_a_full_table_evicts_a_whole_row_of_unassured_never_an_assured_one(void **state)
{
	/* The kernel's early_drop(): from the new entry's row on, 8 rows at
	 * most; in the first row that holds entries that never became
	 * ASSURED, every one of them goes (not one), and an ASSURED entry
	 * never goes there, even a TCP connection that is closing (only
	 * the collector's early drop takes those). */
	const uint8_t SYN = 0x02, ACK = 0x10, FIN = 0x01;
	struct ct_table_config cfg;
	struct fixture *f;
	struct ct_packet x, fw = { 0 }, r1[3], r2[2];
	struct ct_conn_info ci;
	struct ct_verdict v;
	struct ct_stats st;
	enum ct_dir dir;
	uint32_t next = 1;
	uint64_t rx;
	unsigned n = 0;

	(void)state;
	crowded_cfg(&cfg, NULL);
	cfg.settings.max = 40;
	f = setup_with(&cfg);
	x = udp4(0x0c000001, 0x0a0000fe, 7, 53);
	rx = ct_row_index(ct_hash_tuple(&f->t->key, &x.tuple), ct_table_rows(f->t));
	/* row rx: an ASSURED TCP connection in FIN_WAIT */
	for (uint16_t sp = 1024;; sp++) {
		struct ct_packet syn = tcp4(0x0d000001, 0x0a0000fe, sp, 80, SYN, 100, 0, 0);

		if (ct_row_index(ct_hash_tuple(&f->t->key, &syn.tuple), ct_table_rows(f->t)) != rx)
			continue;
		struct ct_packet sa = tcp4(0x0a0000fe, 0x0d000001, 80, sp, SYN | ACK, 300, 101, 0);
		struct ct_packet ack = tcp4(0x0d000001, 0x0a0000fe, sp, 80, ACK, 101, 301, 0);
		struct ct_packet fin = tcp4(0x0d000001, 0x0a0000fe, sp, 80, FIN | ACK, 101, 301, 0);

		ct_process(f->thr, &syn, 0, &v);
		ct_process(f->thr, &sa, 0, &v);
		ct_process(f->thr, &ack, 0, &v);
		ct_process(f->thr, &fin, 0, &v);
		fw = syn;
		break;
	}
	assert_int_equal(ct_table_lookup(f->thr, &fw.tuple, &ci, &dir), 1);
	assert_true(ci.status & CT_ST_ASSURED);
	assert_int_equal(ci.l4state, CT_TCP_FIN_WAIT);
	n++;
	/* three unreplied flows in the next row, two in the one after */
	for (unsigned i = 0; i < 3; i++) {
		r1[i] = udp_rows(f, &next, (rx + 1) % 64, 1, true);
		assert_int_equal(ct_process(f->thr, &r1[i], 0, &v), 0);
		n++;
	}
	for (unsigned i = 0; i < 2; i++) {
		r2[i] = udp_rows(f, &next, (rx + 2) % 64, 1, true);
		assert_int_equal(ct_process(f->thr, &r2[i], 0, &v), 0);
		n++;
	}
	/* the rest ASSURED, outside the 8 rows */
	while (n < 40) {
		struct ct_packet p = udp_rows(f, &next, rx, 8, false);

		udp_assured(f, &p, 0);
		n++;
	}
	assert_int_equal(ct_table_count(f->t), 40);

	assert_int_equal(ct_process(f->thr, &x, 4 * SEC, &v), 0);
	assert_int_equal(v.cls, CT_V_NEW);
	ct_table_get_stats(f->t, &st);
	assert_int_equal(st.early_drop, 3);
	assert_int_equal(st.drop, 0);
	assert_int_equal(ct_table_count(f->t), 38);
	assert_true(present(f, &fw));
	for (unsigned i = 0; i < 3; i++)
		assert_false(present(f, &r1[i]));
	for (unsigned i = 0; i < 2; i++)
		assert_true(present(f, &r2[i]));
	assert_true(present(f, &x));
	teardown_f(f);
}

static void test_insert_on_a_full_table_reaps_expired_entries_but_is_refused_without_an_eviction(void **state)
{
	/* early_drop() reaps the entries of the rows it looks at whose time
	 * has passed (counted as expired), but only an eviction lets the
	 * insert in: the packet that made room is dropped anyway, as the
	 * kernel's is, and the next one finds the room. */
	struct ct_table_config cfg;
	struct fixture *f;
	struct ct_packet x, old;
	struct ct_verdict v;
	struct ct_stats st;
	uint32_t next = 1;
	uint64_t rx;

	(void)state;
	crowded_cfg(&cfg, NULL);
	cfg.settings.max = 40;
	f = setup_with(&cfg);
	x = udp4(0x0c000001, 0x0a0000fe, 7, 53);
	rx = ct_row_index(ct_hash_tuple(&f->t->key, &x.tuple), ct_table_rows(f->t));
	old = udp_rows(f, &next, (rx + 3) % 64, 1, true);
	assert_int_equal(ct_process(f->thr, &old, 0, &v), 0);   /* unreplied: 30 s */
	for (unsigned n = 1; n < 40; n++) {
		struct ct_packet p = udp_rows(f, &next, rx, 8, false);

		udp_assured(f, &p, 0);   /* a stream: 120 s from 3 s */
	}
	assert_int_equal(ct_table_count(f->t), 40);

	assert_int_equal(ct_process(f->thr, &x, 31 * SEC, &v), 0);
	assert_int_equal(v.cls, CT_V_DROP);
	assert_int_equal(v.reason, CT_PR_TABLE_FULL);
	ct_table_get_stats(f->t, &st);
	assert_int_equal(st.expired, 1);
	assert_int_equal(st.early_drop, 0);
	assert_int_equal(st.drop, 1);
	assert_int_equal(ct_table_count(f->t), 39);
	assert_false(present(f, &old));

	assert_int_equal(ct_process(f->thr, &x, 32 * SEC, &v), 0);
	assert_int_equal(v.cls, CT_V_NEW);
	assert_int_equal(ct_table_count(f->t), 40);
	teardown_f(f);
}

static void test_burst_gives_the_same_verdicts_as_single_packets(void **state)
{
	struct fixture *a = setup_default(), *b = setup_default();
	struct ct_packet pk[CT_BURST_MAX];
	const struct ct_packet *pp[CT_BURST_MAX];
	struct ct_verdict vb[CT_BURST_MAX], vs;

	(void)state;
	for (int round = 0; round < 3; round++) {
		for (unsigned i = 0; i < CT_BURST_MAX; i++) {
			/* repeats inside a burst: 16 flows, both directions */
			struct ct_packet p = udp4(0x0a000001, 0x0a000002, (uint16_t)(100 + i % 16), 53);
			pk[i] = (i / 16) % 2 ? reply_of(&p) : p;
			pp[i] = &pk[i];
		}
		assert_int_equal(ct_process_burst(a->thr, pp, CT_BURST_MAX, (uint64_t)round * SEC, vb), 0);
		for (unsigned i = 0; i < CT_BURST_MAX; i++) {
			ct_process(b->thr, &pk[i], (uint64_t)round * SEC, &vs);
			assert_int_equal(vb[i].cls, vs.cls);
			assert_int_equal(vb[i].dir, vs.dir);
		}
	}
	assert_int_equal(ct_table_count(a->t), 16);
	teardown_f(a);
	teardown_f(b);
}

/*
 * A burst reuses, for a packet with the same tuple as the one before it,
 * that packet's hash and entry instead of looking up again, and (without
 * an event handler) tracks a run of such packets under one hold of the
 * entry's lock.  The entry may end in between (a refused connection's
 * RST destroys it, a SYN reopens a TIME_WAIT connection as a new entry),
 * a packet of a run may be INVALID (out of the window), and what follows
 * must still be what single calls give.  The sequence: a SYN, its
 * retransmission, the originator's RST (nothing answered: the entry is
 * destroyed at once), a new SYN on the same tuple (a new entry) and its
 * retransmission; a whole connection (its SYN-ACK retransmitted: a repeat
 * in the reply direction) to TIME_WAIT followed at once by a SYN with a
 * higher sequence number, which replaces it; a third connection with two
 * data segments from the responder in a row, a segment far outside the
 * window sent twice, then a valid one.  Every
 * verdict and the final table (state, status, counters, expiry) must
 * equal those of one call per packet, with events on and off, and the
 * sequence must really contain a destruction, a reopening and an INVALID
 * packet inside a run.
 */
struct snap {
	long n;
	struct ct_conn_info ci[8];
};

static int snap_cb(const struct ct_conn_info *ci, void *arg)
{
	struct snap *sn = arg;

	if (sn->n < 8)
		sn->ci[sn->n] = *ci;
	sn->n++;
	return 0;
}

static const struct ct_conn_info *snap_find(const struct snap *sn, uint16_t sport)
{
	for (long i = 0; i < sn->n && i < 8; i++)
		if (sn->ci[i].orig.sport == sport)
			return &sn->ci[i];
	return NULL;
}

/* @a and @b logged the same events in the same order, and hold the same
 * @n entries with the same state, status, expiry and counters; the
 * entries are found by their original source ports, @sp0 + k * @step. */
static void assert_same_events_and_table(struct fixture *a, struct fixture *b,
					 long n, uint16_t sp0, uint16_t step)
{
	struct snap sa = { 0 }, sb = { 0 };

	assert_int_equal(a->log.n, b->log.n);
	for (int i = 0; i < a->log.n && i < 4096; i++) {
		assert_int_equal(a->log.ev[i].type, b->log.ev[i].type);
		assert_int_equal(a->log.ev[i].what, b->log.ev[i].what);
		assert_int_equal(a->log.ev[i].ts, b->log.ev[i].ts);
		assert_int_equal(a->log.ev[i].conn.l4state, b->log.ev[i].conn.l4state);
	}
	ct_table_dump(a->thr, -1, snap_cb, &sa);
	ct_table_dump(b->thr, -1, snap_cb, &sb);
	assert_int_equal(sa.n, n);
	assert_int_equal(sa.n, sb.n);
	for (long k = 0; k < n; k++) {
		uint16_t sp = (uint16_t)(sp0 + k * step);
		const struct ct_conn_info *x = snap_find(&sa, sp), *y = snap_find(&sb, sp);

		assert_non_null(x);
		assert_non_null(y);
		assert_int_equal(x->l4state, y->l4state);
		assert_int_equal(x->status, y->status);
		assert_int_equal(x->expires, y->expires);
		assert_int_equal(x->packets[0], y->packets[0]);
		assert_int_equal(x->packets[1], y->packets[1]);
		assert_int_equal(x->bytes[0], y->bytes[0]);
		assert_int_equal(x->bytes[1], y->bytes[1]);
	}
}

static void repeated_tuples(bool events)
{
	struct fixture *a = setup_default(), *b = setup_default();
	const uint32_t c = 0x0a000001, s = 0x0a000002;
	struct ct_packet pk[24];
	const struct ct_packet *pp[24];
	struct ct_verdict vb[24], vs;
	unsigned n = 0, destroyed = 0, created = 0, oow = 0;
	const uint8_t SYN = 0x02, RST = 0x04, ACK = 0x10, FIN = 0x01;

	if (!events) {
		ct_table_set_event_handler(a->t, NULL, NULL);
		ct_table_set_event_handler(b->t, NULL, NULL);
	}
	pk[n++] = tcp4(c, s, 1000, 80, SYN, 100, 0, 0);
	pk[n++] = tcp4(c, s, 1000, 80, SYN, 100, 0, 0);
	pk[n++] = tcp4(c, s, 1000, 80, RST, 101, 0, 0);
	pk[n++] = tcp4(c, s, 1000, 80, SYN, 200, 0, 0);
	pk[n++] = tcp4(c, s, 1000, 80, SYN, 200, 0, 0);
	/* a whole connection on another port, then a reopening SYN */
	pk[n++] = tcp4(c, s, 2000, 80, SYN, 100, 0, 0);
	pk[n++] = tcp4(s, c, 80, 2000, SYN | ACK, 500, 101, 0);
	pk[n++] = tcp4(s, c, 80, 2000, SYN | ACK, 500, 101, 0);
	pk[n++] = tcp4(c, s, 2000, 80, ACK, 101, 501, 0);
	pk[n++] = tcp4(c, s, 2000, 80, FIN | ACK, 101, 501, 0);
	pk[n++] = tcp4(s, c, 80, 2000, FIN | ACK, 501, 102, 0);
	pk[n++] = tcp4(c, s, 2000, 80, ACK, 102, 502, 0);
	pk[n++] = tcp4(c, s, 2000, 80, SYN, 100000, 0, 0);
	pk[n++] = tcp4(c, s, 2000, 80, SYN, 100000, 0, 0);
	/* a third one: data far outside the window, twice, then in it */
	pk[n++] = tcp4(c, s, 3000, 80, SYN, 100, 0, 0);
	pk[n++] = tcp4(s, c, 80, 3000, SYN | ACK, 500, 101, 0);
	pk[n++] = tcp4(c, s, 3000, 80, ACK, 101, 501, 0);
	pk[n++] = tcp4(s, c, 80, 3000, ACK, 501, 101, 100);
	pk[n++] = tcp4(s, c, 80, 3000, ACK, 601, 101, 100);
	pk[n++] = tcp4(c, s, 3000, 80, ACK, 101 + 0x40000000u, 501, 100);
	pk[n++] = tcp4(c, s, 3000, 80, ACK, 101 + 0x40000000u, 501, 100);
	pk[n++] = tcp4(c, s, 3000, 80, ACK, 101, 701, 100);
	for (unsigned i = 0; i < n; i++)
		pp[i] = &pk[i];
	assert_int_equal(ct_process_burst(a->thr, pp, n, 1 * SEC, vb), 0);
	for (unsigned i = 0; i < n; i++) {
		ct_process(b->thr, &pk[i], 1 * SEC, &vs);
		assert_int_equal(vb[i].cls, vs.cls);
		assert_int_equal(vb[i].dir, vs.dir);
		assert_int_equal(vb[i].flags, vs.flags);
		assert_int_equal(vb[i].l4state, vs.l4state);
		assert_int_equal(vb[i].reason, vs.reason);
		destroyed += !!(vs.flags & CT_VF_DESTROYED);
		created += !!(vs.flags & CT_VF_CREATED);
		oow += vs.cls == CT_V_INVALID && vs.reason == CT_PR_TCP_OUT_OF_WINDOW;
	}
	/* the RST destroyed the first entry; the reopening SYN created one */
	assert_int_equal(destroyed, 1);
	assert_true(pk[2].tuple.sport == 1000 && (vb[2].flags & CT_VF_DESTROYED));
	assert_true(vb[3].flags & CT_VF_CREATED);
	assert_true(vb[12].flags & CT_VF_CREATED);
	assert_int_equal(vb[7].dir, CT_DIR_REPLY);
	assert_int_equal(created, 5);
	/* both out-of-window segments, the second inside a run */
	assert_int_equal(oow, 2);
	assert_int_equal(vb[18].dir, CT_DIR_REPLY);
	assert_int_equal(vb[20].cls, CT_V_INVALID);
	assert_int_equal(vb[21].cls, CT_V_ESTABLISHED);
	/* the same events in the same order, and the same table */
	assert_same_events_and_table(a, b, 3, 1000, 1000);
	teardown_f(a);
	teardown_f(b);
}

static void test_burst_with_repeated_tuples_matches_single_packets_across_destroy_and_reopen(void **state)
{
	(void)state;
	repeated_tuples(true);
}

static void test_burst_runs_without_events_match_single_packets(void **state)
{
	(void)state;
	repeated_tuples(false);
}

/*
 * ct_process_burst_ts tracks each packet at its own pkts[i]->ts: the same
 * as ct_process() on each packet in turn at that time.  The burst holds
 * what a replay meets: a UDP packet that finds its entry expired (30 s
 * unreplied) right after the packet that made it (a repeated tuple: the
 * burst would reuse the entry), and a TCP connection whose run of
 * packets is cut by its own expiry - a FIN shortens the timeout to
 * FIN_WAIT's 120 s and the next ACK of the run comes 200 s later (the
 * entry is reaped and, with tcp_loose, the ACK picks a new one up).
 * Verdicts, events and the final table must equal one call per packet,
 * with events on (no runs) and off (runs under one lock hold).
 */
static void at_packet_times(bool events)
{
	struct fixture *a = setup_default(), *b = setup_default();
	const uint32_t c = 0x0a000001, s = 0x0a000002;
	struct ct_packet pk[16];
	const struct ct_packet *pp[16];
	struct ct_verdict vb[16], vs;
	unsigned n = 0, created = 0;
	const uint8_t SYN = 0x02, ACK = 0x10, FIN = 0x01;

	if (!events) {
		ct_table_set_event_handler(a->t, NULL, NULL);
		ct_table_set_event_handler(b->t, NULL, NULL);
	}
	pk[n] = udp4(c, s, 5000, 53);
	pk[n++].ts = 1 * SEC;
	pk[n] = udp4(c, s, 5000, 53);
	pk[n++].ts = 40 * SEC;                  /* after 31 s: expired */
	pk[n] = tcp4(c, s, 6000, 80, SYN, 100, 0, 0);
	pk[n++].ts = 41 * SEC;
	pk[n] = tcp4(s, c, 80, 6000, SYN | ACK, 500, 101, 0);
	pk[n++].ts = 42 * SEC;
	pk[n] = tcp4(c, s, 6000, 80, ACK, 101, 501, 0);
	pk[n++].ts = 43 * SEC;
	pk[n] = tcp4(c, s, 6000, 80, FIN | ACK, 101, 501, 0);
	pk[n++].ts = 44 * SEC;
	pk[n] = tcp4(c, s, 6000, 80, ACK, 102, 501, 0);
	pk[n++].ts = 244 * SEC;                 /* after FIN_WAIT's 120 s */
	pk[n] = tcp4(c, s, 6000, 80, ACK, 102, 501, 10);
	pk[n++].ts = 245 * SEC;
	for (unsigned i = 0; i < n; i++)
		pp[i] = &pk[i];
	assert_int_equal(ct_process_burst_ts(a->thr, pp, n, vb), 0);
	for (unsigned i = 0; i < n; i++) {
		ct_process(b->thr, &pk[i], pk[i].ts, &vs);
		assert_int_equal(vb[i].cls, vs.cls);
		assert_int_equal(vb[i].dir, vs.dir);
		assert_int_equal(vb[i].flags, vs.flags);
		assert_int_equal(vb[i].l4state, vs.l4state);
		assert_int_equal(vb[i].reason, vs.reason);
		created += !!(vs.flags & CT_VF_CREATED);
	}
	/* the expired entries were really met: both packets made new ones */
	assert_true(vb[1].flags & CT_VF_CREATED);
	assert_true(vb[6].flags & CT_VF_CREATED);
	assert_int_equal(created, 4);
	assert_same_events_and_table(a, b, 2, 5000, 1000);
	teardown_f(a);
	teardown_f(b);
}

static void test_burst_at_packet_times_matches_single_packets_at_those_times(void **state)
{
	(void)state;
	at_packet_times(true);
}

static void test_burst_runs_at_packet_times_see_their_entry_expire(void **state)
{
	(void)state;
	at_packet_times(false);
}

/* One new UDP flow through a table whose settings say "router"; true when
 * its entry was confirmed (entered in the table). */
static bool router_keeps(struct fixture *f, struct ct_packet *p)
{
	struct ct_verdict v;
	static uint64_t now = 1;

	now += SEC;
	assert_int_equal(ct_process(f->thr, p, now, &v), 0);
	assert_int_equal(v.cls, CT_V_NEW);
	if (v.flags & CT_VF_UNCONFIRMED) {
		assert_false(v.flags & CT_VF_CREATED);
		return false;
	}
	assert_true(v.flags & CT_VF_CREATED);
	return true;
}

static struct ct_packet udp6(const char *src, const char *dst, uint8_t hops)
{
	struct ct_packet p = udp4(0, 0, 40000, 53);

	p.tuple.l3 = CT_L3_IPV6;
	assert_int_equal(inet_pton(AF_INET6, src, p.tuple.src.ip6), 1);
	assert_int_equal(inet_pton(AF_INET6, dst, p.tuple.dst.ip6), 1);
	p.l3_len = 68;
	p.ttl = hops;
	return p;
}

/* Every entry of @t lies within the reach a burst prefetches for a
 * packet of its family and protocol (track/track.c, stage 3): its extensions
 * among the table's ext_seen, so its object no larger.  Returns the
 * entries checked. */
static unsigned entries_within_prefetch_reach(struct ct_table *t)
{
	struct ct_htab *h = atomic_load(&t->htab);
	unsigned seen = atomic_load(&t->ext_seen), n = 0;

	for (uint64_t i = 0; i < h->n_rows; i++)
		for (struct ct_row *r = &h->rows[i]; r; r = ct_row_next(r))
			for (int k = 0; k < CT_ROW_SLOTS; k++) {
				uint64_t s = atomic_load(&r->slot[k]);
				struct ct_conn *c;
				uint8_t priv;

				if (!s)
					continue;
				c = ct_slot_conn(s);
				priv = ct_proto_by_index(c->proto)->priv_size;
				assert_int_equal(c->ext & ~seen, 0);
				assert_true(ct_conn_obj_size(c->key.l3, priv, c->ext) <=
					    ct_conn_obj_size(c->key.l3, priv, seen));
				n++;
			}
	return n;
}

/*
 * A burst prefetches the lines an entry may reach before it knows which
 * extensions the entry has: those that some namespace's settings have
 * asked for so far (ext_seen), so that a table without counters does
 * not fetch a line its entries never reach.  Settings given at a
 * namespace's creation and changed later, on zone 0 and another zone,
 * IPv4 and IPv6, all stay within it.
 */
static void test_burst_prefetch_reaches_every_extension_an_entry_has(void **state)
{
	struct ct_table_config cfg;
	struct ct_settings s;
	struct ct_verdict v;
	struct ct_packet p;
	struct fixture *f;

	(void)state;
	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	f = setup_with(&cfg);
	/* the kernel's defaults: no counters, no timestamps, no labels */
	assert_int_equal(atomic_load(&f->t->ext_seen), 0);
	p = udp4(0x0a000001, 0x0a000002, 40000, 53);
	ct_process(f->thr, &p, SEC, &v);
	assert_int_equal(v.cls, CT_V_NEW);
	assert_int_equal(entries_within_prefetch_reach(f->t), 1);

	/* zone 0 turns counters on */
	ct_table_get_settings(f->t, &s);
	s.acct = 1;
	assert_int_equal(ct_ns_set_settings(f->t, 0, &s), 0);
	assert_int_equal(atomic_load(&f->t->ext_seen), CT_EXT_ACCT);
	p = udp4(0x0a000001, 0x0a000003, 40000, 53);
	ct_process(f->thr, &p, SEC, &v);
	assert_int_equal(v.cls, CT_V_NEW);
	assert_int_equal(entries_within_prefetch_reach(f->t), 2);

	/* zone 3 stamps (and does not count) from its creation */
	s.acct = 0;
	s.timestamp = 1;
	assert_int_equal(ct_ns_create(f->t, 3, &s), 0);
	assert_int_equal(atomic_load(&f->t->ext_seen), CT_EXT_ACCT | CT_EXT_TSTAMP);
	p.tuple.zone = 3;
	ct_process(f->thr, &p, SEC, &v);
	assert_int_equal(v.cls, CT_V_NEW);
	p = udp6("2001:db8::1", "2001:db8::2", 64);
	p.tuple.zone = 3;
	ct_process(f->thr, &p, SEC, &v);
	assert_int_equal(v.cls, CT_V_NEW);

	/* counters off again on zone 0: its old entries keep theirs, so
	 * what was seen stays seen */
	s.timestamp = 0;
	assert_int_equal(ct_ns_set_settings(f->t, 0, &s), 0);
	assert_int_equal(atomic_load(&f->t->ext_seen), CT_EXT_ACCT | CT_EXT_TSTAMP);
	assert_int_equal(entries_within_prefetch_reach(f->t), 4);
	teardown_f(f);
}

/*
 * The "router" setting (ctrack_router) keeps only what a Linux router's
 * conntrack confirms: packets it forwards or delivers to itself.  Each
 * case is a rule of ip_route_input_slow() / ip6_forward(), as the kernel
 * oracle (tests/kernel, docs/kernel-diff.md) saw them on a router
 * namespace: an IPv6 link-local destination is routed back out of the
 * incoming interface (forwarded, with a redirect) whatever its source,
 * while a link-local source bound elsewhere is refused ("not a
 * neighbour"); TTL / hop limit 1 expires in the router.
 */
static void test_router_keeps_what_a_linux_router_forwards_or_delivers(void **state)
{
	struct ct_table_config cfg;
	struct fixture *f;
	struct ct_packet p;

	(void)state;
	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.settings.router = 1;
	f = setup_with(&cfg);

	p = udp4(0x0a000001, 0x0a000102, 1, 2);   /* unicast, TTL 64 */
	p.ttl = 64;
	assert_true(router_keeps(f, &p));
	p = udp4(0x0a000001, 0x0a000102, 3, 4);   /* TTL 1: time exceeded */
	p.ttl = 1;
	assert_false(router_keeps(f, &p));
	p = udp4(0x0a000001, 0xffffffffu, 5, 6);  /* limited broadcast: local */
	p.ttl = 1;
	assert_true(router_keeps(f, &p));
	p = udp4(0x0a000001, 0xe0000001u, 7, 8);  /* all-hosts: joined */
	p.ttl = 1;
	assert_true(router_keeps(f, &p));
	p = udp4(0x0a000001, 0xe00000fbu, 9, 10); /* other group: not routed */
	p.ttl = 64;
	assert_false(router_keeps(f, &p));
	p = udp4(0x7f000001, 0x0a000102, 11, 12); /* loopback source */
	p.ttl = 64;
	assert_false(router_keeps(f, &p));
	p = udp4(0x00000005, 0x0a000102, 13, 14); /* 0.0.0.5: unicast since 5.3 */
	p.ttl = 64;
	assert_true(router_keeps(f, &p));

	p = udp6("2001:db8::1", "2001:db8:1::2", 64);
	assert_true(router_keeps(f, &p));
	p = udp6("2001:db8::1", "2001:db8:1::3", 1);
	assert_false(router_keeps(f, &p));
	p = udp6("fe80::1", "fe80::1", 64);            /* link-local self-echo */
	assert_true(router_keeps(f, &p));
	p = udp6("2001:db8::1", "fe80::2", 64);        /* back out, redirect */
	assert_true(router_keeps(f, &p));
	p = udp6("fe80::1", "fe80::3", 1);             /* ... unless it expires */
	assert_false(router_keeps(f, &p));
	p = udp6("fe80::1", "2001:db8:1::4", 64);      /* not a neighbour */
	assert_false(router_keeps(f, &p));
	p = udp6("2001:db8::1", "ff02::1", 1);         /* all-nodes: joined */
	assert_true(router_keeps(f, &p));
	p = udp6("2001:db8::1", "ff02::fb", 64);       /* other group */
	assert_false(router_keeps(f, &p));
	p = udp6("::", "fe80::5", 64);                 /* unspecified source */
	assert_false(router_keeps(f, &p));
	p = udp6("2001:db8::1", "::1", 64);            /* loopback */
	assert_false(router_keeps(f, &p));
	assert_int_equal(ct_table_count(f->t), 8);
	teardown_f(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup_reaps_an_expired_entry_and_creates_anew),
		cmocka_unit_test(test_full_table_evicts_unreplied_before_refusing),
		cmocka_unit_test(test_full_table_of_assured_entries_drops_new_ones),
		cmocka_unit_test(test_insert_on_a_full_table_evicts_a_whole_row_of_unassured_never_an_assured_one),
		cmocka_unit_test(test_insert_on_a_full_table_reaps_expired_entries_but_is_refused_without_an_eviction),
		cmocka_unit_test(test_burst_gives_the_same_verdicts_as_single_packets),
		cmocka_unit_test(test_burst_with_repeated_tuples_matches_single_packets_across_destroy_and_reopen),
		cmocka_unit_test(test_burst_runs_without_events_match_single_packets),
		cmocka_unit_test(test_burst_at_packet_times_matches_single_packets_at_those_times),
		cmocka_unit_test(test_burst_runs_at_packet_times_see_their_entry_expire),
		cmocka_unit_test(test_burst_prefetch_reaches_every_extension_an_entry_has),
		cmocka_unit_test(test_router_keeps_what_a_linux_router_forwards_or_delivers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
