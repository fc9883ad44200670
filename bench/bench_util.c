/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_util.c - clocks, options, statistics, result records and
 * synthetic packets for the benchmarks (see bench_util.h).
 *
 * Options are read strictly: a count is digits with an optional decimal
 * point and k/M/G and nothing else (strtod took "abc" for 0, "10x" for
 * 10 and wrapped "-1"), and what cannot be read ends the program with
 * exit status 2 rather than running on a value nobody asked for.
 *
 * Packets are built directly as struct ct_packet with no frame behind
 * them (l3/l4 NULL): the benchmarks that use them measure the tracker and
 * its table, and they turn checksum checking off, which is the only thing
 * that would read the bytes.  Lengths are those of a real IPv4 packet
 * (20-byte IP header, 20- or 32-byte TCP header, 8-byte UDP header) so
 * that accounting counts what it would count.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "support/tuple.h"

/* ---- clocks ---- */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t bu_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t bu_thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

uint64_t bu_proc_cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
}

/* The library's collector thread (named "ct-gc" by ct_gc_start): its
 * task id, or 0 when not found. */
int bu_gc_thread_tid(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int tid = 0;

	if (!d)
		return 0;
	while (!tid && (e = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && strcmp(comm, "ct-gc\n") == 0)
			tid = atoi(e->d_name);
		fclose(f);
	}
	closedir(d);
	return tid;
}

/* Nanoseconds task @tid of this process has run (schedstat's first
 * field), or 0. */
uint64_t bu_task_run_ns(int tid)
{
	char path[64];
	unsigned long long ns = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return ns;
}

void bu_sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull),
			       (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- options ---- */

/* The value of --name (as --name=V or --name V), or NULL; *present tells
 * whether the option appeared at all. */
static const char *opt_find(const struct bench_args *a, const char *name,
			    bool *present)
{
	size_t len = strlen(name);

	*present = false;
	for (int i = 0; i < a->argc; i++) {
		const char *s = a->argv[i];

		if (strncmp(s, "--", 2) || strncmp(s + 2, name, len))
			continue;
		if (s[2 + len] == '=') {
			*present = true;
			return s + 3 + len;
		}
		if (s[2 + len] == '\0') {
			*present = true;
			if (i + 1 < a->argc && strncmp(a->argv[i + 1], "--", 2))
				return a->argv[i + 1];
			return NULL;
		}
	}
	return NULL;
}

/* The value of --name, @def when the option is absent; present without a
 * value is an error. */
static const char *opt_value(const struct bench_args *a, const char *name,
			     const char *def)
{
	bool present;
	const char *v = opt_find(a, name, &present);

	if (present && !v) {
		fprintf(stderr, "ctrack-bench: --%s needs a value\n", name);
		exit(2);
	}
	return present ? v : def;
}

bool bu_flag(const struct bench_args *a, const char *name)
{
	bool present;

	opt_find(a, name, &present);
	return present;
}

/*
 * "10M", "1k", "1.5M", "1000000" (bu_count): the @len bytes at @s, in
 * integers so that every count below 2^64 is exact.  False when they are
 * anything else, a fraction ("1.5") or too big.
 */
static bool parse_count(const char *s, size_t len, uint64_t *out)
{
	const char *p = s, *end = s + len;
	uint64_t whole = 0, frac = 0, scale = 1, mult = 1, part;
	unsigned digits = 0;

	for (; p < end && *p >= '0' && *p <= '9'; p++, digits++) {
		unsigned d = (unsigned)(*p - '0');

		if (whole > (UINT64_MAX - d) / 10)
			return false;
		whole = whole * 10 + d;
	}
	if (p < end && *p == '.')
		/* at most nine decimals: frac * mult stays below 10^18 */
		for (p++; p < end && *p >= '0' && *p <= '9'; p++, digits++) {
			if (scale == 1000000000ull)
				return false;
			frac = frac * 10 + (uint64_t)(*p - '0');
			scale *= 10;
		}
	if (!digits)
		return false;
	if (p < end) {
		switch (*p++) {
		case 'k': case 'K': mult = 1000ull; break;
		case 'm': case 'M': mult = 1000000ull; break;
		case 'g': case 'G': mult = 1000000000ull; break;
		default: return false;
		}
	}
	if (p != end || frac * mult % scale)
		return false;
	part = frac * mult / scale;
	if (whole > (UINT64_MAX - part) / mult)
		return false;
	*out = whole * mult + part;
	return true;
}

static uint64_t count_or_exit(const char *opt, const char *s, size_t len)
{
	uint64_t v;

	if (!parse_count(s, len, &v)) {
		fprintf(stderr, "ctrack-bench: --%s: '%.*s' is not a count "
			"(e.g. 1000, 10k, 1M)\n", opt, (int)len, s);
		exit(2);
	}
	return v;
}

uint64_t bu_count(const char *opt, const char *s)
{
	return count_or_exit(opt, s, strlen(s));
}

unsigned bu_opt_words(const struct bench_args *a, const char *name, const char *def,
		      const char *const *names, unsigned n_names,
		      unsigned *out, unsigned max)
{
	const char *s = bu_opt_str(a, name, def);
	unsigned n = 0;

	while (*s && n < max) {
		size_t len = strcspn(s, ",");

		for (unsigned i = 0; i < n_names; i++)
			if (strlen(names[i]) == len && !strncmp(s, names[i], len))
				out[n++] = i;
		s += len;
		if (*s == ',')
			s++;
	}
	return n;
}

unsigned bu_count_list(const char *opt, const char *s, uint64_t *out,
		       unsigned max)
{
	unsigned n = 0;

	for (;;) {
		size_t len = strcspn(s, ",");
		uint64_t v = count_or_exit(opt, s, len);

		if (out) {
			if (n == max) {
				fprintf(stderr, "ctrack-bench: --%s: at most %u values\n",
					opt, max);
				exit(2);
			}
			out[n] = v;
		}
		n++;
		if (!s[len])
			return n;
		s += len + 1;
	}
}

uint64_t bu_opt_u64(const struct bench_args *a, const char *name, uint64_t def)
{
	const char *v = opt_value(a, name, NULL);

	return v ? bu_count(name, v) : def;
}

const char *bu_opt_str(const struct bench_args *a, const char *name,
		       const char *def)
{
	return opt_value(a, name, def);
}

unsigned bu_opt_list(const struct bench_args *a, const char *name,
		     uint64_t def, uint64_t *out, unsigned max)
{
	const char *v = opt_value(a, name, NULL);

	if (!v) {
		out[0] = def;
		return 1;
	}
	return bu_count_list(name, v, out, max);
}

/* ---- statistics ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double bu_percentile(double *v, size_t n, double pct)
{
	size_t i;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	/* nearest rank */
	i = (size_t)ceil(pct / 100.0 * (double)n);
	if (i == 0)
		i = 1;
	if (i > n)
		i = n;
	return v[i - 1];
}

void bu_spread(const double *v, size_t n, double *med, double *lo, double *hi)
{
	double c[64];

	if (n > 64)
		n = 64;
	memcpy(c, v, n * sizeof(*c));
	*med = bu_median(c, n);          /* sorts c */
	*lo = n ? c[0] : 0;
	*hi = n ? c[n - 1] : 0;
}

/* ---- records ---- */

/* Append @s to one rendering, truncating when full. */
static void app(char *buf, size_t *len, size_t cap, const char *s)
{
	size_t k = strlen(s);

	if (*len + k >= cap)
		k = cap - 1 - *len;
	memcpy(buf + *len, s, k);
	*len += k;
	buf[*len] = '\0';
}

static void rec_add(struct bu_rec *r, const char *j, const char *t)
{
	app(r->json, &r->jlen, sizeof(r->json), j);
	app(r->text, &r->tlen, sizeof(r->text), t);
}

void bu_rec_begin(struct bu_rec *r, const struct bench_args *a,
		  const char *bench, const char *variant)
{
	char j[256], t[256];

	r->a = a;
	r->jlen = r->tlen = 0;
	r->json[0] = r->text[0] = '\0';
	snprintf(j, sizeof(j), "{\"bench\":\"%s\",\"variant\":\"%s\"", bench, variant);
	snprintf(t, sizeof(t), "%-10s %-28s", bench, variant);
	rec_add(r, j, t);
}

void bu_rec_num(struct bu_rec *r, const char *key, double v)
{
	char j[128], t[128];

	if (!isfinite(v))
		v = 0;
	snprintf(j, sizeof(j), ",\"%s\":%.6g", key, v);
	snprintf(t, sizeof(t), " %s=%.4g", key, v);
	rec_add(r, j, t);
}

void bu_rec_int(struct bu_rec *r, const char *key, uint64_t v)
{
	char j[128], t[128];

	snprintf(j, sizeof(j), ",\"%s\":%llu", key, (unsigned long long)v);
	snprintf(t, sizeof(t), " %s=%llu", key, (unsigned long long)v);
	rec_add(r, j, t);
}

void bu_rec_str(struct bu_rec *r, const char *key, const char *v)
{
	char j[256], t[256];

	/* values are our own identifiers: no escaping needed */
	snprintf(j, sizeof(j), ",\"%s\":\"%s\"", key, v);
	snprintf(t, sizeof(t), " %s=%s", key, v);
	rec_add(r, j, t);
}

void bu_rec_bool(struct bu_rec *r, const char *key, bool v)
{
	char j[128], t[128];

	snprintf(j, sizeof(j), ",\"%s\":%s", key, v ? "true" : "false");
	snprintf(t, sizeof(t), " %s=%s", key, v ? "yes" : "no");
	rec_add(r, j, t);
}

void bu_rec_end(struct bu_rec *r)
{
	if (r->a->json)
		printf("%s}\n", r->json);
	else
		printf("%s\n", r->text);
	fflush(stdout);
}

void bu_note(const struct bench_args *a, const char *fmt, ...)
{
	va_list ap;

	if (a->json)
		return;
	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
}

/* ---- tables ---- */

void bu_config(struct ct_table_config *cfg, uint64_t rows, bool acct)
{
	ct_table_config_default(cfg);
	cfg->settings.max = 0;
	cfg->settings.checksum = 0;
	cfg->settings.acct = acct;
	cfg->settings.buckets = (uint32_t)(rows ? rows : 1024);
}

struct ct_table *bu_table(const struct ct_table_config *cfg)
{
	struct ct_table *t;
	int err = ct_table_create(cfg, &t);

	if (err < 0) {
		fprintf(stderr, "ctrack-bench: ct_table_create: %s\n", strerror(-err));
		exit(1);
	}
	return t;
}

/* ---- packets ---- */

void bu_flow_tuple(struct ct_tuple *t, uint32_t flow, uint8_t l4, uint16_t zone)
{
	*t = ts_tuple4(l4, 0x0a000000u + (flow >> 12), 0xac100001u,
		       (uint16_t)(1024u + (flow & 4095u)), 80);
	t->zone = zone;
}

static void pkt_base(struct ct_packet *p, const struct ct_tuple *orig,
		     enum ct_dir dir, uint32_t l4_hdr, uint32_t payload)
{
	memset(p, 0, offsetof(struct ct_packet, u));
	p->tuple = dir == CT_DIR_REPLY ? ts_reverse(orig) : *orig;
	p->kind = CT_PKT_TRACKABLE;
	p->l3_hdr_len = 20;
	p->l4_len = l4_hdr + payload;
	p->l4_caplen = p->l4_len;
	p->l3_len = 20 + p->l4_len;
	p->payload_len = payload;
	p->ttl = 64;
}

void bu_udp_pkt(struct ct_packet *p, const struct ct_tuple *orig,
		enum ct_dir dir, uint32_t payload)
{
	pkt_base(p, orig, dir, 8, payload);
}

void bu_tcp_pkt(struct ct_packet *p, const struct ct_tuple *orig,
		enum ct_dir dir, uint8_t flags, uint32_t seq, uint32_t ack,
		uint16_t window, uint32_t payload)
{
	struct ct_tcp_info *th = &p->u.tcp;
	bool syn = flags & CT_TCP_SYN;

	pkt_base(p, orig, dir, syn ? 32 : 20, payload);
	memset(th, 0, sizeof(*th));
	th->seq = seq;
	th->ack = ack;
	th->window = window;
	th->flags = flags;
	th->hdr_len = syn ? 32 : 20;
	if (syn) {
		th->opts = CT_TCPOPT_MSS | CT_TCPOPT_WSCALE | CT_TCPOPT_SACK_PERM;
		th->mss = 1460;
		th->wscale = 7;
	}
}

/* Windows: SYNs carry 65535 (unscaled), later segments 512 << 7 = 64 KiB. */
void bu_tcp_handshake(struct ct_packet p[3], const struct ct_tuple *orig)
{
	bu_tcp_pkt(&p[0], orig, CT_DIR_ORIGINAL, CT_TCP_SYN, BU_ISN_O, 0, 65535, 0);
	bu_tcp_pkt(&p[1], orig, CT_DIR_REPLY, CT_TCP_SYN | CT_TCP_ACK, BU_ISN_R,
		   BU_ISN_O + 1, 65535, 0);
	bu_tcp_pkt(&p[2], orig, CT_DIR_ORIGINAL, CT_TCP_ACK, BU_ISN_O + 1,
		   BU_ISN_R + 1, 512, 0);
}

void bu_tcp_established(struct ct_packet *p, const struct ct_tuple *orig,
			uint32_t k)
{
	uint32_t sent = (k / 2) * BU_TCP_MSS;

	if (k % 2 == 0)
		bu_tcp_pkt(p, orig, CT_DIR_ORIGINAL, CT_TCP_ACK | CT_TCP_PSH,
			   BU_ISN_O + 1 + sent, BU_ISN_R + 1, 512, BU_TCP_MSS);
	else
		bu_tcp_pkt(p, orig, CT_DIR_REPLY, CT_TCP_ACK, BU_ISN_R + 1,
			   BU_ISN_O + 1 + sent + BU_TCP_MSS, 512, 0);
}

void bu_tcp_close(struct ct_packet p[3], const struct ct_tuple *orig, uint32_t k)
{
	uint32_t end = BU_ISN_O + 1 + (k / 2) * BU_TCP_MSS;

	bu_tcp_pkt(&p[0], orig, CT_DIR_ORIGINAL, CT_TCP_FIN | CT_TCP_ACK, end,
		   BU_ISN_R + 1, 512, 0);
	bu_tcp_pkt(&p[1], orig, CT_DIR_REPLY, CT_TCP_FIN | CT_TCP_ACK, BU_ISN_R + 1,
		   end + 1, 512, 0);
	bu_tcp_pkt(&p[2], orig, CT_DIR_ORIGINAL, CT_TCP_ACK, end + 1, BU_ISN_R + 2,
		   512, 0);
}

uint64_t bu_process_all(struct ct_thread *thr, struct ct_packet *pkts,
			size_t n, ct_time_ns now, int cls)
{
	const struct ct_packet *ptr[CT_BURST_MAX];
	struct ct_verdict v[CT_BURST_MAX];
	uint64_t hits = 0;

	for (size_t i = 0; i < n; i += CT_BURST_MAX) {
		unsigned b = n - i < CT_BURST_MAX ? (unsigned)(n - i) : CT_BURST_MAX;

		for (unsigned j = 0; j < b; j++)
			ptr[j] = &pkts[i + j];
		ct_process_burst(thr, ptr, b, now, v);
		for (unsigned j = 0; j < b; j++)
			if (cls < 0 || v[j].cls == cls)
				hits++;
	}
	return hits;
}

uint64_t bu_fill_tcp(struct ct_thread *thr, uint32_t first, uint64_t n,
		     uint16_t zone, ct_time_ns now)
{
	/* 12 flows x 5 packets per burst */
	struct ct_packet pkts[60];
	const struct ct_packet *ptr[60];
	struct ct_verdict v[60];
	uint64_t ok = 0;

	for (uint64_t f = 0; f < n; f += 12) {
		unsigned nf = n - f < 12 ? (unsigned)(n - f) : 12, np = 0;

		for (unsigned j = 0; j < nf; j++) {
			struct ct_tuple t;

			bu_flow_tuple(&t, (uint32_t)(first + f + j), IPPROTO_TCP, zone);
			bu_tcp_handshake(&pkts[np], &t);
			bu_tcp_established(&pkts[np + 3], &t, 0);
			bu_tcp_established(&pkts[np + 4], &t, 1);
			np += 5;
		}
		for (unsigned j = 0; j < np; j++)
			ptr[j] = &pkts[j];
		ct_process_burst(thr, ptr, np, now, v);
		for (unsigned j = 4; j < np; j += 5)
			if (v[j].cls == CT_V_ESTABLISHED && v[j].l4state == 3)
				ok++;
	}
	return ok;
}

uint64_t bu_fill_udp(struct ct_thread *thr, uint32_t first, uint64_t n,
		     uint16_t zone, ct_time_ns now, bool replied)
{
	return bu_fill_udp_timed(thr, first, n, zone, now, replied, NULL);
}

uint64_t bu_fill_udp_timed(struct ct_thread *thr, uint32_t first, uint64_t n,
			   uint16_t zone, ct_time_ns now, bool replied,
			   uint64_t *burst_ns)
{
	struct ct_packet pkts[CT_BURST_MAX];
	const struct ct_packet *ptr[CT_BURST_MAX];
	struct ct_verdict v[CT_BURST_MAX];
	unsigned per = replied ? 2 : 1, step = CT_BURST_MAX / per;
	uint64_t ok = 0;

	for (uint64_t f = 0; f < n; f += step) {
		unsigned nf = n - f < step ? (unsigned)(n - f) : step, np = 0;

		for (unsigned j = 0; j < nf; j++) {
			struct ct_tuple t;

			bu_flow_tuple(&t, (uint32_t)(first + f + j), IPPROTO_UDP, zone);
			bu_udp_pkt(&pkts[np++], &t, CT_DIR_ORIGINAL, 64);
			if (replied)
				bu_udp_pkt(&pkts[np++], &t, CT_DIR_REPLY, 64);
		}
		for (unsigned j = 0; j < np; j++)
			ptr[j] = &pkts[j];
		if (burst_ns) {
			uint64_t t0 = bu_mono_ns();

			ct_process_burst(thr, ptr, np, now, v);
			*burst_ns += bu_mono_ns() - t0;
		} else {
			ct_process_burst(thr, ptr, np, now, v);
		}
		for (unsigned j = 0; j < np; j += per)
			if (v[j].cls == CT_V_NEW)
				ok++;
	}
	return ok;
}

/* ---- flow sequences ---- */

/*
 * Zipf by rejection-inversion (Hörmann and Derflinger, "Rejection-
 * inversion to generate variates from monotone discrete distributions",
 * 1996): constant expected time per sample for any number of ranks, no
 * table.  H is an integral of h(x) = x^-s; helper functions keep it exact
 * near s = 1.
 */
struct zipf {
	double s, n, h_x1, h_n, slack;
};

static double helper1(double x)   /* log1p(x) / x */
{
	return fabs(x) > 1e-8 ? log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x));
}

static double helper2(double x)   /* expm1(x) / x */
{
	return fabs(x) > 1e-8 ? expm1(x) / x : 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x));
}

static double zipf_H(const struct zipf *z, double x)
{
	double lx = log(x);

	return helper2((1 - z->s) * lx) * lx;
}

static double zipf_h(const struct zipf *z, double x)
{
	return exp(-z->s * log(x));
}

static double zipf_Hinv(const struct zipf *z, double x)
{
	double t = x * (1 - z->s);

	if (t < -1)
		t = -1;
	return exp(helper1(t) * x);
}

static void zipf_init(struct zipf *z, double s, uint64_t n)
{
	z->s = s;
	z->n = (double)n;
	z->h_x1 = zipf_H(z, 1.5) - 1;
	z->h_n = zipf_H(z, z->n + 0.5);
	z->slack = 2 - zipf_Hinv(z, zipf_H(z, 2.5) - zipf_h(z, 2));
}

static uint64_t zipf_sample(const struct zipf *z, uint64_t *seed)
{
	for (;;) {
		double u01 = (double)(bu_rand(seed) >> 11) * 0x1.0p-53;
		double u = z->h_n + u01 * (z->h_x1 - z->h_n);
		double x = zipf_Hinv(z, u);
		double k = floor(x + 0.5);

		if (k < 1)
			k = 1;
		else if (k > z->n)
			k = z->n;
		if (k - x <= z->slack || u >= zipf_H(z, k + 0.5) - zipf_h(z, k))
			return (uint64_t)k;
	}
}

void bu_flow_sequence(uint32_t *out, size_t n, uint64_t flows, double zipf_s,
		      uint64_t seed)
{
	struct zipf z;

	if (zipf_s <= 0) {
		for (size_t i = 0; i < n; i++)
			out[i] = (uint32_t)((bu_rand(&seed) >> 32) * flows >> 32);
		return;
	}
	zipf_init(&z, zipf_s, flows);
	for (size_t i = 0; i < n; i++) {
		/* scatter ranks: multiplying by a prime above any flow count
		 * is a bijection modulo the count */
		uint64_t rank = zipf_sample(&z, &seed) - 1;
		out[i] = (uint32_t)(rank * 2654435761ull % flows);
	}
}

long bu_sh_num(const char *cmd)
{
	char line[256] = "";
	FILE *p = popen(cmd, "r");
	long v = -1;

	if (!p)
		return -1;
	if (fgets(line, sizeof(line), p))
		v = strtol(line, NULL, 10);
	pclose(p);
	return v;
}

double bu_pid_cpu_s(int pid)
{
	char path[64], buf[1024];
	unsigned long ut = 0, st = 0;
	FILE *f;
	char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* the 14th and 15th fields, after the command name in parentheses */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

uint64_t bu_rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size = 0, rss = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &rss) != 2)
		rss = 0;
	fclose(f);
	return (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE);
}

void bu_machine(char *buf, size_t size)
{
	struct utsname u;
	char model[128] = "?";
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "model name", 10)) {
				char *c = strchr(line, ':');
				if (c) {
					snprintf(model, sizeof(model), "%s", c + 2);
					model[strcspn(model, "\n")] = '\0';
				}
				break;
			}
		fclose(f);
	}
	uname(&u);
	snprintf(buf, size, "%ld cpus, %s, kernel %s", sysconf(_SC_NPROCESSORS_ONLN),
		 model, u.release);
}
