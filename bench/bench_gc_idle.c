/* bench_gc_idle.c - (being written) */
#include <stdio.h>

#include "bench.h"

int bench_gc_idle(const struct bench_args *a)
{
	(void)a;
	fprintf(stderr, "ctrack-bench: gc_idle is not written yet\n");
	return 2;
}
