/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_tcp_fast.c - the TCP tracker's fast path answers exactly as its
 * general path.
 *
 * ct_proto_tcp.packet() first tries a shortcut for in-window ACKs of
 * ESTABLISHED connections (tcp_fast_ack in proto_tcp.c) and falls back to
 * the general code, which proto_tcp.h exposes on its own as
 * ct_tcp_packet_general().  The general code is the one checked against
 * the kernel (test_tcp.c, the kernel-oracle harness); the shortcut has no
 * behaviour of its own to specify, only the obligation to be
 * indistinguishable.  So no expectation here is a number: every test runs
 * two copies of one connection in lockstep, one through each entry point,
 * with a small simulation of the core around each (as nf_conntrack_in
 * orders it: the tracker sees the status bits from before the packet,
 * SEEN_REPLY and ASSURED are set after it, an ACCEPT refreshes the expiry,
 * an INVALID may only lower it, an expired entry is gone, REPEAT destroys
 * and recreates), and after every packet compares everything the tracker
 * answered (verdict, reason, events, ASSURED request, timeout) and
 * everything it keeps (the whole entry: state and private area), plus the
 * simulated status and expiry.
 *
 * The segments come from two sources: a seeded random generator that
 * mixes ordinary data and ACKs with retransmissions, stale and future
 * sequence numbers, bad acks, SACK blocks, zero windows, window scaling,
 * mid-stream pickups and the odd SYN/FIN/RST, under varied settings
 * (be_liberal, max_retrans, timeouts that make the ESTABLISHED timeout
 * shorter than the unacknowledged or retransmission ones); and every TCP
 * packet of every capture in the shared corpus.  Each source also counts
 * the packets the shortcut is meant for and those that only look like
 * them, and requires enough of both, so that a change that made the
 * shortcut never fire (or always fall through) cannot pass unnoticed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctrack/settings.h"
#include "table/conn_key.h"
#include "proto/proto.h"
#include "proto/tcp.h"
#include "../parse/pcap_util.h"

#define CONN_BYTES 128

/* One copy of a connection and what the simulated core keeps for it. */
struct copy {
	struct ct_conn *c;
	uint32_t status;
	bool exists;
	struct ct_proto_out out;
};

/* The two copies: [0] through ct_proto_tcp.packet, [1] through
 * ct_tcp_packet_general. */
struct twin {
	struct copy k[2];
	struct ct_tuple orig;       /* the creating packet's tuple */
	const struct ct_settings *set;
	/* coverage */
	unsigned long packets;
	unsigned long fast;         /* ES, ACK only, SEEN_REPLY, window data
				     * both ways, ACCEPTed */
	unsigned long near;         /* the same but not ACCEPTed */
};

static void twin_init(struct twin *w, const struct ct_settings *set)
{
	memset(w, 0, sizeof(*w));
	w->set = set;
	for (int i = 0; i < 2; i++) {
		w->k[i].c = aligned_alloc(64, CONN_BYTES);
		assert_non_null(w->k[i].c);
		memset(w->k[i].c, 0, CONN_BYTES);
	}
}

static void twin_free(struct twin *w)
{
	free(w->k[0].c);
	free(w->k[1].c);
}

/* The core around one tracker call; returns true when the packet must be
 * processed again as the first of a new entry (REPEAT). */
static bool core_step(struct copy *k, const struct ct_settings *set,
		      const struct ct_packet *pkt, enum ct_dir dir,
		      ct_time_ns now, bool general)
{
	struct ct_proto_ctx ctx;
	bool is_new;

	if (k->exists && k->c->expires <= now)
		k->exists = false;     /* a lookup reaps an expired entry */
	is_new = !k->exists;
	if (is_new) {
		memset(k->c, 0, CONN_BYTES);
		ct_conn_set_key(k->c, &pkt->tuple);
		k->status = 0;
		dir = CT_DIR_ORIGINAL;
	}
	ctx = (struct ct_proto_ctx){
		.pkt = pkt, .set = set, .now = now, .dir = dir,
		.is_new = is_new, .status = k->status,
	};
	memset(&k->out, 0, sizeof(k->out));
	if (general)
		ct_tcp_packet_general(k->c, &ctx, &k->out);
	else
		ct_proto_tcp.packet(k->c, &ctx, &k->out);

	switch (k->out.verdict) {
	case CT_PV_ACCEPT:
		k->exists = true;
		k->c->expires = now + k->out.timeout_ns;
		break;
	case CT_PV_IGNORE:
		k->exists = true;
		break;
	case CT_PV_INVALID:
		if (k->exists && k->out.timeout_ns &&
		    now + k->out.timeout_ns < k->c->expires)
			k->c->expires = now + k->out.timeout_ns;
		return false;
	case CT_PV_DESTROY:
		k->exists = false;
		return false;
	case CT_PV_REPEAT:
		k->exists = false;
		return true;
	default:
		fail_msg("unknown verdict %u", k->out.verdict);
	}
	if (k->out.set_assured)
		k->status |= CT_ST_ASSURED;
	if (dir == CT_DIR_REPLY)
		k->status |= CT_ST_SEEN_REPLY;
	return false;
}

/* Would the shortcut's preconditions (bar the window bounds) hold? */
static bool looks_fast(const struct copy *k, const struct ct_packet *pkt)
{
	const struct ct_tcp_priv *p = ct_conn_priv_const(k->c);

	return k->exists && k->c->l4state == CT_TCP_ESTABLISHED &&
	       (k->status & CT_ST_SEEN_REPLY) &&
	       (pkt->u.tcp.flags & (CT_TCP_SYN | CT_TCP_FIN | CT_TCP_RST |
				    CT_TCP_ACK)) == CT_TCP_ACK &&
	       p->seen[0].td_maxwin && p->seen[1].td_maxwin;
}

/* One packet through both copies, then everything compared. */
static void twin_step(struct twin *w, const struct ct_packet *pkt,
		      enum ct_dir dir, ct_time_ns now, const char *where)
{
	bool candidate = looks_fast(&w->k[0], pkt);

	for (int i = 0; i < 2; i++) {
		int rounds = 0;

		while (core_step(&w->k[i], w->set, pkt, dir, now, i == 1))
			assert_true(++rounds < 2);
	}
	w->packets++;
	if (candidate && w->k[0].out.verdict == CT_PV_ACCEPT)
		w->fast++;
	else if (candidate)
		w->near++;

	const struct copy *a = &w->k[0], *b = &w->k[1];

	if (a->out.verdict != b->out.verdict || a->out.reason != b->out.reason ||
	    a->out.events != b->out.events ||
	    a->out.set_assured != b->out.set_assured ||
	    a->out.timeout_ns != b->out.timeout_ns ||
	    a->exists != b->exists || a->status != b->status ||
	    memcmp(a->c, b->c, CONN_BYTES) != 0) {
		const struct ct_tcp_priv *pa = ct_conn_priv_const(a->c);
		const struct ct_tcp_priv *pb = ct_conn_priv_const(b->c);

		print_error("%s: packet %lu (dir %d flags 0x%02x seq %u ack %u "
			    "win %u len %u)\n"
			    "  fast:    verdict %u reason %u events 0x%x assured %d "
			    "timeout %llu state %u retrans %u flags %02x/%02x\n"
			    "  general: verdict %u reason %u events 0x%x assured %d "
			    "timeout %llu state %u retrans %u flags %02x/%02x\n",
			    where, w->packets, dir, pkt->u.tcp.flags,
			    pkt->u.tcp.seq, pkt->u.tcp.ack, pkt->u.tcp.window,
			    pkt->payload_len,
			    a->out.verdict, a->out.reason, a->out.events,
			    a->out.set_assured,
			    (unsigned long long)a->out.timeout_ns, a->c->l4state,
			    pa->retrans, pa->flags[0], pa->flags[1],
			    b->out.verdict, b->out.reason, b->out.events,
			    b->out.set_assured,
			    (unsigned long long)b->out.timeout_ns, b->c->l4state,
			    pb->retrans, pb->flags[0], pb->flags[1]);
		fail_msg("fast and general TCP paths disagree");
	}
}

/* ---- random segments ------------------------------------------------ */

static uint64_t rng_state;

static uint32_t rnd(void)
{
	/* xorshift64*: reproducible from the seed, good enough for mixing */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32);
}

/* True with probability @pct per cent. */
static bool chance(unsigned pct)
{
	return rnd() % 100 < pct;
}

static void seg_tuple(struct ct_tuple *t, enum ct_dir dir)
{
	memset(t, 0, sizeof(*t));
	t->l3 = CT_L3_IPV4;
	t->l4 = 6;
	t->src.ip4 = dir == CT_DIR_ORIGINAL ? 0x0100000a : 0x0200000a;
	t->dst.ip4 = dir == CT_DIR_ORIGINAL ? 0x0200000a : 0x0100000a;
	t->sport = dir == CT_DIR_ORIGINAL ? 40000 : 443;
	t->dport = dir == CT_DIR_ORIGINAL ? 443 : 40000;
}

static void seg_build(struct ct_packet *pkt, enum ct_dir dir, uint8_t flags,
		      uint32_t seq, uint32_t ack, uint16_t win, uint32_t len,
		      uint8_t opts, uint8_t wscale, uint32_t sack_right)
{
	struct ct_tcp_info *th = &pkt->u.tcp;

	memset(pkt, 0, sizeof(*pkt));
	seg_tuple(&pkt->tuple, dir);
	pkt->kind = CT_PKT_TRACKABLE;
	th->flags = flags;
	th->seq = seq;
	th->ack = ack;
	th->window = win;
	th->opts = opts;
	th->wscale = wscale;
	th->sack_right = (opts & CT_TCPOPT_SACK) ? sack_right : ack;
	th->hdr_len = opts ? 32 + ((opts & CT_TCPOPT_SACK) ? 12 : 0) : 20;
	pkt->payload_len = len;
	pkt->l4_len = th->hdr_len + len;
	pkt->l4_caplen = pkt->l4_len;
	pkt->l3_hdr_len = 20;
	pkt->l3_len = 20 + pkt->l4_len;
}

/* What each end of the simulated conversation knows. */
struct end {
	uint32_t nxt;       /* next sequence number it sends */
	uint16_t win;       /* raw window it advertises */
	uint8_t wscale;
	bool sack;
	struct ct_packet last;  /* its last segment, for retransmissions */
	bool has_last;
};

static uint16_t pick_win(void)
{
	switch (rnd() % 8) {
	case 0:
		return 0;
	case 1:
		return (uint16_t)(1 + rnd() % 64);
	case 2:
		return (uint16_t)rnd();
	default:
		return 65535;
	}
}

static uint32_t pick_len(void)
{
	switch (rnd() % 8) {
	case 0:
	case 1:
	case 2:
		return 0;
	case 3:
		return 1;
	case 4:
		return rnd() % 1461;
	case 5:
		return rnd() % 200000;      /* GRO-sized, may overshoot */
	default:
		return 1460;
	}
}

/* A random variation of the settings a namespace may have. */
static void pick_settings(struct ct_settings *set)
{
	static const uint32_t est[] = { 432000, 100, 250, 400 };
	static const uint32_t unack[] = { 300, 50, 500 };
	static const uint32_t retr[] = { 300, 120, 600 };

	ct_settings_default(set);
	if (chance(15))
		set->tcp_be_liberal = 1;
	if (chance(40))
		set->tcp_max_retrans = (uint8_t)(1 + rnd() % 4);
	if (chance(40)) {
		set->tcp_timeouts[CT_TCP_TO_ESTABLISHED] = est[rnd() % 4];
		set->tcp_timeouts[CT_TCP_TO_UNACK] = unack[rnd() % 3];
		set->tcp_timeouts[CT_TCP_TO_RETRANS] = retr[rnd() % 3];
	}
}

/* The next segment of the conversation from end @d (to end !d). */
static void next_segment(struct end *e, unsigned d, struct ct_packet *pkt)
{
	struct end *s = &e[d], *r = &e[!d];
	uint8_t flags = CT_TCP_ACK | (chance(30) ? CT_TCP_PSH : 0);
	uint32_t seq = s->nxt, ack = r->nxt, len = pick_len();
	uint8_t opts = chance(30) ? CT_TCPOPT_TIMESTAMP : 0;
	uint32_t sack_right = 0;
	unsigned kind = rnd() % 100;

	if (chance(10))
		s->win = pick_win();
	if (kind < 10 && s->has_last) {
		*pkt = s->last;         /* exact retransmission */
		return;
	}
	if (kind < 20)
		seq -= rnd() % 300000;  /* old data, maybe below the window */
	else if (kind < 26)
		seq += chance(50) ? rnd() % 2000000 : rnd();
	else if (kind < 32)
		ack -= chance(70) ? rnd() % 200000 : rnd();  /* late, stale ack */
	else if (kind < 36)
		ack += 1 + rnd() % (chance(50) ? 3000 : 0x7fffffffu);
	else if (kind < 38)
		flags = 0;              /* no ACK at all */
	else if (kind < 39)
		flags |= CT_TCP_FIN;
	else if (kind < 40)
		flags = chance(50) ? CT_TCP_RST : (CT_TCP_RST | CT_TCP_ACK);
	else if (kind < 41)
		flags = chance(50) ? CT_TCP_SYN : (CT_TCP_SYN | CT_TCP_ACK);
	if (chance(15)) {
		opts |= CT_TCPOPT_SACK;
		sack_right = ack + rnd() % (chance(70) ? 5000 : 0xffffffffu);
	}
	if (seq == s->nxt)
		s->nxt += len;          /* new data: the sender moves on */
	seg_build(pkt, d ? CT_DIR_REPLY : CT_DIR_ORIGINAL, flags, seq, ack,
		  s->win, len, opts, s->wscale, sack_right);
	s->last = *pkt;
	s->has_last = true;
}

/* One conversation of @n segments after its opening, under @set. */
static void run_episode(struct twin *w, unsigned n, ct_time_ns *now)
{
	struct end e[2];
	struct ct_packet pkt;
	uint8_t synopt[2];

	memset(e, 0, sizeof(e));
	for (int d = 0; d < 2; d++) {
		e[d].nxt = rnd();
		e[d].win = pick_win() ? pick_win() : 65535;
		e[d].wscale = chance(60) ? (uint8_t)(rnd() % 16) : 0;
		e[d].sack = chance(70);
		synopt[d] = (uint8_t)(CT_TCPOPT_MSS |
				      (e[d].wscale || chance(20) ? CT_TCPOPT_WSCALE : 0) |
				      (e[d].sack ? CT_TCPOPT_SACK_PERM : 0));
	}
	if (chance(75)) {
		/* three-way handshake with options */
		seg_build(&pkt, CT_DIR_ORIGINAL, CT_TCP_SYN, e[0].nxt, 0,
			  e[0].win, 0, synopt[0], e[0].wscale, 0);
		twin_step(w, &pkt, CT_DIR_ORIGINAL, *now, "random");
		e[0].nxt++;
		seg_build(&pkt, CT_DIR_REPLY, CT_TCP_SYN | CT_TCP_ACK, e[1].nxt,
			  e[0].nxt, e[1].win, 0, synopt[1], e[1].wscale, 0);
		twin_step(w, &pkt, CT_DIR_REPLY, *now, "random");
		e[1].nxt++;
		seg_build(&pkt, CT_DIR_ORIGINAL, CT_TCP_ACK, e[0].nxt, e[1].nxt,
			  e[0].win, 0, 0, 0, 0);
		twin_step(w, &pkt, CT_DIR_ORIGINAL, *now, "random");
	}
	/* else: a mid-stream pickup, made by the first segment below */
	for (unsigned i = 0; i < n; i++) {
		unsigned d = chance(50);

		if (i == 0)
			d = 0;
		next_segment(e, d, &pkt);
		*now += rnd() % 2000000000u;
		if (chance(1))
			*now += (uint64_t)(rnd() % 600) * 1000000000ull;
		twin_step(w, &pkt, d ? CT_DIR_REPLY : CT_DIR_ORIGINAL, *now,
			  "random");
	}
}

static void random_episodes(uint64_t seed, unsigned episodes)
{
	unsigned long packets = 0, fast = 0, near = 0;
	ct_time_ns now = 1000ull * 1000000000ull;

	rng_state = seed;
	for (unsigned ep = 0; ep < episodes; ep++) {
		struct ct_settings set;
		struct twin w;

		pick_settings(&set);
		twin_init(&w, &set);
		run_episode(&w, 100 + rnd() % 300, &now);
		packets += w.packets;
		fast += w.fast;
		near += w.near;
		twin_free(&w);
	}
	print_message("# seed %llx: %lu packets, %lu for the fast path, "
		      "%lu near misses\n", (unsigned long long)seed, packets,
		      fast, near);
	/* enough of each for the comparison to mean something: the
	 * generator is built so that most segments are ordinary ones */
	assert_true(fast >= packets / 5);
	assert_true(near >= packets / 50);
}

/* Random conversations: the shortcut and the general code agree on every
 * segment, for the shortcut's packets and for those that merely look
 * like them (stale, future, overshooting, badly acked, retransmitted). */
static void test_fast_path_matches_general_path_on_random_conversations(void **st)
{
	(void)st;
	random_episodes(0x9e3779b97f4a7c15ull, 400);
	random_episodes(0x0123456789abcdefull, 400);
	random_episodes(42, 400);
}

/* Retransmissions of one in-window ACK: the counter and the max_retrans
 * timeout move the same way on both paths, up to and past the limit and
 * past the byte counter's wrap at 256. */
static void test_fast_path_matches_general_path_on_repeated_acks(void **st)
{
	struct ct_settings set;
	struct twin w;
	struct ct_packet pkt;
	ct_time_ns now = 5000ull * 1000000000ull;

	(void)st;
	ct_settings_default(&set);
	set.tcp_max_retrans = 3;
	twin_init(&w, &set);
	seg_build(&pkt, CT_DIR_ORIGINAL, CT_TCP_SYN, 100, 0, 65535, 0, 0, 0, 0);
	twin_step(&w, &pkt, CT_DIR_ORIGINAL, now, "retrans");
	seg_build(&pkt, CT_DIR_REPLY, CT_TCP_SYN | CT_TCP_ACK, 900, 101, 65535,
		  0, 0, 0, 0);
	twin_step(&w, &pkt, CT_DIR_REPLY, now, "retrans");
	seg_build(&pkt, CT_DIR_ORIGINAL, CT_TCP_ACK, 101, 901, 65535, 0, 0, 0, 0);
	twin_step(&w, &pkt, CT_DIR_ORIGINAL, now, "retrans");
	seg_build(&pkt, CT_DIR_ORIGINAL, CT_TCP_ACK | CT_TCP_PSH, 101, 901, 65535,
		  500, 0, 0, 0);
	for (int i = 0; i < 300; i++) {
		now += 1000000;
		twin_step(&w, &pkt, CT_DIR_ORIGINAL, now, "retrans");
	}
	/* the last of them ran the shortcut's retransmission branch */
	assert_int_equal(w.k[0].c->l4state, CT_TCP_ESTABLISHED);
	assert_true(w.fast >= 290);
	twin_free(&w);
}

/* A value near @x: equal, a little off either way, or anywhere. */
static uint32_t near_value(uint32_t x)
{
	switch (rnd() % 6) {
	case 0:
		return x;
	case 1:
		return x + rnd() % 70000;
	case 2:
		return x - rnd() % 70000;
	case 3:
		return x + 1;
	case 4:
		return x - 1;
	default:
		return rnd();
	}
}

/*
 * Arbitrary entries, not only those a conversation reaches: the two
 * paths must agree for every state the private area can hold, so that
 * no precondition of the shortcut rests on an argument about which
 * states are reachable.  Each round builds one random entry (mostly
 * ESTABLISHED, with zero windows, missing MAXACK, BE_LIBERAL, odd
 * scales, retransmission memory that matches the segment or not, any
 * status bits) and one segment aimed near its window edges.
 */
static void test_fast_path_matches_general_path_from_arbitrary_states(void **st)
{
	struct ct_settings set;
	unsigned long fast = 0, near = 0;
	ct_time_ns now = 7000ull * 1000000000ull;

	(void)st;
	rng_state = 0x5eed5eed5eedull;
	for (unsigned round = 0; round < 200000; round++) {
		struct twin w;
		struct ct_tcp_priv pr;
		struct ct_packet pkt;
		unsigned d = rnd() & 1;
		uint8_t flags;
		uint32_t seq, ack;

		pick_settings(&set);
		twin_init(&w, &set);
		memset(&pr, 0, sizeof(pr));
		for (int i = 0; i < 2; i++) {
			struct ct_tcp_dir *t = &pr.seen[i];

			t->td_end = rnd();
			t->td_maxwin = chance(10) ? 0 : chance(50) ?
				rnd() % 70000 : rnd() % (1u << 24);
			t->td_maxend = t->td_end + (chance(80) ?
				t->td_maxwin : rnd());
			t->td_maxack = near_value(t->td_end);
			pr.flags[i] = (uint8_t)(rnd() & 0x3f);
			pr.scale[i] = chance(50) ? 0 : (uint8_t)(rnd() % 15);
		}
		flags = chance(80) ? CT_TCP_ACK : (uint8_t)(rnd() & 0x3f);
		if (chance(30))
			flags |= CT_TCP_PSH;
		seq = near_value(pr.seen[d].td_end);
		ack = near_value(pr.seen[!d].td_end);
		seg_build(&pkt, d ? CT_DIR_REPLY : CT_DIR_ORIGINAL, flags, seq,
			  ack, chance(10) ? 0 : (uint16_t)rnd(), pick_len() % 100000,
			  chance(20) ? CT_TCPOPT_SACK : 0, 0,
			  near_value(ack));
		if (chance(30)) {
			/* the memory of this very segment: a retransmission */
			pr.last_dir = (uint8_t)d;
			pr.last_seq = seq;
			pr.last_ack = ack;
			pr.last_end = seq + pkt.payload_len;
			pr.last_win = pkt.u.tcp.window;
		} else {
			pr.last_dir = (uint8_t)(rnd() & 1);
			pr.last_seq = rnd();
			pr.last_ack = rnd();
			pr.last_end = rnd();
			pr.last_win = (uint16_t)rnd();
		}
		pr.retrans = (uint8_t)(chance(50) ? rnd() % 6 : rnd());
		pr.last_index = (uint8_t)(rnd() % CT_TCP_K_N);
		pr.last_flags = (uint8_t)rnd();
		pr.last_wscale = (uint8_t)(rnd() % 15);
		for (int i = 0; i < 2; i++) {
			struct copy *k = &w.k[i];

			k->exists = true;
			if (d) {
				struct ct_tuple o = pkt.tuple;

				seg_tuple(&o, CT_DIR_ORIGINAL);
				ct_conn_set_key(k->c, &o);
			} else {
				ct_conn_set_key(k->c, &pkt.tuple);
			}
			k->c->proto = ct_proto_index(&ct_proto_tcp);
			k->c->l4state = chance(85) ? CT_TCP_ESTABLISHED :
				(uint8_t)(rnd() % CT_TCP_N_STATES);
			k->c->expires = now + (uint64_t)(1 + rnd() % 500000) *
					      1000000000ull;
			k->status = (uint32_t)(rnd() & 3) == 0 ? 0 :
				(CT_ST_SEEN_REPLY |
				 (chance(50) ? CT_ST_ASSURED : 0));
			if (chance(5))
				k->status = CT_ST_ASSURED;
			if (i == 1) {
				k->c->l4state = w.k[0].c->l4state;
				k->c->expires = w.k[0].c->expires;
				k->status = w.k[0].status;
			}
			memcpy(ct_conn_priv(k->c), &pr, sizeof(pr));
		}
		twin_step(&w, &pkt, d ? CT_DIR_REPLY : CT_DIR_ORIGINAL, now,
			  "arbitrary");
		fast += w.fast;
		near += w.near;
		twin_free(&w);
	}
	print_message("# arbitrary states: %lu for the fast path, %lu near "
		      "misses\n", fast, near);
	assert_true(fast >= 10000);
	assert_true(near >= 10000);
}

/* ---- captures ------------------------------------------------------- */

#define FLOW_SLOTS 65536

struct flow {
	bool used;
	struct twin w;
};

/* The canonical (direction-free) form of a tuple, for the flow map. */
static void canon(const struct ct_tuple *t, struct ct_tuple *k)
{
	struct ct_tuple r = *t;

	r.src = t->dst;
	r.dst = t->src;
	r.sport = t->dport;
	r.dport = t->sport;
	*k = memcmp(t, &r, sizeof(r)) < 0 ? *t : r;
}

static uint32_t tuple_hash(const struct ct_tuple *k)
{
	const uint8_t *b = (const uint8_t *)k;
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ b[i]) * 16777619u;
	return h;
}

static struct flow *flow_of(struct flow *map, const struct ct_tuple *t,
			    const struct ct_settings *set, bool *full)
{
	struct ct_tuple k, kk;

	canon(t, &k);
	for (uint32_t i = tuple_hash(&k), n = 0; n < FLOW_SLOTS; i++, n++) {
		struct flow *f = &map[i % FLOW_SLOTS];

		if (!f->used) {
			f->used = true;
			twin_init(&f->w, set);
			f->w.orig = *t;
			return f;
		}
		canon(&f->w.orig, &kk);
		if (!memcmp(&k, &kk, sizeof(k)))
			return f;
	}
	*full = true;
	return NULL;
}

struct fast_totals {
	unsigned long packets, fast, near;
};

/* Every TCP packet of capture @path, each connection in twins of its own. */
static void fast_path_on_file(const char *path, const char *nm,
			      const struct ct_settings *set, struct flow *map,
			      struct fast_totals *t)
{
	struct tcap tc;
	bool full = false;

	if (!tcap_load(&tc, path))
		return;
	for (size_t i = 0; i < tc.n && !full; i++) {
		struct ct_packet pkt;
		struct flow *f;
		enum ct_dir d;
		ct_time_ns now;

		if (tcap_parse(&tc, i, &pkt) != CT_PKT_TRACKABLE ||
		    pkt.tuple.l4 != 6)
			continue;
		f = flow_of(map, &pkt.tuple, set, &full);
		if (!f)
			break;
		if (!f->w.k[0].exists)
			f->w.orig = pkt.tuple;
		d = ct_tuple_equal(&f->w.orig, &pkt.tuple) ?
			CT_DIR_ORIGINAL : CT_DIR_REPLY;
		/* a capture's clock may step back; the core would
		 * see a positive time, so keep one */
		now = tc.f[i].ts_ns + 1000000000ull;
		twin_step(&f->w, &pkt, d, now, nm);
	}
	for (size_t j = 0; j < FLOW_SLOTS; j++) {
		if (!map[j].used)
			continue;
		t->packets += map[j].w.packets;
		t->fast += map[j].w.fast;
		t->near += map[j].w.near;
		twin_free(&map[j].w);
		map[j].used = false;
	}
	tcap_free(&tc);
}

static bool is_capture_name(const char *nm)
{
	size_t l = strlen(nm);

	return (l > 5 && !strcmp(nm + l - 5, ".pcap")) ||
	       (l > 4 && !strcmp(nm + l - 4, ".cap")) ||
	       (l > 7 && !strcmp(nm + l - 7, ".pcapng")) ||
	       (l > 8 && !strcmp(nm + l - 8, ".pcap.gz"));
}

/* Every TCP packet of every capture in the corpus: the shortcut and the
 * general code agree on real traffic (real option mixes, window scales,
 * SACK, retransmissions, loss and reordering). */
static void test_fast_path_matches_general_path_on_captures(void **st)
{
	struct ct_settings set;
	struct fast_totals t = { 0 };
	DIR *dir = opendir(PCAPS_DIR);
	struct dirent *de;
	struct flow *map = calloc(FLOW_SLOTS, sizeof(*map));

	(void)st;
	assert_non_null(dir);
	assert_non_null(map);
	ct_settings_default(&set);
	while ((de = readdir(dir))) {
		if (is_capture_name(de->d_name))
			fast_path_on_file(de->d_name, de->d_name, &set, map, &t);
	}
	closedir(dir);
	free(map);
	print_message("# captures: %lu TCP packets, %lu for the fast path, "
		      "%lu near misses\n", t.packets, t.fast, t.near);
	/* the corpus holds long TCP conversations (see SOURCES.md) */
	assert_true(t.packets >= 10000);
	assert_true(t.fast >= t.packets / 10);
	assert_true(t.near >= 10);
}

/*
 * The same over the project's own captures: the kernel's recordings
 * (tests/captures/kernel: HTTP over IPv4 and IPv6, a 1 MiB download per
 * family through a bridge that loses and reorders segments, resets, half
 * and simultaneous closes, timeouts) and the crafted TCP connections.
 */
static void test_fast_path_matches_general_path_on_own_captures(void **st)
{
	struct ct_settings set;
	struct fast_totals t = { 0 };
	DIR *dir;
	struct dirent *de;
	struct flow *map = calloc(FLOW_SLOTS, sizeof(*map));
	char path[4096];

	(void)st;
	assert_non_null(map);
	ct_settings_default(&set);
	dir = opendir(CAPTURES_DIR "/kernel");
	assert_non_null(dir);
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/kernel/%s/capture.pcap",
			 CAPTURES_DIR, de->d_name);
		fast_path_on_file(path, de->d_name, &set, map, &t);
	}
	closedir(dir);
	dir = opendir(CAPTURES_DIR "/crafted");
	assert_non_null(dir);
	while ((de = readdir(dir))) {
		if (!is_capture_name(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/crafted/%s", CAPTURES_DIR,
			 de->d_name);
		fast_path_on_file(path, de->d_name, &set, map, &t);
	}
	closedir(dir);
	free(map);
	print_message("# own captures: %lu TCP packets, %lu for the fast path, "
		      "%lu near misses\n", t.packets, t.fast, t.near);
	/* floors that say the comparison had something to compare: the
	 * bulk download alone is some 1,800 segments */
	assert_true(t.packets >= 3000);
	assert_true(t.fast >= t.packets / 10);
	assert_true(t.near >= 10);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest shared[] = {
		cmocka_unit_test(test_fast_path_matches_general_path_on_captures),
	};
	const struct CMUnitTest own[] = {
		cmocka_unit_test(test_fast_path_matches_general_path_on_random_conversations),
		cmocka_unit_test(test_fast_path_matches_general_path_on_repeated_acks),
		cmocka_unit_test(test_fast_path_matches_general_path_from_arbitrary_states),
		cmocka_unit_test(test_fast_path_matches_general_path_on_own_captures),
	};

	return TCAP_MAIN(own, shared);
}
