/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sync_codec.c - conntrackd 1.4.7's messages <-> struct ct_sync_conn.
 *
 * The encoder writes the attributes in the order conntrackd's ct2msg()
 * writes them (addresses, status, protocol, the protocol's own, timeout,
 * mark, master, NAT, sequence adjustment, helper, labels, synproxy, zone),
 * so that a capture of ctrack and one of conntrackd read alike.  The
 * decoder follows msg2ct()'s rules where they are rules (an attribute of
 * the wrong size, one longer than what is left, an unknown type: the whole
 * message is refused) and is stricter where conntrackd is merely lenient
 * (a repeated attribute, bytes left over, a record no kernel would take:
 * conntrackd passes those on to its caches and lets the kernel refuse the
 * commit later; ctrack refuses them here and counts why, so that nothing
 * impossible ever reaches a cache).
 *
 * Everything is read byte by byte (sync_wire.h): a message may start at
 * any offset of a hostile datagram.
 */
#include <errno.h>
#include <string.h>

#include "ctrack/sync.h"
#include "sync/sync_wire.h"

static const char *const err_names[CT_SYNC_E_MAX] = {
	[CT_SYNC_OK] = "ok",
	[CT_SYNC_E_TRUNCATED] = "truncated",
	[CT_SYNC_E_BAD_SIZE] = "bad_size",
	[CT_SYNC_E_BAD_VERSION] = "bad_version",
	[CT_SYNC_E_BAD_HEADER] = "bad_header",
	[CT_SYNC_E_BAD_TYPE] = "bad_type",
	[CT_SYNC_E_BAD_PAYLOAD] = "bad_payload",
	[CT_SYNC_E_UNKNOWN_ATTR] = "unknown_attr",
	[CT_SYNC_E_DUP_ATTR] = "dup_attr",
	[CT_SYNC_E_IMPOSSIBLE] = "impossible",
};

const char *ct_sync_err_name(enum ct_sync_err e)
{
	return (unsigned)e < CT_SYNC_E_MAX ? err_names[e] : "unknown";
}

/* ------------------------------------------------------------------ */
/* headers                                                            */

static bool flags_need_ack_len(uint8_t type, uint8_t flags)
{
	return type == CT_SYNC_T_CTL &&
	       (flags & (CT_SYNC_F_ACK | CT_SYNC_F_NACK | CT_SYNC_F_RESYNC));
}

enum ct_sync_err ct_sync_msg_header(const void *buf, size_t len,
				    struct ct_sync_hdr *h)
{
	const uint8_t *p = buf;

	/* conntrackd's channel_handler_routine(), in its order. */
	if (len < CT_SYNC_HDR_LEN)
		return CT_SYNC_E_TRUNCATED;
	h->type = p[0] & 0x0f;
	h->version = p[0] >> 4;
	h->flags = p[1];
	h->len = ct_sync_rd16(p + 2);
	h->seq = ct_sync_rd32(p + 4);
	h->from = h->to = 0;
	if (h->len == 0 || h->len > len)
		return CT_SYNC_E_BAD_SIZE;
	if (flags_need_ack_len(h->type, h->flags)) {
		if (h->len < CT_SYNC_ACK_LEN)
			return CT_SYNC_E_BAD_SIZE;
		h->from = ct_sync_rd32(p + 8);
		h->to = ct_sync_rd32(p + 12);
	} else if (h->len < CT_SYNC_HDR_LEN) {
		return CT_SYNC_E_BAD_SIZE;
	}
	if (h->version != CT_SYNC_VERSION)
		return CT_SYNC_E_BAD_VERSION;
	return CT_SYNC_OK;
}

enum ct_sync_class ct_sync_msg_class(const struct ct_sync_hdr *h)
{
	/* IS_DATA, then digest_msg()'s order: ACK, NACK, RESYNC, ALIVE. */
	if (h->type <= CT_SYNC_T_STATE_MAX &&
	    (h->flags & ~(CT_SYNC_F_HELLO | CT_SYNC_F_HELLO_BACK)) == 0)
		return CT_SYNC_C_DATA;
	if (h->type != CT_SYNC_T_CTL)
		return CT_SYNC_C_BAD;
	if (h->flags & CT_SYNC_F_ACK)
		return CT_SYNC_C_ACK;
	if (h->flags & CT_SYNC_F_NACK)
		return CT_SYNC_C_NACK;
	if (h->flags & CT_SYNC_F_RESYNC)
		return CT_SYNC_C_RESYNC;
	if (h->flags & CT_SYNC_F_ALIVE)
		return CT_SYNC_C_ALIVE;
	return CT_SYNC_C_BAD;
}

static void put_hdr(uint8_t *p, uint8_t type, uint8_t flags, uint16_t len,
		    uint32_t seq)
{
	p[0] = (uint8_t)(CT_SYNC_VERSION << 4 | (type & 0x0f));
	p[1] = flags;
	ct_sync_wr16(p + 2, len);
	ct_sync_wr32(p + 4, seq);
}

int ct_sync_msg_ctl(void *buf, size_t cap, uint8_t flags, uint32_t seq,
		    uint32_t from, uint32_t to)
{
	uint8_t *p = buf;
	size_t len = flags_need_ack_len(CT_SYNC_T_CTL, flags) ?
		     CT_SYNC_ACK_LEN : CT_SYNC_HDR_LEN;

	if (cap < len)
		return -ENOSPC;
	put_hdr(p, CT_SYNC_T_CTL, flags, (uint16_t)len, seq);
	if (len == CT_SYNC_ACK_LEN) {
		ct_sync_wr32(p + 8, from);
		ct_sync_wr32(p + 12, to);
	}
	return (int)len;
}

/* ------------------------------------------------------------------ */
/* encoding                                                           */

struct enc {
	uint8_t *p;
	size_t cap, len;
	bool full;
};

/* One TLV of @vlen value bytes, padded with zeros to 4; returns where the
 * value goes, or NULL (and marks the encoder full) when it does not fit. */
static uint8_t *put_attr(struct enc *e, unsigned type, size_t vlen)
{
	size_t total = CT_SYNC_ALIGN4(CT_SYNC_TLV_HDR + vlen);
	uint8_t *a;

	if (e->full || e->len + total > e->cap) {
		e->full = true;
		return NULL;
	}
	a = e->p + e->len;
	ct_sync_wr16(a, (uint16_t)(CT_SYNC_TLV_HDR + vlen));
	ct_sync_wr16(a + 2, (uint16_t)type);
	memset(a + CT_SYNC_TLV_HDR, 0, total - CT_SYNC_TLV_HDR);
	e->len += total;
	return a + CT_SYNC_TLV_HDR;
}

static void put_u8(struct enc *e, unsigned type, uint8_t v)
{
	uint8_t *d = put_attr(e, type, 1);

	if (d)
		d[0] = v;
}

static void put_u16(struct enc *e, unsigned type, uint16_t v)
{
	uint8_t *d = put_attr(e, type, 2);

	if (d)
		ct_sync_wr16(d, v);
}

static void put_u16le(struct enc *e, unsigned type, uint16_t v)
{
	uint8_t *d = put_attr(e, type, 2);

	if (d)
		ct_sync_wr16le(d, v);
}

static void put_u32(struct enc *e, unsigned type, uint32_t v)
{
	uint8_t *d = put_attr(e, type, 4);

	if (d)
		ct_sync_wr32(d, v);
}

static void put_bytes(struct enc *e, unsigned type, const void *v, size_t n)
{
	uint8_t *d = put_attr(e, type, n);

	if (d)
		memcpy(d, v, n);
}

/* Addresses of a tuple: src then dst, as they sit in the packet. */
static void put_addrs(struct enc *e, unsigned a4, unsigned a6,
		      const struct ct_tuple *t)
{
	uint8_t *d;

	if (t->l3 == CT_L3_IPV4) {
		d = put_attr(e, a4, 8);
		if (d) {
			memcpy(d, &t->src.ip4, 4);
			memcpy(d + 4, &t->dst.ip4, 4);
		}
	} else {
		d = put_attr(e, a6, 32);
		if (d) {
			memcpy(d, t->src.ip6, 16);
			memcpy(d + 16, t->dst.ip6, 16);
		}
	}
}

static void put_ports(struct enc *e, unsigned type, const struct ct_tuple *t)
{
	uint8_t *d = put_attr(e, type, 4);

	if (d) {
		ct_sync_wr16(d, t->sport);
		ct_sync_wr16(d + 2, t->dport);
	}
}

/* Protocols whose tuple has two 16-bit ports conntrackd's PORT attribute
 * can carry.  conntrackd's own builder sends them only for TCP, UDP,
 * SCTP and DCCP (UDP-Lite and GRE go without, and a conntrackd-to-
 * conntrackd commit of those fails); ctrack sends them for UDP-Lite and
 * GRE too - the receiving conntrackd stores a PORT attribute whatever the
 * protocol - and accepts their absence from conntrackd. */
static bool l4_has_ports(uint8_t l4)
{
	switch (l4) {
	case CT_SYNC_P_TCP:
	case CT_SYNC_P_UDP:
	case CT_SYNC_P_SCTP:
	case CT_SYNC_P_DCCP:
	case CT_SYNC_P_UDPLITE:
	case CT_SYNC_P_GRE:
		return true;
	default:
		return false;
	}
}

static bool l4_needs_ports(uint8_t l4)
{
	return l4 == CT_SYNC_P_TCP || l4 == CT_SYNC_P_UDP ||
	       l4 == CT_SYNC_P_SCTP || l4 == CT_SYNC_P_DCCP;
}

static bool l4_is_icmp(uint8_t l4)
{
	return l4 == CT_SYNC_P_ICMP || l4 == CT_SYNC_P_ICMPV6;
}

static bool labels_any(const uint8_t *l)
{
	for (unsigned i = 0; i < 16; i++)
		if (l[i])
			return true;
	return false;
}

int ct_sync_msg_conn(void *buf, size_t cap, uint8_t type, uint8_t flags,
		     uint32_t seq, const struct ct_sync_conn *c, unsigned opts)
{
	struct enc e = { .p = buf, .cap = cap, .len = CT_SYNC_HDR_LEN };
	const struct ct_tuple *o = &c->orig;

	if (o->l3 != CT_L3_IPV4 && o->l3 != CT_L3_IPV6)
		return -EINVAL;
	if (cap < CT_SYNC_HDR_LEN)
		return -ENOSPC;

	put_addrs(&e, CT_SYNC_A_IPV4, CT_SYNC_A_IPV6, o);
	/* conntrackd always sends the status (0 when the event had none). */
	put_u32(&e, CT_SYNC_A_STATUS, (c->has & CT_SYNC_HAS_STATUS) ? c->status : 0);
	put_u8(&e, CT_SYNC_A_L4PROTO, o->l4);

	switch (o->l4) {
	case CT_SYNC_P_TCP:
		put_ports(&e, CT_SYNC_A_PORT, o);
		if (c->has & CT_SYNC_HAS_STATE) {
			put_u8(&e, CT_SYNC_A_TCP_STATE, c->l4state);
			if ((opts & CT_SYNC_ENC_WSCALE) && (c->has & CT_SYNC_HAS_WSCALE)) {
				put_u8(&e, CT_SYNC_A_TCP_WSCALE_ORIG, c->wscale[0]);
				put_u8(&e, CT_SYNC_A_TCP_WSCALE_REPL, c->wscale[1]);
			}
		}
		break;
	case CT_SYNC_P_SCTP:
		put_ports(&e, CT_SYNC_A_PORT, o);
		if (c->has & CT_SYNC_HAS_STATE) {
			put_u8(&e, CT_SYNC_A_SCTP_STATE, c->l4state);
			put_u32(&e, CT_SYNC_A_SCTP_VTAG_ORIG, c->sctp_vtag[0]);
			put_u32(&e, CT_SYNC_A_SCTP_VTAG_REPL, c->sctp_vtag[1]);
		}
		break;
	case CT_SYNC_P_DCCP:
		put_ports(&e, CT_SYNC_A_PORT, o);
		if (c->has & CT_SYNC_HAS_STATE) {
			put_u8(&e, CT_SYNC_A_DCCP_STATE, c->l4state);
			put_u8(&e, CT_SYNC_A_DCCP_ROLE, c->dccp_role);
		}
		break;
	case CT_SYNC_P_ICMP:
	case CT_SYNC_P_ICMPV6:
		put_u8(&e, CT_SYNC_A_ICMP_TYPE, ct_tuple_icmp_type(o));
		put_u8(&e, CT_SYNC_A_ICMP_CODE, ct_tuple_icmp_code(o));
		put_u16le(&e, CT_SYNC_A_ICMP_ID, o->sport);
		break;
	default:
		if (l4_has_ports(o->l4))
			put_ports(&e, CT_SYNC_A_PORT, o);
		break;
	}

	if ((opts & CT_SYNC_ENC_TIMEOUT) && (c->has & CT_SYNC_HAS_TIMEOUT))
		put_u32(&e, CT_SYNC_A_TIMEOUT, c->timeout_s);
	if (c->has & CT_SYNC_HAS_MARK)
		put_u32(&e, CT_SYNC_A_MARK, c->mark);

	if (c->has & CT_SYNC_HAS_MASTER) {
		put_addrs(&e, CT_SYNC_A_MASTER_IPV4, CT_SYNC_A_MASTER_IPV6, &c->master);
		put_u8(&e, CT_SYNC_A_MASTER_L4PROTO, c->master.l4);
		if (l4_has_ports(c->master.l4))
			put_ports(&e, CT_SYNC_A_MASTER_PORT, &c->master);
	}

	if (o->l3 == CT_L3_IPV4) {
		if (c->has & CT_SYNC_HAS_SNAT)
			put_bytes(&e, CT_SYNC_A_SNAT_IPV4, &c->snat_addr.ip4, 4);
		if (c->has & CT_SYNC_HAS_DNAT)
			put_bytes(&e, CT_SYNC_A_DNAT_IPV4, &c->dnat_addr.ip4, 4);
	} else {
		if (c->has & CT_SYNC_HAS_SNAT)
			put_bytes(&e, CT_SYNC_A_SNAT_IPV6, c->snat_addr.ip6, 16);
		if (c->has & CT_SYNC_HAS_DNAT)
			put_bytes(&e, CT_SYNC_A_DNAT_IPV6, c->dnat_addr.ip6, 16);
	}
	if (c->has & CT_SYNC_HAS_SPAT)
		put_u16le(&e, CT_SYNC_A_SPAT_PORT, c->snat_port);
	if (c->has & CT_SYNC_HAS_DPAT)
		put_u16le(&e, CT_SYNC_A_DPAT_PORT, c->dnat_port);

	if (c->has & CT_SYNC_HAS_NATSEQ) {
		uint8_t *d = put_attr(&e, CT_SYNC_A_NAT_SEQ_ADJ, 24);

		for (unsigned i = 0; d && i < 6; i++)
			ct_sync_wr32(d + 4 * i, c->natseq[i]);
	}
	if (c->has & CT_SYNC_HAS_HELPER) {
		size_t n = strnlen(c->helper, sizeof(c->helper) - 1);

		put_bytes(&e, CT_SYNC_A_HELPER_NAME, c->helper, n + 1);
	}
	/* conntrackd sends labels only when one is set, as many words as
	 * the kernel's bitmap has (128 bits: 4). */
	if ((c->has & CT_SYNC_HAS_LABELS) && labels_any(c->labels)) {
		uint8_t *d = put_attr(&e, CT_SYNC_A_LABELS, 16);

		for (unsigned w = 0; d && w < 4; w++) {
			uint32_t v = 0;

			for (unsigned b = 0; b < 32; b++) {
				unsigned bit = 32 * w + b;

				if (c->labels[bit / 8] & (1u << (bit % 8)))
					v |= 1u << b;
			}
			ct_sync_wr32(d + 4 * w, v);
		}
	}
	if (c->has & CT_SYNC_HAS_SYNPROXY) {
		uint8_t *d = put_attr(&e, CT_SYNC_A_SYNPROXY, 12);

		for (unsigned i = 0; d && i < 3; i++)
			ct_sync_wr32(d + 4 * i, c->synproxy[i]);
	}
	if ((c->has & CT_SYNC_HAS_ZONE) || o->zone)
		put_u16(&e, CT_SYNC_A_ZONE, o->zone);

	if (e.full || e.len > CT_SYNC_MSG_MAX)
		return -ENOSPC;
	put_hdr(e.p, type, flags, (uint16_t)e.len, seq);
	return (int)e.len;
}

/* ------------------------------------------------------------------ */
/* decoding                                                           */

/* The exact value size of each fixed-size attribute (conntrackd's
 * h[].size less the TLV header); 0 for the variable ones. */
static const uint8_t attr_size[CT_SYNC_A_MAX] = {
	[CT_SYNC_A_IPV4] = 8,
	[CT_SYNC_A_IPV6] = 32,
	[CT_SYNC_A_L4PROTO] = 1,
	[CT_SYNC_A_PORT] = 4,
	[CT_SYNC_A_TCP_STATE] = 1,
	[CT_SYNC_A_STATUS] = 4,
	[CT_SYNC_A_TIMEOUT] = 4,
	[CT_SYNC_A_MARK] = 4,
	[CT_SYNC_A_MASTER_IPV4] = 8,
	[CT_SYNC_A_MASTER_IPV6] = 32,
	[CT_SYNC_A_MASTER_L4PROTO] = 1,
	[CT_SYNC_A_MASTER_PORT] = 4,
	[CT_SYNC_A_SNAT_IPV4] = 4,
	[CT_SYNC_A_DNAT_IPV4] = 4,
	[CT_SYNC_A_SPAT_PORT] = 2,
	[CT_SYNC_A_DPAT_PORT] = 2,
	[CT_SYNC_A_NAT_SEQ_ADJ] = 24,
	[CT_SYNC_A_SCTP_STATE] = 1,
	[CT_SYNC_A_SCTP_VTAG_ORIG] = 4,
	[CT_SYNC_A_SCTP_VTAG_REPL] = 4,
	[CT_SYNC_A_DCCP_STATE] = 1,
	[CT_SYNC_A_DCCP_ROLE] = 1,
	[CT_SYNC_A_ICMP_TYPE] = 1,
	[CT_SYNC_A_ICMP_CODE] = 1,
	[CT_SYNC_A_ICMP_ID] = 2,
	[CT_SYNC_A_TCP_WSCALE_ORIG] = 1,
	[CT_SYNC_A_TCP_WSCALE_REPL] = 1,
	[CT_SYNC_A_HELPER_NAME] = 0,
	[CT_SYNC_A_LABELS] = 0,
	[CT_SYNC_A_SNAT_IPV6] = 16,
	[CT_SYNC_A_DNAT_IPV6] = 16,
	[CT_SYNC_A_SYNPROXY] = 12,
	[CT_SYNC_A_ZONE] = 2,
};

/* Labels: conntrackd accepts up to 4096 bits (NTA_LABELS_MAX_SIZE). */
#define LABELS_MAX_BYTES 1024
/* Helper names: conntrackd's max_size is 16 including the TLV header
 * (NFCT_HELPER_NAME_MAX compared with nta_len), so it refuses names of 12
 * characters or more; ctrack accepts up to 15 plus the NUL. */
#define HELPER_MAX_BYTES 16

#define BIT(a) (1ull << (a))

static void get_addrs(struct ct_tuple *t, uint8_t l3, const uint8_t *d)
{
	t->l3 = l3;
	if (l3 == CT_L3_IPV4) {
		memcpy(&t->src.ip4, d, 4);
		memcpy(&t->dst.ip4, d + 4, 4);
	} else {
		memcpy(t->src.ip6, d, 16);
		memcpy(t->dst.ip6, d + 16, 16);
	}
}

/* The record is possible: what the kernel's ctnetlink would take. */
static bool conn_possible(const struct ct_sync_conn *c, uint64_t seen)
{
	uint8_t l4 = c->orig.l4;
	bool icmp_attr = seen & (BIT(CT_SYNC_A_ICMP_TYPE) | BIT(CT_SYNC_A_ICMP_CODE) |
				 BIT(CT_SYNC_A_ICMP_ID));
	bool sctp_attr = seen & (BIT(CT_SYNC_A_SCTP_STATE) | BIT(CT_SYNC_A_SCTP_VTAG_ORIG) |
				 BIT(CT_SYNC_A_SCTP_VTAG_REPL));
	bool dccp_attr = seen & (BIT(CT_SYNC_A_DCCP_STATE) | BIT(CT_SYNC_A_DCCP_ROLE));
	bool tcp_attr = seen & (BIT(CT_SYNC_A_TCP_STATE) | BIT(CT_SYNC_A_TCP_WSCALE_ORIG) |
				BIT(CT_SYNC_A_TCP_WSCALE_REPL));
	struct ct_tuple inv;

	/* one family, one protocol */
	if (!(seen & BIT(CT_SYNC_A_IPV4)) == !(seen & BIT(CT_SYNC_A_IPV6)))
		return false;
	if (!(seen & BIT(CT_SYNC_A_L4PROTO)))
		return false;
	if ((c->has & CT_SYNC_HAS_STATUS) && (c->status >> CT_SYNC_STATUS_BITS))
		return false;
	/* the protocol's own attributes, and only its own */
	if (tcp_attr && l4 != CT_SYNC_P_TCP)
		return false;
	if (sctp_attr && l4 != CT_SYNC_P_SCTP)
		return false;
	if (dccp_attr && l4 != CT_SYNC_P_DCCP)
		return false;
	if (icmp_attr && !l4_is_icmp(l4))
		return false;
	if ((seen & BIT(CT_SYNC_A_PORT)) && !l4_has_ports(l4))
		return false;
	if (l4_needs_ports(l4) && !(seen & BIT(CT_SYNC_A_PORT)))
		return false;
	if (l4_is_icmp(l4)) {
		const uint64_t all = BIT(CT_SYNC_A_ICMP_TYPE) | BIT(CT_SYNC_A_ICMP_CODE) |
				     BIT(CT_SYNC_A_ICMP_ID);

		if ((seen & all) != all)
			return false;
		/* the kernel creates ICMP entries for queries only */
		if (!ct_tuple_invert(&c->orig, &inv))
			return false;
	}
	if (c->has & CT_SYNC_HAS_STATE) {
		unsigned max = l4 == CT_SYNC_P_TCP ? CT_SYNC_TCP_STATES :
			       l4 == CT_SYNC_P_SCTP ? CT_SYNC_SCTP_STATES :
			       CT_SYNC_DCCP_STATES;

		if (c->l4state >= max)
			return false;
	}
	/* the window scales come as a pair, after a state */
	if (!(seen & BIT(CT_SYNC_A_TCP_WSCALE_ORIG)) != !(seen & BIT(CT_SYNC_A_TCP_WSCALE_REPL)))
		return false;
	if ((c->has & CT_SYNC_HAS_WSCALE) &&
	    (c->wscale[0] > CT_SYNC_WSCALE_MAX || c->wscale[1] > CT_SYNC_WSCALE_MAX))
		return false;
	if ((c->has & CT_SYNC_HAS_DCCP_ROLE) && c->dccp_role >= CT_SYNC_DCCP_ROLES)
		return false;
	/* NAT addresses of the entry's own family */
	if ((seen & (BIT(CT_SYNC_A_SNAT_IPV4) | BIT(CT_SYNC_A_DNAT_IPV4))) &&
	    c->orig.l3 != CT_L3_IPV4)
		return false;
	if ((seen & (BIT(CT_SYNC_A_SNAT_IPV6) | BIT(CT_SYNC_A_DNAT_IPV6))) &&
	    c->orig.l3 != CT_L3_IPV6)
		return false;
	/* a master is a whole tuple */
	if (seen & (BIT(CT_SYNC_A_MASTER_IPV4) | BIT(CT_SYNC_A_MASTER_IPV6) |
		    BIT(CT_SYNC_A_MASTER_L4PROTO) | BIT(CT_SYNC_A_MASTER_PORT))) {
		if (!(seen & BIT(CT_SYNC_A_MASTER_IPV4)) == !(seen & BIT(CT_SYNC_A_MASTER_IPV6)))
			return false;
		if (!(seen & BIT(CT_SYNC_A_MASTER_L4PROTO)))
			return false;
		if ((seen & BIT(CT_SYNC_A_MASTER_PORT)) && !l4_has_ports(c->master.l4))
			return false;
	}
	return true;
}

enum ct_sync_err ct_sync_msg_parse_conn(const void *msg,
					const struct ct_sync_hdr *h,
					struct ct_sync_conn *c,
					bool *labels_cut)
{
	const uint8_t *p = (const uint8_t *)msg + CT_SYNC_HDR_LEN;
	size_t left;
	uint64_t seen = 0;
	bool cut = false;

	memset(c, 0, sizeof(*c));
	if (labels_cut)
		*labels_cut = false;
	if (h->len < CT_SYNC_HDR_LEN)
		return CT_SYNC_E_BAD_SIZE;
	left = h->len - CT_SYNC_HDR_LEN;

	while (left > 0) {
		unsigned alen, type;
		size_t vlen, step;
		const uint8_t *d;

		if (left < CT_SYNC_TLV_HDR)
			return CT_SYNC_E_BAD_PAYLOAD;      /* bytes left over */
		alen = ct_sync_rd16(p);
		type = ct_sync_rd16(p + 2);
		if (alen < CT_SYNC_TLV_HDR || alen > left)
			return CT_SYNC_E_BAD_PAYLOAD;
		if (type >= CT_SYNC_A_MAX)
			return CT_SYNC_E_UNKNOWN_ATTR;
		vlen = alen - CT_SYNC_TLV_HDR;
		step = CT_SYNC_ALIGN4(alen);
		if (step > left)
			return CT_SYNC_E_BAD_PAYLOAD;      /* padding cut off */
		if (seen & BIT(type))
			return CT_SYNC_E_DUP_ATTR;
		if (attr_size[type] && vlen != attr_size[type])
			return CT_SYNC_E_BAD_PAYLOAD;
		seen |= BIT(type);
		d = p + CT_SYNC_TLV_HDR;

		switch (type) {
		case CT_SYNC_A_IPV4:
			get_addrs(&c->orig, CT_L3_IPV4, d);
			break;
		case CT_SYNC_A_IPV6:
			get_addrs(&c->orig, CT_L3_IPV6, d);
			break;
		case CT_SYNC_A_L4PROTO:
			c->orig.l4 = d[0];
			break;
		case CT_SYNC_A_PORT:
			c->orig.sport = ct_sync_rd16(d);
			c->orig.dport = ct_sync_rd16(d + 2);
			c->has |= CT_SYNC_HAS_PORTS;
			break;
		case CT_SYNC_A_TCP_STATE:
		case CT_SYNC_A_SCTP_STATE:
		case CT_SYNC_A_DCCP_STATE:
			if (c->has & CT_SYNC_HAS_STATE)
				return CT_SYNC_E_DUP_ATTR;
			c->l4state = d[0];
			c->has |= CT_SYNC_HAS_STATE;
			break;
		case CT_SYNC_A_STATUS:
			c->status = ct_sync_rd32(d);
			c->has |= CT_SYNC_HAS_STATUS;
			break;
		case CT_SYNC_A_TIMEOUT:
			c->timeout_s = ct_sync_rd32(d);
			c->has |= CT_SYNC_HAS_TIMEOUT;
			break;
		case CT_SYNC_A_MARK:
			c->mark = ct_sync_rd32(d);
			c->has |= CT_SYNC_HAS_MARK;
			break;
		case CT_SYNC_A_MASTER_IPV4:
			get_addrs(&c->master, CT_L3_IPV4, d);
			c->has |= CT_SYNC_HAS_MASTER;
			break;
		case CT_SYNC_A_MASTER_IPV6:
			get_addrs(&c->master, CT_L3_IPV6, d);
			c->has |= CT_SYNC_HAS_MASTER;
			break;
		case CT_SYNC_A_MASTER_L4PROTO:
			c->master.l4 = d[0];
			break;
		case CT_SYNC_A_MASTER_PORT:
			c->master.sport = ct_sync_rd16(d);
			c->master.dport = ct_sync_rd16(d + 2);
			break;
		case CT_SYNC_A_SNAT_IPV4:
			memcpy(&c->snat_addr.ip4, d, 4);
			c->has |= CT_SYNC_HAS_SNAT;
			break;
		case CT_SYNC_A_DNAT_IPV4:
			memcpy(&c->dnat_addr.ip4, d, 4);
			c->has |= CT_SYNC_HAS_DNAT;
			break;
		case CT_SYNC_A_SNAT_IPV6:
			if (c->has & CT_SYNC_HAS_SNAT)
				return CT_SYNC_E_DUP_ATTR;
			memcpy(c->snat_addr.ip6, d, 16);
			c->has |= CT_SYNC_HAS_SNAT;
			break;
		case CT_SYNC_A_DNAT_IPV6:
			if (c->has & CT_SYNC_HAS_DNAT)
				return CT_SYNC_E_DUP_ATTR;
			memcpy(c->dnat_addr.ip6, d, 16);
			c->has |= CT_SYNC_HAS_DNAT;
			break;
		case CT_SYNC_A_SPAT_PORT:
			c->snat_port = ct_sync_rd16le(d);
			c->has |= CT_SYNC_HAS_SPAT;
			break;
		case CT_SYNC_A_DPAT_PORT:
			c->dnat_port = ct_sync_rd16le(d);
			c->has |= CT_SYNC_HAS_DPAT;
			break;
		case CT_SYNC_A_NAT_SEQ_ADJ:
			for (unsigned i = 0; i < 6; i++)
				c->natseq[i] = ct_sync_rd32(d + 4 * i);
			c->has |= CT_SYNC_HAS_NATSEQ;
			break;
		case CT_SYNC_A_SCTP_VTAG_ORIG:
			c->sctp_vtag[0] = ct_sync_rd32(d);
			c->has |= CT_SYNC_HAS_SCTP_VTAG;
			break;
		case CT_SYNC_A_SCTP_VTAG_REPL:
			c->sctp_vtag[1] = ct_sync_rd32(d);
			c->has |= CT_SYNC_HAS_SCTP_VTAG;
			break;
		case CT_SYNC_A_DCCP_ROLE:
			c->dccp_role = d[0];
			c->has |= CT_SYNC_HAS_DCCP_ROLE;
			break;
		case CT_SYNC_A_ICMP_TYPE:
			c->orig.dport = (uint16_t)((c->orig.dport & 0x00ff) | d[0] << 8);
			c->has |= CT_SYNC_HAS_PORTS;
			break;
		case CT_SYNC_A_ICMP_CODE:
			c->orig.dport = (uint16_t)((c->orig.dport & 0xff00) | d[0]);
			break;
		case CT_SYNC_A_ICMP_ID:
			c->orig.sport = ct_sync_rd16le(d);
			break;
		case CT_SYNC_A_TCP_WSCALE_ORIG:
			c->wscale[0] = d[0];
			c->has |= CT_SYNC_HAS_WSCALE;
			break;
		case CT_SYNC_A_TCP_WSCALE_REPL:
			c->wscale[1] = d[0];
			c->has |= CT_SYNC_HAS_WSCALE;
			break;
		case CT_SYNC_A_HELPER_NAME:
			if (vlen == 0 || vlen > HELPER_MAX_BYTES ||
			    memchr(d, 0, vlen) == NULL)
				return vlen > HELPER_MAX_BYTES || vlen == 0 ?
				       CT_SYNC_E_BAD_PAYLOAD : CT_SYNC_E_IMPOSSIBLE;
			memcpy(c->helper, d, strnlen((const char *)d, vlen));
			c->has |= CT_SYNC_HAS_HELPER;
			break;
		case CT_SYNC_A_LABELS:
			if (vlen == 0 || vlen % 4 || vlen > LABELS_MAX_BYTES)
				return CT_SYNC_E_BAD_PAYLOAD;
			for (unsigned w = 0; w < vlen / 4; w++) {
				uint32_t v = ct_sync_rd32(d + 4 * w);

				for (unsigned b = 0; v && b < 32; b++) {
					unsigned bit = 32 * w + b;

					if (!(v & (1u << b)))
						continue;
					if (bit < 128)
						c->labels[bit / 8] |= (uint8_t)(1u << (bit % 8));
					else
						cut = true;
				}
			}
			c->has |= CT_SYNC_HAS_LABELS;
			break;
		case CT_SYNC_A_SYNPROXY:
			for (unsigned i = 0; i < 3; i++)
				c->synproxy[i] = ct_sync_rd32(d + 4 * i);
			c->has |= CT_SYNC_HAS_SYNPROXY;
			break;
		case CT_SYNC_A_ZONE:
			c->orig.zone = ct_sync_rd16(d);
			c->has |= CT_SYNC_HAS_ZONE;
			break;
		default:
			break;
		}
		p += step;
		left -= step;
	}

	if (!conn_possible(c, seen))
		return CT_SYNC_E_IMPOSSIBLE;
	if (c->has & CT_SYNC_HAS_MASTER)
		c->master.zone = c->orig.zone;
	if (labels_cut)
		*labels_cut = cut;
	return CT_SYNC_OK;
}
