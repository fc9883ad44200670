/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * track_frame.c - fuzz_track's frame builder: the packets a program's
 * specs describe, for the harness's pool of connections, with consistent
 * sequence numbers and SCTP tags - real frames (Ethernet, raw IP, VLAN,
 * ICMP errors quoting a packet, cut short, corrupted) for the parser, or
 * struct ct_packet filled in directly as an embedding dataplane would.
 * Checksums are tests/support's, a second implementation beside the
 * library's, so that a frame the library calls good was judged by it.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "fuzz_track.h"
#include "support/csum.h"
#include "support/wire.h"

/* ---- building packets ---- */

static const uint8_t tcp_combos[FZ_TCP_COMBOS] = {
	CT_TCP_SYN, CT_TCP_SYN | CT_TCP_ACK, CT_TCP_ACK, CT_TCP_PSH | CT_TCP_ACK,
	CT_TCP_FIN | CT_TCP_ACK, CT_TCP_RST, CT_TCP_RST | CT_TCP_ACK, CT_TCP_FIN,
	CT_TCP_SYN | CT_TCP_ECE | CT_TCP_CWR, CT_TCP_ACK | CT_TCP_URG,
	CT_TCP_ACK, CT_TCP_PSH | CT_TCP_ACK, CT_TCP_FIN | CT_TCP_PSH | CT_TCP_ACK,
	CT_TCP_SYN | CT_TCP_ACK | CT_TCP_ECE,
};

/* Write the IP header for a datagram of @l4len L4 bytes from @src to @dst. */
static size_t put_ip(struct fz *f, uint8_t *ip, bool v6, const union ct_addr *src,
		     const union ct_addr *dst, uint8_t proto, uint32_t l4len)
{
	if (v6) {
		memset(ip, 0, 40);
		ip[0] = 0x60;
		ts_put16(ip + 4, (uint16_t)l4len);
		ip[6] = proto;
		ip[7] = 64;
		memcpy(ip + 8, src->ip6, 16);
		memcpy(ip + 24, dst->ip6, 16);
		return 40;
	}
	memset(ip, 0, 20);
	ip[0] = 0x45;
	ts_put16(ip + 2, (uint16_t)(20 + l4len));
	ts_put16(ip + 4, f->ipid++);
	ip[8] = 64;
	ip[9] = proto;
	memcpy(ip + 12, &src->ip4, 4);
	memcpy(ip + 16, &dst->ip4, 4);
	ts_ip4_csum(ip);
	return 20;
}

static uint32_t put_tcp(struct slot *s, int dir, const struct pspec *ps, uint8_t *th)
{
	uint8_t flags = ps->fl < 224 ? tcp_combos[ps->fl % FZ_TCP_COMBOS] : ps->fl;
	uint32_t seq = s->nxt[dir], ack = (flags & CT_TCP_ACK) ? s->nxt[!dir] : 0;
	uint32_t hl = 20;

	switch (ps->md & 3) {
	case 1:
		seq -= ps->ln ? ps->ln : 1;
		break;
	case 2:
		seq += 0x40000000u;
		break;
	case 3:
		ack += 0x20000000u;
		break;
	default:
		break;
	}
	memset(th, 0, 60);
	if (ps->md & 8) {
		uint8_t *o = th + 20;

		if (flags & CT_TCP_SYN) {
			o[0] = 2; o[1] = 4; ts_put16(o + 2, 1460);          /* MSS */
			o[4] = 4; o[5] = 2;                               /* SACK perm */
			o[6] = 3; o[7] = 3; o[8] = (uint8_t)(ps->md >> 4); /* WS */
			o[9] = 1;
			o[10] = 8; o[11] = 10; ts_put32(o + 12, seq); ts_put32(o + 16, 0);
			hl = 40;
		} else {
			o[0] = 1; o[1] = 1;
			o[2] = 8; o[3] = 10; ts_put32(o + 4, seq); ts_put32(o + 8, ack);
			o[12] = 1; o[13] = 1;
			o[14] = 5; o[15] = 10; ts_put32(o + 16, ack); ts_put32(o + 20, ack + 1000);
			hl = 44;
		}
	}
	ts_put16(th, dir ? s->t.dport : s->t.sport);
	ts_put16(th + 2, dir ? s->t.sport : s->t.dport);
	ts_put32(th + 4, seq);
	ts_put32(th + 8, ack);
	th[12] = (uint8_t)((hl / 4) << 4);
	th[13] = flags;
	ts_put16(th + 14, (ps->md & 4) ? 0 : (uint16_t)(0xffff - ps->ln * 64));
	memset(th + hl, 0xab, ps->ln);
	if ((ps->md & 3) != 1 && (ps->md & 3) != 2)
		s->nxt[dir] = seq + ps->ln + !!(flags & CT_TCP_SYN) + !!(flags & CT_TCP_FIN);
	return hl + ps->ln;
}

static const uint8_t sctp_chunks[16] = { 1, 2, 10, 11, 0, 3, 4, 5, 6, 7, 8, 14, 9, 0, 0, 0 };

static uint32_t put_sctp(struct slot *s, int dir, const struct pspec *ps, uint8_t *sh)
{
	uint8_t type = sctp_chunks[ps->fl & 15];
	uint32_t off = 12, clen;
	uint8_t *c = sh + 12;

	ts_put16(sh, dir ? s->t.dport : s->t.sport);
	ts_put16(sh + 2, dir ? s->t.sport : s->t.dport);
	ts_put32(sh + 4, type == 1 ? 0 : (ps->fl & 0x40) ? s->vtag[dir] : s->vtag[!dir]);
	if (ps->fl & 0x20)
		ts_put32(sh + 4, 0xdeadbeef);
	memset(c, 0, 64);
	c[0] = type;
	switch (type) {
	case 1:
	case 2:
		clen = 20;
		ts_put32(c + 4, s->vtag[dir]);
		ts_put32(c + 8, 65536);
		ts_put16(c + 12, 1);
		ts_put16(c + 14, 1);
		ts_put32(c + 16, s->nxt[dir]);
		break;
	case 0:
		clen = 16 + (ps->ln & 63);
		ts_put32(c + 4, s->nxt[dir]++);
		break;
	case 3:
	case 4:
	case 5:
		clen = 16;
		break;
	case 7:
		clen = 8;
		break;
	case 10:
		clen = 8;
		break;
	default:
		clen = 4;
		break;
	}
	if ((ps->fl & 0x40) && (type == 6 || type == 14))
		c[1] = 1; /* T bit: the sender's own tag */
	ts_put16(c + 2, (uint16_t)clen);
	off += (clen + 3) & ~3u;
	if (ps->fl & 0x10) {
		uint8_t *d = sh + off;
		memset(d, 0, 20);
		d[0] = 0;
		ts_put16(d + 2, 20);
		ts_put32(d + 4, s->nxt[dir]++);
		off += 20;
	}
	return off;
}

static uint32_t put_gre(struct slot *s, int dir, const struct pspec *ps, uint8_t *gh)
{
	uint32_t len;

	memset(gh, 0, 16);
	if (ps->fl & 1) {                /* PPTP's enhanced GRE */
		ts_put16(gh, 0x2001);
		ts_put16(gh + 2, 0x880b);
		ts_put16(gh + 4, ps->ln);
		ts_put16(gh + 6, dir ? s->t.sport : s->t.dport);
		len = 8;
	} else {
		ts_put16(gh, 0);
		ts_put16(gh + 2, 0x0800);
		len = 4;
	}
	memset(gh + len, 0x5a, ps->ln);
	return len + ps->ln;
}


/* An ICMP / ICMPv6 message for slot @s; errors quote another slot's packet
 * and are addressed from its destination back to its source, as a router
 * or the peer would send them. */
static size_t build_icmp(struct fz *f, struct slot *s, int dir, const struct pspec *ps,
			 uint8_t *ip, int depth)
{
	bool v6 = s->t.l3 == CT_L3_IPV6;
	uint8_t proto = s->t.l4;
	const union ct_addr *src = dir ? &s->t.dst : &s->t.src;
	const union ct_addr *dst = dir ? &s->t.src : &s->t.dst;
	uint8_t inner[BUF];
	union ct_addr isrc, idst;
	uint8_t *ih;
	size_t hl, qlen = 0, ilen;

	if ((ps->fl & 0x80) && depth == 0) {
		struct slot *q = &f->s[ps->fl & 15];
		struct pspec qs = { (uint8_t)((ps->fl >> 4) & 1) << 4, 0, (uint8_t)(ps->ln & 31), 0 };
		bool qv6 = q->t.l3 == CT_L3_IPV6;
		size_t qhl = qv6 ? 40 : 20;
		struct slot qcopy = *q;     /* quoting does not advance its sequence */

		ilen = fz_build_ip(f, &qcopy, (qs.sd >> 4) & 1, &qs, inner, depth + 1);
		qlen = ilen < qhl + 8 ? ilen : qhl + 8 + (ps->md & 8 ? 32 : 0);
		if (qlen > ilen)
			qlen = ilen;
		v6 = qv6;
		proto = v6 ? 58 : 1;
		memset(&isrc, 0, sizeof(isrc));
		memset(&idst, 0, sizeof(idst));
		if (v6) {
			memcpy(isrc.ip6, inner + 24, 16);
			memcpy(idst.ip6, inner + 8, 16);
		} else {
			memcpy(&isrc.ip4, inner + 16, 4);
			memcpy(&idst.ip4, inner + 12, 4);
		}
		if (!(ps->md & 4)) {
			src = &isrc;
			dst = &idst;
		}
	}
	hl = v6 ? 40 : 20;
	ih = ip + hl;
	memset(ih, 0, 8);
	if (qlen) {
		static const uint8_t t4[4] = { 3, 11, 12, 4 };
		static const uint8_t t6[4] = { 1, 3, 2, 4 };
		ih[0] = v6 ? t6[(ps->fl >> 5) & 3] : t4[(ps->fl >> 5) & 3];
		ih[1] = (uint8_t)(ps->md >> 4);
		memcpy(ih + 8, inner, qlen);
		ilen = 8 + qlen;
	} else {
		if (ps->fl & 0x40)
			ih[0] = ps->md;
		else if (v6)
			ih[0] = dir ? 129 : 128;
		else
			ih[0] = dir ? 0 : 8;
		ts_put16(ih + 4, s->t.sport);
		ts_put16(ih + 6, (uint16_t)ps->ln);
		memset(ih + 8, 0x33, ps->ln);
		ilen = 8 + ps->ln;
	}
	put_ip(f, ip, v6, src, dst, proto, (uint32_t)ilen);
	ts_l4_csum(ip, v6, proto, ih, (uint32_t)ilen);
	return hl + ilen;
}

/* The IP datagram of one packet of slot @s in direction @dir. */
size_t fz_build_ip(struct fz *f, struct slot *s, int dir, const struct pspec *ps,
		   uint8_t *ip, int depth)
{
	bool v6 = s->t.l3 == CT_L3_IPV6;
	size_t hl = v6 ? 40 : 20;
	uint8_t *l4 = ip + hl;
	uint32_t len;

	switch (s->t.l4) {
	case 6:
		len = put_tcp(s, dir, ps, l4);
		break;
	case 17:
	case 136:
		memset(l4, 0, 8 + ps->ln);
		ts_put16(l4, dir ? s->t.dport : s->t.sport);
		ts_put16(l4 + 2, dir ? s->t.sport : s->t.dport);
		len = 8 + ps->ln;
		ts_put16(l4 + 4, (uint16_t)(s->t.l4 == 136 ? ((ps->md & 8) ? 8 : 0) : len));
		memset(l4 + 8, 0x44, ps->ln);
		break;
	case 1:
	case 58:
		return build_icmp(f, s, dir, ps, ip, depth);
	case 132:
		len = put_sctp(s, dir, ps, l4);
		break;
	case 47:
		len = put_gre(s, dir, ps, l4);
		break;
	default:
		memset(l4, 0x77, ps->ln);
		len = ps->ln;
		break;
	}
	put_ip(f, ip, v6, dir ? &s->t.dst : &s->t.src, dir ? &s->t.src : &s->t.dst,
	       s->t.l4, len);
	ts_l4_csum(ip, v6, s->t.l4, l4, len);
	return hl + len;
}

/*
 * Build the packet of spec @ps into @buf and parse it into @pkt the way
 * its path says.  Returns false when nothing should be processed.
 */
bool fz_make_packet(struct fz *f, const struct pspec *ps, uint8_t *buf,
		    struct ct_packet *pkt)
{
	struct slot *s = &f->s[ps->sd & 15];
	int dir = (ps->sd >> 4) & 1;
	unsigned path = ps->sd >> 5;
	size_t lh = path == 3 ? 18 : 14, iplen, len;
	uint8_t *ip = buf + lh;
	bool v6 = s->t.l3 == CT_L3_IPV6;

	iplen = fz_build_ip(f, s, dir, ps, ip, 0);
	/* the link header goes in front; ICMP errors may change the family */
	v6 = (ip[0] >> 4) == 6;
	memset(buf, 0, lh);
	buf[0] = 0x02;
	buf[6] = 0x02;
	buf[11] = (uint8_t)(ps->sd & 15);
	if (path == 3) {
		ts_put16(buf + 12, 0x8100);
		ts_put16(buf + 14, (uint16_t)(ps->md & 0x0fff));
		ts_put16(buf + 16, v6 ? 0x86dd : 0x0800);
	} else {
		ts_put16(buf + 12, v6 ? 0x86dd : 0x0800);
	}
	len = lh + iplen;

	switch (path) {
	case 2:
		ct_parse_ip(pkt, ip, (uint32_t)iplen, (uint32_t)iplen, f->now);
		break;
	case 4:
	case 5:
		/* the caller's own parser: the struct, filled in directly */
		ct_parse_ip(pkt, ip, (uint32_t)iplen, (uint32_t)iplen, f->now);
		if (path == 5 && pkt->kind == CT_PKT_TRACKABLE) {
			pkt->l3_len += ps->md;       /* accounting only */
			pkt->ttl = ps->fl;
			if (pkt->tuple.l4 == 6) {
				pkt->u.tcp.flags = ps->fl;
				pkt->u.tcp.window = (uint16_t)(ps->md * 257);
				pkt->u.tcp.wscale = (uint8_t)((ps->md >> 4) > 14 ? 14 : ps->md >> 4);
				pkt->u.tcp.opts |= CT_TCPOPT_WSCALE | CT_TCPOPT_SACK;
				pkt->u.tcp.sack_right = pkt->u.tcp.ack + ps->ln * 100u;
			}
		}
		break;
	case 6:
		buf[lh + (ps->ln * 31u + ps->md) % iplen] ^= (uint8_t)(ps->fl | 1);
		ct_parse_frame(pkt, CT_LINK_ETHERNET, buf, (uint32_t)len, (uint32_t)len, f->now);
		break;
	case 7: {
		uint32_t cap = (uint32_t)(14 + (ps->md * (len - 14)) / 256);
		ct_parse_frame(pkt, CT_LINK_ETHERNET, buf, cap, (uint32_t)len, f->now);
		break;
	}
	default:
		ct_parse_frame(pkt, CT_LINK_ETHERNET, buf, (uint32_t)len, (uint32_t)len, f->now);
		break;
	}
	/* the zone is the caller's to choose, as --zone-by does */
	pkt->tuple.zone = s->t.zone;
	return true;
}
