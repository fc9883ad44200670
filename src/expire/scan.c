/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * scan.c - the collector's scan: rows found due by reading their bounds
 * (the naive policies, CT_GC_LOCK_DUE, passes under early-drop pressure,
 * and tables too large for the wheel's refs).
 *
 * pf's purge thread locked only non-empty rows.  Here every row keeps a
 * lower bound of its earliest expiry, every 8 rows (a sub) a bound over
 * theirs and every 64 rows (a group) one over its 8 subs: a pass reads one
 * word per 64 idle rows, one line of sub bounds per due group, the 8 rows
 * of a due sub, and locks a row only when something in it is due.  Idle
 * cost follows the table's size divided by 64; busy cost follows the
 * number of expirations.  A busy pass is a cache-miss chain - group word,
 * sub line, rows, each row's due entries - pipelined: what is found due is
 * queued with the next level prefetched and worked on a few finds later
 * (gc_queue_group and below), so that the misses of several due entries
 * overlap.  The naive policies (lock every row, lock non-empty rows, yield
 * at every row) stay selectable so the benchmarks compare them in one run.
 */
#include "expire/run.h"

static bool row_nonempty(const struct ct_row *head)
{
	for (const struct ct_row *r = head; r; r = ct_row_next(r))
		for (int k = 0; k < CT_ROW_SLOTS; k++)
			if (atomic_load_explicit(&((struct ct_row *)r)->slot[k],
						 memory_order_relaxed))
				return true;
	return false;
}

/*
 * The rows [first, last) of one sub under the due-time rules, with no
 * yield per row and no early-drop pressure: the loop every busy pass
 * spends its time in, kept down to a load and two compares per row.  Due
 * rows are queued (their bounds then reach @sub and @group when they are
 * collected).  Returns the minimum of the other rows' bounds.
 */
static uint64_t gc_rows_due(struct gc_run *g, struct ct_row *rows,
			    uint64_t first, uint64_t last,
			    _Atomic uint64_t *sub, _Atomic uint64_t *group)
{
	ct_time_ns now = g->now;
	uint64_t gmin = CT_DUE_NEVER;

	for (uint64_t i = first; i < last; i++) {
		uint64_t rd = ct_due_get(&rows[i].due_inv);

		if (rd <= now && !ct_row_moved(&rows[i]))
			gc_queue_row(g, &rows[i], rd, sub, group);
		else if (rd < gmin)
			gmin = rd;
	}
	return gmin;
}

/*
 * The pipeline of a CT_GC_LOCK_DUE pass.  A due group is queued with its
 * line of sub bounds prefetched; when GC_QUEUE_GROUPS more have been
 * found its due subs are queued with their eight rows prefetched; when
 * GC_QUEUE_SUBS more subs have been found those rows' bounds are read and
 * the due rows queued with their entries prefetched (gc_queue_row).  At a
 * few due entries per million rows and short intervals every level is one
 * cache miss per due entry; found ahead, the misses overlap.  Each bound
 * is set to "never" when its level is queued, before anything it
 * summarises is read, and lowered as its parts are done.
 */
void gc_dequeue_sub(struct gc_run *g)
{
	uint64_t sub = g->sq[g->sq_head];
	uint64_t first = sub * CT_SUB_ROWS, last = first + CT_SUB_ROWS;
	_Atomic uint64_t *group = &g->h->group_due_inv[sub / CT_GROUP_SUBS];
	uint64_t smin;

	g->sq_head = (g->sq_head + 1) % GC_QUEUE_SUBS;
	g->sq_n--;
	if (last > g->h->n_rows)
		last = g->h->n_rows;
	smin = gc_rows_due(g, g->h->rows, first, last, &g->h->sub_due_inv[sub], group);
	g->res->rows_visited += last - first;
	ct_due_lower(&g->h->sub_due_inv[sub], smin);
	ct_due_lower(group, smin);
	if (smin < g->next_due)
		g->next_due = smin;
}

/* Start on sub @sub: its bound to "never" (before its rows are read),
 * and ask for its rows (adjacent lines: all at once) and their slot
 * bounds (8 rows' fill 96 bytes, two lines).  (One function for both: a
 * function of prefetches alone is "pure" to GCC, and its calls are
 * dropped.) */
static inline void gc_sub_begin(struct gc_run *g, uint64_t sub)
{
	struct ct_row *rows = &g->h->rows[sub * CT_SUB_ROWS];
	const char *sd = (const char *)ct_slot_due(g->h, sub * CT_SUB_ROWS);

	/* subs are whole: a table has a multiple of 64 rows (ct_htab_rows_round, table/htab.h) */
	_Static_assert(CT_GROUP_ROWS <= 64, "the smallest table holds whole groups");
	ct_due_set(&g->h->sub_due_inv[sub], CT_DUE_NEVER);
	for (int i = 0; i < CT_SUB_ROWS; i++)
		__builtin_prefetch(&rows[i], 1);
	__builtin_prefetch(sd, 0);
	__builtin_prefetch(sd + CT_SUB_ROWS * CT_ROW_SLOTS * sizeof(uint16_t) - 1, 0);
}

static void gc_queue_sub(struct gc_run *g, uint64_t sub)
{
	gc_sub_begin(g, sub);
	if (g->sq_n == GC_QUEUE_SUBS)
		gc_dequeue_sub(g);
	g->sq[(g->sq_head + g->sq_n) % GC_QUEUE_SUBS] = sub;
	g->sq_n++;
}

void gc_dequeue_group(struct gc_run *g)
{
	uint64_t grp = g->gq[g->gq_head];
	uint64_t s0 = grp * CT_GROUP_SUBS, s1 = s0 + CT_GROUP_SUBS;
	uint64_t gmin = CT_DUE_NEVER;

	g->gq_head = (g->gq_head + 1) % GC_QUEUE_GROUPS;
	g->gq_n--;
	if (s1 * CT_SUB_ROWS > g->h->n_rows)
		s1 = (g->h->n_rows + CT_SUB_ROWS - 1) / CT_SUB_ROWS;
	for (uint64_t sub = s0; sub < s1; sub++) {
		uint64_t sd = ct_due_get(&g->h->sub_due_inv[sub]);

		if (sd <= g->now)
			gc_queue_sub(g, sub);
		else if (sd < gmin)
			gmin = sd;
	}
	ct_due_lower(&g->h->group_due_inv[grp], gmin);
	if (gmin < g->next_due)
		g->next_due = gmin;
}

static void gc_queue_group(struct gc_run *g, uint64_t grp)
{
	ct_due_set(&g->h->group_due_inv[grp], CT_DUE_NEVER);
	__builtin_prefetch(&g->h->sub_due_inv[grp * CT_GROUP_SUBS], 1);
	if (g->gq_n == GC_QUEUE_GROUPS)
		gc_dequeue_group(g);
	g->gq[(g->gq_head + g->gq_n) % GC_QUEUE_GROUPS] = grp;
	g->gq_n++;
}

/* The policy a scan follows: the wheel's (a pass under early-drop
 * pressure, or a table too large for its refs) scans as the due-time
 * one. */
static enum ct_gc_lock_policy gc_scan_policy(const struct ct_table *t)
{
	return t->gc.lock == CT_GC_LOCK_WHEEL ? CT_GC_LOCK_DUE : t->gc.lock;
}

/* The same for every other case: the naive lock policies, early-drop
 * pressure, a yield offered after every row. */
static uint64_t gc_rows_policy(struct gc_run *g, struct ct_row *rows,
			       uint64_t first, uint64_t last)
{
	enum ct_gc_lock_policy pol = g->t->gc.lock;
	bool every_row = g->t->gc.yield == CT_GC_YIELD_EVERY_ROW;
	uint64_t gmin = CT_DUE_NEVER;

	for (uint64_t i = first; i < last; i++) {
		struct ct_row *r = &rows[i];
		uint64_t rd = ct_due_get(&r->due_inv);
		bool lock;

		switch (pol) {
		case CT_GC_LOCK_ALWAYS:
			lock = true;
			break;
		case CT_GC_LOCK_NONEMPTY:
			lock = row_nonempty(r);
			break;
		default:
			lock = rd <= g->now || (g->pressure && row_nonempty(r));
			break;
		}
		if (lock && !ct_row_moved(r))
			rd = gc_row(g, r);
		if (rd < gmin)
			gmin = rd;
		if (every_row) {
			gc_yield(g);
			if (g->retired)
				return gmin;    /* rows may be gone: touch nothing */
		}
	}
	return gmin;
}

/*
 * One group of 64 rows, a sub (8 rows) at a time.  Each sub's bound is
 * recomputed with the same store-"never"-then-scan-then-lower order as the
 * group's; under CT_GC_LOCK_DUE a sub whose bound has not passed is
 * skipped without reading its rows.  Returns false when the slice must end.
 */
static bool gc_group(struct gc_run *g, struct ct_htab *h, uint64_t grp,
		     uint64_t *next_due)
{
	struct ct_table *t = g->t;
	enum ct_gc_lock_policy pol = gc_scan_policy(t);
	uint64_t first = grp * CT_GROUP_ROWS;
	uint64_t last = first + CT_GROUP_ROWS;
	uint64_t gmin = CT_DUE_NEVER, visited = 0;
	bool summaries = pol == CT_GC_LOCK_DUE && !g->pressure;
	bool fast = (pol == CT_GC_LOCK_DUE || pol == CT_GC_LOCK_DUE_ROWS) &&
		    !g->pressure && t->gc.yield != CT_GC_YIELD_EVERY_ROW;

	if (last > h->n_rows)
		last = h->n_rows;
	if (summaries) {
		uint64_t gd = ct_due_get(&h->group_due_inv[grp]);
		if (gd > g->now) {
			g->res->groups_skipped++;
			if (gd < *next_due)
				*next_due = gd;
			return true;
		}
		if (fast) {
			/* the pipeline; one clock read per 8 due groups */
			gc_queue_group(g, grp);
			return gc_after_rows(g, CT_SUB_ROWS);
		}
	}
	ct_due_set(&h->group_due_inv[grp], CT_DUE_NEVER);
	for (uint64_t r0 = first; r0 < last; r0 += CT_SUB_ROWS) {
		_Atomic uint64_t *sd = &h->sub_due_inv[r0 / CT_SUB_ROWS];
		uint64_t r1 = r0 + CT_SUB_ROWS < last ? r0 + CT_SUB_ROWS : last;
		uint64_t smin;

		if (summaries) {
			smin = ct_due_get(sd);
			if (smin > g->now) {
				if (smin < gmin)
					gmin = smin;
				continue;
			}
		}
		if (fast) {
			gc_sub_begin(g, r0 / CT_SUB_ROWS);
			smin = gc_rows_due(g, h->rows, r0, r1, sd,
					   &h->group_due_inv[grp]);
		} else {
			ct_due_set(sd, CT_DUE_NEVER);
			smin = gc_rows_policy(g, h->rows, r0, r1);
		}
		if (g->retired)
			return false;   /* h may be gone: touch nothing */
		visited += r1 - r0;
		ct_due_lower(sd, smin);
		if (smin < gmin)
			gmin = smin;
	}
	g->res->rows_visited += visited;
	ct_due_lower(&h->group_due_inv[grp], gmin);
	if (gmin < *next_due)
		*next_due = gmin;
	return gc_after_rows(g, last - first);
}


/*
 * The scan from group *@grp on.  Under CT_GC_LOCK_DUE without pressure,
 * groups with nothing due are skipped in a tight loop of one load and a
 * compare each (the budget looked at every 1024 groups); every other
 * group is gc_group's.  Ends at the end of the table (a pass, and *@grp
 * back to 0), when the slice's budget is spent or it must stop, or when
 * the generation was retired at a yield (*@grp 0: a new generation is
 * started afresh).
 */
void gc_scan(struct gc_run *g, uint64_t *grp_io, uint64_t *next_due)
{
	struct ct_htab *h = g->h;
	uint64_t grp = *grp_io;
	bool skip = gc_scan_policy(g->t) == CT_GC_LOCK_DUE && !g->pressure;

	for (;;) {
		bool go_on;

		if (skip) {
			/* groups with nothing due, as gc_group would skip
			 * them, in a tight loop: one load and a compare each
			 * (the budget is looked at every 1024 groups) */
			uint64_t s0 = grp, ng = h->n_groups;
			_Atomic uint64_t *gdi = h->group_due_inv;
			/* on the inverted words: due is ~inv >= ~now, and
			 * the least bound the greatest word */
			uint64_t now_inv = ~g->now, nd_inv = ~*next_due;

			while (grp < ng) {
				uint64_t end = (grp | 1023) + 1;
				bool found = false;

				if (end > ng)
					end = ng;
				for (; grp < end; grp++) {
					uint64_t inv = atomic_load_explicit(&gdi[grp],
									    memory_order_seq_cst);

					if (inv >= now_inv) {
						found = true;
						break;
					}
					nd_inv = inv > nd_inv ? inv : nd_inv;
				}
				if (found || (g->deadline && gc_mono_ns() >= g->deadline))
					break;
			}
			*next_due = ~nd_inv;
			g->res->groups_skipped += grp - s0;
			if (grp >= h->n_groups) {
				grp = 0;
				g->res->pass_done = true;
				break;
			}
			if (grp > s0 && (grp & 1023) == 0 && g->deadline && gc_mono_ns() >= g->deadline)
				break;
		}
		go_on = gc_group(g, h, grp, next_due);

		if (g->retired) {
			grp = 0;        /* a new generation: start it afresh */
			break;
		}
		grp++;
		if (grp >= h->n_groups) {
			grp = 0;
			g->res->pass_done = true;
			break;
		}
		if (!go_on || g->stopped)
			break;
		/* budget check per group also covers the skipped ones */
		if (g->deadline && (grp & 15) == 0 && gc_mono_ns() >= g->deadline)
			break;
	}
	*grp_io = grp;
}
