/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * hash.h - the table's keyed, direction-blind hash of a tuple.
 *
 * Both directions of a connection must land in the same row, so that one
 * slot per entry serves lookups from either side (ctrack does no NAT, so
 * the reply tuple is always the inverted original).  The hash therefore
 * runs over a canonical form: the two endpoints (address, port) in sorted
 * order; for ICMP/ICMPv6 only the id, since the type differs by direction.
 *
 * The function is SipHash-1-3 under a per-table random 128-bit key, as
 * the kernel keys its conntrack hash with siphash: nobody outside can aim
 * packets at one row.  An IPv4 tuple is hashed as two 64-bit words, an
 * IPv6 one as five.
 */
#ifndef CT_HASH_H
#define CT_HASH_H

#include <stdbool.h>
#include <stdint.h>

#include "ctrack/tuple.h"

struct ct_hash_key {
	uint64_t k0, k1;
};

/* The two halves of ct_hash_tuple, by family. */
uint64_t ct_hash_tuple4(const struct ct_hash_key *key, const struct ct_tuple *t);
uint64_t ct_hash_tuple6(const struct ct_hash_key *key, const struct ct_tuple *t);

/* ct_hash_tuple4 of @n IPv4 tuples into @out[0..n-1]; four at a time
 * with AVX-512VL or AVX2 when the CPU has them (same results). */
void ct_hash_tuple4_many(const struct ct_hash_key *key,
			 const struct ct_tuple *const *t, unsigned n, uint64_t *out);

/* ct_hash_tuple4_many with the vector code chosen (tests): false, and
 * nothing computed, when the CPU lacks it. */
enum ct_hash_isa {
	CT_HASH_SCALAR,
	CT_HASH_AVX2,
	CT_HASH_AVX512VL,
	CT_HASH_ISA_MAX,
};

bool ct_hash_tuple4_many_isa(const struct ct_hash_key *key,
			     const struct ct_tuple *const *t, unsigned n,
			     uint64_t *out, enum ct_hash_isa isa);

/* ct_hash_tuple - 64-bit keyed hash; equal for a tuple and its inverse. */
static inline uint64_t ct_hash_tuple(const struct ct_hash_key *key,
				     const struct ct_tuple *t)
{
	return t->l3 == CT_L3_IPV4 ? ct_hash_tuple4(key, t) : ct_hash_tuple6(key, t);
}

/* ct_hash_u64 - keyed hash of one word (entry ids). */
uint64_t ct_hash_u64(const struct ct_hash_key *key, uint64_t v);

/* ct_hash_key_random - fill @key from getrandom(); returns 0 or -errno. */
int ct_hash_key_random(struct ct_hash_key *key);

#endif /* CT_HASH_H */
