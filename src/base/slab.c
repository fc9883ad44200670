/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * slab.c - per-namespace object slabs over a huge-page arena (see slab.h).
 *
 * Three levels, each amortising the one below: the arena maps 2 MiB
 * regions (madvise(MADV_HUGEPAGE) from the second on, since THP is in
 * madvise mode here) and
 * hands out 32 KiB chunks; a slab carves a chunk into objects of one size;
 * a thread's magazine takes up to 32 objects from the slab per lock.
 * Memory is never returned to the system before the table is destroyed;
 * chunks of torn-down namespaces are reused, which keeps resident memory
 * flat under churn.
 *
 * Under AddressSanitizer a freed object is poisoned, all but the 8 bytes
 * holding its guard word (which a namespace walk reads in free objects
 * too), so that a reader still using an entry after its grace period - a
 * use after free that ASan cannot see in memory it did not allocate - is
 * reported.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <urcu/arch.h>

#include "base/slab.h"
#include "base/spin.h"

#if defined(__SANITIZE_ADDRESS__)
#define CT_SLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CT_SLAB_ASAN 1
#endif
#endif

#ifdef CT_SLAB_ASAN
#include <sanitizer/asan_interface.h>

/* Poison freed @obj except its link word and its guard word's granule. */
static void poison_obj(const struct ct_slab *s, void *obj)
{
	uint8_t *p = obj;
	uint32_t g = s->guard_off & ~7u;

	ASAN_POISON_MEMORY_REGION(p, g);
	ASAN_POISON_MEMORY_REGION(p + g + 8, s->obj_size - g - 8);
}

static void unpoison(void *p, size_t len)
{
	ASAN_UNPOISON_MEMORY_REGION(p, len);
}
#else
static void poison_obj(const struct ct_slab *s, void *obj)
{
	(void)s;
	(void)obj;
}

static void unpoison(void *p, size_t len)
{
	(void)p;
	(void)len;
}
#endif

static void slab_lock(struct ct_slab *s)
{
	ct_spin_lock(&s->lock);
}

static void slab_unlock(struct ct_slab *s)
{
	ct_spin_unlock(&s->lock);
}

int ct_arena_init(struct ct_arena *a)
{
	memset(a, 0, sizeof(*a));
	return -pthread_mutex_init(&a->lock, NULL);
}

void ct_arena_fini(struct ct_arena *a)
{
	for (size_t i = 0; i < a->n_regions; i++) {
		unpoison(a->regions[i], CT_REGION_SIZE);
		munmap(a->regions[i], CT_REGION_SIZE);
	}
	free(a->regions);
	pthread_mutex_destroy(&a->lock);
	memset(a, 0, sizeof(*a));
}

/* Map one 2 MiB-aligned region; caller holds a->lock. */
static int arena_grow(struct ct_arena *a)
{
	size_t len = CT_REGION_SIZE * 2;
	uint8_t *p, *aligned;

	if (a->n_regions == a->cap_regions) {
		size_t cap = a->cap_regions ? a->cap_regions * 2 : 16;
		void **r = realloc(a->regions, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		a->regions = r;
		a->cap_regions = cap;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		return -ENOMEM;
	/* trim to one aligned region */
	aligned = (uint8_t *)(((uintptr_t)p + CT_REGION_SIZE - 1) &
			      ~(uintptr_t)(CT_REGION_SIZE - 1));
	if (aligned > p)
		munmap(p, (size_t)(aligned - p));
	if (aligned + CT_REGION_SIZE < p + len)
		munmap(aligned + CT_REGION_SIZE,
		       (size_t)(p + len - (aligned + CT_REGION_SIZE)));
	if ((uintptr_t)aligned >> 48) {
		/* slots keep 48-bit pointers (table/htab.h) */
		munmap(aligned, CT_REGION_SIZE);
		return -ENOMEM;
	}
	/* the first region in small pages: a small table touches a few of
	 * them, where a huge page is zeroed whole at its first write */
	if (a->n_regions > 0)
		madvise(aligned, CT_REGION_SIZE, MADV_HUGEPAGE);
	a->regions[a->n_regions++] = aligned;
	a->carve = aligned;
	a->carve_end = aligned + CT_REGION_SIZE;
	a->bytes_mapped += CT_REGION_SIZE;
	return 0;
}

static void *arena_chunk_get(struct ct_arena *a)
{
	void *c = NULL;

	pthread_mutex_lock(&a->lock);
	if (a->free_chunks) {
		c = a->free_chunks;
		a->free_chunks = *(void **)c;
	} else if (a->carve < a->carve_end || arena_grow(a) == 0) {
		c = a->carve;
		a->carve += CT_CHUNK_SIZE;
	}
	if (c)
		a->chunks_in_use++;
	pthread_mutex_unlock(&a->lock);
	return c;
}

static void arena_chunk_put(struct ct_arena *a, void *c)
{
	pthread_mutex_lock(&a->lock);
	*(void **)c = a->free_chunks;
	a->free_chunks = c;
	a->chunks_in_use--;
	pthread_mutex_unlock(&a->lock);
}

void ct_slab_init(struct ct_slab *s, struct ct_arena *a, uint32_t obj_size,
		  uint32_t guard_off)
{
	memset(s, 0, sizeof(*s));
	s->arena = a;
	s->obj_size = obj_size < CT_SLAB_MIN_OBJ ? CT_SLAB_MIN_OBJ : (obj_size + 7u) & ~7u;
	s->guard_off = guard_off;
}

static _Atomic uint32_t *guard_of(const struct ct_slab *s, void *obj)
{
	return (_Atomic uint32_t *)((uint8_t *)obj + s->guard_off);
}

/* Zero @obj without a plain store to its guard word (see slab.h); inline,
 * as the allocation's fast path is little more than this. */
static inline __attribute__((always_inline)) void zero_obj(const struct ct_slab *s,
							   void *obj)
{
	uint8_t *p = obj;
	uint32_t g = s->guard_off;

	/* an entry's guard (its status) follows its 8-byte expiry (conn.h):
	 * one store, where a call to memset would cost a dozen instructions */
	if (g == 8) {
		const uint64_t z = 0;

		memcpy(p, &z, 8);
	} else {
		memset(p, 0, g);
	}
	atomic_store_explicit(guard_of(s, obj), 0, memory_order_relaxed);
	memset(p + g + 4, 0, s->obj_size - g - 4);
}

/*
 * A freed object: its guard word 0 (atomic: a walk may be reading it),
 * the rest poisoned under ASan and otherwise left as it is - it is zeroed
 * when handed out again (zero_obj).  Not zeroed here: frees run on the
 * RCU callback thread, and every line it wrote would have to travel to
 * the core that allocates the object next (the object's bit in its
 * chunk's free map is all the rest a free writes).
 */
static inline void free_obj(const struct ct_slab *s, void *obj)
{
	atomic_store_explicit(guard_of(s, obj), 0, memory_order_relaxed);
	poison_obj(s, obj);
}

/* Mark @obj free in its chunk @c's map.  Caller holds the slab lock. */
static inline void map_set(struct ct_slab_chunk *c, const void *obj)
{
	uint32_t i = (uint32_t)((const uint8_t *)obj - ((const uint8_t *)c + c->first_off)) /
		     c->obj_size;

	c->freemap[i / 64] |= 1ull << (i % 64);
}

void ct_slab_release(struct ct_slab *s)
{
	struct ct_slab_chunk *c = s->chunks, *next;

	for (; c; c = next) {
		next = c->next;
		/* the next slab carves it with another object size */
		unpoison(c, CT_CHUNK_SIZE);
		arena_chunk_put(s->arena, c);
	}
	s->chunks = s->cur = s->partial = NULL;
	s->n_chunks = s->n_free = 0;
}

/* Caller holds s->lock. */
static void partial_add(struct ct_slab *s, struct ct_slab_chunk *c)
{
	c->pprev = NULL;
	c->pnext = s->partial;
	if (s->partial)
		s->partial->pprev = c;
	s->partial = c;
}

static void partial_del(struct ct_slab *s, struct ct_slab_chunk *c)
{
	if (c->pprev)
		c->pprev->pnext = c->pnext;
	else
		s->partial = c->pnext;
	if (c->pnext)
		c->pnext->pprev = c->pprev;
	c->pnext = c->pprev = NULL;
}

/*
 * A chunk all of whose objects are free goes back to the arena - unless
 * it is the one being carved, or the slab would be left without a chunk's
 * worth of free objects elsewhere (so that alternating frees and
 * allocations at a chunk's edge do not map and unmap it each time).
 * Caller holds s->lock.
 */
static void maybe_release(struct ct_slab *s, struct ct_slab_chunk *c)
{
	if (c == s->cur || c->n_free != c->used ||
	    s->n_free - c->n_free < c->n_objs)
		return;
	partial_del(s, c);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->chunks = c->next;
	if (c->next)
		c->next->prev = c->prev;
	s->n_free -= c->n_free;
	s->n_chunks--;
	unpoison(c, CT_CHUNK_SIZE);
	arena_chunk_put(s->arena, c);
}

/* Caller holds s->lock.  Carve from the current chunk, or add a chunk. */
static void *slab_carve(struct ct_slab *s)
{
	struct ct_slab_chunk *c = s->cur;

	if (!c || c->used == c->n_objs) {
		uint8_t *mem = arena_chunk_get(s->arena);
		if (!mem)
			return NULL;
		c = (struct ct_slab_chunk *)mem;
		c->slab = s;
		c->zone = s->zone;
		c->obj_size = s->obj_size;
		c->first_off = (uint32_t)((sizeof(*c) + 63u) & ~63u);
		c->n_objs = (CT_CHUNK_SIZE - c->first_off) / s->obj_size;
		c->used = 0;
		c->n_free = 0;
		memset(c->freemap, 0, sizeof(c->freemap));
		c->pnext = c->pprev = NULL;
		c->prev = NULL;
		c->next = s->chunks;
		if (s->chunks)
			s->chunks->prev = c;
		s->chunks = c;
		s->cur = c;
		s->n_chunks++;
	}
	/* a reused chunk holds stale objects: the walk must read 0 here
	 * (plain store: the walk holds the slab lock we hold) */
	{
		void *obj = (uint8_t *)c + c->first_off + (size_t)c->used++ * c->obj_size;
		*(uint32_t *)((uint8_t *)obj + s->guard_off) = 0;
		return obj;
	}
}

/* Fill the empty magazine @mag from @s, under one hold of its lock.
 * Returns false when nothing could be had.  Out of line: one call in
 * CT_MAG_OBJS, and the allocation's fast path keeps a small frame. */
static __attribute__((noinline)) bool mag_refill(struct ct_slab *s,
						 struct ct_slab_mag *mag)
{
	slab_lock(s);
	while (mag->n < CT_MAG_OBJS) {
		struct ct_slab_chunk *c = s->partial;
		void *o;

		if (c) {
			/* its lowest free objects, the lowest on top of the
			 * magazine (handed out first) */
			uint32_t k = c->n_free, sz = c->obj_size, top;
			uint8_t *base = (uint8_t *)c + c->first_off;

			if (k > CT_MAG_OBJS - mag->n)
				k = CT_MAG_OBJS - mag->n;
			c->n_free -= k;
			s->n_free -= k;
			top = mag->n + k;
			for (unsigned w = 0; k && w < CT_CHUNK_MAX_OBJS / 64; w++) {
				uint64_t m = c->freemap[w];

				for (; m && k; k--) {
					unsigned b = (unsigned)__builtin_ctzll(m);

					m &= m - 1;
					mag->objs[--top] = base + (size_t)(w * 64 + b) * sz;
					mag->n++;
				}
				c->freemap[w] = m;
			}
			if (!c->n_free)
				partial_del(s, c);
			continue;
		} else if ((c = s->cur) && c->used < c->n_objs) {
			/* what slab_carve would hand out one at a time: the
			 * current chunk's next objects, in order, each with
			 * its guard word cleared */
			uint32_t k = c->n_objs - c->used, sz = c->obj_size;
			uint8_t *p = (uint8_t *)c + c->first_off + (size_t)c->used * sz;

			if (k > CT_MAG_OBJS - mag->n)
				k = CT_MAG_OBJS - mag->n;
			c->used += k;
			for (; k; k--, p += sz) {
				*(uint32_t *)(p + s->guard_off) = 0;
				mag->objs[mag->n++] = p;
			}
			continue;
		} else {
			o = slab_carve(s);
			if (!o)
				break;
		}
		mag->objs[mag->n++] = o;
	}
	slab_unlock(s);
	return mag->n != 0;
}

void *ct_slab_alloc(struct ct_slab *s, struct ct_slab_mag *mag)
{
	void *obj;

	if (mag->n == 0 && !mag_refill(s, mag))
		return NULL;
	obj = mag->objs[--mag->n];
	unpoison(obj, s->obj_size);
	zero_obj(s, obj);
	return obj;
}

void ct_slab_unused(struct ct_slab_mag *mag, void *obj)
{
	if (mag->n < CT_MAG_OBJS) {
		/* the walk may read the guard word of a magazine's object */
		atomic_store_explicit(guard_of(ct_slab_chunk_of(obj)->slab, obj), 0,
				      memory_order_relaxed);
		mag->objs[mag->n++] = obj;
	} else {
		ct_slab_free(obj);
	}
}

void ct_slab_free(void *obj)
{
	struct ct_slab_chunk *c = ct_slab_chunk_of(obj);
	struct ct_slab *s = c->slab;

	/* the guard word (an entry's status) must read 0 for a free object,
	 * so that a namespace walk skips it; the rest is zeroed when the
	 * object is handed out again */
	unpoison(obj, s->obj_size);   /* it may come from a magazine, poisoned */
	free_obj(s, obj);
	slab_lock(s);
	map_set(c, obj);
	if (c->n_free++ == 0)
		partial_add(s, c);
	s->n_free++;
	maybe_release(s, c);
	slab_unlock(s);
}

void ct_slab_free_bulk(struct ct_slab *s, void *const *objs, unsigned n)
{
	struct ct_slab_chunk *touched[CT_MAG_OBJS * 2];
	unsigned n_touched = 0;

	if (!n)
		return;
	/* guard words cleared outside the lock; only the pushes are inside */
	for (unsigned i = 0; i < n; i++) {
		unpoison(objs[i], s->obj_size);
		free_obj(s, objs[i]);
	}
	slab_lock(s);
	for (unsigned i = 0; i < n; i++) {
		struct ct_slab_chunk *c = ct_slab_chunk_of(objs[i]);
		unsigned k;

		map_set(c, objs[i]);
		if (c->n_free++ == 0)
			partial_add(s, c);
		s->n_free++;
		for (k = 0; k < n_touched; k++)
			if (touched[k] == c)
				break;
		if (k == n_touched && n_touched < sizeof(touched) / sizeof(touched[0]))
			touched[n_touched++] = c;
	}
	/* a chunk may go back to the arena only once all pushes are done */
	for (unsigned k = 0; k < n_touched; k++)
		maybe_release(s, touched[k]);
	slab_unlock(s);
}
