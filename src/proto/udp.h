/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * udp.h - the UDP tracker's per-packet rule, inline.
 *
 * udp.c explains the rules.  The function is here, not in
 * udp.c, so that the tracking loop (track/track.c) can run it without the
 * indirect call through ct_proto.packet: on an established UDP lookup the
 * call, and the context and result it passes through memory, cost more
 * than the rule.  udp.c's tracker calls the same function, so the
 * rule has one copy.
 */
#ifndef CT_PROTO_UDP_H
#define CT_PROTO_UDP_H

#include "proto/proto.h"

/* Private area: when the entry was created (ctx->now of its first packet). */
struct ct_udp_priv {
	uint64_t created_ns;
};

_Static_assert(sizeof(struct ct_udp_priv) % 8 == 0, "priv size multiple of 8");

/* nf_conntrack_udp_packet: "Still active after two seconds?" */
#define CT_UDP_STREAM_DELAY_NS (2ull * 1000000000ull)

static inline __attribute__((always_inline)) void
ct_udp_packet(struct ct_conn *c, const struct ct_proto_ctx *ctx,
	      struct ct_proto_out *out)
{
	struct ct_udp_priv *p = ct_conn_priv(c);
	const struct ct_settings *set = ctx->set;

	if (ctx->is_new)
		p->created_ns = ctx->now;

	out->verdict = CT_PV_ACCEPT;
	if (!(ctx->status & CT_ST_SEEN_REPLY)) {
		out->timeout_ns = ct_secs(set->udp_timeout);
		return;
	}
	/* time_after(jiffies, stream_ts): strictly later than created + 2 s.
	 * Written so that a clock that went backwards cannot wrap. */
	if (ctx->now > p->created_ns &&
	    ctx->now - p->created_ns > CT_UDP_STREAM_DELAY_NS) {
		out->timeout_ns = ct_secs(set->udp_timeout_stream);
		if (!(ctx->status & (CT_ST_ASSURED | CT_ST_NAT_CLASH)))
			out->set_assured = true;
	} else {
		out->timeout_ns = ct_secs(set->udp_timeout);
	}
}

#endif /* CT_PROTO_UDP_H */
