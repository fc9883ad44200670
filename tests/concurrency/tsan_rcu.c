/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tsan_rcu.c - the annotated RCU flavours of tsan_rcu.h.
 *
 * One wrapper per liburcu flavour (memb, QSBR), each a copy of the real
 * struct rcu_flavor_struct with the entry points that begin or end a
 * grace-period relationship replaced.  Two process-wide sync objects are
 * enough: gp_sync stands for "every read-side section that ended before
 * now", cb_sync for "every callback that has run".  Joining all readers
 * into one object is exactly what a grace period promises (each reader's
 * section before the grace period happens before what follows it), so it
 * adds no ordering RCU does not give.
 */
#include <pthread.h>
#include <stdlib.h>

#include "base/rcu.h"
#include "base/state.h"
#include "table/conn_key.h"
#include "table/htab.h"
#include "table/member.h"
#include "table/reclaim.h"
#include "table/resize.h"
#include "table/wheel.h"
#include "tsan_rcu.h"

#if CT_TEST_TSAN

void __tsan_acquire(void *addr);
void __tsan_release(void *addr);

static char gp_sync, cb_sync;

struct tramp {
	struct rcu_head head;          /* what liburcu queues */
	struct rcu_head *orig;
	void (*fn)(struct rcu_head *);
};

static void tramp_cb(struct rcu_head *h)
{
	struct tramp *tr = caa_container_of(h, struct tramp, head);

	__tsan_acquire(tr);          /* the caller's history up to call_rcu */
	__tsan_acquire(&gp_sync);    /* every reader before the grace period */
	tr->fn(tr->orig);
	__tsan_release(&cb_sync);
	free(tr);
}

#define WRAP_FLAVOR(NAME)                                                     \
static const struct rcu_flavor_struct *NAME##_real;                          \
static struct rcu_flavor_struct NAME##_wrapped;                               \
                                                                              \
static void NAME##_read_unlock(void)                                          \
{                                                                             \
	__tsan_release(&gp_sync);                                             \
	NAME##_real->read_unlock();                                           \
}                                                                             \
static void NAME##_quiescent(void)                                            \
{                                                                             \
	__tsan_release(&gp_sync);                                             \
	NAME##_real->read_quiescent_state();                                  \
}                                                                             \
static void NAME##_offline(void)                                              \
{                                                                             \
	__tsan_release(&gp_sync);                                             \
	NAME##_real->thread_offline();                                        \
}                                                                             \
static void NAME##_unregister(void)                                           \
{                                                                             \
	__tsan_release(&gp_sync);                                             \
	NAME##_real->unregister_thread();                                     \
}                                                                             \
static void NAME##_synchronize(void)                                          \
{                                                                             \
	NAME##_real->update_synchronize_rcu();                                \
	__tsan_acquire(&gp_sync);                                             \
}                                                                             \
static void NAME##_call_rcu(struct rcu_head *head,                            \
			    void (*fn)(struct rcu_head *))                    \
{                                                                             \
	struct tramp *tr = malloc(sizeof(*tr));                               \
                                                                              \
	if (!tr)                                                              \
		abort();                                                      \
	tr->orig = head;                                                      \
	tr->fn = fn;                                                          \
	__tsan_release(tr);                                                   \
	NAME##_real->update_call_rcu(&tr->head, tramp_cb);                    \
}                                                                             \
static void NAME##_barrier(void)                                              \
{                                                                             \
	NAME##_real->barrier();                                               \
	__tsan_acquire(&cb_sync);                                             \
}                                                                             \
static void NAME##_init(const struct rcu_flavor_struct *real)                 \
{                                                                             \
	NAME##_real = real;                                                   \
	NAME##_wrapped = *real;                                               \
	NAME##_wrapped.read_unlock = NAME##_read_unlock;                      \
	NAME##_wrapped.read_quiescent_state = NAME##_quiescent;               \
	NAME##_wrapped.thread_offline = NAME##_offline;                       \
	NAME##_wrapped.unregister_thread = NAME##_unregister;                 \
	NAME##_wrapped.update_synchronize_rcu = NAME##_synchronize;           \
	NAME##_wrapped.update_call_rcu = NAME##_call_rcu;                     \
	NAME##_wrapped.barrier = NAME##_barrier;                              \
}

WRAP_FLAVOR(memb)
WRAP_FLAVOR(qsbr)

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void init_once(void)
{
	memb_init(ct_rcu_flavor(CT_RCU_MEMB));
	qsbr_init(ct_rcu_flavor(CT_RCU_QSBR));
}

void ct_tsan_rcu_wrap(struct ct_table *t)
{
	pthread_once(&once, init_once);
	t->rcu = t->cfg.rcu == CT_RCU_QSBR ? &qsbr_wrapped : &memb_wrapped;
}

#else

void ct_tsan_rcu_wrap(struct ct_table *t)
{
	(void)t;
}

#endif
