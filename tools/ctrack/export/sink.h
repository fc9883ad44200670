/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sink.h - where a tracker's events go besides the screen: IPFIX export,
 * metrics, the HTML report.
 *
 * A sink is fed the same struct ct_event the library hands its event
 * handler, in the order a reader should see them (ctrack read sorts a
 * collector pass's DESTROYs by expiry first), each with the time it is
 * reported at (a timeout's DESTROY: the expiry, not the pass that found
 * it).  `ctrack read` calls the sinks from its one thread; the daemon
 * (issue 25) calls them from the thread that drains its event ring, never
 * from a packet thread, so a sink may take its time - but it must never
 * block on a peer (a stalled collector costs records, not tracking).
 *
 * Besides events a sink may want:
 *  - a tick: periodic work at the caller's time (IPFIX active timeouts),
 *    on an attached thread, so that it may dump the table;
 *  - the end: the table as it stands at the last packet (records for the
 *    connections still open, the final counters of a metrics file, the
 *    report's listing).
 * Every hook is optional (NULL).  Times are ns of the tracker's clock
 * (capture time in a replay); a sink that needs wall-clock time is told
 * the offset when it is created.
 */
#ifndef CTRACK_TOOL_EXPORT_SINK_H
#define CTRACK_TOOL_EXPORT_SINK_H

#include <stdint.h>

#include "ctrack/ctrack.h"

struct ex_sink;

struct ex_sink_ops {
	const char *name;
	/* one event, reported at @when */
	void (*event)(struct ex_sink *s, const struct ct_event *ev, ct_time_ns when);
	/* the caller's time reached what the last tick (or creation)
	 * returned: do periodic work, return the next time wanted
	 * (UINT64_MAX: none).  @thr is attached to the table. */
	ct_time_ns (*tick)(struct ex_sink *s, struct ct_thread *thr, ct_time_ns now);
	/* end of input at @now: the table is final (dump it with @thr).
	 * Returns 0 or a negative errno (the sink's output failed; it has
	 * said why in its error text, ex_sink_error) */
	int (*finish)(struct ex_sink *s, struct ct_thread *thr, ct_time_ns now);
	void (*destroy)(struct ex_sink *s);
};

struct ex_sink {
	const struct ex_sink_ops *ops;
	struct ex_sink *next;
	ct_time_ns next_tick;      /* UINT64_MAX: no tick wanted */
	char error[1024];          /* why finish failed, for a person */
};

/* A list of sinks, fed together. */
struct ex_sinks {
	struct ex_sink *head;
	ct_time_ns next_tick;      /* the earliest of the sinks' */
};

void ex_sinks_add(struct ex_sinks *l, struct ex_sink *s);
static inline int ex_sinks_any(const struct ex_sinks *l)
{
	return l->head != NULL;
}
void ex_sinks_event(struct ex_sinks *l, const struct ct_event *ev, ct_time_ns when);
void ex_sinks_tick_slow(struct ex_sinks *l, struct ct_thread *thr, ct_time_ns now);
/* Run the ticks that are due at @now; cheap when none is (one compare). */
static inline void ex_sinks_tick(struct ex_sinks *l, struct ct_thread *thr,
				 ct_time_ns now)
{
	if (now >= l->next_tick)
		ex_sinks_tick_slow(l, thr, now);
}
void ex_sinks_destroy(struct ex_sinks *l);

#endif
