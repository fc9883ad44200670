/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_gc_busy.c - the collector when it has work: CPU per expired entry
 * and how late entries leave.
 *
 * Steady state: 1,000,000 UDP flows (one unanswered packet each, so they
 * expire after udp_timeout = 10 s here), 100,000 new flows per second,
 * so 10% of the table falls due each second and the table stays at 1M.
 *
 * Two ways of running it, both reported:
 *
 *  driven - time is an input.  @now advances in 10 ms steps (the
 *    collector thread's shortest interval); each step creates the step's
 *    new flows, and a full collector pass (ct_gc_step) runs every
 *    --interval (10 ms, 100 ms, 1 s: a longer interval batches more
 *    expirations per row visited but lets entries stay longer).  Lateness
 *    is exact: the DESTROY event's ts (the pass's @now) minus the entry's
 *    expiry.  The cost is the collector's CPU time (thread clock around
 *    ct_gc_step) divided by the entries it removed, measured twice: with
 *    an event handler (each removal copies the entry out for its DESTROY
 *    event) and without one.  10 s of warm-up fill the table and 11 s
 *    more turn it over (see run_driven), then 5 s
 *    with events and --rounds times 5 s without are measured; the
 *    figure without events is the median of those rounds (min and max
 *    beside it), since one 5 s phase moves by +-10% on a shared machine.
 *    The packet path's side of the same steady state is there too:
 *    create_ns_per_flow, the time in ct_process_burst per new flow (the
 *    monotonic clock around each burst, as the throughput benchmark
 *    times its own), each new entry taking memory an expired one gave
 *    back, with the collector's passes in between.
 *
 *  live - the library's collector thread (ct_gc_start, CLOCK_MONOTONIC,
 *    default adaptive schedule) against the real clock.  1M flows are
 *    created at once in ten namespaces whose udp_timeout is 1..10 s, so
 *    100,000 fall due each second, and the main thread keeps adding
 *    100,000 per second (10 s timeout) paced every 10 ms.  Lateness is
 *    the real clock read in the DESTROY handler minus the expiry; the
 *    cost is the collector thread's CPU clock (pthread_getcpuclockid,
 *    found from inside the handler) over the entries it removed.  Then
 *    again without a handler (names ending in "-off"): no lateness, and
 *    the cost is the run time of the thread named "ct-gc" (schedstat)
 *    over the table's expired count, from the end of the first second
 *    (the wheel's seeding walk) on.  Each second's cluster of 100,000
 *    due entries was created in one go, side by side in memory, as in a
 *    young table: the driven rows, measured after a turnover, are the
 *    steady state.
 *
 * Each runs with each way of finding due rows (--finder): the scan of
 * the row bounds (CT_GC_LOCK_DUE, variant names as before) and the timer
 * wheel of row handles (CT_GC_LOCK_WHEEL, names ending in "-wheel"), one
 * after the other, so that the two are compared in one run.
 *
 * Options: --conns N (1M), --seconds S (live: 10), --finder, --rounds N
 * (driven, events off: 5), --quick (one round).
 */
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

#define STEP_NS 10000000ull      /* 10 ms */
#define TIMEOUT_S 10u

struct late_log {
	double *ms;                  /* lateness of each timeout removal */
	size_t n, cap;
	bool live;                   /* use the real clock, not ev->ts */
	/* live: the collector thread's CPU clock */
	_Atomic int have_clock;
	clockid_t clock;
	uint64_t cpu_at_first;
	_Atomic uint64_t removed;
};

static void on_event(const struct ct_event *ev, void *arg)
{
	struct late_log *l = arg;
	uint64_t at;

	if (ev->type != CT_EV_DESTROY || ev->destroy_cause != CT_DESTROY_TIMEOUT)
		return;
	if (l->live && !atomic_load_explicit(&l->have_clock, memory_order_relaxed)) {
		struct timespec ts;

		pthread_getcpuclockid(pthread_self(), &l->clock);
		clock_gettime(l->clock, &ts);
		l->cpu_at_first = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		atomic_store(&l->have_clock, 1);
	}
	at = l->live ? bu_mono_ns() : ev->ts;
	if (l->n < l->cap)
		l->ms[l->n++] = at >= ev->conn.expires
			? (double)(at - ev->conn.expires) / 1e6
			: -(double)(ev->conn.expires - at) / 1e6;
	atomic_fetch_add_explicit(&l->removed, 1, memory_order_relaxed);
}

static void report_lateness(struct bu_rec *r, struct late_log *l)
{
	bu_rec_int(r, "lateness_samples", l->n);
	bu_rec_num(r, "lateness_p50_ms", bu_percentile(l->ms, l->n, 50));
	bu_rec_num(r, "lateness_p99_ms", bu_percentile(l->ms, l->n, 99));
	bu_rec_num(r, "lateness_max_ms", l->n ? l->ms[l->n - 1] : 0);
}

/* ---- driven ---- */

struct driven {
	struct ct_table *t;
	struct ct_thread *thr;
	ct_time_ns now, next_pass;
	uint64_t interval_ns, per_step;
	uint32_t next_flow;
	uint64_t gc_cpu_ns, expired, passes, rows_visited, rows_locked, steps;
	/* the new flows: time in ct_process_burst (monotonic, around
	 * each burst, as the throughput benchmark times its bursts) */
	uint64_t fill_ns, created;
};

static void driven_steps(struct driven *d, uint64_t steps)
{
	for (uint64_t i = 0; i < steps; i++) {
		/* creations spread over the step, a burst at a time, so that
		 * expiries do not all fall on pass times */
		for (uint64_t f = 0; f < d->per_step; f += CT_BURST_MAX) {
			uint64_t n = d->per_step - f < CT_BURST_MAX ? d->per_step - f
								    : CT_BURST_MAX;

			bu_fill_udp_timed(d->thr, d->next_flow, n, 0,
					  d->now + STEP_NS * (f + n) / d->per_step, false,
					  &d->fill_ns);
			d->next_flow += (uint32_t)n;
		}
		d->created += d->per_step;
		d->now += STEP_NS;
		d->steps++;
		if (d->now >= d->next_pass) {
			struct ct_gc_result res;
			uint64_t c0 = bu_thread_cpu_ns();

			ct_gc_step(d->thr, d->now, 0, &res);
			d->gc_cpu_ns += bu_thread_cpu_ns() - c0;
			d->expired += res.expired;
			d->rows_visited += res.rows_visited;
			d->rows_locked += res.rows_locked;
			d->passes++;
			d->next_pass = d->now + d->interval_ns;
		}
	}
}

static void driven_reset(struct driven *d)
{
	d->gc_cpu_ns = d->expired = d->passes = d->rows_visited = 0;
	d->rows_locked = d->steps = 0;
	d->fill_ns = d->created = 0;
}

/* --finder's words, and the policy each runs */
static const char *const finder_names[] = { "scan", "wheel" };
static const enum ct_gc_lock_policy finder_pol[] = { CT_GC_LOCK_DUE, CT_GC_LOCK_WHEEL };

static const char *finder_name(enum ct_gc_lock_policy p)
{
	return finder_names[p == CT_GC_LOCK_WHEEL];
}

static void set_finder(struct ct_table *t, enum ct_gc_lock_policy p)
{
	struct ct_gc_policy pol;

	ct_gc_policy_default(&pol);
	pol.lock = p;
	ct_gc_set_policy(t, &pol);
}

/* @ns[@nr]: ns per expired entry of each round (nr 0: the one phase in
 * @d); the record's ns_per_expired is their median */
static void driven_record(const struct bench_args *a, struct driven *d,
			  const char *events, struct late_log *l, uint64_t conns,
			  enum ct_gc_lock_policy finder, const double *ns, unsigned nr)
{
	struct bu_rec r;
	char name[64];

	snprintf(name, sizeof(name), "driven-%llums-%s%s",
		 (unsigned long long)(d->interval_ns / 1000000), events,
		 finder == CT_GC_LOCK_WHEEL ? "-wheel" : "");
	bu_rec_begin(&r, a, "gc-busy", name);
	bu_rec_str(&r, "clock", "driven");
	bu_rec_str(&r, "finder", finder_name(finder));
	bu_rec_num(&r, "interval_ms", (double)d->interval_ns / 1e6);
	bu_rec_str(&r, "events", events);
	bu_rec_int(&r, "conns", conns);
	bu_rec_int(&r, "table_count", ct_table_count(d->t));
	bu_rec_int(&r, "passes", d->passes);
	bu_rec_int(&r, "expired", d->expired);
	bu_rec_num(&r, "expired_per_pass", (double)d->expired / (double)d->passes);
	bu_rec_num(&r, "rows_visited_per_expired",
		   (double)d->rows_visited / (double)d->expired);
	if (nr) {
		double med, lo, hi;

		bu_spread(ns, nr, &med, &lo, &hi);
		bu_rec_num(&r, "ns_per_expired", med);
		bu_rec_int(&r, "rounds", nr);
		bu_rec_num(&r, "ns_per_expired_rounds_min", lo);
		bu_rec_num(&r, "ns_per_expired_rounds_max", hi);
	} else {
		bu_rec_num(&r, "ns_per_expired", (double)d->gc_cpu_ns / (double)d->expired);
	}
	/* the packet path's side of the same steady state: a new flow's
	 * entry comes from memory an expired one gave back */
	bu_rec_num(&r, "create_ns_per_flow", (double)d->fill_ns / (double)d->created);
	bu_rec_num(&r, "gc_cpu_pct_of_core",
		   (double)d->gc_cpu_ns * 100.0 / (double)(STEP_NS * d->steps));
	if (l)
		report_lateness(&r, l);
	bu_rec_end(&r);
}

static int run_driven(const struct bench_args *a, uint64_t conns,
		      uint64_t interval_ms, enum ct_gc_lock_policy finder, unsigned rounds)
{
	struct ct_table_config cfg;
	struct late_log log;
	struct driven d;
	double ns[16];
	uint64_t warm_steps = TIMEOUT_S * 1000000000ull / STEP_NS;

	memset(&d, 0, sizeof(d));
	memset(&log, 0, sizeof(log));
	bu_config(&cfg, conns / 4, false);
	cfg.settings.udp_timeout = TIMEOUT_S;
	d.t = bu_table(&cfg);
	set_finder(d.t, finder);
	d.thr = ct_thread_attach(d.t);
	d.now = 1000000000ull;
	d.next_pass = d.now;
	d.interval_ns = interval_ms * 1000000ull;
	d.per_step = conns / warm_steps;
	log.cap = conns;
	log.ms = malloc(log.cap * sizeof(double));

	driven_steps(&d, warm_steps);          /* fill: nothing expires yet */
	/* a turnover and a bit: the entries measured were allocated from
	 * memory that expired ones gave back, laid out as in a table that
	 * has run for a while (right after the fill, entries that fall due
	 * together sit side by side, and a pass costs up to a quarter less) */
	driven_steps(&d, warm_steps + warm_steps / 10);
	ct_table_set_event_handler(d.t, on_event, &log);
	driven_reset(&d);
	driven_steps(&d, warm_steps / 2);
	driven_record(a, &d, "on", &log, conns, finder, NULL, 0);
	ct_table_set_event_handler(d.t, NULL, NULL);
	/* the headline figure: the median of @rounds phases back to back
	 * (this shared machine moves one phase's figure by +-10%); the
	 * record's other fields add all the rounds up */
	driven_reset(&d);
	for (unsigned i = 0; i < rounds; i++) {
		uint64_t cpu0 = d.gc_cpu_ns, exp0 = d.expired;

		driven_steps(&d, warm_steps / 2);
		ns[i] = (double)(d.gc_cpu_ns - cpu0) / (double)(d.expired - exp0);
	}
	driven_record(a, &d, "off", NULL, conns, finder, ns, rounds);

	free(log.ms);
	ct_thread_detach(d.thr);
	ct_table_destroy(d.t);
	return 0;
}

/* ---- live ---- */

/*
 * @events: with the DESTROY handler (lateness measured; the collector's
 * CPU clock found from inside it, from the first removal on), or without
 * one (no lateness; the collector thread's run time read from schedstat
 * and the table's expired count, both from the end of the first second -
 * its seeding walk - to the end): the collector's own cost, without the
 * copy of each entry for an event and the handler's clock read.
 */
static int run_live(const struct bench_args *a, uint64_t conns, unsigned seconds,
		    enum ct_gc_lock_policy finder, bool events)
{
	struct ct_table_config cfg;
	struct ct_table *t;
	struct ct_thread *thr;
	struct late_log log;
	uint64_t per_ns = conns / 10, rate = conns / TIMEOUT_S;
	uint64_t start, cpu_end, removed0, run0 = 0, run1 = 0;
	uint32_t next_flow = 0;
	struct ct_stats s0, s1, sm;
	int tid = 0;
	struct bu_rec r;
	struct timespec ts;
	char name[64];

	memset(&log, 0, sizeof(log));
	log.live = true;
	log.cap = conns * 2;
	log.ms = malloc(log.cap * sizeof(double));
	bu_config(&cfg, conns / 4, false);
	cfg.settings.udp_timeout = TIMEOUT_S;
	t = bu_table(&cfg);
	set_finder(t, finder);
	thr = ct_thread_attach(t);
	for (uint16_t z = 1; z <= 10; z++) {
		struct ct_settings s = cfg.settings;

		s.udp_timeout = z;
		ct_ns_create(t, z, &s);
	}
	start = bu_mono_ns();
	for (uint16_t z = 1; z <= 10; z++) {
		bu_fill_udp(thr, next_flow, per_ns, z, bu_mono_ns(), false);
		next_flow += (uint32_t)per_ns;
	}
	bu_note(a, "gc-busy live: %llu flows created in %.2f s",
		(unsigned long long)conns, (double)(bu_mono_ns() - start) / 1e9);
	if (events)
		ct_table_set_event_handler(t, on_event, &log);
	ct_table_get_stats(t, &s0);
	sm = s0;
	ct_gc_start(t, NULL, NULL);
	start = bu_mono_ns();
	for (uint64_t step = 1;; step++) {
		uint64_t due = start + step * STEP_NS, now = bu_mono_ns();

		if (now - start >= (uint64_t)seconds * 1000000000ull)
			break;
		if (!events && step == 1000000000ull / STEP_NS) {
			tid = bu_gc_thread_tid();
			run0 = tid ? bu_task_run_ns(tid) : 0;
			ct_table_get_stats(t, &sm);
		}
		if (due > now)
			bu_sleep_ns(due - now);
		bu_fill_udp(thr, next_flow, rate / 100, 10, bu_mono_ns(), false);
		next_flow += (uint32_t)(rate / 100);
	}
	cpu_end = 0;
	removed0 = atomic_load(&log.removed);
	if (atomic_load(&log.have_clock)) {
		clock_gettime(log.clock, &ts);
		cpu_end = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	}
	if (tid) {
		run1 = bu_task_run_ns(tid);
		ct_table_get_stats(t, &s1);
		removed0 = s1.expired - sm.expired;
	}
	ct_gc_stop(t);
	ct_table_get_stats(t, &s1);
	snprintf(name, sizeof(name), "live-adaptive%s%s",
		 finder == CT_GC_LOCK_WHEEL ? "-wheel" : "", events ? "" : "-off");
	bu_rec_begin(&r, a, "gc-busy", name);
	bu_rec_str(&r, "clock", "monotonic");
	bu_rec_str(&r, "finder", finder_name(finder));
	bu_rec_str(&r, "events", events ? "on" : "off");
	bu_rec_int(&r, "conns", conns);
	bu_rec_num(&r, "seconds", (double)seconds);
	bu_rec_int(&r, "passes", s1.gc_passes - s0.gc_passes);
	bu_rec_int(&r, "expired", removed0);
	if (events)
		bu_rec_num(&r, "ns_per_expired",
			   cpu_end && removed0 > 1 ? (double)(cpu_end - log.cpu_at_first) /
						    (double)(removed0 - 1) : 0);
	else
		bu_rec_num(&r, "ns_per_expired",
			   run1 > run0 && removed0 ? (double)(run1 - run0) / (double)removed0 : 0);
	bu_rec_int(&r, "table_count", ct_table_count(t));
	if (events)
		report_lateness(&r, &log);
	bu_rec_end(&r);
	ct_table_set_event_handler(t, NULL, NULL);
	free(log.ms);
	ct_thread_detach(thr);
	ct_table_destroy(t);
	return 0;
}

int bench_gc_busy(const struct bench_args *a)
{
	bool quick = bu_flag(a, "quick");
	uint64_t conns = bu_opt_u64(a, "conns", 1000000);
	unsigned seconds = (unsigned)bu_opt_u64(a, "seconds", quick ? 4 : 10);
	uint64_t intervals[8];
	unsigned ni = bu_opt_list(a, "interval", 0, intervals, 8);
	bool only_driven = bu_flag(a, "driven"), only_live = bu_flag(a, "live");
	unsigned finders[2];
	unsigned nf = bu_opt_words(a, "finder", "scan,wheel", finder_names, 2, finders, 2);
	unsigned rounds = (unsigned)bu_opt_u64(a, "rounds", quick ? 1 : 5);

	if (ni == 1 && intervals[0] == 0) {
		intervals[0] = 10;
		intervals[1] = 100;
		intervals[2] = 1000;
		ni = quick ? 2 : 3;
	}
	bu_note(a, "gc-busy: %llu UDP flows, %u s timeout, 10%% due per second",
		(unsigned long long)conns, TIMEOUT_S);
	if (!only_live)
		for (unsigned i = 0; i < ni; i++)
			for (unsigned f = 0; f < nf; f++)
				if (run_driven(a, conns, intervals[i], finder_pol[finders[f]], rounds))
					return 1;
	if (!only_driven)
		for (unsigned f = 0; f < nf; f++)
			for (int ev = 1; ev >= 0; ev--)
				if (run_live(a, conns, seconds, finder_pol[finders[f]], ev))
					return 1;
	return 0;
}
