/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_record_nat.c - NAT bindings through records (include/ctrack/
 * record.h: the reply tuple and the kernel's IPS_*NAT* bits; the state
 * file's version 2).
 *
 *  - The check: a binding is accepted when what differs between its reply
 *    tuple and the inverted original is what its bits say (source NAT:
 *    the reply's destination; destination NAT: its source; an ICMP id
 *    under either), and every other combination is refused for its reason.
 *  - Through a table: NATed entries made by the two-step path (source NAT,
 *    destination NAT, both, ICMP) are exported with the reply tuple and
 *    bits the table lists, survive the encoding, and imported into a fresh
 *    NAT table are found from both keys (the shared audit: one slot and a
 *    second for each NAT entry); they export again equal.
 *  - The restored table chooses as the original one goes on: a later
 *    connection from a restored source reuses its mapping
 *    (find_appropriate_src) where a fresh table would hash it elsewhere;
 *    the source index and the exact port map count the restored entries
 *    and forget them when they go.
 *  - The import's refusals: a key a live entry holds, either one (-EEXIST,
 *    the table unchanged); a binding into a table without NAT
 *    (CT_RECORD_R_NAT_OFF); a null binding there goes in plain.  A
 *    restored IPS_NAT_CLASH entry goes in under its reply tuple only.
 *  - The state file: a table with NAT saves as version 2 and restores the
 *    same; a version 1 file with a NAT record is damaged.
 *
 * Expected values come from the rules (the addresses the test gives the
 * ranges, the kernel's lookup rule) or from a table that never went
 * through a record, never from the record layer itself.
 */
#include "../table/table_fixture.h"
#include "support/audit.h"
#include "ctrack/nat.h"
#include "ctrack/record.h"
#include "ctrack/statefile.h"
#include "nat/nat_priv.h"

#include <stdio.h>
#include <unistd.h>

#define C1 0x0a000001u
#define S1 0xc0a80001u
#define S2 0xc0a80002u
#define NATA 0xc6336401u  /* 198.51.100.1 */
#define BACK 0xac100005u  /* a DNAT backend, 172.16.0.5 */

static struct ct_nat_range range4(uint32_t lo, uint32_t hi, uint16_t plo, uint16_t phi)
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

static struct fixture *nat_table(bool nat, bool exact)
{
	struct ct_table_config cfg;

	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.settings.acct = 1;
	cfg.settings.timestamp = 1;
	cfg.nat = nat;
	cfg.nat_exact_ports = exact;
	return setup_with(&cfg);
}

static void assert_audit(struct fixture *f)
{
	struct ts_audit a;

	ts_audit(f->thr, TS_AUDIT_TABLE | TS_AUDIT_RESTORED, &a);
	if (a.violations)
		fail_msg("audit: %s", a.first);
}

/* classify @p, set up @dst / @src (NULL: none), confirm */
static int nat_bind(struct fixture *f, const struct ct_packet *p, const struct ct_nat_range *dst,
		const struct ct_nat_range *src, ct_time_ns now, struct ct_nat_binding *b)
{
	struct ct_classified cl;

	assert_int_equal(ct_classify(f->thr, p, now, &cl), 0);
	assert_int_equal(cl.cls, CT_CLASS_PENDING);
	if (dst)
		assert_true(ct_pending_nat(f->thr, cl.pending, dst, CT_NAT_MANIP_DST) >= 0);
	if (src)
		assert_true(ct_pending_nat(f->thr, cl.pending, src, CT_NAT_MANIP_SRC) >= 0);
	return ct_pending_confirm(f->thr, cl.pending, b);
}

/* ---- records by hand, for the check ---- */

static void base_record(struct ct_record *r, uint8_t l4)
{
	memset(r, 0, sizeof(*r));
	r->version = CT_RECORD_VERSION;
	r->orig = ts_tuple4(l4, C1, S1, l4 == IPPROTO_ICMP ? 77 : 40000,
			    l4 == IPPROTO_ICMP ? 8 << 8 : 80);
	assert_true(ct_tuple_invert(&r->orig, &r->reply));
	r->status = CT_ST_CONFIRMED | CT_ST_NAT_DONE_MASK;
	r->timeout_ns = 30 * SEC;
	if (l4 == IPPROTO_TCP)
		r->l4state = 3;    /* ESTABLISHED */
}

static void snat_of(struct ct_record *r, uint32_t addr, uint16_t port)
{
	r->status |= CT_ST_SRC_NAT;
	r->reply.dst.ip4 = htonl(addr);
	if (port)
		r->reply.dport = port;
}

static void dnat_of(struct ct_record *r, uint32_t addr, uint16_t port)
{
	r->status |= CT_ST_DST_NAT;
	r->reply.src.ip4 = htonl(addr);
	if (port)
		r->reply.sport = port;
}

static void consistent_bindings_are_accepted_and_others_refused(void **state)
{
	struct ct_record r;

	(void)state;
	/* accepted: null binding, SNAT, DNAT, both, an ICMP id either way,
	 * the loser of a UDP clash */
	base_record(&r, IPPROTO_TCP);
	assert_int_equal(ct_record_check(&r), CT_RECORD_OK);
	snat_of(&r, NATA, 1024);
	assert_int_equal(ct_record_check(&r), CT_RECORD_OK);
	dnat_of(&r, BACK, 8080);
	assert_int_equal(ct_record_check(&r), CT_RECORD_OK);
	base_record(&r, IPPROTO_TCP);
	dnat_of(&r, BACK, 0);
	assert_int_equal(ct_record_check(&r), CT_RECORD_OK);
	base_record(&r, IPPROTO_ICMP);
	r.status |= CT_ST_SRC_NAT;
	r.reply.sport = 1234;           /* only the id changed */
	assert_int_equal(ct_record_check(&r), CT_RECORD_OK);
	r.status ^= CT_ST_SRC_NAT | CT_ST_DST_NAT;
	assert_int_equal(ct_record_check(&r), CT_RECORD_OK);
	base_record(&r, IPPROTO_UDP);
	snat_of(&r, NATA, 0);
	r.status |= CT_ST_NAT_CLASH;
	assert_int_equal(ct_record_check(&r), CT_RECORD_OK);

	/* refused: a side changed that no bit names */
	base_record(&r, IPPROTO_TCP);
	r.reply.dst.ip4 = htonl(NATA);
	assert_int_equal(ct_record_check(&r), CT_RECORD_R_REPLY);
	base_record(&r, IPPROTO_TCP);
	snat_of(&r, NATA, 0);
	r.reply.sport ^= 1;             /* the source side, without DST_NAT */
	assert_int_equal(ct_record_check(&r), CT_RECORD_R_REPLY);
	/* a bit whose side is unchanged */
	base_record(&r, IPPROTO_TCP);
	r.status |= CT_ST_SRC_NAT;
	assert_int_equal(ct_record_check(&r), CT_RECORD_R_REPLY);
	base_record(&r, IPPROTO_TCP);
	snat_of(&r, NATA, 0);
	r.status |= CT_ST_DST_NAT;
	assert_int_equal(ct_record_check(&r), CT_RECORD_R_REPLY);
	/* ICMP: an id change without a bit, a type change */
	base_record(&r, IPPROTO_ICMP);
	r.reply.sport = 1234;
	assert_int_equal(ct_record_check(&r), CT_RECORD_R_REPLY);
	base_record(&r, IPPROTO_ICMP);
	snat_of(&r, NATA, 0);
	r.reply.dport = 13 << 8;
	assert_int_equal(ct_record_check(&r), CT_RECORD_R_REPLY);
	/* the reply in another family or with IPv4's unused bytes set */
	base_record(&r, IPPROTO_TCP);
	snat_of(&r, NATA, 0);
	r.reply.dst.ip6[9] = 1;
	assert_int_equal(ct_record_check(&r), CT_RECORD_R_REPLY);
	/* bits that cannot be together */
	base_record(&r, IPPROTO_TCP);
	snat_of(&r, NATA, 0);
	r.status &= ~(uint32_t)CT_ST_SRC_NAT_DONE;
	assert_int_equal(ct_record_check(&r), CT_RECORD_R_NAT);
	base_record(&r, IPPROTO_TCP);
	dnat_of(&r, BACK, 0);
	r.status &= ~(uint32_t)CT_ST_DST_NAT_DONE;
	assert_int_equal(ct_record_check(&r), CT_RECORD_R_NAT);
	base_record(&r, IPPROTO_TCP);
	r.status |= CT_ST_NAT_CLASH;       /* TCP never clashes */
	assert_int_equal(ct_record_check(&r), CT_RECORD_R_NAT);
	base_record(&r, IPPROTO_UDP);
	r.status &= ~(uint32_t)CT_ST_NAT_DONE_MASK;
	r.status |= CT_ST_NAT_CLASH;       /* a clash without NAT set up */
	assert_int_equal(ct_record_check(&r), CT_RECORD_R_NAT);
	base_record(&r, IPPROTO_TCP);
	r.nat.len = 1;
	assert_int_equal(ct_record_check(&r), CT_RECORD_R_NAT);
	/* IPS_SEQ_ADJUST: a helper's, which ctrack has not */
	base_record(&r, IPPROTO_TCP);
	r.status |= 0x40;
	assert_int_equal(ct_record_check(&r), CT_RECORD_R_STATUS);
}

/* ---- through a table ---- */

struct recs {
	unsigned n;
	struct ct_record r[64];
};

static int grab(const struct ct_record *r, void *arg)
{
	struct recs *x = arg;

	assert_true(x->n < 64);
	x->r[x->n++] = *r;
	return 0;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct ct_record *x = a, *y = b;

	return memcmp(&x->orig, &y->orig, sizeof(x->orig));
}

static void export_sorted(struct fixture *f, ct_time_ns now, struct recs *x)
{
	x->n = 0;
	assert_int_equal(ct_record_export(f->thr, -1, now, grab, x), 0);
	qsort(x->r, x->n, sizeof(x->r[0]), cmp_rec);
	for (unsigned i = 0; i < x->n; i++)
		x->r[i].id = 0;
}

/* A NAT table with one of each: source NAT (port kept, port changed by
 * a clash), destination NAT with a port, both, ICMP, an un-NATed flow. */
static void fill_mixed(struct fixture *f, ct_time_ns now)
{
	struct ct_nat_range sn = range4(NATA, NATA, 0, 0);
	struct ct_nat_range dn = range4(BACK, BACK, 8080, 8080);
	struct ct_nat_binding b;
	struct ct_packet p;

	p = udp4(C1, S1, 5000, 53);
	assert_int_equal(nat_bind(f, &p, NULL, &sn, now, &b), CT_CONFIRM_INSERTED);
	assert_int_equal(b.status & CT_NAT_S_MASK, CT_NAT_S_SRC);
	/* the same source port from another client: the port must change */
	p = udp4(C1 + 1, S1, 5000, 53);
	assert_int_equal(nat_bind(f, &p, NULL, &sn, now, &b), CT_CONFIRM_INSERTED);
	assert_int_not_equal(b.reply.dport, 5000);
	p = tcp4(C1 + 2, S2, 41000, 80, CT_TCP_SYN, 100, 0, 0);
	assert_int_equal(nat_bind(f, &p, &dn, NULL, now, &b), CT_CONFIRM_INSERTED);
	assert_int_equal(b.reply.src.ip4, htonl(BACK));
	assert_int_equal(b.reply.sport, 8080);
	p = tcp4(C1 + 3, S2, 41001, 80, CT_TCP_SYN, 100, 0, 0);
	assert_int_equal(nat_bind(f, &p, &dn, &sn, now, &b), CT_CONFIRM_INSERTED);
	assert_int_equal(b.status & CT_NAT_S_MASK, CT_NAT_S_MASK);
	{
		struct ct_tuple it = ts_tuple4(IPPROTO_ICMP, C1 + 4, S1, 99, 8 << 8);

		ts_packet_of(&p, &it);
		assert_int_equal(nat_bind(f, &p, NULL, &sn, now, &b), CT_CONFIRM_INSERTED);
	}
	p = udp4(C1 + 5, S2, 6000, 53);
	assert_int_equal(nat_bind(f, &p, NULL, NULL, now, &b), CT_CONFIRM_INSERTED);
	assert_int_equal(b.status & CT_NAT_S_MASK, 0);
}

static void nat_entries_go_through_records_and_come_back_whole(void **state)
{
	struct fixture *a = nat_table(true, false), *b = nat_table(true, false);
	static struct recs ra, rb;
	enum ct_record_reason why;
	unsigned natted = 0;

	(void)state;
	fill_mixed(a, 1 * SEC);
	export_sorted(a, 2 * SEC, &ra);
	assert_int_equal(ra.n, 6);
	for (unsigned i = 0; i < ra.n; i++) {
		struct ct_record *r = &ra.r[i], d;
		struct ct_conn_info ci;
		uint8_t buf[CT_RECORD_ENC_MAX];
		size_t n;
		enum ct_dir dir;

		/* the record's binding is the one the table lists */
		assert_int_equal(ct_table_lookup(a->thr, &r->orig, &ci, &dir), 1);
		assert_int_equal(dir, CT_DIR_ORIGINAL);
		assert_memory_equal(&ci.reply, &r->reply, sizeof(ci.reply));
		assert_int_equal(r->status & (CT_ST_NAT_MASK | CT_ST_NAT_DONE_MASK),
				 ci.status & (CT_ST_NAT_MASK | CT_ST_NAT_DONE_MASK));
		assert_int_equal(r->status & CT_ST_NAT_DONE_MASK, CT_ST_NAT_DONE_MASK);
		natted += (r->status & CT_ST_NAT_MASK) != 0;
		assert_int_equal(ct_record_check(r), CT_RECORD_OK);
		n = ct_record_encode(r, buf, sizeof(buf), &why);
		assert_true(n > 0);
		assert_int_equal(ct_record_decode(buf, n, &d, &why), n);
		assert_memory_equal(&d.reply, &r->reply, sizeof(d.reply));
		assert_int_equal(d.status, r->status);
		/* a byte less is a wrong length, never another record */
		assert_int_equal(ct_record_decode(buf, n - 1, &d, &why), 0);
		assert_int_equal(ct_record_import(b->thr, r, 2 * SEC, 0, 0, &why), 1);
	}
	assert_int_equal(natted, 5);
	assert_audit(b);
	for (unsigned i = 0; i < ra.n; i++) {
		struct ct_conn_info ci;
		enum ct_dir dir;

		assert_int_equal(ct_table_lookup(b->thr, &ra.r[i].orig, &ci, &dir), 1);
		assert_int_equal(dir, CT_DIR_ORIGINAL);
		assert_int_equal(ct_table_lookup(b->thr, &ra.r[i].reply, &ci, &dir), 1);
		assert_int_equal(dir, CT_DIR_REPLY);
	}
	export_sorted(b, 2 * SEC, &rb);
	assert_int_equal(rb.n, ra.n);
	assert_memory_equal(rb.r, ra.r, ra.n * sizeof(ra.r[0]));
	/* a reply packet of a restored SNAT entry is its REPLY, with the
	 * binding that translates it back */
	{
		struct ct_classified cl;
		struct ct_packet p;

		ts_packet_of(&p, &ra.r[0].reply);
		for (unsigned i = 0; i < ra.n; i++)
			if ((ra.r[i].status & CT_ST_SRC_NAT) && ra.r[i].orig.l4 == IPPROTO_UDP) {
				ts_packet_of(&p, &ra.r[i].reply);
				break;
			}
		assert_int_equal(ct_classify(b->thr, &p, 3 * SEC, &cl), 0);
		assert_int_equal(cl.cls, CT_CLASS_TRACKED);
		assert_int_equal(cl.v.dir, CT_DIR_REPLY);
		assert_true(cl.nat);
		assert_true(cl.binding.status & CT_NAT_S_SRC);
	}
	teardown_f(b);
	teardown_f(a);
}

/* A source NATed into a range goes on being mapped as it was: a new
 * connection from it (another server) reuses its mapping in the table it
 * was made in and in the table restored from its record; a fresh table
 * hashes it to another address (the servers are chosen so that it
 * does).  The index counts the restored entries and forgets them. */
static void a_restored_source_mapping_is_reused(void **state)
{
	struct ct_nat_range r = range4(NATA, NATA + 50, 0, 0);
	struct ct_nat_binding b1, b_cont, b_rest, b_fresh;
	uint64_t indexed, keys;
	bool differs = false;

	(void)state;
	for (uint32_t s = 0; s < 64 && !differs; s++) {
		struct fixture *a = nat_table(true, false), *b = nat_table(true, false),
			       *g = nat_table(true, false);
		struct ct_packet p1 = udp4(C1, S1, 6000, 53), p2 = udp4(C1, S2 + s, 6000, 53);
		static struct recs ra;
		enum ct_record_reason why;

		assert_int_equal(nat_bind(a, &p1, NULL, &r, 1 * SEC, &b1), CT_CONFIRM_INSERTED);
		export_sorted(a, 1 * SEC, &ra);
		assert_int_equal(ra.n, 1);
		assert_int_equal(ct_record_import(b->thr, &ra.r[0], 1 * SEC, 0, 0, &why), 1);
		ct_nat_table_census(b->t, &indexed, &keys);
		assert_int_equal(indexed, 1);
		assert_int_equal(nat_bind(a, &p2, NULL, &r, 2 * SEC, &b_cont), CT_CONFIRM_INSERTED);
		assert_int_equal(nat_bind(b, &p2, NULL, &r, 2 * SEC, &b_rest), CT_CONFIRM_INSERTED);
		assert_int_equal(nat_bind(g, &p2, NULL, &r, 2 * SEC, &b_fresh), CT_CONFIRM_INSERTED);
		/* find_appropriate_src: the first connection's mapping */
		assert_int_equal(b_cont.reply.dst.ip4, b1.reply.dst.ip4);
		assert_memory_equal(&b_rest.reply, &b_cont.reply, sizeof(b_cont.reply));
		differs = b_fresh.reply.dst.ip4 != b_cont.reply.dst.ip4;
		assert_audit(b);
		assert_int_equal(ct_table_flush(b->thr, -1, 3 * SEC), 2);
		ct_nat_table_census(b->t, &indexed, &keys);
		assert_int_equal(indexed, 0);
		teardown_f(g);
		teardown_f(b);
		teardown_f(a);
	}
	/* otherwise the test would show nothing */
	assert_true(differs);
}

/* With nat_exact_ports the port map holds the restored entries' ports
 * (one key per server) and lets them go with the entries. */
static void the_port_map_counts_restored_ports(void **state)
{
	struct fixture *a = nat_table(true, true), *b = nat_table(true, true);
	struct ct_nat_range r = range4(NATA, NATA, 2000, 2099);
	static struct recs ra;
	enum ct_record_reason why;
	uint64_t ia, ka, ib, kb;
	struct ct_nat_binding nb;

	(void)state;
	for (unsigned i = 0; i < 40; i++) {
		struct ct_packet p = udp4(C1 + i, S1 + i % 4, 7000, 53);

		assert_int_equal(nat_bind(a, &p, NULL, &r, 1 * SEC, &nb), CT_CONFIRM_INSERTED);
	}
	export_sorted(a, 1 * SEC, &ra);
	assert_int_equal(ra.n, 40);
	for (unsigned i = 0; i < ra.n; i++)
		assert_int_equal(ct_record_import(b->thr, &ra.r[i], 1 * SEC, 0, 0, &why), 1);
	ct_nat_table_census(a->t, &ia, &ka);
	ct_nat_table_census(b->t, &ib, &kb);
	assert_int_equal(ka, 4);
	assert_int_equal(kb, ka);
	assert_int_equal(ib, ia);
	/* the next connection's port is the same in both */
	{
		struct ct_packet p = udp4(C1 + 100, S1, 7000, 53);
		struct ct_nat_binding x, y;
		assert_int_equal(nat_bind(a, &p, NULL, &r, 2 * SEC, &x), CT_CONFIRM_INSERTED);
		assert_int_equal(nat_bind(b, &p, NULL, &r, 2 * SEC, &y), CT_CONFIRM_INSERTED);
		assert_true(y.reply.dport >= 2000 && y.reply.dport <= 2099);
		for (unsigned i = 0; i < ra.n; i++)
			if (ra.r[i].orig.dst.ip4 == htonl(S1))
				assert_int_not_equal(ra.r[i].reply.dport, y.reply.dport);
	}
	assert_int_equal(ct_table_flush(b->thr, -1, 3 * SEC), 41);
	ct_nat_table_census(b->t, &ib, &kb);
	assert_int_equal(ib, 0);
	assert_int_equal(kb, 0);
	teardown_f(b);
	teardown_f(a);
}

static void clashes_and_tables_without_nat_are_refused(void **state)
{
	struct fixture *a = nat_table(true, false), *b = nat_table(true, false),
		       *plain = nat_table(false, false);
	struct ct_nat_range sn = range4(NATA, NATA, 0, 0);
	struct ct_nat_binding nb;
	static struct recs ra;
	enum ct_record_reason why;
	struct ct_record r;
	struct ct_stats st;
	struct ct_packet p = udp4(C1, S1, 5000, 53);
	struct ct_conn_info ci;
	enum ct_dir dir;

	(void)state;
	assert_int_equal(nat_bind(a, &p, NULL, &sn, 1 * SEC, &nb), CT_CONFIRM_INSERTED);
	export_sorted(a, 1 * SEC, &ra);
	r = ra.r[0];
	assert_true(r.status & CT_ST_SRC_NAT);
	/* its reply tuple held by a live entry of b: the server's flow to
	 * the NAT address, an un-NATed entry whose original is that tuple */
	{
		struct ct_packet q;

		ts_packet_of(&q, &r.reply);
		assert_int_equal(nat_bind(b, &q, NULL, NULL, 1 * SEC, &nb), CT_CONFIRM_INSERTED);
	}
	assert_int_equal(ct_record_import(b->thr, &r, 1 * SEC, 0, 0, &why), -EEXIST);
	assert_int_equal(why, CT_RECORD_R_EXISTS);
	assert_int_equal(ct_table_count(b->t), 1);
	assert_int_equal(ct_table_lookup(b->thr, &r.orig, &ci, &dir), 0);
	assert_audit(b);
	/* its original held: the same */
	assert_int_equal(ct_record_import(a->thr, &r, 1 * SEC, 0, 0, &why), -EEXIST);
	assert_int_equal(why, CT_RECORD_R_EXISTS);
	assert_int_equal(ct_table_count(a->t), 1);
	/* a table without NAT: refused by name, nothing in */
	assert_int_equal(ct_record_import(plain->thr, &r, 1 * SEC, 0, 0, &why), -EOPNOTSUPP);
	assert_int_equal(why, CT_RECORD_R_NAT_OFF);
	assert_string_equal(ct_record_reason_name(why), "a NAT binding, and this table does no NAT");
	assert_int_equal(ct_table_count(plain->t), 0);
	ct_table_get_stats(plain->t, &st);
	assert_int_equal(st.insert, 0);
	/* a null binding goes in there as a plain entry, its DONE bits gone */
	base_record(&r, IPPROTO_UDP);
	assert_int_equal(ct_record_import(plain->thr, &r, 1 * SEC, 0, 0, &why), 1);
	assert_int_equal(ct_table_lookup(plain->thr, &r.orig, &ci, &dir), 1);
	assert_int_equal(ci.status & CT_ST_NAT_DONE_MASK, 0);
	/* and keeps them in a NAT table */
	base_record(&r, IPPROTO_UDP);
	r.orig.sport = 5999;
	assert_true(ct_tuple_invert(&r.orig, &r.reply));
	assert_int_equal(ct_record_import(b->thr, &r, 1 * SEC, 0, 0, &why), 1);
	assert_int_equal(ct_table_lookup(b->thr, &r.orig, &ci, &dir), 1);
	assert_int_equal(ci.status & CT_ST_NAT_DONE_MASK, CT_ST_NAT_DONE_MASK);
	teardown_f(plain);
	teardown_f(b);
	teardown_f(a);
}

/* The loser of a UDP clash (IPS_NAT_CLASH) was in its table under its
 * reply tuple only; restored, it is again: its original finds the
 * winner, its reply tuple finds it - whichever of the two is imported
 * first. */
static void a_clash_loser_is_restored_under_its_reply_only(void **state)
{
	(void)state;
	for (int order = 0; order < 2; order++) {
		struct fixture *b = nat_table(true, false);
		struct ct_record win, lose;
		enum ct_record_reason why;
		struct ct_conn_info ci;
		enum ct_dir dir;

		base_record(&win, IPPROTO_UDP);
		lose = win;
		snat_of(&lose, NATA, 0);
		lose.status |= CT_ST_NAT_CLASH;
		lose.timeout_ns = 1 * SEC;
		if (order) {
			assert_int_equal(ct_record_import(b->thr, &lose, 1 * SEC, 0, 0, &why), 1);
			assert_int_equal(ct_record_import(b->thr, &win, 1 * SEC, 0, 0, &why), 1);
		} else {
			assert_int_equal(ct_record_import(b->thr, &win, 1 * SEC, 0, 0, &why), 1);
			assert_int_equal(ct_record_import(b->thr, &lose, 1 * SEC, 0, 0, &why), 1);
		}
		assert_int_equal(ct_table_count(b->t), 2);
		assert_int_equal(ct_table_lookup(b->thr, &win.orig, &ci, &dir), 1);
		assert_int_equal(dir, CT_DIR_ORIGINAL);
		assert_int_equal(ci.status & CT_ST_NAT_CLASH, 0);
		assert_int_equal(ct_table_lookup(b->thr, &lose.reply, &ci, &dir), 1);
		assert_int_equal(dir, CT_DIR_REPLY);
		assert_true(ci.status & CT_ST_NAT_CLASH);
		assert_audit(b);
		teardown_f(b);
	}
}

/* ---- the state file ---- */

static void path_of(char *buf, size_t len, const char *name)
{
	const char *dir = getenv("TMPDIR");

	snprintf(buf, len, "%s/ctrack-recnat-%d-%s", dir ? dir : "/tmp", (int)getpid(), name);
}

static void save(struct fixture *f, const char *path, ct_time_ns now)
{
	struct ct_state_save_opts o;
	struct ct_state_error err;

	memset(&o, 0, sizeof(o));
	o.now = now;
	o.zone = -1;
	o.counters = true;
	assert_int_equal(ct_state_save(f->thr, path, &o, NULL, &err), 0);
}

/* CRC32c bit by bit (the state file's header checksum), from scratch */
static uint32_t crc32c_bits(const uint8_t *p, size_t n)
{
	uint32_t c = ~0u;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
	}
	return ~c;
}

static uint32_t file_version(const char *path)
{
	struct ct_state_file *sf;
	struct ct_state_error err;
	struct ct_state_info info;

	assert_int_equal(ct_state_open(path, &sf, &err), 0);
	ct_state_get_info(sf, &info);
	ct_state_close(sf);
	return info.version;
}

static void a_nat_table_saves_as_version_2_and_restores_the_same(void **state)
{
	struct fixture *a = nat_table(true, false), *b = nat_table(true, false),
		       *plain = nat_table(false, false);
	static struct recs ra, rb;
	struct ct_state_file *sf;
	struct ct_state_error err;
	struct ct_state_restore_opts ro;
	char path[256], path1[256];
	struct ct_packet p = udp4(C1, S1, 5000, 53);
	struct ct_verdict v;

	(void)state;
	path_of(path, sizeof(path), "nat.state");
	path_of(path1, sizeof(path1), "plain.state");
	fill_mixed(a, 1 * SEC);
	save(a, path, 2 * SEC);
	assert_int_equal(file_version(path), 2);
	/* a table without NAT still writes version 1, which old readers
	 * read */
	ct_process(plain->thr, &p, 1 * SEC, &v);
	save(plain, path1, 2 * SEC);
	assert_int_equal(file_version(path1), 1);
	assert_int_equal(ct_state_open(path, &sf, &err), 0);
	memset(&ro, 0, sizeof(ro));
	ro.now = 2 * SEC;
	assert_int_equal(ct_state_restore(sf, b->thr, &ro, NULL, &err), 0);
	ct_state_close(sf);
	export_sorted(a, 2 * SEC, &ra);
	export_sorted(b, 2 * SEC, &rb);
	assert_int_equal(rb.n, ra.n);
	assert_memory_equal(rb.r, ra.r, ra.n * sizeof(ra.r[0]));
	assert_audit(b);
	/* into a table without NAT the restore stops at the first binding,
	 * named */
	{
		struct fixture *q = nat_table(false, false);

		assert_int_equal(ct_state_open(path, &sf, &err), 0);
		assert_true(ct_state_restore(sf, q->thr, &ro, NULL, &err) < 0);
		assert_int_equal(err.reason, CT_RECORD_R_NAT_OFF);
		ct_state_close(sf);
		teardown_f(q);
	}
	/* the same file called version 1 (its header's checksum made good):
	 * a version 1 file never held NAT, so it is damaged at its first
	 * record with NAT bits */
	{
		FILE *fp = fopen(path, "r+b");
		uint8_t h[64];
		uint32_t c;

		assert_non_null(fp);
		assert_int_equal(fread(h, 1, 64, fp), 64);
		h[8] = 1;
		c = crc32c_bits(h, 60);
		for (int i = 0; i < 4; i++)
			h[60 + i] = (uint8_t)(c >> (8 * i));
		assert_int_equal(fseek(fp, 0, SEEK_SET), 0);
		assert_int_equal(fwrite(h, 1, 64, fp), 64);
		fclose(fp);
		assert_int_equal(ct_state_open(path, &sf, &err), -EINVAL);
		assert_int_equal(err.err, CT_STATE_E_RECORD);
		assert_int_equal(err.reason, CT_RECORD_R_NAT);
	}
	unlink(path);
	unlink(path1);
	teardown_f(plain);
	teardown_f(b);
	teardown_f(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(consistent_bindings_are_accepted_and_others_refused),
		cmocka_unit_test(nat_entries_go_through_records_and_come_back_whole),
		cmocka_unit_test(a_restored_source_mapping_is_reused),
		cmocka_unit_test(the_port_map_counts_restored_ports),
		cmocka_unit_test(clashes_and_tables_without_nat_are_refused),
		cmocka_unit_test(a_clash_loser_is_restored_under_its_reply_only),
		cmocka_unit_test(a_nat_table_saves_as_version_2_and_restores_the_same),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
