/* bench_memory.c - (being written) */
#include <stdio.h>

#include "bench.h"

int bench_memory(const struct bench_args *a)
{
	(void)a;
	fprintf(stderr, "ctrack-bench: memory is not written yet\n");
	return 2;
}
