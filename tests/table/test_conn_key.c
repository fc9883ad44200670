/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_conn_key.c - an entry's compact key (src/conn_key.h): stored,
 * expanded and compared without loss, for IPv4 (whole in the 40-byte
 * core) and IPv6 (8 bytes in the core, 24 after the extensions).
 *
 * The reference is struct ct_tuple itself: whatever a key is stored from,
 * ct_conn_tuple must give back byte for byte, and every comparison must
 * agree with ct_tuple_equal on the full tuples (the definition the table
 * had before the key was compacted: "memcmp of 40 bytes, unused bytes
 * zero", tuple.h).  Entries are allocated at exactly ct_conn_obj_size
 * bytes and their private area and extensions filled with a pattern, so
 * that a key written past its room, or over its neighbours, shows (and
 * AddressSanitizer sees an overrun).  The last test goes through the
 * table: IPv6 entries with every extension, found in both directions,
 * labelled and counted, keep their tuples.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/ctrack.h"
#include "table/conn_key.h"
#include "proto/tcp.h"
#include "base/state.h"
#include "table/conn_key.h"
#include "table/htab.h"
#include "table/member.h"
#include "table/reclaim.h"
#include "table/resize.h"
#include "table/wheel.h"

#define SEC 1000000000ull
#define FILL 0xa5

/* Every tracker (by its protocol number) and a protocol the generic
 * tracker takes (ESP, 50), plus protocol 255. */
static const uint8_t protos[] = {
	IPPROTO_TCP, IPPROTO_UDP, IPPROTO_UDPLITE, IPPROTO_ICMP,
	IPPROTO_ICMPV6, IPPROTO_SCTP, IPPROTO_GRE, 50, 255,
};

static const uint16_t zones[] = { 0, 1, 0x1234, 65535 };

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rnd_state = rnd_state * 6364136223846793005ull + 1442695040888963407ull;
	return rnd_state >> 16;
}

/* A valid tuple: family @l3, protocol @l4, zone @zone, random addresses
 * and ports (unused bytes zero, as tuple.h requires). */
static struct ct_tuple rand_tuple(uint8_t l3, uint8_t l4, uint16_t zone)
{
	struct ct_tuple t;

	memset(&t, 0, sizeof(t));
	t.l3 = l3;
	t.l4 = l4;
	t.zone = zone;
	if (l3 == CT_L3_IPV4) {
		t.src.ip4 = (uint32_t)rnd();
		t.dst.ip4 = (uint32_t)rnd();
	} else {
		for (int i = 0; i < 16; i++) {
			t.src.ip6[i] = (uint8_t)rnd();
			t.dst.ip6[i] = (uint8_t)rnd();
		}
	}
	t.sport = (uint16_t)rnd();
	t.dport = (uint16_t)rnd();
	return t;
}

/* An entry for @t with extensions @ext: exactly its object size, every
 * byte FILL but the header fields the key's placement reads. */
struct obj {
	struct ct_conn *c;
	size_t size;
};

static struct obj entry_for(const struct ct_tuple *t, unsigned ext)
{
	const struct ct_proto *p = ct_proto_find(t->l4);
	struct obj o;

	o.size = ct_conn_obj_size(t->l3, p->priv_size, ext);
	o.c = malloc(o.size);
	assert_non_null(o.c);
	memset(o.c, FILL, o.size);
	o.c->proto = ct_proto_index(p);
	o.c->ext = (uint8_t)ext;
	ct_conn_set_key(o.c, t);
	return o;
}

/* The bytes that are neither the header nor the key: the private area
 * and the extensions, still FILL. */
static void assert_neighbours_untouched(const struct obj *o, uint8_t l3)
{
	const uint8_t *b = (const uint8_t *)o->c;
	size_t end = o->size - ct_conn_key_extra(l3);

	for (size_t i = sizeof(struct ct_conn); i < end; i++)
		assert_int_equal(b[i], FILL);
	/* the header, but for proto and ext, is not the key's either */
	for (size_t i = 0; i < offsetof(struct ct_conn, proto); i++)
		assert_int_equal(b[i], FILL);
}

static void assert_round_trip(const struct ct_tuple *t, unsigned ext)
{
	struct obj o = entry_for(t, ext);
	struct ct_tuple back;

	memset(&back, 0x5a, sizeof(back));
	ct_conn_tuple(o.c, &back);
	assert_memory_equal(&back, t, sizeof(*t));
	assert_true(ct_conn_key_equal(o.c, t));
	assert_int_equal(ct_conn_zone(o.c), t->zone);
	assert_int_equal(ct_conn_l3(o.c), t->l3);
	assert_int_equal(ct_conn_l4(o.c), t->l4);
	assert_neighbours_untouched(&o, t->l3);
	free(o.c);
}

/* Object sizes, derived from the layout rather than read back: the old
 * core was 64 bytes (a 40-byte tuple and 24 bytes of header); an IPv4
 * key needs 16 of those 40 (two 4-byte addresses and the 8-byte last
 * word), so its entry is 24 bytes smaller; an IPv6 key needs all 40, so
 * its entry keeps the old size. */
static void test_ipv4_entry_is_24_bytes_smaller_and_ipv6_keeps_its_size(void **state)
{
	(void)state;
	for (unsigned ext = 0; ext < 8; ext++) {
		size_t e = ((ext & CT_EXT_ACCT) ? 32 : 0) + ((ext & CT_EXT_TSTAMP) ? 16 : 0) +
			   ((ext & CT_EXT_LABELS) ? 16 : 0);

		for (size_t i = 0; i < sizeof(protos); i++) {
			uint8_t priv = ct_proto_find(protos[i])->priv_size;

			assert_int_equal(ct_conn_obj_size(CT_L3_IPV4, priv, ext), 40 + priv + e);
			assert_int_equal(ct_conn_obj_size(CT_L3_IPV6, priv, ext), 64 + priv + e);
			/* each has a size class of its own slab */
			assert_true(ct_conn_class(ct_conn_obj_size(CT_L3_IPV6, priv, ext)) <
				    (unsigned)CT_N_CLASSES);
		}
	}
	/* a TCP/IPv4 entry without extensions: 40 + the TCP area */
	assert_int_equal(ct_conn_obj_size(CT_L3_IPV4, CT_TCP_PRIV_SIZE, 0), 96);
}

/* Random family-@l3 keys of every protocol and zone, with every
 * combination of extensions. */
static void round_trips(uint8_t l3)
{
	for (size_t z = 0; z < sizeof(zones) / sizeof(zones[0]); z++)
		for (size_t i = 0; i < sizeof(protos); i++)
			for (unsigned ext = 0; ext < 8; ext++)
				for (int r = 0; r < 4; r++) {
					struct ct_tuple t = rand_tuple(l3, protos[i], zones[z]);

					assert_round_trip(&t, ext);
				}
}

static void test_ipv4_keys_round_trip_for_every_protocol_and_zone(void **state)
{
	(void)state;
	round_trips(CT_L3_IPV4);
}

static void test_ipv6_keys_round_trip_after_any_extensions(void **state)
{
	(void)state;
	round_trips(CT_L3_IPV6);
}

/* Extreme field values: all-ones ports, zone 65535, addresses of all
 * zeros and all ones, and ICMP's type/code in dport. */
static void test_extreme_fields_and_icmp_type_code_survive(void **state)
{
	(void)state;
	for (int fam = 0; fam < 2; fam++) {
		uint8_t l3 = fam ? CT_L3_IPV6 : CT_L3_IPV4;
		struct ct_tuple t;

		memset(&t, 0, sizeof(t));
		t.l3 = l3;
		t.l4 = 255;
		t.zone = 65535;
		t.sport = 0xffff;
		t.dport = 0xffff;
		if (l3 == CT_L3_IPV4) {
			t.src.ip4 = 0xffffffffu;
		} else {
			memset(t.src.ip6, 0xff, 16);
		}
		for (unsigned ext = 0; ext < 8; ext++)
			assert_round_trip(&t, ext);

		/* an all-zero key (generic protocol 0, zone 0) */
		memset(&t, 0, sizeof(t));
		t.l3 = l3;
		assert_round_trip(&t, 0);

		/* echo request id 0x4242, type 8 code 0; then an error type
		 * with a code (3/13): the type is the high byte of dport */
		t = rand_tuple(l3, l3 == CT_L3_IPV4 ? IPPROTO_ICMP : IPPROTO_ICMPV6, 7);
		t.sport = 0x4242;
		t.dport = 8 << 8;
		assert_round_trip(&t, CT_EXT_ACCT);
		{
			struct obj o = entry_for(&t, CT_EXT_ACCT);

			assert_int_equal(ct_conn_icmp_type(o.c), 8);
			free(o.c);
		}
		t.dport = 3 << 8 | 13;
		{
			struct obj o = entry_for(&t, 0);

			assert_int_equal(ct_conn_icmp_type(o.c), 3);
			free(o.c);
		}
	}
}

/* The meaningful bytes of a tuple of family @l3: an IPv4 tuple's unused
 * address bytes must stay zero and are skipped. */
static bool meaningful(uint8_t l3, size_t i)
{
	if (l3 != CT_L3_IPV4)
		return true;
	return !((i >= 4 && i < 16) || (i >= 20 && i < 32));
}

/* A key differing from the entry's in any one bit of any meaningful
 * byte is not equal; the answer is ct_tuple_equal's. */
static void test_key_equal_agrees_with_the_full_tuple_compare(void **state)
{
	(void)state;
	for (int fam = 0; fam < 2; fam++)
		for (size_t p = 0; p < sizeof(protos); p++) {
			uint8_t l3 = fam ? CT_L3_IPV6 : CT_L3_IPV4;
			struct ct_tuple t = rand_tuple(l3, protos[p], zones[p % 4]);
			struct obj o = entry_for(&t, (unsigned)p % 8);

			for (size_t i = 0; i < sizeof(t); i++) {
				if (!meaningful(l3, i))
					continue;
				for (int b = 0; b < 8; b++) {
					struct ct_tuple x = t;

					((uint8_t *)&x)[i] ^= (uint8_t)(1u << b);
					if (x.l3 != CT_L3_IPV4 && x.l3 != CT_L3_IPV6 &&
					    i == offsetof(struct ct_tuple, l3))
						x.l3 = l3 == CT_L3_IPV4 ? CT_L3_IPV6 : CT_L3_IPV4;
					assert_int_equal(ct_conn_key_equal(o.c, &x),
							 ct_tuple_equal(&x, &t));
				}
			}
			free(o.c);
		}
}

/* The other family with the same bytes where they overlap is another
 * key: an IPv6 key whose first address bytes are an IPv4 entry's
 * addresses, and the other way round. */
static void test_families_never_match_each_other(void **state)
{
	struct ct_tuple v4 = rand_tuple(CT_L3_IPV4, IPPROTO_UDP, 3), v6 = v4;
	struct obj o4, o6;

	(void)state;
	v6.l3 = CT_L3_IPV6;
	o4 = entry_for(&v4, 0);
	o6 = entry_for(&v6, 0);
	assert_false(ct_conn_key_equal(o4.c, &v6));
	assert_false(ct_conn_key_equal(o6.c, &v4));
	assert_true(ct_conn_key_equal(o4.c, &v4));
	assert_true(ct_conn_key_equal(o6.c, &v6));
	free(o4.c);
	free(o6.c);
}

/* The same tuple in another zone is another connection. */
static void test_zone_is_part_of_the_key(void **state)
{
	(void)state;
	for (int fam = 0; fam < 2; fam++) {
		struct ct_tuple t = rand_tuple(fam ? CT_L3_IPV6 : CT_L3_IPV4, IPPROTO_TCP, 0);
		struct ct_tuple z = t, inv;
		struct obj o = entry_for(&t, CT_EXT_LABELS);

		z.zone = 65535;
		assert_false(ct_conn_key_equal(o.c, &z));
		assert_true(ct_tuple_invert(&z, &inv));
		assert_false(ct_conn_key_swapped(o.c, &inv));
		z.zone = 0;
		assert_true(ct_conn_key_equal(o.c, &z));
		free(o.c);
	}
}

/*
 * The reply direction without an inverse tuple: an entry made from the
 * inverse of @t (ct_tuple_invert: endpoints and ports swapped) is @t's
 * reply; an entry made from any one-bit change of that inverse is @t's
 * reply exactly when the changed tuple still equals the inverse (never).
 */
static void test_swapped_compare_finds_the_reply_and_only_it(void **state)
{
	(void)state;
	for (int fam = 0; fam < 2; fam++)
		for (size_t p = 0; p < sizeof(protos); p++) {
			uint8_t l3 = fam ? CT_L3_IPV6 : CT_L3_IPV4;
			struct ct_tuple t, inv;
			struct obj o;

			if (protos[p] == IPPROTO_ICMP || protos[p] == IPPROTO_ICMPV6)
				continue;       /* their inverse is not a swap */
			t = rand_tuple(l3, protos[p], zones[p % 4]);
			if (p == 0)
				t.dport = t.sport;     /* symmetric ports */
			assert_true(ct_tuple_invert(&t, &inv));
			o = entry_for(&inv, (unsigned)(p * 3) % 8);
			assert_true(ct_conn_key_swapped(o.c, &t));
			assert_true(ct_conn_key_is_reply(o.c, &t, NULL));
			assert_true(ct_conn_key_is_reply(o.c, &t, &inv));
			/* the original direction is not the reply (ports or
			 * addresses differ once swapped) unless symmetric */
			assert_int_equal(ct_conn_key_equal(o.c, &t), ct_tuple_equal(&t, &inv));
			free(o.c);
			for (size_t i = 0; i < sizeof(inv); i++) {
				if (!meaningful(l3, i) || i == offsetof(struct ct_tuple, l3))
					continue;
				struct ct_tuple x = inv;

				((uint8_t *)&x)[i] ^= (uint8_t)(1u << (i % 8));
				o = entry_for(&x, 0);
				assert_int_equal(ct_conn_key_swapped(o.c, &t),
						 ct_tuple_equal(&x, &inv));
				free(o.c);
			}
		}
}

/* ICMP queries: the reply tuple carries the reply type, so only the
 * inverse passed in finds it; the plain swap does not. */
static void test_icmp_reply_is_found_through_its_inverse(void **state)
{
	(void)state;
	for (int fam = 0; fam < 2; fam++) {
		uint8_t l3 = fam ? CT_L3_IPV6 : CT_L3_IPV4;
		uint8_t l4 = fam ? IPPROTO_ICMPV6 : IPPROTO_ICMP;
		/* echo request: ICMP type 8, ICMPv6 type 128 */
		uint16_t echo = fam ? 128 << 8 : 8 << 8;
		struct ct_tuple req = rand_tuple(l3, l4, 9), rep;
		struct obj o;

		req.dport = echo;
		assert_true(ct_tuple_invert(&req, &rep));
		assert_int_not_equal(rep.dport, req.dport);   /* echo reply */
		o = entry_for(&req, CT_EXT_ACCT | CT_EXT_TSTAMP);
		/* the entry holds the request: a reply packet's key finds it
		 * through the reply's inverse, which is the request */
		{
			struct ct_tuple inv;

			assert_true(ct_tuple_invert(&rep, &inv));
			assert_true(ct_conn_key_is_reply(o.c, &rep, &inv));
			assert_false(ct_conn_key_is_reply(o.c, &rep, NULL));
			assert_false(ct_conn_key_equal(o.c, &rep));
		}
		free(o.c);
	}
}

/*
 * The NAT extension (base/conn.h, struct ct_ext_nat): an entry whose
 * binding changed a tuple keeps its reply tuple there - 24 bytes for
 * IPv4, 48 for IPv6 (the reply's other 24 address bytes after the key's
 * tail) - and one without keeps today's size.  The sizes are derived from
 * the layout: the extension's four fields (8 bytes of addresses, 4 of
 * ports, 4 of reply hash, an 8-byte link) and the 24 IPv6 address bytes
 * a key also keeps out of its core.
 */
static void test_nat_extension_adds_24_bytes_ipv4_48_ipv6_and_nothing_without(void **state)
{
	(void)state;
	for (unsigned ext = 0; ext < CT_EXT_NAT; ext++)
		for (size_t i = 0; i < sizeof(protos); i++) {
			uint8_t priv = ct_proto_find(protos[i])->priv_size;

			assert_int_equal(ct_conn_obj_size(CT_L3_IPV4, priv, ext | CT_EXT_NAT),
					 ct_conn_obj_size(CT_L3_IPV4, priv, ext) + 8 + 4 + 4 + 8);
			assert_int_equal(ct_conn_obj_size(CT_L3_IPV6, priv, ext | CT_EXT_NAT),
					 ct_conn_obj_size(CT_L3_IPV6, priv, ext) + 8 + 4 + 4 + 8 + 24);
			assert_true(ct_conn_class(ct_conn_obj_size(CT_L3_IPV6, priv,
								   ext | CT_EXT_NAT)) <
				    (unsigned)CT_N_CLASSES);
		}
	/* TCP/IPv4 source NAT: 40 + 56 + 24, DESIGN.md's 128 with its
	 * second slot (8 bytes of a row) */
	assert_int_equal(ct_conn_obj_size(CT_L3_IPV4, CT_TCP_PRIV_SIZE, CT_EXT_NAT), 120);
}

/* A reply tuple of @t's connection changed by NAT: random endpoints of
 * its family, its zone and protocols. */
static struct ct_tuple nat_reply_of(const struct ct_tuple *t)
{
	struct ct_tuple r = rand_tuple(t->l3, t->l4, t->zone);

	return r;
}

static void test_nat_reply_round_trips_beside_the_key_and_extensions(void **state)
{
	(void)state;
	for (int fam = 0; fam < 2; fam++)
		for (unsigned ext = 0; ext < CT_EXT_NAT; ext++)
			for (size_t i = 0; i < sizeof(protos); i++)
				for (int n = 0; n < 20; n++) {
					uint8_t l3 = fam ? CT_L3_IPV6 : CT_L3_IPV4;
					struct ct_tuple t = rand_tuple(l3, protos[i], zones[n % 4]);
					struct ct_tuple r = nat_reply_of(&t), back;
					struct obj o = entry_for(&t, ext | CT_EXT_NAT);
					const uint8_t *b = (const uint8_t *)o.c;
					size_t nat_off = ct_conn_ext_off(o.c, CT_EXT_NAT);

					ct_conn_set_reply(o.c, &r, 0x12345678u);
					memset(&back, 0x5a, sizeof(back));
					ct_conn_reply(o.c, &back);
					assert_memory_equal(&back, &r, sizeof(r));
					ct_conn_tuple(o.c, &back);
					assert_memory_equal(&back, &t, sizeof(t));
					assert_int_equal(ct_conn_nat(o.c)->rhash, 0x12345678u);
					/* the private area and the other extensions
					 * are not the reply's */
					for (size_t k = sizeof(struct ct_conn); k < nat_off; k++)
						assert_int_equal(b[k], FILL);
					/* the object ends with the reply's tail */
					assert_int_equal(nat_off + sizeof(struct ct_ext_nat) +
							 2 * ct_conn_key_extra(l3), o.size);
					free(o.c);
				}
}

/*
 * The kernel's rule for a lookup key K (nf_conntrack_find: the entry's
 * two tuplehashes): ORIGINAL when K is the original tuple, REPLY when K
 * is the reply tuple, nothing else - so a NAT entry is not found from
 * its inverted original, nor from its inverted reply.  The reference is
 * ct_tuple_equal on the full tuples; every candidate key is tried as the
 * two slots of the entry would be asked.
 */
static void test_nat_entry_matches_its_original_and_its_reply_only(void **state)
{
	(void)state;
	for (int fam = 0; fam < 2; fam++)
		for (size_t i = 0; i < sizeof(protos); i++)
			for (int n = 0; n < 50; n++) {
				uint8_t l3 = fam ? CT_L3_IPV6 : CT_L3_IPV4;
				struct ct_tuple t = rand_tuple(l3, protos[i], zones[n % 4]);
				struct ct_tuple r, keys[5], inv;
				struct obj nat, plain;
				bool icmp = protos[i] == IPPROTO_ICMP || protos[i] == IPPROTO_ICMPV6;

				if (icmp)  /* a query type, so that it inverts */
					t.dport = (uint16_t)((protos[i] == IPPROTO_ICMP ? 8 : 128) << 8);
				r = nat_reply_of(&t);
				if (icmp)
					r.dport = (uint16_t)((protos[i] == IPPROTO_ICMP ? 0 : 129) << 8);
				nat = entry_for(&t, CT_EXT_NAT);
				ct_conn_set_reply(nat.c, &r, 0);
				plain = entry_for(&t, 0);
				keys[0] = t;
				keys[1] = r;
				assert_true(ct_tuple_invert(&t, &keys[2]));
				assert_true(ct_tuple_invert(&r, &keys[3]));
				keys[4] = rand_tuple(l3, protos[i], t.zone);
				for (int k = 0; k < 5; k++) {
					const struct ct_tuple *pinv = NULL;
					int want_nat = ct_tuple_equal(&keys[k], &t) ? CT_DIR_ORIGINAL
						     : ct_tuple_equal(&keys[k], &r) ? CT_DIR_REPLY : -1;
					int want_plain = ct_tuple_equal(&keys[k], &t) ? CT_DIR_ORIGINAL
						       : ct_tuple_equal(&keys[k], &keys[2]) ? CT_DIR_REPLY : -1;

					if (icmp) {
						if (!ct_tuple_invert(&keys[k], &inv))
							inv = keys[k];
						pinv = &inv;
					}
					/* the primary slot finds the original, the
					 * reply slot the reply */
					assert_int_equal(ct_conn_matches(nat.c, &keys[k], pinv, false),
							 want_nat == CT_DIR_ORIGINAL ? CT_DIR_ORIGINAL : -1);
					assert_int_equal(ct_conn_matches(nat.c, &keys[k], pinv, true),
							 want_nat == CT_DIR_REPLY ? CT_DIR_REPLY : -1);
					/* an entry without NAT, as before */
					assert_int_equal(ct_conn_matches(plain.c, &keys[k], pinv, false),
							 want_plain);
					/* the reply is K's inverse (an insert's check) */
					assert_int_equal(ct_conn_reply_is_inverse(nat.c, &keys[k], pinv),
							 icmp ? ct_tuple_equal(&r, &inv)
							      : ct_tuple_equal_swapped(&r, &keys[k]));
					assert_int_equal(ct_conn_reply_equal(nat.c, &keys[k]),
							 ct_tuple_equal(&keys[k], &r));
				}
				free(nat.c);
				free(plain.c);
			}
}

/* Through the table: IPv6 and IPv4 UDP entries with accounting,
 * timestamps and labels, found from both directions, counted, labelled,
 * dumped: every tuple as it was given. */
static int dump_count(const struct ct_conn_info *ci, void *arg)
{
	(void)ci;
	++*(int *)arg;
	return 0;
}

static void test_entries_with_every_extension_keep_their_tuples_in_the_table(void **state)
{
	struct ct_table_config cfg;
	struct ct_table *t;
	struct ct_thread *thr;
	uint8_t labels[16] = { 0xff, 0xee, [15] = 0x11 };

	(void)state;
	ct_table_config_default(&cfg);
	cfg.settings.checksum = 0;
	cfg.settings.acct = 1;
	cfg.settings.timestamp = 1;
	cfg.labels = true;
	assert_int_equal(ct_table_create(&cfg, &t), 0);
	thr = ct_thread_attach(t);
	assert_non_null(thr);
	for (int fam = 0; fam < 2; fam++) {
		struct ct_packet p, r;
		struct ct_verdict v;
		struct ct_conn_info ci;
		enum ct_dir dir;
		int n = 0;

		memset(&p, 0, sizeof(p));
		p.kind = CT_PKT_TRACKABLE;
		p.tuple = rand_tuple(fam ? CT_L3_IPV6 : CT_L3_IPV4, IPPROTO_UDP, 0);
		p.l3_len = 100;
		p.l4_len = 60;
		p.payload_len = 52;
		r = p;
		assert_true(ct_tuple_invert(&p.tuple, &r.tuple));
		assert_int_equal(ct_process(thr, &p, 1 * SEC, &v), 0);
		assert_true(v.flags & CT_VF_CREATED);
		assert_int_equal(ct_table_set_labels(thr, &p.tuple, labels, 2 * SEC), 1);
		assert_int_equal(ct_process(thr, &r, 3 * SEC, &v), 0);
		assert_int_equal(v.cls, CT_V_ESTABLISHED);
		assert_int_equal(v.dir, CT_DIR_REPLY);
		assert_int_equal(ct_process(thr, &p, 4 * SEC, &v), 0);
		assert_int_equal(v.dir, CT_DIR_ORIGINAL);
		assert_int_equal(ct_table_lookup(thr, &r.tuple, &ci, &dir), 1);
		assert_int_equal(dir, CT_DIR_REPLY);
		assert_memory_equal(&ci.orig, &p.tuple, sizeof(p.tuple));
		assert_memory_equal(&ci.reply, &r.tuple, sizeof(r.tuple));
		assert_memory_equal(ci.labels, labels, 16);
		assert_int_equal(ci.packets[CT_DIR_ORIGINAL], 2);
		assert_int_equal(ci.packets[CT_DIR_REPLY], 1);
		assert_int_equal(ci.bytes[CT_DIR_ORIGINAL], 200);
		assert_int_equal(ci.first_seen, 1 * SEC);
		assert_int_equal(ci.last_seen, 4 * SEC);
		assert_int_equal(ct_table_dump(thr, 0, dump_count, &n), 0);
		assert_int_equal(n, fam + 1);
	}
	ct_thread_detach(thr);
	ct_table_destroy(t);
}

/* The public sizes: ct_conn_size bounds both families (an IPv6 entry's),
 * ct_conn_size_l3 is each family's; with the kernel defaults (acct on,
 * no timestamps, no labels) a TCP/IPv4 entry is 40 + 56 + 32 bytes. */
static void test_public_entry_sizes_follow_the_family(void **state)
{
	struct ct_table_config cfg;
	struct ct_table *t;

	(void)state;
	ct_table_config_default(&cfg);
	cfg.settings.acct = 1;
	cfg.settings.timestamp = 0;
	cfg.labels = false;
	assert_int_equal(ct_table_create(&cfg, &t), 0);
	assert_int_equal(ct_conn_size_l3(t, CT_L3_IPV4, IPPROTO_TCP), 128);
	assert_int_equal(ct_conn_size_l3(t, CT_L3_IPV6, IPPROTO_TCP), 152);
	for (size_t i = 0; i < sizeof(protos); i++) {
		assert_int_equal(ct_conn_size(t, protos[i]),
				 ct_conn_size_l3(t, CT_L3_IPV6, protos[i]));
		assert_int_equal(ct_conn_size_l3(t, CT_L3_IPV4, protos[i]) + 24,
				 ct_conn_size_l3(t, CT_L3_IPV6, protos[i]));
	}
	ct_table_destroy(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nat_extension_adds_24_bytes_ipv4_48_ipv6_and_nothing_without),
		cmocka_unit_test(test_nat_reply_round_trips_beside_the_key_and_extensions),
		cmocka_unit_test(test_nat_entry_matches_its_original_and_its_reply_only),
		cmocka_unit_test(test_ipv4_entry_is_24_bytes_smaller_and_ipv6_keeps_its_size),
		cmocka_unit_test(test_ipv4_keys_round_trip_for_every_protocol_and_zone),
		cmocka_unit_test(test_ipv6_keys_round_trip_after_any_extensions),
		cmocka_unit_test(test_extreme_fields_and_icmp_type_code_survive),
		cmocka_unit_test(test_key_equal_agrees_with_the_full_tuple_compare),
		cmocka_unit_test(test_families_never_match_each_other),
		cmocka_unit_test(test_zone_is_part_of_the_key),
		cmocka_unit_test(test_swapped_compare_finds_the_reply_and_only_it),
		cmocka_unit_test(test_icmp_reply_is_found_through_its_inverse),
		cmocka_unit_test(test_entries_with_every_extension_keep_their_tuples_in_the_table),
		cmocka_unit_test(test_public_entry_sizes_follow_the_family),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
