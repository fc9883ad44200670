/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * checksum.c - layer-4 checksums, verified the way nf_conntrack verifies
 * them when net.netfilter.nf_conntrack_checksum is 1.
 *
 * Which packets are checked, over which bytes and with which
 * pseudo-header follows the kernel's nf_ip_checksum()/nf_ip6_checksum()
 * and their callers, not the RFCs where the two differ:
 *   - the length in the pseudo-header and the bytes summed are the IP
 *     payload (skb->len - dataoff), not the UDP length field;
 *   - a UDP checksum of zero means "none" over IPv6 as over IPv4
 *     (udp_error returns before checking; the socket layer would drop a
 *     zero IPv6 checksum later, conntrack does not);
 *   - ICMP over IPv4 has no pseudo-header; anything over IPv6 has one;
 *     ICMP over IPv6 and ICMPv6 over IPv4 are never checked;
 *   - UDP-Lite is checked as udplite_error() checks it: over the coverage
 *     only, but with IPPROTO_UDP (17) in the pseudo-header, and over IPv4
 *     with the length and protocol arguments of csum_tcpudp_nofold()
 *     swapped (nf_ip_checksum_partial), so the pseudo-header carries
 *     17 + (length & 0xff).  An RFC 3828 checksum therefore fails here
 *     exactly when it fails in the kernel;
 *   - SCTP: CRC32c over the whole packet with the checksum field as zero,
 *     stored little-endian (sctp_compute_cksum);
 *   - GRE and every other protocol: nothing to check.
 * A capture that does not hold the whole datagram cannot be checked; such
 * packets pass.
 *
 * The ones' complement sum reads 8 bytes per step and adds both 32-bit
 * halves into a 64-bit accumulator (no carry handling in the loop); from
 * 128 bytes on, where the CPU has AVX2, 64 bytes per step in four 64-bit
 * lanes.  CRC32c uses the SSE4.2 instruction when the
 * CPU has it, a table otherwise.
 */
#include <arpa/inet.h>
#include <string.h>

#include "ctrack/packet.h"
#include "parse/checksum.h"
#include "parse/wire.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include <nmmintrin.h>
#endif

#if defined(__x86_64__)
/*
 * 64 bytes a step: the eight 32-bit words of each 32-byte load widened
 * to 64-bit lanes (interleaving with zero) and added, so no carry is
 * lost; the four lanes are added up at the end.  Same sum as the scalar
 * loop below, in about a third of its instructions.
 */
__attribute__((target("avx2")))
static uint64_t csum_avx2(const uint8_t *p, uint32_t len, uint64_t sum,
			  uint32_t *left)
{
	const __m256i zero = _mm256_setzero_si256();
	__m256i a = zero, b = zero;
	__m128i h;

	while (len >= 64) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(const void *)p);
		__m256i w = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32));

		a = _mm256_add_epi64(a, _mm256_unpacklo_epi32(v, zero));
		b = _mm256_add_epi64(b, _mm256_unpackhi_epi32(v, zero));
		a = _mm256_add_epi64(a, _mm256_unpacklo_epi32(w, zero));
		b = _mm256_add_epi64(b, _mm256_unpackhi_epi32(w, zero));
		p += 64;
		len -= 64;
	}
	a = _mm256_add_epi64(a, b);
	h = _mm_add_epi64(_mm256_castsi256_si128(a),
			  _mm256_extracti128_si256(a, 1));
	*left = len;
	return sum + (uint64_t)_mm_cvtsi128_si64(h) +
	       (uint64_t)_mm_extract_epi64(h, 1);
}
#endif

uint64_t ct_csum_partial(const uint8_t *p, uint32_t len, uint64_t sum)
{
	uint64_t a = sum, b = 0;

#if defined(__x86_64__)
	if (len >= 128 && __builtin_cpu_supports("avx2")) {
		uint32_t left;

		a = csum_avx2(p, len, a, &left);
		p += len - left;
		len = left;
	}
#endif

	while (len >= 16) {
		uint64_t v, w;

		memcpy(&v, p, 8);
		memcpy(&w, p + 8, 8);
		a += (v & 0xffffffffu) + (v >> 32);
		b += (w & 0xffffffffu) + (w >> 32);
		p += 16;
		len -= 16;
	}
	if (len >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		a += (v & 0xffffffffu) + (v >> 32);
		p += 8;
		len -= 8;
	}
	if (len) {
		/* the odd tail, padded with zeroes in memory order */
		uint64_t v = 0;

		memcpy(&v, p, len);
		b += (v & 0xffffffffu) + (v >> 32);
	}
	return a + b;
}

static const uint32_t crc32c_table[256] = {
	0x00000000, 0xf26b8303, 0xe13b70f7, 0x1350f3f4,
	0xc79a971f, 0x35f1141c, 0x26a1e7e8, 0xd4ca64eb,
	0x8ad958cf, 0x78b2dbcc, 0x6be22838, 0x9989ab3b,
	0x4d43cfd0, 0xbf284cd3, 0xac78bf27, 0x5e133c24,
	0x105ec76f, 0xe235446c, 0xf165b798, 0x030e349b,
	0xd7c45070, 0x25afd373, 0x36ff2087, 0xc494a384,
	0x9a879fa0, 0x68ec1ca3, 0x7bbcef57, 0x89d76c54,
	0x5d1d08bf, 0xaf768bbc, 0xbc267848, 0x4e4dfb4b,
	0x20bd8ede, 0xd2d60ddd, 0xc186fe29, 0x33ed7d2a,
	0xe72719c1, 0x154c9ac2, 0x061c6936, 0xf477ea35,
	0xaa64d611, 0x580f5512, 0x4b5fa6e6, 0xb93425e5,
	0x6dfe410e, 0x9f95c20d, 0x8cc531f9, 0x7eaeb2fa,
	0x30e349b1, 0xc288cab2, 0xd1d83946, 0x23b3ba45,
	0xf779deae, 0x05125dad, 0x1642ae59, 0xe4292d5a,
	0xba3a117e, 0x4851927d, 0x5b016189, 0xa96ae28a,
	0x7da08661, 0x8fcb0562, 0x9c9bf696, 0x6ef07595,
	0x417b1dbc, 0xb3109ebf, 0xa0406d4b, 0x522bee48,
	0x86e18aa3, 0x748a09a0, 0x67dafa54, 0x95b17957,
	0xcba24573, 0x39c9c670, 0x2a993584, 0xd8f2b687,
	0x0c38d26c, 0xfe53516f, 0xed03a29b, 0x1f682198,
	0x5125dad3, 0xa34e59d0, 0xb01eaa24, 0x42752927,
	0x96bf4dcc, 0x64d4cecf, 0x77843d3b, 0x85efbe38,
	0xdbfc821c, 0x2997011f, 0x3ac7f2eb, 0xc8ac71e8,
	0x1c661503, 0xee0d9600, 0xfd5d65f4, 0x0f36e6f7,
	0x61c69362, 0x93ad1061, 0x80fde395, 0x72966096,
	0xa65c047d, 0x5437877e, 0x4767748a, 0xb50cf789,
	0xeb1fcbad, 0x197448ae, 0x0a24bb5a, 0xf84f3859,
	0x2c855cb2, 0xdeeedfb1, 0xcdbe2c45, 0x3fd5af46,
	0x7198540d, 0x83f3d70e, 0x90a324fa, 0x62c8a7f9,
	0xb602c312, 0x44694011, 0x5739b3e5, 0xa55230e6,
	0xfb410cc2, 0x092a8fc1, 0x1a7a7c35, 0xe811ff36,
	0x3cdb9bdd, 0xceb018de, 0xdde0eb2a, 0x2f8b6829,
	0x82f63b78, 0x709db87b, 0x63cd4b8f, 0x91a6c88c,
	0x456cac67, 0xb7072f64, 0xa457dc90, 0x563c5f93,
	0x082f63b7, 0xfa44e0b4, 0xe9141340, 0x1b7f9043,
	0xcfb5f4a8, 0x3dde77ab, 0x2e8e845f, 0xdce5075c,
	0x92a8fc17, 0x60c37f14, 0x73938ce0, 0x81f80fe3,
	0x55326b08, 0xa759e80b, 0xb4091bff, 0x466298fc,
	0x1871a4d8, 0xea1a27db, 0xf94ad42f, 0x0b21572c,
	0xdfeb33c7, 0x2d80b0c4, 0x3ed04330, 0xccbbc033,
	0xa24bb5a6, 0x502036a5, 0x4370c551, 0xb11b4652,
	0x65d122b9, 0x97baa1ba, 0x84ea524e, 0x7681d14d,
	0x2892ed69, 0xdaf96e6a, 0xc9a99d9e, 0x3bc21e9d,
	0xef087a76, 0x1d63f975, 0x0e330a81, 0xfc588982,
	0xb21572c9, 0x407ef1ca, 0x532e023e, 0xa145813d,
	0x758fe5d6, 0x87e466d5, 0x94b49521, 0x66df1622,
	0x38cc2a06, 0xcaa7a905, 0xd9f75af1, 0x2b9cd9f2,
	0xff56bd19, 0x0d3d3e1a, 0x1e6dcdee, 0xec064eed,
	0xc38d26c4, 0x31e6a5c7, 0x22b65633, 0xd0ddd530,
	0x0417b1db, 0xf67c32d8, 0xe52cc12c, 0x1747422f,
	0x49547e0b, 0xbb3ffd08, 0xa86f0efc, 0x5a048dff,
	0x8ecee914, 0x7ca56a17, 0x6ff599e3, 0x9d9e1ae0,
	0xd3d3e1ab, 0x21b862a8, 0x32e8915c, 0xc083125f,
	0x144976b4, 0xe622f5b7, 0xf5720643, 0x07198540,
	0x590ab964, 0xab613a67, 0xb831c993, 0x4a5a4a90,
	0x9e902e7b, 0x6cfbad78, 0x7fab5e8c, 0x8dc0dd8f,
	0xe330a81a, 0x115b2b19, 0x020bd8ed, 0xf0605bee,
	0x24aa3f05, 0xd6c1bc06, 0xc5914ff2, 0x37faccf1,
	0x69e9f0d5, 0x9b8273d6, 0x88d28022, 0x7ab90321,
	0xae7367ca, 0x5c18e4c9, 0x4f48173d, 0xbd23943e,
	0xf36e6f75, 0x0105ec76, 0x12551f82, 0xe03e9c81,
	0x34f4f86a, 0xc69f7b69, 0xd5cf889d, 0x27a40b9e,
	0x79b737ba, 0x8bdcb4b9, 0x988c474d, 0x6ae7c44e,
	0xbe2da0a5, 0x4c4623a6, 0x5f16d052, 0xad7d5351,
};

static uint32_t crc32c_sw(uint32_t crc, const uint8_t *p, uint32_t len)
{
	while (len--)
		crc = crc32c_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t crc, const uint8_t *p, uint32_t len)
{
	uint64_t c = crc;

	while (len >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		c = _mm_crc32_u64(c, v);
		p += 8;
		len -= 8;
	}
	crc = (uint32_t)c;
	while (len--)
		crc = _mm_crc32_u8(crc, *p++);
	return crc;
}
#endif

static uint32_t crc32c(uint32_t crc, const uint8_t *p, uint32_t len)
{
#if defined(__x86_64__)
	if (__builtin_cpu_supports("sse4.2"))
		return crc32c_hw(crc, p, len);
#endif
	return crc32c_sw(crc, p, len);
}

uint32_t ct_crc32c(const void *buf, size_t len, uint32_t prev)
{
	const uint8_t *p = buf;
	uint32_t crc = ~prev;

	while (len) {
		uint32_t n = len > 0x40000000u ? 0x40000000u : (uint32_t)len;

		crc = crc32c(crc, p, n);
		p += n;
		len -= n;
	}
	return ~crc;
}

uint32_t ct_sctp_crc32c(const uint8_t *sh, uint32_t len)
{
	static const uint8_t zero[4];
	uint32_t crc = 0xffffffffu;

	crc = crc32c(crc, sh, 8);
	crc = crc32c(crc, zero, 4);
	crc = crc32c(crc, sh + 12, len - 12);
	return ~crc;
}

static bool sctp_csum_ok(const uint8_t *sh, uint32_t len)
{
	uint32_t want;

	if (len < 12)
		return true;
	want = (uint32_t)sh[8] | (uint32_t)sh[9] << 8 |
	       (uint32_t)sh[10] << 16 | (uint32_t)sh[11] << 24;
	return ct_sctp_crc32c(sh, len) == want;
}

/* Sum of the addresses: the start of every pseudo-header. */
static uint64_t addr_sum(const struct ct_packet *pkt)
{
	const uint8_t *a = (const uint8_t *)&pkt->tuple.src;
	const uint8_t *b = (const uint8_t *)&pkt->tuple.dst;
	uint64_t s = 0;

	if (pkt->tuple.l3 == CT_L3_IPV4)
		return (uint64_t)pkt->tuple.src.ip4 + pkt->tuple.dst.ip4;
	/* the two IPv6 addresses as ct_csum_partial would add them, in
	 * eight 32-bit words, without its loop and dispatch */
	for (int i = 0; i < 16; i += 8) {
		uint64_t v, w;

		memcpy(&v, a + i, 8);
		memcpy(&w, b + i, 8);
		s += (v & 0xffffffffu) + (v >> 32) + (w & 0xffffffffu) + (w >> 32);
	}
	return s;
}

/* Pseudo-header as csum_tcpudp_nofold / csum_ipv6_magic build it. */
static uint64_t pseudo_sum(const struct ct_packet *pkt, uint8_t proto,
			   uint32_t len)
{
	uint64_t s = addr_sum(pkt);

	if (pkt->tuple.l3 == CT_L3_IPV4)
		return s + htons((uint16_t)len) + htons(proto);
	return s + htonl(len) + htonl(proto);
}

static bool sum_ok(uint64_t pseudo, const uint8_t *p, uint32_t len)
{
	return ct_csum_fold(ct_csum_partial(p, len, pseudo)) == 0xffff;
}

bool ct_packet_l4_csum_ok(const struct ct_packet *pkt)
{
	const uint8_t *l4 = pkt->l4;
	uint32_t len = pkt->l4_len;
	bool v4 = pkt->tuple.l3 == CT_L3_IPV4;

	if (pkt->kind == CT_PKT_FRAGMENT || pkt->truncated || l4 == NULL ||
	    pkt->l4_caplen < len)
		return true;

	switch (pkt->tuple.l4) {
	case CT_IPPROTO_TCP:
		return sum_ok(pseudo_sum(pkt, CT_IPPROTO_TCP, len), l4, len);
	case CT_IPPROTO_UDP:
		if (len < 8 || (l4[6] == 0 && l4[7] == 0))
			return true;
		return sum_ok(pseudo_sum(pkt, CT_IPPROTO_UDP, len), l4, len);
	case CT_IPPROTO_UDPLITE: {
		uint32_t cov;
		uint64_t ps;

		if (len < 8)
			return true;
		cov = ct_rd16(l4 + 4);
		if (cov == 0 || cov > len)
			cov = len;
		if (v4)
			ps = addr_sum(pkt) +
			     htons((uint16_t)(CT_IPPROTO_UDP + (len & 0xff)));
		else
			ps = pseudo_sum(pkt, CT_IPPROTO_UDP, len);
		return sum_ok(ps, l4, cov);
	}
	case CT_IPPROTO_ICMP:
		if (!v4)
			return true;
		return sum_ok(0, l4, len);
	case CT_IPPROTO_ICMPV6:
		if (v4)
			return true;
		return sum_ok(pseudo_sum(pkt, CT_IPPROTO_ICMPV6, len), l4, len);
	case CT_IPPROTO_SCTP:
		return sctp_csum_ok(l4, len);
	default:
		return true;
	}
}
