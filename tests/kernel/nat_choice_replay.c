/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nat_choice_replay - the kernel NAT oracle's tuple chooser: the kernel's
 * connections, in the order its events gave them, bound again by ctrack's
 * rules (tools/ctrack/nat_rule.c) and tuple choice (ct_nat_setup), each
 * against the table the kernel had at that moment, so that kd_nat.py can
 * compare ctrack's reply tuple with the kernel's.
 *
 * Usage: nat_choice_replay RULES EVENTS
 *   RULES   ctrack NAT rules, one per line (nat_rule.h)
 *   EVENTS  NEW|DESTROY L3 L4 OSRC ODST OSPORT ODPORT RSRC RDST RSPORT RDPORT,
 *           in the kernel's order (ICMP: sport is the id, dport type << 8
 *           | code)
 * For each NEW: the first dnat rule matching the original tuple (or the
 * null binding), then the first snat/masquerade rule matching the tuple
 * after dnat (or the null binding), as the kernel's PREROUTING and
 * POSTROUTING chains; "taken" is the kernel's live connections (NEW seen,
 * DESTROY not yet) in either direction; the source index holds them too.
 * Then the kernel's own binding joins the live set, whatever ctrack chose,
 * so every choice is made against the kernel's state.  One line per NEW:
 *   same|random|differ KERNEL_REPLY CTRACK_REPLY
 * "random": ctrack drew a random number (the kernel did too; the results
 * may differ).  Last line: "nat_choice_replay: connections=N same=N
 * random=N differ=N".  Exit 1 on a usage, file or rule error.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/nat.h"
#include "nat_rule.h"

#define MAX_LIVE 65536

struct live {
	struct ct_nat_binding b[MAX_LIVE];
	size_t n;
};

static int addr(uint8_t l3, const char *s, union ct_addr *a)
{
	memset(a, 0, sizeof(*a));
	return inet_pton(l3 == CT_L3_IPV4 ? AF_INET : AF_INET6, s, a) == 1 ? 0 : -1;
}

static bool taken(void *arg, const struct ct_nat_probe *p)
{
	const struct live *lv = arg;

	for (size_t i = 0; i < lv->n; i++)
		if (ct_tuple_equal(&lv->b[i].orig, p->reply) ||
		    ct_tuple_equal(&lv->b[i].reply, p->reply))
			return true;
	return false;
}

struct draws {
	unsigned n;
	uint64_t state;
};

static uint16_t counted_rand(void *arg)
{
	struct draws *d = arg;
	uint64_t z = (d->state += 0x9e3779b97f4a7c15ull);

	d->n++;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint16_t)(z ^ (z >> 31));
}

static void fmt(char *buf, size_t n, const struct ct_tuple *t)
{
	ct_tuple_format(t, buf, (unsigned)n);
	for (char *p = buf; *p; p++)
		if (*p == ' ')
			*p = ',';
}

static int bind_conn(struct ct_nat_env *env, const struct nat_rules *rs, struct ct_nat_binding *b)
{
	const struct nat_rule *r;
	struct ct_tuple after;
	int rc;

	r = nat_rules_first(rs, CT_NAT_MANIP_DST, &b->orig, -1, NULL);
	rc = r ? ct_nat_setup(env, b, &r->range, CT_NAT_MANIP_DST, NULL)
	       : ct_nat_null_binding(env, b, CT_NAT_MANIP_DST, NULL);
	if (rc < 0)
		return rc;
	if (!ct_tuple_invert(&b->reply, &after))
		return -1;
	r = nat_rules_first(rs, CT_NAT_MANIP_SRC, &after, -1, NULL);
	if (r && r->action == NAT_RULE_MASQUERADE)
		rc = ct_nat_masquerade(env, b, &r->range, &r->range.min_addr, NULL);
	else if (r)
		rc = ct_nat_setup(env, b, &r->range, CT_NAT_MANIP_SRC, NULL);
	else
		rc = CT_NAT_NOT_MAPPED;
	if (rc == CT_NAT_NOT_MAPPED)
		rc = ct_nat_null_binding(env, b, CT_NAT_MANIP_SRC, NULL);
	return rc;
}

int main(int argc, char **argv)
{
	static struct live lv;
	struct nat_rules rs = { 0 };
	struct ct_nat_bysrc *ix;
	struct draws dr = { 0, 24 };
	struct ct_nat_env env;
	char msg[600], line[512];
	unsigned long conns = 0, same = 0, rnd = 0, differ = 0;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: nat_choice_replay RULES EVENTS\n");
		return 1;
	}
	if (nat_rules_load(&rs, argv[1], msg, sizeof(msg), NULL, NULL) < 0) {
		fprintf(stderr, "%s\n", msg);
		return 1;
	}
	f = fopen(argv[2], "r");
	ix = ct_nat_bysrc_create(0);
	if (!f || !ix) {
		perror(argv[2]);
		return 1;
	}
	ct_nat_env_init(&env, taken, &lv);
	env.bysrc = ct_nat_bysrc_ops(ix);
	env.rand16 = counted_rand;
	env.rand_arg = &dr;
	while (fgets(line, sizeof(line), f)) {
		char ev[16], os[64], od[64], rs_[64], rd[64];
		unsigned l3, l4, osp, odp, rsp, rdp;
		struct ct_nat_binding k, c;

		if (sscanf(line, "%15s %u %u %63s %63s %u %u %63s %63s %u %u", ev, &l3, &l4, os, od,
			   &osp, &odp, rs_, rd, &rsp, &rdp) != 11)
			continue;
		memset(&k, 0, sizeof(k));
		k.orig.l3 = k.reply.l3 = (uint8_t)l3;
		k.orig.l4 = k.reply.l4 = (uint8_t)l4;
		if (addr(k.orig.l3, os, &k.orig.src) || addr(k.orig.l3, od, &k.orig.dst) ||
		    addr(k.orig.l3, rs_, &k.reply.src) || addr(k.orig.l3, rd, &k.reply.dst)) {
			fprintf(stderr, "%s: bad address in: %s", argv[2], line);
			return 1;
		}
		k.orig.sport = (uint16_t)osp;
		k.orig.dport = (uint16_t)odp;
		k.reply.sport = (uint16_t)rsp;
		k.reply.dport = (uint16_t)rdp;
		ct_nat_binding_from_tuples(&k, &k.orig, &k.reply);
		if (strcmp(ev, "DESTROY") == 0) {
			for (size_t i = 0; i < lv.n; i++) {
				if (ct_tuple_equal(&lv.b[i].orig, &k.orig) &&
				    ct_tuple_equal(&lv.b[i].reply, &k.reply)) {
					(void)ct_nat_bysrc_del(ix, &lv.b[i]);
					lv.b[i] = lv.b[--lv.n];
					break;
				}
			}
			continue;
		}
		if (strcmp(ev, "NEW") != 0)
			continue;
		conns++;
		dr.n = 0;
		if (!ct_nat_binding_init(&c, &k.orig) || bind_conn(&env, &rs, &c) < 0) {
			printf("differ - cannot-bind\n");
			differ++;
		} else {
			char kt[160], ct[160];
			const char *what;

			fmt(kt, sizeof(kt), &k.reply);
			fmt(ct, sizeof(ct), &c.reply);
			if (ct_tuple_equal(&c.reply, &k.reply)) {
				what = "same";
				same++;
			} else if (dr.n) {
				what = "random";
				rnd++;
			} else {
				what = "differ";
				differ++;
			}
			printf("%s %s %s\n", what, kt, ct);
		}
		if (lv.n < MAX_LIVE) {
			lv.b[lv.n++] = k;
			(void)ct_nat_bysrc_add(ix, &k);
		}
	}
	fclose(f);
	printf("nat_choice_replay: connections=%lu same=%lu random=%lu differ=%lu\n", conns, same,
	       rnd, differ);
	ct_nat_bysrc_destroy(ix);
	nat_rules_free(&rs);
	return 0;
}
