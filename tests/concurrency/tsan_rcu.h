/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tsan_rcu.h - telling ThreadSanitizer what an RCU grace period orders.
 *
 * liburcu is not built with -fsanitize=thread, so TSan sees neither the
 * grace period that orders every reader's accesses before a call_rcu
 * callback (or before synchronize_rcu returns), nor the hand-off of an
 * rcu_head to the call_rcu thread.  Without help it reports every free of
 * an entry, a namespace or an old generation of rows as a race with the
 * readers that used it.
 *
 * ct_tsan_rcu_wrap() replaces a table's flavour (struct ct_table.rcu, a
 * pointer to liburcu's struct rcu_flavor_struct) with a copy whose entry
 * points annotate what liburcu guarantees, and nothing more:
 *  - the end of a read-side section (read_unlock; for QSBR also
 *    read_quiescent_state, thread_offline, unregister_thread) releases
 *    the reader's history to one sync object, BEFORE the real call, so
 *    that no grace period can end between the two;
 *  - synchronize_rcu acquires it after the real call returns; a call_rcu
 *    callback acquires it before it runs (through a trampoline that also
 *    carries the caller's release of the rcu_head to the callback thread);
 *  - each callback releases a second sync object when it is done, which
 *    barrier acquires after the real rcu_barrier returns.
 * A reader still inside its section when a callback frees what it reads
 * has not released yet, so TSan still reports that: the annotation models
 * the grace period, it does not hide use-after-free.
 *
 * Outside a TSan build ct_tsan_rcu_wrap() does nothing and the tests run
 * the library exactly as an application would.  Call it right after
 * ct_table_create(), before any thread attaches.
 */
#ifndef CT_TEST_TSAN_RCU_H
#define CT_TEST_TSAN_RCU_H

#include "ctrack/table.h"

#if defined(__SANITIZE_THREAD__)
#define CT_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CT_TEST_TSAN 1
#endif
#endif
#ifndef CT_TEST_TSAN
#define CT_TEST_TSAN 0
#endif

void ct_tsan_rcu_wrap(struct ct_table *t);

#endif /* CT_TEST_TSAN_RCU_H */
