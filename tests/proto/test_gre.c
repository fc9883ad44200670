/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_gre.c - the GRE and generic trackers against the kernel.
 *
 * GRE: nf_conntrack_gre_packet (Linux 6.18) copies timeouts[UNREPLIED]
 * and timeouts[REPLIED] into the entry while it is unconfirmed; with
 * IPS_SEEN_REPLY (status before the packet) it refreshes to the stream
 * value and sets ASSURED unless IPS_NAT_CLASH, otherwise to the unreplied
 * value.  Generic: generic_packet in nf_conntrack_core.c refreshes every
 * packet to nf_conntrack_generic_timeout and never assures.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <netinet/in.h>

#include "proto_test_util.h"

static struct ct_settings set;

static int setup(void **state)
{
	(void)state;
	ct_settings_default(&set);
	set.gre_timeout = 32;
	set.gre_timeout_stream = 181;
	set.generic_timeout = 601;
	return 0;
}

struct flow {
	struct ct_tuple o, r;
	struct ct_packet po, pr;
	struct ct_conn *c;
	const struct ct_proto *p;
};

static void flow_init(struct flow *f, uint8_t l4, uint16_t sport, uint16_t dport)
{
	f->o = ts_tuple4(l4, 0xc0a80001, 0xc0a80002, sport, dport);
	f->r = ts_reverse(&f->o);
	ts_packet_of(&f->po, &f->o);
	ts_packet_of(&f->pr, &f->r);
	f->p = ct_proto_find(l4);
	f->c = conn_new(f->p, &f->o);
}

static struct ct_proto_out go(struct flow *f, enum ct_dir dir, bool is_new,
			      double t)
{
	return track(f->p, f->c, &set, dir == CT_DIR_ORIGINAL ? &f->po : &f->pr,
		     dir, is_new, SEC(t));
}

/* Version 0 GRE (ports 0, as gre_pkt_to_tuple does for != GRE_VERSION_1):
 * unreplied until a reply was seen; the first reply itself still gets the
 * unreplied timeout (SEEN_REPLY is set after the tracker). */
static void test_gre_v0_unreplied_then_stream_and_assured(void **state)
{
	struct flow f;
	struct ct_proto_out o;
	(void)state;

	flow_init(&f, IPPROTO_GRE, 0, 0);
	o = go(&f, CT_DIR_ORIGINAL, true, 0);
	assert_int_equal(o.verdict, CT_PV_ACCEPT);
	assert_int_equal(o.timeout_ns, ct_secs(32));
	assert_false(o.set_assured);
	o = go(&f, CT_DIR_ORIGINAL, false, 1);
	assert_int_equal(o.timeout_ns, ct_secs(32));
	o = go(&f, CT_DIR_REPLY, false, 1.1);
	assert_int_equal(o.timeout_ns, ct_secs(32));
	assert_false(o.set_assured);
	/* no 2 s delay as in UDP: the very next packet assures */
	o = go(&f, CT_DIR_ORIGINAL, false, 1.2);
	assert_int_equal(o.timeout_ns, ct_secs(181));
	assert_true(o.set_assured);
	o = go(&f, CT_DIR_REPLY, false, 1.3);
	assert_int_equal(o.timeout_ns, ct_secs(181));
	assert_false(o.set_assured);  /* already ASSURED */
	assert_int_equal(o.events, 0);
	free(f.c);
}

/* Version 1 (PPTP): dport = call id; the tracker's rules are the same. */
static void test_gre_v1_call_id_flow(void **state)
{
	struct flow f;
	struct ct_proto_out o;
	(void)state;

	flow_init(&f, IPPROTO_GRE, 0, 0x1a2b);
	f.po.u.gre.version = 1;
	f.pr.u.gre.version = 1;
	go(&f, CT_DIR_ORIGINAL, true, 0);
	go(&f, CT_DIR_REPLY, false, 0.5);
	o = go(&f, CT_DIR_REPLY, false, 0.6);
	assert_int_equal(o.timeout_ns, ct_secs(181));
	assert_true(o.set_assured);
	free(f.c);
}

/* ct->proto.gre.timeout / stream_timeout are copied at creation only:
 * later changes of the sysctls do not reach existing entries. */
static void test_gre_timeouts_fixed_at_creation(void **state)
{
	struct flow f;
	struct ct_proto_out o;
	(void)state;

	flow_init(&f, IPPROTO_GRE, 0, 0);
	go(&f, CT_DIR_ORIGINAL, true, 0);
	set.gre_timeout = 5;
	set.gre_timeout_stream = 6;
	o = go(&f, CT_DIR_ORIGINAL, false, 1);
	assert_int_equal(o.timeout_ns, ct_secs(32));
	go(&f, CT_DIR_REPLY, false, 1.1);
	o = go(&f, CT_DIR_ORIGINAL, false, 1.2);
	assert_int_equal(o.timeout_ns, ct_secs(181));
	set.gre_timeout = 32;
	set.gre_timeout_stream = 181;
	free(f.c);
}

/* "never set ASSURED for IPS_NAT_CLASH" (6.5+), timeout still extended. */
static void test_gre_nat_clash_never_assured(void **state)
{
	struct flow f;
	struct ct_proto_out o;
	(void)state;

	flow_init(&f, IPPROTO_GRE, 0, 0);
	go(&f, CT_DIR_ORIGINAL, true, 0);
	go(&f, CT_DIR_REPLY, false, 0.1);
	ct_conn_test_and_set(f.c, CT_ST_NAT_CLASH);
	o = go(&f, CT_DIR_ORIGINAL, false, 0.2);
	assert_int_equal(o.timeout_ns, ct_secs(181));
	assert_false(o.set_assured);
	free(f.c);
}

/* generic_packet: nf_conntrack_generic_timeout for every packet, either
 * direction, never ASSURED even with replies; read at each packet. */
static void test_generic_timeout_both_directions_never_assured(void **state)
{
	struct flow f;
	struct ct_proto_out o;
	(void)state;

	flow_init(&f, 50 /* ESP */, 0, 0);
	assert_ptr_equal(f.p, &ct_proto_generic);
	o = go(&f, CT_DIR_ORIGINAL, true, 0);
	assert_int_equal(o.verdict, CT_PV_ACCEPT);
	assert_int_equal(o.timeout_ns, ct_secs(601));
	o = go(&f, CT_DIR_REPLY, false, 1);
	assert_int_equal(o.timeout_ns, ct_secs(601));
	o = go(&f, CT_DIR_ORIGINAL, false, 5);
	assert_int_equal(o.timeout_ns, ct_secs(601));
	assert_false(o.set_assured);
	set.generic_timeout = 77;
	o = go(&f, CT_DIR_REPLY, false, 6);
	assert_int_equal(o.timeout_ns, ct_secs(77));
	set.generic_timeout = 601;
	free(f.c);
}

/* Private areas: GRE keeps two 32-bit timeouts; generic nothing; both are
 * stateless for conntrack's printing. */
static void test_gre_and_generic_shapes(void **state)
{
	const struct ct_proto *all[] = {
		&ct_proto_udp, &ct_proto_udplite, &ct_proto_icmp,
		&ct_proto_icmpv6, &ct_proto_sctp, &ct_proto_gre,
		&ct_proto_generic,
	};
	(void)state;

	assert_int_equal(ct_proto_gre.priv_size, 8);
	assert_int_equal(ct_proto_generic.priv_size, 0);
	assert_null(ct_proto_gre.state_name);
	assert_null(ct_proto_generic.state_name);
	assert_null(ct_proto_gre.can_early_drop);
	assert_string_equal(ct_proto_gre.name, "gre");
	assert_string_equal(ct_proto_generic.name, "unknown");
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		assert_int_equal(all[i]->priv_size % 8, 0);
		assert_true(all[i]->priv_size <= 64);
		assert_non_null(all[i]->packet);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gre_v0_unreplied_then_stream_and_assured),
		cmocka_unit_test(test_gre_v1_call_id_flow),
		cmocka_unit_test(test_gre_timeouts_fixed_at_creation),
		cmocka_unit_test(test_gre_nat_clash_never_assured),
		cmocka_unit_test(test_generic_timeout_both_directions_never_assured),
		cmocka_unit_test(test_gre_and_generic_shapes),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
