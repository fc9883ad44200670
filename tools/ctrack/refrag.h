/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * refrag.h - a datagram as a Linux router sends it on: fragmented again
 * to the size it came in fragments of, an IPv6 atomic fragment without
 * its fragment header (`ctrack read --write-translated`).
 *
 * The kernel's conntrack and NAT see datagrams whole (nf_defrag), and its
 * output path fragments a reassembled one again to frag_max_size, the IP
 * length of the largest fragment that came in (ip_do_fragment and
 * ip6_fragment, their slow path): every fragment but the last carries
 * (size - header) rounded down to 8 bytes of data, the IPv4 header is
 * copied with its length, offset and MF set and its checksum computed,
 * DF cleared; the IPv6 unfragmentable part (the header and the
 * extension headers before a routing header's end: ip6_find_1stfragopt)
 * is followed by a fragment header.  An IPv6 fragment with offset 0 and
 * no M ("atomic", RFC 6946) is not fragmented at all: nf_defrag_ipv6
 * drops its fragment header, and the router sends the datagram without
 * one.
 */
#ifndef CTRACK_TOOL_REFRAG_H
#define CTRACK_TOOL_REFRAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Called once per fragment (or for the whole datagram when it fits):
 * @ip of @len bytes, valid during the call. */
typedef void (*refrag_out_fn)(void *arg, const uint8_t *ip, uint32_t len);

/*
 * refrag_send - send datagram @ip (@len bytes, IPv4 or IPv6, its length
 * fields whole) in fragments of at most @max_size bytes (a reassembled
 * datagram's frag_max_size; 0 or >= @len: as it is).  @frag_id is the
 * IPv6 fragment identification to use (the kernel draws a new one:
 * ipv6_select_ident; the caller gives the original's).  Returns the
 * fragments sent, or -1 when @ip is not a datagram it can fragment (it
 * is then sent whole).
 */
int refrag_send(const uint8_t *ip, uint32_t len, uint32_t max_size, uint32_t frag_id,
		refrag_out_fn out, void *arg);

/*
 * refrag_strip_atomic - @ip (@len bytes) is an IPv6 datagram: remove its
 * fragment header if it is an atomic one (offset 0, M clear), in place,
 * fixing the previous header's next-header byte and the payload length.
 * Returns the new length (@len when there is nothing to remove).
 */
uint32_t refrag_strip_atomic(uint8_t *ip, uint32_t len);

#endif
