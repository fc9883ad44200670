/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nat_bysrc.c - the in-memory index of source mappings (the kernel's
 * nf_nat_bysource), behind struct ct_nat_src_index.
 *
 * find_appropriate_src() asks: which connections already have a source
 * mapping for this source (zone, protocols, address, port)?  The kernel
 * keeps every such connection on a chain of a separate hash, keyed by the
 * original source, newest at the head, and takes the first whose mapping
 * fits the new range; the order matters to a replay, so it is kept here:
 * insertion at the head, and a resize that moves chains in order.
 *
 * Chains are keyed with the table's SipHash (hash.c) under a random key,
 * so that the sources an attacker picks cannot pile up in one chain.  The
 * index is for tools and tests, and the model for phase 2, which links the
 * entries themselves (an hlist node in the NAT extension); it is not
 * thread-safe.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "nat/nat_priv.h"

struct bysrc_node {
	struct bysrc_node *next;
	struct ct_tuple orig;
	struct ct_tuple reply;
};

struct ct_nat_bysrc {
	struct bysrc_node **rows;
	size_t nrows;              /* a power of two */
	size_t count;
	struct ct_hash_key key;
};

/* The part of a tuple find_appropriate_src compares (same_src plus the
 * zone): protocols, zone, source address and port; the rest zero. */
static void src_key(struct ct_tuple *k, const struct ct_tuple *t)
{
	memset(k, 0, sizeof(*k));
	k->src = t->src;
	k->sport = t->sport;
	k->zone = t->zone;
	k->l3 = t->l3;
	k->l4 = t->l4;
}

static bool same_src(const struct ct_tuple *a, const struct ct_tuple *b)
{
	return a->l4 == b->l4 && a->l3 == b->l3 && a->zone == b->zone &&
	       a->sport == b->sport && memcmp(&a->src, &b->src, sizeof(a->src)) == 0;
}

static size_t row_of(const struct ct_nat_bysrc *ix, const struct ct_tuple *t)
{
	struct ct_tuple k;

	src_key(&k, t);
	return (size_t)ct_hash_tuple(&ix->key, &k) & (ix->nrows - 1);
}

struct ct_nat_bysrc *ct_nat_bysrc_create(size_t hint)
{
	struct ct_nat_bysrc *ix = calloc(1, sizeof(*ix));
	size_t n = 64;

	if (!ix)
		return NULL;
	while (n < hint && n < ((size_t)1 << 30))
		n <<= 1;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	ix->rows = calloc(n, sizeof(*ix->rows));
	if (!ix->rows || ct_hash_key_random(&ix->key) != 0) {
		free(ix->rows);
		free(ix);
		return NULL;
	}
	ix->nrows = n;
	return ix;
}

void ct_nat_bysrc_destroy(struct ct_nat_bysrc *ix)
{
	if (!ix)
		return;
	for (size_t i = 0; i < ix->nrows; i++) {
		struct bysrc_node *n = ix->rows[i];

		while (n) {
			struct bysrc_node *next = n->next;

			free(n);
			n = next;
		}
	}
	free(ix->rows);
	free(ix);
}

/* Twice the rows; each chain's order is kept (same sources share a row,
 * so their newest-first order survives). */
static int grow(struct ct_nat_bysrc *ix)
{
	size_t n = ix->nrows * 2;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	struct bysrc_node **rows = calloc(n, sizeof(*rows));
	struct bysrc_node **tails;

	if (!rows)
		return -ENOMEM;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	tails = calloc(n, sizeof(*tails));
	if (!tails) {
		free(rows);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ix->nrows; i++) {
		struct bysrc_node *e = ix->rows[i];

		while (e) {
			struct bysrc_node *next = e->next;
			struct ct_tuple k;
			size_t r;

			src_key(&k, &e->orig);
			r = (size_t)ct_hash_tuple(&ix->key, &k) & (n - 1);
			e->next = NULL;
			if (tails[r])
				tails[r]->next = e;
			else
				rows[r] = e;
			tails[r] = e;
			e = next;
		}
	}
	free(tails);
	free(ix->rows);
	ix->rows = rows;
	ix->nrows = n;
	return 0;
}

int ct_nat_bysrc_add(struct ct_nat_bysrc *ix, const struct ct_nat_binding *b)
{
	struct bysrc_node *e;
	size_t r;

	if (ix->count >= ix->nrows * 2 && ix->nrows < ((size_t)1 << 30))
		(void)grow(ix); /* a failed grow only makes chains longer */
	e = malloc(sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->orig = b->orig;
	e->reply = b->reply;
	r = row_of(ix, &b->orig);
	e->next = ix->rows[r];
	ix->rows[r] = e;
	ix->count++;
	return 0;
}

int ct_nat_bysrc_del(struct ct_nat_bysrc *ix, const struct ct_nat_binding *b)
{
	struct bysrc_node **pp = &ix->rows[row_of(ix, &b->orig)];

	for (; *pp; pp = &(*pp)->next) {
		struct bysrc_node *e = *pp;

		if (ct_tuple_equal(&e->orig, &b->orig) &&
		    ct_tuple_equal(&e->reply, &b->reply)) {
			*pp = e->next;
			free(e);
			ix->count--;
			return 0;
		}
	}
	return -ENOENT;
}

size_t ct_nat_bysrc_count(const struct ct_nat_bysrc *ix)
{
	return ix->count;
}

static bool bysrc_foreach(void *idx, const struct ct_tuple *orig,
			  bool (*fn)(void *fn_arg, const struct ct_tuple *reply),
			  void *fn_arg)
{
	struct ct_nat_bysrc *ix = idx;

	for (const struct bysrc_node *e = ix->rows[row_of(ix, orig)]; e; e = e->next)
		if (same_src(&e->orig, orig) && fn(fn_arg, &e->reply))
			return true;
	return false;
}

struct ct_nat_src_index ct_nat_bysrc_ops(struct ct_nat_bysrc *ix)
{
	struct ct_nat_src_index ops = { bysrc_foreach, ix };

	return ops;
}
