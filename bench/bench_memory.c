/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_memory.c - bytes per connection at scale.
 *
 * Each variant runs in a child process of its own (fork before any table
 * exists), so that its resident set starts clean: the child creates a
 * table with the kernel's default initial size (65,536 rows; it grows
 * online), reads its RSS (/proc/self/statm), creates --conns connections
 * (default 10,000,000), lets any resize finish and the old generation be
 * reclaimed, reads its RSS again and reports the difference per
 * connection.  That is everything a connection costs: its entry in its
 * namespace's slab (with the slab's slack), its share of the hash rows
 * and overflow rows, and the allocator's own bookkeeping.
 *
 * Variants: UDP (one packet each, unreplied) and TCP (handshake and one
 * data/ACK exchange: ESTABLISHED), each with accounting (the per-direction
 * packet and byte counters, nf_conntrack_acct) on and off.
 * ct_conn_size() (the entry alone) and the rows' share are reported too.
 *
 * Churn (udp-acct-on-churn): what a long-lived table costs once its
 * connections have come and gone a few times, at the same count.  The
 * connections are made in ten slices 3 s apart (of caller time), so that
 * one slice falls due (30 s, unreplied UDP) every 3 s; then every 3 s the
 * collector runs and a fresh slice replaces the expired one, for
 * --turnovers N (default 3) times the table.  Reported: bytes per
 * connection after the fill (as the other variants) and after the churn.
 * Rows that once held more than six entries need an overflow row; the
 * collector takes emptied ones out of their chains for reuse, without
 * which they stayed until the next resize and the churned table grew.
 *
 * Finders (--finder scan,wheel; default wheel, the library's): with the
 * wheel every entry has a slot handle in it (8 bytes; wheel.h) once a
 * collector step has run, and the churned table carries the stale ones;
 * the scan keeps nothing but the bounds.  Variants run with the scan are
 * named with "-scan" at the end.
 *
 * Options: --conns N (default 10M; --quick: 1M)  --turnovers N  --finder.
 */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

/* --finder's words */
static const char *const finder_names[] = { "scan", "wheel" };

/* A table as every variant measures it: the library's defaults with no
 * limit, checksums off, accounting as asked, the collector finding due
 * entries by the scan of the bounds if @scan (else by the wheel, the
 * default); *@thr attached to it. */
static struct ct_table *mem_table(bool acct, bool scan, struct ct_thread **thr)
{
	struct ct_table_config cfg;
	struct ct_table *t;

	ct_table_config_default(&cfg);
	cfg.settings.max = 0;
	cfg.settings.checksum = 0;
	cfg.settings.acct = acct;
	t = bu_table(&cfg);
	if (scan) {
		struct ct_gc_policy pol;

		ct_gc_policy_default(&pol);
		pol.lock = CT_GC_LOCK_DUE;
		ct_gc_set_policy(t, &pol);
	}
	*thr = ct_thread_attach(t);
	return t;
}

/* The RSS once reclaim has caught up: the thread detaches (its free
 * batch goes to call_rcu) and attaches again, and the grace periods get
 * 300 ms. */
static uint64_t settled_rss(struct ct_table *t, struct ct_thread **thr)
{
	ct_thread_detach(*thr);
	*thr = ct_thread_attach(t);
	bu_sleep_ns(300000000ull);
	return bu_rss_bytes();
}

/* The churn variant (see the top): RSS per connection after the fill and
 * after --turnovers times the table has been replaced. */
static int child_churn(const struct bench_args *a, uint64_t conns, bool scan)
{
	const unsigned slices = 10;
	const ct_time_ns gap = 3000000000ull;
	uint64_t turnovers = bu_opt_u64(a, "turnovers", 3);
	uint64_t per = conns / slices, ok = 0, expired = 0, freed = 0;
	struct ct_thread *thr;
	struct ct_table *t = mem_table(true, scan, &thr);
	struct ct_gc_result res;
	uint64_t rss0, rss_fill, rss1, t0;
	ct_time_ns now = 1000000000ull;
	struct bu_rec r;

	rss0 = bu_rss_bytes();
	t0 = bu_mono_ns();
	for (unsigned s = 0; s < slices; s++, now += gap)
		ok += bu_fill_udp(thr, (uint32_t)(s * per), per, 0, now, false);
	ct_gc_step(thr, now - gap, 0, &res);     /* finish the resizes */
	rss_fill = settled_rss(t, &thr);
	for (uint64_t k = 0; k < turnovers * slices; k++, now += gap) {
		ct_gc_step(thr, now, 0, &res);
		expired += res.expired;
		freed += res.ovf_rows_freed;
		bu_fill_udp(thr, (uint32_t)((slices + k) * per), per, 0, now, false);
	}
	rss1 = settled_rss(t, &thr);
	bu_rec_begin(&r, a, "memory", scan ? "udp-acct-on-churn-scan" : "udp-acct-on-churn");
	bu_rec_str(&r, "finder", finder_names[!scan]);
	bu_rec_str(&r, "l4", "udp");
	bu_rec_bool(&r, "acct", true);
	bu_rec_int(&r, "conns", ct_table_count(t));
	bu_rec_int(&r, "turnovers", turnovers);
	bu_rec_num(&r, "bytes_per_conn_after_fill", (double)(rss_fill - rss0) / (double)ok);
	bu_rec_num(&r, "bytes_per_conn", (double)(rss1 - rss0) / (double)ct_table_count(t));
	bu_rec_int(&r, "expired", expired);
	bu_rec_int(&r, "overflow_rows_freed", freed);
	bu_rec_int(&r, "rows", ct_table_rows(t));
	bu_rec_num(&r, "rss_mib", (double)rss1 / 1048576.0);
	bu_rec_num(&r, "run_s", (double)(bu_mono_ns() - t0) / 1e9);
	bu_rec_end(&r);
	ct_thread_detach(thr);
	ct_table_destroy(t);
	return expired == turnovers * slices * per ? 0 : 1;
}

static int child(const struct bench_args *a, uint8_t l4, bool acct, uint64_t conns, bool scan)
{
	struct ct_thread *thr;
	struct ct_table *t = mem_table(acct, scan, &thr);
	struct ct_gc_result res;
	uint64_t rss0, rss1, t0, ok;
	double secs;
	struct bu_rec r;
	char name[32];

	rss0 = bu_rss_bytes();
	t0 = bu_mono_ns();
	ok = l4 == IPPROTO_TCP ? bu_fill_tcp(thr, 0, conns, 0, t0)
			       : bu_fill_udp(thr, 0, conns, 0, t0, false);
	secs = (double)(bu_mono_ns() - t0) / 1e9;
	/* finish any resize (the collector helps migrate first), then give
	 * the old generation its grace period */
	ct_gc_step(thr, t0, 0, &res);
	rss1 = settled_rss(t, &thr);
	snprintf(name, sizeof(name), "%s-acct-%s%s", l4 == IPPROTO_TCP ? "tcp" : "udp",
		 acct ? "on" : "off", scan ? "-scan" : "");
	bu_rec_begin(&r, a, "memory", name);
	bu_rec_str(&r, "finder", finder_names[!scan]);
	bu_rec_str(&r, "l4", l4 == IPPROTO_TCP ? "tcp" : "udp");
	bu_rec_bool(&r, "acct", acct);
	bu_rec_int(&r, "conns", ok);
	bu_rec_num(&r, "bytes_per_conn", (double)(rss1 - rss0) / (double)ok);
	bu_rec_int(&r, "conn_size_bytes", ct_conn_size_l3(t, CT_L3_IPV4, l4));
	bu_rec_int(&r, "rows", ct_table_rows(t));
	bu_rec_num(&r, "row_bytes_per_conn", (double)ct_table_rows(t) * 64.0 / (double)ok);
	bu_rec_num(&r, "rss_mib", (double)rss1 / 1048576.0);
	bu_rec_num(&r, "fill_s", secs);
	bu_rec_num(&r, "mconns_per_s_fill", (double)ok / secs / 1e6);
	bu_rec_end(&r);
	ct_thread_detach(thr);
	ct_table_destroy(t);
	return ok == conns ? 0 : 1;
}

int bench_memory(const struct bench_args *a)
{
	uint64_t conns = bu_opt_u64(a, "conns", bu_flag(a, "quick") ? 1000000 : 10000000);
	static const struct { uint8_t l4; bool acct, churn; } v[] = {
		{ IPPROTO_UDP, false, false }, { IPPROTO_UDP, true, false },
		{ IPPROTO_TCP, false, false }, { IPPROTO_TCP, true, false },
		{ IPPROTO_UDP, true, true },
	};
	unsigned fins[2];
	unsigned nf = bu_opt_words(a, "finder", "wheel", finder_names, 2, fins, 2);
	int err = 0;

	bu_note(a, "memory: RSS growth per connection at %llu connections",
		(unsigned long long)conns);
	for (size_t k = 0; k < nf * (sizeof(v) / sizeof(v[0])); k++) {
		size_t i = k % (sizeof(v) / sizeof(v[0]));
		bool scan = fins[k / (sizeof(v) / sizeof(v[0]))] == 0;
		pid_t pid;
		int st;

		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0)
			_exit(v[i].churn ? child_churn(a, conns, scan)
					 : child(a, v[i].l4, v[i].acct, conns, scan));
		if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			err = 1;
	}
	return err;
}
