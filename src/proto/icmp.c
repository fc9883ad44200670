/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * icmp.c - ICMP and ICMPv6: query trackers and the error rules.
 *
 * Queries (nf_conntrack_icmp_packet / nf_conntrack_icmpv6_packet, Linux
 * 6.18).  The tuple is (id, type << 8 | code); ct_tuple_invert() maps a
 * request type to its reply type, as the kernel's invmap.  Only a request
 * type the kernel lists in valid_new may create an entry: echo, timestamp,
 * information and address mask requests for ICMP, echo request and node
 * information query for ICMPv6.  Anything else that reaches a tracker
 * without an entry - a reply with no request, router advertisements,
 * redirects, ... - is INVALID (CT_PR_ICMP_UNTRACKED_TYPE) and creates
 * nothing (for types with no reply form the kernel already fails to invert
 * the tuple in init_conntrack; for reply types it refuses in the tracker).
 * Every accepted packet, request or reply, refreshes the entry to
 * icmp_timeout / icmpv6_timeout; the kernel deliberately does not destroy
 * the entry on the reply (duplicates, conntrackd traffic).  ICMP entries
 * are never ASSURED.  ICMP over IPv6, or ICMPv6 over IPv4, is refused.
 *
 * ->classify does the packet-level steps of nf_conntrack_icmpv4_error /
 * nf_conntrack_icmpv6_error that need no entry: ICMP types above 18 are
 * invalid; ICMPv6 MLD and neighbour discovery (noct_valid_new) are
 * untracked.
 *
 * Errors (destination unreachable, ...) are matched to the connection
 * they quote by the core with the two functions of icmp.h, which
 * explains the whole contract.
 */
#include <netinet/in.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/icmp.h"

/* The highest ICMP type the kernel knows (NR_ICMP_TYPES). */
#define ICMP_TYPE_MAX 18

/* ICMPv6 types the kernel never tracks (noct_valid_new): MLD query,
 * report and done (130-132), router solicitation and advertisement,
 * neighbour solicitation and advertisement (133-136), MLDv2 report (143). */
static bool icmpv6_is_noct(uint8_t type)
{
	return (type >= 130 && type <= 136) || type == 143;
}

/* valid_new[] of nf_conntrack_icmp_packet: the requests. */
static bool icmp_valid_new(uint8_t type)
{
	return type == 8 || type == 13 || type == 15 || type == 17;
}

/* valid_new[] of nf_conntrack_icmpv6_packet: echo request, NI query. */
static bool icmpv6_valid_new(uint8_t type)
{
	return type == 128 || type == 139;
}

bool ct_icmp_is_error(const struct ct_packet *pkt)
{
	uint8_t type = pkt->u.icmp.type;

	if (pkt->tuple.l4 == IPPROTO_ICMP && pkt->tuple.l3 == CT_L3_IPV4)
		return type == 3 || type == 4 || type == 5 || type == 11 ||
		       type == 12;
	if (pkt->tuple.l4 == IPPROTO_ICMPV6 && pkt->tuple.l3 == CT_L3_IPV6)
		return type < 128;
	return false;
}

bool ct_icmp_error_key(const struct ct_packet *pkt, struct ct_tuple *key,
		       uint8_t *reason)
{
	const struct ct_icmp_info *ic = &pkt->u.icmp;
	struct ct_tuple inv;

	/* nf_ct_get_tuplepr() on the quoted header failed, or it quotes a
	 * packet of another family (the kernel parses it as the outer pf) */
	if (!ic->inner_ok || ic->inner.l3 != pkt->tuple.l3) {
		*reason = CT_PR_ICMP_BAD;
		return false;
	}
	/* nf_ct_invert_tuple() fails for quoted ICMP that is not a query */
	if (!ct_tuple_invert(&ic->inner, &inv)) {
		*reason = CT_PR_ICMP_BAD;
		return false;
	}
	*key = ic->inner;
	key->zone = pkt->tuple.zone;
	return true;
}

bool ct_icmp_error_accept(const struct ct_packet *pkt,
			  const struct ct_tuple *orig, const struct ct_tuple *reply,
			  enum ct_dir inner_dir, enum ct_dir *err_dir, uint8_t *reason)
{
	/*
	 * The kernel's lookup key is the inverse of the quoted tuple, so its
	 * direction h is the opposite of @inner_dir, and it compares the
	 * outer destination with tuplehash[h].dst: orig.dst when h is
	 * ORIGINAL, reply.dst when h is REPLY (orig.src without NAT).
	 */
	enum ct_dir h = inner_dir == CT_DIR_ORIGINAL ? CT_DIR_REPLY
						     : CT_DIR_ORIGINAL;
	const union ct_addr *ct_daddr = h == CT_DIR_ORIGINAL ? &orig->dst
							     : &reply->dst;

	if (memcmp(&pkt->tuple.dst, ct_daddr, sizeof(*ct_daddr)) != 0) {
		*reason = CT_PR_ICMP_NO_MATCH;
		return false;
	}
	*err_dir = h; /* IP_CT_RELATED, + IP_CT_IS_REPLY when h is REPLY */
	return true;
}

static int icmp_classify(const struct ct_packet *pkt,
			 const struct ct_settings *set, uint8_t *reason)
{
	(void)set;
	/* nf_conntrack_icmpv4_error runs for ICMP over IPv4 only */
	if (pkt->tuple.l3 == CT_L3_IPV4 && pkt->u.icmp.type > ICMP_TYPE_MAX) {
		*reason = CT_PR_ICMP_BAD;
		return CT_V_INVALID;
	}
	return -1;
}

static int icmpv6_classify(const struct ct_packet *pkt,
			   const struct ct_settings *set, uint8_t *reason)
{
	(void)set;
	(void)reason;
	if (pkt->tuple.l3 == CT_L3_IPV6 && icmpv6_is_noct(pkt->u.icmp.type))
		return CT_V_UNTRACKED;
	return -1;
}

static void icmp_packet(struct ct_conn *c, const struct ct_proto_ctx *ctx,
			struct ct_proto_out *out)
{
	/* The kernel checks the type of the original tuple at every packet;
	 * for an existing entry it is always a request. */
	if (ctx->pkt->tuple.l3 != CT_L3_IPV4 ||
	    !icmp_valid_new(ct_conn_icmp_type(c))) {
		out->verdict = CT_PV_INVALID;
		out->reason = CT_PR_ICMP_UNTRACKED_TYPE;
		return;
	}
	out->verdict = CT_PV_ACCEPT;
	out->timeout_ns = ct_secs(ctx->set->icmp_timeout);
}

static void icmpv6_packet(struct ct_conn *c, const struct ct_proto_ctx *ctx,
			  struct ct_proto_out *out)
{
	if (ctx->pkt->tuple.l3 != CT_L3_IPV6 ||
	    (ctx->is_new && !icmpv6_valid_new(ct_conn_icmp_type(c)))) {
		out->verdict = CT_PV_INVALID;
		out->reason = CT_PR_ICMP_UNTRACKED_TYPE;
		return;
	}
	out->verdict = CT_PV_ACCEPT;
	out->timeout_ns = ct_secs(ctx->set->icmpv6_timeout);
}

const struct ct_proto ct_proto_icmp = {
	.name = "icmp",
	.l4 = 1,
	.priv_size = 0,
	.classify = icmp_classify,
	.packet = icmp_packet,
};

const struct ct_proto ct_proto_icmpv6 = {
	.name = "icmpv6",
	.l4 = 58,
	.priv_size = 0,
	.classify = icmpv6_classify,
	.packet = icmpv6_packet,
};

