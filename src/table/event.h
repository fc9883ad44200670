/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * event.h - delivering NEW / UPDATE / DESTROY to the table's handler
 * (private).
 */
#ifndef CT_EVENT_H
#define CT_EVENT_H

#include <stdbool.h>

#include "base/state.h"

/* Deliver one event (the caller holds no lock: the handler may call
 * back into the table).  Nothing happens without a handler. */
void ct_event_emit(struct ct_table *t, enum ct_event_type type, uint32_t what,
		   enum ct_destroy_cause cause, ct_time_ns now,
		   const struct ct_conn_info *ci);

/* Whether a handler is set: a stage copies an entry out for an event only
 * then. */
static inline bool ct_events_on(const struct ct_table *t)
{
	return t->ev_fn != NULL;
}

/* Whether a NEW or UPDATE event is wanted (ct_table_set_event_mask): the
 * stages that would emit one test this once, before they copy the entry
 * out.  DESTROY is never masked: a removal copies the entry under the
 * locks that remove it and emits after them, and both sides must agree. */
static inline bool ct_events_want(struct ct_table *t, enum ct_event_type type)
{
	return t->ev_fn != NULL &&
	       !(atomic_load_explicit(&t->ev_skip, memory_order_relaxed) & (1u << type));
}

#endif /* CT_EVENT_H */
