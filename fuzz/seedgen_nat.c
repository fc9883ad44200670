/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seedgen_nat.c - seed corpus for fuzz_nat, written from real captures.
 *
 * Usage: seedgen_nat OUT_DIR CAPTURE...
 *
 * fuzz_nat's input is a control byte, a 4-byte seed and a frame.  For the
 * first 64 frames of each capture with an Ethernet or raw-IP link type,
 * two seeds: one with the capture's checksums as they are, one with them
 * fixed and the other direction, each with a different mix of the
 * translated sides and flags, so that real TCP, UDP, ICMP errors, IPv6
 * extension chains and fragments start the corpus.  Files libpcap cannot
 * open are skipped with a note on stderr.
 */
#include <pcap/pcap.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int write_seed(const char *dir, const char *base, unsigned i, unsigned k,
		      uint8_t ctl, const uint8_t *frame, uint32_t len)
{
	char path[4096];
	uint8_t hdr[5] = { ctl, (uint8_t)(i >> 8), (uint8_t)i, (uint8_t)k, 0x5a };
	FILE *f;
	int bad;

	snprintf(path, sizeof(path), "%s/%s-%u-%u", dir, base, i, k);
	f = fopen(path, "wb");
	if (!f)
		return -1;
	bad = fwrite(hdr, sizeof(hdr), 1, f) != 1 || (len && fwrite(frame, len, 1, f) != 1);
	return fclose(f) || bad ? -1 : 0;
}

int main(int argc, char **argv)
{
	char err[PCAP_ERRBUF_SIZE];

	if (argc < 2) {
		fprintf(stderr, "usage: seedgen_nat OUT_DIR CAPTURE...\n");
		return 2;
	}
	for (int a = 2; a < argc; a++) {
		pcap_t *p = pcap_open_offline(argv[a], err);
		const char *base = strrchr(argv[a], '/');
		struct pcap_pkthdr *h;
		const u_char *d;
		uint8_t raw;
		int dl;

		if (!p) {
			fprintf(stderr, "seedgen_nat: %s: %s (skipped)\n", argv[a], err);
			continue;
		}
		base = base ? base + 1 : argv[a];
		dl = pcap_datalink(p);
		if (dl == DLT_EN10MB)
			raw = 0;
		else if (dl == DLT_RAW || dl == 12 || dl == 14)
			raw = 0x40;
		else {
			pcap_close(p);
			continue;
		}
		for (unsigned i = 0; i < 64 && pcap_next_ex(p, &h, &d) == 1; i++) {
			uint8_t ctl = (uint8_t)(((i * 37u) & 0x2e) | raw);

			if (write_seed(argv[1], base, i, 0, ctl, d, h->caplen) ||
			    write_seed(argv[1], base, i, 1, (uint8_t)(ctl ^ 0x17), d, h->caplen)) {
				fprintf(stderr, "seedgen_nat: cannot write to %s\n", argv[1]);
				pcap_close(p);
				return 1;
			}
		}
		pcap_close(p);
	}
	return 0;
}
