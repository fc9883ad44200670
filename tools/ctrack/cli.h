/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cli.h - what the ctrack subcommands share: exit codes and entry points.
 */
#ifndef CTRACK_TOOL_CLI_H
#define CTRACK_TOOL_CLI_H

#include "ctrack/ctrack.h"

enum {
	CT_EXIT_OK = 0,
	CT_EXIT_USAGE = 1,     /* bad option or value */
	CT_EXIT_INPUT = 2,     /* an input could not be read at all */
	CT_EXIT_PARTIAL = 3,   /* an input was damaged or cut short */
	CT_EXIT_INTERNAL = 4,  /* out of memory, output error */
};

int cmd_read(int argc, char **argv);
/* tools/ctrack/daemon/: the daemon, and its clients (argv[0] is the
 * command: list, get, count, events, stats, flush, delete, set, sysctl) */
int cmd_daemon(int argc, char **argv);
int cmd_ctl(int argc, char **argv);

#endif
