/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nat_xlate.c - rewriting a packet for its connection's binding, as
 * nf_nat_proto.c does (Linux 6.17/6.18).
 *
 * A packet in direction dir is made to look like the inverse of the other
 * direction's tuple.  The kernel does it at two hooks - the destination at
 * PREROUTING, the source at POSTROUTING, each only when its status bit
 * says the tuple changed - and ct_nat_translate() does the same two steps
 * in the same order (with ip_forward's TTL decrement between them when
 * asked), each as nf_nat_ipv4/ipv6_manip_pkt: the layer-4 header first
 * (port, and its checksum for the address and the port), then the address
 * (and the IPv4 header checksum).  Same operations in the same order give
 * the same bytes, checksum zeros included (nat_csum.h).
 *
 * An ICMP error related to the connection (nf_nat_icmp_reply_translation)
 * is checked (room for the quoted header, the checksum, a redirect of a
 * NATed connection), then at each step the quoted packet - which
 * travelled the other way - gets the other direction's tuple with the
 * opposite manipulation, the ICMP checksum is recomputed over the whole
 * message (updated incrementally when the capture does not hold all of
 * it), and the outer header gets the inverse.
 *
 * Every write goes through the bounds kept in struct xl: the datagram
 * length the IP header gives (the kernel's skb->len: what decides whether
 * a TCP header is whole, and what the SCTP checksum and the ICMP
 * recomputation cover) and the bytes the frame holds.  A header that does
 * not fit either is a drop verdict, found before anything is written:
 * every check depends on lengths and offsets only, which no rewrite
 * changes, and each step checks all it needs before it writes.
 */
#include <string.h>

#include "nat/nat_csum.h"
#include "nat/nat_priv.h"
#include "parse/checksum.h"
#include "parse/wire.h"
#include "parse/ip6_ext.h"

struct xl {
	uint8_t *buf;          /* the IP header of the outer packet */
	uint32_t cap;          /* bytes present from buf on */
	uint32_t len;          /* datagram length from buf on (skb->len) */
	enum ct_nat_verdict why;  /* the reason of a failed check */
	bool dry;              /* checks only, no write (the first pass) */
	struct ct_nat_xlate_info *info;
};

/* skb_ensure_writable(skb, @n): the first @n bytes exist.  Beyond the
 * datagram it is the kernel's drop (@short_v), beyond the capture ours. */
static bool need(struct xl *x, uint64_t n, enum ct_nat_verdict short_v)
{
	if (n > x->len) {
		x->why = short_v;
		return false;
	}
	if (n > x->cap) {
		x->why = CT_NAT_V_TRUNCATED;
		return false;
	}
	return true;
}

static uint16_t rd_raw16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

static uint32_t rd_raw32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static void wr_raw16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

/* nf_csum_update: the pseudo-header's address (at @iphoff's header) to
 * the one @t gives for @manip. */
static void csum_update_addr(struct xl *x, uint32_t iphoff, uint8_t *check,
			     const struct ct_tuple *t, enum ct_nat_manip manip)
{
	const uint8_t *ip = x->buf + iphoff;

	if (t->l3 == CT_L3_IPV4) {
		const uint8_t *old = ip + (manip == CT_NAT_MANIP_SRC ? 12 : 16);
		uint32_t nw = manip == CT_NAT_MANIP_SRC ? t->src.ip4 : t->dst.ip4;

		ct_nat_csum_replace4(check, rd_raw32(old), nw);
	} else {
		const uint8_t *old = ip + (manip == CT_NAT_MANIP_SRC ? 8 : 24);
		const uint8_t *nw = manip == CT_NAT_MANIP_SRC ? t->src.ip6 : t->dst.ip6;

		ct_nat_csum_replace16(check, old, nw);
	}
}

static uint16_t new_port(const struct ct_tuple *t, enum ct_nat_manip manip)
{
	return htons(manip == CT_NAT_MANIP_SRC ? t->sport : t->dport);
}

/* tcp_manip_pkt */
static bool tcp_manip(struct xl *x, uint32_t iphoff, uint32_t hdroff,
		      const struct ct_tuple *t, enum ct_nat_manip manip,
		      enum ct_nat_verdict short_v)
{
	/* conntrack guarantees 8 bytes; a quoted header may have no more */
	uint32_t hdrsize = x->len >= (uint64_t)hdroff + 20 ? 20 : 8;
	uint8_t *h, *portp;
	uint16_t oldport, newport;

	if (!need(x, (uint64_t)hdroff + hdrsize, short_v))
		return false;
	if (x->dry)
		return true;
	h = x->buf + hdroff;
	portp = h + (manip == CT_NAT_MANIP_SRC ? 0 : 2);
	newport = new_port(t, manip);
	oldport = rd_raw16(portp);
	wr_raw16(portp, newport);
	if (hdrsize < 20)
		return true;
	csum_update_addr(x, iphoff, h + 16, t, manip);
	ct_nat_csum_replace2(h + 16, oldport, newport);
	return true;
}

/* udp_manip_pkt / udplite_manip_pkt (__udp_manip_pkt) */
static bool udp_manip(struct xl *x, uint32_t iphoff, uint32_t hdroff,
		      const struct ct_tuple *t, enum ct_nat_manip manip,
		      bool lite, enum ct_nat_verdict short_v)
{
	uint8_t *h, *portp;
	uint16_t newport;

	if (!need(x, (uint64_t)hdroff + 8, short_v))
		return false;
	if (x->dry)
		return true;
	h = x->buf + hdroff;
	portp = h + (manip == CT_NAT_MANIP_SRC ? 0 : 2);
	newport = new_port(t, manip);
	/* a zero UDP checksum is "none" and stays so (both families, as in
	 * the kernel); UDP-Lite always has one */
	if (lite || rd_raw16(h + 6) != 0) {
		csum_update_addr(x, iphoff, h + 6, t, manip);
		ct_nat_csum_replace2(h + 6, rd_raw16(portp), newport);
		if (rd_raw16(h + 6) == 0)
			wr_raw16(h + 6, 0xffff); /* CSUM_MANGLED_0 */
	}
	wr_raw16(portp, newport);
	return true;
}

/* sctp_manip_pkt */
static bool sctp_manip(struct xl *x, uint32_t hdroff, const struct ct_tuple *t,
		       enum ct_nat_manip manip, enum ct_nat_verdict short_v)
{
	uint32_t hdrsize = x->len >= (uint64_t)hdroff + 12 ? 12 : 8;
	uint8_t *h;
	uint32_t crc;

	if (!need(x, (uint64_t)hdroff + hdrsize, short_v))
		return false;
	if (x->dry)
		return true;
	h = x->buf + hdroff;
	wr_raw16(h + (manip == CT_NAT_MANIP_SRC ? 0 : 2), new_port(t, manip));
	if (hdrsize < 12)
		return true;
	/* recomputed over the rest of the datagram - for a quoted header,
	 * the rest of the ICMP error - with the checksum field as zero */
	if (x->len > x->cap) {
		if (x->info)
			x->info->sctp_csum_skipped = true;
		return true;
	}
	crc = ct_sctp_crc32c(h, x->len - hdroff);
	h[8] = (uint8_t)crc;
	h[9] = (uint8_t)(crc >> 8);
	h[10] = (uint8_t)(crc >> 16);
	h[11] = (uint8_t)(crc >> 24);
	return true;
}

static bool icmp_is_query(uint8_t type)
{
	switch (type) {
	case 0: case 8:        /* echo reply, echo */
	case 13: case 14:      /* timestamp */
	case 15: case 16:      /* information */
	case 17: case 18:      /* address mask */
		return true;
	default:
		return false;
	}
}

/* icmp_manip_pkt: queries get the id (either manipulation) */
static bool icmp_manip(struct xl *x, uint32_t hdroff, const struct ct_tuple *t,
		       enum ct_nat_verdict short_v)
{
	uint8_t *h;
	uint16_t id;

	if (!need(x, (uint64_t)hdroff + 8, short_v))
		return false;
	if (x->dry)
		return true;
	h = x->buf + hdroff;
	if (!icmp_is_query(h[0]))
		return true;
	id = htons(t->sport);
	ct_nat_csum_replace2(h + 2, rd_raw16(h + 4), id);
	wr_raw16(h + 4, id);
	return true;
}

/* icmpv6_manip_pkt: the pseudo-header always, the id of echoes */
static bool icmpv6_manip(struct xl *x, uint32_t iphoff, uint32_t hdroff,
			 const struct ct_tuple *t, enum ct_nat_manip manip,
			 enum ct_nat_verdict short_v)
{
	uint8_t *h;

	if (!need(x, (uint64_t)hdroff + 8, short_v))
		return false;
	if (x->dry)
		return true;
	h = x->buf + hdroff;
	csum_update_addr(x, iphoff, h + 2, t, manip);
	if (h[0] == 128 || h[0] == 129) {
		uint16_t id = htons(t->sport);

		ct_nat_csum_replace2(h + 2, rd_raw16(h + 4), id);
		wr_raw16(h + 4, id);
	}
	return true;
}

/* gre_manip_pkt: only PPTP's call id, only for a DST manipulation */
static bool gre_manip(struct xl *x, uint32_t hdroff, const struct ct_tuple *t,
		      enum ct_nat_manip manip, enum ct_nat_verdict short_v)
{
	uint8_t *h;

	if (!need(x, (uint64_t)hdroff + 8, short_v))
		return false;
	if (manip != CT_NAT_MANIP_DST)
		return true;
	h = x->buf + hdroff;
	switch (h[1] & 7) {
	case 0:
		return true;
	case 1:
		if (!x->dry)
			wr_raw16(h + 6, htons(t->dport));
		return true;
	default:
		x->why = CT_NAT_V_GRE_VERSION;
		return false;
	}
}

/* l4proto_manip_pkt: by the connection's protocol */
static bool l4_manip(struct xl *x, uint32_t iphoff, uint32_t hdroff,
		     const struct ct_tuple *t, enum ct_nat_manip manip,
		     enum ct_nat_verdict short_v)
{
	switch (t->l4) {
	case CT_IPPROTO_TCP:
		return tcp_manip(x, iphoff, hdroff, t, manip, short_v);
	case CT_IPPROTO_UDP:
		return udp_manip(x, iphoff, hdroff, t, manip, false, short_v);
	case CT_IPPROTO_UDPLITE:
		return udp_manip(x, iphoff, hdroff, t, manip, true, short_v);
	case CT_IPPROTO_SCTP:
		return sctp_manip(x, hdroff, t, manip, short_v);
	case CT_IPPROTO_ICMP:
		return icmp_manip(x, hdroff, t, short_v);
	case CT_IPPROTO_ICMPV6:
		return icmpv6_manip(x, iphoff, hdroff, t, manip, short_v);
	case CT_IPPROTO_GRE:
		return gre_manip(x, hdroff, t, manip, short_v);
	default:
		return true; /* an unknown protocol passes unmodified */
	}
}

/* nf_nat_ipv4_manip_pkt */
static bool ip4_manip(struct xl *x, uint32_t iphoff, const struct ct_tuple *t,
		      enum ct_nat_manip manip, enum ct_nat_verdict short_v)
{
	uint8_t *ip, *addr;
	uint32_t nw;

	if (!need(x, (uint64_t)iphoff + 20, short_v))
		return false;
	ip = x->buf + iphoff;
	if (!l4_manip(x, iphoff, iphoff + (uint32_t)(ip[0] & 0x0f) * 4, t, manip, short_v))
		return false;
	if (x->dry)
		return true;
	addr = ip + (manip == CT_NAT_MANIP_SRC ? 12 : 16);
	nw = manip == CT_NAT_MANIP_SRC ? t->src.ip4 : t->dst.ip4;
	ct_nat_csum_replace4(ip + 10, rd_raw32(addr), nw);
	memcpy(addr, &nw, 4);
	return true;
}

/* nf_nat_ipv6_manip_pkt */
static bool ip6_manip(struct xl *x, uint32_t iphoff, const struct ct_tuple *t,
		      enum ct_nat_manip manip, enum ct_nat_verdict short_v)
{
	uint8_t *ip;
	uint8_t nh;
	uint16_t frag_off;
	int32_t hdroff;
	uint32_t avail;

	if (!need(x, (uint64_t)iphoff + 40, short_v))
		return false;
	ip = x->buf + iphoff;
	nh = ip[6];
	/* the walk reads what the datagram and the capture both hold */
	avail = (x->len < x->cap ? x->len : x->cap) - iphoff;
	hdroff = ct_ip6_skip_exthdr(ip, avail, 40, &nh, &frag_off);
	/* an unreadable chain: the addresses only, as the kernel does; so
	 * does a fragment that is not the first */
	if (hdroff >= 0 && (frag_off & ~7u) == 0 &&
	    !l4_manip(x, iphoff, iphoff + (uint32_t)hdroff, t, manip, short_v))
		return false;
	if (x->dry)
		return true;
	memcpy(ip + (manip == CT_NAT_MANIP_SRC ? 8 : 24),
	       manip == CT_NAT_MANIP_SRC ? t->src.ip6 : t->dst.ip6, 16);
	return true;
}

static bool ip_manip(struct xl *x, uint32_t iphoff, const struct ct_tuple *t,
		     enum ct_nat_manip manip, enum ct_nat_verdict short_v)
{
	return t->l3 == CT_L3_IPV4 ? ip4_manip(x, iphoff, t, manip, short_v)
				   : ip6_manip(x, iphoff, t, manip, short_v);
}

/* The tuple a packet must look like: the inverse of @t, without the ICMP
 * type mapping (only addresses and ports are written). */
static void invert_for_target(struct ct_tuple *out, const struct ct_tuple *t)
{
	*out = *t;
	out->src = t->dst;
	out->dst = t->src;
	if (t->l4 != CT_IPPROTO_ICMP && t->l4 != CT_IPPROTO_ICMPV6) {
		out->sport = t->dport;
		out->dport = t->sport;
	}
}

/* ---- ICMP errors --------------------------------------------------- */

struct icmp_err {
	uint32_t hdrlen;        /* offset of the ICMP header */
	bool v6;
};

/* Ones' complement sum (folded, not complemented) of the captured part
 * of the ICMP message. */
static uint16_t icmp_region_sum(const struct xl *x, const struct icmp_err *e)
{
	uint32_t end = x->len < x->cap ? x->len : x->cap;

	return ct_csum_fold(ct_csum_partial(x->buf + e->hdrlen, end - e->hdrlen, 0));
}

/* The sum of the whole message, with the ICMPv6 pseudo-header (the
 * outer addresses as they are now); the checksum field as it is. */
static uint64_t icmp_sum(const struct xl *x, const struct icmp_err *e)
{
	uint64_t s = 0;
	uint32_t n = x->len - e->hdrlen;

	if (e->v6) {
		uint32_t w[8];

		memcpy(w, x->buf + 8, 32);
		for (int i = 0; i < 8; i++)
			s += w[i];
		/* 64-bit adds: two 32-bit words summed first could carry out */
		s += (uint64_t)htonl(n);
		s += htonl(CT_IPPROTO_ICMPV6);
	}
	return ct_csum_partial(x->buf + e->hdrlen, n, s);
}

/* The checksum the whole message should carry (csum_fold(skb_checksum)
 * / csum_ipv6_magic): computed with the field as zero. */
static uint16_t icmp_full_csum(const struct xl *x, const struct icmp_err *e)
{
	uint8_t *c = x->buf + e->hdrlen + 2;
	uint16_t saved = rd_raw16(c), r;

	wr_raw16(c, 0);
	r = (uint16_t)~ct_csum_fold(icmp_sum(x, e));
	wr_raw16(c, saved);
	return r;
}

/* One hook's worth of nf_nat_icmp(v6)_reply_translation, after its
 * checks: @other is the tuple of the direction the quoted packet went. */
static bool icmp_reply_step(struct xl *x, const struct icmp_err *e,
			    const struct ct_tuple *other, enum ct_nat_manip manip)
{
	uint32_t inner = e->hdrlen + 8;
	enum ct_nat_manip inv = manip == CT_NAT_MANIP_SRC ? CT_NAT_MANIP_DST : CT_NAT_MANIP_SRC;
	bool whole = x->len <= x->cap;
	uint8_t *c = x->buf + e->hdrlen + 2;
	uint16_t before = 0;
	struct ct_tuple target;

	if (!whole && !x->dry)
		before = icmp_region_sum(x, e);
	if (!ip_manip(x, inner, other, inv, CT_NAT_V_ICMP_INNER_TRUNCATED))
		return false;
	if (x->dry) {
		/* nothing written, nothing to sum */
	} else if (whole) {
		wr_raw16(c, icmp_full_csum(x, e));
	} else {
		/* the change of the sum, added to the old checksum */
		uint16_t after = icmp_region_sum(x, e);
		uint32_t s = ct_nat_csum_start(c);

		s = ct_nat_csum_add(s, (uint16_t)~before);
		s = ct_nat_csum_add(s, after);
		ct_nat_csum_store(c, s);
		if (x->info)
			x->info->csum_incremental = true;
	}

	/* the outer header: like the reply to a packet of the other way */
	invert_for_target(&target, other);
	target.l4 = e->v6 ? CT_IPPROTO_ICMPV6 : CT_IPPROTO_ICMP;
	return ip_manip(x, 0, &target, manip, CT_NAT_V_ICMP_INNER_TRUNCATED);
}

/* nf_ip_checksum / nf_ip6_checksum: the sum over the message and its
 * checksum is all ones (either zero of the field passes) */
static bool icmp_csum_ok(const struct xl *x, const struct icmp_err *e)
{
	if (x->len > x->cap)
		return true; /* cannot be checked; the kernel saw it whole */
	return ct_csum_fold(icmp_sum(x, e)) == 0xffff;
}

/* ---- the entry point ---------------------------------------------- */

const char *ct_nat_verdict_name(enum ct_nat_verdict v)
{
	static const char *const names[CT_NAT_V_MAX] = {
		[CT_NAT_V_OK] = "ok",
		[CT_NAT_V_NOT_IN_FRAME] = "not_in_frame",
		[CT_NAT_V_NOT_TRACKABLE] = "not_trackable",
		[CT_NAT_V_FRAGMENT] = "fragment",
		[CT_NAT_V_TRUNCATED] = "truncated",
		[CT_NAT_V_ICMP_INNER_TRUNCATED] = "icmp_inner_truncated",
		[CT_NAT_V_ICMP_INNER_BAD] = "icmp_inner_bad",
		[CT_NAT_V_ICMP_BAD_CSUM] = "icmp_bad_csum",
		[CT_NAT_V_ICMP_REDIRECT] = "icmp_redirect",
		[CT_NAT_V_GRE_VERSION] = "gre_version",
		[CT_NAT_V_TTL_EXCEEDED] = "ttl_exceeded",
	};

	if ((unsigned)v >= CT_NAT_V_MAX || !names[v])
		return "unknown";
	return names[v];
}

static void ttl_dec(struct xl *x, bool v4)
{
	if (v4) {
		x->buf[8]--;
		ct_nat_csum_ttl_dec(x->buf + 10);
	} else {
		x->buf[7]--;
	}
}

enum ct_nat_verdict ct_nat_translate(uint8_t *frame, uint32_t frame_len,
				     const struct ct_packet *pkt,
				     const struct ct_nat_binding *b,
				     enum ct_dir dir, unsigned flags,
				     struct ct_nat_xlate_info *info)
{
	const struct ct_tuple *other = dir == CT_DIR_ORIGINAL ? &b->reply : &b->orig;
	bool forward = (flags & CT_NAT_XLATE_FORWARD) != 0;
	bool do_dst, do_src, v4, error = false;
	uintptr_t base = (uintptr_t)frame, l3 = (uintptr_t)pkt->l3;
	struct ct_tuple target;
	struct icmp_err e = { 0, false };
	struct xl x;

	if (info)
		memset(info, 0, sizeof(*info));
	if (pkt->kind == CT_PKT_FRAGMENT)
		return CT_NAT_V_FRAGMENT;
	if (pkt->kind != CT_PKT_TRACKABLE)
		return CT_NAT_V_NOT_TRACKABLE;
	if (!frame || !pkt->l3 || l3 < base || l3 - base >= frame_len ||
	    (uintptr_t)pkt->l4 < l3 || (uintptr_t)pkt->l4 - base > frame_len)
		return CT_NAT_V_NOT_IN_FRAME;

	x.buf = frame + (l3 - base);
	x.cap = frame_len - (uint32_t)(l3 - base);
	x.why = CT_NAT_V_OK;
	x.dry = false;
	x.info = info;
	v4 = pkt->tuple.l3 == CT_L3_IPV4;
	if (x.cap < (v4 ? 20u : 40u))
		return CT_NAT_V_TRUNCATED;
	/* the datagram's length as its header gives it (skb->len): not
	 * pkt->l3_len, which leaves out the fragment header of an IPv6
	 * atomic fragment (nf_defrag_ipv6 drops it; here it is still in the
	 * buffer) and a jumbogram's 0 */
	if (v4)
		x.len = (uint32_t)x.buf[2] << 8 | x.buf[3];
	else if (x.buf[4] | x.buf[5])
		x.len = 40u + ((uint32_t)x.buf[4] << 8 | x.buf[5]);
	else
		x.len = pkt->l3_len;
	if (x.len < (v4 ? 20u : 40u))
		return CT_NAT_V_TRUNCATED;
	if (forward && (v4 ? x.buf[8] : x.buf[7]) <= 1)
		return CT_NAT_V_TTL_EXCEEDED;

	/* PREROUTING rewrites the destination when the original direction's
	 * destination or, for replies, the source was translated; POSTROUTING
	 * the other way round */
	do_dst = (b->status & (dir == CT_DIR_ORIGINAL ? CT_NAT_S_DST : CT_NAT_S_SRC)) != 0;
	do_src = (b->status & (dir == CT_DIR_ORIGINAL ? CT_NAT_S_SRC : CT_NAT_S_DST)) != 0;

	if ((pkt->tuple.l4 == CT_IPPROTO_ICMP || pkt->tuple.l4 == CT_IPPROTO_ICMPV6) &&
	    pkt->u.icmp.is_error) {
		uint8_t type;

		e.v6 = !v4;
		e.hdrlen = (uint32_t)((uintptr_t)pkt->l4 - l3);
		if (!need(&x, (uint64_t)e.hdrlen + 8 + (v4 ? 20 : 40),
			  CT_NAT_V_ICMP_INNER_TRUNCATED))
			return x.why;
		if (!icmp_csum_ok(&x, &e))
			return CT_NAT_V_ICMP_BAD_CSUM;
		/* a quoted header whose own length puts its L4 header inside it
		 * would be rewritten into another shape between the two steps
		 * (the kernel does not check; conntrack's tuple code does not
		 * either): refused */
		{
			const uint8_t *in = x.buf + e.hdrlen + 8;

			if ((in[0] >> 4) != (v4 ? 4 : 6) || (v4 && (in[0] & 0x0f) < 5))
				return CT_NAT_V_ICMP_INNER_BAD;
		}
		type = x.buf[e.hdrlen];
		if ((v4 && type == 5) || (!v4 && type == 137)) {
			if ((b->status & CT_NAT_S_DONE_MASK) != CT_NAT_S_DONE_MASK ||
			    (b->status & CT_NAT_S_MASK))
				return CT_NAT_V_ICMP_REDIRECT;
		}
		error = true;
	} else {
		invert_for_target(&target, other);
	}
	/* Two passes over the same steps: the first only checks (every check
	 * depends on lengths and offsets, which no step changes), so that a
	 * drop leaves the frame as it was; the second writes.  A packet that
	 * is no ICMP error needs only the second: each step checks all it
	 * needs before it writes, and the source step's checks are the
	 * destination step's (the same headers, the same lengths; GRE's
	 * version is looked at by the destination step only), so that once
	 * the first step has written the second cannot fail - only the TTL,
	 * written between the two, wants the source step's checks before it
	 * when there is no destination step. */
	for (int pass = error ? 0 : 1; pass < 2; pass++) {
		x.dry = pass == 0;
		if (do_dst && !(error ? icmp_reply_step(&x, &e, other, CT_NAT_MANIP_DST)
				      : ip_manip(&x, 0, &target, CT_NAT_MANIP_DST,
						 CT_NAT_V_TRUNCATED)))
			return x.why;
		if (forward && !x.dry) {
			if (!error && do_src && !do_dst) {
				bool ok;

				x.dry = true;
				ok = ip_manip(&x, 0, &target, CT_NAT_MANIP_SRC, CT_NAT_V_TRUNCATED);
				x.dry = false;
				if (!ok)
					return x.why;
			}
			ttl_dec(&x, v4);
		}
		if (do_src && !(error ? icmp_reply_step(&x, &e, other, CT_NAT_MANIP_SRC)
				      : ip_manip(&x, 0, &target, CT_NAT_MANIP_SRC,
						 CT_NAT_V_TRUNCATED)))
			return x.why;
	}
	if (info) {
		info->manips = (uint8_t)((do_dst ? CT_NAT_S_DST : 0) | (do_src ? CT_NAT_S_SRC : 0));
		info->icmp_error = error;
	}
	return CT_NAT_V_OK;
}
