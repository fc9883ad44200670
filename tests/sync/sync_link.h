/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sync_link.h - an in-memory sync link for the node tests: datagrams one
 * node sends wait on the link until the test delivers them to the other,
 * with loss and reordering drawn from a seeded generator, on a clock the
 * test moves.  Header-only; each test program includes it once.
 */
#ifndef SYNC_LINK_H
#define SYNC_LINK_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/sync.h"

#define SL_MAX_DGRAMS 65536
#define SL_NS 1000000000ull

struct sl_dgram {
	uint8_t *buf;
	size_t len;
};

/* One direction: what its sender sent, not yet delivered. */
struct sl_dir {
	struct sl_dgram q[SL_MAX_DGRAMS];
	unsigned n;
	uint64_t sent, lost, reordered;
};

struct sl_link {
	struct sl_dir dir[2];          /* 0: a -> b, 1: b -> a */
	struct ct_sync_node *node[2];  /* a, b */
	unsigned loss_ppm;             /* per datagram */
	unsigned reorder_ppm;          /* per delivery: swap with the next */
	uint64_t rng;
};

static inline uint32_t sl_rand(struct sl_link *l)
{
	l->rng ^= l->rng << 13;
	l->rng ^= l->rng >> 7;
	l->rng ^= l->rng << 17;
	return (uint32_t)(l->rng >> 11);
}

static inline int sl_send(struct sl_dir *d, const void *buf, size_t len)
{
	if (d->n == SL_MAX_DGRAMS)
		return -ENOBUFS;
	d->q[d->n].buf = malloc(len);
	if (!d->q[d->n].buf)
		return -ENOMEM;
	memcpy(d->q[d->n].buf, buf, len);
	d->q[d->n].len = len;
	d->n++;
	d->sent++;
	return 0;
}

static inline int sl_send_a(void *arg, const void *buf, size_t len)
{
	return sl_send(&((struct sl_link *)arg)->dir[0], buf, len);
}

static inline int sl_send_b(void *arg, const void *buf, size_t len)
{
	return sl_send(&((struct sl_link *)arg)->dir[1], buf, len);
}

/* Deliver everything waiting in direction @d to its receiver, losing and
 * reordering as configured.  Returns the datagrams delivered. */
static inline unsigned sl_deliver(struct sl_link *l, unsigned d, ct_time_ns now)
{
	struct sl_dir *dir = &l->dir[d];
	struct ct_sync_node *to = l->node[d ^ 1];
	unsigned delivered = 0;

	for (unsigned i = 0; i < dir->n; i++) {
		if (i + 1 < dir->n && l->reorder_ppm &&
		    sl_rand(l) % 1000000 < l->reorder_ppm) {
			struct sl_dgram t = dir->q[i];

			dir->q[i] = dir->q[i + 1];
			dir->q[i + 1] = t;
			dir->reordered++;
		}
		if (l->loss_ppm && sl_rand(l) % 1000000 < l->loss_ppm) {
			dir->lost++;
		} else {
			ct_sync_node_recv(to, dir->q[i].buf, dir->q[i].len, now);
			delivered++;
		}
		free(dir->q[i].buf);
	}
	dir->n = 0;
	return delivered;
}

/* Drop what waits (a node that is "down"). */
static inline void sl_discard(struct sl_link *l, unsigned d)
{
	for (unsigned i = 0; i < l->dir[d].n; i++)
		free(l->dir[d].q[i].buf);
	l->dir[d].n = 0;
}

/* One step of the link: both nodes run, both directions deliver. */
static inline void sl_step(struct sl_link *l, ct_time_ns now)
{
	ct_sync_node_run(l->node[0], now, 0);
	ct_sync_node_run(l->node[1], now, 0);
	sl_deliver(l, 0, now);
	sl_deliver(l, 1, now);
}

#endif /* SYNC_LINK_H */
