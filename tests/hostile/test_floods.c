/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_floods.c - SYN and UDP floods of random tuples at ten times the
 * table maximum, while established connections keep talking.
 *
 * What must hold, and why (DESIGN.md "The table has a hard maximum", and
 * the kernel's early_drop(), which evicts only entries that never became
 * ASSURED, and refuses a new entry when nothing in its neighbourhood can
 * go):
 *   - every ASSURED connection survives, and every one of its packets
 *     during the flood is ESTABLISHED (TCP evicts only closing states,
 *     UDP never evicts an ASSURED flow);
 *   - nothing is lost from the books: every flood packet is either NEW
 *     (an entry was made, maybe by evicting one) or DROP (refused), the
 *     stats say the same (insert, drop, early_drop), and the evictions are
 *     exactly the entries created and no longer there;
 *   - the table never holds more than its maximum, and resident memory
 *     once the table is full does not grow while the flood goes on.
 * A tenant's flood in its own namespace, capped by the namespace's
 * maximum, must not take room from another namespace.  The concurrent
 * test runs the flood, the legitimate traffic and the collector thread on
 * three threads at once.
 *
 * Sizes: 16384 entries (CTRACK_HOSTILE_FULL=1: the kernel's default
 * 262144).  Figures are printed as TAP comments ("# figure: ...").
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>

#include "hostile_util.h"
#include "support/audit.h"
#include "base/slab.h"

static uint32_t table_max(void)
{
	return h_full() ? 262144 : 16384;
}

struct flood_res {
	uint64_t sent, created, dropped;
	uint64_t legit, legit_pkts, legit_bad;
	uint64_t new_tried, new_ok;
	uint64_t max_count;
	uint64_t rss_start, rss_full, rss_end;
	double ns_per_pkt;
};

static struct ct_table *make_table(uint32_t max)
{
	struct ct_table_config cfg;
	struct ct_table *t;

	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.settings.max = max;
	/* rows for max / 4: the six slots a row has keep the load at 2/3 at
	 * the maximum, below the resize threshold, so memory is fixed */
	cfg.settings.buckets = max / 4;
	assert_int_equal(ct_table_create(&cfg, &t), 0);
	return t;
}

static struct ct_packet flood_packet(uint8_t l4, uint64_t *seed)
{
	uint64_t r = h_rand(seed);
	struct ct_tuple t = ts_tuple4(l4, (uint32_t)r, 0x0a000001u, (uint16_t)(r >> 32),
				     l4 == IPPROTO_TCP ? 80 : 53);

	if (l4 == IPPROTO_TCP)
		return h_tcp(&t, CT_TCP_SYN, (uint32_t)(r >> 16), 0, 0);
	return h_udp(&t, 64);
}

/* A UDP flow that is ASSURED: a query, its answer, and 3 s later more. */
static int udp_assure(struct ct_thread *thr, const struct ct_tuple *t, ct_time_ns now)
{
	struct ct_tuple r = ts_reverse(t);
	struct ct_packet p = h_udp(t, 40), q = h_udp(&r, 120);
	struct ct_verdict v;
	int bad = 0;

	ct_process(thr, &p, now, &v);
	bad += v.cls != CT_V_NEW;
	ct_process(thr, &q, now + H_MS, &v);
	bad += v.cls != CT_V_ESTABLISHED;
	ct_process(thr, &p, now + 3 * H_SEC, &v);
	bad += v.cls != CT_V_ESTABLISHED;
	return bad;
}

static void run_flood(uint8_t l4, struct flood_res *res)
{
	uint32_t max = table_max(), legit = max / 16;
	uint64_t flood = 10ull * max, seed = 0x9e3779b97f4a7c15ull;
	struct ct_stats st0, st;
	struct h_conn *conns = calloc(legit, sizeof(*conns));
	struct ct_table *t;
	struct ct_thread *thr;
	ct_time_ns now = 1000 * H_SEC;
	uint64_t t0;
	bool full_seen = false;

	assert_non_null(conns);
	memset(res, 0, sizeof(*res));
	res->rss_start = h_rss();
	t = make_table(max);
	thr = ct_thread_attach(t);
	assert_non_null(thr);

	/* the legitimate connections, established and ASSURED */
	for (uint32_t i = 0; i < legit; i++) {
		h_conn_init(&conns[i], i);
		if (l4 == IPPROTO_TCP) {
			assert_int_equal(h_handshake(thr, &conns[i], now), 0);
		} else {
			conns[i].t.l4 = IPPROTO_UDP;
			assert_int_equal(udp_assure(thr, &conns[i].t, now), 0);
		}
	}
	now += 4 * H_SEC;
	res->legit = legit;
	ct_table_get_stats(t, &st0);

	/* the flood: one packet per microsecond of capture time; every 64th
	 * slot a legitimate connection talks, every 512th a new legitimate
	 * connection tries to open */
	t0 = h_mono_ns();
	for (uint64_t i = 0; i < flood; i++) {
		struct ct_packet p = flood_packet(l4, &seed);
		struct ct_verdict v;
		uint64_t n;

		now += 1000;
		ct_process(thr, &p, now, &v);
		res->sent++;
		if (v.cls == CT_V_NEW)
			res->created++;
		else if (v.cls == CT_V_DROP && v.reason == CT_PR_TABLE_FULL)
			res->dropped++;
		else
			fail_msg("flood packet %llu: verdict %u reason %u",
				 (unsigned long long)i, v.cls, v.reason);
		if ((i & 63) == 63) {
			uint64_t j = i >> 6;
			struct h_conn *c = &conns[j % legit];
			int side = (int)((j / legit) & 1);
			struct ct_packet d;

			if (l4 == IPPROTO_TCP) {
				d = h_data(c, side, 100);
			} else {
				struct ct_tuple r = ts_reverse(&c->t);
				d = h_udp(side ? &r : &c->t, 100);
			}
			ct_process(thr, &d, now, &v);
			res->legit_pkts++;
			res->legit_bad += v.cls != CT_V_ESTABLISHED;
		}
		if ((i & 511) == 511 && l4 == IPPROTO_TCP) {
			struct h_conn fresh;

			h_conn_init(&fresh, (uint32_t)(0x100000 + i));
			res->new_tried++;
			res->new_ok += h_handshake(thr, &fresh, now) == 0;
		}
		n = ct_table_count(t);
		if (n > res->max_count)
			res->max_count = n;
		if (!full_seen && n >= max) {
			full_seen = true;
			res->rss_full = h_rss();
		}
	}
	res->ns_per_pkt = (double)(h_mono_ns() - t0) / (double)flood;
	res->rss_end = h_rss();

	/* every ASSURED connection is still there, ESTABLISHED/ASSURED */
	for (uint32_t i = 0; i < legit; i++) {
		struct ct_conn_info ci;

		assert_int_equal(ct_table_lookup(thr, &conns[i].t, &ci, NULL), 1);
		assert_true(ci.status & CT_ST_ASSURED);
		if (l4 == IPPROTO_TCP)
			assert_string_equal(ci.state_name, "ESTABLISHED");
	}
	assert_int_equal(res->legit_bad, 0);
	assert_true(res->max_count <= max);

	/* the books: insert, drop and early_drop account for every packet */
	ct_table_get_stats(t, &st);
	assert_int_equal(res->created + res->dropped, res->sent);
	assert_int_equal(st.drop - st0.drop, res->dropped);
	/* a handshake that was refused still counted its drop; count only
	 * what the flood and the fresh connections inserted */
	assert_true(st.insert - st0.insert >= res->created);
	assert_int_equal(st.expired - st0.expired, 0);
	/* each removal counted once: here all of them are evictions */
	assert_int_equal(st.insert - st.deleted - st.expired - st.early_drop, st.count);
	assert_int_equal(st.deleted, 0);
	assert_true(st.early_drop > 0);

	printf("# figure: %s flood %llu pkts at max %u: %llu NEW, %llu DROP (table_full), "
	       "early_drop %llu; %llu/%llu ASSURED kept, %llu legit pkts all ESTABLISHED; "
	       "new legit handshakes %llu/%llu; max count %llu; %.0f ns/pkt\n",
	       l4 == IPPROTO_TCP ? "SYN" : "UDP", (unsigned long long)res->sent, max,
	       (unsigned long long)res->created, (unsigned long long)res->dropped,
	       (unsigned long long)(st.early_drop - st0.early_drop),
	       (unsigned long long)legit, (unsigned long long)legit,
	       (unsigned long long)res->legit_pkts, (unsigned long long)res->new_ok,
	       (unsigned long long)res->new_tried, (unsigned long long)res->max_count,
	       res->ns_per_pkt);
	printf("# figure: RSS before table %.1f MiB, when full %.1f MiB, after flood %.1f MiB "
	       "(entry %zu B, rows %llu)\n",
	       res->rss_start / 1048576.0, res->rss_full / 1048576.0, res->rss_end / 1048576.0,
	       ct_conn_size_l3(t, CT_L3_IPV4, l4), (unsigned long long)ct_table_rows(t));

	/* memory.  Exactly: every object the slabs carved is a live entry, on
	 * a free list or in a magazine (nothing leaked), and the chunks held
	 * are those the maximum needs plus the evicted entries that waited
	 * for their grace period (the reclaim lag), not a function of how
	 * many packets came.  Loosely: resident memory grew by no more than
	 * twice the maximum's entries plus the rows plus 16 MiB of allocator
	 * and sanitizer overhead. */
	{
		struct ts_audit a;
		uint64_t per_chunk = (CT_CHUNK_SIZE - ((sizeof(struct ct_slab_chunk) + 63) & ~63ul)) /
				     ct_conn_size_l3(t, CT_L3_IPV4, l4);
		uint64_t need = (max + per_chunk - 1) / per_chunk;

		ts_audit(thr, TS_AUDIT_TABLE | TS_AUDIT_MEMORY, &a);

		if (a.violations)

			print_error("%s\n", a.first);

		assert_int_equal(a.violations, 0);
		assert_int_equal(a.carved, a.live + a.free_objs + a.cached);
		assert_int_equal(a.map_bad, 0);
		assert_int_equal(a.live, st.count);
		/* the lag follows the CPU the callback thread gets (busy
		 * machines, sanitizers); a leak of the evictions would hold
		 * about ten times what the maximum needs */
		assert_true(a.chunks <= 6 * need + 32);
		printf("# figure: slab chunks %llu for %llu needed at the maximum "
		       "(reclaim lag <= %llu entries); carved %llu = live %llu + free %llu "
		       "+ cached %llu\n", (unsigned long long)a.chunks,
		       (unsigned long long)need,
		       (unsigned long long)((a.chunks > need ? a.chunks - need : 0) * per_chunk),
		       (unsigned long long)a.carved, (unsigned long long)a.live,
		       (unsigned long long)a.free_objs, (unsigned long long)a.cached);
	}
	assert_true(res->rss_full > 0);
	if (H_ASAN)
		printf("# resident memory not checked: AddressSanitizer's quarantine\n");
	else
		assert_true(res->rss_end - res->rss_start <=
			    (uint64_t)max * 2 * ct_conn_size_l3(t, CT_L3_IPV4, l4) + ct_table_rows(t) * 64 * 2 +
			    16ull * 1048576);

	ct_thread_detach(thr);
	ct_table_destroy(t);
	free(conns);
}

static void test_syn_flood_at_ten_times_max_keeps_every_assured_connection(void **state)
{
	struct flood_res r;

	(void)state;
	run_flood(IPPROTO_TCP, &r);
	/* the flood could create entries at all: early drop made room */
	assert_true(r.created > table_max());
}

static void test_udp_flood_at_ten_times_max_keeps_every_assured_flow(void **state)
{
	struct flood_res r;

	(void)state;
	run_flood(IPPROTO_UDP, &r);
	assert_true(r.created > table_max());
}

/*
 * A tenant floods its own namespace, whose maximum is a quarter of the
 * table's.  Its evictions (early_drop limited to its zone) and refusals
 * stay inside it: the other tenant's unreplied, evictable connections are
 * all kept and its new ones are never refused.
 */
static void test_tenant_flood_capped_by_namespace_max_spares_other_tenants(void **state)
{
	uint32_t max = table_max(), quiet = max / 8;
	struct ct_table *t = make_table(max);
	struct ct_thread *thr = ct_thread_attach(t);
	struct ct_settings s;

		ct_table_get_settings(t, &s);
	struct ct_stats z1, z2;
	uint64_t seed = 42, over = 0;
	ct_time_ns now = 1000 * H_SEC;

	(void)state;
	s.max = max / 4;
	assert_int_equal(ct_ns_create(t, 1, &s), 0);
	s.max = 0;
	assert_int_equal(ct_ns_create(t, 2, &s), 0);
	for (uint32_t i = 0; i < quiet; i++) {
		struct ct_tuple q = ts_tuple4(IPPROTO_UDP, 0xac100000u + i, 0x0a000002u, 5000, 53);
		struct ct_packet p;
		struct ct_verdict v;

		q.zone = 2;
		p = h_udp(&q, 30);
		ct_process(thr, &p, now, &v);
		assert_int_equal(v.cls, CT_V_NEW);
	}
	for (uint64_t i = 0; i < 10ull * max; i++) {
		struct ct_packet p = flood_packet(IPPROTO_TCP, &seed);
		struct ct_verdict v;

		p.tuple.zone = 1;
		now += 1000;
		ct_process(thr, &p, now, &v);
		assert_true(v.cls == CT_V_NEW || v.cls == CT_V_DROP);
		if ((i & 1023) == 0) {
			/* the quiet tenant still opens connections */
			struct ct_tuple q = ts_tuple4(IPPROTO_UDP, 0xac200000u + (uint32_t)(i >> 10),
						     0x0a000002u, 5001, 53);
			struct ct_packet qp;

			q.zone = 2;
			qp = h_udp(&q, 30);
			ct_process(thr, &qp, now, &v);
			assert_int_equal(v.cls, CT_V_NEW);
		}
		assert_int_equal(ct_ns_get_stats(t, 1, &z1), 0);
		over += z1.count > max / 4;
	}
	assert_int_equal(over, 0);
	assert_int_equal(ct_ns_get_stats(t, 1, &z1), 0);
	assert_int_equal(ct_ns_get_stats(t, 2, &z2), 0);
	assert_int_equal(z2.early_drop, 0);
	assert_int_equal(z2.drop, 0);
	assert_int_equal(z2.count, quiet + (10ull * max + 1023) / 1024);
	assert_true(z1.early_drop > 0);
	printf("# figure: tenant flood %llu SYNs in zone 1 (max %u): zone 1 holds %llu, "
	       "early_drop %llu, drop %llu; zone 2 keeps %llu of %llu, drop 0\n",
	       10ull * max, max / 4, (unsigned long long)z1.count,
	       (unsigned long long)z1.early_drop, (unsigned long long)z1.drop,
	       (unsigned long long)z2.count,
	       (unsigned long long)(quiet + (10ull * max + 1023) / 1024));
	ct_thread_detach(thr);
	ct_table_destroy(t);
}

/* ---- the flood, the legitimate traffic and the collector at once ---- */

struct conc {
	struct ct_table *t;
	_Atomic uint64_t now;          /* shared capture clock, ns */
	_Atomic bool stop;
	_Atomic uint64_t flood_sent, flood_new, flood_drop, max_count;
	uint64_t legit_pkts, legit_bad, legit_ns;
	struct ct_verdict first_bad;
	struct h_conn *conns;
	uint32_t n_conns;
	uint64_t flood_total;
};

static ct_time_ns conc_clock(void *arg)
{
	struct conc *c = arg;
	return atomic_load(&c->now);
}

static void *flood_thread(void *arg)
{
	struct conc *c = arg;
	struct ct_thread *thr = ct_thread_attach(c->t);
	const struct ct_packet *pp[32];
	struct ct_packet pk[32];
	struct ct_verdict v[32];
	uint64_t seed = 7;

	for (uint64_t i = 0; i < c->flood_total; i += 32) {
		ct_time_ns now = atomic_fetch_add(&c->now, 32000) + 32000;
		uint64_t n;

		for (int k = 0; k < 32; k++) {
			pk[k] = flood_packet(IPPROTO_TCP, &seed);
			pp[k] = &pk[k];
		}
		ct_process_burst(thr, pp, 32, now, v);
		for (int k = 0; k < 32; k++) {
			if (v[k].cls == CT_V_NEW)
				atomic_fetch_add(&c->flood_new, 1);
			else if (v[k].cls == CT_V_DROP)
				atomic_fetch_add(&c->flood_drop, 1);
		}
		atomic_fetch_add(&c->flood_sent, 32);
		n = ct_table_count(c->t);
		if (n > atomic_load(&c->max_count))
			atomic_store(&c->max_count, n);
	}
	ct_thread_detach(thr);
	atomic_store(&c->stop, true);
	return NULL;
}

static void *legit_thread(void *arg)
{
	struct conc *c = arg;
	struct ct_thread *thr = ct_thread_attach(c->t);
	uint64_t i = 0, t0 = h_mono_ns();

	while (!atomic_load(&c->stop)) {
		/* each connection in turn, the two sides taking turns, so that
		 * every segment is acknowledged and stays in the window */
		struct h_conn *hc = &c->conns[i % c->n_conns];
		struct ct_packet d = h_data(hc, (int)((i / c->n_conns) & 1), 200);
		struct ct_verdict v;

		ct_process(thr, &d, atomic_load(&c->now), &v);
		c->legit_pkts++;
		if (v.cls != CT_V_ESTABLISHED && !c->legit_bad++)
			c->first_bad = v;
		i++;
	}
	c->legit_ns = h_mono_ns() - t0;
	ct_thread_detach(thr);
	return NULL;
}

static void test_concurrent_flood_with_collector_thread_keeps_assured_connections(void **state)
{
	uint32_t max = table_max();
	struct conc c;
	struct ct_thread *thr;
	struct ct_stats st;
	pthread_t ft, lt;
	uint64_t slack;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.t = make_table(max);
	c.n_conns = max / 16;
	c.flood_total = 10ull * max;
	atomic_store(&c.now, 1000 * H_SEC);
	c.conns = calloc(c.n_conns, sizeof(*c.conns));
	assert_non_null(c.conns);
	thr = ct_thread_attach(c.t);
	for (uint32_t i = 0; i < c.n_conns; i++) {
		h_conn_init(&c.conns[i], i);
		assert_int_equal(h_handshake(thr, &c.conns[i], atomic_load(&c.now)), 0);
	}
	ct_thread_detach(thr);
	assert_int_equal(ct_gc_start(c.t, conc_clock, &c), 0);
	assert_int_equal(pthread_create(&lt, NULL, legit_thread, &c), 0);
	assert_int_equal(pthread_create(&ft, NULL, flood_thread, &c), 0);
	pthread_join(ft, NULL);
	pthread_join(lt, NULL);
	assert_int_equal(ct_gc_stop(c.t), 0);

	thr = ct_thread_attach(c.t);
	for (uint32_t i = 0; i < c.n_conns; i++) {
		struct ct_conn_info ci;

		assert_int_equal(ct_table_lookup(thr, &c.conns[i].t, &ci, NULL), 1);
		assert_true(ci.status & CT_ST_ASSURED);
	}
	if (c.legit_bad)
		fail_msg("%llu of %llu legitimate packets not ESTABLISHED; first: class %u "
			 "reason %s", (unsigned long long)c.legit_bad,
			 (unsigned long long)c.legit_pkts, c.first_bad.cls,
			 ct_parse_reason_name((enum ct_parse_reason)c.first_bad.reason));
	assert_true(c.legit_pkts > 0);
	ct_table_get_stats(c.t, &st);
	assert_int_equal(atomic_load(&c.flood_new) + atomic_load(&c.flood_drop),
			 atomic_load(&c.flood_sent));
	assert_int_equal(st.drop, atomic_load(&c.flood_drop));
	assert_int_equal(st.insert - st.deleted - st.expired - st.early_drop, st.count);
	/* each thread folds its count every 64 entries, so two writers may
	 * overshoot the maximum by that much between folds */
	slack = 3 * 64;
	assert_true(atomic_load(&c.max_count) <= max + slack);
	printf("# figure: concurrent SYN flood %llu pkts (max %u) + %llu legit pkts "
	       "(%.0f ns each, all ESTABLISHED) + collector thread: NEW %llu, DROP %llu, "
	       "early_drop %llu, max count %llu, %u/%u ASSURED kept\n",
	       (unsigned long long)atomic_load(&c.flood_sent), max,
	       (unsigned long long)c.legit_pkts,
	       c.legit_pkts ? (double)c.legit_ns / (double)c.legit_pkts : 0.0,
	       (unsigned long long)atomic_load(&c.flood_new),
	       (unsigned long long)atomic_load(&c.flood_drop),
	       (unsigned long long)st.early_drop,
	       (unsigned long long)atomic_load(&c.max_count), c.n_conns, c.n_conns);
	ct_thread_detach(thr);
	ct_table_destroy(c.t);
	free(c.conns);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_syn_flood_at_ten_times_max_keeps_every_assured_connection),
		cmocka_unit_test(test_udp_flood_at_ten_times_max_keeps_every_assured_flow),
		cmocka_unit_test(test_tenant_flood_capped_by_namespace_max_spares_other_tenants),
		cmocka_unit_test(test_concurrent_flood_with_collector_thread_keeps_assured_connections),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
