/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sync_node.c - the node's modes as conntrackd's sync-ftfw.c,
 * sync-notrack.c and sync-alarm.c behave, on a clock the test moves.
 *
 * Single-node cases feed hand-made messages and read back what the node
 * sends (the rules of sync-ftfw.c: a gap gives ACK for what came and NACK
 * for the gap, a full window gives an ACK, a second without sending gives
 * ALIVE or the pending ACK, HELLO until HELLO_BACK, NACKed objects sent
 * again with new numbers, ACKed ones freed).  Two-node cases join two
 * nodes by sync_link.h: with 5% loss and reordering, FTFW must end with
 * each side's external cache equal to the other's internal one, entry for
 * entry; NOTRACK must report its losses.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "ctrack/sync.h"
#include "sync_link.h"

#define SEC SL_NS
#define MS (SL_NS / 1000)

/* ------------------------------------------------------------------ */
/* a node whose datagrams are kept for the test to read                */

#define CAP_MAX 4096

struct cap_msg {
	struct ct_sync_hdr h;
	struct ct_sync_conn c;     /* data messages */
	bool has_conn;
};

struct cap {
	struct cap_msg m[CAP_MAX];
	unsigned n;
	unsigned dgrams;
};

static int cap_send(void *arg, const void *buf, size_t len)
{
	struct cap *c = arg;
	const uint8_t *p = buf;
	size_t off = 0;

	c->dgrams++;
	while (off < len) {
		struct cap_msg *m = &c->m[c->n];

		assert_true(c->n < CAP_MAX);
		assert_int_equal(ct_sync_msg_header(p + off, len - off, &m->h), CT_SYNC_OK);
		m->has_conn = ct_sync_msg_class(&m->h) == CT_SYNC_C_DATA;
		if (m->has_conn)
			assert_int_equal(ct_sync_msg_parse_conn(p + off, &m->h, &m->c, NULL),
					 CT_SYNC_OK);
		off += m->h.len;
		c->n++;
	}
	assert_int_equal(off, len);
	return 0;
}

static struct cap *cap_new(void)
{
	struct cap *c = calloc(1, sizeof(*c));

	assert_non_null(c);
	return c;
}

static void base_cfg(struct ct_sync_config *cfg, enum ct_sync_mode mode)
{
	ct_sync_config_default(cfg);
	cfg->mode = mode;
	cfg->initial_seq = 1000;
	cfg->startup_resync = false;
	cfg->resync_on_hello = false;
	cfg->hash_seed = 42;
}

static struct ct_sync_node *node_cap(struct ct_sync_config *cfg, struct cap *c)
{
	struct ct_sync_node *n;

	cfg->send = cap_send;
	cfg->send_arg = c;
	assert_int_equal(ct_sync_node_create(cfg, 0, &n), 0);
	return n;
}

static struct ct_sync_conn conn_n(unsigned i)
{
	struct ct_sync_conn c;

	memset(&c, 0, sizeof(c));
	c.orig.l3 = CT_L3_IPV4;
	c.orig.l4 = 6;
	c.orig.src.ip4 = htonl(0x0a000000u + (i >> 16));
	c.orig.dst.ip4 = htonl(0xc0000201u);
	c.orig.sport = (uint16_t)(i & 0xffff);
	c.orig.dport = 443;
	c.has = CT_SYNC_HAS_STATUS | CT_SYNC_HAS_TIMEOUT | CT_SYNC_HAS_MARK |
		CT_SYNC_HAS_STATE | CT_SYNC_HAS_PORTS;
	c.status = CT_ST_CONFIRMED | CT_ST_SEEN_REPLY | CT_ST_ASSURED;
	c.l4state = 3;
	c.timeout_s = 432000;
	c.mark = i;
	return c;
}

/* A data message from the "peer" with number @seq and @flags. */
static size_t peer_data(uint8_t *buf, uint32_t seq, uint8_t flags, unsigned i)
{
	struct ct_sync_conn c = conn_n(i);
	int n = ct_sync_msg_conn(buf, CT_SYNC_CONN_MSG_MAX, CT_SYNC_T_CT_NEW, flags,
				 seq, &c, CT_SYNC_ENC_TIMEOUT);

	assert_true(n > 0);
	return (size_t)n;
}

static void feed_data(struct ct_sync_node *n, uint32_t seq, uint8_t flags, unsigned i,
		      ct_time_ns now)
{
	uint8_t buf[CT_SYNC_CONN_MSG_MAX];
	size_t len = peer_data(buf, seq, flags, i);

	ct_sync_node_recv(n, buf, len, now);
}

static void feed_ctl(struct ct_sync_node *n, uint32_t seq, uint8_t flags, uint32_t from,
		     uint32_t to, ct_time_ns now)
{
	uint8_t buf[16];
	int len = ct_sync_msg_ctl(buf, sizeof(buf), flags, seq, from, to);

	assert_true(len > 0);
	ct_sync_node_recv(n, buf, (size_t)len, now);
}

static unsigned count_ctl(const struct cap *c, uint8_t flag)
{
	unsigned k = 0;

	for (unsigned i = 0; i < c->n; i++)
		if (c->m[i].h.type == CT_SYNC_T_CTL && (c->m[i].h.flags & flag))
			k++;
	return k;
}

static const struct cap_msg *find_ctl(const struct cap *c, uint8_t flag, unsigned nth)
{
	for (unsigned i = 0; i < c->n; i++)
		if (c->m[i].h.type == CT_SYNC_T_CTL && (c->m[i].h.flags & flag) && nth-- == 0)
			return &c->m[i];
	return NULL;
}

static uint64_t ext_count(struct ct_sync_node *n)
{
	struct ct_sync_stats s;

	ct_sync_node_get_stats(n, &s);
	return s.external.active;
}

/* ------------------------------------------------------------------ */
/* FTFW, one node                                                      */

static void test_ftfw_gap_gives_ack_then_nack_for_the_gap(void **state)
{
	struct ct_sync_config cfg;
	struct cap *c = cap_new();
	struct ct_sync_node *n;
	const struct cap_msg *ack, *nack;
	struct ct_sync_stats s;

	(void)state;
	base_cfg(&cfg, CT_SYNC_FTFW);
	n = node_cap(&cfg, c);
	feed_data(n, 100, 0, 1, 1 * MS);
	feed_data(n, 101, 0, 2, 2 * MS);
	feed_data(n, 104, 0, 3, 3 * MS);     /* 102 and 103 lost */
	ct_sync_node_run(n, 4 * MS, 0);
	ack = find_ctl(c, CT_SYNC_F_ACK, 0);
	nack = find_ctl(c, CT_SYNC_F_NACK, 0);
	assert_non_null(ack);
	assert_non_null(nack);
	assert_int_equal(ack->h.from, 100);
	assert_int_equal(ack->h.to, 101);
	assert_int_equal(nack->h.from, 102);
	assert_int_equal(nack->h.to, 103);
	assert_true(ack < nack);             /* ACK first, as conntrackd */
	assert_int_equal(ext_count(n), 3);   /* the one after the gap is kept */
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.msg_rcv_lost, 2); /* exactly (conntrackd says 4) */
	/* the window restarted at 104: a second later the pending ACK */
	ct_sync_node_run(n, 4 * MS + SEC, 0);
	ack = find_ctl(c, CT_SYNC_F_ACK, 1);
	assert_non_null(ack);
	assert_int_equal(ack->h.from, 104);
	assert_int_equal(ack->h.to, 104);
	ct_sync_node_destroy(n);
	free(c);
}

static void test_ftfw_window_of_300_is_acknowledged(void **state)
{
	struct ct_sync_config cfg;
	struct cap *c = cap_new();
	struct ct_sync_node *n;
	const struct cap_msg *ack;

	(void)state;
	base_cfg(&cfg, CT_SYNC_FTFW);
	n = node_cap(&cfg, c);
	for (unsigned i = 0; i < 299; i++)
		feed_data(n, 5000 + i, 0, i, MS);
	ct_sync_node_run(n, 2 * MS, 0);
	assert_int_equal(count_ctl(c, CT_SYNC_F_ACK), 0);
	feed_data(n, 5299, 0, 299, 3 * MS);
	ct_sync_node_run(n, 4 * MS, 0);
	ack = find_ctl(c, CT_SYNC_F_ACK, 0);
	assert_non_null(ack);
	assert_int_equal(ack->h.from, 5000);
	assert_int_equal(ack->h.to, 5299);
	assert_int_equal(ext_count(n), 300);
	ct_sync_node_destroy(n);
	free(c);
}

static void test_ftfw_alive_after_a_second_and_hello_until_answered(void **state)
{
	struct ct_sync_config cfg;
	struct cap *c = cap_new();
	struct ct_sync_node *n;
	const struct cap_msg *a;

	(void)state;
	base_cfg(&cfg, CT_SYNC_FTFW);
	n = node_cap(&cfg, c);
	assert_int_equal(ct_sync_node_run(n, 500 * MS, 0), SEC);
	assert_int_equal(c->n, 0);
	ct_sync_node_run(n, SEC, 0);
	assert_int_equal(c->n, 1);
	a = &c->m[0];
	assert_int_equal(a->h.type, CT_SYNC_T_CTL);
	assert_int_equal(a->h.flags, CT_SYNC_F_ALIVE | CT_SYNC_F_HELLO);
	assert_int_equal(a->h.seq, 1000);
	assert_int_equal(a->h.len, 8);
	/* the peer answers with HELLO_BACK; from then on no HELLO, and the
	 * next keepalive is the ACK of what came (do_alive_alarm) */
	feed_ctl(n, 77, CT_SYNC_F_ALIVE | CT_SYNC_F_HELLO_BACK, 0, 0, SEC + MS);
	ct_sync_node_run(n, 2 * SEC + MS, 0);
	assert_int_equal(c->n, 2);
	assert_int_equal(c->m[1].h.flags, CT_SYNC_F_ACK);
	assert_int_equal(c->m[1].h.from, 77);
	assert_int_equal(c->m[1].h.to, 77);
	assert_int_equal(c->m[1].h.seq, 1001);
	ct_sync_node_run(n, 3 * SEC + MS, 0);
	assert_int_equal(c->n, 3);
	assert_int_equal(c->m[2].h.flags, CT_SYNC_F_ALIVE);
	ct_sync_node_destroy(n);
	free(c);
}

static void test_ftfw_peer_hello_is_answered_and_resynced(void **state)
{
	struct ct_sync_config cfg;
	struct cap *c = cap_new();
	struct ct_sync_node *n;
	struct ct_sync_conn k;
	struct ct_sync_stats s;
	unsigned data = 0;

	(void)state;
	base_cfg(&cfg, CT_SYNC_FTFW);
	cfg.resync_on_hello = true;
	n = node_cap(&cfg, c);
	for (unsigned i = 0; i < 10; i++) {
		k = conn_n(i);
		assert_int_equal(ct_sync_node_local(n, CT_SYNC_T_CT_NEW, &k, 0), 0);
	}
	ct_sync_node_run(n, MS, 0);
	assert_int_equal(c->n, 10);
	c->n = 0;
	/* the peer (re)starts: HELLO on its messages, twice */
	feed_ctl(n, 9000, CT_SYNC_F_ALIVE | CT_SYNC_F_HELLO, 0, 0, 2 * MS);
	feed_ctl(n, 9001, CT_SYNC_F_ALIVE | CT_SYNC_F_HELLO, 0, 0, 3 * MS);
	ct_sync_node_run(n, 4 * MS, 0);
	for (unsigned i = 0; i < c->n; i++)
		data += c->m[i].has_conn;
	assert_int_equal(data, 10);                      /* one bulk, not two */
	assert_true(c->m[0].h.flags & CT_SYNC_F_HELLO_BACK);
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.hello_recv, 1);
	assert_int_equal(s.bulk_sends, 1);
	/* the 10 sent before the HELLO were flushed from the resend queue:
	 * only the bulk's 10 wait for an ACK */
	assert_int_equal(s.rs_queue_len, 10);
	ct_sync_node_destroy(n);
	free(c);
}

/* conntrackd neither checks the numbers of HELLO messages nor keeps its
 * resend queue while HELLOs arrive: a loss then is repaired by a resync
 * once both handshakes are over. */
static void test_ftfw_loss_during_the_handshake_asks_for_a_resync(void **state)
{
	struct ct_sync_config cfg;
	struct cap *c = cap_new();
	struct ct_sync_node *n;
	const struct cap_msg *nack;
	struct ct_sync_stats s;

	(void)state;
	base_cfg(&cfg, CT_SYNC_FTFW);
	n = node_cap(&cfg, c);
	ct_sync_node_run(n, SEC, 0);                  /* our ALIVE|HELLO */
	feed_data(n, 100, CT_SYNC_F_HELLO, 1, SEC + MS);
	feed_data(n, 103, CT_SYNC_F_HELLO, 2, SEC + 2 * MS);   /* 101, 102 lost */
	ct_sync_node_run(n, SEC + 3 * MS, 0);
	nack = find_ctl(c, CT_SYNC_F_NACK, 0);
	assert_non_null(nack);
	assert_int_equal(nack->h.from, 101);
	assert_int_equal(nack->h.to, 102);
	assert_int_equal(count_ctl(c, CT_SYNC_F_RESYNC), 0);
	/* the handshake ends: HELLO_BACK, then plain messages */
	feed_data(n, 104, CT_SYNC_F_HELLO_BACK, 3, SEC + 4 * MS);
	ct_sync_node_run(n, SEC + 5 * MS, 0);
	assert_int_equal(count_ctl(c, CT_SYNC_F_RESYNC), 0);    /* not yet */
	ct_sync_node_run(n, 3 * SEC + 10 * MS, 0);
	assert_int_equal(count_ctl(c, CT_SYNC_F_RESYNC), 1);
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.hello_resyncs, 1);
	/* a loss after the handshake is FTFW's usual business: no resync */
	feed_data(n, 107, 0, 4, 4 * SEC);
	ct_sync_node_run(n, 8 * SEC, 0);
	assert_int_equal(count_ctl(c, CT_SYNC_F_RESYNC), 1);
	ct_sync_node_destroy(n);
	free(c);
}

static void test_ftfw_nack_resends_with_new_numbers_and_ack_frees(void **state)
{
	struct ct_sync_config cfg;
	struct cap *c = cap_new();
	struct ct_sync_node *n;
	struct ct_sync_conn k;
	struct ct_sync_stats s;

	(void)state;
	base_cfg(&cfg, CT_SYNC_FTFW);
	n = node_cap(&cfg, c);
	for (unsigned i = 0; i < 5; i++) {
		k = conn_n(i);
		assert_int_equal(ct_sync_node_local(n, CT_SYNC_T_CT_NEW, &k, 0), 0);
	}
	ct_sync_node_run(n, MS, 0);
	assert_int_equal(c->n, 5);                 /* seqs 1000..1004 */
	assert_int_equal(c->m[0].h.seq, 1000);
	c->n = 0;
	/* the peer lost 1001 and 1002 */
	feed_ctl(n, 50, CT_SYNC_F_ACK, 1000, 1000, 2 * MS);
	feed_ctl(n, 51, CT_SYNC_F_NACK, 1001, 1002, 2 * MS);
	ct_sync_node_run(n, 3 * MS, 0);
	assert_int_equal(c->n, 2);
	assert_int_equal(c->m[0].h.seq, 1005);
	assert_int_equal(c->m[0].c.orig.sport, 1);
	assert_int_equal(c->m[1].h.seq, 1006);
	assert_int_equal(c->m[1].c.orig.sport, 2);
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.resent, 2);
	assert_int_equal(s.rs_queue_len, 4);       /* 1003, 1004, 1005, 1006 */
	feed_ctl(n, 52, CT_SYNC_F_ACK, 1003, 1006, 4 * MS);
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.rs_queue_len, 0);
	/* an ACK for numbers never sent changes nothing, and is counted */
	feed_ctl(n, 53, CT_SYNC_F_ACK, 5000, 6000, 5 * MS);
	feed_ctl(n, 54, CT_SYNC_F_NACK, 1, 3, 5 * MS);
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.msg_rcv_ack_stale, 2);
	/* a range backwards is a bad header */
	feed_ctl(n, 55, CT_SYNC_F_ACK, 1004, 1003, 5 * MS);
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.msg_rcv_bad_header, 1);
	ct_sync_node_destroy(n);
	free(c);
}

static void test_ftfw_destroyed_entry_waits_for_its_ack(void **state)
{
	struct ct_sync_config cfg;
	struct cap *c = cap_new();
	struct ct_sync_node *n;
	struct ct_sync_conn k = conn_n(7);
	struct ct_sync_stats s;
	struct ct_sync_entry e;

	(void)state;
	base_cfg(&cfg, CT_SYNC_FTFW);
	n = node_cap(&cfg, c);
	assert_int_equal(ct_sync_node_local(n, CT_SYNC_T_CT_NEW, &k, 0), 0);
	assert_int_equal(ct_sync_node_local(n, CT_SYNC_T_CT_UPD, &k, 0), 0);
	ct_sync_node_run(n, MS, 0);
	assert_int_equal(c->n, 1);                 /* queued once: the UPD */
	assert_int_equal(c->m[0].h.type, CT_SYNC_T_CT_UPD);
	assert_int_equal(ct_sync_node_local(n, CT_SYNC_T_CT_DEL, &k, 2 * MS), 0);
	ct_sync_node_run(n, 3 * MS, 0);
	assert_int_equal(c->m[1].h.type, CT_SYNC_T_CT_DEL);
	assert_false(ct_sync_node_find(n, CT_SYNC_INTERNAL, &k.orig, 3 * MS, &e));
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.internal.active, 0);
	/* one object, one place in a queue: the DEL replaced the UPD */
	assert_int_equal(s.rs_queue_len, 1);
	/* the DEL is lost: NACK brings it back */
	feed_ctl(n, 10, CT_SYNC_F_NACK, c->m[1].h.seq, c->m[1].h.seq, 4 * MS);
	ct_sync_node_run(n, 5 * MS, 0);
	assert_int_equal(c->m[2].h.type, CT_SYNC_T_CT_DEL);
	feed_ctl(n, 11, CT_SYNC_F_ACK, 1000, c->m[2].h.seq, 6 * MS);
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.rs_queue_len, 0);
	ct_sync_node_destroy(n);
	free(c);
}

static void test_ftfw_replayed_and_far_numbers_are_dropped(void **state)
{
	struct ct_sync_config cfg;
	struct cap *c = cap_new();
	struct ct_sync_node *n;
	struct ct_sync_stats s;
	uint8_t buf[CT_SYNC_CONN_MSG_MAX];
	size_t len;

	(void)state;
	base_cfg(&cfg, CT_SYNC_FTFW);
	cfg.seq_window = 1000;
	n = node_cap(&cfg, c);
	len = peer_data(buf, 100, 0, 1);
	ct_sync_node_recv(n, buf, len, MS);
	feed_data(n, 101, 0, 2, MS);
	ct_sync_node_recv(n, buf, len, MS);    /* 100 again: a replay */
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.msg_rcv_before, 1);
	assert_int_equal(ext_count(n), 2);
	/* one message far ahead: dropped, nothing NACKed */
	feed_data(n, 100000, 0, 3, MS);
	ct_sync_node_run(n, 2 * MS, 0);
	assert_int_equal(count_ctl(c, CT_SYNC_F_NACK), 0);
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.msg_rcv_out_of_window, 1);
	assert_int_equal(ext_count(n), 2);
	/* the true stream goes on */
	feed_data(n, 102, 0, 4, 3 * MS);
	assert_int_equal(ext_count(n), 3);
	/* the peer's numbering really moved: a run of 4 in a row */
	for (unsigned i = 0; i < 4; i++)
		feed_data(n, 7000000 + i, 0, 10 + i, 4 * MS);
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.msg_rcv_seq_resets, 1);
	assert_int_equal(s.msg_rcv_out_of_window, 4);
	assert_int_equal(ext_count(n), 4);        /* the 4th is taken */
	feed_data(n, 7000004, 0, 20, 5 * MS);
	assert_int_equal(ext_count(n), 5);
	ct_sync_node_run(n, 6 * MS, 0);
	assert_int_equal(count_ctl(c, CT_SYNC_F_RESYNC), 1);  /* we ask again */
	ct_sync_node_destroy(n);
	free(c);
}

static void test_resync_request_sends_the_whole_table(void **state)
{
	struct ct_sync_config cfg;
	struct cap *c = cap_new();
	struct ct_sync_node *n;
	struct ct_sync_conn k;

	(void)state;
	base_cfg(&cfg, CT_SYNC_FTFW);
	cfg.startup_resync = true;
	n = node_cap(&cfg, c);
	for (unsigned i = 0; i < 50; i++) {
		k = conn_n(i);
		assert_int_equal(ct_sync_node_local(n, CT_SYNC_T_CT_NEW, &k, 0), 0);
	}
	ct_sync_node_run(n, MS, 0);
	/* startup_resync: our own request, a 16-byte one */
	assert_int_equal(c->n, 51);
	assert_int_equal(count_ctl(c, CT_SYNC_F_RESYNC), 1);
	assert_int_equal(find_ctl(c, CT_SYNC_F_RESYNC, 0)->h.len, 16);
	c->n = 0;
	feed_ctl(n, 1, CT_SYNC_F_RESYNC, 0, 0, 2 * MS);
	ct_sync_node_run(n, 3 * MS, 0);
	assert_int_equal(c->n, 50);
	ct_sync_node_destroy(n);
	free(c);
}

static void test_resend_queue_full_drops_the_oldest(void **state)
{
	struct ct_sync_config cfg;
	struct cap *c = cap_new();
	struct ct_sync_node *n;
	struct ct_sync_conn k;
	struct ct_sync_stats s;

	(void)state;
	base_cfg(&cfg, CT_SYNC_FTFW);
	cfg.resend_queue_max = 8;
	n = node_cap(&cfg, c);
	for (unsigned i = 0; i < 20; i++) {
		k = conn_n(i);
		assert_int_equal(ct_sync_node_local(n, CT_SYNC_T_CT_NEW, &k, 0), 0);
	}
	ct_sync_node_run(n, MS, 0);
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.rs_queue_len, 8);
	assert_int_equal(s.rs_queue_dropped, 12);
	/* a NACK for the oldest finds nothing to resend */
	c->n = 0;
	feed_ctl(n, 1, CT_SYNC_F_NACK, 1000, 1011, 2 * MS);
	ct_sync_node_run(n, 3 * MS, 0);
	assert_int_equal(c->n, 0);
	ct_sync_node_destroy(n);
	free(c);
}

static void test_caches_are_bounded(void **state)
{
	struct ct_sync_config cfg;
	struct cap *c = cap_new();
	struct ct_sync_node *n;
	struct ct_sync_conn k;
	struct ct_sync_stats s;

	(void)state;
	base_cfg(&cfg, CT_SYNC_FTFW);
	cfg.internal_max = 10;
	cfg.external_max = 10;
	n = node_cap(&cfg, c);
	for (unsigned i = 0; i < 10; i++) {
		k = conn_n(i);
		assert_int_equal(ct_sync_node_local(n, CT_SYNC_T_CT_NEW, &k, 0), 0);
	}
	k = conn_n(10);
	assert_int_equal(ct_sync_node_local(n, CT_SYNC_T_CT_NEW, &k, 0), -ENOSPC);
	for (unsigned i = 0; i < 30; i++)
		feed_data(n, 100 + i, 0, i, MS);
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.internal.create_failed, 1);
	assert_int_equal(s.external.active, 10);
	assert_int_equal(s.external.create_failed, 20);
	ct_sync_node_destroy(n);
	free(c);
}

/* A datagram with messages after a bad one: conntrackd's rules. */
static void test_datagram_walk_rules(void **state)
{
	struct ct_sync_config cfg;
	struct cap *c = cap_new();
	struct ct_sync_node *n;
	struct ct_sync_stats s;
	uint8_t buf[4 * CT_SYNC_CONN_MSG_MAX];
	size_t a, b, d;

	(void)state;
	base_cfg(&cfg, CT_SYNC_FTFW);
	n = node_cap(&cfg, c);
	/* version 2 in the middle: skipped, the next one taken */
	a = peer_data(buf, 1, 0, 1);
	b = peer_data(buf + a, 2, 0, 2);
	buf[a] = (uint8_t)(0x20 | (buf[a] & 0x0f));
	d = peer_data(buf + a + b, 3, 0, 3);
	assert_int_equal(ct_sync_node_recv(n, buf, a + b + d, MS), 2);
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.msg_rcv_bad_version, 1);
	assert_int_equal(ext_count(n), 2);
	/* a zero length ends the datagram */
	a = peer_data(buf, 4, 0, 4);
	memset(buf + a, 0, 8);
	buf[a] = 0x10;
	b = peer_data(buf + a + 8, 5, 0, 5);
	assert_int_equal(ct_sync_node_recv(n, buf, a + 8 + b, MS), 1);
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.msg_rcv_bad_size, 1);
	/* a message cut by the end of the datagram */
	a = peer_data(buf, 5, 0, 5);
	assert_int_equal(ct_sync_node_recv(n, buf, a - 4, MS), 0);
	assert_int_equal(ct_sync_node_recv(n, buf, 5, MS), 0);
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.msg_rcv_bad_size, 2);
	assert_int_equal(s.msg_rcv_truncated, 1);
	assert_int_equal(s.msg_rcv_malformed, 4);
	/* expectations are counted and ignored; sequence still tracked */
	a = peer_data(buf, 5, 0, 6);
	buf[0] = (uint8_t)(0x10 | CT_SYNC_T_EXP_NEW);
	assert_int_equal(ct_sync_node_recv(n, buf, a, MS), 1);
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.msg_rcv_exp, 1);
	assert_int_equal(s.last_seq_recv, 5);
	ct_sync_node_destroy(n);
	free(c);
}

/* What the caches keep apart (labels, sequence adjustment, synproxy,
 * master, helper) comes back whole; the kernel's zero SYNPROXY, which
 * conntrackd sends with every entry, comes back as it came. */
static void test_external_cache_keeps_every_field(void **state)
{
	struct ct_sync_config cfg;
	struct cap *c = cap_new();
	struct ct_sync_node *n;
	struct ct_sync_conn k = conn_n(5), z = conn_n(6);
	struct ct_sync_entry e;
	uint8_t buf[CT_SYNC_CONN_MSG_MAX];
	int len;

	(void)state;
	base_cfg(&cfg, CT_SYNC_FTFW);
	n = node_cap(&cfg, c);
	k.has |= CT_SYNC_HAS_LABELS | CT_SYNC_HAS_NATSEQ | CT_SYNC_HAS_SYNPROXY |
		 CT_SYNC_HAS_MASTER | CT_SYNC_HAS_HELPER | CT_SYNC_HAS_SNAT | CT_SYNC_HAS_SPAT;
	k.labels[3] = 0x81;
	for (unsigned i = 0; i < 6; i++)
		k.natseq[i] = 1000 + i;
	k.synproxy[1] = 77;
	k.master = k.orig;
	k.master.dport = 21;
	strcpy(k.helper, "ftp");
	k.snat_addr.ip4 = htonl(0xc6336401);
	k.snat_port = 61000;
	len = ct_sync_msg_conn(buf, sizeof(buf), CT_SYNC_T_CT_NEW, 0, 10, &k, CT_SYNC_ENC_TIMEOUT);
	assert_true(len > 0);
	ct_sync_node_recv(n, buf, (size_t)len, MS);
	z.has |= CT_SYNC_HAS_SYNPROXY;          /* all zero */
	len = ct_sync_msg_conn(buf, sizeof(buf), CT_SYNC_T_CT_NEW, 0, 11, &z, CT_SYNC_ENC_TIMEOUT);
	ct_sync_node_recv(n, buf, (size_t)len, MS);
	assert_true(ct_sync_node_find(n, CT_SYNC_EXTERNAL, &k.orig, MS, &e));
	assert_memory_equal(&e.conn, &k, sizeof(k));
	assert_true(ct_sync_node_find(n, CT_SYNC_EXTERNAL, &z.orig, MS, &e));
	assert_memory_equal(&e.conn, &z, sizeof(z));
	/* an update that drops them drops them */
	k.has &= ~(uint32_t)(CT_SYNC_HAS_LABELS | CT_SYNC_HAS_HELPER | CT_SYNC_HAS_MASTER |
			     CT_SYNC_HAS_NATSEQ | CT_SYNC_HAS_SYNPROXY);
	memset(k.labels, 0, sizeof(k.labels));
	memset(k.natseq, 0, sizeof(k.natseq));
	memset(k.synproxy, 0, sizeof(k.synproxy));
	memset(&k.master, 0, sizeof(k.master));
	memset(k.helper, 0, sizeof(k.helper));
	len = ct_sync_msg_conn(buf, sizeof(buf), CT_SYNC_T_CT_UPD, 0, 12, &k, CT_SYNC_ENC_TIMEOUT);
	ct_sync_node_recv(n, buf, (size_t)len, MS);
	assert_true(ct_sync_node_find(n, CT_SYNC_EXTERNAL, &k.orig, MS, &e));
	assert_memory_equal(&e.conn, &k, sizeof(k));
	ct_sync_node_destroy(n);
	free(c);
}

/* ------------------------------------------------------------------ */
/* stream framing (TCP)                                               */

static void test_stream_messages_split_anywhere(void **state)
{
	struct ct_sync_config cfg;
	struct cap *c = cap_new();
	struct ct_sync_node *n;
	uint8_t buf[64 * CT_SYNC_CONN_MSG_MAX];
	size_t len = 0;
	struct ct_sync_stats s;

	(void)state;
	for (unsigned i = 0; i < 40; i++)
		len += peer_data(buf + len, 500 + i, 0, i);
	for (size_t cut = 1; cut < 200; cut += 7) {
		base_cfg(&cfg, CT_SYNC_NOTRACK);
		cfg.stream = true;
		n = node_cap(&cfg, c);
		for (size_t off = 0; off < len; off += cut)
			ct_sync_node_recv(n, buf + off, off + cut < len ? cut : len - off, MS);
		ct_sync_node_get_stats(n, &s);
		assert_int_equal(s.external.active, 40);
		assert_int_equal(s.msg_rcv_malformed, 0);
		ct_sync_node_destroy(n);
	}
	/* garbage inside the stream: skipped, the stream found again */
	base_cfg(&cfg, CT_SYNC_NOTRACK);
	cfg.stream = true;
	n = node_cap(&cfg, c);
	{
		uint8_t g[64];
		size_t a = peer_data(buf, 1, 0, 1);

		memset(g, 0x10, sizeof(g));      /* version 1, type 0, length 0 */
		ct_sync_node_recv(n, buf, a, MS);
		ct_sync_node_recv(n, g, sizeof(g), MS);
		a = peer_data(buf, 2, 0, 2);
		ct_sync_node_recv(n, buf, a, MS);
		a = peer_data(buf, 3, 0, 3);
		ct_sync_node_recv(n, buf, a, MS);
	}
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.msg_rcv_stream_resyncs, 1);
	assert_int_equal(s.external.active, 3);   /* nothing good was lost */
	ct_sync_node_destroy(n);
	free(c);
}

/* ------------------------------------------------------------------ */
/* NOTRACK and ALARM                                                  */

static void test_notrack_counts_loss_and_repairs_nothing(void **state)
{
	struct ct_sync_config cfg;
	struct cap *c = cap_new();
	struct ct_sync_node *n;
	struct ct_sync_stats s;

	(void)state;
	base_cfg(&cfg, CT_SYNC_NOTRACK);
	n = node_cap(&cfg, c);
	feed_data(n, 10, 0, 1, MS);
	feed_data(n, 11, 0, 2, MS);
	feed_data(n, 15, 0, 3, MS);
	feed_data(n, 13, 0, 4, MS);    /* late: behind 15, dropped */
	ct_sync_node_run(n, SEC + MS, 0);
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.msg_rcv_lost, 3);
	assert_int_equal(s.msg_rcv_before, 1);
	assert_int_equal(s.external.active, 3);
	assert_int_equal(count_ctl(c, CT_SYNC_F_NACK) + count_ctl(c, CT_SYNC_F_ACK), 0);
	assert_int_equal(count_ctl(c, CT_SYNC_F_ALIVE), 1);
	assert_int_equal(c->m[0].h.flags, CT_SYNC_F_ALIVE);  /* no HELLO in NOTRACK */
	/* a restarted NOTRACK peer (numbering behind): 4 in a row resync */
	for (unsigned i = 0; i < 5; i++)
		feed_data(n, 3 + i, 0, 100 + i, 2 * SEC);
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.msg_rcv_seq_resets, 1);
	assert_int_equal(s.external.active, 5);
	ct_sync_node_destroy(n);
	free(c);
}

static void test_alarm_refreshes_and_expires(void **state)
{
	struct ct_sync_config cfg;
	struct cap *c = cap_new();
	struct ct_sync_node *n;
	struct ct_sync_conn k;
	struct ct_sync_stats s;
	ct_time_ns now = 0;

	(void)state;
	base_cfg(&cfg, CT_SYNC_ALARM);
	cfg.refresh_s = 10;
	cfg.cache_timeout_s = 30;
	n = node_cap(&cfg, c);
	k = conn_n(1);
	assert_int_equal(ct_sync_node_local(n, CT_SYNC_T_CT_NEW, &k, 0), 0);
	ct_sync_node_run(n, MS, 0);
	assert_int_equal(c->n, 1);
	/* due again 10 s after it was sent */
	assert_int_equal(ct_sync_node_run(n, 2 * MS, 0), 10 * SEC + MS);
	ct_sync_node_run(n, 10 * SEC, 0);
	assert_int_equal(c->n, 1);
	ct_sync_node_run(n, 10 * SEC + MS, 0);
	assert_int_equal(c->n, 2);
	assert_int_equal(c->m[1].c.orig.sport, 1);
	/* no ALIVE, no control message in ALARM */
	assert_int_equal(count_ctl(c, 0xff), 0);
	/* a peer's entry is forgotten 30 s after its last refresh */
	feed_data(n, 1, 0, 9, 20 * SEC);
	for (now = 21 * SEC; now < 50 * SEC; now += SEC)
		ct_sync_node_run(n, now, 0);
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.external.active, 1);
	ct_sync_node_run(n, 50 * SEC + MS, 0);
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.external.active, 0);
	assert_int_equal(s.external.expired, 1);
	ct_sync_node_destroy(n);
	free(c);
}

/* ------------------------------------------------------------------ */
/* from ctrack events                                                 */

static void test_event_timeout_is_what_is_left_when_sent(void **state)
{
	struct ct_sync_config cfg;
	struct cap *c = cap_new();
	struct ct_sync_node *n;
	struct ct_event ev;
	struct ct_sync_entry e;

	(void)state;
	base_cfg(&cfg, CT_SYNC_FTFW);
	n = node_cap(&cfg, c);
	memset(&ev, 0, sizeof(ev));
	ev.type = CT_EV_NEW;
	ev.ts = 100 * SEC;                         /* the table's clock */
	ev.conn.orig.l3 = CT_L3_IPV4;
	ev.conn.orig.l4 = 17;
	ev.conn.orig.src.ip4 = htonl(0x0a000001);
	ev.conn.orig.dst.ip4 = htonl(0x0a000002);
	ev.conn.orig.sport = 5000;
	ev.conn.orig.dport = 53;
	assert_true(ct_tuple_invert(&ev.conn.orig, &ev.conn.reply));
	ev.conn.status = CT_ST_CONFIRMED;
	ev.conn.expires = 130 * SEC;               /* 30 s left */
	assert_int_equal(ct_sync_node_event(n, &ev, 7 * SEC), 0);
	/* sent 12 s later on the node's clock: 18 s left */
	ct_sync_node_run(n, 19 * SEC, 0);
	assert_int_equal(c->n, 1);                 /* no ALIVE: data goes */
	assert_int_equal(c->m[0].c.timeout_s, 18);
	assert_true(ct_sync_node_find(n, CT_SYNC_INTERNAL, &ev.conn.orig, 19 * SEC, &e));
	assert_int_equal(e.timeout_left_s, 18);
	/* DESTROY of an entry never seen: nothing (as conntrackd) */
	ev.type = CT_EV_DESTROY;
	ev.conn.orig.sport = 5001;
	assert_int_equal(ct_sync_node_event(n, &ev, 20 * SEC), 0);
	ct_sync_node_run(n, 21 * SEC, 0);
	for (unsigned i = 1; i < c->n; i++)
		assert_false(c->m[i].has_conn);
	ct_sync_node_destroy(n);
	free(c);
}

/* ------------------------------------------------------------------ */
/* two nodes on a lossy link                                          */

struct tab_check {
	struct ct_sync_node *other;
	ct_time_ns now;
	unsigned mismatches, seen;
};

static int check_in_other(const struct ct_sync_entry *e, void *arg)
{
	struct tab_check *t = arg;
	struct ct_sync_entry o;

	t->seen++;
	if (!ct_sync_node_find(t->other, CT_SYNC_EXTERNAL, &e->conn.orig, t->now, &o) ||
	    o.conn.l4state != e->conn.l4state || o.conn.mark != e->conn.mark ||
	    o.conn.status != e->conn.status)
		t->mismatches++;
	return 0;
}

/* Both directions: a's internal == b's external and the reverse. */
static void assert_converged(struct sl_link *l, ct_time_ns now)
{
	for (unsigned d = 0; d < 2; d++) {
		struct tab_check t = { .other = l->node[d ^ 1], .now = now };
		struct ct_sync_stats si, se;

		ct_sync_node_dump(l->node[d], CT_SYNC_INTERNAL, now, check_in_other, &t);
		ct_sync_node_get_stats(l->node[d], &si);
		ct_sync_node_get_stats(l->node[d ^ 1], &se);
		assert_int_equal(t.mismatches, 0);
		assert_int_equal(t.seen, si.internal.active);
		assert_int_equal(se.external.active, si.internal.active);
	}
}

static void churn(struct sl_link *l, unsigned side, unsigned base, unsigned n,
		  ct_time_ns now, uint64_t *rng)
{
	for (unsigned i = 0; i < n; i++) {
		unsigned id = base + (unsigned)(sl_rand(l) % 2000);
		struct ct_sync_conn k = conn_n(id);
		unsigned op = sl_rand(l) % 3;

		(void)rng;
		k.l4state = (uint8_t)(1 + sl_rand(l) % 8);
		k.mark = sl_rand(l);
		ct_sync_node_local(l->node[side],
				   op == 0 ? CT_SYNC_T_CT_NEW : op == 1 ? CT_SYNC_T_CT_UPD :
				   CT_SYNC_T_CT_DEL, &k, now);
	}
}

static void run_lossy(enum ct_sync_mode mode, uint64_t seed, unsigned loss_ppm,
		      unsigned reorder_ppm, struct ct_sync_stats *sb)
{
	struct sl_link *l = calloc(1, sizeof(*l));
	struct ct_sync_config cfg;
	ct_time_ns now = 0;

	assert_non_null(l);
	l->rng = seed;
	l->loss_ppm = loss_ppm;
	l->reorder_ppm = reorder_ppm;
	for (unsigned side = 0; side < 2; side++) {
		base_cfg(&cfg, mode);
		cfg.initial_seq = 1000u + side * 77777u;
		cfg.hash_seed = seed + side;
		cfg.startup_resync = true;
		cfg.resync_on_hello = true;
		cfg.send = side == 0 ? sl_send_a : sl_send_b;
		cfg.send_arg = l;
		assert_int_equal(ct_sync_node_create(&cfg, 0, &l->node[side]), 0);
	}
	/* 20 s of churn on both sides, a step every 10 ms */
	for (unsigned step = 0; step < 2000; step++) {
		now += 10 * MS;
		churn(l, 0, 0, 5, now, NULL);
		churn(l, 1, 100000, 5, now, NULL);
		sl_step(l, now);
	}
	/* traffic stops; the link keeps its loss; 30 s to settle */
	for (unsigned step = 0; step < 3000; step++) {
		now += 10 * MS;
		sl_step(l, now);
	}
	if (mode == CT_SYNC_FTFW)
		assert_converged(l, now);
	if (getenv("SYNC_TEST_VERBOSE")) {
		struct ct_sync_stats a, b;

		ct_sync_node_get_stats(l->node[0], &a);
		ct_sync_node_get_stats(l->node[1], &b);
		fprintf(stderr, "a: int %llu ext %llu sent %llu lost %llu resent %llu nacks %llu; "
			"b: int %llu ext %llu lost %llu resent %llu; link lost %llu/%llu\n",
			(unsigned long long)a.internal.active, (unsigned long long)a.external.active,
			(unsigned long long)a.msgs_sent, (unsigned long long)a.msg_rcv_lost,
			(unsigned long long)a.resent, (unsigned long long)a.nacks_sent,
			(unsigned long long)b.internal.active, (unsigned long long)b.external.active,
			(unsigned long long)b.msg_rcv_lost, (unsigned long long)b.resent,
			(unsigned long long)l->dir[0].lost, (unsigned long long)l->dir[0].sent);
	}
	if (sb)
		ct_sync_node_get_stats(l->node[1], sb);
	for (unsigned side = 0; side < 2; side++) {
		sl_discard(l, side);
		ct_sync_node_destroy(l->node[side]);
	}
	free(l);
}

static void test_ftfw_converges_with_5pct_loss_and_reordering(void **state)
{
	struct ct_sync_stats s;

	(void)state;
	for (uint64_t seed = 1; seed <= 6; seed++) {
		run_lossy(CT_SYNC_FTFW, seed * 0x9e3779b97f4a7c15ull, 50000, 50000, &s);
		/* the loss was real, and repaired */
		assert_true(s.msg_rcv_lost > 0);
		assert_true(s.nacks_sent > 0);
	}
}

static void test_ftfw_converges_with_20pct_loss(void **state)
{
	(void)state;
	run_lossy(CT_SYNC_FTFW, 12345, 200000, 100000, NULL);
}

static void test_ftfw_converges_without_loss(void **state)
{
	struct ct_sync_stats s;

	(void)state;
	run_lossy(CT_SYNC_FTFW, 777, 0, 0, &s);
	assert_int_equal(s.msg_rcv_lost, 0);
	assert_int_equal(s.nacks_sent, 0);
}

static void test_notrack_reports_its_loss(void **state)
{
	struct ct_sync_stats s;

	(void)state;
	run_lossy(CT_SYNC_NOTRACK, 99, 50000, 0, &s);
	assert_true(s.msg_rcv_lost > 0);
	assert_int_equal(s.nacks_sent, 0);
}

/* A node that restarts mid-run (a new node, new numbering, empty caches)
 * gets the other's table back through HELLO, and gives its own. */
static void test_ftfw_node_restarted_mid_run_resynchronizes(void **state)
{
	struct sl_link *l = calloc(1, sizeof(*l));
	struct ct_sync_config cfg[2];
	ct_time_ns now = 0;

	(void)state;
	assert_non_null(l);
	l->rng = 4242;
	l->loss_ppm = 50000;
	l->reorder_ppm = 50000;
	for (unsigned side = 0; side < 2; side++) {
		base_cfg(&cfg[side], CT_SYNC_FTFW);
		cfg[side].initial_seq = 5000u + side * 100000u;
		cfg[side].startup_resync = true;
		cfg[side].resync_on_hello = true;
		cfg[side].send = side == 0 ? sl_send_a : sl_send_b;
		cfg[side].send_arg = l;
		assert_int_equal(ct_sync_node_create(&cfg[side], 0, &l->node[side]), 0);
	}
	for (unsigned step = 0; step < 1000; step++) {
		now += 10 * MS;
		churn(l, 0, 0, 5, now, NULL);
		churn(l, 1, 100000, 5, now, NULL);
		sl_step(l, now);
	}
	/* b restarts: it loses everything, its own table is refilled from
	 * its (imaginary) tracker with the same connections */
	{
		struct ct_sync_node *old = l->node[1], *fresh_node;
		struct ct_sync_entry e;

		sl_discard(l, 0);
		sl_discard(l, 1);
		cfg[1].initial_seq = 5000u + 3u * 100000u;
		assert_int_equal(ct_sync_node_create(&cfg[1], now, &fresh_node), 0);
		for (unsigned id = 100000; id < 102000; id++) {
			struct ct_sync_conn k = conn_n(id);

			if (ct_sync_node_find(old, CT_SYNC_INTERNAL, &k.orig, now, &e))
				ct_sync_node_local(fresh_node, CT_SYNC_T_CT_NEW, &e.conn, now);
		}
		ct_sync_node_destroy(old);
		l->node[1] = fresh_node;
	}
	for (unsigned step = 0; step < 1000; step++) {
		now += 10 * MS;
		churn(l, 0, 0, 5, now, NULL);
		sl_step(l, now);
	}
	for (unsigned step = 0; step < 3000; step++) {
		now += 10 * MS;
		sl_step(l, now);
	}
	assert_converged(l, now);
	for (unsigned side = 0; side < 2; side++) {
		sl_discard(l, side);
		ct_sync_node_destroy(l->node[side]);
	}
	free(l);
}

/* A peer (or someone with its address) NACKing everything, over and
 * over: each object is resent at most once per NACK that names its
 * current number, so the traffic is bounded by what the node holds, and
 * a NACK for numbers already resent finds nothing. */
static void test_ftfw_nack_flood_is_bounded(void **state)
{
	struct ct_sync_config cfg;
	struct cap *c = cap_new();
	struct ct_sync_node *n;
	struct ct_sync_conn k;
	struct ct_sync_stats s;
	uint32_t last;

	(void)state;
	base_cfg(&cfg, CT_SYNC_FTFW);
	n = node_cap(&cfg, c);
	for (unsigned i = 0; i < 100; i++) {
		k = conn_n(i);
		assert_int_equal(ct_sync_node_local(n, CT_SYNC_T_CT_NEW, &k, 0), 0);
	}
	ct_sync_node_run(n, MS, 0);
	last = c->m[c->n - 1].h.seq;
	/* 1000 NACKs of the first 100 numbers: one resend of each */
	for (unsigned i = 0; i < 1000; i++)
		feed_ctl(n, 10 + i, CT_SYNC_F_NACK, 1000, last, 2 * MS);
	c->n = 0;
	ct_sync_node_run(n, 3 * MS, 0);
	{
		unsigned data = 0;

		for (unsigned i = 0; i < c->n; i++)
			data += c->m[i].has_conn;
		assert_int_equal(data, 100);      /* besides our window ACKs */
	}
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.resent, 100);
	assert_int_equal(s.nacks_recv, 1000);
	assert_int_equal(s.rs_queue_len, 100 + s.acks_sent);   /* ACKs are kept too */
	/* garbage by the thousand changes no cache */
	for (unsigned i = 0; i < 100000; i++) {
		uint8_t g[16] = { 0x10, 0, 0, 16, 0, 0, 0, 1, 0, 8, 0, 40 };

		g[7] = (uint8_t)i;
		ct_sync_node_recv(n, g, sizeof(g), 4 * MS);
	}
	ct_sync_node_get_stats(n, &s);
	assert_int_equal(s.external.active, 0);
	assert_int_equal(s.internal.active, 100);
	assert_true(s.msg_rcv_malformed + s.msg_rcv_out_of_window + s.msg_rcv_before >= 99000);
	ct_sync_node_destroy(n);
	free(c);
}

/* ------------------------------------------------------------------ */
/* garbage never hurts                                                 */

static void test_random_garbage_between_good_messages(void **state)
{
	struct ct_sync_config cfg;
	struct cap *c = cap_new();
	struct ct_sync_node *n;
	uint64_t r = 1;
	uint8_t buf[2048];
	struct ct_sync_stats s;

	(void)state;
	base_cfg(&cfg, CT_SYNC_FTFW);
	n = node_cap(&cfg, c);
	for (unsigned i = 0; i < 20000; i++) {
		size_t len = 0;
		unsigned k = (unsigned)(r % 5);

		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		if (k == 0) {
			len = r % sizeof(buf);
			for (size_t j = 0; j < len; j++)
				buf[j] = (uint8_t)(r >> (j % 57));
			buf[0] = (uint8_t)(0x10 | (buf[0] & 0x0f));
		} else {
			/* a good message with a byte or two flipped */
			len = peer_data(buf, 10 + i, 0, i % 300);
			if (k > 1)
				buf[r % len] ^= (uint8_t)(1u << (r % 8));
			if (k > 3)
				buf[(r >> 8) % len] ^= (uint8_t)(r >> 16);
		}
		ct_sync_node_recv(n, buf, len, MS);
		if (i % 100 == 0)
			ct_sync_node_run(n, MS * (i / 100 + 2), 0);
		c->n = 0;
	}
	ct_sync_node_get_stats(n, &s);
	assert_true(s.msg_rcv_malformed > 0);
	assert_true(s.external.active > 0);
	assert_true(s.external.active <= 20000);
	ct_sync_node_destroy(n);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ftfw_gap_gives_ack_then_nack_for_the_gap),
		cmocka_unit_test(test_ftfw_window_of_300_is_acknowledged),
		cmocka_unit_test(test_ftfw_alive_after_a_second_and_hello_until_answered),
		cmocka_unit_test(test_ftfw_peer_hello_is_answered_and_resynced),
		cmocka_unit_test(test_ftfw_loss_during_the_handshake_asks_for_a_resync),
		cmocka_unit_test(test_ftfw_nack_resends_with_new_numbers_and_ack_frees),
		cmocka_unit_test(test_ftfw_destroyed_entry_waits_for_its_ack),
		cmocka_unit_test(test_ftfw_replayed_and_far_numbers_are_dropped),
		cmocka_unit_test(test_resync_request_sends_the_whole_table),
		cmocka_unit_test(test_resend_queue_full_drops_the_oldest),
		cmocka_unit_test(test_caches_are_bounded),
		cmocka_unit_test(test_datagram_walk_rules),
		cmocka_unit_test(test_external_cache_keeps_every_field),
		cmocka_unit_test(test_stream_messages_split_anywhere),
		cmocka_unit_test(test_notrack_counts_loss_and_repairs_nothing),
		cmocka_unit_test(test_alarm_refreshes_and_expires),
		cmocka_unit_test(test_event_timeout_is_what_is_left_when_sent),
		cmocka_unit_test(test_ftfw_converges_with_5pct_loss_and_reordering),
		cmocka_unit_test(test_ftfw_converges_with_20pct_loss),
		cmocka_unit_test(test_ftfw_converges_without_loss),
		cmocka_unit_test(test_notrack_reports_its_loss),
		cmocka_unit_test(test_ftfw_node_restarted_mid_run_resynchronizes),
		cmocka_unit_test(test_ftfw_nack_flood_is_bounded),
		cmocka_unit_test(test_random_garbage_between_good_messages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
