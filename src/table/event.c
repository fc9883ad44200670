/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * event.c - delivering NEW / UPDATE / DESTROY to the table's handler.
 *
 * Kept apart from the per-packet path so that the cost of events is one
 * predictable branch when nobody listens.  The handler runs on the thread
 * that caused the event, outside every library lock (see events.h).
 */
#include "table/event.h"

void ct_table_set_event_handler(struct ct_table *t, ct_event_fn fn, void *arg)
{
	t->ev_arg = arg;
	t->ev_fn = fn;
}

void ct_table_set_event_mask(struct ct_table *t, unsigned mask)
{
	unsigned skip = 0;

	if (!(mask & (1u << CT_EV_NEW)))
		skip |= 1u << CT_EV_NEW;
	if (!(mask & (1u << CT_EV_UPDATE)))
		skip |= 1u << CT_EV_UPDATE;
	atomic_store_explicit(&t->ev_skip, skip, memory_order_relaxed);
}

void ct_event_emit(struct ct_table *t, enum ct_event_type type, uint32_t what,
		   enum ct_destroy_cause cause, ct_time_ns now,
		   const struct ct_conn_info *ci)
{
	struct ct_event ev;

	if (!t->ev_fn)
		return;
	ev.type = type;
	ev.what = what;
	ev.destroy_cause = cause;
	ev.ts = now;
	ev.conn = *ci;
	t->ev_fn(&ev, t->ev_arg);
}
