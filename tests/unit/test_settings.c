/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_settings.c - kernel knob names and values.
 *
 * Defaults are the values KERNEL-ORACLE-FACTS.md lists for a fresh network
 * namespace on the test machines (kernel 6.18), acct included: it is the
 * `ctrack` tool, not the library, that turns counters on (settings.h, the
 * man page; tests/cli pins the tool's listing with counters).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "ctrack/settings.h"

static void test_defaults_are_the_kernels(void **state)
{
	struct ct_settings s;

	(void)state;
	ct_settings_default(&s);
	assert_int_equal(s.acct, 0);
	assert_int_equal(s.checksum, 1);
	assert_int_equal(s.tcp_loose, 1);
	assert_int_equal(s.tcp_be_liberal, 0);
	assert_int_equal(s.tcp_max_retrans, 3);
	assert_int_equal(s.tcp_ignore_invalid_rst, 0);
	assert_int_equal(s.generic_timeout, 600);
	assert_int_equal(s.icmp_timeout, 30);
	assert_int_equal(s.icmpv6_timeout, 30);
	assert_int_equal(s.udp_timeout, 30);
	assert_int_equal(s.udp_timeout_stream, 120);
	assert_int_equal(s.gre_timeout, 30);
	assert_int_equal(s.gre_timeout_stream, 180);
	assert_int_equal(s.tcp_timeouts[CT_TCP_TO_SYN_SENT], 120);
	assert_int_equal(s.tcp_timeouts[CT_TCP_TO_SYN_RECV], 60);
	assert_int_equal(s.tcp_timeouts[CT_TCP_TO_ESTABLISHED], 432000);
	assert_int_equal(s.tcp_timeouts[CT_TCP_TO_FIN_WAIT], 120);
	assert_int_equal(s.tcp_timeouts[CT_TCP_TO_CLOSE_WAIT], 60);
	assert_int_equal(s.tcp_timeouts[CT_TCP_TO_LAST_ACK], 30);
	assert_int_equal(s.tcp_timeouts[CT_TCP_TO_TIME_WAIT], 120);
	assert_int_equal(s.tcp_timeouts[CT_TCP_TO_CLOSE], 10);
	assert_int_equal(s.tcp_timeouts[CT_TCP_TO_RETRANS], 300);
	assert_int_equal(s.tcp_timeouts[CT_TCP_TO_UNACK], 300);
	assert_int_equal(s.sctp_timeouts[CT_SCTP_TO_CLOSED], 10);
	assert_int_equal(s.sctp_timeouts[CT_SCTP_TO_COOKIE_WAIT], 3);
	assert_int_equal(s.sctp_timeouts[CT_SCTP_TO_COOKIE_ECHOED], 3);
	assert_int_equal(s.sctp_timeouts[CT_SCTP_TO_ESTABLISHED], 210);
	assert_int_equal(s.sctp_timeouts[CT_SCTP_TO_SHUTDOWN_SENT], 3);
	assert_int_equal(s.sctp_timeouts[CT_SCTP_TO_SHUTDOWN_RECD], 3);
	assert_int_equal(s.sctp_timeouts[CT_SCTP_TO_SHUTDOWN_ACK_SENT], 3);
	assert_int_equal(s.sctp_timeouts[CT_SCTP_TO_HEARTBEAT_SENT], 30);
}

static void test_names_with_and_without_prefix_and_slashes(void **state)
{
	struct ct_settings s;
	char buf[32];

	(void)state;
	ct_settings_default(&s);
	assert_int_equal(ct_settings_set(&s, "nf_conntrack_udp_timeout", "45", NULL), CT_SETTINGS_OK);
	assert_int_equal(s.udp_timeout, 45);
	assert_int_equal(ct_settings_set(&s, "net.netfilter.nf_conntrack_udp_timeout", " 46 ", NULL), CT_SETTINGS_OK);
	assert_int_equal(s.udp_timeout, 46);
	assert_int_equal(ct_settings_set(&s, "net/netfilter/nf_conntrack_udp_timeout", "47\n", NULL), CT_SETTINGS_OK);
	assert_int_equal(s.udp_timeout, 47);
	assert_int_equal(ct_settings_get(&s, "nf_conntrack_udp_timeout", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "47");
}

static void test_syn_sent_timeout_also_sets_syn_sent2(void **state)
{
	struct ct_settings s;

	(void)state;
	ct_settings_default(&s);
	assert_int_equal(ct_settings_set(&s, "nf_conntrack_tcp_timeout_syn_sent", "7", NULL), 0);
	assert_int_equal(s.tcp_timeouts[CT_TCP_TO_SYN_SENT], 7);
	assert_int_equal(s.tcp_timeouts[CT_TCP_TO_SYN_SENT2], 7);
}

static void test_bad_values_leave_settings_unchanged(void **state)
{
	struct ct_settings s, before;
	const char *msg = NULL;

	(void)state;
	ct_settings_default(&s);
	before = s;
	assert_int_equal(ct_settings_set(&s, "nf_conntrack_tcp_loose", "2", &msg), CT_SETTINGS_BAD_VALUE);
	assert_non_null(msg);
	assert_int_equal(ct_settings_set(&s, "nf_conntrack_tcp_loose", "-1", &msg), CT_SETTINGS_BAD_VALUE);
	assert_int_equal(ct_settings_set(&s, "nf_conntrack_tcp_loose", "1x", &msg), CT_SETTINGS_BAD_VALUE);
	assert_int_equal(ct_settings_set(&s, "nf_conntrack_tcp_loose", "", &msg), CT_SETTINGS_BAD_VALUE);
	assert_int_equal(ct_settings_set(&s, "nf_conntrack_max", "99999999999", &msg), CT_SETTINGS_BAD_VALUE);
	assert_int_equal(ct_settings_set(&s, "nf_conntrack_tcp_timeout_established", "400000000", &msg), CT_SETTINGS_BAD_VALUE);
	assert_memory_equal(&s, &before, sizeof(s));
}

static void test_unknown_read_only_and_ignored_names(void **state)
{
	struct ct_settings s, before;
	const char *msg = NULL;

	(void)state;
	ct_settings_default(&s);
	before = s;
	assert_int_equal(ct_settings_set(&s, "nf_conntrack_frobnicate", "1", &msg), CT_SETTINGS_UNKNOWN);
	assert_non_null(msg);
	assert_int_equal(ct_settings_set(&s, "nf_conntrack_count", "1", &msg), CT_SETTINGS_READ_ONLY);
	assert_int_equal(ct_settings_set(&s, "nf_conntrack_log_invalid", "6", &msg), CT_SETTINGS_IGNORED);
	assert_int_equal(ct_settings_set(&s, "nf_conntrack_helper", "0", &msg), CT_SETTINGS_IGNORED);
	assert_memory_equal(&s, &before, sizeof(s));
}

static void test_every_listed_name_can_be_read_back(void **state)
{
	struct ct_settings s;
	char buf[32];
	unsigned n = 0;

	(void)state;
	ct_settings_default(&s);
	for (const char *name; (name = ct_settings_name(n)); n++)
		assert_int_equal(ct_settings_get(&s, name, buf, sizeof(buf)), 0);
	assert_true(n >= 30);
}

/* The shortest timeout is the least of every entry timeout a knob sets:
 * each timeout knob the library lists (ct_settings_name; the reassembly's
 * frag6_timeout is no entry's) in turn made the least, and the two the
 * one the kernel keeps that no knob of its own names (syn_sent2) set
 * directly. */
static void test_min_timeout_is_the_least_entry_timeout(void **state)
{
	struct ct_settings all100, s;
	const char *msg;
	unsigned n_timeouts = 0;

	(void)state;
	ct_settings_default(&s);
	/* the kernel's defaults: SCTP's COOKIE_WAIT and friends, 3 s */
	assert_int_equal(ct_settings_min_timeout(&s), 3);
	ct_settings_default(&all100);
	for (unsigned i = 0; ct_settings_name(i); i++) {
		const char *name = ct_settings_name(i);

		if (strstr(name, "timeout") && !strstr(name, "frag"))
			assert_int_equal(ct_settings_set(&all100, name, "100", &msg), CT_SETTINGS_OK);
	}
	all100.tcp_timeouts[CT_TCP_TO_SYN_SENT2] = 100;
	assert_int_equal(ct_settings_min_timeout(&all100), 100);
	for (unsigned i = 0; ct_settings_name(i); i++) {
		const char *name = ct_settings_name(i);

		if (!strstr(name, "timeout"))
			continue;
		s = all100;
		assert_int_equal(ct_settings_set(&s, name, "7", &msg), CT_SETTINGS_OK);
		assert_int_equal(ct_settings_min_timeout(&s), strstr(name, "frag") ? 100 : 7);
		n_timeouts++;
	}
	assert_true(n_timeouts >= 25);
	s = all100;
	s.tcp_timeouts[CT_TCP_TO_SYN_SENT2] = 7;
	assert_int_equal(ct_settings_min_timeout(&s), 7);
	s = all100;
	s.frag_timeout = 1;
	assert_int_equal(ct_settings_min_timeout(&s), 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_are_the_kernels),
		cmocka_unit_test(test_names_with_and_without_prefix_and_slashes),
		cmocka_unit_test(test_syn_sent_timeout_also_sets_syn_sent2),
		cmocka_unit_test(test_bad_values_leave_settings_unchanged),
		cmocka_unit_test(test_unknown_read_only_and_ignored_names),
		cmocka_unit_test(test_every_listed_name_can_be_read_back),
		cmocka_unit_test(test_min_timeout_is_the_least_entry_timeout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
