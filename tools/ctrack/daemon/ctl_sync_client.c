/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_sync_client.c - `ctrack sync ...`: conntrackd's failover commands
 * against a daemon started with --sync (docs/sync.md, docs/control.md).
 *
 *   ctrack sync list [--external|--internal]   conntrackd -e / -i
 *   ctrack sync internal | external            the same
 *   ctrack sync stats                          conntrackd -s
 *   ctrack sync resync                         conntrackd -n
 *   ctrack sync bulk                           conntrackd -B
 *   ctrack sync flush --external|--internal    conntrackd -f
 *   ctrack sync commit                         conntrackd -c
 *
 * A separate small client rather than more of ctl_client.c's table of
 * conntrack options: these take none of conntrack's filters, and their
 * replies are one control line (or a listing of lines formatted by the
 * daemon, printed as they come).  Blocking I/O: one request, its reply,
 * exit.  Exit status as ctl_client.c: 0 done; 1 bad usage or refused
 * (the daemon's sentence is printed); 2 the daemon cannot be reached;
 * 4 internal error or a reply that breaks the protocol.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../cli.h"
#include "ctl_request.h"

static void usage(FILE *f)
{
	fputs("usage: ctrack sync COMMAND [OPTIONS]\n"
	      "\n"
	      "conntrackd's commands, asked of a daemon started with --sync:\n"
	      "  list [--external|--internal]  a sync cache: the peer's connections\n"
	      "                                (default; conntrackd -e) or ours (-i)\n"
	      "  internal, external            the same as list --internal / --external\n"
	      "  stats                         the link's and the caches' counters (-s)\n"
	      "  resync                        ask the peer for its whole table (-n)\n"
	      "  bulk                          send the peer our whole table (-B)\n"
	      "  flush --external|--internal   empty a cache (-f)\n"
	      "  commit                        the external cache into the table (-c)\n"
	      "\n"
	      "Options:\n"
	      "  -o, --output FORMAT   list: conntrack (default), extended or json;\n"
	      "                        stats: json\n"
	      "  --socket PATH         the daemon's control socket (default\n"
	      "                        $CTRACK_SOCKET or /run/ctrack/ctrack.sock)\n"
	      "  -h, --help            this text\n", f);
}

struct sc {
	int fd;
	char *buf;
	size_t len, cap;
	bool json_out;
	const char *cmd;
};

static int connect_to(struct sc *c, const char *path)
{
	struct sockaddr_un sa;

	if (!path || strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "ctrack sync: socket path missing or too long: %s\n",
			path ? path : "");
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		fprintf(stderr, "ctrack sync: cannot reach the daemon at %s: %s%s\n", path,
			strerror(e), e == ENOENT || e == ECONNREFUSED ? " (is `ctrack daemon` "
			"running? --socket PATH or CTRACK_SOCKET name another socket)" :
			e == EACCES ? " (only root and the daemon's --socket-group may connect)" : "");
		return -1;
	}
	return 0;
}

/* The next line of the reply (without its newline), or NULL at the end of
 * the stream. */
static char *next_line(struct sc *c, size_t *n)
{
	static size_t taken;

	if (taken) {
		memmove(c->buf, c->buf + taken, c->len - taken);
		c->len -= taken;
		taken = 0;
	}
	for (;;) {
		char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
		ssize_t r;

		if (nl) {
			*n = (size_t)(nl - c->buf);
			taken = *n + 1;
			return c->buf;
		}
		if (c->cap - c->len < 65536) {
			size_t cap = c->cap ? c->cap * 2 : 1 << 20;
			char *b = realloc(c->buf, cap);

			if (!b)
				return NULL;
			c->buf = b;
			c->cap = cap;
		}
		r = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return NULL;
		c->len += (size_t)r;
	}
}

static void print_value(const char *prefix, const char *k, json_t *v)
{
	if (json_is_integer(v))
		printf("%s%s: %" JSON_INTEGER_FORMAT "\n", prefix, k, json_integer_value(v));
	else if (json_is_string(v))
		printf("%s%s: %s\n", prefix, k, json_string_value(v));
	else if (json_is_boolean(v))
		printf("%s%s: %s\n", prefix, k, json_is_true(v) ? "yes" : "no");
}

/* The stats object: values, and objects of values one level down
 * ("network.msgs_sent: 12"). */
static void print_stats(json_t *o)
{
	const char *k, *k2;
	json_t *v, *v2;

	json_object_foreach(o, k, v) {
		if (!json_is_object(v)) {
			print_value("", k, v);
			continue;
		}
		json_object_foreach(v, k2, v2) {
			char p[128];

			snprintf(p, sizeof(p), "%s.", k);
			print_value(p, k2, v2);
		}
	}
}

/* Read the reply: a control line, and for a listing its data lines and
 * the end line. */
static int read_reply(struct sc *c, bool listing)
{
	bool started = false;

	for (;;) {
		size_t n;
		char *line = next_line(c, &n);
		json_error_t je;
		json_t *j, *v;

		if (!line) {
			fprintf(stderr, "ctrack sync %s: the daemon closed the connection before the "
				"end of its reply\n", c->cmd);
			return CT_EXIT_INTERNAL;
		}
		if (started && (n < 5 || memcmp(line, "{\"v\":", 5) != 0)) {
			/* a data line: a JSON string (text formats) or an object */
			if (!c->json_out && n >= 2 && line[0] == '"') {
				fwrite(line + 1, 1, n - 2, stdout);
				fputc('\n', stdout);
			} else {
				fwrite(line, 1, n, stdout);
				fputc('\n', stdout);
			}
			continue;
		}
		j = json_loadb(line, n, 0, &je);
		if (!j) {
			fprintf(stderr, "ctrack sync %s: the daemon sent a line that is not JSON: %s\n",
				c->cmd, je.text);
			return CT_EXIT_INTERNAL;
		}
		if ((v = json_object_get(j, "ok")) && json_is_false(v)) {
			const char *e = json_string_value(json_object_get(j, "error"));

			fprintf(stderr, "ctrack sync %s: %s\n", c->cmd,
				e ? e : "the daemon refused the request");
			json_decref(j);
			return CT_EXIT_USAGE;
		}
		if (json_object_get(j, "end")) {
			fprintf(stderr, "%" JSON_INTEGER_FORMAT " entries in the %s cache.\n",
				json_integer_value(json_object_get(j, "count")),
				c->cmd[0] == 'i' ? "internal" : "external");
			json_decref(j);
			return CT_EXIT_OK;
		}
		if (!listing) {
			if (c->json_out) {
				fwrite(line, 1, n, stdout);
				fputc('\n', stdout);
			} else if ((v = json_object_get(j, "sync"))) {
				print_stats(v);
			} else if ((v = json_object_get(j, "removed"))) {
				printf("%" JSON_INTEGER_FORMAT " entries removed\n",
				       json_integer_value(v));
			} else if ((v = json_object_get(j, "committed"))) {
				printf("%" JSON_INTEGER_FORMAT " entries committed, %"
				       JSON_INTEGER_FORMAT " already expired, %" JSON_INTEGER_FORMAT
				       " refused\n", json_integer_value(v),
				       json_integer_value(json_object_get(j, "expired")),
				       json_integer_value(json_object_get(j, "failed")));
			}
			json_decref(j);
			return CT_EXIT_OK;
		}
		started = true;
		json_decref(j);
	}
}

int cmd_sync_ctl(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "external", no_argument, NULL, 'e' }, { "internal", no_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' }, { "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	const char *sock = getenv("CTRACK_SOCKET");
	const char *format = NULL, *sub, *cmd;
	int cache = -1;   /* 0 external, 1 internal */
	struct sc c;
	json_t *req;
	char *line;
	int o, rc;

	if (!sock || !*sock)
		sock = "/run/ctrack/ctrack.sock";
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? CT_EXIT_USAGE : CT_EXIT_OK;
	}
	sub = argv[1];
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc - 1, argv + 1, "+eio:h", lopts, NULL)) != -1) {
		switch (o) {
		case 'e':
		case 'i':
			if (cache >= 0 && cache != (o == 'i')) {
				fprintf(stderr, "ctrack sync %s: --external and --internal exclude "
					"each other\n", sub);
				return CT_EXIT_USAGE;
			}
			cache = o == 'i';
			break;
		case 'o':
			format = optarg;
			break;
		case 's':
			sock = optarg;
			break;
		case 'h':
			usage(stdout);
			return CT_EXIT_OK;
		default:
			fprintf(stderr, "ctrack sync %s: unknown option or missing value '%s' (see "
				"ctrack sync --help)\n", sub, argv[optind]);
			return CT_EXIT_USAGE;
		}
	}
	if (optind + 1 < argc) {
		fprintf(stderr, "ctrack sync %s: unexpected argument '%s'\n", sub, argv[optind + 1]);
		return CT_EXIT_USAGE;
	}
	if (!strcmp(sub, "internal") || !strcmp(sub, "external")) {
		int want = sub[0] == 'i';

		if (cache >= 0 && cache != want) {
			fprintf(stderr, "ctrack sync %s: --%s contradicts the command\n", sub,
				cache ? "internal" : "external");
			return CT_EXIT_USAGE;
		}
		cache = want;
		sub = "list";
	}
	if (!strcmp(sub, "list"))
		cmd = "sync-list";
	else if (!strcmp(sub, "stats"))
		cmd = "sync-stats";
	else if (!strcmp(sub, "resync"))
		cmd = "sync-resync";
	else if (!strcmp(sub, "bulk"))
		cmd = "sync-bulk";
	else if (!strcmp(sub, "flush"))
		cmd = "sync-flush";
	else if (!strcmp(sub, "commit"))
		cmd = "sync-commit";
	else {
		fprintf(stderr, "ctrack sync: unknown command '%s' (list, internal, external, stats, "
			"resync, bulk, flush, commit)\n", sub);
		return CT_EXIT_USAGE;
	}
	if (!strcmp(sub, "flush") && cache < 0) {
		fprintf(stderr, "ctrack sync flush: say which cache: --external or --internal\n");
		return CT_EXIT_USAGE;
	}
	if (cache >= 0 && strcmp(sub, "list") != 0 && strcmp(sub, "flush") != 0) {
		fprintf(stderr, "ctrack sync %s: takes no --external / --internal\n", sub);
		return CT_EXIT_USAGE;
	}
	memset(&c, 0, sizeof(c));
	c.cmd = cache == 1 ? "internal" : sub;
	if (format) {
		if (!strcmp(format, "json"))
			c.json_out = true;
		else if ((strcmp(format, "conntrack") != 0 && strcmp(format, "extended") != 0) ||
			 strcmp(sub, "list") != 0) {
			fprintf(stderr, "ctrack sync %s: -o %s: %s\n", sub, format,
				strcmp(sub, "list") != 0 ? "only json here" : "conntrack, extended or json");
			return CT_EXIT_USAGE;
		}
	}
	req = json_pack("{s:i,s:s}", "v", CTL_PROTO_VERSION, "cmd", cmd);
	if (!req)
		return CT_EXIT_INTERNAL;
	if (!strcmp(sub, "list") && format)
		json_object_set_new(req, "format", json_string(format));
	if (cache >= 0)
		json_object_set_new(req, "cache", json_string(cache ? "internal" : "external"));
	if (connect_to(&c, sock) < 0) {
		json_decref(req);
		return CT_EXIT_INPUT;
	}
	line = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	if (!line)
		return CT_EXIT_INTERNAL;
	{
		size_t n = strlen(line), off = 0;

		line[n++] = '\n';
		while (off < n) {
			ssize_t w = send(c.fd, line + off, n - off, MSG_NOSIGNAL);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				fprintf(stderr, "ctrack sync %s: cannot send the request: %s\n", sub,
					strerror(errno));
				free(line);
				close(c.fd);
				return CT_EXIT_INPUT;
			}
			off += (size_t)w;
		}
		free(line);
	}
	rc = read_reply(&c, !strcmp(sub, "list"));
	if (fflush(stdout) != 0 && rc == CT_EXIT_OK)
		rc = CT_EXIT_INTERNAL;
	close(c.fd);
	free(c.buf);
	return rc;
}
