/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pcap_util.h - load a capture into memory for the parser tests
 * (header-only: each test executable includes it once).
 *
 * Two sets of captures: the third-party corpus in ../shared/pcaps
 * (PCAPS_DIR), which only the project's own checkouts have beside them,
 * and the project's own in tests/captures (CAPTURES_DIR: crafted/ from
 * craft.py, kernel/ from record_kernel.py), which every clone has.  A test
 * program keeps the cases that need the corpus in a group of their own,
 * run by meson as NAME-shared (tcap_main below); without the corpus each
 * of those cases is reported skipped, one TAP line each, and the program's
 * own group still runs over the project's captures.  Include it after
 * cmocka.h: tcap_main takes cmocka's test arrays.
 *
 * Frames are copied out of libpcap so that a test can parse any of them in
 * any order.  Reading stops quietly at the first error libpcap reports
 * (some corpus files are broken on purpose); tc->read_error says so.
 * ".gz" files are inflated with zlib and read through fmemopen().
 */
#ifndef CT_TEST_PCAP_UTIL_H
#define CT_TEST_PCAP_UTIL_H

#include <pcap/pcap.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "ctrack/packet.h"

#ifndef PCAPS_DIR
#error "PCAPS_DIR must be defined by the build"
#endif
#ifndef CAPTURES_DIR
#error "CAPTURES_DIR must be defined by the build"
#endif

/* A crafted capture of the project's own (tests/captures/crafted), as an
 * absolute path for tcap_load(). */
#define OWN(name) CAPTURES_DIR "/crafted/" name

struct tframe {
	uint8_t *data;
	uint32_t caplen, wirelen;
	uint64_t ts_ns;
};

struct tcap {
	int linktype;
	size_t n;
	struct tframe *f;
	bool read_error;
	char err[PCAP_ERRBUF_SIZE + 64];
};

static inline char *tcap_path(const char *name)
{
	size_t n = strlen(PCAPS_DIR) + strlen(name) + 2;
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s/%s", PCAPS_DIR, name);
	return p;
}

/* Inflate a .gz file into memory; NULL on error. */
static inline uint8_t *tcap_gunzip(const char *path, size_t *len)
{
	gzFile gz = gzopen(path, "rb");
	size_t cap = 1 << 20, n = 0;
	uint8_t *buf;

	if (!gz)
		return NULL;
	buf = malloc(cap);
	while (buf) {
		int r;

		if (n == cap) {
			uint8_t *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		r = gzread(gz, buf + n, (unsigned)(cap - n));
		if (r < 0) {
			free(buf);
			buf = NULL;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	gzclose(gz);
	*len = n;
	return buf;
}

/* Load @name (relative to PCAPS_DIR, or absolute). Returns false if the
 * file cannot be opened at all. */
static inline bool tcap_load(struct tcap *tc, const char *name)
{
	char *path = name[0] == '/' ? strdup(name) : tcap_path(name);
	uint8_t *gzbuf = NULL;
	size_t gzlen = 0;
	pcap_t *p = NULL;
	struct pcap_pkthdr *h;
	const u_char *d;
	size_t cap = 0;
	int rc;

	memset(tc, 0, sizeof(*tc));
	if (!path)
		return false;
	if (strlen(path) > 3 && strcmp(path + strlen(path) - 3, ".gz") == 0) {
		FILE *fp;

		gzbuf = tcap_gunzip(path, &gzlen);
		fp = gzbuf ? fmemopen(gzbuf, gzlen, "rb") : NULL;
		if (fp) {
			p = pcap_fopen_offline(fp, tc->err);
			if (!p)
				fclose(fp);
		}
	} else {
		p = pcap_open_offline(path, tc->err);
	}
	free(path);
	if (!p) {
		free(gzbuf);
		return false;
	}
	tc->linktype = pcap_datalink(p);
	while ((rc = pcap_next_ex(p, &h, &d)) == 1) {
		struct tframe *fr;

		if (tc->n == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			struct tframe *nf = realloc(tc->f, ncap * sizeof(*nf));

			if (!nf)
				break;
			tc->f = nf;
			cap = ncap;
		}
		fr = &tc->f[tc->n];
		fr->data = malloc(h->caplen ? h->caplen : 1);
		if (!fr->data)
			break;
		memcpy(fr->data, d, h->caplen);
		fr->caplen = h->caplen;
		fr->wirelen = h->len;
		fr->ts_ns = (uint64_t)h->ts.tv_sec * 1000000000ull +
			    (uint64_t)h->ts.tv_usec *
			    (pcap_get_tstamp_precision(p) ==
			     PCAP_TSTAMP_PRECISION_NANO ? 1u : 1000u);
		tc->n++;
	}
	if (rc == PCAP_ERROR) {
		tc->read_error = true;
		snprintf(tc->err, sizeof(tc->err), "%s", pcap_geterr(p));
	}
	pcap_close(p);
	free(gzbuf);
	return true;
}

static inline void tcap_free(struct tcap *tc)
{
	for (size_t i = 0; i < tc->n; i++)
		free(tc->f[i].data);
	free(tc->f);
	memset(tc, 0, sizeof(*tc));
}

/* Parse frame @i (0-based) of @tc. */
static inline enum ct_pkt_kind tcap_parse(const struct tcap *tc, size_t i,
					  struct ct_packet *pkt)
{
	const struct tframe *fr = &tc->f[i];

	return ct_parse_frame(pkt, tc->linktype, fr->data, fr->caplen,
			      fr->wirelen, fr->ts_ns);
}

/* IPv4 address literal in network order, as the tuple keeps it. */
static inline uint32_t tip4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	uint8_t x[4] = { a, b, c, d };
	uint32_t v;

	memcpy(&v, x, 4);
	return v;
}

/* Does ../shared/pcaps exist here? */
static inline bool tcap_have_shared(void)
{
	struct stat st;

	return stat(PCAPS_DIR, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * main() of a test program with two groups: @own (synthetic frames and the
 * project's captures) by default, @shared (cases over ../shared/pcaps) when
 * the first argument is "shared".  Without ../shared/pcaps each case of
 * @shared is reported as skipped, naming what it needs, in cmocka's TAP
 * numbering (cmocka's own skip() would print "not ok ... # SKIP", which
 * TAP readers count as a failure).
 */
static inline int tcap_main(int argc, char **argv,
			    const struct CMUnitTest *own, size_t n_own,
			    const struct CMUnitTest *shared, size_t n_shared)
{
	if (argc > 1 && strcmp(argv[1], "shared") == 0) {
		if (!tcap_have_shared()) {
			printf("1..%zu\n", n_shared);
			for (size_t i = 0; i < n_shared; i++)
				printf("ok %zu - %s # SKIP no ../shared/pcaps (%s)\n",
				       i + 1, shared[i].name, PCAPS_DIR);
			return 0;
		}
		return _cmocka_run_group_tests("shared", shared, n_shared,
					       NULL, NULL);
	}
	return _cmocka_run_group_tests("own", own, n_own, NULL, NULL);
}

#define TCAP_MAIN(own, shared)                                              \
	tcap_main(argc, argv, own, sizeof(own) / sizeof((own)[0]), shared,  \
		  sizeof(shared) / sizeof((shared)[0]))

#endif /* CT_TEST_PCAP_UTIL_H */
