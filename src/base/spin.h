/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * spin.h - the back-off every spin lock in the library uses.
 *
 * Row, entry and slab locks are held for a few hundred nanoseconds, so
 * waiters spin.  But when a machine has more runnable threads than CPUs,
 * a lock holder can be preempted, and a waiter that only spins burns its
 * whole time slice (the soak test saw 0.1-1 s stalls that let memory
 * reclaim fall behind).  So after a thousand pauses a waiter yields the
 * CPU, giving the holder a chance to run.
 *
 * The byte locks (an entry's, a slab's, the overflow rows' pool) are one
 * lock: test-and-set, and while it is held, plain loads until it looks
 * free, so that waiters do not bounce its line with writes.  Always
 * inline: the entry lock is on every packet's path, and left to itself
 * GCC's inlining of the tracker around it cost 12 instructions a lookup.
 */
#ifndef CT_SPIN_H
#define CT_SPIN_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <urcu/arch.h>

#define CT_SPIN_BEFORE_YIELD 1024u

static inline void ct_spin_relax(unsigned *spins)
{
	caa_cpu_relax();
	if (++*spins >= CT_SPIN_BEFORE_YIELD) {
		*spins = 0;
		sched_yield();
	}
}

static inline __attribute__((always_inline)) void ct_spin_lock(_Atomic uint8_t *l)
{
	unsigned spins = 0;

	while (atomic_exchange_explicit(l, 1, memory_order_acquire))
		while (atomic_load_explicit(l, memory_order_relaxed))
			ct_spin_relax(&spins);
}

static inline __attribute__((always_inline)) bool ct_spin_trylock(_Atomic uint8_t *l)
{
	return !atomic_exchange_explicit(l, 1, memory_order_acquire);
}

static inline __attribute__((always_inline)) void ct_spin_unlock(_Atomic uint8_t *l)
{
	atomic_store_explicit(l, 0, memory_order_release);
}

#endif /* CT_SPIN_H */
