/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * settings.c - the kernel's sysctl names, mapped onto struct ct_settings.
 *
 * One table lists every knob ctrack models: its kernel name, where it lives
 * in the struct, its width and its range.  A second list names the real
 * kernel knobs that ctrack accepts and ignores (helpers, DCCP, logging,
 * read-only counters) so that a `sysctl -a` dump of a real host can be fed
 * back unchanged.  Values are parsed strictly: decimal, no trailing junk,
 * within range, or the caller gets an error naming what is wrong.
 *
 * The collector's policy has its defaults here too (ct_gc_policy_default):
 * a table takes them at creation, before any stage runs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/gc.h"
#include "ctrack/settings.h"

enum knob_kind { K_BOOL, K_U8, K_U32, K_TIMEOUT };

struct knob {
	const char *name;       /* without "net.netfilter." */
	size_t off;
	enum knob_kind kind;
	uint32_t min, max;
	const char *range;      /* the out-of-range message, when the kind's
				 * default would not say the right range */
};

#define F(field) offsetof(struct ct_settings, field)
#define TCP_TO(n, i) { "nf_conntrack_tcp_timeout_" n, F(tcp_timeouts) + (i) * sizeof(uint32_t), K_TIMEOUT, 0, CT_SETTINGS_MAX_TIMEOUT_S, NULL }
#define SCTP_TO(n, i) { "nf_conntrack_sctp_timeout_" n, F(sctp_timeouts) + (i) * sizeof(uint32_t), K_TIMEOUT, 0, CT_SETTINGS_MAX_TIMEOUT_S, NULL }
#define TO(n, field) { n, F(field), K_TIMEOUT, 0, CT_SETTINGS_MAX_TIMEOUT_S, NULL }

static const struct knob knobs[] = {
	{ "nf_conntrack_max", F(max), K_U32, 0, UINT32_MAX, NULL },
	{ "nf_conntrack_buckets", F(buckets), K_U32, 1, 1u << 30,
	  "is out of range (1 to 1073741824)" },
	{ "nf_conntrack_acct", F(acct), K_BOOL, 0, 1, NULL },
	{ "nf_conntrack_checksum", F(checksum), K_BOOL, 0, 1, NULL },
	{ "nf_conntrack_timestamp", F(timestamp), K_BOOL, 0, 1, NULL },
	{ "nf_conntrack_events", F(events), K_U8, 0, 2, "is out of range (0 to 2)" },
	{ "nf_conntrack_tcp_loose", F(tcp_loose), K_BOOL, 0, 1, NULL },
	{ "nf_conntrack_tcp_be_liberal", F(tcp_be_liberal), K_BOOL, 0, 1, NULL },
	{ "nf_conntrack_tcp_ignore_invalid_rst", F(tcp_ignore_invalid_rst), K_BOOL, 0, 1, NULL },
	{ "nf_conntrack_tcp_max_retrans", F(tcp_max_retrans), K_U8, 0, 255,
	  "is out of range (0 to 255)" },
	TCP_TO("syn_sent", CT_TCP_TO_SYN_SENT),
	TCP_TO("syn_recv", CT_TCP_TO_SYN_RECV),
	TCP_TO("established", CT_TCP_TO_ESTABLISHED),
	TCP_TO("fin_wait", CT_TCP_TO_FIN_WAIT),
	TCP_TO("close_wait", CT_TCP_TO_CLOSE_WAIT),
	TCP_TO("last_ack", CT_TCP_TO_LAST_ACK),
	TCP_TO("time_wait", CT_TCP_TO_TIME_WAIT),
	TCP_TO("close", CT_TCP_TO_CLOSE),
	TCP_TO("max_retrans", CT_TCP_TO_RETRANS),
	TCP_TO("unacknowledged", CT_TCP_TO_UNACK),
	TO("nf_conntrack_udp_timeout", udp_timeout),
	TO("nf_conntrack_udp_timeout_stream", udp_timeout_stream),
	TO("nf_conntrack_icmp_timeout", icmp_timeout),
	TO("nf_conntrack_icmpv6_timeout", icmpv6_timeout),
	SCTP_TO("closed", CT_SCTP_TO_CLOSED),
	SCTP_TO("cookie_wait", CT_SCTP_TO_COOKIE_WAIT),
	SCTP_TO("cookie_echoed", CT_SCTP_TO_COOKIE_ECHOED),
	SCTP_TO("established", CT_SCTP_TO_ESTABLISHED),
	SCTP_TO("shutdown_sent", CT_SCTP_TO_SHUTDOWN_SENT),
	SCTP_TO("shutdown_recd", CT_SCTP_TO_SHUTDOWN_RECD),
	SCTP_TO("shutdown_ack_sent", CT_SCTP_TO_SHUTDOWN_ACK_SENT),
	SCTP_TO("heartbeat_sent", CT_SCTP_TO_HEARTBEAT_SENT),
	TO("nf_conntrack_gre_timeout", gre_timeout),
	TO("nf_conntrack_gre_timeout_stream", gre_timeout_stream),
	TO("nf_conntrack_generic_timeout", generic_timeout),
	TO("nf_conntrack_frag6_timeout", frag_timeout),
	{ "ctrack_router", F(router), K_BOOL, 0, 1, NULL },
	{ "nf_conntrack_frag6_high_thresh", F(frag_high_thresh), K_U32, 0, UINT32_MAX, NULL },
};

/* Real kernel knobs that are accepted and have no effect here. */
static const char *const ignored[] = {
	"nf_conntrack_log_invalid",
	"nf_conntrack_helper",
	"nf_conntrack_expect_max",
	"nf_conntrack_frag6_low_thresh",
	"nf_conntrack_tcp_timeout_syn_sent2",
	"nf_conntrack_dccp_loose",
	"nf_conntrack_dccp_timeout_request",
	"nf_conntrack_dccp_timeout_respond",
	"nf_conntrack_dccp_timeout_partopen",
	"nf_conntrack_dccp_timeout_open",
	"nf_conntrack_dccp_timeout_closereq",
	"nf_conntrack_dccp_timeout_closing",
	"nf_conntrack_dccp_timeout_timewait",
	"nf_conntrack_udplite_timeout",
	"nf_conntrack_udplite_timeout_stream",
	"nf_conntrack_sctp_timeout_heartbeat_acked",
	"nf_flowtable_tcp_timeout",
	"nf_flowtable_udp_timeout",
	"nf_hooks_lwtunnel",
	"nf_log_all_netns",
	NULL,
};

/* Read-only kernel knobs (they describe a host, they cannot be set). */
static const char *const read_only[] = {
	"nf_conntrack_count",
	"nf_conntrack_expect_count",
	NULL,
};

void ct_settings_default(struct ct_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->max = 262144;
	s->buckets = 65536;
	s->acct = 0;
	s->checksum = 1;
	s->timestamp = 0;
	s->events = 1;
	s->tcp_loose = 1;
	s->tcp_be_liberal = 0;
	s->tcp_ignore_invalid_rst = 0;
	s->tcp_max_retrans = 3;
	s->tcp_timeouts[CT_TCP_TO_SYN_SENT] = 120;
	s->tcp_timeouts[CT_TCP_TO_SYN_RECV] = 60;
	s->tcp_timeouts[CT_TCP_TO_ESTABLISHED] = 432000;
	s->tcp_timeouts[CT_TCP_TO_FIN_WAIT] = 120;
	s->tcp_timeouts[CT_TCP_TO_CLOSE_WAIT] = 60;
	s->tcp_timeouts[CT_TCP_TO_LAST_ACK] = 30;
	s->tcp_timeouts[CT_TCP_TO_TIME_WAIT] = 120;
	s->tcp_timeouts[CT_TCP_TO_CLOSE] = 10;
	s->tcp_timeouts[CT_TCP_TO_SYN_SENT2] = 120;
	s->tcp_timeouts[CT_TCP_TO_RETRANS] = 300;
	s->tcp_timeouts[CT_TCP_TO_UNACK] = 300;
	s->udp_timeout = 30;
	s->udp_timeout_stream = 120;
	s->icmp_timeout = 30;
	s->icmpv6_timeout = 30;
	s->sctp_timeouts[CT_SCTP_TO_CLOSED] = 10;
	s->sctp_timeouts[CT_SCTP_TO_COOKIE_WAIT] = 3;
	s->sctp_timeouts[CT_SCTP_TO_COOKIE_ECHOED] = 3;
	s->sctp_timeouts[CT_SCTP_TO_ESTABLISHED] = 210;
	s->sctp_timeouts[CT_SCTP_TO_SHUTDOWN_SENT] = 3;
	s->sctp_timeouts[CT_SCTP_TO_SHUTDOWN_RECD] = 3;
	s->sctp_timeouts[CT_SCTP_TO_SHUTDOWN_ACK_SENT] = 3;
	s->sctp_timeouts[CT_SCTP_TO_HEARTBEAT_SENT] = 30;
	s->gre_timeout = 30;
	s->gre_timeout_stream = 180;
	s->generic_timeout = 600;
	s->frag_timeout = 60;
	s->frag_high_thresh = 4 * 1024 * 1024;
}

uint32_t ct_settings_min_timeout(const struct ct_settings *s)
{
	uint32_t m = s->udp_timeout;

#define MIN_OF(x) do { if ((x) < m) m = (x); } while (0)
	for (unsigned i = 0; i < CT_TCP_TO_MAX; i++)
		MIN_OF(s->tcp_timeouts[i]);
	for (unsigned i = 0; i < CT_SCTP_TO_MAX; i++)
		MIN_OF(s->sctp_timeouts[i]);
	MIN_OF(s->udp_timeout_stream);
	MIN_OF(s->icmp_timeout);
	MIN_OF(s->icmpv6_timeout);
	MIN_OF(s->gre_timeout);
	MIN_OF(s->gre_timeout_stream);
	MIN_OF(s->generic_timeout);
#undef MIN_OF
	return m;
}

/* Strip "net.netfilter." or "net/netfilter/" and map '/' to '.'. */
static void canon_name(const char *in, char *out, size_t size)
{
	size_t i = 0;

	if (!strncmp(in, "net.netfilter.", 14) || !strncmp(in, "net/netfilter/", 14))
		in += 14;
	for (; *in && i + 1 < size; in++, i++)
		out[i] = (*in == '/') ? '.' : *in;
	out[i] = '\0';
}

static const struct knob *find_knob(const char *name)
{
	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
		if (!strcmp(knobs[i].name, name))
			return &knobs[i];
	return NULL;
}

static bool in_list(const char *const *list, const char *name)
{
	for (; *list; list++)
		if (!strcmp(*list, name))
			return true;
	return false;
}

int ct_settings_set(struct ct_settings *s, const char *name, const char *value,
		    const char **err_msg)
{
	char n[128];
	const struct knob *k;
	unsigned long long v;
	char *end;

	if (err_msg)
		*err_msg = NULL;
	canon_name(name, n, sizeof(n));
	k = find_knob(n);
	if (!k) {
		/* logging backends (nf_log.<family>) and flowtable knobs are real
		 * netfilter sysctls with nothing to model here */
		if (in_list(ignored, n) || !strncmp(n, "nf_log.", 7) ||
		    !strncmp(n, "nf_flowtable_", 13))
			return CT_SETTINGS_IGNORED;
		if (in_list(read_only, n)) {
			if (err_msg)
				*err_msg = "is read-only in the kernel and cannot be set";
			return CT_SETTINGS_READ_ONLY;
		}
		if (err_msg)
			*err_msg = "is not a conntrack setting ctrack knows";
		return CT_SETTINGS_UNKNOWN;
	}
	while (*value == ' ' || *value == '\t')
		value++;
	if (*value < '0' || *value > '9') {
		if (err_msg)
			*err_msg = "needs a non-negative decimal number";
		return CT_SETTINGS_BAD_VALUE;
	}
	errno = 0;
	v = strtoull(value, &end, 10);
	while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r')
		end++;
	if (errno || *end) {
		if (err_msg)
			*err_msg = "needs a non-negative decimal number";
		return CT_SETTINGS_BAD_VALUE;
	}
	if (v < k->min || v > k->max) {
		if (err_msg)
			*err_msg = k->range ? k->range
				 : k->kind == K_BOOL ? "must be 0 or 1"
				 : k->kind == K_TIMEOUT ? "is out of range (0 to 315360000 seconds)"
				 : k->kind == K_U8 ? "is out of range for this setting"
				 : "is out of range (0 to 4294967295)";
		return CT_SETTINGS_BAD_VALUE;
	}
	switch (k->kind) {
	case K_BOOL:
	case K_U8:
		*(uint8_t *)((char *)s + k->off) = (uint8_t)v;
		break;
	case K_U32:
	case K_TIMEOUT:
		*(uint32_t *)((char *)s + k->off) = (uint32_t)v;
		break;
	}
	if (k->off == F(tcp_timeouts) + CT_TCP_TO_SYN_SENT * sizeof(uint32_t))
		s->tcp_timeouts[CT_TCP_TO_SYN_SENT2] = (uint32_t)v;
	return CT_SETTINGS_OK;
}

int ct_settings_get(const struct ct_settings *s, const char *name, char *buf,
		    unsigned size)
{
	char n[128];
	const struct knob *k;
	uint32_t v;

	canon_name(name, n, sizeof(n));
	k = find_knob(n);
	if (!k)
		return CT_SETTINGS_UNKNOWN;
	if (k->kind == K_BOOL || k->kind == K_U8)
		v = *(const uint8_t *)((const char *)s + k->off);
	else
		v = *(const uint32_t *)((const char *)s + k->off);
	snprintf(buf, size, "%" PRIu32, v);
	return 0;
}

const char *ct_settings_name(unsigned i)
{
	return i < sizeof(knobs) / sizeof(knobs[0]) ? knobs[i].name : NULL;
}

void ct_gc_policy_default(struct ct_gc_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->lock = CT_GC_LOCK_WHEEL;
	p->yield = CT_GC_YIELD_THROTTLED;
	p->yield_ns = 1000000;
	p->min_interval_ns = 10000000;
	p->max_interval_ns = 1000000000;
}
