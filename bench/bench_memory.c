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
 * Options: --conns N (default 10M; --quick: 1M).
 */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"

static int child(const struct bench_args *a, uint8_t l4, bool acct, uint64_t conns)
{
	struct ct_table_config cfg;
	struct ct_table *t;
	struct ct_thread *thr;
	struct ct_gc_result res;
	uint64_t rss0, rss1, t0, ok;
	double secs;
	struct bu_rec r;
	char name[32];

	ct_table_config_default(&cfg);
	cfg.settings.max = 0;
	cfg.settings.checksum = 0;
	cfg.settings.acct = acct;
	t = bu_table(&cfg);
	thr = ct_thread_attach(t);
	rss0 = bu_rss_bytes();
	t0 = bu_mono_ns();
	ok = l4 == IPPROTO_TCP ? bu_fill_tcp(thr, 0, conns, 0, t0)
			       : bu_fill_udp(thr, 0, conns, 0, t0, false);
	secs = (double)(bu_mono_ns() - t0) / 1e9;
	/* finish any resize (the collector helps migrate first), then give
	 * the old generation its grace period */
	ct_gc_step(thr, t0, 0, &res);
	ct_thread_detach(thr);
	thr = ct_thread_attach(t);
	bu_sleep_ns(300000000ull);
	rss1 = bu_rss_bytes();
	snprintf(name, sizeof(name), "%s-acct-%s", l4 == IPPROTO_TCP ? "tcp" : "udp",
		 acct ? "on" : "off");
	bu_rec_begin(&r, a, "memory", name);
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
	static const struct { uint8_t l4; bool acct; } v[] = {
		{ IPPROTO_UDP, false }, { IPPROTO_UDP, true },
		{ IPPROTO_TCP, false }, { IPPROTO_TCP, true },
	};
	int err = 0;

	bu_note(a, "memory: RSS growth per connection at %llu connections",
		(unsigned long long)conns);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		pid_t pid;
		int st;

		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0)
			_exit(child(a, v[i].l4, v[i].acct, conns));
		if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			err = 1;
	}
	return err;
}
