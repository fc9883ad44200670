/*
 * rcu.c - maps enum ct_rcu_flavor to liburcu's flavour tables.
 *
 * The flavour headers cannot be included together (each maps the generic
 * rcu_* names onto its own), so only the two exported flavour structs are
 * declared here.
 */
#include "rcu.h"

extern const struct rcu_flavor_struct urcu_qsbr_flavor;
extern const struct rcu_flavor_struct urcu_memb_flavor;

const struct rcu_flavor_struct *ct_rcu_flavor(enum ct_rcu_flavor f)
{
	return f == CT_RCU_QSBR ? &urcu_qsbr_flavor : &urcu_memb_flavor;
}
