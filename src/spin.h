/*
 * spin.h - the back-off every spin lock in the library uses.
 *
 * Row, entry and slab locks are held for a few hundred nanoseconds, so
 * waiters spin.  But when a machine has more runnable threads than CPUs,
 * a lock holder can be preempted, and a waiter that only spins burns its
 * whole time slice (the soak test saw 0.1-1 s stalls that let memory
 * reclaim fall behind).  So after a thousand pauses a waiter yields the
 * CPU, giving the holder a chance to run.
 */
#ifndef CT_SPIN_H
#define CT_SPIN_H

#include <sched.h>

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

#endif /* CT_SPIN_H */
