/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn.h - the layout of one connection entry (private).
 *
 * An entry is a core followed by its protocol's private area and then the
 * optional extensions (accounting, timestamps, labels, NAT), the way the
 * kernel hangs nf_ct_ext off nf_conn.  Only what the hot path needs is in
 * the core: the absolute expiry, the status bits, the hash, a byte lock
 * and the original tuple.  The reply tuple is the inverted original -
 * except for an entry whose NAT binding changed a tuple, which carries
 * the NAT extension (struct ct_ext_nat) with the reply's endpoints: an
 * un-NATed entry, and one with a null binding, keeps its size.
 * Entries live in their namespace's slab (slab.c), so that a namespace's
 * teardown walks only its own memory.
 *
 * The core is 40 bytes: the 24-byte header, then the 8 bytes of struct
 * ct_tuple that are not addresses (ports, zone, l3, l4), in ct_tuple's
 * own layout, then 8 bytes of addresses.  That is all of an IPv4 key (two
 * 4-byte addresses), where a struct ct_tuple spends 40 bytes on every
 * key.  An IPv6 key keeps the first 8 bytes of its source address there
 * and its other 24 address bytes after the extensions, at the end of the
 * object: so the private area and the extensions sit at the same offsets
 * in every entry, and the hot path computes nothing per family.  Nothing
 * reads or writes the key but the accessors in table/conn_key.h.
 *
 * Locking rules, stated once:
 *  - the key, hash, proto, ext: written before the entry is published in a
 *    row, never after; read freely under RCU.
 *  - l4state, the private area, counters, mark, labels: written only with
 *    the entry's lock held (ct_conn_lock); readers that copy them out for a
 *    dump take the lock too.
 *  - expires: written with the entry's lock held, read without it by the
 *    collector, migration and the due bounds - so once the entry is
 *    published it is stored with a relaxed atomic store, and loaded
 *    atomically by those who do not hold the lock.
 *  - status: atomic bit operations; CT_ST_DYING is set, with the entry's
 *    lock held, by whoever unlinks the entry, before it leaves its row.  A
 *    packet that finds a DYING entry treats it as absent.
 *  - After DYING and unlinking, nobody writes the entry until it is freed
 *    after a grace period.
 */
#ifndef CT_CONN_H
#define CT_CONN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <urcu/arch.h>

#include "ctrack/table.h"
#include "base/spin.h"
#include "ctrack/tuple.h"

/* Extension bits (ct_conn.ext). */
enum {
	CT_EXT_ACCT = 0x01,     /* struct ct_ext_acct */
	CT_EXT_TSTAMP = 0x02,   /* struct ct_ext_tstamp */
	CT_EXT_LABELS = 0x04,   /* struct ct_ext_labels */
	CT_EXT_TCPF = 0x08,     /* struct ct_ext_tcpf (issue 26: TCP entries
				 * of a table with config.tcp_flags) */
	CT_EXT_NAT = 0x10,      /* struct ct_ext_nat (and, for IPv6, the
				 * reply's other 24 address bytes after the
				 * key's tail: table/conn_key.h) */
	CT_EXT_END = 0x20,      /* past the last: where an IPv6 key's tail
				 * starts (table/conn_key.h) */
};

/* The key's fields other than the addresses: bytes 32..39 of struct
 * ct_tuple, in its layout (so that they compare as one word). */
struct ct_conn_key {
	uint16_t sport;
	uint16_t dport;
	uint16_t zone;
	uint8_t l3;
	uint8_t l4;
};

struct ct_conn {
	uint64_t expires;            /* absolute, ns of caller time */
	_Atomic uint32_t status;     /* CT_ST_* (table.h) */
	uint32_t mark;
	uint32_t hash;               /* keyed symmetric hash of the tuple */
	uint8_t l4state;             /* protocol state (TCP_CONNTRACK_*...) */
	_Atomic uint8_t lock;        /* byte spinlock, see ct_conn_lock */
	uint8_t proto;               /* index into the tracker table */
	uint8_t ext;                 /* CT_EXT_* present */
	struct ct_conn_key key;      /* original direction, but addresses */
	uint32_t addr[2];            /* network order: IPv4 src, dst; IPv6
				      * the first 8 bytes of src (table/conn_key.h) */
	/* the protocol's private area follows (aligned to 8) */
	uint64_t priv[];
};

/* An IPv6 entry's address bytes that are not in its core (and those of
 * an IPv6 NAT reply that are not in its extension). */
#define CT_CONN_V6_TAIL 24u

_Static_assert(sizeof(struct ct_conn) == 40 &&
	       offsetof(struct ct_conn, key) == 24 &&
	       offsetof(struct ct_conn, addr) == 32, "ct_conn core layout");
_Static_assert(sizeof(struct ct_conn_key) == 8 &&
	       offsetof(struct ct_tuple, sport) == 32 &&
	       offsetof(struct ct_conn_key, sport) == 0 &&
	       offsetof(struct ct_conn_key, dport) == 2 &&
	       offsetof(struct ct_tuple, dport) == 34 &&
	       offsetof(struct ct_conn_key, zone) == 4 &&
	       offsetof(struct ct_tuple, zone) == 36 &&
	       offsetof(struct ct_conn_key, l3) == 6 &&
	       offsetof(struct ct_tuple, l3) == 38 &&
	       offsetof(struct ct_conn_key, l4) == 7 &&
	       offsetof(struct ct_tuple, l4) == 39,
	       "ct_conn_key is the tail of ct_tuple");

struct ct_ext_acct {
	uint64_t packets[2];
	uint64_t bytes[2];
};

struct ct_ext_tstamp {
	uint64_t first_ns;
	uint64_t last_ns;
};

struct ct_ext_labels {
	uint8_t bits[16];
};

/* issue 26 (flow export): the TCP header flags seen in each direction,
 * OR-ed as IPFIX's tcpControlBits are; 8 bytes so that what follows stays
 * aligned. */
struct ct_ext_tcpf {
	uint8_t flags[2];            /* by enum ct_dir */
	uint8_t pad[6];
};

/*
 * The NAT extension: what an entry whose binding changed a tuple keeps of
 * its reply tuple, which is then no longer the inverted original (the
 * zone and the protocols are the original's).  IPv4 reply addresses are
 * whole here; an IPv6 reply keeps the first 8 bytes of its source here
 * and its other 24 address bytes at the end of the object, after the
 * key's tail (table/conn_key.h), as the core does with the key.  rhash is
 * the low 32 bits of the reply tuple's hash: the row of the entry's
 * second slot (table/htab.h), found again by removal and migration
 * without hashing.  bysrc_next links the entries with a source mapping
 * (CT_ST_SRC_NAT) in the table's source index (nat/nat_table.c), an RCU
 * list.  Written before the entry is published, never after, but
 * bysrc_next (the index's lock).  24 bytes a binding (48 for IPv6).
 */
struct ct_ext_nat {
	uint32_t raddr[2];           /* network order: IPv4 reply src, dst;
				      * IPv6 the first 8 bytes of the src */
	uint16_t rsport;             /* the reply tuple's ports (host order) */
	uint16_t rdport;
	uint32_t rhash;
	struct ct_conn *_Atomic bysrc_next;
};

_Static_assert(sizeof(struct ct_ext_nat) == 24, "the NAT extension is 24 bytes");

/* Bytes the extensions in mask @ext (CT_EXT_* bits) take, laid out in bit
 * order (acct, tstamp, labels): an entry's size and its extensions'
 * offsets both add them up.  A table, one load for a mask read at run
 * time (4 instructions fewer a new connection than three tests); a
 * constant mask folds. */
#define CT_EXT_SZ(m) (((m) & CT_EXT_ACCT ? sizeof(struct ct_ext_acct) : 0) + \
		      ((m) & CT_EXT_TSTAMP ? sizeof(struct ct_ext_tstamp) : 0) + \
		      ((m) & CT_EXT_LABELS ? sizeof(struct ct_ext_labels) : 0) + \
		      ((m) & CT_EXT_TCPF ? sizeof(struct ct_ext_tcpf) : 0) + \
		      ((m) & CT_EXT_NAT ? sizeof(struct ct_ext_nat) : 0))

static inline __attribute__((always_inline)) size_t ct_ext_size(unsigned ext)
{
	static const uint8_t sz[32] = {
		CT_EXT_SZ(0), CT_EXT_SZ(1), CT_EXT_SZ(2), CT_EXT_SZ(3),
		CT_EXT_SZ(4), CT_EXT_SZ(5), CT_EXT_SZ(6), CT_EXT_SZ(7),
		CT_EXT_SZ(8), CT_EXT_SZ(9), CT_EXT_SZ(10), CT_EXT_SZ(11),
		CT_EXT_SZ(12), CT_EXT_SZ(13), CT_EXT_SZ(14), CT_EXT_SZ(15),
		CT_EXT_SZ(16), CT_EXT_SZ(17), CT_EXT_SZ(18), CT_EXT_SZ(19),
		CT_EXT_SZ(20), CT_EXT_SZ(21), CT_EXT_SZ(22), CT_EXT_SZ(23),
		CT_EXT_SZ(24), CT_EXT_SZ(25), CT_EXT_SZ(26), CT_EXT_SZ(27),
		CT_EXT_SZ(28), CT_EXT_SZ(29), CT_EXT_SZ(30), CT_EXT_SZ(31),
	};

	return sz[ext & (CT_EXT_END - 1)];
}

static inline void *ct_conn_priv(struct ct_conn *c)
{
	return c->priv;
}

static inline const void *ct_conn_priv_const(const struct ct_conn *c)
{
	return c->priv;
}

/* Key fields every entry keeps in its core (table/conn_key.h has the rest). */
static inline uint16_t ct_conn_zone(const struct ct_conn *c)
{
	return c->key.zone;
}

static inline uint8_t ct_conn_l3(const struct ct_conn *c)
{
	return c->key.l3;
}

static inline uint8_t ct_conn_l4(const struct ct_conn *c)
{
	return c->key.l4;
}

/* The ICMP type of an ICMP / ICMPv6 entry's original tuple (tuple.h). */
static inline uint8_t ct_conn_icmp_type(const struct ct_conn *c)
{
	return (uint8_t)(c->key.dport >> 8);
}

static inline void ct_conn_lock(struct ct_conn *c)
{
	ct_spin_lock(&c->lock);
}

static inline bool ct_conn_trylock(struct ct_conn *c)
{
	return ct_spin_trylock(&c->lock);
}

static inline void ct_conn_unlock(struct ct_conn *c)
{
	ct_spin_unlock(&c->lock);
}

static inline uint32_t ct_conn_status(const struct ct_conn *c)
{
	return atomic_load_explicit(&((struct ct_conn *)c)->status,
				    memory_order_acquire);
}

static inline bool ct_conn_test_and_set(struct ct_conn *c, uint32_t bit)
{
	return atomic_fetch_or_explicit(&c->status, bit,
					memory_order_acq_rel) & bit;
}

#endif /* CT_CONN_H */
