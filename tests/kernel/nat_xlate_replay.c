/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nat_xlate_replay - the kernel NAT oracle's translator: the router's
 * ingress capture, translated with ctrack's phase-1 translation
 * (ct_nat_translate, CT_NAT_XLATE_FORWARD) under the bindings the kernel
 * chose, so that kd_nat.py can compare every frame with what the router
 * sent out.
 *
 * Usage: nat_xlate_replay BINDINGS IN.pcap OUT.pcap
 *   BINDINGS  one connection per line, as the kernel's events gave it:
 *             L3 L4 OSRC ODST OSPORT ODPORT RSRC RDST RSPORT RDPORT
 *             (addresses as text; ports decimal; ICMP: sport is the id,
 *             dport type << 8 | code)
 * A frame belongs to the binding whose original tuple (direction
 * original) or reply tuple (direction reply) it carries; an ICMP error
 * to the one whose tuple is the inverse of its quoted packet's.  Every
 * frame is written to OUT.pcap, translated or as it was, with its
 * timestamp, and one line per frame goes to stdout:
 *   N orig|reply|unbound VERDICT
 * then a last line "nat_xlate_replay: frames=N translated=N unbound=N
 * dropped=N".  Exit 0, or 1 on a usage or file error (a message says
 * which).
 */
#include <arpa/inet.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/nat.h"
#include "ctrack/packet.h"

struct bind {
	struct ct_nat_binding b;
};

static int addr(uint8_t l3, const char *s, union ct_addr *a)
{
	memset(a, 0, sizeof(*a));
	return inet_pton(l3 == CT_L3_IPV4 ? AF_INET : AF_INET6, s, a) == 1 ? 0 : -1;
}

static int load(const char *path, struct bind **out, size_t *n)
{
	FILE *f = fopen(path, "r");
	char line[512];
	size_t cap = 0;
	unsigned lineno = 0;

	if (!f) {
		perror(path);
		return -1;
	}
	*out = NULL;
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		char os[64], od[64], rs[64], rd[64];
		unsigned l3, l4, osp, odp, rsp, rdp;
		struct ct_tuple o, r;

		lineno++;
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%u %u %63s %63s %u %u %63s %63s %u %u", &l3, &l4, os, od, &osp,
			   &odp, rs, rd, &rsp, &rdp) != 10) {
			fprintf(stderr, "%s:%u: expected L3 L4 OSRC ODST OSPORT ODPORT RSRC RDST "
				"RSPORT RDPORT\n", path, lineno);
			fclose(f);
			return -1;
		}
		memset(&o, 0, sizeof(o));
		memset(&r, 0, sizeof(r));
		o.l3 = r.l3 = (uint8_t)l3;
		o.l4 = r.l4 = (uint8_t)l4;
		if (addr(o.l3, os, &o.src) || addr(o.l3, od, &o.dst) || addr(o.l3, rs, &r.src) ||
		    addr(o.l3, rd, &r.dst)) {
			fprintf(stderr, "%s:%u: bad address\n", path, lineno);
			fclose(f);
			return -1;
		}
		o.sport = (uint16_t)osp;
		o.dport = (uint16_t)odp;
		r.sport = (uint16_t)rsp;
		r.dport = (uint16_t)rdp;
		if (*n == cap) {
			struct bind *v;

			cap = cap ? cap * 2 : 64;
			v = realloc(*out, cap * sizeof(*v));
			if (!v) {
				fclose(f);
				return -1;
			}
			*out = v;
		}
		ct_nat_binding_from_tuples(&(*out)[*n].b, &o, &r);
		(*n)++;
	}
	fclose(f);
	return 0;
}

/* the binding of @t: *dir ORIGINAL if it is the original tuple, REPLY if
 * the reply tuple; the last one listed wins (a later connection reusing
 * the tuple) */
static const struct ct_nat_binding *find(const struct bind *v, size_t n,
					 const struct ct_tuple *t, enum ct_dir *dir)
{
	for (size_t i = n; i-- > 0;) {
		if (ct_tuple_equal(&v[i].b.orig, t)) {
			*dir = CT_DIR_ORIGINAL;
			return &v[i].b;
		}
		if (ct_tuple_equal(&v[i].b.reply, t)) {
			*dir = CT_DIR_REPLY;
			return &v[i].b;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	char err[PCAP_ERRBUF_SIZE];
	struct bind *v;
	size_t n;
	pcap_t *in, *dead;
	pcap_dumper_t *out;
	struct pcap_pkthdr *h;
	const u_char *d;
	unsigned long frames = 0, translated = 0, unbound = 0, dropped = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: nat_xlate_replay BINDINGS IN.pcap OUT.pcap\n");
		return 1;
	}
	if (load(argv[1], &v, &n) < 0)
		return 1;
	in = pcap_open_offline_with_tstamp_precision(argv[2], PCAP_TSTAMP_PRECISION_NANO, err);
	if (!in) {
		fprintf(stderr, "%s: %s\n", argv[2], err);
		return 1;
	}
	dead = pcap_open_dead_with_tstamp_precision(pcap_datalink(in), 262144,
						    PCAP_TSTAMP_PRECISION_NANO);
	out = dead ? pcap_dump_open(dead, argv[3]) : NULL;
	if (!out) {
		fprintf(stderr, "%s: %s\n", argv[3], dead ? pcap_geterr(dead) : "pcap_open_dead");
		return 1;
	}
	while (pcap_next_ex(in, &h, &d) == 1) {
		uint8_t *f = malloc(h->caplen ? h->caplen : 1);
		struct ct_packet pkt;
		const struct ct_nat_binding *b = NULL;
		enum ct_dir dir = CT_DIR_ORIGINAL;
		const char *what = "unbound", *verdict = "-";

		if (!f)
			return 1;
		memcpy(f, d, h->caplen);
		ct_parse_frame(&pkt, pcap_datalink(in), f, h->caplen, h->len, 0);
		if (pkt.kind == CT_PKT_TRACKABLE) {
			if ((pkt.tuple.l4 == 1 || pkt.tuple.l4 == 58) && pkt.u.icmp.is_error) {
				struct ct_tuple inv;

				if (pkt.u.icmp.inner_ok && ct_tuple_invert(&pkt.u.icmp.inner, &inv))
					b = find(v, n, &inv, &dir);
			} else {
				b = find(v, n, &pkt.tuple, &dir);
			}
		}
		if (b) {
			enum ct_nat_verdict r = ct_nat_translate(f, h->caplen, &pkt, b, dir,
								 CT_NAT_XLATE_FORWARD, NULL);

			what = dir == CT_DIR_ORIGINAL ? "orig" : "reply";
			verdict = ct_nat_verdict_name(r);
			if (r == CT_NAT_V_OK)
				translated++;
			else
				dropped++;
		} else {
			unbound++;
		}
		printf("%lu %s %s\n", frames, what, verdict);
		pcap_dump((u_char *)out, h, f);
		free(f);
		frames++;
	}
	pcap_dump_close(out);
	pcap_close(in);
	pcap_close(dead);
	free(v);
	printf("nat_xlate_replay: frames=%lu translated=%lu unbound=%lu dropped=%lu\n", frames,
	       translated, unbound, dropped);
	return 0;
}
