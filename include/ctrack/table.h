/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctrack/table.h - the connection table and the per-packet entry points.
 *
 * A struct ct_table is a whole tracker: a keyed, RCU-protected hash table
 * of connections, the per-protocol trackers, namespaces (zone 0 always
 * exists), counters, events and the collector.  Everything hangs off the
 * handle; the library has no global state.
 *
 * Threads.  Every thread that calls into a table first attaches
 * (ct_thread_attach) and gets a struct ct_thread: its RCU registration, its
 * own counters (summed when read, never shared on the hot path) and its
 * batch of connections waiting for a grace period.  A ct_thread is used by
 * its own thread only.  Any number of threads may process packets at once.
 *
 * RCU flavour.  A table is created for one liburcu flavour:
 *  - CT_RCU_MEMB (default): readers use urcu-memb read-side sections;
 *    nothing else is asked of the caller.
 *  - CT_RCU_QSBR: for dataplanes that poll.  Read-side sections are free;
 *    in exchange each packet thread reports a quiescent state, which
 *    ct_process_burst() does at its end, and a thread that stops polling
 *    must call ct_thread_offline() (or grace periods, and so memory
 *    reclaim, stall until it comes back).
 *
 * Time is an input.  Every call that may change state takes @now, in
 * nanoseconds of the caller's clock: capture time when replaying, a
 * monotonic clock when live.  Calls on one table must see non-decreasing
 * @now per thread; small disagreements between threads are tolerated.
 *
 * Errors are negative errno values; nothing here prints or exits.
 *
 * Each function below says who may call it ("any thread": attached or
 * not; "an attached thread": the owner of @thr, outside any read-side
 * section of its own), what it costs, which locks it takes (the order
 * among them is the library's business; a caller only needs to know what
 * it must not do from an event handler or a dump callback) and every
 * error it returns.
 */
#ifndef CTRACK_TABLE_H
#define CTRACK_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctrack/packet.h"
#include "ctrack/settings.h"
#include "ctrack/tuple.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ct_table;
struct ct_thread;

enum ct_rcu_flavor {
	CT_RCU_MEMB = 0,
	CT_RCU_QSBR = 1,
};

struct ct_table_config {
	struct ct_settings settings;   /* defaults for zone 0 and the table */
	enum ct_rcu_flavor rcu;
	const uint8_t *hash_key;       /* 16 bytes, or NULL for a random key
					* (tests of hash flooding fix it) */
	uint32_t max_chain;            /* longest row (entries) before an
					* insert is refused as chaintoolong;
					* 0 = default (64) */
	uint32_t resize_load_pct;      /* grow when entries exceed this % of
					* row capacity; 0 = default (75);
					* 101+ disables online resize */
	bool labels;                   /* give entries room for 128-bit
					* labels (ct_table_set_labels) */
	uint32_t resize_growth_pct;    /* a resize makes the table this %
					* of its rows (or more, enough to
					* bring the load to resize_load_pct
					* * 100 / this); 0 = default (125),
					* else 110..400 */
	bool tcp_flags;                /* give TCP entries 8 bytes for the
					* TCP flags seen in each direction
					* (ct_conn_info.tcp_flags; IPFIX's
					* tcpControlBits); a test on the
					* hit path of every packet, an OR
					* of TCP packets of such a table */
	bool nat;                      /* the table does NAT (ctrack/nat.h):
					* ct_pending_confirm gives every
					* connection the null binding for the
					* manipulations not set up, as the
					* kernel's NAT hooks do */
	bool nat_exact_ports;          /* keep the exact port map for the
					* table's source NATs and search ports
					* with it (nat.h, struct
					* ct_nat_portmap) instead of the
					* kernel's 248 random probes */
};

/* ct_table_config_default - any thread, O(1), cannot fail: kernel settings (acct off),
 * memb flavour, random key, chain limit 64, resize at 75% of the slots by
 * 1.25x (so the load stays between 60% and 75%: about 15-18 bytes of rows
 * per entry).  The table starts at settings.buckets rows (at least 64,
 * rounded up to a multiple of 64); the row count need not be a power of
 * two. */
void ct_table_config_default(struct ct_table_config *cfg);

/*
 * ct_table_create - allocate a table.  Any thread; the calling thread is
 * not attached by it.  Cost: maps the rows (settings.buckets of them, 64
 * bytes each, zero pages until written), a 512 KiB array of namespace
 * pointers and the collector's wheel (about 100 KiB), and zone 0; takes a
 * random key from getrandom() unless cfg->hash_key is set.  Returns 0 and
 * sets *@out, or -EINVAL (@cfg or @out NULL, an unknown RCU flavour,
 * resize_growth_pct outside 110..400), -ENOMEM, or the negative errno of
 * getrandom().
 */
int ct_table_create(const struct ct_table_config *cfg, struct ct_table **out);

/*
 * ct_table_destroy - free a table and every connection in it, without
 * emitting events.  Any thread, once no thread is attached any more and
 * the collector thread is stopped; @t NULL is a no-op.  Blocks until
 * every deferred reclaim of the table has run (rcu_barrier, repeated
 * while a namespace teardown's batch is still waiting).  Cannot fail.
 */
void ct_table_destroy(struct ct_table *t);

/* ct_thread_attach - attach the calling thread (RCU registration included,
 * counted: a thread may attach to several tables).  Any thread; takes the
 * table's thread-list lock; allocates the handle (its 1 MB ring of the
 * collector's handles is touched only as it is used).  Returns NULL when
 * out of memory.
 * ct_thread_detach - the owner only, outside any read-side section: hands
 * the thread's pending frees to RCU, folds its counters and count into the
 * table, gives its ring to the collector's wheel (waiting for a collector
 * step in progress: never call it from an event handler the collector
 * runs) and its cached entries back to their slabs, and unregisters from
 * RCU.  @thr NULL is a no-op.  Cannot fail. */
struct ct_thread *ct_thread_attach(struct ct_table *t);
void ct_thread_detach(struct ct_thread *thr);

/*
 * ct_thread_take_next_due - the earliest expiry (in the callers' time)
 * that this thread's packets gave an entry since the previous call - by
 * creating it or by shortening its timeout - or UINT64_MAX if none; each
 * call starts afresh.  A caller that runs the collector in its own time,
 * as a capture replay does, can run it exactly when its clock reaches the
 * smaller of this and the last ct_gc_result.next_due, with no event
 * handler installed.  Only the thread that owns @thr may call it; cost:
 * two plain memory accesses.
 */
uint64_t ct_thread_take_next_due(struct ct_thread *thr);

/* QSBR tables: report a quiescent state (no connection pointers held),
 * or go offline / online around a period of not polling.  The owner only;
 * a few instructions (liburcu's); no-ops for memb tables.  Cannot fail. */
void ct_thread_quiescent(struct ct_thread *thr);
void ct_thread_offline(struct ct_thread *thr);
void ct_thread_online(struct ct_thread *thr);

/* What the tracker decided about one packet (cf. nft's ct state). */
enum ct_verdict_class {
	CT_V_NEW = 0,        /* first packet of a connection (created) */
	CT_V_ESTABLISHED,    /* belongs to a known connection */
	CT_V_RELATED,        /* ICMP error about a known connection */
	CT_V_INVALID,        /* see reason; the table was not changed */
	CT_V_UNTRACKED,      /* not for conntrack (not IP, neighbour
			      * discovery, MLD, a fragment) */
	CT_V_DROP,           /* no room: table full, nothing evictable */
};

enum {
	CT_VF_CREATED = 0x01,   /* this packet created the entry */
	CT_VF_DESTROYED = 0x02, /* this packet ended the entry (RST, refusal) */
	CT_VF_IGNORED = 0x04,   /* accepted but did not update the entry (the
				 * kernel's "ignored" packets) */
	CT_VF_CLASH = 0x08,     /* another thread created it at the same time */
	CT_VF_UNCONFIRMED = 0x10, /* NEW, but never entered in the table: a
				   * router would not forward it
				   * (settings.router) */
	CT_VF_PENDING = 0x20,   /* NEW, waiting for ct_pending_confirm or
				 * ct_pending_drop (ct_classify, nat.h) */
};

struct ct_verdict {
	uint8_t cls;         /* enum ct_verdict_class */
	uint8_t dir;         /* enum ct_dir, for NEW/ESTABLISHED/RELATED */
	uint8_t reason;      /* enum ct_parse_reason, for INVALID/DROP */
	uint8_t flags;       /* CT_VF_* */
	uint8_t l4state;     /* protocol state after the packet */
	uint16_t zone;
};

/*
 * ct_process - track one parsed packet at time @now.  The zone is
 * pkt->tuple.zone.  Packets whose kind is not CT_PKT_TRACKABLE are
 * classified (INVALID with the parser's reason, or UNTRACKED) and counted
 * without touching the table.  The owner of @thr only, outside any
 * read-side section of its own.  Cost: one lookup (a few cache misses
 * when the table is large) plus the protocol's work, a row lock and an
 * allocation from the thread's magazine when it creates; use
 * ct_process_burst() to hide the misses.  Events run on this thread
 * (events.h).  Returns 0, or -EINVAL when @thr, @pkt or @v is NULL; what
 * happened to the packet (no room, no namespace, ...) is in @v, not in the
 * return value.
 */
int ct_process(struct ct_thread *thr, const struct ct_packet *pkt,
	       ct_time_ns now, struct ct_verdict *v);

/*
 * ct_process_burst - track @n packets (n <= CT_BURST_MAX) with the staged
 * lookup: hash all keys, prefetch rows, prefetch entries, compare, then
 * run the trackers in packet order.  Verdicts land in @v[0..n-1].  For a
 * QSBR table the thread reports a quiescent state at the end.  The owner
 * of @thr only.  Returns 0, or -EINVAL when @thr is NULL, @pkts or @v is
 * NULL with @n > 0, or @n > CT_BURST_MAX.
 */
#define CT_BURST_MAX 64
int ct_process_burst(struct ct_thread *thr, const struct ct_packet *const *pkts,
		     unsigned n, ct_time_ns now, struct ct_verdict *v);

/*
 * ct_process_burst_ts - the same, each packet at its own time pkts[i]->ts
 * (for a replay in capture time; the times must not decrease along the
 * burst).  The result is that of ct_process() on each packet in turn, at
 * its time, with no collector pass in between: the caller ends a burst
 * before any packet whose time could see an entry expire (ctrack read:
 * the collector's next due time, and the burst's first time plus the
 * shortest timeout).  Same caller, cost and errors as ct_process_burst.
 */
int ct_process_burst_ts(struct ct_thread *thr, const struct ct_packet *const *pkts,
			unsigned n, struct ct_verdict *v);

/* Connection status bits, numbered as the kernel's IPS_* bits. */
enum {
	CT_ST_EXPECTED = 1u << 0,
	CT_ST_SEEN_REPLY = 1u << 1,
	CT_ST_ASSURED = 1u << 2,
	CT_ST_CONFIRMED = 1u << 3,
	/* the NAT binding (ctrack/nat.h) changed the source / destination:
	 * the reply tuple is not the inverted original */
	CT_ST_SRC_NAT = 1u << 4,
	CT_ST_DST_NAT = 1u << 5,
	/* the source / destination manipulation was set up (null bindings
	 * included) */
	CT_ST_SRC_NAT_DONE = 1u << 7,
	CT_ST_DST_NAT_DONE = 1u << 8,
	CT_ST_DYING = 1u << 9,
	CT_ST_NAT_CLASH = 1u << 12,  /* IPS_NAT_CLASH: a UDP-like entry that
				      * lost a confirm race and entered the
				      * table under its reply tuple only
				      * (ct_pending_confirm, ctrack/nat.h);
				      * UDP/GRE never assure it, and its
				      * timeout is not refreshed */
};
#define CT_ST_NAT_MASK (CT_ST_SRC_NAT | CT_ST_DST_NAT)
#define CT_ST_NAT_DONE_MASK (CT_ST_SRC_NAT_DONE | CT_ST_DST_NAT_DONE)

/* A copy of one connection, as listings and events show it. */
struct ct_conn_info {
	struct ct_tuple orig;
	struct ct_tuple reply;
	uint64_t id;                 /* stable while the entry lives */
	ct_time_ns expires;          /* absolute, caller's time */
	ct_time_ns first_seen;       /* 0 unless settings.timestamp */
	ct_time_ns last_seen;        /* 0 unless settings.timestamp */
	uint64_t packets[2];         /* by enum ct_dir; 0 unless acct */
	uint64_t bytes[2];
	uint32_t status;             /* CT_ST_* */
	uint32_t mark;
	uint8_t l4state;             /* protocol state number */
	uint8_t tcp_flags[2];        /* by enum ct_dir: CT_TCP_* flags of
				      * every TCP packet counted in that
				      * direction, OR-ed; 0 unless
				      * config.tcp_flags (issue 26) */
	/* TCP (zero for other protocols): what ctnetlink's
	 * CTA_PROTOINFO_TCP shows besides the state, by enum ct_dir - each
	 * direction's window scale (0..14) and flags (IP_CT_TCP_FLAG_*:
	 * 0x01 window scale offered, 0x02 SACK permitted, 0x04 close
	 * initiated, 0x08 be liberal, 0x10 data unacknowledged, 0x20 max
	 * ack set; CT_RECORD_TCPF_* in ctrack/record.h) */
	struct {
		uint8_t wscale[2];
		uint8_t flags[2];
	} tcp;
	const char *state_name;      /* "ESTABLISHED", ..., or NULL for
				      * protocols without states */
	uint8_t labels[16];
};

/*
 * ct_table_dump - call @fn for every live connection (optionally only zone
 * @zone, or all with zone < 0).  Runs inside an RCU read-side section of
 * the calling (attached) thread; entries inserted or removed meanwhile may
 * or may not be seen, none is seen twice.  @fn returns 0 to go on, anything
 * else to stop (returned).  An attached thread.  Cost: O(table rows +
 * entries); takes the table's resize lock for the whole walk (online
 * resizing pauses, inserts do not) and each entry's lock while it is
 * copied.  @fn runs with the resize lock held and inside the read-side
 * section: it must not dump, flush, destroy namespaces or detach.
 * Returns 0 when every entry was seen, else what @fn returned.
 */
typedef int (*ct_dump_fn)(const struct ct_conn_info *ci, void *arg);
int ct_table_dump(struct ct_thread *thr, int zone, ct_dump_fn fn, void *arg);

/* ct_table_lookup - copy out the entry holding @tuple (either direction)
 * into @ci (if not NULL).  An attached thread; cost: one hash and one row
 * (its chain), the entry's lock while it is copied; no allocation, no
 * event.  Returns 1 found (and *dir set if @dir), 0 not found (also for an
 * entry being removed); no error. */
int ct_table_lookup(struct ct_thread *thr, const struct ct_tuple *tuple,
		    struct ct_conn_info *ci, enum ct_dir *dir);

/* ct_table_set_mark / ct_table_set_labels - what iptables' CONNMARK and
 * connlabel do: set the mark (bits in @mask replaced by @mark) or labels of
 * the entry holding @tuple; an UPDATE event (CT_EVW_MARK / CT_EVW_LABEL)
 * when the value changed, delivered after the entry's lock is released.
 * An attached thread; cost as ct_table_lookup.  Returns 1 done (also when
 * the value was already that), 0 no such entry; ct_table_set_labels
 * returns -ENOSPC when the table was created without room for labels
 * (ct_table_config.labels false), and changes nothing. */
int ct_table_set_mark(struct ct_thread *thr, const struct ct_tuple *tuple,
		      uint32_t mark, uint32_t mask, ct_time_ns now);
int ct_table_set_labels(struct ct_thread *thr, const struct ct_tuple *tuple,
			const uint8_t labels[16], ct_time_ns now);

/*
 * ct_table_flush - remove every entry (or those of zone @zone >= 0) with
 * DESTROY events, as `conntrack -F` does.  Memory is reclaimed after a
 * grace period; the caller does not wait.  An attached thread.  Cost:
 * O(rows + entries) for the whole table, holding the resize lock (its
 * DESTROY events run with it held: a handler must not dump or flush); for
 * one zone, O(that zone's entries) - it walks the namespace's own slabs,
 * and its events follow the walk.  Returns the number removed (0 for a
 * zone without a namespace, or one past 65535); no error.
 */
long ct_table_flush(struct ct_thread *thr, int zone, ct_time_ns now);

/* ct_table_count - entries in the table (all zones).  Any thread; takes the
 * thread-list lock, O(threads); a snapshot that concurrent work may have
 * moved on from.  Cannot fail. */
uint64_t ct_table_count(const struct ct_table *t);

/* ct_table_rows - current number of hash rows (changes on resize).  Any
 * thread; one load, no lock.  Cannot fail. */
uint64_t ct_table_rows(const struct ct_table *t);

/* ct_table_get_settings - a copy of zone 0's settings (any thread; takes
 * the namespace lock, so not for the packet path, nor from an event
 * handler a teardown runs).  Cannot fail. */
void ct_table_get_settings(const struct ct_table *t, struct ct_settings *out);

/*
 * ct_conn_size - bytes one entry of protocol @l4 occupies at most (object
 * only, without its share of the hash rows): an IPv6 entry's size, which
 * bounds an IPv4 one's.  For documentation and benchmarks.  Any thread;
 * takes the namespace lock (it reads zone 0's settings).  Cannot fail.
 */
size_t ct_conn_size(const struct ct_table *t, uint8_t l4);

/*
 * ct_conn_size_l3 - the same for an entry of family @l3 (enum ct_l3):
 * an IPv4 entry keeps its addresses in 8 bytes instead of 32.
 */
size_t ct_conn_size_l3(const struct ct_table *t, uint8_t l3, uint8_t l4);

/* l4 protocol and state names as conntrack prints them: constant strings.
 * Any thread, O(1), cannot fail. */
const char *ct_l4_name(uint8_t l4);               /* "tcp", ..., "unknown" */
const char *ct_l4_state_name(uint8_t l4, uint8_t state); /* NULL if none */

#ifdef __cplusplus
}
#endif

#endif /* CTRACK_TABLE_H */
