/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * audit.c - a table's invariants on a quiet table (audit.h).  It reads the
 * library's insides (rows, slabs, magazines) through its private headers:
 * a test's view, not an API.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "dump.h"
#include "base/state.h"
#include "proto/proto.h"
#include "table/htab.h"
#include "table/reclaim.h"

__attribute__((format(printf, 2, 3)))
static void broken(struct ts_audit *a, const char *fmt, ...)
{
	va_list ap;

	if (a->violations++)
		return;
	va_start(ap, fmt);
	vsnprintf(a->first, sizeof(a->first), fmt, ap);
	va_end(ap);
}

static int cmp_tuple(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct ct_tuple));
}

/* Occupied slots in every generation's rows. */
static uint64_t slots_used(struct ct_table *t)
{
	uint64_t n = 0;

	for (struct ct_htab *h = atomic_load(&t->htab); h; h = atomic_load(&h->future))
		for (uint64_t i = 0; i < h->n_rows; i++)
			n += ct_row_count(&h->rows[i]);
	return n;
}

static void audit_entries(struct ct_thread *self, struct ts_audit *a, const struct ts_dump *d)
{
	struct ct_tuple *keys = malloc((d->n * 2 + 1) * sizeof(*keys));
	size_t nk = 0;

	if (!keys)
		abort();
	for (size_t i = 0; i < d->n; i++) {
		const struct ct_conn_info *ci = &d->v[i];
		const struct ct_proto *p = ct_proto_find(ci->orig.l4);
		struct ct_conn_info back;
		struct ct_tuple inv;
		enum ct_dir dir;

		if (!(ci->status & CT_ST_CONFIRMED))
			broken(a, "entry not CONFIRMED");
		if (ci->status & CT_ST_DYING)
			broken(a, "dumped entry is DYING");
		if (!ct_ns_exists(self->t, ci->orig.zone))
			broken(a, "entry of zone %u, which has no namespace", ci->orig.zone);
		if (p->n_states &&
		    !(ci->l4state > 0 && ci->l4state < p->n_states &&
		      ct_l4_state_name(ci->orig.l4, ci->l4state) != NULL && ci->state_name != NULL))
			broken(a, "%s entry in illegal state %u", p->name, ci->l4state);
		/* the reply tuple is the inverted original unless a NAT
		 * binding changed it, and then the status says which side */
		if (ct_tuple_invert(&ci->orig, &inv) && !ct_tuple_equal(&inv, &ci->reply) &&
		    !(ci->status & CT_ST_NAT_MASK))
			broken(a, "reply is not the inverted original, and no NAT");
		if ((ci->status & CT_ST_NAT_MASK) && ct_tuple_equal(&inv, &ci->reply))
			broken(a, "a NAT status, but the reply is the inverted original");
		if (ci->reply.zone != ci->orig.zone || ci->reply.l3 != ci->orig.l3 ||
		    ci->reply.l4 != ci->orig.l4)
			broken(a, "reply of another zone or protocol");
		/* an IPS_NAT_CLASH entry is in the table under its reply only:
		 * its original tuple finds the entry that won */
		if (!(ci->status & CT_ST_NAT_CLASH) &&
		    (ct_table_lookup(self, &ci->orig, &back, &dir) != 1 || back.id != ci->id ||
		     dir != CT_DIR_ORIGINAL))
			broken(a, "entry not found from its original tuple");
		if (ct_table_lookup(self, &ci->reply, &back, &dir) != 1 || back.id != ci->id ||
		    dir != CT_DIR_REPLY)
			broken(a, "entry not found from its reply tuple");
		if (!(ci->status & CT_ST_NAT_CLASH))
			keys[nk++] = ci->orig;
		if (!ct_tuple_equal(&ci->orig, &ci->reply))
			keys[nk++] = ci->reply;
	}
	qsort(keys, nk, sizeof(*keys), cmp_tuple);
	for (size_t i = 1; i < nk; i++)
		if (ct_tuple_equal(&keys[i - 1], &keys[i]))
			broken(a, "one tuple held by two entries");
	free(keys);
}

static void audit_counts(struct ct_thread *self, struct ts_audit *a, const struct ts_dump *d)
{
	struct ct_table *t = self->t;
	uint64_t n = d->n, used;
	struct ct_stats st;
	uint32_t hi;

	if (ct_table_count(t) != n)
		broken(a, "count %llu but %llu entries reachable",
		       (unsigned long long)ct_table_count(t), (unsigned long long)n);
	/* a slot per entry, and a second one for an entry whose reply
	 * tuple a NAT binding changed (but IPS_NAT_CLASH's, which is in the
	 * table under its reply tuple only) */
	used = slots_used(t);
	{
		uint64_t want = 0;

		for (size_t i = 0; i < d->n; i++)
			want += (d->v[i].status & CT_ST_NAT_MASK) &&
				!(d->v[i].status & CT_ST_NAT_CLASH) ? 2 : 1;
		if (used != want)
			broken(a, "%llu slots occupied but %llu entries reachable want %llu",
			       (unsigned long long)used, (unsigned long long)n,
			       (unsigned long long)want);
	}
	ct_table_get_stats(t, &st);
	if (st.count != n)
		broken(a, "statistics count %llu but %llu entries reachable",
		       (unsigned long long)st.count, (unsigned long long)n);
	/* every removal is counted once, under exactly one cause */
	if (!a->restored && st.insert - st.expired - st.deleted - st.early_drop != n)
		broken(a, "insert %llu - expired %llu - deleted %llu - early_drop %llu != "
		       "%llu entries", (unsigned long long)st.insert,
		       (unsigned long long)st.expired, (unsigned long long)st.deleted,
		       (unsigned long long)st.early_drop, (unsigned long long)n);
	/* each namespace's count against its entries; every id ever
	 * published is below ns_hi */
	pthread_mutex_lock(&t->ns_lock);
	hi = t->ns_hi;
	pthread_mutex_unlock(&t->ns_lock);
	for (uint32_t z = 0; z < hi && z < CT_MAX_ZONES; z++) {
		uint64_t mine = 0;

		for (size_t i = 0; i < d->n; i++)
			mine += d->v[i].orig.zone == z;
		if (ct_ns_get_stats(t, (uint16_t)z, &st) == 0) {
			if (st.count != mine)
				broken(a, "zone %u counts %llu, holds %llu", z,
				       (unsigned long long)st.count, (unsigned long long)mine);
		} else if (mine) {
			broken(a, "%llu entries in zone %u, which does not exist",
			       (unsigned long long)mine, z);
		}
	}
}

static void audit_table(struct ct_thread *self, struct ts_audit *a)
{
	struct ts_dump d = { 0 };

	if (ts_dump(self, -1, &d) != 0)
		broken(a, "dump failed");
	a->entries = d.n;
	for (size_t i = 0; i < d.n; i++)
		if (d.v[i].orig.zone < TS_AUDIT_ZONES)
			a->zone_entries[d.v[i].orig.zone]++;
	audit_counts(self, a, &d);
	audit_entries(self, a, &d);
	free(d.v);
}

static void audit_memory(struct ct_thread *self, struct ts_audit *a)
{
	struct ct_table *t = self->t;
	struct ct_htab *h;
	struct ct_thread *thr;

	/* every queued free has run after this */
	ct_reclaim_flush(self);
	t->rcu->barrier();
	for (uint32_t z = 0; z < CT_MAX_ZONES; z++) {
		struct ct_ns *ns = atomic_load(&t->ns[z]);

		if (!ns)
			continue;
		a->live += (uint64_t)ct_ns_count(ns);
		for (int i = 0; i < CT_N_CLASSES; i++) {
			struct ct_slab *s = &ns->slabs[i];
			uint64_t slab_free = 0;

			for (struct ct_slab_chunk *c = s->chunks; c; c = c->next) {
				uint64_t bits = 0;

				a->carved += c->used;
				for (unsigned w = 0; w < CT_CHUNK_MAX_OBJS / 64; w++) {
					uint64_t m = c->freemap[w];

					bits += (uint64_t)__builtin_popcountll(m);
					/* a bit past the carved objects */
					if (w * 64 + 64 > c->used)
						m &= w * 64 >= c->used ? ~0ull
							: ~0ull << (c->used - w * 64);
					else
						m = 0;
					a->map_bad += m != 0;
				}
				a->map_bad += bits != c->n_free;
				slab_free += bits;
			}
			a->map_bad += slab_free != s->n_free;
			a->free_objs += slab_free;
		}
	}
	pthread_mutex_lock(&t->thr_lock);
	cds_list_for_each_entry(thr, &t->threads, node)
		for (int i = 0; i < CT_N_CLASSES; i++) {
			struct ct_slab_mag *m = &thr->mags[i];
			struct ct_ns *ns = m->n ? atomic_load(&t->ns[m->zone]) : NULL;

			/* a magazine of a torn-down namespace went with it */
			if (ns && ns->gen == m->slab_gen)
				a->cached += m->n;
		}
	pthread_mutex_unlock(&t->thr_lock);
	a->chunks = t->arena.chunks_in_use;
	a->chunk_bytes = a->chunks * CT_CHUNK_SIZE;
	h = atomic_load(&t->htab);
	a->rows = h->n_rows;
	for (uint64_t i = 0; i < h->n_rows; i++) {
		unsigned n = ct_row_count(&h->rows[i]);

		if (n > a->max_row)
			a->max_row = n;
	}
}

void ts_audit(struct ct_thread *self, unsigned what, struct ts_audit *a)
{
	memset(a, 0, sizeof(*a));
	a->restored = (what & TS_AUDIT_RESTORED) != 0;
	if (what & TS_AUDIT_TABLE)
		audit_table(self, a);
	if (what & TS_AUDIT_MEMORY)
		audit_memory(self, a);
}
