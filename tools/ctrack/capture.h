/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * capture.h - packets from capture files, whatever their wrapping.
 *
 * One interface over: classic pcap (either byte order, micro- or
 * nanosecond timestamps) read by libpcap; pcapng read by our own block
 * reader (libpcap 1.10 refuses pcapng files whose interfaces have
 * different link types, and does not tell which interface a packet came
 * in on, which --zone-by interface needs); either of them gzip-compressed;
 * and "-" for standard input.  Decompression is transparent: the input is
 * read through zlib, which passes plain files through unchanged - except
 * a plain pcap file, which libpcap reads itself (the pass-through and the
 * stream under libpcap cost several times libpcap's own reading), over a
 * mapping; the records of a mapped file are read in place for as long as
 * libpcap would return them unchanged, and libpcap reads the rest (see
 * capture.c: its two fread()s a record were a quarter of the work).  A
 * plain pcapng file is mapped too, its blocks read where they lie.
 */
#ifndef CTRACK_TOOL_CAPTURE_H
#define CTRACK_TOOL_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>

struct cap_src;

struct cap_pkt {
	const uint8_t *data;
	uint32_t caplen;
	uint32_t wirelen;
	uint64_t ts_ns;
	int linktype;       /* LINKTYPE_* */
	uint32_t ifindex;   /* pcapng interface id; 0 for pcap */
	bool stable;        /* data stays valid until cap_close (it points
			     * into a mapped file), not only until the next
			     * cap_next */
};

/*
 * cap_open - open @path ("-": standard input).  Returns 0, or -1 with a
 * sentence for a person in @err ("not a capture file (starts with ...)").
 */
int cap_open(const char *path, struct cap_src **out, char *err, unsigned errlen);

/* cap_next - 1: a packet in *pkt (valid until the next call, or until
 * cap_close where pkt->stable says so); 0: end of
 * file; -1: the file is damaged from here on (cap_error says how, and
 * cap_where says where). */
int cap_next(struct cap_src *s, struct cap_pkt *pkt);

const char *cap_error(const struct cap_src *s);
/* "record 7 (byte offset 5712)" */
const char *cap_where(struct cap_src *s);
const char *cap_format(const struct cap_src *s); /* "pcap", "pcapng", "pcap.gz"... */
uint64_t cap_bytes_read(const struct cap_src *s);
uint64_t cap_size(const struct cap_src *s);     /* 0 when unknown (pipe, gz) */
void cap_close(struct cap_src *s);

#endif
