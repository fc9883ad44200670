/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * conn_key.h - an entry's parts past its core: the key's tail, the
 * extensions, the object's size; and its key stored, expanded, compared
 * (private).
 *
 * An entry keeps its original tuple in compact form (base/conn.h): the tuple's
 * last 8 bytes (ports, zone, l3, l4) and 8 address bytes in its core, and
 * for IPv6 the other 24 address bytes at the end of the object, after the
 * protocol's private area and the extensions.  An IPv4 key is whole in the
 * core: its addresses are src, dst in the core's address word.
 *
 * An entry whose NAT binding changed a tuple (CT_EXT_NAT) keeps its
 * reply tuple's endpoints in that extension (base/conn.h, struct
 * ct_ext_nat), an IPv6 reply's other 24 address bytes after the key's
 * tail; every other entry's reply tuple is its inverted original.
 * ct_conn_reply gives either, and the compares below say whether a
 * lookup key is an entry's reply tuple without building it.
 *
 * Every reader of a key goes through here.  The comparisons take the
 * lookup key as a full struct ct_tuple (unused bytes zero, tuple.h): its
 * last word holds l3, so once that word matches the entry has the key's
 * form, and an IPv4 key is two 8-byte compares where a tuple was 40
 * bytes.  An IPv6 key finds its tail from the entry's tracker and
 * extensions, which are fixed before the entry is published (base/conn.h), so
 * the key is read under RCU without a lock, as before.
 */
#ifndef CT_CONN_KEY_H
#define CT_CONN_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/conn.h"
#include "proto/proto.h"
#include "ctrack/tuple.h"

/* Address bytes of a family-@l3 key that do not fit the core. */
static inline size_t ct_conn_key_extra(uint8_t l3)
{
	return l3 == CT_L3_IPV4 ? 0 : CT_CONN_V6_TAIL;
}

/* Offset of extension @ext (a CT_EXT_* bit, or CT_EXT_END) inside an
 * entry: after the core, the protocol's private area and the extensions
 * the entry has before it, in bit order (acct, tstamp, labels;
 * ct_ext_size).  For acct, the first, nothing is added. */
static inline size_t ct_conn_ext_off(const struct ct_conn *c, unsigned ext)
{
	return sizeof(struct ct_conn) + ct_proto_by_index(c->proto)->priv_size +
	       ct_ext_size(c->ext & (ext - 1));
}

/* Where an IPv6 entry's 24 other address bytes are: after the
 * extensions (c->proto and c->ext are set). */
static inline const uint8_t *ct_conn_v6_tail(const struct ct_conn *c)
{
	return (const uint8_t *)c + ct_conn_ext_off(c, CT_EXT_END);
}

/* An entry's object size: core, private area, extensions, the rest of a
 * family-@l3 key (and of an IPv6 NAT reply), rounded to 8 (inline: every
 * creation asks; for a mask without CT_EXT_NAT the NAT term folds away
 * when the mask is a constant, and is one test otherwise). */
static inline size_t ct_conn_obj_size(uint8_t l3, uint8_t priv_size, unsigned ext)
{
	size_t sz = sizeof(struct ct_conn) + priv_size + ct_conn_key_extra(l3) +
		    ct_ext_size(ext);

	if (ext & CT_EXT_NAT)
		sz += ct_conn_key_extra(l3);
	return (sz + 7) & ~(size_t)7;
}

/* The slab size class of an object of @size bytes (ct_conn_obj_size;
 * CT_N_CLASSES, base/state.h). */
static inline unsigned ct_conn_class(size_t size)
{
	return (unsigned)((size - sizeof(struct ct_conn)) / 8);
}

/* An entry's extensions, or NULL when it has none of that kind. */
static inline struct ct_ext_acct *ct_conn_acct(struct ct_conn *c)
{
	return (c->ext & CT_EXT_ACCT)
		? (struct ct_ext_acct *)((char *)c + ct_conn_ext_off(c, CT_EXT_ACCT))
		: NULL;
}

static inline struct ct_ext_tstamp *ct_conn_tstamp(struct ct_conn *c)
{
	return (c->ext & CT_EXT_TSTAMP)
		? (struct ct_ext_tstamp *)((char *)c + ct_conn_ext_off(c, CT_EXT_TSTAMP))
		: NULL;
}

static inline struct ct_ext_labels *ct_conn_labels(struct ct_conn *c)
{
	return (c->ext & CT_EXT_LABELS)
		? (struct ct_ext_labels *)((char *)c + ct_conn_ext_off(c, CT_EXT_LABELS))
		: NULL;
}

/* issue 26: the TCP flags seen in each direction (TCP entries of a table
 * with config.tcp_flags) */
static inline struct ct_ext_tcpf *ct_conn_tcpf(struct ct_conn *c)
{
	return (c->ext & CT_EXT_TCPF)
		? (struct ct_ext_tcpf *)((char *)c + ct_conn_ext_off(c, CT_EXT_TCPF))
		: NULL;
}

/* An entry's NAT extension, or NULL for an entry whose reply tuple is
 * its inverted original. */
static inline struct ct_ext_nat *ct_conn_nat(struct ct_conn *c)
{
	return (c->ext & CT_EXT_NAT)
		? (struct ct_ext_nat *)((char *)c + ct_conn_ext_off(c, CT_EXT_NAT))
		: NULL;
}

static inline const struct ct_ext_nat *ct_conn_nat_const(const struct ct_conn *c)
{
	return ct_conn_nat((struct ct_conn *)c);
}

/* Where an IPv6 NAT entry's other 24 reply address bytes are: after the
 * key's tail. */
static inline const uint8_t *ct_conn_nat_v6_tail(const struct ct_conn *c)
{
	return ct_conn_v6_tail(c) + CT_CONN_V6_TAIL;
}

/* The tuple's 8 bytes after its addresses, as one word. */
static inline uint64_t ct_tuple_tail_word(const struct ct_tuple *t)
{
	uint64_t w;

	memcpy(&w, (const char *)t + offsetof(struct ct_tuple, sport), 8);
	return w;
}

static inline uint64_t ct_conn_key_word(const struct ct_conn *c)
{
	uint64_t w;

	memcpy(&w, &c->key, 8);
	return w;
}

/* Two IPv4 addresses as one word, in the order the core keeps them. */
static inline uint64_t ct_addr4_pair(uint32_t first, uint32_t second)
{
	uint32_t a[2] = { first, second };
	uint64_t w;

	memcpy(&w, a, 8);
	return w;
}

static inline uint64_t ct_conn_addr_word(const struct ct_conn *c)
{
	uint64_t w;

	memcpy(&w, c->addr, 8);
	return w;
}

/*
 * ct_conn_set_key - store tuple @t as @c's key.  @c is unpublished, its
 * object has ct_conn_key_extra(t->l3) bytes after its extensions, and
 * c->proto and c->ext are set (they place an IPv6 key's tail).  The
 * tuple's unused address bytes are zero (tuple.h): nothing of it is lost.
 */
static inline void ct_conn_set_key(struct ct_conn *c, const struct ct_tuple *t)
{
	memcpy(&c->key, (const char *)t + offsetof(struct ct_tuple, sport), 8);
	if (__builtin_expect(t->l3 == CT_L3_IPV4, 1)) {
		c->addr[0] = t->src.ip4;
		c->addr[1] = t->dst.ip4;
	} else {
		uint8_t *tail = (uint8_t *)ct_conn_v6_tail(c);

		memcpy(c->addr, t->src.ip6, 8);
		memcpy(tail, t->src.ip6 + 8, 8);
		memcpy(tail + 8, t->dst.ip6, 16);
	}
}

/* ct_conn_tuple - @c's original tuple, expanded into *@out. */
static inline void ct_conn_tuple(const struct ct_conn *c, struct ct_tuple *out)
{
	memset(out, 0, sizeof(*out));
	memcpy((char *)out + offsetof(struct ct_tuple, sport), &c->key, 8);
	if (c->key.l3 == CT_L3_IPV4) {
		out->src.ip4 = c->addr[0];
		out->dst.ip4 = c->addr[1];
	} else {
		const uint8_t *tail = ct_conn_v6_tail(c);

		memcpy(out->src.ip6, c->addr, 8);
		memcpy(out->src.ip6 + 8, tail, 8);
		memcpy(out->dst.ip6, tail + 8, 16);
	}
}

/*
 * ct_conn_set_reply - store @r, the reply tuple of @c's binding, in @c's
 * NAT extension, with @rhash the low 32 bits of its hash.  @c is
 * unpublished, has CT_EXT_NAT and its key is set; @r has @c's zone and
 * protocols.
 */
static inline void ct_conn_set_reply(struct ct_conn *c, const struct ct_tuple *r,
				     uint32_t rhash)
{
	struct ct_ext_nat *n = ct_conn_nat(c);

	n->rsport = r->sport;
	n->rdport = r->dport;
	n->rhash = rhash;
	atomic_store_explicit(&n->bysrc_next, NULL, memory_order_relaxed);
	if (c->key.l3 == CT_L3_IPV4) {
		n->raddr[0] = r->src.ip4;
		n->raddr[1] = r->dst.ip4;
	} else {
		uint8_t *tail = (uint8_t *)ct_conn_nat_v6_tail(c);

		memcpy(n->raddr, r->src.ip6, 8);
		memcpy(tail, r->src.ip6 + 8, 8);
		memcpy(tail + 8, r->dst.ip6, 16);
	}
}

/* ct_conn_reply_of - @c's reply tuple into *@out, given its original
 * tuple @o (ct_conn_tuple): its NAT extension's, or the inverted original
 * (the original itself when it has no inverse, as an ICMP type that is no
 * query: such an entry is never made).  @out may not be @o. */
static inline void ct_conn_reply_of(const struct ct_conn *c, const struct ct_tuple *o,
				    struct ct_tuple *out)
{
	const struct ct_ext_nat *n = ct_conn_nat_const(c);

	if (!n) {
		if (!ct_tuple_invert(o, out))
			*out = *o;
		return;
	}
	*out = *o;
	out->sport = n->rsport;
	out->dport = n->rdport;
	memset(&out->src, 0, sizeof(out->src));
	memset(&out->dst, 0, sizeof(out->dst));
	if (c->key.l3 == CT_L3_IPV4) {
		out->src.ip4 = n->raddr[0];
		out->dst.ip4 = n->raddr[1];
	} else {
		const uint8_t *tail = ct_conn_nat_v6_tail(c);

		memcpy(out->src.ip6, n->raddr, 8);
		memcpy(out->src.ip6 + 8, tail, 8);
		memcpy(out->dst.ip6, tail + 8, 16);
	}
}

/* ct_conn_reply - @c's reply tuple into *@out. */
static inline void ct_conn_reply(const struct ct_conn *c, struct ct_tuple *out)
{
	struct ct_tuple o;

	ct_conn_tuple(c, &o);
	ct_conn_reply_of(c, &o, out);
}

/* Does IPv6 entry @c hold source @src and destination @dst? */
static inline __attribute__((always_inline)) bool
ct_conn_addr6_equal(const struct ct_conn *c, const union ct_addr *src,
		    const union ct_addr *dst)
{
	const uint8_t *tail;

	if (memcmp(c->addr, src->ip6, 8) != 0)
		return false;
	tail = ct_conn_v6_tail(c);
	return memcmp(tail, src->ip6 + 8, 8) == 0 &&
	       memcmp(tail + 8, dst->ip6, 16) == 0;
}

/* ct_conn_key_equal - is @key (a full tuple, unused bytes zero) @c's
 * original tuple? */
static inline __attribute__((always_inline)) bool
ct_conn_key_equal(const struct ct_conn *c, const struct ct_tuple *key)
{
	if (ct_conn_key_word(c) != ct_tuple_tail_word(key))
		return false;
	if (key->l3 == CT_L3_IPV4)
		return ct_conn_addr_word(c) ==
		       ct_addr4_pair(key->src.ip4, key->dst.ip4);
	return ct_conn_addr6_equal(c, &key->src, &key->dst);
}

/*
 * ct_conn_key_swapped - is @c's original tuple @key with its endpoints and
 * ports swapped (the reply tuple of every protocol but ICMP/ICMPv6
 * queries)?  Compared in place: the two ports as one 32-bit word rotated
 * by 16 (which swaps its halves in either byte order), zone and protocols
 * as they are, the addresses crosswise.
 */
static inline __attribute__((always_inline)) bool
ct_conn_key_swapped(const struct ct_conn *c, const struct ct_tuple *key)
{
	uint64_t kw = ct_tuple_tail_word(key);
	uint32_t ports;

	/* the word's first 4 bytes in memory are sport, dport */
	memcpy(&ports, &kw, 4);
	ports = ports >> 16 | ports << 16;
	memcpy(&kw, &ports, 4);
	if (ct_conn_key_word(c) != kw)
		return false;
	if (key->l3 == CT_L3_IPV4)
		return ct_conn_addr_word(c) ==
		       ct_addr4_pair(key->dst.ip4, key->src.ip4);
	return ct_conn_addr6_equal(c, &key->dst, &key->src);
}

/*
 * ct_conn_key_is_reply - does @c match the reply direction of @key, whose
 * inverse is @inv, or, with @inv NULL, @key swapped (ct_conn_key_swapped)?
 */
static inline __attribute__((always_inline)) bool
ct_conn_key_is_reply(const struct ct_conn *c, const struct ct_tuple *key,
		     const struct ct_tuple *inv)
{
	return inv ? ct_conn_key_equal(c, inv) : ct_conn_key_swapped(c, key);
}

/* The reply tuple's last word (ports, zone, protocols) of NAT entry @c,
 * whose extension is @n. */
static inline uint64_t ct_conn_reply_word(const struct ct_conn *c,
					  const struct ct_ext_nat *n)
{
	uint64_t w = ct_conn_key_word(c);

	memcpy(&w, &n->rsport, 4);   /* rsport, rdport: sport, dport */
	return w;
}

/* Does NAT entry @c's reply tuple have source @src, destination @dst? */
static inline bool ct_conn_reply_addr_equal(const struct ct_conn *c,
					    const struct ct_ext_nat *n,
					    const union ct_addr *src,
					    const union ct_addr *dst)
{
	const uint8_t *tail;

	if (c->key.l3 == CT_L3_IPV4)
		return n->raddr[0] == src->ip4 && n->raddr[1] == dst->ip4;
	if (memcmp(n->raddr, src->ip6, 8) != 0)
		return false;
	tail = ct_conn_nat_v6_tail(c);
	return memcmp(tail, src->ip6 + 8, 8) == 0 &&
	       memcmp(tail + 8, dst->ip6, 16) == 0;
}

/* ct_conn_reply_equal - is @key (a full tuple) NAT entry @c's reply
 * tuple?  @c has CT_EXT_NAT. */
static inline __attribute__((always_inline)) bool
ct_conn_reply_equal(const struct ct_conn *c, const struct ct_tuple *key)
{
	const struct ct_ext_nat *n = ct_conn_nat_const(c);

	return ct_conn_reply_word(c, n) == ct_tuple_tail_word(key) &&
	       ct_conn_reply_addr_equal(c, n, &key->src, &key->dst);
}

/*
 * ct_conn_reply_is_inverse - is NAT entry @c's reply tuple the inverse of
 * @key, which is @inv, or with @inv NULL @key swapped (every protocol but
 * ICMP/ICMPv6 queries)?  An insert asks it: a new entry's reply tuple is
 * its key's inverse, and must not be another entry's reply either.
 */
static inline bool ct_conn_reply_is_inverse(const struct ct_conn *c,
					    const struct ct_tuple *key,
					    const struct ct_tuple *inv)
{
	const struct ct_ext_nat *n;
	uint64_t kw;
	uint32_t ports;

	if (inv)
		return ct_conn_reply_equal(c, inv);
	n = ct_conn_nat_const(c);
	kw = ct_tuple_tail_word(key);
	memcpy(&ports, &kw, 4);
	ports = ports >> 16 | ports << 16;
	memcpy(&kw, &ports, 4);
	return ct_conn_reply_word(c, n) == kw &&
	       ct_conn_reply_addr_equal(c, n, &key->dst, &key->src);
}

/*
 * ct_conn_matches - the direction in which entry @c holds lookup key @key
 * (inverse @inv, NULL: swapped), found in a slot that is its reply slot
 * (@rpl, table/htab.h) or its primary one: the kernel's rule, ORIGINAL
 * when @key is its original tuple, REPLY when @key is its reply tuple;
 * -1 when neither.  An entry whose reply tuple is its inverted original
 * is compared as before NAT (ct_conn_key_is_reply); a NAT entry's
 * inverted original is no key of it.
 */
static inline __attribute__((always_inline)) int
ct_conn_matches(const struct ct_conn *c, const struct ct_tuple *key,
		const struct ct_tuple *inv, bool rpl)
{
	if (__builtin_expect(rpl, 0)) {
		if (c->ext & CT_EXT_NAT)
			return ct_conn_reply_equal(c, key) ? CT_DIR_REPLY : -1;
		return ct_conn_key_is_reply(c, key, inv) ? CT_DIR_REPLY : -1;
	}
	if (ct_conn_key_equal(c, key))
		return CT_DIR_ORIGINAL;
	if (ct_conn_key_is_reply(c, key, inv))
		return (c->ext & CT_EXT_NAT) ? -1 : CT_DIR_REPLY;
	return -1;
}

#endif /* CT_CONN_KEY_H */
