/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * peer_flows.c - the capture-to-flows tools as peers (workload flows):
 * `softflowd -r` and `nfpcapd -r` against `ctrack read`.
 */
#include "peer.h"

/* ------------------------------- workload 5: capture-to-flows tools */

/* softflowd -r and nfpcapd -r (Debian's NetFlow probes reading a capture)
 * against ctrack read --no-table, whole processes (CPU time, user +
 * system, all threads), on the same captures. */
void wl_flows(const struct ovsb_env *e, uint32_t synth_conns)
{
	char sf[PATH_MAX], nf[PATH_MAX], outdir[PATH_MAX + 32], cmd[PATH_MAX * 4];
	const char *caps[2];
	char shared[PATH_MAX + 64], synth[PATH_MAX + 64];
	bool have_sf = find_exe("softflowd", sf, sizeof(sf));
	bool have_nf = find_exe("nfpcapd", nf, sizeof(nf));
	struct stat sb;

	if (!have_sf && !have_nf) {
		fprintf(stderr, "ctrack-bench: flows: neither softflowd nor nfpcapd is "
			"installed; skipped\n");
		return;
	}
	snprintf(shared, sizeof(shared), "%s/shared-concat.v2.pcap", e->cache);
	snprintf(synth, sizeof(synth), "%s/synth-%u.pcap", e->cache, synth_conns);
	if (stat(shared, &sb) && make_shared_concat(e, shared))
		fprintf(stderr, "ctrack-bench: no shared captures (%s)\n", e->pcaps);
	if (stat(synth, &sb) && make_synth(synth, synth_conns))
		return;
	caps[0] = shared;
	caps[1] = synth;
	snprintf(outdir, sizeof(outdir), "%s/nfpcapd-out", e->cache);
	for (int c = 0; c < 2; c++) {
		const char *path = caps[c];
		double ts[OVSB_MAX_REPEAT], tn[OVSB_MAX_REPEAT], tc[OVSB_MAX_REPEAT];
		char *sv[] = { sf, "-r", (char *)path, "-d", NULL };
		char *nv[] = { nf, "-r", (char *)path, "-l", outdir, NULL };
		char *cv[] = { (char *)e->ctrack, "read", "--no-table", (char *)path, NULL };
		char scmd[PATH_MAX * 3], ncmd[PATH_MAX * 3], ccmd[PATH_MAX * 3], params[256];
		long pkts = pcap_count(path);
		unsigned runs = 0;

		if (pkts <= 0)
			continue;
		for (int r = 0; r < e->repeat; r++) {
			double ws = 0, wn = 0, wc = 0;
			int ss = 0, sn = 0, sc;

			if (have_sf)
				ss = run_cmd(sv, "/dev/null", e->errlog, NULL, NULL, &ws);
			sc = run_cmd(cv, "/dev/null", e->errlog, NULL, NULL, &wc);
			if (have_nf) {
				snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", outdir, outdir);
				if (system(cmd))
					break;
				sn = run_cmd(nv, "/dev/null", e->errlog, NULL, NULL, &wn);
			}
			if (ss || sn || sc) {
				fprintf(stderr, "ctrack-bench: flows: %s: exit status softflowd %d "
					"nfpcapd %d ctrack %d\n", path, ss, sn, sc);
				continue;
			}
			ts[runs] = ws;
			tn[runs] = wn;
			tc[runs] = wc;
			runs++;
		}
		if (!runs)
			continue;
		cmdline(scmd, sizeof(scmd), sv);
		cmdline(ncmd, sizeof(ncmd), nv);
		cmdline(ccmd, sizeof(ccmd), cv);
		snprintf(params, sizeof(params), "\"capture\":\"%s\",\"packets\":%ld,"
			 "\"timed\":\"process cpu\"", c ? "synthetic" : "shared-concat", pkts);
		if (have_sf)
			report(e, &(struct ovsb_row){ "flows", "capture-to-flows", "mpps", true,
				pkts / median(ts, runs) / 1e6, pkts / median(tc, runs) / 1e6, 0,
				runs, scmd, ccmd, params, "softflowd", 0, 0 });
		if (have_nf)
			report(e, &(struct ovsb_row){ "flows", "capture-to-flows", "mpps", true,
				pkts / median(tn, runs) / 1e6, pkts / median(tc, runs) / 1e6, 0,
				runs, ncmd, ccmd, params, "nfpcapd", 0, 0 });
	}
}
