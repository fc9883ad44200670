/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_nat_table.c - NAT through the table (ctrack/nat.h, the two-step
 * first packet; src/table/rslot.c, src/track/pending.c,
 * src/nat/nat_table.c): a pending entry leaves nothing when dropped, a
 * confirmed NAT entry is found from both of its keys and from nothing
 * else, every way out of the table takes both of its slots, an online
 * resize keeps both findable, confirm clashes are resolved and counted as
 * the kernel's __nf_conntrack_confirm resolves and counts them, the null
 * binding changes a clashing port, the source index reuses a source's
 * mapping and forgets it, and the port search's last probes evict a
 * TIME_WAIT entry of an earlier source NAT.
 *
 * Expected tuples follow from the rules, not from the library: a source
 * NAT to one address with no port range keeps the port when the tuple is
 * free (get_unique_tuple's step 3); the reply tuple of a source NAT is
 * (server -> NAT address : port); the kernel's lookup finds an entry from
 * its original and its reply tuple only.  The table's own invariants are
 * checked by the shared audit (tests/support/audit.c: every entry found
 * from both tuples, one slot each and a second for each NAT entry).
 */
#include "table_fixture.h"
#include "support/audit.h"
#include "ctrack/nat.h"

#define C1 0x0a000001u    /* clients */
#define C2 0x0a000002u
#define S1 0xc0a80001u    /* servers */
#define S2 0xc0a80002u
#define NATA 0xc6336401u  /* the NAT address, 198.51.100.1 */
#define NATB 0xc6336402u

static struct ct_nat_range snat_range(uint32_t lo, uint32_t hi, uint16_t plo, uint16_t phi)
{
	struct ct_nat_range r;

	memset(&r, 0, sizeof(r));
	r.flags = CT_NAT_RANGE_MAP_IPS;
	r.min_addr.ip4 = htonl(lo);
	r.max_addr.ip4 = htonl(hi);
	if (plo) {
		r.flags |= CT_NAT_RANGE_PROTO_SPECIFIED;
		r.min_proto = plo;
		r.max_proto = phi;
	}
	return r;
}

static void assert_audit(struct fixture *f)
{
	struct ts_audit a;

	ts_audit(f->thr, TS_AUDIT_TABLE, &a);
	if (a.violations)
		fail_msg("audit: %s", a.first);
}

/* Slots in use in every generation (the audit's count, here to say that
 * a removal took both). */
static uint64_t slots(struct fixture *f)
{
	uint64_t n = 0;

	for (struct ct_htab *h = atomic_load(&f->t->htab); h; h = atomic_load(&h->future))
		for (uint64_t i = 0; i < h->n_rows; i++)
			n += ct_row_count(&h->rows[i]);
	return n;
}

/* classify @p, source NAT it into @r, confirm: the confirm's result;
 * *@b the final binding */
static int snat(struct fixture *f, const struct ct_packet *p, const struct ct_nat_range *r,
		ct_time_ns now, struct ct_nat_binding *b)
{
	struct ct_classified cl;

	assert_int_equal(ct_classify(f->thr, p, now, &cl), 0);
	assert_int_equal(cl.cls, CT_CLASS_PENDING);
	assert_true(cl.v.flags & CT_VF_PENDING);
	assert_true(ct_pending_nat(f->thr, cl.pending, r, CT_NAT_MANIP_SRC) >= 0);
	return ct_pending_confirm(f->thr, cl.pending, b);
}

static struct fixture *setup_nat(bool exact)
{
	struct ct_table_config cfg;

	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.nat = true;
	cfg.nat_exact_ports = exact;
	return setup_with(&cfg);
}

/* A dropped first packet leaves nothing: no entry, no event, no counter
 * but the packet's; the same packet classified again is pending again. */
static void test_dropped_first_packet_leaves_nothing(void **state)
{
	struct fixture *f = setup_nat(false);
	struct ct_packet p = udp4(C1, S1, 5000, 53);
	struct ct_classified cl;
	struct ct_stats st;

	(void)state;
	assert_int_equal(ct_classify(f->thr, &p, 1 * SEC, &cl), 0);
	assert_int_equal(cl.cls, CT_CLASS_PENDING);
	assert_int_equal(cl.v.cls, CT_V_NEW);
	ct_pending_drop(f->thr, cl.pending);
	assert_int_equal(ct_table_count(f->t), 0);
	assert_int_equal(f->log.n, 0);
	ct_table_get_stats(f->t, &st);
	assert_int_equal(st.insert, 0);
	assert_int_equal(st.packets, 1);
	assert_int_equal(slots(f), 0);
	/* a confirm after the drop is refused */
	assert_int_equal(ct_pending_confirm(f->thr, cl.pending, NULL), -EINVAL);
	/* classifying the next packet drops a pending entry too */
	assert_int_equal(ct_classify(f->thr, &p, 2 * SEC, &cl), 0);
	assert_int_equal(cl.cls, CT_CLASS_PENDING);
	assert_int_equal(ct_classify(f->thr, &p, 3 * SEC, &cl), 0);
	assert_int_equal(cl.cls, CT_CLASS_PENDING);
	assert_int_equal(ct_pending_confirm(f->thr, cl.pending, NULL), CT_CONFIRM_INSERTED);
	assert_int_equal(ct_table_count(f->t), 1);
	assert_int_equal(f->log.n, 1);
	assert_int_equal(f->log.ev[0].type, CT_EV_NEW);
	/* without NAT: one slot, the reply the inverted original */
	assert_int_equal(slots(f), 1);
	assert_audit(f);
	teardown_f(f);
}

/* A source-NATed connection: found from its original tuple (ORIGINAL)
 * and from its reply tuple (REPLY), not from its inverted original (the
 * server answering the client's own address) nor its inverted reply;
 * its packets come back with their binding. */
static void test_nat_entry_is_found_from_both_keys_and_nothing_else(void **state)
{
	struct fixture *f = setup_nat(false);
	struct ct_packet p = udp4(C1, S1, 5000, 53), rp;
	struct ct_nat_range r = snat_range(NATA, NATA, 0, 0);
	struct ct_nat_binding b;
	struct ct_tuple want_reply = ts_tuple4(IPPROTO_UDP, S1, NATA, 53, 5000), inv;
	struct ct_conn_info ci;
	struct ct_classified cl;
	enum ct_dir dir;

	(void)state;
	assert_int_equal(snat(f, &p, &r, 1 * SEC, &b), CT_CONFIRM_INSERTED);
	assert_memory_equal(&b.reply, &want_reply, sizeof(want_reply));
	assert_true(b.status & CT_NAT_S_SRC);
	assert_int_equal(ct_table_lookup(f->thr, &p.tuple, &ci, &dir), 1);
	assert_int_equal(dir, CT_DIR_ORIGINAL);
	assert_memory_equal(&ci.reply, &want_reply, sizeof(want_reply));
	assert_true(ci.status & CT_ST_SRC_NAT);
	assert_true(ci.status & CT_ST_SRC_NAT_DONE);
	assert_true(ci.status & CT_ST_DST_NAT_DONE);
	assert_false(ci.status & CT_ST_DST_NAT);
	assert_int_equal(ct_table_lookup(f->thr, &want_reply, &ci, &dir), 1);
	assert_int_equal(dir, CT_DIR_REPLY);
	inv = ts_reverse(&p.tuple);
	assert_int_equal(ct_table_lookup(f->thr, &inv, &ci, &dir), 0);
	inv = ts_reverse(&want_reply);
	assert_int_equal(ct_table_lookup(f->thr, &inv, &ci, &dir), 0);
	assert_int_equal(slots(f), 2);
	/* the reply through ct_classify: TRACKED, REPLY, with the binding */
	ts_packet_of(&rp, &want_reply);
	rp.l3_len = 48;
	assert_int_equal(ct_classify(f->thr, &rp, 2 * SEC, &cl), 0);
	assert_int_equal(cl.cls, CT_CLASS_TRACKED);
	assert_int_equal(cl.v.dir, CT_DIR_REPLY);
	assert_true(cl.nat);
	assert_memory_equal(&cl.binding.orig, &p.tuple, sizeof(p.tuple));
	assert_memory_equal(&cl.binding.reply, &want_reply, sizeof(want_reply));
	/* the one-call path finds it too, from both keys */
	{
		struct ct_verdict v;

		ct_process(f->thr, &rp, 3 * SEC, &v);
		assert_int_equal(v.cls, CT_V_ESTABLISHED);
		assert_int_equal(v.dir, CT_DIR_REPLY);
		ct_process(f->thr, &p, 3 * SEC, &v);
		assert_int_equal(v.cls, CT_V_ESTABLISHED);
		assert_int_equal(v.dir, CT_DIR_ORIGINAL);
		/* the server answering the client's own address is no packet
		 * of the connection, as in the kernel: a new one, whose reply
		 * tuple (the NAT entry's original) is taken, so that its
		 * confirm fails (insert_failed, drop) */
		rp.tuple = ts_reverse(&p.tuple);
		assert_int_equal(ct_classify(f->thr, &rp, 3 * SEC, &cl), 0);
		assert_int_equal(cl.cls, CT_CLASS_PENDING);
		assert_int_equal(ct_pending_confirm(f->thr, cl.pending, NULL), -EEXIST);
		ct_process(f->thr, &rp, 3 * SEC, &v);
		assert_int_not_equal(v.cls, CT_V_ESTABLISHED);
	}
	assert_int_equal(ct_table_count(f->t), 1);
	assert_audit(f);
	teardown_f(f);
}

/* An ICMP error about a source-NATed packet, sent by the server to the
 * NAT address, is RELATED to the connection with its binding. */
static void test_icmp_error_to_the_nat_address_is_related(void **state)
{
	struct fixture *f = setup_nat(false);
	struct ct_packet p = udp4(C1, S1, 5000, 53), e;
	struct ct_nat_range r = snat_range(NATA, NATA, 0, 0);
	struct ct_nat_binding b;
	struct ct_classified cl;

	(void)state;
	assert_int_equal(snat(f, &p, &r, 1 * SEC, &b), CT_CONFIRM_INSERTED);
	/* port unreachable from S1 to NATA quoting NATA:5000 -> S1:53 */
	memset(&e, 0, sizeof(e));
	e.kind = CT_PKT_TRACKABLE;
	e.tuple = ts_tuple4(IPPROTO_ICMP, S1, NATA, 0, 3 << 8 | 3);
	e.l3_len = 76;
	e.l4_len = 56;
	e.l4_caplen = 56;
	e.u.icmp.type = 3;
	e.u.icmp.code = 3;
	e.u.icmp.is_error = true;
	e.u.icmp.inner_ok = true;
	assert_true(ct_tuple_invert(&b.reply, &e.u.icmp.inner));
	assert_int_equal(ct_classify(f->thr, &e, 2 * SEC, &cl), 0);
	assert_int_equal(cl.cls, CT_CLASS_RELATED);
	assert_int_equal(cl.v.cls, CT_V_RELATED);
	/* an error about a packet of the reply direction goes back the
	 * original way: IP_CT_RELATED_REPLY's direction is REPLY */
	assert_int_equal(cl.v.dir, CT_DIR_REPLY);
	assert_true(cl.nat);
	assert_memory_equal(&cl.binding.reply, &b.reply, sizeof(b.reply));
	teardown_f(f);
}

/* Every way out of the table takes both slots of a NAT entry: the
 * collector (expiry), a flush of the table and of a zone, a namespace's
 * teardown (walk and sweep), a protocol's end (TCP RST), early drop. */
static void fill_nat(struct fixture *f, uint16_t zone, unsigned n, ct_time_ns now)
{
	struct ct_nat_range r = snat_range(NATA, NATA, 0, 0);

	for (unsigned i = 0; i < n; i++) {
		struct ct_packet p = udp4(C1 + i, S1, (uint16_t)(1000 + i), 53);
		struct ct_nat_binding b;

		p.tuple.zone = zone;
		assert_int_equal(snat(f, &p, &r, now, &b), CT_CONFIRM_INSERTED);
	}
}

static void test_every_removal_takes_both_slots(void **state)
{
	struct fixture *f = setup_nat(false);
	struct ct_settings s;
	struct ct_gc_result res;
	uint16_t z = 7;

	(void)state;
	ct_settings_default(&s);
	s.checksum = 0;
	/* the collector: 30 s unreplied UDP */
	fill_nat(f, 0, 50, 1 * SEC);
	assert_int_equal(slots(f), 100);
	assert_audit(f);
	assert_int_equal(ct_gc_step(f->thr, 40 * SEC, 0, &res), 0);
	assert_int_equal(ct_table_count(f->t), 0);
	assert_int_equal(slots(f), 0);
	/* flush of the table */
	fill_nat(f, 0, 50, 50 * SEC);
	assert_int_equal(ct_table_flush(f->thr, -1, 51 * SEC), 50);
	assert_int_equal(slots(f), 0);
	/* a zone's flush (the walk of its slabs) */
	assert_int_equal(ct_ns_create(f->t, z, &s), 0);
	fill_nat(f, z, 50, 52 * SEC);
	fill_nat(f, 0, 10, 52 * SEC);
	assert_int_equal(ct_table_flush(f->thr, z, 53 * SEC), 50);
	assert_int_equal(slots(f), 20);
	assert_audit(f);
	/* teardown by walk, then by sweep */
	fill_nat(f, z, 50, 54 * SEC);
	assert_int_equal(ct_ns_destroy(f->thr, &z, 1, 55 * SEC, CT_NS_SYNC), 50);
	assert_int_equal(slots(f), 20);
	assert_int_equal(ct_ns_create(f->t, z, &s), 0);
	fill_nat(f, z, 50, 56 * SEC);
	assert_int_equal(ct_ns_destroy(f->thr, &z, 1, 57 * SEC, CT_NS_SYNC | CT_NS_SWEEP), 50);
	assert_int_equal(slots(f), 20);
	assert_audit(f);
	assert_int_equal(ct_table_flush(f->thr, -1, 58 * SEC), 10);
	assert_int_equal(slots(f), 0);
	teardown_f(f);
}

/* A refused TCP connection through source NAT: the RST from the server
 * to the NAT address ends it (the kernel's NEW then DESTROY), and both
 * slots go; the RST is still the connection's (TRACKED, with its binding,
 * to be translated back). */
static void test_refused_nat_connection_goes_with_both_slots(void **state)
{
	struct fixture *f = setup_nat(false);
	struct ct_packet syn = tcp4(C1, S1, 40000, 80, CT_TCP_SYN, 1000, 0, 0), rst;
	struct ct_nat_range r = snat_range(NATA, NATA, 0, 0);
	struct ct_nat_binding b;
	struct ct_classified cl;

	(void)state;
	assert_int_equal(snat(f, &syn, &r, 1 * SEC, &b), CT_CONFIRM_INSERTED);
	assert_int_equal(slots(f), 2);
	rst = tcp4(S1, NATA, 80, 40000, CT_TCP_RST | CT_TCP_ACK, 0, 1001, 0);
	assert_int_equal(ct_classify(f->thr, &rst, 2 * SEC, &cl), 0);
	assert_int_equal(cl.cls, CT_CLASS_TRACKED);
	assert_true(cl.v.flags & CT_VF_DESTROYED);
	assert_true(cl.nat);
	assert_int_equal(cl.v.dir, CT_DIR_REPLY);
	assert_int_equal(ct_table_count(f->t), 0);
	assert_int_equal(slots(f), 0);
	assert_int_equal(f->log.n, 2);
	assert_int_equal(f->log.ev[1].type, CT_EV_DESTROY);
	assert_memory_equal(&f->log.ev[1].conn.reply, &b.reply, sizeof(b.reply));
	teardown_f(f);
}

/* A full table evicts an unreplied NAT entry to make room (early drop,
 * at classify: the kernel makes room when it allocates), both slots. */
static void test_early_drop_takes_both_slots(void **state)
{
	struct ct_table_config cfg;
	struct fixture *f;
	struct ct_stats st;

	(void)state;
	crowded_cfg(&cfg, NULL);
	cfg.settings.max = 40;
	cfg.nat = true;
	f = setup_with(&cfg);
	fill_nat(f, 0, 40, 1 * SEC);
	assert_int_equal(slots(f), 80);
	fill_nat(f, 0, 0, 1 * SEC);
	{
		struct ct_packet p = udp4(C2, S2, 7, 53);
		struct ct_nat_range r = snat_range(NATA, NATA, 0, 0);
		struct ct_nat_binding b;

		assert_int_equal(snat(f, &p, &r, 2 * SEC, &b), CT_CONFIRM_INSERTED);
	}
	ct_table_get_stats(f->t, &st);
	assert_true(st.early_drop >= 1);
	assert_int_equal(slots(f), 2 * ct_table_count(f->t));
	assert_audit(f);
	teardown_f(f);
}

/* Online resize: a table of 64 rows grows while NAT entries come in;
 * after every step each entry is found from both keys (the audit), and
 * at the end every one of them. */
static void test_resize_keeps_both_keys_findable(void **state)
{
	struct ct_table_config cfg;
	struct fixture *f;
	struct ct_nat_range r = snat_range(NATA, NATB, 1024, 65535);
	static struct ct_nat_binding bs[3000];

	(void)state;
	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.settings.buckets = 64;
	cfg.nat = true;
	f = setup_with(&cfg);
	for (unsigned i = 0; i < 3000; i++) {
		struct ct_packet p = udp4(C1 + i % 200, S1 + i / 200, (uint16_t)(2000 + i), 53);

		assert_int_equal(snat(f, &p, &r, 1 * SEC, &bs[i]), CT_CONFIRM_INSERTED);
		if (i % 97 == 0) {
			ct_table_resize_step(f->t, 3);
			for (unsigned j = 0; j <= i; j += 13) {
				struct ct_conn_info ci;
				enum ct_dir d;

				assert_int_equal(ct_table_lookup(f->thr, &bs[j].orig, &ci, &d), 1);
				assert_int_equal(d, CT_DIR_ORIGINAL);
				assert_int_equal(ct_table_lookup(f->thr, &bs[j].reply, &ci, &d), 1);
				assert_int_equal(d, CT_DIR_REPLY);
			}
		}
	}
	while (ct_table_resize_step(f->t, 1000))
		;
	assert_true(ct_table_rows(f->t) > 64);
	assert_int_equal(ct_table_count(f->t), 3000);
	assert_int_equal(slots(f), 6000);
	assert_audit(f);
	teardown_f(f);
}

/*
 * Confirm clashes, as __nf_conntrack_confirm: two threads classify the
 * same first packet (neither sees the other's entry); the first to
 * confirm wins.  For UDP the second merges into it when their tuples are
 * the same (clash_resolve), goes in under its reply tuple only, with
 * IPS_NAT_CLASH, when only its original tuple clashes; for TCP it is
 * refused (insert_failed, drop).
 */
struct racer {
	struct ct_thread *thr;
	struct ct_classified cl;
};

static void race_pending(struct fixture *f, struct racer *r2, const struct ct_packet *p,
			 struct ct_classified *cl1)
{
	assert_int_equal(ct_classify(f->thr, p, 1 * SEC, cl1), 0);
	assert_int_equal(cl1->cls, CT_CLASS_PENDING);
	assert_int_equal(ct_classify(r2->thr, p, 1 * SEC, &r2->cl), 0);
	assert_int_equal(r2->cl.cls, CT_CLASS_PENDING);
}

static void test_confirm_clashes_are_resolved_as_the_kernel_does(void **state)
{
	struct fixture *f = setup_nat(false);
	struct racer r2;

	memset(&r2, 0, sizeof(r2));
	r2.thr = ct_thread_attach(f->t);
	struct ct_packet p = udp4(C1, S1, 5000, 53);
	struct ct_nat_range ra = snat_range(NATA, NATA, 0, 0), rb = snat_range(NATB, NATB, 0, 0);
	struct ct_classified cl1;
	struct ct_nat_binding b1, b2;
	struct ct_conn_info ci;
	struct ct_stats st;
	enum ct_dir d;

	(void)state;
	assert_non_null(r2.thr);
	/* the same tuples: merged */
	race_pending(f, &r2, &p, &cl1);
	assert_true(ct_pending_nat(f->thr, cl1.pending, &ra, CT_NAT_MANIP_SRC) >= 0);
	assert_true(ct_pending_nat(r2.thr, r2.cl.pending, &ra, CT_NAT_MANIP_SRC) >= 0);
	assert_int_equal(ct_pending_confirm(r2.thr, r2.cl.pending, &b2), CT_CONFIRM_INSERTED);
	assert_int_equal(ct_pending_confirm(f->thr, cl1.pending, &b1), CT_CONFIRM_MERGED);
	assert_memory_equal(&b1.reply, &b2.reply, sizeof(b1.reply));
	ct_table_get_stats(f->t, &st);
	assert_int_equal(st.clash_resolve, 1);
	assert_int_equal(st.insert, 1);
	assert_int_equal(ct_table_count(f->t), 1);
	assert_int_equal(ct_table_flush(f->thr, -1, 2 * SEC), 1);

	/* different NAT addresses: the loser under its reply only */
	race_pending(f, &r2, &p, &cl1);
	assert_true(ct_pending_nat(f->thr, cl1.pending, &rb, CT_NAT_MANIP_SRC) >= 0);
	assert_true(ct_pending_nat(r2.thr, r2.cl.pending, &ra, CT_NAT_MANIP_SRC) >= 0);
	assert_int_equal(ct_pending_confirm(r2.thr, r2.cl.pending, &b2), CT_CONFIRM_INSERTED);
	assert_int_equal(ct_pending_confirm(f->thr, cl1.pending, &b1), CT_CONFIRM_REPLY_ONLY);
	assert_true(b1.status & CT_NAT_S_CLASH);
	assert_int_equal(ct_table_count(f->t), 2);
	/* the original tuple finds the winner; each reply its own */
	assert_int_equal(ct_table_lookup(f->thr, &p.tuple, &ci, &d), 1);
	assert_memory_equal(&ci.reply, &b2.reply, sizeof(b2.reply));
	assert_false(ci.status & CT_ST_NAT_CLASH);
	assert_int_equal(ct_table_lookup(f->thr, &b1.reply, &ci, &d), 1);
	assert_int_equal(d, CT_DIR_REPLY);
	assert_true(ci.status & CT_ST_NAT_CLASH);
	/* the kernel gives the loser 1 s */
	assert_int_equal(ci.expires, 2 * SEC);
	assert_int_equal(slots(f), 3);
	assert_audit(f);
	ct_table_get_stats(f->t, &st);
	assert_int_equal(st.clash_resolve, 2);
	assert_int_equal(ct_table_flush(f->thr, -1, 2 * SEC), 2);
	assert_int_equal(slots(f), 0);

	/* TCP: no clash allowed */
	{
		struct ct_packet syn = tcp4(C1, S1, 40000, 80, CT_TCP_SYN, 1000, 0, 0);

		race_pending(f, &r2, &syn, &cl1);
		assert_int_equal(ct_pending_confirm(r2.thr, r2.cl.pending, NULL),
				 CT_CONFIRM_INSERTED);
		assert_int_equal(ct_pending_confirm(f->thr, cl1.pending, NULL), -EEXIST);
		ct_table_get_stats(f->t, &st);
		assert_int_equal(st.insert_failed, 1);
		assert_int_equal(st.drop, 1);
		assert_int_equal(ct_table_count(f->t), 1);
	}
	assert_audit(f);
	ct_thread_detach(r2.thr);
	teardown_f(f);
}

/*
 * The null binding (nf_nat_inet_fn): a connection no rule maps keeps its
 * tuple - unless its reply tuple is taken, and then its source port
 * changes.  The kernel's own example (nf_nat_used_tuple): a connection
 * C1:1000 -> S1:80 source-NATed to NATA:1000, then the NAT box itself
 * connects NATA:1000 -> S1:80: the same reply tuple, so it gets another
 * port, and its entry a NAT extension (IPS_SRC_NAT).  TCP: for UDP the
 * kernel's nf_nat_used_tuple_new calls the original free when no entry
 * holds it as a reply (its "clashing entry went away"), keeps it, and
 * drops the packet at confirm - also pinned below.
 */
static void test_null_binding_moves_a_clashing_port(void **state)
{
	struct fixture *f = setup_nat(false);
	struct ct_packet p1 = tcp4(C1, S1, 1000, 80, CT_TCP_SYN, 1, 0, 0);
	struct ct_packet p2 = tcp4(NATA, S1, 1000, 80, CT_TCP_SYN, 1, 0, 0);
	struct ct_nat_range r = snat_range(NATA, NATA, 0, 0);
	struct ct_nat_binding b1, b2;
	struct ct_classified cl;

	(void)state;
	assert_int_equal(snat(f, &p1, &r, 1 * SEC, &b1), CT_CONFIRM_INSERTED);
	assert_int_equal(b1.reply.dport, 1000);
	assert_int_equal(ct_classify(f->thr, &p2, 2 * SEC, &cl), 0);
	assert_int_equal(cl.cls, CT_CLASS_PENDING);
	assert_int_equal(ct_pending_confirm(f->thr, cl.pending, &b2), CT_CONFIRM_INSERTED);
	assert_true(b2.status & CT_NAT_S_SRC);
	assert_int_not_equal(b2.reply.dport, 1000);
	/* 1000 is in 1024's class? no: the class below 1024 is 600-1023 */
	assert_true(b2.reply.dport >= 600 && b2.reply.dport <= 1023);
	assert_int_equal(b2.reply.dst.ip4, htonl(NATA));
	/* UDP: kept, then refused at confirm */
	{
		struct ct_packet u1 = udp4(C1, S1, 1000, 80), u2 = udp4(NATA, S1, 1000, 80);
		struct ct_nat_binding bu;

		assert_int_equal(snat(f, &u1, &r, 1 * SEC, &bu), CT_CONFIRM_INSERTED);
		assert_int_equal(ct_classify(f->thr, &u2, 2 * SEC, &cl), 0);
		assert_int_equal(ct_pending_confirm(f->thr, cl.pending, &bu), -EEXIST);
		assert_false(bu.status & CT_NAT_S_MASK);
	}
	/* and a third connection no rule maps and nothing clashes with:
	 * unchanged, one slot */
	{
		struct ct_packet p3 = udp4(C2, S2, 3000, 80);
		struct ct_nat_binding b3;

		assert_int_equal(ct_classify(f->thr, &p3, 3 * SEC, &cl), 0);
		assert_int_equal(ct_pending_confirm(f->thr, cl.pending, &b3), CT_CONFIRM_INSERTED);
		assert_false(b3.status & CT_NAT_S_MASK);
		assert_true((b3.status & CT_NAT_S_DONE_MASK) == CT_NAT_S_DONE_MASK);
	}
	assert_int_equal(slots(f), 2 + 2 + 2 + 1);
	assert_audit(f);
	teardown_f(f);
}

/*
 * The source index (find_appropriate_src): a second connection from the
 * same source (address and port) to another server reuses the first's
 * mapping, even into a range where jhash2 could pick another address;
 * once the first is gone the index forgets it, so a third connection from
 * that source takes the address jhash2 gives it as if it were the first
 * (the same as the first's, as its hash input is the same but for the
 * destination word - so the test compares with a fresh table's choice).
 */
static void test_source_index_reuses_and_forgets_a_mapping(void **state)
{
	struct fixture *f = setup_nat(false), *g = setup_nat(false);
	struct ct_nat_range r = snat_range(NATA, NATA + 50, 0, 0);
	struct ct_packet p1 = udp4(C1, S1, 6000, 53);
	struct ct_nat_binding b1, b2, b3, fresh;
	unsigned reused = 0;

	(void)state;
	assert_int_equal(snat(f, &p1, &r, 1 * SEC, &b1), CT_CONFIRM_INSERTED);
	for (uint32_t s = 0; s < 20; s++) {
		struct ct_packet p2 = udp4(C1, S2 + s, 6000, 53);

		assert_int_equal(snat(f, &p2, &r, 1 * SEC, &b2), CT_CONFIRM_INSERTED);
		assert_int_equal(b2.reply.dst.ip4, b1.reply.dst.ip4);
		assert_int_equal(b2.reply.dport, b1.reply.dport);
		reused++;
	}
	assert_int_equal(reused, 20);
	/* all gone: the index is empty, the choice is a fresh table's */
	assert_int_equal(ct_table_flush(f->thr, -1, 2 * SEC), 21);
	{
		struct ct_packet p3 = udp4(C1, S2 + 7, 6000, 53);

		assert_int_equal(snat(f, &p3, &r, 3 * SEC, &b3), CT_CONFIRM_INSERTED);
		assert_int_equal(snat(g, &p3, &r, 3 * SEC, &fresh), CT_CONFIRM_INSERTED);
		assert_memory_equal(&b3.reply, &fresh.reply, sizeof(fresh.reply));
	}
	assert_audit(f);
	teardown_f(g);
	teardown_f(f);
}

/*
 * The source index's bucket filter (nat_table.c): a chain's filter covers
 * what is left of it after unlinks at its head and in its middle, so the
 * mapping of the one connection that is left is still found.  Six
 * connections from one source (same address and port) to six servers,
 * all mapped to NATB (the first's range holds only it; the others reuse
 * it); the newest, a middle one and two more are deleted, leaving the
 * oldest and one other.  A seventh connection from that source, into a
 * range of 51 addresses, reuses NATB:6000 - where a fresh table (no
 * mapping to find) picks another address for it, as jhash2 does.
 */
static void test_source_index_filter_survives_unlinks(void **state)
{
	struct fixture *f = setup_nat(false), *g = setup_nat(false);
	struct ct_nat_range one = snat_range(NATB, NATB, 0, 0);
	struct ct_nat_range wide = snat_range(NATA, NATA + 50, 0, 0);
	struct ct_nat_binding b, fresh;
	static const unsigned gone[] = { 5, 3, 4, 1 };   /* head first, then middles */
	struct ct_packet p7;
	uint32_t srv = 0;

	(void)state;
	for (uint32_t s = 0; s < 6; s++) {
		struct ct_packet p = udp4(C1, S1 + s, 6000, 53);

		assert_int_equal(snat(f, &p, &one, 1 * SEC, &b), CT_CONFIRM_INSERTED);
		assert_int_equal(b.reply.dst.ip4, htonl(NATB));
		assert_int_equal(b.reply.dport, 6000);
	}
	for (unsigned i = 0; i < sizeof(gone) / sizeof(gone[0]); i++) {
		struct ct_packet p = udp4(C1, S1 + gone[i], 6000, 53);

		assert_int_equal(ct_table_delete(f->thr, &p.tuple, 2 * SEC, NULL), 1);
	}
	assert_int_equal(ct_table_count(f->t), 2);
	/* a server for which a fresh table's choice is not NATB */
	for (srv = S2 + 100; srv < S2 + 200; srv++) {
		p7 = udp4(C1, srv, 6000, 53);
		assert_int_equal(snat(g, &p7, &wide, 3 * SEC, &fresh), CT_CONFIRM_INSERTED);
		if (fresh.reply.dst.ip4 != htonl(NATB))
			break;
	}
	assert_true(srv < S2 + 200);
	assert_int_equal(snat(f, &p7, &wide, 3 * SEC, &b), CT_CONFIRM_INSERTED);
	assert_int_equal(b.reply.dst.ip4, htonl(NATB));
	assert_int_equal(b.reply.dport, 6000);
	assert_audit(f);
	teardown_f(g);
	teardown_f(f);
}

/*
 * The port search's last probes (nf_nat_used_tuple_harder): every port
 * of a 4-port range to one server is held by a connection in TIME_WAIT;
 * a new SYN whose sequence number has passed theirs evicts one (its
 * DESTROY event, cause REOPEN) and takes its port; one whose sequence
 * number has not is exhausted: nat_exhausted, and its confirm fails as
 * the kernel's does (insert_failed, drop).
 */
static void close_to_time_wait(struct fixture *f, const struct ct_nat_binding *b,
			       uint32_t iss, ct_time_ns now)
{
	uint32_t srv = 50000;
	struct ct_packet pk;
	struct ct_verdict v;
	uint32_t nat = ntohl(b->reply.dst.ip4), cli = ntohl(b->orig.src.ip4);
	uint16_t np = b->reply.dport, cp = b->orig.sport;

	pk = tcp4(S1, nat, 80, np, CT_TCP_SYN | CT_TCP_ACK, srv, iss + 1, 0);
	ct_process(f->thr, &pk, now, &v);
	assert_int_equal(v.cls, CT_V_ESTABLISHED);
	pk = tcp4(cli, S1, cp, 80, CT_TCP_ACK, iss + 1, srv + 1, 0);
	ct_process(f->thr, &pk, now, &v);
	pk = tcp4(cli, S1, cp, 80, CT_TCP_FIN | CT_TCP_ACK, iss + 1, srv + 1, 0);
	ct_process(f->thr, &pk, now, &v);
	pk = tcp4(S1, nat, 80, np, CT_TCP_FIN | CT_TCP_ACK, srv + 1, iss + 2, 0);
	ct_process(f->thr, &pk, now, &v);
	pk = tcp4(cli, S1, cp, 80, CT_TCP_ACK, iss + 2, srv + 2, 0);
	ct_process(f->thr, &pk, now, &v);
	assert_int_equal(v.l4state, CT_TCP_TIME_WAIT);
}

static void test_search_evicts_a_time_wait_entry_whose_sequence_passed(void **state)
{
	struct fixture *f = setup_nat(false);
	struct ct_nat_range r = snat_range(NATA, NATA, 1000, 1003);
	struct ct_nat_binding b;
	struct ct_classified cl;
	struct ct_stats st;
	int n_ev;

	(void)state;
	for (uint16_t i = 0; i < 4; i++) {
		struct ct_packet syn = tcp4(C1 + i, S1, 30000, 80, CT_TCP_SYN, 1000, 0, 0);

		assert_int_equal(snat(f, &syn, &r, 1 * SEC, &b), CT_CONFIRM_INSERTED);
		assert_true(b.reply.dport >= 1000 && b.reply.dport <= 1003);
		close_to_time_wait(f, &b, 1000, 2 * SEC);
	}
	/* a SYN with a lower sequence number: nothing to evict */
	{
		struct ct_packet syn = tcp4(C2 + 10, S1, 30000, 80, CT_TCP_SYN, 500, 0, 0);

		assert_int_equal(ct_classify(f->thr, &syn, 3 * SEC, &cl), 0);
		assert_int_equal(ct_pending_nat(f->thr, cl.pending, &r, CT_NAT_MANIP_SRC),
				 CT_NAT_BOUND_TAKEN);
		assert_int_equal(ct_pending_confirm(f->thr, cl.pending, NULL), -EEXIST);
		ct_table_get_stats(f->t, &st);
		assert_int_equal(st.nat_exhausted, 1);
		assert_int_equal(st.insert_failed, 1);
		assert_int_equal(ct_table_count(f->t), 4);
	}
	/* one that passed theirs: one TIME_WAIT entry goes */
	n_ev = f->log.n;
	{
		struct ct_packet syn = tcp4(C2 + 11, S1, 30000, 80, CT_TCP_SYN, 900000, 0, 0);

		assert_int_equal(snat(f, &syn, &r, 4 * SEC, &b), CT_CONFIRM_INSERTED);
		assert_true(b.reply.dport >= 1000 && b.reply.dport <= 1003);
	}
	assert_int_equal(ct_table_count(f->t), 4);
	assert_int_equal(f->log.ev[n_ev].type, CT_EV_DESTROY);
	assert_int_equal(f->log.ev[n_ev].destroy_cause, CT_DESTROY_REOPEN);
	assert_int_equal(f->log.ev[n_ev].conn.reply.dport, b.reply.dport);
	assert_audit(f);
	teardown_f(f);
}

/* With the exact port map, a range nearly full toward one server still
 * gives every new connection a free port (the kernel's 248 probes miss
 * some), and the map follows removals. */
static void test_exact_ports_fill_a_range_to_the_last_port(void **state)
{
	struct fixture *f = setup_nat(true);
	struct ct_nat_range r = snat_range(NATA, NATA, 2000, 2499);
	bool seen[500] = { 0 };
	struct ct_nat_binding b;

	(void)state;
	for (unsigned i = 0; i < 500; i++) {
		struct ct_packet p = udp4(C1 + i, S1, 7000, 53);

		assert_int_equal(snat(f, &p, &r, 1 * SEC, &b), CT_CONFIRM_INSERTED);
		assert_true(b.reply.dport >= 2000 && b.reply.dport <= 2499);
		assert_false(seen[b.reply.dport - 2000]);
		seen[b.reply.dport - 2000] = true;
	}
	/* full: exhausted */
	{
		struct ct_packet p = udp4(C2 + 1000, S1, 7000, 53);
		struct ct_classified cl;

		assert_int_equal(ct_classify(f->thr, &p, 1 * SEC, &cl), 0);
		assert_int_equal(ct_pending_nat(f->thr, cl.pending, &r, CT_NAT_MANIP_SRC),
				 CT_NAT_BOUND_TAKEN);
		ct_pending_drop(f->thr, cl.pending);
	}
	/* one leaves (a flush of all, then 499 back): the last one gets the
	 * port the map was told is free */
	assert_int_equal(ct_table_flush(f->thr, -1, 2 * SEC), 500);
	memset(seen, 0, sizeof(seen));
	for (unsigned i = 0; i < 500; i++) {
		struct ct_packet p = udp4(C1 + i, S1, 7000, 53);

		assert_int_equal(snat(f, &p, &r, 3 * SEC, &b), CT_CONFIRM_INSERTED);
		assert_false(seen[b.reply.dport - 2000]);
		seen[b.reply.dport - 2000] = true;
	}
	assert_audit(f);
	teardown_f(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dropped_first_packet_leaves_nothing),
		cmocka_unit_test(test_nat_entry_is_found_from_both_keys_and_nothing_else),
		cmocka_unit_test(test_icmp_error_to_the_nat_address_is_related),
		cmocka_unit_test(test_every_removal_takes_both_slots),
		cmocka_unit_test(test_refused_nat_connection_goes_with_both_slots),
		cmocka_unit_test(test_early_drop_takes_both_slots),
		cmocka_unit_test(test_resize_keeps_both_keys_findable),
		cmocka_unit_test(test_confirm_clashes_are_resolved_as_the_kernel_does),
		cmocka_unit_test(test_null_binding_moves_a_clashing_port),
		cmocka_unit_test(test_source_index_reuses_and_forgets_a_mapping),
		cmocka_unit_test(test_source_index_filter_survives_unlinks),
		cmocka_unit_test(test_search_evicts_a_time_wait_entry_whose_sequence_passed),
		cmocka_unit_test(test_exact_ports_fill_a_range_to_the_last_port),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
