/*
 * proto_icmp.h - the kernel's rules for ICMP/ICMPv6 errors (private).
 * (Interim version; the ICMP tracker's author owns this file.)
 */
#ifndef CT_PROTO_ICMP_H
#define CT_PROTO_ICMP_H

#include <stdbool.h>
#include <stdint.h>

#include "ctrack/packet.h"
#include "ctrack/tuple.h"

bool ct_icmp_error_key(const struct ct_packet *pkt, struct ct_tuple *key,
		       uint8_t *reason);
bool ct_icmp_error_accept(const struct ct_packet *pkt,
			  const struct ct_tuple *orig, enum ct_dir inner_dir,
			  enum ct_dir *err_dir, uint8_t *reason);

#endif /* CT_PROTO_ICMP_H */
