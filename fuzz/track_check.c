/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * track_check.c - fuzz_track's checks: of each packet's verdict, and of
 * the whole table (tests/support's audit, and what only the harness knows:
 * the zones it used, their maximums, the events it saw), ending with a
 * full collector pass after which no entry that is due remains.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_track.h"
#include "support/audit.h"
#include "support/dump.h"

static uint64_t zone_max(const struct fz *f, uint16_t z)
{
	return z < FZ_ZONES ? f->set[z].max : 0;
}

void fz_check_verdict(struct fz *f, const struct ct_packet *pkt,
		      const struct ct_verdict *v, bool single)
{
	CHECK(v->cls <= CT_V_DROP, "verdict class %u", v->cls);
	if (v->cls == CT_V_INVALID)
		CHECK(v->reason != CT_PR_OK && v->reason < CT_PR_MAX,
		      "INVALID with reason %u", v->reason);
	if (v->cls == CT_V_DROP)
		CHECK(v->reason == CT_PR_TABLE_FULL || v->reason == CT_PR_CHAIN_TOO_LONG ||
		      v->reason == CT_PR_NO_MEMORY, "DROP with reason %u", v->reason);
	if (single && v->cls == CT_V_NEW && (v->flags & CT_VF_CREATED) &&
	    !(v->flags & CT_VF_DESTROYED)) {
		struct ct_conn_info ci;
		enum ct_dir d;

		CHECK(ct_table_lookup(f->thr, &pkt->tuple, &ci, &d) == 1,
		      "entry created by a packet is not found");
		CHECK(d == CT_DIR_ORIGINAL || ct_tuple_equal(&ci.orig, &ci.reply),
		      "creating packet found in the reply direction");
	}
	if (!f->max_lowered[0] && f->set[0].max)
		CHECK(ct_table_count(f->t) <= f->set[0].max,
		      "count %llu over the maximum %u",
		      (unsigned long long)ct_table_count(f->t), f->set[0].max);
}

/*
 * The table's invariants (support/audit.h: the count, the statistics, the
 * slots and each namespace's count agree with the dump; every entry is
 * CONFIRMED, not DYING, in a live namespace and a legal state, its reply
 * the inverted original, found again from either side; no tuple held
 * twice; every removal counted once), then what only the harness knows:
 * no entry in a zone it never used, none over a zone's maximum unless it
 * lowered it, NEW minus DESTROY events equal to the entries.
 */
static void check_table(struct fz *f)
{
	struct ts_audit a;
	uint64_t n, in_zones = 0;

	ts_audit(f->thr, TS_AUDIT_TABLE, &a);
	CHECK(a.violations == 0, "%s (%u broken)", a.first, a.violations);
	n = a.entries;
	for (uint16_t z = 0; z < FZ_ZONES; z++) {
		in_zones += a.zone_entries[z];
		if (z && zone_max(f, z) && !f->max_lowered[z])
			CHECK(a.zone_entries[z] <= zone_max(f, z), "zone %u over its maximum", z);
	}
	CHECK(in_zones == n, "%llu entries in zones the harness never used",
	      (unsigned long long)(n - in_zones));
	if (f->events)
		CHECK(f->ev_new - f->ev_destroy == n,
		      "NEW %llu - DESTROY %llu events != %llu entries",
		      (unsigned long long)f->ev_new, (unsigned long long)f->ev_destroy,
		      (unsigned long long)n);
}

static void dump_all(struct fz *f, struct ts_dump *d)
{
	d->n = 0;
	CHECK(ts_dump(f->thr, -1, d) == 0, "dump failed");
}

/* The whole-table check; ends with a full collector pass. */
void fz_check_all(struct fz *f)
{
	struct ts_dump d = { 0 };
	struct ct_gc_result r;

	check_table(f);

	/* the first call finishes the pass in progress, the second is whole */
	CHECK(ct_gc_step(f->thr, f->now, 0, &r) == 0 && r.pass_done, "gc step");
	CHECK(ct_gc_step(f->thr, f->now, 0, &r) == 0 && r.pass_done, "gc pass");
	dump_all(f, &d);
	for (size_t i = 0; i < d.n; i++)
		CHECK(d.v[i].expires > f->now,
		      "entry due %llu ns ago survived a full collector pass",
		      (unsigned long long)(f->now - d.v[i].expires));
	check_table(f);
	free(d.v);
}
