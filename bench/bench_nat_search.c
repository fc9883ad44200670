/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_nat_search.c - ctrack-bench nat-search: finding a source-NAT port
 * when the range is nearly full, the kernel's way and ctrack's.
 *
 * One NAT address, one server (203.0.113.1 -> 198.51.100.1:80, TCP), the
 * port class 1024-65535 (64512 ports) filled at random to --fill-pct.
 * Every new connection's own port is in use too, so each one searches.
 * Variants, side by side in one run on the same fill:
 *   kernel  nf_nat_l4proto_unique_tuple's schedule (128, 64, 32, 16, 8
 *           candidates from random offsets: at most 248 probes), then it
 *           gives up with a taken port;
 *   exact   ctrack's port map (nat_portmap.c): the kernel's first
 *           candidate, then the next free port in cyclic order.
 * steady:  --conns connections against the fill as it is (each chosen
 *          port is not kept, so the fill stays at --fill-pct): failure
 *          rate, probes per connection (a probe is a table lookup in
 *          phase 2), time per setup - mean, 99th percentile, max;
 * drain:   from the fill on, connections keep their port until the range
 *          is full: how many of the free ports each search hands out;
 * worst:   the exact search's worst case by construction - every port of
 *          the class in use but the one just before the start offset,
 *          so the whole map is walked - timed over --worst-rounds offsets.
 * The "taken" callback is an array lookup here, so the times are the
 * search's own; the probe counts say what the table adds.  Each timed
 * setup runs REPEAT times on the same state and the least time counts
 * (ns_* fields): on a shared machine a preempted run takes milliseconds,
 * which says nothing of the search.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_util.h"
#include "ctrack/nat.h"

#define CLASS_MIN 1024u
#define CLASS_SIZE 64512u

struct world {
	uint8_t used[65536];
	struct ct_tuple orig;         /* a connection's original tuple */
	struct ct_nat_range range;
	struct ct_nat_portmap *pm;
	uint64_t rng;
};

static bool taken(void *arg, const struct ct_nat_probe *p)
{
	const struct world *w = arg;

	return w->used[p->reply->dport] != 0;
}

static struct ct_nat_binding binding_to(const struct world *w, uint16_t cport, uint16_t nport)
{
	struct ct_nat_binding b;

	b.orig = w->orig;
	b.orig.sport = cport;
	(void)ct_tuple_invert(&b.orig, &b.reply);
	b.reply.dst = w->range.min_addr;
	b.reply.dport = nport;
	b.status = CT_NAT_S_SRC | CT_NAT_S_DONE_MASK;
	return b;
}

static void hold(struct world *w, uint16_t cport, uint16_t port)
{
	struct ct_nat_binding b = binding_to(w, cport, port);

	w->used[port] = 1;
	if (ct_nat_portmap_acquire(w->pm, &b, CT_NAT_MANIP_SRC) != 0) {
		fprintf(stderr, "ctrack-bench: nat-search: port map: no memory\n");
		exit(1);
	}
}

static void fill(struct world *w, unsigned pct)
{
	uint64_t want = (uint64_t)CLASS_SIZE * pct / 100, n = 0;

	while (n < want) {
		uint16_t p = (uint16_t)(CLASS_MIN + bu_rand(&w->rng) % CLASS_SIZE);

		if (w->used[p])
			continue;
		hold(w, (uint16_t)(1 + n % 60000), p);
		n++;
	}
}

static uint16_t fixed_rand(void *arg)
{
	return *(const uint16_t *)arg;
}

struct run {
	uint64_t conns, failed, probes, probes_max;
	double *ns;
};

/* Times repeated to take the least: on a shared machine a setup that
 * was preempted takes milliseconds; the least of a few identical runs is
 * the search's own time. */
#define REPEAT 3

/* one connection's setup (REPEAT identical runs: the same random draws,
 * the same fill); returns the chosen port, or -1 on failure */
static int one(struct world *w, bool exact, uint64_t i, struct run *r)
{
	struct ct_nat_select_stats st;
	struct ct_nat_env env, e;
	struct ct_nat_binding b, c;
	uint64_t best = UINT64_MAX;
	int rc = 0;

	memset(&env, 0, sizeof(env));
	env.taken = taken;
	env.taken_arg = w;
	env.rng = bu_rand(&w->rng);
	env.portmap = exact ? w->pm : NULL;
	b.orig = w->orig;
	/* a source port that is itself in use, so that every setup searches */
	do
		b.orig.sport = (uint16_t)(CLASS_MIN + bu_rand(&w->rng) % CLASS_SIZE);
	while (!w->used[b.orig.sport]);
	(void)ct_tuple_invert(&b.orig, &b.reply);
	b.status = 0;
	for (int k = 0; k < REPEAT; k++) {
		uint64_t t0, t1;

		e = env;
		c = b;
		memset(&st, 0, sizeof(st));
		e.stats = &st;
		t0 = bu_mono_ns();
		rc = ct_nat_setup(&e, &c, &w->range, CT_NAT_MANIP_SRC, NULL);
		t1 = bu_mono_ns();
		if (t1 - t0 < best)
			best = t1 - t0;
	}
	if (r->ns)
		r->ns[i] = (double)best;
	r->conns++;
	r->probes += st.probes;
	if (st.probes > r->probes_max)
		r->probes_max = st.probes;
	if (rc != CT_NAT_BOUND) {
		r->failed++;
		return -1;
	}
	return c.reply.dport;
}

static void report(const struct bench_args *a, const char *variant, unsigned pct,
		   struct run *r, uint64_t n)
{
	struct bu_rec rec;
	double mean = 0, p99, p999, max;

	for (uint64_t i = 0; i < n; i++)
		mean += r->ns[i];
	mean /= (double)(n ? n : 1);
	p99 = bu_percentile(r->ns, n, 99.0);
	p999 = bu_percentile(r->ns, n, 99.9);
	max = bu_percentile(r->ns, n, 100.0);
	bu_rec_begin(&rec, a, "nat-search", variant);
	bu_rec_int(&rec, "fill_pct", pct);
	bu_rec_int(&rec, "conns", r->conns);
	bu_rec_num(&rec, "fail_pct", 100.0 * (double)r->failed / (double)(r->conns ? r->conns : 1));
	bu_rec_num(&rec, "probes_per_conn", (double)r->probes / (double)(r->conns ? r->conns : 1));
	bu_rec_int(&rec, "probes_max", r->probes_max);
	bu_rec_num(&rec, "ns_mean", mean);
	bu_rec_num(&rec, "ns_p99", p99);
	bu_rec_num(&rec, "ns_p999", p999);
	bu_rec_num(&rec, "ns_max", max);
	bu_rec_end(&rec);
}

static struct world *world_new(unsigned pct, uint64_t seed)
{
	struct world *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	memset(&w->orig, 0, sizeof(w->orig));
	w->orig.l3 = CT_L3_IPV4;
	w->orig.l4 = 6;
	w->orig.src.ip4 = __builtin_bswap32(0xc0a80102);   /* 192.168.1.2 */
	w->orig.dst.ip4 = __builtin_bswap32(0xc6336401);   /* 198.51.100.1 */
	w->orig.dport = 80;
	w->range.flags = CT_NAT_RANGE_MAP_IPS;
	w->range.min_addr.ip4 = __builtin_bswap32(0xcb007101); /* 203.0.113.1 */
	w->range.max_addr = w->range.min_addr;
	w->rng = seed;
	w->pm = ct_nat_portmap_create(0);
	if (!w->pm) {
		free(w);
		return NULL;
	}
	fill(w, pct);
	return w;
}

static void world_free(struct world *w)
{
	ct_nat_portmap_destroy(w->pm);
	free(w);
}

int bench_nat_search(const struct bench_args *a)
{
	bool quick = bu_flag(a, "quick");
	unsigned pct = (unsigned)bu_opt_u64(a, "fill-pct", 99);
	uint64_t conns = bu_opt_u64(a, "conns", quick ? 20000 : 200000);
	uint64_t worst_rounds = bu_opt_u64(a, "worst-rounds", quick ? 2000 : 20000);
	struct world *w = world_new(pct, 0x24);
	double *ns = calloc(conns > worst_rounds ? conns : worst_rounds, sizeof(double));
	uint64_t freeports;

	if (!w || !ns) {
		fprintf(stderr, "ctrack-bench: nat-search: out of memory\n");
		return 1;
	}
	freeports = CLASS_SIZE - (uint64_t)CLASS_SIZE * pct / 100;
	bu_note(a, "nat-search: 1 NAT address, 1 server, class %u-%u, %u%% in use (%llu free)",
		CLASS_MIN, CLASS_MIN + CLASS_SIZE - 1, pct, (unsigned long long)freeports);

	/* steady: alternate the two variants in blocks on the same fill */
	{
		struct run rk = { 0, 0, 0, 0, ns }, re = { 0, 0, 0, 0, NULL };
		double *ns_e = calloc(conns, sizeof(double));

		if (!ns_e)
			return 1;
		re.ns = ns_e;
		for (uint64_t i = 0; i < conns; i++) {
			(void)one(w, false, i, &rk);
			(void)one(w, true, i, &re);
		}
		report(a, "steady-kernel", pct, &rk, conns);
		report(a, "steady-exact", pct, &re, conns);
		free(ns_e);
	}

	/* drain: each variant on its own copy of the fill, until full */
	for (int exact = 0; exact <= 1; exact++) {
		struct world *d = world_new(pct, 0x24);
		struct run r = { 0, 0, 0, 0, ns };
		uint64_t got = 0, tries = 0, limit = freeports * 4 + 16;
		struct bu_rec rec;

		if (!d)
			return 1;
		while (got < freeports && tries < limit) {
			int p = one(d, exact != 0, tries, &r);

			tries++;
			if (p >= 0) {
				hold(d, (uint16_t)(60001 + got % 5000), (uint16_t)p);
				got++;
			}
		}
		bu_rec_begin(&rec, a, "nat-search", exact ? "drain-exact" : "drain-kernel");
		bu_rec_int(&rec, "fill_pct", pct);
		bu_rec_int(&rec, "free_ports", freeports);
		bu_rec_int(&rec, "attempts", tries);
		bu_rec_int(&rec, "handed_out", got);
		bu_rec_int(&rec, "failed", r.failed);
		bu_rec_num(&rec, "fail_pct", 100.0 * (double)r.failed / (double)(tries ? tries : 1));
		bu_rec_num(&rec, "ns_max", bu_percentile(ns, tries, 100.0));
		bu_rec_end(&rec);
		world_free(d);
	}

	/* worst: everything taken but the port just before the start */
	{
		struct world *x = world_new(0, 7);
		struct bu_rec rec;
		uint64_t bad = 0;

		if (!x)
			return 1;
		for (uint32_t p = CLASS_MIN; p < CLASS_MIN + CLASS_SIZE; p++)
			hold(x, (uint16_t)(1 + p % 60000), (uint16_t)p);
		for (uint64_t i = 0; i < worst_rounds; i++) {
			uint16_t off = (uint16_t)bu_rand(&x->rng);
			uint16_t start = (uint16_t)(CLASS_MIN + off % CLASS_SIZE);
			uint16_t gap = (uint16_t)(start == CLASS_MIN ? CLASS_MIN + CLASS_SIZE - 1 : start - 1u);
			struct ct_nat_binding b = binding_to(x, (uint16_t)(1 + gap % 60000), gap);
			struct ct_nat_select_stats st;
			struct ct_nat_env env;
			struct ct_nat_binding c;
			uint64_t t0, t1;
			int rc;

			(void)ct_nat_portmap_release(x->pm, &b, CT_NAT_MANIP_SRC);
			x->used[gap] = 0;
			memset(&env, 0, sizeof(env));
			memset(&st, 0, sizeof(st));
			env.taken = taken;
			env.taken_arg = x;
			env.portmap = x->pm;
			env.stats = &st;
			env.rand16 = fixed_rand;
			env.rand_arg = &off;
			c.orig = x->orig;
			c.orig.sport = (uint16_t)(gap == CLASS_MIN + 1 ? CLASS_MIN + 2 : CLASS_MIN + 1);
			(void)ct_tuple_invert(&c.orig, &c.reply);
			c.status = 0;
			{
				uint64_t best = UINT64_MAX;

				for (int k = 0; k < REPEAT; k++) {
					struct ct_nat_binding cc = c;

					t0 = bu_mono_ns();
					rc = ct_nat_setup(&env, &cc, &x->range, CT_NAT_MANIP_SRC, NULL);
					t1 = bu_mono_ns();
					if (t1 - t0 < best)
						best = t1 - t0;
					if (rc != CT_NAT_BOUND || cc.reply.dport != gap)
						bad++;
				}
				ns[i] = (double)best;
			}
			hold(x, (uint16_t)(1 + gap % 60000), gap);
		}
		bu_rec_begin(&rec, a, "nat-search", "worst-exact");
		bu_rec_int(&rec, "rounds", worst_rounds);
		bu_rec_int(&rec, "free_ports", 1);
		bu_rec_int(&rec, "missed", bad);
		bu_rec_num(&rec, "ns_median", bu_percentile(ns, worst_rounds, 50.0));
		bu_rec_num(&rec, "ns_p99", bu_percentile(ns, worst_rounds, 99.0));
		bu_rec_num(&rec, "ns_max", bu_percentile(ns, worst_rounds, 100.0));
		bu_rec_end(&rec);
		world_free(x);
	}
	world_free(w);
	free(ns);
	return 0;
}
