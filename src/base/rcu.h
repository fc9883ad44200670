/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rcu.h - the table's RCU flavour behind one small interface.
 *
 * liburcu offers flavours with different read-side costs; a table picks
 * one at creation (memb by default, QSBR for polling dataplanes).  Both
 * are linked in and reached through liburcu's own rcu_flavor_struct, so
 * one library binary serves both kinds of caller.  The indirect call costs
 * a few nanoseconds per burst, not per packet.
 */
#ifndef CT_RCU_H
#define CT_RCU_H

#include <urcu/call-rcu.h>
#include <urcu/flavor.h>

#include "ctrack/table.h"

/* The flavour @f's operations (any thread; a constant). */
const struct rcu_flavor_struct *ct_rcu_flavor(enum ct_rcu_flavor f);

/* Register / unregister the calling thread with flavour @f, counted per
 * thread so that nesting (a thread attached to two tables of one flavour)
 * registers once: liburcu asserts on a double registration. */
void ct_rcu_reg(enum ct_rcu_flavor f);
void ct_rcu_unreg(enum ct_rcu_flavor f);

/* Start flavour @f's call_rcu callback thread (liburcu's default one)
 * if it is not running yet, from the calling thread, whose name it takes:
 * ct_gc_start calls this before it starts its "ct-gc" thread, which
 * would otherwise lend that name to the callback thread when its first
 * removals queue the first callbacks. */
void ct_rcu_callback_thread_start(enum ct_rcu_flavor f);

#endif /* CT_RCU_H */
