/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_filter.c - conntrack's listing filters: parsing the user's text and
 * matching entries (ctl_filter.h).
 *
 * The rules are conntrack-tools 1.4.7's as measured on its own command
 * line against a kernel table (tests/kernel/kd_live.py repeats the
 * comparison): a port or state option means nothing without its protocol,
 * so both are refused without one, as conntrack refuses them; -u
 * UNREPLIED is the absence of SEEN_REPLY, the other names are status bits
 * that must all be set; a mark with a mask matches (mark & mask) == value.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctl_filter.h"

const char *const ctl_filter_keys[] = {
	"family", "proto", "src", "dst", "reply-src", "reply-dst", "sport", "dport",
	"reply-sport", "reply-dport", "state", "zone", "mark", "status", "icmp-type",
	"icmp-code", "icmp-id", "nat", NULL,
};

/* Protocol names conntrack(8) accepts, with their numbers. */
static const struct {
	const char *name;
	uint8_t num;
} protos[] = {
	{ "tcp", IPPROTO_TCP }, { "udp", IPPROTO_UDP }, { "udplite", IPPROTO_UDPLITE },
	{ "icmp", IPPROTO_ICMP }, { "icmpv6", IPPROTO_ICMPV6 }, { "ipv6-icmp", IPPROTO_ICMPV6 },
	{ "sctp", IPPROTO_SCTP }, { "gre", IPPROTO_GRE }, { "dccp", IPPROTO_DCCP },
	{ "esp", IPPROTO_ESP }, { "ah", IPPROTO_AH }, { "ipip", IPPROTO_IPIP },
};

static bool has_ports(uint8_t l4)
{
	return l4 == IPPROTO_TCP || l4 == IPPROTO_UDP || l4 == IPPROTO_UDPLITE ||
	       l4 == IPPROTO_SCTP || l4 == IPPROTO_DCCP;
}

static bool is_icmp(uint8_t l4)
{
	return l4 == IPPROTO_ICMP || l4 == IPPROTO_ICMPV6;
}

static int num(const char *v, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long n;

	if (!*v || isspace((unsigned char)*v) || *v == '-')
		return -1;
	errno = 0;
	n = strtoul(v, &end, 0);
	if (errno || *end || n > max)
		return -1;
	*out = n;
	return 0;
}

static int parse_addr(const char *key, const char *v, struct cf_addr *a, char *err,
		      size_t errlen)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(v, '/');
	size_t n = slash ? (size_t)(slash - v) : strlen(v);
	unsigned long plen;
	unsigned bits;

	memset(a, 0, sizeof(*a));
	if (n >= sizeof(buf))
		goto bad;
	memcpy(buf, v, n);
	buf[n] = 0;
	if (inet_pton(AF_INET, buf, &a->a.ip4) == 1) {
		a->l3 = CT_L3_IPV4;
		bits = 32;
	} else if (inet_pton(AF_INET6, buf, a->a.ip6) == 1) {
		a->l3 = CT_L3_IPV6;
		bits = 128;
	} else {
		goto bad;
	}
	plen = bits;
	if (slash && num(slash + 1, bits, &plen) < 0) {
		snprintf(err, errlen, "%s: '%s' has a prefix length that is not 0 to %u", key,
			 v, bits);
		return -1;
	}
	for (unsigned i = 0; i < bits / 8; i++) {
		unsigned have = plen > i * 8 ? (unsigned)plen - i * 8 : 0;
		uint8_t m = have >= 8 ? 0xff : (uint8_t)(0xff00u >> have);

		a->mask.ip6[i] = m;
		a->a.ip6[i] &= m;
	}
	return 0;
bad:
	snprintf(err, errlen, "%s: '%s' is not an IPv4 or IPv6 address (ADDR or ADDR/PREFIX)",
		 key, v);
	return -1;
}

/* "src", "dst", "any", comma-separated */
static int parse_nat(struct ctl_filter *f, const char *v, char *err, size_t errlen)
{
	char buf[64], *save = NULL;

	if (strlen(v) >= sizeof(buf) || !*v)
		goto bad;
	snprintf(buf, sizeof(buf), "%s", v);
	f->nat = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "src"))
			f->nat |= CF_NAT_SRC;
		else if (!strcmp(t, "dst"))
			f->nat |= CF_NAT_DST;
		else if (!strcmp(t, "any"))
			f->nat |= CF_NAT_ANY;
		else
			goto bad;
	}
	if (!f->nat)
		goto bad;
	f->have |= CF_NAT;
	return 0;
bad:
	snprintf(err, errlen, "nat: '%s' is not a list of src, dst, any", v);
	return -1;
}

static int parse_status(struct ctl_filter *f, const char *v, char *err, size_t errlen)
{
	char buf[128];
	char *save = NULL, *tok;

	if (strlen(v) >= sizeof(buf) || !*v)
		goto bad;
	memcpy(buf, v, strlen(v) + 1);
	f->status = 0;
	f->status_unreplied = false;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcasecmp(tok, "ASSURED"))
			f->status |= CT_ST_ASSURED;
		else if (!strcasecmp(tok, "SEEN_REPLY"))
			f->status |= CT_ST_SEEN_REPLY;
		else if (!strcasecmp(tok, "EXPECTED"))
			f->status |= CT_ST_EXPECTED;
		else if (!strcasecmp(tok, "FIXED_TIMEOUT"))
			f->status |= 1u << 10;   /* IPS_FIXED_TIMEOUT: never set here */
		else if (!strcasecmp(tok, "UNREPLIED"))
			f->status_unreplied = true;
		else
			goto bad;
	}
	return 0;
bad:
	snprintf(err, errlen, "status: '%s' is not a list of ASSURED, SEEN_REPLY, UNREPLIED, "
		 "EXPECTED, FIXED_TIMEOUT", v);
	return -1;
}

int ctl_filter_set(struct ctl_filter *f, const char *key, const char *v, char *err,
		   size_t errlen)
{
	unsigned long n;

	if (!strcmp(key, "family")) {
		if (!strcasecmp(v, "ipv4") || !strcasecmp(v, "inet"))
			f->l3 = CT_L3_IPV4;
		else if (!strcasecmp(v, "ipv6") || !strcasecmp(v, "inet6"))
			f->l3 = CT_L3_IPV6;
		else {
			snprintf(err, errlen, "family: '%s' is neither ipv4 nor ipv6", v);
			return -1;
		}
		f->have |= CF_L3;
		return 0;
	}
	if (!strcmp(key, "proto")) {
		for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
			if (!strcasecmp(v, protos[i].name)) {
				f->l4 = protos[i].num;
				f->have |= CF_L4;
				return 0;
			}
		if (num(v, 255, &n) < 0) {
			snprintf(err, errlen, "proto: '%s' is not a protocol name (tcp, udp, "
				 "udplite, icmp, icmpv6, sctp, gre, dccp, ...) or number 0-255", v);
			return -1;
		}
		f->l4 = (uint8_t)n;
		f->have |= CF_L4;
		return 0;
	}
	if (!strcmp(key, "src") || !strcmp(key, "dst") || !strcmp(key, "reply-src") ||
	    !strcmp(key, "reply-dst")) {
		struct cf_addr *a = !strcmp(key, "src") ? &f->src : !strcmp(key, "dst") ? &f->dst
				  : !strcmp(key, "reply-src") ? &f->rsrc : &f->rdst;
		uint32_t bit = a == &f->src ? CF_SRC : a == &f->dst ? CF_DST
			     : a == &f->rsrc ? CF_RSRC : CF_RDST;

		if (parse_addr(key, v, a, err, errlen) < 0)
			return -1;
		f->have |= bit;
		return 0;
	}
	if (!strcmp(key, "sport") || !strcmp(key, "dport") || !strcmp(key, "reply-sport") ||
	    !strcmp(key, "reply-dport") || !strcmp(key, "zone") || !strcmp(key, "icmp-id")) {
		if (num(v, 65535, &n) < 0) {
			snprintf(err, errlen, "%s: '%s' is not a number from 0 to 65535", key, v);
			return -1;
		}
		if (!strcmp(key, "sport")) {
			f->sport = (uint16_t)n;
			f->have |= CF_SPORT;
		} else if (!strcmp(key, "dport")) {
			f->dport = (uint16_t)n;
			f->have |= CF_DPORT;
		} else if (!strcmp(key, "reply-sport")) {
			f->rsport = (uint16_t)n;
			f->have |= CF_RSPORT;
		} else if (!strcmp(key, "reply-dport")) {
			f->rdport = (uint16_t)n;
			f->have |= CF_RDPORT;
		} else if (!strcmp(key, "zone")) {
			f->zone = (uint16_t)n;
			f->have |= CF_ZONE;
		} else {
			f->icmp_id = (uint16_t)n;
			f->have |= CF_ICMP_ID;
		}
		return 0;
	}
	if (!strcmp(key, "icmp-type") || !strcmp(key, "icmp-code")) {
		if (num(v, 255, &n) < 0) {
			snprintf(err, errlen, "%s: '%s' is not a number from 0 to 255", key, v);
			return -1;
		}
		if (!strcmp(key, "icmp-type")) {
			f->icmp_type = (uint8_t)n;
			f->have |= CF_ICMP_TYPE;
		} else {
			f->icmp_code = (uint8_t)n;
			f->have |= CF_ICMP_CODE;
		}
		return 0;
	}
	if (!strcmp(key, "state")) {
		/* resolved against the protocol in ctl_filter_check; kept as a
		 * number of the first protocol that has the name, or 255 */
		static const uint8_t with_states[] = { IPPROTO_TCP, IPPROTO_SCTP };

		for (size_t p = 0; p < sizeof(with_states); p++)
			for (unsigned s = 0; s < 32; s++) {
				const char *name = ct_l4_state_name(with_states[p], (uint8_t)s);

				if (name && !strcasecmp(name, v) &&
				    (!(f->have & CF_L4) || f->l4 == with_states[p])) {
					f->state = (uint8_t)s;
					f->have |= CF_STATE;
					return 0;
				}
			}
		snprintf(err, errlen, "state: '%s' is not a TCP or SCTP state (ESTABLISHED, "
			 "SYN_SENT, TIME_WAIT, ...)", v);
		return -1;
	}
	if (!strcmp(key, "mark")) {
		const char *slash = strchr(v, '/');
		char buf[32];
		unsigned long m = 0xffffffffu;

		if (strlen(v) >= sizeof(buf))
			goto badmark;
		memcpy(buf, v, strlen(v) + 1);
		if (slash) {
			buf[slash - v] = 0;
			if (num(slash + 1, 0xffffffffu, &m) < 0)
				goto badmark;
		}
		if (num(buf, 0xffffffffu, &n) < 0)
			goto badmark;
		f->mark = (uint32_t)n;
		f->mark_mask = (uint32_t)m;
		f->have |= CF_MARK;
		return 0;
badmark:
		snprintf(err, errlen, "mark: '%s' is not MARK or MARK/MASK (decimal or 0x hex, "
			 "32 bits)", v);
		return -1;
	}
	if (!strcmp(key, "status")) {
		if (parse_status(f, v, err, errlen) < 0)
			return -1;
		f->have |= CF_STATUS;
		return 0;
	}
	if (!strcmp(key, "nat"))
		return parse_nat(f, v, err, errlen);
	snprintf(err, errlen, "'%s' is not a filter (family, proto, src, dst, reply-src, "
		 "reply-dst, sport, dport, reply-sport, reply-dport, state, zone, mark, status, "
		 "icmp-type, icmp-code, icmp-id, nat)", key);
	return -1;
}

int ctl_filter_check(const struct ctl_filter *f, char *err, size_t errlen)
{
	const struct cf_addr *as[] = { &f->src, &f->dst, &f->rsrc, &f->rdst };
	const uint32_t bits[] = { CF_SRC, CF_DST, CF_RSRC, CF_RDST };
	uint8_t l3 = (f->have & CF_L3) ? f->l3 : 0;

	if ((f->have & (CF_SPORT | CF_DPORT | CF_RSPORT | CF_RDPORT)) &&
	    (!(f->have & CF_L4) || !has_ports(f->l4))) {
		snprintf(err, errlen, "port filters need a protocol with ports first "
			 "(-p tcp, udp, udplite, sctp or dccp)");
		return -1;
	}
	if ((f->have & CF_STATE) &&
	    (!(f->have & CF_L4) || (f->l4 != IPPROTO_TCP && f->l4 != IPPROTO_SCTP))) {
		snprintf(err, errlen, "--state needs a protocol with states first (-p tcp or "
			 "-p sctp)");
		return -1;
	}
	if ((f->have & CF_STATE) && !ct_l4_state_name(f->l4, f->state)) {
		snprintf(err, errlen, "--state: not a state of this protocol");
		return -1;
	}
	if ((f->have & (CF_ICMP_TYPE | CF_ICMP_CODE | CF_ICMP_ID)) &&
	    (!(f->have & CF_L4) || !is_icmp(f->l4))) {
		snprintf(err, errlen, "ICMP filters need -p icmp or -p icmpv6 first");
		return -1;
	}
	for (int i = 0; i < 4; i++) {
		if (!(f->have & bits[i]))
			continue;
		if (l3 && as[i]->l3 != l3) {
			snprintf(err, errlen, "addresses of two families (IPv4 and IPv6) in one "
				 "filter: nothing can match");
			return -1;
		}
		l3 = as[i]->l3;
	}
	return 0;
}

static bool addr_match(const struct cf_addr *a, const struct ct_tuple *t,
		       const union ct_addr *x)
{
	if (t->l3 != a->l3)
		return false;
	for (int i = 0; i < 4; i++)
		if ((x->ip6w[i] & a->mask.ip6w[i]) != a->a.ip6w[i])
			return false;
	return true;
}

bool ctl_filter_match(const struct ctl_filter *f, const struct ct_conn_info *ci)
{
	uint32_t h = f->have;

	if (!h)
		return true;
	if ((h & CF_L3) && ci->orig.l3 != f->l3)
		return false;
	if ((h & CF_L4) && ci->orig.l4 != f->l4)
		return false;
	if ((h & CF_SRC) && !addr_match(&f->src, &ci->orig, &ci->orig.src))
		return false;
	if ((h & CF_DST) && !addr_match(&f->dst, &ci->orig, &ci->orig.dst))
		return false;
	if ((h & CF_RSRC) && !addr_match(&f->rsrc, &ci->reply, &ci->reply.src))
		return false;
	if ((h & CF_RDST) && !addr_match(&f->rdst, &ci->reply, &ci->reply.dst))
		return false;
	if ((h & CF_SPORT) && ci->orig.sport != f->sport)
		return false;
	if ((h & CF_DPORT) && ci->orig.dport != f->dport)
		return false;
	if ((h & CF_RSPORT) && ci->reply.sport != f->rsport)
		return false;
	if ((h & CF_RDPORT) && ci->reply.dport != f->rdport)
		return false;
	if ((h & CF_STATE) && (!ci->state_name || ci->l4state != f->state))
		return false;
	if ((h & CF_ZONE) && ci->orig.zone != f->zone)
		return false;
	if ((h & CF_MARK) && (ci->mark & f->mark_mask) != f->mark)
		return false;
	if (h & CF_STATUS) {
		if ((ci->status & f->status) != f->status)
			return false;
		if (f->status_unreplied && (ci->status & CT_ST_SEEN_REPLY))
			return false;
	}
	if ((h & CF_ICMP_TYPE) && ct_tuple_icmp_type(&ci->orig) != f->icmp_type)
		return false;
	if ((h & CF_ICMP_CODE) && ct_tuple_icmp_code(&ci->orig) != f->icmp_code)
		return false;
	if ((h & CF_ICMP_ID) && ci->orig.sport != f->icmp_id)
		return false;
	if (h & CF_NAT) {
		/* conntrack's filter_nat: any wins, else each given */
		if (f->nat & CF_NAT_ANY) {
			if (!(ci->status & CT_ST_NAT_MASK))
				return false;
		} else if (((f->nat & CF_NAT_SRC) && !(ci->status & CT_ST_SRC_NAT)) ||
			   ((f->nat & CF_NAT_DST) && !(ci->status & CT_ST_DST_NAT))) {
			return false;
		}
	}
	return true;
}

static bool full_mask(const struct cf_addr *a)
{
	unsigned n = a->l3 == CT_L3_IPV6 ? 4 : 1;

	for (unsigned i = 0; i < n; i++)
		if (a->mask.ip6w[i] != 0xffffffffu)
			return false;
	return true;
}

int ctl_filter_tuple(const struct ctl_filter *f, struct ct_tuple *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	if (!(f->have & CF_L4) || !(f->have & CF_SRC) || !(f->have & CF_DST)) {
		snprintf(err, errlen, "a connection is named by -p PROTO -s SRC -d DST and its "
			 "ports (--sport --dport) or ICMP fields");
		return -1;
	}
	if (!full_mask(&f->src) || !full_mask(&f->dst)) {
		snprintf(err, errlen, "-s and -d name one address here, not a prefix");
		return -1;
	}
	t->l3 = f->src.l3;
	t->l4 = f->l4;
	t->src = f->src.a;
	t->dst = f->dst.a;
	t->zone = (f->have & CF_ZONE) ? f->zone : 0;
	if (has_ports(f->l4)) {
		if (!(f->have & CF_SPORT) || !(f->have & CF_DPORT)) {
			snprintf(err, errlen, "this protocol's connections are named with "
				 "--sport and --dport too");
			return -1;
		}
		t->sport = f->sport;
		t->dport = f->dport;
	} else if (is_icmp(f->l4)) {
		if (!(f->have & CF_ICMP_TYPE) || !(f->have & CF_ICMP_ID)) {
			snprintf(err, errlen, "ICMP connections are named with --icmp-type, "
				 "--icmp-code and --icmp-id too");
			return -1;
		}
		t->sport = f->icmp_id;
		t->dport = (uint16_t)(f->icmp_type << 8 | f->icmp_code);
	}
	return 0;
}
