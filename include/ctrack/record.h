/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctrack/record.h - whole entries out of a table and back in.
 *
 * A struct ct_record is everything an entry holds, in a form that does
 * not depend on the table it came from: both tuples and the zone, status,
 * mark, labels, counters, first and last packet times, the protocol's
 * whole private state (TCP's window tracking in both directions, its
 * retransmission and "last packet" memory; SCTP's tags; GRE's timeouts;
 * when a UDP flow began) and the timeout left.  Times are relative to the
 * moment the record was taken (its "moment"): a record does not care
 * whose clock the table ran on, and the importer says how long ago that
 * moment was.  This is what the daemon's state file (ctrack/statefile.h),
 * `ctrack read --save-state / --load-state` and `ctrack sync commit` (a
 * conntrackd peer's connections into the table) are made of.
 *
 * What a record does not carry: the entry's id (the kernel's and
 * ctrack's id is a keyed hash of the entry's address; a restored entry
 * gets a new one, as a kernel entry that conntrackd commits does - the
 * exporter's is in the record for information only).
 *
 * A NATed entry's binding is in the record's own fields, as ctnetlink
 * carries it: the reply tuple (the translated one, as `conntrack -L`
 * prints it) and the status bits the kernel numbers IPS_SRC_NAT,
 * IPS_DST_NAT, IPS_SRC_NAT_DONE, IPS_DST_NAT_DONE and IPS_NAT_CLASH
 * (CT_ST_SRC_NAT ... in table.h).  What differs between the reply tuple
 * and the inverted original is what those bits say: the reply's
 * destination (address and port) only with SRC_NAT, its source only with
 * DST_NAT; an ICMP query's id under either, its type never.  The DONE
 * bits alone are a null binding (a table with NAT gives every entry
 * them).  struct ct_record_nat stays a reserved place, version 0, zero.
 *
 * Every record that goes in is checked field by field first
 * (ct_record_check): a record this library could not have made is
 * refused with a reason, never turned into an entry (docs/record.md).
 *
 * Thread rules as in table.h: "an attached thread" is the owner of @thr,
 * outside any read-side section of its own.  Nothing here prints; errors
 * are negative errno values and a reason.
 */
#ifndef CTRACK_RECORD_H
#define CTRACK_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctrack/table.h"
#include "ctrack/tuple.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The layout of struct ct_record and of its encoding (ct_record_encode). */
#define CT_RECORD_VERSION 1

/* What a record holds besides its core (ct_record.has). */
enum {
	CT_RECORD_HAS_ACCT = 0x01,    /* packets[], bytes[] */
	CT_RECORD_HAS_TSTAMP = 0x02,  /* first_seen_ago_ns, last_seen_ago_ns */
	CT_RECORD_HAS_LABELS = 0x04,  /* labels[] */
	CT_RECORD_HAS_ALL = 0x07,
};

/* TCP per-direction flags, the kernel's IP_CT_TCP_FLAG_* (ctnetlink's
 * CTA_PROTOINFO_TCP_FLAGS_*). */
enum {
	CT_RECORD_TCPF_WINDOW_SCALE = 0x01,
	CT_RECORD_TCPF_SACK_PERM = 0x02,
	CT_RECORD_TCPF_CLOSE_INIT = 0x04,
	CT_RECORD_TCPF_BE_LIBERAL = 0x08,
	CT_RECORD_TCPF_DATA_UNACKNOWLEDGED = 0x10,
	CT_RECORD_TCPF_MAXACK_SET = 0x20,
	CT_RECORD_TCPF_ALL = 0x3f,
};

/* One direction of a TCP connection (the kernel's ip_ct_tcp_state). */
struct ct_record_tcp_dir {
	uint32_t td_end;     /* highest sequence number + length sent */
	uint32_t td_maxend;  /* highest right edge the peer allowed */
	uint32_t td_maxwin;  /* largest window offered (scaled); 0: nothing
			      * seen yet, picked up from the next packet */
	uint32_t td_maxack;  /* highest ack sent (with MAXACK_SET) */
	uint8_t td_scale;    /* window scale, 0..14 */
	uint8_t flags;       /* CT_RECORD_TCPF_* */
};

/* TCP's whole state but the state number (ct_record.l4state). */
struct ct_record_tcp {
	struct ct_record_tcp_dir dir[2];   /* by enum ct_dir */
	/* the last packet that passed or was ignored (the kernel's last_*) */
	uint32_t last_seq;
	uint32_t last_ack;
	uint32_t last_end;
	uint16_t last_win;
	uint8_t last_index;   /* packet kind, the kernel's enum tcp_bit_set
			       * (0 SYN .. 4 RST, 5 none) */
	uint8_t last_dir;     /* enum ct_dir */
	uint8_t last_wscale;  /* 0..14 */
	uint8_t last_flags;   /* window scale 0x01, SACK 0x02, challenge ACK
			       * expected 0x40, simultaneous open 0x80 */
	uint8_t retrans;      /* identical ACKs in a row */
};

struct ct_record_sctp {
	uint32_t vtag[2];     /* verification tag expected per direction, 0
			       * while unknown */
	uint8_t init[2];      /* an INIT was seen in that direction (0/1) */
	uint8_t heartbeat_vtag_failed;  /* 0/1 */
	uint8_t last_dir;     /* of the HEARTBEAT whose tag failed */
};

struct ct_record_gre {
	uint32_t timeout_s;         /* the entry's own: unreplied */
	uint32_t stream_timeout_s;  /* and replied */
};

struct ct_record_udp {
	uint64_t age_ns;      /* since the first packet (a stream after 2 s) */
};

/* The protocol's private state; which member by orig.l4 (ICMP, UDP-Lite
 * and the protocols without a tracker of their own have none). */
union ct_record_proto {
	struct ct_record_tcp tcp;
	struct ct_record_udp udp;
	struct ct_record_sctp sctp;
	struct ct_record_gre gre;
	uint8_t bytes[64];
};

/* Reserved for what a binding may one day hold beyond its reply tuple and
 * status bits (a helper's sequence adjustment, ...): version 0, len 0 and
 * zero bytes, the only form written or accepted (CT_RECORD_R_NAT
 * otherwise).  The binding itself is reply + status (above). */
struct ct_record_nat {
	uint16_t version;
	uint16_t len;         /* bytes of data[] used */
	uint8_t data[60];
};

struct ct_record {
	uint16_t version;          /* CT_RECORD_VERSION */
	uint8_t has;               /* CT_RECORD_HAS_* */
	uint8_t l4state;           /* the protocol's state number (TCP: enum
				    * tcp_conntrack; SCTP: sctp_conntrack;
				    * 0 for stateless protocols) */
	uint32_t status;           /* CT_ST_* (IPS_* numbering): SEEN_REPLY,
				    * ASSURED, CONFIRMED and the NAT bits */
	uint32_t mark;
	uint32_t reserved;         /* 0 */
	struct ct_tuple orig;      /* the zone is orig.zone */
	struct ct_tuple reply;     /* the inverted original, or the binding's
				    * translated reply tuple */
	uint64_t id;               /* the exporter's id: not restored */
	uint64_t timeout_ns;       /* left at the record's moment (0: due);
				    * at most CT_RECORD_TIMEOUT_MAX_NS */
	uint64_t first_seen_ago_ns;  /* HAS_TSTAMP: before the moment */
	uint64_t last_seen_ago_ns;   /* <= first_seen_ago_ns */
	uint64_t packets[2];       /* HAS_ACCT, by enum ct_dir */
	uint64_t bytes[2];
	uint8_t labels[16];        /* HAS_LABELS; as ct_conn_info.labels */
	union ct_record_proto proto;
	struct ct_record_nat nat;
};

/* ctnetlink's timeout is a u32 of seconds: no entry lives longer. */
#define CT_RECORD_TIMEOUT_MAX_NS (4294967295ull * 1000000000ull)

/* Why a record was refused (and, for the import, why it did not go in). */
enum ct_record_reason {
	CT_RECORD_OK = 0,
	CT_RECORD_R_VERSION,   /* a record version this build does not know */
	CT_RECORD_R_ENCODING,  /* an encoded record's length or sections */
	CT_RECORD_R_HAS,       /* unknown bits in has, reserved not 0 */
	CT_RECORD_R_FAMILY,    /* l3 not IPv4/IPv6, address bytes an IPv4
				* tuple does not have, the two tuples'
				* families, protocols or zones differ */
	CT_RECORD_R_PORTS,     /* ports on a protocol without them; an ICMP
				* type that is not a query, or ICMP over the
				* other family */
	CT_RECORD_R_REPLY,     /* reply tuple not what the status says:
				* not the inverted original without a NAT
				* bit, a side changed that no bit names, a
				* bit whose side is unchanged, an ICMP
				* type changed */
	CT_RECORD_R_NAT,       /* NAT status bits that cannot be together
				* (SRC_NAT without SRC_NAT_DONE, ...,
				* NAT_CLASH without a binding or on a
				* protocol that never clashes), or struct
				* ct_record_nat not empty */
	CT_RECORD_R_STATUS,    /* status bits an entry cannot have: DYING,
				* EXPECTED, anything unknown */
	CT_RECORD_R_STATE,     /* l4state out of the protocol's range */
	CT_RECORD_R_PROTO,     /* a protocol field out of range (a TCP scale
				* above 14, unknown flags, a direction
				* other than 0/1, ...) */
	CT_RECORD_R_TIMEOUT,   /* timeout_ns above CT_RECORD_TIMEOUT_MAX_NS */
	CT_RECORD_R_TSTAMP,    /* last packet before the first */
	CT_RECORD_R_ZONE,      /* import: no such zone, or being destroyed */
	CT_RECORD_R_EXISTS,    /* import: a live entry holds the tuple */
	CT_RECORD_R_FULL,      /* import: table or zone at its maximum */
	CT_RECORD_R_CHAIN,     /* import: the row holds max_chain entries */
	CT_RECORD_R_NOMEM,     /* import: no memory */
	CT_RECORD_R_NAT_OFF,   /* import: a NAT binding (SRC_NAT or DST_NAT)
				* into a table without NAT
				* (ct_table_config.nat) */
	CT_RECORD_R_MAX
};

/* ct_record_reason_name - a few words for @r ("tcp window scale or flags
 * out of range", ...): constant strings; any thread; never NULL. */
const char *ct_record_reason_name(enum ct_record_reason r);

/*
 * ct_record_check - could this library have made @rec?  Every field:
 * version, has bits, family and address bytes, ports against the
 * protocol, the NAT bits, the reply tuple against them, status, the
 * protocol's state number and private state, timeout, times.  Pure, any
 * thread, a few hundred instructions.  Returns CT_RECORD_OK or the first
 * reason found.
 */
enum ct_record_reason ct_record_check(const struct ct_record *rec);

/*
 * ct_record_export - call @fn with a record of every live entry (of zone
 * @zone, or all with @zone < 0), taken at @now (the table's clock: the
 * record's moment).  An attached thread.  Cost: that of ct_table_dump
 * (O(rows + entries), the resize lock for the whole walk, each entry's
 * lock while it is copied: at 1M entries about 1.15x a dump's CPU time,
 * 335 ns an entry besides @fn, BENCHMARKS.md "record"); @fn runs under
 * the same rules as a
 * dump callback (no dump, flush, teardown or detach from it).  @fn
 * returns 0 to go on, anything else to stop.  Returns 0 when every entry
 * was seen, what @fn returned, or -EINVAL (@thr or @fn NULL).
 */
typedef int (*ct_record_fn)(const struct ct_record *rec, void *arg);
int ct_record_export(struct ct_thread *thr, int zone, ct_time_ns now,
		     ct_record_fn fn, void *arg);

/* ct_record_import's flags. */
enum {
	/*
	 * The record is a conntrackd peer's connection being committed
	 * (ct_record_from_sync), made as the kernel makes an entry that
	 * conntrackd creates over ctnetlink: only what a sync message
	 * carries is taken - TCP's state, flags and window scales (the
	 * scales only when both directions' flags have WINDOW_SCALE, as
	 * nlattr_to_tcp), SCTP's state and tags - and the rest of the
	 * protocol's state starts empty (TCP: no window data, so each
	 * direction is picked up from its next packet; UDP: a stream at
	 * once; GRE: the zone's timeouts); counters start at zero, first and
	 * last packet at @now.  The entry is counted as an insert and
	 * announced with a NEW event (CT_EVW_NEW).
	 */
	CT_RECORD_F_COMMIT = 0x1,
};

/*
 * ct_record_import - make an entry from @rec, whose moment was
 * @elapsed_ns before @now (0 when the table's clock picks up where the
 * export left it, as a replay of the next capture file does; the
 * wall-clock time since the save for a daemon that restarts).  Its
 * expiry is @now - @elapsed_ns + rec->timeout_ns, and its times and UDP
 * age move the same way.  The entry gets the extensions its zone's
 * settings give (counters, times, labels the table has no room for are
 * dropped, as the kernel keeps no counters with acct off); its status
 * is the record's with CONFIRMED; no event and no insert counted unless
 * CT_RECORD_F_COMMIT (a restore continues the table the counters were
 * saved with: ctrack/statefile.h restores those).
 *
 * A NATed record (SRC_NAT or DST_NAT) needs a table with NAT
 * (ct_table_config.nat; CT_RECORD_R_NAT_OFF otherwise): the entry gets
 * the NAT extension and is findable from both of its keys, and one whose
 * source was translated goes into the table's source index (so a later
 * setup's find_appropriate_src reuses the mapping) and, with
 * nat_exact_ports, the port map - as a confirm leaves it.  A key held by
 * a live entry, either of the two, refuses it (-EEXIST): a restore never
 * resolves a clash by merging.  An IPS_NAT_CLASH record goes in under its
 * reply tuple only, as the confirm that made it put it.  Null bindings
 * (DONE bits only) go in as plain entries; into a table without NAT
 * their DONE bits are dropped (such a table sets none).
 *
 * A record whose time ran out (timeout_ns <= elapsed_ns) is not inserted:
 * it is counted as expired and its DESTROY (CT_DESTROY_TIMEOUT, the entry
 * as it was, expires at its expiry) is delivered, as the collector would
 * have delivered it.
 *
 * An attached thread.  Cost: the check, one hash, one row lock (at 1M
 * entries a cache miss: about 800 ns of CPU a record, what making the
 * entry from its packets costs; BENCHMARKS.md "record"), an allocation
 * from the thread's magazine.
 * Returns 1 inserted; 0 expired (DESTROY delivered); or a negative errno
 * with *@why (if not NULL) set: -EINVAL the record is refused
 * (ct_record_check's reason), -ENOENT no such zone (CT_RECORD_R_ZONE),
 * -EEXIST a live entry holds the tuple (CT_RECORD_R_EXISTS), -ENOSPC the
 * table or the zone is at its maximum (no early drop: a restore must not
 * evict what it restored; CT_RECORD_R_FULL) or the row at max_chain
 * (CT_RECORD_R_CHAIN), -ENOMEM (CT_RECORD_R_NOMEM), -EOPNOTSUPP a
 * NATed record into a table without NAT (CT_RECORD_R_NAT_OFF).  On an
 * error the
 * table is unchanged.
 */
int ct_record_import(struct ct_thread *thr, const struct ct_record *rec,
		     ct_time_ns now, uint64_t elapsed_ns, unsigned flags,
		     enum ct_record_reason *why);

/*
 * Encoding: a record as the state file keeps it - little-endian fixed
 * fields, addresses in network order, sections only for what the record
 * has (docs/record.md has the layout): 48 bytes for the core of an IPv4
 * record, about 150 for a TCP entry with counters and times, at most
 * CT_RECORD_ENC_MAX.
 *
 * ct_record_encode - write @rec (checked first) into @buf; returns the
 * bytes written, or 0 when @rec is refused (*@why) or @cap is too small
 * (*@why CT_RECORD_R_ENCODING).
 * ct_record_decode - read one record from @buf (@len bytes available)
 * into @rec and check it; returns the bytes it took, or 0 with *@why.
 * Both pure, any thread.
 */
#define CT_RECORD_ENC_MAX 256
size_t ct_record_encode(const struct ct_record *rec, uint8_t *buf, size_t cap,
			enum ct_record_reason *why);
size_t ct_record_decode(const uint8_t *buf, size_t len, struct ct_record *rec,
			enum ct_record_reason *why);

struct ct_sync_conn;

/*
 * ct_record_from_sync - the record a commit makes of a conntrackd peer's
 * connection @c (an external-cache entry, ctrack/sync.h), as conntrackd's
 * nl_create_conntrack() builds its request: the original tuple and zone,
 * the reply tuple from the NAT attributes, the status without EXPECTED,
 * mark, labels, TCP or SCTP state and SCTP tags, the timeout @timeout_s
 * (conntrackd's: the one sent less the time since it arrived, 60 s when
 * that went negative, or CommitTimeout; ct_sync_entry.timeout_left_s is
 * the first), and for TCP: with @window_tracking false (conntrackd's
 * TCPWindowTracking Off, its default) BE_LIBERAL in both directions'
 * flags and no scales; with it true the window scales the message
 * carried and no flags - which the kernel then ignores, as its
 * nlattr_to_tcp applies scales only to directions flagged WINDOW_SCALE
 * (docs/sync.md).  Import it with CT_RECORD_F_COMMIT and @elapsed_ns 0.
 * Pure, any thread.  Returns false when @c has no reply form (an ICMP
 * type that is not a query); @out is then unspecified.
 */
bool ct_record_from_sync(const struct ct_sync_conn *c, uint32_t timeout_s,
			 bool window_tracking, struct ct_record *out);

#ifdef __cplusplus
}
#endif

#endif /* CTRACK_RECORD_H */
