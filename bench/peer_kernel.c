/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_kernel.c - the Linux kernel's nf_conntrack as the peer, in a router
 * namespace (workload kernel): a new connection's cost, conntrack -L
 * and -F.
 */
#include "peer.h"

/* ---------------------------------------- workload 4: the Linux kernel */

/* Find @name in PATH (and the sbin directories root's PATH may lack). */
bool find_exe(const char *name, char *out, size_t size)
{
	const char *path = getenv("PATH");
	char buf[4096];
	char *save = NULL;

	snprintf(buf, sizeof(buf), "%s:/usr/sbin:/sbin:/usr/bin:/bin", path ? path : "");
	for (char *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(out, size, "%s/%s", d, name);
		if (!access(out, X_OK))
			return true;
	}
	return false;
}

/* Flows 0..n-1 of frames.h, original direction, one packet each. */
static int write_flows_pcap(const char *path, uint32_t n)
{
	char tmp[PATH_MAX * 2];
	uint8_t fr[OVSB_SLOT];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "wb");
	if (!f)
		return -1;
	pcap_header(f);
	for (uint32_t i = 0; i < n; i++) {
		ovsb_flow_frame(fr, i, 0);
		pcap_record(f, 1700000000ull * 1000000ull + i, fr, OVSB_UDP_FRAME_LEN);
	}
	if (fclose(f))
		return -1;
	return rename(tmp, path);
}

/* Output of a shell command, as a number (-1 when it fails). */
static double sh_num(const char *cmd)
{
	char line[128] = "";
	FILE *p = popen(cmd, "r");
	double v = -1;

	if (!p)
		return -1;
	if (fgets(line, sizeof(line), p))
		v = strtod(line, NULL);
	if (pclose(p))
		return -1;
	return v;
}

struct kd_dump {
	FILE *out;
	ct_time_ns now;
	uint64_t n;
};

/* One line per entry, as `conntrack -L` prints it: protocol, number,
 * seconds left, original tuple, [UNREPLIED], reply tuple, mark, use. */
static int kd_dump_line(const struct ct_conn_info *ci, void *arg)
{
	struct kd_dump *d = arg;
	char o[192], r[192];
	unsigned long long left = ci->expires > d->now ? (ci->expires - d->now) / 1000000000ull : 0;

	ct_tuple_format(&ci->orig, o, sizeof(o));
	ct_tuple_format(&ci->reply, r, sizeof(r));
	fprintf(d->out, "%-8s %u %llu %s%s%s %s%s mark=%u use=1\n",
		ct_l4_name(ci->orig.l4), ci->orig.l4, left,
		ci->state_name ? ci->state_name : "", ci->state_name ? " " : "", o,
		(ci->status & CT_ST_SEEN_REPLY) ? "" : "[UNREPLIED] ", r,
		ci->mark);
	d->n++;
	return 0;
}

static int kd_dump_count(const struct ct_conn_info *ci, void *arg)
{
	((struct kd_dump *)arg)->n += ci->orig.l4 != 0;
	return 0;
}

/* ctrack's side: insert the same N one-packet flows (timed: the cost of a
 * new connection, parse included), list the table as text into /dev/null
 * (timed, as `conntrack -L > /dev/null`), flush it (timed, as
 * `conntrack -F`).  Wall clock, as the kernel side is. */
static void kd_child(void *arg, int fd)
{
	uint32_t n = *(const uint32_t *)arg;
	uint8_t *slots = malloc((size_t)2 * n * OVSB_SLOT);
	struct ct_table_config cfg;
	struct ct_verdict v[32];
	struct ct_thread *thr;
	struct ct_table *t;
	struct kd_dump d = { NULL, LG_NOW, 0 };
	double w0, c0;
	long removed;

	if (!slots)
		_exit(2);
	ovsb_flow_frames(slots, n);
	/* the defaults, as the kernel namespace's: no counters there either
	 * (--acct is for the OVS comparisons) */
	ct_table_config_default(&cfg);
	cfg.settings.max = 2 * n + 1024;
	if (ct_table_create(&cfg, &t))
		_exit(2);
	thr = ct_thread_attach(t);
	if (!thr)
		_exit(2);
	w0 = mono_s();
	lg_run(thr, slots, 0, n, 0, v);
	fdprintf(fd, "new_ns_per_conn %.1f\n", (mono_s() - w0) * 1e9 / n);
	fdprintf(fd, "conns %llu\n", (unsigned long long)ct_table_count(t));
	d.out = fopen("/dev/null", "w");
	if (!d.out)
		_exit(2);
	w0 = mono_s();
	c0 = cpu_s();
	ct_table_dump(thr, -1, kd_dump_line, &d);
	fflush(d.out);
	fdprintf(fd, "list_ms %.3f\n", (mono_s() - w0) * 1e3);
	fdprintf(fd, "list_cpu_ms %.3f\n", (cpu_s() - c0) * 1e3);
	fclose(d.out);
	fdprintf(fd, "listed %llu\n", (unsigned long long)d.n);
	/* the walk alone, to tell it from the text formatting */
	w0 = mono_s();
	ct_table_dump(thr, -1, kd_dump_count, &d);
	fdprintf(fd, "walk_ms %.3f\n", (mono_s() - w0) * 1e3);
	w0 = mono_s();
	c0 = cpu_s();
	removed = ct_table_flush(thr, -1, LG_NOW);
	fdprintf(fd, "flush_ms %.3f\n", (mono_s() - w0) * 1e3);
	fdprintf(fd, "flush_cpu_ms %.3f\n", (cpu_s() - c0) * 1e3);
	fdprintf(fd, "flushed %ld\n", removed);
	ct_thread_detach(thr);
	ct_table_destroy(t);
	free(slots);
}

/* Replay @pcap from the sender namespace at top speed; seconds taken as
 * tcpreplay reports them ("Actual: N packets (B bytes) sent in S seconds"),
 * or -1. */
static double kd_replay(const struct ovsb_env *e, const char *ns, const char *dev,
			const char *pcap, const char *ip, const char *tcpreplay)
{
	char *argv[] = { (char *)ip, "netns", "exec", (char *)ns, (char *)tcpreplay, "-K",
			 "--topspeed", "-i", (char *)dev, (char *)pcap, NULL };
	struct ovsb_kv kv = { 0 };
	const char *a;
	long pk;
	double sec;

	if (run_cmd(argv, NULL, e->errlog, &kv, NULL, NULL))
		return -1;
	a = kv_str(&kv, "Actual:");
	if (!a || sscanf(a, "%ld packets (%*[0-9] bytes) sent in %lf seconds", &pk, &sec) != 2)
		return -1;
	return sec;
}

void wl_kernel(const struct ovsb_env *e, const uint32_t *sizes, unsigned nsizes)
{
	char ip[PATH_MAX], tr[PATH_MAX], ctb[PATH_MAX], nft[PATH_MAX];
	char script[PATH_MAX + 64], prefix[32], nsa[40], nsr[40], dev[40], cmd[PATH_MAX * 4];

	if (geteuid() || !find_exe("ip", ip, sizeof(ip)) ||
	    !find_exe("tcpreplay", tr, sizeof(tr)) ||
	    !find_exe("conntrack", ctb, sizeof(ctb)) || !find_exe("nft", nft, sizeof(nft))) {
		fprintf(stderr, "ctrack-bench: kernel: needs root, ip, nft, tcpreplay and "
			"conntrack (scripts/deps.sh test); skipped\n");
		return;
	}
	snprintf(script, sizeof(script), "%s/bench/ovs/kernel-ns.sh", e->repo);
	snprintf(prefix, sizeof(prefix), "ctb%u", (unsigned)getpid() % 100000);
	snprintf(nsa, sizeof(nsa), "%sa", prefix);
	snprintf(nsr, sizeof(nsr), "%sr", prefix);
	snprintf(dev, sizeof(dev), "%sa0", prefix);
	snprintf(cmd, sizeof(cmd), "sh '%s' up %s >>'%s' 2>&1", script, prefix, e->errlog);
	if (system(cmd)) {
		fprintf(stderr, "ctrack-bench: kernel: namespace set-up failed (see %s)\n", e->errlog);
		snprintf(cmd, sizeof(cmd), "sh '%s' down %s", script, prefix);
		if (system(cmd))
			fprintf(stderr, "ctrack-bench: kernel: clean-up failed\n");
		return;
	}
	for (unsigned si = 0; si < nsizes; si++) {
		uint32_t n = sizes[si];
		double kn[OVSB_MAX_REPEAT], kl[OVSB_MAX_REPEAT], kf[OVSB_MAX_REPEAT];
		double cn[OVSB_MAX_REPEAT], cl[OVSB_MAX_REPEAT], cf[OVSB_MAX_REPEAT];
		double kon[OVSB_MAX_REPEAT], koff[OVSB_MAX_REPEAT], kempty[OVSB_MAX_REPEAT];
		double cwalk[OVSB_MAX_REPEAT], klw[OVSB_MAX_REPEAT], kfw[OVSB_MAX_REPEAT];
		double clw[OVSB_MAX_REPEAT], cfw[OVSB_MAX_REPEAT];
		char pcap[PATH_MAX + 64], params[512], lparams[768], nparams[640], kcmd[PATH_MAX * 3], ccmd[PATH_MAX + 128];
		char *lv[] = { ip, "netns", "exec", nsr, ctb, "-L", NULL };
		char *fv[] = { ip, "netns", "exec", nsr, ctb, "-F", NULL };
		unsigned runs = 0;
		struct stat sb;

		snprintf(pcap, sizeof(pcap), "%s/flows-%u.pcap", e->cache, n);
		if (stat(pcap, &sb) && write_flows_pcap(pcap, n)) {
			fprintf(stderr, "ctrack-bench: cannot write %s\n", pcap);
			continue;
		}
		for (int r = 0; r < e->repeat; r++) {
			struct ovsb_kv kc = { 0 };
			double on, off, lw, fw, lc, fc, ew, count;

			snprintf(cmd, sizeof(cmd), "sh '%s' flush %s", script, prefix);
			if (system(cmd))
				break;
			if (run_cmd(lv, "/dev/null", e->errlog, NULL, NULL, &ew))
				break;
			on = kd_replay(e, nsa, dev, pcap, ip, tr);
			snprintf(cmd, sizeof(cmd), "sh '%s' count %s", script, prefix);
			count = sh_num(cmd);
			if (run_cmd(lv, "/dev/null", e->errlog, NULL, &lw, &lc) ||
			    run_cmd(fv, "/dev/null", e->errlog, NULL, &fw, &fc))
				break;
			snprintf(cmd, sizeof(cmd), "sh '%s' ct-off %s", script, prefix);
			if (system(cmd))
				break;
			off = kd_replay(e, nsa, dev, pcap, ip, tr);
			snprintf(cmd, sizeof(cmd), "sh '%s' ct-on %s", script, prefix);
			if (system(cmd))
				break;
			if (run_child(kd_child, &n, &kc, NULL) || kv_num(&kc, "conns") != n ||
			    kv_num(&kc, "listed") != n || kv_num(&kc, "flushed") != n) {
				fprintf(stderr, "ctrack-bench: kernel: ctrack run failed\n");
				continue;
			}
			if (on <= 0 || off <= 0 || count != n) {
				fprintf(stderr, "ctrack-bench: kernel: replay failed or the table "
					"holds %.0f of %u entries (dropped?); run left out\n", count, n);
				continue;
			}
			kon[runs] = on;
			koff[runs] = off;
			kn[runs] = (on - off) * 1e9 / n;
			kl[runs] = lc * 1e3;
			kf[runs] = fc * 1e3;
			klw[runs] = lw * 1e3;
			kfw[runs] = fw * 1e3;
			kempty[runs] = ew * 1e3;
			cn[runs] = kv_num(&kc, "new_ns_per_conn");
			cl[runs] = kv_num(&kc, "list_cpu_ms");
			cf[runs] = kv_num(&kc, "flush_cpu_ms");
			clw[runs] = kv_num(&kc, "list_ms");
			cfw[runs] = kv_num(&kc, "flush_ms");
			cwalk[runs] = kv_num(&kc, "walk_ms");
			runs++;
			fprintf(stderr, "ctrack-bench:   kernel N=%u run %d: new conn %.0f ns "
				"(replay %.3f s with ct, %.3f s without) / ctrack %.0f ns; "
				"-L %.1f / %.1f ms cpu; -F %.1f / %.1f ms cpu\n", n, r + 1, kn[runs - 1],
				on, off, cn[runs - 1], kl[runs - 1], cl[runs - 1], kf[runs - 1],
				cf[runs - 1]);
		}
		snprintf(params, sizeof(params), "\"conns\":%u,\"replay_ct_s\":%.4f,"
			 "\"replay_noct_s\":%.4f,\"kernel_forward_ct_mpps\":%.4f,"
			 "\"kernel_list_empty_cpu_ms\":%.3f,\"ctrack_walk_only_ms\":%.3f", n,
			 median(kon, runs), median(koff, runs), n / median(kon, runs) / 1e6,
			 median(kempty, runs), median(cwalk, runs));
		snprintf(kcmd, sizeof(kcmd), "ip netns exec %s tcpreplay -K --topspeed -i %s %s "
			 "through router netns %s, nft 'ct state new' vs no conntrack; "
			 "(time with - time without) / N", nsa, dev, pcap, nsr);
		snprintf(ccmd, sizeof(ccmd), "%s/bench/ctrack-bench ovs kernel: same frames, "
			 "ct_parse_frame + ct_process_burst of 32 (wall)", e->build);
		snprintf(nparams, sizeof(nparams), "%s,\"timed\":\"wall\"", params);
		report(e, &(struct ovsb_row){ "kernel", "new-conn-cost", "ns_per_conn", false,
			median(kn, runs), median(cn, runs), 0, runs, kcmd, ccmd, nparams, "kernel", 0, 0 });
		snprintf(lparams, sizeof(lparams), "%s,\"timed\":\"cpu (conntrack process incl. "
			 "its syscalls; ctrack thread)\",\"kernel_list_wall_ms\":%.3f,"
			 "\"ctrack_list_wall_ms\":%.3f,\"kernel_flush_wall_ms\":%.3f,"
			 "\"ctrack_flush_wall_ms\":%.3f", params, median(klw, runs),
			 median(clw, runs), median(kfw, runs), median(cfw, runs));
		snprintf(kcmd, sizeof(kcmd), "ip netns exec %s conntrack -L > /dev/null", nsr);
		snprintf(ccmd, sizeof(ccmd), "%s/bench/ctrack-bench ovs kernel: ct_table_dump, "
			 "one conntrack-style text line per entry into /dev/null", e->build);
		report(e, &(struct ovsb_row){ "kernel", "list", "ms", false,
			median(kl, runs), median(cl, runs), 0, runs, kcmd, ccmd, lparams, "kernel", 0, 0 });
		snprintf(kcmd, sizeof(kcmd), "ip netns exec %s conntrack -F", nsr);
		snprintf(ccmd, sizeof(ccmd), "%s/bench/ctrack-bench ovs kernel: ct_table_flush(all)",
			 e->build);
		report(e, &(struct ovsb_row){ "kernel", "flush", "ms", false,
			median(kf, runs), median(cf, runs), 0, runs, kcmd, ccmd, lparams, "kernel", 0, 0 });
	}
	snprintf(cmd, sizeof(cmd), "sh '%s' down %s", script, prefix);
	if (system(cmd))
		fprintf(stderr, "ctrack-bench: kernel: namespace clean-up failed (%s*)\n", prefix);
}
