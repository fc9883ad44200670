/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * read_state.c - `ctrack read --load-state / --save-state`.
 *
 * The library keeps the table and its counters in the file; the tool adds
 * what it counts itself (frames, unsupported link layers, the
 * reassembler's figures) as the file's application bytes, tagged so that
 * a state file another program wrote (the daemon's) is read for its table
 * and its own bytes left alone.  The replay goes on in capture time: the
 * table is restored at the moment it was saved (the last packet's time),
 * nothing elapsed, so the next file's packets and the collector meet the
 * same entries at the same times as a reading of the whole capture would.
 *
 * What is not carried: fragments of a datagram not yet whole at the end
 * of a file (the reassembler's state), and the entries' ids (a hash of
 * their address, as the kernel's; the listing's order breaks ties of
 * equal first-packet times by id).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "read_state.h"

/* The application bytes: "ctread/1" and four counters; a reading with
 * NAT writes "ctread/2", the same four, a u64 count and the NAT's
 * counters (read_nat.h), which a reader applies only when the count is
 * its own. */
static const char app_tag[8] = { 'c', 't', 'r', 'e', 'a', 'd', '/', '1' };
static const char app_tag2[8] = { 'c', 't', 'r', 'e', 'a', 'd', '/', '2' };

#define APP_LEN (8 + 4 * 8)
#define APP_MAX (APP_LEN + 8 + 64 * 8)

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* link() fails rather than replace an existing name, so nothing is
 * overwritten. */
int state_keep_aside(const char *path, char *kept, size_t len)
{
	for (unsigned n = 0; n < 1000; n++) {
		if (n)
			snprintf(kept, len, "%s.damaged.%u", path, n);
		else
			snprintf(kept, len, "%s.damaged", path);
		if (link(path, kept) == 0)
			return unlink(path) == 0 ? 0 : -errno;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int read_state_load(const char *path, enum state_damaged policy, struct ct_thread *thr,
		    const struct ct_settings *set, ct_time_ns *now, bool *restored,
		    struct read_counts *counts)
{
	struct ct_state_restore_opts ro;
	struct ct_state_restore_result res;
	struct ct_state_error err;
	struct ct_state_file *f;
	struct ct_state_info info;
	const uint8_t *app;
	uint32_t app_len;
	char msg[256], kept[4200];
	int r;

	*restored = false;
	r = ct_state_open(path, &f, &err);
	if (r < 0) {
		ct_state_strerror(&err, msg, sizeof(msg));
		if (err.err == CT_STATE_E_IO || err.err == CT_STATE_E_ARG) {
			fprintf(stderr, "ctrack: --load-state %s: %s\n", path, msg);
			return err.err == CT_STATE_E_IO && err.sys_errno == ENOMEM
				? CT_EXIT_INTERNAL : CT_EXIT_INPUT;
		}
		if (policy == STATE_DAMAGED_EMPTY) {
			int k = state_keep_aside(path, kept, sizeof(kept));

			if (k < 0) {
				fprintf(stderr, "ctrack: --load-state %s: %s; and it cannot be "
					"kept aside (%s), so ctrack stops rather than lose it\n",
					path, msg, strerror(-k));
				return CT_EXIT_INPUT;
			}
			fprintf(stderr, "ctrack: warning: --load-state %s: %s; kept as %s, "
				"starting with an empty table (--state-damaged=empty)\n",
				path, msg, kept);
			return 0;
		}
		fprintf(stderr, "ctrack: --load-state %s: %s (--state-damaged=empty starts "
			"empty instead, keeping the file aside)\n", path, msg);
		/* damage is 3; a file that is not ours at all, or of another
		 * version, is an input that cannot be read: 2 */
		return err.err == CT_STATE_E_MAGIC || err.err == CT_STATE_E_VERSION ||
		       err.err == CT_STATE_E_EMPTY ? CT_EXIT_INPUT : CT_EXIT_PARTIAL;
	}
	ct_state_get_info(f, &info);
	memset(&ro, 0, sizeof(ro));
	ro.now = info.saved_now;
	ro.elapsed_ns = 0;
	ro.counters = true;
	ro.zone_settings = set;
	r = ct_state_restore(f, thr, &ro, &res, &err);
	if (r < 0) {
		ct_state_strerror(&err, msg, sizeof(msg));
		fprintf(stderr, "ctrack: --load-state %s: %s%s\n", path, msg,
			err.err == CT_STATE_E_IMPORT && err.reason == CT_RECORD_R_NAT_OFF
			? " (it was saved with NAT: give the same --nat / --nat-file rules)" : "");
		ct_state_close(f);
		return r == -ENOMEM ? CT_EXIT_INTERNAL : CT_EXIT_PARTIAL;
	}
	memset(counts, 0, sizeof(*counts));
	app = ct_state_app(f, &app_len);
	if (app && ((app_len == APP_LEN && !memcmp(app, app_tag, sizeof(app_tag))) ||
		    (app_len >= APP_LEN + 8 && !memcmp(app, app_tag2, sizeof(app_tag2))))) {
		counts->frames = get64(app + 8);
		counts->bad_link = get64(app + 16);
		counts->fragments = get64(app + 24);
		counts->reassembled = get64(app + 32);
	}
	if (app && app_len >= APP_LEN + 8 && !memcmp(app, app_tag2, sizeof(app_tag2))) {
		uint64_t n = get64(app + APP_LEN);

		if (n <= 64 && app_len == APP_LEN + 8 + 8 * n) {
			counts->n_nat = (uint32_t)n;
			for (uint64_t i = 0; i < n; i++)
				counts->nat[i] = get64(app + APP_LEN + 8 + 8 * i);
		}
	}
	*now = info.saved_now;
	*restored = true;
	ct_state_close(f);
	return 0;
}

int read_state_save(const char *path, struct ct_thread *thr, ct_time_ns now,
		    const struct read_counts *counts)
{
	struct ct_state_save_opts o;
	struct ct_state_error err;
	uint8_t app[APP_MAX];
	size_t app_len = APP_LEN;
	char msg[256];

	memcpy(app, counts->n_nat ? app_tag2 : app_tag, sizeof(app_tag));
	put64(app + 8, counts->frames);
	put64(app + 16, counts->bad_link);
	put64(app + 24, counts->fragments);
	put64(app + 32, counts->reassembled);
	if (counts->n_nat && counts->n_nat <= 64) {
		put64(app + APP_LEN, counts->n_nat);
		for (uint32_t i = 0; i < counts->n_nat; i++)
			put64(app + APP_LEN + 8 + 8 * i, counts->nat[i]);
		app_len = APP_LEN + 8 + 8 * (size_t)counts->n_nat;
	}
	memset(&o, 0, sizeof(o));
	o.now = now;
	o.zone = -1;
	o.counters = true;
	o.app = app;
	o.app_len = (uint32_t)app_len;
	if (ct_state_save(thr, path, &o, NULL, &err) < 0) {
		ct_state_strerror(&err, msg, sizeof(msg));
		fprintf(stderr, "ctrack: --save-state %s: %s\n", path, msg);
		return CT_EXIT_INTERNAL;
	}
	return 0;
}
