/* bench_read.c - (being written) */
#include <stdio.h>

#include "bench.h"

int bench_read(const struct bench_args *a)
{
	(void)a;
	fprintf(stderr, "ctrack-bench: read is not written yet\n");
	return 2;
}
