/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_ctl_request.c - the control protocol's request parser (the only
 * code that reads what a daemon's clients send: tools/ctrack/daemon/
 * ctl_request.c) with arbitrary bytes as a request line.
 *
 * When a request parses, what the daemon does next with it runs too,
 * without a daemon: its filter is matched against a few entries of every
 * family and protocol, the tuple of get/delete is built from it, and an
 * entry and an event are formatted with its format and output flags into
 * a buffer of exactly FMT_LINE_MAX bytes (ASan catches a line that does
 * not fit).  Invariants checked: a parse either succeeds or says why with
 * one of its documented codes; a successful parse's filter passes
 * ctl_filter_check.  Seeds: fuzz/seeds/ctl_request/ (one request of each
 * command); scripts/run-fuzz.sh copies them into the corpus.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_request.h"

static struct ct_conn_info sample(int k)
{
	static const uint8_t l4[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP, IPPROTO_ICMPV6,
				      IPPROTO_SCTP, IPPROTO_GRE, 0 };
	struct ct_conn_info ci;

	memset(&ci, 0, sizeof(ci));
	ci.orig.l3 = k & 1 ? CT_L3_IPV6 : CT_L3_IPV4;
	ci.orig.l4 = l4[k % (int)sizeof(l4)];
	if (ci.orig.l3 == CT_L3_IPV4) {
		ci.orig.src.ip4 = htonl(0x0a000001u + (uint32_t)k);
		ci.orig.dst.ip4 = htonl(0xc0000201u);
	} else {
		ci.orig.src.ip6[0] = 0xfd;
		ci.orig.src.ip6[15] = (uint8_t)k;
		ci.orig.dst.ip6[0] = 0x20;
		ci.orig.dst.ip6[15] = 1;
	}
	ci.orig.sport = (uint16_t)(1000 + k);
	ci.orig.dport = ci.orig.l4 == IPPROTO_ICMP ? (uint16_t)(8 << 8) : 80;
	ci.orig.zone = (uint16_t)(k % 3);
	if (!ct_tuple_invert(&ci.orig, &ci.reply))
		ci.reply = ci.orig;
	ci.status = (uint32_t)(k * 5) & (CT_ST_SEEN_REPLY | CT_ST_ASSURED);
	ci.mark = (uint32_t)k * 0x11u;
	ci.l4state = (uint8_t)(k % 8);
	ci.state_name = ct_l4_state_name(ci.orig.l4, ci.l4state);
	ci.packets[0] = ci.bytes[1] = UINT64_MAX;
	ci.first_seen = 1;
	ci.expires = 3000000000ull;
	return ci;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_request r;
	char err[512];
	const char *code = NULL;

	if (size > CTL_REQUEST_MAX)
		return 0;
	if (ctl_request_parse((const char *)data, size, &r, err, sizeof(err), &code) < 0) {
		if (!code || !err[0] || (strcmp(code, "EPROTO") && strcmp(code, "EVERSION") &&
					 strcmp(code, "ENOSYS") && strcmp(code, "EINVAL")))
			abort();
		return 0;
	}
	if (ctl_filter_check(&r.filter, err, sizeof(err)) < 0)
		abort();
	{
		struct ct_tuple t;
		struct fmt_opts o;
		char *line = malloc(FMT_LINE_MAX);

		(void)ctl_filter_tuple(&r.filter, &t, err, sizeof(err));
		memset(&o, 0, sizeof(o));
		o.format = r.format;
		o.acct = true;
		o.id = r.id;
		o.ktimestamp = r.ktimestamp;
		o.delta_time = true;
		for (int k = 0; k < 14 && line; k++) {
			struct ct_conn_info ci = sample(k);
			struct ct_event ev;

			(void)ctl_filter_match(&r.filter, &ci);
			if (fmt_listing_line(line, &o, &ci, 1234567, 5000000000ull) > FMT_LINE_MAX)
				abort();
			memset(&ev, 0, sizeof(ev));
			ev.type = (enum ct_event_type)(k % 3);
			ev.what = 0xffffffffu;
			ev.destroy_cause = (enum ct_destroy_cause)(k % 9);
			ev.ts = 4000000000ull;
			ev.conn = ci;
			if (fmt_event_line(line, &o, &ev, ev.ts, r.stamp) > FMT_LINE_MAX)
				abort();
		}
		free(line);
	}
	return 0;
}
