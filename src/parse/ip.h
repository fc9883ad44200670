/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ip.h - the IPv4 and IPv6 headers: a packet's addresses, fragments and
 * lengths, before its L4 header is parsed (l4.h) (private to parse/).
 */
#ifndef CT_PARSE_IP_H
#define CT_PARSE_IP_H

#include <stdint.h>

#include "ctrack/packet.h"

/* ct_parse_ip6 flags */
enum {
	/* Treat a fragment header with offset 0 as transparent even when M
	 * is set: the packet is what conntrack sees after nf_defrag_ipv6
	 * gave up on it and let it pass (defrag.c). */
	CT_P6_FRAG_PASS = 0x1,
};

/*
 * Layer entry points.  The packet must be zeroed and ts/ifindex/vlan set
 * by the caller; @cap is the bytes captured from @ip on, @wire the bytes
 * the frame had on the wire from @ip on (CT_WIRE_UNKNOWN when unknown).
 */
enum ct_pkt_kind ct_parse_ip4_hdr(struct ct_packet *pkt, const uint8_t *ip,
				  uint32_t cap, uint32_t wire);
enum ct_pkt_kind ct_parse_ip6_hdr(struct ct_packet *pkt, const uint8_t *ip,
				  uint32_t cap, uint32_t wire, unsigned flags);
enum ct_pkt_kind ct_parse_ip_any(struct ct_packet *pkt, const uint8_t *ip,
				 uint32_t cap, uint32_t wire);

/*
 * ct_parse_ip6_pass - @frag, a first IPv6 fragment (kind FRAGMENT, offset
 * 0, more fragments) that defrag lets through, parsed into @out as the
 * whole packet conntrack then sees (its fragment header transparent):
 * the fields the fixed header and the chain in front of the fragment
 * header gave @frag are copied, and the walk of the chain goes on from
 * the fragment header instead of from the fixed header (the same walk
 * ct_parse_ip6_hdr(out, ip, cap, l3_len, CT_P6_FRAG_PASS) would make from
 * the start: tests/parse/test_ip6_resume.c checks the two agree).  The
 * zone is the caller's to set.
 */
enum ct_pkt_kind ct_parse_ip6_pass(struct ct_packet *out,
				   const struct ct_packet *frag);

#endif /* CT_PARSE_IP_H */
