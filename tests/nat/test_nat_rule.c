/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_nat_rule.c - the tool's NAT rule syntax (tools/ctrack/nat_rule.c):
 * what each form means, that a malformed rule is an error naming the rule
 * and the column, that a rule that can never match is a warning, files
 * of rules, and which rule a packet meets first.
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

#include "nat_rule.h"

static uint32_t a4(const char *s)
{
	struct in_addr a;

	assert_int_equal(inet_pton(AF_INET, s, &a), 1);
	return a.s_addr;
}

static void a6(const char *s, uint8_t *out)
{
	assert_int_equal(inet_pton(AF_INET6, s, out), 1);
}

static struct nat_rule ok(const char *text)
{
	struct nat_rule r;
	struct nat_rule_diag err, w;

	if (nat_rule_parse(text, &r, &err, &w) != 0)
		fail_msg("'%s': column %u: %s", text, err.column, err.msg);
	if (w.msg[0])
		fail_msg("'%s': unexpected warning: %s", text, w.msg);
	return r;
}

static void bad(const char *text, unsigned column, const char *part)
{
	struct nat_rule r;
	struct nat_rule_diag err;

	if (nat_rule_parse(text, &r, &err, NULL) == 0)
		fail_msg("'%s' parsed", text);
	if (err.column != column || !strstr(err.msg, part))
		fail_msg("'%s': got column %u '%s', want column %u and '%s'", text, err.column,
			 err.msg, column, part);
}

static void warns(const char *text, const char *part)
{
	struct nat_rule r;
	struct nat_rule_diag err, w;

	if (nat_rule_parse(text, &r, &err, &w) != 0)
		fail_msg("'%s': column %u: %s", text, err.column, err.msg);
	if (!strstr(w.msg, part))
		fail_msg("'%s': warning '%s', want '%s'", text, w.msg, part);
}

static void test_snat_and_dnat_targets(void **state)
{
	struct nat_rule r;
	uint8_t x[16], y[16];

	(void)state;
	r = ok("snat to 203.0.113.1");
	assert_int_equal(r.action, NAT_RULE_SNAT);
	assert_int_equal(r.range.flags, CT_NAT_RANGE_MAP_IPS);
	assert_int_equal(r.range.min_addr.ip4, a4("203.0.113.1"));
	assert_int_equal(r.range.max_addr.ip4, a4("203.0.113.1"));
	assert_int_equal(r.to_family, CT_L3_IPV4);

	r = ok("snat to 203.0.113.1-203.0.113.9:1024-2047 persistent");
	assert_int_equal(r.range.flags, CT_NAT_RANGE_MAP_IPS | CT_NAT_RANGE_PROTO_SPECIFIED |
					CT_NAT_RANGE_PERSISTENT);
	assert_int_equal(r.range.max_addr.ip4, a4("203.0.113.9"));
	assert_int_equal(r.range.min_proto, 1024);
	assert_int_equal(r.range.max_proto, 2047);

	r = ok("dnat to 10.1.1.1:8080 random,fully-random");
	assert_int_equal(r.action, NAT_RULE_DNAT);
	assert_int_equal(r.range.flags, CT_NAT_RANGE_MAP_IPS | CT_NAT_RANGE_PROTO_SPECIFIED |
					CT_NAT_RANGE_PROTO_RANDOM | CT_NAT_RANGE_PROTO_RANDOM_FULLY);
	assert_int_equal(r.range.min_proto, 8080);
	assert_int_equal(r.range.max_proto, 8080);

	r = ok("dnat to [fd00::1]-[fd00::5]:8000-8010 random persistent");
	a6("fd00::1", x);
	a6("fd00::5", y);
	assert_memory_equal(r.range.min_addr.ip6, x, 16);
	assert_memory_equal(r.range.max_addr.ip6, y, 16);
	assert_int_equal(r.range.min_proto, 8000);
	assert_int_equal(r.to_family, CT_L3_IPV6);
	assert_true(r.range.flags & CT_NAT_RANGE_PERSISTENT);

	r = ok("dnat ip6 to fd00::1:80");  /* bare IPv6: the :80 is address */
	a6("fd00::1:80", x);
	assert_memory_equal(r.range.min_addr.ip6, x, 16);
	assert_false(r.range.flags & CT_NAT_RANGE_PROTO_SPECIFIED);

	r = ok("snat ip prefix to 10.9.0.0/24");
	assert_int_equal(r.range.flags, CT_NAT_RANGE_MAP_IPS | CT_NAT_RANGE_NETMAP);
	assert_int_equal(r.range.min_addr.ip4, a4("10.9.0.0"));
	assert_int_equal(r.range.max_addr.ip4, a4("10.9.0.255"));

	r = ok("masquerade to 198.51.100.7:30000-30999 random");
	assert_int_equal(r.action, NAT_RULE_MASQUERADE);
	assert_int_equal(r.range.min_addr.ip4, a4("198.51.100.7"));
	assert_int_equal(r.range.min_proto, 30000);
	assert_true(r.range.flags & CT_NAT_RANGE_PROTO_RANDOM);
}

static void test_matches_including_nftables_spellings(void **state)
{
	struct nat_rule r;
	uint8_t x[16];

	(void)state;
	r = ok("ip saddr 10.0.0.1/8 tcp dport 80 dnat to 10.1.1.1:8080");
	assert_int_equal(r.family, CT_L3_IPV4);
	assert_true(r.saddr.set);
	assert_int_equal(r.saddr.len, 8);
	assert_int_equal(r.saddr.addr.ip4, a4("10.0.0.0")); /* host bits masked */
	assert_int_equal(r.l4, 6);
	assert_int_equal(r.dport.lo, 80);
	assert_int_equal(r.dport.hi, 80);

	r = ok("meta l4proto udp ct zone 3 sport 1000-2000 iif 2 iifname \"eth1\" snat to 1.2.3.4");
	assert_int_equal(r.l4, 17);
	assert_int_equal(r.zone, 3);
	assert_int_equal(r.iif, 2);
	assert_string_equal(r.iifname, "eth1");
	assert_int_equal(r.sport.lo, 1000);
	assert_int_equal(r.sport.hi, 2000);

	r = ok("ip6 daddr 2001:db8::/32 l4proto 132 dnat to [2001:db8::9]:80");
	assert_int_equal(r.l4, 132);
	a6("2001:db8::", x);
	assert_memory_equal(r.daddr.addr.ip6, x, 16);
	assert_int_equal(r.daddr.len, 32);
	assert_int_equal(r.zone, -1);
	assert_int_equal(r.iif, -1);
}

static void test_malformed_rules_name_the_column(void **state)
{
	(void)state;
	bad("snat to 10.0.0.300", 9, "'10.0.0.300' is not an IPv4 or IPv6 address");
	bad("dnat to 10.0.0.1:99999", 18, "'99999' is not a port");
	bad("dnat to 10.0.0.1:80-7x", 21, "'7x' is not a port");
	bad("tcp dport 90-80 snat to 1.1.1.1", 11, "runs backwards");
	bad("saddr 10.0.0.0/33 snat to 1.1.1.1", 16, "not a prefix length");
	bad("bogus snat to 1.1.1.1", 1, "'bogus' is not a match");
	bad("tcp dport 80", 13, "no action");
	bad("snat", 5, "needs the target address");
	bad("snat to 1.1.1.1 sometimes", 17, "unexpected 'sometimes'");
	bad("snat to 1.1.1.1 random,always", 24, "'always' is not a flag");
	bad("masquerade random", 12, "masquerade needs 'to ADDRESS'");
	bad("masquerade to 1.1.1.1-1.1.1.2", 15, "one address, not a range");
	bad("tcp udp snat to 1.1.1.1", 5, "a second protocol 'udp'");
	bad("saddr 1.1.1.1 saddr 2.2.2.2 snat to 3.3.3.3", 15, "'saddr' given twice");
	bad("ip ip6 snat to 1.1.1.1", 4, "contradicts");
	bad("dnat to [fd00::1:80", 9, "'[' without ']'");
	bad("dnat to [fd00::1]x", 18, "unexpected 'x'");
	bad("snat to 1.1.1.9-1.1.1.1", 9, "runs backwards");
	bad("snat to 1.1.1.1-fd00::1", 9, "mixes IPv4 and IPv6");
	bad("zone 70000 snat to 1.1.1.1", 6, "not a zone");
	bad("snat ip6 to 1.1.1.1", 13, "not an IPv6 address");
	bad("snat prefix 10.0.0.0/8", 13, "expected 'to' after 'prefix'");
	bad("meta zone 3 snat to 1.1.1.1", 6, "expected 'l4proto' after 'meta'");
	bad("l4proto bogus snat to 1.1.1.1", 9, "'bogus' is not a protocol");
	bad("", 1, "empty rule");
	bad("   ", 1, "empty rule");
}

static void test_rules_that_can_never_match_are_warnings(void **state)
{
	(void)state;
	warns("ip saddr fd00::/8 snat to 1.1.1.1", "saddr is of the other family");
	warns("saddr 10.0.0.0/8 daddr fd00::/8 snat to 1.1.1.1", "different families");
	warns("icmp dport 80 snat to 1.1.1.1", "without ports");
	warns("ip6 snat to 1.1.1.1", "other family");
	warns("icmpv6 snat to 1.1.1.1", "other family");
	warns("ip6 icmp snat to [fd00::1]", "icmp is IPv4's");
	warns("saddr 0.0.0.0 masquerade to 1.1.1.1", "0.0.0.0");
}

static void test_messages_and_files(void **state)
{
	char path[] = "/tmp/ct-nat-rules-XXXXXX", msg[600], buf[600];
	struct nat_rules rs = { 0 };
	struct nat_rule_diag d = { 9, "'x' is wrong" };
	int fd;
	FILE *f;

	(void)state;
	nat_rule_format(buf, sizeof(buf), "--nat", "snat to x", &d);
	assert_string_equal(buf, "--nat: rule 'snat to x': column 9: 'x' is wrong");

	assert_int_equal(nat_rules_add(&rs, "--nat", "snat to 1.2.3.4", msg, sizeof(msg),
				       NULL, NULL), 0);
	assert_int_equal(nat_rules_add(&rs, "--nat", "snat to 1.2.3", msg, sizeof(msg),
				       NULL, NULL), -1);
	assert_string_equal(msg, "--nat: rule 'snat to 1.2.3': column 9: '1.2.3' is not an "
				 "IPv4 or IPv6 address");
	assert_int_equal(rs.n, 1);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "# port forward\n\n  tcp dport 80 dnat to 10.1.1.1:8080   # web\n"
		   "snat to 203.0.113.1\ndnat to 10.0.0.1:0-\n");
	fclose(f);
	assert_int_equal(nat_rules_load(&rs, path, msg, sizeof(msg), NULL, NULL), -1);
	snprintf(buf, sizeof(buf), "%s:5: rule 'dnat to 10.0.0.1:0-': column 20: '' is not a port (0-65535)",
		 path);
	assert_string_equal(msg, buf);
	/* the two good rules before the bad one were taken */
	assert_int_equal(rs.n, 3);
	assert_int_equal(rs.v[1].dport.lo, 80);
	unlink(path);
	assert_int_equal(nat_rules_load(&rs, "/nonexistent/rules", msg, sizeof(msg), NULL, NULL),
			 -1);
	assert_non_null(strstr(msg, "/nonexistent/rules: No such file"));
	nat_rules_free(&rs);
}

static void collect(void *arg, const char *line)
{
	snprintf(arg, 600, "%s", line);
}

static void test_warnings_reach_the_caller_formatted(void **state)
{
	struct nat_rules rs = { 0 };
	char msg[600], got[600] = "";

	(void)state;
	assert_int_equal(nat_rules_add(&rs, "rules.nat:4", "icmp dport 1 snat to 1.1.1.1", msg,
				       sizeof(msg), collect, got), 0);
	assert_string_equal(got, "rules.nat:4: rule 'icmp dport 1 snat to 1.1.1.1': column 1: "
				 "can never match: sport/dport on a protocol without ports");
	nat_rules_free(&rs);
}

static struct ct_tuple t4(uint8_t l4, const char *s, uint16_t sp, const char *d, uint16_t dp)
{
	struct ct_tuple t;

	memset(&t, 0, sizeof(t));
	t.l3 = CT_L3_IPV4;
	t.l4 = l4;
	t.src.ip4 = a4(s);
	t.dst.ip4 = a4(d);
	t.sport = sp;
	t.dport = dp;
	return t;
}

static void test_first_matching_rule_of_each_kind(void **state)
{
	struct nat_rules rs = { 0 };
	char msg[600];
	struct ct_tuple web = t4(6, "10.0.0.5", 40000, "198.51.100.1", 80);
	struct ct_tuple dns = t4(17, "10.0.0.5", 40000, "198.51.100.1", 53);
	struct ct_tuple ping = t4(1, "10.0.0.5", 7, "198.51.100.1", 8 << 8);
	struct ct_tuple v6;
	const char *rules[] = {
		"tcp dport 80 dnat to 10.1.1.1:8080",
		"saddr 10.0.0.0/8 sport 30000-50000 snat to 203.0.113.1",
		"dport 53 dnat to 10.1.1.2",
		"snat to 203.0.113.2",
		"zone 5 dnat to 10.1.1.3",
		"iifname wan dnat to 10.1.1.4",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		assert_int_equal(nat_rules_add(&rs, "--nat", rules[i], msg, sizeof(msg), NULL,
					       NULL), 0);
	assert_ptr_equal(nat_rules_first(&rs, CT_NAT_MANIP_DST, &web, 0, NULL), &rs.v[0]);
	assert_ptr_equal(nat_rules_first(&rs, CT_NAT_MANIP_SRC, &web, 0, NULL), &rs.v[1]);
	assert_ptr_equal(nat_rules_first(&rs, CT_NAT_MANIP_DST, &dns, 0, NULL), &rs.v[2]);
	/* ports only match protocols that have them: not the ping */
	assert_ptr_equal(nat_rules_first(&rs, CT_NAT_MANIP_SRC, &ping, 0, NULL), &rs.v[3]);
	assert_null(nat_rules_first(&rs, CT_NAT_MANIP_DST, &ping, 0, NULL));
	ping.zone = 5;
	assert_ptr_equal(nat_rules_first(&rs, CT_NAT_MANIP_DST, &ping, 0, NULL), &rs.v[4]);
	ping.zone = 0;
	assert_ptr_equal(nat_rules_first(&rs, CT_NAT_MANIP_DST, &ping, 1, "wan"), &rs.v[5]);
	/* an IPv4 target never applies to IPv6 */
	memset(&v6, 0, sizeof(v6));
	v6.l3 = CT_L3_IPV6;
	v6.l4 = 6;
	v6.dport = 80;
	assert_null(nat_rules_first(&rs, CT_NAT_MANIP_DST, &v6, 0, NULL));
	assert_null(nat_rules_first(&rs, CT_NAT_MANIP_SRC, &v6, 0, NULL));
	nat_rules_free(&rs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snat_and_dnat_targets),
		cmocka_unit_test(test_matches_including_nftables_spellings),
		cmocka_unit_test(test_malformed_rules_name_the_column),
		cmocka_unit_test(test_rules_that_can_never_match_are_warnings),
		cmocka_unit_test(test_messages_and_files),
		cmocka_unit_test(test_warnings_reach_the_caller_formatted),
		cmocka_unit_test(test_first_matching_rule_of_each_kind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
