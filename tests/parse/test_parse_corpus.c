/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_parse_corpus.c - every capture in ../shared/pcaps (the "shared"
 * group) and every one of the project's own (tests/captures: crafted/ and
 * the kernel recordings in kernel/; the default group) through
 * ct_parse_frame(), ct_packet_l4_csum_ok() and ct_defrag: nothing may
 * crash (run it under ASan/UBSan), and every result must keep the
 * parser's promises: pointers inside the frame, captured lengths within
 * the datagram's, a valid kind and reason, zero padding in the tuple.
 *
 * libpcap refuses some files part-way (a 4 MB record, a file cut in the
 * middle, pcapng interfaces with different snapshot lengths): reading
 * stops there, which is the reader's business, not the parser's.
 * zeek__echo-connections.pcap.gz is inflated with zlib first.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>

#include "ctrack/defrag.h"
#include "ctrack/packet.h"
#include "pcap_util.h"

static bool is_capture(const char *name)
{
	static const char *const ext[] = { ".pcap", ".pcapng", ".cap",
					   ".pcap.gz" };
	size_t n = strlen(name);

	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		size_t e = strlen(ext[i]);

		if (n > e && strcmp(name + n - e, ext[i]) == 0)
			return true;
	}
	return false;
}

static void check_packet(const struct ct_packet *p, const uint8_t *frame,
			 uint32_t caplen)
{
	static const uint8_t zero[12];

	assert_true(p->kind <= CT_PKT_UNSUPPORTED_LINK);
	if (p->kind == CT_PKT_INVALID) {
		assert_true(p->reason > CT_PR_OK && p->reason < CT_PR_MAX);
		return;
	}
	assert_int_equal(p->reason, CT_PR_OK);
	if (p->kind != CT_PKT_TRACKABLE && p->kind != CT_PKT_FRAGMENT)
		return;
	assert_true(p->tuple.l3 == CT_L3_IPV4 || p->tuple.l3 == CT_L3_IPV6);
	assert_int_equal(p->tuple.zone, 0);
	if (p->tuple.l3 == CT_L3_IPV4) {
		assert_memory_equal(p->tuple.src.ip6 + 4, zero, 12);
		assert_memory_equal(p->tuple.dst.ip6 + 4, zero, 12);
	}
	if (frame) {
		assert_true(p->l3 >= frame && p->l3 < frame + caplen);
		assert_true(p->l4 >= p->l3);
		assert_true(p->l4 + p->l4_caplen <= frame + caplen);
	}
	assert_true(p->l4_caplen <= p->l4_len);
	assert_true(p->l4 - p->l3 <= (ptrdiff_t)p->l3_len);
	if (p->kind == CT_PKT_TRACKABLE) {
		assert_int_equal(p->truncated, p->l4_caplen < p->l4_len);
		assert_true(p->payload_len <= p->l4_len);
		if (p->tuple.l4 == 1 || p->tuple.l4 == 58) {
			if (p->u.icmp.inner_ok)
				assert_int_equal(p->u.icmp.inner.l3,
						 p->tuple.l3);
		}
	} else {
		assert_true(p->is_fragment);
	}
}

struct totals {
	unsigned files, frames, trackable, reassembled;
};

static void run_file(const char *name, struct totals *t)
{
	struct tcap tc;
	struct ct_defrag *d = ct_defrag_create(0, 0);
	unsigned kinds[5] = { 0 };

	assert_non_null(d);
	if (!tcap_load(&tc, name))
		fail_msg("libpcap cannot open %s: %s", name, tc.err);
	for (size_t i = 0; i < tc.n; i++) {
		const struct tframe *fr = &tc.f[i];
		struct ct_packet pkt, out;

		tcap_parse(&tc, i, &pkt);
		check_packet(&pkt, fr->data, fr->caplen);
		kinds[pkt.kind]++;
		if (pkt.kind == CT_PKT_TRACKABLE)
			(void)ct_packet_l4_csum_ok(&pkt);
		if (pkt.kind == CT_PKT_FRAGMENT &&
		    ct_defrag_feed(d, &pkt, pkt.ts, &out) == 1) {
			check_packet(&out, NULL, 0);
			if (out.kind == CT_PKT_TRACKABLE)
				(void)ct_packet_l4_csum_ok(&out);
			t->reassembled++;
		}
	}
	t->files++;
	t->frames += (unsigned)tc.n;
	t->trackable += kinds[CT_PKT_TRACKABLE];
	ct_defrag_destroy(d);
	tcap_free(&tc);
}

static void test_every_capture_parses_without_breaking_a_promise(void **state)
{
	DIR *dir = opendir(PCAPS_DIR);
	struct dirent *e;
	struct totals t = { 0 };

	(void)state;
	assert_non_null(dir);
	while ((e = readdir(dir)) != NULL) {
		if (is_capture(e->d_name))
			run_file(e->d_name, &t);
	}
	closedir(dir);
	/* SOURCES.md lists 77 captures (the directory may hold more) */
	assert_true(t.files >= 77);
	assert_true(t.frames > 100000);
	assert_true(t.trackable > t.frames / 2);
	assert_true(t.reassembled > 0);
}

/*
 * The gzip member: SOURCES.md and `tshark -r zeek__echo-connections.pcap.gz
 * | wc -l` say 82,582 packets, all TCP over Ethernet.
 */
static void test_gzipped_capture_is_read_through_zlib(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;
	unsigned tcp = 0;

	(void)state;
	assert_true(tcap_load(&tc, "zeek__echo-connections.pcap.gz"));
	assert_int_equal(tc.n, 82582);
	assert_false(tc.read_error);
	for (size_t i = 0; i < tc.n; i++)
		if (tcap_parse(&tc, i, &pkt) == CT_PKT_TRACKABLE &&
		    pkt.tuple.l4 == 6)
			tcp++;
	assert_int_equal(tcp, 82582);
	tcap_free(&tc);
}

/*
 * Files libpcap gives up on part-way: suricata__tls_DER-incomplete-header
 * (record 7 claims 4 MB: 6 frames read), ndpi__fuzz-2021-10-13 (cut in a
 * record header: 1 frame).  What was read parses; the rest is not ours.
 */
static void test_reading_stops_at_a_broken_record(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	assert_true(tcap_load(&tc, "suricata__tls_DER-incomplete-header.pcap"));
	assert_int_equal(tc.n, 6);
	assert_true(tc.read_error);
	for (size_t i = 0; i < tc.n; i++)
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
	tcap_free(&tc);
	assert_true(tcap_load(&tc, "ndpi__fuzz-2021-10-13.pcap"));
	assert_int_equal(tc.n, 1);
	assert_true(tc.read_error);
	tcap_free(&tc);
}

/* ---- the project's own captures ---- */

/* Every capture in @dir (a path), through run_file; returns how many. */
static unsigned run_dir(const char *dir, struct totals *t)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	unsigned n = 0;
	char path[4096];

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		if (!is_capture(e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		run_file(path, t);
		n++;
	}
	closedir(d);
	return n;
}

/*
 * crafted/ and every kernel recording (kernel/NAME/capture.pcap): the
 * crafted files hold every link type and damage craft.py knows, the
 * recordings the kernel's own traffic (fragments among it).
 */
static void test_own_every_capture_parses_without_breaking_a_promise(void **state)
{
	struct totals t = { 0 };
	DIR *d = opendir(CAPTURES_DIR "/kernel");
	struct dirent *e;
	unsigned crafted, recordings = 0;
	char path[4096];

	(void)state;
	crafted = run_dir(CAPTURES_DIR "/crafted", &t);
	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/kernel/%s/capture.pcap",
			 CAPTURES_DIR, e->d_name);
		run_file(path, &t);
		recordings++;
	}
	closedir(d);
	print_message("# %u crafted captures, %u kernel recordings: %u frames, "
		      "%u trackable, %u reassembled\n", crafted, recordings,
		      t.frames, t.trackable, t.reassembled);
	/* tests/captures/README.md lists them */
	assert_true(crafted >= 38);
	assert_true(recordings >= 16);
	assert_true(t.frames > 5000);
	assert_true(t.trackable > t.frames / 2);
	assert_true(t.reassembled > 0);
}

/* file-gzip.pcap.gz: 2000 TCP segments over Ethernet (craft.py; tshark
 * reads 2000 with -Y tcp). */
static void test_own_gzipped_capture_is_read_through_zlib(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;
	unsigned tcp = 0;

	(void)state;
	assert_true(tcap_load(&tc, OWN("file-gzip.pcap.gz")));
	assert_int_equal(tc.n, 2000);
	assert_false(tc.read_error);
	for (size_t i = 0; i < tc.n; i++)
		if (tcap_parse(&tc, i, &pkt) == CT_PKT_TRACKABLE &&
		    pkt.tuple.l4 == 6)
			tcp++;
	assert_int_equal(tcp, 2000);
	tcap_free(&tc);
}

/*
 * file-record-4mb.pcap: six TCP segments, then a record claiming 4,000,000
 * bytes (libpcap and tshark refuse it); file-cut-record-header.pcap: one
 * record, then 2 bytes of the next record's header.
 */
static void test_own_reading_stops_at_a_broken_record(void **state)
{
	struct tcap tc;
	struct ct_packet pkt;

	(void)state;
	assert_true(tcap_load(&tc, OWN("file-record-4mb.pcap")));
	assert_int_equal(tc.n, 6);
	assert_true(tc.read_error);
	for (size_t i = 0; i < tc.n; i++)
		assert_int_equal(tcap_parse(&tc, i, &pkt), CT_PKT_TRACKABLE);
	tcap_free(&tc);
	assert_true(tcap_load(&tc, OWN("file-cut-record-header.pcap")));
	assert_int_equal(tc.n, 1);
	assert_true(tc.read_error);
	tcap_free(&tc);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest shared[] = {
		cmocka_unit_test(test_every_capture_parses_without_breaking_a_promise),
		cmocka_unit_test(test_gzipped_capture_is_read_through_zlib),
		cmocka_unit_test(test_reading_stops_at_a_broken_record),
	};
	const struct CMUnitTest own[] = {
		cmocka_unit_test(test_own_every_capture_parses_without_breaking_a_promise),
		cmocka_unit_test(test_own_gzipped_capture_is_read_through_zlib),
		cmocka_unit_test(test_own_reading_stops_at_a_broken_record),
	};

	return TCAP_MAIN(own, shared);
}
