/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * state_file.c - a table's entries and counters in a file, and back
 * (ctrack/statefile.h; the format in docs/record.md).
 *
 *   header   64 bytes: "CTRKSTAT", version, header size, the moment of
 *            the save (table clock, wall clock), record count, zone
 *            count, flags, the caller's byte count, CRC32c of the rest
 *   blocks   16-byte header (type, payload length, count, CRC32c of the
 *            header's first 12 bytes and the payload) + payload:
 *            COUNTERS, ZONES, APP at most once each, in that order, then
 *            RECORDS (at most 1 MiB of encoded records each), then END
 *            (the record count and block count again) and nothing after.
 *
 * Why blocks, each with its own checksum: a damaged byte is found and
 * named by the block it is in, a truncation anywhere - at a block
 * boundary too, where every byte before it is sound - by the missing end
 * block, and the writer streams the table without holding it all in
 * memory (one block buffered; the header, which needs the count, is
 * written last, at offset 0).  The reader maps the file and checks all of
 * it before a single record goes into a table, so a bad file changes
 * nothing; restoring then walks the checked blocks again.
 *
 * The library never prints: failures are struct ct_state_error, and
 * ct_state_strerror makes them a sentence.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base/state.h"
#include "ctrack/ns.h"
#include "ctrack/stats.h"
#include "ctrack/statefile.h"
#include "parse/checksum.h"
#include "record/record_priv.h"
#include "table/stats.h"

static const char sf_magic[8] = { 'C', 'T', 'R', 'K', 'S', 'T', 'A', 'T' };

#define SF_HDR 64u
#define SF_BLK 16u
#define SF_RECORDS_MAX (1u << 20)       /* a RECORDS block's payload */
#define SF_F_COUNTERS 0x1u

enum {
	SF_B_RECORDS = 1,
	SF_B_COUNTERS = 2,
	SF_B_ZONES = 3,
	SF_B_APP = 4,
	SF_B_END = 5,
};

/* The table's counters a file keeps, in this order (struct ct_counters;
 * invalid_by_reason follows by name). */
#define SF_N_FIXED 16u
#define SF_ZONE_SIZE (4u + 6u * 8u)
#define RESTORE_AHEAD 8u

static int set_err(struct ct_state_error *e, enum ct_state_err err, int sys,
		   uint64_t off, const char *what)
{
	if (e) {
		memset(e, 0, sizeof(*e));
		e->err = err;
		e->sys_errno = sys;
		e->offset = off;
		e->what = what;
	}
	switch (err) {
	case CT_STATE_OK:
		return 0;
	case CT_STATE_E_IO:
		return -(sys ? sys : EIO);
	case CT_STATE_E_ARG:
		return -EINVAL;
	case CT_STATE_E_IMPORT:
		return -(sys ? sys : EINVAL);
	default:
		return -EINVAL;
	}
}

/* ------------------------------------------------------------------ */
/* writing                                                             */

struct sf_writer {
	int fd;
	uint64_t off;            /* bytes written after the header */
	uint64_t records;
	uint64_t nat_records;    /* with NAT status bits: the file is v2 */
	uint32_t blocks;
	uint32_t count;          /* records in buf */
	size_t used;
	uint8_t *buf;            /* SF_RECORDS_MAX + CT_RECORD_ENC_MAX */
	int sys_errno;
	const char *what;
	enum ct_record_reason reason;
};

static int write_all(int fd, const struct iovec *iov, int n)
{
	struct iovec v[2];
	int k = 0;

	memcpy(v, iov, (size_t)n * sizeof(*v));
	while (k < n) {
		ssize_t w = writev(fd, v + k, n - k);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (k < n && (size_t)w >= v[k].iov_len) {
			w -= (ssize_t)v[k].iov_len;
			k++;
		}
		if (k < n) {
			v[k].iov_base = (uint8_t *)v[k].iov_base + w;
			v[k].iov_len -= (size_t)w;
		}
	}
	return 0;
}

static void blk_header(uint8_t *h, uint32_t type, const void *payload, uint32_t len,
		       uint32_t count)
{
	rec_put32(h, type);
	rec_put32(h + 4, len);
	rec_put32(h + 8, count);
	rec_put32(h + 12, ct_crc32c(payload, len, ct_crc32c(h, 12, 0)));
}

static int put_block(struct sf_writer *w, uint32_t type, const void *payload,
		     uint32_t len, uint32_t count)
{
	uint8_t h[SF_BLK];
	struct iovec iov[2] = { { h, SF_BLK }, { (void *)payload, len } };
	int r;

	blk_header(h, type, payload, len, count);
	if ((r = write_all(w->fd, iov, len ? 2 : 1)) < 0) {
		w->sys_errno = -r;
		w->what = "write";
		return r;
	}
	w->off += SF_BLK + len;
	w->blocks++;
	return 0;
}

static int flush_records(struct sf_writer *w)
{
	int r;

	if (!w->count)
		return 0;
	r = put_block(w, SF_B_RECORDS, w->buf, (uint32_t)w->used, w->count);
	w->used = 0;
	w->count = 0;
	return r;
}

static int on_record(const struct ct_record *rec, void *arg)
{
	struct sf_writer *w = arg;
	enum ct_record_reason why;
	size_t n;
	int r;

	if (w->used + CT_RECORD_ENC_MAX > SF_RECORDS_MAX && (r = flush_records(w)) < 0)
		return r;
	n = ct_record_encode(rec, w->buf + w->used, CT_RECORD_ENC_MAX, &why);
	if (!n) {
		/* an entry this library made that its own check refuses:
		 * a bug, reported rather than written */
		w->reason = why;
		w->what = "encode";
		return -EPROTO;
	}
	w->used += n;
	w->count++;
	w->records++;
	if (rec->status & (CT_ST_NAT_MASK | CT_ST_NAT_DONE_MASK | CT_ST_NAT_CLASH))
		w->nat_records++;
	return 0;
}

static size_t put_counters(uint8_t *p, const struct ct_stats *s, uint32_t *n_reasons)
{
	const uint64_t fixed[SF_N_FIXED] = {
		s->found, s->invalid, s->insert, s->insert_failed, s->drop,
		s->early_drop, s->error, s->search_restart, s->clash_resolve,
		s->chaintoolong, s->packets, s->untracked, s->ignored, s->related,
		s->expired, s->deleted,
	};
	uint8_t *q = p;

	rec_put32(q, SF_N_FIXED);
	q += 4;
	for (unsigned i = 0; i < SF_N_FIXED; i++, q += 8)
		rec_put64(q, fixed[i]);
	*n_reasons = 0;
	for (int i = 1; i < CT_PR_MAX; i++) {
		const char *name = ct_parse_reason_name((enum ct_parse_reason)i);
		size_t l = strlen(name);

		if (!s->invalid_by_reason[i] || l > 255)
			continue;
		*q++ = (uint8_t)l;
		for (size_t k = 0; k < l; k++)   /* the name without its NUL */
			*q++ = (uint8_t)name[k];
		rec_put64(q, s->invalid_by_reason[i]);
		q += 8;
		(*n_reasons)++;
	}
	return (size_t)(q - p);
}

static void put_zone(uint8_t *p, uint16_t id, const struct ct_stats *s)
{
	rec_put16(p, id);
	rec_put16(p + 2, 0);
	rec_put64(p + 4, s->insert);
	rec_put64(p + 12, s->invalid);
	rec_put64(p + 20, s->error);
	rec_put64(p + 28, s->drop);
	rec_put64(p + 36, s->early_drop);
	rec_put64(p + 44, s->expired);
}

/* The zones that exist (only @zone if >= 0), with their counters. */
static uint8_t *collect_zones(struct ct_table *t, int zone, uint32_t *n, size_t *len)
{
	uint32_t hi, cap = 16;
	uint8_t *b = malloc(cap * SF_ZONE_SIZE), *nb;

	*n = 0;
	if (!b)
		return NULL;
	pthread_mutex_lock(&t->ns_lock);
	hi = t->ns_hi;
	pthread_mutex_unlock(&t->ns_lock);
	for (uint32_t id = zone >= 0 ? (uint32_t)zone : 0;
	     id < hi && id <= UINT16_MAX && (zone < 0 || id == (uint32_t)zone); id++) {
		struct ct_stats s;

		if (ct_ns_get_stats(t, (uint16_t)id, &s) < 0)
			continue;
		if (*n == cap) {
			cap *= 2;
			if (!(nb = realloc(b, (size_t)cap * SF_ZONE_SIZE))) {
				free(b);
				return NULL;
			}
			b = nb;
		}
		put_zone(b + (size_t)*n * SF_ZONE_SIZE, (uint16_t)id, &s);
		(*n)++;
	}
	*len = (size_t)*n * SF_ZONE_SIZE;
	return b;
}

static int fsync_dir(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd, r = 0;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if ((size_t)(slash - path) < sizeof(dir))
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		return -ENAMETOOLONG;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		r = -errno;
	close(fd);
	return r;
}

static int write_body(struct ct_thread *thr, struct sf_writer *w,
		      const struct ct_state_save_opts *o, uint32_t *n_zones)
{
	struct ct_table *t = thr->t;
	uint8_t cbuf[4 + SF_N_FIXED * 8 + CT_PR_MAX * (1 + 255 + 8)];
	uint32_t n_reasons;
	uint8_t *zb;
	size_t zlen = 0, clen;
	uint8_t end[16];
	int r;

	if (o->counters) {
		struct ct_stats s;

		ct_table_get_stats(t, &s);
		clen = put_counters(cbuf, &s, &n_reasons);
		if ((r = put_block(w, SF_B_COUNTERS, cbuf, (uint32_t)clen, n_reasons)) < 0)
			return r;
	}
	zb = collect_zones(t, o->zone, n_zones, &zlen);
	if (!zb) {
		w->sys_errno = ENOMEM;
		w->what = "allocate";
		return -ENOMEM;
	}
	r = put_block(w, SF_B_ZONES, zb, (uint32_t)zlen, *n_zones);
	free(zb);
	if (r < 0)
		return r;
	if (o->app_len && (r = put_block(w, SF_B_APP, o->app, o->app_len, 0)) < 0)
		return r;
	r = ct_record_export(thr, o->zone, o->now, on_record, w);
	if (r < 0) {
		if (!w->what) {
			w->sys_errno = -r;
			w->what = "export";
		}
		return r;
	}
	if ((r = flush_records(w)) < 0)
		return r;
	rec_put64(end, w->records);
	rec_put32(end + 8, w->blocks);
	rec_put32(end + 12, 0);
	return put_block(w, SF_B_END, end, sizeof(end), 0);
}

int ct_state_save(struct ct_thread *thr, const char *path,
		  const struct ct_state_save_opts *o, struct ct_state_save_result *res,
		  struct ct_state_error *err)
{
	struct sf_writer w;
	uint8_t hdr[SF_HDR];
	char tmp[PATH_MAX];
	uint32_t n_zones = 0;
	uint64_t wall;
	int r;

	if (!thr || !path || !o || (o->app_len && !o->app) || o->app_len > CT_STATE_APP_MAX ||
	    o->zone > UINT16_MAX)
		return set_err(err, CT_STATE_E_ARG, 0, 0, "arguments");
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp))
		return set_err(err, CT_STATE_E_IO, ENAMETOOLONG, 0, "name the temporary file");
	wall = o->wall_ns;
	if (!wall) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		wall = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	}
	memset(&w, 0, sizeof(w));
	w.buf = malloc(SF_RECORDS_MAX + CT_RECORD_ENC_MAX);
	if (!w.buf)
		return set_err(err, CT_STATE_E_IO, ENOMEM, 0, "allocate");
	w.fd = mkostemp(tmp, O_CLOEXEC);
	if (w.fd < 0) {
		r = errno;
		free(w.buf);
		return set_err(err, CT_STATE_E_IO, r, 0, "create the temporary file");
	}
	/* the header last, when the counts are known: its place first */
	memset(hdr, 0, sizeof(hdr));
	if (lseek(w.fd, SF_HDR, SEEK_SET) < 0) {
		w.sys_errno = errno;
		w.what = "seek";
		r = -w.sys_errno;
	} else {
		r = write_body(thr, &w, o, &n_zones);
	}
	if (r >= 0) {
		memcpy(hdr, sf_magic, 8);
		/* the oldest version that holds what was written
		 * (statefile.h) */
		rec_put32(hdr + 8, w.nat_records ? CT_STATE_VERSION : CT_STATE_VERSION_MIN);
		rec_put32(hdr + 12, SF_HDR);
		rec_put64(hdr + 16, o->now);
		rec_put64(hdr + 24, wall);
		rec_put64(hdr + 32, w.records);
		rec_put32(hdr + 40, n_zones);
		rec_put32(hdr + 44, o->counters ? SF_F_COUNTERS : 0);
		rec_put32(hdr + 48, o->app_len);
		rec_put32(hdr + 60, ct_crc32c(hdr, 60, 0));
		while ((r = (int)pwrite(w.fd, hdr, SF_HDR, 0)) < 0 && errno == EINTR)
			;
		if (r != (int)SF_HDR) {
			w.sys_errno = r < 0 ? errno : EIO;
			w.what = "write";
			r = -w.sys_errno;
		}
	}
	if (r >= 0 && fsync(w.fd) < 0) {
		w.sys_errno = errno;
		w.what = "fsync";
		r = -w.sys_errno;
	}
	if (close(w.fd) < 0 && r >= 0) {
		w.sys_errno = errno;
		w.what = "close";
		r = -w.sys_errno;
	}
	free(w.buf);
	if (r >= 0 && rename(tmp, path) < 0) {
		w.sys_errno = errno;
		w.what = "rename";
		r = -w.sys_errno;
	}
	if (r < 0) {
		unlink(tmp);
		if (w.reason) {
			r = set_err(err, CT_STATE_E_RECORD, 0, SF_HDR + w.off, "encode");
			if (err) {
				err->reason = w.reason;
				err->record = w.records;
			}
			return r;
		}
		return set_err(err, CT_STATE_E_IO, w.sys_errno ? w.sys_errno : -r, 0,
			       w.what ? w.what : "write");
	}
	/* the rename is durable once the directory is */
	if ((r = fsync_dir(path)) < 0)
		return set_err(err, CT_STATE_E_IO, -r, 0, "fsync the directory");
	if (res) {
		res->records = w.records;
		res->bytes = SF_HDR + w.off;
	}
	if (err)
		memset(err, 0, sizeof(*err));
	return 0;
}

/* ------------------------------------------------------------------ */
/* reading                                                             */

struct ct_state_file {
	const uint8_t *buf;
	size_t len;
	bool mapped;
	struct ct_state_info info;
	const uint8_t *counters;     /* payload, or NULL */
	uint32_t counters_len, n_reasons;
	const uint8_t *zones;
	const uint8_t *app;
	size_t first_records;        /* offset of the first RECORDS block */
	size_t end;                  /* offset of the END block */
};

/* Largest payload a block of @type may have. */
static uint64_t blk_max(uint32_t type)
{
	switch (type) {
	case SF_B_RECORDS:
		return SF_RECORDS_MAX;
	case SF_B_COUNTERS:
		return 4 + SF_N_FIXED * 8 + (uint64_t)CT_PR_MAX * (1 + 255 + 8);
	case SF_B_ZONES:
		return 65536ull * SF_ZONE_SIZE;
	case SF_B_APP:
		return CT_STATE_APP_MAX;
	case SF_B_END:
		return 16;
	default:
		return 0;
	}
}

static int check_counters(const uint8_t *p, uint32_t len, uint32_t n, uint64_t off,
			  struct ct_state_error *e)
{
	size_t o = 4 + SF_N_FIXED * 8;

	if (len < o || rec_get32(p) != SF_N_FIXED)
		return set_err(e, CT_STATE_E_BLOCK, 0, off, "counters block layout");
	for (uint32_t i = 0; i < n; i++) {
		if (o >= len || o + 1 + p[o] + 8 > len || p[o] == 0)
			return set_err(e, CT_STATE_E_BLOCK, 0, off + o, "counters block layout");
		o += 1 + p[o] + 8;
	}
	if (o != len)
		return set_err(e, CT_STATE_E_COUNT, 0, off + o, "counters block's reason count");
	return 0;
}

static int check_records(struct ct_state_file *f, const uint8_t *p, uint32_t len,
			 uint32_t n, uint64_t off, uint64_t *index,
			 struct ct_state_error *e)
{
	size_t o = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct ct_record rec;
		enum ct_record_reason why;
		size_t used = ct_record_decode(p + o, len - o, &rec, &why);

		/* version 1 predates NAT in records: no writer put one there */
		if (used && f->info.version < 2 &&
		    (rec.status & (CT_ST_NAT_MASK | CT_ST_NAT_DONE_MASK | CT_ST_NAT_CLASH))) {
			used = 0;
			why = CT_RECORD_R_NAT;
		}
		if (!used) {
			int r = set_err(e, CT_STATE_E_RECORD, 0, off + o, NULL);

			if (e) {
				e->reason = why;
				e->record = *index;
			}
			return r;
		}
		o += used;
		(*index)++;
	}
	if (o != len)
		return set_err(e, CT_STATE_E_COUNT, 0, off + o, "records block's record count");
	return 0;
}

static int check_file(struct ct_state_file *f, struct ct_state_error *e)
{
	const uint8_t *b = f->buf;
	size_t len = f->len, off = SF_HDR;
	uint64_t index = 0;
	uint32_t blocks = 0, last_type = 0, zones = 0;
	uint32_t flags, app_len;

	if (len == 0 || !b)      /* an empty file is not mapped: no buffer */
		return set_err(e, CT_STATE_E_EMPTY, 0, 0, NULL);
	if (memcmp(b, sf_magic, len < 8 ? len : 8) != 0)
		return set_err(e, CT_STATE_E_MAGIC, 0, 0, NULL);
	if (len < 12)
		return set_err(e, CT_STATE_E_TRUNCATED, 0, len, "header");
	f->info.version = rec_get32(b + 8);
	if (f->info.version < CT_STATE_VERSION_MIN || f->info.version > CT_STATE_VERSION) {
		int r = set_err(e, CT_STATE_E_VERSION, 0, 8, NULL);

		if (e)
			e->version = f->info.version;
		return r;
	}
	if (len < SF_HDR)
		return set_err(e, CT_STATE_E_TRUNCATED, 0, len, "header");
	if (rec_get32(b + 60) != ct_crc32c(b, 60, 0))
		return set_err(e, CT_STATE_E_HEADER, 0, 0, "header checksum");
	flags = rec_get32(b + 44);
	app_len = rec_get32(b + 48);
	if (rec_get32(b + 12) != SF_HDR || (flags & ~SF_F_COUNTERS) ||
	    app_len > CT_STATE_APP_MAX || rec_get64(b + 52) != 0)
		return set_err(e, CT_STATE_E_HEADER, 0, 12, "header fields");
	f->info.saved_now = rec_get64(b + 16);
	f->info.saved_wall_ns = rec_get64(b + 24);
	f->info.records = rec_get64(b + 32);
	f->info.zones = rec_get32(b + 40);
	f->info.counters = flags & SF_F_COUNTERS;
	f->info.app_len = app_len;
	f->first_records = 0;

	for (;;) {
		uint32_t type, plen, count;
		const uint8_t *h = b + off, *p;

		if (len - off < SF_BLK)
			return set_err(e, CT_STATE_E_TRUNCATED, 0, len,
				       off == len ? "end block" : "block header");
		type = rec_get32(h);
		plen = rec_get32(h + 4);
		count = rec_get32(h + 8);
		p = h + SF_BLK;
		if (plen > (blk_max(type) ? blk_max(type) : SF_RECORDS_MAX))
			return set_err(e, CT_STATE_E_BLOCK, 0, off + 4, "block length");
		if (plen > len - off - SF_BLK)
			return set_err(e, CT_STATE_E_TRUNCATED, 0, len, "block");
		if (rec_get32(h + 12) != ct_crc32c(p, plen, ct_crc32c(h, 12, 0)))
			return set_err(e, CT_STATE_E_CHECKSUM, 0, off, NULL);
		if (!blk_max(type))
			return set_err(e, CT_STATE_E_BLOCK, 0, off, "block type");
		/* COUNTERS, ZONES, APP once each, in that order, before the
		 * records; RECORDS any number; END once, last */
		if (type != SF_B_RECORDS && type != SF_B_END && type <= last_type)
			return set_err(e, CT_STATE_E_BLOCK, 0, off, "block order");
		if (type != SF_B_RECORDS && type != SF_B_END && last_type == SF_B_RECORDS)
			return set_err(e, CT_STATE_E_BLOCK, 0, off, "block order");
		switch (type) {
		case SF_B_COUNTERS:
			if (!f->info.counters)
				return set_err(e, CT_STATE_E_BLOCK, 0, off, "counters block");
			if (check_counters(p, plen, count, off + SF_BLK, e) < 0)
				return -EINVAL;
			f->counters = p;
			f->counters_len = plen;
			f->n_reasons = count;
			break;
		case SF_B_ZONES:
			if (plen != (uint64_t)count * SF_ZONE_SIZE || count != f->info.zones)
				return set_err(e, CT_STATE_E_COUNT, 0, off + 8, "zone count");
			for (uint32_t i = 0; i < count; i++)
				if (rec_get16(p + (size_t)i * SF_ZONE_SIZE + 2) != 0 ||
				    (i && rec_get16(p + (size_t)i * SF_ZONE_SIZE) <=
					  rec_get16(p + (size_t)(i - 1) * SF_ZONE_SIZE)))
					return set_err(e, CT_STATE_E_BLOCK, 0,
						       off + SF_BLK + (size_t)i * SF_ZONE_SIZE,
						       "zone list");
			f->zones = p;
			zones = count;
			break;
		case SF_B_APP:
			if (plen != app_len || count != 0)
				return set_err(e, CT_STATE_E_COUNT, 0, off + 4, "application bytes");
			f->app = p;
			break;
		case SF_B_RECORDS:
			if (!count)
				return set_err(e, CT_STATE_E_BLOCK, 0, off + 8, "empty records block");
			if (!f->first_records)
				f->first_records = off;
			if (check_records(f, p, plen, count, off + SF_BLK, &index, e) < 0)
				return -EINVAL;
			break;
		case SF_B_END:
			if (plen != 16 || count != 0 || rec_get32(p + 12) != 0)
				return set_err(e, CT_STATE_E_BLOCK, 0, off, "end block");
			if (rec_get64(p) != index || index != f->info.records ||
			    rec_get32(p + 8) != blocks)
				return set_err(e, CT_STATE_E_COUNT, 0, off, "record or block count");
			if (f->info.counters && !f->counters)
				return set_err(e, CT_STATE_E_BLOCK, 0, off, "counters block missing");
			if (zones != f->info.zones || (app_len && !f->app))
				return set_err(e, CT_STATE_E_COUNT, 0, off, "zone or application block missing");
			if (off + SF_BLK + plen != len)
				return set_err(e, CT_STATE_E_TRAILING, 0, off + SF_BLK + plen, NULL);
			f->end = off;
			return 0;
		default:
			break;
		}
		last_type = type;
		blocks++;
		off += SF_BLK + plen;
	}
}

/* @len bytes at @buf, mapped by ct_state_open (@mapped) or the caller's. */
static int open_buf(const void *buf, size_t len, bool mapped, struct ct_state_file **out,
		    struct ct_state_error *err)
{
	struct ct_state_file *f = calloc(1, sizeof(*f));
	int r;

	if (!f)
		return set_err(err, CT_STATE_E_IO, ENOMEM, 0, "allocate");
	f->buf = buf;
	f->len = len;
	f->mapped = mapped;
	if ((r = check_file(f, err)) < 0) {
		free(f);
		return r;
	}
	if (err)
		memset(err, 0, sizeof(*err));
	*out = f;
	return 0;
}

int ct_state_open_mem(const void *buf, size_t len, struct ct_state_file **out,
		      struct ct_state_error *err)
{
	if (!out || (!buf && len))
		return set_err(err, CT_STATE_E_ARG, 0, 0, "arguments");
	*out = NULL;
	return open_buf(buf, len, false, out, err);
}

int ct_state_open(const char *path, struct ct_state_file **out,
		  struct ct_state_error *err)
{
	struct stat st;
	void *map = NULL;
	int fd, r;

	if (!path || !out)
		return set_err(err, CT_STATE_E_ARG, 0, 0, "arguments");
	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return set_err(err, CT_STATE_E_IO, errno, 0, "open");
	if (fstat(fd, &st) < 0) {
		r = errno;
		close(fd);
		return set_err(err, CT_STATE_E_IO, r, 0, "stat");
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return set_err(err, CT_STATE_E_IO, S_ISDIR(st.st_mode) ? EISDIR : EINVAL, 0,
			       "read (not a regular file)");
	}
	if (st.st_size > 0) {
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			r = errno;
			close(fd);
			return set_err(err, CT_STATE_E_IO, r, 0, "map");
		}
	}
	close(fd);
	r = open_buf(map, (size_t)st.st_size, map != NULL, out, err);
	if (r < 0 && map)
		munmap(map, (size_t)st.st_size);
	return r;
}

void ct_state_close(struct ct_state_file *f)
{
	if (!f)
		return;
	if (f->mapped)
		munmap((void *)f->buf, f->len);
	free(f);
}

void ct_state_get_info(const struct ct_state_file *f, struct ct_state_info *info)
{
	*info = f->info;
}

const void *ct_state_app(const struct ct_state_file *f, uint32_t *len)
{
	if (len)
		*len = f->app ? f->info.app_len : 0;
	return f->app;
}

/* ------------------------------------------------------------------ */
/* restoring                                                           */

static void restore_counters(struct ct_table *t, const struct ct_state_file *f)
{
	struct ct_counters c;
	const uint8_t *p = f->counters + 4;
	uint64_t v[SF_N_FIXED];
	size_t o;

	for (unsigned i = 0; i < SF_N_FIXED; i++)
		v[i] = rec_get64(p + 8 * i);
	memset(&c, 0, sizeof(c));
	c.found = v[0];
	c.invalid = v[1];
	c.insert = v[2];
	c.insert_failed = v[3];
	c.drop = v[4];
	c.early_drop = v[5];
	c.error = v[6];
	c.search_restart = v[7];
	c.clash_resolve = v[8];
	c.chaintoolong = v[9];
	c.packets = v[10];
	c.untracked = v[11];
	c.ignored = v[12];
	c.related = v[13];
	c.expired = v[14];
	c.deleted = v[15];
	/* invalid reasons by name, so that a renumbering of the enum between
	 * builds cannot move a count to another reason; a name this build
	 * does not know is left out */
	o = 4 + SF_N_FIXED * 8;
	for (uint32_t k = 0; k < f->n_reasons; k++) {
		const uint8_t *q = f->counters + o;
		size_t l = q[0];

		for (int i = 1; i < CT_PR_MAX; i++) {
			const char *name = ct_parse_reason_name((enum ct_parse_reason)i);

			if (strlen(name) == l && !memcmp(name, q + 1, l)) {
				c.invalid_by_reason[i] += rec_get64(q + 1 + l);
				break;
			}
		}
		o += 1 + l + 8;
	}
	pthread_mutex_lock(&t->thr_lock);
	ct_stats_counters_add(&t->dead_ctr, &c);
	pthread_mutex_unlock(&t->thr_lock);
}

/* The zone's counters into its namespace (shard 0: the shards are only
 * summed, so any one will do). */
static void restore_zone_counters(struct ct_table *t, const uint8_t *z)
{
	struct ct_ns *ns;

	pthread_mutex_lock(&t->ns_lock);
	ns = ct_ns_get(t, rec_get16(z));
	if (ns) {
		struct ct_ns_shard *sh = &ns->shard[0];

		atomic_fetch_add_explicit(&sh->insert, rec_get64(z + 4), memory_order_relaxed);
		atomic_fetch_add_explicit(&sh->invalid, rec_get64(z + 12), memory_order_relaxed);
		atomic_fetch_add_explicit(&sh->error, rec_get64(z + 20), memory_order_relaxed);
		atomic_fetch_add_explicit(&sh->drop, rec_get64(z + 28), memory_order_relaxed);
		atomic_fetch_add_explicit(&sh->early_drop, rec_get64(z + 36), memory_order_relaxed);
		atomic_fetch_add_explicit(&sh->expired, rec_get64(z + 44), memory_order_relaxed);
	}
	pthread_mutex_unlock(&t->ns_lock);
}

static int ensure_zone(struct ct_table *t, uint16_t id, const struct ct_settings *s,
		       struct ct_state_restore_result *res)
{
	int r;

	if (id == 0 || ct_ns_exists(t, id))
		return 0;
	r = ct_ns_create(t, id, s);
	if (r == 0)
		res->zones_created++;
	return r == -EEXIST ? 0 : r;
}

int ct_state_restore(struct ct_state_file *f, struct ct_thread *thr,
		     const struct ct_state_restore_opts *o,
		     struct ct_state_restore_result *res_out,
		     struct ct_state_error *err)
{
	struct ct_state_restore_result res = { 0 };
	struct ct_table *t;
	uint64_t index = 0;
	size_t off;
	int r;

	if (!f || !thr || !o)
		return set_err(err, CT_STATE_E_ARG, 0, 0, "arguments");
	t = thr->t;
	/* zones first: their counters, and a place for their records */
	for (uint32_t i = 0; f->zones && i < f->info.zones; i++) {
		const uint8_t *z = f->zones + (size_t)i * SF_ZONE_SIZE;

		if ((r = ensure_zone(t, rec_get16(z), o->zone_settings, &res)) < 0) {
			r = set_err(err, CT_STATE_E_IMPORT, -r, 0, "create a zone");
			if (err)
				err->reason = CT_RECORD_R_ZONE;
			return r;
		}
	}
	for (off = f->first_records; off && off < f->end;) {
		const uint8_t *h = f->buf + off;
		uint32_t plen = rec_get32(h + 4), count = rec_get32(h + 8);
		const uint8_t *p = h + SF_BLK;
		size_t o2 = 0, ahead = 0;
		/* records decoded RESTORE_AHEAD ahead of their import, their
		 * rows prefetched meanwhile (ct_record_prefetch) */
		struct ct_record ring[RESTORE_AHEAD];
		size_t used_of[RESTORE_AHEAD];
		uint32_t decoded = 0;

		for (uint32_t i = 0; i < count; i++, index++) {
			enum ct_record_reason why;
			struct ct_record *rp;
			size_t used;

			/* checked when opened: a failure to decode here is a
			 * file that changed under the mapping */
			while (decoded < count && decoded < i + RESTORE_AHEAD) {
				struct ct_record *nr = &ring[decoded % RESTORE_AHEAD];
				size_t u = ct_record_decode(p + ahead, plen - ahead, nr, &why);

				if (!u) {
					r = set_err(err, CT_STATE_E_RECORD, 0, off + SF_BLK + ahead, NULL);
					if (err) {
						err->reason = why;
						err->record = index + (decoded - i);
					}
					return r;
				}
				used_of[decoded % RESTORE_AHEAD] = u;
				ct_record_prefetch(thr, nr);
				ahead += u;
				decoded++;
			}
			rp = &ring[i % RESTORE_AHEAD];
			used = used_of[i % RESTORE_AHEAD];
			r = ct_record_import(thr, rp, o->now, o->elapsed_ns, 0, &why);
			if (r == -ENOENT && rp->orig.zone &&
			    ensure_zone(t, rp->orig.zone, o->zone_settings, &res) == 0)
				r = ct_record_import(thr, rp, o->now, o->elapsed_ns, 0, &why);
			if (r < 0) {
				r = set_err(err, CT_STATE_E_IMPORT, -r, off + SF_BLK + o2, NULL);
				if (err) {
					err->reason = why;
					err->record = index;
				}
				if (res_out)
					*res_out = res;
				return r;
			}
			if (r == 1)
				res.restored++;
			else
				res.expired++;
			o2 += used;
		}
		off += SF_BLK + plen;
	}
	if (o->counters && f->counters) {
		restore_counters(t, f);
		for (uint32_t i = 0; f->zones && i < f->info.zones; i++)
			restore_zone_counters(t, f->zones + (size_t)i * SF_ZONE_SIZE);
	}
	if (res_out)
		*res_out = res;
	if (err)
		memset(err, 0, sizeof(*err));
	return 0;
}

/* ------------------------------------------------------------------ */

const char *ct_state_strerror(const struct ct_state_error *e, char *buf, size_t len)
{
	const char *what = e->what ? e->what : "";

	if (!buf || !len)
		return buf;
	switch (e->err) {
	case CT_STATE_OK:
		snprintf(buf, len, "no error");
		break;
	case CT_STATE_E_IO:
		snprintf(buf, len, "cannot %s: %s", e->what ? what : "read", strerror(e->sys_errno));
		break;
	case CT_STATE_E_EMPTY:
		snprintf(buf, len, "the file is empty (0 bytes), not a ctrack state file");
		break;
	case CT_STATE_E_MAGIC:
		snprintf(buf, len, "not a ctrack state file (it does not start with "
			 "\"CTRKSTAT\": another program's file, or damaged at its start)");
		break;
	case CT_STATE_E_VERSION:
		snprintf(buf, len, "a state file of format version %u; this ctrack reads "
			 "versions %u to %u", e->version, (unsigned)CT_STATE_VERSION_MIN,
			 (unsigned)CT_STATE_VERSION);
		break;
	case CT_STATE_E_HEADER:
		snprintf(buf, len, "damaged header (%s wrong)", what);
		break;
	case CT_STATE_E_TRUNCATED:
		snprintf(buf, len, "cut short: it ends at byte %llu, inside its %s",
			 (unsigned long long)e->offset, e->what ? what : "data");
		if (e->what && !strcmp(e->what, "end block"))
			snprintf(buf, len, "cut short: it ends at byte %llu, before its end block",
				 (unsigned long long)e->offset);
		break;
	case CT_STATE_E_CHECKSUM:
		snprintf(buf, len, "damaged: the block at byte %llu does not match its checksum",
			 (unsigned long long)e->offset);
		break;
	case CT_STATE_E_BLOCK:
		snprintf(buf, len, "damaged: %s wrong at byte %llu", e->what ? what : "block",
			 (unsigned long long)e->offset);
		break;
	case CT_STATE_E_RECORD:
		snprintf(buf, len, "record %llu (byte %llu) is refused: %s",
			 (unsigned long long)e->record, (unsigned long long)e->offset,
			 ct_record_reason_name(e->reason));
		break;
	case CT_STATE_E_COUNT:
		snprintf(buf, len, "damaged: %s disagrees at byte %llu", e->what ? what : "a count",
			 (unsigned long long)e->offset);
		break;
	case CT_STATE_E_TRAILING:
		snprintf(buf, len, "damaged: bytes after its end, from byte %llu",
			 (unsigned long long)e->offset);
		break;
	case CT_STATE_E_IMPORT:
		snprintf(buf, len, "record %llu could not be restored: %s",
			 (unsigned long long)e->record,
			 e->reason != CT_RECORD_OK ? ct_record_reason_name(e->reason)
						   : strerror(e->sys_errno));
		break;
	case CT_STATE_E_ARG:
	default:
		snprintf(buf, len, "invalid argument (%s)", what);
		break;
	}
	return buf;
}
