/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * main.c - ctrack-bench NAME [--json] [OPTIONS...]: run one benchmark.
 *
 * The table below lists each benchmark's options (read by its
 * bench_<name>.c with bu_flag / bu_opt_*, or by its own parser), and the
 * arguments are checked against it before the benchmark starts: an
 * unknown option, a value option without its value, a value that is not
 * what the option takes or a stray word is a usage error (exit status 2)
 * instead of being ignored by a run that then takes minutes.
 * `ctrack-bench NAME --help` prints NAME's options and runs nothing;
 * --check stops after the checks (for scripts).
 *
 * The benchmark then gets its arguments in one shape: --json taken out,
 * "--opt=V" split into "--opt" "V" (bu_opt_* read both; bench_ovs.c's
 * own parser only the second), and counts written out in decimal ("1M"
 * becomes "1000000"), so that a benchmark reading them with strtoul
 * (bench_ovs.c) gets what bu_count would have read.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_util.h"

#define QUICK(what) { "quick", BV_FLAG, NULL, what, 0, 0 }

static const struct bench_opt gc_yield_opts[] = {
	{ "passes", BV_COUNT, "N", "full passes per policy (default 2000; --quick 300)", 1, 1000000000 },
	{ "entries", BV_COUNT, "N", "established connections, none due (default 10000)", 0, 0 },
	{ "rows", BV_COUNT, "N", "table rows (default 10000; rounded up to a multiple of 64)", 0, 0 },
	{ "lock", BV_WORD, "lock-nonempty|due-rows|lock-always", "run only this lock policy", 0, 0 },
	{ "rcu", BV_WORD, "memb|qsbr", "run only this RCU flavour", 0, 0 },
	QUICK("300 passes"),
	{ .name = NULL }
};

static const struct bench_opt gc_idle_opts[] = {
	{ "conns", BV_COUNT, "N", "ESTABLISHED connections in the table (default 1M)", 0, 0 },
	{ "seconds", BV_COUNT, "S", "wall-clock seconds per variant (default 10; --quick 3)", 1, 86400 },
	QUICK("3 s per variant"),
	{ .name = NULL }
};

static const struct bench_opt gc_busy_opts[] = {
	{ "conns", BV_COUNT, "N", "UDP flows in the table (default 1M)", 0, 0 },
	{ "seconds", BV_COUNT, "S", "live: seconds measured (default 10; --quick 4)", 1, 86400 },
	{ "interval", BV_COUNTS, "MS,...", "driven: ms between passes (default 10,100,1000; --quick 10,100)", 1, 86400000 },
	{ "driven", BV_FLAG, NULL, "run only the driven-clock variants", 0, 0 },
	{ "live", BV_FLAG, NULL, "run only the library's collector thread (live)", 0, 0 },
	{ "finder", BV_WORDS, "scan,wheel", "how the collector finds due rows: the bounds scan (CT_GC_LOCK_DUE), the wheel (CT_GC_LOCK_WHEEL) (default scan,wheel)", 0, 0 },
	{ "rounds", BV_COUNT, "N", "driven: 5 s phases without events, the figure their median (1..16; default 5; --quick 1)", 1, 16 },
	QUICK("two intervals, 4 s live, 1 round"),
	{ .name = NULL }
};

static const struct bench_opt throughput_opts[] = {
	{ "flows", BV_COUNTS, "N,...", "established flows in the table (default 1k,1M,10M; --quick 1k,1M)", 0, 0 },
	{ "threads", BV_COUNTS, "N,...", "packet threads, 1..16 each (default 1,2)", 1, 16 },
	{ "pop", BV_WORDS, "uniform,zipf", "which flow sends next, est (default uniform,zipf)", 0, 0 },
	{ "gc", BV_WORDS, "off,due-time,wheel,lock-nonempty,alternating", "collector variants (default off,due-time,wheel,alternating)", 0, 0 },
	{ "path", BV_WORDS, "parsed,frames", "packets built, or frames parsed first (default parsed,frames)", 0, 0 },
	{ "work", BV_WORDS, "est,new-udp,new-tcp", "workloads (default est,new-udp,new-tcp)", 0, 0 },
	{ "acct", BV_WORDS, "off,on", "table settings to run: without and with per-connection counters (default off,on; on runs est only)", 0, 0 },
	{ "packets", BV_COUNT, "N", "est: packets per thread (default 8M; --quick 2M)", 0, 0 },
	{ "new", BV_COUNT, "N", "new-*: connections per thread (default 1M; --quick 250k)", 0, 0 },
	{ "zipf-s100", BV_COUNT, "N", "the Zipf exponent times 100 (default 100: s = 1)", 1, 1000 },
	{ "rounds", BV_COUNT, "N", "rounds of the est and new-udp rows, 1 and 2 threads alternating (1..16; default 5; --quick 1)", 1, 16 },
	QUICK("smaller counts, no 10M table, 1 round"),
	{ .name = NULL }
};

static const struct bench_opt memory_opts[] = {
	{ "conns", BV_COUNT, "N", "connections per variant (default 10M; --quick 1M)", 0, 0 },
	{ "turnovers", BV_COUNT, "N", "churn: times the table is replaced (default 3)", 0, 1000 },
	{ "finder", BV_WORDS, "scan,wheel", "how the collector finds due entries, each runs every variant (default wheel, the library's; scan keeps no handles)", 0, 0 },
	QUICK("1M connections"),
	{ .name = NULL }
};

static const struct bench_opt teardown_opts[] = {
	{ "ns", BV_COUNT, "K", "namespaces torn down (default 1000; --quick 200)", 1, 65535 },
	{ "per", BV_COUNT, "N", "connections per namespace (default 1000)", 0, 0 },
	QUICK("200 namespaces, no 10,000 step, 1M conns for the empty one"),
	{ .name = NULL }
};

static const struct bench_opt ovs_opts[] = {
	{ "repeat", BV_COUNT, "N", "alternating runs per comparison (median; default 5, at most 31)", 1, 31 },
	{ "pkts", BV_COUNT, "N", "packets per thread for bench (default 4M)", 0, 0 },
	{ "sizes", BV_COUNTS, "N,...", "flows for large (default 100k,1M,3M; at most 8)", 0, 0 },
	{ "ksizes", BV_COUNTS, "N,...", "table sizes for kernel (default 100k,250k; at most 8)", 0, 0 },
	{ "synth", BV_COUNT, "N", "TCP connections in the synthetic capture (default 100k)", 0, 0 },
	{ "acct", BV_FLAG, NULL, "ctrack keeps packet and byte counters (bench, large)", 0, 0 },
	QUICK("one run each, smaller sizes (a smoke test)"),
	{ .name = NULL }
};

static const struct bench_opt read_opts[] = {
	{ "pcaps", BV_TEXT, "DIR", "where the default captures are (default ../shared/pcaps)", 0, 0 },
	{ "ctrack", BV_TEXT, "PATH", "the ctrack tool run (default ../tools/ctrack from this binary)", 0, 0 },
	{ "synth-packets", BV_COUNT, "N", "packets in the synthetic capture (default 2M; --quick 300k)", 0, 0 },
	{ "reps", BV_COUNT, "N", "runs per variant, the best reported (default 3; --quick 1)", 1, 1000 },
	{ "synth-out", BV_TEXT, "PATH", "only write the synthetic capture to PATH", 0, 0 },
	QUICK("one run each, 300k synthetic packets"),
	{ .name = NULL }
};

static const struct bench_opt list_opts[] = {
	{ "entries", BV_COUNT, "N", "entries listed, flows read (default 1M; --quick 100k)", 1, 100000000 },
	{ "kentries", BV_COUNT, "K", "kernel: its entries (default, and at most, 90% of its nf_conntrack_max)", 1, 100000000 },
	{ "reps", BV_COUNT, "N", "runs per variant, median (default 5; --quick 2; at most 31)", 1, 31 },
	{ "pps", BV_COUNT, "N", "latency: packets a second the looped replay sends (default 200k)", 1000, 10000000 },
	{ "clients", BV_COUNT, "N", "latency: clients listing in a loop (default 50, at most 64)", 1, 64 },
	QUICK("100k entries, 2 runs"),
	{ .name = NULL }
};

static const struct bench_opt live_opts[] = {
	{ "start", BV_COUNT, "PPS", "the first step's rate (default 25k; it doubles)", 1000, 100000000 },
	{ "flows", BV_COUNT, "N", "UDP flows the sender spreads its packets over (default 1000)", 1, 60000 },
	QUICK("2 s steps"),
	{ .name = NULL }
};

static const struct bench_opt sync_opts[] = {
	{ "conns", BV_COUNT, "N", "connections of the codec, two-node and side-by-side runs (default 100k)", 1, 10000000 },
	{ "resync", BV_COUNT, "N", "entries of the full resync (default 1M; --quick 100k)", 1, 10000000 },
	{ "conntrackd", BV_FLAG, NULL, "also run conntrackd 1.4.7 side by side in namespaces (root)", 0, 0 },
	{ "peer", BV_TEXT, "PATH", "the ctsync_peer program (default: the build's tests/sync/ctsync_peer)", 0, 0 },
	QUICK("a 100k-entry resync"),
	{ .name = NULL }
};

static const struct bench_opt nat_search_opts[] = {
	{ "fill-pct", BV_COUNT, "PCT", "share of the port class in use (default 99)", 1, 100 },
	{ "conns", BV_COUNT, "N", "steady: new connections per variant (default 200k; --quick 20k)", 1, 0 },
	{ "worst-rounds", BV_COUNT, "N", "worst case: searches timed (default 20k; --quick 2k)", 1, 0 },
	QUICK("20k connections, 2k worst-case rounds"),
	{ .name = NULL }
};

static const struct bench_opt record_opts[] = {
	{ "entries", BV_COUNT, "N", "entries in the table (default 1M; --quick 200k)", 1, 20000000 },
	{ "rounds", BV_COUNT, "N", "rounds of each variant, the median reported (default 5; --quick 2)", 1, 16 },
	{ "dir", BV_TEXT, "DIR", "where the state file is written (default /tmp)", 0, 0 },
	QUICK("200k entries, 2 rounds"),
	{ .name = NULL }
};

static const struct bench_opt nat_opts[] = {
	{ "conns", BV_COUNT, "N", "connections per table (default 1M; --quick 100k)", 1, 0 },
	{ "lookups", BV_COUNT, "N", "established packets per variant (default 2M; --quick 500k)", 1, 0 },
	{ "repeat", BV_COUNT, "N", "alternating runs with OVS, medians compared (default 3; --quick 1)", 1, 31 },
	{ "no-ovs", BV_FLAG, NULL, "ctrack alone (no Open vSwitch peer)", 0, 0 },
	{ "regime", BV_WORDS, "growth,steady", "the tables' state when new connections are timed: fresh (growth) or kept at N entries that come and go (steady) (default growth,steady)", 0, 0 },
	{ "workload", BV_WORD, "dense|spread", "the flows: dense, 4,096 consecutive client ports to one server (OVS's frames; default), or spread, 256 ports a client over the port space to 64 servers (ctrack alone: implies --no-ovs)", 0, 0 },
	{ "fill-pct", BV_COUNT, "PCT", "exhaustion: share of the 10,000-port range in use (default 99)", 1, 99 },
	{ "exhaustion-conns", BV_COUNT, "N", "exhaustion: new connections per search (default 20k; --quick 2k)", 1, 0 },
	QUICK("100k connections, one run"),
	{ .name = NULL }
};

static const struct bench_opt miss_opts[] = {
	{ "mib", BV_COUNT, "N", "the chased buffer's size in MiB (default 256; --quick 64)", 1, 65536 },
	{ "loads", BV_COUNT, "N", "loads per chase (default 4M; --quick 1M)", 1000, 0 },
	{ "repeat", BV_COUNT, "N", "runs of each chase, the least kept (default 3; --quick 1)", 1, 31 },
	QUICK("64 MiB, 1M loads, one run"),
	{ .name = NULL }
};

static const struct bench_entry benches[] = {
	{ "gc-yield", "collector pass: yield every row vs at most once per ms",
	  bench_gc_yield, gc_yield_opts, NULL, NULL, NULL },
	{ "gc-idle", "idle collector: lock-always vs lock-nonempty (pf) vs due-time",
	  bench_gc_idle, gc_idle_opts, NULL, NULL, NULL },
	{ "gc-busy", "collector cost per expired entry, lateness of expiry",
	  bench_gc_busy, gc_busy_opts, NULL, NULL, NULL },
	{ "throughput", "packets/s per thread: established, new connections",
	  bench_throughput, throughput_opts, NULL, NULL, NULL },
	{ "memory", "bytes per connection at scale",
	  bench_memory, memory_opts, NULL, NULL, NULL },
	{ "teardown", "namespace teardown: one by one vs batched",
	  bench_teardown, teardown_opts, NULL, NULL, NULL },
	{ "ovs", "side by side with Open vSwitch's userspace conntrack",
	  bench_ovs, ovs_opts, "WORKLOAD", "bench|large|pcap|kernel|flows|all",
	  "workloads: bench large pcap kernel flows all (default: all)" },
	{ "read", "ctrack read on captures: packets per second",
	  bench_read, read_opts, "FILE", NULL,
	  "captures to read instead of the default list" },
	{ "list", "listing at memory speed: printer, daemon socket, kernel, read vs softflowd",
	  bench_list, list_opts, "WORKLOAD", "printer|socket|kernel|read|latency",
	  "workloads: printer socket kernel read latency (default: all)" },
	{ "live", "the daemon's capacity on a veth; CPU per packet against softflowd, nfpcapd, ctrack read",
	  bench_live, live_opts, NULL, NULL, NULL },
	{ "sync", "conntrackd's sync protocol: codec, nodes, 1M resync, conntrackd side by side",
	  bench_sync, sync_opts, NULL, NULL, NULL },
	{ "nat-search", "NAT port search in a nearly full range: the kernel's 248 probes vs the exact port map",
	  bench_nat_search, nat_search_opts, NULL, NULL, NULL },
	{ "record", "whole entries out and in, the state file: export, import, save, restore at 1M",
	  bench_record, record_opts, NULL, NULL, NULL },
	{ "miss", "one cache miss's cost: a pointer chase, huge pages and 4k, 1-8 chases at once",
	  bench_miss, miss_opts, NULL, NULL, NULL },
	{ "nat", "NAT through the table: established and new NATed vs plain, vs Open vSwitch's ct(commit,nat), exhaustion",
	  bench_nat, nat_opts, NULL, NULL, NULL },
};

#define N_BENCHES (sizeof(benches) / sizeof(benches[0]))

static void usage(FILE *out)
{
	fprintf(out, "usage: ctrack-bench NAME [--json] [--check] [OPTIONS...]\n"
		"       ctrack-bench NAME --help     NAME's options\n\nbenchmarks:\n");
	for (size_t i = 0; i < N_BENCHES; i++)
		fprintf(out, "  %-12s %s\n", benches[i].name, benches[i].summary);
}

/* One line of NAME --help: "  --name ARG", then the help at column 24
 * (or on the next line when the left part is longer). */
static void help_line(const char *left, const char *help)
{
	int w = printf("  %s", left);

	if (w > 22)
		printf("\n%24s", "");
	else
		printf("%*s", 24 - w, "");
	printf("%s\n", help);
}

static void bench_help(const struct bench_entry *b)
{
	char left[128];

	printf("usage: ctrack-bench %s [--json] [--check] [OPTIONS...]%s%s%s\n%s\n\n"
	       "options:\n", b->name, b->operands ? " [" : "",
	       b->operands ? b->operands : "", b->operands ? "...]" : "", b->summary);
	for (const struct bench_opt *o = b->opts; o->name; o++) {
		snprintf(left, sizeof(left), "--%s%s%s", o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
		help_line(left, o->help);
	}
	help_line("--json", "one JSON object per result, else a readable table");
	help_line("--check", "check the arguments and exit without running");
	help_line("-h, --help", "this help");
	if (b->operands) {
		snprintf(left, sizeof(left), "%s...", b->operands);
		help_line(left, b->operands_help);
	}
	printf("counts: 1000, 10k, 1.5M, 2G; lists: comma-separated (1k,1M)\n");
}

static void __attribute__((noreturn, format(printf, 2, 3)))
usage_error(const struct bench_entry *b, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ctrack-bench %s: ", b->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see ctrack-bench %s --help)\n", b->name);
	exit(2);
}

/* Whether the @len bytes at @w are one of @words ('|' or ',' between). */
static bool word_in(const char *w, size_t len, const char *words)
{
	while (*words) {
		size_t k = strcspn(words, "|,");

		if (k == len && !strncmp(w, words, len))
			return true;
		words += k;
		if (*words)
			words++;
	}
	return false;
}

/* A count outside option @o's range is a usage error. */
static void check_range(const struct bench_entry *b, const struct bench_opt *o,
			uint64_t k)
{
	if (o->hi && (k < o->lo || k > o->hi))
		usage_error(b, "--%s: %" PRIu64 " is out of range (%" PRIu64 "..%" PRIu64 ")",
			    o->name, k, o->lo, o->hi);
}

/* Check @v as option @o's value; returns what the benchmark gets (counts
 * in decimal). */
static char *check_value(const struct bench_entry *b, const struct bench_opt *o,
			 char *v)
{
	uint64_t *c;
	size_t len, n;
	char *s, *out;

	if (o->val == BV_COUNT) {
		uint64_t k = bu_count(o->name, v);

		check_range(b, o, k);
		out = malloc(24);
		if (!out)
			abort();
		snprintf(out, 24, "%" PRIu64, k);
		return out;
	}
	if (o->val == BV_COUNTS) {
		n = bu_count_list(o->name, v, NULL, 0);
		out = malloc(n * 21);
		c = malloc(n * sizeof(*c));
		if (!out || !c)
			abort();
		bu_count_list(o->name, v, c, (unsigned)n);
		s = out;
		for (size_t i = 0; i < n; i++) {
			check_range(b, o, c[i]);
			s += sprintf(s, "%s%" PRIu64, i ? "," : "", c[i]);
		}
		free(c);
		return out;
	}
	if (!*v)
		usage_error(b, "--%s needs a value", o->name);
	if (o->val == BV_WORD || o->val == BV_WORDS)
		for (s = v; ; s += len + 1) {
			len = o->val == BV_WORDS ? strcspn(s, ",") : strlen(s);
			if (!word_in(s, len, o->arg))
				usage_error(b, "--%s: '%.*s' is not one of %s", o->name,
					    (int)len, s, o->arg);
			if (!s[len])
				break;
		}
	return v;
}

static const struct bench_opt *find_opt(const struct bench_entry *b,
					const char *name, size_t len)
{
	for (const struct bench_opt *o = b->opts; o->name; o++)
		if (strlen(o->name) == len && !strncmp(o->name, name, len))
			return o;
	return NULL;
}

/*
 * Check NAME's arguments (argv[0..argc), after NAME) and put what the
 * benchmark gets in @a.  Exits 0 after help, 2 on a usage error.  Returns
 * whether --check asked to stop here.
 */
static bool parse_args(const struct bench_entry *b, int argc, char **argv,
		       struct bench_args *a)
{
	char **rest = calloc(2 * (size_t)argc + 1, sizeof(*rest));
	const struct bench_opt *o;
	uint64_t seen = 0;      /* by index: the tables hold under 64 */
	bool check = false;
	int n = 0;

	if (!rest)
		abort();
	a->argv = rest;
	/* help first: a typo next to --help gets the help */
	for (int i = 0; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			bench_help(b);
			exit(0);
		}
	for (int i = 0; i < argc; i++) {
		char *s = argv[i], *eq, *v;
		size_t len;

		if (s[0] != '-' || !s[1]) {
			/* a word that is no option's value */
			if (!b->operands)
				usage_error(b, "unexpected argument '%s'", s);
			if (b->words && !word_in(s, strlen(s), b->words))
				usage_error(b, "unknown %s '%s'", b->operands, s);
			rest[n++] = s;
			continue;
		}
		if (s[1] != '-')
			usage_error(b, "unknown option '%s'", s);
		eq = strchr(s, '=');
		len = eq ? (size_t)(eq - s - 2) : strlen(s + 2);
		if (!eq && !strcmp(s, "--json")) {
			a->json = true;
			continue;
		}
		if (!eq && !strcmp(s, "--check")) {
			check = true;
			continue;
		}
		o = find_opt(b, s + 2, len);
		if (!o)
			usage_error(b, "unknown option '%.*s'", (int)len + 2, s);
		if (seen & 1ull << (o - b->opts))
			usage_error(b, "--%s given twice", o->name);
		seen |= 1ull << (o - b->opts);
		if (o->val == BV_FLAG) {
			if (eq)
				usage_error(b, "--%s takes no value", o->name);
			rest[n++] = s;
			continue;
		}
		/* as opt_find in bench_util.c: "--opt=V", or "--opt V" when V
		 * does not start with "--" */
		if (eq) {
			v = eq + 1;
		} else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2)) {
			v = argv[++i];
		} else {
			usage_error(b, "--%s needs a value", o->name);
		}
		v = check_value(b, o, v);
		if (eq && !strncmp(v, "--", 2)) {
			/* only "--opt=--x" carries it to bu_opt_* */
			rest[n++] = s;
			continue;
		}
		if (eq)
			*eq = '\0';
		rest[n++] = s;
		rest[n++] = v;
	}
	rest[n] = NULL;
	a->argc = n;
	return check;
}

int main(int argc, char **argv)
{
	/* static: what the benchmark gets stays reachable to the end */
	static struct bench_args a;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2;
	}
	for (size_t i = 0; i < N_BENCHES; i++) {
		if (strcmp(benches[i].name, argv[1]))
			continue;
		if (parse_args(&benches[i], argc - 2, argv + 2, &a))
			return 0;
		return benches[i].fn(&a);
	}
	fprintf(stderr, "ctrack-bench: unknown benchmark '%s'\n", argv[1]);
	usage(stderr);
	return 1;
}
