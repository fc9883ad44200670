/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_record.c - libFuzzer target for the record layer's readers: the
 * state file reader (ct_state_open_mem, ct_state_restore), the record
 * decoder and the import (ct_record_decode, ct_record_import).
 *
 * Input: byte 0 picks what the rest is.  Bit 0 clear: a state file,
 * opened from a heap block of exactly its size (so that AddressSanitizer
 * sees a read past it) and, if it opens, restored into a fresh table
 * (bits 1-3 of byte 0: how long ago it was saved, 0 to 7 hours; bit 4:
 * with its counters).  Bit 0 set: a stream of encoded records, each
 * decoded where it lies in a block of exactly the stream's size and
 * imported (bit 1: as a commit; bits 2-4: seconds elapsed, times 60);
 * after a refusal the stream goes on one byte further.  Bit 5, either
 * way: the table does NAT (NATed records go in under both keys; without
 * it they are refused, CT_RECORD_R_NAT_OFF).
 *
 * Invariants, after each input (abort on failure):
 *  - a state file that opens has the records its header says, and every
 *    one of them goes in, or ran out, or the restore names the record that
 *    clashed or found no room;
 *  - the table holds exactly what it counts; every entry exported from it
 *    passes ct_record_check, encodes and decodes back to itself, and is
 *    found again by a lookup of either of its tuples (a NAT_CLASH loser:
 *    of its reply tuple);
 *  - a second table made of those records exports the same records
 *    (nothing a record carries is lost or invented by a table).
 * fuzz/seedgen_record.c writes the seeds (state files of tables of every
 * protocol, record streams).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/ctrack.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_CHECK(c) do { if (!(c)) abort(); } while (0)
#define SEC 1000000000ull
#define T0 (1700000000ull * SEC)
#define MAX_RECS 4096

struct tab {
	struct ct_table *t;
	struct ct_thread *thr;
	bool nat;
};

/* A table, with NAT (NATed records go in) or without (they are refused:
 * CT_RECORD_R_NAT_OFF) as the input's mode byte says. */
static void tab_new(struct tab *x, bool nat)
{
	struct ct_table_config cfg;

	ct_table_config_default(&cfg);
	cfg.nat = nat;
	x->nat = nat;
	cfg.settings.acct = 1;
	cfg.settings.timestamp = 1;
	cfg.settings.max = 2 * MAX_RECS;
	cfg.labels = true;
	FZ_CHECK(ct_table_create(&cfg, &x->t) == 0);
	x->thr = ct_thread_attach(x->t);
	FZ_CHECK(x->thr);
}

static void tab_free(struct tab *x)
{
	ct_thread_detach(x->thr);
	ct_table_destroy(x->t);
}

struct recs {
	size_t n;
	struct ct_record *v;
};

static int collect(const struct ct_record *r, void *arg)
{
	struct recs *rs = arg;

	FZ_CHECK(rs->n < 2 * MAX_RECS);
	memcpy(&rs->v[rs->n++], r, sizeof(*r));
	return 0;
}

static int cmp_rec(const void *a, const void *b)
{
	struct ct_record x, y;

	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	x.id = y.id = 0;
	return memcmp(&x, &y, sizeof(x));
}

static void export_sorted(struct tab *x, struct recs *rs)
{
	rs->n = 0;
	FZ_CHECK(ct_record_export(x->thr, -1, T0, collect, rs) == 0);
	for (size_t i = 0; i < rs->n; i++)
		rs->v[i].id = 0;
	qsort(rs->v, rs->n, sizeof(*rs->v), cmp_rec);
}

static void ensure_zone(struct ct_table *t, uint16_t zone)
{
	if (zone && !ct_ns_exists(t, zone))
		FZ_CHECK(ct_ns_create(t, zone, NULL) == 0);
}

/* The table's invariants (see the top). */
static void check_table(struct tab *x)
{
	static struct ct_record va[2 * MAX_RECS], vb[2 * MAX_RECS];
	struct recs a = { 0, va }, b = { 0, vb };
	uint8_t buf[CT_RECORD_ENC_MAX];
	struct tab y;

	export_sorted(x, &a);
	FZ_CHECK(a.n == ct_table_count(x->t));
	tab_new(&y, x->nat);
	for (size_t i = 0; i < a.n; i++) {
		struct ct_record back;
		enum ct_record_reason why;
		size_t n;

		FZ_CHECK(ct_record_check(&a.v[i]) == CT_RECORD_OK);
		n = ct_record_encode(&a.v[i], buf, sizeof(buf), &why);
		FZ_CHECK(n > 0);
		FZ_CHECK(ct_record_decode(buf, n, &back, &why) == n);
		FZ_CHECK(memcmp(&back, &a.v[i], sizeof(back)) == 0);
		/* the loser of a clash is in under its reply tuple only (its
		 * original is the winner's, if the winner is there) */
		FZ_CHECK((a.v[i].status & CT_ST_NAT_CLASH) ||
			 ct_table_lookup(x->thr, &a.v[i].orig, NULL, NULL) == 1);
		FZ_CHECK(ct_table_lookup(x->thr, &a.v[i].reply, NULL, NULL) == 1);
		ensure_zone(y.t, a.v[i].orig.zone);
		/* exported at T0 with time left: imported at T0 it lives */
		FZ_CHECK(ct_record_import(y.thr, &a.v[i], T0, 0, 0, &why) ==
			 (a.v[i].timeout_ns ? 1 : 0));
	}
	export_sorted(&y, &b);
	/* records with no time left ended on the way: the rest is the same */
	for (size_t i = 0, j = 0; i < a.n; i++) {
		if (!a.v[i].timeout_ns)
			continue;
		FZ_CHECK(j < b.n && cmp_rec(&a.v[i], &b.v[j]) == 0);
		j++;
	}
	tab_free(&y);
}

static void fuzz_state_file(uint8_t mode, const uint8_t *data, size_t size)
{
	struct ct_state_restore_opts ro;
	struct ct_state_restore_result res;
	struct ct_state_error err;
	struct ct_state_file *f;
	struct ct_state_info info;
	uint8_t *copy = malloc(size ? size : 1);
	struct tab x;
	int r;

	FZ_CHECK(copy);
	memcpy(copy, data, size);
	r = ct_state_open_mem(copy, size, &f, &err);
	if (r < 0) {
		char msg[256];

		FZ_CHECK(f == NULL && err.err != CT_STATE_OK);
		ct_state_strerror(&err, msg, sizeof(msg));
		FZ_CHECK(msg[0]);
		free(copy);
		return;
	}
	ct_state_get_info(f, &info);
	FZ_CHECK(info.records <= size / 48);
	tab_new(&x, mode & 0x20);
	memset(&ro, 0, sizeof(ro));
	ro.now = T0;
	ro.elapsed_ns = (uint64_t)((mode >> 1) & 7) * 3600 * SEC;
	ro.counters = mode & 0x10;
	r = ct_state_restore(f, x.thr, &ro, &res, &err);
	if (r == 0)
		FZ_CHECK(res.restored + res.expired == info.records);
	else
		FZ_CHECK(err.err == CT_STATE_E_IMPORT && err.record < info.records &&
			 err.reason != CT_RECORD_OK);
	ct_state_close(f);
	free(copy);
	check_table(&x);
	tab_free(&x);
}

static void fuzz_records(uint8_t mode, const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	unsigned flags = mode & 2 ? CT_RECORD_F_COMMIT : 0;
	uint64_t elapsed = (uint64_t)((mode >> 2) & 7) * 60 * SEC;
	size_t off = 0;
	unsigned n = 0;
	struct tab x;

	FZ_CHECK(copy);
	memcpy(copy, data, size);
	tab_new(&x, mode & 0x20);
	while (off < size && n < MAX_RECS) {
		struct ct_record rec;
		enum ct_record_reason why;
		size_t used = ct_record_decode(copy + off, size - off, &rec, &why);
		int r;

		if (!used) {
			FZ_CHECK(why != CT_RECORD_OK);
			off++;
			continue;
		}
		FZ_CHECK(ct_record_check(&rec) == CT_RECORD_OK);
		ensure_zone(x.t, rec.orig.zone);
		r = ct_record_import(x.thr, &rec, T0, elapsed, flags, &why);
		FZ_CHECK(r == 1 || r == 0 || r == -EEXIST || r == -ENOSPC ||
			 (r == -EOPNOTSUPP && !x.nat && why == CT_RECORD_R_NAT_OFF));
		FZ_CHECK(r >= 0 ? why == CT_RECORD_OK : why != CT_RECORD_OK);
		off += used;
		n++;
	}
	free(copy);
	check_table(&x);
	tab_free(&x);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	if (data[0] & 1)
		fuzz_records(data[0], data + 1, size - 1);
	else
		fuzz_state_file(data[0], data + 1, size - 1);
	return 0;
}
