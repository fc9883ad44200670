/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dm_state.c - `ctrack daemon --state FILE`: the table kept across
 * restarts (issue 25 part 3), on the library's state file
 * (ctrack/statefile.h: versioned, checksummed, written atomically).
 *
 * Start.  dm_state_load restores FILE into the fresh table before the
 * sources start, at the daemon's clock, every timeout moved by the
 * wall-clock time since the save (the monotonic clock the table runs on
 * does not survive a reboot; the wall clock does, and a step of it is the
 * only thing that can make the elapsed time wrong - a backwards step
 * counts as none).  Entries whose time ran out meanwhile are not
 * inserted: the library delivers their DESTROY (no client can be
 * subscribed yet, so they are counted and logged, not seen).  The
 * table's counters go on from the file's.  A missing FILE is a first
 * start; a damaged, cut short, foreign or other-version one stops the
 * start with a message naming it (exit status 3 for damage, 2 for a file
 * that is not ours, as ctrack read's --load-state), or with
 * --state-damaged=empty is kept aside (FILE.damaged[.N], never over
 * another file: read_state.c) and the daemon starts empty.
 *
 * While running.  A saver thread of its own writes FILE every
 * --state-interval seconds, asked by the main loop's once-a-second tick:
 * the save walks the table as ct_record_export does (the resize lock for
 * the walk - resizes wait, inserts do not - and each entry's lock while
 * it is copied, so a worker waits at most one entry's copy), so neither
 * the packet path nor the control socket waits for it; the price is that
 * a periodic file is not one instant of the table (an entry made or
 * removed during the walk may or may not be in it), which is what a
 * `kill -9` can lose anyway.  A save still running when the next is due
 * is not doubled up: the next one waits for the tick after it.
 *
 * Stop.  The last save runs after the workers and the collector have
 * stopped (cmd_daemon.c), on the main thread, so that file is the table
 * exactly as the last packet and the last collector pass left it.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../cli.h"
#include "../read_state.h"
#include "daemon.h"

struct dm_state {
	struct daemon *d;
	pthread_t tid;
	pthread_mutex_t lock;        /* the fields below */
	pthread_cond_t cv;
	bool want, busy, quit;
	char path[PATH_MAX];         /* the file the save asked for goes to */
	ct_time_ns next_due;         /* main thread only */
};

/* What a save or a restore took: wall and this thread's CPU. */
struct dm_took {
	struct timespec wall, cpu;
};

static void took_start(struct dm_took *t)
{
	clock_gettime(CLOCK_MONOTONIC, &t->wall);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t->cpu);
}

static double ms_since(clockid_t clk, const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(clk, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) * 1e3 + (double)(t1.tv_nsec - t0->tv_nsec) / 1e6;
}

int dm_state_option(struct dm_options *o, int which, const char *v, const char *where,
		    char *err, size_t errlen)
{
	char *end;
	unsigned long n;

	switch (which) {
	case 0:
		if (!*v || strlen(v) >= sizeof(o->state)) {
			snprintf(err, errlen, "%s: '%s' is not a file name", where, v);
			return -1;
		}
		snprintf(o->state, sizeof(o->state), "%s", v);
		return 0;
	case 1:
		errno = 0;
		n = strtoul(v, &end, 10);
		if (!*v || *v == '-' || *end || errno || n > 86400) {
			snprintf(err, errlen, "%s: '%s' is not a number of seconds from 0 (only "
				 "at stop) to 86400", where, v);
			return -1;
		}
		o->state_interval = (unsigned)n;
		return 0;
	default:
		if (!strcmp(v, "stop")) {
			o->state_damaged_empty = false;
		} else if (!strcmp(v, "empty")) {
			o->state_damaged_empty = true;
		} else {
			snprintf(err, errlen, "%s: '%s' is neither stop nor empty", where, v);
			return -1;
		}
		return 0;
	}
}

int dm_state_load(struct daemon *d, char *err, size_t errlen)
{
	const char *path = d->opt.state;
	struct ct_state_restore_opts ro;
	struct ct_state_restore_result res;
	struct ct_state_error e;
	struct ct_state_file *f;
	struct ct_state_info info;
	struct dm_took t0;
	struct timespec wall;
	char msg[256], kept[PATH_MAX + 32];
	uint64_t now_wall, elapsed = 0;
	int r;

	if (!path[0])
		return CT_EXIT_OK;
	took_start(&t0);
	r = ct_state_open(path, &f, &e);
	if (r < 0 && e.err == CT_STATE_E_IO && e.sys_errno == ENOENT) {
		dm_log("state: %s does not exist yet: starting with an empty table", path);
		return CT_EXIT_OK;
	}
	if (r < 0) {
		ct_state_strerror(&e, msg, sizeof(msg));
		if (e.err == CT_STATE_E_IO || e.err == CT_STATE_E_ARG) {
			snprintf(err, errlen, "--state %s: %s", path, msg);
			return e.err == CT_STATE_E_IO && e.sys_errno == ENOMEM ? CT_EXIT_INTERNAL
									       : CT_EXIT_INPUT;
		}
		if (d->opt.state_damaged_empty) {
			int k = state_keep_aside(path, kept, sizeof(kept));

			if (k < 0) {
				snprintf(err, errlen, "--state %s: %s; and it cannot be kept aside "
					 "(%s), so the daemon stops rather than lose it", path, msg,
					 strerror(-k));
				return CT_EXIT_INPUT;
			}
			dm_log("state: %s: %s; kept as %s, starting with an empty table "
			       "(--state-damaged=empty)", path, msg, kept);
			return CT_EXIT_OK;
		}
		snprintf(err, errlen, "--state %s: %s (--state-damaged=empty starts empty "
			 "instead, keeping the file aside)", path, msg);
		return e.err == CT_STATE_E_MAGIC || e.err == CT_STATE_E_VERSION ||
		       e.err == CT_STATE_E_EMPTY ? CT_EXIT_INPUT : CT_EXIT_PARTIAL;
	}
	ct_state_get_info(f, &info);
	clock_gettime(CLOCK_REALTIME, &wall);
	now_wall = (uint64_t)wall.tv_sec * 1000000000ull + (uint64_t)wall.tv_nsec;
	if (now_wall > info.saved_wall_ns)
		elapsed = now_wall - info.saved_wall_ns;
	memset(&ro, 0, sizeof(ro));
	ro.now = dclock_now();
	ro.elapsed_ns = elapsed;
	ro.counters = true;
	ro.zone_settings = &d->opt.set;
	r = ct_state_restore(f, d->thr, &ro, &res, &e);
	ct_state_close(f);
	if (r < 0) {
		/* the table is the daemon's own and fresh: a clash means the
		 * file holds one connection twice, which its checks cannot see */
		ct_state_strerror(&e, msg, sizeof(msg));
		snprintf(err, errlen, "--state %s: %s%s", path, msg,
			 e.err == CT_STATE_E_IMPORT && e.reason == CT_RECORD_R_NAT_OFF
			 ? " (it was saved with NAT: give the same --nat / --nat-file rules)" : "");
		return r == -ENOMEM ? CT_EXIT_INTERNAL : CT_EXIT_PARTIAL;
	}
	dm_log("state: restored %" PRIu64 " entries from %s (saved %.1f s ago; %" PRIu64
	       " expired meanwhile) in %.1f ms, %.1f ms CPU", res.restored, path,
	       (double)elapsed / 1e9, res.expired, ms_since(CLOCK_MONOTONIC, &t0.wall),
	       ms_since(CLOCK_THREAD_CPUTIME_ID, &t0.cpu));
	return CT_EXIT_OK;
}

/* One save of the table of @thr to @path; logged.  Returns 0 or -1. */
static int save_once(struct daemon *d, struct ct_thread *thr, const char *path,
		     const char *why)
{
	struct ct_state_save_opts o;
	struct ct_state_save_result res;
	struct ct_state_error e;
	struct dm_took t0;
	char msg[256];

	took_start(&t0);
	memset(&o, 0, sizeof(o));
	o.now = dclock_now();
	o.wall_ns = 0;               /* CLOCK_REALTIME, read by the save */
	o.zone = -1;
	o.counters = true;
	if (ct_state_save(thr, path, &o, &res, &e) < 0) {
		ct_state_strerror(&e, msg, sizeof(msg));
		dm_log("state: cannot save to %s (%s): %s; the previous file is left as it was",
		       path, why, msg);
		return -1;
	}
	(void)d;
	dm_log("state: saved %" PRIu64 " entries to %s (%s) in %.1f ms, %.1f ms CPU, %" PRIu64
	       " bytes", res.records, path, why, ms_since(CLOCK_MONOTONIC, &t0.wall),
	       ms_since(CLOCK_THREAD_CPUTIME_ID, &t0.cpu), res.bytes);
	return 0;
}

static void *saver_main(void *arg)
{
	struct dm_state *s = arg;
	struct ct_thread *thr = ct_thread_attach(s->d->t);
	char path[PATH_MAX];

	if (!thr)
		dm_log("state: the saver cannot attach to the table (out of memory): only the "
		       "save at stop will be made");
	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->want && !s->quit)
			pthread_cond_wait(&s->cv, &s->lock);
		if (s->quit)
			break;
		s->want = false;
		s->busy = true;
		memcpy(path, s->path, sizeof(path));
		pthread_mutex_unlock(&s->lock);
		if (thr)
			(void)save_once(s->d, thr, path, "interval");
		pthread_mutex_lock(&s->lock);
		s->busy = false;
	}
	pthread_mutex_unlock(&s->lock);
	if (thr)
		ct_thread_detach(thr);
	return NULL;
}

/* The saver starts at the first tick, once the daemon runs: a start that
 * fails earlier has no thread to join. */
static struct dm_state *saver_start(struct daemon *d)
{
	struct dm_state *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->d = d;
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->next_due = d->started + (uint64_t)d->opt.state_interval * 1000000000ull;
	if (pthread_create(&s->tid, NULL, saver_main, s) != 0) {
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->lock);
		free(s);
		return NULL;
	}
	return s;
}

void dm_state_tick(struct daemon *d)
{
	struct dm_state *s = d->state;
	ct_time_ns now;

	if (!d->opt.state[0] || !d->opt.state_interval)
		return;
	if (!s && !(s = d->state = saver_start(d))) {
		dm_log("state: cannot start the saver thread: only the save at stop will be "
		       "made");
		d->opt.state_interval = 0;
		return;
	}
	now = dclock_now();
	if (now < s->next_due)
		return;
	pthread_mutex_lock(&s->lock);
	if (!s->busy && !s->want) {
		memcpy(s->path, d->opt.state, sizeof(s->path));
		s->want = true;
		pthread_cond_signal(&s->cv);
		s->next_due = now + (uint64_t)d->opt.state_interval * 1000000000ull;
	}
	pthread_mutex_unlock(&s->lock);
}

int dm_state_save(struct daemon *d, const char *why)
{
	struct dm_state *s = d->state;

	if (s) {
		pthread_mutex_lock(&s->lock);
		s->quit = true;
		pthread_cond_signal(&s->cv);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->tid, NULL);
		pthread_cond_destroy(&s->cv);
		pthread_mutex_destroy(&s->lock);
		free(s);
		d->state = NULL;
	}
	if (!d->opt.state[0])
		return CT_EXIT_OK;
	return save_once(d, d->thr, d->opt.state, why) < 0 ? CT_EXIT_INTERNAL : CT_EXIT_OK;
}
