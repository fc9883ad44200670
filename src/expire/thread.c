/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * thread.c - the collector's own thread (ct_gc_start, ct_gc_stop).
 *
 * Scheduling follows the work: the thread runs one full pass in slices of
 * 2 ms, yielding the CPU between them, then sleeps until the earliest due
 * time the pass saw, within [min_interval, max_interval]; ct_gc_stop wakes
 * it.  It is an ordinary attached thread: offline (QSBR) while it sleeps.
 */
#include <errno.h>
#include <sched.h>
#include <time.h>

#include "base/rcu.h"
#include "expire/run.h"

static ct_time_ns default_clock(void *arg)
{
	(void)arg;
	return gc_mono_ns();
}

static void *gc_thread_main(void *arg)
{
	struct ct_table *t = arg;
	struct ct_thread *thr = ct_thread_attach(t);

	if (!thr)
		return NULL;
	while (!atomic_load(&t->gc_stop)) {
		ct_time_ns now = t->gc_clock(t->gc_clock_arg);
		struct ct_gc_result r;
		uint64_t next_due;
		uint64_t sleep_ns;
		struct timespec ts;

		/* one full pass in slices of 2 ms, yielding the CPU between */
		next_due = CT_DUE_NEVER;
		do {
			if (ct_gc_step(thr, now, 2000000, &r) < 0)
				break;
			if (r.next_due < next_due)
				next_due = r.next_due;
			if (!r.pass_done)
				sched_yield();
			now = t->gc_clock(t->gc_clock_arg);
		} while (!r.pass_done && !atomic_load(&t->gc_stop));
		/* plan the next pass for the earliest due time */
		sleep_ns = next_due > now ? next_due - now : 0;
		if (sleep_ns < t->gc.min_interval_ns)
			sleep_ns = t->gc.min_interval_ns;
		if (sleep_ns > t->gc.max_interval_ns)
			sleep_ns = t->gc.max_interval_ns;
		ct_thread_offline(thr);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += (time_t)(sleep_ns / 1000000000ull);
		ts.tv_nsec += (long)(sleep_ns % 1000000000ull);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&t->gc_sleep_lock);
		if (!atomic_load(&t->gc_stop))
			pthread_cond_timedwait(&t->gc_sleep_cond, &t->gc_sleep_lock, &ts);
		pthread_mutex_unlock(&t->gc_sleep_lock);
		ct_thread_online(thr);
	}
	ct_thread_detach(thr);
	return NULL;
}

int ct_gc_start(struct ct_table *t, ct_clock_fn clock, void *clock_arg)
{
	pthread_condattr_t ca;
	int err;

	if (t->gc_thread_on)
		return -EALREADY;
	/* liburcu's callback thread, from here (rcu.h says why) */
	ct_rcu_callback_thread_start(t->cfg.rcu);
	t->gc_clock = clock ? clock : default_clock;
	t->gc_clock_arg = clock_arg;
	atomic_store(&t->gc_stop, false);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_destroy(&t->gc_sleep_cond);
	pthread_cond_init(&t->gc_sleep_cond, &ca);
	pthread_condattr_destroy(&ca);
	err = pthread_create(&t->gc_thread, NULL, gc_thread_main, t);
	if (err)
		return -err;
	/* a name for top -H, ps -L and /proc/PID/task/TID/comm (a failure
	 * only leaves the thread unnamed) */
	(void)pthread_setname_np(t->gc_thread, "ct-gc");
	t->gc_thread_on = true;
	return 0;
}

int ct_gc_stop(struct ct_table *t)
{
	if (!t->gc_thread_on)
		return -ESRCH;
	pthread_mutex_lock(&t->gc_sleep_lock);
	atomic_store(&t->gc_stop, true);
	pthread_cond_broadcast(&t->gc_sleep_cond);
	pthread_mutex_unlock(&t->gc_sleep_lock);
	pthread_join(t->gc_thread, NULL);
	t->gc_thread_on = false;
	atomic_store(&t->gc_stop, false);
	return 0;
}

