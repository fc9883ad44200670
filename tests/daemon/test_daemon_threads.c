/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_daemon_threads.c - the whole daemon in one process, every thread of
 * it busy at once, for ThreadSanitizer (suite `concurrency`: `make
 * test-tsan` runs it there, `make test` and `make test SANITIZE=1` run it
 * as well).
 *
 * cmd_daemon() runs on a thread of this test with a replay of a capture
 * written here (UDP and TCP flows over four workers, short UDP timeouts so
 * that the collector destroys entries while the test runs) and, through
 * dm_table_created(), the table's RCU flavour wrapped so that TSan sees
 * grace periods (tests/concurrency/tsan_rcu.c).  Four client threads talk
 * to its socket all the while - list, count, stats, a subscriber reading
 * events, delete, set - so that the workers, the replay feeder, the
 * collector, the state saver (--state-interval 1) and the main loop all
 * run together; then SIGTERM stops it (and saves the state).
 * The daemon also exports (--ipfix to a UDP socket of this test, active
 * timeouts every second) and serves metrics, which a fifth thread scrapes
 * all the while (issue 26): the export thread and libmicrohttpd's run
 * beside the others.  What must hold: no TSan report (halt_on_error),
 * every reply is a JSON line of the protocol, the subscriber gets events,
 * scrapes get pages, IPFIX datagrams arrive, and the daemon exits 0 with
 * its socket removed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ctrack/ctrack.h"
#include "cli.h"
#include "daemon.h"
#include "support/csum.h"
#include "tsan_rcu.h"

void dm_table_created(struct ct_table *t)
{
	ct_tsan_rcu_wrap(t);
}

static char dir[40], sock_path[96], cap_path[96], ipfix_arg[32], metrics_arg[32],
	state_path[96];
static atomic_bool clients_stop;
static atomic_int replies, events_seen, bad_replies, scrapes_ok, ipfix_datagrams;
static int ipfix_fd = -1;
static uint16_t metrics_port;

/* A frame: Ethernet, IPv4, UDP (no checksum) or TCP (flags; checksums are
 * off in the daemon for this test). */
static void frame(FILE *f, uint64_t ts, uint32_t src, uint32_t dst, uint16_t sp, uint16_t dp,
		  int tcp_flags)
{
	uint8_t b[14 + 20 + 20] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00 };
	uint8_t *ip = b + 14, *l4 = ip + 20;
	unsigned l4len = tcp_flags >= 0 ? 20 : 8;
	uint32_t hdr[4] = { (uint32_t)(ts / 1000000000ull), (uint32_t)(ts % 1000000000ull),
			    14 + 20 + l4len, 14 + 20 + l4len };
	uint16_t v;

	ip[0] = 0x45;
	v = htons((uint16_t)(20 + l4len));
	memcpy(ip + 2, &v, 2);
	ip[8] = 64;
	ip[9] = tcp_flags >= 0 ? 6 : 17;
	src = htonl(src);
	dst = htonl(dst);
	memcpy(ip + 12, &src, 4);
	memcpy(ip + 16, &dst, 4);
	ts_ip4_csum(ip);
	v = htons(sp);
	memcpy(l4, &v, 2);
	v = htons(dp);
	memcpy(l4 + 2, &v, 2);
	if (tcp_flags >= 0) {
		l4[12] = 5 << 4;
		l4[13] = (uint8_t)tcp_flags;
		l4[14] = 0xff;
	} else {
		v = htons(8);
		memcpy(l4 + 4, &v, 2);
	}
	fwrite(hdr, sizeof(hdr), 1, f);
	fwrite(b, 14 + 20 + l4len, 1, f);
}

static void write_capture(void)
{
	FILE *f = fopen(cap_path, "wb");
	uint32_t gh[6] = { 0xa1b23c4du, 0x00040002u, 0, 0, 65535, 1 };
	uint64_t ts = 1700000000ull * 1000000000ull;

	assert_non_null(f);
	fwrite(gh, sizeof(gh), 1, f);
	for (uint32_t i = 0; i < 20000; i++, ts += 1000) {
		uint32_t c = 0x0a000001u + i, s = 0xc0000201u;

		if (i % 4) {
			frame(f, ts, c, s, (uint16_t)(1024 + i % 50000), 53, -1);
			frame(f, ts + 1, s, c, 53, (uint16_t)(1024 + i % 50000), -1);
		} else {
			frame(f, ts, c, s, (uint16_t)(1024 + i % 50000), 80, 0x02);
			frame(f, ts + 1, s, c, 80, (uint16_t)(1024 + i % 50000), 0x12);
			frame(f, ts + 2, c, s, (uint16_t)(1024 + i % 50000), 80, 0x10);
		}
	}
	fclose(f);
}

static int dial(void)
{
	struct sockaddr_un sa;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Send @req, read until the reply ends (a line with "end", "ok":false,
 * or any control line for one-line commands); returns lines read. */
static int transact(const char *req, bool multi)
{
	char buf[65536];
	size_t have = 0;
	int fd = dial(), lines = 0;

	if (fd < 0)
		return -1;
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
		close(fd);
		return -1;
	}
	for (;;) {
		ssize_t n = recv(fd, buf + have, sizeof(buf) - have - 1, 0);
		char *p, *nl;

		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = 0;
		p = buf;
		while ((nl = strchr(p, '\n'))) {
			*nl = 0;
			lines++;
			if (lines == 1 && strncmp(p, "{\"v\":1,", 7))
				atomic_fetch_add(&bad_replies, 1);
			if (!multi || (!strncmp(p, "{\"v\":1,", 7) &&
				       (strstr(p, "\"end\"") || strstr(p, "\"ok\":false")))) {
				close(fd);
				atomic_fetch_add(&replies, 1);
				return lines;
			}
			p = nl + 1;
		}
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
		if (have == sizeof(buf) - 1)
			have = 0;
	}
	close(fd);
	return lines;
}

static void *client(void *arg)
{
	int k = (int)(intptr_t)arg;

	while (!atomic_load(&clients_stop)) {
		switch (k) {
		case 0:
			transact("{\"v\":1,\"cmd\":\"list\",\"format\":\"extended\"}\n", true);
			transact("{\"v\":1,\"cmd\":\"count\",\"filter\":{\"proto\":\"tcp\"}}\n", false);
			break;
		case 1:
			transact("{\"v\":1,\"cmd\":\"stats\"}\n", false);
			transact("{\"v\":1,\"cmd\":\"count\"}\n", false);
			break;
		case 2:
			transact("{\"v\":1,\"cmd\":\"delete\",\"filter\":{\"proto\":\"udp\","
				 "\"src\":\"10.0.1.0/24\"}}\n", true);
			transact("{\"v\":1,\"cmd\":\"set\",\"name\":\"nf_conntrack_udp_timeout\","
				 "\"value\":\"1\"}\n", false);
			break;
		default:
			break;
		}
		usleep(10000);
	}
	return NULL;
}

/* A subscriber that reads events until told to stop. */
static void *subscriber(void *arg)
{
	int fd;
	char buf[65536];

	(void)arg;
	while ((fd = dial()) < 0 && !atomic_load(&clients_stop))
		usleep(10000);
	if (fd < 0)
		return NULL;
	send(fd, "{\"v\":1,\"cmd\":\"events\",\"format\":\"json\"}\n", 39, MSG_NOSIGNAL);
	{
		struct timeval tv = { 0, 200000 };

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	while (!atomic_load(&clients_stop)) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		for (ssize_t i = 0; i < n; i++)
			if (buf[i] == '\n')
				atomic_fetch_add(&events_seen, 1);
		if (n == 0)
			break;
	}
	close(fd);
	return NULL;
}

/* GET /metrics over a plain TCP socket until told to stop. */
static void *scraper(void *arg)
{
	static const char req[] = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";

	(void)arg;
	while (!atomic_load(&clients_stop)) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(metrics_port) };
		char buf[65536];
		size_t have = 0;
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
		    send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) > 0) {
			ssize_t n;

			while (have < sizeof(buf) - 1 &&
			       (n = recv(fd, buf + have, sizeof(buf) - 1 - have, 0)) > 0)
				have += (size_t)n;
			buf[have] = 0;
			if (!strncmp(buf, "HTTP/1.", 7) && strstr(buf, " 200 ") &&
			    strstr(buf, "ctrack_capture_packets_total"))
				atomic_fetch_add(&scrapes_ok, 1);
		}
		if (fd >= 0)
			close(fd);
		usleep(20000);
	}
	return NULL;
}

/* The IPFIX collector: counts datagrams. */
static void *collector(void *arg)
{
	char buf[65536];

	(void)arg;
	while (!atomic_load(&clients_stop)) {
		if (recv(ipfix_fd, buf, sizeof(buf), 0) > 0)
			atomic_fetch_add(&ipfix_datagrams, 1);
	}
	return NULL;
}

/* A loopback port, @type, bound (returned as @fd when wanted) or free. */
static uint16_t loopback_port(int type, int *keep)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
	if (keep)
		*keep = fd;
	else
		close(fd);
	return ntohs(a.sin_port);
}

struct run {
	int rc;
};

static void *daemon_main(void *arg)
{
	struct run *r = arg;
	char *argv[] = { "daemon", "--replay", cap_path, "--speed", "0", "--workers", "4",
			 "--socket", sock_path, "--set", "nf_conntrack_checksum=0", "--set",
			 "nf_conntrack_udp_timeout=1", "--set",
			 "nf_conntrack_tcp_timeout_syn_recv=2", "--events-buffer-kb", "64",
			 "--ipfix", ipfix_arg, "--ipfix-active-timeout", "1", "--metrics-listen",
			 metrics_arg, "--state", state_path, "--state-interval", "1", NULL };

	r->rc = cmd_daemon((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv);
	return NULL;
}

static void test_every_thread_of_the_daemon_at_once(void **st)
{
	pthread_t dt, ct[6];
	struct run r = { -1 };
	sigset_t mask;
	struct stat sb;
	int waited = 0;
	unsigned ms = getenv("CT_STRESS_SUITE_MS") ? (unsigned)atoi(getenv("CT_STRESS_SUITE_MS"))
						   : 1500;

	(void)st;
	snprintf(dir, sizeof(dir), "/tmp/ctk-dmthr-%d", (int)getpid());
	mkdir(dir, 0700);
	snprintf(sock_path, sizeof(sock_path), "%s/ctrack.sock", dir);
	snprintf(cap_path, sizeof(cap_path), "%s/flows.pcap", dir);
	snprintf(state_path, sizeof(state_path), "%s/state", dir);
	write_capture();
	{
		struct timeval tv = { 0, 100000 };

		snprintf(ipfix_arg, sizeof(ipfix_arg), "127.0.0.1:%u",
			 loopback_port(SOCK_DGRAM, &ipfix_fd));
		setsockopt(ipfix_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		metrics_port = loopback_port(SOCK_STREAM, NULL);
		snprintf(metrics_arg, sizeof(metrics_arg), "127.0.0.1:%u", metrics_port);
	}
	/* SIGTERM goes to the daemon's signalfd, whichever thread it hits */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGINT);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	assert_int_equal(pthread_create(&dt, NULL, daemon_main, &r), 0);
	while (stat(sock_path, &sb) != 0 && waited++ < 3000)
		usleep(10000);
	assert_true(waited < 3000);
	for (int k = 0; k < 3; k++)
		assert_int_equal(pthread_create(&ct[k], NULL, client, (void *)(intptr_t)k), 0);
	assert_int_equal(pthread_create(&ct[3], NULL, subscriber, NULL), 0);
	assert_int_equal(pthread_create(&ct[4], NULL, scraper, NULL), 0);
	assert_int_equal(pthread_create(&ct[5], NULL, collector, NULL), 0);
	usleep(ms * 1000u);
	kill(getpid(), SIGHUP);     /* a reload while everything runs */
	usleep(ms * 500u);
	/* The counts below are floors of work done, not of work per second:
	 * on a loaded machine (or under TSan) the clients run on until they
	 * have them, two minutes at most, so that a slow host is no failure
	 * and a daemon that stops answering still is one. */
	for (int w = 0; w < 1200 && (atomic_load(&replies) <= 10 ||
				      atomic_load(&events_seen) <= 100 ||
				      atomic_load(&scrapes_ok) <= 2 ||
				      atomic_load(&ipfix_datagrams) <= 2); w++)
		usleep(100000);
	atomic_store(&clients_stop, true);
	for (int k = 0; k < 6; k++)
		pthread_join(ct[k], NULL);
	kill(getpid(), SIGTERM);
	pthread_join(dt, NULL);
	close(ipfix_fd);
	fprintf(stderr, "replies %d (bad %d), events %d, scrapes %d, IPFIX datagrams %d\n",
		atomic_load(&replies), atomic_load(&bad_replies), atomic_load(&events_seen),
		atomic_load(&scrapes_ok), atomic_load(&ipfix_datagrams));
	assert_int_equal(r.rc, 0);
	assert_int_equal(atomic_load(&bad_replies), 0);
	assert_true(atomic_load(&replies) > 10);
	assert_true(atomic_load(&events_seen) > 100);
	assert_true(atomic_load(&scrapes_ok) > 2);
	assert_true(atomic_load(&ipfix_datagrams) > 2);
	assert_true(stat(sock_path, &sb) != 0);
	assert_true(stat(state_path, &sb) == 0 && sb.st_size > 0);
	unlink(state_path);
	unlink(cap_path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_thread_of_the_daemon_at_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
