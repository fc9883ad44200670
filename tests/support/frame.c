/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * frame.c - an Ethernet frame for a parsed packet (frame.h), for the
 * benchmarks that feed the parser and the tracker together, and the tests
 * that check a frame's way through both.
 */
#include <netinet/in.h>
#include <string.h>

#include "csum.h"
#include "frame.h"
#include "wire.h"

uint32_t ts_frame(uint8_t *f, const struct ct_packet *p, bool payload, uint32_t *wire)
{
	const struct ct_tuple *t = &p->tuple;
	uint8_t *ip = f + 14, *l4 = ip + 20;
	uint32_t hl = t->l4 == IPPROTO_TCP ? p->u.tcp.hdr_len : 8;
	uint32_t l4len = hl + p->payload_len;

	memset(f, 0, 14 + 20 + hl + (payload ? p->payload_len : 0));
	f[0] = 0x02;
	f[6] = 0x02;
	f[11] = 1;
	ts_put16(f + 12, 0x0800);
	ip[0] = 0x45;
	ts_put16(ip + 2, (uint16_t)(20 + l4len));
	ip[6] = 0x40;              /* DF */
	ip[8] = 64;
	ip[9] = t->l4;
	memcpy(ip + 12, &t->src.ip4, 4);
	memcpy(ip + 16, &t->dst.ip4, 4);
	ts_ip4_csum(ip);
	ts_put16(l4, t->sport);
	ts_put16(l4 + 2, t->dport);
	if (t->l4 == IPPROTO_TCP) {
		const struct ct_tcp_info *th = &p->u.tcp;

		ts_put32(l4 + 4, th->seq);
		ts_put32(l4 + 8, th->ack);
		l4[12] = (uint8_t)((hl / 4) << 4);
		l4[13] = th->flags;
		ts_put16(l4 + 14, th->window);
		if (hl > 20) {
			/* MSS, SACK permitted, window scale, padding */
			uint8_t *o = l4 + 20;
			o[0] = 2; o[1] = 4; ts_put16(o + 2, th->mss);
			o[4] = 4; o[5] = 2;
			o[6] = 1; o[7] = 3; o[8] = 3; o[9] = th->wscale;
			o[10] = 1; o[11] = 1;
		}
	} else {
		ts_put16(l4 + 4, (uint16_t)l4len);
	}
	/* the payload's zeros add nothing to the sum */
	if (payload)
		ts_l4_csum(ip, false, t->l4, l4, l4len);
	*wire = 14 + 20 + l4len;
	return payload ? *wire : 14 + 20 + hl;
}
