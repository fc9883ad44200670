/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metrics.h - the tracker's counters as Prometheus text (exposition
 * format 0.0.4), for a file at the end of a replay or a scrape over HTTP.
 *
 * What is shown: the `conntrack -S` counters and ctrack's own (stats.h)
 * as `_total` counters, entries now by zone, protocol and state (a table
 * dump per rendering: O(entries)), INVALID packets by reason, the
 * collector's passes, rows locked, wheel seeds, expirations and how late
 * after their expiry the entries went (a histogram, from the DESTROY
 * events), events by type and destroys by cause, IPFIX records, messages,
 * bytes and failures, and the families the daemon fills (capture rings
 * per interface, event-stream drops per client) through providers.
 * Names and units follow the Prometheus conventions: a `ctrack_` prefix,
 * `_total` for counters, seconds, bytes.
 *
 * Threads: the sink's event hook runs on the thread that feeds the sinks;
 * rendering may run on any other thread at the same time (the HTTP
 * listener's) - it attaches to the table for the dump and reads the
 * sink's counters with relaxed atomics, so a scrape is a consistent-enough
 * snapshot, as `conntrack -S` is.
 */
#ifndef CTRACK_TOOL_EXPORT_METRICS_H
#define CTRACK_TOOL_EXPORT_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctrack/ctrack.h"
#include "sink.h"

/* Writing families from a provider (the daemon's rings, clients). */
struct metrics_out;
void metrics_family(struct metrics_out *o, const char *name, const char *type,
		    const char *help);
/* @labels: "" or 'a="x",b="y"' (values already escaped: metrics_escape) */
void metrics_sample(struct metrics_out *o, const char *name, const char *labels,
		    uint64_t value);
/* A label value escaped as the text format wants (\\, \", \n) into @buf. */
const char *metrics_escape(const char *v, char *buf, size_t size);

typedef void (*metrics_provider_fn)(struct metrics_out *o, void *arg);

/*
 * metrics_sink_create - a sink counting events for table @t.  @file, if
 * not NULL, is opened for writing now (an error names it) and receives
 * the exposition at finish.  @ipfix (NULL if none) is the IPFIX sink
 * whose counters are shown.  NULL and @err on failure.
 */
struct ex_sink *metrics_sink_create(struct ct_table *t, const char *file,
				    struct ex_sink *ipfix, char *err, size_t errlen);

/* metrics_add_provider - call @fn at each rendering (up to 8). Before
 * rendering starts on other threads.  0 or -ENOSPC. */
int metrics_add_provider(struct ex_sink *m, metrics_provider_fn fn, void *arg);

/* metrics_render - the whole exposition into a malloc'd buffer (*@len
 * bytes, NUL-terminated).  Any thread; attaches to the table for the
 * dump.  NULL when out of memory. */
char *metrics_render(struct ex_sink *m, size_t *len);

/* The HTTP listener (libmicrohttpd): GET /metrics on @listen
 * ("ADDR:PORT", "[::1]:PORT"; port 0 picks one, then told on stderr by
 * the caller from metrics_http_port). */
struct metrics_http;
int metrics_http_start(struct ex_sink *m, const char *listen,
		       struct metrics_http **out, char *err, size_t errlen);
unsigned metrics_http_port(const struct metrics_http *h);
void metrics_http_stop(struct metrics_http *h);

#endif
