/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dm_sync.h - the daemon's side of conntrackd's sync protocol (issue 27):
 * `ctrack daemon --sync SPEC` (docs/sync.md, "The daemon").
 *
 * The protocol (src/sync/, include/ctrack/sync.h) and the transports
 * (tools/ctrack/sync/) exist on their own; this is the wiring.  Who does
 * what:
 *  - the table's events reach the sync node through the event bus
 *    (evbus.c): the sync node is one more subscriber, fed on the main
 *    thread where the bus is drained, so a packet thread never waits for
 *    the sync link - a full ring drops the event and counts it, and the
 *    drop is repaired by a reconcile of the internal cache against the
 *    table (below);
 *  - everything else runs on the main thread too (ctl_server.c's loop):
 *    the transport's sockets and a timerfd for the node's deadlines are
 *    in one epoll set of their own, which the main loop polls as one
 *    descriptor (dm_sync_fd);
 *  - the node's clock is the daemon's (dclock_now, CLOCK_MONOTONIC), the
 *    one the table's events are stamped with.
 *
 * All functions are for the main thread; with no --sync they do nothing
 * (and the control commands answer that sync is off).
 */
#ifndef CTRACK_DAEMON_DM_SYNC_H
#define CTRACK_DAEMON_DM_SYNC_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ctrack/sync.h"
#include "daemon.h"

/* dm_sync_check - parse the --sync settings (@spec: comma-separated
 * key=value pairs, tools/ctrack/sync/sync_config.h) without opening
 * anything: 0, or -1 with a sentence in @err.  For options.c and --check. */
int dm_sync_check(const char *spec, char *err, size_t errlen);

/* dm_sync_open - start the sync node and its transport from
 * d->opt.sync (nothing when it is empty); before the sources start, so
 * that the node sees the table's first event.  0, or -1 with a sentence
 * in @err (a socket that cannot be bound, ...). */
int dm_sync_open(struct daemon *d, char *err, size_t errlen);
/* dm_sync_close - send what is queued, close the sockets, free. */
void dm_sync_close(struct daemon *d);

/* The descriptor the main loop polls for the sync link (its sockets and
 * its timer); -1 without sync. */
int dm_sync_fd(const struct daemon *d);
/* That descriptor is readable: read the link, run the node's timers. */
void dm_sync_poll(struct daemon *d);

/* One table event (from a drain of the bus, or the main thread's own);
 * @lost events the bus dropped since the last call (ring full). */
void dm_sync_event(struct daemon *d, const struct ct_event *ev);
void dm_sync_lost(struct daemon *d, uint64_t lost);
/* After a batch of events: send what they queued. */
void dm_sync_kick(struct daemon *d);

/* ---- the control commands (ctl_server.c) ---- */

/* Whether sync is on. */
bool dm_sync_enabled(const struct daemon *d);
/* The counters (ctrack sync stats): node, caches, transport, the feed. */
json_t *dm_sync_stats_json(struct daemon *d);
/* One line per live entry of cache @which, formatted by @fo (a listing
 * line: conntrack's format, extended or JSON), passed to @put; returns
 * the number of entries. */
uint64_t dm_sync_list(struct daemon *d, enum ct_sync_cache_id which,
		      const struct fmt_opts *fo,
		      void (*put)(void *arg, const char *line, size_t n), void *arg);
/* conntrackd -n: ask the peer for its whole table. */
void dm_sync_resync(struct daemon *d);
/* conntrackd -B: send our whole internal cache. */
void dm_sync_bulk(struct daemon *d);
/* conntrackd -f: empty one cache; returns the entries removed. */
uint64_t dm_sync_flush(struct daemon *d, enum ct_sync_cache_id which);
/*
 * dm_sync_commit - conntrackd -c: the external cache into the table, so
 * that traffic that moves to this node continues as ESTABLISHED.  Needs
 * the library's whole-entry import (the record layer, src/record/, on
 * another branch); in a build without it this returns -ENOSYS with a
 * sentence in @err and changes nothing.  Returns 0 with @res filled
 * (entries committed, already expired, refused by the table or the
 * record check), or a negative errno with a sentence in @err.
 */
struct dm_sync_commit_result {
	uint64_t committed, expired, failed;
};
int dm_sync_commit(struct daemon *d, struct dm_sync_commit_result *res, char *err,
		   size_t errlen);

#endif
