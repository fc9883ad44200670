/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_sync_transport.c - the --sync settings and the transports of
 * tools/ctrack/sync/, on loopback (no root, no namespaces: 127.0.0.1 and
 * 127.0.0.2 are two nodes, 127.0.0.3 a stranger).
 *
 * Settings: each transport's line parses to what conntrackd.conf would
 * say; every mistake a person can make is refused with a sentence naming
 * the key.  Transports: a datagram from the peer arrives, one from another
 * address is refused and counted; a TCP stream carries messages whole
 * however the kernel splits them, and a connection from a stranger is
 * closed; a sync node over UDP loopback reaches another.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "sync/sync_config.h"
#include "sync/sync_transport.h"

static char err[256];

static int parse(struct ctsync_settings *s, const char *spec)
{
	ctsync_settings_default(s);
	err[0] = 0;
	return ctsync_settings_parse(s, spec, err, sizeof(err));
}

static void test_settings_each_transport(void **state)
{
	struct ctsync_settings s;
	struct in_addr a;

	(void)state;
	assert_int_equal(parse(&s, "mode=ftfw,transport=udp,local=10.0.0.2,peer=10.0.0.1"), 0);
	assert_int_equal(s.node.mode, CT_SYNC_FTFW);
	assert_int_equal(s.link.kind, CTS_UDP);
	assert_int_equal(s.link.family, AF_INET);
	assert_int_equal(s.link.port, 3780);
	inet_pton(AF_INET, "10.0.0.1", &a);
	assert_int_equal(s.link.peer.v4.s_addr, a.s_addr);
	assert_false(s.node.stream);
	assert_int_equal(s.node.datagram_max, 1500 - 28);
	assert_true(s.node.initial_seq > 1600000000u);   /* the wall clock's */
	assert_int_equal(s.node.window_size, 300);

	assert_int_equal(parse(&s, "mode=notrack,transport=tcp,local=fd00::2,peer=fd00::1,"
			       "port=3781,window-tracking=on,commit-timeout=180"), 0);
	assert_int_equal(s.link.kind, CTS_TCP);
	assert_int_equal(s.link.family, AF_INET6);
	assert_int_equal(s.link.port, 3781);
	assert_true(s.node.stream);
	assert_true(s.node.window_tracking);
	assert_int_equal(s.node.commit_timeout_s, 180);
	assert_int_equal(s.node.datagram_max, 1500 - 60);   /* IPv6 + TCP */

	assert_int_equal(parse(&s, "mode=alarm,transport=mcast,iface=lo,local=127.0.0.1,"
			       "group=225.0.0.50,accept=10.0.0.1+10.0.0.3,refresh=15,"
			       "cache-timeout=45"), 0);
	assert_int_equal(s.link.kind, CTS_MCAST);
	assert_int_equal(s.link.n_accept, 2);
	assert_int_equal(s.node.refresh_s, 15);
	assert_int_equal(s.node.cache_timeout_s, 45);
}

static void test_settings_mistakes_are_named(void **state)
{
	static const struct {
		const char *spec, *says;
	} bad[] = {
		{ "mode=ftfw,transport=udp,local=10.0.0.2", "needs local= and peer=" },
		{ "mode=fast,local=10.0.0.2,peer=10.0.0.1", "mode=fast" },
		{ "transport=sctp,local=10.0.0.2,peer=10.0.0.1", "transport=sctp" },
		{ "local=10.0.0,peer=10.0.0.1", "not an IPv4 or IPv6 address" },
		{ "local=10.0.0.2,peer=fd00::1", "peer is IPv6 but local is IPv4" },
		{ "local=10.0.0.2,peer=10.0.0.1,port=0", "port=0" },
		{ "local=10.0.0.2,peer=10.0.0.1,port=70000", "port=70000" },
		{ "local=10.0.0.2,peer=10.0.0.1,window=0", "window=0" },
		{ "local=10.0.0.2,peer=10.0.0.1,checksum=maybe", "on or off" },
		{ "local=10.0.0.2,peer=10.0.0.1,colour=blue", "unknown setting 'colour'" },
		{ "local=10.0.0.2,peer=10.0.0.1,junk", "'junk' is not key=value" },
		{ "transport=mcast,iface=eth0,local=10.0.0.2,group=225.0.0.50",
		  "multicast needs group=, iface=, accept=" },
		{ "transport=mcast,iface=eth0,local=10.0.0.2,group=10.0.0.9,accept=10.0.0.1",
		  "not a multicast address" },
		{ "local=10.0.0.2,peer=10.0.0.1,accept=10.0.0.1+nonsense", "nonsense is not an address" },
	};
	struct ctsync_settings s;

	(void)state;
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(&s, bad[i].spec), -1);
		if (!strstr(err, bad[i].says))
			fail_msg("%s: said '%s', want '%s'", bad[i].spec, err, bad[i].says);
		assert_true(strncmp(err, "sync: ", 6) == 0);
	}
}

/* ------------------------------------------------------------------ */

static uint16_t free_port(void)
{
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	uint16_t port;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(0x7f000001);
	assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &sl), 0);
	port = ntohs(sin.sin_port);
	close(fd);
	return port;
}

static void cfg_for(struct cts_config *c, enum cts_kind kind, const char *local,
		    const char *peer, uint16_t port)
{
	cts_config_default(c);
	c->kind = kind;
	c->port = port;
	assert_int_equal(inet_pton(AF_INET, local, &c->local.v4), 1);
	assert_int_equal(inet_pton(AF_INET, peer, &c->peer.v4), 1);
}

struct got {
	uint8_t buf[65536];
	size_t len;
	unsigned calls;
};

static void on_recv(void *arg, const uint8_t *buf, size_t len)
{
	struct got *g = arg;

	if (g->len + len <= sizeof(g->buf)) {
		memcpy(g->buf + g->len, buf, len);
		g->len += len;
	}
	g->calls++;
}

/* Poll @t's descriptors and feed what arrives to @g, for up to @ms. */
static void pump(struct cts *t, struct got *g, size_t want, int ms)
{
	struct timespec t0, now;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int fds[3];
		struct pollfd p[3];
		unsigned n = cts_fds(t, fds, 3);

		for (unsigned i = 0; i < n; i++) {
			p[i].fd = fds[i];
			p[i].events = POLLIN;
			p[i].revents = 0;
		}
		poll(p, n, 20);
		for (unsigned i = 0; i < n; i++)
			if (p[i].revents)
				cts_input(t, p[i].fd, on_recv, g, 64);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (g->len >= want ||
		    (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return;
	}
}

static void test_udp_peer_accepted_stranger_refused(void **state)
{
	struct cts_config ca, cb;
	struct cts *a, *b;
	struct cts_stats st;
	struct got *g = calloc(1, sizeof(*g));
	uint16_t port = free_port();
	struct sockaddr_in to, from;
	int x;

	(void)state;
	cfg_for(&ca, CTS_UDP, "127.0.0.1", "127.0.0.2", port);
	cfg_for(&cb, CTS_UDP, "127.0.0.2", "127.0.0.1", port);
	assert_int_equal(cts_open(&ca, &a, err, sizeof(err)), 0);
	assert_int_equal(cts_open(&cb, &b, err, sizeof(err)), 0);
	assert_int_equal(cts_send(a, "hello", 5), 0);
	pump(b, g, 5, 2000);
	assert_int_equal(g->len, 5);
	assert_memory_equal(g->buf, "hello", 5);
	/* the same port from 127.0.0.3 */
	x = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&from, 0, sizeof(from));
	from.sin_family = AF_INET;
	from.sin_addr.s_addr = htonl(0x7f000003);
	assert_int_equal(bind(x, (struct sockaddr *)&from, sizeof(from)), 0);
	memset(&to, 0, sizeof(to));
	to.sin_family = AF_INET;
	to.sin_port = htons(port);
	to.sin_addr.s_addr = htonl(0x7f000002);
	for (int i = 0; i < 3; i++)
		assert_int_equal(sendto(x, "evil", 4, 0, (struct sockaddr *)&to, sizeof(to)), 4);
	assert_int_equal(cts_send(a, "again", 5), 0);
	pump(b, g, 10, 2000);
	assert_int_equal(g->len, 10);
	assert_memory_equal(g->buf + 5, "again", 5);
	cts_get_stats(b, &st);
	assert_int_equal(st.rejected_peer, 3);
	assert_int_equal(st.datagrams_in, 2);
	close(x);
	cts_close(a);
	cts_close(b);
	free(g);
}

static void test_tcp_stream_whole_and_stranger_closed(void **state)
{
	struct cts_config ca, cb;
	struct cts *a, *b;
	struct cts_stats st;
	struct got *g = calloc(1, sizeof(*g));
	uint16_t port = free_port();
	uint8_t big[20000];
	size_t sent = 0;
	struct sockaddr_in to, from;
	int x;

	(void)state;
	cfg_for(&ca, CTS_TCP, "127.0.0.1", "127.0.0.2", port);
	cfg_for(&cb, CTS_TCP, "127.0.0.2", "127.0.0.1", port);
	assert_int_equal(cts_open(&cb, &b, err, sizeof(err)), 0);
	assert_int_equal(cts_open(&ca, &a, err, sizeof(err)), 0);
	/* a stranger connects first: closed, counted */
	x = socket(AF_INET, SOCK_STREAM, 0);
	memset(&from, 0, sizeof(from));
	from.sin_family = AF_INET;
	from.sin_addr.s_addr = htonl(0x7f000003);
	assert_int_equal(bind(x, (struct sockaddr *)&from, sizeof(from)), 0);
	memset(&to, 0, sizeof(to));
	to.sin_family = AF_INET;
	to.sin_port = htons(port);
	to.sin_addr.s_addr = htonl(0x7f000002);
	assert_int_equal(connect(x, (struct sockaddr *)&to, sizeof(to)), 0);
	(void)!write(x, "evil", 4);
	pump(b, g, 1, 300);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7);
	/* the client connects when it first sends (its connect may still be
	 * in progress: what cannot go yet is counted, as conntrackd's) */
	for (int tries = 0; tries < 100 && sent == 0; tries++) {
		if (cts_send(a, big, sizeof(big)) == 0)
			sent = sizeof(big);
		else
			usleep(20000);
	}
	assert_int_equal(sent, sizeof(big));
	pump(b, g, sizeof(big), 3000);
	assert_int_equal(g->len, sizeof(big));
	assert_memory_equal(g->buf, big, sizeof(big));
	cts_get_stats(b, &st);
	assert_int_equal(st.rejected_peer, 1);
	close(x);
	cts_close(a);
	cts_close(b);
	free(g);
}

/* Two sync nodes over UDP loopback: A's entries reach B's external cache. */
struct side {
	struct cts *t;
	struct ct_sync_node *n;
};

static void node_recv(void *arg, const uint8_t *buf, size_t len)
{
	struct side *s = arg;

	ct_sync_node_recv(s->n, buf, len, 1);
}

static void test_nodes_over_udp_loopback(void **state)
{
	struct ctsync_settings sa, sb;
	struct side a, b;
	char spec[256];
	uint16_t port = free_port();
	struct ct_sync_stats st;

	(void)state;
	snprintf(spec, sizeof(spec), "local=127.0.0.1,peer=127.0.0.2,port=%u", port);
	assert_int_equal(parse(&sa, spec), 0);
	snprintf(spec, sizeof(spec), "local=127.0.0.2,peer=127.0.0.1,port=%u", port);
	assert_int_equal(parse(&sb, spec), 0);
	assert_int_equal(cts_open(&sa.link, &a.t, err, sizeof(err)), 0);
	assert_int_equal(cts_open(&sb.link, &b.t, err, sizeof(err)), 0);
	sa.node.send = cts_send;
	sa.node.send_arg = a.t;
	sb.node.send = cts_send;
	sb.node.send_arg = b.t;
	assert_int_equal(ct_sync_node_create(&sa.node, 1, &a.n), 0);
	assert_int_equal(ct_sync_node_create(&sb.node, 1, &b.n), 0);
	for (unsigned i = 0; i < 1000; i++) {
		struct ct_sync_conn c;

		memset(&c, 0, sizeof(c));
		c.orig.l3 = CT_L3_IPV4;
		c.orig.l4 = 17;
		c.orig.src.ip4 = htonl(0x0a000001);
		c.orig.dst.ip4 = htonl(0x0a000002);
		c.orig.sport = (uint16_t)(1024 + i);
		c.orig.dport = 53;
		c.has = CT_SYNC_HAS_STATUS | CT_SYNC_HAS_TIMEOUT | CT_SYNC_HAS_PORTS;
		c.timeout_s = 30;
		assert_int_equal(ct_sync_node_local(a.n, CT_SYNC_T_CT_NEW, &c, 1), 0);
	}
	ct_sync_node_run(a.n, 1, 0);
	for (int i = 0; i < 100; i++) {
		int fds[3];
		unsigned k = cts_fds(b.t, fds, 3);
		struct pollfd p = { .fd = fds[0], .events = POLLIN };

		assert_int_equal(k, 1);
		poll(&p, 1, 20);
		cts_input(b.t, fds[0], node_recv, &b, 64);
		ct_sync_node_get_stats(b.n, &st);
		if (st.external.active == 1000)
			break;
	}
	assert_int_equal(st.external.active, 1000);
	assert_int_equal(st.msg_rcv_malformed, 0);
	ct_sync_node_destroy(a.n);
	ct_sync_node_destroy(b.n);
	cts_close(a.t);
	cts_close(b.t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_settings_each_transport),
		cmocka_unit_test(test_settings_mistakes_are_named),
		cmocka_unit_test(test_udp_peer_accepted_stranger_refused),
		cmocka_unit_test(test_tcp_stream_whole_and_stranger_closed),
		cmocka_unit_test(test_nodes_over_udp_loopback),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
