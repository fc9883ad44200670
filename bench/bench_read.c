/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_read.c - is `ctrack read` bounded by reading the file?
 *
 * For each capture, packets per second of, in one run:
 *   libpcap        pcap_open_offline + pcap_next_ex over the file: the
 *                  floor any pcap reader stands on
 *   cap            the CLI's own reader (tools/ctrack/capture.c: libpcap
 *                  over a FILE of its own for a plain pcap file, else a
 *                  zlib stream under libpcap or its pcapng reader),
 *                  linked in here
 *   cap+parse      ... and ct_parse_frame() on every frame
 *   cap+parse+track  ... and ct_process() at capture time with the CLI's
 *                  settings (checksums checked), no events, no collector
 *   cap+parse+track-burst  the same tracked 64 packets at a time with
 *                  ct_process_burst (frames copied out of the reader's
 *                  buffer): what batching would give the capture path
 *   ctrack-read    the whole `ctrack read --no-table FILE`, run as a child
 *                  process (wall time; its user+system CPU is reported too)
 * and the ratios of each to libpcap.  The file is read once before the
 * timings so that every variant reads it from the page cache.  In-process
 * variants are timed with the thread's CPU clock (the machine is shared;
 * wall time is reported too), the child with its rusage.
 *
 * Captures: the largest in ../shared/pcaps (zeek__echo-connections.pcap.gz
 * is inflated to a temporary file first, since libpcap cannot read gzip;
 * ctrack-read is also run on the .gz itself), and a synthetic one written
 * with pcap_dump: --synth-packets (default 2M; --quick 300k) Ethernet
 * frames of 50,000 concurrent flows (80% TCP conversations: handshake,
 * 1-8 data segments of 1-400 bytes each acknowledged, FIN/FIN/ACK; 20% UDP
 * request/response), valid checksums, 1 us apart.
 *
 * Options: --pcaps DIR (../shared/pcaps), --ctrack PATH (next to this
 * binary: ../tools/ctrack), --synth-packets N, --reps N (3; the best of N
 * is reported), --quick, FILE... (instead of the default list),
 * --synth-out PATH (only write the synthetic capture there).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "capture.h"
#include "bench_util.h"
#include "support/frame.h"

static const char *const default_pcaps[] = {
	"zeek__echo-connections.pcap.gz",
	"suricata__denial6-6.pcap",
	"suricata__filecontainer-smb.pcap",
	"ndpi__1kxun.pcap",
	"suricata__defrag-af-confusion-spray-h8.pcap",
};

struct timing {
	double wall_s, cpu_s;
	uint64_t packets;
};

/* ---- the variants ---- */

static int t_libpcap(const char *path, struct timing *t)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline(path, err);
	struct pcap_pkthdr *h;
	const u_char *d;
	uint64_t w0, c0, n = 0, sum = 0;

	if (!p)
		return -1;
	w0 = bu_mono_ns();
	c0 = bu_thread_cpu_ns();
	while (pcap_next_ex(p, &h, &d) == 1) {
		n++;
		sum += d[0];       /* touch the frame, as every reader does */
	}
	t->cpu_s = (double)(bu_thread_cpu_ns() - c0) / 1e9;
	t->wall_s = (double)(bu_mono_ns() - w0) / 1e9;
	t->packets = n + (sum & 0);
	pcap_close(p);
	return 0;
}

enum stage { ST_CAP, ST_PARSE, ST_TRACK, ST_BURST };

/*
 * What batching would give the capture path: frames are copied out of the
 * reader's buffer (it is reused by the next read) into 64 slots, parsed,
 * and tracked with one ct_process_burst() at the last frame's time.  Not
 * what `ctrack read` does - it must process each packet at its own time
 * and run the collector between packets - but the cost of the tracking
 * once its cache misses overlap.  Returns the packets read.
 */
static uint64_t track_bursts(struct cap_src *src, struct ct_thread *thr)
{
	enum { SLOT = 2048 };
	static uint8_t buf[CT_BURST_MAX][SLOT];
	struct ct_packet pk[CT_BURST_MAX];
	const struct ct_packet *ptr[CT_BURST_MAX];
	struct ct_verdict v[CT_BURST_MAX];
	struct cap_pkt cp;
	unsigned nb = 0;
	uint64_t n = 0;
	ct_time_ns now = 0;
	bool more = true;

	for (unsigned j = 0; j < CT_BURST_MAX; j++)
		ptr[j] = &pk[j];
	while (more) {
		more = cap_next(src, &cp) == 1;
		if (more) {
			uint32_t len = cp.caplen < SLOT ? cp.caplen : SLOT;

			memcpy(buf[nb], cp.data, len);
			ct_parse_frame(&pk[nb], cp.linktype, buf[nb], len,
				       cp.wirelen - (cp.caplen - len), cp.ts_ns);
			if (cp.ts_ns > now)
				now = cp.ts_ns;
			nb++;
			n++;
		}
		if (nb == CT_BURST_MAX || (!more && nb)) {
			ct_process_burst(thr, ptr, nb, now, v);
			nb = 0;
		}
	}
	return n;
}

static int t_cap(const char *path, enum stage st, struct timing *t)
{
	struct cap_src *src;
	struct cap_pkt cp;
	char err[512];
	uint64_t w0, c0, n = 0, sum = 0;
	struct ct_table *tab = NULL;
	struct ct_thread *thr = NULL;
	ct_time_ns now = 0;

	if (cap_open(path, &src, err, sizeof(err)) < 0)
		return -1;
	if (st >= ST_TRACK) {
		/* what `ctrack read` asks for: kernel settings (checksums
		 * checked, acct on), no limit */
		struct ct_table_config cfg;

		ct_table_config_default(&cfg);
		cfg.settings.max = 0;
		cfg.settings.acct = 1;
		tab = bu_table(&cfg);
		thr = ct_thread_attach(tab);
	}
	w0 = bu_mono_ns();
	c0 = bu_thread_cpu_ns();
	if (st == ST_BURST) {
		n = track_bursts(src, thr);
		goto done;
	}
	while (cap_next(src, &cp) == 1) {
		struct ct_packet pkt;
		struct ct_verdict v;

		n++;
		if (st == ST_CAP) {
			sum += cp.data[0];
			continue;
		}
		ct_parse_frame(&pkt, cp.linktype, cp.data, cp.caplen, cp.wirelen,
			       cp.ts_ns);
		if (st == ST_PARSE) {
			sum += pkt.kind;
			continue;
		}
		if (cp.ts_ns > now)
			now = cp.ts_ns;
		ct_process(thr, &pkt, now, &v);
	}
done:
	t->cpu_s = (double)(bu_thread_cpu_ns() - c0) / 1e9;
	t->wall_s = (double)(bu_mono_ns() - w0) / 1e9;
	t->packets = n + (sum & 0);
	cap_close(src);
	if (tab) {
		ct_thread_detach(thr);
		ct_table_destroy(tab);
	}
	return 0;
}

static int t_cli(const char *ctrack, const char *path, struct timing *t)
{
	struct rusage ru;
	uint64_t w0 = bu_mono_ns();
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execl(ctrack, ctrack, "read", "--no-table", "--no-progress", path,
		      (char *)NULL);
		_exit(127);
	}
	if (wait4(pid, &st, 0, &ru) < 0)
		return -1;
	t->wall_s = (double)(bu_mono_ns() - w0) / 1e9;
	t->cpu_s = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		   (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	t->packets = 0;
	/* 3: damaged or cut short, results still cover what was read */
	return WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 3) ? 0 : -1;
}

/* ---- inputs ---- */

/* Inflate @gz into a temporary file; returns its path (malloc'd). */
static char *inflate_tmp(const char *gz)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *path = malloc(PATH_MAX);
	gzFile in = gzopen(gz, "rb");
	int fd;
	char buf[1 << 16];
	int n;

	if (!path || !in) {
		free(path);
		if (in)
			gzclose(in);
		return NULL;
	}
	snprintf(path, PATH_MAX, "%s/ctrack-bench-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0) {
		gzclose(in);
		free(path);
		return NULL;
	}
	while ((n = gzread(in, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n)
			break;
	gzclose(in);
	close(fd);
	return path;
}

/* A synthetic capture of @packets frames (see the top of the file). */
struct sflow {
	uint32_t id;
	uint8_t udp;
	uint8_t n_data;       /* data segments to send */
	uint16_t k;           /* next packet of its script */
	uint16_t len;         /* payload of each data segment */
};

static char *write_synth(uint64_t packets, uint64_t *written)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char *path = malloc(PATH_MAX);
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);
	pcap_dumper_t *dump;
	enum { ACTIVE = 50000 };
	struct sflow *fl = calloc(ACTIVE, sizeof(*fl));
	uint8_t frame[TS_FRAME_HDR_MAX + 512];
	uint64_t seed = 99, n = 0, ts_us = 1700000000ull * 1000000ull;
	uint32_t next_id = 0;
	int fd;

	snprintf(path, PATH_MAX, "%s/ctrack-bench-synth-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		return NULL;
	close(fd);
	dump = pcap_dump_open(dead, path);
	if (!dump)
		return NULL;
	for (unsigned i = 0; i < ACTIVE; i++) {
		fl[i].id = next_id++;
		fl[i].udp = bu_rand(&seed) % 5 == 0;
		fl[i].n_data = (uint8_t)(1 + bu_rand(&seed) % 8);
		fl[i].len = (uint16_t)(1 + bu_rand(&seed) % 400);
	}
	while (n < packets) {
		struct sflow *f = &fl[(bu_rand(&seed) >> 32) * ACTIVE >> 32];
		struct ct_packet p;
		struct ct_tuple t;
		struct pcap_pkthdr h;
		uint32_t wire, cap;
		bool last;

		bu_flow_tuple(&t, f->id, f->udp ? IPPROTO_UDP : IPPROTO_TCP, 0);
		if (f->udp) {
			bu_udp_pkt(&p, &t, f->k ? CT_DIR_REPLY : CT_DIR_ORIGINAL, f->len);
			last = f->k == 1;
		} else {
			/* handshake (3), data + ACK pairs, FIN, FIN, ACK */
			unsigned k = f->k, nd = 2u * f->n_data;

			if (k < 3) {
				struct ct_packet hs[3];
				bu_tcp_handshake(hs, &t);
				p = hs[k];
			} else if (k < 3 + nd) {
				uint32_t j = k - 3;

				if (j % 2 == 0)
					bu_tcp_pkt(&p, &t, CT_DIR_ORIGINAL, CT_TCP_ACK | CT_TCP_PSH,
						   BU_ISN_O + 1 + j / 2 * f->len, BU_ISN_R + 1,
						   512, f->len);
				else
					bu_tcp_pkt(&p, &t, CT_DIR_REPLY, CT_TCP_ACK, BU_ISN_R + 1,
						   BU_ISN_O + 1 + (j / 2 + 1) * f->len, 512, 0);
			} else {
				uint32_t end = BU_ISN_O + 1 + f->n_data * f->len;

				switch (k - 3 - nd) {
				case 0:
					bu_tcp_pkt(&p, &t, CT_DIR_ORIGINAL, CT_TCP_FIN | CT_TCP_ACK,
						   end, BU_ISN_R + 1, 512, 0);
					break;
				case 1:
					bu_tcp_pkt(&p, &t, CT_DIR_REPLY, CT_TCP_FIN | CT_TCP_ACK,
						   BU_ISN_R + 1, end + 1, 512, 0);
					break;
				default:
					bu_tcp_pkt(&p, &t, CT_DIR_ORIGINAL, CT_TCP_ACK, end + 1,
						   BU_ISN_R + 2, 512, 0);
					break;
				}
			}
			last = k == 3 + nd + 2;
		}
		cap = ts_frame(frame, &p, true, &wire);
		h.ts.tv_sec = (time_t)(ts_us / 1000000);
		h.ts.tv_usec = (suseconds_t)(ts_us % 1000000);
		h.caplen = cap;
		h.len = wire;
		pcap_dump((u_char *)dump, &h, frame);
		ts_us++;
		n++;
		f->k++;
		if (last) {
			f->id = next_id++;
			f->k = 0;
			f->udp = bu_rand(&seed) % 5 == 0;
			f->n_data = (uint8_t)(1 + bu_rand(&seed) % 8);
			f->len = (uint16_t)(1 + bu_rand(&seed) % 400);
		}
	}
	pcap_dump_close(dump);
	pcap_close(dead);
	free(fl);
	*written = n;
	return path;
}

/* Check that a synthetic capture tracks as intended: no INVALID. */
static uint64_t synth_invalid(const char *path)
{
	struct cap_src *src;
	struct cap_pkt cp;
	char err[512];
	struct ct_table_config cfg;
	struct ct_table *t;
	struct ct_thread *thr;
	uint64_t bad = 0, n = 0;

	if (cap_open(path, &src, err, sizeof(err)) < 0)
		return UINT64_MAX;
	ct_table_config_default(&cfg);
	cfg.settings.max = 0;
	cfg.settings.acct = 1;          /* as `ctrack read` */
	t = bu_table(&cfg);
	thr = ct_thread_attach(t);
	while (cap_next(src, &cp) == 1 && n++ < 200000) {
		struct ct_packet pkt;
		struct ct_verdict v;

		ct_parse_frame(&pkt, cp.linktype, cp.data, cp.caplen, cp.wirelen, cp.ts_ns);
		ct_process(thr, &pkt, cp.ts_ns, &v);
		if (v.cls == CT_V_INVALID)
			bad++;
	}
	cap_close(src);
	ct_thread_detach(thr);
	ct_table_destroy(t);
	return bad;
}

/* ---- driver ---- */

static void best_of(struct timing *best, const struct timing *t)
{
	if (best->cpu_s == 0 || t->cpu_s < best->cpu_s)
		*best = *t;
}

static void one_capture(const struct bench_args *a, const char *label,
			const char *path, const char *cli_path_extra,
			const char *ctrack, unsigned reps, uint64_t size)
{
	static const char *const names[] = {
		"libpcap", "cap", "cap+parse", "cap+parse+track",
		"cap+parse+track-burst", "ctrack-read", "ctrack-read-gz",
	};
	struct timing best[7];
	uint64_t packets;
	double base_pps = 0;

	memset(best, 0, sizeof(best));
	{
		struct timing warm;
		if (t_libpcap(path, &warm) < 0) {
			fprintf(stderr, "read: %s: libpcap cannot open it\n", path);
			return;
		}
		packets = warm.packets;
	}
	for (unsigned r = 0; r < reps; r++) {
		struct timing t;

		if (t_libpcap(path, &t) == 0)
			best_of(&best[0], &t);
		for (int st = ST_CAP; st <= ST_BURST; st++)
			if (t_cap(path, (enum stage)st, &t) == 0)
				best_of(&best[1 + st], &t);
		if (t_cli(ctrack, path, &t) == 0)
			best_of(&best[5], &t);
		if (cli_path_extra && t_cli(ctrack, cli_path_extra, &t) == 0)
			best_of(&best[6], &t);
	}
	for (int v = 0; v < 7; v++) {
		struct bu_rec rec;
		char name[160];
		double pps, pps_wall;

		if (best[v].cpu_s <= 0 && best[v].wall_s <= 0)
			continue;
		/* the child's CPU clock ticks coarsely: fall back on wall */
		pps = packets / (best[v].cpu_s > 0 ? best[v].cpu_s : best[v].wall_s);
		pps_wall = packets / best[v].wall_s;
		if (v == 0)
			base_pps = pps;
		snprintf(name, sizeof(name), "%s:%s", label, names[v]);
		bu_rec_begin(&rec, a, "read", name);
		bu_rec_str(&rec, "capture", label);
		bu_rec_str(&rec, "stage", names[v]);
		bu_rec_int(&rec, "packets", packets);
		bu_rec_num(&rec, "mib", (double)size / 1048576.0);
		bu_rec_num(&rec, "mpps", pps / 1e6);
		bu_rec_num(&rec, "mpps_wall", pps_wall / 1e6);
		bu_rec_num(&rec, "ns_per_pkt", 1e9 / pps);
		bu_rec_num(&rec, "cpu_s", best[v].cpu_s);
		bu_rec_num(&rec, "wall_s", best[v].wall_s);
		if (base_pps > 0)
			bu_rec_num(&rec, "ratio", pps / base_pps);
		bu_rec_end(&rec);
	}
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

int bench_read(const struct bench_args *a)
{
	bool quick = bu_flag(a, "quick");
	const char *dir = bu_opt_str(a, "pcaps", "../shared/pcaps");
	unsigned reps = (unsigned)bu_opt_u64(a, "reps", quick ? 1 : 3);
	uint64_t synth_n = bu_opt_u64(a, "synth-packets", quick ? 300000 : 2000000);
	char ctrack[PATH_MAX + 32];
	const char *opt_ctrack = bu_opt_str(a, "ctrack", NULL);
	const char *files[32];
	unsigned n_files = 0;
	bool explicit_files = false;

	if (opt_ctrack) {
		snprintf(ctrack, sizeof(ctrack), "%s", opt_ctrack);
	} else {
		char self[PATH_MAX];
		ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
		char *slash;

		self[len > 0 ? len : 0] = '\0';
		slash = strrchr(self, '/');
		if (slash)
			*slash = '\0';
		snprintf(ctrack, sizeof(ctrack), "%s/../tools/ctrack", self);
	}
	if (bu_opt_str(a, "synth-out", NULL)) {
		/* only write the synthetic capture (for profiling, or other
		 * tools) and stop */
		uint64_t n = 0;
		char *tmp = write_synth(synth_n, &n);

		if (!tmp || rename(tmp, bu_opt_str(a, "synth-out", NULL)) != 0) {
			fprintf(stderr, "read: cannot write %s\n", bu_opt_str(a, "synth-out", NULL));
			return 1;
		}
		free(tmp);
		return 0;
	}
	if (access(ctrack, X_OK) != 0) {
		fprintf(stderr, "read: %s is not executable (build the tool, or "
			"pass --ctrack PATH)\n", ctrack);
		return 1;
	}
	/* FILE arguments: anything not an option or an option's value */
	for (int i = 0; i < a->argc && n_files < 32; i++) {
		const char *s = a->argv[i];

		if (!strncmp(s, "--", 2)) {
			if (!strchr(s, '=') && i + 1 < a->argc && strncmp(a->argv[i + 1], "--", 2) &&
			    strcmp(s, "--quick"))
				i++;
			continue;
		}
		files[n_files++] = s;
		explicit_files = true;
	}
	if (!explicit_files)
		for (size_t i = 0; i < sizeof(default_pcaps) / sizeof(default_pcaps[0]); i++)
			files[n_files++] = default_pcaps[i];

	for (unsigned i = 0; i < n_files; i++) {
		char path[PATH_MAX];
		const char *base = strrchr(files[i], '/');
		size_t len;

		if (explicit_files)
			snprintf(path, sizeof(path), "%s", files[i]);
		else
			snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		base = base ? base + 1 : files[i];
		len = strlen(path);
		if (access(path, R_OK) != 0) {
			bu_note(a, "read: %s: not found, skipped", path);
			continue;
		}
		if (len > 3 && !strcmp(path + len - 3, ".gz")) {
			char *tmp = inflate_tmp(path);

			if (!tmp) {
				fprintf(stderr, "read: cannot inflate %s\n", path);
				continue;
			}
			one_capture(a, base, tmp, path, ctrack, reps, file_size(tmp));
			unlink(tmp);
			free(tmp);
		} else {
			one_capture(a, base, path, NULL, ctrack, reps, file_size(path));
		}
	}
	if (!explicit_files && synth_n) {
		uint64_t n = 0, t0 = bu_mono_ns(), bad;
		char *synth = write_synth(synth_n, &n);
		char label[64];

		if (!synth) {
			fprintf(stderr, "read: cannot write the synthetic capture\n");
			return 1;
		}
		bad = synth_invalid(synth);
		bu_note(a, "read: synthetic capture of %llu packets (%.0f MiB) written "
			"in %.1f s; INVALID in its first 200k packets: %llu",
			(unsigned long long)n, (double)file_size(synth) / 1048576.0,
			(double)(bu_mono_ns() - t0) / 1e9, (unsigned long long)bad);
		if (bad) {
			fprintf(stderr, "read: the synthetic capture does not track "
				"cleanly (%llu INVALID)\n", (unsigned long long)bad);
			unlink(synth);
			return 1;
		}
		snprintf(label, sizeof(label), "synthetic-%lluk",
			 (unsigned long long)(n / 1000));
		one_capture(a, label, synth, NULL, ctrack, reps, file_size(synth));
		unlink(synth);
		free(synth);
	}
	return 0;
}
