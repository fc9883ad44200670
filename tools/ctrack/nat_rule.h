/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nat_rule.h - the NAT rules of `ctrack read --nat RULE` / `--nat-file
 * FILE` (issue 24; wired into cmd_read.c in phase 2).
 *
 * A rule is one line in the spirit of an nftables nat statement: some
 * matches, then one action (docs/nat-design.md, "Rule syntax"):
 *
 *   [ip|ip6] [saddr PREFIX] [daddr PREFIX]
 *   [tcp|udp|udplite|sctp|icmp|icmpv6|gre|l4proto N] [sport P[-P]] [dport P[-P]]
 *   [zone N] [iif N] [iifname NAME]
 *   snat|dnat [ip|ip6] [to] ADDR[-ADDR][:PORT[-PORT]] [FLAG[,FLAG]...]
 *   snat|dnat [ip|ip6] prefix to PREFIX
 *   masquerade [to ADDR[:PORT[-PORT]]] [FLAG...]
 *   FLAG: persistent | random | fully-random
 *
 * nftables' own spellings are accepted where they differ only in words:
 * "ip saddr 10.0.0.0/8", "tcp dport 80", "ct zone 3", "meta l4proto udp",
 * "[2001:db8::1]:80" for an IPv6 address with a port.  The first
 * matching rule of a kind binds a new connection: dnat rules at the
 * first packet's PREROUTING (matched against the packet as it came),
 * snat and masquerade rules at its POSTROUTING (matched after dnat, as
 * the kernel's postrouting chain sees it).
 *
 * Errors name the rule and the position: "rule 'snat to 10.0.0.300':
 * column 9: '10.0.0.300' is not an address".  A rule that parses but can
 * never match (an IPv6 prefix in an ip rule, ports on ICMP, a target of
 * the other family) gets a warning the same way.  Nothing here prints.
 */
#ifndef CTRACK_TOOL_NAT_RULE_H
#define CTRACK_TOOL_NAT_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctrack/nat.h"

enum nat_rule_action {
	NAT_RULE_SNAT,
	NAT_RULE_DNAT,
	NAT_RULE_MASQUERADE,
};

struct nat_rule_prefix {
	bool set;
	uint8_t l3;            /* enum ct_l3 */
	uint8_t len;           /* prefix length in bits */
	union ct_addr addr;    /* masked to len */
};

struct nat_rule_ports {
	bool set;
	uint16_t lo, hi;
};

struct nat_rule {
	/* matches (unset: any) */
	uint8_t family;                 /* 0, CT_L3_IPV4, CT_L3_IPV6 */
	int l4;                         /* -1: any protocol */
	struct nat_rule_prefix saddr, daddr;
	struct nat_rule_ports sport, dport;
	int32_t zone;                   /* -1: any */
	int32_t iif;                    /* -1: any (pcapng interface number) */
	char iifname[64];               /* "": any (pcapng if_name) */
	/* the action */
	enum nat_rule_action action;
	uint8_t to_family;              /* family of the target, 0: none given */
	bool has_to;                    /* masquerade: an address was given */
	struct ct_nat_range range;      /* flags, addresses, ports */
	char text[256];                 /* the rule as given (for messages) */
};

/* What went wrong, or what is odd: @column is 1-based within the rule. */
struct nat_rule_diag {
	unsigned column;
	char msg[200];
};

/*
 * nat_rule_parse - parse one rule.  Returns 0 (and, when the rule can
 * never match, a warning in *@warn with warn->msg non-empty), or -1 with
 * the error in *@err.  @warn may be NULL.
 */
int nat_rule_parse(const char *text, struct nat_rule *r, struct nat_rule_diag *err,
		   struct nat_rule_diag *warn);

/* "ORIGIN: rule 'TEXT': column N: MSG" into @buf (ORIGIN: "--nat" or
 * "FILE:LINE"). */
void nat_rule_format(char *buf, size_t size, const char *origin, const char *text,
		     const struct nat_rule_diag *d);

struct nat_rules {
	struct nat_rule *v;
	size_t n, cap;
};

void nat_rules_free(struct nat_rules *rs);

/*
 * nat_rules_add - parse @text and append it; on error "ORIGIN: rule
 * '...': column N: ..." in @msg and -1.  A warning goes to @on_warn
 * (formatted the same way) when given.  -ENOMEM is reported as an error.
 */
int nat_rules_add(struct nat_rules *rs, const char *origin, const char *text, char *msg,
		  size_t msglen, void (*on_warn)(void *arg, const char *line), void *arg);

/*
 * nat_rules_load - every rule of @path, one per line ('#' starts a
 * comment, blank lines are skipped).  Errors and warnings name
 * "PATH:LINE".  Returns 0 or -1 (@msg set).
 */
int nat_rules_load(struct nat_rules *rs, const char *path, char *msg, size_t msglen,
		   void (*on_warn)(void *arg, const char *line), void *arg);

/*
 * nat_rule_matches - does @r match a packet with tuple @t that came in on
 * pcapng interface @iif (named @iifname, or NULL)?
 */
bool nat_rule_matches(const struct nat_rule *r, const struct ct_tuple *t, int32_t iif,
		      const char *iifname);

/*
 * nat_rules_first - the first rule of @rs for the hook of @manip (DST:
 * dnat rules; SRC: snat and masquerade rules) that matches, or NULL.
 */
const struct nat_rule *nat_rules_first(const struct nat_rules *rs, enum ct_nat_manip manip,
				       const struct ct_tuple *t, int32_t iif,
				       const char *iifname);

#endif
