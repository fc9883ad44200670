/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * report.c - the HTML report of a replay (report.h).
 *
 * What it keeps while the replay runs: for every connection that ended
 * (a DESTROY) its interval (first packet to the time its end is reported)
 * and protocol class, the state it ended in, its duration bucket, and the
 * ten largest by bytes and by packets; at the end the table adds the
 * connections still open.  The page is written once, at finish.
 *
 * The plots are inline SVG written here, not a charting library: a page
 * that opens from disk anywhere, years later, with no script to run and
 * nothing to fetch, and whose numbers a test can read from the DOM.  Each
 * plot is a <figure> with an id; each bar or point carries its value in a
 * data- attribute and a <title> a browser shows on hover.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>

#include "report.h"

enum { CLS_TCP, CLS_UDP, CLS_ICMP, CLS_ICMPV6, CLS_OTHER, N_CLS };
static const char *const cls_name[N_CLS] = { "tcp", "udp", "icmp", "icmpv6", "other" };
static const char *const cls_color[N_CLS] = { "#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
					      "#59a14f" };

#define N_DUR 9
static const double dur_edge_s[N_DUR - 1] = { 0.001, 0.01, 0.1, 1, 10, 60, 600, 3600 };
static const char *const dur_label[N_DUR] = {
	"< 1 ms", "1-10 ms", "10-100 ms", "0.1-1 s", "1-10 s", "10-60 s", "1-10 min",
	"10-60 min", ">= 1 h",
};

#define TOP_N 10
#define N_STATES 64     /* distinct (protocol, state) pairs kept */

struct ival {
	uint64_t start, end;   /* end UINT64_MAX: open at the end */
	uint8_t cls;
};

struct top_ent {
	uint64_t bytes, packets;
	ct_time_ns first, last;
	char desc[200];
	char state[24];
	int open;
};

struct state_count {
	char name[40];         /* "tcp TIME_WAIT" */
	uint64_t n;
};

struct report_sink {
	struct ex_sink base;
	struct ct_table *t;
	FILE *f;
	char path[512];
	char title[512];
	struct ival *iv;
	size_t n_iv, cap_iv;
	int oom;
	uint64_t dur[N_DUR];
	struct top_ent by_bytes[TOP_N], by_packets[TOP_N];
	unsigned n_by_bytes, n_by_packets;
	struct state_count ended[N_STATES], open[N_STATES];
	unsigned n_ended, n_open;
	uint64_t n_conns;
	ct_time_ns t_min, t_max;
};

static uint8_t cls_of(const struct ct_tuple *t)
{
	switch (t->l4) {
	case IPPROTO_TCP:
		return CLS_TCP;
	case IPPROTO_UDP:
		return CLS_UDP;
	case IPPROTO_ICMP:
		return CLS_ICMP;
	case IPPROTO_ICMPV6:
		return CLS_ICMPV6;
	default:
		return CLS_OTHER;
	}
}

/* ---- collecting ---- */

/* The protocol's state, or for protocols without states what conntrack
 * shows of them: ASSURED, a reply seen, or none. */
static const char *state_of(const struct ct_conn_info *ci)
{
	return ci->state_name ? ci->state_name :
	       (ci->status & CT_ST_ASSURED) ? "ASSURED" :
	       (ci->status & CT_ST_SEEN_REPLY) ? "REPLIED" : "UNREPLIED";
}

static void count_state(struct state_count *v, unsigned *n, const struct ct_conn_info *ci)
{
	char name[40];

	snprintf(name, sizeof(name), "%s %s", ct_l4_name(ci->orig.l4), state_of(ci));
	for (unsigned i = 0; i < *n; i++)
		if (!strcmp(v[i].name, name)) {
			v[i].n++;
			return;
		}
	if (*n == N_STATES) {      /* cannot happen with today's protocols */
		v[N_STATES - 1].n++;
		return;
	}
	snprintf(v[*n].name, sizeof(v[*n].name), "%s", name);
	v[(*n)++].n = 1;
}

/* Keep @ci in a top list ordered by @key, descending. */
static void top_add(struct top_ent *v, unsigned *n, const struct ct_conn_info *ci,
		    int by_bytes, int open)
{
	uint64_t bytes = ci->bytes[0] + ci->bytes[1];
	uint64_t packets = ci->packets[0] + ci->packets[1];
	uint64_t key = by_bytes ? bytes : packets;
	unsigned pos = *n;
	char tuple[160];

	while (pos > 0 && (by_bytes ? v[pos - 1].bytes : v[pos - 1].packets) < key)
		pos--;
	if (pos >= TOP_N)
		return;
	if (*n < TOP_N)
		(*n)++;
	memmove(&v[pos + 1], &v[pos], (*n - 1 - pos) * sizeof(*v));
	ct_tuple_format(&ci->orig, tuple, sizeof(tuple));
	snprintf(v[pos].desc, sizeof(v[pos].desc), "%s %s%s", ct_l4_name(ci->orig.l4), tuple,
		 ci->orig.zone ? " zone" : "");
	if (ci->orig.zone) {
		size_t l = strlen(v[pos].desc);

		snprintf(v[pos].desc + l, sizeof(v[pos].desc) - l, "=%u", ci->orig.zone);
	}
	snprintf(v[pos].state, sizeof(v[pos].state), "%s", state_of(ci));
	v[pos].bytes = bytes;
	v[pos].packets = packets;
	v[pos].first = ci->first_seen;
	v[pos].last = ci->last_seen;
	v[pos].open = open;
}

static void add_conn(struct report_sink *r, const struct ct_conn_info *ci, uint64_t end,
		     int open)
{
	double d = (double)(ci->last_seen - ci->first_seen) / 1e9;
	unsigned b = 0;

	if (r->n_iv == r->cap_iv && !r->oom) {
		size_t cap = r->cap_iv ? r->cap_iv * 2 : 4096;
		struct ival *n = realloc(r->iv, cap * sizeof(*n));

		if (!n)
			r->oom = 1;
		else {
			r->iv = n;
			r->cap_iv = cap;
		}
	}
	if (r->n_iv < r->cap_iv) {
		r->iv[r->n_iv].start = ci->first_seen;
		r->iv[r->n_iv].end = end;
		r->iv[r->n_iv++].cls = cls_of(&ci->orig);
	}
	while (b < N_DUR - 1 && d >= dur_edge_s[b])
		b++;
	r->dur[b]++;
	r->n_conns++;
	top_add(r->by_bytes, &r->n_by_bytes, ci, 1, open);
	top_add(r->by_packets, &r->n_by_packets, ci, 0, open);
	if (open)
		count_state(r->open, &r->n_open, ci);
	else
		count_state(r->ended, &r->n_ended, ci);
	if (!r->t_min || ci->first_seen < r->t_min)
		r->t_min = ci->first_seen;
	if (!open && end > r->t_max)
		r->t_max = end;
}

static void report_event(struct ex_sink *s, const struct ct_event *ev, ct_time_ns when)
{
	struct report_sink *r = (struct report_sink *)s;

	if (ev->type == CT_EV_DESTROY)
		add_conn(r, &ev->conn, when, 0);
}

static int add_open(const struct ct_conn_info *ci, void *arg)
{
	add_conn(arg, ci, UINT64_MAX, 1);
	return 0;
}

/* ---- writing ---- */

static void esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* A round step for an axis of @max over about @ticks ticks. */
static double nice_step(double max, int ticks)
{
	double raw = max / ticks, p, m;

	if (raw <= 0)
		return 1;
	p = pow(10, floor(log10(raw)));
	m = raw / p;
	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static void fmt_num(char *buf, size_t n, double v)
{
	if (v >= 1e9)
		snprintf(buf, n, "%.3gG", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, n, "%.3gM", v / 1e6);
	else if (v >= 1e4)
		snprintf(buf, n, "%.3gk", v / 1e3);
	else
		snprintf(buf, n, "%g", v);
}

static void fmt_bytes(char *buf, size_t n, double v)
{
	if (v >= 1e9)
		snprintf(buf, n, "%.2f GB", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, n, "%.2f MB", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, n, "%.1f kB", v / 1e3);
	else
		snprintf(buf, n, "%.0f B", v);
}

#define W 880
#define H 260
#define ML 64   /* margins: left, right, top, bottom */
#define MR 16
#define MT 16
#define MB 40

/* Axes of a time plot: y ticks from @ymin to @ymax, x in seconds. */
static void axes(FILE *f, double xmax_s, double ymin, double ymax, const char *ylabel)
{
	double ys = nice_step(ymax - ymin, 5), xs = nice_step(xmax_s, 8);
	double pw = W - ML - MR, ph = H - MT - MB;
	char b[32];

	/* integer counters: a double one would gather rounding errors */
	for (long k = (long)ceil(ymin / ys); (double)k * ys <= ymax + ys * 1e-9; k++) {
		double y = (double)k * ys;
		double py = MT + ph - (y - ymin) / (ymax - ymin) * ph;

		fmt_num(b, sizeof(b), fabs(y));
		fprintf(f, "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' class='grid'/>"
			"<text x='%d' y='%.1f' class='yt'>%s</text>\n", ML, W - MR, py, py, ML - 6,
			py + 4, b);
	}
	for (long k = 0; (double)k * xs <= xmax_s + xs * 1e-9; k++) {
		double x = (double)k * xs;
		double px = ML + x / xmax_s * pw;

		fmt_num(b, sizeof(b), x);
		fprintf(f, "<text x='%.1f' y='%d' class='xt'>%s</text>\n", px, H - MB + 16, b);
	}
	fprintf(f, "<text x='%d' y='%d' class='xl'>seconds of capture time</text>"
		"<text x='14' y='%d' class='yl' transform='rotate(-90 14 %d)'>%s</text>\n",
		ML + (W - ML - MR) / 2, H - 6, MT + (H - MT - MB) / 2, MT + (H - MT - MB) / 2,
		ylabel);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Connections open at each of @np sample times, stacked by protocol. */
static void plot_open(struct report_sink *r, FILE *f, ct_time_ns t0, ct_time_ns t1)
{
	enum { NP = 240 };
	uint64_t *ev = malloc((r->n_iv * 2 + 1) * sizeof(*ev));
	uint64_t open[NP + 1][N_CLS];
	double span = (double)(t1 - t0), ymax = 1, pw = W - ML - MR, ph = H - MT - MB;
	int64_t cur[N_CLS] = { 0 };
	size_t n = 0, k = 0;

	memset(open, 0, sizeof(open));
	if (!ev)
		return;
	if (span <= 0)
		span = 1;
	/* a sweep: +1 at each start, -1 at each end, in time order; the
	 * low bit says which (an end sorts before a start at one time, so a
	 * connection that ends exactly at a sample time is not open there) */
	for (size_t i = 0; i < r->n_iv; i++) {
		ev[n++] = (r->iv[i].start - t0) << 4 | 8 | r->iv[i].cls;
		if (r->iv[i].end != UINT64_MAX)
			ev[n++] = (r->iv[i].end - t0) << 4 | r->iv[i].cls;
	}
	qsort(ev, n, sizeof(*ev), cmp_u64);
	for (int p = 0; p <= NP; p++) {
		/* open at @ts: started at or before it, not ended by it; the
		 * last sample is the end itself, where what is open is the
		 * table */
		uint64_t ts = p == NP ? t1 - t0 : (uint64_t)(span * p / NP);

		while (k < n && (ev[k] >> 4) <= ts) {
			cur[ev[k] & 7] += (ev[k] & 8) ? 1 : -1;
			k++;
		}
		for (int c = 0; c < N_CLS; c++)
			open[p][c] = cur[c] > 0 ? (uint64_t)cur[c] : 0;
	}
	free(ev);
	for (int p = 0; p <= NP; p++) {
		uint64_t s = 0;

		for (int c = 0; c < N_CLS; c++)
			s += open[p][c];
		if (s > ymax)
			ymax = (double)s;
	}
	ymax = ceil(ymax / nice_step(ymax, 5)) * nice_step(ymax, 5);
	fprintf(f, "<figure id='open-by-protocol'><figcaption>Connections open over capture "
		"time, by protocol</figcaption>\n<svg viewBox='0 0 %d %d' role='img'>\n", W, H);
	axes(f, span / 1e9, 0, ymax, "connections open");
	/* stacked areas, bottom class first */
	for (int c = N_CLS - 1; c >= 0; c--) {
		fprintf(f, "<polygon class='area' fill='%s' data-protocol='%s' points='",
			cls_color[c], cls_name[c]);
		for (int p = 0; p <= NP; p++) {
			uint64_t s = 0;

			for (int d = 0; d <= c; d++)
				s += open[p][d];
			fprintf(f, "%.1f,%.1f ", ML + pw * p / NP, MT + ph - s / ymax * ph);
		}
		fprintf(f, "%.1f,%.1f %.1f,%.1f'/>\n", ML + pw, (double)MT + ph, (double)ML,
			(double)MT + ph);
	}
	fprintf(f, "</svg>\n<div class='legend'>");
	for (int c = 0; c < N_CLS; c++)
		fprintf(f, "<span class='series' data-protocol='%s' data-open-at-end='%" PRIu64
			"'><i style='background:%s'></i>%s: %" PRIu64 " open at the end</span>",
			cls_name[c], open[NP][c], cls_color[c], cls_name[c], open[NP][c]);
	fprintf(f, "</div></figure>\n");
}

/* New and destroyed connections per second, in bins of whole seconds. */
static void plot_rates(struct report_sink *r, FILE *f, ct_time_ns t0, ct_time_ns t1)
{
	double span_s = (double)(t1 - t0) / 1e9;
	uint64_t width_s = (uint64_t)ceil(nice_step(span_s > 1 ? span_s : 1, 100));
	size_t nb, i;
	uint64_t *nw, *ds, mx = 1;
	double pw = W - ML - MR, ph = H - MT - MB, bw, ymax;
	char ylabel[48];

	if (width_s < 1)
		width_s = 1;
	nb = (size_t)(span_s / (double)width_s) + 1;
	nw = calloc(nb, sizeof(*nw));
	ds = calloc(nb, sizeof(*ds));
	if (!nw || !ds) {
		free(nw);
		free(ds);
		return;
	}
	for (i = 0; i < r->n_iv; i++) {
		size_t b = (size_t)((r->iv[i].start - t0) / 1000000000ull / width_s);

		nw[b < nb ? b : nb - 1]++;
		if (r->iv[i].end != UINT64_MAX) {
			b = (size_t)((r->iv[i].end - t0) / 1000000000ull / width_s);
			ds[b < nb ? b : nb - 1]++;
		}
	}
	for (i = 0; i < nb; i++) {
		if (nw[i] > mx)
			mx = nw[i];
		if (ds[i] > mx)
			mx = ds[i];
	}
	/* counts per bin: per second when a bin is a second, and whole
	 * numbers on the axis whatever the bin */
	ymax = (double)mx;
	ymax = ceil(ymax / nice_step(ymax, 4)) * nice_step(ymax, 4);
	bw = pw / (double)nb;
	snprintf(ylabel, sizeof(ylabel), width_s == 1 ? "per second" : "per %" PRIu64 " s",
		 width_s);
	fprintf(f, "<figure id='new-destroyed'><figcaption>New (up) and destroyed (down) "
		"connections %s</figcaption>\n"
		"<svg viewBox='0 0 %d %d' role='img' data-bin-seconds='%" PRIu64 "'>\n",
		ylabel, W, H, width_s);
	axes(f, (double)(nb * width_s), -ymax, ymax, ylabel);
	for (i = 0; i < nb; i++) {
		double x = ML + bw * (double)i, mid = MT + ph / 2;
		double hn = (double)nw[i] / ymax * ph / 2;
		double hd = (double)ds[i] / ymax * ph / 2;

		fprintf(f, "<rect class='bar new' x='%.2f' y='%.2f' width='%.2f' height='%.2f' "
			"data-kind='new' data-bin='%zu' data-count='%" PRIu64 "'><title>%" PRIu64
			" s: %" PRIu64 " new</title></rect>", x, mid - hn, bw > 2 ? bw - 1 : bw, hn,
			i, nw[i], i * width_s, nw[i]);
		fprintf(f, "<rect class='bar destroyed' x='%.2f' y='%.2f' width='%.2f' "
			"height='%.2f' data-kind='destroyed' data-bin='%zu' data-count='%" PRIu64
			"'><title>%" PRIu64 " s: %" PRIu64 " destroyed</title></rect>\n", x, mid,
			bw > 2 ? bw - 1 : bw, hd, i, ds[i], i * width_s, ds[i]);
	}
	fprintf(f, "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' class='zero'/></svg>\n"
		"<div class='legend'><span><i style='background:#4e79a7'></i>new</span>"
		"<span><i style='background:#e15759'></i>destroyed</span></div></figure>\n",
		ML, W - MR, MT + ph / 2, MT + ph / 2);
	free(nw);
	free(ds);
}

/* Horizontal bars: @n labels and values, largest first if @sort. */
static void plot_hbars(FILE *f, const char *id, const char *caption, const char *kind,
		       const char *const *labels, const uint64_t *values, unsigned n,
		       const char *color)
{
	uint64_t mx = 1;
	const int lw = 220, bh = 22;
	int h = (int)n * bh + 10;

	for (unsigned i = 0; i < n; i++)
		if (values[i] > mx)
			mx = values[i];
	fprintf(f, "<figure id='%s'><figcaption>%s</figcaption>\n"
		"<svg viewBox='0 0 %d %d' role='img'>\n", id, caption, W, h > 30 ? h : 30);
	if (!n)
		fprintf(f, "<text x='10' y='20' class='none'>none</text>\n");
	for (unsigned i = 0; i < n; i++) {
		double w = (double)values[i] / (double)mx * (W - lw - 90);
		int y = 5 + (int)i * bh;

		fprintf(f, "<text x='%d' y='%d' class='bl'>", lw - 8, y + 15);
		esc(f, labels[i]);
		fprintf(f, "</text><rect class='hbar' x='%d' y='%d' width='%.1f' height='%d' "
			"fill='%s' data-kind='%s' data-label='", lw, y + 2, w > 0 ? w : 0, bh - 5,
			color, kind);
		esc(f, labels[i]);
		fprintf(f, "' data-value='%" PRIu64 "'><title>", values[i]);
		esc(f, labels[i]);
		fprintf(f, ": %" PRIu64 "</title></rect><text x='%.1f' y='%d' class='bv'>%" PRIu64
			"</text>\n", values[i], lw + w + 6, y + 15, values[i]);
	}
	fprintf(f, "</svg></figure>\n");
}

static int cmp_state(const void *a, const void *b)
{
	const struct state_count *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void plot_states(FILE *f, const char *id, const char *caption, const char *kind,
			struct state_count *v, unsigned n, const char *color)
{
	const char *labels[N_STATES];
	uint64_t values[N_STATES];

	qsort(v, n, sizeof(*v), cmp_state);
	for (unsigned i = 0; i < n; i++) {
		labels[i] = v[i].name;
		values[i] = v[i].n;
	}
	plot_hbars(f, id, caption, kind, labels, values, n, color);
}

static void fmt_time(char *buf, size_t n, ct_time_ns ns)
{
	time_t s = (time_t)(ns / 1000000000ull);
	struct tm tm;

	gmtime_r(&s, &tm);
	snprintf(buf, n, "%04d-%02d-%02d %02d:%02d:%02d.%03u UTC", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (unsigned)(ns / 1000000u % 1000u));
}

static void top_table(FILE *f, const char *id, const char *caption, const struct top_ent *v,
		      unsigned n, int by_bytes)
{
	uint64_t mx = n ? (by_bytes ? v[0].bytes : v[0].packets) : 1;

	fprintf(f, "<figure id='%s'><figcaption>%s</figcaption>\n<table class='top'>"
		"<tr><th>#</th><th>connection</th><th>state</th><th>duration</th>"
		"<th>packets</th><th>bytes</th><th></th></tr>\n", id, caption);
	for (unsigned i = 0; i < n; i++) {
		char b[32];
		uint64_t key = by_bytes ? v[i].bytes : v[i].packets;

		fmt_bytes(b, sizeof(b), (double)v[i].bytes);
		fprintf(f, "<tr class='conn' data-rank='%u' data-packets='%" PRIu64 "' data-bytes='%"
			PRIu64 "'><td>%u</td><td class='tuple'>", i + 1, v[i].packets, v[i].bytes,
			i + 1);
		esc(f, v[i].desc);
		fprintf(f, "</td><td>%s%s</td><td>%.3f s</td><td>%" PRIu64 "</td><td>%s</td>"
			"<td class='spark'><svg viewBox='0 0 120 10' width='120' height='10'>"
			"<rect x='0' y='0' height='10' width='%.1f' fill='%s'/></svg></td></tr>\n",
			v[i].state, v[i].open ? " (open)" : "",
			(double)(v[i].last - v[i].first) / 1e9, v[i].packets, b,
			mx ? 120.0 * (double)key / (double)mx : 0, by_bytes ? "#4e79a7" : "#f28e2b");
	}
	if (!n)
		fprintf(f, "<tr><td colspan='7'>none</td></tr>\n");
	fprintf(f, "</table></figure>\n");
}

static const char css[] =
"body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px auto;"
"max-width:920px;color:#222;background:#fafafa}"
"h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px}"
".sub{color:#666;margin-bottom:12px}"
".cards{display:flex;gap:10px;flex-wrap:wrap;margin:12px 0}"
".card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px 14px;min-width:110px}"
".card b{display:block;font-size:20px}.card span{color:#666;font-size:12px}"
"figure{background:#fff;border:1px solid #ddd;border-radius:6px;margin:12px 0;padding:10px}"
"figcaption{font-weight:600;margin-bottom:6px}svg{width:100%;height:auto;display:block}"
".grid{stroke:#e6e6e6}.zero{stroke:#888}.yt{font-size:11px;text-anchor:end;fill:#555}"
".xt{font-size:11px;text-anchor:middle;fill:#555}.xl,.yl{font-size:12px;fill:#444;"
"text-anchor:middle}.area{stroke:#fff;stroke-width:.5}.bar.new{fill:#4e79a7}"
".bar.destroyed{fill:#e15759}.bl{font-size:12px;text-anchor:end;fill:#333}"
".bv{font-size:12px;fill:#333}.none{fill:#888}"
".legend{font-size:12px;color:#444;margin-top:4px}.legend span{margin-right:16px}"
".legend i{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px}"
"table.top{border-collapse:collapse;width:100%;font-size:12px}"
".top th{text-align:left;border-bottom:1px solid #ccc;padding:3px 6px}"
".top td{padding:3px 6px;border-bottom:1px solid #eee}.tuple{font-family:ui-monospace,"
"monospace;font-size:11px}.spark svg{width:120px}";

static int write_page(struct report_sink *r, FILE *f, ct_time_ns now)
{
	struct ct_stats st;
	ct_time_ns t0 = r->t_min ? r->t_min : now, t1 = now > r->t_max ? now : r->t_max;
	char a[64], b[64];
	const char *rl[CT_PR_MAX];
	uint64_t rv[CT_PR_MAX];
	unsigned nr = 0;

	ct_table_get_stats(r->t, &st);
	fmt_time(a, sizeof(a), t0);
	fmt_time(b, sizeof(b), t1);
	fprintf(f, "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
		"<meta name='generator' content='ctrack %s'><title>ctrack report: ",
		CTRACK_VERSION);
	esc(f, r->title);
	fprintf(f, "</title><style>%s</style></head>\n<body>\n<h1>ctrack report</h1>\n"
		"<div class='sub'>", css);
	esc(f, r->title);
	fprintf(f, "<br>%s to %s (%.3f s of capture time)%s</div>\n", a, b,
		(double)(t1 - t0) / 1e9,
		r->oom ? "<br><b>out of memory: the plots over time miss connections</b>" : "");
	fprintf(f, "<div class='cards' id='summary' data-connections='%" PRIu64 "' "
		"data-packets='%" PRIu64 "' data-invalid='%" PRIu64 "' data-open-at-end='%"
		PRIu64 "'>"
		"<div class='card'><b>%" PRIu64 "</b><span>connections</span></div>"
		"<div class='card'><b>%" PRIu64 "</b><span>open at the end</span></div>"
		"<div class='card'><b>%" PRIu64 "</b><span>packets</span></div>"
		"<div class='card'><b>%" PRIu64 "</b><span>INVALID packets</span></div>"
		"<div class='card'><b>%" PRIu64 "</b><span>RELATED (ICMP errors)</span></div>"
		"<div class='card'><b>%" PRIu64 "</b><span>early drops</span></div></div>\n",
		r->n_conns, st.packets, st.invalid, st.count, r->n_conns, st.count, st.packets,
		st.invalid, st.related, st.early_drop);

	fputs("<h2>Over time</h2>\n", f);
	plot_open(r, f, t0, t1);
	plot_rates(r, f, t0, t1);

	fputs("<h2>States</h2>\n", f);
	plot_states(f, "states-open", "Connections open at the end, by protocol and state",
		    "open", r->open, r->n_open, "#4e79a7");
	plot_states(f, "states-ended", "Connections that ended, by the state they ended in",
		    "ended", r->ended, r->n_ended, "#9c755f");

	fputs("<h2>Top connections</h2>\n", f);
	top_table(f, "top-bytes", "Top connections by bytes (both directions)", r->by_bytes,
		  r->n_by_bytes, 1);
	top_table(f, "top-packets", "Top connections by packets (both directions)",
		  r->by_packets, r->n_by_packets, 0);

	fputs("<h2>Durations</h2>\n", f);
	plot_hbars(f, "durations", "Connection durations (first to last packet)", "duration",
		   dur_label, r->dur, N_DUR, "#59a14f");

	fputs("<h2>INVALID packets</h2>\n", f);
	for (int i = 1; i < CT_PR_MAX; i++)
		if (st.invalid_by_reason[i]) {
			rl[nr] = ct_parse_reason_name((enum ct_parse_reason)i);
			rv[nr++] = st.invalid_by_reason[i];
		}
	/* largest first */
	for (unsigned i = 1; i < nr; i++)
		for (unsigned j = i; j > 0 && rv[j] > rv[j - 1]; j--) {
			uint64_t tv = rv[j];
			const char *tl = rl[j];

			rv[j] = rv[j - 1];
			rl[j] = rl[j - 1];
			rv[j - 1] = tv;
			rl[j - 1] = tl;
		}
	plot_hbars(f, "invalid", "INVALID packets by reason", "invalid", rl, rv, nr, "#e15759");
	fprintf(f, "<p class='sub'>Written by ctrack %s; nothing in this page is fetched "
		"from anywhere.</p>\n</body></html>\n", CTRACK_VERSION);
	return ferror(f) ? -EIO : 0;
}

static int report_finish(struct ex_sink *s, struct ct_thread *thr, ct_time_ns now)
{
	struct report_sink *r = (struct report_sink *)s;
	int rc;

	ct_table_dump(thr, -1, add_open, r);
	rc = write_page(r, r->f, now);
	if (fclose(r->f) != 0)
		rc = -errno;
	r->f = NULL;
	if (rc < 0)
		snprintf(s->error, sizeof(s->error), "--report %s: cannot write it: %s", r->path,
			 strerror(-rc));
	return rc;
}

static void report_destroy(struct ex_sink *s)
{
	struct report_sink *r = (struct report_sink *)s;

	if (r->f)
		fclose(r->f);
	free(r->iv);
	free(r);
}

static const struct ex_sink_ops report_ops = {
	.name = "report",
	.event = report_event,
	.finish = report_finish,
	.destroy = report_destroy,
};

struct ex_sink *report_sink_create(const char *path, struct ct_table *t,
				   const char *const *inputs, char *err, size_t errlen)
{
	struct report_sink *r = calloc(1, sizeof(*r));
	size_t l = 0;

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->base.ops = &report_ops;
	r->base.next_tick = UINT64_MAX;
	r->t = t;
	snprintf(r->path, sizeof(r->path), "%s", path);
	r->f = fopen(path, "w");
	if (!r->f) {
		snprintf(err, errlen, "cannot write '%s': %s", path, strerror(errno));
		free(r);
		return NULL;
	}
	for (const char *const *p = inputs; p && *p && l + 2 < sizeof(r->title); p++) {
		int n = snprintf(r->title + l, sizeof(r->title) - l, "%s%s", l ? ", " : "", *p);

		if (n < 0)
			break;
		l += (size_t)n;
		if (l >= sizeof(r->title))
			l = sizeof(r->title) - 1;
	}
	if (!l)
		snprintf(r->title, sizeof(r->title), "capture");
	return &r->base;
}
