/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_util.h - what the benchmarks share: clocks, options, statistics,
 * result records, and synthetic packets built straight into struct
 * ct_packet (the per-packet benchmarks measure the tracker, not a parser;
 * bench_throughput also has a raw-frame path).
 *
 * Results.  A benchmark prints one record per measured variant: with
 * --json one JSON object per line ({"bench":..., "variant":..., fields}),
 * otherwise one readable line.  Field names carry their unit
 * (us_per_pass, cpu_pct, ns_per_expired, mpps, bytes_per_conn, ms, ratio).
 *
 * Flows.  Flow number f (0 <= f < 2^32) is the IPv4 tuple
 * 10.0.0.0+(f>>12) port 1024+(f&4095) -> 172.16.0.1:80 (bu_flow_tuple):
 * unique per f, derived arithmetically so that a benchmark needs no table
 * of tuples.  TCP flows use fixed initial sequence numbers, so one
 * counter per flow (packets sent so far) is all the state a generator
 * keeps to produce in-window segments.
 */
#ifndef CTRACK_BENCH_UTIL_H
#define CTRACK_BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench.h"
#include "ctrack/ctrack.h"

/* ---- clocks ---- */
uint64_t bu_mono_ns(void);
uint64_t bu_thread_cpu_ns(void);
uint64_t bu_proc_cpu_ns(void);   /* user + system of the whole process */
/* The library's collector thread (named "ct-gc" by ct_gc_start): its task
 * id in this process, or 0 when none runs; and the nanoseconds a task of
 * this process has run (schedstat), or 0. */
int bu_gc_thread_tid(void);
uint64_t bu_task_run_ns(int tid);
void bu_sleep_ns(uint64_t ns);

/*
 * ---- options: "--name" flags and "--name=value" / "--name value" ----
 *
 * main.c checks every argument against the benchmark's list in its table
 * before the benchmark runs; these still refuse what they cannot read (a
 * value that is not a count, a list too long, an option without its
 * value): message on stderr and exit status 2, since they have no error
 * to return and a benchmark that ran on a misread value would waste its
 * minutes.
 */
bool bu_flag(const struct bench_args *a, const char *name);
/* The count (bu_count) given to --name, or @def when it is absent. */
uint64_t bu_opt_u64(const struct bench_args *a, const char *name, uint64_t def);
const char *bu_opt_str(const struct bench_args *a, const char *name,
		       const char *def);
/* "1,2,4" -> up to @max counts in @out; returns how many (or the default
 * single value @def when the option is absent). */
unsigned bu_opt_list(const struct bench_args *a, const char *name,
		     uint64_t def, uint64_t *out, unsigned max);
/* "uniform,zipf" -> the indices in @names (@n_names of them) of up to
 * @max words given to --name (or @def when absent), in the order given;
 * returns how many.  main.c has checked every word against the option's
 * choices before the benchmark runs. */
unsigned bu_opt_words(const struct bench_args *a, const char *name, const char *def,
		      const char *const *names, unsigned n_names,
		      unsigned *out, unsigned max);

/* A count: digits, an optional decimal point and digits, an optional k, M
 * or G (x1e3, 1e6, 1e9): "1000", "10k", "1.5M"; a whole number below 2^64
 * and nothing else (no sign, no spaces, nothing after).  Anything else
 * ends the program with "ctrack-bench: --OPT: 'S' is not a count (e.g.
 * 1000, 10k, 1M)" (exit status 2). */
uint64_t bu_count(const char *opt, const char *s);
/* "1k,1M": the counts of a comma-separated list, as bu_count, into @out;
 * returns how many.  More than @max is an error too; with @out NULL the
 * list is only checked, however long. */
unsigned bu_count_list(const char *opt, const char *s, uint64_t *out,
		       unsigned max);

/* ---- statistics (the arrays are sorted in place) ---- */
double bu_percentile(double *v, size_t n, double pct);
static inline double bu_median(double *v, size_t n)
{
	return bu_percentile(v, n, 50.0);
}
/* The median (as bu_median), least and greatest of @n values (1..64),
 * @v left as it was: the spread of a few rounds. */
void bu_spread(const double *v, size_t n, double *med, double *lo, double *hi);

/* ---- result records ---- */
struct bu_rec {
	const struct bench_args *a;
	char json[4096];
	char text[4096];
	size_t jlen, tlen;
};

void bu_rec_begin(struct bu_rec *r, const struct bench_args *a,
		  const char *bench, const char *variant);
void bu_rec_num(struct bu_rec *r, const char *key, double v);
void bu_rec_int(struct bu_rec *r, const char *key, uint64_t v);
void bu_rec_str(struct bu_rec *r, const char *key, const char *v);
void bu_rec_bool(struct bu_rec *r, const char *key, bool v);
void bu_rec_end(struct bu_rec *r);
/* A free-form note line (text mode only; JSON consumers ignore it). */
void bu_note(const struct bench_args *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- tables ---- */
/* A configuration for benchmarks: kernel settings except unlimited max,
 * checksum checking off (the synthetic packets carry no bytes; a dataplane
 * has the NIC verify them), @rows initial rows, @acct as asked. */
void bu_config(struct ct_table_config *cfg, uint64_t rows, bool acct);
struct ct_table *bu_table(const struct ct_table_config *cfg);

/* ---- packets ---- */
void bu_flow_tuple(struct ct_tuple *t, uint32_t flow, uint8_t l4, uint16_t zone);

/* The packet of flow tuple @orig travelling in direction @dir. */
void bu_udp_pkt(struct ct_packet *p, const struct ct_tuple *orig,
		enum ct_dir dir, uint32_t payload);
void bu_tcp_pkt(struct ct_packet *p, const struct ct_tuple *orig,
		enum ct_dir dir, uint8_t flags, uint32_t seq, uint32_t ack,
		uint16_t window, uint32_t payload);

/* The TCP conversation every benchmark flow follows.  Handshake: SYN
 * (window scale 7, SACK permitted), SYN-ACK, ACK; then packet k >= 0 of
 * the established phase is data (BU_TCP_MSS bytes) from the originator
 * when k is even and the reply's ACK of all of it when k is odd; close:
 * FIN, FIN (answering), last ACK. */
#define BU_TCP_MSS 1000u
#define BU_ISN_O 1000000u
#define BU_ISN_R 5000000u
void bu_tcp_handshake(struct ct_packet p[3], const struct ct_tuple *orig);
void bu_tcp_established(struct ct_packet *p, const struct ct_tuple *orig,
			uint32_t k);
/* Close after @k established packets (k even: every datum acked). */
void bu_tcp_close(struct ct_packet p[3], const struct ct_tuple *orig, uint32_t k);

/* Frames for these packets: ts_frame (tests/support/frame.h). */

/* Process @n packets (any number) in bursts of CT_BURST_MAX; returns the
 * number of verdicts of class @cls seen (or of any class if cls < 0). */
uint64_t bu_process_all(struct ct_thread *thr, struct ct_packet *pkts,
			size_t n, ct_time_ns now, int cls);

/* Create @n established TCP flows first, first+1, ... in zone @zone
 * (handshake + one data/ack pair each), at time @now; returns how many
 * ended ESTABLISHED and ASSURED according to the verdicts. */
uint64_t bu_fill_tcp(struct ct_thread *thr, uint32_t first, uint64_t n,
		     uint16_t zone, ct_time_ns now);
/* Create @n UDP flows (one packet each, unreplied) at time @now, or with
 * @replied a request and its reply. */
uint64_t bu_fill_udp(struct ct_thread *thr, uint32_t first, uint64_t n,
		     uint16_t zone, ct_time_ns now, bool replied);
/* bu_fill_udp, adding the monotonic time spent in ct_process_burst (not
 * in making the packets) to *@burst_ns. */
uint64_t bu_fill_udp_timed(struct ct_thread *thr, uint32_t first, uint64_t n,
			   uint16_t zone, ct_time_ns now, bool replied,
			   uint64_t *burst_ns);

/* ---- random numbers ---- */
static inline uint64_t bu_rand(uint64_t *s)
{
	/* splitmix64: fast, good enough for choosing flows */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Fill @out[0..n) with flow numbers in [0, flows): uniform, or Zipf with
 * exponent @s (popularity rank r has weight 1/r^s; ranks are scattered
 * over the flow numbers).  Precomputed so that choosing a flow costs the
 * measured loop one sequential read. */
void bu_flow_sequence(uint32_t *out, size_t n, uint64_t flows, double zipf_s,
		      uint64_t seed);

/* ---- other processes ---- */
/* The number a shell command's first output line starts with (strtol),
 * or -1 when the command cannot be started; its exit status is not
 * looked at. */
long bu_sh_num(const char *cmd);
/* The CPU time (user + system, /proc/PID/stat) process @pid has used, in
 * seconds; 0 when it cannot be read. */
double bu_pid_cpu_s(int pid);

/* Resident set size of this process, in bytes (/proc/self/statm). */
uint64_t bu_rss_bytes(void);

/* A short description of this machine (for notes). */
void bu_machine(char *buf, size_t size);

#endif
