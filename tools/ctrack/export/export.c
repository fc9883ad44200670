/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * export.c - options and start-up of the export sinks (export.h).
 *
 * Everything a person can get wrong is checked before the first packet:
 * a HOST:PORT without a port, a transport that is neither udp nor tcp, a
 * collector that refuses a TCP connection, a report or metrics file that
 * cannot be written.  What can only go wrong later (a UDP collector that
 * is not there, a TCP one that goes away) is counted by the sink and
 * told at the end.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "metrics.h"
#include "report.h"

struct ex_state {
	struct ex_sink *ipfix;
	struct ex_sink *metrics;
	struct metrics_http *http;
	char host[256];
	char port[32];
	char cmd[32];
};

void ex_opts_init(struct ex_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->ipfix_cfg.proto = IPFIX_UDP;
	o->ipfix_cfg.domain = 1;
}

static int parse_u32(const char *where, const char *arg, uint32_t min, uint32_t max,
		     uint32_t *out, char *err, size_t errlen)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (end == arg || *end || errno || v < min || v > max || arg[0] == '-') {
		snprintf(err, errlen, "%s takes a number from %" PRIu32 " to %" PRIu32
			 ", got '%s'", where, min, max, arg);
		return -1;
	}
	*out = (uint32_t)v;
	return 1;
}

static int copy_arg(char *dst, size_t size, const char *where, const char *arg, char *err,
		    size_t errlen)
{
	if (!*arg || strlen(arg) >= size) {
		snprintf(err, errlen, "%s takes a value of 1 to %zu bytes", where, size - 1);
		return -1;
	}
	memcpy(dst, arg, strlen(arg) + 1);
	return 1;
}

int ex_opts_apply(struct ex_opts *o, int code, const char *arg, const char *where,
		  char *err, size_t errlen)
{
	struct ipfix_config *c = &o->ipfix_cfg;

	switch (code) {
	case EX_OPT_IPFIX: {
		const char *colon = strrchr(arg, ':');

		if (!colon || colon == arg || !colon[1] ||
		    (strchr(arg, ':') != colon && arg[0] != '[')) {
			snprintf(err, errlen, "%s takes HOST:PORT (an IPv6 address in brackets: "
				 "[::1]:4739), got '%s'", where, arg);
			return -1;
		}
		return copy_arg(o->ipfix, sizeof(o->ipfix), where, arg, err, errlen);
	}
	case EX_OPT_IPFIX_TRANSPORT:
		if (!strcmp(arg, "udp"))
			c->proto = IPFIX_UDP;
		else if (!strcmp(arg, "tcp"))
			c->proto = IPFIX_TCP;
		else {
			snprintf(err, errlen, "%s takes udp or tcp, got '%s'", where, arg);
			return -1;
		}
		return 1;
	case EX_OPT_IPFIX_ACTIVE:
		return parse_u32(where, arg, 1, 86400 * 7, &c->active_timeout_s, err, errlen);
	case EX_OPT_IPFIX_UNIFLOW:
		c->uniflow = true;
		return 1;
	case EX_OPT_IPFIX_NO_FINAL:
		c->no_final = true;
		return 1;
	case EX_OPT_IPFIX_REFRESH:
		return parse_u32(where, arg, 1, 86400, &c->template_refresh_s, err, errlen);
	case EX_OPT_IPFIX_REFRESH_MSGS:
		return parse_u32(where, arg, 1, 1000000, &c->template_refresh_msgs, err, errlen);
	case EX_OPT_IPFIX_DOMAIN:
		return parse_u32(where, arg, 0, UINT32_MAX, &c->domain, err, errlen);
	case EX_OPT_IPFIX_MTU:
		return parse_u32(where, arg, 512, 65000, &c->mtu, err, errlen);
	case EX_OPT_METRICS_FILE:
		return copy_arg(o->metrics_file, sizeof(o->metrics_file), where, arg, err, errlen);
	case EX_OPT_METRICS_LISTEN:
		return copy_arg(o->metrics_listen, sizeof(o->metrics_listen), where, arg, err,
				errlen);
	case EX_OPT_REPORT:
		return copy_arg(o->report, sizeof(o->report), where, arg, err, errlen);
	default:
		return 0;
	}
}

int ex_opts_parse(struct ex_opts *o, const char *cmd, int code, const char *arg)
{
	char err[512], where[64];
	int r;

	snprintf(where, sizeof(where), "--%s", ex_opt_name(code));
	r = ex_opts_apply(o, code, arg, where, err, sizeof(err));
	if (r < 0)
		fprintf(stderr, "%s: %s\n", cmd, err);
	return r;
}

const char *ex_opt_name(int code)
{
	static const struct option opts[] = { EX_LONG_OPTIONS };

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (opts[i].val == code)
			return opts[i].name;
	return "?";
}

bool ex_opts_same(const struct ex_opts *a, const struct ex_opts *b)
{
	const struct ipfix_config *x = &a->ipfix_cfg, *y = &b->ipfix_cfg;

	return !strcmp(a->ipfix, b->ipfix) && !strcmp(a->metrics_listen, b->metrics_listen) &&
	       !strcmp(a->metrics_file, b->metrics_file) && x->proto == y->proto &&
	       x->uniflow == y->uniflow && x->no_final == y->no_final &&
	       x->active_timeout_s == y->active_timeout_s &&
	       x->template_refresh_s == y->template_refresh_s &&
	       x->template_refresh_msgs == y->template_refresh_msgs &&
	       x->domain == y->domain && x->mtu == y->mtu;
}

void ex_opts_usage(FILE *out)
{
	fputs(
"Flow export, metrics, report (docs/export.md):\n"
"      --ipfix HOST:PORT  send a flow record (IPFIX, RFC 7011) to the collector\n"
"                         at HOST:PORT for each connection that ends, and at\n"
"                         the end for those still open\n"
"      --ipfix-transport udp|tcp\n"
"                         default udp; a TCP collector must accept at start\n"
"      --ipfix-active-timeout SECONDS\n"
"                         also report connections open that long, again\n"
"                         every SECONDS (records carry counts since the last)\n"
"      --ipfix-uniflow    one record per direction instead of a biflow with\n"
"                         RFC 5103 reverse counters\n"
"      --ipfix-no-final   do not report the connections open at the end\n"
"      --ipfix-template-refresh SECONDS, --ipfix-template-every MESSAGES\n"
"                         UDP: send the templates again this often (60 s,\n"
"                         100 messages), for collectors that start late\n"
"      --ipfix-domain N   observation domain id (default 1)\n"
"      --ipfix-mtu BYTES  UDP: largest message (default 1400)\n"
"      --metrics-file FILE\n"
"                         write the final counters as Prometheus text\n"
"      --metrics-listen ADDR:PORT\n"
"                         serve them (GET /metrics) while the replay runs\n"
"      --report FILE.html write a page with plots of the replay: connections\n"
"                         open by protocol, new and ended per second, states,\n"
"                         top connections, durations, INVALID by reason\n",
	      out);
}

void ex_table_config(struct ex_opts *o, struct ct_table_config *cfg)
{
	o->ipfix_cfg.nat = cfg->nat;
	if (o->ipfix[0] || o->report[0])
		cfg->tcp_flags = true;
}

bool ex_wants_events(const struct ex_opts *o)
{
	return ex_event_mask(o) != 0;
}

unsigned ex_event_mask(const struct ex_opts *o)
{
	if (o->report[0] || o->metrics_file[0] || o->metrics_listen[0])
		return 1u << CT_EV_NEW | 1u << CT_EV_UPDATE | 1u << CT_EV_DESTROY;
	return o->ipfix[0] ? 1u << CT_EV_DESTROY : 0;
}

int ex_start(const struct ex_opts *o, const char *cmd, struct ct_table *t,
	     struct ex_sinks *sinks, struct ex_state **out)
{
	struct ex_state *st = calloc(1, sizeof(*st));
	char err[512];

	memset(sinks, 0, sizeof(*sinks));
	sinks->next_tick = UINT64_MAX;
	*out = st;
	if (!st) {
		fprintf(stderr, "%s: out of memory\n", cmd);
		return -1;
	}
	snprintf(st->cmd, sizeof(st->cmd), "%s", cmd);
	if (o->report[0]) {
		struct ex_sink *r = report_sink_create(o->report, t, o->inputs, err, sizeof(err));

		if (!r) {
			fprintf(stderr, "%s: --report %s\n", cmd, err);
			return -1;
		}
		ex_sinks_add(sinks, r);
	}
	if (o->ipfix[0]) {
		struct ipfix_config c = o->ipfix_cfg;
		const char *colon = strrchr(o->ipfix, ':');
		struct ct_settings set;

		snprintf(st->host, sizeof(st->host), "%.*s", (int)(colon - o->ipfix), o->ipfix);
		snprintf(st->port, sizeof(st->port), "%s", colon + 1);
		c.host = st->host;
		c.port = st->port;
		st->ipfix = ipfix_sink_create(&c, err, sizeof(err));
		if (!st->ipfix) {
			fprintf(stderr, "%s: --ipfix %s: %s\n", cmd, o->ipfix, err);
			return -1;
		}
		ex_sinks_add(sinks, st->ipfix);
		ct_table_get_settings(t, &set);
		if (!set.acct)
			fprintf(stderr, "%s: note: nf_conntrack_acct is 0: flow records "
				"carry no packet or byte counts\n", cmd);
	}
	if (o->metrics_file[0] || o->metrics_listen[0]) {
		st->metrics = metrics_sink_create(t, o->metrics_file[0] ? o->metrics_file : NULL,
						  st->ipfix, err, sizeof(err));
		if (!st->metrics) {
			fprintf(stderr, "%s: --metrics-file %s\n", cmd, err);
			return -1;
		}
		ex_sinks_add(sinks, st->metrics);
		if (o->metrics_listen[0]) {
			const char *lis = o->metrics_listen;

			if (metrics_http_start(st->metrics, lis, &st->http, err, sizeof(err)) < 0) {
				fprintf(stderr, "%s: --metrics-listen %s: %s\n", cmd, lis, err);
				return -1;
			}
			fprintf(stderr, "%s: serving metrics on http://%s/metrics\n", cmd,
				metrics_http_address(st->http));
		}
	}
	return 0;
}

int ex_finish(struct ex_state *st, struct ex_sinks *sinks, struct ct_thread *thr,
	      ct_time_ns now)
{
	int rc = 0;

	for (struct ex_sink *s = sinks->head; s; s = s->next) {
		int r;

		if (!s->ops->finish)
			continue;
		r = s->ops->finish(s, thr, now);
		if (s->error[0])
			fprintf(stderr, "%s: %s\n", st && st->cmd[0] ? st->cmd : "ctrack", s->error);
		if (r < 0)
			rc = -1;
	}
	return rc;
}

void ex_stop(struct ex_state *st, struct ex_sinks *sinks)
{
	if (st && st->http)
		metrics_http_stop(st->http);
	ex_sinks_destroy(sinks);
	free(st);
}

struct ex_sink *ex_state_ipfix(const struct ex_state *st)
{
	return st ? st->ipfix : NULL;
}

struct ex_sink *ex_state_metrics(const struct ex_state *st)
{
	return st ? st->metrics : NULL;
}

const char *ex_state_metrics_address(const struct ex_state *st)
{
	return st && st->http ? metrics_http_address(st->http) : NULL;
}
