/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nat_csum.h - the checksum arithmetic of the kernel's incremental
 * updates, for nat_xlate.c.
 *
 * Every value is handled as it lies in memory (a 16-bit checksum field,
 * 32-bit address words, 16-bit ports loaded with memcpy, not converted),
 * as the kernel handles __sum16/__be32/__be16: ones' complement sums are
 * the same in either byte order, so nothing is swapped.  Sums use the
 * end-around carry (csum_add), which never turns a non-zero sum into
 * +0; that is what decides which of the two zeros (0x0000, 0xffff) a
 * checksum ends as, and why the updates below are the kernel's formulas
 * and not a recomputation: csum_replace4 / inet_proto_csum_replace4 /
 * _replace16 all come to  new = ~fold(~old + ~from + to)  (RFC 1624,
 * eqn. 3), with the words of @from and @to added one by one.
 */
#ifndef CT_NAT_CSUM_H
#define CT_NAT_CSUM_H

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t ct_nat_csum_add(uint32_t a, uint32_t b)
{
	uint32_t r = a + b;

	return r + (r < b);
}

/* csum_fold: 32 bits to 16, complemented */
static inline uint16_t ct_nat_csum_fold(uint32_t s)
{
	s = (s & 0xffffu) + (s >> 16);
	s = (s & 0xffffu) + (s >> 16);
	return (uint16_t)~s;
}

/* The running sum an update starts from: ~csum_unfold(*sum). */
static inline uint32_t ct_nat_csum_start(const uint8_t *field)
{
	uint16_t c;

	memcpy(&c, field, 2);
	return ~(uint32_t)c;
}

static inline void ct_nat_csum_store(uint8_t *field, uint32_t s)
{
	uint16_t c = ct_nat_csum_fold(s);

	memcpy(field, &c, 2);
}

/* csum_replace4 / inet_proto_csum_replace4: @field gets the change of a
 * 32-bit word from @from to @to (memory values). */
static inline void ct_nat_csum_replace4(uint8_t *field, uint32_t from, uint32_t to)
{
	uint32_t s = ct_nat_csum_start(field);

	s = ct_nat_csum_add(s, ~from);
	s = ct_nat_csum_add(s, to);
	ct_nat_csum_store(field, s);
}

/* inet_proto_csum_replace2: a 16-bit field, widened to 32 bits as the
 * kernel's (__force __be32) cast widens it. */
static inline void ct_nat_csum_replace2(uint8_t *field, uint16_t from, uint16_t to)
{
	ct_nat_csum_replace4(field, (uint32_t)from, (uint32_t)to);
}

/* inet_proto_csum_replace16: an IPv6 address, four words each way. */
static inline void ct_nat_csum_replace16(uint8_t *field, const uint8_t *from,
					 const uint8_t *to)
{
	uint32_t s = ct_nat_csum_start(field), f[4], t[4];

	memcpy(f, from, 16);
	memcpy(t, to, 16);
	for (int i = 0; i < 4; i++)
		s = ct_nat_csum_add(s, ~f[i]);
	for (int i = 0; i < 4; i++)
		s = ct_nat_csum_add(s, t[i]);
	ct_nat_csum_store(field, s);
}

/* ip_decrease_ttl's update of the IPv4 header checksum for TTL - 1,
 * literally: it adds htons(0x0100) and maps a result of 0xffff (or a
 * carry out) onward by one, so it never leaves 0xffff. */
static inline void ct_nat_csum_ttl_dec(uint8_t *field)
{
	uint16_t c;
	uint32_t check;

	memcpy(&c, field, 2);
	check = (uint32_t)c + (uint32_t)htons(0x0100);
	c = (uint16_t)(check + (check >= 0xffffu));
	memcpy(field, &c, 2);
}

#endif /* CT_NAT_CSUM_H */
