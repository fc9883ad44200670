/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * csum.h - checksums written into hand-built frames (tests/support).
 *
 * A second implementation, kept apart from the library's (src/parse/
 * checksum.c): a frame the library calls good was judged right by code
 * that shares nothing with it.  Plain loops, 16-bit words in network
 * order; the rules are the ones the kernel checks (UDP's zero means "no
 * checksum", so a computed zero is sent as 0xffff; UDP-Lite over IPv4 as
 * the kernel sums it; SCTP's CRC32c, stored little-endian).
 */
#ifndef CT_TS_CSUM_H
#define CT_TS_CSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* @s plus the ones'-complement sum of @n bytes at @p, as 16-bit words in
 * network order (an odd last byte padded with zero); not folded. */
uint32_t ts_sum16(const uint8_t *p, size_t n, uint32_t s);

/* A ts_sum16 total folded to 16 bits and complemented: the checksum. */
uint16_t ts_fold(uint32_t s);

/* The checksum of @n bytes at @p. */
uint16_t ts_csum(const uint8_t *p, size_t n);

/* Set the header checksum of the IPv4 header at @ip (its IHL read). */
void ts_ip4_csum(uint8_t *ip);

/* Set the checksum of the L4 header at @l4 (@len bytes, header and
 * payload) of protocol @proto inside the IP datagram at @ip (IPv6 when
 * @v6): TCP, UDP, UDP-Lite, ICMP, ICMPv6, SCTP; other protocols and
 * headers too short for their field are left alone. */
void ts_l4_csum(uint8_t *ip, bool v6, uint8_t proto, uint8_t *l4, uint32_t len);

/* CRC32c (Castagnoli) of @n bytes, as SCTP stores it (the caller writes
 * it little-endian). */
uint32_t ts_crc32c(const uint8_t *p, size_t n);

#endif /* CT_TS_CSUM_H */
