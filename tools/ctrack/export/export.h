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

struct ex_opts {
	const char *ipfix;             /* HOST:PORT */
	struct ipfix_config ipfix_cfg; /* host and port filled by ex_start */
	const char *metrics_file;
	const char *metrics_listen;    /* ADDR:PORT */
	const char *report;
	const char *const *inputs;     /* what is read (NULL-terminated), for
					* the report's title; may be NULL */
};

/* Everything off. */
void ex_opts_init(struct ex_opts *o);

/* ex_opts_parse - @code is one of EX_OPT_*: 1 when taken, 0 when @code is
 * not ours, -1 when @arg is bad (the message is printed). */
int ex_opts_parse(struct ex_opts *o, const char *cmd, int code, const char *arg);

void ex_opts_usage(FILE *out);

/* The table settings the sinks need: TCP flags for IPFIX; first and last
 * packet times and counters are the caller's (ctrack read keeps both). */
void ex_table_config(const struct ex_opts *o, struct ct_table_config *cfg);

/* True when an event handler must be installed for the sinks. */
bool ex_wants_events(const struct ex_opts *o);

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

#endif
