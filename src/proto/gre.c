/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gre.c - GRE tracker (nf_conntrack_proto_gre.c, Linux 6.18).
 *
 * GRE has no state.  The tuple comes from the parser, as gre_pkt_to_tuple
 * builds it: version 0 (and anything but version 1) gets ports 0 like the
 * generic tracker; version 1 (PPTP's enhanced GRE) gets dport = call id
 * and sport = 0 (the kernel fills sport from the PPTP helper's keymap,
 * which ctrack does not have).
 *
 * The kernel copies the two timeouts into the entry when it is created
 * (ct->proto.gre.timeout / stream_timeout, so that the PPTP helper can
 * raise them per connection); later sysctl changes do not touch existing
 * entries.  We keep the same two values, in seconds, in the private area.
 * Until a reply has been seen (SEEN_REPLY before this packet) every packet
 * refreshes to the unreplied timeout; afterwards every packet, either
 * direction, refreshes to the stream timeout and assures the entry - unlike
 * UDP there is no 2 s delay - except an IPS_NAT_CLASH entry, which is never
 * assured.
 */
#include "proto/proto.h"

struct gre_priv {
	uint32_t timeout_s;         /* gre_timeout when the entry was made */
	uint32_t stream_timeout_s;  /* gre_timeout_stream, likewise */
};

_Static_assert(sizeof(struct gre_priv) % 8 == 0, "priv size multiple of 8");

static void gre_packet(struct ct_conn *c, const struct ct_proto_ctx *ctx,
		       struct ct_proto_out *out)
{
	struct gre_priv *p = ct_conn_priv(c);

	if (ctx->is_new) {
		p->timeout_s = ctx->set->gre_timeout;
		p->stream_timeout_s = ctx->set->gre_timeout_stream;
	}
	out->verdict = CT_PV_ACCEPT;
	if (ctx->status & CT_ST_SEEN_REPLY) {
		out->timeout_ns = ct_secs(p->stream_timeout_s);
		if (!(ctx->status & (CT_ST_ASSURED | CT_ST_NAT_CLASH)))
			out->set_assured = true;
	} else {
		out->timeout_ns = ct_secs(p->timeout_s);
	}
}

/*
 * Records (proto.h): the entry's own two timeouts.  A commit gives the
 * zone's: the kernel's gre_packet sets them only on an unconfirmed entry,
 * so one ctnetlink created keeps zeros (and its next packet would give it
 * no time at all); ctrack does not copy that.
 */
static void gre_to_record(const struct ct_conn *c, union ct_record_proto *rp,
			  ct_time_ns now)
{
	const struct gre_priv *p = ct_conn_priv_const(c);

	(void)now;
	rp->gre.timeout_s = p->timeout_s;
	rp->gre.stream_timeout_s = p->stream_timeout_s;
}

static enum ct_record_reason gre_record_check(uint8_t l4state,
					      const union ct_record_proto *rp)
{
	(void)l4state;
	(void)rp;
	return CT_RECORD_OK;    /* timeouts are any u32, as the sysctls */
}

static void gre_from_record(struct ct_conn *c, const union ct_record_proto *rp,
			    ct_time_ns base, bool commit, const struct ct_settings *set)
{
	struct gre_priv *p = ct_conn_priv(c);

	(void)base;
	p->timeout_s = commit ? set->gre_timeout : rp->gre.timeout_s;
	p->stream_timeout_s = commit ? set->gre_timeout_stream : rp->gre.stream_timeout_s;
}

const struct ct_proto ct_proto_gre = {
	.name = "gre",
	.l4 = 47,
	.priv_size = sizeof(struct gre_priv),
	.packet = gre_packet,
	.to_record = gre_to_record,
	.record_check = gre_record_check,
	.from_record = gre_from_record,
};
