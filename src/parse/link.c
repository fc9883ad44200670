/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * link.c - peel the link layer off a captured frame.
 *
 * ct_parse_frame() is the parser's front door.  It zeroes the packet once,
 * finds where the IP header starts for the capture's link type and hands
 * over to ip.c with two lengths: what the capture holds from there
 * and what the frame carried on the wire from there (so that a capture
 * cut by its snaplen is told apart from a datagram that is really short,
 * which the kernel's ip_rcv would drop).
 *
 * Ethernet is the hot path: one load of the EtherType, then IPv4/IPv6.
 * Any stack of 802.1Q/802.1ad/0x9100 tags is walked (outer and inner VLAN
 * ids are recorded); PPPoE session frames carrying IPv4/IPv6 are opened;
 * MPLS and everything else are not IP as far as conntrack is concerned
 * (the kernel does not decapsulate them in front of conntrack either).
 * Linux SLL/SLL2 carry an EtherType; BSD NULL/LOOP a 4-byte address
 * family (host order, or network order); NFLOG a TLV list whose
 * NFULA_PAYLOAD attribute is the IP packet.  libpcap already converts
 * NFLOG's host-order TLV headers to the reader's byte order, so they are
 * read natively here.
 */
#include <string.h>

#include "ctrack/packet.h"
#include "parse/ip.h"
#include "parse/wire.h"

#define ETH_P_IP       0x0800
#define ETH_P_IPV6     0x86dd
#define ETH_P_8021Q    0x8100
#define ETH_P_8021AD   0x88a8
#define ETH_P_QINQ1    0x9100
#define ETH_P_PPP_SES  0x8864
#define PPP_IP         0x0021
#define PPP_IPV6       0x0057
#define ARPHRD_NETLINK 824
#define NFULA_PAYLOAD  9

static enum ct_pkt_kind not_ip(struct ct_packet *pkt)
{
	pkt->kind = CT_PKT_NOT_IP;
	return CT_PKT_NOT_IP;
}

/*
 * Dispatch on an EtherType whose payload starts at @p.  VLAN tags loop
 * back here; a frame can carry any number of them.
 */
static enum ct_pkt_kind parse_ethertype(struct ct_packet *pkt, uint16_t type,
					const uint8_t *p, uint32_t cap,
					uint32_t wire)
{
	/* the common case first, ahead of the switch's compare tree */
	if (__builtin_expect(type == ETH_P_IP, 1))
		return ct_parse_ip4_hdr(pkt, p, cap, wire);
	for (;;) {
		switch (type) {
		case ETH_P_IP:
			return ct_parse_ip4_hdr(pkt, p, cap, wire);
		case ETH_P_IPV6:
			return ct_parse_ip6_hdr(pkt, p, cap, wire, 0);
		case ETH_P_8021Q:
		case ETH_P_8021AD:
		case ETH_P_QINQ1: {
			uint16_t vid;

			if (cap < 4)
				return ct_parse_fail(pkt, CT_PR_LINK_TRUNCATED);
			vid = ct_rd16(p) & 0x0fff;
			if (pkt->n_vlan == 0)
				pkt->vlan_outer = vid;
			pkt->vlan_inner = vid;
			if (pkt->n_vlan != UINT8_MAX)
				pkt->n_vlan++;
			type = ct_rd16(p + 2);
			p += 4;
			cap -= 4;
			wire -= 4;
			continue;
		}
		case ETH_P_PPP_SES: {
			uint16_t proto;

			/* version/type 1/1, code 0 (session data), session id,
			 * length, then the 2-byte PPP protocol. */
			if (cap < 8)
				return ct_parse_fail(pkt, CT_PR_LINK_TRUNCATED);
			if (p[0] != 0x11 || p[1] != 0)
				return not_ip(pkt);
			proto = ct_rd16(p + 6);
			if (proto == PPP_IP)
				return ct_parse_ip4_hdr(pkt, p + 8, cap - 8,
							wire - 8);
			if (proto == PPP_IPV6)
				return ct_parse_ip6_hdr(pkt, p + 8, cap - 8,
							wire - 8, 0);
			return not_ip(pkt);
		}
		default:
			return not_ip(pkt);
		}
	}
}

static enum ct_pkt_kind parse_family(struct ct_packet *pkt, uint32_t family,
				     const uint8_t *p, uint32_t cap,
				     uint32_t wire)
{
	switch (family) {
	case 2:         /* AF_INET everywhere */
		return ct_parse_ip4_hdr(pkt, p, cap, wire);
	case 24:        /* AF_INET6: NetBSD, OpenBSD, BSD/OS */
	case 28:        /* FreeBSD */
	case 30:        /* Darwin */
		return ct_parse_ip6_hdr(pkt, p, cap, wire, 0);
	default:
		return not_ip(pkt);
	}
}

/*
 * NFLOG: family(1) version(1) resource id(2), then TLVs: length(2)
 * type(2) value, each padded to 4 bytes; the length covers the TLV
 * header.  The payload attribute holds the packet as logged, possibly
 * cut by the copy range, and nothing records its original length: the IP
 * header is trusted for it.
 */
static enum ct_pkt_kind parse_nflog(struct ct_packet *pkt, const uint8_t *f,
				    uint32_t cap)
{
	uint32_t off = 4;

	if (cap < 4)
		return ct_parse_fail(pkt, CT_PR_LINK_TRUNCATED);
	while (cap - off >= 4) {
		uint16_t tlen, ttype;

		memcpy(&tlen, f + off, 2);
		memcpy(&ttype, f + off + 2, 2);
		if (tlen < 4)
			return ct_parse_fail(pkt, CT_PR_LINK_TRUNCATED);
		if ((ttype & 0x3fff) == NFULA_PAYLOAD) {
			const uint8_t *p = f + off + 4;
			uint32_t plen = ct_min_u32(tlen - 4u, cap - off - 4);

			if (f[0] == 2)
				return ct_parse_ip4_hdr(pkt, p, plen,
							CT_WIRE_UNKNOWN);
			if (f[0] == 10)
				return ct_parse_ip6_hdr(pkt, p, plen,
							CT_WIRE_UNKNOWN, 0);
			return not_ip(pkt);
		}
		off += ((uint32_t)tlen + 3u) & ~3u;
		if (off >= cap)
			break;
	}
	return not_ip(pkt);
}

enum ct_pkt_kind ct_parse_frame(struct ct_packet *pkt, int linktype,
				const uint8_t *frame, uint32_t caplen,
				uint32_t wirelen, ct_time_ns ts)
{
	ct_packet_zero(pkt);
	pkt->ts = ts;
	if (wirelen < caplen)
		wirelen = caplen;

	if (__builtin_expect(linktype == CT_LINK_ETHERNET, 1)) {
		if (caplen < 14)
			return ct_parse_fail(pkt, CT_PR_LINK_TRUNCATED);
		return parse_ethertype(pkt, ct_rd16(frame + 12), frame + 14,
				       caplen - 14, wirelen - 14);
	}
	switch (linktype) {
	case CT_LINK_ETHERNET:
		if (caplen < 14)
			return ct_parse_fail(pkt, CT_PR_LINK_TRUNCATED);
		return parse_ethertype(pkt, ct_rd16(frame + 12), frame + 14,
				       caplen - 14, wirelen - 14);
	case CT_LINK_RAW:
	case CT_LINK_DLT_RAW12:
	case CT_LINK_DLT_RAW14:
		return ct_parse_ip_any(pkt, frame, caplen, wirelen);
	case CT_LINK_IPV4:
		return ct_parse_ip4_hdr(pkt, frame, caplen, wirelen);
	case CT_LINK_IPV6:
		return ct_parse_ip6_hdr(pkt, frame, caplen, wirelen, 0);
	case CT_LINK_NULL: {
		uint32_t fam;

		if (caplen < 4)
			return ct_parse_fail(pkt, CT_PR_LINK_TRUNCATED);
		/* Host order of the machine that captured: a value with
		 * bits in the upper half was written the other way round. */
		memcpy(&fam, frame, 4);
		if (fam & 0xffff0000u)
			fam = __builtin_bswap32(fam);
		return parse_family(pkt, fam, frame + 4, caplen - 4,
				    wirelen - 4);
	}
	case CT_LINK_LOOP:
		if (caplen < 4)
			return ct_parse_fail(pkt, CT_PR_LINK_TRUNCATED);
		return parse_family(pkt, ct_rd32(frame), frame + 4, caplen - 4,
				    wirelen - 4);
	case CT_LINK_LINUX_SLL:
		/* packet type(2) hatype(2) addr len(2) addr(8) protocol(2) */
		if (caplen < 16)
			return ct_parse_fail(pkt, CT_PR_LINK_TRUNCATED);
		if (ct_rd16(frame + 2) == ARPHRD_NETLINK)
			return not_ip(pkt);
		return parse_ethertype(pkt, ct_rd16(frame + 14), frame + 16,
				       caplen - 16, wirelen - 16);
	case CT_LINK_LINUX_SLL2:
		/* protocol(2) reserved(2) ifindex(4) hatype(2) packet type(1)
		 * addr len(1) addr(8) */
		if (caplen < 20)
			return ct_parse_fail(pkt, CT_PR_LINK_TRUNCATED);
		pkt->ifindex = ct_rd32(frame + 4);
		if (ct_rd16(frame + 8) == ARPHRD_NETLINK)
			return not_ip(pkt);
		return parse_ethertype(pkt, ct_rd16(frame), frame + 20,
				       caplen - 20, wirelen - 20);
	case CT_LINK_NFLOG:
		return parse_nflog(pkt, frame, caplen);
	default:
		pkt->kind = CT_PKT_UNSUPPORTED_LINK;
		return CT_PKT_UNSUPPORTED_LINK;
	}
}
