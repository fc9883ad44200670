/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_table.c - the table proper (src/table/): lookup in both directions, creation
 * and accounting as a caller sees them, events, flush of the table and of
 * one zone, chain limits and overflow rows, the comparisons and hashes the
 * lookup relies on, marks and labels, a thread's earliest due time.
 *
 * The fixture and packet builders are table_fixture.h's; every test of
 * the core ran in one file, test_table.c, before it was split along src/.
 */
#include "table_fixture.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_packet_creates_entry_and_reply_is_found_in_reverse),
		cmocka_unit_test(test_default_settings_keep_no_counters_as_the_kernel),
		cmocka_unit_test(test_events_new_then_update_on_reply),
		cmocka_unit_test(test_flush_removes_all_with_destroy_events),
		cmocka_unit_test(test_flushing_one_zone_removes_only_its_entries),
		cmocka_unit_test(test_chain_limit_refuses_and_counts_chaintoolong),
		cmocka_unit_test(test_empty_overflow_rows_leave_their_chains_and_are_reused),
		cmocka_unit_test(test_swapped_comparison_agrees_with_the_inverted_tuple),
		cmocka_unit_test(test_hashing_many_tuples_equals_hashing_each),
		cmocka_unit_test(test_thread_reports_the_earliest_expiry_it_gave_since_the_last_call),
		cmocka_unit_test(test_mark_and_labels_set_by_the_application_are_kept_and_reported),
		cmocka_unit_test(test_labels_need_room_reserved_at_creation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
