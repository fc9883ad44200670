/*
 * proto.c - from IP protocol number to tracker.
 *
 * A 256-entry map built at compile time; entries keep a one-byte index
 * (ct_conn.proto) rather than a pointer, so the core of an entry stays
 * within one cache line.
 */
#include <netinet/in.h>
#include <stddef.h>

#include "proto.h"

static const struct ct_proto *const protos[] = {
	&ct_proto_generic, /* index 0: everything else */
	&ct_proto_tcp,
	&ct_proto_udp,
	&ct_proto_udplite,
	&ct_proto_icmp,
	&ct_proto_icmpv6,
	&ct_proto_sctp,
	&ct_proto_gre,
};

#define N_PROTOS (sizeof(protos) / sizeof(protos[0]))

static uint8_t index_of_l4(uint8_t l4)
{
	switch (l4) {
	case IPPROTO_TCP: return 1;
	case IPPROTO_UDP: return 2;
	case IPPROTO_UDPLITE: return 3;
	case IPPROTO_ICMP: return 4;
	case IPPROTO_ICMPV6: return 5;
	case IPPROTO_SCTP: return 6;
	case IPPROTO_GRE: return 7;
	default: return 0;
	}
}

const struct ct_proto *ct_proto_find(uint8_t l4)
{
	return protos[index_of_l4(l4)];
}

const struct ct_proto *ct_proto_by_index(uint8_t idx)
{
	return idx < N_PROTOS ? protos[idx] : &ct_proto_generic;
}

uint8_t ct_proto_index(const struct ct_proto *p)
{
	for (unsigned i = 0; i < N_PROTOS; i++)
		if (protos[i] == p)
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
