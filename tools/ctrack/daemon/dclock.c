/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dclock.c - the daemon's clock: CLOCK_MONOTONIC for the table, and the
 * wall clock's offset from it for what people read (daemon.h, "Time").
 *
 * The offset is taken as the midpoint of a monotonic read on each side of
 * a realtime read, so that a preemption between the two reads does not
 * put a whole time slice into it.
 */
#include <time.h>

#include "daemon.h"

static int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

ct_time_ns dclock_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ct_time_ns)ts_ns(&ts);
}

int64_t dclock_wall_offset(void)
{
	struct timespec a, r, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &b);
	return ts_ns(&r) - (ts_ns(&a) + (ts_ns(&b) - ts_ns(&a)) / 2);
}
