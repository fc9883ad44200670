/* proto_udp.c - udp tracker (stub until the tracker lands). */
#include "proto.h"

static void udp_packet(struct ct_conn *c, const struct ct_proto_ctx *ctx,
		       struct ct_proto_out *out)
{
	(void)c;
	out->verdict = CT_PV_ACCEPT;
	out->timeout_ns = ct_secs(ctx->set->generic_timeout);
}

const struct ct_proto ct_proto_udp = {
	.name = "udp",
	.l4 = 17,
	.priv_size = 0,
	.packet = udp_packet,
};

const struct ct_proto ct_proto_udplite = {
	.name = "udplite",
	.l4 = 136,
	.priv_size = 0,
	.packet = udp_packet,
};
