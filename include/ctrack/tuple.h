/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctrack/tuple.h - the key of a connection.
 *
 * A tuple names one direction of a connection the way nf_conntrack's
 * nf_conntrack_tuple does: layer-3 family, addresses, layer-4 protocol and
 * the protocol's two 16-bit "ports" (real ports for TCP/UDP/UDP-Lite/SCTP,
 * id and type/code for ICMP, call ids for GRE, zero for everything else),
 * plus the zone (namespace id) it lives in.  It is 40 bytes, IPv4 and IPv6
 * alike, so that one comparison routine serves every protocol.
 *
 * Byte order: addresses are kept in network order (as they sit in the
 * packet), ports, ids and keys in host order.  Unused bytes are zero, so a
 * tuple can be hashed and compared with memcmp().
 *
 * Thread safety: plain values; every function here is pure and may be
 * called from any thread at any time.
 */
#ifndef CTRACK_TUPLE_H
#define CTRACK_TUPLE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Layer-3 families, numbered as conntrack prints them (AF_INET, AF_INET6). */
enum ct_l3 {
	CT_L3_IPV4 = 2,
	CT_L3_IPV6 = 10,
};

union ct_addr {
	uint32_t ip4;      /* network order; the other 12 bytes are zero */
	uint32_t ip6w[4];  /* network order words */
	uint8_t ip6[16];
};

struct ct_tuple {
	union ct_addr src;
	union ct_addr dst;
	uint16_t sport;    /* TCP/UDP/SCTP source port; ICMP id; GRE source key */
	uint16_t dport;    /* dest port; ICMP (type << 8 | code); GRE dest key */
	uint16_t zone;     /* namespace / zone id; 0 is the default zone */
	uint8_t l3;        /* enum ct_l3 */
	uint8_t l4;        /* IPPROTO_* */
};

_Static_assert(sizeof(struct ct_tuple) == 40, "ct_tuple must stay 40 bytes");

enum ct_dir {
	CT_DIR_ORIGINAL = 0,
	CT_DIR_REPLY = 1,
};

static inline bool ct_tuple_equal(const struct ct_tuple *a,
				  const struct ct_tuple *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

/* ICMP type/code helpers for the dport field of ICMP and ICMPv6 tuples. */
static inline uint8_t ct_tuple_icmp_type(const struct ct_tuple *t)
{
	return (uint8_t)(t->dport >> 8);
}

static inline uint8_t ct_tuple_icmp_code(const struct ct_tuple *t)
{
	return (uint8_t)(t->dport & 0xff);
}

/*
 * ct_tuple_invert - the tuple a reply to @t would carry.
 * Swaps addresses and ports; for ICMP/ICMPv6 queries maps the request type
 * to its reply type (echo -> echo reply, ...).  Returns false when @t has no
 * reply form (an ICMP type that is not a tracked query), as the kernel's
 * invert_tuple does; @out is then unspecified.  Any thread, O(1).
 */
bool ct_tuple_invert(const struct ct_tuple *t, struct ct_tuple *out);

/*
 * Printing a tuple as conntrack(8) does.  The writers put text into the
 * caller's memory with no NUL, no allocation, no stdio and no locale, and
 * return the end of what they wrote, so that a listing is a run of stores
 * into one buffer (the daemon prints 8-11M lines a second through them:
 * BENCHMARKS.md, list); the buffer must have room for the stated number
 * of bytes, which is checked by nothing but the caller, and a writer may
 * leave scratch bytes after the end it returns (within that room).  Any thread, at
 * any time; pure functions of their arguments; O(1) (a few tens of
 * nanoseconds a tuple).  They cannot fail.
 */

/* The room ct_tuple_put_addr needs: an address is at most 45 characters
 * (inet_ntop's INET6_ADDRSTRLEN less its NUL). */
#define CT_ADDR_TEXT_MAX 46
/* The room ct_tuple_put needs: at most 127 characters (two IPv6
 * addresses and GRE keys). */
#define CT_TUPLE_TEXT_MAX 128

/*
 * ct_tuple_put_addr - address @a of family @l3 (enum ct_l3; anything but
 * CT_L3_IPV6 is read as IPv4) as inet_ntop(3) writes it, byte for byte,
 * at @buf (CT_ADDR_TEXT_MAX bytes of room).  Returns the end of the text.
 */
char *ct_tuple_put_addr(char *buf, uint8_t l3, const union ct_addr *a);

/*
 * ct_tuple_put - "src=A dst=B sport=P dport=Q" (TCP, UDP, UDP-Lite, SCTP,
 * DCCP), "src=A dst=B type=T code=C id=I" (ICMP, ICMPv6), "src=A dst=B
 * srckey=0xK dstkey=0xK" (GRE) or "src=A dst=B" (any other protocol),
 * exactly as conntrack prints a tuple but without its trailing blank, at
 * @buf (CT_TUPLE_TEXT_MAX bytes of room).  Returns the end of the text.
 */
char *ct_tuple_put(char *buf, const struct ct_tuple *t);

/*
 * ct_tuple_format - ct_tuple_put's text as a C string, with snprintf's
 * contract: writes at most @size bytes including the terminating NUL
 * (nothing when @size is 0) and returns the length it wanted (at most
 * 127).  Any thread; no allocation; cannot fail.
 */
int ct_tuple_format(const struct ct_tuple *t, char *buf, unsigned size);

#ifdef __cplusplus
}
#endif

#endif /* CTRACK_TUPLE_H */
