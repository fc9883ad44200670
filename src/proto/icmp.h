/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * icmp.h - ICMP / ICMPv6 error messages: when is one RELATED?
 *
 * The trackers in icmp.c handle ICMP *queries* (echo, ...), which
 * get entries of their own.  ICMP *errors* never get an entry: the core
 * (track/track.c) finds the connection the quoted packet belongs to and, when the
 * kernel's rules accept it, reports the error as RELATED to that entry.
 * These functions are those rules, taken from Linux 6.18's
 * nf_conntrack_icmpv4_error(), nf_conntrack_icmpv6_error() and
 * nf_conntrack_inet_error(); the core does the lookup between them.
 *
 * The kernel's order for an ICMP / ICMPv6 packet (pf = outer family):
 *   1. header shorter than 8 bytes, or (nf_conntrack_checksum=1) a bad
 *      checksum: INVALID, counted as `error`.  This comes *before* 2 and
 *      3, so a neighbour solicitation with a bad checksum is INVALID, not
 *      UNTRACKED: the core must check the checksum before ->classify.
 *   2. ICMPv4 only: type > 18 (NR_ICMP_TYPES): INVALID, counted as
 *      `error` (->classify returns CT_V_INVALID, CT_PR_ICMP_BAD).
 *      ICMPv6 only: MLD and neighbour discovery (130-136, 143): UNTRACKED,
 *      never an entry (->classify returns CT_V_UNTRACKED).
 *   3. Not an error type (ct_icmp_is_error() false): ordinary tracking as
 *      a query, see icmp.c.
 *   4. An error: ct_icmp_error_key(), then the core looks the key up in
 *      the packet's zone, then ct_icmp_error_accept() on the entry found.
 *
 * When step 4 fails - the quoted packet cannot be parsed or inverted, no
 * entry holds it, or the outer destination check fails - the kernel
 * returns -NF_ACCEPT from nf_conntrack_handle_icmp(): the `error` counter
 * (conntrack -S "error") goes up, `invalid` does NOT, and the packet
 * leaves conntrack with no entry attached, i.e. it is INVALID to the rule
 * set (nft "ct state invalid").  It is never tracked as a new ICMP entry
 * of its own and it changes no entry.  The core should report CT_V_INVALID
 * with the reason these functions give and count it under `error`.
 *
 * Counter rule for the core: reasons CT_PR_ICMP_BAD and CT_PR_ICMP_NO_MATCH,
 * and L4_TRUNCATED / L4_BAD_CSUM on an ICMP/ICMPv6 packet of the matching
 * family, are the kernel's `error`; every other INVALID (including
 * CT_PR_ICMP_UNTRACKED_TYPE from the query trackers) is `invalid`.
 *
 * When step 4 succeeds the packet is RELATED (IP_CT_RELATED, or
 * IP_CT_RELATED_REPLY when *err_dir is CT_DIR_REPLY).  The kernel then
 * stops: no protocol tracker runs, so the entry is neither refreshed nor
 * counted (no acct for the error packet), SEEN_REPLY is not set, and no
 * event is generated.
 *
 * What the parser must provide (pkt->u.icmp): inner_ok only when the kernel
 * could build the quoted tuple (nf_ct_get_tuplepr on the quoted header:
 * an IPv4 header of 20 bytes whose fragment offset is 0 and whose IHL
 * does not run past the packet, or an IPv6 header whose extension chain
 * ends at an unfragmented L4; then 4 bytes of ports for TCP/UDP/UDP-Lite/
 * SCTP/DCCP, the 8-byte ICMP header for ICMP/ICMPv6, GRE's rules for GRE,
 * nothing for other protocols - their ports stay 0); inner = that tuple
 * exactly as the quoted packet travelled (not inverted).
 *
 * All functions are pure and thread-safe.
 */
#ifndef CT_PROTO_ICMP_H
#define CT_PROTO_ICMP_H

#include <stdbool.h>
#include <stdint.h>

#include "ctrack/packet.h"
#include "ctrack/tuple.h"

/*
 * ct_icmp_is_error - does the kernel treat @pkt as an ICMP error message
 * (step 4 above)?  ICMP in IPv4: destination unreachable (3), source
 * quench (4), redirect (5), time exceeded (11), parameter problem (12)
 * (icmp_is_err()).  ICMPv6 in IPv6: every type below 128.  ICMP carried
 * over the other family is never an error here: the kernel gives it to the
 * ordinary trackers, which refuse it.
 */
bool ct_icmp_is_error(const struct ct_packet *pkt);

/*
 * ct_icmp_error_key - the tuple to look up for the ICMP error @pkt.
 *
 * The key is the quoted packet's tuple as it travelled (not inverted),
 * with the zone of @pkt.  The kernel looks up the inverse of that tuple in
 * both directions; since inversion is an involution and the core's lookup
 * matches either direction of an entry, looking up the quoted tuple finds
 * the same entry, and the direction it matches in is the direction the
 * quoted packet travelled (the kernel's direction is the opposite one).
 *
 * Returns false, with *@reason = CT_PR_ICMP_BAD, when the kernel could
 * not build or invert the quoted tuple (parser gave no inner tuple, inner
 * family differs from the outer one, or the quoted packet is itself an
 * ICMP message that is not a query, e.g. an error quoting an error).
 */
bool ct_icmp_error_key(const struct ct_packet *pkt, struct ct_tuple *key,
		       uint8_t *reason);

/*
 * ct_icmp_error_accept - given the entry found for the key (its original
 * tuple @orig, its reply tuple @reply) and the direction @inner_dir in
 * which the key matched it (CT_DIR_ORIGINAL when the quoted packet equals
 * @orig), decide as nf_conntrack_inet_error() does.
 *
 * The outer destination address must equal the destination of the
 * entry's tuple in the kernel's direction (the opposite of @inner_dir):
 * @orig's for ORIGINAL, @reply's for REPLY - with no NAT the quoted
 * packet's source, with source NAT the translated address the error was
 * sent to.  Otherwise returns false with *@reason = CT_PR_ICMP_NO_MATCH.
 *
 * On success *@err_dir is the direction of the error: CT_DIR_REPLY
 * (IP_CT_RELATED_REPLY) when the quoted packet went in the original
 * direction, CT_DIR_ORIGINAL (IP_CT_RELATED) when it went in the reply
 * direction.
 */
bool ct_icmp_error_accept(const struct ct_packet *pkt,
			  const struct ct_tuple *orig, const struct ct_tuple *reply,
			  enum ct_dir inner_dir, enum ct_dir *err_dir, uint8_t *reason);

#endif /* CT_PROTO_ICMP_H */
