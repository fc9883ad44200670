/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * defrag.c - IPv4 and IPv6 reassembly in front of the tracker, as
 * nf_defrag_ipv4 (ip_defrag) and nf_defrag_ipv6 (nf_ct_frag6_gather) do
 * it in front of nf_conntrack.
 *
 * A datagram being reassembled is a queue, keyed as the kernel keys it:
 * IPv4 by (source, destination, id, protocol, zone); IPv6 by (source,
 * destination, 32-bit id, receiving interface, zone).  The zone stands
 * for the kernel's defrag "user" (IP_DEFRAG_CONNTRACK_IN + zone); IPv4's
 * VRF index is taken as 0.
 *
 * Choices, each the kernel's unless said otherwise:
 *   - Overlaps (inet_frag_queue_insert, RFC 5722 as amended): pieces are
 *     kept in "runs" of fragments that arrived back to back; a fragment
 *     that lies entirely inside one run is a duplicate and is dropped
 *     alone; any other overlap drops the whole datagram (counted in
 *     overlaps).  This is applied to IPv4 and IPv6 alike.
 *   - Inconsistent ends (a last fragment that ends before data already
 *     seen, a second different last fragment, data past the last one):
 *     IPv4 drops the datagram, IPv6 drops just that fragment.  A zero
 *     length fragment: likewise.  An IPv4 fragment that is not the last
 *     and whose length is not a multiple of 8 is cut down to one; an IPv6
 *     one kills the datagram and is let through unreassembled.
 *   - IPv6 pieces nf_defrag_ipv6 does not queue are let through to the
 *     tracker as they are (ct_defrag_feed returns 1 with the fragment
 *     itself): a jumbo payload, a first fragment whose upper-layer header
 *     is not whole (RFC 8200 4.5; TCP needs 20 bytes, UDP and ICMPv6 8,
 *     others 1), a bad-length fragment as above.  A first fragment then
 *     parses as an ordinary packet (conntrack walks past a fragment
 *     header of offset 0); a later one comes back CT_PKT_INVALID
 *     (CT_PR_FRAG_BAD), as conntrack's get_l4proto refuses it.
 *   - ECN: fragments that mix not-ECT with ECT/CE drop the datagram;
 *     CE with ECT makes the result CE (ip_frag_ecn_table).
 *   - The result takes the first fragment's header; IPv4 gets its total
 *     length, DF when the largest fragment had DF, and a fresh checksum;
 *     IPv6 loses the fragment header (so l3_len, what conntrack counts,
 *     is 8 bytes less than the sum of the pieces' headers would say).
 *     Larger than 65535 (IPv4 total, IPv6 payload): dropped (oversize).
 *   - Time: a datagram expires timeout after its first fragment arrived
 *     (the kernel's queue timer is not pushed back by later fragments);
 *     expired ones are purged at each call, in the caller's time.
 *     Defaults 30 s (ipfrag_time) for IPv4 and 60 s
 *     (nf_conntrack_frag6_timeout) for IPv6.
 *   - Memory: every fragment is charged its data plus a fixed overhead
 *     standing for the kernel's skb truesize; once the total exceeds
 *     high_thresh, every new fragment is refused (counted in evicted)
 *     until timeouts free room: the kernel's inet_frag_find() does the
 *     same, it no longer evicts queues.
 *   - Not modelled: ipfrag_max_dist (the kernel's limit on how far
 *     fragments from one source may be reordered; it needs the per-peer
 *     state the kernel keeps in inet_peer).
 *   - A fragment whose capture was cut short is stored with zeroes in
 *     place of the missing bytes; the result is then marked truncated so
 *     nobody verifies its checksum.
 *
 * Fragments of one datagram are kept in a list sorted by offset (the
 * kernel's rb-tree of runs; datagrams hold few fragments and in-order
 * arrival appends at the tail in O(1)).  Queues live in a chained hash
 * table with a per-instance random seed, and in one FIFO per family for
 * expiry (creation order is expiry order).  The result is built in a
 * buffer owned by the reassembler and parsed with the ordinary parser.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "ctrack/defrag.h"
#include "parse/checksum.h"
#include "parse/ip.h"
#include "parse/ip6_ext.h"
#include "parse/wire.h"

#define NS_PER_S              1000000000ull
#define DEFRAG_V4_TIMEOUT_NS  (30ull * NS_PER_S)
#define DEFRAG_V6_TIMEOUT_NS  (60ull * NS_PER_S)
#define DEFRAG_DEFAULT_THRESH (4ull << 20)
#define DEFRAG_FRAG_OVERHEAD  256u      /* stands for skb overhead */
#define DEFRAG_BUF_SIZE       (40u + 65535u + 64u)

struct frag {
	struct frag *next;              /* sorted by offset */
	uint32_t offset, end;           /* bytes of the fragmentable part */
	bool run_start;                 /* first fragment of a run */
	uint8_t data[];
};

/* Padding-free so that it can be hashed and compared as bytes. */
struct fkey {
	union ct_addr src, dst;
	uint32_t id;
	uint32_t ifindex;               /* IPv6 only */
	uint16_t zone;
	uint8_t l3;
	uint8_t proto;                  /* IPv4 only */
};

_Static_assert(sizeof(struct fkey) == 44, "fkey must have no padding");

enum { FQ_FIRST_IN = 1, FQ_LAST_IN = 2 };

struct fq {
	struct fq *hnext, **hpprev;     /* hash chain */
	struct fq *prev, *next;         /* expiry FIFO of its family */
	struct fkey key;
	uint64_t expires;
	uint64_t mem;                   /* bytes charged for this queue */
	struct frag *frags, *tail;
	uint32_t len;                   /* end of the datagram as known */
	uint32_t meat;                  /* bytes received */
	uint32_t max_size, max_df_size;
	uint8_t flags;                  /* FQ_* */
	uint8_t ecn;                    /* 1 << ECN codepoint, ORed */
	bool truncated;
	uint8_t nexthdr;                /* IPv6: the fragment header's */
	uint32_t nhoff;                 /* IPv6: Next Header byte to patch */
	uint32_t head_len;
	uint8_t *head;                  /* first fragment's header: IPv4
					 * header, or IPv6 unfragmentable part */
	uint32_t ifindex;
	uint8_t n_vlan;
	uint16_t vlan_outer, vlan_inner;
};

struct ct_defrag {
	struct ct_defrag_stats st;
	uint64_t high_thresh;
	uint64_t mem;
	uint64_t timeout[2];            /* [0] IPv4, [1] IPv6 */
	uint64_t seed;
	uint32_t mask;                  /* buckets - 1 */
	struct fq **buckets;
	struct fq *fifo_head[2], *fifo_tail[2];
	uint8_t buf[DEFRAG_BUF_SIZE];
};

static inline int fam_idx(uint8_t l3)
{
	return l3 == CT_L3_IPV6;
}

static uint32_t key_hash(const struct ct_defrag *d, const struct fkey *k)
{
	/* 44 bytes as five 64-bit words and a 32-bit tail, loaded in place
	 * (a copy to an array of words compiled to a slow rep movs) */
	const unsigned char *p = (const unsigned char *)k;
	uint64_t h = d->seed;
	uint32_t tail;

	_Static_assert(sizeof(*k) == 5 * 8 + 4, "five words and a tail");
	for (unsigned i = 0; i < 5; i++) {
		uint64_t w;

		memcpy(&w, p + 8 * i, 8);
		h ^= w;
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	memcpy(&tail, p + 40, 4);
	h ^= tail;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 32;
	return (uint32_t)h;
}

struct ct_defrag *ct_defrag_create(uint64_t high_thresh_bytes,
				   uint64_t timeout_ns)
{
	struct ct_defrag *d = calloc(1, sizeof(*d));
	uint64_t want;
	uint32_t n = 64;

	if (!d)
		return NULL;
	d->high_thresh = high_thresh_bytes ? high_thresh_bytes
					   : DEFRAG_DEFAULT_THRESH;
	d->timeout[0] = timeout_ns ? timeout_ns : DEFRAG_V4_TIMEOUT_NS;
	d->timeout[1] = timeout_ns ? timeout_ns : DEFRAG_V6_TIMEOUT_NS;
	/* about one bucket per 2 KiB of allowed memory */
	want = d->high_thresh / 2048;
	while (n < want && n < (1u << 20))
		n <<= 1;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	d->buckets = calloc(n, sizeof(*d->buckets));
	if (!d->buckets) {
		free(d);
		return NULL;
	}
	d->mask = n - 1;
	if (getrandom(&d->seed, sizeof(d->seed), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(d->seed))
		d->seed = (uint64_t)(uintptr_t)d * 0x9e3779b97f4a7c15ull;
	return d;
}

static void fq_free(struct fq *fq)
{
	struct frag *f = fq->frags;

	while (f) {
		struct frag *n = f->next;

		free(f);
		f = n;
	}
	free(fq->head);
	free(fq);
}

static void fq_kill(struct ct_defrag *d, struct fq *fq)
{
	int fi = fam_idx(fq->key.l3);

	*fq->hpprev = fq->hnext;
	if (fq->hnext)
		fq->hnext->hpprev = fq->hpprev;
	if (fq->prev)
		fq->prev->next = fq->next;
	else
		d->fifo_head[fi] = fq->next;
	if (fq->next)
		fq->next->prev = fq->prev;
	else
		d->fifo_tail[fi] = fq->prev;
	d->mem -= fq->mem;
	fq_free(fq);
}

void ct_defrag_destroy(struct ct_defrag *d)
{
	if (!d)
		return;
	for (int fi = 0; fi < 2; fi++) {
		struct fq *fq = d->fifo_head[fi];

		while (fq) {
			struct fq *n = fq->next;

			fq_free(fq);
			fq = n;
		}
	}
	free(d->buckets);
	free(d);
}

void ct_defrag_get_stats(const struct ct_defrag *d, struct ct_defrag_stats *s)
{
	*s = d->st;
}

static void purge(struct ct_defrag *d, ct_time_ns now)
{
	for (int fi = 0; fi < 2; fi++) {
		/* the analyser assumes the head of a FIFO may have a prev and
		 * then follows fq_kill() leaving the freed head in place; the
		 * head's prev is NULL (fq_find links at the tail, fq_kill
		 * unlinks), which fuzz_parse and fuzz_track exercise */
		/* NOLINTNEXTLINE(clang-analyzer-unix.Malloc) */
		while (d->fifo_head[fi] && d->fifo_head[fi]->expires <= now) {
			fq_kill(d, d->fifo_head[fi]);
			d->st.timeouts++;
		}
	}
}

/* The live queue of @key in bucket @b, or NULL. */
static struct fq *fq_lookup(struct ct_defrag *d, struct fq **b,
			    const struct fkey *key, ct_time_ns now)
{
	for (struct fq *fq = *b; fq; fq = fq->hnext) {
		if (memcmp(&fq->key, key, sizeof(*key)) != 0)
			continue;
		if (fq->expires > now)
			return fq;
		/* its timer would have fired already (time went backwards
		 * in the capture, so the FIFO purge missed it) */
		fq_kill(d, fq);
		d->st.timeouts++;
		break;
	}
	return NULL;
}

static struct fq *fq_find(struct ct_defrag *d, const struct fkey *key,
			  ct_time_ns now)
{
	struct fq **b = &d->buckets[key_hash(d, key) & d->mask];
	struct fq *fq = fq_lookup(d, b, key, now);
	int fi = fam_idx(key->l3);

	if (fq)
		return fq;
	fq = calloc(1, sizeof(*fq));
	if (!fq)
		return NULL;
	fq->key = *key;
	/* saturated: a clock near the end of its range must not wrap the
	 * expiry into the past (the datagram would time out at once) */
	fq->expires = now + d->timeout[fi] < now ? UINT64_MAX : now + d->timeout[fi];
	fq->mem = sizeof(*fq);
	d->mem += fq->mem;
	fq->hnext = *b;
	if (*b)
		(*b)->hpprev = &fq->hnext;
	fq->hpprev = b;
	*b = fq;
	fq->prev = d->fifo_tail[fi];
	if (fq->prev)
		fq->prev->next = fq;
	else
		d->fifo_head[fi] = fq;
	d->fifo_tail[fi] = fq;
	return fq;
}

enum ins_result { INS_OK, INS_DUP, INS_OVERLAP, INS_NOMEM };

/*
 * Add [offset, end) with @cap of its bytes at @data, following
 * inet_frag_queue_insert(): past the tail it is appended (joining the
 * tail's run when contiguous, an overlap with the tail otherwise);
 * elsewhere it must miss every run (a new run), or lie inside one (a
 * duplicate); anything else is an overlap.
 */
static enum ins_result fq_insert(struct ct_defrag *d, struct fq *fq,
				 uint32_t offset, uint32_t end,
				 const uint8_t *data, uint32_t cap)
{
	uint32_t n = end - offset;
	struct frag *t = fq->tail, *f;

	if (t && t->end < end && offset < t->end)
		return INS_OVERLAP;
	if (t && t->end >= end) {
		struct frag *prev = NULL, *cur = fq->frags;

		while (cur) {
			struct frag *last = cur;

			while (last->next && !last->next->run_start)
				last = last->next;
			if (end <= cur->offset)
				break;
			if (offset < last->end)
				return offset >= cur->offset && end <= last->end
				       ? INS_DUP : INS_OVERLAP;
			prev = last;
			cur = last->next;
		}
		f = malloc(sizeof(*f) + n);
		if (!f)
			return INS_NOMEM;
		f->run_start = true;
		f->next = cur;
		if (prev)
			prev->next = f;
		else
			fq->frags = f;
		if (!cur)
			fq->tail = f;
	} else {
		f = malloc(sizeof(*f) + n);
		if (!f)
			return INS_NOMEM;
		f->next = NULL;
		f->run_start = !t || offset != t->end;
		if (t)
			t->next = f;
		else
			fq->frags = f;
		fq->tail = f;
	}
	f->offset = offset;
	f->end = end;
	if (cap >= n) {
		memcpy(f->data, data, n);
	} else {
		memcpy(f->data, data, cap);
		memset(f->data + cap, 0, n - cap);
		fq->truncated = true;
	}
	fq->meat += n;
	fq->mem += sizeof(*f) + n + DEFRAG_FRAG_OVERHEAD;
	d->mem += sizeof(*f) + n + DEFRAG_FRAG_OVERHEAD;
	return INS_OK;
}

static inline bool fq_complete(const struct fq *fq)
{
	return fq->flags == (FQ_FIRST_IN | FQ_LAST_IN) && fq->meat == fq->len;
}

/* ip_frag_ecn_table: 0xff = invalid mix, else the codepoint to OR in. */
static inline uint8_t frag_ecn(uint8_t bits)
{
	if ((bits & 0x01) && (bits & 0x0e))     /* not-ECT with ECT/CE */
		return 0xff;
	if ((bits & 0x08) && (bits & 0x06))     /* CE with ECT(0)/ECT(1) */
		return 3;
	return 0;
}

static bool fq_save_head(struct ct_defrag *d, struct fq *fq,
			 const struct ct_packet *frag, uint32_t head_len)
{
	uint8_t *h = malloc(head_len ? head_len : 1);

	if (!h)
		return false;
	memcpy(h, frag->l3, head_len);
	if (fq->head) {
		free(fq->head);
		fq->mem -= fq->head_len;
		d->mem -= fq->head_len;
	}
	fq->head = h;
	fq->head_len = head_len;
	fq->mem += head_len;
	d->mem += head_len;
	fq->ifindex = frag->ifindex;
	fq->n_vlan = frag->n_vlan;
	fq->vlan_outer = frag->vlan_outer;
	fq->vlan_inner = frag->vlan_inner;
	return true;
}

/* Copy the pieces behind the head, then parse the result into @out. */
static int fq_finish(struct ct_defrag *d, struct fq *fq, uint32_t total,
		     const struct ct_packet *frag, struct ct_packet *out)
{
	uint32_t ifindex = fq->ifindex;
	uint8_t n_vlan = fq->n_vlan;
	uint16_t vo = fq->vlan_outer, vi = fq->vlan_inner;
	uint16_t zone = fq->key.zone;
	bool truncated = fq->truncated;
	/* IPCB(skb)->frag_max_size (ip_frag_reasm), IP6CB's (nf_ct_frag6:
	 * the IPv6 header plus the largest fragment's payload) */
	uint32_t max = fq->key.l3 == CT_L3_IPV4 ? fq->max_size : 40 + fq->max_size;

	for (struct frag *f = fq->frags; f; f = f->next)
		memcpy(d->buf + fq->head_len + f->offset, f->data,
		       f->end - f->offset);
	fq_kill(d, fq);
	d->st.reassembled++;
	ct_parse_ip(out, d->buf, total, total, frag->ts);
	out->ifindex = ifindex;
	out->n_vlan = n_vlan;
	out->vlan_outer = vo;
	out->vlan_inner = vi;
	out->tuple.zone = zone;
	out->frag_max_size = (uint16_t)(max > 65535 ? 65535 : max);
	if (truncated)
		out->truncated = true;
	return 1;
}

static int reasm4(struct ct_defrag *d, struct fq *fq,
		  const struct ct_packet *frag, struct ct_packet *out)
{
	uint32_t total = fq->head_len + fq->len;
	uint8_t ecn = frag_ecn(fq->ecn);
	uint8_t *ip = d->buf;
	uint64_t s = 0;
	uint16_t c;

	if (total > 65535) {
		d->st.oversize++;
		fq_kill(d, fq);
		return 0;
	}
	if (ecn == 0xff) {
		d->st.bad++;
		fq_kill(d, fq);
		return 0;
	}
	memcpy(ip, fq->head, fq->head_len);
	ip[1] |= ecn;
	ip[2] = (uint8_t)(total >> 8);
	ip[3] = (uint8_t)total;
	ip[6] = fq->max_df_size == fq->max_size ? 0x40 : 0;
	ip[7] = 0;
	ip[10] = ip[11] = 0;
	for (uint32_t i = 0; i < fq->head_len; i += 2)
		s += (uint32_t)ip[i] << 8 | ip[i + 1];
	c = (uint16_t)~ct_csum_fold(s);
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
	return fq_finish(d, fq, total, frag, out);
}

static int reasm6(struct ct_defrag *d, struct fq *fq,
		  const struct ct_packet *frag, struct ct_packet *out)
{
	uint32_t plen = fq->head_len - 40 + fq->len;
	uint8_t ecn = frag_ecn(fq->ecn);
	uint8_t *ip = d->buf;

	if (plen > 65535) {
		d->st.oversize++;
		fq_kill(d, fq);
		return 0;
	}
	if (ecn == 0xff) {
		d->st.bad++;
		fq_kill(d, fq);
		return 0;
	}
	memcpy(ip, fq->head, fq->head_len);
	ip[fq->nhoff] = fq->nexthdr;
	ip[1] |= (uint8_t)(ecn << 4);
	ip[4] = (uint8_t)(plen >> 8);
	ip[5] = (uint8_t)plen;
	return fq_finish(d, fq, 40 + plen, frag, out);
}

static int feed4(struct ct_defrag *d, const struct ct_packet *frag,
		 ct_time_ns now, struct ct_packet *out)
{
	const uint8_t *ip = frag->l3;
	uint32_t ihl = frag->l3_hdr_len, offset = frag->frag_offset;
	uint32_t end = offset + frag->l4_len, size;
	struct fkey key;
	struct fq *fq;
	enum ins_result r;

	memset(&key, 0, sizeof(key));
	key.src = frag->tuple.src;
	key.dst = frag->tuple.dst;
	key.id = frag->frag_id;
	key.zone = frag->tuple.zone;
	key.l3 = CT_L3_IPV4;
	key.proto = ip[9];

	if (d->mem > d->high_thresh) {
		d->st.evicted++;
		return 0;
	}
	fq = fq_find(d, &key, now);
	if (!fq)
		return -ENOMEM;

	if (!frag->frag_more) {
		if (end < fq->len ||
		    ((fq->flags & FQ_LAST_IN) && end != fq->len))
			goto discard;
		fq->flags |= FQ_LAST_IN;
		fq->len = end;
	} else {
		end &= ~7u;
		if (end > fq->len) {
			if (fq->flags & FQ_LAST_IN)
				goto discard;
			fq->len = end;
		}
	}
	if (end == offset)
		goto discard;

	r = fq_insert(d, fq, offset, end, frag->l4, frag->l4_caplen);
	if (r == INS_NOMEM)
		return -ENOMEM;
	if (r == INS_DUP)
		return 0;
	if (r == INS_OVERLAP) {
		d->st.overlaps++;
		fq_kill(d, fq);
		return 0;
	}
	fq->ecn |= (uint8_t)(1u << (ip[1] & 3));
	size = end - offset + ihl;
	if (size > fq->max_size)
		fq->max_size = size;
	if ((ip[6] & 0x40) && size > fq->max_df_size)
		fq->max_df_size = size;
	if (offset == 0) {
		if (!fq_save_head(d, fq, frag, ihl))
			return -ENOMEM;
		fq->flags |= FQ_FIRST_IN;
	}
	if (fq_complete(fq))
		return reasm4(d, fq, frag, out);
	return 0;

discard:
	d->st.bad++;
	fq_kill(d, fq);
	return 0;
}

/*
 * An IPv6 fragment nf_defrag_ipv6 does not hold back: conntrack sees it
 * as it is.  A first fragment parses as a packet (the fragment header,
 * offset 0, is walked past); any other is refused by get_l4proto.
 */
static int pass6(const struct ct_packet *frag, struct ct_packet *out)
{
	if (frag->frag_offset != 0) {
		*out = *frag;
		out->kind = CT_PKT_INVALID;
		out->reason = CT_PR_FRAG_BAD;
		return 1;
	}
	/* a first fragment: parsed again as a whole packet with its
	 * fragment header transparent, from that header on */
	ct_parse_ip6_pass(out, frag);
	out->tuple.zone = frag->tuple.zone;
	return 1;
}

static int feed6(struct ct_defrag *d, const struct ct_packet *frag,
		 ct_time_ns now, struct ct_packet *out)
{
	const uint8_t *ip = frag->l3;
	uint32_t fhoff = frag->l3_hdr_len - 8u;
	uint32_t cap = (uint32_t)(frag->l4 - ip) + frag->l4_caplen;
	uint32_t avail = ct_min_u32(cap, frag->l3_len);
	uint32_t off = 40, prev_nh = 6, offset, end, plen;
	uint8_t nh = ip[6];
	struct fkey key;
	struct fq *fq;
	enum ins_result r;

	if (frag->l3_hdr_len < 48) {
		d->st.bad++;
		return 0;
	}
	plen = ct_rd16(ip + 4);
	if (plen == 0)                  /* jumbo payload inhibits defrag */
		return pass6(frag, out);

	/* The header in front of the fragment header (find_prev_fhdr); the
	 * parser walked this chain already, so it is in the capture. */
	while (nh != CT_IPPROTO_FRAGMENT && off < fhoff) {
		uint32_t hlen = ct_ip6_ext_len(nh, ip + off);

		prev_nh = off;
		nh = ip[off];
		off += hlen;
	}
	if (off != fhoff || nh != CT_IPPROTO_FRAGMENT) {
		d->st.bad++;
		return 0;
	}

	if (frag->frag_offset == 0) {
		uint8_t unh = CT_IPPROTO_FRAGMENT;
		uint16_t fo;
		int32_t up = ct_ip6_skip_exthdr(ip, avail, fhoff, &unh, &fo);

		if (up >= 0 && !(fo & ~7u) &&
		    (uint64_t)up + ct_ip6_min_upper(unh) > frag->l3_len)
			return pass6(frag, out);
	}

	memset(&key, 0, sizeof(key));
	key.src = frag->tuple.src;
	key.dst = frag->tuple.dst;
	key.id = frag->frag_id;
	key.ifindex = frag->ifindex;
	key.zone = frag->tuple.zone;
	key.l3 = CT_L3_IPV6;

	if (d->mem > d->high_thresh) {
		d->st.evicted++;
		return 0;
	}
	offset = frag->frag_offset;
	end = offset + frag->l4_len;
	if (frag->frag_more && (end & 7) && end <= 65535) {
		/* Not a multiple of 8 and not the last: the kernel finds or
		 * makes the queue, kills it and lets the fragment through.
		 * A queue made only to be killed leaves nothing behind, so
		 * only an existing one is looked for (fragment-spraying
		 * captures are mostly such fragments; no allocation then),
		 * and only when some IPv6 queue exists (every live queue is
		 * on its family's expiry FIFO). */
		fq = d->fifo_head[1] ? fq_lookup(d, &d->buckets[key_hash(d, &key) & d->mask],
						 &key, now)
				     : NULL;    /* no IPv6 queue at all */
		d->st.bad++;
		if (fq)
			fq_kill(d, fq);
		return pass6(frag, out);
	}
	fq = fq_find(d, &key, now);
	if (!fq)
		return -ENOMEM;

	if (end > 65535) {
		d->st.oversize++;
		return 0;
	}
	if (!frag->frag_more) {
		if (end < fq->len ||
		    ((fq->flags & FQ_LAST_IN) && end != fq->len)) {
			d->st.bad++;
			return 0;
		}
		fq->flags |= FQ_LAST_IN;
		fq->len = end;
	} else {
		if (end & 7) {
			d->st.bad++;
			fq_kill(d, fq);
			return pass6(frag, out);
		}
		if (end > fq->len) {
			if (fq->flags & FQ_LAST_IN) {
				d->st.bad++;
				return 0;
			}
			fq->len = end;
		}
	}
	if (end == offset) {
		d->st.bad++;
		return 0;
	}

	r = fq_insert(d, fq, offset, end, frag->l4, frag->l4_caplen);
	if (r == INS_NOMEM)
		return -ENOMEM;
	if (r == INS_DUP)
		return 0;
	if (r == INS_OVERLAP) {
		d->st.overlaps++;
		fq_kill(d, fq);
		return 0;
	}
	fq->ecn |= (uint8_t)(1u << ((ip[1] >> 4) & 3));
	if (plen > fq->max_size)
		fq->max_size = plen;
	if (offset == 0) {
		if (!fq_save_head(d, fq, frag, fhoff))
			return -ENOMEM;
		fq->nhoff = prev_nh;
		fq->nexthdr = ip[fhoff];
		fq->flags |= FQ_FIRST_IN;
	}
	if (fq_complete(fq))
		return reasm6(d, fq, frag, out);
	return 0;
}

int ct_defrag_feed(struct ct_defrag *d, const struct ct_packet *frag,
		   ct_time_ns now, struct ct_packet *out)
{
	d->st.fragments++;
	purge(d, now);
	if (frag->kind != CT_PKT_FRAGMENT || !frag->is_fragment ||
	    frag->l3 == NULL || frag->l4 == NULL) {
		d->st.bad++;
		return 0;
	}
	if (frag->tuple.l3 == CT_L3_IPV4)
		return feed4(d, frag, now, out);
	if (frag->tuple.l3 == CT_L3_IPV6)
		return feed6(d, frag, now, out);
	d->st.bad++;
	return 0;
}
