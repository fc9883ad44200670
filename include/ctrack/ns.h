/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctrack/ns.h - namespaces (zones, tenants, VRFs, network namespaces).
 *
 * A namespace is identified by a 16-bit id, the zone of the tuples that
 * live in it (conntrack prints it as zone=N).  Namespace 0 always exists.
 * Each has its own settings (timeouts, limits, tcp_loose, checksum, ...),
 * its own counters and entry count, and its own memory: its connections
 * live in its own slab, so a namespace's teardown costs what it holds.
 *
 * Teardown is batched: ct_ns_destroy() takes K ids, unlinks all their
 * entries (walking their slabs; CT_NS_SWEEP sweeps the rows once first),
 * emits DESTROY events, and reclaims
 * the memory after ONE grace period for the whole batch, without making
 * the caller wait for it (unless CT_NS_SYNC asks to).  Packets that arrive
 * for a namespace being destroyed get CT_V_INVALID with CT_PR_NS_DYING.
 *
 * Locks: every call here takes the table's namespace lock (ct_ns_destroy
 * for its whole run, events included), so none of them may be called from
 * an event handler that a teardown runs.
 */
#ifndef CTRACK_NS_H
#define CTRACK_NS_H

#include <stdint.h>

#include "ctrack/settings.h"
#include "ctrack/stats.h"
#include "ctrack/table.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * ct_ns_create - create namespace @id with @settings (NULL: a copy of
 * zone 0's).  settings->max limits this namespace's entries (0: only the
 * table's maximum applies).  Any thread (attached or not).  Cost: one
 * allocation of the namespace (a few KiB: its counter shards and slab
 * heads; its entries' memory comes as they are created).  Returns 0,
 * -EEXIST (@id exists), -ENOMEM.
 */
int ct_ns_create(struct ct_table *t, uint16_t id, const struct ct_settings *s);

/* Does namespace @id exist (and is it not being destroyed)?  Any thread;
 * O(1) under the namespace lock.  Cannot fail. */
bool ct_ns_exists(const struct ct_table *t, uint16_t id);

/* Replace the settings of namespace @id (zone 0's also set the table's
 * maximum).  Any thread: packets read the old copy or the new one, never a
 * mix, and the old one is freed after a grace period without waiting
 * here.  Returns 0, -ENOENT (no such namespace, or it is being destroyed),
 * -ENOMEM. */
int ct_ns_set_settings(struct ct_table *t, uint16_t id,
		       const struct ct_settings *s);

enum {
	CT_NS_SYNC = 0x1,     /* wait for the grace period before returning */
	CT_NS_SWEEP = 0x2,    /* sweep the rows once instead of walking the
			       * slabs (benchmarks: slower, see
			       * src/ns/teardown.c) */
	CT_NS_WALK = 0x4,     /* the per-namespace walk (the default) */
};

/*
 * ct_ns_destroy - destroy the @k namespaces in @ids (0 cannot be destroyed,
 * only flushed; an id given twice counts once).  An attached thread,
 * outside any read-side section of its own.  Cost: O(the batch's entries)
 * (CT_NS_SWEEP: O(rows) more), DESTROY events on this thread, one
 * call_rcu for the batch - or, with CT_NS_SYNC, one synchronize_rcu here.
 * Returns the number of entries removed, or -ENOENT if an id does not
 * exist or is being destroyed, -EINVAL for id 0, -ENOMEM; on an error
 * nothing is destroyed.
 */
long ct_ns_destroy(struct ct_thread *thr, const uint16_t *ids, unsigned k,
		   ct_time_ns now, unsigned flags);

/* ct_ns_get_stats - the counters of namespace @id (those a namespace keeps:
 * insert, invalid, error, drop, early_drop, expired, and count).  Any
 * thread; O(16) loads under the namespace lock.  Returns 0 or -ENOENT. */
int ct_ns_get_stats(const struct ct_table *t, uint16_t id, struct ct_stats *s);

#ifdef __cplusplus
}
#endif

#endif /* CTRACK_NS_H */
