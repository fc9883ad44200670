/* bench_gc_yield.c - (being written) */
#include <stdio.h>

#include "bench.h"

int bench_gc_yield(const struct bench_args *a)
{
	(void)a;
	fprintf(stderr, "ctrack-bench: gc_yield is not written yet\n");
	return 2;
}
