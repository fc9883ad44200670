/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_ip6_resume.c - a first IPv6 fragment that defrag lets through is
 * parsed again as a whole packet (nf_defrag_ipv6 gave up on it, conntrack
 * sees it as it is).  defrag.c does that with ct_parse_ip6_pass(), which
 * copies what the fixed header gave the fragment and walks on from the
 * fragment header instead of from the fixed header.
 * The oracle is the full parse with the fragment header transparent,
 * ct_parse_ip6_hdr(..., CT_P6_FRAG_PASS), which the kernel-diff suite
 * pinned before the resume existed: both must give the same packet, byte
 * for byte, for
 *   - every IPv6 first fragment (offset 0, more fragments) in
 *     ../shared/pcaps (the "shared" group) and in the project's own
 *     captures (the default group; frag-ip6-first.pcap holds 240, of
 *     which craft.py says by the kernel's rules which 147 defrag lets
 *     through), and
 *   - 300,000 synthetic ones: random chains of hop-by-hop, routing,
 *     destination options, AH, further fragment headers and "no next
 *     header" after the first fragment header, random upper layers and
 *     lengths, random payload-length fields and capture cuts.
 * Then the same packets through ct_defrag_feed(): what it lets through
 * from a first fragment is again the oracle's packet.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>

#include "ctrack/defrag.h"
#include "ctrack/packet.h"
#include "parse/ip.h"
#include "pcap_util.h"
#include "support/csum.h"
#include "support/wire.h"

/* The full parse, as defrag.c did it before the resume. */
static enum ct_pkt_kind oracle(const struct ct_packet *frag, struct ct_packet *o)
{
	uint32_t cap = (uint32_t)(frag->l4 - frag->l3) + frag->l4_caplen;

	memset(o, 0, sizeof(*o));
	o->ts = frag->ts;
	o->ifindex = frag->ifindex;
	o->n_vlan = frag->n_vlan;
	o->vlan_outer = frag->vlan_outer;
	o->vlan_inner = frag->vlan_inner;
	return ct_parse_ip6_hdr(o, frag->l3, cap, frag->l3_len, CT_P6_FRAG_PASS);
}

static bool is_first_ip6_fragment(const struct ct_packet *p)
{
	return p->kind == CT_PKT_FRAGMENT && p->tuple.l3 == CT_L3_IPV6 &&
	       p->frag_offset == 0 && p->frag_more;
}

/* ct_parse_ip6_pass (the copy of the prefix's fields, then the resumed
 * walk) and the oracle agree on @frag; returns 1 (for counting). */
static unsigned check_one(const struct ct_packet *frag)
{
	struct ct_packet o, r;
	enum ct_pkt_kind ko = oracle(frag, &o), kr;

	memset(&r, 0xa5, sizeof(r));    /* whatever was there is replaced */
	kr = ct_parse_ip6_pass(&r, frag);
	assert_int_equal(kr, ko);
	assert_int_equal(r.kind, o.kind);
	assert_int_equal(r.reason, o.reason);
	assert_memory_equal(&r, &o, sizeof(r));
	return 1;
}

/* Through ct_defrag_feed: when it lets a first fragment through as it
 * is, what comes out is the oracle's packet (zone carried over). */
static unsigned check_feed(struct ct_defrag *d, const struct ct_packet *frag)
{
	struct ct_packet o, out;
	struct ct_defrag_stats before, after;

	ct_defrag_get_stats(d, &before);
	if (ct_defrag_feed(d, frag, 0, &out) != 1)
		return 0;
	ct_defrag_get_stats(d, &after);
	if (after.reassembled != before.reassembled)
		return 0;
	oracle(frag, &o);
	o.tuple.zone = frag->tuple.zone;
	assert_memory_equal(&out, &o, sizeof(out));
	return 1;
}

static bool is_capture(const char *name)
{
	size_t n = strlen(name);

	return (n > 5 && !strcmp(name + n - 5, ".pcap")) ||
	       (n > 7 && !strcmp(name + n - 7, ".pcapng")) ||
	       (n > 4 && !strcmp(name + n - 4, ".cap")) ||
	       (n > 8 && !strcmp(name + n - 8, ".pcap.gz"));
}

static void test_every_first_ip6_fragment_of_the_corpus(void **state)
{
	DIR *dir = opendir(PCAPS_DIR);
	struct dirent *e;
	unsigned n = 0, through = 0;

	(void)state;
	assert_non_null(dir);
	while ((e = readdir(dir)) != NULL) {
		struct tcap tc;
		struct ct_defrag *d;

		if (!is_capture(e->d_name) || !tcap_load(&tc, e->d_name))
			continue;
		d = ct_defrag_create(0, 0);
		assert_non_null(d);
		for (size_t i = 0; i < tc.n; i++) {
			struct ct_packet pkt;

			tcap_parse(&tc, i, &pkt);
			if (!is_first_ip6_fragment(&pkt))
				continue;
			n += check_one(&pkt);
			through += check_feed(d, &pkt);
		}
		ct_defrag_destroy(d);
		tcap_free(&tc);
	}
	closedir(dir);
	/* the corpus holds tens of thousands (a fragment-spraying capture) */
	print_message("first IPv6 fragments: %u, let through by defrag: %u\n", n, through);
	assert_true(n > 10000);
	assert_true(through > 10000);
}

/* The first IPv6 fragments of one file: counted, checked, and how many
 * defrag let through. */
static void run_first_fragments(const char *path, unsigned *n, unsigned *through)
{
	struct tcap tc;
	struct ct_defrag *d;

	if (!tcap_load(&tc, path))
		fail_msg("cannot open %s: %s", path, tc.err);
	d = ct_defrag_create(0, 0);
	assert_non_null(d);
	for (size_t i = 0; i < tc.n; i++) {
		struct ct_packet pkt;

		tcap_parse(&tc, i, &pkt);
		if (!is_first_ip6_fragment(&pkt))
			continue;
		*n += check_one(&pkt);
		*through += check_feed(d, &pkt);
	}
	ct_defrag_destroy(d);
	tcap_free(&tc);
}

/*
 * frag-ip6-first.pcap: 240 first fragments behind 0-2 extension headers,
 * with and without destination options after the fragment header, TCP,
 * UDP, ICMPv6, SCTP and protocol 99 (tshark: 240 with offset 0 and M set);
 * by nf_ct_frag6_gather's and nf_ct_frag6_queue's rules (a first fragment
 * without the whole upper-layer header, or a fragment of a length not a
 * multiple of 8 with more to come, passes as it is) 147 of them pass.
 * Then every other project capture, the kernel's recordings with it.
 */
static void test_own_every_first_ip6_fragment(void **state)
{
	static const char *const files[] = {
		OWN("frag-datagrams.pcap"), OWN("frag-af-spray.pcap"),
		CAPTURES_DIR "/kernel/udp_fragments/capture.pcap",
		CAPTURES_DIR "/kernel/mtu_small/capture.pcap",
	};
	unsigned n = 0, through = 0;

	(void)state;
	run_first_fragments(OWN("frag-ip6-first.pcap"), &n, &through);
	assert_int_equal(n, 240);
	assert_int_equal(through, 147);
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++)
		run_first_fragments(files[f], &n, &through);
	print_message("first IPv6 fragments: %u, let through by defrag: %u\n", n, through);
	assert_true(n > 240);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)((rng >> 11) % n);
}

/* One random IPv6 packet whose chain holds a first fragment header
 * (offset 0, M set) somewhere, then anything.  Returns its length. */
static uint32_t random_packet(uint8_t *b, uint32_t size, uint32_t *wire)
{
	static const uint8_t upper[] = { 6, 17, 58, 132, 47, 136, 33, 99 };
	uint32_t off = 40, len;
	uint8_t *nhp = b + 6;
	unsigned before = rnd(3), after = rnd(4);
	bool hbh_ok = true;

	for (uint32_t i = 0; i < size; i++)
		b[i] = (uint8_t)rnd(256);
	b[0] = 0x60;
	b[8] = 0x20;                    /* not a multicast source */
	b[24] = 0x20;
	b[7] = 64;
	for (unsigned k = 0; k < before + 1 + after && off + 64 < size; k++) {
		bool frag = k == before;
		uint8_t t;
		uint32_t hl;

		if (frag) {
			t = 44;
		} else {
			static const uint8_t ext[] = { 0, 43, 60, 51, 44, 59 };

			t = ext[rnd(k < before ? 4 : 6)];
			if (t == 0 && !hbh_ok)
				t = 60;
		}
		hbh_ok = false;
		*nhp = t;
		nhp = b + off;
		if (t == 59)
			break;
		if (t == 44) {
			uint16_t fo = frag ? 1 : (uint16_t)(rnd(4) ? 0 : rnd(65536) & 0xfff9);

			if (!frag && !rnd(3))
				fo = 1;
			b[off + 1] = 0;
			ts_put16(b + off + 2, fo);
			hl = 8;
		} else if (t == 51) {
			b[off + 1] = (uint8_t)rnd(4);
			hl = ((uint32_t)b[off + 1] + 2) * 4;
		} else {
			b[off + 1] = (uint8_t)rnd(3);
			hl = ((uint32_t)b[off + 1] + 1) * 8;
			if (t == 0 || t == 60) {
				/* options: all PadN so that they pass, or
				 * random now and then */
				if (rnd(8)) {
					b[off + 2] = 1;
					b[off + 3] = (uint8_t)(hl - 4);
					memset(b + off + 4, 0, hl - 4);
				}
			}
		}
		off += hl;
	}
	if (*nhp != 59 || rnd(2))
		*nhp = upper[rnd(sizeof(upper))];
	len = off + rnd(80);
	if (len > size)
		len = size;
	/* the payload length: right most of the time */
	ts_put16(b + 4, (uint16_t)(rnd(10) ? len - 40 : rnd(len)));
	*wire = len;
	/* a cut capture now and then */
	return rnd(6) ? len : 40 + rnd(len - 39);
}

static void test_random_chains_after_a_first_fragment(void **state)
{
	uint8_t b[400];
	unsigned n = 0, through = 0;
	struct ct_defrag *d = ct_defrag_create(0, 0);

	(void)state;
	assert_non_null(d);
	for (unsigned i = 0; i < 300000; i++) {
		struct ct_packet pkt;
		uint32_t wire, cap = random_packet(b, sizeof(b), &wire);

		memset(&pkt, 0, sizeof(pkt));
		ct_parse_ip(&pkt, b, cap, wire, 0);
		if (!is_first_ip6_fragment(&pkt))
			continue;
		n += check_one(&pkt);
		through += check_feed(d, &pkt);
	}
	ct_defrag_destroy(d);
	print_message("random first fragments: %u, let through by defrag: %u\n", n, through);
	assert_true(n > 50000);
	assert_true(through > 5000);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest shared[] = {
		cmocka_unit_test(test_every_first_ip6_fragment_of_the_corpus),
	};
	const struct CMUnitTest own[] = {
		cmocka_unit_test(test_own_every_first_ip6_fragment),
		cmocka_unit_test(test_random_chains_after_a_first_fragment),
	};

	return TCAP_MAIN(own, shared);
}
