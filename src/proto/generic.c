/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * generic.c - every IP protocol without a tracker of its own.
 *
 * As generic_packet() in nf_conntrack_core.c (Linux 6.18): no state, no
 * ports (the tuple has zeroes), never ASSURED, one timeout
 * (nf_conntrack_generic_timeout, 600 s) refreshed by every packet in either
 * direction, read from the settings at each packet.  conntrack prints the
 * protocol by number with its own name table ("unknown" for most).
 */
#include "proto/proto.h"

static void generic_packet(struct ct_conn *c, const struct ct_proto_ctx *ctx,
			   struct ct_proto_out *out)
{
	(void)c;
	out->verdict = CT_PV_ACCEPT;
	out->timeout_ns = ct_secs(ctx->set->generic_timeout);
}

const struct ct_proto ct_proto_generic = {
	.name = "unknown",
	.l4 = 0,
	.priv_size = 0,
	.packet = generic_packet,
};
