/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ipfix_enc.c - the hand-written IPFIX encoder (tools/ctrack/export/
 * ipfix_enc.c) against libfixbuf, CERT NetSA's IPFIX library, which
 * encoded ctrack's records in phase 1.
 *
 * libfixbuf builds its templates from the information elements' *names*
 * (its own copy of the IANA registry and RFC 5103's reverse elements) and
 * transcodes records from an internal template; the encoder here has its
 * numbers and lengths typed in.  Both encode the same records - random
 * ones, every template, every field at its extremes, the template
 * changing from record to record - and the test compares what a
 * collector would read: each template's field specifiers, and the stream
 * of (template id, record bytes) over all data sets of all messages,
 * with every message's header checked on its own (version, length =
 * its sets, sequence number = data records before it, domain).  The
 * message boundaries themselves may differ between the two (libfixbuf
 * decides fullness its own way); a collector does not care.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <fixbuf/public.h>

#include "export/ipfix_enc.h"

enum { SF_BI = 1, SF_V4 = 2, SF_V6 = 4, SF_PORTS = 8, SF_ICMP = 16, SF_PAD = 32, SF_NAT = 64 };

static fbInfoElementSpec_t spec[] = {
	{ "flowStartMilliseconds", 8, 0 },
	{ "flowEndMilliseconds", 8, 0 },
	{ "octetDeltaCount", 8, 0 },
	{ "packetDeltaCount", 8, 0 },
	{ "reverseOctetDeltaCount", 8, SF_BI },
	{ "reversePacketDeltaCount", 8, SF_BI },
	{ "flowId", 8, 0 },
	{ "sourceIPv6Address", 16, SF_V6 },
	{ "destinationIPv6Address", 16, SF_V6 },
	{ "sourceIPv4Address", 4, SF_V4 },
	{ "destinationIPv4Address", 4, SF_V4 },
	{ "ingressVRFID", 4, 0 },
	{ "sourceTransportPort", 2, SF_PORTS },
	{ "destinationTransportPort", 2, SF_PORTS },
	{ "icmpTypeCodeIPv4", 2, SF_V4 | SF_ICMP },
	{ "icmpTypeCodeIPv6", 2, SF_V6 | SF_ICMP },
	{ "reverseTcpControlBits", 2, SF_BI },
	{ "tcpControlBits", 2, 0 },
	{ "protocolIdentifier", 1, 0 },
	{ "flowEndReason", 1, 0 },
	{ "paddingOctets", 6, SF_PAD },
	/* RFC 8158, by libfixbuf's names */
	{ "postNATSourceIPv4Address", 4, SF_NAT | SF_V4 },
	{ "postNATDestinationIPv4Address", 4, SF_NAT | SF_V4 },
	{ "postNATSourceIPv6Address", 16, SF_NAT | SF_V6 },
	{ "postNATDestinationIPv6Address", 16, SF_NAT | SF_V6 },
	{ "postNAPTSourceTransportPort", 2, SF_NAT | SF_PORTS },
	{ "postNAPTDestinationTransportPort", 2, SF_NAT | SF_PORTS },
	{ "paddingOctets", 4, SF_PAD },
	FB_IESPEC_NULL
};

/* libfixbuf's internal record: the spec above, in memory */
struct fbrec {
	uint64_t start_ms, end_ms, octets, packets, r_octets, r_packets, flow_id;
	uint8_t src6[16], dst6[16];
	uint32_t src4, dst4;
	uint32_t vrf;
	uint16_t sport, dport, icmp4, icmp6, r_tcp_flags, tcp_flags;
	uint8_t proto, reason, pad[6];
	uint32_t nsrc4, ndst4;
	uint8_t nsrc6[16], ndst6[16];
	uint16_t nsport, ndport;
	uint8_t pad2[4];
};
_Static_assert(sizeof(struct fbrec) == 168, "struct fbrec must match the spec");
_Static_assert(offsetof(struct fbrec, nsrc4) == 120, "struct fbrec must match the spec");

/* ---- a stream of messages, read back as a collector reads it ---- */

struct stream {
	uint8_t tmpl[IPFIX_T_COUNT][512];   /* field specifiers by template */
	size_t tmpl_len[IPFIX_T_COUNT];
	uint8_t *recs;                      /* (tid16, record) one after another */
	size_t len, cap;
	uint32_t seq;                       /* data records seen so far */
	unsigned messages;
};

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put(struct stream *s, const void *p, size_t n)
{
	if (s->len + n > s->cap) {
		s->cap = (s->cap + n) * 2;
		s->recs = realloc(s->recs, s->cap);
		assert_non_null(s->recs);
	}
	memcpy(s->recs + s->len, p, n);
	s->len += n;
}

/* One message into @s: checks its header against what came before. */
static void read_msg(struct stream *s, const uint8_t *m, size_t len, uint32_t domain)
{
	size_t off = IPFIX_MSG_HDR;
	uint32_t data = 0;

	assert_true(len >= IPFIX_MSG_HDR);
	assert_int_equal(rd16(m), 10);
	assert_int_equal(rd16(m + 2), len);
	assert_int_equal(rd32(m + 8), s->seq);
	assert_int_equal(rd32(m + 12), domain);
	while (off < len) {
		uint16_t sid = rd16(m + off), sl = rd16(m + off + 2);
		size_t end = off + sl;

		assert_true(sl >= IPFIX_SET_HDR && end <= len);
		off += IPFIX_SET_HDR;
		if (sid == 2) {
			while (off + 4 <= end) {
				uint16_t tid = rd16(m + off), n = rd16(m + off + 2);
				size_t start = off + 4, p = start;

				assert_true(tid >= IPFIX_TID_BASE && tid < IPFIX_TID_BASE + IPFIX_T_COUNT);
				for (unsigned i = 0; i < n; i++)
					p += (rd16(m + p) & 0x8000) ? 8 : 4;
				assert_true(p <= end && p - start < sizeof(s->tmpl[0]));
				memcpy(s->tmpl[tid - IPFIX_TID_BASE], m + start, p - start);
				s->tmpl_len[tid - IPFIX_TID_BASE] = p - start;
				off = p;
			}
		} else {
			unsigned t, rl;

			assert_true(sid >= IPFIX_TID_BASE && sid < IPFIX_TID_BASE + IPFIX_T_COUNT);
			t = sid - IPFIX_TID_BASE;
			assert_true(s->tmpl_len[t] > 0);   /* a template before its data */
			rl = ipfix_enc_rec_len(t);
			/* no padding: whole records fill the set */
			assert_int_equal((end - off) % rl, 0);
			for (; off + rl <= end; off += rl) {
				put(s, &sid, 2);
				put(s, m + off, rl);
				data++;
			}
		}
		off = end;
	}
	s->seq += data;
	s->messages++;
}

/* ---- records ---- */

static uint64_t rnd(uint64_t *st)
{
	*st ^= *st << 13;
	*st ^= *st >> 7;
	*st ^= *st << 17;
	return *st;
}

static void random_rec(uint64_t *st, struct ipfix_rec *r, unsigned i)
{
	uint64_t edge[] = { 0, 1, UINT64_MAX, 0x0102030405060708ull };

	memset(r, 0, sizeof(*r));
	r->tmpl = (uint8_t)(rnd(st) & (IPFIX_T_V6 | IPFIX_T_ICMP | IPFIX_T_NAT));
	/* every fourth record has its counters at an extreme */
	r->start_ms = i % 4 ? rnd(st) : edge[i / 4 % 4];
	r->end_ms = rnd(st);
	r->octets = i % 4 ? rnd(st) : edge[(i / 4 + 1) % 4];
	r->packets = rnd(st) >> (rnd(st) & 63);
	r->r_octets = rnd(st);
	r->r_packets = rnd(st) >> 40;
	r->flow_id = rnd(st);
	for (int k = 0; k < 16; k++) {
		r->src[k] = (uint8_t)rnd(st);
		r->dst[k] = (uint8_t)rnd(st);
	}
	r->vrf = (uint32_t)rnd(st);
	r->sport = (uint16_t)rnd(st);
	r->dport = (uint16_t)rnd(st);
	r->icmp = (uint16_t)rnd(st);
	r->tcp_flags = (uint16_t)(rnd(st) & 0xff);
	r->r_tcp_flags = (uint16_t)(rnd(st) & 0xff);
	r->proto = (uint8_t)rnd(st);
	r->reason = (uint8_t)(1 + rnd(st) % 5);
	for (int k = 0; k < 16; k++) {
		r->nat_src[k] = (uint8_t)rnd(st);
		r->nat_dst[k] = (uint8_t)rnd(st);
	}
	r->nat_sport = (uint16_t)rnd(st);
	r->nat_dport = i % 4 ? (uint16_t)rnd(st) : UINT16_MAX;
}

/* The template bits a record goes out with: its own, less NAT for a
 * session without NAT (the encoder ignores the bit there). */
static unsigned rec_tmpl(const struct ipfix_rec *r, bool nat)
{
	return r->tmpl & (nat ? 0xffu : (unsigned)~IPFIX_T_NAT);
}

static void to_fb(const struct ipfix_rec *r, struct fbrec *f)
{
	memset(f, 0, sizeof(*f));
	if (r->tmpl & IPFIX_T_NAT) {
		if (r->tmpl & IPFIX_T_V6) {
			memcpy(f->nsrc6, r->nat_src, 16);
			memcpy(f->ndst6, r->nat_dst, 16);
		} else {
			f->nsrc4 = rd32(r->nat_src);
			f->ndst4 = rd32(r->nat_dst);
		}
		if (!(r->tmpl & IPFIX_T_ICMP)) {
			f->nsport = r->nat_sport;
			f->ndport = r->nat_dport;
		}
	}
	f->start_ms = r->start_ms;
	f->end_ms = r->end_ms;
	f->octets = r->octets;
	f->packets = r->packets;
	f->r_octets = r->r_octets;
	f->r_packets = r->r_packets;
	f->flow_id = r->flow_id;
	if (r->tmpl & IPFIX_T_V6) {
		memcpy(f->src6, r->src, 16);
		memcpy(f->dst6, r->dst, 16);
		if (r->tmpl & IPFIX_T_ICMP)
			f->icmp6 = r->icmp;
	} else {
		f->src4 = rd32(r->src);           /* libfixbuf takes host order */
		f->dst4 = rd32(r->dst);
		if (r->tmpl & IPFIX_T_ICMP)
			f->icmp4 = r->icmp;
	}
	if (!(r->tmpl & IPFIX_T_ICMP)) {
		f->sport = r->sport;
		f->dport = r->dport;
	}
	f->vrf = r->vrf;
	f->tcp_flags = r->tcp_flags;
	f->r_tcp_flags = r->r_tcp_flags;
	f->proto = r->proto;
	f->reason = r->reason;
}

/* ---- libfixbuf's encoding (as ctrack's phase 1 used it) ---- */

struct fb {
	fbInfoModel_t *model;
	fbSession_t *session;
	fbExporter_t *exp;
	fBuf_t *buf;
	uint8_t msg[65536];
	uint16_t cur;
	bool bi, nat;
};

static void fb_add_tmpl(struct fb *f, bool internal, uint16_t tid, uint32_t flags)
{
	GError *e = NULL;
	fbTemplate_t *t = fbTemplateAlloc(f->model);

	assert_true(fbTemplateAppendSpecArray(t, spec, flags, &e));
	assert_true(fbSessionAddTemplate(f->session, internal, tid, t, &e));
}

static void fb_open(struct fb *f, bool bi, bool nat, uint32_t domain, uint16_t mtu)
{
	uint32_t b = bi ? SF_BI : 0;

	memset(f, 0, sizeof(*f));
	f->bi = bi;
	f->nat = nat;
	f->model = fbInfoModelAlloc();
	f->session = fbSessionAlloc(f->model);
	fbSessionSetDomain(f->session, domain);
	fb_add_tmpl(f, true, 256, UINT32_MAX);
	for (unsigned k = 0; k < (nat ? 16u : 8u); k++) {
		if ((k & IPFIX_T_BI) != (bi ? IPFIX_T_BI : 0u))
			continue;
		fb_add_tmpl(f, false, (uint16_t)(IPFIX_TID_BASE + k),
			    b | ((k & IPFIX_T_V6) ? SF_V6 : SF_V4) |
			    ((k & IPFIX_T_ICMP) ? SF_ICMP : SF_PORTS) |
			    ((k & IPFIX_T_NAT) ? SF_NAT : 0));
	}
	f->exp = fbExporterAllocBuffer(f->msg, mtu);
	f->buf = fBufAllocForExport(f->session, f->exp);
	fBufSetAutomaticMode(f->buf, FALSE);
	assert_true(fBufSetInternalTemplate(f->buf, 256, NULL));
}

static void fb_emit(struct fb *f, struct stream *s, uint32_t domain)
{
	GError *e = NULL;

	assert_true(fBufEmit(f->buf, &e));
	if (fbExporterGetMsgLen(f->exp) > 0)
		read_msg(s, f->msg, fbExporterGetMsgLen(f->exp), domain);
	assert_true(fBufSetInternalTemplate(f->buf, 256, NULL));
	if (f->cur)
		assert_true(fBufSetExportTemplate(f->buf, f->cur, NULL));
}

static void fb_templates(struct fb *f, struct stream *s, uint32_t domain)
{
	GError *e = NULL;

	if (!fbSessionExportTemplates(f->session, &e)) {
		assert_true(g_error_matches(e, FB_ERROR_DOMAIN, FB_ERROR_EOM));
		g_clear_error(&e);
		assert_true(fbSessionExportTemplates(f->session, &e));
	}
	fb_emit(f, s, domain);
}

static void fb_append(struct fb *f, struct stream *s, const struct ipfix_rec *r,
		      uint32_t domain)
{
	struct fbrec fr;
	uint16_t tid = (uint16_t)(IPFIX_TID_BASE + (f->bi ? IPFIX_T_BI : 0) + rec_tmpl(r, f->nat));
	GError *e = NULL;

	to_fb(r, &fr);
	if (tid != f->cur) {
		f->cur = tid;
		assert_true(fBufSetExportTemplate(f->buf, tid, NULL));
	}
	for (int tries = 0; tries < 3; tries++) {
		if (fBufAppend(f->buf, (uint8_t *)&fr, sizeof(fr), &e))
			return;
		assert_true(g_error_matches(e, FB_ERROR_DOMAIN, FB_ERROR_EOM));
		g_clear_error(&e);
		fb_emit(f, s, domain);
	}
	fail_msg("libfixbuf did not take the record");
}

static void fb_close(struct fb *f)
{
	fBufFree(f->buf);
	fbInfoModelFree(f->model);
}

/* ---- the comparison ---- */

static void compare(bool bi, bool nat, uint32_t mtu, unsigned n, uint64_t seed)
{
	static struct fb f;
	struct stream a = { 0 }, b = { 0 };
	struct ipfix_enc e;
	uint8_t *buf = malloc(mtu), tbuf[IPFIX_TMPL_MSG_MAX];
	uint32_t domain = (uint32_t)(seed * 2654435761u);
	size_t len;

	assert_non_null(buf);
	ipfix_enc_init(&e, buf, mtu, domain, bi, nat);
	len = ipfix_enc_templates(&e, tbuf, sizeof(tbuf), 1700000000u);
	assert_true(len > 0);
	read_msg(&a, tbuf, len, domain);
	fb_open(&f, bi, nat, domain, (uint16_t)mtu);
	fb_templates(&f, &b, domain);
	for (unsigned i = 0; i < n; i++) {
		struct ipfix_rec r;

		random_rec(&seed, &r, i);
		if (!ipfix_enc_add(&e, &r)) {
			len = ipfix_enc_finish(&e, 1700000000u);
			assert_true(len > 0 && len <= mtu);
			read_msg(&a, buf, len, domain);
			assert_true(ipfix_enc_add(&e, &r));
		}
		fb_append(&f, &b, &r, domain);
	}
	len = ipfix_enc_finish(&e, 1700000000u);
	if (len)
		read_msg(&a, buf, len, domain);
	fb_emit(&f, &b, domain);
	/* the same four (eight) templates, field for field */
	for (unsigned t = 0; t < IPFIX_T_COUNT; t++) {
		bool mine = bi == !!(t & IPFIX_T_BI) && (nat || !(t & IPFIX_T_NAT));

		assert_int_equal(a.tmpl_len[t], mine ? b.tmpl_len[t] : 0);
		assert_int_equal(b.tmpl_len[t] > 0, mine);
		if (mine)
			assert_memory_equal(a.tmpl[t], b.tmpl[t], a.tmpl_len[t]);
	}
	/* the same records, byte for byte, in the same order */
	assert_int_equal(a.seq, n);
	assert_int_equal(b.seq, n);
	assert_int_equal(a.len, b.len);
	assert_memory_equal(a.recs, b.recs, a.len);
	fb_close(&f);
	free(a.recs);
	free(b.recs);
	free(buf);
}

static void biflows_over_udp_equal_libfixbuf(void **st)
{
	(void)st;
	compare(true, false, 1400, 5000, 1);
}

static void uniflows_over_udp_equal_libfixbuf(void **st)
{
	(void)st;
	compare(false, false, 1400, 5000, 2);
}

/* NAT sessions: plain and NAT records mixed, eight templates */
static void nat_biflows_and_uniflows_equal_libfixbuf(void **st)
{
	(void)st;
	compare(true, true, 1400, 5000, 11);
	compare(false, true, 1400, 5000, 12);
	compare(true, true, 16384, 20000, 13);
}

static void the_smallest_and_largest_messages_equal_libfixbuf(void **st)
{
	(void)st;
	compare(true, false, 512, 2000, 3);
	compare(false, false, 512, 2000, 4);
	compare(true, false, 16384, 20000, 5);   /* TCP's message size */
	compare(false, true, 512, 2000, 6);
}

/* A NAT session's eight biflow templates (692 bytes) do not fit a
 * 512-byte message; its two halves do, and together they are the same
 * template records as the whole message, in the same order. */
static void nat_templates_split_into_two_messages_when_needed(void **st)
{
	uint8_t buf[512], whole[IPFIX_TMPL_MSG_MAX], part[2][512];
	struct ipfix_enc e;
	size_t lw, l0, l1;

	(void)st;
	ipfix_enc_init(&e, buf, sizeof(buf), 7, true, true);
	lw = ipfix_enc_templates(&e, whole, sizeof(whole), 0);
	assert_true(lw > 512);
	assert_int_equal(ipfix_enc_templates(&e, part[0], 512, 0), 0);
	l0 = ipfix_enc_templates_part(&e, 0, part[0], 512, 0);
	l1 = ipfix_enc_templates_part(&e, 1, part[1], 512, 0);
	assert_true(l0 > 0 && l1 > 0);
	assert_int_equal(l0 + l1 - 2 * (IPFIX_MSG_HDR + IPFIX_SET_HDR),
			 lw - (IPFIX_MSG_HDR + IPFIX_SET_HDR));
	assert_memory_equal(part[0] + 20, whole + 20, l0 - 20);
	assert_memory_equal(part[1] + 20, whole + l0, l1 - 20);
	/* a session without NAT has no second half */
	ipfix_enc_init(&e, buf, sizeof(buf), 7, true, false);
	assert_int_equal(ipfix_enc_templates_part(&e, 1, part[1], 512, 0), 0);
}

static void a_full_message_takes_no_record_and_loses_none(void **st)
{
	uint8_t buf[512];
	struct ipfix_enc e;
	struct ipfix_rec r;
	uint64_t seed = 9;
	unsigned added = 0, msgs = 0;

	(void)st;
	ipfix_enc_init(&e, buf, sizeof(buf), 7, true, true);
	assert_int_equal(ipfix_enc_finish(&e, 0), 0);   /* nothing to send */
	for (unsigned i = 0; i < 100; i++) {
		random_rec(&seed, &r, i);
		if (!ipfix_enc_add(&e, &r)) {
			size_t len = ipfix_enc_finish(&e, 0);

			assert_true(len > IPFIX_MSG_HDR && len <= sizeof(buf));
			msgs++;
			assert_true(ipfix_enc_add(&e, &r));
		}
		added++;
	}
	assert_true(ipfix_enc_finish(&e, 0) > 0);
	assert_int_equal(e.seq, added);
	assert_true(msgs >= 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(biflows_over_udp_equal_libfixbuf),
		cmocka_unit_test(uniflows_over_udp_equal_libfixbuf),
		cmocka_unit_test(nat_biflows_and_uniflows_equal_libfixbuf),
		cmocka_unit_test(the_smallest_and_largest_messages_equal_libfixbuf),
		cmocka_unit_test(nat_templates_split_into_two_messages_when_needed),
		cmocka_unit_test(a_full_message_takes_no_record_and_loses_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
