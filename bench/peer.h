/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer.h - what `ctrack-bench ovs`'s files share (bench_ovs.c is the
 * driver; one file per peer - peer_ovs.c (OVS's own benchmark and large
 * tables), peer_pcap.c (the capture path against OVS's pcap mode),
 * peer_kernel.c (nf_conntrack in a router namespace), peer_flows.c
 * (softflowd and nfpcapd) - and peer_util.c's children, commands, paths
 * and comparison rows).
 */
#ifndef CT_BENCH_PEER_H
#define CT_BENCH_PEER_H

#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ctrack/ctrack.h"

#include "bench.h"
#include "ovs/frames.h"

#define OVSB_MAX_REPEAT 31
#define OVSB_MAX_KV 64

struct ovsb_kv {
	unsigned n;
	char key[OVSB_MAX_KV][48];
	char val[OVSB_MAX_KV][80];
};

struct ovsb_env {
	char repo[PATH_MAX];      /* ctrack source root */
	char build[PATH_MAX];     /* ctrack build dir (of this executable) */
	char cache[PATH_MAX];     /* OVS cache dir */
	char ovstest[PATH_MAX + 32];
	char harness[PATH_MAX + 32];
	char ctrack[PATH_MAX + 32];
	char pcaps[PATH_MAX + 32];
	char errlog[PATH_MAX + 32];  /* the peers' stderr during pcap runs */
	int repeat;
	bool json;
	bool quick;
};

/* --acct: ctrack's tables keep packet and byte counters (bench, large). */
extern bool ovsb_acct;

/* One comparison row.  @unit names the figure ("mpps", "ms",
 * "bytes_per_conn"); @higher_better says which way ratio goes: ratio is
 * always "how many times better ctrack is" (ctrack/ovs for rates,
 * ovs/ctrack for costs). */
struct ovsb_row {
	const char *workload;
	const char *metric;
	const char *unit;
	bool higher_better;
	double ovs, ctrack;        /* the peer's figure, ctrack's */
	double target;             /* ratio wanted, 0 = none */
	unsigned runs;
	const char *ovs_cmd;
	const char *ctrack_cmd;
	const char *params;        /* JSON fragment, without braces */
	const char *peer;          /* the peer's name in keys; NULL = "ovs" */
	/* the lowest and highest ratio of one pair of alternating runs (0 =
	 * not kept): how far one run's comparison may stray from the
	 * median's on this machine */
	double run_ratio_min, run_ratio_max;
};

#define LG_NOW 1000000000000ull   /* ctrack's fixed `now` (ns) */

/* ---- peer_util.c ---- */

/* The value of @key in a child's key/value lines (NULL, -1: absent). */
const char *kv_str(const struct ovsb_kv *kv, const char *key);
double kv_num(const struct ovsb_kv *kv, const char *key);
/* Monotonic seconds; this process's resident bytes; the median of @n. */
double mono_s(void);
long rss_bytes(void);
double median(const double *v, unsigned n);
/* printf to a file descriptor (a child's result lines). */
void fdprintf(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Run @fn(@arg, fd) in a forked child; what it writes to fd comes back as
 * key/value lines in @kv, and *@cpu (if not NULL) gets the child's user +
 * system CPU seconds, all its threads.  Returns the child's exit status
 * (0 = fine). */
typedef void (*ovsb_child_fn)(void *arg, int fd);
int run_child(ovsb_child_fn fn, void *arg, struct ovsb_kv *kv, double *cpu);
/* Run @argv (stdout to @out_path, or captured into @kv when NULL; stderr
 * appended to @err_path, or kept when NULL), timed in wall-clock seconds
 * from fork to exit and in the child's CPU seconds; its exit status. */
int run_cmd(char *const argv[], const char *out_path, const char *err_path,
	    struct ovsb_kv *kv, double *wall, double *cpu);
/* @argv joined into one line, for the rows. */
void cmdline(char *buf, size_t size, char *const argv[]);
/* This build's, the repository's, the OVS cache's and the captures'
 * paths; the peer built on first use. */
int find_paths(struct ovsb_env *e);
int build_peer(struct ovsb_env *e);
/* The lowest and highest ratio of one pair of alternating runs. */
void ratio_range(const double *num, const double *den, unsigned runs,
		 double *min, double *max);
void run_ratio_range(struct ovsb_row *r, const double *o, const double *c,
		     unsigned runs);
/* One comparison row, as a readable line or a JSON object. */
void report(const struct ovsb_env *e, const struct ovsb_row *r);

/* ---- peer_ovs.c ---- */

/* OVS's benchmark batch, byte for byte (checked against its tests). */
int ovs_bench_payload(const struct ovsb_env *e, uint8_t *out, unsigned cap);
void wl_bench(const struct ovsb_env *e, unsigned threads, bool change,
	      unsigned long pkts);
/* Send slots first..first+n-1 through ctrack, 32 per burst, in zone
 * @zone (the kernel workload replays the same way). */
void lg_run(struct ct_thread *thr, const uint8_t *slots, size_t first,
	    size_t n, uint16_t zone, struct ct_verdict *v);
/* This process's CPU seconds, all threads. */
double cpu_s(void);
void wl_large(const struct ovsb_env *e, uint32_t n, size_t l);

/* ---- peer_pcap.c ---- */

/* Records in a pcap file (-1: not one). */
long pcap_count(const char *path);
/* A classic pcap's header and one record. */
void pcap_header(FILE *f);
void pcap_record(FILE *f, uint64_t ts_us, const uint8_t *frame, unsigned len);
/* The synthetic capture and the shared pcaps concatenated. */
int make_synth(const char *path, uint32_t conns);
int make_shared_concat(const struct ovsb_env *e, const char *path);
void wl_pcap(const struct ovsb_env *e, uint32_t synth_conns);

/* ---- peer_kernel.c ---- */

/* @name on $PATH, then in /usr/sbin, /sbin, /usr/bin, /bin, into @out. */
bool find_exe(const char *name, char *out, size_t size);
void wl_kernel(const struct ovsb_env *e, const uint32_t *sizes, unsigned nsizes);

/* ---- peer_flows.c ---- */

void wl_flows(const struct ovsb_env *e, uint32_t synth_conns);

#endif /* CT_BENCH_PEER_H */
