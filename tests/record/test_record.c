/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_record.c - the record layer's promises, one by one
 * (include/ctrack/record.h).
 *
 *  - Every field of a record survives: random records of every
 *    protocol, every value in range, through the encoding and through a
 *    table (import, export) come back equal (ids apart) - so no field of a
 *    tracker's private state is dropped on either side, the ones no
 *    capture happens to exercise included (test_record_replay.c is the
 *    capture-driven counterpart).
 *  - Every refusal: a good record with one field made impossible is
 *    refused for that field's reason, by ct_record_check, by the decoder
 *    and by the import, and the table is left as it was.
 *  - The import: the timeout moved by the time that passed, a record whose
 *    time ran out ending with its DESTROY, a clash, a missing zone, a full
 *    table, extensions the table lacks; no event and no insert counted for
 *    a restore, NEW and an insert for a commit.
 *  - TCP state that packets rarely leave behind at a split (a run of
 *    retransmitted ACKs) carried, with the timeout the kernel then gives.
 *  - The commit (ct_record_from_sync, CT_RECORD_F_COMMIT), against what
 *    docs/sync.md measured of the kernel: with conntrackd's
 *    TCPWindowTracking off the entry is ESTABLISHED with BE_LIBERAL both
 *    ways and empty windows, and a connection's next packets - either
 *    direction first, data at any sequence number - are ESTABLISHED with
 *    nf_conntrack_tcp_loose=0 (without the entry the same packets are
 *    INVALID); with it on, the scales are dropped as the kernel drops them
 *    and window scaling makes the data INVALID, as it does in the kernel.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/ctrack.h"
#include "support/tuple.h"

#define SEC 1000000000ull
#define T0 (1700000000ull * SEC)

struct ev_log {
	int n;
	struct ct_event ev[64];
};

static void log_ev(const struct ct_event *ev, void *arg)
{
	struct ev_log *l = arg;

	if (l->n < 64)
		l->ev[l->n] = *ev;
	l->n++;
}

struct tab {
	struct ct_table *t;
	struct ct_thread *thr;
	struct ev_log ev;
};

static void tab_new(struct tab *x, const struct ct_settings *set, bool labels)
{
	struct ct_table_config cfg;

	memset(x, 0, sizeof(*x));
	ct_table_config_default(&cfg);
	if (set)
		cfg.settings = *set;
	else {
		cfg.settings.acct = 1;
		cfg.settings.timestamp = 1;
	}
	cfg.settings.checksum = 0;
	cfg.labels = labels;
	assert_int_equal(ct_table_create(&cfg, &x->t), 0);
	x->thr = ct_thread_attach(x->t);
	assert_non_null(x->thr);
	ct_table_set_event_handler(x->t, log_ev, &x->ev);
}

static void tab_free(struct tab *x)
{
	ct_table_set_event_handler(x->t, NULL, NULL);
	ct_thread_detach(x->thr);
	ct_table_destroy(x->t);
}

/* ---- random valid records ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint32_t rnd_below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

static const uint8_t l4s[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_UDPLITE, IPPROTO_SCTP,
			       IPPROTO_GRE, IPPROTO_ICMP, 41, 0, 89 };

/* A record the library could have made, every field random in range. */
static void random_record(struct ct_record *r, bool zones)
{
	uint8_t l4 = l4s[rnd_below(sizeof(l4s))];
	bool v6 = rnd() & 1;
	uint64_t first;

	memset(r, 0, sizeof(*r));
	r->version = CT_RECORD_VERSION;
	if (l4 == IPPROTO_ICMP && v6)
		l4 = IPPROTO_ICMPV6;
	r->orig.l3 = v6 ? CT_L3_IPV6 : CT_L3_IPV4;
	r->orig.l4 = l4;
	if (v6) {
		for (int i = 0; i < 16; i++) {
			r->orig.src.ip6[i] = (uint8_t)rnd();
			r->orig.dst.ip6[i] = (uint8_t)rnd();
		}
	} else {
		r->orig.src.ip4 = (uint32_t)rnd();
		r->orig.dst.ip4 = (uint32_t)rnd();
	}
	if (l4 == IPPROTO_ICMP || l4 == IPPROTO_ICMPV6) {
		/* echo request (8 / 128), the commonest query */
		r->orig.sport = (uint16_t)rnd();
		r->orig.dport = (uint16_t)((l4 == IPPROTO_ICMP ? 8 : 128) << 8);
	} else if (l4 == IPPROTO_TCP || l4 == IPPROTO_UDP || l4 == IPPROTO_UDPLITE ||
		   l4 == IPPROTO_SCTP || l4 == IPPROTO_GRE) {
		r->orig.sport = (uint16_t)rnd();
		r->orig.dport = (uint16_t)rnd();
	}
	r->orig.zone = zones ? (uint16_t)rnd_below(4) : 0;
	assert_true(ct_tuple_invert(&r->orig, &r->reply));
	r->status = CT_ST_CONFIRMED | ((uint32_t)rnd() & (CT_ST_SEEN_REPLY | CT_ST_ASSURED));
	r->mark = (uint32_t)rnd();
	r->has = (uint8_t)rnd_below(8);
	r->timeout_ns = 1 + rnd() % (5ull * 86400 * SEC);
	if (r->has & CT_RECORD_HAS_ACCT)
		for (int d = 0; d < 2; d++) {
			r->packets[d] = rnd() >> 20;
			r->bytes[d] = rnd() >> 10;
		}
	if (r->has & CT_RECORD_HAS_TSTAMP) {
		first = rnd() % (1000000ull * SEC);
		r->first_seen_ago_ns = first;
		r->last_seen_ago_ns = first ? rnd() % first : 0;
	}
	if (r->has & CT_RECORD_HAS_LABELS)
		for (int i = 0; i < 16; i++)
			r->labels[i] = (uint8_t)rnd();
	switch (l4) {
	case IPPROTO_TCP:
		r->l4state = (uint8_t)rnd_below(10);
		for (int d = 0; d < 2; d++) {
			r->proto.tcp.dir[d].td_end = (uint32_t)rnd();
			r->proto.tcp.dir[d].td_maxend = (uint32_t)rnd();
			r->proto.tcp.dir[d].td_maxwin = (uint32_t)rnd();
			r->proto.tcp.dir[d].td_maxack = (uint32_t)rnd();
			r->proto.tcp.dir[d].td_scale = (uint8_t)rnd_below(15);
			r->proto.tcp.dir[d].flags = (uint8_t)rnd_below(0x40);
		}
		r->proto.tcp.last_seq = (uint32_t)rnd();
		r->proto.tcp.last_ack = (uint32_t)rnd();
		r->proto.tcp.last_end = (uint32_t)rnd();
		r->proto.tcp.last_win = (uint16_t)rnd();
		r->proto.tcp.last_index = (uint8_t)rnd_below(6);
		r->proto.tcp.last_dir = (uint8_t)rnd_below(2);
		r->proto.tcp.last_wscale = (uint8_t)rnd_below(15);
		r->proto.tcp.last_flags = (uint8_t)(rnd() & 0xc3);
		r->proto.tcp.retrans = (uint8_t)rnd();
		break;
	case IPPROTO_UDP:
		r->proto.udp.age_ns = rnd() % (1000ull * SEC);
		break;
	case IPPROTO_SCTP:
		r->l4state = (uint8_t)rnd_below(9);
		r->proto.sctp.vtag[0] = (uint32_t)rnd();
		r->proto.sctp.vtag[1] = (uint32_t)rnd();
		r->proto.sctp.init[0] = (uint8_t)rnd_below(2);
		r->proto.sctp.init[1] = (uint8_t)rnd_below(2);
		r->proto.sctp.heartbeat_vtag_failed = (uint8_t)rnd_below(2);
		r->proto.sctp.last_dir = (uint8_t)rnd_below(2);
		break;
	case IPPROTO_GRE:
		r->proto.gre.timeout_s = (uint32_t)rnd();
		r->proto.gre.stream_timeout_s = (uint32_t)rnd();
		break;
	default:
		break;
	}
}

static int grab(const struct ct_record *r, void *arg)
{
	struct ct_record *out = arg;

	memcpy(out, r, sizeof(*r));
	return 1;    /* one is all the table holds */
}

static void every_field_survives_encoding_and_a_table(void **state)
{
	uint8_t buf[CT_RECORD_ENC_MAX];
	unsigned by_l4[256] = { 0 };

	(void)state;
	for (int i = 0; i < 20000; i++) {
		struct ct_record r, back;
		enum ct_record_reason why;
		struct tab x;
		size_t n;

		random_record(&r, true);
		assert_int_equal(ct_record_check(&r), CT_RECORD_OK);
		n = ct_record_encode(&r, buf, sizeof(buf), &why);
		assert_int_equal(why, CT_RECORD_OK);
		assert_true(n >= 48 && n <= CT_RECORD_ENC_MAX);
		assert_int_equal(ct_record_decode(buf, n, &back, &why), n);
		assert_memory_equal(&r, &back, sizeof(r));
		/* every shorter buffer is refused, never read past */
		if (i < 200)
			for (size_t k = 0; k < n; k++)
				assert_int_equal(ct_record_decode(buf, k, &back, &why), 0);
		if (i % 10)
			continue;
		/* through a table: import at T0, export at T0 */
		tab_new(&x, NULL, true);
		if (r.orig.zone)
			assert_int_equal(ct_ns_create(x.t, r.orig.zone, NULL), 0);
		assert_int_equal(ct_record_import(x.thr, &r, T0, 0, 0, &why), 1);
		assert_int_equal(x.ev.n, 0);    /* a restore announces nothing */
		memset(&back, 0, sizeof(back));
		assert_int_equal(ct_record_export(x.thr, -1, T0, grab, &back), 1);
		/* the table has every extension: all of it comes back */
		back.id = r.id;
		back.has = r.has;
		if (!(r.has & CT_RECORD_HAS_ACCT)) {
			memset(back.packets, 0, sizeof(back.packets));
			memset(back.bytes, 0, sizeof(back.bytes));
		}
		if (!(r.has & CT_RECORD_HAS_TSTAMP))
			back.first_seen_ago_ns = back.last_seen_ago_ns = 0;
		if (!(r.has & CT_RECORD_HAS_LABELS))
			memset(back.labels, 0, sizeof(back.labels));
		assert_memory_equal(&r, &back, sizeof(r));
		by_l4[r.orig.l4]++;
		tab_free(&x);
	}
	for (unsigned k = 0; k < sizeof(l4s); k++)
		assert_true(by_l4[l4s[k]] > 50);
}

/* ---- refusals ---- */

static void good_record(struct ct_record *r)
{
	do
		random_record(r, false);
	while (r->orig.l4 != IPPROTO_TCP || !(r->has & CT_RECORD_HAS_TSTAMP) ||
	       r->first_seen_ago_ns == r->last_seen_ago_ns);
}

struct breakage {
	const char *what;
	enum ct_record_reason why;
	void (*apply)(struct ct_record *r);
};

static void b_version(struct ct_record *r) { r->version = 2; }
static void b_has(struct ct_record *r) { r->has |= 0x40; }
static void b_reserved(struct ct_record *r) { r->reserved = 1; }
static void b_acct_absent(struct ct_record *r) { r->has &= ~CT_RECORD_HAS_ACCT; r->packets[1] = 5; }
static void b_l3(struct ct_record *r) { r->orig.l3 = 3; r->reply.l3 = 3; }
static void b_ip4_bytes(struct ct_record *r)
{
	r->orig.l3 = r->reply.l3 = CT_L3_IPV4;
	memset(r->orig.src.ip6 + 4, 0, 12);
	memset(r->orig.dst.ip6 + 4, 0, 12);
	r->orig.dst.ip6[9] = 1;
	ct_tuple_invert(&r->orig, &r->reply);
}
static void b_reply_family(struct ct_record *r) { r->reply.zone ^= 1; }
static void b_ports_generic(struct ct_record *r)
{
	r->orig.l4 = r->reply.l4 = 89;
	memset(&r->proto, 0, sizeof(r->proto));
	r->l4state = 0;
	r->orig.sport = 7;
	ct_tuple_invert(&r->orig, &r->reply);
}
static void b_icmp_type(struct ct_record *r)
{
	r->orig.l3 = r->reply.l3 = CT_L3_IPV4;
	memset(r->orig.src.ip6 + 4, 0, 12);
	memset(r->orig.dst.ip6 + 4, 0, 12);
	r->orig.l4 = r->reply.l4 = IPPROTO_ICMP;
	memset(&r->proto, 0, sizeof(r->proto));
	r->l4state = 0;
	r->orig.dport = 3 << 8;     /* destination unreachable: an error */
	r->reply = r->orig;
}
static void b_icmp6_in_ip4(struct ct_record *r)
{
	b_icmp_type(r);
	r->orig.l4 = r->reply.l4 = IPPROTO_ICMPV6;
	r->orig.dport = 128 << 8;
	ct_tuple_invert(&r->orig, &r->reply);
}
static void b_reply(struct ct_record *r) { r->reply.sport ^= 1; }
static void b_nat_bits(struct ct_record *r) { r->status |= CT_ST_SRC_NAT; r->reply.dst.ip4 ^= 1; }
static void b_nat_unnamed(struct ct_record *r)
{
	r->status |= CT_ST_SRC_NAT | CT_ST_SRC_NAT_DONE;
	r->reply.dst.ip4 ^= 1;
	r->reply.src.ip4 ^= 1;
}
static void b_seq_adjust(struct ct_record *r) { r->status |= 0x40; }
static void b_nat_binding(struct ct_record *r) { r->nat.version = 1; }
static void b_dying(struct ct_record *r) { r->status |= CT_ST_DYING; }
static void b_expected(struct ct_record *r) { r->status |= CT_ST_EXPECTED; }
static void b_tcp_state(struct ct_record *r) { r->l4state = 10; }
static void b_udp_state(struct ct_record *r)
{
	r->orig.l4 = r->reply.l4 = IPPROTO_UDP;
	memset(&r->proto, 0, sizeof(r->proto));
	r->l4state = 1;
}
static void b_scale(struct ct_record *r) { r->proto.tcp.dir[1].td_scale = 15; }
static void b_tcp_flags(struct ct_record *r) { r->proto.tcp.dir[0].flags |= 0x40; }
static void b_last_dir(struct ct_record *r) { r->proto.tcp.last_dir = 2; }
static void b_last_index(struct ct_record *r) { r->proto.tcp.last_index = 6; }
static void b_last_flags(struct ct_record *r) { r->proto.tcp.last_flags |= 0x04; }
static void b_proto_tail(struct ct_record *r) { r->proto.bytes[63] = 1; }
static void b_sctp_init(struct ct_record *r)
{
	r->orig.l4 = r->reply.l4 = IPPROTO_SCTP;
	memset(&r->proto, 0, sizeof(r->proto));
	r->l4state = 4;
	r->proto.sctp.init[0] = 2;
}
static void b_timeout(struct ct_record *r) { r->timeout_ns = CT_RECORD_TIMEOUT_MAX_NS + 1; }
static void b_tstamp(struct ct_record *r)
{
	uint64_t x = r->first_seen_ago_ns;

	r->first_seen_ago_ns = r->last_seen_ago_ns;
	r->last_seen_ago_ns = x;
}

static const struct breakage breakages[] = {
	{ "version 2", CT_RECORD_R_VERSION, b_version },
	{ "unknown has bit", CT_RECORD_R_HAS, b_has },
	{ "reserved word", CT_RECORD_R_HAS, b_reserved },
	{ "counters without HAS_ACCT", CT_RECORD_R_HAS, b_acct_absent },
	{ "family 3", CT_RECORD_R_FAMILY, b_l3 },
	{ "IPv4 address with 16 bytes", CT_RECORD_R_FAMILY, b_ip4_bytes },
	{ "reply in another zone", CT_RECORD_R_FAMILY, b_reply_family },
	{ "ports on OSPF", CT_RECORD_R_PORTS, b_ports_generic },
	{ "ICMP error type", CT_RECORD_R_PORTS, b_icmp_type },
	{ "ICMPv6 over IPv4", CT_RECORD_R_PORTS, b_icmp6_in_ip4 },
	{ "reply not inverted", CT_RECORD_R_REPLY, b_reply },
	{ "SRC_NAT without SRC_NAT_DONE", CT_RECORD_R_NAT, b_nat_bits },
	{ "SNAT that changed the reply's source", CT_RECORD_R_REPLY, b_nat_unnamed },
	{ "SEQ_ADJUST", CT_RECORD_R_STATUS, b_seq_adjust },
	{ "NAT binding", CT_RECORD_R_NAT, b_nat_binding },
	{ "DYING", CT_RECORD_R_STATUS, b_dying },
	{ "EXPECTED", CT_RECORD_R_STATUS, b_expected },
	{ "TCP state 10", CT_RECORD_R_STATE, b_tcp_state },
	{ "UDP with a state", CT_RECORD_R_STATE, b_udp_state },
	{ "TCP scale 15", CT_RECORD_R_PROTO, b_scale },
	{ "TCP flag 0x40", CT_RECORD_R_PROTO, b_tcp_flags },
	{ "TCP last_dir 2", CT_RECORD_R_PROTO, b_last_dir },
	{ "TCP last_index 6", CT_RECORD_R_PROTO, b_last_index },
	{ "TCP last_flags 0x04", CT_RECORD_R_PROTO, b_last_flags },
	{ "bytes past the protocol's record", CT_RECORD_R_PROTO, b_proto_tail },
	{ "SCTP init 2", CT_RECORD_R_PROTO, b_sctp_init },
	{ "timeout beyond 2^32 s", CT_RECORD_R_TIMEOUT, b_timeout },
	{ "last packet before the first", CT_RECORD_R_TSTAMP, b_tstamp },
};

static void every_impossible_field_is_refused_with_its_reason(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(breakages) / sizeof(breakages[0]); i++) {
		const struct breakage *b = &breakages[i];
		struct ct_record r;
		enum ct_record_reason why = CT_RECORD_OK;
		struct ct_stats st;
		struct tab x;

		good_record(&r);
		assert_int_equal(ct_record_check(&r), CT_RECORD_OK);
		b->apply(&r);
		if (ct_record_check(&r) != b->why)
			print_message("# %s: refused as \"%s\", want \"%s\"\n", b->what,
				      ct_record_reason_name(ct_record_check(&r)),
				      ct_record_reason_name(b->why));
		assert_int_equal(ct_record_check(&r), b->why);
		assert_string_not_equal(ct_record_reason_name(b->why), "unknown reason");
		/* the encoder will not write it */
		{
			uint8_t buf[CT_RECORD_ENC_MAX];

			assert_int_equal(ct_record_encode(&r, buf, sizeof(buf), &why), 0);
			assert_int_equal(why, b->why);
		}
		/* and the table will not take it */
		tab_new(&x, NULL, true);
		assert_int_equal(ct_record_import(x.thr, &r, T0, 0, 0, &why), -EINVAL);
		assert_int_equal(why, b->why);
		ct_table_get_stats(x.t, &st);
		assert_int_equal(st.count, 0);
		assert_int_equal(st.expired + st.insert, 0);
		assert_int_equal(x.ev.n, 0);
		tab_free(&x);
	}
}

/* A byte of an encoded record changed: refused, or a record that checks
 * (some bytes - addresses, counters - may take any value). */
static void damaged_encodings_never_decode_to_an_impossible_record(void **state)
{
	uint8_t buf[CT_RECORD_ENC_MAX];
	unsigned refused = 0, total = 0;

	(void)state;
	for (int i = 0; i < 2000; i++) {
		struct ct_record r, back;
		enum ct_record_reason why;
		size_t n;

		random_record(&r, true);
		n = ct_record_encode(&r, buf, sizeof(buf), &why);
		for (size_t k = 0; k < n; k++) {
			uint8_t old = buf[k];

			buf[k] ^= (uint8_t)(1u << rnd_below(8));
			if (ct_record_decode(buf, n, &back, &why) == 0) {
				assert_int_not_equal(why, CT_RECORD_OK);
				refused++;
			} else {
				assert_int_equal(ct_record_check(&back), CT_RECORD_OK);
			}
			buf[k] = old;
			total++;
		}
	}
	print_message("# %u of %u one-bit changes refused\n", refused, total);
	assert_true(refused > total / 10);
}

/* ---- the import ---- */

static struct ct_record udp_record(uint64_t timeout_ns)
{
	struct ct_record r;

	memset(&r, 0, sizeof(r));
	r.version = CT_RECORD_VERSION;
	r.orig = ts_tuple4(IPPROTO_UDP, 0x0a000001, 0x0a000002, 5353, 53);
	assert_true(ct_tuple_invert(&r.orig, &r.reply));
	r.status = CT_ST_CONFIRMED | CT_ST_SEEN_REPLY;
	r.timeout_ns = timeout_ns;
	r.has = CT_RECORD_HAS_ACCT | CT_RECORD_HAS_TSTAMP | CT_RECORD_HAS_LABELS;
	r.packets[0] = 3;
	r.bytes[0] = 300;
	r.first_seen_ago_ns = 20 * SEC;
	r.last_seen_ago_ns = 2 * SEC;
	r.labels[3] = 0x10;
	r.mark = 77;
	r.proto.udp.age_ns = 20 * SEC;
	return r;
}

static void the_timeout_moves_by_the_time_that_passed(void **state)
{
	struct ct_record r = udp_record(30 * SEC);
	struct ct_conn_info ci;
	struct tab x;

	(void)state;
	tab_new(&x, NULL, true);
	/* taken 12 s before T0: 18 s left, times 12 s further back */
	assert_int_equal(ct_record_import(x.thr, &r, T0, 12 * SEC, 0, NULL), 1);
	assert_int_equal(ct_table_lookup(x.thr, &r.orig, &ci, NULL), 1);
	assert_int_equal(ci.expires, T0 + 18 * SEC);
	assert_int_equal(ci.first_seen, T0 - 32 * SEC);
	assert_int_equal(ci.last_seen, T0 - 14 * SEC);
	assert_int_equal(ci.status, CT_ST_CONFIRMED | CT_ST_SEEN_REPLY);
	assert_int_equal(ci.mark, 77);
	assert_int_equal(ci.packets[0], 3);
	assert_int_equal(ci.bytes[0], 300);
	assert_int_equal(ci.labels[3], 0x10);
	assert_int_equal(ct_thread_take_next_due(x.thr), T0 + 18 * SEC);
	tab_free(&x);
}

static void a_record_whose_time_ran_out_gets_its_destroy(void **state)
{
	struct ct_record r = udp_record(5 * SEC);
	struct ct_stats st;
	struct tab x;

	(void)state;
	tab_new(&x, NULL, true);
	assert_int_equal(ct_record_import(x.thr, &r, T0, 5 * SEC, 0, NULL), 0);
	ct_table_get_stats(x.t, &st);
	assert_int_equal(st.count, 0);
	assert_int_equal(st.expired, 1);
	assert_int_equal(st.insert, 0);
	assert_int_equal(x.ev.n, 1);
	assert_int_equal(x.ev.ev[0].type, CT_EV_DESTROY);
	assert_int_equal(x.ev.ev[0].destroy_cause, CT_DESTROY_TIMEOUT);
	/* the entry as it was, expiring when it expired: the record's
	 * moment (T0 - 5 s) plus its 5 s */
	assert_int_equal(x.ev.ev[0].conn.expires, T0);
	assert_true(ct_tuple_equal(&x.ev.ev[0].conn.orig, &r.orig));
	assert_int_equal(x.ev.ev[0].conn.mark, 77);
	assert_int_equal(x.ev.ev[0].conn.packets[0], 3);
	assert_int_equal(ct_table_lookup(x.thr, &r.orig, NULL, NULL), 0);
	/* a second earlier it would still have lived */
	assert_int_equal(ct_record_import(x.thr, &r, T0, 5 * SEC - 1, 0, NULL), 1);
	tab_free(&x);
}

static void a_clash_with_a_live_entry_is_refused(void **state)
{
	struct ct_record r = udp_record(30 * SEC), other;
	struct ct_conn_info ci;
	enum ct_record_reason why;
	struct tab x;

	(void)state;
	tab_new(&x, NULL, true);
	assert_int_equal(ct_record_import(x.thr, &r, T0, 0, 0, NULL), 1);
	other = r;
	other.mark = 1;
	/* the same connection from its other side clashes too */
	other.orig = r.reply;
	other.reply = r.orig;
	assert_int_equal(ct_record_import(x.thr, &other, T0, 0, 0, &why), -EEXIST);
	assert_int_equal(why, CT_RECORD_R_EXISTS);
	assert_int_equal(ct_record_import(x.thr, &r, T0, 0, 0, &why), -EEXIST);
	assert_int_equal(ct_table_count(x.t), 1);
	assert_int_equal(ct_table_lookup(x.thr, &r.orig, &ci, NULL), 1);
	assert_int_equal(ci.mark, 77);
	tab_free(&x);
}

static void a_missing_zone_and_a_full_table_are_refused(void **state)
{
	struct ct_record r = udp_record(30 * SEC);
	struct ct_settings s;
	enum ct_record_reason why;
	struct tab x;

	(void)state;
	ct_settings_default(&s);
	s.max = 1;
	tab_new(&x, &s, false);
	r.orig.zone = r.reply.zone = 9;
	assert_int_equal(ct_record_import(x.thr, &r, T0, 0, 0, &why), -ENOENT);
	assert_int_equal(why, CT_RECORD_R_ZONE);
	r.orig.zone = r.reply.zone = 0;
	assert_int_equal(ct_record_import(x.thr, &r, T0, 0, 0, &why), 1);
	r.orig.sport++;
	assert_true(ct_tuple_invert(&r.orig, &r.reply));
	assert_int_equal(ct_record_import(x.thr, &r, T0, 0, 0, &why), -ENOSPC);
	assert_int_equal(why, CT_RECORD_R_FULL);
	assert_int_equal(ct_table_count(x.t), 1);
	tab_free(&x);
}

static void extensions_the_table_lacks_are_dropped(void **state)
{
	struct ct_record r = udp_record(30 * SEC), back;
	struct ct_settings s;
	struct tab x;

	(void)state;
	ct_settings_default(&s);       /* acct and timestamps off */
	tab_new(&x, &s, false);        /* no labels */
	assert_int_equal(ct_record_import(x.thr, &r, T0, 0, 0, NULL), 1);
	assert_int_equal(ct_record_export(x.thr, -1, T0, grab, &back), 1);
	assert_int_equal(back.has, 0);
	assert_int_equal(back.packets[0], 0);
	assert_int_equal(back.mark, 77);
	assert_int_equal(back.proto.udp.age_ns, 20 * SEC);
	tab_free(&x);
}

struct zone_count {
	int n[8];
};

static int count_zone(const struct ct_record *r, void *arg)
{
	struct zone_count *z = arg;

	z->n[r->orig.zone & 7]++;
	return 0;
}

static void export_takes_one_zone_or_all(void **state)
{
	struct ct_record r = udp_record(30 * SEC);
	struct zone_count all = { { 0 } }, five = { { 0 } };
	struct tab x;

	(void)state;
	tab_new(&x, NULL, true);
	assert_int_equal(ct_ns_create(x.t, 5, NULL), 0);
	assert_int_equal(ct_record_import(x.thr, &r, T0, 0, 0, NULL), 1);
	r.orig.zone = r.reply.zone = 5;
	assert_int_equal(ct_record_import(x.thr, &r, T0, 0, 0, NULL), 1);
	r.orig.sport++;
	assert_true(ct_tuple_invert(&r.orig, &r.reply));
	assert_int_equal(ct_record_import(x.thr, &r, T0, 0, 0, NULL), 1);
	assert_int_equal(ct_record_export(x.thr, -1, T0, count_zone, &all), 0);
	assert_int_equal(all.n[0], 1);
	assert_int_equal(all.n[5], 2);
	assert_int_equal(ct_record_export(x.thr, 5, T0, count_zone, &five), 0);
	assert_int_equal(five.n[0], 0);
	assert_int_equal(five.n[5], 2);
	/* a callback's non-zero answer stops the walk and is returned */
	assert_int_equal(ct_record_export(x.thr, -1, T0, grab, &r), 1);
	assert_int_equal(ct_record_export(x.thr, -1, T0, NULL, NULL), -EINVAL);
	tab_free(&x);
}

/* ---- TCP, with packets ---- */

static struct ct_tuple tcp_tuple(void)
{
	return ts_tuple4(IPPROTO_TCP, 0x0a000001, 0x0a000002, 40000, 80);
}

static struct ct_packet tcp_pkt(enum ct_dir dir, uint8_t flags, uint32_t seq, uint32_t ack,
				uint16_t win, uint32_t len, uint8_t wscale)
{
	struct ct_tuple t = tcp_tuple(), r = ts_reverse(&t);
	struct ct_packet p;

	ts_packet_of(&p, dir == CT_DIR_ORIGINAL ? &t : &r);
	p.u.tcp.flags = flags;
	p.u.tcp.seq = seq;
	p.u.tcp.ack = ack;
	p.u.tcp.sack_right = ack;
	p.u.tcp.window = win;
	if (flags & CT_TCP_SYN) {
		p.u.tcp.opts = CT_TCPOPT_WSCALE | CT_TCPOPT_SACK_PERM;
		p.u.tcp.wscale = wscale;
		p.u.tcp.hdr_len = 40;
	} else {
		p.u.tcp.hdr_len = 20;
	}
	p.payload_len = len;
	p.l4_len = p.u.tcp.hdr_len + len;
	p.l4_caplen = p.l4_len;
	p.l3_hdr_len = 20;
	p.l3_len = 20 + p.l4_len;
	return p;
}

static struct ct_verdict send_pkt(struct tab *x, struct ct_packet p, ct_time_ns now)
{
	struct ct_verdict v;

	assert_int_equal(ct_process(x->thr, &p, now, &v), 0);
	return v;
}

/* A handshake with window scaling (7 both ways), then data: the client
 * at 1000, the server at 5000. */
static void tcp_handshake(struct tab *x, ct_time_ns now)
{
	assert_int_equal(send_pkt(x, tcp_pkt(0, CT_TCP_SYN, 999, 0, 64240, 0, 7), now).cls,
			 CT_V_NEW);
	assert_int_equal(send_pkt(x, tcp_pkt(1, CT_TCP_SYN | CT_TCP_ACK, 4999, 1000, 65160,
					      0, 7), now).cls, CT_V_ESTABLISHED);
	assert_int_equal(send_pkt(x, tcp_pkt(0, CT_TCP_ACK, 1000, 5000, 502, 0, 0), now).cls,
			 CT_V_ESTABLISHED);
}

static void a_run_of_retransmitted_acks_is_carried(void **state)
{
	struct ct_settings s;
	struct tab a, b;
	struct ct_record rec;
	struct ct_conn_info ca, cb;
	ct_time_ns now = T0;

	(void)state;
	ct_settings_default(&s);
	/* apart from the unacknowledged-data timeout (300 s), which the same
	 * segments also bring */
	s.tcp_timeouts[CT_TCP_TO_RETRANS] = 100;
	tab_new(&a, &s, false);
	tab_new(&b, &s, false);
	tcp_handshake(&a, now);
	/* data the server has not acknowledged, sent again and again: the
	 * kernel counts identical segments (retrans) and at
	 * nf_conntrack_tcp_max_retrans (3) gives the retransmission timeout
	 * instead of ESTABLISHED's */
	for (int i = 0; i < 3; i++)
		send_pkt(&a, tcp_pkt(0, CT_TCP_ACK | CT_TCP_PSH, 1000, 5000, 502, 100, 0),
			 now += SEC);
	assert_int_equal(ct_record_export(a.thr, -1, now, grab, &rec), 1);
	assert_int_equal(rec.proto.tcp.retrans, 2);
	assert_int_equal(ct_record_import(b.thr, &rec, now, 0, 0, NULL), 1);
	/* the fourth: the third repeat, in both */
	send_pkt(&a, tcp_pkt(0, CT_TCP_ACK | CT_TCP_PSH, 1000, 5000, 502, 100, 0), now + SEC);
	send_pkt(&b, tcp_pkt(0, CT_TCP_ACK | CT_TCP_PSH, 1000, 5000, 502, 100, 0), now + SEC);
	assert_int_equal(ct_table_lookup(a.thr, &rec.orig, &ca, NULL), 1);
	assert_int_equal(ct_table_lookup(b.thr, &rec.orig, &cb, NULL), 1);
	assert_int_equal(ca.expires, now + SEC + 100 * SEC);
	assert_int_equal(cb.expires, ca.expires);
	tab_free(&a);
	tab_free(&b);
}

/* The sync message conntrackd would carry for the connection above, as
 * the codec gives it (ctrack/sync.h). */
static struct ct_sync_conn sync_of_tcp(void)
{
	struct ct_sync_conn c;

	memset(&c, 0, sizeof(c));
	c.orig = tcp_tuple();
	c.has = CT_SYNC_HAS_STATUS | CT_SYNC_HAS_TIMEOUT | CT_SYNC_HAS_MARK |
		CT_SYNC_HAS_STATE | CT_SYNC_HAS_PORTS | CT_SYNC_HAS_WSCALE;
	c.status = CT_ST_CONFIRMED | CT_ST_SEEN_REPLY | CT_ST_ASSURED | CT_ST_EXPECTED;
	c.l4state = 3;     /* ESTABLISHED */
	c.timeout_s = 431999;
	c.mark = 42;
	c.wscale[0] = 7;
	c.wscale[1] = 7;
	return c;
}

/* After the failover: data both ways at sequence numbers the node never
 * saw, the windows scaled by 7 (a 64 KiB window announced as 502). */
static unsigned next_packets(struct tab *x, ct_time_ns now, unsigned *invalid)
{
	uint32_t cseq = 123456789, sseq = 987654321;
	unsigned est = 0;

	*invalid = 0;
	for (int i = 0; i < 40; i++) {
		/* the server speaks first half the time: either side may be
		 * the first the node sees */
		int first = i & 1;

		for (int k = 0; k < 2; k++) {
			int d = k ^ first;
			struct ct_verdict v;

			if (d == 0) {
				v = send_pkt(x, tcp_pkt(0, CT_TCP_ACK, cseq, sseq, 502, 1400, 0), now);
				cseq += 1400;
			} else {
				v = send_pkt(x, tcp_pkt(1, CT_TCP_ACK, sseq, cseq, 509, 1400, 0), now);
				sseq += 1400;
			}
			if (v.cls == CT_V_ESTABLISHED)
				est++;
			else if (v.cls == CT_V_INVALID)
				(*invalid)++;
		}
		now += SEC / 100;
	}
	return est;
}

static void a_committed_connection_goes_on_established_without_loose(void **state)
{
	struct ct_sync_conn c = sync_of_tcp();
	struct ct_settings s;
	struct ct_record rec;
	struct ct_conn_info ci;
	struct ct_stats st;
	unsigned inv;
	struct tab x, bare;

	(void)state;
	ct_settings_default(&s);
	s.tcp_loose = 0;
	tab_new(&x, &s, false);
	/* TCPWindowTracking Off, conntrackd's default */
	assert_true(ct_record_from_sync(&c, 431999, false, &rec));
	assert_int_equal(rec.proto.tcp.dir[0].flags, CT_RECORD_TCPF_BE_LIBERAL);
	assert_int_equal(rec.proto.tcp.dir[1].flags, CT_RECORD_TCPF_BE_LIBERAL);
	assert_int_equal(rec.status & CT_ST_EXPECTED, 0);
	assert_int_equal(ct_record_import(x.thr, &rec, T0, 0, CT_RECORD_F_COMMIT, NULL), 1);
	/* a commit is a new entry of this table: announced, counted */
	assert_int_equal(x.ev.n, 1);
	assert_int_equal(x.ev.ev[0].type, CT_EV_NEW);
	ct_table_get_stats(x.t, &st);
	assert_int_equal(st.insert, 1);
	assert_int_equal(ct_table_lookup(x.thr, &rec.orig, &ci, NULL), 1);
	assert_int_equal(ci.l4state, 3);
	assert_int_equal(ci.mark, 42);
	assert_int_equal(ci.status, CT_ST_CONFIRMED | CT_ST_SEEN_REPLY | CT_ST_ASSURED);
	assert_int_equal(ci.expires, T0 + 431999 * SEC);
	/* what ctnetlink shows of it: BE_LIBERAL both ways, no scales */
	assert_int_equal(ci.tcp.flags[0], CT_RECORD_TCPF_BE_LIBERAL);
	assert_int_equal(ci.tcp.flags[1], CT_RECORD_TCPF_BE_LIBERAL);
	assert_int_equal(ci.tcp.wscale[0], 0);
	assert_int_equal(ci.tcp.wscale[1], 0);
	assert_int_equal(next_packets(&x, T0 + SEC, &inv), 80);
	assert_int_equal(inv, 0);
	/* the windows were empty: picked up from the packets */
	assert_int_equal(ct_record_export(x.thr, -1, T0 + 2 * SEC, grab, &rec), 1);
	assert_true(rec.proto.tcp.dir[0].td_maxwin > 0 && rec.proto.tcp.dir[1].td_maxwin > 0);
	tab_free(&x);

	/* without the commit, nf_conntrack_tcp_loose=0 refuses them all */
	tab_new(&bare, &s, false);
	assert_int_equal(next_packets(&bare, T0 + SEC, &inv), 0);
	assert_int_equal(inv, 80);
	tab_free(&bare);
}

static void window_tracking_on_loses_the_scales_as_the_kernel_does(void **state)
{
	struct ct_sync_conn c = sync_of_tcp();
	struct ct_settings s;
	struct ct_record rec;
	struct ct_conn_info ci;
	unsigned inv;
	struct tab x;

	(void)state;
	ct_settings_default(&s);
	s.tcp_loose = 0;
	tab_new(&x, &s, false);
	/* TCPWindowTracking On: conntrackd sends the scales and no flags,
	 * and nlattr_to_tcp keeps scales only for directions flagged
	 * WINDOW_SCALE */
	assert_true(ct_record_from_sync(&c, 431999, true, &rec));
	assert_int_equal(rec.proto.tcp.dir[0].td_scale, 7);
	assert_int_equal(rec.proto.tcp.dir[0].flags, 0);
	assert_int_equal(ct_record_import(x.thr, &rec, T0, 0, CT_RECORD_F_COMMIT, NULL), 1);
	assert_int_equal(ct_table_lookup(x.thr, &rec.orig, &ci, NULL), 1);
	assert_int_equal(ci.tcp.wscale[0], 0);
	assert_int_equal(ci.tcp.flags[0], 0);
	/* windows of 502 read unscaled: data runs past them, INVALID */
	next_packets(&x, T0 + SEC, &inv);
	assert_true(inv > 0);
	tab_free(&x);

	/* with WINDOW_SCALE in both directions' flags the scales are kept
	 * (what a kernel entry created with those flags gets) and the same
	 * packets pass */
	tab_new(&x, &s, false);
	assert_true(ct_record_from_sync(&c, 431999, true, &rec));
	rec.proto.tcp.dir[0].flags = rec.proto.tcp.dir[1].flags = CT_RECORD_TCPF_WINDOW_SCALE;
	assert_int_equal(ct_record_import(x.thr, &rec, T0, 0, CT_RECORD_F_COMMIT, NULL), 1);
	assert_int_equal(ct_table_lookup(x.thr, &rec.orig, &ci, NULL), 1);
	assert_int_equal(ci.tcp.wscale[0], 7);
	assert_int_equal(ci.tcp.wscale[1], 7);
	assert_int_equal(next_packets(&x, T0 + SEC, &inv), 80);
	tab_free(&x);
}

static void a_committed_udp_flow_is_a_stream_at_once(void **state)
{
	struct ct_sync_conn c;
	struct ct_settings s;
	struct ct_record rec;
	struct ct_conn_info ci;
	struct ct_tuple t = ts_tuple4(IPPROTO_UDP, 0x0a000001, 0x0a000002, 5353, 53);
	struct ct_packet p;
	struct ct_verdict v;
	struct tab x;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.orig = t;
	c.has = CT_SYNC_HAS_STATUS | CT_SYNC_HAS_TIMEOUT | CT_SYNC_HAS_PORTS;
	c.status = CT_ST_CONFIRMED | CT_ST_SEEN_REPLY;
	ct_settings_default(&s);
	tab_new(&x, &s, false);
	assert_true(ct_record_from_sync(&c, 25, false, &rec));
	assert_int_equal(ct_record_import(x.thr, &rec, T0, 0, CT_RECORD_F_COMMIT, NULL), 1);
	/* the next packet, within 2 s of the commit: the kernel's stream_ts
	 * of a ctnetlink-made entry is 0, long past */
	ts_packet_of(&p, &t);
	p.l3_len = 48;
	p.l4_len = 28;
	p.payload_len = 20;
	assert_int_equal(ct_process(x.thr, &p, T0 + SEC, &v), 0);
	assert_int_equal(v.cls, CT_V_ESTABLISHED);
	assert_int_equal(ct_table_lookup(x.thr, &t, &ci, NULL), 1);
	assert_int_equal(ci.expires, T0 + SEC + (uint64_t)s.udp_timeout_stream * SEC);
	assert_true(ci.status & CT_ST_ASSURED);
	tab_free(&x);
}

static void a_commit_whose_time_ran_out_is_new_then_destroy(void **state)
{
	struct ct_sync_conn c = sync_of_tcp();
	struct ct_record rec;
	struct ct_stats st;
	struct tab x;

	(void)state;
	tab_new(&x, NULL, false);
	assert_true(ct_record_from_sync(&c, 0, false, &rec));
	assert_int_equal(ct_record_import(x.thr, &rec, T0, 0, CT_RECORD_F_COMMIT, NULL), 0);
	assert_int_equal(x.ev.n, 2);
	assert_int_equal(x.ev.ev[0].type, CT_EV_NEW);
	assert_int_equal(x.ev.ev[1].type, CT_EV_DESTROY);
	ct_table_get_stats(x.t, &st);
	assert_int_equal(st.insert, 1);
	assert_int_equal(st.expired, 1);
	assert_int_equal(st.count, 0);
	tab_free(&x);
}

/* A peer's NATed connection (SNAT attributes): the record carries the
 * binding the kernel's ctnetlink sets up from them - the reply tuple with
 * the NAT address, SRC_NAT and both DONE bits; a table with NAT takes it
 * (found from both keys), one without refuses it by name. */
static void a_natted_peer_connection_needs_a_nat_table(void **state)
{
	struct ct_sync_conn c = sync_of_tcp();
	struct ct_table_config cfg;
	struct ct_record rec;
	enum ct_record_reason why;
	struct ct_conn_info ci;
	struct ct_table *t;
	struct ct_thread *thr;
	enum ct_dir dir;
	struct tab x;

	(void)state;
	c.has |= CT_SYNC_HAS_SNAT | CT_SYNC_HAS_SPAT;
	c.snat_addr.ip4 = htonl(0xc6336401);
	c.snat_port = 61000;
	tab_new(&x, NULL, false);
	assert_true(ct_record_from_sync(&c, 100, false, &rec));
	assert_int_equal(rec.status & (CT_ST_NAT_MASK | CT_ST_NAT_DONE_MASK),
			 CT_ST_SRC_NAT | CT_ST_NAT_DONE_MASK);
	assert_int_equal(rec.reply.dst.ip4, htonl(0xc6336401));
	assert_int_equal(rec.reply.dport, 61000);
	assert_int_equal(ct_record_import(x.thr, &rec, T0, 0, CT_RECORD_F_COMMIT, &why),
			 -EOPNOTSUPP);
	assert_int_equal(why, CT_RECORD_R_NAT_OFF);
	tab_free(&x);
	ct_table_config_default(&cfg);
	cfg.nat = true;
	assert_int_equal(ct_table_create(&cfg, &t), 0);
	thr = ct_thread_attach(t);
	assert_int_equal(ct_record_import(thr, &rec, T0, 0, CT_RECORD_F_COMMIT, &why), 1);
	assert_int_equal(ct_table_lookup(thr, &rec.reply, &ci, &dir), 1);
	assert_int_equal(dir, CT_DIR_REPLY);
	assert_memory_equal(&ci.orig, &c.orig, sizeof(ci.orig));
	assert_true(ci.status & CT_ST_SRC_NAT);
	/* DNAT attributes alone: DST_NAT */
	c = sync_of_tcp();
	c.orig.sport ^= 1;
	c.has |= CT_SYNC_HAS_DNAT;
	c.dnat_addr.ip4 = htonl(0xac100005);
	assert_true(ct_record_from_sync(&c, 100, false, &rec));
	assert_int_equal(rec.status & (CT_ST_NAT_MASK | CT_ST_NAT_DONE_MASK),
			 CT_ST_DST_NAT | CT_ST_NAT_DONE_MASK);
	assert_int_equal(ct_record_import(thr, &rec, T0, 0, CT_RECORD_F_COMMIT, &why), 1);
	ct_thread_detach(thr);
	ct_table_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_field_survives_encoding_and_a_table),
		cmocka_unit_test(every_impossible_field_is_refused_with_its_reason),
		cmocka_unit_test(damaged_encodings_never_decode_to_an_impossible_record),
		cmocka_unit_test(the_timeout_moves_by_the_time_that_passed),
		cmocka_unit_test(a_record_whose_time_ran_out_gets_its_destroy),
		cmocka_unit_test(a_clash_with_a_live_entry_is_refused),
		cmocka_unit_test(a_missing_zone_and_a_full_table_are_refused),
		cmocka_unit_test(extensions_the_table_lacks_are_dropped),
		cmocka_unit_test(export_takes_one_zone_or_all),
		cmocka_unit_test(a_run_of_retransmitted_acks_is_carried),
		cmocka_unit_test(a_committed_connection_goes_on_established_without_loose),
		cmocka_unit_test(window_tracking_on_loses_the_scales_as_the_kernel_does),
		cmocka_unit_test(a_committed_udp_flow_is_a_stream_at_once),
		cmocka_unit_test(a_commit_whose_time_ran_out_is_new_then_destroy),
		cmocka_unit_test(a_natted_peer_connection_needs_a_nat_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
