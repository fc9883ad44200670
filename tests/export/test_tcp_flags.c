/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_tcp_flags.c - the TCP flags an entry keeps per direction
 * (ct_table_config.tcp_flags, ct_conn_info.tcp_flags), which IPFIX's
 * tcpControlBits carry (issue 26).
 *
 * Packets are raw IPv4 TCP headers with right checksums, given to
 * ct_parse_ip and ct_process one at a time and in bursts; what each
 * direction sent is known from the list below, so the expected OR is
 * written next to it.  The flags sit after the labels extension when
 * there is one, so every case runs with the optional extensions on and
 * off.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "ctrack/ctrack.h"

static uint16_t csum16(const uint8_t *p, size_t n, uint32_t sum)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* IPv4 + TCP (20 + 20 bytes) from @src:@sp to @dst:@dp. */
static size_t tcp4(uint8_t *f, uint32_t src, uint32_t dst, uint16_t sp, uint16_t dp,
		   uint8_t flags, uint32_t seq, uint32_t ack)
{
	uint8_t *ip = f, *t = f + 20;
	uint32_t ps = 0;
	uint16_t c;

	memset(f, 0, 40);
	ip[0] = 0x45;
	ip[3] = 40;
	ip[6] = 0x40;
	ip[8] = 64;
	ip[9] = IPPROTO_TCP;
	memcpy(ip + 12, &src, 4);
	memcpy(ip + 16, &dst, 4);
	c = csum16(ip, 20, 0);
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
	t[0] = (uint8_t)(sp >> 8);
	t[1] = (uint8_t)sp;
	t[2] = (uint8_t)(dp >> 8);
	t[3] = (uint8_t)dp;
	seq = htonl(seq);
	ack = htonl(ack);
	memcpy(t + 4, &seq, 4);
	memcpy(t + 8, &ack, 4);
	t[12] = 5 << 4;
	t[13] = flags;
	t[14] = 0xff;
	t[15] = 0xff;
	for (int i = 12; i < 20; i += 2)
		ps += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	ps += IPPROTO_TCP + 20;
	c = csum16(t, 20, ps);
	t[16] = (uint8_t)(c >> 8);
	t[17] = (uint8_t)c;
	return 40;
}

struct pkt_spec {
	int reply;
	uint8_t flags;
	uint32_t seq, ack;
};

/* A handshake with ECN (SYN|ECE|CWR, SYN-ACK|ECE), data with PSH and URG
 * from the client, a FIN from the server. */
static const struct pkt_spec session[] = {
	{ 0, CT_TCP_SYN | CT_TCP_ECE | CT_TCP_CWR, 1000, 0 },
	{ 1, CT_TCP_SYN | CT_TCP_ACK | CT_TCP_ECE, 5000, 1001 },
	{ 0, CT_TCP_ACK, 1001, 5001 },
	{ 0, CT_TCP_PSH | CT_TCP_ACK | CT_TCP_URG, 1001, 5001 },
	{ 1, CT_TCP_FIN | CT_TCP_ACK, 5001, 1001 },
};
#define ORIG_WANT (CT_TCP_SYN | CT_TCP_ECE | CT_TCP_CWR | CT_TCP_ACK | CT_TCP_PSH | CT_TCP_URG)
#define REPLY_WANT (CT_TCP_SYN | CT_TCP_ACK | CT_TCP_ECE | CT_TCP_FIN)

static uint32_t a_cli, a_srv;

struct run {
	struct ct_table *t;
	struct ct_thread *thr;
	struct ct_event last_destroy;
	int destroys;
};

static void on_event(const struct ct_event *ev, void *arg)
{
	struct run *r = arg;

	if (ev->type == CT_EV_DESTROY) {
		r->last_destroy = *ev;
		r->destroys++;
	}
}

static void open_table(struct run *r, int flags, int extras)
{
	struct ct_table_config cfg;

	memset(r, 0, sizeof(*r));
	ct_table_config_default(&cfg);
	cfg.tcp_flags = flags;
	cfg.settings.acct = extras ? 1 : 0;
	cfg.settings.timestamp = extras ? 1 : 0;
	cfg.labels = extras;
	assert_int_equal(ct_table_create(&cfg, &r->t), 0);
	r->thr = ct_thread_attach(r->t);
	assert_non_null(r->thr);
	ct_table_set_event_handler(r->t, on_event, r);
}

static void close_table(struct run *r)
{
	ct_table_set_event_handler(r->t, NULL, NULL);
	ct_thread_detach(r->thr);
	ct_table_destroy(r->t);
}

/* Track session[] from client port @cp, one by one or as one burst. */
static void play(struct run *r, uint16_t cp, int burst)
{
	static uint8_t frames[8][64];
	struct ct_packet pk[8];
	const struct ct_packet *pp[8];
	struct ct_verdict v[8];
	unsigned n = sizeof(session) / sizeof(session[0]);

	for (unsigned i = 0; i < n; i++) {
		const struct pkt_spec *s = &session[i];
		size_t len = s->reply
			? tcp4(frames[i], a_srv, a_cli, 80, cp, s->flags, s->seq, s->ack)
			: tcp4(frames[i], a_cli, a_srv, cp, 80, s->flags, s->seq, s->ack);

		assert_int_equal(ct_parse_ip(&pk[i], frames[i], (uint32_t)len, (uint32_t)len,
					     1000000000ull + i * 1000), CT_PKT_TRACKABLE);
		pk[i].ts = 1000000000ull + i * 1000;
		pp[i] = &pk[i];
	}
	if (burst) {
		assert_int_equal(ct_process_burst_ts(r->thr, pp, n, v), 0);
	} else {
		for (unsigned i = 0; i < n; i++)
			assert_int_equal(ct_process(r->thr, &pk[i], pk[i].ts, &v[i]), 0);
	}
	for (unsigned i = 0; i < n; i++)
		assert_int_not_equal(v[i].cls, CT_V_INVALID);
}

static void lookup(struct run *r, uint16_t cp, struct ct_conn_info *ci)
{
	struct ct_tuple tu;

	memset(&tu, 0, sizeof(tu));
	tu.l3 = CT_L3_IPV4;
	tu.l4 = IPPROTO_TCP;
	tu.src.ip4 = a_cli;
	tu.dst.ip4 = a_srv;
	tu.sport = cp;
	tu.dport = 80;
	assert_int_equal(ct_table_lookup(r->thr, &tu, ci, NULL), 1);
}

static void each_direction_keeps_the_or_of_its_flags(void **state)
{
	for (int extras = 0; extras < 2; extras++)
		for (int burst = 0; burst < 2; burst++) {
			struct run r;
			struct ct_conn_info ci;

			open_table(&r, 1, extras);
			play(&r, (uint16_t)(40000 + extras * 2 + burst), burst);
			lookup(&r, (uint16_t)(40000 + extras * 2 + burst), &ci);
			assert_int_equal(ci.tcp_flags[CT_DIR_ORIGINAL], ORIG_WANT);
			assert_int_equal(ci.tcp_flags[CT_DIR_REPLY], REPLY_WANT);
			if (extras) {   /* the other extensions are still right */
				assert_int_equal(ci.packets[0], 3);
				assert_int_equal(ci.packets[1], 2);
				assert_int_equal(ci.bytes[0], 120);
			}
			close_table(&r);
		}
}

static void without_the_option_flags_are_zero_and_cost_no_memory(void **state)
{
	struct run r, f;
	struct ct_conn_info ci;

	open_table(&r, 0, 1);
	play(&r, 41000, 1);
	lookup(&r, 41000, &ci);
	assert_int_equal(ci.tcp_flags[0], 0);
	assert_int_equal(ci.tcp_flags[1], 0);
	open_table(&f, 1, 1);
	/* 8 bytes for TCP entries only */
	assert_int_equal(ct_conn_size(f.t, IPPROTO_TCP), ct_conn_size(r.t, IPPROTO_TCP) + 8);
	assert_int_equal(ct_conn_size(f.t, IPPROTO_UDP), ct_conn_size(r.t, IPPROTO_UDP));
	close_table(&f);
	close_table(&r);
}

static void a_destroy_event_carries_the_flags(void **state)
{
	struct run r;
	uint8_t fr[64];
	struct ct_packet pk;
	struct ct_verdict v;

	open_table(&r, 1, 0);
	play(&r, 42000, 0);
	/* the client resets: RST|ACK in window ends it */
	tcp4(fr, a_cli, a_srv, 42000, 80, CT_TCP_RST | CT_TCP_ACK, 1001, 5002);
	assert_int_equal(ct_parse_ip(&pk, fr, 40, 40, 2000000000ull), CT_PKT_TRACKABLE);
	assert_int_equal(ct_process(r.thr, &pk, 2000000000ull, &v), 0);
	ct_table_flush(r.thr, -1, 3000000000ull);
	assert_true(r.destroys >= 1);
	assert_int_equal(r.last_destroy.conn.tcp_flags[0], ORIG_WANT | CT_TCP_RST);
	assert_int_equal(r.last_destroy.conn.tcp_flags[1], REPLY_WANT);
	close_table(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(each_direction_keeps_the_or_of_its_flags),
		cmocka_unit_test(without_the_option_flags_are_zero_and_cost_no_memory),
		cmocka_unit_test(a_destroy_event_carries_the_flags),
	};

	inet_pton(AF_INET, "10.1.0.1", &a_cli);
	inet_pton(AF_INET, "10.2.0.1", &a_srv);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
