/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_mapped.c - the tool's mapped capture stream (tools/ctrack/mapped.c).
 *
 * What `ctrack read` relies on: libpcap reading a capture through the
 * mapped stream gets exactly what it gets reading the file itself; the
 * stream's position follows what was consumed; only one mapped stream is
 * open at a time; and a file that shrinks under the reader is no SIGBUS
 * but zeros and a flag, which the capture layer turns into "the file
 * shrank while it was being read".
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mapped.h"

#define PAGE 4096

static const char *pcaps;       /* ../shared/pcaps */
static const char *captures;    /* tests/captures */

/* A temporary file of @pages pages, byte i holding (i * 7 + 3) & 0xff. */
static int patterned_file(char *path, size_t pathlen, unsigned pages)
{
	uint8_t buf[PAGE];
	int fd;

	snprintf(path, pathlen, "/tmp/ctrack-test-mapped-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	for (unsigned p = 0; p < pages; p++) {
		for (unsigned i = 0; i < PAGE; i++)
			buf[i] = (uint8_t)(((size_t)p * PAGE + i) * 7 + 3);
		assert_int_equal(write(fd, buf, PAGE), PAGE);
	}
	return fd;
}

static void test_reads_the_file_byte_for_byte_and_reports_its_position(void **state)
{
	char path[64];
	uint8_t buf[3 * PAGE];
	uint64_t len;
	int fd = patterned_file(path, sizeof(path), 3);
	FILE *f;

	(void)state;
	f = mapped_open(fd, 3 * PAGE);
	assert_non_null(f);
	assert_non_null(mapped_bytes(&len));
	assert_int_equal(len, 3 * PAGE);
	assert_int_equal(fread(buf, 1, 100, f), 100);
	assert_int_equal(ftello(f), 100);
	assert_int_equal(fread(buf + 100, 1, sizeof(buf) - 100, f), sizeof(buf) - 100);
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], (uint8_t)(i * 7 + 3));
	assert_int_equal(fread(buf, 1, 1, f), 0);
	assert_true(feof(f));
	assert_false(mapped_shrank());
	fclose(f);
	assert_null(mapped_bytes(&len));
	close(fd);
	unlink(path);
}

static void test_a_second_mapped_stream_is_refused_until_the_first_closes(void **state)
{
	char p1[64], p2[64];
	int fd1 = patterned_file(p1, sizeof(p1), 1), fd2 = patterned_file(p2, sizeof(p2), 1);
	FILE *f1, *f2;

	(void)state;
	f1 = mapped_open(fd1, PAGE);
	assert_non_null(f1);
	assert_null(mapped_open(fd2, PAGE));
	fclose(f1);
	f2 = mapped_open(fd2, PAGE);
	assert_non_null(f2);
	fclose(f2);
	assert_null(mapped_open(fd1, 0));       /* nothing to map */
	close(fd1);
	close(fd2);
	unlink(p1);
	unlink(p2);
}

static void test_a_file_that_shrinks_under_the_reader_reads_as_zeros_and_says_so(void **state)
{
	char path[64];
	uint8_t buf[PAGE];
	int fd = patterned_file(path, sizeof(path), 4);
	FILE *f;

	(void)state;
	f = mapped_open(fd, 4 * PAGE);
	assert_non_null(f);
	assert_int_equal(fread(buf, 1, PAGE, f), PAGE);
	assert_int_equal(buf[PAGE - 1], (uint8_t)((PAGE - 1) * 7 + 3));
	/* the pages past the new end now raise SIGBUS when touched */
	assert_int_equal(ftruncate(fd, PAGE), 0);
	assert_false(mapped_shrank());
	assert_int_equal(fread(buf, 1, PAGE, f), PAGE);
	assert_true(mapped_shrank());
	for (size_t i = 0; i < PAGE; i++)
		assert_int_equal(buf[i], 0);
	fclose(f);
	close(fd);
	unlink(path);
}

/* libpcap over the mapped stream against libpcap over the file, record by
 * record, on the capture at @path; returns the records read. */
static unsigned compare_with_libpcap(const char *path)
{
	char pe[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h1, *h2;
	const u_char *d1, *d2;
	struct stat st;
	pcap_t *a, *b;
	FILE *f;
	int fd, r1, r2;
	unsigned n = 0;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		fail_msg("cannot open %s", path);
	assert_int_equal(fstat(fd, &st), 0);
	f = mapped_open(fd, (uint64_t)st.st_size);
	assert_non_null(f);
	a = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, pe);
	assert_non_null(a);
	b = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, pe);
	assert_non_null(b);
	for (;;) {
		r1 = pcap_next_ex(a, &h1, &d1);
		r2 = pcap_next_ex(b, &h2, &d2);
		assert_int_equal(r1, r2);
		if (r1 != 1)
			break;
		assert_int_equal(h1->caplen, h2->caplen);
		assert_int_equal(h1->len, h2->len);
		assert_int_equal(h1->ts.tv_sec, h2->ts.tv_sec);
		assert_int_equal(h1->ts.tv_usec, h2->ts.tv_usec);
		assert_memory_equal(d1, d2, h1->caplen);
		n++;
	}
	assert_int_equal(ftello(f), st.st_size);
	pcap_close(a);          /* closes the mapped stream */
	pcap_close(b);
	close(fd);
	return n;
}

/* ../shared/pcaps/zeek__ssh.pcap: over a thousand records */
static void test_libpcap_reads_a_real_capture_through_it_as_from_the_file(void **state)
{
	char path[4096];

	(void)state;
	snprintf(path, sizeof(path), "%s/zeek__ssh.pcap", pcaps);
	assert_true(compare_with_libpcap(path) > 1000);
}

/* tests/captures/kernel/bulk_lossy_1m: the kernel's traffic (over two
 * thousand records, nanosecond stamps, frames cut to 160 bytes), and a
 * crafted big-endian file */
static void test_libpcap_reads_own_captures_through_it_as_from_the_file(void **state)
{
	char path[4096];

	(void)state;
	snprintf(path, sizeof(path), "%s/kernel/bulk_lossy_1m/capture.pcap", captures);
	assert_true(compare_with_libpcap(path) > 1000);
	snprintf(path, sizeof(path), "%s/crafted/sctp-adler32-be.pcap", captures);
	assert_int_equal(compare_with_libpcap(path), 4);
}

/* test_mapped own|shared PCAPS_DIR CAPTURES_DIR: "shared" runs the case
 * over ../shared/pcaps, reported skipped where that folder is absent. */
int main(int argc, char **argv)
{
	const struct CMUnitTest own[] = {
		cmocka_unit_test(test_reads_the_file_byte_for_byte_and_reports_its_position),
		cmocka_unit_test(test_a_second_mapped_stream_is_refused_until_the_first_closes),
		cmocka_unit_test(test_a_file_that_shrinks_under_the_reader_reads_as_zeros_and_says_so),
		cmocka_unit_test(test_libpcap_reads_own_captures_through_it_as_from_the_file),
	};
	const struct CMUnitTest shared[] = {
		cmocka_unit_test(test_libpcap_reads_a_real_capture_through_it_as_from_the_file),
	};
	struct stat st;

	pcaps = argc > 2 ? argv[2] : "../shared/pcaps";
	captures = argc > 3 ? argv[3] : "tests/captures";
	if (argc > 1 && strcmp(argv[1], "shared") == 0) {
		if (stat(pcaps, &st) != 0 || !S_ISDIR(st.st_mode)) {
			printf("1..1\nok 1 - %s # SKIP no ../shared/pcaps (%s)\n",
			       shared[0].name, pcaps);
			return 0;
		}
		return cmocka_run_group_tests(shared, NULL, NULL);
	}
	return cmocka_run_group_tests(own, NULL, NULL);
}
