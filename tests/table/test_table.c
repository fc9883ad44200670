/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_table.c - the table core: lookup in both directions, creation,
 * accounting, events, expiry by the collector and by lookups, flush,
 * the hard maximum with early drop, chain limits, online resize, bursts
 * and namespaces.
 *
 * Packets are built by hand (UDP and the generic tracker) so that every
 * expectation follows from the rules stated in the comment of each test:
 * the kernel's UDP timeouts (30 s unreplied, 120 s stream after 2 s), its
 * early_drop() policy (evict entries that never became ASSURED), and the
 * library's contracts in the public headers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/ctrack.h"
#include "base/hash.h"
#include "table/htab.h"
#include "proto/tcp.h"
#include "base/state.h"
#include "table/conn_key.h"
#include "table/htab.h"
#include "table/member.h"
#include "table/reclaim.h"
#include "table/resize.h"
#include "table/wheel.h"

#define SEC 1000000000ull

struct ev_log {
	int n;
	struct ct_event ev[4096];
};

static void log_event(const struct ct_event *ev, void *arg)
{
	struct ev_log *l = arg;

	if (l->n < 4096)
		l->ev[l->n] = *ev;
	l->n++;
}

static struct ct_packet udp4(uint32_t src, uint32_t dst, uint16_t sp, uint16_t dp)
{
	struct ct_packet p;

	memset(&p, 0, sizeof(p));
	p.kind = CT_PKT_TRACKABLE;
	p.tuple.l3 = CT_L3_IPV4;
	p.tuple.l4 = IPPROTO_UDP;
	p.tuple.src.ip4 = htonl(src);
	p.tuple.dst.ip4 = htonl(dst);
	p.tuple.sport = sp;
	p.tuple.dport = dp;
	p.l3_len = 48;
	p.l4_len = 28;
	p.payload_len = 20;
	return p;
}

static struct ct_packet reply_of(const struct ct_packet *p)
{
	struct ct_packet r = *p;

	r.tuple.src = p->tuple.dst;
	r.tuple.dst = p->tuple.src;
	r.tuple.sport = p->tuple.dport;
	r.tuple.dport = p->tuple.sport;
	return r;
}

/*
 * The collector's way of finding due rows for every test that does not
 * choose one: the library's default (the wheel), or with
 * CT_TEST_GC_FINDER=scan the bounds scan (CT_GC_LOCK_DUE).  meson runs
 * this file both ways (tests/table/meson.build), so every expiry test
 * holds for both.
 */
static void use_finder(struct ct_table *t)
{
	const char *f = getenv("CT_TEST_GC_FINDER");
	struct ct_gc_policy pol;

	if (!f || strcmp(f, "scan"))
		return;
	ct_gc_policy_default(&pol);
	pol.lock = CT_GC_LOCK_DUE;
	ct_gc_set_policy(t, &pol);
}

struct fixture {
	struct ct_table *t;
	struct ct_thread *thr;
	struct ev_log log;
};

static struct fixture *setup_with(const struct ct_table_config *cfg)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(ct_table_create(cfg, &f->t), 0);
	use_finder(f->t);
	f->thr = ct_thread_attach(f->t);
	assert_non_null(f->thr);
	ct_table_set_event_handler(f->t, log_event, &f->log);
	return f;
}

static struct fixture *setup_default(void)
{
	struct ct_table_config cfg;

	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	return setup_with(&cfg);
}

/* A fixed table of 64 rows (the smallest; it never grows), so that a few
 * hundred entries share every row; @key fixes the hash (NULL: random). */
static void crowded_cfg(struct ct_table_config *cfg, const uint8_t *key)
{
	ct_table_config_default(cfg);
	cfg->settings.checksum = 0;
	cfg->settings.max = 0;
	cfg->settings.buckets = 64;
	cfg->hash_key = key;
	cfg->resize_load_pct = 200;
}

static void teardown_f(struct fixture *f)
{
	ct_thread_detach(f->thr);
	ct_table_destroy(f->t);
	free(f);
}

/* @n one-packet UDP flows 10.0.0.i:1000 -> @dst:53 (i < @n) at @now, each
 * a new entry. */
static void new_udp_flows(struct fixture *f, uint32_t dst, uint32_t n, ct_time_ns now)
{
	struct ct_verdict v;

	for (uint32_t i = 0; i < n; i++) {
		struct ct_packet p = udp4(0x0a000000 + i, dst, 1000, 53);

		ct_process(f->thr, &p, now, &v);
		assert_int_equal(v.cls, CT_V_NEW);
	}
}

static void test_first_packet_creates_entry_and_reply_is_found_in_reverse(void **state)
{
	struct ct_table_config cfg;
	struct fixture *f;
	struct ct_packet p = udp4(0x0a000001, 0x0a000002, 40000, 53);
	struct ct_packet r = reply_of(&p);
	struct ct_verdict v;
	struct ct_conn_info ci;
	enum ct_dir dir;

	(void)state;
	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.settings.acct = 1;
	f = setup_with(&cfg);
	assert_int_equal(ct_process(f->thr, &p, 1 * SEC, &v), 0);
	assert_int_equal(v.cls, CT_V_NEW);
	assert_true(v.flags & CT_VF_CREATED);
	assert_int_equal(ct_process(f->thr, &p, 2 * SEC, &v), 0);
	assert_int_equal(v.cls, CT_V_ESTABLISHED);
	assert_int_equal(v.dir, CT_DIR_ORIGINAL);
	assert_int_equal(ct_process(f->thr, &r, 3 * SEC, &v), 0);
	assert_int_equal(v.cls, CT_V_ESTABLISHED);
	assert_int_equal(v.dir, CT_DIR_REPLY);
	/* one entry, found from the reply tuple too */
	assert_int_equal(ct_table_count(f->t), 1);
	assert_int_equal(ct_table_lookup(f->thr, &r.tuple, &ci, &dir), 1);
	assert_int_equal(dir, CT_DIR_REPLY);
	assert_true(ci.status & CT_ST_SEEN_REPLY);
	/* acct: two original packets, one reply, 48 bytes each (l3_len) */
	assert_int_equal(ci.packets[0], 2);
	assert_int_equal(ci.packets[1], 1);
	assert_int_equal(ci.bytes[0], 96);
	assert_int_equal(ci.bytes[1], 48);
	/* the reply tuple is the inverted original */
	assert_int_equal(ci.reply.sport, 53);
	assert_int_equal(ci.reply.dport, 40000);
	teardown_f(f);
}

static void test_default_settings_keep_no_counters_as_the_kernel(void **state)
{
	/* nf_conntrack_acct is 0 in a fresh kernel namespace and in
	 * ct_settings_default(): no counters, and the entry has no room
	 * for them */
	struct fixture *f = setup_default();
	struct ct_packet p = udp4(0x0a000001, 0x0a000002, 40000, 53);
	struct ct_verdict v;
	struct ct_conn_info ci;
	enum ct_dir dir;
	struct ct_table_config cfg;
	struct ct_table *t2;

	(void)state;
	assert_int_equal(ct_process(f->thr, &p, 1 * SEC, &v), 0);
	assert_int_equal(ct_process(f->thr, &p, 2 * SEC, &v), 0);
	assert_int_equal(ct_table_lookup(f->thr, &p.tuple, &ci, &dir), 1);
	assert_int_equal(ci.packets[0], 0);
	assert_int_equal(ci.bytes[0], 0);
	ct_table_config_default(&cfg);
	cfg.settings.acct = 1;
	assert_int_equal(ct_table_create(&cfg, &t2), 0);
	assert_true(ct_conn_size_l3(f->t, CT_L3_IPV4, IPPROTO_UDP) <
		    ct_conn_size_l3(t2, CT_L3_IPV4, IPPROTO_UDP));
	ct_table_destroy(t2);
	teardown_f(f);
}

static void test_events_new_then_update_on_reply(void **state)
{
	struct fixture *f = setup_default();
	struct ct_packet p = udp4(0x0a000001, 0x0a000002, 40000, 53);
	struct ct_packet r = reply_of(&p);
	struct ct_verdict v;

	(void)state;
	ct_process(f->thr, &p, 1 * SEC, &v);
	ct_process(f->thr, &p, 1 * SEC + 1000, &v); /* nothing changes: no event */
	ct_process(f->thr, &r, 1 * SEC + 2000, &v); /* SEEN_REPLY: an UPDATE */
	assert_int_equal(f->log.n, 2);
	assert_int_equal(f->log.ev[0].type, CT_EV_NEW);
	assert_int_equal(f->log.ev[0].conn.expires, 31 * SEC); /* 30 s unreplied */
	assert_int_equal(f->log.ev[1].type, CT_EV_UPDATE);
	assert_true(f->log.ev[1].what & CT_EVW_REPLY);
	teardown_f(f);
}

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
	/* The collector finds due rows ahead of removing them (gc.c); a
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

static void test_flush_removes_all_with_destroy_events(void **state)
{
	struct fixture *f = setup_default();
	struct ct_verdict v;

	(void)state;
	for (uint16_t i = 0; i < 300; i++) {
		struct ct_packet p = udp4(0x0a000001, 0x0a000002, (uint16_t)(1000 + i), 53);
		ct_process(f->thr, &p, 0, &v);
	}
	f->log.n = 0;
	assert_int_equal(ct_table_flush(f->thr, -1, 1 * SEC), 300);
	assert_int_equal(ct_table_count(f->t), 0);
	assert_int_equal(f->log.n, 300);
	assert_int_equal(f->log.ev[299].destroy_cause, CT_DESTROY_FLUSH);
	teardown_f(f);
}

static void test_flushing_one_zone_removes_only_its_entries(void **state)
{
	struct fixture *f = setup_default();
	struct ct_verdict v;
	struct ct_stats st;

	(void)state;
	assert_int_equal(ct_ns_create(f->t, 4, NULL), 0);
	for (uint16_t i = 0; i < 300; i++) {
		struct ct_packet p = udp4(0x0a000001, 0x0a000002, (uint16_t)(1000 + i), 53);
		p.tuple.zone = i % 3 ? 0 : 4;   /* 100 in zone 4, 200 in zone 0 */
		ct_process(f->thr, &p, 0, &v);
	}
	f->log.n = 0;
	assert_int_equal(ct_table_flush(f->thr, 4, 1 * SEC), 100);
	assert_int_equal(ct_table_count(f->t), 200);
	assert_int_equal(f->log.n, 100);
	assert_int_equal(f->log.ev[0].type, CT_EV_DESTROY);
	assert_int_equal(f->log.ev[0].destroy_cause, CT_DESTROY_FLUSH);
	assert_int_equal(f->log.ev[0].conn.orig.zone, 4);
	assert_int_equal(ct_ns_get_stats(f->t, 4, &st), 0);
	assert_int_equal(st.count, 0);
	assert_true(ct_ns_exists(f->t, 4));     /* the namespace stays */
	assert_int_equal(ct_table_flush(f->thr, 4, 2 * SEC), 0);
	assert_int_equal(ct_table_flush(f->thr, 9, 2 * SEC), 0);   /* no such zone */
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

static struct ct_packet tcp4(uint32_t src, uint32_t dst, uint16_t sp, uint16_t dp,
			     uint8_t flags, uint32_t seq, uint32_t ack, uint32_t payload);

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

static void test_chain_limit_refuses_and_counts_chaintoolong(void **state)
{
	/* a fixed, tiny table with a chain limit of 8: inserting 64 x more
	 * entries than rows must hit the limit, count it, and keep every row
	 * at most 8 long */
	struct ct_table_config cfg;
	struct fixture *f;
	struct ct_verdict v;
	struct ct_stats st;
	static const uint8_t key[16] = { 1, 2, 3 };

	(void)state;
	crowded_cfg(&cfg, key);
	cfg.max_chain = 8;
	f = setup_with(&cfg);
	for (uint32_t i = 0; i < 64 * 64; i++) {
		struct ct_packet p = udp4(0x0a000000 + i, 0x0a000002, 1000, 53);
		ct_process(f->thr, &p, 0, &v);
	}
	ct_table_get_stats(f->t, &st);
	assert_true(st.chaintoolong > 0);
	/* the kernel's confirm failure: insert_failed too, not drop */
	assert_int_equal(st.insert_failed, st.chaintoolong);
	assert_int_equal(st.drop, 0);
	assert_true(ct_table_count(f->t) <= 64 * 8);
	assert_int_equal(st.insert + st.chaintoolong, 64 * 64);
	teardown_f(f);
}

static int count_cb(const struct ct_conn_info *ci, void *arg);

/* Head rows of @h with an overflow row. */
static uint64_t rows_with_overflow(const struct ct_htab *h)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < h->n_rows; i++)
		n += ct_row_next(&h->rows[i]) != NULL;
	return n;
}

static void test_empty_overflow_rows_leave_their_chains_and_are_reused(void **state)
{
	/* 64 rows that may not grow, 12 flows a row on average: most rows
	 * need an overflow row.  When every flow has expired, the pass
	 * that removes them takes each emptied overflow row out of its
	 * chain; a grace period later the same flows, created again, get
	 * their overflow rows from those, and no more memory is mapped.
	 * A flush does the same. */
	struct ct_table_config cfg;
	struct fixture *f;
	struct ct_verdict v;
	struct ct_gc_result r;
	struct ct_htab *h;
	uint64_t live, mapped, chained;
	long dumped = 0;
	static const uint8_t key[16] = { 9, 8, 7 };

	(void)state;
	crowded_cfg(&cfg, key);
	f = setup_with(&cfg);
	ct_table_set_event_handler(f->t, NULL, NULL);
	h = atomic_load(&f->t->htab);
	assert_int_equal(h->n_rows, 64);
	new_udp_flows(f, 0x0a000002, 64 * 12, 0);
	live = ct_htab_ovf_live(h);
	mapped = ct_htab_ovf_mapped(h);
	chained = rows_with_overflow(h);
	assert_true(chained > 32);
	assert_true(live >= chained);
	assert_int_equal(mapped, live);

	/* half the time: nothing due, no row leaves its chain */
	assert_int_equal(ct_gc_step(f->thr, 15 * SEC, 0, &r), 0);
	assert_int_equal(r.expired, 0);
	assert_int_equal(r.ovf_rows_freed, 0);
	assert_int_equal(ct_htab_ovf_live(h), live);

	/* all due: every overflow row is emptied and unlinked */
	assert_int_equal(ct_gc_step(f->thr, 31 * SEC, 0, &r), 0);
	assert_int_equal(r.expired, 64 * 12);
	assert_int_equal(r.ovf_rows_freed, live);
	assert_int_equal(ct_htab_ovf_live(h), 0);
	assert_int_equal(rows_with_overflow(h), 0);
	assert_int_equal(ct_htab_ovf_mapped(h), mapped);

	/* after the grace period the rows are handed out again */
	f->t->rcu->barrier();
	new_udp_flows(f, 0x0a000002, 64 * 12, 40 * SEC);
	assert_int_equal(ct_htab_ovf_live(h), live);
	assert_int_equal(rows_with_overflow(h), chained);
	assert_int_equal(ct_htab_ovf_mapped(h), mapped);
	assert_int_equal(ct_table_dump(f->thr, -1, count_cb, &dumped), 0);
	assert_int_equal(dumped, 64 * 12);
	/* and every flow is found again: its reply is not a new entry */
	for (uint32_t i = 0; i < 64 * 12; i++) {
		struct ct_packet p = udp4(0x0a000000 + i, 0x0a000002, 1000, 53);
		struct ct_packet q = reply_of(&p);

		ct_process(f->thr, &q, 41 * SEC, &v);
		assert_int_not_equal(v.cls, CT_V_NEW);
	}
	assert_int_equal(ct_table_count(f->t), 64 * 12);
	/* a flush empties every chain and takes the overflow rows out */
	assert_int_equal(ct_table_flush(f->thr, -1, 42 * SEC), 64 * 12);
	assert_int_equal(ct_htab_ovf_live(h), 0);
	assert_int_equal(rows_with_overflow(h), 0);
	f->t->rcu->barrier();
	new_udp_flows(f, 0x0a000002, 64 * 12, 43 * SEC);
	assert_int_equal(ct_htab_ovf_mapped(h), mapped);
	teardown_f(f);
}

static int count_cb(const struct ct_conn_info *ci, void *arg)
{
	(void)ci;
	(*(long *)arg)++;
	return 0;
}

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
	/* the next insert migrates 8 rows (table_impl.h) */
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

static struct ct_packet tcp4(uint32_t src, uint32_t dst, uint16_t sp, uint16_t dp,
			     uint8_t flags, uint32_t seq, uint32_t ack, uint32_t payload)
{
	struct ct_packet p;

	memset(&p, 0, sizeof(p));
	p.kind = CT_PKT_TRACKABLE;
	p.tuple.l3 = CT_L3_IPV4;
	p.tuple.l4 = IPPROTO_TCP;
	p.tuple.src.ip4 = htonl(src);
	p.tuple.dst.ip4 = htonl(dst);
	p.tuple.sport = sp;
	p.tuple.dport = dp;
	p.l3_len = 40 + payload;
	p.l4_len = 20 + payload;
	p.l4_caplen = 20 + payload;
	p.payload_len = payload;
	p.ttl = 64;
	p.u.tcp.seq = seq;
	p.u.tcp.ack = ack;
	p.u.tcp.sack_right = ack;
	p.u.tcp.window = 65535;
	p.u.tcp.flags = flags;
	p.u.tcp.hdr_len = 20;
	return p;
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

/*
 * Lookups compare an entry with the packet's tuple swapped in place
 * instead of building the reply tuple (htab.h).  For every protocol whose
 * reply tuple is the swap (all but ICMP/ICMPv6), the comparison must say
 * "equal" exactly when ct_tuple_invert() would produce the entry's tuple:
 * checked on the true inverse and on copies with any single byte changed.
 */
static void test_swapped_comparison_agrees_with_the_inverted_tuple(void **state)
{
	static const uint8_t protos[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_SCTP,
					  IPPROTO_GRE, IPPROTO_UDPLITE, 50 };
	uint64_t seed = 12345;
	unsigned equal = 0;

	(void)state;
	for (unsigned round = 0; round < 200; round++) {
		struct ct_tuple t, inv;
		uint8_t *raw = (uint8_t *)&t;

		memset(&t, 0, sizeof(t));
		for (unsigned i = 0; i < 36; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			raw[i] = (uint8_t)(seed >> 56);
		}
		t.l3 = round % 2 ? CT_L3_IPV6 : CT_L3_IPV4;
		t.l4 = protos[round % sizeof(protos)];
		if (t.l3 == CT_L3_IPV4) {
			memset(&t.src.ip6[4], 0, 12);
			memset(&t.dst.ip6[4], 0, 12);
		}
		if (round % 7 == 0)
			t.dport = t.sport;      /* symmetric ports */
		assert_true(ct_tuple_invert(&t, &inv));
		assert_true(ct_tuple_equal_swapped(&inv, &t));
		equal++;
		for (unsigned i = 0; i < sizeof(inv); i++) {
			struct ct_tuple x = inv;

			((uint8_t *)&x)[i] ^= (uint8_t)(1u << (i % 8));
			assert_int_equal(ct_tuple_equal_swapped(&x, &t),
					 ct_tuple_equal(&x, &inv));
		}
	}
	assert_int_equal(equal, 200);
}

/*
 * A burst hashes its IPv4 keys together (four at a time in AVX2 registers
 * where the CPU has them); single packets hash one by one.  Both must
 * give the very same value, or a connection created by one path would
 * not be found by the other.  Random tuples of every kind (ICMP and
 * ICMPv6 too, whose canonical form differs), in runs of every length up
 * to 64.
 */
static void test_hashing_many_tuples_equals_hashing_each(void **state)
{
	static const uint8_t protos[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP,
					  IPPROTO_SCTP, IPPROTO_GRE, 50, IPPROTO_ICMPV6 };
	struct ct_hash_key key = { 0x0123456789abcdefull, 0xfedcba9876543210ull };
	struct ct_tuple tu[64];
	const struct ct_tuple *tp[64];
	uint64_t out[64], seed = 99;

	(void)state;
	for (unsigned i = 0; i < 64; i++) {
		uint8_t *raw = (uint8_t *)&tu[i];

		memset(&tu[i], 0, sizeof(tu[i]));
		for (unsigned b = 0; b < 40; b++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			raw[b] = (uint8_t)(seed >> 56);
		}
		memset(&tu[i].src.ip6[4], 0, 12);
		memset(&tu[i].dst.ip6[4], 0, 12);
		tu[i].l3 = CT_L3_IPV4;
		tu[i].l4 = protos[i % sizeof(protos)];
		tp[i] = &tu[i];
	}
	for (unsigned n = 1; n <= 64; n++) {
		ct_hash_tuple4_many(&key, tp, n, out);
		for (unsigned i = 0; i < n; i++)
			assert_int_equal(out[i], ct_hash_tuple(&key, &tu[i]));
	}
	/* every vector instance the CPU has, not only the one it picks */
	for (int isa = 0; isa < CT_HASH_ISA_MAX; isa++) {
		for (unsigned n = 1; n <= 64; n++) {
			if (!ct_hash_tuple4_many_isa(&key, tp, n, out, (enum ct_hash_isa)isa))
				break;
			for (unsigned i = 0; i < n; i++)
				assert_int_equal(out[i], ct_hash_tuple(&key, &tu[i]));
		}
	}
	/* the scalar instance exists everywhere */
	assert_true(ct_hash_tuple4_many_isa(&key, tp, 5, out, CT_HASH_SCALAR));
}

/*
 * ct_thread_take_next_due reports the earliest expiry the thread's packets
 * gave an entry since the last call: a new UDP entry expires after
 * udp_timeout (30 s); a refresh that only lengthens the timeout reports
 * nothing (the collector's bounds already cover the shorter one); a
 * refresh under a shorter udp_timeout (set to 10 s) shortens the expiry
 * and is reported; every call starts afresh (UINT64_MAX: nothing).
 */
static void test_thread_reports_the_earliest_expiry_it_gave_since_the_last_call(void **state)
{
	struct fixture *f = setup_default();
	struct ct_packet p = udp4(0x0a000001, 0x0a000002, 40000, 53);
	struct ct_settings set;
	struct ct_verdict v;

	(void)state;
	assert_int_equal(ct_thread_take_next_due(f->thr), UINT64_MAX);
	ct_process(f->thr, &p, 100 * SEC, &v);
	assert_int_equal(v.cls, CT_V_NEW);
	assert_int_equal(ct_thread_take_next_due(f->thr), 130 * SEC);
	assert_int_equal(ct_thread_take_next_due(f->thr), UINT64_MAX);
	ct_process(f->thr, &p, 101 * SEC, &v);
	assert_int_equal(v.cls, CT_V_ESTABLISHED);
	assert_int_equal(ct_thread_take_next_due(f->thr), UINT64_MAX);
	ct_table_get_settings(f->t, &set);
	set.udp_timeout = 10;
	assert_int_equal(ct_ns_set_settings(f->t, 0, &set), 0);
	ct_process(f->thr, &p, 102 * SEC, &v);
	assert_int_equal(v.cls, CT_V_ESTABLISHED);
	assert_int_equal(ct_thread_take_next_due(f->thr), 112 * SEC);
	teardown_f(f);
}

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

static void test_mark_and_labels_set_by_the_application_are_kept_and_reported(void **state)
{
	struct ct_table_config cfg;
	struct fixture *f;
	struct ct_packet p = udp4(0x0a000001, 0x0a000002, 40000, 53);
	struct ct_verdict v;
	struct ct_conn_info ci;
	uint8_t labels[16] = { 0x80, [15] = 1 };

	(void)state;
	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.labels = true;
	f = setup_with(&cfg);
	ct_process(f->thr, &p, 0, &v);
	f->log.n = 0;
	/* CONNMARK --set-xmark 0x12/0xff: only the masked bits change */
	assert_int_equal(ct_table_set_mark(f->thr, &p.tuple, 0x1234, 0xff, 1 * SEC), 1);
	assert_int_equal(ct_table_lookup(f->thr, &p.tuple, &ci, NULL), 1);
	assert_int_equal(ci.mark, 0x34);
	assert_int_equal(f->log.n, 1);
	assert_int_equal(f->log.ev[0].type, CT_EV_UPDATE);
	assert_true(f->log.ev[0].what & CT_EVW_MARK);
	/* the same mark again changes nothing and reports nothing */
	assert_int_equal(ct_table_set_mark(f->thr, &p.tuple, 0x34, 0xff, 2 * SEC), 1);
	assert_int_equal(f->log.n, 1);
	assert_int_equal(ct_table_set_labels(f->thr, &p.tuple, labels, 3 * SEC), 1);
	assert_int_equal(ct_table_lookup(f->thr, &p.tuple, &ci, NULL), 1);
	assert_memory_equal(ci.labels, labels, 16);
	assert_int_equal(f->log.n, 2);
	assert_true(f->log.ev[1].what & CT_EVW_LABEL);
	/* a packet does not reset them */
	ct_process(f->thr, &p, 4 * SEC, &v);
	assert_int_equal(ct_table_lookup(f->thr, &p.tuple, &ci, NULL), 1);
	assert_int_equal(ci.mark, 0x34);
	/* no such connection */
	p.tuple.sport = 1;
	assert_int_equal(ct_table_set_mark(f->thr, &p.tuple, 1, ~0u, 5 * SEC), 0);
	teardown_f(f);
}

static void test_labels_need_room_reserved_at_creation(void **state)
{
	struct fixture *f = setup_default(); /* cfg.labels false */
	struct ct_packet p = udp4(0x0a000001, 0x0a000002, 40000, 53);
	struct ct_verdict v;
	uint8_t labels[16] = { 1 };

	(void)state;
	ct_process(f->thr, &p, 0, &v);
	assert_true(ct_table_set_labels(f->thr, &p.tuple, labels, 1 * SEC) < 0);
	teardown_f(f);
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
 * packet of its family and protocol (track.c, stage 3): its extensions
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
		cmocka_unit_test(test_first_packet_creates_entry_and_reply_is_found_in_reverse),
		cmocka_unit_test(test_default_settings_keep_no_counters_as_the_kernel),
		cmocka_unit_test(test_events_new_then_update_on_reply),
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
		cmocka_unit_test(test_lookup_reaps_an_expired_entry_and_creates_anew),
		cmocka_unit_test(test_stream_timeout_is_never_lowered_by_refresh_bounds),
		cmocka_unit_test(test_flush_removes_all_with_destroy_events),
		cmocka_unit_test(test_flushing_one_zone_removes_only_its_entries),
		cmocka_unit_test(test_full_table_evicts_unreplied_before_refusing),
		cmocka_unit_test(test_full_table_of_assured_entries_drops_new_ones),
		cmocka_unit_test(test_collector_drops_early_after_a_refused_insert_down_to_95_percent),
		cmocka_unit_test(test_insert_on_a_full_table_evicts_a_whole_row_of_unassured_never_an_assured_one),
		cmocka_unit_test(test_insert_on_a_full_table_reaps_expired_entries_but_is_refused_without_an_eviction),
		cmocka_unit_test(test_chain_limit_refuses_and_counts_chaintoolong),
		cmocka_unit_test(test_empty_overflow_rows_leave_their_chains_and_are_reused),
		cmocka_unit_test(test_online_resize_keeps_every_entry_findable),
		cmocka_unit_test(test_row_index_covers_every_row_of_a_non_power_of_two_table),
		cmocka_unit_test(test_resize_by_a_quarter_from_960_rows_keeps_every_entry_findable),
		cmocka_unit_test(test_growth_by_a_quarter_keeps_the_load_between_60_and_75_percent),
		cmocka_unit_test(test_slot_bound_decodes_to_a_lower_bound_of_the_expiry),
		cmocka_unit_test(test_entry_refreshed_after_its_slot_bound_was_set_leaves_at_its_new_expiry),
		cmocka_unit_test(test_timeout_shortened_after_its_slot_bound_was_set_is_not_missed),
		cmocka_unit_test(test_timeout_shortened_then_the_wheel_reseeded_is_not_missed),
		cmocka_unit_test(test_entries_with_slot_bounds_keep_their_due_times_across_a_resize),
		cmocka_unit_test(test_burst_gives_the_same_verdicts_as_single_packets),
		cmocka_unit_test(test_swapped_comparison_agrees_with_the_inverted_tuple),
		cmocka_unit_test(test_hashing_many_tuples_equals_hashing_each),
		cmocka_unit_test(test_thread_reports_the_earliest_expiry_it_gave_since_the_last_call),
		cmocka_unit_test(test_burst_with_repeated_tuples_matches_single_packets_across_destroy_and_reopen),
		cmocka_unit_test(test_burst_runs_without_events_match_single_packets),
		cmocka_unit_test(test_burst_at_packet_times_matches_single_packets_at_those_times),
		cmocka_unit_test(test_burst_runs_at_packet_times_see_their_entry_expire),
		cmocka_unit_test(test_same_tuple_lives_independently_in_two_zones),
		cmocka_unit_test(test_namespace_count_sums_the_shards_of_every_thread),
		cmocka_unit_test(test_burst_prefetch_reaches_every_extension_an_entry_has),
		cmocka_unit_test(test_batched_teardown_removes_only_the_batch),
		cmocka_unit_test(test_collected_entries_hold_a_torn_down_namespace_until_freed),
		cmocka_unit_test(test_namespace_maximum_evicts_within_the_namespace),
		cmocka_unit_test(test_mark_and_labels_set_by_the_application_are_kept_and_reported),
		cmocka_unit_test(test_labels_need_room_reserved_at_creation),
		cmocka_unit_test(test_router_keeps_what_a_linux_router_forwards_or_delivers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
