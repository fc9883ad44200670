/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * htab.h - rows of slots: the hash table proper (one generation of it).
 *
 * A row is one 64-byte cache line: six slots, a link to an overflow row,
 * and the row's due time.  A slot holds a 48-bit entry pointer and the top
 * 16 bits of the entry's hash as a signature, so a lookup compares
 * signatures within the line it already fetched and dereferences only
 * entries that are likely to match.  Because the hash is direction-blind
 * (base/hash.h), an entry whose reply tuple is its inverted original has
 * exactly one slot, found from either direction.
 *
 * The second slot.  An entry whose NAT binding changed a tuple (its reply
 * tuple is no longer the inverted original: CT_EXT_NAT, base/conn.h) has
 * a second slot in the row of its reply tuple's hash, marked CT_SLOT_RPL
 * (compare the lookup key with the entry's reply tuple, not its original)
 * and CT_SLOT_SECOND (the entry's other slot is its primary one).
 * Everything that walks rows entry by entry - dump, flush, a teardown's
 * sweep, the collector and its bounds, early drop - skips second slots,
 * so that it sees each entry once, by its primary slot; whoever removes
 * an entry's primary slot removes its second one after it, under that
 * row's lock (table/member.h, ct_table_unlink_second), and migration
 * moves it by the reply hash the extension keeps.  An IPS_NAT_CLASH entry
 * (ctrack/nat.h's confirm, as the kernel's nf_ct_resolve_clash_harder)
 * is in the table under its reply tuple only: its one slot is CT_SLOT_RPL
 * without CT_SLOT_SECOND, and is its primary slot in every other respect
 * (its c->hash is the reply's).  The marks are bits 1 and 2 of the slot
 * (entries are 8-aligned), beside CT_SLOT_BOUND; an entry without NAT
 * never has them, so its lookup pays one test of a bit already loaded.
 *
 * Overflow rows.  A row that needs a seventh slot links an overflow row
 * (htab.c) at the end of its chain; one the collector finds empty leaves
 * the chain and serves another a grace period later
 * (ct_htab_ovf_unlink_empty), so that a table whose connections come and
 * go keeps as many as its rows need now, not as many as they ever did.
 *
 * Row lock.  Bit 0 of the link word is the row's lock; bit 1 marks a row
 * whose entries were moved to the next generation during a resize.  The
 * lock costs no memory and lives in the line the writer touches anyway.
 * Readers never take it.
 *
 * Due times.  They are stored inverted (~due), so that freshly mapped,
 * zeroed rows read "nothing due" and a new generation needs no
 * initialisation pass.  row.due is a lower bound of the earliest expiry among the
 * row's entries (UINT64_MAX: nothing due); sub_due[s] a lower bound over
 * rows 8s..8s+7, and group_due[g] one over rows 64g..64g+63 (so over
 * sub_due[8g..8g+7], which fill one cache line).  A busy pass reads a due
 * group's one line of sub bounds and then only the eight rows of each due
 * sub, instead of all 64 rows' lines.  Bounds are lowered by whoever inserts or shortens a
 * timeout, and recomputed exactly only by the collector, with the
 * store-then-scan order described in expire/visit.c, so that a lowering is never
 * lost.  A refresh only lengthens a timeout and leaves the bounds alone.
 *
 * Slot bounds.  Beside the rows, slot_due keeps for each slot of a head
 * row a 16-bit coarse lower bound of its entry's expiry: the expiry in
 * units of 2^CT_SLOT_DUE_SHIFT ns, rounded down, modulo 2^16.  They are
 * written and read under the row lock: the collector, when it reads an
 * entry's expiry and keeps the entry, stores the bound and sets bit 0 of
 * the slot (CT_SLOT_BOUND; entries are 8-aligned, so the bit is free).
 * With the scan, an insert stores its slot with the bit clear and touches
 * no bound, so the creation path pays nothing; a new entry is read once
 * by the collector, and after that a due row's entries that are not due
 * are skipped without touching their lines.  With the wheel, an insert
 * writes its slot's bound too (under the row lock it holds), since the
 * wheel's slot handles are checked against it (wheel.h).  A value is decoded against the
 * row's own bound D (ct_slot_due_lower): the least time >= D, in whole
 * units, whose unit number ends in the stored 16 bits.  That is never
 * above the entry's expiry as long as D is at most the slot's true
 * (unwrapped) bound, and every writer of D keeps that: the collector sets
 * D to the least of the expiries and bounds it used, and anyone else only
 * lowers D.  A far expiry (beyond 2^16 units of D) thus decodes low, as
 * does a bound left behind by a refresh (which only lengthens a timeout):
 * the collector reads the entry early, never late.  A shortened timeout
 * sets the row's bit in slot_dirty (one word per group) before it lowers
 * D; the collector clears the bit and then reads every entry of the row.
 * An overflow row keeps its slot bounds in the line after it (it is
 * allocated 128 bytes, 128-aligned: a pair of lines a spatial prefetcher
 * fetches together), decoded against the head's D too.
 *
 * Group-handle marks (with the collector's wheel, wheel.h).  A
 * shortened timeout needs a handle that leads to a visit of its row,
 * since its writer does not know its slot; but a connection with data in
 * flight shortens its timeout at every data segment (ESTABLISHED's 5
 * days to the 300 s of unacknowledged data) and lengthens it at every
 * ACK, and a handle per segment filled the packet threads' rings faster
 * than any collector could empty them (the wheel was reseeded over and
 * over: a busy core at 1M flows with nothing due).  So each group of 64
 * rows has a 32-bit mark, the unit of the last group handle queued for
 * it (an array of its own, 4 bytes a group: it stays in cache, where a
 * mark per row beside the slot bounds cost a miss a segment).  A group
 * handle's visit reads the group's dirty bits and visits each dirty row
 * by its bound (expire/pass_wheel.c, gc_wheel_group).  A writer sets its row's dirty
 * bit, lowers the bounds, then reads the group's mark: one at or before
 * its new expiry means a visit will come in time, and it queues nothing;
 * else it stores its own mark and then queues its handle.  The collector
 * clears a group's mark before it reads the group's dirty bits, in a
 * group handle's visit and in the wheel's seeding walk (a reseed drops
 * every handle) - so a mark is always that of a handle still queued, or
 * of a visit that has yet to read the bits.
 *
 * Memory ordering: slots are published with release stores and read with
 * acquire loads; an entry is fully initialised before its slot is stored.
 */
#ifndef CT_HTAB_H
#define CT_HTAB_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <urcu/call-rcu.h>

#include "table/conn_key.h"

#define CT_ROW_SLOTS 6
#define CT_ROW_LOCK ((uintptr_t)1)
#define CT_ROW_MOVED ((uintptr_t)2)
#define CT_ROW_FLAGS ((uintptr_t)63)
#define CT_DUE_NEVER UINT64_MAX
#define CT_GROUP_ROWS 64
#define CT_SUB_ROWS 8
#define CT_GROUP_SUBS (CT_GROUP_ROWS / CT_SUB_ROWS)
#define CT_ROWS_MAX (1ull << 32)   /* ct_row_index scales 32 hash bits */
/* slot bounds: units of 2^20 ns (1.05 ms), 2^16 units (68.7 s) of range */
#define CT_SLOT_DUE_SHIFT 20
/* the last chain position a slot handle can name (= CT_WH_MAX_POS) */
#define CT_SLOT_HANDLE_MAX_POS 29u

struct ct_row {
	_Atomic uint64_t slot[CT_ROW_SLOTS];
	_Atomic uintptr_t next;
	_Atomic uint64_t due_inv;      /* ~due: zeroed memory reads "never" */
} __attribute__((aligned(64)));

_Static_assert(sizeof(struct ct_row) == 64, "a row is one cache line");

struct ct_ovf_pool;
struct ct_ovf_retire;
struct rcu_flavor_struct;

struct ct_htab {
	uint64_t n_rows;               /* any number in [1, CT_ROWS_MAX] */
	uint32_t gen;                  /* this generation's number, unique
					* in the process, never 0 (the
					* collector's wheel tags row indices
					* with it, wheel.h) */
	uint64_t n_groups;
	struct ct_row *rows;
	_Atomic uint64_t *group_due_inv;  /* ~due per 64 rows */
	_Atomic uint64_t *sub_due_inv;    /* ~due per 8 rows: a group's
					   * eight share one cache line */
	uint64_t n_subs;
	/* slot bounds of the head rows, CT_ROW_SLOTS per row, and the rows
	 * whose slot bounds may be too high (a bit per row, a word per
	 * group) */
	_Atomic uint16_t *slot_due;
	_Atomic uint64_t *slot_dirty;
	/* group-handle marks (below), one per group */
	_Atomic uint32_t *group_hmark;
	_Atomic(struct ct_htab *) future; /* resize target, or NULL */
	_Atomic uint64_t mig_next;     /* next row to claim for migration */
	_Atomic uint64_t mig_done;     /* rows migrated */
	bool mig_partial;              /* a row's migration stopped half-way
					* (no memory): its entries may be in
					* the future already (resize_lock) */
	/* overflow rows (ct_htab_ovf_new), in a pool that outlives this
	 * generation while retired rows wait for their grace period */
	struct ct_ovf_pool *ovf;
	struct rcu_head rcu;
};

/*
 * ct_row_index - the row of a table of @n_rows rows that holds hash
 * @hash: the low 32 bits of the hash scaled to [0, n_rows) by a multiply
 * and a shift (Lemire's "fastrange"), not masked, so that n_rows need not
 * be a power of two and a table can grow by less than a doubling.  It
 * reads only the low 32 bits (an entry keeps those, c->hash) and the slot
 * signature is the top 16 of 64, so the two stay independent.  Monotone
 * in the hash: the entries of old row i land in new rows
 * [i * m / n, (i + 1) * m / n], next to each other, when n rows become m.
 */
static inline uint64_t ct_row_index(uint64_t hash, uint64_t n_rows)
{
	return ((hash & 0xffffffffull) * n_rows) >> 32;
}

/* Rows of a generation asked for @v: at least 64 and a multiple of 64
 * (whole collector groups), at most CT_ROWS_MAX. */
static inline uint64_t ct_htab_rows_round(uint64_t v)
{
	if (v < CT_GROUP_ROWS)
		return CT_GROUP_ROWS;
	if (v > CT_ROWS_MAX)
		return CT_ROWS_MAX;
	return (v + CT_GROUP_ROWS - 1) / CT_GROUP_ROWS * CT_GROUP_ROWS;
}

static inline struct ct_row *ct_htab_row(const struct ct_htab *h, uint64_t hash)
{
	return &h->rows[ct_row_index(hash, h->n_rows)];
}
/* Bit 0 of a slot (entries are 8-aligned): its slot bound is valid
 * (htab.h's top comment).  Stored clear; only the collector sets it. */
#define CT_SLOT_BOUND 1ull

/* Bit 1: the slot holds the entry's reply tuple; bit 2: it is the
 * entry's second slot (top comment).  Never set for an entry without
 * NAT. */
#define CT_SLOT_RPL 2ull
#define CT_SLOT_SECOND 4ull

static inline uint64_t ct_slot_make(const struct ct_conn *c, uint64_t hash)
{
	return (hash & 0xffff000000000000ull) | (uint64_t)(uintptr_t)c;
}

static inline struct ct_conn *ct_slot_conn(uint64_t slot)
{
	return (struct ct_conn *)(uintptr_t)(slot & 0x0000fffffffffff8ull);
}

static inline uint64_t ct_slot_sig(uint64_t hash)
{
	return hash & 0xffff000000000000ull;
}

/* The next row of the chain named by link word @v (a row's next, flags
 * and all); NULL at the end. */
static inline struct ct_row *ct_row_link(uintptr_t v)
{
	return (struct ct_row *)(v & ~CT_ROW_FLAGS);
}

static inline struct ct_row *ct_row_next(const struct ct_row *r)
{
	return ct_row_link(atomic_load_explicit(&((struct ct_row *)r)->next,
						memory_order_acquire));
}

/*
 * ct_row_sig_match - bit k set: slot k of row @r holds an entry whose
 * signature is @hash's (a hint: the caller loads the slot it picks again,
 * atomically).  On x86-64 the six slots are compared as 16-bit lanes in
 * three SSE2 registers and each 64-bit lane's sign bit read back with
 * movmskpd, instead of a loop of six loads and tests.  A zero signature
 * would match empty slots too, so it (1 hash in 65536) and
 * ThreadSanitizer builds (which must see the atomic loads) take the loop.
 */
#if defined(__SANITIZE_THREAD__)
#define CT_ROW_SIMD 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CT_ROW_SIMD 0
#endif
#endif
#if !defined(CT_ROW_SIMD) && defined(__x86_64__) && defined(__SSE2__)
#define CT_ROW_SIMD 1
#include <emmintrin.h>
#endif
#ifndef CT_ROW_SIMD
#define CT_ROW_SIMD 0
#endif

static inline unsigned ct_row_sig_match(const struct ct_row *r, uint64_t hash)
{
	uint16_t sig16 = (uint16_t)(hash >> 48);
	unsigned m = 0;

#if CT_ROW_SIMD
	if (__builtin_expect(sig16 != 0, 1)) {
		const __m128i *p = (const __m128i *)(const void *)r->slot;
		__m128i sig = _mm_set1_epi16((short)sig16);
		__m128i a = _mm_cmpeq_epi16(_mm_load_si128(p), sig);
		__m128i b = _mm_cmpeq_epi16(_mm_load_si128(p + 1), sig);
		__m128i c = _mm_cmpeq_epi16(_mm_load_si128(p + 2), sig);

		_Static_assert(CT_ROW_SLOTS == 6, "three 16-byte loads");
		return (unsigned)_mm_movemask_pd(_mm_castsi128_pd(a)) |
		       (unsigned)_mm_movemask_pd(_mm_castsi128_pd(b)) << 2 |
		       (unsigned)_mm_movemask_pd(_mm_castsi128_pd(c)) << 4;
	}
#endif
	for (int i = 0; i < CT_ROW_SLOTS; i++) {
		uint64_t s = atomic_load_explicit(&((struct ct_row *)r)->slot[i],
						  memory_order_relaxed);
		if (s && (uint16_t)(s >> 48) == sig16)
			m |= 1u << i;
	}
	return m;
}

/* ct_row_empty - bit k set: slot k of @r is empty (for a caller that
 * holds the row's lock, under which slots do not change). */
static inline unsigned ct_row_empty(const struct ct_row *r)
{
	unsigned m = 0;

#if CT_ROW_SIMD
	const __m128i *p = (const __m128i *)(const void *)r->slot;
	__m128i z = _mm_setzero_si128();
	/* a 64-bit lane is zero when both of its 32-bit halves are */
	__m128i a = _mm_cmpeq_epi32(_mm_load_si128(p), z);
	__m128i b = _mm_cmpeq_epi32(_mm_load_si128(p + 1), z);
	__m128i c = _mm_cmpeq_epi32(_mm_load_si128(p + 2), z);

	a = _mm_and_si128(a, _mm_shuffle_epi32(a, _MM_SHUFFLE(2, 3, 0, 1)));
	b = _mm_and_si128(b, _mm_shuffle_epi32(b, _MM_SHUFFLE(2, 3, 0, 1)));
	c = _mm_and_si128(c, _mm_shuffle_epi32(c, _MM_SHUFFLE(2, 3, 0, 1)));
	m = (unsigned)_mm_movemask_pd(_mm_castsi128_pd(a)) |
	    (unsigned)_mm_movemask_pd(_mm_castsi128_pd(b)) << 2 |
	    (unsigned)_mm_movemask_pd(_mm_castsi128_pd(c)) << 4;
#else
	for (int i = 0; i < CT_ROW_SLOTS; i++)
		if (!atomic_load_explicit(&((struct ct_row *)r)->slot[i],
					  memory_order_relaxed))
			m |= 1u << i;
#endif
	return m;
}

/* ct_row_holds_none - whether no slot of @r holds an entry. */
static inline bool ct_row_holds_none(const struct ct_row *r)
{
	return ct_row_empty(r) == (1u << CT_ROW_SLOTS) - 1;
}

struct ct_htab *ct_htab_new(uint64_t n_rows);
void ct_htab_free(struct ct_htab *h);

/* The row lock: bit CT_ROW_LOCK of the head's link word.  Inline, with
 * one uncontended try; ct_row_lock_slow spins. */
void ct_row_lock_slow(struct ct_row *r);

static inline void ct_row_lock(struct ct_row *r)
{
	uintptr_t v = atomic_load_explicit(&r->next, memory_order_relaxed);

	if (__builtin_expect(!(v & CT_ROW_LOCK), 1) &&
	    atomic_compare_exchange_weak_explicit(&r->next, &v, v | CT_ROW_LOCK,
						  memory_order_acquire,
						  memory_order_relaxed))
		return;
	ct_row_lock_slow(r);
}

static inline void ct_row_unlock(struct ct_row *r)
{
	/* Only the lock holder writes a locked head's link word (overflow
	 * links, MOVED), so a plain release store of what it holds clears
	 * the lock: no locked read-modify-write on the unlock side. */
	uintptr_t v = atomic_load_explicit(&r->next, memory_order_relaxed);

	atomic_store_explicit(&r->next, v & ~CT_ROW_LOCK, memory_order_release);
}

static inline bool ct_row_moved(const struct ct_row *r)
{
	return atomic_load_explicit(&((struct ct_row *)r)->next,
				    memory_order_acquire) & CT_ROW_MOVED;
}

/*
 * Is @a the reply tuple of @b, for a protocol whose reply tuple is @b with
 * its endpoints and ports swapped (all but ICMP/ICMPv6 queries)?  Compared
 * in place, without building the inverted tuple: addresses crosswise as
 * 64-bit words, the two ports as one 32-bit word rotated by 16 (which
 * swaps its halves in either byte order), zone and protocols as they are.
 */
static inline bool ct_tuple_equal_swapped(const struct ct_tuple *a,
					  const struct ct_tuple *b)
{
	uint64_t a0, a1, a2, a3, b0, b1, b2, b3;
	uint32_t ap, bp, ar, br;
	const char *pa = (const char *)a, *pb = (const char *)b;

	memcpy(&a0, pa, 8);
	memcpy(&a1, pa + 8, 8);
	memcpy(&a2, pa + 16, 8);
	memcpy(&a3, pa + 24, 8);
	memcpy(&ap, pa + 32, 4);
	memcpy(&ar, pa + 36, 4);
	memcpy(&b0, pb, 8);
	memcpy(&b1, pb + 8, 8);
	memcpy(&b2, pb + 16, 8);
	memcpy(&b3, pb + 24, 8);
	memcpy(&bp, pb + 32, 4);
	memcpy(&br, pb + 36, 4);
	bp = bp >> 16 | bp << 16;
	return ((a0 ^ b2) | (a1 ^ b3) | (a2 ^ b0) | (a3 ^ b1) |
		(uint64_t)((ap ^ bp) | (ar ^ br))) == 0;
}

/*
 * ct_htab_find - the entry matching @key (direction ORIGINAL) or its
 * inverse (direction REPLY) in @h's row for @hash, or NULL.  The inverse
 * is @inv, or with @inv NULL @key with endpoints and ports swapped (every
 * protocol but ICMP/ICMPv6).  RCU read side; takes no lock.  DYING
 * entries are returned too: the caller decides (they are rare and the
 * caller locks the entry anyway).
 */
struct ct_conn *ct_htab_find(struct ct_htab *h, uint64_t hash,
			     const struct ct_tuple *key,
			     const struct ct_tuple *inv, enum ct_dir *dir);

enum ct_htab_ins {
	CT_INS_OK = 0,
	CT_INS_CLASH,       /* a live entry with the same tuple is there */
	CT_INS_CHAIN,       /* the row holds max_chain entries */
	CT_INS_NOMEM,       /* could not add an overflow row */
	CT_INS_MOVED,       /* the row moved to the next generation */
};

/*
 * ct_htab_place_locked - with row @head of @h locked (the head of the row
 * for the entry's hash), store slot value @s (an entry's slot from the
 * previous generation, signature included) in the chain's first free
 * slot, adding an overflow row if none is free.  For migration: the entry
 * is a member already, unique and CONFIRMED, so there is no clash check
 * and nothing else to set; the caller lowers the row's, sub's and group's
 * due times.  With @dedupe (a migration of this row failed half-way
 * before) an @s already in the chain is not stored again.  Returns false
 * when out of memory.
 */
bool ct_htab_place_locked(struct ct_htab *h, struct ct_row *head, uint64_t s,
			  bool dedupe);

/* ct_htab_remove_locked - with the row locked, clear @c's primary slot
 * (@second false) or its second slot (@second true).  Returns true if it
 * was there. */
bool ct_htab_remove_locked(struct ct_row *r, const struct ct_conn *c);
bool ct_htab_remove_kind_locked(struct ct_row *r, const struct ct_conn *c, bool second);

/* A timeout was shortened: mark row @idx's slot bounds dirty, then lower
 * its, its sub's and its group's due bound to @due, in that order
 * (lock-free).  The caller tells the wheel (wheel.h) when it is on. */
void ct_htab_lower_due(struct ct_htab *h, uint64_t idx, uint64_t due);

/* Due words hold ~due; these read, lower and set them (seq_cst: see expire/visit.c). */
static inline uint64_t ct_due_get(_Atomic uint64_t *p)
{
	return ~atomic_load_explicit(p, memory_order_seq_cst);
}

/* Returns true when this call's store took effect (the word now holds
 * @due, lowered by us). */
static inline bool ct_due_lower(_Atomic uint64_t *p, uint64_t due)
{
	uint64_t inv = ~due;
	uint64_t cur = atomic_load_explicit(p, memory_order_seq_cst);

	while (inv > cur)
		if (atomic_compare_exchange_weak_explicit(p, &cur, inv,
							  memory_order_seq_cst,
							  memory_order_seq_cst))
			return true;
	return false;
}

/* Set a due word to "never" and return what it held. */
static inline uint64_t ct_due_take(_Atomic uint64_t *p)
{
	return ~atomic_exchange_explicit(p, ~CT_DUE_NEVER, memory_order_seq_cst);
}

static inline void ct_due_set(_Atomic uint64_t *p, uint64_t due)
{
	atomic_store_explicit(p, ~due, memory_order_seq_cst);
}

/* The slot bounds of head row @idx of @h. */
static inline _Atomic uint16_t *ct_slot_due(const struct ct_htab *h, uint64_t idx)
{
	return &h->slot_due[idx * CT_ROW_SLOTS];
}

/* The group-handle mark of group @grp of @h (htab.h's top comment). */
static inline _Atomic uint32_t *ct_group_hmark(const struct ct_htab *h, uint64_t grp)
{
	return &h->group_hmark[grp];
}

/* The slot bounds of row @r of the chain whose head is @head. */
static inline _Atomic uint16_t *ct_row_slot_due(const struct ct_htab *h,
						const struct ct_row *head,
						const struct ct_row *r)
{
	if (r == head)
		return ct_slot_due(h, (uint64_t)(head - h->rows));
	return (_Atomic uint16_t *)(void *)(uintptr_t)(r + 1);
}

static inline uint16_t ct_slot_due_enc(uint64_t exp)
{
	return (uint16_t)(exp >> CT_SLOT_DUE_SHIFT);
}

/* ct_slot_due_dist - slot bound @v, decoded against unit @du, is unit
 * @du + this distance (below). */
static inline uint32_t ct_slot_due_dist(uint64_t du, uint16_t v)
{
	return (uint16_t)(v - (uint16_t)du);
}

/*
 * ct_slot_due_lower - the lower bound that slot bound @v gives, decoded
 * against its row's bound @d (htab.h's top comment says why it is one):
 * the least time >= @d, in whole units, whose unit number ends in @v.  At
 * most 2^16 units above @d; 0 ("due: read the entry") when @d is "never"
 * or that would not fit.
 */
static inline uint64_t ct_slot_due_lower(uint64_t d, uint16_t v)
{
	uint64_t du = d >> CT_SLOT_DUE_SHIFT;
	uint64_t u = du + ct_slot_due_dist(du, v);

	if (d == CT_DUE_NEVER || u >= (UINT64_MAX >> CT_SLOT_DUE_SHIFT))
		return 0;
	return u << CT_SLOT_DUE_SHIFT;
}

/*
 * The same decoding for a loop over a row's slots, in units.
 * ct_slot_due_base - the unit *@du of row bound @d that bounds decode
 * against; false when @d cannot serve (never, or so late that a decoded
 * unit could overflow): every entry is then read.
 * ct_slot_due_lim - the greatest distance due at @now.
 */
static inline bool ct_slot_due_base(uint64_t d, uint64_t *du)
{
	*du = d >> CT_SLOT_DUE_SHIFT;
	return d != CT_DUE_NEVER && *du < (UINT64_MAX >> CT_SLOT_DUE_SHIFT) - 0xffff;
}

static inline int64_t ct_slot_due_lim(uint64_t du, uint64_t now)
{
	return (int64_t)(now >> CT_SLOT_DUE_SHIFT) - (int64_t)du;
}

/*
 * ct_slot_bound_new - slot word @sv of a new entry expiring at @exp, at
 * chain position @pos in row @r of head @head (row lock held).  With
 * @pos_out (the wheel is on) the slot's bound is written and marked, and
 * *@pos_out is @pos - or -1 past CT_SLOT_HANDLE_MAX_POS, where no bound
 * is written (wheel.h: a row handle must name it).
 */
static inline uint64_t ct_slot_bound_new(const struct ct_htab *h, const struct ct_row *head,
					 const struct ct_row *r, unsigned pos, uint64_t exp,
					 uint64_t sv, int *pos_out)
{
	if (!pos_out)
		return sv;
	if (pos > CT_SLOT_HANDLE_MAX_POS) {
		*pos_out = -1;
		return sv;
	}
	atomic_store_explicit(&ct_row_slot_due(h, head, r)[pos % CT_ROW_SLOTS],
			      ct_slot_due_enc(exp), memory_order_relaxed);
	*pos_out = (int)pos;
	return sv | CT_SLOT_BOUND;
}

/* Mark head row @idx's slot bounds as possibly too high (a timeout was
 * shortened): after the new expiry is stored and a seq_cst fence, before
 * the row bound is lowered (see gc_row).  A bit found set is left as it
 * is: the collector clears it only after this load (which read it set)
 * and reads the expiries after clearing, so it sees the new one. */
static inline void ct_slot_due_dirty(struct ct_htab *h, uint64_t idx)
{
	_Atomic uint64_t *w = &h->slot_dirty[idx / CT_GROUP_ROWS];
	uint64_t bit = 1ull << (idx % CT_GROUP_ROWS);

	if (!(atomic_load_explicit(w, memory_order_seq_cst) & bit))
		atomic_fetch_or_explicit(w, bit, memory_order_seq_cst);
}

/* Group-handle marks hold unit numbers mod 2^32; one is believed only
 * within this many units (2^50 ns, ~13 days) of now and of the expiry it
 * is compared with, so that no comparison wraps. */
#define CT_HMARK_RANGE (1u << 30)

/* The mark of a group handle queued for @exp: its unit, an upper bound
 * of the handle's time (0 means no mark, so unit 0 is marked 1). */
static inline uint32_t ct_hmark_enc(uint64_t exp)
{
	uint32_t m = (uint32_t)(exp >> CT_SLOT_DUE_SHIFT);

	return m ? m : 1;
}

/* Whether a timeout shortened to @exp at @now may be marked (it is near
 * enough for a mark to be compared with). */
static inline bool ct_hmark_fits(uint64_t exp, uint64_t now)
{
	return exp >= now && (exp - now) >> CT_SLOT_DUE_SHIFT < CT_HMARK_RANGE;
}

/*
 * ct_group_hmark_covers - whether group @grp has a group handle queued at
 * or before @exp (its mark says so: see htab.h's top comment), so that a
 * timeout shortened to @exp at @now needs no handle of its own.  Called
 * after the row's dirty bit was set (seq_cst both), for an @exp that
 * ct_hmark_fits().
 */
static inline bool ct_group_hmark_covers(const struct ct_htab *h, uint64_t grp,
					 uint64_t exp, uint64_t now)
{
	uint32_t m = atomic_load_explicit(ct_group_hmark(h, grp), memory_order_seq_cst);
	int32_t from_now = (int32_t)(m - (uint32_t)(now >> CT_SLOT_DUE_SHIFT));

	if (!m || from_now > (int32_t)CT_HMARK_RANGE || from_now < -(int32_t)CT_HMARK_RANGE)
		return false;
	return (int32_t)(m - (uint32_t)(exp >> CT_SLOT_DUE_SHIFT)) <= 0;
}

/* Count entries in row chain @r (any thread; approximate while writers run). */
unsigned ct_row_count(const struct ct_row *r);

/* An overflow row, zeroed with its slot bounds (the 64 bytes after it),
 * registered with @h for freeing (NULL: no
 * memory).  For ct_htab_insert_locked_inline. */
struct ct_row *ct_htab_ovf_new(struct ct_htab *h);

/* For tests and probes: ct_htab_ovf_live - overflow rows of @h in chains
 * now; ct_htab_ovf_mapped - rows ever carved from mapped blocks (the most
 * in chains at once, plus any that waited for a grace period meanwhile). */
uint64_t ct_htab_ovf_live(const struct ct_htab *h);
uint64_t ct_htab_ovf_mapped(const struct ct_htab *h);

/*
 * Retiring empty overflow rows (the collector).  Without it a churning
 * table's chains only grow: a row that once held seven entries keeps its
 * overflow row after they are gone, and at the table's 60-75% load most
 * rows get there within a few turnovers (gc-busy's 1.1M entries in 250k
 * rows: from 7% of rows with an overflow row after the fill to 97% after
 * ten turnovers, 28 bytes an entry, and a line more for every lookup that
 * misses and every collector visit).
 *
 * ct_htab_ovf_unlink_empty - with head row @head of @h locked, unlink
 * every overflow row of its chain that holds no entry and add it to
 * *@batch (made on first use, for @h's pool; a batch for another pool is
 * flushed first).  A reader already in an unlinked row goes on through
 * its link, which is left as it was; the row is handed out again only a
 * grace period after ct_ovf_retire_flush().  With @tail_only (the
 * wheel's slot handles name positions in the chain: wheel.h) only the
 * empty rows after the last one that holds an entry go.  Returns the rows
 * unlinked (0 also when no batch could be allocated: nothing is unlinked
 * then).
 *
 * ct_ovf_retire_flush - pass *@batch, if any, to call_rcu of @rcu and
 * clear it.  The batch holds a reference to the pool, so a generation
 * retired meanwhile keeps its overflow memory until the batch is done.
 */
unsigned ct_htab_ovf_unlink_empty(struct ct_htab *h, struct ct_row *head,
				  struct ct_ovf_retire **batch,
				  const struct rcu_flavor_struct *rcu, bool tail_only);
void ct_ovf_retire_flush(struct ct_ovf_retire **batch,
			 const struct rcu_flavor_struct *rcu);

/*
 * ct_htab_insert_locked_inline - with row @head (head of @h's row for
 * @hash) locked, check for a live entry equal to @key (the tuple @c was
 * made from) or its inverse @inv (NULL: swapped, as for ct_htab_find)
 * (returned in *@clash), then store @c.  Lowers the row's and its sub's
 * due time to c->expires, in that order (the caller lowers the group's
 * after unlocking, and tells the wheel, wheel.h, when it is on).  Inline:
 * ct_table_insert (member.h) is its one caller.  With
 * @pos_out (the wheel is on) the new slot's bound is written and marked,
 * and *@pos_out is its position in the chain, or -1 past CT_WH_MAX_POS
 * (wheel.h): a slot handle names it, or a row handle must. */
static inline __attribute__((always_inline)) enum ct_htab_ins
ct_htab_insert_locked_inline(struct ct_htab *h, struct ct_row *head,
			     struct ct_conn *c, uint64_t hash,
			     const struct ct_tuple *key,
			     const struct ct_tuple *inv, uint32_t max_chain,
			     struct ct_conn **clash, int *pos_out)
{
	uint64_t sig = ct_slot_sig(hash);
	/* read before c is published (migration: c is live, and its
	 * writers hold its lock, not the row's) */
	uint64_t exp = __atomic_load_n(&c->expires, __ATOMIC_RELAXED);
	_Atomic uint64_t *free_slot = NULL;
	struct ct_row *r = head, *last = head, *free_row = NULL;
	unsigned rows = 0, free_pos = 0;

	if (atomic_load_explicit(&head->next, memory_order_relaxed) & CT_ROW_MOVED)
		return CT_INS_MOVED;
	/* slots change only under the row lock, which we hold: the masks
	 * read them once, and the candidates are loaded again */
	for (; r; last = r, r = ct_row_next(r)) {
		unsigned empty = ct_row_empty(r);

		rows++;
		if (empty && !free_slot) {
			free_slot = &r->slot[__builtin_ctz(empty)];
			free_row = r;
			free_pos = (rows - 1) * CT_ROW_SLOTS + (unsigned)__builtin_ctz(empty);
		}
		for (unsigned m = ct_row_sig_match(r, hash) & ~empty; m; m &= m - 1) {
			int i = __builtin_ctz(m);
			uint64_t s = atomic_load_explicit(&r->slot[i],
							  memory_order_relaxed);
			struct ct_conn *o;

			if (!s || (s & 0xffff000000000000ull) != sig)
				continue;
			o = ct_slot_conn(s);
			/* the key or its inverse, as the slot's entry holds it
			 * (a NAT entry's reply slot: as its reply tuple) */
			if (__builtin_expect((s & CT_SLOT_RPL) && (o->ext & CT_EXT_NAT), 0)
			    ? (ct_conn_reply_equal(o, key) || ct_conn_reply_is_inverse(o, key, inv))
			    : (ct_conn_key_equal(o, key) || ct_conn_key_is_reply(o, key, inv))) {
				if (!(ct_conn_status(o) & CT_ST_DYING)) {
					*clash = o;
					return CT_INS_CLASH;
				}
			}
		}
	}
	/* the chain's entries, counted only when it has room for enough */
	if (max_chain && rows * CT_ROW_SLOTS >= max_chain &&
	    ct_row_count(head) >= max_chain)
		return CT_INS_CHAIN;
	/* an entry is CONFIRMED once, and only once, it is in a row: a
	 * namespace walk trusts an entry's other fields only then (flush.c);
	 * release: its fields are written before (a no-op on migration) */
	atomic_fetch_or_explicit(&c->status, CT_ST_CONFIRMED, memory_order_release);
	if (!free_slot) {
		struct ct_row *o = ct_htab_ovf_new(h);
		if (!o)
			return CT_INS_NOMEM;
		uint64_t sv = ct_slot_bound_new(h, head, o, rows * CT_ROW_SLOTS, exp,
						ct_slot_make(c, hash), pos_out);

		atomic_store_explicit(&o->slot[0], sv, memory_order_relaxed);
		/* publish the filled overflow row at the end of the chain,
		 * keeping last's flag bits (the head's lock bit included) */
		uintptr_t v = atomic_load_explicit(&last->next, memory_order_relaxed);
		atomic_store_explicit(&last->next, (uintptr_t)o | (v & CT_ROW_FLAGS),
				      memory_order_release);
	} else {
		uint64_t sv = ct_slot_bound_new(h, head, free_row, free_pos, exp,
						ct_slot_make(c, hash), pos_out);

		atomic_store_explicit(free_slot, sv, memory_order_release);
	}
	ct_due_lower(&head->due_inv, exp);
	ct_due_lower(&h->sub_due_inv[(uint64_t)(head - h->rows) / CT_SUB_ROWS], exp);
	return CT_INS_OK;
}

#endif /* CT_HTAB_H */
