/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * record_export.c - every live entry as a struct ct_record.
 *
 * The walk is a dump's (table/view.c): the resize lock held so that
 * migration pauses and each entry is met once, both generations' rows
 * while a resize is under way, each entry copied under its own lock.  It
 * is written again here rather than passed through ct_table_dump because
 * a dump hands out struct ct_conn_info, and a record needs the entry
 * itself - its private area, which the tracker turns into its record
 * (proto.h's to_record).  What the API shows of an entry comes from
 * ct_conn_fill_info, so that a record and a listing never disagree about
 * a tuple, a counter or an id.  Times become ages before @now, the
 * records' moment.
 */
#include <errno.h>
#include <string.h>

#include "base/state.h"
#include "proto/proto.h"
#include "table/conn_info.h"
#include "table/conn_key.h"
#include "table/htab.h"

static void fill_record(struct ct_table *t, struct ct_conn *c, ct_time_ns now,
			struct ct_record *r)
{
	const struct ct_proto *p = ct_proto_by_index(c->proto);
	struct ct_conn_info ci;

	ct_conn_fill_info(t, c, &ci);
	memset(r, 0, sizeof(*r));
	r->version = CT_RECORD_VERSION;
	r->orig = ci.orig;
	r->reply = ci.reply;
	r->id = ci.id;
	r->status = ci.status & ~(uint32_t)CT_ST_DYING;
	r->mark = ci.mark;
	r->l4state = ci.l4state;
	r->timeout_ns = ci.expires > now ? ci.expires - now : 0;
	if (r->timeout_ns > CT_RECORD_TIMEOUT_MAX_NS)
		r->timeout_ns = CT_RECORD_TIMEOUT_MAX_NS;
	if (c->ext & CT_EXT_ACCT) {
		r->has |= CT_RECORD_HAS_ACCT;
		memcpy(r->packets, ci.packets, sizeof(r->packets));
		memcpy(r->bytes, ci.bytes, sizeof(r->bytes));
	}
	if (c->ext & CT_EXT_TSTAMP) {
		r->has |= CT_RECORD_HAS_TSTAMP;
		r->first_seen_ago_ns = now > ci.first_seen ? now - ci.first_seen : 0;
		r->last_seen_ago_ns = now > ci.last_seen ? now - ci.last_seen : 0;
		/* a clock that went back between two packets must not make a
		 * record that ct_record_check refuses */
		if (r->last_seen_ago_ns > r->first_seen_ago_ns)
			r->last_seen_ago_ns = r->first_seen_ago_ns;
	}
	if (c->ext & CT_EXT_LABELS) {
		r->has |= CT_RECORD_HAS_LABELS;
		memcpy(r->labels, ci.labels, sizeof(r->labels));
	}
	if (p->to_record)
		p->to_record(c, &r->proto, now);
}

struct export_ctx {
	struct ct_table *t;
	int zone;
	ct_time_ns now;
	ct_record_fn fn;
	void *arg;
	int ret;
};

static void export_row(struct export_ctx *x, struct ct_row *head)
{
	for (struct ct_row *r = head; r && !x->ret; r = ct_row_next(r))
		for (int k = 0; k < CT_ROW_SLOTS && !x->ret; k++) {
			uint64_t s = atomic_load_explicit(&r->slot[k], memory_order_acquire);
			struct ct_record rec;
			struct ct_conn *c;

			/* a NAT entry's second slot is not its own: met at
			 * its primary one (htab.h) */
			if (!s || (s & CT_SLOT_SECOND))
				continue;
			c = ct_slot_conn(s);
			if (x->zone >= 0 && ct_conn_zone(c) != x->zone)
				continue;
			ct_conn_lock(c);
			if (ct_conn_status(c) & CT_ST_DYING) {
				ct_conn_unlock(c);
				continue;
			}
			fill_record(x->t, c, x->now, &rec);
			ct_conn_unlock(c);
			x->ret = x->fn(&rec, x->arg);
		}
}

int ct_record_export(struct ct_thread *thr, int zone, ct_time_ns now,
		     ct_record_fn fn, void *arg)
{
	struct export_ctx x;
	struct ct_htab *h, *f;
	struct ct_table *t;

	if (!thr || !fn)
		return -EINVAL;
	t = thr->t;
	x = (struct export_ctx){ t, zone, now, fn, arg, 0 };
	pthread_mutex_lock(&t->resize_lock);
	ct_read_lock(thr);
	h = atomic_load_explicit(&t->htab, memory_order_acquire);
	f = atomic_load_explicit(&h->future, memory_order_acquire);
	for (uint64_t i = 0; i < h->n_rows && !x.ret; i++)
		export_row(&x, &h->rows[i]);
	for (uint64_t i = 0; f && i < f->n_rows && !x.ret; i++)
		export_row(&x, &f->rows[i]);
	ct_read_unlock(thr);
	pthread_mutex_unlock(&t->resize_lock);
	return x.ret;
}
