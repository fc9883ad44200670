/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * table_fixture.h - what the table tests (test_table.c, test_table_resize.c,
 * test_expire.c, test_track.c, test_ns.c) share: a table with one attached
 * thread and an event log, hand-built UDP and TCP packets, and the
 * collector's way of finding due rows (the wheel, or with
 * CT_TEST_GC_FINDER=scan the bounds scan: meson runs every file both ways).
 *
 * Packets are built by hand (UDP and the generic tracker) so that every
 * expectation follows from the rules stated in the comment of each test:
 * the kernel's UDP timeouts (30 s unreplied, 120 s stream after 2 s), its
 * early_drop() policy (evict entries that never became ASSURED), and the
 * library's contracts in the public headers.
 */
#ifndef CT_TEST_TABLE_FIXTURE_H
#define CT_TEST_TABLE_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/ctrack.h"
#include "support/tuple.h"
#include "base/hash.h"
#include "table/htab.h"
#include "proto/tcp.h"
#include "base/state.h"
#include "table/conn_key.h"
#include "table/htab.h"
#include "table/member.h"
#include "table/reclaim.h"
#include "table/resize.h"
#include "table/wheel.h"

#define SEC 1000000000ull

struct ev_log {
	int n;
	struct ct_event ev[4096];
};

static inline void log_event(const struct ct_event *ev, void *arg)
{
	struct ev_log *l = arg;

	if (l->n < 4096)
		l->ev[l->n] = *ev;
	l->n++;
}

/* A UDP datagram of 20 payload bytes (support/tuple.h), by the name these
 * tests call it. */
static inline struct ct_packet udp4(uint32_t src, uint32_t dst, uint16_t sp, uint16_t dp)
{
	return ts_udp4(src, dst, sp, dp);
}

static inline struct ct_packet reply_of(const struct ct_packet *p)
{
	struct ct_packet r = *p;

	r.tuple = ts_reverse(&p->tuple);
	return r;
}

/*
 * The collector's way of finding due rows for every test that does not
 * choose one: the library's default (the wheel), or with
 * CT_TEST_GC_FINDER=scan the bounds scan (CT_GC_LOCK_DUE).  meson runs
 * this file both ways (tests/table/meson.build), so every expiry test
 * holds for both.
 */
static inline void use_finder(struct ct_table *t)
{
	const char *f = getenv("CT_TEST_GC_FINDER");
	struct ct_gc_policy pol;

	if (!f || strcmp(f, "scan"))
		return;
	ct_gc_policy_default(&pol);
	pol.lock = CT_GC_LOCK_DUE;
	ct_gc_set_policy(t, &pol);
}

struct fixture {
	struct ct_table *t;
	struct ct_thread *thr;
	struct ev_log log;
};

static inline struct fixture *setup_with(const struct ct_table_config *cfg)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(ct_table_create(cfg, &f->t), 0);
	use_finder(f->t);
	f->thr = ct_thread_attach(f->t);
	assert_non_null(f->thr);
	ct_table_set_event_handler(f->t, log_event, &f->log);
	return f;
}

static inline struct fixture *setup_default(void)
{
	struct ct_table_config cfg;

	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	return setup_with(&cfg);
}

/* A fixed table of 64 rows (the smallest; it never grows), so that a few
 * hundred entries share every row; @key fixes the hash (NULL: random). */
static inline void crowded_cfg(struct ct_table_config *cfg, const uint8_t *key)
{
	ct_table_config_default(cfg);
	cfg->settings.checksum = 0;
	cfg->settings.max = 0;
	cfg->settings.buckets = 64;
	cfg->hash_key = key;
	cfg->resize_load_pct = 200;
}

static inline void teardown_f(struct fixture *f)
{
	ct_thread_detach(f->thr);
	ct_table_destroy(f->t);
	free(f);
}

/* @n one-packet UDP flows 10.0.0.i:1000 -> @dst:53 (i < @n) at @now, each
 * a new entry. */
static inline void new_udp_flows(struct fixture *f, uint32_t dst, uint32_t n, ct_time_ns now)
{
	struct ct_verdict v;

	for (uint32_t i = 0; i < n; i++) {
		struct ct_packet p = udp4(0x0a000000 + i, dst, 1000, 53);

		ct_process(f->thr, &p, now, &v);
		assert_int_equal(v.cls, CT_V_NEW);
	}
}

static inline int count_cb(const struct ct_conn_info *ci, void *arg)
{
	(void)ci;
	(*(long *)arg)++;
	return 0;
}

static inline struct ct_packet tcp4(uint32_t src, uint32_t dst, uint16_t sp, uint16_t dp,
			     uint8_t flags, uint32_t seq, uint32_t ack, uint32_t payload)
{
	struct ct_packet p;

	memset(&p, 0, sizeof(p));
	p.kind = CT_PKT_TRACKABLE;
	p.tuple.l3 = CT_L3_IPV4;
	p.tuple.l4 = IPPROTO_TCP;
	p.tuple.src.ip4 = htonl(src);
	p.tuple.dst.ip4 = htonl(dst);
	p.tuple.sport = sp;
	p.tuple.dport = dp;
	p.l3_len = 40 + payload;
	p.l4_len = 20 + payload;
	p.l4_caplen = 20 + payload;
	p.payload_len = payload;
	p.ttl = 64;
	p.u.tcp.seq = seq;
	p.u.tcp.ack = ack;
	p.u.tcp.sack_right = ack;
	p.u.tcp.window = 65535;
	p.u.tcp.flags = flags;
	p.u.tcp.hdr_len = 20;
	return p;
}

#endif /* CT_TEST_TABLE_FIXTURE_H */
