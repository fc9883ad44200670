/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_client.c - the daemon's clients: ctrack list, get, count, events,
 * stats, flush, delete, set, sysctl.
 *
 * Each takes conntrack(8)'s options for the same command (-L, -G, -C, -E,
 * -S, -F, -D; sysctl's NAME=VALUE for set), checks them here - a bad
 * value is refused before anything connects - sends one request line
 * (docs/control.md) and prints what comes back in conntrack's own
 * layout: the lines on standard output, byte for byte what conntrack
 * prints, and its "N flow entries have been shown." on standard error.
 *
 * Printing a million-line listing is a copy: the daemon formats the lines
 * (ctl_server.c), a text line arrives as a JSON string, and the client
 * strips the two quotes and writes it out through a 1 MiB buffer; only
 * control lines (those that begin with {"v":) are parsed.
 *
 * Exit status: 0 done; 1 bad usage, or the daemon refused the request
 * (bad value, permission, no such entry: its message is printed); 2 the
 * daemon cannot be reached; 4 internal error or a reply that breaks the
 * protocol.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../cli.h"
#include "ctl_filter.h"
#include "ctl_request.h"

#define DEFAULT_SOCKET "/run/ctrack/ctrack.sock"

struct cl {
	const char *cmd;          /* "list", ... */
	const char *socket;
	json_t *req;
	json_t *filter;
	struct ctl_filter check;  /* the filter as parsed here */
	bool stats_all;
	bool json_out;
	int fd;
	/* reading */
	char *in;
	size_t in_len, in_cap;
	/* writing */
	char *out;
	size_t out_len;
	uint64_t count;
	bool done;
	int rc;
};

static void out_write(struct cl *c)
{
	size_t off = 0;

	while (off < c->out_len) {
		ssize_t n = write(STDOUT_FILENO, c->out + off, c->out_len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (errno != EPIPE)
				fprintf(stderr, "ctrack %s: error writing the output: %s\n", c->cmd,
					strerror(errno));
			exit(CT_EXIT_INTERNAL);
		}
		off += (size_t)n;
	}
	c->out_len = 0;
}

#define OUT_CAP (1u << 20)

static void out_put(struct cl *c, const char *s, size_t n)
{
	if (c->out_len + n + 1 > OUT_CAP)
		out_write(c);
	if (n + 1 > OUT_CAP) {
		/* cannot happen with the daemon's lines; write through */
		(void)!write(STDOUT_FILENO, s, n);
		(void)!write(STDOUT_FILENO, "\n", 1);
		return;
	}
	memcpy(c->out + c->out_len, s, n);
	c->out_len += n;
	c->out[c->out_len++] = '\n';
}

static const char *socket_path(const char *opt)
{
	const char *e = getenv("CTRACK_SOCKET");

	return opt ? opt : (e && *e) ? e : DEFAULT_SOCKET;
}

static int do_connect(struct cl *c)
{
	struct sockaddr_un sa;

	if (strlen(c->socket) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "ctrack %s: socket path too long: %s\n", c->cmd, c->socket);
		return -1;
	}
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, c->socket, strlen(c->socket) + 1);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		fprintf(stderr, "ctrack %s: cannot reach the daemon at %s: %s%s\n", c->cmd,
			c->socket, strerror(e),
			e == ENOENT || e == ECONNREFUSED ? " (is `ctrack daemon` running? "
			"--socket PATH or CTRACK_SOCKET name another socket)" :
			e == EACCES ? " (only root and the daemon's --socket-group may connect)" : "");
		return -1;
	}
	return 0;
}

static int send_request(struct cl *c)
{
	char *s = json_dumps(c->req, JSON_COMPACT);
	size_t n, off = 0;

	if (!s)
		return -1;
	n = strlen(s);
	s[n++] = '\n';     /* json_dumps' NUL becomes the newline */
	while (off < n) {
		ssize_t w = send(c->fd, s + off, n - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			free(s);
			return -1;
		}
		off += (size_t)w;
	}
	free(s);
	return 0;
}

static void print_stats_text(struct cl *c, json_t *j)
{
	json_t *cpus = json_object_get(j, "cpu"), *o;
	size_t i;
	static const char *const keys[] = { "found", "invalid", "insert", "insert_failed",
		"drop", "early_drop", "error", "search_restart", "clash_resolve",
		"chaintoolong", NULL };

	json_array_foreach(cpus, i, o) {
		char line[512];
		int n = snprintf(line, sizeof(line), "cpu=%-4zu\t", i);

		for (int k = 0; keys[k]; k++)
			n += snprintf(line + n, sizeof(line) - (size_t)n, "%s=%" JSON_INTEGER_FORMAT " ",
				      keys[k], json_integer_value(json_object_get(o, keys[k])));
		out_put(c, line, (size_t)n);
	}
	if (c->stats_all) {
		const char *key;
		json_t *v;
		json_t *tot = json_object_get(j, "total");
		char line[4096];
		int n = 0;

		/* ctrack's own counters, key=value, one group a line */
		json_object_foreach(tot, key, v)
			if (json_is_integer(v))
				n += snprintf(line + n, sizeof(line) - (size_t)n, "%s%s=%"
					      JSON_INTEGER_FORMAT, n ? " " : "total: ", key,
					      json_integer_value(v));
		out_put(c, line, (size_t)n);
		n = 0;
		json_object_foreach(json_object_get(tot, "invalid_by_reason"), key, v)
			n += snprintf(line + n, sizeof(line) - (size_t)n, " %s=%" JSON_INTEGER_FORMAT,
				      key, json_integer_value(v));
		if (!n)
			snprintf(line, sizeof(line), " none");
		{
			char l2[4200];
			int m = snprintf(l2, sizeof(l2), "invalid_by_reason:%s", line);

			out_put(c, l2, (size_t)m);
		}
		n = snprintf(line, sizeof(line), "rings: drops=%" JSON_INTEGER_FORMAT,
			     json_integer_value(json_object_get(j, "ring_drops")));
		json_array_foreach(json_object_get(j, "rings"), i, o)
			n += snprintf(line + n, sizeof(line) - (size_t)n,
				      " worker%zu=packets:%" JSON_INTEGER_FORMAT ",drops:%"
				      JSON_INTEGER_FORMAT ",freezes:%" JSON_INTEGER_FORMAT, i,
				      json_integer_value(json_object_get(o, "packets")),
				      json_integer_value(json_object_get(o, "drops")),
				      json_integer_value(json_object_get(o, "freezes")));
		out_put(c, line, (size_t)n);
		{
			json_t *e = json_object_get(j, "events"), *k = json_object_get(j, "control");

			n = snprintf(line, sizeof(line), "events: subscribers=%" JSON_INTEGER_FORMAT
				     " lost_in_rings=%" JSON_INTEGER_FORMAT " lost_at_clients=%"
				     JSON_INTEGER_FORMAT,
				     json_integer_value(json_object_get(e, "subscribers")),
				     json_integer_value(json_object_get(e, "lost_in_rings")),
				     json_integer_value(json_object_get(e, "lost_at_clients")));
			out_put(c, line, (size_t)n);
			n = 0;
			json_object_foreach(k, key, v)
				n += snprintf(line + n, sizeof(line) - (size_t)n, "%s%s=%"
					      JSON_INTEGER_FORMAT, n ? " " : "control: ", key,
					      json_integer_value(v));
			out_put(c, line, (size_t)n);
		}
		if (json_object_get(j, "nat")) {
			/* --nat: what the first packets met (dm_nat.c) */
			n = 0;
			json_object_foreach(json_object_get(j, "nat"), key, v)
				n += snprintf(line + n, sizeof(line) - (size_t)n, "%s%s=%"
					      JSON_INTEGER_FORMAT, n ? " " : "nat: ", key,
					      json_integer_value(v));
			out_put(c, line, (size_t)n);
		}
		{
			/* the flow export (issue 26): the queue, then each
			 * exporter's counters, key=value as above */
			json_t *x = json_object_get(j, "export"), *sx;

			if (!x)
				return;
			n = 0;
			json_object_foreach(x, key, v)
				if (json_is_integer(v))
					n += snprintf(line + n, sizeof(line) - (size_t)n, "%s%s=%"
						      JSON_INTEGER_FORMAT, n ? " " : "export: ", key,
						      json_integer_value(v));
			out_put(c, line, (size_t)n);
			json_object_foreach(x, key, sx) {
				const char *k2;

				if (!json_is_object(sx))
					continue;
				n = snprintf(line, sizeof(line), "export %s:", key);
				json_object_foreach(sx, k2, v) {
					if (json_is_integer(v))
						n += snprintf(line + n, sizeof(line) - (size_t)n,
							      " %s=%" JSON_INTEGER_FORMAT, k2,
							      json_integer_value(v));
					else if (json_is_string(v))
						n += snprintf(line + n, sizeof(line) - (size_t)n,
							      " %s=%s", k2, json_string_value(v));
				}
				out_put(c, line, (size_t)n);
			}
		}
	}
}

/* A control line from the daemon; false to stop reading. */
static bool on_control(struct cl *c, const char *line, size_t n)
{
	json_error_t je;
	json_t *j = json_loadb(line, n, 0, &je), *v;
	bool go_on = true;

	if (!j) {
		fprintf(stderr, "ctrack %s: the daemon sent a line that is not JSON: %s\n", c->cmd,
			je.text);
		c->rc = CT_EXIT_INTERNAL;
		return false;
	}
	if ((v = json_object_get(j, "ok")) && json_is_false(v)) {
		const char *e = json_string_value(json_object_get(j, "error"));

		fprintf(stderr, "ctrack %s: %s\n", c->cmd, e ? e : "the daemon refused the request");
		c->rc = CT_EXIT_USAGE;
		go_on = false;
	} else if ((v = json_object_get(j, "lost"))) {
		fprintf(stderr, "ctrack %s: WARNING: We have hit ENOBUFS! We are losing events: "
			"%" JSON_INTEGER_FORMAT " lost here (%" JSON_INTEGER_FORMAT " in all); read "
			"faster, or raise the daemon's --events-buffer-kb\n", c->cmd,
			json_integer_value(v), json_integer_value(json_object_get(j, "lost_total")));
	} else if (json_object_get(j, "end")) {
		c->count = (uint64_t)json_integer_value(json_object_get(j, "count"));
		c->done = true;
		go_on = false;
	} else if (json_is_true(json_object_get(j, "ok"))) {
		const char *cmd = json_string_value(json_object_get(j, "cmd"));

		if (c->json_out && cmd && strcmp(cmd, "list") != 0 && strcmp(cmd, "get") != 0 &&
		    strcmp(cmd, "delete") != 0 && strcmp(cmd, "events") != 0) {
			out_put(c, line, n);
			c->done = true;
			go_on = false;
		} else if (cmd && !strcmp(cmd, "count")) {
			char num[32];
			int k = snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT,
					 json_integer_value(json_object_get(j, "count")));

			out_put(c, num, (size_t)k);
			c->done = true;
			go_on = false;
		} else if (cmd && !strcmp(cmd, "stats")) {
			print_stats_text(c, j);
			c->done = true;
			go_on = false;
		} else if (cmd && !strcmp(cmd, "flush")) {
			fprintf(stderr, "ctrack v%s (ctrack daemon): connection tracking table has "
				"been emptied (%" JSON_INTEGER_FORMAT " entries).\n", CTRACK_VERSION,
				json_integer_value(json_object_get(j, "removed")));
			c->done = true;
			go_on = false;
		} else if (cmd && (!strcmp(cmd, "set") || !strcmp(cmd, "sysctl"))) {
			const char *key;
			json_t *val;
			char l[256];

			if (!strcmp(cmd, "set")) {
				const char *nm = json_string_value(json_object_get(j, "name"));
				int k = snprintf(l, sizeof(l), "%s%s = %s",
						 strncmp(nm, "net.netfilter.", 14) ? "net.netfilter." : "",
						 nm, json_string_value(json_object_get(j, "value")));

				out_put(c, l, (size_t)k);
				if (json_is_true(json_object_get(j, "ignored")))
					fprintf(stderr, "ctrack set: note: %s is a kernel setting ctrack "
						"does not model; accepted, no effect\n", nm);
			} else {
				json_object_foreach(json_object_get(j, "settings"), key, val) {
					int k = snprintf(l, sizeof(l), "net.netfilter.%s = %s", key,
							 json_string_value(val));

					out_put(c, l, (size_t)k);
				}
			}
			c->done = true;
			go_on = false;
		} else if (cmd && !strcmp(cmd, "hello")) {
			out_put(c, line, n);
			c->done = true;
			go_on = false;
		}
	}
	json_decref(j);
	return go_on;
}

/* A data line: a JSON string (a text line) or a JSON object. */
static bool on_data(struct cl *c, const char *line, size_t n)
{
	if (n >= 2 && line[0] == '"' && line[n - 1] == '"') {
		if (!memchr(line, '\\', n)) {
			out_put(c, line + 1, n - 2);
		} else {
			json_t *s = json_loadb(line, n, JSON_DECODE_ANY, NULL);

			if (!s || !json_is_string(s)) {
				json_decref(s);
				fprintf(stderr, "ctrack %s: the daemon sent a bad line\n", c->cmd);
				c->rc = CT_EXIT_INTERNAL;
				return false;
			}
			out_put(c, json_string_value(s), json_string_length(s));
			json_decref(s);
		}
	} else {
		out_put(c, line, n);
	}
	return true;
}

static int read_replies(struct cl *c, bool stream)
{
	for (;;) {
		ssize_t n;
		size_t start = 0;

		if (c->in_cap - c->in_len < 65536) {
			size_t cap = c->in_cap ? c->in_cap * 2 : 1u << 20;
			char *b = realloc(c->in, cap);

			if (!b) {
				fprintf(stderr, "ctrack %s: out of memory\n", c->cmd);
				return CT_EXIT_INTERNAL;
			}
			c->in = b;
			c->in_cap = cap;
		}
		n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!c->done && (c->rc == 0 || c->rc == CT_EXIT_INPUT)) {
				fprintf(stderr, "ctrack %s: the daemon closed the connection%s%s\n", c->cmd,
					n < 0 ? ": " : "", n < 0 ? strerror(errno) : "");
				c->rc = CT_EXIT_INPUT;
			}
			return c->rc;
		}
		c->in_len += (size_t)n;
		for (;;) {
			char *nl = memchr(c->in + start, '\n', c->in_len - start);
			size_t len;
			bool go_on;

			if (!nl)
				break;
			len = (size_t)(nl - (c->in + start));
			if (len >= 5 && !memcmp(c->in + start, "{\"v\":", 5))
				go_on = on_control(c, c->in + start, len);
			else
				go_on = on_data(c, c->in + start, len);
			start += len + 1;
			if (!go_on) {
				out_write(c);
				return c->rc;
			}
		}
		memmove(c->in, c->in + start, c->in_len - start);
		c->in_len -= start;
		if (stream)
			out_write(c);
	}
}

/* ---- options ---- */

enum {
	OPT_SOCKET = 1000, OPT_SPORT, OPT_DPORT, OPT_RSPORT, OPT_RDPORT, OPT_STATE,
	OPT_ICMP_TYPE, OPT_ICMP_CODE, OPT_ICMP_ID, OPT_ALL, OPT_HELP,
};

static const struct option lopts[] = {
	{ "socket", required_argument, NULL, OPT_SOCKET },
	{ "output", required_argument, NULL, 'o' },
	{ "family", required_argument, NULL, 'f' },
	{ "protonum", required_argument, NULL, 'p' },
	{ "proto", required_argument, NULL, 'p' },
	{ "src", required_argument, NULL, 's' },
	{ "orig-src", required_argument, NULL, 's' },
	{ "dst", required_argument, NULL, 'd' },
	{ "orig-dst", required_argument, NULL, 'd' },
	{ "reply-src", required_argument, NULL, 'r' },
	{ "reply-dst", required_argument, NULL, 'q' },
	{ "sport", required_argument, NULL, OPT_SPORT },
	{ "orig-port-src", required_argument, NULL, OPT_SPORT },
	{ "dport", required_argument, NULL, OPT_DPORT },
	{ "orig-port-dst", required_argument, NULL, OPT_DPORT },
	{ "reply-port-src", required_argument, NULL, OPT_RSPORT },
	{ "reply-port-dst", required_argument, NULL, OPT_RDPORT },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "icmp-type", required_argument, NULL, OPT_ICMP_TYPE },
	{ "icmp-code", required_argument, NULL, OPT_ICMP_CODE },
	{ "icmp-id", required_argument, NULL, OPT_ICMP_ID },
	{ "zone", required_argument, NULL, 'w' },
	{ "mark", required_argument, NULL, 'm' },
	{ "status", required_argument, NULL, 'u' },
	{ "src-nat", no_argument, NULL, 'n' },
	{ "dst-nat", no_argument, NULL, 'g' },
	{ "any-nat", no_argument, NULL, 'j' },
	{ "zero", no_argument, NULL, 'z' },
	{ "event-mask", required_argument, NULL, 'e' },
	{ "buffer-size", required_argument, NULL, 'b' },
	{ "all", no_argument, NULL, OPT_ALL },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static const char *filter_key(int opt)
{
	switch (opt) {
	case 'f': return "family";
	case 'p': return "proto";
	case 's': return "src";
	case 'd': return "dst";
	case 'r': return "reply-src";
	case 'q': return "reply-dst";
	case OPT_SPORT: return "sport";
	case OPT_DPORT: return "dport";
	case OPT_RSPORT: return "reply-sport";
	case OPT_RDPORT: return "reply-dport";
	case OPT_STATE: return "state";
	case OPT_ICMP_TYPE: return "icmp-type";
	case OPT_ICMP_CODE: return "icmp-code";
	case OPT_ICMP_ID: return "icmp-id";
	case 'w': return "zone";
	case 'm': return "mark";
	case 'u': return "status";
	default: return NULL;
	}
}

/* What each command takes (bits: 1 filter, 2 -o, 4 -z, 8 -e, 16 --all) */
static unsigned takes(const char *cmd)
{
	if (!strcmp(cmd, "list"))
		return 1 | 2 | 4;
	if (!strcmp(cmd, "get") || !strcmp(cmd, "delete"))
		return 1 | 2;
	if (!strcmp(cmd, "count"))
		return 1;
	if (!strcmp(cmd, "events"))
		return 1 | 2 | 8;
	if (!strcmp(cmd, "stats"))
		return 2 | 16;
	return 0;
}

static void usage(FILE *f, const char *cmd)
{
	unsigned t = takes(cmd);

	fprintf(f, "usage: ctrack %s [OPTIONS]%s\n\n", cmd,
		!strcmp(cmd, "set") ? " NAME=VALUE..." : !strcmp(cmd, "sysctl") ? " [NAME...]" : "");
	if (!strcmp(cmd, "list"))
		fputs("The table, as `conntrack -L` prints it.\n", f);
	else if (!strcmp(cmd, "get"))
		fputs("One connection (-p -s -d --sport --dport, or the ICMP fields), as "
		      "`conntrack -G`.\n", f);
	else if (!strcmp(cmd, "count"))
		fputs("The number of entries (matching the filters), as `conntrack -C`.\n", f);
	else if (!strcmp(cmd, "events"))
		fputs("NEW / UPDATE / DESTROY as they happen, as `conntrack -E`.\n", f);
	else if (!strcmp(cmd, "stats"))
		fputs("The counters, a cpu=N line per worker, as `conntrack -S`.\n", f);
	else if (!strcmp(cmd, "flush"))
		fputs("Remove every entry, as `conntrack -F` (root or --admin-group).\n", f);
	else if (!strcmp(cmd, "delete"))
		fputs("Remove the entries the filters match, as `conntrack -D` (root or "
		      "--admin-group).\n", f);
	else if (!strcmp(cmd, "set"))
		fputs("Change kernel conntrack settings at run time, as `sysctl -w "
		      "net.netfilter.NAME=VALUE` (root or --admin-group).\n", f);
	else if (!strcmp(cmd, "sysctl"))
		fputs("The settings, as `sysctl net.netfilter` prints them.\n", f);
	fputs("\nOptions:\n  --socket PATH           the daemon's socket (default "
	      DEFAULT_SOCKET ", or $CTRACK_SOCKET)\n", f);
	if (t & 2)
		fputs("  -o, --output FMT[,..]   extended, json, id, ktimestamp, timestamp\n", f);
	if (t & 1)
		fputs("  -f, --family ipv4|ipv6  -p, --proto PROTO\n"
		      "  -s, --src ADDR[/LEN]    -d, --dst ADDR[/LEN]     (original direction)\n"
		      "  -r, --reply-src ADDR    -q, --reply-dst ADDR\n"
		      "  --sport P --dport P --reply-port-src P --reply-port-dst P  (after -p)\n"
		      "  --state STATE (after -p tcp|sctp)   --icmp-type/-code/-id (after -p icmp)\n"
		      "  -w, --zone N            -m, --mark MARK[/MASK]\n"
		      "  -u, --status ASSURED,SEEN_REPLY,UNREPLIED,...\n"
		      "  -n, --src-nat  -g, --dst-nat  -j, --any-nat   (source / destination /\n"
		      "                          either translated; -n -g: both)\n", f);
	if (t & 4)
		fputs("  -z, --zero              zero the counters of the entries listed\n", f);
	if (t & 8)
		fputs("  -e, --event-mask NEW,UPDATE,DESTROY\n", f);
	if (t & 16)
		fputs("  --all                   ctrack's own counters too (rings, events, "
		      "clients)\n", f);
	fputs("\nExit status: 0 done, 1 bad usage or refused, 2 the daemon cannot be reached,\n"
	      "4 internal error.  See ctrack(1) and docs/control.md.\n", f);
}

static int parse_output(struct cl *c, const char *v)
{
	char buf[256];
	char *save = NULL;
	json_t *out = json_array();

	if (strlen(v) >= sizeof(buf))
		return -1;
	memcpy(buf, v, strlen(v) + 1);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "extended") || !strcmp(t, "json")) {
			/* stats replies in JSON anyway: -o json prints it as is */
			if (strcmp(c->cmd, "stats") != 0)
				json_object_set_new(c->req, "format", json_string(t));
			if (!strcmp(t, "json"))
				c->json_out = true;
		} else if (!strcmp(t, "id") || !strcmp(t, "ktimestamp") || !strcmp(t, "timestamp")) {
			json_array_append_new(out, json_string(t));
		} else {
			fprintf(stderr, "ctrack %s: -o %s: '%s' is not an output (extended, json, "
				"id, ktimestamp, timestamp)\n", c->cmd, v, t);
			json_decref(out);
			return -1;
		}
	}
	if (json_array_size(out))
		json_object_set_new(c->req, "output", out);
	else
		json_decref(out);
	return 0;
}

static int parse_events(struct cl *c, const char *v)
{
	char buf[128];
	char *save = NULL;
	json_t *a = json_array();

	if (strlen(v) >= sizeof(buf))
		return -1;
	memcpy(buf, v, strlen(v) + 1);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (strcasecmp(t, "NEW") != 0 && strcasecmp(t, "UPDATE") != 0 &&
		    strcasecmp(t, "DESTROY") != 0) {
			fprintf(stderr, "ctrack events: -e %s: '%s' is not NEW, UPDATE or DESTROY\n",
				v, t);
			json_decref(a);
			return -1;
		}
		for (char *p = t; *p; p++)
			*p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
		json_array_append_new(a, json_string(t));
	}
	json_object_set_new(c->req, "events", a);
	return 0;
}

static int run_ctl(struct cl *cp, int argc, char **argv);

int cmd_ctl(int argc, char **argv)
{
	struct cl c;
	int rc;

	memset(&c, 0, sizeof(c));
	c.fd = -1;
	rc = run_ctl(&c, argc, argv);
	if (c.fd >= 0)
		close(c.fd);
	json_decref(c.req);
	json_decref(c.filter);
	free(c.in);
	free(c.out);
	return rc;
}

/* The command, with every resource in @cp (freed by cmd_ctl). */
static int run_ctl(struct cl *c, int argc, char **argv)
{
	const char *cmd = argv[0];
	unsigned t = takes(cmd);
	char err[512], natv[16] = "";
	unsigned natbits = 0;
	int o, rc;

	c->cmd = cmd;
	c->req = json_pack("{s:i,s:s}", "v", CTL_PROTO_VERSION, "cmd", cmd);
	c->filter = json_object();
	c->out = malloc(OUT_CAP);
	if (!c->req || !c->filter || !c->out) {
		fprintf(stderr, "ctrack %s: out of memory\n", cmd);
		return CT_EXIT_INTERNAL;
	}
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "o:f:p:s:d:r:q:w:m:u:ze:b:hngj", lopts, NULL)) != -1) {
		const char *key = filter_key(o);

		if (o == 'n' || o == 'g' || o == 'j') {
			/* conntrack's -n / -g / -j: one "nat" term, the list of
			 * what was given */
			if (!(t & 1)) {
				fprintf(stderr, "ctrack %s: option '%s' does not apply to %s\n", cmd,
					argv[optind - 1], cmd);
				return CT_EXIT_USAGE;
			}
			natbits |= o == 'n' ? 1u : o == 'g' ? 2u : 4u;
			continue;
		}
		if (o == OPT_HELP || o == 'h') {
			usage(stdout, cmd);
			return CT_EXIT_OK;
		}
		if (o == '?' || o == ':') {
			if (optopt && optopt < 256)
				fprintf(stderr, "ctrack %s: option '-%c' %s\n", cmd, optopt,
					strchr("ofpsdrqwmueb", optopt) ? "needs a value" : "is unknown");
			else
				fprintf(stderr, "ctrack %s: option '%s' is unknown or needs a value\n", cmd,
					argv[optind - 1]);
			fprintf(stderr, "Try 'ctrack %s --help'.\n", cmd);
			return CT_EXIT_USAGE;
		}
		if (o == OPT_SOCKET) {
			c->socket = optarg;
			continue;
		}
		if ((key && !(t & 1)) || (o == 'o' && !(t & 2)) || (o == 'z' && !(t & 4)) ||
		    (o == 'e' && !(t & 8)) || (o == OPT_ALL && !(t & 16))) {
			fprintf(stderr, "ctrack %s: option '%s' does not apply to %s\n", cmd,
				argv[optind - 1], cmd);
			return CT_EXIT_USAGE;
		}
		if (key) {
			if (ctl_filter_set(&c->check, key, optarg, err, sizeof(err)) < 0) {
				fprintf(stderr, "ctrack %s: %s\n", cmd, err);
				return CT_EXIT_USAGE;
			}
			json_object_set_new(c->filter, key, json_string(optarg));
		} else if (o == 'o') {
			if (parse_output(c, optarg) < 0)
				return CT_EXIT_USAGE;
		} else if (o == 'z') {
			json_object_set_new(c->req, "zero", json_true());
		} else if (o == 'e') {
			if (parse_events(c, optarg) < 0)
				return CT_EXIT_USAGE;
		} else if (o == 'b') {
			/* conntrack -E -b: the daemon's buffer is --events-buffer-kb */
		} else if (o == OPT_ALL) {
			c->stats_all = true;
		}
	}
	if (natbits) {
		snprintf(natv, sizeof(natv), "%s%s%s%s%s", natbits & 1 ? "src" : "",
			 (natbits & 1) && (natbits & 6) ? "," : "", natbits & 2 ? "dst" : "",
			 (natbits & 2) && (natbits & 4) ? "," : "", natbits & 4 ? "any" : "");
		if (ctl_filter_set(&c->check, "nat", natv, err, sizeof(err)) < 0) {
			fprintf(stderr, "ctrack %s: %s\n", cmd, err);
			return CT_EXIT_USAGE;
		}
		json_object_set_new(c->filter, "nat", json_string(natv));
	}
	if (ctl_filter_check(&c->check, err, sizeof(err)) < 0) {
		fprintf(stderr, "ctrack %s: %s\n", cmd, err);
		return CT_EXIT_USAGE;
	}
	if (!strcmp(cmd, "get")) {
		struct ct_tuple tu;

		if (ctl_filter_tuple(&c->check, &tu, err, sizeof(err)) < 0) {
			fprintf(stderr, "ctrack get: %s\n", err);
			return CT_EXIT_USAGE;
		}
	}
	if (!strcmp(cmd, "delete") && !c->check.have) {
		fprintf(stderr, "ctrack delete: say which entries (-p, -s, -d, ...); `ctrack flush` "
			"removes them all\n");
		return CT_EXIT_USAGE;
	}
	if (!strcmp(cmd, "set")) {
		if (optind >= argc) {
			fprintf(stderr, "ctrack set: give NAME=VALUE (a kernel sysctl name, e.g. "
				"nf_conntrack_tcp_timeout_established=600)\n");
			return CT_EXIT_USAGE;
		}
		if (optind + 1 < argc) {
			fprintf(stderr, "ctrack set: one NAME=VALUE at a time\n");
			return CT_EXIT_USAGE;
		}
		{
			const char *a = argv[optind], *eq = strchr(a, '=');
			char name[96];

			if (!eq) {
				/* NAME alone: show it, as sysctl NAME does */
				json_object_set_new(c->req, "cmd", json_string("sysctl"));
				json_object_set_new(c->req, "name", json_string(a));
			} else {
				if (eq == a || (size_t)(eq - a) >= sizeof(name) || !eq[1]) {
					fprintf(stderr, "ctrack set: '%s' is not NAME=VALUE\n", a);
					return CT_EXIT_USAGE;
				}
				snprintf(name, sizeof(name), "%.*s", (int)(eq - a), a);
				json_object_set_new(c->req, "name", json_string(name));
				json_object_set_new(c->req, "value", json_string(eq + 1));
			}
		}
	} else if (!strcmp(cmd, "sysctl") && optind < argc) {
		if (optind + 1 < argc) {
			fprintf(stderr, "ctrack sysctl: one NAME at a time\n");
			return CT_EXIT_USAGE;
		}
		json_object_set_new(c->req, "name", json_string(argv[optind]));
	} else if (optind < argc) {
		fprintf(stderr, "ctrack %s: unexpected argument '%s'\nTry 'ctrack %s --help'.\n", cmd,
			argv[optind], cmd);
		return CT_EXIT_USAGE;
	}
	if (json_object_size(c->filter))
		json_object_set(c->req, "filter", c->filter);
	c->socket = socket_path(c->socket);
	if (do_connect(c) < 0)
		return CT_EXIT_INPUT;
	/* a refused client may find the daemon's reason waiting even when
	 * its request could not be sent: read it either way */
	if (send_request(c) < 0)
		c->rc = CT_EXIT_INPUT;
	rc = read_replies(c, !strcmp(cmd, "events"));
	out_write(c);
	if (rc == 0 && c->done) {
		if (!strcmp(cmd, "list") || !strcmp(cmd, "get"))
			fprintf(stderr, "ctrack v%s (ctrack daemon): %" PRIu64 " flow entries have "
				"been shown.\n", CTRACK_VERSION, c->count);
		else if (!strcmp(cmd, "delete"))
			fprintf(stderr, "ctrack v%s (ctrack daemon): %" PRIu64 " flow entries have "
				"been deleted.\n", CTRACK_VERSION, c->count);
	}
	return rc;
}
