/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_nat_xlate.c - packet translation, checked against packets built
 * from scratch.
 *
 * The builder here knows nothing of the library: it writes IPv4/IPv6
 * packets with TCP, UDP, UDP-Lite, SCTP, ICMP, ICMPv6 or GRE and their
 * checksums computed from scratch (RFC 1071 sums over big-endian words,
 * a bitwise CRC32c).  A translation is right when the frame it leaves is,
 * byte for byte, the frame the builder writes for the translated packet:
 * a checksum computed in full and one updated incrementally agree on
 * every bit (neither can come out 0xffff except UDP's mangled zero, which
 * the builder writes too), so every checksum is checked by that equality,
 * and independently again by tshark on a capture of all the results
 * (the last case).  ICMP errors are built as a router would see them: the
 * quoted packet is the start of the packet that went out, its own
 * checksums those of the whole original.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctrack/nat.h"
#include "ctrack/packet.h"

/* ---- checksums from scratch ---------------------------------------- */

static uint32_t ref_add(const uint8_t *p, size_t n, uint32_t s)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	return s;
}

static uint16_t ref_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static uint32_t ref_crc32c(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
	}
	return ~c;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* ---- the builder ----------------------------------------------------- */

struct spec {
	int v;                  /* 4 or 6 */
	uint8_t proto;
	const char *src, *dst;
	uint16_t sport, dport;  /* ICMP: sport is the id */
	uint8_t icmp_type;      /* ICMP / ICMPv6 query type */
	uint8_t ttl;
	uint32_t payload;
	uint8_t fill;
	uint16_t word;          /* the payload's first two bytes */
	bool udp_nocsum;
	bool ext6;              /* IPv6: hop-by-hop and destination options */
	uint8_t gre_ver;
	uint16_t ipid;
};

static void addr(int v, const char *s, uint8_t *out)
{
	assert_int_equal(inet_pton(v == 4 ? AF_INET : AF_INET6, s, out), 1);
}

/* The pseudo-header sum (RFC 768 / 8200): addresses, protocol, length. */
static uint32_t pseudo(int v, const uint8_t *ip, uint8_t proto, uint32_t len)
{
	uint32_t s = 0;

	if (v == 4) {
		s = ref_add(ip + 12, 8, 0);
		s += proto;
		s += len;
	} else {
		s = ref_add(ip + 8, 32, 0);
		s += len >> 16;
		s += len & 0xffff;
		s += proto;
	}
	return s;
}

/* fills the L4 checksum of the packet at @ip (L4 at @l4off, @l4len long) */
static void fix_l4(int v, uint8_t *ip, uint32_t l4off, uint32_t l4len, uint8_t proto,
		   bool udp_nocsum)
{
	uint8_t *h = ip + l4off;

	switch (proto) {
	case 6:
		put16(h + 16, 0);
		put16(h + 16, ref_fold(ref_add(h, l4len, pseudo(v, ip, 6, l4len))));
		break;
	case 17:
	case 136:
		put16(h + 6, 0);
		if (proto == 17 && udp_nocsum)
			break;
		{
			uint16_t c = ref_fold(ref_add(h, l4len, pseudo(v, ip, proto, l4len)));

			put16(h + 6, c ? c : 0xffff);
		}
		break;
	case 132: {
		uint32_t c;

		memset(h + 8, 0, 4);
		c = ref_crc32c(h, l4len);
		h[8] = (uint8_t)c;
		h[9] = (uint8_t)(c >> 8);
		h[10] = (uint8_t)(c >> 16);
		h[11] = (uint8_t)(c >> 24);
		break;
	}
	case 1:
		put16(h + 2, 0);
		put16(h + 2, ref_fold(ref_add(h, l4len, 0)));
		break;
	case 58:
		put16(h + 2, 0);
		put16(h + 2, ref_fold(ref_add(h, l4len, pseudo(v, ip, 58, l4len))));
		break;
	default:
		break;
	}
}

static uint32_t l4_header(const struct spec *s, uint8_t *h)
{
	switch (s->proto) {
	case 6:
		memset(h, 0, 20);
		put16(h, s->sport);
		put16(h + 2, s->dport);
		put32(h + 4, 1000);
		put32(h + 8, 2000);
		h[12] = 5 << 4;
		h[13] = 0x18; /* PSH ACK */
		put16(h + 14, 65000);
		return 20;
	case 17:
	case 136:
		put16(h, s->sport);
		put16(h + 2, s->dport);
		/* UDP: the length; UDP-Lite: coverage 0, the whole datagram */
		put16(h + 4, (uint16_t)(s->proto == 17 ? 8 + s->payload : 0));
		put16(h + 6, 0);
		return 8;
	case 132:
		memset(h, 0, 12 + 16);
		put16(h, s->sport);
		put16(h + 2, s->dport);
		put32(h + 4, 0x11223344);
		/* a DATA chunk of 16 bytes */
		h[12] = 0;
		put16(h + 14, 16);
		return 12 + 16;
	case 1:
	case 58:
		h[0] = s->icmp_type;
		h[1] = 0;
		put16(h + 2, 0);
		put16(h + 4, s->sport);
		put16(h + 6, 1);
		return 8;
	case 47:
		memset(h, 0, 16);
		h[0] = s->gre_ver == 1 ? 0x30 : 0x00; /* key + seq for PPTP */
		h[1] = s->gre_ver;
		put16(h + 2, s->gre_ver == 1 ? 0x880b : 0x0800);
		put16(h + 4, (uint16_t)s->payload);
		put16(h + 6, s->dport);      /* call id */
		return s->gre_ver == 1 ? 12 : 4;
	default:
		return 0;
	}
}

/* An IP packet per @s into @out; returns its length. */
static uint32_t build(uint8_t *out, const struct spec *s)
{
	uint32_t hl = s->v == 4 ? 20 : 40 + (s->ext6 ? 16 : 0), l4len, total;
	uint8_t *h = out + hl;

	l4len = l4_header(s, h);
	for (uint32_t i = 0; i < s->payload; i++)
		h[l4len + i] = (uint8_t)(s->fill + i);
	if (s->payload >= 2)
		put16(h + l4len, s->word);
	l4len += s->payload;
	total = hl + l4len;
	if (s->v == 4) {
		memset(out, 0, 20);
		out[0] = 0x45;
		put16(out + 2, (uint16_t)total);
		put16(out + 4, s->ipid);
		out[6] = 0x40; /* DF */
		out[8] = s->ttl ? s->ttl : 64;
		out[9] = s->proto;
		addr(4, s->src, out + 12);
		addr(4, s->dst, out + 16);
	} else {
		memset(out, 0, 40);
		out[0] = 0x60;
		put16(out + 4, (uint16_t)(total - 40));
		out[6] = s->ext6 ? 0 : s->proto;
		out[7] = s->ttl ? s->ttl : 64;
		addr(6, s->src, out + 8);
		addr(6, s->dst, out + 24);
		if (s->ext6) {
			/* hop-by-hop (8 bytes, PadN) then destination options */
			memset(out + 40, 0, 16);
			out[40] = 60;
			out[42] = 1;
			out[43] = 4;
			out[48] = s->proto;
			out[50] = 1;
			out[51] = 4;
		}
	}
	fix_l4(s->v, out, hl, l4len, s->proto, s->udp_nocsum);
	if (s->v == 4)
		put16(out + 10, ref_fold(ref_add(out, 20, 0)));
	return total;
}

/* An ICMP / ICMPv6 error from @src to @dst quoting @qlen bytes of @quote. */
static uint32_t build_error(uint8_t *out, int v, const char *src, const char *dst,
			    uint8_t type, uint8_t code, uint32_t mtu,
			    const uint8_t *quote, uint32_t qlen)
{
	uint32_t hl = v == 4 ? 20 : 40, total = hl + 8 + qlen;
	uint8_t *h = out + hl;

	memset(out, 0, hl + 8);
	if (v == 4) {
		out[0] = 0x45;
		put16(out + 2, (uint16_t)total);
		out[8] = 64;
		out[9] = 1;
		addr(4, src, out + 12);
		addr(4, dst, out + 16);
	} else {
		out[0] = 0x60;
		put16(out + 4, (uint16_t)(total - 40));
		out[6] = 58;
		out[7] = 64;
		addr(6, src, out + 8);
		addr(6, dst, out + 24);
	}
	h[0] = type;
	h[1] = code;
	put32(h + 4, mtu);
	memcpy(h + 8, quote, qlen);
	fix_l4(v, out, hl, 8 + qlen, v == 4 ? 1 : 58, false);
	if (v == 4)
		put16(out + 10, ref_fold(ref_add(out, 20, 0)));
	return total;
}

/* Ethernet + @ip */
static uint32_t frame(uint8_t *f, const uint8_t *ip, uint32_t len, int v)
{
	memset(f, 0, 14);
	f[0] = 0x02;
	f[6] = 0x02;
	f[11] = 1;
	put16(f + 12, v == 4 ? 0x0800 : 0x86dd);
	memcpy(f + 14, ip, len);
	return len + 14;
}

/* ---- tuples and bindings -------------------------------------------- */

static struct ct_tuple tuple_of(const struct spec *s)
{
	struct ct_tuple t;

	memset(&t, 0, sizeof(t));
	t.l3 = s->v == 4 ? CT_L3_IPV4 : CT_L3_IPV6;
	t.l4 = s->proto;
	addr(s->v, s->src, (uint8_t *)&t.src);
	addr(s->v, s->dst, (uint8_t *)&t.dst);
	if (s->proto == 1 || s->proto == 58) {
		t.sport = s->sport;
		t.dport = (uint16_t)(s->icmp_type << 8);
	} else if (s->proto == 47) {
		t.sport = s->sport;
		t.dport = s->dport;
	} else {
		t.sport = s->sport;
		t.dport = s->dport;
	}
	return t;
}

/* a binding whose reply is @o's inverse with the reply's source set to
 * @rsrc:@rsport (DNAT) and destination to @rdst:@rdport (SNAT) */
static struct ct_nat_binding binding(const struct spec *o, const char *rsrc, uint16_t rsport,
				     const char *rdst, uint16_t rdport)
{
	struct ct_tuple t = tuple_of(o);
	struct ct_nat_binding b;

	assert_true(ct_nat_binding_init(&b, &t));
	if (rsrc) {
		addr(o->v, rsrc, (uint8_t *)&b.reply.src);
		b.reply.sport = rsport;
	}
	if (rdst) {
		addr(o->v, rdst, (uint8_t *)&b.reply.dst);
		if (o->proto == 1 || o->proto == 58)
			b.reply.sport = rdport;
		else
			b.reply.dport = rdport;
	}
	ct_nat_binding_from_tuples(&b, &b.orig, &b.reply);
	return b;
}

struct out {
	uint8_t f[4096];
	uint32_t len;
};

/* parse @ip in a frame, translate, return the verdict; the frame in @o */
static enum ct_nat_verdict xlate(struct out *o, const uint8_t *ip, uint32_t len, int v,
				 const struct ct_nat_binding *b, enum ct_dir dir,
				 unsigned flags, struct ct_nat_xlate_info *info)
{
	struct ct_packet pkt;

	o->len = frame(o->f, ip, len, v);
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_ETHERNET, o->f, o->len, o->len, 0),
			 CT_PKT_TRACKABLE);
	return ct_nat_translate(o->f, o->len, &pkt, b, dir, flags, info);
}

/* translated frames, for the tshark case */
static struct out *kept;
static unsigned nkept;

static void keep(const struct out *o)
{
	if (!kept)
		kept = calloc(256, sizeof(*kept));
	if (kept && nkept < 256)
		kept[nkept++] = *o;
}

/* @in translated with @b in @dir must equal @want, built from scratch */
static void expect_xlate(const struct spec *in, const struct spec *want,
			 const struct ct_nat_binding *b, enum ct_dir dir)
{
	uint8_t ip[2048], wip[2048];
	uint32_t n = build(ip, in), wn = build(wip, want);
	struct out o, w;

	assert_int_equal(xlate(&o, ip, n, in->v, b, dir, 0, NULL), CT_NAT_V_OK);
	w.len = frame(w.f, wip, wn, want->v);
	assert_int_equal(o.len, w.len);
	assert_memory_equal(o.f, w.f, w.len);
	keep(&o);
}

/* ---- the cases -------------------------------------------------------- */

#define C4 "192.168.1.2"
#define S4 "198.51.100.1"
#define N4 "203.0.113.7"
#define B4 "10.1.1.1"
#define C6 "fd00:1::2"
#define S6 "2001:db8:5::1"
#define N6 "2001:db8:7::7"
#define B6 "fd00:b::1"

static void test_snat_rewrites_both_directions_tcp_udp_v4_v6(void **state)
{
	static const uint8_t protos[] = { 6, 17, 136, 132 };

	(void)state;
	for (int v = 4; v <= 6; v += 2)
		for (unsigned i = 0; i < sizeof(protos); i++) {
			struct spec o = { .v = v, .proto = protos[i], .src = v == 4 ? C4 : C6,
					  .dst = v == 4 ? S4 : S6, .sport = 40000, .dport = 80,
					  .payload = 33, .fill = 7 };
			struct spec ow = o, r, rw;
			const char *n = v == 4 ? N4 : N6;
			struct ct_nat_binding b = binding(&o, NULL, 0, n, 61000);

			assert_int_equal(b.status, CT_NAT_S_SRC | CT_NAT_S_DONE_MASK);
			ow.src = n;
			ow.sport = 61000;
			expect_xlate(&o, &ow, &b, CT_DIR_ORIGINAL);
			/* the reply, addressed to the NAT, goes back to the client */
			r = o;
			r.src = o.dst;
			r.sport = 80;
			r.dst = n;
			r.dport = 61000;
			r.fill = 99;
			rw = r;
			rw.dst = o.src;
			rw.dport = 40000;
			expect_xlate(&r, &rw, &b, CT_DIR_REPLY);
		}
}

static void test_dnat_and_both_on_one_connection(void **state)
{
	(void)state;
	for (int v = 4; v <= 6; v += 2) {
		struct spec o = { .v = v, .proto = 6, .src = v == 4 ? C4 : C6,
				  .dst = v == 4 ? S4 : S6, .sport = 40000, .dport = 80,
				  .payload = 10 };
		const char *bk = v == 4 ? B4 : B6, *n = v == 4 ? N4 : N6;
		struct ct_nat_binding d = binding(&o, bk, 8080, NULL, 0);
		struct ct_nat_binding sd = binding(&o, bk, 8080, n, 50000);
		struct spec ow = o, r, rw;

		assert_int_equal(d.status, CT_NAT_S_DST | CT_NAT_S_DONE_MASK);
		ow.dst = bk;
		ow.dport = 8080;
		expect_xlate(&o, &ow, &d, CT_DIR_ORIGINAL);
		r = o;
		r.src = bk;
		r.sport = 8080;
		r.dst = o.src;
		r.dport = 40000;
		rw = r;
		rw.src = o.dst;
		rw.sport = 80;
		expect_xlate(&r, &rw, &d, CT_DIR_REPLY);

		assert_int_equal(sd.status, CT_NAT_S_MASK | CT_NAT_S_DONE_MASK);
		ow.src = n;
		ow.sport = 50000;
		expect_xlate(&o, &ow, &sd, CT_DIR_ORIGINAL);
		r.dst = n;
		r.dport = 50000;
		rw = r;
		rw.src = o.dst;
		rw.sport = 80;
		rw.dst = o.src;
		rw.dport = 40000;
		expect_xlate(&r, &rw, &sd, CT_DIR_REPLY);
	}
}

static void test_zero_udp_checksum_stays_zero_in_both_families(void **state)
{
	(void)state;
	for (int v = 4; v <= 6; v += 2) {
		struct spec o = { .v = v, .proto = 17, .src = v == 4 ? C4 : C6,
				  .dst = v == 4 ? S4 : S6, .sport = 40000, .dport = 53,
				  .payload = 20, .udp_nocsum = true };
		struct spec ow = o;
		struct ct_nat_binding b = binding(&o, NULL, 0, v == 4 ? N4 : N6, 1234);
		uint8_t ip[256];
		struct out out;
		uint32_t n = build(ip, &o);

		ow.src = v == 4 ? N4 : N6;
		ow.sport = 1234;
		expect_xlate(&o, &ow, &b, CT_DIR_ORIGINAL);
		assert_int_equal(xlate(&out, ip, n, v, &b, CT_DIR_ORIGINAL, 0, NULL), CT_NAT_V_OK);
		assert_int_equal(get16(out.f + 14 + (v == 4 ? 20 : 40) + 6), 0);
	}
}

/* a UDP checksum that comes out 0 is written 0xffff (CSUM_MANGLED_0): the
 * payload's first word is chosen so that the translated packet sums to
 * all ones */
static void test_udp_checksum_that_becomes_zero_is_written_ffff(void **state)
{
	struct spec o = { .v = 4, .proto = 17, .src = C4, .dst = S4, .sport = 40000,
			  .dport = 53, .payload = 20, .word = 0 };
	struct spec ow = o;
	struct ct_nat_binding b = binding(&o, NULL, 0, N4, 1234);
	uint8_t wip[256];
	uint32_t wn, s;
	uint16_t c;

	(void)state;
	ow.src = N4;
	ow.sport = 1234;
	/* the translated packet's checksum with word 0, then the word that
	 * makes its full checksum 0 */
	wn = build(wip, &ow);
	c = get16(wip + 20 + 6);
	s = (uint16_t)~c; /* the sum over the packet with word 0 */
	ow.word = (uint16_t)~(uint16_t)s;   /* sum + word = 0xffff */
	o.word = ow.word;
	wn = build(wip, &ow);
	(void)wn;
	assert_int_equal(get16(wip + 20 + 6), 0xffff);
	expect_xlate(&o, &ow, &b, CT_DIR_ORIGINAL);
}

static void test_icmp_echo_ids_v4_v6(void **state)
{
	(void)state;
	for (int v = 4; v <= 6; v += 2) {
		struct spec o = { .v = v, .proto = v == 4 ? 1 : 58, .src = v == 4 ? C4 : C6,
				  .dst = v == 4 ? S4 : S6, .sport = 777,
				  .icmp_type = v == 4 ? 8 : 128, .payload = 56 };
		struct spec ow = o, r, rw;
		const char *n = v == 4 ? N4 : N6;
		struct ct_nat_binding b = binding(&o, NULL, 0, n, 4242);

		ow.src = n;
		ow.sport = 4242;
		expect_xlate(&o, &ow, &b, CT_DIR_ORIGINAL);
		r = o;
		r.src = o.dst;
		r.dst = n;
		r.sport = 4242;
		r.icmp_type = v == 4 ? 0 : 129;
		rw = r;
		rw.dst = o.src;
		rw.sport = 777;
		expect_xlate(&r, &rw, &b, CT_DIR_REPLY);
	}
}

static void test_ipv6_extension_headers_are_walked(void **state)
{
	struct spec o = { .v = 6, .proto = 17, .src = C6, .dst = S6, .sport = 40000,
			  .dport = 53, .payload = 9, .ext6 = true };
	struct spec ow = o;
	struct ct_nat_binding b = binding(&o, NULL, 0, N6, 1);

	(void)state;
	ow.src = N6;
	ow.sport = 1;
	expect_xlate(&o, &ow, &b, CT_DIR_ORIGINAL);
}

/* PPTP's GRE: a DST manipulation writes the call id; other versions of
 * GRE cannot be rewritten */
static void test_gre_call_id_and_unknown_versions(void **state)
{
	struct spec o = { .v = 4, .proto = 47, .src = C4, .dst = S4, .sport = 0x1111,
			  .dport = 0x2222, .gre_ver = 1, .payload = 4 };
	struct spec ow = o;
	/* the reply's source key (the call id the original direction's
	 * packets must carry) made different, to see it written */
	struct ct_nat_binding b = binding(&o, B4, 0x3333, NULL, 0);
	uint8_t ip[256], before[4096];
	struct out out;
	uint32_t n;

	(void)state;
	ow.dst = B4;
	ow.dport = 0x3333;
	expect_xlate(&o, &ow, &b, CT_DIR_ORIGINAL);
	o.gre_ver = 2;
	n = build(ip, &o);
	out.len = frame(out.f, ip, n, 4);
	memcpy(before, out.f, out.len);
	assert_int_equal(xlate(&out, ip, n, 4, &b, CT_DIR_ORIGINAL, 0, NULL),
			 CT_NAT_V_GRE_VERSION);
	assert_memory_equal(out.f, before, out.len);
}

/* CT_NAT_XLATE_FORWARD: TTL - 1 between the two manipulations, the IPv4
 * header checksum as a full recomputation gives it; TTL 1 is dropped */
static void test_forward_decrements_ttl_and_refuses_ttl_1(void **state)
{
	(void)state;
	for (int v = 4; v <= 6; v += 2) {
		struct spec o = { .v = v, .proto = 6, .src = v == 4 ? C4 : C6,
				  .dst = v == 4 ? S4 : S6, .sport = 40000, .dport = 80,
				  .ttl = 64, .payload = 3 };
		struct spec ow = o;
		const char *n = v == 4 ? N4 : N6, *bk = v == 4 ? B4 : B6;
		struct ct_nat_binding b = binding(&o, bk, 81, n, 61000);
		uint8_t ip[256], wip[256];
		uint32_t len, wn;
		struct out out, w;

		ow.src = n;
		ow.sport = 61000;
		ow.dst = bk;
		ow.dport = 81;
		ow.ttl = 63;
		len = build(ip, &o);
		wn = build(wip, &ow);
		assert_int_equal(xlate(&out, ip, len, v, &b, CT_DIR_ORIGINAL,
				       CT_NAT_XLATE_FORWARD, NULL), CT_NAT_V_OK);
		w.len = frame(w.f, wip, wn, v);
		assert_memory_equal(out.f, w.f, w.len);
		keep(&out);

		o.ttl = 1;
		len = build(ip, &o);
		assert_int_equal(xlate(&out, ip, len, v, &b, CT_DIR_ORIGINAL,
				       CT_NAT_XLATE_FORWARD, NULL), CT_NAT_V_TTL_EXCEEDED);
	}
}

/* a null binding (both DONE, no NAT bit) changes nothing */
static void test_null_binding_leaves_the_packet_alone(void **state)
{
	struct spec o = { .v = 4, .proto = 6, .src = C4, .dst = S4, .sport = 1, .dport = 2 };
	struct ct_nat_binding b = binding(&o, NULL, 0, NULL, 0);
	struct ct_nat_xlate_info info;
	uint8_t ip[256];
	uint32_t n = build(ip, &o);
	struct out out;

	(void)state;
	assert_int_equal(b.status, CT_NAT_S_DONE_MASK);
	assert_int_equal(xlate(&out, ip, n, 4, &b, CT_DIR_ORIGINAL, 0, &info), CT_NAT_V_OK);
	assert_memory_equal(out.f + 14, ip, n);
	assert_int_equal(info.manips, 0);
}

/* ---- ICMP errors ------------------------------------------------------ */

/* The start (@qlen bytes) of the packet @s as it went out. */
static uint32_t quote_of(uint8_t *q, const struct spec *s, uint32_t qlen)
{
	uint8_t full[2048];
	uint32_t n = build(full, s);

	if (qlen > n)
		qlen = n;
	memcpy(q, full, qlen);
	return qlen;
}

/* An error from the server about a packet of a source-NATed connection:
 * it arrives addressed to the NAT, quoting NAT -> server; it leaves
 * addressed to the client, quoting client -> server. */
static void expect_error(int v, uint8_t proto, uint8_t type, uint8_t code, uint32_t qlen,
			 bool dnat_too)
{
	const char *c = v == 4 ? C4 : C6, *s = v == 4 ? S4 : S6, *n = v == 4 ? N4 : N6;
	const char *bk = v == 4 ? B4 : B6;
	struct spec o = { .v = v, .proto = proto, .src = c, .dst = s, .sport = 40000,
			  .dport = proto == 1 || proto == 58 ? 0 : 80,
			  .payload = qlen > 400 ? 1400 : 100,
			  .icmp_type = v == 4 ? 8 : 128, .ttl = 63 };
	struct ct_nat_binding b;
	struct spec went, came;
	uint8_t q[2048], wq[2048], ip[4096], wip[4096];
	uint32_t ql, wql, len, wlen;
	struct ct_nat_xlate_info info;
	struct out out, w;
	const char *from = dnat_too ? bk : s;

	if (proto == 1 || proto == 58)
		o.sport = 777;
	went = came = o;
	b = dnat_too ? binding(&o, bk, proto == 1 || proto == 58 ? 777 : 8080, n, 61000)
		     : binding(&o, NULL, 0, n, 61000);
	/* what the router sent: NAT (and backend) addresses */
	went.src = n;
	went.sport = 61000;
	if (dnat_too) {
		went.dst = bk;
		if (proto != 1 && proto != 58)
			went.dport = 8080;
	}
	ql = quote_of(q, &went, qlen);
	len = build_error(ip, v, from, n, type, code, 1280, q, ql);
	/* what it must become: the client's own packet, from the server */
	wql = quote_of(wq, &came, qlen);
	wlen = build_error(wip, v, s, c, type, code, 1280, wq, wql);

	assert_int_equal(xlate(&out, ip, len, v, &b, CT_DIR_REPLY, 0, &info), CT_NAT_V_OK);
	assert_true(info.icmp_error);
	assert_false(info.csum_incremental);
	w.len = frame(w.f, wip, wlen, v);
	assert_int_equal(out.len, w.len);
	assert_memory_equal(out.f, w.f, w.len);
	keep(&out);
}

static void test_icmp_errors_translate_the_quoted_packet_back(void **state)
{
	(void)state;
	/* port unreachable about UDP, a whole quote and one of 8 bytes */
	expect_error(4, 17, 3, 3, 28 + 100, false);
	expect_error(4, 17, 3, 3, 28, false);
	/* frag needed about TCP, with 20 bytes of TCP (checksum updated) and
	 * with only 8 (ports only) */
	expect_error(4, 6, 3, 4, 40, false);
	expect_error(4, 6, 3, 4, 28, false);
	/* time exceeded about an echo */
	expect_error(4, 1, 11, 0, 28 + 56, false);
	/* SCTP: the quoted CRC is recomputed over what is quoted */
	/* both manipulations */
	expect_error(4, 17, 3, 3, 28 + 100, true);
	expect_error(4, 6, 3, 3, 40, true);
	/* IPv6: packet too big about TCP, port unreachable about UDP, time
	 * exceeded about an echo */
	expect_error(6, 6, 2, 0, 40 + 60, false);
	expect_error(6, 17, 1, 4, 48, false);
	expect_error(6, 58, 3, 0, 48 + 56, false);
	expect_error(6, 17, 1, 4, 48 + 100, true);
}

/* ICMPv6 lengths whose pseudo-header words carry out of 32 bits when
 * added together (the low byte of the length plus 58 >= 256): the
 * checksum check and the recomputation must add them one by one (the
 * kernel oracle found this: 1240-byte packet-too-big messages) */
static void test_icmpv6_error_lengths_that_carry(void **state)
{
	(void)state;
	for (uint32_t icmp_len = 198 + 8; icmp_len <= 255 + 8; icmp_len += 19)
		expect_error(6, 17, 2, 0, icmp_len - 8, false);
	expect_error(6, 17, 2, 0, 1240 - 8, false);
}

/* An SCTP quote: the kernel recomputes the inner CRC over the quoted
 * remainder, so the expected quote is built and then its CRC computed
 * over exactly those bytes */
static void test_icmp_error_quoting_sctp_recomputes_its_crc_over_the_quote(void **state)
{
	struct spec o = { .v = 4, .proto = 132, .src = C4, .dst = S4, .sport = 40000,
			  .dport = 80, .payload = 0 };
	struct ct_nat_binding b = binding(&o, NULL, 0, N4, 61000);
	struct spec went = o;
	uint8_t q[256], wq[256], ip[512], wip[512];
	uint32_t ql, wql, len, wlen, crc;
	struct out out, w;

	(void)state;
	went.src = N4;
	went.sport = 61000;
	ql = quote_of(q, &went, 20 + 20);
	len = build_error(ip, 4, S4, N4, 3, 3, 0, q, ql);
	wql = quote_of(wq, &o, 20 + 20);
	memset(wq + 20 + 8, 0, 4);
	crc = ref_crc32c(wq + 20, wql - 20);
	wq[28] = (uint8_t)crc;
	wq[29] = (uint8_t)(crc >> 8);
	wq[30] = (uint8_t)(crc >> 16);
	wq[31] = (uint8_t)(crc >> 24);
	wlen = build_error(wip, 4, S4, C4, 3, 3, 0, wq, wql);
	assert_int_equal(xlate(&out, ip, len, 4, &b, CT_DIR_REPLY, 0, NULL), CT_NAT_V_OK);
	w.len = frame(w.f, wip, wlen, 4);
	assert_memory_equal(out.f, w.f, w.len);
}

/* an error travelling in the original direction (from the client, about
 * a reply): its quote gets the reply tuple, its source the NAT address */
static void test_icmp_error_in_the_original_direction(void **state)
{
	struct spec o = { .v = 4, .proto = 17, .src = C4, .dst = S4, .sport = 40000,
			  .dport = 53, .payload = 30 };
	struct ct_nat_binding b = binding(&o, NULL, 0, N4, 61000);
	struct spec rep = { .v = 4, .proto = 17, .src = S4, .dst = C4, .sport = 53,
			    .dport = 40000, .payload = 30 };
	struct spec repn = rep;
	uint8_t q[256], wq[256], ip[512], wip[512];
	uint32_t ql, wql, len, wlen;
	struct out out, w;

	(void)state;
	repn.dst = N4;
	repn.dport = 61000;
	ql = quote_of(q, &rep, 28 + 30);
	len = build_error(ip, 4, C4, S4, 3, 3, 0, q, ql);
	wql = quote_of(wq, &repn, 28 + 30);
	wlen = build_error(wip, 4, N4, S4, 3, 3, 0, wq, wql);
	assert_int_equal(xlate(&out, ip, len, 4, &b, CT_DIR_ORIGINAL, 0, NULL), CT_NAT_V_OK);
	w.len = frame(w.f, wip, wlen, 4);
	assert_memory_equal(out.f, w.f, w.len);
	keep(&out);
}

/* ---- what cannot be translated, and nothing written ------------------ */

static void expect_drop(const uint8_t *ip, uint32_t len, int v, const struct ct_nat_binding *b,
			enum ct_dir dir, unsigned flags, uint32_t cut, enum ct_nat_verdict want)
{
	struct ct_packet pkt;
	struct out o;
	uint8_t before[4096];

	o.len = frame(o.f, ip, len, v);
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_ETHERNET, o.f, o.len, o.len, 0),
			 CT_PKT_TRACKABLE);
	memcpy(before, o.f, o.len);
	assert_int_equal(ct_nat_translate(o.f, o.len - cut, &pkt, b, dir, flags, NULL), want);
	assert_memory_equal(o.f, before, o.len);
}

static void test_untranslatable_packets_get_a_reason_and_stay_untouched(void **state)
{
	struct spec o = { .v = 4, .proto = 6, .src = C4, .dst = S4, .sport = 40000,
			  .dport = 80, .payload = 0 };
	struct ct_nat_binding b = binding(&o, NULL, 0, N4, 61000);
	struct spec went = o;
	uint8_t q[256], ip[512];
	uint32_t ql, len;

	(void)state;
	/* the caller gives less frame than was parsed: the TCP header is cut */
	len = build(ip, &o);
	expect_drop(ip, len, 4, &b, CT_DIR_ORIGINAL, 0, 10, CT_NAT_V_TRUNCATED);

	went.src = N4;
	went.sport = 61000;
	/* a quote of 4 bytes of TCP: conntrack has its ports, NAT wants 8 */
	ql = quote_of(q, &went, 24);
	len = build_error(ip, 4, S4, N4, 3, 3, 0, q, ql);
	expect_drop(ip, len, 4, &b, CT_DIR_REPLY, 0, 0, CT_NAT_V_ICMP_INNER_TRUNCATED);
	/* a wrong ICMP checksum */
	ql = quote_of(q, &went, 40);
	len = build_error(ip, 4, S4, N4, 3, 3, 0, q, ql);
	ip[22] ^= 0x55;
	expect_drop(ip, len, 4, &b, CT_DIR_REPLY, 0, 0, CT_NAT_V_ICMP_BAD_CSUM);
	/* a quoted IPv4 header claiming 16 bytes: its "ports" would be its
	 * own first bytes */
	ql = quote_of(q, &went, 40);
	q[0] = 0x44;
	len = build_error(ip, 4, S4, N4, 3, 3, 0, q, ql);
	expect_drop(ip, len, 4, &b, CT_DIR_REPLY, 0, 0, CT_NAT_V_ICMP_INNER_BAD);
	ql = quote_of(q, &went, 40);
	/* a redirect for a NATed connection */
	len = build_error(ip, 4, S4, N4, 5, 1, 0, q, ql);
	expect_drop(ip, len, 4, &b, CT_DIR_REPLY, 0, 0, CT_NAT_V_ICMP_REDIRECT);
}

static void test_fragments_and_other_packets_are_refused(void **state)
{
	struct spec o = { .v = 4, .proto = 17, .src = C4, .dst = S4, .sport = 40000,
			  .dport = 53, .payload = 40 };
	struct ct_nat_binding b = binding(&o, NULL, 0, N4, 61000);
	struct ct_packet pkt;
	uint8_t ip[512];
	struct out f;
	uint32_t len = build(ip, &o);

	(void)state;
	ip[6] = 0x20; /* MF */
	put16(ip + 10, 0);
	put16(ip + 10, ref_fold(ref_add(ip, 20, 0)));
	f.len = frame(f.f, ip, len, 4);
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_ETHERNET, f.f, f.len, f.len, 0),
			 CT_PKT_FRAGMENT);
	assert_int_equal(ct_nat_translate(f.f, f.len, &pkt, &b, CT_DIR_ORIGINAL, 0, NULL),
			 CT_NAT_V_FRAGMENT);
	/* ARP */
	memset(f.f, 0, 60);
	put16(f.f + 12, 0x0806);
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_ETHERNET, f.f, 60, 60, 0), CT_PKT_NOT_IP);
	assert_int_equal(ct_nat_translate(f.f, 60, &pkt, &b, CT_DIR_ORIGINAL, 0, NULL),
			 CT_NAT_V_NOT_TRACKABLE);
	/* a packet parsed from another buffer */
	len = build(ip, &o);
	f.len = frame(f.f, ip, len, 4);
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_ETHERNET, f.f, f.len, f.len, 0),
			 CT_PKT_TRACKABLE);
	{
		uint8_t other[64];

		assert_int_equal(ct_nat_translate(other, sizeof(other), &pkt, &b,
						  CT_DIR_ORIGINAL, 0, NULL), CT_NAT_V_NOT_IN_FRAME);
	}
	assert_string_equal(ct_nat_verdict_name(CT_NAT_V_ICMP_INNER_TRUNCATED),
			    "icmp_inner_truncated");
	assert_string_equal(ct_nat_verdict_name(CT_NAT_V_MAX), "unknown");
}

/* A snaplen-cut frame: the headers are rewritten correctly without the
 * payload (incremental checksums need only them). */
static void test_snaplen_cut_frames_translate_their_headers(void **state)
{
	struct spec o = { .v = 4, .proto = 6, .src = C4, .dst = S4, .sport = 40000,
			  .dport = 80, .payload = 1000 };
	struct spec ow = o;
	struct ct_nat_binding b = binding(&o, NULL, 0, N4, 61000);
	uint8_t ip[2048], wip[2048];
	uint32_t len = build(ip, &o), cap = 14 + 20 + 20 + 16;
	struct ct_packet pkt;
	struct out f, w;

	(void)state;
	ow.src = N4;
	ow.sport = 61000;
	build(wip, &ow);
	f.len = frame(f.f, ip, len, 4);
	w.len = frame(w.f, wip, len, 4);
	assert_int_equal(ct_parse_frame(&pkt, CT_LINK_ETHERNET, f.f, cap, f.len, 0),
			 CT_PKT_TRACKABLE);
	assert_true(pkt.truncated);
	assert_int_equal(ct_nat_translate(f.f, cap, &pkt, &b, CT_DIR_ORIGINAL, 0, NULL),
			 CT_NAT_V_OK);
	assert_memory_equal(f.f, w.f, cap);
}

/* translated, then translated back with the inverse binding: the
 * original bytes again */
static void test_translate_then_back_gives_the_original(void **state)
{
	static const uint8_t protos[] = { 6, 17, 136, 132, 1 };

	(void)state;
	for (int v = 4; v <= 6; v += 2)
		for (unsigned i = 0; i < sizeof(protos); i++) {
			struct spec o = { .v = v, .proto = protos[i], .src = v == 4 ? C4 : C6,
					  .dst = v == 4 ? S4 : S6, .sport = 40000, .dport = 80,
					  .payload = 77, .fill = 3, .icmp_type = v == 4 ? 8 : 128 };
			struct ct_nat_binding b, back;
			struct ct_packet pkt;
			uint8_t ip[512];
			uint32_t len;
			struct out f, orig;
			struct ct_tuple t;

			if (o.proto == 1 && v == 6)
				o.proto = 58;
			b = binding(&o, v == 4 ? B4 : B6, 8080, v == 4 ? N4 : N6, 3333);
			len = build(ip, &o);
			f.len = frame(f.f, ip, len, v);
			orig = f;
			assert_int_equal(ct_parse_frame(&pkt, CT_LINK_ETHERNET, f.f, f.len, f.len, 0),
					 CT_PKT_TRACKABLE);
			assert_int_equal(ct_nat_translate(f.f, f.len, &pkt, &b, CT_DIR_ORIGINAL, 0,
							  NULL), CT_NAT_V_OK);
			/* the inverse: orig = what went out, reply = the original's
			 * inverse */
			assert_int_equal(ct_parse_frame(&pkt, CT_LINK_ETHERNET, f.f, f.len, f.len, 0),
					 CT_PKT_TRACKABLE);
			assert_true(ct_tuple_invert(&b.orig, &t));
			ct_nat_binding_from_tuples(&back, &pkt.tuple, &t);
			assert_int_equal(ct_nat_translate(f.f, f.len, &pkt, &back, CT_DIR_ORIGINAL,
							  0, NULL), CT_NAT_V_OK);
			assert_memory_equal(f.f, orig.f, f.len);
		}
}

/* ---- tshark, on everything translated above ------------------------ */

static void test_tshark_finds_every_checksum_good(void **state)
{
	char path[] = "/tmp/ct-nat-xlate-XXXXXX";
	char cmd[1024];
	int fd;
	FILE *f, *p;
	unsigned bad = 0, good = 0, nocsum = 0;
	char line[256];

	(void)state;
	if (system("command -v tshark >/dev/null 2>&1") != 0)
		skip();
	assert_true(nkept > 20);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "wb");
	assert_non_null(f);
	{
		uint32_t hdr[6] = { 0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1 };

		assert_int_equal(fwrite(hdr, sizeof(hdr), 1, f), 1);
	}
	for (unsigned i = 0; i < nkept; i++) {
		uint32_t rec[4] = { i, 0, kept[i].len, kept[i].len };

		assert_int_equal(fwrite(rec, sizeof(rec), 1, f), 1);
		assert_int_equal(fwrite(kept[i].f, kept[i].len, 1, f), 1);
	}
	assert_int_equal(fclose(f), 0);
	/* status 0 is bad, 1 good (wireshark's PROTO_CHECKSUM_E_*); first
	 * occurrences: the outer header's; an ICMP error's quoted TCP/UDP
	 * checksum covers bytes the quote does not hold, so only the outer
	 * ones count there */
	snprintf(cmd, sizeof(cmd),
		 "tshark -n -r %s -o ip.check_checksum:TRUE -o tcp.check_checksum:TRUE "
		 "-o udp.check_checksum:TRUE -o udplite.check_checksum:TRUE "
		 "-o udplite.ignore_checksum_coverage:FALSE -o 'sctp.checksum:CRC 32c' "
		 "-E occurrence=f -T fields -e ip.checksum.status -e icmp.type -e icmpv6.type "
		 "-e icmp.checksum.status -e icmpv6.checksum.status -e tcp.checksum.status "
		 "-e udp.checksum.status -e sctp.checksum.status 2>/dev/null", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char *rest = line, *col[8];
		bool error;

		for (int i = 0; i < 8; i++) {
			col[i] = strsep(&rest, "\t\n");
			if (!col[i])
				col[i] = (char *)"";
		}
		error = (*col[1] && atoi(col[1]) != 0 && atoi(col[1]) != 8) ||
			(*col[2] && atoi(col[2]) < 128);
		for (int i = 0; i < 8; i++) {
			if (i == 1 || i == 2 || !*col[i] || (error && i >= 5))
				continue;
			/* UDP without a checksum: not present (3) over IPv4,
			 * "illegal" (4) over IPv6, where the kernel keeps it */
			if (i == 6 && (atoi(col[i]) == 3 || atoi(col[i]) == 4)) {
				nocsum++;
				continue;
			}
			if (atoi(col[i]) == 1) {
				good++;
			} else {
				bad++;
				print_message("# bad: column %d of a frame: '%s'\n", i, col[i]);
			}
		}
	}
	assert_int_equal(pclose(p), 0);
	if (bad)
		print_message("# kept %s for a look\n", path);
	else
		unlink(path);
	print_message("# tshark: %u checksums good, %u bad, %u UDP without one, in %u frames\n",
		      good, bad, nocsum, nkept);
	assert_int_equal(bad, 0);
	assert_int_equal(nocsum, 2);
	assert_true(good >= nkept);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snat_rewrites_both_directions_tcp_udp_v4_v6),
		cmocka_unit_test(test_dnat_and_both_on_one_connection),
		cmocka_unit_test(test_zero_udp_checksum_stays_zero_in_both_families),
		cmocka_unit_test(test_udp_checksum_that_becomes_zero_is_written_ffff),
		cmocka_unit_test(test_icmp_echo_ids_v4_v6),
		cmocka_unit_test(test_ipv6_extension_headers_are_walked),
		cmocka_unit_test(test_gre_call_id_and_unknown_versions),
		cmocka_unit_test(test_forward_decrements_ttl_and_refuses_ttl_1),
		cmocka_unit_test(test_null_binding_leaves_the_packet_alone),
		cmocka_unit_test(test_icmp_errors_translate_the_quoted_packet_back),
		cmocka_unit_test(test_icmpv6_error_lengths_that_carry),
		cmocka_unit_test(test_icmp_error_quoting_sctp_recomputes_its_crc_over_the_quote),
		cmocka_unit_test(test_icmp_error_in_the_original_direction),
		cmocka_unit_test(test_untranslatable_packets_get_a_reason_and_stay_untouched),
		cmocka_unit_test(test_fragments_and_other_packets_are_refused),
		cmocka_unit_test(test_snaplen_cut_frames_translate_their_headers),
		cmocka_unit_test(test_translate_then_back_gives_the_original),
		cmocka_unit_test(test_tshark_finds_every_checksum_good),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	free(kept);
	return rc;
}
