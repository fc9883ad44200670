/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_record.c - whole entries out and in (src/record/), and the state
 * file, at 1M entries.
 *
 * A table of --entries connections (three quarters established TCP, a
 * quarter replied UDP; counters and timestamps on, as the daemon keeps
 * them) is made by its packets, then, each --rounds times (the median
 * reported, with its spread):
 *   dump          ct_table_dump with a callback that does nothing: the
 *                 walk a listing pays, the baseline of the export
 *   export        ct_record_export, callback doing nothing: ns per entry,
 *                 and its ratio to the dump (what turning an entry into a
 *                 record adds to copying it out)
 *   encode        the export with every record encoded into a buffer:
 *                 ns per entry, bytes per entry
 *   import        every record into a fresh table (ct_record_import): ns
 *                 per entry, records/s, and its ratio to making the same
 *                 entries from their packets (create, timed the same way:
 *                 5 packets a TCP connection, 2 a UDP flow)
 *   save          ct_state_save to --dir (fsync and rename included):
 *                 ms, bytes per entry, MB/s
 *   open          ct_state_open: the file mapped and every byte checked
 *   restore       ct_state_restore of the opened file into a fresh table
 * Times are wall-clock (the thread's CPU time beside them: on a shared
 * machine wall time counts other processes too).
 */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_util.h"

#define NOW (1700000000ull * 1000000000ull)
#define MAX_ROUNDS 16

struct tab {
	struct ct_table *t;
	struct ct_thread *thr;
};

static void tab_new(struct tab *x, uint64_t entries)
{
	struct ct_table_config cfg;

	bu_config(&cfg, entries + entries / 2, true);
	cfg.settings.timestamp = 1;
	x->t = bu_table(&cfg);
	x->thr = ct_thread_attach(x->t);
	if (!x->thr) {
		fprintf(stderr, "ctrack-bench record: out of memory\n");
		exit(1);
	}
}

static void tab_free(struct tab *x)
{
	ct_thread_detach(x->thr);
	ct_table_destroy(x->t);
}

/* The table made by its packets; returns the ns spent in the tracker. */
static uint64_t fill(struct tab *x, uint64_t entries)
{
	uint64_t tcp = entries * 3 / 4, t0 = bu_mono_ns();

	bu_fill_tcp(x->thr, 0, tcp, 0, NOW);
	bu_fill_udp(x->thr, (uint32_t)tcp, entries - tcp, 0, NOW, true);
	return bu_mono_ns() - t0;
}

static int nothing_info(const struct ct_conn_info *ci, void *arg)
{
	(void)ci;
	++*(uint64_t *)arg;
	return 0;
}

static int nothing_rec(const struct ct_record *r, void *arg)
{
	(void)r;
	++*(uint64_t *)arg;
	return 0;
}

struct recs {
	struct ct_record *v;
	size_t n, cap;
	uint8_t *buf;
	size_t bytes, buf_cap;
	bool encode, keep;
};

static int take(const struct ct_record *r, void *arg)
{
	struct recs *rs = arg;

	if (rs->keep && rs->n < rs->cap)
		memcpy(&rs->v[rs->n], r, sizeof(*r));
	rs->n++;
	if (rs->encode) {
		enum ct_record_reason why;

		if (rs->bytes + CT_RECORD_ENC_MAX > rs->buf_cap)
			rs->bytes = 0;     /* a ring: the cost is the encoding */
		rs->bytes += ct_record_encode(r, rs->buf + rs->bytes, CT_RECORD_ENC_MAX, &why);
	}
	return 0;
}

struct timing {
	double wall[MAX_ROUNDS], cpu[MAX_ROUNDS];
	unsigned n;
};

static void t_add(struct timing *t, uint64_t wall_ns, uint64_t cpu_ns)
{
	t->wall[t->n] = (double)wall_ns;
	t->cpu[t->n] = (double)cpu_ns;
	t->n++;
}

static void report(const struct bench_args *a, const char *variant, const struct timing *t,
		   uint64_t entries, double base_ns, const char *ratio_key)
{
	struct bu_rec r;
	double med, lo, hi, cmed, clo, chi;

	bu_spread(t->wall, t->n, &med, &lo, &hi);
	bu_spread(t->cpu, t->n, &cmed, &clo, &chi);
	bu_rec_begin(&r, a, "record", variant);
	bu_rec_int(&r, "entries", entries);
	bu_rec_num(&r, "ns_per_entry", med / (double)entries);
	bu_rec_num(&r, "ns_per_entry_min", lo / (double)entries);
	bu_rec_num(&r, "ns_per_entry_max", hi / (double)entries);
	bu_rec_num(&r, "cpu_ns_per_entry", cmed / (double)entries);
	bu_rec_num(&r, "entries_per_s", (double)entries * 1e9 / med);
	bu_rec_num(&r, "ms", med / 1e6);
	if (base_ns > 0)
		bu_rec_num(&r, ratio_key, med / base_ns);
	bu_rec_int(&r, "rounds", t->n);
	bu_rec_end(&r);
}

int bench_record(const struct bench_args *a)
{
	bool quick = bu_flag(a, "quick");
	uint64_t entries = bu_opt_u64(a, "entries", quick ? 200000 : 1000000);
	unsigned rounds = (unsigned)bu_opt_u64(a, "rounds", quick ? 2 : 5);
	const char *dir = bu_opt_str(a, "dir", "/tmp");
	struct timing dump = { 0 }, exp = { 0 }, enc = { 0 }, imp = { 0 }, create = { 0 };
	struct timing save = { 0 }, opn = { 0 }, rst = { 0 };
	struct recs rs = { 0 };
	struct tab src;
	char path[4096];
	uint64_t n_src, file_bytes = 0, enc_bytes_per = 0;
	struct bu_rec r;

	if (rounds > MAX_ROUNDS)
		rounds = MAX_ROUNDS;
	snprintf(path, sizeof(path), "%s/ctrack-bench-record-%d.state", dir, (int)getpid());
	tab_new(&src, entries);
	fill(&src, entries);
	n_src = ct_table_count(src.t);
	rs.cap = n_src;
	rs.v = malloc(rs.cap * sizeof(*rs.v));
	rs.buf_cap = 64u << 20;
	rs.buf = malloc(rs.buf_cap);
	if (!rs.v || !rs.buf) {
		fprintf(stderr, "ctrack-bench record: out of memory\n");
		return 1;
	}
	bu_note(a, "record: %llu entries (3/4 TCP established, 1/4 UDP replied), acct and "
		"timestamps on; %u rounds, medians; state file in %s",
		(unsigned long long)n_src, rounds, dir);
	for (unsigned k = 0; k < rounds; k++) {
		uint64_t w, c, cnt = 0;
		struct ct_state_save_opts so = { .now = NOW, .zone = -1, .counters = true };
		struct ct_state_restore_opts ro = { .now = NOW, .counters = true };
		struct ct_state_error err;
		struct ct_state_file *f;
		struct stat st;
		struct tab dst;

		w = bu_mono_ns(); c = bu_thread_cpu_ns();
		ct_table_dump(src.thr, -1, nothing_info, &cnt);
		t_add(&dump, bu_mono_ns() - w, bu_thread_cpu_ns() - c);

		cnt = 0;
		w = bu_mono_ns(); c = bu_thread_cpu_ns();
		ct_record_export(src.thr, -1, NOW, nothing_rec, &cnt);
		t_add(&exp, bu_mono_ns() - w, bu_thread_cpu_ns() - c);

		rs.n = 0;
		rs.bytes = 0;
		rs.encode = true;
		rs.keep = true;
		w = bu_mono_ns(); c = bu_thread_cpu_ns();
		ct_record_export(src.thr, -1, NOW, take, &rs);
		t_add(&enc, bu_mono_ns() - w, bu_thread_cpu_ns() - c);
		{
			/* bytes per entry: encode them all once more, summing */
			uint8_t b[CT_RECORD_ENC_MAX];
			enum ct_record_reason why;
			uint64_t sum = 0;

			for (size_t i = 0; i < rs.n && k == 0; i++)
				sum += ct_record_encode(&rs.v[i], b, sizeof(b), &why);
			if (k == 0)
				enc_bytes_per = sum;
		}

		tab_new(&dst, entries);
		w = bu_mono_ns(); c = bu_thread_cpu_ns();
		for (size_t i = 0; i < rs.n; i++)
			ct_record_import(dst.thr, &rs.v[i], NOW, 0, 0, NULL);
		t_add(&imp, bu_mono_ns() - w, bu_thread_cpu_ns() - c);
		if (ct_table_count(dst.t) != n_src) {
			fprintf(stderr, "ctrack-bench record: imported %llu of %llu\n",
				(unsigned long long)ct_table_count(dst.t), (unsigned long long)n_src);
			return 1;
		}
		tab_free(&dst);

		/* the same entries made by their packets, in a table the same size */
		tab_new(&dst, entries);
		c = bu_thread_cpu_ns();
		w = fill(&dst, entries);
		t_add(&create, w, bu_thread_cpu_ns() - c);
		tab_free(&dst);

		w = bu_mono_ns(); c = bu_thread_cpu_ns();
		if (ct_state_save(src.thr, path, &so, NULL, &err) < 0) {
			char m[256];

			fprintf(stderr, "ctrack-bench record: %s: %s\n", path,
				ct_state_strerror(&err, m, sizeof(m)));
			return 1;
		}
		t_add(&save, bu_mono_ns() - w, bu_thread_cpu_ns() - c);
		if (stat(path, &st) == 0)
			file_bytes = (uint64_t)st.st_size;

		w = bu_mono_ns(); c = bu_thread_cpu_ns();
		if (ct_state_open(path, &f, &err) < 0) {
			fprintf(stderr, "ctrack-bench record: cannot open %s\n", path);
			return 1;
		}
		t_add(&opn, bu_mono_ns() - w, bu_thread_cpu_ns() - c);
		tab_new(&dst, entries);
		w = bu_mono_ns(); c = bu_thread_cpu_ns();
		if (ct_state_restore(f, dst.thr, &ro, NULL, &err) < 0) {
			fprintf(stderr, "ctrack-bench record: restore failed\n");
			return 1;
		}
		t_add(&rst, bu_mono_ns() - w, bu_thread_cpu_ns() - c);
		ct_state_close(f);
		tab_free(&dst);
		unlink(path);
	}
	{
		double dmed, elo, ehi, cmed;

		bu_spread(dump.wall, dump.n, &dmed, &elo, &ehi);
		report(a, "dump", &dump, n_src, 0, NULL);
		report(a, "export", &exp, n_src, dmed, "ratio_to_dump");
		report(a, "encode", &enc, n_src, dmed, "ratio_to_dump");
		bu_spread(create.wall, create.n, &cmed, &elo, &ehi);
		report(a, "create", &create, n_src, 0, NULL);
		report(a, "import", &imp, n_src, cmed, "ratio_to_create");
		report(a, "save", &save, n_src, 0, NULL);
		report(a, "open", &opn, n_src, 0, NULL);
		report(a, "restore", &rst, n_src, cmed, "ratio_to_create");
	}
	bu_rec_begin(&r, a, "record", "size");
	bu_rec_int(&r, "entries", n_src);
	bu_rec_num(&r, "encoded_bytes_per_entry", (double)enc_bytes_per / (double)n_src);
	bu_rec_num(&r, "file_bytes_per_entry", (double)file_bytes / (double)n_src);
	bu_rec_int(&r, "file_bytes", file_bytes);
	bu_rec_int(&r, "struct_bytes", sizeof(struct ct_record));
	bu_rec_end(&r);
	free(rs.v);
	free(rs.buf);
	tab_free(&src);
	return 0;
}
