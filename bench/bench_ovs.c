/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_ovs.c - ctrack side by side with Open vSwitch's userspace conntrack.
 *
 * `ctrack-bench ovs [--json] [WORKLOAD...] [OPTIONS]` builds the peer on
 * first use (bench/ovs/build-ovs.sh: Debian's openvswitch-source, built in
 * a cache directory outside the repository) and runs each workload with
 * both trackers, alternating OVS and ctrack runs in the same invocation
 * and reporting medians, because this machine has two cores and its speed
 * drifts: figures taken minutes apart do not compare.
 *
 * Workloads (default: all; docs/peers.md says what each one equalises):
 *  bench  OVS's own `ovstest test-conntrack benchmark T N B [1]`.  ctrack
 *         runs identical work: T threads, each with its own batch of B
 *         frames built byte for byte as OVS builds them (checked against
 *         the hex in OVS's tests/test-conntrack.c), sent N/B times each,
 *         through ct_parse_frame + ct_process_burst, with a fixed `now`.
 *  large  100k / 1M / 3M UDP flows (frames from bench/ovs/frames.h, same
 *         bytes and order on both sides, 32 per call, one thread): insert
 *         rate, reply rate, memory per connection (RSS delta / flows),
 *         established lookups in random order, draining all expired
 *         entries, flushing a zone holding half the table.  OVS side: the
 *         harness bench/ovs/ovs_ct_harness.c linked against the OVS build.
 *  pcap   the capture path: `ovstest test-conntrack pcap FILE [32]` against
 *         `ctrack read --no-table FILE`, whole processes, on the Ethernet
 *         pcaps of ../shared/pcaps (concatenated) and on a synthetic
 *         capture generated into the cache directory.
 *  kernel nf_conntrack in a router namespace (bench/ovs/kernel-ns.sh): the
 *         cost of a new connection (one-packet UDP flows replayed through
 *         it, with and without conntrack), `conntrack -L` and `-F`.
 *  flows  `softflowd -r` and `nfpcapd -r` against `ctrack read`.
 *
 * Settings.  ctrack runs with the library's defaults, which are a fresh
 * kernel namespace's: checksums verified (OVS verifies them too) and no
 * per-connection packet and byte counters (nf_conntrack_acct = 0; OVS's
 * conntrack keeps none).  --acct turns ctrack's counters on for bench and
 * large (the rows say acct), so that the cost of the extra work is
 * measured too; the capture path runs the `ctrack` tool, which keeps
 * counters by default.
 *
 * Timing.  The machine is small and shared, so wherever both sides can be
 * timed the same way in CPU time (the working thread's, or the whole
 * process's with all its threads) they are, and the wall-clock figures go
 * into the rows' parameters; only the kernel's new-connection cost, a
 * difference of two replay times, is wall clock.
 *
 * Every measurement runs in a fresh process (fork for ctrack, exec for
 * the peers), so that one run's memory and caches do not leak into the
 * next and RSS deltas are the run's own.
 */
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctrack/ctrack.h"

#include "bench.h"
#include "ovs/frames.h"

#define OVSB_MAX_REPEAT 31
#define OVSB_MAX_KV 64

/* ---------------------------------------------------------------- utils */

struct ovsb_kv {
	unsigned n;
	char key[OVSB_MAX_KV][48];
	char val[OVSB_MAX_KV][80];
};

static void kv_parse(struct ovsb_kv *kv, char *text)
{
	char *save = NULL;

	kv->n = 0;
	for (char *line = strtok_r(text, "\n", &save); line && kv->n < OVSB_MAX_KV;
	     line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');

		if (!sp)
			continue;
		*sp = '\0';
		snprintf(kv->key[kv->n], sizeof(kv->key[0]), "%s", line);
		snprintf(kv->val[kv->n], sizeof(kv->val[0]), "%s", sp + 1);
		kv->n++;
	}
}

static const char *kv_str(const struct ovsb_kv *kv, const char *key)
{
	for (unsigned i = 0; i < kv->n; i++)
		if (!strcmp(kv->key[i], key))
			return kv->val[i];
	return NULL;
}

static double kv_num(const struct ovsb_kv *kv, const char *key)
{
	const char *v = kv_str(kv, key);

	return v ? strtod(v, NULL) : -1.0;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long rss_bytes(void)
{
	long pages = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &res) != 2)
			res = 0;
		fclose(f);
	}
	return res * sysconf(_SC_PAGESIZE);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const double *v, unsigned n)
{
	double s[OVSB_MAX_REPEAT];

	if (!n)
		return -1.0;
	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n & 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static void fdprintf(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fdprintf(int fd, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (len > 0 && write(fd, buf, (size_t)len) != len)
		_exit(3);
}

static char *read_all(int fd)
{
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	ssize_t r;

	if (!buf)
		return NULL;
	while ((r = read(fd, buf + len, cap - len - 1)) > 0 || (r < 0 && errno == EINTR)) {
		if (r < 0)
			continue;
		len += (size_t)r;
		if (cap - len < 2) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
	}
	buf[len] = '\0';
	return buf;
}

/* Run @fn(@arg, fd) in a forked child; what it writes to fd comes back as
 * key/value lines in @kv, and *@cpu (if not NULL) gets the child's user +
 * system CPU seconds, all its threads.  Returns the child's exit status
 * (0 = fine). */
typedef void (*ovsb_child_fn)(void *arg, int fd);

static double ru_cpu(const struct rusage *ru)
{
	return (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec * 1e-6 +
	       (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec * 1e-6;
}

static int run_child(ovsb_child_fn fn, void *arg, struct ovsb_kv *kv, double *cpu)
{
	struct rusage ru;
	int p[2], st = 0;
	pid_t pid;
	char *out;

	fflush(NULL);
	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(p[0]);
		fn(arg, p[1]);
		close(p[1]);
		_exit(0);
	}
	close(p[1]);
	out = read_all(p[0]);
	close(p[0]);
	if (wait4(pid, &st, 0, &ru) < 0)
		return -1;
	if (cpu)
		*cpu = ru_cpu(&ru);
	if (out)
		kv_parse(kv, out);
	free(out);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* Run @argv (stdout to @out_path, or captured into @kv when NULL; stderr
 * appended to @err_path, or kept when NULL).  *@wall gets the wall-clock
 * seconds from fork to exit, *@cpu the child's user + system CPU.
 * Returns the exit status. */
static int run_cmd(char *const argv[], const char *out_path, const char *err_path,
		   struct ovsb_kv *kv, double *wall, double *cpu)
{
	int p[2] = { -1, -1 }, st = 0;
	struct rusage ru;
	double t0;
	pid_t pid;

	fflush(NULL);
	if (!out_path && pipe(p))
		return -1;
	t0 = mono_s();
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (err_path && !freopen(err_path, "a", stderr))
			_exit(126);
		if (out_path) {
			if (!freopen(out_path, "w", stdout))
				_exit(126);
		} else {
			close(p[0]);
			dup2(p[1], 1);
			close(p[1]);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	if (!out_path) {
		char *out;

		close(p[1]);
		out = read_all(p[0]);
		close(p[0]);
		if (out && kv)
			kv_parse(kv, out);
		free(out);
	}
	if (wait4(pid, &st, 0, &ru) < 0)
		return -1;
	if (wall)
		*wall = mono_s() - t0;
	if (cpu)
		*cpu = ru_cpu(&ru);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void cmdline(char *buf, size_t size, char *const argv[])
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; argv[i] && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? " " : "", argv[i]);
}

/* ----------------------------------------------------------- the paths */

struct ovsb_env {
	char repo[PATH_MAX];      /* ctrack source root */
	char build[PATH_MAX];     /* ctrack build dir (of this executable) */
	char cache[PATH_MAX];     /* OVS cache dir */
	char ovstest[PATH_MAX + 32];
	char harness[PATH_MAX + 32];
	char ctrack[PATH_MAX + 32];
	char pcaps[PATH_MAX + 32];
	char errlog[PATH_MAX + 32];  /* the peers' stderr during pcap runs */
	int repeat;
	bool json;
	bool quick;
};

/* --acct: ctrack's tables keep packet and byte counters (bench, large). */
static bool ovsb_acct;

static void dirname_inplace(char *p)
{
	char *s = strrchr(p, '/');

	if (s && s != p)
		*s = '\0';
}

/* The executable is <build>/bench/ctrack-bench; the build dir sits in the
 * source root (build/, build-asan/, ...) unless CTRACK_SOURCE_DIR says. */
static int find_paths(struct ovsb_env *e)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *src = getenv("CTRACK_SOURCE_DIR");
	const char *pc = getenv("CTRACK_PCAPS");
	struct stat sb;

	if (n <= 0)
		return -1;
	exe[n] = '\0';
	dirname_inplace(exe);              /* <build>/bench */
	dirname_inplace(exe);              /* <build> */
	snprintf(e->build, sizeof(e->build), "%s", exe);
	if (src) {
		snprintf(e->repo, sizeof(e->repo), "%s", src);
	} else {
		snprintf(e->repo, sizeof(e->repo), "%s", exe);
		dirname_inplace(e->repo);
	}
	snprintf(e->ctrack, sizeof(e->ctrack), "%s/tools/ctrack", e->build);
	if (pc)
		snprintf(e->pcaps, sizeof(e->pcaps), "%s", pc);
	else
		snprintf(e->pcaps, sizeof(e->pcaps), "%s/../shared/pcaps", e->repo);
	{
		char script[PATH_MAX + 32];

		snprintf(script, sizeof(script), "%s/bench/ovs/build-ovs.sh", e->repo);
		if (stat(script, &sb)) {
			fprintf(stderr, "ctrack-bench: %s not found (set CTRACK_SOURCE_DIR to "
				"the ctrack source tree)\n", script);
			return -1;
		}
	}
	return 0;
}

/* Build (or find) the peer; fills e->cache, e->ovstest, e->harness. */
static int build_peer(struct ovsb_env *e)
{
	char cmd[PATH_MAX + 64], line[PATH_MAX];
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "sh '%s/bench/ovs/build-ovs.sh'", e->repo);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	e->cache[0] = '\0';
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0])
			snprintf(e->cache, sizeof(e->cache), "%s", line);
	}
	st = pclose(p);
	if (st || !e->cache[0]) {
		fprintf(stderr, "ctrack-bench: could not build the OVS peer\n");
		return -1;
	}
	snprintf(e->ovstest, sizeof(e->ovstest), "%s/src/tests/ovstest", e->cache);
	snprintf(e->errlog, sizeof(e->errlog), "%s/pcap-stderr.log", e->cache);
	snprintf(e->harness, sizeof(e->harness), "%s/ovs-ct-harness", e->cache);
	return 0;
}

/* ------------------------------------------------------------ reporting */

/* One comparison row.  @unit names the figure ("mpps", "ms",
 * "bytes_per_conn"); @higher_better says which way ratio goes: ratio is
 * always "how many times better ctrack is" (ctrack/ovs for rates,
 * ovs/ctrack for costs). */
struct ovsb_row {
	const char *workload;
	const char *metric;
	const char *unit;
	bool higher_better;
	double ovs, ctrack;        /* the peer's figure, ctrack's */
	double target;             /* ratio wanted, 0 = none */
	unsigned runs;
	const char *ovs_cmd;
	const char *ctrack_cmd;
	const char *params;        /* JSON fragment, without braces */
	const char *peer;          /* the peer's name in keys; NULL = "ovs" */
	/* the lowest and highest ratio of one pair of alternating runs (0 =
	 * not kept): how far one run's comparison may stray from the
	 * median's on this machine */
	double run_ratio_min, run_ratio_max;
};

static double row_ratio(const struct ovsb_row *r)
{
	if (r->ovs <= 0 || r->ctrack <= 0)
		return 0;
	return r->higher_better ? r->ctrack / r->ovs : r->ovs / r->ctrack;
}

/* The lowest and highest of @num[k] / @den[k] over @runs pairs measured
 * one after the other (0 where a figure is missing, as row_ratio). */
static void ratio_range(const double *num, const double *den, unsigned runs,
			double *min, double *max)
{
	for (unsigned k = 0; k < runs; k++) {
		double x = num[k] > 0 && den[k] > 0 ? num[k] / den[k] : 0;

		if (k == 0 || x < *min)
			*min = x;
		if (k == 0 || x > *max)
			*max = x;
	}
}

/* Set @r's run_ratio_min/max from @runs pairs of figures, the peer's
 * @o[k] and ctrack's @c[k], oriented as row_ratio orients the medians. */
static void run_ratio_range(struct ovsb_row *r, const double *o, const double *c,
			    unsigned runs)
{
	if (r->higher_better)
		ratio_range(c, o, runs, &r->run_ratio_min, &r->run_ratio_max);
	else
		ratio_range(o, c, runs, &r->run_ratio_min, &r->run_ratio_max);
}

static void json_str(const char *s)
{
	putchar('"');
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar(*s);
	}
	putchar('"');
}

static void report(const struct ovsb_env *e, const struct ovsb_row *r)
{
	const char *peer = r->peer ? r->peer : "ovs";
	double ratio = row_ratio(r);

	if (e->json) {
		printf("{\"bench\":\"ovs\",\"workload\":\"%s\",\"metric\":\"%s\",%s%s"
		       "\"%s_%s\":%.4f,\"ctrack_%s\":%.4f,\"ratio\":%.3f,",
		       r->workload, r->metric, r->params ? r->params : "",
		       r->params && r->params[0] ? "," : "",
		       peer, r->unit, r->ovs, r->unit, r->ctrack, ratio);
		if (r->target > 0)
			printf("\"target\":%.1f,\"met\":%s,", r->target,
			       ratio >= r->target ? "true" : "false");
		if (r->run_ratio_max > 0)
			printf("\"run_ratio_min\":%.3f,\"run_ratio_max\":%.3f,",
			       r->run_ratio_min, r->run_ratio_max);
		printf("\"runs\":%u,\"%s_cmd\":", r->runs, peer);
		json_str(r->ovs_cmd);
		printf(",\"ctrack_cmd\":");
		json_str(r->ctrack_cmd);
		printf("}\n");
	} else {
		printf("%-7s %-24s %s_%s=%-9.4g ctrack_%s=%-9.4g ratio=%.2fx",
		       r->workload, r->metric, peer, r->unit, r->ovs, r->unit, r->ctrack, ratio);
		if (r->target > 0)
			printf("  (target %.0fx: %s)", r->target,
			       ratio >= r->target ? "met" : "MISSED");
		printf("  median of %u", r->runs);
		if (r->run_ratio_max > 0)
			printf(" (one run's ratio %.2f-%.2fx)", r->run_ratio_min,
			       r->run_ratio_max);
		printf("\n        {%s}\n", r->params ? r->params : "");
		printf("        %s: %s\n        ctrack: %s\n", peer, r->ovs_cmd, r->ctrack_cmd);
	}
	fflush(stdout);
}

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
static int ovs_bench_payload(const struct ovsb_env *e, uint8_t *out, unsigned cap)
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
static void wl_bench(const struct ovsb_env *e, unsigned threads, bool change,
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

#define LG_NOW 1000000000000ull   /* ctrack's fixed `now` (ns) */

/* Send slots first..first+n-1 through ctrack, 32 per burst, in zone
 * @zone: the same frames, order and burst size as run() in the OVS
 * harness. */
static void lg_run(struct ct_thread *thr, const uint8_t *slots, size_t first,
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
static double cpu_s(void)
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

static void wl_large(const struct ovsb_env *e, uint32_t n, size_t l)
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

/* ----------------------------------------- workload 3: the capture path */

/* Classic pcap only (OVS's reader knows no pcapng); returns the number of
 * records, or -1 when not a pcap OVS can read (Ethernet or Linux SLL). */
static long pcap_count(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t gh[24], rh[16];
	uint32_t magic, link;
	bool swap;
	long n = 0;

	if (!f)
		return -1;
	if (fread(gh, 1, 24, f) != 24) {
		fclose(f);
		return -1;
	}
	memcpy(&magic, gh, 4);
	swap = magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u;
	if (!swap && magic != 0xa1b2c3d4u && magic != 0xa1b23c4du) {
		fclose(f);
		return -1;
	}
	memcpy(&link, gh + 20, 4);
	if (swap)
		link = __builtin_bswap32(link);
	if (link != 1 && link != 113) {
		fclose(f);
		return -1;
	}
	while (fread(rh, 1, 16, f) == 16) {
		uint32_t incl;

		memcpy(&incl, rh + 8, 4);
		if (swap)
			incl = __builtin_bswap32(incl);
		if (incl > 262144 || fseek(f, incl, SEEK_CUR))
			break;
		n++;
	}
	fclose(f);
	return n;
}

static void pcap_put32(FILE *f, uint32_t v)
{
	fwrite(&v, 4, 1, f);
}

static void pcap_header(FILE *f)
{
	pcap_put32(f, 0xa1b2c3d4u);
	pcap_put32(f, 0x00040002u);  /* version 2.4 (two little-endian u16) */
	pcap_put32(f, 0);
	pcap_put32(f, 0);
	pcap_put32(f, 262144);
	pcap_put32(f, 1);            /* Ethernet */
}

static void pcap_record(FILE *f, uint64_t ts_us, const uint8_t *frame, unsigned len)
{
	pcap_put32(f, (uint32_t)(ts_us / 1000000));
	pcap_put32(f, (uint32_t)(ts_us % 1000000));
	pcap_put32(f, len);
	pcap_put32(f, len);
	fwrite(frame, 1, len, f);
}

/*
 * The synthetic capture: @conns TCP connections (handshake, a request and
 * a response of 64 bytes with their ACKs, FIN both ways, final ACK: ten
 * packets) and as many UDP request/response pairs, 256 flows interleaved
 * at a time, 10 us apart.  Every checksum is right and every sequence
 * number in window, so neither tracker has a reason to reject a packet.
 */
static int make_synth(const char *path, uint32_t conns)
{
	char tmp[PATH_MAX * 2];
	uint8_t fr[256];
	uint64_t ts = 1700000000ull * 1000000ull;
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "wb");
	if (!f)
		return -1;
	pcap_header(f);
	for (uint32_t base = 0; base < conns; base += 256) {
		uint32_t k = conns - base < 256 ? conns - base : 256;

		for (int step = 0; step < 12; step++) {
			for (uint32_t j = 0; j < k; j++) {
				uint32_t i = base + j;
				uint32_t cli = 0x0a000001u + (i >> 12), srv = 0xc0a80002u;
				uint16_t cp = (uint16_t)(1024 + (i & 4095)), sp = 80;
				uint32_t cs = 1000u + i * 7919u, ss = 5000u + i * 104729u;
				unsigned len = 0;

				switch (step) {
				case 0: len = ovsb_tcp_frame(fr, 10, 9, cli, srv, cp, sp, cs, 0, 0x02, 64240, 0); break;
				case 1: len = ovsb_tcp_frame(fr, 9, 10, srv, cli, sp, cp, ss, cs + 1, 0x12, 65160, 0); break;
				case 2: len = ovsb_tcp_frame(fr, 10, 9, cli, srv, cp, sp, cs + 1, ss + 1, 0x10, 502, 0); break;
				case 3: len = ovsb_tcp_frame(fr, 10, 9, cli, srv, cp, sp, cs + 1, ss + 1, 0x18, 502, 64); break;
				case 4: len = ovsb_tcp_frame(fr, 9, 10, srv, cli, sp, cp, ss + 1, cs + 65, 0x10, 509, 0); break;
				case 5: len = ovsb_tcp_frame(fr, 9, 10, srv, cli, sp, cp, ss + 1, cs + 65, 0x18, 509, 64); break;
				case 6: len = ovsb_tcp_frame(fr, 10, 9, cli, srv, cp, sp, cs + 65, ss + 65, 0x10, 502, 0); break;
				case 7: len = ovsb_tcp_frame(fr, 10, 9, cli, srv, cp, sp, cs + 65, ss + 65, 0x11, 502, 0); break;
				case 8: len = ovsb_tcp_frame(fr, 9, 10, srv, cli, sp, cp, ss + 65, cs + 66, 0x11, 509, 0); break;
				case 9: len = ovsb_tcp_frame(fr, 10, 9, cli, srv, cp, sp, cs + 66, ss + 66, 0x10, 502, 0); break;
				case 10:
					ovsb_udp_frame(fr, 10, 9, 64, cli, 0xc0a80001u, cp, 53);
					len = OVSB_UDP_FRAME_LEN;
					break;
				default:
					ovsb_udp_frame(fr, 9, 10, 64, 0xc0a80001u, cli, 53, cp);
					len = OVSB_UDP_FRAME_LEN;
					break;
				}
				pcap_record(f, ts, fr, len);
				ts += 10;
			}
		}
	}
	if (fclose(f))
		return -1;
	return rename(tmp, path);
}

/* Median times of one capture through the three commands: CPU (user +
 * system of the whole process) and wall. */
struct pc_times {
	double ovs1, ovs32, ct;            /* cpu */
	double ovs1_w, ovs32_w, ct_w;      /* wall */
	unsigned runs;
	/* one run's ratio (OVS's CPU time over ctrack's), lowest and highest,
	 * against OVS with batches of 1 and of 32 */
	double r1_min, r1_max, r32_min, r32_max;
};

static int pc_time(const struct ovsb_env *e, const char *path, int repeat,
		   struct pc_times *out)
{
	double o1[OVSB_MAX_REPEAT], o32[OVSB_MAX_REPEAT], ct[OVSB_MAX_REPEAT];
	double o1w[OVSB_MAX_REPEAT], o32w[OVSB_MAX_REPEAT], ctw[OVSB_MAX_REPEAT];
	char *ov1[] = { (char *)e->ovstest, "test-conntrack", "pcap", (char *)path, NULL };
	char *ov32[] = { (char *)e->ovstest, "test-conntrack", "pcap", (char *)path, "32", NULL };
	char *cv[] = { (char *)e->ctrack, "read", "--no-table", (char *)path, NULL };
	unsigned runs = 0;

	if (repeat > OVSB_MAX_REPEAT)
		repeat = OVSB_MAX_REPEAT;
	for (int r = 0; r < repeat; r++) {
		double w1, w32, wc, c1, c32, cc;
		int s1 = run_cmd(ov1, "/dev/null", e->errlog, NULL, &w1, &c1);
		int sc = run_cmd(cv, "/dev/null", e->errlog, NULL, &wc, &cc);
		int s32 = run_cmd(ov32, "/dev/null", e->errlog, NULL, &w32, &c32);

		if (s1 || s32 || sc) {
			fprintf(stderr, "ctrack-bench: %s: exit status ovs %d/%d ctrack %d "
				"(see %s)\n", path, s1, s32, sc, e->errlog);
			continue;
		}
		o1[runs] = c1;
		o32[runs] = c32;
		ct[runs] = cc;
		o1w[runs] = w1;
		o32w[runs] = w32;
		ctw[runs] = wc;
		runs++;
	}
	out->runs = runs;
	out->ovs1 = median(o1, runs);
	out->ovs32 = median(o32, runs);
	out->ct = median(ct, runs);
	out->ovs1_w = median(o1w, runs);
	out->ovs32_w = median(o32w, runs);
	out->ct_w = median(ctw, runs);
	/* CPU times: OVS's over ctrack's is the rate ratio */
	ratio_range(o1, ct, runs, &out->r1_min, &out->r1_max);
	ratio_range(o32, ct, runs, &out->r32_min, &out->r32_max);
	return runs ? 0 : -1;
}

/* How many packets OVS's `test-conntrack pcap` reports on (one line of
 * output each): the rates below divide the capture's record count by
 * both tools' times, which is fair only when OVS reads every record. */
static long ovs_pcap_seen(const struct ovsb_env *e, const char *path)
{
	char *ov[] = { (char *)e->ovstest, "test-conntrack", "pcap", (char *)path, NULL };
	char out[PATH_MAX + 64];
	long lines = 0;
	FILE *f;
	int ch;

	snprintf(out, sizeof(out), "%s/pcap-stdout.txt", e->cache);
	if (run_cmd(ov, out, e->errlog, NULL, NULL, NULL))
		return -1;
	f = fopen(out, "r");
	if (!f)
		return -1;
	while ((ch = getc(f)) != EOF)
		lines += ch == '\n';
	fclose(f);
	remove(out);
	return lines;
}

/* Report one capture: rates per CPU-second of the whole process (start-up
 * included, as a user meets it) and net of start-up (each tool's CPU time
 * on an empty capture subtracted), each against OVS with batches of 1 (its
 * default) and 32.  Wall times go in the parameters. */
static void pc_report(const struct ovsb_env *e, const char *path, const char *name,
		      long pkts, const struct pc_times *t, const struct pc_times *empty)
{
	char *ov1[] = { (char *)e->ovstest, "test-conntrack", "pcap", (char *)path, NULL };
	char *ov32[] = { (char *)e->ovstest, "test-conntrack", "pcap", (char *)path, "32", NULL };
	char *cv[] = { (char *)e->ctrack, "read", "--no-table", (char *)path, NULL };
	char o1[PATH_MAX * 3], o32[PATH_MAX * 3], cc[PATH_MAX * 3], params[600];
	double mp = pkts / 1e6;
	long seen = ovs_pcap_seen(e, path);

	cmdline(o1, sizeof(o1), ov1);
	cmdline(o32, sizeof(o32), ov32);
	cmdline(cc, sizeof(cc), cv);
	snprintf(params, sizeof(params), "\"capture\":\"%s\",\"packets\":%ld,"
		 "\"timed\":\"process cpu\",\"ovs1_cpu_s\":%.4f,\"ovs32_cpu_s\":%.4f,"
		 "\"ctrack_cpu_s\":%.4f,\"ovs1_wall_s\":%.4f,\"ovs32_wall_s\":%.4f,"
		 "\"ctrack_wall_s\":%.4f,\"ovs_startup_cpu_s\":%.4f,"
		 "\"ctrack_startup_cpu_s\":%.4f,\"ovs_packets_seen\":%ld",
		 name, pkts, t->ovs1, t->ovs32, t->ct, t->ovs1_w, t->ovs32_w, t->ct_w,
		 empty->ovs1, empty->ct, seen);
	if (seen != pkts)
		fprintf(stderr, "ctrack-bench: warning: OVS reported on %ld of the %ld "
			"packets of %s: its rate below is overstated\n", seen, pkts, path);
	report(e, &(struct ovsb_row){ "pcap", "capture-batch1", "mpps", true,
		mp / t->ovs1, mp / t->ct, 3.0, t->runs, o1, cc, params, "ovs",
		t->r1_min, t->r1_max });
	report(e, &(struct ovsb_row){ "pcap", "capture-batch32", "mpps", true,
		mp / t->ovs32, mp / t->ct, 3.0, t->runs, o32, cc, params, "ovs",
		t->r32_min, t->r32_max });
	if (t->ovs1 > empty->ovs1 && t->ct > empty->ct && t->ovs32 > empty->ovs32) {
		report(e, &(struct ovsb_row){ "pcap", "capture-batch1-net", "mpps", true,
			mp / (t->ovs1 - empty->ovs1), mp / (t->ct - empty->ct), 3.0,
			t->runs, o1, cc, params, "ovs", 0, 0 });
		report(e, &(struct ovsb_row){ "pcap", "capture-batch32-net", "mpps", true,
			mp / (t->ovs32 - empty->ovs32), mp / (t->ct - empty->ct), 3.0,
			t->runs, o32, cc, params, "ovs", 0, 0 });
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static uint32_t rd32(const uint8_t *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

/* Append the records of Ethernet pcap @path to @out, shifted so that time
 * never goes backwards (each file starts one second after the previous
 * one ended).  Returns the records written, or -1. */
static long pcap_append(FILE *out, const char *path, uint64_t *clock_us)
{
	FILE *f = fopen(path, "rb");
	uint8_t gh[24], rh[16], *buf = malloc(262144);
	uint64_t first = 0, last = *clock_us, base = *clock_us + 1000000;
	uint32_t magic;
	bool swap, nsec;
	long n = 0;

	if (!f || !buf || fread(gh, 1, 24, f) != 24) {
		if (f)
			fclose(f);
		free(buf);
		return -1;
	}
	memcpy(&magic, gh, 4);
	swap = magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u;
	nsec = magic == 0xa1b23c4du || magic == 0x4d3cb2a1u;
	if (rd32(gh + 20, swap) != 1) {
		fclose(f);
		free(buf);
		return -1;
	}
	/* OVS's pcap reader stops, with a warning and exit status 0, at the
	 * first record longer than 65535 bytes (a BIG TCP capture has one):
	 * such a file would end OVS's run early inside the concatenation and
	 * leave it fewer packets than ctrack.  It is left out whole. */
	while (fread(rh, 1, 16, f) == 16) {
		uint32_t incl = rd32(rh + 8, swap);

		if (incl > 65535 || fseek(f, (long)incl, SEEK_CUR)) {
			fclose(f);
			free(buf);
			return 0;
		}
	}
	if (fseek(f, 24, SEEK_SET)) {
		fclose(f);
		free(buf);
		return -1;
	}
	while (fread(rh, 1, 16, f) == 16) {
		uint64_t ts = (uint64_t)rd32(rh, swap) * 1000000 +
			      rd32(rh + 4, swap) / (nsec ? 1000 : 1);
		uint32_t incl = rd32(rh + 8, swap), orig = rd32(rh + 12, swap);
		uint64_t o;

		if (fread(buf, 1, incl, f) != incl)
			break;
		if (!n)
			first = ts;
		o = base + (ts > first ? ts - first : 0);
		if (o < last)
			o = last;
		last = o;
		pcap_put32(out, (uint32_t)(o / 1000000));
		pcap_put32(out, (uint32_t)(o % 1000000));
		pcap_put32(out, incl);
		pcap_put32(out, orig < incl ? incl : orig);
		fwrite(buf, 1, incl, out);
		n++;
	}
	*clock_us = last;
	fclose(f);
	free(buf);
	return n;
}

/*
 * The shared captures, concatenated: every Ethernet pcap in e->pcaps that
 * OVS's `test-conntrack pcap` gets through (some make it abort), in name
 * order, timestamps shifted to run forwards.  Small files alone measure
 * little but process start-up; together they are ~70k packets of real,
 * varied traffic.
 */
static int make_shared_concat(const struct ovsb_env *e, const char *path)
{
	char list[PATH_MAX + 64], line[PATH_MAX], tmp[PATH_MAX * 2];
	char *files[512];
	unsigned nf = 0, used = 0;
	uint64_t clock_us = 1600000000ull * 1000000ull;
	FILE *p, *out;

	snprintf(list, sizeof(list), "ls -1 '%s' 2>/dev/null", e->pcaps);
	p = popen(list, "r");
	while (p && nf < 512 && fgets(line, sizeof(line), p)) {
		char full[PATH_MAX * 3];

		line[strcspn(line, "\n")] = '\0';
		snprintf(full, sizeof(full), "%s/%s", e->pcaps, line);
		if (pcap_count(full) > 0)
			files[nf++] = strdup(full);
	}
	if (p)
		pclose(p);
	if (!nf)
		return -1;
	qsort(files, nf, sizeof(files[0]), cmp_str);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	out = fopen(tmp, "wb");
	if (!out)
		return -1;
	pcap_header(out);
	for (unsigned i = 0; i < nf; i++) {
		char *ov[] = { (char *)e->ovstest, "test-conntrack", "pcap", files[i], NULL };

		if (run_cmd(ov, "/dev/null", e->errlog, NULL, NULL, NULL) == 0 &&
		    pcap_append(out, files[i], &clock_us) > 0)
			used++;
		else
			fprintf(stderr, "ctrack-bench:     left out %s (OVS cannot "
				"read it whole, or not Ethernet)\n", files[i]);
		free(files[i]);
	}
	fprintf(stderr, "ctrack-bench:     %u of %u captures concatenated\n", used, nf);
	if (fclose(out))
		return -1;
	return rename(tmp, path);
}

static void wl_pcap(const struct ovsb_env *e, uint32_t synth_conns)
{
	char synth[PATH_MAX + 64], shared[PATH_MAX + 64], empty[PATH_MAX + 64];
	struct pc_times te, t;
	struct stat sb;
	FILE *f;

	snprintf(empty, sizeof(empty), "%s/empty.pcap", e->cache);
	snprintf(shared, sizeof(shared), "%s/shared-concat.v2.pcap", e->cache);
	snprintf(synth, sizeof(synth), "%s/synth-%u.pcap", e->cache, synth_conns);
	f = fopen(empty, "wb");
	if (!f)
		return;
	pcap_header(f);
	fclose(f);
	if (stat(shared, &sb)) {
		fprintf(stderr, "ctrack-bench:   concatenating the shared captures into %s\n", shared);
		if (make_shared_concat(e, shared))
			fprintf(stderr, "ctrack-bench: no shared captures (%s)\n", e->pcaps);
	}
	if (stat(synth, &sb)) {
		fprintf(stderr, "ctrack-bench:   generating %s\n", synth);
		if (make_synth(synth, synth_conns)) {
			fprintf(stderr, "ctrack-bench: cannot write %s\n", synth);
			return;
		}
	}
	/* the start-up and the shared captures take tens of milliseconds a
	 * run, where one pair's ratio spans 2-6x on this machine: three times
	 * the rounds for them (a second or two) */
	if (pc_time(e, empty, 3 * e->repeat, &te))
		return;
	fprintf(stderr, "ctrack-bench:   start-up (empty capture): ovs %.1f ms, ctrack %.1f ms "
		"CPU\n", te.ovs1 * 1e3, te.ct * 1e3);
	if (!stat(shared, &sb) && !pc_time(e, shared, 3 * e->repeat, &t))
		pc_report(e, shared, "shared-concat", pcap_count(shared), &t, &te);
	if (!pc_time(e, synth, e->repeat, &t))
		pc_report(e, synth, "synthetic", pcap_count(synth), &t, &te);
}

/* ---------------------------------------- workload 4: the Linux kernel */

/* Find @name in PATH (and the sbin directories root's PATH may lack). */
static bool find_exe(const char *name, char *out, size_t size)
{
	const char *path = getenv("PATH");
	char buf[4096];
	char *save = NULL;

	snprintf(buf, sizeof(buf), "%s:/usr/sbin:/sbin:/usr/bin:/bin", path ? path : "");
	for (char *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(out, size, "%s/%s", d, name);
		if (!access(out, X_OK))
			return true;
	}
	return false;
}

/* Flows 0..n-1 of frames.h, original direction, one packet each. */
static int write_flows_pcap(const char *path, uint32_t n)
{
	char tmp[PATH_MAX * 2];
	uint8_t fr[OVSB_SLOT];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "wb");
	if (!f)
		return -1;
	pcap_header(f);
	for (uint32_t i = 0; i < n; i++) {
		ovsb_flow_frame(fr, i, 0);
		pcap_record(f, 1700000000ull * 1000000ull + i, fr, OVSB_UDP_FRAME_LEN);
	}
	if (fclose(f))
		return -1;
	return rename(tmp, path);
}

/* Output of a shell command, as a number (-1 when it fails). */
static double sh_num(const char *cmd)
{
	char line[128] = "";
	FILE *p = popen(cmd, "r");
	double v = -1;

	if (!p)
		return -1;
	if (fgets(line, sizeof(line), p))
		v = strtod(line, NULL);
	if (pclose(p))
		return -1;
	return v;
}

struct kd_dump {
	FILE *out;
	ct_time_ns now;
	uint64_t n;
};

/* One line per entry, as `conntrack -L` prints it: protocol, number,
 * seconds left, original tuple, [UNREPLIED], reply tuple, mark, use. */
static int kd_dump_line(const struct ct_conn_info *ci, void *arg)
{
	struct kd_dump *d = arg;
	char o[192], r[192];
	unsigned long long left = ci->expires > d->now ? (ci->expires - d->now) / 1000000000ull : 0;

	ct_tuple_format(&ci->orig, o, sizeof(o));
	ct_tuple_format(&ci->reply, r, sizeof(r));
	fprintf(d->out, "%-8s %u %llu %s%s%s %s%s mark=%u use=1\n",
		ct_l4_name(ci->orig.l4), ci->orig.l4, left,
		ci->state_name ? ci->state_name : "", ci->state_name ? " " : "", o,
		(ci->status & CT_ST_SEEN_REPLY) ? "" : "[UNREPLIED] ", r,
		ci->mark);
	d->n++;
	return 0;
}

static int kd_dump_count(const struct ct_conn_info *ci, void *arg)
{
	((struct kd_dump *)arg)->n += ci->orig.l4 != 0;
	return 0;
}

/* ctrack's side: insert the same N one-packet flows (timed: the cost of a
 * new connection, parse included), list the table as text into /dev/null
 * (timed, as `conntrack -L > /dev/null`), flush it (timed, as
 * `conntrack -F`).  Wall clock, as the kernel side is. */
static void kd_child(void *arg, int fd)
{
	uint32_t n = *(const uint32_t *)arg;
	uint8_t *slots = malloc((size_t)2 * n * OVSB_SLOT);
	struct ct_table_config cfg;
	struct ct_verdict v[32];
	struct ct_thread *thr;
	struct ct_table *t;
	struct kd_dump d = { NULL, LG_NOW, 0 };
	double w0, c0;
	long removed;

	if (!slots)
		_exit(2);
	ovsb_flow_frames(slots, n);
	/* the defaults, as the kernel namespace's: no counters there either
	 * (--acct is for the OVS comparisons) */
	ct_table_config_default(&cfg);
	cfg.settings.max = 2 * n + 1024;
	if (ct_table_create(&cfg, &t))
		_exit(2);
	thr = ct_thread_attach(t);
	if (!thr)
		_exit(2);
	w0 = mono_s();
	lg_run(thr, slots, 0, n, 0, v);
	fdprintf(fd, "new_ns_per_conn %.1f\n", (mono_s() - w0) * 1e9 / n);
	fdprintf(fd, "conns %llu\n", (unsigned long long)ct_table_count(t));
	d.out = fopen("/dev/null", "w");
	if (!d.out)
		_exit(2);
	w0 = mono_s();
	c0 = cpu_s();
	ct_table_dump(thr, -1, kd_dump_line, &d);
	fflush(d.out);
	fdprintf(fd, "list_ms %.3f\n", (mono_s() - w0) * 1e3);
	fdprintf(fd, "list_cpu_ms %.3f\n", (cpu_s() - c0) * 1e3);
	fclose(d.out);
	fdprintf(fd, "listed %llu\n", (unsigned long long)d.n);
	/* the walk alone, to tell it from the text formatting */
	w0 = mono_s();
	ct_table_dump(thr, -1, kd_dump_count, &d);
	fdprintf(fd, "walk_ms %.3f\n", (mono_s() - w0) * 1e3);
	w0 = mono_s();
	c0 = cpu_s();
	removed = ct_table_flush(thr, -1, LG_NOW);
	fdprintf(fd, "flush_ms %.3f\n", (mono_s() - w0) * 1e3);
	fdprintf(fd, "flush_cpu_ms %.3f\n", (cpu_s() - c0) * 1e3);
	fdprintf(fd, "flushed %ld\n", removed);
	ct_thread_detach(thr);
	ct_table_destroy(t);
	free(slots);
}

/* Replay @pcap from the sender namespace at top speed; seconds taken as
 * tcpreplay reports them ("Actual: N packets (B bytes) sent in S seconds"),
 * or -1. */
static double kd_replay(const struct ovsb_env *e, const char *ns, const char *dev,
			const char *pcap, const char *ip, const char *tcpreplay)
{
	char *argv[] = { (char *)ip, "netns", "exec", (char *)ns, (char *)tcpreplay, "-K",
			 "--topspeed", "-i", (char *)dev, (char *)pcap, NULL };
	struct ovsb_kv kv = { 0 };
	const char *a;
	long pk;
	double sec;

	if (run_cmd(argv, NULL, e->errlog, &kv, NULL, NULL))
		return -1;
	a = kv_str(&kv, "Actual:");
	if (!a || sscanf(a, "%ld packets (%*[0-9] bytes) sent in %lf seconds", &pk, &sec) != 2)
		return -1;
	return sec;
}

static void wl_kernel(const struct ovsb_env *e, const uint32_t *sizes, unsigned nsizes)
{
	char ip[PATH_MAX], tr[PATH_MAX], ctb[PATH_MAX], nft[PATH_MAX];
	char script[PATH_MAX + 64], prefix[32], nsa[40], nsr[40], dev[40], cmd[PATH_MAX * 4];

	if (geteuid() || !find_exe("ip", ip, sizeof(ip)) ||
	    !find_exe("tcpreplay", tr, sizeof(tr)) ||
	    !find_exe("conntrack", ctb, sizeof(ctb)) || !find_exe("nft", nft, sizeof(nft))) {
		fprintf(stderr, "ctrack-bench: kernel: needs root, ip, nft, tcpreplay and "
			"conntrack (scripts/deps.sh test); skipped\n");
		return;
	}
	snprintf(script, sizeof(script), "%s/bench/ovs/kernel-ns.sh", e->repo);
	snprintf(prefix, sizeof(prefix), "ctb%u", (unsigned)getpid() % 100000);
	snprintf(nsa, sizeof(nsa), "%sa", prefix);
	snprintf(nsr, sizeof(nsr), "%sr", prefix);
	snprintf(dev, sizeof(dev), "%sa0", prefix);
	snprintf(cmd, sizeof(cmd), "sh '%s' up %s >>'%s' 2>&1", script, prefix, e->errlog);
	if (system(cmd)) {
		fprintf(stderr, "ctrack-bench: kernel: namespace set-up failed (see %s)\n", e->errlog);
		snprintf(cmd, sizeof(cmd), "sh '%s' down %s", script, prefix);
		if (system(cmd))
			fprintf(stderr, "ctrack-bench: kernel: clean-up failed\n");
		return;
	}
	for (unsigned si = 0; si < nsizes; si++) {
		uint32_t n = sizes[si];
		double kn[OVSB_MAX_REPEAT], kl[OVSB_MAX_REPEAT], kf[OVSB_MAX_REPEAT];
		double cn[OVSB_MAX_REPEAT], cl[OVSB_MAX_REPEAT], cf[OVSB_MAX_REPEAT];
		double kon[OVSB_MAX_REPEAT], koff[OVSB_MAX_REPEAT], kempty[OVSB_MAX_REPEAT];
		double cwalk[OVSB_MAX_REPEAT], klw[OVSB_MAX_REPEAT], kfw[OVSB_MAX_REPEAT];
		double clw[OVSB_MAX_REPEAT], cfw[OVSB_MAX_REPEAT];
		char pcap[PATH_MAX + 64], params[512], lparams[768], nparams[640], kcmd[PATH_MAX * 3], ccmd[PATH_MAX + 128];
		char *lv[] = { ip, "netns", "exec", nsr, ctb, "-L", NULL };
		char *fv[] = { ip, "netns", "exec", nsr, ctb, "-F", NULL };
		unsigned runs = 0;
		struct stat sb;

		snprintf(pcap, sizeof(pcap), "%s/flows-%u.pcap", e->cache, n);
		if (stat(pcap, &sb) && write_flows_pcap(pcap, n)) {
			fprintf(stderr, "ctrack-bench: cannot write %s\n", pcap);
			continue;
		}
		for (int r = 0; r < e->repeat; r++) {
			struct ovsb_kv kc = { 0 };
			double on, off, lw, fw, lc, fc, ew, count;

			snprintf(cmd, sizeof(cmd), "sh '%s' flush %s", script, prefix);
			if (system(cmd))
				break;
			if (run_cmd(lv, "/dev/null", e->errlog, NULL, NULL, &ew))
				break;
			on = kd_replay(e, nsa, dev, pcap, ip, tr);
			snprintf(cmd, sizeof(cmd), "sh '%s' count %s", script, prefix);
			count = sh_num(cmd);
			if (run_cmd(lv, "/dev/null", e->errlog, NULL, &lw, &lc) ||
			    run_cmd(fv, "/dev/null", e->errlog, NULL, &fw, &fc))
				break;
			snprintf(cmd, sizeof(cmd), "sh '%s' ct-off %s", script, prefix);
			if (system(cmd))
				break;
			off = kd_replay(e, nsa, dev, pcap, ip, tr);
			snprintf(cmd, sizeof(cmd), "sh '%s' ct-on %s", script, prefix);
			if (system(cmd))
				break;
			if (run_child(kd_child, &n, &kc, NULL) || kv_num(&kc, "conns") != n ||
			    kv_num(&kc, "listed") != n || kv_num(&kc, "flushed") != n) {
				fprintf(stderr, "ctrack-bench: kernel: ctrack run failed\n");
				continue;
			}
			if (on <= 0 || off <= 0 || count != n) {
				fprintf(stderr, "ctrack-bench: kernel: replay failed or the table "
					"holds %.0f of %u entries (dropped?); run left out\n", count, n);
				continue;
			}
			kon[runs] = on;
			koff[runs] = off;
			kn[runs] = (on - off) * 1e9 / n;
			kl[runs] = lc * 1e3;
			kf[runs] = fc * 1e3;
			klw[runs] = lw * 1e3;
			kfw[runs] = fw * 1e3;
			kempty[runs] = ew * 1e3;
			cn[runs] = kv_num(&kc, "new_ns_per_conn");
			cl[runs] = kv_num(&kc, "list_cpu_ms");
			cf[runs] = kv_num(&kc, "flush_cpu_ms");
			clw[runs] = kv_num(&kc, "list_ms");
			cfw[runs] = kv_num(&kc, "flush_ms");
			cwalk[runs] = kv_num(&kc, "walk_ms");
			runs++;
			fprintf(stderr, "ctrack-bench:   kernel N=%u run %d: new conn %.0f ns "
				"(replay %.3f s with ct, %.3f s without) / ctrack %.0f ns; "
				"-L %.1f / %.1f ms cpu; -F %.1f / %.1f ms cpu\n", n, r + 1, kn[runs - 1],
				on, off, cn[runs - 1], kl[runs - 1], cl[runs - 1], kf[runs - 1],
				cf[runs - 1]);
		}
		snprintf(params, sizeof(params), "\"conns\":%u,\"replay_ct_s\":%.4f,"
			 "\"replay_noct_s\":%.4f,\"kernel_forward_ct_mpps\":%.4f,"
			 "\"kernel_list_empty_cpu_ms\":%.3f,\"ctrack_walk_only_ms\":%.3f", n,
			 median(kon, runs), median(koff, runs), n / median(kon, runs) / 1e6,
			 median(kempty, runs), median(cwalk, runs));
		snprintf(kcmd, sizeof(kcmd), "ip netns exec %s tcpreplay -K --topspeed -i %s %s "
			 "through router netns %s, nft 'ct state new' vs no conntrack; "
			 "(time with - time without) / N", nsa, dev, pcap, nsr);
		snprintf(ccmd, sizeof(ccmd), "%s/bench/ctrack-bench ovs kernel: same frames, "
			 "ct_parse_frame + ct_process_burst of 32 (wall)", e->build);
		snprintf(nparams, sizeof(nparams), "%s,\"timed\":\"wall\"", params);
		report(e, &(struct ovsb_row){ "kernel", "new-conn-cost", "ns_per_conn", false,
			median(kn, runs), median(cn, runs), 0, runs, kcmd, ccmd, nparams, "kernel", 0, 0 });
		snprintf(lparams, sizeof(lparams), "%s,\"timed\":\"cpu (conntrack process incl. "
			 "its syscalls; ctrack thread)\",\"kernel_list_wall_ms\":%.3f,"
			 "\"ctrack_list_wall_ms\":%.3f,\"kernel_flush_wall_ms\":%.3f,"
			 "\"ctrack_flush_wall_ms\":%.3f", params, median(klw, runs),
			 median(clw, runs), median(kfw, runs), median(cfw, runs));
		snprintf(kcmd, sizeof(kcmd), "ip netns exec %s conntrack -L > /dev/null", nsr);
		snprintf(ccmd, sizeof(ccmd), "%s/bench/ctrack-bench ovs kernel: ct_table_dump, "
			 "one conntrack-style text line per entry into /dev/null", e->build);
		report(e, &(struct ovsb_row){ "kernel", "list", "ms", false,
			median(kl, runs), median(cl, runs), 0, runs, kcmd, ccmd, lparams, "kernel", 0, 0 });
		snprintf(kcmd, sizeof(kcmd), "ip netns exec %s conntrack -F", nsr);
		snprintf(ccmd, sizeof(ccmd), "%s/bench/ctrack-bench ovs kernel: ct_table_flush(all)",
			 e->build);
		report(e, &(struct ovsb_row){ "kernel", "flush", "ms", false,
			median(kf, runs), median(cf, runs), 0, runs, kcmd, ccmd, lparams, "kernel", 0, 0 });
	}
	snprintf(cmd, sizeof(cmd), "sh '%s' down %s", script, prefix);
	if (system(cmd))
		fprintf(stderr, "ctrack-bench: kernel: namespace clean-up failed (%s*)\n", prefix);
}

/* ------------------------------- workload 5: capture-to-flows tools */

/* softflowd -r and nfpcapd -r (Debian's NetFlow probes reading a capture)
 * against ctrack read --no-table, whole processes (CPU time, user +
 * system, all threads), on the same captures. */
static void wl_flows(const struct ovsb_env *e, uint32_t synth_conns)
{
	char sf[PATH_MAX], nf[PATH_MAX], outdir[PATH_MAX + 32], cmd[PATH_MAX * 4];
	const char *caps[2];
	char shared[PATH_MAX + 64], synth[PATH_MAX + 64];
	bool have_sf = find_exe("softflowd", sf, sizeof(sf));
	bool have_nf = find_exe("nfpcapd", nf, sizeof(nf));
	struct stat sb;

	if (!have_sf && !have_nf) {
		fprintf(stderr, "ctrack-bench: flows: neither softflowd nor nfpcapd is "
			"installed; skipped\n");
		return;
	}
	snprintf(shared, sizeof(shared), "%s/shared-concat.v2.pcap", e->cache);
	snprintf(synth, sizeof(synth), "%s/synth-%u.pcap", e->cache, synth_conns);
	if (stat(shared, &sb) && make_shared_concat(e, shared))
		fprintf(stderr, "ctrack-bench: no shared captures (%s)\n", e->pcaps);
	if (stat(synth, &sb) && make_synth(synth, synth_conns))
		return;
	caps[0] = shared;
	caps[1] = synth;
	snprintf(outdir, sizeof(outdir), "%s/nfpcapd-out", e->cache);
	for (int c = 0; c < 2; c++) {
		const char *path = caps[c];
		double ts[OVSB_MAX_REPEAT], tn[OVSB_MAX_REPEAT], tc[OVSB_MAX_REPEAT];
		char *sv[] = { sf, "-r", (char *)path, "-d", NULL };
		char *nv[] = { nf, "-r", (char *)path, "-l", outdir, NULL };
		char *cv[] = { (char *)e->ctrack, "read", "--no-table", (char *)path, NULL };
		char scmd[PATH_MAX * 3], ncmd[PATH_MAX * 3], ccmd[PATH_MAX * 3], params[256];
		long pkts = pcap_count(path);
		unsigned runs = 0;

		if (pkts <= 0)
			continue;
		for (int r = 0; r < e->repeat; r++) {
			double ws = 0, wn = 0, wc = 0;
			int ss = 0, sn = 0, sc;

			if (have_sf)
				ss = run_cmd(sv, "/dev/null", e->errlog, NULL, NULL, &ws);
			sc = run_cmd(cv, "/dev/null", e->errlog, NULL, NULL, &wc);
			if (have_nf) {
				snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", outdir, outdir);
				if (system(cmd))
					break;
				sn = run_cmd(nv, "/dev/null", e->errlog, NULL, NULL, &wn);
			}
			if (ss || sn || sc) {
				fprintf(stderr, "ctrack-bench: flows: %s: exit status softflowd %d "
					"nfpcapd %d ctrack %d\n", path, ss, sn, sc);
				continue;
			}
			ts[runs] = ws;
			tn[runs] = wn;
			tc[runs] = wc;
			runs++;
		}
		if (!runs)
			continue;
		cmdline(scmd, sizeof(scmd), sv);
		cmdline(ncmd, sizeof(ncmd), nv);
		cmdline(ccmd, sizeof(ccmd), cv);
		snprintf(params, sizeof(params), "\"capture\":\"%s\",\"packets\":%ld,"
			 "\"timed\":\"process cpu\"", c ? "synthetic" : "shared-concat", pkts);
		if (have_sf)
			report(e, &(struct ovsb_row){ "flows", "capture-to-flows", "mpps", true,
				pkts / median(ts, runs) / 1e6, pkts / median(tc, runs) / 1e6, 0,
				runs, scmd, ccmd, params, "softflowd", 0, 0 });
		if (have_nf)
			report(e, &(struct ovsb_row){ "flows", "capture-to-flows", "mpps", true,
				pkts / median(tn, runs) / 1e6, pkts / median(tc, runs) / 1e6, 0,
				runs, ncmd, ccmd, params, "nfpcapd", 0, 0 });
	}
}

/* ------------------------------------------------------------- driver */

static void usage(void)
{
	fprintf(stderr,
		"usage: ctrack-bench ovs [--json] [WORKLOAD...] [OPTIONS]\n"
		"workloads: bench large pcap kernel flows (default: all)\n"
		"options:\n"
		"  --repeat N        alternating runs per comparison (median; default 5)\n"
		"  --pkts N          packets per thread for bench (default 4000000)\n"
		"  --sizes A,B,...   flows for large (default 100000,1000000,3000000)\n"
		"  --ksizes A,B,...  table sizes for kernel (default 100000,250000; the\n"
		"                    kernel's nf_conntrack_max, 262144, is left alone)\n"
		"  --synth N         TCP connections in the synthetic capture (default 100000)\n"
		"  --quick           one run each, smaller sizes (a smoke test)\n"
		"  --acct            ctrack keeps packet and byte counters (bench, large;\n"
		"                    default off, the kernel's default: OVS keeps none)\n"
		"environment: CTRACK_OVS_CACHE, CTRACK_OVS_TARBALL, CTRACK_SOURCE_DIR,\n"
		"  CTRACK_PCAPS (see bench/ovs/build-ovs.sh)\n");
}

int bench_ovs(const struct bench_args *a)
{
	struct ovsb_env e = { .json = a->json, .repeat = 0 };
	bool do_bench = false, do_large = false, do_pcap = false, do_kernel = false;
	bool do_flows = false;
	uint32_t ksizes[8] = { 100000, 250000 };
	unsigned nksizes = 2;
	unsigned long pkts = 4000000;
	uint32_t sizes[8] = { 100000, 1000000, 3000000 }, synth = 100000;
	unsigned nsizes = 3;
	uint8_t want[64], got[OVSB_SLOT];
	int plen;

	for (int i = 0; i < a->argc; i++) {
		const char *s = a->argv[i];
		const char *next = i + 1 < a->argc ? a->argv[i + 1] : NULL;

		if (!strcmp(s, "bench"))
			do_bench = true;
		else if (!strcmp(s, "large"))
			do_large = true;
		else if (!strcmp(s, "pcap"))
			do_pcap = true;
		else if (!strcmp(s, "kernel"))
			do_kernel = true;
		else if (!strcmp(s, "flows"))
			do_flows = true;
		else if (!strcmp(s, "all"))
			do_bench = do_large = do_pcap = do_kernel = do_flows = true;
		else if (!strcmp(s, "--quick"))
			e.quick = true;
		else if (!strcmp(s, "--acct"))
			ovsb_acct = true;
		else if (!strcmp(s, "--repeat") && next) {
			e.repeat = atoi(next);
			i++;
		} else if (!strcmp(s, "--pkts") && next) {
			pkts = strtoul(next, NULL, 0);
			i++;
		} else if (!strcmp(s, "--synth") && next) {
			synth = (uint32_t)strtoul(next, NULL, 0);
			i++;
		} else if ((!strcmp(s, "--sizes") || !strcmp(s, "--ksizes")) && next) {
			char *save = NULL, buf[128];
			uint32_t *sz = s[2] == 's' ? sizes : ksizes;
			unsigned *ns = s[2] == 's' ? &nsizes : &nksizes;

			snprintf(buf, sizeof(buf), "%s", next);
			*ns = 0;
			for (char *tok = strtok_r(buf, ",", &save); tok && *ns < 8;
			     tok = strtok_r(NULL, ",", &save))
				sz[(*ns)++] = (uint32_t)strtoul(tok, NULL, 0);
			i++;
		} else {
			usage();
			return 1;
		}
	}
	if (!do_bench && !do_large && !do_pcap && !do_kernel && !do_flows)
		do_bench = do_large = do_pcap = do_kernel = do_flows = true;
	if (e.quick) {
		pkts = pkts > 1000000 ? 1000000 : pkts;
		if (nsizes == 3 && sizes[2] == 3000000) {
			sizes[0] = 100000;
			nsizes = 1;
		}
		synth = synth > 20000 ? 20000 : synth;
		if (nksizes == 2 && ksizes[1] == 250000)
			nksizes = 1;
	}
	if (e.repeat < 0 || e.repeat > OVSB_MAX_REPEAT || find_paths(&e) || build_peer(&e))
		return 1;

	/* the frames of OVS's benchmark, byte for byte */
	plen = ovs_bench_payload(&e, want, sizeof(want));
	ovsb_bench_frame(got, 0, 0, false);
	if (plen != (int)OVSB_UDP_FRAME_LEN || memcmp(want, got, OVSB_UDP_FRAME_LEN)) {
		fprintf(stderr, "ctrack-bench: the frame of OVS's benchmark is not the one "
			"frames.h builds (OVS changed?); refusing to compare\n");
		return 1;
	}
	fprintf(stderr, "ctrack-bench: OVS at %s; benchmark frame matches OVS's byte for byte\n",
		e.cache);

	if (do_bench) {
		int keep = e.repeat;

		e.repeat = keep ? keep : (e.quick ? 1 : 5);
		wl_bench(&e, 1, false, pkts);
		wl_bench(&e, 2, false, pkts);
		wl_bench(&e, 1, true, pkts);
		wl_bench(&e, 2, true, pkts);
		e.repeat = keep;
	}
	if (do_large) {
		int keep = e.repeat;

		e.repeat = keep ? keep : (e.quick ? 1 : 5);
		for (unsigned i = 0; i < nsizes; i++)
			wl_large(&e, sizes[i], sizes[i] > 2000000 ? sizes[i] : 2000000);
		e.repeat = keep;
	}
	if (do_pcap) {
		int keep = e.repeat;

		e.repeat = keep ? keep : (e.quick ? 1 : 5);
		wl_pcap(&e, synth);
		e.repeat = keep;
	}
	if (do_kernel) {
		int keep = e.repeat;

		e.repeat = keep ? keep : (e.quick ? 1 : 5);
		wl_kernel(&e, ksizes, nksizes);
		e.repeat = keep;
	}
	if (do_flows) {
		int keep = e.repeat;

		e.repeat = keep ? keep : (e.quick ? 1 : 5);
		wl_flows(&e, synth);
		e.repeat = keep;
	}
	return 0;
}
