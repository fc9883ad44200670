/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sync_codec.c - the codec against what conntrackd 1.4.7 really
 * sends, and against what a hostile peer could send.
 *
 * The first group decodes messages captured from conntrackd
 * (conntrackd_wire.h says how) and checks them against `conntrack -L` of
 * the entries they came from; then encodes the decoded records again and
 * requires conntrackd's bytes exactly - which pins the attribute order,
 * sizes, padding and the little-endian ICMP id and NAT ports.  The second
 * group takes a good message and breaks it one way at a time; each break
 * has its own reason.  The last runs random records through encode and
 * decode.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ctrack/sync.h"
#include "conntrackd_wire.h"

static uint32_t ip4(const char *s)
{
	uint32_t a;

	assert_int_equal(inet_pton(AF_INET, s, &a), 1);
	return a;
}

static enum ct_sync_err parse(const uint8_t *m, size_t len, struct ct_sync_conn *c,
			      struct ct_sync_hdr *h)
{
	enum ct_sync_err e = ct_sync_msg_header(m, len, h);

	if (e != CT_SYNC_OK)
		return e;
	return ct_sync_msg_parse_conn(m, h, c, NULL);
}

/* Re-encode @c with @m's flags and sequence number: must be @m. */
static void assert_reencodes(const uint8_t *m, size_t len, const struct ct_sync_conn *c,
			     unsigned opts)
{
	struct ct_sync_hdr h;
	uint8_t buf[CT_SYNC_CONN_MSG_MAX];
	int n;

	assert_int_equal(ct_sync_msg_header(m, len, &h), CT_SYNC_OK);
	n = ct_sync_msg_conn(buf, sizeof(buf), h.type, h.flags, h.seq, c, opts);
	assert_int_equal(n, (int)len);
	assert_memory_equal(buf, m, len);
}

static void test_header_of_conntrackd_alive_hello(void **state)
{
	struct ct_sync_hdr h;

	(void)state;
	assert_int_equal(ct_sync_msg_header(cw_alive_hello, sizeof(cw_alive_hello), &h),
			 CT_SYNC_OK);
	assert_int_equal(h.version, 1);
	assert_int_equal(h.type, CT_SYNC_T_CTL);
	assert_int_equal(h.flags, CT_SYNC_F_ALIVE | CT_SYNC_F_HELLO);
	assert_int_equal(h.len, 8);
	assert_int_equal(h.seq, 0x6b0f3438);
	assert_int_equal(ct_sync_msg_class(&h), CT_SYNC_C_ALIVE);
}

static void test_conntrackd_tcp4_established_with_mark(void **state)
{
	struct ct_sync_conn c;
	struct ct_sync_hdr h;
	struct ct_tuple r;

	(void)state;
	assert_int_equal(parse(cw_tcp4, sizeof(cw_tcp4), &c, &h), CT_SYNC_OK);
	assert_int_equal(h.type, CT_SYNC_T_CT_NEW);
	assert_int_equal(h.flags, CT_SYNC_F_HELLO);
	assert_int_equal(c.orig.l3, CT_L3_IPV4);
	assert_int_equal(c.orig.l4, 6);
	assert_int_equal(c.orig.src.ip4, ip4("1.2.3.4"));
	assert_int_equal(c.orig.dst.ip4, ip4("5.6.7.8"));
	assert_int_equal(c.orig.sport, 1111);
	assert_int_equal(c.orig.dport, 80);
	assert_int_equal(c.orig.zone, 0);
	/* [ASSURED], seen a reply, confirmed */
	assert_int_equal(c.status, CT_ST_SEEN_REPLY | CT_ST_ASSURED | CT_ST_CONFIRMED);
	assert_true(c.has & CT_SYNC_HAS_STATE);
	assert_int_equal(c.l4state, 3);        /* ESTABLISHED */
	assert_int_equal(c.timeout_s, 300);
	assert_int_equal(c.mark, 6);
	assert_false(c.has & (CT_SYNC_HAS_ZONE | CT_SYNC_HAS_WSCALE | CT_SYNC_HAS_SNAT));
	assert_true(ct_sync_conn_reply(&c, &r));
	assert_int_equal(r.src.ip4, ip4("5.6.7.8"));
	assert_int_equal(r.sport, 80);
	assert_int_equal(r.dport, 1111);
	assert_reencodes(cw_tcp4, sizeof(cw_tcp4), &c, CT_SYNC_ENC_TIMEOUT);
}

static void test_conntrackd_udp4_in_zone_5(void **state)
{
	struct ct_sync_conn c;
	struct ct_sync_hdr h;

	(void)state;
	assert_int_equal(parse(cw_udp4z, sizeof(cw_udp4z), &c, &h), CT_SYNC_OK);
	assert_int_equal(c.orig.l4, 17);
	assert_int_equal(c.orig.sport, 53000);
	assert_int_equal(c.orig.dport, 53);
	assert_int_equal(c.orig.zone, 5);
	assert_true(c.has & CT_SYNC_HAS_ZONE);
	assert_int_equal(c.status, CT_ST_CONFIRMED);     /* [UNREPLIED] */
	assert_int_equal(c.timeout_s, 30);
	assert_false(c.has & CT_SYNC_HAS_STATE);
	assert_reencodes(cw_udp4z, sizeof(cw_udp4z), &c, CT_SYNC_ENC_TIMEOUT);
}

static void test_conntrackd_icmp_id_travels_little_endian(void **state)
{
	struct ct_sync_conn c;
	struct ct_sync_hdr h;
	struct ct_tuple r;

	(void)state;
	assert_int_equal(parse(cw_icmp4, sizeof(cw_icmp4), &c, &h), CT_SYNC_OK);
	assert_int_equal(c.orig.l4, 1);
	assert_int_equal(ct_tuple_icmp_type(&c.orig), 8);
	assert_int_equal(ct_tuple_icmp_code(&c.orig), 0);
	assert_int_equal(c.orig.sport, 4660);   /* conntrack -L: id=4660 */
	assert_true(ct_sync_conn_reply(&c, &r));
	assert_int_equal(ct_tuple_icmp_type(&r), 0);   /* echo reply */
	assert_reencodes(cw_icmp4, sizeof(cw_icmp4), &c, CT_SYNC_ENC_TIMEOUT);
}

static void test_conntrackd_tcp6_syn_sent(void **state)
{
	static const uint8_t a[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	static const uint8_t b[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };
	struct ct_sync_conn c;
	struct ct_sync_hdr h;

	(void)state;
	assert_int_equal(parse(cw_tcp6, sizeof(cw_tcp6), &c, &h), CT_SYNC_OK);
	assert_int_equal(c.orig.l3, CT_L3_IPV6);
	assert_memory_equal(c.orig.src.ip6, a, 16);
	assert_memory_equal(c.orig.dst.ip6, b, 16);
	assert_int_equal(c.orig.sport, 2222);
	assert_int_equal(c.orig.dport, 443);
	assert_int_equal(c.l4state, 1);        /* SYN_SENT */
	assert_int_equal(c.timeout_s, 100);
	assert_reencodes(cw_tcp6, sizeof(cw_tcp6), &c, CT_SYNC_ENC_TIMEOUT);
}

static void test_conntrackd_snat_port_travels_little_endian(void **state)
{
	struct ct_sync_conn c;
	struct ct_sync_hdr h;
	struct ct_tuple r;

	(void)state;
	assert_int_equal(parse(cw_snat4, sizeof(cw_snat4), &c, &h), CT_SYNC_OK);
	assert_true(c.has & CT_SYNC_HAS_SNAT);
	assert_true(c.has & CT_SYNC_HAS_SPAT);
	assert_false(c.has & (CT_SYNC_HAS_DNAT | CT_SYNC_HAS_DPAT));
	assert_int_equal(c.snat_addr.ip4, ip4("9.9.9.9"));
	assert_int_equal(c.snat_port, 7777);
	assert_true(c.has & CT_SYNC_HAS_WSCALE);  /* TCPWindowTracking On */
	/* conntrack -L: src=5.6.7.8 dst=9.9.9.9 sport=80 dport=7777 */
	assert_true(ct_sync_conn_reply(&c, &r));
	assert_int_equal(r.src.ip4, ip4("5.6.7.8"));
	assert_int_equal(r.dst.ip4, ip4("9.9.9.9"));
	assert_int_equal(r.sport, 80);
	assert_int_equal(r.dport, 7777);
	assert_reencodes(cw_snat4, sizeof(cw_snat4), &c,
			 CT_SYNC_ENC_TIMEOUT | CT_SYNC_ENC_WSCALE);
}

static void test_conntrackd_dnat(void **state)
{
	struct ct_sync_conn c;
	struct ct_sync_hdr h;
	struct ct_tuple r;

	(void)state;
	assert_int_equal(parse(cw_dnat4, sizeof(cw_dnat4), &c, &h), CT_SYNC_OK);
	assert_true(ct_sync_conn_reply(&c, &r));
	/* conntrack -L: src=8.8.8.8 dst=1.2.3.9 sport=5353 dport=1111 */
	assert_int_equal(r.src.ip4, ip4("8.8.8.8"));
	assert_int_equal(r.dst.ip4, ip4("1.2.3.9"));
	assert_int_equal(r.sport, 5353);
	assert_int_equal(r.dport, 1111);
	assert_reencodes(cw_dnat4, sizeof(cw_dnat4), &c, CT_SYNC_ENC_TIMEOUT);
}

/* From a ctrack connection: the record conntrackd would have built. */
static void test_record_from_conn_info_is_what_conntrackd_sends(void **state)
{
	struct ct_conn_info ci;
	struct ct_sync_conn c;
	uint8_t buf[CT_SYNC_CONN_MSG_MAX];
	int n;
	const ct_time_ns now = 1000ull * 1000000000ull;

	(void)state;
	memset(&ci, 0, sizeof(ci));
	ci.orig.l3 = CT_L3_IPV4;
	ci.orig.l4 = 6;
	ci.orig.src.ip4 = ip4("1.2.3.4");
	ci.orig.dst.ip4 = ip4("5.6.7.8");
	ci.orig.sport = 1111;
	ci.orig.dport = 80;
	assert_true(ct_tuple_invert(&ci.orig, &ci.reply));
	ci.status = CT_ST_SEEN_REPLY | CT_ST_ASSURED | CT_ST_CONFIRMED;
	ci.mark = 6;
	ci.l4state = 3;
	ci.expires = now + 300ull * 1000000000ull + 999999999ull;   /* floor: 300 */
	ct_sync_conn_from_info(&c, &ci, now);
	/* conntrackd's message without the kernel's zero SYNPROXY: */
	n = ct_sync_msg_conn(buf, sizeof(buf), CT_SYNC_T_CT_NEW, CT_SYNC_F_HELLO,
			     0x6b0f3439, &c, CT_SYNC_ENC_TIMEOUT);
	assert_int_equal(n, (int)sizeof(cw_tcp4) - 16);
	assert_memory_equal(buf, cw_tcp4, 2);
	assert_int_equal(buf[2], 0);
	assert_int_equal(buf[3], sizeof(cw_tcp4) - 16);
	assert_memory_equal(buf + 4, cw_tcp4 + 4, (size_t)n - 4);
}

static void test_record_from_natted_conn_info(void **state)
{
	struct ct_conn_info ci;
	struct ct_sync_conn c;
	struct ct_tuple r;

	(void)state;
	memset(&ci, 0, sizeof(ci));
	ci.orig.l3 = CT_L3_IPV4;
	ci.orig.l4 = 6;
	ci.orig.src.ip4 = ip4("10.0.0.2");
	ci.orig.dst.ip4 = ip4("192.0.2.1");
	ci.orig.sport = 40000;
	ci.orig.dport = 443;
	ci.reply = ci.orig;
	ci.reply.src.ip4 = ip4("192.0.2.1");
	ci.reply.dst.ip4 = ip4("198.51.100.7");
	ci.reply.sport = 443;
	ci.reply.dport = 61000;
	ci.status = CT_ST_CONFIRMED | (1u << 4) | (1u << 7);   /* SRC_NAT(_DONE) */
	ct_sync_conn_from_info(&c, &ci, 0);
	assert_true(c.has & CT_SYNC_HAS_SNAT);
	assert_true(c.has & CT_SYNC_HAS_SPAT);
	assert_false(c.has & (CT_SYNC_HAS_DNAT | CT_SYNC_HAS_DPAT));
	assert_true(ct_sync_conn_reply(&c, &r));
	assert_memory_equal(&r, &ci.reply, sizeof(r));
	/* without SRC_NAT_DONE the difference is not NAT: nothing sent */
	ci.status = CT_ST_CONFIRMED;
	ct_sync_conn_from_info(&c, &ci, 0);
	assert_false(c.has & (CT_SYNC_HAS_SNAT | CT_SYNC_HAS_SPAT));
}

/* The window scales ctnetlink shows (ct_conn_info.tcp) go out as
 * conntrackd's TCP_WSCALE attributes, with TCPWindowTracking only. */
static void test_record_from_conn_info_carries_window_scales(void **state)
{
	struct ct_conn_info ci;
	struct ct_sync_conn c, back;
	struct ct_sync_hdr h;
	uint8_t buf[CT_SYNC_CONN_MSG_MAX];
	int n;

	(void)state;
	memset(&ci, 0, sizeof(ci));
	ci.orig.l3 = CT_L3_IPV4;
	ci.orig.l4 = 6;
	ci.orig.src.ip4 = ip4("10.0.0.2");
	ci.orig.dst.ip4 = ip4("192.0.2.1");
	ci.orig.sport = 40000;
	ci.orig.dport = 443;
	assert_true(ct_tuple_invert(&ci.orig, &ci.reply));
	ci.status = CT_ST_CONFIRMED | CT_ST_SEEN_REPLY | CT_ST_ASSURED;
	ci.l4state = 3;
	ci.tcp.wscale[0] = 7;
	ci.tcp.wscale[1] = 9;
	ct_sync_conn_from_info(&c, &ci, 0);
	assert_true(c.has & CT_SYNC_HAS_WSCALE);
	assert_int_equal(c.wscale[0], 7);
	assert_int_equal(c.wscale[1], 9);
	n = ct_sync_msg_conn(buf, sizeof(buf), CT_SYNC_T_CT_NEW, 0, 1, &c, CT_SYNC_ENC_WSCALE);
	assert_true(n > 0);
	assert_int_equal(parse(buf, (size_t)n, &back, &h), CT_SYNC_OK);
	assert_true(back.has & CT_SYNC_HAS_WSCALE);
	assert_int_equal(back.wscale[0], 7);
	assert_int_equal(back.wscale[1], 9);
	n = ct_sync_msg_conn(buf, sizeof(buf), CT_SYNC_T_CT_NEW, 0, 1, &c, 0);
	assert_int_equal(parse(buf, (size_t)n, &back, &h), CT_SYNC_OK);
	assert_false(back.has & CT_SYNC_HAS_WSCALE);
	/* not TCP: none */
	ci.orig.l4 = ci.reply.l4 = 17;
	ct_sync_conn_from_info(&c, &ci, 0);
	assert_false(c.has & CT_SYNC_HAS_WSCALE);
}

static void test_labels_bit_order(void **state)
{
	struct ct_sync_conn c, d;
	struct ct_sync_hdr h;
	uint8_t buf[CT_SYNC_CONN_MSG_MAX];
	int n;

	(void)state;
	assert_int_equal(parse(cw_tcp4, sizeof(cw_tcp4), &c, &h), CT_SYNC_OK);
	c.has |= CT_SYNC_HAS_LABELS;
	c.labels[0] = 0x08;          /* label 3 */
	c.labels[8] = 0x02;          /* label 65 */
	c.labels[12] = 0x10;         /* label 100 */
	n = ct_sync_msg_conn(buf, sizeof(buf), CT_SYNC_T_CT_UPD, 0, 1, &c, 0);
	assert_true(n > 0);
	/* conntrackd's ct_build_clabel: word i holds labels 32i..32i+31,
	 * bit b of the word = label 32i+b, words big-endian */
	{
		const uint8_t want[] = { 0x00, 0x14, 0x00, 0x1c,
					 0x00, 0x00, 0x00, 0x08,   /* label 3 */
					 0x00, 0x00, 0x00, 0x00,
					 0x00, 0x00, 0x00, 0x02,   /* 65 = 64 + 1 */
					 0x00, 0x00, 0x00, 0x10 }; /* 100 = 96 + 4 */
		const uint8_t *p = memmem(buf, (size_t)n, want, 4);

		assert_non_null(p);
		assert_memory_equal(p, want, sizeof(want));
	}
	assert_int_equal(parse(buf, (size_t)n, &d, &h), CT_SYNC_OK);
	assert_memory_equal(d.labels, c.labels, 16);
}

/* ------------------------------------------------------------------ */
/* hostile input: one defect at a time                                 */

static uint8_t m[CT_SYNC_CONN_MSG_MAX + 64];

static size_t fresh(void)
{
	memcpy(m, cw_tcp4, sizeof(cw_tcp4));
	return sizeof(cw_tcp4);
}

static void set_len(size_t len)
{
	m[2] = (uint8_t)(len >> 8);
	m[3] = (uint8_t)len;
}

static enum ct_sync_err parse_m(size_t len)
{
	struct ct_sync_conn c;
	struct ct_sync_hdr h;

	return parse(m, len, &c, &h);
}

static void test_header_defects(void **state)
{
	struct ct_sync_hdr h;
	size_t len;

	(void)state;
	len = fresh();
	assert_int_equal(ct_sync_msg_header(m, 7, &h), CT_SYNC_E_TRUNCATED);
	assert_int_equal(ct_sync_msg_header(m, 0, &h), CT_SYNC_E_TRUNCATED);
	set_len(0);
	assert_int_equal(ct_sync_msg_header(m, len, &h), CT_SYNC_E_BAD_SIZE);
	set_len(len + 1);   /* longer than what arrived */
	assert_int_equal(ct_sync_msg_header(m, len, &h), CT_SYNC_E_BAD_SIZE);
	set_len(7);
	assert_int_equal(ct_sync_msg_header(m, len, &h), CT_SYNC_E_BAD_SIZE);
	len = fresh();
	m[0] = 0x20;        /* version 2 */
	assert_int_equal(ct_sync_msg_header(m, len, &h), CT_SYNC_E_BAD_VERSION);
	m[0] = 0x00;        /* version 0 */
	assert_int_equal(ct_sync_msg_header(m, len, &h), CT_SYNC_E_BAD_VERSION);
	/* an ACK must carry from and to */
	memcpy(m, "\x1a\x08\x00\x08\x00\x00\x00\x01", 8);
	assert_int_equal(ct_sync_msg_header(m, 8, &h), CT_SYNC_E_BAD_SIZE);
	/* classes */
	memcpy(m, "\x1a\x00\x00\x08\x00\x00\x00\x01", 8);   /* CTL, no flag */
	assert_int_equal(ct_sync_msg_header(m, 8, &h), CT_SYNC_OK);
	assert_int_equal(ct_sync_msg_class(&h), CT_SYNC_C_BAD);
	memcpy(m, "\x17\x00\x00\x08\x00\x00\x00\x01", 8);   /* type 7 */
	assert_int_equal(ct_sync_msg_header(m, 8, &h), CT_SYNC_OK);
	assert_int_equal(ct_sync_msg_class(&h), CT_SYNC_C_BAD);
	memcpy(m, "\x10\x01\x00\x08\x00\x00\x00\x01", 8);   /* data + unused flag */
	assert_int_equal(ct_sync_msg_header(m, 8, &h), CT_SYNC_OK);
	assert_int_equal(ct_sync_msg_class(&h), CT_SYNC_C_BAD);
	memcpy(m, "\x10\x60\x00\x08\x00\x00\x00\x01", 8);   /* data + HELLO bits */
	assert_int_equal(ct_sync_msg_header(m, 8, &h), CT_SYNC_OK);
	assert_int_equal(ct_sync_msg_class(&h), CT_SYNC_C_DATA);
}

/* Offsets into cw_tcp4 of its attributes (8-byte header first). */
enum {
	AT_IPV4 = 8, AT_STATUS = 20, AT_L4 = 28, AT_PORT = 36, AT_STATE = 44,
	AT_TIMEOUT = 52, AT_MARK = 60, AT_SYNPROXY = 68,
};

static void test_tlv_defects(void **state)
{
	size_t len;

	(void)state;
	assert_int_equal(parse_m(fresh()), CT_SYNC_OK);

	/* a TLV longer than what is left of the message */
	len = fresh();
	m[AT_SYNPROXY + 1] = 0x11;
	assert_int_equal(parse_m(len), CT_SYNC_E_BAD_PAYLOAD);
	/* a TLV shorter than its own header */
	len = fresh();
	m[AT_MARK + 1] = 0x03;
	assert_int_equal(parse_m(len), CT_SYNC_E_BAD_PAYLOAD);
	/* the wrong size for its type (a 5-byte mark) */
	len = fresh();
	m[AT_MARK + 1] = 0x09;
	assert_int_equal(parse_m(len), CT_SYNC_E_BAD_PAYLOAD);
	/* an unknown attribute type */
	len = fresh();
	m[AT_MARK + 3] = 33;
	assert_int_equal(parse_m(len), CT_SYNC_E_UNKNOWN_ATTR);
	len = fresh();
	m[AT_MARK + 2] = 0x80;
	assert_int_equal(parse_m(len), CT_SYNC_E_UNKNOWN_ATTR);
	/* bytes left over after the last TLV */
	len = fresh();
	memset(m + len, 0, 4);
	set_len(len + 4);
	assert_int_equal(parse_m(len + 4), CT_SYNC_E_BAD_PAYLOAD);
	len = fresh();
	set_len(len - 2);    /* the last TLV cut */
	assert_int_equal(parse_m(len - 2), CT_SYNC_E_BAD_PAYLOAD);
	/* one attribute twice: the mark's place taken by a second timeout */
	len = fresh();
	m[AT_MARK + 3] = CT_SYNC_A_TIMEOUT;
	assert_int_equal(parse_m(len), CT_SYNC_E_DUP_ATTR);
	/* the message's length cuts a TLV */
	len = fresh();
	set_len(AT_SYNPROXY + 8);
	assert_int_equal(parse_m(AT_SYNPROXY + 8), CT_SYNC_E_BAD_PAYLOAD);
}

static void test_impossible_records(void **state)
{
	size_t len;

	(void)state;
	/* no address family: the IPv4 TLV turned into a master's */
	len = fresh();
	m[AT_IPV4 + 3] = CT_SYNC_A_MASTER_IPV4;
	assert_int_equal(parse_m(len), CT_SYNC_E_IMPOSSIBLE);
	/* no protocol: its place taken by an ICMP type */
	len = fresh();
	m[AT_L4 + 3] = CT_SYNC_A_ICMP_TYPE;
	assert_int_equal(parse_m(len), CT_SYNC_E_IMPOSSIBLE);
	/* a TCP state beyond the kernel's */
	len = fresh();
	m[AT_STATE + 4] = 10;
	assert_int_equal(parse_m(len), CT_SYNC_E_IMPOSSIBLE);
	m[AT_STATE + 4] = 9;   /* SYN_SENT2 is a state */
	assert_int_equal(parse_m(len), CT_SYNC_OK);
	/* TCP without ports (their TLV turned into a 4-byte SNAT address) */
	len = fresh();
	m[AT_PORT + 3] = CT_SYNC_A_SNAT_IPV4;
	assert_int_equal(parse_m(len), CT_SYNC_E_IMPOSSIBLE);
	/* a TCP state on a UDP entry */
	len = fresh();
	m[AT_L4 + 4] = 17;
	assert_int_equal(parse_m(len), CT_SYNC_E_IMPOSSIBLE);
	/* ports on ICMP */
	len = fresh();
	m[AT_L4 + 4] = 1;
	assert_int_equal(parse_m(len), CT_SYNC_E_IMPOSSIBLE);
	/* status bits the kernel has no meaning for */
	len = fresh();
	m[AT_STATUS + 5] = 0x01;
	assert_int_equal(parse_m(len), CT_SYNC_E_IMPOSSIBLE);
	/* an ICMP type that cannot start a connection (dest unreachable) */
	memcpy(m, cw_icmp4, sizeof(cw_icmp4));
	m[36 + 4] = 3;
	assert_int_equal(parse_m(sizeof(cw_icmp4)), CT_SYNC_E_IMPOSSIBLE);
	/* ICMP without its id */
	memcpy(m, cw_icmp4, sizeof(cw_icmp4));
	m[52 + 3] = CT_SYNC_A_SPAT_PORT;
	assert_int_equal(parse_m(sizeof(cw_icmp4)), CT_SYNC_E_IMPOSSIBLE);
	/* a window scale beyond 14 */
	memcpy(m, cw_snat4, sizeof(cw_snat4));
	m[52 + 4] = 15;
	assert_int_equal(parse_m(sizeof(cw_snat4)), CT_SYNC_E_IMPOSSIBLE);
	m[52 + 4] = 14;
	assert_int_equal(parse_m(sizeof(cw_snat4)), CT_SYNC_OK);
	/* only one of the pair of window scales */
	m[60 + 3] = CT_SYNC_A_DCCP_ROLE;
	assert_int_equal(parse_m(sizeof(cw_snat4)), CT_SYNC_E_IMPOSSIBLE);
}

static void test_variable_attributes(void **state)
{
	struct ct_sync_conn c, d;
	struct ct_sync_hdr h;
	uint8_t buf[CT_SYNC_CONN_MSG_MAX + 2048];
	int n;
	size_t at;

	(void)state;
	assert_int_equal(parse(cw_tcp4, sizeof(cw_tcp4), &c, &h), CT_SYNC_OK);
	c.has |= CT_SYNC_HAS_HELPER;
	strcpy(c.helper, "ftp");
	n = ct_sync_msg_conn(buf, sizeof(buf), 0, 0, 1, &c, 0);
	assert_int_equal(parse(buf, (size_t)n, &d, &h), CT_SYNC_OK);
	assert_string_equal(d.helper, "ftp");
	/* the helper name without its NUL */
	at = (size_t)((const uint8_t *)memmem(buf, (size_t)n, "ftp", 3) - buf);
	buf[at + 3] = 'x';
	assert_int_equal(parse(buf, (size_t)n, &d, &h), CT_SYNC_E_IMPOSSIBLE);

	/* labels of 4096 bits: the first 128 kept, the rest reported */
	{
		uint8_t big[8 + 4 + 512];
		bool cut;

		memset(big, 0, sizeof(big));
		memcpy(big, cw_tcp4, 8);
		big[3] = (uint8_t)(sizeof(big) & 0xff);
		big[2] = (uint8_t)(sizeof(big) >> 8);
		big[8] = (uint8_t)((4 + 512) >> 8);
		big[9] = (uint8_t)((4 + 512) & 0xff);
		big[11] = CT_SYNC_A_LABELS;
		big[12 + 3] = 0x01;               /* label 0 */
		big[12 + 511] = 0x80;             /* label 4095 */
		assert_int_equal(ct_sync_msg_header(big, sizeof(big), &h), CT_SYNC_OK);
		/* only labels: no family, so impossible - add nothing else but
		 * check the labels' own rules first */
		assert_int_equal(ct_sync_msg_parse_conn(big, &h, &d, &cut), CT_SYNC_E_IMPOSSIBLE);
		/* a labels TLV that is not whole words */
		big[9] = (uint8_t)((4 + 510) & 0xff);
		assert_int_equal(ct_sync_msg_parse_conn(big, &h, &d, &cut), CT_SYNC_E_BAD_PAYLOAD);
	}
	{
		/* a whole message: tcp4 plus 4096 bits of labels */
		uint8_t big[sizeof(cw_tcp4) + 4 + 512];
		bool cut = false;

		memcpy(big, cw_tcp4, sizeof(cw_tcp4));
		memset(big + sizeof(cw_tcp4), 0, 4 + 512);
		big[2] = (uint8_t)(sizeof(big) >> 8);
		big[3] = (uint8_t)(sizeof(big) & 0xff);
		big[sizeof(cw_tcp4)] = (uint8_t)((4 + 512) >> 8);
		big[sizeof(cw_tcp4) + 1] = (uint8_t)((4 + 512) & 0xff);
		big[sizeof(cw_tcp4) + 3] = CT_SYNC_A_LABELS;
		big[sizeof(cw_tcp4) + 4 + 3] = 0x01;     /* label 0 */
		big[sizeof(cw_tcp4) + 4 + 511] = 0x80;   /* label 4095 */
		assert_int_equal(ct_sync_msg_header(big, sizeof(big), &h), CT_SYNC_OK);
		assert_int_equal(ct_sync_msg_parse_conn(big, &h, &d, &cut), CT_SYNC_OK);
		assert_true(cut);
		assert_int_equal(d.labels[0], 0x01);
		for (unsigned i = 1; i < 16; i++)
			assert_int_equal(d.labels[i], 0);
	}
}

static void test_encoder_limits(void **state)
{
	struct ct_sync_conn c;
	uint8_t buf[CT_SYNC_CONN_MSG_MAX];

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_int_equal(ct_sync_msg_conn(buf, sizeof(buf), 0, 0, 1, &c, 0), -EINVAL);
	c.orig.l3 = CT_L3_IPV6;
	c.orig.l4 = 6;
	assert_int_equal(ct_sync_msg_conn(buf, 20, 0, 0, 1, &c, 0), -ENOSPC);
	assert_int_equal(ct_sync_msg_ctl(buf, 15, CT_SYNC_F_ACK, 1, 2, 3), -ENOSPC);
	assert_int_equal(ct_sync_msg_ctl(buf, 16, CT_SYNC_F_ACK, 1, 2, 3), 16);
	assert_int_equal(ct_sync_msg_ctl(buf, 8, CT_SYNC_F_ALIVE, 1, 0, 0), 8);
}

/* Random records, everything set that the protocol carries. */
static uint64_t rs = 88172645463325252ull;

static uint32_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (uint32_t)rs;
}

static void random_conn(struct ct_sync_conn *c)
{
	static const uint8_t l4s[] = { 6, 17, 132, 33, 1, 58, 136, 47, 50 };
	uint8_t l4 = l4s[rnd() % sizeof(l4s)];

	memset(c, 0, sizeof(*c));
	c->orig.l3 = (rnd() & 1) ? CT_L3_IPV4 : CT_L3_IPV6;
	if (l4 == 1 && c->orig.l3 == CT_L3_IPV6)
		l4 = 58;
	if (l4 == 58 && c->orig.l3 == CT_L3_IPV4)
		l4 = 1;
	c->orig.l4 = l4;
	for (unsigned i = 0; i < (c->orig.l3 == CT_L3_IPV4 ? 1u : 4u); i++) {
		c->orig.src.ip6w[i] = rnd();
		c->orig.dst.ip6w[i] = rnd();
	}
	c->has = CT_SYNC_HAS_STATUS | CT_SYNC_HAS_TIMEOUT | CT_SYNC_HAS_MARK;
	if (l4 == 1 || l4 == 58) {
		static const uint8_t q4[] = { 8, 13, 15, 17 }, q6[] = { 128, 139 };
		uint8_t type = l4 == 1 ? q4[rnd() % 4] : q6[rnd() % 2];

		c->orig.dport = (uint16_t)(type << 8);
		c->orig.sport = (uint16_t)rnd();
		c->has |= CT_SYNC_HAS_PORTS;
	} else if (l4 != 50) {
		c->orig.sport = (uint16_t)rnd();
		c->orig.dport = (uint16_t)rnd();
		c->has |= CT_SYNC_HAS_PORTS;
	}
	c->status = rnd() & 0xffff;
	c->timeout_s = rnd();
	c->mark = rnd();
	if (rnd() & 1) {
		c->orig.zone = (uint16_t)(rnd() | 1);
		c->has |= CT_SYNC_HAS_ZONE;
	}
	if (l4 == 6 || l4 == 132 || l4 == 33) {
		c->has |= CT_SYNC_HAS_STATE;
		c->l4state = (uint8_t)(rnd() % (l4 == 33 ? 8 : 10));
	}
	if (l4 == 6 && (rnd() & 1)) {
		c->has |= CT_SYNC_HAS_WSCALE;
		c->wscale[0] = (uint8_t)(rnd() % 15);
		c->wscale[1] = (uint8_t)(rnd() % 15);
	}
	if (l4 == 132) {
		c->has |= CT_SYNC_HAS_SCTP_VTAG;
		c->sctp_vtag[0] = rnd();
		c->sctp_vtag[1] = rnd();
	}
	if (l4 == 33) {
		c->has |= CT_SYNC_HAS_DCCP_ROLE;
		c->dccp_role = (uint8_t)(rnd() & 1);
	}
	if (rnd() & 1) {
		c->has |= CT_SYNC_HAS_LABELS;
		c->labels[rnd() % 16] = (uint8_t)(rnd() | 1);
	}
	if (rnd() & 1) {
		c->has |= CT_SYNC_HAS_SNAT | CT_SYNC_HAS_DNAT;
		for (unsigned i = 0; i < (c->orig.l3 == CT_L3_IPV4 ? 1u : 4u); i++) {
			c->snat_addr.ip6w[i] = rnd();
			c->dnat_addr.ip6w[i] = rnd();
		}
	}
	if (rnd() & 1) {
		c->has |= CT_SYNC_HAS_SPAT | CT_SYNC_HAS_DPAT;
		c->snat_port = (uint16_t)rnd();
		c->dnat_port = (uint16_t)rnd();
	}
	if (rnd() & 1) {
		c->has |= CT_SYNC_HAS_NATSEQ;
		for (unsigned i = 0; i < 6; i++)
			c->natseq[i] = rnd();
	}
	if (rnd() & 1) {
		c->has |= CT_SYNC_HAS_MASTER;
		c->master.l3 = c->orig.l3;
		c->master.l4 = 6;
		c->master.src = c->orig.dst;
		c->master.dst = c->orig.src;
		c->master.sport = (uint16_t)rnd();
		c->master.dport = 21;
		c->master.zone = c->orig.zone;
	}
	if (rnd() & 1) {
		c->has |= CT_SYNC_HAS_HELPER;
		strcpy(c->helper, (rnd() & 1) ? "ftp" : "netbios-ns");
	}
	if (rnd() & 1) {
		c->has |= CT_SYNC_HAS_SYNPROXY;
		for (unsigned i = 0; i < 3; i++)
			c->synproxy[i] = rnd();
	}
}

static void test_random_records_round_trip(void **state)
{
	(void)state;
	for (unsigned i = 0; i < 20000; i++) {
		struct ct_sync_conn c, d;
		struct ct_sync_hdr h;
		uint8_t buf[CT_SYNC_CONN_MSG_MAX];
		int n;
		uint8_t type = (uint8_t)(rnd() % 3);

		random_conn(&c);
		n = ct_sync_msg_conn(buf, sizeof(buf), type, 0, i,
				     &c, CT_SYNC_ENC_TIMEOUT | CT_SYNC_ENC_WSCALE);
		assert_true(n > 0 && n <= CT_SYNC_CONN_MSG_MAX && n % 4 == 0);
		assert_int_equal(ct_sync_msg_header(buf, (size_t)n, &h), CT_SYNC_OK);
		assert_int_equal(h.type, type);
		assert_int_equal(h.seq, i);
		assert_int_equal(ct_sync_msg_parse_conn(buf, &h, &d, NULL), CT_SYNC_OK);
		assert_memory_equal(&c, &d, sizeof(c));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_of_conntrackd_alive_hello),
		cmocka_unit_test(test_conntrackd_tcp4_established_with_mark),
		cmocka_unit_test(test_conntrackd_udp4_in_zone_5),
		cmocka_unit_test(test_conntrackd_icmp_id_travels_little_endian),
		cmocka_unit_test(test_conntrackd_tcp6_syn_sent),
		cmocka_unit_test(test_conntrackd_snat_port_travels_little_endian),
		cmocka_unit_test(test_conntrackd_dnat),
		cmocka_unit_test(test_record_from_conn_info_is_what_conntrackd_sends),
		cmocka_unit_test(test_record_from_natted_conn_info),
		cmocka_unit_test(test_record_from_conn_info_carries_window_scales),
		cmocka_unit_test(test_labels_bit_order),
		cmocka_unit_test(test_header_defects),
		cmocka_unit_test(test_tlv_defects),
		cmocka_unit_test(test_impossible_records),
		cmocka_unit_test(test_variable_attributes),
		cmocka_unit_test(test_encoder_limits),
		cmocka_unit_test(test_random_records_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
