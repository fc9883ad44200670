/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sync_node.h - the node's state, shared by the files of src/sync/
 * (private; the contract is include/ctrack/sync.h).
 *
 * A node is conntrackd's sync mode cut down to its logic: two caches of
 * objects (internal: ours; external: the peer's), a transmit queue and,
 * for FTFW, a resend queue, the receiver's sequence tracking, and the
 * mode's timers as deadlines on the caller's clock.  One thread uses a
 * node at a time; nothing here is locked.
 *
 * Object lifetime (conntrackd's reference counts, made explicit).  An
 * internal object is held by the hash while it lives, and by the queue it
 * sits in (transmit or resend).  A destroyed connection's object turns
 * DEAD and stays - in the hash, so that a new connection with the same
 * tuple replaces it, and in its queue, so that its DEL can be resent -
 * until no queue holds it; then it is freed.  Dumps skip DEAD objects.
 *
 * Queues are intrusive doubly linked lists with a sentinel.  A queue node
 * is either embedded in an object (kind OBJ) or a control message of its
 * own allocation (kind CTL: ACK, NACK, RESYNC, ALIVE).  A node is in at
 * most one queue, and says which.
 */
#ifndef CT_SYNC_NODE_H
#define CT_SYNC_NODE_H

#include <stdbool.h>
#include <stdint.h>

#include "ctrack/sync.h"
#include "base/hash.h"

enum sq_kind {
	SQ_OBJ = 0,
	SQ_CTL = 1,
};

enum sq_where {
	SQ_NONE = 0,
	SQ_TX = 1,
	SQ_RS = 2,
};

struct sq_node {
	struct sq_node *prev, *next;
	uint8_t kind;       /* enum sq_kind */
	uint8_t where;      /* enum sq_where */
};

struct sq_list {
	struct sq_node head;   /* sentinel */
	uint64_t len;
};

struct sync_ctl {
	struct sq_node qn;     /* first: a queue node is its control message */
	uint8_t flags;         /* CT_SYNC_F_* */
	uint32_t seq;          /* the number it was last sent with */
	uint32_t from, to;
};

/* What few connections have: kept apart so that a cached entry costs
 * what most entries need (the record's 212 bytes would be 60% of an
 * object).  Allocated only when one of these fields is not zero; an
 * entry whose HAS_ bits name them but whose values are zero (conntrackd
 * sends the kernel's all-zero SYNPROXY with every entry) needs none. */
struct sync_rare {
	uint8_t labels[16];
	uint32_t natseq[6];
	uint32_t synproxy[3];
	struct ct_tuple master;
	char helper[16];
};

/* A struct ct_sync_conn as a cache keeps it (sync_obj_store/_load). */
struct sync_core {
	struct ct_tuple orig;
	uint32_t has, status, timeout_s, mark;
	uint8_t l4state, wscale[2], dccp_role;
	uint32_t sctp_vtag[2];
	union ct_addr snat_addr, dnat_addr;
	uint16_t snat_port, dnat_port;
	struct sync_rare *rare;          /* NULL: all those fields zero */
};

/* Object status (conntrackd's C_OBJ_*): what its next message says. */
enum obj_status {
	OBJ_NEW = 0,       /* -> CT_NEW */
	OBJ_ALIVE = 1,     /* -> CT_UPD */
	OBJ_DEAD = 2,      /* -> CT_DEL */
};

struct sync_obj {
	struct sq_node qn;               /* first */
	struct sync_obj *hnext;          /* hash chain */
	struct sync_obj *lprev, *lnext;  /* ALARM: internal objects in the
					  * order they were last sent, external
					  * ones in the order last refreshed */
	uint64_t hash;
	ct_time_ns first_ns, updated_ns;
	ct_time_ns expires_ns;           /* internal: the connection's own
					  * expiry (the timeout is computed
					  * when a message is built); external:
					  * unused */
	ct_time_ns sent_ns;              /* ALARM: when last sent */
	uint32_t seq;                    /* FTFW: last sent with */
	uint8_t status;                  /* enum obj_status */
	struct sync_core core;
};

struct sync_cache {
	struct sync_obj **buckets;
	uint64_t nbuckets;               /* a power of two */
	uint64_t count;                  /* objects in the hash, DEAD too */
	uint64_t live;                   /* ... not DEAD */
	uint64_t max;                    /* refuse beyond (live + dead) */
	struct ct_hash_key key;
	struct sync_obj lru;             /* sentinel of the lprev/lnext list */
	struct sync_obj *free_list;      /* objects to reuse (through hnext) */
	struct cache_chunk *chunks;      /* where all objects live */
	struct ct_sync_cache_stats st;
};

/* Receiver's view of the peer's numbering (network.c's nethdr_track_seq
 * with its state made a value, plus ctrack's window). */
enum seq_verdict {
	SEQ_UNSET = 0,     /* nothing received yet */
	SEQ_IN_SYNC,       /* the expected one */
	SEQ_AFTER,         /* ahead: some were lost */
	SEQ_BEFORE,        /* behind: replayed or late */
	SEQ_OUT_OF_WINDOW, /* too far from the expected one */
};

struct sync_seq {
	bool set;
	uint32_t last;           /* last accepted */
	uint32_t window;         /* cfg.seq_window */
	/* a run of consistent out-of-window numbers means the peer's
	 * numbering moved for good (see sync_seq.c) */
	uint32_t oow_next;
	unsigned oow_run;
};

#define SYNC_STREAM_MAX 65536

struct ct_sync_node {
	struct ct_sync_config cfg;
	struct sync_cache internal, external;
	struct sq_list tx, rs;
	uint32_t next_seq;               /* the next number we send */
	struct sync_seq rseq;
	/* FTFW receiver (sync-ftfw.c's statics) */
	uint32_t window_left;
	uint32_t ack_from;
	bool ack_from_set;
	uint8_t hello_state;             /* HELLO_INIT/SAY/DONE */
	bool say_hello_back;
	bool peer_hello;                 /* the peer's last message said HELLO */
	bool hello_loss;                 /* a gap while a HELLO was about: the
					  * peer may have flushed what we miss */
	ct_time_ns hello_settled_ns;     /* both sides' HELLOs ended by then */
	/* timers */
	ct_time_ns alive_due;
	bool resync_wanted;              /* a RESYNC request to queue */
	/* output batch */
	uint8_t *out;
	size_t out_len;
	/* stream input */
	uint8_t *in;
	size_t in_len;
	bool in_skipping;                /* stream framing lost: find a header */
	struct ct_sync_stats st;
	uint64_t rng;                    /* xorshift state (ALARM spreading) */
};

/* --- queues (sync_queue.c) --- */
void sq_init(struct sq_list *q);
void sq_add_tail(struct sq_list *q, struct sq_node *n, uint8_t where);
void sq_del(struct sq_list *q, struct sq_node *n);
struct sq_list *sq_of(struct ct_sync_node *n, const struct sq_node *qn);

/* --- caches (sync_cache.c) --- */
int sync_cache_init(struct sync_cache *c, uint64_t max, uint64_t seed);
void sync_cache_fini(struct sync_cache *c);
uint64_t sync_cache_hash(const struct sync_cache *c, const struct ct_tuple *orig);
struct sync_obj *sync_cache_find(struct sync_cache *c, const struct ct_tuple *orig);
struct sync_obj *sync_cache_find_h(struct sync_cache *c, const struct ct_tuple *orig,
				   uint64_t hash);
/* a new object holding @conn (whose tuple hashes to @hash), in the hash
 * (status NEW), or NULL: full (-ENOSPC in *err) or no memory (-ENOMEM) */
struct sync_obj *sync_cache_add(struct sync_cache *c, const struct ct_sync_conn *conn,
				uint64_t hash, ct_time_ns now, int *err);
/* give back an object that is in no hash, queue or list */
void sync_cache_free(struct sync_cache *c, struct sync_obj *o);
/* the record an object holds: set it (-ENOMEM when its rare part cannot
 * be allocated: the object keeps its old record), read it */
int sync_obj_store(struct sync_obj *o, const struct ct_sync_conn *conn);
void sync_obj_load(const struct sync_obj *o, struct ct_sync_conn *conn);
void sync_cache_unhash(struct sync_cache *c, struct sync_obj *o);
void sync_cache_set_dead(struct sync_cache *c, struct sync_obj *o);
void sync_lru_unlink(struct sync_obj *o);
void sync_lru_add_tail(struct sync_cache *c, struct sync_obj *o);

/* --- node internals (sync_node.c) --- */
/* free @o if it is DEAD and no queue holds it */
void sync_obj_release(struct ct_sync_node *n, struct sync_obj *o);
/* an object out of its queue (ACKed, flushed, sent in a mode without
 * resending) */
void sync_obj_dequeue(struct ct_sync_node *n, struct sync_obj *o);
/* queue a control message at the transmit tail */
void sync_queue_ctl(struct ct_sync_node *n, uint8_t flags, uint32_t from, uint32_t to);
/* apply a data message to the external cache */
void sync_apply_data(struct ct_sync_node *n, const uint8_t *msg,
		     const struct ct_sync_hdr *h, ct_time_ns now);
/* the whole internal cache onto the transmit queue */
void sync_bulk(struct ct_sync_node *n);
/* queue @o for sending (conntrackd's mode enqueue) */
void sync_enqueue(struct ct_sync_node *n, struct sync_obj *o);
void sync_count_malformed(struct ct_sync_node *n, enum ct_sync_err e);

/* --- sequence tracking (sync_seq.c) --- */
enum seq_verdict sync_seq_check(struct ct_sync_node *n, uint32_t seq);
void sync_seq_update(struct ct_sync_node *n, uint32_t seq);
/* an out-of-window or behind number: true when enough consistent ones in
 * a row say the peer's numbering moved for good (then tracking restarts
 * from @seq and the caller treats it as in sync) */
bool sync_seq_moved(struct ct_sync_node *n, uint32_t seq);
/* NOTRACK's and ALARM's rule: a number behind or out of window is dropped
 * (false) unless a run of them says the numbering moved (sync_seq_moved) */
bool sync_seq_acceptable(struct ct_sync_node *n, uint32_t seq);

/* --- modes --- */
int sync_ftfw_recv(struct ct_sync_node *n, const uint8_t *msg,
		   const struct ct_sync_hdr *h, ct_time_ns now);
void sync_ftfw_timers(struct ct_sync_node *n, ct_time_ns now);
void sync_ftfw_after_send(struct ct_sync_node *n, struct sq_node *qn);
uint8_t sync_ftfw_hello_flags(struct ct_sync_node *n);
void sync_ftfw_flush_rs(struct ct_sync_node *n);

int sync_notrack_recv(struct ct_sync_node *n, const uint8_t *msg,
		      const struct ct_sync_hdr *h, ct_time_ns now);
void sync_notrack_timers(struct ct_sync_node *n, ct_time_ns now);

int sync_alarm_recv(struct ct_sync_node *n, const uint8_t *msg,
		    const struct ct_sync_hdr *h, ct_time_ns now);
void sync_alarm_timers(struct ct_sync_node *n, ct_time_ns now);
ct_time_ns sync_alarm_next_due(struct ct_sync_node *n);

/* What a mode's receive says about a message (conntrackd's MSG_*). */
enum {
	MSG_DATA = 0,
	MSG_CTL = 1,
	MSG_DROP = 2,
	MSG_BAD = 3,
};

#define SYNC_NS_PER_MS 1000000ull
#define SYNC_NS_PER_S 1000000000ull

#endif /* CT_SYNC_NODE_H */
