/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pending.h - the two-step first packet's unconfirmed entry, as track/
 * keeps it and nat/ completes it (private).
 *
 * ct_classify (track.c) stops a new connection before its insert: the
 * entry the tracker initialised waits in its thread's struct ct_pending,
 * scratch memory the thread owns, so that a first packet the caller drops
 * touches no slab, no row and no counter of the table.  NAT (nat/) sets
 * the binding up on it and asks track/ to confirm it (ct_track_confirm):
 * only then is an object of the right size taken from the namespace's
 * slab - with the NAT extension when the binding changed a tuple, the
 * extension set being fixed before publication (base/conn.h) - and the
 * scratch copied into it.
 */
#ifndef CT_PENDING_H
#define CT_PENDING_H

#include <stdbool.h>
#include <stdint.h>

#include "ctrack/nat.h"
#include "base/state.h"
#include "proto/proto.h"

/* The largest scratch entry: core, the largest private area, every
 * extension but NAT, an IPv6 key's tail. */
#define CT_PENDING_OBJ (40 + 64 + 72 + 24)

/* Entries the "taken?" callback may remove during one setup (reaped as
 * expired, or evicted from TIME_WAIT): done after the setup, when no
 * lock of NAT's is held (nat/nat_table.c). */
#define CT_PENDING_VICTIMS 8

struct ct_pending {
	struct ct_thread *thr;        /* its thread */
	bool active;                  /* an entry waits */
	bool has_inv;                 /* ICMP: inv is the key's inverse */
	uint8_t new_state;            /* the verdict's state */
	uint16_t zone;
	uint32_t what;                /* its NEW event's bits */
	unsigned ext;                 /* the settings' extensions */
	unsigned n_victims;
	uint64_t ns_gen;              /* its namespace, by generation */
	uint64_t hash;                /* its original tuple's */
	uint64_t exp;
	ct_time_ns now;
	const struct ct_proto *proto;
	struct ct_tuple key;          /* its original tuple */
	struct ct_tuple inv;
	struct ct_nat_binding b;      /* its binding so far */
	struct ct_nat_env env;        /* nat/'s (the taken callback's) */
	bool env_ready;
	uint16_t (*rand16)(void *arg);   /* ct_thread_nat_random's, or NULL */
	/* what the setup already hashed, for the confirm (nat/): the last
	 * candidate reply tuple probed and its hash; the source index's
	 * hash of the original tuple (its bucket and tag) */
	struct ct_tuple probed;
	uint64_t probed_hash;
	bool probed_valid;
	bool bysrc_valid;
	uint64_t bysrc_hash;
	void *rand_arg;
	/* the search's last 8 hints (nat/nat_table.c): reply tuples and
	 * their hashes, which the probes reuse */
	struct ct_tuple hint_reply[8];
	uint64_t hint_hash[8];
	unsigned hint_n;
	uint8_t pm_held;              /* CT_NAT_S_SRC / _DST: the port map
				       * holds the entry's port (nat/) */
	struct ct_conn *victims[CT_PENDING_VICTIMS];
	uint8_t victim_cause[CT_PENDING_VICTIMS];
	/* the entry the tracker initialised, as ct_track_create's would be
	 * before its insert (key, private area, extensions) */
	uint64_t obj[CT_PENDING_OBJ / 8];
};

/* The scratch entry of @p. */
static inline struct ct_conn *ct_pending_conn(struct ct_pending *p)
{
	return (struct ct_conn *)(void *)p->obj;
}

/* Confirm results, as ct_rslot_insert's (table/rslot.h) but errors. */
enum ct_track_confirm {
	CT_TRACK_INSERTED = 0,
	CT_TRACK_MERGED,
	CT_TRACK_REPLY_ONLY,
};

/*
 * ct_track_confirm - insert @p's entry with binding p->b (final: every
 * manipulation set up), as ct_pending_confirm (ctrack/nat.h) documents
 * it; counts, events, the namespace's teardown met as ct_track_create
 * meets it.  Returns enum ct_track_confirm, or -EEXIST, -ENOSPC,
 * -ENOMEM (the kernel's counters counted).  Leaves @p inactive.  The
 * caller holds no lock and is outside a read section.
 */
struct ct_confirm_hooks {
	/* @c is in the table under both keys (read side held): index it.
	 * It may already be leaving (DYING): the hook checks after it
	 * linked, as the table's nat_forget may have run before. */
	void (*inserted)(struct ct_pending *p, struct ct_conn *c);
};

int ct_track_confirm(struct ct_thread *thr, struct ct_pending *p,
		     const struct ct_confirm_hooks *hooks);

/* ct_track_kill - remove entry @c (read side held, no lock), the
 * collector's or a lookup's way: its DESTROY event with @cause.  For the
 * taken callback's deferred victims. */
void ct_track_kill(struct ct_thread *thr, struct ct_conn *c, enum ct_destroy_cause cause,
		   ct_time_ns now);

#endif /* CT_PENDING_H */
