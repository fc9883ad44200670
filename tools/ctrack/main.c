/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * main.c - the ctrack command: dispatch to subcommands, help, version.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *out)
{
	fputs(
"usage: ctrack COMMAND [OPTIONS] ...\n"
"\n"
"ctrack keeps the connection table Linux's nf_conntrack keeps - same tuples,\n"
"states, timeouts, INVALID and RELATED - in user space.\n"
"\n"
"Commands:\n"
"  read FILE...     replay captures and print the table, events, counters\n"
"                   (see 'ctrack read --help')\n"
"  daemon           track live interfaces, serve a control socket\n"
"                   (see 'ctrack daemon --help')\n"
"\n"
"Asking a running daemon (conntrack's commands and options):\n"
"  list             the table (conntrack -L)\n"
"  get              one connection (conntrack -G)\n"
"  count            the number of entries (conntrack -C)\n"
"  events           NEW / UPDATE / DESTROY as they happen (conntrack -E)\n"
"  stats            the counters, a line per worker (conntrack -S)\n"
"  flush            remove every entry (conntrack -F)\n"
"  delete           remove the entries that match (conntrack -D)\n"
"  set NAME=VALUE   change a setting (sysctl -w net.netfilter.NAME=VALUE)\n"
"  sysctl [NAME]    show the settings\n"
"  help [COMMAND]   this text, or a command's\n"
"  version          print the version\n"
"\n"
"Exit status: 0 success, 1 bad usage, 2 unreadable input, 3 damaged or\n"
"truncated input (results cover what was read), 4 internal error.\n"
"See ctrack(1).\n", out);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CT_EXIT_USAGE;
	}
	static const char *const ctl_cmds[] = { "list", "get", "count", "events", "stats",
		"flush", "delete", "set", "sysctl", NULL };

	if (!strcmp(argv[1], "read"))
		return cmd_read(argc - 1, argv + 1);
	if (!strcmp(argv[1], "daemon"))
		return cmd_daemon(argc - 1, argv + 1);
	for (int i = 0; ctl_cmds[i]; i++)
		if (!strcmp(argv[1], ctl_cmds[i]))
			return cmd_ctl(argc - 1, argv + 1);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		if (argc > 2 && !strcmp(argv[2], "read")) {
			char *av[] = { "read", "--help", NULL };
			return cmd_read(2, av);
		}
		if (argc > 2 && !strcmp(argv[2], "daemon")) {
			char *av[] = { "daemon", "--help", NULL };
			return cmd_daemon(2, av);
		}
		for (int i = 0; argc > 2 && ctl_cmds[i]; i++)
			if (!strcmp(argv[2], ctl_cmds[i])) {
				char *av[] = { argv[2], "--help", NULL };
				return cmd_ctl(2, av);
			}
		usage(stdout);
		return CT_EXIT_OK;
	}
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version") ||
	    !strcmp(argv[1], "-V")) {
		printf("ctrack %s\n", CTRACK_VERSION);
		return CT_EXIT_OK;
	}
	fprintf(stderr, "ctrack: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return CT_EXIT_USAGE;
}
