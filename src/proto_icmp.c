/* proto_icmp.c - ICMP and ICMPv6 trackers (stub until the tracker lands). */
#include "proto.h"

static void icmp_packet(struct ct_conn *c, const struct ct_proto_ctx *ctx,
			struct ct_proto_out *out)
{
	(void)c;
	out->verdict = CT_PV_ACCEPT;
	out->timeout_ns = ct_secs(ctx->set->icmp_timeout);
}

const struct ct_proto ct_proto_icmp = {
	.name = "icmp",
	.l4 = 1,
	.packet = icmp_packet,
};

const struct ct_proto ct_proto_icmpv6 = {
	.name = "icmpv6",
	.l4 = 58,
	.packet = icmp_packet,
};
