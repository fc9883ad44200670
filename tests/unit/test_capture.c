/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_capture.c - the tool's capture reader (tools/ctrack/capture.c) on
 * mapped files: what `ctrack read` relies on when it hands packets to the
 * tracker where they lie.
 *
 * A plain pcap's records and a plain pcapng's blocks are read in place:
 * the packets handed out point into the file's bytes, in order, and stay
 * valid until the file is closed (cap_pkt.stable); a file that shrinks
 * while it is read ends with "the file shrank while it was being read",
 * not with SIGBUS and not with a message about a damaged block; frames
 * of link types libpcap may rewrite are not handed out in place.  (That
 * the mapped path and the stream path say the same about every capture of
 * the corpus and every crafted one is tests/cli/test_mapped_equivalence.py.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"

#define N_PKT 64
#define PKT_LEN 1000     /* 64 records of ~1 KB: 16 pages */

/* Packet i's bytes: byte j is (i * 31 + j) & 0xff. */
static void fill(uint8_t *p, unsigned i)
{
	for (unsigned j = 0; j < PKT_LEN; j++)
		p[j] = (uint8_t)(i * 31 + j);
}

static int tmp_file(char *path, size_t len)
{
	int fd;

	snprintf(path, len, "/tmp/ctrack-test-capture-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	return fd;
}

static void put(int fd, const void *p, size_t n)
{
	assert_int_equal(write(fd, p, n), (ssize_t)n);
}

/* A little-endian microsecond pcap; returns the offset of each packet's
 * bytes in @offs. */
static int write_pcap(char *path, size_t len, size_t *offs)
{
	uint32_t fh[6] = { 0xa1b2c3d4u, 2 | 4u << 16, 0, 0, 65535, 1 };
	uint8_t pkt[PKT_LEN];
	int fd = tmp_file(path, len);
	size_t off = sizeof(fh);

	put(fd, fh, sizeof(fh));
	for (unsigned i = 0; i < N_PKT; i++) {
		uint32_t rh[4] = { 1000 + i, i, PKT_LEN, PKT_LEN };

		fill(pkt, i);
		put(fd, rh, sizeof(rh));
		put(fd, pkt, PKT_LEN);
		offs[i] = off + sizeof(rh);
		off += sizeof(rh) + PKT_LEN;
	}
	return fd;
}

/* The same packets as a pcapng: section header, one Ethernet interface,
 * one enhanced packet block each. */
static int write_pcapng(char *path, size_t len, size_t *offs)
{
	uint32_t shb[7] = { 0x0a0d0d0au, 28, 0x1a2b3c4du, 1, 0xffffffffu, 0xffffffffu, 28 };
	uint32_t idb[5] = { 1, 20, 1, 0, 20 };
	uint8_t pkt[PKT_LEN];
	int fd = tmp_file(path, len);
	size_t off = sizeof(shb) + sizeof(idb);

	put(fd, shb, sizeof(shb));
	put(fd, idb, sizeof(idb));
	for (unsigned i = 0; i < N_PKT; i++) {
		uint32_t bl = 32 + PKT_LEN;   /* PKT_LEN is a multiple of 4 */
		uint32_t eh[7] = { 6, bl, 0, 0, 1000000u + i, PKT_LEN, PKT_LEN };

		fill(pkt, i);
		put(fd, eh, sizeof(eh));
		put(fd, pkt, PKT_LEN);
		put(fd, &bl, 4);
		offs[i] = off + sizeof(eh);
		off += bl;
	}
	return fd;
}

static void done(struct cap_src *s, int fd, const char *path)
{
	cap_close(s);
	close(fd);
	unlink(path);
}

/* Every packet comes out in place and in order, and all of them are
 * still intact once the whole file has been read. */
static void reads_in_place(int (*writer)(char *, size_t, size_t *))
{
	char path[64], err[256];
	size_t offs[N_PKT];
	const uint8_t *data[N_PKT];
	uint8_t want[PKT_LEN];
	struct cap_src *s;
	struct cap_pkt p;
	int fd = writer(path, sizeof(path), offs);

	assert_int_equal(cap_open(path, &s, err, sizeof(err)), 0);
	for (unsigned i = 0; i < N_PKT; i++) {
		assert_int_equal(cap_next(s, &p), 1);
		assert_true(p.stable);
		assert_int_equal(p.caplen, PKT_LEN);
		data[i] = p.data;
		if (i)   /* the file's layout: each one a fixed step on */
			assert_int_equal(data[i] - data[i - 1], offs[i] - offs[i - 1]);
	}
	assert_int_equal(cap_next(s, &p), 0);
	for (unsigned i = 0; i < N_PKT; i++) {
		fill(want, i);
		assert_memory_equal(data[i], want, PKT_LEN);
	}
	done(s, fd, path);
}

static void test_pcap_records_are_handed_out_in_place(void **state)
{
	(void)state;
	reads_in_place(write_pcap);
}

static void test_pcapng_blocks_are_handed_out_in_place(void **state)
{
	(void)state;
	reads_in_place(write_pcapng);
}

/* Cut the file to two pages after a few packets: the reader stops at
 * the first packet past the cut, saying the file shrank. */
static void stops_when_shrunk(int (*writer)(char *, size_t, size_t *))
{
	char path[64], err[256];
	size_t offs[N_PKT];
	struct cap_src *s;
	struct cap_pkt p;
	int fd = writer(path, sizeof(path), offs), r;
	unsigned n = 0;

	assert_int_equal(cap_open(path, &s, err, sizeof(err)), 0);
	for (; n < 3; n++)
		assert_int_equal(cap_next(s, &p), 1);
	assert_int_equal(ftruncate(fd, 8192), 0);
	while ((r = cap_next(s, &p)) == 1)
		n++;
	assert_int_equal(r, -1);
	assert_string_equal(cap_error(s), "the file shrank while it was being read");
	/* the packets wholly inside the first two pages came out */
	assert_true(n >= 3 && n < N_PKT);
	done(s, fd, path);
}

static void test_pcap_that_shrinks_under_the_reader_says_so(void **state)
{
	(void)state;
	stops_when_shrunk(write_pcap);
}

static void test_pcapng_that_shrinks_under_the_reader_says_so(void **state)
{
	(void)state;
	stops_when_shrunk(write_pcapng);
}

/* A one-record pcap of link type @dlt in our byte order or the other. */
static int write_one(char *path, size_t len, uint32_t dlt, bool swapped)
{
	uint32_t fh[6] = { 0xa1b2c3d4u, 2 | 4u << 16, 0, 0, 65535, dlt };
	uint32_t rh[4] = { 1000, 0, PKT_LEN, PKT_LEN };
	uint8_t pkt[PKT_LEN];
	int fd = tmp_file(path, len);

	if (swapped) {
		for (int i = 0; i < 6; i++)
			fh[i] = __builtin_bswap32(fh[i]);
		fh[1] = 2u << 8 | 4u << 24;   /* two 16-bit fields, each swapped */
		for (int i = 0; i < 4; i++)
			rh[i] = __builtin_bswap32(rh[i]);
	}
	fill(pkt, 0);
	put(fd, fh, sizeof(fh));
	put(fd, rh, sizeof(rh));
	put(fd, pkt, PKT_LEN);
	return fd;
}

static bool first_is_stable(uint32_t dlt, bool swapped)
{
	char path[64], err[256];
	struct cap_src *s;
	struct cap_pkt p;
	int fd = write_one(path, sizeof(path), dlt, swapped);
	bool stable;

	assert_int_equal(cap_open(path, &s, err, sizeof(err)), 0);
	assert_int_equal(cap_next(s, &p), 1);
	assert_int_equal(p.caplen, PKT_LEN);
	stable = p.stable;
	done(s, fd, path);
	return stable;
}

/* Linux cooked and NFLOG captures are handed out in place only in our
 * byte order: in the other, libpcap byte-swaps parts of their headers. */
static void test_linux_cooked_frames_in_place_only_in_our_byte_order(void **state)
{
	(void)state;
	assert_true(first_is_stable(1, false));      /* Ethernet */
	assert_true(first_is_stable(1, true));
	assert_true(first_is_stable(113, false));    /* SLL */
	assert_false(first_is_stable(113, true));
	assert_true(first_is_stable(276, false));    /* SLL2 */
	assert_false(first_is_stable(276, true));
	assert_true(first_is_stable(239, false));    /* NFLOG */
	assert_false(first_is_stable(239, true));
	assert_false(first_is_stable(189, false));   /* USB: always rewritten */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pcap_records_are_handed_out_in_place),
		cmocka_unit_test(test_pcapng_blocks_are_handed_out_in_place),
		cmocka_unit_test(test_pcap_that_shrinks_under_the_reader_says_so),
		cmocka_unit_test(test_pcapng_that_shrinks_under_the_reader_says_so),
		cmocka_unit_test(test_linux_cooked_frames_in_place_only_in_our_byte_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
