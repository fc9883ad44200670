/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * udp.c - UDP and UDP-Lite trackers.
 *
 * Both are stateless in the kernel's sense (no l4state, no state name):
 * what changes is the timeout and the ASSURED bit.  The rules follow
 * nf_conntrack_udp_packet() and nf_conntrack_udplite_packet() of Linux
 * 6.18:
 *
 *  - Until a reply has been seen (SEEN_REPLY in the status *before* this
 *    packet; the core sets that bit after the tracker, as nf_conntrack_in
 *    does), every packet refreshes to udp_timeout.  So the first reply
 *    itself still gets udp_timeout.
 *  - UDP, once a reply has been seen: the kernel stamps the entry with
 *    "creation + 2 s" (stream_ts, written while the entry is unconfirmed,
 *    i.e. by the packet that creates it).  A packet - either direction -
 *    arriving strictly after that instant (time_after) gets
 *    udp_timeout_stream and, if the entry is not ASSURED yet, makes it
 *    ASSURED; a packet within the first 2 s keeps udp_timeout and does not
 *    assure.  We keep the creation time (caller's ns) in the private area.
 *  - UDP-Lite has no 2 s rule: once a reply has been seen, every packet
 *    gets udp_timeout_stream and assures.  It uses UDP's timeouts (the
 *    kernel's udplite shares the udp pernet timeouts).
 *  - Neither ever assures an entry marked IPS_NAT_CLASH (the timeout is
 *    still extended).  ctrack does no NAT and never sets that bit, but the
 *    rule is honoured so that the status word means what it means in the
 *    kernel.
 *
 * Header checks (short header, length field, checksum coverage) belong to
 * the parser; UDP-Lite's "checksum missing" (a zero checksum field, which
 * UDP-Lite forbids) is checked here because the kernel checks it whatever
 * nf_conntrack_checksum says.
 */
#include "proto/udp.h"

static void udp_packet(struct ct_conn *c, const struct ct_proto_ctx *ctx,
		       struct ct_proto_out *out)
{
	ct_udp_packet(c, ctx, out);
}

static void udplite_packet(struct ct_conn *c, const struct ct_proto_ctx *ctx,
			   struct ct_proto_out *out)
{
	const struct ct_packet *pkt = ctx->pkt;
	const struct ct_settings *set = ctx->set;

	(void)c;
	/* udplite_error: "UDPLITE mandates checksums". */
	if (pkt->l4 && pkt->l4_caplen >= 8 && pkt->l4[6] == 0 && pkt->l4[7] == 0) {
		out->verdict = CT_PV_INVALID;
		out->reason = CT_PR_L4_BAD_CSUM;
		return;
	}
	out->verdict = CT_PV_ACCEPT;
	if (ctx->status & CT_ST_SEEN_REPLY) {
		out->timeout_ns = ct_secs(set->udp_timeout_stream);
		if (!(ctx->status & (CT_ST_ASSURED | CT_ST_NAT_CLASH)))
			out->set_assured = true;
	} else {
		out->timeout_ns = ct_secs(set->udp_timeout);
	}
}

/*
 * Records (proto.h): the creation time as an age, so that the 2 s rule
 * holds across a restore whatever clock the next table runs on.  A commit
 * starts a stream at once: ctnetlink creates the entry confirmed, so the
 * kernel never stamps its stream_ts (0, long past).
 */
static void udp_to_record(const struct ct_conn *c, union ct_record_proto *rp,
			  ct_time_ns now)
{
	const struct ct_udp_priv *p = ct_conn_priv_const(c);

	rp->udp.age_ns = now > p->created_ns ? now - p->created_ns : 0;
}

static enum ct_record_reason udp_record_check(uint8_t l4state,
					      const union ct_record_proto *rp)
{
	(void)l4state;
	(void)rp;
	return CT_RECORD_OK;    /* any age is one */
}

static void udp_from_record(struct ct_conn *c, const union ct_record_proto *rp,
			    ct_time_ns base, bool commit, const struct ct_settings *set)
{
	struct ct_udp_priv *p = ct_conn_priv(c);

	(void)set;
	if (commit)
		p->created_ns = 0;
	else
		p->created_ns = base > rp->udp.age_ns ? base - rp->udp.age_ns : 0;
}

const struct ct_proto ct_proto_udp = {
	.name = "udp",
	.l4 = 17,
	.priv_size = sizeof(struct ct_udp_priv),
	.packet = udp_packet,
	.to_record = udp_to_record,
	.record_check = udp_record_check,
	.from_record = udp_from_record,
};

const struct ct_proto ct_proto_udplite = {
	.name = "udplite",
	.l4 = 136,
	.priv_size = 0,
	.packet = udplite_packet,
};
