/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_filter.h - conntrack's filters (-f -p -s -d -r -q --sport --dport
 * --state -w -m -u, the ICMP ones), as one value both the client and the
 * daemon understand.
 *
 * A filter travels in a request as a JSON object of strings, exactly as
 * the user typed them ({"src":"10.0.0.0/8","proto":"tcp"}), and both ends
 * parse those strings with ctl_filter_set(): the client to refuse a bad
 * value before it connects, the daemon because it trusts no client.  The
 * daemon applies the filter while it lists or streams, so a filtered
 * listing of a large table sends only what matches.
 *
 * Semantics are conntrack 1.4.7's, checked against it by the kernel
 * oracle (tests/kernel/kd_live.py): -s/-d/--sport/--dport match the
 * original tuple, -r/-q/--reply-port-* the reply tuple; addresses take a
 * /prefix; -m MARK[/MASK] matches (mark & MASK) == MARK; -u takes
 * ASSURED, SEEN_REPLY, UNREPLIED, EXPECTED, FIXED_TIMEOUT (comma list, all
 * must hold); --state and the port options need the protocol first.
 * "nat" is -n / -g / -j: src (the source was translated, IPS_SRC_NAT),
 * dst (IPS_DST_NAT), any (either, whatever else is given); src and dst
 * together need both, as conntrack 1.4.7's filter_nat decides.
 */
#ifndef CTRACK_DAEMON_CTL_FILTER_H
#define CTRACK_DAEMON_CTL_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctrack/ctrack.h"

enum {
	CF_L3 = 1u << 0,
	CF_L4 = 1u << 1,
	CF_SRC = 1u << 2,
	CF_DST = 1u << 3,
	CF_RSRC = 1u << 4,
	CF_RDST = 1u << 5,
	CF_SPORT = 1u << 6,
	CF_DPORT = 1u << 7,
	CF_RSPORT = 1u << 8,
	CF_RDPORT = 1u << 9,
	CF_STATE = 1u << 10,
	CF_ZONE = 1u << 11,
	CF_MARK = 1u << 12,
	CF_STATUS = 1u << 13,
	CF_ICMP_TYPE = 1u << 14,
	CF_ICMP_CODE = 1u << 15,
	CF_ICMP_ID = 1u << 16,
	CF_NAT = 1u << 17,
};

/* ctl_filter.nat: conntrack's -n (--src-nat), -g (--dst-nat), -j
 * (--any-nat) */
enum { CF_NAT_SRC = 1, CF_NAT_DST = 2, CF_NAT_ANY = 4 };

struct cf_addr {
	union ct_addr a;
	union ct_addr mask;
	uint8_t l3;
};

struct ctl_filter {
	uint32_t have;          /* CF_* */
	uint8_t l3, l4;
	struct cf_addr src, dst, rsrc, rdst;
	uint16_t sport, dport, rsport, rdport;
	uint16_t zone;
	uint16_t icmp_id;
	uint8_t icmp_type, icmp_code;
	uint8_t state;          /* protocol state number */
	bool status_unreplied;  /* -u UNREPLIED: SEEN_REPLY clear */
	uint32_t status;        /* CT_ST_* bits that must all be set */
	uint32_t mark, mark_mask;
	uint8_t nat;            /* CF_NAT_*: every one given must hold */
};

/* The keys ctl_filter_set takes, in the order the JSON uses; NULL-ended. */
extern const char *const ctl_filter_keys[];

/*
 * ctl_filter_set - apply one filter term: @key is a name from
 * ctl_filter_keys ("family", "proto", "src", "dst", "reply-src",
 * "reply-dst", "sport", "dport", "reply-sport", "reply-dport", "state",
 * "zone", "mark", "status", "icmp-type", "icmp-code", "icmp-id", "nat":
 * src, dst or any, comma-separated), @value
 * the user's text.  Terms that depend on others ("state" on "proto") are
 * checked by ctl_filter_check once all are in.  Returns 0, or -1 with a
 * sentence for a person in @err ("src: '10.0.0.300' is not an IPv4 or
 * IPv6 address").
 */
int ctl_filter_set(struct ctl_filter *f, const char *key, const char *value,
		   char *err, size_t errlen);

/* ctl_filter_check - the terms' consistency (a state needs a protocol
 * with states, ports a protocol with ports, addresses of one family).
 * Returns 0 or -1 with @err. */
int ctl_filter_check(const struct ctl_filter *f, char *err, size_t errlen);

/* Does @ci pass @f?  Cost: a few compares per term set. */
bool ctl_filter_match(const struct ctl_filter *f, const struct ct_conn_info *ci);

/* A tuple named by a filter's terms (-G / -D with -s -d -p --sport
 * --dport or the ICMP ones, no masks): fills @t and returns 0, or -1 with
 * @err saying what is missing. */
int ctl_filter_tuple(const struct ctl_filter *f, struct ct_tuple *t, char *err,
		     size_t errlen);

#endif
