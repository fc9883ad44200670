/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * read_nat.h - `ctrack read --nat`: the NAT rules applied to a capture
 * through the library's two-step first packet, the translated packets
 * written out, the NAT filters of the listing.
 *
 * Each packet goes through ct_classify: a new connection's first packet
 * gets the first matching dnat rule (PREROUTING), then the first
 * matching snat or masquerade rule on the tuple as dnat left it
 * (POSTROUTING), the null binding for a hook no rule bound (the table
 * does NAT), and is confirmed.  With --write-translated every packet the
 * NAT sends on is written (raw IP, LINKTYPE_RAW) as ct_nat_translate
 * rewrites it, forwarded as a router does (TTL / hop limit minus one),
 * fragmented again as the kernel fragments a reassembled datagram, an
 * IPv6 atomic fragment without its fragment header; what the NAT drops
 * (a refused confirm, a translation refused, a TTL that runs out) is
 * counted and not written.
 */
#ifndef CTRACK_TOOL_READ_NAT_H
#define CTRACK_TOOL_READ_NAT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ctrack/ctrack.h"
#include "nat_path.h"
#include "nat_rule.h"

enum { NAT_FILTER_SRC = 1, NAT_FILTER_DST = 2, NAT_FILTER_ANY = 4 };

struct read_nat {
	struct nat_rules rules;
	bool on;                      /* rules were given: NAT is done */
	unsigned filter;              /* NAT_FILTER_*: conntrack -n/-g/-j */
	const char *out_path;         /* --write-translated */
	void *pcap, *dumper;          /* libpcap's, opaque here */
	/* what happened, for --stats: the first packets (nat_path.h), what
	 * was written */
	struct nat_path_counts pc;
	uint64_t written, fragments_out, not_forwarded;
	uint64_t xlate_drop[CT_NAT_V_MAX];
	/* --nat-random-replay: the kernel's bindings, and what the setup
	 * under way is about (the random source's callback reads them) */
	struct ct_nat_binding *replay;
	size_t n_replay;
	uint64_t replayed, replay_misses;
	struct ct_tuple cur_orig;
	const struct ct_nat_range *cur_range;
	enum ct_nat_manip cur_manip;
	uint64_t rng;
};

/*
 * read_nat_counters / read_nat_add_counters - what the NAT counted (the
 * --stats "nat:" and "translated:" figures) as READ_NAT_COUNTERS values
 * in a fixed order, for the state file's application bytes
 * (read_state.c): a reading split over files counts as one.
 */
#define READ_NAT_COUNTERS (12 + CT_NAT_V_MAX)
void read_nat_counters(const struct read_nat *n, uint64_t out[READ_NAT_COUNTERS]);
void read_nat_add_counters(struct read_nat *n, const uint64_t in[READ_NAT_COUNTERS]);

/* read_nat_load_replay - the kernel's bindings of --nat-random-replay
 * FILE: "L3 L4 OSRC ODST OSPORT ODPORT RSRC RDST RSPORT RDPORT" lines
 * (ICMP: the ports are the id and type << 8 | code; '#' comments).
 * Returns 0, or -1 with a message in @err. */
int read_nat_load_replay(struct read_nat *n, const char *path, char *err, size_t errlen);

/* read_nat_attach - the thread that tracks: its random source, when a
 * replay is loaded. */
void read_nat_attach(struct read_nat *n, struct ct_thread *thr);

/* read_nat_open - set up after the options: the writer, when asked.
 * Returns 0, or -1 with a message for a person in @err. */
int read_nat_open(struct read_nat *n, char *err, size_t errlen);
void read_nat_close(struct read_nat *n);

/*
 * read_nat_track - one packet through the NAT: classified, bound and
 * confirmed, translated and written.  @frame (@caplen bytes) is the
 * buffer @pkt was parsed from (for a reassembled datagram: the datagram
 * itself, starting at its IP header), @iif the pcapng interface.
 */
void read_nat_track(struct read_nat *n, struct ct_thread *thr, struct ct_packet *pkt,
		    const uint8_t *frame, uint32_t caplen, ct_time_ns now, int32_t iif);

/* read_nat_shows - whether the listing and the events show @ci under the
 * filters (conntrack -L -n / -g / -j). */
bool read_nat_shows(const struct read_nat *n, const struct ct_conn_info *ci);

/* read_nat_stats - the NAT's counters, as text lines or one JSON member
 * (",\"nat\":{...}", inside the stats object). */
void read_nat_stats(const struct read_nat *n, FILE *out, bool json);

#endif
