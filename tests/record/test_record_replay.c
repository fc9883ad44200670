/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_record_replay.c - a record carries all of an entry: a table rebuilt
 * from another's records, mid-capture, goes on exactly as the other.
 *
 * For every capture of the project's own (tests/captures/crafted, the
 * kernel recordings, samples/sample.pcap) and a set of split points, two
 * tables replay the capture in capture time (parser, reassembler and
 * collector as ctrack read drives them): A sees all of it; at the split,
 * every entry of A is exported (ct_record_export), and B - a fresh table,
 * another hash key - is made of those records (ct_record_import at the
 * same moment, nothing elapsed); from there both see the same packets.
 * The reference is A itself, not a value written here: every later
 * packet's verdict must be the same in both, every event (compared as a
 * set per packet, as B's rows hold the entries in another order and its
 * ids differ), the counters B kept against what A added after the split,
 * and at the end both tables exported again must hold the same records
 * field for field (ids apart) - the protocol's whole private state
 * included, so that a field left out of a record shows either in a later
 * verdict or in the final records.
 *
 * Two settings: the kernel's defaults with accounting and timestamps on,
 * and timeouts of 1-3 s so that entries expire all along and records
 * leave with little time left; zones by VLAN in both.
 *
 * Split points: every packet of a capture of up to 150 packets, 12 evenly
 * spaced ones of a longer capture.  Under AddressSanitizer (make test
 * SANITIZE=1, after the normal run has taken every point) a short capture
 * is split at every ASAN_EVERY-th packet and at both edges (after the
 * first packet, after the last): the same code paths, a quarter of the
 * repetitions; the long captures keep their 12.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/ctrack.h"
#include "../parse/pcap_util.h"
#include "support/sanitize.h"

#define ASAN_EVERY 4

#define MAX_EV 4096

struct evset {
	int n;
	struct ct_event ev[MAX_EV];
};

struct side {
	struct ct_table *t;
	struct ct_thread *thr;
	struct evset ev;
	bool on;     /* B: made from A's records yet */
};

static void log_ev(const struct ct_event *ev, void *arg)
{
	struct evset *s = arg;

	if (s->n < MAX_EV)
		s->ev[s->n] = *ev;
	s->n++;
}

static void side_init(struct side *s, const struct ct_settings *set, uint8_t key_byte)
{
	struct ct_table_config cfg;
	uint8_t key[16];

	memset(s, 0, sizeof(*s));
	memset(key, key_byte, sizeof(key));
	ct_table_config_default(&cfg);
	cfg.settings = *set;
	cfg.hash_key = key;
	cfg.labels = true;
	assert_int_equal(ct_table_create(&cfg, &s->t), 0);
	s->thr = ct_thread_attach(s->t);
	assert_non_null(s->thr);
	ct_table_set_event_handler(s->t, log_ev, &s->ev);
}

static void side_fini(struct side *s)
{
	ct_table_set_event_handler(s->t, NULL, NULL);
	ct_thread_detach(s->thr);
	ct_table_destroy(s->t);
}

static int cmp_ev(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct ct_event));
}

/* An event as it must agree between the two tables: ids (a hash of the
 * entry's address) apart; field by field into zeroed memory, so that no
 * padding byte takes part in the comparison. */
static void take_events(struct evset *s, struct ct_event *out, int *n)
{
	assert_true(s->n <= MAX_EV);
	*n = s->n;
	s->n = 0;
	memset(out, 0, (size_t)*n * sizeof(*out));
	for (int i = 0; i < *n; i++) {
		const struct ct_event *e = &s->ev[i];
		struct ct_conn_info *c = &out[i].conn;

		out[i].type = e->type;
		out[i].what = e->what;
		out[i].destroy_cause = e->destroy_cause;
		out[i].ts = e->ts;
		c->orig = e->conn.orig;
		c->reply = e->conn.reply;
		c->expires = e->conn.expires;
		c->first_seen = e->conn.first_seen;
		c->last_seen = e->conn.last_seen;
		memcpy(c->packets, e->conn.packets, sizeof(c->packets));
		memcpy(c->bytes, e->conn.bytes, sizeof(c->bytes));
		c->status = e->conn.status;
		c->mark = e->conn.mark;
		c->l4state = e->conn.l4state;
		memcpy(c->labels, e->conn.labels, sizeof(c->labels));
	}
	qsort(out, (size_t)*n, sizeof(*out), cmp_ev);
}

static struct ct_event ev_a[MAX_EV], ev_b[MAX_EV];

static void same_events(struct side *a, struct side *b, const char *what, size_t i)
{
	int na, nb;

	take_events(&a->ev, ev_a, &na);
	take_events(&b->ev, ev_b, &nb);
	if (na != nb || memcmp(ev_a, ev_b, (size_t)na * sizeof(*ev_a)) != 0) {
		print_message("# %s at packet %zu: %d events in A, %d in B\n", what, i, na, nb);
		fail();
	}
}

/* ---- records of a whole table, sorted by tuple ---- */

struct recs {
	size_t n, cap;
	struct ct_record *v;
};

static int collect(const struct ct_record *r, void *arg)
{
	struct recs *rs = arg;

	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 256;
		rs->v = realloc(rs->v, rs->cap * sizeof(*rs->v));
		assert_non_null(rs->v);
	}
	memcpy(&rs->v[rs->n], r, sizeof(*r));
	rs->v[rs->n].id = 0;
	rs->n++;
	return 0;
}

static int cmp_rec(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct ct_record));
}

static void export_all(struct side *s, ct_time_ns now, struct recs *rs)
{
	rs->n = 0;
	assert_int_equal(ct_record_export(s->thr, -1, now, collect, rs), 0);
	qsort(rs->v, rs->n, sizeof(*rs->v), cmp_rec);
}

/* ---- the replay ---- */

struct run {
	const struct ct_settings *set;
	struct side a, b;
	struct ct_defrag *df;
	ct_time_ns now, next_due;
	bool have_now;
	size_t imported, expired_at_import;
	size_t by_l4[256];          /* entries carried over, by protocol */
};

static void ensure_zone(struct side *s, uint16_t zone, const struct ct_settings *set)
{
	if (zone && !ct_ns_exists(s->t, zone))
		assert_int_equal(ct_ns_create(s->t, zone, set), 0);
}

static void gc_both(struct run *r, size_t i)
{
	struct ct_gc_result ga, gb;

	assert_int_equal(ct_gc_step(r->a.thr, r->now, 0, &ga), 0);
	if (r->b.on) {
		assert_int_equal(ct_gc_step(r->b.thr, r->now, 0, &gb), 0);
		assert_int_equal(ga.expired, gb.expired);
		same_events(&r->a, &r->b, "collector", i);
	}
	r->next_due = ga.next_due > r->now ? ga.next_due : r->now + 1;
}

static void track_both(struct run *r, const struct ct_packet *pkt, size_t i)
{
	struct ct_verdict va, vb;
	uint64_t da, db;

	if (r->have_now && r->now >= r->next_due)
		gc_both(r, i);
	ensure_zone(&r->a, pkt->tuple.zone, r->set);
	assert_int_equal(ct_process(r->a.thr, pkt, r->now, &va), 0);
	da = ct_thread_take_next_due(r->a.thr);
	if (da < r->next_due)
		r->next_due = da;
	if (!r->b.on) {
		r->a.ev.n = 0;
		return;
	}
	ensure_zone(&r->b, pkt->tuple.zone, r->set);
	assert_int_equal(ct_process(r->b.thr, pkt, r->now, &vb), 0);
	db = ct_thread_take_next_due(r->b.thr);
	if (va.cls != vb.cls || va.dir != vb.dir || va.reason != vb.reason ||
	    va.flags != vb.flags || va.l4state != vb.l4state || va.zone != vb.zone) {
		print_message("# packet %zu: A says class %u dir %u reason %u flags %#x state %u, "
			      "B class %u dir %u reason %u flags %#x state %u\n", i,
			      va.cls, va.dir, va.reason, va.flags, va.l4state,
			      vb.cls, vb.dir, vb.reason, vb.flags, vb.l4state);
		fail();
	}
	assert_int_equal(da, db);
	same_events(&r->a, &r->b, "packet", i);
}

static struct recs split_recs;

/* B made of A's records at the current moment. */
static void split(struct run *r)
{
	struct recs *rs = &split_recs;

	rs->n = 0;
	assert_int_equal(ct_record_export(r->a.thr, -1, r->now, collect, rs), 0);
	for (size_t k = 0; k < rs->n; k++) {
		enum ct_record_reason why;
		int ret;

		ensure_zone(&r->b, rs->v[k].orig.zone, r->set);
		ret = ct_record_import(r->b.thr, &rs->v[k], r->now, 0, 0, &why);
		if (ret < 0)
			print_message("# import of record %zu: %d (%s)\n", k, ret,
				      ct_record_reason_name(why));
		assert_true(ret >= 0);
		r->by_l4[rs->v[k].orig.l4]++;
		if (ret == 1)
			r->imported++;
		else
			r->expired_at_import++;
	}
	/* a restore announces nothing but the DESTROY of what ran out */
	for (int k = 0; k < r->b.ev.n; k++)
		assert_int_equal(r->b.ev.ev[k].type, CT_EV_DESTROY);
	r->b.ev.n = 0;
	r->b.on = true;
	/* the imports' expiries are A's entries', which A's collector
	 * already plans for: B's cannot come earlier */
	assert_true(ct_thread_take_next_due(r->b.thr) >= r->next_due ||
		    r->expired_at_import);
}

static struct ct_stats stats_at_split;

static void stats_delta_equal(struct run *r)
{
	struct ct_stats a, b;

	ct_table_get_stats(r->a.t, &a);
	ct_table_get_stats(r->b.t, &b);
#define SAME(f) do { \
		if (a.f - stats_at_split.f != b.f) { \
			print_message("# counter " #f ": A added %llu after the split, B counted %llu\n", \
				      (unsigned long long)(a.f - stats_at_split.f), \
				      (unsigned long long)b.f); \
			fail(); \
		} } while (0)
	SAME(found);
	SAME(invalid);
	SAME(insert);
	SAME(insert_failed);
	SAME(drop);
	SAME(early_drop);
	SAME(error);
	SAME(packets);
	SAME(untracked);
	SAME(ignored);
	SAME(related);
	SAME(deleted);
#undef SAME
	/* B's expired counts the records that ran out on import too: they
	 * were alive in A at the split and expired in A later */
	assert_int_equal(a.expired - stats_at_split.expired, b.expired);
	assert_int_equal(a.count, b.count);
	for (int k = 0; k < CT_PR_MAX; k++)
		assert_int_equal(a.invalid_by_reason[k] - stats_at_split.invalid_by_reason[k],
				 b.invalid_by_reason[k]);
}

static struct recs fin_a, fin_b;

/* Replay @tc, splitting before packet @at (== n: after the last). */
static void replay(const struct tcap *tc, const struct ct_settings *set, size_t at,
		   struct run *r)
{
	memset(r, 0, sizeof(*r));
	r->set = set;
	side_init(&r->a, set, 0x11);
	side_init(&r->b, set, 0x77);
	r->df = ct_defrag_create(set->frag_high_thresh, (uint64_t)set->frag_timeout * 1000000000ull);
	assert_non_null(r->df);
	for (size_t i = 0; i <= tc->n; i++) {
		struct ct_packet pkt, whole;
		enum ct_pkt_kind kind;

		if (i == at) {
			ct_table_get_stats(r->a.t, &stats_at_split);
			split(r);
		}
		if (i == tc->n)
			break;
		kind = tcap_parse(tc, i, &pkt);
		if (!r->have_now || tc->f[i].ts_ns > r->now)
			r->now = tc->f[i].ts_ns;
		r->have_now = true;
		if (kind == CT_PKT_UNSUPPORTED_LINK)
			continue;
		if (pkt.n_vlan)
			pkt.tuple.zone = pkt.vlan_outer;
		if (kind == CT_PKT_FRAGMENT) {
			uint16_t zone = pkt.tuple.zone;

			if (ct_defrag_feed(r->df, &pkt, r->now, &whole) == 1) {
				whole.tuple.zone = zone;
				track_both(r, &whole, i);
			} else {
				track_both(r, &pkt, i);
			}
			continue;
		}
		track_both(r, &pkt, i);
	}
	if (r->have_now)
		gc_both(r, tc->n);
	stats_delta_equal(r);
	export_all(&r->a, r->now, &fin_a);
	export_all(&r->b, r->now, &fin_b);
	assert_int_equal(fin_a.n, fin_b.n);
	for (size_t k = 0; k < fin_a.n; k++)
		if (memcmp(&fin_a.v[k], &fin_b.v[k], sizeof(fin_a.v[k])) != 0) {
			char s[160];

			ct_tuple_format(&fin_a.v[k].orig, s, sizeof(s));
			print_message("# final record %zu (%s) differs between A and B\n", k, s);
			fail();
		}
	ct_defrag_destroy(r->df);
	side_fini(&r->a);
	side_fini(&r->b);
}

/* ---- the captures ---- */

static size_t n_paths;
static char *paths[256];

static void add_path(const char *dir, const char *name)
{
	size_t l = strlen(dir) + strlen(name) + 2;

	assert_true(n_paths < 256);
	paths[n_paths] = malloc(l);
	assert_non_null(paths[n_paths]);
	snprintf(paths[n_paths], l, "%s/%s", dir, name);
	n_paths++;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_captures(void)
{
	DIR *d;
	struct dirent *e;

	d = opendir(CAPTURES_DIR "/crafted");
	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		if (strstr(e->d_name, ".pcap"))
			add_path(CAPTURES_DIR "/crafted", e->d_name);
	closedir(d);
	d = opendir(CAPTURES_DIR "/kernel");
	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.') {
			char dir[512];

			snprintf(dir, sizeof(dir), CAPTURES_DIR "/kernel/%s", e->d_name);
			add_path(dir, "capture.pcap");
		}
	closedir(d);
	add_path(CAPTURES_DIR "/../../samples", "sample.pcap");
	qsort(paths, n_paths, sizeof(*paths), cmp_str);
}

static void run_all(const struct ct_settings *set)
{
	size_t splits = 0, all_splits = 0, imported = 0, expired = 0, files = 0;
	static const uint8_t protos[] = { 6, 17, 1, 58, 132, 47, 0 };
	size_t by_l4[256] = { 0 };

	if (!n_paths)
		list_captures();
	for (size_t p = 0; p < n_paths; p++) {
		struct tcap tc;
		size_t step;

		if (!tcap_load(&tc, paths[p]))
			continue;
		files++;
		/* every split point of a short capture; 12 of a long one; under
		 * ASan a short one's edges and every ASAN_EVERY-th (top of file) */
		step = tc.n <= 150 ? 1 : tc.n / 12;
		for (size_t at = 1; at <= tc.n; at += step) {
			struct run r;

			all_splits++;
			if (TS_ASAN && step == 1 && at != 1 && at != tc.n && at % ASAN_EVERY)
				continue;
			replay(&tc, set, at, &r);
			splits++;
			imported += r.imported;
			expired += r.expired_at_import;
			for (unsigned k = 0; k < 256; k++)
				by_l4[k] += r.by_l4[k];
		}
		tcap_free(&tc);
	}
	print_message("# %zu captures, %zu split points (of %zu), %zu entries carried over, "
		      "%zu ran out at the split\n", files, splits, all_splits, imported, expired);
	/* the comparison must have had something to compare: every capture,
	 * and entries of every tracker the captures hold (TCP, UDP, ICMP, ICMPv6,
	 * SCTP, GRE, and the generic tracker's: 0 stands for "any other";
	 * none of them has UDP-Lite, test_record.c carries that) over */
	assert_true(files >= 50);
	assert_true(all_splits >= 500);
	assert_true(TS_ASAN ? splits >= all_splits / ASAN_EVERY : splits == all_splits);
	/* 2,000 entries carried over at all the split points; under ASan
	 * the same share of it at the share of the points taken */
	assert_true(imported * all_splits >= 2000 * splits);
	for (unsigned k = 0; k < sizeof(protos); k++) {
		size_t n = protos[k] ? by_l4[protos[k]] : 0;

		if (!protos[k])
			for (unsigned l = 0; l < 256; l++)
				if (l != 6 && l != 17 && l != 136 && l != 1 && l != 58 &&
				    l != 132 && l != 47)
					n += by_l4[l];
		print_message("# protocol %u: %zu entries carried over\n", protos[k], n);
		assert_true(n > 0);
	}
}

static void defaults(struct ct_settings *s)
{
	ct_settings_default(s);
	s->acct = 1;
	s->timestamp = 1;
}

static void records_carry_every_entry_whole(void **state)
{
	struct ct_settings s;

	(void)state;
	defaults(&s);
	run_all(&s);
}

static void records_carry_entries_that_expire_all_along(void **state)
{
	struct ct_settings s;

	(void)state;
	defaults(&s);
	s.udp_timeout = 1;
	s.udp_timeout_stream = 2;
	s.icmp_timeout = 1;
	s.icmpv6_timeout = 1;
	s.generic_timeout = 2;
	s.gre_timeout = 1;
	s.gre_timeout_stream = 2;
	for (unsigned i = 0; i < CT_TCP_TO_MAX; i++)
		s.tcp_timeouts[i] = 3;
	for (unsigned i = 0; i < CT_SCTP_TO_MAX; i++)
		s.sctp_timeouts[i] = 2;
	run_all(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(records_carry_every_entry_whole),
		cmocka_unit_test(records_carry_entries_that_expire_all_along),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
