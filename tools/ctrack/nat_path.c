/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nat_path.c - one packet through the NAT rules (nat_path.h).
 *
 * Kept apart from read_nat.c, which adds the translated output, so that
 * the daemon binds new connections exactly as `ctrack read` does: the
 * same rule order, the same hooks, the same counters.
 */
#include <string.h>

#include "nat_path.h"

/* The first snat / masquerade rule on the tuple dnat left, or the null
 * binding (at confirm); dnat's before it. */
static void bind_rules(const struct nat_rules *rs, struct ct_thread *thr, struct ct_pending *p,
		       const struct ct_packet *pkt, int32_t iif, struct nat_path_counts *cn,
		       nat_path_before_fn before, void *arg)
{
	const struct nat_rule *r;
	struct ct_tuple after;
	int rc;

	r = nat_rules_first(rs, CT_NAT_MANIP_DST, &pkt->tuple, iif, NULL);
	if (before)
		before(arg, &pkt->tuple, CT_NAT_MANIP_DST, r ? &r->range : NULL);
	if (r) {
		rc = ct_pending_nat(thr, p, &r->range, CT_NAT_MANIP_DST);
		if (rc < 0)
			cn->setup_err++;
		else
			cn->dnat++;
	}
	if (!ct_tuple_invert(&ct_pending_binding(p)->reply, &after))
		after = pkt->tuple;
	r = nat_rules_first(rs, CT_NAT_MANIP_SRC, &after, iif, NULL);
	if (before)
		before(arg, &pkt->tuple, CT_NAT_MANIP_SRC, r ? &r->range : NULL);
	if (!r)
		return;   /* the null binding at confirm: no range */
	if (r->action == NAT_RULE_MASQUERADE) {
		rc = ct_pending_masquerade(thr, p, &r->range, &r->range.min_addr);
		if (rc == CT_NAT_BOUND || rc == CT_NAT_BOUND_TAKEN)
			cn->masq++;
	} else {
		rc = ct_pending_nat(thr, p, &r->range, CT_NAT_MANIP_SRC);
		if (rc >= 0)
			cn->snat++;
	}
	if (rc < 0)
		cn->setup_err++;
}

enum nat_path_result nat_path_track(const struct nat_rules *rs, struct ct_thread *thr,
				    const struct ct_packet *pkt, ct_time_ns now, int32_t iif,
				    struct nat_path_counts *cn, nat_path_before_fn before,
				    void *before_arg, struct ct_verdict *v,
				    struct ct_nat_binding *b, enum ct_dir *dir)
{
	struct ct_classified cl;
	int rc;

	if (ct_classify(thr, pkt, now, &cl) < 0) {
		memset(v, 0, sizeof(*v));
		return NAT_PATH_ERROR;
	}
	*v = cl.v;
	*dir = CT_DIR_ORIGINAL;
	switch (cl.cls) {
	case CT_CLASS_PENDING:
		cn->pending++;
		bind_rules(rs, thr, cl.pending, pkt, iif, cn, before, before_arg);
		rc = ct_pending_confirm(thr, cl.pending, b);
		if (rc < 0) {
			cn->refused++;
			return NAT_PATH_REFUSED;
		}
		if (rc == CT_CONFIRM_MERGED)
			cn->merged++;
		else if (rc == CT_CONFIRM_REPLY_ONLY)
			cn->reply_only++;
		else
			cn->confirmed++;
		return NAT_PATH_FIRST;
	case CT_CLASS_TRACKED:
	case CT_CLASS_RELATED:
		if (cl.nat)
			*b = cl.binding;
		else
			memset(b, 0, sizeof(*b));
		*dir = (enum ct_dir)cl.v.dir;
		return NAT_PATH_TRACKED;
	default:
		return NAT_PATH_OTHER;
	}
}
