/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_teardown.c - destroying many namespaces at once.
 *
 * Linux's nf_conntrack_cleanup_net_list() halved the teardown of 1,000
 * network namespaces (10.3 s to 5.7 s) by unlinking their connections in
 * one sweep and paying one RCU grace period for the whole list.  Here:
 * 1,000 namespaces of 1,000 UDP connections each (1M in all) are torn
 * down while another thread keeps processing bursts of established
 * traffic in namespace 0 (so grace periods have a real reader to wait
 * for), in these variants, each on a freshly populated set:
 *   one-by-one       1,000 calls of ct_ns_destroy(one id, CT_NS_SYNC): a
 *                    grace period per namespace, as the kernel did before
 *   one-by-one-deferred  the same without waiting for grace periods
 *   one-by-one-sweep the kernel's way before the batched cleanup: each
 *                    call sweeps the whole table for its namespace
 *                    (nf_ct_iterate_cleanup_net walks every bucket) and
 *                    waits its own grace period (CT_NS_SWEEP|CT_NS_SYNC)
 *   batched          one call with the 1,000 ids, deferred reclaim (the
 *                    caller does not wait for the grace period)
 *   batched-sync     the same, waiting for the one grace period
 *   batched-walk / batched-sweep  the two unlinking strategies forced
 *                    (walk each namespace's slab / sweep every row once)
 * then a batch's time as the batch grows (K = 10 ... 10,000 namespaces of
 * 100 connections each), and the time to destroy an EMPTY namespace while
 * the table holds 3M connections (which should not depend on the table),
 * next to ct_table_flush() of that empty zone (which walks the zone's own
 * slabs, not the rows).
 *
 * Reported: ms (wall time of the call(s)) and cpu_ms (the calling
 * thread's CPU time: on a shared machine the wall time also counts the
 * time other processes held the core), conns removed, the packet
 * thread's rate during the call as a share of its rate before.
 *
 * Options: --ns K (1000), --per N (1000), --quick (K = 200, no 10,000 step,
 * 1M instead of 3M for the empty-namespace case).
 */
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define BG_FLOWS 10000
#define EMPTY_NS 65000

struct bg {
	struct ct_table *t;
	pthread_t th;
	_Atomic bool stop;
	_Atomic uint64_t packets;
};

/* The other thread: bursts of established TCP traffic in namespace 0. */
static void *bg_main(void *arg)
{
	struct bg *bg = arg;
	struct ct_thread *thr = ct_thread_attach(bg->t);
	uint32_t *cnt = calloc(BG_FLOWS, sizeof(*cnt));
	struct ct_packet pk[CT_BURST_MAX];
	const struct ct_packet *ptr[CT_BURST_MAX];
	struct ct_verdict v[CT_BURST_MAX];
	uint64_t seed = 7;

	bu_fill_tcp(thr, 0, BG_FLOWS, 0, bu_mono_ns());
	for (uint32_t f = 0; f < BG_FLOWS; f++)
		cnt[f] = 2;
	for (unsigned j = 0; j < CT_BURST_MAX; j++)
		ptr[j] = &pk[j];
	while (!atomic_load_explicit(&bg->stop, memory_order_relaxed)) {
		for (unsigned j = 0; j < CT_BURST_MAX; j++) {
			uint32_t f = (uint32_t)((bu_rand(&seed) >> 32) * BG_FLOWS >> 32);
			struct ct_tuple t;

			bu_flow_tuple(&t, f, IPPROTO_TCP, 0);
			bu_tcp_established(&pk[j], &t, cnt[f]++);
		}
		ct_process_burst(thr, ptr, CT_BURST_MAX, bu_mono_ns(), v);
		atomic_fetch_add_explicit(&bg->packets, CT_BURST_MAX, memory_order_relaxed);
	}
	free(cnt);
	ct_thread_detach(thr);
	return NULL;
}

/* Packets per second of the background thread over @ns nanoseconds. */
static double bg_rate(struct bg *bg, uint64_t ns)
{
	uint64_t p0 = atomic_load(&bg->packets);

	bu_sleep_ns(ns);
	return (double)(atomic_load(&bg->packets) - p0) * 1e9 / (double)ns;
}

static uint32_t next_flow = BG_FLOWS + 16;

/* Namespaces first..first+k-1, @per UDP connections each. */
static void populate(struct ct_table *t, struct ct_thread *thr, uint16_t first,
		     unsigned k, uint64_t per)
{
	for (unsigned i = 0; i < k; i++) {
		uint16_t id = (uint16_t)(first + i);

		if (ct_ns_create(t, id, NULL) < 0) {
			fprintf(stderr, "teardown: ct_ns_create(%u) failed\n", id);
			exit(1);
		}
		bu_fill_udp(thr, next_flow, per, id, bu_mono_ns(), false);
		next_flow += (uint32_t)per;
	}
}

struct result {
	double ms;
	double cpu_ms;     /* the calling thread's CPU time */
	long removed;
	double bg_share;   /* background rate during the call / before */
};

/* Destroy namespaces first..first+k-1 as @how says; times the calls and
 * the background thread's progress meanwhile. */
static struct result destroy(struct ct_thread *thr, struct bg *bg,
			     uint16_t first, unsigned k, bool batched,
			     unsigned flags, double bg_before)
{
	uint16_t *ids = malloc(k * sizeof(*ids));
	struct result r = { 0, 0, 0, 0 };
	uint64_t p0, t0, t1, c0;

	for (unsigned i = 0; i < k; i++)
		ids[i] = (uint16_t)(first + i);
	p0 = atomic_load(&bg->packets);
	c0 = bu_thread_cpu_ns();
	t0 = bu_mono_ns();
	if (batched) {
		r.removed = ct_ns_destroy(thr, ids, k, t0, flags);
	} else {
		for (unsigned i = 0; i < k; i++) {
			long n = ct_ns_destroy(thr, &ids[i], 1, bu_mono_ns(), flags);
			if (n > 0)
				r.removed += n;
		}
	}
	t1 = bu_mono_ns();
	r.cpu_ms = (double)(bu_thread_cpu_ns() - c0) / 1e6;
	r.ms = (double)(t1 - t0) / 1e6;
	if (bg_before > 0 && t1 > t0)
		r.bg_share = (double)(atomic_load(&bg->packets) - p0) * 1e9 /
			     (double)(t1 - t0) / bg_before;
	free(ids);
	return r;
}

static void report(const struct bench_args *a, const char *variant, unsigned k,
		   uint64_t per, const struct result *r, double ratio)
{
	struct bu_rec rec;

	bu_rec_begin(&rec, a, "teardown", variant);
	bu_rec_int(&rec, "namespaces", k);
	bu_rec_int(&rec, "conns_per_ns", per);
	bu_rec_int(&rec, "removed", (uint64_t)(r->removed > 0 ? r->removed : 0));
	bu_rec_num(&rec, "ms", r->ms);
	bu_rec_num(&rec, "cpu_ms", r->cpu_ms);
	bu_rec_num(&rec, "ns_per_conn", r->removed > 0 ? r->ms * 1e6 / (double)r->removed : 0);
	bu_rec_num(&rec, "us_per_ns", r->ms * 1000.0 / k);
	if (r->bg_share > 0)
		bu_rec_num(&rec, "bg_rate_share", r->bg_share);
	if (ratio > 0)
		bu_rec_num(&rec, "ratio", ratio);
	bu_rec_end(&rec);
}

int bench_teardown(const struct bench_args *a)
{
	bool quick = bu_flag(a, "quick");
	unsigned k = (unsigned)bu_opt_u64(a, "ns", quick ? 200 : 1000);
	uint64_t per = bu_opt_u64(a, "per", 1000);
	uint64_t big = quick ? 1000000 : 3000000;
	static const struct {
		const char *name;
		bool batched;
		unsigned flags;
	} v[] = {
		{ "one-by-one", false, CT_NS_SYNC },
		{ "one-by-one-deferred", false, 0 },
		{ "batched", true, 0 },
		{ "batched-sync", true, CT_NS_SYNC },
		{ "batched-walk", true, CT_NS_WALK },
		{ "batched-sweep", true, CT_NS_SWEEP },
		{ "one-by-one-sweep", false, CT_NS_SYNC | CT_NS_SWEEP },
	};
	static const unsigned ks[] = { 10, 100, 1000, 10000 };
	struct ct_table_config cfg;
	struct ct_table *t;
	struct ct_thread *thr;
	struct bg bg;
	double one_by_one = 0, rate;
	struct result r;

	if (k == 0 || k > 60000) {
		fprintf(stderr, "teardown: --ns must be 1..60000\n");
		return 2;
	}
	/* rows for the largest population without a resize while timing */
	bu_config(&cfg, (big + BG_FLOWS) / 3, false);
	t = bu_table(&cfg);
	memset(&bg, 0, sizeof(bg));
	bg.t = t;
	pthread_create(&bg.th, NULL, bg_main, &bg);
	thr = ct_thread_attach(t);
	rate = bg_rate(&bg, 200000000ull);
	bu_note(a, "teardown: background thread at %.2f Mpps before", rate / 1e6);

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		populate(t, thr, 1, k, per);
		rate = bg_rate(&bg, 100000000ull);
		r = destroy(thr, &bg, 1, k, v[i].batched, v[i].flags, rate);
		if (i == 0)
			one_by_one = r.ms;
		report(a, v[i].name, k, per, &r, i == 0 ? 0 : one_by_one / r.ms);
		/* let deferred reclaim finish before the next population */
		bu_sleep_ns(200000000ull);
	}

	for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		char name[32];

		if (quick && ks[i] > 1000)
			continue;
		populate(t, thr, 1, ks[i], 100);
		rate = bg_rate(&bg, 100000000ull);
		r = destroy(thr, &bg, 1, ks[i], true, 0, rate);
		snprintf(name, sizeof(name), "batch-k%u", ks[i]);
		report(a, name, ks[i], 100, &r, 0);
		bu_sleep_ns(200000000ull);
	}

	/* an empty namespace next to a big table */
	populate(t, thr, 1, 3, big / 3);
	{
		static const struct { const char *name; unsigned flags; int flush; } e[] = {
			{ "empty-ns-destroy", 0, 0 },
			{ "empty-ns-destroy-sync", CT_NS_SYNC, 0 },
			{ "empty-ns-flush-zone", 0, 1 },
		};

		for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++) {
			struct bu_rec rec;
			uint16_t id = EMPTY_NS;
			uint64_t t0, t1, c0;
			long n;

			ct_ns_create(t, EMPTY_NS, NULL);
			c0 = bu_thread_cpu_ns();
			t0 = bu_mono_ns();
			if (e[i].flush)
				n = ct_table_flush(thr, EMPTY_NS, t0);
			else
				n = ct_ns_destroy(thr, &id, 1, t0, e[i].flags);
			t1 = bu_mono_ns();
			c0 = bu_thread_cpu_ns() - c0;
			if (e[i].flush)
				ct_ns_destroy(thr, &id, 1, t1, 0);
			bu_rec_begin(&rec, a, "teardown", e[i].name);
			bu_rec_int(&rec, "table_conns", ct_table_count(t));
			bu_rec_int(&rec, "removed", (uint64_t)(n > 0 ? n : 0));
			bu_rec_num(&rec, "us", (double)(t1 - t0) / 1e3);
			bu_rec_num(&rec, "ms", (double)(t1 - t0) / 1e6);
			bu_rec_num(&rec, "cpu_us", (double)c0 / 1e3);
			bu_rec_end(&rec);
		}
	}
	atomic_store(&bg.stop, true);
	pthread_join(bg.th, NULL);
	ct_thread_detach(thr);
	ct_table_destroy(t);
	return 0;
}
