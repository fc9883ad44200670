/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hash_x4.h - the four-lane SipHash of ct_hash_tuple4_many, as a
 * template: hash.c includes it once per instruction set, with
 *   X4_TARGET   the target attribute string ("avx2", ...),
 *   X4_NAME(n)  the name of function n in that instance,
 *   V_ROTL(x,b) a 64-bit lane rotation left by b (13, 17, 21).
 * AVX2 rotates with two shifts and an or; AVX-512VL has a rotation
 * instruction (vprolq) on the same 256-bit registers, which saves 30 of
 * the 100 or so instructions of four hashes.  One body keeps the
 * instances bit for bit the same function as siphash13_2 (hash.c); the
 * tests compare every instance the CPU has with the scalar hash.
 */
#ifndef X4_TARGET
#error "hash_x4.h is a template for hash.c"
#endif

#define V_SIPROUND                                                              \
	do {                                                                    \
		v0 = _mm256_add_epi64(v0, v1); v1 = V_ROTL(v1, 13);             \
		v1 = _mm256_xor_si256(v1, v0); v0 = V_ROTL32(v0);               \
		v2 = _mm256_add_epi64(v2, v3); v3 = V_ROTL16(v3);               \
		v3 = _mm256_xor_si256(v3, v2);                                  \
		v0 = _mm256_add_epi64(v0, v3); v3 = V_ROTL(v3, 21);             \
		v3 = _mm256_xor_si256(v3, v0);                                  \
		v2 = _mm256_add_epi64(v2, v1); v1 = V_ROTL(v1, 17);             \
		v1 = _mm256_xor_si256(v1, v2); v2 = V_ROTL32(v2);               \
	} while (0)

__attribute__((target(X4_TARGET), always_inline))
static inline void X4_NAME(siphash13_2_x4)(const struct ct_hash_key *key, __m256i a0,
					   __m256i a1, uint64_t *out)
{
	const __m256i rot16 = _mm256_setr_epi8(6, 7, 0, 1, 2, 3, 4, 5,
					       14, 15, 8, 9, 10, 11, 12, 13,
					       6, 7, 0, 1, 2, 3, 4, 5,
					       14, 15, 8, 9, 10, 11, 12, 13);
	const __m256i k0 = _mm256_set1_epi64x((long long)key->k0);
	const __m256i k1 = _mm256_set1_epi64x((long long)key->k1);
	const __m256i b = _mm256_set1_epi64x(0x1000000000000000LL); /* 16 << 56 */
	__m256i v0 = _mm256_xor_si256(k0, _mm256_set1_epi64x(0x736f6d6570736575LL));
	__m256i v1 = _mm256_xor_si256(k1, _mm256_set1_epi64x(0x646f72616e646f6dLL));
	__m256i v2 = _mm256_xor_si256(k0, _mm256_set1_epi64x(0x6c7967656e657261LL));
	__m256i v3 = _mm256_xor_si256(k1, _mm256_set1_epi64x(0x7465646279746573LL));

	v3 = _mm256_xor_si256(v3, a0);
	V_SIPROUND;
	v0 = _mm256_xor_si256(v0, a0);
	v3 = _mm256_xor_si256(v3, a1);
	V_SIPROUND;
	v0 = _mm256_xor_si256(v0, a1);
	v3 = _mm256_xor_si256(v3, b);
	V_SIPROUND;
	v0 = _mm256_xor_si256(v0, b);
	v2 = _mm256_xor_si256(v2, _mm256_set1_epi64x(0xff));
	V_SIPROUND;
	V_SIPROUND;
	V_SIPROUND;
	_mm256_storeu_si256((__m256i *)(void *)out,
			    _mm256_xor_si256(_mm256_xor_si256(v0, v1),
					     _mm256_xor_si256(v2, v3)));
}

/* The first n - n % 4 of ct_hash_tuple4_many, four at a time. */
__attribute__((target(X4_TARGET)))
static void X4_NAME(hash_tuple4_many)(const struct ct_hash_key *key,
				      const struct ct_tuple *const *t, unsigned n,
				      uint64_t *out)
{
	for (unsigned i = 0; i + 4 <= n; i += 4) {
		__m256i m0, m1;

		canon4_x4(t + i, &m0, &m1);
		X4_NAME(siphash13_2_x4)(key, m0, m1, out + i);
	}
}

#undef V_SIPROUND
