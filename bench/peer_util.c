/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_util.c - what the peers share: key/value results from a child, a
 * forked child or an exec'd peer timed in CPU, the paths (this build, the
 * OVS cache, the captures), and the comparison rows with their report.
 */
#include "peer.h"

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

const char *kv_str(const struct ovsb_kv *kv, const char *key)
{
	for (unsigned i = 0; i < kv->n; i++)
		if (!strcmp(kv->key[i], key))
			return kv->val[i];
	return NULL;
}

double kv_num(const struct ovsb_kv *kv, const char *key)
{
	const char *v = kv_str(kv, key);

	return v ? strtod(v, NULL) : -1.0;
}

double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

long rss_bytes(void)
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

double median(const double *v, unsigned n)
{
	double s[OVSB_MAX_REPEAT];

	if (!n)
		return -1.0;
	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n & 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

void fdprintf(int fd, const char *fmt, ...)
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

static double ru_cpu(const struct rusage *ru)
{
	return (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec * 1e-6 +
	       (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec * 1e-6;
}

int run_child(ovsb_child_fn fn, void *arg, struct ovsb_kv *kv, double *cpu)
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
int run_cmd(char *const argv[], const char *out_path, const char *err_path,
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

void cmdline(char *buf, size_t size, char *const argv[])
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; argv[i] && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? " " : "", argv[i]);
}

/* --acct: ctrack's tables keep packet and byte counters (bench, large). */
bool ovsb_acct;

static void dirname_inplace(char *p)
{
	char *s = strrchr(p, '/');

	if (s && s != p)
		*s = '\0';
}

/* The executable is <build>/bench/ctrack-bench; the build dir sits in the
 * source root (build/, build-asan/, ...) unless CTRACK_SOURCE_DIR says. */
int find_paths(struct ovsb_env *e)
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
int build_peer(struct ovsb_env *e)
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

static double row_ratio(const struct ovsb_row *r)
{
	if (r->ovs <= 0 || r->ctrack <= 0)
		return 0;
	return r->higher_better ? r->ctrack / r->ovs : r->ovs / r->ctrack;
}

/* The lowest and highest of @num[k] / @den[k] over @runs pairs measured
 * one after the other (0 where a figure is missing, as row_ratio). */
void ratio_range(const double *num, const double *den, unsigned runs,
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
void run_ratio_range(struct ovsb_row *r, const double *o, const double *c,
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

void report(const struct ovsb_env *e, const struct ovsb_row *r)
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
