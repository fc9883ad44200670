/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seedgen_record.c - seeds for fuzz_record: seedgen_record OUT_DIR [CAPTURE...]
 *
 * Writes inputs in fuzz_record's format (fuzz_record.c): for each capture
 * named, the table its packets make (TCP window state, UDP streams, ICMP,
 * SCTP, GRE as real traffic leaves them), saved as a state file and as a
 * stream of encoded records (plain and as a commit); and tables of random
 * records of every protocol and zone, so that every tracker's record and
 * every section of the encoding is in the corpus from the start.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctrack/ctrack.h"

static const char *out_dir;
static unsigned n_out;

static void write_seed(uint8_t mode, const uint8_t *b, size_t n, const char *what)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s-%04u", out_dir, what, n_out++);
	fp = fopen(path, "wb");
	if (!fp)
		return;
	fputc(mode, fp);
	fwrite(b, 1, n, fp);
	fclose(fp);
}

struct stream {
	uint8_t *b;
	size_t n, cap;
};

static int add_record(const struct ct_record *r, void *arg)
{
	struct stream *s = arg;
	enum ct_record_reason why;
	size_t n;

	if (s->n + CT_RECORD_ENC_MAX > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 65536;
		uint8_t *nb = realloc(s->b, cap);

		if (!nb)
			return -ENOMEM;
		s->b = nb;
		s->cap = cap;
	}
	n = ct_record_encode(r, s->b + s->n, CT_RECORD_ENC_MAX, &why);
	s->n += n;
	return s->n > (1u << 20);     /* a MiB is plenty for a seed */
}

/* The table of @thr as a state file and as record streams. */
static void write_table(struct ct_thread *thr, ct_time_ns now, const char *what, uint8_t nat)
{
	struct ct_state_save_opts o = { .now = now, .zone = -1, .counters = true };
	char path[4096];
	struct stream s = { 0 };
	FILE *fp;

	snprintf(path, sizeof(path), "%s/.seed-state-%d", out_dir, (int)getpid());
	if (ct_state_save(thr, path, &o, NULL, NULL) == 0 && (fp = fopen(path, "rb"))) {
		uint8_t *b = malloc(8u << 20);
		size_t n = b ? fread(b, 1, 8u << 20, fp) : 0;

		fclose(fp);
		if (n) {
			write_seed(0x00 | nat, b, n, what);
			write_seed(0x16 | nat, b, n, what);  /* 3 h later, counters */
		}
		free(b);
	}
	unlink(path);
	ct_record_export(thr, -1, now, add_record, &s);
	if (s.n) {
		write_seed(0x01 | nat, s.b, s.n, what);
		write_seed(0x03 | nat, s.b, s.n, what);  /* as a commit */
	}
	free(s.b);
}

static int new_table(struct ct_table **t, struct ct_thread **thr, bool nat)
{
	struct ct_table_config cfg;

	ct_table_config_default(&cfg);
	cfg.nat = nat;
	cfg.settings.acct = 1;
	cfg.settings.timestamp = 1;
	cfg.settings.checksum = 0;
	cfg.labels = true;
	if (ct_table_create(&cfg, t) < 0)
		return -1;
	*thr = ct_thread_attach(*t);
	return *thr ? 0 : -1;
}

static void from_capture(const char *file)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(file, err);
	struct pcap_pkthdr *h;
	const u_char *d;
	struct ct_table *t;
	struct ct_thread *thr;
	ct_time_ns now = 0;
	unsigned n = 0;

	if (!p)
		return;
	if (new_table(&t, &thr, false) < 0) {
		pcap_close(p);
		return;
	}
	while (pcap_next_ex(p, &h, &d) == 1 && n++ < 100000) {
		struct ct_packet pkt;
		struct ct_verdict v;
		ct_time_ns ts = (ct_time_ns)h->ts.tv_sec * 1000000000ull +
				(ct_time_ns)h->ts.tv_usec * 1000u;

		if (ts > now)
			now = ts;
		if (ct_parse_frame(&pkt, pcap_datalink(p), d, h->caplen, h->len, now) ==
		    CT_PKT_TRACKABLE)
			ct_process(thr, &pkt, now, &v);
	}
	pcap_close(p);
	if (ct_table_count(t))
		write_table(thr, now, "capture", 0);
	ct_thread_detach(thr);
	ct_table_destroy(t);
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A random record that checks (see tests/record/test_record.c). */
static void random_record(struct ct_record *r)
{
	static const uint8_t l4s[] = { 6, 17, 136, 132, 47, 1, 0, 89 };
	uint8_t l4 = l4s[rnd() % sizeof(l4s)];
	bool v6 = rnd() & 1;

	memset(r, 0, sizeof(*r));
	r->version = CT_RECORD_VERSION;
	if (l4 == 1 && v6)
		l4 = 58;
	r->orig.l3 = v6 ? CT_L3_IPV6 : CT_L3_IPV4;
	r->orig.l4 = l4;
	if (v6)
		for (int i = 0; i < 16; i++) {
			r->orig.src.ip6[i] = (uint8_t)rnd();
			r->orig.dst.ip6[i] = (uint8_t)rnd();
		}
	else {
		r->orig.src.ip4 = (uint32_t)rnd();
		r->orig.dst.ip4 = (uint32_t)rnd();
	}
	if (l4 == 1 || l4 == 58) {
		r->orig.sport = (uint16_t)rnd();
		r->orig.dport = (uint16_t)((l4 == 1 ? 8 : 128) << 8);
	} else if (l4 != 0 && l4 != 89) {
		r->orig.sport = (uint16_t)rnd();
		r->orig.dport = (uint16_t)rnd();
	}
	r->orig.zone = (uint16_t)(rnd() % 3);
	ct_tuple_invert(&r->orig, &r->reply);
	r->status = CT_ST_CONFIRMED | ((uint32_t)rnd() & (CT_ST_SEEN_REPLY | CT_ST_ASSURED));
	r->mark = (uint32_t)rnd();
	r->has = (uint8_t)(rnd() % 8);
	r->timeout_ns = rnd() % (7200ull * 1000000000ull);
	if (r->has & CT_RECORD_HAS_ACCT)
		r->packets[0] = r->bytes[1] = rnd() >> 30;
	if (r->has & CT_RECORD_HAS_TSTAMP) {
		r->first_seen_ago_ns = rnd() >> 20;
		r->last_seen_ago_ns = r->first_seen_ago_ns / 2;
	}
	if (r->has & CT_RECORD_HAS_LABELS)
		r->labels[rnd() % 16] = (uint8_t)rnd();
	if (l4 == 6) {
		r->l4state = (uint8_t)(rnd() % 10);
		for (int d = 0; d < 2; d++) {
			r->proto.tcp.dir[d].td_end = (uint32_t)rnd();
			r->proto.tcp.dir[d].td_maxwin = (uint32_t)rnd() & 0xfffff;
			r->proto.tcp.dir[d].td_scale = (uint8_t)(rnd() % 15);
			r->proto.tcp.dir[d].flags = (uint8_t)(rnd() % 64);
		}
		r->proto.tcp.last_index = (uint8_t)(rnd() % 6);
		r->proto.tcp.retrans = (uint8_t)rnd();
	} else if (l4 == 17) {
		r->proto.udp.age_ns = rnd() % (10ull * 1000000000ull);
	} else if (l4 == 132) {
		r->l4state = (uint8_t)(rnd() % 9);
		r->proto.sctp.vtag[0] = (uint32_t)rnd();
		r->proto.sctp.init[1] = 1;
	} else if (l4 == 47) {
		r->proto.gre.timeout_s = 30;
		r->proto.gre.stream_timeout_s = 180;
	}
}

/* A NAT binding on @r: a source manipulation (the reply's destination),
 * a destination one (its source), or both, with the bits the kernel sets
 * (docs/record.md); ICMP varies its id. */
static void random_binding(struct ct_record *r)
{
	unsigned what = 1 + (unsigned)(rnd() % 3);
	bool icmp = r->orig.l4 == 1 || r->orig.l4 == 58;
	bool ported = r->orig.l4 != 0 && r->orig.l4 != 89 && !icmp;
	size_t al = r->orig.l3 == CT_L3_IPV4 ? 4 : 16;

	r->status |= CT_ST_NAT_DONE_MASK;
	if (what & 1) {
		r->status |= CT_ST_SRC_NAT;
		r->reply.dst.ip6[al - 1] ^= 0x5a;
		if (ported)
			r->reply.dport = (uint16_t)rnd();
		if (icmp)
			r->reply.sport = (uint16_t)(r->reply.sport + 1);
	}
	if (what & 2) {
		r->status |= CT_ST_DST_NAT;
		r->reply.src.ip6[al - 1] ^= 0xa5;
		if (ported)
			r->reply.sport = (uint16_t)rnd();
	}
	if (r->orig.l4 == 17 && rnd() % 4 == 0)
		r->status |= CT_ST_NAT_CLASH;
}

static void random_tables(void)
{
	for (unsigned k = 0; k < 18; k++) {
		struct ct_table *t;
		struct ct_thread *thr;
		unsigned n = 1u << (k % 6);
		bool nat = k >= 12;

		if (new_table(&t, &thr, nat) < 0)
			return;
		ct_ns_create(t, 1, NULL);
		ct_ns_create(t, 2, NULL);
		for (unsigned i = 0; i < n * 4; i++) {
			struct ct_record r;

			random_record(&r);
			if (nat)
				random_binding(&r);
			ct_record_import(thr, &r, 1000000000ull * 1700000000ull, 0, 0, NULL);
		}
		write_table(thr, 1000000000ull * 1700000000ull, nat ? "random-nat" : "random",
			    nat ? 0x20 : 0);
		ct_thread_detach(thr);
		ct_table_destroy(t);
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: seedgen_record OUT_DIR [CAPTURE...]\n");
		return 2;
	}
	out_dir = argv[1];
	for (int i = 2; i < argc; i++)
		from_capture(argv[i]);
	random_tables();
	printf("seedgen_record: %u seeds in %s\n", n_out, out_dir);
	return n_out ? 0 : 1;
}
