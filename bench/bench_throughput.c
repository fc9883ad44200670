/* bench_throughput.c - (being written) */
#include <stdio.h>

#include "bench.h"

int bench_throughput(const struct bench_args *a)
{
	(void)a;
	fprintf(stderr, "ctrack-bench: throughput is not written yet\n");
	return 2;
}
