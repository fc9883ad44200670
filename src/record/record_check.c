/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * record_check.c - could this library have made this record?
 *
 * A record comes from a file, a peer or a caller, and nothing in it is
 * trusted: before anything is made of it every field is held against
 * what an entry can be - the tuple's family and the address bytes it
 * leaves zero, ports where the protocol has them (an ICMP query type, a
 * protocol without ports has none), NAT bits that can be together, a
 * reply tuple that is the inverted original but where those bits say
 * (check_nat below: the kernel's nf_nat_setup_info sets IPS_SRC_NAT only
 * when the manipulation changed the tuple, and a source manipulation
 * changes only the original's source, which is the reply's destination),
 * status bits an entry can carry, the protocol's state range and
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
	[CT_RECORD_R_REPLY] = "reply tuple does not agree with the NAT status",
	[CT_RECORD_R_NAT] = "NAT status bits that cannot be together",
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
	[CT_RECORD_R_NAT_OFF] = "a NAT binding, and this table does no NAT",
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
 * with the insert; the NAT bits with a binding (IPS_SEQ_ADJUST, 0x40,
 * needs a helper ctrack does not have: refused as a status bit). */
#define REC_STATUS_NAT (CT_ST_NAT_MASK | CT_ST_NAT_DONE_MASK | CT_ST_NAT_CLASH)
#define REC_STATUS_OK (CT_ST_SEEN_REPLY | CT_ST_ASSURED | CT_ST_CONFIRMED | REC_STATUS_NAT)

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

/* The kernel's l4proto->allow_clash: only these get IPS_NAT_CLASH. */
static bool may_clash(uint8_t l4)
{
	return l4 == IPPROTO_UDP || l4 == IPPROTO_UDPLITE || l4 == IPPROTO_ICMP ||
	       l4 == IPPROTO_ICMPV6 || l4 == IPPROTO_GRE;
}

/* The NAT bits of @r (status & REC_STATUS_NAT) against each other. */
static enum ct_record_reason check_nat_bits(const struct ct_record *r)
{
	uint32_t st = r->status;

	if (r->nat.version || r->nat.len || !zero(r->nat.data, sizeof(r->nat.data)))
		return CT_RECORD_R_NAT;
	/* nf_nat_setup_info sets IPS_x_NAT together with IPS_x_NAT_DONE */
	if (((st & CT_ST_SRC_NAT) && !(st & CT_ST_SRC_NAT_DONE)) ||
	    ((st & CT_ST_DST_NAT) && !(st & CT_ST_DST_NAT_DONE)))
		return CT_RECORD_R_NAT;
	/* nf_ct_resolve_clash_harder marks the loser of a clash whose reply
	 * tuple differs from the winner's: a protocol that allows clashes,
	 * with its NAT set up */
	if ((st & CT_ST_NAT_CLASH) &&
	    (!may_clash(r->orig.l4) || (st & CT_ST_NAT_DONE_MASK) != CT_ST_NAT_DONE_MASK))
		return CT_RECORD_R_NAT;
	return CT_RECORD_OK;
}

static bool same_side(const union ct_addr *a, uint16_t ap, const union ct_addr *b,
		      uint16_t bp, bool ports)
{
	return memcmp(a, b, sizeof(*a)) == 0 && (!ports || ap == bp);
}

/*
 * The reply tuple @r->reply against the inverted original @inv and the
 * NAT bits: the reply's destination (address, port) is the original's
 * source, so it differs only with SRC_NAT; its source only with DST_NAT.
 * ICMP keeps its id in both tuples' sport (ctrack/tuple.h) and the kernel
 * varies it for either manipulation (nf_nat_l4proto_unique_tuple's
 * icmp.id for SRC and DST alike): a changed id needs a NAT bit, and
 * counts for either side; the reply's type/code is always the inverse's.
 * A bit set with nothing changed on its side is refused: the kernel sets
 * it only when the tuple changed.
 */
static enum ct_record_reason check_reply(const struct ct_record *r, const struct ct_tuple *inv)
{
	const struct ct_tuple *y = &r->reply;
	uint32_t st = r->status & CT_ST_NAT_MASK;
	bool icmp = r->orig.l4 == IPPROTO_ICMP || r->orig.l4 == IPPROTO_ICMPV6;
	bool dst_same, src_same, id_same;

	if (!st)
		return ct_tuple_equal(inv, y) ? CT_RECORD_OK : CT_RECORD_R_REPLY;
	/* a reply tuple that is the original itself (snat to the server,
	 * dnat to the client) would be one key twice */
	if (check_tuple(y) != CT_RECORD_OK || ct_tuple_equal(y, &r->orig))
		return CT_RECORD_R_REPLY;
	/* reply dst = original src (SRC_NAT's side), reply src = original
	 * dst (DST_NAT's) */
	dst_same = same_side(&y->dst, y->dport, &inv->dst, inv->dport, !icmp);
	src_same = same_side(&y->src, y->sport, &inv->src, inv->sport, !icmp);
	id_same = !icmp || y->sport == inv->sport;
	if (icmp && y->dport != inv->dport)
		return CT_RECORD_R_REPLY;
	if ((!dst_same && !(st & CT_ST_SRC_NAT)) || (!src_same && !(st & CT_ST_DST_NAT)))
		return CT_RECORD_R_REPLY;
	if (((st & CT_ST_SRC_NAT) && dst_same && id_same) ||
	    ((st & CT_ST_DST_NAT) && src_same && id_same))
		return CT_RECORD_R_REPLY;
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
	if ((why = check_nat_bits(r)) != CT_RECORD_OK)
		return why;
	if (!ct_tuple_invert(&r->orig, &inv))
		return CT_RECORD_R_REPLY;
	if ((why = check_reply(r, &inv)) != CT_RECORD_OK)
		return why;
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
