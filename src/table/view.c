/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * view.c - the table read and marked from outside: dump, lookup, mark
 * and labels, count, rows, settings.
 *
 * A dump holds resize_lock (migration pauses, so each entry is seen once)
 * and copies every entry out under its lock; a lookup and a mark take the
 * read side and the one entry's lock.  Events a mark causes are delivered
 * after the entry's lock is released.
 */
#include <errno.h>
#include <string.h>

#include "base/hash.h"
#include "table/conn_info.h"
#include "table/conn_key.h"
#include "table/event.h"
#include "table/member.h"

struct dump_ctx {
	struct ct_table *t;
	int zone;
	ct_dump_fn fn;
	void *arg;
	int ret;
};

static int dump_row(struct dump_ctx *d, struct ct_row *head)
{
	for (struct ct_row *r = head; r; r = ct_row_next(r))
		for (int k = 0; k < CT_ROW_SLOTS; k++) {
			uint64_t s = atomic_load_explicit(&r->slot[k], memory_order_acquire);
			struct ct_conn *c;
			struct ct_conn_info ci;

			/* an entry is dumped by its primary slot only */
			if (!s || (s & CT_SLOT_SECOND))
				continue;
			c = ct_slot_conn(s);
			if (d->zone >= 0 && ct_conn_zone(c) != d->zone)
				continue;
			ct_conn_lock(c);
			if (ct_conn_status(c) & CT_ST_DYING) {
				ct_conn_unlock(c);
				continue;
			}
			ct_conn_fill_info(d->t, c, &ci);
			ct_conn_unlock(c);
			if ((d->ret = d->fn(&ci, d->arg)) != 0)
				return d->ret;
		}
	return 0;
}

int ct_table_dump(struct ct_thread *thr, int zone, ct_dump_fn fn, void *arg)
{
	struct ct_table *t = thr->t;
	struct dump_ctx d = { t, zone, fn, arg, 0 };
	struct ct_htab *h, *f;

	pthread_mutex_lock(&t->resize_lock);
	ct_read_lock(thr);
	h = atomic_load_explicit(&t->htab, memory_order_acquire);
	f = atomic_load_explicit(&h->future, memory_order_acquire);
	for (uint64_t i = 0; i < h->n_rows && !d.ret; i++)
		dump_row(&d, &h->rows[i]);
	for (uint64_t i = 0; f && i < f->n_rows && !d.ret; i++)
		dump_row(&d, &f->rows[i]);
	ct_read_unlock(thr);
	pthread_mutex_unlock(&t->resize_lock);
	return d.ret;
}

int ct_table_lookup(struct ct_thread *thr, const struct ct_tuple *tuple,
		    struct ct_conn_info *ci, enum ct_dir *dir)
{
	struct ct_tuple inv;
	struct ct_conn *c;
	enum ct_dir d;
	int found = 0;

	if (!ct_tuple_invert(tuple, &inv))
		inv = *tuple;
	ct_read_lock(thr);
	c = ct_table_find(thr, ct_hash_tuple(&thr->t->key, tuple), tuple, &inv, &d);
	if (c) {
		ct_conn_lock(c);
		if (!(ct_conn_status(c) & CT_ST_DYING)) {
			if (ci)
				ct_conn_fill_info(thr->t, c, ci);
			if (dir)
				*dir = d;
			found = 1;
		}
		ct_conn_unlock(c);
	}
	ct_read_unlock(thr);
	return found;
}

static int set_attr(struct ct_thread *thr, const struct ct_tuple *tuple,
		    uint32_t mark, uint32_t mask, const uint8_t *labels,
		    ct_time_ns now)
{
	struct ct_tuple inv;
	struct ct_conn *c;
	struct ct_conn_info ci;
	enum ct_dir d;
	uint32_t what = 0;
	int found = 0;

	if (!ct_tuple_invert(tuple, &inv))
		inv = *tuple;
	ct_read_lock(thr);
	c = ct_table_find(thr, ct_hash_tuple(&thr->t->key, tuple), tuple, &inv, &d);
	if (c) {
		ct_conn_lock(c);
		if (!(ct_conn_status(c) & CT_ST_DYING)) {
			found = 1;
			if (labels) {
				struct ct_ext_labels *lb = ct_conn_labels(c);
				if (!lb) {
					found = -ENOSPC;
				} else if (memcmp(lb->bits, labels, 16) != 0) {
					memcpy(lb->bits, labels, 16);
					what = CT_EVW_LABEL;
				}
			} else {
				uint32_t m = (c->mark & ~mask) | (mark & mask);
				if (m != c->mark) {
					c->mark = m;
					what = CT_EVW_MARK;
				}
			}
			if (what && ct_events_on(thr->t))
				ct_conn_fill_info(thr->t, c, &ci);
		}
		ct_conn_unlock(c);
		if (what && ct_events_on(thr->t))
			ct_event_emit(thr->t, CT_EV_UPDATE, what, CT_DESTROY_NONE, now, &ci);
	}
	ct_read_unlock(thr);
	return found;
}

int ct_table_set_mark(struct ct_thread *thr, const struct ct_tuple *tuple,
		      uint32_t mark, uint32_t mask, ct_time_ns now)
{
	return set_attr(thr, tuple, mark, mask, NULL, now);
}

int ct_table_set_labels(struct ct_thread *thr, const struct ct_tuple *tuple,
			const uint8_t labels[16], ct_time_ns now)
{
	return set_attr(thr, tuple, 0, 0, labels, now);
}

uint64_t ct_table_count(const struct ct_table *t)
{
	struct ct_table *tt = (struct ct_table *)t;
	int64_t n = atomic_load(&tt->count);
	struct ct_thread *thr;

	pthread_mutex_lock(&tt->thr_lock);
	cds_list_for_each_entry(thr, &tt->threads, node)
		n += __atomic_load_n(&thr->count_delta, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&tt->thr_lock);
	return n < 0 ? 0 : (uint64_t)n;
}

uint64_t ct_table_rows(const struct ct_table *t)
{
	/* not t->htab->n_rows: the caller holds no read-side section, and
	 * a resize may retire and free that generation meanwhile */
	return atomic_load_explicit(&((struct ct_table *)t)->n_rows,
				    memory_order_relaxed);
}

void ct_table_get_settings(const struct ct_table *ct, struct ct_settings *out)
{
	struct ct_table *t = (struct ct_table *)ct;

	/* zone 0's copy may be replaced (and freed after a grace period) by
	 * ct_ns_set_settings: copy it out under the lock that serialises
	 * replacements, so the caller needs no read-side section */
	pthread_mutex_lock(&t->ns_lock);
	*out = *ct_ns_settings(ct_ns_get(t, 0));
	pthread_mutex_unlock(&t->ns_lock);
}

