/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * read_state.h - `ctrack read --load-state / --save-state`: the table
 * carried from one run to the next in a state file (ctrack/statefile.h),
 * with what the tool counts itself, so that a capture read file by file
 * gives what it gives read whole.
 */
#ifndef CTRACK_TOOL_READ_STATE_H
#define CTRACK_TOOL_READ_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctrack/ctrack.h"

/* What `ctrack read` counts outside the library, kept in the state
 * file's application bytes. */
struct read_counts {
	uint64_t frames;
	uint64_t bad_link;
	uint64_t fragments;     /* the reassembler's, before this run */
	uint64_t reassembled;
	/* with NAT (n_nat READ_NAT_COUNTERS, read_nat.h): its counters; a
	 * file written without NAT, or by a build with another count, has
	 * n_nat 0 */
	uint32_t n_nat;
	uint64_t nat[64];
};

enum state_damaged {
	STATE_DAMAGED_STOP = 0,   /* a bad file stops the run (the default) */
	STATE_DAMAGED_EMPTY,      /* kept aside, and the run starts empty */
};

/*
 * read_state_load - restore @path into the (fresh) table of @thr, zones
 * made with @set; *@now becomes the moment of the save and *@counts what
 * the tool had counted then.  A file that is damaged, cut short, foreign
 * or of another version stops with a message naming it and the problem
 * (returns CT_EXIT_PARTIAL for damage, CT_EXIT_INPUT for a file that is
 * not one of ours or cannot be read), unless @policy is
 * STATE_DAMAGED_EMPTY: then it is renamed to PATH.damaged (or
 * .damaged.N, never over another file), a warning says so, and 0 is
 * returned with nothing restored.  A file that cannot be read (missing,
 * no permission) always stops.  Returns 0 or an exit status (cli.h).
 */
int read_state_load(const char *path, enum state_damaged policy, struct ct_thread *thr,
		    const struct ct_settings *set, ct_time_ns *now, bool *restored,
		    struct read_counts *counts);

/* state_keep_aside - move a bad state file out of the way: @path renamed
 * to PATH.damaged, or PATH.damaged.N if that exists (never over another
 * file); the new name in @kept (@len bytes).  Returns 0 or a negative
 * errno (-EEXIST after 1000 names).  Also the daemon's (dm_state.c). */
int state_keep_aside(const char *path, char *kept, size_t len);

/* read_state_save - write the table of @thr at @now, its counters and
 * @counts to @path (atomically).  Returns 0, or CT_EXIT_INTERNAL after a
 * message naming the file and the problem. */
int read_state_save(const char *path, struct ct_thread *thr, ct_time_ns now,
		    const struct read_counts *counts);

#endif /* CTRACK_TOOL_READ_STATE_H */
