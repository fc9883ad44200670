/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_capture.c - libFuzzer target for the tool's capture reader
 * (tools/ctrack/capture.c and mapped.c): the input is a whole capture
 * file - classic pcap read by libpcap over a mapping of the file, pcapng
 * read by our own block reader, either one gzip-compressed.
 *
 * The input is written to a memory file (memfd) and opened by its
 * /proc/self/fd path, so the reader sees a regular file and takes the
 * path `ctrack read FILE` takes: the mapping, frames handed out in place.
 * Every byte of every frame returned is read (a wild pointer or a length
 * past the mapping is an AddressSanitizer report or a fault), and the
 * error and position strings are built when the reader stops on damage.
 * Seeds (scripts/run-fuzz.sh): the shared captures, cut to 64 KiB.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;
static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cap_src *s;
	struct cap_pkt p;
	char err[512];
	volatile uint8_t sink = 0;
	unsigned n = 0;
	int r;

	if (memfd < 0) {
		memfd = memfd_create("fuzz-capture", MFD_CLOEXEC);
		if (memfd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	}
	if (ftruncate(memfd, 0) || (size && pwrite(memfd, data, size, 0) != (ssize_t)size))
		abort();
	if (cap_open(path, &s, err, sizeof(err)) < 0) {
		if (!err[0])
			abort();        /* a refusal always says why */
		return 0;
	}
	while (n < 100000 && (r = cap_next(s, &p)) == 1) {
		uint8_t x = 0;

		for (uint32_t i = 0; i < p.caplen; i++)
			x ^= p.data[i];
		sink ^= x;
		if (p.wirelen < p.caplen)
			abort();        /* the reader promises wirelen >= caplen */
		n++;
	}
	if (n < 100000 && r < 0 && (!cap_error(s)[0] || !cap_where(s)[0]))
		abort();                /* damage is always described */
	(void)cap_format(s);
	(void)cap_bytes_read(s);
	cap_close(s);
	(void)sink;
	return 0;
}
