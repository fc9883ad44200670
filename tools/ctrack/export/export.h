/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * export.h - the door of tools/ctrack/export/: the options `ctrack read`
 * (and later the daemon) takes for IPFIX export, metrics and the report,
 * and the sinks they become.
 *
 * A command adds EX_LONG_OPTIONS to its getopt_long table, hands every
 * option getopt returns that it does not know to ex_opts_parse(), prints
 * ex_opts_usage() in its --help, creates its table with
 * ex_table_config() applied, and calls ex_start() once the table exists.
 * From then on it passes each event and, when ex_sinks.next_tick is
 * reached, a tick to the sinks (sink.h), and at the end ex_finish().
 * Messages for people are printed here (this is tool code), prefixed with
 * the command's name.
 */
#ifndef CTRACK_TOOL_EXPORT_EXPORT_H
#define CTRACK_TOOL_EXPORT_EXPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "ctrack/ctrack.h"
#include "ipfix.h"
#include "sink.h"

enum {
	EX_OPT_IPFIX = 0x2600,
	EX_OPT_IPFIX_TRANSPORT,
	EX_OPT_IPFIX_ACTIVE,
	EX_OPT_IPFIX_UNIFLOW,
	EX_OPT_IPFIX_NO_FINAL,
	EX_OPT_IPFIX_REFRESH,
	EX_OPT_IPFIX_REFRESH_MSGS,
	EX_OPT_IPFIX_DOMAIN,
	EX_OPT_IPFIX_MTU,
	EX_OPT_METRICS_FILE,
	EX_OPT_METRICS_LISTEN,
	EX_OPT_REPORT,
};

#define EX_LONG_OPTIONS \
	{ "ipfix", required_argument, NULL, EX_OPT_IPFIX }, \
	{ "ipfix-transport", required_argument, NULL, EX_OPT_IPFIX_TRANSPORT }, \
	{ "ipfix-active-timeout", required_argument, NULL, EX_OPT_IPFIX_ACTIVE }, \
	{ "ipfix-uniflow", no_argument, NULL, EX_OPT_IPFIX_UNIFLOW }, \
	{ "ipfix-no-final", no_argument, NULL, EX_OPT_IPFIX_NO_FINAL }, \
	{ "ipfix-template-refresh", required_argument, NULL, EX_OPT_IPFIX_REFRESH }, \
	{ "ipfix-template-every", required_argument, NULL, EX_OPT_IPFIX_REFRESH_MSGS }, \
	{ "ipfix-domain", required_argument, NULL, EX_OPT_IPFIX_DOMAIN }, \
	{ "ipfix-mtu", required_argument, NULL, EX_OPT_IPFIX_MTU }, \
	{ "metrics-file", required_argument, NULL, EX_OPT_METRICS_FILE }, \
	{ "metrics-listen", required_argument, NULL, EX_OPT_METRICS_LISTEN }, \
	{ "report", required_argument, NULL, EX_OPT_REPORT }

/* The options, each copied (a config file's line does not outlive its
 * parse); an empty string is "not given". */
struct ex_opts {
	char ipfix[300];               /* HOST:PORT */
	struct ipfix_config ipfix_cfg; /* host and port filled by ex_start */
	char metrics_file[4096];
	char metrics_listen[160];      /* ADDR:PORT, or PORT (localhost) */
	char report[4096];
	const char *const *inputs;     /* what is read (NULL-terminated), for
					* the report's title; may be NULL */
};

/* Everything off. */
void ex_opts_init(struct ex_opts *o);

/*
 * ex_opts_apply - @code is one of EX_OPT_*, given as @where ("--ipfix",
 * "FILE:LINE"): 1 when taken, 0 when @code is not ours, -1 when @arg is
 * bad, with a sentence for a person in @err that starts with @where.
 */
int ex_opts_apply(struct ex_opts *o, int code, const char *arg, const char *where,
		  char *err, size_t errlen);

/* ex_opts_parse - ex_opts_apply for a command line, the message printed
 * with the command's name. */
int ex_opts_parse(struct ex_opts *o, const char *cmd, int code, const char *arg);

/* The long option's name of @code ("ipfix-mtu"). */
const char *ex_opt_name(int code);

/* Whether two option sets export and serve alike (a daemon's SIGHUP
 * cannot change them: they own sockets and threads). */
bool ex_opts_same(const struct ex_opts *a, const struct ex_opts *b);

void ex_opts_usage(FILE *out);

/* The table settings the sinks need: TCP flags for IPFIX; first and last
 * packet times and counters are the caller's (ctrack read keeps both).
 * Call it after setting cfg->nat: the IPFIX sink then announces the NAT
 * templates (@o's ipfix_cfg.nat is set from it). */
void ex_table_config(struct ex_opts *o, struct ct_table_config *cfg);

/* True when an event handler must be installed for the sinks. */
bool ex_wants_events(const struct ex_opts *o);

/* The event types the sinks need, as a mask of 1 << CT_EV_* for
 * ct_table_set_event_mask (events.h): IPFIX needs DESTROY alone, the
 * report and the metrics of `ctrack read` every type; 0 for none. */
unsigned ex_event_mask(const struct ex_opts *o);

/*
 * ex_start - open what the options ask for (a TCP collector is connected
 * here; a report or metrics path is checked for writing here, so that
 * an unwritable one fails before hours of replay).  Returns 0, or -1
 * after printing why.
 */
struct ex_state;
int ex_start(const struct ex_opts *o, const char *cmd, struct ct_table *t,
	     struct ex_sinks *sinks, struct ex_state **st);

/*
 * ex_finish - the end of input at @now: every sink's finish (records for
 * open connections, the report, the metrics file), with their messages
 * printed.  Returns 0, or -1 when an output failed (the caller's exit
 * status says so).  ex_stop frees everything.
 */
int ex_finish(struct ex_state *st, struct ex_sinks *sinks, struct ct_thread *thr,
	      ct_time_ns now);
void ex_stop(struct ex_state *st, struct ex_sinks *sinks);

/* What ex_start made (NULL when not asked for): the IPFIX sink (for
 * ipfix_sink_flush and its counters), the metrics sink (for
 * metrics_add_provider), the address the metrics listener bound. */
struct ex_sink *ex_state_ipfix(const struct ex_state *st);
struct ex_sink *ex_state_metrics(const struct ex_state *st);
const char *ex_state_metrics_address(const struct ex_state *st);

#endif
