/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hash.c - SipHash-1-3 over the canonical form of a tuple.
 *
 * SipHash is what the kernel uses to key its conntrack table; the 1-3
 * variant (one compression round, three finalisation rounds) keeps its
 * resistance to hash flooding at half the cost, which matters at tens of
 * millions of lookups per second.  See hash.h for the canonical form.
 * An IPv4 tuple is canonicalised without a branch and hashed by a
 * straight-line two-word SipHash (~140 instructions where the general
 * loop over a sorted copy took ~180); a burst hashes its IPv4 keys four
 * at a time in AVX2 registers where the CPU has them (the same function,
 * ~35 instructions a key).
 */
#include <errno.h>
#include <stddef.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/random.h>

#include "base/hash.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

#define SIPROUND                                                        \
	do {                                                            \
		v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32); \
		v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                  \
		v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                  \
		v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32); \
	} while (0)

static inline uint64_t siphash13(const struct ct_hash_key *key,
				 const uint64_t *m, unsigned n)
{
	uint64_t v0 = 0x736f6d6570736575ull ^ key->k0;
	uint64_t v1 = 0x646f72616e646f6dull ^ key->k1;
	uint64_t v2 = 0x6c7967656e657261ull ^ key->k0;
	uint64_t v3 = 0x7465646279746573ull ^ key->k1;
	uint64_t b = (uint64_t)(n * 8) << 56;

	/* fully unrolled where @n is a constant (five words: IPv6) */
#pragma GCC unroll 5
	for (unsigned i = 0; i < n; i++) {
		v3 ^= m[i];
		SIPROUND;
		v0 ^= m[i];
	}
	v3 ^= b;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* SipHash-1-3 of exactly two words (16 bytes), straight-line: the IPv4
 * case, which is most of the traffic. */
static inline uint64_t siphash13_2(const struct ct_hash_key *key,
				   uint64_t m0, uint64_t m1)
{
	uint64_t v0 = 0x736f6d6570736575ull ^ key->k0;
	uint64_t v1 = 0x646f72616e646f6dull ^ key->k1;
	uint64_t v2 = 0x6c7967656e657261ull ^ key->k0;
	uint64_t v3 = 0x7465646279746573ull ^ key->k1;
	const uint64_t b = (uint64_t)16 << 56;

	v3 ^= m0;
	SIPROUND;
	v0 ^= m0;
	v3 ^= m1;
	SIPROUND;
	v0 ^= m1;
	v3 ^= b;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/*
 * IPv4: each endpoint as one 48-bit number, address and port (ICMP: the
 * id, the same both ways, for both), the smaller first: the two
 * directions give the same 128 bits, with no branch.  A leaf of its own,
 * so that the common case pays for no saved registers.
 */
static inline void canon4(const struct ct_tuple *t, uint64_t *m0, uint64_t *m1)
{
	bool icmp = t->l4 == IPPROTO_ICMP || t->l4 == IPPROTO_ICMPV6;
	uint64_t proto = (uint64_t)t->zone << 16 | (uint64_t)t->l3 << 8 | t->l4;
	uint16_t dp = icmp ? t->sport : t->dport;
	uint64_t a = (uint64_t)t->src.ip4 << 16 | t->sport;
	uint64_t z = (uint64_t)t->dst.ip4 << 16 | dp;
	uint64_t lo = a < z ? a : z, hi = a < z ? z : a;

	*m0 = lo << 16 | hi >> 32;
	*m1 = hi << 32 | proto;
}

uint64_t ct_hash_tuple4(const struct ct_hash_key *key, const struct ct_tuple *t)
{
	uint64_t m0, m1;

	canon4(t, &m0, &m1);
	return siphash13_2(key, m0, m1);
}

#if defined(__x86_64__)
/* canon4's 64-bit words of four tuples, in registers.  The port, zone
 * and protocol fields lie in one little-endian word at the end of the
 * tuple: sport | dport << 16 | zone << 32 | l3 << 48 | l4 << 56. */
_Static_assert(offsetof(struct ct_tuple, sport) == 32 &&
	       offsetof(struct ct_tuple, dport) == 34 &&
	       offsetof(struct ct_tuple, zone) == 36 &&
	       offsetof(struct ct_tuple, l3) == 38 &&
	       offsetof(struct ct_tuple, l4) == 39, "tuple layout canon4_x4 reads");

static inline uint64_t tuple_tail(const struct ct_tuple *t)
{
	uint64_t w;

	memcpy(&w, &t->sport, sizeof(w));
	return w;
}

/*
 * canon4() of t[0..3], lane j for t[j], bit for bit: an endpoint is
 * address << 16 | port, below 2^48, so the signed 64-bit compare orders
 * them as canon4's unsigned one does.
 */
__attribute__((target("avx2"), always_inline))
static inline void canon4_x4(const struct ct_tuple *const *t, __m256i *m0, __m256i *m1)
{
	const __m256i w = _mm256_setr_epi64x((long long)tuple_tail(t[0]),
					     (long long)tuple_tail(t[1]),
					     (long long)tuple_tail(t[2]),
					     (long long)tuple_tail(t[3]));
	const __m256i src = _mm256_setr_epi64x(t[0]->src.ip4, t[1]->src.ip4,
					       t[2]->src.ip4, t[3]->src.ip4);
	const __m256i dst = _mm256_setr_epi64x(t[0]->dst.ip4, t[1]->dst.ip4,
					       t[2]->dst.ip4, t[3]->dst.ip4);
	const __m256i m16 = _mm256_set1_epi64x(0xffff);
	/* bytes of each word: l4, l3, zone (two), then zero */
	const __m256i proto_sel = _mm256_setr_epi8(7, 6, 4, 5, -1, -1, -1, -1,
						   15, 14, 12, 13, -1, -1, -1, -1,
						   7, 6, 4, 5, -1, -1, -1, -1,
						   15, 14, 12, 13, -1, -1, -1, -1);
	__m256i sport = _mm256_and_si256(w, m16);
	__m256i dport = _mm256_and_si256(_mm256_srli_epi64(w, 16), m16);
	__m256i l4 = _mm256_srli_epi64(w, 56);
	__m256i icmp = _mm256_or_si256(_mm256_cmpeq_epi64(l4, _mm256_set1_epi64x(IPPROTO_ICMP)),
				       _mm256_cmpeq_epi64(l4, _mm256_set1_epi64x(IPPROTO_ICMPV6)));
	__m256i dp = _mm256_blendv_epi8(dport, sport, icmp);
	__m256i a = _mm256_or_si256(_mm256_slli_epi64(src, 16), sport);
	__m256i z = _mm256_or_si256(_mm256_slli_epi64(dst, 16), dp);
	__m256i gt = _mm256_cmpgt_epi64(a, z);
	__m256i lo = _mm256_blendv_epi8(a, z, gt);
	__m256i hi = _mm256_blendv_epi8(z, a, gt);

	*m0 = _mm256_or_si256(_mm256_slli_epi64(lo, 16), _mm256_srli_epi64(hi, 32));
	*m1 = _mm256_or_si256(_mm256_slli_epi64(hi, 32), _mm256_shuffle_epi8(w, proto_sel));
}

/*
 * Four two-word SipHash-1-3 at once, one per 64-bit lane of 256-bit
 * registers: the same function as siphash13_2, bit for bit (hash_x4.h).
 * Rotations by 32 and 16 are a dword and a byte shuffle.
 */
#define V_ROTL32(x) _mm256_shuffle_epi32((x), 0xb1)
#define V_ROTL16(x) _mm256_shuffle_epi8((x), rot16)

#define X4_TARGET "avx2"
#define X4_NAME(n) n##_avx2
#define V_ROTL(x, b) _mm256_or_si256(_mm256_slli_epi64((x), (b)), _mm256_srli_epi64((x), 64 - (b)))
#include "base/hash_x4.h"
#undef X4_TARGET
#undef X4_NAME
#undef V_ROTL

#define X4_TARGET "avx2,avx512f,avx512vl"
#define X4_NAME(n) n##_avx512vl
#define V_ROTL(x, b) _mm256_rol_epi64((x), (b))
#include "base/hash_x4.h"
#undef X4_TARGET
#undef X4_NAME
#undef V_ROTL
#endif

bool ct_hash_tuple4_many_isa(const struct ct_hash_key *key,
			     const struct ct_tuple *const *t, unsigned n,
			     uint64_t *out, enum ct_hash_isa isa)
{
	unsigned i = 0;

	switch (isa) {
	case CT_HASH_SCALAR:
		break;
#if defined(__x86_64__)
	case CT_HASH_AVX2:
		if (!__builtin_cpu_supports("avx2"))
			return false;
		hash_tuple4_many_avx2(key, t, n, out);
		i = n & ~3u;
		break;
	case CT_HASH_AVX512VL:
		if (!__builtin_cpu_supports("avx512vl"))
			return false;
		hash_tuple4_many_avx512vl(key, t, n, out);
		i = n & ~3u;
		break;
#endif
	default:
		return false;
	}
	for (; i < n; i++)
		out[i] = ct_hash_tuple4(key, t[i]);
	return true;
}

void ct_hash_tuple4_many(const struct ct_hash_key *key,
			 const struct ct_tuple *const *t, unsigned n, uint64_t *out)
{
	unsigned i = 0;

#if defined(__x86_64__)
	if (n >= 4) {
		if (__builtin_cpu_supports("avx512vl")) {
			hash_tuple4_many_avx512vl(key, t, n, out);
			i = n & ~3u;
		} else if (__builtin_cpu_supports("avx2")) {
			hash_tuple4_many_avx2(key, t, n, out);
			i = n & ~3u;
		}
	}
#endif
	for (; i < n; i++)
		out[i] = ct_hash_tuple4(key, t[i]);
}

/* IPv6: the endpoints (address, then port) sorted, five words. */
uint64_t ct_hash_tuple6(const struct ct_hash_key *key, const struct ct_tuple *t)
{
	const union ct_addr *lo = &t->src, *hi = &t->dst;
	uint16_t plo = t->sport, phi = t->dport;
	int c = memcmp(t->src.ip6, t->dst.ip6, 16);
	uint64_t m[5];

	if (t->l4 == IPPROTO_ICMP || t->l4 == IPPROTO_ICMPV6) {
		/* the id is the same both ways; the type is not */
		phi = 0;
		if (c > 0) {
			lo = &t->dst;
			hi = &t->src;
		}
	} else if (c > 0 || (c == 0 && t->sport > t->dport)) {
		lo = &t->dst;
		hi = &t->src;
		plo = t->dport;
		phi = t->sport;
	}
	memcpy(&m[0], lo->ip6, 16);
	memcpy(&m[2], hi->ip6, 16);
	m[4] = (uint64_t)plo << 48 | (uint64_t)phi << 32 |
	       (uint64_t)t->zone << 16 | (uint64_t)t->l3 << 8 | t->l4;
	return siphash13(key, m, 5);
}

uint64_t ct_hash_u64(const struct ct_hash_key *key, uint64_t v)
{
	return siphash13(key, &v, 1);
}

int ct_hash_key_random(struct ct_hash_key *key)
{
	uint8_t *p = (uint8_t *)key;
	size_t got = 0;

	while (got < sizeof(*key)) {
		ssize_t r = getrandom(p + got, sizeof(*key) - got, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		got += (size_t)r;
	}
	return 0;
}
