/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nat_table.c - NAT joined to the table: the pending entry's setup
 * (ct_pending_nat, ct_pending_masquerade) and confirm
 * (ct_pending_confirm), the "taken?" question as a table lookup, and the
 * table's source index and port map kept at confirm and destroy.
 *
 * "Taken?" (nf_nat_used_tuple and its two variants) looks the candidate
 * reply tuple up as any packet would (table/member.h: an entry holding it
 * as its original or its reply tuple) - under the read side, no lock.
 * Entries it would remove (an expired one it meets, as
 * nf_conntrack_tuple_taken reaps them; a TIME_WAIT entry of an earlier
 * source NAT that nf_nat_used_tuple_harder evicts) are removed once the
 * setup is over, so that no removal - which tells the source index and
 * the port map - runs while the port map's lock is held.
 *
 * The source index is the kernel's nf_nat_bysource: a hash of RCU lists
 * by original source (zone, protocols, address, port), linked through
 * the entries' NAT extension (base/conn.h, bysrc_next), newest first;
 * writers hold one of 256 striped byte locks, readers only the read
 * side.  A bucket's word carries, in the 16 bits above the head's 48-bit
 * address (as the table's slots carry signatures, table/htab.h), a
 * filter of its chain: bit (hash >> 48) % 16 of every entry's source
 * hash.  A new source - most are - whose bit is clear has no mapping
 * there, and the walk, a cache miss per entry, is skipped; a bit set
 * walks the chain as before, so the order and the answer are the
 * kernel's.  Linking sets the new entry's bit together with the new head
 * (one store); unlinking recomputes the filter from the chain that is
 * left, under the same stripe lock, so it always covers the chain.
 * Only entries whose source was translated are in it: an identity
 * mapping can never be the one find_appropriate_src picks (its source is
 * the original, which get_unique_tuple tried first).  An entry is linked
 * after its insert and unlinked by the table's nat_forget hook as it
 * leaves (table/member.h); one killed between the two is unlinked by the
 * linker, which looks at DYING after linking.  The bucket array is sized
 * once, as the kernel sizes nf_nat_bysource (to its conntrack table: a
 * quarter of the table's maximum, 64k at least, 4M at most), mapped zero
 * and touched as it is used.
 *
 * The port map (ct_table_config.nat_exact_ports) is phase 1's
 * ct_nat_portmap under one mutex, held across a setup's search; its
 * acquire follows the link, its release the unlink.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/hash.h"
#include "base/spin.h"
#include "nat/nat_priv.h"
#include "nat/nat_table.h"
#include "proto/tcp.h"
#include "table/member.h"
#include "track/pending.h"

#define NAT_LOCKS 256
#define BYSRC_MIN (1u << 16)
#define BYSRC_MAX (1u << 22)

struct nat_state {
	_Atomic uint64_t *bysrc;           /* n_bysrc of them: a head's
					    * address and its chain's filter */
	uint64_t n_bysrc;                  /* a power of two */
	size_t map_len;
	_Atomic uint8_t locks[NAT_LOCKS];
	pthread_mutex_t pm_lock;
	struct ct_nat_portmap *pm;         /* NULL without nat_exact_ports */
};

static struct nat_state *nat_of(struct ct_table *t)
{
	return atomic_load_explicit(&t->nat, memory_order_acquire);
}

/* ---- the source index --------------------------------------------- */

/* The hash of original source @o (zone, protocols, address, port): its
 * low bits pick the bucket, bits 48-51 its filter bit. */
static uint64_t src_hash(const struct ct_table *t, const struct ct_tuple *o)
{
	struct ct_tuple k;

	memset(&k, 0, sizeof(k));
	k.src = o->src;
	k.sport = o->sport;
	k.zone = o->zone;
	k.l3 = o->l3;
	k.l4 = o->l4;
	return ct_hash_tuple(&t->key, &k);
}

#define BYSRC_PTR 0x0000ffffffffffffull

static uint64_t src_bucket_of(const struct nat_state *n, uint64_t hash)
{
	return hash & (n->n_bysrc - 1);
}

static uint64_t src_tag(uint64_t hash)
{
	return 1ull << (48 + ((hash >> 48) & 15));
}

/* A bucket word's head and filter. */
static struct ct_conn *bysrc_head(uint64_t w)
{
	return (struct ct_conn *)(uintptr_t)(w & BYSRC_PTR);
}

static bool same_src(const struct ct_tuple *a, const struct ct_tuple *b)
{
	return a->zone == b->zone && a->l3 == b->l3 && a->l4 == b->l4 &&
	       a->sport == b->sport && memcmp(&a->src, &b->src, sizeof(a->src)) == 0;
}

static void bysrc_link(struct ct_table *t, struct nat_state *n, struct ct_conn *c,
			const uint64_t *hash)
{
	struct ct_tuple o;
	uint64_t h, b, w;

	ct_conn_tuple(c, &o);
	h = hash ? *hash : src_hash(t, &o);
	b = src_bucket_of(n, h);
	ct_spin_lock(&n->locks[b % NAT_LOCKS]);
	w = atomic_load_explicit(&n->bysrc[b], memory_order_relaxed);
	atomic_store_explicit(&ct_conn_nat(c)->bysrc_next, bysrc_head(w), memory_order_relaxed);
	/* release: a reader that finds it reads its extension after */
	atomic_store_explicit(&n->bysrc[b],
			      ((uint64_t)(uintptr_t)c & BYSRC_PTR) | (w & ~BYSRC_PTR) | src_tag(h),
			      memory_order_release);
	ct_spin_unlock(&n->locks[b % NAT_LOCKS]);
}

/* Unlink @c if it is there (a reader inside it goes on through its
 * link, which stays: @c is freed a grace period after it left the
 * table).  Returns true if it was. */
static bool bysrc_unlink(struct ct_table *t, struct nat_state *n, struct ct_conn *c)
{
	struct ct_conn *_Atomic *pp = NULL;
	struct ct_conn *e, *next;
	struct ct_tuple o;
	uint64_t b, w, tags = 0;
	bool found = false;

	ct_conn_tuple(c, &o);
	b = src_bucket_of(n, src_hash(t, &o));
	ct_spin_lock(&n->locks[b % NAT_LOCKS]);
	w = atomic_load_explicit(&n->bysrc[b], memory_order_relaxed);
	next = atomic_load_explicit(&ct_conn_nat(c)->bysrc_next, memory_order_relaxed);
	if (bysrc_head(w) == c) {
		found = true;
	} else {
		for (e = bysrc_head(w); e; e = atomic_load_explicit(pp, memory_order_relaxed)) {
			pp = &ct_conn_nat(e)->bysrc_next;
			if (atomic_load_explicit(pp, memory_order_relaxed) == c) {
				atomic_store_explicit(pp, next, memory_order_release);
				found = true;
				break;
			}
		}
	}
	if (found) {
		struct ct_conn *head = bysrc_head(w) == c ? next : bysrc_head(w);

		/* the filter of what is left (a reader meanwhile may still
		 * use the old one: a superset) */
		for (e = head; e; e = atomic_load_explicit(&ct_conn_nat(e)->bysrc_next,
							   memory_order_relaxed)) {
			struct ct_tuple eo;

			ct_conn_tuple(e, &eo);
			tags |= src_tag(src_hash(t, &eo));
		}
		atomic_store_explicit(&n->bysrc[b], ((uint64_t)(uintptr_t)head & BYSRC_PTR) | tags,
				      memory_order_release);
	}
	ct_spin_unlock(&n->locks[b % NAT_LOCKS]);
	return found;
}

/* struct ct_nat_src_index over the table's index (read side held). */
struct bysrc_walk {
	struct ct_table *t;
	struct nat_state *n;
	struct ct_pending *p;      /* the setup's: its hash is kept */
};

static bool bysrc_foreach(void *idx, const struct ct_tuple *orig,
			  bool (*fn)(void *fn_arg, const struct ct_tuple *reply), void *fn_arg)
{
	struct bysrc_walk *w = idx;
	struct ct_conn *e;
	uint64_t h, wd;

	if (!w->n)
		return false;
	/* the entry's link at its insert needs the hash of its original
	 * tuple: this one, unless a DNAT came between (it does not: the
	 * source index is searched for SRC manipulations, after DST); the
	 * setup may have hashed it already, to fetch the bucket early */
	if (w->p && w->p->bysrc_valid && ct_tuple_equal(orig, &w->p->b.orig)) {
		h = w->p->bysrc_hash;
	} else {
		h = src_hash(w->t, orig);
		if (w->p && ct_tuple_equal(orig, &w->p->b.orig)) {
			w->p->bysrc_hash = h;
			w->p->bysrc_valid = true;
		}
	}
	wd = atomic_load_explicit(&w->n->bysrc[src_bucket_of(w->n, h)], memory_order_acquire);
	if (!(wd & src_tag(h)))
		return false;     /* no entry of the chain has this source */
	e = bysrc_head(wd);
	for (; e; e = atomic_load_explicit(&ct_conn_nat(e)->bysrc_next, memory_order_acquire)) {
		struct ct_tuple eo, er;

		ct_conn_tuple(e, &eo);
		if (!same_src(&eo, orig))
			continue;
		ct_conn_reply_of(e, &eo, &er);
		if (fn(fn_arg, &er))
			return true;
	}
	return false;
}

/* ---- the table's NAT state, made on first use --------------------- */

static void pm_hold(struct nat_state *n, struct ct_conn *c, bool acquire)
{
	struct ct_nat_binding b;
	uint32_t st = ct_conn_status(c);

	if (!n->pm)
		return;
	ct_conn_tuple(c, &b.orig);
	ct_conn_reply_of(c, &b.orig, &b.reply);
	b.status = CT_NAT_S_DONE_MASK | (st & CT_ST_SRC_NAT ? CT_NAT_S_SRC : 0) |
		   (st & CT_ST_DST_NAT ? CT_NAT_S_DST : 0);
	pthread_mutex_lock(&n->pm_lock);
	if (st & CT_ST_SRC_NAT) {
		if (acquire)
			(void)ct_nat_portmap_acquire(n->pm, &b, CT_NAT_MANIP_SRC);
		else
			(void)ct_nat_portmap_release(n->pm, &b, CT_NAT_MANIP_SRC);
	}
	if (st & CT_ST_DST_NAT) {
		if (acquire)
			(void)ct_nat_portmap_acquire(n->pm, &b, CT_NAT_MANIP_DST);
		else
			(void)ct_nat_portmap_release(n->pm, &b, CT_NAT_MANIP_DST);
	}
	pthread_mutex_unlock(&n->pm_lock);
}

/* t->nat_forget: @c, which had a second slot, has left the table. */
static void nat_forget(struct ct_table *t, struct ct_conn *c)
{
	struct nat_state *n = nat_of(t);
	bool was;

	if (!n)
		return;
	was = (ct_conn_status(c) & CT_ST_SRC_NAT) && bysrc_unlink(t, n, c);
	(void)was;
	pm_hold(n, c, false);
}

static void nat_free(struct ct_table *t)
{
	struct nat_state *n = atomic_exchange(&t->nat, NULL);

	if (!n)
		return;
	munmap(n->bysrc, n->map_len);
	ct_nat_portmap_destroy(n->pm);
	pthread_mutex_destroy(&n->pm_lock);
	free(n);
}

static struct nat_state *nat_state(struct ct_table *t)
{
	struct nat_state *n = nat_of(t);
	void *expect = NULL;
	/* the kernel's nf_nat_bysource has as many buckets as its conntrack
	 * table, a quarter of nf_conntrack_max by default */
	uint64_t want = t->max / 4 > BYSRC_MIN ? t->max / 4 : BYSRC_MIN;
	void *map;

	if (n)
		return n;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	for (n->n_bysrc = BYSRC_MIN; n->n_bysrc < want && n->n_bysrc < BYSRC_MAX; n->n_bysrc *= 2)
		;
	n->map_len = n->n_bysrc * sizeof(*n->bysrc);
	map = mmap(NULL, n->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		free(n);
		return NULL;
	}
	n->bysrc = map;
	pthread_mutex_init(&n->pm_lock, NULL);
	if (t->cfg.nat_exact_ports && !(n->pm = ct_nat_portmap_create(4096))) {
		munmap(map, n->map_len);
		pthread_mutex_destroy(&n->pm_lock);
		free(n);
		return NULL;
	}
	/* the hooks before the state: whoever sees an entry indexed sees
	 * them (its insert's release, the link's) */
	atomic_store_explicit(&t->nat_forget, nat_forget, memory_order_release);
	atomic_store_explicit(&t->nat_free, nat_free, memory_order_release);
	if (!atomic_compare_exchange_strong(&t->nat, &expect, n)) {
		munmap(map, n->map_len);
		ct_nat_portmap_destroy(n->pm);
		pthread_mutex_destroy(&n->pm_lock);
		free(n);
		return expect;
	}
	return n;
}

/* ---- "taken?" ------------------------------------------------------ */

static bool is_icmp(uint8_t l4)
{
	return l4 == IPPROTO_ICMP || l4 == IPPROTO_ICMPV6;
}

static bool allow_clash(uint8_t l4)
{
	return l4 == IPPROTO_UDP || l4 == IPPROTO_UDPLITE || is_icmp(l4) ||
	       l4 == IPPROTO_GRE;
}

/* The entry holding @t as its original or reply tuple, and in which
 * direction (read side held). */
static struct ct_conn *lookup_h(struct ct_thread *thr, const struct ct_tuple *tu,
				 uint64_t hash, enum ct_dir *d)
{
	struct ct_tuple inv;
	const struct ct_tuple *pinv = NULL;

	if (is_icmp(tu->l4)) {
		if (!ct_tuple_invert(tu, &inv))
			inv = *tu;
		pinv = &inv;
	}
	return ct_table_find(thr, hash, tu, pinv, d);
}

static struct ct_conn *lookup(struct ct_thread *thr, const struct ct_tuple *tu, enum ct_dir *d)
{
	return lookup_h(thr, tu, ct_hash_tuple(&thr->t->key, tu), d);
}

/* Remove @e once the setup is over; false when no room is left to
 * remember it (it is then taken). */
static bool defer_kill(struct ct_pending *p, struct ct_conn *e, enum ct_destroy_cause cause)
{
	for (unsigned i = 0; i < p->n_victims; i++)
		if (p->victims[i] == e)
			return true;
	if (p->n_victims == CT_PENDING_VICTIMS)
		return false;
	p->victims[p->n_victims] = e;
	p->victim_cause[p->n_victims++] = (uint8_t)cause;
	return true;
}

/* nf_nat_may_kill and nf_seq_has_advanced: may the SYN of @p take the
 * place of @e, an entry in TIME_WAIT or later of an earlier source NAT
 * whose sequence numbers the SYN has passed? */
static bool may_evict(struct ct_pending *p, struct ct_conn *e, uint32_t st)
{
	const struct ct_tcp_priv *mine = ct_conn_priv(ct_pending_conn(p));
	bool ok;

	if ((st & CT_ST_NAT_CLASH) || !(st & CT_ST_SRC_NAT))
		return false;
	ct_conn_lock(e);
	ok = e->l4state >= CT_TCP_TIME_WAIT &&
	     (int32_t)(mine->seen[0].td_end -
		       ((const struct ct_tcp_priv *)ct_conn_priv(e))->seen[0].td_end) > 0;
	ct_conn_unlock(e);
	return ok;
}

/*
 * ct_nat_env.prefetch: a candidate the search will probe soon (nat_select.c,
 * hint_ahead) - two stages, as the burst pipeline's (track/track.c): the
 * row its reply tuple hashes to is fetched now; the candidate hinted
 * HINT_LAG hints earlier, whose row has had that long to arrive, has the
 * entries whose signatures match fetched too, for a taken probe reads the
 * entry it finds (its tuple, status and expiry).  Read side held (the
 * setup's); prefetches never fault, so a stale slot or a hint left from
 * an earlier search costs only a wasted fetch.
 */
#define HINT_RING 8u
#define HINT_LAG 4u

static void table_prefetch(void *arg, const struct ct_tuple *cand)
{
	struct ct_pending *p = arg;
	struct ct_table *t = p->thr->t;
	struct ct_tuple reply;
	struct ct_htab *h;
	uint64_t hash;

	if (!ct_tuple_invert(cand, &reply))
		return;
	h = atomic_load_explicit(&t->htab, memory_order_acquire);
	hash = ct_hash_tuple(&t->key, &reply);
	__builtin_prefetch(ct_htab_row(h, hash));
	p->hint_reply[p->hint_n % HINT_RING] = reply;
	p->hint_hash[p->hint_n % HINT_RING] = hash;
	if (++p->hint_n > HINT_LAG) {
		uint64_t oh = p->hint_hash[(p->hint_n - 1 - HINT_LAG) % HINT_RING];
		struct ct_row *r = ct_htab_row(h, oh);

		for (unsigned m = ct_row_sig_match(r, oh); m; m &= m - 1) {
			uint64_t sl = atomic_load_explicit(&r->slot[__builtin_ctz(m)],
							   memory_order_relaxed);

			if (sl) {
				/* its key, and a NAT entry's extension after it */
				__builtin_prefetch(ct_slot_conn(sl));
				__builtin_prefetch((const uint8_t *)ct_slot_conn(sl) + 64);
			}
		}
	}
}

/* The hash of candidate reply @r: a hint's if one was made for it. */
static uint64_t hinted_hash(struct ct_pending *p, const struct ct_tuple *r)
{
	for (unsigned i = 0; i < HINT_RING && i < p->hint_n; i++) {
		unsigned k = (p->hint_n - 1 - i) % HINT_RING;

		if (p->hint_reply[k].dport == r->dport && p->hint_reply[k].sport == r->sport &&
		    ct_tuple_equal(&p->hint_reply[k], r))
			return p->hint_hash[k];
	}
	return ct_hash_tuple(&p->thr->t->key, r);
}

static bool table_taken(void *arg, const struct ct_nat_probe *pr)
{
	struct ct_pending *p = arg;
	struct ct_thread *thr = p->thr;
	struct ct_conn *e, *e2;
	struct ct_tuple eo, er, cand;
	enum ct_dir d, d2;
	uint32_t st;

	/* remembered: the confirm's insert wants the chosen one's hash - the
	 * hint's, when this candidate was hinted (the one probed next is the
	 * oldest hint not yet probed, so look there first) */
	p->probed = *pr->reply;
	p->probed_hash = hinted_hash(p, pr->reply);
	p->probed_valid = true;
	e = lookup_h(thr, pr->reply, p->probed_hash, &d);
	if (!e)
		return false;
	st = ct_conn_status(e);
	if (st & CT_ST_DYING)
		return false;
	/* nf_conntrack_tuple_taken reaps an expired entry it meets */
	if (__atomic_load_n(&e->expires, __ATOMIC_RELAXED) <= p->now)
		return !defer_kill(p, e, CT_DESTROY_TIMEOUT);
	/* "the same connection as ours" (another CPU's copy of it) */
	ct_conn_tuple(e, &eo);
	if (ct_tuple_equal(&eo, &pr->self->orig))
		return false;
	switch (pr->kind) {
	case CT_NAT_PROBE_ORIGINAL:
		/* nf_nat_used_tuple_new: only the exact reverse flow of a
		 * protocol that allows clashes, neither side NATed, may be
		 * resolved at confirm */
		if (!allow_clash(pr->reply->l4) || (pr->self->status & CT_NAT_S_MASK))
			return true;
		if (!ct_tuple_invert(pr->reply, &cand))
			return true;
		e2 = lookup(thr, &cand, &d2);
		if (!e2)
			return false;
		if (d2 != CT_DIR_REPLY || (ct_conn_status(e2) & CT_ST_NAT_MASK))
			return true;
		ct_conn_tuple(e2, &eo);
		ct_conn_reply_of(e2, &eo, &er);
		return !(ct_tuple_equal(&eo, &pr->self->reply) &&
			 ct_tuple_equal(&er, &pr->self->orig));
	case CT_NAT_PROBE_SEARCH:
		/* nf_nat_used_tuple_harder */
		if (pr->attempts_left > CT_NAT_HARDER_THRESH ||
		    pr->reply->l4 != IPPROTO_TCP ||
		    ct_pending_conn(p)->l4state != CT_TCP_SYN_SENT)
			return true;
		if (d != CT_DIR_REPLY || !may_evict(p, e, st))
			return true;
		return !defer_kill(p, e, CT_DESTROY_REOPEN);
	default:
		return true;
	}
}

/* ---- the pending entry's setup ------------------------------------- */

static bool pending_ok(struct ct_thread *thr, struct ct_pending *p)
{
	return thr && p && p == thr->pend && p->active;
}

/* ct_nat_setup's environment for @p: the table as authority. */
static void env_ready(struct ct_pending *p, struct bysrc_walk *w, struct nat_state *n)
{
	struct ct_nat_select_stats *st = NULL;

	if (!p->env_ready) {
		ct_nat_env_init(&p->env, table_taken, p);
		p->env_ready = true;
	}
	p->env.taken = table_taken;
	p->env.taken_arg = p;
	p->env.stats = st;
	p->env.rand16 = p->rand16;
	p->env.rand_arg = p->rand_arg;
	w->t = p->thr->t;
	w->n = n;
	w->p = p;
	p->env.bysrc.foreach = bysrc_foreach;
	p->env.bysrc.idx = w;
	p->env.portmap = n ? n->pm : NULL;
	p->env.prefetch = table_prefetch;
}

enum setup_kind { SETUP_RANGE, SETUP_MASQ, SETUP_NULL };

static int setup(struct ct_thread *thr, struct ct_pending *p, enum setup_kind kind,
		 const struct ct_nat_range *range, enum ct_nat_manip manip,
		 const union ct_addr *addr)
{
	struct nat_state *n;
	struct bysrc_walk w;
	int rc;

	if (!pending_ok(thr, p))
		return -EINVAL;
	n = nat_state(thr->t);
	/* a source manipulation asks the source index first: its bucket,
	 * a likely cache miss, is fetched while the setup gets ready */
	if (n && kind != SETUP_NULL && manip == CT_NAT_MANIP_SRC) {
		if (!p->bysrc_valid) {
			p->bysrc_hash = src_hash(thr->t, &p->b.orig);
			p->bysrc_valid = true;
		}
		__builtin_prefetch(&n->bysrc[src_bucket_of(n, p->bysrc_hash)]);
	}
	env_ready(p, &w, n);
	p->n_victims = 0;
	ct_read_lock(thr);
	if (n && n->pm)
		pthread_mutex_lock(&n->pm_lock);
	if (kind == SETUP_MASQ)
		rc = ct_nat_masquerade(&p->env, &p->b, range, addr, p);
	else if (kind == SETUP_NULL)
		rc = ct_nat_null_binding(&p->env, &p->b, manip, p);
	else
		rc = ct_nat_setup(&p->env, &p->b, range, manip, p);
	if (n && n->pm)
		pthread_mutex_unlock(&n->pm_lock);
	/* what the search would have removed */
	for (unsigned i = 0; i < p->n_victims; i++)
		ct_track_kill(thr, p->victims[i], (enum ct_destroy_cause)p->victim_cause[i],
			      p->now);
	p->n_victims = 0;
	ct_read_unlock(thr);
	p->env.bysrc.idx = NULL;
	if (rc == CT_NAT_BOUND_TAKEN)
		CT_CTR_INC(thr, nat_exhausted);
	return rc;
}

/* A source manipulation comes after PREROUTING: with the table doing
 * NAT, a destination no rule set up has had its null binding by then
 * (nf_nat_inet_fn at the first hook), so the source NAT sees the
 * original tuple's reply as the kernel's does. */
static void dst_null_first(struct ct_thread *thr, struct ct_pending *p)
{
	/* The null binding of a destination never changes the tuple: its
	 * range is the destination itself, with no port range, and a
	 * destination's port is not searched without one
	 * (nf_nat_l4proto_unique_tuple) - taken or not, the result is the
	 * tuple as it is, DONE.  So it is that, without its "taken?" probe
	 * (a table lookup; the kernel's result is the same, and it counts
	 * nothing either way). */
	if (thr->t->cfg.nat && !(p->b.status & CT_NAT_S_DST_DONE))
		p->b.status |= CT_NAT_S_DST_DONE;
}

int ct_pending_nat(struct ct_thread *thr, struct ct_pending *p,
		   const struct ct_nat_range *range, enum ct_nat_manip manip)
{
	if (!range || !pending_ok(thr, p))
		return -EINVAL;
	if (manip == CT_NAT_MANIP_SRC)
		dst_null_first(thr, p);
	return setup(thr, p, SETUP_RANGE, range, manip, NULL);
}

int ct_pending_masquerade(struct ct_thread *thr, struct ct_pending *p,
			  const struct ct_nat_range *range, const union ct_addr *addr)
{
	if (!addr || !pending_ok(thr, p))
		return -EINVAL;
	dst_null_first(thr, p);
	return setup(thr, p, SETUP_MASQ, range, CT_NAT_MANIP_SRC, addr);
}

int ct_thread_nat_random(struct ct_thread *thr, uint16_t (*rand16)(void *arg), void *arg)
{
	if (!thr)
		return -EINVAL;
	if (!thr->pend) {
		/* the scratch ct_classify would make (track/pending.c) */
		struct ct_pending *p = calloc(1, sizeof(*p));

		if (!p)
			return -ENOMEM;
		p->thr = thr;
		thr->pend = p;
	}
	thr->pend->rand16 = rand16;
	thr->pend->rand_arg = arg;
	return 0;
}

/* ct_confirm_hooks.inserted: index @c (read side held). */
static void inserted(struct ct_pending *p, struct ct_conn *c)
{
	struct ct_table *t = p->thr->t;
	struct nat_state *n = nat_state(t);

	if (!n) {
		/* no memory for the index: the entry is not findable as a
		 * source mapping, nothing else is lost */
		return;
	}
	if (ct_conn_status(c) & CT_ST_SRC_NAT)
		bysrc_link(t, n, c, p->bysrc_valid ? &p->bysrc_hash : NULL);
	pm_hold(n, c, true);
	/* killed before we linked it: its nat_forget may have found
	 * nothing (the stripe lock orders the two) */
	if (ct_conn_status(c) & CT_ST_DYING)
		nat_forget(t, c);
}

int ct_nat_table_adopt(struct ct_table *t, struct ct_conn *c)
{
	struct nat_state *n = nat_state(t);

	if (!n)
		return -ENOMEM;
	if (ct_conn_status(c) & CT_ST_SRC_NAT)
		bysrc_link(t, n, c, NULL);
	pm_hold(n, c, true);
	/* as inserted(): a kill before the link found nothing to unlink */
	if (ct_conn_status(c) & CT_ST_DYING)
		nat_forget(t, c);
	return 0;
}

int ct_pending_confirm(struct ct_thread *thr, struct ct_pending *p,
		       struct ct_nat_binding *binding)
{
	static const struct ct_confirm_hooks hooks = { inserted };
	int rc;

	if (!pending_ok(thr, p))
		return -EINVAL;
	/* nf_nat_inet_fn: a manipulation no rule set up gets the null
	 * binding, DST (PREROUTING) before SRC (POSTROUTING) */
	if (thr->t->cfg.nat) {
		dst_null_first(thr, p);
		if (!(p->b.status & CT_NAT_S_SRC_DONE))
			(void)setup(thr, p, SETUP_NULL, NULL, CT_NAT_MANIP_SRC, NULL);
	}
	rc = ct_track_confirm(thr, p, &hooks);
	if (binding)
		*binding = p->b;
	switch (rc) {
	case CT_TRACK_INSERTED:
		return CT_CONFIRM_INSERTED;
	case CT_TRACK_MERGED:
		return CT_CONFIRM_MERGED;
	case CT_TRACK_REPLY_ONLY:
		return CT_CONFIRM_REPLY_ONLY;
	default:
		return rc;
	}
}

void ct_nat_table_census(struct ct_table *t, uint64_t *indexed, uint64_t *pm_keys)
{
	struct nat_state *n = nat_of(t);

	*indexed = 0;
	*pm_keys = 0;
	if (!n)
		return;
	for (uint64_t b = 0; b < n->n_bysrc; b++)
		for (struct ct_conn *e = bysrc_head(atomic_load(&n->bysrc[b])); e;
		     e = atomic_load(&ct_conn_nat(e)->bysrc_next))
			(*indexed)++;
	if (n->pm)
		*pm_keys = ct_nat_portmap_keys(n->pm);
}
