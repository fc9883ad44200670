/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * thread.h - what the stages ask of a thread's handle beyond the public
 * ct_thread_* calls (ctrack/table.h) (private).
 */
#ifndef CT_THREAD_H
#define CT_THREAD_H

#include "base/state.h"

/* Fold @thr's count delta into the table's count (one atomic add; the
 * stages call it every 64 entries and at the end of bulk work).  Owner
 * thread only. */
void ct_thread_fold_count(struct ct_thread *thr);

#endif /* CT_THREAD_H */
