/*
 * main.c - ctrack-bench NAME [--json] [ARGS...]: run one benchmark.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"

static const struct bench_entry benches[] = {
	{ "gc-yield", "collector pass: yield every row vs at most once per ms", bench_gc_yield },
	{ "gc-idle", "idle collector: lock-always vs lock-nonempty (pf) vs due-time", bench_gc_idle },
	{ "gc-busy", "collector cost per expired entry, lateness of expiry", bench_gc_busy },
	{ "throughput", "packets/s per thread: established, new connections", bench_throughput },
	{ "memory", "bytes per connection at scale", bench_memory },
	{ "teardown", "namespace teardown: one by one vs batched", bench_teardown },
	{ "ovs", "side by side with Open vSwitch's userspace conntrack", bench_ovs },
	{ "read", "ctrack read on captures: packets per second", bench_read },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: ctrack-bench NAME [--json] [ARGS...]\n\nbenchmarks:\n");
	for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++)
		fprintf(out, "  %-12s %s\n", benches[i].name, benches[i].summary);
}

int main(int argc, char **argv)
{
	struct bench_args a = { false, 0, NULL };
	char *rest[64];
	int n = 0;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2;
	}
	for (int i = 2; i < argc && n < 63; i++) {
		if (!strcmp(argv[i], "--json"))
			a.json = true;
		else
			rest[n++] = argv[i];
	}
	rest[n] = NULL;
	a.argc = n;
	a.argv = rest;
	for (size_t i = 0; i < sizeof(benches) / sizeof(benches[0]); i++)
		if (!strcmp(benches[i].name, argv[1]))
			return benches[i].fn(&a);
	fprintf(stderr, "ctrack-bench: unknown benchmark '%s'\n", argv[1]);
	usage(stderr);
	return 1;
}
