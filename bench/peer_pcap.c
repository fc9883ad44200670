/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_pcap.c - the capture path against OVS's `test-conntrack pcap`
 * (workload pcap), and the captures it needs: the shared pcaps
 * concatenated, a synthetic capture.
 */
#include "peer.h"

/* ----------------------------------------- workload 3: the capture path */

/* Classic pcap only (OVS's reader knows no pcapng); returns the number of
 * records, or -1 when not a pcap OVS can read (Ethernet or Linux SLL). */
long pcap_count(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t gh[24], rh[16];
	uint32_t magic, link;
	bool swap;
	long n = 0;

	if (!f)
		return -1;
	if (fread(gh, 1, 24, f) != 24) {
		fclose(f);
		return -1;
	}
	memcpy(&magic, gh, 4);
	swap = magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u;
	if (!swap && magic != 0xa1b2c3d4u && magic != 0xa1b23c4du) {
		fclose(f);
		return -1;
	}
	memcpy(&link, gh + 20, 4);
	if (swap)
		link = __builtin_bswap32(link);
	if (link != 1 && link != 113) {
		fclose(f);
		return -1;
	}
	while (fread(rh, 1, 16, f) == 16) {
		uint32_t incl;

		memcpy(&incl, rh + 8, 4);
		if (swap)
			incl = __builtin_bswap32(incl);
		if (incl > 262144 || fseek(f, incl, SEEK_CUR))
			break;
		n++;
	}
	fclose(f);
	return n;
}

static void pcap_put32(FILE *f, uint32_t v)
{
	fwrite(&v, 4, 1, f);
}

void pcap_header(FILE *f)
{
	pcap_put32(f, 0xa1b2c3d4u);
	pcap_put32(f, 0x00040002u);  /* version 2.4 (two little-endian u16) */
	pcap_put32(f, 0);
	pcap_put32(f, 0);
	pcap_put32(f, 262144);
	pcap_put32(f, 1);            /* Ethernet */
}

void pcap_record(FILE *f, uint64_t ts_us, const uint8_t *frame, unsigned len)
{
	pcap_put32(f, (uint32_t)(ts_us / 1000000));
	pcap_put32(f, (uint32_t)(ts_us % 1000000));
	pcap_put32(f, len);
	pcap_put32(f, len);
	fwrite(frame, 1, len, f);
}

/*
 * The synthetic capture: @conns TCP connections (handshake, a request and
 * a response of 64 bytes with their ACKs, FIN both ways, final ACK: ten
 * packets) and as many UDP request/response pairs, 256 flows interleaved
 * at a time, 10 us apart.  Every checksum is right and every sequence
 * number in window, so neither tracker has a reason to reject a packet.
 */
int make_synth(const char *path, uint32_t conns)
{
	char tmp[PATH_MAX * 2];
	uint8_t fr[256];
	uint64_t ts = 1700000000ull * 1000000ull;
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "wb");
	if (!f)
		return -1;
	pcap_header(f);
	for (uint32_t base = 0; base < conns; base += 256) {
		uint32_t k = conns - base < 256 ? conns - base : 256;

		for (int step = 0; step < 12; step++) {
			for (uint32_t j = 0; j < k; j++) {
				uint32_t i = base + j;
				uint32_t cli = 0x0a000001u + (i >> 12), srv = 0xc0a80002u;
				uint16_t cp = (uint16_t)(1024 + (i & 4095)), sp = 80;
				uint32_t cs = 1000u + i * 7919u, ss = 5000u + i * 104729u;
				unsigned len = 0;

				switch (step) {
				case 0: len = ovsb_tcp_frame(fr, 10, 9, cli, srv, cp, sp, cs, 0, 0x02, 64240, 0); break;
				case 1: len = ovsb_tcp_frame(fr, 9, 10, srv, cli, sp, cp, ss, cs + 1, 0x12, 65160, 0); break;
				case 2: len = ovsb_tcp_frame(fr, 10, 9, cli, srv, cp, sp, cs + 1, ss + 1, 0x10, 502, 0); break;
				case 3: len = ovsb_tcp_frame(fr, 10, 9, cli, srv, cp, sp, cs + 1, ss + 1, 0x18, 502, 64); break;
				case 4: len = ovsb_tcp_frame(fr, 9, 10, srv, cli, sp, cp, ss + 1, cs + 65, 0x10, 509, 0); break;
				case 5: len = ovsb_tcp_frame(fr, 9, 10, srv, cli, sp, cp, ss + 1, cs + 65, 0x18, 509, 64); break;
				case 6: len = ovsb_tcp_frame(fr, 10, 9, cli, srv, cp, sp, cs + 65, ss + 65, 0x10, 502, 0); break;
				case 7: len = ovsb_tcp_frame(fr, 10, 9, cli, srv, cp, sp, cs + 65, ss + 65, 0x11, 502, 0); break;
				case 8: len = ovsb_tcp_frame(fr, 9, 10, srv, cli, sp, cp, ss + 65, cs + 66, 0x11, 509, 0); break;
				case 9: len = ovsb_tcp_frame(fr, 10, 9, cli, srv, cp, sp, cs + 66, ss + 66, 0x10, 502, 0); break;
				case 10:
					ovsb_udp_frame(fr, 10, 9, 64, cli, 0xc0a80001u, cp, 53);
					len = OVSB_UDP_FRAME_LEN;
					break;
				default:
					ovsb_udp_frame(fr, 9, 10, 64, 0xc0a80001u, cli, 53, cp);
					len = OVSB_UDP_FRAME_LEN;
					break;
				}
				pcap_record(f, ts, fr, len);
				ts += 10;
			}
		}
	}
	if (fclose(f))
		return -1;
	return rename(tmp, path);
}

/* Median times of one capture through the three commands: CPU (user +
 * system of the whole process) and wall. */
struct pc_times {
	double ovs1, ovs32, ct;            /* cpu */
	double ovs1_w, ovs32_w, ct_w;      /* wall */
	unsigned runs;
	/* one run's ratio (OVS's CPU time over ctrack's), lowest and highest,
	 * against OVS with batches of 1 and of 32 */
	double r1_min, r1_max, r32_min, r32_max;
};

static int pc_time(const struct ovsb_env *e, const char *path, int repeat,
		   struct pc_times *out)
{
	double o1[OVSB_MAX_REPEAT], o32[OVSB_MAX_REPEAT], ct[OVSB_MAX_REPEAT];
	double o1w[OVSB_MAX_REPEAT], o32w[OVSB_MAX_REPEAT], ctw[OVSB_MAX_REPEAT];
	char *ov1[] = { (char *)e->ovstest, "test-conntrack", "pcap", (char *)path, NULL };
	char *ov32[] = { (char *)e->ovstest, "test-conntrack", "pcap", (char *)path, "32", NULL };
	char *cv[] = { (char *)e->ctrack, "read", "--no-table", (char *)path, NULL };
	unsigned runs = 0;

	if (repeat > OVSB_MAX_REPEAT)
		repeat = OVSB_MAX_REPEAT;
	for (int r = 0; r < repeat; r++) {
		double w1, w32, wc, c1, c32, cc;
		int s1 = run_cmd(ov1, "/dev/null", e->errlog, NULL, &w1, &c1);
		int sc = run_cmd(cv, "/dev/null", e->errlog, NULL, &wc, &cc);
		int s32 = run_cmd(ov32, "/dev/null", e->errlog, NULL, &w32, &c32);

		if (s1 || s32 || sc) {
			fprintf(stderr, "ctrack-bench: %s: exit status ovs %d/%d ctrack %d "
				"(see %s)\n", path, s1, s32, sc, e->errlog);
			continue;
		}
		o1[runs] = c1;
		o32[runs] = c32;
		ct[runs] = cc;
		o1w[runs] = w1;
		o32w[runs] = w32;
		ctw[runs] = wc;
		runs++;
	}
	out->runs = runs;
	out->ovs1 = median(o1, runs);
	out->ovs32 = median(o32, runs);
	out->ct = median(ct, runs);
	out->ovs1_w = median(o1w, runs);
	out->ovs32_w = median(o32w, runs);
	out->ct_w = median(ctw, runs);
	/* CPU times: OVS's over ctrack's is the rate ratio */
	ratio_range(o1, ct, runs, &out->r1_min, &out->r1_max);
	ratio_range(o32, ct, runs, &out->r32_min, &out->r32_max);
	return runs ? 0 : -1;
}

/* How many packets OVS's `test-conntrack pcap` reports on (one line of
 * output each): the rates below divide the capture's record count by
 * both tools' times, which is fair only when OVS reads every record. */
static long ovs_pcap_seen(const struct ovsb_env *e, const char *path)
{
	char *ov[] = { (char *)e->ovstest, "test-conntrack", "pcap", (char *)path, NULL };
	char out[PATH_MAX + 64];
	long lines = 0;
	FILE *f;
	int ch;

	snprintf(out, sizeof(out), "%s/pcap-stdout.txt", e->cache);
	if (run_cmd(ov, out, e->errlog, NULL, NULL, NULL))
		return -1;
	f = fopen(out, "r");
	if (!f)
		return -1;
	while ((ch = getc(f)) != EOF)
		lines += ch == '\n';
	fclose(f);
	remove(out);
	return lines;
}

/* Report one capture: rates per CPU-second of the whole process (start-up
 * included, as a user meets it) and net of start-up (each tool's CPU time
 * on an empty capture subtracted), each against OVS with batches of 1 (its
 * default) and 32.  Wall times go in the parameters. */
static void pc_report(const struct ovsb_env *e, const char *path, const char *name,
		      long pkts, const struct pc_times *t, const struct pc_times *empty)
{
	char *ov1[] = { (char *)e->ovstest, "test-conntrack", "pcap", (char *)path, NULL };
	char *ov32[] = { (char *)e->ovstest, "test-conntrack", "pcap", (char *)path, "32", NULL };
	char *cv[] = { (char *)e->ctrack, "read", "--no-table", (char *)path, NULL };
	char o1[PATH_MAX * 3], o32[PATH_MAX * 3], cc[PATH_MAX * 3], params[600];
	double mp = pkts / 1e6;
	long seen = ovs_pcap_seen(e, path);

	cmdline(o1, sizeof(o1), ov1);
	cmdline(o32, sizeof(o32), ov32);
	cmdline(cc, sizeof(cc), cv);
	snprintf(params, sizeof(params), "\"capture\":\"%s\",\"packets\":%ld,"
		 "\"timed\":\"process cpu\",\"ovs1_cpu_s\":%.4f,\"ovs32_cpu_s\":%.4f,"
		 "\"ctrack_cpu_s\":%.4f,\"ovs1_wall_s\":%.4f,\"ovs32_wall_s\":%.4f,"
		 "\"ctrack_wall_s\":%.4f,\"ovs_startup_cpu_s\":%.4f,"
		 "\"ctrack_startup_cpu_s\":%.4f,\"ovs_packets_seen\":%ld",
		 name, pkts, t->ovs1, t->ovs32, t->ct, t->ovs1_w, t->ovs32_w, t->ct_w,
		 empty->ovs1, empty->ct, seen);
	if (seen != pkts)
		fprintf(stderr, "ctrack-bench: warning: OVS reported on %ld of the %ld "
			"packets of %s: its rate below is overstated\n", seen, pkts, path);
	report(e, &(struct ovsb_row){ "pcap", "capture-batch1", "mpps", true,
		mp / t->ovs1, mp / t->ct, 3.0, t->runs, o1, cc, params, "ovs",
		t->r1_min, t->r1_max });
	report(e, &(struct ovsb_row){ "pcap", "capture-batch32", "mpps", true,
		mp / t->ovs32, mp / t->ct, 3.0, t->runs, o32, cc, params, "ovs",
		t->r32_min, t->r32_max });
	if (t->ovs1 > empty->ovs1 && t->ct > empty->ct && t->ovs32 > empty->ovs32) {
		report(e, &(struct ovsb_row){ "pcap", "capture-batch1-net", "mpps", true,
			mp / (t->ovs1 - empty->ovs1), mp / (t->ct - empty->ct), 3.0,
			t->runs, o1, cc, params, "ovs", 0, 0 });
		report(e, &(struct ovsb_row){ "pcap", "capture-batch32-net", "mpps", true,
			mp / (t->ovs32 - empty->ovs32), mp / (t->ct - empty->ct), 3.0,
			t->runs, o32, cc, params, "ovs", 0, 0 });
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static uint32_t rd32(const uint8_t *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

/* Append the records of Ethernet pcap @path to @out, shifted so that time
 * never goes backwards (each file starts one second after the previous
 * one ended).  Returns the records written, or -1. */
static long pcap_append(FILE *out, const char *path, uint64_t *clock_us)
{
	FILE *f = fopen(path, "rb");
	uint8_t gh[24], rh[16], *buf = malloc(262144);
	uint64_t first = 0, last = *clock_us, base = *clock_us + 1000000;
	uint32_t magic;
	bool swap, nsec;
	long n = 0;

	if (!f || !buf || fread(gh, 1, 24, f) != 24) {
		if (f)
			fclose(f);
		free(buf);
		return -1;
	}
	memcpy(&magic, gh, 4);
	swap = magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u;
	nsec = magic == 0xa1b23c4du || magic == 0x4d3cb2a1u;
	if (rd32(gh + 20, swap) != 1) {
		fclose(f);
		free(buf);
		return -1;
	}
	/* OVS's pcap reader stops, with a warning and exit status 0, at the
	 * first record longer than 65535 bytes (a BIG TCP capture has one):
	 * such a file would end OVS's run early inside the concatenation and
	 * leave it fewer packets than ctrack.  It is left out whole. */
	while (fread(rh, 1, 16, f) == 16) {
		uint32_t incl = rd32(rh + 8, swap);

		if (incl > 65535 || fseek(f, (long)incl, SEEK_CUR)) {
			fclose(f);
			free(buf);
			return 0;
		}
	}
	if (fseek(f, 24, SEEK_SET)) {
		fclose(f);
		free(buf);
		return -1;
	}
	while (fread(rh, 1, 16, f) == 16) {
		uint64_t ts = (uint64_t)rd32(rh, swap) * 1000000 +
			      rd32(rh + 4, swap) / (nsec ? 1000 : 1);
		uint32_t incl = rd32(rh + 8, swap), orig = rd32(rh + 12, swap);
		uint64_t o;

		if (fread(buf, 1, incl, f) != incl)
			break;
		if (!n)
			first = ts;
		o = base + (ts > first ? ts - first : 0);
		if (o < last)
			o = last;
		last = o;
		pcap_put32(out, (uint32_t)(o / 1000000));
		pcap_put32(out, (uint32_t)(o % 1000000));
		pcap_put32(out, incl);
		pcap_put32(out, orig < incl ? incl : orig);
		fwrite(buf, 1, incl, out);
		n++;
	}
	*clock_us = last;
	fclose(f);
	free(buf);
	return n;
}

/*
 * The shared captures, concatenated: every Ethernet pcap in e->pcaps that
 * OVS's `test-conntrack pcap` gets through (some make it abort), in name
 * order, timestamps shifted to run forwards.  Small files alone measure
 * little but process start-up; together they are ~70k packets of real,
 * varied traffic.
 */
int make_shared_concat(const struct ovsb_env *e, const char *path)
{
	char list[PATH_MAX + 64], line[PATH_MAX], tmp[PATH_MAX * 2];
	char *files[512];
	unsigned nf = 0, used = 0;
	uint64_t clock_us = 1600000000ull * 1000000ull;
	FILE *p, *out;

	snprintf(list, sizeof(list), "ls -1 '%s' 2>/dev/null", e->pcaps);
	p = popen(list, "r");
	while (p && nf < 512 && fgets(line, sizeof(line), p)) {
		char full[PATH_MAX * 3];

		line[strcspn(line, "\n")] = '\0';
		snprintf(full, sizeof(full), "%s/%s", e->pcaps, line);
		if (pcap_count(full) > 0)
			files[nf++] = strdup(full);
	}
	if (p)
		pclose(p);
	if (!nf)
		return -1;
	qsort(files, nf, sizeof(files[0]), cmp_str);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	out = fopen(tmp, "wb");
	if (!out)
		return -1;
	pcap_header(out);
	for (unsigned i = 0; i < nf; i++) {
		char *ov[] = { (char *)e->ovstest, "test-conntrack", "pcap", files[i], NULL };

		if (run_cmd(ov, "/dev/null", e->errlog, NULL, NULL, NULL) == 0 &&
		    pcap_append(out, files[i], &clock_us) > 0)
			used++;
		else
			fprintf(stderr, "ctrack-bench:     left out %s (OVS cannot "
				"read it whole, or not Ethernet)\n", files[i]);
		free(files[i]);
	}
	fprintf(stderr, "ctrack-bench:     %u of %u captures concatenated\n", used, nf);
	if (fclose(out))
		return -1;
	return rename(tmp, path);
}

void wl_pcap(const struct ovsb_env *e, uint32_t synth_conns)
{
	char synth[PATH_MAX + 64], shared[PATH_MAX + 64], empty[PATH_MAX + 64];
	struct pc_times te, t;
	struct stat sb;
	FILE *f;

	snprintf(empty, sizeof(empty), "%s/empty.pcap", e->cache);
	snprintf(shared, sizeof(shared), "%s/shared-concat.v2.pcap", e->cache);
	snprintf(synth, sizeof(synth), "%s/synth-%u.pcap", e->cache, synth_conns);
	f = fopen(empty, "wb");
	if (!f)
		return;
	pcap_header(f);
	fclose(f);
	if (stat(shared, &sb)) {
		fprintf(stderr, "ctrack-bench:   concatenating the shared captures into %s\n", shared);
		if (make_shared_concat(e, shared))
			fprintf(stderr, "ctrack-bench: no shared captures (%s)\n", e->pcaps);
	}
	if (stat(synth, &sb)) {
		fprintf(stderr, "ctrack-bench:   generating %s\n", synth);
		if (make_synth(synth, synth_conns)) {
			fprintf(stderr, "ctrack-bench: cannot write %s\n", synth);
			return;
		}
	}
	/* the start-up and the shared captures take tens of milliseconds a
	 * run, where one pair's ratio spans 2-6x on this machine: three times
	 * the rounds for them (a second or two) */
	if (pc_time(e, empty, 3 * e->repeat, &te))
		return;
	fprintf(stderr, "ctrack-bench:   start-up (empty capture): ovs %.1f ms, ctrack %.1f ms "
		"CPU\n", te.ovs1 * 1e3, te.ct * 1e3);
	if (!stat(shared, &sb) && !pc_time(e, shared, 3 * e->repeat, &t))
		pc_report(e, shared, "shared-concat", pcap_count(shared), &t, &te);
	if (!pc_time(e, synth, e->repeat, &t))
		pc_report(e, synth, "synthetic", pcap_count(synth), &t, &te);
}
