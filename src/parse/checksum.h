/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * checksum.h - ones'-complement sums (the verdicts are the public
 * ct_packet_*_csum_ok, ctrack/packet.h), for parse/ and for nat/, which
 * recomputes what it rewrites.
 */
#ifndef CT_PARSE_CHECKSUM_H
#define CT_PARSE_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/* Ones'-complement sum of @len bytes, not folded, in memory order. */
uint64_t ct_csum_partial(const uint8_t *p, uint32_t len, uint64_t sum);

/* SCTP's CRC32c over the @len >= 12 bytes of the packet at @sh with its
 * checksum field taken as zero (sctp_compute_cksum): the value to store,
 * little-endian, in bytes 8..11.  NAT recomputes it after a rewrite. */
uint32_t ct_sctp_crc32c(const uint8_t *sh, uint32_t len);

/* CRC32c (Castagnoli, the one SCTP uses) of @len bytes at @buf, carried on
 * from @prev (0 to start): ct_crc32c(b, nb, ct_crc32c(a, na, 0)) is the CRC
 * of a then b.  The SSE4.2 instruction where the CPU has it (a few GB/s),
 * a table otherwise.  For the record layer's state file; pure. */
uint32_t ct_crc32c(const void *buf, size_t len, uint32_t prev);

/* Fold a ct_csum_partial() sum to 16 bits. */
static inline uint16_t ct_csum_fold(uint64_t s)
{
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffffffffu) + (s >> 32);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

#endif /* CT_PARSE_CHECKSUM_H */
