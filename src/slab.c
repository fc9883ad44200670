/*
 * slab.c - per-namespace object slabs over a huge-page arena (see slab.h).
 *
 * Three levels, each amortising the one below: the arena maps 2 MiB
 * regions (madvise(MADV_HUGEPAGE), since THP is in madvise mode here) and
 * hands out 32 KiB chunks; a slab carves a chunk into objects of one size;
 * a thread's magazine takes up to 32 objects from the slab per lock.
 * Memory is never returned to the system before the table is destroyed;
 * chunks of torn-down namespaces are reused, which keeps resident memory
 * flat under churn.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <urcu/arch.h>

#include "slab.h"

static void slab_lock(struct ct_slab *s)
{
	while (atomic_exchange_explicit(&s->lock, 1, memory_order_acquire))
		while (atomic_load_explicit(&s->lock, memory_order_relaxed))
			caa_cpu_relax();
}

static void slab_unlock(struct ct_slab *s)
{
	atomic_store_explicit(&s->lock, 0, memory_order_release);
}

int ct_arena_init(struct ct_arena *a)
{
	memset(a, 0, sizeof(*a));
	return -pthread_mutex_init(&a->lock, NULL);
}

void ct_arena_fini(struct ct_arena *a)
{
	for (size_t i = 0; i < a->n_regions; i++)
		munmap(a->regions[i], CT_REGION_SIZE);
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
		/* slots keep 48-bit pointers (htab.h) */
		munmap(aligned, CT_REGION_SIZE);
		return -ENOMEM;
	}
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

void ct_slab_init(struct ct_slab *s, struct ct_arena *a, uint32_t obj_size)
{
	memset(s, 0, sizeof(*s));
	s->arena = a;
	s->obj_size = (obj_size + 7u) & ~7u;
}

void ct_slab_release(struct ct_slab *s)
{
	struct ct_slab_chunk *c = s->chunks, *next;

	for (; c; c = next) {
		next = c->next;
		arena_chunk_put(s->arena, c);
	}
	s->chunks = s->cur = NULL;
	s->free = NULL;
	s->n_chunks = s->n_free = 0;
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
		c->next = s->chunks;
		s->chunks = c;
		s->cur = c;
		s->n_chunks++;
	}
	return (uint8_t *)c + c->first_off + (size_t)c->used++ * c->obj_size;
}

void *ct_slab_alloc(struct ct_slab *s, struct ct_slab_mag *mag)
{
	void *obj;

	if (mag->n == 0) {
		slab_lock(s);
		while (mag->n < CT_MAG_OBJS) {
			void *o = s->free;
			if (o) {
				s->free = *(void **)o;
				s->n_free--;
			} else {
				o = slab_carve(s);
				if (!o)
					break;
			}
			mag->objs[mag->n++] = o;
		}
		slab_unlock(s);
		if (mag->n == 0)
			return NULL;
	}
	obj = mag->objs[--mag->n];
	memset(obj, 0, s->obj_size);
	return obj;
}

void ct_slab_unused(struct ct_slab_mag *mag, void *obj)
{
	if (mag->n < CT_MAG_OBJS) {
		memset(obj, 0, sizeof(void *));
		mag->objs[mag->n++] = obj;
	} else {
		ct_slab_free(obj);
	}
}

void ct_slab_free(void *obj)
{
	struct ct_slab *s = ct_slab_chunk_of(obj)->slab;

	/* status (at offset 48 of an entry) must read 0 for a free object;
	 * the whole object is cleared so a namespace walk skips it */
	memset(obj, 0, s->obj_size);
	slab_lock(s);
	*(void **)obj = s->free;
	s->free = obj;
	s->n_free++;
	slab_unlock(s);
}

void ct_slab_free_bulk(struct ct_slab *s, void *const *objs, unsigned n)
{
	if (!n)
		return;
	/* cleared and linked outside the lock; only the splice is inside */
	for (unsigned i = 0; i < n; i++)
		memset(objs[i], 0, s->obj_size);
	for (unsigned i = 1; i < n; i++)
		*(void **)objs[i - 1] = objs[i];
	slab_lock(s);
	*(void **)objs[n - 1] = s->free;
	s->free = objs[0];
	s->n_free += n;
	slab_unlock(s);
}

void ct_slab_foreach(struct ct_slab *s, void (*fn)(void *obj, void *arg), void *arg)
{
	for (struct ct_slab_chunk *c = s->chunks; c; c = c->next) {
		uint8_t *p = (uint8_t *)c + c->first_off;
		uint32_t used = c->used;

		for (uint32_t i = 0; i < used; i++, p += c->obj_size)
			fn(p, arg);
	}
}
