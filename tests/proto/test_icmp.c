/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_icmp.c - ICMP / ICMPv6 query trackers and the error (RELATED) rules.
 *
 * Expectations come from Linux 6.18: nf_conntrack_proto_icmp.c
 * (invmap, valid_new in nf_conntrack_icmp_packet, the "type > NR_ICMP_TYPES"
 * check and icmp_is_err() in nf_conntrack_icmpv4_error, the outer daddr
 * check and IP_CT_RELATED(+IS_REPLY) in nf_conntrack_inet_error),
 * nf_conntrack_proto_icmpv6.c (invmap, valid_new checked while
 * unconfirmed, noct_valid_new -> IP_CT_UNTRACKED, "type >= 128 is not an
 * error") and nf_ct_invert_tuple in nf_conntrack_core.c.  Each test names
 * the rule it pins.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <netinet/in.h>

#include "proto/icmp.h"
#include "proto_test_util.h"

#define A 0x0a000001u   /* client */
#define B 0x0a000002u   /* server */
#define R 0x0a0000feu   /* a router on the path */
#define X 0x0a000063u   /* an unrelated host */


/* The reply tuple of an entry without NAT: the inverted original (a
 * static copy, for one call). */
static const struct ct_tuple *inv_of(const struct ct_tuple *t)
{
	static struct ct_tuple r;

	if (!ct_tuple_invert(t, &r))
		r = *t;
	return &r;
}

static struct ct_settings set;

static int setup(void **state)
{
	(void)state;
	ct_settings_default(&set);
	set.icmp_timeout = 29;    /* unlike each other and the defaults */
	set.icmpv6_timeout = 33;
	return 0;
}

static void icmp_tuple4(struct ct_tuple *t, uint32_t s, uint32_t d,
			uint8_t type, uint8_t code, uint16_t id)
{
	*t = ts_tuple4(IPPROTO_ICMP, s, d, id, (uint16_t)(type << 8 | code));
}

static void icmp_tuple6(struct ct_tuple *t, uint8_t s, uint8_t d,
			uint8_t type, uint8_t code, uint16_t id)
{
	*t = ts_tuple6(IPPROTO_ICMPV6, s, d, id, (uint16_t)(type << 8 | code));
}

static void icmp_packet_of(struct ct_packet *pkt, const struct ct_tuple *t)
{
	ts_packet_of(pkt, t);
	pkt->u.icmp.type = ct_tuple_icmp_type(t);
	pkt->u.icmp.code = ct_tuple_icmp_code(t);
	pkt->u.icmp.id = t->sport;
	pkt->u.icmp.is_error = ct_icmp_is_error(pkt);
}

/* Run one packet through the tracker of @t's protocol, creating an entry
 * for it; returns the verdict and frees the entry. */
static struct ct_proto_out new_entry_verdict(const struct ct_tuple *t)
{
	const struct ct_proto *p = ct_proto_find(t->l4);
	struct ct_conn *c = conn_new(p, t);
	struct ct_packet pkt;
	struct ct_proto_out o;

	icmp_packet_of(&pkt, t);
	o = track(p, c, &set, &pkt, CT_DIR_ORIGINAL, true, SEC(1));
	free(c);
	return o;
}

/* valid_new[] = { ECHO, TIMESTAMP, INFO_REQUEST, ADDRESS }: each may create
 * an entry, refreshed to nf_conntrack_icmp_timeout; ICMP never assures. */
static void test_icmp_request_types_create_entries(void **state)
{
	static const uint8_t req[] = { 8, 13, 15, 17 };
	(void)state;

	for (size_t i = 0; i < sizeof(req); i++) {
		struct ct_tuple t;
		struct ct_proto_out o;

		icmp_tuple4(&t, A, B, req[i], 0, 77);
		o = new_entry_verdict(&t);
		assert_int_equal(o.verdict, CT_PV_ACCEPT);
		assert_int_equal(o.timeout_ns, ct_secs(29));
		assert_false(o.set_assured);
		assert_int_equal(o.events, 0);
	}
}

/* A reply type has an invmap entry (the tuple inverts) but is not in
 * valid_new: "Can't create a new ICMP `conn' with this", -NF_ACCEPT. */
static void test_icmp_reply_types_cannot_create(void **state)
{
	static const uint8_t rep[] = { 0, 14, 16, 18 };
	(void)state;

	for (size_t i = 0; i < sizeof(rep); i++) {
		struct ct_tuple t;
		struct ct_proto_out o;

		icmp_tuple4(&t, B, A, rep[i], 0, 77);
		o = new_entry_verdict(&t);
		assert_int_equal(o.verdict, CT_PV_INVALID);
		assert_int_equal(o.reason, CT_PR_ICMP_UNTRACKED_TYPE);
	}
}

/* Types without invmap entry (router advertisement 9, solicitation 10,
 * unassigned 1): init_conntrack cannot invert them, so no entry; the
 * tracker refuses them too (not in valid_new). */
static void test_icmp_non_query_types_cannot_create(void **state)
{
	static const uint8_t other[] = { 1, 2, 6, 7, 9, 10 };
	(void)state;

	for (size_t i = 0; i < sizeof(other); i++) {
		struct ct_tuple t, inv;
		struct ct_proto_out o;

		icmp_tuple4(&t, A, B, other[i], 0, 1);
		assert_false(ct_tuple_invert(&t, &inv));
		o = new_entry_verdict(&t);
		assert_int_equal(o.verdict, CT_PV_INVALID);
		assert_int_equal(o.reason, CT_PR_ICMP_UNTRACKED_TYPE);
	}
}

/* Echo then echo reply: the reply finds the entry (its tuple is the
 * inverted one) and refreshes it to the same timeout; "Do not immediately
 * delete the connection after the first successful reply", so duplicates
 * of the reply are accepted as well. */
static void test_icmp_echo_reply_refreshes_and_keeps_entry(void **state)
{
	struct ct_tuple req, rep, inv;
	struct ct_packet pr;
	struct ct_conn *c;
	struct ct_proto_out o;
	(void)state;

	icmp_tuple4(&req, A, B, 8, 0, 4242);
	icmp_tuple4(&rep, B, A, 0, 0, 4242);
	assert_true(ct_tuple_invert(&req, &inv));
	assert_memory_equal(&inv, &rep, sizeof(rep));

	c = conn_new(&ct_proto_icmp, &req);
	icmp_packet_of(&pr, &req);
	o = track(&ct_proto_icmp, c, &set, &pr, CT_DIR_ORIGINAL, true, SEC(0));
	assert_int_equal(o.verdict, CT_PV_ACCEPT);

	icmp_packet_of(&pr, &rep);
	for (int i = 0; i < 3; i++) {
		o = track(&ct_proto_icmp, c, &set, &pr, CT_DIR_REPLY, false,
			  SEC(0.01 * (i + 1)));
		assert_int_equal(o.verdict, CT_PV_ACCEPT);
		assert_int_equal(o.timeout_ns, ct_secs(29));
		assert_false(o.set_assured);
	}
	free(c);
}

/* nf_conntrack_icmp_packet: "if (state->pf != NFPROTO_IPV4) return
 * -NF_ACCEPT" - ICMP (protocol 1) over IPv6 is refused; likewise ICMPv6
 * over IPv4 in nf_conntrack_icmpv6_packet. */
static void test_icmp_over_wrong_family_is_invalid(void **state)
{
	struct ct_tuple t;
	struct ct_proto_out o;
	(void)state;

	t = ts_tuple6(IPPROTO_ICMP, 1, 2, 5, 8 << 8);
	o = new_entry_verdict(&t);
	assert_int_equal(o.verdict, CT_PV_INVALID);

	t = ts_tuple4(IPPROTO_ICMPV6, A, B, 5, 128 << 8);
	o = new_entry_verdict(&t);
	assert_int_equal(o.verdict, CT_PV_INVALID);
}

/* nf_conntrack_icmpv4_error: "icmph->type > NR_ICMP_TYPES" (18) is
 * INVALID before anything else; 18 itself goes on. */
static void test_icmp_types_above_18_are_invalid(void **state)
{
	struct ct_tuple t;
	struct ct_packet pkt;
	uint8_t reason = 0;
	(void)state;

	for (unsigned type = 0; type < 256; type++) {
		int v;

		icmp_tuple4(&t, A, B, (uint8_t)type, 0, 1);
		icmp_packet_of(&pkt, &t);
		reason = 0;
		v = ct_proto_icmp.classify(&pkt, &set, &reason);
		if (type > 18) {
			assert_int_equal(v, CT_V_INVALID);
			assert_int_equal(reason, CT_PR_ICMP_BAD);
		} else {
			assert_int_equal(v, -1);
		}
	}
}

/* nf_conntrack_icmpv6_error: noct_valid_new (MLD query/report/done
 * 130-132, RS/RA/NS/NA 133-136, MLDv2 report 143) -> IP_CT_UNTRACKED. */
static void test_icmpv6_nd_and_mld_are_untracked(void **state)
{
	struct ct_tuple t;
	struct ct_packet pkt;
	uint8_t reason = 0;
	(void)state;

	for (unsigned type = 0; type < 256; type++) {
		bool noct = (type >= 130 && type <= 136) || type == 143;

		icmp_tuple6(&t, 1, 2, (uint8_t)type, 0, 0);
		icmp_packet_of(&pkt, &t);
		assert_int_equal(ct_proto_icmpv6.classify(&pkt, &set, &reason),
				 noct ? CT_V_UNTRACKED : -1);
	}
	/* redirect (137) is tracked like any other non-query: invalid */
	icmp_tuple6(&t, 1, 2, 137, 0, 0);
	assert_int_equal(new_entry_verdict(&t).verdict, CT_PV_INVALID);
}

/* The noct rule lives in nf_conntrack_icmpv6_error, which only runs for
 * pf == NFPROTO_IPV6: ICMPv6 ND inside IPv4 is not "untracked". */
static void test_icmpv6_nd_over_ipv4_is_not_untracked(void **state)
{
	struct ct_tuple t;
	struct ct_packet pkt;
	uint8_t reason = 0;
	(void)state;

	t = ts_tuple4(IPPROTO_ICMPV6, A, B, 0, 135 << 8);
	icmp_packet_of(&pkt, &t);
	assert_int_equal(ct_proto_icmpv6.classify(&pkt, &set, &reason), -1);
}

/* icmpv6 valid_new = { ECHO_REQUEST, NI_QUERY }; nf_conntrack_icmpv6_timeout. */
static void test_icmpv6_echo_and_ni_query_create(void **state)
{
	struct ct_tuple t;
	struct ct_proto_out o;
	(void)state;

	icmp_tuple6(&t, 1, 2, 128, 0, 9);
	o = new_entry_verdict(&t);
	assert_int_equal(o.verdict, CT_PV_ACCEPT);
	assert_int_equal(o.timeout_ns, ct_secs(33));
	icmp_tuple6(&t, 1, 2, 139, 0, 9);
	assert_int_equal(new_entry_verdict(&t).verdict, CT_PV_ACCEPT);
	icmp_tuple6(&t, 2, 1, 129, 0, 9);
	o = new_entry_verdict(&t);
	assert_int_equal(o.verdict, CT_PV_INVALID);
	assert_int_equal(o.reason, CT_PR_ICMP_UNTRACKED_TYPE);
	icmp_tuple6(&t, 2, 1, 140, 0, 9);
	assert_int_equal(new_entry_verdict(&t).verdict, CT_PV_INVALID);
}

/* ICMPv6 echo reply on the entry of the request: accepted, refreshed. */
static void test_icmpv6_echo_reply_on_entry(void **state)
{
	struct ct_tuple req, rep;
	struct ct_packet pkt;
	struct ct_conn *c;
	struct ct_proto_out o;
	(void)state;

	icmp_tuple6(&req, 1, 2, 128, 0, 300);
	icmp_tuple6(&rep, 2, 1, 129, 0, 300);
	c = conn_new(&ct_proto_icmpv6, &req);
	icmp_packet_of(&pkt, &req);
	track(&ct_proto_icmpv6, c, &set, &pkt, CT_DIR_ORIGINAL, true, SEC(0));
	icmp_packet_of(&pkt, &rep);
	o = track(&ct_proto_icmpv6, c, &set, &pkt, CT_DIR_REPLY, false, SEC(1));
	assert_int_equal(o.verdict, CT_PV_ACCEPT);
	assert_int_equal(o.timeout_ns, ct_secs(33));
	free(c);
}

/* icmp_is_err(): DEST_UNREACH, SOURCE_QUENCH, REDIRECT, TIME_EXCEEDED,
 * PARAMETERPROB; ICMPv6: every type below 128 ("is not error message?"
 * tests type >= 128).  ICMP over IPv6 never reaches an error handler. */
static void test_icmp_error_type_classes(void **state)
{
	struct ct_tuple t;
	struct ct_packet pkt;
	(void)state;

	for (unsigned type = 0; type <= 18; type++) {
		bool err = type == 3 || type == 4 || type == 5 || type == 11 ||
			   type == 12;

		icmp_tuple4(&t, R, A, (uint8_t)type, 0, 0);
		icmp_packet_of(&pkt, &t);
		assert_int_equal(ct_icmp_is_error(&pkt), err);
	}
	for (unsigned type = 0; type < 256; type++) {
		icmp_tuple6(&t, 9, 1, (uint8_t)type, 0, 0);
		icmp_packet_of(&pkt, &t);
		assert_int_equal(ct_icmp_is_error(&pkt), type < 128);
	}
	t = ts_tuple6(IPPROTO_ICMP, 9, 1, 0, 3 << 8);
	icmp_packet_of(&pkt, &t);
	assert_false(ct_icmp_is_error(&pkt));
}

/* An ICMP error @type from @src to @dst quoting @inner. */
static void error_packet4(struct ct_packet *pkt, uint32_t src, uint32_t dst,
			  uint8_t type, const struct ct_tuple *inner)
{
	struct ct_tuple t;

	icmp_tuple4(&t, src, dst, type, 3, 0);
	icmp_packet_of(pkt, &t);
	if (inner) {
		pkt->u.icmp.inner_ok = true;
		pkt->u.icmp.inner = *inner;
	}
}

/* nf_ct_get_tuplepr failing -> -NF_ACCEPT (counted as `error`). */
static void test_error_without_inner_tuple_is_bad(void **state)
{
	struct ct_packet pkt;
	struct ct_tuple key;
	uint8_t reason = 0;
	(void)state;

	error_packet4(&pkt, R, A, 3, NULL);
	assert_false(ct_icmp_error_key(&pkt, &key, &reason));
	assert_int_equal(reason, CT_PR_ICMP_BAD);
}

/* The quoted header is parsed as the outer family (state->pf). */
static void test_error_quoting_other_family_is_bad(void **state)
{
	struct ct_packet pkt;
	struct ct_tuple key, inner;
	uint8_t reason = 0;
	(void)state;

	inner = ts_tuple6(IPPROTO_UDP, 1, 2, 1000, 53);
	error_packet4(&pkt, R, A, 3, &inner);
	assert_false(ct_icmp_error_key(&pkt, &key, &reason));
	assert_int_equal(reason, CT_PR_ICMP_BAD);
}

/* nf_ct_invert_tuple fails for a quoted ICMP message that is not a query
 * (an error quoting an error): -NF_ACCEPT. */
static void test_error_quoting_an_error_is_bad(void **state)
{
	struct ct_packet pkt;
	struct ct_tuple key, inner;
	uint8_t reason = 0;
	(void)state;

	icmp_tuple4(&inner, A, B, 3, 1, 0);
	error_packet4(&pkt, R, A, 11, &inner);
	assert_false(ct_icmp_error_key(&pkt, &key, &reason));
	assert_int_equal(reason, CT_PR_ICMP_BAD);
}

/* The key is the quoted tuple in the outer packet's zone; a quoted echo
 * request (invertible) is fine. */
static void test_error_key_is_quoted_tuple_in_outer_zone(void **state)
{
	struct ct_packet pkt;
	struct ct_tuple key, inner;
	uint8_t reason = 0;
	(void)state;

	inner = ts_tuple4(IPPROTO_UDP, A, B, 40000, 53);
	inner.zone = 0;
	error_packet4(&pkt, R, A, 3, &inner);
	pkt.tuple.zone = 7;
	assert_true(ct_icmp_error_key(&pkt, &key, &reason));
	inner.zone = 7;
	assert_memory_equal(&key, &inner, sizeof(key));

	icmp_tuple4(&inner, A, B, 8, 0, 99);
	error_packet4(&pkt, R, A, 11, &inner);
	assert_true(ct_icmp_error_key(&pkt, &key, &reason));
	assert_memory_equal(&key, &inner, sizeof(key));
}

/*
 * The key contract relies on inversion being an involution: the kernel
 * looks up invert(quoted) and finds the entry in direction h; looking up
 * the quoted tuple finds the same entry in the other direction.
 */
static void test_inversion_is_an_involution(void **state)
{
	struct ct_tuple ts[8], a, b;
	int n = 0;
	(void)state;

	ts[n++] = ts_tuple4(IPPROTO_UDP, A, B, 1, 2);
	ts[n++] = ts_tuple4(IPPROTO_TCP, A, B, 80, 443);
	ts[n++] = ts_tuple4(IPPROTO_GRE, A, B, 0, 0x1234);
	ts[n++] = ts_tuple4(50, A, B, 0, 0);
	icmp_tuple4(&ts[n++], A, B, 8, 0, 7);
	icmp_tuple4(&ts[n++], A, B, 17, 3, 7);
	icmp_tuple6(&ts[n++], 1, 2, 139, 1, 7);
	ts[n++] = ts_tuple6(IPPROTO_SCTP, 1, 2, 5, 6);
	for (int i = 0; i < n; i++) {
		assert_true(ct_tuple_invert(&ts[i], &a));
		assert_true(ct_tuple_invert(&a, &b));
		assert_memory_equal(&b, &ts[i], sizeof(b));
	}
}

/*
 * Entry A:40000 -> B:53 (UDP).  Case 1 of nf_conntrack_inet_error's
 * comment: an error from B or a middle box back to A quotes A -> B (the
 * original direction); the kernel's inverted key matches the REPLY tuple,
 * whose dst is A = outer daddr: RELATED + IS_REPLY.
 */
static void test_error_toward_original_sender_is_related_reply(void **state)
{
	struct ct_tuple orig, key;
	struct ct_packet pkt;
	enum ct_dir dir = CT_DIR_ORIGINAL;
	uint8_t reason = 0;
	(void)state;

	orig = ts_tuple4(IPPROTO_UDP, A, B, 40000, 53);
	error_packet4(&pkt, R, A, 11, &orig);
	assert_true(ct_icmp_error_key(&pkt, &key, &reason));
	assert_true(ct_icmp_error_accept(&pkt, &orig, inv_of(&orig), CT_DIR_ORIGINAL, &dir,
					 &reason));
	assert_int_equal(dir, CT_DIR_REPLY);

	/* the destination itself may send it (port unreachable from B) */
	error_packet4(&pkt, B, A, 3, &orig);
	dir = CT_DIR_ORIGINAL;
	assert_true(ct_icmp_error_accept(&pkt, &orig, inv_of(&orig), CT_DIR_ORIGINAL, &dir,
					 &reason));
	assert_int_equal(dir, CT_DIR_REPLY);
}

/* Case 2: an error about a reply-direction packet (B -> A) travels to B:
 * the kernel's key matches the ORIGINAL tuple (dst B): IP_CT_RELATED. */
static void test_error_toward_responder_is_related_original(void **state)
{
	struct ct_tuple orig, quoted;
	struct ct_packet pkt;
	enum ct_dir dir = CT_DIR_REPLY;
	uint8_t reason = 0;
	(void)state;

	orig = ts_tuple4(IPPROTO_UDP, A, B, 40000, 53);
	quoted = ts_reverse(&orig);
	error_packet4(&pkt, R, B, 3, &quoted);
	assert_true(ct_icmp_error_accept(&pkt, &orig, inv_of(&orig), CT_DIR_REPLY, &dir,
					 &reason));
	assert_int_equal(dir, CT_DIR_ORIGINAL);
}

/* The bogus case of the kernel's comment: inner B -> T, outer B -> X;
 * "outer daddr != inner" -> -NF_ACCEPT.  Also an error quoting A -> B but
 * sent to B (wrong way round). */
static void test_error_to_wrong_outer_destination_is_refused(void **state)
{
	struct ct_tuple orig, quoted;
	struct ct_packet pkt;
	enum ct_dir dir = CT_DIR_ORIGINAL;
	uint8_t reason = 0;
	(void)state;

	orig = ts_tuple4(IPPROTO_UDP, A, B, 40000, 53);
	quoted = ts_reverse(&orig);
	error_packet4(&pkt, B, X, 3, &quoted);
	assert_false(ct_icmp_error_accept(&pkt, &orig, inv_of(&orig), CT_DIR_REPLY, &dir,
					  &reason));
	assert_int_equal(reason, CT_PR_ICMP_NO_MATCH);

	reason = 0;
	error_packet4(&pkt, R, B, 3, &orig);
	assert_false(ct_icmp_error_accept(&pkt, &orig, inv_of(&orig), CT_DIR_ORIGINAL, &dir,
					  &reason));
	assert_int_equal(reason, CT_PR_ICMP_NO_MATCH);
}

/* The same rule over IPv6 (packet too big quoting a TCP segment); all 16
 * address bytes count. */
static void test_icmpv6_error_outer_address_check(void **state)
{
	struct ct_tuple orig, t;
	struct ct_packet pkt;
	enum ct_dir dir = CT_DIR_ORIGINAL;
	uint8_t reason = 0;
	struct ct_tuple key;
	(void)state;

	orig = ts_tuple6(IPPROTO_TCP, 1, 2, 33000, 443);
	icmp_tuple6(&t, 0xfe, 1, 2, 0, 0);
	icmp_packet_of(&pkt, &t);
	pkt.u.icmp.inner_ok = true;
	pkt.u.icmp.inner = orig;
	assert_true(ct_icmp_is_error(&pkt));
	assert_true(ct_icmp_error_key(&pkt, &key, &reason));
	assert_true(ct_icmp_error_accept(&pkt, &orig, inv_of(&orig), CT_DIR_ORIGINAL, &dir,
					 &reason));
	assert_int_equal(dir, CT_DIR_REPLY);

	pkt.tuple.dst.ip6[0] ^= 0x80;  /* same last byte, other prefix */
	assert_false(ct_icmp_error_accept(&pkt, &orig, inv_of(&orig), CT_DIR_ORIGINAL, &dir,
					  &reason));
	assert_int_equal(reason, CT_PR_ICMP_NO_MATCH);
}

/*
 * Source NAT: the entry A:40000 -> B:53 is B:53 -> N:1025 in reply, and
 * an error about the translated packet (quoted N -> B) travels to N, the
 * NAT address - the destination of the reply tuple in the kernel's
 * direction (REPLY: the key, the quoted tuple inverted, is the reply
 * tuple).  Without the reply tuple the rule would want A, the original
 * source, and refuse it; an error to A itself is the one refused now.
 */
#define N 0x0a0001feu   /* the NAT address */
static void test_error_about_a_source_nated_packet_goes_to_the_nat_address(void **state)
{
	struct ct_tuple orig, reply, quoted;
	struct ct_packet pkt;
	enum ct_dir dir = CT_DIR_ORIGINAL;
	uint8_t reason = 0;
	(void)state;

	orig = ts_tuple4(IPPROTO_UDP, A, B, 40000, 53);
	reply = ts_tuple4(IPPROTO_UDP, B, N, 53, 1025);
	assert_true(ct_tuple_invert(&reply, &quoted));   /* N:1025 -> B:53 */
	error_packet4(&pkt, B, N, 3, &quoted);
	assert_true(ct_icmp_error_accept(&pkt, &orig, &reply, CT_DIR_ORIGINAL, &dir,
					 &reason));
	assert_int_equal(dir, CT_DIR_REPLY);
	error_packet4(&pkt, B, A, 3, &quoted);
	assert_false(ct_icmp_error_accept(&pkt, &orig, &reply, CT_DIR_ORIGINAL, &dir,
					  &reason));
	assert_int_equal(reason, CT_PR_ICMP_NO_MATCH);
}

/* A quoted echo request (ICMP in ICMP): ORIGINAL direction, RELATED_REPLY. */
static void test_error_quoting_echo_request(void **state)
{
	struct ct_tuple req, key;
	struct ct_packet pkt;
	enum ct_dir dir = CT_DIR_ORIGINAL;
	uint8_t reason = 0;
	(void)state;

	icmp_tuple4(&req, A, B, 8, 0, 4242);
	error_packet4(&pkt, R, A, 3, &req);
	assert_true(ct_icmp_error_key(&pkt, &key, &reason));
	assert_memory_equal(&key, &req, sizeof(key));
	assert_true(ct_icmp_error_accept(&pkt, &req, inv_of(&req), CT_DIR_ORIGINAL, &dir,
					 &reason));
	assert_int_equal(dir, CT_DIR_REPLY);
}

static void test_icmp_trackers_are_stateless(void **state)
{
	(void)state;
	assert_int_equal(ct_proto_icmp.priv_size, 0);
	assert_int_equal(ct_proto_icmpv6.priv_size, 0);
	assert_null(ct_proto_icmp.state_name);
	assert_null(ct_proto_icmpv6.state_name);
	assert_string_equal(ct_proto_icmp.name, "icmp");
	assert_string_equal(ct_proto_icmpv6.name, "icmpv6");
	assert_ptr_equal(ct_proto_find(IPPROTO_ICMP), &ct_proto_icmp);
	assert_ptr_equal(ct_proto_find(IPPROTO_ICMPV6), &ct_proto_icmpv6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_icmp_request_types_create_entries),
		cmocka_unit_test(test_icmp_reply_types_cannot_create),
		cmocka_unit_test(test_icmp_non_query_types_cannot_create),
		cmocka_unit_test(test_icmp_echo_reply_refreshes_and_keeps_entry),
		cmocka_unit_test(test_icmp_over_wrong_family_is_invalid),
		cmocka_unit_test(test_icmp_types_above_18_are_invalid),
		cmocka_unit_test(test_icmpv6_nd_and_mld_are_untracked),
		cmocka_unit_test(test_icmpv6_nd_over_ipv4_is_not_untracked),
		cmocka_unit_test(test_icmpv6_echo_and_ni_query_create),
		cmocka_unit_test(test_icmpv6_echo_reply_on_entry),
		cmocka_unit_test(test_icmp_error_type_classes),
		cmocka_unit_test(test_error_without_inner_tuple_is_bad),
		cmocka_unit_test(test_error_quoting_other_family_is_bad),
		cmocka_unit_test(test_error_quoting_an_error_is_bad),
		cmocka_unit_test(test_error_key_is_quoted_tuple_in_outer_zone),
		cmocka_unit_test(test_inversion_is_an_involution),
		cmocka_unit_test(test_error_toward_original_sender_is_related_reply),
		cmocka_unit_test(test_error_toward_responder_is_related_original),
		cmocka_unit_test(test_error_to_wrong_outer_destination_is_refused),
		cmocka_unit_test(test_icmpv6_error_outer_address_check),
		cmocka_unit_test(test_error_quoting_echo_request),
		cmocka_unit_test(test_error_about_a_source_nated_packet_goes_to_the_nat_address),
		cmocka_unit_test(test_icmp_trackers_are_stateless),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
