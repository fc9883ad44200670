/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hostile_util.h - what the hostile tests share: packets filled in as an
 * embedding dataplane fills struct ct_packet, a small deterministic random
 * generator, resident memory, a monotonic clock, and the scale knob.
 *
 * Packets carry no frame (l3/l4 NULL), so the tables these tests build
 * turn checksum verification off.  Sizes follow CTRACK_HOSTILE_FULL: unset,
 * each test runs in well under a second on two cores; set to 1, the floods
 * run against the kernel's default nf_conntrack_max (262144).
 */
#ifndef CT_HOSTILE_UTIL_H
#define CT_HOSTILE_UTIL_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctrack/ctrack.h"
#include "support/tuple.h"

#define H_SEC 1000000000ull
#define H_MS 1000000ull

/* AddressSanitizer keeps freed heap blocks in a quarantine (256 MiB by
 * default), so resident memory says nothing about the library's own
 * footprint there; the exact slab audit (support/audit.h) still holds. */
#if defined(__SANITIZE_ADDRESS__)
#define H_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define H_ASAN 1
#endif
#endif
#ifndef H_ASAN
#define H_ASAN 0
#endif

static inline bool h_full(void)
{
	const char *e = getenv("CTRACK_HOSTILE_FULL");
	return e && *e && strcmp(e, "0") != 0;
}

/* xorshift64*: reproducible "random" tuples */
static inline uint64_t h_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static inline uint64_t h_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Resident set size in bytes (/proc/self/statm, second field). */
static inline uint64_t h_rss(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size = 0, res = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &res) != 2)
		res = 0;
	fclose(f);
	return (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
}

static inline struct ct_packet h_udp(const struct ct_tuple *t, uint32_t payload)
{
	struct ct_packet p;

	memset(&p, 0, sizeof(p));
	p.kind = CT_PKT_TRACKABLE;
	p.tuple = *t;
	p.l3_len = 28 + payload;
	p.l4_len = 8 + payload;
	p.l4_caplen = 0;
	p.payload_len = payload;
	return p;
}

static inline struct ct_packet h_tcp(const struct ct_tuple *t, uint8_t flags,
				     uint32_t seq, uint32_t ack, uint32_t payload)
{
	struct ct_packet p;

	memset(&p, 0, sizeof(p));
	p.kind = CT_PKT_TRACKABLE;
	p.tuple = *t;
	p.l3_len = 40 + payload;
	p.l4_len = 20 + payload;
	p.payload_len = payload;
	p.u.tcp.seq = seq;
	p.u.tcp.ack = ack;
	p.u.tcp.sack_right = ack;
	p.u.tcp.flags = flags;
	p.u.tcp.window = 65535;
	p.u.tcp.hdr_len = 20;
	return p;
}

/* One TCP connection as both ends see it, for tests that keep it alive. */
struct h_conn {
	struct ct_tuple t;       /* client -> server */
	uint32_t cseq, sseq;     /* next sequence number of each side */
};

static inline void h_conn_init(struct h_conn *c, uint32_t i)
{
	c->t = ts_tuple4(IPPROTO_TCP, 0xc0a80000u | (i & 0xffff), 0x0a000001u,
			(uint16_t)(10000 + (i >> 16)), 443);
	c->cseq = 1000u + i * 7919u;
	c->sseq = 500000u + i * 104729u;
}

/* SYN, SYN/ACK, ACK: the connection is ESTABLISHED and ASSURED after it.
 * Returns the number of packets the tracker did not accept as expected. */
static inline int h_handshake(struct ct_thread *thr, struct h_conn *c, ct_time_ns now)
{
	struct ct_tuple r = ts_reverse(&c->t);
	struct ct_packet p;
	struct ct_verdict v;
	int bad = 0;

	p = h_tcp(&c->t, CT_TCP_SYN, c->cseq, 0, 0);
	ct_process(thr, &p, now, &v);
	bad += v.cls != CT_V_NEW;
	c->cseq++;
	p = h_tcp(&r, CT_TCP_SYN | CT_TCP_ACK, c->sseq, c->cseq, 0);
	ct_process(thr, &p, now + 1000, &v);
	bad += v.cls != CT_V_ESTABLISHED;
	c->sseq++;
	p = h_tcp(&c->t, CT_TCP_ACK, c->cseq, c->sseq, 0);
	ct_process(thr, &p, now + 2000, &v);
	bad += v.cls != CT_V_ESTABLISHED;
	return bad;
}

/* One data segment of @len bytes, from the client (dir 0) or the server. */
static inline struct ct_packet h_data(struct h_conn *c, int dir, uint32_t len)
{
	struct ct_packet p;

	if (dir == 0) {
		p = h_tcp(&c->t, CT_TCP_PSH | CT_TCP_ACK, c->cseq, c->sseq, len);
		c->cseq += len;
	} else {
		struct ct_tuple r = ts_reverse(&c->t);
		p = h_tcp(&r, CT_TCP_PSH | CT_TCP_ACK, c->sseq, c->cseq, len);
		c->sseq += len;
	}
	return p;
}

#endif /* CT_HOSTILE_UTIL_H */
