/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * refrag.c - fragmenting a datagram again as the kernel's output path
 * does, and dropping an IPv6 atomic fragment header (refrag.h).
 *
 * Written here, not taken from a library: it is the router's output as
 * the tool reproduces it for --write-translated (libpcap writes packets,
 * it does not fragment them), and it must be the kernel's geometry to
 * the byte - ip_do_fragment's and ip6_fragment's slow path, the path a
 * datagram that conntrack reassembled and NAT rewrote takes.
 */
#include <string.h>

#include "refrag.h"

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t ip4_csum(const uint8_t *h, unsigned len)
{
	uint32_t s = 0;

	for (unsigned i = 0; i < len; i += 2)
		s += (uint32_t)h[i] << 8 | h[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* ip_do_fragment's slow path, from offset 0 of a whole datagram. */
static int frag4(const uint8_t *ip, uint32_t len, uint32_t mtu, refrag_out_fn out, void *arg)
{
	uint8_t buf[65536];
	unsigned hlen = (ip[0] & 15u) * 4u;
	uint32_t left, off = 0;
	int n = 0;

	if (hlen < 20 || hlen >= len || mtu <= hlen + 8)
		return -1;
	left = len - hlen;
	while (left) {
		uint32_t dl = left;

		if (dl > mtu - hlen)
			dl = mtu - hlen;
		if (dl < left)
			dl &= ~7u;
		memcpy(buf, ip, hlen);
		memcpy(buf + hlen, ip + hlen + off, dl);
		wr16(buf + 2, (uint16_t)(hlen + dl));
		/* the offset, MF when more follow; DF is not kept */
		wr16(buf + 6, (uint16_t)((off >> 3) | (left > dl ? 0x2000 : 0)));
		wr16(buf + 10, 0);
		wr16(buf + 10, ip4_csum(buf, hlen));
		out(arg, buf, hlen + dl);
		n++;
		off += dl;
		left -= dl;
	}
	return n;
}

/* ip6_find_1stfragopt: where the fragmentable part begins; *@nh_off the
 * byte that names the next header there.  0 when the chain is cut. */
static uint32_t ip6_unfrag_len(const uint8_t *ip, uint32_t len, uint32_t *nh_off)
{
	uint32_t off = 40;
	uint8_t nh = ip[6];
	bool rhdr = false;

	*nh_off = 6;
	for (;;) {
		uint32_t hl;

		switch (nh) {
		case 0:      /* hop-by-hop */
			break;
		case 43:     /* routing */
			rhdr = true;
			break;
		case 60:     /* destination options: unfragmentable before a
			      * routing header's end only (no MIPv6 home address
			      * option here) */
			if (rhdr)
				return off;
			break;
		default:
			return off;
		}
		if (off + 8 > len)
			return 0;
		hl = (ip[off + 1] + 1u) * 8u;
		*nh_off = off;
		nh = ip[off];
		off += hl;
		if (off > len)
			return 0;
	}
}

static int frag6(const uint8_t *ip, uint32_t len, uint32_t mtu, uint32_t id,
		 refrag_out_fn out, void *arg)
{
	uint8_t buf[65536 + 8];
	uint32_t nh_off, hlen = ip6_unfrag_len(ip, len, &nh_off), left, off = 0;
	uint8_t nexthdr;
	int n = 0;

	if (!hlen || hlen >= len || mtu <= hlen + 8 + 8)
		return -1;
	nexthdr = ip[nh_off];
	mtu -= hlen + 8;
	left = len - hlen;
	while (left) {
		uint32_t dl = left;

		if (dl > mtu)
			dl = mtu;
		if (dl < left)
			dl &= ~7u;
		memcpy(buf, ip, hlen);
		buf[nh_off] = 44;   /* fragment header */
		buf[hlen] = nexthdr;
		buf[hlen + 1] = 0;
		wr16(buf + hlen + 2, (uint16_t)(off | (left > dl ? 1 : 0)));
		buf[hlen + 4] = (uint8_t)(id >> 24);
		buf[hlen + 5] = (uint8_t)(id >> 16);
		buf[hlen + 6] = (uint8_t)(id >> 8);
		buf[hlen + 7] = (uint8_t)id;
		memcpy(buf + hlen + 8, ip + hlen + off, dl);
		wr16(buf + 4, (uint16_t)(hlen + 8 + dl - 40));
		out(arg, buf, hlen + 8 + dl);
		n++;
		off += dl;
		left -= dl;
	}
	return n;
}

int refrag_send(const uint8_t *ip, uint32_t len, uint32_t max_size, uint32_t frag_id,
		refrag_out_fn out, void *arg)
{
	int n;

	if (!max_size || max_size >= len || len < 20) {
		out(arg, ip, len);
		return 1;
	}
	n = (ip[0] >> 4) == 4 ? frag4(ip, len, max_size, out, arg)
	  : (ip[0] >> 4) == 6 && len >= 40 ? frag6(ip, len, max_size, frag_id, out, arg) : -1;
	if (n < 0)
		out(arg, ip, len);
	return n;
}

uint32_t refrag_strip_atomic(uint8_t *ip, uint32_t len)
{
	uint32_t off = 40, nh_off = 6;
	uint8_t nh;

	if (len < 40 || (ip[0] >> 4) != 6)
		return len;
	nh = ip[6];
	/* the extension headers before it (a fragment header follows the
	 * unfragmentable part) */
	while (nh == 0 || nh == 43 || nh == 60) {
		if (off + 8 > len)
			return len;
		nh_off = off;
		nh = ip[off];
		off += (ip[off + 1] + 1u) * 8u;
		if (off > len)
			return len;
	}
	if (nh != 44 || off + 8 > len)
		return len;
	/* offset 0 and no M: an atomic fragment */
	if ((rd16(ip + off + 2) & 0xfff9) != 0)
		return len;
	ip[nh_off] = ip[off];
	memmove(ip + off, ip + off + 8, len - off - 8);
	len -= 8;
	wr16(ip + 4, (uint16_t)(len - 40));
	return len;
}
