/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_request.h - one request line of the control protocol, parsed
 * (docs/control.md: version 1).
 *
 * A request is one JSON object on one line: {"v":1,"cmd":"list",...}.
 * ctl_request_parse() is the only code that reads what a client sends;
 * it takes any bytes (fuzz/fuzz_ctl_request.c feeds it garbage), checks
 * every member's type and value, refuses members a command does not take
 * (a misspelt option is an error, not a silent default), and fills a
 * plain struct the server acts on.  It allocates only inside jansson and
 * frees all of it before returning.
 */
#ifndef CTRACK_DAEMON_CTL_REQUEST_H
#define CTRACK_DAEMON_CTL_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

#include "../format.h"
#include "ctl_filter.h"

#define CTL_PROTO_VERSION 1
/* The longest request line the daemon reads (a request is small; a
 * client sending more is cut off with an error). */
#define CTL_REQUEST_MAX 65536

enum ctl_cmd {
	CMD_HELLO = 0,   /* version and what the daemon tracks */
	CMD_LIST,        /* conntrack -L */
	CMD_GET,         /* conntrack -G */
	CMD_COUNT,       /* conntrack -C */
	CMD_EVENTS,      /* conntrack -E (streams until the client leaves) */
	CMD_STATS,       /* conntrack -S */
	CMD_FLUSH,       /* conntrack -F */
	CMD_DELETE,      /* conntrack -D */
	CMD_SET,         /* sysctl -w net.netfilter.NAME=VALUE */
	CMD_SYSCTL,      /* read the settings (sysctl -a style) */
	CMD_N
};

/* Event types a client asks for (conntrack -e NEW,UPDATE,DESTROY). */
enum {
	CTL_EV_NEW = 1u << 0,
	CTL_EV_UPDATE = 1u << 1,
	CTL_EV_DESTROY = 1u << 2,
	CTL_EV_ALL = 7u,
};

struct ctl_request {
	struct ctl_filter filter;
	enum ctl_cmd cmd;
	enum out_format format;
	unsigned event_mask;   /* CTL_EV_*: events */
	bool id;               /* -o id */
	bool ktimestamp;       /* -o ktimestamp */
	bool stamp;            /* -o timestamp (events: [sec.usec] prefix) */
	bool zero;             /* -z: zero counters while listing */
	bool has_filter;
	char name[96];         /* set: the knob */
	char value[32];        /* set: its value */
};

/* Needs root or the admin group (the commands that change the table). */
bool ctl_cmd_is_admin(enum ctl_cmd c);
const char *ctl_cmd_name(enum ctl_cmd c);

/*
 * ctl_request_parse - parse the @len bytes at @line (no newline needed;
 * need not be NUL-terminated).  Returns 0 and fills @r, or -1 with a
 * sentence for a person in @err and a short code in *@code (one of
 * "EPROTO" not JSON / not an object, "EVERSION" unknown protocol version,
 * "ENOSYS" unknown command, "EINVAL" bad member or value).
 */
int ctl_request_parse(const char *line, size_t len, struct ctl_request *r,
		      char *err, size_t errlen, const char **code);

#endif
