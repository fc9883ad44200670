/* proto_sctp.c - sctp tracker (stub until the tracker lands). */
#include "proto.h"

static void sctp_packet(struct ct_conn *c, const struct ct_proto_ctx *ctx,
		       struct ct_proto_out *out)
{
	(void)c;
	out->verdict = CT_PV_ACCEPT;
	out->timeout_ns = ct_secs(ctx->set->generic_timeout);
}

const struct ct_proto ct_proto_sctp = {
	.name = "sctp",
	.l4 = 132,
	.priv_size = 0,
	.packet = sctp_packet,
};
