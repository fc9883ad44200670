/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dump.h - a table's entries copied into one growing array
 * (tests/support), for checks that look at every entry at once: the
 * invariant audit and the fuzz harness, which each had their own.
 */
#ifndef CT_TS_DUMP_H
#define CT_TS_DUMP_H

#include <stddef.h>

#include "ctrack/ctrack.h"

struct ts_dump {
	struct ct_conn_info *v;   /* n entries, in the dump's order */
	size_t n, cap;
};

/*
 * ts_dump - every entry of zone @zone (-1: every zone), as
 * ct_table_dump() shows them, after what @d already holds; start from a
 * zeroed struct ts_dump and free(d->v) at the end.  Returns what
 * ct_table_dump returns (0: the copy never stops it).  abort()s when memory
 * runs out: a test has nothing better to do.  Who may call it: as
 * ct_table_dump.
 */
int ts_dump(struct ct_thread *self, int zone, struct ts_dump *d);

#endif /* CT_TS_DUMP_H */
