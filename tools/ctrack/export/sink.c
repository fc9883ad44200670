/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sink.c - a list of event sinks fed together (sink.h).
 *
 * The list is short (IPFIX, metrics, report) and fixed once the tool has
 * started, so it is a plain singly linked list; the only thing kept for
 * speed is the earliest tick any sink wants, so that a replay's packet
 * loop pays one compare per burst when no tick is due.
 */
#include <stdlib.h>

#include "sink.h"

static void recompute(struct ex_sinks *l)
{
	l->next_tick = UINT64_MAX;
	for (struct ex_sink *s = l->head; s; s = s->next)
		if (s->next_tick < l->next_tick)
			l->next_tick = s->next_tick;
}

void ex_sinks_add(struct ex_sinks *l, struct ex_sink *s)
{
	struct ex_sink **p = &l->head;

	while (*p)
		p = &(*p)->next;
	s->next = NULL;
	*p = s;
	recompute(l);
}

void ex_sinks_event(struct ex_sinks *l, const struct ct_event *ev, ct_time_ns when)
{
	for (struct ex_sink *s = l->head; s; s = s->next)
		if (s->ops->event)
			s->ops->event(s, ev, when);
}

void ex_sinks_tick_slow(struct ex_sinks *l, struct ct_thread *thr, ct_time_ns now)
{
	for (struct ex_sink *s = l->head; s; s = s->next)
		if (s->ops->tick && now >= s->next_tick)
			s->next_tick = s->ops->tick(s, thr, now);
	recompute(l);
}

void ex_sinks_destroy(struct ex_sinks *l)
{
	struct ex_sink *s = l->head;

	while (s) {
		struct ex_sink *n = s->next;

		s->ops->destroy(s);
		s = n;
	}
	l->head = NULL;
	l->next_tick = UINT64_MAX;
}
