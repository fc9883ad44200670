/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hostile_audit.h - a test-only view of where a table's memory is, so
 * that "nothing is lost" can be checked exactly rather than through the
 * noise of resident-set figures.
 *
 * Every object a namespace's slabs ever carved out of their chunks is, at
 * any quiet moment (no packet in flight, every grace period elapsed), in
 * exactly one of three places: a live entry, its chunk's free map, or an
 * attached thread's magazine.  h_audit() waits for the pending grace
 * periods (rcu_barrier) and counts them; a leak (an entry unlinked but
 * never freed, a free batch dropped) makes carved > live + free + cached;
 * free objects are counted from the maps' bits, and map_bad counts any
 * disagreement with the counters kept beside them.
 * It also reports the arena's chunk count, whose high-water mark is what
 * the table cost in memory, including entries that waited for reclaim.
 *
 * Call it from an attached thread while no other thread uses the table.
 */
#ifndef CT_HOSTILE_AUDIT_H
#define CT_HOSTILE_AUDIT_H

#include "base/state.h"
#include "table/conn_key.h"
#include "table/htab.h"
#include "table/member.h"
#include "table/reclaim.h"
#include "table/resize.h"
#include "table/wheel.h"

struct h_audit {
	uint64_t carved, free_objs, cached, live;
	/* chunks whose free map disagrees with their counts (bits set, their
	 * n_free, the slab's n_free) or marks an object never carved: 0 */
	uint64_t map_bad;
	uint64_t chunks, chunk_bytes;
	uint64_t rows, max_row;      /* rows of the current generation, longest */
};

static inline void h_audit(struct ct_thread *self, struct h_audit *a)
{
	struct ct_table *t = self->t;
	struct ct_htab *h;
	struct ct_thread *thr;

	memset(a, 0, sizeof(*a));
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

#endif /* CT_HOSTILE_AUDIT_H */
