/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * probe.c - ctrack-probe: fixed, single-threaded packet workloads for
 * counting instructions per packet under callgrind.
 *
 * Wall-clock figures on the shared two-core machine move by tens of per
 * cent from run to run; instruction counts do not.  Each workload does
 * its set-up (table, flows already created, frames) outside one noinline
 * function, probe_burst(), which parses a burst of frames and tracks it
 * with ct_process_burst() - the work a dataplane does per burst.
 * scripts/probe.sh runs a workload under `valgrind --tool=callgrind
 * --toggle-collect=probe_burst` and divides the instructions collected by
 * the packets the workload reports, so the figure is
 * parse + track instructions per packet, nothing else.
 *
 * Workloads (PKTS: packets measured; FLOWS: flows in the table):
 *  ovs [PKTS]           OVS's `test-conntrack benchmark 1 PKTS 32`: one
 *                       42-byte UDP frame, 32 copies per burst, default
 *                       table configuration (checksums checked, acct off
 *                       as in the kernel; OVS keeps no counters)
 *  ovs-change [PKTS]    the same with 32 flows (OVS's optional `1`)
 *  lookup [FLOWS PKTS]  the large-table lookups of `ctrack-bench ovs
 *                       large`: FLOWS UDP flows created and replied to,
 *                       then PKTS frames of random flows, random direction
 *  new-udp [PKTS]       PKTS one-packet UDP flows, each a new entry
 *  tcp-est [FLOWS PKTS] FLOWS established TCP flows, then PKTS in-window
 *                       segments (data and its ACK, round robin over the
 *                       flows) as Ethernet frames; checksums off, as in
 *                       `ctrack-bench throughput`
 *  unlink [FLOWS]       not packets: FLOWS one-packet UDP flows, then each
 *                       removed as a collector that already holds its due
 *                       entries in expiry order (a timer wheel) would:
 *                       lock the entry, check its expiry, unlink it from
 *                       its row, count it, queue its freeing - with the
 *                       entry 16 and its row 8 removals ahead prefetched.
 *                       The floor of such a design's cost per expired
 *                       entry in this table (gc-busy's ~575 instructions
 *                       include finding the due entries); measured in
 *                       probe_unlink(), "packets" are removals
 * It prints "packets N" and the verdict classes seen; with PROBE_TIME=1 in
 * the environment it also times the measured bursts (thread CPU time: the
 * clock reads add ~1 ns per packet).
 */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "support/frame.h"
#include "ovs/frames.h"
#include "base/state.h"
#include "table/conn_key.h"
#include "table/htab.h"
#include "table/member.h"
#include "table/reclaim.h"
#include "table/resize.h"
#include "table/wheel.h"

#define PROBE_NOW 1000000000000ull

/* Two functions of the same body must stay two (GCC would fold them,
 * and callgrind would then collect the set-up bursts too). */
#if defined(__clang__)
#define PROBE_NOINLINE __attribute__((noinline))
#else
#define PROBE_NOINLINE __attribute__((noinline, noipa))
#endif

static uint64_t by_cls[8];
/* PROBE_TIME=1: also the thread CPU time of the measured bursts (without
 * valgrind), for a quick look at what memory stalls add */
static bool timed;
static uint64_t cpu_ns;

/* Parse @n frames, track them as one burst. */
static inline void burst(struct ct_thread *thr, const uint8_t *const *frames,
			 const uint32_t *caplen, const uint32_t *wire, unsigned n,
			 ct_time_ns now, struct ct_packet *pk, struct ct_verdict *v)
{
	const struct ct_packet *pp[CT_BURST_MAX];

	for (unsigned j = 0; j < n; j++) {
		ct_parse_frame(&pk[j], CT_LINK_ETHERNET, frames[j], caplen[j],
			       wire[j], now);
		pp[j] = &pk[j];
	}
	ct_process_burst(thr, pp, n, now, v);
}

/* The measured bursts (callgrind collects inside this function only). */
PROBE_NOINLINE void probe_burst(struct ct_thread *thr,
					   const uint8_t *const *frames,
					   const uint32_t *caplen,
					   const uint32_t *wire, unsigned n,
					   ct_time_ns now, struct ct_packet *pk,
					   struct ct_verdict *v);
PROBE_NOINLINE void probe_burst(struct ct_thread *thr,
					   const uint8_t *const *frames,
					   const uint32_t *caplen,
					   const uint32_t *wire, unsigned n,
					   ct_time_ns now, struct ct_packet *pk,
					   struct ct_verdict *v)
{
	uint64_t t0 = timed ? bu_thread_cpu_ns() : 0;

	burst(thr, frames, caplen, wire, n, now, pk, v);
	if (timed)
		cpu_ns += bu_thread_cpu_ns() - t0;
}

/* The set-up bursts, not collected. */
static PROBE_NOINLINE void setup_burst(struct ct_thread *thr,
						  const uint8_t *const *frames,
						  const uint32_t *caplen,
						  const uint32_t *wire, unsigned n,
						  ct_time_ns now, struct ct_packet *pk,
						  struct ct_verdict *v)
{
	burst(thr, frames, caplen, wire, n, now, pk, v);
}

static void count(const struct ct_verdict *v, unsigned n)
{
	for (unsigned j = 0; j < n; j++)
		by_cls[v[j].cls & 7]++;
}

/* Frames in 64-byte slots, @n of them from @first, through probe_burst
 * in bursts of @b. */
static void run_slots(struct ct_thread *thr, const uint8_t *slots, size_t first,
		      size_t n, unsigned b, uint32_t len, bool measured)
{
	struct ct_packet pk[CT_BURST_MAX];
	struct ct_verdict v[CT_BURST_MAX];
	const uint8_t *fr[CT_BURST_MAX];
	uint32_t cl[CT_BURST_MAX];

	for (unsigned j = 0; j < CT_BURST_MAX; j++)
		cl[j] = len;
	for (size_t k = 0; k < n; k += b) {
		unsigned m = n - k < b ? (unsigned)(n - k) : b;

		for (unsigned j = 0; j < m; j++)
			fr[j] = slots + (first + k + j) * OVSB_SLOT;
		if (measured) {
			probe_burst(thr, fr, cl, cl, m, PROBE_NOW, pk, v);
			count(v, m);
		} else {
			setup_burst(thr, fr, cl, cl, m, PROBE_NOW, pk, v);
		}
	}
}

/* The measured removals of the unlink workload (callgrind collects here
 * too: scripts/probe.sh toggles on probe_*). */
PROBE_NOINLINE unsigned probe_unlink(struct ct_thread *thr, struct ct_conn **cs,
				     unsigned n, ct_time_ns now);
PROBE_NOINLINE unsigned probe_unlink(struct ct_thread *thr, struct ct_conn **cs,
				     unsigned n, ct_time_ns now)
{
	struct ct_htab *h = atomic_load_explicit(&thr->t->htab, memory_order_acquire);
	uint64_t t0 = timed ? bu_thread_cpu_ns() : 0;
	unsigned done = 0;

	for (unsigned i = 0; i < n; i++) {
		struct ct_conn *c = cs[i];
		bool due;

		if (i + 16 < n)
			__builtin_prefetch(cs[i + 16]);
		if (i + 8 < n)
			__builtin_prefetch(ct_htab_row(h, cs[i + 8]->hash));
		/* the entry's lock held across the unlink, as its contract
		 * asks (table/member.h) and as the tracker's kill does */
		ct_conn_lock(c);
		due = c->expires <= now;
		if (due && ct_table_unlink(thr, c)) {
			CT_CTR_INC(thr, expired);
			done++;
		}
		ct_conn_unlock(c);
	}
	if (timed)
		cpu_ns += bu_thread_cpu_ns() - t0;
	return done;
}

static uint64_t arg_u64(int argc, char **argv, int i, uint64_t def)
{
	return argc > i ? strtoull(argv[i], NULL, 0) : def;
}

int main(int argc, char **argv)
{
	const char *w = argc > 1 ? argv[1] : "ovs";
	struct ct_table_config cfg;
	struct ct_table *t;
	struct ct_thread *thr;
	uint64_t pkts = 0;

	timed = getenv("PROBE_TIME") != NULL;
	ct_table_config_default(&cfg);
	if (!strcmp(w, "tcp-est"))
		bu_config(&cfg, 1024, true);
	cfg.settings.max = 0;
	t = bu_table(&cfg);
	thr = ct_thread_attach(t);
	if (!thr)
		return 1;

	if (!strcmp(w, "ovs") || !strcmp(w, "ovs-change")) {
		bool change = !strcmp(w, "ovs-change");
		uint8_t slots[32 * OVSB_SLOT];

		pkts = arg_u64(argc, argv, 2, 200000);
		memset(slots, 0, sizeof(slots));
		for (unsigned j = 0; j < 32; j++)
			ovsb_bench_frame(slots + j * OVSB_SLOT, 0, j, change);
		for (uint64_t i = 0; i < pkts; i += 32)
			run_slots(thr, slots, 0, 32, 32, OVSB_UDP_FRAME_LEN, true);
		pkts = (pkts + 31) / 32 * 32;
	} else if (!strcmp(w, "lookup")) {
		uint32_t n = (uint32_t)arg_u64(argc, argv, 2, 100000);
		size_t l = arg_u64(argc, argv, 3, 200000);
		uint8_t *slots = malloc((size_t)2 * n * OVSB_SLOT);
		uint8_t *lk = malloc(l * OVSB_SLOT);

		if (!slots || !lk)
			return 1;
		ovsb_flow_frames(slots, n);
		ovsb_lookup_frames(lk, l, n);
		run_slots(thr, slots, 0, n, 32, OVSB_UDP_FRAME_LEN, false);
		run_slots(thr, slots, n, n, 32, OVSB_UDP_FRAME_LEN, false);
		run_slots(thr, lk, 0, l, 32, OVSB_UDP_FRAME_LEN, true);
		pkts = l;
	} else if (!strcmp(w, "new-udp")) {
		uint32_t n = (uint32_t)arg_u64(argc, argv, 2, 200000);
		uint8_t *slots = malloc((size_t)2 * n * OVSB_SLOT);

		if (!slots)
			return 1;
		ovsb_flow_frames(slots, n);
		run_slots(thr, slots, 0, n, 32, OVSB_UDP_FRAME_LEN, true);
		pkts = n;
	} else if (!strcmp(w, "unlink")) {
		uint32_t n = (uint32_t)arg_u64(argc, argv, 2, 200000);
		struct ct_conn **cs = malloc(n * sizeof(*cs));
		unsigned got = 0;

		if (!cs)
			return 1;
		bu_fill_udp(thr, 0, n, 0, PROBE_NOW, false);
		ct_read_lock(thr);
		for (uint32_t f = 0; f < n; f++) {
			struct ct_tuple tu, inv;
			enum ct_dir d;
			struct ct_conn *c;

			bu_flow_tuple(&tu, f, IPPROTO_UDP, 0);
			ct_tuple_invert(&tu, &inv);
			c = ct_table_find(thr, ct_hash_tuple(&t->key, &tu), &tu, &inv, &d);
			if (c)
				cs[got++] = c;
		}
		/* every flow is due an hour later */
		pkts = probe_unlink(thr, cs, got, PROBE_NOW + 3600 * 1000000000ull);
		ct_read_unlock(thr);
		if (pkts != n) {
			fprintf(stderr, "unlink: %llu of %u flows removed\n",
				(unsigned long long)pkts, n);
			return 1;
		}
		free(cs);
	} else if (!strcmp(w, "tcp-est")) {
		uint32_t flows = (uint32_t)arg_u64(argc, argv, 2, 1000);
		uint64_t l = arg_u64(argc, argv, 3, 200000);
		uint32_t *cnt = calloc(flows, sizeof(*cnt));
		static uint8_t fb[CT_BURST_MAX][TS_FRAME_HDR_MAX];
		const uint8_t *fr[CT_BURST_MAX];
		uint32_t cl[CT_BURST_MAX], wi[CT_BURST_MAX];
		struct ct_packet pk[CT_BURST_MAX];
		struct ct_verdict v[CT_BURST_MAX];
		uint32_t f = 0;

		if (!cnt || bu_fill_tcp(thr, 0, flows, 0, PROBE_NOW) != flows)
			return 1;
		for (uint64_t done = 0; done < l; done += CT_BURST_MAX) {
			unsigned m = l - done < CT_BURST_MAX ? (unsigned)(l - done)
							     : CT_BURST_MAX;

			for (unsigned j = 0; j < m; j++) {
				struct ct_tuple tu;
				struct ct_packet p;

				bu_flow_tuple(&tu, f, IPPROTO_TCP, 0);
				/* bu_fill_tcp sent the first data/ACK pair */
				bu_tcp_established(&p, &tu, 2 + cnt[f]++);
				cl[j] = ts_frame(fb[j], &p, false, &wi[j]);
				fr[j] = fb[j];
				if (++f == flows)
					f = 0;
			}
			probe_burst(thr, fr, cl, wi, m, PROBE_NOW, pk, v);
			count(v, m);
		}
		pkts = l;
	} else {
		fprintf(stderr, "usage: ctrack-probe ovs|ovs-change|lookup|new-udp|tcp-est [N...]\n");
		return 2;
	}
	printf("packets %llu\n", (unsigned long long)pkts);
	if (timed)
		printf("ns_per_packet %.1f (thread CPU, parse + track)\n",
		       (double)cpu_ns / (double)pkts);
	for (unsigned c = 0; c < 8; c++)
		if (by_cls[c])
			printf("verdict %u: %llu\n", c, (unsigned long long)by_cls[c]);
	ct_thread_detach(thr);
	ct_table_destroy(t);
	return 0;
}
