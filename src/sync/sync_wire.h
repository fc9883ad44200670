/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sync_wire.h - byte-level helpers and protocol numbers the sync modules
 * share (private to src/sync/).
 *
 * The wire is read and written byte by byte, never through a cast to a
 * packed struct: a hostile datagram may start a message at any offset
 * (conntrackd places the next message right after the previous one's
 * length, aligned or not), and unaligned loads through struct pointers
 * are undefined behaviour that UBSan rightly reports.
 */
#ifndef CT_SYNC_WIRE_H
#define CT_SYNC_WIRE_H

#include <stdint.h>
#include <string.h>

/* IP protocol numbers the codec treats specially (kept here so that the
 * sync modules need no private header of the packet stages). */
enum {
	CT_SYNC_P_ICMP = 1,
	CT_SYNC_P_TCP = 6,
	CT_SYNC_P_UDP = 17,
	CT_SYNC_P_DCCP = 33,
	CT_SYNC_P_GRE = 47,
	CT_SYNC_P_ICMPV6 = 58,
	CT_SYNC_P_SCTP = 132,
	CT_SYNC_P_UDPLITE = 136,
};

/* Kernel limits that make a value impossible. */
enum {
	CT_SYNC_TCP_STATES = 10,     /* TCP_CONNTRACK_MAX */
	CT_SYNC_SCTP_STATES = 10,    /* SCTP_CONNTRACK_MAX */
	CT_SYNC_DCCP_STATES = 8,     /* CT_DCCP_IGNORE: nlattr_to_dccp refuses
				      * it and above */
	CT_SYNC_DCCP_ROLES = 2,
	CT_SYNC_WSCALE_MAX = 14,     /* TCP_MAX_WSCALE */
	CT_SYNC_STATUS_BITS = 16,    /* __IPS_MAX_BIT */
};

/* Status bits the codec reads (the kernel's IPS_*). */
enum {
	CT_SYNC_IPS_SRC_NAT_DONE = 1u << 7,
	CT_SYNC_IPS_DST_NAT_DONE = 1u << 8,
	CT_SYNC_IPS_DYING = 1u << 9,
};

#define CT_SYNC_TLV_HDR 4
#define CT_SYNC_ALIGN4(x) (((x) + 3u) & ~3u)

static inline uint16_t ct_sync_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t ct_sync_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline void ct_sync_wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void ct_sync_wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* The little-endian 16-bit fields (ICMP id, NAT ports; see sync.h). */
static inline uint16_t ct_sync_rd16le(const uint8_t *p)
{
	return (uint16_t)(p[1] << 8 | p[0]);
}

static inline void ct_sync_wr16le(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/* Sequence arithmetic modulo 2^32 (conntrackd's before/after, from the
 * kernel's net/tcp.h). */
static inline int ct_sync_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline int ct_sync_after(uint32_t a, uint32_t b)
{
	return ct_sync_before(b, a);
}

#endif /* CT_SYNC_WIRE_H */
