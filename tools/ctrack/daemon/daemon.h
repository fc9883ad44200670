/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * daemon.h - what the parts of `ctrack daemon` share.
 *
 * The daemon is the library with sources and sinks around it (docs/
 * daemon.md has the picture):
 *
 *   AF_PACKET rings (src_afpacket.c)  or  a capture replayed (src_replay.c)
 *        |  PACKET_FANOUT_HASH / the replay's own symmetric hash
 *        v
 *   N worker threads (worker.c): parse, reassemble, ct_process_burst_ts
 *        |  events, into a ring per producing thread (evbus.c)
 *        v
 *   the main thread (ctl_server.c): the control socket's clients, the
 *   event subscribers, signals, once-a-second housekeeping
 *
 * plus the library's collector thread (ct_gc_start) on the daemon's clock,
 * and with --ipfix or --metrics-listen the export thread (dm_export.c):
 * the main thread hands it the DESTROY events it drains, through a
 * bounded queue, and it encodes and sends the flow records, runs the
 * active timeouts and serves the metrics (libmicrohttpd's own thread).
 *
 * Threads and what they own.  A worker owns its ct_thread, reassembler,
 * ring or frame queue and counters (written by it alone, read by the main
 * thread with relaxed atomics).  The main thread owns everything else:
 * options, clients, subscribers, its own ct_thread for listings and
 * deletions.  The only things two threads write are the event rings (one
 * producer, one consumer each) and the frame queues of a replay (the
 * feeder and one worker).  `stop` is written by the main thread and read
 * by all.
 *
 * Time.  The table runs on CLOCK_MONOTONIC nanoseconds (dclock_now), so
 * that a step of the wall clock never expires or resurrects entries; a
 * packet's time is its ring timestamp (wall clock, taken by the kernel as
 * it arrived) moved onto the monotonic clock, never earlier than the
 * worker's previous packet.  What users see as dates (events' [sec.usec],
 * JSON times) is the table time plus wall_ns, the wall clock's offset,
 * resampled every second.
 */
#ifndef CTRACK_DAEMON_H
#define CTRACK_DAEMON_H

#include <limits.h>
#include <net/if.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctrack/ctrack.h"
#include "../export/export.h"
#include "../format.h"
#include "../nat_path.h"

/* struct nat_path_counts' fields, in its order (dm_nat.c names them) */
#define DM_NAT_COUNTS 9
struct metrics_nat;

#define DM_MAX_IFACES 16
#define DM_MAX_WORKERS 64

/* ---- options: the command line and the config file (options.c) ---- */

struct dm_options {
	char ifaces[DM_MAX_IFACES][IF_NAMESIZE];
	unsigned n_ifaces;
	char filter[2048];          /* --filter: a libpcap expression */
	char replay[PATH_MAX];      /* --replay FILE */
	double speed;               /* --speed X (0: as fast as possible) */
	unsigned workers;           /* --workers N */
	char socket_path[108];      /* --socket PATH (sun_path's size) */
	char socket_group[64];      /* --socket-group NAME: may connect */
	char admin_group[64];       /* --admin-group NAME: may change state */
	unsigned socket_mode;       /* --socket-mode 0660 */
	unsigned ring_mb;           /* --ring-mb: per worker */
	unsigned ring_timeout_ms;   /* --ring-timeout-ms: block retire timer */
	unsigned max_clients;       /* --max-clients */
	unsigned events_buffer_kb;  /* --events-buffer-kb: per subscriber */
	unsigned event_ring;        /* --event-ring: events per thread ring */
	char config[PATH_MAX];      /* --config FILE */
	bool loop;                  /* --loop: replay the file again and again */
	int control_nice;           /* --control-nice: the main thread's nice */
	struct ct_settings set;     /* --set, --sysctl-file, --router */
	struct ex_opts ex;          /* --ipfix*, --metrics-listen (issue 26) */
	unsigned export_queue;      /* --export-queue: events for the export */
	/* --state FILE, --state-interval S (0: only at stop), --state-damaged
	 * stop|empty (dm_state.c) */
	char state[PATH_MAX];
	unsigned state_interval;
	bool state_damaged_empty;
	bool have_config;
	bool check;                 /* --check: parse, report, exit */
	char sync[2048];            /* --sync SPEC (repeatable, joined with
				     * commas): dm_sync.h; "" = off */
	/* --nat RULE (repeatable: the texts, one a line, each checked when
	 * read), --nat-file FILE, --nat-exact-ports (dm_nat.c) */
	char nat[8192];
	char nat_file[PATH_MAX];
	bool nat_exact_ports;
};

void dm_options_default(struct dm_options *o);

/*
 * dm_options_parse - apply the command line (@argc, @argv after the word
 * "daemon") and the config file it names (or the default one, if it
 * exists: /etc/ctrack/ctrack.conf) to @o.  The file is read first and the
 * command line wins.  Returns 0, 1 for --help (printed), or -1 with a
 * message for a person in @err.
 */
int dm_options_parse(int argc, char **argv, struct dm_options *o, char *err, size_t errlen);

/* Options a SIGHUP cannot change (sources, workers, the socket's path):
 * returns the first such option that differs between @a and @b, or NULL. */
const char *dm_options_restart_only(const struct dm_options *a, const struct dm_options *b);

/* ---- the daemon's clock (dclock.c) ---- */

ct_time_ns dclock_now(void);             /* CLOCK_MONOTONIC, ns */
int64_t dclock_wall_offset(void);        /* CLOCK_REALTIME - CLOCK_MONOTONIC, ns */

/* ---- events (evbus.c) ---- */

struct ev_ring;

/* ---- a worker (worker.c) ---- */

struct af_ring;
struct frame_q;

/* Burst latency: ns per ct_process_burst_ts call, in a histogram of 16
 * buckets per power of two (each 1/16 of an octave wide, so a percentile
 * read from it is within 4.4% of the true one) from 64 ns to 2^40 ns;
 * bucket 0 holds everything below 64 ns.  dm_lat_bucket/dm_lat_floor map
 * between the two. */
#define DM_LAT_SUB 16
#define DM_LAT_BUCKETS (1 + DM_LAT_SUB * 34)
unsigned dm_lat_bucket(uint64_t ns);
uint64_t dm_lat_floor(unsigned bucket);

struct dm_worker {
	struct daemon *d;
	pthread_t tid;
	unsigned idx;
	bool started;
	struct ct_thread *thr;
	struct ct_defrag *defrag;
	struct af_ring *ring;       /* live: this worker's socket */
	struct frame_q *q;          /* replay: frames from the feeder */
	struct ev_ring *evq;        /* events this thread produces */
	ct_time_ns last_now;
	/* the burst being gathered */
	struct ct_packet bp[CT_BURST_MAX];
	const struct ct_packet *bpp[CT_BURST_MAX];
	struct ct_verdict bv[CT_BURST_MAX];
	unsigned bn;
	ct_time_ns burst_first;
	/* counters: written by the worker, read by the main thread */
	_Atomic uint64_t frames;
	_Atomic uint64_t bad_link;
	_Atomic uint64_t bursts;
	_Atomic uint64_t lat_sum_ns;   /* of the bursts' durations */
	_Atomic uint64_t lat[DM_LAT_BUCKETS];
	/* live: frames by the interface they came in on (the position of
	 * its ifindex in --interface's list; the last: any other) */
	_Atomic uint64_t if_frames[DM_MAX_IFACES + 1];
	uint32_t last_ifindex;         /* the last frame's, and its slot */
	unsigned last_ifslot;
	/* --nat: what the first packets met (this worker's alone), and the
	 * copy it publishes after each packet for `ctrack stats` and the
	 * metrics page (relaxed stores: another thread reads it) */
	struct nat_path_counts nat_counts;
	_Atomic uint64_t nat_pub[DM_NAT_COUNTS];
};

/* ---- the daemon ---- */

struct ctl_server;
struct dm_sync;
struct evbus;
struct replay;
struct dm_export;

struct daemon {
	struct dm_options opt;
	int argc;                   /* kept for SIGHUP's reread */
	char **argv;
	struct ct_table *t;
	struct ct_thread *thr;      /* the main thread's */
	struct dm_worker *w;
	unsigned n_workers;
	struct replay *rp;
	struct evbus *bus;
	struct ctl_server *srv;
	struct dm_export *ex;       /* NULL without --ipfix, --metrics-listen */
	struct dm_sync *sync;       /* --sync: dm_sync.c (main thread) */
	struct fmt_opts fo;         /* the daemon's defaults for listings */
	_Atomic uint64_t min_timeout_ns; /* bursts end before an entry could
				     * expire (the settings' shortest) */
	ct_time_ns started;
	_Atomic int64_t wall_ns;    /* dclock_wall_offset(), resampled */
	_Atomic bool stop;
	uint64_t reloads;
	struct dm_state *state;     /* dm_state.c: the periodic saver */
	/* --nat: the rules, parsed at start and read-only after (every
	 * worker matches them) */
	bool nat_on;
	struct nat_rules nat;
	struct metrics_nat *nat_metrics;   /* with --metrics-listen (dm_export.c) */
};

/* dm_nat.c: --nat, --nat-file, --nat-exact-ports.  dm_nat_option applies
 * one (@which 0, 1, 2), checking a rule as it is read (a message naming
 * @where, the rule and the column); dm_nat_check the whole set once the
 * options are read (the file's rules; --nat-exact-ports without rules);
 * dm_nat_start parses them into d->nat (warnings for rules that can never
 * match go to stderr), dm_nat_stop frees them; dm_nat_packet tracks one
 * packet of worker @w through them (nat_path.h). */
int dm_nat_option(struct dm_options *o, int which, const char *v, const char *where,
		  char *err, size_t errlen);
int dm_nat_check(const struct dm_options *o, char *err, size_t errlen);
int dm_nat_start(struct daemon *d, char *err, size_t errlen);
void dm_nat_stop(struct daemon *d);
void dm_nat_packet(struct dm_worker *w, const struct ct_packet *pkt, ct_time_ns now);
struct json_t;
/* the workers' NAT counters summed, as `ctrack stats`' "nat" object (any
 * thread: it reads the published copies) */
struct json_t *dm_nat_stats_json(struct daemon *d);

/* worker.c */
int dm_workers_start(struct daemon *d, char *err, size_t errlen);
void dm_workers_stop(struct daemon *d);
/* Track one frame at @now (worker thread): parse, reassemble, into the
 * burst; the caller flushes with dm_worker_flush. */
void dm_worker_frame(struct dm_worker *w, int linktype, const uint8_t *data,
		     uint32_t caplen, uint32_t wirelen, ct_time_ns now, uint32_t ifindex);
void dm_worker_flush(struct dm_worker *w);

/* src_afpacket.c: the live sources of all workers */
/* The slot of @ifindex in --interface's list (DM_MAX_IFACES: another). */
unsigned dm_live_iface_slot(uint32_t ifindex);
int dm_live_open(struct daemon *d, char *err, size_t errlen);
int dm_live_set_filter(struct daemon *d, const char *expr, char *err, size_t errlen);
void dm_live_close(struct daemon *d);
/* Run worker @w's loop over its ring until d->stop. */
void dm_live_loop(struct dm_worker *w);
/* The rings' statistics, summed since start (PACKET_STATISTICS). */
struct dm_ring_stats {
	uint64_t packets, drops, freezes;
};
void dm_live_stats(struct daemon *d, unsigned worker, struct dm_ring_stats *s);

/* src_replay.c */
int dm_replay_open(struct daemon *d, char *err, size_t errlen);
/* The feeder starts after the workers: its queues need their consumers. */
int dm_replay_start(struct daemon *d, char *err, size_t errlen);
void dm_replay_close(struct daemon *d);
void dm_replay_loop(struct dm_worker *w);
struct dm_replay_stats {
	uint64_t frames, bytes;
	bool done;
	char error[320];
};
void dm_replay_stats(struct daemon *d, struct dm_replay_stats *s);

/* evbus.c */
struct evbus *evbus_new(unsigned ring_events);
void evbus_free(struct evbus *b);
/* The table's event handler (arg: the bus). */
void evbus_handler(const struct ct_event *ev, void *arg);
/* Give the calling thread its own ring (workers, before their first
 * packet); other threads get one at their first event. */
struct ev_ring *evbus_attach(struct evbus *b);
/* Subscribers come and go on the main thread; while there is one every
 * event is queued, otherwise those of the base mask (1 << CT_EV_*: the
 * export's DESTROYs), and with neither the handler returns at once.
 * evbus_want() is that mask now, for ct_table_set_event_mask. */
void evbus_subscribers(struct evbus *b, int delta);
void evbus_set_base(struct evbus *b, unsigned mask);
unsigned evbus_want(struct evbus *b);
/*
 * evbus_drain - the consumer (main thread): move up to @max queued
 * events into @out, in time order across the producing threads; returns
 * how many.  *@lost gets the number of events the producers dropped
 * because their ring was full, since the last call.
 */
size_t evbus_drain(struct evbus *b, struct ct_event *out, size_t max, uint64_t *lost);
uint64_t evbus_lost_total(struct evbus *b);   /* any thread */
/* The consumer thread's own events bypass the rings: @fn gets them at
 * once (set on the consumer thread, before it causes any). */
void evbus_set_direct(void (*fn)(const struct ct_event *, void *), void *arg);

/* ctl_server.c */
int ctl_server_open(struct daemon *d, char *err, size_t errlen);
/* The main loop: clients, subscribers, signals, housekeeping; returns
 * when SIGTERM/SIGINT arrived. */
int ctl_server_run(struct daemon *d);
void ctl_server_close(struct daemon *d);
/* After a SIGHUP changed the groups or limits. */
int ctl_server_reconfigure(struct daemon *d, char *err, size_t errlen);
/* Hand what the event rings hold to the subscribers and the export (at
 * shutdown, once the producers stopped). */
void ctl_server_drain(struct daemon *d);

/* ---- flow export and metrics (dm_export.c, issue 26) ---- */

/*
 * dm_export_start - with --ipfix or --metrics-listen: open the collector
 * (a TCP one must accept now: a clear error otherwise), the metrics
 * listener (a port in use is an error), and start the export thread.
 * Before the sources: nothing is tracked by a daemon that cannot export.
 * Returns 0 (also when neither option is given: d->ex stays NULL), or -1
 * with a sentence in @err.
 */
int dm_export_start(struct daemon *d, char *err, size_t errlen);
/* The main thread, for each event it drains (and its own): a DESTROY goes
 * into the export's queue, or is counted as dropped when it is full.
 * Never blocks.  dm_export_kick() after a batch wakes the export thread. */
void dm_export_event(struct daemon *d, const struct ct_event *ev);
void dm_export_kick(struct daemon *d);
/* `ctrack stats`' "export" member (main thread); NULL without export. */
struct json_t;
struct json_t *dm_export_stats_json(struct daemon *d);
/* The event-stream clients as a scrape shows them (main thread: when they
 * change; the scrape reads a copy under a lock). */
struct dm_sub_stat {
	uint64_t id;        /* the connection's number, from 1 */
	int pid;
	unsigned uid;
	uint64_t sent, lost;
};
void dm_export_publish_subs(struct daemon *d, const struct dm_sub_stat *s, size_t n,
			    uint64_t lost_at_clients);
/*
 * dm_export_stop - once the workers and the collector stopped and the
 * rings were drained (ctl_server_drain): the export thread takes what is
 * queued, reports the connections still open (unless --ipfix-no-final),
 * gives a TCP collector 5 s to take the rest, and stops; the log says
 * what was sent and lost.  Then the listener stops.  Returns 0, or -1
 * when the export failed (the exit status says so).
 */
int dm_export_stop(struct daemon *d);

/*
 * dm_state.c: --state FILE (issue 25 part 3).
 * dm_state_option - apply --state (@which 0), --state-interval (1) or
 *   --state-damaged (2) with value @v (options.c; @where names it).
 * dm_state_load - at start, before the sources: restore FILE into the
 *   table, timeouts moved by the wall-clock time since the save, and
 *   start the periodic saver.  A missing FILE starts empty.  Returns 0,
 *   or an exit status (cli.h) with a message naming the file in @err.
 * dm_state_tick - the main loop's once-a-second housekeeping: ask the
 *   saver for a save when the interval is up (never waits for it).
 * dm_state_save - at stop, with the sources, workers and collector
 *   stopped: join the saver and write the table as it stands.  Returns 0
 *   or CT_EXIT_INTERNAL (logged).
 */
int dm_state_option(struct dm_options *o, int which, const char *v, const char *where,
		    char *err, size_t errlen);
int dm_state_load(struct daemon *d, char *err, size_t errlen);
void dm_state_tick(struct daemon *d);
int dm_state_save(struct daemon *d, const char *why);

/* cmd_daemon.c: SIGHUP (reread the options, apply what can change), and
 * the settings changed at run time (set): what depends on them. */
void dm_reload(struct daemon *d);
void dm_settings_changed(struct daemon *d);

/* A hook for tests, called right after the table is created (the
 * ThreadSanitizer test wraps the table's RCU flavour so that TSan sees
 * grace periods: tests/concurrency/README.md).  Weak: the tool has none. */
void dm_table_created(struct ct_table *t) __attribute__((weak));

/* Log a line for the operator (stderr: the journal under systemd). */
__attribute__((format(printf, 1, 2)))
void dm_log(const char *fmt, ...);

#endif
