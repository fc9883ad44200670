/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_parse.c - libFuzzer target for the frame parser, the checksum
 * check and reassembly.
 *
 * Input: byte 0 selects the link type (low 4 bits, see links[]) and a
 * mode; the rest is frame data.
 *   bit 7 clear: the rest is one frame;
 *   bit 7 set:   the rest is a sequence of records, a 2-byte big-endian
 *                length then that many bytes, each one frame, all fed to
 *                one reassembler with time advancing one second per
 *                record, so that datagrams can be completed, overlapped
 *                and timed out within one input;
 *   bit 6 set:   each frame claims 64 more bytes on the wire than were
 *                captured (a snaplen cut).
 * Every frame is copied into a heap block of exactly its size, so that
 * AddressSanitizer catches a read one byte past the frame.
 * scripts/make-fuzz-seeds.sh writes seeds in this format.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/defrag.h"
#include "ctrack/packet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int links[] = {
	CT_LINK_ETHERNET, CT_LINK_RAW, CT_LINK_DLT_RAW12, CT_LINK_NULL,
	CT_LINK_LOOP, CT_LINK_LINUX_SLL, CT_LINK_LINUX_SLL2, CT_LINK_IPV4,
	CT_LINK_IPV6, CT_LINK_NFLOG, CT_LINK_DLT_RAW14, 147,
};

static void one_frame(struct ct_defrag *d, int link, const uint8_t *p,
		      size_t n, uint32_t extra, ct_time_ns now)
{
	uint8_t *f = malloc(n ? n : 1);
	struct ct_packet pkt, out;

	if (!f)
		return;
	memcpy(f, p, n);
	ct_parse_frame(&pkt, link, f, (uint32_t)n, (uint32_t)n + extra, now);
	if (pkt.kind == CT_PKT_TRACKABLE)
		(void)ct_packet_l4_csum_ok(&pkt);
	if (pkt.kind == CT_PKT_FRAGMENT &&
	    ct_defrag_feed(d, &pkt, now, &out) == 1) {
		/* out may point into f (a fragment let through) or into d */
		if (out.kind == CT_PKT_TRACKABLE)
			(void)ct_packet_l4_csum_ok(&out);
	}
	free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ct_defrag *d;
	int link;
	uint32_t extra;

	if (size < 1)
		return 0;
	link = links[(data[0] & 0x0f) % (sizeof(links) / sizeof(links[0]))];
	extra = (data[0] & 0x40) ? 64 : 0;
	/* a small memory limit, so that the refusal path is reached too */
	d = ct_defrag_create(256 * 1024, 0);
	if (!d)
		return 0;
	data++;
	size--;
	if (!(data[-1] & 0x80)) {
		one_frame(d, link, data, size, extra, 0);
	} else {
		ct_time_ns now = 0;

		while (size >= 2) {
			size_t n = (size_t)data[0] << 8 | data[1];

			data += 2;
			size -= 2;
			if (n > size)
				n = size;
			one_frame(d, link, data, n, extra, now);
			data += n;
			size -= n;
			now += 1000000000ull;
		}
	}
	ct_defrag_destroy(d);
	return 0;
}
