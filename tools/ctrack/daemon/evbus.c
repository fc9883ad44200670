/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * evbus.c - events from the threads that cause them to the main thread
 * that hands them to `ctrack events` clients, without ever making a
 * packet thread wait.
 *
 * The library calls its event handler synchronously on the thread whose
 * work caused the event: a worker (NEW, UPDATE, a DESTROY by RST), the
 * collector (DESTROY by timeout), the main thread (flush, delete).  Each
 * such thread gets a ring of its own, one producer and one consumer, so
 * the handler is a copy and a release store - no lock, no shared counter.
 * A full ring drops the event and counts it in the ring (the producer is
 * its only writer); the main thread reports the loss to every subscriber,
 * as the kernel reports ENOBUFS to a netlink listener that fell behind.
 * With no subscriber the handler returns before touching anything.
 *
 * Order.  A connection's events come from the one worker that sees its
 * packets, except its timeout, which the collector reports, and a flush
 * or delete; events carry their time, so each drain merges what it took
 * from all rings by time (ties kept in ring order), and a DESTROY by
 * timeout - which comes at least one timeout after the packet event
 * before it - is never shown first.
 *
 * Rings are created on first use and live until the bus is freed (after
 * every producer stopped); the list only grows, and a new ring is
 * published with a release store after it is complete, so the consumer
 * walks it without a lock.
 */
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

struct ev_ring {
	/* the producer's line, with what both only read */
	_Atomic uint64_t head __attribute__((aligned(64)));
	struct ev_ring *next;
	struct evbus *bus;
	struct ct_event *e;
	uint64_t mask;
	uint64_t cached_tail;
	_Atomic uint64_t lost;
	unsigned id;
	/* the consumer's */
	_Atomic uint64_t tail __attribute__((aligned(64)));
	uint64_t lost_seen;
};

struct ev_key {
	uint64_t ts;
	uint32_t ring;
	uint32_t pos;
};

struct evbus {
	pthread_mutex_t lock;              /* ring creation */
	_Atomic(struct ev_ring *) rings;
	unsigned n_rings;
	uint64_t ring_events;              /* a power of two */
	_Atomic int subscribers;
	_Atomic uint64_t attach_failed;    /* events lost: no ring (no memory) */
	uint64_t lost_total;               /* the consumer's sum */
	/* the consumer's scratch */
	struct ct_event *scratch;
	struct ev_key *keys;
	size_t scratch_cap;
};

static _Thread_local struct ev_ring *tl_ring;
/* the consumer's own events (flush, delete on the main thread) go to it
 * directly: queued, they would fill its ring while it cannot drain it */
static _Thread_local void (*tl_direct)(const struct ct_event *, void *);
static _Thread_local void *tl_direct_arg;

void evbus_set_direct(void (*fn)(const struct ct_event *, void *), void *arg)
{
	tl_direct = fn;
	tl_direct_arg = arg;
}

struct evbus *evbus_new(unsigned ring_events)
{
	struct evbus *b = calloc(1, sizeof(*b));
	uint64_t n = 64;

	if (!b)
		return NULL;
	while (n < ring_events)
		n <<= 1;
	b->ring_events = n;
	pthread_mutex_init(&b->lock, NULL);
	return b;
}

void evbus_free(struct evbus *b)
{
	struct ev_ring *r, *next;

	if (!b)
		return;
	for (r = atomic_load(&b->rings); r; r = next) {
		next = r->next;
		free(r->e);
		free(r);
	}
	pthread_mutex_destroy(&b->lock);
	free(b->scratch);
	free(b->keys);
	free(b);
}

struct ev_ring *evbus_attach(struct evbus *b)
{
	struct ev_ring *r;

	if (tl_ring && tl_ring->bus == b)
		return tl_ring;
	r = aligned_alloc(64, sizeof(*r));
	if (!r)
		return NULL;
	memset(r, 0, sizeof(*r));
	r->e = malloc(b->ring_events * sizeof(*r->e));
	if (!r->e) {
		free(r);
		return NULL;
	}
	r->mask = b->ring_events - 1;
	r->bus = b;
	pthread_mutex_lock(&b->lock);
	r->id = b->n_rings++;
	r->next = atomic_load_explicit(&b->rings, memory_order_relaxed);
	atomic_store_explicit(&b->rings, r, memory_order_release);
	pthread_mutex_unlock(&b->lock);
	tl_ring = r;
	return r;
}

void evbus_subscribers(struct evbus *b, int delta)
{
	atomic_fetch_add_explicit(&b->subscribers, delta, memory_order_relaxed);
}

void evbus_handler(const struct ct_event *ev, void *arg)
{
	struct evbus *b = arg;
	struct ev_ring *r;
	uint64_t h;

	if (atomic_load_explicit(&b->subscribers, memory_order_relaxed) <= 0)
		return;
	if (tl_direct) {
		tl_direct(ev, tl_direct_arg);
		return;
	}
	r = tl_ring;
	if (!r || r->bus != b) {
		r = evbus_attach(b);
		if (!r) {
			atomic_fetch_add_explicit(&b->attach_failed, 1, memory_order_relaxed);
			return;
		}
	}
	h = atomic_load_explicit(&r->head, memory_order_relaxed);
	if (h - r->cached_tail > r->mask) {
		r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (h - r->cached_tail > r->mask) {
			atomic_store_explicit(&r->lost,
					      atomic_load_explicit(&r->lost, memory_order_relaxed) + 1,
					      memory_order_relaxed);
			return;
		}
	}
	r->e[h & r->mask] = *ev;
	atomic_store_explicit(&r->head, h + 1, memory_order_release);
}

static int key_cmp(const void *a, const void *b)
{
	const struct ev_key *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->ring != y->ring)
		return x->ring < y->ring ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

size_t evbus_drain(struct evbus *b, struct ct_event *out, size_t max, uint64_t *lost)
{
	struct ev_ring *r;
	size_t n = 0;
	uint64_t l = 0;

	if (b->scratch_cap < max) {
		struct ct_event *s = realloc(b->scratch, max * sizeof(*s));
		struct ev_key *k;

		if (!s)
			return 0;
		b->scratch = s;
		k = realloc(b->keys, max * sizeof(*k));
		if (!k)
			return 0;
		b->keys = k;
		b->scratch_cap = max;
	}
	for (r = atomic_load_explicit(&b->rings, memory_order_acquire); r; r = r->next) {
		uint64_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
		uint64_t h = atomic_load_explicit(&r->head, memory_order_acquire);
		uint64_t rl = atomic_load_explicit(&r->lost, memory_order_relaxed);

		l += rl - r->lost_seen;
		r->lost_seen = rl;
		for (; t != h && n < max; t++, n++) {
			b->scratch[n] = r->e[t & r->mask];
			b->keys[n].ts = b->scratch[n].ts;
			b->keys[n].ring = r->id;
			b->keys[n].pos = (uint32_t)n;
		}
		atomic_store_explicit(&r->tail, t, memory_order_release);
	}
	{
		uint64_t af = atomic_exchange_explicit(&b->attach_failed, 0, memory_order_relaxed);

		l += af;
	}
	b->lost_total += l;
	*lost = l;
	if (n > 1)
		qsort(b->keys, n, sizeof(*b->keys), key_cmp);
	for (size_t i = 0; i < n; i++)
		out[i] = b->scratch[b->keys[i].pos];
	return n;
}

uint64_t evbus_lost_total(struct evbus *b)
{
	return b->lost_total;
}
