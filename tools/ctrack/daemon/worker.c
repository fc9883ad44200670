/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * worker.c - the packet threads: frames in, bursts through the tracker.
 *
 * A worker takes the frames its source gives it (a ring block of its own
 * AF_PACKET socket, or the replay feeder's queue), parses each in place,
 * and hands the tracker bursts of up to 64 packets with
 * ct_process_burst_ts, each packet at its own arrival time, which hides
 * the table's cache misses as `ctrack read` does.  A burst ends where the
 * source's batch ends (the frames must stay where they are until it is
 * tracked: the caller flushes before it gives a ring block back), when it
 * is full, and before a packet whose time is one shortest timeout past
 * the burst's first (so nothing can expire inside a burst, the condition
 * of ct_process_burst_ts).  Fragments go to the worker's reassembler
 * (IPv6, and IPv4 when the kernel did not reassemble them: a replay) and
 * are tracked one at a time after the burst before them.  With --nat
 * every packet goes alone through the rules (dm_nat.c).
 *
 * Each burst's duration goes into a log2 histogram (dm_worker.lat), which
 * is what `ctrack-bench list-latency` reads to show that clients listing
 * the table do not slow the packet path, and what the metrics page shows
 * (with the durations' sum) as ctrack_worker_burst_duration_seconds.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"

static void count(_Atomic uint64_t *c, uint64_t n)
{
	/* one writer: a plain add published with a relaxed store */
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

unsigned dm_lat_bucket(uint64_t ns)
{
	unsigned o, b;

	if (ns < 64)
		return 0;
	o = 63u - (unsigned)__builtin_clzll(ns);              /* >= 6 */
	b = 1 + (o - 6) * DM_LAT_SUB + (unsigned)((ns >> (o - 4)) & (DM_LAT_SUB - 1));
	return b < DM_LAT_BUCKETS ? b : DM_LAT_BUCKETS - 1;
}

uint64_t dm_lat_floor(unsigned b)
{
	unsigned o, s;

	if (!b)
		return 0;
	o = (b - 1) / DM_LAT_SUB + 6;
	s = (b - 1) % DM_LAT_SUB;
	return (1ull << o) + (uint64_t)s * (1ull << (o - 4));
}

void dm_worker_flush(struct dm_worker *w)
{
	ct_time_ns t0, t1;

	if (!w->bn)
		return;
	t0 = dclock_now();
	ct_process_burst_ts(w->thr, w->bpp, w->bn, w->bv);
	t1 = dclock_now();
	count(&w->lat[dm_lat_bucket(t1 - t0)], 1);
	count(&w->lat_sum_ns, t1 - t0);
	count(&w->bursts, 1);
	w->bn = 0;
}

void dm_worker_frame(struct dm_worker *w, int linktype, const uint8_t *data,
		     uint32_t caplen, uint32_t wirelen, ct_time_ns now, uint32_t ifindex)
{
	struct ct_packet pkt;
	enum ct_pkt_kind kind;

	if (now < w->last_now)
		now = w->last_now;
	w->last_now = now;
	count(&w->frames, 1);
	kind = ct_parse_frame(&pkt, linktype, data, caplen, wirelen, now);
	if (kind == CT_PKT_UNSUPPORTED_LINK) {
		count(&w->bad_link, 1);
		return;
	}
	pkt.ifindex = ifindex;
	if (kind == CT_PKT_FRAGMENT) {
		struct ct_packet whole;
		struct ct_verdict v;

		dm_worker_flush(w);
		if (ct_defrag_feed(w->defrag, &pkt, now, &whole) == 1) {
			if (w->d->nat_on)
				dm_nat_packet(w, &whole, now);
			else
				ct_process(w->thr, &whole, now, &v);
		} else {
			ct_process(w->thr, &pkt, now, &v); /* untracked until whole */
		}
		return;
	}
	if (w->d->nat_on) {
		/* the two-step first packet, one packet at a time (dm_nat.c) */
		dm_nat_packet(w, &pkt, now);
		return;
	}
	if (w->bn && now - w->burst_first >=
	    atomic_load_explicit(&w->d->min_timeout_ns, memory_order_relaxed))
		dm_worker_flush(w);
	if (!w->bn)
		w->burst_first = now;
	w->bp[w->bn] = pkt;
	w->bpp[w->bn] = &w->bp[w->bn];
	if (++w->bn == CT_BURST_MAX)
		dm_worker_flush(w);
}

/* ---- threads ---- */

static pthread_mutex_t ready_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static unsigned ready_n, ready_failed;

static void *worker_main(void *arg)
{
	struct dm_worker *w = arg;
	char name[16];
	bool ok;

	snprintf(name, sizeof(name), "ct-worker-%u", w->idx);
	pthread_setname_np(pthread_self(), name);
	w->thr = ct_thread_attach(w->d->t);
	w->defrag = ct_defrag_create(w->d->opt.set.frag_high_thresh,
				     (uint64_t)w->d->opt.set.frag_timeout * 1000000000ull);
	w->evq = evbus_attach(w->d->bus);
	ok = w->thr && w->defrag && w->evq;
	pthread_mutex_lock(&ready_lock);
	ready_n++;
	if (!ok)
		ready_failed++;
	pthread_cond_broadcast(&ready_cond);
	pthread_mutex_unlock(&ready_lock);
	if (ok) {
		if (w->d->rp)
			dm_replay_loop(w);
		else
			dm_live_loop(w);
		dm_worker_flush(w);
	}
	/* the thread detaches itself (its RCU registration is its own); the
	 * main thread stopped reading its counters before it set d->stop */
	if (w->defrag)
		ct_defrag_destroy(w->defrag);
	w->defrag = NULL;
	if (w->thr)
		ct_thread_detach(w->thr);
	w->thr = NULL;
	return NULL;
}

int dm_workers_start(struct daemon *d, char *err, size_t errlen)
{
	ready_n = ready_failed = 0;
	for (unsigned i = 0; i < d->n_workers; i++) {
		struct dm_worker *w = &d->w[i];
		int e;

		w->d = d;
		w->idx = i;
		e = pthread_create(&w->tid, NULL, worker_main, w);
		if (e) {
			snprintf(err, errlen, "cannot start worker %u: %s", i, strerror(e));
			atomic_store(&d->stop, true);
			dm_workers_stop(d);
			return -1;
		}
		w->started = true;
	}
	pthread_mutex_lock(&ready_lock);
	while (ready_n < d->n_workers)
		pthread_cond_wait(&ready_cond, &ready_lock);
	pthread_mutex_unlock(&ready_lock);
	if (ready_failed) {
		snprintf(err, errlen, "out of memory starting the workers");
		atomic_store(&d->stop, true);
		dm_workers_stop(d);
		return -1;
	}
	return 0;
}

void dm_workers_stop(struct daemon *d)
{
	for (unsigned i = 0; i < d->n_workers; i++) {
		struct dm_worker *w = &d->w[i];

		if (!w->started)
			continue;
		pthread_join(w->tid, NULL);
		w->started = false;
	}
}
