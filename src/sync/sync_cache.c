/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sync_cache.c - the internal and external caches: connections by their
 * original tuple (zone included), as conntrackd's cache.c keeps them.
 *
 * A chained hash under a random SipHash key (hash.h, the table's own):
 * the external cache is filled from the network, and a peer that could
 * aim its tuples at one chain would turn every lookup into a walk.  The
 * table doubles when the objects outnumber the buckets, up to the cache's
 * maximum, so a chain stays short; growing rehashes every object at once,
 * which a node pays only while its cache is still growing (a 1M-entry
 * resync doubles it about 14 times, ~2M object moves in all).
 *
 * Objects come from chunks of CACHE_CHUNK, and a freed one goes on a free
 * list for the next insert: a resync of 1M entries is 1M inserts, and
 * malloc/calloc/free were a fifth of the receiver's instructions
 * (callgrind, ctrack-bench sync).  A cache's memory is returned when the
 * cache is destroyed; it never holds more than its maximum.
 *
 * The lru list is ALARM's: internal objects in the order they were last
 * sent, external ones in the order they were last refreshed, so that the
 * next refresh due and the next entry to expire are each at its head.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sync/sync_node.h"

#define CACHE_MIN_BUCKETS 1024u
#define CACHE_CHUNK 512u

struct cache_chunk {
	struct cache_chunk *next;
	struct sync_obj obj[CACHE_CHUNK];
};

int sync_cache_init(struct sync_cache *c, uint64_t max, uint64_t seed)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->max = max;
	c->nbuckets = CACHE_MIN_BUCKETS;
	c->buckets = calloc(c->nbuckets, sizeof(struct sync_obj *));
	if (!c->buckets)
		return -ENOMEM;
	if (seed) {
		c->key.k0 = seed;
		c->key.k1 = seed * 0x9e3779b97f4a7c15ull + 1;
	} else {
		rc = ct_hash_key_random(&c->key);
		if (rc < 0) {
			free(c->buckets);
			c->buckets = NULL;
			return rc;
		}
	}
	c->lru.lprev = c->lru.lnext = &c->lru;
	return 0;
}

void sync_cache_fini(struct sync_cache *c)
{
	for (uint64_t b = 0; c->buckets && b < c->nbuckets; b++)
		for (struct sync_obj *o = c->buckets[b]; o; o = o->hnext)
			free(o->core.rare);
	while (c->chunks) {
		struct cache_chunk *next = c->chunks->next;

		free(c->chunks);
		c->chunks = next;
	}
	free(c->buckets);
	c->buckets = NULL;
	c->free_list = NULL;
	c->count = c->live = 0;
}

static struct sync_obj *obj_alloc(struct sync_cache *c)
{
	struct sync_obj *o = c->free_list;

	if (!o) {
		struct cache_chunk *k = malloc(sizeof(*k));

		if (!k)
			return NULL;
		k->next = c->chunks;
		c->chunks = k;
		for (unsigned i = CACHE_CHUNK; i-- > 0;) {
			k->obj[i].hnext = c->free_list;
			c->free_list = &k->obj[i];
		}
		o = c->free_list;
	}
	c->free_list = o->hnext;
	return o;
}

void sync_cache_free(struct sync_cache *c, struct sync_obj *o)
{
	free(o->core.rare);
	o->core.rare = NULL;
	o->hnext = c->free_list;
	c->free_list = o;
}

/* Whether @c has a rare field worth keeping: decided from the HAS_ bits
 * first (most entries have none of them), then by the values - the
 * kernel's all-zero SYNPROXY, which conntrackd sends with every entry,
 * needs no block.  A field whose HAS_ bit is clear is not kept at all:
 * nothing reads it. */
static bool rare_needed(const struct ct_sync_conn *c)
{
	const uint32_t bits = CT_SYNC_HAS_LABELS | CT_SYNC_HAS_NATSEQ | CT_SYNC_HAS_SYNPROXY |
			      CT_SYNC_HAS_MASTER | CT_SYNC_HAS_HELPER;
	uint64_t l0, l1;
	uint32_t acc = 0;

	if (!(c->has & bits))
		return false;
	if (c->has & (CT_SYNC_HAS_MASTER | CT_SYNC_HAS_HELPER))
		return true;
	memcpy(&l0, c->labels, 8);
	memcpy(&l1, c->labels + 8, 8);
	for (unsigned i = 0; i < 6; i++)
		acc |= c->natseq[i];
	for (unsigned i = 0; i < 3; i++)
		acc |= c->synproxy[i];
	return (l0 | l1 | acc) != 0;
}

int sync_obj_store(struct sync_obj *o, const struct ct_sync_conn *c)
{
	struct sync_core *k = &o->core;

	if (!rare_needed(c)) {
		free(k->rare);
		k->rare = NULL;
	} else {
		if (!k->rare) {
			k->rare = malloc(sizeof(*k->rare));
			if (!k->rare)
				return -ENOMEM;
		}
		memcpy(k->rare->labels, c->labels, sizeof(k->rare->labels));
		memcpy(k->rare->natseq, c->natseq, sizeof(k->rare->natseq));
		memcpy(k->rare->synproxy, c->synproxy, sizeof(k->rare->synproxy));
		k->rare->master = c->master;
		memcpy(k->rare->helper, c->helper, sizeof(k->rare->helper));
	}
	k->orig = c->orig;
	k->has = c->has;
	k->status = c->status;
	k->timeout_s = c->timeout_s;
	k->mark = c->mark;
	k->l4state = c->l4state;
	k->wscale[0] = c->wscale[0];
	k->wscale[1] = c->wscale[1];
	k->dccp_role = c->dccp_role;
	k->sctp_vtag[0] = c->sctp_vtag[0];
	k->sctp_vtag[1] = c->sctp_vtag[1];
	k->snat_addr = c->snat_addr;
	k->dnat_addr = c->dnat_addr;
	k->snat_port = c->snat_port;
	k->dnat_port = c->dnat_port;
	return 0;
}

void sync_obj_load(const struct sync_obj *o, struct ct_sync_conn *c)
{
	const struct sync_core *k = &o->core;

	memset(c, 0, sizeof(*c));
	c->orig = k->orig;
	c->has = k->has;
	c->status = k->status;
	c->timeout_s = k->timeout_s;
	c->mark = k->mark;
	c->l4state = k->l4state;
	c->wscale[0] = k->wscale[0];
	c->wscale[1] = k->wscale[1];
	c->dccp_role = k->dccp_role;
	c->sctp_vtag[0] = k->sctp_vtag[0];
	c->sctp_vtag[1] = k->sctp_vtag[1];
	c->snat_addr = k->snat_addr;
	c->dnat_addr = k->dnat_addr;
	c->snat_port = k->snat_port;
	c->dnat_port = k->dnat_port;
	if (k->rare) {
		memcpy(c->labels, k->rare->labels, sizeof(c->labels));
		memcpy(c->natseq, k->rare->natseq, sizeof(c->natseq));
		memcpy(c->synproxy, k->rare->synproxy, sizeof(c->synproxy));
		c->master = k->rare->master;
		memcpy(c->helper, k->rare->helper, sizeof(c->helper));
	}
}

uint64_t sync_cache_hash(const struct sync_cache *c, const struct ct_tuple *orig)
{
	return ct_hash_tuple(&c->key, orig);
}

static uint64_t bucket_of(const struct sync_cache *c, uint64_t hash)
{
	return hash & (c->nbuckets - 1);
}

struct sync_obj *sync_cache_find_h(struct sync_cache *c, const struct ct_tuple *orig,
				   uint64_t h)
{
	for (struct sync_obj *o = c->buckets[bucket_of(c, h)]; o; o = o->hnext)
		if (o->hash == h && ct_tuple_equal(&o->core.orig, orig))
			return o;
	return NULL;
}

struct sync_obj *sync_cache_find(struct sync_cache *c, const struct ct_tuple *orig)
{
	return sync_cache_find_h(c, orig, sync_cache_hash(c, orig));
}

/* Double the buckets; on no memory keep the old ones (chains get longer,
 * nothing is lost). */
static void cache_grow(struct sync_cache *c)
{
	uint64_t nb = c->nbuckets * 2;
	struct sync_obj **b = calloc(nb, sizeof(struct sync_obj *));

	if (!b)
		return;
	for (uint64_t i = 0; i < c->nbuckets; i++) {
		struct sync_obj *o = c->buckets[i];

		while (o) {
			struct sync_obj *next = o->hnext;
			uint64_t j = o->hash & (nb - 1);

			o->hnext = b[j];
			b[j] = o;
			o = next;
		}
	}
	free(c->buckets);
	c->buckets = b;
	c->nbuckets = nb;
}

struct sync_obj *sync_cache_add(struct sync_cache *c, const struct ct_sync_conn *conn,
				uint64_t hash, ct_time_ns now, int *err)
{
	struct sync_obj *o;
	uint64_t b;

	if (c->count >= c->max) {
		c->st.create_failed++;
		*err = -ENOSPC;
		return NULL;
	}
	o = obj_alloc(c);
	if (!o) {
		c->st.create_failed++;
		*err = -ENOMEM;
		return NULL;
	}
	if (c->count >= c->nbuckets)
		cache_grow(c);
	o->qn.prev = o->qn.next = NULL;
	o->qn.kind = SQ_OBJ;
	o->qn.where = SQ_NONE;
	o->lprev = o->lnext = NULL;
	o->core.rare = NULL;
	if (sync_obj_store(o, conn)) {
		sync_cache_free(c, o);
		c->st.create_failed++;
		*err = -ENOMEM;
		return NULL;
	}
	o->hash = hash;
	o->first_ns = o->updated_ns = now;
	o->expires_ns = o->sent_ns = 0;
	o->seq = 0;
	o->status = OBJ_NEW;
	b = bucket_of(c, o->hash);
	o->hnext = c->buckets[b];
	c->buckets[b] = o;
	c->count++;
	c->live++;
	c->st.created++;
	c->st.active = c->live;
	return o;
}

void sync_cache_unhash(struct sync_cache *c, struct sync_obj *o)
{
	struct sync_obj **pp = &c->buckets[bucket_of(c, o->hash)];

	while (*pp && *pp != o)
		pp = &(*pp)->hnext;
	if (*pp) {
		*pp = o->hnext;
		c->count--;
		if (o->status != OBJ_DEAD)
			c->live--;
	}
	o->hnext = NULL;
	sync_lru_unlink(o);
	c->st.active = c->live;
}

void sync_cache_set_dead(struct sync_cache *c, struct sync_obj *o)
{
	if (o->status == OBJ_DEAD)
		return;
	o->status = OBJ_DEAD;
	c->live--;
	c->st.destroyed++;
	c->st.active = c->live;
}

void sync_lru_unlink(struct sync_obj *o)
{
	if (!o->lnext)
		return;
	o->lprev->lnext = o->lnext;
	o->lnext->lprev = o->lprev;
	o->lprev = o->lnext = NULL;
}

void sync_lru_add_tail(struct sync_cache *c, struct sync_obj *o)
{
	sync_lru_unlink(o);
	o->lprev = c->lru.lprev;
	o->lnext = &c->lru;
	c->lru.lprev->lnext = o;
	c->lru.lprev = o;
}
