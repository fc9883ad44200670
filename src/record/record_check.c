/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * record_check.c - could this library have made this record?
 *
 * A record comes from a file, a peer or a caller, and nothing in it is
 * trusted: before anything is made of it every field is held against
 * what an entry can be - the tuple's family and the address bytes it
 * leaves zero, ports where the protocol has them (an ICMP query type, a
 * protocol without ports has none), a reply tuple that is the inverted
 * original, status bits an entry can carry, the protocol's state range and
 * its private state (each tracker judges its own, proto.h's
 * record_check, as the kernel's from_nlattr validates what ctnetlink
 * gives it), times that can be.  What a record does not use is zero.
 * The first reason found is the answer; the order below is the order of
 * ct_record_reason, so that a record with two faults is refused for the
 * same one every time.
 */
#include <netinet/in.h>
#include <string.h>

#include "proto/proto.h"
#include "record/record_priv.h"

static const char *const reason_names[CT_RECORD_R_MAX] = {
	[CT_RECORD_OK] = "ok",
	[CT_RECORD_R_VERSION] = "record version not known to this ctrack",
	[CT_RECORD_R_ENCODING] = "record encoding (length or sections) is wrong",
	[CT_RECORD_R_HAS] = "unknown or inconsistent presence bits",
	[CT_RECORD_R_FAMILY] = "address family or tuple bytes impossible",
	[CT_RECORD_R_PORTS] = "ports or ICMP type impossible for the protocol",
	[CT_RECORD_R_REPLY] = "reply tuple is not the inverted original",
	[CT_RECORD_R_NAT] = "NAT binding, and this table does no NAT",
	[CT_RECORD_R_STATUS] = "status bits an entry cannot have",
	[CT_RECORD_R_STATE] = "protocol state out of range",
	[CT_RECORD_R_PROTO] = "protocol state field out of range",
	[CT_RECORD_R_TIMEOUT] = "timeout beyond 2^32 seconds",
	[CT_RECORD_R_TSTAMP] = "last packet before the first",
	[CT_RECORD_R_ZONE] = "no such zone",
	[CT_RECORD_R_EXISTS] = "a live entry holds the tuple",
	[CT_RECORD_R_FULL] = "the table or the zone is full",
	[CT_RECORD_R_CHAIN] = "the hash row is at its chain limit",
	[CT_RECORD_R_NOMEM] = "out of memory",
};

const char *ct_record_reason_name(enum ct_record_reason r)
{
	return (unsigned)r < CT_RECORD_R_MAX ? reason_names[r] : "unknown reason";
}

size_t ct_record_proto_size(uint8_t l4)
{
	switch (l4) {
	case IPPROTO_TCP:
		return sizeof(struct ct_record_tcp);
	case IPPROTO_UDP:
		return sizeof(struct ct_record_udp);
	case IPPROTO_SCTP:
		return sizeof(struct ct_record_sctp);
	case IPPROTO_GRE:
		return sizeof(struct ct_record_gre);
	default:
		return 0;
	}
}

/* Status bits an entry of this table can carry (table.h): CONFIRMED comes
 * with the insert.  The NAT bits are the kernel's IPS_*NAT*, SEQ_ADJUST
 * and NAT_CLASH: refused with their own reason until NAT joins the table. */
#define REC_STATUS_OK (CT_ST_SEEN_REPLY | CT_ST_ASSURED | CT_ST_CONFIRMED)
#define REC_STATUS_NAT (0x10u | 0x20u | 0x40u | 0x80u | 0x100u | CT_ST_NAT_CLASH)

/* No field a record leaves unused is larger than this. */
static const uint8_t zeros[64];

static bool zero(const void *p, size_t n)
{
	return n <= sizeof(zeros) ? memcmp(p, zeros, n) == 0 : false;
}

static bool ported(uint8_t l4)
{
	return l4 == IPPROTO_TCP || l4 == IPPROTO_UDP || l4 == IPPROTO_UDPLITE ||
	       l4 == IPPROTO_SCTP || l4 == IPPROTO_GRE;
}

static enum ct_record_reason check_tuple(const struct ct_tuple *t)
{
	if (t->l3 != CT_L3_IPV4 && t->l3 != CT_L3_IPV6)
		return CT_RECORD_R_FAMILY;
	if (t->l3 == CT_L3_IPV4 &&
	    (!zero(t->src.ip6 + 4, 12) || !zero(t->dst.ip6 + 4, 12)))
		return CT_RECORD_R_FAMILY;
	if (t->l4 == IPPROTO_ICMP || t->l4 == IPPROTO_ICMPV6) {
		struct ct_tuple inv;

		/* a query of its own family (ct_tuple_invert knows which
		 * types have a reply); the parser never makes others */
		if ((t->l4 == IPPROTO_ICMP) != (t->l3 == CT_L3_IPV4) ||
		    !ct_tuple_invert(t, &inv))
			return CT_RECORD_R_PORTS;
	} else if (!ported(t->l4) && (t->sport || t->dport)) {
		return CT_RECORD_R_PORTS;
	}
	return CT_RECORD_OK;
}

enum ct_record_reason ct_record_check(const struct ct_record *r)
{
	const struct ct_proto *p;
	struct ct_tuple inv;
	enum ct_record_reason why;
	size_t psz;

	if (r->version != CT_RECORD_VERSION)
		return CT_RECORD_R_VERSION;
	if ((r->has & ~CT_RECORD_HAS_ALL) || r->reserved ||
	    (!(r->has & CT_RECORD_HAS_ACCT) &&
	     !zero(r->packets, sizeof(r->packets) + sizeof(r->bytes))) ||
	    (!(r->has & CT_RECORD_HAS_TSTAMP) &&
	     (r->first_seen_ago_ns || r->last_seen_ago_ns)) ||
	    (!(r->has & CT_RECORD_HAS_LABELS) && !zero(r->labels, sizeof(r->labels))))
		return CT_RECORD_R_HAS;
	if ((why = check_tuple(&r->orig)) != CT_RECORD_OK)
		return why;
	if (r->reply.l3 != r->orig.l3 || r->reply.l4 != r->orig.l4 ||
	    r->reply.zone != r->orig.zone)
		return CT_RECORD_R_FAMILY;
	if ((r->status & REC_STATUS_NAT) || r->nat.version || r->nat.len ||
	    !zero(r->nat.data, sizeof(r->nat.data)))
		return CT_RECORD_R_NAT;
	if (!ct_tuple_invert(&r->orig, &inv) || !ct_tuple_equal(&inv, &r->reply))
		return CT_RECORD_R_REPLY;
	if (r->status & ~REC_STATUS_OK)
		return CT_RECORD_R_STATUS;
	p = ct_proto_find(r->orig.l4);
	if (p->n_states ? r->l4state >= p->n_states : r->l4state != 0)
		return CT_RECORD_R_STATE;
	psz = ct_record_proto_size(r->orig.l4);
	if (!zero(r->proto.bytes + psz, sizeof(r->proto) - psz))
		return CT_RECORD_R_PROTO;
	if (p->record_check &&
	    (why = p->record_check(r->l4state, &r->proto)) != CT_RECORD_OK)
		return why;
	if (r->timeout_ns > CT_RECORD_TIMEOUT_MAX_NS)
		return CT_RECORD_R_TIMEOUT;
	if (r->last_seen_ago_ns > r->first_seen_ago_ns)
		return CT_RECORD_R_TSTAMP;
	return CT_RECORD_OK;
}
