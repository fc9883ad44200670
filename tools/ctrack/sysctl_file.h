/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sysctl_file.h - apply a `sysctl -a`-style file to ct_settings.
 */
#ifndef CTRACK_TOOL_SYSCTL_FILE_H
#define CTRACK_TOOL_SYSCTL_FILE_H

#include "ctrack/settings.h"

/* Returns 0, or -1 with "FILE:LINE: what is wrong" in @msg. */
int sysctl_file_apply(const char *path, struct ct_settings *s, char *msg,
		      unsigned msglen);

#endif
