/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * format_ref.h - the reference printer (format_ref.c): the snprintf
 * implementation of conntrack's formats that tools/ctrack/format.c had
 * before it was written by hand; tests compare the two.
 */
#ifndef CTRACK_TEST_FORMAT_REF_H
#define CTRACK_TEST_FORMAT_REF_H

#include <stdbool.h>
#include <stdio.h>

#include "ctrack/ctrack.h"

enum ref_format { REF_CONNTRACK, REF_EXTENDED, REF_JSON };

struct ref_opts {
	enum ref_format format;
	bool acct;
};

void ref_listing(FILE *out, const struct ref_opts *o, const struct ct_conn_info *ci,
		 long long timeout_s);
void ref_event(FILE *out, const struct ref_opts *o, const struct ct_event *ev,
	       ct_time_ns ts_ns);

#endif
