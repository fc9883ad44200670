/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_list.c - listing at memory speed (issue 25, part 4), side by side:
 *
 *   printer  the table printer: N entries (one-way UDP flows, acct on, as
 *            the tool has it) formatted by the snprintf printer the tool
 *            had (tests/daemon/format_ref.c, through stdio) and by the
 *            hand-written one (tools/ctrack/format.c, into a buffer), both
 *            written to /dev/null, in the conntrack, extended and json
 *            formats; and the daemon's whole listing path in-process: the
 *            sliced dump (ct_table_dump_slice, 2,048 entries a slice) plus
 *            the printer.  Thread CPU time; Mlines/s and the ratio.
 *   socket   `ctrack list > /dev/null` of a daemon holding N entries (it
 *            replays a capture of N one-way UDP flows written here): wall
 *            time of the client, its CPU and the daemon's (/proc), lines/s.
 *   kernel   the kernel's `conntrack -L > /dev/null` of K entries in a
 *            router namespace (bench/ovs/kernel-ns.sh; the flows replayed
 *            into it with tcpreplay), against `ctrack list` of a daemon
 *            holding the same K entries (the same capture), runs
 *            alternating, medians.  K is at most 90% of the kernel's
 *            nf_conntrack_max, which only the initial namespace may change
 *            and which this benchmark leaves alone (262,144 here, so K is
 *            235,929 at most; the ratio is measured at that count).
 *   latency  a worker's burst latency (the daemon's histogram, 16 buckets
 *            an octave) while a looped replay of N flows keeps it busy at
 *            --pps packets a second, in alternating phases: quiet, and with
 *            50 clients each running `ctrack list` of the N entries in a
 *            loop; p50/p99/p99.9 of each phase kind and the ratio.
 *   read     `ctrack read FILE > /dev/null` (the table printed) against
 *            `softflowd -r FILE -d` on the same capture, runs alternating,
 *            process CPU time, medians: a capture like the (1.12M
 *            packets of conversations: ctrack-bench read's synthetic one)
 *            and one of N one-packet flows (a table as large as the
 *            capture: printing it is most of the work).
 *
 * Options: --entries N (1M), --kentries K (the kernel's count, default
 * 90% of its maximum), --reps N (5), --pps N and --clients N (latency:
 * 200k, 50), --quick (100k entries, 2 reps).
 * Needs root for kernel; the others run anywhere.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../tests/daemon/format_ref.h"
#include "../tools/ctrack/format.h"
#include "bench.h"
#include "bench_util.h"

#define MAXREP 31
#define DM_HIST_MAX 600

/* ---- helpers ---- */

static double now_s(void)
{
	return (double)bu_mono_ns() / 1e9;
}

static uint16_t ip_csum(const uint8_t *h)
{
	uint32_t s = 0;

	for (int i = 0; i < 20; i += 2)
		s += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* N one-way UDP flows 10.x.y.z:p -> 192.168.0.1:53 with the MAC addresses
 * of bench/ovs/kernel-ns.sh (sender a0 -> router r0), 1 us apart. */
static int write_flows(const char *path, uint64_t n)
{
	FILE *f = fopen(path, "wb");
	uint32_t gh[6] = { 0xa1b2c3d4u, 0x00040002u, 0, 0, 65535, 1 };
	uint8_t b[14 + 28] = { 0x50, 0x54, 0, 0, 0, 0x0a, 0x50, 0x54, 0, 0, 0, 0x09, 0x08, 0 };

	if (!f)
		return -1;
	fwrite(gh, sizeof(gh), 1, f);
	for (uint64_t i = 0; i < n; i++) {
		uint8_t *ip = b + 14, *u = ip + 20;
		uint32_t src = htonl(0x0a000001u + (uint32_t)i), dst = htonl(0xc0a80001u);
		uint32_t rh[4] = { 1700000000u + (uint32_t)(i / 1000000), (uint32_t)(i % 1000000),
				   sizeof(b), sizeof(b) };
		uint16_t v;

		memset(ip, 0, 28);
		ip[0] = 0x45;
		ip[3] = 28;
		ip[6] = 0x40;
		ip[8] = 64;
		ip[9] = 17;
		memcpy(ip + 12, &src, 4);
		memcpy(ip + 16, &dst, 4);
		v = htons(ip_csum(ip));
		memcpy(ip + 10, &v, 2);
		v = htons((uint16_t)(1024 + i % 60000));
		memcpy(u, &v, 2);
		v = htons(53);
		memcpy(u + 2, &v, 2);
		u[5] = 8;
		fwrite(rh, sizeof(rh), 1, f);
		fwrite(b, sizeof(b), 1, f);
	}
	return fclose(f);
}

/* Run @argv with stdout to @out (NULL: /dev/null); wall seconds and the
 * child's CPU seconds.  Returns its exit status. */
static int run(char *const argv[], const char *out, double *wall, double *cpu)
{
	struct rusage ru;
	int st = 0;
	double t0 = now_s();
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int nul = open("/dev/null", O_WRONLY);

		if (fd < 0 || nul < 0)
			_exit(126);
		dup2(fd, 1);
		dup2(nul, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &st, 0, &ru) < 0)
		return -1;
	if (wall)
		*wall = now_s() - t0;
	if (cpu)
		*cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static double proc_cpu_s(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long ut = 0, stt = 0;
	FILE *f;
	char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return 0;
	}
	fclose(f);
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &stt) != 2)
		return 0;
	return (double)(ut + stt) / (double)sysconf(_SC_CLK_TCK);
}

/* A number from a command's first output line, or -1. */
static long sh_num(const char *cmd)
{
	char line[128] = "";
	FILE *p = popen(cmd, "r");
	long v = -1;

	if (!p)
		return -1;
	if (fgets(line, sizeof(line), p))
		v = strtol(line, NULL, 10);
	pclose(p);
	return v;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double med(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_d);
	return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : 0;
}

/* ---- a daemon replaying a capture ---- */

struct dmn {
	pid_t pid;
	char sock[PATH_MAX];
};

static int daemon_up(struct dmn *d, const char *ctrack, const char *dir, const char *cap,
		     uint64_t want)
{
	char cnt[PATH_MAX * 2 + 64], max[64];

	/* the kernel's default maximum (262,144) is the daemon's too */
	snprintf(max, sizeof(max), "nf_conntrack_max=%llu", (unsigned long long)(2 * want + 1024));
	snprintf(d->sock, sizeof(d->sock), "%s/ctrack-%d.sock", dir, (int)getpid());
	unlink(d->sock);
	fflush(NULL);
	d->pid = fork();
	if (d->pid < 0)
		return -1;
	if (d->pid == 0) {
		int nul = open("/dev/null", O_WRONLY);

		dup2(nul, 1);
		dup2(nul, 2);
		/* --control-nice 0: the listing path itself is measured here,
		 * not how it yields to packets on a loaded machine (latency) */
		execl(ctrack, ctrack, "daemon", "--replay", cap, "--speed", "0", "--socket", d->sock,
		      "--set", "nf_conntrack_udp_timeout=3600", "--set",
		      "nf_conntrack_checksum=0", "--set", max, "--control-nice", "0", (char *)NULL);
		_exit(127);
	}
	snprintf(cnt, sizeof(cnt), "'%s' count --socket '%s' 2>/dev/null", ctrack, d->sock);
	for (int i = 0; i < 1200; i++) {
		long n = sh_num(cnt);

		if (n >= 0 && (uint64_t)n >= want)
			return 0;
		bu_sleep_ns(50000000ull);
	}
	fprintf(stderr, "ctrack-bench list: the daemon holds %ld of %llu entries after 60 s\n",
		sh_num(cnt), (unsigned long long)want);
	return -1;
}

static void daemon_down(struct dmn *d)
{
	if (d->pid > 0) {
		kill(d->pid, SIGTERM);
		waitpid(d->pid, NULL, 0);
	}
	d->pid = 0;
}

/* ---- printer ---- */

struct infos {
	struct ct_conn_info *v;
	size_t n, cap;
};

static int collect(const struct ct_conn_info *ci, void *arg)
{
	struct infos *x = arg;

	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 1 << 16;
		struct ct_conn_info *v = realloc(x->v, cap * sizeof(*v));

		if (!v)
			return -1;
		x->v = v;
		x->cap = cap;
	}
	x->v[x->n++] = *ci;
	return 0;
}

struct sink {
	char *b;
	size_t len;
	int fd;
	struct fmt_opts o;
	ct_time_ns now;
};

static void sink_line(struct sink *s, const struct ct_conn_info *ci)
{
	if (s->len + FMT_LINE_MAX + 1 > (1u << 20)) {
		(void)!write(s->fd, s->b, s->len);
		s->len = 0;
	}
	s->len += fmt_listing_line(s->b + s->len, &s->o, ci, 3600, s->now);
	s->b[s->len++] = '\n';
}

static int slice_cb(const struct ct_conn_info *ci, void *arg)
{
	sink_line(arg, ci);
	return 0;
}

static int count_cb(const struct ct_conn_info *ci, void *arg)
{
	*(uint64_t *)arg += ci->orig.l4 != 0;
	return 0;
}

static void wl_printer(const struct bench_args *a, uint64_t n, unsigned reps)
{
	struct ct_table_config cfg;
	struct ct_table *t;
	struct ct_thread *thr;
	struct infos x = { NULL, 0, 0 };
	struct sink s;
	static const char *const names[] = { "conntrack", "extended", "json" };

	bu_config(&cfg, n / 4, true);
	t = bu_table(&cfg);
	thr = ct_thread_attach(t);
	bu_fill_udp(thr, 0, n, 0, 1000000000ull, false);
	ct_table_dump(thr, -1, collect, &x);
	s.b = malloc(1u << 20);
	s.fd = open("/dev/null", O_WRONLY);
	s.now = 1000000000ull;
	for (int f = 0; f < 3; f++) {
		double told[MAXREP], tnew[MAXREP], tpath[MAXREP], twalk[MAXREP];
		struct bu_rec r;
		char variant[64];

		for (unsigned k = 0; k < reps; k++) {
			struct ref_opts ro = { f == 0 ? REF_CONNTRACK : f == 1 ? REF_EXTENDED : REF_JSON,
					       true };
			FILE *devnull = fopen("/dev/null", "w");
			uint64_t c0 = bu_thread_cpu_ns();
			struct ct_dump_cursor cur;

			for (size_t i = 0; i < x.n; i++)
				ref_listing(devnull, &ro, &x.v[i], 3600);
			fflush(devnull);
			told[k] = (double)(bu_thread_cpu_ns() - c0) / 1e9;
			fclose(devnull);
			memset(&s.o, 0, sizeof(s.o));
			s.o.format = f == 0 ? FMT_CONNTRACK : f == 1 ? FMT_EXTENDED : FMT_JSON;
			s.o.acct = true;
			s.len = 0;
			c0 = bu_thread_cpu_ns();
			for (size_t i = 0; i < x.n; i++)
				sink_line(&s, &x.v[i]);
			(void)!write(s.fd, s.b, s.len);
			tnew[k] = (double)(bu_thread_cpu_ns() - c0) / 1e9;
			s.len = 0;
			ct_dump_cursor_init(&cur);
			c0 = bu_thread_cpu_ns();
			while (!ct_dump_cursor_done(&cur))
				ct_table_dump_slice(thr, -1, &cur, 2048, 0, slice_cb, &s);
			(void)!write(s.fd, s.b, s.len);
			tpath[k] = (double)(bu_thread_cpu_ns() - c0) / 1e9;
			{
				uint64_t cnt = 0;

				ct_dump_cursor_init(&cur);
				c0 = bu_thread_cpu_ns();
				while (!ct_dump_cursor_done(&cur))
					ct_table_dump_slice(thr, -1, &cur, 2048, 0, count_cb, &cnt);
				twalk[k] = (double)(bu_thread_cpu_ns() - c0) / 1e9;
			}
		}
		snprintf(variant, sizeof(variant), "printer-%s", names[f]);
		bu_rec_begin(&r, a, "list", variant);
		bu_rec_int(&r, "lines", x.n);
		bu_rec_num(&r, "snprintf_mlines_per_s", (double)x.n / med(told, reps) / 1e6);
		bu_rec_num(&r, "by_hand_mlines_per_s", (double)x.n / med(tnew, reps) / 1e6);
		bu_rec_num(&r, "ratio", med(told, reps) / med(tnew, reps));
		bu_rec_num(&r, "dump_slices_and_print_mlines_per_s", (double)x.n / med(tpath, reps) / 1e6);
		bu_rec_num(&r, "dump_slices_only_mentries_per_s", (double)x.n / med(twalk, reps) / 1e6);
		bu_rec_int(&r, "runs", reps);
		bu_rec_str(&r, "timed", "thread cpu, median");
		bu_rec_end(&r);
	}
	close(s.fd);
	free(s.b);
	free(x.v);
	ct_thread_detach(thr);
	ct_table_destroy(t);
}

/* ---- socket ---- */

static void wl_socket(const struct bench_args *a, const char *ctrack, const char *dir,
		      uint64_t n, unsigned reps)
{
	char cap[PATH_MAX];
	struct dmn d;
	double w[MAXREP], c[MAXREP], dc[MAXREP], we[MAXREP];
	struct bu_rec r;

	snprintf(cap, sizeof(cap), "%s/flows-%llu.pcap", dir, (unsigned long long)n);
	if (write_flows(cap, n) || daemon_up(&d, ctrack, dir, cap, n)) {
		fprintf(stderr, "ctrack-bench list: socket: the daemon did not come up\n");
		daemon_down(&d);
		return;
	}
	for (unsigned k = 0; k < reps; k++) {
		char *argv[] = { (char *)ctrack, "list", "--socket", d.sock, NULL };
		char *argx[] = { (char *)ctrack, "list", "-o", "extended", "--socket", d.sock, NULL };
		double d0 = proc_cpu_s(d.pid);

		run(argv, NULL, &w[k], &c[k]);
		dc[k] = proc_cpu_s(d.pid) - d0;
		run(argx, NULL, &we[k], NULL);
	}
	bu_rec_begin(&r, a, "list", "socket");
	bu_rec_int(&r, "entries", n);
	bu_rec_num(&r, "wall_s", med(w, reps));
	bu_rec_num(&r, "mlines_per_s", (double)n / med(w, reps) / 1e6);
	bu_rec_num(&r, "client_cpu_s", med(c, reps));
	bu_rec_num(&r, "daemon_cpu_s", med(dc, reps));
	bu_rec_num(&r, "extended_wall_s", med(we, reps));
	bu_rec_int(&r, "runs", reps);
	bu_rec_str(&r, "command", "ctrack list --socket S > /dev/null");
	bu_rec_end(&r);
	daemon_down(&d);
	unlink(cap);
}

/* ---- kernel ---- */

static void wl_kernel(const struct bench_args *a, const char *ctrack, const char *dir,
		      const char *repo, uint64_t want, unsigned reps)
{
	char script[PATH_MAX + 64], prefix[32], cmd[PATH_MAX * 2], cap[PATH_MAX], nsr[64],
	     nsa[64], dev[64];
	long kmax = sh_num("sysctl -n net.netfilter.nf_conntrack_max 2>/dev/null");
	uint64_t k;
	long got;
	double kw[MAXREP], cw[MAXREP];
	struct dmn d;
	struct bu_rec r;

	if (geteuid() != 0 || kmax <= 0 || system("command -v tcpreplay conntrack nft ip "
						   ">/dev/null 2>&1")) {
		fprintf(stderr, "ctrack-bench list: kernel: needs root, ip, nft, conntrack and "
			"tcpreplay; skipped\n");
		return;
	}
	k = want ? want : (uint64_t)kmax * 9 / 10;
	if (k > (uint64_t)kmax * 9 / 10)
		k = (uint64_t)kmax * 9 / 10;
	snprintf(script, sizeof(script), "%s/bench/ovs/kernel-ns.sh", repo);
	snprintf(prefix, sizeof(prefix), "ctkl%d", (int)getpid() % 100000);
	snprintf(nsr, sizeof(nsr), "%sr", prefix);
	snprintf(nsa, sizeof(nsa), "%sa", prefix);
	snprintf(dev, sizeof(dev), "%sa0", prefix);
	snprintf(cap, sizeof(cap), "%s/kflows-%llu.pcap", dir, (unsigned long long)k);
	snprintf(cmd, sizeof(cmd), "sh '%s' up %s >/dev/null 2>&1", script, prefix);
	if (write_flows(cap, k) || system(cmd)) {
		fprintf(stderr, "ctrack-bench list: kernel: namespace set-up failed\n");
		goto down;
	}
	snprintf(cmd, sizeof(cmd), "ip netns exec %s tcpreplay -K --topspeed -i %s '%s' "
		 ">/dev/null 2>&1", nsa, dev, cap);
	if (system(cmd))
		fprintf(stderr, "ctrack-bench list: kernel: tcpreplay failed\n");
	bu_sleep_ns(500000000ull);
	snprintf(cmd, sizeof(cmd), "ip netns exec %s conntrack -C", nsr);
	got = sh_num(cmd);
	if (got <= 0 || daemon_up(&d, ctrack, dir, cap, k)) {
		fprintf(stderr, "ctrack-bench list: kernel: %ld entries in the kernel's table; "
			"no comparison\n", got);
		daemon_down(&d);
		goto down;
	}
	for (unsigned i = 0; i < reps; i++) {
		char *kv[] = { "ip", "netns", "exec", nsr, "conntrack", "-L", NULL };
		char *cv[] = { (char *)ctrack, "list", "--socket", d.sock, NULL };

		run(kv, NULL, &kw[i], NULL);
		run(cv, NULL, &cw[i], NULL);
	}
	bu_rec_begin(&r, a, "list", "kernel-vs-socket");
	bu_rec_int(&r, "kernel_entries", (uint64_t)got);
	bu_rec_int(&r, "ctrack_entries", k);
	bu_rec_int(&r, "kernel_max", (uint64_t)kmax);
	bu_rec_num(&r, "kernel_wall_s", med(kw, reps));
	bu_rec_num(&r, "ctrack_wall_s", med(cw, reps));
	bu_rec_num(&r, "ratio", med(kw, reps) / med(cw, reps));
	bu_rec_int(&r, "runs", reps);
	bu_rec_str(&r, "commands", "ip netns exec R conntrack -L > /dev/null | "
		   "ctrack list --socket S > /dev/null (alternating)");
	bu_rec_end(&r);
	daemon_down(&d);
down:
	snprintf(cmd, sizeof(cmd), "sh '%s' down %s >/dev/null 2>&1", script, prefix);
	if (system(cmd))
		fprintf(stderr, "ctrack-bench list: kernel: clean-up failed (%s*)\n", prefix);
	unlink(cap);
}

/* ---- burst latency while clients list ---- */

struct hist {
	uint64_t floor_ns[DM_HIST_MAX];
	uint64_t n[DM_HIST_MAX];
	unsigned len;
	uint64_t listed;       /* the control socket's lines listed so far */
};

/* The worker's histogram from `ctrack stats -o json`: a crude scan of
 * "burst_ns_histogram":[[F,N],...] (one worker). */
static int read_hist(const char *ctrack, const char *sock, struct hist *h)
{
	char cmd[PATH_MAX * 2 + 64], *buf = NULL, *p;
	size_t cap = 0, len = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "'%s' stats -o json --socket '%s'", ctrack, sock);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	for (;;) {
		if (len + 65536 > cap) {
			char *b = realloc(buf, cap = cap ? cap * 2 : 1 << 17);

			if (!b)
				break;
			buf = b;
		}
		size_t k = fread(buf + len, 1, cap - len - 1, f);

		if (!k)
			break;
		len += k;
	}
	pclose(f);
	if (!buf)
		return -1;
	buf[len] = 0;
	h->len = 0;
	p = strstr(buf, "\"burst_ns_histogram\":[");
	if (p) {
		unsigned long long a, b;
		int used;

		p += strlen("\"burst_ns_histogram\":[");
		while (h->len < DM_HIST_MAX && sscanf(p, "[%llu,%llu]%n", &a, &b, &used) == 2) {
			h->floor_ns[h->len] = a;
			h->n[h->len++] = b;
			p += used;
			if (*p == ',')
				p++;
		}
	}
	p = strstr(buf, "\"lines_listed\":");
	h->listed = p ? strtoull(p + 15, NULL, 10) : 0;
	free(buf);
	return 0;
}

/* Percentile @q of the histogram @b - @a (buckets by floor), as the
 * floor of the bucket it falls in. */
static double hist_pct(const struct hist *a, const struct hist *b, double q, uint64_t *total)
{
	uint64_t d[DM_HIST_MAX], sum = 0, acc = 0;

	for (unsigned i = 0; i < b->len; i++) {
		uint64_t before = 0;

		for (unsigned j = 0; j < a->len; j++)
			if (a->floor_ns[j] == b->floor_ns[i])
				before = a->n[j];
		d[i] = b->n[i] - before;
		sum += d[i];
	}
	*total = sum;
	for (unsigned i = 0; i < b->len; i++) {
		acc += d[i];
		if ((double)acc >= q * (double)sum)
			return (double)b->floor_ns[i];
	}
	return 0;
}

static void wl_latency(const struct bench_args *a, const char *ctrack, const char *dir,
		       uint64_t n, unsigned reps, uint64_t pps, unsigned clients)
{
	char cap[PATH_MAX], speed[32], maxs[64];
	double p50[2][MAXREP], p99[2][MAXREP], p999[2][MAXREP];
	uint64_t bursts[2] = { 0, 0 }, lists = 0;
	pid_t kids[64];
	struct dmn d;
	struct bu_rec r;

	if (clients > 64)
		clients = 64;
	snprintf(cap, sizeof(cap), "%s/lflows-%llu.pcap", dir, (unsigned long long)n);
	/* write_flows puts the frames 1 us apart: 1M packets a second at 1x */
	snprintf(speed, sizeof(speed), "%g", (double)pps / 1e6);
	if (write_flows(cap, n))
		return;
	snprintf(maxs, sizeof(maxs), "nf_conntrack_max=%llu", (unsigned long long)(2 * n + 1024));
	snprintf(d.sock, sizeof(d.sock), "%s/ctrack-lat.sock", dir);
	fflush(NULL);
	d.pid = fork();
	if (d.pid == 0) {
		int nul = open("/dev/null", O_WRONLY);

		dup2(nul, 1);
		dup2(nul, 2);
		execl(ctrack, ctrack, "daemon", "--replay", cap, "--loop", "--speed", speed,
		      "--socket", d.sock, "--set", "nf_conntrack_udp_timeout=3600", "--set",
		      "nf_conntrack_checksum=0", "--set", maxs, (char *)NULL);
		_exit(127);
	}
	{
		char cnt[PATH_MAX * 2 + 64];
		long have = 0;

		snprintf(cnt, sizeof(cnt), "'%s' count --socket '%s' 2>/dev/null", ctrack, d.sock);
		for (int i = 0; i < 6000 && (have = sh_num(cnt)) < (long)n; i++)
			bu_sleep_ns(50000000ull);
		if (have < (long)n) {
			fprintf(stderr, "ctrack-bench list: latency: the daemon holds %ld of %llu "
				"entries; skipped\n", have, (unsigned long long)n);
			daemon_down(&d);
			unlink(cap);
			return;
		}
	}
	for (unsigned k = 0; k < reps; k++)
		for (int loaded = 0; loaded < 2; loaded++) {
			struct hist h0, h1;
			unsigned nk = 0;

			if (loaded)
				for (; nk < clients; nk++) {
					kids[nk] = fork();
					if (kids[nk] == 0) {
						char *argv[] = { (char *)ctrack, "list", "--socket", d.sock,
								 NULL };

						for (;;)
							run(argv, NULL, NULL, NULL);
					}
				}
			bu_sleep_ns(500000000ull);   /* the clients under way */
			read_hist(ctrack, d.sock, &h0);
			bu_sleep_ns(3000000000ull);
			read_hist(ctrack, d.sock, &h1);
			for (unsigned i = 0; i < nk; i++) {
				kill(kids[i], SIGKILL);
				waitpid(kids[i], NULL, 0);
			}
			{
				uint64_t tot;

				p50[loaded][k] = hist_pct(&h0, &h1, 0.50, &tot);
				p99[loaded][k] = hist_pct(&h0, &h1, 0.99, &tot);
				p999[loaded][k] = hist_pct(&h0, &h1, 0.999, &tot);
				bursts[loaded] += tot;
				if (loaded)
					lists += h1.listed - h0.listed;
			}
		}
	bu_rec_begin(&r, a, "list", "burst-latency-while-listing");
	bu_rec_int(&r, "entries", n);
	bu_rec_int(&r, "pps", pps);
	bu_rec_int(&r, "listing_clients", clients);
	bu_rec_num(&r, "quiet_p50_ns", med(p50[0], reps));
	bu_rec_num(&r, "quiet_p99_ns", med(p99[0], reps));
	bu_rec_num(&r, "quiet_p999_ns", med(p999[0], reps));
	bu_rec_num(&r, "listing_p50_ns", med(p50[1], reps));
	bu_rec_num(&r, "listing_p99_ns", med(p99[1], reps));
	bu_rec_num(&r, "listing_p999_ns", med(p999[1], reps));
	bu_rec_num(&r, "p99_ratio", med(p99[1], reps) / med(p99[0], reps));
	bu_rec_int(&r, "bursts_quiet", bursts[0]);
	bu_rec_int(&r, "bursts_listing", bursts[1]);
	bu_rec_num(&r, "lines_listed_per_s", (double)lists / (3.0 * reps));
	bu_rec_int(&r, "runs", reps);
	bu_rec_str(&r, "timed", "worker burst histogram, 3 s phases alternating, medians");
	bu_rec_end(&r);
	daemon_down(&d);
	unlink(cap);
}

/* ---- read vs softflowd ---- */

static void read_one(const struct bench_args *a, const char *ctrack, const char *cap,
		     const char *what, const char *max, unsigned reps)
{
	double cs[MAXREP], cc[MAXREP], ws[MAXREP], wc[MAXREP];
	char cnt[PATH_MAX * 2 + 64];
	struct bu_rec r;
	unsigned runs = 0;
	long entries;

	snprintf(cnt, sizeof(cnt), "'%s' read --set nf_conntrack_checksum=0 --set '%s' '%s' | "
		 "wc -l", ctrack, max, cap);
	entries = sh_num(cnt);
	for (unsigned k = 0; k < reps; k++) {
		char *sv[] = { "softflowd", "-r", (char *)cap, "-d", NULL };
		char *cv[] = { (char *)ctrack, "read", "--set", "nf_conntrack_checksum=0", "--set",
			       (char *)max, (char *)cap, NULL };

		if (run(sv, NULL, &ws[runs], &cs[runs]) || run(cv, NULL, &wc[runs], &cc[runs]))
			continue;
		runs++;
	}
	if (!runs)
		return;
	bu_rec_begin(&r, a, "list", "read-vs-softflowd");
	bu_rec_str(&r, "capture", what);
	bu_rec_int(&r, "table_lines", entries > 0 ? (uint64_t)entries : 0);
	bu_rec_num(&r, "softflowd_cpu_s", med(cs, runs));
	bu_rec_num(&r, "ctrack_read_cpu_s", med(cc, runs));
	bu_rec_num(&r, "ratio", med(cs, runs) / med(cc, runs));
	bu_rec_num(&r, "softflowd_wall_s", med(ws, runs));
	bu_rec_num(&r, "ctrack_read_wall_s", med(wc, runs));
	bu_rec_int(&r, "runs", runs);
	bu_rec_str(&r, "commands", "softflowd -r F -d | ctrack read F > /dev/null "
		   "(the table printed; alternating; process cpu)");
	bu_rec_end(&r);
}

/* `ctrack read` with its table against softflowd, on a capture like the
 * issue's (about 1.1M packets of TCP conversations and UDP exchanges:
 * ctrack-bench read's synthetic capture) and on N one-packet flows (the
 * table as large as the capture: printing is most of the work). */
static void wl_read(const struct bench_args *a, const char *self, const char *ctrack,
		    const char *dir, uint64_t n, unsigned reps)
{
	char cap[PATH_MAX], gen[PATH_MAX * 3];

	if (system("command -v softflowd >/dev/null 2>&1")) {
		fprintf(stderr, "ctrack-bench list: read: softflowd is not installed; skipped\n");
		return;
	}
	snprintf(cap, sizeof(cap), "%s/conversations.pcap", dir);
	snprintf(gen, sizeof(gen), "'%s/ctrack-bench' read --synth-packets 1120000 --synth-out '%s' "
		 ">/dev/null 2>&1", self, cap);
	if (system(gen) == 0)
		read_one(a, ctrack, cap, "conversations-1.12M-packets", "nf_conntrack_max=262144",
			 reps);
	unlink(cap);
	snprintf(cap, sizeof(cap), "%s/rflows-%llu.pcap", dir, (unsigned long long)n);
	if (write_flows(cap, n) == 0)
		/* no maximum: every flow in the table, and in the listing */
		read_one(a, ctrack, cap, "one-packet-flows", "nf_conntrack_max=0", reps);
	unlink(cap);
}

int bench_list(const struct bench_args *a)
{
	bool quick = bu_flag(a, "quick");
	uint64_t n = bu_opt_u64(a, "entries", quick ? 100000 : 1000000);
	uint64_t kn = bu_opt_u64(a, "kentries", 0);
	unsigned reps = (unsigned)bu_opt_u64(a, "reps", quick ? 2 : 5);
	char self[PATH_MAX], ctrack[PATH_MAX + 32], repo[PATH_MAX], dir[] = "/tmp/ctk-blist-XXXXXX";
	uint64_t pps = bu_opt_u64(a, "pps", 200000);
	unsigned clients = (unsigned)bu_opt_u64(a, "clients", 50);
	bool all = true, w_printer = false, w_socket = false, w_kernel = false, w_read = false,
	     w_latency = false;
	ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (reps > MAXREP)
		reps = MAXREP;
	if (l <= 0)
		return 1;
	self[l] = 0;
	slash = strrchr(self, '/');
	*slash = 0;
	snprintf(ctrack, sizeof(ctrack), "%s/../tools/ctrack", self);
	snprintf(repo, sizeof(repo), "%s", CTRACK_SRC_DIR);
	for (int i = 0; i < a->argc; i++) {
		if (a->argv[i][0] == '-') {
			if (strcmp(a->argv[i], "--quick"))
				i++;
			continue;
		}
		all = false;
		w_printer |= !strcmp(a->argv[i], "printer");
		w_socket |= !strcmp(a->argv[i], "socket");
		w_kernel |= !strcmp(a->argv[i], "kernel");
		w_read |= !strcmp(a->argv[i], "read");
		w_latency |= !strcmp(a->argv[i], "latency");
	}
	if (!mkdtemp(dir))
		return 1;
	if (all || w_printer)
		wl_printer(a, n, reps);
	if (all || w_socket)
		wl_socket(a, ctrack, dir, n, reps);
	if (all || w_kernel)
		wl_kernel(a, ctrack, dir, repo, kn, reps);
	if (all || w_read)
		wl_read(a, self, ctrack, dir, n, reps);
	if (all || w_latency)
		wl_latency(a, ctrack, dir, n, reps, pps, clients);
	rmdir(dir);
	return 0;
}
