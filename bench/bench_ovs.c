/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_ovs.c - ctrack side by side with Open vSwitch's userspace conntrack,
 * the kernel and the flow tools: the driver (options, workloads in turn);
 * each peer has a file of its own (peer.h).
 *
 * `ctrack-bench ovs [--json] [WORKLOAD...] [OPTIONS]` builds the peer on
 * first use (bench/ovs/build-ovs.sh: Debian's openvswitch-source, built in
 * a cache directory outside the repository) and runs each workload with
 * both trackers, alternating OVS and ctrack runs in the same invocation
 * and reporting medians, because this machine has two cores and its speed
 * drifts: figures taken minutes apart do not compare.
 *
 * Workloads (default: all; docs/peers.md says what each one equalises):
 *  bench  OVS's own `ovstest test-conntrack benchmark T N B [1]`.  ctrack
 *         runs identical work: T threads, each with its own batch of B
 *         frames built byte for byte as OVS builds them (checked against
 *         the hex in OVS's tests/test-conntrack.c), sent N/B times each,
 *         through ct_parse_frame + ct_process_burst, with a fixed `now`.
 *  large  100k / 1M / 3M UDP flows (frames from bench/ovs/frames.h, same
 *         bytes and order on both sides, 32 per call, one thread): insert
 *         rate, reply rate, memory per connection (RSS delta / flows),
 *         established lookups in random order, draining all expired
 *         entries, flushing a zone holding half the table.  OVS side: the
 *         harness bench/ovs/ovs_ct_harness.c linked against the OVS build.
 *  pcap   the capture path: `ovstest test-conntrack pcap FILE [32]` against
 *         `ctrack read --no-table FILE`, whole processes, on the Ethernet
 *         pcaps of ../shared/pcaps (concatenated) and on a synthetic
 *         capture generated into the cache directory.
 *  kernel nf_conntrack in a router namespace (bench/ovs/kernel-ns.sh): the
 *         cost of a new connection (one-packet UDP flows replayed through
 *         it, with and without conntrack), `conntrack -L` and `-F`.
 *  flows  `softflowd -r` and `nfpcapd -r` against `ctrack read`.
 *
 * Settings.  ctrack runs with the library's defaults, which are a fresh
 * kernel namespace's: checksums verified (OVS verifies them too) and no
 * per-connection packet and byte counters (nf_conntrack_acct = 0; OVS's
 * conntrack keeps none).  --acct turns ctrack's counters on for bench and
 * large (the rows say acct), so that the cost of the extra work is
 * measured too; the capture path runs the `ctrack` tool, which keeps
 * counters by default.
 *
 * Timing.  The machine is small and shared, so wherever both sides can be
 * timed the same way in CPU time (the working thread's, or the whole
 * process's with all its threads) they are, and the wall-clock figures go
 * into the rows' parameters; only the kernel's new-connection cost, a
 * difference of two replay times, is wall clock.
 *
 * Every measurement runs in a fresh process (fork for ctrack, exec for
 * the peers), so that one run's memory and caches do not leak into the
 * next and RSS deltas are the run's own.
 */
#include "peer.h"

/* ------------------------------------------------------------- driver */

static void usage(void)
{
	fprintf(stderr,
		"usage: ctrack-bench ovs [--json] [WORKLOAD...] [OPTIONS]\n"
		"workloads: bench large pcap kernel flows (default: all)\n"
		"options:\n"
		"  --repeat N        alternating runs per comparison (median; default 5)\n"
		"  --pkts N          packets per thread for bench (default 4000000)\n"
		"  --sizes A,B,...   flows for large (default 100000,1000000,3000000)\n"
		"  --ksizes A,B,...  table sizes for kernel (default 100000,250000; the\n"
		"                    kernel's nf_conntrack_max, 262144, is left alone)\n"
		"  --synth N         TCP connections in the synthetic capture (default 100000)\n"
		"  --quick           one run each, smaller sizes (a smoke test)\n"
		"  --acct            ctrack keeps packet and byte counters (bench, large;\n"
		"                    default off, the kernel's default: OVS keeps none)\n"
		"environment: CTRACK_OVS_CACHE, CTRACK_OVS_TARBALL, CTRACK_SOURCE_DIR,\n"
		"  CTRACK_PCAPS (see bench/ovs/build-ovs.sh)\n");
}

int bench_ovs(const struct bench_args *a)
{
	struct ovsb_env e = { .json = a->json, .repeat = 0 };
	bool do_bench = false, do_large = false, do_pcap = false, do_kernel = false;
	bool do_flows = false;
	uint32_t ksizes[8] = { 100000, 250000 };
	unsigned nksizes = 2;
	unsigned long pkts = 4000000;
	uint32_t sizes[8] = { 100000, 1000000, 3000000 }, synth = 100000;
	unsigned nsizes = 3;
	uint8_t want[64], got[OVSB_SLOT];
	int plen;

	for (int i = 0; i < a->argc; i++) {
		const char *s = a->argv[i];
		const char *next = i + 1 < a->argc ? a->argv[i + 1] : NULL;

		if (!strcmp(s, "bench"))
			do_bench = true;
		else if (!strcmp(s, "large"))
			do_large = true;
		else if (!strcmp(s, "pcap"))
			do_pcap = true;
		else if (!strcmp(s, "kernel"))
			do_kernel = true;
		else if (!strcmp(s, "flows"))
			do_flows = true;
		else if (!strcmp(s, "all"))
			do_bench = do_large = do_pcap = do_kernel = do_flows = true;
		else if (!strcmp(s, "--quick"))
			e.quick = true;
		else if (!strcmp(s, "--acct"))
			ovsb_acct = true;
		else if (!strcmp(s, "--repeat") && next) {
			e.repeat = atoi(next);
			i++;
		} else if (!strcmp(s, "--pkts") && next) {
			pkts = strtoul(next, NULL, 0);
			i++;
		} else if (!strcmp(s, "--synth") && next) {
			synth = (uint32_t)strtoul(next, NULL, 0);
			i++;
		} else if ((!strcmp(s, "--sizes") || !strcmp(s, "--ksizes")) && next) {
			char *save = NULL, buf[128];
			uint32_t *sz = s[2] == 's' ? sizes : ksizes;
			unsigned *ns = s[2] == 's' ? &nsizes : &nksizes;

			snprintf(buf, sizeof(buf), "%s", next);
			*ns = 0;
			for (char *tok = strtok_r(buf, ",", &save); tok && *ns < 8;
			     tok = strtok_r(NULL, ",", &save))
				sz[(*ns)++] = (uint32_t)strtoul(tok, NULL, 0);
			i++;
		} else {
			usage();
			return 1;
		}
	}
	if (!do_bench && !do_large && !do_pcap && !do_kernel && !do_flows)
		do_bench = do_large = do_pcap = do_kernel = do_flows = true;
	if (e.quick) {
		pkts = pkts > 1000000 ? 1000000 : pkts;
		if (nsizes == 3 && sizes[2] == 3000000) {
			sizes[0] = 100000;
			nsizes = 1;
		}
		synth = synth > 20000 ? 20000 : synth;
		if (nksizes == 2 && ksizes[1] == 250000)
			nksizes = 1;
	}
	if (e.repeat < 0 || e.repeat > OVSB_MAX_REPEAT || find_paths(&e) || build_peer(&e))
		return 1;

	/* the frames of OVS's benchmark, byte for byte */
	plen = ovs_bench_payload(&e, want, sizeof(want));
	ovsb_bench_frame(got, 0, 0, false);
	if (plen != (int)OVSB_UDP_FRAME_LEN || memcmp(want, got, OVSB_UDP_FRAME_LEN)) {
		fprintf(stderr, "ctrack-bench: the frame of OVS's benchmark is not the one "
			"frames.h builds (OVS changed?); refusing to compare\n");
		return 1;
	}
	fprintf(stderr, "ctrack-bench: OVS at %s; benchmark frame matches OVS's byte for byte\n",
		e.cache);

	if (do_bench) {
		int keep = e.repeat;

		e.repeat = keep ? keep : (e.quick ? 1 : 5);
		wl_bench(&e, 1, false, pkts);
		wl_bench(&e, 2, false, pkts);
		wl_bench(&e, 1, true, pkts);
		wl_bench(&e, 2, true, pkts);
		e.repeat = keep;
	}
	if (do_large) {
		int keep = e.repeat;

		e.repeat = keep ? keep : (e.quick ? 1 : 5);
		for (unsigned i = 0; i < nsizes; i++)
			wl_large(&e, sizes[i], sizes[i] > 2000000 ? sizes[i] : 2000000);
		e.repeat = keep;
	}
	if (do_pcap) {
		int keep = e.repeat;

		e.repeat = keep ? keep : (e.quick ? 1 : 5);
		wl_pcap(&e, synth);
		e.repeat = keep;
	}
	if (do_kernel) {
		int keep = e.repeat;

		e.repeat = keep ? keep : (e.quick ? 1 : 5);
		wl_kernel(&e, ksizes, nksizes);
		e.repeat = keep;
	}
	if (do_flows) {
		int keep = e.repeat;

		e.repeat = keep ? keep : (e.quick ? 1 : 5);
		wl_flows(&e, synth);
		e.repeat = keep;
	}
	return 0;
}
