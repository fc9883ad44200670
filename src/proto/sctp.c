/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sctp.c - SCTP tracker (nf_conntrack_proto_sctp.c, Linux 6.18).
 *
 * An SCTP packet is a common header (ports, verification tag, CRC32c)
 * followed by chunks.  The kernel runs every chunk of a packet through one
 * state table, indexed by direction, chunk kind and current state, and
 * checks the packet's verification tag against the tag it learnt for that
 * direction from the INIT / INIT ACK (or from HEARTBEATs when it picked a
 * path up in the middle).  The table below is the kernel's, row by row,
 * so that it can be read and compared like a document.
 *
 * Per packet, in the kernel's order:
 *  1. Basic checks over all chunks (do_basic_checks): no zero-length chunk,
 *     COOKIE ECHO / COOKIE ACK only as the first chunk, INIT / INIT ACK /
 *     SHUTDOWN COMPLETE only as the only chunk, at least one chunk.
 *  2. A packet creating the entry must not carry ABORT, SHUTDOWN COMPLETE
 *     or COOKIE ACK (out of the blue, RFC 4960 8.4), and every chunk must
 *     be one the table allows from NONE in the original direction (DATA
 *     etc. are not).  The tags are seeded: INIT (which needs vtag 0) gives
 *     the reply direction's tag; HEARTBEAT gives the original direction's
 *     tag (a path picked up mid-association); anything else gives the
 *     reply direction the packet's own tag.
 *  3. Unless the packet carries INIT, SHUTDOWN COMPLETE, COOKIE ECHO,
 *     ABORT, SHUTDOWN ACK, HEARTBEAT or HEARTBEAT ACK, its tag must be the
 *     one learnt for its direction.
 *  4. Chunk by chunk: the special tag rules of RFC 4960 8.5.1 (INIT needs
 *     tag 0; ABORT and SHUTDOWN COMPLETE need our tag, or the peer's with
 *     the T bit; COOKIE ECHO needs our tag; HEARTBEAT / HEARTBEAT ACK learn
 *     a missing tag, and a HEARTBEAT with a foreign tag is let through
 *     once without refreshing, so that a HEARTBEAT ACK with the new tag
 *     from the other side can move the entry to a new association), then
 *     the state table; INIT and INIT ACK record the initiate tag for the
 *     other direction (INIT ACK must agree with a tag already known unless
 *     both sides sent INIT - a collision).  Entering ESTABLISHED assures
 *     the entry; any state change is a PROTOINFO event.
 *  5. The timeout is that of the state after the last chunk.  An INIT
 *     seen again on an existing entry that stays CLOSED is accepted
 *     without refreshing (so a client reusing ports cannot keep an entry
 *     alive for ever), as is a HEARTBEAT with a foreign tag.
 * Any refusal is INVALID (CT_PR_SCTP_INVALID).  As in the kernel, chunks
 * before the refused one have already updated the entry's state and tags.
 *
 * The chunk walk reads the raw packet (pkt->l4), bounded by the shorter of
 * the L4 length and the captured bytes, and stops, like the kernel's
 * for_each_sctp_chunk, when fewer than 4 bytes of a chunk header remain.
 * The short-header and CRC checks (sctp_error) are the parser's and core's.
 */
#include <string.h>

#include "ctrack/events.h"
#include "proto/proto.h"

/* Kernel's enum sctp_conntrack; the value is ct_conn.l4state. */
enum {
	sNO = 0, /* NONE */
	sCL,     /* CLOSED */
	sCW,     /* COOKIE_WAIT */
	sCE,     /* COOKIE_ECHOED */
	sES,     /* ESTABLISHED */
	sSS,     /* SHUTDOWN_SENT */
	sSR,     /* SHUTDOWN_RECD */
	sSA,     /* SHUTDOWN_ACK_SENT */
	sHS,     /* HEARTBEAT_SENT */
	SCTP_N_STATES,
	sIV = SCTP_N_STATES, /* invalid transition */
};

/* Chunk types (RFC 4960 3.2). */
enum {
	CID_DATA = 0,
	CID_INIT = 1,
	CID_INIT_ACK = 2,
	CID_HEARTBEAT = 4,
	CID_HEARTBEAT_ACK = 5,
	CID_ABORT = 6,
	CID_SHUTDOWN = 7,
	CID_SHUTDOWN_ACK = 8,
	CID_ERROR = 9,
	CID_COOKIE_ECHO = 10,
	CID_COOKIE_ACK = 11,
	CID_SHUTDOWN_COMPLETE = 14,
};

#define CHUNK_FLAG_T 0x01            /* ABORT / SHUTDOWN COMPLETE T bit */
#define SCTP_COMMON_HDR 12
#define SCTP_CHUNK_HDR 4
#define SCTP_INIT_HDR 16              /* struct sctp_inithdr */
#define FLAG_HEARTBEAT_VTAG_FAILED 1

/* Rows of the table, in sctp_new_state()'s order. */
enum {
	R_INIT, R_INIT_ACK, R_ABORT, R_SHUTDOWN, R_SHUTDOWN_ACK, R_ERROR,
	R_COOKIE_ECHO, R_COOKIE_ACK, R_SHUTDOWN_COMP, R_HEARTBEAT,
	R_HEARTBEAT_ACK, R_MAX
};

/* sctp_conntracks[dir][chunk][state] of Linux 6.18. */
static const uint8_t sctp_table[2][R_MAX][SCTP_N_STATES] = {
	{
/*	ORIGINAL		 sNO  sCL  sCW  sCE  sES  sSS  sSR  sSA  sHS */
/* init          */	{ sCL, sCL, sCW, sCE, sES, sCL, sCL, sSA, sCW },
/* init_ack      */	{ sCL, sCL, sCW, sCE, sES, sSS, sSR, sSA, sCL },
/* abort         */	{ sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sCL },
/* shutdown      */	{ sCL, sCL, sCW, sCE, sSS, sSS, sSR, sSA, sCL },
/* shutdown_ack  */	{ sSA, sCL, sCW, sCE, sES, sSA, sSA, sSA, sSA },
/* error         */	{ sCL, sCL, sCW, sCE, sES, sSS, sSR, sSA, sCL },
/* cookie_echo   */	{ sCL, sCL, sCE, sCE, sES, sSS, sSR, sSA, sCL },
/* cookie_ack    */	{ sCL, sCL, sCW, sES, sES, sSS, sSR, sSA, sCL },
/* shutdown_comp */	{ sCL, sCL, sCW, sCE, sES, sSS, sSR, sCL, sCL },
/* heartbeat     */	{ sHS, sCL, sCW, sCE, sES, sSS, sSR, sSA, sHS },
/* heartbeat_ack */	{ sCL, sCL, sCW, sCE, sES, sSS, sSR, sSA, sHS },
	},
	{
/*	REPLY			 sNO  sCL  sCW  sCE  sES  sSS  sSR  sSA  sHS */
/* init          */	{ sIV, sCL, sCW, sCE, sES, sSS, sSR, sSA, sIV },
/* init_ack      */	{ sIV, sCW, sCW, sCE, sES, sSS, sSR, sSA, sIV },
/* abort         */	{ sIV, sCL, sCL, sCL, sCL, sCL, sCL, sCL, sIV },
/* shutdown      */	{ sIV, sCL, sCW, sCE, sSR, sSS, sSR, sSA, sIV },
/* shutdown_ack  */	{ sIV, sCL, sCW, sCE, sES, sSA, sSA, sSA, sIV },
/* error         */	{ sIV, sCL, sCW, sCL, sES, sSS, sSR, sSA, sIV },
/* cookie_echo   */	{ sIV, sCL, sCE, sCE, sES, sSS, sSR, sSA, sIV },
/* cookie_ack    */	{ sIV, sCL, sCW, sES, sES, sSS, sSR, sSA, sIV },
/* shutdown_comp */	{ sIV, sCL, sCW, sCE, sES, sSS, sSR, sCL, sIV },
/* heartbeat     */	{ sIV, sCL, sCW, sCE, sES, sSS, sSR, sSA, sHS },
/* heartbeat_ack */	{ sIV, sCL, sCW, sCE, sES, sSS, sSR, sSA, sES },
	},
};

/* As conntrack(8) (libnetfilter_conntrack's sctp_states) prints them. */
static const char *const sctp_state_names[SCTP_N_STATES] = {
	[sNO] = "NONE",
	[sCL] = "CLOSED",
	[sCW] = "COOKIE_WAIT",
	[sCE] = "COOKIE_ECHOED",
	[sES] = "ESTABLISHED",
	[sSS] = "SHUTDOWN_SENT",
	[sSR] = "SHUTDOWN_RECD",
	[sSA] = "SHUTDOWN_ACK_SENT",
	[sHS] = "HEARTBEAT_SENT",
};

/* Private area: the kernel's struct ip_ct_sctp minus the state, which is
 * l4state.  Tags are kept in host order, compared as the packet has them. */
struct sctp_priv {
	uint32_t vtag[2];  /* expected tag per direction, 0 = not known */
	uint8_t init[2];   /* an INIT was seen in this direction */
	uint8_t flags;     /* FLAG_HEARTBEAT_VTAG_FAILED */
	uint8_t last_dir;  /* direction of the HEARTBEAT that failed */
	uint32_t pad;
};

_Static_assert(sizeof(struct sctp_priv) == 16, "sctp priv is 16 bytes");

struct chunk {
	uint32_t off;  /* offset of the chunk header in the L4 bytes */
	uint16_t len;  /* chunk length field */
	uint8_t type;
	uint8_t flags;
};

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* The chunk at @off, if a whole 4-byte chunk header lies before @end. */
static bool chunk_at(const uint8_t *l4, uint32_t end, uint32_t off,
		     struct chunk *ch)
{
	if (off >= end || end - off < SCTP_CHUNK_HDR)
		return false;
	ch->off = off;
	ch->type = l4[off];
	ch->flags = l4[off + 1];
	ch->len = (uint16_t)(l4[off + 2] << 8 | l4[off + 3]);
	return true;
}

/* The next chunk's offset: lengths are padded to 4 bytes.  Callers only
 * walk after do_basic_checks rejected zero lengths, so this progresses. */
static uint32_t chunk_next(const struct chunk *ch)
{
	return ch->off + (((uint32_t)ch->len + 3u) & ~3u);
}

#define for_each_chunk(l4, end, ch, off) \
	for ((off) = SCTP_COMMON_HDR; chunk_at((l4), (end), (off), &(ch)); \
	     (off) = chunk_next(&(ch)))

struct chunk_map {
	uint64_t w[4];
};

static void map_set(struct chunk_map *m, uint8_t t)
{
	m->w[t >> 6] |= 1ull << (t & 63);
}

static bool map_has(const struct chunk_map *m, uint8_t t)
{
	return m->w[t >> 6] >> (t & 63) & 1;
}

/* do_basic_checks: true when the chunk structure is acceptable. */
static bool basic_checks(const uint8_t *l4, uint32_t end, struct chunk_map *m)
{
	struct chunk ch;
	uint32_t off, count = 0;
	bool only = false;

	for_each_chunk(l4, end, ch, off) {
		if (ch.type == CID_INIT || ch.type == CID_INIT_ACK ||
		    ch.type == CID_SHUTDOWN_COMPLETE)
			only = true;
		if (((ch.type == CID_COOKIE_ACK || ch.type == CID_COOKIE_ECHO ||
		      only) && count != 0) || ch.len == 0)
			return false;
		map_set(m, ch.type);
		count++;
	}
	return count != 0;
}

/* sctp_new_state: the table row of a chunk type, or -1 for chunks (DATA,
 * SACK, ...) that leave the state alone. */
static int chunk_row(uint8_t type)
{
	switch (type) {
	case CID_INIT: return R_INIT;
	case CID_INIT_ACK: return R_INIT_ACK;
	case CID_ABORT: return R_ABORT;
	case CID_SHUTDOWN: return R_SHUTDOWN;
	case CID_SHUTDOWN_ACK: return R_SHUTDOWN_ACK;
	case CID_ERROR: return R_ERROR;
	case CID_COOKIE_ECHO: return R_COOKIE_ECHO;
	case CID_COOKIE_ACK: return R_COOKIE_ACK;
	case CID_SHUTDOWN_COMPLETE: return R_SHUTDOWN_COMP;
	case CID_HEARTBEAT: return R_HEARTBEAT;
	case CID_HEARTBEAT_ACK: return R_HEARTBEAT_ACK;
	default: return -1;
	}
}

static uint8_t next_state(enum ct_dir dir, uint8_t cur, uint8_t type)
{
	int row = chunk_row(type);

	if (row < 0 || cur >= SCTP_N_STATES)
		return cur;
	return sctp_table[dir][row][cur];
}

/* The initiate tag of the INIT / INIT ACK chunk @ch, if its fixed part
 * is present. */
static bool init_tag(const uint8_t *l4, uint32_t end, const struct chunk *ch,
		     uint32_t *tag)
{
	uint32_t at = ch->off + SCTP_CHUNK_HDR;

	if (at > end || end - at < SCTP_INIT_HDR)
		return false;
	*tag = rd32(l4 + at);
	return true;
}

/* sctp_new: seed a new entry's tags; false refuses the packet. */
static bool sctp_new(struct sctp_priv *p, const uint8_t *l4, uint32_t end,
		     uint32_t vtag)
{
	struct chunk ch;
	uint32_t off;

	memset(p, 0, sizeof(*p));
	for_each_chunk(l4, end, ch, off) {
		uint8_t s = next_state(CT_DIR_ORIGINAL, sNO, ch.type);

		if (s == sNO || s == sIV)
			return false;
		if (ch.type == CID_INIT) {
			uint32_t tag;

			if (vtag != 0 || !init_tag(l4, end, &ch, &tag))
				return false;
			p->vtag[CT_DIR_REPLY] = tag;
		} else if (ch.type == CID_HEARTBEAT) {
			p->vtag[CT_DIR_ORIGINAL] = vtag;
		} else {
			/* out of the blue: expect the answer (SHUTDOWN
			 * COMPLETE or ABORT) to carry this tag back */
			p->vtag[CT_DIR_REPLY] = vtag;
		}
	}
	return true;
}

/* The per-chunk tag rules of RFC 4960 8.5.1 and the heartbeat tag
 * learning.  Returns 1 to go on with the state table, 0 to skip this
 * chunk (a foreign-tag HEARTBEAT let through once: *ignore is set), -1 to
 * refuse the packet. */
static int chunk_vtag_rules(struct sctp_priv *p, const struct chunk *ch,
			    const struct chunk_map *map, enum ct_dir dir,
			    uint32_t vtag, bool *ignore)
{
	enum ct_dir other = dir == CT_DIR_ORIGINAL ? CT_DIR_REPLY
						   : CT_DIR_ORIGINAL;

	switch (ch->type) {
	case CID_INIT:
		return vtag == 0 ? 1 : -1;
	case CID_ABORT:
	case CID_SHUTDOWN_COMPLETE:
		if (ch->flags & CHUNK_FLAG_T)
			return vtag == p->vtag[other] ? 1 : -1;
		return vtag == p->vtag[dir] ? 1 : -1;
	case CID_COOKIE_ECHO:
		return vtag == p->vtag[dir] ? 1 : -1;
	case CID_COOKIE_ACK:
		p->init[dir] = 0;
		p->init[other] = 0;
		return 1;
	case CID_HEARTBEAT:
		if (p->vtag[dir] == 0) {
			p->vtag[dir] = vtag;
		} else if (vtag != p->vtag[dir]) {
			if (map_has(map, CID_DATA) || *ignore)
				return -1;
			p->flags |= FLAG_HEARTBEAT_VTAG_FAILED;
			p->last_dir = (uint8_t)dir;
			*ignore = true;
			return 0;
		} else {
			p->flags &= (uint8_t)~FLAG_HEARTBEAT_VTAG_FAILED;
		}
		return 1;
	case CID_HEARTBEAT_ACK:
		if (p->vtag[dir] == 0) {
			p->vtag[dir] = vtag;
		} else if (vtag != p->vtag[dir]) {
			if (map_has(map, CID_DATA) || *ignore)
				return -1;
			if (!(p->flags & FLAG_HEARTBEAT_VTAG_FAILED) ||
			    p->last_dir == dir)
				return -1;
			/* the peer answered a HEARTBEAT that carried a new
			 * association's tag: follow the new association */
			p->flags &= (uint8_t)~FLAG_HEARTBEAT_VTAG_FAILED;
			p->vtag[dir] = vtag;
			p->vtag[other] = 0;
		} else {
			p->flags &= (uint8_t)~FLAG_HEARTBEAT_VTAG_FAILED;
		}
		return 1;
	default:
		return 1;
	}
}

static void sctp_packet(struct ct_conn *c, const struct ct_proto_ctx *ctx,
			struct ct_proto_out *out)
{
	const struct ct_packet *pkt = ctx->pkt;
	struct sctp_priv *p = ct_conn_priv(c);
	enum ct_dir dir = ctx->dir;
	enum ct_dir other = dir == CT_DIR_ORIGINAL ? CT_DIR_REPLY
						   : CT_DIR_ORIGINAL;
	struct chunk_map map = { { 0 } };
	const uint8_t *l4 = pkt->l4;
	uint32_t end = pkt->l4_len < pkt->l4_caplen ? pkt->l4_len
						     : pkt->l4_caplen;
	uint8_t old_state, new_state = sNO;
	bool ignore = false;
	struct chunk ch;
	uint32_t vtag, off;

	if (!l4 || end < SCTP_COMMON_HDR) {
		out->verdict = CT_PV_INVALID;
		out->reason = CT_PR_L4_TRUNCATED;
		return;
	}
	vtag = rd32(l4 + 4);

	if (!basic_checks(l4, end, &map))
		goto invalid;

	if (ctx->is_new) {
		if (map_has(&map, CID_ABORT) ||
		    map_has(&map, CID_SHUTDOWN_COMPLETE) ||
		    map_has(&map, CID_COOKIE_ACK))
			goto invalid;
		if (!sctp_new(p, l4, end, vtag))
			goto invalid;
		c->l4state = sNO;
	}

	/* Sec 8.5: chunks that carry their own tag rules are exempt. */
	if (!map_has(&map, CID_INIT) && !map_has(&map, CID_SHUTDOWN_COMPLETE) &&
	    !map_has(&map, CID_COOKIE_ECHO) && !map_has(&map, CID_ABORT) &&
	    !map_has(&map, CID_SHUTDOWN_ACK) && !map_has(&map, CID_HEARTBEAT) &&
	    !map_has(&map, CID_HEARTBEAT_ACK) && vtag != p->vtag[dir])
		goto invalid;

	for_each_chunk(l4, end, ch, off) {
		int r = chunk_vtag_rules(p, &ch, &map, dir, vtag, &ignore);

		if (r < 0)
			goto invalid;
		if (r == 0)
			continue;

		old_state = c->l4state;
		new_state = next_state(dir, old_state, ch.type);
		if (new_state == sIV)
			goto invalid;

		if (ch.type == CID_INIT) {
			uint32_t tag;

			if (!init_tag(l4, end, &ch, &tag))
				goto invalid;
			if (p->init[dir] && p->init[other])
				p->init[other] = 0;
			p->init[dir] = 1;
			p->vtag[other] = tag;
			/* an INIT again on an entry that stays CLOSED:
			 * accept, but do not keep the entry alive */
			if (new_state == sCL && old_state == sCL && !ctx->is_new)
				ignore = true;
		} else if (ch.type == CID_INIT_ACK) {
			uint32_t tag, known = p->vtag[other];

			if (!init_tag(l4, end, &ch, &tag))
				goto invalid;
			if (!p->init[other] && known && known != tag)
				goto invalid;
			/* collision: both sides sent INIT */
			if (p->init[dir] && p->init[other] && known != tag)
				goto invalid;
			p->vtag[other] = tag;
		}

		c->l4state = new_state;
		if (old_state != new_state) {
			out->events |= CT_EVW_PROTOINFO;
			if (new_state == sES)
				out->set_assured = true;
		}
	}

	if (ignore) {
		out->verdict = CT_PV_IGNORE;
		return;
	}
	out->verdict = CT_PV_ACCEPT;
	/* timeouts[] is indexed by state; the kernel fills timeouts[NONE]
	 * with the CLOSED value */
	out->timeout_ns = ct_secs(ctx->set->sctp_timeouts[
		new_state == sNO ? CT_SCTP_TO_CLOSED : new_state - 1]);
	return;
invalid:
	out->verdict = CT_PV_INVALID;
	out->reason = CT_PR_SCTP_INVALID;
}

static const char *sctp_state_name(uint8_t state)
{
	return state < SCTP_N_STATES ? sctp_state_names[state] : NULL;
}

/* sctp_can_early_drop: an ASSURED association that is shutting down may
 * still be evicted when the table is full. */
static bool sctp_can_early_drop(const struct ct_conn *c)
{
	return c->l4state == sSS || c->l4state == sSR || c->l4state == sSA;
}

/*
 * Records (proto.h): tags, INIT seen, the heartbeat flag.  A commit takes
 * the tags (nlattr_to_sctp: CTA_PROTOINFO_SCTP_VTAG_*) and leaves the rest
 * zero, as the kernel's new entry has it.
 */
static void sctp_to_record(const struct ct_conn *c, union ct_record_proto *rp,
			   ct_time_ns now)
{
	const struct sctp_priv *p = ct_conn_priv_const(c);

	(void)now;
	rp->sctp.vtag[0] = p->vtag[0];
	rp->sctp.vtag[1] = p->vtag[1];
	rp->sctp.init[0] = p->init[0];
	rp->sctp.init[1] = p->init[1];
	rp->sctp.heartbeat_vtag_failed = p->flags & FLAG_HEARTBEAT_VTAG_FAILED;
	rp->sctp.last_dir = p->last_dir;
}

static enum ct_record_reason sctp_record_check(uint8_t l4state,
					       const union ct_record_proto *rp)
{
	const struct ct_record_sctp *r = &rp->sctp;

	(void)l4state;
	if (r->init[0] > 1 || r->init[1] > 1 || r->heartbeat_vtag_failed > 1 ||
	    r->last_dir > CT_DIR_REPLY)
		return CT_RECORD_R_PROTO;
	return CT_RECORD_OK;
}

static void sctp_from_record(struct ct_conn *c, const union ct_record_proto *rp,
			     ct_time_ns base, bool commit, const struct ct_settings *set)
{
	struct sctp_priv *p = ct_conn_priv(c);
	const struct ct_record_sctp *r = &rp->sctp;

	(void)base;
	(void)set;
	p->vtag[0] = r->vtag[0];
	p->vtag[1] = r->vtag[1];
	if (commit)
		return;
	p->init[0] = r->init[0];
	p->init[1] = r->init[1];
	p->flags = r->heartbeat_vtag_failed ? FLAG_HEARTBEAT_VTAG_FAILED : 0;
	p->last_dir = r->last_dir;
}

const struct ct_proto ct_proto_sctp = {
	.name = "sctp",
	.l4 = 132,
	.priv_size = sizeof(struct sctp_priv),
	.n_states = SCTP_N_STATES,
	.packet = sctp_packet,
	.state_name = sctp_state_name,
	.to_record = sctp_to_record,
	.record_check = sctp_record_check,
	.from_record = sctp_from_record,
	.can_early_drop = sctp_can_early_drop,
};
