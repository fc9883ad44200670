/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ovs_ct_harness.c - the OVS side of the large-table comparisons.
 *
 * Not part of ctrack's build: bench/ovs/build-ovs.sh compiles it at run
 * time inside the cache directory where Open vSwitch was built, against
 * that build's headers and lib/.libs/libopenvswitch.a.  It drives OVS's
 * userspace conntrack exactly as ctrack-bench drives ctrack in
 * bench_ovs.c: the same frames (bench/ovs/frames.h), in the same order,
 * 32 per call, one thread, a fixed `now`.
 *
 * Usage: ovs-ct-harness large N L
 *   N flows, L established lookups.  Prints "key value" lines:
 *   frames_fnv, insert_mpps, reply_mpps, bytes_per_conn, lookup_mpps,
 *   drain_ms, flush_zone_ms (thread CPU time), the same with _wall_, and
 *   the entry counts after each phase, which ctrack-bench checks.
 * Usage: ovs-ct-harness nat N L [growth|steady plain|snat]
 *   ctrack-bench nat's peer: the same N flows and L lookups through
 *   ct(commit) (new_plain_mpps, est_plain_mpps) and through
 *   ct(commit,nat(src=100.64.0.0-100.64.0.255)) (new_snat_mpps,
 *   est_snat_mpps: conntrack_execute with the NAT action, which rewrites
 *   the packets), the replies built from the translated frames as a
 *   server would answer them; bytes_per_conn_* and checks.  With a
 *   regime and a kind, that one table alone, on a fresh conntrack
 *   (growth) or on one kept at N entries that come and go (steady,
 *   frames.h); without, both tables in growth, one after the other.
 *
 * Why conntrack.c is included rather than linked: OVS expires entries only
 * from its own cleanup thread, which reads the wall clock; the function it
 * runs, conntrack_clean(), is static.  Compiling conntrack.c into this
 * file gives the harness that very function (OVS's code, from the OVS
 * tree being measured, not a copy) so that draining can be timed with a
 * `now` one hour ahead, as ctrack's collector is.  The linker then takes
 * conntrack's symbols from here and does not pull lib/conntrack.o.
 */
#include "lib/conntrack.c"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "frames.h"

#define HB 32   /* packets per conntrack_execute() call, as ctrack's burst */

/* The phases are timed in CPU time of this (the only working) thread, as
 * ctrack's side is: the machine is shared, and time spent descheduled
 * would otherwise land on whichever side happened to be running. */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long rss_bytes(void)
{
	long pages = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &res) != 2)
			res = 0;
		fclose(f);
	}
	return res * sysconf(_SC_PAGESIZE);
}

static struct dp_packet pk[HB];

/* Send the frames of slots first..first+n-1 through conntrack in zone @zone, HB at a time.  Each packet is
 * re-pointed at its frame and its conntrack metadata cleared, which is all
 * OVS needs (the offsets were set once: every frame is Ethernet + IPv4 +
 * UDP); the work timed is conntrack_execute(). */
static void run(struct conntrack *ct, uint8_t *slots, size_t first, size_t n,
		uint16_t zone, long long now)
{
	struct dp_packet_batch b;

	for (size_t k = 0; k < n; k += HB) {
		size_t m = n - k < HB ? n - k : HB;

		dp_packet_batch_init(&b);
		for (size_t j = 0; j < m; j++) {
			uint8_t *f = slots + (first + k + j) * OVSB_SLOT;

			dp_packet_set_base(&pk[j], f);
			dp_packet_set_data(&pk[j], f);
			conntrack_clear(&pk[j]);
			dp_packet_batch_add(&b, &pk[j]);
		}
		conntrack_execute(ct, &b, htons(ETH_TYPE_IP), false, true, zone,
				  NULL, NULL, 0, 0, NULL, NULL, now, 0);
	}
}

static int large(uint32_t n, size_t l)
{
	uint8_t *slots = malloc((size_t)2 * n * OVSB_SLOT);
	uint8_t *lk = malloc(l * OVSB_SLOT);
	struct conntrack *ct;
	long long now = time_msec();
	uint64_t h = OVSB_FNV_INIT;
	uint16_t z1 = 1;
	long rss0, rss1;
	unsigned n_est = 0, n_other = 0;
	double t0, w0;

	if (!slots || !lk) {
		fprintf(stderr, "ovs-ct-harness: out of memory\n");
		return 1;
	}
	ovsb_flow_frames(slots, n);
	ovsb_lookup_frames(lk, l, n);
	h = ovsb_fnv(h, slots, (size_t)2 * n * OVSB_SLOT);
	h = ovsb_fnv(h, lk, l * OVSB_SLOT);
	printf("frames_fnv %016llx\n", (unsigned long long)h);

	for (int j = 0; j < HB; j++) {
		dp_packet_use_const(&pk[j], slots, OVSB_UDP_FRAME_LEN);
		pk[j].l3_ofs = 14;
		pk[j].l4_ofs = 34;
	}

	ct = conntrack_init();
	conntrack_set_maxconns(ct, 2 * n + 1024);
	rss0 = rss_bytes();

	t0 = cpu_s();
	w0 = wall_s();
	run(ct, slots, 0, n, 0, now);
	printf("insert_mpps %.4f\n", n / (cpu_s() - t0) / 1e6);
	printf("insert_wall_mpps %.4f\n", n / (wall_s() - w0) / 1e6);
	printf("conns_after_insert %u\n", atomic_count_get(&ct->n_conn));

	t0 = cpu_s();
	w0 = wall_s();
	run(ct, slots, n, n, 0, now);
	printf("reply_mpps %.4f\n", n / (cpu_s() - t0) / 1e6);
	printf("reply_wall_mpps %.4f\n", n / (wall_s() - w0) / 1e6);
	rss1 = rss_bytes();
	printf("bytes_per_conn %.1f\n", (double)(rss1 - rss0) / n);

	t0 = cpu_s();
	w0 = wall_s();
	run(ct, lk, 0, l, 0, now);
	printf("lookup_mpps %.4f\n", l / (cpu_s() - t0) / 1e6);
	printf("lookup_wall_mpps %.4f\n", l / (wall_s() - w0) / 1e6);
	/* every lookup must have hit an established (reply-seen) entry */
	for (int j = 0; j < HB && j < (int)l; j++) {
		if (pk[j].md.ct_state & CS_ESTABLISHED)
			n_est++;
		else
			n_other++;
	}
	printf("lookup_check_established %u other %u\n", n_est, n_other);

	/* drain: everything is expired one hour later */
	t0 = cpu_s();
	w0 = wall_s();
	for (int it = 0; atomic_count_get(&ct->n_conn) && it < 1000000; it++)
		conntrack_clean(ct, now + 3600 * 1000LL);
	printf("drain_ms %.3f\n", (cpu_s() - t0) * 1e3);
	printf("drain_wall_ms %.3f\n", (wall_s() - w0) * 1e3);
	printf("conns_after_drain %u\n", atomic_count_get(&ct->n_conn));
	ovsrcu_quiesce();

	/* zone flush: half the flows in zone 1, half in zone 2 */
	run(ct, slots, 0, n / 2, 1, now);
	run(ct, slots, n / 2, n - n / 2, 2, now);
	printf("conns_before_flush %u\n", atomic_count_get(&ct->n_conn));
	t0 = cpu_s();
	w0 = wall_s();
	conntrack_flush(ct, &z1);
	printf("flush_zone_ms %.3f\n", (cpu_s() - t0) * 1e3);
	printf("flush_zone_wall_ms %.3f\n", (wall_s() - w0) * 1e3);
	printf("conns_after_flush %u\n", atomic_count_get(&ct->n_conn));

	conntrack_destroy(ct);
	free(lk);
	free(slots);
	return 0;
}

/* run() with a NAT action (NULL: none), as ct(commit,nat(...)) */
static void run_nat(struct conntrack *ct, uint8_t *slots, size_t n,
		    const struct nat_action_info_t *nat, long long now)
{
	struct dp_packet_batch b;

	for (size_t k = 0; k < n; k += HB) {
		size_t m = n - k < HB ? n - k : HB;

		dp_packet_batch_init(&b);
		for (size_t j = 0; j < m; j++) {
			uint8_t *f = slots + (k + j) * OVSB_SLOT;

			dp_packet_set_base(&pk[j], f);
			dp_packet_set_data(&pk[j], f);
			conntrack_clear(&pk[j]);
			dp_packet_batch_add(&b, &pk[j]);
		}
		conntrack_execute(ct, &b, htons(ETH_TYPE_IP), false, true, 0,
				  NULL, NULL, 0, 0, NULL, nat, now, 0);
	}
}

/* Remove the connections of the original frames @slots[first..first+m)
 * (pristine: as the clients sent them) as conntrack_flush_tuple() does,
 * with the harness's fixed `now` rather than the wall clock, and let the
 * RCU thread free them; returns how many were removed. */
static unsigned ovs_remove(struct conntrack *ct, const uint8_t *slots, size_t first, size_t m,
			   long long now)
{
	unsigned k = 0;

	for (size_t j = first; j < first + m; j++) {
		const uint8_t *f = slots + j * OVSB_SLOT;
		struct ct_dpif_tuple t;
		struct conn_key key;
		struct conn *conn = NULL;

		memset(&t, 0, sizeof t);
		t.l3_type = AF_INET;
		t.ip_proto = IPPROTO_UDP;
		memcpy(&t.src.ip, f + 26, 4);
		memcpy(&t.dst.ip, f + 30, 4);
		memcpy(&t.src_port, f + 34, 2);
		memcpy(&t.dst_port, f + 36, 2);
		memset(&key, 0, sizeof key);
		tuple_to_conn_key(&t, 0, &key);
		conn_lookup(ct, &key, now, &conn, NULL);
		if (conn && conn->conn_type == CT_CONN_TYPE_DEFAULT) {
			conn_clean(ct, conn);
			k++;
		}
	}
	ovsrcu_quiesce();
	return k;
}

/*
 * OVS's cleanup thread expires entries by the wall clock, while the
 * phases run at the harness's fixed `now`: once a run outlasts the 30 s
 * UDP timeouts (a steady run on a loaded machine did: 110 of 1004 replies
 * still translated), entries vanish under the lookups.  ctrack's side runs
 * without its collector, so OVS's side runs without its cleaner: stopped
 * (the latch it waits on, as conntrack_destroy() stops it) after
 * conntrack_init(), and a new one started before conntrack_destroy(),
 * which stops it again.
 */
static void cleaner_pause(struct conntrack *ct)
{
	latch_set(&ct->clean_thread_exit);
	pthread_join(ct->clean_thread, NULL);
	latch_poll(&ct->clean_thread_exit);
}

static void cleaner_resume(struct conntrack *ct)
{
	ct->clean_thread = ovs_thread_create("ct_clean", clean_thread_main, ct);
}

/*
 * One table of ctrack-bench nat's peer: ct(commit) (@snat false) or
 * ct(commit,nat(src=100.64.0.0-100.64.0.255)), in one of two regimes:
 * growth (a fresh conntrack, as a tracker just started) or steady (the
 * table first filled with N other flows, which are then removed
 * OVSB_STEADY_CHUNK at a time, untimed, as the timed new ones arrive:
 * bench/ovs/frames.h).  One table per process, so that both kinds start
 * from the same memory state.  Prints new_<kind>_mpps, est_<kind>_mpps,
 * bytes_per_conn_<kind> (growth), conns_<kind> and the checks.
 */
static int nat_one(uint32_t n, size_t l, bool steady, bool snat)
{
	uint8_t *orig = malloc((size_t)2 * n * OVSB_SLOT);
	uint8_t *work = malloc((size_t)2 * n * OVSB_SLOT);
	uint8_t *fill = steady ? malloc((size_t)2 * n * OVSB_SLOT) : NULL;
	uint8_t *fillw = steady ? malloc((size_t)n * OVSB_SLOT) : NULL;
	uint8_t *lk = malloc(l * OVSB_SLOT);
	const char *kind = snat ? "snat" : "plain";
	struct nat_action_info_t nat, *np = snat ? &nat : NULL;
	struct conntrack *ct;
	long long now = time_msec();
	unsigned est = 0, xl = 0, removed = 0;
	uint64_t s = 0x63747261636b2121ull;
	long rss0, rss1;
	double t0, tnew = 0;

	if (!orig || !work || !lk || (steady && (!fill || !fillw))) {
		fprintf(stderr, "ovs-ct-harness: out of memory\n");
		return 1;
	}
	ovsb_flow_frames(orig, n);
	if (steady)
		ovsb_flow_frames_at(fill, n, n);
	for (int j = 0; j < HB; j++) {
		dp_packet_use_const(&pk[j], orig, OVSB_UDP_FRAME_LEN);
		pk[j].l3_ofs = 14;
		pk[j].l4_ofs = 34;
	}
	memset(&nat, 0, sizeof(nat));
	nat.min_addr.ipv4 = htonl(OVSB_NAT_MIN);
	nat.max_addr.ipv4 = htonl(OVSB_NAT_MAX);
	nat.nat_action = NAT_ACTION_SRC;

	ct = conntrack_init();
	conntrack_set_maxconns(ct, 4 * n + 1024);
	cleaner_pause(ct);
	memcpy(work, orig, (size_t)2 * n * OVSB_SLOT);
	if (steady) {
		memcpy(fillw, fill, (size_t)n * OVSB_SLOT);
		run_nat(ct, fillw, n, np, now);
		printf("conns_fill_%s %u\n", kind, atomic_count_get(&ct->n_conn));
		for (size_t k = 0; k < n; k += OVSB_STEADY_CHUNK) {
			size_t m = n - k < OVSB_STEADY_CHUNK ? n - k : OVSB_STEADY_CHUNK;

			removed += ovs_remove(ct, fill, k, m, now);
			t0 = cpu_s();
			run_nat(ct, work + k * OVSB_SLOT, m, np, now);
			tnew += cpu_s() - t0;
		}
		printf("removed_fill_%s %u\n", kind, removed);
	} else {
		rss0 = rss_bytes();
		t0 = cpu_s();
		run_nat(ct, work, n, np, now);
		tnew = cpu_s() - t0;
	}
	printf("new_%s_mpps %.4f\n", kind, n / tnew / 1e6);
	/* the server's answers to what it received (the translated frames) */
	for (uint32_t i = 0; snat && i < n; i++)
		ovsb_reply_frame(work + ((size_t)n + i) * OVSB_SLOT, work + (size_t)i * OVSB_SLOT);
	run_nat(ct, work + (size_t)n * OVSB_SLOT, n, np, now);
	if (!steady) {
		rss1 = rss_bytes();
		printf("bytes_per_conn_%s %.1f\n", kind, (double)(rss1 - rss0) / n);
	}
	printf("conns_%s %u\n", kind, atomic_count_get(&ct->n_conn));
	if (snat) {
		/* the replies were translated back: to the clients' addresses */
		for (uint32_t i = 0; i < n; i += 997)
			xl += !memcmp(work + ((size_t)n + i) * OVSB_SLOT + 30,
				      orig + (size_t)i * OVSB_SLOT + 26, 4);
		printf("replies_translated_back %u of %u\n", xl, (n + 996) / 997);
		ovsb_reply_frames_pristine(work + (size_t)n * OVSB_SLOT, work, n);
	}
	ovsb_nat_lookup_frames(lk, l, n, orig, (snat ? work : orig) + (size_t)n * OVSB_SLOT, &s);
	t0 = cpu_s();
	run_nat(ct, lk, l, np, now);
	printf("est_%s_mpps %.4f\n", kind, l / (cpu_s() - t0) / 1e6);
	for (int j = 0; j < HB && j < (int)l; j++)
		est += !!(pk[j].md.ct_state & CS_ESTABLISHED);
	printf("est_check_established %u of %d\n", est, HB < (int)l ? HB : (int)l);
	cleaner_resume(ct);
	conntrack_destroy(ct);
	ovsrcu_quiesce();
	free(lk);
	free(fillw);
	free(fill);
	free(work);
	free(orig);
	return 0;
}

int main(int argc, char **argv)
{
	set_program_name(argv[0]);
	vlog_set_levels(NULL, VLF_ANY_DESTINATION, VLL_EMER);
	if (argc == 4 && !strcmp(argv[1], "large"))
		return large((uint32_t)strtoul(argv[2], NULL, 0),
			     (size_t)strtoull(argv[3], NULL, 0));
	/* nat N L: both tables, growth, in one process (the old form) */
	if (argc == 4 && !strcmp(argv[1], "nat"))
		return nat_one((uint32_t)strtoul(argv[2], NULL, 0),
			       (size_t)strtoull(argv[3], NULL, 0), false, false) ||
		       nat_one((uint32_t)strtoul(argv[2], NULL, 0),
			       (size_t)strtoull(argv[3], NULL, 0), false, true);
	if (argc == 6 && !strcmp(argv[1], "nat") &&
	    (!strcmp(argv[4], "growth") || !strcmp(argv[4], "steady")) &&
	    (!strcmp(argv[5], "plain") || !strcmp(argv[5], "snat"))) {
		printf("regime %s\n", argv[4]);
		return nat_one((uint32_t)strtoul(argv[2], NULL, 0),
			       (size_t)strtoull(argv[3], NULL, 0), !strcmp(argv[4], "steady"),
			       !strcmp(argv[5], "snat"));
	}
	fprintf(stderr, "usage: ovs-ct-harness large N L | nat N L [growth|steady plain|snat]\n");
	return 2;
}
