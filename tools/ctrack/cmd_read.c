/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cmd_read.c - `ctrack read`: replay captures through the tracker in
 * capture time and show the table, the events and the counters.
 *
 * Time is the capture's: each packet is processed at its own timestamp
 * (never earlier than the previous one, so a capture that steps back in
 * time does not run the clock backwards), and the collector runs whenever
 * capture time passes the earliest due time it last reported, so that
 * connections that time out during the capture are destroyed, and
 * reported, at their expiry time.  The final table is the one at the last
 * packet's timestamp, as `conntrack -L` would show it at that moment.
 *
 * Packets go to the tracker in bursts (ct_process_burst_ts, each at its
 * own time), which hides the table's cache misses as a dataplane's bursts
 * do.  A burst is exactly the same as its packets one by one as long as
 * nothing can expire inside it: no entry that existed before it (the
 * burst ends before the packet whose time reaches the collector's next
 * due time, where the collector runs as it always did), and no entry
 * that a packet of the burst creates or refreshes (the burst ends before
 * the packet whose time reaches the burst's first time plus the shortest
 * timeout in the settings; with a timeout of 0 every burst is one
 * packet).  Fragments go to the reassembler, and what it gives back to
 * the tracker, one at a time, after the burst before them.
 *
 * Listing order: by first packet, then id - stable from run to run, unlike
 * the kernel's hash order, so outputs can be diffed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "cli.h"
#include "export/export.h"
#include "export/metrics_nat.h"
#include "format.h"
#include "read_nat.h"
#include "read_state.h"
#include "sysctl_file.h"

enum zone_by { ZB_NONE, ZB_VLAN, ZB_IFACE };

struct read_state {
	/* (ordered by alignment: clang-tidy's padding check) */
	struct ct_table *t;
	struct ct_thread *thr;
	struct ct_defrag *defrag;
	ct_time_ns now;
	/* DESTROY events from the collector, sorted before printing */
	struct ct_event *gc_ev;
	size_t n_gc_ev, cap_gc_ev;
	/* counts for the report */
	uint64_t frames, bad_link;
	uint64_t linktype_skipped[8];
	uint64_t last_progress_ns;
	struct read_counts base;    /* --load-state: the reassembler's before */
	const char *load_state, *save_state;
	/* the burst being gathered: frames copied into the arena (the
	 * reader's buffer is reused at each packet), parsed there */
	struct ct_packet bp[CT_BURST_MAX];
	const struct ct_packet *bpp[CT_BURST_MAX];
	struct ct_verdict bv[CT_BURST_MAX];
	uint8_t *arena;
	size_t arena_used;
	ct_time_ns burst_first;
	ct_time_ns min_timeout_ns;  /* the shortest timeout in rs->set */
	struct ct_settings set;
	struct fmt_opts fo;
	struct read_nat nat;        /* --nat and friends (read_nat.h) */
	/* IPFIX, metrics, report (tools/ctrack/export/): what they are fed */
	struct ex_opts xo;
	struct ex_sinks sinks;
	struct ex_state *xs;
	struct metrics_nat *nat_metrics;  /* --nat with metrics: published copy */
	int progress;               /* -1 auto, 0 off, 1 on */
	enum zone_by zone_by;
	int bad_linktypes[8];
	unsigned n_bad_linktypes;
	int exit_code;
	enum state_damaged state_damaged;
	unsigned bn;                /* packets in the burst */
	unsigned burst;             /* --burst: packets per burst at most */
	bool events;
	bool stats;
	bool table;
	bool have_now;
	bool in_gc;
	bool progress_shown;
};

#define READ_ARENA (1u << 20)

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static ct_time_ns next_gc_due;

/* An event, reported at @ts: printed with -e, and to the sinks. */
static void emit(struct read_state *rs, const struct ct_event *ev, ct_time_ns ts)
{
	if (rs->events)
		fmt_event(stdout, &rs->fo, ev, ts);
	ex_sinks_event(&rs->sinks, ev, ts);
}

static void on_event(const struct ct_event *ev, void *arg)
{
	struct read_state *rs = arg;

	if (!read_nat_shows(&rs->nat, &ev->conn))
		return;
	if (rs->in_gc) {
		if (rs->n_gc_ev == rs->cap_gc_ev) {
			size_t cap = rs->cap_gc_ev ? rs->cap_gc_ev * 2 : 256;
			struct ct_event *n = realloc(rs->gc_ev, cap * sizeof(*n));
			if (!n) {
				emit(rs, ev, ev->conn.expires);
				return;
			}
			rs->gc_ev = n;
			rs->cap_gc_ev = cap;
		}
		rs->gc_ev[rs->n_gc_ev++] = *ev;
		return;
	}
	/* a timeout met by a lookup is reported at the expiry time */
	emit(rs, ev,
	     ev->type == CT_EV_DESTROY && ev->destroy_cause == CT_DESTROY_TIMEOUT
	     ? ev->conn.expires : ev->ts);
}

static int cmp_gc_ev(const void *a, const void *b)
{
	const struct ct_event *x = a, *y = b;

	if (x->conn.expires != y->conn.expires)
		return x->conn.expires < y->conn.expires ? -1 : 1;
	return x->conn.id < y->conn.id ? -1 : x->conn.id > y->conn.id;
}

/* Run a full collector pass at capture time @now; print its DESTROYs in
 * expiry order. */
static void run_gc(struct read_state *rs, ct_time_ns now)
{
	struct ct_gc_result r;

	rs->in_gc = true;
	ct_gc_step(rs->thr, now, 0, &r);
	rs->in_gc = false;
	/* the next pass: when capture time reaches the earliest expiry the
	 * table's bounds know of (lower bounds, exact after a full pass), or
	 * an earlier one this thread gives an entry meanwhile (track) - not
	 * every capture second, so a capture that jumps ahead or stays idle
	 * costs no passes over an unchanged table */
	next_gc_due = r.next_due;
	if (next_gc_due <= now)
		next_gc_due = now + 1;
	if (rs->n_gc_ev) {
		qsort(rs->gc_ev, rs->n_gc_ev, sizeof(*rs->gc_ev), cmp_gc_ev);
		for (size_t i = 0; i < rs->n_gc_ev; i++) {
			struct ct_event *ev = &rs->gc_ev[i];
			ct_time_ns ts = ev->destroy_cause == CT_DESTROY_TIMEOUT
				? ev->conn.expires : ev->ts;
			emit(rs, ev, ts);
		}
		rs->n_gc_ev = 0;
	}
}

static void nat_warning(void *arg, const char *line)
{
	(void)arg;
	fprintf(stderr, "ctrack read: warning: %s\n", line);
}

static int ensure_zone(struct read_state *rs, uint16_t zone)
{
	if (zone == 0 || ct_ns_exists(rs->t, zone))
		return 0;
	return ct_ns_create(rs->t, zone, &rs->set);
}

/* The collector's pass, when capture time has reached its due time;
 * then the sinks' periodic work (IPFIX active timeouts), if due. */
static void collect_if_due(struct read_state *rs)
{
	if (rs->have_now && rs->now >= next_gc_due)
		run_gc(rs, rs->now);
	if (rs->have_now)
		ex_sinks_tick(&rs->sinks, rs->thr, rs->now);
}

/* After tracking: a new entry or a shortened timeout may bring the next
 * expiry forward, and the collector runs exactly when capture time
 * reaches it. */
static void note_next_due(struct read_state *rs)
{
	uint64_t due = ct_thread_take_next_due(rs->thr);

	if (due < next_gc_due)
		next_gc_due = due;
}

/* Track the gathered burst. */
static void flush_burst(struct read_state *rs)
{
	if (!rs->bn)
		return;
	ct_process_burst_ts(rs->thr, rs->bpp, rs->bn, rs->bv);
	rs->bn = 0;
	rs->arena_used = 0;
	note_next_due(rs);
}

static void track(struct read_state *rs, struct ct_packet *pkt)
{
	struct ct_verdict v;

	collect_if_due(rs);
	ct_process(rs->thr, pkt, rs->now, &v);
	note_next_due(rs);
}

/* The NAT's counters to the metrics page (metrics_nat.h: a scrape runs
 * on another thread, so it reads a copy). */
static void publish_nat(struct read_state *rs)
{
	const struct read_nat *n = &rs->nat;
	struct metrics_nat_counts c = {
		.first_packets = n->pc.pending,
		.dnat = n->pc.dnat, .snat = n->pc.snat, .masquerade = n->pc.masq,
		.confirmed = n->pc.confirmed, .merged = n->pc.merged,
		.reply_only = n->pc.reply_only,
		.refused = n->pc.refused, .setup_errors = n->pc.setup_err,
		.translated_packets = n->written, .translated_frames = n->fragments_out,
		.not_forwarded = n->not_forwarded,
	};

	memcpy(c.translation_drops, n->xlate_drop, sizeof(c.translation_drops));
	metrics_nat_publish(rs->nat_metrics, &c);
}

/* One packet through the NAT (read_nat.c), at its own time, not in a
 * burst: its first packet is bound and confirmed before the next one is
 * looked at. */
static void track_nat(struct read_state *rs, struct ct_packet *pkt, const uint8_t *frame,
		      uint32_t caplen, int32_t iif)
{
	collect_if_due(rs);
	read_nat_track(&rs->nat, rs->thr, pkt, frame, caplen, rs->now, iif);
	note_next_due(rs);
	if (rs->nat_metrics)
		publish_nat(rs);
}

static void note_bad_link(struct read_state *rs, const char *file, int lt)
{
	unsigned i;

	for (i = 0; i < rs->n_bad_linktypes; i++)
		if (rs->bad_linktypes[i] == lt)
			break;
	if (i == rs->n_bad_linktypes && i < 8) {
		rs->bad_linktypes[i] = lt;
		rs->n_bad_linktypes++;
		fprintf(stderr, "ctrack: %s: warning: link type %d is not supported; "
			"its packets are skipped (counted in --stats)\n", file, lt);
	}
	if (i < 8)
		rs->linktype_skipped[i]++;
	rs->bad_link++;
}

static void progress(struct read_state *rs, const char *file, struct cap_src *src,
		     bool final)
{
	uint64_t t = mono_ns();
	uint64_t size = cap_size(src);

	if (!final && t - rs->last_progress_ns < 500000000ull)
		return;
	rs->last_progress_ns = t;
	if (size)
		fprintf(stderr, "\rctrack: %s: %" PRIu64 " packets, %.1f of %.1f MB (%.0f%%)  ",
			file, rs->frames, cap_bytes_read(src) / 1e6, size / 1e6,
			100.0 * (double)cap_bytes_read(src) / (double)size);
	else
		fprintf(stderr, "\rctrack: %s: %" PRIu64 " packets, %.1f MB  ", file,
			rs->frames, cap_bytes_read(src) / 1e6);
	rs->progress_shown = true;
	if (final) {
		fputc('\n', stderr);
		rs->progress_shown = false;
	}
}

static void read_file(struct read_state *rs, const char *file)
{
	struct cap_src *src;
	struct cap_pkt cp;
	char err[512];
	int r;
	bool show = rs->progress == 1 || (rs->progress < 0 && isatty(STDERR_FILENO));

	if (cap_open(file, &src, err, sizeof(err)) < 0) {
		fprintf(stderr, "ctrack: %s: %s\n", file, err);
		if (rs->exit_code < CT_EXIT_INPUT)
			rs->exit_code = CT_EXIT_INPUT;
		return;
	}
	while ((r = cap_next(src, &cp)) == 1) {
		struct ct_packet pkt;
		enum ct_pkt_kind kind;

		rs->frames++;
		if (!rs->have_now || cp.ts_ns > rs->now)
			rs->now = cp.ts_ns;
		rs->have_now = true;
		kind = ct_parse_frame(&pkt, cp.linktype, cp.data, cp.caplen,
				      cp.wirelen, cp.ts_ns);
		if (kind == CT_PKT_UNSUPPORTED_LINK) {
			note_bad_link(rs, file, cp.linktype);
			continue;
		}
		pkt.ifindex = cp.ifindex;
		if (rs->zone_by == ZB_VLAN && pkt.n_vlan)
			pkt.tuple.zone = pkt.vlan_outer;
		else if (rs->zone_by == ZB_IFACE)
			pkt.tuple.zone = (uint16_t)cp.ifindex;
		if (pkt.tuple.zone && ensure_zone(rs, pkt.tuple.zone) < 0)
			pkt.tuple.zone = 0;
		if (rs->nat.on) {
			if (kind == CT_PKT_FRAGMENT) {
				struct ct_packet whole;
				struct ct_classified cl;
				uint16_t zone = pkt.tuple.zone;

				if (ct_defrag_feed(rs->defrag, &pkt, rs->now, &whole) == 1) {
					whole.tuple.zone = zone;
					whole.ifindex = pkt.ifindex;
					if (whole.l3 && whole.l3 != pkt.l3)
						track_nat(rs, &whole, whole.l3, whole.l3_len,
							  (int32_t)cp.ifindex);
					else
						track_nat(rs, &whole, cp.data, cp.caplen,
							  (int32_t)cp.ifindex);
				} else {
					/* held for reassembly, as the kernel
					 * holds it: counted, not sent on */
					collect_if_due(rs);
					ct_classify(rs->thr, &pkt, rs->now, &cl);
				}
			} else {
				track_nat(rs, &pkt, cp.data, cp.caplen, (int32_t)cp.ifindex);
			}
			if (show && (rs->frames & 4095) == 0)
				progress(rs, file, src, false);
			continue;
		}
		if (kind != CT_PKT_FRAGMENT && rs->arena && cp.caplen <= READ_ARENA) {
			/* into the burst, with a copy of its frame (the
			 * reader's buffer is reused at the next packet)
			 * unless the frame stays where it is until the file
			 * is closed (a mapped file) */
			struct ct_packet *bpk;
			size_t need = cp.stable ? 0 : cp.caplen;

			if (rs->bn && (rs->now >= next_gc_due ||
				       rs->now >= rs->sinks.next_tick ||
				       rs->now - rs->burst_first >= rs->min_timeout_ns ||
				       READ_ARENA - rs->arena_used < need))
				flush_burst(rs);
			collect_if_due(rs);
			bpk = &rs->bp[rs->bn];
			*bpk = pkt;
			if (need) {
				uint8_t *copy = rs->arena + rs->arena_used;

				memcpy(copy, cp.data, cp.caplen);
				ct_packet_moved(bpk, cp.data, copy);
				rs->arena_used += cp.caplen;
			}
			bpk->ts = rs->now;      /* the time it is tracked at */
			if (!rs->bn)
				rs->burst_first = rs->now;
			rs->bpp[rs->bn++] = bpk;
			if (rs->bn >= rs->burst)
				flush_burst(rs);
			if (show && (rs->frames & 4095) == 0)
				progress(rs, file, src, false);
			continue;
		}
		/* one at a time, after the burst before it */
		flush_burst(rs);
		if (kind == CT_PKT_FRAGMENT) {
			struct ct_packet whole;
			uint16_t zone = pkt.tuple.zone;

			if (ct_defrag_feed(rs->defrag, &pkt, rs->now, &whole) == 1) {
				whole.tuple.zone = zone;
				whole.ifindex = pkt.ifindex;
				track(rs, &whole);
			} else {
				/* counted as untracked until its datagram is whole */
				track(rs, &pkt);
			}
			continue;
		}
		track(rs, &pkt);
		if (show && (rs->frames & 4095) == 0)
			progress(rs, file, src, false);
	}
	flush_burst(rs);
	if (show && rs->progress_shown)
		progress(rs, file, src, true);
	if (r < 0) {
		fprintf(stderr, "ctrack: %s: damaged or cut short at %s: %s; "
			"the results cover the %" PRIu64 " packets before it\n",
			file, cap_where(src), cap_error(src), rs->frames);
		if (rs->exit_code < CT_EXIT_PARTIAL)
			rs->exit_code = CT_EXIT_PARTIAL;
	}
	cap_close(src);
}

struct dump_buf {
	struct ct_conn_info *v;
	size_t n, cap;
};

static int collect(const struct ct_conn_info *ci, void *arg)
{
	struct dump_buf *d = arg;

	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 1024;
		struct ct_conn_info *n = realloc(d->v, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		d->v = n;
		d->cap = cap;
	}
	d->v[d->n++] = *ci;
	return 0;
}

static int cmp_first_seen(const void *a, const void *b)
{
	const struct ct_conn_info *x = a, *y = b;

	if (x->first_seen != y->first_seen)
		return x->first_seen < y->first_seen ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The listing's sort key, 16 bytes instead of the 232 of an entry: the
 * sort moves these (issue 25: sorting the entries themselves was a fifth
 * of a large table's printing). */
struct list_key {
	ct_time_ns first_seen;
	uint32_t id;
	uint32_t idx;
};

static int cmp_key(const void *a, const void *b)
{
	const struct list_key *x = a, *y = b;

	if (x->first_seen != y->first_seen)
		return x->first_seen < y->first_seen ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void print_table(struct read_state *rs)
{
	struct dump_buf d = { 0 };
	struct list_key *k;
	char *buf = NULL;
	size_t len = 0;

	if (ct_table_dump(rs->thr, -1, collect, &d) != 0)
		fprintf(stderr, "ctrack: out of memory while listing the table\n");
	k = d.n ? malloc(d.n * sizeof(*k)) : NULL;
	if (d.n && k) {
		for (size_t i = 0; i < d.n; i++)
			k[i] = (struct list_key){ d.v[i].first_seen, (uint32_t)d.v[i].id, (uint32_t)i };
		qsort(k, d.n, sizeof(*k), cmp_key);
		buf = malloc(1u << 20);
	} else if (d.n) {
		qsort(d.v, d.n, sizeof(*d.v), cmp_first_seen);
	}
	for (size_t i = 0; i < d.n; i++) {
		const struct ct_conn_info *ci = k ? &d.v[k[i].idx] : &d.v[i];
		long long left = ci->expires > rs->now
			? (long long)((ci->expires - rs->now) / 1000000000ull) : 0;

		if (!read_nat_shows(&rs->nat, ci))
			continue;
		if (!buf) {
			fmt_listing(stdout, &rs->fo, ci, left);
			continue;
		}
		/* lines into a buffer, a write of 1 MiB at a time */
		if (len + FMT_LINE_MAX + 1 > (1u << 20)) {
			fwrite(buf, 1, len, stdout);
			len = 0;
		}
		len += fmt_listing_line(buf + len, &rs->fo, ci, left, rs->now);
		buf[len++] = '\n';
	}
	if (len)
		fwrite(buf, 1, len, stdout);
	free(buf);
	free(k);
	free(d.v);
}

static void print_stats(struct read_state *rs)
{
	struct ct_stats s;
	struct ct_defrag_stats ds;
	bool any = false;

	ct_table_get_stats(rs->t, &s);
	ct_defrag_get_stats(rs->defrag, &ds);
	ds.fragments += rs->base.fragments;
	ds.reassembled += rs->base.reassembled;
	if (rs->fo.format == FMT_JSON) {
		printf("{\"stats\":{\"found\":%" PRIu64 ",\"invalid\":%" PRIu64 ",\"insert\":%" PRIu64
		       ",\"insert_failed\":%" PRIu64 ",\"drop\":%" PRIu64 ",\"early_drop\":%" PRIu64
		       ",\"error\":%" PRIu64 ",\"search_restart\":%" PRIu64 ",\"clash_resolve\":%" PRIu64
		       ",\"chaintoolong\":%" PRIu64 ",\"entries\":%" PRIu64 ",\"frames\":%" PRIu64
		       ",\"packets\":%" PRIu64 ",\"untracked\":%" PRIu64 ",\"related\":%" PRIu64
		       ",\"ignored\":%" PRIu64 ",\"expired\":%" PRIu64 ",\"unsupported_link\":%" PRIu64
		       ",\"fragments\":%" PRIu64 ",\"reassembled\":%" PRIu64
		       ",\"nat_exhausted\":%" PRIu64 ",\"invalid_by_reason\":{",
		       s.found, s.invalid, s.insert, s.insert_failed, s.drop, s.early_drop, s.error,
		       s.search_restart, s.clash_resolve, s.chaintoolong, s.count, rs->frames,
		       s.packets, s.untracked, s.related, s.ignored, s.expired, rs->bad_link,
		       ds.fragments, ds.reassembled, s.nat_exhausted);
		for (int i = 1; i < CT_PR_MAX; i++)
			if (s.invalid_by_reason[i]) {
				printf("%s\"%s\":%" PRIu64, any ? "," : "",
				       ct_parse_reason_name((enum ct_parse_reason)i),
				       s.invalid_by_reason[i]);
				any = true;
			}
		printf("}");
		read_nat_stats(&rs->nat, stdout, true);
		printf("}}\n");
		return;
	}
	/* conntrack -S prints one line per CPU; ctrack's totals are cpu=0 */
	printf("cpu=0   \tfound=%" PRIu64 " invalid=%" PRIu64 " insert=%" PRIu64
	       " insert_failed=%" PRIu64 " drop=%" PRIu64 " early_drop=%" PRIu64
	       " error=%" PRIu64 " search_restart=%" PRIu64 " clash_resolve=%" PRIu64
	       " chaintoolong=%" PRIu64 "\n",
	       s.found, s.invalid, s.insert, s.insert_failed, s.drop, s.early_drop,
	       s.error, s.search_restart, s.clash_resolve, s.chaintoolong);
	printf("entries=%" PRIu64 " frames=%" PRIu64 " packets=%" PRIu64 " untracked=%" PRIu64
	       " related=%" PRIu64 " ignored=%" PRIu64 " expired=%" PRIu64
	       " unsupported_link=%" PRIu64 " fragments=%" PRIu64 " reassembled=%" PRIu64
	       " nat_exhausted=%" PRIu64 "\n",
	       s.count, rs->frames, s.packets, s.untracked, s.related, s.ignored,
	       s.expired, rs->bad_link, ds.fragments, ds.reassembled, s.nat_exhausted);
	printf("invalid_by_reason:");
	for (int i = 1; i < CT_PR_MAX; i++)
		if (s.invalid_by_reason[i]) {
			printf(" %s=%" PRIu64, ct_parse_reason_name((enum ct_parse_reason)i),
			       s.invalid_by_reason[i]);
			any = true;
		}
	printf("%s\n", any ? "" : " none");
	read_nat_stats(&rs->nat, stdout, false);
}

static void usage_read(FILE *out)
{
	fputs(
"usage: ctrack read [OPTIONS] FILE...\n"
"\n"
"Replay capture files (pcap or pcapng, optionally gzip-compressed; '-' reads\n"
"standard input) through the connection tracker, in order and in capture\n"
"time, and print the connection table as it stands at the last packet, in\n"
"the format `conntrack -L` uses.\n"
"\n"
"Output:\n"
"  -o, --format FMT       conntrack (default), extended (conntrack -L -o\n"
"                         extended), or json (one object per line)\n"
"  -e, --events           print [NEW] / [UPDATE] / [DESTROY] events as\n"
"                         `conntrack -E -o timestamp` does, with the capture\n"
"                         time in front, before the table\n"
"      --no-table         do not print the table at the end\n"
"  -s, --stats            print the counters `conntrack -S` shows, the entry\n"
"                         count and invalid packets per reason, at the end\n"
"      --progress / --no-progress\n"
"                         progress on stderr (default: only when stderr is a\n"
"                         terminal)\n"
"\n"
"Behaviour (kernel sysctl names, with or without 'net.netfilter.'):\n"
"      --set NAME=VALUE   e.g. --set nf_conntrack_tcp_loose=0; repeatable\n"
"      --sysctl-file FILE NAME = VALUE lines as `sysctl -a` prints them;\n"
"                         names outside net.netfilter are ignored\n"
"      --zone-by KIND     none (default), vlan (outermost VLAN id) or\n"
"                         interface (pcapng interface number): put packets\n"
"                         in separate conntrack zones, printed as zone=N\n"
"      --router           the capture was taken on a forwarding router: packets\n"
"                         it would not forward (TTL 1, link-local source,\n"
"                         multicast, martians) never create an entry\n"
"                         (ctrack_router=1)\n"
"      --burst N          packets handed to the tracker at once, 1 to 64\n"
"                         (default 64; the results are the same, 1 is slower)\n"
"\n"
"NAT (as the kernel's nf_nat; docs/nat-design.md, ctrack(1)):\n"
"      --nat RULE         a NAT rule, in the spirit of nftables: e.g.\n"
"                         'ip saddr 10.0.0.0/8 snat to 198.51.100.1',\n"
"                         'tcp dport 80 dnat to 10.0.2.5:8080',\n"
"                         'masquerade to 192.0.2.1'; repeatable; the first\n"
"                         dnat rule that matches binds a new connection, then\n"
"                         the first snat/masquerade rule (after dnat); the\n"
"                         rest get the null binding\n"
"      --nat-file FILE    rules, one per line ('#' comments)\n"
"      --nat-exact-ports  search source NAT ports with ctrack's exact port map\n"
"                         (a free port whenever one exists) instead of the\n"
"                         kernel's 248 random probes\n"
"      --write-translated OUT.pcap\n"
"                         write every packet as the NAT sends it on (raw IP,\n"
"                         TTL / hop limit minus one, refragmented as the\n"
"                         kernel does)\n"
"      --nat-random-replay BINDINGS\n"
"                         where the kernel drew a random number (a source NAT\n"
"                         port search, random, fully-random), draw the number\n"
"                         that gives the kernel's port for that connection,\n"
"                         from its bindings (L3 L4 OSRC ODST OSPORT ODPORT RSRC\n"
"                         RDST RSPORT RDPORT lines): a kernel's capture then\n"
"                         replays to the kernel's table (tests/kernel/kd_nat.py)\n"
"      --src-nat, --dst-nat, --any-nat\n"
"                         list (and report events of) only connections whose\n"
"                         source / destination / either was translated, as\n"
"                         conntrack's -n / -g / -j\n"
"State between runs (a capture rotated over many files, read file by file):\n"
"      --load-state FILE  start from the table, counters and time saved in FILE\n"
"      --save-state FILE  save them at the end (atomically; FILE may be the\n"
"                         one loaded)\n"
"      --state-damaged stop|empty\n"
"                         a damaged, cut short or foreign FILE stops the run\n"
"                         (default), or is renamed FILE.damaged and the run\n"
"                         starts with an empty table\n"
"\n", out);
	ex_opts_usage(out);
	fputs(
"\n"
"Differences from a fresh kernel namespace: nf_conntrack_acct defaults to 1\n"
"(counters are shown); set it to 0 to hide them.\n"
"\n"
"Exit status:\n"
"  0  success\n"
"  1  bad usage: unknown option, bad --set value, unreadable --sysctl-file,\n"
"     a malformed NAT rule, an unwritable --write-translated,\n"
"     a TCP collector that refuses, an unwritable report or metrics file\n"
"  2  an input file could not be read at all (missing, not a capture, ...),\n"
"     or the --load-state file is missing, not a state file or of another\n"
"     version\n"
"  3  an input file is damaged or cut short; results cover what was read;\n"
"     or the --load-state file is damaged or cut short (nothing was read)\n"
"  4  internal error (out of memory, cannot write the output or the state),\n"
"     records a TCP collector did not take\n", out);
}

int cmd_read(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "format", required_argument, NULL, 'o' },
		{ "burst", required_argument, NULL, 'B' },
		{ "events", no_argument, NULL, 'e' },
		{ "stats", no_argument, NULL, 's' },
		{ "no-table", no_argument, NULL, 'T' },
		{ "set", required_argument, NULL, 'S' },
		{ "sysctl-file", required_argument, NULL, 'F' },
		{ "zone-by", required_argument, NULL, 'z' },
		{ "router", no_argument, NULL, 'R' },
		{ "progress", no_argument, NULL, 'p' },
		{ "no-progress", no_argument, NULL, 'P' },
		{ "load-state", required_argument, NULL, 'L' },
		{ "save-state", required_argument, NULL, 'W' },
		{ "state-damaged", required_argument, NULL, 'D' },
		{ "nat", required_argument, NULL, 256 },
		{ "nat-file", required_argument, NULL, 257 },
		{ "write-translated", required_argument, NULL, 258 },
		{ "src-nat", no_argument, NULL, 259 },
		{ "dst-nat", no_argument, NULL, 260 },
		{ "any-nat", no_argument, NULL, 261 },
		{ "nat-exact-ports", no_argument, NULL, 262 },
		{ "nat-random-replay", required_argument, NULL, 263 },
		{ "help", no_argument, NULL, 'h' },
		EX_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	struct read_state rs;
	struct ct_table_config cfg;
	char nmsg[512];
	bool exact_ports = false;
	int c, err;

	memset(&rs, 0, sizeof(rs));
	rs.table = true;
	rs.burst = CT_BURST_MAX;
	rs.progress = -1;
	rs.fo.format = FMT_CONNTRACK;
	ct_settings_default(&rs.set);
	rs.set.acct = 1;        /* the tool's one difference: see --help */
	ex_opts_init(&rs.xo);
	rs.sinks.next_tick = UINT64_MAX;
	next_gc_due = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:esh", lopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!strcmp(optarg, "conntrack") || !strcmp(optarg, "default"))
				rs.fo.format = FMT_CONNTRACK;
			else if (!strcmp(optarg, "extended"))
				rs.fo.format = FMT_EXTENDED;
			else if (!strcmp(optarg, "json"))
				rs.fo.format = FMT_JSON;
			else {
				fprintf(stderr, "ctrack read: unknown format '%s' "
					"(use conntrack, extended or json)\n", optarg);
				return CT_EXIT_USAGE;
			}
			break;
		case 'e':
			rs.events = true;
			break;
		case 's':
			rs.stats = true;
			break;
		case 'T':
			rs.table = false;
			break;
		case 'S': {
			char *eq = strchr(optarg, '=');
			const char *msg;
			char name[256];

			if (!eq || eq == optarg) {
				fprintf(stderr, "ctrack read: --set needs NAME=VALUE, got '%s'\n", optarg);
				return CT_EXIT_USAGE;
			}
			snprintf(name, sizeof(name), "%.*s", (int)(eq - optarg), optarg);
			err = ct_settings_set(&rs.set, name, eq + 1, &msg);
			if (err < 0) {
				fprintf(stderr, "ctrack read: --set %s: '%s' %s\n", optarg,
					err == CT_SETTINGS_BAD_VALUE ? eq + 1 : name, msg);
				return CT_EXIT_USAGE;
			}
			break;
		}
		case 'F': {
			char msg[512];

			if (sysctl_file_apply(optarg, &rs.set, msg, sizeof(msg)) < 0) {
				fprintf(stderr, "ctrack read: --sysctl-file %s\n", msg);
				return CT_EXIT_USAGE;
			}
			break;
		}
		case 'z':
			if (!strcmp(optarg, "none"))
				rs.zone_by = ZB_NONE;
			else if (!strcmp(optarg, "vlan"))
				rs.zone_by = ZB_VLAN;
			else if (!strcmp(optarg, "interface"))
				rs.zone_by = ZB_IFACE;
			else {
				fprintf(stderr, "ctrack read: unknown --zone-by '%s' "
					"(use none, vlan or interface)\n", optarg);
				return CT_EXIT_USAGE;
			}
			break;
		case 'R':
			rs.set.router = 1;
			break;
		case 'B': {
			char *end;
			long b = strtol(optarg, &end, 10);

			if (end == optarg || *end || b < 1 || b > CT_BURST_MAX) {
				fprintf(stderr, "ctrack read: --burst takes a number of packets "
					"from 1 to %d, got '%s'\n", CT_BURST_MAX, optarg);
				return CT_EXIT_USAGE;
			}
			rs.burst = (unsigned)b;
			break;
		}
		case 'p':
			rs.progress = 1;
			break;
		case 'P':
			rs.progress = 0;
			break;
		case 'L':
			rs.load_state = optarg;
			break;
		case 'W':
			rs.save_state = optarg;
			break;
		case 'D':
			if (!strcmp(optarg, "stop"))
				rs.state_damaged = STATE_DAMAGED_STOP;
			else if (!strcmp(optarg, "empty"))
				rs.state_damaged = STATE_DAMAGED_EMPTY;
			else {
				fprintf(stderr, "ctrack read: unknown --state-damaged '%s' "
					"(use stop or empty)\n", optarg);
				return CT_EXIT_USAGE;
			}
			break;
		case 256:
			if (nat_rules_add(&rs.nat.rules, "--nat", optarg, nmsg, sizeof(nmsg),
					  nat_warning, NULL) < 0) {
				fprintf(stderr, "ctrack read: %s\n", nmsg);
				nat_rules_free(&rs.nat.rules);
				return CT_EXIT_USAGE;
			}
			rs.nat.on = true;
			break;
		case 257:
			if (nat_rules_load(&rs.nat.rules, optarg, nmsg, sizeof(nmsg),
					   nat_warning, NULL) < 0) {
				fprintf(stderr, "ctrack read: --nat-file %s\n", nmsg);
				nat_rules_free(&rs.nat.rules);
				return CT_EXIT_USAGE;
			}
			rs.nat.on = true;
			break;
		case 258:
			rs.nat.out_path = optarg;
			rs.nat.on = true;
			break;
		case 259:
			rs.nat.filter |= NAT_FILTER_SRC;
			break;
		case 260:
			rs.nat.filter |= NAT_FILTER_DST;
			break;
		case 261:
			rs.nat.filter |= NAT_FILTER_ANY;
			break;
		case 262:
			exact_ports = true;
			break;
		case 263:
			if (read_nat_load_replay(&rs.nat, optarg, nmsg, sizeof(nmsg)) < 0) {
				fprintf(stderr, "ctrack read: %s\n", nmsg);
				read_nat_close(&rs.nat);
				return CT_EXIT_USAGE;
			}
			break;
		case 'h':
			usage_read(stdout);
			return CT_EXIT_OK;
		default:
			switch (ex_opts_parse(&rs.xo, "ctrack read", c, optarg)) {
			case 1:
				continue;
			case 0:
				fprintf(stderr, "Try 'ctrack read --help'.\n");
				break;
			default:
				break;
			}
			return CT_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "ctrack read: no capture file given\n"
			"Try 'ctrack read --help'.\n");
		nat_rules_free(&rs.nat.rules);
		return CT_EXIT_USAGE;
	}
	if ((exact_ports || rs.nat.n_replay) && !rs.nat.on) {
		fprintf(stderr, "ctrack read: %s needs NAT rules (--nat, --nat-file) or "
			"--write-translated\n",
			exact_ports ? "--nat-exact-ports" : "--nat-random-replay");
		read_nat_close(&rs.nat);
		return CT_EXIT_USAGE;
	}
	if (read_nat_open(&rs.nat, nmsg, sizeof(nmsg)) < 0) {
		fprintf(stderr, "ctrack read: %s\n", nmsg);
		nat_rules_free(&rs.nat.rules);
		return CT_EXIT_USAGE;
	}

	rs.fo.acct = rs.set.acct;
	/* first/last packet times: for JSON and for a stable listing order
	 * (zones created on the fly get the same settings) */
	rs.set.timestamp = 1;
	ct_table_config_default(&cfg);
	cfg.settings = rs.set;
	cfg.nat = rs.nat.on;
	cfg.nat_exact_ports = exact_ports;
	ex_table_config(&rs.xo, &cfg);
	if ((err = ct_table_create(&cfg, &rs.t)) < 0) {
		fprintf(stderr, "ctrack: cannot create the table: %s\n", strerror(-err));
		return CT_EXIT_INTERNAL;
	}
	rs.thr = ct_thread_attach(rs.t);
	if (rs.thr)
		read_nat_attach(&rs.nat, rs.thr);
	/* without the arena every packet goes alone (still exact) */
	rs.arena = malloc(READ_ARENA);
	rs.min_timeout_ns = (ct_time_ns)ct_settings_min_timeout(&rs.set) * 1000000000ull;
	rs.defrag = ct_defrag_create(rs.set.frag_high_thresh,
				     (uint64_t)rs.set.frag_timeout * 1000000000ull);
	if (!rs.thr || !rs.defrag) {
		fprintf(stderr, "ctrack: out of memory\n");
		return CT_EXIT_INTERNAL;
	}
	/* only to print events: the collector's next run comes from the
	 * thread's expiries (track), so without -e no entry is copied out
	 * on every state change */
	rs.xo.inputs = (const char *const *)argv + optind;
	if (ex_start(&rs.xo, "ctrack read", rs.t, &rs.sinks, &rs.xs) < 0) {
		rs.exit_code = CT_EXIT_USAGE;
		goto out;
	}
	if (rs.nat.on && ex_state_metrics(rs.xs)) {
		rs.nat_metrics = metrics_nat_create(ex_state_metrics(rs.xs));
		if (!rs.nat_metrics) {
			fprintf(stderr, "ctrack: out of memory\n");
			rs.exit_code = CT_EXIT_INTERNAL;
			goto out;
		}
		publish_nat(&rs);
	}
	if (rs.events || ex_wants_events(&rs.xo)) {
		ct_table_set_event_handler(rs.t, on_event, &rs);
		/* IPFIX alone needs DESTROY only: NEW and UPDATE are then not
		 * even copied out (issue 26: a fifth of export's cost) */
		if (!rs.events)
			ct_table_set_event_mask(rs.t, ex_event_mask(&rs.xo));
	}
	if (rs.load_state) {
		/* the table as it was at the end of the previous file, in
		 * capture time: the next packets go on from there */
		bool restored;
		int ex = read_state_load(rs.load_state, rs.state_damaged, rs.thr, &rs.set,
					 &rs.now, &restored, &rs.base);

		if (ex) {
			rs.exit_code = ex;
			goto out;
		}
		rs.have_now = restored;
		rs.frames = rs.base.frames;
		rs.bad_link = rs.base.bad_link;
		if (rs.nat.on && rs.base.n_nat == READ_NAT_COUNTERS)
			read_nat_add_counters(&rs.nat, rs.base.nat);
		note_next_due(&rs);
	}

	for (int i = optind; i < argc; i++)
		read_file(&rs, argv[i]);

	if (rs.have_now)
		run_gc(&rs, rs.now);
	if (rs.nat_metrics)
		publish_nat(&rs);
	if (ex_finish(rs.xs, &rs.sinks, rs.thr, rs.now) < 0 && rs.exit_code < CT_EXIT_INTERNAL)
		rs.exit_code = CT_EXIT_INTERNAL;
	if (rs.save_state) {
		struct ct_defrag_stats ds;
		struct read_counts rc = { rs.frames, rs.bad_link, 0, 0, 0, { 0 } };
		int ex;

		if (rs.nat.on) {
			_Static_assert(READ_NAT_COUNTERS <= 64, "room in read_counts.nat");
			rc.n_nat = READ_NAT_COUNTERS;
			read_nat_counters(&rs.nat, rc.nat);
		}

		ct_defrag_get_stats(rs.defrag, &ds);
		rc.fragments = ds.fragments + rs.base.fragments;
		rc.reassembled = ds.reassembled + rs.base.reassembled;
		ex = read_state_save(rs.save_state, rs.thr, rs.now, &rc);
		if (ex > rs.exit_code)
			rs.exit_code = ex;
	}
	{
		/* captures taken on a sending host carry the partial checksums
		 * of checksum offload; like the kernel (nf_conntrack_checksum=1)
		 * ctrack calls them INVALID.  Say so once, with the remedy. */
		struct ct_stats st;

		ct_table_get_stats(rs.t, &st);
		if (rs.set.checksum && st.invalid_by_reason[CT_PR_L4_BAD_CSUM] * 20 > st.packets &&
		    st.packets)
			fprintf(stderr, "ctrack: note: %" PRIu64 " of %" PRIu64 " packets had bad "
				"L4 checksums and were INVALID (as the kernel does with "
				"nf_conntrack_checksum=1); a capture taken on a host with "
				"checksum offload looks like this: try --set "
				"nf_conntrack_checksum=0\n",
				st.invalid_by_reason[CT_PR_L4_BAD_CSUM], st.packets);
	}
	if (rs.table)
		print_table(&rs);
	if (rs.stats)
		print_stats(&rs);
	fflush(stdout);

out:
	ex_stop(rs.xs, &rs.sinks);
	metrics_nat_destroy(rs.nat_metrics);   /* after the listener stopped */
	ct_table_set_event_handler(rs.t, NULL, NULL);
	read_nat_close(&rs.nat);
	ct_defrag_destroy(rs.defrag);
	free(rs.arena);
	ct_thread_detach(rs.thr);
	ct_table_destroy(rs.t);
	free(rs.gc_ev);
	if (ferror(stdout)) {
		fprintf(stderr, "ctrack: error writing the output\n");
		return CT_EXIT_INTERNAL;
	}
	return rs.exit_code;
}
