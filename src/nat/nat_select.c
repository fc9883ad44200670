/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nat_select.c - choosing the translated tuple, as nf_nat_core.c does.
 *
 * ct_nat_setup() is nf_nat_setup_info() and get_unique_tuple() step by
 * step (Linux 6.17/6.18, read for this file):
 *   1. source NAT without random flags: keep the original tuple when it is
 *      in the range and unused; otherwise reuse the mapping of an existing
 *      connection from the same source (find_appropriate_src) if it is in
 *      the range and unused;
 *   2. pick the address (find_best_ips_proto): jhash2 over the source
 *      address words, seeded with the last destination word xor the zone
 *      (0 with PERSISTENT), scaled into the range word by word;
 *   3. keep the port when it is in the range (or no range was given) and
 *      the tuple is unused - a single-port range is kept even when used,
 *      and fails at confirm;
 *   4. search the port (nf_nat_l4proto_unique_tuple): the class
 *      (1-511, 600-1023 or 1024-65535 after the original port, all ids
 *      for ICMP, or the range given), a start offset (random for source
 *      NAT and the random flags, 0 for destination NAT, port - base with
 *      PROTO_OFFSET), 128 consecutive candidates, then rounds of 64, 32,
 *      16 and 8 from new random offsets: 248 in all, the last 32 of each
 *      round "harder" (a TCP TIME_WAIT entry may be evicted).
 * The arithmetic is the kernel's to the bit - its 16-bit offset that
 * wraps, its unsigned range sizes, its jhash2 reading addresses as host
 * words, its use of the already rewritten destination word in the xor of
 * a DST manipulation - because a replay must pick the kernel's address,
 * and the kernel's port wherever its choice is not random.
 *
 * With a port map in the env (nat_portmap.c) step 4 is ctrack's exact
 * search instead: the same first candidate, then the next free port in
 * cyclic order, so a free port is found whenever one exists.
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "nat/nat_priv.h"
#include "parse/wire.h"

static bool is_icmp(uint8_t l4)
{
	return l4 == CT_IPPROTO_ICMP || l4 == CT_IPPROTO_ICMPV6;
}

static bool addr_equal(const union ct_addr *a, const union ct_addr *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

/* -1, 0, 1 as the addresses compare in network (numeric) order */
static int addr_cmp(uint8_t l3, const union ct_addr *a, const union ct_addr *b)
{
	if (l3 == CT_L3_IPV4) {
		uint32_t x = __builtin_bswap32(a->ip4), y = __builtin_bswap32(b->ip4);

		return x < y ? -1 : x > y;
	}
	return memcmp(a->ip6, b->ip6, 16);
}

uint16_t ct_nat_rand16(struct ct_nat_env *env)
{
	uint64_t z;

	if (env->rand16)
		return env->rand16(env->rand_arg);
	/* splitmix64 */
	z = (env->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint16_t)((z ^ (z >> 31)) >> 48);
}

void ct_nat_env_init(struct ct_nat_env *env, ct_nat_taken_fn taken, void *arg)
{
	memset(env, 0, sizeof(*env));
	env->taken = taken;
	env->taken_arg = arg;
	if (getrandom(&env->rng, sizeof(env->rng), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(env->rng)) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		env->rng = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
}

bool ct_nat_binding_init(struct ct_nat_binding *b, const struct ct_tuple *orig)
{
	memset(b, 0, sizeof(*b));
	b->orig = *orig;
	return ct_tuple_invert(orig, &b->reply);
}

void ct_nat_binding_from_tuples(struct ct_nat_binding *b,
				const struct ct_tuple *orig,
				const struct ct_tuple *reply)
{
	bool icmp = is_icmp(orig->l4);

	b->orig = *orig;
	b->reply = *reply;
	b->status = CT_NAT_S_DONE_MASK;
	if (!addr_equal(&reply->dst, &orig->src) ||
	    (!icmp && reply->dport != orig->sport))
		b->status |= CT_NAT_S_SRC;
	if (!addr_equal(&reply->src, &orig->dst) ||
	    (!icmp && reply->sport != orig->dport))
		b->status |= CT_NAT_S_DST;
	if (icmp && reply->sport != orig->sport && !(b->status & CT_NAT_S_MASK))
		b->status |= CT_NAT_S_SRC;
}

/* ---- the kernel's range tests ------------------------------------- */

/* nf_nat_inet_in_range: the source address (only source NAT asks) */
static bool addr_in_range(const struct ct_tuple *t, const struct ct_nat_range *r)
{
	return addr_cmp(t->l3, &t->src, &r->min_addr) >= 0 &&
	       addr_cmp(t->l3, &t->src, &r->max_addr) <= 0;
}

/* l4proto_in_range */
static bool proto_in_range(const struct ct_tuple *t, enum ct_nat_manip manip,
			   uint16_t min, uint16_t max)
{
	uint16_t port;

	switch (t->l4) {
	case CT_IPPROTO_ICMP:
	case CT_IPPROTO_ICMPV6:
		return t->sport >= min && t->sport <= max;
	case CT_IPPROTO_GRE:
	case CT_IPPROTO_TCP:
	case CT_IPPROTO_UDP:
	case CT_IPPROTO_UDPLITE:
	case CT_IPPROTO_SCTP:
		port = manip == CT_NAT_MANIP_SRC ? t->sport : t->dport;
		return port >= min && port <= max;
	default:
		return true;
	}
}

/* nf_in_range: would a source mapping to @t meet @r? */
static bool src_in_range(const struct ct_tuple *t, const struct ct_nat_range *r)
{
	if ((r->flags & CT_NAT_RANGE_MAP_IPS) && !addr_in_range(t, r))
		return false;
	if (!(r->flags & CT_NAT_RANGE_PROTO_SPECIFIED))
		return true;
	return proto_in_range(t, CT_NAT_MANIP_SRC, r->min_proto, r->max_proto);
}

/* ---- asking the caller -------------------------------------------- */

struct sel {
	struct ct_nat_env *env;
	const struct ct_nat_binding *self;
	void *conn;
};

/* The reply tuple candidate @cand gives: its inverse.  The candidate's
 * ICMP type is a query's (it comes from an original tuple), so the
 * inversion cannot fail; a failure is treated as "taken". */
static bool cand_taken(struct sel *s, const struct ct_tuple *cand,
		       enum ct_nat_probe_kind kind, unsigned attempts_left)
{
	struct ct_tuple reply;
	struct ct_nat_probe p;

	if (!ct_tuple_invert(cand, &reply))
		return true;
	p.reply = &reply;
	p.self = s->self;
	p.conn = s->conn;
	p.attempts_left = (uint16_t)attempts_left;
	p.kind = (uint8_t)kind;
	return s->env->taken(s->env->taken_arg, &p);
}

/* ---- find_appropriate_src ----------------------------------------- */

struct src_search {
	const struct ct_tuple *tuple;
	const struct ct_nat_range *range;
	struct ct_tuple *result;
};

static bool src_candidate(void *arg, const struct ct_tuple *reply)
{
	struct src_search *ss = arg;
	struct ct_tuple r = *ss->tuple;

	/* the source part from the inverted reply, the rest from @tuple */
	r.src = reply->dst;
	r.sport = is_icmp(r.l4) ? reply->sport : reply->dport;
	if (!src_in_range(&r, ss->range))
		return false;
	*ss->result = r;
	return true;
}

static bool find_appropriate_src(struct sel *s, const struct ct_tuple *tuple,
				 struct ct_tuple *result,
				 const struct ct_nat_range *range)
{
	struct src_search ss = { tuple, range, result };

	if (!s->env->bysrc.foreach)
		return false;
	return s->env->bysrc.foreach(s->env->bysrc.idx, tuple, src_candidate, &ss);
}

/* ---- find_best_ips_proto ------------------------------------------ */

void ct_nat_best_addr(struct ct_tuple *t, const struct ct_nat_range *range,
		      enum ct_nat_manip manip)
{
	union ct_addr *var;
	uint32_t src_words[4], j, minip, maxip, dist;
	unsigned max, i;
	bool full_range = false;

	if (!(range->flags & CT_NAT_RANGE_MAP_IPS))
		return;
	var = manip == CT_NAT_MANIP_SRC ? &t->src : &t->dst;
	if (addr_equal(&range->min_addr, &range->max_addr)) {
		*var = range->min_addr;
		return;
	}
	max = t->l3 == CT_L3_IPV4 ? 0 : 3;
	/* jhash2 over all four words of the source (an IPv4 address has
	 * three zero words after it), read as host-order words */
	memcpy(src_words, &t->src, sizeof(src_words));
	j = ct_nat_jhash2(src_words, 4,
			  (range->flags & CT_NAT_RANGE_PERSISTENT) ?
				  0 : t->dst.ip6w[max] ^ (uint32_t)t->zone);
	for (i = 0; i <= max; i++) {
		/* while the words written so far are at the range's maximum,
		 * the next one is scaled into the range's span for it;
		 * after that any value will do */
		if (!full_range) {
			minip = __builtin_bswap32(range->min_addr.ip6w[i]);
			maxip = __builtin_bswap32(range->max_addr.ip6w[i]);
			dist = maxip - minip + 1;
		} else {
			minip = 0;
			dist = ~0u;
		}
		var->ip6w[i] = __builtin_bswap32(minip + ct_nat_reciprocal_scale(j, dist));
		if (var->ip6w[i] != range->max_addr.ip6w[i])
			full_range = true;
		/* the destination word as it is now: for a DST manipulation
		 * the one just written, as in the kernel */
		if (!(range->flags & CT_NAT_RANGE_PERSISTENT))
			j ^= t->dst.ip6w[i];
	}
}

/* ---- nf_nat_l4proto_unique_tuple ---------------------------------- */

bool ct_nat_port_class(const struct ct_tuple *t,
		       const struct ct_nat_range *range,
		       enum ct_nat_manip manip, unsigned *min, unsigned *size)
{
	unsigned lo, hi;
	uint16_t key;

	switch (t->l4) {
	case CT_IPPROTO_ICMP:
	case CT_IPPROTO_ICMPV6:
		if (!(range->flags & CT_NAT_RANGE_PROTO_SPECIFIED)) {
			*min = 0;
			*size = 65536;
		} else {
			/* no swap here: a reversed id range wraps, as in
			 * the kernel's unsigned arithmetic */
			*min = range->min_proto;
			*size = (unsigned)range->max_proto - range->min_proto + 1u;
		}
		return true;
	case CT_IPPROTO_GRE:
		/* only a PPTP data connection (one with a master) has its key
		 * changed; ctrack has no helpers, so no GRE tuple has one */
		return false;
	case CT_IPPROTO_UDP:
	case CT_IPPROTO_UDPLITE:
	case CT_IPPROTO_TCP:
	case CT_IPPROTO_SCTP:
		break;
	default:
		return false;
	}
	if (!(range->flags & CT_NAT_RANGE_PROTO_SPECIFIED)) {
		/* a destination's port is not changed without a range */
		if (manip == CT_NAT_MANIP_DST)
			return false;
		key = manip == CT_NAT_MANIP_SRC ? t->sport : t->dport;
		if (key < 1024) {
			/* "loose convention: >> 512 is credential passing" */
			if (key < 512) {
				*min = 1;
				*size = 511;
			} else {
				*min = 600;
				*size = 1023 - 600 + 1;
			}
		} else {
			*min = 1024;
			*size = 65535 - 1024 + 1;
		}
		return true;
	}
	lo = range->min_proto;
	hi = range->max_proto;
	if (hi < lo) {
		unsigned x = lo;

		lo = hi;
		hi = x;
	}
	*min = lo;
	*size = hi - lo + 1;
	return true;
}

static bool portmap_free_ok(void *arg, const struct ct_tuple *cand)
{
	struct sel *s = arg;

	return !cand_taken(s, cand, CT_NAT_PROBE_SEARCH, CT_NAT_MAX_ATTEMPTS);
}

/*
 * Probe @i of a round (port offset @off) was taken: the round goes on
 * with i + 1, i + 2, ... (off + 1, off + 2, ...), a port each, until one
 * is free - in a run of used ports (a block of clients' kept ports on one
 * address, whose tuples all go to one server) often many in a row, each
 * a "taken?" lookup in a random row of the table: a cache miss apiece,
 * one after the other.  Hinting the next few (env->prefetch) lets the
 * caller fetch their rows while the current one is answered.  The depth
 * grows with the run (2, 4, ... 8 ahead), so that a search which stops
 * at the next probe - the usual case - hints little for nothing.
 */
#define NAT_HINT_AHEAD 8u

static void hint_ahead(struct sel *s, const struct ct_tuple *t, const uint16_t *keyptr,
		       unsigned i, uint16_t off, unsigned attempts, unsigned min, unsigned size,
		       unsigned *pf)
{
	unsigned depth = 2 * (i + 1) < NAT_HINT_AHEAD ? 2 * (i + 1) : NAT_HINT_AHEAD;
	unsigned end = i + 1 + depth < attempts ? i + 1 + depth : attempts;
	struct ct_tuple c = *t;
	uint16_t *ck = (uint16_t *)((uint8_t *)&c + ((const uint8_t *)keyptr - (const uint8_t *)t));

	if (*pf < i + 1)
		*pf = i + 1;
	for (; *pf < end; ++*pf) {
		/* the port probe *pf will take: off wraps at 16 bits there too */
		uint16_t o = (uint16_t)(off + (*pf - i));

		*ck = (uint16_t)(min + o % size);
		s->env->prefetch(s->env->taken_arg, &c);
	}
}

/* Returns true when a free candidate was found (left in @t). */
static bool l4_unique_tuple(struct sel *s, struct ct_tuple *t,
			    const struct ct_nat_range *range,
			    enum ct_nat_manip manip)
{
	struct ct_nat_env *env = s->env;
	unsigned min, size, attempts, i;
	uint16_t *keyptr, off;
	uint64_t probes = 0;
	bool found = false;

	if (!ct_nat_port_class(t, range, manip, &min, &size))
		return !cand_taken(s, t, CT_NAT_PROBE_MAPPED, 0);
	keyptr = ct_nat_keyptr(t, manip);
	if (env->stats)
		env->stats->searched++;

	if (range->flags & CT_NAT_RANGE_PROTO_OFFSET)
		off = (uint16_t)(*keyptr - range->base_proto);
	else if ((range->flags & CT_NAT_RANGE_PROTO_RANDOM_ALL) ||
		 manip != CT_NAT_MANIP_DST)
		off = ct_nat_rand16(env);
	else
		off = 0;

	if (env->portmap) {
		found = ct_nat_portmap_find(env->portmap, t, manip, min, size, off,
					    portmap_free_ok, s, &probes);
		goto out;
	}

	attempts = size < CT_NAT_MAX_ATTEMPTS ? size : CT_NAT_MAX_ATTEMPTS;
	for (;;) {
		unsigned pf = 0;   /* this round's candidates below pf were hinted */

		for (i = 0; i < attempts; i++, off++) {
			*keyptr = (uint16_t)(min + off % size);
			probes++;
			if (!cand_taken(s, t, CT_NAT_PROBE_SEARCH, attempts - i)) {
				found = true;
				goto out;
			}
			if (env->prefetch)
				hint_ahead(s, t, keyptr, i, off, attempts, min, size, &pf);
		}
		if (attempts >= size || attempts < 16)
			break;
		attempts /= 2;
		off = ct_nat_rand16(env);
	}
out:
	if (env->stats)
		env->stats->probes += probes;
	return found;
}

/* ---- get_unique_tuple ---------------------------------------------- */

/* Returns true when @tuple is free (as far as the callback could say). */
static bool get_unique_tuple(struct sel *s, struct ct_tuple *tuple,
			     const struct ct_tuple *orig,
			     const struct ct_nat_range *range,
			     enum ct_nat_manip manip)
{
	struct ct_nat_select_stats *st = s->env->stats;
	bool random = (range->flags & CT_NAT_RANGE_PROTO_RANDOM_ALL) != 0;

	if (manip == CT_NAT_MANIP_SRC && !random) {
		if (src_in_range(orig, range)) {
			if (!cand_taken(s, orig, CT_NAT_PROBE_ORIGINAL, 0)) {
				*tuple = *orig;
				if (st)
					st->kept_original++;
				return true;
			}
		} else if (find_appropriate_src(s, orig, tuple, range)) {
			if (!cand_taken(s, tuple, CT_NAT_PROBE_MAPPED, 0)) {
				if (st)
					st->source_map++;
				return true;
			}
		}
	}

	*tuple = *orig;
	ct_nat_best_addr(tuple, range, manip);

	if (!random) {
		if (range->flags & CT_NAT_RANGE_PROTO_SPECIFIED) {
			if (!(range->flags & CT_NAT_RANGE_PROTO_OFFSET) &&
			    proto_in_range(tuple, manip, range->min_proto,
					   range->max_proto)) {
				/* a single port is kept even when taken: the
				 * clash shows at confirm */
				if (range->min_proto == range->max_proto) {
					if (st)
						st->unchanged_port++;
					return !cand_taken(s, tuple, CT_NAT_PROBE_MAPPED, 0);
				}
				if (!cand_taken(s, tuple, CT_NAT_PROBE_MAPPED, 0)) {
					if (st)
						st->unchanged_port++;
					return true;
				}
			}
		} else if (!cand_taken(s, tuple, CT_NAT_PROBE_MAPPED, 0)) {
			if (st)
				st->unchanged_port++;
			return true;
		}
	}
	return l4_unique_tuple(s, tuple, range, manip);
}

/* nft's netmap: keep the address bits outside the range's common prefix */
static void netmap_range(struct ct_nat_range *r, const struct ct_nat_binding *b,
			 enum ct_nat_manip manip)
{
	const union ct_addr *a = manip == CT_NAT_MANIP_SRC ? &b->orig.src : &b->orig.dst;
	union ct_addr n;
	unsigned words = b->orig.l3 == CT_L3_IPV4 ? 1 : 4;

	memset(&n, 0, sizeof(n));
	for (unsigned i = 0; i < words; i++) {
		uint32_t mask = ~(r->min_addr.ip6w[i] ^ r->max_addr.ip6w[i]);

		n.ip6w[i] = (a->ip6w[i] & ~mask) | (r->min_addr.ip6w[i] & mask);
	}
	r->min_addr = n;
	r->max_addr = n;
}

int ct_nat_setup(struct ct_nat_env *env, struct ct_nat_binding *b,
		 const struct ct_nat_range *range, enum ct_nat_manip manip,
		 void *conn)
{
	struct ct_nat_binding before;
	struct ct_nat_range r;
	struct ct_tuple curr, chosen;
	struct sel s;
	uint32_t done;
	bool free_tuple;

	if (!env || !env->taken || !b || !range ||
	    (manip != CT_NAT_MANIP_SRC && manip != CT_NAT_MANIP_DST) ||
	    (range->flags & ~CT_NAT_RANGE_MASK))
		return -EINVAL;
	if ((range->flags & CT_NAT_RANGE_MAP_IPS) &&
	    addr_cmp(b->orig.l3, &range->min_addr, &range->max_addr) > 0)
		return -EINVAL;
	done = manip == CT_NAT_MANIP_SRC ? CT_NAT_S_SRC_DONE : CT_NAT_S_DST_DONE;
	if (b->status & done)
		return -EEXIST;
	r = *range;
	if ((r.flags & CT_NAT_RANGE_NETMAP) && (r.flags & CT_NAT_RANGE_MAP_IPS))
		netmap_range(&r, b, manip);

	/* what we have looks like the inverse of the reply: the original,
	 * with any earlier manipulation applied */
	if (!ct_tuple_invert(&b->reply, &curr))
		return -EINVAL;
	before = *b;
	s.env = env;
	s.self = &before;
	s.conn = conn;
	free_tuple = get_unique_tuple(&s, &chosen, &curr, &r, manip);

	if (!ct_tuple_equal(&chosen, &curr)) {
		if (!ct_tuple_invert(&chosen, &b->reply))
			return -EINVAL;
		b->status |= manip == CT_NAT_MANIP_SRC ? CT_NAT_S_SRC : CT_NAT_S_DST;
	}
	b->status |= done;
	if (env->stats) {
		env->stats->setups++;
		if (!free_tuple)
			env->stats->exhausted++;
	}
	return free_tuple ? CT_NAT_BOUND : CT_NAT_BOUND_TAKEN;
}

int ct_nat_null_binding(struct ct_nat_env *env, struct ct_nat_binding *b,
			enum ct_nat_manip manip, void *conn)
{
	struct ct_nat_range r;
	int rc;

	if (!b)
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	r.flags = CT_NAT_RANGE_MAP_IPS;
	/* the reply's side, in case an earlier manipulation changed it */
	r.min_addr = r.max_addr = manip == CT_NAT_MANIP_SRC ? b->reply.dst : b->reply.src;
	rc = ct_nat_setup(env, b, &r, manip, conn);
	if (rc >= 0 && env->stats)
		env->stats->null_bindings++;
	return rc;
}

int ct_nat_masquerade(struct ct_nat_env *env, struct ct_nat_binding *b,
		      const struct ct_nat_range *range,
		      const union ct_addr *addr, void *conn)
{
	struct ct_nat_range r;

	if (!b || !addr)
		return -EINVAL;
	/* a locally generated packet from 0.0.0.0 is not masqueraded */
	if (b->orig.l3 == CT_L3_IPV4 && b->orig.src.ip4 == 0)
		return CT_NAT_NOT_MAPPED;
	memset(&r, 0, sizeof(r));
	if (range) {
		r.flags = range->flags;
		r.min_proto = range->min_proto;
		r.max_proto = range->max_proto;
	}
	r.flags |= CT_NAT_RANGE_MAP_IPS;
	if (b->orig.l3 == CT_L3_IPV4)
		r.min_addr.ip4 = addr->ip4;
	else
		r.min_addr = *addr;
	r.max_addr = r.min_addr;
	return ct_nat_setup(env, b, &r, CT_NAT_MANIP_SRC, conn);
}
