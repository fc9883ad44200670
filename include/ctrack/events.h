/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctrack/events.h - NEW / UPDATE / DESTROY, as ctnetlink reports them.
 *
 * A table has at most one event handler.  It is called synchronously, on
 * the thread whose work caused the event (a packet thread, the collector,
 * a flush or a namespace teardown), after the change and outside every
 * entry, row and slab lock, with a copy of the entry as it is after the
 * change.  Some callers still hold a table-wide lock while they deliver:
 * the collector its own (ct_gc_step), a whole-table flush the mutex that
 * pauses online resizing, a namespace teardown the namespace lock - so a
 * handler must not call into the table at all.
 * Which changes produce an UPDATE follows the kernel's event cache: a new
 * protocol state, ASSURED being set, a reply being seen, mark or labels
 * changing.  Events of one packet are merged into one, as the kernel
 * delivers its cached events once per packet.
 *
 * The handler must not call back into the table through the same thread
 * (no re-entry); it may copy what it needs and return.  With no handler
 * set, no event work is done at all.
 */
#ifndef CTRACK_EVENTS_H
#define CTRACK_EVENTS_H

#include <stdint.h>

#include "ctrack/table.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ct_event_type {
	CT_EV_NEW = 0,
	CT_EV_UPDATE = 1,
	CT_EV_DESTROY = 2,
};

/* Why something happened (bits of ct_event.what), as the kernel's IPCT_*. */
enum {
	CT_EVW_NEW = 1u << 0,
	CT_EVW_RELATED = 1u << 1,
	CT_EVW_DESTROY = 1u << 2,
	CT_EVW_REPLY = 1u << 3,      /* first packet in reply direction */
	CT_EVW_ASSURED = 1u << 4,
	CT_EVW_PROTOINFO = 1u << 5,  /* protocol state changed */
	CT_EVW_MARK = 1u << 8,
	CT_EVW_LABEL = 1u << 10,
};

/* Why an entry was destroyed (ct_event.destroy_cause). */
enum ct_destroy_cause {
	CT_DESTROY_NONE = 0,
	CT_DESTROY_TIMEOUT,     /* expired (collector or lookup reaping) */
	CT_DESTROY_PROTOCOL,    /* RST, refused connection, ... */
	CT_DESTROY_FLUSH,       /* ct_table_flush */
	CT_DESTROY_NS,          /* namespace teardown */
	CT_DESTROY_EARLY_DROP,  /* evicted to make room */
	CT_DESTROY_REOPEN,      /* TIME_WAIT entry replaced by a new SYN */
	CT_DESTROY_DELETE,      /* ct_table_delete (conntrack -D), control.h */
};

struct ct_event {
	enum ct_event_type type;
	uint32_t what;                 /* CT_EVW_* */
	enum ct_destroy_cause destroy_cause;
	ct_time_ns ts;                 /* the @now of the call that caused it */
	struct ct_conn_info conn;
};

typedef void (*ct_event_fn)(const struct ct_event *ev, void *arg);

/*
 * ct_table_set_event_handler - set (or, with @fn NULL, clear) the handler.
 * Call it before packet threads start or while none runs: the handler
 * pointer is read without synchronisation on the hot path.  O(1), cannot
 * fail.
 */
void ct_table_set_event_handler(struct ct_table *t, ct_event_fn fn, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* CTRACK_EVENTS_H */
