/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_defrag.c - ct_defrag: reassembly as nf_defrag_ipv4/ipv6 do it.
 *
 * Captures: the datagrams tshark reassembles (counts and lengths quoted
 * from tshark next to each test) must come out whole, with the lengths
 * conntrack would count - in ../shared/pcaps (the "shared" group) and in
 * the project's crafted captures (tests/captures/crafted, the default
 * group; lengths and counts as craft.py cut the datagrams, tshark
 * reassembles them the same, check_captures.py).  Synthetic fragments: the kernel rules each test
 * names (inet_frag_queue_insert overlaps and duplicates, ip_frag_queue /
 * nf_ct_frag6_queue end checks, ip_frag_ecn_table, keys, timeouts,
 * memory limit).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>

#include "ctrack/defrag.h"
#include "ctrack/packet.h"
#include "pcap_util.h"
#include "support/csum.h"
#include "support/wire.h"

#define SEC 1000000000ull

static void load(struct tcap *tc, const char *name)
{
	if (!tcap_load(tc, name))
		fail_msg("cannot open %s: %s", name, tc->err);
}

struct result {
	size_t frame;           /* 0-based index of the completing frame */
	struct ct_packet pkt;
	uint8_t copy[128];      /* first bytes of the datagram */
};

/* Parse and defragment a whole capture; keep the completed datagrams. */
static size_t run_capture(const char *name, struct result *res, size_t max,
			  struct ct_defrag_stats *st)
{
	struct tcap tc;
	struct ct_defrag *d = ct_defrag_create(0, 0);
	size_t n = 0;

	assert_non_null(d);
	load(&tc, name);
	for (size_t i = 0; i < tc.n; i++) {
		struct ct_packet pkt, out;

		if (tcap_parse(&tc, i, &pkt) != CT_PKT_FRAGMENT)
			continue;
		if (ct_defrag_feed(d, &pkt, pkt.ts, &out) != 1)
			continue;
		if (res && n < max) {
			res[n].frame = i;
			res[n].pkt = out;
			memcpy(res[n].copy, out.l3,
			       out.l3_len < 128 ? out.l3_len : 128);
		}
		n++;
	}
	if (st)
		ct_defrag_get_stats(d, st);
	ct_defrag_destroy(d);
	tcap_free(&tc);
	return n;
}

/*
 * tshark -r ndpi__dns_fragmented.pcap -T fields -e frame.number -e ip.id
 *   -e ipv6.fraghdr.ident -e ip.reassembled.length -e ipv6.reassembled.length
 *   -e udp.srcport -e udp.dstport  (reassembling frames only):
 *    3  IPv4 0xd0fe  1710  53 56680
 *    6  IPv6 0x28403c0b  1509  53 46433
 *    9  IPv6 0x247f0cb3  1498  53 63369
 *   12  IPv4 0xe211  1498  53 59464
 *   17  IPv4 0x893c  1710  53 59330
 *   39  IPv6 0x0000069a  1738  53 55729
 *   42  IPv4 0xdca5  1738  53 51791
 * The reassembled length is the fragmentable part; conntrack counts the
 * datagram: + 20 (IPv4 header) or + 40 (IPv6 header; the fragment header
 * is gone).  tshark -o udp.check_checksum:TRUE gives status 1 (good) for
 * all seven reassembled UDP checksums.
 */
static void test_dns_responses_reassemble_to_tshark_lengths(void **state)
{
	static const struct {
		size_t frame; uint8_t l3; uint32_t len; uint16_t dport;
	} want[7] = {
		{ 3, CT_L3_IPV4, 20 + 1710, 56680 },
		{ 6, CT_L3_IPV6, 40 + 1509, 46433 },
		{ 9, CT_L3_IPV6, 40 + 1498, 63369 },
		{ 12, CT_L3_IPV4, 20 + 1498, 59464 },
		{ 17, CT_L3_IPV4, 20 + 1710, 59330 },
		{ 39, CT_L3_IPV6, 40 + 1738, 55729 },
		{ 42, CT_L3_IPV4, 20 + 1738, 51791 },
	};
	struct result *res = calloc(16, sizeof(*res));
	struct ct_defrag_stats st;
	uint8_t a6[16];

	(void)state;
	assert_int_equal(run_capture("ndpi__dns_fragmented.pcap", res, 16, &st),
			 7);
	assert_int_equal(inet_pton(AF_INET6, "2001:470:765b::a25:53", a6), 1);
	for (int i = 0; i < 7; i++) {
		const struct ct_packet *p = &res[i].pkt;

		assert_int_equal(res[i].frame + 1, want[i].frame);
		assert_int_equal(p->kind, CT_PKT_TRACKABLE);
		assert_false(p->is_fragment);
		assert_int_equal(p->tuple.l3, want[i].l3);
		assert_int_equal(p->tuple.l4, 17);
		assert_int_equal(p->l3_len, want[i].len);
		assert_int_equal(p->tuple.sport, 53);
		assert_int_equal(p->tuple.dport, want[i].dport);
		if (want[i].l3 == CT_L3_IPV4)
			assert_int_equal(p->tuple.src.ip4,
					 tip4(193, 24, 227, 238));
		else
			assert_memory_equal(p->tuple.src.ip6, a6, 16);
		/* the fragment header is gone from the IPv6 datagram */
		if (want[i].l3 == CT_L3_IPV6) {
			assert_int_equal(res[i].copy[6], 17);
			assert_int_equal(p->l3_hdr_len, 40);
		}
	}
	assert_int_equal(st.fragments, 14);
	assert_int_equal(st.reassembled, 7);
	assert_int_equal(st.overlaps + st.timeouts + st.bad + st.evicted, 0);
	free(res);
}

/* The same datagrams pass the L4 checksum (so every byte landed where it
 * belongs). */
static void test_reassembled_datagrams_have_good_udp_checksums(void **state)
{
	struct tcap tc;
	struct ct_defrag *d = ct_defrag_create(0, 0);
	unsigned good = 0;

	(void)state;
	load(&tc, "ndpi__dns_fragmented.pcap");
	for (size_t i = 0; i < tc.n; i++) {
		struct ct_packet pkt, out;

		if (tcap_parse(&tc, i, &pkt) == CT_PKT_FRAGMENT &&
		    ct_defrag_feed(d, &pkt, pkt.ts, &out) == 1) {
			assert_false(out.truncated);
			assert_true(ct_packet_l4_csum_ok(&out));
			good++;
		}
	}
	assert_int_equal(good, 7);
	ct_defrag_destroy(d);
	tcap_free(&tc);
}

/*
 * tshark -r FILE -Y 'ip.reassembled.length || ipv6.reassembled.length'
 *   | wc -l  ->  tcpdump__afs.pcap 51, zeek__gtp1_gn_normal_incl_
 *   fragmentation.pcap 36, zeek__dns-edns-ecs.pcap 4.
 */
static void test_reassembly_counts_match_tshark(void **state)
{
	(void)state;
	assert_int_equal(run_capture("tcpdump__afs.pcap", NULL, 0, NULL), 51);
	assert_int_equal(run_capture(
		"zeek__gtp1_gn_normal_incl_fragmentation.pcap", NULL, 0, NULL),
		36);
	assert_int_equal(run_capture("zeek__dns-edns-ecs.pcap", NULL, 0, NULL),
			 4);
}

/*
 * tshark -r zeek__fragmented-4.pcap -o ip.defragment:FALSE -T fields
 *        -e ip.flags.mf -e ip.frag_offset -e ip.len   (id 0 throughout)
 *   2: MF off 0 len 44  -> bytes [0, 24)
 *   3: MF off 6 len 44  -> [48, 72)
 *   4:    off 9 len 37  -> [72, 89), last; it joins 3's run: [48, 89)
 *   5: MF off 3 len 68  -> [24, 72): overlaps the run [48, 89) without
 *      lying inside it.  Wireshark reassembles anyway; Linux
 *      (inet_frag_queue_insert, RFC 5722) drops the whole datagram.
 */
static void test_overlapping_fragment_drops_the_datagram(void **state)
{
	struct ct_defrag_stats st;

	(void)state;
	assert_int_equal(run_capture("zeek__fragmented-4.pcap", NULL, 0, &st),
			 0);
	assert_int_equal(st.fragments, 4);
	assert_int_equal(st.overlaps, 1);
	assert_int_equal(st.reassembled, 0);
}

/*
 * suricata__defrag-af-confusion-spray-h8.pcap: tshark reassembles 8192
 * datagrams; 16 of them have a multicast IPv6 source
 * (-Y '(ipv6.reassembled.length) && ipv6.src[0]==0xff' | wc -l -> 16),
 * whose fragments ip6_rcv_core drops.  The 4080 other IPv6 ones carry a
 * UDP length of 22873 in 16 bytes (-e udp.length: "16 22873" x 4096), so
 * they come out invalid (udp_error).
 */
static void test_address_family_confusion_spray(void **state)
{
	struct tcap tc;
	struct ct_defrag *d = ct_defrag_create(0, 0);
	unsigned v4 = 0, v6_bad_len = 0;

	(void)state;
	load(&tc, "suricata__defrag-af-confusion-spray-h8.pcap");
	for (size_t i = 0; i < tc.n; i++) {
		struct ct_packet pkt, out;

		if (tcap_parse(&tc, i, &pkt) != CT_PKT_FRAGMENT ||
		    ct_defrag_feed(d, &pkt, pkt.ts, &out) != 1)
			continue;
		if (out.tuple.l3 == CT_L3_IPV4) {
			assert_int_equal(out.kind, CT_PKT_TRACKABLE);
			assert_int_equal(out.tuple.l4, 44);
			v4++;
		} else {
			assert_int_equal(out.kind, CT_PKT_INVALID);
			assert_int_equal(out.reason, CT_PR_UDP_BAD_LEN);
			v6_bad_len++;
		}
	}
	assert_int_equal(v4 + v6_bad_len, 8192 - 16);
	assert_int_equal(v6_bad_len, 4096 - 16);
	ct_defrag_destroy(d);
	tcap_free(&tc);
}

/* Every fragment of @files through one reassembler each: nothing
 * crashes, every result is a sane packet, every fragment is counted. */
static void check_fragment_files(const char *const *files, size_t n_files)
{
	for (size_t f = 0; f < n_files; f++) {
		struct tcap tc;
		struct ct_defrag *d = ct_defrag_create(64 * 1024, 0);
		struct ct_defrag_stats st;
		uint64_t fed = 0;

		load(&tc, files[f]);
		for (size_t i = 0; i < tc.n; i++) {
			struct ct_packet pkt, out;

			if (tcap_parse(&tc, i, &pkt) != CT_PKT_FRAGMENT)
				continue;
			fed++;
			if (ct_defrag_feed(d, &pkt, pkt.ts, &out) != 1)
				continue;
			assert_true(out.kind <= CT_PKT_UNSUPPORTED_LINK);
			if (out.kind == CT_PKT_TRACKABLE) {
				assert_true(out.l3_len <= 40 + 65535);
				assert_true(out.l4_caplen <= out.l4_len);
			}
		}
		ct_defrag_get_stats(d, &st);
		assert_int_equal(st.fragments, fed);
		ct_defrag_destroy(d);
		tcap_free(&tc);
	}
}

/* Hostile captures: nothing crashes, every result is a sane packet. */
static void test_hostile_fragment_captures_do_not_break_it(void **state)
{
	static const char *const files[] = {
		"ndpi__ip_fragmented_garbage.pcap",
		"suricata__frag-22.pcap",
		"suricata__denial6-6.pcap",
		"zeek__fragmented-4.pcap",
		"ndpi__dns_fragmented.pcap",
		"zeek__gtp1_gn_normal_incl_fragmentation.pcap",
	};

	(void)state;
	check_fragment_files(files, sizeof(files) / sizeof(files[0]));
}

/* ---- the project's own captures (craft.py) ---- */

/*
 * frag-datagrams.pcap: UDP answers from 192.0.2.53:53 / 2001:db8::53:53,
 * each after its query; the reassembled datagrams complete at frames (UDP
 * length; tshark -Y 'ip.reassembled.length || ipv6.reassembled.length'):
 *    3  IPv4 1710 -> 56680  (2 fragments, in order)
 *    6  IPv6 1509 -> 46433  (2, in order)
 *    9  IPv6 1498 -> 63369  (2, reversed)
 *   13  IPv4 1498 -> 59464  (3, order 2 3 1)
 *   18  IPv4 1710 -> 59330  (interleaved with the next)
 *   19  IPv6 1738 -> 55729  (behind a hop-by-hop header)
 *   23  IPv4 1738 -> 51791  (the first fragment sent twice)
 * 16 fragments in all; conntrack counts the datagram: + 20 (IPv4) or + 40
 * (+ 8 for the hop-by-hop header; the fragment header is gone).
 */
static void test_own_answers_reassemble_to_their_lengths(void **state)
{
	static const struct {
		size_t frame; uint8_t l3; uint32_t len; uint16_t hdr, dport;
	} want[7] = {
		{ 3, CT_L3_IPV4, 20 + 1710, 20, 56680 },
		{ 6, CT_L3_IPV6, 40 + 1509, 40, 46433 },
		{ 9, CT_L3_IPV6, 40 + 1498, 40, 63369 },
		{ 13, CT_L3_IPV4, 20 + 1498, 20, 59464 },
		{ 18, CT_L3_IPV4, 20 + 1710, 20, 59330 },
		{ 19, CT_L3_IPV6, 48 + 1738, 48, 55729 },
		{ 23, CT_L3_IPV4, 20 + 1738, 20, 51791 },
	};
	struct result *res = calloc(16, sizeof(*res));
	struct ct_defrag_stats st;
	uint8_t a6[16];

	(void)state;
	assert_int_equal(run_capture(OWN("frag-datagrams.pcap"), res, 16, &st), 7);
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::53", a6), 1);
	for (int i = 0; i < 7; i++) {
		const struct ct_packet *p = &res[i].pkt;

		assert_int_equal(res[i].frame + 1, want[i].frame);
		assert_int_equal(p->kind, CT_PKT_TRACKABLE);
		assert_false(p->is_fragment);
		assert_int_equal(p->tuple.l3, want[i].l3);
		assert_int_equal(p->tuple.l4, 17);
		assert_int_equal(p->l3_len, want[i].len);
		assert_int_equal(p->l3_hdr_len, want[i].hdr);
		assert_int_equal(p->tuple.sport, 53);
		assert_int_equal(p->tuple.dport, want[i].dport);
		if (want[i].l3 == CT_L3_IPV4) {
			assert_int_equal(p->tuple.src.ip4, tip4(192, 0, 2, 53));
		} else {
			assert_memory_equal(p->tuple.src.ip6, a6, 16);
			/* the fragment header is gone: the header in front
			 * of it now names UDP */
			assert_int_equal(res[i].copy[want[i].hdr == 48 ? 40 : 6], 17);
		}
	}
	assert_int_equal(st.fragments, 16);
	assert_int_equal(st.reassembled, 7);
	assert_int_equal(st.overlaps + st.timeouts + st.bad + st.evicted, 0);
	free(res);
}

/* The same datagrams pass the UDP checksum craft.py computed over them
 * whole (so every byte landed where it belongs). */
static void test_own_reassembled_datagrams_have_good_udp_checksums(void **state)
{
	struct tcap tc;
	struct ct_defrag *d = ct_defrag_create(0, 0);
	unsigned good = 0;

	(void)state;
	load(&tc, OWN("frag-datagrams.pcap"));
	for (size_t i = 0; i < tc.n; i++) {
		struct ct_packet pkt, out;

		if (tcap_parse(&tc, i, &pkt) == CT_PKT_FRAGMENT &&
		    ct_defrag_feed(d, &pkt, pkt.ts, &out) == 1) {
			assert_false(out.truncated);
			assert_true(ct_packet_l4_csum_ok(&out));
			good++;
		}
	}
	assert_int_equal(good, 7);
	ct_defrag_destroy(d);
	tcap_free(&tc);
}

/*
 * tshark reassembles 7 datagrams in frag-datagrams.pcap and 256 in
 * frag-af-spray.pcap, 8 of these with a multicast IPv6 source, whose
 * fragments ip6_rcv_core drops: 248.
 */
static void test_own_reassembly_counts_match_tshark(void **state)
{
	(void)state;
	assert_int_equal(run_capture(OWN("frag-datagrams.pcap"), NULL, 0, NULL), 7);
	assert_int_equal(run_capture(OWN("frag-af-spray.pcap"), NULL, 0, NULL),
			 256 - 8);
}

/*
 * frag-overlap.pcap (id 0 throughout; tshark -o ip.defragment:FALSE):
 *   2: MF off 0 len 44  -> bytes [0, 24)
 *   3: MF off 6 len 44  -> [48, 72)
 *   4:    off 9 len 37  -> [72, 89), last; it joins 3's run: [48, 89)
 *   5: MF off 3 len 68  -> [24, 72): overlaps the run [48, 89) without
 *      lying inside it: Linux drops the whole datagram;
 *   6: MF off 3 len 44  -> [24, 48), the hole: it would complete the
 *      datagram had its queue survived; it starts a new one instead.
 */
static void test_own_overlapping_fragment_drops_the_datagram(void **state)
{
	struct ct_defrag_stats st;

	(void)state;
	assert_int_equal(run_capture(OWN("frag-overlap.pcap"), NULL, 0, &st), 0);
	assert_int_equal(st.fragments, 5);
	assert_int_equal(st.overlaps, 1);
	assert_int_equal(st.reassembled, 0);
}

/*
 * frag-af-spray.pcap: 128 IPv4 datagrams of protocol 44 and 128 IPv6 ones
 * with the same ids, two fragments each; the IPv6 ones claim a UDP length
 * of 22873 in 16 bytes (udp_error), 8 of them from a multicast source.
 */
static void test_own_address_family_confusion_spray(void **state)
{
	struct tcap tc;
	struct ct_defrag *d = ct_defrag_create(0, 0);
	unsigned v4 = 0, v6_bad_len = 0;

	(void)state;
	load(&tc, OWN("frag-af-spray.pcap"));
	assert_int_equal(tc.n, 512);
	for (size_t i = 0; i < tc.n; i++) {
		struct ct_packet pkt, out;

		if (tcap_parse(&tc, i, &pkt) != CT_PKT_FRAGMENT ||
		    ct_defrag_feed(d, &pkt, pkt.ts, &out) != 1)
			continue;
		if (out.tuple.l3 == CT_L3_IPV4) {
			assert_int_equal(out.kind, CT_PKT_TRACKABLE);
			assert_int_equal(out.tuple.l4, 44);
			v4++;
		} else {
			assert_int_equal(out.kind, CT_PKT_INVALID);
			assert_int_equal(out.reason, CT_PR_UDP_BAD_LEN);
			v6_bad_len++;
		}
	}
	assert_int_equal(v4, 128);
	assert_int_equal(v6_bad_len, 128 - 8);
	ct_defrag_destroy(d);
	tcap_free(&tc);
}

/* The project's fragment captures: nothing breaks, every result sane. */
static void test_own_fragment_captures_do_not_break_it(void **state)
{
	static const char *const files[] = {
		OWN("frag-af-spray.pcap"), OWN("frag-overlap.pcap"),
		OWN("frag-datagrams.pcap"), OWN("frag-ip6-first.pcap"),
		OWN("ip-total-len-beyond-frame.pcap"),
		CAPTURES_DIR "/kernel/udp_fragments/capture.pcap",
		CAPTURES_DIR "/kernel/mtu_small/capture.pcap",
	};

	(void)state;
	check_fragment_files(files, sizeof(files) / sizeof(files[0]));
}

/* ---- synthetic fragments ---- */

/* The datagram being cut: UDP 1111 -> 2222, @len bytes, known pattern. */
static void payload(uint8_t *u, size_t len)
{
	for (size_t i = 0; i < len; i++)
		u[i] = (uint8_t)(i * 29 + 3);
	ts_put16(u, 1111);
	ts_put16(u + 2, 2222);
	ts_put16(u + 4, (uint32_t)len);
	u[6] = u[7] = 0;
}

struct frame {
	uint8_t b[1600];
	uint32_t len;
};

/* IPv4 fragment of @dgram: bytes [off, off + n), proto 17, id @id. */
static void frag4(struct frame *f, const uint8_t *dgram, uint32_t off,
		  uint32_t n, bool more, uint16_t id, uint8_t tos)
{
	uint8_t *p = f->b;

	memset(p, 0, 20);
	p[0] = 0x45;
	p[1] = tos;
	ts_put16(p + 2, 20 + n);
	ts_put16(p + 4, id);
	ts_put16(p + 6, (more ? 0x2000 : 0) | (off / 8));
	p[8] = 64;
	p[9] = 17;
	p[12] = 10; p[15] = 1;
	p[16] = 10; p[19] = 2;
	ts_ip4_csum(p);
	memcpy(p + 20, dgram + off, n);
	f->len = 20 + n;
}

/* IPv6 fragment, optionally behind an 8-byte destination-options header
 * (unfragmentable part). */
static void frag6(struct frame *f, const uint8_t *dgram, uint32_t off,
		  uint32_t n, bool more, uint32_t id, bool dstopts)
{
	uint8_t *p = f->b, *fh;
	uint32_t h = dstopts ? 8 : 0;

	memset(p, 0, 48 + h);
	p[0] = 0x60;
	ts_put16(p + 4, h + 8 + n);
	p[6] = dstopts ? 60 : 44;
	p[7] = 64;
	p[8] = 0x20; p[9] = 0x01; p[10] = 0x0d; p[11] = 0xb8; p[23] = 1;
	p[24] = 0x20; p[25] = 0x01; p[26] = 0x0d; p[27] = 0xb8; p[39] = 2;
	if (dstopts) {
		p[40] = 44;             /* next: fragment */
		p[41] = 0;
		p[42] = 1;              /* PadN, 4 bytes */
		p[43] = 4;
	}
	fh = p + 40 + h;
	fh[0] = 17;
	ts_put16(fh + 2, off | (more ? 1 : 0));
	fh[4] = (uint8_t)(id >> 24);
	fh[5] = (uint8_t)(id >> 16);
	fh[6] = (uint8_t)(id >> 8);
	fh[7] = (uint8_t)id;
	memcpy(fh + 8, dgram + off, n);
	f->len = 48 + h + n;
}

static int feed(struct ct_defrag *d, const struct frame *f, uint64_t now,
		struct ct_packet *out)
{
	struct ct_packet pkt;

	assert_int_equal(ct_parse_ip(&pkt, f->b, f->len, f->len, now),
			 CT_PKT_FRAGMENT);
	return ct_defrag_feed(d, &pkt, now, out);
}

static void test_in_order_and_reverse_order_give_the_same_datagram(void **state)
{
	uint8_t dg[40];
	struct frame f[3];
	struct ct_packet out;
	struct ct_defrag *d = ct_defrag_create(0, 0);

	(void)state;
	payload(dg, sizeof(dg));
	frag4(&f[0], dg, 0, 16, true, 7, 0);
	frag4(&f[1], dg, 16, 16, true, 7, 0);
	frag4(&f[2], dg, 32, 8, false, 7, 0);

	assert_int_equal(feed(d, &f[0], 0, &out), 0);
	assert_int_equal(feed(d, &f[1], 0, &out), 0);
	assert_int_equal(feed(d, &f[2], 0, &out), 1);
	assert_int_equal(out.kind, CT_PKT_TRACKABLE);
	assert_int_equal(out.l3_len, 60);
	assert_int_equal(out.tuple.sport, 1111);
	assert_int_equal(out.tuple.dport, 2222);
	assert_memory_equal(out.l4, dg, sizeof(dg));
	assert_int_equal(out.l3[6] & 0x3f, 0);          /* no MF, offset 0 */

	assert_int_equal(feed(d, &f[2], SEC, &out), 0);
	assert_int_equal(feed(d, &f[1], SEC, &out), 0);
	assert_int_equal(feed(d, &f[0], SEC, &out), 1);
	assert_memory_equal(out.l4, dg, sizeof(dg));
	assert_int_equal(out.ts, SEC);
	ct_defrag_destroy(d);
}

/* A fragment that lies inside what is already queued is a duplicate:
 * dropped alone, the datagram still completes. */
static void test_duplicate_fragment_is_dropped_alone(void **state)
{
	uint8_t dg[48];
	struct frame a, b, c, dup;
	struct ct_packet out;
	struct ct_defrag *d = ct_defrag_create(0, 0);
	struct ct_defrag_stats st;

	(void)state;
	payload(dg, sizeof(dg));
	frag4(&a, dg, 0, 16, true, 9, 0);
	frag4(&b, dg, 16, 16, true, 9, 0);
	frag4(&c, dg, 32, 16, false, 9, 0);
	frag4(&dup, dg, 8, 16, true, 9, 0);     /* [8,24) inside run [0,32) */
	assert_int_equal(feed(d, &a, 0, &out), 0);
	assert_int_equal(feed(d, &b, 0, &out), 0);
	assert_int_equal(feed(d, &a, 0, &out), 0);
	assert_int_equal(feed(d, &dup, 0, &out), 0);
	assert_int_equal(feed(d, &c, 0, &out), 1);
	assert_memory_equal(out.l4, dg, sizeof(dg));
	ct_defrag_get_stats(d, &st);
	assert_int_equal(st.overlaps, 0);
	assert_int_equal(st.reassembled, 1);
	ct_defrag_destroy(d);
}

/* Two runs [0,16) and [32,48) then [8,24): it lies across the gap, so it
 * is an overlap (not inside one run) and the datagram is dropped, for
 * IPv4 and IPv6 alike. */
static void test_partial_overlap_drops_the_datagram(void **state)
{
	uint8_t dg[48];
	struct frame f[4];
	struct ct_packet out;
	struct ct_defrag *d = ct_defrag_create(0, 0);
	struct ct_defrag_stats st;

	(void)state;
	payload(dg, sizeof(dg));
	frag4(&f[0], dg, 0, 16, true, 3, 0);
	frag4(&f[1], dg, 32, 16, false, 3, 0);
	frag4(&f[2], dg, 8, 16, true, 3, 0);
	frag4(&f[3], dg, 16, 16, true, 3, 0);
	assert_int_equal(feed(d, &f[0], 0, &out), 0);
	assert_int_equal(feed(d, &f[1], 0, &out), 0);
	assert_int_equal(feed(d, &f[2], 0, &out), 0);
	/* the queue is gone: the missing middle alone completes nothing */
	assert_int_equal(feed(d, &f[3], 0, &out), 0);
	ct_defrag_get_stats(d, &st);
	assert_int_equal(st.overlaps, 1);

	frag6(&f[0], dg, 0, 16, true, 5, false);
	frag6(&f[1], dg, 32, 16, false, 5, false);
	frag6(&f[2], dg, 8, 16, true, 5, false);
	assert_int_equal(feed(d, &f[0], 0, &out), 0);
	assert_int_equal(feed(d, &f[1], 0, &out), 0);
	assert_int_equal(feed(d, &f[2], 0, &out), 0);
	ct_defrag_get_stats(d, &st);
	assert_int_equal(st.overlaps, 2);
	ct_defrag_destroy(d);
}

/* IPv6: the fragment header disappears, an unfragmentable destination
 * options header stays, Next Header is patched. */
static void test_ipv6_reassembly_removes_the_fragment_header(void **state)
{
	uint8_t dg[64];
	struct frame a, b;
	struct ct_packet out;
	struct ct_defrag *d = ct_defrag_create(0, 0);

	(void)state;
	payload(dg, sizeof(dg));
	frag6(&a, dg, 0, 32, true, 0x01020304, true);
	frag6(&b, dg, 32, 32, false, 0x01020304, true);
	assert_int_equal(feed(d, &b, 0, &out), 0);
	assert_int_equal(feed(d, &a, 0, &out), 1);
	assert_int_equal(out.kind, CT_PKT_TRACKABLE);
	assert_int_equal(out.l3_len, 40 + 8 + 64);
	assert_int_equal(out.l3_hdr_len, 48);
	assert_int_equal(out.l3[6], 60);                /* dest opts first */
	assert_int_equal(out.l3[40], 17);               /* then UDP */
	assert_int_equal(out.tuple.dport, 2222);
	assert_memory_equal(out.l4, dg, sizeof(dg));
	ct_defrag_destroy(d);
}

/* ipfrag_time 30 s for IPv4, nf_conntrack_frag6_timeout 60 s for IPv6,
 * counted from the first fragment. */
static void test_incomplete_datagrams_time_out(void **state)
{
	uint8_t dg[32];
	struct frame a, b;
	struct ct_packet out;
	struct ct_defrag *d = ct_defrag_create(0, 0);
	struct ct_defrag_stats st;

	(void)state;
	payload(dg, sizeof(dg));
	frag4(&a, dg, 0, 16, true, 1, 0);
	frag4(&b, dg, 16, 16, false, 1, 0);
	assert_int_equal(feed(d, &a, 0, &out), 0);
	assert_int_equal(feed(d, &b, 29 * SEC, &out), 1);
	assert_int_equal(feed(d, &a, 100 * SEC, &out), 0);
	assert_int_equal(feed(d, &b, 130 * SEC, &out), 0);  /* 30 s later */
	ct_defrag_get_stats(d, &st);
	assert_int_equal(st.timeouts, 1);

	frag6(&a, dg, 0, 16, true, 1, false);
	frag6(&b, dg, 16, 16, false, 1, false);
	assert_int_equal(feed(d, &a, 200 * SEC, &out), 0);
	assert_int_equal(feed(d, &b, 259 * SEC, &out), 1);
	assert_int_equal(feed(d, &a, 300 * SEC, &out), 0);
	assert_int_equal(feed(d, &b, 360 * SEC, &out), 0);
	ct_defrag_destroy(d);

	d = ct_defrag_create(0, 5 * SEC);               /* both families */
	frag6(&a, dg, 0, 16, true, 1, false);
	assert_int_equal(feed(d, &a, 0, &out), 0);
	assert_int_equal(feed(d, &b, 5 * SEC, &out), 0);
	ct_defrag_get_stats(d, &st);
	assert_int_equal(st.timeouts, 1);
	ct_defrag_destroy(d);
}

/* Over high_thresh every new fragment is refused until timeouts free
 * memory (inet_frag_find returns NULL; nothing is evicted early). */
static void test_memory_limit_refuses_fragments(void **state)
{
	uint8_t dg[1024];
	struct frame f;
	struct ct_packet out;
	struct ct_defrag *d = ct_defrag_create(16 * 1024, 0);
	struct ct_defrag_stats st;
	unsigned refused_at = 0;

	(void)state;
	payload(dg, sizeof(dg));
	for (unsigned id = 1; id <= 64; id++) {
		frag4(&f, dg, 0, 1000, true, (uint16_t)id, 0);
		feed(d, &f, 0, &out);
		ct_defrag_get_stats(d, &st);
		if (st.evicted && !refused_at)
			refused_at = id;
	}
	assert_true(refused_at > 10 && refused_at < 20);
	assert_int_equal(st.evicted, 64 - refused_at + 1);
	/* after the timeout, room again */
	frag4(&f, dg, 0, 1000, true, 1000, 0);
	feed(d, &f, 31 * SEC, &out);
	ct_defrag_get_stats(d, &st);
	assert_int_equal(st.evicted, 64 - refused_at + 1);
	assert_int_equal(st.timeouts, refused_at - 1);
	ct_defrag_destroy(d);
}

/* ip_frag_queue cuts a non-final IPv4 fragment to a multiple of 8;
 * nf_ct_frag6_queue kills the IPv6 datagram and lets the fragment
 * through as it is (a first fragment is then an ordinary packet). */
static void test_fragment_length_not_a_multiple_of_eight(void **state)
{
	uint8_t dg[40];
	struct frame a, b;
	struct ct_packet out;
	struct ct_defrag *d = ct_defrag_create(0, 0);
	struct ct_defrag_stats st;

	(void)state;
	payload(dg, sizeof(dg));
	frag4(&a, dg, 0, 21, true, 4, 0);       /* keeps [0, 16) */
	frag4(&b, dg, 16, 24, false, 4, 0);
	assert_int_equal(feed(d, &a, 0, &out), 0);
	assert_int_equal(feed(d, &b, 0, &out), 1);
	assert_int_equal(out.l3_len, 60);
	assert_memory_equal(out.l4, dg, sizeof(dg));

	ts_put16(dg + 4, 21);                      /* UDP length = this piece */
	frag6(&a, dg, 0, 21, true, 4, false);
	assert_int_equal(feed(d, &a, 0, &out), 1);
	assert_int_equal(out.kind, CT_PKT_TRACKABLE);
	assert_int_equal(out.tuple.dport, 2222);
	assert_int_equal(out.l3_len, 48 + 21);
	assert_ptr_equal(out.l3, a.b);
	frag6(&b, dg, 16, 21, true, 4, false);
	assert_int_equal(feed(d, &b, 0, &out), 1);
	assert_int_equal(out.kind, CT_PKT_INVALID);
	assert_int_equal(out.reason, CT_PR_FRAG_BAD);
	ct_defrag_get_stats(d, &st);
	assert_int_equal(st.bad, 2);
	ct_defrag_destroy(d);
}

/* The kill of nf_ct_frag6_queue reaches a datagram already queued: after
 * a non-final piece whose end is not a multiple of 8, the pieces that
 * would have completed it no longer do (they start a new datagram, with
 * no first piece).  ctrack looks the queue up only when some IPv6 queue
 * exists; an IPv4 queue alone must not hide the IPv6 one, nor the IPv6
 * one be looked for under the IPv4 key. */
static void test_odd_length_piece_kills_the_queued_ipv6_datagram(void **state)
{
	uint8_t dg[40];
	struct frame a, odd, last, v4;
	struct ct_packet out;
	struct ct_defrag *d = ct_defrag_create(0, 0);
	struct ct_defrag_stats st;

	(void)state;
	payload(dg, sizeof(dg));
	ts_put16(dg + 4, sizeof(dg));
	for (uint32_t id = 4; id <= 6; id += 2) {
		if (id == 6) {
			frag4(&v4, dg, 0, 16, true, 9, 0);
			assert_int_equal(feed(d, &v4, 0, &out), 0); /* IPv4 queue */
		}
		frag6(&a, dg, 0, 16, true, id, false);
		assert_int_equal(feed(d, &a, 0, &out), 0);      /* queued */
		frag6(&odd, dg, 16, 13, true, id, false);
		assert_int_equal(feed(d, &odd, 0, &out), 1);    /* passes, refused */
		assert_int_equal(out.kind, CT_PKT_INVALID);
		assert_int_equal(out.reason, CT_PR_FRAG_BAD);
		frag6(&last, dg, 16, 24, false, id, false);
		assert_int_equal(feed(d, &last, 0, &out), 0);   /* no first piece now */
	}
	ct_defrag_get_stats(d, &st);
	assert_int_equal(st.bad, 2);
	assert_int_equal(st.reassembled, 0);

	/* the same three without the odd piece complete the datagram */
	frag6(&a, dg, 0, 16, true, 5, false);
	frag6(&last, dg, 16, 24, false, 5, false);
	assert_int_equal(feed(d, &a, 0, &out), 0);
	assert_int_equal(feed(d, &last, 0, &out), 1);
	assert_int_equal(out.kind, CT_PKT_TRACKABLE);
	ct_defrag_destroy(d);
}

/* A first IPv6 fragment without its whole UDP header is not queued
 * (ipv6frag_thdr_truncated); conntrack then sees it and refuses it. */
static void test_ipv6_first_fragment_without_whole_l4_header(void **state)
{
	uint8_t dg[64];
	struct frame a;
	struct ct_packet out;
	struct ct_defrag *d = ct_defrag_create(0, 0);

	(void)state;
	payload(dg, sizeof(dg));
	frag6(&a, dg, 0, 4, true, 8, false);
	assert_int_equal(feed(d, &a, 0, &out), 1);
	assert_int_equal(out.kind, CT_PKT_INVALID);
	assert_int_equal(out.reason, CT_PR_L4_TRUNCATED);
	ct_defrag_destroy(d);
}

/* Keys: IPv4 by (src, dst, id, protocol, zone); IPv6 by (src, dst, id,
 * interface, zone).  Pieces that differ in one of them never meet. */
static void test_fragments_meet_only_under_the_kernels_key(void **state)
{
	uint8_t dg[32];
	struct frame a, b;
	struct ct_packet pa, pb, out;
	struct ct_defrag *d = ct_defrag_create(0, 0);

	(void)state;
	payload(dg, sizeof(dg));
	frag4(&a, dg, 0, 16, true, 11, 0);
	frag4(&b, dg, 16, 16, false, 11, 0);
	b.b[9] = 6;                                     /* other protocol */
	ts_ip4_csum(b.b);
	assert_int_equal(feed(d, &a, 0, &out), 0);
	assert_int_equal(feed(d, &b, 0, &out), 0);

	frag4(&b, dg, 16, 16, false, 11, 0);
	ct_parse_ip(&pb, b.b, b.len, b.len, 0);
	pb.tuple.zone = 3;                              /* other zone */
	assert_int_equal(ct_defrag_feed(d, &pb, 0, &out), 0);
	pb.tuple.zone = 0;
	assert_int_equal(ct_defrag_feed(d, &pb, 0, &out), 1);

	frag6(&a, dg, 0, 16, true, 11, false);
	frag6(&b, dg, 16, 16, false, 11, false);
	ct_parse_ip(&pa, a.b, a.len, a.len, 0);
	ct_parse_ip(&pb, b.b, b.len, b.len, 0);
	pa.ifindex = 2;
	pa.n_vlan = 1;
	pa.vlan_outer = pa.vlan_inner = 100;
	pa.tuple.zone = 4;
	pb.ifindex = 3;
	pb.tuple.zone = 4;
	assert_int_equal(ct_defrag_feed(d, &pa, 0, &out), 0);
	assert_int_equal(ct_defrag_feed(d, &pb, 0, &out), 0);
	pb.ifindex = 2;
	assert_int_equal(ct_defrag_feed(d, &pb, 0, &out), 1);
	/* the result carries the first fragment's interface, tags, zone */
	assert_int_equal(out.ifindex, 2);
	assert_int_equal(out.n_vlan, 1);
	assert_int_equal(out.vlan_outer, 100);
	assert_int_equal(out.tuple.zone, 4);
	ct_defrag_destroy(d);
}

/* ip_frag_ecn_table: not-ECT mixed with ECT drops the datagram; CE mixed
 * with ECT(0) makes it CE. */
static void test_ecn_of_the_pieces(void **state)
{
	uint8_t dg[32];
	struct frame a, b;
	struct ct_packet out;
	struct ct_defrag *d = ct_defrag_create(0, 0);
	struct ct_defrag_stats st;

	(void)state;
	payload(dg, sizeof(dg));
	frag4(&a, dg, 0, 16, true, 21, 0x00);          /* not-ECT */
	frag4(&b, dg, 16, 16, false, 21, 0x02);         /* ECT(0) */
	assert_int_equal(feed(d, &a, 0, &out), 0);
	assert_int_equal(feed(d, &b, 0, &out), 0);
	ct_defrag_get_stats(d, &st);
	assert_int_equal(st.bad, 1);

	frag4(&a, dg, 0, 16, true, 22, 0x03);           /* CE */
	frag4(&b, dg, 16, 16, false, 22, 0x02);
	assert_int_equal(feed(d, &a, 0, &out), 0);
	assert_int_equal(feed(d, &b, 0, &out), 1);
	assert_int_equal(out.l3[1] & 3, 3);
	ct_defrag_destroy(d);
}

/* End checks.  IPv4 (ip_frag_queue): a second, different last fragment
 * or a zero-length one kills the datagram.  IPv6 (nf_ct_frag6_queue):
 * only that fragment is dropped.  Larger than 65535: dropped. */
static void test_inconsistent_ends_and_oversize(void **state)
{
	uint8_t dg[64];
	struct frame a, b, c;
	struct ct_packet out;
	struct ct_defrag *d = ct_defrag_create(0, 0);
	struct ct_defrag_stats st;
	static uint8_t big[68000];

	(void)state;
	payload(dg, sizeof(dg));
	frag4(&a, dg, 0, 16, true, 31, 0);
	frag4(&b, dg, 16, 16, false, 31, 0);
	frag4(&c, dg, 16, 24, false, 31, 0);
	assert_int_equal(feed(d, &c, 0, &out), 0);
	assert_int_equal(feed(d, &b, 0, &out), 0);      /* kills it */
	assert_int_equal(feed(d, &a, 0, &out), 0);      /* new queue */
	ct_defrag_get_stats(d, &st);
	assert_int_equal(st.bad, 1);

	frag6(&a, dg, 0, 16, true, 31, false);
	frag6(&b, dg, 16, 16, false, 31, false);
	frag6(&c, dg, 16, 24, false, 31, false);
	assert_int_equal(feed(d, &c, 0, &out), 0);
	assert_int_equal(feed(d, &b, 0, &out), 0);      /* dropped alone */
	assert_int_equal(feed(d, &a, 0, &out), 1);      /* c's end wins */
	assert_int_equal(out.l3_len, 40 + 40);
	assert_int_equal(out.kind, CT_PKT_INVALID);     /* UDP says 64 */
	assert_int_equal(out.reason, CT_PR_UDP_BAD_LEN);

	frag4(&a, dg, 0, 0, true, 32, 0);               /* zero length */
	assert_int_equal(feed(d, &a, 0, &out), 0);
	ct_defrag_get_stats(d, &st);
	assert_int_equal(st.bad, 3);

	/* IPv4: pieces of 1480 up to 65528, then 1500 more: 67048 bytes */
	for (uint32_t off = 0; off < 65528; off += 1480) {
		uint32_t n = off + 1480 > 65528 ? 65528 - off : 1480;

		frag4(&a, big, off, n, true, 33, 0);
		assert_int_equal(feed(d, &a, 0, &out), 0);
	}
	frag4(&c, big, 65528, 1500, false, 33, 0);
	assert_int_equal(feed(d, &c, 0, &out), 0);
	ct_defrag_get_stats(d, &st);
	assert_int_equal(st.oversize, 1);
	/* IPv6: a piece ending past 65535 is refused at once */
	frag6(&a, big, 65528, 16, true, 34, false);
	assert_int_equal(feed(d, &a, 0, &out), 0);
	ct_defrag_get_stats(d, &st);
	assert_int_equal(st.oversize, 2);
	ct_defrag_destroy(d);
}

/* A fragment whose capture was cut is kept with zeroes where bytes are
 * missing; the datagram is then marked truncated (no checksum check). */
static void test_cut_fragment_makes_a_truncated_datagram(void **state)
{
	uint8_t dg[48];
	struct frame a, b;
	struct ct_packet pa, out;
	struct ct_defrag *d = ct_defrag_create(0, 0);

	(void)state;
	payload(dg, sizeof(dg));
	frag4(&a, dg, 0, 24, true, 41, 0);
	frag4(&b, dg, 24, 24, false, 41, 0);
	assert_int_equal(ct_parse_ip(&pa, a.b, a.len - 10, a.len, 0),
			 CT_PKT_FRAGMENT);
	assert_true(pa.truncated);
	assert_int_equal(ct_defrag_feed(d, &pa, 0, &out), 0);
	assert_int_equal(feed(d, &b, 0, &out), 1);
	assert_true(out.truncated);
	assert_true(ct_packet_l4_csum_ok(&out));
	assert_memory_equal(out.l4, dg, 14);
	assert_int_equal(out.l4[14], 0);
	ct_defrag_destroy(d);
}

static void test_packets_that_are_not_fragments_are_refused(void **state)
{
	uint8_t dg[16];
	struct frame a;
	struct ct_packet pkt, out;
	struct ct_defrag *d = ct_defrag_create(0, 0);
	struct ct_defrag_stats st;

	(void)state;
	payload(dg, sizeof(dg));
	frag4(&a, dg, 0, 16, false, 1, 0);              /* whole datagram */
	assert_int_equal(ct_parse_ip(&pkt, a.b, a.len, a.len, 0),
			 CT_PKT_TRACKABLE);
	assert_int_equal(ct_defrag_feed(d, &pkt, 0, &out), 0);
	ct_defrag_get_stats(d, &st);
	assert_int_equal(st.bad, 1);
	assert_int_equal(st.fragments, 1);
	ct_defrag_destroy(d);
	ct_defrag_destroy(NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest shared[] = {
		cmocka_unit_test(test_dns_responses_reassemble_to_tshark_lengths),
		cmocka_unit_test(test_reassembled_datagrams_have_good_udp_checksums),
		cmocka_unit_test(test_reassembly_counts_match_tshark),
		cmocka_unit_test(test_overlapping_fragment_drops_the_datagram),
		cmocka_unit_test(test_address_family_confusion_spray),
		cmocka_unit_test(test_hostile_fragment_captures_do_not_break_it),
	};
	const struct CMUnitTest own[] = {
		cmocka_unit_test(test_own_answers_reassemble_to_their_lengths),
		cmocka_unit_test(test_own_reassembled_datagrams_have_good_udp_checksums),
		cmocka_unit_test(test_own_reassembly_counts_match_tshark),
		cmocka_unit_test(test_own_overlapping_fragment_drops_the_datagram),
		cmocka_unit_test(test_own_address_family_confusion_spray),
		cmocka_unit_test(test_own_fragment_captures_do_not_break_it),
		cmocka_unit_test(test_in_order_and_reverse_order_give_the_same_datagram),
		cmocka_unit_test(test_duplicate_fragment_is_dropped_alone),
		cmocka_unit_test(test_partial_overlap_drops_the_datagram),
		cmocka_unit_test(test_ipv6_reassembly_removes_the_fragment_header),
		cmocka_unit_test(test_incomplete_datagrams_time_out),
		cmocka_unit_test(test_memory_limit_refuses_fragments),
		cmocka_unit_test(test_fragment_length_not_a_multiple_of_eight),
		cmocka_unit_test(test_odd_length_piece_kills_the_queued_ipv6_datagram),
		cmocka_unit_test(test_ipv6_first_fragment_without_whole_l4_header),
		cmocka_unit_test(test_fragments_meet_only_under_the_kernels_key),
		cmocka_unit_test(test_ecn_of_the_pieces),
		cmocka_unit_test(test_inconsistent_ends_and_oversize),
		cmocka_unit_test(test_cut_fragment_makes_a_truncated_datagram),
		cmocka_unit_test(test_packets_that_are_not_fragments_are_refused),
	};

	return TCAP_MAIN(own, shared);
}
