/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sysctl_file.c - read NAME=VALUE / "name = value" lines, as `sysctl -a`
 * or `sysctl net.netfilter` print them, into ct_settings.
 *
 * A whole `sysctl -a` dump is accepted: names outside net.netfilter are
 * skipped, as are the kernel's read-only conntrack knobs
 * (nf_conntrack_count, ...).  A netfilter name ctrack does not know, or a
 * bad value, is an error that names the file, the line and the problem.
 * Blank lines and lines starting with '#' or ';' are comments.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sysctl_file.h"

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

int sysctl_file_apply(const char *path, struct ct_settings *s, char *msg,
		      unsigned msglen)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	unsigned lineno = 0;
	struct ct_settings work = *s;

	if (!f) {
		snprintf(msg, msglen, "%s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p = trim(line), *eq, *name, *value;
		const char *why;
		int r;

		lineno++;
		if (!*p || *p == '#' || *p == ';')
			continue;
		eq = strchr(p, '=');
		if (!eq) {
			snprintf(msg, msglen, "%s:%u: expected NAME = VALUE, got '%s'",
				 path, lineno, p);
			fclose(f);
			return -1;
		}
		*eq = '\0';
		name = trim(p);
		value = trim(eq + 1);
		/* a full `sysctl -a`: only netfilter's knobs concern us */
		if (strncmp(name, "net.netfilter.", 14) != 0 &&
		    strncmp(name, "net/netfilter/", 14) != 0 && strncmp(name, "nf_", 3) != 0)
			continue;
		r = ct_settings_set(&work, name, value, &why);
		if (r == CT_SETTINGS_READ_ONLY || r == CT_SETTINGS_IGNORED)
			continue;
		if (r < 0) {
			snprintf(msg, msglen, "%s:%u: '%s' %s", path, lineno,
				 r == CT_SETTINGS_BAD_VALUE ? value : name, why);
			fclose(f);
			return -1;
		}
	}
	if (ferror(f)) {
		snprintf(msg, msglen, "%s: read error", path);
		fclose(f);
		return -1;
	}
	fclose(f);
	*s = work;
	return 0;
}
