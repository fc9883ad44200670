/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_track.c - libFuzzer target: sequences of packets and operations
 * through the whole tracker, with the table's invariants checked.
 *
 * A parser fuzzer feeds one frame at a time; the tracker's bugs live in
 * sequences (a RST after a SYN in a zone being destroyed, a resize in the
 * middle of a flush, an expiry hidden behind a row's due bound).  So the
 * input is a program in the byte-code of track_bytecode.h: the harness
 * keeps a pool of 16 connections with consistent sequence numbers and
 * SCTP tags, builds real frames for them (Ethernet, raw IP, VLAN, cut
 * short, corrupted) or fills struct ct_packet directly as an embedding
 * dataplane would, and interleaves packets with floods of new tuples,
 * bursts, collector slices (and the naive collector policies),
 * flushes, namespace creation and batched teardown, marks, settings
 * changes, fragments and thread re-attachment.
 *
 * After every packet it checks the verdict (a created entry can be found,
 * reasons are in range, the table maximum holds), and after every OP_CHECK
 * and at the end of the input it checks the whole table:
 *   - ct_table_count() equals the entries ct_table_dump() reaches, and
 *     each namespace's count equals the entries of its zone;
 *   - every entry is CONFIRMED, not DYING, in a live namespace, in a
 *     legal state for its protocol, its reply tuple is the inverted
 *     original, it is found again by a lookup from either direction, and
 *     no tuple is held by two entries;
 *   - NEW minus DESTROY events equals the entry count, and so do inserts
 *     minus expirations, deletions and early drops (each removal is
 *     counted once);
 *   - after a full collector pass no entry whose expiry is <= now remains.
 * The parts: this file is the interpreter (the program's operations, the
 * table pool); track_frame.c builds the frames, track_check.c checks the
 * verdicts and the table (with tests/support's audit).
 * A broken invariant aborts with a message, which libFuzzer records as a
 * crash.  Everything is deterministic: collector slices use a budget of 0
 * (a whole pass) or 1 ns (exactly one 64-row group), never wall time.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/ctrack.h"
#include "proto/proto.h"
#include "base/state.h"
#include "table/conn_key.h"
#include "table/htab.h"
#include "table/member.h"
#include "table/reclaim.h"
#include "table/resize.h"
#include "table/wheel.h"
#include "fuzz_track.h"
#include "support/csum.h"
#include "support/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

void fz_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("fuzz_track: invariant broken: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

/* ---- reading the program ---- */

struct rd {
	const uint8_t *p;
	size_t n, i;
};

static uint8_t rd8(struct rd *r)
{
	return r->i < r->n ? r->p[r->i++] : 0;
}

static uint32_t rd32(struct rd *r)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++)
		v = v << 8 | rd8(r);
	return v;
}

static void on_event(const struct ct_event *ev, void *arg)
{
	struct fz *f = arg;

	if (ev->type == CT_EV_NEW)
		f->ev_new++;
	else if (ev->type == CT_EV_DESTROY)
		f->ev_destroy++;
	CHECK(ev->type <= CT_EV_DESTROY, "event type %d", ev->type);
}

static void slot_init(struct slot *s, unsigned i)
{
	static const uint8_t protos[8] = { 6, 17, 1, 6, 132, 47, 58, 17 };
	bool v6 = (i % 4) == 3 || (i % 8) == 6;

	memset(s, 0, sizeof(*s));
	s->t.l4 = protos[i % 8];
	if (v6) {
		s->t.l3 = CT_L3_IPV6;
		s->t.src.ip6[0] = 0xfd;
		s->t.src.ip6[15] = (uint8_t)(i + 1);
		s->t.dst.ip6[0] = 0xfd;
		s->t.dst.ip6[13] = 1;
		s->t.dst.ip6[15] = 2;
	} else {
		s->t.l3 = CT_L3_IPV4;
		s->t.src.ip4 = htonl(0x0a000001u | (i << 8));
		s->t.dst.ip4 = htonl(0x0a010002u);
	}
	s->t.sport = (uint16_t)(30000 + i);
	s->t.dport = s->t.l4 == 6 ? 80 : s->t.l4 == 132 ? 36412 : 53;
	if (s->t.l4 == 1 || s->t.l4 == 58)
		s->t.sport = (uint16_t)(i + 1);
	s->nxt[0] = 0x01000000u * (i + 1);
	s->nxt[1] = 0x80000000u + 0x00100000u * i;
	s->vtag[0] = 0x11110000u + i;
	s->vtag[1] = 0x22220000u + i;
}

/* ---- NAT (h2 bit 7) ---- */

static struct ct_nat_range nat_range(const struct ct_tuple *t, unsigned kind)
{
	struct ct_nat_range r;
	bool v6 = t->l3 == CT_L3_IPV6;

	memset(&r, 0, sizeof(r));
	r.flags = CT_NAT_RANGE_MAP_IPS;
	if (v6) {
		r.min_addr.ip6[0] = 0xfd;
		r.min_addr.ip6[1] = 0x99;
		r.min_addr.ip6[15] = 1;
	} else {
		r.min_addr.ip4 = htonl(0xc6336401u);
	}
	r.max_addr = r.min_addr;
	if (kind == 2) {
		/* a range of addresses and ports, random */
		if (v6)
			r.max_addr.ip6[15] = 4;
		else
			r.max_addr.ip4 = htonl(0xc6336404u);
		r.flags |= CT_NAT_RANGE_PROTO_SPECIFIED | CT_NAT_RANGE_PROTO_RANDOM;
		r.min_proto = 1000;
		r.max_proto = 1007;
	} else if (kind == 3) {
		/* a backend with a port change */
		r.flags |= CT_NAT_RANGE_PROTO_SPECIFIED;
		r.min_proto = r.max_proto = 8080;
	}
	return r;
}

/* The tuple a packet of the binding's connection in direction @dir has
 * once translated: the other direction's tuple inverted (tuple.h). */
static bool translated_tuple(const struct ct_nat_binding *b, enum ct_dir dir, struct ct_tuple *out)
{
	return ct_tuple_invert(dir == CT_DIR_ORIGINAL ? &b->reply : &b->orig, out);
}

static void nat_translate_check(const struct ct_packet *pkt, const uint8_t *frame, uint32_t len,
				const struct ct_nat_binding *b, enum ct_dir dir, bool was_ok)
{
	static uint8_t copy[BUF];
	struct ct_packet q = *pkt, back;
	enum ct_nat_verdict vd;
	struct ct_tuple want;
	uint32_t off;

	if (!frame || !pkt->l3 || len > sizeof(copy) || pkt->l3 < frame ||
	    pkt->l3 >= frame + len)
		return;
	memcpy(copy, frame, len);
	ct_packet_moved(&q, frame, copy);
	vd = ct_nat_translate(copy, len, &q, b, dir, (len & 1) ? CT_NAT_XLATE_FORWARD : 0, NULL);
	CHECK((unsigned)vd < CT_NAT_V_MAX, "translation verdict %d", vd);
	if (vd != CT_NAT_V_OK) {
		CHECK(memcmp(copy, frame, len) == 0, "a refused translation changed the frame");
		return;
	}
	off = (uint32_t)(q.l3 - copy);
	ct_parse_ip(&back, copy + off, len - off, len - off, pkt->ts);
	CHECK(back.kind == pkt->kind || pkt->kind != CT_PKT_TRACKABLE,
	      "a translated packet parses as kind %u, was %u", back.kind, pkt->kind);
	if (pkt->kind != CT_PKT_TRACKABLE || back.kind != CT_PKT_TRACKABLE || pkt->is_fragment ||
	    ((pkt->tuple.l4 == IPPROTO_ICMP || pkt->tuple.l4 == IPPROTO_ICMPV6) &&
	     pkt->u.icmp.is_error))
		return;
	/* without a binding nothing but the TTL changes */
	if (!(b->status & CT_NAT_S_MASK))
		want = pkt->tuple;
	if ((pkt->tuple.l4 == IPPROTO_TCP || pkt->tuple.l4 == IPPROTO_UDP) &&
	    ((b->status & CT_NAT_S_MASK) ? translated_tuple(b, dir, &want) : true)) {
		back.tuple.zone = want.zone;
		CHECK(ct_tuple_equal(&back.tuple, &want), "a translated packet does not carry "
		      "the binding's tuple");
		if (was_ok && !back.truncated)
			CHECK(ct_packet_l4_csum_ok(&back), "translation broke a good checksum");
	}
}

void fz_nat_packet(struct fz *f, const struct ct_packet *pkt, const uint8_t *frame,
		   uint32_t len)
{
	struct ct_classified cl;
	struct ct_nat_binding b;
	const struct ct_tuple *t = &pkt->tuple;
	unsigned kind = (unsigned)(t->sport ^ t->dport ^ t->l4 ^ (t->src.ip6[3] >> 1)) % 6;
	bool was_ok = pkt->kind == CT_PKT_TRACKABLE && !pkt->truncated && ct_packet_l4_csum_ok(pkt);
	int rc;

	CHECK(ct_classify(f->thr, pkt, f->now, &cl) == 0 || cl.v.cls == CT_V_DROP, "ct_classify");
	fz_check_verdict(f, pkt, &cl.v, false);
	switch (cl.cls) {
	case CT_CLASS_PENDING: {
		struct ct_nat_range r = nat_range(t, kind);

		CHECK(cl.v.cls == CT_V_NEW && (cl.v.flags & CT_VF_PENDING), "pending verdict");
		if (kind == 5) {
			ct_pending_drop(f->thr, cl.pending);
			return;
		}
		if (kind == 1 || kind == 2)
			rc = ct_pending_nat(f->thr, cl.pending, &r, CT_NAT_MANIP_SRC);
		else if (kind == 3)
			rc = ct_pending_nat(f->thr, cl.pending, &r, CT_NAT_MANIP_DST);
		else if (kind == 4)
			rc = ct_pending_masquerade(f->thr, cl.pending, NULL, &r.min_addr);
		else
			rc = 0;
		CHECK(rc >= 0 || rc == -EINVAL, "NAT setup %d", rc);
		rc = ct_pending_confirm(f->thr, cl.pending, &b);
		CHECK(rc == CT_CONFIRM_INSERTED || rc == CT_CONFIRM_MERGED ||
		      rc == CT_CONFIRM_REPLY_ONLY || rc == -EEXIST || rc == -ENOSPC ||
		      rc == -ENOMEM, "confirm %d", rc);
		if (rc == CT_CONFIRM_INSERTED) {
			struct ct_conn_info ci, cr;
			enum ct_dir d;

			CHECK(ct_table_lookup(f->thr, &b.orig, &ci, &d) == 1 && d == CT_DIR_ORIGINAL,
			      "a confirmed entry is not found from its original tuple");
			CHECK(ct_table_lookup(f->thr, &b.reply, &cr, &d) == 1 && d == CT_DIR_REPLY &&
			      cr.id == ci.id, "a confirmed entry is not found from its reply tuple");
		}
		if (rc >= 0)
			nat_translate_check(pkt, frame, len, &b, CT_DIR_ORIGINAL, was_ok);
		return;
	}
	case CT_CLASS_TRACKED:
	case CT_CLASS_RELATED:
		if (!cl.nat)
			memset(&cl.binding, 0, sizeof(cl.binding));
		nat_translate_check(pkt, frame, len, &cl.binding, (enum ct_dir)cl.v.dir, was_ok);
		return;
	default:
		return;
	}
}

/* ---- operations ---- */

/* The frame's length as the builder made it: the IP datagram from @pkt's
 * header on, within the buffer. */
static uint32_t frame_len_of(const uint8_t *buf, const struct ct_packet *pkt)
{
	uint32_t off;

	if (!pkt->l3 || pkt->l3 < buf || pkt->l3 >= buf + BUF)
		return 0;
	off = (uint32_t)(pkt->l3 - buf);
	return off + (pkt->l3_len + off > BUF ? BUF - off : pkt->l3_len);
}

static void process_frame_or_fragment_in(struct fz *f, struct ct_packet *pkt, bool single,
					 const uint8_t *buf, uint32_t len)
{
	struct ct_verdict v;

	if (pkt->kind == CT_PKT_FRAGMENT) {
		struct ct_packet whole;
		uint16_t zone = pkt->tuple.zone;
		int r = ct_defrag_feed(f->defrag, pkt, f->now, &whole);

		CHECK(r >= 0, "defrag error %d", r);
		if (r == 1) {
			whole.tuple.zone = zone;
			if (f->nat) {
				fz_nat_packet(f, &whole, whole.l3, whole.l3 ? whole.l3_len : 0);
				return;
			}
			CHECK(ct_process(f->thr, &whole, f->now, &v) == 0, "ct_process");
			fz_check_verdict(f, &whole, &v, single);
			return;
		}
	}
	if (f->nat) {
		fz_nat_packet(f, pkt, buf, buf ? len : 0);
		return;
	}
	CHECK(ct_process(f->thr, pkt, f->now, &v) == 0, "ct_process");
	fz_check_verdict(f, pkt, &v, single);
}


static void rd_spec(struct rd *r, struct pspec *ps)
{
	ps->sd = rd8(r);
	ps->fl = rd8(r);
	ps->ln = rd8(r);
	ps->md = rd8(r);
}

static void op_pkt(struct fz *f, struct rd *r)
{
	uint8_t buf[BUF];
	struct ct_packet pkt;
	struct pspec ps;

	rd_spec(r, &ps);
	if (fz_make_packet(f, &ps, buf, &pkt))
		process_frame_or_fragment_in(f, &pkt, true, buf, frame_len_of(buf, &pkt));
}

static void op_time(struct fz *f, struct rd *r);

static void op_burst(struct fz *f, struct rd *r)
{
	static uint8_t bufs[BURST][BUF];
	struct ct_packet pkts[BURST];
	const struct ct_packet *pp[BURST];
	struct ct_verdict v[BURST];
	uint8_t b = rd8(r);
	unsigned n = 1 + (b & 127) % BURST;
	bool at_ts = b & 128;   /* ct_process_burst_ts: time moves inside */

	for (unsigned i = 0; i < n; i++) {
		struct pspec ps;

		if (at_ts && i)
			op_time(f, r);
		rd_spec(r, &ps);
		fz_make_packet(f, &ps, bufs[i], &pkts[i]);
		pkts[i].ts = f->now;
		pp[i] = &pkts[i];
	}
	if (at_ts)
		CHECK(ct_process_burst_ts(f->thr, pp, n, v) == 0, "ct_process_burst_ts");
	else
		CHECK(ct_process_burst(f->thr, pp, n, f->now, v) == 0, "ct_process_burst");
	for (unsigned i = 0; i < n; i++)
		fz_check_verdict(f, &pkts[i], &v[i], false);
}

/* Time only goes forward (table.h), saturating at the end of the range;
 * 255 jumps to 20 minutes before that end, where expiries cannot be
 * represented any more and must not wrap. */
static void op_time(struct fz *f, struct rd *r)
{
	uint8_t b = rd8(r);
	uint64_t step;

	if (b < 100)
		step = b * MS;
	else if (b < 200)
		step = (b - 100) * SEC;
	else if (b < 250)
		step = (b - 200) * 60 * SEC;
	else if (b < 255)
		step = (b - 249) * 86400 * SEC;
	else
		step = f->now < UINT64_MAX - 1200 * SEC ? UINT64_MAX - 1200 * SEC - f->now : 0;
	f->now = f->now + step < f->now ? UINT64_MAX - 1 : f->now + step;
	if (f->now == UINT64_MAX)
		f->now = UINT64_MAX - 1;
}

static void op_tuple(struct fz *f, struct rd *r)
{
	static const uint8_t protos[8] = FZ_PROTOS;
	struct slot *s = &f->s[rd8(r) % FZ_SLOTS];
	uint8_t fld = rd8(r), v = rd8(r), w = rd8(r);

	switch (fld % 8) {
	case FZ_F_PROTO:
		s->t.l4 = v < 8 ? protos[v] : v;
		break;
	case FZ_F_SPORT:
		s->t.sport = (uint16_t)(v << 8 | w);
		break;
	case FZ_F_DPORT:
		s->t.dport = (uint16_t)(v << 8 | w);
		break;
	case FZ_F_ZONE:
		s->t.zone = v % FZ_ZONES;
		break;
	case FZ_F_SRC:
	case FZ_F_DST: {
		union ct_addr *a = fld % 8 == FZ_F_SRC ? &s->t.src : &s->t.dst;
		if (s->t.l3 == CT_L3_IPV4) {
			((uint8_t *)&a->ip4)[3] = v;
		} else {
			a->ip6[15] = v;
			a->ip6[14] = w;
		}
		break;
	}
	case FZ_F_FAMILY:
		if (s->t.l3 == CT_L3_IPV4) {
			uint32_t a = s->t.src.ip4, b = s->t.dst.ip4;
			s->t.l3 = CT_L3_IPV6;
			memset(&s->t.src, 0, sizeof(s->t.src));
			memset(&s->t.dst, 0, sizeof(s->t.dst));
			s->t.src.ip6[0] = s->t.dst.ip6[0] = 0xfd;
			memcpy(s->t.src.ip6 + 12, &a, 4);
			memcpy(s->t.dst.ip6 + 12, &b, 4);
		} else {
			uint32_t a, b;
			memcpy(&a, s->t.src.ip6 + 12, 4);
			memcpy(&b, s->t.dst.ip6 + 12, 4);
			s->t.l3 = CT_L3_IPV4;
			memset(&s->t.src, 0, sizeof(s->t.src));
			memset(&s->t.dst, 0, sizeof(s->t.dst));
			s->t.src.ip4 = a;
			s->t.dst.ip4 = b;
		}
		break;
	default: {
		struct slot o = f->s[v % FZ_SLOTS];
		*s = o;
		if (w & 1) {
			s->t.src = o.t.dst;
			s->t.dst = o.t.src;
			s->t.sport = o.t.dport;
			s->t.dport = o.t.sport;
			s->nxt[0] = o.nxt[1];
			s->nxt[1] = o.nxt[0];
			s->vtag[0] = o.vtag[1];
			s->vtag[1] = o.vtag[0];
		}
		break;
	}
	}
}

static uint64_t zone_count(struct fz *f, int zone)
{
	struct ct_stats st;

	if (zone < 0)
		return ct_table_count(f->t);
	if (ct_ns_get_stats(f->t, (uint16_t)zone, &st) < 0)
		return 0;
	return st.count;
}

static void op_flush(struct fz *f, struct rd *r)
{
	uint8_t b = rd8(r);
	int zone = (b & 4) ? -1 : b & 3;
	uint64_t before = ct_table_count(f->t), want = zone_count(f, zone);
	long n = ct_table_flush(f->thr, zone, f->now);

	CHECK(n >= 0 && (uint64_t)n == want, "flush of zone %d removed %ld of %llu",
	      zone, n, (unsigned long long)want);
	CHECK(ct_table_count(f->t) == before - want, "count after flush");
}

static void op_ns_new(struct fz *f, struct rd *r)
{
	uint16_t id = (uint16_t)(1 + rd8(r) % 3);
	uint8_t m = rd8(r);
	struct ct_settings s = f->set[0];
	bool existed = ct_ns_get_stats(f->t, id, &(struct ct_stats){ 0 }) == 0;
	int err;

	s.max = m % 8;
	err = ct_ns_create(f->t, id, &s);
	if (existed) {
		CHECK(err == -EEXIST, "creating a live zone: %d", err);
		return;
	}
	CHECK(err == 0, "ct_ns_create: %d", err);
	f->set[id] = s;
	f->max_lowered[id] = false;
}

static void op_ns_del(struct fz *f, struct rd *r)
{
	static const unsigned flag_sets[4] = { 0, CT_NS_SYNC, CT_NS_SWEEP, CT_NS_WALK | CT_NS_SYNC };
	uint8_t b = rd8(r);
	uint16_t ids[5];
	unsigned k = 0;
	bool all_live = true, zero = false;
	uint64_t want = 0, before = ct_table_count(f->t);
	long n;

	for (uint16_t id = 1; id <= 3; id++)
		if (b & (1u << (id - 1))) {
			ids[k++] = id;
			if (!ct_ns_exists(f->t, id))
				all_live = false;
			want += zone_count(f, id);
		}
	if (b & 8) {
		ids[k++] = 0;
		zero = true;
	}
	if (b & 16 && k)
		ids[k++] = ids[0];          /* the same id twice counts once */
	n = ct_ns_destroy(f->thr, ids, k, f->now, flag_sets[b >> 6]);
	if (!k) {
		CHECK(n == 0, "empty batch returned %ld", n);
	} else if (zero || !all_live) {
		/* id 0 or a dead id: refused, and nothing was destroyed */
		CHECK(n == -EINVAL || n == -ENOENT, "bad batch returned %ld", n);
		CHECK(ct_table_count(f->t) == before, "a refused batch destroyed entries");
	} else {
		CHECK(n >= 0 && (uint64_t)n == want, "teardown removed %ld of %llu", n,
		      (unsigned long long)want);
		CHECK(ct_table_count(f->t) == before - want, "count after teardown");
		for (unsigned i = 0; i < k; i++)
			CHECK(!ct_ns_exists(f->t, ids[i]), "zone %u survived teardown", ids[i]);
	}
}

static void op_mark(struct fz *f, struct rd *r)
{
	struct slot *s = &f->s[rd8(r) % FZ_SLOTS];
	uint8_t d = rd8(r), m = rd8(r);
	struct ct_tuple tup = s->t;
	struct ct_conn_info ci;
	int done;

	if (d & 1) {
		tup.src = s->t.dst;
		tup.dst = s->t.src;
		tup.sport = s->t.dport;
		tup.dport = s->t.sport;
	}
	done = ct_table_set_mark(f->thr, &tup, m, 0xff, f->now);
	CHECK(done == ct_table_lookup(f->thr, &tup, &ci, NULL), "set_mark and lookup disagree");
	if (done == 1)
		CHECK((ci.mark & 0xff) == m, "mark not set");
	if (f->labels && done == 1) {
		uint8_t lb[16] = { 0 };
		lb[m & 15] = d;
		CHECK(ct_table_set_labels(f->thr, &tup, lb, f->now) == 1, "set_labels");
		CHECK(ct_table_lookup(f->thr, &tup, &ci, NULL) == 1 &&
		      memcmp(ci.labels, lb, 16) == 0, "labels not set");
	}
}

static void op_lookup(struct fz *f, struct rd *r)
{
	struct slot *s = &f->s[rd8(r) % FZ_SLOTS];
	struct ct_tuple tup = s->t;
	struct ct_conn_info ci;
	enum ct_dir dir;

	if (rd8(r) & 1)
		ct_tuple_invert(&s->t, &tup);
	if (ct_table_lookup(f->thr, &tup, &ci, &dir) == 1)
		CHECK(ct_tuple_equal(dir == CT_DIR_ORIGINAL ? &ci.orig : &ci.reply, &tup),
		      "lookup returned an entry for another tuple");
}

static void op_raw(struct fz *f, struct rd *r)
{
	static const int lts[8] = { CT_LINK_ETHERNET, CT_LINK_RAW, CT_LINK_LINUX_SLL,
				    CT_LINK_LINUX_SLL2, CT_LINK_NULL, CT_LINK_IPV4,
				    CT_LINK_IPV6, CT_LINK_NFLOG };
	uint8_t b = rd8(r), buf[1024];
	size_t n = rd8(r) | (size_t)(rd8(r) & 3) << 8;
	struct ct_packet pkt;

	for (size_t i = 0; i < n; i++)
		buf[i] = rd8(r);
	ct_parse_frame(&pkt, lts[b & 7], buf, (uint32_t)n, (uint32_t)n + (b >> 6), f->now);
	pkt.tuple.zone = (uint16_t)((b >> 3) & 3);
	process_frame_or_fragment_in(f, &pkt, true, buf, (uint32_t)n);
}

static void op_set(struct fz *f, struct rd *r)
{
	uint8_t fld = rd8(r), v = rd8(r);
	uint16_t z = (uint16_t)((fld >> 4) % FZ_ZONES);
	struct ct_settings s = f->set[z];
	int err;

	switch (fld & 15) {
	case 0:
		s.max = v ? 1 + v % 48 : 0;
		break;
	case 1:
		s.tcp_loose = v & 1;
		break;
	case 2:
		s.tcp_be_liberal = v & 1;
		break;
	case 3:
		s.checksum = v & 1;
		break;
	case 4:
		s.udp_timeout = 1 + v;
		break;
	case 5:
		s.tcp_timeouts[CT_TCP_TO_ESTABLISHED] = 1 + v * 60u;
		break;
	case 6:
		s.tcp_max_retrans = v;
		break;
	case 7:
		s.generic_timeout = 1 + v;
		break;
	case 8:
		for (int i = 0; i < CT_TCP_TO_MAX; i++)
			s.tcp_timeouts[i] = 1 + v;
		break;
	case 9:
		for (int i = 0; i < CT_SCTP_TO_MAX; i++)
			s.sctp_timeouts[i] = 1 + v;
		break;
	case 10:
		s.icmp_timeout = s.icmpv6_timeout = 1 + v;
		break;
	case 11:
		s.udp_timeout_stream = 1 + v;
		break;
	case 12:
		s.tcp_ignore_invalid_rst = v & 1;
		s.router = (v >> 1) & 1;
		break;
	case 13:
		s.max = z ? v % 8 : s.max;
		break;
	case 14: {
		/* the collector's naive policies, as the benchmarks select them */
		struct ct_gc_policy gp;
		ct_gc_policy_default(&gp);
		gp.lock = (enum ct_gc_lock_policy)(v % 3);
		gp.yield = (v & 4) ? CT_GC_YIELD_EVERY_ROW : CT_GC_YIELD_THROTTLED;
		ct_gc_set_policy(f->t, &gp);
		return;
	}
	default:
		/* detach and attach again: magazines and counters handed back */
		ct_thread_detach(f->thr);
		f->thr = ct_thread_attach(f->t);
		CHECK(f->thr != NULL, "attach");
		return;
	}
	err = ct_ns_set_settings(f->t, z, &s);
	if (err == 0) {
		/* zone 0's max is the table's, over every zone */
		if (s.max && s.max < zone_count(f, z ? z : -1))
			f->max_lowered[z] = true;
		f->set[z] = s;
	} else {
		CHECK(err == -ENOENT && z != 0, "ct_ns_set_settings: %d", err);
	}
}

/* A datagram of slot @s over IPv4 in two fragments. */
static void op_frag(struct fz *f, struct rd *r)
{
	struct pspec ps;
	uint8_t whole[BUF], frag[BUF];
	struct slot *s;
	size_t len, data, first;
	unsigned mode;

	rd_spec(r, &ps);
	s = &f->s[ps.sd & 15];
	if (s->t.l3 != CT_L3_IPV4 || s->t.l4 == 1)
		return;
	len = fz_build_ip(f, s, (ps.sd >> 4) & 1, &ps, whole, 0);
	data = len - 20;
	if (data < 16)
		return;
	first = 8 * (1 + ps.md % ((data - 1) / 8));
	mode = (ps.md >> 4) & 3;
	for (int k = 0; k < 2; k++) {
		int part = mode == 1 ? 1 - k : k;
		size_t off = part ? first : 0, n = part ? data - first : first;
		struct ct_packet pkt;

		if (mode == 2 && part)
			off -= 8, n += 8;        /* overlap */
		if (mode == 3 && part)
			break;                   /* the rest never comes */
		memcpy(frag, whole, 20);
		memcpy(frag + 20, whole + 20 + off, n);
		ts_put16(frag + 2, (uint16_t)(20 + n));
		ts_put16(frag + 6, (uint16_t)((part ? 0 : 0x2000) | (off / 8)));
		ts_ip4_csum(frag);
		ct_parse_frame(&pkt, CT_LINK_RAW, frag, (uint32_t)(20 + n), (uint32_t)(20 + n),
			       f->now);
		pkt.tuple.zone = s->t.zone;
		process_frame_or_fragment_in(f, &pkt, true, frag, (uint32_t)(20 + n));
	}
}

/*
 * A flood: 4 to 512 new tuples shaped like slot @s (its source port, and
 * with k & 1 its destination address too, counting up), in bursts of 16.
 * Enough entries to resize the table, fill overflow rows, meet the chain
 * limit and put the collector under pressure, which single packets of a
 * pool of 16 connections never reach.
 */
static void op_flood(struct fz *f, struct rd *r)
{
	static uint8_t bufs[BURST][BUF];
	struct ct_packet pkts[BURST];
	const struct ct_packet *pp[BURST];
	struct ct_verdict v[BURST];
	struct slot *s = &f->s[rd8(r) % FZ_SLOTS];
	unsigned count = 4u * (1u + (rd8(r) & 127u)), nb = 0;
	uint8_t k = rd8(r);
	struct pspec ps = { 0, (uint8_t)(k >> 1), 0, 0 };

	for (unsigned i = 0; i < count; i++) {
		struct slot q = *s;
		size_t len;

		q.t.sport = (uint16_t)(s->t.sport + i);
		if (k & 1) {
			if (q.t.l3 == CT_L3_IPV4)
				((uint8_t *)&q.t.dst.ip4)[2] ^= (uint8_t)(i >> 4);
			else
				q.t.dst.ip6[14] ^= (uint8_t)(i >> 4);
		}
		len = fz_build_ip(f, &q, 0, &ps, bufs[nb], 1);
		ct_parse_ip(&pkts[nb], bufs[nb], (uint32_t)len, (uint32_t)len, f->now);
		pkts[nb].tuple.zone = s->t.zone;
		pp[nb] = &pkts[nb];
		if (++nb == BURST || i + 1 == count) {
			CHECK(ct_process_burst(f->thr, pp, nb, f->now, v) == 0, "burst");
			for (unsigned j = 0; j < nb; j++)
				fz_check_verdict(f, &pkts[j], &v[j], false);
			nb = 0;
		}
	}
}

static void run(struct fz *f, struct rd *r)
{
	while (r->i < r->n) {
		switch (rd8(r) % OP_COUNT) {
		case OP_PKT:
			op_pkt(f, r);
			break;
		case OP_TIME:
			op_time(f, r);
			break;
		case OP_SEQ: {
			struct slot *s = &f->s[rd8(r) % FZ_SLOTS];
			uint8_t d = rd8(r) & 1;
			s->nxt[d] = rd32(r);
			break;
		}
		case OP_TUPLE:
			op_tuple(f, r);
			break;
		case OP_BURST:
			op_burst(f, r);
			break;
		case OP_GC: {
			struct ct_gc_result res;
			CHECK(ct_gc_step(f->thr, f->now, rd8(r) & 1, &res) == 0, "gc step");
			break;
		}
		case OP_FLUSH:
			op_flush(f, r);
			break;
		case OP_NS_NEW:
			op_ns_new(f, r);
			break;
		case OP_NS_DEL:
			op_ns_del(f, r);
			break;
		case OP_MARK:
			op_mark(f, r);
			break;
		case OP_LOOKUP:
			op_lookup(f, r);
			break;
		case OP_CHECK:
			fz_check_all(f);
			break;
		case OP_RAW:
			op_raw(f, r);
			break;
		case OP_SET:
			op_set(f, r);
			break;
		case OP_FRAG:
			op_frag(f, r);
			break;
		default:
			op_flood(f, r);
			break;
		}
	}
}

/*
 * Tables are reused between inputs.  ct_table_destroy() waits for every
 * pending RCU callback (rcu_barrier), and liburcu's callback thread sleeps
 * 10 ms after each batch, so a fresh table per input would cap the
 * fuzzer at about 100 inputs a second.  Instead a table whose row count
 * is still the one asked for is kept (one per initial row count) and
 * emptied (namespaces torn down, flushed, settings and the knobs fixed at
 * creation put back, collector cursor at 0) for the next input; one that
 * resized is handed to a reaper thread that destroys it in the
 * background (inline when eight are already waiting).
 * FUZZ_TRACK_FRESH=1 in the environment forces a fresh table per input,
 * for reproducing a crash without any history.
 */
static struct ct_table *pool[8];      /* one per initial row count and
				       * RCU flavour */

#define REAP_MAX 8
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct ct_table *q[REAP_MAX];
	unsigned n;
	bool started;
	pthread_t thread;
} reap = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, { 0 }, 0, false, 0 };

static void *reaper(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&reap.lock);
	for (;;) {
		struct ct_table *t;

		while (!reap.n)
			pthread_cond_wait(&reap.cond, &reap.lock);
		t = reap.q[--reap.n];
		pthread_mutex_unlock(&reap.lock);
		ct_table_destroy(t);
		pthread_mutex_lock(&reap.lock);
	}
	return NULL;
}

static void table_retire(struct ct_table *t)
{
	pthread_mutex_lock(&reap.lock);
	if (!reap.started)
		reap.started = pthread_create(&reap.thread, NULL, reaper, NULL) == 0;
	if (reap.started && reap.n < REAP_MAX) {
		reap.q[reap.n++] = t;
		pthread_cond_signal(&reap.cond);
		t = NULL;
	}
	pthread_mutex_unlock(&reap.lock);
	if (t)
		ct_table_destroy(t);
}

static struct ct_table *table_for(const struct ct_table_config *cfg, unsigned idx,
				  ct_time_ns now)
{
	static int fresh = -1;
	struct ct_table *cached;
	struct ct_thread *thr;
	uint16_t ids[3];
	unsigned k = 0;

	if (fresh < 0)
		fresh = getenv("FUZZ_TRACK_FRESH") != NULL;
	cached = pool[idx];
	if (cached && fresh) {
		ct_table_destroy(cached);
		cached = pool[idx] = NULL;
	} else if (cached && ct_table_rows(cached) != cfg->settings.buckets) {
		table_retire(cached);
		cached = pool[idx] = NULL;
	}
	if (!cached) {
		if (ct_table_create(cfg, &pool[idx]) != 0)
			abort();
		return pool[idx];
	}
	thr = ct_thread_attach(cached);
	if (!thr)
		abort();
	ct_table_set_event_handler(cached, NULL, NULL);
	for (uint16_t id = 1; id < FZ_ZONES; id++)
		if (ct_ns_exists(cached, id))
			ids[k++] = id;
	if (k)
		CHECK(ct_ns_destroy(thr, ids, k, now, CT_NS_SYNC) >= 0, "reset: teardown");
	ct_table_flush(thr, -1, now);
	CHECK(ct_ns_set_settings(cached, 0, &cfg->settings) == 0, "reset: settings");
	cached->cfg.max_chain = cfg->max_chain ? cfg->max_chain : 64;
	cached->cfg.resize_load_pct = cfg->resize_load_pct ? cfg->resize_load_pct : 75;
	cached->cfg.labels = cfg->labels;
	cached->cfg.nat = cfg->nat;
	{
		struct ct_gc_policy pol;

		ct_gc_policy_default(&pol);
		ct_gc_set_policy(cached, &pol);
	}
	/* one pass recomputes the rows' due bounds, then start from row 0 */
	CHECK(ct_gc_step(thr, now, 0, NULL) == 0, "reset: gc");
	cached->gc_cursor = 0;
	ct_thread_detach(thr);
	CHECK(ct_table_count(cached) == 0, "reset: table not empty");
	return cached;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rd r = { data, size, 0 };
	struct ct_table_config cfg;
	struct fz f;
	uint8_t h0, h1, h2, h3;
	/* a fixed key: a crash must reproduce from its input alone */
	static const uint8_t key[16] = { 11, 48, 85, 122, 159, 196, 233, 14,
					 51, 88, 125, 162, 199, 236, 17, 54 };

	memset(&f, 0, sizeof(f));
	h0 = rd8(&r);
	h1 = rd8(&r);
	h2 = rd8(&r);
	h3 = rd8(&r);
	ct_table_config_default(&cfg);
	cfg.settings.checksum = h0 & 1;
	cfg.settings.tcp_loose = !(h0 & 2);
	cfg.settings.tcp_be_liberal = (h0 >> 2) & 1;
	cfg.settings.acct = !(h0 & 16);
	cfg.settings.timestamp = (h0 >> 5) & 1;
	cfg.labels = (h0 >> 6) & 1;
	cfg.resize_load_pct = (h0 & 128) ? 101 : h3 ? 1 + h3 % 100 : 0;
	cfg.settings.max = h1 ? 1 + h1 % 48 : 0;
	cfg.settings.buckets = 64u << (h2 & 3);
	cfg.max_chain = (h2 >> 2) & 15;
	/* QSBR: ct_process_burst reports the quiescent state; the harness
	 * thread is otherwise online for the whole input */
	cfg.rcu = (h2 & 64) ? CT_RCU_QSBR : CT_RCU_MEMB;
	cfg.nat = (h2 & 128) != 0;
	cfg.hash_key = key;
	f.now = 1600000000ull * SEC;
	f.t = table_for(&cfg, (h2 & 3) | ((h2 & 64) >> 4), f.now);
	f.thr = ct_thread_attach(f.t);
	f.defrag = ct_defrag_create(0, 0);
	if (!f.thr || !f.defrag)
		abort();
	f.events = !(h0 & 8);
	f.labels = cfg.labels;
	f.nat = cfg.nat;
	if (f.events)
		ct_table_set_event_handler(f.t, on_event, &f);
	f.set[0] = cfg.settings;
	for (unsigned i = 0; i < FZ_SLOTS; i++)
		slot_init(&f.s[i], i);

	run(&f, &r);
	fz_check_all(&f);

	ct_table_set_event_handler(f.t, NULL, NULL);
	ct_defrag_destroy(f.defrag);
	ct_thread_detach(f.thr);
	return 0;
}
