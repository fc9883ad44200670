/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rcu.c - maps enum ct_rcu_flavor to liburcu's flavour tables.
 *
 * The flavour headers cannot be included together (each maps the generic
 * rcu_* names onto its own), so only the two exported flavour structs and
 * the two functions that start a flavour's callback thread are declared
 * here.
 */
#include "base/rcu.h"

extern const struct rcu_flavor_struct urcu_qsbr_flavor;
extern const struct rcu_flavor_struct urcu_memb_flavor;
struct call_rcu_data *urcu_qsbr_get_default_call_rcu_data(void);
struct call_rcu_data *urcu_memb_get_default_call_rcu_data(void);

const struct rcu_flavor_struct *ct_rcu_flavor(enum ct_rcu_flavor f)
{
	return f == CT_RCU_QSBR ? &urcu_qsbr_flavor : &urcu_memb_flavor;
}

void ct_rcu_callback_thread_start(enum ct_rcu_flavor f)
{
	if (f == CT_RCU_QSBR)
		(void)urcu_qsbr_get_default_call_rcu_data();
	else
		(void)urcu_memb_get_default_call_rcu_data();
}

/* Threads registered with each flavour, so attaching to two tables of the
 * same flavour registers once (liburcu asserts on double registration). */
static _Thread_local unsigned rcu_regs[2];

void ct_rcu_reg(enum ct_rcu_flavor f)
{
	if (rcu_regs[f]++ == 0)
		ct_rcu_flavor(f)->register_thread();
}

void ct_rcu_unreg(enum ct_rcu_flavor f)
{
	if (--rcu_regs[f] == 0)
		ct_rcu_flavor(f)->unregister_thread();
}
