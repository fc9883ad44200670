/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_nat_select.c - tuple choice, rule by rule of nf_nat_core.c.
 *
 * Each case pins one rule of get_unique_tuple() and its helpers as the
 * kernel (6.17/6.18) has it; the expected values are worked out in the
 * comments from the kernel's code, not taken from ctrack's output.  The
 * table is a mock: a list of reply tuples in use (or a port predicate),
 * a log of every "taken?" question, and a scripted get_random_u16().
 * The address arithmetic (jhash2, find_best_ips_proto) is checked against
 * a Python re-implementation in test_nat_ref.py; here only its fast path.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctrack/nat.h"
#include "nat/nat_priv.h"

#define MAX_LOG 512

struct probe_rec {
	struct ct_tuple reply;
	uint8_t kind;
	uint16_t attempts_left;
};

struct mock {
	struct ct_tuple taken[16];
	int ntaken;
	bool all_taken;
	const uint8_t *port_used;       /* [65536]: reply.dport in use */
	struct probe_rec log[MAX_LOG];
	int nlog;
	uint16_t rnd[16];
	int nrnd, irnd;
};

static bool mock_taken(void *arg, const struct ct_nat_probe *p)
{
	struct mock *m = arg;

	if (m->nlog < MAX_LOG) {
		m->log[m->nlog].reply = *p->reply;
		m->log[m->nlog].kind = p->kind;
		m->log[m->nlog].attempts_left = p->attempts_left;
	}
	m->nlog++;
	if (m->all_taken)
		return true;
	if (m->port_used && m->port_used[p->reply->dport])
		return true;
	for (int i = 0; i < m->ntaken; i++)
		if (ct_tuple_equal(&m->taken[i], p->reply))
			return true;
	return false;
}

static uint16_t mock_rand(void *arg)
{
	struct mock *m = arg;

	assert_true(m->irnd < m->nrnd); /* no draw the kernel would not make */
	return m->rnd[m->irnd++];
}

static void env_for(struct ct_nat_env *env, struct mock *m,
		    struct ct_nat_select_stats *st)
{
	memset(m, 0, sizeof(*m));
	memset(env, 0, sizeof(*env));
	env->taken = mock_taken;
	env->taken_arg = m;
	env->rand16 = mock_rand;
	env->rand_arg = m;
	if (st) {
		memset(st, 0, sizeof(*st));
		env->stats = st;
	}
}

static uint32_t a4(const char *s)
{
	struct in_addr a;

	assert_int_equal(inet_pton(AF_INET, s, &a), 1);
	return a.s_addr;
}

static struct ct_tuple tup4(uint8_t l4, const char *src, uint16_t sport,
			    const char *dst, uint16_t dport)
{
	struct ct_tuple t;

	memset(&t, 0, sizeof(t));
	t.l3 = CT_L3_IPV4;
	t.l4 = l4;
	t.src.ip4 = a4(src);
	t.dst.ip4 = a4(dst);
	t.sport = sport;
	t.dport = dport;
	return t;
}

static struct ct_tuple tup6(uint8_t l4, const char *src, uint16_t sport,
			    const char *dst, uint16_t dport)
{
	struct ct_tuple t;

	memset(&t, 0, sizeof(t));
	t.l3 = CT_L3_IPV6;
	t.l4 = l4;
	assert_int_equal(inet_pton(AF_INET6, src, t.src.ip6), 1);
	assert_int_equal(inet_pton(AF_INET6, dst, t.dst.ip6), 1);
	t.sport = sport;
	t.dport = dport;
	return t;
}

static struct ct_nat_range range4(uint32_t flags, const char *lo, const char *hi,
				  uint16_t plo, uint16_t phi)
{
	struct ct_nat_range r;

	memset(&r, 0, sizeof(r));
	r.flags = flags;
	if (lo) {
		r.min_addr.ip4 = a4(lo);
		r.max_addr.ip4 = a4(hi);
	}
	r.min_proto = plo;
	r.max_proto = phi;
	return r;
}

/* the reply tuple a connection with original @o gets when its source
 * becomes @addr:@port */
static struct ct_tuple snat_reply(const struct ct_tuple *o, const char *addr, uint16_t port)
{
	struct ct_tuple r;

	assert_true(ct_tuple_invert(o, &r));
	r.dst.ip4 = a4(addr);
	r.dport = port;
	return r;
}

static struct ct_nat_binding mkbind(const struct ct_tuple *o)
{
	struct ct_nat_binding b;

	assert_true(ct_nat_binding_init(&b, o));
	return b;
}

/* ---- step 1: the original tuple ------------------------------------- */

/* in range and unused: kept, one question of the ORIGINAL kind
 * (nf_nat_used_tuple_new), no NAT bit but the DONE bit */
static void test_snat_keeps_the_original_tuple_when_in_range_and_unused(void **state)
{
	struct ct_tuple o = tup4(6, "10.0.0.5", 40000, "198.51.100.1", 80);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS, "10.0.0.1", "10.0.0.9", 0, 0);
	struct ct_nat_binding b = mkbind(&o), before = b;
	struct ct_nat_select_stats st;
	struct ct_nat_env env;
	struct mock m;

	(void)state;
	env_for(&env, &m, &st);
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
	assert_true(ct_tuple_equal(&b.reply, &before.reply));
	assert_int_equal(b.status, CT_NAT_S_SRC_DONE);
	assert_int_equal(m.nlog, 1);
	assert_int_equal(m.log[0].kind, CT_NAT_PROBE_ORIGINAL);
	assert_int_equal(st.kept_original, 1);
}

/* out of range, no earlier mapping: the single address of the range, the
 * port kept because the tuple is free (step 3); SRC bit set */
static void test_snat_to_one_address_keeps_a_free_port(void **state)
{
	struct ct_tuple o = tup4(17, "192.168.1.2", 40000, "198.51.100.1", 53);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS, "203.0.113.1", "203.0.113.1", 0, 0);
	struct ct_nat_binding b = mkbind(&o);
	struct ct_tuple want = snat_reply(&o, "203.0.113.1", 40000);
	struct ct_nat_env env;
	struct mock m;

	(void)state;
	env_for(&env, &m, NULL);
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
	assert_true(ct_tuple_equal(&b.reply, &want));
	assert_int_equal(b.status, CT_NAT_S_SRC | CT_NAT_S_SRC_DONE);
	assert_int_equal(m.nlog, 1);
	assert_int_equal(m.log[0].kind, CT_NAT_PROBE_MAPPED);
	assert_int_equal(m.irnd, 0);
}

/* ---- the port search ---------------------------------------------- */

static void expect_search_port(uint16_t orig_port, uint16_t rnd, uint16_t want)
{
	struct ct_tuple o = tup4(6, "192.168.1.2", orig_port, "198.51.100.1", 80);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS, "203.0.113.1", "203.0.113.1", 0, 0);
	struct ct_nat_binding b = mkbind(&o);
	struct ct_nat_env env;
	struct mock m;

	env_for(&env, &m, NULL);
	m.taken[m.ntaken++] = snat_reply(&o, "203.0.113.1", orig_port);
	m.rnd[m.nrnd++] = rnd;
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
	assert_int_equal(b.reply.dport, want);
	assert_int_equal(m.irnd, 1);
}

/* nf_nat_l4proto_unique_tuple's classes for source NAT without a port
 * range: < 512 -> 1..511, 512..1023 -> 600..1023, else 1024..65535;
 * the candidate is min + off % size with off = get_random_u16() */
static void test_search_port_classes_follow_the_original_port(void **state)
{
	(void)state;
	expect_search_port(40000, 5000, 1024 + 5000 % 64512);   /* 6024 */
	expect_search_port(1024, 64511, 1024 + 64511);          /* 65535 */
	expect_search_port(80, 1000, 1 + 1000 % 511);           /* 490 */
	expect_search_port(511, 509, 1 + 509);                  /* 510 */
	expect_search_port(512, 1000, 600 + 1000 % 424);        /* 752 */
	expect_search_port(700, 423, 600 + 423);                /* 1023 */
	expect_search_port(1023, 424, 600);                     /* wraps to min */
}

/* the offset is a u16 that wraps: from 65535 the next candidate is
 * 1024 + 0, not 1024 + 65536 % 64512 */
static void test_search_offset_wraps_at_16_bits(void **state)
{
	struct ct_tuple o = tup4(6, "192.168.1.2", 40000, "198.51.100.1", 80);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS, "203.0.113.1", "203.0.113.1", 0, 0);
	struct ct_nat_binding b = mkbind(&o);
	struct ct_nat_env env;
	struct mock m;

	(void)state;
	env_for(&env, &m, NULL);
	m.taken[m.ntaken++] = snat_reply(&o, "203.0.113.1", 40000);
	m.taken[m.ntaken++] = snat_reply(&o, "203.0.113.1", 2047);
	m.taken[m.ntaken++] = snat_reply(&o, "203.0.113.1", 1024);
	m.rnd[m.nrnd++] = 65535;
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
	/* probes: step 3 (40000), then 2047, 1024, 1025 */
	assert_int_equal(m.nlog, 4);
	assert_int_equal(m.log[1].reply.dport, 2047);
	assert_int_equal(m.log[2].reply.dport, 1024);
	assert_int_equal(m.log[3].reply.dport, 1025);
	assert_int_equal(b.reply.dport, 1025);
}

/* all taken: 128 consecutive, then 64, 32, 16, 8 from fresh offsets:
 * 248 probes and 5 draws, attempts_left counting down in each round;
 * the last candidate is kept (the kernel's confirm then fails) */
static void test_search_gives_up_after_248_probes_in_five_rounds(void **state)
{
	struct ct_tuple o = tup4(6, "192.168.1.2", 40000, "198.51.100.1", 80);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS, "203.0.113.1", "203.0.113.1", 0, 0);
	struct ct_nat_binding b = mkbind(&o);
	struct ct_nat_select_stats st;
	struct ct_nat_env env;
	struct mock m;
	static const unsigned rounds[] = { 128, 64, 32, 16, 8 };
	int k = 1;

	(void)state;
	env_for(&env, &m, &st);
	m.all_taken = true;
	for (int i = 0; i < 5; i++)
		m.rnd[m.nrnd++] = (uint16_t)(1000 * (i + 1));
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND_TAKEN);
	assert_int_equal(m.nlog, 1 + 248);
	assert_int_equal(m.irnd, 5);
	for (int rd = 0; rd < 5; rd++) {
		for (unsigned i = 0; i < rounds[rd]; i++, k++) {
			assert_int_equal(m.log[k].kind, CT_NAT_PROBE_SEARCH);
			assert_int_equal(m.log[k].attempts_left, rounds[rd] - i);
			assert_int_equal(m.log[k].reply.dport,
					 1024 + (1000 * (rd + 1) + i) % 64512);
		}
	}
	/* the last: round 5's offset 5000, its 8th candidate */
	assert_int_equal(b.reply.dport, 1024 + 5000 + 7);
	assert_int_equal(st.exhausted, 1);
	assert_int_equal(st.probes, 248);
}

/* a class smaller than 128 is searched once, whole */
static void expect_schedule(uint16_t lo, uint16_t hi, int probes, int draws)
{
	struct ct_tuple o = tup4(17, "192.168.1.2", 40000, "198.51.100.1", 53);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS | CT_NAT_RANGE_PROTO_SPECIFIED,
				       "203.0.113.1", "203.0.113.1", lo, hi);
	struct ct_nat_binding b = mkbind(&o);
	struct ct_nat_env env;
	struct mock m;

	env_for(&env, &m, NULL);
	m.all_taken = true;
	for (int i = 0; i < 5; i++)
		m.rnd[m.nrnd++] = 7;
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND_TAKEN);
	assert_int_equal(m.nlog, probes);
	assert_int_equal(m.irnd, draws);
}

static void test_search_schedule_depends_on_the_range_size(void **state)
{
	(void)state;
	expect_schedule(1000, 1019, 20, 1);     /* 20 < 128: one round */
	expect_schedule(1000, 1015, 16, 1);
	expect_schedule(1000, 1099, 100, 1);
	expect_schedule(1000, 1127, 128, 1);    /* exactly 128 */
	expect_schedule(1000, 1128, 248, 5);    /* 129: all five rounds */
	expect_schedule(1000, 1199, 248, 5);
}

/* ---- the search's hints (ct_nat_env.prefetch) ------------------------ */

struct hint_log {
	struct mock *m;             /* its probes: to order hints against */
	uint16_t port[MAX_LOG];     /* the hinted candidates' source ports */
	int at[MAX_LOG];            /* m->nlog when each was hinted */
	int n;
};

static struct hint_log *hints_of;

static void rec_hint(void *arg, const struct ct_tuple *cand)
{
	struct hint_log *h = hints_of;
	int draws = h->m->irnd;

	assert_ptr_equal(arg, h->m);        /* it gets taken_arg */
	if (h->n < MAX_LOG) {
		h->port[h->n] = cand->sport;
		h->at[h->n] = h->m->nlog;
	}
	h->n++;
	assert_int_equal(h->m->irnd, draws);
}

/* One search from offset 1000 (port 2024) through a run of used ports
 * 2024..@run_end-1: the binding and every probe, with hints or without. */
static void hinted_search(struct mock *m, struct ct_nat_binding *b, struct hint_log *h,
			  unsigned run_end)
{
	static uint8_t used[65536];
	struct ct_tuple o = tup4(17, "192.168.1.2", 40000, "198.51.100.1", 53);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS, "203.0.113.1", "203.0.113.1", 0, 0);
	struct ct_nat_env env;

	memset(used, 0, sizeof(used));
	used[40000] = 1;                     /* the kept port: the search runs */
	for (unsigned p = 2024; p < run_end; p++)
		used[p] = 1;
	env_for(&env, m, NULL);
	m->port_used = used;
	m->rnd[m->nrnd++] = 1000;
	m->rnd[m->nrnd++] = 5000;
	*b = mkbind(&o);
	if (h) {
		memset(h, 0, sizeof(*h));
		h->m = m;
		hints_of = h;
		env.prefetch = rec_hint;
	}
	assert_int_equal(ct_nat_setup(&env, b, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
}

/* The hints change nothing (the same probes in the same order, the same
 * draws, the same binding), name exactly the candidates the round probes
 * next - each hinted before it is probed, in order, at most 8 ahead - and
 * none is made when the search's first candidate is free. */
static void test_search_hints_are_the_next_probes_and_change_nothing(void **state)
{
	static const unsigned runs[] = { 2024, 2025, 2026, 2030, 2100, 2152, 2200 };
	static struct mock plain, hinted;
	static struct hint_log h;
	struct ct_nat_binding b0, b1;

	(void)state;
	for (unsigned t = 0; t < sizeof(runs) / sizeof(runs[0]); t++) {
		unsigned end = runs[t];
		int first;

		hinted_search(&plain, &b0, NULL, end);
		hinted_search(&hinted, &b1, &h, end);
		assert_true(ct_tuple_equal(&b0.reply, &b1.reply));
		assert_int_equal(plain.nlog, hinted.nlog);
		assert_int_equal(plain.irnd, hinted.irnd);
		for (int i = 0; i < plain.nlog && i < MAX_LOG; i++) {
			assert_true(ct_tuple_equal(&plain.log[i].reply, &hinted.log[i].reply));
			assert_int_equal(plain.log[i].attempts_left, hinted.log[i].attempts_left);
		}
		/* probe 0 is the kept port, 1 the search's first (2024) */
		first = 1;
		assert_int_equal(hinted.log[first].reply.dport, 2024);
		if (end == 2024) {
			assert_int_equal(h.n, 0);
			continue;
		}
		/* round 1's probes after its first were each hinted before
		 * (a round's first probe never is: round 2's, from offset
		 * 5000, is free here) */
		for (int i = first + 1; i < hinted.nlog && i < MAX_LOG; i++) {
			uint16_t port = hinted.log[i].reply.dport;
			int k = 0;

			if (port >= 2024 + 128)
				continue;
			while (k < h.n && h.port[k] != port)
				k++;
			assert_true(k < h.n);
			assert_true(h.at[k] <= i);
		}
		/* the hints: consecutive ports after 2024, each at most 8 past
		 * the probe that was answered when it was made, never past the
		 * round's 128 attempts */
		for (int k = 0; k < h.n; k++) {
			assert_int_equal(h.port[k], 2025 + k);
			assert_true(h.port[k] <= hinted.log[h.at[k] - 1].reply.dport + 8);
			assert_true(h.port[k] < 2024 + 128);
		}
		if (end >= 2024 + 128) {
			/* round 1 taken whole: round 2 from offset 5000 */
			assert_int_equal(b1.reply.dport, 1024 + 5000);
		} else {
			assert_int_equal(b1.reply.dport, end);
		}
	}
}

/* ---- port ranges ----------------------------------------------------- */

static void test_port_range_keeps_a_port_in_range_and_searches_one_outside(void **state)
{
	struct ct_tuple in = tup4(6, "192.168.1.2", 5005, "198.51.100.1", 80);
	struct ct_tuple out = tup4(6, "192.168.1.2", 40000, "198.51.100.1", 80);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS | CT_NAT_RANGE_PROTO_SPECIFIED,
				       "203.0.113.1", "203.0.113.1", 5000, 5009);
	struct ct_nat_binding b = mkbind(&in);
	struct ct_nat_env env;
	struct mock m;

	(void)state;
	env_for(&env, &m, NULL);
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
	assert_int_equal(b.reply.dport, 5005);
	assert_int_equal(m.irnd, 0);

	b = mkbind(&out);
	env_for(&env, &m, NULL);
	m.rnd[m.nrnd++] = 13;
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
	assert_int_equal(b.reply.dport, 5000 + 13 % 10);
	/* a reversed range is swapped by the search (not by the step-3 test) */
	r.min_proto = 5009;
	r.max_proto = 5000;
	b = mkbind(&out);
	env_for(&env, &m, NULL);
	m.rnd[m.nrnd++] = 13;
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
	assert_int_equal(b.reply.dport, 5003);
}

/* "range->min_proto.all == range->max_proto.all ||": one port is kept
 * even when taken, without a search */
static void test_single_port_range_is_kept_when_taken(void **state)
{
	struct ct_tuple o = tup4(6, "192.168.1.2", 40000, "198.51.100.1", 80);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS | CT_NAT_RANGE_PROTO_SPECIFIED,
				       "203.0.113.1", "203.0.113.1", 40000, 40000);
	struct ct_nat_binding b = mkbind(&o);
	struct ct_nat_env env;
	struct mock m;

	(void)state;
	env_for(&env, &m, NULL);
	m.all_taken = true;
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND_TAKEN);
	assert_int_equal(b.reply.dport, 40000);
	assert_int_equal(m.irnd, 0);
	for (int i = 0; i < m.nlog; i++)
		assert_int_not_equal(m.log[i].kind, CT_NAT_PROBE_SEARCH);
}

/* PROTO_OFFSET: port = min + (original - base), step 3 skipped */
static void test_proto_offset_maps_the_port_by_its_distance_from_base(void **state)
{
	struct ct_tuple o = tup4(6, "192.168.1.2", 40000, "198.51.100.1", 5005);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS | CT_NAT_RANGE_PROTO_SPECIFIED |
				       CT_NAT_RANGE_PROTO_OFFSET, "10.1.1.1", "10.1.1.1",
				       6000, 6010);
	struct ct_nat_binding b = mkbind(&o);
	struct ct_nat_env env;
	struct mock m;

	(void)state;
	r.base_proto = 5000;
	env_for(&env, &m, NULL);
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_DST, NULL), CT_NAT_BOUND);
	assert_int_equal(b.reply.sport, 6005);
	assert_int_equal(b.reply.src.ip4, a4("10.1.1.1"));
	assert_int_equal(m.irnd, 0);
}

/* ---- destination NAT ------------------------------------------------- */

/* no port range: a destination port never changes, even when taken */
static void test_dnat_without_port_range_never_changes_the_port(void **state)
{
	struct ct_tuple o = tup4(6, "192.168.1.2", 40000, "198.51.100.1", 80);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS, "10.1.1.1", "10.1.1.1", 0, 0);
	struct ct_nat_binding b = mkbind(&o);
	struct ct_nat_env env;
	struct mock m;

	(void)state;
	env_for(&env, &m, NULL);
	m.all_taken = true;
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_DST, NULL), CT_NAT_BOUND_TAKEN);
	assert_int_equal(b.reply.sport, 80);
	assert_int_equal(b.reply.src.ip4, a4("10.1.1.1"));
	assert_int_equal(b.status, CT_NAT_S_DST | CT_NAT_S_DST_DONE);
	assert_int_equal(m.irnd, 0);
}

/* with a port range the search starts at offset 0 (no draw): min first */
static void test_dnat_port_range_search_starts_at_its_minimum(void **state)
{
	struct ct_tuple o = tup4(6, "192.168.1.2", 40000, "198.51.100.1", 80);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS | CT_NAT_RANGE_PROTO_SPECIFIED,
				       "10.1.1.1", "10.1.1.1", 8000, 8010);
	struct ct_nat_binding b = mkbind(&o);
	struct ct_tuple busy;
	struct ct_nat_env env;
	struct mock m;

	(void)state;
	env_for(&env, &m, NULL);
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_DST, NULL), CT_NAT_BOUND);
	assert_int_equal(b.reply.sport, 8000);
	assert_int_equal(m.irnd, 0);

	busy = b.reply;
	b = mkbind(&o);
	env_for(&env, &m, NULL);
	m.taken[m.ntaken++] = busy;
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_DST, NULL), CT_NAT_BOUND);
	assert_int_equal(b.reply.sport, 8001);
	assert_int_equal(m.irnd, 0);

	/* with "random" the offset is drawn */
	r.flags |= CT_NAT_RANGE_PROTO_RANDOM;
	b = mkbind(&o);
	env_for(&env, &m, NULL);
	m.rnd[m.nrnd++] = 7;
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_DST, NULL), CT_NAT_BOUND);
	assert_int_equal(b.reply.sport, 8007);
}

/* the random flags skip step 1 and step 3: a free original tuple in range
 * still gets a drawn port */
static void test_random_flags_always_search(void **state)
{
	struct ct_tuple o = tup4(17, "203.0.113.1", 5005, "198.51.100.1", 53);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS | CT_NAT_RANGE_PROTO_SPECIFIED,
				       "203.0.113.1", "203.0.113.1", 5000, 5999);
	uint32_t fl[] = { CT_NAT_RANGE_PROTO_RANDOM, CT_NAT_RANGE_PROTO_RANDOM_FULLY };

	(void)state;
	for (int i = 0; i < 2; i++) {
		struct ct_nat_binding b = mkbind(&o);
		struct ct_nat_range rr = r;
		struct ct_nat_env env;
		struct mock m;

		rr.flags |= fl[i];
		env_for(&env, &m, NULL);
		m.rnd[m.nrnd++] = 123;
		assert_int_equal(ct_nat_setup(&env, &b, &rr, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
		assert_int_equal(b.reply.dport, 5123);
		assert_int_equal(m.nlog, 1);
		assert_int_equal(m.log[0].kind, CT_NAT_PROBE_SEARCH);
	}
}

/* ---- find_appropriate_src ------------------------------------------- */

static void test_existing_source_mapping_is_reused_newest_first(void **state)
{
	struct ct_tuple o1 = tup4(17, "192.168.1.2", 40000, "198.51.100.1", 53);
	struct ct_tuple o2 = tup4(17, "192.168.1.2", 40000, "198.51.100.2", 53);
	struct ct_tuple o3 = tup4(17, "192.168.1.2", 40000, "198.51.100.3", 53);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS, "203.0.113.1", "203.0.113.9", 0, 0);
	struct ct_nat_bysrc *ix = ct_nat_bysrc_create(0);
	struct ct_nat_binding old1 = mkbind(&o1), old2 = mkbind(&o2), b;
	struct ct_nat_select_stats st;
	struct ct_nat_env env;
	struct mock m;

	(void)state;
	assert_non_null(ix);
	/* two earlier mappings of this source: an older one to .7:50000 and
	 * a newer one to .8:50001; and one out of any range (.20) newest */
	old1.reply = snat_reply(&o1, "203.0.113.7", 50000);
	old2.reply = snat_reply(&o2, "203.0.113.8", 50001);
	assert_int_equal(ct_nat_bysrc_add(ix, &old1), 0);
	assert_int_equal(ct_nat_bysrc_add(ix, &old2), 0);
	{
		struct ct_nat_binding x = mkbind(&o2);

		x.reply = snat_reply(&o2, "203.0.113.20", 50002);
		x.orig.dport = 54;
		assert_int_equal(ct_nat_bysrc_add(ix, &x), 0);
	}
	assert_int_equal(ct_nat_bysrc_count(ix), 3);
	env_for(&env, &m, &st);
	env.bysrc = ct_nat_bysrc_ops(ix);
	b = mkbind(&o3);
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
	assert_int_equal(b.reply.dst.ip4, a4("203.0.113.8"));
	assert_int_equal(b.reply.dport, 50001);
	assert_int_equal(st.source_map, 1);
	assert_int_equal(m.irnd, 0);

	/* a port range the mapping's port is outside of: not reused */
	r.flags |= CT_NAT_RANGE_PROTO_SPECIFIED;
	r.min_proto = 60000;
	r.max_proto = 60009;
	env_for(&env, &m, &st);
	env.bysrc = ct_nat_bysrc_ops(ix);
	m.rnd[m.nrnd++] = 3;
	b = mkbind(&o3);
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
	assert_int_equal(st.source_map, 0);
	assert_int_equal(b.reply.dport, 60003);

	assert_int_equal(ct_nat_bysrc_del(ix, &old2), 0);
	assert_int_equal(ct_nat_bysrc_del(ix, &old2), -ENOENT);
	assert_int_equal(ct_nat_bysrc_count(ix), 2);
	ct_nat_bysrc_destroy(ix);
}

/* the index keeps newest-first order per source across its growth */
static void test_source_index_order_survives_growth(void **state)
{
	struct ct_nat_bysrc *ix = ct_nat_bysrc_create(0);
	struct ct_tuple o = tup4(6, "192.168.1.2", 40000, "198.51.100.1", 80);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS, "203.0.113.1", "203.0.113.9", 0, 0);
	struct ct_nat_binding b;
	struct ct_nat_env env;
	struct mock m;

	(void)state;
	for (uint32_t i = 0; i < 2000; i++) {
		struct ct_tuple x = tup4(6, "10.0.0.0", (uint16_t)(1000 + i), "198.51.100.1", 80);
		struct ct_nat_binding bx = mkbind(&x);

		x.src.ip4 = htonl(0x0a000000u + i);
		bx = mkbind(&x);
		assert_int_equal(ct_nat_bysrc_add(ix, &bx), 0);
		if (i == 10 || i == 1500) {
			struct ct_nat_binding mine = mkbind(&o);

			mine.orig.dport = (uint16_t)i;
			mine.reply = snat_reply(&mine.orig, i == 10 ? "203.0.113.2" : "203.0.113.3",
						(uint16_t)(20000 + i));
			assert_int_equal(ct_nat_bysrc_add(ix, &mine), 0);
		}
	}
	env_for(&env, &m, NULL);
	env.bysrc = ct_nat_bysrc_ops(ix);
	b = mkbind(&o);
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
	assert_int_equal(b.reply.dst.ip4, a4("203.0.113.3"));
	assert_int_equal(b.reply.dport, 21500);
	ct_nat_bysrc_destroy(ix);
}

/* ---- null binding, masquerade, netmap ----------------------------- */

static void test_null_binding_changes_only_a_clashing_port(void **state)
{
	struct ct_tuple o = tup4(6, "192.168.1.2", 40000, "198.51.100.1", 80);
	struct ct_nat_binding b = mkbind(&o), before = b;
	struct ct_nat_select_stats st;
	struct ct_nat_env env;
	struct mock m;

	(void)state;
	env_for(&env, &m, &st);
	assert_int_equal(ct_nat_null_binding(&env, &b, CT_NAT_MANIP_DST, NULL), CT_NAT_BOUND);
	assert_int_equal(ct_nat_null_binding(&env, &b, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
	assert_true(ct_tuple_equal(&b.reply, &before.reply));
	assert_int_equal(b.status, CT_NAT_S_DONE_MASK);
	assert_int_equal(st.null_bindings, 2);
	assert_int_equal(ct_nat_null_binding(&env, &b, CT_NAT_MANIP_SRC, NULL), -EEXIST);

	/* the tuple is taken (another connection was source-NATed onto it):
	 * the null binding searches the port in its class */
	b = mkbind(&o);
	env_for(&env, &m, NULL);
	m.taken[m.ntaken++] = before.reply;
	m.rnd[m.nrnd++] = 100;
	assert_int_equal(ct_nat_null_binding(&env, &b, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
	assert_int_equal(b.reply.dport, 1124);
	assert_int_equal(b.reply.dst.ip4, o.src.ip4);
	assert_int_equal(b.status, CT_NAT_S_SRC | CT_NAT_S_SRC_DONE);
}

static void test_masquerade_maps_to_the_given_address_but_not_0_0_0_0(void **state)
{
	struct ct_tuple o = tup4(6, "192.168.1.2", 40000, "198.51.100.1", 80);
	struct ct_tuple z = tup4(6, "0.0.0.0", 68, "255.255.255.255", 67);
	struct ct_nat_range r = range4(CT_NAT_RANGE_PROTO_SPECIFIED | CT_NAT_RANGE_PROTO_RANDOM,
				       "1.1.1.1", "1.1.1.2", 30000, 30099);
	struct ct_nat_binding b = mkbind(&z), before = b;
	union ct_addr a;
	struct ct_nat_env env;
	struct mock m;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.ip4 = a4("203.0.113.5");
	env_for(&env, &m, NULL);
	assert_int_equal(ct_nat_masquerade(&env, &b, NULL, &a, NULL), CT_NAT_NOT_MAPPED);
	assert_memory_equal(&b, &before, sizeof(b));

	b = mkbind(&o);
	assert_int_equal(ct_nat_masquerade(&env, &b, NULL, &a, NULL), CT_NAT_BOUND);
	assert_int_equal(b.reply.dst.ip4, a.ip4);
	assert_int_equal(b.reply.dport, 40000);

	/* ports and flags come from the rule, its addresses do not */
	b = mkbind(&o);
	m.rnd[m.nrnd++] = 42;
	assert_int_equal(ct_nat_masquerade(&env, &b, &r, &a, NULL), CT_NAT_BOUND);
	assert_int_equal(b.reply.dst.ip4, a.ip4);
	assert_int_equal(b.reply.dport, 30042);
}

static void test_netmap_keeps_the_host_part(void **state)
{
	struct ct_tuple o = tup4(6, "192.168.1.77", 40000, "198.51.100.1", 80);
	struct ct_tuple o6 = tup6(6, "fd00:1::1:2", 40000, "2001:db8::1", 80);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS | CT_NAT_RANGE_NETMAP,
				       "10.9.0.0", "10.9.0.255", 0, 0);
	struct ct_nat_binding b = mkbind(&o);
	struct ct_nat_env env;
	struct mock m;
	struct ct_nat_range r6;
	uint8_t want6[16];

	(void)state;
	env_for(&env, &m, NULL);
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
	assert_int_equal(b.reply.dst.ip4, a4("10.9.0.77"));
	/* IPv6 /64 */
	memset(&r6, 0, sizeof(r6));
	r6.flags = CT_NAT_RANGE_MAP_IPS | CT_NAT_RANGE_NETMAP;
	assert_int_equal(inet_pton(AF_INET6, "fd99::", r6.min_addr.ip6), 1);
	assert_int_equal(inet_pton(AF_INET6, "fd99::ffff:ffff:ffff:ffff", r6.max_addr.ip6), 1);
	assert_int_equal(inet_pton(AF_INET6, "fd99::1:2", want6), 1);
	b = mkbind(&o6);
	assert_int_equal(ct_nat_setup(&env, &b, &r6, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
	assert_memory_equal(b.reply.dst.ip6, want6, 16);
}

/* ---- ICMP, GRE ------------------------------------------------------ */

/* an echo's id: class 0..65535 for either manipulation; source NAT draws
 * the offset (id = off), destination NAT starts at 0 */
static void test_icmp_id_search(void **state)
{
	struct ct_tuple o = tup4(1, "192.168.1.2", 777, "198.51.100.1", 8 << 8);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS, "203.0.113.1", "203.0.113.1", 0, 0);
	struct ct_nat_binding b = mkbind(&o);
	struct ct_tuple busy;
	struct ct_nat_env env;
	struct mock m;

	(void)state;
	env_for(&env, &m, NULL);
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
	assert_int_equal(b.reply.sport, 777);
	assert_int_equal(b.reply.dport, 0 << 8); /* echo reply */
	busy = b.reply;

	b = mkbind(&o);
	env_for(&env, &m, NULL);
	m.taken[m.ntaken++] = busy;
	m.rnd[m.nrnd++] = 54321;
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
	assert_int_equal(b.reply.sport, 54321);

	r = range4(CT_NAT_RANGE_MAP_IPS, "10.1.1.1", "10.1.1.1", 0, 0);
	b = mkbind(&o);
	env_for(&env, &m, NULL);
	m.all_taken = true;
	/* 128, 64, 32, 16, 8 from 0 and then drawn offsets */
	for (int i = 0; i < 4; i++)
		m.rnd[m.nrnd++] = 9;
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_DST, NULL), CT_NAT_BOUND_TAKEN);
	assert_int_equal(m.log[1].reply.sport, 0);
	assert_int_equal(m.log[2].reply.sport, 1);
	assert_int_equal(m.log[129].reply.sport, 9);
	assert_int_equal(m.irnd, 4);
}

/* GRE keys change only for PPTP (a master connection): never here */
static void test_gre_key_is_never_changed(void **state)
{
	struct ct_tuple o = tup4(47, "192.168.1.2", 0x1234, "198.51.100.1", 0x5678);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS, "203.0.113.1", "203.0.113.1", 0, 0);
	struct ct_nat_binding b = mkbind(&o);
	struct ct_nat_env env;
	struct mock m;

	(void)state;
	env_for(&env, &m, NULL);
	m.all_taken = true;
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND_TAKEN);
	assert_int_equal(b.reply.dport, 0x1234);
	assert_int_equal(b.reply.dst.ip4, a4("203.0.113.1"));
	assert_int_equal(m.irnd, 0);
}

/* ---- both manipulations, errors ---------------------------------------- */

/* DNAT at PREROUTING, then SNAT at POSTROUTING: the second sees the
 * first's result (the inverted reply) */
static void test_dnat_then_snat_compose(void **state)
{
	struct ct_tuple o = tup4(6, "192.168.1.2", 40000, "198.51.100.1", 80);
	struct ct_nat_range d = range4(CT_NAT_RANGE_MAP_IPS | CT_NAT_RANGE_PROTO_SPECIFIED,
				       "10.1.1.1", "10.1.1.1", 8080, 8080);
	struct ct_nat_range s = range4(CT_NAT_RANGE_MAP_IPS, "10.1.1.254", "10.1.1.254", 0, 0);
	struct ct_nat_binding b = mkbind(&o);
	struct ct_nat_env env;
	struct mock m;

	(void)state;
	env_for(&env, &m, NULL);
	assert_int_equal(ct_nat_setup(&env, &b, &d, CT_NAT_MANIP_DST, NULL), CT_NAT_BOUND);
	assert_int_equal(ct_nat_setup(&env, &b, &s, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
	assert_int_equal(b.reply.src.ip4, a4("10.1.1.1"));
	assert_int_equal(b.reply.sport, 8080);
	assert_int_equal(b.reply.dst.ip4, a4("10.1.1.254"));
	assert_int_equal(b.reply.dport, 40000);
	assert_int_equal(b.status, CT_NAT_S_MASK | CT_NAT_S_DONE_MASK);
	/* the SRC probe asked about the reply as it will be */
	assert_int_equal(m.log[m.nlog - 1].reply.src.ip4, a4("10.1.1.1"));
	assert_int_equal(m.log[m.nlog - 1].reply.dst.ip4, a4("10.1.1.254"));
	assert_int_equal(ct_nat_setup(&env, &b, &s, CT_NAT_MANIP_SRC, NULL), -EEXIST);
}

static void test_setup_refuses_nonsense(void **state)
{
	struct ct_tuple o = tup4(6, "192.168.1.2", 40000, "198.51.100.1", 80);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS, "203.0.113.9", "203.0.113.1", 0, 0);
	struct ct_nat_binding b = mkbind(&o);
	struct ct_nat_env env;
	struct mock m;

	(void)state;
	env_for(&env, &m, NULL);
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), -EINVAL);
	r = range4(0x80, NULL, NULL, 0, 0);
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), -EINVAL);
	r = range4(0, NULL, NULL, 0, 0);
	assert_int_equal(ct_nat_setup(&env, &b, &r, (enum ct_nat_manip)2, NULL), -EINVAL);
	env.taken = NULL;
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), -EINVAL);
	assert_int_equal(b.status, 0);
}

/* from `conntrack -L` tuples: which manipulations the kernel made */
static void test_binding_status_from_listed_tuples(void **state)
{
	struct ct_tuple o = tup4(6, "192.168.1.2", 40000, "198.51.100.1", 80);
	struct ct_tuple r;
	struct ct_nat_binding b;

	(void)state;
	assert_true(ct_tuple_invert(&o, &r));
	ct_nat_binding_from_tuples(&b, &o, &r);
	assert_int_equal(b.status, CT_NAT_S_DONE_MASK);
	r.dport = 1025;
	ct_nat_binding_from_tuples(&b, &o, &r);
	assert_int_equal(b.status, CT_NAT_S_DONE_MASK | CT_NAT_S_SRC);
	r.src.ip4 = a4("10.0.0.1");
	ct_nat_binding_from_tuples(&b, &o, &r);
	assert_int_equal(b.status, CT_NAT_S_DONE_MASK | CT_NAT_S_MASK);
	o = tup4(1, "192.168.1.2", 7, "198.51.100.1", 8 << 8);
	assert_true(ct_tuple_invert(&o, &r));
	r.sport = 9;
	ct_nat_binding_from_tuples(&b, &o, &r);
	assert_int_equal(b.status, CT_NAT_S_DONE_MASK | CT_NAT_S_SRC);
}

/* ---- the exact search (port map) ------------------------------------- */

struct fill {
	uint8_t used[65536];
	struct ct_tuple orig;   /* every connection: this source, other ports */
};

/* a binding of the server 198.51.100.1:80 seen from 203.0.113.1:port */
static struct ct_nat_binding fill_binding(const struct fill *f, uint16_t cport, uint16_t nport)
{
	struct ct_nat_binding b;
	struct ct_tuple o = f->orig;

	o.sport = cport;
	b = mkbind(&o);
	b.reply = snat_reply(&o, "203.0.113.1", nport);
	b.status = CT_NAT_S_SRC | CT_NAT_S_DONE_MASK;
	return b;
}

/* 99% of 1024..65535 in use toward one server: every new connection gets
 * a free port while any is left, then the map says exhausted without a
 * probe; the kernel-style search on the same fill fails for some */
static void test_port_map_finds_every_free_port_at_99_percent(void **state)
{
	struct fill *f = calloc(1, sizeof(*f));
	struct ct_nat_portmap *pm = ct_nat_portmap_create(0);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS, "203.0.113.1", "203.0.113.1", 0, 0);
	uint64_t seed = 1;
	unsigned used = 0, freeports, got = 0, kernel_fail = 0;
	struct ct_nat_select_stats st;
	struct ct_nat_env env;
	struct mock m;

	(void)state;
	assert_non_null(f);
	assert_non_null(pm);
	f->orig = tup4(6, "192.168.1.2", 0, "198.51.100.1", 80);
	while (used < 64512u * 99 / 100) {
		struct ct_nat_binding b;
		uint16_t p;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		p = (uint16_t)(1024 + (seed >> 33) % 64512);
		if (f->used[p])
			continue;
		f->used[p] = 1;
		used++;
		b = fill_binding(f, (uint16_t)(used % 60000 + 1024), p);
		assert_int_equal(ct_nat_portmap_acquire(pm, &b, CT_NAT_MANIP_SRC), 0);
	}
	freeports = 64512 - used;
	assert_int_equal(ct_nat_portmap_keys(pm), 1);
	{
		struct ct_tuple rep = snat_reply(&f->orig, "203.0.113.1", 0), cand;

		assert_true(ct_tuple_invert(&rep, &cand));
		assert_int_equal(ct_nat_portmap_used(pm, &cand, CT_NAT_MANIP_SRC), used);
	}

	/* kernel-style on the same fill: some connections get no free port */
	for (unsigned i = 0; i < 400; i++) {
		struct ct_tuple o = f->orig;
		struct ct_nat_binding b;

		o.sport = (uint16_t)(1024 + i);
		b = mkbind(&o);
		env_for(&env, &m, NULL);
		m.port_used = f->used;
		env.rand16 = NULL;
		env.rng = i * 7919u + 1;
		if (ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL) == CT_NAT_BOUND_TAKEN)
			kernel_fail++;
	}
	/* 0.99^248 = 8.3% expected: well over 10 of 400 */
	assert_true(kernel_fail >= 10);

	/* exact: every free port handed out, one by one, then exhaustion */
	for (unsigned i = 0; i < freeports + 3; i++) {
		struct ct_tuple o = f->orig;
		struct ct_nat_binding b;
		int rc;

		o.sport = (uint16_t)(2000 + i);
		b = mkbind(&o);
		env_for(&env, &m, &st);
		m.port_used = f->used;
		env.portmap = pm;
		env.rand16 = NULL;
		env.rng = i + 99;
		rc = ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL);
		if (i < freeports) {
			assert_int_equal(rc, CT_NAT_BOUND);
			assert_false(f->used[b.reply.dport]);
			assert_true(b.reply.dport >= 1024);
			/* the map is complete: at most one search probe */
			assert_true(st.probes <= 1);
			f->used[b.reply.dport] = 1;
			assert_int_equal(ct_nat_portmap_acquire(pm, &b, CT_NAT_MANIP_SRC), 0);
			got++;
		} else {
			assert_int_equal(rc, CT_NAT_BOUND_TAKEN);
			assert_int_equal(st.probes, 0);
		}
	}
	assert_int_equal(got, freeports);
	ct_nat_portmap_destroy(pm);
	free(f);
}

/* the map is a hint: a port the callback calls taken is skipped */
static void test_port_map_skips_an_occupant_it_was_not_told_about(void **state)
{
	struct ct_nat_portmap *pm = ct_nat_portmap_create(0);
	struct ct_tuple o = tup4(17, "192.168.1.2", 40000, "198.51.100.1", 53);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS | CT_NAT_RANGE_PROTO_SPECIFIED,
				       "203.0.113.1", "203.0.113.1", 5000, 5009);
	struct ct_nat_binding b = mkbind(&o), held;
	struct ct_nat_env env;
	struct mock m;

	(void)state;
	assert_non_null(pm);
	/* the map holds 5003; the table also has 5004 (foreign) */
	held = mkbind(&o);
	held.orig.sport = 1;
	held.reply = snat_reply(&held.orig, "203.0.113.1", 5003);
	assert_int_equal(ct_nat_portmap_acquire(pm, &held, CT_NAT_MANIP_SRC), 0);
	assert_int_equal(ct_nat_portmap_acquire(pm, &held, CT_NAT_MANIP_SRC), -EEXIST);
	env_for(&env, &m, NULL);
	env.portmap = pm;
	m.taken[m.ntaken++] = held.reply;
	m.taken[m.ntaken++] = snat_reply(&o, "203.0.113.1", 5004);
	m.rnd[m.nrnd++] = 3;   /* first candidate 5003 */
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
	assert_int_equal(b.reply.dport, 5005);
	/* probes: 5004 (5003 was never offered: the map holds it), 5005 */
	assert_int_equal(m.nlog, 2);
	assert_int_equal(m.log[0].reply.dport, 5004);
	assert_int_equal(ct_nat_portmap_release(pm, &held, CT_NAT_MANIP_SRC), 0);
	assert_int_equal(ct_nat_portmap_release(pm, &held, CT_NAT_MANIP_SRC), -ENOENT);
	assert_int_equal(ct_nat_portmap_keys(pm), 0);
	ct_nat_portmap_destroy(pm);
}

/* A key's held ports outside the class searched do not fill it: with
 * 5003 held, a single-port range 5007 is free (the map once counted the
 * key's ports against the class size and called it full). */
static void test_port_map_ports_outside_the_class_do_not_fill_it(void **state)
{
	struct ct_nat_portmap *pm = ct_nat_portmap_create(0);
	struct ct_tuple o = tup4(17, "192.168.1.2", 40000, "198.51.100.1", 53);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS | CT_NAT_RANGE_PROTO_SPECIFIED,
				       "203.0.113.1", "203.0.113.1", 5007, 5007);
	struct ct_nat_binding b = mkbind(&o), held;
	struct ct_nat_env env;
	struct mock m;

	(void)state;
	assert_non_null(pm);
	held = mkbind(&o);
	held.orig.sport = 1;
	held.reply = snat_reply(&held.orig, "203.0.113.1", 5003);
	assert_int_equal(ct_nat_portmap_acquire(pm, &held, CT_NAT_MANIP_SRC), 0);
	env_for(&env, &m, NULL);
	env.portmap = pm;
	m.taken[m.ntaken++] = held.reply;
	m.rnd[m.nrnd++] = 0;
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
	assert_int_equal(b.reply.dport, 5007);
	ct_nat_portmap_destroy(pm);
}

/* with nothing in the map the first candidate is the kernel's first */
static void test_port_map_first_candidate_is_the_kernels(void **state)
{
	struct ct_nat_portmap *pm = ct_nat_portmap_create(0);
	struct ct_tuple o = tup4(6, "192.168.1.2", 40000, "198.51.100.1", 80);
	struct ct_nat_range r = range4(CT_NAT_RANGE_MAP_IPS, "203.0.113.1", "203.0.113.1", 0, 0);
	struct ct_nat_binding b = mkbind(&o);
	struct ct_nat_env env;
	struct mock m;

	(void)state;
	env_for(&env, &m, NULL);
	env.portmap = pm;
	m.taken[m.ntaken++] = snat_reply(&o, "203.0.113.1", 40000);
	m.rnd[m.nrnd++] = 5000;
	assert_int_equal(ct_nat_setup(&env, &b, &r, CT_NAT_MANIP_SRC, NULL), CT_NAT_BOUND);
	assert_int_equal(b.reply.dport, 6024);
	ct_nat_portmap_destroy(pm);
}

static bool accept_all(void *arg, const struct ct_tuple *cand)
{
	(void)cand;
	(*(unsigned *)arg)++;
	return true;
}

/* a key moves from the sorted array to the bitmap past 32 ports and back
 * at 16, answering the same all along: the first free port from a random
 * offset, cyclically, equals a plain scan of what is held */
static void test_port_map_array_and_bitmap_agree(void **state)
{
	struct ct_nat_portmap *pm = ct_nat_portmap_create(0);
	struct ct_tuple o = tup4(6, "192.168.1.2", 40000, "198.51.100.1", 80);
	static uint8_t held[65536];
	static const unsigned classes[][2] = { { 1024, 64 }, { 1000, 200 }, { 1024, 64512 },
					       { 0, 65536 }, { 65530, 6 } };
	uint64_t seed = 7;
	unsigned nheld = 0, maxheld = 0, calls = 0;

	(void)state;
	assert_non_null(pm);
	memset(held, 0, sizeof(held));
	for (int step = 0; step < 20000; step++) {
		const unsigned *cl = classes[step / 4000];
		unsigned min = cl[0], size = cl[1];
		struct ct_nat_binding b = mkbind(&o);
		struct ct_tuple cand;
		uint64_t probes = 0;
		unsigned want = 65536, p;
		uint16_t off;
		bool found;

		if (step % 4000 == 0) {
			/* a new class: empty the key first */
			for (unsigned q = 0; q < 65536; q++) {
				if (!held[q])
					continue;
				b.reply = snat_reply(&o, "203.0.113.1", (uint16_t)q);
				assert_int_equal(ct_nat_portmap_release(pm, &b, CT_NAT_MANIP_SRC), 0);
				held[q] = 0;
			}
			nheld = 0;
		}
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		/* grow to ~90% of a small class, then churn */
		p = min + (unsigned)((seed >> 40) % size);
		b.reply = snat_reply(&o, "203.0.113.1", (uint16_t)p);
		if (held[p]) {
			if (((seed >> 20) & 7) < 3 || nheld > size * 9 / 10) {
				assert_int_equal(ct_nat_portmap_release(pm, &b, CT_NAT_MANIP_SRC), 0);
				held[p] = 0;
				nheld--;
			}
		} else {
			assert_int_equal(ct_nat_portmap_acquire(pm, &b, CT_NAT_MANIP_SRC), 0);
			held[p] = 1;
			nheld++;
		}
		if (nheld > maxheld)
			maxheld = nheld;
		off = (uint16_t)(seed >> 48);
		for (unsigned i = 0; i < size; i++) {
			unsigned q = min + (off % size + i) % size;

			if (!held[q]) {
				want = q;
				break;
			}
		}
		assert_true(ct_tuple_invert(&b.reply, &cand));
		found = ct_nat_portmap_find(pm, &cand, CT_NAT_MANIP_SRC, min, size, off,
					    accept_all, &calls, &probes);
		assert_int_equal(found, want < 65536);
		if (found)
			assert_int_equal(cand.sport, want);
		assert_int_equal(probes, found ? 1 : 0);
	}
	/* the bitmap was used (more than 32 held) and left again */
	assert_true(maxheld > 32);
	ct_nat_portmap_destroy(pm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snat_keeps_the_original_tuple_when_in_range_and_unused),
		cmocka_unit_test(test_snat_to_one_address_keeps_a_free_port),
		cmocka_unit_test(test_search_port_classes_follow_the_original_port),
		cmocka_unit_test(test_search_offset_wraps_at_16_bits),
		cmocka_unit_test(test_search_gives_up_after_248_probes_in_five_rounds),
		cmocka_unit_test(test_search_schedule_depends_on_the_range_size),
		cmocka_unit_test(test_search_hints_are_the_next_probes_and_change_nothing),
		cmocka_unit_test(test_port_range_keeps_a_port_in_range_and_searches_one_outside),
		cmocka_unit_test(test_single_port_range_is_kept_when_taken),
		cmocka_unit_test(test_proto_offset_maps_the_port_by_its_distance_from_base),
		cmocka_unit_test(test_dnat_without_port_range_never_changes_the_port),
		cmocka_unit_test(test_dnat_port_range_search_starts_at_its_minimum),
		cmocka_unit_test(test_random_flags_always_search),
		cmocka_unit_test(test_existing_source_mapping_is_reused_newest_first),
		cmocka_unit_test(test_source_index_order_survives_growth),
		cmocka_unit_test(test_null_binding_changes_only_a_clashing_port),
		cmocka_unit_test(test_masquerade_maps_to_the_given_address_but_not_0_0_0_0),
		cmocka_unit_test(test_netmap_keeps_the_host_part),
		cmocka_unit_test(test_icmp_id_search),
		cmocka_unit_test(test_gre_key_is_never_changed),
		cmocka_unit_test(test_dnat_then_snat_compose),
		cmocka_unit_test(test_setup_refuses_nonsense),
		cmocka_unit_test(test_binding_status_from_listed_tuples),
		cmocka_unit_test(test_port_map_finds_every_free_port_at_99_percent),
		cmocka_unit_test(test_port_map_skips_an_occupant_it_was_not_told_about),
		cmocka_unit_test(test_port_map_first_candidate_is_the_kernels),
		cmocka_unit_test(test_port_map_ports_outside_the_class_do_not_fill_it),
		cmocka_unit_test(test_port_map_array_and_bitmap_agree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
