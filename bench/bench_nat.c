/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_nat.c - ctrack-bench nat: NAT through the table, side by side.
 *
 * One run, one thread, the same frames as Open vSwitch's side
 * (bench/ovs/frames.h: N UDP flows 10.0.x.y:port -> 192.168.0.1:53, the
 * servers' answers, L established lookups of random flows in random
 * directions), each phase timed in thread CPU time:
 *   new-plain    first packets through ct_classify + ct_pending_confirm on
 *                a table without NAT (and, for reference, ct_process);
 *   new-snat     first packets through ct_classify + ct_pending_nat
 *                (source NAT into 100.64.0.0/24, the port kept when free) +
 *                ct_pending_confirm + ct_nat_translate of the packet;
 *   est-plain    the lookups through ct_classify on the plain table (and
 *                ct_process);
 *   est-snat     the lookups through ct_classify + ct_nat_translate on the
 *                NAT table, the answers addressed to the translated source;
 * and the same four through OVS's conntrack_execute, ct(commit) and
 * ct(commit,nat(src=100.64.0.0-100.64.0.255)) (bench/ovs/ovs_ct_harness.c
 * "nat"), alternating runs, the medians compared: ctrack's NAT against its
 * own plain path (the targets: an established NATed packet with its
 * rewrite <= 1.25x an un-NATed one, a new source-NATed connection <= 2x a
 * new plain one) and against OVS (>= 3x on both).  Memory: the RSS a
 * connection costs on each table, and the bytes a binding adds, counted
 * from the layout (the NAT extension, the second slot).
 *
 * exhaustion: 99% (--fill-pct) of a 10,000-port source NAT range toward
 * one server held by connections in the table; new connections set up
 * with the kernel's search (248 random probes, each a table lookup) and
 * with the exact port map (nat_exact_ports), each dropped after its setup
 * so the fill stays: the failure rate, probes, and the setup time's
 * median, 99th percentile and maximum (the least of REPEAT identical
 * setups, so that a preemption is not taken for the search's time).
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>

#include "bench_util.h"
#include "peer.h"
#include "proto/proto.h"
#include "table/conn_key.h"

#define NAT_REPEAT 3

/* --workload's name, in every record */
static const char *nat_workload = "dense";

struct nat_cfg {
	uint32_t n;
	size_t l;
	bool spread;   /* --workload spread (spread_frames) */
};

/*
 * --workload spread: flow @i of a NAT gateway's more usual traffic -
 * client 10.0.0.0 + (i >> 8) + 1 with 256 source ports spread over
 * 1024-65535 (port 1024 + (j * 251 + c * 13) % 64512 for its j-th flow:
 * distinct within a client, staggered between clients), to one of 64
 * servers 192.168.1.1-64, port 53.  Clients that the kernel's jhash2 puts
 * on one NAT address seldom hold the same port toward the same server,
 * so the kept port is nearly always free and the port search seldom
 * runs: this isolates what a binding itself costs, where the dense
 * workload (OVS's frames, frames.h) adds the kernel's search over blocks
 * of taken ports.  Same slot layout as ovsb_flow_frames_at.
 */
static void spread_frames_at(uint8_t *slots, uint32_t first, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = first + k, c = i >> 8, j = i & 255;
		uint32_t cli = 0x0a000001u + c, srv = 0xc0a80101u + (i % 64);
		uint16_t cport = (uint16_t)(1024 + (j * 251 + c * 13) % 64512);
		uint8_t *f = slots + (size_t)k * OVSB_SLOT, *r = slots + ((size_t)n + k) * OVSB_SLOT;

		memset(f, 0, OVSB_SLOT);
		memset(r, 0, OVSB_SLOT);
		ovsb_udp_frame(f, 0x0a, 0x09, 64, cli, srv, cport, 53);
		ovsb_udp_frame(r, 0x09, 0x0a, 64, srv, cli, 53, cport);
	}
}

static void flow_frames_at(const struct nat_cfg *c, uint8_t *slots, uint32_t first, uint32_t n)
{
	if (c->spread)
		spread_frames_at(slots, first, n);
	else
		ovsb_flow_frames_at(slots, first, n);
}

static double tcpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct ct_table *nat_table(uint32_t n, bool nat)
{
	struct ct_table_config cfg;
	struct ct_table *t;

	ct_table_config_default(&cfg);
	cfg.settings.acct = 0;
	cfg.settings.checksum = 0;
	cfg.settings.max = 4 * n + 1024;
	cfg.nat = nat;
	if (getenv("CT_BENCH_NAT_ROWS"))
		cfg.settings.buckets = (uint32_t)strtoul(getenv("CT_BENCH_NAT_ROWS"), NULL, 0);
	return ct_table_create(&cfg, &t) ? NULL : t;
}

/* parse slot @f (a 42-byte UDP/IPv4 frame) */
static void parse(struct ct_packet *p, const uint8_t *f)
{
	ct_parse_frame(p, CT_LINK_ETHERNET, f, OVSB_UDP_FRAME_LEN, OVSB_UDP_FRAME_LEN, LG_NOW);
}

/* first packets, two-step, no NAT */
static uint64_t new_plain(struct ct_thread *thr, const uint8_t *slots, uint32_t n)
{
	uint64_t ok = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct ct_packet p;
		struct ct_classified cl;

		parse(&p, slots + (size_t)i * OVSB_SLOT);
		if (ct_classify(thr, &p, LG_NOW, &cl) == 0 && cl.cls == CT_CLASS_PENDING &&
		    ct_pending_confirm(thr, cl.pending, NULL) == CT_CONFIRM_INSERTED)
			ok++;
	}
	return ok;
}

/* first packets with source NAT, the packet rewritten; *@refused
 * counts confirms that failed (a row at the chain limit while the table
 * grows, a port the search could not find) */
static uint64_t new_snat(struct ct_thread *thr, uint8_t *slots, uint32_t n,
			 const struct ct_nat_range *r, uint64_t *refused)
{
	uint64_t ok = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint8_t *f = slots + (size_t)i * OVSB_SLOT;
		struct ct_packet p;
		struct ct_classified cl;
		struct ct_nat_binding b;

		parse(&p, f);
		if (ct_classify(thr, &p, LG_NOW, &cl) || cl.cls != CT_CLASS_PENDING)
			continue;
		ct_pending_nat(thr, cl.pending, r, CT_NAT_MANIP_SRC);
		if (ct_pending_confirm(thr, cl.pending, &b) < 0) {
			++*refused;
			continue;
		}
		if (ct_nat_translate(f, OVSB_UDP_FRAME_LEN, &p, &b, CT_DIR_ORIGINAL, 0, NULL) ==
		    CT_NAT_V_OK)
			ok++;
	}
	return ok;
}

/* established packets through ct_classify (and their rewrite, when the
 * entry has a binding); returns how many were ESTABLISHED */
static uint64_t est_classify(struct ct_thread *thr, uint8_t *slots, size_t l, bool xlate)
{
	uint64_t est = 0;

	for (size_t i = 0; i < l; i++) {
		uint8_t *f = slots + i * OVSB_SLOT;
		struct ct_packet p;
		struct ct_classified cl;

		parse(&p, f);
		if (ct_classify(thr, &p, LG_NOW, &cl) || cl.cls != CT_CLASS_TRACKED)
			continue;
		est++;
		if (xlate && cl.nat)
			ct_nat_translate(f, OVSB_UDP_FRAME_LEN, &p, &cl.binding,
					 (enum ct_dir)cl.v.dir, 0, NULL);
	}
	return est;
}

/* the same through the one-call path */
static uint64_t one_call(struct ct_thread *thr, const uint8_t *slots, size_t l, uint8_t cls)
{
	uint64_t k = 0;

	for (size_t i = 0; i < l; i++) {
		struct ct_packet p;
		struct ct_verdict v;

		parse(&p, slots + i * OVSB_SLOT);
		ct_process(thr, &p, LG_NOW, &v);
		k += v.cls == cls;
	}
	return k;
}

/* the kinds of table a child measures */
enum nat_kind { NK_PLAIN, NK_PROCESS, NK_SNAT };

struct nat_job {
	const struct nat_cfg *c;
	enum nat_kind kind;
	bool steady;
};

/* first packets of the kind's path over slots[first..first+m) */
static uint64_t new_kind(enum nat_kind kind, struct ct_thread *thr, uint8_t *slots, size_t first,
			 uint32_t m, const struct ct_nat_range *r, uint64_t *refused)
{
	uint8_t *f = slots + first * OVSB_SLOT;

	if (kind == NK_PLAIN)
		return new_plain(thr, f, m);
	if (kind == NK_PROCESS)
		return one_call(thr, f, m, CT_V_NEW);
	return new_snat(thr, f, m, r, refused);
}

/* new_kind for the fill and for the timed phase: two functions, so that
 * a profile (perf record --call-graph) tells the two apart */
static __attribute__((noinline)) uint64_t fill_kind(enum nat_kind kind, struct ct_thread *thr,
						    uint8_t *slots, uint32_t m,
						    const struct ct_nat_range *r, uint64_t *refused)
{
	uint64_t k = new_kind(kind, thr, slots, 0, m, r, refused);

	__asm__ volatile("" ::: "memory");   /* no tail call: the frame stays */
	return k;
}

static __attribute__((noinline)) uint64_t timed_kind(enum nat_kind kind, struct ct_thread *thr,
						     uint8_t *slots, size_t first, uint32_t m,
						     const struct ct_nat_range *r, uint64_t *refused)
{
	uint64_t k = new_kind(kind, thr, slots, first, m, r, refused);

	__asm__ volatile("" ::: "memory");
	return k;
}

/* remove the connections of the original frames slots[first..first+m)
 * (pristine: as the clients sent them), as conntrack -D would */
static uint64_t remove_conns(struct ct_thread *thr, const uint8_t *slots, size_t first, size_t m)
{
	uint64_t k = 0;

	for (size_t j = first; j < first + m; j++) {
		struct ct_packet p;

		parse(&p, slots + j * OVSB_SLOT);
		k += ct_table_delete(thr, &p.tuple, LG_NOW, NULL) == 1;
	}
	return k;
}

/*
 * One table, one process (forked from the same parent, so that every
 * kind starts from the same memory state): the new connections timed in
 * the job's regime - growth, a fresh table; steady, a table first filled
 * with N other flows that are removed OVSB_STEADY_CHUNK at a time,
 * untimed, as the timed new ones arrive (bench/ovs/frames.h) - then the
 * answers, then the established lookups.
 */
static void nat_child(void *arg, int fd)
{
	const struct nat_job *job = arg;
	uint32_t n = job->c->n;
	size_t l = job->c->l;
	enum nat_kind kind = job->kind;
	const char *kn = kind == NK_SNAT ? "snat" : "plain";
	uint8_t *orig = malloc((size_t)2 * n * OVSB_SLOT);
	uint8_t *work = malloc((size_t)2 * n * OVSB_SLOT);
	uint8_t *fill = job->steady ? malloc((size_t)2 * n * OVSB_SLOT) : NULL;
	uint8_t *fillw = job->steady ? malloc((size_t)n * OVSB_SLOT) : NULL;
	uint8_t *lk = kind != NK_PROCESS ? malloc(l * OVSB_SLOT) : NULL;
	struct ct_nat_range r;
	struct ct_table *t;
	struct ct_thread *thr;
	uint64_t s = 0x63747261636b2121ull, ok = 0, refused = 0, frefused = 0, removed = 0, rz = 0;
	struct ct_stats st;
	long rss0 = 0, rss1;
	double t0, tnew = 0;

	if (!orig || !work || (job->steady && (!fill || !fillw)) || (kind != NK_PROCESS && !lk))
		_exit(2);
	flow_frames_at(job->c, orig, 0, n);
	if (job->steady)
		flow_frames_at(job->c, fill, n, n);
	memset(&r, 0, sizeof(r));
	r.flags = CT_NAT_RANGE_MAP_IPS;
	r.min_addr.ip4 = htonl(OVSB_NAT_MIN);
	r.max_addr.ip4 = htonl(OVSB_NAT_MAX);
	if (!(t = nat_table(n, kind == NK_SNAT)) || !(thr = ct_thread_attach(t)))
		_exit(2);
	memcpy(work, orig, (size_t)2 * n * OVSB_SLOT);
	if (job->steady) {
		memcpy(fillw, fill, (size_t)n * OVSB_SLOT);
		(void)fill_kind(kind, thr, fillw, n, &r, &frefused);
		fdprintf(fd, "fill_conns %" PRIu64 "\n", ct_table_count(t));
		ct_table_get_stats(t, &st);
		rz = st.resizes;
		for (size_t k = 0; k < n; k += OVSB_STEADY_CHUNK) {
			uint32_t m = (uint32_t)(n - k < OVSB_STEADY_CHUNK ? n - k : OVSB_STEADY_CHUNK);

			removed += remove_conns(thr, fill, k, m);
			t0 = tcpu();
			ok += timed_kind(kind, thr, work, k, m, &r, &refused);
			tnew += tcpu() - t0;
		}
		fdprintf(fd, "fill_removed %" PRIu64 "\n", removed);
		ct_table_get_stats(t, &st);
		fdprintf(fd, "resizes_fill %" PRIu64 "\n", rz);
		fdprintf(fd, "resizes_timed %" PRIu64 "\n", st.resizes - rz);
	} else {
		rss0 = rss_bytes();
		t0 = tcpu();
		ok = timed_kind(kind, thr, work, 0, n, &r, &refused);
		tnew = tcpu() - t0;
	}
	if (kind == NK_PROCESS) {
		fdprintf(fd, "new_plain_process_ns %.2f\n", tnew * 1e9 / n);
		fdprintf(fd, "new_plain_process_ok %" PRIu64 "\n", ok);
		goto out;
	}
	fdprintf(fd, "new_%s_ns %.2f\n", kn, tnew * 1e9 / n);
	fdprintf(fd, "new_%s_ok %" PRIu64 "\n", kn, ok);
	if (kind == NK_SNAT) {
		ct_table_get_stats(t, &st);
		fdprintf(fd, "new_snat_refused %" PRIu64 " chaintoolong %" PRIu64
			 " insert_failed %" PRIu64 " nat_exhausted %" PRIu64 "\n", refused,
			 st.chaintoolong, st.insert_failed, st.nat_exhausted);
		ovsb_reply_frames_pristine(work + (size_t)n * OVSB_SLOT, work, n);
		ok = est_classify(thr, work + (size_t)n * OVSB_SLOT, n, true);
	} else {
		ok = one_call(thr, work + (size_t)n * OVSB_SLOT, n, CT_V_ESTABLISHED);
	}
	fdprintf(fd, "replies_established %" PRIu64 "\n", ok);
	if (!job->steady) {
		rss1 = rss_bytes();
		fdprintf(fd, "bytes_per_conn_%s %.1f\n", kn, (double)(rss1 - rss0) / n);
	}
	fdprintf(fd, "conns_%s %" PRIu64 "\n", kn, ct_table_count(t));
	if (kind == NK_SNAT)
		ovsb_reply_frames_pristine(work + (size_t)n * OVSB_SLOT, work, n);
	ovsb_nat_lookup_frames(lk, l, n, orig, (kind == NK_SNAT ? work : orig) + (size_t)n * OVSB_SLOT,
			       &s);
	t0 = tcpu();
	ok = est_classify(thr, lk, l, kind == NK_SNAT);
	fdprintf(fd, "est_%s_ns %.2f\n", kn, (tcpu() - t0) * 1e9 / l);
	fdprintf(fd, "est_%s_ok %" PRIu64 "\n", kn, ok);
	if (kind == NK_PLAIN) {
		t0 = tcpu();
		ok = one_call(thr, lk, l, CT_V_ESTABLISHED);
		fdprintf(fd, "est_plain_process_ns %.2f\n", (tcpu() - t0) * 1e9 / l);
	}
out:
	ct_thread_detach(thr);
	ct_table_destroy(t);
	free(lk);
	free(fillw);
	free(fill);
	free(work);
	free(orig);
}

/* ---- exhaustion ------------------------------------------------------ */

#define EX_MIN 20000u
#define EX_SIZE 10000u

struct ex_res {
	uint64_t conns, failed;
	double *ns;
};

static struct ct_packet ex_syn(uint32_t client, uint16_t sport)
{
	struct ct_packet p;
	struct ct_tuple t;

	memset(&t, 0, sizeof(t));
	t.l3 = CT_L3_IPV4;
	t.l4 = IPPROTO_UDP;
	t.src.ip4 = htonl(client);
	t.dst.ip4 = htonl(0xcb007101u);   /* 203.0.113.1 */
	t.sport = sport;
	t.dport = 80;
	memset(&p, 0, sizeof(p));
	p.kind = CT_PKT_TRACKABLE;
	p.tuple = t;
	p.l3_len = 28;
	p.l4_len = 8;
	p.l4_caplen = 8;
	return p;
}

static struct ct_nat_range ex_range(uint16_t lo, uint16_t hi)
{
	struct ct_nat_range r;

	memset(&r, 0, sizeof(r));
	r.flags = CT_NAT_RANGE_MAP_IPS | CT_NAT_RANGE_PROTO_SPECIFIED;
	r.min_addr.ip4 = r.max_addr.ip4 = htonl(0xc6336401u);
	r.min_proto = lo;
	r.max_proto = hi;
	return r;
}

/* the random source of a setup timed several times: each time the same */
static uint16_t ex_rand(void *arg)
{
	return (uint16_t)(bu_rand(arg) >> 48);
}

/* An entry's bytes, from the layout (no counters, no timestamps). */
static unsigned entry_bytes(uint8_t l3, bool nat)
{
	return (unsigned)ct_conn_obj_size(l3, ct_proto_find(IPPROTO_UDP)->priv_size,
					  nat ? CT_EXT_NAT : 0);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void exhaustion(const struct bench_args *a, bool exact, unsigned pct, uint64_t conns)
{
	struct ct_table_config cfg;
	struct ct_table *t;
	struct ct_thread *thr;
	struct ct_nat_range full = ex_range(EX_MIN, EX_MIN + EX_SIZE - 1);
	uint8_t used[EX_SIZE];
	uint64_t rng = 0x6e61742d73656172ull, failed = 0, want = (uint64_t)EX_SIZE * pct / 100;
	uint64_t draw = 0;
	double *ns = calloc(conns, sizeof(double));
	struct ct_stats st;
	struct bu_rec rec;
	uint64_t n = 0;

	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.settings.max = 0;
	cfg.nat = true;
	cfg.nat_exact_ports = exact;
	if (!ns || ct_table_create(&cfg, &t) || !(thr = ct_thread_attach(t)) ||
	    ct_thread_nat_random(thr, ex_rand, &draw)) {
		fprintf(stderr, "ctrack-bench: nat: no memory\n");
		exit(1);
	}
	memset(used, 0, sizeof(used));
	/* the fill: connections from 10.9.x.y, each to one port of its own */
	while (n < want) {
		uint16_t port = (uint16_t)(bu_rand(&rng) % EX_SIZE);
		struct ct_nat_range one = ex_range((uint16_t)(EX_MIN + port), (uint16_t)(EX_MIN + port));
		struct ct_packet p = ex_syn(0x0a090000u + (uint32_t)n, 5000);
		struct ct_classified cl;

		if (used[port])
			continue;
		used[port] = 1;
		int r1 = -100, r2 = -100;

		if (ct_classify(thr, &p, LG_NOW, &cl) || cl.cls != CT_CLASS_PENDING ||
		    (r1 = ct_pending_nat(thr, cl.pending, &one, CT_NAT_MANIP_SRC)) != CT_NAT_BOUND ||
		    (r2 = ct_pending_confirm(thr, cl.pending, NULL)) != CT_CONFIRM_INSERTED) {
			fprintf(stderr, "ctrack-bench: nat: the fill failed at %llu (%d %d)\n",
				(unsigned long long)n, r1, r2);
			exit(1);
		}
		n++;
	}
	for (uint64_t i = 0; i < conns; i++) {
		/* the same connection REPEAT times (its setup draws the same
		 * numbers from a fixed random source), the least time kept */
		struct ct_packet p = ex_syn(0x0a0a0000u + (uint32_t)(i & 0xffff),
					    (uint16_t)(EX_MIN + bu_rand(&rng) % EX_SIZE));
		uint64_t seed = bu_rand(&rng);
		double best = 1e30;
		int rc = 0;

		for (int k = 0; k < NAT_REPEAT; k++) {
			struct ct_classified cl;
			double t0;

			draw = seed;
			ct_classify(thr, &p, LG_NOW, &cl);
			if (cl.cls != CT_CLASS_PENDING) {
				fprintf(stderr, "ctrack-bench: nat: a setup's packet was not new\n");
				exit(1);
			}
			t0 = bu_mono_ns();
			rc = ct_pending_nat(thr, cl.pending, &full, CT_NAT_MANIP_SRC);
			t0 = (double)(bu_mono_ns() - t0);
			if (t0 < best)
				best = t0;
			ct_pending_drop(thr, cl.pending);
		}
		ns[i] = best;
		failed += rc == CT_NAT_BOUND_TAKEN;
	}
	ct_table_get_stats(t, &st);
	qsort(ns, conns, sizeof(double), cmp_d);
	bu_rec_begin(&rec, a, "nat", exact ? "exhaustion-exact" : "exhaustion-kernel");
	bu_rec_int(&rec, "fill_pct", pct);
	bu_rec_int(&rec, "range_ports", EX_SIZE);
	bu_rec_int(&rec, "free_ports", EX_SIZE - want);
	bu_rec_int(&rec, "conns", conns);
	bu_rec_num(&rec, "fail_pct", 100.0 * (double)failed / (double)conns);
	bu_rec_int(&rec, "nat_exhausted", st.nat_exhausted);
	bu_rec_num(&rec, "ns_median", ns[conns / 2]);
	bu_rec_num(&rec, "ns_p99", ns[(size_t)((double)conns * 0.99)]);
	bu_rec_num(&rec, "ns_max", ns[conns - 1]);
	bu_rec_str(&rec, "timed", "ct_pending_nat, least of 3 identical setups");
	bu_rec_end(&rec);
	free(ns);
	ct_thread_detach(thr);
	ct_table_destroy(t);
}

/* ---- the report ------------------------------------------------------ */

static void ratio_row(const struct bench_args *a, const char *what, double num, double den,
		      double target, const char *num_key, const char *den_key, uint32_t n,
		      unsigned runs)
{
	struct bu_rec rec;
	double x = den > 0 ? num / den : 0;

	bu_rec_begin(&rec, a, "nat", what);
	bu_rec_int(&rec, "conns", n);
	bu_rec_str(&rec, "workload", nat_workload);
	bu_rec_num(&rec, num_key, num);
	bu_rec_num(&rec, den_key, den);
	bu_rec_num(&rec, "ratio", x);
	bu_rec_num(&rec, "target_max", target);
	bu_rec_bool(&rec, "met", x > 0 && x <= target);
	bu_rec_int(&rec, "runs", runs);
	bu_rec_end(&rec);
}

static const char *const nat_regime[2] = { "growth", "steady" };

/* One repeat of ctrack's side in regime @rg: a child per table.  Fills
 * cv[0..3] (new_plain, new_snat, est_plain, est_snat), *@np and *@ep (the
 * one-call path's new and established) and, in growth, bpc[0..1]; false
 * when a child did not do the work. */
static bool ctrack_run(const struct nat_cfg *c, int rg, double cv[4], double *np, double *ep,
		       double bpc[2])
{
	struct ovsb_kv kp = { 0 }, kq = { 0 }, ks = { 0 };
	struct nat_job jp = { c, NK_PLAIN, rg == 1 }, jq = { c, NK_PROCESS, rg == 1 };
	struct nat_job js = { c, NK_SNAT, rg == 1 };
	double refused;
	bool good;

	/* every plain connection made and found; every NAT one too but those
	 * the kernel's port search gave up on (nat_exhausted: all flows go to
	 * one server, and a NAT address that jhash2 gives several clients
	 * gets their ports - 1024-5119 - several times over, so searches
	 * run; at 1M flows about 1 in 10^6 fails, as the kernel's would) */
	good = run_child(nat_child, &jp, &kp, NULL) == 0 && kv_num(&kp, "new_plain_ok") == c->n &&
	       kv_num(&kp, "est_plain_ok") == c->l;
	good = run_child(nat_child, &jq, &kq, NULL) == 0 &&
	       kv_num(&kq, "new_plain_process_ok") == c->n && good;
	good = run_child(nat_child, &js, &ks, NULL) == 0 && good;
	refused = kv_num(&ks, "new_snat_refused");
	good = good && kv_num(&ks, "new_snat_ok") + refused == c->n && refused <= c->n / 10000 &&
	       kv_num(&ks, "est_snat_ok") >= (double)c->l * 0.999;
	if (rg == 1)
		good = good && kv_num(&kp, "fill_removed") == c->n &&
		       kv_num(&kq, "fill_removed") == c->n &&
		       kv_num(&ks, "fill_removed") >= c->n - c->n / 10000;
	if (!good) {
		fprintf(stderr, "ctrack-bench: nat: ctrack's %s run did not do the work "
			"(new %s/%s/%s, est %s/%s; refused %s; fill removed %s/%s/%s)\n",
			nat_regime[rg], kv_str(&kp, "new_plain_ok"),
			kv_str(&kq, "new_plain_process_ok"), kv_str(&ks, "new_snat_ok"),
			kv_str(&kp, "est_plain_ok"), kv_str(&ks, "est_snat_ok"),
			kv_str(&ks, "new_snat_refused"), kv_str(&kp, "fill_removed"),
			kv_str(&kq, "fill_removed"), kv_str(&ks, "fill_removed"));
		return false;
	}
	if (rg == 1)
		fprintf(stderr, "ctrack-bench:   nat steady: resizes while filling / timed: plain %s / %s, "
			"ct_process %s / %s, snat %s / %s\n", kv_str(&kp, "resizes_fill"),
			kv_str(&kp, "resizes_timed"), kv_str(&kq, "resizes_fill"),
			kv_str(&kq, "resizes_timed"), kv_str(&ks, "resizes_fill"),
			kv_str(&ks, "resizes_timed"));
	cv[0] = kv_num(&kp, "new_plain_ns");
	cv[1] = kv_num(&ks, "new_snat_ns");
	cv[2] = kv_num(&kp, "est_plain_ns");
	cv[3] = kv_num(&ks, "est_snat_ns");
	*np = kv_num(&kq, "new_plain_process_ns");
	*ep = kv_num(&kp, "est_plain_process_ns");
	if (rg == 0) {
		bpc[0] = kv_num(&kp, "bytes_per_conn_plain");
		bpc[1] = kv_num(&ks, "bytes_per_conn_snat");
	}
	return true;
}

/* "K of N" with K == N (the harness's checks) */
static bool all_of(const char *v)
{
	unsigned k, n;

	return v && sscanf(v, "%u of %u", &k, &n) == 2 && k == n && n > 0;
}

/* One repeat of OVS's side in regime @rg: the harness once per table. */
static bool ovs_run(const struct ovsb_env *e, const struct nat_cfg *c, int rg, double ov[4],
		    double obpc[2])
{
	char a2[16], a3[24], a4[16], a5[8];
	char *argv[] = { (char *)e->harness, "nat", a2, a3, a4, a5, NULL };

	snprintf(a2, sizeof(a2), "%u", c->n);
	snprintf(a3, sizeof(a3), "%zu", c->l);
	snprintf(a4, sizeof(a4), "%s", nat_regime[rg]);
	for (int snat = 0; snat < 2; snat++) {
		const char *kn = snat ? "snat" : "plain";
		struct ovsb_kv ko = { 0 };
		char key[40];

		snprintf(a5, sizeof(a5), "%s", kn);
		snprintf(key, sizeof(key), "est_%s_mpps", kn);
		if (run_cmd(argv, NULL, NULL, &ko, NULL, NULL) || !kv_str(&ko, key) ||
		    !kv_str(&ko, "regime")) {
			fprintf(stderr, "ctrack-bench: nat: the OVS harness failed (%s %s)\n",
				nat_regime[rg], kn);
			return false;
		}
		/* every lookup found its entry, every answer was translated back */
		if (!all_of(kv_str(&ko, "est_check_established")) ||
		    (snat && !all_of(kv_str(&ko, "replies_translated_back")))) {
			fprintf(stderr, "ctrack-bench: nat: OVS's %s %s run lost entries (established "
				"%s, translated back %s): not counted\n", nat_regime[rg], kn,
				kv_str(&ko, "est_check_established"),
				kv_str(&ko, "replies_translated_back"));
			return false;
		}
		ov[2 + snat] = 1e3 / kv_num(&ko, key);   /* ns per packet */
		snprintf(key, sizeof(key), "new_%s_mpps", kn);
		ov[snat] = 1e3 / kv_num(&ko, key);
		snprintf(key, sizeof(key), "bytes_per_conn_%s", kn);
		if (rg == 0)
			obpc[snat] = kv_num(&ko, key);
		fprintf(stderr, "ctrack-bench:   nat %s %s: OVS %s%s%sestablished check %s\n",
			nat_regime[rg], kn, snat ? "replies translated back " : "",
			snat ? kv_str(&ko, "replies_translated_back") : "",
			snat ? ", " : "", kv_str(&ko, "est_check_established"));
	}
	return true;
}

int bench_nat(const struct bench_args *a)
{
	bool quick = bu_flag(a, "quick");
	struct nat_cfg c = {
		(uint32_t)bu_opt_u64(a, "conns", quick ? 100000 : 1000000),
		(size_t)bu_opt_u64(a, "lookups", quick ? 500000 : 2000000),
		false,
	};
	unsigned repeat = (unsigned)bu_opt_u64(a, "repeat", quick ? 1 : 3);
	unsigned pct = (unsigned)bu_opt_u64(a, "fill-pct", 99);
	uint64_t exconns = bu_opt_u64(a, "exhaustion-conns", quick ? 2000 : 20000);
	bool ovs;
	struct ovsb_env e;
	static const char *keys[] = { "new_plain", "new_snat", "est_plain", "est_snat" };
	/* [regime][phase][run]: regime 0 growth, 1 steady */
	static double cv[2][4][OVSB_MAX_REPEAT], ov[2][4][OVSB_MAX_REPEAT];
	double eproc[2][OVSB_MAX_REPEAT], nproc[2][OVSB_MAX_REPEAT], bpc[2][OVSB_MAX_REPEAT];
	double obpc[2][OVSB_MAX_REPEAT];
	unsigned runs[2] = { 0, 0 }, oruns[2] = { 0, 0 }, rgs[2], n_rg;
	bool want[2] = { false, false };

	c.spread = !strcmp(bu_opt_str(a, "workload", "dense"), "spread");
	nat_workload = c.spread ? "spread" : "dense";
	/* OVS's harness makes the dense frames only */
	ovs = !bu_flag(a, "no-ovs") && !c.spread;
	if (repeat > OVSB_MAX_REPEAT)
		repeat = OVSB_MAX_REPEAT;
	n_rg = bu_opt_words(a, "regime", "growth,steady", nat_regime, 2, rgs, 2);
	for (unsigned i = 0; i < n_rg; i++)
		want[rgs[i]] = true;
	memset(&e, 0, sizeof(e));
	e.json = a->json;
	e.repeat = (int)repeat;
	if (ovs && (find_paths(&e) || build_peer(&e))) {
		bu_note(a, "nat: Open vSwitch's peer could not be built or found; ctrack alone");
		ovs = false;
	}
	bu_note(a, "nat: %u flows (%s workload), %zu established lookups, %u runs, regimes growth "
		"and steady%s", c.n, c.spread ? "spread" : "dense", c.l, repeat,
		ovs ? ", OVS alternating" : "");
	for (unsigned k = 0; k < repeat; k++)
		for (int rg = 0; rg < 2; rg++) {
			double cvr[4], ovr[4], bp[2] = { 0, 0 }, obp[2] = { 0, 0 }, np, ep;

			if (!want[rg])
				continue;
			if (ctrack_run(&c, rg, cvr, &np, &ep, bp)) {
				unsigned i = runs[rg]++;

				for (int p = 0; p < 4; p++)
					cv[rg][p][i] = cvr[p];
				nproc[rg][i] = np;
				eproc[rg][i] = ep;
				if (rg == 0) {
					bpc[0][i] = bp[0];
					bpc[1][i] = bp[1];
				}
			}
			if (ovs && ovs_run(&e, &c, rg, ovr, obp)) {
				unsigned i = oruns[rg]++;

				for (int p = 0; p < 4; p++)
					ov[rg][p][i] = ovr[p];
				if (rg == 0) {
					obpc[0][i] = obp[0];
					obpc[1][i] = obp[1];
				}
			}
		}
	if ((want[0] && !runs[0]) || (want[1] && !runs[1]))
		return 1;
	for (int rg = 0; rg < 2; rg++) {
		double m[4];
		struct bu_rec rec;
		char what[48];

		if (!want[rg])
			continue;
		for (int i = 0; i < 4; i++) {
			m[i] = median(cv[rg][i], runs[rg]);
			snprintf(what, sizeof(what), "%s-%s", nat_regime[rg], keys[i]);
			bu_rec_begin(&rec, a, "nat", what);
			bu_rec_str(&rec, "regime", nat_regime[rg]);
			bu_rec_int(&rec, "conns", c.n);
			bu_rec_str(&rec, "workload", nat_workload);
			bu_rec_num(&rec, "ctrack_ns_per_pkt", m[i]);
			if (oruns[rg]) {
				double o = median(ov[rg][i], oruns[rg]);

				bu_rec_num(&rec, "ovs_ns_per_pkt", o);
				bu_rec_num(&rec, "vs_ovs", o / m[i]);
				if (i == 1 || i == 3) {
					bu_rec_num(&rec, "vs_ovs_target_min", 3.0);
					bu_rec_bool(&rec, "vs_ovs_met", o / m[i] >= 3.0);
				}
				if (i == 0 || i == 2)
					bu_rec_num(&rec, "plain_vs_ovs_plain", o / m[i]);
			}
			bu_rec_int(&rec, "runs", runs[rg]);
			bu_rec_str(&rec, "timed", "thread cpu, one thread, one process per table");
			bu_rec_end(&rec);
		}
		snprintf(what, sizeof(what), "%s-new-snat-vs-plain", nat_regime[rg]);
		ratio_row(a, what, m[1], m[0], 2.0, "snat_ns", "plain_ns", c.n, runs[rg]);
		snprintf(what, sizeof(what), "%s-est-snat-vs-plain", nat_regime[rg]);
		ratio_row(a, what, m[3], m[2], 1.25, "snat_ns", "plain_ns", c.n, runs[rg]);
		snprintf(what, sizeof(what), "%s-new-snat-vs-one-call", nat_regime[rg]);
		ratio_row(a, what, m[1], median(nproc[rg], runs[rg]), 2.0, "snat_ns",
			  "ct_process_ns", c.n, runs[rg]);
		snprintf(what, sizeof(what), "%s-est-snat-vs-one-call", nat_regime[rg]);
		ratio_row(a, what, m[3], median(eproc[rg], runs[rg]), 1.25, "snat_ns",
			  "ct_process_ns", c.n, runs[rg]);
	}
	if (want[0]) {
		struct bu_rec rec;

		bu_rec_begin(&rec, a, "nat", "memory");
		bu_rec_int(&rec, "conns", c.n);
			bu_rec_str(&rec, "workload", nat_workload);
		bu_rec_num(&rec, "ctrack_bytes_per_conn_plain", median(bpc[0], runs[0]));
		bu_rec_num(&rec, "ctrack_bytes_per_conn_snat", median(bpc[1], runs[0]));
		if (oruns[0]) {
			bu_rec_num(&rec, "ovs_bytes_per_conn_plain", median(obpc[0], oruns[0]));
			bu_rec_num(&rec, "ovs_bytes_per_conn_snat", median(obpc[1], oruns[0]));
		}
		bu_rec_int(&rec, "entry_bytes_plain_udp4", entry_bytes(CT_L3_IPV4, false));
		bu_rec_int(&rec, "entry_bytes_snat_udp4", entry_bytes(CT_L3_IPV4, true));
		bu_rec_int(&rec, "entry_bytes_plain_udp6", entry_bytes(CT_L3_IPV6, false));
		bu_rec_int(&rec, "entry_bytes_snat_udp6", entry_bytes(CT_L3_IPV6, true));
		bu_rec_int(&rec, "second_slot_bytes", 8);
		bu_rec_str(&rec, "measured", "rss delta over the growth regime's new and reply phases; entry bytes from the layout");
		bu_rec_end(&rec);
	}
	if (ovs)
		bu_note(a, "nat: OVS: %s nat %u %zu growth|steady plain|snat", e.harness, c.n, c.l);
	exhaustion(a, false, pct, exconns);
	exhaustion(a, true, pct, exconns);
	return 0;
}
