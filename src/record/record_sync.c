/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * record_sync.c - the record a commit makes of a conntrackd peer's
 * connection.
 *
 * `conntrackd -c` writes its external cache into the kernel through
 * nl_create_conntrack() (conntrack-tools 1.4.7, src/netlink.c): the
 * message's attributes, the status without IPS_EXPECTED, the reply tuple
 * set up from the NAT attributes, the timeout, and - unless
 * TCPWindowTracking is on - BE_LIBERAL forced into both directions' TCP
 * flags (ctd_force_tcp_be_liberal).  The kernel's ctnetlink then makes
 * the entry: only the status bits userspace may change are taken
 * (SEEN_REPLY, ASSURED; CONFIRMED comes with the insert, the NAT bits
 * from the NAT attributes, the rest is ignored - IPS_UNCHANGEABLE_MASK),
 * and the TCP state, flags and scales through nlattr_to_tcp, which keeps
 * the scales only when both directions' flags have WINDOW_SCALE - and
 * conntrackd never sends flags with TCPWindowTracking on, so the scales it
 * sends are dropped (docs/sync.md).  A message with NAT attributes is a
 * NATed connection: libnetfilter_conntrack builds CTA_NAT_SRC / CTA_NAT_DST
 * from them and the reply tuple from them (NFCT_SOPT_SETUP_REPLY), and
 * ctnetlink_setup_nat sets both manipulations up (the one without an
 * attribute as a null binding) - so both DONE bits, and SRC_NAT / DST_NAT
 * where the reply tuple differs on that side (ct_nat_binding_from_tuples,
 * as nf_nat_setup_info sets them).  ct_record_import with
 * CT_RECORD_F_COMMIT does the kernel's half; this is conntrackd's.
 *
 * ctrack tracks protocols it has no tracker for (DCCP, ...) without
 * ports, as it parses them: a peer's PORT attribute for one is dropped, so
 * that the committed entry is the one ctrack's next packet looks for.
 */
#include <netinet/in.h>
#include <string.h>

#include "ctrack/nat.h"
#include "ctrack/sync.h"
#include "record/record_priv.h"


static bool ported(uint8_t l4)
{
	return l4 == IPPROTO_TCP || l4 == IPPROTO_UDP || l4 == IPPROTO_UDPLITE ||
	       l4 == IPPROTO_SCTP || l4 == IPPROTO_GRE || l4 == IPPROTO_ICMP ||
	       l4 == IPPROTO_ICMPV6;
}

bool ct_record_from_sync(const struct ct_sync_conn *c, uint32_t timeout_s,
			 bool window_tracking, struct ct_record *out)
{
	struct ct_tuple inv;
	uint8_t l4 = c->orig.l4;

	memset(out, 0, sizeof(*out));
	out->version = CT_RECORD_VERSION;
	out->orig = c->orig;
	if (!ported(l4)) {
		out->orig.sport = 0;
		out->orig.dport = 0;
	}
	if (!ct_sync_conn_reply(c, &out->reply) || !ct_tuple_invert(&out->orig, &inv))
		return false;
	if (!ported(l4)) {
		out->reply.sport = 0;
		out->reply.dport = 0;
	}
	out->status = (c->has & CT_SYNC_HAS_STATUS ? c->status : 0) &
		      (CT_ST_SEEN_REPLY | CT_ST_ASSURED);
	out->status |= CT_ST_CONFIRMED;
	if (c->has & (CT_SYNC_HAS_SNAT | CT_SYNC_HAS_SPAT | CT_SYNC_HAS_DNAT |
		      CT_SYNC_HAS_DPAT)) {
		struct ct_nat_binding b;

		ct_nat_binding_from_tuples(&b, &out->orig, &out->reply);
		out->status |= CT_ST_NAT_DONE_MASK | (b.status & CT_NAT_S_SRC ? CT_ST_SRC_NAT : 0) |
			       (b.status & CT_NAT_S_DST ? CT_ST_DST_NAT : 0);
	}
	out->mark = c->has & CT_SYNC_HAS_MARK ? c->mark : 0;
	if (c->has & CT_SYNC_HAS_LABELS) {
		out->has |= CT_RECORD_HAS_LABELS;
		memcpy(out->labels, c->labels, sizeof(out->labels));
	}
	out->timeout_ns = (uint64_t)timeout_s * 1000000000ull;
	if (l4 == IPPROTO_TCP) {
		struct ct_record_tcp *t = &out->proto.tcp;

		out->l4state = c->has & CT_SYNC_HAS_STATE ? c->l4state : 0;
		for (unsigned d = 0; d < 2; d++) {
			t->dir[d].flags = window_tracking ? 0 : CT_RECORD_TCPF_BE_LIBERAL;
			if (c->has & CT_SYNC_HAS_WSCALE)
				t->dir[d].td_scale = c->wscale[d];
		}
	} else if (l4 == IPPROTO_SCTP) {
		out->l4state = c->has & CT_SYNC_HAS_STATE ? c->l4state : 0;
		if (c->has & CT_SYNC_HAS_SCTP_VTAG) {
			out->proto.sctp.vtag[0] = c->sctp_vtag[0];
			out->proto.sctp.vtag[1] = c->sctp_vtag[1];
		}
	}
	return true;
}
