/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nat_portmap.c - ctrack's exact port search: which ports of a key are in
 * use, and the first free one from a starting point, in bounded time.
 *
 * Why.  The kernel's search (nf_nat_l4proto_unique_tuple) probes at most
 * 248 random candidates and then keeps a taken one; with 99% of a range in
 * use toward one server it fails for about 1 connection in 12 while
 * hundreds of ports are free.  Here each key - the candidate tuple with
 * its varying port zeroed: zone, protocols, NAT address, peer address and
 * port for source NAT - knows its ports in use:
 *   - up to PM_SMALL of them in a sorted array inside the key's node
 *     (most keys: a NAT address talks to many servers, a few connections
 *     each), 64 bytes;
 *   - beyond that a bit per port (1024 words) with two summary levels:
 *     l1 (16 words) has a bit per l0 word that is full, l2 (16 bits) a
 *     bit per l1 word that is all ones.  The first free port at or after
 *     p is then at most: the rest of p's word, the rest of its l1 word,
 *     the next non-full l1 word from l2 - a handful of bit scans whatever
 *     the fill, which is the time bound (BENCHMARKS.md, nat-search).
 *     A bitmap goes back to the array when its key falls to PM_SMALL / 2.
 * Keys are chained in a hash under the table's keyed SipHash.
 *
 * The map only proposes; the env's taken callback decides, so a port held
 * by an entry the map was never told about is skipped and the search goes
 * on from the next one.  Not thread-safe.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "nat/nat_priv.h"

#define PM_SMALL 32

struct pm_bits {
	uint64_t l0[1024];   /* bit set: port in use */
	uint64_t l1[16];     /* bit w set: l0[w] is all ones */
	uint16_t l2;         /* bit g set: l1[g] is all ones */
};

struct pm_node {
	struct pm_node *next;
	struct ct_tuple key;
	uint32_t used;
	struct pm_bits *bits;        /* NULL: small[0..used) holds them */
	uint16_t small[PM_SMALL];    /* sorted */
};

struct ct_nat_portmap {
	struct pm_node **rows;
	size_t nrows;                /* a power of two */
	size_t keys;
	size_t bitmaps;
	struct ct_hash_key hkey;
};

/* ---- keys ---------------------------------------------------------- */

/* The orig-side tuple the binding's @manip produced, as the search saw
 * it: for SRC the inverted reply (every manipulation applied); for DST
 * the same with the source still the original one (the DST
 * manipulation runs before any SRC one). */
static void binding_candidate(struct ct_tuple *c, const struct ct_nat_binding *b,
			      enum ct_nat_manip manip)
{
	if (!ct_tuple_invert(&b->reply, c))
		*c = b->orig;
	if (manip == CT_NAT_MANIP_DST) {
		c->src = b->orig.src;
		if (c->l4 != 1 && c->l4 != 58)
			c->sport = b->orig.sport;
	}
}

static void make_key(struct ct_tuple *k, const struct ct_tuple *cand,
		     enum ct_nat_manip manip, uint16_t *port)
{
	*k = *cand;
	*port = *ct_nat_keyptr(k, manip);
	*ct_nat_keyptr(k, manip) = 0;
	/* A SRC key has its source port zeroed, a DST key its destination
	 * port, so the two kinds do not meet - except for ICMP, whose id is
	 * one field for both: there a DST key has the type's top bit
	 * flipped (no query type of either family then collides). */
	if (manip == CT_NAT_MANIP_DST && (k->l4 == 1 || k->l4 == 58))
		k->dport ^= 0x8000;
}

static size_t row_of(const struct ct_nat_portmap *pm, const struct ct_tuple *k)
{
	return (size_t)ct_hash_tuple(&pm->hkey, k) & (pm->nrows - 1);
}

static struct pm_node *lookup(const struct ct_nat_portmap *pm,
			      const struct ct_tuple *k)
{
	for (struct pm_node *n = pm->rows[row_of(pm, k)]; n; n = n->next)
		if (ct_tuple_equal(&n->key, k))
			return n;
	return NULL;
}

struct ct_nat_portmap *ct_nat_portmap_create(size_t hint)
{
	struct ct_nat_portmap *pm = calloc(1, sizeof(*pm));
	size_t n = 64;

	if (!pm)
		return NULL;
	while (n < hint && n < ((size_t)1 << 30))
		n <<= 1;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	pm->rows = calloc(n, sizeof(*pm->rows));
	if (!pm->rows || ct_hash_key_random(&pm->hkey) != 0) {
		free(pm->rows);
		free(pm);
		return NULL;
	}
	pm->nrows = n;
	return pm;
}

void ct_nat_portmap_destroy(struct ct_nat_portmap *pm)
{
	if (!pm)
		return;
	for (size_t i = 0; i < pm->nrows; i++) {
		struct pm_node *n = pm->rows[i];

		while (n) {
			struct pm_node *next = n->next;

			free(n->bits);
			free(n);
			n = next;
		}
	}
	free(pm->rows);
	free(pm);
}

static void grow(struct ct_nat_portmap *pm)
{
	size_t n = pm->nrows * 2;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	struct pm_node **rows = calloc(n, sizeof(*rows));

	if (!rows)
		return; /* longer chains, still correct */
	for (size_t i = 0; i < pm->nrows; i++) {
		struct pm_node *e = pm->rows[i];

		while (e) {
			struct pm_node *next = e->next;
			size_t r = (size_t)ct_hash_tuple(&pm->hkey, &e->key) & (n - 1);

			e->next = rows[r];
			rows[r] = e;
			e = next;
		}
	}
	free(pm->rows);
	pm->rows = rows;
	pm->nrows = n;
}

/* ---- the bitmap ---------------------------------------------------- */

static bool bits_test(const struct pm_bits *b, unsigned p)
{
	return (b->l0[p >> 6] >> (p & 63)) & 1;
}

static void bits_set(struct pm_bits *b, unsigned p)
{
	unsigned w = p >> 6, g = w >> 6;

	b->l0[w] |= 1ull << (p & 63);
	if (b->l0[w] == ~0ull) {
		b->l1[g] |= 1ull << (w & 63);
		if (b->l1[g] == ~0ull)
			b->l2 |= (uint16_t)(1u << g);
	}
}

static void bits_clear(struct pm_bits *b, unsigned p)
{
	unsigned w = p >> 6, g = w >> 6;

	b->l0[w] &= ~(1ull << (p & 63));
	b->l1[g] &= ~(1ull << (w & 63));
	b->l2 &= (uint16_t)~(1u << g);
}

/* The first port >= @p (0..65535) whose bit is clear, or 65536. */
static unsigned bits_next_free(const struct pm_bits *b, unsigned p)
{
	unsigned w = p >> 6, g = w >> 6;
	uint64_t m = ~b->l0[w] & (~0ull << (p & 63));
	unsigned gm;

	if (m)
		return (w << 6) + (unsigned)__builtin_ctzll(m);
	/* the next word of this l1 group that is not full */
	m = (w & 63) == 63 ? 0 : ~b->l1[g] & (~0ull << ((w & 63) + 1));
	if (!m) {
		/* the next group that is not all full */
		gm = g == 15 ? 0 : (unsigned)(uint16_t)~b->l2 & (~0u << (g + 1)) & 0xffffu;
		if (!gm)
			return 65536;
		g = (unsigned)__builtin_ctz(gm);
		m = ~b->l1[g];
	}
	w = (g << 6) + (unsigned)__builtin_ctzll(m);
	return (w << 6) + (unsigned)__builtin_ctzll(~b->l0[w]);
}

/* ---- the small array ------------------------------------------------ */

/* index of the first element >= p */
static unsigned small_lower(const struct pm_node *n, unsigned p)
{
	unsigned lo = 0, hi = n->used;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (n->small[mid] < p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static unsigned small_next_free(const struct pm_node *n, unsigned p)
{
	for (unsigned i = small_lower(n, p); i < n->used && n->small[i] == p; i++)
		p++;
	return p;
}

/* ---- one node ------------------------------------------------------- */

static unsigned node_next_free(const struct pm_node *n, unsigned p)
{
	if (!n)
		return p;
	return n->bits ? bits_next_free(n->bits, p) : small_next_free(n, p);
}

static bool node_holds(const struct pm_node *n, unsigned p)
{
	unsigned i;

	if (n->bits)
		return bits_test(n->bits, p);
	i = small_lower(n, p);
	return i < n->used && n->small[i] == p;
}

static int node_add(struct ct_nat_portmap *pm, struct pm_node *n, unsigned p)
{
	if (node_holds(n, p))
		return -EEXIST;
	if (!n->bits && n->used == PM_SMALL) {
		struct pm_bits *b = calloc(1, sizeof(*b));

		if (!b)
			return -ENOMEM;
		for (unsigned i = 0; i < n->used; i++)
			bits_set(b, n->small[i]);
		n->bits = b;
		pm->bitmaps++;
	}
	if (n->bits) {
		bits_set(n->bits, p);
	} else {
		unsigned i = small_lower(n, p);

		memmove(&n->small[i + 1], &n->small[i], (n->used - i) * sizeof(n->small[0]));
		n->small[i] = (uint16_t)p;
	}
	n->used++;
	return 0;
}

static int node_del(struct ct_nat_portmap *pm, struct pm_node *n, unsigned p)
{
	if (!node_holds(n, p))
		return -ENOENT;
	if (n->bits) {
		bits_clear(n->bits, p);
		n->used--;
		if (n->used <= PM_SMALL / 2) {
			/* back to the array: walk the set bits */
			struct pm_bits *b = n->bits;
			unsigned k = 0;

			for (unsigned w = 0; w < 1024 && k < n->used; w++) {
				uint64_t m = b->l0[w];

				while (m) {
					n->small[k++] = (uint16_t)((w << 6) +
						(unsigned)__builtin_ctzll(m));
					m &= m - 1;
				}
			}
			free(b);
			n->bits = NULL;
			pm->bitmaps--;
		}
		return 0;
	}
	{
		unsigned i = small_lower(n, p);

		memmove(&n->small[i], &n->small[i + 1], (n->used - i - 1) * sizeof(n->small[0]));
		n->used--;
	}
	return 0;
}

/* ---- the interface ------------------------------------------------------ */

int ct_nat_portmap_acquire(struct ct_nat_portmap *pm,
			   const struct ct_nat_binding *b,
			   enum ct_nat_manip manip)
{
	struct ct_tuple cand, k;
	struct pm_node *n;
	uint16_t port;
	int rc;

	binding_candidate(&cand, b, manip);
	make_key(&k, &cand, manip, &port);
	n = lookup(pm, &k);
	if (!n) {
		if (pm->keys >= pm->nrows * 2 && pm->nrows < ((size_t)1 << 30))
			grow(pm);
		n = calloc(1, sizeof(*n));
		if (!n)
			return -ENOMEM;
		n->key = k;
		n->next = pm->rows[row_of(pm, &k)];
		pm->rows[row_of(pm, &k)] = n;
		pm->keys++;
	}
	rc = node_add(pm, n, port);
	return rc;
}

int ct_nat_portmap_release(struct ct_nat_portmap *pm,
			   const struct ct_nat_binding *b,
			   enum ct_nat_manip manip)
{
	struct ct_tuple cand, k;
	struct pm_node **pp;
	uint16_t port;
	int rc;

	binding_candidate(&cand, b, manip);
	make_key(&k, &cand, manip, &port);
	for (pp = &pm->rows[row_of(pm, &k)]; *pp; pp = &(*pp)->next)
		if (ct_tuple_equal(&(*pp)->key, &k))
			break;
	if (!*pp)
		return -ENOENT;
	rc = node_del(pm, *pp, port);
	if (rc == 0 && (*pp)->used == 0) {
		struct pm_node *n = *pp;

		*pp = n->next;
		free(n->bits);
		free(n);
		pm->keys--;
	}
	return rc;
}

uint32_t ct_nat_portmap_used(const struct ct_nat_portmap *pm,
			     const struct ct_tuple *candidate,
			     enum ct_nat_manip manip)
{
	struct ct_tuple k;
	const struct pm_node *n;
	uint16_t port;

	make_key(&k, candidate, manip, &port);
	n = lookup(pm, &k);
	return n ? n->used : 0;
}

size_t ct_nat_portmap_keys(const struct ct_nat_portmap *pm)
{
	return pm->keys;
}

size_t ct_nat_portmap_bytes(const struct ct_nat_portmap *pm)
{
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	return sizeof(*pm) + pm->nrows * sizeof(pm->rows[0]) +
	       pm->keys * sizeof(struct pm_node) + pm->bitmaps * sizeof(struct pm_bits);
}

/* The first free port in [lo, hi] as the map and the callback see it, or
 * 65536.  Every port the map calls free is offered to @free_ok. */
static unsigned search_segment(const struct pm_node *n, unsigned lo, unsigned hi,
			       struct ct_tuple *cand, uint16_t *keyptr,
			       bool (*free_ok)(void *, const struct ct_tuple *),
			       void *arg, uint64_t *probes)
{
	unsigned p = lo;

	while (p <= hi) {
		p = node_next_free(n, p);
		if (p > hi)
			break;
		*keyptr = (uint16_t)p;
		(*probes)++;
		if (free_ok(arg, cand))
			return p;
		p++;
	}
	return 65536;
}

bool ct_nat_portmap_find(struct ct_nat_portmap *pm, struct ct_tuple *cand,
			 enum ct_nat_manip manip, unsigned min, unsigned size,
			 uint16_t off,
			 bool (*free_ok)(void *arg, const struct ct_tuple *cand),
			 void *arg, uint64_t *probes)
{
	struct ct_tuple k;
	const struct pm_node *n;
	uint16_t *keyptr = ct_nat_keyptr(cand, manip), dummy;
	unsigned start, last;

	if (size == 0 || min > 65535)
		return false;
	/* a class that would wrap past 65535 (only a reversed ICMP id range
	 * can) is cut at 65535 */
	if (size > 65536 - min)
		size = 65536 - min;
	make_key(&k, cand, manip, &dummy);
	n = lookup(pm, &k);
	start = min + off % size;
	last = min + size - 1;
	/* (no shortcut on n->used >= size: the key's ports need not all lie
	 * in this class - a single-port range next to other held ports of
	 * the key is not full; the segments below are bounded anyway) */
	if (search_segment(n, start, last, cand, keyptr, free_ok, arg, probes) < 65536)
		return true;
	if (start > min &&
	    search_segment(n, min, start - 1, cand, keyptr, free_ok, arg, probes) < 65536)
		return true;
	*keyptr = (uint16_t)start;
	return false;
}
