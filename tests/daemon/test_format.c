/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_format.c - the hand-written printer (tools/ctrack/format.c, with
 * the library's tuple writers of base/tuple.c) against independent
 * references: every address against inet_ntop(3), every number of the
 * one decimal writer (ctrack/dec.h: ports, counters, ids) against
 * printf's %llu at every digit count and edge, every text
 * line against the snprintf printer it replaced (support/format_ref.c), byte for
 * byte, over random entries and events of every protocol, family and
 * flag; the fields the old printer did not have (id=, delta-time=,
 * [start=]) against the layout conntrack 1.4.7 prints (ctrack(1) quotes
 * it: "... [ASSURED] mark=0 delta-time=0 [start=Tue Dec  1 20:57:46 2026]
 * use=1 id=670332314"); and the JSON lines by parsing them back with
 * jansson and comparing each member with the entry it came from.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>

#include <arpa/inet.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format.h"
#include "support/format_ref.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Addresses with many zero groups, the cases where compression matters. */
static void rnd_addr(uint8_t l3, union ct_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (l3 == CT_L3_IPV4) {
		uint32_t v = (uint32_t)rnd();

		if (rnd() % 4 == 0)
			v &= 0xff00ff00u;
		a->ip4 = v;
		return;
	}
	for (int i = 0; i < 8; i++) {
		unsigned k = (unsigned)(rnd() % 5);
		uint16_t w = k < 2 ? 0 : k == 2 ? (uint16_t)(rnd() % 16) : (uint16_t)rnd();

		a->ip6[2 * i] = (uint8_t)(w >> 8);
		a->ip6[2 * i + 1] = (uint8_t)w;
	}
	switch (rnd() % 8) {
	case 0:   /* ::ffff:a.b.c.d */
		memset(a->ip6, 0, 10);
		a->ip6[10] = a->ip6[11] = 0xff;
		break;
	case 1:   /* ::a.b.c.d */
		memset(a->ip6, 0, 12);
		break;
	case 2:
		memset(a->ip6, 0, 16);
		a->ip6[15] = (uint8_t)(rnd() % 3);
		break;
	default:
		break;
	}
}

static const uint8_t l4s[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_UDPLITE, IPPROTO_SCTP,
			       IPPROTO_DCCP, IPPROTO_ICMP, IPPROTO_ICMPV6, IPPROTO_GRE, 89, 0, 254 };

static void rnd_conn(struct ct_conn_info *ci)
{
	uint8_t l3 = rnd() % 2 ? CT_L3_IPV4 : CT_L3_IPV6;

	memset(ci, 0, sizeof(*ci));
	ci->orig.l3 = l3;
	ci->orig.l4 = l4s[rnd() % sizeof(l4s)];
	rnd_addr(l3, &ci->orig.src);
	rnd_addr(l3, &ci->orig.dst);
	ci->orig.sport = (uint16_t)rnd();
	ci->orig.dport = (uint16_t)(rnd() % 3 ? rnd() : 0);
	if (ci->orig.l4 == IPPROTO_ICMP)
		ci->orig.dport = (uint16_t)(8 << 8 | (rnd() % 2));
	ci->orig.zone = (uint16_t)(rnd() % 4 ? 0 : rnd());
	if (!ct_tuple_invert(&ci->orig, &ci->reply))
		ci->reply = ci->orig;
	ci->id = (uint32_t)rnd();
	ci->status = (uint32_t)(rnd() & (CT_ST_SEEN_REPLY | CT_ST_ASSURED | CT_ST_CONFIRMED));
	ci->mark = rnd() % 3 ? 0 : (uint32_t)rnd();
	ci->l4state = (uint8_t)(rnd() % 10);
	ci->state_name = ct_l4_state_name(ci->orig.l4, ci->l4state);
	for (int d = 0; d < 2; d++) {
		ci->packets[d] = rnd() % 2 ? rnd() % 1000 : rnd();
		ci->bytes[d] = rnd() % 2 ? rnd() % 100000 : rnd();
	}
	ci->expires = 1000000000ull * (rnd() % 500000);
	if (rnd() % 2) {
		ci->first_seen = 1700000000ull * 1000000000ull + rnd() % 1000000000000ull;
		ci->last_seen = ci->first_seen + rnd() % 1000000000000ull;
	}
	if (rnd() % 4 == 0)
		for (int i = 0; i < 16; i++)
			ci->labels[i] = (uint8_t)rnd();
}

static void test_addresses_are_inet_ntops(void **st)
{
	(void)st;
	for (int n = 0; n < 200000; n++) {
		uint8_t l3 = n % 3 ? CT_L3_IPV6 : CT_L3_IPV4;
		union ct_addr a;
		char want[INET6_ADDRSTRLEN], got[64];
		size_t len;

		rnd_addr(l3, &a);
		inet_ntop(l3 == CT_L3_IPV6 ? AF_INET6 : AF_INET,
			  l3 == CT_L3_IPV6 ? (const void *)a.ip6 : (const void *)&a.ip4, want,
			  sizeof(want));
		len = (size_t)(ct_tuple_put_addr(got, l3, &a) - got);
		got[len] = 0;
		assert_string_equal(got, want);
	}
}

/* ct_dec_put against printf: 0, each power of ten and its neighbours
 * (every digit count and carry), each power of two and its neighbours
 * (the 32-bit path's end at 2^32 - 1 among them), the top of the range,
 * random values of every width; and nothing written after the digits. */
static void check_dec(uint64_t v)
{
	char want[32], got[CT_DEC_TEXT_MAX + 8];
	char *e;

	snprintf(want, sizeof(want), "%" PRIu64, v);
	memset(got, '#', sizeof(got));
	e = ct_dec_put(got, v);
	assert_int_equal(e - got, strlen(want));
	assert_memory_equal(got, want, strlen(want));
	for (char *q = e; q < got + sizeof(got); q++)
		assert_int_equal(*q, '#');
}

static void test_numbers_are_printfs(void **st)
{
	uint64_t p10 = 1;

	(void)st;
	check_dec(0);
	check_dec(UINT64_MAX);
	check_dec(UINT64_MAX - 1);
	for (int k = 0; k < 20; k++, p10 *= 10) {
		check_dec(p10 - 1);
		check_dec(p10);
		check_dec(p10 + 1);
	}
	for (int k = 0; k < 64; k++) {
		check_dec((1ull << k) - 1);
		check_dec(1ull << k);
		check_dec((1ull << k) + 1);
	}
	for (int n = 0; n < 200000; n++)
		check_dec(rnd() >> (n % 64));
}

static void test_text_lines_are_the_snprintf_printers(void **st)
{
	(void)st;
	for (int n = 0; n < 100000; n++) {
		struct ct_conn_info ci;
		struct fmt_opts o;
		struct ref_opts ro;
		char got[FMT_LINE_MAX + 2], *want = NULL;
		size_t wl = 0, len;
		FILE *m = open_memstream(&want, &wl);
		long long left = (long long)(rnd() % 500000) - 2;

		rnd_conn(&ci);
		memset(&o, 0, sizeof(o));
		o.format = n % 2 ? FMT_EXTENDED : FMT_CONNTRACK;
		o.acct = rnd() % 2;
		ro.format = o.format == FMT_EXTENDED ? REF_EXTENDED : REF_CONNTRACK;
		ro.acct = o.acct;
		if (n % 3 == 0) {
			struct ct_event ev;

			memset(&ev, 0, sizeof(ev));
			ev.type = (enum ct_event_type)(rnd() % 3);
			ev.what = (uint32_t)rnd() & 0x53f;
			ev.destroy_cause = (enum ct_destroy_cause)(rnd() % 7);
			ev.ts = rnd() % 2 ? ci.expires + rnd() % 3000000000ull
					  : ci.expires - rnd() % (ci.expires + 1);
			ev.conn = ci;
			ref_event(m, &ro, &ev, ev.ts);
			len = fmt_event_line(got, &o, &ev, ev.ts, true);
		} else {
			ref_listing(m, &ro, &ci, left);
			len = fmt_listing_line(got, &o, &ci, left, 0);
		}
		fclose(m);
		assert_true(len <= FMT_LINE_MAX);
		got[len++] = '\n';
		got[len] = 0;
		assert_string_equal(got, want);
		free(want);
	}
}

static void test_id_delta_time_and_ktimestamp_where_conntrack_puts_them(void **st)
{
	(void)st;
	for (int n = 0; n < 20000; n++) {
		struct ct_conn_info ci;
		struct fmt_opts o;
		struct ref_opts ro = { REF_CONNTRACK, true };
		char got[FMT_LINE_MAX + 1], want[FMT_LINE_MAX * 2], *ref = NULL, *use;
		size_t rl = 0, len;
		FILE *m = open_memstream(&ref, &rl);
		ct_time_ns now;
		int64_t wall = (int64_t)(rnd() % 1000000) * 1000000000ll;

		rnd_conn(&ci);
		if (!ci.first_seen)
			ci.first_seen = 5000000000ull + rnd() % 100000000000ull;
		now = ci.first_seen + rnd() % 100000000000ull;
		memset(&o, 0, sizeof(o));
		o.format = FMT_CONNTRACK;
		o.acct = true;
		o.id = true;
		o.delta_time = true;
		o.ktimestamp = n % 2;
		o.wall_ns = wall;
		ref_listing(m, &ro, &ci, 5);
		fclose(m);
		ref[strlen(ref) - 1] = 0;          /* the newline */
		use = strstr(ref, " use=1");
		assert_non_null(use);
		*use = 0;
		{
			long long delta = (long long)(((int64_t)now + wall) / 1000000000ll -
						      ((int64_t)ci.first_seen + wall) / 1000000000ll);
			int k = snprintf(want, sizeof(want), "%s delta-time=%lld", ref, delta);

			if (o.ktimestamp) {
				time_t t = (time_t)(((int64_t)ci.first_seen + wall) / 1000000000ll);
				char *c = ctime(&t);

				c[strlen(c) - 1] = 0;
				k += snprintf(want + k, sizeof(want) - (size_t)k, " [start=%s]", c);
			}
			snprintf(want + k, sizeof(want) - (size_t)k, " use=1 id=%llu",
				 (unsigned long long)ci.id);
		}
		len = fmt_listing_line(got, &o, &ci, 5, now);
		got[len] = 0;
		assert_string_equal(got, want);
		free(ref);
	}
}

static bool same_addr(const char *text, uint8_t l3, const union ct_addr *a)
{
	union ct_addr b;

	memset(&b, 0, sizeof(b));
	if (inet_pton(l3 == CT_L3_IPV6 ? AF_INET6 : AF_INET, text, l3 == CT_L3_IPV6 ?
		      (void *)b.ip6 : (void *)&b.ip4) != 1)
		return false;
	return !memcmp(&b, a, sizeof(b));
}

static void check_tuple(json_t *t, const struct ct_tuple *tu, uint64_t pk, uint64_t by,
			bool acct)
{
	assert_true(same_addr(json_string_value(json_object_get(t, "src")), tu->l3, &tu->src));
	assert_true(same_addr(json_string_value(json_object_get(t, "dst")), tu->l3, &tu->dst));
	if (tu->l4 == IPPROTO_ICMP || tu->l4 == IPPROTO_ICMPV6) {
		assert_int_equal(json_integer_value(json_object_get(t, "type")), tu->dport >> 8);
		assert_int_equal(json_integer_value(json_object_get(t, "code")), tu->dport & 0xff);
		assert_int_equal(json_integer_value(json_object_get(t, "id")), tu->sport);
	} else if (tu->l4 == IPPROTO_GRE) {
		assert_int_equal(json_integer_value(json_object_get(t, "srckey")), tu->sport);
		assert_int_equal(json_integer_value(json_object_get(t, "dstkey")), tu->dport);
	} else {
		assert_int_equal(json_integer_value(json_object_get(t, "sport")), tu->sport);
		assert_int_equal(json_integer_value(json_object_get(t, "dport")), tu->dport);
	}
	if (acct) {
		assert_true((uint64_t)json_integer_value(json_object_get(t, "packets")) == pk);
		assert_true((uint64_t)json_integer_value(json_object_get(t, "bytes")) == by);
	} else {
		assert_null(json_object_get(t, "packets"));
	}
}

static void test_json_lines_carry_every_field(void **st)
{
	(void)st;
	for (int n = 0; n < 20000; n++) {
		struct ct_conn_info ci;
		struct ct_event ev;
		struct fmt_opts o;
		char line[FMT_LINE_MAX + 1], hex[33];
		size_t len;
		json_error_t je;
		json_t *j, *what;
		bool is_ev = n % 2;

		rnd_conn(&ci);
		/* jansson reads integers as int64_t */
		for (int d = 0; d < 2; d++) {
			ci.packets[d] >>= 1;
			ci.bytes[d] >>= 1;
		}
		memset(&o, 0, sizeof(o));
		o.format = FMT_JSON;
		o.acct = rnd() % 2;
		o.wall_ns = (int64_t)(rnd() % 1000) * 1000000000ll;
		memset(&ev, 0, sizeof(ev));
		ev.type = (enum ct_event_type)(rnd() % 3);
		ev.what = (uint32_t)rnd() & 0x53f;
		ev.destroy_cause = (enum ct_destroy_cause)(rnd() % 8);
		ev.ts = 123456789012ull + rnd() % 1000000000000ull;
		ev.conn = ci;
		len = is_ev ? fmt_event_line(line, &o, &ev, ev.ts, false)
			    : fmt_listing_line(line, &o, &ci, 77, 0);
		assert_true(len <= FMT_LINE_MAX);
		j = json_loadb(line, len, 0, &je);
		if (!j)
			fail_msg("not JSON (%s): %.*s", je.text, (int)len, line);
		assert_int_equal(json_integer_value(json_object_get(j, "l3num")), ci.orig.l3);
		assert_int_equal(json_integer_value(json_object_get(j, "protonum")), ci.orig.l4);
		check_tuple(json_object_get(j, "orig"), &ci.orig, ci.packets[0], ci.bytes[0], o.acct);
		check_tuple(json_object_get(j, "reply"), &ci.reply, ci.packets[1], ci.bytes[1], o.acct);
		assert_int_equal(json_integer_value(json_object_get(j, "mark")), ci.mark);
		assert_int_equal(json_integer_value(json_object_get(j, "zone")), ci.orig.zone);
		assert_int_equal(json_integer_value(json_object_get(j, "id")), ci.id);
		assert_int_equal(json_integer_value(json_object_get(j, "status")), ci.status);
		assert_int_equal(json_integer_value(json_object_get(j, "l4state")), ci.l4state);
		assert_int_equal(json_is_true(json_object_get(j, "assured")),
				 !!(ci.status & CT_ST_ASSURED));
		assert_int_equal(json_is_true(json_object_get(j, "unreplied")),
				 !(ci.status & CT_ST_SEEN_REPLY));
		if (ci.state_name)
			assert_string_equal(json_string_value(json_object_get(j, "state")),
					    ci.state_name);
		else
			assert_null(json_object_get(j, "state"));
		for (int i = 0; i < 16; i++)
			snprintf(hex + 2 * i, 3, "%02x", ci.labels[i]);
		assert_string_equal(json_string_value(json_object_get(j, "labels")), hex);
		if (ci.first_seen)
			assert_true(json_real_value(json_object_get(j, "first_seen")) > 0);
		else
			assert_null(json_object_get(j, "first_seen"));
		what = json_object_get(j, "what");
		if (is_ev) {
			static const char *const types[] = { "new", "update", "destroy" };
			unsigned bits = 0;
			size_t i;
			json_t *w;
			double t = json_real_value(json_object_get(j, "time"));
			double want_t = (double)((int64_t)ev.ts + o.wall_ns) / 1e9;

			assert_string_equal(json_string_value(json_object_get(j, "event")),
					    types[ev.type]);
			assert_true(t > want_t - 1e-3 && t < want_t + 1e-3);
			json_array_foreach(what, i, w) {
				const char *s = json_string_value(w);
				unsigned b;

				for (b = 0; b < 32; b++)
					if (fmt_what_name(b) && !strcmp(fmt_what_name(b), s))
						break;
				assert_true(b < 32);
				bits |= 1u << b;
			}
			assert_int_equal(bits, ev.what & (CT_EVW_NEW | CT_EVW_RELATED | CT_EVW_DESTROY |
							  CT_EVW_REPLY | CT_EVW_ASSURED |
							  CT_EVW_PROTOINFO | CT_EVW_MARK |
							  CT_EVW_LABEL));
			if (ev.type == CT_EV_DESTROY)
				assert_string_equal(json_string_value(json_object_get(j, "destroy_cause")),
						    fmt_destroy_cause_name(ev.destroy_cause));
			else
				assert_null(json_object_get(j, "destroy_cause"));
			assert_int_equal(json_object_get(j, "timeout") != NULL,
					 ev.type != CT_EV_DESTROY);
		} else {
			assert_null(what);
			assert_int_equal(json_integer_value(json_object_get(j, "timeout")), 77);
		}
		json_decref(j);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_addresses_are_inet_ntops),
		cmocka_unit_test(test_numbers_are_printfs),
		cmocka_unit_test(test_text_lines_are_the_snprintf_printers),
		cmocka_unit_test(test_id_delta_time_and_ktimestamp_where_conntrack_puts_them),
		cmocka_unit_test(test_json_lines_carry_every_field),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
