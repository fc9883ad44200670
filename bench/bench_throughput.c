/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_throughput.c - packets per second per thread.
 *
 * Workloads (each thread owns a contiguous block of flows, as RSS would
 * give a core its own flows; threads never share a flow):
 *  est      established TCP flows (handshake done beforehand): each
 *           packet is the next segment of its flow's conversation - data
 *           from the originator, then the reply's ACK of it - so window
 *           tracking does its real work on every packet.  Which flow sends
 *           next follows a precomputed sequence, uniform or Zipf (s = 1).
 *  new-udp  one-packet UDP flows, each a new entry (the table already
 *           holds the established flows); in their own namespace, torn
 *           down after the variant.
 *  new-tcp  whole TCP connections: SYN, SYN-ACK, ACK, data, ACK, FIN,
 *           FIN, ACK (8 packets, ending in TIME_WAIT).
 *
 * Paths: "parsed" hands ct_process_burst() struct ct_packet built by the
 * benchmark (the tracker alone); "frames" builds Ethernet/IPv4/TCP (or
 * UDP) frames and runs ct_parse_frame() on each first (what a dataplane
 * or the OVS comparison does).  Parse and track times are reported apart.
 *
 * What is timed: each ct_process_burst() call (and, on the frames path,
 * the parse of its 64 frames), with CLOCK_MONOTONIC around it.  mpps is
 * packets over that time, per thread; mpps_wall is packets over the
 * thread's wall time, which also includes making the packets (the
 * generator costs a few ns per packet: a flow-number read, a counter
 * increment and a 160-byte copy).  Per-burst latency percentiles come
 * from the same timings.  Time (@now) is the real monotonic clock, so
 * the collector thread (ct_gc_start) sees the same time.
 *
 * Collector variants: off; due-time (the scan of the bounds,
 * CT_GC_LOCK_DUE, adaptive schedule); wheel (the library's default,
 * CT_GC_LOCK_WHEEL, running throughout: with new connections, every
 * insert queues a slot handle that the collector empties into its
 * wheel); every collector variant first runs one pass before the
 * workers start, its time reported as gc_prestep_ms - the walk over
 * every row that seeds a wheel switched on, or the scan's first pass
 * over bounds the wheel's slot visits left low, is not what runs while
 * traffic flows;
 * lock-nonempty (pf's policy in the
 * same thread, for contrast); alternating (the library's default policy -
 * the wheel since stop 16 - started and stopped every 50 ms
 * while the packet threads run, after a first half-period of warm-up
 * filed under neither: each burst is filed under the state the
 * collector was in for all of it, and the p99 of the bursts with it is
 * compared with the p99 of those without it from the same run - the
 * side-by-side form of the comparison, since separate runs minutes apart
 * on a shared machine differ in their tails by more than the collector
 * could).  Nothing is due during a run (established flows live 5
 * days or 300 s with data in flight), so this shows what a running
 * collector costs the packet threads, not what expiry costs.
 * gc_cpu_pct is the collector thread's run time over the run's wall time
 * (schedstat of the thread ct_gc_start names "ct-gc", summed over the
 * alternating variant's threads; gc_cpu_from says "ct-gc"), or, without
 * a collector, the process's CPU less the workers' (liburcu's threads,
 * the main thread: "process-less-workers").
 *
 * Checksums: checking is off (nf_conntrack_checksum = 0) in every
 * variant, as on a dataplane whose NIC verifies checksums; the parsed
 * path has no bytes to check.
 *
 * Counters: the table's settings are the library's defaults (those of
 * the kernel: nf_conntrack_acct = 0, no per-connection counters) in every
 * variant, and again with counters on for the established flows (one
 * thread, no collector; names end in -acct), side by side in one run.
 *
 * Rounds: the host under this shared machine moves a run's rate by up
 * to half from one run to the next, so the headline rows (established
 * and one-packet UDP flows, no collector, parsed) run --rounds times,
 * one thread and two alternating, and each record gives the median, best
 * and worst of its rounds' median-burst rates next to its last round's
 * figures; the two-thread record's scaling_vs_1t is the median of the
 * ratios of rounds run back to back (min and max beside it), and a
 * cpu-ceiling record says what the machine gave two threads that share
 * nothing, measured right after them.
 *
 * Options: --flows 1k,1M,10M  --pop uniform,zipf  --threads 1,2
 *          --gc off,due-time,wheel,alternating[,lock-nonempty]
 *          --path parsed,frames  --acct off,on
 *          --work est,new-udp,new-tcp  --packets N (per thread, est)
 *          --new N (connections per thread, new-*)  --rounds N (5)
 *          --quick (1 round)
 */
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "bench_util.h"
#include "support/frame.h"

enum work { W_EST, W_NEW_UDP, W_NEW_TCP };
enum gcmode { GC_OFF, GC_DUE, GC_NONEMPTY, GC_ALT, GC_WHEEL };

static const char *const work_name[] = { "est", "new-udp", "new-tcp" };
static const char *const gc_name[] = { "off", "due-time", "lock-nonempty", "alternating", "wheel" };

/* The alternating variant's half-period. */
#define ALT_PHASE_NS (50ull * 1000 * 1000)

#define NEW_ZONE 7

struct shared {
	struct ct_table *t;
	uint64_t flows;
	uint32_t *cnt;            /* per flow: established packets sent */
	pthread_barrier_t bar;
	uint32_t new_next;        /* flow numbers for new connections */
	/* alternating: whether the collector runs, and a count of changes
	 * (a burst that saw the count move is filed under neither) */
	_Atomic unsigned gc_on, gc_changes;
	/* alternating: the run time of the collector threads it stopped
	 * (schedstat), and whether one was not found */
	uint64_t gc_run_ns;
	bool gc_run_missing;
	_Atomic unsigned workers_done;
	bool ceiling_done;        /* this table's cpu-ceiling records are out */
};

struct worker {
	pthread_t th;
	struct shared *sh;
	unsigned id;
	enum work work;
	bool frames;
	double zipf;
	uint64_t first, n_flows;  /* est: owned flows */
	uint32_t new_first;       /* new-*: first flow number */
	uint64_t packets;         /* est: packets; new-*: connections */
	/* results */
	uint64_t track_ns, parse_ns, wall_ns, cpu_ns, pkts, conns, bad;
	uint32_t *lat;            /* ns per burst (parse + track) */
	uint8_t *lat_gc;          /* per burst: 0 collector stopped, 1 running,
				   * 2 it changed during the burst, or the
				   * workers were warming up */
	size_t n_lat;
};

/* ---- the packet loops ---- */

/* Packet @k of connection @c's whole life (new-tcp). */
static void tcp_life(struct ct_packet *p, const struct ct_tuple *t, unsigned k)
{
	struct ct_packet tmp[3];

	if (k < 3) {
		bu_tcp_handshake(tmp, t);
		*p = tmp[k];
	} else if (k < 5) {
		bu_tcp_established(p, t, k - 3);
	} else {
		bu_tcp_close(tmp, t, 2);
		*p = tmp[k - 5];
	}
}

/* Expected verdict class of packet @k of the work's unit. */
static bool verdict_ok(enum work w, unsigned k, const struct ct_verdict *v)
{
	if (w == W_EST)
		return v->cls == CT_V_ESTABLISHED;
	if (k == 0)
		return v->cls == CT_V_NEW;
	return v->cls == CT_V_ESTABLISHED;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	struct ct_thread *thr = ct_thread_attach(sh->t);
	struct ct_packet pk[CT_BURST_MAX];
	const struct ct_packet *ptr[CT_BURST_MAX];
	struct ct_verdict v[CT_BURST_MAX];
	static _Thread_local uint8_t fb[CT_BURST_MAX][TS_FRAME_HDR_MAX];
	uint32_t caplen[CT_BURST_MAX], wire[CT_BURST_MAX];
	uint32_t *seq = NULL;
	size_t seq_len = 0, pos = 0;
	unsigned per = w->work == W_NEW_TCP ? 8 : 1;
	uint64_t total = w->work == W_EST ? w->packets : w->packets * per;
	uint64_t wall0, cpu0, nb = 0;
	struct ct_packet tmpl_o, tmpl_r;
	struct ct_tuple t0;

	for (unsigned j = 0; j < CT_BURST_MAX; j++)
		ptr[j] = &pk[j];
	if (w->work == W_EST) {
		seq_len = w->packets < (4u << 20) ? w->packets : (4u << 20);
		seq = malloc(seq_len * sizeof(*seq));
		bu_flow_sequence(seq, seq_len, w->n_flows, w->zipf, 12345 + w->id);
		bu_flow_tuple(&t0, 0, IPPROTO_TCP, 0);
		bu_tcp_established(&tmpl_o, &t0, 0);
		bu_tcp_established(&tmpl_r, &t0, 1);
	}
	w->n_lat = 0;
	w->lat = malloc((total / CT_BURST_MAX + 1) * sizeof(*w->lat));
	w->lat_gc = malloc(total / CT_BURST_MAX + 1);
	pthread_barrier_wait(&sh->bar);
	wall0 = bu_mono_ns();
	cpu0 = bu_thread_cpu_ns();
	for (uint64_t done = 0; done < total; done += CT_BURST_MAX) {
		unsigned n = total - done < CT_BURST_MAX ? (unsigned)(total - done)
							 : CT_BURST_MAX;
		uint64_t ta, tb, tc;
		unsigned ch0 = atomic_load_explicit(&sh->gc_changes, memory_order_acquire);
		unsigned on = atomic_load_explicit(&sh->gc_on, memory_order_relaxed);

		for (unsigned j = 0; j < n; j++) {
			uint64_t i = done + j;

			if (w->work == W_EST) {
				uint32_t f = (uint32_t)(w->first + seq[pos]);
				uint32_t k = sh->cnt[f]++;
				uint32_t sent = (k / 2) * BU_TCP_MSS;

				if (++pos == seq_len)
					pos = 0;
				/* bu_tcp_established, from templates */
				if (k % 2 == 0) {
					pk[j] = tmpl_o;
					pk[j].tuple.src.ip4 = htonl(0x0a000000u + (f >> 12));
					pk[j].tuple.sport = (uint16_t)(1024u + (f & 4095u));
					pk[j].u.tcp.seq = BU_ISN_O + 1 + sent;
				} else {
					pk[j] = tmpl_r;
					pk[j].tuple.dst.ip4 = htonl(0x0a000000u + (f >> 12));
					pk[j].tuple.dport = (uint16_t)(1024u + (f & 4095u));
					pk[j].u.tcp.ack = BU_ISN_O + 1 + sent + BU_TCP_MSS;
				}
			} else {
				struct ct_tuple t;
				uint32_t c = (uint32_t)(i / per);

				bu_flow_tuple(&t, w->new_first + c,
					      w->work == W_NEW_UDP ? IPPROTO_UDP : IPPROTO_TCP,
					      NEW_ZONE);
				if (w->work == W_NEW_UDP)
					bu_udp_pkt(&pk[j], &t, CT_DIR_ORIGINAL, 64);
				else
					tcp_life(&pk[j], &t, (unsigned)(i % per));
			}
			if (w->frames)
				caplen[j] = ts_frame(fb[j], &pk[j], false, &wire[j]);
		}
		ta = bu_mono_ns();
		if (w->frames)
			for (unsigned j = 0; j < n; j++)
				ct_parse_frame(&pk[j], CT_LINK_ETHERNET, fb[j], caplen[j],
					       wire[j], ta);
		tb = w->frames ? bu_mono_ns() : ta;
		ct_process_burst(thr, ptr, n, tb, v);
		tc = bu_mono_ns();
		w->parse_ns += tb - ta;
		w->track_ns += tc - tb;
		w->lat_gc[w->n_lat] = atomic_load_explicit(&sh->gc_changes,
							   memory_order_acquire) == ch0
				      ? (uint8_t)on : 2;
		w->lat[w->n_lat++] = (uint32_t)(tc - ta);
		for (unsigned j = 0; j < n; j++)
			if (!verdict_ok(w->work, (unsigned)((done + j) % per), &v[j]))
				w->bad++;
		nb += n;
	}
	w->wall_ns = bu_mono_ns() - wall0;
	w->cpu_ns = bu_thread_cpu_ns() - cpu0;
	w->pkts = nb;
	w->conns = w->work == W_EST ? 0 : nb / per;
	free(seq);
	ct_thread_detach(thr);
	atomic_fetch_add(&sh->workers_done, 1);
	return NULL;
}

/* ---- variants ---- */

struct variant {
	enum work work;
	uint64_t flows;
	double zipf;
	unsigned threads;
	enum gcmode gc;
	bool frames;
	bool acct;                /* the table keeps per-connection counters */
};

struct baseline {
	/* total mpps of the 1-thread run of the same workload, for scaling */
	char key[96];
	double mpps;
	double p99_gc_off;
};

static struct baseline base[64];
static unsigned n_base;

static struct baseline *base_get(const char *key)
{
	for (unsigned i = 0; i < n_base; i++)
		if (!strcmp(base[i].key, key))
			return &base[i];
	if (n_base == sizeof(base) / sizeof(base[0]))
		return NULL;
	snprintf(base[n_base].key, sizeof(base[0].key), "%s", key);
	base[n_base].mpps = base[n_base].p99_gc_off = 0;
	return &base[n_base++];
}

static void flows_label(char *buf, size_t size, uint64_t flows)
{
	if (flows >= 1000000 && flows % 1000000 == 0)
		snprintf(buf, size, "%lluM", (unsigned long long)(flows / 1000000));
	else if (flows >= 1000 && flows % 1000 == 0)
		snprintf(buf, size, "%lluk", (unsigned long long)(flows / 1000));
	else
		snprintf(buf, size, "%llu", (unsigned long long)flows);
}

/* Add the run time of the collector thread about to be stopped to
 * sh->gc_run_ns (its whole life: each start is a new thread). */
static void gc_thread_run(struct shared *sh)
{
	int tid = bu_gc_thread_tid();

	if (tid)
		sh->gc_run_ns += bu_task_run_ns(tid);
	else
		sh->gc_run_missing = true;
}

/* Until every worker is done: the collector thread runs for a
 * half-period, then does not, and so on.  gc_on says which, and
 * gc_changes moves around each change, so that a burst can tell whether
 * it ran wholly in one state.  The first half-period is the workers'
 * warm-up, filed under neither (gc_on 2, set before they started): a
 * thread that just started runs on cold caches - every burst of its
 * first ~10 ms slower than the p99 - which was charged to the collector,
 * whose first run came first. */
static void alternate_collector(struct shared *sh, unsigned threads)
{
	bool on = false;
	struct timespec warm = { 0, (long)ALT_PHASE_NS };

	nanosleep(&warm, NULL);

	while (atomic_load(&sh->workers_done) < threads) {
		struct timespec ts = { 0, (long)ALT_PHASE_NS };

		atomic_fetch_add_explicit(&sh->gc_changes, 1, memory_order_acq_rel);
		if (on) {
			atomic_store(&sh->gc_on, 0);
			gc_thread_run(sh);
			ct_gc_stop(sh->t);
		} else {
			ct_gc_start(sh->t, NULL, NULL);
			atomic_store(&sh->gc_on, 1);
		}
		atomic_fetch_add_explicit(&sh->gc_changes, 1, memory_order_acq_rel);
		on = !on;
		nanosleep(&ts, NULL);
	}
	if (on) {
		gc_thread_run(sh);
		ct_gc_stop(sh->t);
	}
	atomic_store(&sh->gc_on, 0);
}

/* The burst times (us) of every worker, or with @state >= 0 only those
 * of the bursts filed under it (worker.lat_gc); *@n of them.  NULL (and
 * *@n 0) if there are none or no memory. */
static double *lat_us(const struct worker *w, unsigned threads, int state, size_t *n)
{
	size_t k = 0;
	double *v;

	*n = 0;
	for (unsigned i = 0; i < threads; i++)
		for (size_t j = 0; j < w[i].n_lat; j++)
			*n += state < 0 || w[i].lat_gc[j] == state;
	v = *n ? malloc(*n * sizeof(*v)) : NULL;
	if (!v) {
		*n = 0;
		return NULL;
	}
	for (unsigned i = 0; i < threads; i++)
		for (size_t j = 0; j < w[i].n_lat; j++)
			if (state < 0 || w[i].lat_gc[j] == state)
				v[k++] = (double)w[i].lat[j] / 1000.0;
	return v;
}

/* The @pct percentile of the bursts filed under @state (in us); 0 if
 * there are none. */
static double lat_percentile_in(const struct worker *w, unsigned threads, uint8_t state,
				double pct, size_t *count)
{
	double *v = lat_us(w, threads, state, count), r;

	if (!v)
		return 0;
	r = bu_percentile(v, *count, pct);
	free(v);
	return r;
}

/* The rounds of one variant so far: each round's median-burst rate and
 * total rate; @base: the one-thread variant whose rounds alternate with
 * these (round k of each ran back to back), for the scaling. */
struct rounds {
	unsigned n, of;
	double p50[16], total[16];
	const struct rounds *base;
};

/* Run one variant and print its record; with @rd, one of rd->of rounds:
 * only the last prints, with every round's median-burst rate summarised
 * (on this shared machine the host's load moves a run's rate by up to
 * half; rounds minutes apart would see different hosts). */
static int run_variant(const struct bench_args *a, struct shared *sh,
		       const struct variant *vr, uint64_t packets, uint64_t new_conns,
		       struct rounds *rd)
{
	struct worker *w = calloc(vr->threads, sizeof(*w));
	struct ct_gc_policy pol;
	uint64_t proc0, wall0, wall, gc_cpu = 0, tot_pkts = 0, tot_conns = 0, bad = 0;
	uint64_t worker_cpu = 0, prestep_ns = 0, gc_run0 = 0, gc_run1 = 0;
	uint64_t seeds0 = 0, resizes0 = 0;
	struct ct_stats st;
	const char *gc_from = "process-less-workers";
	int gc_tid = 0;
	size_t n_lat;
	double mpps_sum = 0, mpps_min = 1e18, mpps_wall_sum = 0, parse_ns = 0;
	double track_ns = 0, *lat;
	char name[128], fl[32], key[96];
	struct bu_rec r;
	struct baseline *b;

	pthread_barrier_init(&sh->bar, NULL, vr->threads + 1);
	atomic_store(&sh->workers_done, 0);
	atomic_store(&sh->gc_on, vr->gc == GC_ALT ? 2 : 0);
	if (vr->gc != GC_OFF) {
		ct_gc_policy_default(&pol);
		if (vr->gc != GC_ALT)
			pol.lock = vr->gc == GC_NONEMPTY ? CT_GC_LOCK_NONEMPTY :
				   vr->gc == GC_WHEEL ? CT_GC_LOCK_WHEEL : CT_GC_LOCK_DUE;
		ct_gc_set_policy(sh->t, &pol);
		{
			/* one pass before the workers start: a wheel not
			 * seeded (no collector since the fill, or the policy
			 * just switched from due-time) is seeded by a walk
			 * over every row in the collector's first run, ~35 ms
			 * a million rows, sliced over as many runs as it
			 * takes; and the scan's first pass after the wheel
			 * ran visits every row whose bound a slot visit left
			 * low (the entries' first timeouts passed: all of
			 * them, 120 s after the fill).  What these variants
			 * measure is the collector's steady state; the pass
			 * is reported apart (gc_prestep_ms) */
			struct ct_thread *thr = ct_thread_attach(sh->t);
			struct ct_gc_result res;
			uint64_t t0 = bu_mono_ns();

			if (thr) {
				ct_gc_step(thr, t0, 0, &res);
				ct_thread_detach(thr);
			}
			prestep_ns = bu_mono_ns() - t0;
		}
		if (vr->gc != GC_ALT) {
			ct_gc_start(sh->t, NULL, NULL);
			atomic_store(&sh->gc_on, 1);
		}
	}
	if (vr->work != W_EST) {
		struct ct_settings s;

		ct_table_get_settings(sh->t, &s);
		if (ct_ns_create(sh->t, NEW_ZONE, &s) < 0) {
			fprintf(stderr, "throughput: namespace %d busy\n", NEW_ZONE);
			return 1;
		}
	}
	for (unsigned i = 0; i < vr->threads; i++) {
		w[i].sh = sh;
		w[i].id = i;
		w[i].work = vr->work;
		w[i].frames = vr->frames;
		w[i].zipf = vr->zipf;
		w[i].first = sh->flows * i / vr->threads;
		w[i].n_flows = sh->flows * (i + 1) / vr->threads - w[i].first;
		w[i].packets = vr->work == W_EST ? packets : new_conns;
		w[i].new_first = sh->new_next;
		sh->new_next += (uint32_t)new_conns;
		pthread_create(&w[i].th, NULL, worker_main, &w[i]);
	}
	pthread_barrier_wait(&sh->bar);
	ct_table_get_stats(sh->t, &st);
	seeds0 = st.gc_wheel_seeds;
	resizes0 = st.resizes;
	proc0 = bu_proc_cpu_ns();
	wall0 = bu_mono_ns();
	sh->gc_run_ns = 0;
	sh->gc_run_missing = false;
	if (vr->gc != GC_OFF && vr->gc != GC_ALT) {
		gc_tid = bu_gc_thread_tid();
		gc_run0 = gc_tid ? bu_task_run_ns(gc_tid) : 0;
	}
	if (vr->gc == GC_ALT)
		alternate_collector(sh, vr->threads);
	for (unsigned i = 0; i < vr->threads; i++)
		pthread_join(w[i].th, NULL);
	wall = bu_mono_ns() - wall0;
	if (vr->gc != GC_OFF && vr->gc != GC_ALT) {
		if (gc_tid)
			gc_run1 = bu_task_run_ns(gc_tid);
		ct_gc_stop(sh->t);
	}
	ct_table_get_stats(sh->t, &st);
	pthread_barrier_destroy(&sh->bar);
	for (unsigned i = 0; i < vr->threads; i++) {
		double m = (double)w[i].pkts * 1e3 / (double)(w[i].track_ns + w[i].parse_ns);

		mpps_sum += m;
		if (m < mpps_min)
			mpps_min = m;
		mpps_wall_sum += (double)w[i].pkts * 1e3 / (double)w[i].wall_ns;
		tot_pkts += w[i].pkts;
		tot_conns += w[i].conns;
		bad += w[i].bad;
		worker_cpu += w[i].cpu_ns;
		parse_ns += (double)w[i].parse_ns;
		track_ns += (double)w[i].track_ns;
	}
	/* the collector thread's run time (schedstat: the thread ct_gc_start
	 * named "ct-gc"); without it, the process's CPU less the workers'
	 * (the main thread only waited; liburcu's helper threads count
	 * too) */
	if (vr->gc == GC_ALT && !sh->gc_run_missing) {
		gc_cpu = sh->gc_run_ns;
		gc_from = "ct-gc";
	} else if (vr->gc != GC_OFF && vr->gc != GC_ALT && gc_tid) {
		gc_cpu = gc_run1 > gc_run0 ? gc_run1 - gc_run0 : 0;
		gc_from = "ct-gc";
	} else {
		gc_cpu = bu_proc_cpu_ns() - proc0;
		gc_cpu = gc_cpu > worker_cpu ? gc_cpu - worker_cpu : 0;
	}
	lat = lat_us(w, vr->threads, -1, &n_lat);

	flows_label(fl, sizeof(fl), sh->flows);
	snprintf(name, sizeof(name), "%s-%s%s-%ut-gc-%s%s%s", work_name[vr->work], fl,
		 vr->work == W_EST ? (vr->zipf > 0 ? "-zipf" : "-uniform") : "",
		 vr->threads, gc_name[vr->gc], vr->frames ? "-frames" : "",
		 vr->acct ? "-acct" : "");
	bu_rec_begin(&r, a, "throughput", name);
	bu_rec_str(&r, "work", work_name[vr->work]);
	bu_rec_str(&r, "path", vr->frames ? "frames" : "parsed");
	bu_rec_int(&r, "flows", sh->flows);
	bu_rec_str(&r, "pop", vr->work != W_EST ? "-" : vr->zipf > 0 ? "zipf" : "uniform");
	bu_rec_int(&r, "threads", vr->threads);
	bu_rec_str(&r, "gc", gc_name[vr->gc]);
	bu_rec_str(&r, "acct", vr->acct ? "on" : "off");
	bu_rec_int(&r, "packets", tot_pkts);
	bu_rec_num(&r, "mpps_per_thread", mpps_sum / vr->threads);
	bu_rec_num(&r, "mpps_min_thread", mpps_min);
	bu_rec_num(&r, "mpps_total", mpps_sum);
	bu_rec_num(&r, "mpps_wall_per_thread", mpps_wall_sum / vr->threads);
	bu_rec_num(&r, "ns_per_pkt", (track_ns + parse_ns) / (double)tot_pkts);
	if (vr->frames)
		bu_rec_num(&r, "parse_ns_per_pkt", parse_ns / (double)tot_pkts);
	bu_rec_num(&r, "track_ns_per_pkt", track_ns / (double)tot_pkts);
	if (vr->work != W_EST) {
		double cps = 0;
		for (unsigned i = 0; i < vr->threads; i++)
			cps += (double)w[i].conns * 1e3 /
			       (double)(w[i].track_ns + w[i].parse_ns);
		bu_rec_num(&r, "mconns_per_s_per_thread", cps / vr->threads);
		bu_rec_num(&r, "mconns_p50_per_thread",
			   (double)(CT_BURST_MAX / (vr->work == W_NEW_TCP ? 8 : 1)) /
			   bu_percentile(lat, n_lat, 50));
		bu_rec_int(&r, "conns", tot_conns);
	}
	/* robust against preemption on a shared machine: a preempted burst
	 * moves the mean, not the median */
	bu_rec_num(&r, "mpps_p50_per_thread",
		   CT_BURST_MAX / bu_percentile(lat, n_lat, 50));
	bu_rec_num(&r, "burst_us_p50", bu_percentile(lat, n_lat, 50));
	bu_rec_num(&r, "burst_us_p99", bu_percentile(lat, n_lat, 99));
	bu_rec_num(&r, "burst_us_p999", bu_percentile(lat, n_lat, 99.9));
	bu_rec_num(&r, "wall_s", (double)wall / 1e9);
	bu_rec_num(&r, "gc_cpu_pct", (double)gc_cpu * 100.0 / (double)wall);
	bu_rec_str(&r, "gc_cpu_from", gc_from);
	if (vr->gc != GC_OFF) {
		bu_rec_num(&r, "gc_prestep_ms", (double)prestep_ns / 1e6);
		/* walks over every row that rebuilt the wheel while the
		 * workers ran (a ring overflowing while the collector held
		 * its lock): 0 in a steady state */
		bu_rec_int(&r, "gc_wheel_seeds", st.gc_wheel_seeds - seeds0);
	}
	/* online resizes completed while the workers ran (a new generation
	 * of rows: the wheel is seeded again for it) */
	bu_rec_int(&r, "resizes", st.resizes - resizes0);
	/* scaling against the 1-thread run of the same workload */
	snprintf(key, sizeof(key), "%s|%llu|%g|%d|%d|%d", work_name[vr->work],
		 (unsigned long long)sh->flows, vr->zipf, vr->gc, vr->frames, vr->acct);
	b = base_get(key);
	if (b && vr->threads == 1)
		b->mpps = mpps_sum;
	else if (b && b->mpps > 0 && !(rd && rd->base))
		/* (rounds: the median of the rounds' ratios, below) */
		bu_rec_num(&r, "scaling_vs_1t", mpps_sum / b->mpps);
	/* p99 against the collector-off run of the same workload */
	snprintf(key, sizeof(key), "p99|%s|%llu|%g|%u|%d|%d", work_name[vr->work],
		 (unsigned long long)sh->flows, vr->zipf, vr->threads, vr->frames, vr->acct);
	b = base_get(key);
	if (b && vr->gc == GC_OFF)
		b->p99_gc_off = bu_percentile(lat, n_lat, 99);
	else if (b && b->p99_gc_off > 0 && vr->gc != GC_ALT)
		bu_rec_num(&r, "p99_vs_gc_off", bu_percentile(lat, n_lat, 99) / b->p99_gc_off);
	if (vr->gc == GC_ALT) {
		size_t n_on, n_off;
		double on = lat_percentile_in(w, vr->threads, 1, 99, &n_on);
		double off = lat_percentile_in(w, vr->threads, 0, 99, &n_off);

		bu_rec_int(&r, "bursts_gc_on", n_on);
		bu_rec_int(&r, "bursts_gc_off", n_off);
		bu_rec_num(&r, "burst_us_p99_gc_on", on);
		bu_rec_num(&r, "burst_us_p99_gc_off", off);
		if (on > 0 && off > 0)
			bu_rec_num(&r, "p99_vs_gc_off", on / off);
	}
	if (rd) {
		double med, lo, hi;

		rd->total[rd->n] = mpps_sum;
		rd->p50[rd->n++] = CT_BURST_MAX / bu_percentile(lat, n_lat, 50);
		bu_spread(rd->p50, rd->n, &med, &lo, &hi);
		bu_rec_int(&r, "rounds", rd->n);
		bu_rec_num(&r, "mpps_p50_rounds_median", med);
		bu_rec_num(&r, "mpps_p50_rounds_best", hi);
		bu_rec_num(&r, "mpps_p50_rounds_worst", lo);
		if (rd->base && rd->base->n >= rd->n) {
			/* each round against the one-thread round run just
			 * before it: pairs that saw the same host */
			double ratio[16];

			for (unsigned k = 0; k < rd->n; k++)
				ratio[k] = rd->total[k] / rd->base->total[k];
			bu_spread(ratio, rd->n, &med, &lo, &hi);
			bu_rec_num(&r, "scaling_vs_1t", med);
			bu_rec_num(&r, "scaling_rounds_min", lo);
			bu_rec_num(&r, "scaling_rounds_max", hi);
		}
	}
	bu_rec_int(&r, "unexpected_verdicts", bad);
	for (unsigned i = 0; i < vr->threads; i++) {
		free(w[i].lat);
		free(w[i].lat_gc);
	}
	if (!rd || rd->n == rd->of)
		bu_rec_end(&r);
	free(lat);
	free(w);

	if (vr->work != W_EST) {
		/* tear the new connections down (batched, deferred) */
		struct ct_thread *thr = ct_thread_attach(sh->t);
		uint16_t id = NEW_ZONE;

		ct_ns_destroy(thr, &id, 1, bu_mono_ns(), CT_NS_SYNC);
		ct_thread_detach(thr);
	}
	return bad ? 1 : 0;
}

/* ---- what this machine gives several threads ---- */

struct spin_arg {
	pthread_barrier_t *bar;
	uint64_t iters, ns;
};

/* A loop of dependent integer operations on registers: no memory, no
 * shared line, so N copies scale by N on N free cores. */
static void *spin_main(void *arg)
{
	struct spin_arg *s = arg;
	uint64_t x = 1, t0;

	pthread_barrier_wait(s->bar);
	t0 = bu_mono_ns();
	for (uint64_t i = 0; i < s->iters; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
	}
	s->ns = bu_mono_ns() - t0;
	return NULL;
}

/* Work done per second by @n spinning threads together (iterations per
 * ns, summed over threads, each over its own wall time). */
static double spin_rate(unsigned n, uint64_t iters)
{
	pthread_t th[16];
	struct spin_arg sa[16];
	pthread_barrier_t bar;
	double rate = 0;

	pthread_barrier_init(&bar, NULL, n);
	for (unsigned i = 0; i < n; i++) {
		sa[i].bar = &bar;
		sa[i].iters = iters;
		pthread_create(&th[i], NULL, spin_main, &sa[i]);
	}
	for (unsigned i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		rate += (double)sa[i].iters / (double)sa[i].ns;
	}
	pthread_barrier_destroy(&bar);
	return rate;
}

/*
 * The scaling this machine allows @n threads that share nothing: @rounds
 * pairs of one spinning thread then @n, the median of the pairs' ratios.
 * A machine with @n free cores gives ~n; a shared virtual machine whose
 * vCPUs take turns on fewer host cores gives less, and no tracker can
 * scale past it there.  Printed as the "cpu-ceiling" variant.
 */
static void cpu_ceiling(const struct bench_args *a, unsigned n, unsigned rounds,
			uint64_t flows)
{
	double ratio[16], med, lo, hi;
	struct bu_rec r;
	char name[64], fl[32];

	for (unsigned k = 0; k < rounds; k++) {
		double one = spin_rate(1, 50000000), many = spin_rate(n, 50000000);

		ratio[k] = many / one;
	}
	bu_spread(ratio, rounds, &med, &lo, &hi);
	/* named after the table whose rounds it ran next to */
	flows_label(fl, sizeof(fl), flows);
	snprintf(name, sizeof(name), "cpu-ceiling-%ut-next-to-%s", n, fl);
	bu_rec_begin(&r, a, "throughput", name);
	bu_rec_str(&r, "work", "spin");
	bu_rec_int(&r, "flows", flows);
	bu_rec_int(&r, "threads", n);
	bu_rec_int(&r, "rounds", rounds);
	bu_rec_num(&r, "scaling_vs_1t", med);
	bu_rec_num(&r, "scaling_rounds_min", lo);
	bu_rec_num(&r, "scaling_rounds_max", hi);
	bu_rec_end(&r);
}

/* Variant @vr at each of @nt thread counts, @rounds times over, the
 * thread counts alternating (1, 2, 1, 2, ...): each thread count's record
 * (printed after its last round) has the rounds' rates and, against
 * one thread, the median of the ratios of rounds run back to back. */
static int run_rounds(const struct bench_args *a, struct shared *sh,
		      const struct variant *vr, const uint64_t *threads, unsigned nt,
		      unsigned rounds, uint64_t packets, uint64_t new_conns)
{
	struct rounds rd[16];
	int err = 0;

	memset(rd, 0, sizeof(rd));
	for (unsigned ti = 0; ti < nt; ti++) {
		rd[ti].of = rounds;
		rd[ti].base = threads[0] == 1 && ti ? &rd[0] : NULL;
	}
	for (unsigned k = 0; k < rounds && !err; k++)
		for (unsigned ti = 0; ti < nt && !err; ti++) {
			struct variant v = *vr;

			v.threads = (unsigned)threads[ti];
			err = run_variant(a, sh, &v, packets, new_conns, &rd[ti]);
		}
	/* what the machine allowed meanwhile, once per table */
	for (unsigned ti = 1; ti < nt && !err && !sh->ceiling_done; ti++)
		if (threads[0] == 1 && threads[ti] > 1)
			cpu_ceiling(a, (unsigned)threads[ti], rounds, sh->flows);
	sh->ceiling_done = true;
	return err;
}

int bench_throughput(const struct bench_args *a)
{
	bool quick = bu_flag(a, "quick");
	uint64_t flows[8], threads[16];
	unsigned nf, nt, pops[2], gcs[5], paths[2], works[3], accts[2], np, ng, npath, nw, na;
	uint64_t packets = bu_opt_u64(a, "packets", quick ? 2000000 : 8000000);
	uint64_t new_conns = bu_opt_u64(a, "new", quick ? 250000 : 1000000);
	double zipf_s = (double)bu_opt_u64(a, "zipf-s100", 100) / 100.0;
	unsigned rounds = (unsigned)bu_opt_u64(a, "rounds", quick ? 1 : 5);
	static const char *const pop_names[] = { "uniform", "zipf" };
	static const char *const path_names[] = { "parsed", "frames" };
	static const char *const acct_names[] = { "off", "on" };
	int err = 0;

	if (rounds < 1 || rounds > 16) {
		fprintf(stderr, "throughput: --rounds must be 1..16\n");
		return 2;
	}
	nf = bu_opt_list(a, "flows", 0, flows, 8);
	if (nf == 1 && flows[0] == 0) {
		flows[0] = 1000;
		flows[1] = 1000000;
		flows[2] = 10000000;
		nf = quick ? 2 : 3;
	}
	nt = bu_opt_list(a, "threads", 0, threads, 16);
	if (nt == 1 && threads[0] == 0) {
		threads[0] = 1;
		threads[1] = 2;
		nt = 2;
	}
	np = bu_opt_words(a, "pop", "uniform,zipf", pop_names, 2, pops, 2);
	ng = bu_opt_words(a, "gc", "off,due-time,wheel,alternating", gc_name, 5, gcs, 5);
	npath = bu_opt_words(a, "path", "parsed,frames", path_names, 2, paths, 2);
	nw = bu_opt_words(a, "work", "est,new-udp,new-tcp", work_name, 3, works, 3);
	na = bu_opt_words(a, "acct", "off,on", acct_names, 2, accts, 2);

	for (unsigned ai = 0; ai < na && !err; ai++)
	for (unsigned fi = 0; fi < nf && !err; fi++) {
		bool acct = accts[ai] == 1;
		struct ct_table_config cfg;
		struct shared sh;
		uint64_t maxt = 1, rows, t0, ok;
		struct ct_thread *thr;

		for (unsigned i = 0; i < nt; i++)
			if (threads[i] > maxt)
				maxt = threads[i];
		/* room for the flows and one variant's new connections at
		 * under half the resize threshold: no resize while timing */
		rows = (flows[fi] + new_conns * maxt) / 3 + 1024;
		memset(&sh, 0, sizeof(sh));
		bu_config(&cfg, rows, acct);
		sh.t = bu_table(&cfg);
		sh.flows = flows[fi];
		sh.new_next = (uint32_t)flows[fi] + 16;
		sh.cnt = calloc(flows[fi], sizeof(*sh.cnt));
		if (!sh.cnt) {
			fprintf(stderr, "throughput: no memory for %llu flows\n",
				(unsigned long long)flows[fi]);
			return 1;
		}
		thr = ct_thread_attach(sh.t);
		t0 = bu_mono_ns();
		ok = bu_fill_tcp(thr, 0, flows[fi], 0, t0);
		ct_thread_detach(thr);
		t0 = bu_mono_ns() - t0;
		for (uint64_t f = 0; f < flows[fi]; f++)
			sh.cnt[f] = 2;
		/* warm the arena: new-* variants then reuse chunks, as a
		 * long-running tracker does, instead of timing page faults */
		if ((nw > 1 || works[0] != W_EST) && !(acct && na > 1)) {
			struct ct_settings s;
			uint16_t id = NEW_ZONE;

			ct_table_get_settings(sh.t, &s);
			thr = ct_thread_attach(sh.t);
			ct_ns_create(sh.t, NEW_ZONE, &s);
			bu_fill_udp(thr, (uint32_t)flows[fi] + 16, new_conns * maxt,
				    NEW_ZONE, bu_mono_ns(), false);
			ct_ns_destroy(thr, &id, 1, bu_mono_ns(), CT_NS_SYNC);
			ct_thread_detach(thr);
		}
		bu_note(a, "throughput: %llu flows established in %.2f s (%llu ok), "
			"%llu rows, RSS %.0f MiB, counters %s", (unsigned long long)flows[fi],
			(double)t0 / 1e9, (unsigned long long)ok,
			(unsigned long long)ct_table_rows(sh.t),
			(double)bu_rss_bytes() / 1048576.0, acct ? "on" : "off");
		if (ok != flows[fi]) {
			fprintf(stderr, "throughput: fill failed\n");
			return 1;
		}
		for (unsigned wi = 0; wi < nw && !err; wi++)
			for (unsigned pa = 0; pa < npath && !err; pa++)
				for (unsigned pi = 0; pi < (works[wi] == W_EST ? np : 1) && !err; pi++)
					for (unsigned gi = 0; gi < ng && !err; gi++)
						for (unsigned ti = 0; ti < nt && !err; ti++) {
							struct variant vr = {
								(enum work)works[wi], flows[fi],
								works[wi] == W_EST && pops[pi] == 1 ? zipf_s : 0,
								(unsigned)threads[ti], (enum gcmode)gcs[gi],
								paths[pa] == 1, acct,
							};

							/* the frames path: one thread, no
							 * collector, uniform is enough */
							if (vr.frames && (vr.threads != threads[0] ||
									  vr.gc != gcs[0] ||
									  (vr.work == W_EST && pops[pi] != pops[0])))
								continue;
							/* counters on, next to the default
							 * (off, as the kernel's
							 * nf_conntrack_acct): established
							 * flows, one thread, no collector */
							if (vr.acct && na > 1 &&
							    (vr.work != W_EST || vr.threads != threads[0] ||
							     vr.gc != GC_OFF || vr.frames))
								continue;
							/* alternating: established flows,
							 * one thread count (the first) */
							if (vr.gc == GC_ALT && (vr.work != W_EST ||
										vr.threads != threads[0]))
								continue;
							/* the headline rows (established
							 * and one-packet flows, no
							 * collector) in rounds, every
							 * thread count's round k after
							 * another's */
							if (rounds > 1 && vr.work != W_NEW_TCP &&
							    vr.gc == GC_OFF && !vr.frames) {
								if (ti == 0)
									err = run_rounds(a, &sh, &vr, threads,
											 vr.acct && na > 1 ? 1 : nt,
											 rounds, packets, new_conns);
								continue;
							}
							err = run_variant(a, &sh, &vr, packets,
									  new_conns, NULL);
						}
		ct_table_destroy(sh.t);
		free(sh.cnt);
	}
	return err;
}
