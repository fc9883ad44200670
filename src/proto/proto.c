/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * proto.c - from IP protocol number to tracker.
 *
 * A 256-entry map built at compile time; entries keep a one-byte index
 * (ct_conn.proto) rather than a pointer, so the core of an entry stays
 * within one cache line.  The maps are read by inline functions in
 * proto.h: finding a tracker is two loads on the packet path.
 */
#include <netinet/in.h>
#include <stddef.h>

#include "proto/proto.h"

const struct ct_proto *const ct_protos[CT_N_PROTOS] = {
	&ct_proto_generic, /* index 0: everything else */
	&ct_proto_tcp,
	&ct_proto_udp,
	&ct_proto_udplite,
	&ct_proto_icmp,
	&ct_proto_icmpv6,
	&ct_proto_sctp,
	&ct_proto_gre,
};

const uint8_t ct_proto_l4_index[256] = {
	[IPPROTO_TCP] = 1,
	[IPPROTO_UDP] = 2,
	[IPPROTO_UDPLITE] = 3,
	[IPPROTO_ICMP] = 4,
	[IPPROTO_ICMPV6] = 5,
	[IPPROTO_SCTP] = 6,
	[IPPROTO_GRE] = 7,
};

uint8_t ct_proto_index(const struct ct_proto *p)
{
	for (unsigned i = 0; i < CT_N_PROTOS; i++)
		if (ct_protos[i] == p)
			return (uint8_t)i;
	return 0;
}

const char *ct_l4_name(uint8_t l4)
{
	const struct ct_proto *p = ct_proto_find(l4);
	return p->name;
}

const char *ct_l4_state_name(uint8_t l4, uint8_t state)
{
	const struct ct_proto *p = ct_proto_find(l4);
	return p->state_name ? p->state_name(state) : NULL;
}

bool ct_proto_can_early_drop(const struct ct_conn *c)
{
	const struct ct_proto *p;
	uint32_t st = ct_conn_status(c);

	if (st & CT_ST_DYING)
		return false;
	if (!(st & CT_ST_ASSURED))
		return true;
	p = ct_proto_by_index(c->proto);
	return p->can_early_drop && p->can_early_drop(c);
}
