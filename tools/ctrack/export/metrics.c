/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * metrics.c - Prometheus text exposition of a table (metrics.h).
 *
 * The counters come from ct_table_get_stats() at each rendering, so they
 * are the library's own, summed over threads; the entries by zone,
 * protocol and state come from one walk over the table in slices
 * (ex_table_walk: nothing held between slices, so a scrape of a large
 * table never holds up a resize), counted by sorting a 32-bit key per
 * entry (zone, protocol, state) - O(n log n) for a scrape, no map kept up
 * to date on the packet path.  Only what the library does
 * not count is counted here, from the events: events by type, destroys
 * by cause, and the expiry lateness histogram.
 *
 * Every family is always present, with every known label value (each
 * INVALID reason, each destroy cause), so that a rate() over it works
 * from the first scrape; the daemon's families (capture, event streams)
 * are written whole by its providers, and are there without samples in
 * `ctrack read`.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ipfix.h"
#include "metrics.h"

#define N_LATE_BUCKETS 8
static const double late_bounds_s[N_LATE_BUCKETS] = {
	0.001, 0.01, 0.1, 0.5, 1, 5, 30, 120,
};

#define N_CAUSES 7
static const char *const cause_names[N_CAUSES] = {
	"none", "timeout", "protocol", "flush", "zone_teardown", "early_drop", "reopen",
};

struct metrics_sink {
	struct ex_sink base;
	struct ct_table *t;
	struct ex_sink *ipfix;
	FILE *file;
	char path[512];
	_Atomic uint64_t events[3];              /* by enum ct_event_type */
	_Atomic uint64_t destroys[N_CAUSES];
	_Atomic uint64_t late[N_LATE_BUCKETS + 1];  /* the last: +Inf */
	_Atomic uint64_t late_sum_ns;
	metrics_provider_fn prov[8];
	void *prov_arg[8];
	unsigned n_prov;
	bool destroys_only;
};

struct metrics_out {
	FILE *f;
};

static uint64_t ld(_Atomic uint64_t *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

static void add(_Atomic uint64_t *v, uint64_t n)
{
	atomic_fetch_add_explicit(v, n, memory_order_relaxed);
}

void metrics_family(struct metrics_out *o, const char *name, const char *type,
		    const char *help)
{
	fprintf(o->f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void metrics_sample(struct metrics_out *o, const char *name, const char *labels,
		    uint64_t value)
{
	if (labels && *labels)
		fprintf(o->f, "%s{%s} %" PRIu64 "\n", name, labels, value);
	else
		fprintf(o->f, "%s %" PRIu64 "\n", name, value);
}

void metrics_sample_text(struct metrics_out *o, const char *name, const char *labels,
			 const char *value)
{
	if (labels && *labels)
		fprintf(o->f, "%s{%s} %s\n", name, labels, value);
	else
		fprintf(o->f, "%s %s\n", name, value);
}

const char *metrics_escape(const char *v, char *buf, size_t size)
{
	size_t j = 0;

	for (; *v && j + 3 < size; v++) {
		if (*v == '\\' || *v == '"') {
			buf[j++] = '\\';
			buf[j++] = *v;
		} else if (*v == '\n') {
			buf[j++] = '\\';
			buf[j++] = 'n';
		} else {
			buf[j++] = *v;
		}
	}
	buf[j] = 0;
	return buf;
}

static void counter(struct metrics_out *o, const char *name, const char *help,
		    uint64_t v)
{
	metrics_family(o, name, "counter", help);
	metrics_sample(o, name, "", v);
}

static void gauge(struct metrics_out *o, const char *name, const char *help,
		  uint64_t v)
{
	metrics_family(o, name, "gauge", help);
	metrics_sample(o, name, "", v);
}

/* ---- events ---- */

static void metrics_event(struct ex_sink *s, const struct ct_event *ev, ct_time_ns when)
{
	struct metrics_sink *m = (struct metrics_sink *)s;

	if ((unsigned)ev->type < 3)
		add(&m->events[ev->type], 1);
	if (ev->type != CT_EV_DESTROY)
		return;
	add(&m->destroys[(unsigned)ev->destroy_cause < N_CAUSES ? ev->destroy_cause : 0], 1);
	if (ev->destroy_cause == CT_DESTROY_TIMEOUT) {
		/* how long after its expiry the entry went: the collector's
		 * or a lookup's lateness, in the tracker's time */
		uint64_t late = ev->ts > ev->conn.expires ? ev->ts - ev->conn.expires : 0;
		unsigned b = 0;

		while (b < N_LATE_BUCKETS && (double)late / 1e9 > late_bounds_s[b])
			b++;
		add(&m->late[b], 1);
		add(&m->late_sum_ns, late);
	}
}

/* ---- entries by zone, protocol, state ---- */

struct keys {
	uint32_t *v;
	size_t n, cap;
};

static int collect_key(const struct ct_conn_info *ci, void *arg)
{
	struct keys *k = arg;

	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 4096;
		uint32_t *n = realloc(k->v, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		k->v = n;
		k->cap = cap;
	}
	k->v[k->n++] = (uint32_t)ci->orig.zone << 16 | (uint32_t)ci->orig.l4 << 8 | ci->l4state;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void entries_by_state(struct metrics_sink *m, struct metrics_out *o)
{
	struct ct_thread *thr = ct_thread_attach(m->t);
	struct keys k = { 0 };
	const char *name = "ctrack_connections";

	metrics_family(o, name, "gauge",
		       "Connections in the table now, by zone, protocol and state "
		       "(state \"none\" for protocols without states).");
	if (!thr)
		return;
	if (ex_table_walk(thr, collect_key, &k) == 0 && k.n) {
		qsort(k.v, k.n, sizeof(*k.v), cmp_u32);
		for (size_t i = 0; i < k.n;) {
			size_t j = i;
			uint8_t l4 = (uint8_t)(k.v[i] >> 8), st = (uint8_t)k.v[i];
			const char *sn = ct_l4_state_name(l4, st);
			char labels[160];

			while (j < k.n && k.v[j] == k.v[i])
				j++;
			snprintf(labels, sizeof(labels), "zone=\"%u\",protocol=\"%s\",state=\"%s\"",
				 (unsigned)(k.v[i] >> 16), ct_l4_name(l4), sn ? sn : "none");
			metrics_sample(o, name, labels, j - i);
			i = j;
		}
	}
	free(k.v);
	ct_thread_detach(thr);
}

/* ---- the whole page ---- */

static void render(struct metrics_sink *m, FILE *f)
{
	struct metrics_out o = { .f = f };
	struct ct_stats s;
	struct ct_settings set;
	static const char *const ev_names[3] = { "new", "update", "destroy" };
	char lb[96];
	uint64_t cum = 0;

	ct_table_get_stats(m->t, &s);
	ct_table_get_settings(m->t, &set);

	metrics_family(&o, "ctrack_build_info", "gauge", "ctrack's version, as a label.");
	snprintf(lb, sizeof(lb), "version=\"%s\"", CTRACK_VERSION);
	metrics_sample(&o, "ctrack_build_info", lb, 1);

	/* conntrack -S, with the kernel's names */
	counter(&o, "ctrack_stat_found_total", "Lookups that found an existing entry (conntrack -S found).", s.found);
	counter(&o, "ctrack_stat_invalid_total", "Packets classified INVALID (conntrack -S invalid).", s.invalid);
	counter(&o, "ctrack_stat_insert_total", "Entries created (conntrack -S insert).", s.insert);
	counter(&o, "ctrack_stat_insert_failed_total", "Entries that could not be inserted: the chain limit, a NATed confirm whose tuple was taken (conntrack -S insert_failed).", s.insert_failed);
	counter(&o, "ctrack_stat_drop_total", "Packets dropped for want of an entry: table full, no memory, a refused NAT confirm (conntrack -S drop).", s.drop);
	counter(&o, "ctrack_stat_early_drop_total", "Entries evicted to make room (conntrack -S early_drop).", s.early_drop);
	counter(&o, "ctrack_stat_error_total", "ICMP errors that matched no entry (conntrack -S error).", s.error);
	counter(&o, "ctrack_stat_search_restart_total", "Lookups restarted by a resize or a moved row (conntrack -S search_restart).", s.search_restart);
	counter(&o, "ctrack_stat_clash_resolve_total", "Concurrent creations of one entry merged, NAT clashes resolved (conntrack -S clash_resolve).", s.clash_resolve);
	counter(&o, "ctrack_stat_chaintoolong_total", "Inserts refused: row at its chain limit (conntrack -S chaintoolong).", s.chaintoolong);

	/* ctrack's own */
	gauge(&o, "ctrack_entries", "Entries in the table now (conntrack -C).", s.count);
	gauge(&o, "ctrack_entries_max", "The table's maximum (nf_conntrack_max; 0: none).", set.max);
	gauge(&o, "ctrack_table_rows", "Hash rows of the table now.", ct_table_rows(m->t));
	counter(&o, "ctrack_packets_total", "Packets given to the tracker.", s.packets);
	counter(&o, "ctrack_untracked_packets_total", "Packets not for conntrack (not IP, neighbour discovery, MLD, fragments until whole).", s.untracked);
	counter(&o, "ctrack_ignored_packets_total", "Packets accepted that left their entry alone.", s.ignored);
	counter(&o, "ctrack_related_packets_total", "ICMP errors matched to an entry (RELATED).", s.related);
	counter(&o, "ctrack_expired_total", "Entries removed by timeout.", s.expired);
	counter(&o, "ctrack_deleted_total", "Entries removed otherwise: protocol (RST, refused), flush, zone teardown.", s.deleted);
	counter(&o, "ctrack_resizes_total", "Online resizes of the table completed.", s.resizes);
	counter(&o, "ctrack_nat_exhausted_total", "NAT setups that found no free tuple in their range (the kernel's confirm then fails: insert_failed).", s.nat_exhausted);

	metrics_family(&o, "ctrack_invalid_packets_total", "counter", "Packets classified INVALID, by reason.");
	for (int i = 1; i < CT_PR_MAX; i++) {
		snprintf(lb, sizeof(lb), "reason=\"%s\"", ct_parse_reason_name((enum ct_parse_reason)i));
		metrics_sample(&o, "ctrack_invalid_packets_total", lb, s.invalid_by_reason[i]);
	}

	entries_by_state(m, &o);

	/* the collector */
	counter(&o, "ctrack_gc_passes_total", "Full passes of the collector.", s.gc_passes);
	counter(&o, "ctrack_gc_rows_locked_total", "Rows the collector locked.", s.gc_rows_locked);
	counter(&o, "ctrack_gc_wheel_seeds_total", "Walks over the rows that (re)built the collector's wheel.", s.gc_wheel_seeds);
	metrics_family(&o, "ctrack_expiry_lateness_seconds", "histogram",
		       "How long after its expiry time an entry was removed (collector or lookup), in the tracker's time.");
	for (unsigned b = 0; b <= N_LATE_BUCKETS; b++) {
		cum += ld(&m->late[b]);
		if (b < N_LATE_BUCKETS)
			snprintf(lb, sizeof(lb), "le=\"%g\"", late_bounds_s[b]);
		else
			snprintf(lb, sizeof(lb), "le=\"+Inf\"");
		metrics_sample(&o, "ctrack_expiry_lateness_seconds_bucket", lb, cum);
	}
	fprintf(f, "ctrack_expiry_lateness_seconds_sum %.9f\n", (double)ld(&m->late_sum_ns) / 1e9);
	metrics_sample(&o, "ctrack_expiry_lateness_seconds_count", "", cum);

	/* events */
	metrics_family(&o, "ctrack_events_total", "counter", m->destroys_only
		       ? "Events reported, by type (the daemon builds NEW and UPDATE only "
			 "for event clients: DESTROY alone here)."
		       : "Events reported, by type.");
	for (int i = m->destroys_only ? CT_EV_DESTROY : 0; i < 3; i++) {
		snprintf(lb, sizeof(lb), "type=\"%s\"", ev_names[i]);
		metrics_sample(&o, "ctrack_events_total", lb, ld(&m->events[i]));
	}
	metrics_family(&o, "ctrack_destroyed_total", "counter", "Entries destroyed (DESTROY events), by cause.");
	for (int i = 1; i < N_CAUSES; i++) {
		snprintf(lb, sizeof(lb), "cause=\"%s\"", cause_names[i]);
		metrics_sample(&o, "ctrack_destroyed_total", lb, ld(&m->destroys[i]));
	}

	/* flow export */
	{
		struct ipfix_stats is;

		memset(&is, 0, sizeof(is));
		if (m->ipfix)
			ipfix_sink_get_stats(m->ipfix, &is);
		metrics_family(&o, "ctrack_export_records_total", "counter", "Flow records encoded, by exporter.");
		metrics_sample(&o, "ctrack_export_records_total", "exporter=\"ipfix\"", is.records);
		metrics_family(&o, "ctrack_export_records_lost_total", "counter", "Flow records in messages that could not be sent.");
		metrics_sample(&o, "ctrack_export_records_lost_total", "exporter=\"ipfix\"", is.records_lost);
		metrics_family(&o, "ctrack_export_messages_total", "counter", "Messages handed to the collector's socket.");
		metrics_sample(&o, "ctrack_export_messages_total", "exporter=\"ipfix\"", is.xport.messages);
		metrics_family(&o, "ctrack_export_sent_bytes_total", "counter", "Bytes the socket took.");
		metrics_sample(&o, "ctrack_export_sent_bytes_total", "exporter=\"ipfix\"", is.xport.bytes);
		metrics_family(&o, "ctrack_export_errors_total", "counter", "Sends that failed, datagrams the collector refused, messages that could not be encoded.");
		metrics_sample(&o, "ctrack_export_errors_total", "exporter=\"ipfix\"", is.xport.send_errors + is.xport.refused + is.encode_errors);
		metrics_family(&o, "ctrack_export_template_sends_total", "counter", "Times the templates were sent.");
		metrics_sample(&o, "ctrack_export_template_sends_total", "exporter=\"ipfix\"", is.template_sends);
	}

	/* the daemon's, written whole by its providers (a family's lines must
	 * stay together); without them, there and empty */
	if (!m->n_prov) {
		metrics_family(&o, "ctrack_capture_packets_total", "counter", "Packets the capture rings delivered, by interface.");
		metrics_family(&o, "ctrack_capture_drops_total", "counter", "Packets the capture rings dropped, by ring.");
		metrics_family(&o, "ctrack_event_stream_drops_total", "counter", "Events an event-stream client lost (too slow), by client.");
	}
	for (unsigned i = 0; i < m->n_prov; i++)
		m->prov[i](&o, m->prov_arg[i]);
}

char *metrics_render(struct ex_sink *s, size_t *len)
{
	struct metrics_sink *m = (struct metrics_sink *)s;
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	if (!f)
		return NULL;
	render(m, f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

void metrics_sink_destroys_only(struct ex_sink *s)
{
	((struct metrics_sink *)s)->destroys_only = true;
}

int metrics_add_provider(struct ex_sink *s, metrics_provider_fn fn, void *arg)
{
	struct metrics_sink *m = (struct metrics_sink *)s;

	if (m->n_prov == 8)
		return -ENOSPC;
	m->prov[m->n_prov] = fn;
	m->prov_arg[m->n_prov++] = arg;
	return 0;
}

static int metrics_finish(struct ex_sink *s, struct ct_thread *thr, ct_time_ns now)
{
	struct metrics_sink *m = (struct metrics_sink *)s;
	int bad;

	if (!m->file)
		return 0;
	render(m, m->file);
	bad = ferror(m->file);
	if (fclose(m->file) != 0)
		bad = 1;
	m->file = NULL;
	if (bad) {
		snprintf(s->error, sizeof(s->error), "--metrics-file %s: cannot write it: %s",
			 m->path, strerror(errno));
		return -EIO;
	}
	return 0;
}

static void metrics_destroy(struct ex_sink *s)
{
	struct metrics_sink *m = (struct metrics_sink *)s;

	if (m->file)
		fclose(m->file);
	free(m);
}

static const struct ex_sink_ops metrics_ops = {
	.name = "metrics",
	.event = metrics_event,
	.finish = metrics_finish,
	.destroy = metrics_destroy,
};

struct ex_sink *metrics_sink_create(struct ct_table *t, const char *file,
				    struct ex_sink *ipfix, char *err, size_t errlen)
{
	struct metrics_sink *m = calloc(1, sizeof(*m));

	if (!m) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	m->base.ops = &metrics_ops;
	m->base.next_tick = UINT64_MAX;
	m->t = t;
	m->ipfix = ipfix;
	if (file) {
		snprintf(m->path, sizeof(m->path), "%s", file);
		m->file = fopen(file, "w");
		if (!m->file) {
			snprintf(err, errlen, "cannot write '%s': %s", file, strerror(errno));
			free(m);
			return NULL;
		}
	}
	return &m->base;
}
