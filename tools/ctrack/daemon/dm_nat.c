/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dm_nat.c - `ctrack daemon --nat RULE / --nat-file FILE /
 * --nat-exact-ports`: the rules of `ctrack read --nat` (nat_rule.c, the
 * same syntax and messages) applied to the daemon's sources through the
 * same path (nat_path.c), so that a replay through the daemon binds as
 * `ctrack read` over the same capture does.
 *
 * The options keep the rules' text (dm_options is copied and compared on
 * SIGHUP; a parsed rule set holds memory), each checked when it is read
 * so that a bad rule stops the start naming the rule and the column; the
 * daemon parses them once into d->nat before the workers start and never
 * changes them (a SIGHUP that would is refused: dm_options_restart_only).
 * With NAT every packet goes through ct_classify alone, not in bursts:
 * the two-step first packet has no burst form.  After each packet the
 * worker publishes its counters (relaxed stores) for `ctrack stats` and,
 * with --metrics-listen, the ctrack_nat_* families (metrics_nat.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "daemon.h"
#include "../export/metrics_nat.h"

int dm_nat_option(struct dm_options *o, int which, const char *v, const char *where,
		  char *err, size_t errlen)
{
	struct nat_rule r;
	struct nat_rule_diag de, dw;
	size_t have = strlen(o->nat);

	switch (which) {
	case 0:
		memset(&dw, 0, sizeof(dw));
		if (nat_rule_parse(v, &r, &de, &dw) < 0) {
			nat_rule_format(err, errlen, where, v, &de);
			return -1;
		}
		if (strchr(v, '\n') || have + strlen(v) + 2 > sizeof(o->nat)) {
			snprintf(err, errlen, "%s: '%s': the --nat rules are longer than %zu bytes "
				 "together (use --nat-file)", where, v, sizeof(o->nat) - 1);
			return -1;
		}
		snprintf(o->nat + have, sizeof(o->nat) - have, "%s%s", have ? "\n" : "", v);
		return 0;
	case 1:
		if (!*v || strlen(v) >= sizeof(o->nat_file)) {
			snprintf(err, errlen, "%s: '%s' is not a file name", where, v);
			return -1;
		}
		snprintf(o->nat_file, sizeof(o->nat_file), "%s", v);
		return 0;
	default:
		o->nat_exact_ports = true;
		return 0;
	}
}

static void warn_line(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "ctrack daemon: warning: %s\n", line);
}

/* The rules of @o into @rs: --nat's in order, then --nat-file's. */
static int load(const struct dm_options *o, struct nat_rules *rs, bool warn, char *err,
		size_t errlen)
{
	char buf[sizeof(o->nat)], *save = NULL;

	memset(rs, 0, sizeof(*rs));
	memcpy(buf, o->nat, sizeof(buf));
	for (char *t = strtok_r(buf, "\n", &save); t; t = strtok_r(NULL, "\n", &save))
		if (nat_rules_add(rs, "--nat", t, err, errlen, warn ? warn_line : NULL, NULL) < 0)
			goto fail;
	if (o->nat_file[0] &&
	    nat_rules_load(rs, o->nat_file, err, errlen, warn ? warn_line : NULL, NULL) < 0) {
		char m[1024];

		snprintf(m, sizeof(m), "--nat-file %s", err);
		snprintf(err, errlen, "%s", m);
		goto fail;
	}
	return 0;
fail:
	nat_rules_free(rs);
	return -1;
}

int dm_nat_check(const struct dm_options *o, char *err, size_t errlen)
{
	struct nat_rules rs;

	if (o->nat_exact_ports && !o->nat[0] && !o->nat_file[0]) {
		snprintf(err, errlen, "--nat-exact-ports needs NAT rules (--nat, --nat-file)");
		return -1;
	}
	/* a NATed connection's reply is addressed to the NAT address: the
	 * fanout's symmetric hash does not pair it with its request, and a
	 * reply that overtakes its request on another worker would not be
	 * its entry's (docs/daemon.md).  A replay feeds one worker itself. */
	if ((o->nat[0] || o->nat_file[0]) && !o->replay[0] && o->workers > 1) {
		snprintf(err, errlen, "--nat watches interfaces with one worker: --workers %u "
			 "would split a NATed connection's two directions between workers "
			 "(give --workers 1)", o->workers);
		return -1;
	}
	/* --nat rules were checked as they were read; the file's are read
	 * now, and --check shows what would be warned at start */
	if (!o->nat_file[0] && !o->check)
		return 0;
	if (load(o, &rs, o->check, err, errlen) < 0)
		return -1;
	nat_rules_free(&rs);
	return 0;
}

int dm_nat_start(struct daemon *d, char *err, size_t errlen)
{
	d->nat_on = d->opt.nat[0] || d->opt.nat_file[0];
	if (!d->nat_on)
		return 0;
	return load(&d->opt, &d->nat, true, err, errlen);
}

void dm_nat_stop(struct daemon *d)
{
	nat_rules_free(&d->nat);
	d->nat_on = false;
}

/* struct nat_path_counts as an array, in its order, and the names
 * `ctrack stats` gives them (metrics_nat.h's families say the same) */
static const char *const nat_count_names[DM_NAT_COUNTS] = {
	"first_packets", "dnat", "snat", "masquerade", "confirmed", "merged",
	"reply_only", "refused", "setup_errors",
};

static void counts_array(const struct nat_path_counts *c, uint64_t out[DM_NAT_COUNTS])
{
	const uint64_t v[DM_NAT_COUNTS] = { c->pending, c->dnat, c->snat, c->masq, c->confirmed,
					    c->merged, c->reply_only, c->refused, c->setup_err };

	memcpy(out, v, sizeof(v));
}

_Static_assert(sizeof(struct nat_path_counts) == DM_NAT_COUNTS * sizeof(uint64_t),
	       "DM_NAT_COUNTS is struct nat_path_counts' number of fields");

void dm_nat_packet(struct dm_worker *w, const struct ct_packet *pkt, ct_time_ns now)
{
	struct ct_nat_binding b;
	struct ct_verdict v;
	enum ct_dir dir;
	uint64_t a[DM_NAT_COUNTS];

	(void)nat_path_track(&w->d->nat, w->thr, pkt, now, (int32_t)pkt->ifindex, &w->nat_counts,
			     NULL, NULL, &v, &b, &dir);
	counts_array(&w->nat_counts, a);
	for (unsigned i = 0; i < DM_NAT_COUNTS; i++)
		atomic_store_explicit(&w->nat_pub[i], a[i], memory_order_relaxed);
	if (w->d->nat_metrics) {
		/* one worker tracks NAT (a replay feeds the first, live
		 * interfaces take --workers 1): its copy is the daemon's */
		struct metrics_nat_counts m;

		const struct nat_path_counts *c = &w->nat_counts;

		memset(&m, 0, sizeof(m));
		m.first_packets = c->pending;
		m.dnat = c->dnat;
		m.snat = c->snat;
		m.masquerade = c->masq;
		m.confirmed = c->confirmed;
		m.merged = c->merged;
		m.reply_only = c->reply_only;
		m.refused = c->refused;
		m.setup_errors = c->setup_err;
		metrics_nat_publish(w->d->nat_metrics, &m);
	}
}

json_t *dm_nat_stats_json(struct daemon *d)
{
	uint64_t sum[DM_NAT_COUNTS] = { 0 };
	json_t *o = json_object();

	for (unsigned i = 0; i < d->n_workers; i++)
		for (unsigned k = 0; k < DM_NAT_COUNTS; k++)
			sum[k] += atomic_load_explicit(&d->w[i].nat_pub[k], memory_order_relaxed);
	for (unsigned k = 0; k < DM_NAT_COUNTS; k++)
		json_object_set_new(o, nat_count_names[k], json_integer((json_int_t)sum[k]));
	return o;
}
