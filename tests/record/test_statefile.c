/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_statefile.c - the state file (include/ctrack/statefile.h).
 *
 *  - A table saved and restored into a fresh one is the same table: the
 *    same records (every field, ids apart), counters, zones and zone
 *    counters, and the caller's bytes come back.
 *  - Every kind of damage is found before anything is restored, and named:
 *    every byte of a file changed (each the way a bad sector or a bit flip
 *    would: all its bits, and one), the file cut at every length - at every
 *    record boundary, every block boundary and inside both -, a zero-length
 *    file, another program's files (a capture, a text), a wrong magic, a
 *    version this build does not read, bytes after the end, a record that
 *    its block's checksum vouches for but that no entry can be, counts
 *    that disagree.
 *  - Saving is atomic: a save that fails (the file-size limit makes its
 *    writes fail) leaves the previous file as it was and no temporary
 *    file behind.
 *  - Restoring: records whose time ran out meanwhile get their DESTROY; a
 *    clash with an entry already in the table stops with the record named.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctrack/ctrack.h"
#include "support/tuple.h"

#define SEC 1000000000ull
#define T0 (1700000000ull * SEC)

struct tab {
	struct ct_table *t;
	struct ct_thread *thr;
	int destroys;
};

static void count_destroy(const struct ct_event *ev, void *arg)
{
	struct tab *x = arg;

	if (ev->type == CT_EV_DESTROY)
		x->destroys++;
}

static void tab_new(struct tab *x)
{
	struct ct_table_config cfg;

	memset(x, 0, sizeof(*x));
	ct_table_config_default(&cfg);
	cfg.settings.acct = 1;
	cfg.settings.timestamp = 1;
	cfg.settings.checksum = 0;
	cfg.labels = true;
	assert_int_equal(ct_table_create(&cfg, &x->t), 0);
	x->thr = ct_thread_attach(x->t);
	assert_non_null(x->thr);
	ct_table_set_event_handler(x->t, count_destroy, x);
}

static void tab_free(struct tab *x)
{
	ct_table_set_event_handler(x->t, NULL, NULL);
	ct_thread_detach(x->thr);
	ct_table_destroy(x->t);
}

static char dir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ctrack-statefile-%d-XXXXXX", (int)getpid());
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	(void)state;
	while (d && (e = readdir(d)) != NULL) {
		char p[600];

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		unlink(p);
	}
	if (d)
		closedir(d);
	rmdir(dir);
	return 0;
}

static void path_of(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

/* A table with something of everything: UDP and TCP entries in zones 0
 * and 3 made by packets (with their counters), a few invalid packets
 * (counters by reason), an entry with labels. */
static void fill(struct tab *x, unsigned n_udp)
{
	struct ct_verdict v;

	assert_int_equal(ct_ns_create(x->t, 3, NULL), 0);
	for (unsigned i = 0; i < n_udp; i++) {
		struct ct_tuple t = ts_tuple4(IPPROTO_UDP, 0x0a000001 + i, 0x0a000002, 1000 + (uint16_t)i, 53);
		struct ct_tuple r = ts_reverse(&t);
		struct ct_packet p;

		t.zone = r.zone = (uint16_t)(i % 2 ? 3 : 0);
		ts_packet_of(&p, &t);
		p.l3_len = 60;
		assert_int_equal(ct_process(x->thr, &p, T0 + i * SEC / 10, &v), 0);
		if (i % 3 == 0) {
			ts_packet_of(&p, &r);
			p.l3_len = 90;
			assert_int_equal(ct_process(x->thr, &p, T0 + i * SEC / 10 + 1000, &v), 0);
		}
	}
	{
		/* a TCP SYN, then a FIN before any SYN-ACK (INVALID) */
		struct ct_tuple t = ts_tuple4(IPPROTO_TCP, 0x0a000009, 0x0a000002, 40000, 80);
		struct ct_packet p;
		uint8_t lb[16] = { 0 };

		ts_packet_of(&p, &t);
		p.u.tcp.flags = CT_TCP_SYN;
		p.u.tcp.seq = 100;
		p.u.tcp.window = 1000;
		p.u.tcp.hdr_len = 20;
		p.l3_len = 40;
		assert_int_equal(ct_process(x->thr, &p, T0, &v), 0);
		assert_int_equal(v.cls, CT_V_NEW);
		p.u.tcp.flags = CT_TCP_FIN;
		assert_int_equal(ct_process(x->thr, &p, T0, &v), 0);
		assert_int_equal(v.cls, CT_V_INVALID);
		lb[2] = 0x81;
		assert_int_equal(ct_table_set_labels(x->thr, &t, lb, T0), 1);
	}
}

struct recs {
	size_t n;
	struct ct_record v[512];
};

static int collect(const struct ct_record *r, void *arg)
{
	struct recs *rs = arg;

	assert_true(rs->n < 512);
	memcpy(&rs->v[rs->n], r, sizeof(*r));
	rs->v[rs->n].id = 0;
	rs->n++;
	return 0;
}

static int cmp_rec(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct ct_record));
}

static void records_of(struct tab *x, ct_time_ns now, struct recs *rs)
{
	rs->n = 0;
	assert_int_equal(ct_record_export(x->thr, -1, now, collect, rs), 0);
	qsort(rs->v, rs->n, sizeof(rs->v[0]), cmp_rec);
}

static void save(struct tab *x, const char *path, ct_time_ns now)
{
	struct ct_state_save_opts o = { .now = now, .zone = -1, .counters = true,
					.app = "the caller's own", .app_len = 16 };
	struct ct_state_error err;
	struct ct_state_save_result res;

	assert_int_equal(ct_state_save(x->thr, path, &o, &res, &err), 0);
	assert_int_equal(res.records, ct_table_count(x->t));
}

static struct recs ra, rb;

static void a_restored_table_is_the_saved_table(void **state)
{
	struct tab a, b;
	char path[400];
	struct ct_state_file *f;
	struct ct_state_error err;
	struct ct_state_info info;
	struct ct_state_restore_opts ro = { .now = T0 + 5 * SEC, .counters = true };
	struct ct_state_restore_result res;
	struct ct_stats sa, sb;
	const char *app;
	uint32_t app_len;
	struct stat st;

	(void)state;
	path_of(path, sizeof(path), "round.state");
	tab_new(&a);
	fill(&a, 40);
	save(&a, path, T0 + 5 * SEC);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(ct_state_open(path, &f, &err), 0);
	ct_state_get_info(f, &info);
	/* no NAT in it: the oldest version, which readers before NAT read */
	assert_int_equal(info.version, CT_STATE_VERSION_MIN);
	assert_int_equal(info.saved_now, T0 + 5 * SEC);
	assert_int_equal(info.records, 41);
	assert_int_equal(info.zones, 2);
	assert_true(info.counters);
	app = ct_state_app(f, &app_len);
	assert_int_equal(app_len, 16);
	assert_memory_equal(app, "the caller's own", 16);
	tab_new(&b);
	assert_int_equal(ct_state_restore(f, b.thr, &ro, &res, &err), 0);
	ct_state_close(f);
	assert_int_equal(res.restored, 41);
	assert_int_equal(res.expired, 0);
	assert_int_equal(res.zones_created, 1);
	assert_int_equal(b.destroys, 0);
	records_of(&a, T0 + 5 * SEC, &ra);
	records_of(&b, T0 + 5 * SEC, &rb);
	assert_int_equal(ra.n, rb.n);
	assert_memory_equal(ra.v, rb.v, ra.n * sizeof(ra.v[0]));
	ct_table_get_stats(a.t, &sa);
	ct_table_get_stats(b.t, &sb);
	assert_true(sa.invalid > 0 && sa.insert == 41);
	sa.gc_passes = sb.gc_passes = 0;
	sa.gc_rows_locked = sb.gc_rows_locked = 0;
	sa.gc_wheel_seeds = sb.gc_wheel_seeds = 0;
	sa.resizes = sb.resizes = 0;
	assert_memory_equal(&sa, &sb, sizeof(sa));
	for (uint16_t z = 0; z <= 3; z += 3) {
		assert_int_equal(ct_ns_get_stats(a.t, z, &sa), 0);
		assert_int_equal(ct_ns_get_stats(b.t, z, &sb), 0);
		assert_memory_equal(&sa, &sb, sizeof(sa));
	}
	tab_free(&a);
	tab_free(&b);
}

/* ---- damage ---- */

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *b;
	long n;

	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	b = malloc((size_t)n + 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	*len = (size_t)n;
	return b;
}

static enum ct_state_err open_mem(const uint8_t *b, size_t len, struct ct_state_error *err)
{
	struct ct_state_file *f = NULL;
	int r = ct_state_open_mem(b, len, &f, err);
	char msg[256];

	if (r == 0) {
		ct_state_close(f);
		return CT_STATE_OK;
	}
	assert_null(f);
	assert_true(r < 0);
	/* every failure reads as a sentence */
	ct_state_strerror(err, msg, sizeof(msg));
	assert_true(strlen(msg) > 10);
	return err->err;
}

static uint8_t *small_file(size_t *len)
{
	struct tab a;
	char path[400];
	uint8_t *b;

	path_of(path, sizeof(path), "small.state");
	tab_new(&a);
	fill(&a, 6);
	save(&a, path, T0 + SEC);
	tab_free(&a);
	b = slurp(path, len);
	unlink(path);
	return b;
}

/* The block boundaries of a good file, and its records' (the layout of
 * docs/record.md: a 64-byte header, 16-byte block headers). */
static size_t boundaries(const uint8_t *b, size_t len, size_t *blk, size_t *rec, size_t *n_rec)
{
	size_t off = 64, n = 0;

	*n_rec = 0;
	while (off < len) {
		uint32_t type = (uint32_t)b[off] | (uint32_t)b[off + 1] << 8;
		uint32_t plen = (uint32_t)b[off + 4] | (uint32_t)b[off + 5] << 8 |
				(uint32_t)b[off + 6] << 16;

		blk[n++] = off;
		if (type == 1)
			for (size_t o = off + 16; o < off + 16 + plen;
			     o += (size_t)(b[o] | b[o + 1] << 8))
				rec[(*n_rec)++] = o;
		off += 16 + plen;
	}
	assert_int_equal(off, len);
	return n;
}

static void every_changed_byte_is_found(void **state)
{
	size_t len;
	uint8_t *b = small_file(&len);
	struct ct_state_error err;
	unsigned by_err[CT_STATE_E_ARG + 1] = { 0 };

	(void)state;
	assert_int_equal(open_mem(b, len, &err), CT_STATE_OK);
	for (size_t i = 0; i < len; i++) {
		for (int how = 0; how < 2; how++) {
			uint8_t old = b[i];
			enum ct_state_err e;

			b[i] ^= how ? (uint8_t)(1u << (i % 8)) : 0xff;
			e = open_mem(b, len, &err);
			b[i] = old;
			if (e == CT_STATE_OK)
				print_message("# byte %zu changed (%s) was not found\n", i,
					      how ? "one bit" : "all bits");
			assert_int_not_equal(e, CT_STATE_OK);
			/* named by where it is */
			if (i < 8)
				assert_int_equal(e, CT_STATE_E_MAGIC);
			else if (i < 12)
				assert_int_equal(e, CT_STATE_E_VERSION);
			else if (i < 64)
				assert_int_equal(e, CT_STATE_E_HEADER);
			else
				assert_true(e == CT_STATE_E_CHECKSUM || e == CT_STATE_E_BLOCK ||
					    e == CT_STATE_E_TRUNCATED);
			by_err[e]++;
		}
	}
	print_message("# %zu bytes changed two ways: %u magic, %u version, %u header, "
		      "%u checksum, %u block, %u cut short\n", len, by_err[CT_STATE_E_MAGIC],
		      by_err[CT_STATE_E_VERSION], by_err[CT_STATE_E_HEADER],
		      by_err[CT_STATE_E_CHECKSUM], by_err[CT_STATE_E_BLOCK],
		      by_err[CT_STATE_E_TRUNCATED]);
	free(b);
}

static void every_truncation_is_found(void **state)
{
	size_t len, blk[16], rec[64], n_rec, n_blk;
	uint8_t *b = small_file(&len);
	struct ct_state_error err;

	(void)state;
	n_blk = boundaries(b, len, blk, rec, &n_rec);
	assert_true(n_blk >= 4 && n_rec == 7);
	assert_int_equal(open_mem(b, 0, &err), CT_STATE_E_EMPTY);
	for (size_t l = 1; l < len; l++)
		assert_int_equal(open_mem(b, l, &err), CT_STATE_E_TRUNCATED);
	/* at a block boundary the bytes before are sound: what is missing
	 * is named */
	for (size_t k = 1; k < n_blk; k++) {
		char msg[256];

		assert_int_equal(open_mem(b, blk[k], &err), CT_STATE_E_TRUNCATED);
		ct_state_strerror(&err, msg, sizeof(msg));
		assert_non_null(strstr(msg, "end block"));
	}
	/* at a record boundary, and inside a record */
	for (size_t k = 1; k < n_rec; k++) {
		assert_int_equal(open_mem(b, rec[k], &err), CT_STATE_E_TRUNCATED);
		assert_int_equal(open_mem(b, rec[k] + 3, &err), CT_STATE_E_TRUNCATED);
	}
	free(b);
}

/* CRC32c bit by bit (Castagnoli, reflected 0x82f63b78): the test's own,
 * so that the files it mends do not depend on the library's. */
static uint32_t crc32c_bits(const uint8_t *p, size_t n, uint32_t prev)
{
	uint32_t c = ~prev;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
	}
	return ~c;
}

/* Recompute the header's checksum after a change. */
static void fix_header(uint8_t *b)
{
	uint32_t c = crc32c_bits(b, 60, 0);

	b[60] = (uint8_t)c;
	b[61] = (uint8_t)(c >> 8);
	b[62] = (uint8_t)(c >> 16);
	b[63] = (uint8_t)(c >> 24);
}

static void fix_block(uint8_t *b, size_t off)
{
	uint32_t plen = (uint32_t)b[off + 4] | (uint32_t)b[off + 5] << 8 |
			(uint32_t)b[off + 6] << 16 | (uint32_t)b[off + 7] << 24;
	uint32_t c = crc32c_bits(b + off + 16, plen, crc32c_bits(b + off, 12, 0));

	b[off + 12] = (uint8_t)c;
	b[off + 13] = (uint8_t)(c >> 8);
	b[off + 14] = (uint8_t)(c >> 16);
	b[off + 15] = (uint8_t)(c >> 24);
}

static void foreign_empty_and_future_files_are_named(void **state)
{
	size_t len, flen;
	uint8_t *b = small_file(&len), *other;
	struct ct_state_error err;
	uint8_t *longer;
	const char *foreign[] = {
		CAPTURES_DIR "/crafted/link-ipv4.pcap",
		CAPTURES_DIR "/README.md",
		CAPTURES_DIR "/crafted/file-gzip.pcap.gz",
	};

	(void)state;
	/* our header's checksum is the library's: the bitwise one agrees */
	{
		uint8_t copy[64];

		memcpy(copy, b, 64);
		fix_header(copy);
		assert_memory_equal(copy, b, 64);
	}
	for (size_t i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++) {
		other = slurp(foreign[i], &flen);
		assert_int_equal(open_mem(other, flen, &err), CT_STATE_E_MAGIC);
		free(other);
	}
	/* a version this build does not read, its header otherwise sound */
	b[8] = CT_STATE_VERSION + 1;
	fix_header(b);
	assert_int_equal(open_mem(b, len, &err), CT_STATE_E_VERSION);
	assert_int_equal(err.version, CT_STATE_VERSION + 1);
	b[8] = 0;
	fix_header(b);
	assert_int_equal(open_mem(b, len, &err), CT_STATE_E_VERSION);
	assert_int_equal(err.version, 0);
	b[8] = 1;
	fix_header(b);
	assert_int_equal(open_mem(b, len, &err), CT_STATE_OK);
	/* another magic */
	b[0] = 'X';
	assert_int_equal(open_mem(b, len, &err), CT_STATE_E_MAGIC);
	b[0] = 'C';
	/* the header promising one record more */
	b[32]++;
	fix_header(b);
	assert_int_equal(open_mem(b, len, &err), CT_STATE_E_COUNT);
	b[32]--;
	fix_header(b);
	/* bytes after the end */
	longer = malloc(len + 3);
	assert_non_null(longer);
	memcpy(longer, b, len);
	memset(longer + len, 0, 3);
	assert_int_equal(open_mem(longer, len + 3, &err), CT_STATE_E_TRAILING);
	assert_int_equal(err.offset, len);
	free(longer);
	free(b);
}

static void a_record_its_checksum_vouches_for_is_still_checked(void **state)
{
	size_t len, blk[16], rec[64], n_rec;
	uint8_t *b = small_file(&len);
	struct ct_state_error err;
	size_t tcp = 0, blk_of = 0;

	(void)state;
	boundaries(b, len, blk, rec, &n_rec);
	for (size_t k = 0; k < n_rec; k++)
		if (b[rec[k] + 5] == IPPROTO_TCP)
			tcp = k;
	/* its block */
	for (size_t k = 0; blk[k] < rec[tcp]; k++)
		blk_of = blk[k];
	/* the TCP record's original-direction window scale: byte 16 of its
	 * protocol section (record_codec.c), after the 48-byte IPv4 core
	 * and the section's length byte */
	assert_int_equal(b[rec[tcp] + 48], 55);
	b[rec[tcp] + 49 + 16] = 15;
	fix_block(b, blk_of);
	assert_int_equal(open_mem(b, len, &err), CT_STATE_E_RECORD);
	assert_int_equal(err.reason, CT_RECORD_R_PROTO);
	assert_int_equal(err.record, tcp);
	free(b);
}

/* ---- saving ---- */

/* Files named @prefix... in the test's directory (the target and any
 * temporary file beside it, PATH.XXXXXX). */
static unsigned files_in_dir(const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned n = 0;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL)
		if (!strncmp(e->d_name, prefix, strlen(prefix)))
			n++;
	closedir(d);
	return n;
}

static void a_failed_save_leaves_the_old_file(void **state)
{
	struct tab a;
	char path[400];
	struct ct_state_save_opts o = { .now = T0, .zone = -1, .counters = true };
	struct ct_state_error err;
	struct rlimit old, lim;
	size_t len_before, len_after;
	uint8_t *before, *after;
	char msg[256];
	int r;

	(void)state;
	path_of(path, sizeof(path), "atomic.state");
	tab_new(&a);
	fill(&a, 6);
	save(&a, path, T0);
	before = slurp(path, &len_before);
	assert_int_equal(files_in_dir("atomic.state"), 1);
	/* more entries, so that the next file is larger; then a file-size
	 * limit below it: its writes fail with EFBIG */
	for (unsigned i = 0; i < 300; i++) {
		struct ct_tuple t = ts_tuple4(IPPROTO_UDP, 0x0b000001 + i, 0x0a000002, 7, 53);
		struct ct_packet p;
		struct ct_verdict v;

		ts_packet_of(&p, &t);
		assert_int_equal(ct_process(a.thr, &p, T0, &v), 0);
	}
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = len_before + 100;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	r = ct_state_save(a.thr, path, &o, NULL, &err);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(r, -EFBIG);
	assert_int_equal(err.err, CT_STATE_E_IO);
	assert_int_equal(err.sys_errno, EFBIG);
	ct_state_strerror(&err, msg, sizeof(msg));
	assert_non_null(strstr(msg, "write"));
	/* the old file, whole; nothing else */
	after = slurp(path, &len_after);
	assert_int_equal(len_after, len_before);
	assert_memory_equal(after, before, len_before);
	assert_int_equal(files_in_dir("atomic.state"), 1);
	/* a save to a directory that does not exist says so */
	path_of(path, sizeof(path), "no-such-dir/x.state");
	assert_int_equal(ct_state_save(a.thr, path, &o, NULL, &err), -ENOENT);
	assert_int_equal(err.err, CT_STATE_E_IO);
	free(before);
	free(after);
	tab_free(&a);
}

/* ---- restoring ---- */

static void restore_moves_the_clock_and_stops_at_a_clash(void **state)
{
	struct tab a, b;
	char path[400];
	struct ct_state_file *f;
	struct ct_state_error err;
	struct ct_state_restore_opts ro = { .now = T0 + 3600 * SEC, .counters = true };
	struct ct_state_restore_result res;
	char msg[256];

	(void)state;
	path_of(path, sizeof(path), "clock.state");
	tab_new(&a);
	fill(&a, 20);
	save(&a, path, T0 + 5 * SEC);
	assert_int_equal(ct_state_open(path, &f, &err), 0);
	/* an hour later: the UDP entries (30 s, 120 s) are gone, the TCP
	 * SYN_SENT one (120 s) too */
	ro.elapsed_ns = 3600 * SEC - 5 * SEC;
	tab_new(&b);
	assert_int_equal(ct_state_restore(f, b.thr, &ro, &res, &err), 0);
	assert_int_equal(res.restored, 0);
	assert_int_equal(res.expired, 21);
	assert_int_equal(b.destroys, 21);
	assert_int_equal(ct_table_count(b.t), 0);
	tab_free(&b);
	/* into a table that already holds one of them */
	tab_new(&b);
	fill(&b, 1);
	ro.now = T0 + 5 * SEC;
	ro.elapsed_ns = 0;
	assert_int_equal(ct_state_restore(f, b.thr, &ro, &res, &err), -EEXIST);
	assert_int_equal(err.err, CT_STATE_E_IMPORT);
	assert_int_equal(err.reason, CT_RECORD_R_EXISTS);
	ct_state_strerror(&err, msg, sizeof(msg));
	assert_non_null(strstr(msg, "a live entry holds the tuple"));
	ct_state_close(f);
	tab_free(&b);
	tab_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_restored_table_is_the_saved_table),
		cmocka_unit_test(every_changed_byte_is_found),
		cmocka_unit_test(every_truncation_is_found),
		cmocka_unit_test(foreign_empty_and_future_files_are_named),
		cmocka_unit_test(a_record_its_checksum_vouches_for_is_still_checked),
		cmocka_unit_test(a_failed_save_leaves_the_old_file),
		cmocka_unit_test(restore_moves_the_clock_and_stops_at_a_clash),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
