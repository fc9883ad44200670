/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metrics_nat.c - the NAT's counters as Prometheus families
 * (metrics_nat.h).  The published copy is an array of relaxed atomics in
 * the order of struct metrics_nat_counts, which is all uint64_t: a
 * scrape may see one publication half applied (counters of one packet
 * apart), never a torn counter.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "metrics.h"
#include "metrics_nat.h"

#define N_CTRS (sizeof(struct metrics_nat_counts) / sizeof(uint64_t))
_Static_assert(sizeof(struct metrics_nat_counts) % sizeof(uint64_t) == 0,
	       "struct metrics_nat_counts must hold uint64_t alone");

struct metrics_nat {
	_Atomic uint64_t v[N_CTRS];
};

/* where each counter sits in the copy */
#define AT(field) (offsetof(struct metrics_nat_counts, field) / sizeof(uint64_t))

static uint64_t get(const struct metrics_nat *n, size_t i)
{
	return atomic_load_explicit(&n->v[i], memory_order_relaxed);
}

static void one(struct metrics_out *o, const struct metrics_nat *n, const char *name,
		const char *help, size_t at)
{
	metrics_family(o, name, "counter", help);
	metrics_sample(o, name, "", get(n, at));
}

static void render(struct metrics_out *o, void *arg)
{
	const struct metrics_nat *n = arg;
	static const char *const kinds[3] = { "dnat", "snat", "masquerade" };
	static const char *const results[4] = { "confirmed", "merged", "reply_only", "refused" };
	char lb[96];

	one(o, n, "ctrack_nat_first_packets_total",
	    "First packets of new connections given to the NAT rules.", AT(first_packets));
	metrics_family(o, "ctrack_nat_bindings_total", "counter",
		       "NAT bindings set up by a rule, by kind (the null binding not counted).");
	for (size_t i = 0; i < 3; i++) {
		snprintf(lb, sizeof(lb), "kind=\"%s\"", kinds[i]);
		metrics_sample(o, "ctrack_nat_bindings_total", lb, get(n, AT(dnat) + i));
	}
	metrics_family(o, "ctrack_nat_confirms_total", "counter",
		       "New connections' confirms, by result: entered, merged into the entry "
		       "that won a clash, entered under the reply tuple only (IPS_NAT_CLASH), "
		       "refused (the packet dropped: insert_failed).");
	for (size_t i = 0; i < 4; i++) {
		snprintf(lb, sizeof(lb), "result=\"%s\"", results[i]);
		metrics_sample(o, "ctrack_nat_confirms_total", lb, get(n, AT(confirmed) + i));
	}
	one(o, n, "ctrack_nat_setup_errors_total",
	    "NAT setups the library refused (a rule that does not fit the connection).",
	    AT(setup_errors));
	metrics_family(o, "ctrack_nat_translation_drops_total", "counter",
		       "Packets a translation refused and dropped, by reason.");
	for (int i = 1; i < CT_NAT_V_MAX; i++) {
		snprintf(lb, sizeof(lb), "reason=\"%s\"",
			 ct_nat_verdict_name((enum ct_nat_verdict)i));
		metrics_sample(o, "ctrack_nat_translation_drops_total", lb,
			       get(n, AT(translation_drops) + (size_t)i));
	}
	one(o, n, "ctrack_nat_translated_packets_total",
	    "Packets written as the NAT sends them on (--write-translated).",
	    AT(translated_packets));
	one(o, n, "ctrack_nat_translated_frames_total",
	    "Frames written, fragments counted one by one (--write-translated).",
	    AT(translated_frames));
	one(o, n, "ctrack_nat_not_forwarded_total",
	    "Packets a router would not forward, not written (--write-translated).",
	    AT(not_forwarded));
}

struct metrics_nat *metrics_nat_create(struct ex_sink *m)
{
	struct metrics_nat *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	if (metrics_add_provider(m, render, n) < 0) {
		free(n);
		return NULL;
	}
	return n;
}

void metrics_nat_destroy(struct metrics_nat *n)
{
	free(n);
}

void metrics_nat_publish(struct metrics_nat *n, const struct metrics_nat_counts *c)
{
	const uint64_t *src = (const uint64_t *)(const void *)c;

	for (size_t i = 0; i < N_CTRS; i++)
		atomic_store_explicit(&n->v[i], src[i], memory_order_relaxed);
}
