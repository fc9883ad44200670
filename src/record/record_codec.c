/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * record_codec.c - a record as bytes, and back (encoding version 1).
 *
 * Fixed-width little-endian fields, addresses in network order, and
 * sections only for what the record holds, so that the common entry
 * (IPv4 TCP with counters and times) takes 152 bytes rather than
 * sizeof(struct ct_record).  Every length is explicit and checked on the
 * way in: the record's own, and the protocol section's against what its
 * protocol takes; a decoded record then goes through ct_record_check like
 * any other.  docs/record.md draws the layout:
 *
 *   0  u16 length of the whole record     24  u64 timeout_ns
 *   2  u8  version (1)                    32  u64 id
 *   3  u8  has (CT_RECORD_HAS_*)          40  src, dst (4 + 4 or 16 + 16)
 *   4  u8  l3, u8 l4, u16 zone            then, in this order:
 *   8  u16 sport, u16 dport                 protocol: u8 length, its bytes
 *  12  u32 status                           NAT:    reply src, dst, u16
 *  16  u32 mark                                     sport, u16 dport
 *  20  u8  l4state, 3 bytes 0                 protocol: u8 length, bytes
 *                                           ACCT:   4 x u64
 *                                           TSTAMP: 2 x u64
 *                                           LABELS: 16 bytes
 *
 * The reply tuple is written only for a NATed entry (status IPS_SRC_NAT
 * or IPS_DST_NAT: the NAT section, right after the original's
 * addresses); otherwise it is the inverted original, rebuilt on the way
 * in.  The status word says whether the section is there, so the length
 * check covers it as it covers the others.  A reader older than NAT in
 * records refuses such a record (its length is not what it computes, or
 * the NAT bits); the state file says so first with its version
 * (state_file.c).
 */
#include <netinet/in.h>
#include <string.h>

#include "record/record_priv.h"

#define ENC_CORE 40u

size_t ct_record_proto_enc_size(uint8_t l4)
{
	switch (l4) {
	case IPPROTO_TCP:
		return 2 * 18 + 12 + 2 + 5;     /* 55 */
	case IPPROTO_UDP:
		return 8;
	case IPPROTO_SCTP:
		return 12;
	case IPPROTO_GRE:
		return 8;
	default:
		return 0;
	}
}

static size_t addr_len(uint8_t l3)
{
	return l3 == CT_L3_IPV4 ? 4 : 16;
}

static bool has_reply(const struct ct_record *r)
{
	return (r->status & CT_ST_NAT_MASK) != 0;
}

static size_t enc_size(const struct ct_record *r)
{
	size_t n = ENC_CORE + 2 * addr_len(r->orig.l3);
	size_t ps = ct_record_proto_enc_size(r->orig.l4);

	if (has_reply(r))
		n += 2 * addr_len(r->orig.l3) + 4;
	if (ps)
		n += 1 + ps;
	if (r->has & CT_RECORD_HAS_ACCT)
		n += 32;
	if (r->has & CT_RECORD_HAS_TSTAMP)
		n += 16;
	if (r->has & CT_RECORD_HAS_LABELS)
		n += 16;
	return n;
}

static uint8_t *put_proto(uint8_t *p, const struct ct_record *r)
{
	const union ct_record_proto *u = &r->proto;

	switch (r->orig.l4) {
	case IPPROTO_TCP:
		for (unsigned d = 0; d < 2; d++) {
			const struct ct_record_tcp_dir *x = &u->tcp.dir[d];

			rec_put32(p, x->td_end);
			rec_put32(p + 4, x->td_maxend);
			rec_put32(p + 8, x->td_maxwin);
			rec_put32(p + 12, x->td_maxack);
			p[16] = x->td_scale;
			p[17] = x->flags;
			p += 18;
		}
		rec_put32(p, u->tcp.last_seq);
		rec_put32(p + 4, u->tcp.last_ack);
		rec_put32(p + 8, u->tcp.last_end);
		rec_put16(p + 12, u->tcp.last_win);
		p[14] = u->tcp.last_index;
		p[15] = u->tcp.last_dir;
		p[16] = u->tcp.last_wscale;
		p[17] = u->tcp.last_flags;
		p[18] = u->tcp.retrans;
		return p + 19;
	case IPPROTO_UDP:
		rec_put64(p, u->udp.age_ns);
		return p + 8;
	case IPPROTO_SCTP:
		rec_put32(p, u->sctp.vtag[0]);
		rec_put32(p + 4, u->sctp.vtag[1]);
		p[8] = u->sctp.init[0];
		p[9] = u->sctp.init[1];
		p[10] = u->sctp.heartbeat_vtag_failed;
		p[11] = u->sctp.last_dir;
		return p + 12;
	case IPPROTO_GRE:
		rec_put32(p, u->gre.timeout_s);
		rec_put32(p + 4, u->gre.stream_timeout_s);
		return p + 8;
	default:
		return p;
	}
}

static const uint8_t *get_proto(const uint8_t *p, struct ct_record *r)
{
	union ct_record_proto *u = &r->proto;

	switch (r->orig.l4) {
	case IPPROTO_TCP:
		for (unsigned d = 0; d < 2; d++) {
			struct ct_record_tcp_dir *x = &u->tcp.dir[d];

			x->td_end = rec_get32(p);
			x->td_maxend = rec_get32(p + 4);
			x->td_maxwin = rec_get32(p + 8);
			x->td_maxack = rec_get32(p + 12);
			x->td_scale = p[16];
			x->flags = p[17];
			p += 18;
		}
		u->tcp.last_seq = rec_get32(p);
		u->tcp.last_ack = rec_get32(p + 4);
		u->tcp.last_end = rec_get32(p + 8);
		u->tcp.last_win = rec_get16(p + 12);
		u->tcp.last_index = p[14];
		u->tcp.last_dir = p[15];
		u->tcp.last_wscale = p[16];
		u->tcp.last_flags = p[17];
		u->tcp.retrans = p[18];
		return p + 19;
	case IPPROTO_UDP:
		u->udp.age_ns = rec_get64(p);
		return p + 8;
	case IPPROTO_SCTP:
		u->sctp.vtag[0] = rec_get32(p);
		u->sctp.vtag[1] = rec_get32(p + 4);
		u->sctp.init[0] = p[8];
		u->sctp.init[1] = p[9];
		u->sctp.heartbeat_vtag_failed = p[10];
		u->sctp.last_dir = p[11];
		return p + 12;
	case IPPROTO_GRE:
		u->gre.timeout_s = rec_get32(p);
		u->gre.stream_timeout_s = rec_get32(p + 4);
		return p + 8;
	default:
		return p;
	}
}

static enum ct_record_reason fail(enum ct_record_reason *why, enum ct_record_reason r)
{
	if (why)
		*why = r;
	return r;
}

size_t ct_record_encode(const struct ct_record *r, uint8_t *buf, size_t cap,
			enum ct_record_reason *why)
{
	enum ct_record_reason chk;
	size_t n, al, ps;
	uint8_t *p = buf;

	if (why)
		*why = CT_RECORD_OK;
	if ((chk = ct_record_check(r)) != CT_RECORD_OK) {
		fail(why, chk);
		return 0;
	}
	n = enc_size(r);
	if (n > cap) {
		fail(why, CT_RECORD_R_ENCODING);
		return 0;
	}
	al = addr_len(r->orig.l3);
	memset(p, 0, ENC_CORE);
	rec_put16(p, (uint16_t)n);
	p[2] = CT_RECORD_VERSION;
	p[3] = r->has;
	p[4] = r->orig.l3;
	p[5] = r->orig.l4;
	rec_put16(p + 6, r->orig.zone);
	rec_put16(p + 8, r->orig.sport);
	rec_put16(p + 10, r->orig.dport);
	rec_put32(p + 12, r->status);
	rec_put32(p + 16, r->mark);
	p[20] = r->l4state;
	rec_put64(p + 24, r->timeout_ns);
	rec_put64(p + 32, r->id);
	p += ENC_CORE;
	memcpy(p, r->orig.src.ip6, al);
	memcpy(p + al, r->orig.dst.ip6, al);
	p += 2 * al;
	if (has_reply(r)) {
		memcpy(p, r->reply.src.ip6, al);
		memcpy(p + al, r->reply.dst.ip6, al);
		rec_put16(p + 2 * al, r->reply.sport);
		rec_put16(p + 2 * al + 2, r->reply.dport);
		p += 2 * al + 4;
	}
	if ((ps = ct_record_proto_enc_size(r->orig.l4)) != 0) {
		*p++ = (uint8_t)ps;
		p = put_proto(p, r);
	}
	if (r->has & CT_RECORD_HAS_ACCT) {
		rec_put64(p, r->packets[0]);
		rec_put64(p + 8, r->packets[1]);
		rec_put64(p + 16, r->bytes[0]);
		rec_put64(p + 24, r->bytes[1]);
		p += 32;
	}
	if (r->has & CT_RECORD_HAS_TSTAMP) {
		rec_put64(p, r->first_seen_ago_ns);
		rec_put64(p + 8, r->last_seen_ago_ns);
		p += 16;
	}
	if (r->has & CT_RECORD_HAS_LABELS) {
		memcpy(p, r->labels, 16);
		p += 16;
	}
	return (size_t)(p - buf);
}

size_t ct_record_decode(const uint8_t *buf, size_t len, struct ct_record *r,
			enum ct_record_reason *why)
{
	enum ct_record_reason chk;
	const uint8_t *p = buf;
	size_t n, al, ps;

	if (why)
		*why = CT_RECORD_OK;
	memset(r, 0, sizeof(*r));
	if (len < 4) {
		fail(why, CT_RECORD_R_ENCODING);
		return 0;
	}
	n = rec_get16(p);
	if (p[2] != CT_RECORD_VERSION) {
		fail(why, CT_RECORD_R_VERSION);
		return 0;
	}
	if (n < ENC_CORE + 8 || n > len || n > CT_RECORD_ENC_MAX) {
		fail(why, CT_RECORD_R_ENCODING);
		return 0;
	}
	r->version = CT_RECORD_VERSION;
	r->has = p[3];
	r->orig.l3 = p[4];
	r->orig.l4 = p[5];
	r->orig.zone = rec_get16(p + 6);
	r->orig.sport = rec_get16(p + 8);
	r->orig.dport = rec_get16(p + 10);
	r->status = rec_get32(p + 12);
	r->mark = rec_get32(p + 16);
	r->l4state = p[20];
	if (p[21] || p[22] || p[23] || (r->has & ~CT_RECORD_HAS_ALL)) {
		fail(why, CT_RECORD_R_HAS);
		return 0;
	}
	if (r->orig.l3 != CT_L3_IPV4 && r->orig.l3 != CT_L3_IPV6) {
		fail(why, CT_RECORD_R_FAMILY);
		return 0;
	}
	r->timeout_ns = rec_get64(p + 24);
	r->id = rec_get64(p + 32);
	/* the length must be exactly what the sections say: computed from
	 * the fields read so far, before any section is read */
	if (enc_size(r) != n) {
		fail(why, CT_RECORD_R_ENCODING);
		return 0;
	}
	al = addr_len(r->orig.l3);
	p += ENC_CORE;
	memcpy(r->orig.src.ip6, p, al);
	memcpy(r->orig.dst.ip6, p + al, al);
	p += 2 * al;
	if (has_reply(r)) {
		r->reply.l3 = r->orig.l3;
		r->reply.l4 = r->orig.l4;
		r->reply.zone = r->orig.zone;
		memcpy(r->reply.src.ip6, p, al);
		memcpy(r->reply.dst.ip6, p + al, al);
		r->reply.sport = rec_get16(p + 2 * al);
		r->reply.dport = rec_get16(p + 2 * al + 2);
		p += 2 * al + 4;
	}
	if ((ps = ct_record_proto_enc_size(r->orig.l4)) != 0) {
		if (*p++ != ps) {
			fail(why, CT_RECORD_R_ENCODING);
			return 0;
		}
		p = get_proto(p, r);
	}
	if (r->has & CT_RECORD_HAS_ACCT) {
		r->packets[0] = rec_get64(p);
		r->packets[1] = rec_get64(p + 8);
		r->bytes[0] = rec_get64(p + 16);
		r->bytes[1] = rec_get64(p + 24);
		p += 32;
	}
	if (r->has & CT_RECORD_HAS_TSTAMP) {
		r->first_seen_ago_ns = rec_get64(p);
		r->last_seen_ago_ns = rec_get64(p + 8);
		p += 16;
	}
	if (r->has & CT_RECORD_HAS_LABELS) {
		memcpy(r->labels, p, 16);
		p += 16;
	}
	/* without the NAT section the reply is the inverted original; an
	 * original without one is refused by the check (its ports) */
	if (!has_reply(r) && !ct_tuple_invert(&r->orig, &r->reply))
		r->reply = r->orig;
	if ((chk = ct_record_check(r)) != CT_RECORD_OK) {
		fail(why, chk);
		return 0;
	}
	return (size_t)(p - buf);
}
