/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nat_priv.h - what the NAT files (src/nat/) share and tests may reach.
 *
 * The stage's door: nat_select.c chooses tuples (nf_nat_core.c's
 * get_unique_tuple and its helpers), nat_bysrc.c is the in-memory index of
 * source mappings, nat_portmap.c the exact port search, nat_xlate.c
 * rewrites packets (nf_nat_proto.c), nat_csum.h holds the checksum
 * arithmetic the kernel's incremental updates use.  NAT uses the parser's
 * helpers (parse_priv.h) and the tuple code; it knows nothing of the table,
 * which reaches it through the callbacks of struct ct_nat_env.
 */
#ifndef CT_NAT_PRIV_H
#define CT_NAT_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ctrack/nat.h"

/*
 * ct_nat_jhash2 - the kernel's jhash2() (include/linux/jhash.h: Bob
 * Jenkins' lookup3 hashword) over @len 32-bit words.  The words are taken
 * as they lie in memory, host order, as the kernel takes an address's
 * __be32 words: find_best_ips_proto's choice therefore depends on the
 * host's byte order exactly as the kernel's does.
 */
static inline uint32_t ct_nat_rol32(uint32_t w, unsigned s)
{
	return (w << s) | (w >> (32 - s));
}

static inline uint32_t ct_nat_jhash2(const uint32_t *k, uint32_t len,
				     uint32_t initval)
{
	uint32_t a, b, c;

	a = b = c = 0xdeadbeefu + (len << 2) + initval;
	while (len > 3) {
		a += k[0];
		b += k[1];
		c += k[2];
		/* __jhash_mix */
		a -= c; a ^= ct_nat_rol32(c, 4); c += b;
		b -= a; b ^= ct_nat_rol32(a, 6); a += c;
		c -= b; c ^= ct_nat_rol32(b, 8); b += a;
		a -= c; a ^= ct_nat_rol32(c, 16); c += b;
		b -= a; b ^= ct_nat_rol32(a, 19); a += c;
		c -= b; c ^= ct_nat_rol32(b, 4); b += a;
		len -= 3;
		k += 3;
	}
	if (len == 0)
		return c;
	if (len == 3)
		c += k[2];
	if (len >= 2)
		b += k[1];
	a += k[0];
	/* __jhash_final */
	c ^= b; c -= ct_nat_rol32(b, 14);
	a ^= c; a -= ct_nat_rol32(c, 11);
	b ^= a; b -= ct_nat_rol32(a, 25);
	c ^= b; c -= ct_nat_rol32(b, 16);
	a ^= c; a -= ct_nat_rol32(c, 4);
	b ^= a; b -= ct_nat_rol32(a, 14);
	c ^= b; c -= ct_nat_rol32(b, 24);
	return c;
}

/* reciprocal_scale(): a 32-bit value into [0, ep_ro) by multiply-shift. */
static inline uint32_t ct_nat_reciprocal_scale(uint32_t val, uint32_t ep_ro)
{
	return (uint32_t)(((uint64_t)val * ep_ro) >> 32);
}

/*
 * ct_nat_best_addr - find_best_ips_proto(): write into @t (an orig-side
 * candidate) the address of @range that the kernel picks for it, in @zone,
 * for @manip.  Does nothing without CT_NAT_RANGE_MAP_IPS.
 */
void ct_nat_best_addr(struct ct_tuple *t, const struct ct_nat_range *range,
		      enum ct_nat_manip manip);

/*
 * ct_nat_port_class - the range nf_nat_l4proto_unique_tuple() searches for
 * candidate @t: *min and *size (size may exceed 65535 for ICMP).  Returns
 * false when the kernel leaves the tuple alone (a protocol without ports,
 * GRE without a PPTP master, a DST manipulation without a port range).
 */
bool ct_nat_port_class(const struct ct_tuple *t,
		       const struct ct_nat_range *range,
		       enum ct_nat_manip manip, unsigned *min, unsigned *size);

/* The 16-bit field of @t that @manip varies (ICMP: the id, either way). */
static inline uint16_t *ct_nat_keyptr(struct ct_tuple *t, enum ct_nat_manip manip)
{
	if (t->l4 == 1 || t->l4 == 58)
		return &t->sport;
	return manip == CT_NAT_MANIP_SRC ? &t->sport : &t->dport;
}

/* A random u16 as the env gives it (its callback, or its splitmix64). */
uint16_t ct_nat_rand16(struct ct_nat_env *env);

/*
 * ct_nat_portmap_find - the exact search: the first port p of the class
 * [min, min + size) at or after min + (off % size), cyclically, that the
 * map does not hold under the key of @cand and that @free_ok accepts
 * (the taken callback; a refused port is skipped).  Writes it into @cand
 * and returns true, or returns false when none is left (@cand then holds
 * the first candidate).  *@probes counts @free_ok calls.
 */
bool ct_nat_portmap_find(struct ct_nat_portmap *pm, struct ct_tuple *cand,
			 enum ct_nat_manip manip, unsigned min, unsigned size,
			 uint16_t off,
			 bool (*free_ok)(void *arg, const struct ct_tuple *cand),
			 void *arg, uint64_t *probes);

/*
 * ct_nat_table_census - entries in table @t's source index and keys in
 * its port map (nat_table.c), counted by walking them: for tests and
 * audits of a quiet table (no writer may run meanwhile).
 */
struct ct_table;
void ct_nat_table_census(struct ct_table *t, uint64_t *indexed, uint64_t *pm_keys);

#endif /* CT_NAT_PRIV_H */
