/* bench_teardown.c - (being written) */
#include <stdio.h>

#include "bench.h"

int bench_teardown(const struct bench_args *a)
{
	(void)a;
	fprintf(stderr, "ctrack-bench: teardown is not written yet\n");
	return 2;
}
