/* bench_ovs.c - (being written) */
#include <stdio.h>

#include "bench.h"

int bench_ovs(const struct bench_args *a)
{
	(void)a;
	fprintf(stderr, "ctrack-bench: ovs is not written yet\n");
	return 2;
}
