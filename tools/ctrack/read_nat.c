/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * read_nat.c - `ctrack read --nat` (read_nat.h).
 *
 * The rules are the kernel's nat chains in the order a packet meets them
 * (nat_rule.c matches; the library chooses the tuple); the writer copies
 * each frame, lets ct_nat_translate rewrite the copy for the packet's
 * direction as a forwarding router (CT_NAT_XLATE_FORWARD), and hands the
 * IP datagram to refrag.c.  Packets that were never IP, or that a router
 * would not forward (with --router: those the library calls so), are not
 * written.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pcap/pcap.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "read_nat.h"
#include "refrag.h"

int read_nat_open(struct read_nat *n, char *err, size_t errlen)
{
	pcap_t *p;
	pcap_dumper_t *d;

	if (!n->out_path)
		return 0;
	p = pcap_open_dead_with_tstamp_precision(DLT_RAW, 65535, PCAP_TSTAMP_PRECISION_NANO);
	if (!p) {
		snprintf(err, errlen, "--write-translated: out of memory");
		return -1;
	}
	d = pcap_dump_open(p, n->out_path);
	if (!d) {
		snprintf(err, errlen, "--write-translated %s: %s", n->out_path, pcap_geterr(p));
		pcap_close(p);
		return -1;
	}
	n->pcap = p;
	n->dumper = d;
	return 0;
}

/* A decimal field of a binding line, at most @max (strtoul: sscanf's %u
 * would take "-1" or "99999999999" without a word). */
static bool replay_num(const char *s, unsigned long max, unsigned *out)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*out = (unsigned)v;
	return true;
}

int read_nat_load_replay(struct read_nat *n, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line[512];
	unsigned lineno = 0;
	size_t cap = 0;

	if (!f) {
		snprintf(err, errlen, "--nat-random-replay %s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *fld[10], *save = NULL, *tok;
		unsigned l3 = 0, l4 = 0, osp = 0, odp = 0, rsp = 0, rdp = 0;
		const char *os, *od, *rs, *rd;
		struct ct_nat_binding b;
		int nf = 0, af;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		for (tok = strtok_r(line, " \t\r\n", &save); tok && nf < 10;
		     tok = strtok_r(NULL, " \t\r\n", &save))
			fld[nf++] = tok;
		if (nf != 10 || tok || !replay_num(fld[0], 255, &l3) ||
		    (l3 != CT_L3_IPV4 && l3 != CT_L3_IPV6) || !replay_num(fld[1], 255, &l4) ||
		    !replay_num(fld[4], 65535, &osp) || !replay_num(fld[5], 65535, &odp) ||
		    !replay_num(fld[8], 65535, &rsp) || !replay_num(fld[9], 65535, &rdp)) {
			snprintf(err, errlen, "--nat-random-replay %s:%u: not a binding line "
				 "(L3 L4 OSRC ODST OSPORT ODPORT RSRC RDST RSPORT RDPORT)", path, lineno);
			fclose(f);
			return -1;
		}
		os = fld[2];
		od = fld[3];
		rs = fld[6];
		rd = fld[7];
		memset(&b, 0, sizeof(b));
		af = l3 == CT_L3_IPV4 ? AF_INET : AF_INET6;
		if (inet_pton(af, os, &b.orig.src) != 1 || inet_pton(af, od, &b.orig.dst) != 1 ||
		    inet_pton(af, rs, &b.reply.src) != 1 || inet_pton(af, rd, &b.reply.dst) != 1) {
			snprintf(err, errlen, "--nat-random-replay %s:%u: a bad address", path, lineno);
			fclose(f);
			return -1;
		}
		b.orig.l3 = b.reply.l3 = (uint8_t)l3;
		b.orig.l4 = b.reply.l4 = (uint8_t)l4;
		b.orig.sport = (uint16_t)osp;
		b.orig.dport = (uint16_t)odp;
		b.reply.sport = (uint16_t)rsp;
		b.reply.dport = (uint16_t)rdp;
		if (n->n_replay == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct ct_nat_binding *v = realloc(n->replay, nc * sizeof(*v));

			if (!v) {
				snprintf(err, errlen, "--nat-random-replay: out of memory");
				fclose(f);
				return -1;
			}
			n->replay = v;
			cap = nc;
		}
		n->replay[n->n_replay++] = b;
	}
	fclose(f);
	return 0;
}

/*
 * The random source for a replay: the offset that makes the kernel's
 * port (or id) the search's first candidate.  nf_nat_l4proto_unique_tuple
 * tries min + (offset % size) first, in the class ct_nat_port_class
 * describes (the range given, else 1-511, 600-1023 or 1024-65535 by the
 * original port, every id for ICMP); the kernel's binding of this
 * connection says which port it ended with.  Everything else - the
 * class, the probes, whether the port is free - is ctrack's own.
 */
static uint16_t replay_rand16(void *arg)
{
	struct read_nat *n = arg;
	const struct ct_tuple *o = &n->cur_orig;
	const struct ct_nat_range *r = n->cur_range;
	bool icmp = o->l4 == IPPROTO_ICMP || o->l4 == IPPROTO_ICMPV6;
	unsigned min, size, want;
	uint64_t z;

	for (size_t i = 0; i < n->n_replay; i++) {
		const struct ct_nat_binding *b = &n->replay[i];
		uint16_t key;

		if (!ct_tuple_equal(&b->orig, o))
			continue;
		want = icmp ? b->reply.sport
		     : n->cur_manip == CT_NAT_MANIP_SRC ? b->reply.dport : b->reply.sport;
		if (r && (r->flags & CT_NAT_RANGE_PROTO_SPECIFIED)) {
			unsigned lo = r->min_proto, hi = r->max_proto;

			if (hi < lo && !icmp) {
				unsigned x = lo;

				lo = hi;
				hi = x;
			}
			min = lo;
			size = hi - lo + 1;
		} else if (icmp) {
			min = 0;
			size = 65536;
		} else {
			key = n->cur_manip == CT_NAT_MANIP_SRC ? o->sport : o->dport;
			min = key < 512 ? 1 : key < 1024 ? 600 : 1024;
			size = key < 512 ? 511 : key < 1024 ? 424 : 64512;
		}
		n->replayed++;
		return (uint16_t)((want - min + size) % size);
	}
	/* a connection the kernel did not make: a number of our own */
	n->replay_misses++;
	z = (n->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint16_t)((z ^ (z >> 31)) >> 48);
}

void read_nat_attach(struct read_nat *n, struct ct_thread *thr)
{
	if (n->n_replay)
		(void)ct_thread_nat_random(thr, replay_rand16, n);
}

void read_nat_close(struct read_nat *n)
{
	if (n->dumper)
		pcap_dump_close(n->dumper);
	if (n->pcap)
		pcap_close(n->pcap);
	n->dumper = n->pcap = NULL;
	nat_rules_free(&n->rules);
	free(n->replay);
	n->replay = NULL;
}

struct wctx {
	struct read_nat *n;
	ct_time_ns now;
};

static void write_ip(void *arg, const uint8_t *ip, uint32_t len)
{
	struct wctx *w = arg;
	struct pcap_pkthdr h;

	memset(&h, 0, sizeof(h));
	h.ts.tv_sec = (time_t)(w->now / 1000000000ull);
	h.ts.tv_usec = (suseconds_t)(w->now % 1000000000ull);   /* ns: NANO precision */
	h.caplen = h.len = len;
	pcap_dump(w->n->dumper, &h, ip);
	w->n->fragments_out++;
}

/* The IP datagram's length in @ip (@avail bytes there): its own length
 * field, not what the frame held beyond it (Ethernet padding). */
static uint32_t ip_len(const uint8_t *ip, uint32_t avail)
{
	uint32_t l;

	if (avail < 20)
		return avail;
	l = (ip[0] >> 4) == 4 ? (uint32_t)(ip[2] << 8 | ip[3])
	  : avail >= 40 ? 40u + (uint32_t)(ip[4] << 8 | ip[5]) : avail;
	return l < avail ? l : avail;
}

/* Translate @pkt (from @frame) with @b for @dir and write it. */
static void send_on(struct read_nat *n, const struct ct_packet *pkt, const uint8_t *frame,
		    uint32_t caplen, const struct ct_nat_binding *b, enum ct_dir dir,
		    ct_time_ns now)
{
	static uint8_t copy[65536 + 64];
	struct ct_packet q = *pkt;
	struct ct_nat_xlate_info info;
	enum ct_nat_verdict vd;
	struct wctx w = { n, now };
	uint32_t off, len;

	if (!n->dumper || !pkt->l3 || caplen > sizeof(copy))
		return;
	memcpy(copy, frame, caplen);
	ct_packet_moved(&q, frame, copy);
	vd = ct_nat_translate(copy, caplen, &q, b, dir, CT_NAT_XLATE_FORWARD, &info);
	if (vd != CT_NAT_V_OK) {
		n->xlate_drop[vd < CT_NAT_V_MAX ? vd : 0]++;
		return;
	}
	off = (uint32_t)(q.l3 - copy);
	len = ip_len(copy + off, caplen - off);
	/* an atomic fragment (the parser tracks it as a whole datagram):
	 * nf_defrag_ipv6 took its fragment header off */
	if (q.tuple.l3 == CT_L3_IPV6 && !pkt->frag_max_size)
		len = refrag_strip_atomic(copy + off, len);
	n->written++;
	(void)refrag_send(copy + off, len, pkt->frag_max_size, pkt->frag_id, write_ip, &w);
}

/* nat_path_before_fn: what the setup under way is about, for the
 * replay's random numbers */
static void before_setup(void *arg, const struct ct_tuple *orig, enum ct_nat_manip manip,
			 const struct ct_nat_range *range)
{
	struct read_nat *n = arg;

	n->cur_orig = *orig;
	n->cur_manip = manip;
	n->cur_range = range;
}

void read_nat_track(struct read_nat *n, struct ct_thread *thr, struct ct_packet *pkt,
		    const uint8_t *frame, uint32_t caplen, ct_time_ns now, int32_t iif)
{
	struct ct_nat_binding b;
	struct ct_verdict v;
	enum ct_dir dir;

	switch (nat_path_track(&n->rules, thr, pkt, now, iif, &n->pc, before_setup, n, &v, &b,
			       &dir)) {
	case NAT_PATH_FIRST:
	case NAT_PATH_TRACKED:
		/* a packet without a binding gets nothing but the TTL */
		send_on(n, pkt, frame, caplen, &b, dir, now);
		return;
	case NAT_PATH_OTHER:
		/* INVALID and UNTRACKED IP packets are forwarded unchanged,
		 * as a router without rules against them does; what no
		 * router forwards (--router's judgement), and non-IP
		 * frames, are not */
		if (!pkt->l3 || (v.flags & CT_VF_UNCONFIRMED) || v.cls == CT_V_DROP) {
			n->not_forwarded++;
			return;
		}
		memset(&b, 0, sizeof(b));
		send_on(n, pkt, frame, caplen, &b, CT_DIR_ORIGINAL, now);
		return;
	default:
		/* refused at confirm: the kernel drops the packet with its
		 * conntrack; or no memory */
		return;
	}
}

bool read_nat_shows(const struct read_nat *n, const struct ct_conn_info *ci)
{
	/* conntrack 1.4.7's filter_nat: --any-nat whatever else is given,
	 * else every one given (-n -g: both translated) */
	if (!n->filter)
		return true;
	if (n->filter & NAT_FILTER_ANY)
		return (ci->status & CT_ST_NAT_MASK) != 0;
	if ((n->filter & NAT_FILTER_SRC) && !(ci->status & CT_ST_SRC_NAT))
		return false;
	if ((n->filter & NAT_FILTER_DST) && !(ci->status & CT_ST_DST_NAT))
		return false;
	return true;
}

/* The counters in the order of the state file (never reordered: append
 * new ones, READ_NAT_COUNTERS grows and older files are not applied). */
static const size_t counter_off[12] = {
	offsetof(struct read_nat, pc.pending), offsetof(struct read_nat, pc.dnat),
	offsetof(struct read_nat, pc.snat), offsetof(struct read_nat, pc.masq),
	offsetof(struct read_nat, pc.confirmed), offsetof(struct read_nat, pc.merged),
	offsetof(struct read_nat, pc.reply_only), offsetof(struct read_nat, pc.refused),
	offsetof(struct read_nat, written), offsetof(struct read_nat, fragments_out),
	offsetof(struct read_nat, not_forwarded), offsetof(struct read_nat, pc.setup_err),
};

static size_t counter_at(unsigned i)
{
	return i < 12 ? counter_off[i]
		      : offsetof(struct read_nat, xlate_drop) + (i - 12) * sizeof(uint64_t);
}

void read_nat_counters(const struct read_nat *n, uint64_t out[READ_NAT_COUNTERS])
{
	for (unsigned i = 0; i < READ_NAT_COUNTERS; i++)
		memcpy(&out[i], (const uint8_t *)n + counter_at(i), sizeof(uint64_t));
}

void read_nat_add_counters(struct read_nat *n, const uint64_t in[READ_NAT_COUNTERS])
{
	for (unsigned i = 0; i < READ_NAT_COUNTERS; i++) {
		uint64_t v;

		memcpy(&v, (uint8_t *)n + counter_at(i), sizeof(v));
		v += in[i];
		memcpy((uint8_t *)n + counter_at(i), &v, sizeof(v));
	}
}

void read_nat_stats(const struct read_nat *n, FILE *out, bool json)
{
	bool any = false;

	if (!n->on)
		return;
	if (json) {
		fprintf(out, ",\"nat\":{\"first_packets\":%" PRIu64 ",\"dnat\":%" PRIu64
			",\"snat\":%" PRIu64 ",\"masquerade\":%" PRIu64 ",\"confirmed\":%" PRIu64
			",\"merged\":%" PRIu64 ",\"reply_only\":%" PRIu64 ",\"refused\":%" PRIu64
			",\"setup_errors\":%" PRIu64 ",\"written\":%" PRIu64
			",\"frames_written\":%" PRIu64 ",\"not_forwarded\":%" PRIu64
			",\"translation_dropped\":{",
			n->pc.pending, n->pc.dnat, n->pc.snat, n->pc.masq, n->pc.confirmed, n->pc.merged, n->pc.reply_only,
			n->pc.refused, n->pc.setup_err, n->written, n->fragments_out, n->not_forwarded);
		for (int i = 1; i < CT_NAT_V_MAX; i++)
			if (n->xlate_drop[i]) {
				fprintf(out, "%s\"%s\":%" PRIu64, any ? "," : "",
					ct_nat_verdict_name((enum ct_nat_verdict)i), n->xlate_drop[i]);
				any = true;
			}
		fputs("}}", out);
		return;
	}
	fprintf(out, "nat: first_packets=%" PRIu64 " dnat=%" PRIu64 " snat=%" PRIu64
		" masquerade=%" PRIu64 " confirmed=%" PRIu64 " merged=%" PRIu64
		" reply_only=%" PRIu64 " refused=%" PRIu64 " setup_errors=%" PRIu64 "\n",
		n->pc.pending, n->pc.dnat, n->pc.snat, n->pc.masq, n->pc.confirmed, n->pc.merged, n->pc.reply_only,
		n->pc.refused, n->pc.setup_err);
	if (n->out_path)
		fprintf(out, "translated: written=%" PRIu64 " frames=%" PRIu64
			" not_forwarded=%" PRIu64 "\n", n->written, n->fragments_out,
			n->not_forwarded);
	fputs("translation_dropped:", out);
	for (int i = 1; i < CT_NAT_V_MAX; i++)
		if (n->xlate_drop[i]) {
			fprintf(out, " %s=%" PRIu64, ct_nat_verdict_name((enum ct_nat_verdict)i),
				n->xlate_drop[i]);
			any = true;
		}
	fprintf(out, "%s\n", any ? "" : " none");
}
