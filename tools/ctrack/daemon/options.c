/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * options.c - `ctrack daemon`'s options, from the command line and from
 * the config file, through one table.
 *
 * The config file's keys are the long options (docs/ctrack.1, and the
 * example tools/ctrack/daemon/ctrack.conf): one "key = value" (or "key
 * value", or a bare "key" for a flag) per line, '#' comments, so that
 * what an operator learns on the command line is what the file says.
 * The file is applied first and the command line after it; a list option
 * given on the command line (--interface) replaces the file's list rather
 * than adding to it.  SIGHUP runs the same parse again (cmd_daemon.c), so
 * an edited file and the original command line give the new settings.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../sysctl_file.h"
#include "daemon.h"
#include "dm_sync.h"

void dm_options_default(struct dm_options *o)
{
	memset(o, 0, sizeof(*o));
	o->speed = 1.0;
	o->workers = 1;
	snprintf(o->socket_path, sizeof(o->socket_path), "/run/ctrack/ctrack.sock");
	o->socket_mode = 0660;
	o->ring_mb = 32;
	o->ring_timeout_ms = 2;
	o->max_clients = 1024;
	o->events_buffer_kb = 4096;
	o->event_ring = 16384;
	o->control_nice = 10;
	o->export_queue = 65536;
	ex_opts_init(&o->ex);
	o->state_interval = 60;
	ct_settings_default(&o->set);
	/* the tool's one difference from a fresh kernel namespace, as in
	 * `ctrack read`: counters are what people look at */
	o->set.acct = 1;
}

enum opt_id {
	O_INTERFACE = 1, O_FILTER, O_REPLAY, O_SPEED, O_WORKERS, O_SOCKET, O_SOCKET_GROUP,
	O_ADMIN_GROUP, O_SOCKET_MODE, O_RING_MB, O_RING_TIMEOUT, O_MAX_CLIENTS,
	O_EVENTS_BUFFER, O_EVENT_RING, O_LOOP, O_CONTROL_NICE, O_SET, O_SYSCTL_FILE, O_ROUTER, O_CONFIG, O_CHECK, O_HELP,
	O_EXPORT_QUEUE, O_SYNC,
	O_STATE, O_STATE_INTERVAL, O_STATE_DAMAGED,     /* dm_state.c */
	O_NAT, O_NAT_FILE, O_NAT_EXACT_PORTS,           /* dm_nat.c */
	/* and export.h's EX_OPT_* for the flow export and metrics */
};

struct opt_def {
	const char *name;
	int id;
	int has_arg;
	const char *arg;     /* for --help */
	const char *help;
};

static const struct opt_def defs[] = {
	{ "interface", O_INTERFACE, 1, "IF", "watch IF (repeatable): packets it receives" },
	{ "filter", O_FILTER, 1, "EXPR", "capture filter, libpcap syntax (tcpdump's)" },
	{ "replay", O_REPLAY, 1, "FILE", "feed a capture instead, at its own pace" },
	{ "speed", O_SPEED, 1, "X", "replay X times as fast (0: no pacing; default 1)" },
	{ "loop", O_LOOP, 0, NULL, "replay the file again and again (demos, benchmarks)" },
	{ "workers", O_WORKERS, 1, "N", "packet threads (default 1)" },
	{ "socket", O_SOCKET, 1, "PATH", "control socket (default /run/ctrack/ctrack.sock)" },
	{ "socket-group", O_SOCKET_GROUP, 1, "GROUP", "may use the socket (and root)" },
	{ "admin-group", O_ADMIN_GROUP, 1, "GROUP",
	  "may flush, delete and set (and root)" },
	{ "socket-mode", O_SOCKET_MODE, 1, "MODE", "the socket's mode (default 0660)" },
	{ "ring-mb", O_RING_MB, 1, "N", "ring size per worker, MiB (default 32)" },
	{ "ring-timeout-ms", O_RING_TIMEOUT, 1, "MS",
	  "longest wait for a ring block (default 2)" },
	{ "max-clients", O_MAX_CLIENTS, 1, "N", "clients at once (default 1024)" },
	{ "events-buffer-kb", O_EVENTS_BUFFER, 1, "KB",
	  "per `events` client; beyond, events are dropped and counted (default 4096)" },
	{ "event-ring", O_EVENT_RING, 1, "N",
	  "events queued per packet thread (default 16384)" },
	{ "control-nice", O_CONTROL_NICE, 1, "N",
	  "the control thread's nice, 0..19 (default 10: packets first)" },
	{ "set", O_SET, 1, "NAME=VALUE", "a kernel conntrack sysctl (repeatable)" },
	{ "sysctl-file", O_SYSCTL_FILE, 1, "FILE", "NAME = VALUE lines (sysctl -a)" },
	{ "router", O_ROUTER, 0, NULL,
	  "traffic a router would not forward never creates an entry" },
	{ "ipfix", EX_OPT_IPFIX, 1, "HOST:PORT",
	  "send a flow record (IPFIX) for each connection that ends" },
	{ "ipfix-transport", EX_OPT_IPFIX_TRANSPORT, 1, "udp|tcp",
	  "default udp; a TCP collector must accept at start" },
	{ "ipfix-active-timeout", EX_OPT_IPFIX_ACTIVE, 1, "S",
	  "also report connections open S seconds, every S seconds" },
	{ "ipfix-uniflow", EX_OPT_IPFIX_UNIFLOW, 0, NULL,
	  "a record per direction instead of a biflow (RFC 5103)" },
	{ "ipfix-no-final", EX_OPT_IPFIX_NO_FINAL, 0, NULL,
	  "at stop, do not report the connections still open" },
	{ "ipfix-template-refresh", EX_OPT_IPFIX_REFRESH, 1, "S",
	  "UDP: templates again every S seconds (default 60)" },
	{ "ipfix-template-every", EX_OPT_IPFIX_REFRESH_MSGS, 1, "N",
	  "UDP: ... or every N messages (default 100)" },
	{ "ipfix-domain", EX_OPT_IPFIX_DOMAIN, 1, "N", "observation domain id (default 1)" },
	{ "ipfix-mtu", EX_OPT_IPFIX_MTU, 1, "BYTES", "UDP: largest message (default 1400)" },
	{ "export-queue", O_EXPORT_QUEUE, 1, "N",
	  "events waiting for the export; beyond, dropped and counted (65536)" },
	{ "metrics-listen", EX_OPT_METRICS_LISTEN, 1, "[ADDR:]PORT",
	  "serve Prometheus metrics (GET /metrics); ADDR default 127.0.0.1" },
	{ "sync", O_SYNC, 1, "KEY=VALUE,...",
	  "join a conntrackd cluster (repeatable; docs/sync.md): e.g. mode=ftfw,"
	  "transport=udp,iface=eth2,local=ADDR,peer=ADDR" },
	{ "nat", O_NAT, 1, "RULE",
	  "a NAT rule, as ctrack read --nat's (repeatable): e.g. 'ip saddr 10.0.0.0/8 "
	  "snat to 198.51.100.1'; new connections are bound as the kernel's nat chains "
	  "bind them" },
	{ "nat-file", O_NAT_FILE, 1, "FILE", "NAT rules, one per line ('#' comments)" },
	{ "nat-exact-ports", O_NAT_EXACT_PORTS, 0, NULL,
	  "search source NAT ports with ctrack's exact port map" },
	{ "state", O_STATE, 1, "FILE", "keep the table in FILE across restarts" },
	{ "state-interval", O_STATE_INTERVAL, 1, "SECONDS",
	  "save it this often too (default 60; 0: only at stop)" },
	{ "state-damaged", O_STATE_DAMAGED, 1, "stop|empty",
	  "a bad FILE stops the start (default) or is kept aside" },
	{ "config", O_CONFIG, 1, "FILE", "read options from FILE first" },
	{ "check", O_CHECK, 0, NULL, "check the options and the config file, start nothing" },
	{ "help", O_HELP, 0, NULL, "this text" },
};

#define N_DEFS (sizeof(defs) / sizeof(defs[0]))

static void usage(void)
{
	printf("usage: ctrack daemon [OPTIONS]\n\n"
	       "Track live interfaces (or a replayed capture) in real time and answer\n"
	       "conntrack's questions on a control socket: ctrack list, get, count, events,\n"
	       "stats, flush, delete, set (see ctrack(1) and docs/control.md).  Runs in the\n"
	       "foreground; SIGHUP rereads the settings, SIGTERM stops.\n\nOptions:\n");
	for (size_t i = 0; i < N_DEFS; i++) {
		char left[64];

		snprintf(left, sizeof(left), "--%s%s%s", defs[i].name, defs[i].arg ? " " : "",
			 defs[i].arg ? defs[i].arg : "");
		printf("  %-26s %s\n", left, defs[i].help);
	}
	printf("\nA config file holds the same options, one \"name = value\" a line.\n");
}

static int parse_uint(const char *v, unsigned long lo, unsigned long hi, unsigned long *out,
		      int base)
{
	char *end;
	unsigned long n;

	if (!*v || *v == '-' || isspace((unsigned char)*v))
		return -1;
	errno = 0;
	n = strtoul(v, &end, base);
	if (errno || *end || n < lo || n > hi)
		return -1;
	*out = n;
	return 0;
}

/* Apply one option; @where is "--name" or "FILE:LINE". */
static int apply(struct dm_options *o, const struct opt_def *d, const char *v,
		 const char *where, bool *ifaces_from_file, bool from_cmdline,
		 char *err, size_t errlen)
{
	unsigned long n;

	switch (d->id) {
	case O_INTERFACE:
		if (from_cmdline && *ifaces_from_file) {
			o->n_ifaces = 0;
			*ifaces_from_file = false;
		}
		if (!from_cmdline)
			*ifaces_from_file = true;
		if (!*v || strlen(v) >= IF_NAMESIZE || strchr(v, '/')) {
			snprintf(err, errlen, "%s: '%s' is not an interface name", where, v);
			return -1;
		}
		for (unsigned i = 0; i < o->n_ifaces; i++)
			if (!strcmp(o->ifaces[i], v))
				return 0;
		if (o->n_ifaces == DM_MAX_IFACES) {
			snprintf(err, errlen, "%s: at most %d interfaces", where, DM_MAX_IFACES);
			return -1;
		}
		snprintf(o->ifaces[o->n_ifaces++], IF_NAMESIZE, "%s", v);
		return 0;
	case O_FILTER:
		if (strlen(v) >= sizeof(o->filter)) {
			snprintf(err, errlen, "%s: the filter is longer than %zu bytes", where,
				 sizeof(o->filter) - 1);
			return -1;
		}
		snprintf(o->filter, sizeof(o->filter), "%s", v);
		return 0;
	case O_REPLAY:
		if (!*v || strlen(v) >= sizeof(o->replay)) {
			snprintf(err, errlen, "%s: '%s' is not a file name", where, v);
			return -1;
		}
		snprintf(o->replay, sizeof(o->replay), "%s", v);
		return 0;
	case O_SPEED: {
		char *end;
		double s;

		errno = 0;
		s = strtod(v, &end);
		if (!*v || *end || errno || s < 0 || s > 1e6 || s != s) {
			snprintf(err, errlen, "%s: '%s' is not a speed (0 for no pacing, or a "
				 "factor up to 1000000)", where, v);
			return -1;
		}
		o->speed = s;
		return 0;
	}
	case O_WORKERS:
		if (parse_uint(v, 1, DM_MAX_WORKERS, &n, 10) < 0) {
			snprintf(err, errlen, "%s: '%s' is not a number of workers from 1 to %d",
				 where, v, DM_MAX_WORKERS);
			return -1;
		}
		o->workers = (unsigned)n;
		return 0;
	case O_SOCKET:
		if (!*v || strlen(v) >= sizeof(o->socket_path)) {
			snprintf(err, errlen, "%s: a socket path of 1 to %zu bytes", where,
				 sizeof(o->socket_path) - 1);
			return -1;
		}
		snprintf(o->socket_path, sizeof(o->socket_path), "%s", v);
		return 0;
	case O_SOCKET_GROUP:
	case O_ADMIN_GROUP: {
		char *dst = d->id == O_SOCKET_GROUP ? o->socket_group : o->admin_group;

		if (strlen(v) >= sizeof(o->socket_group)) {
			snprintf(err, errlen, "%s: '%s' is too long for a group name", where, v);
			return -1;
		}
		snprintf(dst, sizeof(o->socket_group), "%s", v);
		return 0;
	}
	case O_SOCKET_MODE:
		if (parse_uint(v, 0, 0777, &n, 8) < 0) {
			snprintf(err, errlen, "%s: '%s' is not an octal mode (e.g. 0660)", where, v);
			return -1;
		}
		o->socket_mode = (unsigned)n;
		return 0;
	case O_RING_MB:
		if (parse_uint(v, 1, 4096, &n, 10) < 0) {
			snprintf(err, errlen, "%s: '%s' is not a ring size from 1 to 4096 MiB",
				 where, v);
			return -1;
		}
		o->ring_mb = (unsigned)n;
		return 0;
	case O_RING_TIMEOUT:
		if (parse_uint(v, 1, 1000, &n, 10) < 0) {
			snprintf(err, errlen, "%s: '%s' is not a timeout from 1 to 1000 ms",
				 where, v);
			return -1;
		}
		o->ring_timeout_ms = (unsigned)n;
		return 0;
	case O_MAX_CLIENTS:
		if (parse_uint(v, 1, 1000000, &n, 10) < 0) {
			snprintf(err, errlen, "%s: '%s' is not a number of clients from 1 to "
				 "1000000", where, v);
			return -1;
		}
		o->max_clients = (unsigned)n;
		return 0;
	case O_EVENTS_BUFFER:
		if (parse_uint(v, 16, 1u << 20, &n, 10) < 0) {
			snprintf(err, errlen, "%s: '%s' is not a size from 16 to 1048576 KiB",
				 where, v);
			return -1;
		}
		o->events_buffer_kb = (unsigned)n;
		return 0;
	case O_EVENT_RING:
		if (parse_uint(v, 64, 1u << 22, &n, 10) < 0) {
			snprintf(err, errlen, "%s: '%s' is not a number of events from 64 to "
				 "4194304", where, v);
			return -1;
		}
		o->event_ring = (unsigned)n;
		return 0;
	case O_SET: {
		const char *eq = strchr(v, '=');
		char name[256];
		const char *msg;
		int r;

		if (!eq || eq == v || (size_t)(eq - v) >= sizeof(name)) {
			snprintf(err, errlen, "%s: needs NAME=VALUE, got '%s'", where, v);
			return -1;
		}
		snprintf(name, sizeof(name), "%.*s", (int)(eq - v), v);
		r = ct_settings_set(&o->set, name, eq + 1, &msg);
		if (r < 0) {
			snprintf(err, errlen, "%s %s: '%s' %s", where, v,
				 r == CT_SETTINGS_BAD_VALUE ? eq + 1 : name, msg);
			return -1;
		}
		return 0;
	}
	case O_SYSCTL_FILE: {
		char msg[512];

		if (sysctl_file_apply(v, &o->set, msg, sizeof(msg)) < 0) {
			snprintf(err, errlen, "%s %s", where, msg);
			return -1;
		}
		return 0;
	}
	case O_ROUTER:
		o->set.router = 1;
		return 0;
	case O_LOOP:
		o->loop = true;
		return 0;
	case O_SYNC: {
		size_t have = strlen(o->sync);

		/* settings accumulate, so that a config file can give them one
		 * line each (sync mode=ftfw / sync peer=10.0.0.1); checked
		 * whole once everything is read */
		if (!*v || have + strlen(v) + 2 > sizeof(o->sync)) {
			snprintf(err, errlen, "%s: '%s': the sync settings are empty or longer "
				 "than %zu bytes", where, v, sizeof(o->sync) - 1);
			return -1;
		}
		snprintf(o->sync + have, sizeof(o->sync) - have, "%s%s", have ? "," : "", v);
		return 0;
	}
	case O_CONTROL_NICE:
		if (parse_uint(v, 0, 19, &n, 10) < 0) {
			snprintf(err, errlen, "%s: '%s' is not a nice value from 0 to 19", where, v);
			return -1;
		}
		o->control_nice = (int)n;
		return 0;
	case O_STATE:
	case O_STATE_INTERVAL:
	case O_STATE_DAMAGED:
		return dm_state_option(o, d->id - O_STATE, v, where, err, errlen);
	case O_NAT:
	case O_NAT_FILE:
	case O_NAT_EXACT_PORTS:
		return dm_nat_option(o, d->id - O_NAT, v, where, err, errlen);
	case O_EXPORT_QUEUE:
		if (parse_uint(v, 1024, 1u << 24, &n, 10) < 0) {
			snprintf(err, errlen, "%s: '%s' is not a number of events from 1024 to "
				 "16777216", where, v);
			return -1;
		}
		o->export_queue = (unsigned)n;
		return 0;
	default: {
		char where2[PATH_MAX + 64];
		int r;

		/* "FILE:LINE" alone would not say which option: name it */
		if (where[0] == '-')
			snprintf(where2, sizeof(where2), "%s", where);
		else
			snprintf(where2, sizeof(where2), "%s: %s", where, d->name);
		r = ex_opts_apply(&o->ex, d->id, v, where2, err, errlen);
		if (r > 0)
			return 0;
		if (r == 0)
			snprintf(err, errlen, "%s: not an option here", where);
		return -1;
	}
	}
}

static const struct opt_def *find_def(const char *name)
{
	for (size_t i = 0; i < N_DEFS; i++)
		if (!strcmp(defs[i].name, name))
			return &defs[i];
	return NULL;
}

static int read_config(struct dm_options *o, const char *path, bool *ifaces_from_file,
		       char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line[4096];
	unsigned lineno = 0;

	if (!f) {
		snprintf(err, errlen, "--config %s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *k = line, *v, *e;
		const struct opt_def *d;
		char where[PATH_MAX + 32];

		lineno++;
		snprintf(where, sizeof(where), "%s:%u", path, lineno);
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%s: line longer than %zu bytes", where,
				 sizeof(line) - 2);
			fclose(f);
			return -1;
		}
		while (isspace((unsigned char)*k))
			k++;
		if (!*k || *k == '#')
			continue;
		e = k + strlen(k);
		while (e > k && isspace((unsigned char)e[-1]))
			*--e = 0;
		v = k;
		while (*v && !isspace((unsigned char)*v) && *v != '=')
			v++;
		if (*v) {
			*v++ = 0;
			while (isspace((unsigned char)*v) || *v == '=')
				v++;
		}
		d = find_def(k);
		if (!d || d->id == O_CONFIG || d->id == O_HELP || d->id == O_CHECK) {
			snprintf(err, errlen, "%s: '%s' is not an option of ctrack daemon "
				 "(see ctrack daemon --help)", where, k);
			fclose(f);
			return -1;
		}
		if (d->has_arg && !*v) {
			snprintf(err, errlen, "%s: '%s' needs a value", where, k);
			fclose(f);
			return -1;
		}
		if (!d->has_arg && *v) {
			snprintf(err, errlen, "%s: '%s' takes no value", where, k);
			fclose(f);
			return -1;
		}
		if (apply(o, d, v, where, ifaces_from_file, false, err, errlen) < 0) {
			fclose(f);
			return -1;
		}
	}
	if (ferror(f)) {
		snprintf(err, errlen, "--config %s: read error", path);
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

int dm_options_parse(int argc, char **argv, struct dm_options *o, char *err, size_t errlen)
{
	struct option lopts[N_DEFS + 1];
	bool ifaces_from_file = false;
	int c;

	for (size_t i = 0; i < N_DEFS; i++) {
		lopts[i].name = defs[i].name;
		lopts[i].has_arg = defs[i].has_arg ? required_argument : no_argument;
		lopts[i].flag = NULL;
		lopts[i].val = defs[i].id;
	}
	lopts[N_DEFS] = (struct option){ NULL, 0, NULL, 0 };
	dm_options_default(o);
	/* the config file first: find it before anything else */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--config") && i + 1 < argc) {
			snprintf(o->config, sizeof(o->config), "%s", argv[i + 1]);
			o->have_config = true;
		} else if (!strncmp(argv[i], "--config=", 9)) {
			snprintf(o->config, sizeof(o->config), "%s", argv[i] + 9);
			o->have_config = true;
		}
	}
	if (o->have_config && read_config(o, o->config, &ifaces_from_file, err, errlen) < 0)
		return -1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+hi:", lopts, NULL)) != -1) {
		const struct opt_def *d = NULL;
		char where[80];

		if (c == 'h' || c == O_HELP) {
			usage();
			return 1;
		}
		if (c == 'i')
			c = O_INTERFACE;
		for (size_t i = 0; i < N_DEFS; i++)
			if (defs[i].id == c)
				d = &defs[i];
		if (!d) {
			if (optopt && optopt < 128 && optopt != '?')
				snprintf(err, errlen, "unknown option '-%c' (see ctrack daemon --help)",
					 optopt);
			else if (c == ':' || optopt)
				snprintf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
			else
				snprintf(err, errlen, "unknown option '%s' (see ctrack daemon --help)",
					 argv[optind - 1]);
			return -1;
		}
		if (d->id == O_CONFIG)
			continue;
		if (d->id == O_CHECK) {
			o->check = true;
			continue;
		}
		snprintf(where, sizeof(where), "--%s", d->name);
		if (apply(o, d, optarg ? optarg : "", where, &ifaces_from_file, true, err,
			  errlen) < 0)
			return -1;
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s' (see ctrack daemon --help)",
			 argv[optind]);
		return -1;
	}
	if (!o->n_ifaces && !o->replay[0]) {
		snprintf(err, errlen, "no source: give --interface IF (repeatable) or --replay FILE");
		return -1;
	}
	if (o->n_ifaces && o->replay[0]) {
		snprintf(err, errlen, "--interface and --replay exclude each other: one source "
			 "kind at a time");
		return -1;
	}
	if (o->loop && !o->replay[0]) {
		snprintf(err, errlen, "--loop goes with --replay");
		return -1;
	}
	if (o->sync[0]) {
		char why[512];

		if (dm_sync_check(o->sync, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "--sync %s: %s", o->sync, why);
			return -1;
		}
	}
	if (dm_nat_check(o, err, errlen) < 0)
		return -1;
	if (o->filter[0] && o->replay[0]) {
		snprintf(err, errlen, "--filter applies to live interfaces, not to --replay "
			 "(filter the capture with tcpdump -r FILE -w OUT EXPR first)");
		return -1;
	}
	if (!o->ex.ipfix[0] && (o->ex.ipfix_cfg.proto != IPFIX_UDP || o->ex.ipfix_cfg.uniflow ||
				o->ex.ipfix_cfg.active_timeout_s || o->ex.ipfix_cfg.no_final)) {
		snprintf(err, errlen, "the --ipfix-* options go with --ipfix HOST:PORT");
		return -1;
	}
	/* flow records carry the first and last packet's times */
	if (o->ex.ipfix[0])
		o->set.timestamp = 1;
	return 0;
}

const char *dm_options_restart_only(const struct dm_options *a, const struct dm_options *b)
{
	if (a->n_ifaces != b->n_ifaces || memcmp(a->ifaces, b->ifaces, sizeof(a->ifaces)) != 0)
		return "interface";
	if (strcmp(a->replay, b->replay) != 0)
		return "replay";
	if (a->speed != b->speed)
		return "speed";
	if (a->workers != b->workers)
		return "workers";
	if (strcmp(a->socket_path, b->socket_path) != 0)
		return "socket";
	if (a->ring_mb != b->ring_mb)
		return "ring-mb";
	if (a->ring_timeout_ms != b->ring_timeout_ms)
		return "ring-timeout-ms";
	if (a->event_ring != b->event_ring)
		return "event-ring";
	if (a->loop != b->loop)
		return "loop";
	if (a->control_nice != b->control_nice)
		return "control-nice";
	if (strcmp(a->sync, b->sync) != 0)
		return "sync";
	if (strcmp(a->state, b->state) != 0)
		return "state";
	if (strcmp(a->nat, b->nat) != 0)
		return "nat";
	if (strcmp(a->nat_file, b->nat_file) != 0)
		return "nat-file";
	if (a->nat_exact_ports != b->nat_exact_ports)
		return "nat-exact-ports";
	if (a->set.buckets != b->set.buckets)
		return "set nf_conntrack_buckets";
	if (!ex_opts_same(&a->ex, &b->ex))
		return strcmp(a->ex.metrics_listen, b->ex.metrics_listen) ? "metrics-listen" : "ipfix";
	if (a->export_queue != b->export_queue)
		return "export-queue";
	return NULL;
}
