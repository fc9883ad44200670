/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * capture.c - classic pcap through libpcap, pcapng through our own block
 * reader, both over a zlib stream (see capture.h for why); a plain pcap
 * file is handed to libpcap as a FILE of its own instead, over a mapping
 * of the file, and while its records are ones libpcap would return
 * unchanged they are read where they lie (pcap_walk): libpcap checks the
 * file header and takes over at the first record that is not plain.  A
 * plain pcapng file is mapped as well, and its blocks are read in place
 * (ng_map_block) with the same checks and messages as from the stream.
 *
 * The stream layer reads the first bytes to recognise the format and then
 * hands them back, so pipes (standard input) work as well as files.  The
 * pcapng reader checks every length against the block it sits in and
 * refuses blocks over 64 MiB, so a damaged file ends with a message, never
 * with a wild read or a giant allocation.
 */
#include <errno.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "capture.h"
#include "mapped.h"

#define PCAPNG_SHB 0x0A0D0D0Au
#define PCAPNG_BOM 0x1A2B3C4Du
#define MAX_BLOCK (64u * 1024u * 1024u)
#define MAX_IFACES 65536

struct iface {
	int linktype;
	uint64_t ts_mul;      /* ns per tick when ts_div == 1 */
	uint64_t ts_div;      /* ticks per ns divisor for binary resolutions */
	int64_t ts_offset_s;
};

struct cap_src {
	gzFile gz;
	int fd;
	bool is_stdin;
	uint8_t peek[8];
	unsigned peek_len, peek_pos;
	uint64_t consumed;      /* bytes of (decompressed) input consumed */
	uint64_t size;
	bool gzipped;
	bool gz_cut;            /* the gzip stream ended without its trailer */
	bool gz_bad;            /* zlib found the compressed data damaged */
	char gz_msg[128];
	char fmt[16];
	char err[512];
	char where[96];
	uint64_t record;        /* records read so far */
	uint64_t rec_offset;    /* byte offset of the current record */
	/* pcap via libpcap */
	FILE *cookie;           /* over the stream layer, or the file itself */
	char *cookie_buf;       /* the direct FILE's buffer (freed after it) */
	bool direct;            /* cookie is a FILE over the file itself
				 * (mapped, or plain), not the stream layer */
	pcap_t *pcap;
	int pcap_linktype;
	/* a mapped plain pcap: its bytes, and whether packets are handed out
	 * where they lie in it (zero copy; off for link types libpcap
	 * rewrites, and from the first record whose length libpcap changed) */
	bool mapped;
	bool zc;
	const uint8_t *map;
	uint64_t map_len;
	/* the records of a mapped pcap are walked here while they are ones
	 * libpcap would return unchanged (pcap_walk); libpcap's stream stays
	 * after the file header (24 bytes) until it takes over */
	bool walk;
	bool walk_nano;         /* nanosecond timestamps in the file */
	uint32_t walk_snap;     /* pcap_snapshot(): longer records go to libpcap */
	/* pcapng */
	bool ng;
	bool swap;              /* the file's byte order is not ours (pcapng
				 * sections; a mapped pcap's record headers) */
	uint8_t *blk;
	uint32_t blk_cap;
	const uint8_t *bp;      /* the current block: in blk, or in the
				 * mapping of a plain file (ng_map_block) */
	uint64_t ng_pos;        /* a mapped pcapng: offset of the next block */
	struct iface *ifs;
	uint32_t n_ifs, cap_ifs;
};

/* ---- stream layer ---- */

static ssize_t stream_read(struct cap_src *s, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n && s->peek_pos < s->peek_len)
		((uint8_t *)buf)[got++] = s->peek[s->peek_pos++];
	while (got < n) {
		int r = gzread(s->gz, (uint8_t *)buf + got,
			       (unsigned)((n - got) > (1u << 30) ? (1u << 30) : (n - got)));
		if (r < 0) {
			int e;
			const char *m = gzerror(s->gz, &e);

			s->gz_bad = true;
			snprintf(s->gz_msg, sizeof(s->gz_msg), "%s", m ? m : "unknown error");
			s->consumed += got;
			return got ? (ssize_t)got : -1;
		}
		if (r == 0) {
			int e;

			/* zlib reports a stream that ends without its trailer
			 * only here, as an end of file with Z_BUF_ERROR */
			gzerror(s->gz, &e);
			if (e == Z_BUF_ERROR)
				s->gz_cut = true;
			break;
		}
		got += (size_t)r;
	}
	s->consumed += got;
	return (ssize_t)got;
}

static ssize_t cookie_read(void *c, char *buf, size_t n)
{
	return stream_read(c, buf, n);
}

/* A stdio stream of its own over regular file @fd, from its start, with
 * a 256 KiB buffer (*@buf, the caller's to free once the stream is
 * closed); NULL if it cannot be had (the caller falls back to the stream
 * layer).  The buffer must be given: glibc ignores setvbuf's size when it
 * is left to allocate one and reads 4 KiB a call (a system call per ~15
 * packets of the shared captures, 4,467 of them for 20 MB). */
#define CAP_DIRECT_BUF (256 * 1024)

static FILE *direct_file(int fd, char **buf)
{
	int fd2 = dup(fd);
	FILE *f;

	*buf = NULL;
	if (fd2 < 0)
		return NULL;
	if (lseek(fd2, 0, SEEK_SET) != 0 || !(f = fdopen(fd2, "rb"))) {
		close(fd2);
		return NULL;
	}
	*buf = malloc(CAP_DIRECT_BUF);
	if (*buf)
		setvbuf(f, *buf, _IOFBF, CAP_DIRECT_BUF);
	return f;
}

/* Link types whose frames libpcap hands out as they are in the file.
 * pcap_post_process rewrites USB headers always, and NFLOG's and the
 * SocketCAN id behind an SLL or SLL2 header when the file's byte order
 * is not ours (@swapped); a Linux cooked capture (`tcpdump -i any`) or
 * an NFLOG one written in our byte order comes out unchanged. */
static bool zero_copy_linktype(int dlt, bool swapped)
{
	switch (dlt) {
	case DLT_EN10MB:
	case DLT_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
	case DLT_NULL:
	case DLT_LOOP:
		return true;
	case DLT_LINUX_SLL:
	case DLT_LINUX_SLL2:
	case DLT_NFLOG:
		return !swapped;
	default:
		return false;
	}
}

/* ---- helpers ---- */

static uint32_t rd32(const struct cap_src *s, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return s->swap ? __builtin_bswap32(v) : v;
}

static uint16_t rd16(const struct cap_src *s, const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return s->swap ? __builtin_bswap16(v) : v;
}

/* Point @p at its frame in the mapping instead of libpcap's buffer, if
 * the record at @off is the one libpcap returned: its length field must
 * say what libpcap said (libpcap shortens records past the snapshot
 * length or its own limit; from such a record on, the offsets counted
 * here no longer follow the file and zero copy stops). */
static void zero_copy(struct cap_src *s, struct cap_pkt *p, uint64_t off)
{
	if (off + 16 + p->caplen > s->map_len ||
	    rd32(s, s->map + off + 8) != p->caplen) {
		s->zc = false;
		return;
	}
	p->data = s->map + off + 16;
	p->stable = true;
}

static int fail(struct cap_src *s, const char *what)
{
	snprintf(s->err, sizeof(s->err), "%s", what);
	return -1;
}

/* A mapped file got shorter while it was read: zeros stand where it was
 * (mapped.h), whatever the reader made of them. */
static int fail_shrank(struct cap_src *s)
{
	return fail(s, "the file shrank while it was being read");
}

/* One more packet handed out, the reader now at byte @pos: a mapped
 * file's pages behind it are let go now and then (mapped_progress). */
static void counted(struct cap_src *s, uint64_t pos)
{
	s->record++;
	if (s->mapped && (s->record & 1023) == 0)
		mapped_progress(pos);
}

/* The end of the input: clean, or a gzip stream cut short or damaged
 * there (which the container format alone would not show when the cut
 * falls between two records).  Returns 0 or -1 as cap_next does. */
static int at_end(struct cap_src *s)
{
	if (s->gz_bad) {
		snprintf(s->err, sizeof(s->err), "damaged gzip data (zlib: %s)", s->gz_msg);
		return -1;
	}
	if (s->gz_cut)
		return fail(s, "the gzip stream is cut short (it ends without its end marker)");
	return 0;
}

static int ng_read_block(struct cap_src *s, uint32_t *type, uint32_t *len);

/* ---- open ---- */

int cap_open(const char *path, struct cap_src **out, char *err, unsigned errlen)
{
	struct cap_src *s = calloc(1, sizeof(*s));
	struct stat st;
	uint8_t magic[4];
	uint32_t m;
	int fd;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (!strcmp(path, "-")) {
		fd = dup(STDIN_FILENO);
		s->is_stdin = true;
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		free(s);
		return -1;
	}
	if (fstat(fd, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "is a directory, not a capture file");
			close(fd);
			free(s);
			return -1;
		}
		if (S_ISREG(st.st_mode))
			s->size = (uint64_t)st.st_size;
	}
	/* gzip? look at the raw first two bytes (regular files only) */
	if (s->size >= 2) {
		uint8_t gzm[2];
		if (pread(fd, gzm, 2, 0) == 2 && gzm[0] == 0x1f && gzm[1] == 0x8b) {
			s->gzipped = true;
			s->size = 0; /* the inflated size is unknown */
		}
	}
	s->fd = fd;
	s->gz = gzdopen(fd, "rb");
	if (!s->gz) {
		snprintf(err, errlen, "cannot read: out of memory");
		close(fd);
		free(s);
		return -1;
	}
	gzbuffer(s->gz, 256 * 1024);
	if (stream_read(s, magic, 4) != 4) {
		if (s->gz_bad)
			snprintf(err, errlen, "is a damaged gzip file (zlib: %s)", s->gz_msg);
		else if (s->gz_cut)
			snprintf(err, errlen, "is a gzip file cut short before a capture header");
		else
			snprintf(err, errlen, "%s", s->consumed == 0 && !s->gzipped
				 ? "is empty, not a capture file"
				 : "is too short to be a capture file");
		cap_close(s);
		return -1;
	}
	/* hand the magic back to whoever parses the header */
	memcpy(s->peek, magic, 4);
	s->peek_len = 4;
	s->peek_pos = 0;
	s->consumed = 0;
	memcpy(&m, magic, 4);
	if (m == PCAPNG_SHB) {
		uint32_t type, len;

		s->ng = true;
		snprintf(s->fmt, sizeof(s->fmt), "pcapng%s", s->gzipped ? ".gz" : "");
		/* a plain regular file is read where it lies (ng_map_block);
		 * the stream stays for anything else */
		if (!s->gzipped && !s->is_stdin && s->size > 0) {
			s->cookie = mapped_open(fd, s->size);
			s->map = s->cookie ? mapped_bytes(&s->map_len) : NULL;
			s->mapped = s->map != NULL;
		}
		/* the section header is what makes the file readable at all,
		 * as the file header is for pcap (libpcap checks it at open) */
		if (ng_read_block(s, &type, &len) != 1) {
			snprintf(err, errlen, "not a readable pcapng file: %s",
				 s->err[0] ? s->err : "cut short inside the section header");
			cap_close(s);
			return -1;
		}
	} else if (m == 0xa1b2c3d4u || m == 0xd4c3b2a1u || m == 0xa1b23c4du ||
		   m == 0x4d3cb2a1u) {
		char pe[PCAP_ERRBUF_SIZE];
		cookie_io_functions_t io = { .read = cookie_read };

		snprintf(s->fmt, sizeof(s->fmt), "pcap%s", s->gzipped ? ".gz" : "");
		/* a plain regular file goes to libpcap as a FILE of its own:
		 * over a mapping of the file (mapped.h), else over a second
		 * descriptor, rewound - either way no copy through zlib's
		 * pass-through and a cookie stream, which cost several times
		 * what libpcap's own reading does */
		if (!s->gzipped && !s->is_stdin && s->size > 0) {
			s->cookie = mapped_open(fd, s->size);
			s->mapped = s->cookie != NULL;
			if (!s->cookie)
				s->cookie = direct_file(fd, &s->cookie_buf);
		}
		if (s->cookie)
			s->direct = true;
		else
			s->cookie = fopencookie(s, "r", io);
		/* only this thread reads it: no lock per fread() (libpcap
		 * makes two a record) */
		if (s->cookie)
			__fsetlocking(s->cookie, FSETLOCKING_BYCALLER);
		if (!s->cookie) {
			snprintf(err, errlen, "cannot read: %s", strerror(errno));
			cap_close(s);
			return -1;
		}
		s->pcap = pcap_fopen_offline_with_tstamp_precision(
			s->cookie, PCAP_TSTAMP_PRECISION_NANO, pe);
		if (!s->pcap) {
			snprintf(err, errlen, "not a readable pcap file: %s", pe);
			s->cookie = NULL; /* libpcap closed it */
			cap_close(s);
			return -1;
		}
		s->pcap_linktype = pcap_datalink(s->pcap);
		s->rec_offset = 24;
		if (s->mapped) {
			s->map = mapped_bytes(&s->map_len);
			s->swap = pcap_is_swapped(s->pcap) == 1;
			s->zc = s->map && zero_copy_linktype(s->pcap_linktype, s->swap);
			/* version 2.4, the one whose record header libpcap
			 * reads as it is (older ones may swap the lengths) */
			s->walk = s->zc && s->map_len >= 24 && rd16(s, s->map + 4) == 2 &&
				  rd16(s, s->map + 6) == 4;
			s->walk_nano = m == 0xa1b23c4du || m == 0x4d3cb2a1u;
			s->walk_snap = (uint32_t)pcap_snapshot(s->pcap);
		}
	} else {
		snprintf(err, errlen,
			 "is not a capture file (starts with %02x %02x %02x %02x; "
			 "expected pcap or pcapng, optionally gzip-compressed)",
			 magic[0], magic[1], magic[2], magic[3]);
		cap_close(s);
		return -1;
	}
	*out = s;
	return 0;
}

/* ---- pcapng ---- */

/* A section header's byte-order magic @bom and length field @lenp (as
 * they lie in the file): the byte order of the section, and the length.
 * Returns 0, or -1 with the reason in s->err. */
static int ng_shb_head(struct cap_src *s, const uint8_t *bom, const uint8_t *lenp,
		       uint32_t *l)
{
	uint32_t b;

	memcpy(&b, bom, 4);
	if (b == PCAPNG_BOM)
		s->swap = false;
	else if (b == __builtin_bswap32(PCAPNG_BOM))
		s->swap = true;
	else
		return fail(s, "section header has a bad byte-order magic");
	*l = rd32(s, lenp);
	if (*l < 28 || *l % 4 || *l > MAX_BLOCK)
		return fail(s, "section header has an impossible length");
	return 0;
}

/* Any other block's 8-byte header @hdr: its type and length, checked. */
static int ng_block_head(struct cap_src *s, const uint8_t *hdr, uint32_t *t, uint32_t *l)
{
	*t = rd32(s, hdr);
	*l = rd32(s, hdr + 4);
	if (*l < 12 || *l % 4 || *l > MAX_BLOCK)
		return fail(s, "block has an impossible length");
	return 0;
}

/*
 * ng_read_block for a plain pcapng file that is mapped: the block where
 * it lies, with the checks and the messages of the stream path below, so
 * that a mapped file and the same bytes from a pipe read alike
 * (tests/cli/test_mapped_equivalence.py); its packets are then handed
 * out in place (stable), no block copied.
 */
static int ng_map_block_at(struct cap_src *s, uint32_t *type, uint32_t *len)
{
	uint64_t left = s->map_len - s->ng_pos;
	const uint8_t *b = s->map + s->ng_pos;
	uint32_t t, l;

	s->rec_offset = s->ng_pos;
	if (!left)
		return 0;
	if (left < 8)
		return fail(s, "cut short inside a block header");
	memcpy(&t, b, 4);
	if (t == PCAPNG_SHB) {
		if (left < 12)
			return fail(s, "cut short inside a section header");
		if (ng_shb_head(s, b + 8, b + 4, &l) < 0)
			return -1;
		if (left < l)
			return fail(s, "cut short inside a section header");
	} else {
		if (ng_block_head(s, b, &t, &l) < 0)
			return -1;
		if (left < l)
			return fail(s, "cut short inside a block");
		if (rd32(s, b + l - 4) != l)
			return fail(s, "block's trailing length does not match its header");
	}
	s->ng_pos += l;
	s->bp = b;
	*type = t;
	*len = l;
	return 1;
}

static int ng_map_block(struct cap_src *s, uint32_t *type, uint32_t *len)
{
	int r = ng_map_block_at(s, type, len);

	/* zeros stand where a file shrank under us (mapped.h): whatever
	 * the block looked like, that is what went wrong */
	if (r != 0 && mapped_shrank())
		return fail_shrank(s);
	return r;
}

static int ng_read_block(struct cap_src *s, uint32_t *type, uint32_t *len)
{
	uint8_t hdr[8];
	ssize_t r;
	uint32_t t, l;

	if (s->mapped)
		return ng_map_block(s, type, len);
	s->rec_offset = s->consumed;
	r = stream_read(s, hdr, 8);
	if (r == 0)
		return 0;
	if (r != 8)
		return fail(s, "cut short inside a block header");
	memcpy(&t, hdr, 4);
	if (t == PCAPNG_SHB) {
		/* a section header sets the byte order for what follows */
		uint8_t bom[4];

		if (stream_read(s, bom, 4) != 4)
			return fail(s, "cut short inside a section header");
		if (ng_shb_head(s, bom, hdr + 4, &l) < 0)
			return -1;
		if (s->blk_cap < l) {
			uint8_t *nb = realloc(s->blk, l);
			if (!nb)
				return fail(s, "out of memory");
			s->blk = nb;
			s->blk_cap = l;
		}
		memcpy(s->blk, hdr, 8);
		memcpy(s->blk + 8, bom, 4);
		if (stream_read(s, s->blk + 12, l - 12) != (ssize_t)(l - 12))
			return fail(s, "cut short inside a section header");
		s->bp = s->blk;
		*type = t;
		*len = l;
		return 1;
	}
	if (ng_block_head(s, hdr, &t, &l) < 0)
		return -1;
	if (s->blk_cap < l) {
		uint8_t *nb = realloc(s->blk, l);
		if (!nb)
			return fail(s, "out of memory");
		s->blk = nb;
		s->blk_cap = l;
	}
	memcpy(s->blk, hdr, 8);
	r = stream_read(s, s->blk + 8, l - 8);
	if (r != (ssize_t)(l - 8))
		return fail(s, "cut short inside a block");
	if (rd32(s, s->blk + l - 4) != l)
		return fail(s, "block's trailing length does not match its header");
	s->bp = s->blk;
	*type = t;
	*len = l;
	return 1;
}

static void ng_parse_idb(struct cap_src *s, uint32_t len)
{
	struct iface f = { .linktype = rd16(s, s->bp + 8), .ts_mul = 1000,
			   .ts_div = 1, .ts_offset_s = 0 };
	uint32_t off = 16;

	/* options: if_tsresol (9), if_tsoffset (14) */
	while (off + 4 <= len - 4) {
		uint16_t code = rd16(s, s->bp + off);
		uint16_t olen = rd16(s, s->bp + off + 2);

		if (code == 0 || off + 4 + olen > len - 4)
			break;
		if (code == 9 && olen >= 1) {
			uint8_t r = s->bp[off + 4];
			if (r & 0x80) {
				unsigned e = r & 0x7f;
				f.ts_mul = 0;
				f.ts_div = e < 64 ? (1ull << e) : 0;
			} else {
				uint64_t per_s = 1;
				for (unsigned i = 0; i < (r & 0x7f) && i < 19; i++)
					per_s *= 10;
				if (per_s <= 1000000000ull) {
					f.ts_mul = 1000000000ull / per_s;
					f.ts_div = 1;
				} else {
					f.ts_mul = 0;
					f.ts_div = per_s / 1000000000ull;
				}
			}
		} else if (code == 14 && olen >= 8) {
			uint64_t v;
			memcpy(&v, s->bp + off + 4, 8);
			if (s->swap)
				v = __builtin_bswap64(v);
			f.ts_offset_s = (int64_t)v;
		}
		off += 4 + ((olen + 3u) & ~3u);
	}
	if (s->n_ifs == s->cap_ifs && s->n_ifs < MAX_IFACES) {
		uint32_t cap = s->cap_ifs ? s->cap_ifs * 2 : 8;
		struct iface *n = realloc(s->ifs, cap * sizeof(*n));
		if (!n)
			return;
		s->ifs = n;
		s->cap_ifs = cap;
	}
	if (s->n_ifs < s->cap_ifs)
		s->ifs[s->n_ifs++] = f;
}

static uint64_t ng_ts(const struct iface *f, uint64_t ticks)
{
	uint64_t ns;

	if (f->ts_mul)
		ns = ticks * f->ts_mul;
	else if (f->ts_div > 1000000000ull)
		ns = (uint64_t)((__uint128_t)ticks * 1000000000ull / f->ts_div);
	else if (f->ts_div)
		ns = ticks / f->ts_div;
	else
		ns = ticks;
	/* in unsigned arithmetic: an absurd if_tsoffset wraps the time
	 * (defined), where int64_t arithmetic overflowed (undefined) */
	return ns + (uint64_t)f->ts_offset_s * 1000000000ull;
}

/* A packet of the current block is handed out: counted, and from a
 * mapped file in place (stable until cap_close). */
static void ng_handed(struct cap_src *s, struct cap_pkt *p)
{
	p->stable = s->mapped;
	counted(s, s->ng_pos);
}

static int ng_next(struct cap_src *s, struct cap_pkt *p)
{
	for (;;) {
		uint32_t type, len;
		int r = ng_read_block(s, &type, &len);

		if (r == 0)
			return at_end(s);
		if (r < 0)
			return r;
		switch (type) {
		case PCAPNG_SHB:
			s->n_ifs = 0; /* a new section has its own interfaces */
			break;
		case 1: /* interface description */
			if (len < 20)
				return fail(s, "interface block too short");
			ng_parse_idb(s, len);
			break;
		case 6: /* enhanced packet */
		case 2: { /* obsolete packet block */
			uint32_t ifid, caplen, wire, hi, lo;

			if (len < 32)
				return fail(s, "packet block too short");
			if (type == 6) {
				ifid = rd32(s, s->bp + 8);
			} else {
				ifid = rd16(s, s->bp + 8);
			}
			hi = rd32(s, s->bp + 12);
			lo = rd32(s, s->bp + 16);
			caplen = rd32(s, s->bp + 20);
			wire = rd32(s, s->bp + 24);
			if (caplen > len - 32)
				return fail(s, "packet block claims more bytes than it holds");
			if (ifid >= s->n_ifs)
				return fail(s, "packet refers to an interface that was never described");
			p->data = s->bp + 28;
			p->caplen = caplen;
			p->wirelen = wire < caplen ? caplen : wire;
			p->ts_ns = ng_ts(&s->ifs[ifid], (uint64_t)hi << 32 | lo);
			p->linktype = s->ifs[ifid].linktype;
			p->ifindex = ifid;
			ng_handed(s, p);
			return 1;
		}
		case 3: { /* simple packet: interface 0, no timestamp */
			uint32_t wire;

			if (len < 16 || s->n_ifs == 0)
				return fail(s, "simple packet block without interface");
			wire = rd32(s, s->bp + 8);
			p->data = s->bp + 12;
			p->caplen = wire < len - 16 ? wire : len - 16;
			p->wirelen = wire;
			p->ts_ns = 0;
			p->linktype = s->ifs[0].linktype;
			p->ifindex = 0;
			ng_handed(s, p);
			return 1;
		}
		default:
			break; /* statistics, name resolution, custom: skip */
		}
	}
}

/* ---- pcap ---- */

/*
 * The next record of a mapped pcap, read where it lies, while it is one
 * that libpcap would hand out unchanged: whole, no longer than the
 * snapshot length and libpcap's own limit (262,144 bytes), of a link
 * type libpcap does not rewrite (s->zc), in a version 2.4 file.  Each
 * record through libpcap costs two fread()s on a cookie stream, whose
 * generic path copies the 16-byte header byte by byte: about a quarter
 * of `ctrack read`'s instructions on the shared captures.  The fields are
 * taken as libpcap takes them (signed 32-bit seconds and fraction, the
 * fraction times 1000 for a microsecond file), and
 * tests/cli/test_mapped_equivalence.py compares every event, counter and
 * message with libpcap's own reading from a pipe.  Returns 1 with a
 * packet, 0 at the clean end of the file, 2 when libpcap must take over
 * at s->rec_offset (a record cut short, too long, or any other
 * irregularity: its messages are libpcap's), -1 when the file shrank.
 */
static int pcap_walk(struct cap_src *s, struct cap_pkt *p)
{
	uint64_t off = s->rec_offset, left = s->map_len - off;
	const uint8_t *h = s->map + off;
	uint32_t incl;
	int64_t sec, frac;

	if (!left)
		return 0;
	if (left < 16)
		return 2;
	incl = rd32(s, h + 8);
	if (incl > s->walk_snap || incl > 262144 || left - 16 < incl)
		return 2;
	sec = (int32_t)rd32(s, h);
	frac = (int32_t)rd32(s, h + 4);
	if (!s->walk_nano)
		frac *= 1000;
	p->data = h + 16;
	p->caplen = incl;
	p->wirelen = rd32(s, h + 12);
	if (p->wirelen < incl)
		p->wirelen = incl;
	p->ts_ns = (uint64_t)(sec * 1000000000LL) + (uint64_t)frac;
	p->linktype = s->pcap_linktype;
	p->ifindex = 0;
	p->stable = true;
	if (mapped_shrank())
		return fail_shrank(s);
	s->rec_offset += 16 + (uint64_t)incl;
	counted(s, s->rec_offset);
	return 1;
}

/* Bring libpcap's stream from the end of the file header to
 * s->rec_offset, where the walk stopped, by reading (a seek would refill
 * the stream's buffer, which is the mapping, from the new offset: over
 * the bytes handed out).  Reached only at an irregular record, so the
 * copy is what libpcap would have made anyway. */
static int pcap_walk_stop(struct cap_src *s)
{
	static char sink[65536];
	uint64_t n = s->rec_offset - 24;

	s->walk = false;
	while (n) {
		size_t k = n < sizeof(sink) ? (size_t)n : sizeof(sink);

		if (fread(sink, 1, k, s->cookie) != k)
			return mapped_shrank() ? fail_shrank(s) : fail(s, "cannot read the file");
		n -= k;
	}
	return 0;
}

static int pcap_next_pkt(struct cap_src *s, struct cap_pkt *p)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	int r;

	if (s->walk) {
		r = pcap_walk(s, p);
		if (r != 2)
			return r;
		if (pcap_walk_stop(s) < 0)
			return -1;
	}
	r = pcap_next_ex(s->pcap, &h, &data);

	if (r == 1) {
		p->data = data;
		p->caplen = h->caplen;
		p->wirelen = h->len < h->caplen ? h->caplen : h->len;
		/* nanosecond precision was asked for: tv_usec holds ns */
		p->ts_ns = (uint64_t)h->ts.tv_sec * 1000000000ull + (uint64_t)h->ts.tv_usec;
		p->linktype = s->pcap_linktype;
		p->ifindex = 0;
		/* a mapped file: zeros stand where it shrank, from this
		 * record on (cap_where names it) */
		if (s->mapped && mapped_shrank())
			return fail_shrank(s);
		if (s->zc)
			zero_copy(s, p, s->rec_offset);
		s->rec_offset += 16 + (uint64_t)h->caplen; /* next record's header */
		counted(s, s->rec_offset);
		return 1;
	}
	if (r == PCAP_ERROR_BREAK)
		return at_end(s);
	if (s->gz_bad)
		return at_end(s);    /* zlib's reason, not libpcap's short read */
	if (s->mapped && mapped_shrank())
		return fail_shrank(s);
	snprintf(s->err, sizeof(s->err), "%s", pcap_geterr(s->pcap));
	if (!s->err[0] || !strcmp(s->err, "No error"))
		return at_end(s);
	return -1;
}

int cap_next(struct cap_src *s, struct cap_pkt *p)
{
	p->stable = false;
	return s->ng ? ng_next(s, p) : pcap_next_pkt(s, p);
}

const char *cap_error(const struct cap_src *s)
{
	return s->err;
}

const char *cap_where(struct cap_src *s)
{
	if (s->ng)
		snprintf(s->where, sizeof(s->where), "the block at byte offset %llu (after packet %llu)",
			 (unsigned long long)s->rec_offset, (unsigned long long)s->record);
	else
		snprintf(s->where, sizeof(s->where), "record %llu (byte offset %llu)",
			 (unsigned long long)s->record + 1,
			 (unsigned long long)s->rec_offset);
	return s->where;
}

const char *cap_format(const struct cap_src *s)
{
	return s->fmt;
}

uint64_t cap_bytes_read(const struct cap_src *s)
{
	if (s->walk)
		return s->rec_offset;
	if (s->ng && s->mapped)
		return s->ng_pos;
	if (s->direct) {
		off_t o = ftello(s->cookie);
		return o > 0 ? (uint64_t)o : 0;
	}
	return s->consumed;
}

uint64_t cap_size(const struct cap_src *s)
{
	return s->size;
}

void cap_close(struct cap_src *s)
{
	if (!s)
		return;
	if (s->pcap)
		pcap_close(s->pcap); /* closes the cookie FILE too */
	else if (s->cookie)
		fclose(s->cookie);
	if (s->gz)
		gzclose(s->gz); /* closes fd */
	else if (s->fd > 0)
		close(s->fd);
	free(s->cookie_buf);
	free(s->blk);
	free(s->ifs);
	free(s);
}
