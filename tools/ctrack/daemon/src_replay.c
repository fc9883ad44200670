/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * src_replay.c - `ctrack daemon --replay FILE [--speed X]`: a capture fed
 * to the workers at its own pace, as if it arrived on an interface.
 *
 * For tests and demos.  One feeder thread reads the file (capture.c:
 * pcap, pcapng, gzip) and releases each frame when the daemon's clock has
 * advanced by its capture-time offset divided by the speed (0: at once);
 * a frame is tracked at the time it is released, as a live interface
 * would deliver it, so a replay faster than 1x changes what depends on
 * time (UDP's 2-second ASSURED rule, expiries) exactly as tcpreplay into
 * a kernel would.  The feeder spreads frames over the workers with a
 * symmetric hash of its own in the manner of PACKET_FANOUT_HASH (sorted
 * endpoints, no ports for fragments and ICMP, src_afpacket.c), through a
 * queue per worker - one producer, one consumer, frames copied in, the
 * feeder waiting when a worker falls behind: a replay loses nothing.
 * With --nat every frame goes to the first worker, in the capture's
 * order: the two directions of a NATed connection have tuples no
 * symmetric hash pairs.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../capture.h"
#include "daemon.h"

#define Q_BYTES (8u << 20)

struct frame_rec {
	uint32_t len;        /* the record, header included, 8-aligned */
	uint32_t caplen;     /* UINT32_MAX: padding to the end of the ring */
	uint32_t wirelen;
	int32_t linktype;
	uint64_t ts;
	uint32_t ifindex;
	uint32_t pad_;
	uint8_t data[];
};

struct frame_q {
	_Atomic uint64_t head __attribute__((aligned(64)));  /* the feeder's line */
	uint8_t *buf;
	_Atomic uint64_t tail __attribute__((aligned(64)));  /* the worker's */
};

struct replay {
	struct cap_src *src;
	pthread_t feeder;
	bool feeder_started;
	struct daemon *d;
	_Atomic uint64_t frames, bytes;
	_Atomic bool done;
	pthread_mutex_t lock;        /* error */
	char error[320];
};

static bool q_push(struct frame_q *q, const struct cap_pkt *cp, ct_time_ns ts,
		   const _Atomic bool *stop)
{
	uint32_t need = (uint32_t)((sizeof(struct frame_rec) + cp->caplen + 7) & ~7u);
	uint64_t h = atomic_load_explicit(&q->head, memory_order_relaxed);

	for (;;) {
		uint64_t t = atomic_load_explicit(&q->tail, memory_order_acquire);
		uint64_t off = h % Q_BYTES, pad = off + need > Q_BYTES ? Q_BYTES - off : 0;

		if (Q_BYTES - (h - t) >= pad + need) {
			struct frame_rec *r;

			if (pad) {
				r = (struct frame_rec *)(q->buf + off);
				r->len = (uint32_t)pad;
				r->caplen = UINT32_MAX;
				h += pad;
				off = 0;
			}
			r = (struct frame_rec *)(q->buf + off);
			r->len = need;
			r->caplen = cp->caplen;
			r->wirelen = cp->wirelen;
			r->linktype = cp->linktype;
			r->ts = ts;
			r->ifindex = cp->ifindex;
			memcpy(r->data, cp->data, cp->caplen);
			atomic_store_explicit(&q->head, h + need, memory_order_release);
			return true;
		}
		if (atomic_load_explicit(stop, memory_order_relaxed))
			return false;
		{
			struct timespec ts50 = { 0, 50000 };

			nanosleep(&ts50, NULL);
		}
	}
}

/* The worker a frame goes to: a symmetric hash of what the kernel's
 * fanout hash reads (src_afpacket.c). */
static unsigned pick(const struct cap_pkt *cp, unsigned n)
{
	struct ct_packet p;
	enum ct_pkt_kind k;
	uint64_t h = 1469598103934665603ull;
	const uint8_t *a, *b;
	unsigned alen;
	uint16_t pa = 0, pb = 0;
	uint8_t buf[40];

	if (n == 1)
		return 0;
	k = ct_parse_frame(&p, cp->linktype, cp->data, cp->caplen, cp->wirelen, 0);
	if (k != CT_PKT_TRACKABLE && k != CT_PKT_FRAGMENT && k != CT_PKT_INVALID)
		return 0;
	if (p.tuple.l3 != CT_L3_IPV4 && p.tuple.l3 != CT_L3_IPV6)
		return 0;
	alen = p.tuple.l3 == CT_L3_IPV6 ? 16 : 4;
	a = p.tuple.src.ip6;
	b = p.tuple.dst.ip6;
	if (!p.is_fragment && p.tuple.l4 != IPPROTO_ICMP && p.tuple.l4 != IPPROTO_ICMPV6) {
		pa = p.tuple.sport;
		pb = p.tuple.dport;
	}
	if (memcmp(a, b, alen) > 0 || (!memcmp(a, b, alen) && pa > pb)) {
		const uint8_t *x = a;
		uint16_t y = pa;

		a = b;
		b = x;
		pa = pb;
		pb = y;
	}
	memcpy(buf, a, alen);
	memcpy(buf + alen, b, alen);
	memcpy(buf + 2 * alen, &pa, 2);
	memcpy(buf + 2 * alen + 2, &pb, 2);
	buf[2 * alen + 4] = p.tuple.l4;
	for (unsigned i = 0; i < 2 * alen + 5; i++) {
		h ^= buf[i];
		h *= 1099511628211ull;
	}
	return (unsigned)((h >> 32) * n >> 32);
}

static void *feeder_main(void *arg)
{
	struct replay *rp = arg;
	struct daemon *d = rp->d;
	struct cap_pkt cp;
	ct_time_ns t0 = 0;
	uint64_t first = 0;
	bool have_first = false;
	int r = 0;

	pthread_setname_np(pthread_self(), "ct-replay");
	for (;;) {
		if (atomic_load_explicit(&d->stop, memory_order_relaxed))
			break;
		r = cap_next(rp->src, &cp);
		if (r == 0 && d->opt.loop && atomic_load(&rp->frames)) {
			/* --loop: from the start again, the clock going on */
			char e[512];

			cap_close(rp->src);
			rp->src = NULL;
			if (cap_open(d->opt.replay, &rp->src, e, sizeof(e)) < 0) {
				dm_log("replay: %s: %s; stopping the loop", d->opt.replay, e);
				break;
			}
			have_first = false;
			continue;
		}
		if (r != 1)
			break;
		ct_time_ns now = dclock_now();
		unsigned wi;

		if (!have_first) {
			have_first = true;
			first = cp.ts_ns;
			t0 = now;
		}
		if (d->opt.speed > 0 && cp.ts_ns > first) {
			ct_time_ns due = t0 + (ct_time_ns)((double)(cp.ts_ns - first) / d->opt.speed);

			while (now < due && !atomic_load_explicit(&d->stop, memory_order_relaxed)) {
				uint64_t left = due - now;
				struct timespec ts = { 0, (long)(left > 100000000ull ? 100000000ull : left) };

				nanosleep(&ts, NULL);
				now = dclock_now();
			}
		}
		/* with NAT a reply's tuple is not its request's: a hash would
		 * send the two to different workers, and a replay faster than
		 * the capture's round trips could track a reply before its
		 * request is confirmed - so one worker keeps the order */
		wi = d->nat_on ? 0 : pick(&cp, d->n_workers);
		if (!q_push(d->w[wi].q, &cp, now, &d->stop))
			break;
		atomic_store_explicit(&rp->frames,
				      atomic_load_explicit(&rp->frames, memory_order_relaxed) + 1,
				      memory_order_relaxed);
		atomic_store_explicit(&rp->bytes,
				      atomic_load_explicit(&rp->bytes, memory_order_relaxed) +
				      cp.wirelen, memory_order_relaxed);
	}
	if (r < 0) {
		pthread_mutex_lock(&rp->lock);
		snprintf(rp->error, sizeof(rp->error), "damaged or cut short at %.80s: %.200s",
			 cap_where(rp->src), cap_error(rp->src));
		pthread_mutex_unlock(&rp->lock);
		dm_log("replay: %s: damaged or cut short at %s: %s; the frames before it were fed",
		       d->opt.replay, cap_where(rp->src), cap_error(rp->src));
	} else {
		dm_log("replay: %s: all %llu frames fed", d->opt.replay,
		       (unsigned long long)atomic_load(&rp->frames));
	}
	atomic_store(&rp->done, true);
	return NULL;
}

int dm_replay_open(struct daemon *d, char *err, size_t errlen)
{
	struct replay *rp = calloc(1, sizeof(*rp));
	char e[512];

	if (!rp) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rp->d = d;
	pthread_mutex_init(&rp->lock, NULL);
	if (cap_open(d->opt.replay, &rp->src, e, sizeof(e)) < 0) {
		snprintf(err, errlen, "--replay %s: %s", d->opt.replay, e);
		pthread_mutex_destroy(&rp->lock);
		free(rp);
		return -1;
	}
	for (unsigned i = 0; i < d->n_workers; i++) {
		struct frame_q *q = aligned_alloc(64, sizeof(*q));

		if (q) {
			memset(q, 0, sizeof(*q));
			q->buf = malloc(Q_BYTES);
		}
		if (!q || !q->buf) {
			free(q);
			snprintf(err, errlen, "out of memory");
			d->rp = rp;
			dm_replay_close(d);
			return -1;
		}
		d->w[i].q = q;
	}
	d->rp = rp;
	return 0;
}

int dm_replay_start(struct daemon *d, char *err, size_t errlen)
{
	int e = pthread_create(&d->rp->feeder, NULL, feeder_main, d->rp);

	if (e) {
		snprintf(err, errlen, "cannot start the replay: %s", strerror(e));
		return -1;
	}
	d->rp->feeder_started = true;
	return 0;
}

void dm_replay_close(struct daemon *d)
{
	struct replay *rp = d->rp;

	if (!rp)
		return;
	if (rp->feeder_started)
		pthread_join(rp->feeder, NULL);
	for (unsigned i = 0; i < d->n_workers; i++)
		if (d->w[i].q) {
			free(d->w[i].q->buf);
			free(d->w[i].q);
			d->w[i].q = NULL;
		}
	if (rp->src)
		cap_close(rp->src);
	rp->src = NULL;
	pthread_mutex_destroy(&rp->lock);
	free(rp);
	d->rp = NULL;
}

void dm_replay_stats(struct daemon *d, struct dm_replay_stats *s)
{
	struct replay *rp = d->rp;

	memset(s, 0, sizeof(*s));
	if (!rp)
		return;
	s->frames = atomic_load_explicit(&rp->frames, memory_order_relaxed);
	s->bytes = atomic_load_explicit(&rp->bytes, memory_order_relaxed);
	s->done = atomic_load(&rp->done);
	pthread_mutex_lock(&rp->lock);
	snprintf(s->error, sizeof(s->error), "%s", rp->error);
	pthread_mutex_unlock(&rp->lock);
}

void dm_replay_loop(struct dm_worker *w)
{
	struct frame_q *q = w->q;
	unsigned idle = 0;

	while (!atomic_load_explicit(&w->d->stop, memory_order_relaxed)) {
		uint64_t t = atomic_load_explicit(&q->tail, memory_order_relaxed);
		uint64_t h = atomic_load_explicit(&q->head, memory_order_acquire);
		unsigned n = 0;

		if (t == h) {
			/* 0.2 ms while frames come, backing off to 12.8 ms once
			 * the replay is over: an idle daemon should not wake a
			 * worker 5,000 times a second */
			struct timespec ts = { 0, 200000L << (idle < 6 ? idle : 6) };

			if (idle < 1000)
				idle++;
			nanosleep(&ts, NULL);
			continue;
		}
		idle = 0;
		/* up to a burst's worth, tracked before the space is released:
		 * the packets point into the queue */
		while (t != h && n < CT_BURST_MAX) {
			struct frame_rec *r = (struct frame_rec *)(q->buf + t % Q_BYTES);

			if (r->caplen != UINT32_MAX) {
				dm_worker_frame(w, r->linktype, r->data, r->caplen, r->wirelen, r->ts,
						r->ifindex);
				n++;
			}
			t += r->len;
		}
		dm_worker_flush(w);
		atomic_store_explicit(&q->tail, t, memory_order_release);
	}
}
