/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ipfix_enc.c - IPFIX messages, templates and records written by hand
 * (ipfix_enc.h says why).
 *
 * Two descriptions of one layout live here: the element table (what the
 * template sets announce) and put_rec() (what a record holds, in that
 * order).  They are kept apart because a table-driven record writer is
 * exactly the per-record walk this file exists to avoid; they are kept
 * equal by ipfix_enc_rec_len() - computed from the table - being what
 * put_rec() writes (checked on every record in debug builds) and by
 * tests/export/test_ipfix_enc.c, where libfixbuf encodes the same
 * records from the table's element names and must give the same bytes.
 *
 * A message holds data sets one after the other; a record whose template
 * differs from the open set's closes that set and opens another, as
 * RFC 7011 3.3 allows.  Sets need no padding (RFC 7011 3.3.1: it is
 * optional), and there is none.
 */
#include <assert.h>
#include <string.h>

#include "ipfix_enc.h"

enum {
	W_BI = 1,      /* only in biflow templates */
	W_V4 = 2,      /* only in IPv4 templates */
	W_V6 = 4,
	W_PORTS = 8,   /* only without ICMP */
	W_ICMP = 16,
	W_NAT = 32,    /* only in NAT templates */
};

struct elem {
	uint16_t id;
	uint16_t len;
	uint32_t pen;          /* enterprise number, 0 for IANA's */
	unsigned when;         /* W_* that must all hold */
};

/* The templates' elements in wire order (ipfix_enc.h lists them by name). */
static const struct elem elems[] = {
	{ 152, 8, 0, 0 },                          /* flowStartMilliseconds */
	{ 153, 8, 0, 0 },                          /* flowEndMilliseconds */
	{ 1, 8, 0, 0 },                            /* octetDeltaCount */
	{ 2, 8, 0, 0 },                            /* packetDeltaCount */
	{ 1, 8, IPFIX_PEN_REVERSE, W_BI },         /* reverseOctetDeltaCount */
	{ 2, 8, IPFIX_PEN_REVERSE, W_BI },         /* reversePacketDeltaCount */
	{ 148, 8, 0, 0 },                          /* flowId */
	{ 27, 16, 0, W_V6 },                       /* sourceIPv6Address */
	{ 28, 16, 0, W_V6 },                       /* destinationIPv6Address */
	{ 8, 4, 0, W_V4 },                         /* sourceIPv4Address */
	{ 12, 4, 0, W_V4 },                        /* destinationIPv4Address */
	{ 234, 4, 0, 0 },                          /* ingressVRFID */
	{ 7, 2, 0, W_PORTS },                      /* sourceTransportPort */
	{ 11, 2, 0, W_PORTS },                     /* destinationTransportPort */
	{ 32, 2, 0, W_V4 | W_ICMP },               /* icmpTypeCodeIPv4 */
	{ 139, 2, 0, W_V6 | W_ICMP },              /* icmpTypeCodeIPv6 */
	{ 6, 2, IPFIX_PEN_REVERSE, W_BI },         /* reverseTcpControlBits */
	{ 6, 2, 0, 0 },                            /* tcpControlBits */
	{ 4, 1, 0, 0 },                            /* protocolIdentifier */
	{ 136, 1, 0, 0 },                          /* flowEndReason */
	/* RFC 8158 (IANA's registry): after everything else, so that a NAT
	 * record starts as the plain one of its family does */
	{ 225, 4, 0, W_NAT | W_V4 },               /* postNATSourceIPv4Address */
	{ 226, 4, 0, W_NAT | W_V4 },               /* postNATDestinationIPv4Address */
	{ 281, 16, 0, W_NAT | W_V6 },              /* postNATSourceIPv6Address */
	{ 282, 16, 0, W_NAT | W_V6 },              /* postNATDestinationIPv6Address */
	{ 227, 2, 0, W_NAT | W_PORTS },            /* postNAPTSourceTransportPort */
	{ 228, 2, 0, W_NAT | W_PORTS },            /* postNAPTDestinationTransportPort */
};

#define N_ELEMS (sizeof(elems) / sizeof(elems[0]))

static unsigned when_of(unsigned tmpl)
{
	return ((tmpl & IPFIX_T_BI) ? W_BI : 0) | ((tmpl & IPFIX_T_V6) ? W_V6 : W_V4) |
	       ((tmpl & IPFIX_T_ICMP) ? W_ICMP : W_PORTS) | ((tmpl & IPFIX_T_NAT) ? W_NAT : 0);
}

static bool in_tmpl(const struct elem *el, unsigned tmpl)
{
	return (el->when & when_of(tmpl)) == el->when;
}

unsigned ipfix_enc_rec_len(unsigned tmpl)
{
	unsigned n = 0;

	for (size_t i = 0; i < N_ELEMS; i++)
		if (in_tmpl(&elems[i], tmpl))
			n += elems[i].len;
	return n;
}

static inline uint8_t *put16(uint8_t *p, uint16_t v)
{
	v = __builtin_bswap16(v);
	memcpy(p, &v, 2);
	return p + 2;
}

static inline uint8_t *put32(uint8_t *p, uint32_t v)
{
	v = __builtin_bswap32(v);
	memcpy(p, &v, 4);
	return p + 4;
}

static inline uint8_t *put64(uint8_t *p, uint64_t v)
{
	v = __builtin_bswap64(v);
	memcpy(p, &v, 8);
	return p + 8;
}

void ipfix_enc_init(struct ipfix_enc *e, uint8_t *buf, uint32_t cap, uint32_t domain,
		    bool biflow, bool nat)
{
	memset(e, 0, sizeof(*e));
	e->buf = buf;
	e->cap = cap;
	e->len = IPFIX_MSG_HDR;
	e->domain = domain;
	e->biflow = biflow;
	e->nat = nat;
	for (unsigned t = 0; t < IPFIX_T_COUNT; t++)
		e->rec_len[t] = (uint16_t)ipfix_enc_rec_len(t);
}

static void put_header(uint8_t *p, size_t len, uint32_t export_s, uint32_t seq,
		       uint32_t domain)
{
	p = put16(p, 10);
	p = put16(p, (uint16_t)len);
	p = put32(p, export_s);
	p = put32(p, seq);
	put32(p, domain);
}

/* The session's @k-th template (k < 4, or < 8 with NAT): bits V6 and
 * ICMP from k's low bits, NAT from its third. */
static unsigned kind_tmpl(unsigned base, unsigned k)
{
	return base | (k & (IPFIX_T_V6 | IPFIX_T_ICMP)) | ((k & 4) ? IPFIX_T_NAT : 0);
}

/* The session's templates k0 .. k1 - 1 (kind_tmpl) in one message. */
static size_t templates(const struct ipfix_enc *e, uint8_t *out, size_t cap,
			uint32_t export_s, unsigned k0, unsigned k1)
{
	uint8_t *p = out + IPFIX_MSG_HDR + IPFIX_SET_HDR;
	unsigned base = e->biflow ? IPFIX_T_BI : 0;
	size_t need = IPFIX_MSG_HDR + IPFIX_SET_HDR;

	for (unsigned k = k0; k < k1; k++) {
		need += 4;
		for (size_t i = 0; i < N_ELEMS; i++)
			if (in_tmpl(&elems[i], kind_tmpl(base, k)))
				need += elems[i].pen ? 8 : 4;
	}
	if (need > cap || need > UINT16_MAX)
		return 0;
	for (unsigned k = k0; k < k1; k++) {
		unsigned tmpl = kind_tmpl(base, k), n = 0;
		uint8_t *count;

		p = put16(p, (uint16_t)(IPFIX_TID_BASE + tmpl));
		count = p;
		p += 2;
		for (size_t i = 0; i < N_ELEMS; i++) {
			const struct elem *el = &elems[i];

			if (!in_tmpl(el, tmpl))
				continue;
			n++;
			/* the enterprise bit, then the number (RFC 7011 3.2) */
			p = put16(p, (uint16_t)(el->id | (el->pen ? 0x8000u : 0)));
			p = put16(p, el->len);
			if (el->pen)
				p = put32(p, el->pen);
		}
		put16(count, (uint16_t)n);
	}
	put16(out + IPFIX_MSG_HDR, 2);                       /* template set */
	put16(out + IPFIX_MSG_HDR + 2, (uint16_t)(need - IPFIX_MSG_HDR));
	put_header(out, need, export_s, e->seq, e->domain);
	return need;
}

size_t ipfix_enc_templates(const struct ipfix_enc *e, uint8_t *out, size_t cap,
			   uint32_t export_s)
{
	return templates(e, out, cap, export_s, 0, e->nat ? 8 : 4);
}

size_t ipfix_enc_templates_part(const struct ipfix_enc *e, unsigned part, uint8_t *out,
				size_t cap, uint32_t export_s)
{
	if (part > 1 || (part == 1 && !e->nat))
		return 0;
	return templates(e, out, cap, export_s, part * 4, part * 4 + 4);
}

/* The record, in the element table's order; returns the end. */
static uint8_t *put_rec(uint8_t *p, const struct ipfix_rec *r, unsigned tmpl)
{
	p = put64(p, r->start_ms);
	p = put64(p, r->end_ms);
	p = put64(p, r->octets);
	p = put64(p, r->packets);
	if (tmpl & IPFIX_T_BI) {
		p = put64(p, r->r_octets);
		p = put64(p, r->r_packets);
	}
	p = put64(p, r->flow_id);
	if (tmpl & IPFIX_T_V6) {
		memcpy(p, r->src, 16);
		memcpy(p + 16, r->dst, 16);
		p += 32;
	} else {
		memcpy(p, r->src, 4);
		memcpy(p + 4, r->dst, 4);
		p += 8;
	}
	p = put32(p, r->vrf);
	if (tmpl & IPFIX_T_ICMP) {
		p = put16(p, r->icmp);
	} else {
		p = put16(p, r->sport);
		p = put16(p, r->dport);
	}
	if (tmpl & IPFIX_T_BI)
		p = put16(p, r->r_tcp_flags);
	p = put16(p, r->tcp_flags);
	*p++ = r->proto;
	*p++ = r->reason;
	if (tmpl & IPFIX_T_NAT) {
		if (tmpl & IPFIX_T_V6) {
			memcpy(p, r->nat_src, 16);
			memcpy(p + 16, r->nat_dst, 16);
			p += 32;
		} else {
			memcpy(p, r->nat_src, 4);
			memcpy(p + 4, r->nat_dst, 4);
			p += 8;
		}
		if (!(tmpl & IPFIX_T_ICMP)) {
			p = put16(p, r->nat_sport);
			p = put16(p, r->nat_dport);
		}
	}
	return p;
}

bool ipfix_enc_add(struct ipfix_enc *e, const struct ipfix_rec *r)
{
	unsigned tmpl = (r->tmpl & (IPFIX_T_V6 | IPFIX_T_ICMP)) | (e->biflow ? IPFIX_T_BI : 0) |
			(e->nat ? (r->tmpl & IPFIX_T_NAT) : 0);
	unsigned len = e->rec_len[tmpl];
	bool new_set = !e->set_off || e->set_tmpl != tmpl;
	uint8_t *end;

	if (e->len + len + (new_set ? IPFIX_SET_HDR : 0) > e->cap)
		return false;
	if (new_set) {
		if (e->set_off)
			put16(e->buf + e->set_off + 2, (uint16_t)(e->len - e->set_off));
		e->set_off = e->len;
		e->set_tmpl = (uint16_t)tmpl;
		put16(e->buf + e->len, (uint16_t)(IPFIX_TID_BASE + tmpl));
		e->len += IPFIX_SET_HDR;
	}
	end = put_rec(e->buf + e->len, r, tmpl);
	assert(end == e->buf + e->len + len);
	e->len = (uint32_t)(end - e->buf);
	e->recs++;
	return true;
}

size_t ipfix_enc_finish(struct ipfix_enc *e, uint32_t export_s)
{
	size_t len = e->len;

	if (!e->recs)
		return 0;
	put16(e->buf + e->set_off + 2, (uint16_t)(e->len - e->set_off));
	put_header(e->buf, len, export_s, e->seq, e->domain);
	e->seq += e->recs;
	e->recs = 0;
	e->set_off = 0;
	e->len = IPFIX_MSG_HDR;
	return len;
}
