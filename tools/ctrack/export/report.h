/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report.h - `ctrack read --report FILE.html`: one self-contained page of
 * plots of a replay, for a person to look at before reading lines.
 *
 * The page needs nothing but itself (no script, no font, no network):
 * plots are inline SVG drawn here.  It shows connections open over
 * capture time by protocol, new and destroyed per second, the state mix
 * (the table at the end; the state each ended connection ended in), the
 * top connections by bytes and by packets, connection durations, and
 * INVALID packets by reason.  Every plotted number is also an attribute
 * of its element (data-*), so a test or a script can read the page.
 *
 * Memory: 24 bytes per connection seen (its interval and protocol) until
 * the page is written; the top lists are fixed (10 each).
 */
#ifndef CTRACK_TOOL_EXPORT_REPORT_H
#define CTRACK_TOOL_EXPORT_REPORT_H

#include <stddef.h>

#include "ctrack/ctrack.h"
#include "sink.h"

/*
 * report_sink_create - a report of table @t, written to @path at finish.
 * @path is opened for writing now: NULL and a sentence naming it in @err
 * when it cannot be.  @inputs (NULL-terminated, may be NULL) name what
 * was read, for the page's title.
 */
struct ex_sink *report_sink_create(const char *path, struct ct_table *t,
				   const char *const *inputs, char *err, size_t errlen);

#endif
