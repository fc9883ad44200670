/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_ovs.c - Open vSwitch as the peer: its own `ovstest test-conntrack
 * benchmark` (workload bench) and the large tables (workload large),
 * ctrack doing identical work in a forked child beside it.
 */
#include "peer.h"

/* -------------------------------------------- workload 1: OVS's benchmark */

struct bw_cfg {
	unsigned threads;
	unsigned long pkts;       /* per thread, as OVS's n_pkts */
	unsigned batch;
	bool change;
};

struct bw_thread {
	pthread_t th;
	struct ct_table *t;
	const struct bw_cfg *c;
	pthread_barrier_t *bar;
	unsigned tid;
	uint64_t bad;             /* verdicts INVALID / DROP / UNTRACKED */
	int err;
};

static ct_time_ns mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ct_time_ns)ts.tv_sec * 1000000000ull + (ct_time_ns)ts.tv_nsec;
}

/* One thread of OVS's benchmark, ctrack's way: the batch is parsed and
 * tracked N/B times, as conntrack_execute() extracts and tracks the same
 * batch N/B times in ct_thread_main(). */
static void *bw_thread_main(void *arg)
{
	struct bw_thread *w = arg;
	uint8_t frames[CT_BURST_MAX][OVSB_SLOT];
	struct ct_packet pk[CT_BURST_MAX];
	const struct ct_packet *pp[CT_BURST_MAX];
	struct ct_verdict v[CT_BURST_MAX];
	struct ct_thread *thr = ct_thread_attach(w->t);
	unsigned b = w->c->batch;
	ct_time_ns now = mono_ns();

	w->err = !thr;
	for (unsigned j = 0; j < b; j++) {
		ovsb_bench_frame(frames[j], w->tid, j, w->c->change);
		pp[j] = &pk[j];
	}
	pthread_barrier_wait(w->bar);
	for (unsigned long i = 0; thr && i < w->c->pkts; i += b) {
		for (unsigned j = 0; j < b; j++)
			ct_parse_frame(&pk[j], CT_LINK_ETHERNET, frames[j],
				       OVSB_UDP_FRAME_LEN, OVSB_UDP_FRAME_LEN, now);
		ct_process_burst(thr, pp, b, now, v);
	}
	pthread_barrier_wait(w->bar);
	for (unsigned j = 0; thr && j < b; j++)
		if (v[j].cls != CT_V_NEW && v[j].cls != CT_V_ESTABLISHED)
			w->bad++;
	if (thr)
		ct_thread_detach(thr);
	return NULL;
}

static void bw_child(void *arg, int fd)
{
	const struct bw_cfg *c = arg;
	struct ct_table_config cfg;
	struct ct_table *t;
	struct bw_thread w[64];
	pthread_barrier_t bar;
	uint64_t bad = 0;
	unsigned long iters = (c->pkts + c->batch - 1) / c->batch;
	double t0, t1;

	ct_table_config_default(&cfg);
	cfg.settings.acct = ovsb_acct;
	if (ct_table_create(&cfg, &t))
		_exit(2);
	pthread_barrier_init(&bar, NULL, c->threads + 1);
	for (unsigned i = 0; i < c->threads; i++) {
		w[i] = (struct bw_thread){ .t = t, .c = c, .bar = &bar, .tid = i };
		pthread_create(&w[i].th, NULL, bw_thread_main, &w[i]);
	}
	pthread_barrier_wait(&bar);
	t0 = mono_s();
	pthread_barrier_wait(&bar);
	t1 = mono_s();
	for (unsigned i = 0; i < c->threads; i++) {
		pthread_join(w[i].th, NULL);
		bad += w[i].bad + (uint64_t)w[i].err;
	}
	fdprintf(fd, "ms %.3f\n", (t1 - t0) * 1e3);
	fdprintf(fd, "mpps %.4f\n", (double)c->threads * iters * c->batch / (t1 - t0) / 1e6);
	fdprintf(fd, "conns %llu\n", (unsigned long long)ct_table_count(t));
	fdprintf(fd, "bad %llu\n", (unsigned long long)bad);
	ct_table_destroy(t);
}

/* The hex payload of OVS's benchmark, read from the source being measured
 * (the string literal pieces after "payload[] ="), decoded into @out. */
int ovs_bench_payload(const struct ovsb_env *e, uint8_t *out, unsigned cap)
{
	char path[PATH_MAX + 64], hex[512];
	size_t hl = 0;
	unsigned n = 0;
	FILE *f;
	unsigned c;
	int state = 0;   /* 0 before "payload[]", 1 in decl, 2 done */

	snprintf(path, sizeof(path), "%s/src/tests/test-conntrack.c", e->cache);
	f = fopen(path, "r");
	if (!f)
		return -1;
	{
		char line[512];
		bool in_str = false;

		while (state < 2 && fgets(line, sizeof(line), f)) {
			char *s = line;

			if (state == 0) {
				s = strstr(line, "payload[] =");
				if (!s)
					continue;
				state = 1;
			}
			for (; *s && state == 1; s++) {
				if (*s == '"')
					in_str = !in_str;
				else if (in_str && hl < sizeof(hex) - 1)
					hex[hl++] = *s;
				else if (!in_str && *s == ';')
					state = 2;
			}
		}
	}
	fclose(f);
	hex[hl] = '\0';
	for (size_t i = 0; i + 1 < hl && n < cap; i += 2) {
		if (sscanf(hex + i, "%2x", &c) != 1)
			return -1;
		out[n++] = (uint8_t)c;
	}
	return state == 2 ? (int)n : -1;
}

/*
 * The figure is packets per CPU-second and thread: the packets both sides
 * sent, over the CPU time (user + system, every thread) of the whole
 * process, divided by the threads.  On an idle machine that is the wall
 * rate; on this shared, loaded one it does not count the time a side spent
 * descheduled.  Process set-up (32 frames, the table, the threads) is in
 * both sides' CPU time and is small next to millions of packets.  The wall
 * rates (OVS's own printed time; ctrack's between the same barriers) are
 * kept in the row's parameters.
 */
void wl_bench(const struct ovsb_env *e, unsigned threads, bool change,
	      unsigned long pkts)
{
	struct bw_cfg c = { threads, pkts, 32, change };
	double om[OVSB_MAX_REPEAT], cm[OVSB_MAX_REPEAT];
	double ow[OVSB_MAX_REPEAT], cw[OVSB_MAX_REPEAT];
	unsigned long iters = (pkts + c.batch - 1) / c.batch;
	double total = (double)threads * iters * c.batch;
	char a1[16], a2[32], a3[16], ocmd[PATH_MAX + 128], ccmd[PATH_MAX + 256], params[320];
	char *argv[] = { (char *)e->ovstest, "test-conntrack", "benchmark", a1, a2, a3,
			 change ? "1" : NULL, NULL };
	unsigned runs = 0;

	snprintf(a1, sizeof(a1), "%u", threads);
	snprintf(a2, sizeof(a2), "%lu", pkts);
	snprintf(a3, sizeof(a3), "%u", c.batch);
	cmdline(ocmd, sizeof(ocmd), argv);
	for (int r = 0; r < e->repeat; r++) {
		struct ovsb_kv ko = { 0 }, kc = { 0 };
		double ms = -1, ocpu = 0, ccpu = 0;
		const char *s;

		if (run_cmd(argv, NULL, NULL, &ko, NULL, &ocpu) == 0 &&
		    (s = kv_str(&ko, "conntrack:")) != NULL)
			ms = strtod(s, NULL);
		if (run_child(bw_child, &c, &kc, &ccpu) || kv_num(&kc, "bad") != 0) {
			fprintf(stderr, "ctrack-bench: ctrack run failed (bad verdicts: %s)\n",
				kv_str(&kc, "bad") ? kv_str(&kc, "bad") : "?");
			continue;
		}
		if (ms <= 0 || ocpu <= 0 || ccpu <= 0) {
			fprintf(stderr, "ctrack-bench: ovstest run failed: %s\n", ocmd);
			continue;
		}
		if (kv_num(&kc, "conns") != (change ? threads * c.batch : threads))
			fprintf(stderr, "ctrack-bench: warning: ctrack table holds %s entries\n",
				kv_str(&kc, "conns"));
		om[runs] = total / (ocpu / threads) / 1e6;
		cm[runs] = total / (ccpu / threads) / 1e6;
		ow[runs] = total / (ms * 1e-3) / 1e6;
		cw[runs] = kv_num(&kc, "mpps");
		runs++;
		fprintf(stderr, "ctrack-bench:   bench T=%u%s run %d: ovs %.2f Mpps, ctrack %.2f "
			"Mpps per cpu-second (wall: %.2f, %.2f)\n", threads, change ? " change" : "",
			r + 1, om[runs - 1], cm[runs - 1], ow[runs - 1], cw[runs - 1]);
	}
	snprintf(ccmd, sizeof(ccmd),
		 "%s/bench/ctrack-bench ovs bench: %u thread(s), %lu pkts each, "
		 "ct_parse_frame + ct_process_burst of %u", e->build, threads, pkts, c.batch);
	snprintf(params, sizeof(params),
		 "\"threads\":%u,\"pkts_per_thread\":%lu,\"batch\":%u,\"change_conn\":%d,"
		 "\"acct\":%d,"
		 "\"timed\":\"process cpu / threads\",\"ovs_wall_mpps\":%.4f,"
		 "\"ctrack_wall_mpps\":%.4f", threads, pkts, c.batch, change, ovsb_acct,
		 median(ow, runs), median(cw, runs));
	struct ovsb_row row = { "bench", change ? "benchmark-change" : "benchmark",
		"mpps", true, median(om, runs), median(cm, runs), change ? 0 : 3.0, runs,
		ocmd, ccmd, params, "ovs", 0, 0 };

	run_ratio_range(&row, om, cm, runs);
	report(e, &row);
}

/* ------------------------------------------ workload 2: large tables */

struct lg_cfg {
	uint32_t n;
	size_t l;
};

/* Send slots first..first+n-1 through ctrack, 32 per burst, in zone
 * @zone: the same frames, order and burst size as run() in the OVS
 * harness. */
void lg_run(struct ct_thread *thr, const uint8_t *slots, size_t first,
	    size_t n, uint16_t zone, struct ct_verdict *v)
{
	struct ct_packet pk[32];
	const struct ct_packet *pp[32];

	for (int j = 0; j < 32; j++)
		pp[j] = &pk[j];
	for (size_t k = 0; k < n; k += 32) {
		unsigned m = n - k < 32 ? (unsigned)(n - k) : 32;

		for (unsigned j = 0; j < m; j++) {
			ct_parse_frame(&pk[j], CT_LINK_ETHERNET,
				       slots + (first + k + j) * OVSB_SLOT,
				       OVSB_UDP_FRAME_LEN, OVSB_UDP_FRAME_LEN, LG_NOW);
			pk[j].tuple.zone = zone;
		}
		ct_process_burst(thr, pp, m, LG_NOW, v);
	}
}

/* CPU time of the calling thread: the large-table phases are single
 * threaded on both sides and timed this way on both, so that time spent
 * descheduled on this shared machine lands on neither. */
double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void lg_child(void *arg, int fd)
{
	const struct lg_cfg *c = arg;
	uint32_t n = c->n;
	uint8_t *slots = malloc((size_t)2 * n * OVSB_SLOT);
	uint8_t *lk = malloc(c->l * OVSB_SLOT);
	struct ct_table_config cfg;
	struct ct_verdict v[32];
	struct ct_thread *thr;
	struct ct_table *t;
	uint64_t h = OVSB_FNV_INIT;
	unsigned est = 0, other = 0;
	long rss0, rss1;
	double t0, w0;

	if (!slots || !lk)
		_exit(2);
	ovsb_flow_frames(slots, n);
	ovsb_lookup_frames(lk, c->l, n);
	h = ovsb_fnv(h, slots, (size_t)2 * n * OVSB_SLOT);
	h = ovsb_fnv(h, lk, c->l * OVSB_SLOT);
	fdprintf(fd, "frames_fnv %016llx\n", (unsigned long long)h);

	ct_table_config_default(&cfg);
	cfg.settings.acct = ovsb_acct;
	cfg.settings.max = 2 * n + 1024;     /* as the harness sets OVS's limit */
	if (ct_table_create(&cfg, &t))
		_exit(2);
	thr = ct_thread_attach(t);
	if (!thr || ct_ns_create(t, 1, NULL) || ct_ns_create(t, 2, NULL))
		_exit(2);
	rss0 = rss_bytes();

	t0 = cpu_s();
	w0 = mono_s();
	w0 = mono_s();
	lg_run(thr, slots, 0, n, 0, v);
	fdprintf(fd, "insert_mpps %.4f\n", n / (cpu_s() - t0) / 1e6);
	fdprintf(fd, "insert_wall_mpps %.4f\n", n / (mono_s() - w0) / 1e6);
	fdprintf(fd, "conns_after_insert %llu\n", (unsigned long long)ct_table_count(t));

	t0 = cpu_s();
	w0 = mono_s();
	w0 = mono_s();
	lg_run(thr, slots, n, n, 0, v);
	fdprintf(fd, "reply_mpps %.4f\n", n / (cpu_s() - t0) / 1e6);
	fdprintf(fd, "reply_wall_mpps %.4f\n", n / (mono_s() - w0) / 1e6);
	rss1 = rss_bytes();
	fdprintf(fd, "bytes_per_conn %.1f\n", (double)(rss1 - rss0) / n);

	t0 = cpu_s();
	w0 = mono_s();
	w0 = mono_s();
	lg_run(thr, lk, 0, c->l, 0, v);
	fdprintf(fd, "lookup_mpps %.4f\n", c->l / (cpu_s() - t0) / 1e6);
	fdprintf(fd, "lookup_wall_mpps %.4f\n", c->l / (mono_s() - w0) / 1e6);
	for (size_t j = 0; j < 32 && j < c->l; j++) {
		if (v[j].cls == CT_V_ESTABLISHED)
			est++;
		else
			other++;
	}
	fdprintf(fd, "lookup_check_established %u other %u\n", est, other);

	/* drain: everything is expired one hour later */
	t0 = cpu_s();
	w0 = mono_s();
	w0 = mono_s();
	for (int it = 0; ct_table_count(t) && it < 1000000; it++) {
		struct ct_gc_result res;

		ct_gc_step(thr, LG_NOW + 3600ull * 1000000000ull, 0, &res);
	}
	fdprintf(fd, "drain_ms %.3f\n", (cpu_s() - t0) * 1e3);
	fdprintf(fd, "drain_wall_ms %.3f\n", (mono_s() - w0) * 1e3);
	fdprintf(fd, "conns_after_drain %llu\n", (unsigned long long)ct_table_count(t));

	/* zone flush: half the flows in zone 1, half in zone 2 */
	lg_run(thr, slots, 0, n / 2, 1, v);
	lg_run(thr, slots, n / 2, n - n / 2, 2, v);
	fdprintf(fd, "conns_before_flush %llu\n", (unsigned long long)ct_table_count(t));
	t0 = cpu_s();
	w0 = mono_s();
	w0 = mono_s();
	ct_table_flush(thr, 1, LG_NOW);
	fdprintf(fd, "flush_zone_ms %.3f\n", (cpu_s() - t0) * 1e3);
	fdprintf(fd, "flush_zone_wall_ms %.3f\n", (mono_s() - w0) * 1e3);
	fdprintf(fd, "conns_after_flush %llu\n", (unsigned long long)ct_table_count(t));

	ct_thread_detach(thr);
	ct_table_destroy(t);
	free(lk);
	free(slots);
}

static bool lg_check(const char *who, const struct ovsb_kv *k, uint32_t n)
{
	bool ok = kv_num(k, "conns_after_insert") == n &&
		  kv_num(k, "conns_after_drain") == 0 &&
		  kv_num(k, "conns_before_flush") == n &&
		  kv_num(k, "conns_after_flush") == n - n / 2 &&
		  kv_str(k, "lookup_check_established") &&
		  !strncmp(kv_str(k, "lookup_check_established"), "32 ", 3);

	if (!ok)
		fprintf(stderr, "ctrack-bench: %s large-table run did not do the expected "
			"work (insert %s, drain left %s, before/after flush %s/%s, "
			"established %s)\n", who, kv_str(k, "conns_after_insert"),
			kv_str(k, "conns_after_drain"), kv_str(k, "conns_before_flush"),
			kv_str(k, "conns_after_flush"), kv_str(k, "lookup_check_established"));
	return ok;
}

void wl_large(const struct ovsb_env *e, uint32_t n, size_t l)
{
	static const struct {
		const char *key, *wall_key, *metric, *unit;
		bool higher_better;
	} m[] = {
		{ "insert_mpps", "insert_wall_mpps", "insert", "mpps", true },
		{ "reply_mpps", "reply_wall_mpps", "reply", "mpps", true },
		{ "lookup_mpps", "lookup_wall_mpps", "established-lookup", "mpps", true },
		{ "bytes_per_conn", NULL, "memory", "bytes_per_conn", false },
		{ "drain_ms", "drain_wall_ms", "drain-expired", "ms", false },
		{ "flush_zone_ms", "flush_zone_wall_ms", "flush-zone-half", "ms", false },
	};
	enum { NM = sizeof(m) / sizeof(m[0]) };
	double ov[NM][OVSB_MAX_REPEAT], cv[NM][OVSB_MAX_REPEAT];
	double ow[NM][OVSB_MAX_REPEAT], cw[NM][OVSB_MAX_REPEAT];
	struct lg_cfg c = { n, l };
	char a2[16], a3[24], ocmd[PATH_MAX + 128], ccmd[PATH_MAX + 256], params[256];
	char *argv[] = { (char *)e->harness, "large", a2, a3, NULL };
	unsigned runs = 0;

	snprintf(a2, sizeof(a2), "%u", n);
	snprintf(a3, sizeof(a3), "%zu", l);
	cmdline(ocmd, sizeof(ocmd), argv);
	for (int r = 0; r < e->repeat; r++) {
		struct ovsb_kv ko = { 0 }, kc = { 0 };
		int so = run_cmd(argv, NULL, NULL, &ko, NULL, NULL);
		int sc = run_child(lg_child, &c, &kc, NULL);

		if (so || sc || !lg_check("OVS", &ko, n) || !lg_check("ctrack", &kc, n))
			continue;
		if (strcmp(kv_str(&ko, "frames_fnv"), kv_str(&kc, "frames_fnv"))) {
			fprintf(stderr, "ctrack-bench: the two sides built different frames\n");
			continue;
		}
		for (int i = 0; i < NM; i++) {
			ov[i][runs] = kv_num(&ko, m[i].key);
			cv[i][runs] = kv_num(&kc, m[i].key);
			ow[i][runs] = m[i].wall_key ? kv_num(&ko, m[i].wall_key) : 0;
			cw[i][runs] = m[i].wall_key ? kv_num(&kc, m[i].wall_key) : 0;
		}
		runs++;
		fprintf(stderr, "ctrack-bench:   large N=%u run %d: lookup ovs %.2f / ctrack %.2f Mpps\n",
			n, r + 1, ov[2][runs - 1], cv[2][runs - 1]);
	}
	snprintf(ccmd, sizeof(ccmd),
		 "%s/bench/ctrack-bench ovs large: same frames, ct_parse_frame + "
		 "ct_process_burst of 32, ct_gc_step, ct_table_flush", e->build);
	for (int i = 0; i < NM; i++) {
		double target = 0;

		if (i == 2 && n == 1000000)
			target = 6.0;
		if (m[i].wall_key)
			snprintf(params, sizeof(params), "\"conns\":%u,\"lookups\":%zu,"
				 "\"batch\":32,\"acct\":%d,\"timed\":\"thread cpu\","
				 "\"ovs_wall_%s\":%.4f,\"ctrack_wall_%s\":%.4f", n, l, ovsb_acct,
				 m[i].unit, median(ow[i], runs), m[i].unit, median(cw[i], runs));
		else
			snprintf(params, sizeof(params), "\"conns\":%u,\"lookups\":%zu,"
				 "\"batch\":32,\"acct\":%d,\"measured\":\"rss delta\"",
				 n, l, ovsb_acct);
		struct ovsb_row row = { "large", m[i].metric, m[i].unit,
			m[i].higher_better, median(ov[i], runs), median(cv[i], runs),
			target, runs, ocmd, ccmd, params, "ovs", 0, 0 };

		run_ratio_range(&row, ov[i], cv[i], runs);
		report(e, &row);
	}
}
