/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_nat.c - libFuzzer target for packet translation (src/nat/).
 *
 * Input: byte 0 is a control byte, bytes 1..4 a seed for the binding's
 * addresses and ports, the rest one frame.  Control:
 *   bit 0     direction (reply when set)
 *   bits 1-2  which sides are translated (01 source, 10 destination,
 *             11 both, 00 both status bits as the tuples say: none)
 *   bit 3     CT_NAT_XLATE_FORWARD
 *   bit 4     fix the frame's checksums first (IPv4 header, TCP, UDP,
 *             ICMP, ICMPv6), so that the valid-checksum paths are reached
 *   bit 5     the frame claims 64 more bytes on the wire (a snaplen cut)
 *   bit 6     raw IP instead of Ethernet
 *   bit 7     give ct_nat_translate a frame_len 1..16 bytes short
 * seedgen_nat writes seeds in this format from the captures.
 *
 * What must hold, whatever the bytes:
 *   - no crash, no read or write outside the frame (the frame is a heap
 *     block of its exact size plus, for bit 7, canary bytes past the
 *     length given, which must come back untouched);
 *   - a drop verdict leaves the frame as it was;
 *   - a translated packet parses to the tuple the binding asked for;
 *   - valid checksums stay valid (ct_packet_l4_csum_ok and the IPv4
 *     header) unless the translation says it could not recompute one;
 *   - translated and then translated back with the inverse binding, a
 *     packet that is not an ICMP error comes back byte for byte - except
 *     a checksum field that held 0xffff, which the kernel's incremental
 *     update also turns into 0x0000 (both are ones' complement zero).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/nat.h"
#include "ctrack/packet.h"
#include "parse/checksum.h"
#include "parse/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* checksums recomputed as a sender would (bit 4) */
static void fix_checksums(const struct ct_packet *pkt, uint8_t *l3, uint32_t cap)
{
	uint8_t *l4 = l3 + (pkt->l4 - pkt->l3);
	uint32_t l4off = (uint32_t)(pkt->l4 - pkt->l3), len = pkt->l4_len;
	uint64_t s = 0;
	int off;

	if (pkt->tuple.l3 == CT_L3_IPV4 && cap >= 20) {
		uint32_t ihl = (uint32_t)(l3[0] & 15) * 4;

		if (ihl >= 20 && ihl <= cap) {
			wr16(l3 + 10, 0);
			wr16(l3 + 10, (uint16_t)~ct_csum_fold(ct_csum_partial(l3, ihl, 0)));
		}
	}
	if (pkt->truncated || pkt->is_fragment || l4off + len > cap)
		return;
	switch (pkt->tuple.l4) {
	case CT_IPPROTO_TCP:
		off = 16;
		break;
	case CT_IPPROTO_UDP:
		off = 6;
		break;
	case CT_IPPROTO_ICMP:
	case CT_IPPROTO_ICMPV6:
		off = 2;
		break;
	default:
		return;
	}
	if (len < (uint32_t)off + 2)
		return;
	if (pkt->tuple.l4 == CT_IPPROTO_UDP && l4[6] == 0 && l4[7] == 0)
		return;
	if (pkt->tuple.l4 != CT_IPPROTO_ICMP || pkt->tuple.l3 == CT_L3_IPV6) {
		const uint8_t *a = (const uint8_t *)&pkt->tuple.src;
		const uint8_t *b = (const uint8_t *)&pkt->tuple.dst;
		unsigned n = pkt->tuple.l3 == CT_L3_IPV4 ? 4 : 16;

		s = ct_csum_partial(a, n, s);
		s = ct_csum_partial(b, n, s);
		if (pkt->tuple.l3 == CT_L3_IPV4)
			s += __builtin_bswap16((uint16_t)len) + __builtin_bswap16(pkt->tuple.l4);
		else
			s += (uint64_t)__builtin_bswap32(len) + __builtin_bswap32(pkt->tuple.l4);
	}
	wr16(l4 + off, 0);
	{
		uint16_t c = (uint16_t)~ct_csum_fold(ct_csum_partial(l4, len, s));

		if (c == 0 && pkt->tuple.l4 == CT_IPPROTO_UDP)
			c = 0xffff;
		memcpy(l4 + off, &c, 2);
	}
}

static bool is_icmp(uint8_t l4)
{
	return l4 == CT_IPPROTO_ICMP || l4 == CT_IPPROTO_ICMPV6;
}

/* the tuple of the other direction, untranslated: the swap (ICMP keeps
 * its id; the type is not needed for translation) */
static void other_of(struct ct_tuple *o, const struct ct_tuple *t)
{
	*o = *t;
	o->src = t->dst;
	o->dst = t->src;
	if (!is_icmp(t->l4)) {
		o->sport = t->dport;
		o->dport = t->sport;
	}
}

/* What translation writes of a packet's tuple: addresses always; ports
 * for the protocols that have them; an ICMP id only for the query types
 * the kernel rewrites (icmp_manip_pkt, icmpv6_manip_pkt); GRE keys are
 * not all in the packet, so not compared. */
static bool written_equal(const struct ct_packet *p, const struct ct_tuple *want)
{
	const struct ct_tuple *a = &p->tuple;
	uint8_t type = (uint8_t)(a->dport >> 8);

	if (memcmp(&a->src, &want->src, sizeof(a->src)) != 0 ||
	    memcmp(&a->dst, &want->dst, sizeof(a->dst)) != 0)
		return false;
	switch (a->l4) {
	case CT_IPPROTO_TCP:
	case CT_IPPROTO_UDP:
	case CT_IPPROTO_UDPLITE:
	case CT_IPPROTO_SCTP:
		return a->sport == want->sport && a->dport == want->dport;
	case CT_IPPROTO_ICMP:
		if (type == 0 || type == 8 || (type >= 13 && type <= 18))
			return a->sport == want->sport;
		return true;
	case CT_IPPROTO_ICMPV6:
		if (type == 128 || type == 129)
			return a->sport == want->sport;
		return true;
	default:
		return true;
	}
}

/* a checksum field of the packet holds 0xffff (ones' complement -0) */
static bool has_negative_zero(const struct ct_packet *pkt)
{
	const uint8_t *l4 = pkt->l4;
	uint32_t cap = pkt->l4_caplen;

	if (pkt->tuple.l3 == CT_L3_IPV4 && pkt->l3[10] == 0xff && pkt->l3[11] == 0xff)
		return true;
	switch (pkt->tuple.l4) {
	case CT_IPPROTO_TCP:
		return cap >= 18 && l4[16] == 0xff && l4[17] == 0xff;
	case CT_IPPROTO_ICMP:
	case CT_IPPROTO_ICMPV6:
		return cap >= 4 && l4[2] == 0xff && l4[3] == 0xff;
	default:
		return false;
	}
}

static bool csums_valid(const struct ct_packet *p)
{
	return !p->ip_csum_bad && !p->truncated && ct_packet_l4_csum_ok(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum { CANARY = 16 };
	uint8_t ctl, *f, *orig;
	uint64_t seed;
	size_t n;
	uint32_t short_by = 0, flen;
	int link;
	enum ct_dir dir;
	struct ct_packet pkt, again;
	struct ct_nat_binding b, back;
	struct ct_tuple other, target;
	struct ct_nat_xlate_info info;
	enum ct_nat_verdict v;
	bool valid_before, negzero;

	if (size < 6)
		return 0;
	ctl = data[0];
	seed = (uint64_t)data[1] << 24 | (uint64_t)data[2] << 16 | (uint64_t)data[3] << 8 | data[4];
	data += 5;
	n = size - 5;
	f = malloc(n + CANARY);
	orig = malloc(n + CANARY);
	if (!f || !orig)
		goto out;
	memcpy(f, data, n);
	memset(f + n, 0xa5, CANARY);
	link = (ctl & 0x40) ? CT_LINK_RAW : CT_LINK_ETHERNET;
	dir = (ctl & 1) ? CT_DIR_REPLY : CT_DIR_ORIGINAL;
	ct_parse_frame(&pkt, link, f, (uint32_t)n, (uint32_t)n + ((ctl & 0x20) ? 64 : 0), 0);
	if (pkt.kind == CT_PKT_TRACKABLE && (ctl & 0x10)) {
		fix_checksums(&pkt, f + (pkt.l3 - f), (uint32_t)(n - (size_t)(pkt.l3 - f)));
		ct_parse_frame(&pkt, link, f, (uint32_t)n, (uint32_t)n + ((ctl & 0x20) ? 64 : 0), 0);
	}

	/* the binding: the other direction's tuple with new addresses and
	 * ports on the sides the control byte names */
	other_of(&other, &pkt.tuple);
	if (pkt.kind == CT_PKT_TRACKABLE && is_icmp(pkt.tuple.l4) && pkt.u.icmp.is_error &&
	    pkt.u.icmp.inner_ok)
		other = pkt.u.icmp.inner;   /* the quoted packet went the other way */
	{
		struct ct_tuple y = other;
		uint64_t r1 = mix(&seed), r2 = mix(&seed);
		unsigned sides = (ctl >> 1) & 3;

		if (sides & 1) {           /* where the packet's source goes */
			if (other.l3 == CT_L3_IPV4)
				y.dst.ip4 = (uint32_t)r1;
			else
				memcpy(&y.dst, &r1, 8);
			if (is_icmp(y.l4))
				y.sport = (uint16_t)(r2 >> 16);
			else
				y.dport = (uint16_t)(r2 >> 16);
		}
		if (sides & 2) {           /* where its destination goes */
			if (other.l3 == CT_L3_IPV4)
				y.src.ip4 = (uint32_t)(r1 >> 32);
			else
				memcpy((uint8_t *)&y.src + 8, &r2, 8);
			if (!is_icmp(y.l4))
				y.sport = (uint16_t)r2;
		}
		if (dir == CT_DIR_ORIGINAL) {
			struct ct_tuple o;

			other_of(&o, &other);
			ct_nat_binding_from_tuples(&b, &o, &y);
		} else {
			struct ct_tuple r;

			other_of(&r, &other);
			ct_nat_binding_from_tuples(&b, &y, &r);
		}
	}

	flen = (uint32_t)n;
	if ((ctl & 0x80) && n > 1) {
		short_by = 1 + (uint32_t)(seed % 16);
		if (short_by >= flen)
			short_by = flen - 1;
		flen -= short_by;
	}
	memcpy(orig, f, n + CANARY);
	/* both read the frame, which the translation rewrites */
	valid_before = pkt.kind == CT_PKT_TRACKABLE && csums_valid(&pkt);
	negzero = pkt.kind == CT_PKT_TRACKABLE && has_negative_zero(&pkt);
	v = ct_nat_translate(f, flen, &pkt, &b, dir, (ctl & 8) ? CT_NAT_XLATE_FORWARD : 0, &info);
	/* nothing past the length given */
	if (memcmp(f + flen, orig + flen, n + CANARY - flen) != 0)
		abort();
	if (v != CT_NAT_V_OK) {
		if (memcmp(f, orig, n) != 0)
			abort();
		goto out;
	}
	if (short_by || (ctl & 0x20))
		goto out;

	ct_parse_frame(&again, link, f, (uint32_t)n, (uint32_t)n, 0);
	if (again.kind != CT_PKT_TRACKABLE || info.icmp_error)
		goto out;
	/* the packet now carries the inverse of the other direction */
	other_of(&target, dir == CT_DIR_ORIGINAL ? &b.reply : &b.orig);
	if (!written_equal(&again, &target))
		abort();
	if (valid_before && !info.sctp_csum_skipped && !csums_valid(&again))
		abort();
	if ((ctl & 8) || negzero)
		goto out;
	if (pkt.tuple.l4 == CT_IPPROTO_SCTP && !valid_before)
		goto out; /* a wrong CRC comes back right */
	/* and back: the inverse binding takes it to the original bytes */
	{
		struct ct_tuple p_other;

		other_of(&p_other, &pkt.tuple);
		if (dir == CT_DIR_ORIGINAL)
			ct_nat_binding_from_tuples(&back, &again.tuple, &p_other);
		else
			ct_nat_binding_from_tuples(&back, &p_other, &again.tuple);
	}
	if (ct_nat_translate(f, (uint32_t)n, &again, &back, dir, 0, NULL) != CT_NAT_V_OK)
		abort();
	if (memcmp(f, orig, n) != 0)
		abort();
out:
	free(f);
	free(orig);
	return 0;
}
