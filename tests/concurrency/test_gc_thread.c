/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_gc_thread.c - the collector thread is the only thread named ct-gc.
 *
 * ct_gc_start names its thread "ct-gc" (top -H, ps -L, and the benchmarks
 * that read its run time from /proc/self/task/TID/schedstat).  A thread
 * inherits its creator's name, and liburcu starts its call_rcu callback
 * thread from the first thread that queues a callback: when that was the
 * collector (its first removals), the callback thread was a second
 * "ct-gc", whose run time - every freed entry of the process - a reader
 * of the name took for the collector's.  This runs in a process of its
 * own, so that no callback thread exists before the collector starts: a
 * fresh table, 1,000 flows due at 30 s, the collector started with a
 * clock at 100 s; once it has removed them all, one thread is named
 * ct-gc, and none after ct_gc_stop.
 *
 * "None" counts live threads only.  pthread_join returns when the kernel
 * clears the thread's tid word (mm_release, in do_exit), which comes
 * before the task is unhashed (exit_notify -> release_task): for that
 * moment the joined thread is still listed in /proc/self/task, under its
 * name, with PF_EXITING in the flags of its stat (set by exit_signals at
 * the start of do_exit).  Counting it made the case fail about once in
 * 30 runs on a loaded machine ("still named after ct_gc_stop").  A thread
 * that ct_gc_stop had not stopped is not exiting, and is still counted.
 */
#include "stress.h"

#include <dirent.h>

#define PF_EXITING 0x00000004u	/* include/linux/sched.h */

/* Whether task @tid of this process is exiting: the ninth field of its
 * stat (after the name in parentheses, which may hold spaces) is the
 * task's flags.  A task gone since readdir counts as exiting. */
static int task_exiting(const char *tid)
{
	char path[300], buf[1024];
	unsigned long flags = 0;
	const char *p;
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%s/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return 1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* ") S ppid pgrp session tty_nr tpgid flags" */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return 0;
	return (flags & PF_EXITING) != 0;
}

/* Threads named ct-gc that threads_named passed over as exiting. */
static unsigned exiting_seen;

/* Live threads of this process named @name (task_exiting says why not
 * the exiting ones). */
static unsigned threads_named(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	unsigned n = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = 0;
			if (strcmp(comm, name) == 0) {
				if (task_exiting(e->d_name))
					exiting_seen++;
				else
					n++;
			}
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

static ct_time_ns clock_100s(void *arg)
{
	(void)arg;
	return 100 * STRESS_SEC;
}

static void test_only_the_collector_thread_is_named_ct_gc(void **state)
{
	struct ct_table_config cfg;
	struct ct_table *t;
	struct ct_thread *thr;
	struct ct_verdict v;

	(void)state;
	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	assert_int_equal(ct_table_create(&cfg, &t), 0);
	ct_tsan_rcu_wrap(t);
	thr = ct_thread_attach(t);
	assert_non_null(thr);
	for (unsigned i = 0; i < 1000; i++) {
		struct ct_packet p;

		memset(&p, 0, sizeof(p));
		p.kind = CT_PKT_TRACKABLE;
		p.tuple.l3 = CT_L3_IPV4;
		p.tuple.l4 = IPPROTO_UDP;
		p.tuple.src.ip4 = htonl(0x0a000000u + i);
		p.tuple.dst.ip4 = htonl(0xc0000201u);
		p.tuple.sport = 1000;
		p.tuple.dport = 53;
		p.l3_len = 48;
		p.l4_len = 28;
		p.payload_len = 20;
		assert_int_equal(ct_process(thr, &p, 0, &v), 0);
		assert_int_equal(v.cls, CT_V_NEW);
	}
	assert_int_equal(ct_table_count(t), 1000);
	/* the packet thread goes offline: the collector's grace periods
	 * need not wait for it */
	ct_thread_detach(thr);
	assert_int_equal(threads_named("ct-gc"), 0);
	assert_int_equal(ct_gc_start(t, clock_100s, NULL), 0);
	for (int i = 0; i < 500 && ct_table_count(t) > 0; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	assert_int_equal(ct_table_count(t), 0);
	{
		struct timespec ts = { 0, 50 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	assert_int_equal(threads_named("ct-gc"), 1);
	assert_int_equal(ct_gc_stop(t), 0);
	assert_int_equal(threads_named("ct-gc"), 0);
	print_message("# %u exiting ct-gc thread%s passed over\n", exiting_seen,
		      exiting_seen == 1 ? "" : "s");
	ct_table_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_only_the_collector_thread_is_named_ct_gc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
