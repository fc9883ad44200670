/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctrack/nat.h - network address translation as Linux's nf_nat does it.
 *
 * Three parts, usable on their own today and joined to the table in phase 2
 * (docs/nat-design.md):
 *
 *  1. Tuple choice.  ct_nat_setup() is nf_nat_setup_info(): given a new
 *     connection's binding (its original tuple and its reply tuple so far)
 *     and a range (struct ct_nat_range, the kernel's nf_nat_range2), it
 *     picks the translated tuple exactly as get_unique_tuple() does - keep
 *     the original tuple when it is in range and unused, reuse the mapping
 *     of an existing connection from the same source (find_appropriate_src),
 *     choose the address with find_best_ips_proto()'s jhash2, search the
 *     port (ICMP id) in nf_nat_l4proto_unique_tuple()'s classes and attempt
 *     schedule - and rewrites the reply tuple.  Whether a candidate is in
 *     use is the caller's to say (struct ct_nat_env: a callback; phase 2
 *     points it at the table); so are the random numbers the kernel draws
 *     and the index of existing source mappings (struct ct_nat_src_index,
 *     with an in-memory implementation here).  Beside the kernel's search,
 *     an exact one (struct ct_nat_portmap) finds a free port whenever one
 *     exists, in bounded time.
 *
 *  2. Packet translation.  ct_nat_translate() rewrites a parsed frame in
 *     place for its direction, as nf_nat_manip_pkt() and
 *     nf_nat_icmp_reply_translation() do: addresses, ports or ICMP id, the
 *     IPv4 header checksum, the layer-4 checksum incrementally (TCP, UDP,
 *     UDP-Lite, ICMPv6 with its pseudo-header; SCTP's CRC32c recomputed),
 *     and for ICMP/ICMPv6 errors the quoted packet along with the outer
 *     header.  The operations are the kernel's, in the kernel's order, so
 *     the bytes are the kernel's - including which of the two ones'
 *     complement zeros (0x0000, 0xffff) a checksum ends as.
 *
 *  3. The two-step first packet through the table (at the end of this
 *     file): ct_classify() stops before a new entry is inserted, the
 *     caller sets NAT up on the pending entry and confirms or drops it;
 *     an entry whose binding changed a tuple is found from both of its
 *     keys.
 *
 * Byte order follows ctrack/tuple.h: addresses in network order, ports and
 * ids in host order.  Nothing here allocates except the in-memory index
 * and the port map (their create/acquire calls), prints or exits.  Errors
 * are negative errno values; translation outcomes are enum
 * ct_nat_verdict values with a reason.
 *
 * Thread safety.  ct_nat_setup() and ct_nat_translate() keep no state of
 * their own: they may run on any number of threads at once, each with its
 * own struct ct_nat_env (the env's random state and counters are written).
 * The in-memory source index and the port map are not thread-safe: one
 * thread at a time, or the caller's lock (phase 2 stripes them by key).
 */
#ifndef CTRACK_NAT_H
#define CTRACK_NAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctrack/packet.h"
#include "ctrack/table.h"
#include "ctrack/tuple.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------
 * Ranges, as the kernel's struct nf_nat_range2
 * (include/uapi/linux/netfilter/nf_nat.h; the same bit values).
 * ------------------------------------------------------------------- */
enum ct_nat_range_flags {
	CT_NAT_RANGE_MAP_IPS = 1u << 0,          /* map addresses into min..max */
	CT_NAT_RANGE_PROTO_SPECIFIED = 1u << 1,  /* map ports/ids into min..max */
	CT_NAT_RANGE_PROTO_RANDOM = 1u << 2,     /* nft "random" */
	CT_NAT_RANGE_PERSISTENT = 1u << 3,       /* same address for a source,
						  * whatever the destination */
	CT_NAT_RANGE_PROTO_RANDOM_FULLY = 1u << 4, /* nft "fully-random" */
	CT_NAT_RANGE_PROTO_OFFSET = 1u << 5,     /* port = min + (port - base) */
	CT_NAT_RANGE_NETMAP = 1u << 6,           /* prefix mapping: the address
						  * bits outside the mask kept */
};
#define CT_NAT_RANGE_PROTO_RANDOM_ALL \
	(CT_NAT_RANGE_PROTO_RANDOM | CT_NAT_RANGE_PROTO_RANDOM_FULLY)
#define CT_NAT_RANGE_MASK 0x7fu

struct ct_nat_range {
	uint32_t flags;            /* enum ct_nat_range_flags */
	union ct_addr min_addr;    /* network order, as in a tuple */
	union ct_addr max_addr;
	uint16_t min_proto;        /* port, ICMP id or GRE key: host order */
	uint16_t max_proto;
	uint16_t base_proto;       /* CT_NAT_RANGE_PROTO_OFFSET only */
};

/* Which side a manipulation rewrites: the kernel's nf_nat_manip_type.
 * Source NAT and masquerade are SRC (POSTROUTING), destination NAT DST
 * (PREROUTING). */
enum ct_nat_manip {
	CT_NAT_MANIP_SRC = 0,
	CT_NAT_MANIP_DST = 1,
};

/* ---------------------------------------------------------------------
 * A binding: what an entry holds once NAT is set up.
 *
 * orig is the original tuple as the first packet carried it; reply the
 * tuple replies carry (the inverted original for an un-NATed connection).
 * status holds the kernel's bits: SRC/DST set when that manipulation
 * changed the tuple (IPS_SRC_NAT / IPS_DST_NAT), *_DONE once the
 * manipulation was set up, null binding included (IPS_*_NAT_DONE).
 * ------------------------------------------------------------------- */
enum ct_nat_status {
	CT_NAT_S_SRC = 1u << 0,        /* IPS_SRC_NAT */
	CT_NAT_S_DST = 1u << 1,        /* IPS_DST_NAT */
	CT_NAT_S_SRC_DONE = 1u << 2,   /* IPS_SRC_NAT_DONE */
	CT_NAT_S_DST_DONE = 1u << 3,   /* IPS_DST_NAT_DONE */
	CT_NAT_S_CLASH = 1u << 4,      /* IPS_NAT_CLASH: a UDP entry that lost a
					* confirm race and was merged (phase 2) */
};
#define CT_NAT_S_MASK (CT_NAT_S_SRC | CT_NAT_S_DST)
#define CT_NAT_S_DONE_MASK (CT_NAT_S_SRC_DONE | CT_NAT_S_DST_DONE)

struct ct_nat_binding {
	struct ct_tuple orig;
	struct ct_tuple reply;
	uint32_t status;               /* enum ct_nat_status */
};

/*
 * ct_nat_binding_init - the binding of a new connection before any NAT:
 * reply = the inverted @orig, status 0.  Returns false when @orig has no
 * reply form (ct_tuple_invert), as for an ICMP type that is no query.
 */
bool ct_nat_binding_init(struct ct_nat_binding *b, const struct ct_tuple *orig);

/*
 * ct_nat_binding_from_tuples - a binding from an entry's two tuples, as
 * `conntrack -L` or an event prints them: status SRC when the reply's
 * destination (address, and port unless ICMP) differs from the original's
 * source, DST when the reply's source differs from the original's
 * destination, both DONE.  An ICMP id changed with no address change is
 * put down to SRC; the bytes ct_nat_translate writes are the same either
 * way.
 */
void ct_nat_binding_from_tuples(struct ct_nat_binding *b,
				const struct ct_tuple *orig,
				const struct ct_tuple *reply);

/* ---------------------------------------------------------------------
 * What tuple choice asks of its caller.
 * ------------------------------------------------------------------- */

/* What a "taken?" question is about (the kernel function it stands for). */
enum ct_nat_probe_kind {
	/* the original tuple, unchanged (get_unique_tuple's first try,
	 * nf_nat_used_tuple_new): a clash with an un-NATed entry that is this
	 * connection's exact reverse may be called free for protocols that
	 * allow clashes (UDP...), and confirm resolves it */
	CT_NAT_PROBE_ORIGINAL = 0,
	/* a mapped candidate (nf_nat_used_tuple) */
	CT_NAT_PROBE_MAPPED = 1,
	/* a candidate of the port search (nf_nat_used_tuple_harder): with
	 * attempts_left <= CT_NAT_HARDER_THRESH the table may evict a TCP
	 * TIME_WAIT entry of an earlier source NAT whose sequence numbers the
	 * new SYN has passed, and then call the tuple free */
	CT_NAT_PROBE_SEARCH = 2,
};

#define CT_NAT_MAX_ATTEMPTS 128        /* NF_NAT_MAX_ATTEMPTS */
#define CT_NAT_HARDER_THRESH 32        /* NF_NAT_HARDER_THRESH */

struct ct_nat_probe {
	/* the reply tuple the candidate would give the connection: it is
	 * taken when another entry holds it, as its original or its reply
	 * (nf_conntrack_tuple_taken on the inverted candidate) */
	const struct ct_tuple *reply;
	/* the connection's own binding (orig and reply as they are before
	 * this manipulation); the entry asking is never "another entry" */
	const struct ct_nat_binding *self;
	void *conn;                    /* the caller's opaque handle of the
					* new connection (ct_nat_setup @conn) */
	uint16_t attempts_left;        /* CT_NAT_PROBE_SEARCH: probes left in
					* this round, this one included */
	uint8_t kind;                  /* enum ct_nat_probe_kind */
};

/* true when the probed reply tuple is in use.  May be called many times
 * per setup (at most 248 + 3 with the kernel's search). */
typedef bool (*ct_nat_taken_fn)(void *arg, const struct ct_nat_probe *probe);

/*
 * The index of existing source mappings (the kernel's nf_nat_bysource),
 * for find_appropriate_src: every connection that has had a source
 * manipulation set up (null bindings included), keyed by its original
 * source - zone, layer-3 and layer-4 protocol, source address and source
 * port (ICMP id).  foreach calls @fn with the reply tuple of each such
 * connection whose original tuple has the same source as @orig, newest
 * first (the kernel adds at the head of its chain), until @fn returns
 * true; it returns true when @fn did.
 */
struct ct_nat_src_index {
	bool (*foreach)(void *idx, const struct ct_tuple *orig,
			bool (*fn)(void *fn_arg, const struct ct_tuple *reply),
			void *fn_arg);
	void *idx;
};

/* ---- the in-memory source index (tests, tools; phase 2 links entries) */
struct ct_nat_bysrc;

/* ct_nat_bysrc_create - an empty index sized for about @hint entries.
 * Returns NULL when out of memory. */
struct ct_nat_bysrc *ct_nat_bysrc_create(size_t hint);
void ct_nat_bysrc_destroy(struct ct_nat_bysrc *ix);
/* ct_nat_bysrc_add - index a connection's binding (at the head of its
 * source's chain).  0, or -ENOMEM.  Cost: O(1) amortised. */
int ct_nat_bysrc_add(struct ct_nat_bysrc *ix, const struct ct_nat_binding *b);
/* ct_nat_bysrc_del - remove the binding with these two tuples; 0, or
 * -ENOENT.  Cost: the length of its source's chain. */
int ct_nat_bysrc_del(struct ct_nat_bysrc *ix, const struct ct_nat_binding *b);
size_t ct_nat_bysrc_count(const struct ct_nat_bysrc *ix);
/* ct_nat_bysrc_ops - the index as a struct ct_nat_src_index. */
struct ct_nat_src_index ct_nat_bysrc_ops(struct ct_nat_bysrc *ix);

/* ---- the exact port search ------------------------------------------
 *
 * The kernel's search probes at most 248 candidates (128 consecutive from
 * a random offset, then 64, 32, 16 and 8 from new random offsets) and then
 * gives up with a taken tuple: "tuple space exhaustion" while free ports
 * remain (with 99% of a range in use, about 8% of new connections).  A
 * port map knows which ports are in use for each key - the candidate
 * tuple with its varying port zeroed, i.e. (zone, protocol, NAT address,
 * peer address and port) for source NAT - and finds the first free one
 * at or after the kernel's first candidate, cyclically, in bounded time:
 * a key with few ports in use keeps them in a sorted array of up to 32,
 * one with more a 65536-bit map with two summary levels (8.3 KiB).
 *
 * The map is a hint, the taken callback the authority: every port the
 * map calls free is still probed, and a port the callback calls taken
 * (an entry the map was not told about) is skipped.  The time bound holds
 * when the map holds every occupant of its keys; phase 2 acquires at
 * confirm and releases at destroy for every source-NATed entry.
 */
struct ct_nat_portmap;

struct ct_nat_portmap *ct_nat_portmap_create(size_t hint);
void ct_nat_portmap_destroy(struct ct_nat_portmap *pm);
/* ct_nat_portmap_acquire / _release - the connection with this binding
 * now holds / no longer holds its translated port.  @manip says which
 * side was translated (the port that varies).  acquire: 0, -EEXIST
 * (already held), -ENOMEM; release: 0, -ENOENT. */
int ct_nat_portmap_acquire(struct ct_nat_portmap *pm,
			   const struct ct_nat_binding *b,
			   enum ct_nat_manip manip);
int ct_nat_portmap_release(struct ct_nat_portmap *pm,
			   const struct ct_nat_binding *b,
			   enum ct_nat_manip manip);
/* ports in use under the key of @candidate (an orig-side tuple) */
uint32_t ct_nat_portmap_used(const struct ct_nat_portmap *pm,
			     const struct ct_tuple *candidate,
			     enum ct_nat_manip manip);
size_t ct_nat_portmap_keys(const struct ct_nat_portmap *pm);
size_t ct_nat_portmap_bytes(const struct ct_nat_portmap *pm);

/* ---- what tuple choice counts (the caller sums them) ---------------- */
struct ct_nat_select_stats {
	uint64_t setups;          /* ct_nat_setup calls that bound */
	uint64_t null_bindings;   /* of which null bindings */
	uint64_t kept_original;   /* step 1: the original tuple kept */
	uint64_t source_map;      /* step 1: an existing source's mapping */
	uint64_t unchanged_port;  /* step 3: the address mapped, port kept */
	uint64_t searched;        /* the port search ran */
	uint64_t probes;          /* taken callbacks made by the search */
	uint64_t exhausted;       /* no free tuple found (ctrack's nat
				   * exhaustion counter; the kernel goes on
				   * and fails at confirm: insert_failed) */
};

/*
 * The caller's side of tuple choice.  One per thread (it is written).
 *
 *   taken        required; see ct_nat_taken_fn
 *   bysrc        optional: without it find_appropriate_src finds nothing
 *   rand16       optional: the kernel's get_random_u16(); NULL uses rng,
 *                a splitmix64 state the caller seeds (ct_nat_env_init
 *                seeds it from getrandom(2)); tests give a sequence
 *   portmap      optional: non-NULL selects the exact port search
 *   stats        optional: counters added to
 *   prefetch     optional: told, with taken_arg, of a candidate (original
 *                side, as a taken callback's probe inverts it) that the
 *                kernel's search will probe soon unless it stops first:
 *                once a probe of a round was taken, the next ones of that
 *                round, up to 8 ahead, so that the caller can start
 *                fetching what their "taken?" questions will read.  A hint:
 *                it must answer nothing and change nothing the choice
 *                depends on (the probes, their order and the random draws
 *                are the kernel's with or without it).  Cost: the caller's.
 */
struct ct_nat_env {
	ct_nat_taken_fn taken;
	void *taken_arg;
	struct ct_nat_src_index bysrc;
	uint16_t (*rand16)(void *arg);
	void *rand_arg;
	uint64_t rng;
	struct ct_nat_portmap *portmap;
	struct ct_nat_select_stats *stats;
	void (*prefetch)(void *arg, const struct ct_tuple *cand);
};

/* ct_nat_env_init - zero @env, set @taken, seed rng from getrandom(2)
 * (from the clock if that fails). */
void ct_nat_env_init(struct ct_nat_env *env, ct_nat_taken_fn taken, void *arg);

/* ---------------------------------------------------------------------
 * Tuple choice.
 * ------------------------------------------------------------------- */

/* ct_nat_setup / ct_nat_null_binding / ct_nat_masquerade results */
enum ct_nat_setup_result {
	CT_NAT_BOUND = 0,          /* *b updated; the tuple is free as far as
				    * the taken callback could tell */
	CT_NAT_BOUND_TAKEN = 1,    /* *b updated with the kernel's last
				    * candidate, which is taken: the kernel
				    * keeps it and its confirm fails
				    * (insert_failed, drop); counted as
				    * exhausted */
	CT_NAT_NOT_MAPPED = 2,     /* masquerade of a source 0.0.0.0: nothing
				    * done (the next rule, or the null
				    * binding, decides) */
};

/*
 * ct_nat_setup - nf_nat_setup_info(): set up the @manip manipulation of
 * the connection whose binding is *@b into @range.  The current tuple is
 * the inverted b->reply (so a DST manipulation set up first is seen by a
 * SRC one, as at the kernel's two hooks); the chosen tuple's inverse
 * becomes b->reply, CT_NAT_S_SRC/DST is set when it changed, and
 * CT_NAT_S_*_DONE in any case.  @conn is passed to the taken callback.
 * The caller indexes the binding for later find_appropriate_src lookups
 * (ct_nat_bysrc_add) when it confirms the connection.
 *
 * Returns enum ct_nat_setup_result, or -EEXIST (this manipulation was
 * already set up: the kernel WARNs and drops), -EINVAL (@range's flags
 * outside CT_NAT_RANGE_MASK, min > max addresses, a bad @manip, no taken
 * callback).  Cost: with a port search, one taken callback per probe (at
 * most 248 with the kernel's search; with the port map, 1 when the map
 * is complete); otherwise one or two callbacks.
 */
int ct_nat_setup(struct ct_nat_env *env, struct ct_nat_binding *b,
		 const struct ct_nat_range *range, enum ct_nat_manip manip,
		 void *conn);

/*
 * ct_nat_null_binding - __nf_nat_alloc_null_binding(): the connection no
 * rule mapped keeps its address for @manip (a range of just that
 * address, no port range), so a rule added later never applies to it
 * mid-connection - but it still gets a new port if its tuple clashes.
 */
int ct_nat_null_binding(struct ct_nat_env *env, struct ct_nat_binding *b,
			enum ct_nat_manip manip, void *conn);

/*
 * ct_nat_masquerade - nf_nat_masquerade_ipv4/ipv6(): source NAT to
 * @addr (the outgoing interface's address; the caller chooses it as
 * inet_select_addr / ipv6_dev_get_saddr would), with @range's flags and
 * ports (its addresses are ignored; may be NULL).  An IPv4 connection
 * from 0.0.0.0 is left alone (CT_NAT_NOT_MAPPED), as the kernel does.
 */
int ct_nat_masquerade(struct ct_nat_env *env, struct ct_nat_binding *b,
		      const struct ct_nat_range *range,
		      const union ct_addr *addr, void *conn);

/* ---------------------------------------------------------------------
 * Packet translation.
 * ------------------------------------------------------------------- */
enum ct_nat_verdict {
	CT_NAT_V_OK = 0,             /* translated (or nothing to change) */
	/* dropped, as the kernel drops: nothing was written */
	CT_NAT_V_NOT_IN_FRAME,       /* the packet's headers are not inside
				      * the frame given (a caller error) */
	CT_NAT_V_NOT_TRACKABLE,      /* not a CT_PKT_TRACKABLE packet */
	CT_NAT_V_FRAGMENT,           /* a fragment: translate the reassembled
				      * datagram (ct_defrag) instead */
	CT_NAT_V_TRUNCATED,          /* a header to rewrite is cut short */
	CT_NAT_V_ICMP_INNER_TRUNCATED, /* an ICMP error quotes too little of
				      * the packet to translate it back */
	CT_NAT_V_ICMP_INNER_BAD,     /* the quoted header is no IP header of
				      * the family (version, IPv4 length < 20;
				      * the kernel would rewrite ports over the
				      * quoted IP header itself) */
	CT_NAT_V_ICMP_BAD_CSUM,      /* an ICMP error whose checksum is wrong
				      * (nf_ip_checksum in the reply
				      * translation) */
	CT_NAT_V_ICMP_REDIRECT,      /* a redirect for a NATed connection */
	CT_NAT_V_GRE_VERSION,        /* GRE of a version NAT cannot rewrite */
	CT_NAT_V_TTL_EXCEEDED,       /* CT_NAT_XLATE_FORWARD: TTL / hop limit
				      * would reach 0 (ip_forward drops it) */
	CT_NAT_V_MAX
};

const char *ct_nat_verdict_name(enum ct_nat_verdict v);

enum ct_nat_xlate_flags {
	/* rewrite as a Linux router forwards: the destination manipulation
	 * (PREROUTING), then TTL / hop limit minus one with the kernel's
	 * incremental IPv4 checksum update (ip_decrease_ttl), then the
	 * source manipulation (POSTROUTING) - so the result is, byte for
	 * byte, what the router sends, MACs aside */
	CT_NAT_XLATE_FORWARD = 1u << 0,
};

/* What a translation did, for counters and tests. */
struct ct_nat_xlate_info {
	uint8_t manips;          /* CT_NAT_S_SRC / CT_NAT_S_DST applied */
	bool icmp_error;         /* an ICMP error: the reply translation
				  * handled it (whether or not it changed it) */
	bool csum_incremental;   /* an ICMP error's checksum was updated
				  * incrementally, not recomputed, because
				  * the capture does not hold the whole
				  * message (the value can differ from the
				  * kernel's only as 0x0000 vs 0xffff) */
	bool sctp_csum_skipped;  /* an SCTP CRC32c could not be recomputed
				  * (payload not captured) */
};

/*
 * ct_nat_translate - rewrite @pkt, parsed from @frame (@frame_len bytes
 * present, the buffer ct_parse_frame was given), in place, as the NAT of
 * the connection with binding @b sends it on: a packet in direction @dir
 * gets the inverse of the other direction's tuple, for each manipulation
 * b->status holds (original direction: DST if CT_NAT_S_DST, SRC if
 * CT_NAT_S_SRC; reply direction: DST if CT_NAT_S_SRC, SRC if
 * CT_NAT_S_DST).  An ICMP or ICMPv6 error (pkt->u.icmp.is_error) is an
 * error about the connection, related to it in direction @dir: its quoted
 * packet gets the other direction's tuple, its outer header the inverse,
 * and its checksum is recomputed.  @pkt is not updated: parse the frame
 * again to see the result.
 *
 * Checksums: IPv4 header and TCP/UDP/UDP-Lite/ICMP/ICMPv6 incrementally
 * (RFC 1624, the kernel's csum_replace/inet_proto_csum_replace); a zero
 * UDP checksum (none) stays zero, in both families as in the kernel; a
 * UDP or UDP-Lite checksum that comes out 0 is written 0xffff; SCTP's
 * CRC32c is recomputed over the packet.  Incremental updates need only
 * the headers, so snaplen-cut frames translate correctly.
 *
 * Returns CT_NAT_V_OK, or a drop verdict with nothing written.  Never
 * writes outside @frame[0, @frame_len).  @info may be NULL.  Cost: tens
 * of nanoseconds for TCP/UDP; a pass over the packet for SCTP and ICMP
 * errors.  Thread-safe (touches only @frame and @info).
 */
enum ct_nat_verdict ct_nat_translate(uint8_t *frame, uint32_t frame_len,
				     const struct ct_packet *pkt,
				     const struct ct_nat_binding *b,
				     enum ct_dir dir, unsigned flags,
				     struct ct_nat_xlate_info *info);

/* ---------------------------------------------------------------------
 * The two-step first packet, through the table.
 *
 * ct_process() keeps its one-call path.  A dataplane with a policy calls
 * ct_classify() instead: a packet of a confirmed entry is tracked as by
 * ct_process() and comes back CT_CLASS_TRACKED with its entry's binding
 * (an ICMP error about an entry CT_CLASS_RELATED, with the binding of the
 * entry it quotes): translate it with ct_nat_translate().  A packet that
 * would create an entry comes back CT_CLASS_PENDING, with an unconfirmed
 * entry that is not in the table (the kernel's unconfirmed conntrack,
 * Open vSwitch's ct() without commit): the tracker has run on it, room
 * was made (early drop, as at the kernel's allocation), nothing else.
 * The caller then sets NAT up on it (ct_pending_nat, ct_pending_masquerade:
 * ct_nat_setup with the table as the "taken?" authority) and confirms it
 * (ct_pending_confirm: the entry enters the table under its keys, its
 * NEW event is delivered, its counters counted) or drops it
 * (ct_pending_drop: nothing left behind - no entry, no event, no counter
 * but the packet's).  The pending entry lives in the thread's handle: one
 * at a time per thread, valid until it is confirmed or dropped or the
 * thread classifies its next packet (which drops it).
 *
 * "Taken?" is a lookup of both directions, as nf_conntrack_tuple_taken:
 * another live entry holds the candidate reply tuple as its original or
 * its reply tuple.  An expired entry met there is reaped (a DESTROY
 * event).  In the search's last 32 probes of a round a TCP SYN may evict
 * an entry of an earlier source NAT in TIME_WAIT or CLOSE whose sequence
 * numbers the new SYN has passed (nf_nat_used_tuple_harder; a DESTROY
 * event), and the original tuple of a UDP-like protocol may clash with
 * the exact reverse flow (nf_nat_used_tuple_new).  Confirm checks both
 * keys again under the rows' locks and resolves a clash as the kernel's
 * __nf_conntrack_confirm: see ct_pending_confirm.
 *
 * The source index (find_appropriate_src) is kept in the table: every
 * confirmed entry whose source was translated (CT_ST_SRC_NAT) is linked
 * into it at confirm and unlinked when it leaves the table, by whatever
 * removes it.  With ct_table_config.nat_exact_ports the exact port map is
 * kept at the same two points, and the port search uses it.
 *
 * Threads: the owner of @thr, outside any read-side section of its own;
 * any number of threads at once, each with its own pending entry.
 * ------------------------------------------------------------------- */
struct ct_table;
struct ct_thread;
struct ct_pending;

enum ct_class {
	CT_CLASS_TRACKED = 0,   /* an existing entry: v.dir, binding */
	CT_CLASS_PENDING,       /* a new connection: decide, then confirm or
				 * drop */
	CT_CLASS_RELATED,       /* an ICMP error about an entry: v.dir (the
				 * error's direction), binding */
	CT_CLASS_OTHER,         /* nothing to translate: v says why (INVALID,
				 * UNTRACKED, DROP, a NEW packet that a
				 * router would not forward, one that made
				 * and ended its entry at once) */
};

struct ct_classified {
	struct ct_verdict v;             /* as ct_process gives it; PENDING:
					  * cls CT_V_NEW, flags CT_VF_PENDING */
	enum ct_class cls;
	/* TRACKED / RELATED: the entry's binding, when it has one (nat
	 * true: binding.status holds CT_NAT_S_SRC / _DST); PENDING: the
	 * new connection's binding so far (its reply tuple the inverted
	 * original) */
	bool nat;
	struct ct_nat_binding binding;
	struct ct_pending *pending;      /* PENDING */
};

/*
 * ct_classify - track @pkt at @now (ct_process's checks, lookup and
 * tracker), stopping before a new entry is inserted.  A pending entry the
 * thread still had is dropped first.  Returns 0, or -EINVAL (@thr, @pkt
 * or @out NULL), -ENOMEM (no room for the thread's pending entry: the
 * packet is then DROP with CT_PR_NO_MEMORY, counted as drop).  Cost: as
 * ct_process, plus the binding copied for a packet of a NAT entry.
 */
int ct_classify(struct ct_thread *thr, const struct ct_packet *pkt,
		ct_time_ns now, struct ct_classified *out);

/*
 * ct_pending_nat - ct_nat_setup(@range, @manip) on the pending entry's
 * binding, with the table as the "taken?" authority, the table's source
 * index and (ct_table_config.nat_exact_ports) port map, and the thread's
 * random numbers.  Set DST up before SRC (the kernel's PREROUTING before
 * POSTROUTING); each at most once.  Returns ct_nat_setup's results
 * (CT_NAT_BOUND_TAKEN is also counted as nat_exhausted), or -EINVAL (@p
 * not the thread's pending entry, a bad range).
 * ct_pending_masquerade - the same for ct_nat_masquerade(@addr).
 */
int ct_pending_nat(struct ct_thread *thr, struct ct_pending *p,
		   const struct ct_nat_range *range, enum ct_nat_manip manip);
int ct_pending_masquerade(struct ct_thread *thr, struct ct_pending *p,
			  const struct ct_nat_range *range,
			  const union ct_addr *addr);

/*
 * ct_thread_nat_random - the random numbers @thr's NAT setups draw where
 * the kernel calls get_random_u16() (a source NAT search's offset,
 * `random`, `fully-random`): @rand16(@arg) from now on, or with @rand16
 * NULL the thread's own (splitmix64, seeded from getrandom(2) at its
 * first setup).  For replays that must make the kernel's choice where the
 * kernel drew a number (ctrack read --nat-random-replay) and for tests.
 * The owner of @thr.  Returns 0, or -ENOMEM.
 */
int ct_thread_nat_random(struct ct_thread *thr, uint16_t (*rand16)(void *arg), void *arg);

/* ct_pending_binding - the pending entry's binding as it stands. */
const struct ct_nat_binding *ct_pending_binding(const struct ct_pending *p);

/* ct_pending_confirm results (>= 0) */
enum ct_confirm_result {
	CT_CONFIRM_INSERTED = 0,   /* in the table under its keys */
	CT_CONFIRM_MERGED = 1,     /* an entry with the same tuples was
				    * confirmed meanwhile (another thread's):
				    * the packet is that entry's, accounted
				    * to it (clash_resolve); *@binding its */
	CT_CONFIRM_REPLY_ONLY = 2, /* its original tuple clashed, its reply
				    * tuple was free (UDP-like protocols, a
				    * NAT binding that differs from the
				    * winner's): in the table under its reply
				    * tuple only, IPS_NAT_CLASH, for 1 s
				    * (nf_ct_resolve_clash_harder;
				    * clash_resolve) */
};

/*
 * ct_pending_confirm - confirm the pending entry at the time it was
 * classified.  With ct_table_config.nat, every manipulation not set up
 * gets the null binding first (the kernel's nf_nat_inet_fn: a rule added
 * later never applies to this connection; it may still change its port
 * on a clash).  An entry whose binding changed a tuple gets the NAT
 * extension and a second slot.  The keys are checked under the rows'
 * locks (__nf_conntrack_confirm): a clash is resolved for UDP, UDP-Lite,
 * ICMP, ICMPv6 and GRE as the kernel resolves it (see enum
 * ct_confirm_result), else the packet must be dropped.  *@binding
 * (may be NULL) gets the final binding, with which to translate the
 * packet.  Returns enum ct_confirm_result, or -EEXIST (a clash not
 * resolved, or its namespace went away: insert_failed and drop counted,
 * nothing inserted, no event), -ENOSPC (a row at the chain limit:
 * chaintoolong and insert_failed), -ENOMEM (drop), -EINVAL (@p not the
 * thread's pending entry).  The pending entry is gone afterwards in
 * every case.  Cost: the null bindings' taken checks, an allocation from
 * the thread's magazine, two row locks.
 */
int ct_pending_confirm(struct ct_thread *thr, struct ct_pending *p,
		       struct ct_nat_binding *binding);

/* ct_pending_drop - the first packet is dropped: the pending entry goes,
 * leaving nothing (no entry, no event, no counter).  @p NULL or not the
 * thread's current one: nothing. */
void ct_pending_drop(struct ct_thread *thr, struct ct_pending *p);

#ifdef __cplusplus
}
#endif

#endif /* CTRACK_NAT_H */
