/* bench_gc_busy.c - (being written) */
#include <stdio.h>

#include "bench.h"

int bench_gc_busy(const struct bench_args *a)
{
	(void)a;
	fprintf(stderr, "ctrack-bench: gc_busy is not written yet\n");
	return 2;
}
