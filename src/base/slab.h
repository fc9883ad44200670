/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * slab.h - where entries live: per-namespace slabs of fixed-size objects.
 *
 * Each namespace owns one slab per object size it uses.  A slab is a list
 * of 32 KiB chunks, aligned to their size, carved from 2 MiB-aligned
 * regions that ask for transparent huge pages (DESIGN.md: on these VMs a
 * TLB miss is dear).  Because a chunk belongs to one namespace, tearing a
 * namespace down walks its own chunks only, and its memory goes back in
 * one piece after one grace period.
 *
 * Threads allocate through a per-thread magazine (up to CT_MAG_OBJS
 * objects taken from the slab under its lock at once), so the slab lock is
 * taken once per 32 allocations, not per allocation.  Frees arrive from
 * RCU callbacks and go straight back to their chunk's free map.
 *
 * Every object handed out is zeroed.  A free object has status 0, which
 * is how a namespace walk tells live entries from free ones; the rest of
 * it is left as it was until it is handed out again.
 *
 * Guard word.  A namespace walk (table/flush.c) reads one 32-bit word of every
 * object ever carved - an entry's status - while other threads allocate,
 * free and recycle objects of the same slab.  So slab.c never writes that
 * word with a plain store: zeroing writes it with an atomic store and the
 * rest of the object with memset, and a carved object gets its guard word
 * zeroed under the slab lock (the walk holds it), even from a reused chunk
 * whose old contents are stale.  The walk reads nothing but that word of
 * an object until the word says the object is published (table/flush.c).
 */
#ifndef CT_SLAB_H
#define CT_SLAB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>

#define CT_CHUNK_SIZE (32u * 1024u)
#define CT_REGION_SIZE (2u * 1024u * 1024u)
#define CT_MAG_OBJS 32

struct ct_arena;
struct ct_slab;

/* Objects are at least CT_SLAB_MIN_OBJ bytes (ct_slab_init rounds up), so
 * a chunk holds at most CT_CHUNK_MAX_OBJS, one bit each in its free map. */
#define CT_SLAB_MIN_OBJ 32u
#define CT_CHUNK_MAX_OBJS (CT_CHUNK_SIZE / CT_SLAB_MIN_OBJ)

struct ct_slab_chunk {
	struct ct_slab *slab;
	uint32_t zone;                /* the owning namespace's id (sweeps read
				       * it without touching the slab) */
	struct ct_slab_chunk *next;   /* in the slab's list of all chunks */
	struct ct_slab_chunk *prev;
	struct ct_slab_chunk *pnext;  /* in the slab's list of chunks with
				       * free objects */
	struct ct_slab_chunk *pprev;
	uint32_t n_free;              /* bits set in freemap */
	uint32_t obj_size;
	uint32_t n_objs;
	uint32_t used;                /* objects [0, used) were handed out */
	uint32_t first_off;           /* byte offset of object 0 */
	/* bit i: object i (< used) is free.  A map, not a list linked
	 * through the objects: a refill reads two lines of this header
	 * instead of chasing a link through every object it takes (each a
	 * miss, one after the other, in a table that has turned over), a
	 * free writes nothing in the object but its guard word, and a chunk
	 * hands out its lowest free objects first, so entries created
	 * together sit together. */
	uint64_t freemap[CT_CHUNK_MAX_OBJS / 64];
};

struct ct_slab {
	struct ct_arena *arena;
	void *owner;                  /* the namespace (slab.c never reads it) */
	uint16_t zone;                /* its id, copied into each chunk */
	uint32_t obj_size;
	uint32_t guard_off;           /* offset of the guard word (see above) */
	_Atomic uint8_t lock;
	struct ct_slab_chunk *chunks; /* all chunks, newest first */
	struct ct_slab_chunk *cur;    /* the chunk being carved */
	struct ct_slab_chunk *partial;/* chunks with free objects */
	uint64_t n_chunks;
	uint64_t n_free;              /* free objects in all chunks */
};

/* A thread's cache of objects of one slab (see ct_slab_alloc). */
struct ct_slab_mag {
	struct ct_slab *slab;         /* valid only while zone/slab_gen are live */
	uint64_t slab_gen;            /* generation of the namespace it came from */
	uint16_t zone;
	unsigned n;
	void *objs[CT_MAG_OBJS];
};

/* The table's source of chunks. */
struct ct_arena {
	pthread_mutex_t lock;
	void *free_chunks;            /* returned chunks, linked by first word */
	void **regions;               /* mmap'd regions, for the final munmap */
	size_t n_regions, cap_regions;
	uint8_t *carve;               /* next unused chunk of the newest region */
	uint8_t *carve_end;
	uint64_t bytes_mapped;
	uint64_t chunks_in_use;
};

int ct_arena_init(struct ct_arena *a);
void ct_arena_fini(struct ct_arena *a);

/* @guard_off: offset of the 32-bit guard word (4-byte aligned, inside the
 * object); @obj_size is rounded up to a multiple of 8, at least
 * CT_SLAB_MIN_OBJ. */
void ct_slab_init(struct ct_slab *s, struct ct_arena *a, uint32_t obj_size,
		  uint32_t guard_off);

/* Return every chunk of @s to its arena.  Nobody may use @s or its objects
 * any more (after a grace period, for namespace teardown). */
void ct_slab_release(struct ct_slab *s);

/*
 * ct_slab_alloc - a zeroed object of @s's size, through magazine @mag
 * (which must belong to @s: the caller resets it when switching slabs).
 * Returns NULL when out of memory.
 */
void *ct_slab_alloc(struct ct_slab *s, struct ct_slab_mag *mag);

/* ct_slab_free - give @obj back to the slab it came from (any thread). */
void ct_slab_free(void *obj);

/* ct_slab_free_bulk - give @n objects, all of slab @s, back to it under
 * one acquisition of its lock (the reclaim path frees in batches). */
void ct_slab_free_bulk(struct ct_slab *s, void *const *objs, unsigned n);

/* ct_slab_unused - put an object that was never published back into
 * magazine @mag (cheap path for a creation that failed). */
void ct_slab_unused(struct ct_slab_mag *mag, void *obj);

/* The chunk (and so slab) an object belongs to. */
static inline struct ct_slab_chunk *ct_slab_chunk_of(const void *obj)
{
	return (struct ct_slab_chunk *)((uintptr_t)obj & ~(uintptr_t)(CT_CHUNK_SIZE - 1));
}

#endif /* CT_SLAB_H */
