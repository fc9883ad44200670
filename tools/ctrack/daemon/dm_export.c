/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dm_export.c - IPFIX export and Prometheus metrics in the daemon
 * (issue 26): the sinks of tools/ctrack/export/, fed off the event bus by
 * a thread of their own.
 *
 *   workers, collector -> event rings (evbus.c) -> main thread's drain
 *        -> dm_export_event: DESTROYs into a bounded queue (full: dropped,
 *           counted) -> the export thread: ex_sinks_event (IPFIX record,
 *           metrics counts), active timeouts (ex_sinks_tick: a walk over
 *           the table in slices), a message that waited a second sent
 *   libmicrohttpd's thread: GET /metrics, rendered there (metrics.c) with
 *           this file's providers for the daemon's own families
 *
 * Why a thread and a queue, not the sinks on the main thread: the main
 * thread serves clients at a lowered priority (--control-nice) and an
 * active-timeout walk over a million entries would hold it for a tenth of
 * a second; the export thread takes as long as it takes, and what it
 * cannot take in time is dropped at its queue and counted, never waited
 * for.  Nothing here ever makes a packet thread wait: the workers only
 * ever see the event rings, and only DESTROY events are queued for the
 * export (evbus_set_base; the table is told not to build NEW and UPDATE
 * events unless an `events` client wants them).
 *
 * The queue: one producer (the main thread), one consumer (the export
 * thread), a power-of-two ring of struct ct_event; the producer wakes the
 * consumer with an eventfd once per batch.  Time: records carry Unix
 * milliseconds - the table's monotonic time plus the wall clock's offset,
 * which the main thread resamples every second (daemon.h, "Time") and
 * the export thread hands the IPFIX sink before each batch.
 *
 * What a scrape adds to metrics.c's page (all from counters other threads
 * write, read with relaxed loads, or from a copy under a lock):
 * packets by interface (the workers count frames by the interface they
 * came in on), the rings' PACKET_STATISTICS per ring (a ring is a
 * worker's socket, bound to every watched interface at once: the kernel
 * counts its drops per socket, so drops are by ring, not by interface -
 * docs/export.md), event-stream losses per client and in the rings, the
 * export queue's drops, and the workers' burst durations as a histogram.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "../export/metrics.h"
#include "../export/metrics_nat.h"
#include "daemon.h"

#define EX_BATCH 256
#define FLUSH_MS 1000           /* a record waits at most this long */
#define MAX_SUBS_SHOWN 256      /* clients a scrape lists one by one */

/* The padding is the point: the producer's and the consumer's counters on
 * lines of their own, so that neither thread's writes move the other's
 * line (the analyser's ordering would put them together). */
struct dm_export { /* NOLINT(clang-analyzer-optin.performance.Padding) */
	/* the queue: the main thread's line (it writes head and the counts;
	 * q and mask are set before the thread starts) ... */
	_Atomic uint64_t head __attribute__((aligned(64)));
	_Atomic uint64_t dropped;
	_Atomic uint64_t queued;
	struct ct_event *q;
	uint64_t mask;
	/* ... and the export thread's */
	_Atomic uint64_t tail __attribute__((aligned(64)));
	_Atomic uint64_t handled;
	_Atomic bool finish;
	int rc;                     /* the finish's, read after the join */
	struct daemon *d;
	struct ex_state *xs;
	struct ex_sinks sinks;
	struct ex_sink *ipfix, *metrics;
	pthread_t tid;
	int efd;
	bool started;
	/* the subscribers, as last published */
	pthread_mutex_t subs_lock;
	struct dm_sub_stat subs[MAX_SUBS_SHOWN];
	size_t n_subs;
	uint64_t lost_at_clients;
};

static uint64_t ld(const _Atomic uint64_t *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

/* ---- the queue ---- */

void dm_export_event(struct daemon *d, const struct ct_event *ev)
{
	struct dm_export *x = d->ex;
	uint64_t h;

	if (!x || ev->type != CT_EV_DESTROY)
		return;
	h = atomic_load_explicit(&x->head, memory_order_relaxed);
	if (h - atomic_load_explicit(&x->tail, memory_order_acquire) > x->mask) {
		atomic_store_explicit(&x->dropped, ld(&x->dropped) + 1, memory_order_relaxed);
		return;
	}
	x->q[h & x->mask] = *ev;
	atomic_store_explicit(&x->head, h + 1, memory_order_release);
	atomic_store_explicit(&x->queued, ld(&x->queued) + 1, memory_order_relaxed);
}

void dm_export_kick(struct daemon *d)
{
	struct dm_export *x = d->ex;
	uint64_t one = 1;

	if (x && atomic_load_explicit(&x->head, memory_order_relaxed) !=
		 atomic_load_explicit(&x->tail, memory_order_relaxed))
		(void)!write(x->efd, &one, sizeof(one));
}

/* The export thread: up to EX_BATCH queued events to the sinks. */
static size_t take(struct dm_export *x)
{
	uint64_t t = atomic_load_explicit(&x->tail, memory_order_relaxed);
	uint64_t h = atomic_load_explicit(&x->head, memory_order_acquire);
	size_t n = 0;

	for (; t != h && n < EX_BATCH; t++, n++) {
		const struct ct_event *ev = &x->q[t & x->mask];

		ex_sinks_event(&x->sinks, ev, ev->ts);
	}
	atomic_store_explicit(&x->tail, t, memory_order_release);
	atomic_store_explicit(&x->handled, ld(&x->handled) + n, memory_order_relaxed);
	return n;
}

static void *export_main(void *arg)
{
	struct dm_export *x = arg;
	struct daemon *d = x->d;
	struct ct_thread *thr = ct_thread_attach(d->t);

	pthread_setname_np(pthread_self(), "ct-export");
	if (!thr) {
		dm_log("export: out of memory; no flow records will be sent");
		x->rc = -1;
		return NULL;
	}
	for (;;) {
		ct_time_ns now = dclock_now();
		bool fin = atomic_load_explicit(&x->finish, memory_order_acquire);
		size_t n;

		if (x->ipfix)
			ipfix_sink_set_time_offset(x->ipfix, atomic_load(&d->wall_ns));
		n = take(x);
		ex_sinks_tick(&x->sinks, thr, now);
		if (n == EX_BATCH)
			continue;
		if (fin && atomic_load_explicit(&x->head, memory_order_acquire) ==
			   atomic_load_explicit(&x->tail, memory_order_relaxed))
			break;
		{
			/* sleep until events come, the next tick, or the oldest
			 * record in the message has waited FLUSH_MS */
			uint64_t wait_ms = 1000, p = x->ipfix ? ipfix_sink_pending_ms(x->ipfix) : 0;
			struct pollfd pfd = { x->efd, POLLIN, 0 };
			uint64_t junk;

			if (x->ipfix && p >= FLUSH_MS)
				ipfix_sink_flush(x->ipfix);
			else if (p)
				wait_ms = FLUSH_MS - p;
			if (x->sinks.next_tick != UINT64_MAX) {
				uint64_t t = x->sinks.next_tick > now
					     ? (x->sinks.next_tick - now) / 1000000 + 1 : 0;

				if (t < wait_ms)
					wait_ms = t;
			}
			if (fin)
				wait_ms = 0;
			if (wait_ms && poll(&pfd, 1, (int)wait_ms) > 0)
				(void)!read(x->efd, &junk, sizeof(junk));
		}
	}
	/* the end: what is still open (unless --ipfix-no-final), the rest
	 * of a TCP queue; the sinks say what went wrong */
	if (ex_finish(x->xs, &x->sinks, thr, dclock_now()) < 0)
		x->rc = -1;
	ct_thread_detach(thr);
	return NULL;
}

/* ---- metrics providers ---- */

static void capture_families(struct metrics_out *o, void *arg)
{
	struct daemon *d = arg;
	char lb[160], esc[64];

	metrics_family(o, "ctrack_capture_packets_total", "counter",
		       d->opt.n_ifaces ? "Packets the capture rings delivered, by the interface "
		       "they came in on." : "Frames the replay fed the workers.");
	if (d->opt.n_ifaces) {
		for (unsigned k = 0; k <= d->opt.n_ifaces; k++) {
			uint64_t n = 0;

			for (unsigned i = 0; i < d->n_workers; i++)
				n += ld(&d->w[i].if_frames[k < d->opt.n_ifaces ? k : DM_MAX_IFACES]);
			if (k == d->opt.n_ifaces && !n)
				continue;
			snprintf(lb, sizeof(lb), "interface=\"%s\"", k < d->opt.n_ifaces
				 ? metrics_escape(d->opt.ifaces[k], esc, sizeof(esc)) : "other");
			metrics_sample(o, "ctrack_capture_packets_total", lb, n);
		}
	} else {
		uint64_t n = 0;

		for (unsigned i = 0; i < d->n_workers; i++)
			n += ld(&d->w[i].frames);
		metrics_sample(o, "ctrack_capture_packets_total", "interface=\"replay\"", n);
	}
	metrics_family(o, "ctrack_capture_drops_total", "counter",
		       "Packets the kernel dropped because a capture ring was full "
		       "(PACKET_STATISTICS tp_drops), by ring: a ring is one worker's socket on "
		       "every watched interface, so the kernel cannot say which interface.");
	if (d->opt.n_ifaces) {
		struct dm_ring_stats rs[DM_MAX_WORKERS];

		for (unsigned i = 0; i < d->n_workers; i++)
			dm_live_stats(d, i, &rs[i]);
		for (unsigned i = 0; i < d->n_workers; i++) {
			snprintf(lb, sizeof(lb), "ring=\"%u\"", i);
			metrics_sample(o, "ctrack_capture_drops_total", lb, rs[i].drops);
		}
		metrics_family(o, "ctrack_capture_ring_packets_total", "counter",
			       "Packets the kernel passed to a capture ring (PACKET_STATISTICS "
			       "tp_packets), by ring (one per worker, on every interface).");
		for (unsigned i = 0; i < d->n_workers; i++) {
			snprintf(lb, sizeof(lb), "ring=\"%u\"", i);
			metrics_sample(o, "ctrack_capture_ring_packets_total", lb, rs[i].packets);
		}
		metrics_family(o, "ctrack_capture_ring_full_total", "counter",
			       "Times a capture ring was full (PACKET_STATISTICS tp_freeze_q_cnt), "
			       "by ring.");
		for (unsigned i = 0; i < d->n_workers; i++) {
			snprintf(lb, sizeof(lb), "ring=\"%u\"", i);
			metrics_sample(o, "ctrack_capture_ring_full_total", lb, rs[i].freezes);
		}
	}
}

static void event_families(struct metrics_out *o, void *arg)
{
	struct daemon *d = arg;
	struct dm_export *x = d->ex;
	char lb[160];

	metrics_family(o, "ctrack_event_stream_drops_total", "counter",
		       "Events an event-stream client (ctrack events) lost because it read too "
		       "slowly, by client now connected.");
	pthread_mutex_lock(&x->subs_lock);
	for (size_t i = 0; i < x->n_subs; i++) {
		snprintf(lb, sizeof(lb), "client=\"%" PRIu64 "\",pid=\"%d\",uid=\"%u\"",
			 x->subs[i].id, x->subs[i].pid, x->subs[i].uid);
		metrics_sample(o, "ctrack_event_stream_drops_total", lb, x->subs[i].lost);
	}
	metrics_family(o, "ctrack_event_stream_clients", "gauge",
		       "Clients reading the event stream (ctrack events) now.");
	metrics_sample(o, "ctrack_event_stream_clients", "", x->n_subs);
	metrics_family(o, "ctrack_event_stream_client_drops_total", "counter",
		       "Events the event-stream clients lost, all of them, also those gone.");
	metrics_sample(o, "ctrack_event_stream_client_drops_total", "", x->lost_at_clients);
	pthread_mutex_unlock(&x->subs_lock);
	metrics_family(o, "ctrack_event_ring_drops_total", "counter",
		       "Events dropped because a packet thread's event ring was full "
		       "(lost to every reader: event clients and the export).");
	metrics_sample(o, "ctrack_event_ring_drops_total", "", evbus_lost_total(d->bus));
	metrics_family(o, "ctrack_export_queue_drops_total", "counter",
		       "DESTROY events the export thread could not take in time (its queue, "
		       "--export-queue, was full): no flow record for them.");
	metrics_sample(o, "ctrack_export_queue_drops_total", "", ld(&x->dropped));
	metrics_family(o, "ctrack_export_queue_events", "gauge",
		       "DESTROY events waiting for the export thread now.");
	metrics_sample(o, "ctrack_export_queue_events", "",
		       atomic_load_explicit(&x->head, memory_order_relaxed) -
		       atomic_load_explicit(&x->tail, memory_order_relaxed));
}

/* Burst durations: the workers' 1/16-octave histogram (worker.c), shown in
 * buckets a factor of 4 apart from 1 us to 1 s. */
static void latency_families(struct metrics_out *o, void *arg)
{
	struct daemon *d = arg;
	static const double bounds_s[] = { 1e-6, 4e-6, 16e-6, 64e-6, 256e-6, 1e-3, 4e-3,
					   16e-3, 64e-3, 0.256, 1.0 };
	const char *name = "ctrack_worker_burst_duration_seconds";
	char lb[96];

	metrics_family(o, name, "histogram",
		       "How long the tracker took over one burst of packets, by worker.");
	for (unsigned i = 0; i < d->n_workers; i++) {
		const struct dm_worker *w = &d->w[i];
		uint64_t cum = 0, count = 0;
		unsigned b = 0;
		char sum[64];

		for (size_t k = 0; k < sizeof(bounds_s) / sizeof(bounds_s[0]); k++) {
			/* every bucket whose whole range is below the bound */
			while (b < DM_LAT_BUCKETS && (b + 1 < DM_LAT_BUCKETS
			       ? (double)dm_lat_floor(b + 1) : 1e30) <= bounds_s[k] * 1e9)
				cum += ld(&w->lat[b++]);
			snprintf(lb, sizeof(lb), "worker=\"%u\",le=\"%g\"", i, bounds_s[k]);
			metrics_sample(o, "ctrack_worker_burst_duration_seconds_bucket", lb, cum);
		}
		for (unsigned k = 0; k < DM_LAT_BUCKETS; k++)
			count += ld(&w->lat[k]);
		snprintf(lb, sizeof(lb), "worker=\"%u\",le=\"+Inf\"", i);
		metrics_sample(o, "ctrack_worker_burst_duration_seconds_bucket", lb, count);
		snprintf(lb, sizeof(lb), "worker=\"%u\"", i);
		snprintf(sum, sizeof(sum), "%.9f", (double)ld(&w->lat_sum_ns) / 1e9);
		metrics_sample_text(o, "ctrack_worker_burst_duration_seconds_sum", lb, sum);
		metrics_sample(o, "ctrack_worker_burst_duration_seconds_count", lb, count);
	}
	(void)name;
}

/* ---- start, stop ---- */

int dm_export_start(struct daemon *d, char *err, size_t errlen)
{
	struct dm_export *x;
	const struct ex_opts *o = &d->opt.ex;
	uint64_t n = 1024;
	int e;

	if (!o->ipfix[0] && !o->metrics_listen[0])
		return 0;
	x = calloc(1, sizeof(*x));
	if (!x) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	while (n < d->opt.export_queue)
		n <<= 1;
	x->d = d;
	x->mask = n - 1;
	x->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	x->q = malloc(n * sizeof(*x->q));
	pthread_mutex_init(&x->subs_lock, NULL);
	d->ex = x;
	if (x->efd < 0 || !x->q) {
		snprintf(err, errlen, "out of memory for the export queue (%" PRIu64 " events)", n);
		return -1;
	}
	/* ex_start prints its own errors, prefixed with the command */
	if (ex_start(o, "ctrack daemon", d->t, &x->sinks, &x->xs) < 0) {
		if (errlen)
			err[0] = 0;
		return -1;
	}
	x->ipfix = ex_state_ipfix(x->xs);
	x->metrics = ex_state_metrics(x->xs);
	if (x->metrics) {
		metrics_sink_destroys_only(x->metrics);
		metrics_add_provider(x->metrics, capture_families, d);
		metrics_add_provider(x->metrics, event_families, d);
		metrics_add_provider(x->metrics, latency_families, d);
		if (d->nat_on) {
			/* the workers publish into it after each packet
			 * (dm_nat.c); they start after this */
			static const struct metrics_nat_counts zero;

			d->nat_metrics = metrics_nat_create(x->metrics);
			if (!d->nat_metrics) {
				snprintf(err, errlen, "out of memory for the NAT metrics");
				return -1;
			}
			metrics_nat_publish(d->nat_metrics, &zero);
		}
	}
	/* DESTROY events are queued for the export from now on, even with
	 * no `events` client; NEW and UPDATE are not built */
	evbus_set_base(d->bus, 1u << CT_EV_DESTROY);
	ct_table_set_event_mask(d->t, evbus_want(d->bus));
	e = pthread_create(&x->tid, NULL, export_main, x);
	if (e) {
		snprintf(err, errlen, "cannot start the export thread: %s", strerror(e));
		return -1;
	}
	x->started = true;
	if (x->ipfix)
		dm_log("exporting flow records (IPFIX) to %s over %s", ipfix_sink_peer(x->ipfix),
		       o->ipfix_cfg.proto == IPFIX_TCP ? "TCP" : "UDP");
	return 0;
}

void dm_export_publish_subs(struct daemon *d, const struct dm_sub_stat *s, size_t n,
			    uint64_t lost_at_clients)
{
	struct dm_export *x = d->ex;

	if (!x)
		return;
	if (n > MAX_SUBS_SHOWN)
		n = MAX_SUBS_SHOWN;
	pthread_mutex_lock(&x->subs_lock);
	memcpy(x->subs, s, n * sizeof(*s));
	x->n_subs = n;
	x->lost_at_clients = lost_at_clients;
	pthread_mutex_unlock(&x->subs_lock);
}

json_t *dm_export_stats_json(struct daemon *d)
{
	struct dm_export *x = d->ex;
	json_t *o;

	if (!x)
		return NULL;
	o = json_pack("{s:I,s:I,s:I,s:I}",
		      "queued", (json_int_t)ld(&x->queued),
		      "exported", (json_int_t)ld(&x->handled),
		      "queue_drops", (json_int_t)ld(&x->dropped),
		      "queue_size", (json_int_t)x->mask + 1);
	if (x->ipfix) {
		struct ipfix_stats s;

		ipfix_sink_get_stats(x->ipfix, &s);
		json_object_set_new(o, "ipfix", json_pack(
			"{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
			"collector", ipfix_sink_peer(x->ipfix),
			"transport", d->opt.ex.ipfix_cfg.proto == IPFIX_TCP ? "tcp" : "udp",
			"records", (json_int_t)s.records,
			"records_active", (json_int_t)s.records_active,
			"records_final", (json_int_t)s.records_final,
			"records_lost", (json_int_t)s.records_lost,
			"messages", (json_int_t)s.xport.messages,
			"bytes", (json_int_t)s.xport.bytes,
			"send_errors", (json_int_t)s.xport.send_errors,
			"refused", (json_int_t)s.xport.refused,
			"dropped_messages", (json_int_t)s.xport.dropped,
			"template_sends", (json_int_t)s.template_sends,
			"queued_bytes", (json_int_t)s.xport.queued_bytes));
	}
	if (ex_state_metrics_address(x->xs))
		json_object_set_new(o, "metrics", json_pack("{s:s}", "listen",
				    ex_state_metrics_address(x->xs)));
	return o;
}

int dm_export_stop(struct daemon *d)
{
	struct dm_export *x = d->ex;
	int rc = 0;

	if (!x)
		return 0;
	if (x->started) {
		atomic_store_explicit(&x->finish, true, memory_order_release);
		{
			uint64_t one = 1;

			(void)!write(x->efd, &one, sizeof(one));
		}
		pthread_join(x->tid, NULL);
		rc = x->rc;
	}
	if (x->ipfix) {
		struct ipfix_stats s;

		ipfix_sink_get_stats(x->ipfix, &s);
		dm_log("export: %" PRIu64 " flow records (%" PRIu64 " periodic, %" PRIu64
		       " at the end) in %" PRIu64 " messages to %s; %" PRIu64 " records lost, %"
		       PRIu64 " DESTROY events dropped at the export queue", s.records,
		       s.records_active, s.records_final, s.xport.messages,
		       ipfix_sink_peer(x->ipfix), s.records_lost, ld(&x->dropped));
	}
	/* the listener goes with the sinks; the table is still there */
	ex_stop(x->xs, &x->sinks);
	metrics_nat_destroy(d->nat_metrics);   /* after the listener stopped */
	d->nat_metrics = NULL;
	if (x->efd >= 0)
		close(x->efd);
	pthread_mutex_destroy(&x->subs_lock);
	free(x->q);
	free(x);
	d->ex = NULL;
	return rc;
}
