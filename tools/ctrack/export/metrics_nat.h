/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metrics_nat.h - the NAT's counters of a command (`ctrack read --nat`)
 * on the Prometheus page (metrics.h), beside the library's own
 * (ctrack_nat_exhausted_total and the conntrack -S counters NAT raises,
 * which metrics.c always shows).
 *
 * The command counts on its packet thread in plain integers; a scrape
 * runs on the HTTP listener's thread.  So the command publishes a copy
 * (metrics_nat_publish: relaxed atomic stores, ~25 of them) whenever its
 * counters moved and a scrape may come, and the page shows the last copy
 * published - as of the packet published after, like the library's
 * per-thread counters.  Nothing here is on the packet path of a command
 * that serves no metrics.
 *
 * The families (every label value always present, 0 included):
 *   ctrack_nat_first_packets_total               new connections' first packets the NAT saw
 *   ctrack_nat_bindings_total{kind}              rules that bound: dnat, snat, masquerade
 *   ctrack_nat_confirms_total{result}            confirmed, merged (clash resolved),
 *                                                reply_only (IPS_NAT_CLASH), refused
 *   ctrack_nat_setup_errors_total                setups the library refused
 *   ctrack_nat_translation_drops_total{reason}   packets a translation refused, by
 *                                                ct_nat_verdict_name
 *   ctrack_nat_translated_packets_total          packets written translated
 *   ctrack_nat_translated_frames_total           ... frames (after refragmenting)
 *   ctrack_nat_not_forwarded_total               packets a router would not forward
 */
#ifndef CTRACK_TOOL_EXPORT_METRICS_NAT_H
#define CTRACK_TOOL_EXPORT_METRICS_NAT_H

#include <stdint.h>

#include "ctrack/ctrack.h"
#include "sink.h"

struct metrics_nat_counts {
	uint64_t first_packets;
	uint64_t dnat, snat, masquerade;
	uint64_t confirmed, merged, reply_only, refused;
	uint64_t setup_errors;
	uint64_t translated_packets, translated_frames, not_forwarded;
	uint64_t translation_drops[CT_NAT_V_MAX];   /* by enum ct_nat_verdict */
};

struct metrics_nat;

/* metrics_nat_create - the NAT families on the page of metrics sink @m
 * (a provider, metrics_add_provider: before rendering starts).  NULL
 * when out of memory or @m has no room for another provider. */
struct metrics_nat *metrics_nat_create(struct ex_sink *m);
void metrics_nat_destroy(struct metrics_nat *n);

/* The feeding thread: the counters now.  Any thread may render meanwhile. */
void metrics_nat_publish(struct metrics_nat *n, const struct metrics_nat_counts *c);

#endif
