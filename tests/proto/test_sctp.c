/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sctp.c - the SCTP tracker against nf_conntrack_proto_sctp.c
 * (Linux 6.18): sctp_conntracks[][][], do_basic_checks, sctp_new, the
 * verification-tag rules of nf_conntrack_sctp_packet, the ASSURED rule
 * (entering ESTABLISHED), the "don't renew timeout on init retransmit"
 * rule, sctp_can_early_drop and the state names conntrack prints.
 *
 * Packets are built byte by byte.  The association: client A (original
 * direction) announces initiate tag TA in its INIT, so packets *to* A -
 * the reply direction - carry TA; server B announces TB in its INIT ACK,
 * carried by original-direction packets.  SCTP timeouts are set to
 * 101..108 (CLOSED..HEARTBEAT_SENT) so that an off-by-one in the state ->
 * timeout mapping shows.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <netinet/in.h>

#include "ctrack/events.h"
#include "proto_test_util.h"
#include "support/wire.h"

enum { NONE = 0, CLOSED, COOKIE_WAIT, COOKIE_ECHOED, ESTABLISHED,
       SHUTDOWN_SENT, SHUTDOWN_RECD, SHUTDOWN_ACK_SENT, HEARTBEAT_SENT };

enum { DATA = 0, INIT = 1, INIT_ACK = 2, SACK = 3, HEARTBEAT = 4,
       HEARTBEAT_ACK = 5, ABORT = 6, SHUTDOWN = 7, SHUTDOWN_ACK = 8,
       ERROR = 9, COOKIE_ECHO = 10, COOKIE_ACK = 11,
       SHUTDOWN_COMPLETE = 14 };

#define TA 0x1a1a1a1au
#define TB 0x2b2b2b2bu
#define T_BIT 0x01

/* Timeout the tracker must give for @state with our settings. */
#define TO(state) ct_secs(100 + (state))

struct spkt {
	uint8_t b[512];
	uint32_t n;
};

static void s_hdr(struct spkt *s, uint32_t vtag)
{
	memset(s, 0, sizeof(*s));
	s->b[0] = 0x9c; s->b[1] = 0x40;   /* sport 40000 */
	s->b[2] = 0x0b; s->b[3] = 0x59;   /* dport 2905 */
	ts_put32(s->b + 4, vtag);
	s->n = 12;                        /* checksum left 0: not checked here */
}

/* A chunk with @blen bytes of body (zeros), padded to 4 bytes. */
static void s_chunk(struct spkt *s, uint8_t type, uint8_t flags, uint16_t blen)
{
	uint16_t len = (uint16_t)(4 + blen);

	s->b[s->n] = type;
	s->b[s->n + 1] = flags;
	s->b[s->n + 2] = (uint8_t)(len >> 8);
	s->b[s->n + 3] = (uint8_t)len;
	s->n += (len + 3u) & ~3u;
}

/* INIT / INIT ACK: 16-byte fixed part starting with the initiate tag. */
static void s_init(struct spkt *s, uint8_t type, uint32_t itag)
{
	uint32_t at = s->n + 4;

	s_chunk(s, type, 0, 16);
	ts_put32(s->b + at, itag);
	ts_put32(s->b + at + 4, 65536);      /* a_rwnd */
	s->b[at + 8] = 0; s->b[at + 9] = 10;  /* streams */
	s->b[at + 10] = 0; s->b[at + 11] = 10;
	ts_put32(s->b + at + 12, 1);         /* initial TSN */
}

static struct ct_settings set;
static struct ct_tuple orig, reply;

static int setup(void **state)
{
	(void)state;
	ct_settings_default(&set);
	for (int i = 0; i < CT_SCTP_TO_MAX; i++)
		set.sctp_timeouts[i] = 101 + (uint32_t)i;
	orig = ts_tuple4(IPPROTO_SCTP, 0x0a000001, 0x0a000002, 40000, 2905);
	reply = ts_reverse(&orig);
	return 0;
}

static struct ct_proto_out run(struct ct_conn *c, const struct spkt *s,
			       enum ct_dir dir, bool is_new, double t)
{
	struct ct_packet pkt;

	ts_packet_of(&pkt, dir == CT_DIR_ORIGINAL ? &orig : &reply);
	pkt.l4 = s->b;
	pkt.l4_len = pkt.l4_caplen = s->n;
	return track(&ct_proto_sctp, c, &set, &pkt, dir, is_new, SEC(t));
}

/* One packet with a single chunk (no body unless INIT/INIT ACK). */
static struct ct_proto_out one(struct ct_conn *c, enum ct_dir dir,
			       bool is_new, uint32_t vtag, uint8_t type,
			       uint8_t flags, double t)
{
	struct spkt s;

	s_hdr(&s, vtag);
	s_chunk(&s, type, flags, type == DATA ? 8 : 0);
	return run(c, &s, dir, is_new, t);
}

static struct ct_proto_out init_pkt(struct ct_conn *c, enum ct_dir dir,
				    bool is_new, uint32_t vtag, uint8_t type,
				    uint32_t itag, double t)
{
	struct spkt s;

	s_hdr(&s, vtag);
	s_init(&s, type, itag);
	return run(c, &s, dir, is_new, t);
}

static struct ct_conn *fresh(void)
{
	return conn_new(&ct_proto_sctp, &orig);
}

/* INIT, INIT ACK, COOKIE ECHO, COOKIE ACK: an ESTABLISHED association. */
static struct ct_conn *established(void)
{
	struct ct_conn *c = fresh();

	assert_int_equal(init_pkt(c, CT_DIR_ORIGINAL, true, 0, INIT, TA, 0).verdict, CT_PV_ACCEPT);
	assert_int_equal(init_pkt(c, CT_DIR_REPLY, false, TA, INIT_ACK, TB, 0.1).verdict, CT_PV_ACCEPT);
	assert_int_equal(one(c, CT_DIR_ORIGINAL, false, TB, COOKIE_ECHO, 0, 0.2).verdict, CT_PV_ACCEPT);
	assert_int_equal(one(c, CT_DIR_REPLY, false, TA, COOKIE_ACK, 0, 0.3).verdict, CT_PV_ACCEPT);
	assert_int_equal(c->l4state, ESTABLISHED);
	return c;
}

/*
 * The whole life, row by row of sctp_conntracks:
 *  INIT (orig, sNO) -> sCL; INIT ACK (reply, sCL) -> sCW;
 *  COOKIE ECHO (orig, sCW) -> sCE; COOKIE ACK (reply, sCE) -> sES, which
 *  sets ASSURED; DATA/SACK keep sES (no event); SHUTDOWN (orig, sES) ->
 *  sSS; SHUTDOWN ACK (reply, sSS) -> sSA; SHUTDOWN COMPLETE (orig, sSA)
 *  -> sCL.  Each refresh uses timeouts[new_state]; each state change
 *  caches IPCT_PROTOINFO.
 */
static void test_sctp_full_association_life(void **state)
{
	struct ct_conn *c = fresh();
	struct ct_proto_out o;
	(void)state;

	o = init_pkt(c, CT_DIR_ORIGINAL, true, 0, INIT, TA, 0);
	assert_int_equal(o.verdict, CT_PV_ACCEPT);
	assert_int_equal(c->l4state, CLOSED);
	assert_int_equal(o.timeout_ns, TO(CLOSED));
	assert_true(o.events & CT_EVW_PROTOINFO);
	assert_false(o.set_assured);

	o = init_pkt(c, CT_DIR_REPLY, false, TA, INIT_ACK, TB, 0.1);
	assert_int_equal(o.verdict, CT_PV_ACCEPT);
	assert_int_equal(c->l4state, COOKIE_WAIT);
	assert_int_equal(o.timeout_ns, TO(COOKIE_WAIT));
	assert_true(o.events & CT_EVW_PROTOINFO);

	o = one(c, CT_DIR_ORIGINAL, false, TB, COOKIE_ECHO, 0, 0.2);
	assert_int_equal(c->l4state, COOKIE_ECHOED);
	assert_int_equal(o.timeout_ns, TO(COOKIE_ECHOED));

	o = one(c, CT_DIR_REPLY, false, TA, COOKIE_ACK, 0, 0.3);
	assert_int_equal(c->l4state, ESTABLISHED);
	assert_int_equal(o.timeout_ns, TO(ESTABLISHED));
	assert_true(o.set_assured);
	assert_true(o.events & CT_EVW_PROTOINFO);

	o = one(c, CT_DIR_ORIGINAL, false, TB, DATA, 0, 1);
	assert_int_equal(o.verdict, CT_PV_ACCEPT);
	assert_int_equal(c->l4state, ESTABLISHED);
	assert_int_equal(o.events, 0);
	assert_false(o.set_assured);
	o = one(c, CT_DIR_REPLY, false, TA, SACK, 0, 1.1);
	assert_int_equal(o.verdict, CT_PV_ACCEPT);
	assert_int_equal(o.timeout_ns, TO(ESTABLISHED));

	o = one(c, CT_DIR_ORIGINAL, false, TB, SHUTDOWN, 0, 2);
	assert_int_equal(c->l4state, SHUTDOWN_SENT);
	assert_int_equal(o.timeout_ns, TO(SHUTDOWN_SENT));
	o = one(c, CT_DIR_REPLY, false, TA, SHUTDOWN_ACK, 0, 2.1);
	assert_int_equal(c->l4state, SHUTDOWN_ACK_SENT);
	assert_int_equal(o.timeout_ns, TO(SHUTDOWN_ACK_SENT));
	o = one(c, CT_DIR_ORIGINAL, false, TB, SHUTDOWN_COMPLETE, 0, 2.2);
	assert_int_equal(o.verdict, CT_PV_ACCEPT);
	assert_int_equal(c->l4state, CLOSED);
	assert_int_equal(o.timeout_ns, TO(CLOSED));
	free(c);
}

/* SHUTDOWN from the responder: reply row, sES -> sSR. */
static void test_sctp_shutdown_from_responder_is_shutdown_recd(void **state)
{
	struct ct_conn *c = established();
	struct ct_proto_out o;
	(void)state;

	o = one(c, CT_DIR_REPLY, false, TA, SHUTDOWN, 0, 1);
	assert_int_equal(c->l4state, SHUTDOWN_RECD);
	assert_int_equal(o.timeout_ns, TO(SHUTDOWN_RECD));
	o = one(c, CT_DIR_ORIGINAL, false, TB, SHUTDOWN_ACK, 0, 1.1);
	assert_int_equal(c->l4state, SHUTDOWN_ACK_SENT);
	free(c);
}

/* "Check the verification tag (Sec 8.5)": a DATA chunk whose tag is not
 * the one learnt for its direction is INVALID and changes nothing. */
static void test_sctp_wrong_vtag_is_invalid(void **state)
{
	struct ct_conn *c = established();
	struct ct_proto_out o;
	(void)state;

	o = one(c, CT_DIR_ORIGINAL, false, 0xdeadbeef, DATA, 0, 1);
	assert_int_equal(o.verdict, CT_PV_INVALID);
	assert_int_equal(o.reason, CT_PR_SCTP_INVALID);
	/* the tag of the other direction is wrong too */
	o = one(c, CT_DIR_ORIGINAL, false, TA, DATA, 0, 1);
	assert_int_equal(o.verdict, CT_PV_INVALID);
	o = one(c, CT_DIR_REPLY, false, TB, SHUTDOWN, 0, 1);
	assert_int_equal(o.verdict, CT_PV_INVALID);
	assert_int_equal(c->l4state, ESTABLISHED);
	free(c);
}

/* 8.5.1 (B): ABORT needs our own tag without T, the peer's with T; any
 * state goes to sCL. */
static void test_sctp_abort_vtag_and_t_bit(void **state)
{
	struct ct_conn *c = established();
	struct ct_proto_out o;
	(void)state;

	o = one(c, CT_DIR_REPLY, false, TB, ABORT, 0, 1);
	assert_int_equal(o.verdict, CT_PV_INVALID);
	o = one(c, CT_DIR_REPLY, false, TA, ABORT, T_BIT, 1);
	assert_int_equal(o.verdict, CT_PV_INVALID);
	assert_int_equal(c->l4state, ESTABLISHED);

	o = one(c, CT_DIR_REPLY, false, TB, ABORT, T_BIT, 1);  /* reflected */
	assert_int_equal(o.verdict, CT_PV_ACCEPT);
	assert_int_equal(c->l4state, CLOSED);
	assert_int_equal(o.timeout_ns, TO(CLOSED));
	free(c);

	c = established();
	o = one(c, CT_DIR_ORIGINAL, false, TB, ABORT, 0, 1);
	assert_int_equal(o.verdict, CT_PV_ACCEPT);
	assert_int_equal(c->l4state, CLOSED);
	free(c);
}

/* 8.5.1 (C): SHUTDOWN COMPLETE likewise, T bit -> peer's tag. */
static void test_sctp_shutdown_complete_t_bit(void **state)
{
	struct ct_conn *c = established();
	struct ct_proto_out o;
	(void)state;

	one(c, CT_DIR_ORIGINAL, false, TB, SHUTDOWN, 0, 1);
	one(c, CT_DIR_REPLY, false, TA, SHUTDOWN_ACK, 0, 1.1);
	o = one(c, CT_DIR_ORIGINAL, false, TB, SHUTDOWN_COMPLETE, T_BIT, 1.2);
	assert_int_equal(o.verdict, CT_PV_INVALID);
	o = one(c, CT_DIR_ORIGINAL, false, TA, SHUTDOWN_COMPLETE, T_BIT, 1.2);
	assert_int_equal(o.verdict, CT_PV_ACCEPT);
	assert_int_equal(c->l4state, CLOSED);
	free(c);
}

/* "If an OOTB packet has any of these chunks discard (Sec 8.4)": ABORT,
 * SHUTDOWN COMPLETE, COOKIE ACK cannot create an entry. */
static void test_sctp_new_with_abort_shutdown_complete_or_cookie_ack_is_invalid(void **state)
{
	static const uint8_t bad[] = { ABORT, SHUTDOWN_COMPLETE, COOKIE_ACK };
	(void)state;

	for (size_t i = 0; i < sizeof(bad); i++) {
		struct ct_conn *c = fresh();
		struct ct_proto_out o = one(c, CT_DIR_ORIGINAL, true, 0, bad[i], 0, 0);

		assert_int_equal(o.verdict, CT_PV_INVALID);
		assert_int_equal(o.reason, CT_PR_SCTP_INVALID);
		free(c);
	}
}

/* sctp_new: DATA is "unknown" to sctp_new_state, which keeps sNO: "Invalid:
 * delete conntrack".  A mid-stream DATA packet cannot create an entry. */
static void test_sctp_new_from_data_is_invalid(void **state)
{
	struct ct_conn *c = fresh();
	(void)state;

	assert_int_equal(one(c, CT_DIR_ORIGINAL, true, TB, DATA, 0, 0).verdict,
			 CT_PV_INVALID);
	free(c);
}

/* sctp_new / 8.5.1 (A): an INIT must carry tag 0. */
static void test_sctp_init_with_nonzero_vtag_is_invalid(void **state)
{
	struct ct_conn *c = fresh();
	(void)state;

	assert_int_equal(init_pkt(c, CT_DIR_ORIGINAL, true, 5, INIT, TA, 0).verdict,
			 CT_PV_INVALID);
	free(c);
}

/* do_basic_checks: zero-length chunk; INIT not alone; COOKIE ECHO not
 * first; no chunk at all.  COOKIE ECHO first with DATA behind is fine. */
static void test_sctp_basic_chunk_checks(void **state)
{
	struct ct_conn *c;
	struct spkt s;
	(void)state;

	c = established();
	s_hdr(&s, TB);
	s_chunk(&s, DATA, 0, 8);
	s.b[s.n] = DATA;                 /* a chunk whose length is 0 */
	s.n += 4;
	assert_int_equal(run(c, &s, CT_DIR_ORIGINAL, false, 1).verdict, CT_PV_INVALID);

	s_hdr(&s, 0);
	s_init(&s, INIT, TA);
	s_chunk(&s, DATA, 0, 8);
	assert_int_equal(run(c, &s, CT_DIR_ORIGINAL, false, 1).verdict, CT_PV_INVALID);

	s_hdr(&s, TB);
	s_chunk(&s, DATA, 0, 8);
	s_chunk(&s, COOKIE_ECHO, 0, 4);
	assert_int_equal(run(c, &s, CT_DIR_ORIGINAL, false, 1).verdict, CT_PV_INVALID);

	s_hdr(&s, TB);
	assert_int_equal(run(c, &s, CT_DIR_ORIGINAL, false, 1).verdict, CT_PV_INVALID);
	assert_int_equal(c->l4state, ESTABLISHED);
	free(c);

	/* COOKIE ECHO bundled with DATA, as endpoints do */
	c = fresh();
	init_pkt(c, CT_DIR_ORIGINAL, true, 0, INIT, TA, 0);
	init_pkt(c, CT_DIR_REPLY, false, TA, INIT_ACK, TB, 0.1);
	s_hdr(&s, TB);
	s_chunk(&s, COOKIE_ECHO, 0, 4);
	s_chunk(&s, DATA, 0, 8);
	assert_int_equal(run(c, &s, CT_DIR_ORIGINAL, false, 0.2).verdict, CT_PV_ACCEPT);
	assert_int_equal(c->l4state, COOKIE_ECHOED);
	free(c);
}

/* A chunk running past the packet end: the walk stops at the last whole
 * chunk header (for_each_sctp_chunk), nothing is read out of bounds. */
static void test_sctp_truncated_chunk_list_is_walked_safely(void **state)
{
	struct ct_conn *c = established();
	struct spkt s;
	(void)state;

	s_hdr(&s, TB);
	s_chunk(&s, DATA, 0, 8);
	s.b[s.n] = DATA; s.b[s.n + 1] = 0; s.b[s.n + 2] = 0x40; /* 2 bytes only */
	s.n += 2;
	assert_int_equal(run(c, &s, CT_DIR_ORIGINAL, false, 1).verdict, CT_PV_ACCEPT);

	/* an INIT whose fixed part is cut: "if (!ih) return false" */
	s_hdr(&s, 0);
	s_chunk(&s, INIT, 0, 16);
	s.n = 12 + 4 + 8;
	free(c);
	c = fresh();
	assert_int_equal(run(c, &s, CT_DIR_ORIGINAL, true, 0).verdict, CT_PV_INVALID);
	free(c);
}

/* "don't renew timeout on init retransmit": INIT again on a confirmed entry
 * that stays CLOSED is accepted without refresh. */
static void test_sctp_init_retransmit_does_not_refresh(void **state)
{
	struct ct_conn *c = fresh();
	struct ct_proto_out o;
	(void)state;

	init_pkt(c, CT_DIR_ORIGINAL, true, 0, INIT, TA, 0);
	o = init_pkt(c, CT_DIR_ORIGINAL, false, 0, INIT, TA, 1);
	assert_int_equal(o.verdict, CT_PV_IGNORE);
	assert_int_equal(c->l4state, CLOSED);
	free(c);
}

/* Linux 6.5+: INIT in the original direction in SHUTDOWN_SENT/RECD -> sCL
 * (a new association on the same ports), refreshed normally. */
static void test_sctp_init_during_shutdown_closes(void **state)
{
	struct ct_conn *c = established();
	struct ct_proto_out o;
	(void)state;

	one(c, CT_DIR_ORIGINAL, false, TB, SHUTDOWN, 0, 1);
	assert_int_equal(c->l4state, SHUTDOWN_SENT);
	o = init_pkt(c, CT_DIR_ORIGINAL, false, 0, INIT, 0x3c3c3c3c, 2);
	assert_int_equal(o.verdict, CT_PV_ACCEPT);
	assert_int_equal(c->l4state, CLOSED);
	assert_int_equal(o.timeout_ns, TO(CLOSED));
	free(c);
}

/* INIT ACK: "if (!init[!dir] && vtag && vtag != ih->init_tag)" - once
 * COOKIE ACK cleared the INIT flags, an INIT ACK announcing another tag
 * than the one known for the other direction is refused. */
static void test_sctp_init_ack_with_foreign_tag_is_invalid(void **state)
{
	struct ct_conn *c = established();
	(void)state;

	assert_int_equal(init_pkt(c, CT_DIR_REPLY, false, TA, INIT_ACK, 0x3c3c3c3c, 1).verdict,
			 CT_PV_INVALID);
	assert_int_equal(init_pkt(c, CT_DIR_REPLY, false, TA, INIT_ACK, TB, 1).verdict,
			 CT_PV_ACCEPT);
	free(c);
}

/* The reply table has sIV for INIT and INIT ACK in sHS: a path picked up
 * by HEARTBEAT does not accept them from the other side. */
static void test_sctp_reply_init_in_heartbeat_sent_is_invalid(void **state)
{
	struct ct_conn *c = fresh();
	(void)state;

	one(c, CT_DIR_ORIGINAL, true, TB, HEARTBEAT, 0, 0);
	assert_int_equal(c->l4state, HEARTBEAT_SENT);
	assert_int_equal(init_pkt(c, CT_DIR_REPLY, false, 0, INIT, TA, 0.1).verdict,
			 CT_PV_INVALID);
	free(c);
}

/*
 * A secondary path seen first by a HEARTBEAT: sctp_new takes the tag for
 * the original direction; the HEARTBEAT ACK learns the reply tag
 * ("vtag[dir] == 0 -> set") and moves sHS -> sES (reply row), which
 * assures.  Then both tags are enforced.
 */
static void test_sctp_heartbeat_picks_up_secondary_path(void **state)
{
	struct ct_conn *c = fresh();
	struct ct_proto_out o;
	(void)state;

	o = one(c, CT_DIR_ORIGINAL, true, TB, HEARTBEAT, 0, 0);
	assert_int_equal(o.verdict, CT_PV_ACCEPT);
	assert_int_equal(c->l4state, HEARTBEAT_SENT);
	assert_int_equal(o.timeout_ns, TO(HEARTBEAT_SENT));
	assert_false(o.set_assured);

	o = one(c, CT_DIR_REPLY, false, TA, HEARTBEAT_ACK, 0, 0.1);
	assert_int_equal(o.verdict, CT_PV_ACCEPT);
	assert_int_equal(c->l4state, ESTABLISHED);
	assert_int_equal(o.timeout_ns, TO(ESTABLISHED));
	assert_true(o.set_assured);

	assert_int_equal(one(c, CT_DIR_ORIGINAL, false, TB, DATA, 0, 1).verdict, CT_PV_ACCEPT);
	assert_int_equal(one(c, CT_DIR_REPLY, false, TA, SACK, 0, 1).verdict, CT_PV_ACCEPT);
	assert_int_equal(one(c, CT_DIR_ORIGINAL, false, TA, DATA, 0, 1).verdict, CT_PV_INVALID);
	free(c);
}

/* Repeated HEARTBEATs in sHS stay there (original row, sHS -> sHS). */
static void test_sctp_heartbeat_retransmit_stays_heartbeat_sent(void **state)
{
	struct ct_conn *c = fresh();
	struct ct_proto_out o;
	(void)state;

	one(c, CT_DIR_ORIGINAL, true, TB, HEARTBEAT, 0, 0);
	o = one(c, CT_DIR_ORIGINAL, false, TB, HEARTBEAT, 0, 1);
	assert_int_equal(o.verdict, CT_PV_ACCEPT);
	assert_int_equal(c->l4state, HEARTBEAT_SENT);
	assert_int_equal(o.events, 0);
	free(c);
}

/*
 * A HEARTBEAT with a foreign tag on an established association: let
 * through once without refresh (SCTP_FLAG_HEARTBEAT_VTAG_FAILED, ignore);
 * a HEARTBEAT ACK with a new tag from the *other* side then switches the
 * entry to the new association (vtag[dir] = new, vtag[!dir] = 0), and the
 * original side's tag is learnt again from its next HEARTBEAT.
 */
static void test_sctp_heartbeat_with_new_vtag_moves_association(void **state)
{
	struct ct_conn *c = established();
	struct ct_proto_out o;
	const uint32_t NA = 0x4d4d4d4d, NB = 0x5e5e5e5e;
	(void)state;

	o = one(c, CT_DIR_ORIGINAL, false, NB, HEARTBEAT, 0, 1);
	assert_int_equal(o.verdict, CT_PV_IGNORE);
	assert_int_equal(c->l4state, ESTABLISHED);

	o = one(c, CT_DIR_REPLY, false, NA, HEARTBEAT_ACK, 0, 1.1);
	assert_int_equal(o.verdict, CT_PV_ACCEPT);
	assert_int_equal(c->l4state, ESTABLISHED);

	/* reply side follows NA now, the old TA is refused */
	assert_int_equal(one(c, CT_DIR_REPLY, false, NA, SACK, 0, 1.2).verdict, CT_PV_ACCEPT);
	assert_int_equal(one(c, CT_DIR_REPLY, false, TA, SACK, 0, 1.2).verdict, CT_PV_INVALID);
	/* original side's tag was forgotten: learnt from its next HEARTBEAT */
	assert_int_equal(one(c, CT_DIR_ORIGINAL, false, NB, HEARTBEAT, 0, 1.3).verdict, CT_PV_ACCEPT);
	assert_int_equal(one(c, CT_DIR_ORIGINAL, false, NB, DATA, 0, 1.4).verdict, CT_PV_ACCEPT);
	free(c);
}

/* The foreign-tag HEARTBEAT exception does not apply with DATA in the
 * packet, and a foreign-tag HEARTBEAT ACK needs a failed HEARTBEAT from
 * the other direction first. */
static void test_sctp_foreign_heartbeat_tags_refused_otherwise(void **state)
{
	struct ct_conn *c = established();
	struct spkt s;
	(void)state;

	s_hdr(&s, 0x77777777);
	s_chunk(&s, HEARTBEAT, 0, 4);
	s_chunk(&s, DATA, 0, 8);
	assert_int_equal(run(c, &s, CT_DIR_ORIGINAL, false, 1).verdict, CT_PV_INVALID);

	assert_int_equal(one(c, CT_DIR_REPLY, false, 0x77777777, HEARTBEAT_ACK, 0, 1).verdict,
			 CT_PV_INVALID);
	/* failed HEARTBEAT in the original direction, ACK from the same one */
	assert_int_equal(one(c, CT_DIR_ORIGINAL, false, 0x77777777, HEARTBEAT, 0, 1).verdict,
			 CT_PV_IGNORE);
	assert_int_equal(one(c, CT_DIR_ORIGINAL, false, 0x88888888, HEARTBEAT_ACK, 0, 1).verdict,
			 CT_PV_INVALID);
	free(c);
}

/* ASSURED only on *entering* ESTABLISHED: a second COOKIE ACK (sES ->
 * sES) does not ask again. */
static void test_sctp_assured_only_on_entering_established(void **state)
{
	struct ct_conn *c = established();
	struct ct_proto_out o;
	(void)state;

	o = one(c, CT_DIR_REPLY, false, TA, COOKIE_ACK, 0, 1);
	assert_int_equal(o.verdict, CT_PV_ACCEPT);
	assert_false(o.set_assured);
	assert_int_equal(o.events, 0);
	free(c);
}

/* sctp_can_early_drop: SHUTDOWN_SENT, SHUTDOWN_RECD, SHUTDOWN_ACK_SENT. */
static void test_sctp_can_early_drop_only_when_shutting_down(void **state)
{
	struct ct_conn *c = fresh();
	(void)state;

	for (uint8_t s = NONE; s <= HEARTBEAT_SENT; s++) {
		c->l4state = s;
		assert_int_equal(ct_proto_sctp.can_early_drop(c),
				 s == SHUTDOWN_SENT || s == SHUTDOWN_RECD ||
				 s == SHUTDOWN_ACK_SENT);
	}
	free(c);
}

/* libnetfilter_conntrack's sctp_states[] (and the kernel's
 * sctp_conntrack_names): what conntrack -L prints. */
static void test_sctp_state_names(void **state)
{
	static const char *const names[] = {
		"NONE", "CLOSED", "COOKIE_WAIT", "COOKIE_ECHOED", "ESTABLISHED",
		"SHUTDOWN_SENT", "SHUTDOWN_RECD", "SHUTDOWN_ACK_SENT",
		"HEARTBEAT_SENT",
	};
	(void)state;

	assert_int_equal(ct_proto_sctp.n_states, 9);
	for (uint8_t s = 0; s < 9; s++)
		assert_string_equal(ct_proto_sctp.state_name(s), names[s]);
	assert_null(ct_proto_sctp.state_name(9));
	assert_string_equal(ct_l4_state_name(IPPROTO_SCTP, ESTABLISHED),
			    "ESTABLISHED");
	assert_int_equal(ct_proto_sctp.priv_size, 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sctp_full_association_life),
		cmocka_unit_test(test_sctp_shutdown_from_responder_is_shutdown_recd),
		cmocka_unit_test(test_sctp_wrong_vtag_is_invalid),
		cmocka_unit_test(test_sctp_abort_vtag_and_t_bit),
		cmocka_unit_test(test_sctp_shutdown_complete_t_bit),
		cmocka_unit_test(test_sctp_new_with_abort_shutdown_complete_or_cookie_ack_is_invalid),
		cmocka_unit_test(test_sctp_new_from_data_is_invalid),
		cmocka_unit_test(test_sctp_init_with_nonzero_vtag_is_invalid),
		cmocka_unit_test(test_sctp_basic_chunk_checks),
		cmocka_unit_test(test_sctp_truncated_chunk_list_is_walked_safely),
		cmocka_unit_test(test_sctp_init_retransmit_does_not_refresh),
		cmocka_unit_test(test_sctp_init_during_shutdown_closes),
		cmocka_unit_test(test_sctp_init_ack_with_foreign_tag_is_invalid),
		cmocka_unit_test(test_sctp_reply_init_in_heartbeat_sent_is_invalid),
		cmocka_unit_test(test_sctp_heartbeat_picks_up_secondary_path),
		cmocka_unit_test(test_sctp_heartbeat_retransmit_stays_heartbeat_sent),
		cmocka_unit_test(test_sctp_heartbeat_with_new_vtag_moves_association),
		cmocka_unit_test(test_sctp_foreign_heartbeat_tags_refused_otherwise),
		cmocka_unit_test(test_sctp_assured_only_on_entering_established),
		cmocka_unit_test(test_sctp_can_early_drop_only_when_shutting_down),
		cmocka_unit_test(test_sctp_state_names),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
