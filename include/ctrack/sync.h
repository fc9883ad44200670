/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctrack/sync.h - conntrackd's state synchronization protocol, as
 * conntrack-tools 1.4.7 speaks it (docs/sync.md is the protocol as ctrack
 * reads it, with every place conntrackd's behaviour differs from its
 * comments).
 *
 * Three layers, each usable alone:
 *
 *  1. The codec (ct_sync_msg_*): one message <-> one struct ct_sync_conn
 *     (a connection as the protocol carries it: original tuple, zone,
 *     status, protocol state, TCP window scales, timeout, mark, labels,
 *     NAT addresses and ports, master tuple, helper) or one control
 *     message (ACK, NACK, RESYNC, ALIVE, HELLO).  Pure functions: no
 *     allocation, no state; any thread.  Every input is hostile: a parse
 *     either fills the record completely or says why it did not
 *     (enum ct_sync_err), and never reads outside the bytes given.
 *
 *  2. The node (ct_sync_node_*): one end of a sync link, in one of
 *     conntrackd's modes - FTFW (sequence numbers, ACK/NACK windows, a
 *     resend queue, ALIVE keepalives, HELLO on (re)start), NOTRACK (send
 *     and forget; losses counted, not repaired) or ALARM (every entry
 *     resent periodically; the peer's entries expire unless refreshed).
 *     It keeps the internal cache (this node's own connections, fed by
 *     ct_sync_node_event() from ctrack's events) and the external cache
 *     (the peer's connections, fed by ct_sync_node_recv()).  It has no
 *     sockets, no threads and no clock: time is an input (@now, ns of a
 *     monotonic clock), and messages go out through the send callback of
 *     its configuration, batched into datagrams as conntrackd batches
 *     them.  A transport (tools/ctrack/sync/) owns the sockets and the
 *     choice of peers.
 *
 *  3. Statistics (struct ct_sync_stats): conntrackd's own counter names
 *     (conntrackd -s) and ctrack's, one per reason a message was dropped.
 *
 * Threads.  A node is used by one thread at a time (the daemon's sync
 * thread); it takes no lock.  Events from packet threads reach it through
 * the caller's own queue.  The codec functions may run anywhere.
 *
 * Trust.  conntrackd trusts its dedicated link; so must nobody else.  The
 * node treats every byte it receives as hostile (each defect is counted in
 * ct_sync_stats and the message dropped, never a crash, never a corrupt
 * entry), but it cannot tell a forged message from a true one: the link
 * must be private, and the transport must accept messages only from the
 * configured peer.
 *
 * Errors are negative errno values or enum ct_sync_err; nothing here
 * prints or exits.
 */
#ifndef CTRACK_SYNC_H
#define CTRACK_SYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctrack/events.h"
#include "ctrack/packet.h"
#include "ctrack/table.h"
#include "ctrack/tuple.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------
 * Wire constants (conntrack-tools include/network.h).  Multi-byte fields
 * are big-endian on the wire unless a comment says otherwise.
 * ------------------------------------------------------------------ */

#define CT_SYNC_VERSION 1        /* CONNTRACKD_PROTOCOL_VERSION */
#define CT_SYNC_HDR_LEN 8        /* version:4 type:4, flags, len, seq */
#define CT_SYNC_ACK_LEN 16       /* ... plus from, to (ACK/NACK/RESYNC) */
#define CT_SYNC_PORT 3780        /* conntrackd's customary port */
#define CT_SYNC_MSG_MAX 65535    /* the 16-bit length field */

/* Message types (enum nethdr_type). */
enum ct_sync_type {
	CT_SYNC_T_CT_NEW = 0,
	CT_SYNC_T_CT_UPD = 1,
	CT_SYNC_T_CT_DEL = 2,
	CT_SYNC_T_EXP_NEW = 3,   /* expectations: parsed for their header, */
	CT_SYNC_T_EXP_UPD = 4,   /* counted and dropped (ctrack has no     */
	CT_SYNC_T_EXP_DEL = 5,   /* helpers that would expect anything)    */
	CT_SYNC_T_STATE_MAX = CT_SYNC_T_EXP_DEL,
	CT_SYNC_T_CTL = 10,
};

/* Header flags (NET_F_*). */
enum {
	CT_SYNC_F_RESYNC = 1u << 1,
	CT_SYNC_F_NACK = 1u << 2,
	CT_SYNC_F_ACK = 1u << 3,
	CT_SYNC_F_ALIVE = 1u << 4,
	CT_SYNC_F_HELLO = 1u << 5,
	CT_SYNC_F_HELLO_BACK = 1u << 6,
};

/* Connection attributes (enum nta_attr): a TLV is a 16-bit length
 * (header included, padding not), a 16-bit type, the value, and padding
 * to 4 bytes. */
enum ct_sync_attr {
	CT_SYNC_A_IPV4 = 0,          /* src, dst: 8 bytes, network order */
	CT_SYNC_A_IPV6 = 1,          /* src, dst: 32 bytes */
	CT_SYNC_A_L4PROTO = 2,       /* u8 */
	CT_SYNC_A_PORT = 3,          /* sport, dport: network order */
	CT_SYNC_A_TCP_STATE = 4,     /* u8 */
	CT_SYNC_A_STATUS = 5,        /* u32 */
	CT_SYNC_A_TIMEOUT = 6,       /* u32, seconds */
	CT_SYNC_A_MARK = 7,          /* u32 */
	CT_SYNC_A_MASTER_IPV4 = 8,
	CT_SYNC_A_MASTER_IPV6 = 9,
	CT_SYNC_A_MASTER_L4PROTO = 10,
	CT_SYNC_A_MASTER_PORT = 11,
	CT_SYNC_A_SNAT_IPV4 = 12,    /* the reply tuple's dst, network order */
	CT_SYNC_A_DNAT_IPV4 = 13,    /* the reply tuple's src */
	CT_SYNC_A_SPAT_PORT = 14,    /* reply dport: LITTLE-endian (below) */
	CT_SYNC_A_DPAT_PORT = 15,    /* reply sport: LITTLE-endian */
	CT_SYNC_A_NAT_SEQ_ADJ = 16,  /* six u32 */
	CT_SYNC_A_SCTP_STATE = 17,
	CT_SYNC_A_SCTP_VTAG_ORIG = 18,
	CT_SYNC_A_SCTP_VTAG_REPL = 19,
	CT_SYNC_A_DCCP_STATE = 20,
	CT_SYNC_A_DCCP_ROLE = 21,
	CT_SYNC_A_ICMP_TYPE = 22,
	CT_SYNC_A_ICMP_CODE = 23,
	CT_SYNC_A_ICMP_ID = 24,      /* u16: LITTLE-endian (below) */
	CT_SYNC_A_TCP_WSCALE_ORIG = 25,
	CT_SYNC_A_TCP_WSCALE_REPL = 26,
	CT_SYNC_A_HELPER_NAME = 27,  /* NUL-terminated, at most 16 bytes */
	CT_SYNC_A_LABELS = 28,       /* u32 words, bit b of word w = label
				      * 32w+b */
	CT_SYNC_A_SNAT_IPV6 = 29,
	CT_SYNC_A_DNAT_IPV6 = 30,
	CT_SYNC_A_SYNPROXY = 31,     /* its, isn, tsoff: three u32 */
	CT_SYNC_A_ZONE = 32,         /* u16 */
	CT_SYNC_A_MAX = 33,
};
/*
 * Byte order, as conntrackd 1.4.7 behaves on x86 (its comments say
 * nothing): build.c converts ICMP ids and NAT ports with htons() although
 * libnetfilter_conntrack already holds them in network order, so on a
 * little-endian host the wire carries them little-endian (seen on the
 * wire: id 0x1234 travels as 34 12, SNAT port 7777 as 61 1e).  ctrack
 * writes and reads them so, to interoperate with x86 conntrackd.
 */

/* ---------------------------------------------------------------------
 * The record: one connection as the protocol carries it.
 * ------------------------------------------------------------------ */

/* Which optional fields of a struct ct_sync_conn are present. */
enum {
	CT_SYNC_HAS_STATUS = 1u << 0,
	CT_SYNC_HAS_TIMEOUT = 1u << 1,
	CT_SYNC_HAS_MARK = 1u << 2,
	CT_SYNC_HAS_ZONE = 1u << 3,     /* a ZONE attribute (orig.zone is 0
					 * without one) */
	CT_SYNC_HAS_STATE = 1u << 4,    /* l4state: TCP, SCTP or DCCP */
	CT_SYNC_HAS_WSCALE = 1u << 5,   /* TCP window scales (conntrackd:
					 * TCPWindowTracking On) */
	CT_SYNC_HAS_SCTP_VTAG = 1u << 6,
	CT_SYNC_HAS_DCCP_ROLE = 1u << 7,
	CT_SYNC_HAS_LABELS = 1u << 8,
	CT_SYNC_HAS_SNAT = 1u << 9,     /* snat_addr */
	CT_SYNC_HAS_DNAT = 1u << 10,    /* dnat_addr */
	CT_SYNC_HAS_SPAT = 1u << 11,    /* snat_port */
	CT_SYNC_HAS_DPAT = 1u << 12,    /* dnat_port */
	CT_SYNC_HAS_NATSEQ = 1u << 13,
	CT_SYNC_HAS_MASTER = 1u << 14,  /* an expected (RELATED) connection's
					 * master */
	CT_SYNC_HAS_HELPER = 1u << 15,
	CT_SYNC_HAS_SYNPROXY = 1u << 16,
	CT_SYNC_HAS_PORTS = 1u << 17,   /* orig.sport/dport came from a PORT
					 * attribute (or ICMP id/type/code) */
};

struct ct_sync_conn {
	struct ct_tuple orig;      /* as ctrack keeps tuples: ICMP id in
				    * sport, type << 8 | code in dport;
				    * orig.zone = the ZONE attribute */
	uint32_t has;              /* CT_SYNC_HAS_* */
	uint32_t status;           /* IPS_* bits (CT_ST_* in table.h) */
	uint32_t timeout_s;        /* remaining, when the message was built */
	uint32_t mark;
	uint8_t l4state;           /* the kernel's state number: enum
				    * tcp_conntrack / sctp_conntrack /
				    * ct_dccp_states */
	uint8_t wscale[2];         /* TCP, by direction (0..14) */
	uint8_t dccp_role;
	uint32_t sctp_vtag[2];     /* by direction */
	uint8_t labels[16];        /* label bit i = labels[i / 8] bit i % 8
				    * (the kernel's bitmap on little-endian
				    * hosts, as ct_conn_info.labels) */
	union ct_addr snat_addr;   /* SNAT: the reply tuple's destination */
	union ct_addr dnat_addr;   /* DNAT: the reply tuple's source */
	uint16_t snat_port;        /* host order: the reply tuple's dport */
	uint16_t dnat_port;        /* host order: the reply tuple's sport */
	uint32_t natseq[6];        /* orig pos, before, after; repl pos,
				    * before, after */
	uint32_t synproxy[3];      /* its, isn, tsoff */
	struct ct_tuple master;    /* l3, l4, addresses, ports */
	char helper[16];           /* NUL-terminated */
};

/*
 * ct_sync_conn_from_info - the record conntrackd would build from a
 * kernel event for the connection @ci, at @now (the caller's clock, the
 * one ci->expires is in): orig tuple and zone, status (without DYING),
 * TCP or SCTP state, the timeout left in whole seconds (rounded down, as
 * ctnetlink reports it; 0 if due), mark, labels when one is set, and the
 * NAT addresses and ports where the reply tuple is not the inverted
 * original and the status has SRC_NAT_DONE / DST_NAT_DONE (as
 * libnetfilter_conntrack's NFCT_GOPT_IS_SNAT ... IS_DPAT decide; ports
 * only for protocols with ports), and TCP's window scales
 * (ct_conn_info.tcp.wscale, CT_SYNC_HAS_WSCALE: the codec writes them
 * only with CT_SYNC_ENC_WSCALE, conntrackd's TCPWindowTracking).  Pure.
 */
void ct_sync_conn_from_info(struct ct_sync_conn *out,
			    const struct ct_conn_info *ci, ct_time_ns now);

/*
 * ct_sync_conn_reply - the reply tuple the peer's kernel would set up for
 * @c (nfct_setobjopt(NFCT_SOPT_SETUP_REPLY)): the inverted original with
 * the NAT addresses applied, and the NAT ports for protocols with ports
 * (conntrackd sends port attributes for ICMP too, holding no id: they
 * are ignored; docs/sync.md).  Returns false when the original
 * has no reply form (an ICMP type that is not a query).  Pure.
 */
bool ct_sync_conn_reply(const struct ct_sync_conn *c, struct ct_tuple *reply);

/* ---------------------------------------------------------------------
 * The codec.
 * ------------------------------------------------------------------ */

/* Why a message was refused; each has a counter in ct_sync_stats. */
enum ct_sync_err {
	CT_SYNC_OK = 0,
	CT_SYNC_E_TRUNCATED,      /* fewer bytes than a header */
	CT_SYNC_E_BAD_SIZE,       /* length field 0, below its header's size,
				   * or beyond the bytes received */
	CT_SYNC_E_BAD_VERSION,    /* version is not 1 */
	CT_SYNC_E_BAD_HEADER,     /* a type/flags combination no mode knows */
	CT_SYNC_E_BAD_TYPE,       /* a data type above EXP_DEL */
	CT_SYNC_E_BAD_PAYLOAD,    /* a TLV cut short, longer than the message,
				   * of the wrong size for its type, or
				   * bytes left over */
	CT_SYNC_E_UNKNOWN_ATTR,   /* an attribute type >= CT_SYNC_A_MAX
				   * (conntrackd refuses these too) */
	CT_SYNC_E_DUP_ATTR,       /* one attribute twice */
	CT_SYNC_E_IMPOSSIBLE,     /* values no kernel entry can have: no or
				   * two address families, no protocol,
				   * ports missing for a protocol with
				   * ports, a state or window scale out of
				   * range, unknown status bits, an ICMP
				   * type that cannot start a connection,
				   * a helper name without its NUL */
	CT_SYNC_E_MAX
};

const char *ct_sync_err_name(enum ct_sync_err e);

/* A message header, decoded (host order). */
struct ct_sync_hdr {
	uint8_t version;
	uint8_t type;              /* enum ct_sync_type */
	uint8_t flags;             /* CT_SYNC_F_* */
	uint16_t len;              /* the whole message, header included */
	uint32_t seq;
	uint32_t from, to;         /* ACK/NACK/RESYNC only (len >= 16) */
};

/* Classes of message, as conntrackd's IS_DATA/IS_ACK/... read them. */
enum ct_sync_class {
	CT_SYNC_C_DATA = 0,        /* type <= EXP_DEL, flags only HELLO bits */
	CT_SYNC_C_ACK,             /* CTL with ACK (checked before NACK, as
				    * conntrackd's digest_msg does) */
	CT_SYNC_C_NACK,
	CT_SYNC_C_RESYNC,
	CT_SYNC_C_ALIVE,
	CT_SYNC_C_BAD,             /* none of these */
};

/*
 * ct_sync_msg_header - read the message at the start of @buf (@len bytes
 * available, which may hold more messages after it) into @h.  Checks what
 * conntrackd's receive loop checks, in its order: at least 8 bytes, a
 * length that is neither 0 nor beyond @len, at least 16 bytes for
 * ACK/NACK/RESYNC, then the version.  On success h->len bytes belong to
 * this message.  Pure; O(1).
 */
enum ct_sync_err ct_sync_msg_header(const void *buf, size_t len,
				    struct ct_sync_hdr *h);

/* ct_sync_msg_class - what kind of message @h is. */
enum ct_sync_class ct_sync_msg_class(const struct ct_sync_hdr *h);

/*
 * ct_sync_msg_parse_conn - the connection carried by the data message
 * @msg (its header already read into @h: h->len bytes at @msg).  Fills
 * @out completely (fields not carried are zero, with their CT_SYNC_HAS_
 * bit clear) and returns CT_SYNC_OK, or the first defect found (then @out
 * is unspecified).  Label bits beyond the 128 a record holds are dropped
 * and *@labels_cut (if not NULL) set to true.  Pure; O(h->len).
 */
enum ct_sync_err ct_sync_msg_parse_conn(const void *msg,
					const struct ct_sync_hdr *h,
					struct ct_sync_conn *out,
					bool *labels_cut);

/* Options for ct_sync_msg_conn. */
enum {
	CT_SYNC_ENC_TIMEOUT = 1u << 0,   /* send the TIMEOUT attribute
					  * (conntrackd: unless CommitTimeout
					  * is set) */
	CT_SYNC_ENC_WSCALE = 1u << 1,    /* send TCP window scales when known
					  * (TCPWindowTracking On) */
};

/*
 * ct_sync_msg_conn - write one connection message of @type (CT_NEW, UPD
 * or DEL) with @flags and @seq for @c into @buf (@cap bytes), attributes
 * in conntrackd's order.  Returns its length (a multiple of 4, at most
 * CT_SYNC_CONN_MSG_MAX), -ENOSPC when @cap is too small, or -EINVAL for
 * a record that cannot be sent (l3 neither IPv4 nor IPv6).  Pure.
 */
#define CT_SYNC_CONN_MSG_MAX 512
int ct_sync_msg_conn(void *buf, size_t cap, uint8_t type, uint8_t flags,
		     uint32_t seq, const struct ct_sync_conn *c, unsigned opts);

/*
 * ct_sync_msg_ctl - write a control message: with ACK, NACK or RESYNC in
 * @flags a 16-byte one carrying [@from, @to], else an 8-byte one (ALIVE).
 * Returns its length or -ENOSPC.  Pure.
 */
int ct_sync_msg_ctl(void *buf, size_t cap, uint8_t flags, uint32_t seq,
		    uint32_t from, uint32_t to);

/* ---------------------------------------------------------------------
 * The node.
 * ------------------------------------------------------------------ */

enum ct_sync_mode {
	CT_SYNC_FTFW = 0,
	CT_SYNC_NOTRACK = 1,
	CT_SYNC_ALARM = 2,
};

/*
 * The send callback: one datagram (or, for a stream transport, a run of
 * whole messages) of @len bytes.  Returns 0, or a negative errno that the
 * node counts (send_errors) and otherwise ignores, as conntrackd does: a
 * lost datagram is FTFW's to repair.  It must not call back into the node.
 */
typedef int (*ct_sync_send_fn)(void *arg, const void *buf, size_t len);

struct ct_sync_config {
	enum ct_sync_mode mode;
	ct_sync_send_fn send;
	void *send_arg;
	uint32_t initial_seq;        /* first sequence number sent.  The
				      * library reads no clock: use the wall
				      * clock's seconds, as conntrackd does,
				      * so that a restarted node numbers on
				      * from where it was (default 0) */
	uint32_t datagram_max;       /* bytes of messages per datagram:
				      * conntrackd uses the interface MTU
				      * minus 28 (UDP) or 40 (TCP), and sends
				      * when one more message would reach it;
				      * default 1472 */
	uint32_t window_size;        /* FTFW: messages per ACK (ACKWindowSize,
				      * default 300) */
	uint32_t resend_queue_max;   /* FTFW: messages kept for resending
				      * (ResendQueueSize, default 131072) */
	uint32_t alive_ms;           /* an ALIVE (or pending ACK) after this
				      * long without sending (conntrackd's
				      * ALIVE_INT: 1000) */
	uint32_t refresh_s;          /* ALARM: each entry resent at a random
				      * time within this (RefreshTime, 60) */
	uint32_t cache_timeout_s;    /* ALARM: a peer's entry not refreshed
				      * for this long goes (CacheTimeout,
				      * 180) */
	uint32_t commit_timeout_s;   /* CommitTimeout: when non-zero, no
				      * TIMEOUT is sent and committed entries
				      * get this (default 0) */
	uint32_t internal_max;       /* entries of each cache (HashLimit, */
	uint32_t external_max;       /* default 262144); beyond it a new
				      * entry is refused and counted */
	uint32_t seq_window;         /* FTFW/NOTRACK: a data message more than
				      * this far ahead of the expected
				      * sequence number, without HELLO, is
				      * out of window (default 1 << 20;
				      * below, what happens then) */
	bool window_tracking;        /* send TCP window scales
				      * (TCPWindowTracking) */
	bool startup_resync;         /* ask the peer for its table when the
				      * node starts (StartupResync; default
				      * true here, off in conntrackd) */
	bool resync_on_hello;        /* send our whole table when the peer
				      * says HELLO, i.e. (re)started
				      * (default true; conntrackd does not) */
	bool stream;                 /* messages arrive as a byte stream (TCP
				      * transport): a message may be split
				      * across ct_sync_node_recv() calls */
	uint64_t hash_seed;          /* caches' hash key; 0 = random */
};

/* ct_sync_config_default - conntrackd 1.4.7's defaults (above), mode FTFW,
 * no send callback, initial_seq 0. */
void ct_sync_config_default(struct ct_sync_config *cfg);

struct ct_sync_node;

/*
 * ct_sync_node_create - a node at time @now.  Returns 0 and sets *@out,
 * -EINVAL (no send callback, a zero window, a datagram_max below
 * CT_SYNC_CONN_MSG_MAX or above 65507, ...) or -ENOMEM.  With
 * startup_resync the first ct_sync_node_run() sends a RESYNC request.
 */
int ct_sync_node_create(const struct ct_sync_config *cfg, ct_time_ns now,
			struct ct_sync_node **out);
void ct_sync_node_destroy(struct ct_sync_node *n);

/*
 * ct_sync_node_event - one of this node's own connections changed (a
 * ctrack event: NEW, UPDATE, DESTROY).  The internal cache is updated and
 * the entry queued for sending (an entry already queued is sent once,
 * with its state when it goes out, as conntrackd does).  A DESTROY for an
 * entry the cache does not hold is ignored, as conntrackd ignores it.
 * Returns 0, -ENOSPC (the internal cache is full: counted) or -ENOMEM.
 * Cost: O(1) (a hash lookup).
 */
int ct_sync_node_event(struct ct_sync_node *n, const struct ct_event *ev,
		       ct_time_ns now);

/* ct_sync_node_local - the same from a record (@type CT_NEW, UPD, DEL):
 * for callers that are not ctrack tables, and for tests.  The record's
 * timeout_s counts from @now.  Returns 0, -EINVAL (another @type),
 * -ENOSPC (internal cache full) or -ENOMEM.  O(1). */
int ct_sync_node_local(struct ct_sync_node *n, uint8_t type,
		       const struct ct_sync_conn *c, ct_time_ns now);

/*
 * ct_sync_node_recv - bytes from the peer: a datagram (one or more
 * messages), or for a stream node the next bytes of the stream.  Each
 * message is checked, counted, and applied to the external cache and the
 * mode's state (an ACK frees resend slots, a NACK queues resends, a
 * RESYNC queues the whole internal cache, a gap in the sequence queues a
 * NACK).  Replies are sent by the next ct_sync_node_run().  Returns the
 * number of messages accepted.  Cost: O(bytes), plus O(entries) for a
 * RESYNC or a HELLO with resync_on_hello.
 */
int ct_sync_node_recv(struct ct_sync_node *n, const void *buf, size_t len,
		      ct_time_ns now);

/*
 * ct_sync_node_run - send what is queued (at most @budget messages, 0 =
 * all), in datagrams of at most datagram_max bytes, plus the keepalive
 * and ACK that are due; ALARM: the refreshes that are due and the peer's
 * entries that timed out.  Returns the time at which it next has
 * something to do (a deadline, not a promise of work), at most alive_ms
 * away; call it again then, or when an event or a message arrived.
 */
ct_time_ns ct_sync_node_run(struct ct_sync_node *n, ct_time_ns now,
			    unsigned budget);

/* ct_sync_node_request_resync - ask the peer for its whole table
 * (conntrackd -n); sent by the next run. */
void ct_sync_node_request_resync(struct ct_sync_node *n);

/* ct_sync_node_send_bulk - queue the whole internal cache for sending
 * (conntrackd -B, and what a RESYNC request does).  O(entries). */
void ct_sync_node_send_bulk(struct ct_sync_node *n);

/* Which cache. */
enum ct_sync_cache_id {
	CT_SYNC_INTERNAL = 0,        /* this node's own connections */
	CT_SYNC_EXTERNAL = 1,        /* the peer's */
};

/* One entry of a cache, as ct_sync_node_dump shows it. */
struct ct_sync_entry {
	struct ct_sync_conn conn;
	ct_time_ns first_ns;         /* when the cache got it */
	ct_time_ns updated_ns;       /* its last change */
	uint32_t timeout_left_s;     /* conn.timeout_s less the seconds since
				      * updated_ns (what conntrackd -c would
				      * commit; 0 without a timeout) */
};

/*
 * ct_sync_node_dump - call @fn for each live entry of one cache (entries
 * destroyed but not yet acknowledged are not shown, as conntrackd -i
 * hides them).  @fn returns non-zero to stop (returned).  Order is the
 * hash's.  O(entries).
 */
typedef int (*ct_sync_dump_fn)(const struct ct_sync_entry *e, void *arg);
int ct_sync_node_dump(struct ct_sync_node *n, enum ct_sync_cache_id which,
		      ct_time_ns now, ct_sync_dump_fn fn, void *arg);

/* ct_sync_node_find - copy out the entry of @which with original tuple
 * @orig (zone included).  Returns true if found.  O(1). */
bool ct_sync_node_find(struct ct_sync_node *n, enum ct_sync_cache_id which,
		       const struct ct_tuple *orig, ct_time_ns now,
		       struct ct_sync_entry *out);

/* ct_sync_node_flush - empty one cache (conntrackd -f internal|external);
 * flushing the internal cache sends nothing.  Returns the number of
 * entries removed. */
uint64_t ct_sync_node_flush(struct ct_sync_node *n, enum ct_sync_cache_id which);

/* Counters of one cache (conntrackd -s "cache internal/external"). */
struct ct_sync_cache_stats {
	uint64_t active;             /* live entries now */
	uint64_t created, create_failed;  /* failed: cache full or no memory */
	uint64_t updated;
	uint64_t destroyed;
	uint64_t expired;            /* ALARM: external entries timed out */
};

struct ct_sync_stats {
	/* conntrackd -s's "network statistics" (same meaning) */
	uint64_t msg_rcv_malformed;  /* the sum of the six below and
				      * unknown_attr/dup_attr/impossible */
	uint64_t msg_rcv_bad_version;
	uint64_t msg_rcv_bad_header;
	uint64_t msg_rcv_bad_payload;
	uint64_t msg_rcv_bad_type;
	uint64_t msg_rcv_truncated;
	uint64_t msg_rcv_bad_size;
	uint64_t msg_snd_malformed;  /* records that could not be encoded */
	uint64_t msg_rcv_lost;       /* sequence numbers skipped (counted
				      * exactly; conntrackd counts 2 more per
				      * gap, see docs/sync.md) */
	uint64_t msg_rcv_before;     /* replayed or late: FTFW drops them */
	/* ctrack's own */
	uint64_t msg_rcv_unknown_attr;
	uint64_t msg_rcv_dup_attr;
	uint64_t msg_rcv_impossible;
	uint64_t msg_rcv_out_of_window;  /* too far ahead (seq_window): FTFW
					  * drops it */
	uint64_t msg_rcv_seq_resets;     /* the peer's numbering restarted
					  * (HELLO) or jumped for good */
	uint64_t msg_rcv_exp;            /* expectation messages (ignored) */
	uint64_t msg_rcv_labels_cut;     /* label bits beyond 127 dropped */
	uint64_t msg_rcv_ack_stale;      /* ACK/NACK for numbers never sent
					  * or long forgotten */
	uint64_t msg_rcv_stream_resyncs; /* stream: bytes skipped to find the
					  * next header after a bad one */
	uint64_t msgs_sent, msgs_recv;   /* messages, all kinds */
	uint64_t datagrams_sent, datagrams_recv;
	uint64_t bytes_sent, bytes_recv;
	uint64_t send_errors;
	uint64_t acks_sent, nacks_sent, alive_sent, resync_sent;
	uint64_t acks_recv, nacks_recv, alive_recv, resync_recv;
	uint64_t hello_recv;             /* HELLO episodes: the peer started */
	uint64_t resent;                 /* messages resent after a NACK */
	uint64_t bulk_sends;             /* whole-cache sends (RESYNC, HELLO,
					  * ct_sync_node_send_bulk) */
	uint64_t hello_resyncs;          /* RESYNCs asked because messages were
					  * lost while a HELLO was about (FTFW;
					  * docs/sync.md) */
	uint64_t rs_queue_len, tx_queue_len;
	uint64_t rs_queue_dropped;       /* oldest resend slots given up when
					  * the queue was full */
	uint32_t last_seq_recv;          /* the peer's last sequence number */
	bool peer_seen;                  /* a valid message ever arrived */
	ct_time_ns peer_last_ns;         /* when the last one did */
	struct ct_sync_cache_stats internal, external;
};

void ct_sync_node_get_stats(const struct ct_sync_node *n, struct ct_sync_stats *s);

#ifdef __cplusplus
}
#endif

#endif /* CTRACK_SYNC_H */
