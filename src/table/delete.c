/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * delete.c - removing one connection on request (ct_table_delete,
 * control.h), as ctnetlink's IPCTNL_MSG_CT_DELETE does for `conntrack -D`.
 *
 * The entry is found as a packet would find it (either direction), taken
 * under its lock so that a concurrent packet or collector cannot remove
 * it twice (CT_ST_DYING decides who wins), unlinked like every other
 * removal (ct_table_unlink: counts, slot, reclaim after a grace
 * period) and reported with its DESTROY outside every lock.  The calling
 * thread's batch of entries to free is handed to RCU before returning: a
 * control thread may not come back for a long time, and its deletions
 * should not wait for it.
 */
#include <string.h>

#include "ctrack/control.h"
#include "ctrack/events.h"
#include "base/conn.h"
#include "base/hash.h"
#include "base/state.h"
#include "table/conn_info.h"
#include "table/event.h"
#include "table/member.h"
#include "table/reclaim.h"
#include "table/thread.h"

int ct_table_delete(struct ct_thread *thr, const struct ct_tuple *tuple,
		    ct_time_ns now, struct ct_conn_info *out)
{
	struct ct_table *t = thr->t;
	struct ct_conn_info ci;
	struct ct_tuple inv;
	struct ct_conn *c;
	enum ct_dir d;
	int removed = 0;

	memset(&ci, 0, sizeof(ci));
	if (!ct_tuple_invert(tuple, &inv))
		inv = *tuple;
	ct_read_lock(thr);
	c = ct_table_find(thr, ct_hash_tuple(&t->key, tuple), tuple, &inv, &d);
	if (c) {
		ct_conn_lock(c);
		if (!(ct_conn_status(c) & CT_ST_DYING)) {
			ct_conn_fill_info(t, c, &ci);
			if (ct_table_unlink(thr, c)) {
				CT_CTR_INC(thr, deleted);
				removed = 1;
			}
		}
		ct_conn_unlock(c);
	}
	ct_read_unlock(thr);
	if (removed) {
		if (ct_events_on(t))
			ct_event_emit(t, CT_EV_DESTROY, CT_EVW_DESTROY, CT_DESTROY_DELETE,
				      now, &ci);
		if (out)
			*out = ci;
		ct_reclaim_flush(thr);
		ct_thread_fold_count(thr);
	}
	return removed;
}
