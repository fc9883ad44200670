/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sync_conn.c - a ctrack connection as the sync protocol carries it, and
 * back.
 *
 * The protocol carries the original tuple only; the reply tuple is
 * rebuilt by the receiver from the inverted original and the NAT
 * attributes (libnetfilter_conntrack's NFCT_SOPT_SETUP_REPLY).  So the
 * sender must say exactly where NAT changed the reply, and it decides that
 * as libnetfilter_conntrack's NFCT_GOPT_IS_SNAT/DNAT/SPAT/DPAT do: an
 * address or port of the reply differs from the inverted original's, and
 * the status says that NAT was done in that direction.
 */
#include <string.h>

#include "ctrack/sync.h"
#include "sync/sync_wire.h"

static bool addr_eq(const union ct_addr *a, const union ct_addr *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

static bool l4_ported(uint8_t l4)
{
	return l4 == CT_SYNC_P_TCP || l4 == CT_SYNC_P_UDP || l4 == CT_SYNC_P_SCTP ||
	       l4 == CT_SYNC_P_DCCP || l4 == CT_SYNC_P_UDPLITE;
}

void ct_sync_conn_from_info(struct ct_sync_conn *out,
			    const struct ct_conn_info *ci, ct_time_ns now)
{
	const struct ct_tuple *o = &ci->orig, *r = &ci->reply;
	uint8_t l4 = o->l4;

	memset(out, 0, sizeof(*out));
	out->orig = *o;
	out->has = CT_SYNC_HAS_STATUS | CT_SYNC_HAS_MARK | CT_SYNC_HAS_TIMEOUT;
	if (o->zone)
		out->has |= CT_SYNC_HAS_ZONE;
	if (l4_ported(l4) || l4 == CT_SYNC_P_ICMP || l4 == CT_SYNC_P_ICMPV6 ||
	    l4 == CT_SYNC_P_GRE)
		out->has |= CT_SYNC_HAS_PORTS;
	/* DYING is the kernel's own business; a peer must not commit it. */
	out->status = ci->status & ~(uint32_t)CT_SYNC_IPS_DYING;
	out->mark = ci->mark;
	/* ctnetlink's CTA_TIMEOUT: whole seconds left, rounded down. */
	out->timeout_s = ci->expires > now ?
			 (uint32_t)((ci->expires - now) / 1000000000ull) : 0;
	if (l4 == CT_SYNC_P_TCP || l4 == CT_SYNC_P_SCTP) {
		out->l4state = ci->l4state;
		out->has |= CT_SYNC_HAS_STATE;
	}
	if (l4 == CT_SYNC_P_TCP) {
		/* what ctnetlink's CTA_PROTOINFO_TCP_WSCALE_* give conntrackd;
		 * sent with window-tracking=on (TCPWindowTracking) */
		out->wscale[0] = ci->tcp.wscale[0];
		out->wscale[1] = ci->tcp.wscale[1];
		out->has |= CT_SYNC_HAS_WSCALE;
	}
	for (unsigned i = 0; i < sizeof(ci->labels); i++) {
		if (ci->labels[i]) {
			memcpy(out->labels, ci->labels, sizeof(out->labels));
			out->has |= CT_SYNC_HAS_LABELS;
			break;
		}
	}
	if (ci->status & CT_SYNC_IPS_SRC_NAT_DONE) {
		if (!addr_eq(&r->dst, &o->src)) {
			out->snat_addr = r->dst;
			out->has |= CT_SYNC_HAS_SNAT;
		}
		if (l4_ported(l4) && r->dport != o->sport) {
			out->snat_port = r->dport;
			out->has |= CT_SYNC_HAS_SPAT;
		}
	}
	if (ci->status & CT_SYNC_IPS_DST_NAT_DONE) {
		if (!addr_eq(&r->src, &o->dst)) {
			out->dnat_addr = r->src;
			out->has |= CT_SYNC_HAS_DNAT;
		}
		if (l4_ported(l4) && r->sport != o->dport) {
			out->dnat_port = r->sport;
			out->has |= CT_SYNC_HAS_DPAT;
		}
	}
}

bool ct_sync_conn_reply(const struct ct_sync_conn *c, struct ct_tuple *reply)
{
	if (!ct_tuple_invert(&c->orig, reply))
		return false;
	if (c->has & CT_SYNC_HAS_SNAT)
		reply->dst = c->snat_addr;
	if (c->has & CT_SYNC_HAS_DNAT)
		reply->src = c->dnat_addr;
	/* The port attributes are conntrackd's ATTR_REPL_PORT_DST / _SRC,
	 * compared with the original's ports by NFCT_GOPT_IS_SPAT / IS_DPAT
	 * whatever the protocol: for ICMP they hold the reply's type/code
	 * against the original's id, so conntrackd 1.4.7 sends both for every
	 * ICMP entry with its NAT bits, carrying 0 (seen from a kernel's
	 * NATed echo: SPAT 0, DPAT 0).  They say nothing about an ICMP id:
	 * applied only where the protocol has ports. */
	if (!l4_ported(c->orig.l4))
		return true;
	if (c->has & CT_SYNC_HAS_SPAT)
		reply->dport = c->snat_port;
	if (c->has & CT_SYNC_HAS_DPAT)
		reply->sport = c->dnat_port;
	return true;
}
