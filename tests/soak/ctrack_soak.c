/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctrack_soak.c - churn at the table maximum for minutes: nothing drifts,
 * nothing leaks, memory stays flat, latencies stay put.
 *
 * Usage: ctrack-soak [--minutes M | --seconds S] [--max N] [--threads T] [--no-ns]
 *
 * Packet threads (T, default 2) open, use and close TCP connections and
 * UDP flows of random tuples far faster than entries expire, so the table
 * sits at its maximum (N, default 65536) and early drop runs all the time;
 * they abandon half their conversations, which then expire.  The table
 * starts with 64 rows, so it resizes several times while it fills.  The
 * library's collector thread runs throughout, on the same capture clock
 * the packet threads advance (2 ms of capture time per burst of 32).
 * The main thread creates namespaces 1..8 and tears them down in batches
 * while packets for them are in flight, and at checkpoints stops the
 * world (packet threads parked, collector stopped) to check, exactly:
 *   - ct_table_count() == entries ct_table_dump() reaches == stats count,
 *     and each namespace's count == entries of its zone;
 *   - NEW events - DESTROY events == entries, and insert - expired -
 *     deleted - early_drop == entries (each removal counted once);
 *   - every entry in a legal state; count <= max (+ one fold per thread);
 *   - every slab object carved is live, free or cached (no leak); after
 *     warm-up resident memory stays flat and slab chunks stay bounded.
 * Each burst's latency is recorded; every interval prints p50/p99/max.
 * Output is TAP: one line per check, figures as "# " comments.  The
 * default test suite runs it for 12 seconds (tests/soak/meson.build);
 * `make soak` for 10 minutes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../hostile/hostile_util.h"
#include "base/slab.h"
#include "support/audit.h"
#include "proto/proto.h"

#define BURST 32
#define POOL 4096          /* conversations a packet thread keeps going */
#define ZONES 8
#define HBUCKETS 512       /* latency histogram: 8 buckets per octave */

/* ---- latency histogram (log-linear, 8 sub-buckets per power of two) ---- */

struct hist {
	uint64_t n, max;
	uint64_t b[HBUCKETS];
};

static unsigned hist_bucket(uint64_t ns)
{
	unsigned lg, sub;

	if (ns < 8)
		return (unsigned)ns;
	lg = 63u - (unsigned)__builtin_clzll(ns);
	sub = (unsigned)(ns >> (lg - 3)) & 7u;
	return lg * 8u + sub < HBUCKETS ? lg * 8u + sub : HBUCKETS - 1;
}

static uint64_t bucket_value(unsigned i)
{
	unsigned lg = i / 8, sub = i % 8;

	if (i < 8)
		return i;
	return (8ull + sub) << (lg - 3);
}

static uint64_t hist_pct(const struct hist *h, double pct)
{
	uint64_t want = (uint64_t)((double)h->n * pct), acc = 0;

	for (unsigned i = 0; i < HBUCKETS; i++) {
		acc += h->b[i];
		if (acc > want)
			return bucket_value(i);
	}
	return h->max;
}

/* ---- shared state ---- */

struct soak {
	struct ct_table *t;
	unsigned threads;
	uint64_t max;
	_Atomic uint64_t clock;       /* capture time, ns */
	_Atomic bool stop;
	_Atomic bool pause;
	_Atomic unsigned parked;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	_Atomic uint64_t ev_new, ev_destroy;
	_Atomic uint64_t pkts, bursts;
	_Atomic int zone_live[ZONES + 1];
	struct hist *hists;           /* one per packet thread, per interval */
	uint64_t ns_destroy_max_ns;   /* longest ct_ns_destroy() this interval */
	bool no_ns;                   /* --no-ns: no namespace churn */
};

static void on_event(const struct ct_event *ev, void *arg)
{
	struct soak *s = arg;

	if (ev->type == CT_EV_NEW)
		atomic_fetch_add_explicit(&s->ev_new, 1, memory_order_relaxed);
	else if (ev->type == CT_EV_DESTROY)
		atomic_fetch_add_explicit(&s->ev_destroy, 1, memory_order_relaxed);
}

static ct_time_ns soak_clock(void *arg)
{
	return atomic_load(&((struct soak *)arg)->clock);
}

/* ---- packet threads ---- */

enum phase { P_NONE, P_SYN, P_SYNACK, P_ACK, P_DATA, P_FIN1, P_FIN2, P_RST, P_DONE, P_UDP };

struct conv {
	struct h_conn c;
	uint8_t phase;
	uint8_t udp;
	uint8_t exchanges;
};

struct worker {
	struct soak *s;
	unsigned id;
	uint64_t seed;
	struct conv pool[POOL];
};

static void conv_new(struct worker *w, struct conv *v)
{
	uint64_t r = h_rand(&w->seed);

	h_conn_init(&v->c, (uint32_t)r);
	v->c.t.src.ip4 = htonl(0x0a000000u | ((uint32_t)(r >> 8) & 0xffffff));
	v->c.t.dst.ip4 = htonl(0xc6120000u | ((uint32_t)(r >> 32) & 0xffff));
	v->c.t.sport = (uint16_t)(1024 + ((r >> 48) % 60000));
	v->c.t.zone = (r >> 40) % 5 == 0 ? (uint16_t)(1 + (r >> 20) % ZONES) : 0;
	v->udp = (r >> 4) % 10 < 3;
	if (v->udp) {
		v->c.t.l4 = IPPROTO_UDP;
		v->c.t.dport = 53;
		v->phase = P_UDP;
	} else {
		v->phase = P_SYN;
	}
	v->exchanges = (uint8_t)((r >> 12) % 6);
}

/* The next packet of conversation @v (false when it has nothing to send). */
static bool conv_next(struct worker *w, struct conv *v, struct ct_packet *p)
{
	struct ct_tuple rv = ts_reverse(&v->c.t);
	uint64_t r = h_rand(&w->seed);

	switch (v->phase) {
	case P_SYN:
		*p = h_tcp(&v->c.t, CT_TCP_SYN, v->c.cseq, 0, 0);
		v->c.cseq++;
		v->phase = r % 16 ? P_SYNACK : P_DONE;  /* some never answered */
		return true;
	case P_SYNACK:
		*p = h_tcp(&rv, CT_TCP_SYN | CT_TCP_ACK, v->c.sseq, v->c.cseq, 0);
		v->c.sseq++;
		v->phase = P_ACK;
		return true;
	case P_ACK:
		*p = h_tcp(&v->c.t, CT_TCP_ACK, v->c.cseq, v->c.sseq, 0);
		v->phase = P_DATA;
		return true;
	case P_DATA:
		*p = h_data(&v->c, (int)(v->exchanges & 1), 300);
		if (v->exchanges-- == 0)
			/* half close properly, a quarter reset, a quarter just stop */
			v->phase = r % 4 < 2 ? P_FIN1 : r % 4 == 2 ? P_RST : P_DONE;
		return true;
	case P_FIN1:
		*p = h_tcp(&v->c.t, CT_TCP_FIN | CT_TCP_ACK, v->c.cseq, v->c.sseq, 0);
		v->c.cseq++;
		v->phase = P_FIN2;
		return true;
	case P_FIN2:
		*p = h_tcp(&rv, CT_TCP_FIN | CT_TCP_ACK, v->c.sseq, v->c.cseq, 0);
		v->c.sseq++;
		v->phase = P_DONE;
		return true;
	case P_RST:
		*p = h_tcp(&rv, CT_TCP_RST, v->c.sseq, 0, 0);
		v->phase = P_DONE;
		return true;
	case P_UDP:
		*p = h_udp(v->exchanges & 1 ? &rv : &v->c.t, 80);
		if (v->exchanges-- == 0)
			v->phase = P_DONE;
		return true;
	default:
		return false;
	}
}

static void park(struct soak *s)
{
	pthread_mutex_lock(&s->lock);
	atomic_fetch_add(&s->parked, 1);
	pthread_cond_broadcast(&s->cond);
	while (atomic_load(&s->pause))
		pthread_cond_wait(&s->cond, &s->lock);
	atomic_fetch_sub(&s->parked, 1);
	pthread_mutex_unlock(&s->lock);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct soak *s = w->s;
	struct ct_thread *thr = ct_thread_attach(s->t);
	struct ct_packet pk[BURST];
	const struct ct_packet *pp[BURST];
	struct ct_verdict v[BURST];

	for (unsigned i = 0; i < POOL; i++)
		conv_new(w, &w->pool[i]);
	while (!atomic_load(&s->stop)) {
		unsigned n = 0;
		uint64_t t0, dt;
		ct_time_ns now;

		if (atomic_load(&s->pause)) {
			ct_thread_offline(thr);
			park(s);
			ct_thread_online(thr);
			continue;
		}
		while (n < BURST) {
			struct conv *c = &w->pool[h_rand(&w->seed) % POOL];

			/* new conversations arrive much faster than old ones end */
			if (c->phase == P_DONE || h_rand(&w->seed) % 8 == 0)
				conv_new(w, c);
			if (conv_next(w, c, &pk[n])) {
				pp[n] = &pk[n];
				n++;
			}
		}
		now = atomic_fetch_add(&s->clock, 2000000) + 2000000;
		t0 = h_mono_ns();
		ct_process_burst(thr, pp, n, now, v);
		dt = h_mono_ns() - t0;
		{
			struct hist *h = &s->hists[w->id];
			h->n++;
			h->b[hist_bucket(dt)]++;
			if (dt > h->max)
				h->max = dt;
		}
		atomic_fetch_add_explicit(&s->pkts, n, memory_order_relaxed);
		atomic_fetch_add_explicit(&s->bursts, 1, memory_order_relaxed);
	}
	ct_thread_detach(thr);
	return NULL;
}

/* ---- checkpoints ---- */

struct dump {
	uint64_t n, per_zone[ZONES + 1], other_zone, bad_state;
};

static int count_entry(const struct ct_conn_info *ci, void *arg)
{
	struct dump *d = arg;
	const struct ct_proto *p = ct_proto_find(ci->orig.l4);

	d->n++;
	if (ci->orig.zone <= ZONES)
		d->per_zone[ci->orig.zone]++;
	else
		d->other_zone++;
	if (p->n_states && (ci->l4state == 0 || ci->l4state >= p->n_states || !ci->state_name))
		d->bad_state++;
	return 0;
}

struct results {
	unsigned checkpoints, n;
	unsigned fail_count, fail_zone, fail_events, fail_books, fail_state, fail_max, fail_leak;
	uint64_t rss_warm, rss_peak_after, chunks_warm, chunks_peak_after;
	uint64_t worst_p99, worst_max;
	bool reached_max;
};

static void stop_world(struct soak *s)
{
	atomic_store(&s->pause, true);
	pthread_mutex_lock(&s->lock);
	/* (after the run the packet threads are gone: nothing to wait for) */
	while (atomic_load(&s->parked) < s->threads && !atomic_load(&s->stop))
		pthread_cond_wait(&s->cond, &s->lock);
	pthread_mutex_unlock(&s->lock);
	ct_gc_stop(s->t);
}

static void start_world(struct soak *s)
{
	ct_gc_start(s->t, soak_clock, s);
	pthread_mutex_lock(&s->lock);
	atomic_store(&s->pause, false);
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

static void checkpoint(struct soak *s, struct ct_thread *me, struct results *res,
		       bool warm, double elapsed)
{
	struct dump d;
	struct ct_stats st, zs;
	struct ts_audit a;
	uint64_t rss, news, destroys;

	memset(&d, 0, sizeof(d));
	stop_world(s);
	ct_table_dump(me, -1, count_entry, &d);
	ct_table_get_stats(s->t, &st);
	news = atomic_load(&s->ev_new);
	destroys = atomic_load(&s->ev_destroy);
	res->checkpoints++;
	if (d.n != ct_table_count(s->t) || d.n != st.count) {
		res->fail_count++;
		printf("# checkpoint %u: count %llu, stats %llu, reachable %llu\n", res->checkpoints,
		       (unsigned long long)ct_table_count(s->t), (unsigned long long)st.count,
		       (unsigned long long)d.n);
	}
	for (uint16_t z = 0; z <= ZONES; z++) {
		uint64_t want = ct_ns_get_stats(s->t, z, &zs) == 0 ? zs.count : 0;
		if (want != d.per_zone[z])
			res->fail_zone++;
	}
	if (d.other_zone)
		res->fail_zone++;
	if (news - destroys != d.n) {
		res->fail_events++;
		printf("# checkpoint %u: NEW %llu - DESTROY %llu != %llu entries\n", res->checkpoints,
		       (unsigned long long)news, (unsigned long long)destroys, (unsigned long long)d.n);
	}
	if (st.insert - st.expired - st.deleted - st.early_drop != d.n) {
		res->fail_books++;
		printf("# checkpoint %u: insert %llu - expired %llu - deleted %llu - early_drop %llu "
		       "!= %llu\n", res->checkpoints, (unsigned long long)st.insert,
		       (unsigned long long)st.expired, (unsigned long long)st.deleted,
		       (unsigned long long)st.early_drop, (unsigned long long)d.n);
	}
	if (d.bad_state)
		res->fail_state++;
	if (d.n > s->max + 64ull * (s->threads + 2))
		res->fail_max++;
	/* the table's own checks are above, in their categories */
	ts_audit(me, TS_AUDIT_MEMORY, &a);
	if (a.carved != a.live + a.free_objs + a.cached || a.live != d.n || a.map_bad) {
		res->fail_leak++;
		printf("# checkpoint %u: carved %llu != live %llu + free %llu + cached %llu"
		       " (free maps in disagreement: %llu)\n",
		       res->checkpoints, (unsigned long long)a.carved, (unsigned long long)a.live,
		       (unsigned long long)a.free_objs, (unsigned long long)a.cached,
		       (unsigned long long)a.map_bad);
	}
	rss = h_rss();
	/* steady state: past the warm-up time and the table was already full
	 * at an earlier checkpoint (it has grown its rows and slabs) */
	warm = warm && res->reached_max;
	/* full: at 90% now, or early drops show it was at its maximum */
	if (d.n * 10 >= s->max * 9 || st.early_drop > 0)
		res->reached_max = true;
	if (!warm) {
		res->rss_warm = rss > res->rss_warm ? rss : res->rss_warm;
		res->chunks_warm = a.chunks > res->chunks_warm ? a.chunks : res->chunks_warm;
	} else {
		if (rss > res->rss_peak_after)
			res->rss_peak_after = rss;
		if (a.chunks > res->chunks_peak_after)
			res->chunks_peak_after = a.chunks;
	}
	{
		struct hist sum;
		uint64_t p50, p99;

		memset(&sum, 0, sizeof(sum));
		for (unsigned i = 0; i < s->threads; i++) {
			struct hist *h = &s->hists[i];
			sum.n += h->n;
			for (unsigned b = 0; b < HBUCKETS; b++)
				sum.b[b] += h->b[b];
			if (h->max > sum.max)
				sum.max = h->max;
			memset(h, 0, sizeof(*h));
		}
		p50 = hist_pct(&sum, 0.50);
		p99 = hist_pct(&sum, 0.99);
		if (warm && p99 > res->worst_p99)
			res->worst_p99 = p99;
		if (warm && sum.max > res->worst_max)
			res->worst_max = sum.max;
		printf("# t=%.0fs %s entries=%llu rows=%llu rss=%.1fMiB chunks=%llu pkts=%llu "
		       "burst(32) p50=%lluns p99=%lluns max=%lluns early_drop=%llu drop=%llu "
		       "expired=%llu resizes=%llu gc_passes=%llu ns_destroy_max=%.1fms\n",
		       elapsed, warm ? "steady" : "warm-up", (unsigned long long)d.n,
		       (unsigned long long)a.rows, rss / 1048576.0, (unsigned long long)a.chunks,
		       (unsigned long long)atomic_load(&s->pkts), (unsigned long long)p50,
		       (unsigned long long)p99, (unsigned long long)sum.max,
		       (unsigned long long)st.early_drop, (unsigned long long)st.drop,
		       (unsigned long long)st.expired, (unsigned long long)st.resizes,
		       (unsigned long long)st.gc_passes, s->ns_destroy_max_ns / 1e6);
		s->ns_destroy_max_ns = 0;
		fflush(stdout);
	}
	start_world(s);
}

/* Slab chunks the maximum's entries need, at the largest entry size. */
static uint64_t chunks_for(const struct soak *s)
{
	uint64_t per_chunk = (CT_CHUNK_SIZE - 64) / ct_conn_size(s->t, IPPROTO_TCP);

	return (s->max + per_chunk - 1) / per_chunk;
}

/* ---- namespaces: created, then torn down in batches under traffic ---- */

static unsigned ns_churn(struct soak *s, struct ct_thread *me, uint64_t round)
{
	uint16_t ids[ZONES];
	unsigned k = 0, destroyed = 0;
	static const unsigned flags[3] = { 0, CT_NS_SWEEP, CT_NS_WALK };

	for (uint16_t z = 1; z <= ZONES; z++)
		if (!ct_ns_exists(s->t, z) && ct_ns_create(s->t, z, NULL) == 0)
			atomic_store(&s->zone_live[z], 1);
	/* every other round, half of them go in one batch */
	if (round % 2) {
		for (uint16_t z = (uint16_t)(1 + round % 2); z <= ZONES; z += 2)
			ids[k++] = z;
		uint64_t t0 = h_mono_ns(), dt;

		if (ct_ns_destroy(me, ids, k, atomic_load(&s->clock), flags[round % 3]) >= 0)
			destroyed = k;
		dt = h_mono_ns() - t0;
		if (dt > s->ns_destroy_max_ns)
			s->ns_destroy_max_ns = dt;
	}
	return destroyed;
}

int main(int argc, char **argv)
{
	struct soak s;
	struct results res;
	struct ct_table_config cfg;
	struct worker *ws;
	pthread_t *tids;
	struct ct_thread *me;
	double seconds = 12, warm_frac = 0.3;
	uint64_t t0, next_check, next_ns, round = 0, destroyed = 0;
	double check_every;
	unsigned n = 0, threads = 2;
	int bad = 0;

	memset(&s, 0, sizeof(s));
	memset(&res, 0, sizeof(res));
	s.max = 65536;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--minutes") && i + 1 < argc)
			seconds = atof(argv[++i]) * 60;
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--max") && i + 1 < argc)
			s.max = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--no-ns"))
			s.no_ns = true;
		else {
			fprintf(stderr, "usage: ctrack-soak [--minutes M | --seconds S] "
				"[--max N] [--threads T] [--no-ns]\n");
			return 2;
		}
	}
	if (threads < 1 || threads > 64 || seconds <= 0 || s.max < 1024) {
		fprintf(stderr, "ctrack-soak: bad arguments\n");
		return 2;
	}
	s.threads = threads;
	check_every = seconds >= 120 ? 10 : seconds / 6;

	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.settings.max = (uint32_t)s.max;
	cfg.settings.buckets = 64;               /* start tiny: resizes */
	/* capture time runs 10-100x faster than wall time here: timeouts of
	 * tens of seconds make abandoned conversations expire within the run */
	cfg.settings.udp_timeout = 10;
	cfg.settings.udp_timeout_stream = 30;
	cfg.settings.tcp_timeouts[CT_TCP_TO_SYN_SENT] = 20;
	cfg.settings.tcp_timeouts[CT_TCP_TO_SYN_SENT2] = 20;
	cfg.settings.tcp_timeouts[CT_TCP_TO_ESTABLISHED] = 30;
	cfg.settings.tcp_timeouts[CT_TCP_TO_TIME_WAIT] = 10;
	if (ct_table_create(&cfg, &s.t) != 0) {
		fprintf(stderr, "ctrack-soak: cannot create the table\n");
		return 2;
	}
	ct_table_set_event_handler(s.t, on_event, &s);
	pthread_mutex_init(&s.lock, NULL);
	pthread_cond_init(&s.cond, NULL);
	atomic_store(&s.clock, 1000 * H_SEC);
	s.hists = calloc(threads, sizeof(*s.hists));
	ws = calloc(threads, sizeof(*ws));
	tids = calloc(threads, sizeof(*tids));
	me = ct_thread_attach(s.t);
	if (!s.hists || !ws || !tids || !me)
		return 2;
	ns_churn(&s, me, 0);
	if (ct_gc_start(s.t, soak_clock, &s) != 0)
		return 2;
	for (unsigned i = 0; i < threads; i++) {
		ws[i].s = &s;
		ws[i].id = i;
		ws[i].seed = 0x1234567ull * (i + 1);
		pthread_create(&tids[i], NULL, worker_main, &ws[i]);
	}
	printf("# ctrack-soak: %.0f s, max %llu, %u packet threads + collector thread, "
	       "namespaces 1..%d torn down in batches\n", seconds, (unsigned long long)s.max,
	       threads, ZONES);
	t0 = h_mono_ns();
	next_check = t0 + (uint64_t)(check_every * 1e9);
	next_ns = t0 + 200 * H_MS;
	for (;;) {
		uint64_t now = h_mono_ns();
		double el = (double)(now - t0) / 1e9;

		if (now >= next_ns && !s.no_ns) {
			destroyed += ns_churn(&s, me, ++round);
			next_ns = now + 200 * H_MS;
		}
		if (now >= next_check) {
			checkpoint(&s, me, &res, el >= seconds * warm_frac, el);
			next_check = h_mono_ns() + (uint64_t)(check_every * 1e9);
		}
		if (el >= seconds)
			break;
		usleep(20000);
	}
	atomic_store(&s.stop, true);
	atomic_store(&s.pause, false);
	pthread_cond_broadcast(&s.cond);
	for (unsigned i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	/* the last checkpoint, with everything quiet */
	checkpoint(&s, me, &res, true, (double)(h_mono_ns() - t0) / 1e9);
	ct_gc_stop(s.t);

#define TAP(cond, ...) do { n++; if (cond) printf("ok %u - ", n); else { printf("not ok %u - ", n); bad = 1; } \
		printf(__VA_ARGS__); printf("\n"); } while (0)
	TAP(res.fail_count == 0, "count == reachable entries == stats count at %u checkpoints", res.checkpoints);
	TAP(res.fail_zone == 0, "each namespace's count == entries of its zone");
	TAP(res.fail_events == 0, "NEW - DESTROY events == entries");
	TAP(res.fail_books == 0, "insert - expired - deleted - early_drop == entries");
	TAP(res.fail_state == 0, "every entry in a legal state for its protocol");
	TAP(res.fail_max == 0, "entries <= maximum (+ one count fold per thread)");
	TAP(res.fail_leak == 0, "every slab object carved is live, free or cached");
	if (H_ASAN) {
		n++;
		printf("ok %u - resident memory: %.1f MiB at warm-up, peak %.1f MiB after "
		       "# SKIP AddressSanitizer's quarantine holds freed blocks\n", n,
		       res.rss_warm / 1048576.0, res.rss_peak_after / 1048576.0);
	} else {
		TAP(res.rss_peak_after <= res.rss_warm + res.rss_warm / 10 + 16ull * 1048576,
		    "resident memory flat after warm-up: %.1f MiB at warm-up, peak %.1f MiB after",
		    res.rss_warm / 1048576.0, res.rss_peak_after / 1048576.0);
	}
	/* Slab chunks hold the live entries plus those evicted or expired
	 * and waiting for their grace period: the second part follows the
	 * churn rate times the reclaim latency (liburcu's callback thread,
	 * slower when the CPUs are busy), not the run's length.  Bounded at
	 * four times what the maximum needs in a real soak; the short run in
	 * the test suite shares two CPUs with the other tests, where the
	 * callback thread can lag by a second, so it allows sixteen.  The
	 * exact audit above is what catches a leak. */
	TAP(res.chunks_peak_after <= (seconds >= 60 ? 4 : 16) * chunks_for(&s) + 64,
	    "slab chunks bounded after warm-up: %llu at warm-up, peak %llu after "
	    "(the maximum needs %llu)", (unsigned long long)res.chunks_warm,
	    (unsigned long long)res.chunks_peak_after, (unsigned long long)chunks_for(&s));
	TAP(res.reached_max && res.rss_peak_after > 0,
	    "the table reached its maximum and was watched in steady state after");
	TAP((destroyed > 0 || s.no_ns) && res.checkpoints >= 3,
	    "the run did its work: %llu namespaces torn down, %llu packets, %u checkpoints",
	    (unsigned long long)destroyed, (unsigned long long)atomic_load(&s.pkts), res.checkpoints);
	printf("# figure: soak %.0f s, %u threads, max %llu: %llu packets (%.2f M/s), burst of 32 "
	       "worst p99 %llu ns, worst max %llu ns (steady state)\n", seconds, threads,
	       (unsigned long long)s.max, (unsigned long long)atomic_load(&s.pkts),
	       (double)atomic_load(&s.pkts) / seconds / 1e6, (unsigned long long)res.worst_p99,
	       (unsigned long long)res.worst_max);
	printf("1..%u\n", n);
	ct_thread_detach(me);
	ct_table_set_event_handler(s.t, NULL, NULL);
	ct_table_destroy(s.t);
	free(s.hists);
	free(ws);
	free(tids);
	return bad;
}
