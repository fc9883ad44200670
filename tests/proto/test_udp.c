/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_udp.c - the UDP and UDP-Lite trackers against the kernel's rules.
 *
 * Each expectation comes from Linux 6.18 nf_conntrack_proto_udp.c, named
 * in the comment of the test: nf_conntrack_udp_packet() (stream_ts set
 * while the entry is unconfirmed to "now + 2 s"; with IPS_SEEN_REPLY in
 * the status read at entry, time_after(now, stream_ts) selects
 * udp_timeout_stream and sets ASSURED unless already ASSURED or
 * IPS_NAT_CLASH, otherwise udp_timeout) and nf_conntrack_udplite_packet()
 * (no 2 s rule; udplite_error refuses a zero checksum).  Timeouts are set
 * to values unlike the defaults so that a wrong knob shows.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <netinet/in.h>

#include "proto_test_util.h"

struct fx {
	struct ct_settings set;
	struct ct_tuple orig, reply;
	struct ct_packet po, pr;   /* original / reply direction packets */
	struct ct_conn *c;
	const struct ct_proto *p;
};

static struct fx *fx_new(uint8_t l4)
{
	struct fx *f = calloc(1, sizeof(*f));

	ct_settings_default(&f->set);
	f->set.udp_timeout = 31;
	f->set.udp_timeout_stream = 121;
	f->p = ct_proto_find(l4);
	f->orig = ts_tuple4(l4, 0x0a000001, 0x0a000002, 40000, 53);
	f->reply = ts_reverse(&f->orig);
	ts_packet_of(&f->po, &f->orig);
	ts_packet_of(&f->pr, &f->reply);
	f->c = conn_new(f->p, &f->orig);
	return f;
}

static int setup_udp(void **state)
{
	*state = fx_new(IPPROTO_UDP);
	return 0;
}

static int setup_udplite(void **state)
{
	struct fx *f = fx_new(IPPROTO_UDPLITE);
	/* UDP-Lite header with a non-zero checksum (udplite_error requires
	 * one); 8 bytes, the rest of the header is irrelevant here */
	static uint8_t hdr[8] = { 0x9c, 0x40, 0x00, 0x35, 0x00, 0x00, 0x12, 0x34 };

	f->po.l4 = f->pr.l4 = hdr;
	f->po.l4_len = f->pr.l4_len = 8;
	f->po.l4_caplen = f->pr.l4_caplen = 8;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	free(f->c);
	free(f);
	return 0;
}

static struct ct_proto_out orig_at(struct fx *f, double t, bool is_new)
{
	return track(f->p, f->c, &f->set, &f->po, CT_DIR_ORIGINAL, is_new, SEC(t));
}

static struct ct_proto_out reply_at(struct fx *f, double t)
{
	return track(f->p, f->c, &f->set, &f->pr, CT_DIR_REPLY, false, SEC(t));
}

/* nf_conntrack_udp_packet: no IPS_SEEN_REPLY -> timeouts[UDP_CT_UNREPLIED]. */
static void test_udp_first_packet_gets_unreplied_timeout(void **state)
{
	struct fx *f = *state;
	struct ct_proto_out o = orig_at(f, 100, true);

	assert_int_equal(o.verdict, CT_PV_ACCEPT);
	assert_int_equal(o.timeout_ns, ct_secs(31));
	assert_false(o.set_assured);
	assert_int_equal(o.events, 0);
	assert_int_equal(f->c->l4state, 0);
}

/* Same branch: a one-way flow never sees IPS_SEEN_REPLY, so it stays on
 * udp_timeout and is never ASSURED however long it lasts. */
static void test_udp_one_way_flow_never_assured(void **state)
{
	struct fx *f = *state;

	orig_at(f, 0, true);
	for (int i = 1; i <= 10; i++) {
		struct ct_proto_out o = orig_at(f, 5.0 * i, false);

		assert_int_equal(o.timeout_ns, ct_secs(31));
		assert_false(o.set_assured);
	}
	assert_false(ct_conn_status(f->c) & CT_ST_ASSURED);
}

/* nf_conntrack_in sets IPS_SEEN_REPLY only after the tracker returned, so
 * the first reply is judged as "unreplied" even 5 s after creation. */
static void test_udp_first_reply_itself_keeps_unreplied_timeout(void **state)
{
	struct fx *f = *state;
	struct ct_proto_out o;

	orig_at(f, 0, true);
	o = reply_at(f, 5);
	assert_int_equal(o.timeout_ns, ct_secs(31));
	assert_false(o.set_assured);
	assert_true(ct_conn_status(f->c) & CT_ST_SEEN_REPLY);
}

/* Request/response within 2 s: SEEN_REPLY is set, but
 * time_after(jiffies, stream_ts) is false, so extra stays
 * timeouts[UDP_CT_UNREPLIED] and stream stays false: no ASSURED. */
static void test_udp_request_response_within_2s_not_assured(void **state)
{
	struct fx *f = *state;
	struct ct_proto_out o;

	orig_at(f, 10.0, true);
	reply_at(f, 10.1);
	o = orig_at(f, 10.5, false);
	assert_int_equal(o.timeout_ns, ct_secs(31));
	assert_false(o.set_assured);
	o = reply_at(f, 11.9);
	assert_int_equal(o.timeout_ns, ct_secs(31));
	assert_false(o.set_assured);
}

/* time_after() is strict: exactly creation + 2 s is not "after". */
static void test_udp_exactly_2s_after_creation_is_not_stream(void **state)
{
	struct fx *f = *state;
	struct ct_proto_out o;

	orig_at(f, 10.0, true);
	reply_at(f, 10.1);
	o = orig_at(f, 12.0, false);
	assert_int_equal(o.timeout_ns, ct_secs(31));
	assert_false(o.set_assured);
	o = track(f->p, f->c, &f->set, &f->po, CT_DIR_ORIGINAL, false,
		  SEC(12.0) + 1);
	assert_int_equal(o.timeout_ns, ct_secs(121));
	assert_true(o.set_assured);
}

/* SEEN_REPLY and time_after(created + 2 s): udp_timeout_stream, and
 * ASSURED because status had no IPS_ASSURED (stream = true). */
static void test_udp_packet_after_2s_with_reply_seen_assures(void **state)
{
	struct fx *f = *state;
	struct ct_proto_out o;

	orig_at(f, 10.0, true);
	reply_at(f, 10.2);
	o = orig_at(f, 12.5, false);
	assert_int_equal(o.verdict, CT_PV_ACCEPT);
	assert_int_equal(o.timeout_ns, ct_secs(121));
	assert_true(o.set_assured);
	/* the kernel sets ASSURED with test_and_set_bit and caches
	 * IPCT_ASSURED once; the tracker asks only while it is clear */
	o = orig_at(f, 13.0, false);
	assert_int_equal(o.timeout_ns, ct_secs(121));
	assert_false(o.set_assured);
}

/* The rule has no direction: the reply direction assures as well. */
static void test_udp_reply_direction_packet_can_assure(void **state)
{
	struct fx *f = *state;
	struct ct_proto_out o;

	orig_at(f, 0, true);
	reply_at(f, 0.5);
	o = reply_at(f, 3.0);
	assert_int_equal(o.timeout_ns, ct_secs(121));
	assert_true(o.set_assured);
}

/* The first reply arriving late does not assure (status read before it has
 * no SEEN_REPLY); the next packet, also late, does. */
static void test_udp_late_first_reply_then_next_packet_assures(void **state)
{
	struct fx *f = *state;
	struct ct_proto_out o;

	orig_at(f, 0, true);
	o = reply_at(f, 2.5);
	assert_false(o.set_assured);
	assert_int_equal(o.timeout_ns, ct_secs(31));
	o = orig_at(f, 2.6, false);
	assert_true(o.set_assured);
	assert_int_equal(o.timeout_ns, ct_secs(121));
}

/* stream_ts is written only while the entry is unconfirmed: "created" is
 * the first packet's time, not the first reply's. */
static void test_udp_created_is_first_packet_time(void **state)
{
	struct fx *f = *state;
	struct ct_proto_out o;

	orig_at(f, 50.0, true);
	orig_at(f, 51.0, false);
	reply_at(f, 51.5);
	o = orig_at(f, 51.9, false);   /* 1.9 s after creation */
	assert_false(o.set_assured);
	o = orig_at(f, 52.1, false);   /* 2.1 s after creation */
	assert_true(o.set_assured);
}

/* "never set ASSURED for IPS_NAT_CLASH, they time out soon" - but the
 * refresh with the stream timeout happens before that test. */
static void test_udp_nat_clash_entry_extended_but_never_assured(void **state)
{
	struct fx *f = *state;
	struct ct_proto_out o;

	orig_at(f, 0, true);
	reply_at(f, 0.1);
	ct_conn_test_and_set(f->c, CT_ST_NAT_CLASH);
	o = orig_at(f, 5.0, false);
	assert_int_equal(o.timeout_ns, ct_secs(121));
	assert_false(o.set_assured);
}

/* Timeouts are read from the namespace's settings at each packet. */
static void test_udp_reads_current_settings(void **state)
{
	struct fx *f = *state;
	struct ct_proto_out o;

	orig_at(f, 0, true);
	f->set.udp_timeout = 7;
	o = orig_at(f, 1, false);
	assert_int_equal(o.timeout_ns, ct_secs(7));
}

/* nf_conntrack_udplite_packet: with IPS_SEEN_REPLY, timeouts[REPLIED] and
 * ASSURED at once - no 2 s rule. */
static void test_udplite_assured_on_first_packet_after_reply(void **state)
{
	struct fx *f = *state;
	struct ct_proto_out o;

	o = orig_at(f, 0, true);
	assert_int_equal(o.timeout_ns, ct_secs(31));
	o = reply_at(f, 0.1);
	assert_int_equal(o.timeout_ns, ct_secs(31));
	assert_false(o.set_assured);
	o = orig_at(f, 0.2, false);
	assert_int_equal(o.verdict, CT_PV_ACCEPT);
	assert_int_equal(o.timeout_ns, ct_secs(121));
	assert_true(o.set_assured);
}

/* udplite_error: "UDPLITE mandates checksums" - a zero checksum field is
 * refused (-NF_ACCEPT), whatever nf_conntrack_checksum says. */
static void test_udplite_zero_checksum_is_invalid(void **state)
{
	struct fx *f = *state;
	static uint8_t hdr[8] = { 0x9c, 0x40, 0x00, 0x35, 0x00, 0x00, 0x00, 0x00 };
	struct ct_proto_out o;

	f->po.l4 = hdr;
	f->set.checksum = 0;
	o = orig_at(f, 0, true);
	assert_int_equal(o.verdict, CT_PV_INVALID);
	assert_int_equal(o.reason, CT_PR_L4_BAD_CSUM);
}

/* Same IPS_NAT_CLASH exception in the UDP-Lite tracker. */
static void test_udplite_nat_clash_never_assured(void **state)
{
	struct fx *f = *state;
	struct ct_proto_out o;

	orig_at(f, 0, true);
	reply_at(f, 0.1);
	ct_conn_test_and_set(f->c, CT_ST_NAT_CLASH);
	o = orig_at(f, 0.2, false);
	assert_int_equal(o.timeout_ns, ct_secs(121));
	assert_false(o.set_assured);
}

/* UDP keeps only its creation time: 8 bytes; UDP-Lite needs nothing. */
static void test_udp_private_areas_are_small(void **state)
{
	(void)state;
	assert_int_equal(ct_proto_udp.priv_size, 8);
	assert_int_equal(ct_proto_udplite.priv_size, 0);
	assert_null(ct_proto_udp.state_name);
	assert_null(ct_proto_udplite.state_name);
	assert_string_equal(ct_proto_udp.name, "udp");
	assert_string_equal(ct_proto_udplite.name, "udplite");
	assert_ptr_equal(ct_proto_find(IPPROTO_UDP), &ct_proto_udp);
	assert_ptr_equal(ct_proto_find(IPPROTO_UDPLITE), &ct_proto_udplite);
}

#define UDP(t) cmocka_unit_test_setup_teardown(t, setup_udp, teardown)
#define LITE(t) cmocka_unit_test_setup_teardown(t, setup_udplite, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		UDP(test_udp_first_packet_gets_unreplied_timeout),
		UDP(test_udp_one_way_flow_never_assured),
		UDP(test_udp_first_reply_itself_keeps_unreplied_timeout),
		UDP(test_udp_request_response_within_2s_not_assured),
		UDP(test_udp_exactly_2s_after_creation_is_not_stream),
		UDP(test_udp_packet_after_2s_with_reply_seen_assures),
		UDP(test_udp_reply_direction_packet_can_assure),
		UDP(test_udp_late_first_reply_then_next_packet_assures),
		UDP(test_udp_created_is_first_packet_time),
		UDP(test_udp_nat_clash_entry_extended_but_never_assured),
		UDP(test_udp_reads_current_settings),
		LITE(test_udplite_assured_on_first_packet_after_reply),
		LITE(test_udplite_zero_checksum_is_invalid),
		LITE(test_udplite_nat_clash_never_assured),
		cmocka_unit_test(test_udp_private_areas_are_small),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
