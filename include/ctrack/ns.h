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
 * entries (walking their slabs; CT_NS_SWEEP sweeps the rows once
 * instead), emits DESTROY events, and reclaims
 * the memory after ONE grace period for the whole batch, without making
 * the caller wait for it (unless CT_NS_SYNC asks to).  Packets that arrive
 * for a namespace being destroyed get CT_V_INVALID with CT_PR_NS_DYING.
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
 * table's maximum applies).  Returns 0, -EEXIST, -EINVAL, -ENOMEM.
 */
int ct_ns_create(struct ct_table *t, uint16_t id, const struct ct_settings *s);

/* Does namespace @id exist (and is it not being destroyed)? */
bool ct_ns_exists(const struct ct_table *t, uint16_t id);

/* Replace the settings of namespace @id. Returns 0 or -ENOENT. */
int ct_ns_set_settings(struct ct_table *t, uint16_t id,
		       const struct ct_settings *s);

enum {
	CT_NS_SYNC = 0x1,     /* wait for the grace period before returning */
	CT_NS_SWEEP = 0x2,    /* sweep the rows once instead of walking the
			       * slabs (benchmarks: slower, see ns.c) */
	CT_NS_WALK = 0x4,     /* the per-namespace walk (the default) */
};

/*
 * ct_ns_destroy - destroy the @k namespaces in @ids (0 cannot be destroyed,
 * only flushed).  Returns the number of entries removed, or -ENOENT if an
 * id does not exist (nothing is destroyed then), -EINVAL for id 0.
 */
long ct_ns_destroy(struct ct_thread *thr, const uint16_t *ids, unsigned k,
		   ct_time_ns now, unsigned flags);

/* ct_ns_get_stats - the counters of namespace @id. Returns 0 or -ENOENT. */
int ct_ns_get_stats(const struct ct_table *t, uint16_t id, struct ct_stats *s);

#ifdef __cplusplus
}
#endif

#endif /* CTRACK_NS_H */
