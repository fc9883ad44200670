/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * format.h - connections and events as conntrack(8) prints them, and JSON.
 *
 * The conntrack and extended formats follow libnetfilter_conntrack's
 * snprintf_default.c field by field, including which fields the kernel
 * includes in a listing (counters, mark, use) and which in an event
 * (timeout and state on NEW/UPDATE, counters and state on DESTROY), so
 * that our output can be diffed against `conntrack -L` / `conntrack -E`.
 *
 * Lines are written into the caller's memory (fmt_*_line), at most
 * FMT_LINE_MAX bytes each and without a newline, so that a listing of a
 * million entries is a run of stores into one buffer: no stdio, no
 * snprintf, no inet_ntop (their costs were most of the old printer's
 * 1.2 us a line; BENCHMARKS.md, list).  The text formats never contain a
 * double quote, a backslash or a control character - every field is a
 * number, an address, or a fixed word - so the control socket sends a
 * text line as a JSON string by putting quotes around it (docs/control.md).
 *
 * Thread safety: pure functions of their arguments (ktimestamp reads the
 * local time zone through localtime_r).
 */
#ifndef CTRACK_TOOL_FORMAT_H
#define CTRACK_TOOL_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctrack/ctrack.h"

enum out_format { FMT_CONNTRACK, FMT_EXTENDED, FMT_JSON };

struct fmt_opts {
	int64_t wall_ns;      /* the wall clock minus the table's clock, in
			       * ns: added to table times shown as dates
			       * (events' [sec.usec], [start=], JSON times,
			       * delta-time); 0 when the table runs on the
			       * wall clock (a capture's time) */
	enum out_format format;
	bool acct;            /* print packets= bytes= (nf_conntrack_acct) */
	bool id;              /* -o id: "id=N" after use= */
	bool delta_time;      /* "delta-time=N" (nf_conntrack_timestamp=1:
			       * entries carry their first packet's time) */
	bool ktimestamp;      /* -o ktimestamp: [start=DATE] (and [stop=DATE]
			       * on DESTROY), local time as ctime(3) */
};

/* The longest line fmt_listing_line / fmt_event_line write (a JSON event
 * with IPv6 tuples is about 700 bytes). */
#define FMT_LINE_MAX 1024

/*
 * fmt_listing_line - one listing line for @ci, @timeout_s seconds left,
 * at table time @now (for delta-time), into @buf (FMT_LINE_MAX bytes).
 * Returns its length; no newline, no NUL.
 */
size_t fmt_listing_line(char *buf, const struct fmt_opts *o,
			const struct ct_conn_info *ci, long long timeout_s,
			ct_time_ns now);

/*
 * fmt_event_line - one event line for @ev shown at table time @ts_ns,
 * into @buf (FMT_LINE_MAX bytes); text formats are prefixed with
 * "[sec.usec]\t" (conntrack -E -o timestamp) when @stamp.  Returns its
 * length; no newline, no NUL.
 */
size_t fmt_event_line(char *buf, const struct fmt_opts *o, const struct ct_event *ev,
		      ct_time_ns ts_ns, bool stamp);

/* The same through stdio, with the newline (ctrack read). */
void fmt_listing(FILE *out, const struct fmt_opts *o,
		 const struct ct_conn_info *ci, long long timeout_s);
void fmt_event(FILE *out, const struct fmt_opts *o, const struct ct_event *ev,
	       ct_time_ns ts_ns);

/* Names as the JSON formats write them: "timeout", "protocol", ...
 * ("none" for CT_DESTROY_NONE), and the what bits ("new", "assured", ...;
 * NULL for a bit without a name). */
const char *fmt_destroy_cause_name(enum ct_destroy_cause c);
const char *fmt_what_name(unsigned bit);

/* An address as inet_ntop(3) writes it, into @buf (at least 46 bytes);
 * returns the length, no NUL.  Exposed for the filters' messages and the
 * tests, which check it against inet_ntop byte for byte. */
size_t fmt_addr(char *buf, uint8_t l3, const union ct_addr *a);

#endif
