/* proto_tcp.c - tcp tracker (stub until the tracker lands). */
#include "proto.h"

static void tcp_packet(struct ct_conn *c, const struct ct_proto_ctx *ctx,
		       struct ct_proto_out *out)
{
	(void)c;
	out->verdict = CT_PV_ACCEPT;
	out->timeout_ns = ct_secs(ctx->set->generic_timeout);
}

const struct ct_proto ct_proto_tcp = {
	.name = "tcp",
	.l4 = 6,
	.priv_size = 0,
	.packet = tcp_packet,
};
