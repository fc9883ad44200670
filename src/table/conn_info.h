/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_info.h - an entry as the API shows it (private).
 */
#ifndef CT_CONN_INFO_H
#define CT_CONN_INFO_H

#include "base/state.h"

/* Copy @c into @ci (struct ct_conn_info, ctrack/table.h): both tuples,
 * status, state, mark, counters and timestamps, and the id (a keyed hash
 * of @c's address, as the kernel's ct id).  The caller holds @c's lock,
 * or @c is not published yet; no lock is taken, nothing allocated. */
void ct_conn_fill_info(struct ct_table *t, struct ct_conn *c, struct ct_conn_info *ci);

#endif /* CT_CONN_INFO_H */
