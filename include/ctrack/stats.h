/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctrack/stats.h - the counters `conntrack -S` shows, and ctrack's own.
 *
 * Counters are kept per thread (struct ct_thread) and per namespace, never
 * in a shared cache line on the hot path; reading them sums every attached
 * thread plus what detached threads left behind, so a read is O(threads)
 * and may be a little behind concurrent work.
 */
#ifndef CTRACK_STATS_H
#define CTRACK_STATS_H

#include <stdint.h>

#include "ctrack/packet.h"
#include "ctrack/table.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ct_stats {
	/* the kernel's names (conntrack -S) */
	uint64_t found;          /* lookups that hit an existing entry */
	uint64_t invalid;        /* packets classified INVALID */
	uint64_t insert;         /* entries created */
	uint64_t insert_failed;  /* entries that could not be inserted: the
				  * chain limit (the kernel's confirm
				  * failures; not counted in drop) */
	uint64_t drop;           /* packets dropped for want of an entry:
				  * table full with nothing to evict, no
				  * memory (the kernel's "too stressed") */
	uint64_t early_drop;     /* entries evicted to make room */
	uint64_t error;          /* ICMP errors that matched nothing */
	uint64_t search_restart; /* lookups restarted (resize, row moved) */
	uint64_t clash_resolve;  /* concurrent creation of one entry merged */
	uint64_t chaintoolong;   /* inserts refused: row at max_chain */
	/* ctrack's own */
	uint64_t count;          /* entries now */
	uint64_t packets;        /* packets given to ct_process */
	uint64_t untracked;      /* not for conntrack (non-IP, ND, ...) */
	uint64_t ignored;        /* accepted, left the entry alone */
	uint64_t related;        /* ICMP errors matched to an entry */
	uint64_t expired;        /* entries removed by timeout */
	uint64_t deleted;        /* entries removed otherwise (protocol, flush,
				  * namespace teardown).  Each removal is
				  * counted once, under one cause: insert ==
				  * count + expired + deleted + early_drop */
	uint64_t gc_passes;      /* full collector passes */
	uint64_t gc_rows_locked; /* rows the collector locked */
	uint64_t gc_wheel_seeds; /* walks that (re)built the collector's wheel:
				  * the policy switched on, a resize, a
				  * packet thread's ring overflowing while
				  * others held the collector's lock */
	uint64_t resizes;        /* online resizes completed */
	uint64_t nat_exhausted;  /* NAT setups that found no free tuple (the
				  * kernel has no counter: its confirm then
				  * fails, insert_failed) */
	uint64_t invalid_by_reason[CT_PR_MAX];
};

/* ct_table_get_stats - totals over the whole table (all zones).  Any
 * thread; takes the thread-list lock, O(threads).  Cannot fail. */
void ct_table_get_stats(const struct ct_table *t, struct ct_stats *s);

/*
 * ct_thread_get_stats - the counters of one attached thread alone (what
 * `conntrack -S` prints per CPU: a daemon prints one cpu=N line per packet
 * thread).  Fills the per-packet counters (found ... chaintoolong,
 * packets, untracked, ignored, related, expired, deleted,
 * invalid_by_reason); the table-wide ones (count, gc_*, resizes) are 0.
 * Any thread may call it while @thr stays attached (the caller keeps it
 * so, e.g. by detaching packet threads only after its readers stopped);
 * relaxed reads, so it may trail the owner by a few packets.  O(1).
 */
void ct_thread_get_stats(const struct ct_thread *thr, struct ct_stats *s);

#ifdef __cplusplus
}
#endif

#endif /* CTRACK_STATS_H */
