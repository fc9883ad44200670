/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seedgen_track.c - seed corpus for fuzz_track, written from real captures.
 *
 * Usage: seedgen_track OUT_DIR CAPTURE...
 *
 * fuzz_track's input is a program (track_bytecode.h), not a capture, so
 * seeds must be programs too.  For each capture this parses every frame
 * with the library's parser, gives each connection a slot of the pool
 * (least recently used slot first), and writes the packets as OP_PKT
 * operations: the connection's slot and direction, its TCP flags (or
 * ICMP/SCTP/GRE kind), its payload length (up to 255), a retransmission
 * marker when the sequence number goes back, and OP_TIME steps for the
 * gaps between packets.  A slot that changes hands gets OP_TUPLE
 * operations first (protocol, ports, address bytes, family), so the pool
 * holds distinct connections shaped like the capture's.  The harness
 * then builds its own consistent frames from that, which is what lets
 * mutations of a real conversation stay deep in the state machines.
 *
 * Each capture gives up to three programs of at most 120 packets; the
 * second runs against a small table maximum, so early drop is seeded too.
 * Files libpcap cannot open are skipped with a note on stderr.
 */
#include <netinet/in.h>
#include <pcap/pcap.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/ctrack.h"
#include "track_bytecode.h"

#define MAX_PKTS 120
#define MAX_PROG (MAX_PKTS * 24 + 64)

static const uint8_t tcp_combos[FZ_TCP_COMBOS] = {
	CT_TCP_SYN, CT_TCP_SYN | CT_TCP_ACK, CT_TCP_ACK, CT_TCP_PSH | CT_TCP_ACK,
	CT_TCP_FIN | CT_TCP_ACK, CT_TCP_RST, CT_TCP_RST | CT_TCP_ACK, CT_TCP_FIN,
	CT_TCP_SYN | CT_TCP_ECE | CT_TCP_CWR, CT_TCP_ACK | CT_TCP_URG,
	CT_TCP_ACK, CT_TCP_PSH | CT_TCP_ACK, CT_TCP_FIN | CT_TCP_PSH | CT_TCP_ACK,
	CT_TCP_SYN | CT_TCP_ACK | CT_TCP_ECE,
};

/* SCTP chunk types as fuzz_track's table lists them (index = fl & 15). */
static const uint8_t sctp_chunks[13] = { 1, 2, 10, 11, 0, 3, 4, 5, 6, 7, 8, 14, 9 };

struct conn {
	struct ct_tuple t;       /* original direction (first packet seen) */
	uint32_t seq_hi[2];      /* highest sequence number seen per dir */
	bool seen[2];
	uint64_t last_use;
	bool used;
};

struct gen {
	uint8_t prog[MAX_PROG];
	size_t len;
	struct conn slot[FZ_SLOTS];
	uint64_t tick;
	uint64_t last_ts;
	bool have_ts;
	unsigned n_conn;
	unsigned pkts;
};

static void emit(struct gen *g, uint8_t b)
{
	if (g->len < MAX_PROG)
		g->prog[g->len++] = b;
}

static bool same_dir(const struct ct_tuple *a, const struct ct_tuple *b)
{
	return a->l3 == b->l3 && a->l4 == b->l4 && !memcmp(&a->src, &b->src, 16) &&
	       !memcmp(&a->dst, &b->dst, 16) && a->sport == b->sport && a->dport == b->dport;
}

static bool reverse_dir(const struct ct_tuple *a, const struct ct_tuple *b)
{
	return a->l3 == b->l3 && a->l4 == b->l4 && !memcmp(&a->src, &b->dst, 16) &&
	       !memcmp(&a->dst, &b->src, 16) && a->sport == b->dport && a->dport == b->sport;
}

/* The ICMP query key: id only (the type differs by direction). */
static bool icmp_like(uint8_t l4)
{
	return l4 == IPPROTO_ICMP || l4 == IPPROTO_ICMPV6;
}

static int find_slot(struct gen *g, const struct ct_tuple *t, int *dir)
{
	for (int i = 0; i < FZ_SLOTS; i++) {
		struct conn *c = &g->slot[i];
		struct ct_tuple a = c->t, b = *t;

		if (!c->used)
			continue;
		if (icmp_like(t->l4)) {
			a.dport = b.dport = 0;
		}
		if (same_dir(&a, &b)) {
			*dir = 0;
			return i;
		}
		if (icmp_like(t->l4)) {
			struct ct_tuple r = b;
			r.src = b.dst;
			r.dst = b.src;
			if (same_dir(&a, &r)) {
				*dir = 1;
				return i;
			}
		} else if (reverse_dir(&a, &b)) {
			*dir = 1;
			return i;
		}
	}
	return -1;
}

static void emit_tuple(struct gen *g, int s, uint8_t field, uint8_t v, uint8_t w)
{
	emit(g, OP_TUPLE);
	emit(g, (uint8_t)s);
	emit(g, field);
	emit(g, v);
	emit(g, w);
}

/* Give @t a slot: the least recently used one, reshaped with OP_TUPLE. */
static int take_slot(struct gen *g, const struct ct_tuple *t)
{
	static const uint8_t protos[8] = FZ_PROTOS;
	int best = 0;
	struct conn *c;
	uint8_t pv = t->l4;
	uint8_t cur_l3;
	unsigned id;

	for (int i = 1; i < FZ_SLOTS; i++)
		if (g->slot[i].last_use < g->slot[best].last_use)
			best = i;
	c = &g->slot[best];
	/* the harness starts slot i as IPv6 when i % 4 == 3 or i % 8 == 6 */
	cur_l3 = c->used ? c->t.l3
		 : ((best % 4) == 3 || (best % 8) == 6) ? CT_L3_IPV6 : CT_L3_IPV4;
	for (uint8_t k = 0; k < 8; k++)
		if (protos[k] == t->l4)
			pv = k;
	id = ++g->n_conn;
	emit_tuple(g, best, FZ_F_PROTO, pv, 0);
	if (cur_l3 != t->l3)
		emit_tuple(g, best, FZ_F_FAMILY, 0, 0);
	emit_tuple(g, best, FZ_F_SPORT, (uint8_t)(t->sport >> 8), (uint8_t)t->sport);
	emit_tuple(g, best, FZ_F_DPORT, (uint8_t)(t->dport >> 8), (uint8_t)t->dport);
	/* distinct connections get distinct address bytes */
	emit_tuple(g, best, FZ_F_SRC, (uint8_t)(id & 0xff), (uint8_t)(id >> 8));
	memset(c, 0, sizeof(*c));
	c->t = *t;
	c->used = true;
	return best;
}

static uint8_t tcp_fl(uint8_t flags)
{
	static const uint8_t drop[] = { CT_TCP_PSH, CT_TCP_URG, CT_TCP_ECE, CT_TCP_CWR };

	if (flags >= 224)
		return flags;
	for (unsigned d = 0; d <= sizeof(drop); d++) {
		for (uint8_t i = 0; i < FZ_TCP_COMBOS; i++)
			if (tcp_combos[i] == flags)
				return i;
		if (d < sizeof(drop))
			flags &= (uint8_t)~drop[d];
	}
	return 2; /* ACK */
}

static void emit_time(struct gen *g, uint64_t ts)
{
	uint64_t d;

	if (!g->have_ts || ts <= g->last_ts) {
		g->have_ts = true;
		g->last_ts = ts > g->last_ts ? ts : g->last_ts;
		return;
	}
	d = ts - g->last_ts;
	while (d >= 1000000ull) {
		uint8_t b;
		uint64_t step;

		if (d >= 86400ull * 1000000000ull) {
			b = 250;
			step = 86400ull * 1000000000ull;
		} else if (d >= 60ull * 1000000000ull) {
			uint64_t m = d / (60ull * 1000000000ull);
			b = (uint8_t)(200 + (m > 49 ? 49 : m));
			step = (uint64_t)(b - 200) * 60ull * 1000000000ull;
		} else if (d >= 1000000000ull) {
			uint64_t s = d / 1000000000ull;
			b = (uint8_t)(100 + (s > 99 ? 99 : s));
			step = (uint64_t)(b - 100) * 1000000000ull;
		} else {
			uint64_t ms = d / 1000000ull;
			b = (uint8_t)(ms > 99 ? 99 : ms);
			step = (uint64_t)b * 1000000ull;
		}
		emit(g, OP_TIME);
		emit(g, b);
		d -= step;
		g->last_ts += step;
	}
}

static void add_packet(struct gen *g, const struct ct_packet *p)
{
	int dir = 0, s;
	uint8_t fl = 0, md = 0;
	struct conn *c;
	struct ct_tuple key = p->tuple;

	if (p->kind != CT_PKT_TRACKABLE)
		return;
	if (icmp_like(p->tuple.l4) && p->u.icmp.is_error) {
		/* an error: quote the connection it is about, if it has a slot */
		int idir = 0, q = find_slot(g, &p->u.icmp.inner, &idir);
		if (q < 0)
			return;
		key = g->slot[q].t;
		s = q;
		fl = (uint8_t)(0x80 | q | idir << 4);
		dir = 0;
		md = (uint8_t)(p->u.icmp.code << 4);
		goto out;
	}
	s = find_slot(g, &key, &dir);
	if (s < 0) {
		s = take_slot(g, &key);
		dir = 0;
	}
	c = &g->slot[s];
	switch (p->tuple.l4) {
	case IPPROTO_TCP:
		fl = tcp_fl(p->u.tcp.flags);
		if (c->seen[dir] && (int32_t)(p->u.tcp.seq - c->seq_hi[dir]) < 0)
			md |= 1;         /* retransmission */
		else
			c->seq_hi[dir] = p->u.tcp.seq;
		c->seen[dir] = true;
		if (p->u.tcp.opts)
			md |= 8 | (uint8_t)((p->u.tcp.wscale & 15) << 4);
		if (p->u.tcp.window == 0)
			md |= 4;
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		if (p->u.icmp.type != 8 && p->u.icmp.type != 0 &&
		    p->u.icmp.type != 128 && p->u.icmp.type != 129) {
			fl = 0x40;
			md = p->u.icmp.type;
		}
		break;
	case IPPROTO_SCTP:
		for (uint8_t i = 0; i < sizeof(sctp_chunks); i++)
			if (sctp_chunks[i] == p->u.sctp.first_chunk)
				fl = i;
		break;
	case IPPROTO_GRE:
		fl = p->u.gre.version == 1;
		break;
	default:
		break;
	}
out:
	g->slot[s].last_use = ++g->tick;
	emit(g, OP_PKT);
	emit(g, (uint8_t)(s | dir << 4));
	emit(g, fl);
	emit(g, (uint8_t)(p->payload_len > 255 ? 255 : p->payload_len));
	emit(g, md);
	g->pkts++;
}

static void start(struct gen *g, uint8_t max)
{
	memset(g, 0, sizeof(*g));
	emit(g, 0x00);   /* checksums off, loose, events, acct */
	emit(g, max);
	emit(g, 0x01);   /* 128 rows */
	emit(g, 0x00);
}

static int write_prog(const char *dir, const char *base, int n, const struct gen *g)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s-%d", dir, base, n);
	fp = fopen(path, "wb");
	if (!fp) {
		perror(path);
		return -1;
	}
	fwrite(g->prog, 1, g->len, fp);
	fclose(fp);
	/* the same program with the table doing NAT (header byte 2, bit 7:
	 * track_bytecode.h), so that the two-step first packet and the
	 * translation meet real traffic too */
	snprintf(path, sizeof(path), "%s/%s-%d-nat", dir, base, n);
	fp = fopen(path, "wb");
	if (!fp) {
		perror(path);
		return -1;
	}
	fwrite(g->prog, 1, 2, fp);
	fputc(g->prog[2] | 0x80, fp);
	fwrite(g->prog + 3, 1, g->len - 3, fp);
	fclose(fp);
	return 0;
}

static int one_capture(const char *out, const char *file)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline_with_tstamp_precision(file, PCAP_TSTAMP_PRECISION_NANO, err);
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	struct pcap_pkthdr *h;
	const u_char *data;
	static struct gen g;
	int lt, n = 0, r;

	if (!pc) {
		fprintf(stderr, "seedgen_track: %s: skipped (%s)\n", file, err);
		return 0;
	}
	lt = pcap_datalink(pc);
	start(&g, 0);
	while ((r = pcap_next_ex(pc, &h, &data)) == 1 && n < 3) {
		struct ct_packet p;
		uint64_t ts = (uint64_t)h->ts.tv_sec * 1000000000ull + (uint64_t)h->ts.tv_usec;

		ct_parse_frame(&p, lt, data, h->caplen, h->len, ts);
		if (p.kind != CT_PKT_TRACKABLE)
			continue;
		emit_time(&g, ts);
		add_packet(&g, &p);
		if (g.pkts >= MAX_PKTS) {
			if (write_prog(out, base, n++, &g) < 0)
				break;
			/* the second program runs against a table of 8 entries */
			start(&g, n == 1 ? 7 : 0);
		}
	}
	if (g.pkts && n < 3)
		write_prog(out, base, n++, &g);
	pcap_close(pc);
	return n;
}

int main(int argc, char **argv)
{
	int total = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: seedgen_track OUT_DIR CAPTURE...\n");
		return 2;
	}
	for (int i = 2; i < argc; i++)
		total += one_capture(argv[1], argv[i]);
	fprintf(stderr, "seedgen_track: %d programs in %s\n", total, argv[1]);
	return total ? 0 : 1;
}
