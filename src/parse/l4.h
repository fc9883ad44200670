/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * l4.h - the L4 header: ports, flags and lengths of a packet that is not
 * a fragment, and the ports of a quoted or first-fragment header (private to parse/).
 */
#ifndef CT_PARSE_L4_H
#define CT_PARSE_L4_H

#include <stdbool.h>
#include <stdint.h>

#include "ctrack/packet.h"

/*
 * ct_parse_l4 - validate and summarise the L4 header at pkt->l4 for a
 * packet that is not a fragment (pkt->tuple.l3/l4, l4, l4_len, l4_caplen,
 * truncated are set).  Fills ports, u.*, payload_len; returns the kind.
 */
enum ct_pkt_kind ct_parse_l4(struct ct_packet *pkt);

/* ct_parse_l4 for TCP and for UDP: the IPv4 parser calls them directly
 * for the two protocols most packets carry. */
enum ct_pkt_kind ct_parse_tcp(struct ct_packet *pkt);
enum ct_pkt_kind ct_parse_udp(struct ct_packet *pkt);

/*
 * ct_l4_tuple_ports - the per-protocol part of the kernel's
 * nf_ct_get_tuple(): fill t->sport/dport from the @avail bytes at @l4 for
 * protocol t->l4.  Returns false where the kernel's tuple extraction
 * fails (too few bytes, enhanced GRE that is not PPP).  Used for the
 * quoted packet in ICMP errors and for the first fragment of a datagram.
 */
bool ct_l4_tuple_ports(struct ct_tuple *t, const uint8_t *l4, uint32_t avail);

#endif /* CT_PARSE_L4_H */
