/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench/ovs/frames.h - the frames both sides of the OVS comparison process.
 *
 * The comparison with Open vSwitch's userspace conntrack is only fair when
 * both trackers see the very same bytes, so the frames are built here, in
 * one header that ctrack-bench (bench_ovs.c) and the OVS-side harness
 * (ovs_ct_harness.c, compiled against the OVS build at run time) both
 * include.  Everything is static inline and depends on nothing but libc,
 * so that it compiles under ctrack's warnings and under OVS's headers.
 *
 *  - ovsb_bench_frame(): the 42-byte UDP/IPv4 frame that OVS's own
 *    `test-conntrack benchmark` sends, with the same per-thread and
 *    per-packet port changes.  bench_ovs.c checks it byte for byte against
 *    the hex string in the OVS source it benchmarks.
 *  - ovsb_flow_frame(): flow number i of the large-table workloads, in
 *    either direction (UDP, so that "established" needs only one reply).
 *  - ovsb_lookup_frames(): the established lookups, random flows in order.
 *  - ovsb_tcp_frame(): TCP/IPv4 frames with correct checksums, for the
 *    synthetic capture of the capture-path comparison.
 */
#ifndef CTRACK_BENCH_OVS_FRAMES_H
#define CTRACK_BENCH_OVS_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define OVSB_UDP_FRAME_LEN 42u  /* Ethernet 14 + IPv4 20 + UDP 8 */
#define OVSB_SLOT 64u           /* frames sit in 64-byte slots */

static inline void ovsb_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void ovsb_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* One's complement sum of @len bytes (big-endian 16-bit words). */
static inline uint32_t ovsb_sum(const uint8_t *p, size_t len, uint32_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

static inline uint16_t ovsb_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Ethernet header: dst 50:54:00:00:00:<d>, src 50:54:00:00:00:<s>, IPv4. */
static inline void ovsb_eth(uint8_t *f, uint8_t d, uint8_t s)
{
	static const uint8_t oui[4] = { 0x50, 0x54, 0x00, 0x00 };

	memcpy(f, oui, 4);
	f[4] = 0;
	f[5] = d;
	memcpy(f + 6, oui, 4);
	f[10] = 0;
	f[11] = s;
	ovsb_put16(f + 12, 0x0800);
}

/* IPv4 header without options, checksum computed. */
static inline void ovsb_ip4(uint8_t *ip, uint16_t total_len, uint8_t ttl,
			    uint8_t proto, uint32_t src, uint32_t dst)
{
	memset(ip, 0, 20);
	ip[0] = 0x45;
	ovsb_put16(ip + 2, total_len);
	ip[8] = ttl;
	ip[9] = proto;
	ovsb_put32(ip + 12, src);
	ovsb_put32(ip + 16, dst);
	ovsb_put16(ip + 10, ovsb_fold(ovsb_sum(ip, 20, 0)));
}

/* A 42-byte UDP/IPv4 frame without payload, UDP checksum 0 (none). */
static inline void ovsb_udp_frame(uint8_t *f, uint8_t mac_d, uint8_t mac_s,
				  uint8_t ttl, uint32_t src, uint32_t dst,
				  uint16_t sport, uint16_t dport)
{
	ovsb_eth(f, mac_d, mac_s);
	ovsb_ip4(f + 14, 28, ttl, 17, src, dst);
	ovsb_put16(f + 34, sport);
	ovsb_put16(f + 36, dport);
	ovsb_put16(f + 38, 8);
	ovsb_put16(f + 40, 0);
}

/*
 * The frame of OVS's `test-conntrack benchmark`: 50:54:00:00:00:09 ->
 * 50:54:00:00:00:0a, 10.1.1.1 -> 10.1.1.2, TTL 0, UDP 1 -> 2, no checksum.
 * Thread @tid adds tid to the source port; with @change, packet @i of the
 * batch adds i to the destination port (ports wrap at 16 bits as OVS's
 * htons(ntohs(x) + n) does).  The IP checksum does not cover the ports
 * and UDP's is zero, so neither changes.
 */
static inline void ovsb_bench_frame(uint8_t *f, unsigned tid, unsigned i,
				    bool change)
{
	ovsb_udp_frame(f, 0x0a, 0x09, 0, 0x0a010101u, 0x0a010102u,
		       (uint16_t)(1 + tid), (uint16_t)(2 + (change ? i : 0)));
}

/*
 * Flow @i of the large-table workloads: 10.0.x.y:port -> 192.168.0.1:53
 * (source address and port spread @i over 4096 ports per address), in
 * direction @dir (0 original, 1 reply: everything swapped).
 */
static inline void ovsb_flow_frame(uint8_t *f, uint32_t i, int dir)
{
	uint32_t cli = 0x0a000001u + (i >> 12);
	uint16_t cport = (uint16_t)(1024 + (i & 4095));
	uint32_t srv = 0xc0a80001u;

	if (!dir)
		ovsb_udp_frame(f, 0x0a, 0x09, 64, cli, srv, cport, 53);
	else
		ovsb_udp_frame(f, 0x09, 0x0a, 64, srv, cli, 53, cport);
}

/*
 * The frames of the large-table workloads, in one array of 64-byte slots:
 * slot i is flow i's original-direction frame, slot n + i its reply
 * (ovsb_flow_frames_at: flows first..first+n-1).
 */
static inline void ovsb_flow_frames_at(uint8_t *slots, uint32_t first, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		memset(slots + (size_t)i * OVSB_SLOT, 0, OVSB_SLOT);
		memset(slots + ((size_t)n + i) * OVSB_SLOT, 0, OVSB_SLOT);
		ovsb_flow_frame(slots + (size_t)i * OVSB_SLOT, first + i, 0);
		ovsb_flow_frame(slots + ((size_t)n + i) * OVSB_SLOT, first + i, 1);
	}
}

static inline void ovsb_flow_frames(uint8_t *slots, uint32_t n)
{
	ovsb_flow_frames_at(slots, 0, n);
}

/*
 * The steady regime of ctrack-bench nat: the table is first filled with
 * the N flows N..2N-1 (other clients than the timed flows 0..N-1); then,
 * OVSB_STEADY_CHUNK at a time, that many of the fill's connections are
 * removed (untimed) and as many new ones are timed, so the table holds
 * about N entries all along, its rows already grown and its memory
 * already touched - a running firewall's state, where entries come and go.
 */
#define OVSB_STEADY_CHUNK 1024u

/* splitmix64: a fixed, portable pseudo-random sequence. */
static inline uint64_t ovsb_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * The established lookups: @l frames, each a copy of a uniformly random
 * flow's frame in a random direction, laid out in the order they are sent,
 * as a receive ring would hold them (reading the packets is sequential;
 * finding their connections is not).  Same seed, same frames on both
 * sides.
 */
static inline void ovsb_lookup_frames(uint8_t *out, size_t l, uint32_t n)
{
	uint64_t s = 0x63747261636b2121ull;

	for (size_t k = 0; k < l; k++) {
		uint64_t r = ovsb_rand(&s);
		uint32_t flow = (uint32_t)((r >> 1) % n);

		memset(out + k * OVSB_SLOT, 0, OVSB_SLOT);
		ovsb_flow_frame(out + k * OVSB_SLOT, flow, (int)(r & 1));
	}
}

/* ctrack-bench nat: source NAT of every flow into 100.64.0.0/24 (no port
 * range: the port is kept when free, as both peers do). */
#define OVSB_NAT_MIN 0x64400000u
#define OVSB_NAT_MAX 0x644000ffu

/* The answer to frame @f (a 42-byte UDP/IPv4 frame as it left the NAT):
 * MACs, addresses and ports swapped, the IP checksum computed. */
static inline void ovsb_reply_frame(uint8_t *r, const uint8_t *f)
{
	uint32_t src = (uint32_t)f[26] << 24 | (uint32_t)f[27] << 16 | (uint32_t)f[28] << 8 | f[29];
	uint32_t dst = (uint32_t)f[30] << 24 | (uint32_t)f[31] << 16 | (uint32_t)f[32] << 8 | f[33];

	memset(r, 0, OVSB_SLOT);
	ovsb_udp_frame(r, f[11], f[5], 64, dst, src, (uint16_t)(f[36] << 8 | f[37]),
		       (uint16_t)(f[34] << 8 | f[35]));
}

/* Make the reply slots the answers to the (translated) original slots,
 * again: a lookup run translates the frames it sends in place. */
static inline void ovsb_reply_frames_pristine(uint8_t *replies, const uint8_t *sent, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		ovsb_reply_frame(replies + (size_t)i * OVSB_SLOT, sent + (size_t)i * OVSB_SLOT);
}

/* The established lookups of ctrack-bench nat: as ovsb_lookup_frames,
 * flow and direction from the sequence @s, the original direction from
 * @orig (as the clients send it), the reply from @replies (as the
 * servers answer the NAT). */
static inline void ovsb_nat_lookup_frames(uint8_t *out, size_t l, uint32_t n,
					  const uint8_t *orig, const uint8_t *replies,
					  uint64_t *s)
{
	for (size_t k = 0; k < l; k++) {
		uint64_t r = ovsb_rand(s);
		uint32_t flow = (uint32_t)((r >> 1) % n);

		memcpy(out + k * OVSB_SLOT, (r & 1 ? replies : orig) + (size_t)flow * OVSB_SLOT,
		       OVSB_SLOT);
	}
}

/* FNV-1a over a byte range: both sides print it, so a difference in the
 * frames (or in the order they are sent) shows. */
static inline uint64_t ovsb_fnv(uint64_t h, const void *p, size_t len)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

#define OVSB_FNV_INIT 0xcbf29ce484222325ull

/*
 * A TCP/IPv4 frame (no options) with @plen payload bytes of a fixed
 * pattern, correct IP and TCP checksums.  Returns its length
 * (54 + plen).  @f must hold it.
 */
static inline unsigned ovsb_tcp_frame(uint8_t *f, uint8_t mac_d, uint8_t mac_s,
				      uint32_t src, uint32_t dst,
				      uint16_t sport, uint16_t dport,
				      uint32_t seq, uint32_t ack, uint8_t flags,
				      uint16_t win, unsigned plen)
{
	uint8_t *tcp = f + 34;
	uint32_t sum;

	ovsb_eth(f, mac_d, mac_s);
	ovsb_ip4(f + 14, (uint16_t)(40 + plen), 64, 6, src, dst);
	ovsb_put16(tcp, sport);
	ovsb_put16(tcp + 2, dport);
	ovsb_put32(tcp + 4, seq);
	ovsb_put32(tcp + 8, ack);
	tcp[12] = 5 << 4;
	tcp[13] = flags;
	ovsb_put16(tcp + 14, win);
	ovsb_put16(tcp + 16, 0);
	ovsb_put16(tcp + 18, 0);
	for (unsigned k = 0; k < plen; k++)
		tcp[20 + k] = (uint8_t)('a' + k % 26);
	/* pseudo-header: addresses, protocol, TCP length */
	sum = ovsb_sum(f + 26, 8, 0);
	sum += 6 + 20 + plen;
	sum = ovsb_sum(tcp, 20 + plen, sum);
	ovsb_put16(tcp + 16, ovsb_fold(sum));
	return 54 + plen;
}

#endif /* CTRACK_BENCH_OVS_FRAMES_H */
