/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * format.h - connections and events as conntrack(8) prints them, and JSON.
 *
 * The conntrack and extended formats follow libnetfilter_conntrack's
 * snprintf_default.c field by field, including which fields the kernel
 * includes in a listing (counters, mark, use) and which in an event
 * (timeout and state on NEW/UPDATE, counters and state on DESTROY), so
 * that our output can be diffed against `conntrack -L` / `conntrack -E`.
 */
#ifndef CTRACK_TOOL_FORMAT_H
#define CTRACK_TOOL_FORMAT_H

#include <stdbool.h>
#include <stdio.h>

#include "ctrack/ctrack.h"

enum out_format { FMT_CONNTRACK, FMT_EXTENDED, FMT_JSON };

struct fmt_opts {
	enum out_format format;
	bool acct;            /* print packets= bytes= (nf_conntrack_acct) */
};

/* One listing line (no newline) for @ci with @timeout_s seconds left. */
void fmt_listing(FILE *out, const struct fmt_opts *o,
		 const struct ct_conn_info *ci, long long timeout_s);

/* One event line, prefixed with "[sec.usec]\t" of @ts_ns. */
void fmt_event(FILE *out, const struct fmt_opts *o, const struct ct_event *ev,
	       ct_time_ns ts_ns);

#endif
