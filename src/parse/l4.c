/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * l4.c - layer-4 headers: the tuple's ports and the checks the
 * kernel's per-protocol error() functions make before any state changes.
 *
 * The kernel folds these checks into each tracker's packet() path
 * (tcp_error, udp_error, udplite_error, nf_conntrack_icmpv4_error,
 * nf_conntrack_icmpv6_error, sctp_error + do_basic_checks,
 * gre_pkt_to_tuple); they depend on nothing but the packet, so they are
 * made here, once, and a failing packet comes back CT_PKT_INVALID with the
 * reason the kernel would log.  Lengths are those of the IP headers
 * (skb->len after ip_rcv trimmed it), never of the capture: a capture cut
 * short inside a header is CT_PR_L4_TRUNCATED, one cut short after the
 * header is tracked (pkt->truncated says so).  Checksums are not looked at
 * here (checksum.c, on demand).
 *
 * Tuples: TCP/UDP/UDP-Lite/SCTP ports; ICMP and ICMPv6 id and type/code
 * whatever the family (as icmp_pkt_to_tuple/icmpv6_pkt_to_tuple do);
 * enhanced GRE (version 1, PPTP) the call id as destination key; plain
 * GRE and everything else zero ports.  For ICMP errors the quoted packet
 * is parsed as nf_ct_get_tuplepr() parses it, into u.icmp.inner, the
 * tuple as the quoted packet was sent.
 */
#include <string.h>

#include "ctrack/packet.h"
#include "parse/ip6_ext.h"
#include "parse/l4.h"
#include "parse/wire.h"

/*
 * Valid flag combinations, indexed by the flag byte without ECE, CWR and
 * PSH (which are always allowed): the kernel's tcp_valid_flags table.
 */
static const uint8_t tcp_valid_flags[0x38] = {
	[CT_TCP_SYN] = 1,
	[CT_TCP_SYN | CT_TCP_URG] = 1,
	[CT_TCP_SYN | CT_TCP_ACK] = 1,
	[CT_TCP_RST] = 1,
	[CT_TCP_RST | CT_TCP_ACK] = 1,
	[CT_TCP_FIN | CT_TCP_ACK] = 1,
	[CT_TCP_FIN | CT_TCP_ACK | CT_TCP_URG] = 1,
	[CT_TCP_ACK] = 1,
	[CT_TCP_ACK | CT_TCP_URG] = 1,
};

/* seq1 is after seq2, in sequence-number arithmetic */
static inline bool seq_after(uint32_t seq1, uint32_t seq2)
{
	return (int32_t)(seq2 - seq1) < 0;
}

/*
 * TCP options.  The walk stops where the kernel's tcp_options() and
 * tcp_sack() stop (end of list, a length below 2, an option running past
 * the header), so a malformed list yields exactly the options conntrack
 * would have used.  Window scale is capped at 14 (RFC 7323); the SACK
 * right edge is computed as tcp_sack() computes it: starting from the ACK
 * number, the highest right edge "after" it, from the first well-formed
 * SACK option only.
 */
static void tcp_options(struct ct_tcp_info *ti, const uint8_t *p, uint32_t len)
{
	bool sack_done = false;

	/* The usual data-segment layout, NOP NOP TIMESTAMP, read directly
	 * (tcp_sack() has the same shortcut). */
	if (len == 12 && ct_rd32(p) == 0x0101080a) {
		ti->tsval = ct_rd32(p + 4);
		ti->tsecr = ct_rd32(p + 8);
		ti->opts |= CT_TCPOPT_TIMESTAMP;
		return;
	}
	while (len > 0) {
		uint8_t kind = p[0];
		uint32_t size;

		if (kind == 0)                  /* end of option list */
			return;
		if (kind == 1) {                /* no-op */
			p++;
			len--;
			continue;
		}
		if (len < 2)
			return;
		size = p[1];
		if (size < 2 || size > len)
			return;
		switch (kind) {
		case 2:
			if (size == 4) {
				ti->mss = ct_rd16(p + 2);
				ti->opts |= CT_TCPOPT_MSS;
			}
			break;
		case 3:
			if (size == 3) {
				ti->wscale = p[2] > 14 ? 14 : p[2];
				ti->opts |= CT_TCPOPT_WSCALE;
			}
			break;
		case 4:
			if (size == 2)
				ti->opts |= CT_TCPOPT_SACK_PERM;
			break;
		case 5:
			if (!sack_done && size >= 10 && (size - 2) % 8 == 0) {
				for (uint32_t i = 2; i < size; i += 8) {
					uint32_t right = ct_rd32(p + i + 4);

					if (seq_after(right, ti->sack_right))
						ti->sack_right = right;
				}
				ti->opts |= CT_TCPOPT_SACK;
				sack_done = true;
			}
			break;
		case 8:
			if (size == 10) {
				ti->tsval = ct_rd32(p + 2);
				ti->tsecr = ct_rd32(p + 6);
				ti->opts |= CT_TCPOPT_TIMESTAMP;
			}
			break;
		default:
			break;
		}
		p += size;
		len -= size;
	}
}

enum ct_pkt_kind ct_parse_tcp(struct ct_packet *pkt)
{
	const uint8_t *th = pkt->l4;
	struct ct_tcp_info *ti = &pkt->u.tcp;
	uint32_t doff;

	/* tcp_packet reads a whole struct tcphdr, tcp_error then checks the
	 * data offset against the segment ("truncated packet"). */
	if (pkt->l4_len < 20 || pkt->l4_caplen < 20)
		return ct_parse_fail(pkt, CT_PR_L4_TRUNCATED);
	pkt->tuple.sport = ct_rd16(th);
	pkt->tuple.dport = ct_rd16(th + 2);
	ti->seq = ct_rd32(th + 4);
	ti->ack = ct_rd32(th + 8);
	ti->sack_right = ti->ack;
	ti->window = ct_rd16(th + 14);
	ti->flags = th[13];
	doff = (uint32_t)(th[12] >> 4) * 4;
	ti->hdr_len = (uint8_t)doff;
	if (doff < 20 || doff > pkt->l4_len)
		return ct_parse_fail(pkt, CT_PR_TCP_BAD_DOFF);
	if (doff > pkt->l4_caplen)
		return ct_parse_fail(pkt, CT_PR_L4_TRUNCATED);
	if (!tcp_valid_flags[ti->flags & 0x37])
		return ct_parse_fail(pkt, CT_PR_TCP_BAD_FLAGS);
	if (doff > 20)
		tcp_options(ti, th + 20, doff - 20);
	pkt->payload_len = pkt->l4_len - doff;
	return CT_PKT_TRACKABLE;
}

/* UDP (udp_error). */
enum ct_pkt_kind ct_parse_udp(struct ct_packet *pkt)
{
	const uint8_t *uh = pkt->l4;
	uint32_t ulen;

	if (pkt->l4_len < 8 || pkt->l4_caplen < 8)
		return ct_parse_fail(pkt, CT_PR_L4_TRUNCATED);
	pkt->tuple.sport = ct_rd16(uh);
	pkt->tuple.dport = ct_rd16(uh + 2);
	pkt->payload_len = pkt->l4_len - 8;
	ulen = ct_rd16(uh + 4);
	if (ulen > pkt->l4_len || ulen < 8)
		return ct_parse_fail(pkt, CT_PR_UDP_BAD_LEN);
	return CT_PKT_TRACKABLE;
}

/* UDP-Lite (udplite_error). */
static enum ct_pkt_kind parse_udplite(struct ct_packet *pkt)
{
	const uint8_t *uh = pkt->l4;
	uint32_t ulen;

	if (pkt->l4_len < 8 || pkt->l4_caplen < 8)
		return ct_parse_fail(pkt, CT_PR_L4_TRUNCATED);
	pkt->tuple.sport = ct_rd16(uh);
	pkt->tuple.dport = ct_rd16(uh + 2);
	pkt->payload_len = pkt->l4_len - 8;
	ulen = ct_rd16(uh + 4);
	/* UDP-Lite: the length field is the checksum coverage, 0 = all */
	if (ulen != 0 && (ulen < 8 || ulen > pkt->l4_len))
		return ct_parse_fail(pkt, CT_PR_UDPLITE_BAD_COV);
	if (uh[6] == 0 && uh[7] == 0)
		return ct_parse_fail(pkt, CT_PR_UDPLITE_NO_CSUM);
	return CT_PKT_TRACKABLE;
}

bool ct_l4_tuple_ports(struct ct_tuple *t, const uint8_t *l4, uint32_t avail)
{
	switch (t->l4) {
	case CT_IPPROTO_ICMP:
	case CT_IPPROTO_ICMPV6:
		if (avail < 8)
			return false;
		t->sport = ct_rd16(l4 + 4);
		t->dport = (uint16_t)(l4[0] << 8 | l4[1]);
		return true;
	case CT_IPPROTO_GRE:
		/* gre_pkt_to_tuple: anything but version 1 (or too short to
		 * tell) is tracked like the generic protocol; version 1
		 * shorter than 8 bytes keeps zero keys; version 1 must carry
		 * PPP (0x880b) or there is no tuple. */
		if (avail < 4 || (ct_rd16(l4) & 7) != 1)
			return true;
		if (avail < 8)
			return true;
		if (ct_rd16(l4 + 2) != 0x880b)
			return false;
		t->sport = 0;
		t->dport = ct_rd16(l4 + 6);
		return true;
	case CT_IPPROTO_TCP:
	case CT_IPPROTO_UDP:
	case CT_IPPROTO_UDPLITE:
	case CT_IPPROTO_SCTP:
		if (avail < 4)
			return false;
		t->sport = ct_rd16(l4);
		t->dport = ct_rd16(l4 + 2);
		return true;
	default:
		return true;
	}
}

/*
 * The packet an ICMP error quotes, as nf_ct_get_tuplepr() reads it out of
 * the error: the family is the outer one; an IPv4 quote needs a full
 * 20-byte header, must not be a non-first fragment and has its L4 header
 * at IHL * 4 (unchecked, as in ipv4_get_l4proto); an IPv6 quote has its
 * extension chain walked by ipv6_skip_exthdr and must not be a non-first
 * fragment or end in "no next header".  @avail is what the outer packet
 * holds from @p on.
 */
static bool parse_inner(struct ct_tuple *t, uint8_t l3, const uint8_t *p,
			uint32_t avail)
{
	uint32_t dataoff;

	memset(t, 0, sizeof(*t));
	t->l3 = l3;
	if (l3 == CT_L3_IPV4) {
		if (avail < 20)
			return false;
		if (ct_rd16(p + 6) & 0x1fff)
			return false;
		dataoff = (uint32_t)(p[0] & 0x0f) * 4;
		if (dataoff > avail)
			return false;
		t->l4 = p[9];
		memcpy(&t->src.ip4, p + 12, 4);
		memcpy(&t->dst.ip4, p + 16, 4);
	} else {
		uint16_t fo;
		uint8_t nh;
		int32_t protoff;

		if (avail < 40)
			return false;
		nh = p[6];
		protoff = ct_ip6_skip_exthdr(p, avail, 40, &nh, &fo);
		if (protoff < 0 || (fo & ~7u))
			return false;
		t->l4 = nh;
		memcpy(t->src.ip6, p + 8, 16);
		memcpy(t->dst.ip6, p + 24, 16);
		dataoff = (uint32_t)protoff;
		if (dataoff > avail)
			return ct_l4_tuple_ports(t, p + avail, 0);
	}
	return ct_l4_tuple_ports(t, p + dataoff, avail - dataoff);
}

static inline bool icmp4_is_error(uint8_t type)
{
	/* dest unreachable, source quench, redirect, time exceeded,
	 * parameter problem (icmp_is_err) */
	return type == 3 || type == 4 || type == 5 || type == 11 ||
	       type == 12;
}

static enum ct_pkt_kind parse_icmp(struct ct_packet *pkt)
{
	const uint8_t *ih = pkt->l4;
	struct ct_icmp_info *ii = &pkt->u.icmp;
	bool err;

	if (pkt->l4_len < 8 || pkt->l4_caplen < 8)
		return ct_parse_fail(pkt, CT_PR_L4_TRUNCATED);
	ii->type = ih[0];
	ii->code = ih[1];
	ii->id = ct_rd16(ih + 4);
	pkt->tuple.sport = ii->id;
	pkt->tuple.dport = (uint16_t)(ii->type << 8 | ii->code);
	pkt->payload_len = pkt->l4_len - 8;

	if (pkt->tuple.l4 == CT_IPPROTO_ICMP && pkt->tuple.l3 == CT_L3_IPV4) {
		/* NR_ICMP_TYPES is 18: RFC 1122 says discard the rest */
		if (ii->type > 18)
			return ct_parse_fail(pkt, CT_PR_ICMP_BAD_TYPE);
		err = icmp4_is_error(ii->type);
	} else if (pkt->tuple.l4 == CT_IPPROTO_ICMPV6 &&
		   pkt->tuple.l3 == CT_L3_IPV6) {
		/* every ICMPv6 type below 128 is an error message */
		err = ii->type < 128;
	} else {
		/* ICMP over IPv6 or ICMPv6 over IPv4: the trackers refuse
		 * them; there is no error processing for them. */
		return CT_PKT_TRACKABLE;
	}
	if (!err)
		return CT_PKT_TRACKABLE;

	ii->is_error = true;
	if (!parse_inner(&ii->inner, pkt->tuple.l3, ih + 8,
			 pkt->l4_caplen - 8))
		return ct_parse_fail(pkt, pkt->truncated ? CT_PR_L4_TRUNCATED
							 : CT_PR_ICMP_BAD);
	ii->inner_ok = true;
	return CT_PKT_TRACKABLE;
}

enum {
	SCTP_CID_INIT = 1,
	SCTP_CID_INIT_ACK = 2,
	SCTP_CID_COOKIE_ECHO = 10,
	SCTP_CID_COOKIE_ACK = 11,
	SCTP_CID_SHUTDOWN_COMPLETE = 14,
};

/*
 * SCTP: sctp_error wants the 12-byte common header; do_basic_checks walks
 * the chunks while a 4-byte chunk header fits in the packet: no chunk may
 * have length 0, INIT / INIT ACK / SHUTDOWN COMPLETE must be the only
 * chunk, COOKIE ECHO / COOKIE ACK must come first, and there must be at
 * least one chunk.  INIT and INIT ACK must then hold the 16-byte init
 * header the tracker reads the initiate tag from.
 */
static enum ct_pkt_kind parse_sctp(struct ct_packet *pkt)
{
	const uint8_t *sh = pkt->l4;
	struct ct_sctp_info *si = &pkt->u.sctp;
	uint32_t off = 12, count = 0, len = pkt->l4_len, cap = pkt->l4_caplen;
	bool only = false;

	if (len < 12 || cap < 12)
		return ct_parse_fail(pkt, CT_PR_L4_TRUNCATED);
	pkt->tuple.sport = ct_rd16(sh);
	pkt->tuple.dport = ct_rd16(sh + 2);
	si->vtag = ct_rd32(sh + 4);
	pkt->payload_len = len - 12;

	while (off < len && len - off >= 4) {
		uint8_t type;
		uint16_t clen;

		if (off > cap || cap - off < 4)
			break;          /* the capture ends here */
		type = sh[off];
		clen = ct_rd16(sh + off + 2);
		if (type == SCTP_CID_INIT || type == SCTP_CID_INIT_ACK ||
		    type == SCTP_CID_SHUTDOWN_COMPLETE)
			only = true;
		if (((type == SCTP_CID_COOKIE_ACK ||
		      type == SCTP_CID_COOKIE_ECHO || only) && count != 0) ||
		    clen == 0)
			return ct_parse_fail(pkt, CT_PR_SCTP_BAD);
		if (type < 32)
			si->chunk_map |= 1u << type;
		if (count == 0)
			si->first_chunk = type;
		count++;
		off += ((uint32_t)clen + 3) & ~3u;
	}
	if (count == 0)
		return ct_parse_fail(pkt, len > 12 && cap < 16 ?
				     CT_PR_L4_TRUNCATED : CT_PR_SCTP_BAD);
	si->n_chunks = count > UINT8_MAX ? UINT8_MAX : (uint8_t)count;
	if (si->first_chunk == SCTP_CID_INIT ||
	    si->first_chunk == SCTP_CID_INIT_ACK) {
		if (len < 12 + 4 + 16)
			return ct_parse_fail(pkt, CT_PR_SCTP_BAD);
		if (cap < 12 + 4 + 16)
			return ct_parse_fail(pkt, CT_PR_L4_TRUNCATED);
		si->init_tag = ct_rd32(sh + 16);
	}
	return CT_PKT_TRACKABLE;
}

static enum ct_pkt_kind parse_gre(struct ct_packet *pkt)
{
	const uint8_t *gh = pkt->l4;
	struct ct_gre_info *gi = &pkt->u.gre;
	uint32_t cap = pkt->l4_caplen, off;
	uint16_t flags;

	/* The tuple depends on the first 4 bytes, and for version 1 on the
	 * first 8: those must be in the capture if the datagram has them. */
	if (cap < ct_min_u32(pkt->l4_len, 4))
		return ct_parse_fail(pkt, CT_PR_L4_TRUNCATED);
	if (cap >= 4 && (ct_rd16(gh) & 7) == 1 &&
	    cap < ct_min_u32(pkt->l4_len, 8))
		return ct_parse_fail(pkt, CT_PR_L4_TRUNCATED);
	if (!ct_l4_tuple_ports(&pkt->tuple, gh, cap))
		return ct_parse_fail(pkt, CT_PR_GRE_BAD);
	pkt->payload_len = pkt->l4_len;
	if (cap < 4)
		return CT_PKT_TRACKABLE;

	flags = ct_rd16(gh);
	gi->version = flags & 7;
	gi->ptype = ct_rd16(gh + 2);
	off = 4;
	if (flags & 0xc000)             /* checksum or routing present */
		off += 4;
	if ((flags & 0x2000) && cap >= off + 4) {
		gi->key = ct_rd32(gh + off);
		gi->has_key = true;
	}
	return CT_PKT_TRACKABLE;
}

enum ct_pkt_kind ct_parse_l4(struct ct_packet *pkt)
{
	switch (pkt->tuple.l4) {
	case CT_IPPROTO_TCP:
		return ct_parse_tcp(pkt);
	case CT_IPPROTO_UDP:
		return ct_parse_udp(pkt);
	case CT_IPPROTO_UDPLITE:
		return parse_udplite(pkt);
	case CT_IPPROTO_ICMP:
	case CT_IPPROTO_ICMPV6:
		return parse_icmp(pkt);
	case CT_IPPROTO_SCTP:
		return parse_sctp(pkt);
	case CT_IPPROTO_GRE:
		return parse_gre(pkt);
	default:
		/* generic: no ports, nothing to check (ESP, AH as L4, ...) */
		pkt->payload_len = pkt->l4_len;
		return CT_PKT_TRACKABLE;
	}
}

static const char *const reason_names[CT_PR_MAX] = {
	[CT_PR_OK] = "ok",
	[CT_PR_LINK_TRUNCATED] = "link_truncated",
	[CT_PR_IP_TRUNCATED] = "ip_truncated",
	[CT_PR_IP_BAD_VERSION] = "ip_bad_version",
	[CT_PR_IP_BAD_HDR_LEN] = "ip_bad_hdr_len",
	[CT_PR_IP_BAD_TOTAL_LEN] = "ip_bad_total_len",
	[CT_PR_IP_BAD_CSUM] = "ip_bad_csum",
	[CT_PR_IP6_EXT_TRUNCATED] = "ip6_ext_truncated",
	[CT_PR_IP6_EXT_BAD] = "ip6_ext_bad",
	[CT_PR_FRAG_BAD] = "frag_bad",
	[CT_PR_L4_TRUNCATED] = "l4_truncated",
	[CT_PR_TCP_BAD_DOFF] = "tcp_bad_doff",
	[CT_PR_TCP_BAD_FLAGS] = "tcp_bad_flags",
	[CT_PR_UDP_BAD_LEN] = "udp_bad_len",
	[CT_PR_UDPLITE_BAD_COV] = "udplite_bad_cov",
	[CT_PR_SCTP_BAD] = "sctp_bad",
	[CT_PR_ICMP_BAD] = "icmp_bad",
	[CT_PR_L4_BAD_CSUM] = "l4_bad_csum",
	[CT_PR_TCP_INVALID_STATE] = "tcp_invalid_state",
	[CT_PR_TCP_OUT_OF_WINDOW] = "tcp_out_of_window",
	[CT_PR_TCP_INVALID_RST] = "tcp_invalid_rst",
	[CT_PR_TCP_NEW_NOT_SYN] = "tcp_new_not_syn",
	[CT_PR_SCTP_INVALID] = "sctp_invalid",
	[CT_PR_ICMP_NO_MATCH] = "icmp_no_match",
	[CT_PR_ICMP_UNTRACKED_TYPE] = "icmp_untracked_type",
	[CT_PR_TABLE_FULL] = "table_full",
	[CT_PR_NS_DYING] = "ns_dying",
	[CT_PR_NS_UNKNOWN] = "ns_unknown",
	[CT_PR_NO_MEMORY] = "no_memory",
	[CT_PR_CHAIN_TOO_LONG] = "chain_too_long",
	[CT_PR_IP6_NO_NEXT_HDR] = "ip6_no_next_header",
	[CT_PR_IP6_BAD_ADDR] = "ip6_bad_addr",
	[CT_PR_ICMP_BAD_TYPE] = "icmp_bad_type",
	[CT_PR_GRE_BAD] = "gre_bad",
	[CT_PR_UDPLITE_NO_CSUM] = "udplite_no_csum",
};

const char *ct_parse_reason_name(enum ct_parse_reason r)
{
	if ((unsigned)r >= CT_PR_MAX || reason_names[r] == NULL)
		return "unknown";
	return reason_names[r];
}
