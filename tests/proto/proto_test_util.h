/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto_test_util.h - driving one tracker by hand, as the core would.
 *
 * Tests of the non-TCP trackers allocate an entry the way the table does
 * (the 40-byte core plus the tracker's private area plus, for IPv6, the
 * key's other 24 address bytes; 64-byte aligned, zeroed), build struct ct_packet by hand and call the tracker.  track()
 * plays the part of nf_conntrack_in around the tracker: it hands the
 * tracker the status bits as they were *before* the packet, and after an
 * accepted packet sets ASSURED when asked and then SEEN_REPLY for a packet
 * in the reply direction - the order the kernel uses (the protocol tracker
 * runs first, IPS_SEEN_REPLY is set after it returns NF_ACCEPT).
 */
#ifndef PROTO_TEST_UTIL_H
#define PROTO_TEST_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "base/conn.h"
#include "table/conn_key.h"
#include "proto/proto.h"
#include "support/tuple.h"
#include "ctrack/settings.h"
#include "ctrack/table.h"

#define SEC(x) ((ct_time_ns)((x) * 1000000000.0 + 0.5))

static inline struct ct_conn *conn_new(const struct ct_proto *p,
				       const struct ct_tuple *t)
{
	/* no extensions: an IPv6 key's tail follows the private area */
	size_t size = (sizeof(struct ct_conn) + p->priv_size +
		       ct_conn_key_extra(t->l3) + 63) & ~(size_t)63;
	struct ct_conn *c = aligned_alloc(64, size);

	if (!c)
		abort();
	memset(c, 0, size);
	c->proto = ct_proto_index(p);
	ct_conn_set_key(c, t);
	return c;
}

static inline struct ct_proto_out track(const struct ct_proto *p,
					struct ct_conn *c,
					const struct ct_settings *set,
					const struct ct_packet *pkt,
					enum ct_dir dir, bool is_new,
					ct_time_ns now)
{
	struct ct_proto_ctx ctx = {
		.pkt = pkt,
		.set = set,
		.now = now,
		.dir = dir,
		.is_new = is_new,
		.status = ct_conn_status(c),
	};
	struct ct_proto_out out;

	memset(&out, 0, sizeof(out));
	p->packet(c, &ctx, &out);
	if (out.verdict == CT_PV_ACCEPT || out.verdict == CT_PV_IGNORE) {
		if (out.set_assured)
			ct_conn_test_and_set(c, CT_ST_ASSURED);
		if (dir == CT_DIR_REPLY)
			ct_conn_test_and_set(c, CT_ST_SEEN_REPLY);
	}
	return out;
}
/* A packet carrying @t (the direction it travels in). */
#endif /* PROTO_TEST_UTIL_H */
