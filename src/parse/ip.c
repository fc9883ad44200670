/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ip.c - IPv4 and IPv6 headers, as the kernel checks them before
 * (and while) nf_conntrack sees a packet.
 *
 * What counts as broken follows the receive path in front of conntrack's
 * PRE_ROUTING hook, because a packet that path drops never reaches the
 * tracker:
 *   - IPv4 (ip_rcv_core): version 4, IHL >= 5, the header checksum
 *     (ip_fast_csum; a bad one is dropped and counted as InCsumErrors, so
 *     conntrack never sees it: CT_PR_IP_BAD_CSUM), total length no more
 *     than the frame and no less than the header.  IP options are only
 *     parsed after the hook (ip_rcv_finish), so they are not checked.
 *   - IPv6 (ip6_rcv_core): version 6, no multicast source, no multicast
 *     destination of scope 0, payload length within the frame, and the
 *     hop-by-hop header's options (ip6_parse_tlv: padding rules, at most 8
 *     options, router alert length, unknown options whose action bits say
 *     "discard", the jumbo payload option).  The loopback-address check
 *     depends on the receiving device and is left to the caller.
 * Then what conntrack itself does (nf_conntrack_core.c get_l4proto): the
 * IPv6 extension chain is walked as ipv6_skip_exthdr() walks it (HBH,
 * routing, destination options, AH with its own length unit, fragment);
 * ESP and anything else end the chain and are the L4 protocol; "no next
 * header" (59) makes get_l4proto fail, which conntrack counts as invalid
 * (CT_PR_IP6_NO_NEXT_HDR).
 *
 * Fragments are reported, not reassembled (defrag.c does that, as
 * nf_defrag_ipv4/6 do in front of conntrack).  For fragments, l3_hdr_len
 * and l4 describe the fragment's data: the bytes after the IPv4 header or
 * after the IPv6 fragment header.  A first fragment also gets its tuple
 * ports when they are present.  An IPv6 "atomic" fragment (offset 0, M
 * clear) is a whole packet: nf_defrag_ipv6 "reassembles" it at once and
 * drops the 8-byte fragment header, so l3_len (what conntrack counts) is
 * the datagram less those 8 bytes.
 *
 * The IPv6 jumbo payload (payload length 0 with a hop-by-hop jumbo
 * option, as BIG TCP captures show) is accepted when ipv6_hop_jumbo would
 * accept it, and l3_len is then 40 + the jumbo length.
 */
#include <string.h>

#include "ctrack/packet.h"
#include "parse/checksum.h"
#include "parse/ip.h"
#include "parse/ip6_ext.h"
#include "parse/l4.h"
#include "parse/wire.h"

/* The IPv4 header checksum: 16-bit ones' complement sum of the header,
 * which must be all ones.  The fixed 20 bytes are summed as five
 * independent 32-bit words (a short dependency chain); options after. */
static inline uint32_t ld32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline bool ip4_hdr_csum_ok(const uint8_t *ip, uint32_t ihl)
{
	uint64_t s;

	/* five loads straight into registers (a memcpy into an array went
	 * through the stack) */
	s = ((uint64_t)ld32(ip) + ld32(ip + 4)) + ((uint64_t)ld32(ip + 8) + ld32(ip + 12)) +
	    ld32(ip + 16);
	for (uint32_t i = 20; i < ihl; i += 4) {
		uint32_t o;

		memcpy(&o, ip + i, 4);
		s += o;
	}
	return ct_csum_fold(s) == 0xffff;
}

enum ct_pkt_kind ct_parse_ip4_hdr(struct ct_packet *pkt, const uint8_t *ip,
				  uint32_t cap, uint32_t wire)
{
	uint32_t ihl, tot, avail;
	uint16_t frag;

	if (cap < 20)
		return ct_parse_fail(pkt, CT_PR_IP_TRUNCATED);
	if ((ip[0] >> 4) != 4)
		return ct_parse_fail(pkt, CT_PR_IP_BAD_VERSION);
	ihl = (uint32_t)(ip[0] & 0x0f) * 4;
	if (ihl < 20)
		return ct_parse_fail(pkt, CT_PR_IP_BAD_HDR_LEN);
	if (cap < ihl)
		return ct_parse_fail(pkt, CT_PR_IP_TRUNCATED);
	if (!ip4_hdr_csum_ok(ip, ihl))
		pkt->ip_csum_bad = true;  /* ct_process decides (checksum knob) */
	tot = ct_rd16(ip + 2);
	if (tot > wire)
		return ct_parse_fail(pkt, CT_PR_IP_BAD_TOTAL_LEN);
	if (tot < ihl)
		return ct_parse_fail(pkt, CT_PR_IP_BAD_HDR_LEN);

	pkt->tuple.l3 = CT_L3_IPV4;
	pkt->tuple.l4 = ip[9];
	memcpy(&pkt->tuple.src.ip4, ip + 12, 4);
	memcpy(&pkt->tuple.dst.ip4, ip + 16, 4);
	pkt->ttl = ip[8];
	pkt->l3 = ip;
	pkt->l3_len = tot;
	pkt->l3_hdr_len = (uint16_t)ihl;
	avail = ct_min_u32(cap, tot);
	pkt->truncated = cap < tot;
	pkt->l4 = ip + ihl;
	pkt->l4_len = tot - ihl;
	pkt->l4_caplen = avail - ihl;

	frag = ct_rd16(ip + 6);
	if (__builtin_expect((frag & 0x3fff) != 0, 0)) {
		pkt->is_fragment = true;
		pkt->frag_id = ct_rd16(ip + 4);
		pkt->frag_offset = (uint16_t)((frag & 0x1fff) << 3);
		pkt->frag_more = (frag & 0x2000) != 0;
		pkt->kind = CT_PKT_FRAGMENT;
		pkt->payload_len = pkt->l4_len;
		if (pkt->frag_offset == 0)
			(void)ct_l4_tuple_ports(&pkt->tuple, pkt->l4,
						pkt->l4_caplen);
		return CT_PKT_FRAGMENT;
	}
	if (ip[9] == CT_IPPROTO_TCP)
		return ct_parse_tcp(pkt);
	if (ip[9] == CT_IPPROTO_UDP)
		return ct_parse_udp(pkt);
	return ct_parse_l4(pkt);
}

/*
 * The hop-by-hop options header, as ip6_rcv_core() checks it through
 * ipv6_parse_hopopts()/ip6_parse_tlv() before conntrack runs.  *@len is
 * the datagram length so far (not yet known when the payload length is 0)
 * and becomes 40 + the jumbo length when a valid jumbo option is found.
 */
static enum ct_parse_reason ip6_check_hbh(const uint8_t *ip, uint32_t cap,
					  uint32_t *len, uint32_t plen)
{
	uint32_t end, off, padlen = 0, count = 0;

	if (*len < 48 || cap < 48)
		return CT_PR_IP6_EXT_TRUNCATED;
	end = 40 + ((uint32_t)ip[41] + 1) * 8;
	if (end > *len || end > cap)
		return CT_PR_IP6_EXT_TRUNCATED;

	off = 42;
	while (off < end) {
		uint8_t type = ip[off];
		uint32_t optlen;

		if (type == 0) {                /* Pad1 */
			if (++padlen > 7)
				return CT_PR_IP6_EXT_BAD;
			off++;
			continue;
		}
		if (end - off < 2)
			return CT_PR_IP6_EXT_BAD;
		optlen = (uint32_t)ip[off + 1] + 2;
		if (optlen > end - off)
			return CT_PR_IP6_EXT_BAD;
		if (type == 1) {                /* PadN: at most 7, all zero */
			padlen += optlen;
			if (padlen > 7)
				return CT_PR_IP6_EXT_BAD;
			for (uint32_t i = 2; i < optlen; i++)
				if (ip[off + i] != 0)
					return CT_PR_IP6_EXT_BAD;
		} else {
			/* net.ipv6.max_hbh_opts_number defaults to 8 */
			if (++count > 8)
				return CT_PR_IP6_EXT_BAD;
			switch (type) {
			case 0x05:              /* router alert */
				if (ip[off + 1] != 2)
					return CT_PR_IP6_EXT_BAD;
				break;
			case 0x31:              /* IOAM: 4n-aligned, else
						 * ignored (ioam6_enabled=0) */
				if (off & 3)
					return CT_PR_IP6_EXT_BAD;
				break;
			case 0x07:              /* CALIPSO */
				if (ip[off + 1] < 8 ||
				    (uint32_t)ip[off + 6] * 4 + 8 > ip[off + 1])
					return CT_PR_IP6_EXT_BAD;
				break;
			case 0xc2: {            /* jumbo payload */
				uint32_t jumbo;

				if (ip[off + 1] != 4 || (off & 3) != 2)
					return CT_PR_IP6_EXT_BAD;
				jumbo = ct_rd32(ip + off + 2);
				if (jumbo <= 65535 || plen != 0)
					return CT_PR_IP6_EXT_BAD;
				if (jumbo > *len - 40)
					return CT_PR_IP_BAD_TOTAL_LEN;
				*len = 40 + jumbo;
				break;
			}
			default:
				/* unknown: the top two bits say what to do;
				 * only 00 (skip) lets the packet through */
				if (type & 0xc0)
					return CT_PR_IP6_EXT_BAD;
				break;
			}
			padlen = 0;
		}
		off += optlen;
	}
	return CT_PR_OK;
}

/*
 * Where the walk of an IPv6 extension chain stands: the datagram's
 * lengths, the next header and its offset, and what the fragment headers
 * met so far decided.  ct_parse_ip6_hdr starts it after the fixed header;
 * ct_parse_ip6_pass after the first fragment header, for a packet that
 * defrag lets through (so the chain in front is not walked twice).
 */
struct ip6_walk {
	uint32_t len, avail, plen, off, frag_data;
	unsigned n_frag;
	uint8_t nh;
	bool in_frag, atomic;
};

static inline __attribute__((always_inline)) enum ct_pkt_kind
ip6_walk(struct ct_packet *pkt, const uint8_t *ip, uint32_t cap,
	 struct ip6_walk *w, unsigned flags)
{
	uint32_t len = w->len, avail = w->avail, off = w->off;
	uint32_t frag_data = w->frag_data;
	uint8_t nh = w->nh;
	unsigned n_frag = w->n_frag;
	bool in_frag = w->in_frag, atomic = w->atomic;

	/*
	 * The extension chain.  Up to the first non-atomic fragment header
	 * a failure makes the packet invalid (conntrack would see exactly
	 * this chain); after it, we are inside the fragmentable part of a
	 * first fragment and only look for the tuple.
	 */
	while (ct_ip6_is_ext(nh)) {
		const uint8_t *h = ip + off;

		if (nh == CT_IPPROTO_NONE) {
			if (in_frag)
				goto fragment;
			return ct_parse_fail(pkt, CT_PR_IP6_NO_NEXT_HDR);
		}
		if (off + 2 > avail) {
			if (in_frag)
				goto fragment;
			return ct_parse_fail(pkt, CT_PR_IP6_EXT_TRUNCATED);
		}
		if (nh == CT_IPPROTO_FRAGMENT) {
			uint16_t fo, offset;

			if (off + 8 > avail) {
				if (in_frag)
					goto fragment;
				return ct_parse_fail(pkt,
						     CT_PR_IP6_EXT_TRUNCATED);
			}
			fo = ct_rd16(h + 2);
			offset = fo & 0xfff8;
			if (n_frag++ == 0) {
				pkt->frag_id = ct_rd32(h + 4);
				pkt->frag_offset = offset;
				pkt->frag_more = fo & 1;
				if (offset != 0 ||
				    ((fo & 1) && !(flags & CT_P6_FRAG_PASS))) {
					in_frag = true;
					frag_data = off + 8;
					if (offset != 0) {
						pkt->tuple.l4 = h[0];
						goto fragment;
					}
				} else if (!(fo & 1)) {
					atomic = true;
				}
			} else if (!in_frag && offset != 0) {
				/* Only the first fragment header is
				 * reassembled; conntrack then finds this one
				 * and gives up (get_l4proto). */
				return ct_parse_fail(pkt, CT_PR_FRAG_BAD);
			}
		}
		off += ct_ip6_ext_len(nh, h);
		nh = h[0];
	}
	pkt->tuple.l4 = nh;

	if (in_frag) {
		if (off <= avail)
			(void)ct_l4_tuple_ports(&pkt->tuple, ip + off,
						avail - off);
		goto fragment;
	}

	/* ipv6_skip_exthdr may point past the datagram; conntrack would then
	 * fail to read any L4 header.  Such a chain is called truncated. */
	if (off > len || off > cap)
		return ct_parse_fail(pkt, CT_PR_IP6_EXT_TRUNCATED);
	pkt->l3_hdr_len = (uint16_t)(off > UINT16_MAX ? UINT16_MAX : off);
	pkt->l4 = ip + off;
	pkt->l4_len = len - off;
	pkt->l4_caplen = avail - off;
	/* An atomic fragment loses its fragment header in nf_defrag_ipv6
	 * when the upper-layer header is whole (otherwise it passes as is);
	 * with a jumbo payload defrag leaves it alone. */
	if (atomic && w->plen != 0 && pkt->l4_len >= ct_ip6_min_upper(nh))
		pkt->l3_len -= 8;
	return ct_parse_l4(pkt);

fragment:
	pkt->is_fragment = true;
	pkt->kind = CT_PKT_FRAGMENT;
	pkt->l3_hdr_len = (uint16_t)(frag_data > UINT16_MAX ? UINT16_MAX
							      : frag_data);
	pkt->l4 = ip + frag_data;
	pkt->l4_len = len - frag_data;
	pkt->l4_caplen = avail - frag_data;
	pkt->payload_len = pkt->l4_len;
	return CT_PKT_FRAGMENT;
}

enum ct_pkt_kind ct_parse_ip6_hdr(struct ct_packet *pkt, const uint8_t *ip,
				  uint32_t cap, uint32_t wire, unsigned flags)
{
	struct ip6_walk w = { .off = 40 };
	uint32_t plen, len;
	uint8_t nh;

	if (cap < 40)
		return ct_parse_fail(pkt, CT_PR_IP_TRUNCATED);
	if ((ip[0] >> 4) != 6)
		return ct_parse_fail(pkt, CT_PR_IP_BAD_VERSION);
	if (ip[8] == 0xff || (ip[24] == 0xff && (ip[25] & 0x0f) == 0))
		return ct_parse_fail(pkt, CT_PR_IP6_BAD_ADDR);

	plen = ct_rd16(ip + 4);
	nh = ip[6];
	if (__builtin_expect(plen != 0 || nh != CT_IPPROTO_HOPOPTS, 1)) {
		len = 40 + plen;
		if (len > wire)
			return ct_parse_fail(pkt, CT_PR_IP_BAD_TOTAL_LEN);
	} else {
		/* Payload length 0 before a hop-by-hop header: the kernel
		 * does not trim; a jumbo option may give the length. */
		len = wire == CT_WIRE_UNKNOWN ? cap : wire;
	}

	pkt->tuple.l3 = CT_L3_IPV6;
	memcpy(pkt->tuple.src.ip6, ip + 8, 16);
	memcpy(pkt->tuple.dst.ip6, ip + 24, 16);
	pkt->ttl = ip[7];
	pkt->l3 = ip;

	if (nh == CT_IPPROTO_HOPOPTS) {
		enum ct_parse_reason r = ip6_check_hbh(ip, cap, &len, plen);

		if (r != CT_PR_OK)
			return ct_parse_fail(pkt, r);
	}
	w.avail = ct_min_u32(cap, len);
	w.len = len;
	w.plen = plen;
	w.nh = nh;
	pkt->l3_len = len;
	pkt->truncated = cap < len;
	return ip6_walk(pkt, ip, cap, &w, flags);
}

enum ct_pkt_kind ct_parse_ip6_pass(struct ct_packet *out,
				   const struct ct_packet *frag)
{
	const uint8_t *ip = frag->l3;
	uint32_t cap = (uint32_t)(frag->l4 - ip) + frag->l4_caplen;
	uint32_t fh_off = frag->l3_hdr_len - 8u;  /* its fragment header */
	struct ip6_walk w = {
		.len = frag->l3_len,
		.avail = ct_min_u32(cap, frag->l3_len),
		.plen = ct_rd16(ip + 4),
		.off = fh_off + 8,
		.nh = ip[fh_off],
		.n_frag = 1,
	};

	ct_packet_zero(out);
	out->ts = frag->ts;
	out->ifindex = frag->ifindex;
	out->n_vlan = frag->n_vlan;
	out->vlan_outer = frag->vlan_outer;
	out->vlan_inner = frag->vlan_inner;
	out->tuple.l3 = frag->tuple.l3;
	out->tuple.src = frag->tuple.src;
	out->tuple.dst = frag->tuple.dst;
	out->ttl = frag->ttl;
	out->l3 = ip;
	out->l3_len = frag->l3_len;
	out->truncated = frag->truncated;
	out->frag_id = frag->frag_id;
	out->frag_offset = frag->frag_offset;
	out->frag_more = frag->frag_more;
	return ip6_walk(out, ip, cap, &w, CT_P6_FRAG_PASS);
}

enum ct_pkt_kind ct_parse_ip_any(struct ct_packet *pkt, const uint8_t *ip,
				 uint32_t cap, uint32_t wire)
{
	if (cap < 1)
		return ct_parse_fail(pkt, CT_PR_IP_TRUNCATED);
	switch (ip[0] >> 4) {
	case 4:
		return ct_parse_ip4_hdr(pkt, ip, cap, wire);
	case 6:
		return ct_parse_ip6_hdr(pkt, ip, cap, wire, 0);
	default:
		return ct_parse_fail(pkt, CT_PR_IP_BAD_VERSION);
	}
}

enum ct_pkt_kind ct_parse_ip(struct ct_packet *pkt, const uint8_t *ip,
			     uint32_t caplen, uint32_t wirelen, ct_time_ns ts)
{
	ct_packet_zero(pkt);
	pkt->ts = ts;
	if (wirelen < caplen)
		wirelen = caplen;
	return ct_parse_ip_any(pkt, ip, caplen, wirelen);
}
