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

#include "proto_icmp.h"

bool ct_icmp_error_key(const struct ct_packet *pkt, struct ct_tuple *key,
		       uint8_t *reason)
{
	if (!pkt->u.icmp.inner_ok) {
		*reason = CT_PR_ICMP_BAD;
		return false;
	}
	*key = pkt->u.icmp.inner;
	key->zone = pkt->tuple.zone;
	return true;
}

bool ct_icmp_error_accept(const struct ct_packet *pkt,
			  const struct ct_tuple *orig, enum ct_dir inner_dir,
			  enum ct_dir *err_dir, uint8_t *reason)
{
	(void)pkt; (void)orig; (void)reason;
	*err_dir = inner_dir == CT_DIR_ORIGINAL ? CT_DIR_REPLY : CT_DIR_ORIGINAL;
	return true;
}
