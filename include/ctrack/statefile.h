/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctrack/statefile.h - a table's entries and counters in a file, and back.
 *
 * The daemon writes one on SIGTERM and every --state-interval and reads
 * it at start; `ctrack read --save-state / --load-state` does the same
 * between capture files, so that a capture rotated over many files reads
 * file by file as it reads whole.  The format (docs/record.md): a header
 * with a magic, the version, the moment of the save (the table's clock
 * and the wall clock) and the record count, checksummed; then blocks -
 * records, counters, zones, the caller's own bytes - each with its type,
 * length, count and a CRC32c over all of it; then an end block that
 * repeats the counts.  A file that is cut short anywhere, at a block
 * boundary too, lacks its end block or a block's bytes.
 *
 * Saving writes a temporary file beside the target, fsyncs it, renames it
 * over the target and fsyncs the directory: a crash leaves the old file
 * or the new one, never a mix.  Loading reads the whole file and checks
 * every byte of it - checksums, counts, every record (ct_record_check) -
 * before the first entry goes into the table: a damaged file changes
 * nothing.
 *
 * The library never prints: every failure is a struct ct_state_error,
 * which ct_state_strerror turns into one sentence naming the problem and
 * where it is; the caller adds the file name.
 */
#ifndef CTRACK_STATEFILE_H
#define CTRACK_STATEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctrack/record.h"
#include "ctrack/settings.h"
#include "ctrack/table.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The format's versions.  Version 2 is version 1 whose records may carry a
 * NAT binding (ctrack/record.h: status NAT bits, the reply tuple's
 * section): ct_state_save writes 2 only when some record has NAT status
 * bits (a NAT binding or a null one), 1 otherwise, so that a file without
 * NAT stays readable by a ctrack that predates NAT in records, and one
 * with NAT is refused by such a reader for its version (CT_STATE_E_VERSION)
 * rather than as damaged.  ct_state_open reads both; a version 1 file
 * whose records have NAT bits is refused as damaged (CT_STATE_E_RECORD,
 * reason CT_RECORD_R_NAT): no writer makes one.
 */
#define CT_STATE_VERSION 2
#define CT_STATE_VERSION_MIN 1

/* What went wrong (ct_state_error.err). */
enum ct_state_err {
	CT_STATE_OK = 0,
	CT_STATE_E_IO,        /* open, read, write, fsync or rename failed:
			       * sys_errno says why */
	CT_STATE_E_EMPTY,     /* the file is empty */
	CT_STATE_E_MAGIC,     /* not a ctrack state file (another program's,
			       * or damaged in its first bytes) */
	CT_STATE_E_VERSION,   /* a state file of a version this build does
			       * not read (version says which) */
	CT_STATE_E_HEADER,    /* the header's checksum or fields are wrong */
	CT_STATE_E_TRUNCATED, /* the file ends inside a block or before its
			       * end block: cut short */
	CT_STATE_E_CHECKSUM,  /* a block's bytes do not match its checksum */
	CT_STATE_E_BLOCK,     /* a block of unknown type, impossible length,
			       * or out of order */
	CT_STATE_E_RECORD,    /* a record that does not decode or is refused
			       * (reason, record) */
	CT_STATE_E_COUNT,     /* counts disagree: header, blocks, end block */
	CT_STATE_E_TRAILING,  /* bytes after the end block */
	CT_STATE_E_IMPORT,    /* the table refused a record (sys_errno,
			       * reason, record): a clash, no room, no zone */
	CT_STATE_E_ARG,       /* a NULL argument or a value out of range */
};

struct ct_state_error {
	enum ct_state_err err;
	int sys_errno;             /* E_IO, E_IMPORT: the errno */
	enum ct_record_reason reason;  /* E_RECORD, E_IMPORT */
	uint32_t version;          /* E_VERSION: the file's */
	uint64_t offset;           /* byte offset of the problem */
	uint64_t record;           /* E_RECORD, E_IMPORT: its index (0-based) */
	const char *what;          /* E_IO: the step ("open", "write", ...);
				    * E_BLOCK, E_COUNT, E_HEADER: which field */
};

/*
 * ct_state_strerror - @e as a sentence ("cut short: it ends inside a block
 * at byte 4096", "not a ctrack state file", ...) in @buf (@len bytes,
 * truncated to fit, always NUL-terminated); returns @buf.  Any thread.
 */
const char *ct_state_strerror(const struct ct_state_error *e, char *buf, size_t len);

struct ct_state_save_opts {
	ct_time_ns now;          /* the table's clock at the save: the
				  * records' moment */
	uint64_t wall_ns;        /* the wall clock then (ns since 1970);
				  * 0: CLOCK_REALTIME is read */
	int zone;                /* -1: every zone, else only this one */
	bool counters;           /* keep the table's counters and each
				  * zone's (ct_stats, ct_ns_get_stats) */
	const void *app;         /* the caller's own bytes, kept with the
				  * state and given back by ct_state_app */
	uint32_t app_len;        /* at most CT_STATE_APP_MAX */
};

#define CT_STATE_APP_MAX (1u << 20)

struct ct_state_save_result {
	uint64_t records;
	uint64_t bytes;          /* the file's size */
};

/*
 * ct_state_save - write every entry (of opts->zone) to @path, atomically:
 * PATH.XXXXXX in the same directory, written, fsynced, renamed over
 * @path, the directory fsynced.  An attached thread; packets may flow
 * meanwhile (each entry is copied under its lock; the file is not a
 * snapshot of one instant: an entry created or removed during the walk
 * may or may not be in it).  Cost: ct_record_export's and the encoding
 * (about 630 ns of CPU an entry at 1M), 140 bytes of file an entry (an
 * IPv4 TCP entry with counters and times: 152), one write per MiB, the
 * fsyncs.  Returns 0 (and @res
 * if not NULL), or a negative errno with @err set (E_IO with the step,
 * E_ARG); the temporary file is removed and @path untouched on error.
 */
int ct_state_save(struct ct_thread *thr, const char *path,
		  const struct ct_state_save_opts *opts,
		  struct ct_state_save_result *res, struct ct_state_error *err);

/* An open, checked state file (ct_state_open). */
struct ct_state_file;

/*
 * ct_state_open - read @path whole (mapped) and check it: magic, version,
 * header checksum, every block's checksum and length, every record
 * decoded and checked, the counts, the end block, nothing after it.
 * Nothing goes into any table.  Any thread.  Cost: about 100 ns of CPU
 * a record.  Returns 0 and *@out, or a
 * negative errno (-EIO for E_IO with sys_errno, -EINVAL for a damaged or
 * foreign file, -ENOMEM) with @err set.
 * ct_state_open_mem - the same over @len bytes at @buf (kept by the
 * caller until ct_state_close).
 */
int ct_state_open(const char *path, struct ct_state_file **out,
		  struct ct_state_error *err);
int ct_state_open_mem(const void *buf, size_t len, struct ct_state_file **out,
		      struct ct_state_error *err);

/* What an open file says about itself. */
struct ct_state_info {
	uint32_t version;
	ct_time_ns saved_now;      /* the table's clock at the save */
	uint64_t saved_wall_ns;    /* the wall clock at the save */
	uint64_t records;
	uint32_t zones;            /* zones whose counters it keeps */
	bool counters;             /* it keeps the table's counters */
	uint32_t app_len;
};

/* ct_state_get_info - fill @info; ct_state_app - the caller's bytes kept
 * with the state (NULL and 0 if none), valid until ct_state_close.  Any
 * thread, O(1). */
void ct_state_get_info(const struct ct_state_file *f, struct ct_state_info *info);
const void *ct_state_app(const struct ct_state_file *f, uint32_t *len);

struct ct_state_restore_opts {
	ct_time_ns now;           /* the table's clock now */
	uint64_t elapsed_ns;      /* since the save (ct_record_import): 0 for
				   * a replay going on in capture time; the
				   * wall-clock difference for a restart */
	bool counters;            /* add the file's counters to the table's
				   * (and each zone's) */
	const struct ct_settings *zone_settings;  /* for zones the file's
				   * records or counters need and the table
				   * lacks; NULL: a copy of zone 0's */
};

struct ct_state_restore_result {
	uint64_t restored;        /* entries inserted */
	uint64_t expired;         /* records whose time ran out: DESTROY */
	uint32_t zones_created;
};

/*
 * ct_state_restore - import every record of @f (ct_record_import, no
 * flags) and, if asked, its counters.  An attached thread.  Cost: each
 * record decoded again and imported, its row prefetched 8 records ahead:
 * about 500 ns of CPU a record at 1M, below what its packets cost
 * (BENCHMARKS.md "record").  The file was checked
 * whole when opened; what can still go wrong is the table's: a record
 * that clashes with an entry already there, no room, no memory, a zone
 * that cannot be created.  Then it stops at that record, with the
 * records before it inserted (restore into a fresh table, as ctrack does,
 * and throw the table away on error), and returns the negative errno with
 * @err (E_IMPORT, the record's index and reason).  Returns 0 and @res.
 */
int ct_state_restore(struct ct_state_file *f, struct ct_thread *thr,
		     const struct ct_state_restore_opts *opts,
		     struct ct_state_restore_result *res,
		     struct ct_state_error *err);

/* ct_state_close - unmap and free; NULL is a no-op. */
void ct_state_close(struct ct_state_file *f);

#ifdef __cplusplus
}
#endif

#endif /* CTRACK_STATEFILE_H */
