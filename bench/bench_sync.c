/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_sync.c - conntrackd's sync protocol: the codec, two nodes, a full
 * resync, and conntrackd itself side by side.
 *
 * In-process variants (one thread; CPU time of that thread per entry, and
 * wall time):
 *   encode       --conns records (TCP and UDP, a tenth IPv6, marks,
 *                timeouts) into messages: ns per entry, bytes per message
 *   decode       the same messages parsed back
 *   ftfw-send    node A with --conns entries in its internal cache sends
 *                them all (CT_NEW, batched into 1472-byte datagrams): the
 *                sender's CPU per entry
 *   ftfw-recv    node B receives those datagrams into its external cache
 *                (and queues its ACKs): the receiver's CPU per entry
 *   ftfw-acks    A digests B's ACKs (its resend queue emptied)
 *   notrack-send / notrack-recv   the same in NOTRACK (nothing kept)
 *   resync       --resync entries (1M): B asks, A sends its whole table,
 *                B takes it, through an in-memory link, timed from the
 *                request to the last entry in B's cache; CPU of each side;
 *                memory per cached entry (the process's RSS growth over
 *                both caches)
 * With --conntrackd (root; conntrackd, nft, conntrack installed; the test
 * program ctsync_peer built), bench/sync_conntrackd.py then runs the same
 * flow of --conns connections over a real veth between conntrackd 1.4.7
 * and ctrack (ctsync_peer) in namespaces, both ways and ctrack-to-ctrack,
 * reporting each side's process CPU per entry and the rate - in the same
 * run, on the same machine.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "ctrack/sync.h"

#ifndef CTRACK_SRC_DIR
#define CTRACK_SRC_DIR "."
#endif
#ifndef CTRACK_BUILD_DIR
#define CTRACK_BUILD_DIR "build"
#endif

struct dgrams {
	uint8_t *buf;        /* all datagrams, back to back */
	size_t len, cap;
	size_t *off;         /* where each starts */
	size_t n, ncap;
};

static int dg_send(void *arg, const void *p, size_t len)
{
	struct dgrams *d = arg;

	if (d->len + len > d->cap) {
		size_t nc = d->cap ? d->cap * 2 : 1 << 20;
		uint8_t *nb;

		while (nc < d->len + len)
			nc *= 2;
		nb = realloc(d->buf, nc);
		if (!nb)
			return -ENOMEM;
		d->buf = nb;
		d->cap = nc;
	}
	if (d->n == d->ncap) {
		size_t nc = d->ncap ? d->ncap * 2 : 4096;
		size_t *no = realloc(d->off, (nc + 1) * sizeof(*no));

		if (!no)
			return -ENOMEM;
		d->off = no;
		d->ncap = nc;
	}
	d->off[d->n++] = d->len;
	memcpy(d->buf + d->len, p, len);
	d->len += len;
	d->off[d->n] = d->len;
	return 0;
}

static void dg_reset(struct dgrams *d)
{
	d->len = 0;
	d->n = 0;
}

static void dg_free(struct dgrams *d)
{
	free(d->buf);
	free(d->off);
	memset(d, 0, sizeof(*d));
}

/* Deliver every datagram of @d to @to. */
static void dg_deliver(struct dgrams *d, struct ct_sync_node *to, ct_time_ns now)
{
	for (size_t i = 0; i < d->n; i++)
		ct_sync_node_recv(to, d->buf + d->off[i], d->off[i + 1] - d->off[i], now);
}

static void conn_of(struct ct_sync_conn *c, uint32_t i)
{
	memset(c, 0, sizeof(*c));
	bu_flow_tuple(&c->orig, i, (i & 1) ? 17 : 6, 0);
	if (i % 10 == 9) {
		c->orig.l3 = CT_L3_IPV6;
		c->orig.src.ip6w[0] = htonl(0xfd000000u);
		c->orig.src.ip6w[3] = htonl(i);
		c->orig.dst.ip6w[0] = htonl(0xfd000001u);
		c->orig.dst.ip6w[3] = htonl(1);
	}
	c->has = CT_SYNC_HAS_STATUS | CT_SYNC_HAS_TIMEOUT | CT_SYNC_HAS_MARK | CT_SYNC_HAS_PORTS;
	c->status = CT_ST_CONFIRMED | CT_ST_SEEN_REPLY | CT_ST_ASSURED;
	c->timeout_s = (i & 1) ? 120 : 432000;
	c->mark = i;
	if (c->orig.l4 == 6) {
		c->has |= CT_SYNC_HAS_STATE;
		c->l4state = 3;
	}
}

/* Bytes the allocator has handed out and not taken back (the caches'
 * objects and buckets; the process's RSS would also count memory freed by
 * earlier variants and kept by malloc). */
static uint64_t heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd;
}

static void report(const struct bench_args *a, const char *variant, uint64_t n,
		   uint64_t wall_ns, uint64_t cpu_ns, double extra_val, const char *extra_key)
{
	struct bu_rec r;

	bu_rec_begin(&r, a, "sync", variant);
	bu_rec_int(&r, "entries", n);
	bu_rec_num(&r, "entries_per_s", wall_ns ? (double)n * 1e9 / (double)wall_ns : 0);
	bu_rec_num(&r, "ns_per_entry_cpu", n ? (double)cpu_ns / (double)n : 0);
	bu_rec_num(&r, "ms", (double)wall_ns / 1e6);
	if (extra_key)
		bu_rec_num(&r, extra_key, extra_val);
	bu_rec_end(&r);
}

static int codec(const struct bench_args *a, uint64_t n)
{
	uint8_t *buf = malloc(n * 128);
	uint32_t *len = malloc(n * sizeof(*len));
	uint64_t t0, c0, bytes = 0, ok = 0;
	struct ct_sync_conn c;

	if (!buf || !len) {
		free(buf);
		free(len);
		return 1;
	}
	t0 = bu_mono_ns();
	c0 = bu_thread_cpu_ns();
	for (uint64_t i = 0; i < n; i++) {
		int m;

		conn_of(&c, (uint32_t)i);
		m = ct_sync_msg_conn(buf + i * 128, 128, CT_SYNC_T_CT_NEW, 0, (uint32_t)i, &c,
				     CT_SYNC_ENC_TIMEOUT);
		len[i] = m > 0 ? (uint32_t)m : 0;
		bytes += len[i];
	}
	report(a, "encode", n, bu_mono_ns() - t0, bu_thread_cpu_ns() - c0,
	       (double)bytes / (double)n, "bytes_per_msg");
	t0 = bu_mono_ns();
	c0 = bu_thread_cpu_ns();
	for (uint64_t i = 0; i < n; i++) {
		struct ct_sync_hdr h;

		if (ct_sync_msg_header(buf + i * 128, len[i], &h) == CT_SYNC_OK &&
		    ct_sync_msg_parse_conn(buf + i * 128, &h, &c, NULL) == CT_SYNC_OK)
			ok++;
	}
	report(a, "decode", n, bu_mono_ns() - t0, bu_thread_cpu_ns() - c0, (double)ok, "parsed");
	free(buf);
	free(len);
	return ok == n ? 0 : 1;
}

static struct ct_sync_node *node(enum ct_sync_mode mode, struct dgrams *out, uint64_t max,
				 uint32_t seq)
{
	struct ct_sync_config cfg;
	struct ct_sync_node *n;

	ct_sync_config_default(&cfg);
	cfg.mode = mode;
	cfg.initial_seq = seq;
	cfg.startup_resync = false;
	cfg.resync_on_hello = false;
	cfg.internal_max = (uint32_t)max;
	cfg.external_max = (uint32_t)max;
	cfg.resend_queue_max = (uint32_t)max;
	cfg.send = dg_send;
	cfg.send_arg = out;
	if (ct_sync_node_create(&cfg, 1, &n))
		return NULL;
	return n;
}

static int two_nodes(const struct bench_args *a, enum ct_sync_mode mode, uint64_t n)
{
	const char *pfx = mode == CT_SYNC_FTFW ? "ftfw" : "notrack";
	struct dgrams ab = { 0 }, ba = { 0 };
	struct ct_sync_node *na = node(mode, &ab, n, 1000), *nb = node(mode, &ba, n, 900000);
	struct ct_sync_conn c;
	struct ct_sync_stats s;
	uint64_t t0, c0;
	ct_time_ns now = 2;
	char v[32];
	int rc = 1;

	if (!na || !nb)
		goto out;
	for (uint64_t i = 0; i < n; i++) {
		conn_of(&c, (uint32_t)i);
		if (ct_sync_node_local(na, CT_SYNC_T_CT_NEW, &c, now))
			goto out;
	}
	t0 = bu_mono_ns();
	c0 = bu_thread_cpu_ns();
	ct_sync_node_run(na, now, 0);
	snprintf(v, sizeof(v), "%s-send", pfx);
	report(a, v, n, bu_mono_ns() - t0, bu_thread_cpu_ns() - c0,
	       (double)ab.len / (double)(ab.n ? ab.n : 1), "bytes_per_datagram");
	t0 = bu_mono_ns();
	c0 = bu_thread_cpu_ns();
	dg_deliver(&ab, nb, now);
	ct_sync_node_run(nb, now, 0);
	snprintf(v, sizeof(v), "%s-recv", pfx);
	report(a, v, n, bu_mono_ns() - t0, bu_thread_cpu_ns() - c0, (double)ab.n, "datagrams");
	ct_sync_node_get_stats(nb, &s);
	if (s.external.active != n)
		goto out;
	if (mode == CT_SYNC_FTFW) {
		/* B's window ACKs (and the last, pending one, after a second) */
		ct_sync_node_run(nb, now + 1000000001ull, 0);
		t0 = bu_mono_ns();
		c0 = bu_thread_cpu_ns();
		dg_deliver(&ba, na, now);
		report(a, "ftfw-acks", n, bu_mono_ns() - t0, bu_thread_cpu_ns() - c0, (double)ba.n,
		       "ack_datagrams");
		ct_sync_node_get_stats(na, &s);
		if (s.rs_queue_len != 0)
			goto out;
	}
	rc = 0;
out:
	ct_sync_node_destroy(na);
	ct_sync_node_destroy(nb);
	dg_free(&ab);
	dg_free(&ba);
	return rc;
}

static int resync(const struct bench_args *a, uint64_t n)
{
	struct dgrams ab = { 0 }, ba = { 0 };
	uint64_t rss0 = heap_bytes(), rss1, t0, cpu_a = 0, cpu_b = 0, c0;
	struct ct_sync_node *na = node(CT_SYNC_FTFW, &ab, n, 1000);
	struct ct_sync_node *nb = node(CT_SYNC_FTFW, &ba, n, 7000000);
	struct ct_sync_conn c;
	struct ct_sync_stats s;
	ct_time_ns now = 2;
	int rc = 1;

	if (!na || !nb)
		goto out;
	for (uint64_t i = 0; i < n; i++) {
		conn_of(&c, (uint32_t)i);
		if (ct_sync_node_local(na, CT_SYNC_T_CT_NEW, &c, now))
			goto out;
	}
	/* A's first transmission is not the resync's: out of the way */
	ct_sync_node_run(na, now, 0);
	dg_reset(&ab);
	ct_sync_node_flush(nb, CT_SYNC_EXTERNAL);
	t0 = bu_mono_ns();
	/* B asks, A sends everything, B takes it and acknowledges */
	c0 = bu_thread_cpu_ns();
	ct_sync_node_request_resync(nb);
	ct_sync_node_run(nb, now, 0);
	cpu_b += bu_thread_cpu_ns() - c0;
	c0 = bu_thread_cpu_ns();
	dg_deliver(&ba, na, now);
	dg_reset(&ba);
	ct_sync_node_run(na, now, 0);
	cpu_a += bu_thread_cpu_ns() - c0;
	c0 = bu_thread_cpu_ns();
	dg_deliver(&ab, nb, now);
	ct_sync_node_run(nb, now, 0);
	cpu_b += bu_thread_cpu_ns() - c0;
	ct_sync_node_get_stats(nb, &s);
	{
		uint64_t wall = bu_mono_ns() - t0;
		struct bu_rec r;

		rss1 = heap_bytes();
		bu_rec_begin(&r, a, "sync", "resync");
		bu_rec_int(&r, "entries", n);
		bu_rec_num(&r, "ms", (double)wall / 1e6);
		bu_rec_num(&r, "entries_per_s", (double)n * 1e9 / (double)wall);
		bu_rec_num(&r, "sender_ns_per_entry_cpu", (double)cpu_a / (double)n);
		bu_rec_num(&r, "receiver_ns_per_entry_cpu", (double)cpu_b / (double)n);
		bu_rec_int(&r, "datagrams", ab.n);
		/* A's internal and B's external cache, the datagrams aside */
		bu_rec_num(&r, "bytes_per_cached_entry", rss1 > rss0 + ab.cap + ba.cap ?
			   (double)(rss1 - rss0 - ab.cap - ba.cap) / (2.0 * (double)n) : 0);
		bu_rec_bool(&r, "complete", s.external.active == n);
		bu_rec_end(&r);
	}
	rc = s.external.active == n ? 0 : 1;
out:
	ct_sync_node_destroy(na);
	ct_sync_node_destroy(nb);
	dg_free(&ab);
	dg_free(&ba);
	return rc;
}

static int side_by_side(const struct bench_args *a, uint64_t n)
{
	char cmd[8192];
	const char *peer = bu_opt_str(a, "peer", CTRACK_BUILD_DIR "/tests/sync/ctsync_peer");

	snprintf(cmd, sizeof(cmd), "python3 %s/bench/sync_conntrackd.py --peer '%s' --conns %llu%s",
		 CTRACK_SRC_DIR, peer, (unsigned long long)n, a->json ? " --json" : "");
	fflush(stdout);
	return system(cmd) == 0 ? 0 : 1;
}

int bench_sync(const struct bench_args *a)
{
	bool quick = bu_flag(a, "quick");
	uint64_t n = bu_opt_u64(a, "conns", 100000);
	uint64_t big = bu_opt_u64(a, "resync", quick ? 100000 : 1000000);
	int rc = 0;

	rc |= codec(a, n);
	rc |= two_nodes(a, CT_SYNC_FTFW, n);
	rc |= two_nodes(a, CT_SYNC_NOTRACK, n);
	rc |= resync(a, big);
	if (bu_flag(a, "conntrackd"))
		rc |= side_by_side(a, n);
	return rc;
}
