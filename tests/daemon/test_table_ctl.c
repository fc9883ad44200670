/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_table_ctl.c - what the daemon's control socket asks of the table
 * (include/ctrack/control.h, stats.h): the sliced listing, deleting one
 * connection, zeroing counters while listing, one thread's counters.
 *
 * The sliced listing's promise is the one a client of `ctrack list` needs:
 * an entry that lives through the whole listing is listed exactly once,
 * however the listing is cut and however the table resizes between (or
 * during) slices; none is ever listed twice.  The tests cut listings into
 * slices of 1, 7 and 2048 entries and grow the table between slices, and
 * check that a resize really was under way at some slice boundary, so
 * that the property is tested where it is hard (a cursor kept as a row
 * number would repeat or skip entries there: the rows' count changes).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/ctrack.h"
#include "base/state.h"
#include "table/htab.h"

#define SEC 1000000000ull

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

/* Entry i of a test: 10.0.x.y:(i % 50000 + 1000) -> 192.168.0.1:53. */
static struct ct_packet flow(unsigned i)
{
	return udp4(0x0a000000u + i, 0xc0a80001u, (uint16_t)(1000 + i % 50000), 53);
}

static unsigned flow_index(const struct ct_conn_info *ci)
{
	return ntohl(ci->orig.src.ip4) - 0x0a000000u;
}

struct ev_log {
	int n;
	struct ct_event last;
};

static void log_event(const struct ct_event *ev, void *arg)
{
	struct ev_log *l = arg;

	l->n++;
	l->last = *ev;
}

struct fx {
	struct ct_table *t;
	struct ct_thread *thr;
	struct ev_log log;
};

static struct fx *mk(uint32_t buckets, bool acct)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct ct_table_config cfg;

	assert_non_null(f);
	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.settings.buckets = buckets;
	cfg.settings.acct = acct;
	assert_int_equal(ct_table_create(&cfg, &f->t), 0);
	f->thr = ct_thread_attach(f->t);
	assert_non_null(f->thr);
	ct_table_set_event_handler(f->t, log_event, &f->log);
	return f;
}

static void rm(struct fx *f)
{
	ct_table_set_event_handler(f->t, NULL, NULL);
	ct_thread_detach(f->thr);
	ct_table_destroy(f->t);
	free(f);
}

static void add(struct fx *f, unsigned from, unsigned to, ct_time_ns now)
{
	for (unsigned i = from; i < to; i++) {
		struct ct_packet p = flow(i);
		struct ct_verdict v;

		assert_int_equal(ct_process(f->thr, &p, now, &v), 0);
		assert_int_equal(v.cls, CT_V_NEW);
	}
}

struct seen {
	unsigned *n;        /* times each flow was taken */
	unsigned cap;
	unsigned taken;
};

static int seen_cb(const struct ct_conn_info *ci, void *arg)
{
	struct seen *s = arg;
	unsigned i = flow_index(ci);

	assert_true(i < s->cap);
	s->n[i]++;
	s->taken++;
	return 0;
}

/* A whole listing in slices of @max; returns the number of slices. */
static unsigned list_all(struct fx *f, unsigned max, struct seen *s)
{
	struct ct_dump_cursor c;
	unsigned slices = 0;

	ct_dump_cursor_init(&c);
	while (!ct_dump_cursor_done(&c)) {
		int r = ct_table_dump_slice(f->thr, -1, &c, max, 0, seen_cb, s);

		assert_true(r >= 0);
		slices++;
	}
	return slices;
}

static void test_slices_list_every_entry_once_whatever_the_slice_size(void **st)
{
	const unsigned n = 5000;
	unsigned sizes[] = { 0, 1, 7, 2048, 100000 };

	(void)st;
	for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct fx *f = mk(1024, false);
		struct seen s = { calloc(n, sizeof(unsigned)), n, 0 };
		unsigned slices;

		add(f, 0, n, SEC);
		slices = list_all(f, sizes[k], &s);
		for (unsigned i = 0; i < n; i++)
			assert_int_equal(s.n[i], 1);
		assert_int_equal(s.taken, n);
		/* a slice stops at the first row boundary past its budget */
		if (sizes[k] >= n)
			assert_int_equal(slices, 1);
		else if (sizes[k] > 1)
			assert_true(slices >= n / (sizes[k] + 64));
		free(s.n);
		rm(f);
	}
}

/*
 * The table grows while a listing is under way: between slices, entries
 * are added until a resize starts, and more so that its migration is
 * half done at a slice boundary, then done.  The entries that were there
 * from the start are listed exactly once; the ones added meanwhile at
 * most once.
 */
static void test_slices_survive_online_resizes_between_slices(void **st)
{
	const unsigned n0 = 2000, total = 40000;
	struct fx *f = mk(64, false);
	struct seen s = { calloc(total, sizeof(unsigned)), total, 0 };
	struct ct_dump_cursor c;
	unsigned next = n0, mid_resize = 0;
	uint64_t resizes0;
	struct ct_stats stt;

	(void)st;
	add(f, 0, n0, SEC);
	ct_table_get_stats(f->t, &stt);
	resizes0 = stt.resizes;
	ct_dump_cursor_init(&c);
	while (!ct_dump_cursor_done(&c)) {
		struct ct_htab *h;

		assert_true(ct_table_dump_slice(f->thr, -1, &c, 16, 0, seen_cb, &s) >= 0);
		/* a few inserts per slice: each helps a migration by 8 rows */
		if (next + 40 <= total) {
			add(f, next, next + 40, SEC);
			next += 40;
		}
		h = atomic_load(&f->t->htab);
		if (atomic_load(&h->future))
			mid_resize++;
	}
	for (unsigned i = 0; i < n0; i++)
		assert_int_equal(s.n[i], 1);
	for (unsigned i = n0; i < next; i++)
		assert_true(s.n[i] <= 1);
	ct_table_get_stats(f->t, &stt);
	/* the test tested something: the table resized during the listing,
	 * and slices began and ended with a migration half done */
	assert_true(stt.resizes > resizes0);
	assert_true(mid_resize > 0);
	free(s.n);
	rm(f);
}

static int skip_odd(const struct ct_conn_info *ci, void *arg)
{
	struct seen *s = arg;

	if (flow_index(ci) & 1)
		return CT_DUMP_SKIP;
	return seen_cb(ci, arg);
	(void)s;
}

/* -z: the counters of the entries taken are zeroed under the entry's
 * lock, the ones a filter skipped keep theirs; the copy handed out has
 * the counts from before. */
static void test_zero_counters_only_of_taken_entries(void **st)
{
	const unsigned n = 300;
	struct fx *f = mk(1024, true);
	struct seen s = { calloc(n, sizeof(unsigned)), n, 0 };
	struct ct_dump_cursor c;

	(void)st;
	add(f, 0, n, SEC);
	for (unsigned i = 0; i < n; i++) {     /* a second packet: 2 each */
		struct ct_packet p = flow(i);
		struct ct_verdict v;

		ct_process(f->thr, &p, SEC + 1, &v);
	}
	ct_dump_cursor_init(&c);
	while (!ct_dump_cursor_done(&c))
		assert_true(ct_table_dump_slice(f->thr, -1, &c, 50, CT_DUMP_ZERO_COUNTERS, skip_odd,
						&s) >= 0);
	assert_int_equal(s.taken, n / 2);
	for (unsigned i = 0; i < n; i++) {
		struct ct_packet p = flow(i);
		struct ct_conn_info ci;

		assert_int_equal(ct_table_lookup(f->thr, &p.tuple, &ci, NULL), 1);
		assert_int_equal(ci.packets[CT_DIR_ORIGINAL], (i & 1) ? 2 : 0);
		assert_int_equal(ci.bytes[CT_DIR_ORIGINAL], (i & 1) ? 96 : 0);
	}
	free(s.n);
	rm(f);
}

static int stop_at_3(const struct ct_conn_info *ci, void *arg)
{
	unsigned *k = arg;

	(void)ci;
	return ++*k == 3 ? -42 : 0;
}

static void test_a_stopped_slice_keeps_its_cursor(void **st)
{
	struct fx *f = mk(1024, false);
	struct ct_dump_cursor c;
	unsigned k = 0;

	(void)st;
	add(f, 0, 100, SEC);
	ct_dump_cursor_init(&c);
	assert_int_equal(ct_table_dump_slice(f->thr, -1, &c, 1000, 0, stop_at_3, &k), -42);
	assert_int_equal(c.next_hash, 0);
	rm(f);
}

static void test_delete_removes_one_entry_with_its_destroy(void **st)
{
	struct fx *f = mk(1024, true);
	struct ct_packet p = flow(7), r;
	struct ct_conn_info ci;
	struct ct_stats s;

	(void)st;
	add(f, 0, 10, SEC);
	f->log.n = 0;
	/* by the reply direction's tuple, as conntrack -D accepts */
	r = p;
	r.tuple.src = p.tuple.dst;
	r.tuple.dst = p.tuple.src;
	r.tuple.sport = p.tuple.dport;
	r.tuple.dport = p.tuple.sport;
	assert_int_equal(ct_table_delete(f->thr, &r.tuple, 2 * SEC, &ci), 1);
	assert_true(ct_tuple_equal(&ci.orig, &p.tuple));
	assert_int_equal(f->log.n, 1);
	assert_int_equal(f->log.last.type, CT_EV_DESTROY);
	assert_int_equal(f->log.last.destroy_cause, CT_DESTROY_DELETE);
	assert_int_equal(f->log.last.ts, 2 * SEC);
	assert_int_equal(ct_table_lookup(f->thr, &p.tuple, NULL, NULL), 0);
	assert_int_equal(ct_table_delete(f->thr, &p.tuple, 2 * SEC, NULL), 0);
	assert_int_equal(f->log.n, 1);
	ct_table_get_stats(f->t, &s);
	assert_int_equal(s.count, 9);
	assert_int_equal(s.deleted, 1);
	assert_int_equal(s.insert, s.count + s.expired + s.deleted + s.early_drop);
	rm(f);
}

/* cpu=N: each thread's own counters, which add up to the table's. */
static void test_thread_stats_are_each_threads_own(void **st)
{
	struct fx *f = mk(1024, false);
	struct ct_thread *other = ct_thread_attach(f->t);
	struct ct_stats a, b, t;

	(void)st;
	add(f, 0, 30, SEC);
	for (unsigned i = 100; i < 105; i++) {
		struct ct_packet p = flow(i);
		struct ct_verdict v;

		ct_process(other, &p, SEC, &v);
		ct_process(other, &p, SEC, &v);   /* found */
	}
	ct_thread_get_stats(f->thr, &a);
	ct_thread_get_stats(other, &b);
	ct_table_get_stats(f->t, &t);
	assert_int_equal(a.insert, 30);
	assert_int_equal(a.found, 0);
	assert_int_equal(b.insert, 5);
	assert_int_equal(b.found, 5);
	assert_int_equal(b.packets, 10);
	assert_int_equal(a.count, 0);           /* table-wide: not per thread */
	assert_int_equal(a.insert + b.insert, t.insert);
	assert_int_equal(a.found + b.found, t.found);
	ct_thread_detach(other);
	rm(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slices_list_every_entry_once_whatever_the_slice_size),
		cmocka_unit_test(test_slices_survive_online_resizes_between_slices),
		cmocka_unit_test(test_zero_counters_only_of_taken_entries),
		cmocka_unit_test(test_a_stopped_slice_keeps_its_cursor),
		cmocka_unit_test(test_delete_removes_one_entry_with_its_destroy),
		cmocka_unit_test(test_thread_stats_are_each_threads_own),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
