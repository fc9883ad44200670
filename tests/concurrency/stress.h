/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stress.h - what the concurrency tests share: time bounds, a virtual
 * clock, a universe of flows and the packets that drive them, an event
 * counter, and the invariants checked once every thread has stopped.
 *
 * Time.  Each test runs for a wall-clock budget (CT_STRESS_MS, in
 * milliseconds; the meson suite sets a short one in CT_STRESS_SUITE_MS, a
 * person hunting a race sets minutes) and seeds its random choices from CT_STRESS_SEED (printed,
 * so a failure can be replayed with the same choices, if not the same
 * interleaving).  The library's time is a shared virtual clock that every
 * call advances, so timeouts of a few seconds pass within milliseconds of
 * real time and expiry, early drop and the collector all have work.
 *
 * Flows.  Flow f lives in zone f % (STRESS_ZONES + 1), has client
 * 10.(1 + zone).(f >> 8 & 255).(f & 255):(1024 + f % 60000) and server
 * 192.0.2.1; even flows are UDP to port 53, odd ones TCP to port 80.  So
 * every tuple an entry can carry maps back to exactly one flow, and a
 * dumped entry whose tuple does not (zeroed or reused memory: an entry
 * read after it was freed) is caught by stress_ci_plausible().
 *
 * Invariants after quiescing (stress_check_quiesced):
 *  - ct_table_count() = entries a dump reaches = occupied row slots
 *    (the last read straight from the rows, so an entry left in a row but
 *    marked dying, which a dump skips, is caught too);
 *  - at most one entry per flow;
 *  - per zone: the namespace's count = its dumped entries = NEW - DESTROY
 *    events of the zone; a zone without a namespace has no entry;
 *  - the counters balance: insert = count + expired + deleted + early_drop;
 *  - a collector pass at time now leaves no entry with expires <= now,
 *    and one far in the future leaves the table empty, with every NEW
 *    matched by a DESTROY.
 */
#ifndef CT_TEST_STRESS_H
#define CT_TEST_STRESS_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctrack/ctrack.h"
#include "support/audit.h"
#include "support/tuple.h"
#include "base/state.h"
#include "table/conn_key.h"
#include "table/htab.h"
#include "table/member.h"
#include "table/reclaim.h"
#include "table/resize.h"
#include "table/wheel.h"
#include "tsan_rcu.h"

#define STRESS_SEC 1000000000ull
#define STRESS_ZONES 12                 /* namespaces 1..12, plus zone 0 */
#define STRESS_FLOWS (1u << 14)
#define STRESS_SERVER 0xc0000201u       /* 192.0.2.1 */

/* ---- time ---- */

static inline uint64_t stress_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The wall-clock budget of one test case, in milliseconds: CT_STRESS_MS
 * if the person running the tests set it, else the suite's short one
 * (CT_STRESS_SUITE_MS, from meson), else @dflt (a run by hand). */
static inline unsigned stress_budget_ms(unsigned dflt)
{
	const char *names[2] = { "CT_STRESS_MS", "CT_STRESS_SUITE_MS" };

	for (int i = 0; i < 2; i++) {
		const char *e = getenv(names[i]);
		long v = e ? strtol(e, NULL, 10) : 0;

		if (v > 0)
			return (unsigned)v;
	}
	return dflt;
}

static inline uint64_t stress_seed(void)
{
	const char *e = getenv("CT_STRESS_SEED");
	uint64_t s = e ? strtoull(e, NULL, 0) : 0;

	if (!s) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		s = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ 0x9e3779b97f4a7c15ull;
	}
	return s;
}

/* The virtual clock: starts at 1000 s, advanced by every caller. */
static _Atomic uint64_t stress_vclock = 1000 * STRESS_SEC;

static inline ct_time_ns stress_now(void)
{
	return atomic_load_explicit(&stress_vclock, memory_order_relaxed);
}

static inline ct_time_ns stress_advance(uint64_t ns)
{
	return atomic_fetch_add_explicit(&stress_vclock, ns, memory_order_relaxed) + ns;
}

static inline ct_time_ns stress_clock_fn(void *arg)
{
	(void)arg;
	return stress_now();
}

/* Checks inside worker threads: cmocka's asserts may only fail on the
 * test's own thread (they longjmp), so a worker prints and aborts. */
#define STRESS_REQUIRE(cond)                                                  \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "%s:%d: %s does not hold\n",         \
				__FILE__, __LINE__, #cond);                   \
			abort();                                              \
		}                                                             \
	} while (0)

/* ---- randomness (xorshift64*, one state per thread) ---- */

static inline uint64_t stress_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static inline unsigned stress_below(uint64_t *s, unsigned n)
{
	return (unsigned)((stress_rand(s) >> 32) % n);
}

/* A published index to look up (test_resize.c, test_nat.c): half the
 * time one of the last 256 of @pub (> 0) published - those sit in the rows
 * a resize is migrating - else any of them. */
static inline uint32_t stress_recent(uint64_t *s, uint32_t pub)
{
	return stress_below(s, 2) ? pub - 1 - stress_below(s, pub < 256 ? pub : 256)
				  : stress_below(s, pub);
}

/* Counts what a dump passes by (ct_table_dump's callback; @arg a uint64_t). */
static inline int stress_count_cb(const struct ct_conn_info *ci, void *arg)
{
	(void)ci;
	(*(uint64_t *)arg)++;
	return 0;
}

/* A table of @flavor that starts at one row and has to grow under its
 * writers (test_resize.c, test_nat.c with @nat): no checksums, UDP
 * timeouts of 10 h so that nothing expires while it grows, and a
 * collector that takes each row's lock and yields after every row, so
 * that its slices meet every stage of a resize. */
static inline struct ct_table *stress_growing_table(enum ct_rcu_flavor flavor, bool nat)
{
	struct ct_table_config cfg;
	struct ct_gc_policy pol;
	struct ct_table *t;

	ct_table_config_default(&cfg);
	cfg.rcu = flavor;
	cfg.nat = nat;
	cfg.settings.buckets = 1;
	cfg.settings.checksum = 0;
	cfg.settings.udp_timeout = 36000;
	cfg.settings.udp_timeout_stream = 36000;
	assert_int_equal(ct_table_create(&cfg, &t), 0);
	ct_tsan_rcu_wrap(t);
	ct_gc_policy_default(&pol);
	pol.lock = CT_GC_LOCK_ALWAYS;
	pol.yield = CT_GC_YIELD_EVERY_ROW;
	ct_gc_set_policy(t, &pol);
	return t;
}

/* ---- flows and packets ---- */

static inline uint16_t stress_flow_zone(unsigned f)
{
	return (uint16_t)(f % (STRESS_ZONES + 1));
}

static inline uint8_t stress_flow_l4(unsigned f)
{
	return (f & 1) ? IPPROTO_TCP : IPPROTO_UDP;
}

static inline uint32_t stress_flow_client(unsigned f)
{
	return 0x0a000000u | (uint32_t)(1 + stress_flow_zone(f)) << 16 |
	       ((f >> 8) & 255u) << 8 | (f & 255u);
}

static inline uint16_t stress_flow_sport(unsigned f)
{
	return (uint16_t)(1024 + f % 60000);
}

static inline uint32_t stress_flow_isn(unsigned f)
{
	return 0x10000000u + f * 7919u;
}

/* The original-direction tuple of flow @f. */
static inline struct ct_tuple stress_flow_tuple(unsigned f)
{
	struct ct_tuple t;

	memset(&t, 0, sizeof(t));
	t.l3 = CT_L3_IPV4;
	t.l4 = stress_flow_l4(f);
	t.src.ip4 = htonl(stress_flow_client(f));
	t.dst.ip4 = htonl(STRESS_SERVER);
	t.sport = stress_flow_sport(f);
	t.dport = t.l4 == IPPROTO_TCP ? 80 : 53;
	t.zone = stress_flow_zone(f);
	return t;
}

/* The flow a tuple (either direction) belongs to, or -1 if none. */
static inline long stress_flow_of(const struct ct_tuple *t)
{
	struct ct_tuple o = *t;
	uint32_t client;
	unsigned f;

	if (t->l3 != CT_L3_IPV4 || (t->l4 != IPPROTO_TCP && t->l4 != IPPROTO_UDP))
		return -1;
	if (ntohl(t->src.ip4) == STRESS_SERVER)
		o = ts_reverse(t);
	client = ntohl(o.src.ip4);
	if ((client >> 24) != 10)
		return -1;
	/* zone, the low 16 bits of f, and f's parity pin f down within the
	 * universe: try the candidates */
	for (f = (client & 0xffffu); f < STRESS_FLOWS; f += 0x10000u) {
		struct ct_tuple c = stress_flow_tuple(f);
		if (ct_tuple_equal(&c, &o))
			return (long)f;
	}
	return -1;
}

enum stress_pkt {
	SP_UDP_ORIG,     /* creates or refreshes */
	SP_UDP_REPLY,    /* creates (reply tuple as original) or makes stream */
	SP_TCP_SYN,      /* creates SYN_SENT */
	SP_TCP_SYNACK,   /* SYN_RECV */
	SP_TCP_ACK,      /* ESTABLISHED, ASSURED */
	SP_TCP_REFUSE,   /* RST/ACK from the server: SYN_SENT entry destroyed */
	SP_TCP_RST,      /* RST from the client after the handshake: CLOSE */
	SP_ICMP_UNREACH, /* port unreachable from the server, quoting the
			  * flow's first packet: RELATED if the entry lives */
};

/* Fill @p with packet kind @k of flow @f (UDP kinds only for even f). */
static inline void stress_packet(struct ct_packet *p, unsigned f, enum stress_pkt k)
{
	struct ct_tuple t = stress_flow_tuple(f);
	uint32_t isn = stress_flow_isn(f), sisn = isn ^ 0x5a5a5a5au;
	struct ct_tcp_info *th = &p->u.tcp;

	memset(p, 0, sizeof(*p));
	p->kind = CT_PKT_TRACKABLE;
	p->tuple = t;
	if (k == SP_ICMP_UNREACH) {
		struct ct_icmp_info *ic = &p->u.icmp;

		memset(&p->tuple, 0, sizeof(p->tuple));
		p->tuple.l3 = CT_L3_IPV4;
		p->tuple.l4 = IPPROTO_ICMP;
		p->tuple.src = t.dst;
		p->tuple.dst = t.src;
		p->tuple.dport = 3 << 8 | 3;
		p->tuple.zone = t.zone;
		ic->type = 3;
		ic->code = 3;
		ic->is_error = true;
		ic->inner_ok = true;
		ic->inner = t;
		ic->inner.zone = 0;
		p->l3_len = 76;
		p->l4_len = 56;
		return;
	}
	if (t.l4 == IPPROTO_UDP) {
		if (k == SP_UDP_REPLY)
			p->tuple = ts_reverse(&t);
		p->l3_len = 48;
		p->l4_len = 28;
		p->payload_len = 20;
		return;
	}
	p->l3_len = 40;
	p->l4_len = 20;
	th->hdr_len = 20;
	th->window = 65535;
	switch (k) {
	case SP_TCP_SYNACK:
	case SP_TCP_REFUSE:
		p->tuple = ts_reverse(&t);
		break;
	default:
		break;
	}
	switch (k) {
	case SP_TCP_SYNACK:
		th->flags = CT_TCP_SYN | CT_TCP_ACK;
		th->seq = sisn;
		th->ack = isn + 1;
		break;
	case SP_TCP_ACK:
		th->flags = CT_TCP_ACK;
		th->seq = isn + 1;
		th->ack = sisn + 1;
		break;
	case SP_TCP_REFUSE:
		th->flags = CT_TCP_RST | CT_TCP_ACK;
		th->seq = 0;
		th->ack = isn + 1;
		th->window = 0;
		break;
	case SP_TCP_RST:
		th->flags = CT_TCP_RST | CT_TCP_ACK;
		th->seq = isn + 1;
		th->ack = sisn + 1;
		break;
	default:
		th->flags = CT_TCP_SYN;
		th->seq = isn;
		break;
	}
}

/* Settings that make every timeout a few virtual seconds. */
static inline void stress_short_timeouts(struct ct_settings *s)
{
	s->checksum = 0;
	s->udp_timeout = 1;
	s->udp_timeout_stream = 3;
	for (int i = 0; i < CT_TCP_TO_MAX; i++)
		s->tcp_timeouts[i] = 1 + (uint32_t)i % 4;
	s->tcp_timeouts[CT_TCP_TO_ESTABLISHED] = 5;
	s->generic_timeout = 2;
}

/* ---- what a dump or an event may show ---- */

/* Is @ci an entry this test could have made?  Catches copies of zeroed
 * or reused memory. */
static inline bool stress_ci_plausible(const struct ct_conn_info *ci)
{
	long f = stress_flow_of(&ci->orig);
	struct ct_tuple rev;

	if (f < 0)
		return false;
	rev = ts_reverse(&ci->orig);
	if (!ct_tuple_equal(&rev, &ci->reply))
		return false;
	if (ci->orig.zone != stress_flow_zone((unsigned)f))
		return false;
	return (ci->status & CT_ST_CONFIRMED) != 0;
}

/* Print an implausible entry (the first few), to explain a failure. */
static inline void stress_print_ci(const char *where, const struct ct_conn_info *ci)
{
	static _Atomic int printed;
	char a[128], b[128];

	if (atomic_fetch_add(&printed, 1) >= 5)
		return;
	ct_tuple_format(&ci->orig, a, sizeof(a));
	ct_tuple_format(&ci->reply, b, sizeof(b));
	fprintf(stderr, "%s: implausible entry: l3 %u l4 %u zone %u [%s] [%s] "
		"status 0x%x flow %ld\n", where, ci->orig.l3, ci->orig.l4,
		ci->orig.zone, a, b, ci->status, stress_flow_of(&ci->orig));
}

struct stress_events {
	_Atomic int64_t new_[STRESS_ZONES + 1];
	_Atomic int64_t destroy[STRESS_ZONES + 1];
	_Atomic uint64_t update;
	_Atomic uint64_t bad;            /* implausible entries in events */
};

static inline void stress_count_event(const struct ct_event *ev, void *arg)
{
	struct stress_events *e = arg;
	uint16_t z = ev->conn.orig.zone;

	if (!stress_ci_plausible(&ev->conn) || z > STRESS_ZONES) {
		stress_print_ci("event", &ev->conn);
		atomic_fetch_add(&e->bad, 1);
		return;
	}
	switch (ev->type) {
	case CT_EV_NEW:
		atomic_fetch_add_explicit(&e->new_[z], 1, memory_order_relaxed);
		break;
	case CT_EV_DESTROY:
		atomic_fetch_add_explicit(&e->destroy[z], 1, memory_order_relaxed);
		break;
	default:
		atomic_fetch_add_explicit(&e->update, 1, memory_order_relaxed);
		break;
	}
}

/* ---- invariants ---- */

struct stress_dump {
	uint64_t total;
	uint64_t bad;                    /* implausible */
	uint64_t dup;                    /* a second entry for one flow */
	uint64_t expired;                /* expires <= at */
	ct_time_ns at;
	uint64_t per_zone[STRESS_ZONES + 1];
	uint8_t *seen;                   /* per flow, or NULL: no dup check */
};

static inline int stress_dump_cb(const struct ct_conn_info *ci, void *arg)
{
	struct stress_dump *d = arg;
	long f = stress_flow_of(&ci->orig);

	d->total++;
	if (!stress_ci_plausible(ci)) {
		stress_print_ci("quiet dump", ci);
		d->bad++;
		return 0;
	}
	d->per_zone[ci->orig.zone]++;
	if (d->at && ci->expires <= d->at)
		d->expired++;
	if (d->seen) {
		if (d->seen[f])
			d->dup++;
		d->seen[f] = 1;
	}
	return 0;
}

static inline void stress_dump(struct ct_thread *thr, struct stress_dump *d,
			       ct_time_ns expired_at, bool dup_check)
{
	memset(d, 0, sizeof(*d));
	d->at = expired_at;
	if (dup_check) {
		d->seen = calloc(STRESS_FLOWS, 1);
		assert_non_null(d->seen);
	}
	assert_int_equal(ct_table_dump(thr, -1, stress_dump_cb, d), 0);
	free(d->seen);
	d->seen = NULL;
}

/* Occupied slots in every generation's rows, read straight from memory
 * (single-threaded: call only when nothing else runs). */
static inline uint64_t stress_slots_used(struct ct_table *t)
{
	struct ct_htab *h = atomic_load(&t->htab);
	uint64_t n = 0;

	for (; h; h = atomic_load(&h->future))
		for (uint64_t i = 0; i < h->n_rows; i++)
			n += ct_row_count(&h->rows[i]);
	return n;
}

/* What the rows hold that a dump would not show: entries marked dying,
 * printed to explain a failure. */
static inline void stress_explain_rows(struct ct_table *t)
{
	struct ct_htab *h = atomic_load(&t->htab);

	for (; h; h = atomic_load(&h->future))
		for (uint64_t i = 0; i < h->n_rows; i++)
			for (struct ct_row *r = &h->rows[i]; r; r = ct_row_next(r))
				for (int k = 0; k < CT_ROW_SLOTS; k++) {
					uint64_t sl = atomic_load(&r->slot[k]);
					struct ct_conn *c = ct_slot_conn(sl);
					struct ct_tuple tu;
					uint32_t st;

					if (!sl)
						continue;
					st = ct_conn_status(c);
					if (!(st & CT_ST_DYING))
						continue;
					ct_conn_tuple(c, &tu);
					print_error("row %" PRIu64 ": dying entry, zone %u, "
						    "status 0x%x, flow %ld, namespace %s\n",
						    i, tu.zone, st, stress_flow_of(&tu),
						    ct_ns_get(t, tu.zone) ? "exists" : "gone");
				}
}

static inline void stress_fail(const char *what, uint64_t seed)
{
	print_error("invariant broken: %s (CT_STRESS_SEED=0x%" PRIx64 ")\n",
		    what, seed);
}

#define STRESS_EQ(a, b, seed, what)                                          \
	do {                                                                  \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);              \
		if (a_ != b_) {                                               \
			print_error("%s: %" PRIu64 " != %" PRIu64 "\n",       \
				    what, a_, b_);                            \
			stress_fail(what, seed);                              \
		}                                                             \
		assert_int_equal(a_, b_);                                     \
	} while (0)

/* The balance and consistency checks that hold whenever nothing runs:
 * the table's own (support/audit.h: counts, slots, namespaces, every
 * entry found from both sides, no tuple twice, every removal counted
 * once) and what this harness knows beyond them (plausible entries of
 * its flows, one entry a flow, NEW - DESTROY events per zone). */
static inline void stress_check_consistent(struct ct_table *t,
					   struct ct_thread *thr,
					   struct stress_events *ev,
					   uint64_t seed)
{
	struct stress_dump d;
	struct ts_audit a;
	struct ct_stats st;
	int64_t live_ev = 0;

	stress_dump(thr, &d, 0, true);
	STRESS_EQ(d.bad, 0, seed, "implausible entries in a quiet dump");
	STRESS_EQ(d.dup, 0, seed, "two entries for one flow");
	ts_audit(thr, TS_AUDIT_TABLE, &a);
	if (a.violations) {
		print_error("%s\n", a.first);
		if (stress_slots_used(t) != d.total)
			stress_explain_rows(t);
	}
	STRESS_EQ(a.violations, 0, seed, "the table's invariants (support/audit.h)");
	STRESS_EQ(a.entries, d.total, seed, "the audit's dump vs this one");
	STRESS_EQ(atomic_load(&ev->bad), 0, seed, "implausible entries in events");
	for (uint16_t z = 0; z <= STRESS_ZONES; z++) {
		int64_t evz = atomic_load(&ev->new_[z]) - atomic_load(&ev->destroy[z]);

		live_ev += evz;
		STRESS_EQ(evz, d.per_zone[z], seed, "NEW - DESTROY events of a zone vs dump");
	}
	STRESS_EQ(live_ev, d.total, seed, "NEW - DESTROY events vs dump");
	ct_table_get_stats(t, &st);
	if (getenv("CT_STRESS_VERBOSE"))
		print_message("# insert %" PRIu64 " count %" PRIu64 " expired %" PRIu64
			      " deleted %" PRIu64 " early_drop %" PRIu64 " clash %" PRIu64
			      " drop %" PRIu64 "\n", st.insert, st.count, st.expired,
			      st.deleted, st.early_drop, st.clash_resolve, st.drop);
}

/*
 * Everything stress.h promises after quiescing, on a table no other
 * thread uses any more (the collector thread stopped).  Runs the collector
 * twice at the current time (the first call may finish a pass begun
 * earlier), then far in the future.
 */
static inline void stress_check_quiesced(struct ct_table *t,
					 struct stress_events *ev,
					 uint64_t seed)
{
	struct ct_thread *thr = ct_thread_attach(t);
	struct ct_gc_result r;
	struct stress_dump d;
	ct_time_ns now = stress_advance(1);

	assert_non_null(thr);
	stress_check_consistent(t, thr, ev, seed);

	for (int i = 0; i < 2; i++) {
		do {
			assert_int_equal(ct_gc_step(thr, now, 0, &r), 0);
		} while (!r.pass_done);
	}
	stress_dump(thr, &d, now, false);
	STRESS_EQ(d.expired, 0, seed, "expired entries after a full collector pass");
	stress_check_consistent(t, thr, ev, seed);

	now += 1000000 * STRESS_SEC;
	for (int i = 0; i < 2; i++) {
		do {
			assert_int_equal(ct_gc_step(thr, now, 0, &r), 0);
		} while (!r.pass_done);
	}
	stress_check_consistent(t, thr, ev, seed);
	STRESS_EQ(ct_table_count(t), 0, seed, "entries after everything expired");
	ct_thread_detach(thr);
}

#endif /* CT_TEST_STRESS_H */
