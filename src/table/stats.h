/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stats.h - counters as conntrack -S shows them (private).
 */
#ifndef CT_STATS_H
#define CT_STATS_H

#include "base/state.h"

/* @dst += @src, every counter (relaxed loads of @src: its owner may be
 * counting meanwhile).  Caller keeps @src's thread from detaching
 * (thr_lock) or is its owner. */
void ct_stats_counters_add(struct ct_counters *dst, const struct ct_counters *src);

/* @c as the public struct ct_stats (the counters only; the caller fills
 * count and the collector's figures). */
void ct_stats_from_counters(const struct ct_counters *c, struct ct_stats *s);

#endif /* CT_STATS_H */
